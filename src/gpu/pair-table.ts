/**
 * A GPU hash table from a body pair (a, b) to last frame's manifold record, so that the narrow phase of
 * a new frame finds the impulses of the pair's old points (warm start) with no readback: the GPU side of
 * the CPU store's lookup (collision/manifolds.ts ManifoldStore.find; same hash, hashPair).
 *
 * Per frame:
 *   recordInsert(records, count)   the table cleared, then each record t < count (last frame's manifolds:
 *                                  any u32 buffer with the pair at PairLayout words) inserted as the value t
 *   recordFind(records, queries, count)   for each query q (the new frame's pairs) found[q] = the record t
 *                                  whose pair equals the query's, or NOT_FOUND
 * `records` must be the same buffer, unchanged, for the insert and the finds that use it (last frame's
 * manifolds are kept until the new frame has copied what it needs: a ping-pong pair of manifold buffers).
 *
 * Keys are ordered pairs, compared exactly: (a, b) and (b, a) are different keys (the CPU store's
 * acquire(a, b) in the order the narrow phase gives them; a canonical order is the producer's business).
 *
 * The table: C = a power of two ≥ 2 · maxKeys slots, each one u32 holding a record index or EMPTY;
 * at most maxKeys records are inserted (the count is capped there; the rest are counted as overflow), so
 * the load factor is ≤ 1/2 and a lookup's expected probes are ≤ (1 + 1/(1 − α)²)/2 = 2.5 for an absent
 * key and (1 + 1/(1 − α))/2 = 1.5 for a present one (Knuth's linear-probing analysis, TAOCP vol. 3 §6.4).
 *
 * Insert without locks on a 64-bit key (WebGPU has 32-bit atomics only): the slot stores the record
 * index t, not the key, and the key is read from the record, which an earlier dispatch wrote and nobody
 * writes during the insert. Thread t probes slots h(a, b), h + 1, … (mod C):
 *   CAS(slot, EMPTY → t)         won: the key is in, as t (the only write that fills a slot)
 *   lost to (or found) a record u with the same pair: a duplicate: atomicMin(slot, t), so the slot ends
 *                                holding the smallest record of that pair whatever the threads' order
 *   lost to a record of another pair: next slot
 * A slot goes from EMPTY to a record once, and then only to a smaller record of the same pair, so the key a
 * slot stands for never changes: every thread that probes it sees the same key, two threads with one
 * pair meet at the first slot either of them claims (both walk the same sequence, and every slot before
 * it holds another pair for good), and a pair is in the table once. No thread waits on another: a failed
 * CAS means another thread filled the slot (progress), or was spurious (atomicCompareExchangeWeak may
 * fail spuriously: the old value is then EMPTY and the CAS is retried). A probe gives up after C slots
 * (only a full table: impossible at α ≤ 1/2; counted as overflow all the same).
 *
 * Counters (gpu/counters.ts): [INSERT_N, FIND_N, INSERTED, DUPLICATES, OVERFLOW, FIND_OVERFLOW (queries
 * beyond queryCapacity, not looked up)]; slots 0 and 1 are the
 * insert's and the find's dispatch arguments (findArgs: one thread per query, for a consumer).
 * Invariants: no readback in record*; read() is for tests and tools. Keys never change during a record.
 */
import { Counters } from './counters.js';
import { Kernel, THREAD_INDEX_WGSL, kernelEntry } from './dispatch.js';
import { buildKernels } from './kernels.js';
import { readBuffers } from './frames.js';
import { defineRecord } from './layout.js';
import type { GpuCount, PairLayout } from './colouring.js';

export type { GpuCount, PairLayout };

export const EMPTY = 0xffffffff;
/** found[q] of a query whose pair was not inserted */
export const NOT_FOUND = 0xffffffff;
export const COUNTER_INSERT_N = 0, COUNTER_FIND_N = 1, COUNTER_INSERTED = 2, COUNTER_DUPLICATES = 3, COUNTER_OVERFLOW = 4, COUNTER_FIND_OVERFLOW = 5;

export const PairTableParamsRecord = defineRecord('PairTableParams', [
  ['mask', 'u32', 'slots − 1 (a power of two less one)'],
  ['max_keys', 'u32', 'records inserted at most (load ≤ 1/2)'],
  ['query_capacity', 'u32', 'queries at most (found entries)'],
  ['key_stride', 'u32', 'u32 words per record'],
  ['key_a', 'u32', 'word of a in a record'],
  ['key_b', 'u32', 'word of b'],
  ['query_stride', 'u32', 'u32 words per query'],
  ['query_a', 'u32', 'word of a in a query'],
  ['query_b', 'u32', 'word of b'],
  ['insert_word', 'u32', 'word of the insert count source holding its count'],
  ['find_word', 'u32', 'word of the find count source holding its count'],
] as const);

