/**
 * Constraint rows in WGSL (f32): the twin of rows.ts, block-solver.ts and the constraint types
 * (point.ts, distance.ts, hinge.ts, fixed.ts), written once here for every GPU row solver
 * (jacobi-gpu, gs-gpu; global-gpu's A·d can take `rowGather` with its own source). Same equations,
 * same signs (rows.ts: the row applies +h Jᵀλ; J V = Ċ), same stages as RowBlockSolver:
 *
 *   evaluate_<type>     per joint of that type: C and J of its rows at the pose (one kernel per
 *                       constraint type, the twin of its evaluate; derivations in its .ts);
 *                       evaluate_point_rigid: C and the lever arms of a rigid point joint
 *   prepare_blocks      per block: biasRate, γ per row (rows/softness.ts, `softnessWgsl`; a one-sided
 *                       row apart: 1/h, 0), A_bb = J_b M⁻¹ J_bᵀ + diag γ and its inverse (n = 1
 *                       directly, n = 3 by the adjugate, else Gauss–Jordan with invertBlock's
 *                       dependent-row rule), and the warm start λ ← f λ; prepare_point_blocks: the
 *                       same for a rigid point joint's 3×3 block
 *   prepare_position_blocks  jacobi-gpu with its joints' masses split: the position pass's own (A_bb^p + γ)⁻¹
 *                       of a general block (block-solver.ts positionShare; a point block's in prepare_point_blocks)
 *   update_multipliers  per block: the projected block update (block-solver.ts solveBlocks);
 *                       update_multipliers_point: a rigid point joint's (no bounds, no γ)
 *   update_velocities   per body: ΔV_i = h M_i⁻¹ Σ_{r ∋ i} J_r,iᵀ λ_r (rows.ts gatherImpulse, R1)
 *   compute_residual    per block: each row's projected ρ² (diagnostics)
 *   solve_colour(_point)  gs-gpu: the update of a colour's joints with their ΔV applied at once
 *   solve_positions(_point), update_pseudo_velocities   jacobi-gpu's split impulse (block-solver.ts
 *                       solvePositions, order 'jacobi'): the same update and gather on the pseudo-velocities
 *                       P (pseudo_velocity) and λ_p (row_pseudo), biased by β C/h alone
 *   solve_colour_positions(_point)   gs-gpu's (order 'symmetric' over its colours): a colour's joints on P at once
 *
 * Buffers (f32 unless said; legend: NR rows, NK blocks, NB bodies, NJ joints), laid out on the
 * host from the CPU RowBlockSolver.layout() once per topology; everything per step is written here:
 *   row_jacobian[3·NR]  vec4f: the 12 entries of row r, (J_vA, J_ωA, J_vB, J_ωB) in that order, at
 *                       3r .. 3r+2 — byte for byte RowSet.jacobian's order, read as three vec4f; not
 *                       written for a rigid point joint's rows (point_arm gives them)
 *   row_error[NR]       vec2f (C, biasRate): C by evaluate_<type>, biasRate by prepare_*
 *   row_params[NR]      vec4f (lower, upper, compliance α, 0); ±∞ stored as ±F32_MAX (WGSL need not
 *                       keep infinities)
 *   row_solve[3·NR]     vec4f: [3r] (bias = biasRate·C, γ, λ, 0), what an iteration reads of row r in
 *                       one load, λ (force units; hλ the impulse) kept from step to step (warm start);
 *                       [3r+1], [3r+2] row p = r − r0 of its block's (A_bb + diag γ)⁻¹ (8 entries, n
 *                       used): no offsets to store, and a row of a block of n ≤ 4 is one load
 *   point_arm[2·NR]     vec4f: a point joint's world lever arms a = R_A r_A, b = R_B r_B at [2r0],
 *                       [2r0+1], r0 its first row (evaluate_point): its rows' J is (−e_k, −(a × e_k),
 *                       e_k, b × e_k) (point.ts), so the point fast path reads these 6 numbers, not 36
 *   row_block[NK]       vec4u (first row r0, meta, body A, body B); meta = n | plain << 4 | point << 5
 *                       | blocks << 8: n rows (≤ 6), plain = a rigid equality block (no bounds, γ = 0),
 *                       point = a rigid point joint's block (the point fast path: its J is not stored,
 *                       point_arm holds what gives it), blocks = the number of blocks of its joint at
 *                       the joint's first block, else 0
 *   prepare_list[NK]    u32: the blocks of rigid point joints (the point fast path), then all others
 *   block_list[…]       u32: jacobi-gpu: as prepare_list; gs-gpu: colour by colour, the point joints'
 *                       blocks, then the first block of each other joint (ColourRange: both ranges)
 *   body_rows[NB+1], row_entries[…]  u32: the body → row CSR (rows.ts RowConnectivity), entry
 *                       r << 2 | point << 1 | side: a rigid point joint's three rows are one entry
 *                       (point = 1, r its first row), every other row an entry of its own
 *   joint[JOINT_STRIDE·NJ]  vec4f: the joints, grouped by type (params.joint_start/joint_count; the
 *                       point joints' first params.rigid_point_count records are the rigid ones):
 *                       [0] (r_A, first row as u32 bits)  [1] (r_B, body A as u32 bits)
 *                       [2] (axisA, body B as u32 bits)   [3] (axisB, flags as u32 bits)
 *                       [4] q_ref = q_A⁻¹ ⊗ q_B at the start   [5] (length, minLength, maxLength, lowerAngle)
 *                       [6] (upperAngle, 0, 0, 0); flags: which of length, min, max, lower, upper
 *                       are given (JOINT_FLAG), instead of the CPU's NaN (WGSL need not keep NaN)
 *   residual[NR]        f32: the row's projected ρ² (m²/s², diagnostics)
 *   row_pseudo[NR]      f32: λ_p of the split impulse's position pass (solve_positions*), 0 at each prepare,
 *                       never warm-started; with the split, row_solve[3r].w holds the row's position bias
 *                       β C/h (its velocity bias .x then 0), else .w = 0
 *   row_position_inverse[2·NR]  vec4f: jacobi-gpu with its joints' masses split (massSplit): row p = r − r0 of the
 *                       position pass's own (A_bb^p + diag γ)⁻¹ at [2r], [2r+1] (block-solver.ts positionShare,
 *                       s^p_i = inverse_mass.position_share), which solve_positions* read where the velocity
 *                       solve reads row_solve[3r+1], [3r+2]; written by prepare_point_blocks and
 *                       prepare_position_blocks; one element where it does not split
 * and the solver's body buffers (jacobi/kernels.wgsl.ts): pose, velocity (V*), velocity_delta (ΔV),
 * inverse_mass (world I⁻¹ and m⁻¹).
 *
 * Point fast path (SwiftShader, and any GPU, pays for every load and for private arrays): a rigid
 * point joint's block has its own kernels (prepare_point_blocks, update_multipliers_point,
 * solve_colour_point) over the prepare/block lists, with the 3×3 algebra of the Jacobi text in
 * vector form from the lever arms; the kernels of the general blocks hold the loops and private
 * arrays. Same equations, same result up to rounding.
 *
 * Invariants: evaluate_<type> writes only its joint's rows; prepare_* and update_multipliers* only
 * their block's rows (the Jacobi sweep reads V* + ΔV, which nothing writes during it);
 * update_velocities only its body's ΔV (a gather: no two threads write one body). gs-gpu's
 * solve_colour* writes its joint's rows and ΔV of its two bodies, which no other joint of the
 * colour touches (a fixed body, which several may share, is never written). Vectors are stored
 * whole (a component store costs a read-modify-write on some implementations).
 *
 * Storage buffers per kernel ≤ 8 (the browser's default limit): hence the packing above.
 */
import type { JointTable } from '../model/joint-data.js';
import { softnessWgsl } from './softness.js';
import { JointKind } from '../model/joint-data.js';

/** vec4f entries of the `joint` buffer per joint. */
export const JOINT_STRIDE = 7;
/** Bits of a joint record's flags: which optional members are given. */
export const JOINT_FLAG = { length: 1, minLength: 2, maxLength: 4, lowerAngle: 8, upperAngle: 16 } as const;
/** The largest block prepare_blocks inverts in-thread (hinge: 5, fixed: 6). */
export const MAX_GPU_BLOCK_ROWS = 6;
/** f32's largest finite value: an open bound (±∞ on the CPU). */
export const F32_MAX = 3.4028234663852886e38;

