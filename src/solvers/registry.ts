import type { WorldDesc } from '../model/world.js';
import type { SceneDesc } from '../model/scene-desc.js';
/** The solvers, by id. A new solver is one folder plus one line here. */
import { forEachBody } from '../model/packed.js';
import { DEFAULT_FRICTION } from '../collision/pipeline.js';
import { sceneHasContacts, supportReason, type RigidSolverInfo, type SolverInfo, type SolverOptions } from './solver.js';
import { isParticleSystem } from '../model/particle-system.js';
import { particleSolvers } from './witkin/registry.js';
import { JacobiCpuSolver } from './jacobi/cpu.js';
import { JacobiGpuSolver } from './jacobi/gpu.js';
import { GaussSeidelContactCpuSolver } from './gs/contacts.js';
import { GaussSeidelCpuSolver } from './gs/cpu.js';
import { GaussSeidelGpuSolver } from './gs/gpu.js';
import { GlobalCpuSolver } from './global/cpu.js';
import { GlobalGpuSolver, defaultGpuCgIterations } from './global/gpu.js';
import { XpbdCpuSolver } from './xpbd/cpu.js';
import { PgsCpuSolver } from './pgs/cpu.js';
import { SiSoftCpuSolver } from './si-soft/cpu.js';
import { SoftStepCpuSolver, softStepContactDefaults } from './softstep/cpu.js';
import { jacobiContactSubsteps } from './jacobi/substeps.js';
import { gaussSeidelContactDefaults, softColumnDefaults } from './pgs/substeps.js';
import { XpbdGpuSolver } from './xpbd/gpu.js';
import { SoftStepGpuSolver } from './softstep/gpu.js';
import { AvbdCpuSolver, avbdContactSubsteps } from './avbd/cpu.js';
import { AvbdGpuSolver, avbdGpuDegreeReason } from './avbd/gpu.js';
import { RapierSolver, multibodyLoopReason, rapierJointReason, rapierSoftJointReason } from './rapier/rapier.js';

/**
 * What each solver declares it reads (SolverInfo.reads). A velocity-level solver reads Baumgarte β and
 * the warm start; XPBD works on positions and reads neither; the converged solves read `iterations`
 * only as a cap (global-gpu) or not at all (global-cpu); Rapier is given dt, substeps and iterations.
 */
const velocityLevel: (keyof SolverOptions)[] = ['dt', 'iterations', 'substeps', 'beta', 'warmStart', 'compliance', 'linearDamping', 'angularDamping'];
const positionLevel: (keyof SolverOptions)[] = ['dt', 'iterations', 'substeps', 'compliance', 'linearDamping', 'angularDamping'];
const rapierReads: (keyof SolverOptions)[] = ['dt', 'iterations', 'substeps', 'sleep'];
/** the soft solvers read the springs instead of β */
const softReads: (keyof SolverOptions)[] = ['dt', 'iterations', 'substeps', 'warmStart', 'compliance', 'linearDamping', 'angularDamping', 'contactHertz', 'contactDampingRatio', 'jointHertz', 'jointDampingRatio'];
/** the CPU contact solvers put resting islands to sleep (collision/islands.ts; Rapier by its own rule); the GPU and global solvers do not */
const velocityLevelSleeping: (keyof SolverOptions)[] = [...velocityLevel, 'sleep', 'restitutionThreshold'];
const softReadsSleeping: (keyof SolverOptions)[] = [...softReads, 'sleep', 'restitutionThreshold'];
/** the GPU contact solvers: restitution's threshold, no sleeping */
const velocityLevelBouncing: (keyof SolverOptions)[] = [...velocityLevel, 'restitutionThreshold'];
const softReadsBouncing: (keyof SolverOptions)[] = [...softReads, 'restitutionThreshold'];
const everyJoint = ['point', 'distance', 'hinge', 'fixed'] as const;
/** AVBD reads its own parameters (Giles et al. 2025 and its demos) instead of β and the warm-start factor */
const avbdReads: (keyof SolverOptions)[] = ['dt', 'iterations', 'substeps', 'compliance', 'betaLinear', 'betaAngular', 'avbdAlpha', 'avbdGamma', 'penaltyMin', 'penaltyMax', 'avbdRelative', 'betaRelative', 'penaltyMinRelative', 'penaltyMaxRelative', 'postStabilize', 'restitutionThreshold'];
/**
 * Why the global solves refuse contacts (issue 16's choice: a converged reference, or a refusal with
 * the reason). They solve the equality system A λ = b exactly. Contacts are inequalities — λ_n ≥ 0
 * with complementarity, λ_t in the friction disc tied to λ_n — a complementarity problem, not a
 * linear one, and its λ is not unique where the points are redundant (a box resting on a face has
 * four points and three equations: any split of its weight between the corners that balances it is
 * a solution), so a "reference λ" to measure the iterative solvers' λ error against does not exist.
 * A converged solution of the bounded problem is what `pgs-cpu` approaches with many iterations
 * (its projected residual, `run --residuals`, shows how far it is).
 */
