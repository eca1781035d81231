/**
 * The broad phase: from one axis-aligned box per body (aabb.ts), the pairs of bodies whose boxes
 * overlap, the only pairs the narrow phase looks at. Boxes are closed: touching boxes overlap
 * (a.min ≤ b.max and b.min ≤ a.max on each of x, y, z). Bounds may be ±∞ (planes, aabb.ts): an
 * infinite interval overlaps every interval on that axis, so a ground plane pairs with whatever
 * reaches down to it. Pairs of two static bodies (isStatic[i] = isStatic[j] = 1) are never reported.
 *
 *   SweepAndPrune     the default. Keeps the bodies sorted by their min on one axis from call to
 *                     call; each call re-sorts by insertion (bodies move little between steps, so a
 *                     few shifts) and sweeps: body i is tested only against the bodies after it in the
 *                     order whose min ≤ i's max on that axis (exactly those that overlap i there),
 *                     within bands across a second axis (below).
 *   HashGrid          a hashed uniform grid rebuilt every call, for comparison (bench-broadphase.ts).
 *   bruteForcePairs   all n(n−1)/2 tests; the reference of the tests.
 * All three report the same pairs in the same order: i < j in each pair, pairs ascending by (i, j)
 * (a counting sort by j, then a stable one by i, O(n + pairs)). So what the solvers see does not
 * depend on which broad phase ran, nor on the history of the sort (contact order matters to a
 * Gauss–Seidel solve).
 *
 * Sweep and prune, details.
 *  - The sweep axis: the one along which the finite boxes' centres spread most (largest variance),
 *    chosen again each call but only switched when another axis's variance exceeds the current one's
 *    by 1.5× (a switch costs one full sort). A settled pile on the ground spreads along x and z; a
 *    tall tower along y.
 *  - Insertion sort from the previous order: O(n + shifts). It gives up after 2 n ⌈log₂ n⌉ shifts
 *    (incoherent motion) and finishes with a merge sort, so a step never costs more than ~2 sorts.
 *  - Bodies added since the last call (count grew) are merge-sorted among themselves and merged into
 *    the order (O(n + m log m)); bodies removed (count shrank) are dropped from it.
 *  - Bands. One sweep tests each body against every body overlapping it on the sweep axis: in 3-D,
 *    with n bodies in a volume, that is ~n^(2/3) per body and the n^(5/3) total is what made plain
 *    SAP 3–4× slower than the grid at 10k bodies (2.2–3.1 M candidates for 20–24 k pairs, table).
 *    So the sweep runs in bands across the axis of next largest spread: width 1.5 × the boxes'
 *    mean extent on that axis; every body is entered, in sorted order, in each band its interval
 *    touches (a band's list is then sorted too, no sort per band), swept within the band, and a
 *    pair is reported only from the band holding the larger of the two mins on the band axis (a
 *    point of both intervals: exactly once). Candidates then grow linearly (27 k → 285 k, pile).
 *    The order itself stays one list carried from step to step; bands are rebuilt each call, O(n).
 *    Bodies unbounded on the band axis (planes) or over 16 bands wide are tested against all.
 *    bandWidth: 0 gives the single sweep.
 *  - A body infinite along the sweep axis (min −∞) sorts first and its max +∞ reaches every other
 *    body of its band: it is tested against all of them (on that axis it overlaps all of them).
 *  - A NaN bound is sorted as +∞, so it does not break the order for the others; pairs of such a body
 *    are unspecified.
 *
 * Measurements (scripts/bench-broadphase.ts; 2-core VM, AMD EPYC, Node 20, shared with other jobs
 * (load ~3–6), so figures vary by up to 2× between runs at 10k; ms per update(), median over the
 * timed steps after warm-up; boxes of half extents 0.1–0.5 m, margin 0.02, all dynamic, plus one
 * static ground plane; pile: 10 layers of columns on a square footprint, each body trembling by
 * 0.1 mm a step; moving: ~8% volume fraction, up to 5 m/s and 3 rad/s, 1/60 s steps; shuffled:
 * every body placed anew each step). One run (the quietest of five):
 *
 *   scene      bodies   pairs    SAP (bands)   SAP (1 sweep)   grid    brute force   shapeAabb (all)
 *   pile        1 001    2 055      0.51          0.61          0.59       1.8          0.02
 *   moving      1 001    2 179      0.41          0.56          0.64       2.9          0.02
 *   shuffled    1 001    2 346      0.50          0.65          0.63       2.9          0.02
 *   pile       10 001   20 079      4.6          16.0           6.9      147            0.26
 *   moving     10 001   24 044      6.9          16.0           7.6      296            0.52
 *   shuffled   10 001   23 771     11.1          29.5          10.3      396            0.49
 *
 * Over five runs, SAP (bands) at 10k: pile 4.6–9.7, moving 6.9–15, shuffled 9.4–15 ms; the grid
 * 6.9–16, 7.6–18, 10–19 ms; at 1k every figure within ±5%. Insertion-sort shifts per step: pile
 * 12 (1k) and 480 (10k), moving 1.1 k and 53 k; shuffled falls back to the merge sort every step.
 * Putting the pairs in (i, j) order (PairList.canonicalise) costs ~0.4 ms of the 10k figures.
 *
 * The choice: sweep and prune in bands is the default. In every run it was the fastest on the
 * coherent scenes (pile 1.15–1.9×, moving 1.1–1.6× faster than the grid; 30–50× faster than brute
 * force at 10k, 3.5–7× at 1k), and it ties the grid on incoherent motion (its sort falls back to a
 * merge sort). It needs no tuned cell size: in trials the grid's best cell edge differed between the
 * pile and the moving scene (1× vs 1.5× the mean box size), while band widths from 1 to 2 mean
 * extents changed SAP's time by at most ~25%. Infinite planes need no special path on the sweep
 * axis, and the order is carried from step to step. The single sweep is kept (bandWidth: 0); the
 * grid stays for comparison.
 */

