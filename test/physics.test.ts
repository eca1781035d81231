/**
 * Physics of the f64 Jacobi point-constraint solver (jacobi-cpu): each test checks
 * one physical fact and fails when the physics is wrong. Tolerances are derived
 * beside each assertion; figures are never hard-coded from a previous run.
 *
 * Notation as in the reference text: C = x_A + R(q_A) r⁰ − x_B − R(q_B) r¹ (3),
 * J V = v_A + ω_A × R(q_A) r⁰ − v_B − ω_B × R(q_B) r¹ (5), β in units of 1/h.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { defaultSolverOptions, type Snapshot, type SolverOptions } from '../src/solvers/solver.js';
import { runSolver, type RunResult } from '../src/run/run.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import { massProperties, type Vec3, type Quat, type WorldDesc } from '../src/model/world.js';
import { resolveParams } from '../src/scenes/scene.js';
import { pendulumPeriod } from './support/pendulum.js';
import { hangingChain } from '../src/scenes/hanging-chain.js';
import { necklace } from '../src/scenes/necklace.js';

const EPS = Number.EPSILON;

// --- small vector helpers, written here so the checks do not lean on the code under test ---

const sub = (a: number[], b: number[]): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const add = (a: number[], b: number[]): Vec3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const scale = (s: number, a: number[]): Vec3 => [s * a[0], s * a[1], s * a[2]];
const dot = (a: number[], b: number[]) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: number[], b: number[]): Vec3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a: number[]) => Math.hypot(a[0], a[1], a[2]);

/** R(q) v for a unit quaternion q = [x y z w], through the rotation matrix. */
function rotateByQuat(q: ArrayLike<number>, o: number, v: ArrayLike<number>): Vec3 {
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  return [
    (1 - 2 * (y * y + z * z)) * v[0] + 2 * (x * y - z * w) * v[1] + 2 * (x * z + y * w) * v[2],
    2 * (x * y + z * w) * v[0] + (1 - 2 * (x * x + z * z)) * v[1] + 2 * (y * z - x * w) * v[2],
    2 * (x * z - y * w) * v[0] + 2 * (y * z + x * w) * v[1] + (1 - 2 * (x * x + y * y)) * v[2],
  ];
}

const vec = (arr: ArrayLike<number>, i: number): Vec3 => [arr[3 * i], arr[3 * i + 1], arr[3 * i + 2]];

/** Lever arms a = R(q_A) r⁰ and b = R(q_B) r¹ (b = 0 for the world) of constraint ic in a snapshot. */
function arms(world: WorldDesc, s: Snapshot, ic: number): { a: Vec3; b: Vec3 } {
  const c = world.constraints[ic];
  const a = rotateByQuat(s.orientation, 4 * c.bodyA, c.anchorA);
  const b: Vec3 = c.bodyB === null ? [0, 0, 0] : rotateByQuat(s.orientation, 4 * c.bodyB, c.anchorB);
  return { a, b };
}

/** C_ℓ (3) of constraint ic in a snapshot. */
function violation(world: WorldDesc, s: Snapshot, ic: number): Vec3 {
  const c = world.constraints[ic];
  const { a, b } = arms(world, s, ic);
  const pA = add(vec(s.position, c.bodyA), a);
  const pB = c.bodyB === null ? c.anchorB : add(vec(s.position, c.bodyB), b);
  return sub(pA, pB);
}

/** J_ℓ V with the Jacobian of the configuration `at` and the velocities of `vel`:  v_A + ω_A × a − v_B − ω_B × b. */
function constraintVelocity(world: WorldDesc, at: Snapshot, vel: Snapshot, ic: number): Vec3 {
  const c = world.constraints[ic];
  const { a, b } = arms(world, at, ic);
  const uA = add(vec(vel.linearVelocity, c.bodyA), cross(vec(vel.angularVelocity, c.bodyA), a));
  const uB: Vec3 = c.bodyB === null ? [0, 0, 0] : add(vec(vel.linearVelocity, c.bodyB), cross(vec(vel.angularVelocity, c.bodyB), b));
  return sub(uA, uB);
}

