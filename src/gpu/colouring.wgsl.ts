/**
 * WGSL kernels of the per-frame constraint colouring (gpu/colouring.ts has the design, the invariants
 * and the costs). Each kernel is its own module declaring only the buffers it binds (≤ 8 storage
 * buffers: WebGPU's default per stage); the records' struct text comes from gpu/layout.ts.
 *
 * Buffers (n = counters[N] constraints ≤ capacity, nb = params.body_count bodies, K = params.max_colours):
 *   pairs[..]     the caller's u32 words: constraint i's bodies at pair_stride·i + off_a and + off_b
 *   flags[nb]     the caller's per-body u32: bit 0 = static (fixed: inverse mass 0); an index ≥ nb is
 *                 static too (the world)
 *   count_src[..] the caller's u32 words: the constraint count at word count_word (indirect count)
 *   counters      [N, SURVIVORS_0 .. SURVIVORS_{R−1}, SIZE_0 .. SIZE_K] (atomic appends; gpu/counters.ts)
 *   adj[nb+1+2n]  per body: the count of its constraints (col_init), then their exclusive scan (the
 *                 body's first entry); from word nb+1 on: the constraints of each dynamic body (CSR)
 *   ends[n]       vec2u: the constraint's dynamic bodies (NONE for a static or repeated one)
 *   rank[n]       vec2u: the rank of the constraint in each end's list; then .x = its rank in its colour
 *   prio[n]       its priority: a hash of its pair (col_init), the degree put first (col_scatter, option);
 *                 ties (a pair given twice) broken by the index: the larger index wins
 *   state[n]      UNCOLOURED, or (round << 8) | colour once coloured (colour K: overflow)
 *   tent[2·cap]   the colour each uncoloured constraint picked: round r reads tent[((r+1) mod 2)·cap + i]
 *                 (round r − 1's picks; round 0: colour 0 for all, not read) and writes tent[(r mod 2)·cap + i]
 *   lists[2·cap]  the constraints still uncoloured: round r reads the list at ((r+1) mod 2)·cap (round 0
 *                 reads 0 .. n−1 directly) and appends its survivors at (r mod 2)·cap
 *   masks[nb]     vec2u per body: the colours (< K, 64 bits) of its constraints coloured so far (col_commit
 *                 after each round; cleared with the counts)
 *   colour[n]     the final colour (K = overflow); order[n]: the constraints grouped by colour
 *   offsets[K+3]  the first entry of each colour 0 .. K in `order`, then n, then the colours used
 */
import { defineRecord } from './layout.js';
import { THREAD_INDEX_WGSL, kernelEntry } from './dispatch.js';

export const ColourParamsRecord = defineRecord('ColourParams', [
  ['capacity', 'u32', 'constraints at most'],
  ['body_count', 'u32', 'bodies (flags entries); indices ≥ this are static'],
  ['pair_stride', 'u32', 'u32 words from one constraint to the next in pairs'],
  ['off_a', 'u32', 'word of body a within a constraint'],
  ['off_b', 'u32', 'word of body b'],
  ['count_word', 'u32', 'word of count_src holding the constraint count'],
  ['max_colours', 'u32', 'K ≤ 64: colours 0 .. K−1, K = the overflow set'],
  ['rounds', 'u32', 'R: the rounds of the speculative colouring'],
  ['seed', 'u32', 'priority hash seed'],
  ['largest_first', 'u32', '1: degree in the priority (largest first), 0: hash only'],
] as const);

export const RoundParamsRecord = defineRecord('RoundParams', [
  ['round', 'u32', 'r'],
  ['in_counter', 'u32', 'counter holding the input list length'],
  ['out_counter', 'u32', 'counter of the survivors'],
] as const);

/** counters[COUNTER_N]: constraints this frame (min(count, capacity)) */
export const COUNTER_N = 0;
/** counters[survivorCounter(r)] = constraints still uncoloured after round r */
export const survivorCounter = (r: number) => 1 + r;
/** counters[sizeCounter(c, R)] = constraints of colour c (c = K: overflow) */
export const sizeCounter = (c: number, rounds: number) => 1 + rounds + c;
export const UNCOLOURED = 0xffffffff;
export const NONE = 0xffffffff;

