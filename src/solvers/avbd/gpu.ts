/**
 * avbd-gpu: Augmented Vertex Block Descent (Giles, Diaz & Yuksel 2025) in WGSL compute kernels (f32),
 * the GPU twin of avbd-cpu (cpu.ts: the f64 reference, same stages, same names, same options and
 * defaults; the equations are derived there and cited beside each kernel in kernels.wgsl.ts).
 *
 * One frame = `substeps` steps of h = dt / substeps, each recorded as
 *   warm_start (per joint) → inertial_target (per body)
 *   → iterations × (primal colour 0, primal colour 1, …, primal colour K−1 → dual (per joint))
 *   → update_velocities (per body) [→ primal colour 0 … K−1 at α = 0: post-stabilisation]
 * i.e. 3 + (K + 1)·iterations dispatches a step, one dispatch per body colour per iteration (the
 * issue's shape). Many frames go into one submission; nothing is read back until a snapshot.
 *
 * Host side, once per scene (the joints' topology is fixed: this solver takes no joints added or
 * removed between steps): the rows are laid out by avbd-cpu's JointForces (the same rows, bounds,
 * stiffness and β of the paper's form), the body → joint CSR and the body colouring
 * (model/body-colouring.ts, the colouring avbd-cpu uses: the same colours, so the same order of
 * updates), the island masses of the scale-free schedule (cpu.ts islandMasses: on a joint scene the
 * islands are the joint graph's, fixed). Every number that changes per frame lives on the GPU.
 *
 * Not on the GPU yet (refused by the registry with the reason): contacts (avbd-cpu's contacts.ts:
 * collision and manifolds linearised at the frame's start), joints added or removed between steps.
 */
import type { WorldDesc } from '../../model/world.js';
import { compileWorld, type CompiledWorld } from '../../model/compiled.js';
import { JointSet } from '../../rows/joint-set.js';
import type { GpuContext } from '../../gpu/device.js';
import { type Solver, type SolverOptions, type SolverCost, defaultSolverOptions } from '../solver.js';
import { GpuSolverBase } from '../gpu-base.js';
import { bindBuffers, buildKernels, computePipeline } from '../../gpu/kernels.js';
import { packBodyState, writeMat3Columns, type StagePass } from '../../gpu/frames.js';
import { F32_MAX, JOINT_STRIDE, writeJointRecord } from '../../rows/rows.wgsl.js';
import { AvbdRows, JointForces } from './forces.js';
import { BodyColouring } from '../../model/body-colouring.js';
import { AVBD_KIND_SHIFT, AVBD_PARAMS_BYTES, AVBD_ROWS_SHIFT, avbdKernelSource, avbdKernelSpecs, type AvbdBufferName, type AvbdKernelSpec } from './kernels.wgsl.js';

interface Kernel {
  spec: AvbdKernelSpec;
  pipeline: GPUComputePipeline;
  /** one bind group, or one per pass_info record (primal, dual) */
  bindGroups: GPUBindGroup[];
}

export class AvbdGpuSolver extends GpuSolverBase<AvbdBufferName> implements Solver {
  readonly id = 'avbd-gpu';
  readonly bodyCount: number;
  private readonly w: CompiledWorld;
  readonly joints: JointSet;
  private readonly jointForces: JointForces;
  private readonly rows = new AvbdRows();
  /** the body colouring (model/body-colouring.ts), as avbd-cpu builds it */
  readonly colouring = new BodyColouring();
  private readonly params: GPUBuffer;
  private passInfo!: GPUBuffer;
  private readonly passStride: number;
  private readonly kernels = new Map<string, Kernel>();
  /** body_graph's layout: where the colour-ordered dynamic bodies begin */
  private colourBase = 0;

  private constructor(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext) {
    super({ ...defaultSolverOptions, ...options, sleep: 0 }, gpu);
    this.w = compileWorld(world);
    this.bodyCount = this.w.worldBodyCount;
    this.joints = new JointSet(this.w);
    this.jointForces = new JointForces(this.joints);
    this.passStride = Math.max(32, this.device.limits.minUniformBufferOffsetAlignment);
    const uniform = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
    this.params = this.device.createBuffer({ label: 'params', size: AVBD_PARAMS_BYTES, usage: uniform });
    this.bufferCreations++;
  }

