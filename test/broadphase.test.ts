/**
 * The broad phase (src/collision/broadphase.ts) and the shapes' bounding boxes (src/collision/aabb.ts).
 *
 * shapeAabb: each shape at random poses, its box holds densely sampled points of the shape (placed
 * with rigid/quat.ts `rotate`, not with the box's own formula) and is tight: for spheres, boxes and
 * capsules the extreme sampled features (the 8 corners, the segment's ends ± r along each axis,
 * c ± r e_i) reach each face of the box within 1e-9. Planes: bounded exactly along the axis their
 * normal lies on, at the plane (+ margin), and infinite elsewhere; sampled points of the half-space,
 * out to 10⁶ m, lie in the box.
 *
 * Pairs: on seeded random scenes (spheres, boxes, capsules at random poses, static planes and some
 * static boxes), over steps of random motion in which the sweep's order is carried from step to step,
 * with bodies added and removed between steps, sweep and prune (every axis choice) and the hashed
 * grid report exactly the pairs of an all-pairs test written here from the definition (closed boxes
 * overlapping on x, y and z, not both static), in the documented order; with bands (the default,
 * narrow ones that leave bodies to the all-against-one path, wide ones) and without. Also: exact ties
 * (a lattice of touching boxes: every lattice neighbour, counted directly), incoherent motion (the sort's
 * fallback), a sparse and a flat scene, 0–2 bodies, and no static–static pair ever.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shapeAabb } from '../src/collision/aabb.js';
import { SweepAndPrune, HashGrid, bruteForcePairs, type BroadPhase } from '../src/collision/broadphase.js';
import { rotate, integrateOrientation } from '../src/rigid/quat.js';
import type { Shape } from '../src/model/world.js';
import { mulberry32 } from './support/random.js';

type Rand = () => number;

function randomQuat(rand: Rand): Float64Array {
  // uniform on SO(3) (Shoemake): three uniforms → unit quaternion
  const u1 = rand(), u2 = 2 * Math.PI * rand(), u3 = 2 * Math.PI * rand();
  const a = Math.sqrt(1 - u1), b = Math.sqrt(u1);
  return Float64Array.of(a * Math.sin(u2), a * Math.cos(u2), b * Math.sin(u3), b * Math.cos(u3));
}

function randomShape(rand: Rand): Shape {
  const k = rand();
  if (k < 1 / 3) return { type: 'sphere', radius: 0.05 + 0.5 * rand() };
  if (k < 2 / 3) return { type: 'box', halfExtents: [0.05 + 0.5 * rand(), 0.05 + 0.5 * rand(), 0.05 + 0.5 * rand()] };
  return { type: 'capsule', radius: 0.05 + 0.3 * rand(), halfHeight: 0.05 + 0.5 * rand() };
}

/** world point c + R(q) p */
function place(c: Float64Array, q: Float64Array, px: number, py: number, pz: number): Float64Array {
  const out = new Float64Array(3);
  rotate(q, 0, Float64Array.of(px, py, pz), 0, out, 0);
  out[0] += c[0];
  out[1] += c[1];
  out[2] += c[2];
  return out;
}

/** points on the surface of the shape, local frame */
function surfaceSamples(shape: Shape, rand: Rand, n: number): number[][] {
  const pts: number[][] = [];
  const dir = (): number[] => {
    for (;;) {
      const v = [2 * rand() - 1, 2 * rand() - 1, 2 * rand() - 1];
      const l = Math.hypot(...v);
      if (l > 1e-3 && l <= 1) return v.map((x) => x / l);
    }
  };
  for (let s = 0; s < n; s++) {
    if (shape.type === 'sphere') pts.push(dir().map((x) => x * shape.radius));
    else if (shape.type === 'box') {
      const h = shape.halfExtents;
      const p = [(2 * rand() - 1) * h[0], (2 * rand() - 1) * h[1], (2 * rand() - 1) * h[2]];
      const f = Math.floor(6 * rand());
      p[f % 3] = f < 3 ? h[f % 3] : -h[f % 3]; // onto one face
      pts.push(p);
    } else if (shape.type === 'capsule') {
      const { radius: r, halfHeight: h } = shape;
      if (rand() < 0.5) {
        const t = 2 * Math.PI * rand();
        pts.push([r * Math.cos(t), (2 * rand() - 1) * h, r * Math.sin(t)]);
      } else {
        const d = dir();
        const end = d[1] >= 0 ? h : -h; // hemisphere caps
        pts.push([r * d[0], end + r * d[1], r * d[2]]);
      }
    }
  }
  if (shape.type === 'box') {
    const h = shape.halfExtents;
    for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) pts.push([sx * h[0], sy * h[1], sz * h[2]]);
  }
  return pts;
}

