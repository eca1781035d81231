/**
 * The GPU broad phase (collision/gpu-broadphase.ts) against the CPU's (broadphase.ts bruteForcePairs,
 * the reference; SweepAndPrune agrees with it) on SwiftShader: the same pair set, sorted after readback.
 *
 * The bound (gpu-broadphase.ts header): the boxes reach the GPU rounded to the nearest f32, which is
 * monotone, so no pair of the f64 CPU set may be missing (GPU ⊇ CPU, exactly), and a pair the GPU adds
 * must be within rounding of touching: on every axis lo_a − hi_b ≤ 2⁻²⁴ (|lo_a| + |hi_b|) (each of the two
 * bounds moved by at most half an ulp, 2⁻²⁴ relative). No duplicates, a < b in every pair.
 * Scenes: random rotated boxes, spheres and capsules with a ground plane and fixed and sleeping bodies;
 * a lattice of unit cubes touching exactly on faces, edges and corners (bounds on the cell boundaries);
 * stacked columns whose faces touch in f64; near-touching boxes 1e-9 m apart (the bound exercised);
 * giant boxes on the big list; jointed pairs left out; and a pair buffer that overflows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { BROAD_STAGES, GpuBroadPhase, gridCellSize, packAabbs, type GpuPairs } from '../src/collision/gpu-broadphase.js';
import { SweepAndPrune, bruteForcePairs } from '../src/collision/broadphase.js';
import { shapeAabb } from '../src/collision/aabb.js';
import type { Shape } from '../src/model/world.js';
import { mulberry32 } from './support/random.js';

const U = 2 ** -24;

let gpuPromise: Promise<GpuContext> | undefined;
const gpu = () => (gpuPromise ??= acquireGpu());

interface Scene {
  n: number;
  aabbs: Float64Array;
  inactive: Uint8Array;
}

async function runGpu(bp: GpuBroadPhase, s: Scene, cellSize = gridCellSize(s.aabbs, s.n)): Promise<GpuPairs> {
  const { device } = await gpu();
  bp.configure(s.n, cellSize);
  const buf = device.createBuffer({ size: 32 * s.n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(buf, 0, packAabbs(s.aabbs, s.n, s.inactive));
  const r = await bp.update(buf);
  buf.destroy();
  return r;
}

/** a < b, strictly ascending (no duplicates) */
function assertCanonical(pairs: Int32Array, what: string): void {
  for (let k = 0; k < pairs.length / 2; k++) {
    assert.ok(pairs[2 * k] < pairs[2 * k + 1], `${what}: pair ${k} not a < b`);
    if (k > 0) {
      const prev = pairs[2 * k - 2] * 2 ** 32 + pairs[2 * k - 1], cur = pairs[2 * k] * 2 ** 32 + pairs[2 * k + 1];
      assert.ok(prev < cur, `${what}: duplicate or unsorted pair (${pairs[2 * k]}, ${pairs[2 * k + 1]})`);
    }
  }
}

/** GPU ⊇ CPU exactly, every extra pair within the f32 rounding bound; returns the number of extras */
function assertSameSet(gpuPairs: Int32Array, cpuPairs: Int32Array, a: Float64Array, what: string): number {
  assertCanonical(gpuPairs, what);
  const key = (p: Int32Array, k: number) => p[2 * k] * 2 ** 32 + p[2 * k + 1];
  const g = new Set<number>();
  for (let k = 0; k < gpuPairs.length / 2; k++) g.add(key(gpuPairs, k));
  const c = new Set<number>();
  for (let k = 0; k < cpuPairs.length / 2; k++) {
    c.add(key(cpuPairs, k));
    if (!g.has(key(cpuPairs, k))) assert.fail(`${what}: the GPU misses the CPU's pair (${cpuPairs[2 * k]}, ${cpuPairs[2 * k + 1]})`);
  }
  let extras = 0;
  for (let k = 0; k < gpuPairs.length / 2; k++) {
    if (c.has(key(gpuPairs, k))) continue;
    extras++;
    const i = gpuPairs[2 * k], j = gpuPairs[2 * k + 1];
    for (let d = 0; d < 3; d++)
      for (const [x, y] of [[i, j], [j, i]]) {
        const lo = a[6 * x + d], hi = a[6 * y + 3 + d];
        assert.ok(lo - hi <= U * (Math.abs(lo) + Math.abs(hi)), `${what}: extra pair (${i}, ${j}) apart by ${lo - hi} m on axis ${d}, beyond f32 rounding`);
      }
  }
  return extras;
}

