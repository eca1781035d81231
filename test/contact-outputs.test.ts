/**
 * The contact figures in every output: the `run` summary and its JSON record, the compare table,
 * results.csv, results.json and the HTML report show the deepest penetration and the contact count
 * where the scene has contacts (collisions on), and only there.
 *
 * References, computed here independently of the run:
 *   - a fresh MetricsContext measures the final snapshot (collision detection run afresh on its pose):
 *     the printed and recorded final figures must be its figures;
 *   - for a box on the ground plane y = 0 the deepest penetration is geometric: max(0, −min over the
 *     8 corners of y), corner = x + R(q)(±a, ±b, ±c), and a box resting flat touches with its 4 bottom
 *     corners (separation ≤ the 5 mm slop), its top ones 2a above;
 *   - the worst over the run is the largest of the per-frame series, and ≥ the final.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { loadScene } from '../src/scenes/load.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { runSolver, type RunResult } from '../src/run/run.js';
import { MetricsContext, rotate } from '../src/metrics/metrics.js';
import type { WorldDesc } from '../src/model/world.js';
import type { Snapshot } from '../src/model/snapshot.js';
import { runRecord, isSkipped, type RunMeta, type RunRecord } from '../src/bench/results.js';
import { formatSummary } from '../src/cli/report.js';
import { runCompare } from '../src/bench/compare.js';
import { compareCsv, formatCompareTable, formatNumber } from '../src/bench/table.js';
import { renderReport, plotSpecs } from '../src/bench/report-html.js';

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });

/** One run as `run` makes it (runSolver, runRecord, formatSummary), keeping a copy of the last snapshot. */
async function runScene(scene: string, params: Record<string, number>, solverId: string, frames: number) {
  const loaded = loadScene(scene, params);
  const info = findSolver(solverId)!;
  const options = resolveOptions(info, {});
  const solver = await info.create(loaded.world as WorldDesc, options);
  let last: Snapshot | null = null;
  let result: RunResult;
  try {
    result = await runSolver(solver, loaded.world, {
      frames,
      observe: {
        every: frames,
        onSnapshot: (s) => {
          last = { ...s, position: s.position.slice(), orientation: s.orientation.slice(), linearVelocity: s.linearVelocity.slice(), angularVelocity: s.angularVelocity.slice() };
        },
      },
    });
  } finally {
    solver.destroy();
  }
  const meta: RunMeta = { scene: loaded.name, params: loaded.params, options, iterationMode: info.iterationMode };
  return { world: loaded.world as WorldDesc, result, last: last! as Snapshot, record: runRecord(meta, result), summary: formatSummary(meta, result) };
}

/** Deepest penetration of box `i` (half extents h) into the ground y = 0: max(0, −min_corner y). */
function boxGroundPenetration(s: Snapshot, i: number, h: number[]): { depth: number; touching: number } {
  let lowest = Infinity, touching = 0;
  const out = [0, 0, 0];
  for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) {
    rotate(s.orientation, 4 * i, sx * h[0], sy * h[1], sz * h[2], out);
    const y = s.position[3 * i + 1] + out[1];
    lowest = Math.min(lowest, y);
    if (y <= 0.005) touching++;
  }
  return { depth: Math.max(0, -lowest), touching };
}