test('shapeAabb: spheres, boxes, capsules at random poses hold sampled surface points and touch the extreme ones', () => {
  const rand = mulberry32(20261123);
  const box = new Float64Array(6);
  for (let trial = 0; trial < 300; trial++) {
    const shape = randomShape(rand);
    const c = Float64Array.of(20 * rand() - 10, 20 * rand() - 10, 20 * rand() - 10);
    const q = trial % 10 === 0 ? Float64Array.of(0, 0, 0, 1) : randomQuat(rand);
    const margin = trial % 2 === 0 ? 0 : 0.1 * rand();
    // position and orientation at offsets inside longer arrays
    const pos = Float64Array.of(9, 9, ...c), ori = Float64Array.of(7, ...q);
    const out = new Float64Array(9);
    shapeAabb(shape, pos, 2, ori, 1, margin, out, 3);
    box.set(out.subarray(3));
    const tol = 1e-12 * 20;
    for (const p of surfaceSamples(shape, rand, 400)) {
      const w = place(c, q, p[0], p[1], p[2]);
      for (let i = 0; i < 3; i++) {
        assert.ok(w[i] >= box[i] + margin - tol && w[i] <= box[3 + i] - margin + tol, `${shape.type}: sample ${w[i]} outside [${box[i] + margin}, ${box[3 + i] - margin}] on axis ${i}`);
      }
    }
    // tight: the extreme features reach the faces (box less the margin)
    const hi = [-Infinity, -Infinity, -Infinity], lo = [Infinity, Infinity, Infinity];
    const reach = (w: ArrayLike<number>, grow: number) => {
      for (let i = 0; i < 3; i++) {
        hi[i] = Math.max(hi[i], w[i] + grow);
        lo[i] = Math.min(lo[i], w[i] - grow);
      }
    };
    if (shape.type === 'sphere') reach(c, shape.radius); // c ± r e_i lie on the sphere
    else if (shape.type === 'box') {
      const h = shape.halfExtents;
      for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) reach(place(c, q, sx * h[0], sy * h[1], sz * h[2]), 0);
    } else if (shape.type === 'capsule') {
      // end ± r e_i lies on the end's hemisphere cap when it is the extreme along e_i
      reach(place(c, q, 0, shape.halfHeight, 0), shape.radius);
      reach(place(c, q, 0, -shape.halfHeight, 0), shape.radius);
    }
    for (let i = 0; i < 3; i++) {
      assert.ok(Math.abs(hi[i] + margin - box[3 + i]) < 1e-9, `${shape.type}: max ${i} ${box[3 + i]} vs extreme ${hi[i] + margin}`);
      assert.ok(Math.abs(lo[i] - margin - box[i]) < 1e-9, `${shape.type}: min ${i} ${box[i]} vs extreme ${lo[i] - margin}`);
    }
  }
});

