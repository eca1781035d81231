/**
 * The stress scenes (src/scenes/stress-scenes.ts) start where their descriptions say: valid worlds,
 * counted exactly, deterministic, no two bodies overlapping beyond 1 mm and none in or behind a
 * plane (checked with the collision narrow phase), the same after export and import; the cradle's
 * joints exactly satisfied with its spheres touching; the dominoes within reach of each other. Then
 * each runs 30 frames under softstep-cpu, small, and stays finite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findRigidScene, rigidScenes, scenes } from '../src/scenes/registry.js';
import { stressScenes, TILE, CRADLE_SPREAD, cardCount } from '../src/scenes/stress-scenes.js';
import { validateWorld, type BodyDesc, type WorldDesc } from '../src/model/world.js';
import { parseSceneFile, sceneFileJson } from '../src/model/schema.js';
import { resolveParams } from '../src/scenes/scene.js';
import { collide } from '../src/collision/narrow.js';
import type { Pose, V3, Q4 } from '../src/collision/types.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';

const NAMES = ['confined', 'card-house', 'domino', 'newtons-cradle', 'rain'];
/** Small versions (the pairwise overlap check is O(n²)), then other parameter sets of each scene. */
const SMALL: Record<string, Record<string, number>> = { confined: { count: 40 }, 'card-house': {}, domino: { count: 6 }, 'newtons-cradle': {}, rain: { count: 60 } };
const OTHERS: Record<string, Record<string, number>[]> = {
  confined: [{ count: 1 }, { count: 17, radius: 0.3, speed: 0, seed: 7 }],
  'card-house': [{ levels: 1 }, { levels: 4, angle: 0.45, friction: 1 }, { levels: 2, angle: 0.05 }],
  domino: [{ count: 1 }, { count: 5, spacing: 0.15, push: 0 }, { count: 4, spacing: 0.95, push: 3 }],
  'newtons-cradle': [{ count: 1 }, { count: 3, angle: 0, gap: 0.01, radius: 0.2, length: 0.5 }, { count: 7, angle: 1.5 }],
  rain: [{ count: 1 }, { count: 31, size: 0.4, height: 0, seed: 3 }],
};
const paramSets = (name: string) => [SMALL[name], ...OTHERS[name]];

const pose = (b: BodyDesc): Pose => ({ position: [...b.position] as V3, orientation: [...(b.orientation ?? [0, 0, 0, 1])] as Q4 });

/** The deepest overlap of any two bodies (either may be a plane; plane–plane pairs skipped): −min separation, ≤ 0 when none touch. */
function deepestOverlap(world: WorldDesc): { depth: number; pair: [number, number] } {
  let depth = -Infinity, pair: [number, number] = [-1, -1];
  const b = world.bodies;
  for (let i = 0; i < b.length; i++)
    for (let j = i + 1; j < b.length; j++) {
      if (b[i].shape.type === 'plane' && b[j].shape.type === 'plane') continue;
      const m = collide(b[i].shape, pose(b[i]), b[j].shape, pose(b[j]), 0.01);
      for (const p of m?.points ?? []) if (-p.separation > depth) [depth, pair] = [-p.separation, [i, j]];
    }
  return { depth, pair };
}

test('the stress scenes are registered once each, after the contact scenes, with help, defaults in range', () => {
  assert.deepEqual(stressScenes.map((s) => s.name), NAMES);
  const names = rigidScenes.map((s) => s.name);
  assert.equal(names.indexOf('confined'), names.indexOf('rolling') + 1);
  for (const scene of stressScenes) {
    assert.equal(scenes.filter((s) => s.name === scene.name).length, 1);
    assert.ok(scene.description.length > 20);
    for (const [k, spec] of Object.entries(scene.params)) {
      assert.ok(spec.help.length > 0, `${scene.name}.${k}`);
      if (spec.min !== undefined) assert.ok(spec.default >= spec.min, `${scene.name}.${k}`);
      if (spec.max !== undefined) assert.ok(spec.default <= spec.max, `${scene.name}.${k}`);
      if (spec.integer) assert.ok(Number.isInteger(spec.default));
    }
  }
  // the defaults the brief asks for
  const d = (n: string, k: string) => findRigidScene(n)!.params[k].default;
  assert.equal(d('confined', 'count'), 100);
  assert.equal(d('confined', 'radius'), 0.1);
  assert.equal(d('card-house', 'levels'), 3);
  assert.equal(d('card-house', 'friction'), 0.7);
  assert.equal(d('domino', 'count'), 20);
  assert.equal(d('newtons-cradle', 'count'), 5);
  assert.equal(d('newtons-cradle', 'angle'), 0.5);
  assert.equal(d('rain', 'count'), 1000);
});

