/**
 * avbd-gpu: Augmented Vertex Block Descent (Giles, Diaz & Yuksel 2025) in WGSL compute kernels (f32),
 * the GPU twin of avbd-cpu (cpu.ts: the f64 reference, same stages, same names, same options and
 * defaults; the equations are derived there and cited beside each kernel in kernels.wgsl.ts).
 *
 * One frame = `substeps` steps of h = dt / substeps, each recorded as
 *   warm_start (per joint) → inertial_target (per body)
 *   → iterations × (primal colour 0, primal colour 1, …, primal colour K−1 → dual (per joint))
 *   → update_velocities (per body) [→ primal colour 0 … K−1 at α = 0: post-stabilisation]
 * i.e. 3 + (S + 1)·iterations dispatches a step, one dispatch per body colour slot per iteration (the
 * issue's shape). Many frames go into one submission; nothing is read back until a snapshot.
 *
 * Host side, once per scene (the joints' topology is fixed: this solver takes no joints added or
 * removed between steps): the rows are laid out by avbd-cpu's JointForces (the same rows, bounds,
 * stiffness and β of the paper's form), the body → joint CSR and the body adjacency, the island masses
 * of the scale-free schedule (cpu.ts islandMasses: on a joint scene the islands are the joint graph's,
 * fixed; on a contact scene the GPU finds them each step). Every number that changes per frame lives on
 * the GPU.
 *
 * The bodies are coloured on the GPU (gpu/body-colouring.ts: speculative greedy rounds over a compacted
 * list, conflicts settled by hashed Jones–Plassmann priorities; zero clashes, no serial pass, fixed bodies
 * in no conflict) in the 'colour bodies' stage whenever the graph changed: on a joint scene once, before
 * the first frame (the joints' graph is fixed); on a contact scene every step. The colouring writes each
 * colour's bodies and workgroup count, so primal is one indirect dispatch per colour slot — Δ + 1 of them
 * on a joint scene (Δ the most neighbours a body has: the most colours a greedy choice can give), all 32
 * on a contact scene (its graph is not known on the host) — an empty colour costing an empty dispatch.
 * Its CPU twin gives avbd-cpu the same colours (AvbdCpuSolver's colouring 'parallel'): the twin test runs
 * both in the same order of updates.
 *
 * Contacts (a world with collisions; contacts.wgsl.ts has the records and the kernels): each step
 *   collide            the GPU contact pipeline (contacts/gpu-contacts.ts: body boxes, broad and narrow
 *                      phase, margins for the step h as avbd-cpu's detectContacts(h))
 *   prepare contacts   (av_inertia where some body has e > 0: the world I⁻¹ the pipeline's restitution reads)
 *                      its records and matching (λ carried whole), then av_match (k and the stick anchors
 *                      of the matched old point) and av_prepare (avbd-cpu's ContactForces.prepare)
 *   restitution        where some body has e > 0: the pipeline's cs_restitution (collision propagation colour
 *                      by colour over its manifold colouring, in one workgroup) on V before the inertial
 *                      target, V holding no force of the step yet (avbd-cpu's stage: cpu.ts header)
 *   colour bodies      av_adjacency (this step's body → manifold CSR and the body adjacency), the colouring
 *   warm start         the islands (av_island_*: union–find, M_isl / m per body), the joints' warm_start,
 *                      av_contact_warm
 *   … primal (joints and contact points gathered per body), dual (joints, then av_contact_dual) …
 *   store impulses     av_store (λ onto the pipeline's points, k, the stick flag), av_keep, the pipeline's cj_keep
 * A snapshot reads the pair count and the colouring's summary: a step that lost pairs (beyond the slots)
 * or left a body uncoloured throws, as the GPU contact solvers do for lost pairs.
 *
 * Not on the GPU: sleeping (every body awake), joints added or removed between steps.
 */
