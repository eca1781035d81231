/**
 * The necklace benchmark: necklaces of 40-bead chains at the given bead counts,
 * each solver, `frames` frames after a short warm-up, no readback until the end.
 * Figures: median and p95 ms per step on the solver's clock (GPU timestamps
 * where the adapter has them, else wall), wall median, steps/s; for GPU solvers
 * the achieved bandwidth of the Jacobi iteration kernels, from the difference
 * between a frame with N iterations and one with none (the iteration kernels'
 * own time) and the bytes those kernels must move (jacobiIterationBytes).
 */
import { cpus, totalmem } from 'node:os';
import { necklace } from '../scenes/necklace.js';
import { findSolver } from '../solvers/registry.js';
import { acquireGpu, type GpuContext } from '../gpu/device.js';
import { runSolver } from '../run/run.js';
import { defaultSolverOptions, type SolverOptions } from '../solvers/solver.js';
import { jacobiIterationBytes } from '../solvers/jacobi/gpu.js';

export interface BenchOptions {
  sizes: number[];
  frames: number;
  solvers: string[];
  log?: (line: string) => void;
}

export interface BenchRow {
  solver: string;
  beads: number;
  chains: number;
  iterations: number;
  frames: number;
  adapter: string;
  clock: string;
  medianMs: number;
  p95Ms: number;
  wallMedianMs: number;
  stepsPerSecond: number;
  /** GPU solvers: achieved bandwidth of update_multipliers + update_velocities, GB/s */
  iterationBandwidthGBs?: number;
  iterationMs?: number;
  diverged: boolean;
}

async function timeOnce(id: string, world: ReturnType<typeof necklace.build>, options: SolverOptions, frames: number, gpu?: GpuContext) {
  const solver = await findSolver(id)!.create(world, options, gpu);
  try {
    await solver.step(Math.min(5, frames)); // warm-up: pipelines, caches, JIT
    const r = await runSolver(solver, world, { frames, sampleEvery: frames });
    return r;
  } finally {
    solver.destroy();
  }
}

export async function runBench(opts: BenchOptions) {
  const log = opts.log ?? (() => {});
  const rows: BenchRow[] = [];
  let gpu: GpuContext | undefined;
  const options: SolverOptions = { ...defaultSolverOptions };
  for (const id of opts.solvers) {
    const info = findSolver(id);
    if (!info) throw new Error(`unknown solver '${id}'`);
    if (info.device === 'gpu' && !gpu) gpu = await acquireGpu();
    for (const beads of opts.sizes) {
      const chains = beads / 40;
      const world = necklace.build({ ...paramsDefault(), chains, beads: 40 });
      log(`${id}: ${beads} beads (${chains} × 40), ${opts.frames} frames …`);
      const r = await timeOnce(id, world, options, opts.frames, info.device === 'gpu' ? gpu : undefined);
      const row: BenchRow = {
        solver: id,
        beads,
        chains,
        iterations: options.iterations,
        frames: r.timing.frames,
        adapter: r.adapter,
        clock: r.timing.clock,
        medianMs: r.timing.medianMs,
        p95Ms: r.timing.p95Ms,
        wallMedianMs: r.timing.wallMedianMs,
        stepsPerSecond: r.timing.stepsPerSecond,
        diverged: !!r.diverged,
      };
      if (info.device === 'gpu') {
        // the iteration kernels' own time: frame(N iterations) − frame(0 iterations), per iteration
        const r0 = await timeOnce(id, world, { ...options, iterations: 0 }, opts.frames, gpu);
        const perIteration = (r.timing.medianMs - r0.timing.medianMs) / options.iterations;
        const bytes = jacobiIterationBytes(world.bodies.length + chains, world.constraints.length);
        row.iterationMs = perIteration;
        row.iterationBandwidthGBs = perIteration > 0 ? bytes / (perIteration * 1e-3) / 1e9 : undefined;
      }
      log(`  median ${row.medianMs.toFixed(3)} ms (${row.clock}), p95 ${row.p95Ms.toFixed(3)} ms, ${row.stepsPerSecond.toFixed(1)} steps/s` +
        (row.iterationBandwidthGBs ? `, iteration kernels ${row.iterationBandwidthGBs.toFixed(1)} GB/s` : ''));
      rows.push(row);
    }
  }
  gpu?.device.destroy();
  return {
    benchmark: 'necklace',
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: +(totalmem() / 2 ** 30).toFixed(1), node: process.version, platform: `${process.platform}-${process.arch}` },
    options,
    rows,
  };
}

function paramsDefault(): Record<string, number> {
  return Object.fromEntries(Object.entries(necklace.params).map(([k, p]) => [k, p.default]));
}