export type RowBufferName =
  | 'row_jacobian'
  | 'row_error'
  | 'row_params'
  | 'row_solve'
  | 'point_arm'
  | 'row_block'
  | 'prepare_list'
  | 'block_list'
  | 'body_rows'
  | 'row_entries'
  | 'joint'
  | 'residual'
  | 'row_pseudo'
  | 'row_position_inverse';

export const rowElementType: Record<RowBufferName, string> = {
  row_jacobian: 'array<vec4f>',
  row_error: 'array<vec2f>',
  row_params: 'array<vec4f>',
  row_solve: 'array<vec4f>',
  point_arm: 'array<vec4f>',
  row_block: 'array<vec4u>',
  prepare_list: 'array<u32>',
  block_list: 'array<u32>',
  body_rows: 'array<u32>',
  row_entries: 'array<u32>',
  joint: 'array<vec4f>',
  residual: 'array<f32>',
  row_pseudo: 'array<f32>',
  row_position_inverse: 'array<vec4f>',
};

/** The body buffers of the solver that the row kernels bind (jacobi/kernels.wgsl.ts's layout). */
export type BodyBufferName = 'pose' | 'velocity' | 'velocity_delta' | 'inverse_mass' | 'pseudo_velocity';

type Access = 'read' | 'read_write' | 'uniform';
export interface RowKernelSpec {
  name: string;
  /**
   * one thread per block ('block'), per point block or general block of `list` ('point_block',
   * 'general_block'), per body, per joint of `jointKind`, or per listed block of one colour's point
   * or general range ('colour_point', 'colour'; gs-gpu)
   */
  over: 'block' | 'point_block' | 'general_block' | 'body' | 'joint' | 'colour' | 'colour_point';
  /** JointKind of a 'joint' kernel */
  jointKind?: number;
  /** the list a 'point_block' / 'general_block' kernel takes its blocks from */
  list?: 'prepare_list' | 'block_list';
  bindings: { name: RowBufferName | BodyBufferName | 'colour'; access: Access }[];
  /** module-scope WGSL the body calls (functions that use only the bindings above) */
  helpers: string;
  body: string;
}

// ---------------------------------------------------------------- helpers (module scope)

/** Row accessors over row_jacobian (bind it). */
const jacobianAccess = /* wgsl */ `
// the four pieces of row r (rows.ts: J_vA, J_ωA, J_vB, J_ωB)
fn row_jva(r: u32) -> vec3f { return row_jacobian[3u * r].xyz; }
fn row_jwa(r: u32) -> vec3f { let p = row_jacobian[3u * r]; let q = row_jacobian[3u * r + 1u]; return vec3f(p.w, q.xy); }
fn row_jvb(r: u32) -> vec3f { let p = row_jacobian[3u * r + 1u]; let q = row_jacobian[3u * r + 2u]; return vec3f(p.zw, q.x); }
fn row_jwb(r: u32) -> vec3f { return row_jacobian[3u * r + 2u].yzw; }
`;

/**
 * WGSL: the velocity that a block's update reads of body slot `k` (2i: linear, 2i + 1: angular): V + ΔV of
 * the velocity solve, or the position pass's pseudo-velocity P alone (block-solver.ts solvePositions: v = 0, Δv = P).
 */
const bodyVelocity = (position: boolean, k: string): string => (position ? `pseudo_velocity[${k}].xyz` : `velocity[${k}].xyz + velocity_delta[${k}].xyz`);

/** J·V of a block (rows.ts blockVelocity, R2): needs row_jacobian, velocity, velocity_delta (the position pass: pseudo_velocity). */
const blockVelocityOf = (position: boolean) => /* wgsl */ `
// V + ΔV (position pass: P) of the block's bodies a, b packed as the 12 entries of a row (v_A, ω_A, v_B, ω_B),
// so that J_r V (R2) is three dot products with row r's three vec4f
struct PackedVelocity { u0: vec4f, u1: vec4f, u2: vec4f, };
fn block_velocity(a: u32, b: u32) -> PackedVelocity {
  let va = ${bodyVelocity(position, '2u * a')};
  let wa = ${bodyVelocity(position, '2u * a + 1u')};
  let vb = ${bodyVelocity(position, '2u * b')};
  let wb = ${bodyVelocity(position, '2u * b + 1u')};
  return PackedVelocity(vec4f(va, wa.x), vec4f(wa.yz, vb.xy), vec4f(vb.z, wb));
}
// J_r V = J_vA·v_A + J_ωA·ω_A + J_vB·v_B + J_ωB·ω_B   (R2)
fn row_velocity(r: u32, u: PackedVelocity) -> f32 {
  return dot(row_jacobian[3u * r], u.u0) + dot(row_jacobian[3u * r + 1u], u.u1) + dot(row_jacobian[3u * r + 2u], u.u2);
}
`;
const blockVelocityWgsl = blockVelocityOf(false);

/**
 * WGSL statements: lin, ang = Σ_{r ∋ ib} J_r,ibᵀ s_r over body `ib`'s rows (CSR body_rows /
 * row_entries: its rigid point joints' entries, then its other rows'), the Jᵀ gather of rows.ts
 * gatherImpulse; two loops, so that neither kind of entry pays for the other's code. `source(r)` is the WGSL
 * of s_r (λ for update_velocities; a direction for a Krylov solve's A·d). Binds body_rows,
 * row_entries, row_jacobian.
 */
export function rowGather(source: (r: string) => string): string {
  return /* wgsl */ `
  var lin = vec3f(0.0);
  var ang = vec3f(0.0);
  // a rigid point joint's rows r, r+1, r+2 (point.ts): Σ_k s_k J_k = (−s, −a × s) on A, (s, b × s) on B
  for (var k = body_rows[2u * ib]; k < body_rows[2u * ib + 1u]; k++) {
    let e = row_entries[k];
    let r = e >> 2u;
    let side = e & 1u;
    let s = vec3f(${source('r')}, ${source('r + 1u')}, ${source('r + 2u')});
    let arm = point_arm[2u * r + side].xyz;
    let sign = select(-1.0, 1.0, side == 1u);
    lin += sign * s;
    ang += sign * cross(arm, s);
  }
  // every other row: side 0 (A) is entries 0..5 = p.xyzw, q.xy of p = J[3r], q = J[3r+1];
  // side 1 (B) entries 6..11 = p.zw, q.xyzw of p = J[3r+1], q = J[3r+2]
  for (var k = body_rows[2u * ib + 1u]; k < body_rows[2u * ib + 2u]; k++) {
    let e = row_entries[k];
    let r = e >> 2u;
    let side = e & 1u;
    let s = ${source('r')};
    let p = row_jacobian[3u * r + side];
    let q = row_jacobian[3u * r + side + 1u];
    let on_b = side == 1u;
    lin += s * select(p.xyz, vec3f(p.zw, q.x), on_b);
    ang += s * select(vec3f(p.w, q.xy), q.yzw, on_b);
  }`;
}

/** A joint record's pose (bind joint, pose). */
const jointPoseWgsl = /* wgsl */ `
// a joint record (JOINT_STRIDE vec4f): its bodies, anchors, first row and pose
struct JointPose {
  first: u32,
  flags: u32,
  qa: vec4f,
  qb: vec4f,
  xa: vec3f,
  xb: vec3f,
  a: vec3f,   // R_A r_A (world lever arm)
  b: vec3f,   // R_B r_B
};
fn joint_pose(j: u32) -> JointPose {
  let o = ${JOINT_STRIDE}u * j;
  let ja = joint[o];
  let jb = joint[o + 1u];
  let ia = bitcast<u32>(jb.w);
  let ib = bitcast<u32>(joint[o + 2u].w);
  let qa = pose[2u * ia + 1u];
  let qb = pose[2u * ib + 1u];
  return JointPose(bitcast<u32>(ja.w), bitcast<u32>(joint[o + 3u].w), qa, qb, pose[2u * ia].xyz, pose[2u * ib].xyz,
                   quat_rotate(qa, ja.xyz), quat_rotate(qb, jb.xyz));
}
`;

