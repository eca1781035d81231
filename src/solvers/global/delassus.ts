/**
 * The global multiplier system of the Jacobi text on constraint rows, matrix-free, for the solvers
 * that keep the rows' per-step data (jacobi-cpu, gs-cpu, global-cpu: rows/block-solver.ts):
 *
 *   (A + Γ) λ = b,   A = J M⁻¹ Jᵀ, Γ = diag(γ) (soft rows, rows/softness.ts)      (36)
 *                    b_r = −h⁻¹ (J_r V* + biasRate_r C_r)                          (8)
 *
 * (the rows' signs: impulse +h Jᵀλ; for a point joint both J and C are the negatives of the
 * text's, so b and λ are the text's), so that r = b − (A + Γ)λᵏ is exactly the residual jacobi-cpu
 * reports: −h⁻¹(J_r Vᵏ + biasRate_r C_r + h γ_r λ_r) with Vᵏ = V* + h M⁻¹ Jᵀ λᵏ (5).
 * Bounds are not part of this system: it is the equality solve (every row's λ free).
 *
 * For the iterative solves A is never formed; global-cpu's direct solve assembles it entry by
 * entry into the envelope of its LDLᵀ (assemble, solveDirect), in the row blocks' graph. A λ is
 * Jᵀ, then M⁻¹, then J, in two passes over the rows, the same gather as update_velocities (34):
 *   per body i (the body → row CSR):  W_i = M_i⁻¹ Σ_r∋i J_r,iᵀ λ_r      (rows.ts gatherImpulse, s = 1)
 *   per row r:                        (A λ)_r = J_r W + γ_r λ_r          (rows.ts blockVelocity)
 *
 * Invariants: reads the rows' stage-3 data (J, C, biasRate, γ, the block inverses) and V* (the
 * compiled world's velocities, which hold V* from stage 2 until stage 5); writes only its own
 * scratch and the caller's output arrays, so it can run in the middle of a Jacobi solve without
 * changing it.
 */
import type { RowBlockSolver } from '../../rows/block-solver.js';
import { blockVelocity, entryRows, JACOBIAN_STRIDE } from '../../rows/rows.js';
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

/** What the operator reads of a row-based solver (its step's data). */
export interface DelassusSource {
  rowSolver: RowBlockSolver;
  /** the solver step h = dt / substeps */
  h: number;
  /** V* (stage 2's free velocity) */
  linearVelocity: Float64Array;
  angularVelocity: Float64Array;
  /** world-frame I⁻¹, 9 per body (stage 1) */
  inverseInertia: Float64Array;
  bodyCount: number;
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

  private readonly zeros: Float64Array;
  /** J V of one block's rows */
  private readonly jv: Float64Array;

  constructor(private readonly s: DelassusSource) {
    this.wLin = new Float64Array(3 * s.bodyCount);
    this.wAng = new Float64Array(3 * s.bodyCount);
    this.zeros = new Float64Array(3 * s.bodyCount);
    this.jv = new Float64Array(Math.max(1, s.rowSolver.rows.largestBlock()));
    this.size = s.rowSolver.rows.count;
    this.h = s.h;
    this.scratch = new Float64Array(this.size);
  }

  /** out = b, b_r = −h⁻¹ (J_r V* + biasRate_r C_r) (8; header). */
  rhs(out: Float64Array): void {
    const rows = this.s.rowSolver.rows;
    const invH = 1 / this.h;
    const z = this.zeros;
    for (let b = 0; b < rows.blockCount; b++) {
      const r0 = rows.blockStart[b], r1 = rows.blockStart[b + 1];
      blockVelocity(rows, b, this.s.linearVelocity, this.s.angularVelocity, z, z, this.jv);
      for (let r = r0; r < r1; r++) out[r] = -invH * (this.jv[r - r0] + rows.biasRate[r] * rows.error[r]);
    }
  }

  /** out = (A + Γ) λ = J M⁻¹ Jᵀ λ + γ λ, in two sparse passes (see the header). */
  apply(lambda: Float64Array, out: Float64Array): void {
    const rows = this.s.rowSolver.rows;
    const wl = this.wLin, wa = this.wAng, z = this.zeros;
    // W_i = M_i⁻¹ Σ_r∋i J_r,iᵀ λ_r: update_velocities' gather (34) with 1 in place of its h
    this.s.rowSolver.gather(1, this.s.inverseInertia, wl, wa, lambda);
    for (let b = 0; b < rows.blockCount; b++) {
      const r0 = rows.blockStart[b], r1 = rows.blockStart[b + 1];
      blockVelocity(rows, b, wl, wa, z, z, this.jv);
      for (let r = r0; r < r1; r++) out[r] = this.jv[r - r0] + rows.gamma[r] * lambda[r];
    }
  }

