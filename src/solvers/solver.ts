/**
 * The solver interface every solver implements, and the options they share.
 *
 * A solver is created from a WorldDesc, owns the live state, steps it a number
 * of frames at a time (a GPU solver records them into one submission), and
 * hands back a Snapshot: plain f64 arrays of the desc's bodies, from which the
 * metrics module recomputes everything it reports.
 */
import type { WorldDesc } from '../model/world.js';
import type { SceneDesc } from '../model/scene-desc.js';
import type { ConstraintForce } from '../particles/system.js';
import type { GpuContext } from '../gpu/device.js';

export interface SolverOptions {
  /** frame time step h_frame in seconds */
  dt: number;
  /** solver iterations per (sub)step */
  iterations: number;
  /** the frame is split into this many solver steps of h = dt / substeps */
  substeps: number;
  /** Baumgarte β in units of 1/h (h = the substep): β_abs = beta / h */
  beta: number;
  /** warm-start factor: λ⁰ = factor · λ(previous step); 0 = cold start */
  warmStart: number;
  /** compliance α (m/N = 1/stiffness) of every joint that does not set its own; 0 = rigid */
  compliance: number;
  /** linear velocity damping, 1/s: v ← v · max(0, 1 − μ h) per step */
  linearDamping: number;
  /** angular velocity damping, 1/s: ω ← ω · max(0, 1 − μ h) per step */
  angularDamping: number;
  /** constraint feedback stiffness k_s, 1/s²: C̈ = −k_s C − k_d Ċ (Witkin solvers; 0 = off) */
  feedbackStiffness: number;
  /** constraint feedback damping k_d, 1/s (Witkin solvers; 0 = off) */
  feedbackDamping: number;
}

export const defaultSolverOptions: SolverOptions = {
  dt: 1 / 60,
  iterations: 8,
  substeps: 1,
  beta: 0.2,
  warmStart: 1,
  compliance: 0,
  linearDamping: 0,
  angularDamping: 0,
  feedbackStiffness: 0,
  feedbackDamping: 0,
};

/** Ranges and meaning of each option, for the CLI, `solvers` listing and checks. */
export interface SolverOptionSpec {
  /** the command-line flag, without the dashes */
  flag: string;
  min: number;
  max?: number;
  integer?: boolean;
  help: string;
}

/** Ranges, flags and meaning of each option: the one place the CLI, `solvers` listing and checks read. */
export const solverOptionSpecs: Record<keyof SolverOptions, SolverOptionSpec> = {
  dt: { flag: 'dt', min: 1e-9, help: 'frame time step h in seconds' },
  iterations: { flag: 'iterations', min: 0, integer: true, help: 'solver iterations per (sub)step' },
  substeps: { flag: 'substeps', min: 1, integer: true, help: 'solver steps per frame (h = dt / substeps)' },
  beta: { flag: 'beta', min: 0, help: 'Baumgarte β in units of 1/h (stable for 0 ≤ β ≤ 2, smooth for ≤ 1); velocity-level solvers' },
  warmStart: { flag: 'warm-start', min: 0, max: 1, help: "warm-start factor on the previous step's multipliers (0 = cold); velocity-level solvers" },
  compliance: { flag: 'compliance', min: 0, help: 'joint compliance α in m/N (1/stiffness) where the scene sets none; 0 = rigid (not rapier)' },
  linearDamping: { flag: 'linear-damping', min: 0, help: 'linear velocity damping in 1/s: v ← v·max(0, 1 − μh) each step (not rapier)' },
  angularDamping: { flag: 'angular-damping', min: 0, help: 'angular velocity damping in 1/s (not rapier)' },
  feedbackStiffness: { flag: 'ks', min: 0, help: 'constraint feedback k_s in 1/s² (C̈ = −k_s C − k_d Ċ); particle (witkin-*) solvers; 0 = off' },
  feedbackDamping: { flag: 'kd', min: 0, help: 'constraint feedback k_d in 1/s; particle (witkin-*) solvers; 0 = off' },
};

/** The options a solver runs with: shared defaults, then the solver's own, then what was asked for. */
export function resolveOptions(info: Pick<SolverInfo, 'defaults'>, asked: Partial<SolverOptions> = {}): SolverOptions {
  return { ...defaultSolverOptions, ...info.defaults, ...asked };
}

export interface Snapshot {
  /** frames stepped since creation */
  frame: number;
  /** simulated time, s */
  time: number;
  /** the desc's bodies only (anchor bodies are left out) */
  bodyCount: number;
  position: Float64Array; // 3·bodyCount
  orientation: Float64Array; // 4·bodyCount [x y z w]
  linearVelocity: Float64Array; // 3·bodyCount
  angularVelocity: Float64Array; // 3·bodyCount
}

export interface StepTimings {
  /** which clock the per-step times come from */
  clock: 'gpu-timestamp' | 'wall';
  /** per-frame times in milliseconds, one entry per stepped frame (or per batch average) */
  msPerFrame: number[];
  /** wall-clock ms per frame, without readbacks (batch wall time / frames in the batch) */
  wallMsPerFrame: number[];
}

