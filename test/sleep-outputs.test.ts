/**
 * The awake count in every output: FrameMetrics.awake (the dynamic bodies not asleep, from each
 * snapshot's sleep mask), the `run` summary and its JSON record (series and totals), the compare
 * table, results.csv, results.json and the HTML report (an "awake at end" column, an awake plot).
 *
 * References, independent of the outputs:
 *   - a base-n pyramid has n(n+1)/2 boxes, all dynamic (the ground is fixed);
 *   - an island falls asleep only after every one of its bodies stayed slow for TIME_TO_SLEEP
 *     (collision/islands.ts), so no body can be asleep at a sample earlier than that: every box is
 *     awake at frame 0, at frame 1 and at every sample with t < TIME_TO_SLEEP;
 *   - the pyramid starts at rest on the ground, so it settles at once and is asleep well before
 *     1.5 s (measured: all asleep at frame 32, t ≈ 0.53 s, under softstep-cpu at 60 Hz);
 *   - a sleeping body is at rest: with every box asleep the kinetic energy is exactly 0;
 *   - with sleep 0 nothing sleeps: every box awake at every sample;
 *   - the count at the end is the number of dynamic bodies whose flag is 0 in the last snapshot's
 *     mask, counted here from the mask itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { loadScene } from '../src/scenes/load.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { runSolver, type RunResult } from '../src/run/run.js';
import type { WorldDesc } from '../src/model/world.js';
import type { Snapshot } from '../src/model/snapshot.js';
import { TIME_TO_SLEEP } from '../src/collision/islands.js';
import { runRecord, isSkipped, type RunMeta, type RunRecord, type CompareResults } from '../src/bench/results.js';
import { formatSummary } from '../src/cli/report.js';
import { runCompare } from '../src/bench/compare.js';
import { compareCsv, formatCompareTable, formatNumber } from '../src/bench/table.js';
import { renderReport, plotSpecs } from '../src/bench/report-html.js';

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });

const BASE = 3;
/** boxes of a base-n pyramid: n + (n − 1) + … + 1 */
const BOXES = (BASE * (BASE + 1)) / 2;
const DT = 1 / 60;
/** 1.5 s at 60 Hz */
const FRAMES = 90;

/** One run as `run` makes it (runSolver, runRecord, formatSummary), keeping a copy of the last snapshot. */
async function runPyramid(sleep: number, frames = FRAMES) {
  const loaded = loadScene('pyramid', { base: BASE });
  const info = findSolver('softstep-cpu')!;
  const options = resolveOptions(info, { sleep, dt: DT });
  const solver = await info.create(loaded.world as WorldDesc, options);
  let last: Snapshot | null = null;
  let result: RunResult;
  try {
    result = await runSolver(solver, loaded.world, {
      frames,
      observe: { every: frames, onSnapshot: (s) => void (last = { ...s, asleep: s.asleep?.slice() }) },
    });
  } finally {
    solver.destroy();
  }
  const meta: RunMeta = { scene: loaded.name, params: loaded.params, options, iterationMode: info.iterationMode };
  return { world: loaded.world as WorldDesc, result, last: last! as Snapshot, record: runRecord(meta, result), summary: formatSummary(meta, result) };
}

