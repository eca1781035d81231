/**
 * What a run reports beyond the physics of one solver (src/run/run.ts, src/run/trajectory.ts):
 *   - divergence is a blow-up, not a bounded jump: the energy a position correction releases once
 *     (stretched-chain under xpbd-cpu and rapier) is a warning and the run goes on, to the rest
 *     state's energy; the warm-started Jacobi chain, whose energy keeps growing, is still stopped;
 *     the message's numbers compare as the numbers do;
 *   - `--divergence off|E[,V]` sets or turns off the watch;
 *   - `--trajectory FILE [--trajectory-every K]`: every body's state every K frames, CSV or JSON,
 *     streamed, exact (its last sample has the final state's hash), nothing written on a refusal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSolver, DivergenceWatch, energyScale, sceneExtent, formatCompared, GROWTH_RATIO } from '../src/run/run.js';
import { TrajectoryWriter, TRAJECTORY_CSV_HEADER } from '../src/run/trajectory.js';
import { clockText, progressText } from '../src/run/progress.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type Snapshot } from '../src/solvers/solver.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { stateHash } from '../src/metrics/hash.js';
import type { FrameMetrics } from '../src/metrics/frame-metrics.js';
import { mulberry32 } from './support/random.js';

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });
const dir = mkdtempSync(join(tmpdir(), 'solverlab-run-'));

async function run(scene: string, params: Record<string, number>, solverId: string, opts: Record<string, number>, frames: number, watch = true) {
  const { world } = loadRigidScene(scene, params);
  const info = findSolver(solverId)!;
  const solver = await info.create(world, resolveOptions(info, opts));
  try {
    return { world, result: await runSolver(solver, world, { frames, divergenceWatch: watch }) };
  } finally {
    solver.destroy();
  }
}

// --- divergence: a blow-up, not a bounded jump --------------------------------------------------

test('a one-time release is a jump, not divergence: stretched-chain (stretch 1.5) under xpbd-cpu and rapier runs on to the rest chain', async (t) => {
  // The chain starts with every joint open by 2 r (s − 1); closing them lifts bead k (k = 0 at the pin)
  // by (2k + 1) r (s − 1), so the chain at rest holds ΔE = Σ m g (2k + 1) r (s − 1) = m g r (s − 1) n²
  // more energy than at the start. The correction releases far more than that in its first frame
  // (kinetic energy), which the solver's damping and the joints then take out again.
  const n = 10, r = 0.05, density = 1000, g = 9.81;
  const m = density * (4 / 3) * Math.PI * r ** 3;
  for (const [solver, stretch] of [['xpbd-cpu', 1.5], ['rapier', 3]] as const) {
    const { result } = await run('stretched-chain', { stretch }, solver, {}, 600);
    assert.equal(result.diverged, null, `${solver}: ${result.diverged?.reason}`);
    assert.equal(result.frames, 600);
    assert.equal(result.jumps.length, 1, JSON.stringify(result.jumps));
    const j = result.jumps[0];
    assert.equal(j.quantity, 'energy');
    // the jump is the run's own figure: E − E₀ at its frame, beyond the bound 10 E_scale, in the first frames
    const at = result.series.find((p) => p.frame === j.frame)!;
    assert.equal(j.size, at.energy - result.initial.energy);
    assert.ok(j.size > j.bound && Math.abs(j.bound - 10 * result.energyScale) <= 1e-9 * j.bound);
    assert.ok(j.frame <= 5, `${solver}: jump at frame ${j.frame}`);
    // and then bounded: the excess ends far below the bound
    const endExcess = result.final!.energy - result.initial.energy;
    assert.ok(endExcess < 0.1 * j.bound, `${solver}: E − E₀ at the end ${endExcess} J`);
    // the rest chain's energy: m g r (s − 1) n², to the residual kinetic energy and joint drift
    const restGain = m * g * r * (stretch - 1) * n * n;
    t.diagnostic(`${solver} stretch ${stretch}: jump ${j.size.toFixed(0)} J at frame ${j.frame} (bound ${j.bound.toFixed(0)} J), E − E₀ at the end ${endExcess.toFixed(2)} J, rest chain m g r (s − 1) n² = ${restGain.toFixed(2)} J`);
    assert.ok(Math.abs(endExcess / restGain - 1) < 0.02, `E − E₀ = ${endExcess} J, rest chain gains ${restGain} J`);
    assert.ok(result.final!.maxViolation < 1e-3);
  }
});

test('a blow-up is still caught: the warm-started 10-bead chain under jacobi-cpu at 8 iterations, and the message says the numbers that triggered it', async (t) => {
  const { result } = await run('hanging-chain', { beads: 10 }, 'jacobi-cpu', { iterations: 8, warmStart: 1 }, 600);
  const d = result.diverged;
  assert.ok(d, 'expected divergence');
  t.diagnostic(`frame ${d.frame}: ${d.reason}`);
  // "runaway energy: E − E₀ = X J beyond the bound B J (10 E_scale), and growing: its peaks … p0 → p1 → p2 → p3 J"
  const m = /^runaway energy: E − E₀ = (\S+) J beyond the bound (\S+) J \(10 E_scale\), and growing: its peaks in the last 4 sampled 20-frame windows (.+) J$/.exec(d.reason);
  assert.ok(m, d.reason);
  const shown = Number(m[1]), bound = Number(m[2]);
  assert.ok(shown > bound, `shown ${m[1]} is not beyond the shown bound ${m[2]}`);
  const peaks = m[3].split(' → ').map(Number);
  assert.equal(peaks.length, 4);
  for (let i = 1; i < 4; i++) assert.ok(peaks[i] > GROWTH_RATIO * peaks[i - 1], `peaks ${m[3]}`);
  assert.equal(peaks[3], shown, 'the last peak is the sample that stopped the run');
  assert.ok(Math.abs(bound / (10 * result.energyScale) - 1) < 5e-3);
  assert.deepEqual(result.jumps, [], 'the excursion that grew into the blow-up is not a jump');
  // that it was a blow-up: unwatched, the same run keeps growing, to ~1e14 E_scale by frame 600
  const { result: free } = await run('hanging-chain', { beads: 10 }, 'jacobi-cpu', { iterations: 8, warmStart: 1 }, 600, false);
  assert.equal(free.diverged, null);
  const excess = (free.final!.energy - free.initial.energy) / free.energyScale;
  assert.ok(excess > 1e10, `unwatched E − E₀ at frame 600: ${excess} E_scale`);
  t.diagnostic(`unwatched: E − E₀ = ${excess.toExponential(2)} E_scale at frame 600`);
});

/** Metrics of a state with energy E (the rest made up): what the watch reads. */
function metricsAt(t: number, energy: number, maxViolation = 0): FrameMetrics {
  return { t, energy, maxViolation, rmsViolation: maxViolation, kinetic: 0, potential: energy, elastic: 0, momentum: [0, 0, 0], angularMomentum: [0, 0, 0], finite: true };
}

