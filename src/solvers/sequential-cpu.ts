/**
 * The sequential-impulse step shared by the CPU velocity contact solvers (softstep-cpu, pgs-cpu,
 * si-soft-cpu): a stage list over the shared modules (rigid/body.ts the rigid-body core,
 * rows/block-solver.ts the joints' rows, collision/ with its persistent manifolds,
 * contacts/contact-solver.ts the contacts). A solver is this list with its variant: which contact rule
 * (Baumgarte with slop, or a soft spring), which joint softness, and whether it relaxes (Box2D v3's soft
 * step) or not (plain PGS / soft sequential impulses). Stage names are Box2D's (solver.h b2SolverStageType).
 *
 * One frame of dt, n = substeps of h = dt / n:
 *   collide               the contact points at the frame's start, each on its pair's manifold
 *                         (with sleeping: the islands' update, cpu-base.ts updateSleep)
 *   prepare joints        J, C, effective masses and softness of the joints' rows (at the frame's start,
 *                         and again at each substep's new pose: before its relax when relaxing, else
 *                         before its solve)
 *   prepare contacts      once per frame: lever arms, A_nn, A_tt, base separation, softness, λ from the
 *                         manifolds (contacts/contact-solver.ts prepare)
 *   n × ( integrate velocities   v ← v + h g (and the gyroscopic term)                  (rigid/body.ts)
 *         restitution            collisions of points approaching faster than --restitution-threshold
 *                                whose gap closes within the substep, propagated pair by pair
 *                                (Guendelman et al. 2003; Box2D instead bounces after the last relax)
 *         warm start             apply h M⁻¹ Jᵀ λ of the accumulated λ (joints, then contacts)
 *         solve                  --iterations sequential sweeps with the bias: joints, then contacts,
 *                                each contact's separation moved by the bodies' motion (K1)
 *         (split impulse: pgs-cpu, gs-cpu) the joints' Baumgarte feedback as a position pass of its own on
 *                                pseudo-velocities P, timed with the solve (rows/block-solver.ts solvePositions)
 *         integrate positions    x ← x + h v, q ← q ⊕ h ω  (with a split impulse: by v + P, ω + P_ω)
 *         relax (soft step only) --iterations sweeps, rigid and without bias (but a speculative
 *                                contact's s/h), at the new pose: removes the velocity the soft bias
 *                                added, so push-out does not become bounce; restitution runs once more
 *                                just before it, else the relax would stop inelastically a point that
 *                                closes within the next substep) )
 *   store impulses        λ back onto the manifolds, for the next frame's warm start
 * Sweeps alternate direction (symmetric Gauss-Seidel: no preferred sense of rotation). The joints' sweep
 * writes ΔV, folded into V before the contacts' sweep, so each sees the other at once.
 */
import type { WorldDesc } from '../model/world.js';
import type { ResidualCurve, Solver, SolverCost, SolverOptions } from './solver.js';
import { CpuSolverBase } from './cpu-base.js';
import { RigidBodyCore } from '../rigid/body.js';
import { RowBlockSolver, type ContactRule } from '../rows/block-solver.js';
import type { SoftnessSpec } from '../rows/softness.js';
import { jointKindNames } from '../model/joint-data.js';
import { ContactSolver, CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL, RESIDUAL_QUANTITY, type ContactResidual } from '../contacts/contact-solver.js';
import type { StagedSolver } from './stages.js';
import type { ContactList } from '../rows/contact.js';

/** What makes a sequential solver the one it is (header). */
export interface SequentialVariant {
  /** Box2D's relax pass after each substep's position update (the soft step) */
  relax: boolean;
  /** how contacts are biased and softened at (sub)step h */
  contactRule(options: SolverOptions, h: number): ContactRule;
  /** the joints' spring at (sub)step h, or null: rigid joints with Baumgarte β */
  jointSpring: ((options: SolverOptions, h: number) => SoftnessSpec) | null;
  /** 'substep': the k-th sweep of a substep goes backwards when k is odd; 'run': every other sweep of the run */
  sweepParity: 'substep' | 'run';
  /**
   * Rigid joints (jointSpring null, no relax) by split impulses (rows/block-solver.ts solvePositions):
   * the velocity solve unbiased and warm-started, the Baumgarte feedback a position pass of its own
   */
  splitImpulse?: boolean;
}