import type { WorldDesc } from '../../model/world.js';
import { compileWorld, type CompiledWorld } from '../../model/compiled.js';
import { JointSet } from '../../rows/joint-set.js';
import type { GpuContext } from '../../gpu/device.js';
import { type Solver, type SolverOptions, type SolverCost, defaultSolverOptions } from '../solver.js';
import { GpuSolverBase } from '../gpu-base.js';
import { buildKernels } from '../../gpu/kernels.js';
import { Kernel } from '../../gpu/dispatch.js';
import { packBodyState, writeMat3Columns, type StagePass } from '../../gpu/frames.js';
import { F32_MAX, JOINT_STRIDE, writeJointRecord } from '../../rows/rows.wgsl.js';
import { AvbdRows, JointForces } from './forces.js';
import { BODY_COLOUR_LIMIT } from '../../model/body-colouring.js';
import { GpuBodyColouring, BODY_SUMMARY_WORDS, type BodyGraphLayout } from '../../gpu/body-colouring.js';
import { InputError } from '../../model/input-error.js';
import { AVBD_KIND_SHIFT, AVBD_PARAMS_BYTES, AVBD_ROWS_SHIFT, avbdContactKernelSource, avbdKernelSource, avbdKernelSpecs, type AvbdBufferName, type AvbdKernelSpec } from './kernels.wgsl.js';
import { AVBD_CONTACT_KERNELS, CONTACT_KEEP, CONTACT_RECORD, type ContactKernelDecl } from './contacts.wgsl.js';
import { GpuContacts, contactPairCapacity } from '../../contacts/gpu-contacts.js';
import { DEFAULT_RESTITUTION } from '../../collision/pipeline.js';
import { COUNTER_PAIRS } from '../../collision/gpu-broadphase.js';
import { sceneHasContacts, type SolverContactStats } from '../solver.js';
import { SolverFailure } from '../../model/failure.js';

