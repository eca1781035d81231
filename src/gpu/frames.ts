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

/** The host's ms in FrameClock.run since the last reset (StepTimings.host). */
export interface FrameHostTimes {
  /** submissions (batches of frames) */
  batches: number;
  /** recording the frames: the solver's encodeFrame, in JS and in Dawn's encoder (its indirect dispatches' validation) */
  encodeMs: number;
  /** encoder.finish and queue.submit */
  submitMs: number;
  /** from the submit's return to onSubmittedWorkDone's resolution: the GPU's work, and what Dawn does to get it there */
  waitMs: number;
  /** mapping and reading the timestamps */
  stampsMs: number;
}

function emptyHostTimes(): FrameHostTimes {
  return { batches: 0, encodeMs: 0, submitMs: 0, waitMs: 0, stampsMs: 0 };
}

/** Most frames recorded into one submission (bounded by the timestamp query set). */
export const MAX_FRAMES_PER_SUBMIT = 256;

/**
 * One frame in this many has its stages timed on the GPU (FramePasses): frames
 * k ≡ STAGE_SAMPLE_EVERY / 2 (mod STAGE_SAMPLE_EVERY), k counted from the last reset, so a run's first
 * frame (pipelines' first use) is not a sample.
 */
export const STAGE_SAMPLE_EVERY = 16;

/** The frames a solver's stage times cover, on which clock, and why there are none where there are none (solvers/stages.ts). */
export interface StageSampling {
  clock: 'gpu-timestamp' | 'wall';
  /** frames whose stages were timed (the stage totals are sums over these frames) */
  frames: number;
  /** why no frame's stages were timed, where none were */
  note?: string;
}

/** Queries in the clock's set: WebGPU's largest query set (4096); the first 2·MAX_FRAMES_PER_SUBMIT are the frames' own. */
const QUERY_COUNT = 4096;
const FRAME_QUERIES = 2 * MAX_FRAMES_PER_SUBMIT;

/** The pass to record stage `name` into (FramePasses.stage; a single pass where stages are not timed: () => pass). */
export type StagePass = (name: string) => GPUComputePassEncoder;

/** A sampled frame's passes in a batch: per pass its stage name and its first query (begin; end is the next). */
interface SampledFrame {
  slot: number;
  names: string[];
  queries: number[];
  /** every stage() call got its own pass (the query pool did not run out in this frame) */
  complete: boolean;
}

/**
 * The compute passes of one frame. A solver records its frame as a sequence of named stages,
 * `passes.stage(name)` returning the pass to record the stage's dispatches into, then `passes.end()`.
 * An ordinary frame is one pass, with GPU timestamps around it (the frame's time). A sampled frame
 * (one in STAGE_SAMPLE_EVERY) opens a pass per stage, each with timestamps at its start and end, so
 * the stage's GPU time is read without a timestamp inside a pass (WebGPU has none). Consecutive calls
 * with the same name stay in one pass. Dispatches in separate passes run in the same order, with the
 * same storage barriers between them as inside one pass, so the frame computes the same thing.
 */
export class FramePasses {
  private pass: GPUComputePassEncoder | null = null;
  private current = '';

  constructor(
    private readonly encoder: GPUCommandEncoder,
    private readonly clock: FrameClock,
    private readonly slot: number,
    private readonly sample: SampledFrame | null,
  ) {}

  /** Begins stage `name` (or goes on with it, when it is the stage now open): the pass to record into. */
  stage(name: string): GPUComputePassEncoder {
    if (this.pass && (this.sample === null || name === this.current)) return this.pass;
    if (this.sample === null) {
      this.pass = this.encoder.beginComputePass(this.clock.passDescriptor(this.slot));
      return this.pass;
    }
    const q = this.clock.takeStageQueries();
    if (q < 0) {
      // the pool ran out: the rest of the frame stays in the open pass, and the sample is not used
      this.sample.complete = false;
      if (this.pass) return this.pass;
      this.pass = this.encoder.beginComputePass();
      return this.pass;
    }
    this.pass?.end();
    this.sample.names.push(name);
    this.sample.queries.push(q);
    this.current = name;
    this.pass = this.encoder.beginComputePass(this.clock.stagePassDescriptor(q));
    return this.pass;
  }

