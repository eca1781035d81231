/**
 * softstep-cpu — Box2D v3's "soft step" solver (Catto, "Solver2D" and the Box2D v3 release notes:
 * substepping with soft constraints and relaxation), in 3-D on SolverLab's rows, joints and contacts
 * in one solve, f64. Our code and words; the stage names are Box2D's.
 *
 * One frame of dt, n = --substeps (default 4) substeps of h = dt / n:
 *   collide             the contact points at the frame's start (collision/pipeline.ts)
 *   prepare contacts, prepare joints
 *                       once per frame: J, C, the effective masses (A_bb)⁻¹ and each row's
 *                       softness at the frame's start pose: contacts from --contact-hertz (30 Hz,
 *                       at most a quarter of the substep rate; twice that against a fixed body),
 *                       --contact-damping (ζ = 10), push-out at most 3 m/s, no slop; joints from --joint-hertz (60 Hz, at most half the
 *                       substep rate), --joint-damping (2) (rows/softness.ts S3; Box2D's defaults)
 *   n × ( integrate velocities   v ← v + h g (and the gyroscopic term)          (rigid/body.ts)
 *         restitution            collisions of points approaching faster than --restitution-threshold (0.1 m/s; Box2D: 1)
 *                                whose gap closes within the substep, propagated pair by pair
 *                                (Guendelman et al. 2003; rows/block-solver.ts applyRestitution; Box2D
 *                                instead bounces after the last relax)
 *         warm start             apply h M⁻¹ Jᵀ λ of the accumulated λ
 *         solve                  one sequential sweep with the soft bias (useBias): each row's C is
 *                                taken at the substep's pose (the rows re-evaluated; masses and
 *                                softness stay the frame's, rows/block-solver.ts updateBias)
 *         integrate positions    x ← x + h v, q ← q ⊕ h ω
 *         relax                  one sequential sweep, rigid and without bias (but a speculative
 *                                contact's C/h): removes the velocity the soft bias added, so the
 *                                push-out does not become bounce; restitution runs once more just
 *                                before it, at the new pose, else the relax would stop inelastically a
 *                                point that closes within the next substep) )
 *       (with --iterations > 1, every other sweep of solve and of relax walks the rows backwards:
 *        symmetric Gauss-Seidel, block-solver.ts solveBlocks; one sweep each, as Box2D, goes forwards
 *        in both: measured on a 10-box stack, a backward relax made it sway)
 *   store impulses      λ stays with each row's key for the next frame's warm start
 * --iterations is the number of solve sweeps per substep (Box2D: 1) and also of relax sweeps.
 *
 * One difference from Box2D: Box2D keeps each contact's Jacobian from the prepare stage and only moves
 * the separation with the bodies; here the rows' J and C are re-evaluated at each substep's pose (the
 * constraint types' evaluate) while the effective masses and softness stay the prepared ones.
 */
import type { WorldDesc } from '../../model/world.js';
import type { ResidualCurve, SolverOptions } from '../solver.js';
import { JacobiCpuSolver, RESIDUAL_QUANTITY } from '../jacobi/cpu.js';
import { softContactRule, softJointSpring } from '../si-soft/cpu.js';
import type { ContactRule } from '../../rows/block-solver.js';

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

export class SoftStepCpuSolver extends JacobiCpuSolver {
  override readonly id: string = 'softstep-cpu';

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}) {
    super(world, options);
  }

  protected override needsPointJacobian(): boolean {
    return true;
  }

  protected override contactRule(): ContactRule {
    return softStepContactRule(this.options, this.options.dt / this.options.substeps);
  }

  override stepFrame(): void {
    this.softStep(null);
  }

  /**
   * One frame, recording the residual of the first substep's solve sweeps (before each and after the
   * last; channels per joint kind and 'contact normal', 'friction'), by passes that change nothing:
   * the frame steps to the same bits as stepFrame.
   */
  override async stepRecordingResiduals(): Promise<ResidualCurve> {
    const channels: Record<string, number[]> = {};
    this.softStep(channels);
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  private softStep(residual: Record<string, number[]> | null): void {
    const { dt, substeps, iterations, warmStart } = this.options;
    const h = dt / substeps;
    const rs = this.rowSolver;
    if (rs.stale) this.relayout();
    // collide
    if (this.collision) rs.setContacts(this.collide(dt)); // (with sleeping: the islands' update, jacobi/cpu.ts collide)
    const rule = softStepContactRule(this.options, h);
    // prepare contacts, prepare joints (once per frame)
    this.computeInertia();
    rs.evaluate(this.w);
    rs.prepare(h, this.options.beta, this.angMassInv, rule, softJointSpring(this.options, h), true);
    this.warmStart(warmStart);
    const blocks = rs.rows.blockCount;
    for (let s = 0; s < substeps; s++) {
      // (C and the bias at this substep's pose: the previous relax evaluated them)
      // integrate velocities (ΔV cleared)
      this.computeFreeVelocity(h);
      // restitution: the substep's collisions, propagated pair by pair before the solve (block-solver.ts
      // applyRestitution; the rows' C and J are this substep's pose)
      if (rs.contacts) this.applyRestitution(h, rule);
      // warm start
      if (warmStart > 0) this.updateVelocities(h);
      // solve (soft, biased)
      const record = residual !== null && s === 0;
      for (let k = 0; k < iterations; k++) {
        if (record) this.recordResidual(h, residual);
        this.updateMultipliers(h, true, 0, blocks, true, null, (k & 1) === 1);
      }
      if (record) this.recordResidual(h, residual);
      // integrate positions (V ← V + ΔV, then x, q)
      this.computePositions(h);
      // relax (rigid, unbiased) at the new pose, from ΔV = 0
      this.linVelDelta.fill(0);
      this.angVelDelta.fill(0);
      this.computeInertia();
      rs.evaluate(this.w);
      rs.updateBias(h, rule);
      // restitution again at the new pose, before the relax (a rigid contact solve, which would stop a
      // point that closes within the next substep inelastically), on the velocities the next substep
      // starts from (no forces in them yet)
      if (rs.contacts) this.applyRestitution(h, rule, false);
      for (let k = 0; k < iterations; k++) rs.solveBlocks(h, this.w.linearVelocity, this.w.angularVelocity, this.linVelDelta, this.angVelDelta, this.angMassInv, true, 0, blocks, true, null, true, (k & 1) === 1);
      this.foldVelocities();
    }
    this.frame++;
  }

  /** V ← V + ΔV, ΔV ← 0 (the relax pass's change, kept) for every body that moves (not fixed, not asleep). */
  private foldVelocities(): void {
    const v = this.w.linearVelocity, w = this.w.angularVelocity, dv = this.linVelDelta, dw = this.angVelDelta;
    const inv = this.w.inverseMass, asleep = this.rigid.asleep;
    for (let i = 0; i < inv.length; i++) {
      if (inv[i] === 0 || (asleep !== null && asleep[i])) continue; // fixed or asleep: v stays
      for (let k = 3 * i; k < 3 * i + 3; k++) {
        v[k] += dv[k];
        w[k] += dw[k];
        dv[k] = 0;
        dw[k] = 0;
      }
    }
  }
}