/** A body, joint or colour kernel (gpu/dispatch.ts Kernel) with its bind groups. */
interface AvbdKernel {
  spec: AvbdKernelSpec;
  kernel: Kernel;
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
  /** the body colouring on the GPU (gpu/body-colouring.ts; avbd-cpu's twin with colouring 'parallel') */
  private colouring!: GpuBodyColouring;
  private graphLayout!: BodyGraphLayout;
  /** colour dispatches per primal pass: the most colours the colouring can give, Δ + 1 (Δ the most distinct neighbours a body has) */
  private colourSlots = 1;
  /** the graph changed since it was last coloured (a joint scene: only before the first frame) */
  private colourPending = true;
  private readonly params: GPUBuffer;
  private passInfo!: GPUBuffer;
  private readonly passStride: number;
  private readonly kernels = new Map<string, AvbdKernel>();
  /** the GPU contact pipeline (contacts/gpu-contacts.ts: collision, matching, the body → manifold CSR), or null: no contacts */
  private contacts: GpuContacts | null = null;
  /** pair slots of the contact pipeline (contactPairCapacity), 0 without contacts */
  private pairCapacity = 0;
  /** the contact kernels (contacts.wgsl.ts) with their bind group */
  private readonly contactKernels = new Map<string, { kernel: Kernel; group: GPUBindGroup }>();
  /** buffers of the contact stages that are not the solver's named ones (the pipeline's, contact_keep, …) */
  private readonly contactOwn: GPUBuffer[] = [];
  /** some body has e > 0 on a contact scene: the restitution stage runs (av_inertia, the pipeline's cs_restitution) */
  private elastic = false;
  /** body_graph words of this frame's contact CSR, the colouring's adjacency and the islands (0 without contacts) */
  private contactWords = { contactFirst: 0, adjacency: 0, adjacencyLists: 0, jointAdjacency: 0, island: 0 };

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
    const contacts = sceneHasContacts(world);
    if (contacts) {
      s.pairCapacity = contactPairCapacity(world.bodies, s.w, s.options.dt / s.options.substeps);
      s.elastic = world.bodies.some((b) => (b.restitution ?? DEFAULT_RESTITUTION) > 0);
    }
    s.upload();
    s.colouring = await GpuBodyColouring.create(s.device, s.buffers.get('body_graph')!, s.graphLayout);
    await buildKernels(s.device, s.id, () => {
      for (const spec of avbdKernelSpecs(contacts)) s.bindKernel(spec, Kernel.create(s.device, spec.name, avbdKernelSource(spec)));
    });
    if (contacts) await s.createContacts(world);
    return s;
  }

  get constraintCount(): number {
    return this.joints.constraintCount;
  }

  /** avbd-cpu's stage names */
  get stageNames(): readonly string[] {
    const c = this.pairCapacity > 0;
    return [...(c ? ['collide', 'prepare contacts'] : []), ...(c && this.elastic ? ['restitution'] : []), 'colour bodies', 'warm start', 'inertial target', 'primal', 'dual', 'update velocities', ...(this.options.postStabilize === 1 ? ['post-stabilise'] : []), ...(c ? ['store impulses'] : [])];
  }

  /** pass_info records: 2c (colour c at the iterations' α), 2c + 1 (colour c at α = 0), 2S (every joint at the iterations' α); S colour slots */
  private recordCount(): number {
    return 2 * this.colourSlots + 1;
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
    // the body adjacency the colouring reads (distinct dynamic neighbours), its active flags, and room for
    // what it writes: colour info (5 K words), the colour-grouped order, the summary (gpu/body-colouring.ts)
    const adjacency: number[][] = Array.from({ length: n }, () => []);
    for (let e = 0; e < entries; e++) {
      const k = items[e], other = side[e] === 0 ? j.ib1[k] : j.ib0[k];
      const b = side[e] === 0 ? j.ib0[k] : j.ib1[k];
      // (a body past the limit is refused below: its list need not grow beyond it)
      if (inv[other] > 0 && other !== b && adjacency[b].length <= BODY_COLOUR_LIMIT && !adjacency[b].includes(other)) adjacency[b].push(other);
    }
    let maxDegree = 0, neighbourCount = 0;
    for (let b = 0; b < n; b++) {
      maxDegree = Math.max(maxDegree, adjacency[b].length);
      neighbourCount += adjacency[b].length;
    }
    if (maxDegree >= BODY_COLOUR_LIMIT)
      throw new InputError(`avbd-gpu: a body is jointed to ${maxDegree > BODY_COLOUR_LIMIT ? 'more than ' + BODY_COLOUR_LIMIT : maxDegree} other bodies; its body colouring has ${BODY_COLOUR_LIMIT} colours, so at most ${BODY_COLOUR_LIMIT - 1} neighbours (use avbd-cpu)`);
    // on a contact scene the graph changes every frame: every colour slot of the colouring may be used
    const cap = this.pairCapacity;
    this.colourSlots = cap > 0 ? BODY_COLOUR_LIMIT : maxDegree + 1;
    const base = n + 1;
    const adjacencyAt = base + entries, lists = adjacencyAt + n + 1, activeAt = lists + neighbourCount;
    const colourInfo = activeAt + n, orderAt = colourInfo + 5 * BODY_COLOUR_LIMIT, summary = orderAt + n;
    // contacts (contacts.wgsl.ts av_adjacency, av_island_*): this frame's body → manifold CSR [n + 1] and its
    // entries [2 cap], the colouring's adjacency [n + 1] and lists (the joints' neighbours, then 2 cap), the
    // union–find's parents and masses [2 n]
    const contactFirst = summary + BODY_SUMMARY_WORDS, frameAdjacency = contactFirst + n + 1 + 2 * cap;
    const frameLists = frameAdjacency + n + 1, island = frameLists + neighbourCount + 2 * cap;
    const words = cap > 0 ? island + 2 * n : summary + BODY_SUMMARY_WORDS;
    if (cap > 0) this.contactWords = { contactFirst, adjacency: frameAdjacency, adjacencyLists: frameLists, jointAdjacency: adjacencyAt, island };
    this.graphLayout = { bodyCount: n, adjacency: cap > 0 ? frameAdjacency : adjacencyAt, active: activeAt, colourInfo, order: orderAt, summary };
    const graph = new Uint32Array(words);
    for (let b = 0; b <= n; b++) graph[b] = base + first[b];
    for (let e = 0; e < entries; e++) graph[base + e] = (items[e] << 1) | side[e];
    for (let b = 0, at = lists; b < n; b++) {
      graph[adjacencyAt + b] = at;
      for (const other of adjacency[b]) graph[at++] = other;
      graph[activeAt + b] = inv[b] > 0 ? 1 : 0;
    }
    graph[adjacencyAt + n] = activeAt;

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
    // the joints' rows, then (contacts) one record of CONTACT_RECORD vec4f per pair slot (contacts.wgsl.ts)
    const rowData = new Float32Array(12 * Math.max(1, rowCount) + 4 * CONTACT_RECORD * this.pairCapacity);
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
    const { body_graph: graphBytes, ...others } = sizes;
    this.createBuffers(others as Record<AvbdBufferName, number>, {
      pose: pose.buffer,
      velocity: velocity.buffer,
      body: body.buffer,
      frame_state: frameState.buffer,
      joint: record.buffer,
      row_avbd: rowData.buffer,
    });
    // body_graph is also the colour dispatches' indirect arguments (written by the colouring)
    const graphBuffer = this.device.createBuffer({ label: 'body_graph', size: graphBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    this.bufferCreations++;
    this.device.queue.writeBuffer(graphBuffer, 0, graph);
    this.buffers.set('body_graph', graphBuffer);
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
    u[14] = this.graphLayout.colourInfo;
    u[15] = this.graphLayout.order;
    const cw = this.contactWords;
    u[16] = this.pairCapacity;
    u[17] = COUNTER_PAIRS;
    u[18] = 3 * Math.max(1, this.rows.count);
    u[19] = cw.contactFirst;
    u[20] = cw.adjacency;
    u[21] = cw.adjacencyLists;
    u[22] = cw.jointAdjacency;
    u[23] = cw.island;
    f[24] = o.betaLinear;
    this.device.queue.writeBuffer(this.params, 0, buf);
  }

  /** pass_info (colour, 0, α): the colour slot a primal dispatch sweeps (its bodies and count are the colouring's, on the GPU), or every joint for dual */
  private writePassInfo(): void {
    const S = this.colourSlots;
    const alphaIter = this.options.postStabilize === 1 ? 1 : this.options.avbdAlpha;
    const buf = new ArrayBuffer(this.passStride * this.recordCount());
    const u = new Uint32Array(buf), f = new Float32Array(buf);
    const put = (rec: number, start: number, count: number, alpha: number) => {
      const o = (rec * this.passStride) / 4;
      u[o] = start;
      u[o + 1] = count;
      f[o + 2] = alpha;
    };
    for (let c = 0; c < S; c++) {
      put(2 * c, c, 0, alphaIter);
      put(2 * c + 1, c, 0, 0);
    }
    put(this.recordCount() - 1, 0, this.joints.constraintCount, alphaIter);
    this.device.queue.writeBuffer(this.passInfo, 0, buf);
  }

  private bindKernel(spec: AvbdKernelSpec, kernel: Kernel): void {
    const storage = spec.bindings.map((b) => this.buffers.get(b.name)!);
    const usesPass = spec.over === 'colour' || spec.name === 'dual';
    const bindGroups = usesPass
      ? Array.from({ length: this.recordCount() }, (_, r) => kernel.bind([this.params, { buffer: this.passInfo, offset: r * this.passStride, size: 16 }, ...storage]))
      : [kernel.bind([this.params, ...storage])];
    this.kernels.set(spec.name, { spec, kernel, bindGroups });
  }

  /** One dispatch of kernel `name` over every body or joint (pass_info record `record` for dual). */
  private dispatch(pass: GPUComputePassEncoder, name: string, record = 0): void {
    const k = this.kernels.get(name)!;
    k.kernel.dispatch(pass, k.bindGroups[k.bindGroups.length === 1 ? 0 : record], k.spec.over === 'body' ? this.w.bodyCount : this.joints.constraintCount);
  }

  /**
   * One primal pass, colour by colour (α of the iterations, or 0: post-stabilisation): one indirect
   * dispatch per colour slot, its workgroups written by the colouring (0 for a colour left empty).
   */
  private primal(pass: GPUComputePassEncoder, post: boolean): void {
    const k = this.kernels.get('primal')!, K = BODY_COLOUR_LIMIT;
    for (let c = 0; c < this.colourSlots; c++)
      k.kernel.dispatchIndirect(pass, k.bindGroups[2 * c + (post ? 1 : 0)], this.buffers.get('body_graph')!, 4 * (this.graphLayout.colourInfo + 2 * K + 3 * c));
  }

  /**
   * The contact stages (contacts.wgsl.ts) over the GPU contact pipeline (contacts/gpu-contacts.ts, in its
   * 'prepare' mode: its collision, pair-table matching with λ carried whole, the body → manifold CSR, prepared
   * as its 'jacobi' mode prepares; none of its sweeps' kernels built; where some body bounces, its manifold
   * colouring and restitution pass too). Its margins are for the step h, as avbd-cpu finds its contacts each
   * step (detectContacts(h)); its rule's slop is set out of reach so a manifold keeps the pair's own slop, the
   * matching's reach (cj_match, av_match).
   */
  private async createContacts(world: WorldDesc): Promise<void> {
    const w = this.w, n = w.bodyCount, d = this.device, cap = this.pairCapacity;
    const h = this.options.dt / this.options.substeps;
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    // the pipeline's InverseMass records (I⁻¹ world, m⁻¹; 64 bytes): m⁻¹ here; I⁻¹ written by av_inertia each step
    // where some body bounces (cs_restitution reads it), else never read by the stages run here
    const inverse = new Float32Array(16 * n);
    for (let i = 0; i < n; i++) inverse[16 * i + 12] = w.inverseMass[i];
    const inverseMass = d.createBuffer({ label: 'avbd contacts inverse mass', size: inverse.byteLength, usage: storage });
    d.queue.writeBuffer(inverseMass, 0, inverse);
    const velocityDelta = d.createBuffer({ label: 'avbd contacts velocity delta (unused)', size: 32 * n, usage: storage });
    const keep = d.createBuffer({ label: 'contact_keep', size: 16 * CONTACT_KEEP * 4 * cap, usage: storage });
    const prevKeep = d.createBuffer({ label: 'prev_contact_keep', size: 16 * CONTACT_KEEP * 4 * cap, usage: storage });
    this.contactOwn.push(inverseMass, velocityDelta, keep, prevKeep);
    this.bufferCreations += 4;
    const fixed = Array.from({ length: world.bodies.length }, (_, i) => w.inverseMass[i] === 0);
    const [c, kernels] = await Promise.all([
      GpuContacts.create(d, n, world.bodies, fixed, cap, { pose: this.buffers.get('pose')!, velocity: this.buffers.get('velocity')!, velocity_delta: velocityDelta, inverse_mass: inverseMass }, 'prepare'),
      buildKernels(d, `${this.id} contacts`, () => new Map(this.contactKernelDecls().map((k) => [k.name, Kernel.create(d, k.name, avbdContactKernelSource(k))]))),
    ]);
    // the rule's threshold is read by cs_restitution alone (the other stages run here read no rule but the slop)
    c.configure(h, h, w.gravity, { softness: { kind: 'rigid', beta: 0 }, slop: F32_MAX, maxPushout: 0, restitutionThreshold: this.options.restitutionThreshold }, 1);
    c.setJoints(this.joints.ib0, this.joints.ib1, this.joints.constraintCount);
    this.contacts = c;
    const named = new Map<string, GPUBuffer>([
      ...[...this.buffers].map(([k, v]) => [k, v] as [string, GPUBuffer]),
      ['body_graph_atomic', this.buffers.get('body_graph')!],
      ['contact_keep', keep],
      ['prev_contact_keep', prevKeep],
      ['inverse_mass', inverseMass],
      ...(['counters', 'found', 'prev_manifolds', 'prev_points', 'manifolds', 'points', 'contact_body', 'materials', 'body_count', 'entries'] as const).map((k) => [k, c.buffer(k)] as [string, GPUBuffer]),
    ]);
    const dual = this.recordCount() - 1;
    for (const decl of this.contactKernelDecls()) {
      const kernel = kernels.get(decl.name)!;
      const storageBuffers = decl.bindings.map((b) => {
        const buf = named.get(b.name);
        if (!buf) throw new Error(`avbd-gpu: no buffer ${b.name} for ${decl.name}`);
        return buf;
      });
      const uniforms = decl.pass ? [this.params, { buffer: this.passInfo, offset: dual * this.passStride, size: 16 }] : [this.params];
      this.contactKernels.set(decl.name, { kernel, group: kernel.bind([...uniforms, ...storageBuffers]) });
    }
  }

  /** The contact kernels this scene runs: av_inertia only where some body bounces (a WGSL compile saved elsewhere). */
  private contactKernelDecls(): ContactKernelDecl[] {
    return AVBD_CONTACT_KERNELS.filter((k) => k.name !== 'av_inertia' || this.elastic);
  }

  /** A contact kernel over the pair slots (indirect: the broad phase's pair count), the bodies or the joints. */
  private contactDispatch(pass: GPUComputePassEncoder, name: string): void {
    const k = this.contactKernels.get(name)!;
    const decl = AVBD_CONTACT_KERNELS.find((d) => d.name === name) as ContactKernelDecl;
    if (decl.over === 'pair') {
      const args = this.contacts!.collision.broad.pairArgs;
      k.kernel.dispatchIndirect(pass, k.group, args.buffer, args.offset);
    } else k.kernel.dispatch(pass, k.group, decl.over === 'body' ? this.w.bodyCount : this.joints.constraintCount);
  }

  /** One step with contacts: avbd-cpu's step1 stage for stage (its header), the contact kernels beside the joints'. */
  private encodeContactStep(at: StagePass): void {
    const o = this.options, c = this.contacts!;
    c.recordCollide(at('collide'));
    const prep = at('prepare contacts');
    if (this.elastic) this.contactDispatch(prep, 'av_inertia'); // I⁻¹ of the frame's start, before cj_frame_bodies
    c.recordPrepare(prep);
    this.contactDispatch(prep, 'av_match');
    this.contactDispatch(prep, 'av_prepare');
    // restitution (cpu.ts header): collision propagation on V⁻, no force of the step in it yet (slot 1: g_n = 0)
    if (this.elastic) c.recordRestitution(at('restitution'), false);
    const colour = at('colour bodies');
    this.contactDispatch(colour, 'av_adjacency');
    this.colouring.record(colour);
    const warm = at('warm start');
    if (o.avbdRelative === 1) {
      // this frame's islands (joints and contacts) and each body's load M_isl / m (cpu.ts islandMasses)
      this.contactDispatch(warm, 'av_island_init');
      this.contactDispatch(warm, 'av_island_joints');
      this.contactDispatch(warm, 'av_island_contacts');
      this.contactDispatch(warm, 'av_island_mass');
      this.contactDispatch(warm, 'av_island_load');
    }
    this.dispatch(warm, 'warm_start');
    this.contactDispatch(warm, 'av_contact_warm');
    this.dispatch(at('inertial target'), 'inertial_target');
    for (let it = 0; it < o.iterations; it++) {
      this.primal(at('primal'), false);
      const dual = at('dual');
      this.dispatch(dual, 'dual', this.recordCount() - 1);
      this.contactDispatch(dual, 'av_contact_dual');
    }
    this.dispatch(at('update velocities'), 'update_velocities');
    if (o.postStabilize === 1) this.primal(at('post-stabilise'), true);
    const store = at('store impulses');
    this.contactDispatch(store, 'av_store');
    this.contactDispatch(store, 'av_keep');
    c.recordStore(store);
  }

  /** Read with the pose and velocities (one readback): with contacts, a frame that lost pairs (the slots) or left a body uncoloured is an error. */
  protected override snapshotExtras(): { buffers: GPUBuffer[]; take(data: ArrayBuffer[]): void } | null {
    const c = this.contacts;
    if (!c) return null;
    const buffers = c.overflowBuffers();
    return {
      buffers: [...buffers, this.colouring.summaryBuffer],
      take: (data) => {
        const lost = c.overflowFrom(data.slice(0, buffers.length));
        if (lost > 0) throw new SolverFailure(`${this.id}: the broad phase found ${lost} pairs more than its ${this.pairCapacity} slots (sized from the start pose: contactPairCapacity): contacts were lost`);
        this.takeColourSummary(new Uint32Array(data[buffers.length]));
      },
    };
  }

  /** The body colouring's summary read with a snapshot: a body left uncoloured is an error; else its colours and rounds. */
  private takeColourSummary(summary: Uint32Array): void {
    if (summary[1] > 0) throw new SolverFailure(`${this.id}: ${summary[1]} bodies found no body colour (a body touching bodies of all ${BODY_COLOUR_LIMIT} colours, or more than ${this.colouring.rounds} colouring rounds): their steps were skipped`);
    this.lastColours = { colours: summary[0], rounds: summary[2] };
    this.bodyColourSizes = Array.from(summary.subarray(BODY_SUMMARY_WORDS, BODY_SUMMARY_WORDS + summary[0]));
  }

  /** the body colouring's colours and rounds at the last snapshot (contact scenes) */
  lastColours: { colours: number; rounds: number } | null = null;

  /** the bodies of each colour at the last snapshot (contact scenes) */
  private bodyColourSizes: number[] = [];

  /** The contacts' figures read with the last snapshot (pairs, manifolds, points; the body colours), or null. */
  contactStats(): SolverContactStats | null {
    const s = this.contacts?.stats;
    if (!s) return null;
    return { ...s, ...(this.lastColours ? { bodyColours: { used: this.lastColours.colours, sizes: this.bodyColourSizes, rounds: this.lastColours.rounds } } : {}) };
  }

  protected encodeFrame(at: StagePass): void {
    const o = this.options;
    if (this.contacts) {
      for (let s = 0; s < o.substeps; s++) this.encodeContactStep(at);
      return;
    }
    for (let s = 0; s < o.substeps; s++) {
      // the body colouring on the GPU, whenever the graph changed: a joint scene's is fixed, so before the first frame only
      const pass = at('colour bodies');
      if (this.colourPending) {
        this.colouring.record(pass);
        this.colourPending = false;
      }
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
    // contacts: 3 rows a point (normal, two friction) per iteration and step, the points the GPU's count at the
    // last snapshot (its readback); the dispatches are not given there (the pipeline's and the colouring's
    // sizes come out of the GPU: indirect), rather than given short, as jacobi-gpu does
    if (this.contacts) return { rowSolvesPerFrame: (this.rows.count + 3 * this.contacts.points) * o.iterations * o.substeps };
    return {
      rowSolvesPerFrame: this.rows.count * o.iterations * o.substeps,
      dispatchesPerFrame: (3 + (this.colourSlots + 1) * o.iterations + (o.postStabilize === 1 ? this.colourSlots : 0)) * o.substeps,
    };
  }

  override destroy(): void {
    this.contacts?.destroy();
    for (const b of this.contactOwn) b.destroy();
    this.colouring?.destroy();
    super.destroy();
    this.params.destroy();
    this.passInfo.destroy();
  }
}

/**
 * Why avbd-gpu cannot run a world, or null: a dynamic body jointed to 32 other dynamic bodies or more
 * (its body colouring's 32 colours, gpu/body-colouring.ts, hold a body of at most 31 neighbours).
 */
export function avbdGpuDegreeReason(world: WorldDesc): string | null {
  const n = world.bodies.length;
  const dynamic = (i: number | null | undefined) => i !== null && i !== undefined && i < n && !world.bodies[i].fixed;
  const neighbours = new Map<number, Set<number>>();
  for (const c of world.constraints) {
    if (!('bodyA' in c)) continue;
    const a = c.bodyA, b = c.bodyB;
    if (!dynamic(a) || !dynamic(b) || a === b) continue;
    for (const [x, y] of [[a, b!], [b!, a]]) {
      let set = neighbours.get(x);
      if (!set) neighbours.set(x, (set = new Set()));
      set.add(y);
      if (set.size >= BODY_COLOUR_LIMIT)
        return `avbd-gpu colours its bodies in ${BODY_COLOUR_LIMIT} colours, so a body may be jointed to at most ${BODY_COLOUR_LIMIT - 1} others; bodies[${x}] is jointed to ${BODY_COLOUR_LIMIT} or more (use avbd-cpu)`;
    }
  }
  return null;
}