test('run: a box landing on the ground — the summary and the JSON carry the penetration the final state has', async () => {
  const { world, result, last, record, summary } = await runScene('single-box', { height: 0.05 }, 'softstep-cpu', 40);
  assert.ok(result.final && !result.diverged);
  assert.equal(last.frame, 40);
  // the reference: a fresh metrics context on the final snapshot, and the geometry of the box's corners
  const fresh = new MetricsContext(world).measure(last);
  assert.ok(fresh.maxPenetration !== undefined && fresh.contacts !== undefined);
  const h = (world.bodies[1].shape as { halfExtents: number[] }).halfExtents;
  const geo = boxGroundPenetration(last, 1, h);
  assert.ok(Math.abs(fresh.maxPenetration - geo.depth) <= 1e-12, `metrics ${fresh.maxPenetration} vs corners ${geo.depth}`);
  assert.equal(geo.touching, 4, 'the box has landed flat: its 4 bottom corners touch');
  assert.equal(fresh.contacts, geo.touching);

  // RunResult and the JSON record: final = the fresh figures, worst = the largest of the series ≥ final
  assert.equal(result.final.maxPenetration, fresh.maxPenetration);
  assert.equal(result.final.contacts, fresh.contacts);
  const c = record.contacts!;
  assert.equal(c.finalMaxPenetration, fresh.maxPenetration);
  assert.equal(c.finalCount, fresh.contacts);
  assert.equal(record.series.length, 41);
  for (const p of record.series) assert.ok(typeof p.maxPenetration === 'number' && typeof p.contacts === 'number', 'every sample has its contact figures');
  assert.equal(record.series[0].contacts, 0, 'dropped from 5 cm: nothing touches at frame 0');
  assert.equal(record.series.at(-1)!.maxPenetration, fresh.maxPenetration);
  const seriesWorst = Math.max(...record.series.map((p) => p.maxPenetration!));
  assert.equal(c.worstMaxPenetration, seriesWorst);
  assert.ok(c.worstMaxPenetration! >= c.finalMaxPenetration!);
  const mean = record.series.reduce((s, p) => s + p.contacts!, 0) / record.series.length;
  assert.ok(Math.abs(c.meanCount! - mean) <= 1e-12);
  // the record survives JSON (no NaN, no undefined)
  assert.deepEqual(JSON.parse(JSON.stringify(record)).contacts, c);

  // the summary's contacts line, numbers as the summary prints them
  const line = summary.split('\n').find((l) => l.startsWith('contacts '));
  assert.ok(line, summary);
  assert.ok(line.includes(`max penetration final ${formatNumber(fresh.maxPenetration)} m, worst ${formatNumber(seriesWorst)} m`), line);
  assert.ok(line.includes(`${fresh.contacts} touching points at the end`), line);
});

test('run --json -: the CLI prints the contacts line and writes the contact figures; a joint-only scene has neither', () => {
  const r = cli('run', '--scene', 'vertical-stack', '--param', 'boxes=2', '--solver', 'pgs-cpu', '--frames', '10', '--quiet', '--json', '-');
  assert.equal(r.status, 0, r.stderr);
  const rec = JSON.parse(r.stdout) as RunRecord;
  const c = rec.contacts!;
  assert.ok(c && c.finalCount !== null && c.finalCount >= 8, `two boxes resting face on face on the ground: ≥ 4 + 4 touching points, got ${c?.finalCount}`);
  assert.ok(c.worstMaxPenetration! >= c.finalMaxPenetration!);
  assert.equal(c.worstMaxPenetration, Math.max(...rec.series.map((p) => p.maxPenetration!)));
  assert.match(r.stderr, new RegExp(`^contacts +max penetration final ${escapeRe(formatNumber(c.finalMaxPenetration))} m, worst ${escapeRe(formatNumber(c.worstMaxPenetration))} m; ${c.finalCount} touching points`, 'm'));

  const j = cli('run', '--scene', 'necklace', '--param', 'chains=2', '--param', 'beads=5', '--solver', 'jacobi-cpu', '--frames', '5', '--quiet', '--json', '-');
  assert.equal(j.status, 0, j.stderr);
  const jr = JSON.parse(j.stdout) as RunRecord;
  assert.equal(jr.contacts, undefined);
  for (const p of jr.series) assert.ok(!('maxPenetration' in p) && !('contacts' in p));
  assert.doesNotMatch(j.stderr, /^contacts /m);
  assert.doesNotMatch(j.stderr, /penetration/);
});

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

