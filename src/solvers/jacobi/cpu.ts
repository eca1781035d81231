/**
 * jacobi-cpu — the f64 reference of the GPU Jacobi solver of the reference text
 * (shared/seeds/gpu-jacobi-point-constraints.txt), on constraint rows (src/rows/): every joint
 * type (point, distance, hinge, fixed) is rows, and a joint's equality rows are one block, so a
 * point joint is the text's 3×3 block. Same stages, same names as jacobi-gpu's WGSL kernels
 * (kernels.wgsl.ts and rows/rows.wgsl.ts, the same rows in f32), so one can be read against the other.
 *
 * One solver step of h = dt / substeps:
 *   1. compute_inertia          I⁻¹ = R I_local⁻¹ Rᵀ                         (per body)
 *   2. compute_free_velocity    V* = V + h M⁻¹ F + gyroscopic term, clear ΔV (per body)
 *   3. compute_violation_and_jacobian_and_delassus
 *                               C, J of every row (the constraint types), the bias rate and γ of
 *                               each row (rows/softness.ts), A_bb⁻¹ = (J_b M⁻¹ J_bᵀ + γ)⁻¹ per block
 *      warm start               λ⁰ = f · λ(previous step), row by row (λ follows the row's key)
 *      apply warm start         ΔV = h M⁻¹ Jᵀ λ⁰ (update_velocities once)
 *   4. N × ( update_multipliers λ_b ← clamp(λ_b − h⁻¹ A_bb⁻¹ (J_b V^k + β C_b))   (37) (per block)
 *            update_velocities  ΔV_i = h M_i⁻¹ Σ_r∋i J_r,iᵀ λ_r                  (34) (per body) )
 *   5. compute_positions        V = V* + ΔV; x += h v; q += ½ h (0, ω) ⊗ q; normalise
 * Stages 1, 2 and 5 are the rigid-body core's (src/rigid/body.ts, shared by every rigid
 * solver): the gyroscopic term by the implicit midpoint rule, and q turned by the midpoint
 * ω for a body that is not isotropic (spheres: exactly the stages above). Stages 3 and 4 are
 * the rows' (rows/block-solver.ts): the signs are the rows' (impulse +h Jᵀλ, C = p_B − p_A for
 * a point joint), which for a point joint are both the negatives of the text's, so λ is the
 * text's λ row for row; bounded rows (a rope, a hinge limit) are clamped after each update.
 *
 * Invariants: update_multipliers reads only V*, ΔV and per-row data and writes only λ of
 * its own block; update_velocities reads λ and writes only ΔV of its own body (a gather
 * through the body → row CSR), so each pass is order-independent — a true Jacobi sweep, the
 * same on the GPU.
 *
 * Contacts (a world with collisions) are not rows here: the contact solver's Jacobi variant
 * (contacts/jacobi-contact-solver.ts) prepares them once per frame from the persistent manifolds, and
 * each sweep updates every manifold from the same V^k on its mass-split copies of its bodies (Tonge et
 * al. 2012), beside the joints' blocks; update_velocities then adds the contacts' gather (a body sums
 * its manifolds' impulses over a body → manifold CSR) to the joints' (34). Its restitution runs where
 * the rows' did (before the warm start), its λ go back to the manifolds at the frame's end, and its
 * separations follow the bodies through the substeps (K1). Stages as solvers/stages.ts names them:
 * collide · prepare contacts · integrate velocities (1, 2) · prepare joints (3) · restitution ·
 * warm start · solve (4) · integrate positions (5) · store impulses. A world without collisions steps
 * exactly as before (the same arithmetic in the same order). On a contact scene the joints' Baumgarte term
 * is a split impulse (splitsImpulses): the velocity sweeps unbiased, then, timed with the solve, the position
 * pass of ⌈N/2⌉ Jacobi sweeps on pseudo-velocities P (rows/block-solver.ts solvePositions, order 'jacobi'),
 * and stage 5 moves the pose by V + P (computePositionsSplit); jacobi-gpu's WGSL has the same stage
 * (solve_positions_point, solve_positions, update_pseudo_velocities, compute_positions_split). There too the
 * joints' blocks are mass-split as the contacts are (rows/block-solver.ts massShare: stage 3 inverts
 * J_b S M⁻¹ J_bᵀ, S = diag((n_i + 1)/2), n_i the contact solver's count of body i's manifolds and joints), so two
 * joints on one body no longer both correct a shared mode in full (jacobi-gpu: prepare_* read s_i from inverse_mass);
 * the velocity solve only: the position pass inverts blocks of its own, unsplit on a body in one or two joints and
 * split by k_i/2 on one in k_i ≥ 3, in an odd number of sweeps (block-solver.ts positionShare, ownPositionSweeps,
 * where the two bounds are derived; jacobi-gpu: a second inverse per block, row_position_inverse).
 *
 * The reference text starts the iterations from V⁰ = V* even when λ⁰ ≠ 0; its
 * first multiplier update then adds the whole correction on top of λ⁰. Option
 * `applyWarmStart` (default true) makes V⁰ consistent with λ⁰ as in (5); false
 * reproduces the text as written. No external torques; the gyroscopic torque
 * −ω × Iω is the core's (zero for spheres, whose inertia is isotropic).
 */
