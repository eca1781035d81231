/**
 * The compare matrix as rows of named columns — one definition that the printed
 * table and results.csv both use (the HTML report reads the same records).
 */
import { defaultSolverOptions, iterationsText, optionsRead, solverOptionSpecs, type IterationMode, type SolverOptions } from '../solvers/solver.js';
import { findSolver } from '../solvers/registry.js';
import type { ParamValue } from '../scenes/scene.js';
import { isParticleSolver } from '../solvers/witkin/registry.js';
import { DEFAULT_HOLD_TOLERANCES, lengthText } from './holds.js';
import { isSkipped, showsSleep, runLabel, meanFrameMs, type CompareResults, type RunRecord, type SkippedRun } from './results.js';

export interface Column {
  /** CSV header (snake_case, with units) */
  csv: string;
  /** printed table header */
  title: string;
  /** value for a run; null → '—' in the table, empty in the CSV */
  get(r: RunRecord): number | string | null;
  /** printed significant digits for numbers */
  digits?: number;
  /** printed table only (the CSV has the parts in their own columns) */
  tableOnly?: boolean;
  /** printed only when some run of the table has a value for it */
  optional?: boolean;
  /** shown (table and CSV) only when some run passes this test, e.g. has contacts; '—' / empty for the others */
  shownIf?: (r: RunRecord) => boolean;
}

const hasContacts = (r: RunRecord) => r.contacts !== undefined;
/** the scene has constraints (joints), so a violation to measure */
const hasJoints = (r: RunRecord) => r.constraints > 0;
/** rigid worlds: the awake count is recorded (RunRecord.awake) */
const hasAwake = (r: RunRecord) => r.awake !== undefined;

/** e.g. 0/6: the dynamic bodies awake at the last frame, of all dynamic bodies (null when diverged or no figure) */
function awakeText(r: RunRecord): string | null {
  const a = r.awake;
  return a && a.finalCount !== null ? `${formatNumber(a.finalCount, 15)}/${formatNumber(a.dynamicBodies, 15)}` : null;
}

/** The columns of `list` that the runs `ran` show: optional ones with a value, shownIf ones that some run passes. */
function shownColumns(list: Column[], ran: RunRecord[]): Column[] {
  return list.filter((c) => (!c.optional || ran.some((r) => c.get(r) !== null)) && (!c.shownIf || ran.some(c.shownIf)));
}

/** what iterations mean for the solver of a record (particle solvers: to a tolerance, from records before iterationMode) */
function iterationModeOf(r: RunRecord): IterationMode {
  return r.iterationMode ?? (isParticleSolver(r.solver) ? 'tolerance' : 'sweeps');
}

/** iterations per step as the table shows them: 8, 1,000, CG (to a tolerance), CG≤64 (capped), LDLᵀ (direct) */
function iterationsCell(r: RunRecord): string {
  const mode = iterationModeOf(r);
  // a solver that does not read iterations has none in its record (mode 'direct' or 'tolerance' shows none)
  const iterations = r.options.iterations ?? NaN;
  return mode === 'sweeps' ? formatNumber(iterations, 15) : iterationsText(mode, iterations);
}

/** e.g. 3/120: the solves that ended without reaching their tolerance, of all (null for solvers that do not count them) */
function unconvergedText(r: RunRecord): string | null {
  return r.cost.solves === undefined ? null : `${formatNumber(r.cost.unconvergedSolves ?? 0, 15)}/${formatNumber(r.cost.solves, 15)}`;
}