test('every stress scene builds a valid world, counted exactly, the same twice, also at its defaults', () => {
  for (const name of NAMES) {
    const scene = findRigidScene(name)!;
    for (const given of [{}, ...paramSets(name)]) {
      const world = scene.build(given);
      validateWorld(world);
      const n = scene.count(given);
      assert.equal(n.bodies, world.bodies.length, `${name} ${JSON.stringify(given)}`);
      assert.equal(n.constraints, world.constraints.length);
      assert.deepStrictEqual(scene.build(given), world, `${name}: deterministic`);
      assert.equal(world.collisions, true);
    }
  }
  assert.equal(findRigidScene('card-house')!.build({}).bodies.length, 1 + 15); // the classic 15-card, 3-level house
  assert.equal(cardCount(1), 2);
});

test('no two bodies of a stress scene start overlapping beyond 1 mm, and none in or behind a plane', () => {
  for (const name of NAMES)
    for (const given of paramSets(name)) {
      const world = findRigidScene(name)!.build(given);
      const { depth, pair } = deepestOverlap(world);
      assert.ok(depth <= 1e-3, `${name} ${JSON.stringify(given)}: bodies ${pair} overlap by ${depth} m`);
      // a body wholly behind a plane would be reported above as a deep overlap; check the centres too
      for (const pl of world.bodies.filter((b) => b.shape.type === 'plane')) {
        const m0 = collide(pl.shape, pose(pl), { type: 'sphere', radius: 1e-9 }, pose(pl), 1); // the plane's normal
        for (const b of world.bodies) if (b.shape.type !== 'plane') {
          const d = b.position.map((x, i) => x - pl.position[i]);
          assert.ok(m0, 'a sphere on the plane touches it');
          const n = m0.normal;
          assert.ok(d[0] * n[0] + d[1] * n[1] + d[2] * n[2] > 0, `${name}: a centre behind a plane`);
        }
      }
    }
});

test('the card house: cards touch where they lean and rest (contact within 1 mm), they do not hover', () => {
  for (const given of paramSets('card-house')) {
    const world = findRigidScene('card-house')!.build(given);
    // every card touches something below it or beside it: a narrow-phase point with |s| ≤ 1 mm
    for (let i = 1; i < world.bodies.length; i++) {
      let touches = 0;
      for (let j = 0; j < world.bodies.length; j++) {
        if (j === i) continue;
        const m = collide(world.bodies[i].shape, pose(world.bodies[i]), world.bodies[j].shape, pose(world.bodies[j]), 1e-3);
        if (m && m.points.some((p) => Math.abs(p.separation) <= 1e-3)) touches++;
      }
      assert.ok(touches >= 2, `card ${i} touches ${touches} bodies`);
    }
  }
});

test('every stress scene is the same world after export and import', () => {
  for (const name of NAMES) {
    const scene = findRigidScene(name)!;
    for (const given of paramSets(name)) {
      const world = scene.build(given);
      const params = resolveParams(scene, given);
      const back = parseSceneFile(sceneFileJson(world, { name, description: scene.description, params }));
      assert.deepStrictEqual(back.world, world, `${name} ${JSON.stringify(given)}`);
      assert.deepStrictEqual(back.file.params, params);
    }
  }
});

