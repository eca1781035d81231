/**
 * rapier, rapier-multibody — Rapier (Dimforge's Rust engine, the `@dimforge/rapier3d-compat`
 * 0.21 WebAssembly build, f32) as the outside baseline, on the same WorldDesc and Snapshot
 * as every other solver.
 *
 *   rapier            every joint is an *impulse* joint (point: spherical, 3 linear rows
 *                     between the anchors; hinge: revolute, with its limits; fixed: fixed; a
 *                     rope: rope; maximal coordinates, solved by Rapier's soft-TGS/PGS solver),
 *                     so it drifts and converges like any iterative joint solver.
 *   rapier-multibody  every joint is a *multibody* joint (point: spherical, hinge without
 *                     limits: revolute, fixed: fixed): reduced
 *                     coordinates (Featherstone-style articulations), a joint is exact by
 *                     construction, so |C| stays at f32 rounding — a drift-free reference.
 *                     Needs a forest: a loop in the joint graph is refused (`unsupported`).
 *                     Two properties of Rapier's multibodies that the JS API cannot change:
 *                     (a) every free angular dof of a multibody joint carries a damping of
 *                     0.1 N·m·s/rad (Rapier's default_damping), so swings decay — a pendulum
 *                     of I_pivot = 0.13 kg·m² loses amplitude as e^(−0.38 t/s) (test/rapier.test.ts)
 *                     and energy is not conserved; (b) joint rotations are not renormalised, so
 *                     link quaternions drift off unit norm (≈ 3e-5 /s on a swinging 40-bead chain)
 *                     and |C| measured from the poses creeps up with it (≈ 6e-6 m/s there),
 *                     still orders below the impulse joints; (c) its step is symplectic Euler at
 *                     h_s, explicit in the joint forces, so stable only while ω_max h_s < 2: a light
 *                     chain pulled taut by a heavy body (ω_max ≈ 2 √(T / (m l))) runs away past it
 *                     (mass-ratio-pendulum from a ratio of ~2,600 at 8 × 1/60 s), and beyond ~10⁴ no
 *                     step helps (its f32 solve): docs/solvers.md, test/rapier.test.ts. Cost: a dense mass matrix per
 *                     multibody (3 dofs per joint), ≈ 30 ms a step for one 40-bead chain.
 *
 * Building the Rapier world from a WorldDesc:
 *   1. bodies        RigidBodyDesc.dynamic() or .fixed() (BodyDesc.fixed); translation,
 *                    rotation [x y z w] (normalised), linvel, angvel (world frame, as Rapier
 *                    stores them). Mass and inertia come only from setAdditionalMassProperties:
 *                    m and the principal inertia (Ix, Iy, Iz) of the shape (massProperties():
 *                    sphere 2/5 m r², box m/3 (b² + c²) …, capsule with its caps), centre of
 *                    mass at the body origin, identity inertia frame (the shapes' local axes
 *                    are their principal axes); the colliders (4.) have density 0, so they add
 *                    nothing to them (Rapier's body mass = additional + Σ collider masses).
 *                    setCanSleep(false) on every body (a resting chain must keep being solved,
 *                    else a comparison would measure a frozen state), except with --sleep 1 in a
 *                    world with collisions: then Rapier's own islands and sleeping (its island
 *                    manager, with the thresholds rapier.js fixes, which its JS API cannot set:
 *                    ours, collision/islands.ts, cannot be imposed), and the snapshot's `asleep`
 *                    reads RigidBody.isSleeping(); linear and angular damping
 *                    set to 0 and gravity scale to 1 explicitly (Rapier's defaults, stated here
 *                    so nothing depends on them); additional solver / PGS iterations 0 (Rapier's
 *                    per-island extras, default 0); CCD off (Rapier's default).
 *   2. world anchors rapier: one extra fixed body at the origin with identity rotation, so a
 *                    world point anchorB is its local anchor too; every bodyB = null joint
 *                    attaches to it. rapier-multibody: one such fixed body per joint to the
 *                    world (and a private fixed copy of a desc fixed body per joint to it), so
 *                    every tree hanging from the ground is its own small multibody with a fixed
 *                    root (one multibody holding all 2,500 necklace chains would have a dense
 *                    300k-dof mass matrix). Anchor bodies are never part of the snapshot.
 *   3. joints        between bodyA and bodyB (or the anchor body), each type mapped to the
 *                    Rapier joint that holds the same set of poses, with the starting pose as
 *                    the joint's zero:
 *                      point     JointData.spherical(anchorA, anchorB)
 *                      hinge     JointData.revoluteWithAxes, its two local frames then set so
 *                                they coincide in the starting pose, x along the axis; Rapier's
 *                                angle is then ours (derivation at buildImpulseJoints), so
 *                                lowerAngle/upperAngle go to setLimits unchanged
 *                      fixed     JointData.fixed with the frames q_A⁻¹, q_B⁻¹ (the starting
 *                                relative orientation is held)
 *                      distance  maxLength alone (a rope): JointData.rope(maxLength, …). A
 *                                `length` or `minLength` is refused (rapierJointReason): Rapier's
 *                                rope is its only distance joint and pulls only — measured, its
 *                                lower limit set to 1 m through the raw limit setter does not hold
 *                                a bead above its pivot — and a generic joint locks axes of a
 *                                frame, not the distance between two points, so no faithful rod
 *                                or strut exists (an extra massive link would change the dynamics)
 *                    Multibody: the edges are oriented away from the ground (a
 *                    breadth-first walk from the fixed bodies, then from body 0 of each floating
 *                    tree, whose root gets Rapier's free 6-dof root joint); a joint's parent is
 *                    the side nearer the root, its anchors swapped when that is bodyB. Rapier
 *                    builds a link at joint coordinates 0 and velocity 0, so each child is held
 *                    in its parent's Rapier orientation by a constant change of body frame
 *                    (frameOffsets; coordinates 0 are then the starting pose, and snapshots
 *                    are turned back), and a child's initial velocity is not carried over.
 *                    No distance (multibody links take no rope) and no hinge limits (the JS
 *                    API sets limits on impulse joints only): refused (rapierJointReason).
 *                    Every joint, of both kinds, gets setContactsEnabled(false): bodies joined by
 *                    a joint never collide with each other (the scene format's rule).
 *   4. contacts      world.collisions !== false: one collider per desc body, of its shape, in our
 *                    body frame (rapier-multibody: turned by C⁻¹, the body-frame change of 3.):
 *                      sphere   ColliderDesc.ball(r)
 *                      box      ColliderDesc.cuboid(a, b, c)
 *                      capsule  ColliderDesc.capsule(h, r) (Rapier's segment is along local y from
 *                               −h to +h, as ours)
 *                      plane    new ColliderDesc(new HalfSpace(local +y)): the half-space local
 *                               y ≤ 0 through the body's position, outward normal local +y
 *                    density 0 (mass properties stay ours, 1.). Material, combined per pair so that
 *                    Rapier's pair values equal ours (μ = √(μA μB), e = max(eA, eB)):
 *                      friction     √μ with CoefficientCombineRule.Multiply: √μA · √μB = √(μA μB);
 *                                   Rapier has one coefficient, so μ is the dynamic μ_d
 *                                   (`dynamicFriction`, else `friction`); `staticFriction` has no
 *                                   counterpart there
 *                      restitution  e with CoefficientCombineRule.Max: max(eA, eB)
 *                    (every collider has the same rules, so Rapier's choice between two different
 *                    rules never arises). Checked on Rapier's manifolds (TempContactManifold.friction()
 *                    / .restitution(), test/rapier-contacts.test.ts). Contacts between two fixed
 *                    bodies are never computed (Rapier's default ActiveCollisionTypes), nor for
 *                    the anchor bodies of 2., which have no collider.
 *                    rapier-multibody's private fixed copies (2.) carry no collider and the joint
 *                    holds the child to the copy, so setContactsEnabled cannot exclude the pair
 *                    (child, the desc fixed body): a contact-filter hook does
 *                    (PhysicsHooks.filterContactPair, set on the child's collider with
 *                    ActiveHooks.FILTER_CONTACT_PAIRS, passed to world.step with an event queue:
 *                    the JS step hands hooks to the engine only along with one).
 *                    world.collisions === false: no colliders at all (no contacts; the mass
 *                    properties do not depend on them).
 *                    Rapier's own contact model applies, at its defaults (the 0.21 JS build):
 *                    soft contacts (contact_erp from its contact natural frequency), an allowed
 *                    penetration of normalizedAllowedLinearError · lengthUnit = 5 mm that it does
 *                    not push out, speculative contacts within normalizedPredictionDistance ·
 *                    lengthUnit = 2 cm, restitution as Rapier applies it,
 *                    Coulomb friction per manifold; none of these is one of our options, so none
 *                    is set.
 *
 * Options (SolverOptions) → Rapier:
 *   dt          one frame = `substeps` calls of world.step() with world.timestep = dt / substeps.
 *   iterations  world.numSolverIterations = iterations, with numInternalPgsIterations = 1.
 *               Rapier's "solver iteration" is a soft-TGS *substep*: Rapier divides the step by
 *               numSolverIterations and, in each of those small steps h_s, integrates gravity,
 *               runs numInternalPgsIterations (here 1) biased PGS sweeps over the joints,
 *               integrates the positions, then runs num_internal_stabilization_iterations
 *               unbiased sweeps (Rapier's default 1; the JS API of 0.21 has no setter for it).
 *               So iterations = 8 is 8 biased sweeps per step, as for jacobi-cpu, but each
 *               followed by a position update, plus 8 unbiased stabilisation sweeps, and the
 *               integrator runs at h_s = dt / (substeps · iterations). (Checked: a free body
 *               falls by exactly g h² (N + 1) / (2N) in one step at N solver iterations, which
 *               is symplectic Euler over N substeps.) Rapier needs iterations ≥ 1.
 *   warmStart   no equivalent: the 0.21 JS API exposes no warm-start setting, so Rapier's own
 *               default applies whatever the option says (the Rust source's defaults:
 *               warmstart_coefficient = 1, impulse joints not warm-started unless
 *               warmstart_joints is set, which JS cannot set).
 *   beta        no equivalent: Rapier biases a joint row by erp_inv_dt · C with its own joint
 *               softness (Rust defaults: natural frequency 10⁶ Hz, damping ratio 1, per substep
 *               h_s; erp = ω h_s / (ω h_s + 2ζ) ≈ 0.9998 at h_s = 1/480 s, i.e. β ≈ 1 in units of
 *               1/h_s with a vanishing CFM), and the unbiased stabilisation sweep then takes the
 *               bias velocity back out. The JS API exposes no joint erp / frequency, so `beta`
 *               is ignored (and said so in the registry description).
 *   Multibody joints have no rows to iterate; `iterations` still sets Rapier's substeps there.
 *
 * Invariants: the Rapier world is owned by this object and freed by destroy(); desc body i is
 * Rapier body handle bodyHandles[i]; anchor bodies are created after the desc's bodies and never
 * read back. step() only calls world.step(); snapshot() only reads.
 */
