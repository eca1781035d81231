/**
 * The records SolverLab writes: one `RunRecord` per run (what `run --json`
 * writes, and each entry of a compare's results.json), and `CompareResults`,
 * the whole matrix with the machine it ran on. One definition of each figure:
 * the CLI table, the CSV and the HTML report all read these records.
 *
 * Numbers that are not finite are written as null, never as NaN.
 */
import type { ParamValue } from '../scenes/scene.js';
import type { ConstraintForce } from '../particles/system.js';
import type { Jump, RunHost, RunResult, SolverContactSummary } from '../run/run.js';
import type { IterationMode, ResidualCurve, SolverOptions } from '../solvers/solver.js';
import { findSolver } from '../solvers/registry.js';
import type { HoldTolerances, HoldVerdict } from './holds.js';

export interface RunMeta {
  scene: string;
  /** the scene file, when the scene came from one */
  file?: string;
  params: Record<string, ParamValue>;
  options: SolverOptions;
  /** the solver's SolverInfo.iterationMode, where it has one */
  iterationMode?: IterationMode;
  /** the process's memory: the estimate checked before the run (model/limits.ts: what the process held then plus what the run adds) and the peak resident set it reached */
  memory?: RunMemory;
}

export interface RunMemory {
  estimatedBytes: number;
  peakResidentBytes: number;
  /** the JS heap's limit this process ran with (cli/heap.ts) */
  heapLimitBytes: number;
}