test('DivergenceWatch: a jump that stays (energy conserved after it) is no divergence; growth by ×1.5 per 20 frames (oscillating) is, found while finite, and so is a torn-off body falling', () => {
  const { world } = loadRigidScene('pendulum');
  const initial = metricsAt(0, 1);
  const scale = energyScale(world, initial);
  const rand = mulberry32(7);
  // a release of 50 E_scale at frame 3, then kept to rounding (relative 1e-12) for 10,000 frames, from a
  // start with a joint open by 0.1 m (an error a correction may release)
  const opened = metricsAt(0, 1, 0.1);
  const kept = new DivergenceWatch(world, opened);
  for (let f = 1; f <= 10_000; f++) {
    const excess = f < 3 ? 0 : 50 * scale * (1 + 1e-12 * (rand() - 0.5));
    assert.equal(kept.check(metricsAt(f / 60, 1 + excess), f), null, `frame ${f}`);
  }
  // the same jump from an exact start (every joint satisfied, no contacts): nothing to release, divergence at once
  const exact = new DivergenceWatch(world, initial);
  let gained: string | null = null;
  for (let f = 1; f <= 10 && !gained; f++) gained = exact.check(metricsAt(f / 60, 1 + (f < 3 ? 0 : 50 * scale)), f);
  assert.match(gained ?? '', /^runaway energy: .* from a start with every joint satisfied and nothing touching/);
  const [j] = kept.jumps();
  assert.equal(j.firstFrame, 3);
  assert.ok(j.size >= 50 * scale * (1 - 1e-11));
  // slow oscillating growth, ×1.5 per 20 frames with the energy swinging through zero each 6 frames
  const growing = new DivergenceWatch(world, initial);
  let stopped = 0;
  for (let f = 1; f <= 2000 && !stopped; f++) {
    const excess = scale * 0.01 * 1.5 ** (f / 20) * Math.abs(Math.sin((Math.PI * f) / 6));
    if (growing.check(metricsAt(f / 60, 1 + excess), f)) stopped = f;
  }
  const crossing = 20 * Math.log(10 / 0.01) / Math.log(1.5); // envelope reaches 10 E_scale near frame 341
  assert.ok(stopped > 0 && stopped < crossing + 25, `stopped at frame ${stopped}, envelope crosses the bound at ${crossing.toFixed(0)}`);
  // the viewer calls check(m) without a frame: each call is the next frame
  const viewer = new DivergenceWatch(world, initial);
  let viewerStopped = 0;
  for (let f = 1; f <= 2000 && !viewerStopped; f++) {
    const excess = scale * 0.01 * 1.5 ** (f / 20) * Math.abs(Math.sin((Math.PI * f) / 6));
    if (viewer.check(metricsAt(f / 60, 1 + excess))) viewerStopped = f;
  }
  assert.equal(viewerStopped, stopped);
  // a body torn off and falling: its violation ½ g t² grows slower than geometrically, ×(1 + 1/n)² in
  // window n, and keeps growing: caught as it passes the bound 100 × the scene's size
  const falling = new DivergenceWatch(world, initial);
  const bound = 100 * sceneExtent(world);
  const crossingFrame = 60 * Math.sqrt((2 * bound) / 9.81);
  let fell = 0, why = '';
  for (let f = 1; f <= 5000 && !fell; f++) {
    const r = falling.check(metricsAt(f / 60, 1, 0.5 * 9.81 * (f / 60) ** 2), f);
    if (r) [fell, why] = [f, r];
  }
  assert.ok(fell >= crossingFrame && fell <= crossingFrame + 1, `stopped at frame ${fell}, the violation passes ${bound} m at frame ${crossingFrame.toFixed(1)}`);
  assert.match(why, /^constraints torn apart: max violation = \S+ m beyond the bound \S+ m \(100 scene sizes\), and growing: its peaks in the last 8 sampled 20-frame windows /);
  assert.deepEqual(falling.jumps(), []);
  // off: only a state that is not finite stops it
  const off = new DivergenceWatch(world, initial, 10, 100, false);
  assert.equal(off.check(metricsAt(1, 1e300), 1), null);
  assert.match(off.check({ ...metricsAt(2, 1), finite: false }, 2)!, /not finite/);
});

