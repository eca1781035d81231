/**
 * The global multiplier system of the Jacobi text, matrix-free, for the solvers
 * that keep jacobi-cpu's per-step data (jacobi-cpu, gs-cpu, global-cpu):
 *
 *   A λ = b,   A = J M⁻¹ Jᵀ (+ α̃ I on soft rows)                       (36)
 *              b_ℓ = h⁻¹ (J_ℓ V* + β C_ℓ)        rigid row              (8)
 *              b_ℓ = h⁻¹ (J_ℓ V* + C_ℓ / h)      soft row (α̃ = α/h², see JacobiCpuSolver.softness)
 *
 * so that r = b − Aλᵏ is exactly the residual jacobi-cpu reports (30, 33, 37):
 * h⁻¹(J_ℓ Vᵏ + β C_ℓ) − α̃ λ_ℓ with Vᵏ = V* − h M⁻¹ Jᵀ λᵏ (5).
 *
 * A is never formed (3N_c × 3N_c, 3×3 blocks, nonzero only where two constraints
 * share a body): A λ is Jᵀ, then M⁻¹, then J, in two passes over the solver's own
 * structures, the same gather as update_velocities (34):
 *   per body i (CSR ic0 / constraint_list):  W_i = M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ λ_ℓ
 *       J_ℓ,iᵀ λ = ( λ, a × λ) for body 0 (i_ℓ),  (−λ, −b × λ) for body 1 (j_ℓ)   (jwᵀ = −jw)
 *   per constraint ℓ:  (A λ)_ℓ = J_ℓ W = W_lin,i − W_lin,j + W_ang,i × a − W_ang,j × b  (+ α̃ λ_ℓ)   (8)
 * with a = R(q_i) r⁰, b = R(q_j) r¹ the lever arms of stage 3.
 *
 * Invariants: reads the solver's stage-1–3 data (arm, angMassInv, violation,
 * delassusInv, softness) and V* (the compiled world's velocities, which hold V*
 * from stage 2 until stage 5); writes only its own scratch and the caller's
 * output arrays, so it can run in the middle of a Jacobi solve without changing it.
 */
import type { JacobiCpuSolver } from '../jacobi/cpu.js';
import { conjugateGradient, type CgResult } from '../../math/cg.js';
import { minres, MinresWorkspace, defaultLsTolerance } from '../../math/minres.js';

/** One global solve: CG, and where CG could not reach the tolerance, MINRES after it (solveLeastSquares). */
export interface GlobalSolveResult extends CgResult {
  /** CG iterations, then MINRES iterations (iterations = their sum) */
  cgIterations: number;
  minresIterations: number;
  /** converged by the least-squares test: b ∉ range(A), λ is a (P⁻¹-weighted) least-squares solution */
  leastSquares: boolean;
}

/**
 * CG iterations in a row without a new smallest residual after which CG hands over to MINRES: half the
 * rows, within 20..1000. CG's residual on a system with a solution reaches a new low every few iterations
 * (≤ 40 apart on the 20-chain necklace, ≤ 360 on the 20 × 20 joint grid where CG converges, measured);
 * on one without, it never does again once it has reached its least value. (A window of 500 on the joint
 * grid cut off CG runs that would have gone on improving: 44 unconverged steps of 120 against 34 with
 * none, 31 with 1000.)
 */
export function cgStallWindow(rows: number): number {
  return Math.min(1000, Math.max(20, Math.ceil(rows / 2)));
}

export class DelassusOperator {
  /** W = M⁻¹ Jᵀ λ: linear then angular, 3 per body each */
  private readonly wLin: Float64Array;
  private readonly wAng: Float64Array;
  /** scratch for residuals computed outside the CG (recording) */
  private readonly scratch: Float64Array;
  /** 3 · constraintCount */
  readonly size: number;
  /** the solver step h = dt / substeps */
  private readonly h: number;

  /** MINRES's vectors and CG's result kept while MINRES runs (created on the first least-squares solve) */
  private minresWork: MinresWorkspace | null = null;
  private cgLambda: Float64Array | null = null;

  constructor(private readonly s: JacobiCpuSolver) {
    const w = s.w;
    this.wLin = new Float64Array(3 * w.bodyCount);
    this.wAng = new Float64Array(3 * w.bodyCount);
    this.size = 3 * w.constraintCount;
    this.h = s.options.dt / s.options.substeps;
    this.scratch = new Float64Array(this.size);
  }

