/**
 * The hinge (revolute) joint: the point joint plus two angular rows that keep B's axis on A's,
 * and optional one-sided rows that keep the hinge angle within [lowerAngle, upperAngle].
 *
 * Alignment. a = R_A axisA and b = R_B axisB (unit; axisB a world axis when B is the world);
 * t_k = R_A t_k⁰ (k = 1, 2), t₁⁰, t₂⁰ a unit basis of the plane ⟂ axisA in A's frame, so the t_k
 * turn with A: ṫ_k = ω_A × t_k exactly. The axes are aligned when b has no part in that plane:
 *   C_k = t_k · b   (≈ the tilt angle of b about t_{3−k}, rad)
 *   Ċ_k = (ω_A × t_k) · b + t_k · (ω_B × b) = ω_A · (t_k × b) − ω_B · (t_k × b), so
 *   J_ωA = t_k × b,  J_ωB = −(t_k × b),  J_v = 0   (exact; equal and opposite torques).
 *
 * Angle. q_d = q_A⁻¹ ⊗ q_B ⊗ q_ref⁻¹ (A's frame, identity in the starting pose, q_ref = q_A⁻¹ ⊗ q_B
 * then); with q_d = (v, w), w ≥ 0:  θ = 2 atan2(v · axisA, w) ∈ (−π, π], positive by the right-hand
 * rule about axisA, and θ̇ = (ω_B − ω_A) · a (exact while the axes are aligned, which the alignment
 * rows hold). Limits as one-sided rows (bounds [0, ∞)):
 *   lower: C = θ − lowerAngle ≥ 0,  J_ωA = −a, J_ωB = a;   upper: C = upperAngle − θ ≥ 0, J negated.
 * One block of 5 equality rows (point rows first), then each limit row a block of its own.
 */
import { JACOBIAN_STRIDE, type RowSet } from './rows.js';
import type { ConstraintType } from './constraint-type.js';
import type { BodyPose, JointTable } from '../model/joint-data.js';
import { evaluatePointRows } from './point.js';
import { rotate } from '../rigid/quat.js';
import { relativeOrientationError } from './fixed.js';

const ab = new Float64Array(6); // a, then b
const basis = new Float64Array(6); // t₁⁰, t₂⁰ in A's frame
const t = new Float64Array(6); // t₁, t₂ in the world

const qd = new Float64Array(4);

/** θ of hinge ic at the pose (rad, (−π, π]): the angle of B relative to A about axisA since the start. */
export function hingeAngle(j: JointTable, ic: number, pose: BodyPose): number {
  relativeOrientationError(j, ic, pose, qd); // q_d = q_A⁻¹ ⊗ q_B ⊗ q_ref⁻¹, w ≥ 0
  const s = qd[0] * j.axisA[3 * ic] + qd[1] * j.axisA[3 * ic + 1] + qd[2] * j.axisA[3 * ic + 2];
  return 2 * Math.atan2(s, qd[3]);
}

function angularRow(rows: RowSet, r: number, ux: number, uy: number, uz: number, C: number): void {
  const J = rows.jacobian;
  const o = JACOBIAN_STRIDE * r;
  J.fill(0, o, o + JACOBIAN_STRIDE);
  J[o + 3] = ux; J[o + 4] = uy; J[o + 5] = uz;
  J[o + 9] = -ux; J[o + 10] = -uy; J[o + 11] = -uz;
  rows.error[r] = C;
  rows.angular[r] = 1;
}

export const hingeJoint: ConstraintType = {
  name: 'hinge',
  layout(j, ic, rows, compliance, key) {
    const a = j.ib0[ic], b = j.ib1[ic];
    rows.addBlock(5, a, b, -Infinity, Infinity, compliance, ic, key);
    if (!Number.isNaN(j.lowerAngle[ic])) rows.addBlock(1, a, b, 0, Infinity, 0, ic, key + 5);
    if (!Number.isNaN(j.upperAngle[ic])) rows.addBlock(1, a, b, 0, Infinity, 0, ic, key + 6);
  },
  evaluate(j: JointTable, ic: number, pose: BodyPose, rows: RowSet, first: number) {
    evaluatePointRows(j, ic, pose, rows, first);
    rotate(pose.orientation, 4 * j.ib0[ic], j.axisA, 3 * ic, ab, 0);
    rotate(pose.orientation, 4 * j.ib1[ic], j.axisB, 3 * ic, ab, 3);
    const ax = ab[0], ay = ab[1], az = ab[2], bx = ab[3], by = ab[4], bz = ab[5];
    // t₁⁰ ⟂ axisA from its smaller components, t₂⁰ = axisA × t₁⁰, in A's frame; then t_k = R_A t_k⁰
    const lx = j.axisA[3 * ic], ly = j.axisA[3 * ic + 1], lz = j.axisA[3 * ic + 2];
    if (Math.abs(lx) > 0.57735) {
      const n = 1 / Math.sqrt(lx * lx + ly * ly);
      (basis[0] = ly * n), (basis[1] = -lx * n), (basis[2] = 0);
    } else {
      const n = 1 / Math.sqrt(ly * ly + lz * lz);
      (basis[0] = 0), (basis[1] = lz * n), (basis[2] = -ly * n);
    }
    basis[3] = ly * basis[2] - lz * basis[1];
    basis[4] = lz * basis[0] - lx * basis[2];
    basis[5] = lx * basis[1] - ly * basis[0];
    rotate(pose.orientation, 4 * j.ib0[ic], basis, 0, t, 0);
    rotate(pose.orientation, 4 * j.ib0[ic], basis, 3, t, 3);
    const t1x = t[0], t1y = t[1], t1z = t[2], t2x = t[3], t2y = t[4], t2z = t[5];
    // J_ωA = t × b, C = t · b
    angularRow(rows, first + 3, t1y * bz - t1z * by, t1z * bx - t1x * bz, t1x * by - t1y * bx, t1x * bx + t1y * by + t1z * bz);
    angularRow(rows, first + 4, t2y * bz - t2z * by, t2z * bx - t2x * bz, t2x * by - t2y * bx, t2x * bx + t2y * by + t2z * bz);
    let r = first + 5;
    if (Number.isNaN(j.lowerAngle[ic]) && Number.isNaN(j.upperAngle[ic])) return;
    const theta = hingeAngle(j, ic, pose);
    if (!Number.isNaN(j.lowerAngle[ic])) angularRow(rows, r++, -ax, -ay, -az, theta - j.lowerAngle[ic]);
    if (!Number.isNaN(j.upperAngle[ic])) angularRow(rows, r, ax, ay, az, j.upperAngle[ic] - theta);
  },
};
