/**
 * Run one solver on one world for a number of frames: step in batches, take a
 * snapshot every `sampleEvery` frames, recompute the metrics from it, watch for
 * divergence, and summarise the timings. The CLI, the benchmark and the tests
 * all go through here, so a figure means the same thing everywhere.
 *
 * Divergence (a reported outcome, never a crash or a NaN printed as a number):
 *   - any position, orientation or velocity not finite;
 *   - runaway energy: E − E₀ > energyFactor · E_scale, with
 *     E_scale = Σ m |g| · extent + |KE₀| + 1 J·kg⁻¹·Σm   (the energy the whole scene could trade by
 *     falling across its own bounding box, plus what it started with);
 *   - max violation > violationFactor · extent (constraints torn apart by many scene sizes).
 */
import { massProperties } from '../model/world.js';
import { isParticleSystem, sceneBodyCount, type SceneDesc } from '../model/scene-desc.js';
import type { ResidualCurve, Solver, SolverCost, StepTimings } from '../solvers/solver.js';
import type { ConstraintForce } from '../particles/system.js';
import { stateHash } from '../metrics/hash.js';
import { metricsFor, type FrameMetrics } from '../metrics/metrics.js';

export interface RunOptions {
  frames: number;
  /** measure every k frames (k ≥ 1); the first and last frame are always measured */
  sampleEvery?: number;
  /** frames recorded per solver.step call (one GPU submission) */
  batch?: number;
  /** body indices whose positions are recorded in the series */
  trace?: number[];
  energyFactor?: number;
  violationFactor?: number;
  /** record the residual of this frame's solve (1 = the first step); needs solver.stepRecordingResiduals */
  residualFrame?: number;
  /** called after each batch with (framesDone, framesTotal) */
  onProgress?: (done: number, total: number) => void;
  /** report each constraint's multiplier and force at the initial state (solvers with constraintForces) */
  constraintForces?: boolean;
}

export interface SeriesPoint {
  frame: number;
  t: number;
  maxViolation: number;
  rmsViolation: number;
  energy: number;
  momentum: [number, number, number];
  trace?: Record<string, [number, number, number]>;
}

export interface Divergence {
  frame: number;
  t: number;
  reason: string;
}

export interface TimingSummary {
  clock: StepTimings['clock'];
  medianMs: number;
  p95Ms: number;
  wallMedianMs: number;
  wallP95Ms: number;
  stepsPerSecond: number;
  frames: number;
}

export interface RunResult {
  solver: string;
  adapter: string;
  bodyCount: number;
  constraintCount: number;
  frames: number;
  initial: FrameMetrics;
  final: FrameMetrics | null;
  /** E_scale of the divergence watch (J): the energy the scene could trade, whatever the potential's datum */
  energyScale: number;
  worstMaxViolation: number;
  diverged: Divergence | null;
  timing: TimingSummary;
  /** per-frame ms on timing.clock, in frame order */
  msPerFrame: number[];
  cost: SolverCost;
  /** stateHash of the final snapshot; null when diverged */
  finalStateHash: string | null;
  residuals: ResidualCurve | null;
  series: SeriesPoint[];
  /** λ and Q̂ of every constraint at the initial state, when asked for and the solver has them */
  constraintForces?: ConstraintForce[];
}