  /**
   * out = b, b_ℓ = h⁻¹ (J_ℓ V* + β C_ℓ) (8), or h⁻¹ (J_ℓ V* + C_ℓ/h) on a soft row;
   * J_ℓ V = v_i − v_j + ω_i × a − ω_j × b. `baumgarte` is β in 1/s.
   */
  rhs(h: number, baumgarte: number, out: Float64Array): void {
    const { linearVelocity: v, angularVelocity: w, ib0, ib1, constraintCount } = this.s.w;
    const arm = this.s.arm, C = this.s.violation, softness = this.s.softness;
    const invH = 1 / h;
    for (let ic = 0; ic < constraintCount; ic++) {
      const o0 = 3 * ib0[ic], o1 = 3 * ib1[ic];
      const ro = 6 * ic, co = 3 * ic;
      const ax = arm[ro], ay = arm[ro + 1], az = arm[ro + 2];
      const bx = arm[ro + 3], by = arm[ro + 4], bz = arm[ro + 5];
      const bias = softness[ic] > 0 ? invH : baumgarte;
      const w0x = w[o0], w0y = w[o0 + 1], w0z = w[o0 + 2];
      const w1x = w[o1], w1y = w[o1 + 1], w1z = w[o1 + 2];
      out[co] = invH * (v[o0] - v[o1] + w0y * az - w0z * ay - w1y * bz + w1z * by + bias * C[co]);
      out[co + 1] = invH * (v[o0 + 1] - v[o1 + 1] + w0z * ax - w0x * az + w1x * bz - w1z * bx + bias * C[co + 1]);
      out[co + 2] = invH * (v[o0 + 2] - v[o1 + 2] + w0x * ay - w0y * ax - w1x * by + w1y * bx + bias * C[co + 2]);
    }
  }

  /** out = A λ = J M⁻¹ Jᵀ λ + α̃ λ (soft rows), in two sparse passes (see the header). */
  apply(lambda: Float64Array, out: Float64Array): void {
    const { ib0, ib1, constraintCount } = this.s.w;
    const arm = this.s.arm, softness = this.s.softness;
    const wl = this.wLin, wa = this.wAng;
    // W_i = M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ λ_ℓ: update_velocities' gather (34) with −1 in place of its h
    this.s.gatherImpulses(lambda, -1, wl, wa);
    // (A λ)_ℓ = J_ℓ W + α̃ λ_ℓ, α̃ = α/h² = softness/h (softness holds h·α̃ = α/h)
    const h = this.h;
    for (let ic = 0; ic < constraintCount; ic++) {
      const o0 = 3 * ib0[ic], o1 = 3 * ib1[ic];
      const ro = 6 * ic, co = 3 * ic;
      const ax = arm[ro], ay = arm[ro + 1], az = arm[ro + 2];
      const bx = arm[ro + 3], by = arm[ro + 4], bz = arm[ro + 5];
      const w0x = wa[o0], w0y = wa[o0 + 1], w0z = wa[o0 + 2];
      const w1x = wa[o1], w1y = wa[o1 + 1], w1z = wa[o1 + 2];
      const alpha = softness[ic] / h;
      out[co] = wl[o0] - wl[o1] + w0y * az - w0z * ay - w1y * bz + w1z * by + alpha * lambda[co];
      out[co + 1] = wl[o0 + 1] - wl[o1 + 1] + w0z * ax - w0x * az + w1x * bz - w1z * bx + alpha * lambda[co + 1];
      out[co + 2] = wl[o0 + 2] - wl[o1 + 2] + w0x * ay - w0y * ax - w1x * by + w1y * bx + alpha * lambda[co + 2];
    }
  }

  /** z = D⁻¹ r, D the block diagonal A_ℓℓ (+ α̃ I), whose inverses stage 3 stored (delassusInv). */
  precondition(r: Float64Array, z: Float64Array): void {
    const Ai = this.s.delassusInv;
    const n = this.s.w.constraintCount;
    for (let ic = 0; ic < n; ic++) {
      const co = 3 * ic, ao = 9 * ic;
      const r0 = r[co], r1 = r[co + 1], r2 = r[co + 2];
      z[co] = Ai[ao] * r0 + Ai[ao + 1] * r1 + Ai[ao + 2] * r2;
      z[co + 1] = Ai[ao + 3] * r0 + Ai[ao + 4] * r1 + Ai[ao + 5] * r2;
      z[co + 2] = Ai[ao + 6] * r0 + Ai[ao + 7] * r1 + Ai[ao + 8] * r2;
    }
  }

  /** ‖b − A λ‖₂ */
  residualNorm(b: Float64Array, lambda: Float64Array): number {
    const q = this.scratch;
    this.apply(lambda, q);
    let sum = 0;
    for (let i = 0; i < q.length; i++) {
      const r = b[i] - q[i];
      sum += r * r;
    }
    return Math.sqrt(sum);
  }

  /**
   * Solves A λ = b in place by conjugate gradient preconditioned with D⁻¹, from the λ
   * given (the warm start). b = 0 gives λ = 0, the exact (minimum-norm) solution, at once
   * (a relative tolerance has no target there). `onIteration` sees λᵏ after iteration k.
   */
  solve(
    b: Float64Array,
    lambda: Float64Array,
    opts: { tolerance: number; maxIterations?: number; stallWindow?: number; onIteration?: (k: number, lambda: Float64Array, recurrenceNorm: number) => void },
  ): CgResult {
    let bb = 0;
    for (let i = 0; i < b.length; i++) bb += b[i] * b[i];
    if (bb === 0) {
      lambda.fill(0);
      opts.onIteration?.(0, lambda, 0);
      return { iterations: 0, residualNorm: 0, rhsNorm: 0, converged: true };
    }
    const onIteration = opts.onIteration;
    return conjugateGradient((v, out) => this.apply(v, out), b, lambda, {
      tolerance: opts.tolerance,
      maxIterations: opts.maxIterations,
      stallWindow: opts.stallWindow,
      precondition: (r, z) => this.precondition(r, z),
      onIteration: onIteration ? (k, rn) => onIteration(k, lambda, rn) : undefined,
    });
  }

