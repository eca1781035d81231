/**
 * The necklace benchmark: necklaces of 40-bead chains at the given bead counts,
 * each solver, `frames` frames after a short warm-up, no readback inside a timed frame.
 * Figures: mean (total ÷ frames), median and p95 ms per step on the solver's clock (GPU timestamps
 * where the adapter has them, else wall), wall median, steps/s (frames ÷ total wall time); the worst and the
 * final max constraint violation over the run (measured every `sampleEvery` frames:
 * by default every frame for CPU solvers, whose snapshots and metrics happen between
 * timed frames and are not in the step times, and only the first and last frame for
 * GPU solvers, so their frames stay one submission without readback; each row says
 * which it used); for GPU solvers the achieved bandwidth
 * of the iteration kernels, from the difference between a frame with N
 * iterations and one with none (the iteration kernels' own time) and the bytes those
 * kernels must move (the solver's cost().iterationBytesPerFrame). That is an effective bandwidth:
 * the bytes are counted per use (a chain bead's velocity once for each of its two joints), and a
 * second use is often served by the cache, so it can exceed the memory's peak (the H200's 4.8 TB/s:
 * 6.1 TB/s at 4M beads under jacobi-gpu, docs/hardware/h200-2026-11-26). Each solver runs at
 * its own default options (resolveOptions).
 *
 * Comparisons: when the run includes `baseline` (default 'rapier' when it is among the
 * solvers), each other solver at each size gets its steps/s ÷ the baseline's steps/s
 * (same options, so equal iterations) and both worst violations, and whether it meets the
 * goal of SPEEDUP_GOAL × the baseline's steps/s with a lower worst violation.
 */
import { cpus, totalmem } from 'node:os';
import { necklace } from '../scenes/necklace.js';
import { findSolver } from '../solvers/registry.js';
import { acquireGpu, type GpuContext } from '../gpu/device.js';
import { runSolver } from '../run/run.js';
import { resolveOptions, type SolverOptions } from '../solvers/solver.js';
import { formatNumber as fmt } from './table.js';

export interface BenchOptions {
  sizes: number[];
  frames: number;
  solvers: string[];
  /** measure the violation every k frames (default: 1 for CPU solvers, `frames` for GPU solvers) */
  sampleEvery?: number;
  /** the solver the others are compared with (default 'rapier' when it is among `solvers`) */
  baseline?: string;
  log?: (line: string) => void;
}

/** The goal the comparison reports against: ≥ this many times the baseline's steps/s. */
export const SPEEDUP_GOAL = 8;

export interface BenchComparison {
  beads: number;
  solver: string;
  baseline: string;
  iterations: number;
  stepsPerSecond: number;
  baselineStepsPerSecond: number;
  /** solver steps/s ÷ baseline steps/s (wall clock, each frames ÷ total time: the mean frames) */
  stepsPerSecondRatio: number;
  worstMaxViolation: number | null;
  baselineWorstMaxViolation: number | null;
  /** stepsPerSecondRatio ≥ SPEEDUP_GOAL and a lower worst max violation than the baseline (false if either diverged) */
  meetsGoal: boolean;
}

export interface BenchRow {
  solver: string;
  beads: number;
  chains: number;
  iterations: number;
  substeps: number;
  frames: number;
  adapter: string;
  clock: string;
  /** total step time ÷ frames, on `clock` */
  meanMs: number;
  medianMs: number;
  p95Ms: number;
  wallMedianMs: number;
  /** frames ÷ total wall time */
  stepsPerSecond: number;
  /** GPU solvers: achieved bandwidth of update_multipliers + update_velocities, GB/s */
  /** why the GPU's timestamps were not used (then clock is 'wall') */
  clockNote?: string;
  iterationBandwidthGBs?: number;
  iterationMs?: number;
  /** worst max constraint violation over the run (m), every `sampleEvery` frames; null when diverged */
  worstMaxViolation: number | null;
  /** max violation at the last frame (m); null when diverged */
  finalMaxViolation: number | null;
  sampleEvery: number;
  diverged: boolean;
}

/**
 * One solver over `frames` frames after a 5-frame warm-up; with `zeroIterations`, the same solver then
 * again at 0 iterations (a GPU solver reads its iteration count as it encodes each frame), for the
 * iteration kernels' share: one solver made, not two (at 10M beads making one takes about a minute
 * of host time).
 */
async function timeOnce(id: string, world: ReturnType<typeof necklace.build>, options: SolverOptions, frames: number, gpu?: GpuContext, sampleEvery = frames, zeroIterations = false) {
  const solver = await findSolver(id)!.create(world, options, gpu);
  try {
    await solver.step(Math.min(5, frames)); // warm-up: pipelines, caches, JIT
    const r = await runSolver(solver, world, { frames, sampleEvery });
    if (!zeroIterations) return { r, r0: null };
    solver.options.iterations = 0;
    await solver.step(Math.min(5, frames));
    const r0 = await runSolver(solver, world, { frames, sampleEvery: frames });
    return { r, r0 };
  } finally {
    solver.destroy();
  }
}