export interface RunRecord {
  scene: string;
  params: Record<string, ParamValue>;
  solver: string;
  /**
   * compare only, and only for an entry of the solver list that sets options of its own
   * (`NAME:key=value[:key=value…]`): the run's name, e.g. 'rapier:iterations=4', which the table, CSV and
   * report show in place of the solver's id, and those options (they override the shared ones; `options`
   * holds what the run used)
   */
  label?: string;
  settings?: Partial<SolverOptions>;
  /** the options the run used that its solver reads (SolverInfo.reads; optionsItReads) */
  options: Partial<SolverOptions>;
  /** what options.iterations means for this solver (SolverInfo.iterationMode); absent: 'sweeps' */
  iterationMode?: IterationMode;
  adapter: string;
  bodies: number;
  constraints: number;
  frames: number;
  timing: {
    /** 'gpu-timestamp' or 'wall': the clock meanMs, medianMs and p95Ms come from */
    clock: string;
    /**
     * mean ms per frame: total step time ÷ frames (run/run.ts TimingSummary). Speed is judged by it: where
     * most frames are cheap (a pile asleep) the median is a cheap frame's cost. Absent in records written
     * before it (read: meanFrameMs)
     */
    meanMs?: number | null;
    /** the median frame's ms, and the 95th percentile */
    medianMs: number | null;
    p95Ms: number | null;
    /** wall clock: total ÷ frames, median, 95th percentile */
    wallMeanMs?: number | null;
    wallMedianMs: number | null;
    wallP95Ms: number | null;
    /** frames ÷ total wall seconds: 1000 / wall mean ms (records written before meanMs: 1000 / wall median) */
    stepsPerSecond: number | null;
    /** ms per frame on `clock`, in frame order (GPU: per-submission averages) */
    msPerFrame: (number | null)[];
    /** solvers built from stages: mean ms per frame in each stage, in step order (solvers/stages.ts) */
    stages?: { name: string; msPerFrame: number }[];
    /** the stages' clock: 'wall' over every timed frame, or GPU timestamps over sampled frames; or why none */
    stagesClock?: string;
  };
  cost: {
    /** constraint-row solves per frame, the mean over the run (a point constraint is 3 rows; run/run.ts RunCost) */
    rowSolvesPerFrame: number;
    /** the rows of the last frame alone (0 when everything sleeps); absent in records written before it */
    rowSolvesLastFrame?: number;
    dispatchesPerFrame: number | null;
    /** estimated bytes moved per frame by the iteration kernels */
    iterationBytesPerFrame: number | null;
    /** iterationBytesPerFrame / mean ms, GB/s (a lower bound: the whole step's time is used) */
    bandwidthGBs: number | null;
    /** solvers that iterate to a tolerance (conjugate gradient): iterations per frame, measured */
    cgIterationsPerFrame?: number;
    /** solvers that solve to a tolerance: the solves of the run, and how many ended without reaching it */
    solves?: number;
    unconvergedSolves?: number;
  };
  violation: { finalMax: number | null; finalRms: number | null; worstMax: number | null };
  memory?: RunMemory;
  /**
   * Scenes with collisions on only (absent otherwise): the deepest penetration over the contact points (m)
   * at the last frame and the worst over the sampled frames (frame 0 included), the touching points at the
   * last frame and their mean over the sampled frames (metrics/metrics.ts; run/run.ts ContactSummary).
   * The final figures are null when the run diverged.
   */
  contacts?: { finalMaxPenetration: number | null; worstMaxPenetration: number | null; finalCount: number | null; meanCount: number | null };
  /**
   * Rigid worlds only (absent for particle systems): the dynamic bodies awake (not asleep) at the last frame
   * (null when the run diverged) and their mean over the sampled frames, out of `dynamicBodies`; `sleeps`:
   * the solver reported a sleep mask in this run (without one every body stays awake); `allAsleepT`: the
   * time of the first sampled frame at which every dynamic body slept, s, or null (run/run.ts AwakeSummary).
   */
  awake?: { finalCount: number | null; meanCount: number | null; dynamicBodies: number; sleeps: boolean; allAsleepT: number | null };
  /**
   * Solvers that count their own contacts (Solver.contactStats: the GPU contact solvers, read with each sampled
   * snapshot): the last snapshot's pairs, manifolds, points and colours (sizes and overflow set), and over the
   * samples the mean points and manifolds, the most colours and the largest overflow set (run/run.ts
   * SolverContactSummary). What the solver worked on, not a metric: the metrics' own count is `contacts`.
   */
  solverContacts?: SolverContactSummary;
  energy: { start: number | null; end: number | null; driftPercent: number | null };
  momentum: { start: number[]; end: number[] | null };
  diverged: { frame: number; t: number; reason: string } | null;
  /** one-time jumps: energy or violation beyond the divergence watch's bound that stopped growing (run/run.ts Jump) */
  jumps: Jump[];
  /** short hash of the final state's f64 bytes (null when diverged) */
  finalStateHash: string | null;
  /** where the wall time went on the host, ms per frame, and the WebGPU calls per frame (run/run.ts RunHost); absent in records written before it */
  host?: RunHost;
  residuals: ResidualCurve | null;
  /** run --frames 0 and the like: each constraint's λ and force Q̂ at the initial state (particle solvers) */
  constraintForces?: ConstraintForce[];
  /**
   * compare only, on a scene built to stand still (SceneInfo.restsAfter): the time of the reference sample
   * and the drift since, the farthest any body got from where it was then, m (bench/holds.ts DriftTracker;
   * null: the run ended before it, or a position was not finite)
   */
  rest?: { from: number | null; drift: number | null };
  /** compare only: whether the run held its scene against CompareResults.holdTolerances (bench/holds.ts); absent where no test applies */
  holds?: HoldVerdict;
  /** compare only: steps/s ÷ the steps/s of the first solver on the same scene (null if that one did not run): the ratio of mean frame times */
  stepsPerSecondRatio?: number | null;
  /** maxPenetration (m) and contacts (touching points): scenes with collisions on only; awake (dynamic bodies awake): rigid worlds */
  series: {
    t: number;
    maxViolation: number | null;
    rmsViolation: number | null;
    energy: number | null;
    maxPenetration?: number | null;
    contacts?: number;
    awake?: number;
    /** as RunRecord.solverContacts, at this frame: the solver's points, colours used and overflow set */
    solverPoints?: number;
    colours?: number;
    colourOverflow?: number;
    trace?: Record<string, number[]>;
  }[];
}

/** A scene × solver pair of a compare that was not run, and why. */
export interface SkippedRun {
  scene: string;
  params: Record<string, ParamValue>;
  solver: string;
  /** as RunRecord.label and settings */
  label?: string;
  settings?: Partial<SolverOptions>;
  skipped: string;
  /** the solver declined the scene (its `unsupported`, or the pre-run checks), rather than a means lacking (no adapter) */
  refused?: boolean;
}