test('run, sleep 1: every box awake at frame 0, 1 and before the sleep time; none awake at 1.5 s, at rest', async () => {
  const { world, result, last, record, summary } = await runPyramid(1);
  assert.ok(result.final && !result.diverged);
  assert.equal(world.bodies.filter((b) => !b.fixed).length, BOXES, 'the pyramid: n(n+1)/2 dynamic boxes');
  const s = record.series;
  assert.equal(s.length, FRAMES + 1);
  assert.equal(s[0].awake, BOXES, 'frame 0: all awake');
  assert.equal(s[1].awake, BOXES, 'frame 1: all awake');
  for (const p of s) if (p.t < TIME_TO_SLEEP - 1e-9) assert.equal(p.awake, BOXES, `t = ${p.t} s < the sleep time: nothing can sleep yet`);
  assert.equal(s.at(-1)!.awake, 0, 'at 1.5 s the settled pyramid sleeps');
  assert.equal(result.final.awake, 0);
  assert.equal(result.final.dynamicBodies, BOXES);
  // the reference: the last snapshot's own mask, counted here; and a sleeping body is at rest
  assert.ok(last.asleep, 'softstep-cpu with sleep 1 hands a sleep mask');
  assert.equal(world.bodies.filter((b, i) => !b.fixed && !last.asleep![i]).length, 0);
  assert.equal(result.final.kinetic, 0, 'every box asleep: no kinetic energy');
  // the summary of the run and the record
  const a = record.awake!;
  assert.equal(a.finalCount, 0);
  assert.equal(a.dynamicBodies, BOXES);
  assert.equal(a.sleeps, true);
  const first = s.find((p) => p.awake === 0)!;
  assert.equal(a.allAsleepT, first.t);
  assert.ok(a.allAsleepT! >= TIME_TO_SLEEP - 1e-9, `all asleep at ${a.allAsleepT} s, not before the sleep time`);
  assert.ok(Math.abs(a.meanCount! - s.reduce((k, p) => k + p.awake!, 0) / s.length) <= 1e-12);
  assert.deepEqual(JSON.parse(JSON.stringify(record)).awake, a, 'the record survives JSON');
  const line = summary.split('\n').find((l) => l.startsWith('awake '));
  assert.ok(line, summary);
  assert.ok(line.includes(`0 of ${BOXES} dynamic bodies at the end`), line);
  assert.ok(line.includes(`all asleep from t = ${formatNumber(first.t)} s`), line);
});

test('run, sleep 0: every box awake at every sample, no mask, no awake line in the summary', async () => {
  const { result, last, record, summary } = await runPyramid(0);
  assert.ok(result.final && !result.diverged);
  assert.equal(last.asleep, undefined, 'sleep 0: the solver hands no mask');
  for (const p of record.series) assert.equal(p.awake, BOXES);
  assert.deepEqual(record.awake, { finalCount: BOXES, meanCount: BOXES, dynamicBodies: BOXES, sleeps: false, allAsleepT: null });
  assert.doesNotMatch(summary, /^awake /m);
});

test('particle systems have no awake count: not in the metrics, the series or the record', async () => {
  const loaded = loadScene('bead-on-wire', {});
  const info = findSolver('witkin-rk4')!;
  const options = resolveOptions(info, {});
  const solver = await info.create(loaded.world, options);
  let result: RunResult;
  try {
    result = await runSolver(solver, loaded.world, { frames: 3 });
  } finally {
    solver.destroy();
  }
  assert.equal(result.initial.awake, undefined);
  assert.equal(result.awake, undefined);
  for (const p of result.series) assert.ok(!('awake' in p));
  const record = runRecord({ scene: loaded.name, params: loaded.params, options, iterationMode: info.iterationMode }, result);
  assert.equal(record.awake, undefined);
});

test('run --sleep 1 --json -: the CLI prints the awake line and writes the awake series', () => {
  const r = cli('run', '--scene', 'pyramid', '--param', `base=${BASE}`, '--solver', 'softstep-cpu', '--sleep', '1', '--frames', String(FRAMES), '--quiet', '--json', '-');
  assert.equal(r.status, 0, r.stderr);
  const rec = JSON.parse(r.stdout) as RunRecord;
  assert.equal(rec.series[0].awake, BOXES);
  assert.equal(rec.series.at(-1)!.awake, 0);
  assert.equal(rec.awake!.finalCount, 0);
  assert.match(r.stderr, new RegExp(`^awake +0 of ${BOXES} dynamic bodies at the end \\(mean [\\d.]+ over ${FRAMES + 1} sampled frames\\); all asleep from t = [\\d.]+ s`, 'm'));
});

