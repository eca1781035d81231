/**
 * The HTML report of `solverlab compare`, opened in headless Chromium: every plot
 * is drawn (a canvas of non-zero size with the solvers' line colours on it), the
 * table has one row per run with skipped and diverged runs saying so, nothing
 * prints NaN or undefined, the page logs no error and asks the network for nothing.
 *
 * Two reports: one from the `compare` command (the real path), and one built here
 * from runSolver + runRecord with a skipped run, a diverged run and a residual
 * curve, so each kind of row and plot is seen whatever the solvers record.
 *
 * The browser is /usr/bin/chromium (Debian's `chromium`, installed by scripts/setup.sh).
 * Without it the browser tests are skipped, except under CI, where that is a failure.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { findRigidScene } from '../src/scenes/registry.js';
import { resolveParams } from '../src/scenes/scene.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { defaultSolverOptions } from '../src/solvers/solver.js';
import { runSolver } from '../src/run/run.js';
import { runRecord, isSkipped, runLabel, type CompareResults, type RunRecord } from '../src/bench/results.js';
import { formatNumber as fmt } from '../src/bench/table.js';
import { renderReport, findUplot, jsonForScript, fmtSci, plotSpecs, uplotFiles, costQualitySpecs, type PlotSpec, type CostQualitySpec, type CostQualityPoint } from '../src/bench/report-html.js';
import { chromiumPath, haveBrowser } from './support/browser.js';

const dir = mkdtempSync(join(tmpdir(), 'solverlab-report-'));

let browserPromise: Promise<Browser> | null = null;
function browser(): Promise<Browser> {
  browserPromise ??= chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--headless=new'] });
  return browserPromise;
}
after(async () => {
  if (browserPromise) await (await browserPromise).close();
});


interface PlotSeen {
  id: string;
  canvases: number;
  width: number;
  height: number;
  /** pixels drawn (alpha > 0): axes, grid and lines */
  inked: number;
  /** line colour (#rrggbb) → pixels of that colour */
  colours: Record<string, number>;
}

interface PageSeen {
  plotsReady: string | undefined;
  plotError: string;
  plots: PlotSeen[];
  noResiduals: string[];
  rows: { run: string; text: string; className: string; colour: string | null }[];
  text: string;
  consoleErrors: string[];
  requests: string[];
  model: { plots: PlotSpec[] };
}

/** Opens a report file, waits until its plots are drawn (or fail) and reads what the page shows. */
async function inspect(file: string): Promise<PageSeen> {
  const b = await browser();
  const page = await b.newPage({ viewport: { width: 1200, height: 900 } });
  try {
    const url = pathToFileURL(file).href;
    const consoleErrors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    await page.route('**/*', (route) => {
      const u = route.request().url();
      if (u === url) return route.continue();
      requests.push(u);
      return route.abort();
    });
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.plotsReady !== undefined || document.body.dataset.plotsError !== undefined, null, {
      timeout: 15_000,
    });
    let model: { plots: PlotSpec[] } = { plots: [] };
    try {
      model = JSON.parse((await page.textContent('#solverlab-data')) ?? '');
    } catch {
      // the broken-page test: the model is not JSON
    }
    const lineColours = Object.fromEntries(
      model.plots.map((p) => [p.id, [...new Set(p.lines.map((l) => l.colour))].map((c) => [c, [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16))])]),
    ) as Record<string, [string, number[]][]>;
    // (no named function expressions in here: tsx would wrap them in a helper the page does not have)
    const seen = await page.evaluate((lineColours) => {
      const plots = Array.from(document.querySelectorAll<HTMLElement>('[data-plot]')).map((el) => {
        const canvases = el.querySelectorAll('canvas');
        const canvas = canvases[0];
        const out = { id: el.dataset.plot!, canvases: canvases.length, width: 0, height: 0, inked: 0, colours: {} as Record<string, number> };
        if (!canvas) return out;
        out.width = canvas.width;
        out.height = canvas.height;
        if (!canvas.width || !canvas.height) return out;
        const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
        const targets = lineColours[out.id] ?? [];
        for (const [c] of targets) out.colours[c] = 0;
        for (let i = 0; i < px.length; i += 4) {
          if (px[i + 3] === 0) continue;
          out.inked++;
          if (px[i + 3] < 200) continue;
          for (const [c, [r, g, b]] of targets)
            if (Math.abs(px[i] - r) + Math.abs(px[i + 1] - g) + Math.abs(px[i + 2] - b) < 60) out.colours[c]++;
        }
        return out;
      });
      const rows = Array.from(document.querySelectorAll<HTMLTableRowElement>('table.runs tbody tr')).map((tr) => {
        const flag = tr.querySelector('td.diverged');
        return { run: tr.dataset.run ?? '', text: tr.innerText, className: tr.className, colour: flag ? getComputedStyle(flag).color : null };
      });
      return {
        plotsReady: document.body.dataset.plotsReady,
        plotError: document.getElementById('plot-status')?.textContent ?? '',
        plots,
        noResiduals: Array.from(document.querySelectorAll<HTMLElement>('[data-no-plot]')).map((e) => e.dataset.noPlot!),
        rows,
        text: document.body.innerText,
      };
    }, lineColours);
    return { ...seen, consoleErrors, requests, model };
  } finally {
    await page.close();
  }
}

