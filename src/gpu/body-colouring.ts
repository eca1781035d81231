/**
 * Body colouring on the GPU, every frame if need be, with no serial pass and no readback: the
 * speculative greedy colouring of model/body-colouring.ts bodyColoursParallel (its CPU twin: the same
 * colours bit for bit; test/avbd-gpu.test.ts checks that and zero clashes on random graphs and a contact
 * pile), rounds over a compacted list of the bodies not yet coloured, conflicts settled by hashed
 * Jones–Plassmann priorities. It gives the ordering a per-body Gauss–Seidel needs (AVBD's primal
 * update, Giles et al. 2025 §3.6). gpu/colouring.ts colours constraints (no two sharing a body); this
 * colours bodies (no two sharing a constraint): the vertices of the graph, not its edges.
 *
 * Input, in one u32 buffer owned by the caller (`graph`), at word offsets given at creation:
 *   adjacency   [n + 1] CSR offsets (absolute word indices into `graph`), then the neighbour lists
 *               (repeats allowed: a body listed twice counts once)
 *   active      [n] 1 where the body is coloured and conflicts (dynamic), 0 where not (a fixed body never
 *               moves, so it conflicts with nothing: the whole ground may touch one colour's bodies)
 * Both may be rewritten on the GPU before each record (a contact graph changes every frame).
 * Output, written into the same buffer:
 *   colour_info [2 K] (start, count) of each colour's bodies in `order`; [3 K] the indirect dispatch
 *               arguments of each colour (⌈count / 64⌉, 1, 1), K = BODY_COLOUR_LIMIT
 *   order       the coloured bodies grouped by colour (their order within a colour is that of atomic
 *               appends: bodies of one colour are independent, so any order gives the same result)
 *   summary     [3] the number of colours, the bodies left uncoloured, the rounds that coloured some body
 *               (also in summaryBuffer, followed by each colour's body count, for a snapshot to read alone)
 *
 * Kernels (per body unless said):
 *   bc_clear        the round counters and the colour counts ← 0
 *   bc_init         colour word ← UNCOLOURED (active) or INACTIVE; the active bodies appended to list 0
 *   per round r = 0 .. R − 1:
 *     bc_args r     one thread: round r's workgroups from its counter (the indirect arguments)
 *     bc_tentative  (indirect, over list r) t_i = the lowest colour no settled neighbour holds (a word
 *                   with a round tag < r + 1), or LEFT when all K are held
 *     bc_resolve    (indirect, over list r) i settles, colour word ← t_i | (r + 1) << 8, unless a neighbour
 *                   still listed (UNCOLOURED, or settled in this round: tag r + 1) has t_j = t_i and
 *                   outranks it; else it is appended to list r + 1 (the lists ping-pong)
 *   or, for a graph of at most BODY_LOOP_CAPACITY bodies, bc_rounds_loop: every round (tentative, barrier,
 *   resolve, barrier) in one workgroup, until no body is listed
 *   bc_count        each body's rank in its colour (atomicAdd on the colour's count); the left ones counted
 *   bc_offsets      one thread: the K colours' starts (a scan of K counts), the indirect arguments, the summary
 *   bc_scatter      order[start[c] + rank] = body
 * Dispatches: 2 + 3 R + 3; the rounds after every body is coloured dispatch no workgroup (their
 * counters are 0), but each is still recorded: R = 48 rounds are 144 dispatches a step, whatever is left,
 * where 9 to 15 rounds colour random graphs of degree 12 to 31 (model/body-colouring.ts BODY_COLOUR_ROUNDS)
 * and 4 a 15-box pyramid. No dispatch count can follow a GPU value without a readback, so a small graph takes
 * the loop instead: 6 dispatches, and the loop stops at the round that settles the last body. Nothing is
 * read back.
 *
 * Why speculative rather than plain Jones–Plassmann rounds (where only a body that outranks all its
 * uncoloured neighbours takes a colour): the same colours' quality (both are greedy; measured on random
 * graphs, the same colour counts), but Jones–Plassmann's rounds are the longest chain of decreasing
 * priorities, 32 for degree 12 and 51 to 81 for degree 31 (400 to 100k bodies), where this needs about
 * as many rounds as colours (9 and 15); no body is left to a serial pass (the previous version's
 * clean-up took 198 of 400 bodies on a degree-31 graph after 16 rounds).
 *
 * Invariants: the caller's graph is not written but for colour_info, order and summary; a round reads
 * only colour words of earlier rounds (tag < r + 1) as settled and this round's tentative colours, so
 * its result does not depend on the threads' order. A body left uncoloured (summary[1] > 0) is in no
 * colour: the solver checks the summary at a snapshot and reports it.
 */
