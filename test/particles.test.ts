/**
 * Constrained particle dynamics (Witkin, shared/seeds/witkin-constrained-dynamics-slides.txt):
 * the slides' quiz, the bead staying on its wire (with feedback) and leaving it (without,
 * under explicit Euler), energy under RK4, the implicit and the parametric bead moving
 * alike, a hanging rope's tensions, constraints removed between steps, the integrators'
 * exact discrete trajectories, forces, zero gradients and scene files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildScene } from '../src/scenes/scene.js';
import { beadOnWire, beadOnWireParametric, doublePendulum } from '../src/scenes/particles.js';
import { WitkinSolver } from '../src/solvers/witkin/solver.js';
import { ParticleSystem } from '../src/particles/system.js';
import { Integrator, type IntegratorName } from '../src/particles/integrators.js';
import { ParticleMetricsContext } from '../src/particles/metrics.js';
import { ParticleSystemError, type ParticleSystemDesc } from '../src/model/particle-system.js';
import { runSolver } from '../src/run/run.js';
import { parseAnySceneFile, anySceneFileJson } from '../src/scenes/scene-file.js';
import { WorldError } from '../src/model/world.js';

const feedback = { feedbackStiffness: 100, feedbackDamping: 20 };
const bead = (given: Record<string, number | number[]> = {}) => buildScene(beadOnWire, given) as ParticleSystemDesc;
const dir = mkdtempSync(join(tmpdir(), 'solverlab-particles-'));

test("the slides' quiz: x = (0, −2), ẋ = (−4, 0), m = 10 kg, r = 2 gives λ = −89 and Q̂ = (0, 178) N", () => {
  // λ = (−∂C/∂x·f − m ∂Ċ/∂x·ẋ)/(∂C/∂x·∂C/∂x) = (−(0,−2)·(0,−98) − 10·16)/4 = (−196 − 160)/4 = −89; Q̂ = λ x = (0, 178)
  const sys = new ParticleSystem(bead({ radius: 2, position: [0, -2], velocity: [-4, 0], mass: 10 }));
  const [f] = sys.constraintForces();
  assert.equal(f.lambda.length, 1);
  assert.ok(Math.abs(f.lambda[0] + 89) < 1e-12, `λ = ${f.lambda[0]}`);
  assert.ok(Math.abs(f.forces[0].force[0]) < 1e-12 && Math.abs(f.forces[0].force[1] - 178) < 1e-12, `Q̂ = ${f.forces[0].force}`);
});

test('the quiz through the command line: run --frames 0 --json reports constraintForces', () => {
  const out = join(dir, 'quiz.json');
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/bin.ts', 'run', '--scene', 'bead-on-wire', '--param', 'radius=2', '--param', 'position=0,-2', '--param', 'velocity=-4,0', '--param', 'mass=10', '--frames', '0', '--json', out, '--quiet'],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  const rec = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(rec.solver, 'witkin-rk4');
  assert.equal(rec.constraintForces.length, 1);
  assert.ok(Math.abs(rec.constraintForces[0].lambda[0] + 89) < 1e-9);
  const [fx, fy] = rec.constraintForces[0].forces[0].force;
  assert.ok(Math.abs(fx) < 1e-9 && Math.abs(fy - 178) < 1e-9, `${fx}, ${fy}`);
});

/** |C| in metres (distance off the wire) after every frame, for one bead run. */
async function beadViolations(desc: ParticleSystemDesc, integrator: IntegratorName, options: object, frames: number): Promise<{ violation: number[]; energy: number[] }> {
  const solver = new WitkinSolver(desc, options, integrator);
  const metrics = new ParticleMetricsContext(desc);
  const violation: number[] = [], energy: number[] = [];
  for (let f = 0; f < frames; f++) {
    await solver.step(1);
    const m = metrics.measure(await solver.snapshot());
    violation.push(m.maxViolation);
    energy.push(m.energy);
  }
  return { violation, energy };
}

test('with feedback the bead stays on the wire (|C| < 1e-6 over 10 s, RK4, h = 1/120 s); without it explicit Euler drifts off, growing', async () => {
  const desc = bead({ velocity: [0, -3] });
  const held = await beadViolations(desc, 'rk4', { ...feedback, substeps: 2 }, 600);
  const worst = Math.max(...held.violation);
  assert.ok(worst < 1e-6, `worst |C| with feedback ${worst}`);
  // ks = kd = 0: explicit Euler adds h²|ẍ|²… to |x|² every step (|x_{n+1}|² = |x_n|² + h²|v_n|² + …): the bead spirals out
  const free = await beadViolations(desc, 'euler', { feedbackStiffness: 0, feedbackDamping: 0 }, 600);
  const at = (s: number) => free.violation[Math.round(s * 60) - 1];
  assert.ok(at(1) < at(5) && at(5) < at(10), `|C| at 1, 5, 10 s: ${at(1)}, ${at(5)}, ${at(10)}`);
  assert.ok(at(10) > 100 * worst && at(10) > 0.01, `explicit Euler without feedback should leave the wire: ${at(10)} m`);
  // and the same explicit Euler with feedback stays far closer
  const fed = await beadViolations(desc, 'euler', { ...feedback, substeps: 4 }, 600);
  assert.ok(Math.max(...fed.violation) < at(10) / 10, `feedback ${Math.max(...fed.violation)} vs none ${at(10)}`);
});

