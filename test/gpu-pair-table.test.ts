/**
 * The GPU pair table (gpu/pair-table.ts) on SwiftShader. All facts are exact (integers: no tolerance):
 *  - n distinct random pairs (i > j among them, indices up to 2³² − 2) inserted from records laid out
 *    as a manifold's (pair at words 2 and 0 of 3): every pair is found with its record index, and absent
 *    pairs (the reverse of a present one, fresh random pairs) are not;
 *  - the table obeys linear probing's invariant: every record lies in its pair's probe run (no EMPTY slot
 *    between its home slot hashPair(a, b) mod C, the CPU store's hash, and its slot), once;
 *  - duplicates: a pair given by several records is in the table once, as its smallest record,
 *    whatever the threads' order, and counted as duplicates;
 *  - the CPU twin: for a new frame's pairs, the GPU finds last frame's record exactly where the CPU's
 *    ManifoldStore.find finds its slot, holding the same pair;
 *  - record makes no readback (no MAP_READ buffer is created while recording);
 *  - a table given more records than maxKeys (its load-factor-½ bound) inserts maxKeys and reports the
 *    rest as overflow, and more queries than its query capacity looks up that many and reports the rest;
 *    an indirect count at an offset of another buffer is read there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { EMPTY, GpuPairTable, NOT_FOUND, type PairTableState } from '../src/gpu/pair-table.js';
import { ManifoldStore, hashPair } from '../src/collision/manifolds.js';
import { mulberry32 } from './support/random.js';
import { mapReadBuffersCreatedBy } from './support/gpu.js';

let gpuPromise: Promise<GpuContext> | undefined;

const gpu = () => (gpuPromise ??= acquireGpu());

const RECORD = { stride: 3, offsetA: 2, offsetB: 0 };
const QUERY = { stride: 2, offsetA: 0, offsetB: 1 };

function upload(device: GPUDevice, data: Uint32Array<ArrayBuffer>): GPUBuffer {
  const b = device.createBuffer({ size: Math.max(16, data.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(b, 0, data);
  return b;
}

function records(a: ArrayLike<number>, b: ArrayLike<number>): Uint32Array<ArrayBuffer> {
  const w = new Uint32Array(3 * a.length).fill(0xdeadbeef);
  for (let t = 0; t < a.length; t++) {
    w[3 * t + 2] = a[t];
    w[3 * t] = b[t];
  }
  return w;
}

function queries(pairs: [number, number][]): Uint32Array<ArrayBuffer> {
  return Uint32Array.from(pairs.flat());
}

/** inserts then finds, in one pass of one submission (no readback between), and reads back */
async function run(
  table: GpuPairTable,
  rec: Uint32Array<ArrayBuffer>,
  insertCount: number | { words: Uint32Array<ArrayBuffer>; offset: number },
  qs: [number, number][],
): Promise<PairTableState & { ms: number }> {
  const { device } = await gpu();
  const recBuf = upload(device, rec), qBuf = upload(device, queries(qs));
  const countBuf = typeof insertCount === 'number' ? null : upload(device, insertCount.words);
  table.configure(RECORD, QUERY);
  const ins = countBuf ? { buffer: countBuf, offset: (insertCount as { offset: number }).offset } : table.setHostCount('insert', insertCount as number);
  const fnd = table.setHostCount('find', qs.length);
  const t0 = performance.now();
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  const staging = mapReadBuffersCreatedBy(device, () => {
    table.recordInsert(pass, recBuf, ins);
    table.recordFind(pass, recBuf, qBuf, fnd);
  });
  assert.equal(staging, 0, 'recordInsert and recordFind make no readback (no MAP_READ buffer)');
  pass.end();
  device.queue.submit([encoder.finish()]);
  const r = await table.read();
  const ms = performance.now() - t0;
  recBuf.destroy();
  qBuf.destroy();
  countBuf?.destroy();
  return { ...r, ms };
}

/** every non-EMPTY slot holds a record whose probe run from its home slot reaches it without an EMPTY; each record at most once */
function checkProbeRuns(t: PairTableState, a: ArrayLike<number>, b: ArrayLike<number>): number {
  const C = t.table.length, mask = C - 1;
  const seen = new Set<number>();
  for (let s = 0; s < C; s++) {
    const u = t.table[s];
    if (u === EMPTY) continue;
    assert.ok(!seen.has(u), `record ${u} in two slots`);
    seen.add(u);
    for (let k = hashPair(a[u], b[u]) & mask; k !== s; k = (k + 1) & mask) assert.notEqual(t.table[k], EMPTY, `record ${u} at slot ${s}: an EMPTY slot ${k} in its probe run`);
  }
  return seen.size;
}

