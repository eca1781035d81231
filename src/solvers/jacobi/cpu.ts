/**
 * jacobi-cpu — the f64 reference of the GPU Jacobi point-constraint solver
 * (shared/seeds/gpu-jacobi-point-constraints.txt). Same stages, same names as
 * the WGSL kernels in kernels.wgsl.ts, so one can be read against the other.
 *
 * One solver step of h = dt / substeps:
 *   1. compute_inertia          I⁻¹ = R I_local⁻¹ Rᵀ                         (per body)
 *   2. compute_free_velocity    V* = V + h M⁻¹ F, clear ΔV                   (per body)
 *   3. compute_violation_and_jacobian_and_delassus
 *                               C_ℓ (3), J_ℓ (8), A_ℓℓ⁻¹ = (J_ℓ M⁻¹ J_ℓᵀ)⁻¹  (per constraint)
 *      warm start               λ⁰ = f · λ(previous step)
 *      apply warm start         ΔV = −h M⁻¹ Jᵀ λ⁰ (update_velocities once), so V⁰ = V* − h M⁻¹Jᵀλ⁰
 *   4. N × ( update_multipliers λ_ℓ += h⁻¹ A_ℓℓ⁻¹ (J_ℓ V^k + β C_ℓ)       (37) (per constraint)
 *            update_velocities  ΔV_i = −h M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ λ_ℓ            (34) (per body) )
 *   5. compute_positions        V = V* + ΔV; x += h v; q += ½ h (0, ω) ⊗ q; normalise
 *
 * Invariants: update_multipliers reads only V*, ΔV and per-constraint data and
 * writes only λ_ℓ of its own constraint; update_velocities reads λ and writes
 * only ΔV of its own body (a gather through the CSR connectivity), so each pass
 * is order-independent — a true Jacobi sweep, the same on the GPU.
 *
 * The reference text starts the iterations from V⁰ = V* even when λ⁰ ≠ 0; its
 * first multiplier update then adds the whole correction on top of λ⁰. Option
 * `applyWarmStart` (default true) makes V⁰ consistent with λ⁰ as in (5); false
 * reproduces the text as written. Angular acceleration is zero: no torques and
 * no gyroscopic term (exact for spheres, whose inertia is isotropic).
 *
 * Speed (the 100k-bead necklace steps in < 60 ms on two cores) without changing
 * any result: the loops work on scalar locals and allocate nothing; the
 * iterations read the lever arms a = R r⁰, b = R r¹ (6 per constraint) instead
 * of the 18 entries of J, which hold nothing else (same products, zeros left out);
 * update_velocities reads a per-CSR-entry side (σ, arm offset) precomputed once.
 */
import type { WorldDesc } from '../../model/world.js';
import { complianceOf } from '../../model/compiled.js';
import { CpuSolverBase } from '../cpu-base.js';
import type { Solver, SolverOptions, SolverCost, ResidualCurve } from '../solver.js';
import { DelassusOperator, relativeError } from '../global/delassus.js';
import { LAMBDA_ERROR_CHANNEL, REFERENCE_TOLERANCE } from '../global/lambda-error.js';