export const columns: Column[] = [
  { csv: 'iterations_x_substeps', title: 'it×sub', get: (r) => `${iterationsCell(r)}×${formatNumber(r.options.substeps, 15)}`, tableOnly: true },
  // speed from the mean frame (total time ÷ frames): where a pile falls asleep most frames are cheap and
  // the median is a sleeping frame's cost; the median and p95 beside it say how the frames spread
  { csv: 'steps_per_s', title: 'steps/s (mean)', get: (r) => r.timing.stepsPerSecond, digits: 4 },
  { csv: 'mean_ms', title: 'mean ms', get: meanFrameMs },
  { csv: 'median_ms', title: 'median ms', get: (r) => r.timing.medianMs },
  { csv: 'p95_ms', title: 'p95 ms', get: (r) => r.timing.p95Ms },
  { csv: 'clock', title: 'clock', get: (r) => (r.timing.clock === 'gpu-timestamp' ? 'gpu' : 'wall') },
  // joint violation: only where some run's scene has constraints (joints); '—' / empty for a run of a scene without
  { csv: 'final_max_violation_m', title: 'final max C (m)', get: (r) => (r.constraints > 0 ? r.violation.finalMax : null), shownIf: hasJoints },
  { csv: 'worst_max_violation_m', title: 'worst max C (m)', get: (r) => (r.constraints > 0 ? r.violation.worstMax : null), shownIf: hasJoints },
  // scenes with collisions on (RunRecord.contacts); the columns appear only when some run has contacts
  { csv: 'worst_penetration_m', title: 'worst penetration (m)', get: (r) => r.contacts?.worstMaxPenetration ?? null, shownIf: hasContacts },
  { csv: 'contacts_final', title: 'contacts', get: (r) => r.contacts?.finalCount ?? null, digits: 15, shownIf: hasContacts },
  // the dynamic bodies awake at the end, of all: only where some run sleeps (showsSleep; the CSV has awake_final, dynamic_bodies)
  { csv: 'awake_of_dynamic', title: 'awake', get: awakeText, tableOnly: true, shownIf: showsSleep },
  // scenes built to stand still (SceneInfo.restsAfter): the farthest any body got from where it was after settling
  { csv: 'drift_m', title: 'drift (m)', get: (r) => r.rest?.drift ?? null, shownIf: (r) => r.rest !== undefined },
  // held its scene or not (bench/holds.ts: max|C| on joints, drift on a scene built to stand still, against the compare's tolerances)
  { csv: 'holds', title: 'holds', get: (r) => r.holds?.verdict ?? null, shownIf: (r) => r.holds !== undefined },
  { csv: 'energy_drift_percent', title: 'energy %', get: (r) => r.energy.driftPercent },
  { csv: 'unconverged_of_solves', title: 'unconv.', get: unconvergedText, tableOnly: true, optional: true },
  { csv: 'steps_per_s_ratio_to_first', title: 'speed × (mean)', get: (r) => r.stepsPerSecondRatio ?? null },
];

/** CSV names of the option columns where they are not the flag's (units, and the names written before). */
const optionCsvName: Partial<Record<keyof SolverOptions, string>> = {
  dt: 'dt_s',
  compliance: 'compliance_m_per_n',
  linearDamping: 'linear_damping_per_s',
  angularDamping: 'angular_damping_per_s',
  feedbackStiffness: 'ks_per_s2',
  feedbackDamping: 'kd_per_s',
};

/** Columns only the CSV carries (the table stays narrow enough for a terminal). */
const csvOnly: Column[] = [
  { csv: 'adapter', title: 'adapter', get: (r) => r.adapter },
  { csv: 'bodies', title: 'bodies', get: (r) => r.bodies },
  { csv: 'constraints', title: 'constraints', get: (r) => r.constraints },
  { csv: 'frames', title: 'frames', get: (r) => r.frames },
  // the solver options as columns: empty where the run's solver does not read the option
  ...(Object.entries(solverOptionSpecs) as [keyof SolverOptions, { flag: string }][]).map(([key, spec]) => ({
    csv: optionCsvName[key] ?? spec.flag.replace(/-/g, '_'),
    title: spec.flag,
    get: (r: RunRecord) => (optionsReadBy(r.solver).includes(key) ? (r.options[key] ?? null) : null),
  })),
  { csv: 'wall_mean_ms', title: 'wall mean ms', get: (r) => r.timing.wallMeanMs ?? null },
  { csv: 'wall_median_ms', title: 'wall median ms', get: (r) => r.timing.wallMedianMs },
  { csv: 'final_rms_violation_m', title: 'final rms C', get: (r) => (r.constraints > 0 ? r.violation.finalRms : null), shownIf: hasJoints },
  { csv: 'final_penetration_m', title: 'final penetration', get: (r) => r.contacts?.finalMaxPenetration ?? null, shownIf: hasContacts },
  { csv: 'contacts_mean', title: 'mean contacts', get: (r) => r.contacts?.meanCount ?? null, shownIf: hasContacts },
  // rigid worlds: the awake dynamic bodies at the last frame and on average, of dynamic_bodies; when all first slept (s)
  { csv: 'awake_final', title: 'awake', get: (r) => r.awake?.finalCount ?? null, shownIf: hasAwake },
  { csv: 'awake_mean', title: 'mean awake', get: (r) => r.awake?.meanCount ?? null, shownIf: hasAwake },
  { csv: 'dynamic_bodies', title: 'dynamic bodies', get: (r) => r.awake?.dynamicBodies ?? null, shownIf: hasAwake },
  { csv: 'all_asleep_s', title: 'all asleep at', get: (r) => r.awake?.allAsleepT ?? null, shownIf: hasAwake },
  { csv: 'energy_start_j', title: 'E0', get: (r) => r.energy.start },
  { csv: 'energy_end_j', title: 'E', get: (r) => r.energy.end },
  { csv: 'row_solves_per_frame', title: 'rows/frame (mean)', get: (r) => r.cost.rowSolvesPerFrame },
  { csv: 'row_solves_last_frame', title: 'rows last frame', get: (r) => r.cost.rowSolvesLastFrame ?? null },
  { csv: 'solves', title: 'solves', get: (r) => r.cost.solves ?? null },
  { csv: 'unconverged_solves', title: 'unconverged solves', get: (r) => r.cost.unconvergedSolves ?? null },
  { csv: 'dispatches_per_frame', title: 'dispatches', get: (r) => r.cost.dispatchesPerFrame },
  { csv: 'iteration_bytes_per_frame', title: 'bytes', get: (r) => r.cost.iterationBytesPerFrame },
  { csv: 'bandwidth_gb_per_s', title: 'GB/s', get: (r) => r.cost.bandwidthGBs },
  { csv: 'holds_why', title: 'holds, why', get: (r) => r.holds?.why ?? null, shownIf: (r) => r.holds !== undefined },
  { csv: 'rest_from_s', title: 'drift from', get: (r) => r.rest?.from ?? null, shownIf: (r) => r.rest !== undefined },
  { csv: 'final_state_hash', title: 'hash', get: (r) => r.finalStateHash },
  { csv: 'diverged_frame', title: 'diverged', get: (r) => r.diverged?.frame ?? null },
];