/** What every report must show, checked against the results it was made from. */
function checkReport(results: CompareResults, seen: PageSeen) {
  assert.equal(seen.plotError, '', `the chart script failed: ${seen.plotError}`);
  assert.deepEqual(seen.consoleErrors, [], 'console errors');
  assert.deepEqual(seen.requests, [], 'network requests');

  // per scene: violation, energy, time, and convergence or a sentence saying no residuals were recorded
  const expected: string[] = [];
  const noResiduals: string[] = [];
  for (const scene of results.scenes) {
    const ran = results.runs.filter((r): r is RunRecord => r.scene === scene && !isSkipped(r));
    if (!ran.length) continue;
    expected.push(`violation:${scene}`, `energy:${scene}`, `time:${scene}`);
    if (ran.some((r) => r.residuals && Object.keys(r.residuals.channels).length)) expected.push(`convergence:${scene}`);
    else noResiduals.push(`convergence:${scene}`);
  }
  assert.deepEqual(seen.plots.map((p) => p.id).sort(), expected.sort());
  assert.deepEqual(seen.noResiduals.sort(), noResiduals.sort());
  assert.equal(seen.plotsReady, String(expected.length), 'plotsReady counts the plots drawn');

  const ranSolvers = new Set<string>();
  const colourPixels = new Map<string, number>();
  for (const p of seen.plots) {
    assert.equal(p.canvases, 1, `${p.id}: one canvas`);
    assert.ok(p.width > 100 && p.height > 100, `${p.id}: canvas ${p.width}×${p.height}`);
    assert.ok(p.inked > 1000, `${p.id}: only ${p.inked} pixels drawn`);
    const spec = seen.model.plots.find((s) => s.id === p.id)!;
    // lines with data are drawn: some line colour is on the canvas (lines of equal data may hide one another)
    const withData = spec.lines.filter((l) => l.y.some((y, i) => y !== null && l.y[i + 1] != null));
    if (withData.length) assert.ok(withData.some((l) => p.colours[l.colour] > 20), `${p.id}: no line drawn (${JSON.stringify(p.colours)})`);
    for (const l of withData) {
      ranSolvers.add(l.solver);
      colourPixels.set(l.solver, (colourPixels.get(l.solver) ?? 0) + (p.colours[l.colour] ?? 0));
    }
  }
  for (const s of ranSolvers) assert.ok(colourPixels.get(s)! > 20, `${s}: its colour appears on no plot`);

  // the table: one row per run, in order; skipped and diverged runs say so
  assert.deepEqual(seen.rows.map((r) => r.run), results.runs.map((r) => `${r.scene}/${r.solver}`));
  results.runs.forEach((r, i) => {
    const row = seen.rows[i];
    if (isSkipped(r)) assert.ok(row.text.replace(/\s+/g, ' ').includes(`${r.refused ? 'refused' : 'skipped'}: ${r.skipped}`.replace(/\s+/g, ' ')), `${row.run}: ${row.text}`);
    else if (r.diverged) {
      const flat = (x: string) => x.replace(/\s+/g, ' ');
      assert.ok(flat(row.text).includes(flat(`DIVERGED at frame ${r.diverged.frame}: ${r.diverged.reason}`)), row.text);
      assert.equal(row.colour, 'rgb(204, 0, 0)', 'the divergence flag is red');
    } else assert.match(row.text, /\bok\b/);
  });
  assert.doesNotMatch(seen.text, /NaN|undefined|Infinity/);
  for (const key of ['createdAt', 'command'] as const) assert.ok(seen.text.includes(results[key]), `header shows ${key}`);
  assert.ok(seen.text.includes(results.machine.cpu), 'header shows the machine');
}

