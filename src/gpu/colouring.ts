/**
 * Colouring every frame on the GPU: from a list of constraints (two body indices each, in any u32
 * buffer, their count in a GPU buffer) and a per-body static flag, a colour per constraint such that no
 * two constraints of one colour share a dynamic body, the constraints grouped by colour (`order`,
 * `offsets`) and one indirect-dispatch slot per colour, so a solver sweeps colour by colour with no
 * readback. The CPU twin is colourJonesPlassmannCpu below (its name from its first form; same priorities, same rounds: the same
 * colours, bit for bit; test/gpu-colouring.test.ts); model/colouring.ts is the CPU's greedy colouring
 * of the joints, the quality it is compared with.
 *
 * Static bodies never conflict (Box2D v3 colours its static contacts apart for the same reason: a
 * ground shared by a whole pile would otherwise put every contact with it in its own colour): a
 * constraint's fixed ends, and indices ≥ bodyCount (the world), are left out of the adjacency.
 *
 * Algorithm: a speculative greedy colouring with hashed priorities (Gebremedhin & Manne 2000's "colour
 * speculatively, then resolve the conflicts", made deterministic as Jones & Plassmann 1993 make theirs:
 * a conflict goes to the constraint of higher priority, Luby 1986's random priorities), in R rounds on
 * compacted work lists:
 *   init     per constraint: its dynamic ends, counted per body with atomicAdd (rank in the body's list)
 *   scan     exclusive scan of the nb + 1 counts (gpu/scan.ts): each body's first entry
 *   scatter  the CSR body → constraints (first + rank), and each constraint's priority
 *   round r  (r = 0 .. R−1, indirect over the survivors of round r − 1) each uncoloured constraint holds the
 *            colour t it picked in round r − 1 (round 0: colour 0 for all); it keeps t unless a neighbour
 *            coloured in an earlier round has t, or an uncoloured neighbour that outranks it picked t too;
 *            else it picks again (the lowest colour no neighbour coloured before round r has, and not t)
 *            and is appended to the next round's list; a pick ≥ K goes to the overflow colour K
 *   commit r (over the same list) the colours taken in round r ORed into their bodies' 64-bit masks: the
 *            next rounds read "the colours of the neighbours coloured so far" as two masks, not by walking
 *            the neighbours (only the rival test walks them, and stops at the first rival)
 *   tally    per block of 64 constraints: each one's colour (uncoloured after R rounds: overflow), its
 *            rank among the block's earlier ones of that colour, the block's count of each colour
 *   scan     of those counts, colour-major ((K + 1) · ⌈capacity/64⌉ entries): a stable counting sort
 *   offsets  one thread: each colour's first entry (the scan at its block 0)
 *   order    the constraints grouped by colour, by index within a colour; then the per-colour dispatch
 *            arguments
 * Priority: a 32-bit hash of the constraint's pair (a, b) (Luby's random priorities; of the pair, not of
 * the index, so the colours do not depend on the order a producer's atomic appends gave the list, and a
 * pair that persists keeps its priority from frame to frame), ties (a pair given twice) to the larger
 * index; option `largestFirst` puts the degree first, (min(degree, 255) << 24) | 24 hash bits
 * (Welsh–Powell, as model/colouring.ts orders its greedy pass).
 *
 * Why speculative, and not Jones–Plassmann's "a constraint takes the lowest free colour once it outranks
 * every uncoloured neighbour" (this module's first form): Jones–Plassmann's rounds are the longest chain
 * of decreasing priorities, which on a graph of degree d grows like e·d, not like the colours. A brick
 * wall 22 wythes deep (brick-wall, a brick touching up to 16 others, a manifold ~28 neighbours) needed
 * 54 rounds for 20 colours at 2,310 bricks and 63 at 17,820 (its first frame, the CPU twins); its second
 * frame, with more manifolds, left 6 of 18,436 manifolds uncoloured after 64 rounds, and the 110k wall
 * (1 M manifolds) put 26,659 in the overflow set, which one thread solves. The speculative rounds finish
 * near the colour count instead: a round colours, for each colour, the constraints that outrank their
 * rivals for it, and a loser's next pick skips the colour it lost (the neighbour that beat it keeps
 * it, or loses it to one that keeps it), so the colours fill in lockstep: 24 and 25 rounds for the same
 * 20 and 21 colours (the sizes within a few per cent of Jones–Plassmann's). A round walks a constraint's
 * neighbours only to find a rival for its colour (and stops at the first): measured on SwiftShader, the
 * 10×10×22 wall graph's 17,127 contacts take 200–300 ms against Jones–Plassmann's 340–1,260 ms (medians of
 * 6, alternated, load ~10 on the 2-core VM), which still left 2 in the overflow set. Three dispatches a
 * round (arguments, round, commit), one more than Jones–Plassmann's.
 *
 * Why these choices:
 *  - Greedy with priorities, not Luby's "colour c = round c" (each round an independent set of local
 *    maxima gets a colour of its own): the local maxima are about 1/(d + 1) of what is left, so that
 *    variant spends about as many colours as rounds, far more than the d + 1 a greedy colouring needs.
 *    A constraint picks the lowest colour its coloured neighbours leave, so the colours stay at most
 *    Δ + 1 (Δ: the most neighbours of a constraint) and close to model/colouring.ts's first fit.
 *  - Rounds on compacted lists: round r runs only over the constraints left after round r − 1 (an
 *    indirect dispatch from a counter), so the work is Σ_r (left after r) · degree, not R · n, and the
 *    rounds after everything is coloured dispatch no workgroup. But each of them is still three recorded
 *    dispatches (arguments, round, commit): R = 64 rounds are 192 dispatches a frame whatever is left, which on
 *    a small pile cost more than the colouring itself (SwiftShader: ~55 µs a round, 4.4 ms a colouring of the
 *    35 manifolds of a 15-box pyramid that 7 rounds colour, against 1.2 ms with R = 8). A dispatch count
 *    cannot depend on a GPU value without a readback, so a small graph (capacity ≤ LOOP_CAPACITY, option
 *    loopCapacity) runs its rounds in one workgroup instead (col_rounds_loop): round, barrier, commit,
 *    barrier, the survivors' count read by the workgroup, and the loop ends when none is left: one dispatch
 *    for all rounds, and only the rounds needed. A larger graph keeps the dispatched rounds (its first rounds
 *    need many workgroups; one workgroup would serialise them), whose empty tail is small beside its work.
 *  - K ≤ 64: the colours taken by the neighbours fit two u32 words (countTrailingZeros finds the lowest
 *    free one). Δ + 1 ≤ 64 whenever a constraint's two bodies have at most 64 constraints between them (a
 *    brick in the deep wall has ≤ 16 at rest), so the overflow set stays empty; a constraint that finds
 *    all K taken, or is still uncoloured after R rounds, is put in the overflow colour K (Box2D's overflow
 *    constraints, solved by one thread in a final pass); offsets and sizes report how many. The solvers
 *    dispatch the first colours one by one and sweep the small late ones in one workgroup
 *    (contacts/gpu-contacts.ts CONTACT_DISPATCHED_COLOURS), so a larger K costs no empty dispatches.
 *  - Determinism: a round's outcome does not depend on the threads' order (a neighbour coloured in the
 *    same round counts as uncoloured, and the picks are double-buffered; see colouring.wgsl.ts
 *    col_round), so the colours are deterministic; the grouping is a stable counting sort (by index
 *    within a colour, not the order of atomic appends), so `order` is too: the overflow pass, solved
 *    serially, sees its constraints in the same order on every run.
 *
 * Cost: init, scatter, tally and order are one thread per constraint; the scans are ⌈(nb + 1)/1024⌉
 * and ⌈(K + 1) capacity / 65 536⌉ blocks; round r reads, for each constraint still listed, its bodies'
 * masks and (unless a mask already rules its colour out) the lists of its ≤ 2 dynamic bodies up to the first
 * rival. Dispatches: 10 + the two scans' levels + 3 R − 1 (each round's arguments, the round, its commit), or
 * with the loop 11 + the scans' levels.
 *
 * Invariants: a record reads the pair buffer, the flags and the count as they stand at that point of the
 * pass (written by earlier dispatches); it writes only this module's buffers. No readback in record();
 * read() is for tests and tools.
 */
