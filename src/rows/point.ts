/**
 * The point (ball) joint as rows: the Jacobi text's constraint (eq. 3) in the one-pager's form.
 *
 *   C = p_B − p_A,  p_A = x_A + R_A r_A (= x_A + a),  p_B = x_B + R_B r_B (= x_B + b)
 *   Ċ = v_B + ω_B × b − v_A − ω_A × a, so row k (axis e_k) has
 *     J_vA = −e_k,  J_ωA = −(a × e_k),  J_vB = e_k,  J_ωB = b × e_k
 * (e_k·(ω × a) = ω·(a × e_k)): the one-pager's row with d̂ = e_k. Three equality rows, one block:
 * the Jacobi text's 3×3 A_ℓℓ. C and J are the negatives of the text's c (eq. 3) and J (eq. 8); with
 * the rows' impulse +h Jᵀλ (rows.ts R1) against the text's −h Jᵀλ (eq. 34) the two signs cancel,
 * so λ is the text's λ, row for row.
 */
import type { RowSet } from './rows.js';
import { JACOBIAN_STRIDE } from './rows.js';
import type { BodyPose, JointTable } from '../model/joint-data.js';
import type { ConstraintType } from './constraint-type.js';
import { rotate } from '../rigid/quat.js';

/** World-frame lever arms a = R_A r_A (arm[o..o+3)) and b = R_B r_B (arm[o+3..o+6)) of constraint ic. */
export function leverArms(j: JointTable, ic: number, pose: BodyPose, arm: Float64Array, o = 0): void {
  rotate(pose.orientation, 4 * j.ib0[ic], j.r0, 3 * ic, arm, o);
  rotate(pose.orientation, 4 * j.ib1[ic], j.r1, 3 * ic, arm, o + 3);
}

const arm = new Float64Array(6);

/**
 * Fills the three point rows first .. first+2 of constraint ic: C and J above; and, where they are
 * a rigid point joint's own block (RowSet.pointBlock), the block's lever arms (blockArm), which J·V,
 * the gather and A_bb read instead of J. C is written as −c, c = x_A − x_B + a − b summed in the
 * Jacobi text's order (so it is that text's c to the bit, negated).
 */
export function evaluatePointRows(j: JointTable, ic: number, pose: BodyPose, rows: RowSet, first: number): void {
  const block = rows.rowBlock[first];
  const point = rows.pointBlock[block] === 1;
  // a point block keeps its arms in blockArm; a hinge's or weld's point rows take them from scratch
  const out = point ? rows.blockArm : arm, ao = point ? 6 * block : 0;
  leverArms(j, ic, pose, out, ao);
  const x = pose.position;
  const pa = 3 * j.ib0[ic], pb = 3 * j.ib1[ic];
  const ax = out[ao], ay = out[ao + 1], az = out[ao + 2];
  const bx = out[ao + 3], by = out[ao + 4], bz = out[ao + 5];
  rows.error[first] = -(x[pa] - x[pb] + ax - bx);
  rows.error[first + 1] = -(x[pa + 1] - x[pb + 1] + ay - by);
  rows.error[first + 2] = -(x[pa + 2] - x[pb + 2] + az - bz);
  if (point && !rows.pointJacobian) return;
  const J = rows.jacobian;
  // row k: J_vA = −e_k, J_ωA = −(a × e_k), J_vB = e_k, J_ωB = b × e_k, with
  // a × e_x = (0, a_z, −a_y), a × e_y = (−a_z, 0, a_x), a × e_z = (a_y, −a_x, 0)
  let o = JACOBIAN_STRIDE * first;
  J[o] = -1; J[o + 1] = 0; J[o + 2] = 0; J[o + 3] = 0; J[o + 4] = -az; J[o + 5] = ay;
  J[o + 6] = 1; J[o + 7] = 0; J[o + 8] = 0; J[o + 9] = 0; J[o + 10] = bz; J[o + 11] = -by;
  o += JACOBIAN_STRIDE;
  J[o] = 0; J[o + 1] = -1; J[o + 2] = 0; J[o + 3] = az; J[o + 4] = 0; J[o + 5] = -ax;
  J[o + 6] = 0; J[o + 7] = 1; J[o + 8] = 0; J[o + 9] = -bz; J[o + 10] = 0; J[o + 11] = bx;
  o += JACOBIAN_STRIDE;
  J[o] = 0; J[o + 1] = 0; J[o + 2] = -1; J[o + 3] = -ay; J[o + 4] = ax; J[o + 5] = 0;
  J[o + 6] = 0; J[o + 7] = 0; J[o + 8] = 1; J[o + 9] = by; J[o + 10] = -bx; J[o + 11] = 0;
  rows.angular[first] = rows.angular[first + 1] = rows.angular[first + 2] = 0;
}

export const pointJoint: ConstraintType = {
  name: 'point',
  layout(j, ic, rows, compliance, key) {
    // a rigid one is a point block (RowSet.pointBlock: the Jacobi text's form, from the lever arms)
    rows.addBlock(3, j.ib0[ic], j.ib1[ic], -Infinity, Infinity, compliance, ic, key, compliance === 0);
  },
  evaluate(j, ic, pose, rows, first) {
    evaluatePointRows(j, ic, pose, rows, first);
  },
};