/*
 * (d) holds for an f32 solver too (run.ts RELEASE_FREE_VIOLATION): an exact start read back in f32 has joint
 * errors of a few 2⁻²⁴ of the scene's size, no correction to release (closed in one step of h = 1/480 s, an
 * error of 1e-7 of a 2 m scene leaves 4e-4 m/s, against the √(20 |g| extent) ≈ 6 m/s it would take to pass
 * the bound); a start open by 1e-4 of the scene (0.2 mm) may still release, as before.
 */
test('DivergenceWatch: a start exact to f32 rounding has nothing to release: energy beyond the bound is divergence at once; a start open by 1e-4 of the scene still releases', () => {
  const { world } = loadRigidScene('pendulum');
  const extent = sceneExtent(world);
  const scale = energyScale(world, metricsAt(0, 1));
  const jumpAt = (violation: number) => {
    const watch = new DivergenceWatch(world, metricsAt(0, 1, violation * extent));
    let reason: string | null = null, frame = 0;
    for (let f = 1; f <= 10 && !reason; f++) (reason = watch.check(metricsAt(f / 60, 1 + (f < 3 ? 0 : 50 * scale)), f)), (frame = f);
    return { reason, frame, jumps: watch.jumps() };
  };
  for (const rounding of [6e-8, 3e-7]) {
    const r = jumpAt(rounding);
    assert.equal(r.frame, 3, `start off by ${rounding} of the scene: stopped at frame ${r.frame}`);
    assert.match(r.reason ?? '', /from a start with every joint satisfied and nothing touching/);
  }
  const opened = jumpAt(1e-4);
  assert.equal(opened.reason, null);
  assert.equal(opened.jumps.length, 1);
});