/** Every number anywhere inside a value (objects, arrays, typed arrays). */
function numbersIn(value: unknown, path = 'result', out: [string, number][] = []): [string, number][] {
  if (typeof value === 'number') out.push([path, value]);
  else if (Array.isArray(value) || ArrayBuffer.isView(value)) Array.from(value as ArrayLike<unknown>).forEach((v, i) => numbersIn(v, `${path}[${i}]`, out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) numbersIn(v, `${path}.${k}`, out);
  return out;
}

const sphereMass = (density: number, r: number) => density * (4 / 3) * Math.PI * r ** 3;

// --- a) the period of a physical pendulum ------------------------------------------------

// Error budget of the measured period, all ≪ 1 %: finite amplitude θ₀²/16 = 0.06 % at θ₀ = 0.1 rad;
// the integrator's phase error O((ω h)²) with ω h = 2π h / T ≈ 0.07 (≲ 0.1 %); linear interpolation of
// a zero crossing, where x'' = −ω² x ≈ 0, errs by O(h³). A 1 % band is ten times that budget.
const PERIOD_TOLERANCE = 0.01;

test('pendulum: the small-angle period is 2π√((I_cm + mL²)/(mgL)) within 1 %', async (t) => {
  const { measured, physical, periods } = await pendulumPeriod({ angle: 0.1 }, 600, (w) => new JacobiCpuSolver(w));
  assert.ok(periods >= 4);
  const rel = Math.abs(measured / physical - 1);
  t.diagnostic(`T measured ${measured.toFixed(5)} s over ${periods} periods, physical ${physical.toFixed(5)} s (${(100 * rel).toFixed(3)} %)`);
  assert.ok(rel <= PERIOD_TOLERANCE, `measured T = ${measured} s, physical pendulum ${physical} s (${(100 * rel).toFixed(3)} %)`);
});

test('pendulum: a large bead swings as a physical pendulum, not a simple one', async (t) => {
  // r = 0.15, L = 0.25: (I_cm + mL²)/(mL²) = 1 + 0.4 r²/L² = 1.144, so the periods differ by √1.144 − 1 ≈ 7 %.
  const params = { radius: 0.15, length: 0.25, angle: 0.1 };
  const { measured, physical, simple } = await pendulumPeriod(params, 600, (w) => new JacobiCpuSolver(w));
  assert.ok(simple < physical * (1 - 3 * PERIOD_TOLERANCE), 'the scene must separate the two models by several %');
  const rel = Math.abs(measured / physical - 1);
  t.diagnostic(`T measured ${measured.toFixed(5)} s, physical ${physical.toFixed(5)} s (${(100 * rel).toFixed(3)} %), simple ${simple.toFixed(5)} s (${(100 * (simple / measured - 1)).toFixed(2)} %)`);
  assert.ok(rel <= PERIOD_TOLERANCE, `measured T = ${measured} s, physical pendulum ${physical} s (${(100 * rel).toFixed(3)} %)`);
  assert.ok(
    Math.abs(simple - measured) > PERIOD_TOLERANCE * measured,
    `simple pendulum 2π√(L/g) = ${simple} s lies inside the 1 % band of the measured ${measured} s`,
  );
});

// --- b) a hanging chain settles --------------------------------------------------------------

test('hanging-chain: 5 beads at rest settle, max violation below 1e-4 m after 10 s', async (t) => {
  const world = hangingChain.build(resolveParams(hangingChain, { beads: 5 }));
  const solver = new JacobiCpuSolver(world); // defaults: dt 1/60, 8 iterations, β 0.2, warm start 1
  const { dt, beta } = solver.options;
  const result = await runSolver(solver, world, { frames: 600 });
  assert.equal(result.diverged, null);
  const final = result.final!;
  // 1e-4 m = r/500. At rest C contracts by (1 − β) = 0.8 a step once warm-started Jacobi holds the static
  // multipliers, so 600 steps leave nothing of the start-up sag (≈ g h² = 2.7 mm a step), only the solver's floor.
  const VIOLATION_BOUND = 1e-4;
  assert.ok(final.maxViolation < VIOLATION_BOUND, `max violation after 10 s: ${final.maxViolation} m`);
  // At rest the only motion left is the Baumgarte correction of what violation remains: |v| ≲ (β/h) |C|.
  const snap = await solver.snapshot();
  let maxSpeed = 0;
  for (let i = 0; i < snap.bodyCount; i++) maxSpeed = Math.max(maxSpeed, norm(vec(snap.linearVelocity, i)));
  const SPEED_BOUND = (beta / dt) * VIOLATION_BOUND; // 1.2e-3 m/s
  t.diagnostic(`after 10 s: max violation ${final.maxViolation.toExponential(2)} m (worst over the run ${result.worstMaxViolation.toExponential(2)} m), fastest bead ${maxSpeed.toExponential(2)} m/s`);
  assert.ok(maxSpeed < SPEED_BOUND, `fastest bead after 10 s: ${maxSpeed} m/s`);
});

// --- c) Baumgarte stabilisation --------------------------------------------------------------

/**
 * Steps the 3-bead necklace (held out horizontally, released) frame by frame for 10 s and
 * returns |C|max per frame and, per frame, the rotational drift bound D_n = max_ℓ ½ h² r (|ω_A|² + |ω_B|²).
 *
 * Why D_n: from one step to the next, C_{n+1} = C_n + h J V_{n+1} + δ_n with
 * δ_n = [(R(h ω_A) − I) a − h ω_A × a] − [(R(h ω_B) − I) b − h ω_B × b] ≈ ½ hω_A × (hω_A × a) − …, so
 * |δ_n| ≤ ½ h² (|ω_A|² |a| + |ω_B|² |b|) with |a| = |b| = r (the linear step is exact; only the rotation
 * of the lever arms is curved). With J V_{n+1} = −(β/h) C_n, C_{n+1} = (1 − β) C_n + δ_n.
 */
async function swingNecklace(beta: number) {
  const p = resolveParams(necklace, { chains: 1, beads: 3 });
  const world = necklace.build(p);
  const solver = new JacobiCpuSolver(world, { beta });
  const metrics = new MetricsContext(world);
  const h = solver.options.dt / solver.options.substeps;
  const frames = 600;
  const violations: number[] = [];
  const drift: number[] = [];
  for (let n = 0; n < frames; n++) {
    await solver.step(1);
    const s = await solver.snapshot();
    const m = metrics.measure(s);
    assert.ok(m.finite, `state not finite at frame ${n + 1}`);
    violations.push(m.maxViolation);
    let D = 0;
    for (const c of world.constraints) {
      const wA = norm(vec(s.angularVelocity, c.bodyA));
      const wB = c.bodyB === null ? 0 : norm(vec(s.angularVelocity, c.bodyB));
      D = Math.max(D, 0.5 * h * h * p.radius * (wA * wA + wB * wB));
    }
    drift.push(D);
  }
  const windowMean = (second: number) => {
    const w = violations.slice(60 * second, 60 * (second + 1));
    return w.reduce((x, y) => x + y, 0) / w.length;
  };
  return { violations, drift, windowMean };
}

test('Baumgarte: with β = 0 the violation of a swinging chain grows; with β = 0.2 it stays bounded', async (t) => {
  const free = await swingNecklace(0);
  const early0 = free.windowMean(0), late0 = free.windowMean(9);
  // β = 0: nothing removes δ_n, and δ_n (the curvature of the lever arms' paths) keeps the same sense
  // relative to each link, so C accumulates; the last second must be clearly (> 2×) above the first.
  assert.ok(late0 > 2 * early0, `β = 0: mean |C| ${early0} m in the first second, ${late0} m in the last`);

  const beta = defaultSolverOptions.beta;
  const held = await swingNecklace(beta);
  const early = held.windowMean(0), late = held.windowMean(9);
  // β > 0: C_{n+1} = (1 − β) C_n + δ_n from C_0 = 0 gives |C_n| ≤ max |δ| / β ≤ max_n D_n / β
  // (what 8 warm-started Jacobi iterations leave, h |J V + βC/h|, stays about an order below max D here;
  // it is not added to the bound).
  const bound = Math.max(...held.drift) / beta;
  const worst = Math.max(...held.violations);
  t.diagnostic(`β = 0: mean |C| ${early0.toExponential(2)} m (0–1 s) → ${late0.toExponential(2)} m (9–10 s), max ${Math.max(...free.violations).toExponential(2)} m`);
  t.diagnostic(`β = ${beta}: mean |C| ${early.toExponential(2)} m (0–1 s) → ${late.toExponential(2)} m (9–10 s), max ${worst.toExponential(2)} m ≤ max D/β = ${bound.toExponential(2)} m`);
  assert.ok(worst <= bound, `β = ${beta}: max |C| ${worst} m above max D/β = ${bound} m`);
  // and it does not accumulate: the last second is no worse than the first
  assert.ok(late <= early, `β = ${beta}: mean |C| ${early} m in the first second, ${late} m in the last`);
  // the same bound does not hold without stabilisation
  assert.ok(Math.max(...free.violations) > Math.max(...free.drift) / beta, 'β = 0 should exceed what β = 0.2 bounds');
});

// --- d) angular momentum of free spinning bodies ---------------------------------------------

test('a free spinning bead keeps its angular momentum and velocities exactly', async (t) => {
  const r = 0.05;
  const world: WorldDesc = {
    gravity: [0, 0, 0],
    bodies: [
      {
        shape: { type: 'sphere', radius: r },
        density: 1000,
        position: [0.3, -0.2, 0.7],
        orientation: [0.1, 0.2, 0.3, 0.9],
        linearVelocity: [0.4, -0.1, 0.25],
        angularVelocity: [3, -5, 7],
      },
    ],
    constraints: [],
  };
  const solver = new JacobiCpuSolver(world);
  const metrics = new MetricsContext(world);
  const s0 = await solver.snapshot();
  const L0 = metrics.measure(s0).angularMomentum;
  const m = sphereMass(1000, r), I = 0.4 * m * r * r;
  const speed = norm(vec(s0.linearVelocity, 0)), spin = norm(vec(s0.angularVelocity, 0));
  for (let n = 0; n < 6; n++) {
    await solver.step(100);
    const s = await solver.snapshot();
    // nothing acts on the bead: v and ω are untouched, bit for bit
    assert.deepEqual([...s.linearVelocity], [...s0.linearVelocity]);
    assert.deepEqual([...s.angularVelocity], [...s0.angularVelocity]);
    const L = metrics.measure(s).angularMomentum;
    // L = x × m v + I ω with x_n = x_0 + n h v exactly in real numbers, so x_n × v = x_0 × v; only rounding is
    // left: each x += h v rounds by ≤ ½ ε |x| a component (≤ ε |x| in norm), accumulating over the frames,
    // and measuring L (a rotation there and back, products, sums) costs a few ε of each term at both ends:
    // |L_n − L_0| ≤ (frames + 16) ε |x|max m |v| + 16 ε I |ω|.
    const xMax = Math.max(norm(vec(s0.position, 0)), norm(vec(s.position, 0)));
    const tol = (s.frame + 16) * EPS * xMax * m * speed + 16 * EPS * I * spin;
    assert.ok(norm(sub(L, L0)) <= tol, `frame ${s.frame}: |ΔL| = ${norm(sub(L, L0))} > ${tol}`);
    if (n === 5) t.diagnostic(`after ${s.frame} frames |L − L0| = ${norm(sub(L, L0)).toExponential(2)} (|L0| = ${norm(L0).toExponential(2)}), tolerance ${tol.toExponential(2)}`);
  }
});

test('two joined beads spinning freely conserve linear and angular momentum (ΔL = −h C × λ a step)', async (t) => {
  const r = 0.05, density = 1000;
  const centre: Vec3 = [0.2, 0.3, -0.1];
  const e = scale(1 / Math.hypot(1, 0.5, -0.3), [1, 0.5, -0.3]); // the line of centres
  // a general axis, not a principal one (the pair also precesses), at about 1/3 turn a second: Ω h ≈ 0.035 rad
  const Omega: Vec3 = [0.5 / 3, -1 / 3, 2];
  const Vc: Vec3 = [0.1, -0.2, 0.05];
  const x0 = sub(centre, scale(r, e)), x1 = add(centre, scale(r, e));
  const rigid = (x: Vec3) => add(Vc, cross(Omega, sub(x, centre))); // v = V_c + Ω × (x − c), ω = Ω
  const world: WorldDesc = {
    gravity: [0, 0, 0],
    bodies: [
      { shape: { type: 'sphere', radius: r }, density, position: x0, linearVelocity: rigid(x0), angularVelocity: Omega },
      { shape: { type: 'sphere', radius: r }, density, position: x1, linearVelocity: rigid(x1), angularVelocity: Omega },
    ],
    // joined where they touch, at the centre
    constraints: [{ type: 'point', bodyA: 0, bodyB: 1, anchorA: scale(r, e), anchorB: scale(-r, e) }],
    // the Jacobi text's joint rows (Baumgarte β in the velocity solve, whose ΔL = −h C × λ this checks);
    // with collisions on, jacobi-cpu moves its joints' β to a position pass (split impulse)
    collisions: false,
  };
  const solver = new JacobiCpuSolver(world);
  const h = solver.options.dt / solver.options.substeps;
  assert.equal(solver.options.substeps, 1); // one solver step per frame below
  const metrics = new MetricsContext(world);
  const m = massProperties(world.bodies[1]).mass;
  const I = 0.4 * m * r * r;
  // rounding scale of L and p: Σ |x| m |v| + I |ω| and Σ m |v|
  const sizes = (s: Snapshot) => {
    let Ls = 0, ps = 0;
    for (let i = 0; i < 2; i++) {
      Ls += norm(vec(s.position, i)) * m * norm(vec(s.linearVelocity, i)) + I * norm(vec(s.angularVelocity, i));
      ps += m * norm(vec(s.linearVelocity, i));
    }
    return { Ls, ps };
  };

  let prev = await solver.snapshot();
  const first = metrics.measure(prev);
  assert.ok(first.maxViolation < 1e-15, 'the pair starts joined');
  let prevM = first;
  let bound = 0; // Σ h |C_n × λ_n|
  let worstIdentity = 0;
  let maxDrift = 0; // max_n ½ h² r (|ω_A|² + |ω_B|²), the per-step rotational drift of the joint (see swingNecklace)
  let worstViolation = 0;
  const frames = 600;
  for (let n = 0; n < frames; n++) {
    await solver.step(1);
    const s = await solver.snapshot();
    const cur = metrics.measure(s);
    // λ_n from the impulse on body B (+h m⁻¹ λ), C_n from the configuration the step started from
    const lambda = scale(m / h, sub(vec(s.linearVelocity, 1), vec(prev.linearVelocity, 1)));
    const C = violation(world, prev, 0);
    const expected = scale(-h, cross(C, lambda));
    const dL = sub(cur.angularMomentum, prevM.angularMomentum);
    // both L are rounded at a few ε of their terms, and the solver's own updates add as much: 32 ε Σ(...)
    const { Ls } = sizes(s);
    const tolStep = 32 * EPS * Ls;
    const miss = norm(sub(dL, expected));
    worstIdentity = Math.max(worstIdentity, miss / tolStep);
    assert.ok(miss <= tolStep, `frame ${n + 1}: ΔL = ${dL} but −h C × λ = ${expected}`);
    bound += norm(expected) + tolStep;
    maxDrift = Math.max(maxDrift, 0.5 * h * h * r * (dot(vec(s.angularVelocity, 0), vec(s.angularVelocity, 0)) + dot(vec(s.angularVelocity, 1), vec(s.angularVelocity, 1))));
    worstViolation = Math.max(worstViolation, cur.maxViolation);
    prev = s;
    prevM = cur;
  }
  // Over the run: |L_N − L_0| ≤ Σ_n h |C_n × λ_n| (+ rounding). Relative to the spin part of L (about the
  // centre of mass: the part the joint exchanges; the orbital part c × M V_c is carried by free COM motion)
  // that is the tolerance.
  const last = prevM;
  const M = 2 * m;
  const Lspin = norm(sub(first.angularMomentum, cross(centre, scale(M, Vc))));
  const drift = norm(sub(last.angularMomentum, first.angularMomentum));
  const relTolerance = bound / Lspin;
  t.diagnostic(`|L_N − L_0|/|L_spin| = ${(drift / Lspin).toExponential(2)} ≤ Σh|C×λ|/|L_spin| = ${relTolerance.toExponential(2)}; per-step identity within ${worstIdentity.toFixed(3)} of its rounding bound; max |C| ${worstViolation.toExponential(2)} m ≤ ${(maxDrift / defaultSolverOptions.beta).toExponential(2)} m`);
  assert.ok(drift / Lspin <= relTolerance, `relative drift |L_N − L_0|/|L_spin| = ${drift / Lspin} above Σ h|C × λ|/|L_spin| = ${relTolerance}`);
  // Linear momentum: body A gets −hλ, body B +hλ, equal and opposite, so p changes only by rounding,
  // at most a few ε of Σ m|v| a step: 8 ε Σ m|v| per step over N steps.
  const pTol = frames * 8 * EPS * sizes(prev).ps;
  const dp = norm(sub(last.momentum, first.momentum));
  assert.ok(dp <= pTol, `|p_N − p_0| = ${dp} > ${pTol}`);
  t.diagnostic(`|p_N − p_0| = ${dp.toExponential(2)} kg·m/s (tolerance ${pTol.toExponential(2)}, |p| = ${norm(first.momentum).toExponential(2)})`);
  // the pair stays a pair: Baumgarte keeps |C| ≤ max D / β (as in the necklace test), so C × λ stays small
  const violationBound = maxDrift / defaultSolverOptions.beta;
  assert.ok(worstViolation <= violationBound, `max violation ${worstViolation} m above max D/β = ${violationBound} m`);
});

// --- e) divergence is detected and reported --------------------------------------------------

function assertNoNaN(result: RunResult) {
  for (const [path, x] of numbersIn(result)) assert.ok(!Number.isNaN(x), `${path} is NaN`);
}

test('divergence: the warm-started 10-bead hanging chain is reported diverged; cold or well-iterated it is not', async (t) => {
  const world = hangingChain.build(resolveParams(hangingChain, { beads: 10 }));
  const frames = 600; // 10 s
  const run = (o: Partial<SolverOptions>) => runSolver(new JacobiCpuSolver(world, o), world, { frames, sampleEvery: 1 });

  const warm = await run({ warmStart: 1, beta: 0.2, iterations: 8, dt: 1 / 60 });
  assert.ok(warm.diverged, 'the warm-started chain with 8 iterations should diverge');
  const d = warm.diverged!;
  t.diagnostic(`warm start 1: diverged at frame ${d.frame} (t = ${d.t.toFixed(3)} s): ${d.reason}`);
  assert.ok(Number.isInteger(d.frame) && d.frame > 0 && d.frame <= frames, `frame ${d.frame}`);
  assert.ok(Math.abs(d.t - d.frame / 60) < 1e-9, `t = ${d.t} s at frame ${d.frame}`); // t = frame · dt
  assert.ok(typeof d.reason === 'string' && d.reason.length > 0);
  assert.equal(warm.final, null);
  assert.equal(warm.frames, d.frame, 'the run stops at the frame it diverged');
  assertNoNaN(warm);
  assert.ok(Number.isFinite(warm.worstMaxViolation));

  for (const o of [{ warmStart: 0 }, { iterations: 256 }]) {
    const ok = await run(o);
    assert.equal(ok.diverged, null, `${JSON.stringify(o)}: ${ok.diverged?.reason}`);
    assert.equal(ok.frames, frames);
    assert.ok(ok.final && ok.final.finite, JSON.stringify(o));
    assertNoNaN(ok);
    t.diagnostic(`${JSON.stringify(o)}: no divergence in ${frames} frames, worst violation ${ok.worstMaxViolation.toExponential(2)} m, final ${ok.final!.maxViolation.toExponential(2)} m`);
  }
});

// --- f) one constraint is solved exactly -----------------------------------------------------

test('one constraint: after one step J V = −(β/h) C to rounding (Jacobi on one row is a direct solve)', async (t) => {
  const r = 0.05;
  const q: Quat = (() => {
    const raw = [0.3, -0.5, 0.2, 0.8];
    const n = Math.hypot(...raw);
    return raw.map((c) => c / n) as Quat;
  })();
  const x: Vec3 = [0.1, 1, -0.2];
  // the pin is the bead's top surface point in the world, whatever the bead's orientation:
  // r⁰ = R(q)ᵀ (0, r, 0) in the bead's local frame
  const qConj: Quat = [-q[0], -q[1], -q[2], q[3]];
  const anchorA = rotateByQuat(qConj, 0, [0, r, 0]);
  const pin = add(x, rotateByQuat(q, 0, anchorA));
  const v: Vec3 = [0.3, -1.2, -0.4]; // moving down, away from the pin: J V ≠ 0
  const w: Vec3 = [2, -1, 0.5];
  const world: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [{ shape: { type: 'sphere', radius: r }, density: 1000, position: x, orientation: q, linearVelocity: v, angularVelocity: w }],
    constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA, anchorB: pin }],
  };
  for (const iterations of [1, 8]) {
    const solver = new JacobiCpuSolver(world, { iterations });
    const h = solver.options.dt / solver.options.substeps;
    const before = await solver.snapshot();
    const JV0 = constraintVelocity(world, before, before, 0);
    assert.ok(norm(JV0) > 0.5, 'the start violates the velocity constraint');
    await solver.step(1);
    const after = await solver.snapshot();
    // J from the configuration the step was solved at, V after the step
    const JV = constraintVelocity(world, before, after, 0);
    const target = scale(-solver.options.beta / h, violation(world, before, 0)); // ≈ 0: C_0 is rounding only
    // rounding: a few tens of flops on velocities of size s = |v| + |ω| r + g h (≈ 1.4 m/s): 100 ε s ≈ 3e-14 m/s;
    // 1e-12 m/s leaves a margin of 30 and is still 12 orders below the violation we started from.
    const tol = 1e-12;
    t.diagnostic(`${iterations} iteration(s): |J V| before ${norm(JV0).toFixed(3)} m/s, after ${norm(JV).toExponential(2)} m/s (|βC/h| = ${norm(target).toExponential(2)})`);
    assert.ok(norm(sub(JV, target)) <= tol, `${iterations} iteration(s): |J V + βC/h| = ${norm(sub(JV, target))} m/s`);
  }
});