/** Writing rows (bind row_jacobian and row_error read_write). */
const rowWrite = /* wgsl */ `
fn write_row(r: u32, jva: vec3f, jwa: vec3f, jvb: vec3f, jwb: vec3f, c: f32) {
  row_jacobian[3u * r] = vec4f(jva, jwa.x);
  row_jacobian[3u * r + 1u] = vec4f(jwa.yz, jvb.xy);
  row_jacobian[3u * r + 2u] = vec4f(jvb.z, jwb);
  row_error[r] = vec2f(c, 0.0);
}
// an angular row (hinge.ts angularRow): J_ωA = u, J_ωB = −u, J_v = 0
fn write_angular_row(r: u32, u: vec3f, c: f32) {
  write_row(r, vec3f(0.0), u, vec3f(0.0), -u, c);
}
fn quat_mul(a: vec4f, b: vec4f) -> vec4f {
  // Hamilton product, [x y z w] (quat.ts quatMultiply)
  return vec4f(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}
fn quat_conj(q: vec4f) -> vec4f { return vec4f(-q.xyz, q.w); }

${jointPoseWgsl}
// point.ts: C = p_B − p_A, row k: J_vA = −e_k, J_ωA = −(a × e_k), J_vB = e_k, J_ωB = b × e_k   (3), (8)
fn write_point_rows(jp: JointPose) {
  let c = (jp.xb - jp.xa) + (jp.b - jp.a); // the nearby positions' difference first (evaluate_point_rigid)
  for (var k = 0u; k < 3u; k++) {
    var e = vec3f(0.0);
    e[k] = 1.0;
    write_row(jp.first + k, -e, -cross(jp.a, e), e, cross(jp.b, e), c[k]);
  }
}
`;

const F = JOINT_FLAG;

/** The body of each evaluate_<type> kernel (index j: the joint record), by JointKind. */
const evaluateBodies: Record<number, { name: string; body: string }> = {
  [JointKind.point]: {
    name: 'evaluate_point',
    body: /* wgsl */ `
  // a soft point joint (its block takes the general path): its rows, and the lever arms
  let jp = joint_pose(j);
  write_point_rows(jp);
  point_arm[2u * jp.first] = vec4f(jp.a, 0.0);
  point_arm[2u * jp.first + 1u] = vec4f(jp.b, 0.0);`,
  },
  [JointKind.distance]: {
    name: 'evaluate_distance',
    body: /* wgsl */ `
  // distance.ts: d = p_B − p_A, L = |d|, n = d/L (y at L = 0); J = (−n, −(a × n), n, b × n), C = L − length;
  // strut: C = L − minLength; rope: C = maxLength − L with J negated (one-sided rows, bounds [0, ∞))
  let jp = joint_pose(j);
  let lengths = joint[${JOINT_STRIDE}u * j + 5u];
  let d = (jp.xb - jp.xa) + (jp.b - jp.a); // (evaluate_point_rigid)
  let L = length(d);
  var n = vec3f(0.0, 1.0, 0.0);
  if (L > 0.0) { n = d / L; }
  let an = cross(jp.a, n);
  let bn = cross(jp.b, n);
  if ((jp.flags & ${F.length}u) != 0u) {
    write_row(jp.first, -n, -an, n, bn, L - lengths.x);
    return;
  }
  var r = jp.first;
  if ((jp.flags & ${F.minLength}u) != 0u) {
    write_row(r, -n, -an, n, bn, L - lengths.y);
    r++;
  }
  if ((jp.flags & ${F.maxLength}u) != 0u) { write_row(r, n, an, -n, -bn, lengths.z - L); }`,
  },
  [JointKind.hinge]: {
    name: 'evaluate_hinge',
    body: /* wgsl */ `
  // hinge.ts: the point rows; a = R_A axisA, b = R_B axisB, t_k = R_A t_k⁰ with t₁⁰ ⟂ axisA (from its smaller
  // components) and t₂⁰ = axisA × t₁⁰ in A's frame, so that the t_k turn with A (ṫ_k = ω_A × t_k, which J assumes);
  // C_k = t_k · b, J_ωA = t_k × b, J_ωB = −(t_k × b); limits on θ = 2 atan2(v · axisA, w) of
  // q_d = q_A⁻¹ ⊗ q_B ⊗ q_ref⁻¹ (w ≥ 0): lower C = θ − lowerAngle, J_ωA = −a; upper C = upperAngle − θ, J negated
  let jp = joint_pose(j);
  write_point_rows(jp);
  let o = ${JOINT_STRIDE}u * j;
  let axis_a = joint[o + 2u].xyz;
  let a = quat_rotate(jp.qa, axis_a);
  let b = quat_rotate(jp.qb, joint[o + 3u].xyz);
  var t10: vec3f;
  if (abs(axis_a.x) > 0.57735) {
    t10 = vec3f(axis_a.y, -axis_a.x, 0.0) * (1.0 / sqrt(axis_a.x * axis_a.x + axis_a.y * axis_a.y));
  } else {
    t10 = vec3f(0.0, axis_a.z, -axis_a.y) * (1.0 / sqrt(axis_a.y * axis_a.y + axis_a.z * axis_a.z));
  }
  let t1 = quat_rotate(jp.qa, t10);
  let t2 = quat_rotate(jp.qa, cross(axis_a, t10));
  write_angular_row(jp.first + 3u, cross(t1, b), dot(t1, b));
  write_angular_row(jp.first + 4u, cross(t2, b), dot(t2, b));
  if ((jp.flags & ${F.lowerAngle | F.upperAngle}u) == 0u) { return; }
  var qd = quat_mul(quat_mul(quat_conj(jp.qa), jp.qb), quat_conj(joint[o + 4u]));
  if (qd.w < 0.0) { qd = -qd; }
  let theta = 2.0 * atan2(dot(qd.xyz, axis_a), qd.w);
  var r = jp.first + 5u;
  if ((jp.flags & ${F.lowerAngle}u) != 0u) {
    write_angular_row(r, -a, theta - joint[o + 5u].w);
    r++;
  }
  if ((jp.flags & ${F.upperAngle}u) != 0u) { write_angular_row(r, a, joint[o + 6u].x - theta); }`,
  },
  [JointKind.fixed]: {
    name: 'evaluate_fixed',
    body: /* wgsl */ `
  // fixed.ts: the point rows; q_e = q_B ⊗ q_ref⁻¹ ⊗ q_A⁻¹ = (v, w), w ≥ 0; row k: C = 2 v_k,
  // J_ωA = −(w e_k + e_k × v), J_ωB = w e_k − e_k × v, J_v = 0
  let jp = joint_pose(j);
  write_point_rows(jp);
  var qe = quat_mul(quat_mul(jp.qb, quat_conj(joint[${JOINT_STRIDE}u * j + 4u])), quat_conj(jp.qa));
  if (qe.w < 0.0) { qe = -qe; }
  for (var k = 0u; k < 3u; k++) {
    var e = vec3f(0.0);
    e[k] = 1.0;
    let ev = cross(e, qe.xyz);
    write_row(jp.first + 3u + k, vec3f(0.0), -(qe.w * e + ev), vec3f(0.0), qe.w * e - ev, 2.0 * qe[k]);
  }`,
  },
};

/**
 * evaluate_point_rigid: a rigid point joint (the point fast path, the first params.rigid_point_count
 * point records): C and the lever arms a, b, from which its rows' J is (−e_k, −(a × e_k), e_k, b × e_k)
 * (point.ts); the 36 entries are not stored, as no kernel reads them (every kernel that meets such a
 * block — prepare_point_blocks, update_multipliers_point, solve_colour_point, rowGather's point
 * entries, compute_residual — works from a and b).
 */
const evaluatePointRigid: RowKernelSpec = {
  name: 'evaluate_point_rigid',
  over: 'joint',
  jointKind: -1,
  bindings: [
    { name: 'joint', access: 'read' },
    { name: 'pose', access: 'read' },
    { name: 'row_error', access: 'read_write' },
    { name: 'point_arm', access: 'read_write' },
  ],
  helpers: jointPoseWgsl,
  body: /* wgsl */ `
  let jp = joint_pose(j);
  // C = p_B − p_A   (point.ts), as (x_B − x_A) + (b − a): the difference of nearby positions first, so C
  // keeps its own f32 precision rather than ε of the coordinates (far from the origin, ε |x| ≫ ε |C|)
  let c = (jp.xb - jp.xa) + (jp.b - jp.a);
  row_error[jp.first] = vec2f(c.x, 0.0);
  row_error[jp.first + 1u] = vec2f(c.y, 0.0);
  row_error[jp.first + 2u] = vec2f(c.z, 0.0);
  point_arm[2u * jp.first] = vec4f(jp.a, 0.0);
  point_arm[2u * jp.first + 1u] = vec4f(jp.b, 0.0);`,
};

