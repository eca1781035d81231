/**
 * A solver's step as a list of named stages (Box2D v3: solver.h b2SolverStageType, solver.c's stage
 * list), and the clock that times them, so every solver reports where its time goes.
 *
 * The names are the source's: a stage is called what the text or engine it implements calls it.
 * The common ones, in the order a frame meets them:
 *   collide · islands · prepare joints · prepare contacts · integrate velocities · warm start ·
 *   solve · integrate positions · relax · restitution · store impulses · sleep
 * (position-level solvers add their own, e.g. XPBD's "project joints", "project contacts",
 * "update velocities", "velocity pass").
 *
 * Invariants: a stage's time is wall-clock (performance.now) on the CPU; the totals are ms summed
 * over every call since the last reset, so a stage run once per substep is summed over the substeps.
 * Timing costs one clock read per stage call (never per body or per row). On the GPU a stage is
 * timed by GPU timestamps around a compute pass of its own, on one frame in 16 (gpu/frames.ts
 * FramePasses); the other frames stay one pass each.
 */

import type { StageSampling } from '../gpu/frames.js';
export { STAGE_SAMPLE_EVERY, type StageSampling } from '../gpu/frames.js';

/** ms per stage, summed since the last reset, in the order the stages first ran */
export type StageTimes = Record<string, number>;

/** What a solver built from stages declares: its stage names in step order (for tables and reports). */
export interface StagedSolver {
  /** the stage names of one frame, in order (each listed once, however often it runs) */
  readonly stageNames: readonly string[];
  /** ms per stage since creation or the last resetTimings() */
  stageTimes(): StageTimes;
  /**
   * Where the stage times come from when they do not cover every timed frame's wall time (GPU
   * solvers: GPU timestamps on one frame in gpu/frames.ts STAGE_SAMPLE_EVERY); absent: every frame, wall.
   */
  stageSampling?(): StageSampling;
  /** Where stages are sampled (GPU solvers): time one frame in `every` from the next reset (1: every frame). */
  sampleStagesEvery?(every: number): void;
}


/** Accumulates wall time per named stage. */
export class StageClock {
  private readonly index = new Map<string, number>();
  private readonly names: string[] = [];
  private ms: number[] = [];
  /** stage calls timed since creation (never reset): a caller can tell whether a step timed any */
  calls = 0;

  /** Runs fn as stage `name`, adding its wall time to the stage's total. */
  run<T>(name: string, fn: () => T): T {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      this.add(name, performance.now() - t0);
    }
  }

  /**
   * Ends stage `name`, begun at `t0` (a performance.now() reading), and returns the time now, the next
   * stage's start: `t = clock.lap('integrate', t)` between stages, one clock read each, no closure.
   */
  lap(name: string, t0: number): number {
    const t = performance.now();
    this.add(name, t - t0);
    return t;
  }

  /** true while a step that timings() does not count runs (e.g. a residual-recording frame): nothing is added */
  paused = false;

  /** Adds ms to stage `name` (for a stage timed by its caller). */
  add(name: string, ms: number): void {
    if (this.paused) return;
    this.calls++;
    let k = this.index.get(name);
    if (k === undefined) {
      k = this.names.length;
      this.index.set(name, k);
      this.names.push(name);
      this.ms.push(0);
    }
    this.ms[k] += ms;
  }

  /** ms per stage since the last reset, in first-run order. */
  totals(): StageTimes {
    const out: StageTimes = {};
    for (let k = 0; k < this.names.length; k++) out[this.names[k]] = this.ms[k];
    return out;
  }

  reset(): void {
    this.ms = this.ms.map(() => 0);
  }
}

/** Whether a solver reports stage times. */
export function isStaged(solver: object): solver is StagedSolver {
  return typeof (solver as Partial<StagedSolver>).stageTimes === 'function' && Array.isArray((solver as Partial<StagedSolver>).stageNames);
}
