/**
 * Run one solver on one world for a number of frames: step in batches, take a
 * snapshot every `sampleEvery` frames, recompute the metrics from it, watch for
 * divergence, and summarise the timings. The CLI, the benchmark and the tests
 * all go through here, so a figure means the same thing everywhere.
 *
 * Divergence (a reported outcome, never a crash or a NaN printed as a number) is a blow-up, not a
 * bounded jump (DivergenceWatch below):
 *   - any position, orientation or velocity not finite;
 *   - runaway energy: E − E₀ beyond energyFactor · E_scale and still growing, with
 *     E_scale = Σ m |g| · extent + |KE₀| + 1 J·kg⁻¹·Σm   (the energy the whole scene could trade by
 *     falling across its own bounding box, plus what it started with);
 *   - constraints torn apart: max violation beyond violationFactor · extent and still growing.
 * A quantity beyond its bound that stops growing is a one-time jump (RunResult.jumps): the run goes on.
 *
 * Snapshots are taken at every sample frame and at every frame an observer asks for (the trajectory
 * writer: frames 0, K, 2K, … and the last); each is checked by the watch before anyone sees it.
 */
import { boundingRadius, massProperties } from '../model/world.js';
import { forEachBody, forEachConstraint, packedBodies } from '../model/packed.js';
import { isParticleSystem, sceneBodyCount, type SceneDesc } from '../model/scene-desc.js';
import type { ResidualCurve, Solver, SolverContactStats, SolverCost } from '../solvers/solver.js';
import { isStaged } from '../solvers/stages.js';
import type { Snapshot, StepTimings } from '../model/snapshot.js';
import type { ConstraintForce } from '../particles/system.js';
import { stateHash } from '../metrics/hash.js';
import { metricsFor, type FrameMetrics } from '../metrics/metrics.js';
import { hostCalls, hostCallsInstalled, hostCallsSince, type HostCalls } from '../gpu/host-calls.js';
import { dawnValidation } from '../gpu/device.js';

export interface RunOptions {
  frames: number;
  /** measure every k frames (k ≥ 1); the first and last frame are always measured */
  sampleEvery?: number;
  /** frames recorded per solver.step call (one GPU submission) */
  batch?: number;
  /** body indices whose positions are recorded in the series */
  trace?: number[];
  /** the divergence watch's bounds: energyFactor · E_scale (default 10) and violationFactor · extent (default 100) */
  energyFactor?: number;
  violationFactor?: number;
  /** false: only a state that is not finite stops the run (`--divergence off`) */
  divergenceWatch?: boolean;
  /** sees the snapshot of frames 0, every, 2·every, … and the last frame (once the watch has passed it) */
  observe?: { every: number; onSnapshot: (snap: Snapshot) => void | Promise<void> };
  /** record the residual of this frame's solve (1 = the first step); needs solver.stepRecordingResiduals */
  residualFrame?: number;
  /** called after each batch with (framesDone, framesTotal) */
  onProgress?: (done: number, total: number) => void;
  /** report each constraint's multiplier and force at the initial state (solvers with constraintForces) */
  constraintForces?: boolean;
  /**
   * solvers that time their stages on sampled frames (GPU solvers): one frame in this many (default theirs,
   * gpu/frames.ts STAGE_SAMPLE_EVERY; 1: every frame, for a run of a few frames)
   */
  stageEvery?: number;
}

export interface SeriesPoint {
  frame: number;
  t: number;
  maxViolation: number;
  rmsViolation: number;
  energy: number;
  momentum: [number, number, number];
  /** worlds with collisions on: the deepest penetration (m) and the touching points at this frame (FrameMetrics) */
  maxPenetration?: number;
  contacts?: number;
  /** rigid worlds: the dynamic bodies awake at this frame (FrameMetrics.awake; all of them when nothing sleeps) */
  awake?: number;
  /** solvers that count their contacts (Solver.contactStats, read with this frame's snapshot): their points, and colours used and the overflow set where they colour */
  solverPoints?: number;
  colours?: number;
  colourOverflow?: number;
  trace?: Record<string, [number, number, number]>;
}

/**
 * The contact figures of a run, for worlds with collisions on (absent otherwise), from the metrics of
 * the sampled frames (FrameMetrics.maxPenetration and .contacts: collision detection run afresh on
 * each snapshot, never the solver's own contact list). The final figures are RunResult.final's.
 */
export interface ContactSummary {
  /** the largest maxPenetration over the sampled frames, the initial one included (as worstMaxViolation), m */
  worstMaxPenetration: number;
  /** the mean of the touching-point count over the sampled frames (frame 0 included) */
  meanContacts: number;
  /** sampled frames the two figures above are taken over */
  samples: number;
}

