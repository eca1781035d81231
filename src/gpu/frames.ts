/**
 * Host-side pieces every GPU solver shares: frames recorded in batches with GPU
 * timestamps around each frame's compute pass (FrameClock), whole-buffer readback,
 * and the Snapshot of the common pose/velocity layout.
 */
import type { Snapshot, StepTimings } from '../model/snapshot.js';
import type { CompiledWorld } from '../model/compiled.js';

/** Threads per workgroup of every solver kernel. */
export const WORKGROUP_SIZE = 64;

/**
 * The body state of a compiled world in the layout the GPU solvers share (f32): per body two
 * vec4f in `pose` ((x, 0), q) and in `velocity` ((v, 0), (ω, 0)).
 */
export function packBodyState(w: CompiledWorld): { pose: Float32Array<ArrayBuffer>; velocity: Float32Array<ArrayBuffer> } {
  const nb = w.bodyCount;
  const pose = new Float32Array(8 * nb);
  const velocity = new Float32Array(8 * nb);
  for (let i = 0; i < nb; i++) {
    for (let d = 0; d < 3; d++) {
      pose[8 * i + d] = w.position[3 * i + d];
      velocity[8 * i + d] = w.linearVelocity[3 * i + d];
      velocity[8 * i + 4 + d] = w.angularVelocity[3 * i + d];
    }
    for (let d = 0; d < 4; d++) pose[8 * i + 4 + d] = w.orientation[4 * i + d];
  }
  return { pose, velocity };
}

/** A row-major 3×3 (src[so..so+9)) as a WGSL mat3x3f: three 16-byte columns at dst[do..do+12). */
export function writeMat3Columns(src: ArrayLike<number>, so: number, dst: Float32Array, dstOffset: number): void {
  for (let c = 0; c < 3; c++) for (let r = 0; r < 3; r++) dst[dstOffset + 4 * c + r] = src[so + 3 * r + c];
}

/** Most frames recorded into one submission (bounded by the timestamp query set). */
export const MAX_FRAMES_PER_SUBMIT = 256;

/**
 * Frames in batches of ≤ MAX_FRAMES_PER_SUBMIT per submission, each frame one compute pass with
 * GPU timestamps around it where the adapter has them; keeps per-frame GPU and wall times.
 */
export class FrameClock {
  private readonly querySet: GPUQuerySet | null = null;
  private readonly resolve: GPUBuffer | null = null;
  private readonly readback: GPUBuffer | null = null;
  private gpuMs: number[] = [];
  private wallMs: number[] = [];
  /** set when a batch's GPU frame times add up to more than its wall time (the stamps are not credible) */
  private incoherent: string | undefined;