test('shapeAabb: a plane is bounded only along the axis its normal lies on, and holds its half-space', () => {
  const rand = mulberry32(5);
  const s = Math.SQRT1_2;
  // [quaternion, axis of the normal (−1: none), sign]; these quaternions give exact unit normals
  const cases: [number[], number, number][] = [
    [[0, 0, 0, 1], 1, +1], // ground: n = +y
    [[1, 0, 0, 0], 1, -1], // upside down: n = −y
    [[0.5, 0.5, -0.5, 0.5], 0, +1], // n = +x (R column 1 = (1, 0, 0))
    [[0.5, 0.5, 0.5, 0.5], 2, +1], // n = +z
    [[0, 0, 0.25881904510252074, 0.9659258262890683], -1, 0], // tilted 30° about z
    [[s, 0, 0, s], -1, 0], // n = +z up to rounding: treated as tilted (still a bound)
  ];
  const out = new Float64Array(6);
  for (const [q, ax, sign] of cases) {
    const qq = Float64Array.of(...q);
    // the normal as rotate gives it
    const n = place(new Float64Array(3), qq, 0, 1, 0);
    if (ax >= 0) for (let i = 0; i < 3; i++) assert.equal(n[i], i === ax ? sign : 0);
    const c = Float64Array.of(3 * rand() - 1, 3 * rand() - 1, 3 * rand() - 1);
    const margin = 0.02;
    shapeAabb({ type: 'plane' }, c, 0, qq, 0, margin, out, 0);
    for (let i = 0; i < 3; i++) {
      if (i !== ax) {
        assert.equal(out[i], -Infinity);
        assert.equal(out[3 + i], Infinity);
      } else if (sign > 0) {
        assert.equal(out[i], -Infinity);
        assert.equal(out[3 + i], c[i] + margin);
      } else {
        assert.equal(out[i], c[i] - margin);
        assert.equal(out[3 + i], Infinity);
      }
    }
    // points of the half-space (local y ≤ 0), near and far, lie in the box; points on the plane
    // (local y = 0) reach the bounded face
    for (let k = 0; k < 2000; k++) {
      const scale = k % 2 === 0 ? 10 : 1e6;
      const py = k % 4 < 2 ? 0 : -scale * rand();
      const w = place(c, qq, scale * (2 * rand() - 1), py, scale * (2 * rand() - 1));
      for (let i = 0; i < 3; i++) assert.ok(w[i] >= out[i] - 1e-9 * scale && w[i] <= out[3 + i] + 1e-9 * scale);
      if (ax >= 0 && py === 0) assert.ok(Math.abs(w[ax] - c[ax]) <= 1e-15 * scale + 1e-12);
    }
  }
});

// ---- pairs ------------------------------------------------------------------------------------------

/** the reference: every pair i < j whose closed boxes overlap on all three axes, not both static */
function referencePairs(a: Float64Array, count: number, isStatic?: Uint8Array): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++)
    for (let j = i + 1; j < count; j++) {
      if (isStatic && isStatic[i] && isStatic[j]) continue;
      let overlap = true;
      for (let ax = 0; ax < 3; ax++) if (!(a[6 * i + ax] <= a[6 * j + 3 + ax] && a[6 * j + ax] <= a[6 * i + 3 + ax])) overlap = false;
      if (overlap) out.push(`${i},${j}`);
    }
  return out.join(' ');
}

function reported(bp: BroadPhase): string {
  const out: string[] = [];
  for (let k = 0; k < bp.pairCount; k++) out.push(`${bp.pairs[2 * k]},${bp.pairs[2 * k + 1]}`);
  return out.join(' ');
}

interface Scene {
  shapes: Shape[];
  pos: Float64Array;
  quat: Float64Array;
  vel: Float64Array;
  isStatic: Uint8Array;
  count: number;
  aabbs: Float64Array;
}

function makeScene(rand: Rand, capacity: number): Scene {
  return {
    shapes: [],
    pos: new Float64Array(3 * capacity),
    quat: new Float64Array(4 * capacity),
    vel: new Float64Array(6 * capacity),
    isStatic: new Uint8Array(capacity),
    count: 0,
    aabbs: new Float64Array(6 * capacity),
  };
}