const NO_STATIC = new Uint8Array(0);

/** The broad phase's interface: call update each step, then read pairs[0 .. 2·pairCount). */
export interface BroadPhase {
  /**
   * aabbs: 6 numbers per body (min x y z, max x y z, aabb.ts), bodies 0..count-1. isStatic: optional,
   * one flag per body (length ≥ count); a pair of two static bodies is not reported.
   */
  update(aabbs: Float64Array, count: number, isStatic?: Uint8Array): void;
  /** 2 per pair (i, j), i < j, pairs ascending by (i, j); entries past 2·pairCount are stale. */
  readonly pairs: Int32Array;
  readonly pairCount: number;
}

/** Closed-box overlap of bodies i and j (the definition every broad phase here follows). */
export function aabbOverlap(a: Float64Array, i: number, j: number): boolean {
  const oi = 6 * i, oj = 6 * j;
  return (
    a[oi] <= a[oj + 3] && a[oj] <= a[oi + 3] &&
    a[oi + 1] <= a[oj + 4] && a[oj + 1] <= a[oi + 4] &&
    a[oi + 2] <= a[oj + 5] && a[oj + 2] <= a[oi + 5]
  );
}

/** Every overlapping pair by testing all n(n−1)/2 (the reference); ascending (i, j), i < j. */
export function bruteForcePairs(aabbs: Float64Array, count: number, isStatic: Uint8Array = NO_STATIC): Int32Array {
  const out: number[] = [];
  const hasStatic = isStatic.length > 0;
  for (let i = 0; i < count; i++) {
    const si = hasStatic && isStatic[i] !== 0;
    for (let j = i + 1; j < count; j++) {
      if (si && isStatic[j] !== 0) continue;
      if (aabbOverlap(aabbs, i, j)) out.push(i, j);
    }
  }
  return Int32Array.from(out);
}

// ---- shared: the pair buffer and its canonical order ---------------------------------------------

/** A growable list of pairs put in ascending (i, j) order by two counting sorts. */
class PairList {
  pairs = new Int32Array(256);
  count = 0;
  private tmp = new Int32Array(256);
  private counts = new Int32Array(64);

  clear(): void {
    this.count = 0;
  }

  /** adds (min(a, b), max(a, b)) */
  push(a: number, b: number): void {
    let p = this.pairs;
    const k = 2 * this.count;
    if (k + 2 > p.length) {
      const q = new Int32Array(p.length * 2);
      q.set(p);
      this.pairs = p = q;
    }
    if (a < b) {
      p[k] = a;
      p[k + 1] = b;
    } else {
      p[k] = b;
      p[k + 1] = a;
    }
    this.count++;
  }

  /**
   * Sorts pairs by (first, second), ids in [0, n): LSD radix with two stable counting sorts, by the
   * second id then by the first. O(n + pairs).
   */
  canonicalise(n: number): void {
    const m = this.count;
    if (m < 2) return;
    if (this.tmp.length < 2 * m) this.tmp = new Int32Array(this.pairs.length);
    if (this.counts.length < n + 1) this.counts = new Int32Array(Math.max(n + 1, 2 * this.counts.length));
    this.countingSort(this.pairs, this.tmp, m, n, 1);
    this.countingSort(this.tmp, this.pairs, m, n, 0);
  }

