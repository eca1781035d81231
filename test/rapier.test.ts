/**
 * Physics of the Rapier baselines (src/solvers/rapier/rapier.ts): `rapier` (spherical impulse
 * joints) and `rapier-multibody` (spherical multibody joints, reduced coordinates). Each test
 * checks one physical fact with a tolerance derived beside it; figures are never copied from a
 * previous run.
 *
 * Rapier is f32: unit roundoff u = 2⁻²⁴ ≈ 6.0e-8, so a stored coordinate of size X carries
 * up to u·X of rounding, and every Rapier substep can add a few such roundings.
 * Rapier's "solver iterations" are soft-TGS substeps: the integrator runs at
 * h_s = dt / (substeps · iterations) (1/480 s at the defaults).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { RapierSolver, multibodyLoopReason } from '../src/solvers/rapier/rapier.js';
import { defaultSolverOptions, type Snapshot, type SolverOptions } from '../src/solvers/solver.js';
import { runSolver } from '../src/run/run.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import type { Vec3, WorldDesc } from '../src/model/world.js';
import { resolveParams } from '../src/scenes/scene.js';
import { pendulum } from '../src/scenes/pendulum.js';
import { hangingChain } from '../src/scenes/hanging-chain.js';
import { necklace } from '../src/scenes/necklace.js';

const U32 = 2 ** -24; // f32 unit roundoff
const KINDS = ['rapier', 'rapier-multibody'] as const;

const norm = (a: ArrayLike<number>, o = 0) => Math.hypot(a[o], a[o + 1], a[o + 2]);
const sphereMass = (density: number, r: number) => density * (4 / 3) * Math.PI * r ** 3;

async function create(id: string, world: WorldDesc, options: Partial<SolverOptions> = {}) {
  return findSolver(id)!.create(world, { ...defaultSolverOptions, ...options });
}

/** Largest | |q| − 1 | over the bodies of a snapshot. */
function quatNormDrift(s: Snapshot): number {
  let d = 0;
  for (let i = 0; i < s.bodyCount; i++) {
    const o = 4 * i;
    d = Math.max(d, Math.abs(Math.hypot(s.orientation[o], s.orientation[o + 1], s.orientation[o + 2], s.orientation[o + 3]) - 1));
  }
  return d;
}

// --- a) the period of a physical pendulum ------------------------------------------------

/** Swings the pendulum scene `frames` frames; downward zero crossings and positive peaks of x − x_pin. */
async function swingPendulum(id: string, frames: number) {
  const p = resolveParams(pendulum, { angle: 0.1 });
  const world = pendulum.build(p);
  const pinX = world.constraints[0].anchorB[0];
  const solver = await create(id, world);
  const result = await runSolver(solver, world, { frames, trace: [0] });
  solver.destroy();
  assert.equal(result.diverged, null);
  const xs = result.series.map((s) => ({ t: s.t, x: s.trace![0][0] - pinX }));
  const crossings: number[] = [];
  const peaks: { t: number; a: number }[] = [];
  for (let k = 1; k < xs.length; k++) {
    const a = xs[k - 1], b = xs[k];
    if (a.x > 0 && b.x <= 0) crossings.push(a.t + (a.x / (a.x - b.x)) * (b.t - a.t));
    if (k + 1 < xs.length && b.x > 0 && b.x >= a.x && b.x > xs[k + 1].x) peaks.push({ t: b.t, a: b.x });
  }
  const m = sphereMass(p.density, p.radius);
  const g = Math.hypot(...world.gravity);
  const L = p.length;
  const Ipivot = 0.4 * m * p.radius ** 2 + m * L * L; // I_cm + m d², d = L
  const physical = 2 * Math.PI * Math.sqrt(Ipivot / (m * g * L));
  assert.ok(crossings.length >= 4, `${id}: only ${crossings.length} downward zero crossings in ${frames} frames`);
  const measured = (crossings[crossings.length - 1] - crossings[0]) / (crossings.length - 1);
  return { measured, physical, peaks, Ipivot, omega0: Math.sqrt((m * g * L) / Ipivot), periods: crossings.length - 1 };
}