/*
 * rapier-multibody on the 50,000 : 1 pendulum (Rapier's own limit, docs/solvers.md): E rises ×1000 in the
 * first frame from a start with every joint satisfied (its f32 read-back: 7.3e-8 m). The watch stops it
 * there with (d)'s reason and reports no one-time jump (it had called frame 1 a correction's release,
 * "not divergence", then stopped the run at frame 4 by the ceiling). Two frames.
 */
test('rapier-multibody: the mass-ratio pendulum\'s blow-up is divergence at frame 1, not a release', async () => {
  const { result } = await run('mass-ratio-pendulum', {}, 'rapier-multibody', {}, 10);
  assert.ok(result.initial.maxViolation < 1e-6 * sceneExtent(loadRigidScene('mass-ratio-pendulum').world), `start |C| ${result.initial.maxViolation} m`);
  assert.equal(result.diverged?.frame, 1, JSON.stringify(result.diverged));
  assert.match(result.diverged!.reason, /^runaway energy: .* from a start with every joint satisfied and nothing touching/);
  assert.deepEqual(result.jumps, []);
});

test('formatCompared: the numbers shown compare as the numbers do (never "5.477e+1 m beyond 5.48e+1 m")', () => {
  assert.equal(formatCompared(54.77, 54.75), '54.77');
  assert.equal(formatCompared(54.75, 54.77), '54.75');
  const rand = mulberry32(11);
  for (let i = 0; i < 2000; i++) {
    const a = 10 ** (12 * rand() - 6) * (rand() < 0.1 ? -1 : 1);
    const b = a * (1 + 10 ** (-14 * rand()) * (rand() - 0.5));
    if (a === b) continue;
    const as = formatCompared(a, b), bs = formatCompared(b, a);
    assert.equal(Math.sign(Number(as) - Number(bs)), Math.sign(a - b), `${a} shown ${as}, ${b} shown ${bs}`);
  }
});

test('CLI: a release prints a warning line with its size and frame and the run goes on (exit 0); --divergence 100 raises the bound past it', () => {
  const json = join(dir, 'release.json');
  const r = cli('run', '--scene', 'stretched-chain', '--param', 'stretch=1.5', '--solver', 'xpbd-cpu', '--frames', '600', '--quiet', '--json', json);
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /DIVERGED/);
  const line = r.stdout.split('\n').find((l) => l.startsWith('warning'));
  assert.ok(line, r.stdout);
  const m = /energy jumped: E − E₀ = (\S+) J at frame 1, t = \S+ s, beyond the divergence bound (\S+) J/.exec(line);
  assert.ok(m, line);
  assert.ok(Number(m[1]) > Number(m[2]));
  const j = JSON.parse(readFileSync(json, 'utf8'));
  assert.equal(j.frames, 600);
  assert.equal(j.jumps.length, 1);
  assert.equal(j.jumps[0].frame, 1);
  assert.ok(Math.abs(j.jumps[0].size / Number(m[1]) - 1) < 5e-3);
  const raised = cli('run', '--scene', 'stretched-chain', '--param', 'stretch=1.5', '--solver', 'xpbd-cpu', '--frames', '60', '--quiet', '--divergence', '100');
  assert.equal(raised.status, 0, raised.stderr);
  assert.doesNotMatch(raised.stdout, /^warning/m);
});

test('CLI: the Jacobi chain diverges (exit 3) with numbers that agree; --divergence off runs it to the end (exit 0)', () => {
  const args = ['run', '--scene', 'hanging-chain', '--param', 'beads=10', '--solver', 'jacobi-cpu', '--iterations', '8', '--warm-start', '1', '--frames', '600', '--quiet'];
  const r = cli(...args);
  assert.equal(r.status, 3, r.stderr);
  const m = /DIVERGED\s+at frame (\d+) .*E − E₀ = (\S+) J beyond the bound (\S+) J/.exec(r.stdout);
  assert.ok(m, r.stdout);
  assert.ok(Number(m[2]) > Number(m[3]), `${m[2]} beyond ${m[3]}`);
  const off = cli(...args, '--divergence', 'off');
  assert.equal(off.status, 0, off.stderr);
  assert.match(off.stdout, /^frames\s+600 /m);
  for (const [bad, message] of [['0', /must be > 0/], ['x', /must be a number/], ['1,2,3', /expects off, E or E,V/]] as const) {
    const b = cli('run', '--scene', 'pendulum', '--solver', 'jacobi-cpu', '--divergence', bad);
    assert.equal(b.status, 2);
    assert.equal(b.stderr.trim().split('\n').length, 1, b.stderr);
    assert.match(b.stderr, message);
  }
});