/** Whether constraint type `kind` (JointKind) has its WGSL evaluate kernel. */
export function hasEvaluateKernel(kind: number): boolean {
  return kind in evaluateBodies;
}

/** The evaluate_<type> kernels, one per constraint type (JointKind order). */
export function evaluateKernels(): RowKernelSpec[] {
  return [evaluatePointRigid, ...Object.entries(evaluateBodies).map(([kind, k]) => ({
    name: k.name,
    over: 'joint',
    jointKind: Number(kind),
    bindings: [
      { name: 'joint', access: 'read' },
      { name: 'pose', access: 'read' },
      { name: 'row_jacobian', access: 'read_write' },
      { name: 'row_error', access: 'read_write' },
      ...(Number(kind) === JointKind.point ? [{ name: 'point_arm' as const, access: 'read_write' as const }] : []),
    ],
    helpers: rowWrite,
    body: k.body,
  }) as RowKernelSpec)];
}

/**
 * Dependent-row threshold of the in-thread Gauss–Jordan: a pivot ≤ τ × the largest diagonal entry
 * marks a row that depends on the others (invertBlock's rule). invertBlock's τ = 1e-14 is f64's
 * rounding floor with room; in f32 the Schur complement of a dependent row is rounding noise of
 * ~n u (u = 2⁻²⁴, n ≤ 6) of the scale, so τ = 2⁻¹⁷ = 128 u sits above that noise and far below any
 * real pivot of the joints here (an angular row's I⁻¹ against a linear row's m⁻¹ differs by the
 * squared lever arm: 1e-2 for a 10 m body).
 */
export const GPU_DEPENDENT_PIVOT = 2 ** -17;

/**
 * Per row r of a block: biasRate, γ (block-solver.ts prepare) into row_error.y and row_solve[3r]; the warm
 * start λ ← f λ. With `split` (a split impulse, block-solver.ts prepare with splitPositionBias) a rigid row fed
 * back by Baumgarte (α = 0, not a speculative row) has its bias β C/h in row_solve[3r].w, for the position
 * pass, and none in the velocity solve (.x = 0); every other row keeps its bias in .x (a spring's is a force,
 * a speculative row's a velocity bound); λ_p (row_pseudo) starts at 0.
 */
const rowSoftnessOf = (split: boolean) => /* wgsl */ `
// a one-sided row apart (C > 0): the speculative 1/h, γ = 0; else rows/softness.ts (S2) of its
// compliance (α = 0: Baumgarte β/h). Returns γ.
fn prepare_row(r: u32) -> f32 {
  let bounds = row_params[r];
  let c = row_error[r].x;
  var soft = row_softness(bounds.z, 0.0, params.h, params.baumgarte);
  let speculative = bounds.x == 0.0 && bounds.y >= 1e38 && c > 0.0;
  if (speculative) { soft = vec2f(1.0 / params.h, 0.0); }
  row_error[r] = vec2f(c, soft.x);
${
  split
    ? `  // split impulse: a Baumgarte row's β C/h goes to the position pass (.w), the velocity solve is unbiased
  let bias = soft.x * c;
  let baumgarte = bounds.z == 0.0 && !speculative;
  row_solve[3u * r] = vec4f(select(bias, 0.0, baumgarte), soft.y, params.warm_start * row_solve[3u * r].z, select(0.0, bias, baumgarte));
  row_pseudo[r] = 0.0;`
    : `  row_solve[3u * r] = vec4f(soft.x * c, soft.y, params.warm_start * row_solve[3u * r].z, 0.0);`
}
  return soft.y;
}
`;

const prepareBindings = (split: boolean): RowKernelSpec['bindings'] => [
  { name: 'prepare_list', access: 'read' },
  { name: 'row_block', access: 'read' },
  { name: 'row_params', access: 'read' },
  { name: 'inverse_mass', access: 'read' },
  { name: 'row_error', access: 'read_write' },
  { name: 'row_solve', access: 'read_write' },
  ...(split ? [{ name: 'row_pseudo' as const, access: 'read_write' as const }] : []),
];

/** prepare of a rigid point joint's block: A = (m_A⁻¹ + m_B⁻¹) I₃ − [a]× I_A⁻¹ [a]× − [b]× I_B⁻¹ [b]× (the Jacobi text's A_ℓℓ, = J M⁻¹ Jᵀ of point.ts's rows), A⁻¹ by the adjugate */
const preparePoint = (split: boolean, massSplit = false): RowKernelSpec => ({
  name: 'prepare_point_blocks',
  over: 'point_block',
  list: 'prepare_list',
  bindings: [
    { name: 'prepare_list', access: 'read' },
    { name: 'row_block', access: 'read' },
    { name: 'inverse_mass', access: 'read' },
    { name: 'point_arm', access: 'read' },
    { name: 'row_error', access: 'read_write' },
    { name: 'row_solve', access: 'read_write' },
    ...(split ? [{ name: 'row_pseudo' as const, access: 'read_write' as const }] : []),
    ...(massSplit ? [{ name: 'row_position_inverse' as const, access: 'read_write' as const }] : []),
  ],
  helpers: softnessWgsl,
  body: /* wgsl */ `
  let blk = row_block[ib_block];
  let r0 = blk.x;
  // rigid equality rows (α = 0, no bounds: what makes the block a point block): (S2) gives β/h, γ = 0
  let soft = row_softness(0.0, 0.0, params.h, params.baumgarte);
  for (var p = 0u; p < 3u; p++) {
    let r = r0 + p;
    let c = row_error[r].x;
    row_error[r] = vec2f(c, soft.x);
${
    split
      ? `    // split impulse (prepare_row): β C/h for the position pass only, λ_p = 0
    row_solve[3u * r] = vec4f(0.0, soft.y, params.warm_start * row_solve[3u * r].z, soft.x * c);
    row_pseudo[r] = 0.0;`
      : `    row_solve[3u * r] = vec4f(soft.x * c, soft.y, params.warm_start * row_solve[3u * r].z, 0.0);`
  }
  }
  let ma = inverse_mass[blk.z];
  let mb = inverse_mass[blk.w];
  let sa = cross_mat(point_arm[2u * r0].xyz);
  let sb = cross_mat(point_arm[2u * r0 + 1u].xyz);
${
    massSplit
      ? `  // mass splitting (block-solver.ts massShare): body k's m⁻¹ and I⁻¹ times s_k, A^s = J S M⁻¹ Jᵀ
  let lin = ma.mass * ma.share + mb.mass * mb.share;
  var A = mat3x3f(vec3f(lin, 0.0, 0.0), vec3f(0.0, lin, 0.0), vec3f(0.0, 0.0, lin));
  if (ma.mass > 0.0) { A -= sa * (ma.share * ma.inertia) * sa; }
  if (mb.mass > 0.0) { A -= sb * (mb.share * mb.inertia) * sb; }`
      : `  let lin = ma.mass + mb.mass;
  var A = mat3x3f(vec3f(lin, 0.0, 0.0), vec3f(0.0, lin, 0.0), vec3f(0.0, 0.0, lin));
  if (ma.mass > 0.0) { A -= sa * ma.inertia * sa; }
  if (mb.mass > 0.0) { A -= sb * mb.inertia * sb; }`
  }
  // A⁻¹ by rows (the transpose's columns: A is symmetric only to rounding, and A⁻¹ ρ must use A⁻¹ as
  // computed, as the Jacobi text's kernel does); entries 4..7 of each row stay 0 from creation
  let inv = transpose(mat3_inverse(A));
  row_solve[3u * r0 + 1u] = vec4f(inv[0], 0.0);
  row_solve[3u * r0 + 4u] = vec4f(inv[1], 0.0);
  row_solve[3u * r0 + 7u] = vec4f(inv[2], 0.0);${
    massSplit
      ? `
  // the position pass's own block (block-solver.ts positionShare): A^p = J S^p M⁻¹ Jᵀ, S^p = diag(s^p_k), its inverse
  // by rows at row_position_inverse[2 (r0 + p)] (a second inverse per block: the passes' bounds differ)
  let lin_p = ma.mass * ma.position_share + mb.mass * mb.position_share;
  var Ap = mat3x3f(vec3f(lin_p, 0.0, 0.0), vec3f(0.0, lin_p, 0.0), vec3f(0.0, 0.0, lin_p));
  if (ma.mass > 0.0) { Ap -= sa * (ma.position_share * ma.inertia) * sa; }
  if (mb.mass > 0.0) { Ap -= sb * (mb.position_share * mb.inertia) * sb; }
  let inv_p = transpose(mat3_inverse(Ap));
  row_position_inverse[2u * r0] = vec4f(inv_p[0], 0.0);
  row_position_inverse[2u * r0 + 2u] = vec4f(inv_p[1], 0.0);
  row_position_inverse[2u * r0 + 4u] = vec4f(inv_p[2], 0.0);`
      : ''
  }`,
});

