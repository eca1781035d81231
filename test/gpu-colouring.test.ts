/**
 * The per-frame GPU colouring (gpu/colouring.ts) on SwiftShader.
 *
 * Facts checked, all exact (integers: no tolerance):
 *  - validity: no two constraints of one colour below K share a dynamic body (static bodies and
 *    indices ≥ bodyCount shared freely), on random graphs, a chain, a grid, a pile with a fixed ground
 *    under its whole bottom layer, and a star;
 *  - the grouping: sizes + overflow = n, offsets are their exclusive sums, order is a permutation of
 *    0 .. n−1 whose colour-c range holds exactly the constraints of colour c, by increasing index (the
 *    stable counting sort: a deterministic order for the serial overflow pass), and each colour's indirect
 *    arguments run ⌈size / 64⌉ workgroups;
 *  - agreement with the CPU twin (colourJonesPlassmannCpu): the same colour for every constraint, bit
 *    for bit (the speculative rounds do not depend on the threads' order), and the same survivors after
 *    each round, whether the rounds are dispatched one by one or run in the one workgroup that loops until
 *    none is left (col_rounds_loop, a small capacity's), also when R rounds are too few to colour all;
 *  - a wall 22 wythes deep (up to 20 contacts a brick, 38 neighbours a contact: brick-wall's graph) takes the
 *    contacts' K = 64 colours with an empty overflow set;
 *  - order independence: a pile listed in another order gets the same colour for every pair (the
 *    priorities hash the pair, not the index);
 *  - the star: one dynamic body in 100 constraints is a complete graph of 100, so K colours hold K of
 *    them and exactly 100 − K go to the overflow set;
 *  - record makes no readback (no MAP_READ buffer is created while recording);
 *  - an indirect count (a u32 at an offset of another buffer) larger than the capacity is capped.
 * The diagnostic prints the colours used on a 10k-body pile against model/colouring.ts's greedy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { GpuColouring, colourJonesPlassmannCpu, CONTACT_COLOUR_ROUNDS, CONTACT_MAX_COLOURS, type ColouringResult } from '../src/gpu/colouring.js';
import { colourConstraints } from '../src/model/colouring.js';
import { readBuffers } from '../src/gpu/frames.js';
import { mulberry32 } from './support/random.js';
import { mapReadBuffersCreatedBy } from './support/gpu.js';

let gpuPromise: Promise<GpuContext> | undefined;

const gpu = () => (gpuPromise ??= acquireGpu());

interface Graph {
  name: string;
  bodies: number;
  ib0: Uint32Array;
  ib1: Uint32Array;
  isStatic: Uint8Array;
}

function graph(name: string, bodies: number, pairs: number[][], isStatic = new Uint8Array(bodies)): Graph {
  return { name, bodies, ib0: Uint32Array.from(pairs, (p) => p[0]), ib1: Uint32Array.from(pairs, (p) => p[1]), isStatic };
}

function randomGraph(bodies: number, count: number, seed: number): Graph {
  const rand = mulberry32(seed);
  const isStatic = Uint8Array.from({ length: bodies }, () => (rand() < 0.1 ? 1 : 0));
  // ~2 % of ends are the world (an index ≥ bodies), some constraints repeat a pair or join a body to itself
  const end = () => (rand() < 0.02 ? bodies + Math.floor(rand() * 5) : Math.floor(rand() * bodies));
  const pairs: number[][] = [];
  for (let k = 0; k < count; k++) {
    const a = end();
    pairs.push(rand() < 0.01 ? [a, a] : [a, end()]);
    if (rand() < 0.02) pairs.push([...pairs[pairs.length - 1]]);
  }
  return graph(`random ${bodies}/${count}`, bodies, pairs, isStatic);
}

/** a pile: an nx × ny × nz lattice of bodies over a fixed ground (body 0), contacts between lattice
 *  neighbours (each present with probability 0.9, as a settled pile's are not all touching) and between
 *  every bottom body and the ground */