  /** stable counting sort of the m pairs of src into dst by component c (0: first, 1: second) */
  private countingSort(src: Int32Array, dst: Int32Array, m: number, n: number, c: number): void {
    const cnt = this.counts;
    cnt.fill(0, 0, n + 1);
    for (let k = 0; k < m; k++) cnt[src[2 * k + c] + 1]++;
    for (let v = 0; v < n; v++) cnt[v + 1] += cnt[v];
    for (let k = 0; k < m; k++) {
      const d = 2 * cnt[src[2 * k + c]]++;
      dst[d] = src[2 * k];
      dst[d + 1] = src[2 * k + 1];
    }
  }
}

// ---- sweep and prune ------------------------------------------------------------------------------

export interface SweepAndPruneOptions {
  /** sweep along this axis always (0 x, 1 y, 2 z); default: chosen from the spread of the boxes */
  axis?: 0 | 1 | 2;
  /**
   * width of the bands (a multiple of the boxes' mean extent along the band axis); 0: one sweep
   * over all bodies, no bands
   */
  bandWidth?: number;
}

const DEFAULT_BAND_WIDTH = 1.5;
const MAX_BANDS = 4096;
/** a body over more bands than this is tested against all bodies instead */
const MAX_BAND_SPAN = 16;

/** What the last update did (for measurements and tests). */
export interface SweepStats {
  axis: number;
  /** element shifts of the insertion sort */
  shifts: number;
  /** whether the order was (re)built by merge sort: first call, axis switch, or too many shifts */
  fullSort: boolean;
  /** boxes tested on the two other axes (overlapping on the sweep axis) */
  candidates: number;
  /** bands swept (1: a single sweep) */
  bands: number;
}

export class SweepAndPrune implements BroadPhase {
  private readonly fixedAxis: number;
  private axis = -1;
  /** bodies sorted by their min on `axis`; n of them */
  private order = new Int32Array(64);
  private n = 0;
  /** keys[k] = min on `axis` of order[k] */
  private keys = new Float64Array(64);
  /** in sorted order: min and max on the two other axes (4 each), and the max on `axis` */
  private sorted = new Float64Array(4 * 64);
  private maxs = new Float64Array(64);
  private tmpOrder = new Int32Array(64);
  private tmpKeys = new Float64Array(64);
  private readonly list = new PairList();
  private readonly variance = new Float64Array(3);
  private readonly bandWidthFactor: number;
  private bandOrigin = 0;
  private bandInv = 1;
  private bandStart = new Int32Array(64);
  private bandFill = new Int32Array(64);
  private bandEntries = new Int32Array(256);
  private wideMark = new Uint8Array(64);
  readonly stats: SweepStats = { axis: -1, shifts: 0, fullSort: false, candidates: 0, bands: 1 };

  constructor(options: SweepAndPruneOptions = {}) {
    this.fixedAxis = options.axis ?? -1;
    this.bandWidthFactor = options.bandWidth ?? DEFAULT_BAND_WIDTH;
  }

  get pairs(): Int32Array {
    return this.list.pairs;
  }

  get pairCount(): number {
    return this.list.count;
  }

