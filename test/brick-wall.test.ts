/**
 * brick-wall (src/scenes/brick-wall.ts, issue 23 item 7): the wall starts as its description says —
 * a running bond whose bricks rest face on face on the course below (full bricks on two, half bricks
 * on one, each centre over its support), flush ends, no overlaps, the sphere in front of it — and two
 * physical facts under softstep-cpu with sleeping off: the wall at rest holds, and the sphere's hit
 * keeps the total momentum the ground cannot change (exactly on frictionless ground; within Coulomb's
 * bound on the ground's friction impulse otherwise).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findRigidScene, rigidScenes, scenes } from '../src/scenes/registry.js';
import { bricksPerLayer, wallExtent, BRICK_DENSITY } from '../src/scenes/brick-wall.js';
import { validateWorld, type BodyDesc } from '../src/model/world.js';
import { parseSceneFile, sceneFileJson } from '../src/model/schema.js';
import { resolveParams } from '../src/scenes/scene.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import type { Snapshot } from '../src/model/snapshot.js';

const scene = findRigidScene('brick-wall')!;
/** The defaults, then small walls: one column (half bricks only in odd courses), no gap, odd rows, one layer. */
const PARAM_SETS: Record<string, number>[] = [{}, { rows: 1, columns: 1, layers: 1 }, { rows: 5, columns: 1, layers: 3 }, { rows: 4, columns: 3, layers: 2, gap: 0 }, { rows: 3, columns: 4, halfLength: 0.3, halfHeight: 0.05, halfDepth: 0.15, gap: 0.05, radius: 1, distance: 0 }];

const half = (b: BodyDesc) => {
  assert.equal(b.shape.type, 'box');
  return b.shape.type === 'box' ? b.shape.halfExtents : [0, 0, 0];
};

test('brick-wall is registered once, after rain, with help for every parameter and defaults in range', () => {
  assert.equal(scenes.filter((s) => s.name === 'brick-wall').length, 1);
  const names = rigidScenes.map((s) => s.name);
  assert.equal(names.indexOf('brick-wall'), names.indexOf('rain') + 1);
  for (const [k, spec] of Object.entries(scene.params)) {
    assert.ok(spec.help.length > 5, k);
    if (spec.min !== undefined) assert.ok(spec.default >= spec.min, k);
    if (spec.max !== undefined) assert.ok(spec.default <= spec.max, k);
  }
  // a few hundred bricks at the defaults (a CPU scene); the AVBD paper's 110k-brick size is a parameter set
  assert.equal(scene.count({}).bodies, 2 + 210);
  assert.ok(scene.count({ rows: 50, columns: 100, layers: 22 }).bodies > 110_000);
});

test('brick-wall: a valid world, counted exactly, the same twice and after export and import', () => {
  for (const given of PARAM_SETS) {
    const what = JSON.stringify(given);
    const world = scene.build(given);
    validateWorld(world);
    assert.equal(world.bodies.length, scene.count(given).bodies, what);
    assert.equal(world.constraints.length, 0);
    assert.equal(world.collisions, true);
    assert.deepStrictEqual(scene.build(given), world, `${what}: deterministic`);
    const params = resolveParams(scene, given);
    const back = parseSceneFile(sceneFileJson(world, { name: 'brick-wall', description: scene.description, params }));
    assert.deepStrictEqual(back.world, world, what);
  }
});

