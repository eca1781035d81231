/**
 * The compare report reads at a glance (issue 22, item 2), opened in headless Chromium at a 1400 × 900
 * window; any page error or console error fails a test:
 *   - a convergence channel that is 0 throughout, or that falls to 1e-29, on a log axis draws (it threw
 *     "Invalid array length": uPlot's log splits never reached the next decade below ~1e-28);
 *   - panels and columns only where the scene has what they measure: no violation panel on a scene
 *     without joints, no violation columns when no scene has joints, no GPU columns for CPU runs;
 *   - the runs table fits the window (its status column inside 1400 px), options, contacts, awake,
 *     GPU columns and a divergence note included;
 *   - energy is plotted as E − E₀ (J), 0 at the start; no y tick label is wider than its axis (the
 *     axis title sits outside the axis, so a label wider than it runs under the title);
 *   - one colour per run, the same on every plot and swatch, from the colour-blind-safe palette; the
 *     convergence plot says which line style is which channel (contact normal, friction, joints).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { runCompare } from '../src/bench/compare.js';
import { isSkipped, runLabel, type CompareResults, type RunRecord } from '../src/bench/results.js';
import { renderReport, plotSpecs, palette, type PlotSpec } from '../src/bench/report-html.js';
import { chromiumPath, haveBrowser } from './support/browser.js';

const dir = mkdtempSync(join(tmpdir(), 'solverlab-glance-'));
const WINDOW = { width: 1400, height: 900 };

let browserPromise: Promise<Browser> | null = null;
const browser = () => (browserPromise ??= chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--headless=new'] }));
after(async () => {
  if (browserPromise) await (await browserPromise).close();
});

interface Seen {
  errors: string[];
  plotsReady: string | undefined;
  plotError: string;
  plots: { id: string; canvases: number; axisOverflow: string | undefined; axisRepeats: string | undefined }[];
  heads: string[];
  tableRight: number;
  statusRight: number;
  scrollWidth: number;
  innerWidth: number;
  swatches: { run: string; colour: string }[];
  lineStyles: { channel: string; dash: string }[];
}

/** Opens a report at the 1400 px window, waits for its plots, and reads what it shows; every page or console error is kept. */
async function open(file: string): Promise<Seen> {
  const page = await (await browser()).newPage({ viewport: WINDOW });
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => document.body.dataset.plotsReady !== undefined || document.body.dataset.plotsError !== undefined, null, { timeout: 15_000 });
    // (a string, not a function: tsx would wrap a function in a helper the page does not have)
    const seen = await page.evaluate(`(() => {
      const table = document.querySelector('table.runs');
      const ths = Array.from(table.querySelectorAll('thead th'));
      const status = ths.find((th) => th.textContent === 'status');
      return {
        plotsReady: document.body.dataset.plotsReady,
        plotError: document.getElementById('plot-status').textContent,
        plots: Array.from(document.querySelectorAll('[data-plot]')).map((el) => ({ id: el.dataset.plot, canvases: el.querySelectorAll('canvas').length, axisOverflow: el.dataset.axisOverflow, axisRepeats: el.dataset.axisRepeats })),
        heads: ths.map((th) => th.textContent.replace(/\u00AD/g, '')),
        tableRight: table.getBoundingClientRect().right,
        statusRight: status.getBoundingClientRect().right,
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
        swatches: Array.from(document.querySelectorAll('table.runs tbody tr')).filter((tr) => tr.querySelector('.swatch')).map((tr) => ({ run: tr.dataset.run, colour: getComputedStyle(tr.querySelector('.swatch')).backgroundColor })),
        lineStyles: Array.from(document.querySelectorAll('.line-style')).map((el) => ({ channel: el.dataset.channel, dash: el.dataset.dash })),
      };
    })()`);
    return { ...(seen as Omit<Seen, 'errors'>), errors };
  } finally {
    await page.close();
  }
}

const modelOf = (html: string) => JSON.parse(/<script type="application\/json" id="solverlab-data">(.*?)<\/script>/s.exec(html)![1]) as { plots: PlotSpec[] };
const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;