/** adds m bodies: mostly moving spheres/boxes/capsules in a cube of side 2L, some static ones, planes */
function addBodies(s: Scene, rand: Rand, m: number, L: number): void {
  for (let k = 0; k < m; k++) {
    const b = s.count++;
    const r = rand();
    let shape: Shape;
    if (r < 0.03) {
      shape = { type: 'plane' };
      s.isStatic[b] = 1;
      const which = Math.floor(4 * rand());
      const q = [[0, 0, 0, 1], [0.5, 0.5, -0.5, 0.5], [0.5, 0.5, 0.5, 0.5], [0, 0, 0.25881904510252074, 0.9659258262890683]][which];
      s.quat.set(q, 4 * b);
    } else {
      shape = randomShape(rand);
      s.isStatic[b] = r < 0.15 ? 1 : 0;
      s.quat.set(randomQuat(rand), 4 * b);
      if (!s.isStatic[b]) for (let i = 0; i < 6; i++) s.vel[6 * b + i] = 2 * (2 * rand() - 1);
    }
    for (let i = 0; i < 3; i++) s.pos[3 * b + i] = L * (2 * rand() - 1);
    s.shapes[b] = shape;
  }
}

function computeAabbs(s: Scene, margin: number): void {
  for (let b = 0; b < s.count; b++) shapeAabb(s.shapes[b], s.pos, 3 * b, s.quat, 4 * b, margin, s.aabbs, 6 * b);
}

/** one step dt of constant velocities, bouncing back inside the cube */
function move(s: Scene, dt: number, L: number): void {
  for (let b = 0; b < s.count; b++) {
    if (s.isStatic[b]) continue;
    for (let i = 0; i < 3; i++) {
      s.pos[3 * b + i] += dt * s.vel[6 * b + i];
      if (Math.abs(s.pos[3 * b + i]) > L) s.vel[6 * b + i] = -Math.sign(s.pos[3 * b + i]) * Math.abs(s.vel[6 * b + i]);
    }
    integrateOrientation(s.quat, 4 * b, s.vel[6 * b + 3], s.vel[6 * b + 4], s.vel[6 * b + 5], dt);
  }
}

test('sweep and prune and the grid report exactly the overlapping pairs, step after step, as bodies are added and removed', () => {
  for (const seed of [1, 2, 3]) {
    const rand = mulberry32(seed);
    const L = 5;
    const s = makeScene(rand, 1000);
    addBodies(s, rand, 250, L);
    const phases: [string, BroadPhase][] = [
      ['sap', new SweepAndPrune()],
      ['sap x', new SweepAndPrune({ axis: 0 })],
      ['sap y', new SweepAndPrune({ axis: 1 })],
      ['sap z', new SweepAndPrune({ axis: 2 })],
      ['sap, no bands', new SweepAndPrune({ bandWidth: 0 })],
      ['sap y, no bands', new SweepAndPrune({ axis: 1, bandWidth: 0 })],
      ['sap, narrow bands', new SweepAndPrune({ bandWidth: 0.1 })], // many bodies over 16 bands: tested against all
      ['sap, wide bands', new SweepAndPrune({ bandWidth: 8 })],
      ['grid', new HashGrid()],
      ['grid 0.3', new HashGrid({ cellSize: 0.3 })],
    ];
    const sap = phases[0][1] as SweepAndPrune;
    let incrementalSteps = 0, shiftsSeen = 0, bandsSeen = 0;
    for (let step = 0; step < 16; step++) {
      if (step === 5 || step === 9) addBodies(s, rand, step === 5 ? 7 : 120, L); // a few, then many at once
      if (step === 12) s.count -= 40; // the last 40 removed
      computeAabbs(s, 0.02);
      const ref = referencePairs(s.aabbs, s.count, s.isStatic);
      assert.ok(ref.split(' ').length > 100, 'the scene has pairs');
      for (const [name, bp] of phases) {
        bp.update(s.aabbs, s.count, s.isStatic);
        assert.equal(reported(bp), ref, `seed ${seed} step ${step}: ${name}`);
      }
      const bf = bruteForcePairs(s.aabbs, s.count, s.isStatic);
      assert.equal([...bf].join(), ref.replaceAll(' ', ','), 'bruteForcePairs');
      bandsSeen = Math.max(bandsSeen, sap.stats.bands);
      if (step > 0 && !sap.stats.fullSort) {
        incrementalSteps++;
        shiftsSeen += sap.stats.shifts;
      }
      move(s, 0.02, L);
    }
    // the order was carried over (insertion sort, no full sort) on the coherent steps, and it had work to do
    assert.ok(incrementalSteps >= 12, `incremental steps ${incrementalSteps}`);
    assert.ok(shiftsSeen > 0);
    assert.ok(bandsSeen > 3, 'the default sweep ran in bands');
  }
});

