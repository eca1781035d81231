/**
 * The broad phase on the GPU: from one box per body in a storage buffer (BodyAabb, f32), the pairs of
 * bodies whose closed boxes overlap, appended to a compact pair buffer with a counter, and the
 * indirect dispatch arguments of a kernel over those pairs (the narrow phase's), all recorded into one
 * compute pass with no readback. The CPU twin is broadphase.ts (SweepAndPrune; bruteForcePairs is the
 * reference of the tests); the same pairs are reported (test/gpu-broadphase.test.ts), in another order
 * (the order of atomic appends: not deterministic; a consumer that needs one sorts or keys by pair).
 *
 * Which pairs (as the CPU pipeline, pipeline.ts detect):
 *  - boxes closed: touching boxes overlap; a plane's unbounded sides overlap everything on that axis;
 *  - not two inactive bodies: flag bit 0 of a body is "fixed or asleep" (pipeline.ts passes
 *    isStatic | asleep to the broad phase as its static flags, so a pair of two sleepers, or of a
 *    sleeper and a fixed body, is never looked at): the caller writes isStatic | asleep there;
 *  - not a jointed pair (setJoints): the CPU pipeline skips them before its narrow phase, right after
 *    its broad phase; here they are never appended, so the pair buffer is the narrow phase's input.
 *    The CPU broad phase itself (SweepAndPrune) does report them: compare with them removed.
 *
 * Design: a hashed uniform grid, rebuilt each update by a counting sort (Teschner et al. 2003's spatial
 * hash; three-avbd's GPU pipeline; Green 2008, "Particle simulation using CUDA", for the sort):
 *   clear    counters and bucket counts to 0
 *   assign   per body: its min corner's cell c = ⌊lo / h⌋, hashed to one of B buckets (B = a power of
 *            two ≥ 2n), rank = atomicAdd(count[bucket]); or onto the big list (below)
 *   scan     exclusive scan of the B + 1 counts (gpu/scan.ts): each bucket's first entry
 *   scatter  entries[first[bucket] + rank] = the body's box: the bodies in bucket order
 *   big      (indirect, counters[BIG] · n threads) each big body against every body
 *   pairs    per entry p: its own cell's entries after p, and the 13 cells of a half shell around it
 *            ((dx, dy, dz) > 0 lexicographically); a pair is met exactly once (wgsl: bp_pairs)
 *   args     the pair count, capped at the capacity, as dispatch arguments (pairArgs)
 * One body enters one cell (its min corner's) so the sort has n entries, not the ~8n of entering every
 * cell a box touches (HashGrid on the CPU): the price is a 27-cell neighbourhood, halved by the shell.
 *
 * Why a grid: on the GPU it is O(n) work in a fixed number of passes (two atomic passes, a scan of
 * ~2n counts in 3 dispatches up to 2¹⁸ bodies and 5 beyond, one gather), with no sort. A sort-based
 * sweep needs a radix sort of n keys (4 passes of 8 bits, each a histogram, a scan and a scatter) and
 * then a sweep whose work per
 * body is ~n^(2/3) along one axis (broadphase.ts measured plain SAP 3–4× slower than the grid at 10k
 * on the CPU for that reason); an LBVH needs the same sort plus a tree build and a traversal per
 * body with divergent stacks. The grid's weakness is a spread of sizes: bodies much larger than a
 * cell go to the big list (tested against all, n threads each), so a scene of a few giants among many
 * small bodies is fine, and one of many sizes pays. Only the grid was built on the GPU: the sweep and
 * the LBVH were not measured. What was measured (scripts/bench-gpu-broadphase.ts; SwiftShader 5.0.0,
 * the software Vulkan on this 2-core Xeon VM, load 4–5 from other jobs; ms per update, GPU timestamps,
 * medians of 8 steps; CPU SweepAndPrune on the same f64 boxes, wall clock, in the same run; the scenes
 * of bench-broadphase.ts):
 *
 *   scene      bodies    pairs    GPU grid   (sort   big   pairs)   CPU SAP
 *   pile       10 000    20 059      56        13    0.6    41         17
 *   moving     10 000    23 782      94        11    0.7    81         27
 *   shuffled   10 000    23 594      84        11    0.7    72         29
 *   pile      100 000   204 971     959       177    8.7   738        149
 *   moving    100 000   243 779    1392       206    6.3  1189        168
 *   shuffled  100 000   241 569     841       119     10   712        114
 *
 * SwiftShader runs the kernels on the same two cores, SIMD-4 lanes in lockstep, so these say that the
 * work is linear in n (×10 bodies: ×10–17 time) and where it goes (the pair search, ~80 %), not what a
 * GPU takes. The cell edge was measured too (10k, cell = c × gridCellSize): c = 0.6 put 1 620–7 777
 * bodies on the big list (2.4–7.3 s per update); c = 0.8, 68–2 436 (0.16–3.1 s); c = 1.3 none, but
 * 83–165 ms against 56–94 ms at c = 1 (more candidates per cell). Hence the largest ordinary side.
 *
 * Cell size: chosen on the host (gridCellSize) from the boxes' extents: the largest side among the
 * boxes whose largest side is at most 4 × the mean (a few giants do not inflate every cell; they go to
 * the big list). A frame's boxes change with the velocity margins, so the GPU pipeline will give the
 * scene's value (2 × the bounding radius plus the speculative margin, say) once, not read boxes back.
 * The result never depends on h: it only moves bodies between the grid and the big list.
 *
 * f32 and the CPU's f64 (no pair the CPU reports may be dropped):
 *  - packAabbs rounds each f64 bound to the nearest f32 (Math.fround). Rounding is monotone
 *    (x ≤ y ⇒ fl(x) ≤ fl(y)), so every inequality lo_a ≤ hi_b that holds in f64 holds after rounding:
 *    no overlapping pair is lost, exact touching included (equal f64 bounds round to equal f32).
 *    A pair can be gained: one whose f64 gap g = lo_a − hi_b > 0 on an axis rounds to 0; then
 *    g ≤ |fl(lo_a) − lo_a| + |fl(hi_b) − hi_b| ≤ 2⁻²⁴ (|lo_a| + |hi_b|) (unit roundoff, round to
 *    nearest). The GPU set is a superset of the CPU set, every extra pair within that bound (tested).
 *  - The cell of a point is ⌊fl(p · (1/h))⌋ clamped to ±2³⁰, monotone in p too, and "small" is
 *    decided on those same rounded cells (cell(hi) − cell(lo) ≤ 1 per axis), never on h itself. For
 *    small a, b overlapping: cell(lo_b) ≤ cell(hi_a) ≤ cell(lo_a) + 1, and symmetrically, so their
 *    cells differ by at most one per axis whatever the rounding of the products: the 27-cell search is
 *    exact, no pair lost to a box that rounding pushed one cell further. No inflation is needed.
 *  - Unbounded sides (planes, ±∞ in f64) are written as ±3.4e38 (f32 max, ordered as ±∞ against any
 *    finite bound); any |bound| ≥ 1e30 puts the body on the big list (WGSL compilers may assume
 *    finite floats, so no ∞ reaches the GPU).
 *
 * Overflow: counters[PAIRS] counts every pair found, writes only those below the capacity. The count
 * then exceeds the capacity: the kernels after it read min(count, capacity) (the pair arguments are
 * capped), and the host that reads the count (readPairs) reports it, or grows the buffer to the count
 * and runs again (update()). A frame pipeline checks it when it reads its counters back anyway.
 *
 * Limits: n ≤ the buffers' capacity (create); big · n < 2³² threads; counts below 2³².
 */