import { Counters } from './counters.js';
import { Kernel } from './dispatch.js';
import { buildKernels } from './kernels.js';
import { readBuffers } from './frames.js';
import { PrefixScan, type ScanPlan } from './scan.js';
import { hashPair } from '../math/hash-pair.js';
import { UNIFORM_OFFSET_ALIGNMENT } from './layout.js';
import {
  COUNTER_N,
  ColourParamsRecord,
  NONE,
  RoundParamsRecord,
  UNCOLOURED,
  COLOUR_BLOCK,
  clearBodiesWgsl,
  clearHistWgsl,
  initWgsl,
  offsetsWgsl,
  orderWgsl,
  roundWgsl,
  roundsLoopWgsl,
  commitWgsl,
  scatterWgsl,
  setupWgsl,
  sizeCounter,
  survivorCounter,
  tallyWgsl,
  LOOP_THREADS,
} from './colouring.wgsl.js';

export { ColourParamsRecord, RoundParamsRecord };

/** Box2D v3's colour count (its B2_GRAPH_COLOR_COUNT): the default K. */
export const DEFAULT_MAX_COLOURS = 24;
/** The most colours K a colouring may have: the neighbours' colours in two u32 words (header). */
export const MAX_COLOURS_LIMIT = 64;
/**
 * K for the contact manifolds (softstep-gpu, gs-gpu, xpbd-gpu and their CPU twins): the limit, so that no
 * manifold whose bodies hold ≤ 64 manifolds between them overflows (header); the 22-wythe brick wall needs
 * 21 at rest and more once struck, past Box2D's 24 (its piles are 2-D).
 */
