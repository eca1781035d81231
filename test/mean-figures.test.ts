/**
 * Speed and cost figures that sleeping does not distort (issue 22, item 1). A stack of 4 boxes falls
 * asleep about 0.5 s after it settles, and a sleeping frame costs next to nothing (no rows are solved), so
 * on a run of 2 s most frames are sleeping ones and the median frame is one of them. The mean frame, the
 * run's total time ÷ its frames, is what the run cost: steps/s, the speed ratio and rows per frame are
 * taken from it, and each figure says which statistic it is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCompare } from '../src/bench/compare.js';
import { isSkipped, type RunRecord } from '../src/bench/results.js';
import { compareCsv, formatCompareTable, formatNumber } from '../src/bench/table.js';
import { renderReport } from '../src/bench/report-html.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { builtInScene } from '../src/scenes/load.js';
import { resolveParams } from '../src/scenes/scene.js';
import { runSolver } from '../src/run/run.js';

const FRAMES = 120; // 2 s at 60 Hz: the stack sleeps from about 0.53 s on, so about 3/4 of the frames sleep
const BOXES = 4;
const dir = mkdtempSync(join(tmpdir(), 'solverlab-mean-'));
const cli = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

test('compare on a stack that falls asleep: mean = total ÷ frames, far above the median; speed × and steps/s from the mean', async () => {
  const results = await runCompare({ scenes: ['vertical-stack'], params: { boxes: BOXES }, solvers: ['pgs-cpu', 'softstep-cpu'], frames: FRAMES });
  const runs = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  assert.equal(runs.length, 2);
  for (const r of runs) {
    assert.equal(r.diverged, null);
    assert.ok(r.awake && r.awake.finalCount === 0 && r.awake.allAsleepT !== null && r.awake.allAsleepT < 1, `${r.solver}: the stack sleeps within 1 s (${JSON.stringify(r.awake)})`);
    const ms = r.timing.msPerFrame as number[];
    // mean = Σ per-frame ms ÷ frames timed; 1e-12 relative: one summation's rounding
    assert.ok(Math.abs(r.timing.meanMs! - sum(ms) / ms.length) <= 1e-12 * r.timing.meanMs!, `${r.solver}: mean ${r.timing.meanMs} against ${sum(ms) / ms.length}`);
    assert.equal(r.timing.clock, 'wall');
    assert.equal(r.timing.wallMeanMs, r.timing.meanMs, 'a CPU run: its clock is the wall');
    // steps/s is frames ÷ total wall time, i.e. 1000 / the wall mean (not 1000 / the median)
    assert.ok(Math.abs(r.timing.stepsPerSecond! - 1000 / r.timing.wallMeanMs!) <= 1e-9 * r.timing.stepsPerSecond!);
    // the sleeping frames are the majority: the median is one of them, and the mean is several times it.
    // An awake frame solves 48 rows × 32 sweeps (pgs-cpu) and a sleeping one none: measured, the mean is
    // 30–60× the median here; 3× leaves room for a loaded machine and still fails when speed is the median
    assert.ok(r.timing.meanMs! > 3 * r.timing.medianMs!, `${r.solver}: mean ${r.timing.meanMs} ms, median ${r.timing.medianMs} ms`);
  }
  const [first, second] = runs;
  assert.equal(first.stepsPerSecondRatio, 1);
  // the ratio of steps/s is the inverse ratio of the wall means (1e-9: division rounding)
  const byMean = first.timing.wallMeanMs! / second.timing.wallMeanMs!;
  assert.ok(Math.abs(second.stepsPerSecondRatio! - byMean) <= 1e-9 * byMean, `ratio ${second.stepsPerSecondRatio} against ${byMean} by the means`);

  // rows per frame: the mean over the run, not the last (sleeping) frame's 0. pgs-cpu solves 3 rows per
  // contact point (normal + 2 friction) × iterations × substeps; 4 boxes in a column touch at 4 faces of 4
  // points: 48 rows a frame while awake. So Σ rows = 48 · it · sub × (frames awake): rows/frame × frames
  // divided by that must be a whole number of frames, about the time the stack took to fall asleep
  const pgs = first;
  const o = resolveOptions(findSolver('pgs-cpu')!, {}, builtInScene('vertical-stack').build(resolveParams(builtInScene('vertical-stack'), { boxes: BOXES })));
  const awakeRows = 3 * 4 * BOXES * o.iterations * o.substeps;
  assert.equal(pgs.cost.rowSolvesLastFrame, 0, 'the last frame sleeps: no rows');
  const awakeFrames = (pgs.cost.rowSolvesPerFrame * FRAMES) / awakeRows;
  assert.ok(Math.abs(awakeFrames - Math.round(awakeFrames)) < 1e-9, `Σ rows is a whole number of awake frames: ${awakeFrames}`);
  // asleep from allAsleepT (the first sampled frame with every body asleep): the frames before it were awake (±1)
  const asleepFrame = Math.round(pgs.awake!.allAsleepT! / o.dt);
  assert.ok(Math.abs(awakeFrames - asleepFrame) <= 1, `${awakeFrames} awake frames, asleep from frame ${asleepFrame}`);

  // every output says the statistic: the table's titles and its note, the CSV's columns, the report's headers
  const table = formatCompareTable(results).split('\n');
  assert.match(table[0], /steps\/s \(mean\) +mean ms +median ms +p95 ms/);
  assert.match(table[0], /speed × \(mean\)/);
  assert.ok(table.some((l) => /^steps\/s and speed × from the mean frame/.test(l)), table.join('\n'));
  const row = table.find((l) => l.includes(' softstep-cpu '))!;
  assert.ok(row.includes(` ${formatNumber(second.timing.meanMs)} `) && row.includes(` ${formatNumber(second.timing.medianMs)} `), row);
  const csv = compareCsv(results).trim().split('\n').map((l) => l.split(','));
  const col = (name: string) => csv[0].indexOf(name);
  for (const name of ['mean_ms', 'median_ms', 'wall_mean_ms', 'row_solves_per_frame', 'row_solves_last_frame']) assert.ok(col(name) >= 0, name);
  const pgsLine = csv.find((l) => l[2] === 'pgs-cpu')!;
  assert.equal(Number(pgsLine[col('mean_ms')]), pgs.timing.meanMs);
  assert.equal(Number(pgsLine[col('row_solves_per_frame')]), pgs.cost.rowSolvesPerFrame);
  assert.equal(Number(pgsLine[col('row_solves_last_frame')]), 0);
  const html = renderReport(results);
  const head = /<thead><tr>(.*?)<\/tr><\/thead>/s.exec(html)![1];
  for (const title of ['steps/s (mean)', '× first (mean)', 'mean ms', 'median ms', 'rows / frame (mean)']) assert.ok(head.includes(`>${title}<`), `${title} in ${head}`);
  // the cost–quality figure's x is the mean frame too
  const model = JSON.parse(/<script type="application\/json" id="solverlab-data">(.*?)<\/script>/s.exec(html)![1]);
  for (const f of model.figures) {
    assert.match(f.xLabel, /^mean ms per frame/);
    f.points.forEach((p: { label: string; ms: number }) => assert.equal(p.ms, runs.find((r) => r.solver === p.label)!.timing.meanMs));
  }
});

test('runSolver: rows per frame is the mean of the per-frame counts (stepping frame by frame agrees), the last frame kept', async () => {
  const scene = builtInScene('vertical-stack');
  const world = scene.build(resolveParams(scene, { boxes: BOXES }));
  const info = findSolver('pgs-cpu')!;
  const options = resolveOptions(info, {}, world);
  const a = await info.create(world, options);
  const r = await runSolver(a, world, { frames: FRAMES });
  a.destroy();
  // the same run stepped here one frame at a time, each frame's count read after it
  const b = await info.create(world, options);
  let rows = 0;
  for (let k = 0; k < FRAMES; k++) {
    await b.step(1);
    rows += b.cost().rowSolvesPerFrame;
  }
  const last = b.cost().rowSolvesPerFrame;
  b.destroy();
  assert.equal(r.cost.rowSolvesPerFrame, rows / FRAMES);
  assert.equal(r.cost.rowSolvesLastFrame, last);
  assert.equal(last, 0);
  assert.ok(r.cost.rowSolvesPerFrame > 0);
});

test('run prints the mean step time and steps/s from it, and rows per frame as the mean with the last frame beside it', () => {
  const out = join(dir, 'run.json');
  const r = cli(['run', '--scene', 'vertical-stack', '--param', `boxes=${BOXES}`, '--solver', 'pgs-cpu', '--frames', String(FRAMES), '--json', out, '--quiet']);
  assert.equal(r.status, 0, r.stderr);
  const rec = JSON.parse(readFileSync(out, 'utf8')) as RunRecord;
  const line = (key: string) => r.stdout.split('\n').find((l) => l.startsWith(key))!;
  assert.equal(line('step time'), `step time   mean ${formatNumber(rec.timing.meanMs)} ms (total ÷ frames), median ${formatNumber(rec.timing.medianMs)} ms, p95 ${formatNumber(rec.timing.p95Ms)} ms (wall clock)`);
  assert.equal(line('steps/s'), `steps/s     ${formatNumber(rec.timing.stepsPerSecond)} (wall, frames ÷ total time)`);
  assert.ok(rec.cost.rowSolvesPerFrame > 0 && rec.cost.rowSolvesLastFrame === 0, JSON.stringify(rec.cost));
  assert.equal(line('cost'), `cost        ${formatNumber(rec.cost.rowSolvesPerFrame)} row solves per frame (mean over the run; last frame 0)`);
});