import type { StageTimes } from '../stages.js';
import RAPIER from '@dimforge/rapier3d-compat';
import { massProperties, type BodyDesc, type DistanceConstraintDesc, type HingeConstraintDesc, type WorldDesc } from '../../model/world.js';
import {
  type Solver,
  type SolverOptions,
  type Snapshot,
  type StepTimings,
  type AdapterDescription,
  type SolverCost,
  defaultSolverOptions,
} from '../solver.js';

export type RapierJointKind = 'impulse' | 'multibody';

let initPromise: Promise<void> | null = null;

/**
 * colliderDesc for the tests (rapier-contacts.test.ts), typed so the published declarations name no
 * Rapier type (a consumer then needs none of Rapier's type definitions).
 */
export const colliderDescOf: (b: BodyDesc) => object = (b) => colliderDesc(b);

/** RAPIER.init() once per process (it instantiates the inlined WebAssembly module). */
export function rapierReady(): Promise<void> {
  initPromise ??= RAPIER.init();
  return initPromise;
}

/** The version of the Rapier build in use (after rapierReady()). */
export function rapierVersion(): string {
  return RAPIER.version();
}

/**
 * Why Rapier cannot run `world` with these options, or null: its spherical joints here
 * are rigid (Rapier's joint softness is not the compliance α of a soft joint), so a soft
 * joint or --compliance is refused rather than silently made rigid. Damping likewise.
 */