function randomScene(n: number, seed: number, L: number): Scene & { shapes: Shape[] } {
  const rand = mulberry32(seed);
  const aabbs = new Float64Array(6 * n), inactive = new Uint8Array(n);
  const shapes: Shape[] = [];
  const pos = new Float64Array(3), q = new Float64Array(4);
  for (let i = 0; i < n; i++) {
    let shape: Shape;
    const kind = i === 0 ? 3 : Math.floor(rand() * 3);
    if (kind === 0) shape = { type: 'box', halfExtents: [0.1 + 0.4 * rand(), 0.1 + 0.4 * rand(), 0.1 + 0.4 * rand()] };
    else if (kind === 1) shape = { type: 'sphere', radius: 0.1 + 0.4 * rand() };
    else if (kind === 2) shape = { type: 'capsule', radius: 0.1 + 0.2 * rand(), halfHeight: 0.1 + 0.3 * rand() };
    else shape = { type: 'plane' };
    shapes.push(shape);
    pos[0] = L * rand();
    pos[1] = i === 0 ? 0 : L * rand();
    pos[2] = L * rand();
    // a random unit quaternion (the plane's: identity, normal +y)
    const u = [rand() - 0.5, rand() - 0.5, rand() - 0.5, rand() - 0.5];
    const l = Math.hypot(...u);
    if (i === 0) q.set([0, 0, 0, 1]);
    else q.set(u.map((x) => x / l));
    shapeAabb(shape, pos, 0, q, 0, 0.02, aabbs, 6 * i);
    // the plane and ~10 % of bodies fixed, ~10 % asleep: both inactive (pipeline.ts: isStatic | asleep)
    inactive[i] = i === 0 || rand() < 0.2 ? 1 : 0;
  }
  return { n, aabbs, inactive, shapes };
}

