/**
 * The HTML report of `solverlab compare`: one self-contained file that opens
 * offline — the chart library (uPlot, its JS and CSS), the page's own script and
 * the plot data (JSON) are all inlined; the page makes no network request.
 *
 *   header   title, when, the command, the machine, adapters, versions
 *   table    one row per scene × solver entry, its status (ok, skipped, DIVERGED) beside its name;
 *            speed from the mean frame (total ÷ frames: steps/s, × first) with the mean, median and
 *            p95 ms, each header naming its statistic; a column only where some run has what it
 *            measures (tableColumns: the violation where a scene has joints, worst penetration and
 *            contacts where a run has contacts, awake at end where a run sleeps (results.ts
 *            showsSleep), dispatches and GB/s where a GPU run has them; '—' for the others). The
 *            table fits a 1400 px window. An entry with settings of its
 *            own (`rapier:iterations=4`) is named by its label (results.ts runLabel) here, in the
 *            plots' legends and in the figures, and has a colour of its own (palette: colour-blind safe).
 *   figures  per scene where two runs or more ran, cost against quality: one point per run, the
 *            mean ms per frame (total ÷ frames, its clock named) against the worst max violation (scenes with
 *            constraints) or the worst penetration (scenes with contacts), log axes where the figures
 *            span more than 30×, each point labelled, the frontier (the runs no other beats in both)
 *            joined by a dashed line:
 *              cost-quality-violation:<scene>, cost-quality-penetration:<scene>
 *   plots    per scene, one line per solver (one colour per solver across the page):
 *              violation:<scene>    max constraint violation against time, log y (scenes with joints)
 *              penetration:<scene>  deepest contact penetration against time, log y (scenes where
 *                                   some run has contacts: collisions on)
 *              awake:<scene>        dynamic bodies awake against time (scenes where some run sleeps)
 *              energy:<scene>       the change of the total energy from the start, E − E₀ (J), against time
 *              time:<scene>         ms per step against frame index
 *              convergence:<scene>  residual against iteration, log y, one line per
 *                                   solver × channel (or a sentence when no solver
 *                                   recorded residuals); the dimensionless λ-error
 *                                   channel (‖λᵏ − λ*‖/‖λ*‖) on its own right-hand log axis; a line
 *                                   style per channel, said in a legend under the plot
 *            A log plot with no positive value is drawn linear; a line with none says 'all 0'
 *            (fitLogPlot). Log axes split at exact powers of ten (the page's logSplits), and each y
 *            axis is as wide as its widest tick label (fitAxis), so its title never overlaps them.
 *
 * Invariants:
 *   - the table is written here, as HTML; the page's script only draws the plots,
 *     from the JSON model `plotSpecs` builds (x and y arrays per line, null = gap);
 *   - no number is printed as NaN, Infinity or undefined: missing figures are '—';
 *   - every plot sits in an element with a stable `data-plot="<kind>:<scene>"`;
 *     when all plots have been drawn the page sets `document.body.dataset.plotsReady`
 *     to their count; an error in the chart script is shown in the page
 *     (#plot-status) and logged to the console;
 *   - every cost–quality figure sits in an element with `data-figure="<id>"` (the model's
 *     `figures`, costQualitySpecs), counted apart from the plots in `dataset.figuresReady`;
 *     the element's `data-labels-drawn` counts the point labels drawn on its canvas.
 *
 * The uPlot files are looked up beside this module first (the bundled CLI,
 * dist/solverlab/, has them copied beside solverlab.mjs by scripts/bundle.mjs),
 * then as the `uplot` package from this module's node_modules.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSkipped, showsSleep, runLabel, meanFrameMs, type CompareResults, type RunRecord, type SkippedRun } from './results.js';
import { formatNumber as fmt, optionsText, optionsParts, holdsLegend } from './table.js';
import { lengthText } from './holds.js';
import { findSolver } from '../solvers/registry.js';
import type { ParamValue } from '../scenes/scene.js';
import { isParticleSolver } from '../solvers/witkin/registry.js';
import { STAGE_SAMPLE_EVERY } from '../solvers/stages.js';
import type { SolverOptions } from '../solvers/solver.js';
import { LAMBDA_ERROR_CHANNEL, LAMBDA_ERROR_QUANTITY } from '../solvers/global/lambda-error.js';

// ---------------------------------------------------------------------------------------------
// the chart library's files

export const uplotFiles = { js: 'uPlot.iife.min.js', css: 'uPlot.min.css', license: 'uPlot.LICENSE' } as const;

export interface UplotPaths {
  js: string;
  css: string;
  /** the MIT licence text, when found (its copyright line is kept in the report) */
  license: string | null;
}

/**
 * Where the uPlot files are: beside `moduleUrl` (the bundle), else the `uplot`
 * package as Node resolves it from `moduleUrl` (the repository, an npm install).
 */
export function findUplot(moduleUrl: string = import.meta.url): UplotPaths {
  const here = dirname(fileURLToPath(moduleUrl));
  const beside = { js: join(here, uplotFiles.js), css: join(here, uplotFiles.css), license: join(here, uplotFiles.license) };
  if (existsSync(beside.js) && existsSync(beside.css)) return { ...beside, license: existsSync(beside.license) ? beside.license : null };
  const require = createRequire(moduleUrl);
  try {
    const js = require.resolve(`uplot/dist/${uplotFiles.js}`);
    const css = require.resolve(`uplot/dist/${uplotFiles.css}`);
    const license = join(dirname(js), '..', 'LICENSE');
    return { js, css, license: existsSync(license) ? license : null };
  } catch {
    throw new Error(
      `the chart library uPlot was not found: neither ${uplotFiles.js} and ${uplotFiles.css} beside ${here} ` +
        `nor the 'uplot' package (npm install uplot)`,
    );
  }
}

let cachedAssets: { js: string; css: string } | null = null;

function uplotAssets(): { js: string; css: string } {
  if (cachedAssets) return cachedAssets;
  const paths = findUplot();
  let js = readFileSync(paths.js, 'utf8');
  const copyright = paths.license ? /^Copyright.*$/m.exec(readFileSync(paths.license, 'utf8'))?.[0] : undefined;
  if (copyright) js = `/*! uPlot — MIT License — ${copyright} */\n${js}`;
  cachedAssets = { js, css: readFileSync(paths.css, 'utf8') };
  return cachedAssets;
}

// ---------------------------------------------------------------------------------------------
// text helpers: HTML escaping, numbers for people

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON that can sit inside <script>: no '<' survives (so no '</script' nor '<!--'). */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Script or style text inlined in the page: '</' becomes '<\/' so it cannot close its element. */
function inlineText(text: string): string {
  return text.replace(/<\/(script|style)/gi, '<\\/$1');
}

const DASH = '—';

function isNum(x: number | null | undefined): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

/** e-notation for lengths that span many decades (violations). */
export function fmtSci(x: number | null | undefined): string {
  if (!isNum(x)) return DASH;
  return x === 0 ? '0' : x.toExponential(2);
}

function fmtSigned(x: number | null | undefined): string {
  if (!isNum(x)) return DASH;
  return (x > 0 ? '+' : '') + fmt(x);
}

const clockNames: Record<string, string> = { 'gpu-timestamp': 'GPU timestamps', wall: 'wall' };

function clockName(clock: string): string {
  return clockNames[clock] ?? clock;
}


function paramsText(p: Record<string, ParamValue>): string {
  const e = Object.entries(p);
  return e.length ? e.map(([k, v]) => `${k}=${Array.isArray(v) ? v.map((x) => fmt(x, 6)).join(',') : fmt(v, 6)}`).join(', ') : 'defaults';
}

// ---------------------------------------------------------------------------------------------
// colours and the plot model

/**
 * One colour per solver entry (runLabel: a solver listed at several settings gets one colour per setting),
 * in the order of results.solvers (then any other met in runs), the same on every plot, figure and swatch
 * of the page. The palette is made for colour-blind readers and many series: the Okabe–Ito colours (Okabe
 * & Ito 2008, "Color Universal Design"; their yellow left out, too pale for a line on white, and their black,
 * the axes' colour), then Paul Tol's muted wine, olive and indigo (Tol 2021, "Colour schemes", the muted
 * qualitative scheme), which stay apart from those six for the common colour-vision deficiencies.
 */
