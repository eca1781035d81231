/**
 * The fixed (weld) joint: the point joint plus three angular rows that hold the relative
 * orientation the bodies start with.
 *
 * Angular error, in A's frame: q_d = q_A⁻¹ ⊗ q_B ⊗ q_ref⁻¹, q_ref = q_A⁻¹ ⊗ q_B at the start, so
 * q_d = 1 in the starting relative pose. With q_d = (v, w), w ≥ 0 (the shorter way round):
 *   C = 2 v   (rad; the rotation vector of q_d to first order, along A's axes)
 * C is unchanged when both bodies turn together (q_A⁻¹ R⁻¹ R q_B), so the rows' torques on A and
 * B are equal and opposite, J_ωA = −J_ωB, and angular momentum is conserved. (The same error taken
 * in the world frame, q_B q_ref⁻¹ q_A⁻¹, turns with a common rotation: its exact Jacobian has
 * J_ωA + J_ωB ≠ 0, a net torque from an internal joint, and it made a welded beam gain energy
 * under warm-started Gauss-Seidel until it blew up.)
 * With world-frame angular velocities, q̇_B = ½ ω_B ⊗ q_B and d(q_A⁻¹)/dt = −½ q_A⁻¹ ⊗ ω_A give
 *   q̇_d = ½ Ω ⊗ q_d,  Ω = R_Aᵀ (ω_B − ω_A),   2 vec(q̇_d) = (w I − [v]×) Ω,
 * so row k (exact, not only near q_d = 1), with u_k = w e_k − e_k × v (row k of w I − [v]×):
 *   J_vA = J_vB = 0,  J_ωB = R_A u_k,  J_ωA = −R_A u_k.
 * Six equality rows, one block (point rows first).
 */
import { JACOBIAN_STRIDE, type RowSet } from './rows.js';
import type { ConstraintType } from './constraint-type.js';
import type { BodyPose, JointTable } from '../model/joint-data.js';
import { evaluatePointRows } from './point.js';
import { quatMultiply, rotate } from '../rigid/quat.js';

const q = new Float64Array(8);

/**
 * q_d = q_A⁻¹ ⊗ q_B ⊗ q_ref⁻¹ of constraint ic (A's frame), into out[0..4), with w ≥ 0.
 * (q⁻¹ of a unit quaternion is its conjugate.)
 */
export function relativeOrientationError(j: JointTable, ic: number, pose: BodyPose, out: Float64Array): void {
  const o = pose.orientation;
  const a = 4 * j.ib0[ic];
  // t = conj(q_A) ⊗ q_B
  q[0] = -o[a]; q[1] = -o[a + 1]; q[2] = -o[a + 2]; q[3] = o[a + 3];
  quatMultiply(q, 0, o, 4 * j.ib1[ic], q, 4);
  // q_d = t ⊗ conj(q_ref)
  const r = 4 * ic;
  q[0] = -j.referenceOrientation[r]; q[1] = -j.referenceOrientation[r + 1]; q[2] = -j.referenceOrientation[r + 2]; q[3] = j.referenceOrientation[r + 3];
  quatMultiply(q, 4, q, 0, out, 0);
  if (out[3] < 0) (out[0] = -out[0], out[1] = -out[1], out[2] = -out[2], out[3] = -out[3]);
}

const err = new Float64Array(4);
const u = new Float64Array(3);
const Ru = new Float64Array(3);

/** The three angular rows first .. first+2 of a weld, from its orientation error. */
export function evaluateWeldRows(j: JointTable, ic: number, pose: BodyPose, rows: RowSet, first: number): void {
  relativeOrientationError(j, ic, pose, err);
  const vx = err[0], vy = err[1], vz = err[2], w = err[3];
  const J = rows.jacobian;
  // e_x × v = (0, −v_z, v_y), e_y × v = (v_z, 0, −v_x), e_z × v = (−v_y, v_x, 0)
  const cross = [0, -vz, vy, vz, 0, -vx, -vy, vx, 0];
  for (let k = 0; k < 3; k++) {
    const o = JACOBIAN_STRIDE * (first + k);
    J.fill(0, o, o + JACOBIAN_STRIDE);
    rows.error[first + k] = 2 * err[k];
    rows.angular[first + k] = 1;
    for (let c = 0; c < 3; c++) u[c] = (c === k ? w : 0) - cross[3 * k + c];
    rotate(pose.orientation, 4 * j.ib0[ic], u, 0, Ru, 0);
    for (let c = 0; c < 3; c++) {
      J[o + 3 + c] = -Ru[c];
      J[o + 9 + c] = Ru[c];
    }
  }
}

export const fixedJoint: ConstraintType = {
  name: 'fixed',
  layout(j, ic, rows, compliance, key) {
    rows.addBlock(6, j.ib0[ic], j.ib1[ic], -Infinity, Infinity, compliance, ic, key);
  },
  evaluate(j, ic, pose, rows, first) {
    evaluatePointRows(j, ic, pose, rows, first);
    evaluateWeldRows(j, ic, pose, rows, first + 3);
  },
};