  constructor(
    private readonly device: GPUDevice,
    timestamps: boolean,
  ) {
    if (!timestamps) return;
    this.querySet = device.createQuerySet({ type: 'timestamp', count: 2 * MAX_FRAMES_PER_SUBMIT });
    const size = 16 * MAX_FRAMES_PER_SUBMIT;
    this.resolve = device.createBuffer({ size, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.readback = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** The pass descriptor of the frame in batch slot `slot` (timestamps at its start and end). */
  passDescriptor(slot: number): GPUComputePassDescriptor {
    if (!this.querySet) return {};
    return { timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: 2 * slot, endOfPassWriteIndex: 2 * slot + 1 } };
  }

  /** Records `frames` frames with encodeFrame(encoder, slot), submits them in batches, and times them. */
  async run(frames: number, encodeFrame: (encoder: GPUCommandEncoder, slot: number) => void): Promise<void> {
    for (let left = frames; left > 0; ) {
      const n = Math.min(left, MAX_FRAMES_PER_SUBMIT);
      const encoder = this.device.createCommandEncoder();
      for (let f = 0; f < n; f++) encodeFrame(encoder, f);
      if (this.querySet) {
        encoder.resolveQuerySet(this.querySet, 0, 2 * n, this.resolve!, 0);
        encoder.copyBufferToBuffer(this.resolve!, 0, this.readback!, 0, 16 * n);
      }
      const t0 = performance.now();
      this.device.queue.submit([encoder.finish()]);
      await this.device.queue.onSubmittedWorkDone();
      const batchMs = performance.now() - t0;
      const perFrame = batchMs / n;
      for (let f = 0; f < n; f++) this.wallMs.push(perFrame);
      if (this.readback) {
        await this.readback.mapAsync(GPUMapMode.READ, 0, 16 * n);
        const t = new BigUint64Array(this.readback.getMappedRange(0, 16 * n).slice(0));
        this.readback.unmap();
        // frame f's time: its end less the later of its start and the previous frame's end. Vulkan
        // writes a pass's start stamp at the top of the pipe, which the next frame's pass can reach
        // while the previous one still runs; end − start alone then counts the overlap twice (on the
        // H200, gs-gpu's 1M frames read 7.21 ms each against 5.99 ms of wall time per frame).
        for (let f = 0; f < n; f++) {
          const start = f > 0 && t[2 * f - 1] > t[2 * f] ? t[2 * f - 1] : t[2 * f];
          this.gpuMs.push(Number(t[2 * f + 1] - start) / 1e6);
        }
        // The frames of a batch run one after the other inside the batch's wall time, so their GPU times
        // cannot add up to more (2 % and 0.05 ms for the two clocks' resolutions). On the H200 they did:
        // jacobi-gpu's 1M frames read 6.76 ms each against 4.89 ms of wall time per frame. Such stamps
        // are not a measurement; the wall clock is used and the reason kept.
        let sum = 0;
        for (let f = this.gpuMs.length - n; f < this.gpuMs.length; f++) sum += this.gpuMs[f];
        if (sum > 1.02 * batchMs + 0.05 && this.incoherent === undefined)
          this.incoherent = `the GPU's timestamps were not used: ${n} frames read ${sum.toFixed(2)} ms on them, more than the ${batchMs.toFixed(2)} ms of wall time they ran in`;
      }
      left -= n;
    }
  }

  /** GPU timestamps when every frame has one, else wall clock. */
  timings(): StepTimings {
    const gpu = this.gpuMs.length === this.wallMs.length && this.gpuMs.length > 0 && this.incoherent === undefined;
    const t: StepTimings = { clock: gpu ? 'gpu-timestamp' : 'wall', msPerFrame: (gpu ? this.gpuMs : this.wallMs).slice(), wallMsPerFrame: this.wallMs.slice() };
    if (this.incoherent !== undefined) t.clockNote = this.incoherent;
    return t;
  }

  reset(): void {
    this.gpuMs = [];
    this.wallMs = [];
    this.incoherent = undefined;
  }

  destroy(): void {
    this.querySet?.destroy();
    this.resolve?.destroy();
    this.readback?.destroy();
  }
}

/** Copies of whole buffers, read back in one submission. */
export async function readBuffers(device: GPUDevice, buffers: GPUBuffer[]): Promise<ArrayBuffer[]> {
  const encoder = device.createCommandEncoder();
  const staging = buffers.map((src) => {
    const dst = device.createBuffer({ size: src.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(src, 0, dst, 0, src.size);
    return dst;
  });
  device.queue.submit([encoder.finish()]);
  await Promise.all(staging.map((b) => b.mapAsync(GPUMapMode.READ)));
  return staging.map((b) => {
    const data = b.getMappedRange().slice(0);
    b.unmap();
    b.destroy();
    return data;
  });
}

/**
 * A Snapshot (f64) of the layout jacobi-gpu, gs-gpu and xpbd-gpu share: per body two vec4f
 * in `pose` ((x, 0), q) and in `velocity` ((v, 0), (ω, 0)); the first `bodyCount` bodies.
 */
export function snapshotFromPoseVelocity(poseData: ArrayBuffer, velocityData: ArrayBuffer, bodyCount: number, frame: number, dt: number): Snapshot {
  const pose = new Float32Array(poseData);
  const vel = new Float32Array(velocityData);
  const pick = (src: Float32Array, half: 0 | 4, width: 3 | 4) => {
    const out = new Float64Array(width * bodyCount);
    for (let i = 0; i < bodyCount; i++) for (let d = 0; d < width; d++) out[width * i + d] = src[8 * i + half + d];
    return out;
  };
  return {
    frame,
    time: frame * dt,
    bodyCount,
    position: pick(pose, 0, 3),
    orientation: pick(pose, 4, 4),
    linearVelocity: pick(vel, 0, 3),
    angularVelocity: pick(vel, 4, 3),
  };
}