export const palette = ['#0072B2', '#D55E00', '#009E73', '#E69F00', '#CC79A7', '#56B4E9', '#882255', '#999933', '#332288'];
/**
 * Line styles on the convergence plot, one per channel (its name: the same channel the same style on
 * every plot of the page, in the order met), said in a legend under the plot (channelStyles).
 */
const dashes: (number[] | null)[] = [null, [8, 4], [2, 3], [10, 3, 2, 3], [4, 4]];
/** Each dash pattern in words and as text, for the legend of line styles. */
const dashNames = ['solid', 'dashed', 'dotted', 'dash-dot', 'short dashes'];

export function solverColours(results: CompareResults): Map<string, string> {
  const ids = [...results.solvers];
  for (const r of results.runs) if (!ids.includes(runLabel(r))) ids.push(runLabel(r));
  return new Map(ids.map((id, i) => [id, palette[i % palette.length]]));
}

export type PlotKind = 'violation' | 'penetration' | 'awake' | 'energy' | 'time' | 'convergence';

export interface PlotLine {
  label: string;
  /** the run's label (runLabel): the solver's id, with its settings where its compare entry had some */
  solver: string;
  colour: string;
  dash: number[] | null;
  x: number[];
  /** null = a gap (not measured, not finite, or ≤ 0 on a log axis) */
  y: (number | null)[];
  /** 'error': drawn against the plot's right-hand axis (y2Label), not the left one */
  scale?: 'error';
}

export interface PlotSpec {
  /** `${kind}:${scene}`, the container's data-plot attribute */
  id: string;
  kind: PlotKind;
  scene: string;
  title: string;
  xLabel: string;
  yLabel: string;
  logY: boolean;
  /** label of a right-hand log axis for the lines with scale 'error' (other units than yLabel's) */
  y2Label?: string;
  /** drawn as steps (a count that holds between samples), not straight segments */
  stepped?: boolean;
  lines: PlotLine[];
}

function plotValue(x: number | null | undefined, log: boolean): number | null {
  if (!isNum(x)) return null;
  return log && x <= 0 ? null : x;
}

function scenesOf(results: CompareResults): string[] {
  const names = [...results.scenes];
  for (const r of results.runs) if (!names.includes(r.scene)) names.push(r.scene);
  return names;
}

function runsOf(results: CompareResults, scene: string): (RunRecord | SkippedRun)[] {
  return results.runs.filter((r) => r.scene === scene);
}

function ranRunsOf(results: CompareResults, scene: string): RunRecord[] {
  return runsOf(results, scene).filter((r): r is RunRecord => !isSkipped(r));
}

function withResiduals(runs: RunRecord[]): RunRecord[] {
  return runs.filter((r) => r.residuals && Object.keys(r.residuals.channels).length > 0);
}

/** Spread of the positive values (max / min), for choosing a log axis. */
function spread(lines: PlotLine[]): number {
  let lo = Infinity, hi = 0;
  for (const l of lines) for (const y of l.y) if (y !== null && y > 0) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
  return hi > 0 ? hi / lo : 1;
}

/**
 * The plots of one scene: violation, penetration (only where some run has contacts), awake bodies (only
 * where some run sleeps), energy, time and
 * convergence (only when some solver recorded residuals); none when every run was skipped.
 */
export function scenePlots(results: CompareResults, scene: string, colours = solverColours(results)): PlotSpec[] {
  const runs = ranRunsOf(results, scene);
  if (!runs.length) return [];
  const colour = (r: RunRecord) => colours.get(runLabel(r)) ?? palette[0];
  const line = (r: RunRecord, x: number[], y: (number | null)[], label = runLabel(r), dash: number[] | null = null): PlotLine => ({
    label, solver: runLabel(r), colour: colour(r), dash, x, y,
  });
  const plots: PlotSpec[] = [];
  // the joints' violation, only where the scene has joints (a contact-only scene has nothing to violate)
  const jointRuns = runs.filter((r) => r.constraints > 0);
  if (jointRuns.length)
    plots.push({
      id: `violation:${scene}`, kind: 'violation', scene,
      title: 'Max constraint violation', xLabel: 'time (s)', yLabel: 'max violation (m)', logY: true,
      lines: jointRuns.map((r) => line(r, r.series.map((p) => p.t), r.series.map((p) => plotValue(p.maxViolation, false)))),
    });
  // the deepest penetration over the contact points (m, recomputed from each snapshot: metrics/metrics.ts);
  // log y as the violation, zero (no overlap) a gap; only the runs with contacts, only on scenes that have some
  const contactRuns = runs.filter((r) => r.contacts);
  if (contactRuns.length)
    plots.push({
      id: `penetration:${scene}`, kind: 'penetration', scene,
      title: 'Max penetration', xLabel: 'time (s)', yLabel: 'max penetration (m)', logY: true,
      lines: contactRuns.map((r) => line(r, r.series.map((p) => p.t), r.series.map((p) => plotValue(p.maxPenetration, false)))),
    });
  // the dynamic bodies awake (read from each snapshot's sleep mask), linear y from 0: a count that drops as
  // islands fall asleep; every rigid run of the scene, once some run sleeps (the others then show as flat lines)
  const awakeRuns = runs.filter((r) => r.awake);
  if (awakeRuns.some(showsSleep))
    plots.push({
      id: `awake:${scene}`, kind: 'awake', scene,
      title: 'Awake bodies', xLabel: 'time (s)', yLabel: 'dynamic bodies awake', logY: false, stepped: true,
      lines: awakeRuns.map((r) => line(r, r.series.map((p) => p.t), r.series.map((p) => plotValue(p.awake, false)))),
    });
  // the change of the total energy from the start, E − E₀ in J: the drift, readable whatever E₀ is (a pile of
  // boxes holds 1e7 J of potential energy over the datum, and its drift of a few J vanishes on an axis of E)
  plots.push({
    id: `energy:${scene}`, kind: 'energy', scene,
    title: 'Energy change from the start', xLabel: 'time (s)', yLabel: 'E − E₀ (J)', logY: false,
    lines: runs.map((r) => {
      const e0 = r.series[0]?.energy ?? null;
      return line(r, r.series.map((p) => p.t), r.series.map((p) => (isNum(e0) && isNum(p.energy) ? p.energy - e0 : null)));
    }),
  });
  const timeLines = runs.map((r) =>
    line(r, r.timing.msPerFrame.map((_, i) => i + 1), r.timing.msPerFrame.map((y) => plotValue(y, false)), `${runLabel(r)} (${clockName(r.timing.clock)})`),
  );
  const logTime = spread(timeLines) > 30; // solvers far apart (CPU vs GPU): one decade per grid line reads better
  if (logTime) for (const l of timeLines) l.y = l.y.map((y) => (y !== null && y > 0 ? y : null));
  plots.push({
    id: `time:${scene}`, kind: 'time', scene,
    title: 'Time per step', xLabel: 'frame', yLabel: `ms per step${logTime ? ' (log)' : ''}`, logY: logTime, lines: timeLines,
  });
  const res = withResiduals(runs);
  if (res.length) {
    // the axis says 'residual'; what it is (the quantity, with units) is written under the plots.
    // The λ-error channel is dimensionless, not a residual: its lines go on a right-hand axis of their own.
    // A channel's line style is the channel's own (channelDashes), the colour the run's.
    const styles = channelDashes(results);
    const lines = res.flatMap((r) =>
      Object.entries(r.residuals!.channels).map(([name, ys]) => {
        const l = line(r, ys.map((_, k) => k), ys.map((y) => plotValue(y, false)), `${runLabel(r)} · ${name}`, dashes[styles.get(name)! % dashes.length]);
        if (name === LAMBDA_ERROR_CHANNEL) {
          l.scale = 'error';
          l.label += ' (right axis)';
        }
        return l;
      }),
    );
    plots.push({
      id: `convergence:${scene}`, kind: 'convergence', scene,
      title: 'Convergence of one solve', xLabel: 'iteration', yLabel: 'residual', logY: true,
      ...(lines.some((l) => l.scale === 'error') ? { y2Label: 'λ error ‖λᵏ − λ*‖/‖λ*‖' } : {}),
      lines,
    });
  }
  for (const p of plots) if (p.logY) fitLogPlot(p); // lines hold every finite value until here: the log axis drops ≤ 0
  return plots;
}