// --- the asset lookup and the text helpers (no browser) ----------------------------------------

test('uPlot is found beside the module first (the bundle), else as the uplot package', () => {
  const fromPackage = findUplot();
  assert.match(fromPackage.js, /node_modules[\\/]uplot[\\/]dist[\\/]uPlot\.iife\.min\.js$/);
  assert.ok(existsSync(fromPackage.css));
  // a bundle folder outside any node_modules: the copies beside the module are used
  const bundle = join(dir, 'bundle');
  mkdirSync(bundle);
  copyFileSync(fromPackage.js, join(bundle, uplotFiles.js));
  copyFileSync(fromPackage.css, join(bundle, uplotFiles.css));
  const beside = findUplot(pathToFileURL(join(bundle, 'solverlab.mjs')).href);
  assert.equal(beside.js, join(bundle, uplotFiles.js));
  assert.equal(beside.css, join(bundle, uplotFiles.css));
  // neither beside nor installed: an error that says what is missing
  const empty = join(tmpdir(), `solverlab-no-uplot-${process.pid}`);
  mkdirSync(empty, { recursive: true });
  assert.throws(() => findUplot(pathToFileURL(join(empty, 'solverlab.mjs')).href), /uPlot was not found/);
});

test('inlined JSON cannot close its script element; numbers never print as NaN', () => {
  const text = jsonForScript({ a: '</script><script>alert(1)</script>', b: '<!-- x' });
  assert.ok(!text.includes('<'));
  assert.deepEqual(JSON.parse(text), { a: '</script><script>alert(1)</script>', b: '<!-- x' });
  for (const x of [NaN, Infinity, null, undefined]) {
    assert.equal(fmt(x as number), '—');
    assert.equal(fmtSci(x as number), '—');
  }
  assert.equal(fmt(12345.6), '12,346');
  assert.equal(fmt(0.5), '0.5');
  assert.equal(fmtSci(3.14159e-5), '3.14e-5');
  assert.ok(!readFileSync(findUplot().js, 'utf8').includes('<!--'), 'the inlined chart library has no "<!--"');
});

// --- the report in the browser -----------------------------------------------------------------

/** A compare's results built directly: jacobi-cpu on the pendulum (with a residual curve) and on the
 *  10-bead hanging chain (warm-started, it diverges within 2 s), and a skipped run on each scene. */
async function fixture(): Promise<CompareResults> {
  const runs: CompareResults['runs'] = [];
  const options = { ...defaultSolverOptions };
  for (const [name, frames] of [['pendulum', 90], ['hanging-chain', 300]] as const) {
    const scene = findRigidScene(name)!;
    const params = resolveParams(scene, name === 'hanging-chain' ? { beads: 10 } : {});
    const world = scene.build(params);
    const solver = new JacobiCpuSolver(world, options);
    const withResiduals = name === 'pendulum' && typeof solver.stepRecordingResiduals === 'function';
    const r = await runSolver(solver, world, { frames, residualFrame: withResiduals ? 10 : undefined });
    const record = runRecord({ scene: name, params, options }, r);
    if (name === 'pendulum' && !record.residuals)
      record.residuals = { frame: 10, substep: 0, quantity: 'residual (m/s²)', channels: { all: [1, 0.4, 0.1, 0.03, 0.01, 0.002, 0.0008, 2e-4, 1e-4] } };
    runs.push(record);
    runs.push({ scene: name, params, solver: 'jacobi-gpu', skipped: 'no WebGPU adapter <found> & "none" asked </script>' });
  }
  assert.ok((runs[2] as RunRecord).diverged, 'the fixture needs a diverged run');
  return {
    createdAt: '2025-01-02T03:04:05.000Z',
    command: 'solverlab compare --scenes pendulum,hanging-chain --solvers jacobi-cpu,jacobi-gpu (fixture)',
    machine: { os: 'Linux 6.1 x64', cpu: 'Test CPU <8 cores>', cores: 8, memoryGiB: 31.3, node: process.version, adapters: [] },
    versions: { solverlab: '0.1.0', uplot: '1.6.32' },
    frames: 300,
    scenes: ['pendulum', 'hanging-chain'],
    solvers: ['jacobi-cpu', 'jacobi-gpu'],
    runs,
  };
}

