/**
 * The narrow phase on the GPU: for each pair of the GPU broad phase's pair buffer, the contact
 * manifold of the two bodies (types.ts conventions), written by one thread per pair into a manifold
 * buffer, recorded into a compute pass with no readback. The CPU twin is narrow.ts collide() (pairs.ts
 * routines); test/gpu-narrow.test.ts checks the manifolds against it within a derived f32 bound.
 *
 * Inputs:
 *   pairs      BodyPair records (a < b) and the pair count in a counter buffer, with the indirect
 *              dispatch arguments of one thread per pair (GpuBroadPhase: pairs, counters.buffer
 *              [COUNTER_PAIRS], pairArgs); pairs past `capacity` are not read (overflow: the broad
 *              phase counted them but did not write them);
 *   poses      BodyPose per body: (position, pad), orientation [x, y, z, w], f32 — the layout the GPU
 *              solvers share (frames.ts packBodyState), so the solver's pose buffer binds directly;
 *   shapes     BodyShape per body (packShapes): kind and size.
 * Output, at the pair's own index k (not compacted):
 *   manifolds[k]        Manifold: normal (A → B, A = the pair's lower index), count ≤ 4, the pair;
 *   points[4k + j]      ContactPoint j < count: pointA, pointB (world), separation, feature id.
 * A pair with no point within the margin writes count 0. Why not compact with a counter: the pair index
 * is then the manifold's index, so the next stages (persistence by pair key, colouring, the per-body
 * contact lists) read manifold k beside pair k with no indirection, and an atomic append would add a
 * second non-deterministic order on top of the broad phase's; the price is the empty records
 * (count 0) that those stages skip. A compaction by scan can be added where a stage needs it dense.
 *
 * Same routine order as the CPU: a pair whose lower index has the higher-ranked shape (sphere <
 * capsule < box < plane) is computed as (B, A) and turned back (normal negated, points exchanged), so
 * the ids and the point order match the CPU's point by point.
 *
 * Margin: one margin for every pair (params), or (usePairMargins) the CPU pipeline's per pair,
 * 4·slop + h (speed_a + speed_b) (pipeline.ts), the speeds from the body-box stage (gpu-aabb.ts).
 *
 * Every shape pair of the CPU has its routine (GPU_NARROW_PAIRS; plane–plane never touches). A body
 * whose shape kind is none of the four (bad input) gets count 0 and is counted in
 * status[STATUS_UNSUPPORTED], which read() reports: never silently dropped.
 *
 * f32: the CPU's cut-offs that stand for "equal up to f64 rounding" (1e-9 L ties, 1e-12 L zero
 * distances, snap bands) are grown by the f32 bound E = c ε (X + L) where the decision compares
 * quantities that f32 cannot tell apart (gpu-narrow.wgsl.ts, at each); the test skips the
 * configurations whose decision lies between the two cut-offs and says how many.
 *
 * Cost: one thread per pair; box–box's closest-feature fallback (8 + 8 vertex clamps, 144 edge pairs)
 * runs only for disjoint pairs within the margin that no face or edge contact held. Not timed here:
 * SwiftShader timings say nothing of a GPU's, and no GPU was lent to this task.
 */
import { Kernel } from '../gpu/dispatch.js';
import { buildKernels } from '../gpu/kernels.js';
import { readBuffers } from '../gpu/frames.js';
import type { Shape } from '../model/world.js';
import type { Manifold } from './types.js';
import {
  BodyPoseRecord,
  BodyShapeRecord,
  ContactPointRecord,
  GPU_NARROW_PAIRS,
  ManifoldRecord,
  NarrowParamsRecord,
  SHAPE_KIND,
  STATUS_UNSUPPORTED,
  narrowWgsl,
} from './gpu-narrow.wgsl.js';

export { BodyPoseRecord, BodyShapeRecord, ContactPointRecord, ManifoldRecord, GPU_NARROW_PAIRS, SHAPE_KIND };

/** The stage name of record (a StagePass's pass for timing it apart). */
export const NARROW_STAGE = 'narrow phase';

/** The shapes as BodyShape records (f32 sizes). */
export function packShapes(shapes: readonly Shape[]): ArrayBuffer {
  const R = BodyShapeRecord;
  const buf = new ArrayBuffer(Math.max(R.stride, R.stride * shapes.length));
  const v = new DataView(buf);
  shapes.forEach((s, i) => {
    R.write(v, i, 'kind', SHAPE_KIND[s.type]);
    if (s.type === 'sphere') R.write(v, i, 'size', s.radius, 0, 0);
    else if (s.type === 'capsule') R.write(v, i, 'size', s.radius, s.halfHeight, 0);
    else if (s.type === 'box') R.write(v, i, 'size', ...s.halfExtents);
    else R.write(v, i, 'size', 0, 0, 0);
  });
  return buf;
}