  /** Ends the frame's last pass. */
  end(): void {
    this.pass?.end();
    this.pass = null;
  }
}

/**
 * Frames in batches of ≤ MAX_FRAMES_PER_SUBMIT per submission, each frame one compute pass with
 * GPU timestamps around it where the adapter has them (one in STAGE_SAMPLE_EVERY: a pass per stage,
 * FramePasses); keeps per-frame GPU and wall times, and the stages' GPU times over the sampled frames.
 */
export class FrameClock {
  private readonly querySet: GPUQuerySet | null = null;
  private readonly resolve: GPUBuffer | null = null;
  private readonly readback: GPUBuffer | null = null;
  private gpuMs: number[] = [];
  private wallMs: number[] = [];
  /** set when a batch's GPU frame times add up to more than its wall time (the stamps are not credible) */
  private incoherent: string | undefined;
  /** frames recorded since the last reset (which ones are sampled) */
  private framesSinceReset = 0;
  /** the next free query of the stage pool in the batch being recorded */
  private stageQuery = FRAME_QUERIES;
  /** the sampled frames of the batch being recorded */
  private batchSamples: SampledFrame[] = [];
  /** ms per stage summed over the sampled frames since the last reset, in first-seen order */
  private readonly stageMs = new Map<string, number>();
  private stageFrames = 0;
  /** one frame in this many has its stages timed (STAGE_SAMPLE_EVERY unless set: sampleStagesEvery) */
  private sampleEvery = STAGE_SAMPLE_EVERY;
  /** host ms since the last reset: recording the frames, finish + submit, the wait for the GPU, the stamps' readback */
  private host: FrameHostTimes = emptyHostTimes();

