/**
 * xpbd-cpu's bounded push-out (src/solvers/xpbd/contacts.ts, header "Bounded push-out"): an overlap
 * the bodies already have at a substep's start is taken out at most v_push h a substep (v_push =
 * PUSH_OUT_SPEED, 3 m/s, Box2D v3's contact push-out bound), so the projection leaves at most v_push
 * along a contact's normal, where it used to leave d̄/h (two spheres 0.2 m deep flew apart at 22 m/s;
 * the overlap-recovery stack gained 8 MJ). Registry defaults (1/60 s, 10 substeps, 1 iteration), sleep off.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';
import { PUSH_OUT_SPEED } from '../src/solvers/xpbd/contacts.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { massProperties, type WorldDesc } from '../src/model/world.js';
import { snapshotOf } from '../src/model/compiled.js';
import { MetricsContext } from '../src/metrics/metrics.js';

const V_PUSH = PUSH_OUT_SPEED;

function options(): SolverOptions {
  return resolveOptions(findSolver('xpbd-cpu')!, { sleep: 0 } as Partial<SolverOptions>);
}

/** Largest |v| and |ω| ℓ (ℓ: the body's largest half extent or radius: its fastest surface point) of the dynamic bodies. */
function fastest(s: XpbdCpuSolver, reach: number[]): number {
  const { linearVelocity: v, angularVelocity: w, inverseMass, bodyCount } = s.w;
  let most = 0;
  for (let i = 0; i < bodyCount; i++) {
    if (inverseMass[i] === 0) continue;
    most = Math.max(most, Math.hypot(v[3 * i], v[3 * i + 1], v[3 * i + 2]) + reach[i] * Math.hypot(w[3 * i], w[3 * i + 1], w[3 * i + 2]));
  }
  return most;
}

/*
 * Two equal spheres (r = 0.5 m) created 0.2 m deep in each other, no gravity. Each substep the
 * projection takes out v_push h of the overlap (their approach is 0), and the velocity pass leaves them
 * no relative normal velocity while they touch. So:
 *   - the gap (centre distance − 2r) grows by at most v_push dt a frame: v_push dt = 0.05 m (+1e-12 for
 *     the rounding of positions of size 1 m over 10 substeps);
 *   - no point of either sphere moves faster than v_push (the projection leaves ≤ v_push along n, the
 *     velocity pass only evens it out);
 *   - the overlap is gone after 0.2 m / (v_push dt) = 4 frames; by frame 5 the gap is ≥ 0 (to 1e-9 m).
 */
test(`xpbd-cpu: two spheres created 0.2 m deep in each other are pushed apart at most at v_push = ${V_PUSH} m/s`, () => {
  const r = 0.5, depth = 0.2;
  const world: WorldDesc = {
    gravity: [0, 0, 0],
    collisions: true,
    bodies: [
      { shape: { type: 'sphere', radius: r }, density: 1000, position: [0, 0, 0] },
      { shape: { type: 'sphere', radius: r }, density: 1000, position: [2 * r - depth, 0, 0] },
    ],
    constraints: [],
  };
  const s = new XpbdCpuSolver(world, options());
  const dt = s.options.dt;
  const gap = () => Math.hypot(s.w.position[3] - s.w.position[0], s.w.position[4] - s.w.position[1], s.w.position[5] - s.w.position[2]) - 2 * r;
  let before = gap();
  assert.ok(Math.abs(before + depth) < 1e-12);
  for (let f = 1; f <= 30; f++) {
    s.stepFrame();
    const now = gap();
    assert.ok(now - before <= V_PUSH * dt + 1e-12, `frame ${f}: the gap grew ${(now - before).toFixed(6)} m in a frame (bound ${V_PUSH * dt} m)`);
    const speed = fastest(s, [r, r]);
    assert.ok(speed <= V_PUSH, `frame ${f}: a sphere's point moves at ${speed.toFixed(3)} m/s (bound ${V_PUSH} m/s)`);
    if (f >= Math.ceil(depth / (V_PUSH * dt)) + 1) assert.ok(now >= -1e-9, `frame ${f}: still ${(-now).toExponential(3)} m deep`);
    before = now;
  }
});

