/**
 * The cost-versus-quality benchmark: the 100k-bead necklace (default 2,500 chains
 * of 40) for `frames` frames (default 600 = 10 s of simulated time) under every
 * chosen solver at a few settings (iterations × substeps). Each row gives the
 * mean (total ÷ frames) and median step time on the solver's clock (GPU timestamps where the adapter has
 * them, else wall), the row solves per frame, and the worst and final max
 * constraint violation over the whole run, measured every frame (snapshots and
 * metrics are taken between timed frames, so they are not in the step times).
 *
 * Default settings spend 1×, 4× (in iterations) and 4× (in substeps) the solver's
 * default work, so one table shows what each solver gets for its cost, and
 * whether more iterations or more substeps buy more.
 */
import { cpus, totalmem } from 'node:os';
import { necklace } from '../scenes/necklace.js';
import { resolveParams } from '../scenes/scene.js';
import { findSolver } from '../solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../solvers/solver.js';
import { acquireGpu, type GpuContext } from '../gpu/device.js';
import { runSolver } from '../run/run.js';
import { formatNumber } from './table.js';
import { energyDriftPercent } from './results.js';

export interface Setting {
  iterations: number;
  substeps: number;
}

export interface TradeoffOptions {
  solvers: string[];
  chains: number;
  frames: number;
  /** the same settings for every solver; default: each solver's defaultSettings */
  settings?: Setting[];
  log?: (line: string) => void;
}

export interface TradeoffRow {
  solver: string;
  adapter: string;
  iterations: number;
  substeps: number;
  frames: number;
  clock: string;
  /** total step time ÷ frames, on `clock` */
  meanMs: number;
  medianMs: number;
  p95Ms: number;
  rowSolvesPerFrame: number;
  /** worst max violation over the run (m), null when it diverged */
  worstMaxViolation: number | null;
  finalMaxViolation: number | null;
  energyDriftPercent: number | null;
  diverged: string | null;
}

/** N×S: N iterations, S substeps. */
export function parseSettings(text: string): Setting[] {
  return text.split(',').map((s) => {
    const m = /^(\d+)x(\d+)$/.exec(s.trim());
    if (!m || +m[2] < 1) throw new Error(`setting '${s}': expected ITERATIONSxSUBSTEPS, e.g. 8x1`);
    return { iterations: +m[1], substeps: +m[2] };
  });
}

/** The solver's default, 4× its iterations, and 4× its substeps. */
export function defaultSettings(options: SolverOptions): Setting[] {
  const { iterations: n, substeps: s } = options;
  return [
    { iterations: n, substeps: s },
    { iterations: 4 * n, substeps: s },
    { iterations: n, substeps: 4 * s },
  ];
}

export async function runTradeoff(opts: TradeoffOptions) {
  const log = opts.log ?? (() => {});
  const world = necklace.build(resolveParams(necklace, { chains: opts.chains }));
  const rows: TradeoffRow[] = [];
  let gpu: GpuContext | undefined;
  try {
    for (const id of opts.solvers) {
      const info = findSolver(id);
      if (!info) throw new Error(`unknown solver '${id}'`);
      if (info.device === 'gpu' && !gpu) gpu = await acquireGpu();
      for (const setting of opts.settings ?? defaultSettings(resolveOptions(info))) {
        const options = resolveOptions(info, setting);
        log(`${id} ${setting.iterations}×${setting.substeps}: ${world.bodies.length} beads, ${opts.frames} frames …`);
        const solver = await info.create(world, options, info.device === 'gpu' ? gpu : undefined);
        let r;
        try {
          r = await runSolver(solver, world, { frames: opts.frames, sampleEvery: 1 });
        } finally {
          solver.destroy();
        }
        const row: TradeoffRow = {
          solver: id,
          adapter: r.adapter,
          ...setting,
          frames: r.timing.frames,
          clock: r.timing.clock,
          meanMs: r.timing.meanMs,
          medianMs: r.timing.medianMs,
          p95Ms: r.timing.p95Ms,
          rowSolvesPerFrame: r.cost.rowSolvesPerFrame,
          worstMaxViolation: r.diverged ? null : r.worstMaxViolation,
          finalMaxViolation: r.final ? r.final.maxViolation : null,
          energyDriftPercent: energyDriftPercent(r),
          diverged: r.diverged ? `frame ${r.diverged.frame}: ${r.diverged.reason}` : null,
        };
        rows.push(row);
        log(`  mean ${formatNumber(row.meanMs)} ms, median ${formatNumber(row.medianMs)} ms (${row.clock}), worst max violation ${row.diverged ? `— diverged at ${row.diverged}` : `${formatNumber(row.worstMaxViolation)} m`}`);
      }
    }
  } finally {
    gpu?.device.destroy();
  }
  return {
    benchmark: 'necklace-tradeoff',
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: +(totalmem() / 2 ** 30).toFixed(1), node: process.version },
    scene: { name: 'necklace', chains: opts.chains, beads: world.bodies.length, constraints: world.constraints.length },
    frames: opts.frames,
    rows,
  };
}

/** The rows as a Markdown table (the closing note and README quote it). */
export function tradeoffTable(rows: TradeoffRow[]): string {
  const head = ['solver', 'it × sub', 'row solves/frame (mean)', 'mean ms', 'median ms', 'clock', 'worst max C (m)', 'final max C (m)', 'energy %', 'adapter'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows)
    lines.push(
      `| ${[
        r.solver,
        `${r.iterations} × ${r.substeps}`,
        formatNumber(r.rowSolvesPerFrame),
        formatNumber(r.meanMs),
        formatNumber(r.medianMs),
        r.clock === 'gpu-timestamp' ? 'gpu' : 'wall',
        r.diverged ? `diverged (${r.diverged.split(':')[0]})` : formatNumber(r.worstMaxViolation),
        formatNumber(r.finalMaxViolation),
        formatNumber(r.energyDriftPercent),
        r.adapter,
      ].join(' | ')} |`,
    );
  return lines.join('\n');
}