/** Poses (3 f64 position, 4 f64 quaternion per body) as BodyPose records, rounded to f32. */
export function packPoses(position: ArrayLike<number>, orientation: ArrayLike<number>, count: number): ArrayBuffer {
  const buf = new ArrayBuffer(Math.max(BodyPoseRecord.stride, BodyPoseRecord.stride * count));
  const f = new Float32Array(buf);
  const w = BodyPoseRecord.stride / 4, po = BodyPoseRecord.offsets.position / 4, qo = BodyPoseRecord.offsets.orientation / 4;
  for (let i = 0; i < count; i++) {
    for (let d = 0; d < 3; d++) f[w * i + po + d] = position[3 * i + d];
    for (let d = 0; d < 4; d++) f[w * i + qo + d] = orientation[4 * i + d];
  }
  return buf;
}

/** The pair input of record(): the pair buffer, the counter holding its count, and the indirect arguments. */
export interface PairInput {
  pairs: GPUBuffer;
  counters: GPUBuffer;
  /** index of the pair count in `counters` */
  counter: number;
  /** dispatch arguments of one thread per pair (capped at the capacity) */
  args: { buffer: GPUBuffer; offset: number };
}

/** What read() gives: manifold k of pair k (null: no point within the margin), and the unsupported pairs. */
export interface GpuManifolds {
  pairs: Int32Array;
  /** the pair count in the counter (> capacity: the broad phase overflowed; only capacity pairs were read) */
  found: number;
  manifolds: (Manifold | null)[];
  unsupported: number;
}

export class GpuNarrowPhase {
  /** Manifold records, one per pair slot */
  readonly manifolds: GPUBuffer;
  /** ContactPoint records, 4 per pair slot */
  readonly points: GPUBuffer;
  /** u32 [unsupported pairs] (cleared by encode) */
  readonly status: GPUBuffer;
  private readonly params: GPUBuffer;
  private readonly noSpeeds: GPUBuffer;
  private group: { key: GPUBuffer[]; bind: GPUBindGroup } | null = null;
  private last: PairInput | null = null;