test('without static flags every overlapping pair is reported, planes included', () => {
  const rand = mulberry32(77);
  const s = makeScene(rand, 300);
  addBodies(s, rand, 300, 4);
  const bps = [new SweepAndPrune(), new SweepAndPrune({ bandWidth: 0 }), new HashGrid()];
  for (let step = 0; step < 5; step++) {
    computeAabbs(s, 0);
    const ref = referencePairs(s.aabbs, s.count);
    for (const bp of bps) {
      bp.update(s.aabbs, s.count);
      assert.equal(reported(bp), ref);
    }
    move(s, 0.05, 4);
  }
});

test('incoherent motion (every body placed anew each step): the sort falls back to a full sort and stays exact', () => {
  const rand = mulberry32(9);
  const L = 6;
  const s = makeScene(rand, 400);
  addBodies(s, rand, 400, L);
  const bp = new SweepAndPrune({ axis: 0, bandWidth: 0 });
  let fallbacks = 0;
  for (let step = 0; step < 6; step++) {
    for (let b = 0; b < s.count; b++) if (!s.isStatic[b]) for (let i = 0; i < 3; i++) s.pos[3 * b + i] = L * (2 * rand() - 1);
    computeAabbs(s, 0.01);
    bp.update(s.aabbs, s.count, s.isStatic);
    if (step > 0 && bp.stats.fullSort) fallbacks++;
    assert.equal(reported(bp), referencePairs(s.aabbs, s.count, s.isStatic));
  }
  assert.ok(fallbacks >= 4, `fallbacks ${fallbacks}`);
});

test('exact ties: a lattice of touching unit boxes pairs every box with its 26 neighbours (touching counts)', () => {
  const n = 6, count = n * n * n;
  const aabbs = new Float64Array(6 * count);
  const rand = mulberry32(3);
  // shuffled numbering, so that equal keys come in no particular order
  const ids = Array.from({ length: count }, (_, k) => k);
  for (let k = count - 1; k > 0; k--) {
    const r = Math.floor(rand() * (k + 1));
    [ids[k], ids[r]] = [ids[r], ids[k]];
  }
  let k = 0;
  for (let x = 0; x < n; x++) for (let y = 0; y < n; y++) for (let z = 0; z < n; z++) {
    const b = ids[k++];
    aabbs.set([x, y, z, x + 1, y + 1, z + 1], 6 * b);
  }
  // pairs of lattice neighbours (|Δ| ≤ 1 on each axis), counted directly
  let expected = 0;
  for (let x = 0; x < n; x++) for (let y = 0; y < n; y++) for (let z = 0; z < n; z++)
    for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) for (let dz = -1; dz <= 1; dz++) {
      const X = x + dx, Y = y + dy, Z = z + dz;
      if ((dx || dy || dz) && X >= 0 && X < n && Y >= 0 && Y < n && Z >= 0 && Z < n) expected++;
    }
  expected /= 2;
  for (const bp of [new SweepAndPrune(), new SweepAndPrune({ axis: 1 }), new SweepAndPrune({ bandWidth: 0 }), new SweepAndPrune({ bandWidth: 1 }), new HashGrid(), new HashGrid({ cellSize: 1 })]) {
    bp.update(aabbs, count);
    assert.equal(bp.pairCount, expected);
    assert.equal(reported(bp), referencePairs(aabbs, count));
  }
});

