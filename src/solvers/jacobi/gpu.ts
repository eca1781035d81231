/**
 * jacobi-gpu — host side of the GPU Jacobi point-constraint solver. The kernels
 * and the buffer legend are in kernels.wgsl.ts; the f64 reference with the same
 * stages is cpu.ts.
 *
 * One frame = one compute pass (GPU timestamps around it where the adapter has
 * them), holding `substeps` solver steps of h = dt / substeps:
 *   compute_inertia → compute_free_velocity → compute_violation_and_jacobian_and_delassus
 *   → [update_velocities: apply the warm start] → N × (update_multipliers, update_velocities)
 *   → compute_positions
 * Many frames are recorded into one submission; nothing is read back until a
 * snapshot is asked for. Dispatches in one pass run in order, each seeing the
 * previous one's writes (WebGPU orders storage writes between dispatches).
 */
import type { WorldDesc } from '../../model/world.js';
import { compileWorld, complianceOf, type CompiledWorld } from '../../model/compiled.js';
import type { GpuContext } from '../../gpu/device.js';
import {
  type Solver,
  type SolverOptions,
  type SolverCost,
  type ResidualCurve,
  defaultSolverOptions,
} from '../solver.js';
import { GpuSolverBase } from '../../gpu/solver-base.js';
import { packBodyState, writeMat3Columns } from '../../gpu/frames.js';
import { RESIDUAL_QUANTITY, dampingFactor, type JacobiVariant } from './cpu.js';
import { kernelSpecs, kernelSource, type BufferName, type KernelSpec } from './kernels.wgsl.js';


interface Kernel {
  spec: KernelSpec;
  pipeline: GPUComputePipeline;
  /** one bind group and workgroup grid per colour for 'colour' kernels, else one */
  bindGroups: GPUBindGroup[];
  groups: [number, number][];
}

/** Bytes between the colour ranges in the 'colour' uniform buffer (minUniformBufferOffsetAlignment ≤ 256). */
export const COLOUR_SLOT = 256;

export class JacobiGpuSolver extends GpuSolverBase<BufferName> implements Solver {
  readonly id: string = 'jacobi-gpu';
  readonly variant: JacobiVariant;
  readonly bodyCount: number;
  readonly constraintCount: number;

  protected readonly w: CompiledWorld;
  /** constraint ranges [start, start + count) swept one after the other by 'colour' kernels (gs-gpu); none for Jacobi */
  protected colourRanges: { start: number; count: number }[] = [];
  private readonly kernels = new Map<string, Kernel>();

  protected constructor(world: WorldDesc, options: Partial<SolverOptions>, variant: Partial<JacobiVariant>, gpu: GpuContext) {
    super({ ...defaultSolverOptions, ...options }, gpu);
    this.variant = { applyWarmStart: true, ...variant };
    this.w = compileWorld(world);
    this.bodyCount = this.w.worldBodyCount;
    this.constraintCount = this.w.constraintCount;
  }

