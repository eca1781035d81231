/**
 * WGSL kernels of the GPU broad phase (gpu-broadphase.ts has the design, the invariants and the
 * measurements). Each kernel is its own module declaring only the buffers it binds (≤ 6 storage
 * buffers: WebGPU's default is 8 per stage); every record's struct text comes from gpu/layout.ts.
 *
 * Buffers (n = params.count bodies, B = params.mask + 1 buckets):
 *   aabbs[n]      BodyAabb: lo, hi (f32; |bound| ≥ 1e30 means unbounded), flags bit 0 = inactive
 *   slot[n]       vec2u: (bucket, rank in bucket) of a small body; (BIG, index in big) of a big one
 *   buckets[B+1]  counts per bucket (bp_assign), then their exclusive scan = each bucket's first entry;
 *                 buckets[B] = the number of small bodies
 *   entries[n]    GridEntry: the small bodies' boxes in bucket order (counting sort)
 *   big[n]        the big bodies (unbounded, or spanning more than 2 cells on an axis)
 *   joints[..]    CSR of jointed pairs: joints[0..n] offsets, joints[n+1+k] the partners; body i's
 *                 list holds only partners j > i
 *   counters      [PAIRS, BIG] (atomic appends)
 *   pairs[cap]    BodyPair (a < b); counters[PAIRS] may exceed cap: counted, not written (overflow)
 */
import { defineRecord } from '../gpu/layout.js';
import { THREAD_INDEX_WGSL, kernelEntry } from '../gpu/dispatch.js';

export const BodyAabbRecord = defineRecord('BodyAabb', [
  ['lo', 'vec3f', 'min corner, m (≤ −1e30: unbounded below)'],
  ['flags', 'u32', 'bit 0: inactive (fixed or asleep)'],
  ['hi', 'vec3f', 'max corner, m (≥ 1e30: unbounded above)'],
  ['pad', 'u32'],
] as const);

export const GridEntryRecord = defineRecord('GridEntry', [
  ['lo', 'vec3f'],
  ['body', 'u32', 'body index'],
  ['hi', 'vec3f'],
  ['flags', 'u32', 'the body flags'],
] as const);

export const BodyPairRecord = defineRecord('BodyPair', [
  ['a', 'u32', 'the lower body index'],
  ['b', 'u32', 'the higher'],
] as const);

export const BroadParamsRecord = defineRecord('BroadParams', [
  ['count', 'u32', 'bodies'],
  ['mask', 'u32', 'buckets − 1 (a power of two less one)'],
  ['capacity', 'u32', 'pairs the pair buffer holds'],
  ['inv_cell', 'f32', '1 / cell edge, 1/m'],
] as const);

/** counters[PAIRS]: pairs found (may exceed the capacity); counters[BIG]: bodies on the big list */
export const COUNTER_PAIRS = 0;
export const COUNTER_BIG = 1;
/** slot.x of a body on the big list */
export const BIG_MARK = 0xffffffff;
/** a bound at or beyond this magnitude is unbounded (packAabbs writes ±3.4e38 for ±∞) */
export const UNBOUNDED = 1e30;

/** closed boxes: touching boxes overlap (broadphase.ts aabbOverlap) */
export const BOXES_OVERLAP_WGSL = /* wgsl */ `
fn boxes_overlap(alo: vec3f, ahi: vec3f, blo: vec3f, bhi: vec3f) -> bool {
  return all(alo <= bhi) && all(blo <= ahi);
}
`;