const GLOBAL_CONTACTS_REFUSED = 'its LDLᵀ / CG solves the equalities A λ = b; contacts are inequalities, a complementarity problem whose λ is not unique at redundant points: use pgs-cpu with many iterations as the converged contact solve';
const everyShape = ['sphere', 'box', 'capsule', 'plane'] as const;

/**
 * Why a solver of the equality system (the global solves) cannot run a world: a rope or strut
 * (distance with minLength/maxLength) or a hinge limit is a one-sided row, which needs a
 * complementarity solve, not A λ = b. Null when the world has none.
 */
function oneSidedRowsReason(id: string, world: WorldDesc): string | null {
  const i = world.constraints.findIndex(
    (c) => (c.type === 'distance' && (c.minLength !== undefined || c.maxLength !== undefined)) || (c.type === 'hinge' && (c.lowerAngle !== undefined || c.upperAngle !== undefined)),
  );
  if (i < 0) return null;
  return `${id} solves the equality system A λ = b; constraints[${i}] has a one-sided row (a rope, strut or hinge limit), which needs a bounded (complementarity) solve — use jacobi-cpu, gs-cpu or xpbd-cpu`;
}

/**
 * Rapier has one friction coefficient per collider, and is given μ_d (rapier/rapier.ts: `dynamicFriction`,
 * else `friction`): a body whose staticFriction differs from its dynamic one is held there only by μ_d.
 */
function rapierFrictionIgnored(id: string, world: WorldDesc): string | null {
  let first = -1, count = 0;
  forEachBody(world.bodies, (i, b) => {
    const staticMu = b.staticFriction ?? b.friction ?? DEFAULT_FRICTION, dynamicMu = b.dynamicFriction ?? b.friction ?? DEFAULT_FRICTION;
    if (staticMu !== dynamicMu) {
      count++;
      if (first < 0) first = i;
    }
  });
  if (first < 0) return null;
  const b = world.bodies[first];
  const mu = (x: number | undefined) => x ?? b.friction ?? DEFAULT_FRICTION;
  return `${id} takes one friction coefficient per body, μ_d: staticFriction (μ_s) is ignored where it differs (bodies[${first}]: μ_s = ${mu(b.staticFriction)}, μ_d = ${mu(b.dynamicFriction)}${count > 1 ? `, and ${count - 1} more` : ''}), so a body held at rest only by μ_s slides`;
}

/**
 * The rigid-body solvers (a new one is one entry here). `supports` lists the constraint types and
 * shapes each one implements; a scene with others is refused with the reason (supportReason).
 */