/** What the Jacobi solvers' residual curves hold (ResidualCurve.quantity). */
export const RESIDUAL_QUANTITY = '‖b − Aλᵏ‖₂ over point rows, m/s² (h·r is the velocity error left)';

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
  // per constraint
  readonly multiplier: Float64Array; // λ_ℓ (3)
  readonly jacobian: Float64Array; // jw0 (9) then jw1 (9)
  readonly violation: Float64Array; // C_ℓ (3)
  readonly delassusInv: Float64Array; // A_ℓℓ⁻¹ (9)
  /**
   * Soft joints: h·α̃ = α/h per constraint (0 for a rigid one), α the compliance (m/N).
   * A soft joint is an implicit spring λ = C(t+h)/α, C(t+h) ≈ C + h J V, with V =
   * V* − h M⁻¹ Jᵀ λ; so (A + α̃ I) λ = h⁻¹ (J V* + C/h), α̃ = α/h²: its row gets α̃ on
   * the Delassus diagonal and the bias C/h (not β C/h: the spring's own rest length
   * replaces Baumgarte's correction), and its residual is h⁻¹(J Vᵏ + C/h) − α̃ λᵏ. α = 0
   * gives back the rigid row (with β). The same soft rows as Catto's soft step and XPBD.
   */
  readonly softness: Float64Array;
  /** lever arms a = R(q_i) r⁰ then b = R(q_j) r¹ (6 per constraint): the entries of jw0, jw1 */
  readonly arm: Float64Array;
  // per CSR entry k of the connectivity (constraint ℓ = constraintList[k] of body i)
  /** σ = −1 where i is ℓ's body 0 (J_ℓ,i linear block +I₃), +1 where it is body 1 */
  private readonly entrySign: Float64Array;
  /** offset of i's lever arm in `arm`: 6ℓ (a) or 6ℓ + 3 (b) */
  private readonly entryArm: Int32Array;

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}, variant: Partial<JacobiVariant> = {}) {
    super(world, options);
    this.variant = { applyWarmStart: true, ...variant };
    const nb = this.w.bodyCount;
    const nc = this.w.constraintCount;
    this.linVelDelta = new Float64Array(3 * nb);
    this.angVelDelta = new Float64Array(3 * nb);
    this.angMassInv = new Float64Array(9 * nb);
    this.multiplier = new Float64Array(3 * nc);
    this.jacobian = new Float64Array(18 * nc);
    this.violation = new Float64Array(3 * nc);
    this.delassusInv = new Float64Array(9 * nc);
    this.arm = new Float64Array(6 * nc);
    const h = this.options.dt / this.options.substeps;
    this.softness = complianceOf(this.w, this.options.compliance).map((alpha) => alpha / h);
    const { ic0, constraintList } = this.w.connectivity;
    this.entrySign = new Float64Array(constraintList.length);
    this.entryArm = new Int32Array(constraintList.length);
    for (let ib = 0; ib < nb; ib++)
      for (let k = ic0[ib]; k < ic0[ib + 1]; k++) {
        const ic = constraintList[k];
        const isBody0 = this.w.ib0[ic] === ib;
        this.entrySign[k] = isBody0 ? -1 : 1;
        this.entryArm[k] = 6 * ic + (isBody0 ? 0 : 3);
      }
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
  private stepFrameRecording(residual: number[] | null, lambdaError: number[] | null = null): void {
    const { dt, substeps, iterations, beta, warmStart } = this.options;
    const h = dt / substeps;
    for (let s = 0; s < substeps; s++) {
      this.computeInertia();
      this.computeFreeVelocity(h);
      this.computeViolationAndJacobianAndDelassus();
      this.warmStart(warmStart);
      const baumgarte = beta / h; // β in 1/s
      const record = residual !== null && s === 0;
      // λ* of this step's system, before the iterations; diagnostics only (reads, changes nothing)
      const reference = record && lambdaError !== null ? this.convergedMultipliers(h, baumgarte) : null;
      if (this.variant.applyWarmStart && warmStart > 0) this.updateVelocities(h);
      for (let k = 0; k < iterations; k++) {
        if (record) residual.push(Math.sqrt(this.updateMultipliers(h, baumgarte, false)) / h);
        if (reference) lambdaError!.push(relativeError(this.multiplier, reference));
        this.iterate(h, baumgarte);
      }
      if (record) residual.push(Math.sqrt(this.updateMultipliers(h, baumgarte, false)) / h);
      if (reference) lambdaError!.push(relativeError(this.multiplier, reference));
      this.computePositions(h);
    }
    this.frame++;
  }

  /**
   * λ* solving this step's A λ = b (36, 8; soft rows with α̃) by conjugate gradient
   * (global/delassus.ts, preconditioned by the A_ℓℓ⁻¹ of stage 3) to REFERENCE_TOLERANCE,
   * from a copy of λ⁰. Reads the step's data, writes none of it. Null when λ* = 0 (no
   * relative error) or when the CG did not reach the tolerance (b outside the range of a
   * singular A: no solution to measure against).
   */
  private convergedMultipliers(h: number, baumgarte: number): Float64Array | null {
    const op = new DelassusOperator(this);
    const b = new Float64Array(op.size);
    op.rhs(h, baumgarte, b);
    const reference = this.multiplier.slice();
    const result = op.solve(b, reference, { tolerance: REFERENCE_TOLERANCE });
    return result.converged && reference.some((x) => x !== 0) ? reference : null;
  }

  /** 4. One iteration: a Jacobi sweep, (37) for every constraint from the same V^k, then (34). */
  protected iterate(h: number, baumgarte: number): void {
    this.updateMultipliers(h, baumgarte);
    this.updateVelocities(h);
  }

  /**
   * One frame, recording the residual (channel 'point', RESIDUAL_QUANTITY) and, where λ*
   * is defined, the relative multiplier error against the converged solution (channel
   * LAMBDA_ERROR_CHANNEL, dimensionless; global/lambda-error.ts) after k = 0..N iterations.
   */
  async stepRecordingResiduals(): Promise<ResidualCurve> {
    const point: number[] = [];
    const error: number[] = [];
    this.stepFrameRecording(point, error);
    const channels: Record<string, number[]> = { point };
    if (error.length) channels[LAMBDA_ERROR_CHANNEL] = error;
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  /**
   * 1. I⁻¹_world = R I⁻¹_local Rᵀ (the inverse of R I Rᵀ), as T = R I⁻¹_local, then T Rᵀ.
   *    Isotropic I⁻¹_local = s I₃ (every sphere, and every fixed body with s = 0) has
   *    T = s R exactly (the products with the zero entries add nothing), so only T Rᵀ is
   *    left to compute; the general path is the full product.
   */
  computeInertia(): void {
    const { orientation: q, inverseInertiaLocal: L, bodyCount } = this.w;
    const out = this.angMassInv;
    for (let ib = 0; ib < bodyCount; ib++) {
      // R = R(q), row-major
      const qo = 4 * ib;
      const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
      const r00 = 1 - 2 * (y * y + z * z), r01 = 2 * (x * y - z * w), r02 = 2 * (x * z + y * w);
      const r10 = 2 * (x * y + z * w), r11 = 1 - 2 * (x * x + z * z), r12 = 2 * (y * z - x * w);
      const r20 = 2 * (x * z - y * w), r21 = 2 * (y * z + x * w), r22 = 1 - 2 * (x * x + y * y);
      const o = 9 * ib;
      const l00 = L[o], l01 = L[o + 1], l02 = L[o + 2];
      const l10 = L[o + 3], l11 = L[o + 4], l12 = L[o + 5];
      const l20 = L[o + 6], l21 = L[o + 7], l22 = L[o + 8];
      // T = R · L
      let t00, t01, t02, t10, t11, t12, t20, t21, t22;
      if (l01 === 0 && l02 === 0 && l10 === 0 && l12 === 0 && l20 === 0 && l21 === 0 && l11 === l00 && l22 === l00) {
        t00 = r00 * l00; t01 = r01 * l00; t02 = r02 * l00;
        t10 = r10 * l00; t11 = r11 * l00; t12 = r12 * l00;
        t20 = r20 * l00; t21 = r21 * l00; t22 = r22 * l00;
      } else {
        t00 = r00 * l00 + r01 * l10 + r02 * l20; t01 = r00 * l01 + r01 * l11 + r02 * l21; t02 = r00 * l02 + r01 * l12 + r02 * l22;
        t10 = r10 * l00 + r11 * l10 + r12 * l20; t11 = r10 * l01 + r11 * l11 + r12 * l21; t12 = r10 * l02 + r11 * l12 + r12 * l22;
        t20 = r20 * l00 + r21 * l10 + r22 * l20; t21 = r20 * l01 + r21 * l11 + r22 * l21; t22 = r20 * l02 + r21 * l12 + r22 * l22;
      }
      // out = T · Rᵀ
      out[o] = t00 * r00 + t01 * r01 + t02 * r02;
      out[o + 1] = t00 * r10 + t01 * r11 + t02 * r12;
      out[o + 2] = t00 * r20 + t01 * r21 + t02 * r22;
      out[o + 3] = t10 * r00 + t11 * r01 + t12 * r02;
      out[o + 4] = t10 * r10 + t11 * r11 + t12 * r12;
      out[o + 5] = t10 * r20 + t11 * r21 + t12 * r22;
      out[o + 6] = t20 * r00 + t21 * r01 + t22 * r02;
      out[o + 7] = t20 * r10 + t21 * r11 + t22 * r12;
      out[o + 8] = t20 * r20 + t21 * r21 + t22 * r22;
    }
  }

  /**
   * 2. V* = d V + h M⁻¹ F (gravity on every body that can move); ΔV = 0. d = max(0, 1 − μ h),
   *    the optional velocity damping (linear and angular μ; 1 without damping: V unchanged).
   */
  computeFreeVelocity(h: number): void {
    const { linearVelocity: v, angularVelocity: w, inverseMass, gravity: g, bodyCount } = this.w;
    const gx = h * g[0], gy = h * g[1], gz = h * g[2];
    const dl = dampingFactor(this.options.linearDamping, h), da = dampingFactor(this.options.angularDamping, h);
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] > 0) {
        const o = 3 * ib;
        if (dl !== 1) (v[o] *= dl, v[o + 1] *= dl, v[o + 2] *= dl);
        if (da !== 1) (w[o] *= da, w[o + 1] *= da, w[o + 2] *= da);
        v[o] += gx;
        v[o + 1] += gy;
        v[o + 2] += gz;
      }
    }
    this.linVelDelta.fill(0);
    this.angVelDelta.fill(0);
  }

  /**
   * 3. C_ℓ = x_i + R(q_i) r⁰ − x_j − R(q_j) r¹                      (3)
   *    J_ℓ = [ I₃  −[R r⁰]×  −I₃  [R r¹]× ]; store jw0 = −[R r⁰]×, jw1 = [R r¹]×   (8)
   *    A_ℓℓ = (m_i⁻¹ + m_j⁻¹) I₃ − jw0 I_i⁻¹ jw0 − jw1 I_j⁻¹ jw1   (jwᵀ = −jw), stored inverted
   *           (+ α̃ I₃ for a soft joint, see `softness`)
   *
   * The lever arms a = R(q_i) r⁰ and b = R(q_j) r¹ are also kept (`arm`, 6 per
   * constraint): jw0 and jw1 are made of their components alone, and the
   * iterations read them instead of the 18 entries of J (the same products).
   * jw I⁻¹ jw is the same for jw = ±[u]× (both signs cancel, exactly), so the
   * two sandwiches are  [a]× I_i⁻¹ [a]×  and  [b]× I_j⁻¹ [b]×.
   */
  computeViolationAndJacobianAndDelassus(h = this.options.dt / this.options.substeps): void {
    const { position: x, orientation: q, ib0, ib1, r0, r1, inverseMass, constraintCount } = this.w;
    const C = this.violation;
    const J = this.jacobian;
    const arm = this.arm;
    const Ii = this.angMassInv;
    const Ai = this.delassusInv;
    for (let ic = 0; ic < constraintCount; ic++) {
      const b0 = ib0[ic];
      const b1 = ib1[ic];
      const co = 3 * ic;
      // a = R(q_i) r⁰, b = R(q_j) r¹
      const ro = 6 * ic;
      rotate(q, 4 * b0, r0, co, arm, ro);
      rotate(q, 4 * b1, r1, co, arm, ro + 3);
      const ax = arm[ro], ay = arm[ro + 1], az = arm[ro + 2];
      const bx = arm[ro + 3], by = arm[ro + 4], bz = arm[ro + 5];
      const p0 = 3 * b0, p1 = 3 * b1;
      C[co] = x[p0] - x[p1] + ax - bx;
      C[co + 1] = x[p0 + 1] - x[p1 + 1] + ay - by;
      C[co + 2] = x[p0 + 2] - x[p1 + 2] + az - bz;
      const jo = 18 * ic;
      // jw0 = −[a]×
      J[jo] = 0; J[jo + 1] = az; J[jo + 2] = -ay;
      J[jo + 3] = -az; J[jo + 4] = 0; J[jo + 5] = ax;
      J[jo + 6] = ay; J[jo + 7] = -ax; J[jo + 8] = 0;
      // jw1 = [b]×
      J[jo + 9] = 0; J[jo + 10] = -bz; J[jo + 11] = by;
      J[jo + 12] = bz; J[jo + 13] = 0; J[jo + 14] = -bx;
      J[jo + 15] = -by; J[jo + 16] = bx; J[jo + 17] = 0;
      // A = (m_i⁻¹ + m_j⁻¹) I₃ − [a]× I_i⁻¹ [a]× − [b]× I_j⁻¹ [b]×
      // + α̃ I₃ for a soft joint, α̃ = α/h² = softness/h
      const m = inverseMass[b0] + inverseMass[b1] + this.softness[ic] / h;
      let a00 = m, a01 = 0, a02 = 0;
      let a10 = 0, a11 = m, a12 = 0;
      let a20 = 0, a21 = 0, a22 = m;
      for (let side = 0; side < 2; side++) {
        // u = a with I_i⁻¹, then u = b with I_j⁻¹
        const uo = ro + 3 * side;
        const io = 9 * (side === 0 ? b0 : b1);
        const ux = arm[uo], uy = arm[uo + 1], uz = arm[uo + 2];
        const i00 = Ii[io], i01 = Ii[io + 1], i02 = Ii[io + 2];
        const i10 = Ii[io + 3], i11 = Ii[io + 4], i12 = Ii[io + 5];
        const i20 = Ii[io + 6], i21 = Ii[io + 7], i22 = Ii[io + 8];
        // T = [u]× I⁻¹
        const t00 = uy * i20 - uz * i10, t01 = uy * i21 - uz * i11, t02 = uy * i22 - uz * i12;
        const t10 = uz * i00 - ux * i20, t11 = uz * i01 - ux * i21, t12 = uz * i02 - ux * i22;
        const t20 = ux * i10 - uy * i00, t21 = ux * i11 - uy * i01, t22 = ux * i12 - uy * i02;
        // A −= T [u]×
        a00 -= t01 * uz - t02 * uy; a01 -= t02 * ux - t00 * uz; a02 -= t00 * uy - t01 * ux;
        a10 -= t11 * uz - t12 * uy; a11 -= t12 * ux - t10 * uz; a12 -= t10 * uy - t11 * ux;
        a20 -= t21 * uz - t22 * uy; a21 -= t22 * ux - t20 * uz; a22 -= t20 * uy - t21 * ux;
      }
      // A⁻¹ by the adjugate; zero when A is singular
      const c00 = a11 * a22 - a12 * a21;
      const c01 = a12 * a20 - a10 * a22;
      const c02 = a10 * a21 - a11 * a20;
      const det = a00 * c00 + a01 * c01 + a02 * c02;
      const ao = 9 * ic;
      if (det === 0 || !Number.isFinite(det)) {
        Ai.fill(0, ao, ao + 9);
        continue;
      }
      const id = 1 / det;
      Ai[ao] = c00 * id;
      Ai[ao + 1] = (a02 * a21 - a01 * a22) * id;
      Ai[ao + 2] = (a01 * a12 - a02 * a11) * id;
      Ai[ao + 3] = c01 * id;
      Ai[ao + 4] = (a00 * a22 - a02 * a20) * id;
      Ai[ao + 5] = (a02 * a10 - a00 * a12) * id;
      Ai[ao + 6] = c02 * id;
      Ai[ao + 7] = (a01 * a20 - a00 * a21) * id;
      Ai[ao + 8] = (a00 * a11 - a01 * a10) * id;
    }
  }

  /** λ⁰ = f · λ(previous step). */
  warmStart(factor: number): void {
    if (factor === 1) return;
    const m = this.multiplier;
    for (let i = 0; i < m.length; i++) m[i] *= factor;
  }

  /**
   * 4a. λ_ℓ += h⁻¹ A_ℓℓ⁻¹ (J_ℓ V^k + β C_ℓ)   (37), V^k = V* + ΔV^k, for constraints from .. to−1.
   *     J_ℓ V = v_i − v_j + jw0 ω_i + jw1 ω_j = v_i − v_j + ω_i × a − ω_j × b.
   *     Returns Σ_ℓ |J_ℓ V^k + β C_ℓ|² = h² ‖b − Aλᵏ‖² (30, 33), the residual before this
   *     update; with apply = false only that sum is computed and λ is left alone.
   *     With immediate = true (Gauss-Seidel, gs-cpu) each constraint's Δλ also goes into
   *     ΔV of its two bodies at once, ΔV_i −= h M_i⁻¹ J_ℓ,iᵀ Δλ (34), so the next
   *     constraint sees it: the loop is then a Gauss-Seidel sweep over the range.
   */
  updateMultipliers(h: number, baumgarte: number, apply = true, from = 0, to = this.w.constraintCount, immediate = false): number {
    const { linearVelocity: v, angularVelocity: w, ib0, ib1, inverseMass } = this.w;
    const dv = this.linVelDelta;
    const dw = this.angVelDelta;
    const arm = this.arm;
    const Ai = this.delassusInv;
    const Ii = this.angMassInv;
    const lam = this.multiplier;
    const C = this.violation;
    const softness = this.softness;
    const invH = 1 / h;
    let squares = 0;
    for (let ic = from; ic < to; ic++) {
      const o0 = 3 * ib0[ic];
      const o1 = 3 * ib1[ic];
      const w0x = w[o0] + dw[o0], w0y = w[o0 + 1] + dw[o0 + 1], w0z = w[o0 + 2] + dw[o0 + 2];
      const w1x = w[o1] + dw[o1], w1y = w[o1 + 1] + dw[o1 + 1], w1z = w[o1 + 2] + dw[o1 + 2];
      const ro = 6 * ic;
      const ax = arm[ro], ay = arm[ro + 1], az = arm[ro + 2];
      const bx = arm[ro + 3], by = arm[ro + 4], bz = arm[ro + 5];
      const co = 3 * ic;
      // a soft joint (α > 0): bias C/h and −(α/h) λ, see `softness`
      const soft = softness[ic];
      const bias = soft > 0 ? invH : baumgarte;
      let cv0 = v[o0] + dv[o0] - v[o1] - dv[o1] + bias * C[co] - soft * lam[co];
      let cv1 = v[o0 + 1] + dv[o0 + 1] - v[o1 + 1] - dv[o1 + 1] + bias * C[co + 1] - soft * lam[co + 1];
      let cv2 = v[o0 + 2] + dv[o0 + 2] - v[o1 + 2] - dv[o1 + 2] + bias * C[co + 2] - soft * lam[co + 2];
      // + ω_i × a − ω_j × b
      cv0 += w0y * az - w0z * ay - w1y * bz + w1z * by;
      cv1 += w0z * ax - w0x * az + w1x * bz - w1z * bx;
      cv2 += w0x * ay - w0y * ax - w1x * by + w1y * bx;
      squares += cv0 * cv0 + cv1 * cv1 + cv2 * cv2;
      if (!apply) continue;
      const ao = 9 * ic;
      const l0 = invH * (Ai[ao] * cv0 + Ai[ao + 1] * cv1 + Ai[ao + 2] * cv2);
      const l1 = invH * (Ai[ao + 3] * cv0 + Ai[ao + 4] * cv1 + Ai[ao + 5] * cv2);
      const l2 = invH * (Ai[ao + 6] * cv0 + Ai[ao + 7] * cv1 + Ai[ao + 8] * cv2);
      lam[co] += l0;
      lam[co + 1] += l1;
      lam[co + 2] += l2;
      if (!immediate) continue;
      // body i (σ = −1): Δv −= h m⁻¹ Δλ, Δω −= h I⁻¹ (a × Δλ); body j (σ = +1): Δv += h m⁻¹ Δλ, Δω += h I⁻¹ (b × Δλ)
      for (let side = 0; side < 2; side++) {
        const o = side === 0 ? o0 : o1;
        const ib = side === 0 ? ib0[ic] : ib1[ic];
        if (inverseMass[ib] === 0) continue; // fixed: nothing moves it
        const sh = side === 0 ? -h : h;
        const sm = sh * inverseMass[ib];
        dv[o] += sm * l0;
        dv[o + 1] += sm * l1;
        dv[o + 2] += sm * l2;
        const rx = arm[ro + 3 * side], ry = arm[ro + 3 * side + 1], rz = arm[ro + 3 * side + 2];
        const tx = ry * l2 - rz * l1, ty = rz * l0 - rx * l2, tz = rx * l1 - ry * l0; // r × Δλ
        const io = 9 * ib;
        dw[o] += sh * (Ii[io] * tx + Ii[io + 1] * ty + Ii[io + 2] * tz);
        dw[o + 1] += sh * (Ii[io + 3] * tx + Ii[io + 4] * ty + Ii[io + 5] * tz);
        dw[o + 2] += sh * (Ii[io + 6] * tx + Ii[io + 7] * ty + Ii[io + 8] * tz);
      }
    }
    return squares;
  }

  /**
   * 4b. ΔV_i = −h M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ λ_ℓ   (34):
   *     linear  −h m⁻¹ λ (body 0), +h m⁻¹ λ (body 1);  angular +h I⁻¹ jw λ (jwᵀ = −jw),
   *     i.e. with σ = −1 for body 0 and +1 for body 1 (`entrySign`, per CSR entry) and
   *     r its lever arm (a or b):  ΔV_i = h m⁻¹ Σ σλ,  Δω_i = h I⁻¹ Σ σ (r × λ).
   */
  updateVelocities(h: number): void {
    this.gatherImpulses(this.multiplier, h, this.linVelDelta, this.angVelDelta);
  }

  /**
   * The gather of (34) for any λ and scale s: per body i, out_lin = s m⁻¹ Σ σλ and
   * out_ang = s I⁻¹ Σ σ (r × λ), i.e. out = −s M⁻¹ Jᵀ λ. update_velocities is s = h;
   * the global solve's operator (global/delassus.ts) takes s = −1 for M⁻¹ Jᵀ λ.
   */
  gatherImpulses(lam: Float64Array, scale: number, dv: Float64Array, dw: Float64Array): void {
    const { inverseMass, bodyCount } = this.w;
    const { ic0, constraintList } = this.w.connectivity;
    const arm = this.arm;
    const sign = this.entrySign;
    const armOffset = this.entryArm;
    const Ii = this.angMassInv;
    for (let ib = 0; ib < bodyCount; ib++) {
      let lx = 0, ly = 0, lz = 0; // Σ σλ
      let ax = 0, ay = 0, az = 0; // Σ σ (r × λ) = Σ jw λ
      const kEnd = ic0[ib + 1];
      for (let k = ic0[ib]; k < kEnd; k++) {
        const s = sign[k];
        const co = 3 * constraintList[k];
        const l0 = lam[co], l1 = lam[co + 1], l2 = lam[co + 2];
        const ro = armOffset[k];
        const rx = arm[ro], ry = arm[ro + 1], rz = arm[ro + 2];
        lx += s * l0; ly += s * l1; lz += s * l2;
        ax += s * (ry * l2 - rz * l1);
        ay += s * (rz * l0 - rx * l2);
        az += s * (rx * l1 - ry * l0);
      }
      const o = 3 * ib;
      const sm = scale * inverseMass[ib];
      dv[o] = sm * lx;
      dv[o + 1] = sm * ly;
      dv[o + 2] = sm * lz;
      const io = 9 * ib;
      dw[o] = scale * (Ii[io] * ax + Ii[io + 1] * ay + Ii[io + 2] * az);
      dw[o + 1] = scale * (Ii[io + 3] * ax + Ii[io + 4] * ay + Ii[io + 5] * az);
      dw[o + 2] = scale * (Ii[io + 6] * ax + Ii[io + 7] * ay + Ii[io + 8] * az);
    }
  }

  /** 5. V = V* + ΔV; x += h v; q += ½ h (0, ω) ⊗ q, then normalise. */
  computePositions(h: number): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, bodyCount } = this.w;
    const dv = this.linVelDelta;
    const dw = this.angVelDelta;
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] === 0) continue; // fixed: never moves
      const o = 3 * ib;
      const vx = (v[o] += dv[o]), vy = (v[o + 1] += dv[o + 1]), vz = (v[o + 2] += dv[o + 2]);
      const wx = (w[o] += dw[o]), wy = (w[o + 1] += dw[o + 1]), wz = (w[o + 2] += dw[o + 2]);
      x[o] += h * vx;
      x[o + 1] += h * vy;
      x[o + 2] += h * vz;
      integrateOrientation(q, 4 * ib, wx, wy, wz, h);
    }
  }


  cost(): SolverCost {
    const { substeps, iterations } = this.options;
    return { rowSolvesPerFrame: 3 * this.constraintCount * iterations * substeps };
  }

}