test('compare: the table, CSV, JSON and HTML report have the contact columns and the penetration plot where a scene has contacts', async () => {
  const results = await runCompare({ scenes: ['single-box', 'necklace'], solvers: ['jacobi-cpu', 'softstep-cpu'], frames: 20, params: { height: 0.02, chains: 2, beads: 5 } });
  const ran = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  const box = ran.filter((r) => r.scene === 'single-box');
  const necklace = ran.filter((r) => r.scene === 'necklace');
  assert.ok(box.length >= 1 && necklace.length >= 1, JSON.stringify(results.runs.map((r) => [r.scene, r.solver, isSkipped(r) ? r.skipped : 'ran'])));
  for (const r of box) assert.ok(r.contacts, `${r.solver} on single-box has contacts`);
  for (const r of necklace) assert.equal(r.contacts, undefined, `${r.solver} on the necklace has no contacts`);

  // the printed table: ms per step and worst penetration in one table, '—' for the necklace
  const table = formatCompareTable(results).split('\n');
  const head = table[0];
  assert.match(head, /median ms .*worst penetration \(m\) +contacts/);
  for (const r of box) {
    const row = table.find((l) => l.startsWith('single-box') && l.includes(` ${r.solver} `))!;
    assert.ok(row.includes(` ${formatNumber(r.contacts!.worstMaxPenetration)} `) && row.includes(` ${r.contacts!.finalCount} `), row);
  }
  // the columns line up: the necklace rows have '—' under "worst penetration (m)" and "contacts"
  const at = head.indexOf('contacts') + 'contacts'.length - 1;
  for (const l of table.filter((x) => x.startsWith('necklace'))) assert.equal(l[at], '—', l);

  // the CSV: the columns, full precision, empty for the necklace
  const csv = compareCsv(results).trim().split('\n');
  const cols = csv[0].split(',');
  for (const name of ['worst_penetration_m', 'contacts_final', 'final_penetration_m', 'contacts_mean', 'median_ms']) assert.ok(cols.includes(name), name);
  for (const r of ran) {
    const cells = csv.find((l) => l.startsWith(`${r.scene},`) && l.includes(`,${r.solver},`))!.split(',');
    const cell = (name: string) => cells[cols.indexOf(name)];
    if (r.contacts) {
      assert.equal(Number(cell('worst_penetration_m')), r.contacts.worstMaxPenetration);
      assert.equal(Number(cell('final_penetration_m')), r.contacts.finalMaxPenetration);
      assert.equal(Number(cell('contacts_final')), r.contacts.finalCount);
    } else for (const name of ['worst_penetration_m', 'contacts_final', 'final_penetration_m', 'contacts_mean']) assert.equal(cell(name), '', `${r.scene} ${name}`);
  }

  // the HTML report: the columns, and a penetration plot for single-box only, from the series
  const html = renderReport(results);
  assert.ok(html.includes('<th title="the deepest penetration'), 'the worst penetration column');
  assert.ok(html.includes('data-plot="penetration:single-box"'));
  assert.ok(!html.includes('data-plot="penetration:necklace"'));
  const spec = plotSpecs(results).find((p) => p.id === 'penetration:single-box')!;
  assert.equal(spec.logY, true, 'a log axis, as the violation plot');
  assert.equal(spec.lines.length, box.length);
  for (const l of spec.lines) {
    const r = box.find((x) => x.solver === l.solver)!;
    assert.deepEqual(l.y, r.series.map((p) => (p.maxPenetration! > 0 ? p.maxPenetration! : null)));
  }
  // no number printed as NaN or undefined in the page (the chart library's own script aside)
  assert.doesNotMatch(html.replace(/<script>[\s\S]*?<\/script>/g, ''), /\bNaN\b|\bundefined\b/);
});

