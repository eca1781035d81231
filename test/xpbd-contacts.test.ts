/**
 * Contacts under xpbd-cpu (Müller et al. 2020 via the Starframe text; src/solvers/xpbd/contacts.ts):
 * the physical facts of test/contacts.test.ts, at xpbd-cpu's registry defaults (1 iteration × 10
 * substeps at 1/60 s) unless a test says otherwise. Each tolerance is stated beside its test; positions
 * and velocities come from the snapshots, penetration from the metrics (collision detection run afresh
 * on the state, src/metrics/metrics.ts), never from the solver's own contact arrays.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type Solver, type SolverOptions, type Snapshot } from '../src/solvers/solver.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { RAMP_FRICTIONS } from '../src/scenes/contact-scenes.js';
import type { WorldDesc } from '../src/model/world.js';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';

const g = 9.81;
const ID = 'xpbd-cpu';

async function make(world: WorldDesc, asked: Partial<SolverOptions> = {}): Promise<Solver> {
  const info = findSolver(ID)!;
  const why = info.unsupported?.(world) ?? null;
  assert.equal(why, null, `${ID} should take this scene`);
  return info.create(world, resolveOptions(info, asked));
}

/** Steps `frames` frames, calling `each` with the frame number (1…) and the snapshot. */
async function run(solver: Solver, frames: number, each: (frame: number, s: Snapshot) => void): Promise<void> {
  for (let f = 1; f <= frames; f++) {
    await solver.step(1);
    each(f, await solver.snapshot());
  }
  solver.destroy();
}

const ground = (friction?: number) => ({ shape: { type: 'plane' as const }, fixed: true, position: [0, 0, 0] as [number, number, number], ...(friction !== undefined ? { friction } : {}) });

test('xpbd-cpu runs at 1 iteration × 10 substeps by default, and takes planes and contacts', () => {
  const info = findSolver(ID)!;
  const o = resolveOptions(info, {});
  assert.equal(o.iterations, 1);
  assert.equal(o.substeps, 10);
  assert.equal(info.unsupported?.(findRigidScene('friction-ramp')!.build({})) ?? null, null);
});

/*
 * friction-ramp at θ = 0.25 rad (tan θ = 0.255), pair μ 0.75, 0.5, 0.35, 0.1, 0 (μ_s = μ_d = μ: the
 * scene gives one friction per body). Coulomb: a box with tan θ > μ slides with a = g (sin θ − μ cos θ),
 * measured from its velocity along the slope at 0.5 s and 1.5 s, within 3 %; one with tan θ < μ stays:
 * it drifts less than 1 mm over the 2 s after a 0.25 s settle.
 */
test('xpbd-cpu: a box on a 0.25 rad slope slides with a = g(sin θ − μ cos θ) (3 %) when tan θ > μ, and stays (< 1 mm in 2 s) when tan θ < μ', async () => {
  const th = 0.25;
  const world = findRigidScene('friction-ramp')!.build({ angle: th });
  const n = world.bodies.length, first = n - RAMP_FRICTIONS.length;
  const up = [Math.cos(th), Math.sin(th), 0]; // up the slope (the ramp rises towards +x)
  const along = (a: Float64Array, i: number) => a[3 * i] * up[0] + a[3 * i + 1] * up[1] + a[3 * i + 2] * up[2];
  const v05: number[] = [], v15: number[] = [], x025: number[] = [], x225: number[] = [];
  await run(await make(world), 135, (f, s) => {
    for (let k = 0; k < RAMP_FRICTIONS.length; k++) {
      if (f === 15) x025[k] = along(s.position, first + k);
      if (f === 30) v05[k] = along(s.linearVelocity, first + k);
      if (f === 90) v15[k] = along(s.linearVelocity, first + k);
      if (f === 135) x225[k] = along(s.position, first + k);
    }
  });
  RAMP_FRICTIONS.forEach((mu, k) => {
    if (Math.tan(th) > mu) {
      const a = -(v15[k] - v05[k]) / 1.0;
      const expected = g * (Math.sin(th) - mu * Math.cos(th));
      assert.ok(Math.abs(a / expected - 1) < 0.03, `μ ${mu}: a = ${a.toFixed(4)} m/s², expected ${expected.toFixed(4)}`);
    } else {
      const drift = Math.abs(x225[k] - x025[k]);
      assert.ok(drift < 1e-3, `μ ${mu} > tan θ: drifted ${drift.toExponential(2)} m in 2 s`);
    }
  });
});