test('GPU pair table: random distinct pairs (i > j, indices to 2³² − 2) are found with their records; absent pairs are not', async () => {
  const { device } = await gpu();
  const rand = mulberry32(11);
  const n = 20_000;
  const table = await GpuPairTable.create(device, n, 3 * n);
  assert.ok(table.slots >= 2 * n && (table.slots & (table.slots - 1)) === 0, 'C: a power of two ≥ 2 maxKeys');
  const a = new Uint32Array(n), b = new Uint32Array(n);
  const keys = new Set<string>();
  const big = () => (rand() < 0.1 ? 0xfffffffe - Math.floor(rand() * 1000) : Math.floor(rand() * (rand() < 0.5 ? 200 : 2 ** 32 - 1)));
  for (let t = 0; t < n; ) {
    const i = big(), j = big();
    if (keys.has(`${i},${j}`)) continue;
    keys.add(`${i},${j}`);
    a[t] = i;
    b[t] = j;
    t++;
  }
  let reversedPresent = 0;
  const qs: [number, number][] = [];
  const want: number[] = [];
  // every present pair, in a shuffled order
  const perm = Array.from({ length: n }, (_, t) => t);
  for (let k = n - 1; k > 0; k--) {
    const m = Math.floor(rand() * (k + 1));
    [perm[k], perm[m]] = [perm[m], perm[k]];
  }
  for (const t of perm) {
    qs.push([a[t], b[t]]);
    want.push(t);
  }
  // absent: the reverse of present pairs (keys are ordered), and fresh random pairs
  for (let t = 0; t < n / 2; t++) {
    if (a[t] === b[t] || keys.has(`${b[t]},${a[t]}`)) {
      reversedPresent++;
      continue;
    }
    qs.push([b[t], a[t]]);
    want.push(NOT_FOUND);
  }
  for (let k = 0; k < n / 2; k++) {
    const i = big(), j = big();
    if (keys.has(`${i},${j}`)) continue;
    qs.push([i, j]);
    want.push(NOT_FOUND);
  }
  const r = await run(table, records(a, b), n, qs);
  assert.equal(r.insertCount, n);
  assert.equal(r.inserted, n);
  assert.equal(r.duplicates, 0);
  assert.equal(r.overflow, 0);
  assert.equal(r.findCount, qs.length);
  assert.equal(r.findOverflow, 0);
  for (let q = 0; q < qs.length; q++) if (r.found[q] !== want[q]) assert.fail(`query ${q} (${qs[q]}): found ${r.found[q]}, want ${want[q]}`);
  assert.equal(checkProbeRuns(r, a, b), n, 'every record in the table once');
  console.log(`# pair table: ${n} pairs inserted and ${qs.length} looked up (${qs.length - n} absent; ${reversedPresent} reverses skipped as present) in one submission, ${table.slots} slots; SwiftShader wall ${r.ms.toFixed(0)} ms incl. readback`);
  table.destroy();
});

test('GPU pair table: duplicate pairs are inserted once, as their smallest record', async () => {
  const { device } = await gpu();
  const rand = mulberry32(12);
  const distinct = 3000;
  const a: number[] = [], b: number[] = [];
  const firstOf = new Map<string, number>();
  // 3000 pairs of 100 bodies (collisions in the hash's home slots are many), each given 1 to 4 times, shuffled
  const pairs: [number, number][] = [];
  const used = new Set<string>();
  while (pairs.length < distinct) {
    const p: [number, number] = [Math.floor(rand() * 100), Math.floor(rand() * 100)];
    if (used.has(`${p}`)) continue;
    used.add(`${p}`);
    pairs.push(p);
  }
  const list: [number, number][] = [];
  for (const p of pairs) for (let k = 1 + Math.floor(rand() * 4); k > 0; k--) list.push(p);
  for (let k = list.length - 1; k > 0; k--) {
    const m = Math.floor(rand() * (k + 1));
    [list[k], list[m]] = [list[m], list[k]];
  }
  list.forEach(([i, j], t) => {
    a.push(i);
    b.push(j);
    if (!firstOf.has(`${i},${j}`)) firstOf.set(`${i},${j}`, t);
  });
  const table = await GpuPairTable.create(device, list.length, distinct);
  const r = await run(table, records(a, b), list.length, pairs);
  assert.equal(r.inserted, distinct);
  assert.equal(r.duplicates, list.length - distinct);
  assert.equal(r.overflow, 0);
  pairs.forEach((p, q) => assert.equal(r.found[q], firstOf.get(`${p}`), `pair ${p}: the smallest record`));
  assert.equal(checkProbeRuns(r, a, b), distinct, 'each pair in the table once');
  table.destroy();
});