/**
 * A number for people, the one definition the summary, the table and the report
 * use: `digits` significant figures without trailing zeros (integers from 10^digits
 * on are rounded to units), thousands grouped with commas from 1,000 on, e-notation
 * below 1e-3 and from 1e9, and '—' for null, NaN and infinities (never printed as
 * numbers).
 */
export function formatNumber(x: number | null | undefined, digits = 3): string {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '—';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a < 1e-3 || a >= 1e9) return x.toExponential(digits - 1);
  const v = a >= 10 ** digits ? Math.round(x) : Number(x.toPrecision(digits));
  return Math.abs(v) >= 1000 ? v.toLocaleString('en-US', { maximumFractionDigits: 20 }) : String(v);
}

/** `n thing`/`n things`: '1 body', '2 bodies', '1,200 constraints' (plural given where it is not thing + s). */
export function countText(n: number, thing: string, plural = `${thing}s`): string {
  return `${formatNumber(n, 15)} ${n === 1 ? thing : plural}`;
}

/** The options the solver `id` reads (its SolverInfo.reads); every option for an id not in the registry. */
export function optionsReadBy(id: string): (keyof SolverOptions)[] {
  const info = findSolver(id);
  return info ? optionsRead(info) : (Object.keys(solverOptionSpecs) as (keyof SolverOptions)[]);
}

/**
 * The options that matter to solver `id`, as parts of one line: only those it reads (SolverInfo.reads),
 * so a run of rapier-multibody shows no β or warm start, and one of global-cpu no iterations; what a
 * solver that reads no `iterations` does instead is said (a direct or a tolerance solve). Compliance
 * and damping only where they are set.
 */
export function optionsParts(given: Partial<SolverOptions>, id: string, mode: IterationMode = 'sweeps'): string[] {
  const reads = new Set(optionsReadBy(id));
  // a record holds only the options its solver reads (results.ts optionsItReads), and only those are shown
  const o: SolverOptions = { ...defaultSolverOptions, ...given };
  const parts: string[] = [];
  if (reads.has('dt')) parts.push(`dt ${formatNumber(o.dt, 6)} s`);
  if (reads.has('iterations'))
    parts.push(mode === 'cap' ? `at most ${countText(o.iterations, 'CG iteration')}` : countText(o.iterations, 'iteration'));
  else if (mode === 'direct') parts.push('λ by a direct LDLᵀ solve to tolerance');
  else if (mode === 'tolerance') parts.push(isParticleSolver(id) ? 'λ by conjugate gradient to 1e-10' : 'λ solved to tolerance');
  if (reads.has('substeps')) parts.push(countText(o.substeps, 'substep'));
  if (reads.has('beta')) parts.push(`β ${formatNumber(o.beta)}/h`);
  if (reads.has('warmStart')) parts.push(`warm start ${formatNumber(o.warmStart)}`);
  if (reads.has('compliance') && o.compliance > 0) parts.push(`compliance ${formatNumber(o.compliance)} m/N`);
  if ((reads.has('linearDamping') && o.linearDamping > 0) || (reads.has('angularDamping') && o.angularDamping > 0))
    parts.push(`damping ${formatNumber(o.linearDamping)}/s, ${formatNumber(o.angularDamping)}/s ang.`);
  if (reads.has('feedbackStiffness') || reads.has('feedbackDamping'))
    parts.push(`feedback k_s ${formatNumber(o.feedbackStiffness)}/s², k_d ${formatNumber(o.feedbackDamping)}/s`);
  // the soft solvers' springs as they act: capped at a quarter (contacts) and half (joints) of the
  // (sub)step rate 1/h (si-soft-cpu, softstep-cpu)
  const spring = (name: string, hz: number, cap: number, zeta: number) => {
    const acting = Math.min(hz, cap);
    return `${name} spring ${formatNumber(acting)} Hz${acting < hz ? ` (${formatNumber(hz)} capped)` : ''} ζ ${formatNumber(zeta)}`;
  };
  const rate = o.substeps / o.dt;
  if (reads.has('contactHertz')) parts.push(spring('contact', o.contactHertz, 0.25 * rate, o.contactDampingRatio));
  if (reads.has('jointHertz')) parts.push(spring('joint', o.jointHertz, 0.5 * rate, o.jointDampingRatio));
  // sleeping is on by default (shown by the awake line where a run sleeps); said only when turned off
  if (reads.has('sleep') && o.sleep === 0) parts.push('sleeping off');
  return parts;
}