const rigidSolvers: RigidSolverInfo[] = [
  {
    id: 'jacobi-gpu',
    description: 'Jacobi block solver in WGSL compute kernels on constraint rows (the reference text, every joint type; f32); contacts on the GPU as jacobi-cpu\'s (collision, warm start by a pair table, restitution by collision propagation colour by colour, the mass-split Jacobi sweep, a frame with no readback), at jacobi-cpu\'s substeps; no sleeping on the GPU yet',
    device: 'gpu',
    reads: velocityLevelBouncing,
    supports: { constraints: ['point', 'distance', 'hinge', 'fixed'], shapes: everyShape, contacts: true },
    contactDefaults: (world) => ({ substeps: jacobiContactSubsteps(world) }),
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('jacobi-gpu needs a WebGPU device');
      return JacobiGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'jacobi-cpu',
    description: 'Jacobi block solver on constraint rows, f64 CPU reference of jacobi-gpu (same stages); contacts by the contact solver\'s Jacobi variant (mass splitting, Baumgarte β with slop), on contact scenes max(4, ⌈max(k, 1.5 N̄^1.5) √(2 cm / L)⌉) substeps by default: L the smallest body\'s least half size, N̄ the mean depth of the support graph at the start (contacts from a body to the ground), k = 8 on a pile, else 4 (mass-split Jacobi passes a load down one contact per sweep: at the former ⌈8 √(2 cm / L)⌉ = 4 the 10-course brick-wall wandered 476 mm, at 9 it holds)',
    device: 'cpu',
    reads: velocityLevelSleeping,
    supports: { constraints: everyJoint, shapes: everyShape, contacts: true },
    // Jacobi spreads a load more slowly than Gauss-Seidel: substeps by the pile's depth as well as the
    // bodies' size (jacobi/substeps.ts, with the measurements). On a pile at least the former ⌈8 √(2 cm / L)⌉ (a base-10 pyramid of 4 cm
    // boxes, sleeping off, fell at 4 and held at 6; of 2 cm boxes fell at 6, held at 12)
    contactDefaults: (world) => ({ substeps: jacobiContactSubsteps(world) }),
    create: async (world, options) => new JacobiCpuSolver(world, options),
  },
  {
    id: 'gs-gpu',
    description: 'coloured block Gauss-Seidel: the Jacobi equations, one dispatch per constraint colour (the Jacobi text\'s next step; f32); contacts as gs-cpu\'s (its rule, Baumgarte β with slop, no relax), collision and restitution included, swept colour by colour over manifolds coloured every frame on the GPU, a frame with no readback, gs-cpu\'s substeps by default there; no sleeping on the GPU yet',
    device: 'gpu',
    reads: velocityLevelBouncing,
    supports: { constraints: ['point', 'distance', 'hinge', 'fixed'], shapes: everyShape, contacts: true },
    contactDefaults: gaussSeidelContactDefaults,
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('gs-gpu needs a WebGPU device');
      return GaussSeidelGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'gs-cpu',
    description: 'coloured block Gauss-Seidel, f64 CPU reference of gs-gpu (same colours, same order); on a scene with contacts, the joints so, then the contacts one after the other on the contact solver, by default there pgs-cpu\'s substeps (at one step a 10-box stack awake creeps 88 mm over 9 s; at 4 × 8, 2.4 mm)',
    device: 'cpu',
    reads: velocityLevelSleeping,
    supports: { constraints: everyJoint, shapes: everyShape, contacts: true },
    contactDefaults: gaussSeidelContactDefaults,
    create: async (world, options) => (sceneHasContacts(world) ? new GaussSeidelContactCpuSolver(world, options) : new GaussSeidelCpuSolver(world, options)),
  },
  {
    id: 'global-cpu',
    description: 'converged reference (f64): the Jacobi equations (same A, b, β, soft rows), but each step solves the whole system A λ = b by a sparse LDLᵀ (reverse Cuthill–McKee envelope, semi-definite pivots dropped) with iterative refinement, to 1e-10 relative residual (CG then MINRES least squares where redundant joints leave it no solution)',
    device: 'cpu',
    reads: velocityLevel.filter((k) => k !== 'iterations'),
    supports: { constraints: ['point', 'distance', 'hinge', 'fixed'], shapes: ['sphere', 'box', 'capsule'], contactsRefused: GLOBAL_CONTACTS_REFUSED },
    unsupported: (world) => oneSidedRowsReason('global-cpu', world),
    iterationMode: 'direct',
    create: async (world, options) => new GlobalCpuSolver(world, options),
  },
  {
    id: 'global-gpu',
    description: 'global-cpu\'s A λ = b by preconditioned conjugate residuals in WGSL kernels (f32; least squares where redundant joints leave no solution): --iterations iterations per step (default 64), an on-GPU flag stops at ‖r‖ ≤ 1e-6 ‖b‖, a least-squares λ, a null direction or stagnation; α, β and the reductions on the GPU, no readback',
    device: 'gpu',
    reads: velocityLevel,
    supports: { constraints: ['point', 'distance', 'hinge', 'fixed'], shapes: ['sphere', 'box', 'capsule'], contactsRefused: GLOBAL_CONTACTS_REFUSED },
    unsupported: (world) => oneSidedRowsReason('global-gpu', world),
    defaults: { iterations: defaultGpuCgIterations },
    iterationMode: 'cap',
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('global-gpu needs a WebGPU device');
      return GlobalGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'xpbd-gpu',
    description: 'XPBD (Müller et al. 2020, via the Starframe text): substeps of position projection on constraint rows (a point joint C = p₁ − p₂ as one 3×3 block, every other joint block by block), one dispatch per constraint colour and kernel (WGSL, f32); contacts on the GPU as xpbd-cpu\'s (GPU collision and pair table, the manifolds coloured every frame, projected colour by colour after the joints, then the velocity pass: restitution as xpbd-cpu\'s collision propagation (collisions swept colour by colour on the predicted velocities, one workgroup, their impulses replacing the projection\'s: a Newton\'s cradle passes its strike on), Müller\'s rule v_n → max(−e ṽ_n, 0) at the other active points, dynamic friction; a frame with no readback); no sleeping on the GPU yet',
    device: 'gpu',
    reads: [...positionLevel, 'restitutionThreshold'],
    supports: { constraints: ['point', 'distance', 'hinge', 'fixed'], shapes: everyShape, contacts: true },
    defaults: { iterations: 1, substeps: 10 },
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('xpbd-gpu needs a WebGPU device');
      return XpbdGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'xpbd-cpu',
    description: 'XPBD, f64 CPU reference of xpbd-gpu (same stages, same colour order); contacts too (Müller 2020: found once per frame, projected each substep after the joints with static friction on the position level, then dynamic friction and restitution in a velocity pass)',
    device: 'cpu',
    reads: [...positionLevel, 'sleep', 'restitutionThreshold'],
    supports: { constraints: everyJoint, shapes: everyShape, contacts: true },
    defaults: { iterations: 1, substeps: 10 },
    create: async (world, options) => new XpbdCpuSolver(world, options),
  },
  {
    id: 'pgs-cpu',
    description: 'projected Gauss-Seidel of the Starframe text: every row in turn, clamped to its bounds, Baumgarte β with 5 mm slop (the joints\' by split impulses: a position pass that the warm start never carries), restitution, warm start (f64); 4 substeps of 8 sweeps by default (Rapier’s and Box2D’s 4 substeps): a 10-box stack awake creeps 62 mm over 9 s at 1 step of 10 sweeps, 12 mm at 2 × 10, 6.8 mm at 2 × 16, 2.4 mm at 4 × 8 (test/piles.test.ts); on an unbraced column (C bodies single file, from the support graph at the start) max(4, ⌈C²/8 · √(2 cm / L)⌉) substeps: 6 for fifteen 1 m boxes (17.9 mm at 4), 12 for ten 5 cm boxes (8.6 mm at 4), 4 on a pyramid or a wall (pgs/substeps.ts)',
    device: 'cpu',
    reads: velocityLevelSleeping,
    supports: { constraints: everyJoint, shapes: everyShape, contacts: true },
    defaults: { iterations: 8, substeps: 4 },
    contactDefaults: gaussSeidelContactDefaults,
    create: async (world, options) => new PgsCpuSolver(world, options),
  },
  {
    id: 'si-soft-cpu',
    description: 'sequential impulses with soft constraints (the Starframe text, Catto 2011): β and γ from a spring frequency and damping ratio per row (f64); 4 substeps of 8 sweeps by default: at one step the contact spring is capped at 15 Hz and a 10-box stack sinks 16 cm and topples; from two it has its 30 Hz; awake over 9 s the stack creeps 12 mm at 2 × 10, 2.4 mm at 4 × 8, and a stack of three 1 cm cubes stands (test/piles.test.ts); on an unbraced column pgs-cpu\'s substeps, and a contact spring of at least √(4 · 8 g C³ / (7.837 · 2L)) / 2π (a quarter of the column\'s self-weight buckling load: 59 Hz for fifteen 1 m boxes, 142 Hz for ten 5 cm boxes)',
    device: 'cpu',
    reads: softReadsSleeping,
    supports: { constraints: everyJoint, shapes: everyShape, contacts: true },
    defaults: { iterations: 8, substeps: 4 },
    contactDefaults: softColumnDefaults,
    create: async (world, options) => new SiSoftCpuSolver(world, options),
  },
  {
    id: 'softstep-cpu',
    description: 'Box2D v3 soft step: substeps of integrate, restitution by collision propagation, warm start, soft solve, integrate positions, relax (f64); on contact scenes 4 substeps, more for bodies under 2 cm half size (⌈4 √(2 cm / L)⌉: 1 cm cubes 8), and on an unbraced column si-soft-cpu\'s column substeps and spring (fifteen 1 m boxes: 6 and 59 Hz, leaning 6.7 mm where 4 and 30 Hz leaned 124 mm; ten 5 cm boxes: 12 and 142 Hz, where they fell)',
    device: 'cpu',
    reads: softReadsSleeping,
    supports: { constraints: everyJoint, shapes: everyShape, contacts: true },
    defaults: { iterations: 1, substeps: 4 },
    contactDefaults: softStepContactDefaults,
    create: async (world, options) => new SoftStepCpuSolver(world, options),
  },
  {
    id: 'softstep-gpu',
    description: 'the soft step on the GPU (f32): softstep-cpu\'s contact stages in WGSL, collision included, the sequential sweeps made parallel by colouring the manifolds every frame on the GPU (speculative greedy with hashed priorities, up to 64 colours: the first 24 one dispatch each, the late ones in one workgroup, an overflow set solved by one thread), restitution by collision propagation in the same colour order; a frame with no readback; contacts only (no joints yet), no sleeping',
    device: 'gpu',
    reads: softReadsBouncing,
    supports: { constraints: [], shapes: everyShape, contacts: true },
    defaults: { iterations: 1, substeps: 4 },
    contactDefaults: softStepContactDefaults,
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('softstep-gpu needs a WebGPU device');
      return SoftStepGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'avbd-cpu',
    description: 'Augmented Vertex Block Descent (Giles, Diaz & Yuksel 2025), f64: per body, colour by colour, one Newton step on its 6×6 system (inertia plus every row\'s penalty k JᵀJ and force Jᵀ clamp(kC + λ)), then the dual update λ ← clamp(kC + λ), k += β|C|; one step per frame at the demos\' defaults (10 iterations, α 0.99, γ 0.999) with a scale-free penalty (k in units of each row\'s m_eff/h², its heavier side\'s mass carried to its island\'s heaviest: k̂ ∈ [1, 1e4], k̂ += 100 |C|/ρ; --avbd-relative 0 for the paper\'s absolute β in N/m²); on contact scenes substeps so that one step\'s fall g h² is at most 3 % of the smallest body\'s edge; contacts linearised about the frame\'s start on the persistent manifolds, friction in the disc μ|F_n|, static anchors kept while a point sticks; restitution (the paper has none) by the velocity solvers\' collision propagation on the velocities a step starts from, before its inertial target (Newton\'s law v_n → −e v_n, passed down a touching row: a Newton\'s cradle), only where some body has e > 0; no sleeping',
    device: 'cpu',
    reads: avbdReads,
    supports: { constraints: everyJoint, shapes: everyShape, contacts: true },
    defaults: { iterations: 10, substeps: 1 },
    contactDefaults: (world) => ({ substeps: avbdContactSubsteps(world) }),
    create: async (world, options) => new AvbdCpuSolver(world, options),
  },
  {
    id: 'avbd-gpu',
    description: 'avbd-cpu in WGSL compute kernels (f32), the same stages and options: per step the duals\' warm start and the inertial target, then per iteration one dispatch per body colour of the per-body Newton step (a gather over the body\'s joints and contact points, no atomics: H = M/h² + Σ k JᵀJ + the geometric-stiffness diagonal, f, a 6×6 LDLᵀ, the exact exponential map), then the dual update per joint and per contact point; every joint type, a frame with no readback; the bodies coloured on the GPU (speculative greedy rounds over the uncoloured bodies, conflicts settled by hashed Jones–Plassmann priorities: zero clashes, no serial pass; on a joint scene once, on a contact scene every step); contacts as avbd-cpu\'s (linearised about the frame\'s start, friction in the disc μ|F_n|, static anchors kept while a point sticks) on the GPU contact pipeline (collision, pair-table matching, the body → manifold CSR), the islands of the scale-free schedule found on the GPU each step; restitution as avbd-cpu\'s, by the GPU contact pipeline\'s cs_restitution (collision propagation colour by colour in one workgroup, the manifolds coloured on the GPU) where some body has e > 0; no sleeping, no joints added between steps',
    device: 'gpu',
    reads: avbdReads,
    supports: { constraints: everyJoint, shapes: everyShape, contacts: true },
    unsupported: (world) => avbdGpuDegreeReason(world),
    defaults: { iterations: 10, substeps: 1 },
    contactDefaults: (world) => ({ substeps: avbdContactSubsteps(world) }),
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('avbd-gpu needs a WebGPU device');
      return AvbdGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'rapier',
    description: 'Rapier 0.21 (@dimforge/rapier3d-compat, wasm, f32): impulse joints (spherical, revolute, fixed, rope); iterations = its TGS substeps',
    device: 'cpu',
    reads: rapierReads,
    supports: { constraints: ['point', 'distance', 'hinge', 'fixed'], shapes: everyShape, contacts: true },
    unsupported: (world, options) => rapierSoftJointReason(world, options) ?? rapierJointReason(world, 'impulse'),
    ignores: (world) => rapierFrictionIgnored('rapier', world),
    create: (world, options) => RapierSolver.create(world, options, 'impulse'),
  },
  {
    id: 'rapier-multibody',
    description: 'Rapier 0.21 (@dimforge/rapier3d-compat, wasm, f32): multibody joints (spherical, revolute, fixed), reduced coordinates, no drift (trees only; Rapier damps joints 0.1 N·m·s)',
    device: 'cpu',
    reads: rapierReads,
    supports: { constraints: ['point', 'hinge', 'fixed'], shapes: everyShape, contacts: true },
    unsupported: (world, options) => rapierSoftJointReason(world, options) ?? rapierJointReason(world, 'multibody') ?? multibodyLoopReason(world),
    ignores: (world) => rapierFrictionIgnored('rapier-multibody', world),
    create: (world, options) => RapierSolver.create(world, options, 'multibody'),
  },
];