// Error budget of the measured period: finite amplitude θ₀²/16 = 0.06 % at θ₀ = 0.1 rad; symplectic Euler's
// phase error O((ω h_s)²) with ω h_s ≈ 4.4/480 ≈ 0.01 (≪ 0.1 %); interpolating a zero crossing errs by O(h³).
// rapier-multibody adds Rapier's built-in joint damping (test c): T_d = T / √(1 − (γ/ω₀)²), +0.37 % here.
// A 1 % band is about twice the largest total.
const PERIOD_TOLERANCE = 0.01;

for (const id of KINDS) {
  test(`${id}: the pendulum's small-angle period is 2π√(I_pivot/(m g d)) within 1 %`, async (t) => {
    const { measured, physical, periods } = await swingPendulum(id, 600);
    const rel = Math.abs(measured / physical - 1);
    t.diagnostic(`T measured ${measured.toFixed(5)} s over ${periods} periods, physical ${physical.toFixed(5)} s (${(100 * rel).toFixed(3)} %)`);
    assert.ok(rel <= PERIOD_TOLERANCE, `measured T = ${measured} s, physical pendulum ${physical} s (${(100 * rel).toFixed(3)} %)`);
  });
}

// --- b) rapier keeps the swing; c) rapier-multibody damps it at Rapier's built-in rate ---------

test('rapier: no hidden damping — the pendulum keeps its amplitude for 10 s (within 1 %)', async (t) => {
  const { peaks } = await swingPendulum('rapier', 600);
  assert.ok(peaks.length >= 5);
  const first = peaks[0].a, last = peaks[peaks.length - 1].a;
  // Symplectic Euler keeps a shadow energy within O(ω h_s) ≈ 1 % of E (so the amplitude within ≈ ½ % of
  // its value) with no secular loss; sampling a peak at 60 Hz misses it by ≤ 1 − cos(ω dt / 2) ≈ 7e-4.
  // Any damping ≥ 0.002 /s (sleeping, linear/angular damping, a joint damper) would lose > 2 % in 10 s.
  t.diagnostic(`first peak ${first.toExponential(4)} m at ${peaks[0].t.toFixed(2)} s, last ${last.toExponential(4)} m at ${peaks[peaks.length - 1].t.toFixed(2)} s`);
  assert.ok(Math.abs(last / first - 1) <= 0.01, `amplitude ${first} m → ${last} m`);
});

test("rapier-multibody: the swing decays as e^(−γt), γ = c/(2 I_pivot) with Rapier's joint damping c = 0.1 N·m·s", async (t) => {
  // Rapier gives every free angular dof of a multibody joint a default damping of 0.1 (N·m·s/rad: a torque
  // −c·ω on the joint's relative angular velocity); the 0.21 JS API cannot change it. For the pendulum,
  // I_pivot θ̈ = −m g d θ − c θ̇, so peaks fall as e^(−γ t) with γ = c/(2 I_pivot) ≈ 0.38 /s.
  const { peaks, Ipivot } = await swingPendulum('rapier-multibody', 600);
  assert.ok(peaks.length >= 5);
  const a = peaks[0], b = peaks[peaks.length - 1];
  const gamma = Math.log(a.a / b.a) / (b.t - a.t);
  const expected = 0.1 / (2 * Ipivot);
  // Budget: peak sampling at 60 Hz (≤ 7e-4 relative in each amplitude, ≤ 2e-4 /s in γ over 9 s), the implicit
  // damper's O(c h_s / I) ≈ 2e-3 per-step deviation from e^(−c h_s/I) (relative to γ, the same 2e-3): 5 % is ≫ both,
  // yet would fail at c = 0.095 or at no damping at all.
  t.diagnostic(`γ measured ${gamma.toFixed(4)} /s from ${peaks.length} peaks, c/(2 I_pivot) = ${expected.toFixed(4)} /s`);
  assert.ok(Math.abs(gamma / expected - 1) <= 0.05, `γ = ${gamma} /s, expected ${expected} /s`);
});