/**
 * A log plot's lines as a log axis can show them: values ≤ 0 become gaps; a line with no positive value
 * (a residual channel that is 0 throughout, nothing overlapping) has no point on it and says so in its
 * label; a plot none of whose lines has a positive value is drawn on a linear axis instead, its zeros on it.
 */
function fitLogPlot(p: PlotSpec): void {
  const positive = (l: PlotLine) => l.y.some((y) => y !== null && y > 0);
  if (!p.lines.some(positive)) {
    p.logY = false;
    p.yLabel += ', linear: all 0';
    return;
  }
  for (const l of p.lines) {
    if (!positive(l)) l.label += ' (all 0: not on the log axis)';
    l.y = l.y.map((y) => plotValue(y, true));
  }
}

/** Each residual channel's place in the page's line styles: the channels in the order first met over every run. */
export function channelDashes(results: CompareResults): Map<string, number> {
  const order = new Map<string, number>();
  for (const r of results.runs) if (!isSkipped(r) && r.residuals) for (const name of Object.keys(r.residuals.channels)) if (!order.has(name)) order.set(name, order.size);
  return order;
}

export function plotSpecs(results: CompareResults): PlotSpec[] {
  const colours = solverColours(results);
  return scenesOf(results).flatMap((s) => scenePlots(results, s, colours));
}

// ---------------------------------------------------------------------------------------------
// the cost–quality figure: one point per run, what it costs against how far off it ends up

/** The quality a cost–quality figure shows: the worst max constraint violation, or the worst contact penetration (m). */
export type QualityMeasure = 'violation' | 'penetration';

export interface CostQualityPoint {
  /** the run's label (runLabel) */
  label: string;
  colour: string;
  /** mean ms per frame on the run's clock, total ÷ frames (results.ts meanFrameMs, the table's 'mean ms') */
  ms: number;
  clock: string;
  /** the worst of the measure over the sampled frames (m): violation.worstMax or contacts.worstMaxPenetration */
  worst: number;
  /** where the point is drawn on the y axis: `worst`, or where that is 0 on a log axis, the axis' floor */
  y: number;
  diverged: boolean;
  /** on the frontier: no other run that did not diverge costs no more and is off by no more, and less in one */
  frontier: boolean;
}

export interface CostQualitySpec {
  /** `cost-quality-${measure}:${scene}`, the container's data-figure attribute */
  id: string;
  scene: string;
  measure: QualityMeasure;
  xLabel: string;
  yLabel: string;
  /** log axes where the figures span more than a factor of 30 (as the time plot) */
  logX: boolean;
  logY: boolean;
  /** one per run of the scene that ran and has both figures, in the order of the runs */
  points: CostQualityPoint[];
  /** the runs that ran but have no point, and why (a figure missing) */
  missing: { label: string; why: string }[];
}

/**
 * The frontier of cost (x) against error (y), lower being better in both: sorted by cost (then error), a
 * point is on it when its error is below that of every cheaper point, i.e. no point dominates it.
 */
function markFrontier(points: CostQualityPoint[]): void {
  const order = points.filter((p) => !p.diverged).sort((a, b) => a.ms - b.ms || a.worst - b.worst);
  let best = Infinity;
  for (const p of order) {
    p.frontier = p.worst < best;
    if (p.frontier) best = p.worst;
  }
}

/**
 * A scene's cost–quality figures, where at least two runs ran: ms per frame against the worst max violation
 * when the scene has constraints, and against the worst penetration when some run has contacts.
 */
export function costQualitySpecs(results: CompareResults, scene: string, colours = solverColours(results)): CostQualitySpec[] {
  const runs = ranRunsOf(results, scene);
  if (runs.length < 2) return [];
  const measures: QualityMeasure[] = [];
  if (runs.some((r) => r.constraints > 0)) measures.push('violation');
  if (runs.some((r) => r.contacts)) measures.push('penetration');
  const clocks = new Set(runs.map((r) => r.timing.clock));
  const oneClock = clocks.size === 1 ? clockName([...clocks][0]) : null;
  return measures.map((measure) => {
    const points: CostQualityPoint[] = [];
    const missing: { label: string; why: string }[] = [];
    for (const r of runs) {
      const worst = measure === 'violation' ? r.violation.worstMax : (r.contacts?.worstMaxPenetration ?? null);
      const ms = meanFrameMs(r);
      if (!isNum(ms) || !(ms > 0)) missing.push({ label: runLabel(r), why: 'no step time' });
      else if (!isNum(worst) || worst < 0) missing.push({ label: runLabel(r), why: measure === 'violation' ? 'no violation figure' : 'no contacts' });
      else points.push({ label: runLabel(r), colour: colours.get(runLabel(r)) ?? palette[0], ms, clock: r.timing.clock, worst, y: worst, diverged: r.diverged !== null, frontier: false });
    }
    markFrontier(points);
    const spanOf = (xs: number[]) => (xs.length ? Math.max(...xs) / Math.min(...xs) : 1);
    const positive = points.map((p) => p.worst).filter((y) => y > 0);
    const logX = spanOf(points.map((p) => p.ms)) > 30;
    const logY = spanOf(positive) > 30;
    // a run exactly on the constraint (0) has no place on a log axis: drawn on a floor a decade below the least positive figure
    if (logY) for (const p of points) if (p.worst === 0) p.y = Math.min(...positive) / 10;
    return {
      id: `cost-quality-${measure}:${scene}`,
      scene,
      measure,
      xLabel: `mean ms per frame, ${oneClock ? `${oneClock} clock` : "each run's clock"}${logX ? ' (log)' : ''}`,
      yLabel: `${measure === 'violation' ? 'worst max violation' : 'worst penetration'} (m)${logY ? ' (log)' : ''}`,
      logX,
      logY,
      points,
      missing,
    };
  });
}

/** The figure's caption: which clock and which measure, how to read it. */
function costQualityCaption(f: CostQualitySpec): string {
  const clocks = [...new Set(f.points.map((p) => clockName(p.clock)))];
  const clock = clocks.length === 1 ? `the ${clocks[0]} clock` : `each run's own clock (${clocks.join(', ')}: not comparable with one another)`;
  const quality =
    f.measure === 'violation'
      ? 'the worst max constraint violation |C| over the sampled frames (m, recomputed from positions)'
      : 'the worst penetration over the contact points and the sampled frames (m, recomputed by collision detection)';
  const logs = [f.logX ? 'x' : '', f.logY ? 'y' : ''].filter(Boolean);
  return (
    `One point per run: the mean ms per frame (total time ÷ frames) on ${clock} against ${quality}${logs.length ? `; log ${logs.join(' and ')}` : ''}. ` +
    'Lower left is better; the dashed line joins the runs that no other run beats in both (the frontier). ' +
    'A diverged run is drawn hollow and is not on the frontier' +
    (f.points.some((p) => p.y !== p.worst) ? '; a run at 0 sits on the floor of the log axis, its label marked (0).' : '.')
  );
}

// ---------------------------------------------------------------------------------------------
// the page

const captions: Record<PlotKind, string> = {
  violation: 'Max joint constraint violation |C| (m) against time, log scale; gaps where a value is missing or zero (scenes with joints only).',
  awake: 'Dynamic bodies awake (not asleep) against time, from each frame’s sleep mask; a solver that never sleeps keeps every body awake.',
  penetration: 'Deepest penetration over the contact points (m) against time, recomputed from each frame’s state by collision detection, log scale; gaps where nothing overlaps (zero) or a value is missing.',
  energy: 'Change of the total energy (kinetic + gravitational potential) from its value at the start, E − E₀ in joules, against time: drift shows as a line leaving 0. The table gives the drift in % of |E₀|.',
  time: 'Milliseconds per step against frame index, on each solver’s clock (GPU: per-submission averages).',
  convergence: 'Residual after each iteration of one recorded solve, log scale; one line per solver × channel, the solver by its colour and the channel by its line style (the legend under the plot). A channel that is 0 throughout has no point on the log axis and is marked “all 0”. Where a solver records the λ error (the distance of its multipliers from the converged solution, dimensionless), it is drawn against the right-hand axis.',
};