export function rapierSoftJointReason(world: WorldDesc, options?: Partial<SolverOptions>): string | null {
  const soft = world.constraints.findIndex((c) => (c.compliance ?? 0) > 0);
  if (soft >= 0) return `soft joints (compliance, constraints[${soft}]) are not mapped to Rapier; its joints here are rigid`;
  if ((options?.compliance ?? 0) > 0) return '--compliance is not mapped to Rapier; its joints here are rigid';
  if ((options?.linearDamping ?? 0) > 0 || (options?.angularDamping ?? 0) > 0) return '--linear-damping/--angular-damping are not mapped to Rapier';
  return null;
}

/**
 * Why rapier-multibody cannot run `world`, or null. Multibody joints need a forest: every body
 * has at most one parent. The ground (the world and every fixed body, which never move) counts
 * as one node, so a chain pinned to the world at both ends, or between two fixed bodies, is a loop.
 */
export function multibodyLoopReason(world: WorldDesc): string | null {
  const n = world.bodies.length;
  const ground = n; // node index of the ground
  const node = (b: number | null) => (b === null || world.bodies[b].fixed ? ground : b);
  const parent = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  for (let ic = 0; ic < world.constraints.length; ic++) {
    const c = world.constraints[ic];
    const a = find(node(c.bodyA)), b = find(node(c.bodyB));
    if (a === b) {
      const where = c.bodyB === null ? `body ${c.bodyA} and the world` : `bodies ${c.bodyA} and ${c.bodyB}`;
      return `the joint graph has a loop (constraint ${ic}, between ${where}, closes it; the world and fixed bodies count as one ground); multibody joints need a tree`;
    }
    parent[a] = b;
  }
  return null;
}

/**
 * Why Rapier cannot take one of `world`'s joints, or null (the joint types it maps, rapier.ts header):
 *   both kinds:  a distance with `length` or `minLength` (or neither bound: the starting distance).
 *                Rapier's only distance joint is its rope, one coupled linear limit whose row can
 *                only pull: the lower limit is not enforced (measured: a bead balanced on a
 *                rope with limits [1, 1] m, or [1, 10] m, above its pivot falls through the pivot
 *                to 1 cm from it), so it cannot hold a rod or a strut, which must push.
 *   multibody:   any distance (its links take no rope: measured, a bead on a multibody rope falls
 *                freely), and a hinge with limits (the 0.21 JS API sets limits on impulse joints only).
 */
export function rapierJointReason(world: WorldDesc, kind: RapierJointKind): string | null {
  const id = kind === 'impulse' ? 'rapier' : 'rapier-multibody';
  for (let ic = 0; ic < world.constraints.length; ic++) {
    const c = world.constraints[ic];
    if (c.type === 'distance') {
      if (kind === 'multibody')
        return `rapier-multibody has no distance joint (constraints[${ic}]): Rapier's multibody links do not take its rope joint (use rapier for a rope)`;
      if (c.maxLength === undefined || c.minLength !== undefined)
        return `rapier has no rigid distance joint (constraints[${ic}]): Rapier's rope, its only distance joint, pulls only, so it cannot hold a length or a minLength (a rod or strut must push); only a rope (maxLength alone) maps`;
    }
    if (c.type === 'hinge' && kind === 'multibody' && (c.lowerAngle !== undefined || c.upperAngle !== undefined))
      return `${id} cannot limit a hinge (constraints[${ic}]): Rapier 0.21's JS API sets joint limits on impulse joints only (use rapier)`;
  }
  return null;
}

// ---- quaternions {x y z w} for building the joints (set-up only, not the step) -------------------