  static async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext): Promise<AvbdGpuSolver> {
    const s = new AvbdGpuSolver(world, options, gpu);
    s.upload();
    await buildKernels(s.device, s.id, () => {
      for (const spec of avbdKernelSpecs()) s.bindKernel(spec, computePipeline(s.device, spec.name, avbdKernelSource(spec)));
    });
    return s;
  }

  get constraintCount(): number {
    return this.joints.constraintCount;
  }

  /** avbd-cpu's stage names on a joint scene */
  get stageNames(): readonly string[] {
    return ['colour bodies', 'warm start', 'inertial target', 'primal', 'dual', 'update velocities', ...(this.options.postStabilize === 1 ? ['post-stabilise'] : [])];
  }

  /** pass_info records: 2c (colour c at the iterations' α), 2c + 1 (colour c at α = 0), 2K (every joint at the iterations' α) */
  private recordCount(): number {
    return 2 * Math.max(1, this.colouring.colourCount) + 1;
  }

  /** Lays out the rows (avbd-cpu's JointForces), the graph, the colouring and the bodies, and creates the buffers. */
  private upload(): void {
    const w = this.w, o = this.options, n = w.bodyCount, j = this.joints, nj = j.constraintCount;
    const rowCount = this.jointForces.layout(this.rows, 0, o.compliance, o, w);
    const rows = this.rows, jf = this.jointForces;
    rows.count = rowCount;
    // the body → joint CSR over dynamic bodies (entry = joint << 1 | side), as cpu.ts buildGraph
    const inv = w.inverseMass;
    const first = new Int32Array(n + 1);
    for (let k = 0; k < nj; k++) {
      if (inv[j.ib0[k]] > 0) first[j.ib0[k] + 1]++;
      if (inv[j.ib1[k]] > 0) first[j.ib1[k] + 1]++;
    }
    for (let b = 0; b < n; b++) first[b + 1] += first[b];
    const entries = first[n];
    const fill = first.slice(0, n);
    const items = new Int32Array(entries), side = new Int32Array(entries);
    for (let k = 0; k < nj; k++)
      for (let s = 0; s < 2; s++) {
        const b = s === 0 ? j.ib0[k] : j.ib1[k];
        if (inv[b] > 0) {
          const e = fill[b]++;
          items[e] = k;
          side[e] = s;
        }
      }
    this.colouring.build(n, inv, first, items, j.ib0, j.ib1);
    const col = this.colouring;
    const dynamic = col.start[col.colourCount];
    const graph = new Uint32Array(n + 1 + entries + dynamic);
    const base = n + 1;
    for (let b = 0; b <= n; b++) graph[b] = base + first[b];
    for (let e = 0; e < entries; e++) graph[base + e] = (items[e] << 1) | side[e];
    this.colourBase = base + entries;
    graph.set(col.order.subarray(0, dynamic), this.colourBase);

    // the bodies: I, I⁻¹, m, m⁻¹, the island load M_isl/m and ρ (cpu.ts islandMasses, bodyStiffness)
    const parent = Int32Array.from({ length: n }, (_, i) => i);
    const find = (i: number): number => {
      while (parent[i] !== i) i = parent[i] = parent[parent[i]];
      return i;
    };
    for (let k = 0; k < nj; k++) {
      const a = j.ib0[k], b = j.ib1[k];
      if (inv[a] === 0 || inv[b] === 0) continue;
      const ra = find(a), rb = find(b);
      if (ra !== rb) parent[ra] = rb;
    }
    const islandMass = new Float64Array(n);
    for (let i = 0; i < n; i++) if (inv[i] > 0) islandMass[find(i)] = Math.max(islandMass[find(i)], w.mass[i]);
    const body = new Float32Array(28 * n);
    for (let i = 0; i < n; i++) {
      if (inv[i] === 0) continue;
      writeMat3Columns(w.inertiaLocal, 9 * i, body, 28 * i);
      writeMat3Columns(w.inverseInertiaLocal, 9 * i, body, 28 * i + 12);
      const I = w.inertiaLocal;
      body[28 * i + 24] = w.mass[i];
      body[28 * i + 25] = inv[i];
      body[28 * i + 26] = islandMass[find(i)] * inv[i];
      body[28 * i + 27] = Math.sqrt(((I[9 * i] + I[9 * i + 4] + I[9 * i + 8]) * inv[i]) / 2);
    }

    // the joint records (rows.wgsl.ts), their kind and row count in the flags
    const record = new Float32Array(4 * JOINT_STRIDE * Math.max(1, nj));
    for (let k = 0; k < nj; k++) writeJointRecord(j, jf.itemFirst[k], k, record, 4 * JOINT_STRIDE * k, (j.kind[k] << AVBD_KIND_SHIFT) | (jf.itemRows[k] << AVBD_ROWS_SHIFT));
    // the rows: (λ 0, k 0, C0, k_max), (fmin, fmax, stiffness, β), (curvature A, B, β, 0)
    const f32 = (x: number) => (x === Infinity ? F32_MAX : x === -Infinity ? -F32_MAX : x);
    const rowData = new Float32Array(12 * Math.max(1, rowCount));
    for (let k = 0; k < nj; k++) {
      // §3.5's curvature per unit force (forces.ts JointForces): |a| = |R r_A| = |r_A| on a linear row, 1 on an angular one
      const ra = Math.hypot(j.r0[3 * k], j.r0[3 * k + 1], j.r0[3 * k + 2]), rb = Math.hypot(j.r1[3 * k], j.r1[3 * k + 1], j.r1[3 * k + 2]);
      for (let r = jf.itemFirst[k]; r < jf.itemFirst[k] + jf.itemRows[k]; r++) {
        const angular = jf.rowSet.angular[r] === 1;
        rowData.set([f32(rows.fmin[r]), f32(rows.fmax[r]), f32(rows.stiffness[r]), rows.beta[r]], 12 * r + 4);
        rowData.set([angular ? 1 : ra, angular ? 1 : rb, rows.beta[r], 0], 12 * r + 8);
      }
    }
    const { pose, velocity } = packBodyState(w);
    const frameState = new Float32Array(20 * n);
    for (let i = 0; i < n; i++) frameState.set(velocity.subarray(8 * i, 8 * i + 4), 20 * i + 16); // the last frame's v: v itself (ŵ = 0)
    const sizes: Record<AvbdBufferName, number> = {
      pose: 32 * n,
      velocity: 32 * n,
      body: 112 * n,
      frame_state: 80 * n,
      body_graph: 4 * Math.max(1, graph.length),
      joint: record.byteLength,
      row_jacobian: 48 * Math.max(1, rowCount),
      row_error: 8 * Math.max(1, rowCount),
      row_avbd: rowData.byteLength,
    };
    this.checkLimits(sizes);
    this.createBuffers(sizes, {
      pose: pose.buffer,
      velocity: velocity.buffer,
      body: body.buffer,
      frame_state: frameState.buffer,
      body_graph: graph.buffer,
      joint: record.buffer,
      row_avbd: rowData.buffer,
    });
    this.passInfo = this.device.createBuffer({ label: 'pass_info', size: this.passStride * this.recordCount(), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.bufferCreations++;
    this.writeParams();
    this.writePassInfo();
  }

  /** Params uniform (kernels.wgsl.ts struct Params). */
  private writeParams(): void {
    const o = this.options;
    const h = o.dt / o.substeps;
    const relative = o.avbdRelative === 1;
    const buf = new ArrayBuffer(AVBD_PARAMS_BYTES);
    const f = new Float32Array(buf), u = new Uint32Array(buf);
    f.set(this.w.gravity, 0);
    f[3] = h;
    f[4] = 1 / (h * h);
    f[5] = o.postStabilize === 1 ? 1 : o.avbdAlpha * o.avbdGamma; // post-stabilisation keeps λ whole (cpu.ts)
    f[6] = o.avbdGamma;
    u[7] = relative ? 1 : 0;
    f[8] = relative ? o.penaltyMinRelative : o.penaltyMin;
    f[9] = relative ? o.penaltyMaxRelative : o.penaltyMax;
    f[10] = o.betaRelative;
    u[11] = this.w.bodyCount;
    u[12] = this.joints.constraintCount;
    u[13] = this.rowWidth();
    this.device.queue.writeBuffer(this.params, 0, buf);
  }

  private recordThreads: number[] = [];

  private writePassInfo(): void {
    const col = this.colouring, K = col.colourCount;
    const alphaIter = this.options.postStabilize === 1 ? 1 : this.options.avbdAlpha;
    const buf = new ArrayBuffer(this.passStride * this.recordCount());
    const u = new Uint32Array(buf), f = new Float32Array(buf);
    this.recordThreads = new Array<number>(this.recordCount()).fill(0);
    const put = (rec: number, start: number, count: number, alpha: number) => {
      const o = (rec * this.passStride) / 4;
      u[o] = start;
      u[o + 1] = count;
      f[o + 2] = alpha;
      this.recordThreads[rec] = count;
    };
    for (let c = 0; c < K; c++) {
      put(2 * c, this.colourBase + col.start[c], col.start[c + 1] - col.start[c], alphaIter);
      put(2 * c + 1, this.colourBase + col.start[c], col.start[c + 1] - col.start[c], 0);
    }
    put(this.recordCount() - 1, 0, this.joints.constraintCount, alphaIter);
    this.device.queue.writeBuffer(this.passInfo, 0, buf);
  }

  private bindKernel(spec: AvbdKernelSpec, pipeline: GPUComputePipeline): void {
    const storage = spec.bindings.map((b) => this.buffers.get(b.name)!);
    const usesPass = spec.over === 'colour' || spec.name === 'dual';
    const bindGroups = usesPass
      ? Array.from({ length: this.recordCount() }, (_, r) => bindBuffers(this.device, pipeline, spec.name, [this.params, { buffer: this.passInfo, offset: r * this.passStride, size: 16 }, ...storage]))
      : [bindBuffers(this.device, pipeline, spec.name, [this.params, ...storage])];
    this.kernels.set(spec.name, { spec, pipeline, bindGroups });
  }

  /** One dispatch of kernel `name` over its threads (pass_info record `record` for primal and dual). */
  private dispatch(pass: GPUComputePassEncoder, name: string, record = 0): void {
    const k = this.kernels.get(name)!;
    const threads = k.spec.over === 'body' ? this.w.bodyCount : k.spec.over === 'joint' ? this.joints.constraintCount : this.recordThreads[record];
    const [x, y] = this.groupsFor(threads);
    if (x === 0) return;
    pass.setPipeline(k.pipeline);
    pass.setBindGroup(0, k.bindGroups[k.bindGroups.length === 1 ? 0 : record]);
    pass.dispatchWorkgroups(x, y);
  }

  /** One primal pass, colour by colour (α of the iterations, or 0: post-stabilisation). */
  private primal(pass: GPUComputePassEncoder, post: boolean): void {
    for (let c = 0; c < this.colouring.colourCount; c++) this.dispatch(pass, 'primal', 2 * c + (post ? 1 : 0));
  }

  protected encodeFrame(at: StagePass): void {
    const o = this.options;
    for (let s = 0; s < o.substeps; s++) {
      at('colour bodies'); // the joints' graph is fixed: coloured once on the host (header)
      this.dispatch(at('warm start'), 'warm_start');
      this.dispatch(at('inertial target'), 'inertial_target');
      for (let it = 0; it < o.iterations; it++) {
        this.primal(at('primal'), false);
        this.dispatch(at('dual'), 'dual', this.recordCount() - 1);
      }
      this.dispatch(at('update velocities'), 'update_velocities');
      if (o.postStabilize === 1) this.primal(at('post-stabilise'), true);
    }
  }

  cost(): SolverCost {
    const o = this.options;
    return {
      rowSolvesPerFrame: this.rows.count * o.iterations * o.substeps,
      dispatchesPerFrame: (3 + (this.colouring.colourCount + 1) * o.iterations + (o.postStabilize === 1 ? this.colouring.colourCount : 0)) * o.substeps,
    };
  }

  override destroy(): void {
    super.destroy();
    this.params.destroy();
    this.passInfo.destroy();
  }
}