// --- trajectories --------------------------------------------------------------------------------

/** The samples of a trajectory CSV, as snapshots. */
function readCsv(text: string): Snapshot[] {
  const [header, ...rows] = text.trimEnd().split('\n');
  assert.equal(header, TRAJECTORY_CSV_HEADER);
  const byFrame = new Map<number, number[][]>();
  for (const row of rows) {
    const v = row.split(',').map(Number);
    assert.equal(v.length, 16, row);
    const list = byFrame.get(v[0]) ?? [];
    list.push(v);
    byFrame.set(v[0], list);
  }
  return [...byFrame.entries()].map(([frame, list]) => {
    const n = list.length;
    const snap: Snapshot = { frame, time: list[0][1], bodyCount: n, position: new Float64Array(3 * n), orientation: new Float64Array(4 * n), linearVelocity: new Float64Array(3 * n), angularVelocity: new Float64Array(3 * n) };
    list.forEach((v, k) => {
      assert.equal(v[2], k, 'bodies in order');
      snap.position.set(v.slice(3, 6), 3 * k);
      snap.orientation.set(v.slice(6, 10), 4 * k);
      snap.linearVelocity.set(v.slice(10, 13), 3 * k);
      snap.angularVelocity.set(v.slice(13, 16), 3 * k);
    });
    return snap;
  });
}

test('CLI --trajectory: the CSV has every body every K frames and the last frame, whose state hash is the final state\'s; the JSON parses to the same numbers', () => {
  const csv = join(dir, 'chain.csv'), json = join(dir, 'chain.json'), record = join(dir, 'chain-run.json');
  const common = ['run', '--scene', 'long-chain', '--param', 'beads=5', '--param', 'angle=0.4', '--solver', 'gs-cpu', '--frames', '100', '--trajectory-every', '7', '--quiet'];
  const r = cli(...common, '--trajectory', csv, '--json', record);
  assert.equal(r.status, 0, r.stderr);
  const samples = readCsv(readFileSync(csv, 'utf8'));
  assert.deepEqual(samples.map((s) => s.frame), [0, 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98, 100]);
  for (const s of samples) {
    assert.equal(s.bodyCount, 5);
    assert.ok(Math.abs(s.time - s.frame / 60) <= 1e-12, `t ${s.time} at frame ${s.frame}`);
    for (let k = 0; k < 5; k++) {
      const q = s.orientation.subarray(4 * k, 4 * k + 4);
      assert.ok(Math.abs(Math.hypot(...q) - 1) < 1e-12, 'unit quaternions');
    }
  }
  const run = JSON.parse(readFileSync(record, 'utf8'));
  assert.equal(stateHash(samples.at(-1)!), run.finalStateHash, 'the last sample is the final state, bit for bit');
  assert.notEqual(stateHash(samples[0]), run.finalStateHash);
  // the chain moved: positions of the first and last sample differ
  assert.ok(Math.abs(samples[0].position[12] - samples.at(-1)!.position[12]) > 1e-3);

  const j = cli(...common, '--trajectory', json);
  assert.equal(j.status, 0, j.stderr);
  const t = JSON.parse(readFileSync(json, 'utf8'));
  assert.equal(t.bodies, 5);
  assert.equal(t.every, 7);
  assert.equal(t.samples.length, samples.length);
  for (const [i, s] of t.samples.entries()) {
    assert.equal(s.frame, samples[i].frame);
    assert.deepEqual(s.position.flat(), [...samples[i].position]);
    assert.deepEqual(s.orientation.flat(), [...samples[i].orientation]);
    assert.deepEqual(s.linearVelocity.flat(), [...samples[i].linearVelocity]);
    assert.deepEqual(s.angularVelocity.flat(), [...samples[i].angularVelocity]);
  }
});

