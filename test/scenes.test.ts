/** The built-in scenes start where their descriptions say. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findRigidScene, scenes } from '../src/scenes/registry.js';
import { buildScene, resolveParams } from '../src/scenes/scene.js';
import { isParticleSystem, validateParticleSystem } from '../src/model/particle-system.js';
import { validateWorld, massProperties } from '../src/model/world.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import type { Snapshot } from '../src/solvers/solver.js';
import type { WorldDesc } from '../src/model/world.js';

const EPS = Number.EPSILON;

/** The world's own initial state as a snapshot. */
function initialSnapshot(world: WorldDesc): Snapshot {
  const n = world.bodies.length;
  return {
    frame: 0,
    time: 0,
    bodyCount: n,
    position: Float64Array.from(world.bodies.flatMap((b) => b.position)),
    orientation: Float64Array.from(world.bodies.flatMap((b) => b.orientation ?? [0, 0, 0, 1])),
    linearVelocity: Float64Array.from(world.bodies.flatMap((b) => b.linearVelocity ?? [0, 0, 0])),
    angularVelocity: Float64Array.from(world.bodies.flatMap((b) => b.angularVelocity ?? [0, 0, 0])),
  };
}

test('the registry holds pendulum and hanging-chain once each, with defaults inside their own ranges', () => {
  for (const name of ['pendulum', 'hanging-chain']) {
    assert.equal(scenes.filter((s) => s.name === name).length, 1, name);
    const scene = findRigidScene(name)!;
    for (const [k, spec] of Object.entries(scene.params)) {
      if (spec.min !== undefined) assert.ok(spec.default >= spec.min, `${name}.${k}`);
      if (spec.max !== undefined) assert.ok(spec.default <= spec.max, `${name}.${k}`);
      if (spec.integer) assert.ok(Number.isInteger(spec.default), `${name}.${k}`);
    }
  }
});

test('pendulum: the bead hangs at distance `length` from the pin, `angle` off the vertical, at rest, constraint satisfied', () => {
  const scene = findRigidScene('pendulum')!;
  const cases: Record<string, number>[] = [{}, { length: 0.25, radius: 0.15, angle: 0.1 }, { angle: -1.2, length: 2 }];
  for (const given of cases) {
    const p = resolveParams(scene, given);
    const world = scene.build(p);
    validateWorld(world);
    assert.deepEqual(world.gravity, [0, -9.81, 0]);
    assert.equal(world.bodies.length, 1);
    assert.equal(world.constraints.length, 1);
    const [bead] = world.bodies;
    const [pin] = world.constraints;
    assert.equal((bead.shape as { radius: number }).radius, p.radius);
    assert.equal(bead.density, p.density);
    assert.equal(pin.bodyB, null);
    const d = [0, 1, 2].map((k) => bead.position[k] - pin.anchorB[k]);
    // positions are sums of a few products: a few ε of the length
    const tol = 8 * EPS * p.length;
    assert.ok(Math.abs(Math.hypot(d[0], d[1], d[2]) - p.length) <= tol, 'pin to centre = length');
    assert.ok(Math.abs(Math.atan2(d[0], -d[1]) - p.angle) <= 8 * EPS * Math.max(1, Math.abs(p.angle)), 'angle from the vertical');
    assert.equal(d[2], 0, 'in the x–y plane');
    assert.ok(Math.abs(Math.hypot(...pin.anchorA) - p.length) <= tol, 'the anchor is `length` off-centre');
    const m = new MetricsContext(world).measure(initialSnapshot(world));
    assert.ok(m.maxViolation <= tol, `initial violation ${m.maxViolation} m`);
    assert.equal(m.kinetic, 0);
  }
});

test('hanging-chain: touching beads straight below the pin, at rest, every constraint satisfied', () => {
  const scene = findRigidScene('hanging-chain')!;
  const cases: Record<string, number>[] = [{}, { beads: 1 }, { beads: 5, radius: 0.1, density: 300 }];
  for (const given of cases) {
    const p = resolveParams(scene, given);
    const world = scene.build(p);
    validateWorld(world);
    assert.equal(world.bodies.length, p.beads);
    assert.equal(world.constraints.length, p.beads); // one pin + (beads − 1) joints
    assert.equal(world.constraints.filter((c) => c.bodyB === null).length, 1);
    const pin = world.constraints.find((c) => c.bodyB === null)!;
    world.bodies.forEach((b, k) => {
      assert.equal(b.position[0], pin.anchorB[0]);
      assert.equal(b.position[2], pin.anchorB[2]);
      // centre k sits (2k + 1) r below the pin: a few ε of the chain's length
      assert.ok(Math.abs(pin.anchorB[1] - b.position[1] - (2 * k + 1) * p.radius) <= 8 * EPS * 2 * p.radius * p.beads, `bead ${k}`);
    });
    const m = new MetricsContext(world).measure(initialSnapshot(world));
    // each joint is a difference of two positions a few ε of the chain's height apart
    assert.ok(m.maxViolation <= 8 * EPS * 2 * p.radius * p.beads, `initial violation ${m.maxViolation} m`);
    assert.equal(m.kinetic, 0);
  }
});

