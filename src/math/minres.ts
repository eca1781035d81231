/**
 * Matrix-free preconditioned MINRES for A x = b with A symmetric (here: positive
 * semi-definite, possibly singular) — C. C. Paige and M. A. Saunders, "Solution of sparse
 * indefinite systems of linear equations", SIAM J. Numer. Anal. 12 (1975) 617–629. Written
 * here from the method's definition (Lanczos tridiagonalisation, QR of T_k by Givens
 * rotations), in the operator callback style of cg.ts: the caller applies A (out = A v) and,
 * optionally, z = P⁻¹ r for a symmetric positive-definite P = L Lᵀ.
 *
 * What it minimises. With P, MINRES is the plain method on Â y = b̂, Â = L⁻¹ A L⁻ᵀ,
 * b̂ = L⁻¹ b, x = L⁻ᵀ y: x_k minimises ‖b − A x‖_{P⁻¹} = (rᵀ P⁻¹ r)^½ over x₀ + K_k(P⁻¹A, P⁻¹r₀).
 * On an inconsistent system (b ∉ range A: no solution) it converges to a P⁻¹-weighted
 * least-squares solution, A P⁻¹ (b − A x) = 0, where CG breaks down (cg.ts). With P = I that is
 * ordinary least squares, A x = A A⁺ b.
 *
 * The recurrences (k = 1, 2, …; u the unnormalised Lanczos vectors, z = P⁻¹u, β = (uᵀz)^½):
 *   u₁ = r₀ = b − A x₀,  β₁ = (u₁ᵀ P⁻¹ u₁)^½,  v_k = P⁻¹ u_k / β_k
 *   u_{k+1} = A v_k − (α_k/β_k) u_k − (β_k/β_{k−1}) u_{k−1},  α_k = v_kᵀ A v_k
 *   the previous rotation on T_k's new column (β_k, α_k, β_{k+1}) gives ε_k, δ_k, γ̄_k; then
 *   γ_k = (γ̄_k² + β_{k+1}²)^½,  c_k = γ̄_k/γ_k,  s_k = β_{k+1}/γ_k,  φ_k = c_k φ̄_{k−1},  φ̄_k = s_k φ̄_{k−1}
 *   w_k = (v_k − ε_k w_{k−2} − δ_k w_{k−1}) / γ_k,   x_k = x_{k−1} + φ_k w_k
 * and, for nothing, φ̄_k = ‖r̂_k‖ and ‖Â r̂_{k−1}‖ = φ̄_{k−1} (γ̄_k² + (c_{k−1} β_{k+1})²)^½; ‖Â‖ is estimated
 * by the largest column of T seen, (β_k² + α_k² + β_{k+1}²)^½ ≤ ‖Â‖ (the estimate of MINRES-QLP, Choi,
 * Paige & Saunders 2011; unlike ‖T_k‖_F it does not grow with k). A w_k follows the same recurrence
 * as w_k (A v_k is computed anyway), so r_k = r_{k−1} − φ_k A w_k is kept explicitly and the
 * Euclidean ‖r‖₂ of the stopping test is the one cg.ts tests.
 *
 * Stopping:
 *   - ‖b − A x‖₂ ≤ max(tolerance ‖b‖₂, absoluteTolerance): a solution (consistent system);
 *   - the least-squares test ‖Â r̂‖ ≤ lsTolerance · ‖Â‖ ‖r̂‖: what is left of r is P⁻¹-orthogonal to
 *     range(A) up to lsTolerance, so x is a least-squares solution and b is not in range(A). It is
 *     known for x_{k−1} before x_k is formed, and MINRES stops there without taking the step;
 *   - a step that runs off: on an inconsistent system the Krylov space holds a null vector of A,
 *     T_k tends to a singular matrix as the Ritz value for it tends to 0, and its last steps go along
 *     that null vector with length ~1/γ_k (in exact arithmetic harmless, A x does not change; in f64
 *     x grows by many orders and rounding of A x swamps the residual — the weakness MINRES-QLP
 *     repairs). A step that would take ‖x‖ beyond `runOff` times its scale (‖x‖ at the start of the
 *     run, or at the kept iterate) is not taken;
 *   - the iteration cap, or an estimated condition of T_k ≥ 0.1/ε.
 * The iterate with the smallest least-squares measure is kept, and on exit the residual and that
 * measure are recomputed from x (and from the kept iterate, if it differs): what is returned, and
 * whether it is reported converged, rests on those, never on the recurrences alone. A stop on the
 * recurrence's residual that x does not bear out restarts from x, at most `restarts` times, as in cg.ts.
 *
 * No allocation per call when a MinresWorkspace of the right size is passed in.
 */