test('no pair of two static bodies, even when they overlap', () => {
  const rand = mulberry32(12);
  const s = makeScene(rand, 200);
  addBodies(s, rand, 200, 2); // crowded: most bodies overlap several others
  for (let b = 0; b < s.count; b++) s.isStatic[b] = b % 3 === 0 || s.shapes[b].type === 'plane' ? 1 : 0;
  computeAabbs(s, 0);
  const withStatic = referencePairs(s.aabbs, s.count);
  let staticStatic = 0;
  for (const p of withStatic.split(' ')) {
    const [i, j] = p.split(',').map(Number);
    if (s.isStatic[i] && s.isStatic[j]) staticStatic++;
  }
  assert.ok(staticStatic > 20, 'the scene has overlapping static pairs');
  for (const bp of [new SweepAndPrune(), new SweepAndPrune({ bandWidth: 0 }), new HashGrid()]) {
    bp.update(s.aabbs, s.count, s.isStatic);
    for (let k = 0; k < bp.pairCount; k++) assert.ok(!(s.isStatic[bp.pairs[2 * k]] && s.isStatic[bp.pairs[2 * k + 1]]));
    assert.equal(reported(bp), referencePairs(s.aabbs, s.count, s.isStatic));
    assert.equal(bp.pairCount, withStatic.split(' ').length - staticStatic);
  }
});

test('coherent motion of finite bodies only (no plane pinned first in the order): the insertion sort alone keeps it exact', () => {
  const rand = mulberry32(31);
  const L = 3;
  const s = makeScene(rand, 300);
  for (let k = 0; k < 300; k++) {
    const b = s.count++;
    s.shapes[b] = randomShape(rand);
    s.quat.set(randomQuat(rand), 4 * b);
    for (let i = 0; i < 3; i++) s.pos[3 * b + i] = L * (2 * rand() - 1);
    for (let i = 0; i < 6; i++) s.vel[6 * b + i] = 6 * (2 * rand() - 1);
  }
  const bps = [new SweepAndPrune({ axis: 0 }), new SweepAndPrune({ axis: 1 }), new SweepAndPrune({ axis: 2 }), new SweepAndPrune({ axis: 0, bandWidth: 0 }), new SweepAndPrune({ axis: 2, bandWidth: 0 })];
  for (let step = 0; step < 40; step++) {
    computeAabbs(s, 0.01);
    const ref = referencePairs(s.aabbs, s.count);
    for (const bp of bps) {
      bp.update(s.aabbs, s.count);
      assert.equal(reported(bp), ref, `step ${step} axis ${bp.stats.axis}`);
      if (step > 0) assert.equal(bp.stats.fullSort, false);
    }
    move(s, 0.02, L);
  }
});

test('a sparse scene (bodies strewn over 2 km) and a flat one (all at one height): exact pairs', () => {
  const rand = mulberry32(44);
  for (const [spread, flat] of [[1000, false], [30, true]] as const) {
    const s = makeScene(rand, 400);
    addBodies(s, rand, 400, spread);
    if (flat) for (let b = 0; b < s.count; b++) s.pos[3 * b + 1] = 0;
    // clusters, so that a sparse scene still has pairs
    for (let b = 200; b < s.count; b++) for (let i = 0; i < 3; i++) s.pos[3 * b + i] = s.pos[3 * (b - 200) + i] + 0.5 * (rand() - 0.5);
    const bps = [new SweepAndPrune(), new SweepAndPrune({ bandWidth: 0 }), new HashGrid()];
    for (let step = 0; step < 4; step++) {
      computeAabbs(s, 0.01);
      const ref = referencePairs(s.aabbs, s.count, s.isStatic);
      for (const bp of bps) {
        bp.update(s.aabbs, s.count, s.isStatic);
        assert.equal(reported(bp), ref);
      }
      move(s, 0.05, spread);
    }
    // sparse: more bands of the default width than bodies, so widened to one band per body
    if (!flat) assert.equal((bps[0] as SweepAndPrune).stats.bands, s.count);
  }
});