const common = /* wgsl */ `
${BroadParamsRecord.wgsl}
@group(0) @binding(0) var<uniform> params: BroadParams;
const BIG_MARK: u32 = ${BIG_MARK}u;
const COUNTER_PAIRS: u32 = ${COUNTER_PAIRS}u;
const COUNTER_BIG: u32 = ${COUNTER_BIG}u;
// cell of a point: ⌊p / h⌋ per axis, clamped to ±2³⁰ (monotone: see gpu-broadphase.ts, f32 rounding)
fn cell_of(p: vec3f) -> vec3i {
  return vec3i(clamp(floor(p * params.inv_cell), vec3f(-1073741824.0), vec3f(1073741824.0)));
}
// small: bounded, and spanning at most two cells on each axis (so overlapping small boxes' min-corner
// cells differ by at most one on each axis: the 27-cell neighbourhood holds every partner)
fn is_small(lo: vec3f, hi: vec3f) -> bool {
  if (!(all(abs(lo) < vec3f(${UNBOUNDED})) && all(abs(hi) < vec3f(${UNBOUNDED})))) { return false; }
  return all(cell_of(hi) - cell_of(lo) <= vec3i(1));
}
fn bucket_of(c: vec3i) -> u32 {
  let u = bitcast<vec3u>(c);
  return ((u.x * 73856093u) ^ (u.y * 19349663u) ^ (u.z * 83492791u)) & params.mask;
}
${BOXES_OVERLAP_WGSL}
${THREAD_INDEX_WGSL}
`;

/**
 * jointed(i, j), i < j: j in i's partner list; append_pair(i, j). Binds `joints`, `counters`, `pairs`, and reads
 * params.count, params.capacity, COUNTER_PAIRS (also the strike pass's pair kernel: gpu-strike.ts).
 */
export const JOINTED_APPEND_WGSL = /* wgsl */ `
fn jointed(i: u32, j: u32) -> bool {
  let end = joints[i + 1u];
  for (var k = joints[i]; k < end; k++) {
    if (joints[params.count + 1u + k] == j) { return true; }
  }
  return false;
}
fn append_pair(i: u32, j: u32) {
  let k = atomicAdd(&counters[COUNTER_PAIRS], 1u);
  if (k < params.capacity) { pairs[k] = BodyPair(i, j); }
}
`;