const common = /* wgsl */ `
${ColourParamsRecord.wgsl}
@group(0) @binding(0) var<uniform> params: ColourParams;
const UNCOLOURED: u32 = ${UNCOLOURED}u;
const NONE: u32 = ${NONE}u;
const COUNTER_N: u32 = ${COUNTER_N}u;
${THREAD_INDEX_WGSL}
// a well-mixed 32-bit hash (a murmur-style finaliser): the random priorities (Luby; Jones–Plassmann)
fn mix(v: u32) -> u32 {
  var x = v;
  x ^= x >> 16u; x *= 0x7feb352du;
  x ^= x >> 15u; x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}
// math/hash-pair.ts hashPair (u32 arithmetic, wrapping as Math.imul)
fn hash_pair(a: u32, b: u32) -> u32 {
  var h = (a * 0x9e3779b1u) ^ ((b + 0x7f4a7c15u) * 0x85ebca77u);
  h ^= h >> 15u;
  return h * 0x2c1b3c6du;
}
`;

export const setupWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> count_src: array<u32>;
@group(0) @binding(2) var<storage, read_write> counters: array<u32>;
// n = min(count, capacity): constraints past the capacity were never written by the producer
${kernelEntry('col_setup')} {
  if (thread_index(gid, nwg) != 0u) { return; }
  counters[COUNTER_N] = min(count_src[params.count_word], params.capacity);
}
`;

export const clearBodiesWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> adj: array<u32>;
@group(0) @binding(2) var<storage, read_write> masks: array<u32>;
${kernelEntry('col_clear_bodies')} {
  let b = thread_index(gid, nwg);
  if (b <= params.body_count) { adj[b] = 0u; }
  if (b < params.body_count) { masks[2u * b] = 0u; masks[2u * b + 1u] = 0u; }
}
`;

export const initWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> pairs: array<u32>;
@group(0) @binding(2) var<storage, read> flags: array<u32>;
@group(0) @binding(3) var<storage, read> counters: array<u32>;
@group(0) @binding(4) var<storage, read_write> adj: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> ends: array<vec2u>;
@group(0) @binding(6) var<storage, read_write> rank: array<vec2u>;
@group(0) @binding(7) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> prio: array<u32>;
fn dynamic_body(b: u32) -> bool { return b < params.body_count && (flags[b] & 1u) == 0u; }
// the constraint's dynamic ends, each counted on its body (the CSR's counting pass: integer atomics),
// and its hash: of its pair, not of its index, so a pair keeps its priority whatever the order the
// producer appended the constraints in (atomic appends), from frame to frame
${kernelEntry('col_init')} {
  let i = thread_index(gid, nwg);
  if (i >= counters[COUNTER_N]) { return; }
  let a = pairs[params.pair_stride * i + params.off_a];
  let b = pairs[params.pair_stride * i + params.off_b];
  var e = vec2u(NONE, NONE);
  var r = vec2u(0u, 0u);
  if (dynamic_body(a)) { e.x = a; r.x = atomicAdd(&adj[a], 1u); }
  if (dynamic_body(b) && b != a) { e.y = b; r.y = atomicAdd(&adj[b], 1u); }
  ends[i] = e;
  rank[i] = r;
  atomicStore(&state[i], UNCOLOURED);
  prio[i] = mix(hash_pair(a, b) ^ mix(params.seed));
}
`;

export const scatterWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> counters: array<u32>;
@group(0) @binding(2) var<storage, read_write> adj: array<u32>;
@group(0) @binding(3) var<storage, read> ends: array<vec2u>;
@group(0) @binding(4) var<storage, read> rank: array<vec2u>;
@group(0) @binding(5) var<storage, read_write> prio: array<u32>;
// the CSR's fill (entry = the body's first + the rank counted in col_init), and the priority:
//   largest first: (min(degree, 255) << 24) | (hash >> 8), degree = Σ_ends (constraints of the body − 1)
//   else:          hash (col_init's)
${kernelEntry('col_scatter')} {
  let i = thread_index(gid, nwg);
  if (i >= counters[COUNTER_N]) { return; }
  let e = ends[i];
  let r = rank[i];
  let base = params.body_count + 1u;
  var degree = 0u;
  if (e.x != NONE) { adj[base + adj[e.x] + r.x] = i; degree += adj[e.x + 1u] - adj[e.x] - 1u; }
  if (e.y != NONE) { adj[base + adj[e.y] + r.y] = i; degree += adj[e.y + 1u] - adj[e.y] - 1u; }
  if (params.largest_first != 0u) { prio[i] = (min(degree, 255u) << 24u) | (prio[i] >> 8u); }
}
`;

/** Threads of the one-workgroup colouring (col_rounds_loop): the rounds of a small graph in one dispatch. */
export const LOOP_THREADS = 256;