/**
 * Module-scope WGSL: fn invert_block(A, n) -> A⁻¹ of an n×n block (row-major, n ≤ 6) by rows.ts
 * invertBlock's rules: n = 1 directly (0 unless positive), n = 3 by the adjugate, else Gauss–Jordan
 * with diagonal pivots, a dependent row (pivot ≤ GPU_DEPENDENT_PIVOT · max diag) getting a zero row
 * and column. Needs rigidBodyWgsl's mat3_inverse.
 */
export const invertBlockWgsl = /* wgsl */ `
fn invert_block(A_in: array<f32, ${MAX_GPU_BLOCK_ROWS * MAX_GPU_BLOCK_ROWS}>, n: u32) -> array<f32, ${MAX_GPU_BLOCK_ROWS * MAX_GPU_BLOCK_ROWS}> {
  var A = A_in;
  var inv: array<f32, ${MAX_GPU_BLOCK_ROWS * MAX_GPU_BLOCK_ROWS}>;
  if (n == 1u) {
    inv[0] = select(0.0, 1.0 / A[0], A[0] > 0.0);
    return inv;
  }
  if (n == 3u) {
    let m = mat3_inverse(mat3x3f(A[0], A[1], A[2], A[3], A[4], A[5], A[6], A[7], A[8]));
    for (var p = 0u; p < 3u; p++) { for (var q = 0u; q < 3u; q++) { inv[p * 3u + q] = m[q][p]; } }
    return inv;
  }
  var scale = 0.0;
  for (var i = 0u; i < n; i++) { scale = max(scale, abs(A[i * n + i])); }
  let tiny = ${GPU_DEPENDENT_PIVOT} * scale;
  var dropped: array<bool, ${MAX_GPU_BLOCK_ROWS}>;
  for (var i = 0u; i < n; i++) {
    dropped[i] = false;
    for (var j = 0u; j < n; j++) { inv[i * n + j] = select(0.0, 1.0, i == j); }
  }
  for (var c = 0u; c < n; c++) {
    let piv = A[c * n + c];
    if (!(piv > tiny)) { dropped[c] = true; continue; }
    let ip = 1.0 / piv;
    for (var j = 0u; j < n; j++) { A[c * n + j] *= ip; inv[c * n + j] *= ip; }
    for (var i = 0u; i < n; i++) {
      if (i == c) { continue; }
      let f = A[i * n + c];
      if (f == 0.0) { continue; }
      for (var j = 0u; j < n; j++) { A[i * n + j] -= f * A[c * n + j]; inv[i * n + j] -= f * inv[c * n + j]; }
    }
  }
  for (var i = 0u; i < n; i++) { for (var j = 0u; j < n; j++) { if (dropped[i] || dropped[j]) { inv[i * n + j] = 0.0; } } }
  return inv;
}
`;

const prepareGeneral = (split: boolean, massSplit = false): RowKernelSpec => ({
  name: 'prepare_blocks',
  over: 'general_block',
  list: 'prepare_list',
  bindings: [...prepareBindings(split), { name: 'row_jacobian', access: 'read' }],
  helpers: jacobianAccess + softnessWgsl + rowSoftnessOf(split) + invertBlockWgsl,
  body: /* wgsl */ `
  let blk = row_block[ib_block];
  let r0 = blk.x;
  let n = blk.y & 15u;
  var A: array<f32, ${MAX_GPU_BLOCK_ROWS * MAX_GPU_BLOCK_ROWS}>;
  var gamma: array<f32, ${MAX_GPU_BLOCK_ROWS}>;
  for (var p = 0u; p < n; p++) { gamma[p] = prepare_row(r0 + p); }
  // A_bb = J_b M⁻¹ J_bᵀ (rows.ts blockDelassus): Σ over the two bodies of m⁻¹ J_v,p·J_v,q + J_ω,p·I⁻¹ J_ω,q
  let ma = inverse_mass[blk.z];
  let mb = inverse_mass[blk.w];
  for (var p = 0u; p < n; p++) {
    for (var q = p; q < n; q++) {
      var a = 0.0;
${
    massSplit
      ? `      // mass splitting (block-solver.ts massShare): body k's part times s_k, A^s = J S M⁻¹ Jᵀ
      if (ma.mass > 0.0) { a += ma.share * (ma.mass * dot(row_jva(r0 + p), row_jva(r0 + q)) + dot(row_jwa(r0 + p), ma.inertia * row_jwa(r0 + q))); }
      if (mb.mass > 0.0) { a += mb.share * (mb.mass * dot(row_jvb(r0 + p), row_jvb(r0 + q)) + dot(row_jwb(r0 + p), mb.inertia * row_jwb(r0 + q))); }`
      : `      if (ma.mass > 0.0) { a += ma.mass * dot(row_jva(r0 + p), row_jva(r0 + q)) + dot(row_jwa(r0 + p), ma.inertia * row_jwa(r0 + q)); }
      if (mb.mass > 0.0) { a += mb.mass * dot(row_jvb(r0 + p), row_jvb(r0 + q)) + dot(row_jwb(r0 + p), mb.inertia * row_jwb(r0 + q)); }`
  }
      A[p * n + q] = a;
      A[q * n + p] = a;
    }
    A[p * n + p] += gamma[p];
  }
  // (A_bb + γ)⁻¹ by rows.ts invertBlock's rules (invert_block, below)
  let inv = invert_block(A, n);
  // row p of the inverse at row_solve[3(r0 + p) + 1], [3(r0 + p) + 2]
  for (var p = 0u; p < n; p++) {
    var line: array<f32, 8>;
    for (var q = 0u; q < n; q++) { line[q] = inv[p * n + q]; }
    row_solve[3u * (r0 + p) + 1u] = vec4f(line[0], line[1], line[2], line[3]);
    row_solve[3u * (r0 + p) + 2u] = vec4f(line[4], line[5], line[6], line[7]);
  }`,
});

/**
 * The position pass's own inverse of a general block (jacobi-gpu with its joints' masses split: block-solver.ts
 * positionShare), after prepare_blocks (γ from row_solve[3r].y): (A_bb^p + diag γ)⁻¹, A^p = J S^p M⁻¹ Jᵀ with
 * S^p = diag(inverse_mass.position_share), row p at row_position_inverse[2 (r0 + p)], [2 (r0 + p) + 1].
 */