export const clearBucketsWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> buckets: array<u32>;
${kernelEntry('bp_clear')} {
  let t = thread_index(gid, nwg);
  if (t <= params.mask + 1u) { buckets[t] = 0u; }
}
`;

export const assignWgsl = /* wgsl */ `${common}
${BodyAabbRecord.wgsl}
@group(0) @binding(1) var<storage, read> aabbs: array<BodyAabb>;
@group(0) @binding(2) var<storage, read_write> slot: array<vec2u>;
@group(0) @binding(3) var<storage, read_write> buckets: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> big: array<u32>;
@group(0) @binding(5) var<storage, read_write> counters: array<atomic<u32>>;
// each body: its min corner's cell, hashed to a bucket, and its rank there (a counting sort's count)
${kernelEntry('bp_assign')} {
  let i = thread_index(gid, nwg);
  if (i >= params.count) { return; }
  let a = aabbs[i];
  if (is_small(a.lo, a.hi)) {
    let b = bucket_of(cell_of(a.lo));
    slot[i] = vec2u(b, atomicAdd(&buckets[b], 1u));
  } else {
    let k = atomicAdd(&counters[COUNTER_BIG], 1u);
    big[k] = i;
    slot[i] = vec2u(BIG_MARK, k);
  }
}
`;

export const scatterWgsl = /* wgsl */ `${common}
${BodyAabbRecord.wgsl}
${GridEntryRecord.wgsl}
@group(0) @binding(1) var<storage, read> aabbs: array<BodyAabb>;
@group(0) @binding(2) var<storage, read> slot: array<vec2u>;
@group(0) @binding(3) var<storage, read> buckets: array<u32>;
@group(0) @binding(4) var<storage, read_write> entries: array<GridEntry>;
// entry of body i = first of its bucket (the scan) + its rank: the bodies in bucket order
${kernelEntry('bp_scatter')} {
  let i = thread_index(gid, nwg);
  if (i >= params.count) { return; }
  let s = slot[i];
  if (s.x == BIG_MARK) { return; }
  let a = aabbs[i];
  entries[buckets[s.x] + s.y] = GridEntry(a.lo, i, a.hi, a.flags);
}
`;

/** the 13 cells after (0, 0, 0) in lexicographic order (dx, dy, dz) > 0: a half of the 26 neighbours */
const halfShell: [number, number, number][] = [];
for (let dx = 0; dx <= 1; dx++)
  for (let dy = -1; dy <= 1; dy++)
    for (let dz = -1; dz <= 1; dz++) if (dx > 0 || (dx === 0 && (dy > 0 || (dy === 0 && dz > 0)))) halfShell.push([dx, dy, dz]);
if (halfShell.length !== 13) throw new Error('half shell');

export const pairsWgsl = /* wgsl */ `${common}
${GridEntryRecord.wgsl}
${BodyPairRecord.wgsl}
@group(0) @binding(1) var<storage, read> buckets: array<u32>;
@group(0) @binding(2) var<storage, read> entries: array<GridEntry>;
@group(0) @binding(3) var<storage, read> joints: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> pairs: array<BodyPair>;
${JOINTED_APPEND_WGSL}
// entry p against the entries of its own cell after it and of the 13 cells of the half shell: a pair
// of small boxes with cells c_p, c_q (|c_q − c_p| ≤ 1 per axis) is met once, from the one whose
// offset to the other is in the half shell, or from the earlier entry when c_p = c_q
${kernelEntry('bp_pairs')} {
  let p = thread_index(gid, nwg);
  if (p >= buckets[params.mask + 1u]) { return; }
  let e = entries[p];
  let c = cell_of(e.lo);
  let shell = array<vec3i, 14>(vec3i(0, 0, 0), ${halfShell.map(([x, y, z]) => `vec3i(${x}, ${y}, ${z})`).join(', ')});
  for (var k = 0u; k < 14u; k++) {
    let cc = c + shell[k];
    let b = bucket_of(cc);
    var q = buckets[b];
    if (k == 0u) { q = p + 1u; }
    let end = buckets[b + 1u];
    for (; q < end; q++) {
      let f = entries[q];
      if (any(cell_of(f.lo) != cc)) { continue; } // another cell hashed to this bucket
      if ((e.flags & f.flags & 1u) != 0u) { continue; } // two inactive bodies
      if (!boxes_overlap(e.lo, e.hi, f.lo, f.hi)) { continue; }
      let i = min(e.body, f.body);
      let j = max(e.body, f.body);
      if (jointed(i, j)) { continue; }
      append_pair(i, j);
    }
  }
}
`;

export const bigWgsl = /* wgsl */ `${common}
${BodyAabbRecord.wgsl}
${BodyPairRecord.wgsl}
@group(0) @binding(1) var<storage, read> aabbs: array<BodyAabb>;
@group(0) @binding(2) var<storage, read> slot: array<vec2u>;
@group(0) @binding(3) var<storage, read> big: array<u32>;
@group(0) @binding(4) var<storage, read> joints: array<u32>;
@group(0) @binding(5) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> pairs: array<BodyPair>;
${JOINTED_APPEND_WGSL}
// thread t = (big body t / n) × (body t mod n), dispatched indirectly (counters[BIG] · n threads);
// a big–big pair once, from the thread whose other body has the higher index
${kernelEntry('bp_big')} {
  let t = thread_index(gid, nwg);
  let n = params.count;
  let k = t / n;
  if (k >= atomicLoad(&counters[COUNTER_BIG])) { return; }
  let i = big[k];
  let j = t - k * n;
  if (j == i) { return; }
  if (slot[j].x == BIG_MARK && j < i) { return; }
  let a = aabbs[i];
  let b = aabbs[j];
  if ((a.flags & b.flags & 1u) != 0u) { return; }
  if (!boxes_overlap(a.lo, a.hi, b.lo, b.hi)) { return; }
  let lo = min(i, j);
  let hi = max(i, j);
  if (jointed(lo, hi)) { return; }
  append_pair(lo, hi);
}
`;