import { Kernel, THREAD_INDEX_WGSL, kernelEntry } from './dispatch.js';
import { buildKernels } from './kernels.js';
import { BODY_COLOUR_LIMIT, BODY_COLOUR_ROUNDS } from '../model/body-colouring.js';

/** Where the colouring reads and writes in the caller's graph buffer (u32 words). */
export interface BodyGraphLayout {
  bodyCount: number;
  /** n + 1 absolute CSR offsets, then the lists */
  adjacency: number;
  /** n flags */
  active: number;
  /** 5 K words: (start, count) per colour, then (x, 1, 1) per colour */
  colourInfo: number;
  /** n words */
  order: number;
  /** BODY_SUMMARY_WORDS words */
  summary: number;
}

/** Words of the summary: colours, bodies left uncoloured, rounds used. */
export const BODY_SUMMARY_WORDS = 3;

const K = BODY_COLOUR_LIMIT;
const UNCOLOURED = 0xffffffff;
const INACTIVE = 0xfffffffe;
/** a body no colour < K can take, or still listed after R rounds */
const LEFT = 0xfffffffd;

const common = /* wgsl */ `
struct Layout { body_count: u32, adjacency: u32, active_flags: u32, colour_info: u32, order: u32, summary: u32, round: u32, rounds: u32, };
@group(0) @binding(0) var<uniform> lay: Layout;
${THREAD_INDEX_WGSL}
const K = ${K}u;
const UNCOLOURED = ${UNCOLOURED}u;
const INACTIVE = ${INACTIVE}u;
const LEFT = ${LEFT}u;
// model/body-colouring.ts bodyPriority: the shared pair hash (math/hash-pair.ts) of (i, i)
fn hash_pair(a: u32, b: u32) -> u32 {
  var h = (a * 0x9e3779b1u) ^ ((b + 0x7f4a7c15u) * 0x85ebca77u);
  h ^= h >> 15u;
  return h * 0x2c1b3c6du;
}
// j outranks i: the larger hash, ties to the larger index
fn outranks(j: u32, i: u32) -> bool {
  let pj = hash_pair(j, j);
  let pi = hash_pair(i, i);
  return pj > pi || (pj == pi && j > i);
}
// a settled colour word: c | tag << 8 with c < K (not UNCOLOURED, INACTIVE or LEFT)
fn is_settled(w: u32) -> bool { return w < LEFT; }
`;

const clearWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> counters: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
${kernelEntry('bc_clear')} {
  let i = thread_index(gid, nwg);
  if (i <= lay.rounds) { counters[i] = 0u; }
  if (i <= K) { counts[i] = 0u; }
}
`;

const initWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> graph: array<u32>;
@group(0) @binding(2) var<storage, read_write> colour: array<u32>;
@group(0) @binding(3) var<storage, read_write> lists: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
${kernelEntry('bc_init')} {
  let i = thread_index(gid, nwg);
  if (i >= lay.body_count) { return; }
  let is_active = graph[lay.active_flags + i] != 0u;
  colour[i] = select(INACTIVE, UNCOLOURED, is_active);
  if (is_active) { lists[atomicAdd(&counters[0], 1u)] = i; }
}
`;

const argsWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> counters: array<u32>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;
${kernelEntry('bc_args')} {
  if (thread_index(gid, nwg) != 0u) { return; }
  // 1-D: the lists hold at most n ≤ 65 535 · 64 bodies (checked at creation)
  args[3u * lay.round] = (counters[lay.round] + 63u) / 64u;
  args[3u * lay.round + 1u] = 1u;
  args[3u * lay.round + 2u] = 1u;
}
`;

/** list r lies at lists[(r mod 2) n ..] */
const listWgsl = /* wgsl */ `
fn listed(r: u32, t: u32) -> u32 { return lists[(r & 1u) * lay.body_count + t]; }
`;

// Round r's two phases as functions of the round and the thread's entry of list r, shared by the kernels of one
// phase each (bc_tentative, bc_resolve) and the one-workgroup loop over all rounds (bc_rounds_loop); each module
// gives colour_word for its own binding of the colour words.
const tentativeEntryWgsl = /* wgsl */ `
// t_i = the lowest colour no settled neighbour holds (rounds < r: no word of this round is written yet)
fn tentative_entry(r: u32, t: u32) {
  let i = listed(r, t);
  var mask = 0u;
  for (var e = graph[lay.adjacency + i]; e < graph[lay.adjacency + i + 1u]; e++) {
    let j = graph[e];
    let w = colour_word(j);
    if (j != i && is_settled(w)) { mask |= 1u << (w & 255u); }
  }
  // the lowest one none holds (countTrailingZeros(~mask) = 32 when all K = 32 are held)
  let c = countTrailingZeros(~mask);
  tentative[i] = select(LEFT, c, c < K);
}
`;

const resolveEntryWgsl = /* wgsl */ `
// i settles with t_i unless a neighbour still listed has the same t_j and outranks it; else it goes on list r + 1
fn resolve_entry(r: u32, t: u32) {
  let i = listed(r, t);
  let c = tentative[i];
  if (c == LEFT) { atomicStore(&colour[i], LEFT); return; }
  let tag = r + 1u;
  for (var e = graph[lay.adjacency + i]; e < graph[lay.adjacency + i + 1u]; e++) {
    let j = graph[e];
    if (j == i) { continue; }
    // j still listed this round: uncoloured, or settled by this very round (its tag), so what this
    // thread reads of a word being written cannot change its decision
    let w = atomicLoad(&colour[j]);
    let listed_now = w == UNCOLOURED || (w < LEFT && (w >> 8u) == tag);
    if (listed_now && tentative[j] == c && outranks(j, i)) {
      if (r + 1u < lay.rounds) {
        lists[((r + 1u) & 1u) * lay.body_count + atomicAdd(&counters[r + 1u], 1u)] = i;
      } else {
        // the last round: i stays UNCOLOURED (bc_count counts it as left); writing LEFT here could change
        // what a neighbour of this same round reads of it
        atomicAdd(&counters[r + 1u], 1u);
      }
      return;
    }
  }
  atomicStore(&colour[i], c | (tag << 8u));
}
`;

const tentativeWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> graph: array<u32>;
@group(0) @binding(2) var<storage, read> colour: array<u32>;
@group(0) @binding(3) var<storage, read_write> tentative: array<u32>;
@group(0) @binding(4) var<storage, read> lists: array<u32>;
@group(0) @binding(5) var<storage, read> counters: array<u32>;
fn colour_word(j: u32) -> u32 { return colour[j]; }
${listWgsl}${tentativeEntryWgsl}
${kernelEntry('bc_tentative')} {
  let t = thread_index(gid, nwg);
  if (t >= counters[lay.round]) { return; }
  tentative_entry(lay.round, t);
}
`;

const resolveWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> graph: array<u32>;
@group(0) @binding(2) var<storage, read_write> colour: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read> tentative: array<u32>;
@group(0) @binding(4) var<storage, read_write> lists: array<u32>;
@group(0) @binding(5) var<storage, read_write> counters: array<atomic<u32>>;
${listWgsl}${resolveEntryWgsl}
${kernelEntry('bc_resolve')} {
  let t = thread_index(gid, nwg);
  if (t >= atomicLoad(&counters[lay.round])) { return; }
  resolve_entry(lay.round, t);
}
`;

/** Threads of the one-workgroup colouring (bc_rounds_loop). */
const LOOP_THREADS = 256;

// Every round of a small graph (at most BODY_LOOP_CAPACITY bodies) in one workgroup: tentative, a barrier,
// resolve, a barrier, then list r + 1's length read by the whole workgroup; the loop ends when no body is
// listed (or after R rounds), where the dispatched rounds cost 3 R dispatches whatever is left. The same
// tentative_entry and resolve_entry as bc_tentative and bc_resolve, the same lists and counters: the same
// colours, bit for bit (a round's outcome does not depend on the threads' order nor their number);
// storageBarrier orders the workgroup's storage accesses between the phases.
const roundsLoopWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> graph: array<u32>;
@group(0) @binding(2) var<storage, read_write> colour: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> tentative: array<u32>;
@group(0) @binding(4) var<storage, read_write> lists: array<u32>;
@group(0) @binding(5) var<storage, read_write> counters: array<atomic<u32>>;
fn colour_word(j: u32) -> u32 { return atomicLoad(&colour[j]); }
${listWgsl}${tentativeEntryWgsl}${resolveEntryWgsl}
var<workgroup> listed_count: u32;
@compute @workgroup_size(${LOOP_THREADS})
fn bc_rounds_loop(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) { listed_count = atomicLoad(&counters[0]); }
  var n_in = workgroupUniformLoad(&listed_count);
  for (var r = 0u; r < lay.rounds && n_in > 0u; r++) {
    for (var t = lid; t < n_in; t += ${LOOP_THREADS}u) { tentative_entry(r, t); }
    storageBarrier();
    for (var t = lid; t < n_in; t += ${LOOP_THREADS}u) { resolve_entry(r, t); }
    storageBarrier();
    if (lid == 0u) { listed_count = atomicLoad(&counters[r + 1u]); }
    n_in = workgroupUniformLoad(&listed_count);
  }
}
`;

const countWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> colour: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> rank: array<u32>;
${kernelEntry('bc_count')} {
  let i = thread_index(gid, nwg);
  if (i >= lay.body_count) { return; }
  let w = colour[i];
  if (w == INACTIVE) { return; }
  // a body left (LEFT, or UNCOLOURED: never settled) goes in the count K, in no colour
  let c = select(K, w & 255u, is_settled(w));
  rank[i] = atomicAdd(&counts[c], 1u);
}
`;

const offsetsWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> graph: array<u32>;
@group(0) @binding(2) var<storage, read> counts: array<u32>;
@group(0) @binding(3) var<storage, read> counters: array<u32>;
@group(0) @binding(4) var<storage, read_write> summary_copy: array<u32>;
${kernelEntry('bc_offsets')} {
  if (thread_index(gid, nwg) != 0u) { return; }
  var start = 0u;
  var colours = 0u;
  for (var c = 0u; c < K; c++) {
    let n = counts[c];
    graph[lay.colour_info + 2u * c] = start;
    graph[lay.colour_info + 2u * c + 1u] = n;
    graph[lay.colour_info + 2u * K + 3u * c] = (n + 63u) / 64u;
    graph[lay.colour_info + 2u * K + 3u * c + 1u] = 1u;
    graph[lay.colour_info + 2u * K + 3u * c + 2u] = 1u;
    summary_copy[3u + c] = n;
    start += n;
    if (n > 0u) { colours = c + 1u; }
  }
  var used = 0u;
  for (var r = 0u; r < lay.rounds; r++) { if (counters[r] > 0u) { used = r + 1u; } }
  graph[lay.summary] = colours;
  graph[lay.summary + 1u] = counts[K];
  graph[lay.summary + 2u] = used;
  summary_copy[0] = colours;
  summary_copy[1] = counts[K];
  summary_copy[2] = used;
}
`;

const scatterWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> graph: array<u32>;
@group(0) @binding(2) var<storage, read> colour: array<u32>;
@group(0) @binding(3) var<storage, read> rank: array<u32>;
${kernelEntry('bc_scatter')} {
  let i = thread_index(gid, nwg);
  if (i >= lay.body_count) { return; }
  let w = colour[i];
  if (!is_settled(w)) { return; }
  let c = w & 255u;
  graph[lay.order + graph[lay.colour_info + 2u * c] + rank[i]] = i;
}
`;

type KernelName = 'clear' | 'init' | 'args' | 'tentative' | 'resolve' | 'roundsLoop' | 'count' | 'offsets' | 'scatter';

/**
 * The most bodies whose rounds run in one workgroup of LOOP_THREADS that stops when none is listed (bc_rounds_loop;
 * 8 bodies a thread a round at the most); a graph of more bodies takes R dispatched rounds.
 */
export const BODY_LOOP_CAPACITY = 2048;

/** The GPU body colouring over a caller's graph buffer (header). */
export class GpuBodyColouring {
  private readonly kernels: Partial<Record<KernelName, Kernel>>;
  private readonly colour: GPUBuffer;
  private readonly tentative: GPUBuffer;
  private readonly lists: GPUBuffer;
  private readonly counters: GPUBuffer;
  private readonly args: GPUBuffer;
  private readonly counts: GPUBuffer;
  private readonly rank: GPUBuffer;
  private readonly layoutBuffer: GPUBuffer;
  /** the summary again in a buffer of its own (a snapshot reads 12 bytes, not the whole graph) */
  readonly summaryBuffer: GPUBuffer;
  private readonly stride: number;
  private readonly groups: Record<string, GPUBindGroup[]> = {};

  private constructor(
    private readonly device: GPUDevice,
    readonly layout: BodyGraphLayout,
    graph: GPUBuffer,
    /** R: the most rounds */
    readonly rounds: number,
    kernels: GpuBodyColouring['kernels'],
    /** the rounds run in one workgroup that stops when no body is listed (bc_rounds_loop), not dispatched one by one */
    readonly loop: boolean,
  ) {
    this.kernels = kernels;
    const n = Math.max(1, layout.bodyCount);
    if (n > 65535 * 64) throw new RangeError(`the GPU body colouring takes at most ${65535 * 64} bodies (its rounds are 1-D dispatches); ${n} given`);
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.colour = device.createBuffer({ label: 'body_colour', size: 4 * n, usage: storage });
    this.tentative = device.createBuffer({ label: 'body_colour_tentative', size: 4 * n, usage: storage });
    this.lists = device.createBuffer({ label: 'body_colour_lists', size: 8 * n, usage: storage });
    this.counters = device.createBuffer({ label: 'body_colour_counters', size: 4 * (rounds + 1), usage: storage });
    this.args = device.createBuffer({ label: 'body_colour_args', size: 12 * rounds, usage: storage | GPUBufferUsage.INDIRECT });
    this.counts = device.createBuffer({ label: 'body_colour_counts', size: 4 * (K + 1), usage: storage });
    this.rank = device.createBuffer({ label: 'body_colour_rank', size: 4 * n, usage: storage });
    this.summaryBuffer = device.createBuffer({ label: 'body_colour_summary', size: 4 * (BODY_SUMMARY_WORDS + K), usage: storage });
    // one 32-byte Layout record per round r (round = r), each at an aligned offset
    this.stride = Math.max(32, device.limits.minUniformBufferOffsetAlignment);
    this.layoutBuffer = device.createBuffer({ label: 'body_colour_layout', size: this.stride * rounds, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const words = new Uint32Array((this.stride / 4) * rounds);
    for (let r = 0; r < rounds; r++) words.set([layout.bodyCount, layout.adjacency, layout.active, layout.colourInfo, layout.order, layout.summary, r, rounds], (r * this.stride) / 4);
    device.queue.writeBuffer(this.layoutBuffer, 0, words);
    const rec = (r: number) => ({ buffer: this.layoutBuffer, offset: r * this.stride, size: 32 });
    const k = this.kernels as Record<KernelName, Kernel>;
    const perRound = (f: (r: number) => GPUBindGroup) => (loop ? [] : Array.from({ length: rounds }, (_, r) => f(r)));
    this.groups.clear = [k.clear.bind([rec(0), this.counters, this.counts])];
    this.groups.init = [k.init.bind([rec(0), graph, this.colour, this.lists, this.counters])];
    this.groups.args = perRound((r) => k.args.bind([rec(r), this.counters, this.args]));
    this.groups.tentative = perRound((r) => k.tentative.bind([rec(r), graph, this.colour, this.tentative, this.lists, this.counters]));
    this.groups.resolve = perRound((r) => k.resolve.bind([rec(r), graph, this.colour, this.tentative, this.lists, this.counters]));
    this.groups.roundsLoop = loop ? [k.roundsLoop.bind([rec(0), graph, this.colour, this.tentative, this.lists, this.counters])] : [];
    this.groups.count = [k.count.bind([rec(0), this.colour, this.counts, this.rank])];
    this.groups.offsets = [k.offsets.bind([rec(0), graph, this.counts, this.counters, this.summaryBuffer])];
    this.groups.scatter = [k.scatter.bind([rec(0), graph, this.colour, this.rank])];
  }

  /** The colouring of the graph in `graph` (STORAGE usage) at `layout`, in at most `rounds` rounds. */
  /**
   * The colouring of the graph in `graph` (STORAGE usage) at `layout`, in at most `rounds` rounds; a graph of at most
   * `loopCapacity` bodies has its rounds in one workgroup (bc_rounds_loop), a larger one dispatched round by round.
   */
  static async create(device: GPUDevice, graph: GPUBuffer, layout: BodyGraphLayout, rounds = BODY_COLOUR_ROUNDS, loopCapacity = BODY_LOOP_CAPACITY): Promise<GpuBodyColouring> {
    if (!(rounds >= 1)) throw new RangeError(`the GPU body colouring needs at least one round; ${rounds} given`);
    const loop = layout.bodyCount <= loopCapacity;
    const kernels: Partial<Record<KernelName, Kernel>> = await buildKernels(device, 'body colouring', () => ({
      clear: Kernel.create(device, 'bc_clear', clearWgsl),
      init: Kernel.create(device, 'bc_init', initWgsl),
      // the rounds: one workgroup's loop, or three dispatches per round (only the kind used is built)
      ...(loop
        ? { roundsLoop: Kernel.create(device, 'bc_rounds_loop', roundsLoopWgsl) }
        : { args: Kernel.create(device, 'bc_args', argsWgsl), tentative: Kernel.create(device, 'bc_tentative', tentativeWgsl), resolve: Kernel.create(device, 'bc_resolve', resolveWgsl) }),
      count: Kernel.create(device, 'bc_count', countWgsl),
      offsets: Kernel.create(device, 'bc_offsets', offsetsWgsl),
      scatter: Kernel.create(device, 'bc_scatter', scatterWgsl),
    }));
    return new GpuBodyColouring(device, layout, graph, rounds, kernels, loop);
  }

  /**
   * Records the colouring into `pass` (no readback): 6 dispatches with the loop; else 5 + 3 R, those of the rounds
   * after the last body settled empty.
   */
  record(pass: GPUComputePassEncoder): void {
    const n = this.layout.bodyCount, k = this.kernels as Record<KernelName, Kernel>, g = this.groups;
    k.clear.dispatch(pass, g.clear[0], Math.max(this.rounds + 1, K + 1));
    k.init.dispatch(pass, g.init[0], n);
    if (this.loop) k.roundsLoop.dispatch(pass, g.roundsLoop[0], LOOP_THREADS, LOOP_THREADS);
    else
      for (let r = 0; r < this.rounds; r++) {
        k.args.dispatch(pass, g.args[r], 1);
        k.tentative.dispatchIndirect(pass, g.tentative[r], this.args, 12 * r);
        k.resolve.dispatchIndirect(pass, g.resolve[r], this.args, 12 * r);
      }
    k.count.dispatch(pass, g.count[0], n);
    k.offsets.dispatch(pass, g.offsets[0], 1);
    k.scatter.dispatch(pass, g.scatter[0], n);
  }

  /** The colour word of each body (tests: colour = w & 255 where settled; BODY_INACTIVE, BODY_LEFT). */
  get colourBuffer(): GPUBuffer {
    return this.colour;
  }

  destroy(): void {
    for (const b of [this.colour, this.tentative, this.lists, this.counters, this.args, this.counts, this.rank, this.layoutBuffer, this.summaryBuffer]) b.destroy();
  }
}

export { UNCOLOURED as BODY_UNCOLOURED, INACTIVE as BODY_INACTIVE, LEFT as BODY_LEFT };
