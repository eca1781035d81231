/**
 * Matrix-free (preconditioned) conjugate gradient for A x = b with A symmetric
 * positive semi-definite: the global multiplier solve of the Witkin formulation
 * (J W Jᵀ λ = …, witkin-constrained-dynamics-slides, "Solving for λ") and of the
 * rigid reference solver (A = J M⁻¹ Jᵀ). A is never formed: the caller applies it
 * (J, then W, then Jᵀ), and optionally a preconditioner z = P⁻¹ r.
 *
 * Hestenes–Stiefel with preconditioning (Shewchuk, "An Introduction to the
 * Conjugate Gradient Method Without the Agonizing Pain", §B3):
 *   r = b − A x,  z = P⁻¹ r,  d = z,  δ = rᵀz
 *   repeat:  q = A d,  α = δ / dᵀq,  x += α d,  r −= α q,
 *            z = P⁻¹ r,  δ' = rᵀz,  d = z + (δ'/δ) d,  δ = δ'
 * stopping when ‖r‖₂ ≤ tolerance · ‖b‖₂ (or ‖r‖₂ ≤ absoluteTolerance).
 * Every few dozen iterations r is recomputed as b − A x, so rounding in the
 * recurrence does not let the reported residual part from the true one.
 *
 * With A singular (redundant constraints) and b in its range, CG stays in the
 * range and converges. With b outside it (no solution), ‖r‖ first falls to the
 * least residual possible, ‖P_null b‖, and then CG breaks down: dᵀAd → 0 while
 * rᵀz does not, the steps along null(A) grow without bound, and rounding turns
 * them into a residual far above ‖b‖. So the iterate with the smallest residual
 * seen is kept, and a solve that ends unconverged returns it (as MATLAB's pcg
 * does), with converged: false. A curvature dᵀAd ≤ 0 (A not PSD, or converged to
 * rounding) stops the iteration without dividing by zero.
 */

export interface CgOptions {
  /** relative tolerance on ‖b − A x‖₂ / ‖b‖₂ (default 1e-10) */
  tolerance?: number;
  /** absolute tolerance on ‖b − A x‖₂ (default 0) */
  absoluteTolerance?: number;
  /** default: 10 · n + 10 (exact arithmetic needs at most n) */
  maxIterations?: number;
  /** z = P⁻¹ r for a symmetric positive-definite P (default: identity) */
  precondition?: (r: Float64Array, z: Float64Array) => void;
  /** called with ‖r‖₂ after each iteration k = 0, 1, …  (k = 0: the starting guess) */
  onIteration?: (k: number, residualNorm: number) => void;
  /**
   * stop (unconverged, `stalled`) after this many iterations in a row without a new smallest residual
   * (default: never). On a system with no solution the residual never again falls below its least
   * value after CG first reaches it; a caller with a least-squares solver to hand (minres.ts) can
   * stop there instead of at maxIterations.
   */
  stallWindow?: number;
}

export interface CgResult {
  /** iterations used (matrix-vector products after the first) */
  iterations: number;
  /** ‖b − A x‖₂ at exit, recomputed from x */
  residualNorm: number;
  /** ‖b‖₂ */
  rhsNorm: number;
  converged: boolean;
  /** stopped by `stallWindow` */
  stalled?: boolean;
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/**
 * Solve A x = b in place, starting from the x given (a warm start; zeros for none).
 * @param apply out = A v; must not keep references to v or out.
 */
export function conjugateGradient(
  apply: (v: Float64Array, out: Float64Array) => void,
  b: Float64Array,
  x: Float64Array,
  opts: CgOptions = {},
): CgResult {
  const n = b.length;
  if (x.length !== n) throw new Error(`conjugate gradient: x has ${x.length} entries, b has ${n}`);
  const tol = opts.tolerance ?? 1e-10;
  const maxIt = opts.maxIterations ?? 10 * n + 10;
  const r = new Float64Array(n), z = new Float64Array(n), d = new Float64Array(n), q = new Float64Array(n);
  const pre = opts.precondition ?? ((rr: Float64Array, zz: Float64Array) => zz.set(rr));
  const rhsNorm = Math.sqrt(dot(b, b));
  const target = Math.max(tol * rhsNorm, opts.absoluteTolerance ?? 0);

  const trueResidual = () => {
    apply(x, q);
    for (let i = 0; i < n; i++) r[i] = b[i] - q[i];
    return Math.sqrt(dot(r, r));
  };
  let rn = trueResidual();
  opts.onIteration?.(0, rn);
  let k = 0;
  // the iterate with the smallest residual seen (returned if the solve ends unconverged); copied lazily
  let best: Float64Array | null = null;
  let bestNorm = rn;
  let bestIsX = true; // x is (still) the best iterate
  const window = opts.stallWindow ?? Infinity;
  let sinceBest = 0;
  let stalled = false;
  // restarts from the current x when the recurrence's ‖r‖ met the target but the true one did not
  for (let restart = 0; restart < 4 && rn > target && k < maxIt && !stalled; restart++) {
    pre(r, z);
    d.set(z);
    let delta = dot(r, z);
    while (k < maxIt) {
      apply(d, q);
      const curvature = dot(d, q);
      if (!(curvature > 0) || !(delta > 0)) break;
      if (bestIsX) (best ??= new Float64Array(n)).set(x); // x is about to move: keep the best so far
      const alpha = delta / curvature;
      for (let i = 0; i < n; i++) {
        x[i] += alpha * d[i];
        r[i] -= alpha * q[i];
      }
      k++;
      rn = k % 50 === 0 ? trueResidual() : Math.sqrt(dot(r, r));
      bestIsX = rn < bestNorm;
      if (bestIsX) bestNorm = rn;
      sinceBest = bestIsX ? 0 : sinceBest + 1;
      opts.onIteration?.(k, rn);
      if (rn <= target) break;
      if (sinceBest >= window) {
        stalled = true;
        break;
      }
      pre(r, z);
      const deltaNew = dot(r, z);
      const beta = deltaNew / delta;
      for (let i = 0; i < n; i++) d[i] = z[i] + beta * d[i];
      delta = deltaNew;
    }
    rn = trueResidual();
    if (rn > target && !bestIsX && best) {
      // unconverged, and an earlier iterate had a smaller residual: go back to it if it truly has
      const last = x.slice();
      x.set(best);
      const rnBest = trueResidual();
      if (rnBest < rn) rn = rnBest;
      else {
        x.set(last);
        rn = trueResidual();
      }
      bestIsX = true;
    }
    bestNorm = Math.min(bestNorm, rn);
  }
  return { iterations: k, residualNorm: rn, rhsNorm, converged: rn <= target, ...(stalled && rn > target ? { stalled: true } : {}) };
}
