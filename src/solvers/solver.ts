/**
 * The solver interface every solver implements, and the options they share.
 *
 * A solver is created from a WorldDesc, owns the live state, steps it a number
 * of frames at a time (a GPU solver records them into one submission), and
 * hands back a Snapshot: plain f64 arrays of the desc's bodies, from which the
 * metrics module recomputes everything it reports.
 */
import type { WorldDesc, ConstraintDesc, Shape } from '../model/world.js';
import type { Snapshot, StepTimings, AdapterDescription } from '../model/snapshot.js';
import { isParticleSystem, type SceneDesc } from '../model/scene-desc.js';
import type { ConstraintForce } from '../particles/system.js';
import type { GpuContext } from '../gpu/device.js';
import { forEachBody, forEachConstraint } from '../model/packed.js';

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
  /** soft contacts: the contact spring's frequency, Hz (si-soft-cpu, softstep-cpu; rows/softness.ts S3) */
  contactHertz: number;
  /** soft contacts: the contact spring's damping ratio ζ */
  contactDampingRatio: number;
  /** soft joints: the joint spring's frequency, Hz (si-soft-cpu, softstep-cpu) */
  jointHertz: number;
  /** soft joints: the joint spring's damping ratio ζ */
  jointDampingRatio: number;
  /**
   * 1 (default): islands whose bodies stay slow for 0.5 s fall asleep (collision/islands.ts; every CPU
   * contact solver by the same rule, Rapier by its own); 0: never. Worlds without collisions never sleep.
   */
  sleep: number;
  /** restitution acts on contacts approaching faster than this, m/s (rows/block-solver.ts RESTITUTION_THRESHOLD) */
  restitutionThreshold: number;
  /** AVBD (Giles et al. 2025): penalty ramp β of linear rows, N/m² (eq. 16; 3-D demo 1e4, here 1e6: see the default) */
  betaLinear: number;
  /** AVBD: penalty ramp β of angular rows, N·m/rad² (3-D demo 100 on its length-scaled rows, here 1e6 per radian) */
  betaAngular: number;
  /** AVBD: stabilisation α, the fraction of the frame's starting error left (eq. 18; demos 0.99) */
  avbdAlpha: number;
  /** AVBD: warm-start decay γ of λ and k (eq. 19; 3-D demo 0.999) */
  avbdGamma: number;
  /** AVBD: least and greatest penalty k (demos 1 and 1e10) */
  penaltyMin: number;
  penaltyMax: number;
  /**
   * AVBD: 1 (default): the penalty schedule in units of each row's own body stiffness s = m_eff/h²
   * (k̂ = k/s: penaltyMinRelative, penaltyMaxRelative, betaRelative; see avbd/cpu.ts); 0: the paper's
   * absolute k and β (penaltyMin, penaltyMax, betaLinear, betaAngular)
   */
  avbdRelative: number;
  /** AVBD relative schedule: the ramp β̂ per unit relative error (k̂ += β̂ |C|/ρ), least and greatest k̂ */
  betaRelative: number;
  penaltyMinRelative: number;
  penaltyMaxRelative: number;
  /** AVBD: 1: post-stabilisation (the 2-D demo: iterations at α = 1, velocities, then one more at α = 0); 0: α as given */
  postStabilize: number;
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
  contactHertz: 30,
  contactDampingRatio: 10,
  jointHertz: 60,
  jointDampingRatio: 2,
  sleep: 1,
  restitutionThreshold: 0.1,
  // avbd-cpu's default schedule is scale-free (avbdRelative 1: k in units of each row's m_eff/h², avbd/cpu.ts);
  // betaLinear … penaltyMax below are the paper's absolute form (avbdRelative 0).
  // AVBD's β are in N/m² and N·m/rad²: their right size follows the scene's masses and lengths (the
  // paper says so). The 3-D demo's 1e4 and 100 are in its units (bodies of about 1 kg and 1 m, angular
  // rows scaled by a squared length); in SI at this project's scales they leave joints sagging by
  // centimetres (a two-box weld 12 mm and 98 mrad, a hinge limit passed by 81 mrad, a hanging chain
  // 13 mm), at 1e6 within a millimetre; 3e8 pumps energy into chains (+9 % hanging-chain over 10 s).
  // See docs/solvers.md (avbd-cpu) for the measurements.
  betaLinear: 1e6,
  betaAngular: 1e6,
  avbdAlpha: 0.99,
  avbdGamma: 0.999,
  penaltyMin: 1,
  penaltyMax: 1e10,
  avbdRelative: 1,
  betaRelative: 100,
  penaltyMinRelative: 1,
  penaltyMaxRelative: 1e4,
  postStabilize: 0,
};