test('no sleeping: a pendulum swinging at 1e-4 rad (bead speed ≈ 0.2 mm/s) keeps swinging through 10 s', async (t) => {
  // Rapier puts a body to sleep after it has moved slower than its activation threshold for a while (about
  // 2 s); a sleeping body stops, and a comparison would then measure a frozen state. At 1e-4 rad the bead
  // never exceeds L θ ω ≈ 2e-4 m/s, far below any such threshold, so only setCanSleep(false) keeps it going.
  const world = pendulum.build(resolveParams(pendulum, { angle: 1e-4 }));
  const pinX = world.constraints[0].anchorB[0];
  for (const id of KINDS) {
    const solver = await create(id, world);
    const result = await runSolver(solver, world, { frames: 600, trace: [0] });
    solver.destroy();
    const xs = result.series.map((p) => p.trace![0][0] - pinX);
    // sign changes of x − x_pin in the last 3 s: ≈ 2 per period of 1.42 s, so ≥ 3 unless the bead stopped
    let changes = 0;
    for (let k = xs.length - 180; k < xs.length; k++) if (Math.sign(xs[k]) !== Math.sign(xs[k - 1])) changes++;
    const early = Math.max(...xs.slice(0, 90).map(Math.abs)), late = Math.max(...xs.slice(-90).map(Math.abs));
    t.diagnostic(`${id}: ${changes} sign changes in the last 3 s; amplitude ${early.toExponential(3)} m → ${late.toExponential(3)} m`);
    assert.ok(changes >= 3, `${id}: ${changes} sign changes of x − x_pin in the last 3 s`);
    // rapier: not damped either (as at 0.1 rad, test b); multibody decays at γ ≈ 0.38 /s: e^(−0.38 · 9) ≈ 3 %
    if (id === 'rapier') assert.ok(Math.abs(late / early - 1) <= 0.01, `${id}: amplitude ${early} m → ${late} m`);
    else assert.ok(late >= 0.01 * early, `${id}: amplitude ${early} m → ${late} m`);
  }
});

// --- d) a free body follows the ballistic parabola ---------------------------------------------