export interface MachineInfo {
  /** e.g. 'Linux 6.1 x64' */
  os: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  /** WebGPU adapters used, by description (empty when no GPU solver ran) */
  adapters: string[];
}

export interface CompareResults {
  /** ISO time the compare started */
  createdAt: string;
  /** the command line, for the record */
  command: string;
  machine: MachineInfo;
  /** package → version (solverlab, webgpu, @dimforge/rapier3d-compat, …) */
  versions: Record<string, string>;
  frames: number;
  /** what a run had to keep to hold its scene (RunRecord.holds); absent in results written before it */
  holdTolerances?: HoldTolerances;
  scenes: string[];
  /** the solver list as run: each entry's label (runLabel), the solver's id where it sets no options of its own */
  solvers: string[];
  runs: (RunRecord | SkippedRun)[];
}

/** What a run is called in the table, CSV and report: its label where its entry set options of its own, else the solver's id. */
export function runLabel(r: Pick<RunRecord, 'solver' | 'label'>): string {
  return r.label ?? r.solver;
}

export function isSkipped(r: RunRecord | SkippedRun): r is SkippedRun {
  return 'skipped' in r;
}

/**
 * Whether a run's awake count is worth showing beside its other figures (the printed table, the HTML
 * report, the `run` summary): a rigid run whose solver sleeps in it, or whose bodies were ever counted
 * asleep. Elsewhere every dynamic body is awake all along, and the CSV and JSON still carry the count.
 */
export function showsSleep(r: Pick<RunRecord, 'awake'>): boolean {
  return r.awake !== undefined && (r.awake.sleeps || (r.awake.meanCount !== null && r.awake.meanCount < r.awake.dynamicBodies));
}

export function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/**
 * (E − E₀)/|E₀| in %, or null: diverged, or E₀ at rounding level (≤ 1e-9 of the scene's energy scale,
 * e.g. a scene that starts at rest where its potential's datum is), where the ratio would be noise over
 * noise; the summary and CSV still give E₀ and E in J.
 */
export function energyDriftPercent(r: Pick<RunResult, 'initial' | 'final' | 'energyScale'>): number | null {
  if (!r.final) return null;
  const e0 = r.initial.energy;
  return Math.abs(e0) <= 1e-9 * r.energyScale ? null : (100 * (r.final.energy - e0)) / Math.abs(e0);
}

/**
 * A record's mean ms per frame on its clock: timing.meanMs, or for a record written before it, the mean
 * of msPerFrame (each frame's ms; a GPU batch's frames each hold its average, so the mean is total ÷ frames).
 */
export function meanFrameMs(r: Pick<RunRecord, 'timing'>): number | null {
  if (r.timing.meanMs !== undefined) return r.timing.meanMs;
  const xs = r.timing.msPerFrame.filter((x): x is number => x !== null);
  return xs.length && xs.length === r.timing.msPerFrame.length ? finiteOrNull(xs.reduce((a, b) => a + b, 0) / xs.length) : null;
}

/** `options` less those solver `id` does not read (SolverInfo.reads); all of them for an id the registry lacks. */
export function optionsItReads(id: string, options: Partial<SolverOptions>): Partial<SolverOptions> {
  const info = findSolver(id);
  if (!info) return { ...options };
  return Object.fromEntries(Object.entries(options).filter(([k]) => info.reads.includes(k as keyof SolverOptions))) as Partial<SolverOptions>;
}