  update(aabbs: Float64Array, count: number, isStatic: Uint8Array = NO_STATIC): void {
    if (aabbs.length < 6 * count) throw new RangeError(`SweepAndPrune: ${count} bodies need ${6 * count} bounds, got ${aabbs.length}`);
    if (isStatic.length > 0 && isStatic.length < count) throw new RangeError(`SweepAndPrune: isStatic has ${isStatic.length} flags for ${count} bodies`);
    this.reserve(count);
    const order = this.order, keys = this.keys;

    // bodies removed: drop them from the order, keeping it
    if (count < this.n) {
      let w = 0;
      for (let k = 0; k < this.n; k++) if (order[k] < count) order[w++] = order[k];
      this.n = w;
    }
    const old = this.n;

    const axis = this.chooseAxis(aabbs, count);
    let full = axis !== this.axis;
    this.axis = axis;

    // keys of the bodies already sorted, then insertion sort from the previous order
    let shifts = 0;
    for (let k = 0; k < old; k++) keys[k] = key(aabbs[6 * order[k] + axis]);
    if (!full) {
      const budget = 2 * old * Math.ceil(Math.log2(old + 1)) + 16;
      for (let k = 1; k < old; k++) {
        const kk = keys[k];
        if (keys[k - 1] <= kk) continue;
        const b = order[k];
        let p = k - 1;
        // shift the larger keys up one (strict >: equal keys keep their order, a stable sort)
        while (p >= 0 && keys[p] > kk) {
          keys[p + 1] = keys[p];
          order[p + 1] = order[p];
          p--;
        }
        keys[p + 1] = kk;
        order[p + 1] = b;
        shifts += k - 1 - p;
        if (shifts > budget) {
          full = true;
          break;
        }
      }
    }
    if (full) this.mergeSort(0, old);

    // bodies added: sort them among themselves, then merge the two runs
    if (count > old) {
      for (let b = old; b < count; b++) {
        order[b] = b;
        keys[b] = key(aabbs[6 * b + axis]);
      }
      this.mergeSort(old, count);
      this.merge(0, old, count);
    }
    this.n = count;

    // gather, in sorted order, each box's max on the axis and its bounds on the other two axes
    // (the sweep then reads memory in sequence)
    const a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
    const s = this.sorted, maxs = this.maxs;
    for (let k = 0; k < count; k++) {
      const o = 6 * order[k], d = 4 * k;
      maxs[k] = aabbs[o + 3 + axis];
      s[d] = aabbs[o + a1];
      s[d + 1] = aabbs[o + 3 + a1];
      s[d + 2] = aabbs[o + a2];
      s[d + 3] = aabbs[o + 3 + a2];
    }

    const list = this.list;
    list.clear();
    const hasStatic = isStatic.length > 0;
    // bands along the axis of next largest spread, when that makes several
    const va1 = this.variance[a1], va2 = this.variance[a2];
    const bandSlot = va1 >= va2 ? 0 : 2; // the band axis's place in `sorted` (a1: 0, a2: 2)
    const bands = this.bandWidthFactor > 0 ? this.planBands(count, bandSlot) : 1;
    let candidates: number;
    if (bands > 1) candidates = this.sweepBands(count, bands, bandSlot, isStatic);
    else {
      // sweep: i against the later bodies whose min ≤ i's max on the axis (they overlap i there,
      // since their min ≥ i's min), then the other two axes
      candidates = 0;
      for (let p = 0; p < count; p++) {
        const d = 4 * p;
        const hi = maxs[p];
        const lo1 = s[d], hi1 = s[d + 1], lo2 = s[d + 2], hi2 = s[d + 3];
        const i = order[p];
        const si = hasStatic && isStatic[i] !== 0;
        let q = p + 1;
        for (; q < count && keys[q] <= hi; q++) {
          const e = 4 * q;
          if (s[e] <= hi1 && lo1 <= s[e + 1] && s[e + 2] <= hi2 && lo2 <= s[e + 3]) {
            const j = order[q];
            if (si && isStatic[j] !== 0) continue;
            list.push(i, j);
          }
        }
        candidates += q - p - 1;
      }
    }
    this.stats.bands = bands;
    list.canonicalise(count);
    this.stats.axis = axis;
    this.stats.shifts = shifts;
    this.stats.fullSort = full;
    this.stats.candidates = candidates;
  }

  /**
   * After update(): the bodies `grown[0..k)` have had their boxes in `aabbs` enlarged (each new box ⊇ its
   * box at update(), whose bounds are `old[6 t ..]` for grown[t]); adds the pairs the enlargement makes
   * (new boxes overlap, boxes at update() did not: so no pair twice), keeping the canonical order.
   * Only the grown bodies are looked at (collision/pipeline.ts: the strike speeds): each against the
   * bodies of the sorted order whose min on the axis lies within [new min − widest extent, new max],
   * plus the ones unbounded there, and the grown ones among themselves. Returns the pairs added.
   */
  addGrown(aabbs: Float64Array, count: number, grown: Int32Array, k: number, old: Float64Array, isStatic: Uint8Array = NO_STATIC): number {
    if (k === 0) return 0;
    const keys = this.keys, maxs = this.maxs, order = this.order, list = this.list, axis = this.axis;
    const hasStatic = isStatic.length > 0;
    const before = list.count;
    const mark = this.wideMark.length >= count ? this.wideMark : (this.wideMark = new Uint8Array(this.order.length));
    for (let t = 0; t < k; t++) mark[grown[t]] = 1;
    // the widest finite extent on the axis among the boxes at update() (the grown ones are skipped
    // below); the unbounded ones (min −∞ sort first, or max +∞) are scanned in full
    let widest = 0, unbounded = 0;
    const scratch = this.tmpOrder;
    for (let q = 0; q < count; q++) {
      const ext = maxs[q] - keys[q];
      if (!(ext < Infinity)) scratch[unbounded++] = q;
      else if (ext > widest) widest = ext;
    }
    for (let t = 0; t < k; t++) {
      const g = grown[t], og = 6 * g, ot = 6 * t;
      const sg = hasStatic && isStatic[g] !== 0;
      const lo = aabbs[og + axis] - widest, hi = aabbs[og + 3 + axis];
      // first q with keys[q] ≥ lo
      let a = 0, b = count;
      while (a < b) {
        const m = (a + b) >> 1;
        if (keys[m] < lo) a = m + 1;
        else b = m;
      }
      for (let u = -unbounded; ; u++) {
        let q: number;
        if (u < 0) q = scratch[u + unbounded];
        else {
          q = a + u;
          if (q >= count || keys[q] > hi) break;
          if (!(maxs[q] - keys[q] < Infinity)) continue; // scanned with the unbounded ones
        }
        const j = order[q];
        if (mark[j] !== 0) continue; // grown: among themselves below
        if (sg && isStatic[j] !== 0) continue;
        if (aabbOverlap(aabbs, g, j) && !overlapOld(old, ot, aabbs, 6 * j)) list.push(g, j);
      }
    }
    for (let t = 0; t < k; t++) {
      const g = grown[t];
      for (let r = t + 1; r < k; r++) {
        const f = grown[r];
        if (hasStatic && isStatic[g] !== 0 && isStatic[f] !== 0) continue;
        if (aabbOverlap(aabbs, g, f) && !overlapOld(old, 6 * t, old, 6 * r)) list.push(g, f);
      }
    }
    for (let t = 0; t < k; t++) mark[grown[t]] = 0;
    const added = list.count - before;
    if (added > 0) list.canonicalise(count);
    return added;
  }