type Quat = { x: number; y: number; z: number; w: number };
type Vec = { x: number; y: number; z: number };
const ZERO = { x: 0, y: 0, z: 0 };
const IDENTITY: Quat = { x: 0, y: 0, z: 0, w: 1 };
const vec = (v: readonly number[]): Vec => ({ x: v[0], y: v[1], z: v[2] });
const unit = (v: Vec): Vec => {
  const n = 1 / Math.hypot(v.x, v.y, v.z);
  return { x: v.x * n, y: v.y * n, z: v.z * n };
};
/** a ⊗ b */
function qmul(a: Quat, b: Quat): Quat {
  return {
    x: a.w * b.x + b.w * a.x + a.y * b.z - a.z * b.y,
    y: a.w * b.y + b.w * a.y + a.z * b.x - a.x * b.z,
    z: a.w * b.z + b.w * a.z + a.x * b.y - a.y * b.x,
    w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
  };
}
const qconj = (q: Quat): Quat => ({ x: -q.x, y: -q.y, z: -q.z, w: q.w });
/** R(q) v = v + 2 q_v × (q_v × v + w v) */
function qrot(q: Quat, v: Vec): Vec {
  const tx = q.y * v.z - q.z * v.y + q.w * v.x, ty = q.z * v.x - q.x * v.z + q.w * v.y, tz = q.x * v.y - q.y * v.x + q.w * v.z;
  return { x: v.x + 2 * (q.y * tz - q.z * ty), y: v.y + 2 * (q.z * tx - q.x * tz), z: v.z + 2 * (q.x * ty - q.y * tx) };
}
/** A body's orientation in the desc, normalised (identity when omitted). */
function descRotation(orientation: readonly number[] | undefined): Quat {
  const [x, y, z, w] = orientation ?? [0, 0, 0, 1];
  const n = 1 / Math.sqrt(x * x + y * y + z * z + w * w);
  return { x: x * n, y: y * n, z: z * n, w: w * n };
}
/** The shortest rotation taking unit u onto unit v: q = normalise(1 + u·v, u × v); about any ⟂ axis when v = −u. */
function rotationBetween(u: Vec, v: Vec): Quat {
  const d = u.x * v.x + u.y * v.y + u.z * v.z;
  let q: Quat = { x: u.y * v.z - u.z * v.y, y: u.z * v.x - u.x * v.z, z: u.x * v.y - u.y * v.x, w: 1 + d };
  if (q.w < 1e-9) q = Math.abs(u.x) < 0.9 ? { x: 0, y: u.z, z: -u.y, w: 0 } : { x: -u.z, y: 0, z: u.x, w: 0 }; // u × e_x or u × e_y
  const n = 1 / Math.hypot(q.x, q.y, q.z, q.w);
  return { x: q.x * n, y: q.y * n, z: q.z * n, w: q.w * n };
}

/** The scene format's material defaults (schema.ts): μ = 0.6, e = 0. */
const DEFAULT_FRICTION = 0.6;
const DEFAULT_RESTITUTION = 0;

/**
 * Rapier's collider for a desc body (header, 4.): its shape, density 0 (the body's mass properties
 * stay ours), friction √μ combined by Multiply (pair √μA·√μB = √(μA μB)) and restitution e combined
 * by Max (pair max(eA, eB)).
 */
function colliderDesc(b: BodyDesc): RAPIER.ColliderDesc {
  const s = b.shape;
  let cd: RAPIER.ColliderDesc;
  switch (s.type) {
    case 'sphere':
      cd = RAPIER.ColliderDesc.ball(s.radius);
      break;
    case 'box':
      cd = RAPIER.ColliderDesc.cuboid(s.halfExtents[0], s.halfExtents[1], s.halfExtents[2]);
      break;
    case 'capsule':
      cd = RAPIER.ColliderDesc.capsule(s.halfHeight, s.radius); // segment along local y, ±halfHeight
      break;
    case 'plane':
      cd = new RAPIER.ColliderDesc(new RAPIER.HalfSpace({ x: 0, y: 1, z: 0 })); // local y ≤ 0, outward +y
      break;
    default:
      throw new Error(`rapier: no collider for a ${(s as { type: string }).type} shape`);
  }
  return cd
    .setDensity(0)
    // Rapier has one friction coefficient: it gets the dynamic μ_d (a sliding body decelerates as in
    // our solvers; a body held only because μ_s > μ_d slides there: README, static friction)
    .setFriction(Math.sqrt(b.dynamicFriction ?? b.friction ?? DEFAULT_FRICTION))
    .setFrictionCombineRule(RAPIER.CoefficientCombineRule.Multiply)
    .setRestitution(b.restitution ?? DEFAULT_RESTITUTION)
    .setRestitutionCombineRule(RAPIER.CoefficientCombineRule.Max);
}

export class RapierSolver implements Solver {
  readonly id: string;
  readonly options: SolverOptions;
  readonly bodyCount: number;
  readonly constraintCount: number;
  readonly adapter: AdapterDescription;
  readonly kind: RapierJointKind;

  private world: RAPIER.World | null;
  private readonly bodies: RAPIER.RigidBody[] = [];
  /**
   * rapier-multibody only: per desc body, C_i = q_i⁻¹ ⊗ q'_i, the turn from our body frame to the
   * frame Rapier holds the body in (q' = q ⊗ C, identity for roots and fixed bodies; see
   * buildMultibodyJoints); snapshot() hands back q = q' ⊗ C⁻¹. Null for rapier (C = 1).
   */
  private frameOffsets: Float64Array | null = null;
  /** per desc body, its collider (header, 4.); empty when world.collisions is false */
  private readonly colliders: RAPIER.Collider[] = [];
  /**
   * rapier-multibody: desc body pairs (child, fixed body) joined through a private fixed copy
   * (buildMultibodyJoints), whose contacts the filter hook drops (header, 4.)
   */
  private readonly noContact: [number, number][] = [];
  /** the contact-filter hook passed to world.step, or undefined when no pair needs it */
  private hooks: RAPIER.PhysicsHooks | undefined = undefined;
  /**
   * An event queue for world.step, made with the hooks: Rapier's JS step hands the hooks to the
   * engine only along with an event queue (measured: without one the hook is never called). No
   * collider asks for events, so it stays empty (auto-drained).
   */
  private events: RAPIER.EventQueue | undefined = undefined;
  /** rows of the joints (cost()): point 3, hinge 5 + its limits, fixed 6, rope 1 */
  private jointRows = 0;
  private frame = 0;
  private msPerFrame: number[] = [];