const RELAX_STAGES = ['collide', 'prepare joints', 'prepare contacts', 'integrate velocities', 'restitution', 'warm start', 'solve', 'integrate positions', 'relax', 'store impulses'] as const;
const PLAIN_STAGES = ['collide', 'prepare joints', 'prepare contacts', 'integrate velocities', 'restitution', 'warm start', 'solve', 'integrate positions', 'store impulses'] as const;

export abstract class SequentialCpuSolver extends CpuSolverBase implements Solver, StagedSolver {
  abstract override readonly id: string;
  private readonly stageList: readonly string[];
  override get stageNames(): readonly string[] {
    return this.stageList;
  }
  readonly variant: SequentialVariant;
  readonly rigid: RigidBodyCore;
  /** the joints' rows (contacts are not rows here: `contactSolver`) */
  readonly rowSolver: RowBlockSolver;
  readonly contactSolver = new ContactSolver();
  readonly angMassInv: Float64Array;
  /** the joint sweep's ΔV (folded into V after each joint sweep, so the contacts see it) */
  private readonly linVelDelta: Float64Array;
  private readonly angVelDelta: Float64Array;
  private readonly gravityStep = new Float64Array(3);
  /** the position pass's pseudo-velocities (split impulse), 3 per body */
  private readonly pseudoLin: Float64Array;
  private readonly pseudoAng: Float64Array;

  constructor(world: WorldDesc, options: Partial<SolverOptions>, variant: SequentialVariant) {
    super(world, options);
    this.variant = variant;
    this.stageList = variant.relax ? RELAX_STAGES : PLAIN_STAGES;
    const nb = this.w.bodyCount;
    this.linVelDelta = new Float64Array(3 * nb);
    this.angVelDelta = new Float64Array(3 * nb);
    this.angMassInv = new Float64Array(9 * nb);
    this.rigid = new RigidBodyCore(this.w, this.w);
    this.rowSolver = new RowBlockSolver(this.joints, nb, this.w.inverseMass, this.options.compliance);
    this.rowSolver.rows.pointJacobian = variant.jointSpring !== null; // soft joints are solved through J (γ ≠ 0 on their rows)
    this.rowSolver.splitPositionBias = variant.splitImpulse === true && variant.jointSpring === null && !variant.relax;
    const split = this.rowSolver.splitPositionBias;
    this.pseudoLin = new Float64Array(split ? 3 * nb : 0);
    this.pseudoAng = new Float64Array(split ? 3 * nb : 0);
    if (this.sleeping) this.rigid.asleep = this.sleeping.asleep;
    if (this.collision) {
      this.collision.coherence = true; // the manifolds' points carried while a pair barely moves (collision/manifolds.ts refresh)
      this.collision.rowFields = false; // the contact solver reads the manifolds, not contact rows' fields
    }
  }

  protected override solvesContacts(): boolean {
    return true;
  }

  /** The joints changed: lay their rows out again (in the joints' order; gs-cpu: colour by colour). */
  protected relayoutJoints(): void {
    this.rigid.markJointed(this.joints.ib0, this.joints.ib1, this.joints.constraintCount);
    this.rowSolver.layout();
  }

  /** λ of every joint row */
  get multiplier(): Float64Array {
    return this.rowSolver.rows.lambda.subarray(0, this.rowSolver.rows.count);
  }

  stepFrame(): void {
    this.softStep(null);
  }