test('CLI --trajectory: bad input is one line, exit 2, and writes nothing', () => {
  const sub = mkdtempSync(join(dir, 'refused-'));
  const cases: [string[], RegExp][] = [
    [['--trajectory', join(sub, 'out.txt')], /must end in \.csv or \.json/],
    [['--trajectory', join(sub, 'out')], /must end in \.csv or \.json/],
    [['--trajectory', join(sub, 'no/such/out.csv')], /does not exist/],
    [['--trajectory', join(sub, 'out.csv'), '--trajectory-every', '0'], /--trajectory-every must be ≥ 1/],
    [['--trajectory', join(sub, 'out.csv'), '--trajectory-every', '2.5'], /must be an integer/],
    [['--trajectory-every', '3'], /--trajectory-every goes with --trajectory/],
    [['--trajectory', join(sub, 'out.json'), '--json', join(sub, 'out.json')], /same file/],
    // refused after the solver is made: still nothing written
    [['--trajectory', join(sub, 'out.csv'), '--residuals', '3', '--solver', 'rapier'], /does not report residuals/],
  ];
  for (const [args, message] of cases) {
    const r = cli('run', '--scene', 'pendulum', '--frames', '10', ...(args.includes('--solver') ? [] : ['--solver', 'xpbd-cpu']), ...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], message);
    assert.deepEqual(readdirSync(sub), [], `${args.join(' ')} left ${readdirSync(sub)}`);
  }
});

test('TrajectoryWriter: streamed to a temporary file as the samples come, moved into place at close; abort leaves nothing', () => {
  const path = join(dir, 'stream.csv');
  const n = 3;
  const snap = (frame: number): Snapshot => ({
    frame, time: frame / 60, bodyCount: n,
    position: Float64Array.from({ length: 3 * n }, (_, i) => frame + i * 0.1),
    orientation: Float64Array.from({ length: 4 * n }, (_, i) => (i % 4 === 3 ? 1 : i % 4 === 1 ? -0 : 0)),
    linearVelocity: new Float64Array(3 * n).fill(1 / 3),
    angularVelocity: new Float64Array(3 * n).fill(-1e-300),
  });
  const w = new TrajectoryWriter(path, 'csv', { scene: 's', solver: 'x', dt: 1 / 60, every: 1 });
  const tmp = `${path}.${process.pid}.tmp`;
  let size = 0;
  for (let f = 0; f < 5; f++) {
    w.write(snap(f));
    const now = statSync(tmp).size;
    assert.ok(now > size, 'each sample is on disk when written');
    size = now;
    assert.equal(existsSync(path), false, 'not in place before the run ends');
  }
  w.close();
  assert.equal(existsSync(tmp), false);
  const back = readCsv(readFileSync(path, 'utf8'));
  assert.equal(back.length, 5);
  assert.equal(stateHash(back[4]), stateHash(snap(4)), 'exact, −0 and 1e-300 included');
  const aborted = join(dir, 'aborted.json');
  const a = new TrajectoryWriter(aborted, 'json', { scene: 's', solver: 'x', dt: 1 / 60, every: 1 });
  a.write(snap(0));
  a.abort();
  assert.equal(existsSync(aborted), false);
  assert.equal(existsSync(`${aborted}.${process.pid}.tmp`), false);
});

// --- progress on a terminal ----------------------------------------------------------------------