/** Velocity damping over a step h: v ← v · max(0, 1 − μ h) (μ in 1/s; Müller et al. 2020, sec. 3.5). */
export function dampingFactor(mu: number, h: number): number {
  return Math.max(0, 1 - mu * h);
}

// --- small f64 helpers (out-parameters, no allocation) -------------------------------

/**
 * out[oo..oo+3) = R(q[qo..qo+4)) · v[vo..vo+3), R = R(q) written out row by row. Arrays and offsets rather than loose
 * numbers: were the call not inlined, every f64 argument would be boxed (allocated).
 */
function rotate(q: Float64Array, qo: number, v: Float64Array, vo: number, out: Float64Array, oo: number): void {
  const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
  const vx = v[vo], vy = v[vo + 1], vz = v[vo + 2];
  out[oo] = (1 - 2 * (y * y + z * z)) * vx + 2 * (x * y - z * w) * vy + 2 * (x * z + y * w) * vz;
  out[oo + 1] = 2 * (x * y + z * w) * vx + (1 - 2 * (x * x + z * z)) * vy + 2 * (y * z - x * w) * vz;
  out[oo + 2] = 2 * (x * z - y * w) * vx + 2 * (y * z + x * w) * vy + (1 - 2 * (x * x + y * y)) * vz;
}

/** q += ½ h (0, ω) ⊗ q, then normalise (ω in the world frame; q = [x y z w]). */
export function integrateOrientation(q: Float64Array, o: number, wx: number, wy: number, wz: number, h: number): void {
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  // (0, ω) ⊗ q = ( q_w ω + ω × q_v ,  −ω · q_v )
  const hh = 0.5 * h;
  const nx = x + hh * (w * wx + (wy * z - wz * y));
  const ny = y + hh * (w * wy + (wz * x - wx * z));
  const nz = z + hh * (w * wz + (wx * y - wy * x));
  const nw = w - hh * (wx * x + wy * y + wz * z);
  const inv = 1 / Math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw); // (Math.hypot allocates in V8)
  q[o] = nx * inv;
  q[o + 1] = ny * inv;
  q[o + 2] = nz * inv;
  q[o + 3] = nw * inv;
}