const preparePositionBlocks: RowKernelSpec = {
  name: 'prepare_position_blocks',
  over: 'general_block',
  list: 'prepare_list',
  bindings: [
    { name: 'prepare_list', access: 'read' },
    { name: 'row_block', access: 'read' },
    { name: 'inverse_mass', access: 'read' },
    { name: 'row_jacobian', access: 'read' },
    { name: 'row_solve', access: 'read' },
    { name: 'row_position_inverse', access: 'read_write' },
  ],
  helpers: jacobianAccess + invertBlockWgsl,
  body: /* wgsl */ `
  let blk = row_block[ib_block];
  let r0 = blk.x;
  let n = blk.y & 15u;
  var A: array<f32, ${MAX_GPU_BLOCK_ROWS * MAX_GPU_BLOCK_ROWS}>;
  let ma = inverse_mass[blk.z];
  let mb = inverse_mass[blk.w];
  for (var p = 0u; p < n; p++) {
    for (var q = p; q < n; q++) {
      var a = 0.0;
      if (ma.mass > 0.0) { a += ma.position_share * (ma.mass * dot(row_jva(r0 + p), row_jva(r0 + q)) + dot(row_jwa(r0 + p), ma.inertia * row_jwa(r0 + q))); }
      if (mb.mass > 0.0) { a += mb.position_share * (mb.mass * dot(row_jvb(r0 + p), row_jvb(r0 + q)) + dot(row_jwb(r0 + p), mb.inertia * row_jwb(r0 + q))); }
      A[p * n + q] = a;
      A[q * n + p] = a;
    }
    A[p * n + p] += row_solve[3u * (r0 + p)].y;
  }
  let inv = invert_block(A, n);
  for (var p = 0u; p < n; p++) {
    var line: array<f32, 8>;
    for (var q = 0u; q < n; q++) { line[q] = inv[p * n + q]; }
    row_position_inverse[2u * (r0 + p)] = vec4f(line[0], line[1], line[2], line[3]);
    row_position_inverse[2u * (r0 + p) + 1u] = vec4f(line[4], line[5], line[6], line[7]);
  }`,
};

/**
 * (R1) at once for Gauss-Seidel: Δv_A += h m_A⁻¹ lin_a, Δω_A += h I_A⁻¹ ang_a, the same for B, from
 * the block's summed J_bᵀ Δλ (fixed bodies never written); into ΔV (velocity_delta), or in the position
 * pass into P (pseudo_velocity).
 */
const applyImmediateTo = (target: 'velocity_delta' | 'pseudo_velocity') => /* wgsl */ `
    let ma = inverse_mass[blk.z];
    if (ma.mass > 0.0) {
      ${target}[2u * blk.z] = vec4f(${target}[2u * blk.z].xyz + params.h * ma.mass * lin_a, 0.0);
      ${target}[2u * blk.z + 1u] = vec4f(${target}[2u * blk.z + 1u].xyz + params.h * (ma.inertia * ang_a), 0.0);
    }
    let mb = inverse_mass[blk.w];
    if (mb.mass > 0.0) {
      ${target}[2u * blk.w] = vec4f(${target}[2u * blk.w].xyz + params.h * mb.mass * lin_b, 0.0);
      ${target}[2u * blk.w + 1u] = vec4f(${target}[2u * blk.w + 1u].xyz + params.h * (mb.inertia * ang_b), 0.0);
    }`;
const applyImmediate = applyImmediateTo('velocity_delta');

/**
 * The point fast path of block `blk` (block-solver.ts solveBlocks' rigid equality 3-block), as WGSL
 * statements: ρ = J V + β C with J V = v_B + ω_B × b − v_A − ω_A × a (point.ts's rows),
 * Δλ = −h⁻¹ A⁻¹ ρ, no bounds, no γ. With `immediate`, J_bᵀ Δλ = (−Δλ, −a × Δλ; Δλ, b × Δλ) into ΔV at once.
 * With `position` (the split impulse's position pass, block-solver.ts solvePositions) the same on the
 * pseudo-velocities: ρ = J P + β C/h (row_solve[3r].w), λ_p (row_pseudo) += Δλ, P instead of ΔV.
 */
function pointUpdate(immediate: boolean, position = false, ownInverse = false): string {
  const bias = position ? 'w' : 'x';
  // A⁻¹'s rows: row_solve's, or the position pass's own (row_position_inverse, where the passes' splits differ)
  const inverseRow = (p: number) => (ownInverse ? `row_position_inverse[2u * r0 + ${2 * p}u]` : `row_solve[3u * r0 + ${3 * p + 1}u]`);
  const store = position
    ? `
    row_pseudo[r0] += dl.x;
    row_pseudo[r0 + 1u] += dl.y;
    row_pseudo[r0 + 2u] += dl.z;`
    : `
    row_solve[3u * r0] = vec4f(s0.xy, s0.z + dl.x, s0.w);
    row_solve[3u * r0 + 3u] = vec4f(s1.xy, s1.z + dl.y, s1.w);
    row_solve[3u * r0 + 6u] = vec4f(s2.xy, s2.z + dl.z, s2.w);`;
  return /* wgsl */ `
  {
    let r0 = blk.x;
    let a = point_arm[2u * r0].xyz;
    let b = point_arm[2u * r0 + 1u].xyz;
    let va = ${bodyVelocity(position, '2u * blk.z')};
    let wa = ${bodyVelocity(position, '2u * blk.z + 1u')};
    let vb = ${bodyVelocity(position, '2u * blk.w')};
    let wb = ${bodyVelocity(position, '2u * blk.w + 1u')};
    let s0 = row_solve[3u * r0];
    let s1 = row_solve[3u * r0 + 3u];
    let s2 = row_solve[3u * r0 + 6u];
    let rho = vb + cross(wb, b) - va - cross(wa, a) + vec3f(s0.${bias}, s1.${bias}, s2.${bias});
    let dl = (-1.0 / params.h) * vec3f(dot(${inverseRow(0)}.xyz, rho), dot(${inverseRow(1)}.xyz, rho), dot(${inverseRow(2)}.xyz, rho));${store}${
      immediate
        ? `
    let lin_a = -dl;
    let ang_a = -cross(a, dl);
    let lin_b = dl;
    let ang_b = cross(b, dl);${applyImmediateTo(position ? 'pseudo_velocity' : 'velocity_delta')}`
        : ''
    }
  }`;
}

/**
 * The projected update of a general block `blk` (block-solver.ts solveBlocks), as WGSL statements;
 * with `immediate` (Gauss-Seidel) its J_bᵀ Δλ also goes into ΔV at once (R1).
 *   ρ_p = J_p V + biasRate_p C_p + h γ_p λ_p;  λ_p ← clamp(λ_p − h⁻¹ Σ_q (A + γ)⁻¹_pq ρ_q, lower_p, upper_p)
 * With `position` (the split impulse's position pass): V = P (block_velocity of blockVelocityOf(true)), the
 * bias β C/h of row_solve[3r].w, λ_p of row_pseudo, and P instead of ΔV (block-solver.ts solvePositions).
 */
function generalUpdate(immediate: boolean, position = false, ownInverse = false): string {
  // (A + γ)⁻¹'s row r: row_solve's, or the position pass's own (row_position_inverse, where the passes' splits differ)
  const inverseRow = (half: number) => (ownInverse ? `row_position_inverse[2u * r + ${half}u]` : `row_solve[3u * r + ${half + 1}u]`);
  const sum = (dl: string, r: string) =>
    immediate ? `lin_a += ${dl} * row_jva(${r}); ang_a += ${dl} * row_jwa(${r}); lin_b += ${dl} * row_jvb(${r}); ang_b += ${dl} * row_jwb(${r});` : '';
  const lambda = (r: string, s: string) => (position ? `row_pseudo[${r}]` : `${s}.z`);
  return /* wgsl */ `
  {
    let r0 = blk.x;
    let n = blk.y & 15u;
    let u = block_velocity(blk.z, blk.w);
    ${immediate ? 'var lin_a = vec3f(0.0); var ang_a = vec3f(0.0); var lin_b = vec3f(0.0); var ang_b = vec3f(0.0);' : ''}
    var rho: array<f32, 8>;
    for (var p = 0u; p < n; p++) {
      let s = row_solve[3u * (r0 + p)];
      rho[p] = row_velocity(r0 + p, u) + s.${position ? 'w' : 'x'} + params.h * s.y * ${lambda('r0 + p', 's')};
    }
    for (var p = 0u; p < n; p++) {
      let r = r0 + p;
      let m = dot(${inverseRow(0)}, vec4f(rho[0], rho[1], rho[2], rho[3])) + dot(${inverseRow(1)}, vec4f(rho[4], rho[5], rho[6], rho[7]));
      let state = row_solve[3u * r];
      let bounds = row_params[r];
      let old = ${lambda('r', 'state')};
      let next = clamp(old - m / params.h, bounds.x, bounds.y);
      ${position ? 'row_pseudo[r] = next;' : 'row_solve[3u * r] = vec4f(state.xy, next, state.w);'}
      ${sum('(next - old)', 'r')}
    }${immediate ? applyImmediateTo(position ? 'pseudo_velocity' : 'velocity_delta') : ''}
  }`;
}