/** Ranges and meaning of each option, for the CLI, `solvers` listing and checks. */
export interface SolverOptionSpec {
  /** the command-line flag, without the dashes */
  flag: string;
  min: number;
  max?: number;
  integer?: boolean;
  help: string;
  /** why the range is what it is, said beside a refusal ("--beta must be ≤ 2, got 50 (…)") */
  why?: string;
}

/**
 * Ranges, flags and meaning of each option: the one place the CLI, `solvers` listing and checks read.
 * Which solvers read an option is not written here but declared by each solver (SolverInfo.reads).
 */
export const solverOptionSpecs: Record<keyof SolverOptions, SolverOptionSpec> = {
  dt: { flag: 'dt', min: 1e-9, help: 'frame time step h in seconds' },
  // 0 sweeps solve nothing: every joint and contact is ignored (a box falls through the ground)
  iterations: { flag: 'iterations', min: 1, integer: true, help: 'solver iterations per (sub)step', why: 'with 0 no constraint or contact is solved' },
  substeps: { flag: 'substeps', min: 1, integer: true, help: 'solver steps per frame (h = dt / substeps)' },
  // Baumgarte with β in units of 1/h: a converged velocity solve leaves C_{n+1} = C_n + h (−β C_n / h) =
  // (1 − β) C_n per step, which decays only for |1 − β| < 1, i.e. 0 < β < 2 (β = 2 keeps |C|, flipping its sign)
  beta: { flag: 'beta', min: 0, max: 2, help: 'Baumgarte β in units of 1/h (stable for 0 ≤ β ≤ 2, smooth for ≤ 1)', why: 'an error C becomes (1 − β) C each step: beyond 2 it grows' },
  warmStart: { flag: 'warm-start', min: 0, max: 1, help: "warm-start factor on the previous step's multipliers (0 = cold)" },
  compliance: { flag: 'compliance', min: 0, help: 'joint compliance α in m/N (1/stiffness) where the scene sets none; 0 = rigid' },
  linearDamping: { flag: 'linear-damping', min: 0, help: 'linear velocity damping in 1/s: v ← v·max(0, 1 − μh) each step' },
  angularDamping: { flag: 'angular-damping', min: 0, help: 'angular velocity damping in 1/s: ω ← ω·max(0, 1 − μh) each step' },
  feedbackStiffness: { flag: 'ks', min: 0, help: 'constraint feedback k_s in 1/s² (C̈ = −k_s C − k_d Ċ); 0 = off' },
  feedbackDamping: { flag: 'kd', min: 0, help: 'constraint feedback k_d in 1/s; 0 = off' },
  contactHertz: { flag: 'contact-hertz', min: 1e-6, help: 'soft contact spring frequency in Hz (Box2D v3: 30, at most a quarter of the substep rate)' },
  contactDampingRatio: { flag: 'contact-damping', min: 0, help: 'soft contact damping ratio ζ (Box2D v3: 10)' },
  jointHertz: { flag: 'joint-hertz', min: 1e-6, help: 'soft joint spring frequency in Hz (Box2D v3: 60)' },
  jointDampingRatio: { flag: 'joint-damping', min: 0, help: 'soft joint damping ratio ζ (Box2D v3.0: 2)' },
  restitutionThreshold: { flag: 'restitution-threshold', min: 0, help: 'contacts approaching slower than this (m/s) do not bounce (Box2D: 1; here gravity is taken out first, so 0.1)' },
  betaLinear: { flag: 'beta-linear', min: 0, help: 'AVBD, the paper\'s form (--avbd-relative 0): penalty ramp β of linear rows, N/m² (k += β|C| while λ is inside its bounds; 3-D demo 1e4 in its units)' },
  betaAngular: { flag: 'beta-angular', min: 0, help: 'AVBD, the paper\'s form (--avbd-relative 0): penalty ramp β of angular rows, N·m/rad² (3-D demo 100 on rows scaled by a squared length)' },
  avbdAlpha: { flag: 'avbd-alpha', min: 0, max: 1, help: 'AVBD stabilisation α: the solve aims at C = α C(start of frame), so 1 − α of the error is removed per frame (demos 0.99)', why: 'α > 1 would aim past the constraint, α < 0 beyond it' },
  avbdGamma: { flag: 'avbd-gamma', min: 0, max: 1, help: 'AVBD warm-start decay γ: λ ← α γ λ, k ← γ k each frame (3-D demo 0.999)', why: 'γ > 1 would let k and λ grow without a constraint asking' },
  penaltyMin: { flag: 'penalty-min', min: 0, help: 'AVBD, the paper\'s form (--avbd-relative 0): least penalty k, N/m (demos 1)' },
  penaltyMax: { flag: 'penalty-max', min: 0, help: 'AVBD, the paper\'s form (--avbd-relative 0): greatest penalty k, N/m (3-D demo 1e10)' },
  avbdRelative: { flag: 'avbd-relative', min: 0, max: 1, integer: true, help: "AVBD penalty schedule: 1 = scale-free, k in units of the row's body stiffness s = m_eff/h² (--beta-relative, --penalty-min-relative, --penalty-max-relative); 0 = the paper's absolute k and β (--beta-linear, --beta-angular, --penalty-min, --penalty-max)" },
  betaRelative: { flag: 'beta-relative', min: 0, help: 'AVBD scale-free ramp β̂ (dimensionless): k += β̂ s |C|/ρ while λ is inside its bounds, ρ the heavier body\'s radius of gyration (1 rad on angular rows)' },
  penaltyMinRelative: { flag: 'penalty-min-relative', min: 0, help: "AVBD scale-free least penalty, in units of the row's s = m_eff/h² (k̂ = 1: the first iteration halves the error)" },
  penaltyMaxRelative: { flag: 'penalty-max-relative', min: 0, help: "AVBD scale-free greatest penalty, in units of the row's s = m_eff/h²" },
  postStabilize: { flag: 'post-stabilize', min: 0, max: 1, integer: true, help: 'AVBD: 1 = post-stabilisation (2-D demo): iterate at α = 1, take the velocities, then one pass at α = 0 that removes the error without adding velocity; 0 = α as given (3-D demo)' },
  sleep: { flag: 'sleep', min: 0, max: 1, integer: true, help: '1: islands whose bodies stay slow (0.05 m/s, 0.05 rad/s) for 0.5 s fall asleep (no solver work) until touched or pulled; 0: never' },
};