  /** bodies may sleep (Rapier's rule): --sleep 1 and a world with collisions (header, 1.) */
  private readonly sleeps: boolean;

  /** Use `RapierSolver.create` (it awaits RAPIER.init()). */
  private constructor(desc: WorldDesc, options: SolverOptions, kind: RapierJointKind) {
    this.kind = kind;
    this.sleeps = options.sleep === 1 && desc.collisions !== false && desc.bodies.length >= 2;
    this.id = kind === 'impulse' ? 'rapier' : 'rapier-multibody';
    this.options = options;
    this.bodyCount = desc.bodies.length;
    this.constraintCount = desc.constraints.length;
    this.adapter = { name: `cpu (Rapier ${RAPIER.version()} wasm)`, software: false, timestamps: false };

    const [gx, gy, gz] = desc.gravity;
    const world = new RAPIER.World({ x: gx, y: gy, z: gz });
    this.world = world;
    try {
      world.timestep = options.dt / options.substeps;
      world.numSolverIterations = options.iterations;
      world.numInternalPgsIterations = 1;

      // 1. bodies
      for (const b of desc.bodies) {
        const rb = b.fixed ? RAPIER.RigidBodyDesc.fixed() : RAPIER.RigidBodyDesc.dynamic();
        const [x, y, z] = b.position;
        const [qx, qy, qz, qw] = b.orientation ?? [0, 0, 0, 1];
        const qn = 1 / Math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
        rb.setTranslation(x, y, z)
          .setRotation({ x: qx * qn, y: qy * qn, z: qz * qn, w: qw * qn })
          .setCanSleep(this.sleeps)
          .setLinearDamping(0)
          .setAngularDamping(0)
          .setGravityScale(1)
          .setCcdEnabled(false)
          .setAdditionalSolverIterations(0) // no per-island extra iterations: exactly `iterations`
          .setAdditionalPgsIterations(0);
        if (!b.fixed) {
          const v = b.linearVelocity ?? [0, 0, 0];
          const w = b.angularVelocity ?? [0, 0, 0];
          const mp = massProperties(b);
          // principal moments (diagonal of the local tensor: sphere, box and capsule are symmetric
          // about their local axes, so the local frame is the principal frame)
          const principal = { x: mp.inertiaLocal[0], y: mp.inertiaLocal[4], z: mp.inertiaLocal[8] };
          rb.setLinvel(v[0], v[1], v[2])
            .setAngvel({ x: w[0], y: w[1], z: w[2] })
            .setAdditionalMassProperties(mp.mass, ZERO, principal, IDENTITY);
        }
        this.bodies.push(world.createRigidBody(rb));
      }

      // 2.–3. anchors and joints
      if (kind === 'impulse') this.buildImpulseJoints(desc, world);
      else this.buildMultibodyJoints(desc, world);

      // 4. colliders, after the joints: rapier-multibody's body-frame changes C are known then
      if (desc.collisions !== false) this.buildColliders(desc, world);
    } catch (e) {
      world.free();
      this.events?.free();
      this.world = null;
      throw e;
    }
  }

  static async create(desc: WorldDesc, options: Partial<SolverOptions> = {}, kind: RapierJointKind = 'impulse'): Promise<RapierSolver> {
    const o = { ...defaultSolverOptions, ...options };
    if (!Number.isInteger(o.iterations) || o.iterations < 1)
      throw new Error(`Rapier needs iterations ≥ 1 (its solver iterations are its substeps), got ${o.iterations}`);
    const soft = rapierSoftJointReason(desc, o);
    if (soft) throw new Error(`rapier: ${soft}`);
    const joint = rapierJointReason(desc, kind);
    if (joint) throw new Error(joint);
    if (kind === 'multibody') {
      const reason = multibodyLoopReason(desc);
      if (reason) throw new Error(`rapier-multibody: ${reason}`);
    }
    await rapierReady();
    return new RapierSolver(desc, o, kind);
  }

  /**
   * One collider per desc body (header, 4.), attached at the body origin (the centre of mass) and
   * turned by C⁻¹ where rapier-multibody holds the body in a changed frame q' = q ⊗ C: the
   * collider's world orientation is then q' ⊗ C⁻¹ = q, ours.
   */
  private buildColliders(desc: WorldDesc, world: RAPIER.World): void {
    const filtered = new Set<number>();
    for (const [child] of this.noContact) filtered.add(child);
    const offsets = this.frameOffsets;
    desc.bodies.forEach((b, i) => {
      const cd = colliderDesc(b);
      if (offsets) cd.setRotation({ x: -offsets[4 * i], y: -offsets[4 * i + 1], z: -offsets[4 * i + 2], w: offsets[4 * i + 3] });
      if (filtered.has(i)) cd.setActiveHooks(RAPIER.ActiveHooks.FILTER_CONTACT_PAIRS);
      this.colliders.push(world.createCollider(cd, this.bodies[i]));
    });
    if (this.noContact.length === 0) return;
    // excluded pairs, keyed by Rapier body handles (the hook is handed handles, not desc indices)
    const excluded = new Set<string>();
    const key = (h1: number, h2: number) => (h1 < h2 ? `${h1} ${h2}` : `${h2} ${h1}`);
    for (const [a, b] of this.noContact) excluded.add(key(this.bodies[a].handle, this.bodies[b].handle));
    this.hooks = {
      filterContactPair: (_c1, _c2, b1, b2) => (excluded.has(key(b1, b2)) ? null : RAPIER.SolverFlags.COMPUTE_IMPULSE),
      filterIntersectionPair: () => true, // no sensors here
    };
    this.events = new RAPIER.EventQueue(true);
  }