test("newtons-cradle: joints exactly satisfied, neighbours touching (gap), e = 1 and μ = 0 on every sphere", () => {
  for (const given of paramSets('newtons-cradle')) {
    const scene = findRigidScene('newtons-cradle')!;
    const p = resolveParams(scene, given);
    const world = scene.build(given);
    assert.equal(world.constraints.length, 2 * p.count);
    for (const c of world.constraints) {
      assert.ok(c.type === 'distance' && c.bodyB === null && c.length !== undefined);
      if (c.type !== 'distance' || c.length === undefined) continue;
      const a = world.bodies[c.bodyA].position; // anchorA is the sphere's centre
      assert.deepEqual(c.anchorA, [0, 0, 0]);
      const dist = Math.hypot(a[0] - c.anchorB[0], a[1] - c.anchorB[1], a[2] - c.anchorB[2]);
      assert.ok(Math.abs(dist - c.length) <= 1e-12, `violation ${dist - c.length}`);
      assert.ok(Math.abs(c.length - Math.hypot(p.length, CRADLE_SPREAD)) <= 1e-12);
    }
    for (const b of world.bodies) {
      assert.equal(b.restitution, 1);
      assert.equal(b.friction, 0);
      assert.equal(b.shape.type, 'sphere');
    }
    // the spheres at rest (all but the first) hang straight below their suspension lines, 2r + gap apart
    for (let i = 1; i < p.count; i++) {
      const c = world.constraints[2 * i];
      assert.ok(c.type === 'distance');
      assert.ok(Math.abs(world.bodies[i].position[0] - c.anchorB[0]) <= 1e-12);
      assert.ok(Math.abs(world.bodies[i].position[1] - (c.anchorB[1] - p.length)) <= 1e-12);
      if (i >= 2) {
        const d = world.bodies[i].position[0] - world.bodies[i - 1].position[0];
        assert.ok(Math.abs(d - (2 * p.radius + p.gap)) <= 1e-12, `spheres ${i - 1}, ${i} apart by ${d}`);
      }
    }
    // the first sphere's suspension line is 2r + gap from the second's: at α = 0 it touches too
    if (p.count >= 2) {
      const c0 = world.constraints[0], c1 = world.constraints[2];
      assert.ok(c0.type === 'distance' && c1.type === 'distance');
      assert.ok(Math.abs(c1.anchorB[0] - c0.anchorB[0] - (2 * p.radius + p.gap)) <= 1e-12);
      // pulled out by `angle` about its line: the centre is L sin α aside and L (1 − cos α) up
      const x0 = world.bodies[0].position;
      assert.ok(Math.abs(c0.anchorB[0] - x0[0] - p.length * Math.sin(p.angle)) <= 1e-12);
    }
  }
});

test('domino: the tiles upright on the ground, each within reach of the one before it falling', () => {
  for (const given of paramSets('domino')) {
    const scene = findRigidScene('domino')!;
    const p = resolveParams(scene, given);
    const world = scene.build(given);
    const [t, h] = TILE;
    const tiles = world.bodies.slice(1);
    for (const b of tiles) assert.ok(Math.abs(b.position[1] - h) <= 1e-15, 'standing on the ground');
    for (let k = 0; k + 1 < tiles.length; k++) {
      const gap = tiles[k + 1].position[0] - tiles[k].position[0] - 2 * t; // face to face
      assert.ok(gap > 0, 'apart');
      // tile k falls forward about its front bottom edge: its top sweeps out to 2h from that edge,
      // so it reaches tile k+1's back face when the face-to-face gap < 2h
      assert.ok(gap < 2 * h, `tile ${k + 1} out of reach (${gap} m)`);
    }
    // the first tile turns about its front bottom edge: v_c = ω × (c − E), E = (x0 + t, 0, 0)
    const f = tiles[0];
    const w = f.angularVelocity ?? [0, 0, 0];
    assert.deepEqual(w, [0, 0, p.push === 0 ? 0 : -p.push]);
    const r = [f.position[0] - (f.position[0] + t), f.position[1], 0];
    const v = f.linearVelocity ?? [0, 0, 0];
    const expect = [w[1] * r[2] - w[2] * r[1], w[2] * r[0] - w[0] * r[2], w[0] * r[1] - w[1] * r[0]];
    for (let i = 0; i < 3; i++) assert.ok(Math.abs(v[i] - expect[i]) <= 1e-15);
  }
});

