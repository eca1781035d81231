/**
 * What every GPU solver's host side shares: options, adapter, the named storage
 * buffers, frames recorded in batches and timed (FrameClock), readback, the
 * Snapshot of the common pose/velocity layout, and the residual readback of a
 * recorded frame. A GPU solver extends it and records its frame in encodeFrame.
 */
import type { GpuContext } from './device.js';
import { FrameClock, readBuffers, snapshotFromPoseVelocity } from './frames.js';
import type { AdapterDescription, Snapshot, SolverOptions, StepTimings } from '../solvers/solver.js';

export abstract class GpuSolverBase<B extends string> {
  abstract readonly id: string;
  abstract readonly bodyCount: number;
  readonly options: SolverOptions;
  readonly adapter: AdapterDescription;
  protected readonly device: GPUDevice;
  protected readonly buffers = new Map<B, GPUBuffer>();
  protected readonly clock: FrameClock;
  protected frame = 0;

  constructor(options: SolverOptions, gpu: GpuContext) {
    this.options = options;
    this.device = gpu.device;
    this.adapter = { name: gpu.adapterName, software: gpu.software, timestamps: gpu.timestamps };
    this.clock = new FrameClock(this.device, gpu.timestamps);
  }

  /** Records one frame as one compute pass, opened with clock.passDescriptor(slot). */
  protected abstract encodeFrame(encoder: GPUCommandEncoder, slot: number): void;

  async step(frames: number): Promise<void> {
    await this.clock.run(frames, (encoder, slot) => this.encodeFrame(encoder, slot));
    this.frame += frames;
  }

  /** Read back buffers (f32) by name. */
  async read(names: B[]): Promise<Map<B, ArrayBuffer>> {
    const data = await readBuffers(this.device, names.map((name) => this.buffers.get(name)!));
    return new Map(names.map((name, i) => [name, data[i]]));
  }

  async snapshot(): Promise<Snapshot> {
    const data = await this.read(['pose', 'velocity'] as B[]);
    return snapshotFromPoseVelocity(data.get('pose' as B)!, data.get('velocity' as B)!, this.bodyCount, this.frame, this.options.dt);
  }

  /** The storage buffers, for a renderer that draws straight from them. */
  buffer(name: B): GPUBuffer {
    return this.buffers.get(name)!;
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