/**
 * The options a solver runs with: shared defaults, then the solver's own, then (given a scene with
 * contacts) its own for contact scenes, then what was asked for.
 */
export function resolveOptions(info: Pick<SolverInfo, 'defaults' | 'contactDefaults'>, asked: Partial<SolverOptions> = {}, scene?: SceneDesc): SolverOptions {
  const given = scene !== undefined && info.contactDefaults !== undefined && sceneHasContacts(scene) ? info.contactDefaults : undefined;
  // the frame step the run will take (asked, else the solver's own default, else the shared one): a rule may depend on it
  const dt = asked.dt ?? info.defaults?.dt ?? defaultSolverOptions.dt;
  const contact = typeof given === 'function' ? given(scene as WorldDesc, dt) : given;
  return { ...defaultSolverOptions, ...info.defaults, ...contact, ...asked };
}

/** Whether a scene has contacts to solve: a rigid world with collisions on and two or more bodies. */
export function sceneHasContacts(scene: SceneDesc): boolean {
  return !isParticleSystem(scene) && scene.collisions !== false && scene.bodies.length >= 2;
}

// Snapshot, StepTimings and AdapterDescription are the model's (model/snapshot.ts): what a solver hands
// back, which metrics, runs and the viewer read without importing any solver.
export type { Snapshot, StepTimings, AdapterDescription } from '../model/snapshot.js';

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
 * A solver's own count of its contacts at its last snapshot (GPU contact solvers: read back with the
 * snapshot, never inside a timed frame). Not a metric: the metrics recompute penetration and touching
 * points from the snapshot; these say what the solver worked on (its pairs and manifolds, its colours).
 */
