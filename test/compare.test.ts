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
import { resolveOptions } from '../src/solvers/solver.js';
import { formatNumber, countText } from '../src/bench/table.js';
import { jointSceneFile } from './support/hinge-scene.js';

/** pgs-cpu's own defaults (its registry entry): the settings below are told apart from them */
const pgsDefaults = resolveOptions(findSolver('pgs-cpu')!);

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
  assert.match(table[0], /scene +solver +it×sub +steps\/s \(mean\) +mean ms +median ms +p95 ms/);
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
  assert.match((light as SkippedRun).skipped, /^\S*light\.json: bodies\[0\]\.density: 1e-100 gives a mass of .* below .* gs-cpu \(f64\)/);
  assert.ok(!('skipped' in pendulum), 'the pendulum still runs');
});

// --- per-solver settings: NAME:key=value[:key=value…] ------------------------------------------

test('compare --solvers NAME:key=value: the entry read with the option table of run (names, ranges), its label', async () => {
  const { parseSolverEntry } = await import('../src/cli/solver-entries.js');
  const { entryLabel } = await import('../src/bench/compare.js');
  assert.deepEqual(parseSolverEntry('rapier'), { id: 'rapier' });
  assert.equal(entryLabel(parseSolverEntry('rapier')), 'rapier', 'a bare name is labelled as before');
  const e = parseSolverEntry('pgs-cpu:substeps=4:iterations=8');
  assert.deepEqual(e, { id: 'pgs-cpu', settings: { substeps: 4, iterations: 8 } });
  assert.equal(entryLabel(e), 'pgs-cpu:substeps=4:iterations=8', 'the settings in the order given');
  // keys are run's flag names (not the option's field names); values decimal numbers, written back as read
  const soft = parseSolverEntry('softstep-cpu:contact-hertz=1e2:warm-start=0.5:sleep=0');
  assert.deepEqual(soft.settings, { contactHertz: 100, warmStart: 0.5, sleep: 0 });
  assert.equal(entryLabel(soft), 'softstep-cpu:contact-hertz=100:warm-start=0.5:sleep=0');
  // what parseSolverEntry refuses, and the message it gives (the CLI prints it, exit 2: next test)
  const bad: [string, RegExp][] = [
    ['nope:iterations=4', /^unknown solver 'nope' \(solvers: .*pgs-cpu/],
    ['pgs-cpu:iters=4', /^--solvers 'pgs-cpu:iters=4': unknown option 'iters' \(options: dt, iterations, substeps, /],
    ['pgs-cpu:contactHertz=4', /unknown option 'contactHertz'/],
    ['pgs-cpu:iterations', /expected NAME:key=value\[:key=value…\] \(e\.g\. pgs-cpu:iterations=4\), got 'iterations'/],
    ['pgs-cpu:', /expected NAME:key=value/],
    ['pgs-cpu:iterations=', /expected NAME:key=value/],
    ['pgs-cpu:iterations=abc', /^--solvers 'pgs-cpu:iterations=abc': iterations must be a number, got 'abc'$/],
    ['pgs-cpu:iterations=0x10', /iterations must be a number, got '0x10' \(numbers are decimal\)/],
    ['pgs-cpu:iterations=2.5', /iterations must be an integer, got '2\.5'/],
    ['pgs-cpu:iterations=-1', /iterations must be ≥ 1, got -1/],
    ['pgs-cpu:substeps=0', /substeps must be ≥ 1, got 0/],
    ['pgs-cpu:warm-start=2', /warm-start must be ≤ 1, got 2/],
    ['pgs-cpu:iterations=4:iterations=8', /iterations given twice/],
  ];
  for (const [text, message] of bad) assert.throws(() => parseSolverEntry(text), (err: Error) => err.name === 'UsageError' && message.test(err.message), text);
});

test('compare --solvers with settings: bad input is one line, exit status 2, nothing written', () => {
  const cases: [string, RegExp][] = [
    ['pgs-cpu:iters=4', /unknown option 'iters'/],
    ['pgs-cpu:iterations=-1', /iterations must be ≥ 1, got -1/],
    ['pgs-cpu,nope:iterations=2', /unknown solver 'nope'/],
    // what each solver reads is its declaration (SolverInfo.reads): Rapier has no Baumgarte β
    ['rapier:beta=0.3', /^solverlab: 'rapier:beta=0\.3': rapier does not read beta \(it reads dt, iterations, substeps, sleep\)$/],
    ['pgs-cpu:iterations=4,pgs-cpu:iterations=4', /'pgs-cpu:iterations=4' is listed twice/],
    // pgs-cpu's own default iterations: the two entries would be one run
    [`pgs-cpu,pgs-cpu:iterations=${pgsDefaults.iterations}`, new RegExp(`'pgs-cpu' and 'pgs-cpu:iterations=${pgsDefaults.iterations}' run pgs-cpu with the same options`)],
  ];
  for (const [solvers, message] of cases) {
    const out = join(dir, 'bad-settings');
    const r = cli(['compare', '--scenes', 'pendulum', '--solvers', solvers, '--frames', '3', '--out', out]);
    assert.equal(r.status, 2, `${solvers}: ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], message);
    assert.ok(!existsSync(out), 'nothing written');
  }
});

test('compare: one solver at two settings gives two labelled runs, and more sweeps hold a hanging chain closer (table, CSV, JSON)', () => {
  // A 20-bead chain hanging at rest from a pin under gs-cpu (Gauss-Seidel over the joint rows colour by
  // colour, warm-started, Baumgarte β = 0.2/h, one step a frame on joints). (pgs-cpu, at its 4 substeps,
  // puts 10 E_scale into this chain at rest within 0.5 s at 2–6 sweeps, which the divergence watch calls
  // divergence since the chain starts exact: no run to compare.) What is left of each step's velocity error after k sweeps becomes position drift that
  // β only partly removes, and that error contracts with every sweep (each sweep carries the load at least one
  // more link up the chain), so at 20 sweeps the chain must stretch less than at 2: the worst and the final max
  // violation are lower, strictly (no tolerance: two runs of the same options would give equal figures, and
  // settings not applied would give equal runs). Measured here: 0.006 m at 20 against 0.042 m at 2 (30 frames).
  // The shared --iterations 6 goes to the entry without settings only.
  const out = join(dir, 'settings');
  const solvers = 'gs-cpu:iterations=2,gs-cpu:iterations=20,gs-cpu';
  const r = cli(['compare', '--scenes', 'long-chain', '--param', 'beads=20', '--solvers', solvers, '--iterations', '6', '--frames', '30', '--out', out, '--quiet']);
  assert.equal(r.status, 0, r.stderr);
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResults;
  const labels = ['gs-cpu:iterations=2', 'gs-cpu:iterations=20', 'gs-cpu'];
  assert.deepEqual(results.solvers, labels, 'the solver list as run, by label');
  const runs = results.runs as RunRecord[];
  assert.deepEqual(runs.map((x) => x.label), ['gs-cpu:iterations=2', 'gs-cpu:iterations=20', undefined], 'a label only where the entry has settings');
  assert.deepEqual(runs.map((x) => x.solver), ['gs-cpu', 'gs-cpu', 'gs-cpu']);
  assert.deepEqual(runs.map((x) => x.settings), [{ iterations: 2 }, { iterations: 20 }, undefined]);
  assert.deepEqual(runs.map((x) => x.options.iterations), [2, 20, 6], 'an entry’s setting over the shared flag, for that run only');
  assert.deepEqual(Object.keys(runs[0]).slice(0, 6), ['scene', 'params', 'solver', 'label', 'settings', 'options']);
  const [two, twenty] = runs;
  assert.ok(twenty.violation.worstMax! < two.violation.worstMax!, `worst max violation: ${twenty.violation.worstMax} at 20 sweeps, ${two.violation.worstMax} at 2`);
  assert.ok(twenty.violation.finalMax! < two.violation.finalMax!, `final max violation: ${twenty.violation.finalMax} at 20 sweeps, ${two.violation.finalMax} at 2`);
  assert.equal(two.stepsPerSecondRatio, 1, 'the first entry is the speed baseline');
  // the labelled run is the run that `run` makes with that option, bit for bit
  const single = cli(['run', '--scene', 'long-chain', '--param', 'beads=20', '--solver', 'gs-cpu', '--iterations', '20', '--frames', '30', '--quiet']);
  assert.equal(single.status, 0, single.stderr);
  assert.ok(single.stdout.includes(`state hash  ${twenty.finalStateHash}`), `run and compare disagree:\n${single.stdout}\ncompare: ${twenty.finalStateHash}`);
  // the printed table: one row per entry, named by its label, and the iterations it ran
  const table = r.stdout.trim().split('\n');
  const head = table[0].split(/ {2,}/);
  const rows = table.filter((l) => l.startsWith('long-chain ')).map((l) => l.trim().split(/ {2,}/));
  assert.deepEqual(rows.map((row) => row[head.indexOf('solver')]), labels);
  assert.deepEqual(rows.map((row) => row[head.indexOf('it×sub')]), [2, 20, 6].map((it) => `${it}×1`));
  // results.csv: the solver's id, the run's label beside it, and the options it ran with
  const csv = readFileSync(join(out, 'results.csv'), 'utf8').trim().split('\n').map((l) => l.split(','));
  const col = (name: string) => csv[0].indexOf(name);
  assert.deepEqual(csv[0].slice(0, 5), ['scene', 'params', 'solver', 'label', 'status']);
  assert.deepEqual(csv.slice(1).map((l) => [l[col('solver')], l[col('label')], l[col('iterations')]]), [
    ['gs-cpu', 'gs-cpu:iterations=2', '2'],
    ['gs-cpu', 'gs-cpu:iterations=20', '20'],
    ['gs-cpu', 'gs-cpu', '6'],
  ]);
  assert.deepEqual(csv.slice(1).map((l) => Number(l[col('worst_max_violation_m')])), runs.map((x) => x.violation.worstMax));
});