  /** z = D⁻¹ r, D the block diagonal A_bb + Γ_b, whose inverses stage 3 stored (RowBlockSolver.blockMatrix). */
  precondition(r: Float64Array, z: Float64Array): void {
    const rs = this.s.rowSolver;
    const { blockStart, blockCount } = rs.rows;
    const M = rs.blockMatrix;
    for (let b = 0; b < blockCount; b++) {
      const r0 = blockStart[b], n = blockStart[b + 1] - r0, o = rs.blockMatrixStart[b];
      for (let p = 0; p < n; p++) {
        let sum = 0;
        for (let q = 0; q < n; q++) sum += M[o + p * n + q] * r[r0 + q];
        z[r0 + p] = sum;
      }
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
   * The block graph of A over the rows' blocks: blocks b ≠ c are adjacent where a row of each acts on a
   * common dynamic body (A_pq = Σ_k J_p,k M_k⁻¹ J_q,kᵀ over their common bodies k; a fixed body or world
   * anchor has M_k⁻¹ = 0 and couples nothing — it has no entries in the body → row CSR). CSR, both
   * directions. Fixed per topology.
   */
  blockGraph(): { adjStart: Int32Array; adj: Int32Array } {
    const rs = this.s.rowSolver;
    const rows = rs.rows;
    const { start, entry } = rs.conn;
    const blockOfRow = new Int32Array(rows.count);
    for (let b = 0; b < rows.blockCount; b++) blockOfRow.fill(b, rows.blockStart[b], rows.blockStart[b + 1]);
    const nb = rows.blockCount;
    const mark = new Int32Array(nb).fill(-1);
    const adjStart = new Int32Array(nb + 1);
    const adj: number[] = [];
    for (let b = 0; b < nb; b++) {
      mark[b] = b;
      for (let r = rows.blockStart[b]; r < rows.blockStart[b + 1]; r++)
        for (const body of [rows.bodyA[r], rows.bodyB[r]])
          for (let k = start[body]; k < start[body + 1]; k++) {
            const c = blockOfRow[entryRows(rows, entry[k])[0]];
            if (mark[c] === b) continue;
            mark[c] = b;
            adj.push(c);
          }
      adjStart[b + 1] = adj.length;
    }
    return { adjStart, adj: Int32Array.from(adj) };
  }

  /** The factor of A (its ordering and envelope computed on the first call). */
  factorization(): EnvelopeLdlt {
    if (!this.ldlt) {
      const { adjStart, adj } = this.blockGraph();
      const rows = this.s.rowSolver.rows;
      this.ldlt = new EnvelopeLdlt(adjStart, adj, undefined, rows.blockStart.slice(0, rows.blockCount + 1));
    }
    return this.ldlt;
  }

  /**
   * A + Γ into the factor's envelope, entry by entry, from stage 1–3's data: each dynamic body k adds
   * to every pair of its rows p, q (sides s_p, s_q: J_vA, J_ωA or J_vB, J_ωB)
   *   A_pq += J_v,p · J_v,q m_k⁻¹ + J_ω,p · I_k⁻¹ J_ω,q          (J_p,k M_k⁻¹ J_q,kᵀ)
   * whose p, q within one block are stage 3's A_bb before its inversion; then γ_p on the diagonal.
   */
  assemble(f: EnvelopeLdlt): void {
    const rs = this.s.rowSolver;
    const rows = rs.rows;
    const J = rows.jacobian;
    const I = this.s.inverseInertia;
    const inverseMass = rs.inverseMass;
    const { start, entry } = rs.conn;
    f.clear();
    const side: number[] = [], row: number[] = []; // the body's rows, expanded from its CSR entries
    for (let body = 0; body < this.s.bodyCount; body++) {
      const mi = inverseMass[body], io = 9 * body;
      const i00 = I[io], i01 = I[io + 1], i02 = I[io + 2];
      const i10 = I[io + 3], i11 = I[io + 4], i12 = I[io + 5];
      const i20 = I[io + 6], i21 = I[io + 7], i22 = I[io + 8];
      side.length = row.length = 0;
      for (let k = start[body]; k < start[body + 1]; k++) {
        const [first, n, s] = entryRows(rows, entry[k]);
        for (let r = first; r < first + n; r++) (row.push(r), side.push(s));
      }
      for (let k1 = 0; k1 < row.length; k1++) {
        const p = row[k1], jp = JACOBIAN_STRIDE * p + 6 * side[k1];
        // u = I⁻¹ J_ω,p
        const ux = i00 * J[jp + 3] + i01 * J[jp + 4] + i02 * J[jp + 5];
        const uy = i10 * J[jp + 3] + i11 * J[jp + 4] + i12 * J[jp + 5];
        const uz = i20 * J[jp + 3] + i21 * J[jp + 4] + i22 * J[jp + 5];
        for (let k2 = k1; k2 < row.length; k2++) {
          const q = row[k2], jq = JACOBIAN_STRIDE * q + 6 * side[k2];
          const v = mi * (J[jp] * J[jq] + J[jp + 1] * J[jq + 1] + J[jp + 2] * J[jq + 2]) + ux * J[jq + 3] + uy * J[jq + 4] + uz * J[jq + 5];
          f.addEntry(p, q, v);
        }
      }
    }
    // soft rows: + γ on the diagonal
    for (let r = 0; r < rows.count; r++) if (rows.gamma[r] !== 0) f.addEntry(r, r, rows.gamma[r]);
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
