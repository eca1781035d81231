/**
 * The distance joint (the Starframe text's distance constraint), and its one-sided forms, a rope
 * (maxLength) and a strut (minLength).
 *
 *   d = p_B − p_A,  L = |d|,  n = d / L   (p = x + R r, the anchors' world points)
 *   C = L − length                                                       (equality)
 *   Ċ = n · (v_B + ω_B × b − v_A − ω_A × a), so
 *     J_vA = −n,  J_ωA = −(a × n),  J_vB = n,  J_ωB = b × n              (the one-pager's row, d̂ = n)
 * One-sided: a strut keeps L ≥ minLength, C = L − minLength ≥ 0 (same J); a rope keeps
 * L ≤ maxLength, C = maxLength − L ≥ 0 (J negated). Both have λ ∈ [0, ∞): a slack rope carries
 * nothing, and the solver's speculative bias C/h for C > 0 lets it close the slack in one step
 * but no more.
 * At L = 0 the direction is undefined; n falls back to the y axis (any unit vector is a valid
 * gradient of the distance's subdifferential there).
 */
import { JACOBIAN_STRIDE, type RowSet } from './rows.js';
import type { ConstraintType } from './constraint-type.js';
import type { BodyPose, JointTable } from '../model/joint-data.js';
import { leverArms } from './point.js';

const arm = new Float64Array(6);

function writeRow(rows: RowSet, r: number, sign: number, nx: number, ny: number, nz: number, C: number): void {
  const J = rows.jacobian;
  const o = JACOBIAN_STRIDE * r;
  const ax = arm[0], ay = arm[1], az = arm[2], bx = arm[3], by = arm[4], bz = arm[5];
  J[o] = -sign * nx; J[o + 1] = -sign * ny; J[o + 2] = -sign * nz;
  // −(a × n)
  J[o + 3] = -sign * (ay * nz - az * ny); J[o + 4] = -sign * (az * nx - ax * nz); J[o + 5] = -sign * (ax * ny - ay * nx);
  J[o + 6] = sign * nx; J[o + 7] = sign * ny; J[o + 8] = sign * nz;
  // b × n
  J[o + 9] = sign * (by * nz - bz * ny); J[o + 10] = sign * (bz * nx - bx * nz); J[o + 11] = sign * (bx * ny - by * nx);
  rows.error[r] = C;
}

export const distanceJoint: ConstraintType = {
  name: 'distance',
  layout(j, ic, rows, compliance, key) {
    const a = j.ib0[ic], b = j.ib1[ic];
    if (!Number.isNaN(j.length[ic])) {
      rows.addBlock(1, a, b, -Infinity, Infinity, compliance, ic, key);
      return;
    }
    // each one-sided row a block of its own (projection onto [0, ∞) is then exact)
    if (!Number.isNaN(j.minLength[ic])) rows.addBlock(1, a, b, 0, Infinity, compliance, ic, key);
    if (!Number.isNaN(j.maxLength[ic])) rows.addBlock(1, a, b, 0, Infinity, compliance, ic, key + 1);
  },
  evaluate(j: JointTable, ic: number, pose: BodyPose, rows: RowSet, first: number) {
    leverArms(j, ic, pose, arm);
    const x = pose.position;
    const pa = 3 * j.ib0[ic], pb = 3 * j.ib1[ic];
    const dx = x[pb] + arm[3] - x[pa] - arm[0];
    const dy = x[pb + 1] + arm[4] - x[pa + 1] - arm[1];
    const dz = x[pb + 2] + arm[5] - x[pa + 2] - arm[2];
    const L = Math.sqrt(dx * dx + dy * dy + dz * dz);
    let nx = 0, ny = 1, nz = 0;
    if (L > 0) (nx = dx / L, ny = dy / L, nz = dz / L);
    if (!Number.isNaN(j.length[ic])) {
      writeRow(rows, first, 1, nx, ny, nz, L - j.length[ic]);
      return;
    }
    let r = first;
    if (!Number.isNaN(j.minLength[ic])) writeRow(rows, r++, 1, nx, ny, nz, L - j.minLength[ic]);
    if (!Number.isNaN(j.maxLength[ic])) writeRow(rows, r, -1, nx, ny, nz, j.maxLength[ic] - L);
  },
};