test('no bodies, one, two, then one again', () => {
  const a = Float64Array.of(0, 0, 0, 1, 1, 1, 0.5, 0.5, 0.5, 2, 2, 2);
  for (const bp of [new SweepAndPrune(), new SweepAndPrune({ bandWidth: 0 }), new HashGrid()]) {
    for (const [count, pairs] of [[0, ''], [1, ''], [2, '0,1'], [1, ''], [0, ''], [2, '0,1']] as const) {
      bp.update(a, count);
      assert.equal(reported(bp), pairs);
    }
  }
});

test('a state blowing up (every speculative margin covering the scene) is reported as a SolverFailure, not a crash', async () => {
  const { CollisionPipeline, MAX_CANDIDATES_PER_BODY } = await import('../src/collision/pipeline.js');
  const { ContactList } = await import('../src/rows/contact.js');
  // 1,500 spheres 1 m apart on a line, each moving at 1e6 m/s: at h = 1/60 every margin h·|v| spans
  // the whole line, so all n(n − 1)/2 = 1,124,250 pairs are candidates, over the 1e6 floor of the
  // limit (64 n = 96,000 is below it)
  const n = 1500;
  const bodies = Array.from({ length: n }, (_, i) => ({ shape: { type: 'sphere' as const, radius: 0.1 }, mass: 1, position: [i, 0, 0] as [number, number, number] }));
  const pipeline = new CollisionPipeline(bodies, new Float64Array(n).fill(1));
  const position = new Float64Array(3 * n), orientation = new Float64Array(4 * n), v = new Float64Array(3 * n), w = new Float64Array(3 * n);
  for (let i = 0; i < n; i++) {
    position[3 * i] = i;
    orientation[4 * i + 3] = 1;
    v[3 * i + 1] = 1e6;
  }
  assert.ok((n * (n - 1)) / 2 > Math.max(MAX_CANDIDATES_PER_BODY * n, 1e6));
  assert.throws(() => pipeline.detect(position, orientation, v, w, 1 / 60, new ContactList()), (e: Error) => e.name === 'SolverFailure' && /blowing up/.test(e.message));
  // at rest the same line has no candidates at all
  v.fill(0);
  const list = new ContactList();
  pipeline.detect(position, orientation, v, w, 1 / 60, list);
  assert.equal(list.count, 0);
});

test('SweepAndPrune.addGrown: after some boxes grow, the pairs are those of the grown boxes (brute force), each once, in order', () => {
  const rand = mulberry32(77);
  for (const [n, k] of [[200, 3], [500, 40], [300, 1]] as const) {
    const boxes = new Float64Array(6 * (n + 1));
    const isStatic = new Uint8Array(n + 1);
    for (let i = 0; i < n; i++) {
      const c = [4 * rand(), 4 * rand(), 4 * rand()], e = 0.05 + 0.2 * rand();
      for (let a = 0; a < 3; a++) {
        boxes[6 * i + a] = c[a] - e;
        boxes[6 * i + 3 + a] = c[a] + e;
      }
      isStatic[i] = rand() < 0.2 ? 1 : 0;
    }
    // a ground plane's box (unbounded but above y = 0.3), static
    boxes.set([-Infinity, -Infinity, -Infinity, Infinity, 0.3, Infinity], 6 * n);
    isStatic[n] = 1;
    const sap = new SweepAndPrune();
    sap.update(boxes, n + 1, isStatic);
    const grown = new Int32Array(k), old = new Float64Array(6 * k);
    const picked = new Set<number>();
    for (let t = 0; t < k; t++) {
      let g: number;
      do g = Math.floor(rand() * n);
      while (picked.has(g));
      picked.add(g);
      grown[t] = g;
      old.set(boxes.subarray(6 * g, 6 * g + 6), 6 * t);
      const m = 0.5 * rand();
      for (let a = 0; a < 3; a++) {
        boxes[6 * g + a] -= m;
        boxes[6 * g + 3 + a] += m;
      }
    }
    sap.addGrown(boxes, n + 1, grown, k, old, isStatic);
    assert.deepEqual([...sap.pairs.subarray(0, 2 * sap.pairCount)], [...bruteForcePairs(boxes, n + 1, isStatic)], `${n} boxes, ${k} grown`);
  }
});