  private newAnchorBody(world: RAPIER.World, x = 0, y = 0, z = 0, q = IDENTITY): RAPIER.RigidBody {
    return world.createRigidBody(RAPIER.RigidBodyDesc.fixed().setTranslation(x, y, z).setRotation(q).setCanSleep(false));
  }

  /**
   * One impulse joint per constraint (header, 3.). Rapier's joints hold two local frames, F₁ on
   * body 1 and F₂ on body 2, and constrain the relative pose of the world frames q₁F₁ and q₂F₂;
   * the frames are chosen here so that the starting pose is the joint's zero:
   *   fixed  F₁ = q_A⁻¹, F₂ = q_B⁻¹ (the starting orientations, q_B = 1 for the world): q_A F₁ =
   *          q_B F₂ = 1 at the start, and the weld holds q_A⁻¹ q_B = q_A0⁻¹ q_B0 = q_ref, our
   *          fixed joint's target (rows/fixed.ts).
   *   hinge  Rapier's revolute leaves the angle about F's x axis free. W: a world rotation with
   *          W e_x = a = R_A axisA (unit); W' = rot(a → b) W with b = R_B axisB (W' = W when the
   *          axes start aligned). F₁ = q_A⁻¹ W, F₂ = q_B⁻¹ W', so F₁ e_x = axisA, F₂ e_x = axisB and
   *          the frames coincide at the start. Angle: Rapier's θ is the turn of q_B F₂ relative to
   *          q_A F₁ about its x axis, (q_A F₁)⁻¹ (q_B F₂) = W⁻¹ q_A0 q_d q_A0⁻¹ W with our
   *          q_d = q_A⁻¹ q_B q_ref⁻¹ (rows/hinge.ts), a turn by our θ about axisA; conjugated it
   *          is the same θ about e_x, right-hand rule. So our limits pass unchanged:
   *          setLimits(lowerAngle ?? −π, upperAngle ?? π) (±π: no limit on that side).
   *   rope   (distance with maxLength alone) Rapier's rope joint, |p_A − p_B| ≤ maxLength.
   * Rapier's revolute JointData takes only the axes (its frames are completed from them), so
   * the frames are set on the created joint (setFrameX1/X2: the same anchors, new rotations).
   */
  private buildImpulseJoints(desc: WorldDesc, world: RAPIER.World): void {
    let ground: RAPIER.RigidBody | null = null;
    for (const c of desc.constraints) {
      const anchorA = vec(c.anchorA), anchorB = vec(c.anchorB);
      const other = c.bodyB === null ? (ground ??= this.newAnchorBody(world)) : this.bodies[c.bodyB];
      const qA = descRotation(desc.bodies[c.bodyA].orientation);
      const qB = c.bodyB === null ? IDENTITY : descRotation(desc.bodies[c.bodyB].orientation);
      switch (c.type ?? 'point') {
        case 'point':
          world.createImpulseJoint(RAPIER.JointData.spherical(anchorA, anchorB), this.bodies[c.bodyA], other, true).setContactsEnabled(false);
          this.jointRows += 3;
          break;
        case 'fixed':
          world.createImpulseJoint(RAPIER.JointData.fixed(anchorA, qconj(qA), anchorB, qconj(qB)), this.bodies[c.bodyA], other, true).setContactsEnabled(false);
          this.jointRows += 6;
          break;
        case 'hinge': {
          const h = c as HingeConstraintDesc;
          const axisA = unit(vec(h.axisA)), axisB = unit(vec(h.axisB));
          const a = qrot(qA, axisA), b = qrot(qB, axisB);
          const W = rotationBetween({ x: 1, y: 0, z: 0 }, a);
          const W2 = qmul(rotationBetween(a, b), W);
          const joint = world.createImpulseJoint(RAPIER.JointData.revoluteWithAxes(anchorA, anchorB, axisA, axisB), this.bodies[c.bodyA], other, true) as RAPIER.RevoluteImpulseJoint;
          joint.setContactsEnabled(false);
          joint.setFrameX1(qmul(qconj(qA), W));
          joint.setFrameX2(qmul(qconj(qB), W2));
          this.jointRows += 5;
          if (h.lowerAngle !== undefined || h.upperAngle !== undefined) {
            joint.setLimits(h.lowerAngle ?? -Math.PI, h.upperAngle ?? Math.PI);
            this.jointRows += (h.lowerAngle !== undefined ? 1 : 0) + (h.upperAngle !== undefined ? 1 : 0);
          }
          break;
        }
        case 'distance': {
          const d = c as DistanceConstraintDesc;
          // rapierJointReason refused every other distance (create() checks it first)
          if (d.maxLength === undefined || d.minLength !== undefined || d.length !== undefined) throw new Error('rapier: only a rope (maxLength alone) maps to Rapier');
          world.createImpulseJoint(RAPIER.JointData.rope(d.maxLength, anchorA, anchorB), this.bodies[c.bodyA], other, true).setContactsEnabled(false);
          this.jointRows += 1;
          break;
        }
      }
    }
  }