const common = /* wgsl */ `
${PairTableParamsRecord.wgsl}
@group(0) @binding(0) var<uniform> params: PairTableParams;
const EMPTY: u32 = ${EMPTY}u;
${THREAD_INDEX_WGSL}
// math/hash-pair.ts hashPair, in u32 arithmetic (wrapping, as Math.imul)
fn hash_pair(a: u32, b: u32) -> u32 {
  var h = (a * 0x9e3779b1u) ^ ((b + 0x7f4a7c15u) * 0x85ebca77u);
  h ^= h >> 15u;
  return h * 0x2c1b3c6du;
}
`;

const clearWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read_write> table: array<u32>;
${kernelEntry('pt_clear')} {
  let s = thread_index(gid, nwg);
  if (s <= params.mask) { table[s] = EMPTY; }
}
`;

// n = min(count, cap); what lies beyond the cap is counted as the insert's or the find's overflow
const setupWgsl = (name: string, word: string, counter: number, cap: string, overflow: number) => /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> count_src: array<u32>;
@group(0) @binding(2) var<storage, read_write> counters: array<u32>;
${kernelEntry(name)} {
  if (thread_index(gid, nwg) != 0u) { return; }
  let c = count_src[${word}];
  let n = min(c, ${cap});
  counters[${counter}u] = n;
  counters[${overflow}u] += c - n;
}
`;

const insertWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> records: array<u32>;
@group(0) @binding(2) var<storage, read_write> table: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
fn same_pair(u: u32, a: u32, b: u32) -> bool {
  return records[params.key_stride * u + params.key_a] == a && records[params.key_stride * u + params.key_b] == b;
}
// the lock-free insert of the header: claim an EMPTY slot, or meet the pair's slot (duplicate), or probe on
${kernelEntry('pt_insert')} {
  let t = thread_index(gid, nwg);
  if (t >= atomicLoad(&counters[${COUNTER_INSERT_N}u])) { return; }
  let a = records[params.key_stride * t + params.key_a];
  let b = records[params.key_stride * t + params.key_b];
  var s = hash_pair(a, b) & params.mask;
  for (var probe = 0u; probe <= params.mask; probe++) {
    var r = atomicCompareExchangeWeak(&table[s], EMPTY, t);
    while (!r.exchanged && r.old_value == EMPTY) { r = atomicCompareExchangeWeak(&table[s], EMPTY, t); } // spurious failure
    if (r.exchanged) { atomicAdd(&counters[${COUNTER_INSERTED}u], 1u); return; }
    if (same_pair(r.old_value, a, b)) {
      atomicMin(&table[s], t);
      atomicAdd(&counters[${COUNTER_DUPLICATES}u], 1u);
      return;
    }
    s = (s + 1u) & params.mask;
  }
  atomicAdd(&counters[${COUNTER_OVERFLOW}u], 1u);
}
`;

const findWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> records: array<u32>;
@group(0) @binding(2) var<storage, read> queries: array<u32>;
@group(0) @binding(3) var<storage, read> table: array<u32>;
@group(0) @binding(4) var<storage, read> counters: array<u32>;
@group(0) @binding(5) var<storage, read_write> found: array<u32>;
// probe from the pair's home slot until its record or an EMPTY slot (linear probing: no deletions, so
// an EMPTY slot ends the pair's run)
${kernelEntry('pt_find')} {
  let q = thread_index(gid, nwg);
  if (q >= counters[${COUNTER_FIND_N}u]) { return; }
  let a = queries[params.query_stride * q + params.query_a];
  let b = queries[params.query_stride * q + params.query_b];
  var s = hash_pair(a, b) & params.mask;
  var hit = ${NOT_FOUND}u;
  for (var probe = 0u; probe <= params.mask; probe++) {
    let u = table[s];
    if (u == EMPTY) { break; }
    if (records[params.key_stride * u + params.key_a] == a && records[params.key_stride * u + params.key_b] == b) { hit = u; break; }
    s = (s + 1u) & params.mask;
  }
  found[q] = hit;
}
`;

function nextPow2(v: number): number {
  let p = 1;
  while (p < v) p *= 2;
  return p;
}

/** What read() gives (tests and tools). */
export interface PairTableState {
  /** records inserted this frame (min(count, maxKeys)) and queries looked up */
  insertCount: number;
  findCount: number;
  /** distinct pairs in the table */
  inserted: number;
  /** records whose pair was already in (kept once: the smallest record) */
  duplicates: number;
  /** records not inserted: beyond maxKeys, or (impossible at α ≤ 1/2) no free slot */
  overflow: number;
  /** queries beyond queryCapacity, not looked up */
  findOverflow: number;
  /** per query the record found, or NOT_FOUND */
  found: Uint32Array;
  /** the slots (record index or EMPTY) */
  table: Uint32Array;
}