function th(text: string, title?: string): string {
  return `<th${title ? ` title="${escapeHtml(title)}"` : ''}>${text}</th>`;
}

/**
 * The runs table's columns: [header, tooltip, cell]. A column is shown only where some run of the compare
 * has what it measures (`shown`): the violation columns where a scene has constraints, the contact
 * columns where a run has contacts, awake where a run sleeps, the GPU columns where a run has a figure
 * for them; a run of another scene shows '—' there. The speed figures say their statistic in the header.
 */
interface TableColumn {
  name: string;
  title?: string;
  cls?: string;
  shown?: (ran: RunRecord[]) => boolean;
  cell: (r: RunRecord) => string;
}

const td = (text: string, cls?: string) => `<td${cls ? ` class="${cls}"` : ''}>${text}</td>`;
const hasConstraints = (ran: RunRecord[]) => ran.some((r) => r.constraints > 0);

const tableColumns: TableColumn[] = [
  { name: 'steps/s (mean)', title: 'frames ÷ total wall time (1000 / the mean wall ms per step)', cell: (r) => td(fmt(r.timing.stepsPerSecond)) },
  {
    name: '× first (mean)', title: 'steps/s ÷ the steps/s of the first solver (of the compare) on the same scene: the ratio of the mean frame times',
    cell: (r) => td(isNum(r.stepsPerSecondRatio) ? `${fmt(r.stepsPerSecondRatio)}×` : DASH),
  },
  { name: 'mean ms', title: 'mean ms per step: total time ÷ frames, on the clock named', cell: (r) => td(fmt(meanFrameMs(r))) },
  { name: 'median ms', title: 'median ms per step, on the clock named (where most frames sleep, a sleeping frame)', cell: (r) => td(fmt(r.timing.medianMs)) },
  { name: 'p95 ms', title: '95th percentile ms per step, on the clock named', cell: (r) => td(fmt(r.timing.p95Ms)) },
  { name: 'clock', title: 'GPU: GPU timestamps; wall: the wall clock', cell: (r) => td(r.timing.clock === 'gpu-timestamp' ? 'GPU' : escapeHtml(clockName(r.timing.clock)), 'text') },
  { name: 'final max vio\u00ADlation (m)', title: 'max |C| over the joints at the last frame', shown: hasConstraints, cell: (r) => td(r.constraints > 0 ? fmtSci(r.violation.finalMax) : DASH) },
  { name: 'worst max vio\u00ADlation (m)', title: 'max |C| over the joints, worst over the sampled frames', shown: hasConstraints, cell: (r) => td(r.constraints > 0 ? fmtSci(r.violation.worstMax) : DASH) },
  {
    name: 'worst pene\u00ADtration (m)', title: 'the deepest penetration over the contact points, worst over the sampled frames (recomputed from each state by collision detection)',
    shown: (ran) => ran.some((r) => r.contacts), cell: (r) => td(fmtSci(r.contacts?.worstMaxPenetration), 'penetration'),
  },
  { name: 'contacts', title: 'contact points that touch (separation ≤ 5 mm) at the last frame', shown: (ran) => ran.some((r) => r.contacts), cell: (r) => td(fmt(r.contacts?.finalCount, 15), 'contacts') },
  {
    name: 'awake at end', title: 'dynamic bodies awake (not asleep) at the last frame, of all dynamic bodies', shown: (ran) => ran.some(showsSleep),
    cell: (r) => td(r.awake && r.awake.finalCount !== null ? `${fmt(r.awake.finalCount, 15)}/${fmt(r.awake.dynamicBodies, 15)}` : DASH, 'awake'),
  },
  {
    name: 'drift (m)', title: 'a scene built to stand still: the farthest any body got, at a sampled frame, from where it was after settling',
    shown: (ran) => ran.some((r) => r.rest), cell: (r) => td(r.rest ? fmtSci(r.rest.drift) : DASH),
  },
  {
    name: 'holds', title: 'ran every frame within the tolerances (max|C| on joints; drift on a scene built to stand still); else stretches, drifts or diverges',
    shown: (ran) => ran.some((r) => r.holds), cell: (r) => td(r.holds ? `<span class="${verdictClass[r.holds.verdict]}">${r.holds.verdict}</span>` : DASH, 'text'),
  },
  { name: 'energy drift %', title: '(E_end − E_start) / |E_start|', cell: (r) => td(fmtSigned(r.energy.driftPercent)) },
  { name: 'rows / frame (mean)', title: 'constraint-row solves per frame, the mean over the run (a point constraint is 3 rows, a contact point 3)', cell: (r) => td(fmt(r.cost.rowSolvesPerFrame)) },
  // GPU solvers only: shown where some run has a figure (a CPU-only compare has none)
  { name: 'dis\u00ADpatches / frame', shown: (ran) => ran.some((r) => isNum(r.cost.dispatchesPerFrame)), cell: (r) => td(fmt(r.cost.dispatchesPerFrame)) },
  { name: 'GB/s', title: 'estimated iteration-kernel bytes per frame / mean ms (a lower bound)', shown: (ran) => ran.some((r) => isNum(r.cost.bandwidthGBs)), cell: (r) => td(fmt(r.cost.bandwidthGBs)) },
  { name: 'state hash', title: 'hash of the final state (positions, orientations, velocities)', cell: (r) => td(r.finalStateHash ? escapeHtml(r.finalStateHash) : DASH, 'hash') },
];

/**
 * A run's options (only those its solver reads, optionsParts), each part kept on one line
 * (`span.opt`, nowrap): the cell wraps between parts, never inside one.
 */
function optionsHtml(r: RunRecord): string {
  return optionsParts(r.options, r.solver, r.iterationMode)
    .map((p) => `<span class="opt">${escapeHtml(p)}</span>`)
    .join('<span class="sep"> · </span>');
}

function tableHtml(results: CompareResults, colours: Map<string, string>, optionsVary: boolean): string {
  const ran = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  const shown = tableColumns.filter((c) => !c.shown || c.shown(ran));
  // the status right after the run's name: whether it ran to the end is read first, and never cut off
  const head: [string, string?][] = [
    ['scene'],
    ['solver'],
    ['status', 'ok: ran every frame; DIVERGED: where and why it stopped'],
    ...(optionsVary ? ([['options']] as [string][]) : []),
    ...shown.map((c): [string, string?] => [c.name, c.title]),
  ];
  const rows: string[] = [];
  for (const scene of scenesOf(results)) {
    const runs = runsOf(results, scene);
    runs.forEach((r, i) => {
      // the scene's name once, spanning its rows
      const sceneCell = i === 0 ? `<td class="scene" rowspan="${runs.length}">${escapeHtml(r.scene)}</td>` : '';
      // a label with settings may break after each ':' (pgs-cpu:<wbr>iterations=2), never inside a part (xpbd-cpu)
      const swatch = `<span class="swatch" style="background:${colours.get(runLabel(r))}"></span>`;
      const parts = runLabel(r).split(/(?<=:)/).map((part, k) => `<span class="nw">${k === 0 ? swatch : ''}${escapeHtml(part)}</span>`);
      const solverCell = `<td class="solver">${parts.join('<wbr>')}</td>`;
      const tr = (cls: string[], cells: string) => {
        if (i === 0) cls.unshift('scene-start');
        return `<tr data-run="${escapeHtml(`${r.scene}/${runLabel(r)}`)}"${cls.length ? ` class="${cls.join(' ')}"` : ''}>${cells}</tr>`;
      };
      if (isSkipped(r)) {
        const span = head.length - 2;
        rows.push(tr(['skipped'], `${sceneCell}${solverCell}<td colspan="${span}" class="skip">${r.refused ? 'refused' : 'skipped'}: ${escapeHtml(r.skipped)}</td>`));
        return;
      }
      const status = r.diverged
        ? `<td class="diverged">DIVERGED at frame ${r.diverged.frame}: ${escapeHtml(r.diverged.reason)}</td>`
        : '<td class="ok">ok</td>';
      const cells = [
        sceneCell,
        solverCell,
        status,
        ...(optionsVary ? [`<td class="text options">${optionsHtml(r)}</td>`] : []),
        ...shown.map((c) => c.cell(r)),
      ];
      rows.push(tr(r.diverged ? ['diverged-row'] : [], cells.join('')));
    });
  }
  return `<div class="runs-wrap"><table class="runs">
<thead><tr>${head.map(([name, title]) => th(escapeHtml(name), title)).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table></div>`;
}

