/**
 * What every GPU solver's host side shares: options, adapter, the named storage
 * buffers, frames recorded in batches and timed (FrameClock), readback, the
 * Snapshot of the common pose/velocity layout, and the residual readback of a
 * recorded frame. A GPU solver extends it and records its frame in encodeFrame.
 */
import type { GpuContext } from '../gpu/device.js';
import { InputError } from '../model/input-error.js';
import { formatBytes } from '../model/limits.js';
import { FrameClock, readBuffers, snapshotFromPoseVelocity, WORKGROUP_SIZE, type StagePass } from '../gpu/frames.js';
import type { StageSampling, StageTimes } from './stages.js';
import type { SolverOptions } from './solver.js';
import type { AdapterDescription, Snapshot, StepTimings } from '../model/snapshot.js';

/**
 * The live body state of a GPU solver, for a renderer that draws straight from it (no readback):
 * per body `stride` bytes, (x, y, z) as f32 at byte `position` and the quaternion [x y z w] at
 * byte `orientation`; the desc's bodies first (indices as in the WorldDesc), `bodyCount` of them.
 * Read-only: the buffer is written only by the solver's kernels.
 */
export interface BodyStateBuffer {
  buffer: GPUBuffer;
  stride: number;
  position: number;
  orientation: number;
  bodyCount: number;
}

/** A solver that exposes its BodyStateBuffer (every GpuSolverBase). */
export function hasBodyStateBuffer(solver: object): solver is { bodyState(): BodyStateBuffer } {
  return typeof (solver as { bodyState?: unknown }).bodyState === 'function';
}

export abstract class GpuSolverBase<B extends string> {
  abstract readonly id: string;
  abstract readonly bodyCount: number;
  readonly options: SolverOptions;
  readonly adapter: AdapterDescription;
  protected readonly device: GPUDevice;
  protected readonly buffers = new Map<B, GPUBuffer>();
  protected readonly clock: FrameClock;
  protected frame = 0;
  /**
   * Buffers created so far by createBuffers and growBuffer (a test counts them: joints added one per
   * step must recreate a buffer only when the layout outgrows it, O(log n) times by doubling).
   */
  bufferCreations = 0;

  constructor(options: SolverOptions, gpu: GpuContext) {
    this.options = options;
    this.device = gpu.device;
    this.adapter = { name: gpu.adapterName, software: gpu.software, timestamps: gpu.timestamps };
    this.clock = new FrameClock(this.device, gpu.timestamps);
  }

  /** Refuses a scene whose buffers exceed the adapter's limits, naming the buffer and the limit (an InputError: one line, exit 2). */
  protected checkLimits(sizes: Record<string, number>): void {
    const lim = this.device.limits;
    for (const [name, size] of Object.entries(sizes)) {
      const [limit, which] =
        lim.maxStorageBufferBindingSize <= lim.maxBufferSize
          ? [lim.maxStorageBufferBindingSize, 'maxStorageBufferBindingSize']
          : [lim.maxBufferSize, 'maxBufferSize'];
      if (size > limit)
        throw new InputError(`scene too big for this adapter (${this.adapter.name}): buffer '${name}' needs ${formatBytes(size)} (${size} bytes), beyond its ${which} of ${formatBytes(limit)}`);
    }
  }

  /** Creates the named buffers (uniform for `uniforms`, else storage) and writes their initial data. */
  protected createBuffers(sizes: Record<B, number>, data: Partial<Record<B, ArrayBuffer>>, uniforms: B[] = []): void {
    for (const [name, size] of Object.entries(sizes) as [B, number][]) {
      const usage = uniforms.includes(name)
        ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST
        : GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      const buf = this.device.createBuffer({ label: name, size, usage });
      this.bufferCreations++;
      const d = data[name];
      if (d && d.byteLength) this.device.queue.writeBuffer(buf, 0, d);
      this.buffers.set(name, buf);
    }
  }

  /**
   * Makes the named buffer hold at least `size` bytes: kept where it does (true capacity ≥ size), else
   * recreated (contents lost: the caller writes them) at max(size, 2 × its size), so a layout that grows
   * by one joint at a time recreates it O(log n) times. Returns whether it was recreated (then the bind
   * groups that hold it must be made again).
   */
  protected growBuffer(name: B, size: number, uniform = false): boolean {
    const old = this.buffers.get(name);
    if (old && old.size >= size) return false;
    const capacity = Math.max(size, old ? 2 * old.size : 0);
    const usage = uniform ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST : GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.checkLimits({ [name]: capacity });
    old?.destroy();
    this.buffers.set(name, this.device.createBuffer({ label: name, size: capacity, usage }));
    this.bufferCreations++;
    return true;
  }

  /**
   * Work before a step that the host must do (the GPU solvers on rows: lay their rows out again when
   * joints were added or removed since the last step); none by default.
   */
  protected async beforeStep(): Promise<void> {}