/*
 * restitution: spheres (r = 0.5 m) dropped from H = 2 m (lowest point above the ground). A bounce with
 * e sends the sphere back up at e v, so the apex after the first bounce is e² H (0.5 m for e = 0.5),
 * within 5 %. At 1/60 s with 10 substeps the contact is met within a substep, h = 1/600 s (the bounce
 * leaves from at most v h = 1 cm off the ground, 2 % of e² H). ṽ_n (6.3 m/s) is above the 1 m/s
 * threshold. With e = 0 the sphere comes to rest: below 1 mm/s after 3 s, its lowest point within
 * 0.1 mm of the ground (XPBD has no slop: each substep projects the overlap away; the gravity drop of a
 * substep is g h² = 27 µm).
 */
test('xpbd-cpu: a sphere with e = 0.5 rebounds to e² of its drop height (5 %); with e = 0 it comes to rest', async () => {
  const world = findRigidScene('restitution')!.build({ height: 2, radius: 0.5 });
  const n = world.bodies.length, first = n - 5; // e = 0, 0.25, 0.5, 0.75, 1
  const H = 2, r = 0.5;
  let bounced = false, apex = NaN, lastVy = 0;
  let rest: Snapshot | null = null;
  await run(await make(world), 180, (_, s) => {
    const i = first + 2;
    const vy = s.linearVelocity[3 * i + 1];
    if (vy > 0.5) bounced = true;
    if (bounced && Number.isNaN(apex) && lastVy > 0 && vy <= 0) apex = s.position[3 * i + 1] - r;
    lastVy = vy;
    rest = s;
  });
  assert.ok(Math.abs(apex / (0.25 * H) - 1) < 0.05, `apex ${apex.toFixed(4)} m, expected e²H = ${(0.25 * H).toFixed(4)} m`);
  const s = rest!;
  const speed = Math.hypot(s.linearVelocity[3 * first], s.linearVelocity[3 * first + 1], s.linearVelocity[3 * first + 2]);
  assert.ok(speed < 1e-3, `e = 0: still moving at ${speed.toExponential(2)} m/s after 3 s`);
  const gap = s.position[3 * first + 1] - r;
  assert.ok(Math.abs(gap) < 1e-4, `e = 0: rests ${gap.toExponential(2)} m from the ground`);
});

/*
 * A box (half extent 0.5 m, pair μ = 0.5) slid along the ground at v = 3 m/s stops after
 * d = v² / (2 μ g) = 0.917 m (the friction force μ m g is constant while it slides), within 5 %; and the
 * same in every direction: 12 directions, 30° apart (offset 0.1 rad from the axes), agree within 0.5 %
 * (friction is a disc: the dynamic friction impulse is along −v_t, capped by μ λ_n / h per point).
 */
test('xpbd-cpu: a box slid in 12 directions stops after v²/(2μg) (5 %), the same in every direction (0.5 %)', async () => {
  const mu = 0.5, v0 = 3, d = (v0 * v0) / (2 * mu * g);
  const ratios: number[] = [];
  for (let k = 0; k < 12; k++) {
    const a = (2 * Math.PI * k) / 12 + 0.1;
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      bodies: [ground(mu), { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, friction: mu, position: [0, 0.5, 0], linearVelocity: [v0 * Math.cos(a), 0, v0 * Math.sin(a)] }],
      constraints: [],
    };
    let last: Snapshot | null = null;
    await run(await make(world), 120, (_, s) => (last = s)); // it stops after v/(μg) = 0.61 s
    const s = last!;
    assert.ok(Math.hypot(s.linearVelocity[3], s.linearVelocity[5]) < 1e-3, `${k}: still sliding`);
    ratios.push(Math.hypot(s.position[3], s.position[5]) / d);
  }
  for (const r of ratios) assert.ok(Math.abs(r - 1) < 0.05, `stopped after ${r.toFixed(4)} d`);
  const spread = Math.max(...ratios) / Math.min(...ratios) - 1;
  assert.ok(spread < 0.005, `directions differ by ${(100 * spread).toFixed(3)} %: ${ratios.map((r) => r.toFixed(4)).join(' ')}`);
});

/*
 * A solid sphere launched sliding at v₀ = 5 m/s with no spin (μ = 0.3): friction slows it and spins it
 * up until v = ω r; angular momentum about the contact point is kept, m v₀ r = (7/5) m v r, so it ends
 * rolling at v = 5/7 v₀, within 2 %, with ω r = v (2 %).
 */