import type { WorldDesc } from '../../model/world.js';
import { CpuSolverBase } from '../cpu-base.js';
import { RigidBodyCore } from '../../rigid/body.js';
import { RowBlockSolver, baumgarteContacts, type ContactRule } from '../../rows/block-solver.js';
import { CONTACT_FRICTION, CONTACT_NORMAL } from '../../rows/rows.js';
import type { ContactList } from '../../rows/contact.js';

import { CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL, RESIDUAL_QUANTITY, type ContactResidual } from '../../contacts/contact-solver.js';
import { JacobiContactSolver } from '../../contacts/jacobi-contact-solver.js';
export { CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL, RESIDUAL_QUANTITY };
import { jointKindNames } from '../../model/joint-data.js';
import type { Solver, SolverOptions, SolverCost, ResidualCurve } from '../solver.js';
import { DelassusOperator, relativeError, type DelassusSource } from '../global/delassus.js';
import { LAMBDA_ERROR_CHANNEL, REFERENCE_TOLERANCE } from '../global/lambda-error.js';


/**
 * The stage list (solvers/stages.ts names; the seed's stages in brackets): collide · prepare contacts
 * (once per frame) · integrate velocities (1, 2) · prepare joints (3) · restitution · warm start ·
 * solve (4) · integrate positions (5) · store impulses.
 */
const JACOBI_STAGES = ['collide', 'prepare contacts', 'integrate velocities', 'prepare joints', 'restitution', 'warm start', 'solve', 'integrate positions', 'store impulses'] as const;

export interface JacobiVariant {
  /** apply the warm-start impulses to the velocities before iterating (default true) */
  applyWarmStart: boolean;
}