test('compare on a joint-only scene: no contact column, no penetration plot, anywhere', async () => {
  const results = await runCompare({ scenes: ['necklace'], solvers: ['jacobi-cpu'], frames: 5, params: { chains: 2, beads: 5 } });
  assert.equal((results.runs[0] as RunRecord).contacts, undefined);
  assert.doesNotMatch(formatCompareTable(results), /penetration|contacts/);
  assert.doesNotMatch(compareCsv(results), /penetration|contacts/);
  const html = renderReport(results);
  assert.doesNotMatch(html, /penetration:|worst penetration/);
  assert.ok(!plotSpecs(results).some((p) => p.kind === 'penetration'));
});

/*
 * The touching count at poses where it is known exactly (metrics.ts header: a point touches when its
 * separation s is within the pair's slop, pairSlop: 5 mm, 2 % of the smaller body's least half size below
 * 25 cm). Bodies placed, not simulated, so the gaps are exact:
 *   - a cube of half size L resting flat on the ground touches with its 4 bottom corners: at a gap of half
 *     a slop 4 points, at two slops none, at every size from 1 cm to 4 m (the fact is relative: the same
 *     pose scaled). The old fixed 5 mm counted the 10 cm cube 2 mm up (two slops) as touching, and the 1 m
 *     cube 10 mm up (two slops) not;
 *   - a plank (4 cm thick, 1.2 m) lying across two blocks on the ground: each block's base 4 points, each
 *     face the plank rests on 4 (their overlap is a rectangle, its corners): 16; the plank lifted 1 mm (2.5
 *     of its slops of 0.4 mm, inside the 1.6 mm detection margin) the blocks' 8 only (the old count: 16).
 * Exact counts: no tolerance.
 */
function placed(bodies: WorldDesc['bodies']): { world: WorldDesc; snapshot: Snapshot } {
  const world: WorldDesc = { gravity: [0, -9.81, 0], collisions: true, bodies, constraints: [] };
  const n = bodies.length;
  const snapshot: Snapshot = {
    frame: 0, time: 0, bodyCount: n,
    position: Float64Array.from(bodies.flatMap((b) => b.position)),
    orientation: Float64Array.from(bodies.flatMap((b) => b.orientation ?? [0, 0, 0, 1])),
    linearVelocity: new Float64Array(3 * n), angularVelocity: new Float64Array(3 * n),
  };
  return { world, snapshot };
}
const groundPlane = { shape: { type: 'plane' as const }, fixed: true, position: [0, 0, 0] as [number, number, number] };

test('touching points: a cube resting flat touches with 4 corners at every size, within half a slop; two slops up, none', () => {
  for (const L of [0.005, 0.01, 0.05, 0.1, 0.5, 2]) {
    const slop = Math.min(0.005, 0.02 * L);
    for (const [gap, expected] of [[0, 4], [0.5 * slop, 4], [2 * slop, 0]] as const) {
      const { world, snapshot } = placed([groundPlane, { shape: { type: 'box', halfExtents: [L, L, L] }, position: [0, L + gap, 0] }]);
      const c = new MetricsContext(world).contactsOf(snapshot)!;
      assert.equal(c.contacts, expected, `cube of half size ${L} m, ${gap * 1000} mm up: ${c.contacts} touching points`);
      assert.equal(c.maxPenetration, 0);
    }
  }
});

test('touching points: a plank across two blocks on the ground touches at 4 + 4 points and the blocks at 4 + 4; lifted 2.5 slops, the blocks only', () => {
  for (const [gap, expected] of [[0, 16], [0.0002, 16], [0.001, 8]] as const) {
    const block = (x: number) => ({ shape: { type: 'box' as const, halfExtents: [0.1, 0.1, 0.5] as [number, number, number] }, position: [x, 0.1, 0] as [number, number, number] });
    const { world, snapshot } = placed([groundPlane, block(-0.4), block(0.4), { shape: { type: 'box', halfExtents: [0.6, 0.02, 0.1] }, position: [0, 0.22 + gap, 0] }]);
    const c = new MetricsContext(world).contactsOf(snapshot)!;
    assert.equal(c.contacts, expected, `plank ${gap * 1000} mm above the blocks: ${c.contacts} touching points`);
  }
});