import { Counters } from '../gpu/counters.js';
import { Kernel } from '../gpu/dispatch.js';
import { buildKernels } from '../gpu/kernels.js';
import { readBuffers } from '../gpu/frames.js';
import { PrefixScan, type ScanPlan } from '../gpu/scan.js';
import {
  BIG_MARK,
  BodyAabbRecord,
  BodyPairRecord,
  BroadParamsRecord,
  COUNTER_BIG,
  COUNTER_PAIRS,
  GridEntryRecord,
  UNBOUNDED,
  assignWgsl,
  bigWgsl,
  clearBucketsWgsl,
  pairsWgsl,
  scatterWgsl,
} from './gpu-broadphase.wgsl.js';

export { BodyAabbRecord, BodyPairRecord, COUNTER_PAIRS, COUNTER_BIG, BIG_MARK, UNBOUNDED };

const F32_MAX = 3.4028234663852886e38;
/** the stages of an update (record's StagePass names): the counting sort, the big list, the grid's pairs */
export const BROAD_STAGES = ['broad phase: grid', 'broad phase: big list', 'broad phase: grid pairs'] as const;
/** argument slots of the counters: 0 the big list's kernel, 1 the pairs (for the narrow phase) */
const SLOT_BIG = 0, SLOT_PAIRS = 1;

