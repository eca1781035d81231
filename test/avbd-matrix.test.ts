/**
 * The building blocks of the AVBD compare matrix (scripts/avbd-matrix.sh) and benchmark (bench --avbd):
 *   - the holds verdict: the AVBD paper's 50,000 : 1 mass-ratio pendulum over 2 s holds under avbd-cpu
 *     (max|C| ≤ 1 cm, the bound) and stretches under gs-cpu (a per-constraint Gauss-Seidel at 8
 *     iterations lets the chain go by metres), from the compare's own records;
 *   - a solver that refuses a scene stays in the matrix as refused, with its reason, in results.json, the
 *     printed table and the report's matrix;
 *   - the drift of a scene built to stand still is the farthest any body gets from its position at the
 *     first sample at or after the settling time (an analytic sequence of snapshots);
 *   - the benchmark's GPU solvers come from the registry: every registered GPU solver that accepts the
 *     scene, a new one (as avbd-gpu will be) included without an edit, one that refuses it left out; and
 *     with avbd-gpu absent the benchmark says so.
 * No timed assertions: the verdicts are on lengths, the lists on names.
 */
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { runCompare } from '../src/bench/compare.js';
import { isSkipped, type RunRecord, type SkippedRun } from '../src/bench/results.js';
import { formatCompareTable, compareCsv } from '../src/bench/table.js';
import { matrixHtml } from '../src/bench/report-html.js';
import { DriftTracker, holdVerdict, lengthText } from '../src/bench/holds.js';
import { AVBD_BENCH_SCENES, AVBD_GPU, avbdBenchPlan, avbdGpuNote, gpuSolversFor } from '../src/bench/avbd-bench.js';
import { solvers, findSolver } from '../src/solvers/registry.js';
import type { Snapshot } from '../src/model/snapshot.js';
import { builtInScene } from '../src/scenes/load.js';

test('compare: the 50,000:1 mass-ratio pendulum holds under avbd-cpu, stretches under gs-cpu; a refusing solver stays in the matrix with its reason', async () => {
  // 120 frames = 2 s: the ball swings through the bottom (the largest joint load, m_ball (g + v²/L)) in the
  // first half period (≈ 1.1 s for the 0.75 m pendulum), so a chain that lets go has let go by then
  // the stack for 90 frames (a second to settle, half a second standing), the pendulum for its own 120 (sceneFrames)
  const results = await runCompare({ scenes: ['mass-ratio-pendulum', 'vertical-stack'], solvers: ['avbd-cpu', 'gs-cpu', 'witkin-euler'], frames: 90, sceneFrames: { 'mass-ratio-pendulum': 120 }, params: { boxes: 3 }, options: { sleep: 0 } });
  const run = (scene: string, id: string) => results.runs.find((r) => r.scene === scene && r.solver === id)!;
  assert.equal((run('mass-ratio-pendulum', 'avbd-cpu') as RunRecord).frames, 120);
  assert.equal((run('vertical-stack', 'avbd-cpu') as RunRecord).frames, 90);
  const avbd = run('mass-ratio-pendulum', 'avbd-cpu') as RunRecord;
  const gs = run('mass-ratio-pendulum', 'gs-cpu') as RunRecord;
  // the verdict follows the record's worst violation against the 1 cm bound
  assert.equal(avbd.holds?.verdict, 'holds', JSON.stringify(avbd.holds));
  assert.ok(avbd.violation.worstMax! <= 0.01);
  assert.equal(gs.holds?.verdict, 'stretches', JSON.stringify(gs.holds));
  assert.ok(gs.violation.worstMax! > 0.01);
  // a stack of 3 boxes awake at rest under avbd-cpu: a drift figure from 1 s on, below the 1 cm bound
  const stack = run('vertical-stack', 'avbd-cpu') as RunRecord;
  assert.ok(stack.rest && stack.rest.from !== null && Math.abs(stack.rest.from - 1) < 1 / 60 + 1e-9, JSON.stringify(stack.rest));
  assert.equal(stack.holds?.verdict, 'holds', JSON.stringify(stack.holds));
  // the pendulum is not a scene built to stand still: no drift there
  assert.equal(avbd.rest, undefined);

  // refused, with the solver's own reason, on both scenes; in the table, the CSV and the report's matrix
  for (const scene of ['mass-ratio-pendulum', 'vertical-stack']) {
    const w = run(scene, 'witkin-euler') as SkippedRun;
    assert.ok(isSkipped(w));
    assert.equal(w.refused, true);
    const reason = findSolver('witkin-euler')!.unsupported!(builtInScene(scene).build({}))!;
    assert.equal(w.skipped, reason);
  }
  const table = formatCompareTable(results);
  assert.match(table, /witkin-euler on mass-ratio-pendulum: refused: witkin-euler solves particle systems/);
  assert.match(table, /holds: ran every frame with max\|C\| ≤ 1 cm/);
  assert.match(compareCsv(results), /,witkin-euler,refused: witkin-euler solves particle systems/);
  const html = matrixHtml(results)!;
  assert.ok(html, 'two scenes: a matrix');
  const witkinRow = html.split('\n').find((l) => l.includes('<th scope="row">witkin-euler</th>'))!;
  assert.equal(witkinRow.match(/<b>refused<\/b>/g)?.length, 2, witkinRow);
  assert.ok(witkinRow.includes('solves particle systems; this scene is of rigid bodies'), witkinRow);
  const gsRow = html.split('\n').find((l) => l.includes('<th scope="row">gs-cpu</th>'))!;
  assert.ok(gsRow.includes('<b>stretches</b>') && gsRow.includes(`max|C| ${lengthText(gs.violation.worstMax!)}`), gsRow);
});