/**
 * A rigid solver's entry as a SolverInfo: it declines particle systems, then constraint types and
 * shapes outside its declared `supports`, each with the reason, then whatever its own `unsupported` says.
 */
function forAnyScene(info: RigidSolverInfo): SolverInfo {
  const particles = (id: string) => `${id} solves rigid bodies; this scene is a particle system (use ${particleSolvers.map((p) => p.id).join(', ')})`;
  return {
    ...info,
    unsupported: (desc, options) =>
      isParticleSystem(desc) ? particles(info.id) : (supportReason(info.id, info.supports, desc) ?? info.unsupported?.(desc, options) ?? null),
    ignores: (desc) => (isParticleSystem(desc) ? null : (info.ignores?.(desc) ?? null)),
    create: (desc, options, gpu) => {
      if (isParticleSystem(desc)) throw new Error(particles(info.id));
      return info.create(desc, options, gpu);
    },
  };
}

export const solvers: SolverInfo[] = [...rigidSolvers.map(forAnyScene), ...particleSolvers];

/**
 * The solver a scene runs under when none is named (`run` without --solver, the viewer when the one
 * asked for cannot run the scene): one that runs it. A particle system: witkin-rk4. A rigid world
 * with contacts: softstep-cpu — Box2D v3's soft step, the contact solver that stacks and rests at its
 * defaults with the least work (4 substeps of 1 sweep; test/piles.test.ts, contact-core.test.ts), in
 * f64 on any machine. Running the scene beats refusing it with a list to choose from: the user asked
 * to see the scene run, and the summary names the solver. Joints only: jacobi-gpu, the seed's baseline.
 */
export function defaultSolverFor(desc: SceneDesc): string {
  if (isParticleSystem(desc)) return 'witkin-rk4';
  return sceneHasContacts(desc) ? 'softstep-cpu' : 'jacobi-gpu';
}

export function findSolver(id: string): SolverInfo | undefined {
  return solvers.find((s) => s.id === id);
}