/**
 * Sleeping, for rigid worlds (absent for particle systems): how many dynamic bodies were awake over the
 * sampled frames (FrameMetrics.awake, read from each snapshot's sleep mask, Snapshot.asleep). The final
 * count is RunResult.final's.
 */
export interface AwakeSummary {
  /** the dynamic (not fixed) bodies: the count `awake` is out of */
  dynamicBodies: number;
  /** the solver reported a sleep mask in this run (it can put bodies to sleep: --sleep 1, Rapier); false: all stay awake */
  sleeps: boolean;
  /** the mean of the awake count over the sampled frames (frame 0 included) */
  meanAwake: number;
  /** sampled frames the mean is taken over */
  samples: number;
  /** the first sampled frame at which every dynamic body was asleep, or null (never, or no dynamic body) */
  allAsleep: { frame: number; t: number } | null;
}

/**
 * A solver's own contact figures over the run (Solver.contactStats, read with each sampled snapshot after
 * frame 0; absent for solvers that keep none): the last one, and over the samples the means of its points
 * and manifolds, the most colours used and the largest overflow set.
 */
export interface SolverContactSummary {
  final: SolverContactStats;
  samples: number;
  meanPoints: number;
  meanManifolds: number;
  /** solvers that colour: the most colours any sampled frame used, and its largest overflow set (manifolds) */
  maxColours?: number;
  maxOverflow?: number;
}

export interface Divergence {
  frame: number;
  t: number;
  reason: string;
}

export interface TimingSummary {
  clock: StepTimings['clock'];
  /** why the GPU's timestamps were not used although the adapter has them */
  clockNote?: string;
  /**
   * mean ms per frame on `clock`: the run's total step time ÷ its frames. The figure speed is judged by: a
   * pile that falls asleep has cheap frames in the majority, and its median is then a sleeping frame's cost
   */
  meanMs: number;
  medianMs: number;
  p95Ms: number;
  /** mean wall ms per frame: total wall step time ÷ frames */
  wallMeanMs: number;
  wallMedianMs: number;
  wallP95Ms: number;
  /** frames ÷ total wall seconds = 1000 / wallMeanMs (the mean, not the median frame: see meanMs) */
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
  /** the largest angular violation over the sampled frames, rad (hinge and fixed joints; 0 without them) */
  worstMaxAngularViolation?: number;
  /** worlds with collisions on: worst penetration and mean contact count over the sampled frames (ContactSummary) */
  contacts?: ContactSummary;
  /** rigid worlds: the awake bodies over the sampled frames and whether the solver sleeps (AwakeSummary) */
  awake?: AwakeSummary;
  /** solvers that count their contacts: their own figures over the sampled frames (SolverContactSummary) */
  solverContacts?: SolverContactSummary;
  diverged: Divergence | null;
  /** one-time jumps: quantities that went beyond the watch's bound and did not keep growing (the largest sample of each) */
  jumps: Jump[];
  timing: TimingSummary;
  /** per-frame ms on timing.clock, in frame order */
  msPerFrame: number[];
  /** rowSolvesPerFrame is the mean over the run (RunCost) */
  cost: RunCost;
  /** stateHash of the final snapshot; null when diverged */
  finalStateHash: string | null;
  residuals: ResidualCurve | null;
  series: SeriesPoint[];
  /** λ and Q̂ of every constraint at the initial state, when asked for and the solver has them */
  constraintForces?: ConstraintForce[];
  /**
   * solvers built from stages (solvers/stages.ts): mean ms per frame in each stage, in step order, over
   * every timed frame's wall time (CPU) or the sampled frames' GPU timestamps (GPU: stagesClock says)
   */
  stages?: StageTime[];
  /** where `stages` comes from: 'wall' (every timed frame), or e.g. 'GPU timestamps, 37 sampled frames'; or why no stage was timed */
  stagesClock?: string;
  /** where the run's wall time went on the host, per frame (RunHost) */
  host?: RunHost;
}

/**
 * Where a run's wall time went on the host, in ms per frame stepped, over the run's loop (from after frame 0's
 * snapshot to the last frame's): in the solver's step calls, in its snapshots (readback and the solver's checks),
 * in the metrics (CPU: contacts, penetration), in the recorded residual frame, and the rest. A GPU solver's step
 * is split further (gpu/frames.ts FrameHostTimes): recording the frames, finish + submit, the wait for the GPU
 * (submit to onSubmittedWorkDone), the stamps' readback; what is left of the step is its host work before and
 * around the batches (beforeStep). `calls`: the WebGPU calls per frame over the loop (gpu/host-calls.ts).
 */