test('a report with a skipped run, a diverged run and a residual curve: every plot drawn, every row right', async (t) => {
  if (!haveBrowser(t)) return;
  const results = await fixture();
  const specs = plotSpecs(results);
  assert.deepEqual(specs.map((p) => p.id), ['violation:pendulum', 'energy:pendulum', 'time:pendulum', 'convergence:pendulum', 'violation:hanging-chain', 'energy:hanging-chain', 'time:hanging-chain']);
  const file = join(dir, 'fixture.html');
  writeFileSync(file, renderReport(results));
  const seen = await inspect(file);
  checkReport(results, seen);
  assert.deepEqual(seen.noResiduals, ['convergence:hanging-chain']);
  // one solver ran per scene, so every line's own colour must be on its plot
  for (const p of seen.plots) for (const [c, n] of Object.entries(p.colours)) assert.ok(n > 20, `${p.id}: colour ${c} has ${n} pixels`);
});

test('a chart script failure is shown in the page, not a blank report', async (t) => {
  if (!haveBrowser(t)) return;
  const html = renderReport(await fixture()).replace(/(<script type="application\/json" id="solverlab-data">)/, '$1{broken');
  const file = join(dir, 'broken.html');
  writeFileSync(file, html);
  const seen = await inspect(file);
  assert.match(seen.plotError, /The plots could not be drawn: .*JSON/s);
  assert.equal(seen.plotsReady, undefined);
  assert.ok(seen.consoleErrors.length > 0, 'the error is logged too');
  assert.equal(seen.rows.length, 4, 'the table is still there');
});

test('solverlab compare writes report.html: every plot drawn, one row per run, offline, no console errors', async (t) => {
  if (!haveBrowser(t)) return;
  const out = join(dir, 'compare');
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/bin.ts', 'compare', '--scenes', 'pendulum,hanging-chain', '--solvers', 'jacobi-cpu,jacobi-gpu', '--frames', '60', '--out', out, '--quiet'],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareResults;
  assert.equal(results.runs.length, 4);
  const seen = await inspect(join(out, 'report.html'));
  checkReport(results, seen);
  t.diagnostic(`runs: ${results.runs.map((x) => `${x.scene}/${x.solver}: ${isSkipped(x) ? 'skipped' : x.diverged ? 'diverged' : 'ok'}`).join(', ')}`);
});