  /**
   * Bands along the band axis (its place `slot` in this.sorted): width bandWidthFactor × the mean
   * extent of the finite boxes along it, from the lowest finite min, widened if that made more than
   * min(count, 4096) bands. Returns the number of bands (1: none worth having).
   */
  private planBands(count: number, slot: number): number {
    const s = this.sorted;
    let m = 0, sum = 0, lo = Infinity, hi = -Infinity;
    for (let k = 0; k < count; k++) {
      const a = s[4 * k + slot], b = s[4 * k + slot + 1];
      if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
      m++;
      sum += b - a;
      if (a < lo) lo = a;
      if (b > hi) hi = b;
    }
    if (m < 2) return 1;
    let w = (this.bandWidthFactor * sum) / m;
    if (!(w > 0) || !Number.isFinite(hi - lo)) return 1;
    const cap = Math.min(count, MAX_BANDS);
    if ((hi - lo) / w > cap) w = (hi - lo) / cap; // wider bands rather than more than cap
    this.bandOrigin = lo;
    this.bandInv = 1 / w;
    const bands = Math.min(Math.floor((hi - lo) / w) + 1, cap);
    if (bands > 1 && this.bandStart.length < bands + 1) this.bandStart = new Int32Array(Math.max(bands + 1, 2 * this.bandStart.length));
    return bands;
  }

  /**
   * The sweep within bands: each finite body is entered, in sorted order, in the bands its interval
   * on the band axis touches (so each band's list is sorted too), and swept there against the later
   * bodies of the band; a pair is reported only from the band holding max(min_i, min_j) on the band
   * axis (inside both intervals, so both bodies are in that band: exactly once). Bodies unbounded on
   * the band axis or spanning over 16 bands are tested against every body. Returns the candidates.
   */
  private sweepBands(count: number, bands: number, slot: number, isStatic: Uint8Array): number {
    const s = this.sorted, keys = this.keys, maxs = this.maxs, order = this.order, list = this.list;
    const hasStatic = isStatic.length > 0;
    const origin = this.bandOrigin, inv = this.bandInv, last = bands - 1;
    const start = this.bandStart;
    if (this.wideMark.length < count) this.wideMark = new Uint8Array(this.order.length);
    const wide = this.wideMark;
    start.fill(0, 0, bands + 1);
    let nWide = 0, entries = 0;
    for (let k = 0; k < count; k++) {
      const a = s[4 * k + slot], b = s[4 * k + slot + 1];
      const b0 = Math.min(last, Math.max(0, Math.floor((a - origin) * inv)));
      const b1 = Math.min(last, Math.max(0, Math.floor((b - origin) * inv)));
      // not finite (NaN, ±∞ bounds give NaN or an out-of-range span) or too wide
      if (!(b1 - b0 < MAX_BAND_SPAN) || !Number.isFinite(a) || !Number.isFinite(b)) {
        wide[k] = 1;
        nWide++;
        continue;
      }
      for (let c = b0; c <= b1; c++) start[c + 1]++;
      entries += b1 - b0 + 1;
    }
    for (let c = 0; c < bands; c++) start[c + 1] += start[c];
    if (this.bandEntries.length < entries) this.bandEntries = new Int32Array(Math.max(entries, 2 * this.bandEntries.length));
    const ent = this.bandEntries;
    const fill = this.bandFill.length >= bands ? this.bandFill : (this.bandFill = new Int32Array(this.bandStart.length));
    fill.set(start.subarray(0, bands));
    for (let k = 0; k < count; k++) {
      if (wide[k] !== 0) continue;
      const b0 = Math.min(last, Math.max(0, Math.floor((s[4 * k + slot] - origin) * inv)));
      const b1 = Math.min(last, Math.max(0, Math.floor((s[4 * k + slot + 1] - origin) * inv)));
      for (let c = b0; c <= b1; c++) ent[fill[c]++] = k;
    }

    let candidates = 0;
    for (let c = 0; c < bands; c++) {
      const end = start[c + 1];
      for (let u = start[c]; u < end; u++) {
        const p = ent[u], d = 4 * p;
        const hi = maxs[p];
        const lo1 = s[d], hi1 = s[d + 1], lo2 = s[d + 2], hi2 = s[d + 3];
        const i = order[p];
        const si = hasStatic && isStatic[i] !== 0;
        let v = u + 1;
        for (; v < end; v++) {
          const q = ent[v];
          if (keys[q] > hi) break;
          const e = 4 * q;
          if (s[e] <= hi1 && lo1 <= s[e + 1] && s[e + 2] <= hi2 && lo2 <= s[e + 3]) {
            // report from the band of the larger min only
            const mb = Math.max(s[d + slot], s[e + slot]);
            if (Math.min(last, Math.max(0, Math.floor((mb - origin) * inv))) !== c) continue;
            const j = order[q];
            if (si && isStatic[j] !== 0) continue;
            list.push(i, j);
          }
        }
        candidates += v - u - 1;
      }
    }

    // wide bodies against all; a wide–wide pair once, from the earlier in the order
    if (nWide > 0) {
      for (let p = 0; p < count; p++) {
        if (wide[p] === 0) continue;
        const d = 4 * p;
        const lo = keys[p], hi = maxs[p];
        const lo1 = s[d], hi1 = s[d + 1], lo2 = s[d + 2], hi2 = s[d + 3];
        const i = order[p];
        const si = hasStatic && isStatic[i] !== 0;
        for (let q = 0; q < count; q++) {
          if (q === p || (wide[q] !== 0 && q < p)) continue;
          const e = 4 * q;
          if (keys[q] <= hi && lo <= maxs[q] && s[e] <= hi1 && lo1 <= s[e + 1] && s[e + 2] <= hi2 && lo2 <= s[e + 3]) {
            const j = order[q];
            if (si && isStatic[j] !== 0) continue;
            list.push(i, j);
          }
        }
        candidates += count - 1;
      }
      wide.fill(0, 0, count);
    }
    return candidates;
  }