test('the drift of a scene built to stand still: the farthest any body gets from its place at the first sample at or after the settling', () => {
  const snap = (time: number, xs: number[][]): Snapshot => ({
    frame: Math.round(time * 60), time, bodyCount: xs.length, position: Float64Array.from(xs.flat()),
    orientation: new Float64Array(4 * xs.length), linearVelocity: new Float64Array(3 * xs.length), angularVelocity: new Float64Array(3 * xs.length),
  });
  const d = new DriftTracker(1);
  d.observe(snap(0, [[0, 0, 0], [0, 1, 0]]));
  d.observe(snap(0.5, [[5, 0, 0], [0, 1, 0]])); // before the settling: not counted
  assert.deepEqual(d.result(), { from: null, drift: null });
  d.observe(snap(60 / 60, [[5, 0, 0], [0, 1, 0]])); // the reference (60 · (1/60) rounds to 1 exactly or just below)
  d.observe(snap(1.5, [[5, 0.003, 0.004], [0, 1, 0]])); // 5 mm (3-4-5)
  d.observe(snap(2, [[5, 0, 0], [0.002, 1, 0]])); // back, and the other 2 mm: the worst stays 5 mm
  const r = d.result();
  assert.equal(r.from, 1);
  assert.ok(Math.abs(r.drift! - 0.005) < 1e-15, String(r.drift));
  assert.deepEqual(holdVerdict({ constraints: 0, violation: { worstMax: 0 }, diverged: null, rest: r }), { verdict: 'holds', why: 'drift 5 mm ≤ 1 cm' });
  assert.equal(holdVerdict({ constraints: 0, violation: { worstMax: 0 }, diverged: null, rest: r }, { violation: 0.01, drift: 0.004 })?.verdict, 'drifts');
  assert.equal(holdVerdict({ constraints: 0, violation: { worstMax: 0 }, diverged: { frame: 7 }, rest: r })?.verdict, 'diverges');
  // no test applies (a contact scene in motion): no verdict
  assert.equal(holdVerdict({ constraints: 0, violation: { worstMax: null }, diverged: null }), null);
});

test('bench --avbd: the GPU solvers come from the registry; a new one that runs the scene joins, one that refuses it does not', () => {
  const wall = AVBD_BENCH_SCENES.find((s) => s.label === 'brick-wall-110k')!;
  const necklace = AVBD_BENCH_SCENES.find((s) => s.label === 'necklace-100k')!;
  // the registry's own: exactly its GPU solvers that declare contacts (brick wall) or point joints (necklace)
  const gpu = solvers.filter((s) => s.device === 'gpu');
  assert.deepEqual(gpuSolversFor(wall), gpu.filter((s) => s.supports?.contacts && s.supports.shapes.includes('box')).map((s) => s.id));
  assert.deepEqual(gpuSolversFor(necklace), gpu.filter((s) => s.supports?.constraints.includes('point')).map((s) => s.id));
  assert.ok(gpuSolversFor(wall).length > 0 && gpuSolversFor(necklace).length > 0);
  // a registry with an avbd-gpu that takes everything and a GPU solver without contacts: the first joins both
  const fake = [
    { id: AVBD_GPU, device: 'gpu' as const, unsupported: () => null },
    { id: 'joints-only-gpu', device: 'gpu' as const, unsupported: (d: { collisions?: boolean }) => (d.collisions ? 'no contacts' : null) },
    { id: 'some-cpu', device: 'cpu' as const, unsupported: () => null },
  ];
  assert.deepEqual(gpuSolversFor(wall, fake as never), [AVBD_GPU]);
  assert.deepEqual(gpuSolversFor(necklace, fake as never), [AVBD_GPU, 'joints-only-gpu']);
  // the CPU path: pyramid base 100 under avbd-cpu
  const plan = avbdBenchPlan();
  assert.deepEqual(plan.find((p) => p.scene.label === 'pyramid-100')!.solvers, ['avbd-cpu']);
  // avbd-gpu absent: said; present: in the plan of both GPU scenes unless it refuses one (then said)
  const note = avbdGpuNote(plan);
  if (!findSolver(AVBD_GPU)) assert.match(note!, /avbd-gpu was not found in the solver registry/);
  else assert.ok(note === null || /does not run/.test(note), String(note));
  // a plan without a GPU scene, or a solver list without avbd-gpu, has nothing to say about it
  assert.equal(avbdGpuNote(avbdBenchPlan(AVBD_BENCH_SCENES.filter((s) => s.path === 'cpu'))), null);
  assert.equal(avbdGpuNote(plan, ['jacobi-gpu']), null);
});

test('bench --avbd and compare --scene-frames: bad input is one line, exit status 2', () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });
  for (const [args, why] of [
    [['bench', '--avbd', '--scenes', 'rain-10k'], /unknown benchmark scene 'rain-10k' \(brick-wall-110k, necklace-100k, pyramid-100\)/],
    [['bench', '--avbd', '--contacts'], /--contacts does not go with --avbd/],
    [['compare', '--scenes', 'pendulum', '--solvers', 'jacobi-cpu', '--scene-frames', 'necklace=10'], /--scene-frames necklace=10: expected SCENE=N with SCENE one of the chosen scenes/],
  ] as [string[], RegExp][]) {
    const r = cli(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, why);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