export interface RunHost {
  wallMs: number;
  stepMs: number;
  snapshotMs: number;
  metricsMs: number;
  residualFrameMs: number;
  otherMs: number;
  /** GPU solvers: batches (submissions of frames) per frame, and the step's split */
  batches?: number;
  encodeMs?: number;
  submitMs?: number;
  gpuWaitMs?: number;
  stampsMs?: number;
  /** WebGPU calls per frame (counts) and their host ms per frame (*Ms), over the whole loop, snapshots included */
  calls?: HostCalls;
  /** GPU solvers: whether Dawn validated the calls (SOLVERLAB_DAWN_VALIDATION=off turns it off: gpu/device.ts dawnValidation) */
  dawnValidation?: boolean;
}

/**
 * What a run's frames cost: the solver's SolverCost, with rowSolvesPerFrame the mean over the frames
 * stepped (Σ_frames rows / frames). A solver's cost() counts the rows of its state at the time (contact
 * points touching, bodies awake): read once at the end it gives the last frame, 0 once a pile sleeps.
 */
export type RunCost = SolverCost & {
  /** the rows of the last frame stepped (what cost() said at the end; a solver that measures its solves: its own mean) */
  rowSolvesLastFrame: number;
};

/**
 * The run's cost from the solver's at the end (`last`) and Σ rows over the `frames` stepped. A solver that
 * measures its solves (`solves` counted: the tolerance solvers, whose rowSolvesPerFrame is already its
 * mean since resetTimings) keeps its own figure; for the others the mean is rowSum / frames. No frame: the
 * solver's count for the state it holds.
 */
export function runCost(last: SolverCost, rowSum: number, frames: number): RunCost {
  const measured = last.solves !== undefined;
  return {
    ...last,
    rowSolvesPerFrame: measured || frames === 0 ? last.rowSolvesPerFrame : rowSum / frames,
    rowSolvesLastFrame: last.rowSolvesPerFrame,
  };
}

/** One stage's share of a frame (solvers/stages.ts): mean wall ms per timed frame. */
export interface StageTime {
  name: string;
  msPerFrame: number;
}

/**
 * A staged solver's stage times as mean ms per frame, in its step order, and their clock: over `frames`
 * timed frames on the wall clock, or over the frames it sampled where it samples (GPU solvers,
 * stageSampling: 'GPU timestamps, N sampled frames', or why none was).
 */
