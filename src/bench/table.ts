/**
 * The compare matrix as rows of named columns — one definition that the printed
 * table and results.csv both use (the HTML report reads the same records).
 */
import { iterationsText, type IterationMode, type SolverOptions } from '../solvers/solver.js';
import type { ParamValue } from '../scenes/scene.js';
import { isParticleSolver } from '../particles/registry.js';
import { isSkipped, type CompareResults, type RunRecord, type SkippedRun } from './results.js';

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
}

/** what iterations mean for the solver of a record (particle solvers: to a tolerance, from records before iterationMode) */
function iterationModeOf(r: RunRecord): IterationMode {
  return r.iterationMode ?? (isParticleSolver(r.solver) ? 'tolerance' : 'sweeps');
}

/** e.g. 3/120: the solves that ended without reaching their tolerance, of all (null for solvers that do not count them) */
function unconvergedText(r: RunRecord): string | null {
  return r.cost.solves === undefined ? null : `${r.cost.unconvergedSolves ?? 0}/${r.cost.solves}`;
}

export const columns: Column[] = [
  { csv: 'iterations_x_substeps', title: 'it×sub', get: (r) => `${iterationsText(iterationModeOf(r), r.options.iterations)}×${r.options.substeps}`, tableOnly: true },
  { csv: 'steps_per_s', title: 'steps/s', get: (r) => r.timing.stepsPerSecond, digits: 4 },
  { csv: 'median_ms', title: 'median ms', get: (r) => r.timing.medianMs },
  { csv: 'p95_ms', title: 'p95 ms', get: (r) => r.timing.p95Ms },
  { csv: 'clock', title: 'clock', get: (r) => (r.timing.clock === 'gpu-timestamp' ? 'gpu' : 'wall') },
  { csv: 'final_max_violation_m', title: 'final max C (m)', get: (r) => r.violation.finalMax },
  { csv: 'worst_max_violation_m', title: 'worst max C (m)', get: (r) => r.violation.worstMax },
  { csv: 'energy_drift_percent', title: 'energy %', get: (r) => r.energy.driftPercent },
  { csv: 'unconverged_of_solves', title: 'unconv.', get: unconvergedText, tableOnly: true, optional: true },
  { csv: 'steps_per_s_ratio_to_first', title: 'speed ×', get: (r) => r.stepsPerSecondRatio ?? null },
];

/** Columns only the CSV carries (the table stays narrow enough for a terminal). */
const csvOnly: Column[] = [
  { csv: 'adapter', title: 'adapter', get: (r) => r.adapter },
  { csv: 'bodies', title: 'bodies', get: (r) => r.bodies },
  { csv: 'constraints', title: 'constraints', get: (r) => r.constraints },
  { csv: 'frames', title: 'frames', get: (r) => r.frames },
  { csv: 'iterations', title: 'iterations', get: (r) => r.options.iterations },
  { csv: 'substeps', title: 'substeps', get: (r) => r.options.substeps },
  { csv: 'dt_s', title: 'dt', get: (r) => r.options.dt },
  { csv: 'wall_median_ms', title: 'wall median ms', get: (r) => r.timing.wallMedianMs },
  { csv: 'final_rms_violation_m', title: 'final rms C', get: (r) => r.violation.finalRms },
  { csv: 'energy_start_j', title: 'E0', get: (r) => r.energy.start },
  { csv: 'energy_end_j', title: 'E', get: (r) => r.energy.end },
  { csv: 'row_solves_per_frame', title: 'rows/frame', get: (r) => r.cost.rowSolvesPerFrame },
  { csv: 'solves', title: 'solves', get: (r) => r.cost.solves ?? null },
  { csv: 'unconverged_solves', title: 'unconverged solves', get: (r) => r.cost.unconvergedSolves ?? null },
  { csv: 'dispatches_per_frame', title: 'dispatches', get: (r) => r.cost.dispatchesPerFrame },
  { csv: 'iteration_bytes_per_frame', title: 'bytes', get: (r) => r.cost.iterationBytesPerFrame },
  { csv: 'bandwidth_gb_per_s', title: 'GB/s', get: (r) => r.cost.bandwidthGBs },
  { csv: 'final_state_hash', title: 'hash', get: (r) => r.finalStateHash },
  { csv: 'diverged_frame', title: 'diverged', get: (r) => r.diverged?.frame ?? null },
];