const iterationBindings: RowKernelSpec['bindings'] = [
  { name: 'block_list', access: 'read' },
  { name: 'row_block', access: 'read' },
  { name: 'velocity', access: 'read' },
  { name: 'velocity_delta', access: 'read' },
];

const updateMultipliersPoint: RowKernelSpec = {
  name: 'update_multipliers_point',
  over: 'point_block',
  list: 'block_list',
  bindings: [...iterationBindings, { name: 'point_arm', access: 'read' }, { name: 'row_solve', access: 'read_write' }],
  helpers: '',
  body: /* wgsl */ `
  // λ_ℓ ← λ_ℓ − h⁻¹ A_ℓℓ⁻¹ (J_ℓ V^k + β C_ℓ)   (37), rows' signs
  let blk = row_block[ib_block];${pointUpdate(false)}`,
};

const updateMultipliers: RowKernelSpec = {
  name: 'update_multipliers',
  over: 'general_block',
  list: 'block_list',
  bindings: [...iterationBindings, { name: 'row_jacobian', access: 'read' }, { name: 'row_params', access: 'read' }, { name: 'row_solve', access: 'read_write' }],
  helpers: blockVelocityWgsl,
  body: /* wgsl */ `
  // λ_b ← clamp(λ_b − h⁻¹ (A_bb + γ)⁻¹ (J_b V^k + biasRate C_b + h γ λ_b))   (37), projected
  let blk = row_block[ib_block];${generalUpdate(false)}`,
};

const colourBindings: RowKernelSpec['bindings'] = [
  { name: 'colour', access: 'uniform' },
  { name: 'block_list', access: 'read' },
  { name: 'row_block', access: 'read' },
  { name: 'velocity', access: 'read' },
  { name: 'velocity_delta', access: 'read_write' },
  { name: 'inverse_mass', access: 'read' },
];

/**
 * gs-gpu's sweep of one colour, two kernels (rigid point joints; the others): a thread per joint,
 * its blocks one after the other, each block's Δλ applied to ΔV at once (block-solver.ts
 * solveBlocks with immediate = true, in gs-cpu's order within each joint; the joints of a colour
 * are independent, so their order does not matter).
 */
export const solveColourKernels: RowKernelSpec[] = [
  {
    name: 'solve_colour_point',
    over: 'colour_point',
    bindings: [...colourBindings, { name: 'point_arm', access: 'read' }, { name: 'row_solve', access: 'read_write' }],
    helpers: '',
    body: /* wgsl */ `
  let blk = row_block[ib_block];${pointUpdate(true)}`,
  },
  {
    name: 'solve_colour',
    over: 'colour',
    bindings: [...colourBindings, { name: 'row_jacobian', access: 'read' }, { name: 'row_params', access: 'read' }, { name: 'row_solve', access: 'read_write' }],
    helpers: jacobianAccess + blockVelocityWgsl,
    body: /* wgsl */ `
  let blocks = row_block[ib_block].y >> 8u;
  for (var k = 0u; k < blocks; k++) {
    let blk = row_block[ib_block + k];${generalUpdate(true)}
  }`,
  },
];

const computeResidual: RowKernelSpec = {
  name: 'compute_residual',
  over: 'block',
  bindings: [
    { name: 'row_block', access: 'read' },
    { name: 'velocity', access: 'read' },
    { name: 'velocity_delta', access: 'read' },
    { name: 'row_jacobian', access: 'read' },
    { name: 'row_params', access: 'read' },
    { name: 'row_solve', access: 'read' },
    { name: 'point_arm', access: 'read' },
    { name: 'residual', access: 'read_write' },
  ],
  helpers: blockVelocityWgsl,
  body: /* wgsl */ `
  // diagnostics: ρ_p² (ρ = J V + biasRate C + h γ λ, h⁻¹ ρ = the row of b − Aλ), 0 where λ sits at a
  // bound and ρ pushes it further out (block-solver.ts solveBlocks); a rigid point joint's J V from its
  // lever arms, v_B + ω_B × b − v_A − ω_A × a (its J is not stored)
  let blk = row_block[ib_block];
  let u = block_velocity(blk.z, blk.w);
  let point = (blk.y & 32u) != 0u;
  var point_jv = vec3f(0.0);
  if (point) {
    let va = u.u0.xyz;
    let wa = vec3f(u.u0.w, u.u1.xy);
    let vb = vec3f(u.u1.zw, u.u2.x);
    let wb = u.u2.yzw;
    point_jv = vb + cross(wb, point_arm[2u * blk.x + 1u].xyz) - va - cross(wa, point_arm[2u * blk.x].xyz);
  }
  for (var p = 0u; p < (blk.y & 15u); p++) {
    let r = blk.x + p;
    let s = row_solve[3u * r];
    var jv_r = point_jv[min(p, 2u)];
    if (!point) { jv_r = row_velocity(r, u); }
    let rho = jv_r + s.x + params.h * s.y * s.z;
    let bounds = row_params[r];
    let outside = (s.z <= bounds.x && rho > 0.0) || (s.z >= bounds.y && rho < 0.0);
    residual[r] = select(rho * rho, 0.0, outside);
  }`,
};

const updateVelocities: RowKernelSpec = {
  name: 'update_velocities',
  over: 'body',
  bindings: [
    { name: 'body_rows', access: 'read' },
    { name: 'row_entries', access: 'read' },
    { name: 'row_jacobian', access: 'read' },
    { name: 'point_arm', access: 'read' },
    { name: 'row_solve', access: 'read' },
    { name: 'inverse_mass', access: 'read' },
    { name: 'velocity_delta', access: 'read_write' },
  ],
  helpers: '',
  body: /* wgsl */ `
  // ΔV_i = h M_i⁻¹ Σ_{r ∋ i} J_r,iᵀ λ_r   (34), rows' signs (R1)${rowGather((r) => `row_solve[3u * (${r})].z`)}
  let m = inverse_mass[ib];
  velocity_delta[2u * ib] = vec4f(params.h * m.mass * lin, 0.0);
  velocity_delta[2u * ib + 1u] = vec4f(params.h * (m.inertia * ang), 0.0);`,
};

/**
 * The row kernels of a Jacobi step (stage 3 and the iteration), in RowBlockSolver's order; with `split`,
 * prepare leaves a Baumgarte row's β C/h to the position pass (rowSoftnessOf) and zeroes λ_p.
 */
export function rowKernels(split = false, massSplit = false): RowKernelSpec[] {
  const position = massSplit ? [preparePositionBlocks] : [];
  return [...evaluateKernels(), preparePoint(split, massSplit), prepareGeneral(split, massSplit), ...position, updateMultipliersPoint, updateMultipliers, updateVelocities, computeResidual];
}

// ---------------------------------------------------------------- the split impulse's position pass
/*
 * block-solver.ts solvePositions in WGSL: after the velocity sweeps, ⌈N/2⌉ sweeps of the projected block
 * update on the pseudo-velocities P (pseudo_velocity, zeroed by compute_free_velocity each step) from
 * λ_p = 0 (row_pseudo, zeroed by prepare), biased by β C/h alone (row_solve[3r].w):
 *   Δλ_p = −h⁻¹ (A_bb + γ)⁻¹ (J_b P + β C_b / h + h γ λ_p),  λ_p clamped to the rows' bounds
 * then x ← x + h (v + P), q ← Cay(h (ω + P_ω)) q (compute_positions_split), P forgotten, λ_p never read by
 * the velocity solve. jacobi-gpu sweeps it as its velocity solve (order 'jacobi': every block from the same
 * P, then the gather P = h M⁻¹ Jᵀ λ_p), gs-gpu colour by colour with the impulses applied to P at once,
 * every other sweep of the pass backwards (order 'symmetric' over its colour-ordered blocks).
 * Invariants as the velocity kernels': solve_positions* write only their block's λ_p; update_pseudo_velocities
 * only its body's P; solve_colour_positions* their joint's λ_p and P of its two bodies.
 */

