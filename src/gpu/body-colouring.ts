/**
 * Body colouring on the GPU: Jones–Plassmann with hashed priorities over a body adjacency (the ordering
 * a per-body Gauss–Seidel needs: AVBD's primal update, Giles et al. 2025 §3.6), the GPU twin of
 * model/body-colouring.ts bodyColoursJonesPlassmann (the same colours bit for bit; test/avbd-gpu.test.ts
 * checks that and zero clashes on random graphs). gpu/colouring.ts colours constraints (no two sharing
 * a body); this colours bodies (no two sharing a constraint): the vertices of the graph, not its edges.
 *
 * Input, in one u32 buffer owned by the caller (`graph`), at word offsets given at creation:
 *   adjacency   [n + 1] CSR offsets (absolute word indices into `graph`), then the neighbour lists
 *   active      [n] 1 where the body is coloured and conflicts (dynamic), 0 where not (a fixed body never
 *               moves, so it conflicts with nothing: the whole ground may touch one colour's bodies)
 * Output, written into the same buffer:
 *   colour_info [2 K] (start, count) of each colour's bodies in `order`; [3 K] the indirect dispatch
 *               arguments of each colour (⌈count / 64⌉, 1, 1), K = BODY_COLOUR_LIMIT
 *   order       the active bodies grouped by colour (their order within a colour is that of atomic
 *               appends: bodies of one colour are independent, so any order gives the same result)
 *   summary     [2] the number of colours, the bodies left to the serial clean-up
 *
 * Kernels (per body unless said):
 *   bc_init      colour word ← UNCOLOURED (active) or INACTIVE; thread c < K clears colour c's count
 *   bc_round r   (r = 0 .. R − 1) an uncoloured body that outranks every uncoloured neighbour takes the
 *                lowest colour none of its coloured neighbours has; a neighbour's word carries the round
 *                it was coloured in (c | (r + 1) << 8), and one coloured in this round counts as
 *                uncoloured, so what a thread reads of a neighbour being written cannot change its
 *                decision (deterministic; model/body-colouring.ts says why no two neighbours win at once)
 *   bc_cleanup   one thread: the bodies still uncoloured, in index order, greedily (complete whatever R)
 *   bc_count     each body's rank in its colour (atomicAdd on the colour's count)
 *   bc_offsets   one thread: the colours' starts (a scan of K counts), the indirect arguments, the summary
 *   bc_scatter   order[start[c] + rank] = body
 * Dispatches: R + 5, all host-counted (one thread per body); nothing is read back.
 *
 * Invariants: the caller's graph is not written but for colour_info, order and summary; a body with 32
 * active neighbours or more cannot be coloured in K = 32 colours, which the caller checks on the host
 * (BODY_COLOUR_LIMIT: the joints' degree is known there).
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
  /** 2 words */
  summary: number;
}

const K = BODY_COLOUR_LIMIT;
const UNCOLOURED = 0xffffffff;
const INACTIVE = 0xfffffffe;

const common = /* wgsl */ `
struct Layout { body_count: u32, adjacency: u32, active_flags: u32, colour_info: u32, order: u32, summary: u32, round_tag: u32, _pad: u32, };
@group(0) @binding(0) var<uniform> lay: Layout;
${THREAD_INDEX_WGSL}
const K = ${K}u;
const UNCOLOURED = ${UNCOLOURED}u;
const INACTIVE = ${INACTIVE}u;
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
`;

const initWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> graph: array<u32>;
@group(0) @binding(2) var<storage, read_write> colour: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> counts: array<atomic<u32>>;
${kernelEntry('bc_init')} {
  let i = thread_index(gid, nwg);
  if (i < K) { atomicStore(&counts[i], 0u); }
  if (i >= lay.body_count) { return; }
  atomicStore(&colour[i], select(INACTIVE, UNCOLOURED, graph[lay.active_flags + i] != 0u));
}
`;

/** the mask of the colours i's coloured neighbours hold; in a round (strict), none if an uncoloured neighbour outranks i */
const maskWgsl = /* wgsl */ `
struct Free { mask: u32, winner: bool, };
fn neighbour_mask(i: u32, strict: bool) -> Free {
  var mask = 0u;
  for (var e = graph[lay.adjacency + i]; e < graph[lay.adjacency + i + 1u]; e++) {
    let j = graph[e];
    if (j == i || graph[lay.active_flags + j] == 0u) { continue; }
    let w = atomicLoad(&colour[j]);
    let uncoloured = w == UNCOLOURED || (strict && (w >> 8u) == lay.round_tag);
    if (uncoloured) {
      if (strict && outranks(j, i)) { return Free(0u, false); }
      continue;
    }
    mask |= 1u << (w & 255u);
  }
  return Free(mask, true);
}
`;

const roundWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> graph: array<u32>;
@group(0) @binding(2) var<storage, read_write> colour: array<atomic<u32>>;
${maskWgsl}
${kernelEntry('bc_round')} {
  let i = thread_index(gid, nwg);
  if (i >= lay.body_count) { return; }
  if (atomicLoad(&colour[i]) != UNCOLOURED) { return; }
  let f = neighbour_mask(i, true);
  if (!f.winner) { return; }
  // the lowest colour no coloured neighbour has (f.mask ≠ all ones: the degree is < K, checked on the host)
  atomicStore(&colour[i], countTrailingZeros(~f.mask) | (lay.round_tag << 8u));
}
`;

const cleanupWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> graph: array<u32>;
@group(0) @binding(2) var<storage, read_write> colour: array<atomic<u32>>;
${maskWgsl}
${kernelEntry('bc_cleanup')} {
  if (thread_index(gid, nwg) != 0u) { return; }
  var left = 0u;
  for (var i = 0u; i < lay.body_count; i++) {
    if (atomicLoad(&colour[i]) != UNCOLOURED) { continue; }
    let f = neighbour_mask(i, false);
    atomicStore(&colour[i], countTrailingZeros(~f.mask) | (lay.round_tag << 8u));
    left++;
  }
  graph[lay.summary + 1u] = left;
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
  rank[i] = atomicAdd(&counts[w & 255u], 1u);
}
`;

const offsetsWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> graph: array<u32>;
@group(0) @binding(2) var<storage, read> counts: array<u32>;
${kernelEntry('bc_offsets')} {
  if (thread_index(gid, nwg) != 0u) { return; }
  var start = 0u;
  var colours = 0u;
  for (var c = 0u; c < K; c++) {
    let n = counts[c];
    graph[lay.colour_info + 2u * c] = start;
    graph[lay.colour_info + 2u * c + 1u] = n;
    graph[lay.colour_info + 2u * K + 3u * c] = (n + ${64 - 1}u) / 64u;
    graph[lay.colour_info + 2u * K + 3u * c + 1u] = 1u;
    graph[lay.colour_info + 2u * K + 3u * c + 2u] = 1u;
    start += n;
    if (n > 0u) { colours = c + 1u; }
  }
  graph[lay.summary] = colours;
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
  if (w == INACTIVE) { return; }
  let c = w & 255u;
  graph[lay.order + graph[lay.colour_info + 2u * c] + rank[i]] = i;
}
`;

/** The GPU body colouring over a caller's graph buffer (header). */
export class GpuBodyColouring {
  private readonly kernels: Record<'init' | 'round' | 'cleanup' | 'count' | 'offsets' | 'scatter', Kernel>;
  private readonly colour: GPUBuffer;
  private readonly counts: GPUBuffer;
  private readonly rank: GPUBuffer;
  private readonly layoutBuffer: GPUBuffer;
  private readonly stride: number;
  private readonly groups: Record<string, GPUBindGroup[]> = {};