test("the options column: each run shows only its solver's options, and no option breaks across lines", async (t) => {
  if (!haveBrowser(t)) return;
  const out = join(dir, 'options');
  const ids = ['jacobi-cpu', 'global-cpu', 'rapier-multibody'];
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'compare', '--scenes', 'pendulum', '--solvers', ids.join(','), '--frames', '20', '--out', out, '--quiet'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const page = await (await browser()).newPage({ viewport: { width: 1280, height: 800 } });
  try {
    await page.goto(pathToFileURL(join(out, 'report.html')).href);
    const cells = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLTableRowElement>('table.runs tbody tr')).map((tr) => {
        const td = tr.querySelector<HTMLElement>('td.options');
        const lineHeight = td ? parseFloat(getComputedStyle(td).lineHeight) || 15 : 0;
        return {
          run: tr.dataset.run!,
          text: td?.textContent ?? null,
          lines: td ? Math.round((td.getBoundingClientRect().height - 6) / lineHeight) : 0,
          // an option whose text is laid out on more than one line box
          broken: td ? Array.from(td.querySelectorAll('.opt')).filter((s) => s.getClientRects().length > 1).map((s) => s.textContent) : [],
          parts: td ? td.querySelectorAll('.opt').length : 0,
        };
      }),
    );
    t.diagnostic(JSON.stringify(cells));
    const cell = (id: string) => cells.find((c) => c.run === `pendulum/${id}`)!;
    for (const id of ids) {
      const c = cell(id);
      assert.ok(c.text, `${id}: an options cell`);
      assert.deepEqual(c.broken, [], `${id}: options broken across lines`);
      assert.ok(c.lines <= c.parts, `${id}: ${c.lines} lines for ${c.parts} options`);
    }
    assert.doesNotMatch(cell('rapier-multibody').text!, /β|warm start/, 'rapier-multibody uses neither');
    assert.doesNotMatch(cell('global-cpu').text!, /\d+ iterations?\b/, 'global-cpu reads no iterations');
    assert.match(cell('global-cpu').text!, /direct LDLᵀ/);
    assert.match(cell('jacobi-cpu').text!, /8 iterations · 1 substep · β 0\.2\/h · warm start 1/);
  } finally {
    await page.close();
  }
});

// --- the cost–quality figure -------------------------------------------------------------------

/** A compare with settings: pgs-cpu at 2 and 20 sweeps beside jacobi-cpu on a hanging chain (joints), and
 *  softstep-cpu beside pgs-cpu at 4 and 20 sweeps on a three-box stack, sleeping off (contacts, no joints). */
async function settingsResults(): Promise<CompareResults> {
  const { runCompare } = await import('../src/bench/compare.js');
  return runCompare({
    scenes: ['long-chain', 'vertical-stack'],
    params: { beads: 20, boxes: 3 },
    solvers: [{ id: 'pgs-cpu', settings: { iterations: 2 } }, { id: 'pgs-cpu', settings: { iterations: 20 } }, 'jacobi-cpu', 'softstep-cpu'],
    options: { sleep: 0 },
    frames: 30,
  });
}

let settingsPromise: Promise<CompareResults> | null = null;
const settingsOnce = () => (settingsPromise ??= settingsResults());

test('the cost–quality figure: one point per run, at its mean ms and worst figure, the frontier the runs no other beats', async () => {
  const results = await settingsOnce();
  const html = renderReport(results);
  const model = JSON.parse(/<script type="application\/json" id="solverlab-data">(.*?)<\/script>/s.exec(html)![1]) as { figures: CostQualitySpec[] };
  // the chain has joints and no contacts: the violation; the stack has contacts and no joints: the penetration
  assert.deepEqual(model.figures.map((f) => f.id), ['cost-quality-violation:long-chain', 'cost-quality-penetration:vertical-stack']);
  for (const f of model.figures) {
    const ran = results.runs.filter((r): r is RunRecord => r.scene === f.scene && !isSkipped(r));
    assert.ok(ran.length >= 3, `${f.scene}: ${ran.length} runs`);
    // one point per run, named by the run's label, where the table puts it
    assert.deepEqual(f.points.map((p) => p.label), ran.map(runLabel));
    assert.deepEqual(f.missing, []);
    ran.forEach((r, i) => {
      const p = f.points[i];
      assert.equal(p.ms, r.timing.meanMs, 'the mean frame: total ÷ frames');
      assert.equal(p.worst, f.measure === 'violation' ? r.violation.worstMax : r.contacts!.worstMaxPenetration);
      assert.equal(p.diverged, r.diverged !== null);
    });
    assert.equal(new Set(f.points.map((p) => p.colour)).size, f.points.length, 'a colour per run');
    // the frontier, by its definition: a run is on it exactly when no other run (not diverged) costs no more,
    // is off by no more, and is better in one of the two
    const dominates = (a: CostQualityPoint, b: CostQualityPoint) => !a.diverged && a !== b && a.ms <= b.ms && a.worst <= b.worst && (a.ms < b.ms || a.worst < b.worst);
    for (const p of f.points) assert.equal(p.frontier, !p.diverged && !f.points.some((q) => dominates(q, p)), `${f.id} ${p.label}`);
    assert.ok(f.points.some((p) => p.frontier), 'the cheapest run that did not diverge is always on it');
    // the figure says which clock and which quality it shows, on its axis and in its caption
    assert.match(f.xLabel, /^mean ms per frame, wall clock/);
    assert.match(f.yLabel, f.measure === 'violation' ? /^worst max violation \(m\)/ : /^worst penetration \(m\)/);
  }
  assert.match(html, /<figure class="plot cost-quality" data-figure="cost-quality-violation:long-chain">\s*<figcaption><b>Cost against quality<\/b> — One point per run: the mean ms per frame \(total time ÷ frames\) on the wall clock against the worst max constraint violation/);
  assert.match(html, /data-figure="cost-quality-penetration:vertical-stack">\s*<figcaption><b>Cost against quality<\/b> — One point per run: the mean ms per frame \(total time ÷ frames\) on the wall clock against the worst penetration/);
  // the runs' rows and plot lines are named by label too
  assert.ok(html.includes('data-run="long-chain/pgs-cpu:iterations=20"'));
  assert.ok(plotSpecs(results).find((p) => p.id === 'violation:long-chain')!.lines.some((l) => l.label === 'pgs-cpu:iterations=2'));
  // a scene where one run ran has no such figure (nothing to weigh it against)
  const one = { ...results, runs: results.runs.filter((r) => runLabel(r) === 'jacobi-cpu') };
  assert.deepEqual(costQualitySpecs(one, 'long-chain'), []);
});

