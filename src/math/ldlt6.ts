/**
 * A dense 6×6 LDLᵀ solve, for AVBD's per-body Newton step (solvers/avbd: H Δx = f, H symmetric
 * positive definite by construction, Giles et al. 2025 eq. 4 and §3.5).
 *
 *   H = L D Lᵀ, L unit lower triangular, D diagonal:
 *     D_j   = H_jj − Σ_{k<j} L_jk² D_k
 *     L_ij  = (H_ij − Σ_{k<j} L_ik L_jk D_k) / D_j          (i > j)
 *   then L z = f (forward), D w = z, Lᵀ Δx = w (backward).
 *
 * Reads the lower triangle of `h` (row-major, 36 entries) and overwrites it with L (below the
 * diagonal) and D (on it); `x` holds f on entry and Δx on return. No pivoting: an SPD H needs none.
 * A pivot D_j ≤ 0 (H not positive definite: a body with no mass) is answered by zeroing that
 * direction's step rather than dividing by it, so the step is finite.
 */
export function solveLdlt6(h: Float64Array, x: Float64Array): void {
  for (let j = 0; j < 6; j++) {
    let d = h[7 * j];
    for (let k = 0; k < j; k++) d -= h[6 * j + k] * h[6 * j + k] * h[7 * k];
    h[7 * j] = d;
    const inv = d > 0 ? 1 / d : 0;
    for (let i = j + 1; i < 6; i++) {
      let s = h[6 * i + j];
      for (let k = 0; k < j; k++) s -= h[6 * i + k] * h[6 * j + k] * h[7 * k];
      h[6 * i + j] = s * inv;
    }
  }
  for (let i = 0; i < 6; i++) {
    let s = x[i];
    for (let k = 0; k < i; k++) s -= h[6 * i + k] * x[k];
    x[i] = s;
  }
  for (let i = 0; i < 6; i++) x[i] = h[7 * i] > 0 ? x[i] / h[7 * i] : 0;
  for (let i = 5; i >= 0; i--) {
    let s = x[i];
    for (let k = i + 1; k < 6; k++) s -= h[6 * k + i] * x[k];
    x[i] = s;
  }
}