export const CONTACT_MAX_COLOURS = MAX_COLOURS_LIMIT;
/**
 * The contact colours a sequential sweep dispatches one by one (Box2D v3's 24); the later ones and the
 * overflow set are swept in one workgroup (contacts/gpu-contacts.wgsl.ts tailSweepWgsl): a pile's first
 * colours are large, its late ones small, and most are empty.
 */
export const CONTACT_DISPATCHED_COLOURS = 24;
/**
 * The most constraints (the capacity) whose rounds run in one workgroup of LOOP_THREADS that stops when none is
 * left (header): 8 constraints a thread a round at the most.
 */
export const LOOP_CAPACITY = 2048;
/** The default rounds R (header: rounds after all are coloured cost three empty dispatches each, or none in the loop). */
export const DEFAULT_ROUNDS = 48;
/**
 * R for the contact manifolds (softstep-gpu, gs-gpu, xpbd-gpu and their CPU twins): the speculative rounds
 * end near the colour count (header), so R = K leaves room for every colour; a small pile's loop (LOOP_CAPACITY)
 * stops at the round that colours the last one.
 */
export const CONTACT_COLOUR_ROUNDS = CONTACT_MAX_COLOURS;

/** Where a constraint's two body indices lie in its record: u32 words. */
export interface PairLayout {
  /** u32 words from one constraint to the next (2 for packed (a, b) pairs, BodyPairRecord) */
  stride: number;
  /** word of body a within a record */
  offsetA: number;
  /** word of body b */
  offsetB: number;
}

/** A u32 in a GPU buffer: a count written by an earlier kernel (an indirect count). */
export interface GpuCount {
  buffer: GPUBuffer;
  /** byte offset, a multiple of 4 */
  offset: number;
}

export interface ColouringInputs {
  /** the constraints' records (STORAGE): two body indices each, at `layout` */
  pairs: GPUBuffer;
  /** per body one u32, bit 0 = static (STORAGE) */
  flags: GPUBuffer;
  /** the number of constraints (capped at the capacity); setHostCount gives one for a host count */
  count: GpuCount;
}

/** What read() gives (tests and tools). */
export interface ColouringResult {
  /** constraints coloured */
  count: number;
  /** per constraint its colour 0 .. K−1, or K: the overflow set */
  colour: Uint32Array;
  /** the constraints grouped by colour: colour c is order[offsets[c] .. offsets[c+1]) */
  order: Uint32Array;
  /** K + 2 entries: first of colour 0 .. K, then the count */
  offsets: Uint32Array;
  /** constraints per colour 0 .. K−1 */
  sizes: number[];
  /** the overflow set's size (colour K) */
  overflow: number;
  /** colours used (the highest non-empty colour below K, plus 1) */
  coloursUsed: number;
  /** constraints still uncoloured after each round */
  survivors: number[];
}

export interface ColouringOptions {
  /** most constraints */
  capacity: number;
  /** most bodies */
  bodyCapacity: number;
  /** K (1 .. 64), default 24 */
  maxColours?: number;
  /** R, default 48 */
  rounds?: number;
  /** degree in the priority (default false: the hash alone; header) */
  largestFirst?: boolean;
  /**
   * the most constraints whose rounds run in one workgroup that stops when none is left (col_rounds_loop), default
   * LOOP_CAPACITY: a capacity up to it takes that loop, a larger one R dispatched rounds (header)
   */
  loopCapacity?: number;
  seed?: number;
}