function pile(nx: number, ny: number, nz: number, seed: number): Graph {
  const rand = mulberry32(seed);
  const bodies = 1 + nx * ny * nz;
  const id = (x: number, y: number, z: number) => 1 + x + nx * (z + nz * y);
  const pairs: number[][] = [];
  for (let y = 0; y < ny; y++)
    for (let z = 0; z < nz; z++)
      for (let x = 0; x < nx; x++) {
        if (y === 0) pairs.push([0, id(x, y, z)]);
        if (x + 1 < nx && rand() < 0.9) pairs.push([id(x, y, z), id(x + 1, y, z)]);
        if (z + 1 < nz && rand() < 0.9) pairs.push([id(x, y, z), id(x, y, z + 1)]);
        if (y + 1 < ny && rand() < 0.9) pairs.push([id(x, y, z), id(x, y + 1, z)]);
      }
  const isStatic = new Uint8Array(bodies);
  isStatic[0] = 1;
  // shuffle the constraints (a narrow phase's atomic appends come in no order)
  for (let k = pairs.length - 1; k > 0; k--) {
    const m = Math.floor(rand() * (k + 1));
    [pairs[k], pairs[m]] = [pairs[m], pairs[k]];
  }
  return graph(`pile ${nx}×${ny}×${nz}`, bodies, pairs, isStatic);
}

/**
 * A wall in a running bond, `wythes` deep, over a fixed ground (body 0): brick x of course y, wythe z touches
 * its course neighbours x ± 1, the two bricks under it and the two over it (courses shifted by half a
 * brick), and in each neighbouring wythe the brick behind it and those six: up to 6 + 2·7 = 20 contacts a
 * brick, so a contact has up to 38 neighbours (brick-wall's 22 wythes with its 1 cm joints within the
 * speculative margin; each contact present with probability `present`); course 0 on the ground.
 */
function deepWall(courses: number, bricks: number, wythes: number, present: number, seed: number): Graph {
  const rand = mulberry32(seed);
  const bodies = 1 + courses * bricks * wythes;
  const id = (x: number, y: number, z: number) => 1 + x + bricks * (y + courses * z);
  const pairs: number[][] = [];
  const add = (a: number, b: number) => {
    if (rand() < present) pairs.push([a, b]);
  };
  for (let z = 0; z < wythes; z++)
    for (let y = 0; y < courses; y++)
      for (let x = 0; x < bricks; x++) {
        const me = id(x, y, z);
        if (y === 0) pairs.push([0, me]);
        // the same wythe: the next brick of the course, and the two of the course above (x and x ± 1 by parity)
        const over = y % 2 === 0 ? [x - 1, x] : [x, x + 1];
        const within = [[x + 1, y], ...over.map((u) => [u, y + 1])].filter(([u, v]) => u >= 0 && u < bricks && v < courses);
        for (const [u, v] of within) add(me, id(u, v, z));
        // the wythe behind: the brick behind, its course neighbours and the two under and over it
        if (z + 1 < wythes) {
          const under = y % 2 === 0 ? [x - 1, x] : [x, x + 1];
          const behind = [[x, y], [x - 1, y], [x + 1, y], ...over.map((u) => [u, y + 1]), ...under.map((u) => [u, y - 1])];
          for (const [u, v] of behind) if (u >= 0 && u < bricks && v >= 0 && v < courses) add(me, id(u, v, z + 1));
        }
      }
  const isStatic = new Uint8Array(bodies);
  isStatic[0] = 1;
  return graph(`deep wall ${courses}×${bricks}×${wythes}`, bodies, pairs, isStatic);
}