test('compare, sleep 1: the table, CSV, JSON and HTML report carry the awake count; an awake plot from the series', async () => {
  const results = await runCompare({ scenes: ['pyramid', 'necklace'], solvers: ['softstep-cpu'], frames: FRAMES, params: { base: BASE, chains: 2, beads: 5 }, options: { sleep: 1 } });
  const ran = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  const pyramid = ran.find((r) => r.scene === 'pyramid')!;
  const necklace = ran.find((r) => r.scene === 'necklace')!;
  assert.ok(pyramid && necklace, JSON.stringify(results.runs.map((r) => [r.scene, r.solver, isSkipped(r) ? r.skipped : 'ran'])));
  assert.deepEqual(
    [pyramid.awake!.finalCount, pyramid.awake!.dynamicBodies, pyramid.awake!.sleeps],
    [0, BOXES, true],
  );
  // the necklace (collisions off): nothing to sleep on, every bead awake
  const beads = loadScene('necklace', { chains: 2, beads: 5 }).world as WorldDesc;
  const dynamicBeads = beads.bodies.filter((b) => !b.fixed).length;
  assert.deepEqual([necklace.awake!.finalCount, necklace.awake!.dynamicBodies, necklace.awake!.sleeps], [dynamicBeads, dynamicBeads, false]);
  // JSON: the series carries the count
  const json = JSON.parse(JSON.stringify(results)) as CompareResults;
  const pj = json.runs.find((r) => r.scene === 'pyramid') as RunRecord;
  assert.equal(pj.series[0].awake, BOXES);
  assert.equal(pj.series.at(-1)!.awake, 0);

  // the printed table: an "awake" column, awake/dynamic at the end
  const table = formatCompareTable(results).split('\n');
  const head = table[0].split(/ {2,}/);
  assert.ok(head.includes('awake'), table[0]);
  const cell = (scene: string) => table.find((l) => l.startsWith(scene))!.trim().split(/ {2,}/)[head.indexOf('awake')];
  assert.equal(cell('pyramid'), `0/${BOXES}`);
  assert.equal(cell('necklace'), `${dynamicBeads}/${dynamicBeads}`);

  // the CSV: the count, its mean, the dynamic bodies and when all first slept, full precision
  const csv = compareCsv(results).trim().split('\n');
  const cols = csv[0].split(',');
  for (const name of ['awake_final', 'awake_mean', 'dynamic_bodies', 'all_asleep_s']) assert.ok(cols.includes(name), name);
  const row = (scene: string) => csv.find((l) => l.startsWith(`${scene},`))!.split(',');
  const at = (scene: string, name: string) => row(scene)[cols.indexOf(name)];
  assert.equal(at('pyramid', 'awake_final'), '0');
  assert.equal(at('pyramid', 'dynamic_bodies'), String(BOXES));
  assert.equal(Number(at('pyramid', 'awake_mean')), pyramid.awake!.meanCount);
  assert.equal(Number(at('pyramid', 'all_asleep_s')), pyramid.series.find((p) => p.awake === 0)!.t);
  assert.equal(at('necklace', 'awake_final'), String(dynamicBeads));
  assert.equal(at('necklace', 'all_asleep_s'), '', 'the necklace never sleeps');

  // the HTML report: the column, and an awake plot of the pyramid from the series (linear y)
  const html = renderReport(results);
  assert.ok(html.includes('<th title="dynamic bodies awake'), 'the awake at end column');
  assert.ok(html.includes(`<td class="awake">0/${BOXES}</td>`));
  assert.ok(html.includes('data-plot="awake:pyramid"'));
  assert.ok(!html.includes('data-plot="awake:necklace"'), 'nothing sleeps on the necklace: no plot');
  const spec = plotSpecs(results).find((p) => p.id === 'awake:pyramid')!;
  assert.equal(spec.logY, false);
  assert.deepEqual(spec.lines[0].y, pyramid.series.map((p) => p.awake));
  assert.doesNotMatch(html.replace(/<script>[\s\S]*?<\/script>/g, ''), /\bNaN\b|\bundefined\b/);
});

test('compare, sleep 0: the CSV and JSON still carry the count (all awake); no awake column in the table or report, no plot', async () => {
  const results = await runCompare({ scenes: ['pyramid'], solvers: ['softstep-cpu'], frames: 30, params: { base: BASE }, options: { sleep: 0 } });
  const r = results.runs[0] as RunRecord;
  assert.deepEqual(r.awake, { finalCount: BOXES, meanCount: BOXES, dynamicBodies: BOXES, sleeps: false, allAsleepT: null });
  for (const p of r.series) assert.equal(p.awake, BOXES);
  const csv = compareCsv(results).trim().split('\n');
  const cols = csv[0].split(',');
  assert.equal(csv[1].split(',')[cols.indexOf('awake_final')], String(BOXES));
  assert.ok(!formatCompareTable(results).split('\n')[0].split(/ {2,}/).includes('awake'));
  const html = renderReport(results);
  assert.doesNotMatch(html, /awake at end|data-plot="awake:/);
  assert.ok(!plotSpecs(results).some((p) => p.kind === 'awake'));
});