for (const id of KINDS)
  for (const opts of [{ iterations: 8, substeps: 1 }, { iterations: 2, substeps: 3 }]) {
    test(`${id}: a free body falls on the symplectic-Euler parabola of h_s = dt/(substeps·iterations) (${opts.iterations} it, ${opts.substeps} sub)`, async (t) => {
      const x0: Vec3 = [0.3, 2, -0.7], v0: Vec3 = [1.5, 4, -0.5], w0: Vec3 = [3, -5, 7], g: Vec3 = [0.5, -9.81, 0.25];
      const world: WorldDesc = {
        gravity: g,
        bodies: [{ shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: x0, orientation: [0.1, 0.2, 0.3, 0.9], linearVelocity: v0, angularVelocity: w0 }],
        constraints: [],
      };
      const solver = await create(id, world, opts);
      const frames = 60;
      await solver.step(frames);
      const s = await solver.snapshot();
      solver.destroy();
      const T = frames * defaultSolverOptions.dt;
      const hs = defaultSolverOptions.dt / (opts.substeps * opts.iterations);
      const N = frames * opts.substeps * opts.iterations; // substeps taken
      // symplectic Euler (v += g h_s, then x += h_s v) over N substeps: x = x0 + v0 T + ½ g T (T + h_s), v = v0 + g T exactly
      let dx = 0, dv = 0, dw = 0, xMax = 0, vMax = 0;
      const exactGap = 0.5 * Math.hypot(...g) * T * hs; // |discrete − exact parabola| = ½ |g| T h_s
      for (let d = 0; d < 3; d++) {
        const x = x0[d] + v0[d] * T + 0.5 * g[d] * T * (T + hs);
        const v = v0[d] + g[d] * T;
        dx = Math.max(dx, Math.abs(s.position[d] - x));
        dv = Math.max(dv, Math.abs(s.linearVelocity[d] - v));
        dw = Math.max(dw, Math.abs(s.angularVelocity[d] - w0[d]));
        xMax = Math.max(xMax, Math.abs(x0[d]), Math.abs(x));
        vMax = Math.max(vMax, Math.abs(v0[d]), Math.abs(v));
      }
      // f32 rounding: each substep rounds v (≤ u|v|) and x (≤ u|x|); velocity errors integrate into x over ≤ T:
      // |Δx| ≤ N u (X + ½ V T), |Δv| ≤ N u V, and ω (nothing acts on an isotropic sphere) passes through Rapier's
      // inertia-scaled solver velocity and back each substep (a few roundings): |Δω| ≤ 8 N u |ω|. Factor 4 on x, v.
      const tolX = 4 * N * U32 * (xMax + 0.5 * vMax * T);
      const tolV = 4 * N * U32 * vMax;
      const tolW = 8 * N * U32 * norm(w0);
      t.diagnostic(`|Δx| ${dx.toExponential(2)} m (tol ${tolX.toExponential(2)}; exact parabola lies ${exactGap.toExponential(2)} m away), |Δv| ${dv.toExponential(2)} m/s, |Δω| ${dw.toExponential(2)} rad/s`);
      assert.ok(tolX < exactGap / 4, 'the tolerance must tell h_s from the exact parabola');
      assert.ok(dx <= tolX, `position off the discrete parabola by ${dx} m (tolerance ${tolX} m)`);
      assert.ok(dv <= tolV, `velocity off v0 + g t by ${dv} m/s (tolerance ${tolV})`);
      assert.ok(dw <= tolW, `angular velocity changed by ${dw} rad/s (tolerance ${tolW})`);
      // and so within ½ |g| T h_s + rounding of the exact parabola x0 + v0 t + ½ g t²
      const toExact = Math.max(...[0, 1, 2].map((d) => Math.abs(s.position[d] - (x0[d] + v0[d] * T + 0.5 * g[d] * T * T))));
      assert.ok(toExact <= exactGap + tolX, `${toExact} m from the exact parabola`);
    });
  }

// --- e) a hanging chain at rest stays held ----------------------------------------------------

test('rapier: a 5-bead hanging chain at rest stays held (|C| ≤ n² g h_s², not creeping, at rest)', async (t) => {
  const world = hangingChain.build(resolveParams(hangingChain, { beads: 5 }));
  const n = world.bodies.length;
  const solver = await create('rapier', world);
  const { dt, iterations, substeps } = solver.options;
  const hs = dt / (substeps * iterations);
  const metrics = new MetricsContext(world);
  await solver.step(60);
  const after1s = metrics.measure(await solver.snapshot());
  const result = await runSolver(solver, world, { frames: 540 });
  const snap = await solver.snapshot();
  solver.destroy();
  assert.equal(result.diverged, null);
  // Each substep one biased Gauss–Seidel sweep starts cold and leaves at most the gravity increment of the
  // chain below a joint unresolved, ≤ n g h_s; the position bias (erp ≈ 1 per substep) must make it up, so
  // at rest each joint stands ≤ n g h_s · h_s open, and the bottom one sums n of them: |C| ≤ n² g h_s²
  // (≈ 1.1 mm = r/47 at n = 5, h_s = 1/480 s; a chain that is not held falls metres in these 10 s).
  const g = Math.hypot(...world.gravity);
  const bound = n * n * g * hs * hs;
  const worst = result.worstMaxViolation;
  let maxSpeed = 0, maxDrop = 0;
  for (let i = 0; i < n; i++) {
    maxSpeed = Math.max(maxSpeed, norm(snap.linearVelocity, 3 * i));
    maxDrop = Math.max(maxDrop, world.bodies[i].position[1] - snap.position[3 * i + 1]);
  }
  t.diagnostic(`worst |C| over 1–10 s ${worst.toExponential(2)} m (bound ${bound.toExponential(2)} m), after 1 s ${after1s.maxViolation.toExponential(2)} m, final ${result.final!.maxViolation.toExponential(2)} m; fastest bead ${maxSpeed.toExponential(2)} m/s, lowest bead dropped ${maxDrop.toExponential(2)} m`);
  assert.ok(worst <= bound, `max violation ${worst} m above n² g h_s² = ${bound} m`);
  // not creeping: the final violation is no larger than after the first second, to f32 rounding of |x| ≤ 1 m
  assert.ok(result.final!.maxViolation <= after1s.maxViolation + 16 * U32, `violation grew from ${after1s.maxViolation} m to ${result.final!.maxViolation} m`);
  // held, not sinking: no bead lower than its start by more than the n joints' opening, and at rest:
  // a bead that crept by ≤ bound a frame would move ≤ bound/dt ≈ 0.07 m/s; settled means far below that
  assert.ok(maxDrop <= bound, `a bead dropped ${maxDrop} m`);
  assert.ok(maxSpeed <= bound / dt / 100, `fastest bead ${maxSpeed} m/s`);
});

