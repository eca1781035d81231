/**
 * rapier, rapier-multibody — Rapier (Dimforge's Rust engine, the `@dimforge/rapier3d-compat`
 * 0.21 WebAssembly build, f32) as the outside baseline, on the same WorldDesc and Snapshot
 * as every other solver.
 *
 *   rapier            every point constraint is a spherical *impulse* joint (3 linear rows
 *                     between the anchors, maximal coordinates, solved by Rapier's soft-TGS/PGS
 *                     solver), so it drifts and converges like any iterative joint solver.
 *   rapier-multibody  every point constraint is a spherical *multibody* joint: reduced
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
 *                     still orders below the impulse joints. Cost: a dense mass matrix per
 *                     multibody (3 dofs per joint), ≈ 30 ms a step for one 40-bead chain.
 *
 * Building the Rapier world from a WorldDesc:
 *   1. bodies        RigidBodyDesc.dynamic() or .fixed() (BodyDesc.fixed); translation,
 *                    rotation [x y z w] (normalised), linvel, angvel (world frame, as Rapier
 *                    stores them). No colliders (collisions are off; the scenes have no
 *                    contacts), so mass and inertia come only from setAdditionalMassProperties:
 *                    m and the principal inertia (I, I, I), I = 2/5 m r² (massProperties()),
 *                    centre of mass at the body origin, identity inertia frame.
 *                    setCanSleep(false) on every body (a resting chain must keep being solved,
 *                    else a comparison would measure a frozen state); linear and angular damping
 *                    set to 0 and gravity scale to 1 explicitly (Rapier's defaults, stated here
 *                    so nothing depends on them); additional solver / PGS iterations 0 (Rapier's
 *                    per-island extras, default 0); CCD off (Rapier's default; no colliders).
 *   2. world anchors rapier: one extra fixed body at the origin with identity rotation, so a
 *                    world point anchorB is its local anchor too; every bodyB = null joint
 *                    attaches to it. rapier-multibody: one such fixed body per joint to the
 *                    world (and a private fixed copy of a desc fixed body per joint to it), so
 *                    every tree hanging from the ground is its own small multibody with a fixed
 *                    root (one multibody holding all 2,500 necklace chains would have a dense
 *                    300k-dof mass matrix). Anchor bodies are never part of the snapshot.
 *   3. joints        JointData.spherical(anchorA, anchorB) between bodyA and bodyB (or the
 *                    anchor body). Multibody: the edges are oriented away from the ground (a
 *                    breadth-first walk from the fixed bodies, then from body 0 of each floating
 *                    tree, whose root gets Rapier's free 6-dof root joint); a joint's parent is
 *                    the side nearer the root, its anchors swapped when that is bodyB.
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
import RAPIER from '@dimforge/rapier3d-compat';
import { massProperties, type WorldDesc } from '../../model/world.js';
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

const ZERO = { x: 0, y: 0, z: 0 };
const IDENTITY = { x: 0, y: 0, z: 0, w: 1 };

export class RapierSolver implements Solver {
  readonly id: string;
  readonly options: SolverOptions;
  readonly bodyCount: number;
  readonly constraintCount: number;
  readonly adapter: AdapterDescription;
  readonly kind: RapierJointKind;

  private world: RAPIER.World | null;
  private readonly bodies: RAPIER.RigidBody[] = [];
  private frame = 0;
  private msPerFrame: number[] = [];

  /** Use `RapierSolver.create` (it awaits RAPIER.init()). */
  private constructor(desc: WorldDesc, options: SolverOptions, kind: RapierJointKind) {
    this.kind = kind;
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
          .setCanSleep(false)
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
          const inertia = mp.inertiaLocal[0]; // isotropic: I = 2/5 m r² on the diagonal
          rb.setLinvel(v[0], v[1], v[2])
            .setAngvel({ x: w[0], y: w[1], z: w[2] })
            .setAdditionalMassProperties(mp.mass, ZERO, { x: inertia, y: inertia, z: inertia }, IDENTITY);
        }
        this.bodies.push(world.createRigidBody(rb));
      }

      // 2.–3. anchors and joints
      if (kind === 'impulse') this.buildImpulseJoints(desc, world);
      else this.buildMultibodyJoints(desc, world);
    } catch (e) {
      world.free();
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
    if (kind === 'multibody') {
      const reason = multibodyLoopReason(desc);
      if (reason) throw new Error(`rapier-multibody: ${reason}`);
    }
    await rapierReady();
    return new RapierSolver(desc, o, kind);
  }

  private newAnchorBody(world: RAPIER.World, x = 0, y = 0, z = 0, q = IDENTITY): RAPIER.RigidBody {
    return world.createRigidBody(RAPIER.RigidBodyDesc.fixed().setTranslation(x, y, z).setRotation(q).setCanSleep(false));
  }

  private buildImpulseJoints(desc: WorldDesc, world: RAPIER.World): void {
    let ground: RAPIER.RigidBody | null = null;
    for (const c of desc.constraints) {
      const [ax, ay, az] = c.anchorA;
      const [bx, by, bz] = c.anchorB;
      const data = RAPIER.JointData.spherical({ x: ax, y: ay, z: az }, { x: bx, y: by, z: bz });
      let other: RAPIER.RigidBody;
      if (c.bodyB === null) other = ground ??= this.newAnchorBody(world);
      else other = this.bodies[c.bodyB];
      world.createImpulseJoint(data, this.bodies[c.bodyA], other, true);
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
    const attach = (ic: number, child: number, parentBody: RAPIER.RigidBody, parentAnchor: number[], childAnchor: number[]) => {
      const data = RAPIER.JointData.spherical(
        { x: parentAnchor[0], y: parentAnchor[1], z: parentAnchor[2] },
        { x: childAnchor[0], y: childAnchor[1], z: childAnchor[2] },
      );
      world.createMultibodyJoint(data, parentBody, this.bodies[child], true);
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
          if (pIsA) attach(ic, child, this.bodies[p], c.anchorA, c.anchorB);
          else attach(ic, child, this.bodies[p], c.anchorB, c.anchorA);
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
        const [qx, qy, qz, qw] = g.orientation ?? [0, 0, 0, 1];
        const qn = 1 / Math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
        anchorBody = this.newAnchorBody(world, g.position[0], g.position[1], g.position[2], { x: qx * qn, y: qy * qn, z: qz * qn, w: qw * qn });
      }
      if (fixedA) attach(ic, child, anchorBody, c.anchorA, c.anchorB);
      else attach(ic, child, anchorBody, c.anchorB, c.anchorA);
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
      for (let s = 0; s < substeps; s++) world.step();
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
    for (let i = 0; i < n; i++) {
      const b = this.bodies[i];
      b.translation(v as RAPIER.Vector);
      position[3 * i] = v.x; position[3 * i + 1] = v.y; position[3 * i + 2] = v.z;
      b.rotation(q as RAPIER.Rotation);
      orientation[4 * i] = q.x; orientation[4 * i + 1] = q.y; orientation[4 * i + 2] = q.z; orientation[4 * i + 3] = q.w;
      b.linvel(v as RAPIER.Vector);
      linearVelocity[3 * i] = v.x; linearVelocity[3 * i + 1] = v.y; linearVelocity[3 * i + 2] = v.z;
      b.angvel(v as RAPIER.Vector);
      angularVelocity[3 * i] = v.x; angularVelocity[3 * i + 1] = v.y; angularVelocity[3 * i + 2] = v.z;
    }
    return { frame: this.frame, time: this.frame * this.options.dt, bodyCount: n, position, orientation, linearVelocity, angularVelocity };
  }

  timings(): StepTimings {
    return { clock: 'wall', msPerFrame: this.msPerFrame.slice(), wallMsPerFrame: this.msPerFrame.slice() };
  }

  resetTimings(): void {
    this.msPerFrame = [];
  }

  /**
   * rapier: 3 rows per joint × iterations × substeps — the biased sweeps, one per Rapier solver
   * iteration (numInternalPgsIterations = 1), each a 1-D solve of one locked linear axis, the same
   * unit as jacobi-cpu's row. Rapier also runs one unbiased stabilisation sweep per solver iteration
   * (not counted: it has no jacobi-cpu counterpart), so it updates about twice these rows.
   * rapier-multibody: 0 — its joints are coordinates of the articulation, not rows to iterate.
   */
  cost(): SolverCost {
    if (this.kind === 'multibody') return { rowSolvesPerFrame: 0 };
    const { iterations, substeps } = this.options;
    return { rowSolvesPerFrame: 3 * this.constraintCount * iterations * substeps };
  }

  destroy(): void {
    this.world?.free();
    this.world = null;
    this.bodies.length = 0;
  }

  private live(): RAPIER.World {
    if (!this.world) throw new Error(`${this.id}: used after destroy()`);
    return this.world;
  }
}