  /**
   * Orient every joint from parent to child by a breadth-first walk from the ground, then from
   * the lowest-numbered body of each floating tree; create the joints in that order, so each
   * parent is already in its multibody when its child is attached.
   */
  private buildMultibodyJoints(desc: WorldDesc, world: RAPIER.World): void {
    const n = desc.bodies.length;
    // adjacency: constraint indices per body
    const adjacency: number[][] = Array.from({ length: n }, () => []);
    desc.constraints.forEach((c, ic) => {
      adjacency[c.bodyA].push(ic);
      if (c.bodyB !== null) adjacency[c.bodyB].push(ic);
    });
    const visited = new Uint8Array(n);
    const usedConstraint = new Uint8Array(desc.constraints.length);
    const queue: number[] = [];
    // Rapier builds a multibody link at joint coordinates 0: it places the child where the two
    // joint frames coincide (measured: a child turned 0.7 rad about a revolute axis is snapped back).
    // So every child is held in Rapier in its parent's Rapier orientation at the start, q'_K = q'_P,
    // by a constant change of its body frame, C_K = q_K⁻¹ ⊗ q'_P (q' = q ⊗ C): its anchor and axis
    // become C_K⁻¹ r, its principal inertia frame C_K⁻¹; the joint frames are then the identity
    // (spherical, fixed) or completed by Rapier from equal axes (revolute: the axes start aligned,
    // C_P⁻¹ axis_P = C_K⁻¹ axis_K), and coordinates 0 are the starting pose. snapshot() undoes C.
    const offsets = new Float64Array(4 * n);
    for (let i = 0; i < n; i++) offsets[4 * i + 3] = 1;
    this.frameOffsets = offsets;
    const offsetOf = (i: number | null): Quat => (i === null ? IDENTITY : { x: offsets[4 * i], y: offsets[4 * i + 1], z: offsets[4 * i + 2], w: offsets[4 * i + 3] });
    const attach = (ic: number, child: number, parentBody: RAPIER.RigidBody, parent: number | null, parentIsA: boolean) => {
      const c = desc.constraints[ic];
      const qP = parentBody.rotation();
      const qK = descRotation(desc.bodies[child].orientation);
      const CK = qmul(qconj(qK), { x: qP.x, y: qP.y, z: qP.z, w: qP.w });
      offsets[4 * child] = CK.x; offsets[4 * child + 1] = CK.y; offsets[4 * child + 2] = CK.z; offsets[4 * child + 3] = CK.w;
      const body = this.bodies[child];
      if (CK.x !== 0 || CK.y !== 0 || CK.z !== 0) {
        // (C = 1 exactly, the chains of spheres: the body stays as created, bit for bit)
        const mp = massProperties(desc.bodies[child]);
        body.setRotation(qP, true);
        body.setAdditionalMassProperties(mp.mass, ZERO, { x: mp.inertiaLocal[0], y: mp.inertiaLocal[4], z: mp.inertiaLocal[8] }, qconj(CK), true);
      }
      const toParent = (v: readonly number[]) => qrot(qconj(offsetOf(parent)), vec(v));
      const toChild = (v: readonly number[]) => qrot(qconj(CK), vec(v));
      const anchorP = toParent(parentIsA ? c.anchorA : c.anchorB), anchorK = toChild(parentIsA ? c.anchorB : c.anchorA);
      let data: RAPIER.JointData;
      switch (c.type ?? 'point') {
        case 'point':
          data = RAPIER.JointData.spherical(anchorP, anchorK);
          break;
        case 'fixed':
          data = RAPIER.JointData.fixed(anchorP, IDENTITY, anchorK, IDENTITY);
          break;
        case 'hinge': {
          const h = c as HingeConstraintDesc;
          data = RAPIER.JointData.revoluteWithAxes(anchorP, anchorK, unit(toParent(parentIsA ? h.axisA : h.axisB)), unit(toChild(parentIsA ? h.axisB : h.axisA)));
          break;
        }
        default: // distance: refused by rapierJointReason
          throw new Error(`rapier-multibody: no multibody joint for a ${c.type} constraint`);
      }
      world.createMultibodyJoint(data, parentBody, body, true).setContactsEnabled(false);
      usedConstraint[ic] = 1;
      visited[child] = 1;
      queue.push(child);
    };
    const walk = () => {
      while (queue.length) {
        const p = queue.shift()!;
        for (const ic of adjacency[p]) {
          if (usedConstraint[ic]) continue;
          const c = desc.constraints[ic];
          if (c.bodyB === null) continue; // a second way to the ground: refused by multibodyLoopReason
          const pIsA = c.bodyA === p;
          const child = pIsA ? c.bodyB : c.bodyA;
          if (desc.bodies[child].fixed) continue; // a fixed body is ground: attached from there
          attach(ic, child, this.bodies[p], p, pIsA);
        }
      }
    };
    // roots on the ground: each joint to the world or to a fixed body gets its own fixed anchor
    desc.bodies.forEach((b, i) => {
      if (b.fixed) visited[i] = 1;
    });
    desc.constraints.forEach((c, ic) => {
      const fixedA = !!desc.bodies[c.bodyA].fixed;
      const fixedB = c.bodyB === null || !!desc.bodies[c.bodyB].fixed;
      if (!fixedA && !fixedB) return;
      const child = fixedA ? (c.bodyB as number) : c.bodyA;
      const groundSide = fixedA ? c.bodyA : c.bodyB;
      let anchorBody: RAPIER.RigidBody;
      if (groundSide === null) anchorBody = this.newAnchorBody(world);
      else {
        const g = desc.bodies[groundSide];
        anchorBody = this.newAnchorBody(world, g.position[0], g.position[1], g.position[2], descRotation(g.orientation));
      }
      // the anchor body stands in for the ground side with its own pose: no frame change (C = 1)
      attach(ic, child, anchorBody, null, fixedA);
      // the joint holds child to the copy, so its setContactsEnabled(false) does not reach the desc
      // fixed body itself: that pair is filtered out by the contact hook (header, 4.)
      if (groundSide !== null) this.noContact.push([child, groundSide]);
    });
    walk();
    // floating trees: rooted at their lowest-numbered body (Rapier gives the root a free joint)
    for (let i = 0; i < n; i++) {
      if (visited[i]) continue;
      visited[i] = 1;
      queue.push(i);
      walk();
    }
  }