test('rapier-multibody: a hanging chain at rest is exact — |C| at f32 rounding, no motion', async (t) => {
  const world = hangingChain.build(resolveParams(hangingChain, { beads: 5 }));
  const solver = await create('rapier-multibody', world);
  const result = await runSolver(solver, world, { frames: 120 });
  const snap = await solver.snapshot();
  solver.destroy();
  assert.equal(result.diverged, null);
  // every link pose is composed from the root's in f32: a few roundings of |x| ≤ X = 1 m per link
  const X = 2 * 0.05 * 5;
  const bound = 5 * 4 * U32 * X; // n links × 4 roundings × u X ≈ 1.2e-6 m
  let maxSpeed = 0;
  for (let i = 0; i < snap.bodyCount; i++) maxSpeed = Math.max(maxSpeed, norm(snap.linearVelocity, 3 * i));
  t.diagnostic(`worst |C| ${result.worstMaxViolation.toExponential(2)} m (bound ${bound.toExponential(2)} m), fastest bead ${maxSpeed.toExponential(2)} m/s`);
  assert.ok(result.worstMaxViolation <= bound, `max violation ${result.worstMaxViolation} m`);
  // the lever arms are vertical, so gravity has no torque about any joint (r × m g = 0, exactly so in floating
  // point too): a residual speed could only be rounding of the g h_s added each substep, ≤ N u g h_s = u g T
  const T = 120 * defaultSolverOptions.dt;
  assert.ok(maxSpeed <= 4 * U32 * 9.81 * T, `fastest bead ${maxSpeed} m/s`);
});

// --- f) multibody joints do not drift -----------------------------------------------------------

test('rapier-multibody: a swinging chain keeps |C| at f32 rounding (drift-free), ≥ 100× below rapier', async (t) => {
  const world = necklace.build(resolveParams(necklace, { chains: 1, beads: 5 }));
  const n = world.bodies.length;
  const r = world.bodies[0].shape.radius;
  const metrics = new MetricsContext(world);
  const worstOf = async (id: string) => {
    const solver = await create(id, world);
    let worst = 0, qDrift = 0, X = 0;
    for (let f = 0; f < 300; f++) {
      await solver.step(1);
      const s = await solver.snapshot();
      const m = metrics.measure(s);
      assert.ok(m.finite, `${id}: state not finite at frame ${f + 1}`);
      worst = Math.max(worst, m.maxViolation);
      qDrift = Math.max(qDrift, quatNormDrift(s));
      for (let i = 0; i < n; i++) X = Math.max(X, norm(s.position, 3 * i));
    }
    solver.destroy();
    return { worst, qDrift, X };
  };
  const mb = await worstOf('rapier-multibody');
  const imp = await worstOf('rapier');
  // Exact joints leave only rounding: each link pose is composed from its parent's in f32 (≤ 8 roundings of
  // |x| ≤ X per link, n links deep), and Rapier does not renormalise the joint rotations, so |q| drifts from 1
  // by δ (measured, ≈ u per substep at worst) and a lever arm r is scaled wrongly by ≤ 2 δ r on both sides of
  // each of the n joints: |C| ≤ n (8 u X + 4 δ r).
  const bound = n * (8 * U32 * mb.X + 4 * mb.qDrift * r);
  t.diagnostic(`multibody worst |C| ${mb.worst.toExponential(2)} m (bound ${bound.toExponential(2)} m; max ||q| − 1| ${mb.qDrift.toExponential(2)}), impulse joints ${imp.worst.toExponential(2)} m`);
  assert.ok(mb.worst <= bound, `multibody max violation ${mb.worst} m above the rounding bound ${bound} m`);
  assert.ok(mb.worst * 100 <= imp.worst, `multibody ${mb.worst} m is not 100× below the impulse joints' ${imp.worst} m`);
});