  /**
   * One frame, recording the residual of the first substep's solve sweeps (before each and after the
   * last; channels per joint kind and 'contact normal', 'friction'), by passes that change nothing:
   * the frame steps to the same bits as stepFrame.
   */
  async stepRecordingResiduals(): Promise<ResidualCurve> {
    const channels: Record<string, number[]> = {};
    this.stageClock.paused = true; // a recording frame is not counted in timings(), nor in the stages
    try {
      this.softStep(channels);
    } finally {
      this.stageClock.paused = false;
    }
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  cost(): SolverCost {
    const { substeps, iterations } = this.options;
    return { rowSolvesPerFrame: (this.rowSolver.rows.count + 3 * this.contactSolver.count) * iterations * substeps };
  }

  private softStep(residual: Record<string, number[]> | null): void {
    const { dt, substeps, iterations, warmStart } = this.options;
    const h = dt / substeps;
    const clock = this.stageClock;
    const variant = this.variant;
    const w = this.w, v = w.linearVelocity, om = w.angularVelocity, I = this.angMassInv;
    const rs = this.rowSolver, cs = this.contactSolver;
    let t = performance.now();
    const lap = (name: string) => {
      const now = performance.now();
      clock.add(name, now - t);
      t = now;
    };
    // collide
    const list: ContactList | null = this.collision ? this.updateSleep(dt, this.detectContacts(dt)) : null;
    lap('collide');
    // prepare joints
    if (rs.stale) this.relayoutJoints();
    const joints = rs.rows.blockCount > 0;
    const rule = variant.contactRule(this.options, h);
    if (rule.sizeSpring) rule.sizeSpring.gravity = Math.hypot(w.gravity[0], w.gravity[1], w.gravity[2]);
    const jointSpring = variant.jointSpring ? variant.jointSpring(this.options, h) : null;
    this.rigid.computeInertia(I);
    if (joints && variant.relax) {
      rs.evaluate(w);
      rs.prepare(h, this.options.beta, I, rule, jointSpring, true);
      if (warmStart !== 1) for (let r = 0; r < rs.rows.count; r++) rs.rows.lambda[r] *= warmStart;
    }
    lap('prepare joints');
    // prepare contacts
    const store = this.collision ? this.collision.manifolds : null;
    if (list && list.count > 0) cs.prepare(list, store, w.position, w.orientation, w.inverseMass, I, h, rule, warmStart);
    else cs.count = 0;
    const contacts = cs.count > 0;
    lap('prepare contacts');
    const g = w.gravity;
    for (let s = 0; s < substeps; s++) {
      if (joints && !variant.relax) {
        // prepare joints at this substep's pose (the plain loop re-evaluates and re-prepares them per step)
        if (s > 0) this.rigid.computeInertia(I);
        rs.evaluate(w);
        rs.prepare(h, this.options.beta, I, rule, jointSpring);
        if (warmStart !== 1) for (let r = 0; r < rs.rows.count; r++) rs.rows.lambda[r] *= warmStart;
        lap('prepare joints');
      }
      // integrate velocities
      this.rigid.computeFreeVelocity(h, g, this.options.linearDamping, this.options.angularDamping);
      if (joints) {
        this.linVelDelta.fill(0);
        this.angVelDelta.fill(0);
      }
      lap('integrate velocities');
      // restitution: the substep's collisions, before the solve (V has this substep's h g)
      if (contacts) {
        this.gravityStep[0] = h * g[0];
        this.gravityStep[1] = h * g[1];
        this.gravityStep[2] = h * g[2];
        cs.restitution(v, om, h, rule.restitutionThreshold, this.gravityStep);
      }
      lap('restitution');
      // warm start
      if (warmStart > 0) {
        if (joints) {
          rs.gather(h, I, this.linVelDelta, this.angVelDelta);
          this.foldVelocities();
        }
        if (contacts) cs.warmStart(v, om, h);
      }
      lap('warm start');
      // solve (biased)
      const record = residual !== null && s === 0;
      for (let k = 0; k < iterations; k++) {
        if (record) this.recordResidual(h, residual);
        // symmetric Gauss-Seidel: every other sweep backwards (within the substep, or counted over the run)
        const reverse = variant.sweepParity === 'substep' ? (k & 1) === 1 : (this.sweeps++ & 1) === 1;
        this.sweep(h, false, reverse);
      }
      if (record) this.recordResidual(h, residual);
      // split impulse: the joints' Baumgarte feedback as a position pass of its own (rows/block-solver.ts
      // solvePositions), timed with the solve
      const split = joints && rs.splitPositionBias;
      if (split) rs.solvePositions(h, I, RowBlockSolver.positionSweeps(iterations), this.pseudoLin, this.pseudoAng);
      lap('solve');
      // integrate positions
      if (split) this.rigid.computePositionsSplit(h, this.linVelDelta, this.angVelDelta, this.pseudoLin, this.pseudoAng);
      else this.rigid.computePositions(h, this.linVelDelta, this.angVelDelta); // (ΔV is 0: folded)
      if (contacts) cs.updatePose(w.position, w.orientation);
      lap('integrate positions');
      if (!variant.relax) continue;
      // relax (rigid, unbiased) at the new pose
      this.rigid.computeInertia(I);
      if (joints) {
        rs.evaluate(w);
        // J, C and the blocks' effective masses at the new pose (Box2D v3 forms a joint's K from its
        // rotated anchors at every solve): with the frame's masses kept and only J and the bias moved, a
        // fast-turning chain's rows met masses of another pose, and the 20-chain necklace gained energy
        // until it diverged at frame 191; so prepared, it keeps its joints to 3 cm (si-soft-cpu: 6 cm)
        rs.prepare(h, this.options.beta, I, rule, jointSpring, true);
      }
      if (contacts) {
        // restitution again at the new pose, on the velocities the next substep starts from (no forces yet)
        const t0 = performance.now();
        cs.restitution(v, om, h, rule.restitutionThreshold, null);
        clock.add('restitution', performance.now() - t0);
      }
      for (let k = 0; k < iterations; k++) this.sweep(h, true, false);
      lap('relax');
    }
    // store impulses
    if (contacts && store) cs.storeImpulses(store);
    lap('store impulses');
    this.frame++;
  }
  /** sweeps made (the plain loop alternates direction over the run) */
  private sweeps = 0;

  /** One sequential sweep: the joints' blocks (their ΔV folded into V), then the contacts (solve, or relax). */
  private sweep(h: number, relax: boolean, reverse: boolean): void {
    const rs = this.rowSolver;
    if (rs.rows.blockCount > 0) {
      rs.solveBlocks(h, this.w.linearVelocity, this.w.angularVelocity, this.linVelDelta, this.angVelDelta, this.angMassInv, true, 0, rs.rows.blockCount, true, null, relax, reverse);
      this.foldVelocities();
    }
    if (this.contactSolver.count > 0) this.contactSolver.solve(this.w.linearVelocity, this.w.angularVelocity, h, !relax, reverse);
  }

  /** ‖b − Aλ‖₂ now per joint kind and of the contacts' normal and friction rows, by passes that change nothing. */
  private recordResidual(h: number, channels: Record<string, number[]>): void {
    const rs = this.rowSolver, rows = rs.rows;
    if (rows.count > 0) {
      if (this.residualScratch.length < rows.count) this.residualScratch = new Float64Array(rows.capacity);
      const perRow = this.residualScratch;
      rs.solveBlocks(h, this.w.linearVelocity, this.w.angularVelocity, this.linVelDelta, this.angVelDelta, this.angMassInv, false, 0, rows.blockCount, false, perRow);
      const sums = new Map<string, number>();
      for (let r = 0; r < rows.count; r++) {
        const kind = jointKindNames[this.joints.kind[rows.owner[r]]];
        sums.set(kind, (sums.get(kind) ?? 0) + perRow[r]);
      }
      for (const [kind, sum] of sums) (channels[kind] ??= []).push(Math.sqrt(sum) / h);
    }
    if (this.contactSolver.count > 0) {
      const r: ContactResidual = { normal: 0, friction: 0 };
      this.contactSolver.solve(this.w.linearVelocity, this.w.angularVelocity, h, true, false, r);
      (channels[CONTACT_NORMAL_CHANNEL] ??= []).push(Math.sqrt(r.normal) / h);
      (channels[FRICTION_CHANNEL] ??= []).push(Math.sqrt(r.friction) / h);
    }
  }
  private residualScratch = new Float64Array(0);

  /** V ← V + ΔV, ΔV ← 0 (the joint sweep's change) for every body that moves (not fixed, not asleep). */
  private foldVelocities(): void {
    const v = this.w.linearVelocity, w = this.w.angularVelocity, dv = this.linVelDelta, dw = this.angVelDelta;
    const inv = this.w.inverseMass, asleep = this.rigid.asleep;
    for (let i = 0; i < inv.length; i++) {
      if (inv[i] === 0 || (asleep !== null && asleep[i])) continue;
      for (let k = 3 * i; k < 3 * i + 3; k++) {
        v[k] += dv[k];
        w[k] += dw[k];
        dv[k] = 0;
        dw[k] = 0;
      }
    }
  }
}