type KernelName = 'setup' | 'clearBodies' | 'clearHist' | 'init' | 'scatter' | 'round' | 'commit' | 'roundsLoop' | 'tally' | 'offsets' | 'order';

export class GpuColouring {
  /** per constraint its colour (0 .. K−1; K = overflow) */
  readonly colour: GPUBuffer;
  /** the constraints grouped by colour (offsets) */
  readonly order: GPUBuffer;
  /** K + 3 u32: first of colour 0 .. K in order, n, colours used */
  readonly offsets: GPUBuffer;
  /** counters: N, the survivors of each round, the size of each colour 0 .. K (gpu/counters.ts); and their dispatch arguments */
  readonly counters: Counters;
  readonly maxColours: number;
  readonly rounds: number;
  private readonly params: GPUBuffer;
  private readonly roundParams: GPUBuffer;
  private readonly hostCount: GPUBuffer;
  private readonly adj: GPUBuffer;
  private readonly ends: GPUBuffer;
  private readonly rank: GPUBuffer;
  private readonly prio: GPUBuffer;
  private readonly state: GPUBuffer;
  /** the survivors' lists of two rounds (colouring.wgsl.ts col_round) */
  private readonly lists: GPUBuffer;
  /** each uncoloured constraint's pick, two rounds' worth (colouring.wgsl.ts col_round) */
  private readonly tent: GPUBuffer;
  /** per body the colours of its constraints coloured so far (col_commit) */
  private readonly masks: GPUBuffer;
  private readonly hist: GPUBuffer;
  private plan: ScanPlan;
  private readonly histPlan: ScanPlan;
  private readonly histCount: number;
  private readonly fixed: Record<'clearBodies' | 'clearHist' | 'scatter' | 'rounds' | 'commits' | 'roundsLoop' | 'tally' | 'offsets' | 'order', GPUBindGroup | GPUBindGroup[]>;
  private inputGroups: { key: ColouringInputs; setup: GPUBindGroup; init: GPUBindGroup } | null = null;
  private bodyCount = 0;
  private layout: PairLayout = { stride: 2, offsetA: 0, offsetB: 1 };