// --- g) snapshot, loops, cost, lifetime ----------------------------------------------------------

test('snapshot: the desc bodies only (no anchor bodies), starting at the desc state to f32 rounding', async () => {
  const world = necklace.build(resolveParams(necklace, { chains: 3, beads: 4 }));
  // plus a floating pair (no ground: the multibody root gets a free joint) and a fixed body with a bead on it
  const base = world.bodies.length;
  world.bodies.push(
    { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [-3, 1, 0], linearVelocity: [0.5, 0, 0], angularVelocity: [0, 0, 2] },
    { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [-2.9, 1, 0] },
    { shape: { type: 'sphere', radius: 0.2 }, fixed: true, position: [-5, 3, 0], orientation: [0, 0, 0.6, 0.8] },
    { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [-5, 2.5, 0] },
  );
  world.constraints.push(
    { type: 'point', bodyA: base, bodyB: base + 1, anchorA: [0.05, 0, 0], anchorB: [-0.05, 0, 0] },
    // the bead hangs 0.5 m below the fixed body's centre; anchor in the fixed body's frame: R(q)ᵀ (0, −0.5, 0)
    { type: 'point', bodyA: base + 2, bodyB: base + 3, anchorA: [-0.48, -0.14, 0], anchorB: [0, 0, 0] },
  );
  for (const id of KINDS) {
    const solver = await create(id, world);
    const s0 = await solver.snapshot();
    assert.equal(solver.bodyCount, world.bodies.length, id);
    assert.equal(s0.bodyCount, world.bodies.length, id);
    assert.equal(s0.position.length, 3 * world.bodies.length);
    assert.equal(s0.orientation.length, 4 * world.bodies.length);
    assert.equal(s0.linearVelocity.length, 3 * world.bodies.length);
    assert.equal(s0.angularVelocity.length, 3 * world.bodies.length);
    world.bodies.forEach((b, i) => {
      for (let d = 0; d < 3; d++) {
        assert.ok(Math.abs(s0.position[3 * i + d] - b.position[d]) <= U32 * Math.abs(b.position[d]), `${id}: body ${i} position`);
        const v = b.fixed ? 0 : b.linearVelocity?.[d] ?? 0;
        assert.ok(Math.abs(s0.linearVelocity[3 * i + d] - v) <= U32 * Math.abs(v), `${id}: body ${i} velocity`);
      }
    });
    await solver.step(30);
    const s = await solver.snapshot();
    assert.equal(s.frame, 30);
    assert.ok(Math.abs(s.time - 30 * defaultSolverOptions.dt) < 1e-12);
    const m = new MetricsContext(world).measure(s);
    assert.ok(m.finite, id);
    // the fixed body never moves, exactly
    for (let d = 0; d < 3; d++) assert.equal(s.position[3 * (base + 2) + d], s0.position[3 * (base + 2) + d], `${id}: fixed body moved`);
    // the floating pair falls freely with its centre of mass at x0 + v0 t + ½ g t (t + h_s) (internal forces cancel)
    const T = 30 * defaultSolverOptions.dt, hs = defaultSolverOptions.dt / defaultSolverOptions.iterations;
    const cy = 0.5 * (s.position[3 * base + 1] + s.position[3 * (base + 1) + 1]);
    const expectY = 1 - 0.5 * 9.81 * T * (T + hs);
    // impulse joints: each sweep's equal and opposite impulses cancel in the sum to f32 rounding; 1e-4 m ≫ N u |x| ≈ 3e-5
    assert.ok(Math.abs(cy - expectY) <= 1e-4, `${id}: floating pair's centre at y = ${cy}, expected ${expectY}`);
    solver.destroy();
  }
});