export interface MinresOptions {
  /** relative tolerance on ‖b − A x‖₂ / ‖b‖₂ (default 1e-10) */
  tolerance?: number;
  /** absolute tolerance on ‖b − A x‖₂ (default 0) */
  absoluteTolerance?: number;
  /** least-squares tolerance on ‖Â r̂‖ / (‖Â‖ ‖r̂‖) (default 1e-8) */
  lsTolerance?: number;
  /** default: 10 · n + 10 */
  maxIterations?: number;
  /** z = P⁻¹ r for a symmetric positive-definite P (default: identity) */
  precondition?: (r: Float64Array, z: Float64Array) => void;
  /** called with the Euclidean ‖r‖₂ after each iteration k = 0, 1, … (k = 0: the starting guess) */
  onIteration?: (k: number, residualNorm: number) => void;
  /** the vectors to work in (default: allocated for this call) */
  workspace?: MinresWorkspace;
  /** restarts from x allowed when the recurrence's residual is not borne out by x (default 4) */
  restarts?: number;
  /** a step that would take ‖x‖ beyond this times its scale (at the start, or at the kept iterate) is not taken (default 1e3) */
  runOff?: number;
}

export interface MinresResult {
  /** iterations used (products with A, not counting the residuals recomputed from x) */
  iterations: number;
  /** ‖b − A x‖₂ at exit, recomputed from x */
  residualNorm: number;
  /** ‖b‖₂ */
  rhsNorm: number;
  /** ‖b − A x‖₂ ≤ tolerance ‖b‖₂ (or the absolute tolerance), or the least-squares test met */
  converged: boolean;
  /**
   * converged by the least-squares test and not by the residual: b is (to the tolerances) not in
   * range(A), x is a least-squares solution, and ‖b − A x‖_{P⁻¹} is the least there is
   */
  leastSquares: boolean;
  /** ‖Â r̂‖ / (‖Â‖ ‖r̂‖) at exit, recomputed from x (0 when r = 0), with the recurrence's ‖Â‖ */
  normalResidual: number;
  /** the estimate of ‖Â‖ = ‖L⁻¹ A L⁻ᵀ‖ */
  operatorNorm: number;
  /** what ended the last Lanczos run (the answer itself is judged from x, see converged) */
  stop: MinresStop;
}

/**
 * residual: the recurrence's ‖r‖ met the tolerance; least-squares: its least-squares measure did;
 * run-off: the next step would have run off along a null vector of A; invariant: β = 0; condition:
 * T_k's condition estimate reached 0.1/ε; cap: maxIterations; start: nothing to do (r = 0 or P⁻¹r = 0)
 */
export type MinresStop = 'residual' | 'least-squares' | 'run-off' | 'invariant' | 'condition' | 'cap' | 'start';

