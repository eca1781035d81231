/**
 * softstep-cpu — Box2D v3's "soft step" solver (Catto, "Solver2D" and the Box2D v3 release notes:
 * substepping with soft constraints and relaxation), in 3-D, f64. Our code and words; the stage names
 * are Box2D's (solver.h b2SolverStageType). The solver is its stage list over the shared modules:
 * the rigid-body core (rigid/body.ts), the joint rows (rows/block-solver.ts), collision with its
 * persistent manifolds (collision/pipeline.ts, manifolds.ts) and the contact solver
 * (contacts/contact-solver.ts). It is not a subclass of another solver.
 *
 * One frame of dt, n = --substeps (default 4) substeps of h = dt / n:
 *   collide               the contact points at the frame's start, each on its pair's manifold
 *                         (with sleeping: the islands' update, cpu-base.ts updateSleep)
 *   prepare joints        once per frame: J, C, the effective masses and the joint spring (--joint-hertz
 *                         60 Hz, at most half the substep rate, --joint-damping 2; rows/softness.ts S3)
 *   prepare contacts      once per frame: lever arms, A_nn, A_tt, base separation, the contact spring
 *                         (--contact-hertz 30 Hz, at most a quarter of the substep rate; twice that
 *                         against a fixed body; --contact-damping ζ = 10; push-out at most 3 m/s; no
 *                         slop), λ from the manifolds (contacts/contact-solver.ts prepare)
 *   n × ( integrate velocities   v ← v + h g (and the gyroscopic term)               (rigid/body.ts)
 *         restitution            collisions of points approaching faster than --restitution-threshold
 *                                whose gap closes within the substep, propagated pair by pair
 *                                (Guendelman et al. 2003; Box2D instead bounces after the last relax)
 *         warm start             apply h M⁻¹ Jᵀ λ of the accumulated λ (joints, then contacts)
 *         solve                  a sequential sweep with the soft bias (useBias): joints, then contacts,
 *                                each contact's separation moved by the bodies' motion (K1)
 *         integrate positions    x ← x + h v, q ← q ⊕ h ω
 *         relax                  a sequential sweep, rigid and without bias (but a speculative contact's
 *                                s/h), at the new pose: removes the velocity the soft bias added, so
 *                                push-out does not become bounce; restitution runs once more just before
 *                                it, else the relax would stop inelastically a point that closes within
 *                                the next substep) )
 *   store impulses        λ back onto the manifolds, for the next frame's warm start
 * --iterations is the number of solve sweeps per substep (Box2D: 1) and of relax sweeps; with more
 * than one, every other solve sweep walks backwards (symmetric Gauss-Seidel); relax always forwards
 * (measured on a 10-box stack, a backward relax made it sway).
 */
import type { WorldDesc } from '../../model/world.js';
import type { ResidualCurve, Solver, SolverCost, SolverOptions } from '../solver.js';
import { CpuSolverBase } from '../cpu-base.js';
import { RigidBodyCore } from '../../rigid/body.js';
import { RowBlockSolver, type ContactRule } from '../../rows/block-solver.js';
import { jointKindNames } from '../../rows/joint-data.js';
import { ContactSolver, CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL, RESIDUAL_QUANTITY, type ContactResidual } from '../../contacts/contact-solver.js';
import { StageClock, type StagedSolver, type StageTimes } from '../stages.js';
import { softContactRule, softJointSpring } from '../si-soft/cpu.js';
import type { ContactList } from '../../rows/contact.js';


/**
 * The soft step's contact rule: si-soft-cpu's spring, with Box2D v3's two choices: no slop (the soft
 * spring leaves its own small, bounded overlap: under a load λ, s = −λ / (m_eff ω²), rows/softness.ts
 * S3 at rest) and, against a fixed body, twice the frequency (its "static softness").
 */
export function softStepContactRule(options: SolverOptions, h: number): ContactRule {
  const rule = softContactRule(options, h);
  const spring = rule.softness as { kind: 'frequency'; hertz: number; dampingRatio: number };
  return { ...rule, slop: 0, staticSoftness: { ...spring, hertz: 2 * spring.hertz } };
}

export const SOFT_STEP_STAGES = ['collide', 'prepare joints', 'prepare contacts', 'integrate velocities', 'restitution', 'warm start', 'solve', 'integrate positions', 'relax', 'store impulses'] as const;

export class SoftStepCpuSolver extends CpuSolverBase implements Solver, StagedSolver {
  readonly id: string = 'softstep-cpu';
  readonly stageNames: readonly string[] = SOFT_STEP_STAGES;
  readonly rigid: RigidBodyCore;
  /** the joints' rows (contacts are not rows here: `contactSolver`) */
  readonly rowSolver: RowBlockSolver;
  readonly contactSolver = new ContactSolver();
  readonly angMassInv: Float64Array;
  /** the joint sweep's ΔV (folded into V after each joint sweep, so the contacts see it) */
  private readonly linVelDelta: Float64Array;
  private readonly angVelDelta: Float64Array;
  private readonly clock = new StageClock();
  private readonly gravityStep = new Float64Array(3);

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}) {
    super(world, options);
    const nb = this.w.bodyCount;
    this.linVelDelta = new Float64Array(3 * nb);
    this.angVelDelta = new Float64Array(3 * nb);
    this.angMassInv = new Float64Array(9 * nb);
    this.rigid = new RigidBodyCore(this.w, this.w);
    this.rowSolver = new RowBlockSolver(this.joints, nb, this.w.inverseMass, this.options.compliance);
    this.rowSolver.rows.pointJacobian = true; // soft joints are solved through J (γ ≠ 0 on their rows)
    if (this.sleeping) this.rigid.asleep = this.sleeping.asleep;
  }

  protected override solvesContacts(): boolean {
    return true;
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
    this.softStep(channels);
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  stageTimes(): StageTimes {
    return this.clock.totals();
  }

  override resetTimings(): void {
    super.resetTimings();
    this.clock.reset();
  }

  cost(): SolverCost {
    const { substeps, iterations } = this.options;
    return { rowSolvesPerFrame: (this.rowSolver.rows.count + 3 * this.contactSolver.count) * iterations * substeps };
  }

  private softStep(residual: Record<string, number[]> | null): void {
    const { dt, substeps, iterations, warmStart } = this.options;
    const h = dt / substeps;
    const clock = this.clock;
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
    if (rs.stale) {
      this.rigid.markJointed(this.joints.ib0, this.joints.ib1, this.joints.constraintCount);
      rs.layout();
    }
    const joints = rs.rows.blockCount > 0;
    const rule = softStepContactRule(this.options, h);
    const jointSpring = softJointSpring(this.options, h);
    this.rigid.computeInertia(I);
    if (joints) {
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
      // solve (soft, biased)
      const record = residual !== null && s === 0;
      for (let k = 0; k < iterations; k++) {
        if (record) this.recordResidual(h, residual);
        this.sweep(h, false, (k & 1) === 1);
      }
      if (record) this.recordResidual(h, residual);
      lap('solve');
      // integrate positions
      this.rigid.computePositions(h, this.linVelDelta, this.angVelDelta); // (ΔV is 0: folded)
      lap('integrate positions');
      // relax (rigid, unbiased) at the new pose
      this.rigid.computeInertia(I);
      if (joints) {
        rs.evaluate(w);
        rs.updateBias(h, rule);
      }
      if (contacts) {
        cs.updatePose(w.position, w.orientation);
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