test('brick-wall: a running bond — every brick rests face on face on the course below (full bricks on two, half bricks on one, centre over its support), ends flush, nothing overlaps', () => {
  for (const given of PARAM_SETS) {
    const what = JSON.stringify(given);
    const p = resolveParams(scene, given);
    const world = scene.build(given);
    const bricks = world.bodies.slice(1, -1);
    assert.equal(bricks.length, p.layers * bricksPerLayer(p.rows, p.columns), what);
    const { length: W, height: H, thickness: T } = wallExtent(p);
    // coordinates are sums of a few rounded products of numbers ≤ the wall's size: a few ulps of it
    const tol = 1e-12 * Math.max(1, W, H, T);
    for (const b of bricks) {
      assert.equal(b.density, BRICK_DENSITY);
      assert.equal(b.friction, p.friction);
      assert.deepEqual(b.orientation ?? [0, 0, 0, 1], [0, 0, 0, 1]);
    }
    // overlap of two aligned boxes along axis k: h_a + h_b − |d_k| (> 0 on every axis: they intersect)
    const ov = (a: BodyDesc, b: BodyDesc, k: number) => half(a)[k] + half(b)[k] - Math.abs(a.position[k] - b.position[k]);
    for (let i = 0; i < bricks.length; i++)
      for (let j = i + 1; j < bricks.length; j++) {
        const depth = Math.min(ov(bricks[i], bricks[j], 0), ov(bricks[i], bricks[j], 1), ov(bricks[i], bricks[j], 2));
        assert.ok(depth <= tol, `${what}: bricks ${i + 1} and ${j + 1} overlap by ${depth} m`);
      }
    for (const a of bricks) {
      const [hx, hy] = half(a);
      assert.equal(hy, p.halfHeight, 'every brick is a course high');
      assert.ok(hx === p.halfLength || Math.abs(2 * hx - (p.halfLength - p.gap / 2)) <= tol, `${what}: a full brick or a half brick L − gap/2 long, got ${2 * hx}`);
      const bottom = a.position[1] - hy;
      if (bottom <= tol) {
        assert.ok(Math.abs(bottom) <= tol, `${what}: the bottom course stands on the ground`);
        continue;
      }
      // the bricks under it: the same layer, their top face at its bottom face, overlapping it along x
      const under = bricks.filter((b) => Math.abs(b.position[1] + half(b)[1] - bottom) <= tol && ov(a, b, 2) > 0 && ov(a, b, 0) > tol);
      assert.equal(under.length, hx === p.halfLength ? 2 : 1, `${what}: brick at ${a.position} rests on ${under.length}`);
      // its centre over the span of its support, so its weight cannot tip it
      const left = Math.min(...under.map((b) => b.position[0] - half(b)[0])), right = Math.max(...under.map((b) => b.position[0] + half(b)[0]));
      assert.ok(a.position[0] > left && a.position[0] < right, `${what}: brick at ${a.position} overhangs its support [${left}, ${right}]`);
      // the bond: no vertical joint runs through two courses (a brick's ends lie off the joints below)
      for (const b of under) for (const end of [-1, 1]) if (Math.abs(a.position[0] + end * hx - (b.position[0] + end * half(b)[0])) <= tol) {
        const wallEnd = Math.abs(Math.abs(a.position[0] + end * hx) - W / 2) <= tol;
        assert.ok(wallEnd, `${what}: a joint runs through two courses at x = ${a.position[0] + end * hx}`);
      }
    }
    // each course of each layer spans exactly the wall's length: flush ends
    const courses = new Map<string, BodyDesc[]>();
    for (const b of bricks) {
      const key = `${b.position[1].toFixed(9)} ${b.position[2].toFixed(9)}`;
      courses.set(key, [...(courses.get(key) ?? []), b]);
    }
    assert.equal(courses.size, p.rows * p.layers, what);
    for (const c of courses.values()) {
      assert.ok(Math.abs(Math.min(...c.map((b) => b.position[0] - half(b)[0])) + W / 2) <= tol, what);
      assert.ok(Math.abs(Math.max(...c.map((b) => b.position[0] + half(b)[0])) - W / 2) <= tol, what);
    }
    // the sphere: in front of the wall (−z) by `distance`, level with its middle or on the ground, moving at `speed` along +z
    const s = world.bodies[world.bodies.length - 1];
    assert.ok(s.shape.type === 'sphere' && s.shape.radius === p.radius);
    assert.ok(Math.abs(-T / 2 - (s.position[2] + p.radius) - p.distance) <= tol, `${what}: the sphere's front ${p.distance} m from the wall`);
    assert.ok(s.position[1] - p.radius >= -tol, `${what}: the sphere above the ground`);
    assert.ok(Math.abs(s.position[1] - Math.max(p.radius, H / 2)) <= tol);
    assert.deepEqual(s.linearVelocity, [0, 0, p.speed]);
  }
});

test('brick-wall refuses a gap that leaves no half brick, naming the parameter', () => {
  // L − gap/2 ≥ 1 cm: with L = 0.2 m, gap ≤ 0.38 m
  assert.doesNotThrow(() => scene.count({ gap: 0.38 }));
  assert.throws(() => scene.build({ gap: 0.385 }), /scene 'brick-wall': parameter 'gap' must leave the half bricks/);
});

async function run(solverId: string, given: Record<string, number>, frames: number, each: (frame: number, s: Snapshot) => void): Promise<void> {
  const world = scene.build(given);
  const info = findSolver(solverId)!;
  const solver = await info.create(world, resolveOptions(info, { sleep: 0 }, world));
  try {
    each(0, await solver.snapshot());
    for (let f = 1; f <= frames; f++) {
      await solver.step(1);
      each(f, await solver.snapshot());
    }
  } finally {
    solver.destroy();
  }
}