  static async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext, variant: Partial<JacobiVariant> = {}): Promise<JacobiGpuSolver> {
    const s = new JacobiGpuSolver(world, options, variant, gpu);
    await s.init();
    return s;
  }

  protected async init(): Promise<void> {
    this.checkLimits(this.sizes());
    this.upload();
    await this.buildPipelines();
  }

  /** The kernels this solver builds (kernels.wgsl.ts). */
  protected kernelList(): KernelSpec[] {
    return kernelSpecs();
  }

  /** Buffer sizes in bytes, from the world's counts. */
  private sizes(): Record<BufferName, number> {
    const nb = Math.max(1, this.w.bodyCount), nc = Math.max(1, this.w.constraintCount); // no zero-size bindings
    return {
      params: 48,
      pose: 32 * nb,
      velocity: 32 * nb,
      velocity_delta: 32 * nb,
      inverse_mass: 64 * nb,
      inverse_inertia_local: 48 * nb,
      ic0: 4 * (nb + 1),
      constraint_list: 8 * nc,
      bodies: 8 * nc,
      anchors: 32 * nc,
      jacobian: 32 * nc,
      violation: 16 * nc,
      delassus_inv: 48 * nc,
      multiplier: 16 * nc,
      residual: 4 * nc,
      colour: COLOUR_SLOT * Math.max(1, this.colourRanges.length),
    };
  }

  private upload(): void {
    const w = this.w;
    const nb = w.bodyCount, nc = w.constraintCount;
    const sizes = this.sizes();
    const data: Partial<Record<BufferName, ArrayBuffer>> = {};

    const { pose, velocity } = packBodyState(w);
    const invMass = new Float32Array(16 * nb);
    const invInertiaLocal = new Float32Array(12 * nb);
    for (let i = 0; i < nb; i++) {
      invMass[16 * i + 12] = w.inverseMass[i];
      writeMat3Columns(w.inverseInertiaLocal, 9 * i, invInertiaLocal, 12 * i);
    }
    data.pose = pose.buffer;
    data.velocity = velocity.buffer;
    data.inverse_mass = invMass.buffer;
    data.inverse_inertia_local = invInertiaLocal.buffer;
    data.ic0 = Uint32Array.from(w.connectivity.ic0).buffer;
    data.constraint_list = Uint32Array.from(w.connectivity.constraintList).buffer;
    const bodies = new Uint32Array(2 * nc);
    const anchors = new Float32Array(8 * nc);
    const compliance = complianceOf(w, this.options.compliance);
    for (let c = 0; c < nc; c++) {
      anchors[8 * c + 3] = compliance[c];
      bodies[2 * c] = w.ib0[c];
      bodies[2 * c + 1] = w.ib1[c];
      for (let d = 0; d < 3; d++) {
        anchors[8 * c + d] = w.r0[3 * c + d];
        anchors[8 * c + 4 + d] = w.r1[3 * c + d];
      }
    }
    data.bodies = bodies.buffer;
    data.anchors = anchors.buffer;
    const colour = new Uint32Array((COLOUR_SLOT / 4) * Math.max(1, this.colourRanges.length));
    this.colourRanges.forEach((r, c) => colour.set([r.start, r.count], (COLOUR_SLOT / 4) * c));
    data.colour = colour.buffer;

    this.createBuffers(sizes, data, ['params', 'colour']);
    this.writeParams();
  }

  /** Params uniform, matching `struct Params` in kernels.wgsl.ts. */
  private writeParams(): void {
    const { dt, substeps, beta, warmStart } = this.options;
    const h = dt / substeps;
    const buf = new ArrayBuffer(48);
    const f = new Float32Array(buf);
    const u = new Uint32Array(buf);
    f.set(this.w.gravity, 0);
    f[3] = h;
    f[4] = beta / h;
    f[5] = warmStart;
    u[6] = this.w.bodyCount;
    u[7] = this.w.constraintCount;
    u[8] = this.rowWidth();
    f[9] = dampingFactor(this.options.linearDamping, h);
    f[10] = dampingFactor(this.options.angularDamping, h);
    this.device.queue.writeBuffer(this.buffers.get('params')!, 0, buf);
  }

  private async buildPipelines(): Promise<void> {
    this.device.pushErrorScope('validation');
    for (const spec of this.kernelList()) {
      const module = this.device.createShaderModule({ label: spec.name, code: kernelSource(spec) });
      // synchronous: dawn.node's createComputePipelineAsync aborts the process on SwiftShader
      const pipeline = this.device.createComputePipeline({
        label: spec.name,
        layout: 'auto',
        compute: { module, entryPoint: spec.name },
      });
      // a 'colour' kernel gets one bind group per colour, its range at offset COLOUR_SLOT·c of the 'colour' buffer
      const ranges = spec.over === 'colour' ? this.colourRanges : [null];
      const bindGroups = ranges.map((_, c) => {
        const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: this.buffers.get('params')! } }];
        spec.bindings.forEach((b, i) =>
          entries.push({
            binding: i + 1,
            resource: b.name === 'colour' ? { buffer: this.buffers.get('colour')!, offset: COLOUR_SLOT * c, size: 16 } : { buffer: this.buffers.get(b.name)! },
          }),
        );
        return this.device.createBindGroup({ label: spec.name, layout: pipeline.getBindGroupLayout(0), entries });
      });
      const counts = spec.over === 'colour' ? this.colourRanges.map((r) => r.count) : [spec.over === 'body' ? this.w.bodyCount : this.w.constraintCount];
      this.kernels.set(spec.name, { spec, pipeline, bindGroups, groups: counts.map((n) => this.groupsFor(n)) });
    }
    const err = await this.device.popErrorScope();
    if (err) throw new Error(`jacobi-gpu: pipeline creation failed: ${err.message}`);
  }

  /** One dispatch of kernel `name` (for a 'colour' kernel: over colour `colour`'s constraints). */
  protected dispatch(pass: GPUComputePassEncoder, name: string, colour = 0): void {
    const k = this.kernels.get(name)!;
    const [x, y] = k.groups[colour];
    if (x === 0) return;
    pass.setPipeline(k.pipeline);
    pass.setBindGroup(0, k.bindGroups[colour]);
    pass.dispatchWorkgroups(x, y);
  }

  /** Stages 1–3 of a step and the warm start: everything before the iterations. */
  private encodeSolveStart(pass: GPUComputePassEncoder): void {
    this.dispatch(pass, 'compute_inertia');
    this.dispatch(pass, 'compute_free_velocity');
    this.dispatch(pass, 'compute_violation_and_jacobian_and_delassus');
    if (this.variant.applyWarmStart && this.options.warmStart > 0) this.dispatch(pass, 'update_velocities');
  }

  /** One Jacobi iteration (37), (34). */
  protected encodeIteration(pass: GPUComputePassEncoder): void {
    this.dispatch(pass, 'update_multipliers');
    this.dispatch(pass, 'update_velocities');
  }

  protected encodeFrame(encoder: GPUCommandEncoder, slot: number): void {
    const { substeps, iterations } = this.options;
    const pass = encoder.beginComputePass(this.clock.passDescriptor(slot));
    for (let s = 0; s < substeps; s++) {
      this.encodeSolveStart(pass);
      for (let k = 0; k < iterations; k++) this.encodeIteration(pass);
      this.dispatch(pass, 'compute_positions');
    }
    pass.end();
  }

  /**
   * One frame, as step(1), with compute_residual after the warm start and after
   * each iteration of the first substep; each result is copied out between
   * passes and the per-constraint |r_ℓ|² are summed in f64 here. Not timed.
   */
  async stepRecordingResiduals(): Promise<ResidualCurve> {
    const { substeps, iterations } = this.options;
    const slot = this.buffers.get('residual')!.size;
    const readback = this.device.createBuffer({ size: slot * (iterations + 1), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.device.createCommandEncoder();
    const record = (k: number, body: (pass: GPUComputePassEncoder) => void) => {
      const pass = encoder.beginComputePass();
      body(pass);
      this.dispatch(pass, 'compute_residual');
      pass.end();
      encoder.copyBufferToBuffer(this.buffers.get('residual')!, 0, readback, k * slot, slot);
    };
    record(0, (pass) => this.encodeSolveStart(pass));
    for (let k = 0; k < iterations; k++) record(k + 1, (pass) => this.encodeIteration(pass));
    const pass = encoder.beginComputePass();
    this.dispatch(pass, 'compute_positions');
    for (let s = 1; s < substeps; s++) {
      this.encodeSolveStart(pass);
      for (let k = 0; k < iterations; k++) this.encodeIteration(pass);
      this.dispatch(pass, 'compute_positions');
    }
    pass.end();
    const point = await this.residualNorms(encoder, readback, slot, iterations + 1, this.constraintCount);
    this.frame++;
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels: { point } };
  }

  /** Dispatches as encodeFrame records them; bytes from jacobiIterationBytes. */
  cost(): SolverCost {
    const { substeps, iterations, warmStart } = this.options;
    const perStep = 4 + this.dispatchesPerIteration() * iterations + (this.variant.applyWarmStart && warmStart > 0 ? 1 : 0);
    return {
      rowSolvesPerFrame: 3 * this.constraintCount * iterations * substeps,
      dispatchesPerFrame: perStep * substeps,
      iterationBytesPerFrame: this.iterationBytes() * iterations * substeps,
    };
  }

  /** Dispatches encodeIteration records. */
  protected dispatchesPerIteration(): number {
    return 2;
  }

  /** Bytes one iteration moves (jacobiIterationBytes). */
  protected iterationBytes(): number {
    return jacobiIterationBytes(this.w.bodyCount, this.w.constraintCount);
  }
}

/**
 * Bytes one Jacobi iteration (update_multipliers + update_velocities) must move,
 * at the buffer layout of kernels.wgsl.ts (f32), counting each element read or
 * written once:
 *   update_multipliers, per constraint: bodies 8, velocity 2×32, velocity_delta 2×32,
 *     jacobian 32, violation 16, delassus_inv 48, multiplier 16 read + 16 written = 264
 *   update_velocities, per body: ic0 8, inverse_mass 64, velocity_delta 32 written = 104;
 *     per (body, constraint) entry (2 per constraint): constraint_list 4, bodies 8,
 *     jacobian 16, multiplier 16 = 44
 */
export function jacobiIterationBytes(bodyCount: number, constraintCount: number): number {
  return 264 * constraintCount + 104 * bodyCount + 2 * 44 * constraintCount;
}