export function stageTimesPerFrame(solver: Solver, frames: number): { stages?: StageTime[]; clock?: string } {
  if (!isStaged(solver)) return {};
  const sampling = solver.stageSampling?.();
  if (sampling) {
    frames = sampling.frames;
    if (frames <= 0) return { clock: `not timed: ${sampling.note}` };
  }
  if (frames <= 0) return {};
  const totals = solver.stageTimes();
  const names = [...solver.stageNames, ...Object.keys(totals).filter((n) => !solver.stageNames.includes(n))];
  const stages = names.filter((n) => totals[n] !== undefined).map((name) => ({ name, msPerFrame: totals[name] / frames }));
  return { stages, clock: sampling ? `GPU timestamps, ${frames} sampled frame${frames === 1 ? '' : 's'}` : 'wall' };
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
    const p = [0, 0, 0];
    forEachBody(world.bodies, (_i, b, x, at) => {
      p[0] = x[at], p[1] = x[at + 1], p[2] = x[at + 2];
      grow(p, boundingRadius(b.shape));
    });
    forEachConstraint(world.constraints, (_ic, _c, _a, bodyB, _rA, anchorB, at) => {
      if (bodyB !== null) return;
      p[0] = anchorB[at], p[1] = anchorB[at + 1], p[2] = anchorB[at + 2];
      grow(p, 0);
    });
  }
  if (!Number.isFinite(lo[0])) return 1;
  return Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Σx / n, NaN for none (the per-frame times: a GPU batch's frames each hold its average, so this is total ÷ frames). */
export function mean(xs: number[]): number {
  if (!xs.length) return NaN;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

export function summariseTimings(t: StepTimings): TimingSummary {
  const ms = [...t.msPerFrame].sort((a, b) => a - b);
  const wall = [...t.wallMsPerFrame].sort((a, b) => a - b);
  const median = percentile(ms, 50);
  const wallMean = mean(t.wallMsPerFrame);
  return {
    clock: t.clock,
    meanMs: mean(t.msPerFrame),
    medianMs: median,
    p95Ms: percentile(ms, 95),
    wallMeanMs: wallMean,
    wallMedianMs: percentile(wall, 50),
    wallP95Ms: percentile(wall, 95),
    stepsPerSecond: 1000 / wallMean,
    frames: ms.length,
    ...(t.clockNote !== undefined ? { clockNote: t.clockNote } : {}),
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
    const masses = new Map<object, number>(); // per shared prototype of a packed list
    const packed = packedBodies(world.bodies) !== null;
    forEachBody(world.bodies, (_i, b) => {
      if (b.fixed) return;
      let m = masses.get(b);
      if (m === undefined) {
        m = massProperties({ ...b, position: [0, 0, 0] }).mass;
        if (packed) masses.set(b, m);
      }
      massSum += m;
    });
  }
  return massSum * g * extent + Math.abs(initial.kinetic) + massSum * 1;
}

/** Which quantity a bounded jump or a divergence concerns. */
export type WatchedQuantity = 'energy' | 'violation';

/**
 * A one-time jump: a watched quantity went beyond its bound and then did not keep growing (e.g. the
 * energy that a position correction releases once when it closes a large constraint error). The run
 * goes on; this is its largest sample beyond the bound.
 */
export interface Jump {
  quantity: WatchedQuantity;
  /** frame and time of the largest sample beyond the bound */
  frame: number;
  t: number;
  /** energy: E − E₀ (J); violation: max |C| (m), at that sample */
  size: number;
  /** the bound it went beyond: energyFactor · E_scale (J) or violationFactor · extent (m) */
  bound: number;
  /** the first frame beyond the bound */
  firstFrame: number;
}

/** Frames per window of the growth test, windows that must rise in a row, and the rise each must make. */
export const GROWTH_WINDOW_FRAMES = 20;
export const GROWTH_WINDOWS = 3;
export const GROWTH_RATIO = 1.25;
/** The steady test (polynomial growth, e.g. a body torn off and falling): more windows, a smaller rise each. */
export const STEADY_WINDOWS = 7;
export const STEADY_RATIO = 1.02;
/** The fast test: samples in a row beyond the bound, each at least FAST_RATIO × the one before. */
export const FAST_SAMPLES = 3;
export const FAST_RATIO = 2;
/**
 * The ceiling: a sample beyond CEILING_RATIO × its bound is divergence at once, growing or not. The
 * largest release measured of a correction is 400 E_scale (40× the energy bound: stretched-chain,
 * header below); jacobi-cpu flinging a 10-box stack at 7·10⁴ m/s in two frames (10⁶ E_scale), then
 * flying on at that speed, is no release, and the growth tests, which need it to keep growing, took it
 * for a one-time jump.
 */
export const CEILING_RATIO = 1e4;
/**
 * (d): a start whose largest joint error is at most this fraction ε of the scene's size counts as exact.
 * Such an error, closed within one step h, leaves at most the speed ε·extent/h on a body, so a correction
 * releases at most ½ Σm (ε extent/h)², under the bound 10 E_scale ≥ 10 Σm (|g| extent + 1 J/kg) while
 * ε extent/h < √(20 (|g| extent + 1)): at ε = 1e-6 a 2 m scene at h = 1/480 s gives 1e-3 m/s against
 * 6.4 m/s. The f32 solvers' rounding of an exact start lies below it (a joint's error sums a few roundings
 * of 2⁻²⁴ ≈ 6e-8 of the scene's size: rapier-multibody reads back 7.3e-8 m on the 2.25 m mass-ratio
 * pendulum, 3e-8 of it), so an f32 solver that gains energy from an exact start is caught at once as an
 * f64 one is. (It was 1e-9, under f32 rounding: that solver's blow-up was first taken for a correction's
 * one-time release, "not divergence", and caught frames later by the ceiling.)
 */
export const RELEASE_FREE_VIOLATION = 1e-6;

/**
 * A number shown beside another it was compared with: enough significant digits (3 at least) that
 * the two shown numbers compare as the numbers themselves do (never "5.477e+1 beyond 5.48e+1").
 */
export function formatCompared(x: number, other: number): string {
  const show = (v: number, d: number) => {
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(d - 1);
    return String(Number(v.toPrecision(d)));
  };
  for (let d = 3; d < 17; d++) {
    const xs = show(x, d), os = show(other, d);
    if (Math.sign(Number(xs) - Number(os)) === Math.sign(x - other)) return xs;
  }
  return show(x, 17);
}

/** One watched quantity's state: the peaks of its recent windows, its run of fast growth, its largest jump. */
class QuantityWatch {
  /** peak and first sampled frame of the last completed (non-empty) windows, oldest first, at most STEADY_WINDOWS */
  private readonly peaks: { peak: number; from: number }[] = [];
  private window = -1;
  private windowPeak = 0;
  private windowFrom = 0;
  /** the previous sample, and the samples of the run of fast growth under way (with the one before it) */
  private previous = NaN;
  private previousFrame = 0;
  private fastRun: { q: number; frame: number }[] = [];
  /**
   * The peaks of the excursions beyond the bound that came back within it, each larger than every
   * earlier one (an earlier, larger one would be reported instead of it), and the excursion under way.
   */
  private closed: Jump[] = [];
  private open: Jump | null = null;
  /** when the quantity diverged: the first frame of its growth (its excursions from then on are the blow-up) */
  blowUpFrom = Infinity;

  constructor(
    readonly quantity: WatchedQuantity,
    readonly bound: number,
    private readonly unit: string,
    private readonly label: string,
    private readonly boundText: string,
    /** nothing to release (DivergenceWatch (d)): beyond the bound is divergence at once */
    private readonly noRelease = false,
  ) {}

  /**
   * The largest jump before `until` (a frame); `diverged`: the excursion under way when the run diverged
   * is the blow-up, not a jump.
   */
  jump(diverged: boolean, until: number): Jump | null {
    let best: Jump | null = null;
    for (const j of this.closed) if (j.frame < until) best = j;
    if (!diverged && this.open && (!best || this.open.size > best.size)) best = this.open;
    return best && { ...best };
  }

  /** Takes one sample; the reason when the quantity keeps growing beyond its bound, else null. */
  sample(value: number, frame: number, t: number): string | null {
    const q = Math.max(0, value); // an energy below E₀ is no excess: rises are counted from 0
    const w = Math.floor(frame / GROWTH_WINDOW_FRAMES);
    if (w !== this.window) {
      if (this.window >= 0) {
        this.peaks.push({ peak: this.windowPeak, from: this.windowFrom });
        if (this.peaks.length > Math.max(GROWTH_WINDOWS, STEADY_WINDOWS)) this.peaks.shift();
      }
      this.window = w;
      this.windowPeak = q;
      this.windowFrom = frame;
    } else this.windowPeak = Math.max(this.windowPeak, q);
    // fast: each sample beyond the bound FAST_RATIO × the one before, FAST_SAMPLES times running
    if (q > this.bound && q >= FAST_RATIO * this.previous) {
      if (!this.fastRun.length) this.fastRun.push({ q: this.previous, frame: this.previousFrame });
      this.fastRun.push({ q, frame });
    } else this.fastRun = [];
    this.previous = q;
    this.previousFrame = frame;
    if (q <= this.bound) {
      if (this.open && (!this.closed.length || this.open.size > this.closed[this.closed.length - 1].size)) this.closed.push(this.open);
      this.open = null;
      return null;
    }
    const u = this.unit;
    const beyond = `${this.label} = ${formatCompared(q, this.bound)} ${u} beyond the bound ${formatCompared(this.bound, q)} ${u} (${this.boundText})`;
    if (q > CEILING_RATIO * this.bound) {
      this.blowUpFrom = this.open ? this.open.firstFrame : frame;
      return `${beyond}: over ${formatCompared(CEILING_RATIO, 0)}× the bound, beyond any correction's release`;
    }
    if (this.fastRun.length > FAST_SAMPLES) {
      const run = this.fastRun.slice(-(FAST_SAMPLES + 1));
      this.blowUpFrom = run[0].frame;
      return `${beyond}, and growing at least ${FAST_RATIO}× a sample: ${run.map((x) => formatCompared(x.q, 0)).join(' → ')} ${u}`;
    }
    // slow and steady: the peaks of windows + 1 windows in a row (this one so far the last), each ratio × the one before
    const all = [...this.peaks, { peak: this.windowPeak, from: this.windowFrom }];
    for (const [windows, ratio] of [[GROWTH_WINDOWS, GROWTH_RATIO], [STEADY_WINDOWS, STEADY_RATIO]]) {
      const chain = all.slice(-(windows + 1));
      if (chain.length === windows + 1 && chain.every((p, i) => i === 0 || p.peak > ratio * chain[i - 1].peak)) {
        this.blowUpFrom = chain[0].from;
        return `${beyond}, and growing: its peaks in the last ${windows + 1} sampled ${GROWTH_WINDOW_FRAMES}-frame windows ${chain.map((x) => formatCompared(x.peak, 0)).join(' → ')} ${u}`;
      }
    }
    // (d), after the tests above, whose messages say more where they apply as well
    if (this.noRelease) {
      this.blowUpFrom = this.open ? this.open.firstFrame : frame;
      return `${beyond}, from a start with every joint satisfied and nothing touching: no correction to release, the solver put it in`;
    }
    if (!this.open) this.open = { quantity: this.quantity, frame, t, size: value, bound: this.bound, firstFrame: frame };
    else if (value > this.open.size) Object.assign(this.open, { frame, t, size: value });
    return null;
  }
}

/**
 * The divergence watch, one definition for `run`, `compare`, the benchmark and the viewer.
 *
 * Divergence is a blow-up, not a bounded jump. Of each sample it takes two quantities, each with a bound:
 *   excess energy   ΔE = E − E₀,  bound energyFactor · E_scale  (default 10; E_scale: energyScale())
 *   violation       max |C|,      bound violationFactor · extent (default 100 scene sizes)
 * and reports divergence when
 *   (a) the state is not finite (a position, orientation or velocity, or the energy, NaN or infinite); or
 *   (b) a quantity is beyond its bound and keeps growing:
 *       slow: the peaks p₀ … p₃ of 4 windows of 20 frames in a row (the current one so far the last;
 *             windows without samples skipped) rise by more than 1.25× each (p_{i+1} > 1.25 p_i: ×1.95 over
 *             3 windows); or
 *       steady: the peaks of 8 such windows rise by more than 1.02× each (growth slower than geometric:
 *             a body torn off and falling, its violation ½ g t², rises ×(1 + 1/n)² in window n); or
 *       fast: 3 samples in a row beyond the bound, each ≥ 2× the one before; or
 *   (c) a quantity is beyond 10⁴ × its bound (CEILING_RATIO), growing or not; or
 *   (d) the energy is beyond its bound in a scene that has nothing to release: no contacts, and every
 *       joint satisfied at the start (max |C| ≤ RELEASE_FREE_VIOLATION × the scene's size). A passive
 *       system cannot gain energy, and a jump is a correction's release only where there was an error
 *       to correct: pgs-cpu on the cantilever rose to 30× the bound from an exact start and stayed
 *       there, and (b) took it for a jump.
 * A quantity beyond its bound that does not keep growing is a one-time jump (Jump): the run goes on,
 * and the largest such sample of each quantity is reported.
 *
 * Why these numbers (measured, README "Divergence"): a Baumgarte or XPBD correction of a large error
 * releases its energy in the first frames and the excess then decays (stretched-chain, stretch 1.5–5,
 * under xpbd-cpu, rapier and gs-cpu: ΔE peaks at 9–400 E_scale in frames 1–5, and every later window's
 * peak is lower than the one before). An unstable iteration grows geometrically however it oscillates
 * (warm-started Jacobi on the 10-bead chain: window peaks ×1.7–3.6 per 20 frames; Gauss-Seidel on the
 * 100-bead chain, whose growth comes in steps, ×1.7–10 per 20 frames but not per 10). To be taken for
 * divergence, a release would have to keep rising beyond its bound through 4 windows (over 60 frames, 1 s
 * at 60 Hz) by ×1.25 each, or through 8 windows by 2 % each.
 * With the watch off (`enabled` false), only (a) remains.
 */
export class DivergenceWatch {
  private readonly e0: number;
  private readonly energy: QuantityWatch;
  private readonly violation: QuantityWatch;
  private samples = 0;
  private diverged = false;
  constructor(
    world: SceneDesc,
    initial: FrameMetrics,
    energyFactor = 10,
    violationFactor = 100,
    private readonly enabled = true,
  ) {
    this.e0 = initial.energy;
    // (d): a scene without contacts that starts with every joint satisfied has nothing to release
    const nothingToRelease = initial.maxPenetration === undefined && !(initial.maxViolation > RELEASE_FREE_VIOLATION * sceneExtent(world));
    this.energy = new QuantityWatch('energy', energyFactor * energyScale(world, initial), 'J', 'E − E₀', `${energyFactor} E_scale`, nothingToRelease);
    this.violation = new QuantityWatch('violation', violationFactor * sceneExtent(world), 'm', 'max violation', `${violationFactor} scene sizes`);
  }
  /**
   * Takes one sample (its frame: the windows of the growth test are counted in frames; without it,
   * each call counts as the next frame). The reason when the run has diverged, else null.
   */
  check(m: FrameMetrics, frame?: number): string | null {
    const reason = this.reason(m, frame ?? ++this.samples);
    if (reason) this.diverged = true;
    return reason;
  }
  private reason(m: FrameMetrics, frame: number): string | null {
    if (!m.finite) return 'state is not finite (NaN or infinity)';
    if (!Number.isFinite(m.energy) || !Number.isFinite(m.maxViolation)) return 'state overflows f64: energy or violation is infinite';
    if (!this.enabled) return null;
    const e = this.energy.sample(m.energy - this.e0, frame, m.t);
    const v = this.violation.sample(m.maxViolation, frame, m.t);
    if (e) return `runaway energy: ${e}`;
    if (v) return `constraints torn apart: ${v}`;
    return null;
  }
  /**
   * The one-time jumps so far: of each quantity, the largest sample beyond its bound that did not keep
   * growing. After a divergence, excursions still under way when it came are part of the blow-up, not jumps.
   */
  jumps(): Jump[] {
    const until = Math.min(this.energy.blowUpFrom, this.violation.blowUpFrom);
    return [this.energy.jump(this.diverged, until), this.violation.jump(this.diverged, until)].filter((j): j is Jump => j !== null);
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
  // the solver's own contact figures, read with each sampled snapshot after frame 0 (before it, nothing was counted)
  const solverContacts: SolverContactStats[] = [];
  const record = (m: FrameMetrics, frame: number, pos: Float64Array) => {
    const p: SeriesPoint = {
      frame,
      t: m.t,
      maxViolation: m.maxViolation,
      rmsViolation: m.rmsViolation,
      energy: m.energy,
      momentum: m.momentum,
    };
    if (m.maxPenetration !== undefined) p.maxPenetration = m.maxPenetration;
    if (m.contacts !== undefined) p.contacts = m.contacts;
    if (m.awake !== undefined) p.awake = m.awake;
    const cs = frame > 0 ? solver.contactStats?.() : null;
    if (cs) {
      solverContacts.push(cs);
      p.solverPoints = cs.points;
      if (cs.colours) {
        p.colours = cs.colours.used;
        p.colourOverflow = cs.colours.overflow;
      }
    }
    if (trace.length) {
      p.trace = {};
      for (const i of trace) p.trace[i] = [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]];
    }
    series.push(p);
  };

  const constraintForces = opts.constraintForces ? solver.constraintForces?.() : undefined;
  // the last good snapshot, frame 0's first: no other is kept (at 10M bodies one is 1 GB)
  let finalSnap = await solver.snapshot();
  let sleeps = finalSnap.asleep !== undefined; // the solver hands a sleep mask: it can put bodies to sleep
  const initial = metrics.measure(finalSnap);
  record(initial, 0, finalSnap.position);
  const watch = new DivergenceWatch(world, initial, opts.energyFactor, opts.violationFactor, opts.divergenceWatch ?? true);
  const observeEvery = opts.observe ? Math.floor(opts.observe.every) : 0;
  if (opts.observe && !(observeEvery >= 1)) throw new Error(`observe.every must be an integer ≥ 1, got ${opts.observe.every}`);
  await opts.observe?.onSnapshot(finalSnap);
  let worst = initial.maxViolation;
  let worstAngular = initial.maxAngularViolation ?? 0;
  let final: FrameMetrics | null = initial;
  let diverged: Divergence | null = null;
  if (opts.stageEvery !== undefined && isStaged(solver)) solver.sampleStagesEvery?.(opts.stageEvery);
  solver.resetTimings();

  let done = 0;
  let rowSum = 0; // Σ over the frames stepped of their row solves (RunCost)
  // host time (RunHost): the loop's wall, and its parts
  const calls0 = hostCalls();
  const loop0 = performance.now();
  let stepMs = 0, snapshotMs = 0, metricsMs = 0, residualFrameMs = 0;
  while (done < opts.frames) {
    const nextSample = Math.min(opts.frames, (Math.floor(done / sampleEvery) + 1) * sampleEvery);
    const nextObserved = observeEvery ? Math.min(opts.frames, (Math.floor(done / observeEvery) + 1) * observeEvery) : opts.frames;
    const nextStop = Math.min(nextSample, nextObserved);
    let n = Math.min(batch, nextStop - done);
    if (residualFrame !== undefined && residuals === null && done + n >= residualFrame) {
      if (done + 1 === residualFrame) n = 1; // this frame is the recorded one
      else n = residualFrame - 1 - done; // step up to the frame before it
    }
    try {
      const s0 = performance.now();
      if (residualFrame !== undefined && residuals === null && done + 1 === residualFrame) {
        residuals = await solver.stepRecordingResiduals!();
        residualFrameMs += performance.now() - s0;
      } else {
        await solver.step(n);
        stepMs += performance.now() - s0;
      }
    } catch (e) {
      // a step that cannot go on (e.g. a constraint without a gradient) is this run's outcome, not a crash
      if ((e as Error).name !== 'SolverFailure') throw e;
      diverged = { frame: done + 1, t: (done + 1) * solver.options.dt, reason: (e as Error).message };
      final = null;
      break;
    }
    done += n;
    // the rows of the frames just stepped: cost() counts the solver's state now (contacts touching, bodies
    // awake), so it is read after every step call, each reading standing for the n frames of its call
    // (exact at batch 1, the default; a batch's last frame for its others); outside the timed step
    rowSum += n * solver.cost().rowSolvesPerFrame;
    opts.onProgress?.(done, opts.frames);
    if (done === nextStop) {
      let snap: Snapshot;
      const r0 = performance.now();
      try {
        snap = await solver.snapshot();
        snapshotMs += performance.now() - r0;
      } catch (e) {
        // a failure found when the state is read back (a GPU solver's lost contacts) ends the run as a step's does
        if ((e as Error).name !== 'SolverFailure') throw e;
        diverged = { frame: done, t: done * solver.options.dt, reason: (e as Error).message };
        final = null;
        break;
      }
      if (snap.asleep !== undefined) sleeps = true;
      const m0 = performance.now();
      const m = metrics.measure(snap);
      metricsMs += performance.now() - m0;
      const reason = watch.check(m, done);
      if (reason) {
        diverged = { frame: done, t: m.t, reason };
        final = null;
        break;
      }
      final = m;
      finalSnap = snap;
      if (done === nextSample) {
        worst = Math.max(worst, m.maxViolation);
        worstAngular = Math.max(worstAngular, m.maxAngularViolation ?? 0);
        record(m, done, snap.position);
      }
      if (observeEvery && done === nextObserved) await opts.observe!.onSnapshot(snap);
    }
  }

  const loopMs = performance.now() - loop0;
  const host = runHost(solver.timings(), done, { loopMs, stepMs, snapshotMs, metricsMs, residualFrameMs }, hostCallsInstalled() ? hostCallsSince(calls0) : null);

  // contact figures over the same samples as the worst violation (the series: frame 0 and every sample frame)
  let contacts: ContactSummary | undefined;
  if (initial.maxPenetration !== undefined) {
    let worstPen = 0, sumContacts = 0;
    for (const p of series) {
      worstPen = Math.max(worstPen, p.maxPenetration ?? 0);
      sumContacts += p.contacts ?? 0;
    }
    contacts = { worstMaxPenetration: worstPen, meanContacts: sumContacts / series.length, samples: series.length };
  }

  // awake bodies over the same samples (rigid worlds: FrameMetrics.awake is absent for particle systems)
  let awake: AwakeSummary | undefined;
  if (initial.awake !== undefined) {
    const dynamicBodies = initial.dynamicBodies ?? 0;
    const first = dynamicBodies > 0 ? series.find((p) => p.awake === 0) : undefined;
    awake = {
      dynamicBodies,
      sleeps,
      meanAwake: series.reduce((k, p) => k + (p.awake ?? 0), 0) / series.length,
      samples: series.length,
      allAsleep: first ? { frame: first.frame, t: first.t } : null,
    };
  }

  let contactSummary: SolverContactSummary | undefined;
  if (solverContacts.length) {
    const n = solverContacts.length, coloured = solverContacts.filter((c) => c.colours);
    contactSummary = {
      final: solverContacts[n - 1],
      samples: n,
      meanPoints: solverContacts.reduce((a, c) => a + c.points, 0) / n,
      meanManifolds: solverContacts.reduce((a, c) => a + c.manifolds, 0) / n,
      ...(coloured.length ? { maxColours: Math.max(...coloured.map((c) => c.colours!.used)), maxOverflow: Math.max(...coloured.map((c) => c.colours!.overflow)) } : {}),
    };
  }

  const timings = solver.timings();
  const { stages, clock: stagesClock } = stageTimesPerFrame(solver, timings.msPerFrame.length);
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
    worstMaxAngularViolation: worstAngular,
    ...(contacts ? { contacts } : {}),
    ...(awake ? { awake } : {}),
    ...(contactSummary ? { solverContacts: contactSummary } : {}),
    diverged,
    jumps: watch.jumps(),
    timing: summariseTimings(timings),
    msPerFrame: timings.msPerFrame,
    cost: runCost(solver.cost(), rowSum, done),
    finalStateHash: final ? stateHash(finalSnap) : null,
    residuals,
    series,
    ...(constraintForces ? { constraintForces } : {}),
    ...(stages ? { stages } : {}),
    ...(stagesClock ? { stagesClock } : {}),
    ...(host ? { host } : {}),
  };
}

/** The run's host times per frame (RunHost) from the loop's sums, the solver's timings and the WebGPU calls over the loop (null: none counted). */
function runHost(t: StepTimings, frames: number, ms: { loopMs: number; stepMs: number; snapshotMs: number; metricsMs: number; residualFrameMs: number }, calls: HostCalls | null): RunHost | undefined {
  if (frames === 0) return undefined;
  const per = (x: number) => x / frames;
  const h: RunHost = {
    wallMs: per(ms.loopMs),
    stepMs: per(ms.stepMs),
    snapshotMs: per(ms.snapshotMs),
    metricsMs: per(ms.metricsMs),
    residualFrameMs: per(ms.residualFrameMs),
    otherMs: per(ms.loopMs - ms.stepMs - ms.snapshotMs - ms.metricsMs - ms.residualFrameMs),
  };
  if (t.host) {
    h.batches = per(t.host.batches);
    h.encodeMs = per(t.host.encodeMs);
    h.submitMs = per(t.host.submitMs);
    h.gpuWaitMs = per(t.host.waitMs);
    h.stampsMs = per(t.host.stampsMs);
  }
  if (calls && t.host) {
    const c = { ...calls };
    for (const k of Object.keys(c) as (keyof HostCalls)[]) c[k] = per(c[k]);
    h.calls = c;
    h.dawnValidation = dawnValidation();
  }
  return h;
}