  /**
   * A λ = b in place from the λ given, where it has a solution, and a least-squares solution where it
   * has none: CG as `solve` (bit for bit the same λ where CG reaches the tolerance without stalling), and
   * if CG stalls or reaches the cap, preconditioned MINRES (math/minres.ts, the same P = blockdiag(A_ℓℓ)) from λ = 0,
   * within what is left of maxIterations, stopping at ‖b − Aλ‖ ≤ tolerance‖b‖ or at the least-squares
   * test ‖Â r̂‖ ≤ lsTolerance ‖Â‖ ‖r̂‖ (Â = P^-½ A P^-½, r̂ = P^-½ r). MINRES's answer is taken when it
   * converged or left a smaller residual than CG's; otherwise CG's stays. `onIteration` sees every
   * iterate, CG's then MINRES's, numbered on.
   *
   * Why a least-squares λ is the right physics (A = J W Jᵀ + α̃ I_soft, W = M⁻¹ SPD; the update is
   * ΔV = −h W Jᵀ λ (34)): for any SPD metric P⁻¹, the minimisers of ‖b − Aλ‖_{P⁻¹} satisfy
   * A P⁻¹ A λ = A P⁻¹ b; two of them differ by δ with A P⁻¹ A δ = 0, so ‖P^-½ A δ‖² = 0, A δ = 0, and
   * 0 = δᵀAδ = ‖W^½ Jᵀ δ‖² + α̃ ‖δ_soft‖² gives Jᵀδ = 0: δ ∈ null(A) = null(Jᵀ) (rigid rows). ΔV, hence
   * the motion, is the same for every least-squares λ; only λ's part in null(Jᵀ) — self-stress of
   * redundant joints, which moves nothing — is not determined. b = h⁻¹(J V* + β C) has J V* ∈ range(J) =
   * range(A), so the part of b that no λ can reach is the drift β C/h off range(J); the least-squares λ
   * corrects the rest and leaves that part, the least the P⁻¹-weighted velocity error can be.
   */
  solveLeastSquares(
    b: Float64Array,
    lambda: Float64Array,
    opts: { tolerance: number; lsTolerance?: number; maxIterations: number; onIteration?: (k: number, lambda: Float64Array, residualNorm: number) => void },
  ): GlobalSolveResult {
    const onIteration = opts.onIteration;
    const cg = this.solve(b, lambda, { tolerance: opts.tolerance, maxIterations: opts.maxIterations, onIteration, stallWindow: cgStallWindow(this.size) });
    const none = { cgIterations: cg.iterations, minresIterations: 0, leastSquares: false };
    const left = opts.maxIterations - cg.iterations;
    if (cg.converged || left <= 0) return { ...cg, ...none };
    const n = this.size;
    if (!this.minresWork) {
      this.minresWork = new MinresWorkspace(n);
      this.cgLambda = new Float64Array(n);
    }
    const kept = this.cgLambda!;
    kept.set(lambda);
    // MINRES from λ = 0, not from CG's λ: where b ∉ range(A) every step adds a part in null(A) to λ (it
    // moves nothing, but a warm start would carry it on and it would grow step by step, and rounding
    // with it); from 0 it is only this step's
    lambda.fill(0);
    const k0 = cg.iterations;
    const m = minres((v, out) => this.apply(v, out), b, lambda, {
      tolerance: opts.tolerance,
      lsTolerance: opts.lsTolerance ?? defaultLsTolerance,
      maxIterations: left,
      precondition: (r, z) => this.precondition(r, z),
      workspace: this.minresWork,
      // k = 0, MINRES's start λ = 0, is no iteration and is left out of the numbering
      onIteration: onIteration ? (k, rn) => k > 0 && onIteration(k0 + k, lambda, rn) : undefined,
    });
    const iterations = { iterations: cg.iterations + m.iterations, cgIterations: cg.iterations, minresIterations: m.iterations };
    if (m.converged || m.residualNorm < cg.residualNorm)
      return { ...iterations, residualNorm: m.residualNorm, rhsNorm: m.rhsNorm, converged: m.converged, leastSquares: m.leastSquares };
    lambda.set(kept);
    return { ...iterations, residualNorm: cg.residualNorm, rhsNorm: cg.rhsNorm, converged: false, leastSquares: false };
  }
}

/** ‖x − y‖₂ / ‖y‖₂ (NaN when y = 0: no relative error is defined). */
export function relativeError(x: Float64Array, y: Float64Array): number {
  let d = 0, n = 0;
  for (let i = 0; i < x.length; i++) {
    const e = x[i] - y[i];
    d += e * e;
    n += y[i] * y[i];
  }
  return n > 0 ? Math.sqrt(d / n) : NaN;
}