  /**
   * The bodies' pose now, read back from the 'pose' buffer ((x, 0), q per body, 32 bytes: frames.ts
   * packBodyState) as f64, 3 and 4 per body, over `bodyCount` bodies.
   */
  protected static poseFrom(data: ArrayBuffer, bodyCount: number): { position: Float64Array; orientation: Float64Array } {
    const f = new Float32Array(data);
    const position = new Float64Array(3 * bodyCount), orientation = new Float64Array(4 * bodyCount);
    for (let i = 0; i < bodyCount; i++) {
      for (let d = 0; d < 3; d++) position[3 * i + d] = f[8 * i + d];
      for (let d = 0; d < 4; d++) orientation[4 * i + d] = f[8 * i + 4 + d];
    }
    return { position, orientation };
  }

  /** Threads per row of a 2-D dispatch (the kernels' index = gid.y · rowWidth + gid.x). */
  protected rowWidth(): number {
    return this.device.limits.maxComputeWorkgroupsPerDimension * WORKGROUP_SIZE;
  }

  /** Workgroups for n threads: one row while it fits, else rows of the widest dispatch. */
  protected groupsFor(n: number): [number, number] {
    const wg = Math.ceil(n / WORKGROUP_SIZE);
    const maxX = this.device.limits.maxComputeWorkgroupsPerDimension;
    return wg <= maxX ? [wg, 1] : [maxX, Math.ceil(wg / maxX)];
  }

  /**
   * Records one frame, stage by stage: `at(name)` is the pass to record stage `name` into (one pass
   * for the whole frame, but on the frames whose stages are timed: gpu/frames.ts FramePasses).
   */
  protected abstract encodeFrame(at: StagePass): void;

  /** the stage names of one frame, in order (solvers/stages.ts; each solver's encodeFrame names them) */
  abstract readonly stageNames: readonly string[];

  async step(frames: number): Promise<void> {
    await this.beforeStep();
    await this.clock.run(frames, (passes) => this.encodeFrame((name) => passes.stage(name)));
    this.frame += frames;
  }

  /** GPU ms per stage summed over the sampled frames since the last reset (stageSampling says how many). */
  stageTimes(): StageTimes {
    return this.clock.stageTimes();
  }

  stageSampling(): StageSampling {
    return this.clock.stageSampling();
  }

  /** Times the stages of one frame in `every` from the next resetTimings (gpu/frames.ts FrameClock.sampleStagesEvery). */
  sampleStagesEvery(every: number): void {
    this.clock.sampleStagesEvery(every);
  }

  /** Read back buffers (f32) by name. */
  async read(names: B[]): Promise<Map<B, ArrayBuffer>> {
    const data = await readBuffers(this.device, names.map((name) => this.buffers.get(name)!));
    return new Map(names.map((name, i) => [name, data[i]]));
  }

  /**
   * Buffers a snapshot reads beside the pose and velocities, in the same submission and map (one host sync
   * a snapshot, not one per reader), and what is done with their contents (it may throw: a SolverFailure
   * found in them ends the run as before); none by default.
   */
  protected snapshotExtras(): { buffers: GPUBuffer[]; take(data: ArrayBuffer[]): void } | null {
    return null;
  }

  async snapshot(): Promise<Snapshot> {
    const extra = this.snapshotExtras();
    const data = await readBuffers(this.device, [this.buffers.get('pose' as B)!, this.buffers.get('velocity' as B)!, ...(extra?.buffers ?? [])]);
    extra?.take(data.slice(2));
    return snapshotFromPoseVelocity(data[0], data[1], this.bodyCount, this.frame, this.options.dt);
  }

  /** The storage buffers, for a renderer that draws straight from them. */
  buffer(name: B): GPUBuffer {
    return this.buffers.get(name)!;
  }

  /** The `pose` buffer as a renderer reads it: (x, 0) and q per body, 32 bytes (frames.ts packBodyState). */
  bodyState(): BodyStateBuffer {
    return { buffer: this.buffers.get('pose' as B)!, stride: 32, position: 0, orientation: 16, bodyCount: this.bodyCount };
  }

  timings(): StepTimings {
    return this.clock.timings();
  }

  resetTimings(): void {
    this.clock.reset();
  }

  destroy(): void {
    for (const b of this.buffers.values()) b.destroy();
    this.clock.destroy();
  }

  /**
   * Submits `encoder`, which copied a per-constraint |r_ℓ|² buffer into `readback` after each
   * of `records` points of a solve (slot k at k·slotBytes), and returns ‖r‖₂ at each point,
   * summed in f64 over the first `count` entries.
   */
  protected async residualNorms(encoder: GPUCommandEncoder, readback: GPUBuffer, slotBytes: number, records: number, count: number): Promise<number[]> {
    this.device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const squares = new Float32Array(readback.getMappedRange().slice(0));
    readback.unmap();
    readback.destroy();
    const norms: number[] = [];
    for (let k = 0; k < records; k++) {
      let sum = 0;
      for (let i = 0; i < count; i++) sum += squares[k * (slotBytes / 4) + i];
      norms.push(Math.sqrt(sum));
    }
    return norms;
  }
}