test('GPU pair table: more records than maxKeys and more queries than the capacity overflow, reported; an indirect count is read at its offset', async () => {
  const { device } = await gpu();
  const table = await GpuPairTable.create(device, 8, 16);
  assert.equal(table.slots, 16);
  const m = 20;
  const a = Array.from({ length: m }, (_, t) => 1000 + t), b = Array.from({ length: m }, (_, t) => 7 * t);
  const qs: [number, number][] = a.map((x, t) => [x, b[t]]);
  // the count, 20, at byte 12 of a buffer of other words
  const r = await run(table, records(a, b), { words: new Uint32Array([5, 5, 5, m, 5]), offset: 12 }, qs);
  assert.equal(r.insertCount, 8, 'the first maxKeys records');
  assert.equal(r.inserted, 8);
  assert.equal(r.overflow, m - 8, 'the rest reported as overflow');
  assert.equal(r.findCount, 16, 'the first queryCapacity queries looked up');
  assert.equal(r.findOverflow, m - 16, 'the rest reported');
  for (let t = 0; t < 16; t++) assert.equal(r.found[t], t < 8 ? t : NOT_FOUND, `record ${t}`);
  assert.ok(r.table.filter((u) => u !== EMPTY).length / r.table.length <= 0.5, 'load factor ≤ 1/2');
  table.destroy();
});

test('GPU pair table: last frame\'s manifolds found for the new frame\'s pairs exactly where the CPU store (ManifoldStore.find) finds them', async () => {
  const { device } = await gpu();
  const rand = mulberry32(13);
  const bodies = 600;
  // last frame: 2 500 touching pairs (a < b, as the narrow phase orders them), acquired in the CPU store
  const store = new ManifoldStore();
  store.beginFrame();
  const a: number[] = [], b: number[] = [];
  const seen = new Set<string>();
  while (a.length < 2500) {
    const i = Math.floor(rand() * bodies), j = Math.floor(rand() * bodies);
    if (i === j || seen.has(`${Math.min(i, j)},${Math.max(i, j)}`)) continue;
    seen.add(`${Math.min(i, j)},${Math.max(i, j)}`);
    a.push(Math.min(i, j));
    b.push(Math.max(i, j));
    store.acquire(a[a.length - 1], b[b.length - 1]);
  }
  // this frame: 70 % of last frame's pairs (bodies that stayed in touch) and new ones
  const qs: [number, number][] = [];
  for (let t = 0; t < a.length; t++) if (rand() < 0.7) qs.push([a[t], b[t]]);
  while (qs.length < 3000) {
    const i = Math.floor(rand() * bodies), j = Math.floor(rand() * bodies);
    if (i !== j) qs.push([Math.min(i, j), Math.max(i, j)]);
  }
  const table = await GpuPairTable.create(device, a.length, qs.length);
  const r = await run(table, records(a, b), a.length, qs);
  let carried = 0;
  qs.forEach(([i, j], q) => {
    const s = store.find(i, j);
    const t = r.found[q];
    assert.equal(t !== NOT_FOUND, s >= 0, `pair (${i}, ${j}): GPU ${t === NOT_FOUND ? 'absent' : 'present'}, CPU ${s >= 0 ? 'present' : 'absent'}`);
    if (s >= 0) {
      assert.deepEqual([a[t], b[t]], [store.bodyA[s], store.bodyB[s]], `pair (${i}, ${j}): the GPU's record holds the pair the CPU's slot holds`);
      carried++;
    }
  });
  assert.ok(carried > 1000 && carried < qs.length, `both found and new pairs (${carried} of ${qs.length} carried over)`);
  table.destroy();
});