  private constructor(
    private readonly device: GPUDevice,
    /** pair slots (= the broad phase's pair capacity) */
    readonly capacity: number,
    private readonly kernel: Kernel,
    margin: number,
  ) {
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.manifolds = device.createBuffer({ label: 'narrow manifolds', size: ManifoldRecord.stride * capacity, usage: storage });
    this.points = device.createBuffer({ label: 'narrow points', size: 4 * ContactPointRecord.stride * capacity, usage: storage });
    this.status = device.createBuffer({ label: 'narrow status', size: 16, usage: storage });
    this.params = device.createBuffer({ label: 'narrow params', size: NarrowParamsRecord.stride, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.noSpeeds = device.createBuffer({ label: 'narrow: no speeds', size: 4, usage: GPUBufferUsage.STORAGE });
    this.configure(0, margin, capacity);
  }

  /** A narrow phase for up to `capacity` pairs, reporting points with s < margin (m). */
  static async create(device: GPUDevice, capacity: number, margin = 0.02): Promise<GpuNarrowPhase> {
    if (!(capacity >= 1 && Number.isInteger(capacity))) throw new RangeError(`GpuNarrowPhase: capacity ${capacity} must be a positive integer`);
    const kernel = await buildKernels(device, 'gpu narrow phase', () => Kernel.create(device, 'np_collide', narrowWgsl));
    return new GpuNarrowPhase(device, capacity, kernel, margin);
  }

  private counterIndex = 0;
  /** pairs the kernel reads at most: min(capacity, the bound pair buffer's records) */
  private pairCap = 0;
  margin = 0.02;
  /** the frame's time step of the per-pair margin (usePairMargins), or null: one margin for every pair */
  private pairMarginStep: number | null = null;

  /** Sets the margin (and the pair counter's index) for the records from now on (queue.writeBuffer). */
  configure(counter: number, margin: number, pairCap = this.pairCap): void {
    if (!(margin >= 0 && Number.isFinite(margin))) throw new RangeError(`GpuNarrowPhase: margin ${margin} must be ≥ 0 and finite`);
    this.counterIndex = counter;
    this.margin = margin;
    this.pairCap = Math.min(pairCap, this.capacity);
    const R = NarrowParamsRecord;
    const v = new DataView(new ArrayBuffer(R.stride));
    R.write(v, 0, 'capacity', this.pairCap);
    R.write(v, 0, 'counter', counter);
    R.write(v, 0, 'margin', margin);
    R.write(v, 0, 'per_pair', this.pairMarginStep === null ? 0 : 1);
    R.write(v, 0, 'h', this.pairMarginStep ?? 0);
    this.device.queue.writeBuffer(this.params, 0, v.buffer);
  }

  /**
   * From now on each pair's margin is the CPU pipeline's, 4 slop + h (s_a + s_b) (pipeline.ts), with the
   * per-body speed bounds s that record() is given (gpu-aabb.ts speeds) and the frame's time step h;
   * null goes back to one margin for every pair.
   */
  usePairMargins(h: number | null): void {
    this.pairMarginStep = h;
    this.configure(this.counterIndex, this.margin);
  }

  /**
   * Records the narrow phase of `input`'s pairs at `poses` (BodyPose) with `shapes` (BodyShape) into
   * `at`, a pass or a StagePass (gpu/frames.ts; the stage NARROW_STAGE): manifolds and points
   * written; bodies of no known shape kind counted in status (cleared by encode, or by the caller's
   * encoder.clearBuffer(status)). No readback. The pairs read are the first min(count, capacity, the
   * pair buffer's records): create it with the broad phase's pair capacity, or read().found says what
   * was left out.
   */
  record(at: GPUComputePassEncoder | ((stage: string) => GPUComputePassEncoder), input: PairInput, poses: GPUBuffer, shapes: GPUBuffer, speeds: GPUBuffer | null = null): void {
    const pass = typeof at === 'function' ? at(NARROW_STAGE) : at;
    if (this.pairMarginStep !== null && !speeds) throw new Error('GpuNarrowPhase: per-pair margins (usePairMargins) need the bodies\' speeds');
    // pairs read: at most the manifold slots and the pair buffer's records
    const cap = Math.min(this.capacity, Math.floor(input.pairs.size / 8));
    if (input.counter !== this.counterIndex || cap !== this.pairCap) this.configure(input.counter, this.margin, cap);
    // (with one margin for every pair the speeds are not read: a 4-byte buffer stands in for them)
    const key = [input.pairs, input.counters, poses, shapes, speeds ?? this.noSpeeds];
    if (!this.group || this.group.key.some((b, i) => b !== key[i])) {
      this.group = { key, bind: this.kernel.bind([this.params, input.pairs, input.counters, poses, shapes, this.manifolds, this.points, this.status, speeds ?? this.noSpeeds]) };
    }
    this.last = input;
    this.kernel.dispatchIndirect(pass, this.group.bind, input.args.buffer, input.args.offset);
  }

  /** Records into a pass of its own, after clearing the status counter (clearBuffer needs the encoder). */
  encode(encoder: GPUCommandEncoder, input: PairInput, poses: GPUBuffer, shapes: GPUBuffer, speeds: GPUBuffer | null = null): void {
    encoder.clearBuffer(this.status);
    const pass = encoder.beginComputePass();
    this.record(pass, input, poses, shapes, speeds);
    pass.end();
  }

  /** Reads back the manifolds of the last recorded input (tests and tools, not frames). */
  async read(): Promise<GpuManifolds> {
    const input = this.last;
    if (!input) throw new Error('GpuNarrowPhase: read before record');
    const [cb, pb, mb, ptb, sb] = await readBuffers(this.device, [input.counters, input.pairs, this.manifolds, this.points, this.status]);
    const found = new Uint32Array(cb)[input.counter];
    const n = Math.min(found, this.pairCap);
    const raw = new Uint32Array(pb, 0, 2 * n);
    const mv = new DataView(mb), pv = new DataView(ptb);
    const M = ManifoldRecord, P = ContactPointRecord;
    const manifolds: (Manifold | null)[] = [];
    for (let k = 0; k < n; k++) {
      const count = M.read(mv, k, 'count')[0];
      if (count === 0) {
        manifolds.push(null);
        continue;
      }
      const points = [];
      for (let j = 0; j < count; j++) {
        const r = 4 * k + j;
        points.push({
          pointA: P.read(pv, r, 'point_a') as [number, number, number],
          pointB: P.read(pv, r, 'point_b') as [number, number, number],
          separation: P.read(pv, r, 'separation')[0],
          id: P.read(pv, r, 'id')[0],
        });
      }
      manifolds.push({ normal: M.read(mv, k, 'normal') as [number, number, number], points });
    }
    return { pairs: Int32Array.from(raw), found, manifolds, unsupported: new Uint32Array(sb)[STATUS_UNSUPPORTED] };
  }

  destroy(): void {
    for (const b of [this.manifolds, this.points, this.status, this.params, this.noSpeeds]) b.destroy();
  }
}
