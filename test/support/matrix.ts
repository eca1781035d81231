/** Small dense-matrix helpers and the block condition number the GPU-against-CPU tests derive their f32 bounds from. */
import assert from 'node:assert/strict';
import type { JacobiCpuSolver } from '../../src/solvers/jacobi/cpu.js';
import type { GlobalCpuSolver } from '../../src/solvers/global/cpu.js';
import type { DelassusOperator } from '../../src/solvers/global/delassus.js';
import { blockDelassus, pointBlockDelassus } from '../../src/rows/rows.js';

export type Mat = Float64Array[];
/** ‖x‖₂ */
export const norm2 = (x: ArrayLike<number>) => Math.sqrt(Array.from(x).reduce((s, v) => s + v * v, 0));
/** ‖A‖_F */
export const frobenius = (A: Mat) => Math.sqrt(A.reduce((s, row) => s + row.reduce((t, v) => t + v * v, 0), 0));

/** A⁻¹ by Gauss–Jordan with partial pivoting (A small and nonsingular). */
export function inverse(A: Mat): Mat {
  const n = A.length;
  const M = A.map((row, i) => Float64Array.from([...row, ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]));
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let i = c + 1; i < n; i++) if (Math.abs(M[i][c]) > Math.abs(M[p][c])) p = i;
    [M[c], M[p]] = [M[p], M[c]];
    const d = M[c][c];
    assert.ok(Math.abs(d) > 0, 'A is singular');
    for (let j = 0; j < 2 * n; j++) M[c][j] /= d;
    for (let i = 0; i < n; i++) {
      if (i === c) continue;
      const f = M[i][c];
      for (let j = 0; j < 2 * n; j++) M[i][j] -= f * M[c][j];
    }
  }
  return M.map((row) => row.slice(n));
}

/**
 * κ = max over blocks of ‖A_bb + γ‖∞ ‖(A_bb + γ)⁻¹‖∞ after the CPU solver's last stage 3, A formed as
 * the CPU's prepare forms it (a rigid point joint's block from its lever arms).
 */
export function largestBlockCondition(cpu: JacobiCpuSolver): number {
  const rs = cpu.rowSolver, rows = rs.rows;
  let kappa = 1;
  for (let b = 0; b < rows.blockCount; b++) {
    const r0 = rows.blockStart[b], n = rows.blockStart[b + 1] - r0;
    const A = new Float64Array(n * n);
    if (rows.pointBlock[b] === 1) pointBlockDelassus(rows, b, rs.inverseMass, cpu.angMassInv, A, 0);
    else blockDelassus(rows, r0, r0 + n, rs.inverseMass, cpu.angMassInv, A, 0);
    for (let p = 0; p < n; p++) A[p * n + p] += rows.gamma[r0 + p];
    const inv = rs.blockMatrix.subarray(rs.blockMatrixStart[b], rs.blockMatrixStart[b] + n * n);
    const rowSum = (m: ArrayLike<number>) => Math.max(...Array.from({ length: n }, (_, p) => Array.from({ length: n }, (_, q) => Math.abs(m[p * n + q])).reduce((s, x) => s + x, 0)));
    kappa = Math.max(kappa, rowSum(A) * rowSum(inv));
  }
  return kappa;
}

/** The CPU's step system (after its step): A dense by A e_j, b, and C = M⁻¹ Jᵀ in the (v, ℓ ω) coordinates. */
export function cpuSystem(cpu: GlobalCpuSolver, size: number) {
  const op = (cpu as unknown as { op: DelassusOperator }).op;
  const b = (cpu as unknown as { rhs: Float64Array }).rhs.slice();
  const rows = cpu.rowSolver.rows;
  const nr = rows.count;
  const A: Mat = [];
  for (let j = 0; j < nr; j++) {
    const e = new Float64Array(nr), col = new Float64Array(nr);
    e[j] = 1;
    op.apply(e, col);
    A.push(col); // A is symmetric: column j is row j
  }
  const invMass = cpu.rowSolver.inverseMass;
  const nb = invMass.length;
  // C[k][r]: coordinate k = 6 i + (0..2: v, 3..5: ℓ ω) of body i
  const C: Mat = Array.from({ length: 6 * nb }, () => new Float64Array(nr));
  for (let r = 0; r < nr; r++) {
    const J = rows.jacobian.subarray(12 * r, 12 * r + 12);
    for (const [body, o] of [[rows.bodyA[r], 0], [rows.bodyB[r], 6]] as const) {
      if (!(invMass[body] > 0)) continue;
      const I = cpu.angMassInv.subarray(9 * body, 9 * body + 9);
      for (let d = 0; d < 3; d++) {
        C[6 * body + d][r] += invMass[body] * J[o + d];
        C[6 * body + 3 + d][r] += size * (I[3 * d] * J[o + 3] + I[3 * d + 1] * J[o + 4] + I[3 * d + 2] * J[o + 5]);
      }
    }
  }
  return { op, A, b, C };
}