/** A reason in a matrix cell: up to its first ' (' where that leaves 20 characters or more, else its first 140 characters. */
export function shortReason(reason: string): string {
  const at = reason.indexOf(' (');
  if (at >= 20) return reason.slice(0, at);
  return reason.length > 140 ? `${reason.slice(0, 139)}…` : reason;
}

/** The verdict words of the matrix and their cell classes (bench/holds.ts HoldVerdict). */
const verdictClass: Record<string, string> = { holds: 'v-holds', stretches: 'v-fails', drifts: 'v-fails', diverges: 'v-diverges' };

/**
 * The matrix at a glance (a compare of two scenes or more): one row per entry of the solver list, one
 * column per scene; each cell the run's verdict (holds, stretches, drifts, diverges: bench/holds.ts; 'ran'
 * where the scene has no test), the figure that decides it (max|C|, or the drift, else the worst
 * penetration) and the mean ms per frame on the run's clock; a run not made says 'refused' (the solver
 * declines the scene) or 'skipped', with the reason in full.
 */
export function matrixHtml(results: CompareResults): string | null {
  const scenes = scenesOf(results);
  if (scenes.length < 2) return null;
  const labels = results.solvers.length ? results.solvers : [...new Set(results.runs.map(runLabel))];
  const cell = (r: RunRecord | SkippedRun | undefined): string => {
    if (!r) return `<td class="v-none">${DASH}</td>`;
    // the reason's first clause (before its parenthesis of detail, or its first 140 characters); the whole in the tooltip and the runs table
    if (isSkipped(r)) return `<td class="v-refused" title="${escapeHtml(r.skipped)}"><b>${r.refused ? 'refused' : 'skipped'}</b><div class="why">${escapeHtml(shortReason(r.skipped))}</div></td>`;
    const verdict = r.holds?.verdict ?? (r.diverged ? 'diverges' : 'ran');
    const head = r.diverged ? `diverges at frame ${fmt(r.diverged.frame, 15)}` : verdict;
    const figure = r.rest ? `drift ${r.rest.drift === null ? DASH : lengthText(r.rest.drift)}` : r.constraints > 0 ? `max|C| ${isNum(r.violation.worstMax) ? lengthText(r.violation.worstMax) : DASH}` : r.contacts ? `pen. ${isNum(r.contacts.worstMaxPenetration) ? lengthText(r.contacts.worstMaxPenetration) : DASH}` : '';
    const ms = meanFrameMs(r);
    const cost = `${fmt(ms)} ms/frame${r.timing.clock === 'gpu-timestamp' ? ' (GPU)' : ''}`;
    const title = [r.holds?.why, r.diverged?.reason].filter(Boolean).join(' — ');
    return `<td class="${verdictClass[verdict] ?? 'v-ran'}"${title ? ` title="${escapeHtml(title)}"` : ''}><b>${escapeHtml(head)}</b><div>${escapeHtml(figure)}</div><div class="cost">${escapeHtml(cost)}</div></td>`;
  };
  const sceneHead = (scene: string) => {
    const runs = runsOf(results, scene);
    const any = runs[0];
    const ran = runs.find((r): r is RunRecord => !isSkipped(r));
    // the frames run: the compare's, or the scene's own (CompareOptions.sceneFrames); a diverged run stopped short
    const size = ran ? ` · ${fmt(ran.bodies, 15)} bodies · ${fmt(runs.reduce((a, r) => Math.max(a, isSkipped(r) ? 0 : r.frames), 0), 15)} frames` : '';
    return `<th><div>${escapeHtml(scene)}</div><div class="params">${escapeHtml(any ? paramsText(any.params) : '')}${escapeHtml(size)}</div></th>`;
  };
  const rows = labels.map((label) => `<tr><th scope="row">${escapeHtml(label)}</th>${scenes.map((s) => cell(results.runs.find((r) => r.scene === s && runLabel(r) === label))).join('')}</tr>`);
  const m = results.machine;
  const gpuAdapters = [...new Set(results.runs.filter((r): r is RunRecord => !isSkipped(r) && findSolver(r.solver)?.device === 'gpu').map((r) => r.adapter))];
  const dt = results.runs.find((r): r is RunRecord => !isSkipped(r))?.options.dt;
  const facts = [
    `frames${isNum(dt) ? ` of ${fmt(dt, 4)} s` : ''} as each column says, each solver at its defaults unless its label says otherwise`,
    `${m.cores} × ${m.cpu}${gpuAdapters.length ? `; GPU solvers on ${gpuAdapters.join(', ')}` : ''}`,
    `${results.createdAt.slice(0, 16).replace('T', ' ')} UTC`,
  ];
  return `<section id="matrix">
<h2>Matrix</h2>
<p class="facts">${facts.map(escapeHtml).join(' · ')}</p>
<table class="matrix">
<thead><tr><th>solver</th>${scenes.map(sceneHead).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
<p class="facts">${escapeHtml(holdsLegend(results))}; max|C|: the worst joint violation, drift: the farthest a body moved after settling, pen.: the worst penetration (each over the sampled frames, from the states).</p>
</section>`;
}