test('unsupported: rapier-multibody refuses a loop (a bead pinned at both ends, a chain between fixed bodies), accepts a forest', async () => {
  const bead = (x: number) => ({ shape: { type: 'sphere' as const, radius: 0.05 }, density: 1000, position: [x, 1, 0] as Vec3 });
  const pinnedTwice: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [bead(0)],
    constraints: [
      { type: 'point', bodyA: 0, bodyB: null, anchorA: [-0.05, 0, 0], anchorB: [-0.05, 1, 0] },
      { type: 'point', bodyA: 0, bodyB: null, anchorA: [0.05, 0, 0], anchorB: [0.05, 1, 0] },
    ],
  };
  const betweenFixed: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [{ ...bead(-0.1), fixed: true }, bead(0), { ...bead(0.1), fixed: true }],
    constraints: [
      { type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.05, 0, 0], anchorB: [-0.05, 0, 0] },
      { type: 'point', bodyA: 1, bodyB: 2, anchorA: [0.05, 0, 0], anchorB: [-0.05, 0, 0] },
    ],
  };
  const ring: WorldDesc = {
    gravity: [0, 0, 0],
    bodies: [bead(0), bead(0.1), bead(0.2)],
    constraints: [
      { type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.05, 0, 0], anchorB: [-0.05, 0, 0] },
      { type: 'point', bodyA: 1, bodyB: 2, anchorA: [0.05, 0, 0], anchorB: [-0.05, 0, 0] },
      { type: 'point', bodyA: 2, bodyB: 0, anchorA: [0.05, 0, 0], anchorB: [-0.05, 0, 0] },
    ],
  };
  const multibody = findSolver('rapier-multibody')!;
  const impulse = findSolver('rapier')!;
  for (const w of [pinnedTwice, betweenFixed, ring]) {
    const reason = multibody.unsupported!(w);
    assert.equal(typeof reason, 'string');
    assert.match(reason!, /loop/);
    assert.equal(impulse.unsupported!(w), null);
    await assert.rejects(RapierSolver.create(w, {}, 'multibody'), /loop/);
  }
  for (const w of [necklace.build(resolveParams(necklace, { chains: 4, beads: 3 })), hangingChain.build(resolveParams(hangingChain, { beads: 3 })), pendulum.build(resolveParams(pendulum, {}))])
    assert.equal(multibodyLoopReason(w), null);
  // impulse joints solve a loop: the bead pinned at both ends hangs (held at both pins to ≤ 1 mm after 1 s)
  const solver = await create('rapier', pinnedTwice);
  await solver.step(60);
  const m = new MetricsContext(pinnedTwice).measure(await solver.snapshot());
  solver.destroy();
  assert.ok(m.maxViolation < 1e-3, `pinned bead's violation ${m.maxViolation} m`);
});

test('cost and lifetime: 3 rows × joints × iterations × substeps; iterations < 1 refused; destroy frees the world', async () => {
  const world = necklace.build(resolveParams(necklace, { chains: 2, beads: 5 }));
  const solver = await create('rapier', world, { iterations: 6, substeps: 2 });
  assert.equal(solver.cost().rowSolvesPerFrame, 3 * 10 * 6 * 2);
  assert.match(solver.adapter.name, /^cpu \(Rapier \d+\.\d+\.\d+ wasm\)$/);
  solver.destroy();
  await assert.rejects(solver.step(1), /destroy/);
  const mb = await create('rapier-multibody', world);
  assert.equal(mb.cost().rowSolvesPerFrame, 0); // joints are coordinates: no rows
  mb.destroy();
  await assert.rejects(RapierSolver.create(world, { iterations: 0 }), /iterations/);
});