/** optionsParts in one line. */
export function optionsText(o: Partial<SolverOptions>, id: string, mode: IterationMode = 'sweeps'): string {
  return optionsParts(o, id, mode).join(' · ');
}

function paramsText(p: Record<string, ParamValue>): string {
  return Object.entries(p)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

/** 'refused: why' (the solver declines the scene), 'skipped: why' (a means lacking, e.g. no adapter), 'DIVERGED …', 'ok' */
export function status(r: RunRecord | SkippedRun): string {
  if (isSkipped(r)) return `${r.refused ? 'refused' : 'skipped'}: ${r.skipped}`;
  if (r.diverged) return `DIVERGED at frame ${r.diverged.frame}: ${r.diverged.reason}`;
  return 'ok';
}

/** The printed table: one row per scene × solver entry (runLabel), a note line under skipped and diverged runs. */
export function formatCompareTable(results: CompareResults): string {
  const ran = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  const shown = shownColumns(columns, ran);
  const head = ['scene', 'solver', ...shown.map((c) => c.title)];
  const rows: string[][] = [];
  const notes = new Map<number, string>();
  for (const r of results.runs) {
    // a run of an entry with settings of its own under its label (rapier:iterations=4), else the solver's id
    const name = runLabel(r);
    if (isSkipped(r)) {
      notes.set(rows.length, `  ↳ ${name} on ${r.scene}: ${status(r)}`);
      rows.push([r.scene, name, ...shown.map(() => '')]);
      continue;
    }
    if (r.diverged) notes.set(rows.length, `  ↳ ${name} on ${r.scene}: ${status(r)}`);
    rows.push([r.scene, name, ...shown.map((c) => {
      const v = c.get(r);
      return typeof v === 'number' || v === null ? formatNumber(v, c.digits) : v;
    })]);
  }
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(width[i]) : c.padStart(width[i]))).join('  ').trimEnd();
  const out = [line(head), width.map((w) => '─'.repeat(w)).join('  ')];
  rows.forEach((row, i) => {
    out.push(line(row));
    if (notes.has(i)) out.push(notes.get(i)!);
  });
  // which statistic each speed figure is (the column titles say it short)
  if (ran.length)
    out.push(`steps/s and speed × from the mean frame (wall time ÷ frames), speed × against ${results.solvers[0] ?? 'the first solver'} on the same scene; mean, median and p95 ms on the clock named`);
  if (ran.some((r) => r.holds)) out.push(holdsLegend(results));
  return out.join('\n');
}

/** What `holds` means in this compare: its tolerances (bench/holds.ts). */
export function holdsLegend(results: Pick<CompareResults, 'holdTolerances'>): string {
  const t = results.holdTolerances ?? DEFAULT_HOLD_TOLERANCES;
  return `holds: ran every frame with max|C| ≤ ${lengthText(t.violation)} (scenes with joints; else stretches) and, on a scene built to stand still, drift ≤ ${lengthText(t.drift)} after it settled (else drifts)`;
}

function csvCell(v: number | string | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/**
 * results.csv: one row per scene × solver, numbers at full precision, empty cells for none; the contact columns
 * only when some run has contacts, the awake columns only when some run is of a rigid world; a `label` column
 * after `solver` only when some entry of the solver list set options of its own (runLabel: e.g.
 * rapier:iterations=4, the solver's id for the others; the option columns hold every run's values).
 */
export function compareCsv(results: CompareResults): string {
  const ran = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  const all = shownColumns([...columns.filter((c) => !c.tableOnly), ...csvOnly], ran);
  const labelled = results.runs.some((r) => r.label !== undefined);
  const lines = [['scene', 'params', 'solver', ...(labelled ? ['label'] : []), 'status', ...all.map((c) => c.csv)].join(',')];
  for (const r of results.runs) {
    const lead = [r.scene, paramsText(r.params), r.solver, ...(labelled ? [runLabel(r)] : []), status(r)].map(csvCell);
    lines.push([...lead, ...all.map((c) => (isSkipped(r) ? '' : csvCell(c.get(r))))].join(','));
  }
  return lines.join('\n') + '\n';
}