/**
 * The boxes of `count` bodies (6 f64 each: min x y z, max x y z, aabb.ts) as BodyAabb records: bounds
 * rounded to the nearest f32, ±∞ as ±f32 max; flag bit 0 from inactive[i] (fixed or asleep) when given.
 */
export function packAabbs(aabbs: Float64Array, count: number, inactive?: Uint8Array): ArrayBuffer {
  const R = BodyAabbRecord;
  const buf = new ArrayBuffer(Math.max(R.stride, R.stride * count));
  const f = new Float32Array(buf), u = new Uint32Array(buf);
  const lo = R.offsets.lo / 4, hi = R.offsets.hi / 4, fl = R.offsets.flags / 4, w = R.stride / 4;
  const clampInf = (v: number) => (v === Infinity ? F32_MAX : v === -Infinity ? -F32_MAX : v);
  for (let i = 0; i < count; i++) {
    for (let d = 0; d < 3; d++) {
      f[w * i + lo + d] = clampInf(aabbs[6 * i + d]);
      f[w * i + hi + d] = clampInf(aabbs[6 * i + 3 + d]);
    }
    u[w * i + fl] = inactive && inactive[i] ? 1 : 0;
  }
  return buf;
}

/**
 * The grid's cell edge from the boxes (header): the largest finite side among boxes whose largest side
 * is ≤ 4 × the mean largest side; 1 when there is no finite box.
 */
export function gridCellSize(aabbs: Float64Array, count: number): number {
  let sum = 0, m = 0;
  for (let i = 0; i < count; i++) {
    const s = largestSide(aabbs, i);
    if (Number.isFinite(s)) {
      sum += s;
      m++;
    }
  }
  if (m === 0 || !(sum > 0)) return 1;
  const cap = (4 * sum) / m;
  let h = 0;
  for (let i = 0; i < count; i++) {
    const s = largestSide(aabbs, i);
    if (Number.isFinite(s) && s <= cap && s > h) h = s;
  }
  return h > 0 ? h : 1;
}

function largestSide(a: Float64Array, i: number): number {
  const o = 6 * i;
  return Math.max(a[o + 3] - a[o], a[o + 4] - a[o + 1], a[o + 5] - a[o + 2]);
}

/**
 * The joints' body pairs as the kernels' CSR (gpu-broadphase.wgsl.ts `joints`): per body i the partners
 * j > i; joints to the world (an index ≥ bodyCount) left out, as the CPU pipeline does.
 */
export function jointAdjacency(ib0: ArrayLike<number>, ib1: ArrayLike<number>, jointCount: number, bodyCount: number): Uint32Array<ArrayBuffer> {
  const start = new Uint32Array(bodyCount + 1);
  for (let k = 0; k < jointCount; k++) {
    const a = ib0[k], b = ib1[k];
    if (a >= bodyCount || b >= bodyCount || a === b) continue;
    start[Math.min(a, b) + 1]++;
  }
  for (let i = 0; i < bodyCount; i++) start[i + 1] += start[i];
  const out = new Uint32Array(bodyCount + 1 + start[bodyCount]);
  out.set(start);
  const fill = start.slice(0, bodyCount);
  for (let k = 0; k < jointCount; k++) {
    const a = ib0[k], b = ib1[k];
    if (a >= bodyCount || b >= bodyCount || a === b) continue;
    out[bodyCount + 1 + fill[Math.min(a, b)]++] = Math.max(a, b);
  }
  return out;
}

function nextPow2(v: number): number {
  let p = 1;
  while (p < v) p *= 2;
  return p;
}