test('RK4 conserves the bead’s energy to |ΔE| < 1e-4 m g r over 10 s at h = 1/60, and the drift falls as h⁴', async () => {
  const desc = bead({ velocity: [0, -3] });
  const drift = async (substeps: number) => {
    const { energy } = await beadViolations(desc, 'rk4', { ...feedback, substeps }, 600);
    const e0 = new ParticleMetricsContext(desc).measure(await new WitkinSolver(desc, {}, 'rk4').snapshot()).energy;
    return Math.max(...energy.map((e) => Math.abs(e - e0)));
  };
  const d1 = await drift(1), d2 = await drift(2);
  const scale = 1 * 9.8 * 1; // m g r
  assert.ok(d1 < 1e-4 * scale, `|ΔE| = ${d1} J`);
  assert.ok(d1 / d2 > 8 && d1 / d2 < 32, `halving h divides the drift by ${d1 / d2} (RK4: ≈ 16)`);
});

test('the implicit and the parametric bead follow the same motion (to 1e-6 m over 3 s), the parametric one exactly on its wire', async () => {
  const given = { position: [0.6, -0.8], velocity: [2, 1.5], radius: 1 };
  const implicit = new WitkinSolver(buildScene(beadOnWire, given) as ParticleSystemDesc, { ...feedback, substeps: 4 }, 'rk4');
  const paramDesc = buildScene(beadOnWireParametric, given) as ParticleSystemDesc;
  const parametric = new WitkinSolver(paramDesc, { substeps: 4 }, 'rk4');
  // the start lies on the wire and the velocity along it, so the two starts are the same state
  const p0 = (await parametric.snapshot()).linearVelocity, i0 = (await implicit.snapshot()).linearVelocity;
  assert.ok(Math.hypot(p0[0] - i0[0], p0[1] - i0[1]) < 1e-12);
  const metrics = new ParticleMetricsContext(paramDesc);
  let worst = 0, offWire = 0;
  for (let f = 0; f < 180; f++) {
    await implicit.step(1);
    await parametric.step(1);
    const a = await implicit.snapshot(), b = await parametric.snapshot();
    worst = Math.max(worst, Math.hypot(a.position[0] - b.position[0], a.position[1] - b.position[1]));
    offWire = Math.max(offWire, metrics.measure(b).maxViolation);
  }
  assert.ok(worst < 1e-6, `positions part by ${worst} m`);
  assert.ok(offWire < 1e-14, `parametric bead off its wire by ${offWire} m`);
});

function hangingRope(n: number, m: number, seg: number, g: number): ParticleSystemDesc {
  const particles = Array.from({ length: n }, (_, i) => ({ position: [0, -i * seg, 0], mass: m }));
  const constraints: ParticleSystemDesc['constraints'] = [{ type: 'nail', particle: 0, point: [0, 0, 0] }];
  for (let i = 0; i + 1 < n; i++) constraints.push({ type: 'distance', a: i, b: i + 1, length: seg });
  return { kind: 'particles', dimension: 3, particles, forces: [{ type: 'gravity', g: [0, -g, 0] }], constraints };
}

test('a rope hanging at rest: each link carries the weight below it, the nail the whole rope (to 1e-9 relative)', () => {
  const n = 12, m = 0.3, seg = 0.25, g = 9.81;
  const sys = new ParticleSystem(hangingRope(n, m, seg, g));
  const forces = sys.constraintForces();
  // the nail holds n m g upward
  const nail = forces[0].forces[0].force;
  assert.ok(Math.abs(nail[1] - n * m * g) < 1e-9 * n * m * g && Math.abs(nail[0]) < 1e-12, `nail ${nail}`);
  for (let k = 1; k < n; k++) {
    // link k joins particles k−1 (above) and k; Q̂ on the upper one = λ (x_a − x_b) = λ (0, seg, 0): tension pulls it down
    const f = forces[k];
    const below = (n - k) * m * g;
    const onUpper = f.forces[0].force[1], onLower = f.forces[1].force[1];
    assert.ok(Math.abs(onLower - below) < 1e-9 * below, `link ${k}: ${onLower} vs ${below}`);
    assert.ok(Math.abs(onUpper + below) < 1e-9 * below);
    assert.ok(Math.abs(-f.lambda[0] * seg - below) < 1e-9 * below, `tension from λ: ${-f.lambda[0] * seg}`);
  }
});