  async step(frames: number): Promise<void> {
    const world = this.live();
    const substeps = this.options.substeps;
    for (let f = 0; f < frames; f++) {
      const t0 = performance.now();
      for (let s = 0; s < substeps; s++) world.step(this.events, this.hooks);
      this.msPerFrame.push(performance.now() - t0);
      this.frame++;
    }
  }

  async snapshot(): Promise<Snapshot> {
    this.live();
    const n = this.bodyCount;
    const position = new Float64Array(3 * n);
    const orientation = new Float64Array(4 * n);
    const linearVelocity = new Float64Array(3 * n);
    const angularVelocity = new Float64Array(3 * n);
    const v = { x: 0, y: 0, z: 0 };
    const q = { x: 0, y: 0, z: 0, w: 1 };
    const offsets = this.frameOffsets;
    for (let i = 0; i < n; i++) {
      const b = this.bodies[i];
      b.translation(v as RAPIER.Vector);
      position[3 * i] = v.x; position[3 * i + 1] = v.y; position[3 * i + 2] = v.z;
      b.rotation(q as RAPIER.Rotation);
      const o = 4 * i;
      if (offsets && (offsets[o] !== 0 || offsets[o + 1] !== 0 || offsets[o + 2] !== 0)) {
        // q = q' ⊗ C⁻¹ (the body frame Rapier holds, turned back to ours; buildMultibodyJoints)
        const cx = -offsets[o], cy = -offsets[o + 1], cz = -offsets[o + 2], cw = offsets[o + 3];
        orientation[o] = q.w * cx + cw * q.x + q.y * cz - q.z * cy;
        orientation[o + 1] = q.w * cy + cw * q.y + q.z * cx - q.x * cz;
        orientation[o + 2] = q.w * cz + cw * q.z + q.x * cy - q.y * cx;
        orientation[o + 3] = q.w * cw - q.x * cx - q.y * cy - q.z * cz;
      } else {
        orientation[o] = q.x; orientation[o + 1] = q.y; orientation[o + 2] = q.z; orientation[o + 3] = q.w;
      }
      b.linvel(v as RAPIER.Vector);
      linearVelocity[3 * i] = v.x; linearVelocity[3 * i + 1] = v.y; linearVelocity[3 * i + 2] = v.z;
      b.angvel(v as RAPIER.Vector);
      angularVelocity[3 * i] = v.x; angularVelocity[3 * i + 1] = v.y; angularVelocity[3 * i + 2] = v.z;
    }
    const asleep = this.sleeps ? Uint8Array.from(this.bodies.slice(0, n), (b) => (b.isDynamic() && b.isSleeping() ? 1 : 0)) : null;
    return { frame: this.frame, time: this.frame * this.options.dt, bodyCount: n, position, orientation, linearVelocity, angularVelocity, ...(asleep ? { asleep } : {}) };
  }

  timings(): StepTimings {
    return { clock: 'wall', msPerFrame: this.msPerFrame.slice(), wallMsPerFrame: this.msPerFrame.slice() };
  }

  resetTimings(): void {
    this.msPerFrame = [];
  }

  /** Rapier's step is one call into its wasm (collision, solve and integration inside; its JS API has no profiler): one stage */
  readonly stageNames: readonly string[] = ['world.step (Rapier)'];

  stageTimes(): StageTimes {
    return { 'world.step (Rapier)': this.msPerFrame.reduce((a, b) => a + b, 0) };
  }

  /**
   * rapier: the joints' rows (point 3, hinge 5 and one per limit, fixed 6, rope 1) × iterations ×
   * substeps — the biased sweeps, one per Rapier solver
   * iteration (numInternalPgsIterations = 1), each a 1-D solve of one locked axis, the same
   * unit as jacobi-cpu's row. Rapier also runs one unbiased stabilisation sweep per solver iteration
   * (not counted: it has no jacobi-cpu counterpart), so it updates about twice these rows.
   * rapier-multibody: 0 — its joints are coordinates of the articulation, not rows to iterate.
   */
  cost(): SolverCost {
    if (this.kind === 'multibody') return { rowSolvesPerFrame: 0 };
    const { iterations, substeps } = this.options;
    return { rowSolvesPerFrame: this.jointRows * iterations * substeps };
  }

  /**
   * The number of active contact points: Rapier's solver contacts (the manifold points within its
   * prediction distance that go to its solver) summed over every contact pair of the narrow phase,
   * at the current state (after the last step). 0 when world.collisions is false.
   */
  contactCount(): number {
    const world = this.live();
    const narrow = world.narrowPhase;
    let count = 0;
    for (const c of this.colliders) {
      const h1 = c.handle;
      narrow.contactPairsWith(h1, (h2) => {
        if (h2 <= h1) return; // each unordered pair once (handles are distinct numbers)
        narrow.contactPair(h1, h2, world.bodies, (manifold) => {
          count += manifold.numSolverContacts();
        });
      });
    }
    return count;
  }

  destroy(): void {
    this.world?.free();
    this.world = null;
    this.events?.free();
    this.events = undefined;
    this.bodies.length = 0;
    this.colliders.length = 0;
  }

  private live(): RAPIER.World {
    if (!this.world) throw new Error(`${this.id}: used after destroy()`);
    return this.world;
  }
}