/**
 * A number for people, the one definition the summary, the table and the report
 * use: `digits` significant figures without trailing zeros, thousands grouped,
 * e-notation below 1e-3 and from 1e9, and '—' for null, NaN and infinities (never
 * printed as numbers).
 */
export function formatNumber(x: number | null | undefined, digits = 3): string {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '—';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a < 1e-3 || a >= 1e9) return x.toExponential(digits - 1);
  if (a >= 10 ** digits) return Math.round(x).toLocaleString('en-US');
  return String(Number(x.toPrecision(digits)));
}

/** A solver's options in one line; compliance and damping only where they are set. */
/** The options that matter to the solver: a particle (Witkin) solver has no iterations, β or warm start. */
export function optionsText(o: SolverOptions, kind: 'rigid' | 'particles' = 'rigid', mode: IterationMode = 'sweeps'): string {
  if (kind === 'particles')
    return [
      `dt ${formatNumber(o.dt, 6)} s`,
      `${o.substeps} substep${o.substeps === 1 ? '' : 's'}`,
      `feedback k_s ${formatNumber(o.feedbackStiffness)}/s², k_d ${formatNumber(o.feedbackDamping)}/s`,
      'λ by conjugate gradient to 1e-10',
    ].join(' · ');
  const iterations =
    mode === 'tolerance' ? 'λ solved to tolerance (iterations do not apply)'
    : mode === 'direct' ? 'λ by a direct LDLᵀ solve to tolerance (iterations do not apply)'
    : mode === 'cap' ? `at most ${o.iterations} CG iteration${o.iterations === 1 ? '' : 's'}`
    : `${o.iterations} iteration${o.iterations === 1 ? '' : 's'}`;
  const parts = [
    `dt ${formatNumber(o.dt, 6)} s`,
    iterations,
    `${o.substeps} substep${o.substeps === 1 ? '' : 's'}`,
    `β ${formatNumber(o.beta)}/h`,
    `warm start ${formatNumber(o.warmStart)}`,
  ];
  if (o.compliance > 0) parts.push(`compliance ${formatNumber(o.compliance)} m/N`);
  if (o.linearDamping > 0 || o.angularDamping > 0) parts.push(`damping ${formatNumber(o.linearDamping)}/s, ${formatNumber(o.angularDamping)}/s ang.`);
  return parts.join(' · ');
}

function paramsText(p: Record<string, ParamValue>): string {
  return Object.entries(p)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

function status(r: RunRecord | SkippedRun): string {
  if (isSkipped(r)) return `skipped: ${r.skipped}`;
  if (r.diverged) return `DIVERGED at frame ${r.diverged.frame}: ${r.diverged.reason}`;
  return 'ok';
}

/** The printed table: one row per scene × solver, a note line under skipped and diverged runs. */
export function formatCompareTable(results: CompareResults): string {
  const ran = results.runs.filter((r): r is RunRecord => !isSkipped(r));
  const shown = columns.filter((c) => !c.optional || ran.some((r) => c.get(r) !== null));
  const head = ['scene', 'solver', ...shown.map((c) => c.title)];
  const rows: string[][] = [];
  const notes = new Map<number, string>();
  for (const r of results.runs) {
    if (isSkipped(r)) {
      notes.set(rows.length, `  ↳ ${r.solver} on ${r.scene}: ${status(r)}`);
      rows.push([r.scene, r.solver, ...shown.map(() => '')]);
      continue;
    }
    if (r.diverged) notes.set(rows.length, `  ↳ ${r.solver} on ${r.scene}: ${status(r)}`);
    rows.push([r.scene, r.solver, ...shown.map((c) => {
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
  return out.join('\n');
}

function csvCell(v: number | string | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** results.csv: one row per scene × solver, numbers at full precision, empty cells for none. */
export function compareCsv(results: CompareResults): string {
  const all = [...columns.filter((c) => !c.tableOnly), ...csvOnly];
  const lines = [['scene', 'params', 'solver', 'status', ...all.map((c) => c.csv)].join(',')];
  for (const r of results.runs) {
    const lead = [r.scene, paramsText(r.params), r.solver, status(r)].map(csvCell);
    lines.push([...lead, ...all.map((c) => (isSkipped(r) ? '' : csvCell(c.get(r))))].join(','));
  }
  return lines.join('\n') + '\n';
}