export interface AdapterDescription {
  /** e.g. "nvidia / hopper / NVIDIA H100" or "cpu" */
  name: string;
  /** true for a software adapter (SwiftShader) */
  software: boolean;
  /** GPU timestamp queries available */
  timestamps: boolean;
}

/**
 * What a step costs, as counts (the measured time turns them into rates).
 * A point constraint is 3 rows; a row solve is one row updated once.
 */
export interface SolverCost {
  /** constraint-row solves per frame: rows × iterations × substeps (for every solver) */
  rowSolvesPerFrame: number;
  /** GPU solvers: compute dispatches per frame */
  dispatchesPerFrame?: number;
  /** GPU solvers: estimated bytes read + written per frame by the iteration kernels */
  iterationBytesPerFrame?: number;
  /** solvers that iterate to a tolerance: conjugate-gradient iterations per frame (measured) */
  cgIterationsPerFrame?: number;
  /** solvers that solve to a tolerance: the solves counted (since the last resetTimings; a GPU solver's as of its last snapshot) */
  solves?: number;
  /** of those, the solves that ended without reaching their tolerance (at the iteration cap, or stalled) */
  unconvergedSolves?: number;
}

/**
 * Convergence of one frame's solve: the residual after each iteration k = 0..N
 * (k = 0 is the starting, possibly warm-started, guess), as the 2-norm over the
 * rows of each channel. For the Jacobi solvers r = b − Aλᵏ (reference text, eq. 30),
 * r_ℓ = h⁻¹(J_ℓ Vᵏ + β C_ℓ) (eq. 33/37), in m/s²; h·r is the velocity error left.
 */
export interface ResidualCurve {
  /** the frame whose solve was recorded (1 = the first step) */
  frame: number;
  /** which substep of that frame (0 = the first) */
  substep: number;
  /** what the numbers are, e.g. '‖b − Aλ‖₂ (m/s²)' */
  quantity: string;
  /** channel name → residual after k iterations, k = 0..iterations */
  channels: Record<string, number[]>;
}

export interface Solver {
  readonly id: string;
  readonly options: SolverOptions;
  /** bodies of the desc (without the internal world anchors) */
  readonly bodyCount: number;
  readonly constraintCount: number;
  readonly adapter: AdapterDescription;
  /** advance `frames` frames of options.dt */
  step(frames: number): Promise<void>;
  snapshot(): Promise<Snapshot>;
  /** the timings collected since creation (or since the last reset) */
  timings(): StepTimings;
  resetTimings(): void;
  /** counts of work per frame at the solver's options */
  cost(): SolverCost;
  /**
   * Optional diagnostic: advance exactly one frame (like step(1)) while recording
   * the residual after every iteration of its first substep. Slower than step(),
   * and not counted in timings().
   */
  stepRecordingResiduals?(): Promise<ResidualCurve>;
  /** Optional: each constraint's multiplier and force at the current state (solvers with a global multiplier solve). */
  constraintForces?(): ConstraintForce[];
  destroy(): void;
}

/**
 * What `iterations` means for a solver: 'sweeps' — sweeps over the constraints per step (the iterative
 * solvers); 'tolerance' — it solves to a tolerance by CG and `iterations` does not apply (witkin-*);
 * 'cap' — it solves to a tolerance, `iterations` being the most it may take per step (global-gpu);
 * 'direct' — it solves by a sparse direct factorisation (LDLᵀ) to a tolerance and `iterations` does not
 * apply (global-cpu).
 */
export type IterationMode = 'sweeps' | 'tolerance' | 'cap' | 'direct';

/** The iterations per step as tables show them: 8, CG (to a tolerance), CG≤64 (to a tolerance, capped), LDLᵀ (direct). */
export function iterationsText(mode: IterationMode | undefined, iterations: number): string {
  return mode === 'tolerance' ? 'CG' : mode === 'cap' ? `CG≤${iterations}` : mode === 'direct' ? 'LDLᵀ' : String(iterations);
}

/** What a solver is, as the registry lists it; `create` takes any scene, `unsupported` says which it cannot run. */
export interface SolverInfo {
  id: string;
  description: string;
  /** 'gpu' solvers need a WebGPU adapter */
  device: 'cpu' | 'gpu';
  /** options where this solver's defaults differ from defaultSolverOptions (e.g. xpbd's substeps) */
  defaults?: Partial<SolverOptions>;
  /** what `iterations` means for it (default 'sweeps'; see IterationMode) */
  iterationMode?: IterationMode;
  /** why this solver cannot run a scene (e.g. a particle system, or a loop in a reduced-coordinate solver), or null if it can */
  unsupported?(desc: SceneDesc): string | null;
  create(desc: SceneDesc, options: SolverOptions, gpu?: GpuContext): Promise<Solver>;
}

/** A rigid-body solver's entry as written in the registry: its `create` and `unsupported` see rigid worlds only. */
export interface RigidSolverInfo extends Omit<SolverInfo, 'unsupported' | 'create'> {
  unsupported?(world: WorldDesc): string | null;
  create(world: WorldDesc, options: SolverOptions, gpu?: GpuContext): Promise<Solver>;
}