  /**
   * The axis of largest variance of the finite boxes' centres, switched only when 1.5× better; also
   * leaves the variances (times the number of finite boxes) in this.variance.
   */
  private chooseAxis(aabbs: Float64Array, count: number): number {
    let m = 0, sx = 0, sy = 0, sz = 0, sxx = 0, syy = 0, szz = 0;
    for (let b = 0; b < count; b++) {
      const o = 6 * b;
      const x = 0.5 * (aabbs[o] + aabbs[o + 3]), y = 0.5 * (aabbs[o + 1] + aabbs[o + 4]), z = 0.5 * (aabbs[o + 2] + aabbs[o + 5]);
      if (!Number.isFinite(x + y + z) || !Number.isFinite(aabbs[o] - aabbs[o + 3] + aabbs[o + 1] - aabbs[o + 4] + aabbs[o + 2] - aabbs[o + 5])) continue;
      m++;
      sx += x; sy += y; sz += z;
      sxx += x * x; syy += y * y; szz += z * z;
    }
    const v = this.variance;
    // n·variance = Σx² − (Σx)²/n
    v[0] = m > 0 ? sxx - (sx * sx) / m : 0;
    v[1] = m > 0 ? syy - (sy * sy) / m : 0;
    v[2] = m > 0 ? szz - (sz * sz) / m : 0;
    if (this.fixedAxis >= 0) return this.fixedAxis;
    if (m < 2) return this.axis < 0 ? 0 : this.axis;
    let best = 0;
    if (v[1] > v[best]) best = 1;
    if (v[2] > v[best]) best = 2;
    if (this.axis < 0) return best;
    return v[best] > 1.5 * v[this.axis] ? best : this.axis;
  }

  private reserve(count: number): void {
    if (this.order.length >= count) return;
    const cap = Math.max(count, 2 * this.order.length);
    const order = new Int32Array(cap);
    order.set(this.order.subarray(0, this.n));
    this.order = order;
    this.keys = new Float64Array(cap);
    this.sorted = new Float64Array(4 * cap);
    this.maxs = new Float64Array(cap);
    this.tmpOrder = new Int32Array(cap);
    this.tmpKeys = new Float64Array(cap);
  }

