/**
 * `solverlab compare`: the matrix runs, its files agree with each other and with
 * `run`, a --param goes only to the scenes that have it, and what cannot run is
 * reported as skipped with its reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompareResults, RunRecord, SkippedRun } from '../src/bench/results.js';
import { findSolver } from '../src/solvers/registry.js';
import { formatNumber, countText } from '../src/bench/table.js';
import { jointSceneFile } from './support/hinge-scene.js';

const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
const dir = mkdtempSync(join(tmpdir(), 'solverlab-compare-'));

test('compare: the matrix, its table, results.json and results.csv agree with one another and with run', () => {
  const out = join(dir, 'a');
  const r = cli(['compare', '--scenes', 'pendulum,hanging-chain', '--solvers', 'jacobi-cpu,jacobi-gpu', '--frames', '20', '--param', 'beads=3', '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResults;
  assert.deepEqual(results.scenes, ['pendulum', 'hanging-chain']);
  assert.equal(results.runs.length, 4);
  const runs = results.runs as RunRecord[];
  // --param beads=3 went to hanging-chain only
  assert.equal(runs.find((x) => x.scene === 'hanging-chain')!.params.beads, 3);
  assert.ok(!('beads' in runs.find((x) => x.scene === 'pendulum')!.params));
  assert.equal(runs.find((x) => x.scene === 'hanging-chain')!.bodies, 3);
  for (const run of runs) {
    assert.equal(run.frames, 20);
    assert.equal(run.timing.msPerFrame.length, 19, 'one timed frame per step, the residual frame untimed');
    assert.ok(run.residuals && run.residuals.frame === 10, 'residuals at frames / 2 by default');
    assert.equal(run.residuals!.channels.point.length, 9);
    assert.equal(run.cost.rowSolvesPerFrame, 3 * run.constraints * 8);
    if (run.solver === 'jacobi-cpu') assert.equal(run.stepsPerSecondRatio, 1);
  }
  // the same run through `run` gives the same final state, bit for bit
  const single = cli(['run', '--scene', 'hanging-chain', '--param', 'beads=3', '--solver', 'jacobi-cpu', '--frames', '20', '--residuals', '10', '--quiet']);
  assert.equal(single.status, 0, single.stderr);
  const hash = runs.find((x) => x.scene === 'hanging-chain' && x.solver === 'jacobi-cpu')!.finalStateHash!;
  assert.ok(single.stdout.includes(`state hash  ${hash}`), `run and compare disagree:\n${single.stdout}\ncompare: ${hash}`);
  // the CSV: a header and one line per run, the same figures
  const csv = readFileSync(join(out, 'results.csv'), 'utf8').trim().split('\n');
  assert.equal(csv.length, 5);
  const head = csv[0].split(',');
  const col = (name: string) => head.indexOf(name);
  for (const name of ['steps_per_s', 'median_ms', 'p95_ms', 'final_max_violation_m', 'worst_max_violation_m', 'energy_drift_percent', 'steps_per_s_ratio_to_first'])
    assert.ok(col(name) >= 0, name);
  const line = csv.find((l) => l.startsWith('hanging-chain,') && l.includes(',jacobi-cpu,'))!.split(',');
  const rec = runs.find((x) => x.scene === 'hanging-chain' && x.solver === 'jacobi-cpu')!;
  assert.equal(Number(line[col('worst_max_violation_m')]), rec.violation.worstMax);
  // the printed table: a header and one row per run
  const table = r.stdout.trim().split('\n');
  assert.match(table[0], /scene +solver +it×sub +steps\/s +median ms +p95 ms/);
  assert.equal(table.filter((l) => /^(pendulum|hanging-chain) /.test(l)).length, 4);
  assert.ok(existsSync(join(out, 'report.html')));
});

test('compare: a solver that cannot run is skipped with the reason; the others still run', () => {
  const out = join(dir, 'b');
  const r = cli(['compare', '--scenes', 'pendulum', '--solvers', 'jacobi-gpu,jacobi-cpu', '--frames', '5', '--out', out], {
    VK_ICD_FILENAMES: '/nonexistent/icd.json',
  });
  assert.equal(r.status, 0, r.stderr);
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResults;
  const gpu = results.runs.find((x) => x.solver === 'jacobi-gpu') as SkippedRun;
  assert.match(gpu.skipped, /no WebGPU adapter/);
  const cpu = results.runs.find((x) => x.solver === 'jacobi-cpu') as RunRecord;
  assert.equal(cpu.frames, 5);
  assert.equal(cpu.stepsPerSecondRatio, null, 'the first solver did not run: no ratio');
  assert.match(r.stdout, /↳ jacobi-gpu on pendulum: skipped: no WebGPU adapter/);
});

test('compare: bad input is one line, exit status 2, nothing written', () => {
  const cases: [string[], RegExp][] = [
    [['--scenes', 'pendulum,hanging-chain', '--solvers', 'jacobi-cpu', '--param', 'chains=3'], /none of the chosen scenes .* has a parameter 'chains'/],
    [['--scenes', 'pendulum', '--solvers', 'jacobi-cpu,nope'], /unknown solver 'nope'/],
    [['--scenes', 'pendulum,nope', '--solvers', 'jacobi-cpu'], /unknown scene 'nope'/],
    [['--scenes', 'pendulum,pendulum', '--solvers', 'jacobi-cpu'], /'pendulum' is listed twice/],
    [['--scenes', 'pendulum', '--solvers', 'jacobi-cpu', '--param', 'angle=9'], /'angle' must be ≤/],
    [['--solvers', 'jacobi-cpu'], /compare needs --scenes/],
  ];
  for (const [args, message] of cases) {
    const out = join(dir, 'bad');
    const r = cli(['compare', ...args, '--frames', '5', '--out', out]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], message);
    assert.ok(!existsSync(out), 'nothing written');
  }
});

test('compare: solves to a tolerance are counted, and the unconverged ones show in the table, results.csv and results.json', () => {
  // global-cpu on a chain: every step's system has a solution and CG reaches 1e-10 (0 unconverged). On the
  // 20 × 20 joint grid the steps after the first are near-singular (a nearly flat net: hundreds of eigenvalues
  // of A between 1e-12 and 1e-4 of its largest), and neither CG nor MINRES reaches the tolerance within the
  // cap: genuinely unconverged, not a cap set low for the test. jacobi-cpu counts nothing: a blank cell.
  const out = join(dir, 'unconverged');
  const r = cli(['compare', '--scenes', 'hanging-chain,joint-grid', '--solvers', 'global-cpu,jacobi-cpu', '--frames', '3', '--param', 'beads=3', '--param', 'columns=20', '--param', 'rows=20', '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const runs = (JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResults).runs as RunRecord[];
  const get = (scene: string, solver: string) => runs.find((x) => x.scene === scene && x.solver === solver)!;
  assert.deepEqual([get('hanging-chain', 'global-cpu').cost.solves, get('hanging-chain', 'global-cpu').cost.unconvergedSolves], [3, 0]);
  const grid = get('joint-grid', 'global-cpu');
  assert.equal(grid.cost.solves, 3);
  // the nearly singular grid that CG left unconverged: the direct LDLᵀ solve meets the tolerance every step
  assert.equal(grid.cost.unconvergedSolves, 0);
  assert.equal(get('joint-grid', 'jacobi-cpu').cost.solves, undefined);
  assert.equal(grid.iterationMode, 'direct');
  // the table: an unconv. column, and it×sub says what global-cpu does (a direct solve, not 8 sweeps)
  const table = r.stdout.split('\n');
  const head = table[0].split(/ {2,}/);
  const cell = (scene: string, solver: string, column: string) => table.find((l) => l.startsWith(scene) && l.includes(` ${solver} `))!.trim().split(/ {2,}/)[head.indexOf(column)];
  assert.equal(cell('joint-grid', 'global-cpu', 'unconv.'), `${grid.cost.unconvergedSolves}/3`);
  assert.equal(cell('hanging-chain', 'global-cpu', 'unconv.'), '0/3');
  assert.equal(cell('hanging-chain', 'jacobi-cpu', 'unconv.'), '—');
  assert.equal(cell('joint-grid', 'global-cpu', 'it×sub'), 'LDLᵀ×1');
  assert.equal(cell('joint-grid', 'jacobi-cpu', 'it×sub'), '8×1');
  // the CSV: the counts in their own columns, empty for jacobi-cpu
  const csv = readFileSync(join(out, 'results.csv'), 'utf8').trim().split('\n').map((l) => l.split(','));
  const col = (name: string) => csv[0].indexOf(name);
  const line = (scene: string, solver: string) => csv.find((l) => l[0] === scene && l[2] === solver)!;
  assert.equal(line('joint-grid', 'global-cpu')[col('unconverged_solves')], String(grid.cost.unconvergedSolves));
  assert.equal(line('joint-grid', 'global-cpu')[col('solves')], '3');
  assert.equal(line('joint-grid', 'jacobi-cpu')[col('unconverged_solves')], '');
  // `run` says it in its cost line
  const single = cli(['run', '--scene', 'hanging-chain', '--param', 'beads=3', '--solver', 'global-cpu', '--frames', '3', '--quiet']);
  assert.equal(single.status, 0, single.stderr);
  assert.match(single.stdout, /cost .* · all 3 solves converged/);
  // the column is left out of a table where no solver counts solves
  const plain = cli(['compare', '--scenes', 'pendulum', '--solvers', 'jacobi-cpu', '--frames', '3', '--out', join(out, 'plain')]);
  assert.equal(plain.status, 0, plain.stderr);
  assert.doesNotMatch(plain.stdout.split('\n')[0], /unconv\./);
});

test('compare: global-gpu at an iteration cap too low for its tolerance reports every solve unconverged; at its default, none', () => {
  // a chain created at 1.2 × its spacing: each step's CG needs more than 2 iterations to reach ‖r‖ ≤ 1e-6 ‖b‖
  const out = join(dir, 'gpu-cap-');
  const counts = (iterations: number) => {
    const r = cli(['compare', '--scenes', 'stretched-chain', '--solvers', 'global-gpu', '--frames', '3', '--param', 'stretch=1.2', '--iterations', String(iterations), '--out', out + iterations]);
    assert.equal(r.status, 0, r.stderr);
    const run = (JSON.parse(readFileSync(join(out + iterations, 'results.json'), 'utf8')) as CompareResults).runs[0] as RunRecord;
    assert.ok(!('skipped' in run), `skipped: ${(run as unknown as SkippedRun).skipped}`);
    assert.match(r.stdout, new RegExp(`CG≤${iterations}×1`));
    return [run.cost.unconvergedSolves, run.cost.solves];
  };
  assert.deepEqual(counts(2), [3, 3]);
  assert.deepEqual(counts(64), [0, 3]);
});

test('compare: each run shows only the options its solver reads (table, CSV); skip reasons come from the declarations; one number style', () => {
  const out = join(dir, 'declared');
  // a scene file with a distance joint: a solver that does not declare it (rapier-multibody) is skipped with the reason its declaration gives
  const hinge = join(dir, 'joint.json');
  writeFileSync(hinge, JSON.stringify(jointSceneFile('distance')));
  const ids = ['jacobi-cpu', 'global-cpu', 'rapier-multibody'];
  const r = cli(['compare', '--scenes', `pendulum,${hinge}`, '--solvers', ids.join(','), '--frames', '30', '--out', out, '--quiet']);
  assert.equal(r.status, 0, r.stderr);
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResults;
  for (const id of ids) {
    const run = results.runs.find((x) => x.scene === 'joint' && x.solver === id)!;
    if (findSolver(id)!.supports!.constraints.includes('distance')) continue;
    assert.equal((run as SkippedRun).skipped, `${id} does not support distance joints (constraints[1])`);
  }
  // results.csv: an option's column is empty where the run's solver does not read it
  const csv = readFileSync(join(out, 'results.csv'), 'utf8').trim().split('\n').map((l) => l.split(','));
  const head = csv[0];
  const cell = (solver: string, name: string) => {
    const row = csv.find((l) => l[0] === 'pendulum' && l[2] === solver)!;
    assert.ok(head.includes(name), name);
    return row[head.indexOf(name)];
  };
  assert.equal(cell('jacobi-cpu', 'iterations'), '8');
  assert.equal(cell('jacobi-cpu', 'beta'), '0.2');
  assert.equal(cell('global-cpu', 'iterations'), '', 'global-cpu solves directly: it reads no iterations');
  assert.equal(cell('global-cpu', 'beta'), '0.2');
  assert.equal(cell('rapier-multibody', 'beta'), '', 'Rapier has no Baumgarte β');
  assert.equal(cell('rapier-multibody', 'warm_start'), '');
  assert.equal(cell('rapier-multibody', 'iterations'), '8');
  assert.equal(cell('jacobi-cpu', 'ks_per_s2'), '', 'the feedback gains are the particle solvers\'');
  // the printed table: every count and figure of four digits or more has its thousands grouped
  const rows = r.stdout.split('\n').filter((l) => /^(pendulum|joint) /.test(l));
  assert.equal(rows.length, 6);
  // (a run of four digits that is not a fraction's: '13152' or '3043', but not the '0798' of 0.0798)
  for (const row of rows) assert.doesNotMatch(row, /(?<![\d.])\d{4,}/, `ungrouped number in: ${row}`);
  const stepsPerSecond = rows.map((row) => (results.runs.find((x) => row.startsWith(`${x.scene} `) && row.includes(` ${x.solver} `)) as RunRecord | undefined)?.timing?.stepsPerSecond).filter((x): x is number => typeof x === 'number');
  assert.ok(stepsPerSecond.some((x) => x >= 1000), `some run above 1,000 steps/s to see the grouping: ${stepsPerSecond}`);
});

test('formatNumber: one style for every figure', () => {
  assert.equal(formatNumber(3043.2, 4), '3,043');
  assert.equal(formatNumber(13152.4, 4), '13,152');
  assert.equal(formatNumber(999.94, 4), '999.9');
  assert.equal(formatNumber(1234.5), '1,235');
  assert.equal(formatNumber(-2500), '-2,500');
  assert.equal(formatNumber(0.012345), '0.0123');
  assert.equal(formatNumber(2e-5), '2.00e-5');
  assert.equal(formatNumber(NaN), '—');
  assert.equal(countText(1, 'body', 'bodies'), '1 body');
  assert.equal(countText(12000, 'body', 'bodies'), '12,000 bodies');
});

test("compare refuses a pair the pre-run checks refuse (as run does), skipping it with the reason, and runs the rest", async () => {
  const { runCompare } = await import('../src/bench/compare.js');
  const file = join(mkdtempSync(join(tmpdir(), 'solverlab-preflight-')), 'light.json');
  // a bead of density 1e-100 on a world pin: its joint's effective mass overflows f64 (model/limits.ts)
  writeFileSync(file, JSON.stringify({
    gravity: [0, -9.81, 0],
    bodies: [{ shape: { type: 'sphere', radius: 0.05 }, density: 1e-100, position: [0, 0, 0] }],
    constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0.05, 0], anchorB: [0, 0.05, 0] }],
  }));
  const warnings: string[] = [];
  const results = await runCompare({ scenes: [file, 'pendulum'], solvers: ['gs-cpu'], frames: 5, onWarning: (w) => warnings.push(w) });
  const [light, pendulum] = results.runs;
  assert.ok('skipped' in light, 'the light bead is skipped');
  assert.match((light as SkippedRun).skipped, /^bodies\[0\]\.density: 1e-100 gives a mass of .* below .* gs-cpu \(f64\)/);
  assert.ok(!('skipped' in pendulum), 'the pendulum still runs');
});