export async function runBench(opts: BenchOptions) {
  const log = opts.log ?? (() => {});
  const rows: BenchRow[] = [];
  let gpu: GpuContext | undefined;
  const baseline = opts.baseline ?? (opts.solvers.includes('rapier') ? 'rapier' : undefined);
  if (baseline !== undefined && !opts.solvers.includes(baseline)) throw new Error(`baseline '${baseline}' is not among the solvers`);
  for (const id of opts.solvers) {
    const info = findSolver(id);
    if (!info) throw new Error(`unknown solver '${id}'`);
    if (info.device === 'gpu' && !gpu) gpu = await acquireGpu();
    const options = resolveOptions(info); // each solver at its own defaults
    for (const beads of opts.sizes) {
      const chains = beads / 40;
      const world = necklace.build({ ...paramsDefault(), chains, beads: 40 });
      log(`${id}: ${fmt(beads, 15)} beads (${fmt(chains, 15)} × 40), ${fmt(opts.frames, 15)} frames …`);
      // CPU solvers: every frame by default (a snapshot between timed frames costs no step time);
      // GPU solvers: only the last frame by default, keeping the whole run in one batch without readback
      const sampleEvery = Math.max(1, Math.floor(opts.sampleEvery ?? (info.device === 'gpu' ? opts.frames : 1)));
      const { r, r0 } = await timeOnce(id, world, options, opts.frames, info.device === 'gpu' ? gpu : undefined, sampleEvery, info.device === 'gpu');
      if (beads === opts.sizes[0]) log(`  adapter: ${r.adapter}`); // which device the figures are of (a GPU host's first run checks it)
      if (r.timing.clockNote) log(`  clock: ${r.timing.clockNote}`);
      const row: BenchRow = {
        solver: id,
        beads,
        chains,
        iterations: options.iterations,
        substeps: options.substeps,
        frames: r.timing.frames,
        adapter: r.adapter,
        clock: r.timing.clock,
        ...(r.timing.clockNote ? { clockNote: r.timing.clockNote } : {}),
        meanMs: r.timing.meanMs,
        medianMs: r.timing.medianMs,
        p95Ms: r.timing.p95Ms,
        wallMedianMs: r.timing.wallMedianMs,
        stepsPerSecond: r.timing.stepsPerSecond,
        worstMaxViolation: r.diverged ? null : r.worstMaxViolation,
        finalMaxViolation: r.final ? r.final.maxViolation : null,
        sampleEvery,
        diverged: !!r.diverged,
      };
      if (r0) {
        // the iteration kernels' own time: frame(N iterations) − frame(0 iterations), per iteration
        const solves = options.iterations * options.substeps;
        const perIteration = (r.timing.medianMs - r0.timing.medianMs) / solves;
        const bytes = (r.cost.iterationBytesPerFrame ?? NaN) / solves;
        row.iterationMs = perIteration;
        row.iterationBandwidthGBs = perIteration > 0 ? bytes / (perIteration * 1e-3) / 1e9 : undefined;
      }
      log(`  mean ${fmt(row.meanMs)} ms, median ${fmt(row.medianMs)} ms (${row.clock}), p95 ${fmt(row.p95Ms)} ms, ${fmt(row.stepsPerSecond, 4)} steps/s (mean)` +
        (row.iterationBandwidthGBs ? `, iteration kernels ${fmt(row.iterationBandwidthGBs)} GB/s effective` : '') +
        (row.diverged ? ', diverged' : `, worst max violation ${fmt(row.worstMaxViolation)} m`));
      rows.push(row);
    }
  }
  gpu?.device.destroy();
  const comparisons = baseline === undefined ? [] : compare(rows, baseline);
  // the figures of each comparison (the JSON keeps meetsGoal against SPEEDUP_GOAL for the record)
  for (const c of comparisons)
    log(`${fmt(c.beads, 15)} beads: ${c.solver} ${fmt(c.stepsPerSecondRatio)}× ${c.baseline}'s steps/s (${fmt(c.stepsPerSecond, 4)} against ${fmt(c.baselineStepsPerSecond, 4)}); ` +
      `worst max violation ${c.worstMaxViolation === null ? 'n/a (diverged)' : `${fmt(c.worstMaxViolation)} m`} against ${c.baselineWorstMaxViolation === null ? 'n/a (diverged)' : `${fmt(c.baselineWorstMaxViolation)} m`}`);
  return {
    benchmark: 'necklace',
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: +(totalmem() / 2 ** 30).toFixed(1), node: process.version, platform: `${process.platform}-${process.arch}` },
    options: Object.fromEntries(opts.solvers.map((id) => [id, resolveOptions(findSolver(id)!)])),
    speedupGoal: SPEEDUP_GOAL,
    rows,
    comparisons,
  };
}


/** Each non-baseline row against the baseline's row of the same size (both ran with the same options). */
export function compare(rows: BenchRow[], baseline: string): BenchComparison[] {
  const out: BenchComparison[] = [];
  for (const row of rows) {
    if (row.solver === baseline) continue;
    const base = rows.find((b) => b.solver === baseline && b.beads === row.beads);
    if (!base) continue;
    const ratio = row.stepsPerSecond / base.stepsPerSecond;
    const lower = row.worstMaxViolation !== null && base.worstMaxViolation !== null && row.worstMaxViolation < base.worstMaxViolation;
    out.push({
      beads: row.beads,
      solver: row.solver,
      baseline,
      iterations: row.iterations,
      stepsPerSecond: row.stepsPerSecond,
      baselineStepsPerSecond: base.stepsPerSecond,
      stepsPerSecondRatio: ratio,
      worstMaxViolation: row.worstMaxViolation,
      baselineWorstMaxViolation: base.worstMaxViolation,
      meetsGoal: ratio >= SPEEDUP_GOAL && lower,
    });
  }
  return out;
}

function paramsDefault(): Record<string, number> {
  return Object.fromEntries(Object.entries(necklace.params).map(([k, p]) => [k, p.default]));
}