test('xpbd-cpu: a sphere launched sliding without spin ends rolling at 5/7 of its speed (2 %)', async () => {
  const world = findRigidScene('rolling')!.build({ speed: 5, friction: 0.3, radius: 0.5 });
  const i = world.bodies.length - 1;
  let last: Snapshot | null = null;
  await run(await make(world), 150, (_, s) => (last = s)); // sliding lasts 2 v₀/(7 μ g) = 0.49 s
  const s = last!;
  const v = s.linearVelocity[3 * i];
  assert.ok(Math.abs(v / (5 * (5 / 7)) - 1) < 0.02, `ends at ${(v / 5).toFixed(4)} v₀, expected ${(5 / 7).toFixed(4)}`);
  const spin = -s.angularVelocity[3 * i + 2] * 0.5;
  assert.ok(Math.abs(spin / v - 1) < 0.02, `ω r = ${spin.toFixed(4)} m/s against v = ${v.toFixed(4)} m/s: not rolling`);
});

/*
 * A box resting on the ground stays: over 10 s its deepest point stays within 5 mm of the surface (the
 * velocity solvers' slop; XPBD projects the overlap away every substep, measured: ~1e-16 m) and it
 * creeps less than 0.1 mm sideways.
 */
test('xpbd-cpu: a box at rest on the ground stays within 5 mm of the surface and does not creep over 10 s', async () => {
  const world: WorldDesc = { gravity: [0, -g, 0], bodies: [ground(), { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0.5, 0] }], constraints: [] };
  const metrics = new MetricsContext(world);
  let deepest = 0, last: Snapshot | null = null;
  await run(await make(world), 600, (_, s) => {
    deepest = Math.max(deepest, metrics.measure(s).maxPenetration ?? NaN);
    last = s;
  });
  assert.ok(deepest <= 5e-3, `penetration ${deepest.toExponential(3)} m`);
  const creep = Math.hypot(last!.position[3], last!.position[5]);
  assert.ok(creep < 1e-4, `crept ${creep.toExponential(2)} m`);
});

/*
 * vertical-stack of 10 unit boxes (alternately offset ±1 cm). Once settled (after 1 s) the top box
 * creeps less than 1 cm over the next 9 s, and no contact sinks deeper than 1 mm (one Gauss–Seidel pass
 * over the manifolds per substep leaves the lower contacts a little overlap under the load of the boxes
 * above; measured 0.26 mm).
 */
test('xpbd-cpu: a 10-box stack holds: the top box creeps < 1 cm from 1 s to 10 s, no contact deeper than 1 mm', async () => {
  const world = findRigidScene('vertical-stack')!.build({ boxes: 10 });
  const top = world.bodies.length - 1;
  const metrics = new MetricsContext(world);
  let at1: number[] = [], deepest = 0, last: Snapshot | null = null;
  await run(await make(world), 600, (f, s) => {
    if (f === 60) at1 = [s.position[3 * top], s.position[3 * top + 1], s.position[3 * top + 2]];
    if (f >= 60) deepest = Math.max(deepest, metrics.measure(s).maxPenetration ?? NaN);
    last = s;
  });
  const p = last!.position;
  const creep = Math.hypot(p[3 * top] - at1[0], p[3 * top + 1] - at1[1], p[3 * top + 2] - at1[2]);
  assert.ok(creep < 0.01, `the top box crept ${creep.toExponential(2)} m`);
  assert.ok(deepest < 1e-3, `a contact sank ${deepest.toExponential(3)} m`);
});

/*
 * With collisions off no contact code runs (no pipeline, no contact solver), so joint-only scenes step
 * as before; with them on, two overlapping spheres (5 cm, no gravity, not joined) are pushed apart to
 * touching within the frame (the projection removes the overlap; XPBD has no slop), while the same pair
 * joined by a point joint is not pushed (joined bodies never collide).
 */
test('xpbd-cpu: collisions off runs no contact code; unjoined overlapping spheres are pushed apart, joined ones are not', async () => {
  const pair = (joined: boolean, collisions?: boolean): WorldDesc => ({
    gravity: [0, 0, 0],
    ...(collisions !== undefined ? { collisions } : {}),
    bodies: [
      { shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0, 0, 0] },
      { shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0.95, 0, 0] },
    ],
    constraints: joined ? [{ type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.475, 0, 0], anchorB: [-0.475, 0, 0] }] : [],
  });
  assert.equal(new XpbdCpuSolver(pair(false, false)).contactSolver, null);
  const gap = async (w: WorldDesc) => {
    let last: Snapshot | null = null;
    await run(await make(w), 30, (_, s) => (last = s));
    return last!.position[3] - last!.position[0] - 1; // centre distance − 2r
  };
  assert.ok(Math.abs((await gap(pair(true))) + 0.05) < 1e-6, 'the joined pair was pushed apart');
  assert.ok((await gap(pair(false))) > -1e-6, 'the unjoined pair still overlaps');
  assert.ok(Math.abs((await gap(pair(false, false))) + 0.05) < 1e-12, 'collisions off, yet the pair moved');
});