test('constraints change between steps: a hanging rope cut from its nail falls with g and stays whole', () => {
  const desc = hangingRope(6, 0.2, 0.2, 9.81);
  const sys = new ParticleSystem(desc, { ks: 100, kd: 20 });
  const rk4 = new Integrator('rk4', sys);
  for (let i = 0; i < 30; i++) rk4.step(1 / 60); // at rest: nothing moves
  assert.ok(Math.abs(sys.state().q[1]) < 1e-12);
  sys.removeConstraint(sys.constraints[0]);
  const h = 1 / 120, steps = 60;
  const y0 = sys.state().q.filter((_, i) => i % 3 === 1);
  for (let i = 0; i < steps; i++) rk4.step(h);
  const y1 = sys.state().q.filter((_, i) => i % 3 === 1);
  const t = h * steps;
  for (let i = 0; i < y0.length; i++) assert.ok(Math.abs(y1[i] - y0[i] + 0.5 * 9.81 * t * t) < 1e-9, `particle ${i} fell ${y0[i] - y1[i]}`);
  const added = sys.addConstraint({ type: 'plane', particle: 5, point: [0, -10, 0], normal: [0, 1, 0] });
  assert.equal(sys.rowCount, 5 + 1);
  sys.removeConstraint(added);
  assert.throws(() => sys.removeConstraint(added), /not in this system/);
});

test('the integrators are the ones named: a free particle under gravity follows each one’s exact discrete trajectory', () => {
  const g = 9.81, h = 0.05, n = 20;
  const expected: Record<IntegratorName, (k: number) => number> = {
    euler: (k) => -g * h * h * (k * (k - 1)) / 2, // y_{k+1} = y_k + h v_k, v_k = −g h k
    symplectic: (k) => -g * h * h * (k * (k + 1)) / 2, // v first: y_{k+1} = y_k + h v_{k+1}
    rk4: (k) => -0.5 * g * (h * k) ** 2, // exact on a quadratic
  };
  for (const name of ['euler', 'symplectic', 'rk4'] as IntegratorName[]) {
    const sys = new ParticleSystem({ kind: 'particles', dimension: 2, particles: [{ position: [0, 0], mass: 2 }], forces: [{ type: 'gravity', g: [0, -g] }], constraints: [] });
    const it = new Integrator(name, sys);
    for (let k = 0; k < n; k++) it.step(h);
    assert.ok(Math.abs(sys.state().q[1] - expected[name](n)) < 1e-12, `${name}: ${sys.state().q[1]} vs ${expected[name](n)}`);
  }
});

test('forces: a spring oscillates at ω = √(k/m) (RK4, 0.01 %) and drag slows as e^(−k t/m)', () => {
  const k = 40, m = 0.5, omega = Math.sqrt(k / m);
  const spring: ParticleSystemDesc = {
    kind: 'particles',
    dimension: 2,
    particles: [{ position: [0, 0], mass: 0, fixed: true }, { position: [0.1, 0], mass: m }],
    forces: [{ type: 'spring', a: 1, b: 0, restLength: 0, stiffness: k, damping: 0 }],
    constraints: [],
  };
  const sys = new ParticleSystem(spring);
  const rk4 = new Integrator('rk4', sys);
  const h = 1e-3;
  let t = 0, prev = sys.state().q[2], crossings: number[] = [];
  while (crossings.length < 5) {
    rk4.step(h);
    t += h;
    const x = sys.state().q[2];
    if (prev > 0 && x <= 0) crossings.push(t - h + (h * prev) / (prev - x));
    prev = x;
  }
  const period = (crossings[4] - crossings[0]) / 4;
  assert.ok(Math.abs(period / ((2 * Math.PI) / omega) - 1) < 1e-4, `period ${period} vs ${(2 * Math.PI) / omega}`);
  const drag = new ParticleSystem({ kind: 'particles', dimension: 3, particles: [{ position: [0, 0, 0], velocity: [3, 0, 0], mass: m }], forces: [{ type: 'drag', k: 0.7 }], constraints: [] });
  const it = new Integrator('rk4', drag);
  for (let i = 0; i < 1000; i++) it.step(h);
  const v = drag.state().v[0];
  assert.ok(Math.abs(v / (3 * Math.exp((-0.7 * 1) / m)) - 1) < 1e-9, `v(1 s) = ${v}`);
});

test('RK4 keeps the double pendulum on its links and its energy to 1e-3 of m g l over 10 s (h = 1/240)', async () => {
  const desc = buildScene(doublePendulum, {}) as ParticleSystemDesc;
  const solver = new WitkinSolver(desc, { ...feedback, substeps: 4 }, 'rk4');
  const r = await runSolver(solver, desc, { frames: 600, sampleEvery: 10 });
  assert.equal(r.diverged, null);
  assert.ok(r.worstMaxViolation < 1e-5, `worst ${r.worstMaxViolation} m`);
  const worstE = Math.max(...r.series.map((p) => Math.abs(p.energy - r.initial.energy)));
  assert.ok(worstE < 1e-3 * 1 * 9.81 * 1, `|ΔE| ${worstE} J`);
});