function upload(device: GPUDevice, data: Uint32Array<ArrayBuffer>): GPUBuffer {
  const b = device.createBuffer({ size: Math.max(16, data.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(b, 0, data);
  return b;
}

async function colourOnGpu(col: GpuColouring, g: Graph, countOverride?: { words: Uint32Array<ArrayBuffer>; offset: number }): Promise<ColouringResult & { ms: number; args: Uint32Array }> {
  const { device } = await gpu();
  const n = g.ib0.length;
  const words = new Uint32Array(2 * n);
  for (let k = 0; k < n; k++) {
    words[2 * k] = g.ib0[k];
    words[2 * k + 1] = g.ib1[k];
  }
  const pairs = upload(device, words);
  const flags = upload(device, Uint32Array.from(g.isStatic));
  const countBuf = countOverride ? upload(device, countOverride.words) : null;
  col.configure(g.bodies);
  const count = countBuf ? { buffer: countBuf, offset: countOverride!.offset } : col.setHostCount(n);
  const t0 = performance.now();
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  const staging = mapReadBuffersCreatedBy(device, () => col.record(pass, { pairs, flags, count }));
  assert.equal(staging, 0, 'record makes no readback (no MAP_READ buffer)');
  pass.end();
  device.queue.submit([encoder.finish()]);
  const r = await col.read();
  const ms = performance.now() - t0;
  const [args] = await readBuffers(device, [col.counters.args]);
  pairs.destroy();
  flags.destroy();
  countBuf?.destroy();
  return { ...r, ms, args: new Uint32Array(args) };
}

/** every fact of the header but the star's; returns the result */
async function checkColouring(col: GpuColouring, g: Graph): Promise<ColouringResult & { ms: number }> {
  const n = g.ib0.length, K = col.maxColours;
  const r = await colourOnGpu(col, g);
  assert.equal(r.count, n, `${g.name}: count`);
  // validity: colour·bodies + body → the constraint holding it
  const owner = new Int32Array((K + 1) * g.bodies).fill(-1);
  for (let i = 0; i < n; i++) {
    const c = r.colour[i];
    assert.ok(c <= K, `${g.name}: colour ${c} of constraint ${i}`);
    if (c === K) continue;
    const a = g.ib0[i], b = g.ib1[i];
    for (const body of a === b ? [a] : [a, b]) {
      if (body >= g.bodies || g.isStatic[body]) continue;
      const o = owner[c * g.bodies + body];
      assert.ok(o < 0, `${g.name}: constraints ${o} and ${i} share dynamic body ${body} in colour ${c}`);
      owner[c * g.bodies + body] = i;
    }
  }
  // grouping
  const sizes = new Array(K + 1).fill(0);
  for (let i = 0; i < n; i++) sizes[r.colour[i]]++;
  assert.deepEqual(r.sizes, sizes.slice(0, K), `${g.name}: sizes`);
  assert.equal(r.overflow, sizes[K], `${g.name}: overflow`);
  assert.equal(sizes.reduce((s, x) => s + x, 0), n, `${g.name}: the sizes sum to the count`);
  for (let c = 0; c <= K; c++) {
    assert.equal(r.offsets[c + 1] - r.offsets[c], sizes[c], `${g.name}: offsets of colour ${c}`);
    for (let k = r.offsets[c]; k < r.offsets[c + 1]; k++) {
      assert.equal(r.colour[r.order[k]], c, `${g.name}: order[${k}] in colour ${c}`);
      if (k > r.offsets[c]) assert.ok(r.order[k - 1] < r.order[k], `${g.name}: colour ${c} by index (a stable sort)`);
    }
    const slot = col.sizeCounter(c);
    const groups = r.args[3 * slot] * r.args[3 * slot + 1];
    assert.equal(groups, Math.ceil(sizes[c] / 64), `${g.name}: colour ${c}'s dispatch`);
  }
  assert.equal(new Set(r.order).size, n, `${g.name}: order is a permutation`);
  let highest = 0;
  for (let c = 0; c < K; c++) if (sizes[c] > 0) highest = c + 1;
  assert.equal(r.coloursUsed, highest, `${g.name}: colours used`);
  // the CPU twin
  const cpu = colourJonesPlassmannCpu(g.ib0, g.ib1, n, g.isStatic, g.bodies, { maxColours: K, rounds: col.rounds, largestFirst: col.largestFirst, seed: col.seed });
  for (let i = 0; i < n; i++) if (cpu.colour[i] !== r.colour[i]) assert.fail(`${g.name}: constraint ${i}: GPU colour ${r.colour[i]}, CPU twin ${cpu.colour[i]}`);
  assert.deepEqual(r.survivors, cpu.survivors, `${g.name}: survivors per round`);
  return r;
}

test('GPU colouring: random graphs, a chain and a grid are coloured validly, as the CPU twin colours them', async () => {
  const { device } = await gpu();
  const col = await GpuColouring.create(device, { capacity: 8000, bodyCapacity: 3000 });
  const chain = graph('chain', 1000, Array.from({ length: 999 }, (_, k) => [k, k + 1]));
  const grid: number[][] = [];
  const W = 40;
  for (let y = 0; y < W; y++)
    for (let x = 0; x < W; x++) {
      if (x + 1 < W) grid.push([y * W + x, y * W + x + 1]);
      if (y + 1 < W) grid.push([y * W + x, (y + 1) * W + x]);
    }
  // the same graphs with every round in one workgroup (col_rounds_loop), and both ways with R = 3 rounds, too few
  // for these graphs (the last round's survivors go to the overflow set, as in the twin)
  const looped = await GpuColouring.create(device, { capacity: 8000, bodyCapacity: 3000, loopCapacity: 8000 });
  const [short, shortLooped] = await Promise.all([0, 8000].map((loopCapacity) => GpuColouring.create(device, { capacity: 8000, bodyCapacity: 3000, rounds: 3, loopCapacity })));
  assert.ok(!col.loop && looped.loop && !short.loop && shortLooped.loop);
  for (const g of [randomGraph(2000, 5000, 1), randomGraph(3000, 7000, 2), chain, graph('grid 40×40', W * W, grid)]) {
    const r = await checkColouring(col, g);
    // a chain's constraints have ≤ 2 neighbours, a grid's ≤ 6: greedy in any order needs ≤ Δ + 1 colours
    if (g.name === 'chain') assert.ok(r.coloursUsed <= 3 && r.overflow === 0, `chain: ${r.coloursUsed} colours`);
    if (g.name.startsWith('grid')) assert.ok(r.coloursUsed <= 7 && r.overflow === 0, `grid: ${r.coloursUsed} colours`);
    const l = await checkColouring(looped, { ...g, name: `${g.name} (one workgroup)` });
    assert.deepEqual(l.colour, r.colour, `${g.name}: the same colours both ways`);
    for (const c of [short, shortLooped]) {
      const few = await checkColouring(c, { ...g, name: `${g.name} (3 rounds${c.loop ? ', one workgroup' : ''})` });
      if (!g.name.startsWith('chain')) assert.ok(few.overflow > 0, `${g.name}: 3 rounds colour all`);
    }
  }
  for (const c of [col, looped, short, shortLooped]) c.destroy();
  // the largest-first priorities (option), on the GPU as in the twin
  const lf = await GpuColouring.create(device, { capacity: 8000, bodyCapacity: 3000, largestFirst: true, seed: 99 });
  const g = randomGraph(2500, 6000, 5);
  await checkColouring(lf, g); // the twin with largestFirst and seed 99
  lf.destroy();
});

test('GPU colouring: a star overflows by exactly 100 − K; an indirect count beyond the capacity is capped', async () => {
  const { device } = await gpu();
  const K = 24;
  const col = await GpuColouring.create(device, { capacity: 150, bodyCapacity: 200, maxColours: K });
  // body 0 in 100 constraints with bodies 1..100; half of those partners fixed (still one shared body)
  const isStatic = Uint8Array.from({ length: 101 }, (_, b) => (b > 0 && b % 2 === 0 ? 1 : 0));
  const star = graph('star', 101, Array.from({ length: 100 }, (_, k) => [k % 3 === 0 ? k + 1 : 0, k % 3 === 0 ? 0 : k + 1]), isStatic);
  const r = await checkColouring(col, star);
  assert.equal(r.overflow, 100 - K, 'K colours hold K constraints of a complete graph; the rest overflow');
  assert.equal(r.coloursUsed, K);
  // a count of 1000 at byte 8 of another buffer, capacity 150: the first 150 constraints of a bigger list
  const big = randomGraph(200, 1000, 3);
  const capped = await colourOnGpu(col, big, { words: new Uint32Array([7, 7, 1000, 7]), offset: 8 });
  assert.equal(capped.count, 150);
  const first = { ...big, ib0: big.ib0.slice(0, 150), ib1: big.ib1.slice(0, 150) };
  const cpu = colourJonesPlassmannCpu(first.ib0, first.ib1, 150, first.isStatic, 200, { maxColours: K, rounds: col.rounds });
  assert.deepEqual(capped.colour, cpu.colour);
  col.destroy();
});

test('GPU colouring: a 10k-body pile on a shared fixed ground: valid, no overflow; colours against the CPU greedy', async () => {
  const { device } = await gpu();
  const g = pile(25, 16, 25, 4); // 10 000 bodies + the ground
  const n = g.ib0.length;
  const col = await GpuColouring.create(device, { capacity: n, bodyCapacity: g.bodies });
  await colourOnGpu(col, g); // warm-up (pipeline caches)
  const r = await checkColouring(col, g);
  assert.equal(r.overflow, 0, 'a pile (≤ 7 contacts per body, ≤ 12 neighbours per contact) fits 24 colours');
  // the priorities hash the pair, not the index: the same pile listed in another order (a producer's
  // atomic appends) gets the same colour for every pair
  const perm = Array.from({ length: n }, (_, k) => k);
  const rand = mulberry32(8);
  for (let k = n - 1; k > 0; k--) {
    const m = Math.floor(rand() * (k + 1));
    [perm[k], perm[m]] = [perm[m], perm[k]];
  }
  const shuffled = { ...g, name: 'pile shuffled', ib0: Uint32Array.from(perm, (k) => g.ib0[k]), ib1: Uint32Array.from(perm, (k) => g.ib1[k]) };
  const again = await checkColouring(col, shuffled);
  for (let k = 0; k < n; k++) if (again.colour[k] !== r.colour[perm[k]]) assert.fail(`pair (${g.ib0[perm[k]]}, ${g.ib1[perm[k]]}): colour ${r.colour[perm[k]]}, ${again.colour[k]} when listed in another order`);
  const greedy = colourConstraints({ constraintCount: n, bodyCount: g.bodies, ib0: Int32Array.from(g.ib0), ib1: Int32Array.from(g.ib1), inverseMass: Float64Array.from(g.isStatic, (s) => (s ? 0 : 1)) });
  const hashOnly = colourJonesPlassmannCpu(g.ib0, g.ib1, n, g.isStatic, g.bodies, { largestFirst: true });
  const hashColours = Math.max(...hashOnly.colour) + 1;
  const hashRounds = hashOnly.survivors.findIndex((s) => s === 0) + 1;
  const roundsUsed = r.survivors.findIndex((s) => s === 0) + 1;
  console.log(
    `# pile 10k: ${n} contacts; GPU speculative colouring (hash priorities) ${r.coloursUsed} colours in ${roundsUsed} rounds ` +
      `(sizes ${r.sizes.slice(0, r.coloursUsed).join(' ')}), overflow ${r.overflow}; largest first (CPU twin) ${hashColours} colours in ${hashRounds} rounds; ` +
      `CPU greedy (model/colouring.ts) ${greedy.colourCount} colours; SwiftShader wall ${r.ms.toFixed(0)} ms incl. readback`,
  );
  col.destroy();
});

test('GPU colouring: a wall 22 wythes deep (up to 20 contacts a brick) takes the contacts\' 64 colours with no overflow, as the CPU twin colours it', async () => {
  const { device } = await gpu();
  const g = deepWall(20, 20, 22, 1, 6); // 8,800 bricks, every contact present: 83k contacts
  const n = g.ib0.length;
  const col = await GpuColouring.create(device, { capacity: n, bodyCapacity: g.bodies, maxColours: CONTACT_MAX_COLOURS, rounds: CONTACT_COLOUR_ROUNDS });
  const r = await checkColouring(col, g); // validity, grouping, the CPU twin bit for bit
  // Δ + 1 ≤ 2 · 19 + 1 = 39 ≤ K: a greedy pick always finds a colour, and the rounds end near the colours
  assert.equal(r.overflow, 0, `${g.name}: ${r.overflow} contacts in the overflow set`);
  const rounds = r.survivors.findIndex((s) => s === 0) + 1;
  assert.ok(rounds > 0, `${g.name}: still ${r.survivors.at(-1)} uncoloured after ${col.rounds} rounds`);
  // Box2D's 24 colours (and the old limit): how many the same wall would have put in the overflow set
  const at24 = colourJonesPlassmannCpu(g.ib0, g.ib1, n, g.isStatic, g.bodies, { maxColours: 24, rounds: CONTACT_COLOUR_ROUNDS });
  const over24 = at24.colour.reduce((s, c) => s + (c === 24 ? 1 : 0), 0);
  console.log(`# ${g.name}: ${n} contacts; ${r.coloursUsed} colours in ${rounds} rounds (sizes ${r.sizes.slice(0, r.coloursUsed).join(' ')}), overflow ${r.overflow}; with K = 24: ${over24} in the overflow set`);
  col.destroy();
});