/**
 * jacobi-gpu's position pass (order 'jacobi'): the point and general blocks' update from P, then the gather;
 * with `massSplit` the blocks' inverses are the pass's own (row_position_inverse: block-solver.ts positionShare).
 */
export const jacobiPositionKernels = (massSplit = false): RowKernelSpec[] => [
  {
    name: 'solve_positions_point',
    over: 'point_block',
    list: 'block_list',
    bindings: [
      { name: 'block_list', access: 'read' },
      { name: 'row_block', access: 'read' },
      { name: 'pseudo_velocity', access: 'read' },
      { name: 'point_arm', access: 'read' },
      { name: 'row_solve', access: 'read' },
      { name: 'row_pseudo', access: 'read_write' },
      ...(massSplit ? [{ name: 'row_position_inverse' as const, access: 'read' as const }] : []),
    ],
    helpers: '',
    body: /* wgsl */ `
  // λ_p ← λ_p − h⁻¹ A⁻¹ (J P + β C/h)   (37) on the pseudo-velocities
  let blk = row_block[ib_block];${pointUpdate(false, true, massSplit)}`,
  },
  {
    name: 'solve_positions',
    over: 'general_block',
    list: 'block_list',
    bindings: [
      { name: 'block_list', access: 'read' },
      { name: 'row_block', access: 'read' },
      { name: 'pseudo_velocity', access: 'read' },
      { name: 'row_jacobian', access: 'read' },
      { name: 'row_params', access: 'read' },
      { name: 'row_solve', access: 'read' },
      { name: 'row_pseudo', access: 'read_write' },
      ...(massSplit ? [{ name: 'row_position_inverse' as const, access: 'read' as const }] : []),
    ],
    helpers: blockVelocityOf(true),
    body: /* wgsl */ `
  // λ_p ← clamp(λ_p − h⁻¹ (A_bb + γ)⁻¹ (J_b P + β C_b/h + h γ λ_p))   (37), projected, on the pseudo-velocities
  let blk = row_block[ib_block];${generalUpdate(false, true, massSplit)}`,
  },
  {
    name: 'update_pseudo_velocities',
    over: 'body',
    bindings: [
      { name: 'body_rows', access: 'read' },
      { name: 'row_entries', access: 'read' },
      { name: 'row_jacobian', access: 'read' },
      { name: 'point_arm', access: 'read' },
      { name: 'row_pseudo', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'pseudo_velocity', access: 'read_write' },
    ],
    helpers: '',
    body: /* wgsl */ `
  // P_i = h M_i⁻¹ Σ_{r ∋ i} J_r,iᵀ λ_p,r   (34) on λ_p${rowGather((r) => `row_pseudo[${r}]`)}
  let m = inverse_mass[ib];
  pseudo_velocity[2u * ib] = vec4f(params.h * m.mass * lin, 0.0);
  pseudo_velocity[2u * ib + 1u] = vec4f(params.h * (m.inertia * ang), 0.0);`,
  },
];

const colourPositionBindings: RowKernelSpec['bindings'] = [
  { name: 'colour', access: 'uniform' },
  { name: 'block_list', access: 'read' },
  { name: 'row_block', access: 'read' },
  { name: 'pseudo_velocity', access: 'read_write' },
  { name: 'inverse_mass', access: 'read' },
];

/** gs-gpu's position pass, one colour (solve_colour's twin on P; order 'symmetric': the host reverses the colours on odd sweeps). */
export const colourPositionKernels: RowKernelSpec[] = [
  {
    name: 'solve_colour_positions_point',
    over: 'colour_point',
    bindings: [...colourPositionBindings, { name: 'point_arm', access: 'read' }, { name: 'row_solve', access: 'read' }, { name: 'row_pseudo', access: 'read_write' }],
    helpers: '',
    body: /* wgsl */ `
  let blk = row_block[ib_block];${pointUpdate(true, true)}`,
  },
  {
    name: 'solve_colour_positions',
    over: 'colour',
    bindings: [...colourPositionBindings, { name: 'row_jacobian', access: 'read' }, { name: 'row_params', access: 'read' }, { name: 'row_solve', access: 'read' }, { name: 'row_pseudo', access: 'read_write' }],
    helpers: jacobianAccess + blockVelocityOf(true),
    body: /* wgsl */ `
  let blocks = row_block[ib_block].y >> 8u;
  for (var k = 0u; k < blocks; k++) {
    let blk = row_block[ib_block + k];${generalUpdate(true, true)}
  }`,
  },
];

// ---------------------------------------------------------------- position-level pieces (xpbd-gpu)
/*
 * Appended for xpbd-gpu (src/solvers/xpbd/kernels.wgsl.ts, solve_colour_rows), the WGSL twin of
 * xpbd-cpu's solveRows: a thread per joint of a colour evaluates its rows at the current pose
 * (the evaluate_<type> bodies above, as functions) and projects them block by block. What it uses
 * of the legend above: joint (the same records; xpbd-gpu sets bits 8.. of the flags to the joint's
 * JointKind, which the evaluate bodies never test), row_jacobian and row_error.x as written by
 * write_row, row_params (lower, upper, α, meta) with meta = n + 8·more at a block's first row
 * (n rows, more = 1 when another block of the joint follows; 0 elsewhere: the xpbd rows' own use of
 * the fourth entry, which the velocity-level kernels leave 0).
 */

/** Bit shift of the JointKind in a joint record's flags (xpbd-gpu's records). */
export const JOINT_KIND_SHIFT = 8;

/**
 * Module-scope WGSL: fn evaluate_rows(j, kind) — C and J of joint record j's rows at the pose, by
 * the evaluate_<type> body of its kind (every type but the point joint, which xpbd-gpu solves with
 * its own 3×3 kernel) — and the row accessors row_jva … row_jwb. Binds joint, pose (the xpbd /
 * jacobi layout: [2i] x, [2i+1] q), row_jacobian and row_error (read_write). Needs rigidBodyWgsl's
 * quat_rotate in the module.
 */
export function rowEvaluateFunctionsWgsl(): string {
  const kinds = Object.entries(evaluateBodies).filter(([kind]) => Number(kind) !== JointKind.point);
  const fns = kinds.map(([, k]) => `fn ${k.name}_rows(j: u32) {${k.body}\n}\n`).join('\n');
  const cases = kinds.map(([kind, k]) => `    case ${kind}u: { ${k.name}_rows(j); }`).join('\n');
  return `${rowWrite}${jacobianAccess}
${fns}
fn evaluate_rows(j: u32, kind: u32) {
  switch kind {
${cases}
    default: { }
  }
}
`;
}

/**
 * Writes joint ic's record (JOINT_STRIDE vec4f, the legend's `joint`) at record[o ..]: anchors, axes,
 * q_ref, lengths and limits with their "given" flags (JOINT_FLAG), first row, bodies; `extraFlags`
 * are or-ed into the flags word (xpbd-gpu puts the joint kind there, JOINT_KIND_SHIFT).
 */
export function writeJointRecord(w: JointTable, firstRow: number, ic: number, record: Float32Array, o: number, extraFlags = 0): void {
  const bits = new Uint32Array(record.buffer, record.byteOffset, record.length);
  for (let d = 0; d < 3; d++) {
    record[o + d] = w.r0[3 * ic + d];
    record[o + 4 + d] = w.r1[3 * ic + d];
    record[o + 8 + d] = w.axisA[3 * ic + d];
    record[o + 12 + d] = w.axisB[3 * ic + d];
  }
  bits[o + 3] = firstRow;
  bits[o + 7] = w.ib0[ic];
  bits[o + 11] = w.ib1[ic];
  let flags = extraFlags;
  const given = (x: number, flag: number) => (Number.isNaN(x) ? 0 : ((flags |= flag), x));
  record.set([given(w.length[ic], JOINT_FLAG.length), given(w.minLength[ic], JOINT_FLAG.minLength), given(w.maxLength[ic], JOINT_FLAG.maxLength), given(w.lowerAngle[ic], JOINT_FLAG.lowerAngle)], o + 20);
  record[o + 24] = given(w.upperAngle[ic], JOINT_FLAG.upperAngle);
  bits[o + 15] = flags;
  for (let d = 0; d < 4; d++) record[o + 16 + d] = w.referenceOrientation[4 * ic + d];
}