// Round r and its commit, as functions of the round and the thread's entry of its input list, shared by the
// kernels of one round each (col_round, col_commit) and the one-workgroup loop over all rounds
// (col_rounds_loop); each module gives mask_of, state_word and or_colour for its own bindings.
const listedWgsl = /* wgsl */ `
// the constraint at entry t of round r's input list (round 0: every constraint, 0 .. n − 1)
fn listed(r: u32, t: u32) -> u32 {
  if (r == 0u) { return t; }
  return lists[((r + 1u) & 1u) * params.capacity + t];
}
`;
const roundEntryWgsl = /* wgsl */ `
// j outranks i: a higher priority, ties to the higher index (a strict total order: no two tie)
fn outranks(j: u32, i: u32) -> bool {
  let pj = prio[j]; let pi = prio[i];
  return pj > pi || (pj == pi && j > i);
}
// colour c's bit in a 64-colour mask
fn with_colour(m: vec2u, c: u32) -> vec2u {
  if (c < 32u) { return vec2u(m.x | (1u << c), m.y); }
  return vec2u(m.x, m.y | (1u << (c - 32u)));
}
fn has_colour(m: vec2u, c: u32) -> bool {
  if (c < 32u) { return (m.x & (1u << c)) != 0u; }
  return (m.y & (1u << (c - 32u))) != 0u;
}
// the lowest colour not in the mask (64 when all 64 are in it)
fn lowest_free(m: vec2u) -> u32 {
  if (~m.x != 0u) { return countTrailingZeros(~m.x); }
  return 32u + countTrailingZeros(~m.y);
}
// Round r of the speculative colouring (gpu/colouring.ts header): constraint i holds the colour t it
// picked in round r − 1 (round 0: colour 0 for every constraint) in tent[prev]; it keeps t unless
//   (a) a neighbour coloured in a round < r has colour t (it was coloured after i picked), or
//   (b) a neighbour still uncoloured before this round picked the same t and outranks i;
// else it picks again, into tent[cur], the lowest colour that no neighbour coloured in a round < r has
// and that is not t (the neighbour that beat it to t keeps t, or loses it to one that keeps it), and goes
// on the survivors' list (counter out_counter); a pick ≥ K puts it in the overflow colour K at once (K
// blocks nothing). The colours of the neighbours coloured in rounds < r are the masks of i's two dynamic
// bodies (commit_entry ORs each round's colours in after the round), so (a) and the pick read two masks,
// not the neighbours; only (b) walks them, and stops at the first rival. A neighbour coloured in this same
// round (state round = r) counts as uncoloured, tent[prev] is read while only tent[cur] is written, and
// the masks are not written in a round: the outcome does not depend on the threads' order. Two neighbours
// never keep one colour: in one round the one outranked loses by (b), in later rounds by (a).
fn round_entry(r: u32, t_index: u32, out_counter: u32) {
  let i = listed(r, t_index);
  let base = params.body_count + 1u;
  let prev = ((r + 1u) & 1u) * params.capacity;
  let cur = (r & 1u) * params.capacity;
  var t = 0u;
  if (r > 0u) { t = tent[prev + i]; }
  let e = ends[i];
  var taken = vec2u(0u, 0u);
  if (e.x != NONE) { taken |= mask_of(e.x); }
  if (e.y != NONE) { taken |= mask_of(e.y); }
  var keeps = !has_colour(taken, t); // (a)
  for (var side = 0u; side < 2u && keeps; side++) {
    var b = e.x;
    if (side == 1u) { b = e.y; }
    if (b == NONE) { continue; }
    let end = adj[b + 1u];
    for (var k = adj[b]; k < end; k++) {
      let j = adj[base + k];
      if (j == i) { continue; }
      let s = atomicLoad(&state[j]);
      if (s != UNCOLOURED && (s >> 8u) < r) { continue; } // coloured before: in the masks
      var tj = 0u;
      if (r > 0u) { tj = tent[prev + j]; }
      if (tj == t && outranks(j, i)) { keeps = false; break; } // (b)
    }
  }
  if (keeps) {
    atomicStore(&state[i], (r << 8u) | t);
    return;
  }
  let c = lowest_free(with_colour(taken, t));
  if (c >= params.max_colours) {
    atomicStore(&state[i], (r << 8u) | params.max_colours);
    return;
  }
  tent[cur + i] = c;
  let k = atomicAdd(&counters[out_counter], 1u);
  lists[cur + k] = i;
}
`;
const commitEntryWgsl = /* wgsl */ `
// after round r, over the constraints it took (its input list): each one coloured in round r ORs its colour
// (below K: the overflow colour K blocks nothing) into its dynamic bodies' masks, for the rounds after r
fn commit_entry(r: u32, t_index: u32) {
  let i = listed(r, t_index);
  let s = state_word(i);
  if (s == UNCOLOURED || (s >> 8u) != r) { return; }
  let c = s & 255u;
  if (c >= params.max_colours) { return; }
  let e = ends[i];
  if (e.x != NONE) { or_colour(e.x, c); }
  if (e.y != NONE) { or_colour(e.y, c); }
}
`;