interface Bound {
  aabbs: GPUBuffer;
  clear: GPUBindGroup;
  assign: GPUBindGroup;
  scatter: GPUBindGroup;
  pairs: GPUBindGroup;
  big: GPUBindGroup;
}

/** What readPairs gives: the pairs (a < b) sorted by (a, b), the count found and whether it overflowed. */
export interface GpuPairs {
  /** 2 per pair: (a, b), a < b, ascending by (a, b); only the pairs written (≤ capacity) */
  pairs: Int32Array;
  /** pairs found (counters[PAIRS]); > capacity when the buffer overflowed */
  found: number;
  capacity: number;
  overflow: boolean;
  /** bodies on the big list */
  big: number;
}

export class GpuBroadPhase {
  private readonly params: GPUBuffer;
  private readonly slot: GPUBuffer;
  private readonly buckets: GPUBuffer;
  private readonly entries: GPUBuffer;
  private readonly big: GPUBuffer;
  private joints: GPUBuffer;
  /** the pairs found: BodyPair records (a < b), counters.buffer[COUNTER_PAIRS] of them (≤ pairCapacity written) */
  pairs: GPUBuffer;
  pairCapacity: number;
  /** counters [PAIRS, BIG] and the indirect arguments (pairArgs) */
  readonly counters: Counters;
  private bound: Bound | null = null;
  private plan: ScanPlan | null = null;
  private bucketCount = 0;
  count = 0;
  cellSize = 1;