export function runRecord(meta: RunMeta, r: RunResult): RunRecord {
  const mean = r.timing.meanMs;
  const bytes = r.cost.iterationBytesPerFrame;
  return {
    scene: meta.scene,
    params: meta.params,
    solver: r.solver,
    // only what the solver reads (SolverInfo.reads): softstep-cpu's record showed β = 0.2, which it never reads
    options: optionsItReads(r.solver, meta.options),
    ...(meta.iterationMode && meta.iterationMode !== 'sweeps' ? { iterationMode: meta.iterationMode } : {}),
    adapter: r.adapter,
    bodies: r.bodyCount,
    constraints: r.constraintCount,
    frames: r.frames,
    timing: {
      clock: r.timing.clock,
      meanMs: finiteOrNull(mean),
      medianMs: finiteOrNull(r.timing.medianMs),
      p95Ms: finiteOrNull(r.timing.p95Ms),
      wallMeanMs: finiteOrNull(r.timing.wallMeanMs),
      wallMedianMs: finiteOrNull(r.timing.wallMedianMs),
      wallP95Ms: finiteOrNull(r.timing.wallP95Ms),
      stepsPerSecond: finiteOrNull(r.timing.stepsPerSecond),
      msPerFrame: r.msPerFrame.map(finiteOrNull),
      ...(r.stages ? { stages: r.stages } : {}),
      ...(r.stagesClock ? { stagesClock: r.stagesClock } : {}),
    },
    cost: {
      rowSolvesPerFrame: r.cost.rowSolvesPerFrame,
      rowSolvesLastFrame: r.cost.rowSolvesLastFrame,
      dispatchesPerFrame: r.cost.dispatchesPerFrame ?? null,
      iterationBytesPerFrame: bytes ?? null,
      // bytes per frame over the mean frame time: the run's total bytes over its total time
      bandwidthGBs: bytes !== undefined ? finiteOrNull(bytes / (mean * 1e6)) : null,
      ...(r.cost.cgIterationsPerFrame !== undefined ? { cgIterationsPerFrame: r.cost.cgIterationsPerFrame } : {}),
      ...(r.cost.solves !== undefined ? { solves: r.cost.solves, unconvergedSolves: r.cost.unconvergedSolves ?? 0 } : {}),
    },
    ...(meta.memory ? { memory: meta.memory } : {}),
    violation: {
      finalMax: r.final ? finiteOrNull(r.final.maxViolation) : null,
      finalRms: r.final ? finiteOrNull(r.final.rmsViolation) : null,
      worstMax: finiteOrNull(r.worstMaxViolation),
    },
    ...(r.contacts
      ? {
          contacts: {
            finalMaxPenetration: r.final?.maxPenetration !== undefined ? finiteOrNull(r.final.maxPenetration) : null,
            worstMaxPenetration: finiteOrNull(r.contacts.worstMaxPenetration),
            finalCount: r.final?.contacts ?? null,
            meanCount: finiteOrNull(r.contacts.meanContacts),
          },
        }
      : {}),
    ...(r.awake
      ? {
          awake: {
            finalCount: r.final?.awake ?? null,
            meanCount: finiteOrNull(r.awake.meanAwake),
            dynamicBodies: r.awake.dynamicBodies,
            sleeps: r.awake.sleeps,
            allAsleepT: r.awake.allAsleep ? r.awake.allAsleep.t : null,
          },
        }
      : {}),
    ...(r.solverContacts ? { solverContacts: r.solverContacts } : {}),
    energy: {
      start: finiteOrNull(r.initial.energy),
      end: r.final ? finiteOrNull(r.final.energy) : null,
      driftPercent: energyDriftPercent(r),
    },
    momentum: { start: r.initial.momentum, end: r.final ? r.final.momentum : null },
    diverged: r.diverged,
    jumps: r.jumps,
    finalStateHash: r.finalStateHash,
    ...(r.host ? { host: r.host } : {}),
    residuals: r.residuals,
    ...(r.constraintForces ? { constraintForces: r.constraintForces } : {}),
    series: r.series.map((p) => ({
      t: p.t,
      maxViolation: finiteOrNull(p.maxViolation),
      rmsViolation: finiteOrNull(p.rmsViolation),
      energy: finiteOrNull(p.energy),
      ...(p.maxPenetration !== undefined ? { maxPenetration: finiteOrNull(p.maxPenetration) } : {}),
      ...(p.contacts !== undefined ? { contacts: p.contacts } : {}),
      ...(p.awake !== undefined ? { awake: p.awake } : {}),
      ...(p.solverPoints !== undefined ? { solverPoints: p.solverPoints } : {}),
      ...(p.colours !== undefined ? { colours: p.colours, colourOverflow: p.colourOverflow } : {}),
      ...(p.trace ? { trace: p.trace } : {}),
    })),
  };
}