test('confined and rain: five planes, shapes in turn, densities in range, fill about half, from a seeded PRNG (another seed, another scene)', () => {
  for (const name of ['confined', 'rain']) {
    const scene = findRigidScene(name)!;
    const a = scene.build({ ...SMALL[name], seed: 1 }), b = scene.build({ ...SMALL[name], seed: 2 });
    assert.notDeepStrictEqual(a, b);
    assert.equal(a.bodies.filter((x) => x.shape.type === 'plane').length, 5);
  }
  const rain = findRigidScene('rain')!.build(SMALL.rain);
  const kinds = rain.bodies.slice(5).map((b) => b.shape.type);
  assert.deepEqual(kinds.slice(0, 6), ['sphere', 'box', 'capsule', 'sphere', 'box', 'capsule']);
  for (const b of rain.bodies.slice(5)) assert.ok(b.density! >= 500 && b.density! <= 1500);
  // confined: the spheres' volume is about half the L³ cube the walls stand around (L from the count)
  const c = findRigidScene('confined')!;
  const w = c.build({});
  const side = 2 * w.bodies[2].position[0];
  const vol = 100 * (4 / 3) * Math.PI * 0.1 ** 3;
  assert.ok(Math.abs(vol / side ** 3 - 0.5) < 1e-9, `fill ${vol / side ** 3}`);
});

test('smoke: each stress scene, small, runs 30 frames under softstep-cpu with a finite state', async () => {
  const info = findSolver('softstep-cpu')!;
  const small: Record<string, Record<string, number>> = { confined: { count: 27 }, 'card-house': { levels: 2 }, domino: { count: 5 }, 'newtons-cradle': {}, rain: { count: 30 } };
  for (const name of NAMES) {
    const world = findRigidScene(name)!.build(small[name]);
    const solver = await info.create(world, resolveOptions(info, {}));
    try {
      await solver.step(30);
      const s = await solver.snapshot();
      for (const arr of [s.position, s.orientation, s.linearVelocity, s.angularVelocity]) assert.ok(Array.from(arr).every(Number.isFinite), `${name}: non-finite state`);
    } finally {
      solver.destroy();
    }
  }
});

test('domino: the push tips the first tile over above ω_min = √(2 m g Δ / I_E), not below (softstep-cpu, 3 s)', async () => {
  // turning about its front bottom edge E the centre rises Δ = √(h² + t²) − h before it passes over
  // E; the spin's energy ½ I_E ω² must pay m g Δ, I_E = m ((2t)² + (2h)²)/12 + m (t² + h²) (parallel axes)
  const [t, h] = TILE;
  const wMin = Math.sqrt((2 * 9.81 * (Math.hypot(h, t) - h)) / ((4 * t * t + 4 * h * h) / 12 + t * t + h * h));
  const info = findSolver('softstep-cpu')!;
  for (const [push, falls] of [[0.8 * wMin, false], [1.25 * wMin, true]] as const) {
    const solver = await info.create(findRigidScene('domino')!.build({ count: 1, push }), resolveOptions(info, {}));
    try {
      await solver.step(180);
      const s = await solver.snapshot();
      const tilt = 2 * Math.asin(Math.min(1, Math.abs(s.orientation[4 + 2]))); // body 1's turn about z
      assert.equal(tilt > 1, falls, `push ${push.toFixed(3)} rad/s (ω_min ${wMin.toFixed(3)}): tilt ${tilt.toFixed(3)} rad`);
    } finally {
      solver.destroy();
    }
  }
});