export function sceneExtent(world: SceneDesc): number {
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  const grow = (p: number[], pad: number) => {
    for (let d = 0; d < 3; d++) {
      lo[d] = Math.min(lo[d], p[d] - pad);
      hi[d] = Math.max(hi[d], p[d] + pad);
    }
  };
  if (isParticleSystem(world)) {
    const pad = (p: number[]) => [p[0], p[1], p[2] ?? 0];
    for (const p of world.particles) grow(pad(p.position), p.radius ?? 0);
    for (const p of world.parametric ?? []) grow(pad(p.center), p.radius);
    for (const c of world.constraints) if (c.type === 'circle') grow(pad(c.center), c.radius);
  } else {
    for (const b of world.bodies) grow(b.position, b.shape.radius);
    for (const c of world.constraints) if (c.bodyB === null) grow(c.anchorB, 0);
  }
  if (!Number.isFinite(lo[0])) return 1;
  return Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summariseTimings(t: StepTimings): TimingSummary {
  const ms = [...t.msPerFrame].sort((a, b) => a - b);
  const wall = [...t.wallMsPerFrame].sort((a, b) => a - b);
  const median = percentile(ms, 50);
  return {
    clock: t.clock,
    medianMs: median,
    p95Ms: percentile(ms, 95),
    wallMedianMs: percentile(wall, 50),
    wallP95Ms: percentile(wall, 95),
    stepsPerSecond: 1000 / percentile(wall, 50),
    frames: ms.length,
  };
}

/**
 * E_scale = Σ m |g| · extent + |KE₀| + 1 J·kg⁻¹·Σm (J): the energy the scene could trade by falling across
 * its own bounding box, plus what it started with. Unlike E₀ it does not depend on the potential's datum.
 */
export function energyScale(world: SceneDesc, initial: FrameMetrics): number {
  const extent = sceneExtent(world);
  let g = 0, massSum = 0;
  if (isParticleSystem(world)) {
    for (const f of world.forces) if (f.type === 'gravity') g += Math.hypot(...f.g);
    for (const p of world.particles) if (!p.fixed) massSum += p.mass;
  } else {
    g = Math.hypot(...world.gravity);
    for (const b of world.bodies) if (!b.fixed) massSum += massProperties(b).mass;
  }
  return massSum * g * extent + Math.abs(initial.kinetic) + massSum * 1;
}

export class DivergenceWatch {
  private readonly e0: number;
  private readonly eScale: number;
  private readonly violationLimit: number;
  constructor(world: SceneDesc, initial: FrameMetrics, energyFactor = 10, violationFactor = 100) {
    this.e0 = initial.energy;
    this.eScale = energyFactor * energyScale(world, initial);
    this.violationLimit = violationFactor * sceneExtent(world);
  }
  check(m: FrameMetrics): string | null {
    if (!m.finite) return 'state is not finite (NaN or infinity)';
    if (!(m.energy - this.e0 <= this.eScale)) return `runaway energy: ${m.energy.toExponential(3)} J from ${this.e0.toExponential(3)} J`;
    if (!(m.maxViolation <= this.violationLimit)) return `constraint violation ${m.maxViolation.toExponential(3)} m beyond ${this.violationLimit.toExponential(2)} m`;
    return null;
  }
}

export async function runSolver(solver: Solver, world: SceneDesc, opts: RunOptions): Promise<RunResult> {
  if (!Number.isInteger(opts.frames) || opts.frames < 0) throw new Error('frames must be an integer ≥ 0');
  const sampleEvery = Math.max(1, Math.floor(opts.sampleEvery ?? 1));
  const batch = Math.max(1, Math.min(sampleEvery, Math.floor(opts.batch ?? sampleEvery)));
  const metrics = metricsFor(world, solver.options.compliance);
  const bodies = sceneBodyCount(world);
  const trace = opts.trace ?? [];
  const residualFrame = opts.residualFrame;
  if (residualFrame !== undefined) {
    if (!Number.isInteger(residualFrame) || residualFrame < 1 || residualFrame > opts.frames)
      throw new Error(`residual frame ${residualFrame} is out of range 1..${opts.frames}`);
    if (!solver.stepRecordingResiduals) throw new Error(`solver ${solver.id} does not report residuals`);
  }
  let residuals: ResidualCurve | null = null;
  for (const i of trace)
    if (!Number.isInteger(i) || i < 0 || i >= bodies) throw new Error(`trace body ${i} is out of range 0..${bodies - 1}`);

  const series: SeriesPoint[] = [];
  const record = (m: FrameMetrics, frame: number, pos: Float64Array) => {
    const p: SeriesPoint = {
      frame,
      t: m.t,
      maxViolation: m.maxViolation,
      rmsViolation: m.rmsViolation,
      energy: m.energy,
      momentum: m.momentum,
    };
    if (trace.length) {
      p.trace = {};
      for (const i of trace) p.trace[i] = [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]];
    }
    series.push(p);
  };

  const constraintForces = opts.constraintForces ? solver.constraintForces?.() : undefined;
  const snap0 = await solver.snapshot();
  const initial = metrics.measure(snap0);
  record(initial, 0, snap0.position);
  const watch = new DivergenceWatch(world, initial, opts.energyFactor, opts.violationFactor);
  let worst = initial.maxViolation;
  let final: FrameMetrics | null = initial;
  let finalSnap = snap0;
  let diverged: Divergence | null = null;
  solver.resetTimings();

  let done = 0;
  while (done < opts.frames) {
    const nextSample = Math.min(opts.frames, (Math.floor(done / sampleEvery) + 1) * sampleEvery);
    let n = Math.min(batch, nextSample - done);
    if (residualFrame !== undefined && residuals === null && done + n >= residualFrame) {
      if (done + 1 === residualFrame) n = 1; // this frame is the recorded one
      else n = residualFrame - 1 - done; // step up to the frame before it
    }
    try {
      if (residualFrame !== undefined && residuals === null && done + 1 === residualFrame) residuals = await solver.stepRecordingResiduals!();
      else await solver.step(n);
    } catch (e) {
      // a step that cannot go on (e.g. a constraint without a gradient) is this run's outcome, not a crash
      if ((e as Error).name !== 'SolverFailure') throw e;
      diverged = { frame: done + 1, t: (done + 1) * solver.options.dt, reason: (e as Error).message };
      final = null;
      break;
    }
    done += n;
    opts.onProgress?.(done, opts.frames);
    if (done === nextSample) {
      const snap = await solver.snapshot();
      const m = metrics.measure(snap);
      const reason = watch.check(m);
      if (reason) {
        diverged = { frame: done, t: m.t, reason };
        final = null;
        break;
      }
      worst = Math.max(worst, m.maxViolation);
      final = m;
      finalSnap = snap;
      record(m, done, snap.position);
    }
  }

  const timings = solver.timings();
  return {
    solver: solver.id,
    adapter: solver.adapter.name,
    bodyCount: solver.bodyCount,
    constraintCount: solver.constraintCount,
    frames: done,
    initial,
    final,
    energyScale: energyScale(world, initial),
    worstMaxViolation: worst,
    diverged,
    timing: summariseTimings(timings),
    msPerFrame: timings.msPerFrame,
    cost: solver.cost(),
    finalStateHash: final ? stateHash(finalSnap) : null,
    residuals,
    series,
    ...(constraintForces ? { constraintForces } : {}),
  };
}
