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
 * For the iterative solves A is never formed (3N_c × 3N_c, 3×3 blocks, nonzero only where two
 * constraints share a body); global-cpu's direct solve assembles it block by block into the envelope
 * of its LDLᵀ (assemble, solveDirect). A λ is Jᵀ, then M⁻¹, then J, in two passes over the solver's own
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
import { EnvelopeLdlt } from '../../math/envelope-ldlt.js';

/** One global solve: CG, and where CG could not reach the tolerance, MINRES after it (solveLeastSquares). */
export interface GlobalSolveResult extends CgResult {
  /** CG iterations, then MINRES iterations (iterations = their sum) */
  cgIterations: number;
  minresIterations: number;
  /** converged by the least-squares test: b ∉ range(A), λ is a (P⁻¹-weighted) least-squares solution */
  leastSquares: boolean;
}

/** One direct solve (solveDirect): the factorisation, then iterative refinement. */
export interface DirectSolveResult {
  /** ‖b − Aλ‖₂ at exit, recomputed with the matrix-free operator */
  residualNorm: number;
  rhsNorm: number;
  /** ‖b − Aλ‖₂ ≤ tolerance ‖b‖₂ */
  converged: boolean;
  /** refinement steps taken (solves with the factor after the first) */
  refinements: number;
  /** pivots dropped as null directions (math/envelope-ldlt.ts) */
  nullPivots: number;
}