function headerHtml(results: CompareResults, colours: Map<string, string>, sharedOptions: string | null): string {
  const m = results.machine;
  const dl = (items: [string, string][]) => `<dl>${items.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
  const versions = Object.entries(results.versions).map(([k, v]) => `${escapeHtml(k)} ${escapeHtml(v)}`).join(' · ') || DASH;
  const items: [string, string][] = [
    ['created', escapeHtml(results.createdAt)],
    ['command', `<code>${escapeHtml(results.command)}</code>`],
    ['frames', fmt(results.frames)],
    ['machine', `${escapeHtml(m.os)} · ${escapeHtml(m.cpu)} · ${fmt(m.cores)} cores · ${fmt(m.memoryGiB)} GiB · Node ${escapeHtml(m.node)}`],
    ['adapters', m.adapters.length ? m.adapters.map(escapeHtml).join('<br>') : 'none (CPU solvers only)'],
    ['versions', versions],
  ];
  if (sharedOptions) items.push(['solver options', escapeHtml(sharedOptions)]);
  const legend = [...colours].map(([id, c]) => `<span class="legend-item"><span class="swatch" style="background:${c}"></span>${escapeHtml(id)}</span>`).join(' ');
  items.push(['solvers', legend]);
  return `<header>
<h1>SolverLab compare — ${escapeHtml(scenesOf(results).join(', ') || 'no scenes')}</h1>
${dl(items)}
</header>`;
}

/**
 * Where each run's frame time goes: mean ms per frame in each stage of the solvers built from
 * stages (solvers/stages.ts), one row per run, the stages in step order (first seen first), each
 * cell with a bar of its share of the row's staged time, and the run's clock (wall on the CPU, GPU
 * timestamps over sampled frames on the GPU). Null when no run of the scene has stages.
 */
export function stagesHtml(ran: RunRecord[]): string | null {
  const staged = ran.filter((r) => r.timing.stages?.length);
  if (!staged.length) return null;
  const names: string[] = [];
  for (const r of staged) for (const st of r.timing.stages!) if (!names.includes(st.name)) names.push(st.name);
  const rows = staged.map((r) => {
    const by = new Map(r.timing.stages!.map((st) => [st.name, st.msPerFrame]));
    const total = r.timing.stages!.reduce((a, st) => a + st.msPerFrame, 0);
    const cells = names.map((n) => {
      const ms = by.get(n);
      if (ms === undefined) return '<td></td>';
      const share = total > 0 ? (100 * ms) / total : 0;
      return `<td data-stage="${escapeHtml(n)}">${fmt(ms)}<div class="stage-bar" style="width:${share.toFixed(1)}%"></div></td>`;
    });
    return `<tr data-run="${escapeHtml(runLabel(r))}"><th scope="row">${escapeHtml(runLabel(r))}</th>${cells.join('')}<td>${fmt(total)}</td><td class="stage-clock">${escapeHtml(r.timing.stagesClock ?? 'wall')}</td></tr>`;
  });
  return `<figure class="stages" data-stages>
<figcaption><b>Where the time goes</b> — mean ms per frame in each stage of the solver's step, in step order; the bar is the stage's share of the run's staged time; CPU solvers on the wall clock over every frame, GPU solvers on GPU timestamps over their sampled frames (one in ${STAGE_SAMPLE_EVERY} unless the run asked for more: the stages' clock says how many), each stage in a pass of its own</figcaption>
<table class="stages"><thead><tr><th>run</th>${names.map((n) => th(n)).join('')}<th>staged total</th><th>clock</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>
</figure>`;
}

/**
 * The convergence plot's legend of line styles: each channel of the scene's residuals (joint kinds, contact
 * normal, friction, …) with a sample of its line, drawn as the plot draws it (dashes, channelDashes).
 */
function lineStylesHtml(results: CompareResults, ran: RunRecord[]): string {
  const order = channelDashes(results);
  const names = [...order.keys()].filter((n) => withResiduals(ran).some((r) => n in r.residuals!.channels));
  const sample = (i: number) => {
    const d = dashes[i % dashes.length];
    return `<svg width="34" height="8" aria-hidden="true"><line x1="1" y1="4" x2="33" y2="4" stroke="#333" stroke-width="2"${d ? ` stroke-dasharray="${d.join(' ')}"` : ''}/></svg>`;
  };
  const items = names.map((n) => {
    const i = order.get(n)!;
    return `<span class="line-style" data-channel="${escapeHtml(n)}" data-dash="${escapeHtml(dashNames[i % dashNames.length])}">${sample(i)} ${escapeHtml(n)} (${dashNames[i % dashNames.length]})</span>`;
  });
  return `<p class="line-styles">Line style by channel, colour by solver: ${items.join(' ')}</p>`;
}

function sceneHtml(results: CompareResults, scene: string, plots: PlotSpec[], figures: CostQualitySpec[] = []): string {
  const runs = runsOf(results, scene);
  const ran = ranRunsOf(results, scene);
  const meta = ran[0] ?? runs[0];
  const facts: string[] = [];
  if (meta) facts.push(`parameters: ${escapeHtml(paramsText(meta.params))}`);
  if (ran[0]) facts.push(`${fmt(ran[0].bodies)} bodies, ${fmt(ran[0].constraints)} constraints`);
  const parts: string[] = [];
  if (!ran.length) parts.push('<p class="note">Every solver was skipped on this scene: nothing to plot.</p>');
  // the cost–quality figures first: the scene's runs at a glance (drawn by the page's script from the model's `figures`)
  for (const f of figures) {
    const missing = f.missing.length
      ? `<p class="note">No point: ${f.missing.map((m) => `${escapeHtml(m.label)} (${escapeHtml(m.why)})`).join(', ')}.</p>`
      : '';
    parts.push(`<figure class="plot cost-quality" data-figure="${escapeHtml(f.id)}">
<figcaption><b>Cost against quality</b> — ${escapeHtml(costQualityCaption(f))}</figcaption>
<div class="chart"></div>
${missing}</figure>`);
  }
  const stages = stagesHtml(ran);
  if (stages) parts.push(stages);
  for (const p of plots) {
    parts.push(`<figure class="plot" data-plot="${escapeHtml(p.id)}">
<figcaption><b>${escapeHtml(p.title)}</b> — ${escapeHtml(captions[p.kind])}</figcaption>
<div class="chart"></div>${p.kind === 'convergence' ? `\n${lineStylesHtml(results, ran)}` : ''}
</figure>`);
  }
  if (ran.length && !plots.some((p) => p.kind === 'convergence')) {
    parts.push(`<p class="note no-residuals" data-no-plot="convergence:${escapeHtml(scene)}">Convergence: no solver recorded residuals on this scene ` +
      `(solvers that report residuals record one solve, at the residual frame; a run that diverged before it has none).</p>`);
  } else {
    // what the residual axis holds, once per quantity: 'q — solver (frame F, substep S), …'
    const byQuantity = new Map<string, string[]>();
    for (const r of withResiduals(ran)) {
      const c = r.residuals!;
      const list = byQuantity.get(c.quantity) ?? [];
      list.push(`${escapeHtml(runLabel(r))} (frame ${fmt(c.frame)}, substep ${fmt(c.substep)})`);
      byQuantity.set(c.quantity, list);
    }
    if (byQuantity.size)
      parts.push(`<p class="note residuals-what">Residual: ${[...byQuantity].map(([q, who]) => `${escapeHtml(q)} — ${who.join(', ')}`).join('; ')}.</p>`);
    const withError = withResiduals(ran).filter((r) => r.residuals!.channels[LAMBDA_ERROR_CHANNEL]);
    if (withError.length)
      parts.push(`<p class="note residuals-what">λ error (right axis): ${escapeHtml(LAMBDA_ERROR_QUANTITY)} — ${withError.map((r) => escapeHtml(runLabel(r))).join(', ')}.</p>`);
  }
  return `<section class="scene" id="scene-${escapeHtml(scene)}">