/*
 * The wall at rest holds (the sphere at speed 0 falls to the ground 1 m in front of it, touching
 * nothing): once settled (1 s: the soft contacts of ten courses compress 15 mm), no brick moves more
 * than 1 % of its least edge (2 mm) from 1 s to 4 s, the piles' rule (test/piles.test.ts), checked at
 * every frame. Measured (2026-11-27, sleeping off, defaults): softstep-cpu 1.01 mm (the top course's
 * end half brick settling in the next second, then still), pgs-cpu, gs-cpu and si-soft-cpu 1.19 mm,
 * rapier 1.76 mm, xpbd-cpu 0.001 mm; jacobi-cpu 0.81 mm at its load-aware 9 substeps × 8 sweeps
 * (solvers/jacobi/substeps.ts: ten courses, a mean depth of 5.5 contacts; at the former size-only rule's
 * 4 substeps a brick wandered 476 mm, at 6 it moved 2.66 mm, at 8 0.92 mm).
 */
const WALL_KNOWN: Record<string, string> = {};
for (const id of ['softstep-cpu', 'jacobi-cpu'])
test(`brick-wall at rest holds under ${id}, sleeping off: no brick moves 1 % of its least edge from 1 s to 4 s`, WALL_KNOWN[id] ? { todo: `open: ${WALL_KNOWN[id]}` } : {}, async () => {
  const p = resolveParams(scene, {});
  const limit = 0.01 * 2 * Math.min(p.halfLength, p.halfHeight, p.halfDepth);
  let settled: Float64Array | null = null;
  let peak = 0, peakBody = -1;
  await run(id, { speed: 0 }, 240, (f, s) => {
    if (f === 60) settled = Float64Array.from(s.position);
    if (f <= 60) return;
    // the bricks only (the last body is the sphere, rolling off in front)
    for (let i = 1; i < s.bodyCount - 1; i++) {
      const d = Math.hypot(s.position[3 * i] - settled![3 * i], s.position[3 * i + 1] - settled![3 * i + 1], s.position[3 * i + 2] - settled![3 * i + 2]);
      if (!(d <= peak)) (peak = d), (peakBody = i);
    }
  });
  assert.ok(peak < limit, `brick ${peakBody} moved ${(peak * 1000).toFixed(3)} mm after settling (limit ${limit * 1000} mm)`);
});

/*
 * The hit (1 s, the defaults: a 452 kg sphere at 10 m/s into 210 bricks of 16 kg). The forces on the
 * bodies are gravity (along −y), the ground's (its normal is +y: a normal impulse along y, friction in
 * x–z) and the contacts between bodies, equal and opposite in pairs. So the total horizontal
 * momentum p_h = (p_x, p_z) changes only by the ground's friction impulse, which Coulomb's law bounds
 * point by point by μ times the normal impulse; and the ground's total normal impulse is what the
 * vertical momentum gained over the weight's impulse: N(t) = p_y(t) − p_y(0) + M g t. Hence at every
 * frame
 *   μ = 0:  p_h(t) = p_h(0)                          (to roundoff: 1e-9 of |p(0)|; measured 6e-16)
 *   μ > 0:  |p_h(t) − p_h(0)| ≤ μ N(t)               (+ the same roundoff)
 * with the momentum recomputed from the snapshots (metrics/metrics.ts). The wall must take a real share
 * of the sphere's momentum for this to say anything: by 0.5 s its bricks carry over a quarter of it
 * (measured 41 % at μ = 0). (Angular momentum about y is not checked: the integrators drop the
 * gyroscopic term of the tumbling bricks, so it is not conserved even in free flight.)
 */
test('brick-wall: the sphere\'s momentum goes into the wall; horizontal momentum kept exactly on frictionless ground, within μ·(ground normal impulse) with friction (softstep-cpu)', async () => {
  for (const friction of [0, 0.6]) {
    const world = scene.build({ friction });
    const metrics = new MetricsContext(world);
    let mass = 0;
    for (let i = 0; i < world.bodies.length; i++) mass += metrics.mass[i];
    let p0: number[] = [], wallShare = 0;
    await run('softstep-cpu', { friction }, 60, (f, s) => {
      const p = metrics.measure(s).momentum;
      if (f === 0) p0 = [...p];
      const dh = Math.hypot(p[0] - p0[0], p[2] - p0[2]);
      const normal = p[1] - p0[1] + mass * 9.81 * s.time;
      const bound = friction * normal + 1e-9 * Math.hypot(...p0);
      assert.ok(dh <= bound, `μ ${friction}, frame ${f}: |Δp_h| = ${dh} kg·m/s beyond μ N = ${friction * normal}`);
      if (f === 30) {
        wallShare = 0;
        for (let i = 1; i < s.bodyCount - 1; i++) wallShare += metrics.mass[i] * s.linearVelocity[3 * i + 2];
        wallShare /= p0[2];
      }
    });
    assert.ok(wallShare > 0.25, `μ ${friction}: the wall carries ${(100 * wallShare).toFixed(1)} % of the sphere's momentum at 0.5 s`);
  }
});