test('progressText: frames, elapsed, and the time left from the mean time per frame less the frame under way', () => {
  assert.equal(clockText(3_725_000), '1:02:05');
  assert.equal(clockText(59_600), '1:00');
  assert.equal(progressText(0, 600, 5_000, 0), '[........................] 0/600 frames · elapsed 0:05 · time left: after the first frame');
  // 150 frames in 30 s: 0.2 s a frame, 450 left = 90 s; 4 s into the next frame: 86 s
  assert.equal(progressText(150, 600, 30_000, 30_000), '[######..................] 150/600 frames · elapsed 0:30 · about 1:30 left');
  assert.equal(progressText(150, 600, 34_000, 30_000), '[######..................] 150/600 frames · elapsed 0:34 · about 1:26 left');
  assert.match(progressText(1_000_000, 1_000_000, 3_600_000, 3_600_000), /^\[#{24}\] 1,000,000\/1,000,000 frames · elapsed 1:00:00 · done$/);
});

const haveScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/** Substeps of the one-body pendulum under xpbd-cpu that take about `ms` for one frame on this machine. */
async function substepsFor(ms: number): Promise<number> {
  const { world } = loadRigidScene('pendulum');
  const info = findSolver('xpbd-cpu')!;
  const substeps = 1_000_000;
  const solver = await info.create(world, resolveOptions(info, { substeps }));
  const t0 = performance.now();
  await solver.step(1);
  const took = performance.now() - t0;
  solver.destroy();
  return Math.ceil((substeps * ms) / took);
}

/** The command line of a CLI run in a pseudo-terminal (util-linux `script`): stdout and stderr are a TTY. */
function inTerminal(args: string[], wrap = ''): { status: number | null; text: string; ms: number } {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `${wrap}${[process.execPath, '--import', 'tsx', 'src/cli/bin.ts', ...args].map(quote).join(' ')}`;
  const t0 = Date.now();
  const r = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8' });
  return { status: r.status, text: r.stdout, ms: Date.now() - t0 };
}

test('progress: on a terminal a long run shows frames, elapsed and time left, even inside one long frame, and erases it before the summary; never when piped or --quiet', { skip: !haveScript && 'util-linux script is not installed' }, async (t) => {
  // one frame of ~10 s: the bar must appear before it ends (from 2 s), with room for the calibration to
  // overestimate the time per substep up to 4× (it runs in this process, under whatever load there is)
  const substeps = await substepsFor(10_000);
  const args = ['run', '--scene', 'pendulum', '--solver', 'xpbd-cpu', '--substeps', String(substeps), '--frames', '1'];
  const tty = inTerminal(args);
  assert.equal(tty.status, 0, tty.text);
  t.diagnostic(`${substeps} substeps, ${tty.ms} ms`);
  assert.match(tty.text, /\r\[\.{24}\] 0\/1 frames · elapsed \d+:\d\d · time left: after the first frame\x1b\[K/, `a bar inside the first frame: ${JSON.stringify(tty.text)}`);
  assert.match(tty.text, /\r\x1b\[Kscene {7}pendulum/, `erased before the summary: ${JSON.stringify(tty.text)}`);
  // piped: the same run draws nothing
  const piped = cli(...args);
  assert.equal(piped.status, 0, piped.stderr);
  assert.doesNotMatch(piped.stderr, /\r|frames ·/);
  assert.doesNotMatch(piped.stdout, /\r|frames ·/);
  const quiet = inTerminal([...args, '--quiet']);
  assert.equal(quiet.status, 0, quiet.text);
  assert.doesNotMatch(quiet.text, /frames ·/);
});

test('progress: Ctrl-C (SIGINT) stops a run inside a long frame at once, as without the bar', { skip: !haveScript && 'util-linux script is not installed' }, async () => {
  const substeps = await substepsFor(30_000); // a frame of ~30 s, interrupted once the bar is up
  const quote = (x: string) => `'${x.replace(/'/g, `'\\''`)}'`;
  const args = [process.execPath, '--import', 'tsx', 'src/cli/bin.ts', 'run', '--scene', 'pendulum', '--solver', 'xpbd-cpu', '--substeps', String(substeps), '--frames', '5'];
  // the shell prints its pid and becomes the CLI (exec), so the signal goes to the CLI itself
  const child = spawn('script', ['-qec', `echo PID:$$; exec ${args.map(quote).join(' ')}`, '/dev/null'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  let interruptedAt = 0;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    text += chunk;
    const pid = /PID:(\d+)/.exec(text)?.[1];
    if (!interruptedAt && pid && /0\/5 frames · elapsed/.test(text)) {
      interruptedAt = Date.now();
      process.kill(Number(pid), 'SIGINT');
    }
  });
  const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  assert.ok(interruptedAt, `no bar drawn: ${text}`);
  const took = Date.now() - interruptedAt;
  assert.equal(status, 130, `status ${status}: ${text}`); // 128 + SIGINT
  assert.ok(took < 2000, `stopped ${took} ms after Ctrl-C, inside a frame of ~30 s`);
  assert.doesNotMatch(text, /\n\s+at /, 'no stack trace');
});