export class JacobiCpuSolver extends CpuSolverBase implements Solver {
  readonly id: string = 'jacobi-cpu';
  readonly variant: JacobiVariant;
  // per body
  readonly linVelDelta: Float64Array;
  readonly angVelDelta: Float64Array;
  readonly angMassInv: Float64Array; // world-frame inverse inertia, 9 per body
  /** the body stages 1, 2, 5 (rigid/body.ts) over this.w */
  readonly rigid: RigidBodyCore;
  /** the rows of every joint, their blocks and the projected block update (stages 3, 4) */
  readonly rowSolver: RowBlockSolver;
  /**
   * jacobi-cpu's contacts: the contact solver's Jacobi variant (contacts/jacobi-contact-solver.ts, mass
   * splitting), or null: no collisions, or a subclass that keeps its contacts on the rows (contactsOnRows)
   */
  readonly contactSolver: JacobiContactSolver | null;
  override get stageNames(): readonly string[] {
    return JACOBI_STAGES;
  }

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}, variant: Partial<JacobiVariant> = {}) {
    super(world, options);
    this.variant = { applyWarmStart: true, ...variant };
    const nb = this.w.bodyCount;
    const nc = this.w.constraintCount;
    this.linVelDelta = new Float64Array(3 * nb);
    this.angVelDelta = new Float64Array(3 * nb);
    this.angMassInv = new Float64Array(9 * nb);
    this.rigid = new RigidBodyCore(this.w, this.w); // bodies, and the constraints that make some of them jointed
    this.rowSolver = new RowBlockSolver(this.joints, nb, this.w.inverseMass, this.options.compliance);
    this.rowSolver.rows.pointJacobian = this.needsPointJacobian();
    if (this.sleeping) this.rigid.asleep = this.sleeping.asleep;
    this.contactSolver = this.collision && !this.contactsOnRows() ? new JacobiContactSolver() : null;
    // split impulses for the rigid joints on a contact scene (splitsImpulses): the position pass's pseudo-velocities
    this.rowSolver.splitPositionBias = this.splitsImpulses();
    this.pseudoLin = new Float64Array(this.rowSolver.splitPositionBias ? 3 * nb : 0);
    this.pseudoAng = new Float64Array(this.rowSolver.splitPositionBias ? 3 * nb : 0);
    // mass splitting for the joints where the split is on (one rule: a contact scene; block-solver.ts massShare)
    this.jointShare = this.rowSolver.splitPositionBias && this.contactSolver ? new Float64Array(nb) : null;
    this.jointFactor = this.jointShare ? new Float64Array(nb) : null;
    this.positionFactor = this.jointShare ? new Float64Array(nb) : null;
    this.countJointShare();
    if (this.collision && this.contactSolver) {
      this.collision.coherence = true; // the manifolds' points carried while a pair barely moves (collision/manifolds.ts refresh)
      this.collision.rowFields = false; // the contact solver reads the manifolds, not contact rows' fields
    }
  }

  /**
   * Per body its joints (each joint one constraint, as the contact solver counts them: jacobi-contact-solver.ts
   * prepareJacobi), the n_i of the joints' mass splitting on a frame without contacts; null where the joints
   * are not split (a joint scene: the seed's rows, bit for bit).
   */
  private readonly jointShare: Float64Array | null;
  /** per body s_i = (n_i + 1)/2, the joints' mass-splitting factor this frame (block-solver.ts massShare) */
  private readonly jointFactor: Float64Array | null;
  /**
   * per body the position pass's split (block-solver.ts positionShare), k_i its joints (the pass sweeps the
   * joints alone): s^p_i = max(1, k_i/2), the least with which the pass does not expand; per topology
   */
  private readonly positionFactor: Float64Array | null;
  private countJointShare(): void {
    const share = this.jointShare;
    if (!share) return;
    const nb = share.length, { ib0, ib1, constraintCount } = this.joints;
    share.fill(0);
    for (let j = 0; j < constraintCount; j++) {
      if (ib0[j] >= 0 && ib0[j] < nb) share[ib0[j]]++;
      if (ib1[j] >= 0 && ib1[j] < nb) share[ib1[j]]++;
    }
    const p = this.positionFactor!;
    for (let i = 0; i < nb; i++) p[i] = Math.max(1, 0.5 * share[i]);
  }

  /** the position pass's pseudo-velocities (split impulse), 3 per body */
  private readonly pseudoLin: Float64Array;
  private readonly pseudoAng: Float64Array;

  /**
   * Whether the rigid joints' Baumgarte feedback is a position pass of its own (split impulse,
   * rows/block-solver.ts solvePositions, in the Jacobi order) rather than a bias in the warm-started velocity
   * solve: on a contact scene (the contact solver's Jacobi variant), as jacobi-gpu's WGSL twin does
   * (solve_positions*, update_pseudo_velocities, compute_positions_split: rows/rows.wgsl.ts, kernels.wgsl.ts).
   * With the bias in the warm-started λ an unconverged mode feeds energy in (block-solver.ts header; measured
   * on hinge-chain with collisions: it diverged at frame 125, test/joint-split.test.ts). Joint scenes keep
   * the Jacobi text's biased rows (8), (37): there jacobi-cpu reproduces the text, and its λ-error channel
   * measures the text's biased system against global-cpu.
   */
  protected splitsImpulses(): boolean {
    return this.contactSolver !== null;
  }

  /**
   * Whether contacts are solved as generic contact rows in the row solver (gs-cpu's joint class, made
   * directly on a world with collisions: its registry entry takes gs/contacts.ts on contact scenes)
   * rather than by the contact solver's Jacobi variant (jacobi-cpu).
   */
  protected contactsOnRows(): boolean {
    return false;
  }

  /**
   * collide: the contact points at the frame's start (detectContacts over every body, sleeping ones
   * too, so an awake body touching a sleeper is seen); with sleeping on, the islands' update (a
   * contact or a joint from an awake body wakes a sleeping island; a resting island falls asleep),
   * then only the points with an awake body are kept. The joints' rows stay laid out: a joint
   * between two sleepers joins them in one island, so its bodies sleep together, and its rows act
   * only on them (ΔV of sleepers, which stage 5 does not apply): no effect on the state, but they are
   * still swept and counted in cost().
   */
  protected collide(dt: number): ContactList | null {
    return this.updateSleep(dt, this.detectContacts(dt));
  }

  /**
   * Whether this solver reads the rows' J of rigid point joints (a global solve's assembly does);
   * the Jacobi and Gauss-Seidel sweeps take those blocks from their lever arms alone.
   */
  protected needsPointJacobian(): boolean {
    return false;
  }

  /** jacobi-cpu (and gs-cpu, pgs-cpu, si-soft-cpu, softstep-cpu) solve contact rows too. */
  protected override solvesContacts(): boolean {
    return true;
  }

  /** The joints changed between steps: lay the rows out again (λ follows each row's key). */
  protected relayout(): void {
    this.rigid.markJointed(this.joints.ib0, this.joints.ib1, this.joints.constraintCount);
    this.rowSolver.layout();
    this.countJointShare();
  }

  /** λ of every row (for point joints: 3 per constraint in constraint order, the text's λ_ℓ) */
  get multiplier(): Float64Array {
    return this.rowSolver.rows.lambda.subarray(0, this.rowSolver.rows.count);
  }

  /** One frame: `substeps` solver steps of h = dt / substeps. */
  stepFrame(): void {
    this.stepFrameRecording(null);
  }

  /**
   * One frame, recording into `residual` (when given) ‖r‖₂ after k = 0..N iterations
   * of the first substep, r = b − Aλᵏ, r_ℓ = h⁻¹ (J_ℓ Vᵏ + β C_ℓ)   (30, 33), each by a
   * pass that changes nothing (recording is not timed). With `lambdaError` also
   * ‖λᵏ − λ*‖₂ / ‖λ*‖₂, λ* the converged solution of the same A λ = b (convergedMultipliers).
   */
  protected stepFrameRecording(residual: Record<string, number[]> | null, lambdaError: number[] | null = null): void {
    const { dt, substeps, iterations, warmStart } = this.options;
    const h = dt / substeps;
    const clock = this.stageClock;
    clock.paused = residual !== null; // a recording frame is not counted in timings(), nor in the stages
    let t = performance.now();
    if (this.rowSolver.stale) this.relayout();
    // collide: contacts found once per frame at its start; on the rows (gs-cpu's joint class) they follow
    // the joints' rows (rows/contact.ts), else the contact solver's Jacobi variant takes them
    const list = this.collision ? this.collide(dt) : null;
    if (this.collision && !this.contactSolver) this.rowSolver.setContacts(list);
    const colliding = this.collision !== null; // a scene without collisions has no contact stages
    if (colliding) t = clock.lap('collide', t);
    const rule = this.contactRule();
    // prepare contacts (once per frame, at its start pose: contacts/jacobi-contact-solver.ts)
    const cs = this.contactSolver;
    const store = this.collision ? this.collision.manifolds : null;
    if (cs) {
      if (list && list.count > 0) {
        this.computeInertia();
        cs.prepareJacobi(list, store, this.w.position, this.w.orientation, this.w.inverseMass, this.angMassInv, h, rule, warmStart, this.joints);
      } else cs.count = 0;
    }
    const contacts = cs !== null && cs.count > 0;
    // the joints' mass splitting (block-solver.ts massShare): s_i = (n_i + 1)/2, n_i the body's manifolds and
    // joints as its contacts count them (cs.share, this frame's), or its joints alone on a frame without contacts
    if (this.jointShare) {
      const n = contacts ? cs!.share : this.jointShare, s = this.jointFactor!;
      for (let i = 0; i < s.length; i++) s[i] = 0.5 * (n[i] + 1);
      this.rowSolver.massShare = s;
      this.rowSolver.positionShare = this.positionFactor; // the position pass: its own bound (positionShare)
    }
    if (colliding) t = clock.lap('prepare contacts', t);
    for (let s = 0; s < substeps; s++) {
      // integrate velocities (stages 1, 2: compute_inertia, compute_free_velocity)
      this.computeInertia();
      this.computeFreeVelocity(h);
      t = clock.lap('integrate velocities', t);
      // prepare joints (stage 3: compute_violation_and_jacobian_and_delassus)
      this.computeViolationAndJacobianAndDelassus(h);
      t = clock.lap('prepare joints', t);
      // restitution first, before the contact solve and its warm start: collisions propagated pair by
      // pair on the step's velocities (Guendelman et al. 2003; block-solver.ts applyRestitution)
      if (this.rowSolver.contacts) this.applyRestitution(h, rule);
      if (contacts) {
        const g = this.w.gravity;
        this.gravityStep[0] = h * g[0];
        this.gravityStep[1] = h * g[1];
        this.gravityStep[2] = h * g[2];
        cs!.restitution(this.w.linearVelocity, this.w.angularVelocity, h, rule.restitutionThreshold, this.gravityStep);
      }
      if (colliding) t = clock.lap('restitution', t);
      // warm start: λ⁰ = f · λ(previous step) (the contacts' factor was applied at prepare), ΔV = h M⁻¹ Jᵀ λ⁰
      this.warmStart(warmStart);
      const record = residual !== null && s === 0;
      // λ* of this step's system, before the iterations; diagnostics only (reads, changes nothing)
      // (not with contacts: their bounded rows make it a complementarity problem, which CG does not solve)
      // (nor with split impulses: the velocity rows then carry no β C/h, and λ* is the biased system's)
      const reference = record && lambdaError !== null && !this.rowSolver.contacts && !contacts && !this.rowSolver.splitPositionBias ? this.convergedMultipliers(h) : null;
      if (this.variant.applyWarmStart && warmStart > 0) {
        if (contacts) cs!.totals(h);
        this.updateVelocities(h);
      }
      t = clock.lap('warm start', t);
      // solve: N Jacobi sweeps
      this.contactSweep = 0;
      for (let k = 0; k < iterations; k++) {
        if (record) this.recordResidual(h, residual);
        if (reference) lambdaError!.push(relativeError(this.multiplier, reference));
        this.iterate(h);
      }
      if (record) this.recordResidual(h, residual);
      if (reference) lambdaError!.push(relativeError(this.multiplier, reference));
      // split impulse: the joints' Baumgarte feedback as a position pass of its own (solve positions:
      // ⌈N/2⌉ Jacobi sweeps on pseudo-velocities, jacobi-gpu's solve_positions*), timed with the solve
      const split = this.rowSolver.splitPositionBias && this.rowSolver.jointBlocks > 0;
      // (with the joints' masses split the pass has its own blocks and an odd number of sweeps: ownPositionSweeps)
      const sweeps = this.jointShare ? RowBlockSolver.ownPositionSweeps(iterations) : RowBlockSolver.positionSweeps(iterations);
      if (split) this.rowSolver.solvePositions(h, this.angMassInv, sweeps, this.pseudoLin, this.pseudoAng, 'jacobi');
      t = clock.lap('solve', t);
      // integrate positions (stage 5: compute_positions; with the split compute_positions_split, x += h (v + P));
      // the contacts' separations follow the bodies (K1)
      if (split) this.rigid.computePositionsSplit(h, this.linVelDelta, this.angVelDelta, this.pseudoLin, this.pseudoAng);
      else this.computePositions(h);
      if (contacts) cs!.updatePose(this.w.position, this.w.orientation);
      t = clock.lap('integrate positions', t);
    }
    // store impulses: the contacts' λ back onto the manifolds
    if (contacts && store) cs!.storeImpulses(store);
    if (colliding) clock.lap('store impulses', t);
    clock.paused = false;
    this.frame++;
  }
  /** sweeps made in this substep (the contacts' points walk backwards on odd ones) */
  private contactSweep = 0;

  /**
   * How this solver biases contact rows (block-solver.ts ContactRule): jacobi and gs use their
   * Baumgarte β (the Jacobi text's β C, eq. 8) with the 5 mm slop and a 3 m/s push-out cap.
   */
  protected contactRule(): ContactRule {
    return baumgarteContacts(this.options.beta, this.options.restitutionThreshold);
  }

  /**
   * Restitution (block-solver.ts applyRestitution): the step's collisions, swept pair by pair on V
   * before the contact solve; `afterForces`: V has this step's h g (computeFreeVelocity), which the
   * collisions take out of each approach (Guendelman's order: collisions, then forces).
   */
  protected applyRestitution(h: number, rule: ContactRule, afterForces = true): void {
    const g = this.w.gravity, k = afterForces ? h : 0;
    this.gravityStep[0] = k * g[0];
    this.gravityStep[1] = k * g[1];
    this.gravityStep[2] = k * g[2];
    this.rowSolver.applyRestitution(h, rule.restitutionThreshold, this.w.linearVelocity, this.w.angularVelocity, this.linVelDelta, this.angVelDelta, this.angMassInv, this.gravityStep);
  }
  private readonly gravityStep = new Float64Array(3);

  /** ‖b − Aλ‖₂ now, per joint kind (channel = the kind's name), by a pass that changes nothing. */
  protected recordResidual(h: number, channels: Record<string, number[]>): void {
    const rows = this.rowSolver.rows;
    if (!this.residualScratch || this.residualScratch.length < rows.count) this.residualScratch = new Float64Array(rows.capacity);
    const perRow = this.residualScratch;
    this.updateMultipliers(h, false, 0, rows.blockCount, false, perRow);
    const sums = new Map<string, number>();
    for (let r = 0; r < rows.count; r++) {
      const contact = rows.contactKind[rows.rowBlock[r]];
      const kind = contact === CONTACT_NORMAL ? CONTACT_NORMAL_CHANNEL : contact === CONTACT_FRICTION ? FRICTION_CHANNEL : jointKindNames[this.joints.kind[rows.owner[r]]];
      sums.set(kind, (sums.get(kind) ?? 0) + perRow[r]);
    }
    for (const [kind, sum] of sums) (channels[kind] ??= []).push(Math.sqrt(sum) / h);
    const cs = this.contactSolver;
    if (cs && cs.count > 0) {
      // the contacts' normal and friction rows at V^k, projected (jacobi-contact-solver.ts residualJacobi)
      const r: ContactResidual = { normal: 0, friction: 0 };
      cs.residualJacobi(this.w.linearVelocity, this.w.angularVelocity, this.linVelDelta, this.angVelDelta, h, r);
      (channels[CONTACT_NORMAL_CHANNEL] ??= []).push(Math.sqrt(r.normal) / h);
      (channels[FRICTION_CHANNEL] ??= []).push(Math.sqrt(r.friction) / h);
    }
  }
  private residualScratch: Float64Array | null = null;

  /**
   * λ* solving this step's A λ = b (36, 8; soft rows with α̃) by conjugate gradient
   * (global/delassus.ts, preconditioned by the A_ℓℓ⁻¹ of stage 3) to REFERENCE_TOLERANCE,
   * from a copy of λ⁰. Reads the step's data, writes none of it. Null when λ* = 0 (no
   * relative error) or when the CG did not reach the tolerance (b outside the range of a
   * singular A: no solution to measure against).
   */
  private convergedMultipliers(h: number): Float64Array | null {
    const op = new DelassusOperator(this.delassusSource());
    const b = new Float64Array(op.size);
    op.rhs(b);
    const reference = this.multiplier.slice();
    const result = op.solve(b, reference, { tolerance: REFERENCE_TOLERANCE });
    return result.converged && reference.some((x) => x !== 0) ? reference : null;
  }

  /**
   * 4. One iteration: a Jacobi sweep, (37) for every joint block and every contact manifold (its split
   *    copies, contacts/jacobi-contact-solver.ts) from the same V^k, then (34) and the contacts' gather.
   */
  protected iterate(h: number): void {
    this.updateMultipliers(h);
    const cs = this.contactSolver;
    if (cs && cs.count > 0) cs.solveJacobi(this.w.linearVelocity, this.w.angularVelocity, this.linVelDelta, this.angVelDelta, h, true, (this.contactSweep++ & 1) === 1);
    this.updateVelocities(h);
  }

  /**
   * One frame, recording the residual (one channel per joint kind present: 'point', 'distance',
   * 'hinge', 'fixed'; RESIDUAL_QUANTITY) and, where λ* is defined, the relative multiplier error
   * against the converged solution (channel LAMBDA_ERROR_CHANNEL, dimensionless;
   * global/lambda-error.ts) after k = 0..N iterations.
   */
  async stepRecordingResiduals(): Promise<ResidualCurve> {
    const channels: Record<string, number[]> = {};
    const error: number[] = [];
    this.stageClock.paused = true; // a recording frame is not counted in timings(), nor in the stages
    try {
      this.stepFrameRecording(channels, error);
    } finally {
      this.stageClock.paused = false;
    }
    if (error.length) channels[LAMBDA_ERROR_CHANNEL] = error;
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  /** 1. I⁻¹_world = R I⁻¹_local Rᵀ per body into angMassInv (rigid/body.ts, compute_inertia). */
  computeInertia(): void {
    this.rigid.computeInertia(this.angMassInv);
  }

  /**
   * 2. V* = d V + h M⁻¹ F (gravity, damping d) and the gyroscopic term of every non-isotropic
   *    body (rigid/body.ts, compute_free_velocity: implicit midpoint rule); ΔV = 0.
   */
  computeFreeVelocity(h: number): void {
    this.rigid.computeFreeVelocity(h, this.w.gravity, this.options.linearDamping, this.options.angularDamping);
    this.linVelDelta.fill(0);
    this.angVelDelta.fill(0);
  }

  /**
   * 3. C, J of every row at the current pose, each row's bias rate and γ, each block's
   *    (A_bb + γ)⁻¹ (rows/block-solver.ts evaluate, prepare). β in units of 1/h.
   */
  computeViolationAndJacobianAndDelassus(h = this.options.dt / this.options.substeps): void {
    this.rowSolver.evaluate(this.w);
    this.rowSolver.prepare(h, this.options.beta, this.angMassInv, this.contactRule());
  }

  /** λ⁰ = f · λ(previous step). */
  warmStart(factor: number): void {
    if (factor === 1) return;
    const m = this.multiplier;
    for (let i = 0; i < m.length; i++) m[i] *= factor;
  }

  /**
   * 4a. The projected block update of blocks from .. to−1 (rows/block-solver.ts solveBlocks, (37)
   *     in the rows' signs). Returns Σ ρ² = h² ‖b − Aλᵏ‖² over those rows, the residual before this
   *     update; with apply = false only that. With immediate = true (Gauss-Seidel, gs-cpu) each
   *     block's Δλ also goes into ΔV of its two bodies at once, so the next block sees it.
   */
  updateMultipliers(h: number, apply = true, from = 0, to = this.rowSolver.rows.blockCount, immediate = false, perRow: Float64Array | null = null, reverse = false): number {
    return this.rowSolver.solveBlocks(h, this.w.linearVelocity, this.w.angularVelocity, this.linVelDelta, this.angVelDelta, this.angMassInv, apply, from, to, immediate, perRow, false, reverse);
  }

  /** sweeps made so far by a sequential solver that alternates direction (symmetric Gauss-Seidel) */
  protected sweeps = 0;

  /** What the global solve's operator reads of this solver (global/delassus.ts DelassusSource). */
  delassusSource(): DelassusSource {
    return {
      rowSolver: this.rowSolver,
      h: this.options.dt / this.options.substeps,
      linearVelocity: this.w.linearVelocity,
      angularVelocity: this.w.angularVelocity,
      inverseInertia: this.angMassInv,
      bodyCount: this.w.bodyCount,
    };
  }

  /** 4b. ΔV_i = h M_i⁻¹ Σ_r∋i J_r,iᵀ λ_r   (34), the rows' gather (rows/rows.ts gatherImpulse). */
  updateVelocities(h: number): void {
    this.rowSolver.gather(h, this.angMassInv, this.linVelDelta, this.angVelDelta);
    // the contacts' impulses with the true masses: the mass-split copies averaged (jacobi-contact-solver.ts)
    const cs = this.contactSolver;
    if (cs && cs.count > 0) cs.gather(this.linVelDelta, this.angVelDelta);
  }

  /**
   * 5. V = V* + ΔV; x += h v; q ← normalise(q + ½ h (0, ω_orient) ⊗ q), ω_orient = ω for
   *    spheres, the gyroscopic midpoint velocity otherwise (rigid/body.ts, compute_positions).
   */
  computePositions(h: number): void {
    this.rigid.computePositions(h, this.linVelDelta, this.angVelDelta);
  }


  cost(): SolverCost {
    const { substeps, iterations } = this.options;
    const contacts = this.contactSolver ? 3 * this.contactSolver.count : 0;
    return { rowSolvesPerFrame: (this.rowSolver.rows.count + contacts) * iterations * substeps };
  }

}