  /** stable sort of order/keys [lo, hi) by key: insertion sort of runs of 16, then bottom-up merges */
  private mergeSort(lo: number, hi: number): void {
    const keys = this.keys, order = this.order;
    const RUN = 16;
    for (let a = lo; a < hi; a += RUN) {
      const b = Math.min(a + RUN, hi);
      for (let k = a + 1; k < b; k++) {
        const kk = keys[k], v = order[k];
        let p = k - 1;
        while (p >= a && keys[p] > kk) {
          keys[p + 1] = keys[p];
          order[p + 1] = order[p];
          p--;
        }
        keys[p + 1] = kk;
        order[p + 1] = v;
      }
    }
    for (let width = RUN; width < hi - lo; width *= 2) {
      for (let a = lo; a + width < hi; a += 2 * width) this.merge(a, a + width, Math.min(a + 2 * width, hi));
    }
  }

  /** merges the sorted runs [lo, mid) and [mid, hi) of order/keys (stable: ties from the left run first) */
  private merge(lo: number, mid: number, hi: number): void {
    const keys = this.keys, order = this.order;
    if (mid <= lo || mid >= hi || keys[mid - 1] <= keys[mid]) return;
    const tk = this.tmpKeys, to = this.tmpOrder;
    const nl = mid - lo;
    for (let k = 0; k < nl; k++) {
      tk[k] = keys[lo + k];
      to[k] = order[lo + k];
    }
    let a = 0, b = mid, w = lo;
    while (a < nl && b < hi) {
      if (keys[b] < tk[a]) {
        keys[w] = keys[b];
        order[w++] = order[b++];
      } else {
        keys[w] = tk[a];
        order[w++] = to[a++];
      }
    }
    while (a < nl) {
      keys[w] = tk[a];
      order[w++] = to[a++];
    }
  }
}

/** closed-box overlap of the boxes at a[oa..] and b[ob..] (aabbOverlap's test) */
function overlapOld(a: Float64Array, oa: number, b: Float64Array, ob: number): boolean {
  return a[oa] <= b[ob + 3] && b[ob] <= a[oa + 3] && a[oa + 1] <= b[ob + 4] && b[ob + 1] <= a[oa + 4] && a[oa + 2] <= b[ob + 5] && b[ob + 2] <= a[oa + 5];
}

/** the sort key of a bound: NaN as +∞, so that the order stays a total order */
function key(v: number): number {
  return v === v ? v : Infinity;
}

// ---- hashed uniform grid (for comparison) --------------------------------------------------------

export interface HashGridOptions {
  /** cell edge, m; default: 1.5 × the mean largest side of the finite boxes, each call */
  cellSize?: number;
}

/**
 * Each finite box is entered in every cell of edge h it touches (cells hashed into a table of
 * ~2n buckets); two boxes are tested when they share a bucket, and a pair is reported only from the
 * cell holding the min corner of the two boxes' intersection (inside both boxes, so both are in that
 * cell: exactly once). Boxes with an infinite bound, or spanning more than 64 cells, are tested
 * against every other body. Rebuilt from scratch each call: nothing carried over.
 */
export class HashGrid implements BroadPhase {
  private readonly fixedCell: number;
  private readonly list = new PairList();
  private entryBody = new Int32Array(256);
  private entryCell = new Int32Array(3 * 256);
  private entryBucket = new Int32Array(256);
  private sortedEntry = new Int32Array(256);
  private bucketStart = new Int32Array(64);
  private big = new Int32Array(64);
  private isBig = new Uint8Array(64);
  cellSize = 0;

  constructor(options: HashGridOptions = {}) {
    this.fixedCell = options.cellSize ?? 0;
  }

  get pairs(): Int32Array {
    return this.list.pairs;
  }

  get pairCount(): number {
    return this.list.count;
  }