  constructor(
    private readonly device: GPUDevice,
    private readonly timestamps: boolean,
  ) {
    if (!timestamps) return;
    this.querySet = device.createQuerySet({ type: 'timestamp', count: QUERY_COUNT });
    const size = 8 * QUERY_COUNT;
    this.resolve = device.createBuffer({ size, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.readback = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** The pass descriptor of the frame in batch slot `slot` (timestamps at its start and end). */
  passDescriptor(slot: number): GPUComputePassDescriptor {
    if (!this.querySet) return {};
    return { timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: 2 * slot, endOfPassWriteIndex: 2 * slot + 1 } };
  }

  /** The pass descriptor of a stage's pass whose queries start at q (FramePasses). */
  stagePassDescriptor(q: number): GPUComputePassDescriptor {
    return { timestampWrites: { querySet: this.querySet!, beginningOfPassWriteIndex: q, endOfPassWriteIndex: q + 1 } };
  }

  /** Two queries of the stage pool (their first index), or −1 when the pool of this batch is used up. */
  takeStageQueries(): number {
    if (this.stageQuery + 2 > QUERY_COUNT) return -1;
    this.stageQuery += 2;
    return this.stageQuery - 2;
  }

  /** The passes of the frame in batch slot `slot` (a pass per stage when the frame is a sample). */
  private framePasses(encoder: GPUCommandEncoder, slot: number): FramePasses {
    const k = this.framesSinceReset++;
    let sample: SampledFrame | null = null;
    if (this.querySet && k % this.sampleEvery === Math.floor(this.sampleEvery / 2) && this.stageQuery + 2 <= QUERY_COUNT) {
      sample = { slot, names: [], queries: [], complete: true };
      this.batchSamples.push(sample);
    }
    return new FramePasses(encoder, this, slot, sample);
  }

  /** Records `frames` frames with encodeFrame(encoder, passes, slot), submits them in batches, and times them. */
  async run(frames: number, encodeFrame: (passes: FramePasses, encoder: GPUCommandEncoder, slot: number) => void): Promise<void> {
    for (let left = frames; left > 0; ) {
      const n = Math.min(left, MAX_FRAMES_PER_SUBMIT);
      const encoder = this.device.createCommandEncoder();
      this.stageQuery = FRAME_QUERIES;
      this.batchSamples = [];
      const e0 = performance.now();
      for (let f = 0; f < n; f++) {
        const passes = this.framePasses(encoder, f);
        encodeFrame(passes, encoder, f);
        passes.end();
      }
      if (this.querySet) {
        encoder.resolveQuerySet(this.querySet, 0, 2 * n, this.resolve!, 0);
        if (this.stageQuery > FRAME_QUERIES) encoder.resolveQuerySet(this.querySet, FRAME_QUERIES, this.stageQuery - FRAME_QUERIES, this.resolve!, 8 * FRAME_QUERIES);
        encoder.copyBufferToBuffer(this.resolve!, 0, this.readback!, 0, 8 * this.stageQuery);
      }
      const t0 = performance.now();
      this.device.queue.submit([encoder.finish()]);
      const t1 = performance.now();
      await this.device.queue.onSubmittedWorkDone();
      const t2 = performance.now();
      const batchMs = t2 - t0;
      const perFrame = batchMs / n;
      for (let f = 0; f < n; f++) this.wallMs.push(perFrame);
      this.host.batches++;
      this.host.encodeMs += t0 - e0;
      this.host.submitMs += t1 - t0;
      this.host.waitMs += t2 - t1;
      if (this.readback) {
        await this.readback.mapAsync(GPUMapMode.READ, 0, 8 * this.stageQuery);
        const t = new BigUint64Array(this.readback.getMappedRange(0, 8 * this.stageQuery).slice(0));
        this.readback.unmap();
        this.readStamps(t, n, batchMs);
        this.host.stampsMs += performance.now() - t2;
      }
      left -= n;
    }
  }

  /**
   * The batch's frame and stage times from its stamps (ns). A frame's or stage's time is its end less
   * the later of its start and the end of what ran before it. Vulkan writes a pass's start stamp at
   * the top of the pipe, which the next pass can reach while the previous one still runs; end − start
   * alone then counts the overlap twice (on the H200, gs-gpu's 1M frames read 7.21 ms each against
   * 5.99 ms of wall time per frame). A sampled frame's own time runs from its first pass's start to
   * its last pass's end.
   */
  private readStamps(t: BigUint64Array, n: number, batchMs: number): void {
    const samples = new Map(this.batchSamples.map((s) => [s.slot, s]));
    let previousEnd = 0n;
    const frameStart = this.gpuMs.length;
    for (let f = 0; f < n; f++) {
      const s = samples.get(f);
      const begin = s && s.queries.length > 0 ? t[s.queries[0]] : t[2 * f];
      const end = s && s.queries.length > 0 ? t[s.queries[s.queries.length - 1] + 1] : t[2 * f + 1];
      const start = f > 0 && previousEnd > begin ? previousEnd : begin;
      this.gpuMs.push(Number(end - start) / 1e6);
      if (s && s.complete && s.queries.length > 0) {
        let before = start;
        for (let i = 0; i < s.queries.length; i++) {
          const b = t[s.queries[i]], e = t[s.queries[i] + 1];
          const ms = Number(e - (before > b ? before : b)) / 1e6;
          this.stageMs.set(s.names[i], (this.stageMs.get(s.names[i]) ?? 0) + ms);
          before = e;
        }
        this.stageFrames++;
      }
      previousEnd = end;
    }
    // The frames of a batch run one after the other inside the batch's wall time, so their GPU times
    // cannot add up to more (2 % and 0.05 ms for the two clocks' resolutions). On the H200 they did:
    // jacobi-gpu's 1M frames read 6.76 ms each against 4.89 ms of wall time per frame. Such stamps
    // are not a measurement; the wall clock is used and the reason kept.
    let sum = 0;
    for (let f = frameStart; f < this.gpuMs.length; f++) sum += this.gpuMs[f];
    if (sum > 1.02 * batchMs + 0.05 && this.incoherent === undefined)
      this.incoherent = `the GPU's timestamps were not used: ${n} frames read ${sum.toFixed(2)} ms on them, more than the ${batchMs.toFixed(2)} ms of wall time they ran in`;
  }

  /** GPU timestamps when every frame has one, else wall clock. */
  timings(): StepTimings {
    const gpu = this.gpuMs.length === this.wallMs.length && this.gpuMs.length > 0 && this.incoherent === undefined;
    const t: StepTimings = { clock: gpu ? 'gpu-timestamp' : 'wall', msPerFrame: (gpu ? this.gpuMs : this.wallMs).slice(), wallMsPerFrame: this.wallMs.slice(), host: { ...this.host } };
    if (this.incoherent !== undefined) t.clockNote = this.incoherent;
    return t;
  }

  /** ms per stage summed over the sampled frames since the last reset (empty without timestamps). */
  stageTimes(): Record<string, number> {
    if (this.incoherent !== undefined) return {};
    return Object.fromEntries(this.stageMs);
  }

  /** How many frames the stage times cover, on which clock, and why none where none. */
  stageSampling(): StageSampling {
    if (!this.timestamps) return { clock: 'gpu-timestamp', frames: 0, note: 'the adapter has no timestamp queries' };
    if (this.incoherent !== undefined) return { clock: 'gpu-timestamp', frames: 0, note: this.incoherent };
    if (this.stageFrames === 0)
      return { clock: 'gpu-timestamp', frames: 0, note: `no frame sampled: one in ${this.sampleEvery} frames is, from the ${Math.floor(this.sampleEvery / 2) + 1}th on` };
    return { clock: 'gpu-timestamp', frames: this.stageFrames };
  }

  /**
   * Times the stages of one frame in `every` (frames k ≡ ⌊every/2⌋ mod every, from the next reset): 1 times
   * every frame, for a short run (a benchmark of a few frames on a slow adapter). A sampled frame is a pass
   * per stage instead of one pass: its own time then includes the passes' boundaries.
   */
  sampleStagesEvery(every: number): void {
    if (!(Number.isInteger(every) && every >= 1)) throw new RangeError(`stage sampling: every ${every} frames must be an integer ≥ 1`);
    this.sampleEvery = every;
  }

  reset(): void {
    this.host = emptyHostTimes();
    this.gpuMs = [];
    this.wallMs = [];
    this.incoherent = undefined;
    this.framesSinceReset = 0;
    this.stageMs.clear();
    this.stageFrames = 0;
  }

  destroy(): void {
    this.querySet?.destroy();
    this.resolve?.destroy();
    this.readback?.destroy();
  }
}

/**
 * Copies of whole buffers, read back in one submission, through one staging buffer where they fit in one
 * (maxBufferSize; else as few as hold them, in order): one map to wait for, not one per buffer. A buffer's
 * size is a multiple of 4 (copyBufferToBuffer's), so each copy's offset in the staging buffer is too.
 */
export async function readBuffers(device: GPUDevice, buffers: GPUBuffer[]): Promise<ArrayBuffer[]> {
  const encoder = device.createCommandEncoder();
  const limit = device.limits.maxBufferSize;
  // groups of consecutive buffers whose sizes add up to at most the limit: [first, end) and their offsets
  const groups: { first: number; end: number; size: number }[] = [];
  const offsets: number[] = [];
  for (let i = 0; i < buffers.length; i++) {
    const size = buffers[i].size;
    let g = groups[groups.length - 1];
    if (!g || g.size + size > limit) groups.push((g = { first: i, end: i, size: 0 }));
    offsets.push(g.size);
    g.size += size;
    g.end = i + 1;
  }
  const staging = groups.map((g) => {
    const dst = device.createBuffer({ size: Math.max(4, g.size), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    for (let i = g.first; i < g.end; i++) encoder.copyBufferToBuffer(buffers[i], 0, dst, offsets[i], buffers[i].size);
    return dst;
  });
  device.queue.submit([encoder.finish()]);
  await Promise.all(staging.map((b) => b.mapAsync(GPUMapMode.READ)));
  const out: ArrayBuffer[] = [];
  groups.forEach((g, k) => {
    const all = staging[k].getMappedRange();
    for (let i = g.first; i < g.end; i++) out.push(all.slice(offsets[i], offsets[i] + buffers[i].size));
    staging[k].unmap();
    staging[k].destroy();
  });
  return out;
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