/** Refinement steps a direct solve takes after the first solve: at least (where they lower ‖r‖), and at most (see solveDirect). */
export const minRefinements = 0;
export const maxRefinements = 3;

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

  /** the envelope LDLᵀ of A (created on the first direct solve; its ordering is per topology) */
  private ldlt: EnvelopeLdlt | null = null;
  private directScratch: Float64Array | null = null;

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

  /**
   * The block graph of A: joints ℓ ≠ m are adjacent where they share a dynamic body (A_ℓm = Σ_k J_ℓ,k M_k⁻¹ J_m,kᵀ
   * over their common bodies k; a fixed body or world anchor has M_k⁻¹ = 0 and couples nothing). CSR, both
   * directions. Fixed per topology.
   */
  blockGraph(): { adjStart: Int32Array; adj: Int32Array } {
    const { ib0, ib1, constraintCount: nc, connectivity } = this.s.w;
    const { ic0, constraintList } = connectivity;
    const dynamic = (b: number) => this.isDynamic(b);
    const mark = new Int32Array(nc).fill(-1);
    const adjStart = new Int32Array(nc + 1);
    const adj: number[] = [];
    for (let ic = 0; ic < nc; ic++) {
      mark[ic] = ic;
      for (const b of [ib0[ic], ib1[ic]]) {
        if (!dynamic(b)) continue;
        for (let k = ic0[b]; k < ic0[b + 1]; k++) {
          const m = constraintList[k];
          if (mark[m] === ic) continue;
          mark[m] = ic;
          adj.push(m);
        }
      }
      adjStart[ic + 1] = adj.length;
    }
    return { adjStart, adj: Int32Array.from(adj) };
  }

  private isDynamic(b: number): boolean {
    const { inverseMass, inverseInertiaLocal } = this.s.w;
    if (inverseMass[b] > 0) return true;
    for (let k = 0; k < 9; k++) if (inverseInertiaLocal[9 * b + k] !== 0) return true;
    return false;
  }

  /** The factor of A (its ordering and envelope computed on the first call). */
  factorization(): EnvelopeLdlt {
    if (!this.ldlt) {
      const { adjStart, adj } = this.blockGraph();
      this.ldlt = new EnvelopeLdlt(adjStart, adj);
    }
    return this.ldlt;
  }

  /**
   * A = J M⁻¹ Jᵀ (+ α̃ I on soft rows) into the factor's envelope, block by block, from stage 1–3's data:
   * with J_ℓ,k = s [I₃, −[r]×] on body k of joint ℓ (s = +1, r = a on i_ℓ; s = −1, r = b on j_ℓ: the
   * header's J_ℓ V = v_i − v_j + ω_i × a − ω_j × b), each body k adds to every pair ℓ, m of its joints
   *   A_ℓm += s_ℓ s_m (m_k⁻¹ I₃ − [r_ℓ]× I_k⁻¹ [r_m]×)          (J_ℓ,k M_k⁻¹ J_m,kᵀ, [r]×ᵀ = −[r]×)
   * whose ℓ = m terms are stage 3's A_ℓℓ (9) before its inversion.
   */
  assemble(f: EnvelopeLdlt): void {
    const { ib0, inverseMass, bodyCount, connectivity } = this.s.w;
    const { ic0, constraintList } = connectivity;
    const arm = this.s.arm, Ii = this.s.angMassInv, softness = this.s.softness, h = this.h;
    const blk = new Float64Array(9);
    f.clear();
    for (let ib = 0; ib < bodyCount; ib++) {
      if (!this.isDynamic(ib)) continue;
      const mi = inverseMass[ib], io = 9 * ib;
      const i00 = Ii[io], i01 = Ii[io + 1], i02 = Ii[io + 2];
      const i10 = Ii[io + 3], i11 = Ii[io + 4], i12 = Ii[io + 5];
      const i20 = Ii[io + 6], i21 = Ii[io + 7], i22 = Ii[io + 8];
      for (let k1 = ic0[ib]; k1 < ic0[ib + 1]; k1++) {
        const l = constraintList[k1];
        const s1 = ib0[l] === ib ? 1 : -1;
        const uo = 6 * l + (s1 > 0 ? 0 : 3);
        const ux = arm[uo], uy = arm[uo + 1], uz = arm[uo + 2];
        // T = [u]× I⁻¹
        const t00 = uy * i20 - uz * i10, t01 = uy * i21 - uz * i11, t02 = uy * i22 - uz * i12;
        const t10 = uz * i00 - ux * i20, t11 = uz * i01 - ux * i21, t12 = uz * i02 - ux * i22;
        const t20 = ux * i10 - uy * i00, t21 = ux * i11 - uy * i01, t22 = ux * i12 - uy * i02;
        for (let k2 = k1; k2 < ic0[ib + 1]; k2++) {
          const m = constraintList[k2];
          if (k2 > k1 && m === l) continue;
          const s2 = ib0[m] === ib ? 1 : -1;
          const vo = 6 * m + (s2 > 0 ? 0 : 3);
          const vx = arm[vo], vy = arm[vo + 1], vz = arm[vo + 2];
          const s = s1 * s2;
          // s (m⁻¹ I − T [v]×); (T [v]×)_{a0} = t_a1 vz − t_a2 vy, _{a1} = t_a2 vx − t_a0 vz, _{a2} = t_a0 vy − t_a1 vx
          blk[0] = s * (mi - (t01 * vz - t02 * vy));
          blk[1] = -s * (t02 * vx - t00 * vz);
          blk[2] = -s * (t00 * vy - t01 * vx);
          blk[3] = -s * (t11 * vz - t12 * vy);
          blk[4] = s * (mi - (t12 * vx - t10 * vz));
          blk[5] = -s * (t10 * vy - t11 * vx);
          blk[6] = -s * (t21 * vz - t22 * vy);
          blk[7] = -s * (t22 * vx - t20 * vz);
          blk[8] = s * (mi - (t20 * vy - t21 * vx));
          f.addBlock(l, m, blk);
        }
      }
    }
    // soft rows: + α̃ I₃, α̃ = softness / h
    blk.fill(0);
    for (let l = 0; l < this.s.w.constraintCount; l++) {
      const alpha = softness[l] / h;
      if (alpha === 0) continue;
      blk[0] = blk[4] = blk[8] = alpha;
      f.addBlock(l, l, blk);
    }
  }

  /**
   * A λ = b by the sparse direct solve (math/envelope-ldlt.ts): A assembled and factored as L D Lᵀ in its RCM
   * order, λ = L⁻ᵀ D⁺ L⁻¹ b (null pivots give λ's component 0: a solution where b ∈ range(A)), then fixed-precision
   * iterative refinement ([GVL] §3.5.3, [Hig] ch. 12): r = b − Aλ with the matrix-free `apply` (the same A that
   * the convergence test and the iterative solvers use, not the factor's), δ from the factor, λ += δ, kept only
   * where it lowers ‖r‖. One step makes the solve componentwise backward stable in practice (Skeel 1980;
   * [Hig] thm 12.3), a second mops up on near-singular A; refinement runs while ‖r‖ > tolerance ‖b‖, at most
   * maxRefinements steps. The start λ is not used (overwritten). converged: ‖b − Aλ‖ ≤ tolerance ‖b‖; where
   * b ∉ range(A) the dropped directions leave a residual and it is not (the caller then takes least squares).
   * `onIteration` sees λ after the first solve (k = 1) and after each refinement.
   */
  solveDirect(
    b: Float64Array,
    lambda: Float64Array,
    opts: { tolerance: number; onIteration?: (k: number, lambda: Float64Array, residualNorm: number) => void },
  ): DirectSolveResult {
    let bb = 0;
    for (let i = 0; i < b.length; i++) bb += b[i] * b[i];
    const rhsNorm = Math.sqrt(bb);
    if (bb === 0) {
      lambda.fill(0);
      opts.onIteration?.(1, lambda, 0);
      return { residualNorm: 0, rhsNorm: 0, converged: true, refinements: 0, nullPivots: 0 };
    }
    const f = this.factorization();
    this.assemble(f);
    const nullPivots = f.factor();
    f.solve(b, lambda);
    const first = this.residual(b, lambda);
    opts.onIteration?.(1, lambda, first);
    const { residualNorm, refinements } = this.refineWith(f, b, lambda, opts.tolerance * rhsNorm, first, opts.onIteration, minRefinements);
    return { residualNorm, rhsNorm, converged: residualNorm <= opts.tolerance * rhsNorm, refinements, nullPivots };
  }

  /**
   * More refinement of a λ from solveDirect with the factor of the same step's A (solveDirect must have run
   * on this step): towards ‖b − Aλ‖ ≤ tolerance ‖b‖, at most maxRefinements steps. Returns ‖b − Aλ‖.
   */
  refine(b: Float64Array, lambda: Float64Array, tolerance: number): number {
    let bb = 0;
    for (let i = 0; i < b.length; i++) bb += b[i] * b[i];
    return this.refineWith(this.factorization(), b, lambda, tolerance * Math.sqrt(bb), this.residual(b, lambda)).residualNorm;
  }

  /** the residual b − Aλ into the direct solve's scratch (its first half); returns its norm */
  private residual(b: Float64Array, lambda: Float64Array): number {
    const n = this.size;
    const res = (this.directScratch ??= new Float64Array(2 * n)).subarray(0, n);
    this.apply(lambda, res);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      res[i] = b[i] - res[i];
      sum += res[i] * res[i];
    }
    return Math.sqrt(sum);
  }

  /** refinement steps from λ whose residual (norm rn) is in the scratch: λ += L⁻ᵀD⁺L⁻¹ r while that lowers ‖r‖ and ‖r‖ > target */
  private refineWith(
    f: EnvelopeLdlt,
    b: Float64Array,
    lambda: Float64Array,
    target: number,
    rn: number,
    onIteration?: (k: number, lambda: Float64Array, residualNorm: number) => void,
    atLeast = 0,
  ): { residualNorm: number; refinements: number } {
    const n = this.size;
    const scratch = (this.directScratch ??= new Float64Array(2 * n));
    const res = scratch.subarray(0, n), candidate = scratch.subarray(n, 2 * n);
    let refinements = 0;
    for (let step = 0; step < maxRefinements && (rn > target || step < atLeast) && rn > 0; step++) {
      f.solve(res, candidate);
      for (let i = 0; i < n; i++) candidate[i] += lambda[i]; // λ + δ
      const rNew = this.residual(b, candidate);
      if (!(rNew < rn)) break; // no gain: λ stays (the scratch now holds the rejected candidate's residual)
      lambda.set(candidate);
      rn = rNew;
      refinements++;
      onIteration?.(1 + refinements, lambda, rn);
    }
    return { residualNorm: rn, refinements };
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