test('a zero gradient is a clear error or a reported failure, never NaN', async () => {
  // a zero-length distance: refused when the system is built
  const zero: ParticleSystemDesc = {
    kind: 'particles',
    dimension: 2,
    particles: [{ position: [0, 0], mass: 1 }, { position: [0, 0], mass: 1 }],
    forces: [],
    constraints: [{ type: 'distance', a: 0, b: 1, length: 0 }],
  };
  assert.throws(() => new ParticleSystem(zero), (e: Error) => e instanceof ParticleSystemError && /constraints\[0\]\.length: must be > 0/.test(e.message));
  // two particles on top of each other with a positive length: the run stops with the reason
  const coincident: ParticleSystemDesc = { ...zero, constraints: [{ type: 'distance', a: 0, b: 1, length: 0.5 }] };
  const solver = new WitkinSolver(coincident, feedback, 'rk4');
  const r = await runSolver(solver, coincident, { frames: 5 });
  assert.ok(r.diverged && /zero gradient/.test(r.diverged.reason), JSON.stringify(r.diverged));
  assert.equal(r.finalStateHash, null);
  // the bead at the wire's centre: a one-line input error from the command line, exit 2
  const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'run', '--scene', 'bead-on-wire', '--param', 'position=0,0', '--frames', '1'], { encoding: 'utf8' });
  assert.equal(cli.status, 2, cli.stderr);
  assert.match(cli.stderr.trim(), /^[^\n]*position: the bead is at the wire's centre[^\n]*$/);
});

test('particle scene files: export and load give the same system; a bad file names its fault', () => {
  const desc = bead({ radius: 2, position: [0, -2] });
  const text = anySceneFileJson(desc, { name: 'bead-on-wire', params: { radius: 2, position: [0, -2] } });
  const back = parseAnySceneFile(text);
  assert.deepEqual(back.world, desc);
  const file = join(dir, 'bad.json');
  const bad = JSON.parse(text);
  bad.constraints[0].radius = -1;
  writeFileSync(file, JSON.stringify(bad));
  assert.throws(() => parseAnySceneFile(readFileSync(file, 'utf8')), (e: Error) => e instanceof WorldError && e.message === 'constraints[0].radius: expected a number > 0, got -1');
  bad.constraints[0] = { type: 'distance', a: 0, b: 3, length: 1 };
  assert.throws(() => parseAnySceneFile(JSON.stringify(bad)), (e: Error) => e instanceof WorldError && /constraints\[0\]\.b: must be a particle index in 0\.\.0/.test(e.message));
  const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'run', '--scene', file, '--frames', '1'], { encoding: 'utf8' });
  assert.equal(cli.status, 2);
});

test('energy drift in % is refused where E₀ is rounding noise (both links horizontal: the potential datum), kept where E₀ is an energy', async () => {
  const { energyDriftPercent } = await import('../src/bench/results.js');
  const run = async (angle2: number) => {
    const desc = buildScene(doublePendulum, { angle1: Math.PI / 2, angle2 }) as ParticleSystemDesc;
    return runSolver(new WitkinSolver(desc, { feedbackStiffness: 100, feedbackDamping: 20 }, 'rk4'), desc, { frames: 60 });
  };
  // both particles at y = L cos(π/2) ≈ 6e-17 m: E₀ = −Σ m g·x is rounding, and ΔE/|E₀| would be ~1e15 %
  const flat = await run(Math.PI / 2);
  assert.ok(Math.abs(flat.initial.energy) < 1e-14, `E₀ = ${flat.initial.energy} J`);
  assert.ok(flat.energyScale > 10, `E_scale = ${flat.energyScale} J`);
  assert.equal(energyDriftPercent(flat), null);
  // RK4 holds the energy (the test above): the drift in J stays tiny all the same
  assert.ok(Math.abs(flat.final!.energy - flat.initial.energy) < 1e-3 * flat.energyScale);
  // the second link at π/4: E₀ = m₂ g y₂ = −m₂ g L₂ cos π/4, a real energy, and the % is (E − E₀)/|E₀|
  const bent = await run(Math.PI / 4);
  assert.ok(Math.abs(bent.initial.energy - -1 * 9.81 * Math.cos(Math.PI / 4)) < 1e-12, `E₀ = ${bent.initial.energy} J`);
  assert.equal(energyDriftPercent(bent), (100 * (bent.final!.energy - bent.initial.energy)) / Math.abs(bent.initial.energy));
});