  private constructor(
    private readonly device: GPUDevice,
    readonly capacity: number,
    readonly bodyCapacity: number,
    /** the priorities: degree first (option), else the hash alone */
    readonly largestFirst: boolean,
    readonly seed: number,
    maxColours: number,
    rounds: number,
    private readonly scan: PrefixScan,
    private readonly kernels: Partial<Record<KernelName, Kernel>>,
    counters: Counters,
    /** the rounds run in one workgroup that stops when none is left (col_rounds_loop), not dispatched one by one */
    readonly loop: boolean,
  ) {
    this.maxColours = maxColours;
    this.rounds = rounds;
    this.counters = counters;
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const n = capacity, nb = bodyCapacity;
    const make = (label: string, bytes: number, usage = storage) => device.createBuffer({ label: `colouring ${label}`, size: Math.max(16, bytes), usage });
    this.params = make('params', ColourParamsRecord.stride, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
    this.roundParams = make('rounds', UNIFORM_OFFSET_ALIGNMENT * rounds, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
    this.hostCount = make('host count', 4);
    this.adj = make('adjacency', 4 * (nb + 1 + 2 * n));
    this.ends = make('ends', 8 * n);
    this.rank = make('rank', 8 * n);
    this.prio = make('priority', 4 * n);
    this.state = make('state', 4 * n);
    this.lists = make('lists', 8 * n);
    this.tent = make('picks', 8 * n);
    this.masks = make('body masks', 8 * nb);
    this.colour = make('colour', 4 * n);
    this.order = make('order', 4 * n);
    this.offsets = make('offsets', 4 * (maxColours + 3));
    this.plan = scan.plan(this.adj, nb + 1); // remade for the body count (configure)
    // (K + 1) colours × ⌈capacity / 64⌉ blocks, colour-major (colouring.wgsl.ts tally)
    this.histCount = (maxColours + 1) * Math.ceil(n / COLOUR_BLOCK);
    this.hist = make('histogram', 4 * this.histCount);
    this.histPlan = scan.plan(this.hist, this.histCount);
    const rp = new DataView(new ArrayBuffer(UNIFORM_OFFSET_ALIGNMENT * rounds));
    for (let r = 0; r < rounds; r++) {
      const at = UNIFORM_OFFSET_ALIGNMENT * r;
      rp.setUint32(at + RoundParamsRecord.offsets.round, r, true);
      rp.setUint32(at + RoundParamsRecord.offsets.in_counter, r === 0 ? COUNTER_N : survivorCounter(r - 1), true);
      rp.setUint32(at + RoundParamsRecord.offsets.out_counter, survivorCounter(r), true);
    }
    device.queue.writeBuffer(this.roundParams, 0, rp.buffer);
    const k = kernels as Record<KernelName, Kernel>, p = this.params, c = counters.buffer;
    const slot = (r: number) => ({ buffer: this.roundParams, offset: UNIFORM_OFFSET_ALIGNMENT * r, size: RoundParamsRecord.stride });
    this.fixed = {
      clearBodies: k.clearBodies.bind([p, this.adj, this.masks]),
      scatter: k.scatter.bind([p, c, this.adj, this.ends, this.rank, this.prio]),
      // round r reads list (r + 1) % 2 … and writes list r % 2 (round 0 reads none: 0 .. n − 1); its commit reads round r's input list
      rounds: loop ? [] : Array.from({ length: rounds }, (_, r) => k.round.bind([p, slot(r), c, this.adj, this.ends, this.prio, this.state, this.lists, this.tent, this.masks], `col_round ${r}`)),
      commits: loop ? [] : Array.from({ length: rounds }, (_, r) => k.commit.bind([p, slot(r), c, this.ends, this.state, this.lists, this.masks], `col_commit ${r}`)),
      roundsLoop: loop ? k.roundsLoop.bind([p, c, this.adj, this.ends, this.prio, this.state, this.lists, this.tent, this.masks]) : [],
      clearHist: k.clearHist.bind([p, this.hist]),
      tally: k.tally.bind([p, c, this.state, this.colour, this.rank, this.hist]),
      offsets: k.offsets.bind([p, c, this.hist, this.offsets]),
      order: k.order.bind([p, c, this.colour, this.rank, this.hist, this.order]),
    };
    this.configure(bodyCapacity);
  }

  static async create(device: GPUDevice, opts: ColouringOptions): Promise<GpuColouring> {
    const { capacity, bodyCapacity } = opts;
    const maxColours = opts.maxColours ?? DEFAULT_MAX_COLOURS;
    const rounds = opts.rounds ?? DEFAULT_ROUNDS;
    if (!(capacity >= 1 && Number.isInteger(capacity))) throw new RangeError(`GpuColouring: capacity ${capacity} must be a positive integer`);
    if (!(bodyCapacity >= 1 && Number.isInteger(bodyCapacity))) throw new RangeError(`GpuColouring: body capacity ${bodyCapacity} must be a positive integer`);
    if (!(maxColours >= 1 && maxColours <= MAX_COLOURS_LIMIT && Number.isInteger(maxColours))) throw new RangeError(`GpuColouring: maxColours ${maxColours} must be an integer in 1 .. ${MAX_COLOURS_LIMIT} (a mask of two u32)`);
    if (!(rounds >= 1 && rounds < 2 ** 24 && Number.isInteger(rounds))) throw new RangeError(`GpuColouring: rounds ${rounds} must be a positive integer`);
    const loop = capacity <= (opts.loopCapacity ?? LOOP_CAPACITY);
    const scan = await PrefixScan.create(device);
    const kernels: Partial<Record<KernelName, Kernel>> = await buildKernels(device, 'gpu colouring', () => ({
      setup: Kernel.create(device, 'col_setup', setupWgsl),
      clearBodies: Kernel.create(device, 'col_clear_bodies', clearBodiesWgsl),
      clearHist: Kernel.create(device, 'col_clear_hist', clearHistWgsl),
      init: Kernel.create(device, 'col_init', initWgsl),
      scatter: Kernel.create(device, 'col_scatter', scatterWgsl),
      // the rounds: one workgroup's loop, or a dispatch per round and per commit (only the kind used is built)
      ...(loop ? { roundsLoop: Kernel.create(device, 'col_rounds_loop', roundsLoopWgsl) } : { round: Kernel.create(device, 'col_round', roundWgsl), commit: Kernel.create(device, 'col_commit', commitWgsl) }),
      tally: Kernel.create(device, 'col_tally', tallyWgsl),
      offsets: Kernel.create(device, 'col_offsets', offsetsWgsl),
      order: Kernel.create(device, 'col_order', orderWgsl),
    }));
    // counter k drives argument slot k: N, the survivors of each round, each colour's size (0 .. K)
    const counterCount = 1 + rounds + maxColours + 1;
    const slots = Array.from({ length: counterCount }, (_, k) => ({ counter: k, scale: 1, cap: capacity }));
    const counters = await Counters.create(device, counterCount, slots, 'colouring counters');
    return new GpuColouring(device, capacity, bodyCapacity, opts.largestFirst ?? false, (opts.seed ?? 0x5eed) >>> 0, maxColours, rounds, scan, kernels, counters, loop);
  }

  /** Sets the body count and where the body indices lie in a constraint record (from the next submission on). */
  configure(bodyCount: number, layout: PairLayout = this.layout): void {
    if (!(bodyCount >= 1 && bodyCount <= this.bodyCapacity && Number.isInteger(bodyCount))) throw new RangeError(`GpuColouring: ${bodyCount} bodies, capacity ${this.bodyCapacity}`);
    if (!(layout.stride >= 1 && layout.offsetA < layout.stride && layout.offsetB < layout.stride)) throw new RangeError('GpuColouring: pair layout offsets must lie within the stride');
    if (bodyCount !== this.bodyCount && this.bodyCount > 0) {
      // the scan of the body counts: over the bodies there are, not the capacity
      this.plan.destroy();
      this.plan = this.scan.plan(this.adj, bodyCount + 1);
    }
    this.bodyCount = bodyCount;
    this.layout = { ...layout };
    this.inputGroups = null; // the count word lives in params
    this.countWord = -1;
  }
  private countWord = -1;

  private writeParams(countWord: number): void {
    if (countWord === this.countWord) return;
    this.countWord = countWord;
    const R = ColourParamsRecord;
    const v = new DataView(new ArrayBuffer(R.stride));
    R.write(v, 0, 'capacity', this.capacity);
    R.write(v, 0, 'body_count', this.bodyCount);
    R.write(v, 0, 'pair_stride', this.layout.stride);
    R.write(v, 0, 'off_a', this.layout.offsetA);
    R.write(v, 0, 'off_b', this.layout.offsetB);
    R.write(v, 0, 'count_word', countWord);
    R.write(v, 0, 'max_colours', this.maxColours);
    R.write(v, 0, 'rounds', this.rounds);
    R.write(v, 0, 'seed', this.seed);
    R.write(v, 0, 'largest_first', this.largestFirst ? 1 : 0);
    this.device.queue.writeBuffer(this.params, 0, v.buffer);
  }

  /** A count known on the host, as a GPU count (written before the next submission). */
  setHostCount(count: number): GpuCount {
    if (!(count >= 0 && Number.isInteger(count))) throw new RangeError(`GpuColouring: count ${count} must be a non-negative integer`);
    this.device.queue.writeBuffer(this.hostCount, 0, new Uint32Array([count]));
    return { buffer: this.hostCount, offset: 0 };
  }

  /** Argument slot of colour c (0 .. K−1; K: the overflow set): one thread per constraint of the colour. */
  colourArgs(c: number): { buffer: GPUBuffer; offset: number } {
    if (!(c >= 0 && c <= this.maxColours)) throw new RangeError(`GpuColouring: colour ${c} of 0 .. ${this.maxColours}`);
    return { buffer: this.counters.args, offset: this.counters.argsOffset(sizeCounter(c, this.rounds)) };
  }

  /** Index of colour c's size in counters.buffer (u32). */
  sizeCounter(c: number): number {
    return sizeCounter(c, this.rounds);
  }

  /**
   * Records one colouring of `inputs` into `pass`: colour, order, offsets, the counters and the
   * per-colour arguments. No readback; the count and pairs are read as the pass has them at this point.
   */
  record(pass: GPUComputePassEncoder, inputs: ColouringInputs): void {
    const { pairs, flags, count } = inputs;
    if (count.offset % 4 !== 0) throw new RangeError('GpuColouring: the count offset must be a multiple of 4');
    if (flags.size < 4 * this.bodyCount) throw new RangeError(`GpuColouring: the flag buffer holds ${flags.size / 4} bodies, ${this.bodyCount} configured`);
    this.writeParams(count.offset / 4);
    const g = this.inputGroups;
    if (!g || g.key.pairs !== pairs || g.key.flags !== flags || g.key.count.buffer !== count.buffer) {
      const k = this.kernels as Record<KernelName, Kernel>;
      this.inputGroups = {
        key: { pairs, flags, count: { ...count } },
        setup: k.setup.bind([this.params, count.buffer, this.counters.buffer]),
        init: k.init.bind([this.params, pairs, flags, this.counters.buffer, this.adj, this.ends, this.rank, this.state, this.prio]),
      };
    }
    const ig = this.inputGroups!, f = this.fixed, k = this.kernels as Record<KernelName, Kernel>, c = this.counters;
    const argsN = c.argsOffset(COUNTER_N);
    c.recordClear(pass);
    k.clearBodies.dispatch(pass, f.clearBodies as GPUBindGroup, this.bodyCount + 1);
    k.setup.dispatch(pass, ig.setup, 1);
    c.recordArgs(pass);
    k.init.dispatchIndirect(pass, ig.init, c.args, argsN);
    this.plan.record(pass);
    k.scatter.dispatchIndirect(pass, f.scatter as GPUBindGroup, c.args, argsN);
    if (this.loop) {
      // every round in one workgroup, until none is left (colouring.wgsl.ts col_rounds_loop)
      k.roundsLoop.dispatch(pass, f.roundsLoop as GPUBindGroup, LOOP_THREADS, LOOP_THREADS);
    } else {
      const rounds = f.rounds as GPUBindGroup[], commits = f.commits as GPUBindGroup[];
      for (let r = 0; r < this.rounds; r++) {
        if (r > 0) c.recordArgs(pass);
        const args = r === 0 ? argsN : c.argsOffset(survivorCounter(r - 1));
        k.round.dispatchIndirect(pass, rounds[r], c.args, args);
        // the round's colours into its bodies' masks, over the same list (the last round's are read by none)
        if (r + 1 < this.rounds) k.commit.dispatchIndirect(pass, commits[r], c.args, args);
      }
    }
    k.clearHist.dispatch(pass, f.clearHist as GPUBindGroup, this.histCount);
    k.tally.dispatchIndirect(pass, f.tally as GPUBindGroup, c.args, argsN); // 64 per workgroup: one block each
    this.histPlan.record(pass);
    k.offsets.dispatch(pass, f.offsets as GPUBindGroup, 1);
    k.order.dispatchIndirect(pass, f.order as GPUBindGroup, c.args, argsN);
    c.recordArgs(pass); // the per-colour slots, from the sizes
  }

  /** Reads the last colouring back (tests and tools, not frames). */
  async read(): Promise<ColouringResult> {
    const [cnt, col, ord, off] = await readBuffers(this.device, [this.counters.buffer, this.colour, this.order, this.offsets]);
    const counters = new Uint32Array(cnt);
    const n = counters[COUNTER_N], K = this.maxColours;
    const offsets = new Uint32Array(off, 0, K + 2).slice();
    const sizes = Array.from({ length: K }, (_, c) => counters[sizeCounter(c, this.rounds)]);
    return {
      count: n,
      colour: new Uint32Array(col, 0, n).slice(),
      order: new Uint32Array(ord, 0, n).slice(),
      offsets,
      sizes,
      overflow: counters[sizeCounter(K, this.rounds)],
      coloursUsed: new Uint32Array(off)[K + 2],
      survivors: Array.from({ length: this.rounds }, (_, r) => counters[survivorCounter(r)]),
    };
  }

  destroy(): void {
    this.histPlan.destroy();
    for (const b of [this.hist, this.params, this.roundParams, this.hostCount, this.adj, this.ends, this.rank, this.prio, this.state, this.lists, this.tent, this.masks, this.colour, this.order, this.offsets]) b.destroy();
    this.plan.destroy();
    this.counters.destroy();
  }
}

/** colouring.wgsl.ts mix: the priority hash (u32 arithmetic as WGSL's, wrapping). */
function mix(v: number): number {
  let x = v >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** The lowest colour not set in the 64-colour mask (lo, hi) (64 when all are): colouring.wgsl.ts lowest_free. */
function lowestFree(lo: number, hi: number): number {
  const trailing = (x: number) => 31 - Math.clz32(x & -x); // x ≠ 0
  if (~lo !== 0) return trailing(~lo);
  if (~hi !== 0) return 32 + trailing(~hi);
  return 64;
}

/**
 * The CPU twin of GpuColouring (same stages, same priorities, same rounds): per constraint its colour,
 * 0 .. K−1, or K for the overflow set. `isStatic[b]` (or b ≥ bodyCount) marks a body that never conflicts.
 */
export function colourJonesPlassmannCpu(
  ib0: ArrayLike<number>,
  ib1: ArrayLike<number>,
  count: number,
  isStatic: ArrayLike<number>,
  bodyCount: number,
  opts: { maxColours?: number; rounds?: number; largestFirst?: boolean; seed?: number } = {},
): { colour: Uint32Array; survivors: number[] } {
  const K = opts.maxColours ?? DEFAULT_MAX_COLOURS, R = opts.rounds ?? DEFAULT_ROUNDS;
  if (!(K >= 1 && K <= MAX_COLOURS_LIMIT)) throw new RangeError(`colourJonesPlassmannCpu: maxColours ${K} must be in 1 .. ${MAX_COLOURS_LIMIT}`);
  const seed = (opts.seed ?? 0x5eed) >>> 0, largestFirst = opts.largestFirst ?? false;
  // init: dynamic ends and the per-body counts; scan; scatter (here in index order: a list's order does
  // not change the outcome, only which neighbours are met first)
  const endA = new Uint32Array(count), endB = new Uint32Array(count);
  const first = new Uint32Array(bodyCount + 1);
  const dyn = (b: number) => b < bodyCount && !isStatic[b];
  for (let i = 0; i < count; i++) {
    const a = ib0[i], b = ib1[i];
    endA[i] = dyn(a) ? a : NONE;
    endB[i] = dyn(b) && b !== a ? b : NONE;
    if (endA[i] !== NONE) first[endA[i] + 1]++;
    if (endB[i] !== NONE) first[endB[i] + 1]++;
  }
  for (let b = 0; b < bodyCount; b++) first[b + 1] += first[b];
  const list = new Uint32Array(first[bodyCount]);
  const fill = first.slice(0, bodyCount);
  for (let i = 0; i < count; i++) {
    if (endA[i] !== NONE) list[fill[endA[i]]++] = i;
    if (endB[i] !== NONE) list[fill[endB[i]]++] = i;
  }
  const prio = new Uint32Array(count);
  const hseed = mix(seed);
  for (let i = 0; i < count; i++) {
    let degree = 0;
    for (const e of [endA[i], endB[i]]) if (e !== NONE) degree += first[e + 1] - first[e] - 1;
    const h = mix((hashPair(ib0[i], ib1[i]) ^ hseed) >>> 0);
    prio[i] = largestFirst ? ((Math.min(degree, 255) << 24) | (h >>> 8)) >>> 0 : h;
  }
  const outranks = (j: number, i: number) => prio[j] > prio[i] || (prio[j] === prio[i] && j > i);
  const state = new Uint32Array(count).fill(UNCOLOURED);
  // each uncoloured constraint's pick: round r reads prev (round r − 1's; round 0: colour 0 for all), writes cur
  let prev = new Uint32Array(count), cur = new Uint32Array(count);
  let left = Uint32Array.from({ length: count }, (_, i) => i);
  const survivors: number[] = [];
  for (let r = 0; r < R; r++) {
    const next: number[] = [];
    for (const i of left) {
      const t = r > 0 ? prev[i] : 0;
      // the colours of the neighbours coloured in rounds < r, as two 32-bit words
      let takenLo = 0, takenHi = 0, keeps = true;
      for (const b of [endA[i], endB[i]]) {
        if (b === NONE) continue;
        for (let k = first[b]; k < first[b + 1]; k++) {
          const j = list[k];
          if (j === i) continue;
          const s = state[j];
          if (s === UNCOLOURED || s >>> 8 === r) {
            if ((r > 0 ? prev[j] : 0) === t && outranks(j, i)) keeps = false;
          } else {
            const c = s & 255;
            if (c < K) {
              if (c < 32) takenLo |= 1 << c;
              else takenHi |= 1 << (c - 32);
            }
            if (c === t) keeps = false;
          }
        }
      }
      if (keeps) {
        state[i] = ((r << 8) | t) >>> 0;
        continue;
      }
      if (t < 32) takenLo |= 1 << t;
      else takenHi |= 1 << (t - 32);
      const c = lowestFree(takenLo, takenHi);
      if (c >= K) state[i] = ((r << 8) | K) >>> 0;
      else {
        cur[i] = c;
        next.push(i);
      }
    }
    [prev, cur] = [cur, prev];
    left = Uint32Array.from(next);
    survivors.push(left.length);
  }
  const colour = Uint32Array.from(state, (s) => (s === UNCOLOURED ? K : Math.min(s & 255, K)));
  return { colour, survivors };
}