/*
 * Two unit cubes created 0.2 m deep along x (offset 0.1 m in y, 0.05 m in z: corners and faces meet
 * off-centre, so the push-out also has a lever arm), no gravity. The same bounds on every point of either
 * box (|v| + |ω| ℓ, ℓ = the half diagonal √3/2 m ≥ any point's distance from its centre); and they
 * come apart: from frame 6 (the 4 frames of a straight push at v_push, 1 frame for the last substep's
 * full projection and 1 for the little turn the off-centre push gives them) the penetration that
 * collision detection finds afresh on the state (metrics) is below 1 µm.
 */
test(`xpbd-cpu: two boxes created 0.2 m deep in each other are pushed apart at most at v_push = ${V_PUSH} m/s`, () => {
  const world: WorldDesc = {
    gravity: [0, 0, 0],
    collisions: true,
    bodies: [
      { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0, 0] },
      { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0.8, 0.1, 0.05] },
    ],
    constraints: [],
  };
  const s = new XpbdCpuSolver(world, options());
  const metrics = new MetricsContext(world);
  const reach = Math.sqrt(3) / 2;
  for (let f = 1; f <= 30; f++) {
    s.stepFrame();
    const speed = fastest(s, [reach, reach]);
    assert.ok(speed <= V_PUSH, `frame ${f}: a box's point moves at ${speed.toFixed(3)} m/s (bound ${V_PUSH} m/s)`);
    const deep = metrics.measure(snapshotOf(s.w, f, s.options.dt)).maxPenetration ?? NaN;
    if (f >= 6) assert.ok(deep <= 1e-6, `frame ${f}: still ${deep.toExponential(3)} m deep`);
  }
});

/*
 * The overlap-recovery stack: 4 unit cubes (1000 kg) on the ground, each 0.25 m deep in the one below.
 * Along the chain ground → 1 → 2 → 3 → 4 each contact's projection leaves at most v_push of separating
 * speed (the velocity pass then evens the pairs out), so no box leaves faster than 4 v_push = 12 m/s;
 * in flight gravity brings it back no faster than it left (energy), so 4 v_push bounds every frame
 * (measured: 4.0 m/s, the top box in frame 1; softstep-cpu 3.3, Rapier 3.5; the old projection
 * launched the top box at 74 m/s). At 3 s the stack stands recovered: box i at 0.5 + i m within 5 mm (the projection's
 * settling is micrometres), and the energy then is E₀ plus the potential energy of the lift,
 * m g (0.25 + 0.5 + 0.75) m = 14.7 kJ, within 1 % of E₀ (what is left moving, ≤ 640 J).
 */
test('xpbd-cpu: the overlap-recovery stack stands up at a bounded speed, gaining only the potential energy of the lift', () => {
  const world = findRigidScene('overlap-recovery')!.build({} as never);
  const s = new XpbdCpuSolver(world, options());
  const g = 9.81;
  const masses = world.bodies.map((b) => (b.fixed ? 0 : massProperties(b).mass));
  const energy = (): number => {
    const { position: x, linearVelocity: v, angularVelocity: w } = s.w;
    let e = 0;
    for (let i = 1; i < world.bodies.length; i++) {
      const m = masses[i], I = massProperties(world.bodies[i]).inertiaLocal[0]; // cubes: I = I₀ I₃
      e += m * g * x[3 * i + 1] + 0.5 * m * (v[3 * i] ** 2 + v[3 * i + 1] ** 2 + v[3 * i + 2] ** 2) + 0.5 * I * (w[3 * i] ** 2 + w[3 * i + 1] ** 2 + w[3 * i + 2] ** 2);
    }
    return e;
  };
  const e0 = energy();
  const reach = world.bodies.map(() => Math.sqrt(3) / 2);
  let most = 0;
  for (let f = 1; f <= 180; f++) {
    s.stepFrame();
    most = Math.max(most, fastest(s, reach));
  }
  assert.ok(most <= 4 * V_PUSH, `a box reached ${most.toFixed(3)} m/s (bound ${4 * V_PUSH} m/s)`);
  for (let i = 1; i <= 4; i++) assert.ok(Math.abs(s.w.position[3 * i + 1] - (i - 0.5)) < 5e-3, `box ${i} at y = ${s.w.position[3 * i + 1].toFixed(4)} m, expected ${i - 0.5} m`);
  const lift = 1000 * g * (0.25 + 0.5 + 0.75);
  assert.ok(Math.abs(energy() - (e0 + lift)) < 0.01 * e0, `E − E₀ = ${(energy() - e0).toFixed(1)} J, the lift is ${lift.toFixed(1)} J`);
});