test('the cost–quality figure in the browser: drawn, every run’s point in its colour on the canvas, labelled', async (t) => {
  if (!haveBrowser(t)) return;
  const results = await settingsOnce();
  const file = join(dir, 'settings.html');
  writeFileSync(file, renderReport(results));
  const page = await (await browser()).newPage({ viewport: { width: 1200, height: 900 } });
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => document.body.dataset.figuresReady !== undefined || document.body.dataset.plotsError !== undefined, null, { timeout: 15_000 });
    const model = JSON.parse((await page.textContent('#solverlab-data')) ?? '') as { figures: CostQualitySpec[] };
    const seen = await page.evaluate((figures) => {
      return {
        ready: document.body.dataset.figuresReady,
        error: document.getElementById('plot-status')?.textContent ?? '',
        figures: figures.map((f) => {
          const canvas = document.querySelector<HTMLElement>(`[data-figure="${f.id}"]`)?.querySelector('canvas');
          const counts: Record<string, number> = {};
          if (canvas && canvas.width && canvas.height) {
            const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
            const targets = f.points.map((p) => [p.colour, [1, 3, 5].map((i) => parseInt(p.colour.slice(i, i + 2), 16))] as [string, number[]]);
            for (const [c] of targets) counts[c] = 0;
            for (let i = 0; i < px.length; i += 4) {
              if (px[i + 3] < 200) continue;
              for (const [c, [r, g, b]] of targets) if (Math.abs(px[i] - r) + Math.abs(px[i + 1] - g) + Math.abs(px[i + 2] - b) < 60) counts[c]++;
            }
          }
          const labels = document.querySelector<HTMLElement>(`[data-figure="${f.id}"]`)?.dataset.labelsDrawn;
          return { id: f.id, canvas: canvas ? [canvas.width, canvas.height] : null, counts, labels, points: f.points.length };
        }),
      };
    }, model.figures);
    t.diagnostic(JSON.stringify(seen));
    assert.equal(seen.error, '');
    assert.deepEqual(errors, []);
    assert.equal(seen.ready, String(model.figures.length));
    for (const f of seen.figures) {
      assert.ok(f.canvas && f.canvas[0] > 100 && f.canvas[1] > 100, `${f.id}: canvas ${f.canvas}`);
      // a point is a disc of 11 px (its area about 95 px); the runs' times are measured, so two points may
      // fall on one another (seen: 20 px of a disc showing beside another's): each colour must show, and
      // the labels below count every point
      for (const [c, n] of Object.entries(f.counts)) assert.ok(n > 0, `${f.id}: the point of colour ${c} has ${n} pixels`);
      assert.equal(f.labels, String(f.points), `${f.id}: a label drawn beside every point`);
    }
  } finally {
    await page.close();
  }
});