<h2>${escapeHtml(scene)}</h2>
<p class="facts">${facts.join(' · ')}</p>
<div class="plots">
${parts.join('\n')}
</div>
</section>`;
}

const pageCss = `
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; padding: 16px 24px 40px; max-width: 1400px; color: #1b1b1b; background: #fff; }
h1 { font-size: 22px; margin: 4px 0 12px; }
h2 { font-size: 18px; margin: 28px 0 4px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
table.stages td { min-width: 64px; vertical-align: top; }
.stage-bar { height: 4px; background: #4a7bd0; margin-top: 2px; }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0 0 16px; }
header dt { color: #666; }
header dd { margin: 0; }
code { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; background: #f3f3f3; padding: 1px 4px; border-radius: 3px; word-break: break-all; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: baseline; }
.legend-item { margin-right: 14px; white-space: nowrap; }
table.runs { border-collapse: collapse; font-size: 12px; width: 100%; }
table.runs th, table.runs td { padding: 3px 4px; border-bottom: 1px solid #e6e6e6; text-align: right; vertical-align: top; }
table.runs th { background: #f6f6f6; font-weight: 600; position: sticky; top: 0; font-size: 11.5px; }
.runs-wrap { max-width: 100%; }
table.runs td.scene, table.runs td.solver .nw { white-space: nowrap; }
table.runs th:nth-child(-n+3), table.runs td.scene, table.runs td.solver, table.runs td.text, table.runs td.skip, table.runs td.ok, table.runs td.diverged { text-align: left; }
table.runs td.scene { font-weight: 600; }
table.runs tr.scene-start td { border-top: 2px solid #bbb; }
table.runs td.options { min-width: 12em; }
table.runs td.options .opt { white-space: nowrap; }
td.hash { font: 10.5px/1.4 ui-monospace, Menlo, Consolas, monospace; word-break: break-all; max-width: 9ch; }
td.skip { color: #777; font-style: italic; white-space: pre-line; }
td.diverged, tr.diverged-row td.diverged { color: #c00; font-weight: 600; }
td.ok { color: #2a7d2a; }
td.diverged { min-width: 9em; max-width: 16em; white-space: normal; }
.facts { color: #555; margin: 2px 0 8px; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 14px 20px; }
figure.plot { margin: 0; min-width: 0; }
figure.stages { grid-column: 1 / -1; margin: 0; overflow-x: auto; }
.line-styles { font-size: 12px; color: #444; margin: 4px 0 0; }
.line-style { margin-right: 12px; white-space: nowrap; }
.line-style svg { vertical-align: middle; }
figcaption { font-size: 12.5px; color: #444; margin-bottom: 4px; }
.chart { min-height: 260px; }
.note { color: #555; font-style: italic; }
#plot-status.error { color: #c00; white-space: pre-wrap; font-family: ui-monospace, Menlo, Consolas, monospace; border: 1px solid #c00; padding: 8px; }
.u-legend { font-size: 12px; }
#matrix { margin-bottom: 18px; width: fit-content; max-width: 100%; }
#matrix p.facts { width: 0; min-width: 100%; }
table.matrix { border-collapse: collapse; font-size: 12px; }
table.matrix th, table.matrix td { border: 1px solid #ddd; padding: 4px 6px; vertical-align: top; text-align: left; }
table.matrix thead th { background: #f6f6f6; }
table.matrix tbody th { white-space: nowrap; background: #fafafa; }
table.matrix .params { font-weight: normal; color: #666; font-size: 11px; max-width: 16em; }
table.matrix td { min-width: 9em; max-width: 14em; }
table.matrix td .cost { color: #555; }
table.matrix td .why { color: #666; font-style: italic; font-size: 11px; }
.v-holds { background: #e3f3e3; }
.v-fails { background: #fff0d6; }
.v-diverges { background: #fbe0e0; }
.v-refused { background: #f1f1f1; color: #555; }
span.v-holds, span.v-fails, span.v-diverges { padding: 0 3px; border-radius: 2px; }
`;

/**
 * The page's script: draws each plot of the JSON model with uPlot. Plain ES2017,
 * no template literals (it sits inside a TypeScript template string).
 */
const pageScript = `
(function () {
  'use strict';
  var statusEl = document.getElementById('plot-status');
  function showError(e) {
    var text = e && e.stack ? String(e.stack) : String(e);
    statusEl.textContent = 'The plots could not be drawn: ' + text;
    statusEl.className = 'error';
    document.body.dataset.plotsError = text;
  }
  window.addEventListener('error', function (ev) { showError(ev.error || ev.message); });
  function fmt(v) {
    if (v == null || !isFinite(v)) return '\\u2014';
    var a = Math.abs(v);
    if (v === 0) return '0';
    if (a < 1e-3 || a >= 1e6) return v.toExponential(2);
    return String(Number(v.toPrecision(4)));
  }
  // whole decades around [min, max], each bound an exact power of ten: 10^k from the text '1ek' (uPlot's own
  // Math.pow(10, k) is off by an ulp for some k, e.g. 1.0000000000000001e-29, and its log splits then never
  // reach the next decade: "Invalid array length")
  function decades(min, max) {
    var lo = Math.floor(Math.log10(min) + 1e-9), hi = Math.ceil(Math.log10(max) - 1e-9);
    if (hi <= lo) { lo -= 1; hi += 1; }
    return [Number('1e' + lo), Number('1e' + hi)];
  }
  // a log axis' splits: the powers of ten in [min, max], exact (10^k from '1ek'). uPlot's own log splits add
  // 1·10^k steps until they reach the next decade, and below ~1e-28 the sum misses it by an ulp and never
  // ends ("Invalid array length"); only powers of ten are labelled here anyway (logFilter)
  function logSplits(u, axisIdx, min, max) {
    if (!(min > 0) || !(max > 0)) return [];
    var out = [];
    for (var k = Math.ceil(Math.log10(min) - 1e-9); k <= Math.floor(Math.log10(max) + 1e-9); k++) out.push(Number('1e' + k));
    return out;
  }
  function logRange(u, min, max) {
    if (min == null || max == null || !(min > 0) || !(max > 0)) return [1e-12, 1];
    return decades(min, max);
  }
  // a y axis as wide as its widest tick label, so that its title (outside it) never overlaps the labels
  function fitAxis(u, values, axisIdx, cycleNum) {
    var axis = u.axes[axisIdx];
    if (cycleNum > 1 && axis._size) return axis._size;
    var size = (axis.ticks && axis.ticks.show !== false ? axis.ticks.size : 0) + axis.gap;
    var widest = 0;
    if (values && values.length) {
      u.ctx.save();
      u.ctx.font = axis.font[0];
      values.forEach(function (v) { if (v) widest = Math.max(widest, u.ctx.measureText(v).width / (window.devicePixelRatio || 1)); });
      u.ctx.restore();
    }
    return Math.ceil(Math.max(40, size + widest + 6));
  }
  // a linear axis' tick labels with as many digits as the step between ticks needs, so that no two read
  // alike (a fixed 4 significant digits printed 210.5 four times on an axis stepping by 0.01)
  function tickTexts(u, vals, axisIdx, space, incr) {
    var step = incr > 0 ? incr : 0;
    return vals.map(function (v) {
      if (v == null || !isFinite(v)) return '';
      if (v === 0) return '0';
      var a = Math.abs(v);
      var lead = Math.floor(Math.log10(a) + 1e-9);
      var last = step > 0 ? Math.floor(Math.log10(step) + 1e-9) : lead - 3; // the step's decade: the last digit that changes
      if (a < 1e-3 || a >= 1e6) return v.toExponential(Math.max(0, Math.min(15, lead - last)));
      return v.toFixed(Math.max(0, Math.min(15, -last)));
    });
  }
  // after a draw: how many tick labels of an axis repeat another (the test reads data-axis-repeats: 0)
  function axisRepeats(u) {
    var n = 0;
    u.axes.forEach(function (axis) {
      var seen = {};
      (axis._values || []).forEach(function (v) { if (v) { if (seen[v]) n += 1; seen[v] = true; } });
    });
    return n;
  }
  // after a draw: how many y tick labels are wider than their axis (the test reads data-axis-overflow: 0)
  function axisOverflow(u) {
    var n = 0;
    u.axes.forEach(function (axis, i) {
      if (i === 0 || !axis._values || axis.side !== 3 && axis.side !== 1) return;
      u.ctx.save();
      u.ctx.font = axis.font[0];
      axis._values.forEach(function (v) {
        if (v && u.ctx.measureText(v).width / (window.devicePixelRatio || 1) + axis.gap > axis._size) n += 1;
      });
      u.ctx.restore();
    });
    return n;
  }
  // log axes: ticks, labels and grid lines on powers of ten only, every k-th decade so that at most ~7 show
  function logFilter(u, splits, axisIdx) {
    var sc = u.scales[u.axes[axisIdx].scale];
    var decades = Math.log10(sc.max / sc.min);
    var step = Math.max(1, Math.ceil(decades / 7));
    return splits.map(function (v) {
      if (v == null || !(v > 0)) return null;
      var e = Math.log10(v), k = Math.round(e);
      return Math.abs(e - k) < 1e-6 && k % step === 0 ? v : null;
    });
  }
  function logLabel(v) {
    if (v == null) return '';
    var k = Math.round(Math.log10(v));
    return k >= -3 && k <= 4 ? String(Number(Math.pow(10, k).toPrecision(1))) : '1e' + k;
  }
  function linRange(u, min, max) {
    if (min == null || max == null || !isFinite(min) || !isFinite(max)) return [0, 1];
    return uPlot.rangeNum(min, max, 0.1, true);
  }
  try {
    if (typeof uPlot === 'undefined') throw new Error('the chart library (uPlot) did not load');
    var model = JSON.parse(document.getElementById('solverlab-data').textContent);
    var plots = model.plots;
    var charts = [];
    var drawn = 0;
    var height = 260;
    if (!plots.length) document.body.dataset.plotsReady = '0';
    // the cost-quality figures: one series per run holding its one point (no line), the frontier as a
    // dashed line through its points, each point labelled beside it; document.body.dataset.figuresReady
    // counts those drawn
    var figures = model.figures || [];
    var figuresDrawn = 0;
    if (!figures.length) document.body.dataset.figuresReady = '0';
    function paddedLogRange(u, min, max) {
      if (min == null || max == null || !(min > 0) || !(max > 0)) return [1e-12, 1];
      return decades(min / 2, max * 2);
    }
    function logAxis(label, extra) {
      var a = { label: label, size: fitAxis, splits: logSplits, filter: logFilter, grid: { filter: logFilter }, ticks: { filter: logFilter }, values: function (u, vals) { return vals.map(logLabel); } };
      if (extra) Object.keys(extra).forEach(function (k) { a[k] = extra[k]; });
      return a;
    }
    function linAxis(label, extra) {
      var a = { label: label, size: fitAxis, values: tickTexts };
      if (extra) Object.keys(extra).forEach(function (k) { a[k] = extra[k]; });
      return a;
    }
    figures.forEach(function (f) {
      var box = document.querySelector('[data-figure="' + CSS.escape(f.id) + '"] .chart');
      if (!box) throw new Error('no container for figure ' + f.id);
      var tables = f.points.map(function (p) { return [[p.ms], [p.y]]; });
      var front = f.points.filter(function (p) { return p.frontier; }).sort(function (a, b) { return a.ms - b.ms; });
      if (front.length > 1) tables.push([front.map(function (p) { return p.ms; }), front.map(function (p) { return p.y; })]);
      var data = uPlot.join(tables);
      var series = [{ label: f.xLabel, value: function (u, v) { return fmt(v); } }];
      f.points.forEach(function (p) {
        series.push({
          label: p.label, stroke: p.colour, width: 2, paths: function () { return null; },
          points: { show: true, size: 11, width: 2, stroke: p.colour, fill: p.diverged ? '#ffffff' : p.colour },
          value: function (u, v) { return fmt(v); },
        });
      });
      if (front.length > 1) series.push({ label: 'frontier', stroke: '#777777', width: 1.5, dash: [6, 4], spanGaps: true, points: { show: false } });
      var first = true;
      var opts = {
        width: Math.max(300, box.clientWidth || 560),
        height: height,
        scales: {
          x: f.logX ? { time: false, distr: 3, log: 10, range: paddedLogRange } : { time: false, range: linRange },
          y: f.logY ? { distr: 3, log: 10, range: paddedLogRange } : { range: linRange },
        },
        axes: [
          f.logX ? logAxis(f.xLabel, { size: 50 }) : linAxis(f.xLabel, { size: 50 }),
          f.logY ? logAxis(f.yLabel) : linAxis(f.yLabel),
        ],
        series: series,
        cursor: { drag: { x: true, y: false } },
        hooks: {
          draw: [function (u) {
            // each point's label beside it: above right, below right, above left or below left, the first
            // place inside the plot that covers no point and no label already drawn (else the first inside the plot)
            var ctx = u.ctx, r = window.devicePixelRatio || 1;
            var lineH = 13 * r, gap = 7 * r, dot = 7 * r;
            var b = u.bbox;
            var at = f.points.map(function (p) { return [u.valToPos(p.ms, 'x', true), u.valToPos(p.y, 'y', true)]; });
            // rectangles [x, y, w, h] taken: every point's disc, then each label as it is placed
            var taken = at.map(function (q) { return [q[0] - dot, q[1] - dot, 2 * dot, 2 * dot]; });
            function clear(x, y, w, h) {
              return taken.every(function (o) { return x + w <= o[0] || o[0] + o[2] <= x || y + h <= o[1] || o[1] + o[3] <= y; });
            }
            ctx.save();
            ctx.font = (11 * r) + 'px system-ui, sans-serif';
            ctx.fillStyle = '#222222';
            ctx.strokeStyle = 'rgba(255, 255, 255, 0.85)'; // a halo: the label stays legible over a grid or the frontier line
            ctx.lineWidth = 3 * r;
            ctx.lineJoin = 'round';
            ctx.textAlign = 'left';
            ctx.textBaseline = 'top';
            var labelsDrawn = 0;
            f.points.forEach(function (p, i) {
              var x = at[i][0], y = at[i][1];
              var text = p.label + (p.diverged ? ' (diverged)' : '') + (p.y !== p.worst ? ' (0)' : '');
              var w = ctx.measureText(text).width;
              var spots = [[x + gap, y - gap - lineH], [x + gap, y + gap], [x - gap - w, y - gap - lineH], [x - gap - w, y + gap]];
              var inside = spots.filter(function (q) { return q[0] >= b.left && q[0] + w <= b.left + b.width && q[1] >= b.top && q[1] + lineH <= b.top + b.height; });
              var free = inside.filter(function (q) { return clear(q[0], q[1], w, lineH); });
              var spot = free[0] || inside[0] || spots[0];
              taken.push([spot[0], spot[1], w, lineH]);
              ctx.strokeText(text, spot[0], spot[1]);
              ctx.fillText(text, spot[0], spot[1]);
              labelsDrawn += 1;
            });
            ctx.restore();
            box.parentNode.dataset.labelsDrawn = String(labelsDrawn);
            if (!first) return;
            first = false;
            figuresDrawn += 1;
            if (figuresDrawn === figures.length) document.body.dataset.figuresReady = String(figuresDrawn);
          }],
        },
      };
      charts.push({ chart: new uPlot(opts, data, box), box: box });
    });
    plots.forEach(function (p) {
      var box = document.querySelector('[data-plot="' + CSS.escape(p.id) + '"] .chart');
      if (!box) throw new Error('no container for plot ' + p.id);
      var data = uPlot.join(p.lines.map(function (l) { return [l.x, l.y]; }));
      var series = [{ label: p.xLabel, value: function (u, v) { return fmt(v); } }];
      p.lines.forEach(function (l) {
        var s = { label: l.label, stroke: l.colour, width: 2, spanGaps: false, value: function (u, v) { return fmt(v); } };
        if (l.dash) s.dash = l.dash;
        if (l.scale) s.scale = l.scale;
        if (p.stepped && uPlot.paths && uPlot.paths.stepped) s.paths = uPlot.paths.stepped({ align: 1 });
        series.push(s);
      });
      var first = true;
      var opts = {
        width: Math.max(300, box.clientWidth || 560),
        height: height,
        scales: {
          x: { time: false },
          y: p.logY ? { distr: 3, log: 10, range: logRange } : { range: linRange },
        },
        axes: [
          { label: p.xLabel, values: tickTexts },
          p.logY ? logAxis(p.yLabel) : linAxis(p.yLabel),
        ],
        series: series,
        cursor: { drag: { x: true, y: false } },
        hooks: {
          draw: [function (u) {
            box.parentNode.dataset.axisOverflow = String(axisOverflow(u));
            box.parentNode.dataset.axisRepeats = String(axisRepeats(u));
            if (!first) return;
            first = false;
            drawn += 1;
            if (drawn === plots.length) document.body.dataset.plotsReady = String(drawn);
          }],
        },
      };
      if (p.y2Label) {
        // a second quantity in other units (the λ error): its own log scale and a right-hand axis, no grid
        opts.scales.error = { distr: 3, log: 10, range: logRange };
        opts.axes.push(logAxis(p.y2Label, { scale: 'error', side: 1, grid: { show: false } }));
      }
      charts.push({ chart: new uPlot(opts, data, box), box: box });
    });
    var pending = 0;
    window.addEventListener('resize', function () {
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(function () {
        charts.forEach(function (c) { c.chart.setSize({ width: Math.max(300, c.box.clientWidth), height: height }); });
      });
    });
  } catch (e) {
    showError(e);
    console.error(e);
  }
})();
`;

export function renderReport(results: CompareResults): string {
  const colours = solverColours(results);
  const plots = plotSpecs(results);
  const ran = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  // the options as each run shows them (only those its solver reads): one line in the header when all agree
  const optionTexts = ran.map((r) => optionsText(r.options, r.solver, r.iterationMode));
  const optionsVary = new Set(optionTexts).size > 1;
  const sharedOptions = !optionsVary && ran.length ? optionTexts[0] : null;
  const { js, css } = uplotAssets();
  const figures = scenesOf(results).flatMap((s) => costQualitySpecs(results, s, colours));
  const sections = scenesOf(results).map((s) => sceneHtml(results, s, plots.filter((p) => p.scene === s), figures.filter((f) => f.scene === s)));
  const model = { plots, figures };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>SolverLab compare — ${escapeHtml(scenesOf(results).join(', '))} — ${escapeHtml(results.createdAt)}</title>
<style>${inlineText(css)}</style>
<style>${pageCss}</style>
</head>
<body>
${headerHtml(results, colours, sharedOptions)}
${matrixHtml(results) ?? ''}
<h2>Runs</h2>
${tableHtml(results, colours, optionsVary)}
<p id="plot-status" role="status"></p>
<noscript><p class="note">The plots need JavaScript; the table above is complete without it.</p></noscript>
${sections.join('\n')}
<script type="application/json" id="solverlab-data">${jsonForScript(model)}</script>
<script>${inlineText(js)}</script>
<script>${inlineText(pageScript)}</script>
</body>
</html>
`;
}