  update(aabbs: Float64Array, count: number, isStatic: Uint8Array = NO_STATIC): void {
    const hasStatic = isStatic.length > 0;
    let h = this.fixedCell;
    if (!(h > 0)) {
      let sum = 0, m = 0;
      for (let b = 0; b < count; b++) {
        const o = 6 * b;
        const s = Math.max(aabbs[o + 3] - aabbs[o], aabbs[o + 4] - aabbs[o + 1], aabbs[o + 5] - aabbs[o + 2]);
        if (Number.isFinite(s)) {
          sum += s;
          m++;
        }
      }
      h = m > 0 && sum > 0 ? (1.5 * sum) / m : 1;
    }
    this.cellSize = h;
    const inv = 1 / h;
    const buckets = nextPow2(Math.max(16, 2 * count));
    const mask = buckets - 1;
    if (this.bucketStart.length < buckets + 1) this.bucketStart = new Int32Array(buckets + 1);
    if (this.big.length < count) {
      this.big = new Int32Array(Math.max(count, 2 * this.big.length));
      this.isBig = new Uint8Array(this.big.length);
    }
    const isBig = this.isBig;

    // entries: (body, cell) for every cell a finite box touches
    let ne = 0, nbig = 0;
    for (let b = 0; b < count; b++) {
      const o = 6 * b;
      const x0 = Math.floor(aabbs[o] * inv), y0 = Math.floor(aabbs[o + 1] * inv), z0 = Math.floor(aabbs[o + 2] * inv);
      const x1 = Math.floor(aabbs[o + 3] * inv), y1 = Math.floor(aabbs[o + 4] * inv), z1 = Math.floor(aabbs[o + 5] * inv);
      const cells = (x1 - x0 + 1) * (y1 - y0 + 1) * (z1 - z0 + 1);
      // infinite, NaN, huge, or beyond the range of cell indices (Int32): against everyone
      if (!(cells <= 64 && x0 >= -CELL_LIMIT && y0 >= -CELL_LIMIT && z0 >= -CELL_LIMIT && x1 <= CELL_LIMIT && y1 <= CELL_LIMIT && z1 <= CELL_LIMIT)) {
        this.big[nbig++] = b;
        isBig[b] = 1;
        continue;
      }
      this.reserveEntries(ne + cells);
      for (let x = x0; x <= x1; x++)
        for (let y = y0; y <= y1; y++)
          for (let z = z0; z <= z1; z++) {
            this.entryBody[ne] = b;
            this.entryCell[3 * ne] = x;
            this.entryCell[3 * ne + 1] = y;
            this.entryCell[3 * ne + 2] = z;
            this.entryBucket[ne] = hashCell(x, y, z) & mask;
            ne++;
          }
    }

    // counting sort of the entries by bucket
    const start = this.bucketStart;
    start.fill(0, 0, buckets + 1);
    for (let e = 0; e < ne; e++) start[this.entryBucket[e] + 1]++;
    for (let k = 0; k < buckets; k++) start[k + 1] += start[k];
    if (this.sortedEntry.length < ne) this.sortedEntry = new Int32Array(this.entryBody.length);
    const se = this.sortedEntry;
    for (let e = 0; e < ne; e++) se[start[this.entryBucket[e]]++] = e;
    // start[k] is now the end of bucket k; bucket k is [start[k−1], start[k])

    const list = this.list;
    list.clear();
    const cell = this.entryCell, body = this.entryBody;
    let from = 0;
    for (let k = 0; k < buckets; k++) {
      const to = start[k];
      for (let u = from; u < to; u++) {
        const eu = se[u], i = body[eu];
        const cx = cell[3 * eu], cy = cell[3 * eu + 1], cz = cell[3 * eu + 2];
        const si = hasStatic && isStatic[i] !== 0;
        const oi = 6 * i;
        for (let v = u + 1; v < to; v++) {
          const ev = se[v];
          if (cell[3 * ev] !== cx || cell[3 * ev + 1] !== cy || cell[3 * ev + 2] !== cz) continue; // another cell, same bucket
          const j = body[ev];
          if (si && isStatic[j] !== 0) continue;
          if (!aabbOverlap(aabbs, i, j)) continue;
          const oj = 6 * j;
          // report from the cell of the intersection's min corner only
          if (Math.floor(Math.max(aabbs[oi], aabbs[oj]) * inv) !== cx) continue;
          if (Math.floor(Math.max(aabbs[oi + 1], aabbs[oj + 1]) * inv) !== cy) continue;
          if (Math.floor(Math.max(aabbs[oi + 2], aabbs[oj + 2]) * inv) !== cz) continue;
          list.push(i, j);
        }
      }
      from = to;
    }

    // the big boxes against everything; a big–big pair once, from the lower-numbered one
    for (let t = 0; t < nbig; t++) {
      const i = this.big[t];
      const si = hasStatic && isStatic[i] !== 0;
      for (let j = 0; j < count; j++) {
        if (j === i || (isBig[j] !== 0 && j < i)) continue;
        if (si && isStatic[j] !== 0) continue;
        if (aabbOverlap(aabbs, i, j)) list.push(i, j);
      }
    }
    for (let t = 0; t < nbig; t++) isBig[this.big[t]] = 0;
    list.canonicalise(count);
  }

  private reserveEntries(n: number): void {
    if (this.entryBody.length >= n) return;
    const cap = Math.max(n, 2 * this.entryBody.length);
    const b = new Int32Array(cap), c = new Int32Array(3 * cap), k = new Int32Array(cap);
    b.set(this.entryBody);
    c.set(this.entryCell);
    k.set(this.entryBucket);
    this.entryBody = b;
    this.entryCell = c;
    this.entryBucket = k;
  }
}

const CELL_LIMIT = 1 << 30;

function hashCell(x: number, y: number, z: number): number {
  return (Math.imul(x, 73856093) ^ Math.imul(y, 19349663) ^ Math.imul(z, 83492791)) >>> 0;
}

function nextPow2(v: number): number {
  let p = 1;
  while (p < v) p <<= 1;
  return p;
}