  private constructor(
    private readonly device: GPUDevice,
    /** most bodies */
    readonly capacity: number,
    pairCapacity: number,
    private readonly scan: PrefixScan,
    private readonly kernels: Record<'clear' | 'assign' | 'scatter' | 'pairs' | 'big', Kernel>,
    counters: Counters,
  ) {
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const n = Math.max(1, capacity);
    this.params = device.createBuffer({ label: 'broad params', size: Math.max(16, BroadParamsRecord.stride), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.slot = device.createBuffer({ label: 'broad slot', size: 8 * n, usage: storage });
    this.buckets = device.createBuffer({ label: 'broad buckets', size: 4 * (nextPow2(Math.max(64, 2 * n)) + 1), usage: storage });
    this.entries = device.createBuffer({ label: 'broad entries', size: GridEntryRecord.stride * n, usage: storage });
    this.big = device.createBuffer({ label: 'broad big', size: 4 * n, usage: storage });
    this.joints = device.createBuffer({ label: 'broad joints', size: 4 * (n + 1), usage: storage }); // zeros: no joints
    this.pairCapacity = Math.max(1, pairCapacity);
    this.pairs = device.createBuffer({ label: 'broad pairs', size: BodyPairRecord.stride * this.pairCapacity, usage: storage });
    this.counters = counters;
  }

  /** A broad phase for up to `capacity` bodies and `pairCapacity` pairs (default 8 per body; grows on overflow in update()). */
  static async create(device: GPUDevice, capacity: number, pairCapacity = 8 * capacity): Promise<GpuBroadPhase> {
    if (!(capacity >= 1 && Number.isInteger(capacity))) throw new RangeError(`GpuBroadPhase: capacity ${capacity} must be a positive integer`);
    const scan = await PrefixScan.create(device);
    const kernels = await buildKernels(device, 'gpu broad phase', () => ({
      clear: Kernel.create(device, 'bp_clear', clearBucketsWgsl),
      assign: Kernel.create(device, 'bp_assign', assignWgsl),
      scatter: Kernel.create(device, 'bp_scatter', scatterWgsl),
      pairs: Kernel.create(device, 'bp_pairs', pairsWgsl),
      big: Kernel.create(device, 'bp_big', bigWgsl),
    }));
    const counters = await Counters.create(device, 2, [
      { counter: COUNTER_BIG, scale: capacity, cap: capacity },
      { counter: COUNTER_PAIRS, scale: 1, cap: pairCapacity },
    ], 'broad counters');
    return new GpuBroadPhase(device, capacity, pairCapacity, scan, kernels, counters);
  }

  /**
   * Sets the body count and the cell edge (m) for the updates recorded from now on (written with
   * queue.writeBuffer: every update of one submission sees the values set last before it).
   */
  configure(count: number, cellSize: number): void {
    if (!(count >= 1 && count <= this.capacity && Number.isInteger(count))) throw new RangeError(`GpuBroadPhase: ${count} bodies, capacity ${this.capacity}`);
    if (!(cellSize > 0 && Number.isFinite(cellSize))) throw new RangeError(`GpuBroadPhase: cell size ${cellSize} must be positive and finite`);
    this.count = count;
    this.cellSize = cellSize;
    const B = nextPow2(Math.max(64, 2 * count));
    if (B !== this.bucketCount) {
      this.plan?.destroy();
      this.plan = this.scan.plan(this.buckets, B + 1);
      this.bucketCount = B;
    }
    this.writeParams();
    this.counters.setSlot(SLOT_BIG, { counter: COUNTER_BIG, scale: count, cap: count });
    if (this.jointList && this.jointList.count !== count) this.uploadJoints(); // the CSR is laid out for the count
  }
  private jointList: { ib0: number[]; ib1: number[]; count: number } | null = null;

  private writeParams(): void {
    const R = BroadParamsRecord;
    const v = new DataView(new ArrayBuffer(Math.max(16, R.stride)));
    R.write(v, 0, 'count', this.count);
    R.write(v, 0, 'mask', this.bucketCount - 1);
    R.write(v, 0, 'capacity', this.pairCapacity);
    R.write(v, 0, 'inv_cell', 1 / this.cellSize);
    this.device.queue.writeBuffer(this.params, 0, v.buffer);
  }

  /** Jointed pairs are not reported (ib0/ib1: the joints' bodies; an index ≥ count is the world). */
  setJoints(ib0: ArrayLike<number>, ib1: ArrayLike<number>, jointCount: number): void {
    this.jointList = { ib0: Array.from({ length: jointCount }, (_, k) => ib0[k]), ib1: Array.from({ length: jointCount }, (_, k) => ib1[k]), count: 0 };
    this.uploadJoints();
  }

  private uploadJoints(): void {
    const j = this.jointList!;
    const n = this.count || this.capacity;
    j.count = n;
    const csr = jointAdjacency(j.ib0, j.ib1, j.ib0.length, n);
    if (csr.byteLength > this.joints.size) {
      this.joints.destroy();
      this.joints = this.device.createBuffer({ label: 'broad joints', size: csr.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
      this.bound = null;
    }
    this.device.queue.writeBuffer(this.joints, 0, csr);
  }

  /** Makes the pair buffer hold at least `pairCapacity` pairs (recreated, contents lost). */
  growPairs(pairCapacity: number): void {
    if (pairCapacity <= this.pairCapacity) return;
    this.pairs.destroy();
    this.pairCapacity = pairCapacity;
    this.pairs = this.device.createBuffer({ label: 'broad pairs', size: BodyPairRecord.stride * pairCapacity, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    this.counters.setSlot(SLOT_PAIRS, { counter: COUNTER_PAIRS, scale: 1, cap: pairCapacity });
    this.bound = null;
    if (this.count > 0) this.writeParams();
  }

  /** the jointed pairs' CSR (the kernels' `joints`; recreated when it grows) */
  get jointsBuffer(): GPUBuffer {
    return this.joints;
  }

  /** Indirect dispatch arguments of one thread per pair found (capped at the capacity): for the narrow phase. */
  get pairArgs(): { buffer: GPUBuffer; offset: number } {
    return { buffer: this.counters.args, offset: this.counters.argsOffset(SLOT_PAIRS) };
  }

  private bindings(aabbs: GPUBuffer): Bound {
    if (this.bound && this.bound.aabbs === aabbs) return this.bound;
    const k = this.kernels, p = this.params, c = this.counters.buffer;
    this.bound = {
      aabbs,
      clear: k.clear.bind([p, this.buckets]),
      assign: k.assign.bind([p, aabbs, this.slot, this.buckets, this.big, c]),
      scatter: k.scatter.bind([p, aabbs, this.slot, this.buckets, this.entries]),
      pairs: k.pairs.bind([p, this.buckets, this.entries, this.joints, c, this.pairs]),
      big: k.big.bind([p, aabbs, this.slot, this.big, this.joints, c, this.pairs]),
    };
    return this.bound;
  }

  /**
   * Records one update: the pairs of the `count` bodies (configure) whose BodyAabb records are in
   * `aabbs`, into `pairs`, their number in counters.buffer[COUNTER_PAIRS], and pairArgs. `at` is the
   * pass to record into, or a StagePass (gpu/frames.ts: the pass of a named stage) for stages timed
   * apart: BROAD_STAGES, in order.
   */
  record(at: GPUComputePassEncoder | ((stage: string) => GPUComputePassEncoder), aabbs: GPUBuffer): void {
    if (!this.plan) throw new Error('GpuBroadPhase: configure(count, cellSize) before record');
    if (aabbs.size < BodyAabbRecord.stride * this.count) throw new RangeError(`GpuBroadPhase: the box buffer holds ${Math.floor(aabbs.size / BodyAabbRecord.stride)} records, ${this.count} bodies`);
    const stage = typeof at === 'function' ? at : () => at;
    const b = this.bindings(aabbs), k = this.kernels, n = this.count;
    let pass = stage(BROAD_STAGES[0]);
    this.counters.recordClear(pass);
    k.clear.dispatch(pass, b.clear, this.bucketCount + 1);
    k.assign.dispatch(pass, b.assign, n);
    this.plan.record(pass);
    k.scatter.dispatch(pass, b.scatter, n);
    pass = stage(BROAD_STAGES[1]);
    this.counters.recordArgs(pass);
    k.big.dispatchIndirect(pass, b.big, this.counters.args, this.counters.argsOffset(SLOT_BIG));
    pass = stage(BROAD_STAGES[2]);
    k.pairs.dispatch(pass, b.pairs, n);
    this.counters.recordArgs(pass);
  }

  /** Records one update in a compute pass of its own (timestampWrites: GPU timestamps around it). */
  encode(encoder: GPUCommandEncoder, aabbs: GPUBuffer, timestampWrites?: GPUComputePassTimestampWrites): void {
    const pass = encoder.beginComputePass(timestampWrites ? { timestampWrites } : {});
    this.record(pass, aabbs);
    pass.end();
  }

  /** Reads back the last update's pairs (sorted by (a, b)) and counters: tests and benchmarks, not frames. */
  async readPairs(): Promise<GpuPairs> {
    const [c, p] = await readBuffers(this.device, [this.counters.buffer, this.pairs]);
    const counts = new Uint32Array(c);
    const found = counts[COUNTER_PAIRS];
    const m = Math.min(found, this.pairCapacity);
    const raw = new Uint32Array(p, 0, 2 * m);
    // key a·n + b: exact in f64 while n² < 2⁵³ (n < 9.4·10⁷ bodies)
    const n = Math.max(1, this.count);
    const keys = new Float64Array(m);
    for (let k = 0; k < m; k++) keys[k] = raw[2 * k] * n + raw[2 * k + 1];
    keys.sort();
    const pairs = new Int32Array(2 * m);
    for (let k = 0; k < m; k++) {
      const a = Math.floor(keys[k] / n);
      pairs[2 * k] = a;
      pairs[2 * k + 1] = keys[k] - a * n;
    }
    return { pairs, found, capacity: this.pairCapacity, overflow: found > this.pairCapacity, big: counts[COUNTER_BIG] };
  }

  /**
   * One update submitted and read back (host convenience for tests and tools): on overflow the pair
   * buffer grows to the count found (next power of two) and the update runs again, once.
   */
  async update(aabbs: GPUBuffer): Promise<GpuPairs & { grew: boolean }> {
    let grew = false;
    for (;;) {
      const encoder = this.device.createCommandEncoder();
      this.encode(encoder, aabbs);
      this.device.queue.submit([encoder.finish()]);
      const r = await this.readPairs();
      if (!r.overflow || grew) return { ...r, grew };
      this.growPairs(nextPow2(r.found));
      grew = true;
    }
  }

  destroy(): void {
    for (const b of [this.params, this.slot, this.buckets, this.entries, this.big, this.joints, this.pairs]) b.destroy();
    this.plan?.destroy();
    this.counters.destroy();
  }
}