test('GPU broad phase: random boxes, spheres and capsules, a plane, fixed and sleeping bodies: the CPU pair set', async () => {
  const { device } = await gpu();
  const bp = await GpuBroadPhase.create(device, 3000);
  for (const [n, seed, L] of [[300, 1, 5], [3000, 2, 14], [1200, 3, 6]] as const) {
    const s = randomScene(n, seed, L);
    const cpu = bruteForcePairs(s.aabbs, n, s.inactive);
    const sap = new SweepAndPrune();
    sap.update(s.aabbs, n, s.inactive);
    assert.deepEqual(sap.pairs.subarray(0, 2 * sap.pairCount), cpu, 'SweepAndPrune = brute force');
    const r = await runGpu(bp, s);
    assert.equal(r.overflow, false);
    assert.ok(r.big >= 1, 'the plane is on the big list');
    assert.ok(cpu.length / 2 > n / 2, `a scene with contacts (${cpu.length / 2} pairs)`);
    const extras = assertSameSet(r.pairs, cpu, s.aabbs, `random n=${n}`);
    assert.equal(extras, 0, 'random f64 bounds: no pair within f32 rounding of touching');
    if (n === 300) {
      // recorded stage by stage, each stage in a compute pass of its own (a StagePass): the same pairs
      const buf = device.createBuffer({ size: 32 * n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(buf, 0, packAabbs(s.aabbs, n, s.inactive));
      const encoder = device.createCommandEncoder();
      const names: string[] = [];
      let open: GPUComputePassEncoder | null = null;
      bp.record((name) => {
        open?.end();
        names.push(name);
        return (open = encoder.beginComputePass());
      }, buf);
      (open as GPUComputePassEncoder | null)?.end();
      device.queue.submit([encoder.finish()]);
      assert.deepEqual(names, [...BROAD_STAGES]);
      assert.deepEqual((await bp.readPairs()).pairs, r.pairs, 'stage by stage = one pass');
      buf.destroy();
    }
  }
  bp.destroy();
});

test('GPU broad phase: unit cubes touching exactly on faces, edges and corners (bounds on cell boundaries), and stacked columns', async () => {
  const { device } = await gpu();
  const bp = await GpuBroadPhase.create(device, 2200);
  // lattice k³ of cubes of side 1 at integer centres: each touches its 26 neighbours (closed boxes);
  // every bound is a half-integer, exact in f32, and with h = 1 on the cell boundaries
  const k = 8, n = k * k * k;
  const a = new Float64Array(6 * n);
  for (let i = 0; i < n; i++) {
    const c = [i % k, Math.floor(i / k) % k, Math.floor(i / (k * k))];
    for (let d = 0; d < 3; d++) {
      a[6 * i + d] = c[d] - 0.5;
      a[6 * i + 3 + d] = c[d] + 0.5;
    }
  }
  const cpu = bruteForcePairs(a, n);
  assert.equal(cpu.length / 2, (Math.pow(3 * k - 2, 3) - k ** 3) / 2, 'pairs of a lattice: Π(3k−2) − k³ over 2');
  for (const h of [1, 0.5, 1.7]) {
    const r = await runGpu(bp, { n, aabbs: a, inactive: new Uint8Array(n) }, h);
    assert.equal(assertSameSet(r.pairs, cpu, a, `lattice h=${h}`), 0, 'exact bounds: no extras');
    if (h === 0.5) assert.equal(r.big, n, 'cubes of side 2h span three cells: all on the big list');
  }
  // columns of boxes stacked face to face in f64 (top = sum of heights below): the f64 CPU sees the
  // faces touch, and rounding each bound to f32 keeps equal bounds equal
  const rand = mulberry32(9);
  const cols = 12, per = 15, m = cols * cols * per;
  const b = new Float64Array(6 * m);
  let i = 0;
  for (let cx = 0; cx < cols; cx++)
    for (let cz = 0; cz < cols; cz++) {
      let y = 0;
      for (let l = 0; l < per; l++, i++) {
        const hx = 0.3 + 0.1 * rand(), hy = 0.1 + 0.3 * rand(), hz = 0.3 + 0.1 * rand();
        const x = 0.91 * cx + 0.01 * rand(), z = 0.91 * cz + 0.01 * rand();
        b.set([x - hx, y, z - hz, x + hx, y + 2 * hy, z + hz], 6 * i);
        y = b[6 * i + 4];
      }
    }
  const cpu2 = bruteForcePairs(b, m);
  const r2 = await runGpu(bp, { n: m, aabbs: b, inactive: new Uint8Array(m) });
  assertSameSet(r2.pairs, cpu2, b, 'columns');
  bp.destroy();
});

test('GPU broad phase: boxes 1e-9 m apart: every extra pair is within f32 rounding of touching', async () => {
  const { device } = await gpu();
  const bp = await GpuBroadPhase.create(device, 1000);
  // a row of boxes along x at ~10 m, each 1e-9 m after the previous: no f64 overlap, but
  // fl(hi) = fl(lo) at this magnitude (half an ulp of 10 is 4.8e-7 m): the GPU reports them
  const n = 400, a = new Float64Array(6 * n);
  let x = 10;
  for (let i = 0; i < n; i++) {
    const w = 0.3 + 0.001 * (i % 7);
    a.set([x, 0, 0, x + w, 1, 1], 6 * i);
    x += w + 1e-9;
  }
  const cpu = bruteForcePairs(a, n);
  assert.equal(cpu.length, 0, 'f64: no two boxes overlap');
  const r = await runGpu(bp, { n, aabbs: a, inactive: new Uint8Array(n) });
  const extras = assertSameSet(r.pairs, cpu, a, 'near-touching');
  assert.ok(extras > 0, 'the f32 rounding bound is exercised');
  bp.destroy();
});

test('GPU broad phase: giant boxes (big list, big–big once), fixed–fixed pairs skipped, jointed pairs left out', async () => {
  const { device } = await gpu();
  const bp = await GpuBroadPhase.create(device, 1500);
  const s = randomScene(1500, 4, 9);
  // bodies 1–6: giant boxes (20 m) overlapping each other and many small ones; 1–3 fixed, 4–6 active
  for (let g = 1; g <= 6; g++) {
    s.aabbs.set([-5 + g, -5, -5 + g, 15 + g, 15, 15 + g], 6 * g);
    s.inactive[g] = g <= 3 ? 1 : 0;
  }
  // joints between overlapping pairs of the CPU set, and some to the world (index ≥ n: ignored)
  const all = bruteForcePairs(s.aabbs, s.n, s.inactive);
  const rand = mulberry32(12);
  const ib0: number[] = [], ib1: number[] = [];
  const jointed = new Set<number>();
  for (let k = 0; k < all.length / 2; k++)
    if (rand() < 0.2) {
      const [i, j] = rand() < 0.5 ? [all[2 * k], all[2 * k + 1]] : [all[2 * k + 1], all[2 * k]];
      ib0.push(i);
      ib1.push(j);
      jointed.add(Math.min(i, j) * s.n + Math.max(i, j));
    }
  for (let k = 0; k < 50; k++) {
    ib0.push(Math.floor(rand() * s.n));
    ib1.push(s.n + k);
  }
  const expect: number[] = [];
  for (let k = 0; k < all.length / 2; k++) if (!jointed.has(all[2 * k] * s.n + all[2 * k + 1])) expect.push(all[2 * k], all[2 * k + 1]);
  // the cell is the largest side of the ordinary bodies (7..n−1), not of the 20 m giants
  let ordinary = 0;
  for (let i = 7; i < s.n; i++) ordinary = Math.max(ordinary, ...[0, 1, 2].map((d) => s.aabbs[6 * i + 3 + d] - s.aabbs[6 * i + d]));
  assert.equal(gridCellSize(s.aabbs, s.n), ordinary);
  bp.configure(s.n, gridCellSize(s.aabbs, s.n));
  bp.setJoints(ib0, ib1, ib0.length);
  const r = await runGpu(bp, s);
  assert.equal(r.big, 7, 'the plane and the six giants on the big list');
  assert.ok(jointed.size > 50, `${jointed.size} jointed pairs`);
  assertSameSet(r.pairs, Int32Array.from(expect), s.aabbs, 'giants and joints');
  // fixed giants 1–3 overlap each other and the plane: none of those pairs; active giants 4–6 do pair
  const has = (i: number, j: number) => r.pairs.some((_, k) => k % 2 === 0 && r.pairs[k] === i && r.pairs[k + 1] === j);
  assert.ok(!has(1, 2) && !has(0, 1), 'fixed–fixed pairs skipped');
  assert.ok(has(4, 5) || jointed.has(4 * s.n + 5), 'active giants pair');
  bp.destroy();
});

test('GPU broad phase: an overflowing pair buffer is reported (count > capacity) and grown by update()', async () => {
  const { device } = await gpu();
  const s = randomScene(800, 5, 5);
  const cpu = bruteForcePairs(s.aabbs, s.n, s.inactive);
  const bp = await GpuBroadPhase.create(device, s.n, 16);
  bp.configure(s.n, gridCellSize(s.aabbs, s.n));
  const buf = device.createBuffer({ size: 32 * s.n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(buf, 0, packAabbs(s.aabbs, s.n, s.inactive));
  const encoder = device.createCommandEncoder();
  bp.encode(encoder, buf);
  device.queue.submit([encoder.finish()]);
  const first = await bp.readPairs();
  assert.equal(first.overflow, true);
  assert.equal(first.found, cpu.length / 2, 'the counter counts every pair found, past the capacity');
  assert.equal(first.pairs.length, 2 * 16, 'only the capacity written');
  const cpuSet = new Set(Array.from({ length: cpu.length / 2 }, (_, k) => cpu[2 * k] * s.n + cpu[2 * k + 1]));
  for (let k = 0; k < 16; k++) assert.ok(cpuSet.has(first.pairs[2 * k] * s.n + first.pairs[2 * k + 1]), 'the written pairs are real pairs');
  assertCanonical(first.pairs, 'overflowed');
  // the pair arguments are capped at the capacity (a narrow phase never reads past the buffer)
  const [args] = await (await import('../src/gpu/frames.js')).readBuffers(device, [bp.pairArgs.buffer]);
  assert.deepEqual([...new Uint32Array(args, bp.pairArgs.offset, 3)], [1, 1, 1], '16 pairs: one workgroup');
  const again = await bp.update(buf);
  assert.equal(again.grew, true);
  assert.equal(again.overflow, false);
  assertSameSet(again.pairs, cpu, s.aabbs, 'after growing');
  const [args2] = await (await import('../src/gpu/frames.js')).readBuffers(device, [bp.pairArgs.buffer]);
  assert.deepEqual([...new Uint32Array(args2, bp.pairArgs.offset, 3)], [Math.ceil(cpu.length / 2 / 64), 1, 1], 'arguments: one thread per pair');
  buf.destroy();
  bp.destroy();
});