export class GpuPairTable {
  /** slots: a power of two ≥ 2 · maxKeys */
  readonly slots: number;
  /** per query (recordFind) the record of its pair last frame, or NOT_FOUND */
  readonly found: GPUBuffer;
  readonly table: GPUBuffer;
  /** [INSERT_N, FIND_N, INSERTED, DUPLICATES, OVERFLOW, FIND_OVERFLOW] and the insert's and the find's dispatch arguments */
  readonly counters: Counters;
  private readonly params: GPUBuffer;
  private readonly hostCounts: GPUBuffer;
  private readonly clearGroup: GPUBindGroup;
  private groups = new Map<string, GPUBindGroup>();
  private ids = new WeakMap<GPUBuffer, number>();
  private nextId = 0;
  private keyLayout: PairLayout = { stride: 2, offsetA: 0, offsetB: 1 };
  private queryLayout: PairLayout = { stride: 2, offsetA: 0, offsetB: 1 };

  private constructor(
    private readonly device: GPUDevice,
    readonly maxKeys: number,
    readonly queryCapacity: number,
    private readonly kernels: Record<'clear' | 'setupInsert' | 'setupFind' | 'insert' | 'find', Kernel>,
    counters: Counters,
  ) {
    this.slots = nextPow2(Math.max(2, 2 * maxKeys));
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.table = device.createBuffer({ label: 'pair table', size: 4 * this.slots, usage: storage });
    this.found = device.createBuffer({ label: 'pair table found', size: Math.max(16, 4 * queryCapacity), usage: storage });
    this.params = device.createBuffer({ label: 'pair table params', size: PairTableParamsRecord.stride, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.hostCounts = device.createBuffer({ label: 'pair table host counts', size: 16, usage: storage });
    this.counters = counters;
    this.clearGroup = kernels.clear.bind([this.params, this.table]);
    this.configure(this.keyLayout, this.queryLayout);
  }

  /** A table for up to `maxKeys` records (load ≤ 1/2) and `queryCapacity` lookups per find. */
  static async create(device: GPUDevice, maxKeys: number, queryCapacity: number): Promise<GpuPairTable> {
    if (!(maxKeys >= 1 && maxKeys <= 2 ** 30 && Number.isInteger(maxKeys))) throw new RangeError(`GpuPairTable: maxKeys ${maxKeys} must be an integer in 1 .. 2³⁰`);
    if (!(queryCapacity >= 1 && Number.isInteger(queryCapacity))) throw new RangeError(`GpuPairTable: query capacity ${queryCapacity} must be a positive integer`);
    const kernels = await buildKernels(device, 'gpu pair table', () => ({
      clear: Kernel.create(device, 'pt_clear', clearWgsl),
      setupInsert: Kernel.create(device, 'pt_setup_insert', setupWgsl('pt_setup_insert', 'params.insert_word', COUNTER_INSERT_N, 'params.max_keys', COUNTER_OVERFLOW)),
      setupFind: Kernel.create(device, 'pt_setup_find', setupWgsl('pt_setup_find', 'params.find_word', COUNTER_FIND_N, 'params.query_capacity', COUNTER_FIND_OVERFLOW)),
      insert: Kernel.create(device, 'pt_insert', insertWgsl),
      find: Kernel.create(device, 'pt_find', findWgsl),
    }));
    const counters = await Counters.create(device, 6, [
      { counter: COUNTER_INSERT_N, scale: 1, cap: maxKeys },
      { counter: COUNTER_FIND_N, scale: 1, cap: queryCapacity },
    ], 'pair table counters');
    return new GpuPairTable(device, maxKeys, queryCapacity, kernels, counters);
  }

  /** Where the pair lies in an inserted record and in a query (u32 words); from the next submission on. */
  configure(keys: PairLayout, queries: PairLayout = keys): void {
    for (const l of [keys, queries]) if (!(l.stride >= 1 && l.offsetA < l.stride && l.offsetB < l.stride)) throw new RangeError('GpuPairTable: pair layout offsets must lie within the stride');
    this.keyLayout = { ...keys };
    this.queryLayout = { ...queries };
  }

  private words = { insert: 0, find: 1 };
  private writeParams(which: 'insert' | 'find', countWord: number): void {
    this.words[which] = countWord;
    const R = PairTableParamsRecord, v = new DataView(new ArrayBuffer(R.stride));
    R.write(v, 0, 'mask', this.slots - 1);
    R.write(v, 0, 'max_keys', this.maxKeys);
    R.write(v, 0, 'query_capacity', this.queryCapacity);
    R.write(v, 0, 'key_stride', this.keyLayout.stride);
    R.write(v, 0, 'key_a', this.keyLayout.offsetA);
    R.write(v, 0, 'key_b', this.keyLayout.offsetB);
    R.write(v, 0, 'query_stride', this.queryLayout.stride);
    R.write(v, 0, 'query_a', this.queryLayout.offsetA);
    R.write(v, 0, 'query_b', this.queryLayout.offsetB);
    R.write(v, 0, 'insert_word', this.words.insert);
    R.write(v, 0, 'find_word', this.words.find);
    this.device.queue.writeBuffer(this.params, 0, v.buffer);
  }

  /** Host-known counts as GPU counts (insert: word 0, find: word 1; written before the next submission). */
  setHostCount(which: 'insert' | 'find', count: number): GpuCount {
    if (!(count >= 0 && Number.isInteger(count))) throw new RangeError(`GpuPairTable: count ${count} must be a non-negative integer`);
    const offset = which === 'insert' ? 0 : 4;
    this.device.queue.writeBuffer(this.hostCounts, offset, new Uint32Array([count]));
    return { buffer: this.hostCounts, offset };
  }

  /** Indirect arguments of one thread per query of the last find (a consumer of `found`). */
  get findArgs(): { buffer: GPUBuffer; offset: number } {
    return { buffer: this.counters.args, offset: this.counters.argsOffset(1) };
  }

  private group(kernel: keyof GpuPairTable['kernels'], buffers: GPUBuffer[]): GPUBindGroup {
    const key = `${kernel}:${buffers.map((b) => this.id(b)).join(',')}`;
    let g = this.groups.get(key);
    if (!g) {
      g = this.kernels[kernel].bind([this.params, ...buffers]);
      this.groups.set(key, g);
    }
    return g;
  }

  private id(b: GPUBuffer): number {
    let k = this.ids.get(b);
    if (k === undefined) this.ids.set(b, (k = this.nextId++));
    return k;
  }

  private checkCount(count: GpuCount): void {
    if (count.offset % 4 !== 0) throw new RangeError('GpuPairTable: a count offset must be a multiple of 4');
  }

  /**
   * Records the rebuild: the table cleared, then records 0 .. min(count, maxKeys) − 1 of `records`
   * inserted (the value of record t is t). Counters INSERTED, DUPLICATES, OVERFLOW are this rebuild's.
   * The count's word offset is a parameter written with queue.writeBuffer: every insert of one
   * submission reads its count at the word given last (as every frame does: the same counter).
   */
  recordInsert(pass: GPUComputePassEncoder, records: GPUBuffer, count: GpuCount): void {
    this.checkCount(count);
    this.writeParams('insert', count.offset / 4);
    const c = this.counters;
    c.recordClear(pass);
    this.kernels.clear.dispatch(pass, this.clearGroup, this.slots);
    this.kernels.setupInsert.dispatch(pass, this.group('setupInsert', [count.buffer, c.buffer]), 1);
    c.recordArgs(pass);
    this.kernels.insert.dispatchIndirect(pass, this.group('insert', [records, this.table, c.buffer]), c.args, c.argsOffset(0));
  }

  /** Records the lookups of queries 0 .. min(count, queryCapacity) − 1 into `found` (records: as inserted). */
  recordFind(pass: GPUComputePassEncoder, records: GPUBuffer, queries: GPUBuffer, count: GpuCount): void {
    this.checkCount(count);
    this.writeParams('find', count.offset / 4); // as recordInsert's: the word given last in a submission
    const c = this.counters;
    this.kernels.setupFind.dispatch(pass, this.group('setupFind', [count.buffer, c.buffer]), 1);
    c.recordArgs(pass);
    this.kernels.find.dispatchIndirect(pass, this.group('find', [records, queries, this.table, c.buffer, this.found]), c.args, c.argsOffset(1));
  }

  /** Reads the counters, the found entries and the table back (tests and tools, not frames). */
  async read(): Promise<PairTableState> {
    const [cnt, fnd, tab] = await readBuffers(this.device, [this.counters.buffer, this.found, this.table]);
    const c = new Uint32Array(cnt);
    return {
      insertCount: c[COUNTER_INSERT_N],
      findCount: c[COUNTER_FIND_N],
      inserted: c[COUNTER_INSERTED],
      duplicates: c[COUNTER_DUPLICATES],
      overflow: c[COUNTER_OVERFLOW],
      findOverflow: c[COUNTER_FIND_OVERFLOW],
      found: new Uint32Array(fnd, 0, c[COUNTER_FIND_N]).slice(),
      table: new Uint32Array(tab),
    };
  }

  destroy(): void {
    for (const b of [this.table, this.found, this.params, this.hostCounts]) b.destroy();
    this.counters.destroy();
  }
}