// --- g) metrics of a known state -------------------------------------------------------------

test('metrics: kinetic and potential energy, momentum and angular momentum of a hand-built state', (t) => {
  const g: Vec3 = [0.5, -9.81, 0.25];
  const bodies = [
    { r: 0.05, density: 1000, x: [0.1, 0.2, 0.3], q: [0, 0, 0, 1], v: [1, -2, 0.5], w: [3, 0, -1] },
    { r: 0.2, mass: 3.5, x: [-1, 2, 0.5], q: [0.2, -0.4, 0.1, 0.8], v: [0, 0.25, -0.75], w: [-2, 5, 1] },
  ];
  const fixedAt: Vec3 = [7, 8, 9];
  const world: WorldDesc = {
    gravity: g,
    bodies: [
      ...bodies.map((b) => ({
        shape: { type: 'sphere' as const, radius: b.r },
        ...(b.density !== undefined ? { density: b.density } : { mass: b.mass }),
        position: b.x as Vec3,
      })),
      // a fixed body carries no energy or momentum, wherever it is and however it is said to move
      { shape: { type: 'sphere', radius: 1 }, fixed: true, position: fixedAt },
    ],
    constraints: [
      // the bead's anchor 0.3 m from the world point it is pinned to
      { type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0.05, 0], anchorB: [0.1, 0.25 + 0.3, 0.3] },
      // two anchors that coincide
      { type: 'point', bodyA: 0, bodyB: 1, anchorA: [0, 0, 0], anchorB: [0, 0, 0] },
    ],
  };
  // put body 1's rotated anchor exactly on body 0's centre: r¹ = R(q₁)ᵀ (x₀ − x₁)
  const q1 = bodies[1].q.map((c) => c / Math.hypot(...bodies[1].q));
  world.constraints[1].anchorB = rotateByQuat([-q1[0], -q1[1], -q1[2], q1[3]], 0, sub(bodies[0].x, bodies[1].x));

  const snapshot: Snapshot = {
    frame: 0,
    time: 1.25,
    bodyCount: 3,
    position: Float64Array.from([...bodies.flatMap((b) => b.x), ...fixedAt]),
    orientation: Float64Array.from([...bodies[0].q, ...q1, 0, 0, 0, 1]),
    linearVelocity: Float64Array.from([...bodies.flatMap((b) => b.v), 4, 4, 4]),
    angularVelocity: Float64Array.from([...bodies.flatMap((b) => b.w), 4, 4, 4]),
  };
  const m = bodies.map((b) => (b.density !== undefined ? sphereMass(b.density, b.r) : b.mass!));
  const I = bodies.map((b, i) => 0.4 * m[i] * b.r * b.r); // solid sphere, any axis
  let kinetic = 0, potential = 0;
  let p: Vec3 = [0, 0, 0], L: Vec3 = [0, 0, 0];
  bodies.forEach((b, i) => {
    kinetic += 0.5 * m[i] * dot(b.v, b.v) + 0.5 * I[i] * dot(b.w, b.w);
    potential += -m[i] * dot(g, b.x);
    p = add(p, scale(m[i], b.v));
    L = add(L, add(cross(b.x, scale(m[i], b.v)), scale(I[i], b.w)));
  });

  const out = new MetricsContext(world).measure(snapshot);
  // each figure is a short sum of products (and, for the spin terms, a rotation there and back):
  // rounding ≲ 20 ε of the largest term; 1e-13 relative is a margin of ~20 over that
  let worstRel = 0;
  const close = (got: number, want: number, size: number, what: string) => {
    worstRel = Math.max(worstRel, Math.abs(got - want) / size);
    assert.ok(Math.abs(got - want) <= 1e-13 * size, `${what}: ${got}, expected ${want}`);
  };
  const kineticSize = kinetic; // all terms positive
  const potentialSize = bodies.reduce((s, b, i) => s + m[i] * norm(g) * norm(b.x), 0);
  close(out.kinetic, kinetic, kineticSize, 'kinetic');
  close(out.potential, potential, potentialSize, 'potential');
  close(out.energy, kinetic + potential, kineticSize + potentialSize, 'energy');
  const pSize = bodies.reduce((s, b, i) => s + m[i] * norm(b.v), 0);
  const LSize = bodies.reduce((s, b, i) => s + m[i] * norm(b.x) * norm(b.v) + I[i] * norm(b.w), 0);
  for (let d = 0; d < 3; d++) {
    close(out.momentum[d], p[d], pSize, `momentum[${d}]`);
    close(out.angularMomentum[d], L[d], LSize, `angularMomentum[${d}]`);
  }
  // violations: 0.3 m for the pin (body 0 has identity orientation), 0 for the coincident anchors
  close(out.maxViolation, 0.3, 1, 'maxViolation');
  close(out.rmsViolation, Math.sqrt((0.3 * 0.3 + 0) / 2), 1, 'rmsViolation');
  assert.equal(out.t, 1.25);
  t.diagnostic(`KE ${out.kinetic.toFixed(6)} J, PE ${out.potential.toFixed(6)} J; worst error ${(worstRel / EPS).toFixed(1)} ε of the term sizes`);
  assert.equal(out.finite, true);

  const broken: Snapshot = { ...snapshot, linearVelocity: snapshot.linearVelocity.slice() };
  broken.linearVelocity[4] = NaN;
  assert.equal(new MetricsContext(world).measure(broken).finite, false);
});