export const roundWgsl = /* wgsl */ `${common}
${RoundParamsRecord.wgsl}
@group(0) @binding(1) var<uniform> round: RoundParams;
@group(0) @binding(2) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read> adj: array<u32>;
@group(0) @binding(4) var<storage, read> ends: array<vec2u>;
@group(0) @binding(5) var<storage, read> prio: array<u32>;
@group(0) @binding(6) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> lists: array<u32>;
@group(0) @binding(8) var<storage, read_write> tent: array<u32>;
@group(0) @binding(9) var<storage, read> masks: array<vec2u>;
fn mask_of(b: u32) -> vec2u { return masks[b]; }
${listedWgsl}${roundEntryWgsl}
// round r (round_entry), one thread per entry of its input list
${kernelEntry('col_round')} {
  let t_index = thread_index(gid, nwg);
  if (t_index >= atomicLoad(&counters[round.in_counter])) { return; }
  round_entry(round.round, t_index, round.out_counter);
}
`;

export const commitWgsl = /* wgsl */ `${common}
${RoundParamsRecord.wgsl}
@group(0) @binding(1) var<uniform> round: RoundParams;
@group(0) @binding(2) var<storage, read> counters: array<u32>;
@group(0) @binding(3) var<storage, read> ends: array<vec2u>;
@group(0) @binding(4) var<storage, read> state: array<u32>;
@group(0) @binding(5) var<storage, read> lists: array<u32>;
@group(0) @binding(6) var<storage, read_write> masks: array<atomic<u32>>;
fn state_word(i: u32) -> u32 { return state[i]; }
fn or_colour(b: u32, c: u32) { atomicOr(&masks[2u * b + (c >> 5u)], 1u << (c & 31u)); }
${listedWgsl}${commitEntryWgsl}
// round r's commit (commit_entry), one thread per entry of the round's input list
${kernelEntry('col_commit')} {
  let t_index = thread_index(gid, nwg);
  if (t_index >= counters[round.in_counter]) { return; }
  commit_entry(round.round, t_index);
}
`;

// The rounds of a small graph (capacity ≤ GpuColouring's loop capacity) in one workgroup: round r, a
// barrier, its commit, a barrier, then the survivors' count read by the whole workgroup; the loop ends when
// none is left (or after R rounds), so a graph coloured in 8 rounds costs 8 rounds, where the dispatched
// rounds cost R × 3 dispatches whatever is left (those after the last survivor dispatch no workgroup, but
// each is still a dispatch). The same round_entry and commit_entry as col_round and col_commit, the same
// counters and lists: the same colours, bit for bit (a round's outcome does not depend on the threads' order,
// nor on how many threads share it); storageBarrier orders the workgroup's storage accesses between phases.
export const roundsLoopWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> adj: array<u32>;
@group(0) @binding(3) var<storage, read> ends: array<vec2u>;
@group(0) @binding(4) var<storage, read> prio: array<u32>;
@group(0) @binding(5) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> lists: array<u32>;
@group(0) @binding(7) var<storage, read_write> tent: array<u32>;
@group(0) @binding(8) var<storage, read_write> masks: array<atomic<u32>>;
fn mask_of(b: u32) -> vec2u { return vec2u(atomicLoad(&masks[2u * b]), atomicLoad(&masks[2u * b + 1u])); }
fn state_word(i: u32) -> u32 { return atomicLoad(&state[i]); }
fn or_colour(b: u32, c: u32) { atomicOr(&masks[2u * b + (c >> 5u)], 1u << (c & 31u)); }
${listedWgsl}${roundEntryWgsl}${commitEntryWgsl}
var<workgroup> listed_count: u32;
@compute @workgroup_size(${LOOP_THREADS})
fn col_rounds_loop(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) { listed_count = atomicLoad(&counters[COUNTER_N]); }
  var n_in = workgroupUniformLoad(&listed_count);
  for (var r = 0u; r < params.rounds && n_in > 0u; r++) {
    for (var t = lid; t < n_in; t += ${LOOP_THREADS}u) { round_entry(r, t, ${survivorCounter(0)}u + r); }
    storageBarrier();
    // the last round's colours are read by no later round
    if (r + 1u < params.rounds) {
      for (var t = lid; t < n_in; t += ${LOOP_THREADS}u) { commit_entry(r, t); }
    }
    storageBarrier();
    if (lid == 0u) { listed_count = atomicLoad(&counters[${survivorCounter(0)}u + r]); } // survivorCounter(r)
    n_in = workgroupUniformLoad(&listed_count);
  }
}
`;

const BLOCK = 64;
export const COLOUR_BLOCK = BLOCK;

export const clearHistWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> hist: array<u32>;
${kernelEntry('col_clear_hist')} {
  let k = thread_index(gid, nwg);
  if (k < (params.max_colours + 1u) * ((params.capacity + ${BLOCK - 1}u) / ${BLOCK}u)) { hist[k] = 0u; }
}
`;