test('every built-in scene validates at its defaults, and its defaults lie in its own ranges', () => {
  for (const scene of scenes) {
    for (const [k, spec] of Object.entries(scene.params)) {
      if (spec.min !== undefined) assert.ok(spec.default >= spec.min, `${scene.name}.${k}`);
      if (spec.max !== undefined) assert.ok(spec.default <= spec.max, `${scene.name}.${k}`);
      if (spec.integer) assert.ok(Number.isInteger(spec.default), `${scene.name}.${k}`);
    }
    const desc = buildScene(scene);
    if (isParticleSystem(desc)) validateParticleSystem(desc);
    else validateWorld(desc);
  }
});

/** max violation of a world's initial state */
const initialViolation = (world: WorldDesc) => new MetricsContext(world).measure(initialSnapshot(world)).maxViolation;

test('long-chain, high-mass-ratio, joint-grid: built at rest with every joint satisfied', () => {
  const long = findRigidScene('long-chain')!.build(resolveParams(findRigidScene('long-chain')!, { beads: 50, angle: 0.7 }));
  assert.equal(long.bodies.length, 50);
  assert.equal(long.constraints.length, 50);
  assert.ok(initialViolation(long) <= 1e-14, 'long-chain');

  const hmr = findRigidScene('high-mass-ratio')!;
  const p = resolveParams(hmr, { ratio: 250 });
  const w = hmr.build(p);
  validateWorld(w);
  const bead = massProperties(w.bodies[0]).mass;
  const ball = massProperties(w.bodies[w.bodies.length - 1]).mass;
  assert.ok(Math.abs(ball / bead - 250) <= 1e-12 * 250, `mass ratio ${ball / bead}`);
  assert.ok(initialViolation(w) <= 1e-14, 'high-mass-ratio');
  assert.ok(w.bodies[w.bodies.length - 1].position[1] - p.ballRadius >= -1e-12, 'the ball clears the ground');

  const grid = findRigidScene('joint-grid')!.build({ columns: 7, rows: 4, radius: 0.05, density: 1000 });
  assert.equal(grid.bodies.length, 28);
  // right neighbours 6·4, back neighbours 7·3, four corner pins
  assert.equal(grid.constraints.length, 6 * 4 + 7 * 3 + 4);
  assert.equal(grid.constraints.filter((c) => c.bodyB === null).length, 4);
  assert.ok(initialViolation(grid) <= 1e-14, 'joint-grid');
});

test('stretched-chain: the chain is its rest shape scaled by `stretch` about the pin', () => {
  const scene = findRigidScene('stretched-chain')!;
  const p = resolveParams(scene, { beads: 6, stretch: 2 });
  const world = scene.build(p);
  const m = new MetricsContext(world).measure(initialSnapshot(world));
  const gap = 2 * p.radius * (p.stretch - 1);
  assert.ok(Math.abs(m.maxViolation - gap) <= 1e-14, `max violation ${m.maxViolation} vs ${gap}`);
  // bead k's centre at (2k + 1) r s below the pin: the pin joint opens by r(s − 1) = gap/2,
  // the 5 others by gap, so rms = gap · √((1/4 + 5)/6)
  assert.ok(Math.abs(m.rmsViolation - gap * Math.sqrt(5.25 / 6)) <= 1e-14, `rms ${m.rmsViolation}`);
});

test('far-from-origin: the necklace moved by exactly the offset along x', () => {
  const far = findRigidScene('far-from-origin')!;
  const p = resolveParams(far, { chains: 3, beads: 5 });
  const moved = far.build(p);
  const { offset, ...rest } = p;
  const home = findRigidScene('necklace')!.build(rest);
  assert.equal(offset, 10_000);
  assert.equal(moved.bodies.length, home.bodies.length);
  moved.bodies.forEach((b, i) => assert.deepEqual(b.position, [home.bodies[i].position[0] + offset, home.bodies[i].position[1], home.bodies[i].position[2]]));
  moved.constraints.forEach((c, i) => {
    if (c.bodyB === null) assert.equal(c.anchorB[0], home.constraints[i].anchorB[0] + offset);
    else assert.deepEqual(c.anchorB, home.constraints[i].anchorB);
  });
});