export interface SolverContactStats {
  /** the broad phase's pairs (within its capacity) */
  pairs: number;
  /** manifolds with at least one point */
  manifolds: number;
  /** contact points (at most 4 a manifold) */
  points: number;
  /** solvers that colour their manifolds each frame: manifolds per colour (colour 0 first, up to the last used) and in the overflow set */
  colours?: { used: number; sizes: number[]; overflow: number };
  /** solvers that colour their bodies each frame (avbd-gpu): bodies per colour (colour 0 first) and the colouring's rounds */
  bodyColours?: { used: number; sizes: number[]; rounds: number };
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
  /** Optional: why stepRecordingResiduals refuses this solver's world (e.g. a GPU solver with contacts), or null where it records them */
  residualsRefusal?(): string | null;
  /** Optional: the solver's own contact figures at its last snapshot (SolverContactStats), or null before one with contacts */
  contactStats?(): SolverContactStats | null;
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

/** A constraint type of the scene format (`constraints[i].type`; absent = 'point'). */
export type ConstraintType = NonNullable<ConstraintDesc['type']>;
/** A body shape of the scene format (`bodies[i].shape.type`). */
export type ShapeType = Shape['type'];

/**
 * What a rigid solver can run, declared: the constraint types and body shapes it implements.
 * A scene with anything else is refused with the reason derived from this list (supportReason).
 */
export interface SolverSupport {
  constraints: readonly ConstraintType[];
  shapes: readonly ShapeType[];
  /** whether it solves contacts (a world with `collisions` on and two or more bodies needs it) */
  contacts?: boolean;
  /** why it does not, where there is more to say than that (the refusal's words) */
  contactsRefused?: string;
}

/** The solvers that solve contacts, for the refusal's hint (kept in step with the registry by a test). */
export const CONTACT_SOLVER_HINT = 'softstep-cpu, pgs-cpu, si-soft-cpu, xpbd-cpu, jacobi-cpu, gs-cpu, avbd-cpu, rapier, jacobi-gpu, softstep-gpu, xpbd-gpu, gs-gpu or avbd-gpu';

/** How a constraint type reads in a sentence: 'point' → 'point joints'. */
const constraintNoun: Record<ConstraintType, string> = { point: 'point joints', distance: 'distance joints', hinge: 'hinge joints', fixed: 'fixed joints' };

/**
 * Why `support` cannot run `world` (its first constraint or body outside the declared lists), or null:
 * e.g. "gs-cpu does not support hinge joints (constraints[3])".
 */
export function supportReason(id: string, support: SolverSupport, world: WorldDesc): string | null {
  // the first one found in one pass (packed lists: no object per element)
  let ic = -1, ib = -1;
  forEachConstraint(world.constraints, (k, c) => {
    if (ic < 0 && !support.constraints.includes(c.type ?? 'point')) ic = k;
  });
  if (ic >= 0) {
    const type = world.constraints[ic].type ?? 'point';
    return `${id} does not support ${constraintNoun[type] ?? `${type} constraints`} (constraints[${ic}])`;
  }
  // contacts before shapes: a contact scene's planes are not the reason that matters
  if (!support.contacts && sceneHasContacts(world))
    return `${id} does not solve contacts${support.contactsRefused ? ` (${support.contactsRefused})` : ''} and this scene has collisions on (set "collisions": false, or --param collisions=0 where the scene has it; contact solvers: ${CONTACT_SOLVER_HINT})`;
  forEachBody(world.bodies, (k, b) => {
    if (ib < 0 && !support.shapes.includes(b.shape.type)) ib = k;
  });
  if (ib >= 0) return `${id} does not support ${world.bodies[ib].shape.type} shapes (bodies[${ib}])`;
  return null;
}

/** The options `info` reads, in solverOptionSpecs' order (what a run of it shows). */
export function optionsRead(info: Pick<SolverInfo, 'reads'>): (keyof SolverOptions)[] {
  return (Object.keys(solverOptionSpecs) as (keyof SolverOptions)[]).filter((k) => info.reads.includes(k));
}

/** What a solver is, as the registry lists it; `create` takes any scene, `unsupported` says which it cannot run. */
export interface SolverInfo {
  id: string;
  description: string;
  /** 'gpu' solvers need a WebGPU adapter */
  device: 'cpu' | 'gpu';
  /**
   * The options this solver reads; the others do nothing for it, and its runs do not show them
   * (the CLI help, `solverlab solvers`, the viewer's controls and the reports read this list).
   */
  reads: readonly (keyof SolverOptions)[];
  /** rigid solvers: the constraint types and shapes it runs (see SolverSupport); absent for particle solvers */
  supports?: SolverSupport;
  /** options where this solver's defaults differ from defaultSolverOptions (e.g. xpbd's substeps) */
  defaults?: Partial<SolverOptions>;
  /**
   * options where its defaults differ again on a scene with contacts (resolveOptions given the scene):
   * gs-cpu keeps gs-gpu's one step on joints, and takes the substeps a pile needs on contacts; a
   * function of the world (and of the frame step dt the run takes) where they depend on it (softstep-cpu:
   * more substeps for small bodies; the sequential solvers: a column's substeps, pgs/substeps.ts)
   */
  contactDefaults?: Partial<SolverOptions> | ((world: WorldDesc, dt: number) => Partial<SolverOptions>);
  /** what `iterations` means for it (default 'sweeps'; see IterationMode) */
  iterationMode?: IterationMode;
  /**
   * why this solver cannot run a scene, or null if it can: in the registry, the declared `supports`
   * first (a particle system, a constraint type or shape not in the lists), then any reason of the
   * solver's own (e.g. a loop in a reduced-coordinate solver, or an option asked for that it cannot
   * honour: `options` are the options given, where known)
   */
  unsupported?(desc: SceneDesc, options?: Partial<SolverOptions>): string | null;
  /**
   * what of a scene it runs this solver does not read (as `reads` says of options), in one line, or
   * null: e.g. Rapier's one friction coefficient per body, where a body sets μ_s ≠ μ_d
   */
  ignores?(desc: SceneDesc): string | null;
  create(desc: SceneDesc, options: SolverOptions, gpu?: GpuContext): Promise<Solver>;
}

/**
 * A rigid-body solver's entry as written in the registry: it declares `supports`; its `create` and
 * `unsupported` (reasons of its own, beyond the declared lists) see rigid worlds only.
 */
export interface RigidSolverInfo extends Omit<SolverInfo, 'unsupported' | 'create' | 'supports' | 'ignores'> {
  supports: SolverSupport;
  unsupported?(world: WorldDesc, options?: Partial<SolverOptions>): string | null;
  ignores?(world: WorldDesc): string | null;
  create(world: WorldDesc, options: SolverOptions, gpu?: GpuContext): Promise<Solver>;
}