// The stable counting sort by colour (K + 1 ≤ 33 keys), in blocks of 64 constraints (one workgroup):
//   tally   per block: each constraint's colour (uncoloured after R rounds: the overflow colour K), its
//           rank among the block's earlier constraints of its colour, and the block's count of each
//           colour into hist[c · blocks + block] (colour-major), added to the colour's size counter
//   scan    of hist (gpu/scan.ts): hist[c · blocks + block] = Σ_{c' < c} size(c') + Σ_{b < block} count(c, b)
//   order   order[hist[c · blocks + block] + rank] = i: colour by colour, by index within a colour
// so the grouping is deterministic (the overflow pass, solved serially, sees its constraints by index).
export const tallyWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> colour: array<u32>;
@group(0) @binding(4) var<storage, read_write> rank: array<vec2u>;
@group(0) @binding(5) var<storage, read_write> hist: array<u32>;
var<workgroup> block_colour: array<u32, ${BLOCK}>;
@compute @workgroup_size(${BLOCK})
fn col_tally(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let block = wid.y * nwg.x + wid.x;
  let i = block * ${BLOCK}u + lid;
  let n = atomicLoad(&counters[COUNTER_N]);
  let K = params.max_colours;
  var c = K + 1u; // past the end: not a constraint
  if (i < n) {
    c = K;
    let s = state[i];
    if (s != UNCOLOURED) { c = min(s & 255u, K); }
    colour[i] = c;
  }
  block_colour[lid] = c;
  workgroupBarrier();
  if (i < n) {
    var r = 0u;
    for (var k = 0u; k < lid; k++) { if (block_colour[k] == c) { r++; } }
    rank[i].x = r;
  }
  // colours 0 .. K (K + 1 ≤ 65 of them: a thread may count two)
  for (var c = lid; c <= K; c += ${BLOCK}u) {
    var count = 0u;
    for (var k = 0u; k < ${BLOCK}u; k++) { if (block_colour[k] == c) { count++; } }
    let blocks = (params.capacity + ${BLOCK - 1}u) / ${BLOCK}u;
    if (count > 0u) {
      hist[c * blocks + block] = count;
      atomicAdd(&counters[1u + params.rounds + c], count);
    }
  }
}
`;

export const offsetsWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> counters: array<u32>;
@group(0) @binding(2) var<storage, read> hist: array<u32>;
@group(0) @binding(3) var<storage, read_write> offsets: array<u32>;
// offsets[c] = the scanned hist at (c, block 0) = Σ_{c' < c} size(c') for c = 0 .. K,
// offsets[K + 1] = n, offsets[K + 2] = the colours used (the highest non-empty colour below K, plus 1)
${kernelEntry('col_offsets')} {
  if (thread_index(gid, nwg) != 0u) { return; }
  let blocks = (params.capacity + ${BLOCK - 1}u) / ${BLOCK}u;
  var used = 0u;
  for (var c = 0u; c <= params.max_colours; c++) {
    offsets[c] = hist[c * blocks];
    if (c < params.max_colours && counters[1u + params.rounds + c] > 0u) { used = c + 1u; }
  }
  offsets[params.max_colours + 1u] = counters[COUNTER_N];
  offsets[params.max_colours + 2u] = used;
}
`;

export const orderWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> counters: array<u32>;
@group(0) @binding(2) var<storage, read> colour: array<u32>;
@group(0) @binding(3) var<storage, read> rank: array<vec2u>;
@group(0) @binding(4) var<storage, read> hist: array<u32>;
@group(0) @binding(5) var<storage, read_write> order: array<u32>;
// the counting sort's scatter: colour c's constraints from order[offsets[c]] on, by index
${kernelEntry('col_order')} {
  let i = thread_index(gid, nwg);
  if (i >= counters[COUNTER_N]) { return; }
  let blocks = (params.capacity + ${BLOCK - 1}u) / ${BLOCK}u;
  order[hist[colour[i] * blocks + i / ${BLOCK}u] + rank[i].x] = i;
}
`;