  private constructor(
    private readonly device: GPUDevice,
    readonly layout: BodyGraphLayout,
    graph: GPUBuffer,
    readonly rounds: number,
    kernels: GpuBodyColouring['kernels'],
  ) {
    this.kernels = kernels;
    const n = Math.max(1, layout.bodyCount);
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.colour = device.createBuffer({ label: 'body_colour', size: 4 * n, usage: storage });
    this.counts = device.createBuffer({ label: 'body_colour_counts', size: 4 * K, usage: storage });
    this.rank = device.createBuffer({ label: 'body_colour_rank', size: 4 * n, usage: storage });
    // one 32-byte Layout record per round tag 1 .. rounds + 1 (the clean-up's is rounds + 1), each at an aligned offset
    this.stride = Math.max(32, device.limits.minUniformBufferOffsetAlignment);
    this.layoutBuffer = device.createBuffer({ label: 'body_colour_layout', size: this.stride * (rounds + 1), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const words = new Uint32Array((this.stride / 4) * (rounds + 1));
    for (let r = 0; r <= rounds; r++) words.set([layout.bodyCount, layout.adjacency, layout.active, layout.colourInfo, layout.order, layout.summary, r + 1, 0], (r * this.stride) / 4);
    device.queue.writeBuffer(this.layoutBuffer, 0, words);
    const rec = (r: number) => ({ buffer: this.layoutBuffer, offset: r * this.stride, size: 32 });
    const k = this.kernels;
    this.groups.init = [k.init.bind([rec(0), graph, this.colour, this.counts])];
    this.groups.round = Array.from({ length: rounds }, (_, r) => k.round.bind([rec(r), graph, this.colour]));
    this.groups.cleanup = [k.cleanup.bind([rec(rounds), graph, this.colour])];
    this.groups.count = [k.count.bind([rec(0), this.colour, this.counts, this.rank])];
    this.groups.offsets = [k.offsets.bind([rec(0), graph, this.counts])];
    this.groups.scatter = [k.scatter.bind([rec(0), graph, this.colour, this.rank])];
  }

  /** The colouring of the graph in `graph` (STORAGE usage) at `layout`, in `rounds` rounds before the clean-up. */
  static async create(device: GPUDevice, graph: GPUBuffer, layout: BodyGraphLayout, rounds = BODY_COLOUR_ROUNDS): Promise<GpuBodyColouring> {
    const kernels = await buildKernels(device, 'body colouring', () => ({
      init: Kernel.create(device, 'bc_init', initWgsl),
      round: Kernel.create(device, 'bc_round', roundWgsl),
      cleanup: Kernel.create(device, 'bc_cleanup', cleanupWgsl),
      count: Kernel.create(device, 'bc_count', countWgsl),
      offsets: Kernel.create(device, 'bc_offsets', offsetsWgsl),
      scatter: Kernel.create(device, 'bc_scatter', scatterWgsl),
    }));
    return new GpuBodyColouring(device, layout, graph, rounds, kernels);
  }

  /** Records the colouring into `pass` (no readback). */
  record(pass: GPUComputePassEncoder): void {
    const n = this.layout.bodyCount, k = this.kernels, g = this.groups;
    k.init.dispatch(pass, g.init[0], Math.max(n, K));
    for (let r = 0; r < this.rounds; r++) k.round.dispatch(pass, g.round[r], n);
    k.cleanup.dispatch(pass, g.cleanup[0], 1);
    k.count.dispatch(pass, g.count[0], n);
    k.offsets.dispatch(pass, g.offsets[0], 1);
    k.scatter.dispatch(pass, g.scatter[0], n);
  }

  /** The colour word of each body (tests: colour = w & 255, INACTIVE 0xfffffffe). */
  get colourBuffer(): GPUBuffer {
    return this.colour;
  }

  destroy(): void {
    this.colour.destroy();
    this.counts.destroy();
    this.rank.destroy();
    this.layoutBuffer.destroy();
  }
}

export { UNCOLOURED as BODY_UNCOLOURED, INACTIVE as BODY_INACTIVE };