/** The vectors one solve of size n works in; reusable across solves of that size. */
export class MinresWorkspace {
  readonly r: Float64Array;
  readonly v: Float64Array;
  readonly av: Float64Array;
  /** the iterate with the least least-squares measure so far */
  readonly best: Float64Array;
  /** Lanczos u_{k−1}, u_k, and u_{k+1} / z_{k+1}; w_k, w_{k−1}, w_{k−2} and A times each (rotated by reference) */
  u1: Float64Array;
  u2: Float64Array;
  y: Float64Array;
  w: Float64Array;
  w1: Float64Array;
  w2: Float64Array;
  aw: Float64Array;
  aw1: Float64Array;
  aw2: Float64Array;
  constructor(readonly n: number) {
    const f = () => new Float64Array(n);
    this.r = f();
    this.v = f();
    this.av = f();
    this.best = f();
    this.u1 = f();
    this.u2 = f();
    this.y = f();
    this.w = f();
    this.w1 = f();
    this.w2 = f();
    this.aw = f();
    this.aw1 = f();
    this.aw2 = f();
  }
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

const identity = (r: Float64Array, z: Float64Array) => z.set(r);

/**
 * Default least-squares tolerance. In f64 the measure ‖Â r̂‖/(‖Â‖ ‖r̂‖) does not fall for ever: it bottoms
 * out (at rounding, growing with the condition of A on its range, as LSQR's ATOL does) when the Krylov space
 * has taken in the null vector and T_k turns singular. On drifted redundant nets (planar 4 × 4 to 8 × 8
 * joint grids, κ⁺ = ‖Â‖‖Â⁺‖ ≈ 3e3 to 2e5) that floor was 1e-12 to 1e-8: at 1e-9, 47 to 99 % of the steps of
 * a 120-frame run ended unconverged; at 1e-8, 0 to 3 %. The motion it leaves is within ‖Â r̂‖/σ⁺^{3/2} of the
 * exact least-squares motion (test/global.test.ts: 9e-12 of the impulse, measured).
 */
export const defaultLsTolerance = 1e-8;

/**
 * Solve A x = b, or where b ∉ range(A) min ‖b − A x‖_{P⁻¹}, in place from the x given (a warm start).
 * @param apply out = A v; must not keep references to v or out.
 */
export function minres(
  apply: (v: Float64Array, out: Float64Array) => void,
  b: Float64Array,
  x: Float64Array,
  opts: MinresOptions = {},
): MinresResult {
  const n = b.length;
  if (x.length !== n) throw new Error(`MINRES: x has ${x.length} entries, b has ${n}`);
  const ws = opts.workspace ?? new MinresWorkspace(n);
  if (ws.n !== n) throw new Error(`MINRES: workspace of size ${ws.n} for a system of size ${n}`);
  const tol = opts.tolerance ?? 1e-10;
  const lsTol = opts.lsTolerance ?? defaultLsTolerance;
  const maxIt = opts.maxIterations ?? 10 * n + 10;
  const maxRestarts = opts.restarts ?? 4;
  const runOff = opts.runOff ?? 1e3;
  const pre = opts.precondition ?? identity;
  const eps = Number.EPSILON;
  const rhsNorm = Math.sqrt(dot(b, b));
  const target = Math.max(tol * rhsNorm, opts.absoluteTolerance ?? 0);
  const { r, v, av, best } = ws;

  /** r = b − A x (true); returns ‖r‖₂ */
  const trueResidual = () => {
    apply(x, av);
    for (let i = 0; i < n; i++) r[i] = b[i] - av[i];
    return Math.sqrt(dot(r, r));
  };
  let anorm = 0; // the estimate of ‖Â‖: the largest seen, over restarts too
  /**
   * The least-squares measure ‖Â r̂‖ / (‖Â‖ ‖r̂‖) of the r in ws.r, r̂ = L⁻¹ r: ‖r̂‖² = rᵀP⁻¹r and
   * ‖Â r̂‖² = (A P⁻¹ r)ᵀ P⁻¹ (A P⁻¹ r). Leaves r alone (scratch: v, av, y).
   */
  const lsMeasure = () => {
    pre(r, v);
    const rr = dot(r, v);
    if (!(rr > 0)) return 0; // r = 0, or r in the null space of P⁻¹: nothing left to reach
    apply(v, av);
    pre(av, ws.y);
    const aa = Math.max(0, dot(av, ws.y));
    return anorm > 0 ? Math.sqrt(aa / rr) / anorm : Infinity;
  };

  let rn = trueResidual();
  opts.onIteration?.(0, rn);
  let k = 0;
  let bestT = Infinity; // the least-squares estimate of the kept iterate
  let haveBest = false;
  let stop: MinresStop = 'start';
  for (let restart = 0; restart <= maxRestarts && rn > target && k < maxIt; restart++) {
    // --- a Lanczos run from the current x: u₁ = r, z₁ = P⁻¹ r, β₁ = ‖r‖_{P⁻¹} ---
    let u1 = ws.u1, u2 = ws.u2, y = ws.y;
    let w = ws.w, w1 = ws.w1, w2 = ws.w2, aw = ws.aw, aw1 = ws.aw1, aw2 = ws.aw2;
    u2.set(r);
    pre(u2, y);
    const beta1sq = dot(u2, y);
    if (!(beta1sq > 0)) {
      stop = 'start';
      break; // P⁻¹ r = 0: nothing the preconditioned space can reach
    }
    stop = 'cap';
    let beta = Math.sqrt(beta1sq), oldb = 0;
    let cs = -1, sn = 0, dbar = 0, epsln = 0;
    let phibar = beta;
    let gmax = 0, gmin = Infinity;
    // the run-off guard's scale: ‖x‖ at the start of the run and at the kept (best) iterate
    let xx = dot(x, x), xRef = Math.sqrt(xx);
    u1.fill(0);
    w.fill(0);
    w1.fill(0);
    aw.fill(0);
    aw1.fill(0);
    let first = true;
    let recurrenceMet = false;
    while (k < maxIt) {
      // Lanczos: v_k = z_k/β_k, u_{k+1} = A v_k − (α_k/β_k) u_k − (β_k/β_{k−1}) u_{k−1}
      const s = 1 / beta;
      for (let i = 0; i < n; i++) v[i] = s * y[i];
      apply(v, av);
      k++;
      const c1 = first ? 0 : beta / oldb;
      for (let i = 0; i < n; i++) y[i] = av[i] - c1 * u1[i];
      const alfa = dot(v, y);
      const c2 = alfa / beta;
      for (let i = 0; i < n; i++) y[i] -= c2 * u2[i];
      // (u_{k−1}, u_k, u_{k+1}) ← (u_k, u_{k+1}, free); z_{k+1} = P⁻¹ u_{k+1}
      const free = u1;
      u1 = u2;
      u2 = y;
      y = free;
      pre(u2, y);
      oldb = beta;
      const betaSq = dot(u2, y);
      beta = betaSq > 0 ? Math.sqrt(betaSq) : 0; // 0: the Krylov space is invariant
      const above = first ? 0 : oldb; // β_k above the diagonal (β₁ = ‖r₀‖ is no entry of T)
      anorm = Math.max(anorm, Math.sqrt(above * above + alfa * alfa + beta * beta));
      first = false;
      // the previous rotation on the new column of T, then the new rotation
      const oldeps = epsln;
      const delta = cs * dbar + sn * alfa;
      const gbar = sn * dbar - cs * alfa;
      epsln = sn * beta;
      dbar = -cs * beta;
      // least-squares measure of the current x (x_{k−1}): stop before stepping if it is met
      const t = anorm > 0 ? Math.hypot(gbar, dbar) / anorm : Infinity;
      if (t < bestT) {
        bestT = t;
        best.set(x);
        haveBest = true;
        xRef = Math.max(xRef, Math.sqrt(xx));
      }
      if (t <= lsTol) {
        opts.onIteration?.(k, rn);
        stop = 'least-squares';
        break;
      }
      let gamma = Math.hypot(gbar, beta);
      if (gamma === 0) gamma = eps;
      cs = gbar / gamma;
      sn = beta / gamma;
      const phi = cs * phibar;
      phibar = sn * phibar;
      gmax = Math.max(gmax, gamma);
      gmin = Math.min(gmin, gamma);
      // w_k = (v_k − ε_k w_{k−2} − δ_k w_{k−1})/γ_k, and A w_k alike
      const tw = w2, taw = aw2;
      w2 = w1;
      aw2 = aw1;
      w1 = w;
      aw1 = aw;
      w = tw;
      aw = taw;
      const g = 1 / gamma;
      let ww = 0, xw = 0;
      for (let i = 0; i < n; i++) {
        const wi = (v[i] - oldeps * w2[i] - delta * w1[i]) * g;
        w[i] = wi;
        aw[i] = (av[i] - oldeps * aw2[i] - delta * aw1[i]) * g;
        ww += wi * wi;
        xw += x[i] * wi;
      }
      // ‖x + φ w‖² without forming it: a step that would take x beyond runOff × its scale is not taken
      const xxNext = xx + 2 * phi * xw + phi * phi * ww;
      if (xRef > 0 && xxNext > runOff * runOff * xRef * xRef) {
        opts.onIteration?.(k, rn); // it runs off along a null vector of A: keep x_{k−1}
        stop = 'run-off';
        break;
      }
      // x += φ w, r −= φ A w
      let rr = 0;
      xx = 0;
      for (let i = 0; i < n; i++) {
        const xi = (x[i] += phi * w[i]);
        xx += xi * xi;
        const ri = (r[i] -= phi * aw[i]);
        rr += ri * ri;
      }
      if (xRef === 0) xRef = Math.sqrt(xx); // a cold start: the first step sets the scale
      rn = k % 50 === 0 ? trueResidual() : Math.sqrt(rr);
      opts.onIteration?.(k, rn);
      if (rn <= target) {
        recurrenceMet = true;
        stop = 'residual';
        break;
      }
      if (beta === 0) {
        stop = 'invariant'; // x is the best in the whole (invariant) Krylov space
        break;
      }
      if (gmax >= (0.1 / eps) * gmin) {
        stop = 'condition'; // T_k as ill-conditioned as f64 can see
        break;
      }
    }
    ws.u1 = u1;
    ws.u2 = u2;
    ws.y = y;
    ws.w = w;
    ws.w1 = w1;
    ws.w2 = w2;
    ws.aw = aw;
    ws.aw1 = aw1;
    ws.aw2 = aw2;
    rn = trueResidual();
    if (!recurrenceMet || rn <= target) break; // restart only where the recurrence's residual lied
  }

  // what is returned rests on residuals recomputed from x (and from the kept iterate)
  let normal = 0;
  if (rn > target) {
    normal = lsMeasure();
    if (haveBest && normal > lsTol) {
      const last = ws.u1; // the Lanczos vectors are free now
      last.set(x);
      x.set(best);
      const rnBest = trueResidual();
      const normalBest = rnBest <= target ? 0 : lsMeasure();
      if (normalBest < normal) {
        rn = rnBest;
        normal = normalBest;
      } else {
        x.set(last);
        rn = trueResidual();
      }
    }
  }
  const solved = rn <= target;
  const leastSquares = !solved && normal <= lsTol;
  return { iterations: k, residualNorm: rn, rhsNorm, converged: solved || leastSquares, leastSquares, normalResidual: solved ? 0 : normal, operatorNorm: anorm, stop };
}