/** What every report here must show: no error, every plot drawn, the table inside the window, no axis label under its title. */
function checkPage(seen: Seen, plots: PlotSpec[]) {
  assert.deepEqual(seen.errors, [], 'page and console errors');
  assert.equal(seen.plotError, '', 'the chart script failed');
  assert.equal(seen.plotsReady, String(plots.length), 'every plot drawn');
  for (const p of seen.plots) {
    assert.equal(p.canvases, 1, `${p.id}: a canvas`);
    assert.equal(p.axisOverflow, '0', `${p.id}: y tick labels wider than their axis`);
    assert.equal(p.axisRepeats, '0', `${p.id}: tick labels that repeat another on the same axis`);
  }
  assert.ok(seen.tableRight <= WINDOW.width, `the runs table ends at ${seen.tableRight} px, beyond the ${WINDOW.width} px window`);
  assert.ok(seen.statusRight <= seen.innerWidth, `the status column ends at ${seen.statusRight} px`);
  assert.ok(seen.scrollWidth <= WINDOW.width, `the page scrolls sideways: ${seen.scrollWidth} px`);
}

test('the report of newtons-cradle and restitution (issue 22): an all-zero convergence channel draws; absent quantities have no panel', async (t) => {
  if (!haveBrowser(t)) return;
  const out = join(dir, 'cradle');
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/bin.ts', 'compare', '--scenes', 'newtons-cradle,restitution', '--solvers', 'pgs-cpu,softstep-cpu', '--frames', '60', '--out', out, '--quiet'],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResults;
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  const { plots } = modelOf(html);
  // the case of the issue: pgs-cpu's contact channels on the cradle are 0 at every iteration
  const cradle = results.runs.find((x) => x.scene === 'newtons-cradle' && x.solver === 'pgs-cpu') as RunRecord;
  assert.ok(Object.values(cradle.residuals!.channels).some((ys) => ys.every((y) => y === 0)), 'a channel all 0');
  const convergence = plots.find((p) => p.id === 'convergence:newtons-cradle')!;
  assert.ok(convergence.logY);
  for (const l of convergence.lines) if (l.y.every((y) => y === null)) assert.match(l.label, /all 0/);
  const seen = await open(join(out, 'report.html'));
  checkPage(seen, plots);
  // restitution: spheres on the ground, no joints: no violation panel, its table cells '—'
  assert.ok(!seen.plots.some((p) => p.id === 'violation:restitution'), 'no violation panel without joints');
  assert.ok(seen.plots.some((p) => p.id === 'violation:newtons-cradle'), 'the cradle has joints (its strings)');
  // CPU runs only: no GPU columns
  assert.ok(!seen.heads.some((h) => /dispatches|GB\/s/.test(h)), seen.heads.join(' | '));
  // energy as the change from the start: 0 at t = 0 on every line, the axis saying so
  for (const p of plots.filter((x) => x.kind === 'energy')) {
    assert.equal(p.yLabel, 'E − E₀ (J)');
    for (const l of p.lines) assert.equal(l.y[0], 0, `${p.id} ${l.label}`);
  }
  // the line styles: one per channel, the same channel the same style on every plot, and said in words
  const styles = new Map(seen.lineStyles.map((s) => [s.channel, s.dash]));
  assert.ok(styles.has('contact normal') && styles.has('friction') && styles.has('distance'), JSON.stringify(seen.lineStyles));
  assert.equal(new Set(styles.values()).size, styles.size, 'a style per channel');
  const dashOf = new Map<string, string>();
  for (const l of convergence.lines) {
    const channel = l.label.split(' · ')[1].replace(/ \(.*$/, '');
    const d = JSON.stringify(l.dash);
    assert.equal(dashOf.get(channel) ?? d, d, `${channel}: one line style`);
    dashOf.set(channel, d);
  }
  // colours: the palette's, one per solver, the same on every plot and in the table
  const colourOf = new Map<string, string>();
  for (const p of plots)
    for (const l of p.lines) {
      assert.ok(palette.includes(l.colour), `${l.colour} is not the palette's`);
      assert.equal(colourOf.get(l.solver) ?? l.colour, l.colour, `${l.solver}: one colour`);
      colourOf.set(l.solver, l.colour);
    }
  assert.equal(new Set(colourOf.values()).size, colourOf.size);
  for (const s of seen.swatches) assert.equal(s.colour, rgb(colourOf.get(s.run.split('/')[1])!), s.run);
});

test('a scene without joints: no violation columns or panel; a log plot that is 0 throughout goes linear; 1e-29 residuals draw', async (t) => {
  if (!haveBrowser(t)) return;
  const results = await runCompare({ scenes: ['restitution'], solvers: ['pgs-cpu', 'softstep-cpu'], frames: 30 });
  const ran = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  assert.equal(ran.length, 2);
  // residual curves of every kind a log axis can fail on, given to the two runs: a channel 0 throughout,
  // one that falls to 1e-29 (rounding level under a softstep solve), one that reaches 1e-300
  ran[0].residuals = { frame: 5, substep: 0, quantity: 'residual (m/s)', channels: { 'contact normal': [0, 0, 0], friction: [0, 0, 0] } };
  ran[1].residuals = { frame: 5, substep: 0, quantity: 'residual (m/s)', channels: { 'contact normal': [1.2081872566619811e-13, 1.035379938102578e-29], friction: [0.5, 1e-300] } };
  // step times in a narrow band (1.0000–1.0029 ms) and energies of 1.41e7 J drifting by millijoules: tick
  // labels of 4 significant digits read '1' or '1.41e+7' on every tick (the pyramid's energy axis)
  for (const r of ran) {
    r.timing.msPerFrame = r.timing.msPerFrame.map((_, i) => 1 + 1e-4 * i);
    r.series = r.series.map((p, i) => ({ ...p, energy: 1.41e7 + 1e-3 * i }));
  }
  const html = renderReport(results);
  const file = join(dir, 'restitution.html');
  writeFileSync(file, html);
  const { plots } = modelOf(html);
  assert.deepEqual(plots.map((p) => p.kind).sort(), ['awake', 'convergence', 'energy', 'penetration', 'time'].sort());
  // spheres resting on the ground overlap by nothing: the penetration is 0 throughout, drawn on a linear axis
  const pen = plots.find((p) => p.kind === 'penetration')!;
  if (pen.lines.every((l) => l.y.every((y) => y === null || y <= 0))) assert.equal(pen.logY, false, 'all 0: linear');
  const seen = await open(file);
  checkPage(seen, plots);
  assert.ok(!seen.heads.some((h) => /violation/.test(h)), `violation columns on a scene without joints: ${seen.heads.join(' | ')}`);
  // the printed table and the CSV too
  const { formatCompareTable, compareCsv } = await import('../src/bench/table.js');
  assert.doesNotMatch(formatCompareTable(results).split('\n')[0], /max C/);
  assert.doesNotMatch(compareCsv(results).split('\n')[0], /violation/);
});

test('the widest table (options, joints, contacts, awake, GPU columns, a divergence) fits a 1400 px window', async (t) => {
  if (!haveBrowser(t)) return;
  const results = await runCompare({
    scenes: ['pendulum', 'single-box'],
    solvers: ['jacobi-gpu', { id: 'pgs-cpu', settings: { iterations: 2 } }, 'softstep-cpu', 'xpbd-cpu'],
    frames: 20,
  });
  // a divergence note of the length the divergence watch writes
  const victim = results.runs.find((r): r is RunRecord => !isSkipped(r) && r.scene === 'single-box')!;
  victim.diverged = { frame: 12, t: 0.2, reason: 'runaway energy: E − E₀ = 1.2e+6 J beyond its bound 10 E_scale = 98.1 J, and growing: its peaks in the last 4 sampled 20-frame windows 1e+3 → 1e+4 → 1e+5 → 1.2e+6 J' };
  const gpu = results.runs.some((r) => !isSkipped(r) && r.solver === 'jacobi-gpu');
  t.diagnostic(`runs: ${results.runs.map((r) => `${r.scene}/${runLabel(r)}: ${isSkipped(r) ? 'skipped' : 'ran'}`).join(', ')}`);
  const html = renderReport(results);
  const file = join(dir, 'wide.html');
  writeFileSync(file, html);
  const seen = await open(file);
  checkPage(seen, plotSpecs(results));
  for (const h of ['options', 'worst max violation (m)', 'worst penetration (m)', 'contacts', 'status']) assert.ok(seen.heads.includes(h), `${h}: ${seen.heads.join(' | ')}`);
  if (gpu) assert.ok(seen.heads.includes('dispatches / frame'), 'a GPU run: its columns');
});
