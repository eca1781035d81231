/**
 * WGSL of xpbd-gpu's contacts: the twin of xpbd/contacts.ts (xpbd-cpu's contact projection and velocity
 * pass, f64), stage for stage and with its names, in f32, on the manifolds of the GPU contact pipeline
 * (contacts/gpu-contacts.ts in its 'sequential' mode: GPU collision, the pair table's matching of last
 * frame's points, the per-frame colouring of the manifolds (gpu/colouring.ts) with an overflow set). The
 * equations are Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position Based
 * Dynamics" (§3.5 contacts and static friction, §3.6 the velocity pass), with xpbd/contacts.ts's four
 * departures, its bounded push-out and its rolling-sphere arms; the derivations are in that file's header
 * and are not repeated here, each kernel naming the CPU function it mirrors.
 *
 * Records (gpu/layout.ts):
 *   XpbdPoint    four per pair slot (4k + j, as SolverPoint): the anchors a_A, a_B in the bodies' frames,
 *                static friction's reference (ref_a, ref_b local, slip its Δp at the substep's start, 0 when taken:
 *                departure 3), the substep's λ (n, t₁, t₂; N·s²), the block's first iterate (warm: the λ of
 *                the substep before, at a frame's start h² × the matched old point's force), μ_d, stuck
 *                (static friction held the point in its last projection), active (λ_n > 0 in the substep),
 *                ṽ_n and s̃ (the normal velocity and separation at the substep's start: restitution's input), the
 *                collision impulse P and whether the point collided (xc_collide)
 *   XpbdContactParams, XpbdSlot (the colour a dispatch solves, and whether it is a substep's first iteration)
 * and per body: sphere_radius (f32, a sphere's radius: its point along n is ±r n every substep; −1: not a
 * sphere), pre_velocity (Ṽ as velocity's [2i] v, [2i+1] ω: collide's velocities, only where a body has e > 0).
 *
 * Order. xpbd-cpu projects its manifolds one after the other; here a colour's manifolds share no moving body
 * (gpu/colouring.ts), so one thread per manifold solves them at once, the colours in order (the first
 * CONTACT_DISPATCHED_COLOURS one dispatch each, the late ones in one workgroup, the overflow set last by one
 * thread: the *_tail kernels): a Gauss–Seidel sweep in colour order. Its CPU twin in the same order is
 * XpbdContacts.colourOrder. Each thread reads and writes only its own manifold's two bodies' pose (or
 * velocity) and its own points: no atomics, no float scatter.
 *
 * Restitution is xpbd-cpu's (xpbd/contacts.ts header, "Velocity pass"), only where a body has e > 0: at the
 * substep's start xc_save_velocity keeps Ṽ (the predicted v, ω) and xc_begin_substep each point's ṽ_n and s̃
 * (beginSubstep, recordCollisionInput); first in the velocity pass, the collision propagation (collide:
 * Guendelman, Bridson & Fedkiw 2003), xc_collide sweeping the collisions on Ṽ colour by colour in one
 * workgroup until none collides (contacts/gpu-contacts.wgsl.ts cs_restitution's sweep and manifold block,
 * shared: XPBD's own part is its velocities, arms and collision test) and xc_apply_* replacing each collided
 * point's λ_n / h by the collision's P in v and x (what passes a Newton's cradle's strike down its row); then
 * Müller's rule at the other active points (§3.6: v_n → max(−e ṽ_n, 0), e = 0 when |ṽ_n| ≤ the threshold;
 * velocityPass's normal rows' targets). The CPU's collide sweeps its manifolds in list order, the GPU in colour
 * order (a cradle comes out the same: test/xpbd-gpu-contacts.test.ts). Not here: sleeping, the coherence
 * shortcut (every pair goes through the narrow phase each frame: xpbd-cpu with coherence off is the exact
 * twin).
 */
import { defineRecord } from '../../gpu/layout.js';
import { THREAD_INDEX_WGSL, kernelEntry } from '../../gpu/dispatch.js';
import { rigidBodyWgsl } from '../../rigid/body.wgsl.js';
import {
  SolverManifoldRecord,
  SolverPointRecord,
  MaterialRecord,
  RestitutionSlotRecord,
  matchPointWgsl,
  collisionBlockWgsl,
  restitutionEntry,
  tailEntry,
  tailSweepVarsWgsl,
  tailSweepWgsl,
  restitutionSweepVarsWgsl,
  restitutionSweepWgsl,
} from '../../contacts/gpu-contacts.wgsl.js';
import { MATCH_DISTANCE } from '../../collision/manifolds.js';
import { NOT_FOUND } from '../../gpu/pair-table.js';

export const XpbdPointRecord = defineRecord('XpbdPoint', [
  ['anchor_a', 'vec3f', "a_A: the point on A in A's frame (the record's)"],
  ['mu', 'f32', 'μ_d of the pair (the velocity pass)'],
  ['anchor_b', 'vec3f', "a_B in B's frame"],
  ['stuck', 'u32', 'static friction held the point in its last projection (xc_match: 1 = reference carried)'],
  ['ref_a', 'vec3f', "static friction's reference anchor on A (local)"],
  ['is_active', 'u32', 'λ_n > 0 in this substep'],
  ['ref_b', 'vec3f', 'on B (local)'],
  ['vn_before', 'f32', "ṽ_n: the normal velocity at the substep's start, after the prediction (xc_begin_substep; restitution's input), m/s"],
  ['slip', 'vec3f', "Δp of the reference pair, (p_B − p_A) − (p_B − p_A)_ref, at the pose of the substep's start (world), m: summed substep by substep from motions since the start (slip_since_start)"],
  ['predicted_separation', 'f32', "s̃ = (p_B − p_A) · n at the substep's start, after the prediction (xc_begin_substep; collide's input), m"],
  ['lambda', 'vec3f', "the substep's (λ_n, λ₁, λ₂), N·s² (velocity pass: + h P along t)"],
  ['collision', 'f32', "P: the substep's collision impulse along n (xc_collide, summed over its sweeps), N·s"],
  ['warm', 'vec3f', "the block's first iterate (λ_n, λ₁, λ₂), N·s²"],
  ['collided', 'u32', '1: the point collided in this substep (xc_collide): its λ_n is h P, the velocity pass leaves its normal row'],
] as const);

export const XpbdContactParamsRecord = defineRecord('XpbdContactParams', [
  ['h', 'f32', 'the substep, s'],
  ['inv_h', 'f32'],
  ['inv_h2', 'f32'],
  ['push', 'f32', 'v_push h: the old overlap a substep may take out, m (PUSH_OUT_SPEED h)'],
  ['body_count', 'u32'],
  ['capacity', 'u32', 'pair slots'],
  ['pair_counter', 'u32', "index of the pair count in the broad phase's counters"],
  ['restitution_threshold', 'f32', 'the approach speed |ṽ_n| at or below which e acts as 0, m/s (--restitution-threshold)'],
] as const);

export const XpbdSlotRecord = defineRecord('XpbdSlot', [
  ['colour', 'u32', 'colour c (K: the overflow set, one thread)'],
  ['first', 'u32', "1: the substep's first iteration (λ reset, warm start used and kept)"],
  ['pad0', 'u32'],
  ['pad1', 'u32'],
] as const);

/** The names of the buffers the kernels bind (XpbdContactStages binds them by these names). */
export type XpbdContactBufferName =
  | 'counters' | 'found' | 'prev_manifolds' | 'prev_points' | 'manifolds' | 'points' | 'materials' | 'offsets' | 'order'
  | 'pose' | 'pose_prev' | 'velocity' | 'body_mass' | 'world_inertia' | 'xpbd_points' | 'prev_xpbd_points' | 'sphere_radius' | 'pre_velocity'
  | 'residual';

type Access = 'read' | 'read_write';
interface KernelDecl {
  name: string;
  /**
   * 'pair': one thread per pair slot (indirect, from the pair count); 'body'; 'colour': one per manifold of a
   * colour (XpbdSlot at binding 1); 'tail': one workgroup over the late colours and the overflow set (XpbdSlot:
   * its `first`; contacts/gpu-contacts.wgsl.ts tailSweepWgsl); 'restitution': one workgroup over every colour
   * (a RestitutionSlot at binding 1); 'residual': one thread per pair slot with an XpbdSlot at binding 1 (its
   * `first`: λ read as 0, the substep's start)
   */
  over: 'pair' | 'body' | 'colour' | 'tail' | 'restitution' | 'residual';
  bindings: [XpbdContactBufferName, string, Access][];
  body: string;
  /** WGSL functions the body calls (beside the colour kernels' own) */
  helpers?: string;
}

const header = /* wgsl */ `
${XpbdContactParamsRecord.wgsl}
${SolverManifoldRecord.wgsl}
${SolverPointRecord.wgsl}
${MaterialRecord.wgsl}
${XpbdPointRecord.wgsl}
struct BodyMass {
  inertia: mat3x3f, // I⁻¹ (local in body_mass, world in world_inertia)
  mass: f32,        // m⁻¹ (0: fixed)
};
@group(0) @binding(0) var<uniform> params: XpbdContactParams;
${THREAD_INDEX_WGSL}
${rigidBodyWgsl}
fn pair_count(c: u32) -> u32 { return min(c, params.capacity); }
fn rotate_back(q: vec4f, v: vec3f) -> vec3f { return quat_rotate(vec4f(-q.xyz, q.w), v); } // Rᵀ v
// f32 at the coordinates' size. A point's d and its Δp are differences of positions some metres from the
// origin (p = x + R a, |x| ~ 3 m on a ramp, ulp 2.4e-7 m), where one substep moves a resting body by g h² ≈
// 2.7e-5 m (h = 1/600 s): summed as x + R a, each point's value is rounded by ~1e-7 m on its own, a pattern
// no rigid motion makes, which the manifold block cannot meet; the stick test (tangential motion undone to
// 1 %) then failed now and then near the Coulomb limit. Measured in xpbd-cpu (xpbd-gpu's twin, 1 × 10 substeps,
// 1 m box of μ 0.5 at 3 m on a slope of tan θ = 0.991 μ_s) with d and Δp evaluated in f32 as here before: it slid
// 23.8 mm in 2 s (with d alone so: 12.9 mm in 1 s); arranged as below, 0.000 mm. So no per-point sum is formed
// at that size:
//   d   = −((x_B − x_A) · n + a_B · (R_Bᵀ n) − a_A · (R_Aᵀ n))   ((R a) · n = a · (Rᵀ n): the rotated normal is
//         the manifold's, one rounding for all its points; a sphere's arm ±r n gives ±r)
//   Δp  = slip + (Δx_B + (R(δq_B) − I) R̄_B a_B) − (A's)   (slip_since_start: no absolute p at all)
fn arm_n_a(radius: f32, q: vec4f, anchor: vec3f, n: vec3f) -> f32 { return select(dot(anchor, rotate_back(q, n)), radius * dot(n, n), radius >= 0.0); }
fn arm_n_b(radius: f32, q: vec4f, anchor: vec3f, n: vec3f) -> f32 { return select(dot(anchor, rotate_back(q, n)), -radius * dot(n, n), radius >= 0.0); }
// d = −(p_B − p_A) · n of a point (arm_n_*), bodies at (xa, qa), (xb, qb)
fn depth(rad_a: f32, rad_b: f32, xa: vec3f, qa: vec4f, xb: vec3f, qb: vec4f, anchor_a: vec3f, anchor_b: vec3f, n: vec3f) -> f32 {
  return -((dot(xb - xa, n) + arm_n_b(rad_b, qb, anchor_b, n)) - arm_n_a(rad_a, qa, anchor_a, n));
}
// Static friction's Δp of two non-spheres, as the reference pair's Δp at the substep's start (slip, a record
// field) plus its motion since (departure 3; xpbd/contacts.ts slipSinceStart, the f64 twin in the same
// arithmetic). Before, Δp = ((x_B − x_A) − R_A a_A) + R_B a_B − (p_B − p_A)_ref: R_B a_B (|a_B| ≈ 0.87 m) is
// rounded per point by ~3e-8 m a component (half an ulp of 0.5), afresh whenever q_B changes, against a
// tangential target of g sin θ h² ≈ 1.2e-5 m a substep (1 m box at rest on tan θ = 0.4954, 1 × 10): targets
// off a rigid motion by ~0.5 %. The stick block (12 rows, rank 6) cannot meet such a pattern, and its sweeps
// walk along the null space instead: measured (xpbd-gpu, frames 20 to 40) λ_t,2 of the two uphill corners grew
// from ±0.02 to ±0.19 (·10⁻³ N·s², against their λ_t,1 of 1.5) and their λ_n split from 3.12 | 3.12 to
// 2.91 | 3.22; at frame 41 the uphill corners' discs (which need 0.991 of their λ_n at the uniform share) no
// longer held the load, the block missed by 19 %, and the box slid in frames 41–46 (0.55 mm; 1.42 mm by 1 s).
// Now each term is a motion since the substep's start (|Δx| ~ 1e-5 m, the turn δq = q ⊗ q̄* of ~1e-7 rad),
// rounded relative to its own size: what f32 leaves per point is ~1e-7 of the motion (~1e-12 m), and the
// rounding of δq's vector part (~1e-8, a difference of products of unit numbers, as update_velocities' ω) is
// one rotation shared by all the body's points, a rigid motion the block meets. The slip is carried by
// xc_advance_slip at each substep's end (after update_velocities, before the velocity pass: a collision's
// position shift in xc_apply_* is not added, as xpbd-cpu's advanceSlip), is 0 where a reference is taken, and
// minus the motion since the start where one is re-taken mid-substep.
// A body point's motion since the substep's start: Δx + (R(δq) − I) R̄ a, δq = q ⊗ q̄* = (v, w) (unit), with
// (R(δq) − I) u = 2 w (v × u) + 2 v × (v × u) (the rotation formula less u: no sum at the size of u)
fn point_moved(dx: vec3f, q: vec4f, qp: vec4f, anchor: vec3f) -> vec3f {
  let w = dot(q, qp);
  let v = qp.w * q.xyz - q.w * qp.xyz - cross(q.xyz, qp.xyz);
  let u = quat_rotate(qp, anchor);
  let vu = cross(v, u);
  return dx + (2.0 * w * vu + 2.0 * cross(v, vu));
}
// Δp since the substep's start of the anchor pair (a_A, a_B): B's point's motion less A's (a fixed body: 0)
fn slip_since_start(ma: f32, dxa: vec3f, qa: vec4f, pqa: vec4f, mb: f32, dxb: vec3f, qb: vec4f, pqb: vec4f, anchor_a: vec3f, anchor_b: vec3f) -> vec3f {
  var s = vec3f(0.0);
  if (mb > 0.0) { s = point_moved(dxb, qb, pqb, anchor_b); }
  if (ma > 0.0) { s -= point_moved(dxa, qa, pqa, anchor_a); }
  return s;
}
`;

/**
 * The manifold block of xpbd/contacts.ts (row, solveBlock, solvePoint, targetsMet, applyDelta) on private
 * arrays: ≤ 12 rows J_i = (−u_i, −(r_A × u_i), u_i, r_B × u_i) of the manifold's two bodies, their masses and
 * world I⁻¹ at the pose now (fixed: m⁻¹ = 0, I⁻¹ = 0, so its columns add exact zeros).
 */
/** xpbd/contacts.ts BLOCK_SWEEPS: a manifold block's projected Gauss–Seidel sweeps at most. */
const BLOCK_SWEEPS = 16;

const blockWgsl = /* wgsl */ `
const BLOCK_SWEEPS = ${BLOCK_SWEEPS};          // xpbd/contacts.ts BLOCK_SWEEPS
const GIVE_UP_SWEEPS = 8u;        // GIVE_UP_SWEEPS, GIVE_UP_CHANGE: a stick test's block still cycling fails it
const GIVE_UP_CHANGE = 0.1;
const BLOCK_CONVERGED = 1e-9;     // a sweep changing no λ by more than this fraction of the largest ends it
const STICK_TOLERANCE = 0.01;     // the tangential targets met to 1 % of their norm: static friction holds
const RESTICK_UNMET = 0.25;       // restickBlock runs where the first stick test left at most this fraction undone
var<private> b_ca: array<vec3f, 12>;   // r_A × u_i
var<private> b_cb: array<vec3f, 12>;   // r_B × u_i
var<private> b_u: array<vec3f, 12>;    // u_i (n, t₁ or t₂)
var<private> b_K: array<f32, 144>;     // K = J M⁻¹ Jᵀ, row-major, stride 12
var<private> b_diag: array<f32, 12>;
var<private> b_target: array<f32, 12>;
var<private> b_lambda: array<f32, 12>;
var<private> b_bound: array<f32, 12>;  // a tangent pair's fixed disc radius (< 0: none, the disc follows μ λ_n)
var<private> b_mu: array<f32, 12>;     // μ of a tangent pair whose disc is μ λ_n of its point's normal row
var<private> b_kind: array<u32, 12>;   // 0 normal, 1 t₁, 2 t₂
var<private> b_point: array<u32, 12>;  // the manifold's point (= its normal row in the projection)
var<private> b_ma: f32;
var<private> b_mb: f32;
var<private> b_Wa: mat3x3f;
var<private> b_Wb: mat3x3f;
// Δ = M⁻¹ Jᵀ λ: Δx_A, Δθ_A, Δx_B, Δθ_B (positions) or Δv_A, Δω_A, Δv_B, Δω_B (velocities)
var<private> d_xa: vec3f;
var<private> d_ta: vec3f;
var<private> d_xb: vec3f;
var<private> d_tb: vec3f;

// row(): row i of point j along unit u with target t; K_ii = w_A(u) + w_B(u) = Σ mᵢ⁻¹ + (rᵢ × u)ᵀ Iᵢ⁻¹ (rᵢ × u)
fn b_row(i: u32, j: u32, kind: u32, u: vec3f, ra: vec3f, rb: vec3f, t: f32) {
  b_u[i] = u; b_ca[i] = cross(ra, u); b_cb[i] = cross(rb, u);
  b_diag[i] = (b_ma + b_mb) * dot(u, u) + dot(b_ca[i], b_Wa * b_ca[i]) + dot(b_cb[i], b_Wb * b_cb[i]);
  b_target[i] = t; b_lambda[i] = 0.0; b_kind[i] = kind; b_point[i] = j; b_mu[i] = 0.0; b_bound[i] = -1.0;
}
// K_ij: the rows' directions are the manifold's orthonormal n, t₁, t₂, so u_i · u_j is 1 within a kind, else 0
fn b_k(i: u32, j: u32) -> f32 {
  return select(0.0, b_ma + b_mb, b_kind[i] == b_kind[j]) + dot(b_ca[i], b_Wa * b_ca[j]) + dot(b_cb[i], b_Wb * b_cb[j]);
}
fn b_delta(rows: u32) {
  var p = vec3f(0.0); var ta = vec3f(0.0); var tb = vec3f(0.0);
  for (var i = 0u; i < rows; i++) { let l = b_lambda[i]; p += l * b_u[i]; ta += l * b_ca[i]; tb += l * b_cb[i]; }
  d_xa = -b_ma * p; d_ta = -(b_Wa * ta); d_xb = b_mb * p; d_tb = b_Wb * tb;
}
// targetsMet: |target − J Δ| ≤ STICK_TOLERANCE |target| over rows [row0, row1)
fn b_targets_met(row0: u32, row1: u32) -> bool {
  return b_unmet(row0, row1) <= STICK_TOLERANCE;
}
// unmet: |target − J Δ| / |target| over rows [row0, row1) after the last block solve, 0 when within STICK_TOLERANCE
fn b_unmet(row0: u32, row1: u32) -> f32 {
  var r2 = 0.0; var t2 = 0.0;
  for (var i = row0; i < row1; i++) {
    let jd = dot(b_u[i], d_xb - d_xa) - dot(b_ca[i], d_ta) + dot(b_cb[i], d_tb);
    let r = b_target[i] - jd;
    r2 += r * r; t2 += b_target[i] * b_target[i];
  }
  if (r2 <= STICK_TOLERANCE * STICK_TOLERANCE * t2) { return 0.0; }
  return sqrt(r2 / t2);
}
// solvePoint: one point, its normal row alone (Δλ_n = d / (w_A + w_B), Müller §3.3 with α = 0) or its
// normal and tangent pair, λ = K⁻¹ b by the adjugate (K ≥ (m_A⁻¹ + m_B⁻¹) I); false when that λ leaves the disc
fn b_solve_point(rows: u32, one_sided: bool) -> bool {
  let k00 = b_diag[0];
  if (!(k00 > 0.0)) { return false; }
  if (rows == 1u) {
    var l = b_target[0] / k00;
    if (one_sided && l < 0.0) { l = 0.0; }
    b_lambda[0] = l;
  } else {
    let k01 = b_k(0u, 1u); let k02 = b_k(0u, 2u); let k12 = b_k(1u, 2u);
    let k11 = b_diag[1]; let k22 = b_diag[2];
    let c00 = k11 * k22 - k12 * k12; let c01 = k02 * k12 - k01 * k22; let c02 = k01 * k12 - k02 * k11;
    let c11 = k00 * k22 - k02 * k02; let c12 = k01 * k02 - k00 * k12; let c22 = k00 * k11 - k01 * k01;
    let det = k00 * c00 + k01 * c01 + k02 * c02;
    if (!(det > 0.0)) { return false; }
    let inv = 1.0 / det;
    let b0 = b_target[0]; let b1 = b_target[1]; let b2 = b_target[2];
    let ln = (c00 * b0 + c01 * b1 + c02 * b2) * inv;
    let l1 = (c01 * b0 + c11 * b1 + c12 * b2) * inv;
    let l2 = (c02 * b0 + c12 * b1 + c22 * b2) * inv;
    if (one_sided && ln < 0.0) { return false; }
    let radius = select(b_bound[2], b_mu[2] * ln, b_mu[2] > 0.0);
    if (radius >= 0.0 && l1 * l1 + l2 * l2 > radius * radius) { return false; }
    b_lambda[0] = ln; b_lambda[1] = l1; b_lambda[2] = l2;
  }
  b_delta(rows);
  return true;
}
// solveBlock: projected Gauss–Seidel on K λ = b to convergence (≤ BLOCK_SWEEPS sweeps): normal rows λ ≥ 0 when
// one_sided (else free), each tangent pair held in its disc |λ_t| ≤ μ λ_n (b_mu) or ≤ b_bound
fn b_solve(rows: u32, one_sided: bool, stick_test: bool) -> bool {
  if (rows == 1u || (rows == 3u && b_kind[1] == 1u && b_kind[2] == 2u)) { return b_solve_point(rows, one_sided); }
  for (var i = 0u; i < rows; i++) {
    b_K[13u * i] = b_diag[i];
    for (var j = i + 1u; j < rows; j++) { let v = b_k(i, j); b_K[12u * i + j] = v; b_K[12u * j + i] = v; }
  }
  for (var sweep = 0u; sweep < u32(BLOCK_SWEEPS); sweep++) {
    var change = 0.0; var size = 0.0;
    for (var i = 0u; i < rows; i++) {
      let kii = b_diag[i];
      if (!(kii > 0.0)) { continue; }
      var jd = 0.0;
      for (var j = 0u; j < rows; j++) { jd += b_K[12u * i + j] * b_lambda[j]; }
      let old = b_lambda[i];
      var next = old + (b_target[i] - jd) / kii;
      if (b_kind[i] == 0u) {
        if (one_sided && next < 0.0) { next = 0.0; }
      } else if (b_kind[i] == 2u) {
        // the pair (i − 1, i) in the disc of radius r
        let r = select(b_bound[i], b_mu[i] * b_lambda[b_point[i]], b_mu[i] > 0.0);
        if (r >= 0.0) {
          let t1 = b_lambda[i - 1u];
          let l = sqrt(t1 * t1 + next * next);
          if (l > r) {
            let f = select(0.0, r / l, l > 0.0);
            b_lambda[i - 1u] = t1 * f;
            next *= f;
          }
        }
      }
      let dl = next - old;
      size = max(size, abs(next));
      if (dl == 0.0) { continue; }
      change = max(change, abs(dl));
      b_lambda[i] = next;
    }
    if (change <= BLOCK_CONVERGED * size) { break; }
    // (its Δ kept all the same: restickBlock's caller reads how far it missed, b_unmet)
    if (stick_test && sweep == GIVE_UP_SWEEPS - 1u && change > GIVE_UP_CHANGE * size) { b_delta(rows); return false; }
  }
  b_delta(rows);
  return true;
}
// shareStart and restickBlock's spread (xpbd/contacts.ts, derivation there): the tangent rows [np, rows) of a
// stick block set to the cones' uniform share, λ_t,i = T λ_n,i / Σλ_n with the same sums Σλ_n and T = Σλ_t (one
// manifold basis): only the null-space pattern (Jᵀλ₀ = 0, no body moved) and the moment about n change.
// Returns |T| / Σλ_n, the share of its cone every point then uses (< 0: Σλ_n = 0, nothing spread); spread only when asked.
fn b_share(rows: u32, np: u32, spread: bool) -> f32 {
  var sum_n = 0.0; var t1 = 0.0; var t2 = 0.0;
  for (var i = np; i < rows; i++) {
    if (b_kind[i] == 1u) { sum_n += b_lambda[b_point[i]]; t1 += b_lambda[i]; } else { t2 += b_lambda[i]; }
  }
  if (!(sum_n > 0.0)) { return -1.0; }
  if (spread) {
    for (var i = np; i < rows; i++) { b_lambda[i] = select(t2, t1, b_kind[i] == 1u) * b_lambda[b_point[i]] / sum_n; }
  }
  return sqrt(t1 * t1 + t2 * t2) / sum_n;
}
// normalShare (xpbd/contacts.ts, derivation there): four points' normal rows started without their
// self-equilibrated pattern v (Σ v_i = 0, Σ v_i ρ_i = 0 over the in-plane arms: J_nᵀ v = 0), λ_n − (λ_n · v / v · v) v,
// where that stays ≥ 0; v_i the signed 3×3 minors of the rows (1, (r_i × n) · t₁, (r_i × n) · t₂)
fn b_normal_share(t1: vec3f, t2: vec3f) {
  var A: array<f32, 4>; var B: array<f32, 4>;
  for (var i = 0u; i < 4u; i++) {
    let c = select(b_ca[i], b_cb[i], b_mb > 0.0);
    A[i] = dot(c, t1); B[i] = dot(c, t2);
  }
  var v: array<f32, 4>;
  for (var i = 0u; i < 4u; i++) {
    var idx: array<u32, 3>; var m = 0u;
    for (var j = 0u; j < 4u; j++) { if (j != i) { idx[m] = j; m++; } }
    let x = idx[0]; let y = idx[1]; let z = idx[2];
    let det = (A[y] * B[z] - A[z] * B[y]) - (A[x] * B[z] - A[z] * B[x]) + (A[x] * B[y] - A[y] * B[x]);
    v[i] = select(det, -det, (i & 1u) == 1u);
  }
  let vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
  if (!(vv > 0.0)) { return; }
  let f = (b_lambda[0] * v[0] + b_lambda[1] * v[1] + b_lambda[2] * v[2] + b_lambda[3] * v[3]) / vv;
  for (var i = 0u; i < 4u; i++) { if (b_lambda[i] - f * v[i] < 0.0) { return; } }
  for (var i = 0u; i < 4u; i++) { b_lambda[i] -= f * v[i]; }
}
// restickBlock: the stick block once more from the cones' uniform share (points of unequal μ_s: not inside
// every disc, no second test)
fn b_restick(rows: u32, np: u32) -> bool {
  let share = b_share(rows, np, false);
  if (share < 0.0) { return false; }
  for (var i = np; i < rows; i++) { if (share > b_mu[i]) { return false; } }
  _ = b_share(rows, np, true);
  return b_solve(rows, true, true);
}
`;

/** The arms of a manifold's point (xpbd/contacts.ts arms): a sphere's point is ±r n (rolling), else R a. */
const armsWgsl = /* wgsl */ `
fn arm_a(radius: f32, q: vec4f, anchor: vec3f, n: vec3f) -> vec3f { return select(quat_rotate(q, anchor), radius * n, radius >= 0.0); }
fn arm_b(radius: f32, q: vec4f, anchor: vec3f, n: vec3f) -> vec3f { return select(quat_rotate(q, anchor), -radius * n, radius >= 0.0); }
`;

/**
 * xpbd/contacts.ts project for manifold k (header there: departures 1–3 and the bounded push-out):
 *   d = −(p_B − p_A) · n at the pose now; the normal row's target d − max(0, d̄ − v_push h), d̄ at the
 *   substep's start pose; Δp_t from static friction's reference (two non-spheres) or since the substep's start
 *   (a sphere); the block of normal rows (λ_n ≥ 0) and the tangent pairs of the points allowed to stick
 *   (|λ_t| ≤ μ_s λ_n) to convergence; static friction holds if the block meets its tangential targets, else the
 *   normal rows alone; x += Δx, q += ½ (0, Δθ) ⊗ q. `first`: the substep's first iteration (λ reset; the block
 *   starts from warm and keeps its result as the next substep's warm).
 */
const projectWgsl = /* wgsl */ `
fn project_manifold(k: u32, first: bool) {
  let m = manifolds[k];
  if (m.count == 0u) { return; }
  let np = min(m.count, 4u);
  if (first) {
    // beginSubstep: λ = 0, no point active
    for (var j = 0u; j < np; j++) { xpbd_points[4u * k + j].lambda = vec3f(0.0); xpbd_points[4u * k + j].is_active = 0u; }
  }
  let a = m.body_a; let b = m.body_b; let n = m.normal;
  let xa = pose[2u * a].xyz; let qa = pose[2u * a + 1u];
  let xb = pose[2u * b].xyz; let qb = pose[2u * b + 1u];
  // the substep's start pose: x̄ = x − Δx (the displacement kept beside it: xpbd/kernels.wgsl.ts pose_prev)
  let dxa = pose_prev[2u * a].xyz; let pqa = pose_prev[2u * a + 1u];
  let dxb = pose_prev[2u * b].xyz; let pqb = pose_prev[2u * b + 1u];
  let pa = xa - dxa; let pb = xb - dxb;
  let Ma = body_mass[a]; let Mb = body_mass[b];
  b_ma = Ma.mass; b_mb = Mb.mass;
  b_Wa = mat3x3f(); b_Wb = mat3x3f(); // a fixed body's I⁻¹ = 0: its columns add exact zeros
  if (Ma.mass > 0.0) { b_Wa = world_inverse_inertia(qa, Ma.inertia); }
  if (Mb.mass > 0.0) { b_Wb = world_inverse_inertia(qb, Mb.inertia); }
  let rad_a = sphere_radius[a]; let rad_b = sphere_radius[b];
  var ra: array<vec3f, 4>; var rb: array<vec3f, 4>; var dp: array<vec4f, 4>; var stick: array<bool, 4>;
  var deepest = 0.0;
  for (var j = 0u; j < np; j++) {
    let P = xpbd_points[4u * k + j];
    // measure: the arms, d, the normal row's target and the tangential motion Δp
    ra[j] = arm_a(rad_a, qa, P.anchor_a, n);
    rb[j] = arm_b(rad_b, qb, P.anchor_b, n);
    let d = depth(rad_a, rad_b, xa, qa, xb, qb, P.anchor_a, P.anchor_b, n);
    // overlapLeft: d̄ at the substep's start pose (x̄, q̄), max(0, d̄ − v_push h)
    let start = depth(rad_a, rad_b, pa, pqa, pb, pqb, P.anchor_a, P.anchor_b, n);
    let left = select(0.0, start - params.push, start > params.push);
    var motion: vec3f;
    if (rad_a < 0.0 && rad_b < 0.0) {
      // (p_B − p_A) − (p_B − p_A)_ref of the reference anchor pair (departure 3)
      motion = P.slip + slip_since_start(Ma.mass, dxa, qa, pqa, Mb.mass, dxb, qb, pqb, P.ref_a, P.ref_b);
    } else {
      // a sphere's point is no material point: the body points now at the arms, since the substep's start
      let ua = quat_rotate(pqa, rotate_back(qa, ra[j]));
      let ub = quat_rotate(pqb, rotate_back(qb, rb[j]));
      motion = (dxb + rb[j] - ub) - (dxa + ra[j] - ua);
    }
    dp[j] = vec4f(motion, select(d, d - left, d > 0.0));
    deepest = max(deepest, d);
    stick[j] = d > 0.0 && m.mu_static > 0.0;
  }
  if (!(deepest > 0.0)) { return; }
  var rows = 0u;
  var block_rows = np;
  var slid = false;
  for (var attempt = 0u; attempt < 2u; attempt++) {
    // normals first, then the tangent pairs of the points allowed to stick (attempt 1: the normals, λ from 0)
    if (attempt == 0u) {
      for (var j = 0u; j < np; j++) { b_row(j, j, 0u, n, ra[j], rb[j], dp[j].w); }
    } else {
      for (var j = 0u; j < np; j++) { b_lambda[j] = 0.0; }
    }
    rows = np;
    for (var j = 0u; j < np; j++) {
      if (!stick[j]) { continue; }
      b_row(rows, j, 1u, m.tangent1, ra[j], rb[j], -dot(dp[j].xyz, m.tangent1));
      b_mu[rows] = m.mu_static;
      rows++;
      b_row(rows, j, 2u, m.tangent2, ra[j], rb[j], -dot(dp[j].xyz, m.tangent2));
      b_mu[rows] = m.mu_static;
      rows++;
    }
    block_rows = rows;
    if (first) {
      // the first iterate: this block's rows' λ of the substep before (header "Speed")
      for (var i = 0u; i < rows; i++) {
        let w = xpbd_points[4u * k + b_point[i]].warm;
        b_lambda[i] = select(select(w.z, w.y, b_kind[i] == 1u), w.x, b_kind[i] == 0u);
      }
      // the tangent rows' start spread to the cones' uniform share (shareStart: no null-space pattern carried)
      if (rows > np + 2u) { _ = b_share(rows, np, true); }
      // the normal rows' start without their self-equilibrated pattern (normalShare)
      if (np == 4u) { b_normal_share(m.tangent1, m.tangent2); }
    }
    var solved = b_solve(rows, true, rows > np);
    // several points that missed the stick test by a little: once more from the cones' uniform share
    // (restickBlock; RESTICK_UNMET)
    if (rows > np + 2u) {
      let left = b_unmet(np, rows);
      if ((!solved || left > 0.0) && left <= RESTICK_UNMET) { solved = b_restick(rows, np); }
    }
    if (rows == np || (solved && b_targets_met(np, rows))) { break; }
    for (var j = 0u; j < np; j++) { stick[j] = false; }
    slid = true;
  }
  for (var j = 0u; j < np; j++) {
    var P = xpbd_points[4u * k + j];
    P.stuck = select(0u, 1u, stick[j]);
    P.lambda.x += b_lambda[j];
    if (P.lambda.x > 0.0) { P.is_active = 1u; }
    if (first) { P.warm = vec3f(b_lambda[j], 0.0, 0.0); }
    xpbd_points[4u * k + j] = P;
  }
  // static friction's λ_t of the points held (storeImpulses), and their next warm start
  for (var i = np; i < block_rows; i++) {
    let j = b_point[i];
    if (!stick[j]) { continue; }
    if (b_kind[i] == 1u) {
      xpbd_points[4u * k + j].lambda.y += b_lambda[i];
      if (first) { xpbd_points[4u * k + j].warm.y = b_lambda[i]; }
    } else {
      xpbd_points[4u * k + j].lambda.z += b_lambda[i];
      if (first) { xpbd_points[4u * k + j].warm.z = b_lambda[i]; }
    }
  }
  // applyDelta (positions); no other manifold of this colour shares a moving body with this one
  if (b_ma > 0.0) { pose[2u * a] = vec4f(xa + d_xa, 0.0); pose_prev[2u * a] = vec4f(dxa + d_xa, 0.0); pose[2u * a + 1u] = quat_add_rotation(qa, d_ta); }
  if (b_mb > 0.0) { pose[2u * b] = vec4f(xb + d_xb, 0.0); pose_prev[2u * b] = vec4f(dxb + d_xb, 0.0); pose[2u * b + 1u] = quat_add_rotation(qb, d_tb); }
  // retakeReference: a manifold that slid takes static friction's references where it is now (two non-spheres)
  if (slid && rad_a < 0.0 && rad_b < 0.0) {
    let nqa = pose[2u * a + 1u]; let nqb = pose[2u * b + 1u];
    let ndxa = pose_prev[2u * a].xyz; let ndxb = pose_prev[2u * b].xyz;
    for (var j = 0u; j < np; j++) {
      var P = xpbd_points[4u * k + j];
      P.ref_a = P.anchor_a;
      P.ref_b = P.anchor_b;
      // Δp = 0 now: at the substep's start it was minus the motion since
      P.slip = -slip_since_start(b_ma, ndxa, nqa, pqa, b_mb, ndxb, nqb, pqb, P.anchor_a, P.anchor_b);
      xpbd_points[4u * k + j] = P;
    }
  }
}
`;

/**
 * xpbd/contacts.ts velocityPass for manifold k, after its collisions (xc_collide, xc_apply_*): the active points'
 * normal rows (a point that collided aside) (free sign; target Δv_n = −v_n + max(−e ṽ_n, 0), Müller et al. 2020 §3.6 with e = 0 when
 * |ṽ_n| ≤ the restitution threshold) and tangent pairs in their discs |P_t| ≤ μ_d λ_n / h as
 * one block; kept when it stops the manifold's tangential motion (departure 4), else the normal rows alone and
 * then Müller's dynamic friction per point from the same velocities, P_t = min(μ_d λ_n / h, |v_t| / w_t)
 * along −v̂_t, summed and applied once.
 */
const velocityWgsl = /* wgsl */ `
fn relative_velocity(va: vec3f, wa: vec3f, vb: vec3f, wb: vec3f, ra: vec3f, rb: vec3f) -> vec3f {
  return (vb + cross(wb, rb)) - (va + cross(wa, ra));
}
// velocityNormalRows: the normal rows of manifold k's active points that did not collide (xc_collide gave them
// their normal velocity), from the relative velocities rv; restitution (Müller §3.6): −v_n + max(−e ṽ_n, 0), a
// pair with e = 0 keeping −v_n exactly, unread ṽ_n and all (a scene with no e > 0 never writes ṽ_n)
fn velocity_normal_rows(k: u32, np: u32, act: array<bool, 4>, ra: array<vec3f, 4>, rb: array<vec3f, 4>, rv: array<vec3f, 4>) -> u32 {
  let m = manifolds[k]; let n = m.normal;
  var rows = 0u;
  for (var j = 0u; j < np; j++) {
    if (!act[j] || xpbd_points[4u * k + j].collided == 1u) { continue; }
    let vn = dot(rv[j], n);
    let before = xpbd_points[4u * k + j].vn_before;
    let e = select(0.0, m.restitution, m.restitution > 0.0 && abs(before) > params.restitution_threshold);
    b_row(rows, j, 0u, n, ra[j], rb[j], select(-vn, -vn + max(-e * before, 0.0), e > 0.0));
    rows++;
  }
  return rows;
}
fn velocity_manifold(k: u32) {
  let m = manifolds[k];
  if (m.count == 0u) { return; }
  let np = min(m.count, 4u);
  var any_active = false;
  for (var j = 0u; j < np; j++) { any_active = any_active || xpbd_points[4u * k + j].is_active == 1u; }
  if (!any_active) { return; }
  let a = m.body_a; let b = m.body_b; let n = m.normal;
  let qa = pose[2u * a + 1u]; let qb = pose[2u * b + 1u];
  var va = velocity[2u * a].xyz; var wa = velocity[2u * a + 1u].xyz;
  var vb = velocity[2u * b].xyz; var wb = velocity[2u * b + 1u].xyz;
  let Ma = body_mass[a]; let Mb = body_mass[b];
  b_ma = Ma.mass; b_mb = Mb.mass;
  b_Wa = mat3x3f(); b_Wb = mat3x3f(); // a fixed body's I⁻¹ = 0: its columns add exact zeros
  if (Ma.mass > 0.0) { b_Wa = world_inverse_inertia(qa, Ma.inertia); }
  if (Mb.mass > 0.0) { b_Wb = world_inverse_inertia(qb, Mb.inertia); }
  let rad_a = sphere_radius[a]; let rad_b = sphere_radius[b];
  var ra: array<vec3f, 4>; var rb: array<vec3f, 4>; var rv: array<vec3f, 4>; var act: array<bool, 4>;
  for (var j = 0u; j < np; j++) {
    let P = xpbd_points[4u * k + j];
    act[j] = P.is_active == 1u;
    ra[j] = arm_a(rad_a, qa, P.anchor_a, n);
    rb[j] = arm_b(rad_b, qb, P.anchor_b, n);
    rv[j] = relative_velocity(va, wa, vb, wb, ra[j], rb[j]);
  }
  // attempt 0: the normal rows and the tangent pairs in their discs, kept when the tangential targets are met
  let normals = velocity_normal_rows(k, np, act, ra, rb, rv);
  var rows = normals;
  for (var j = 0u; j < np; j++) {
    let P = xpbd_points[4u * k + j];
    if (!act[j] || !(P.mu > 0.0)) { continue; }
    let bound = P.mu * P.lambda.x * params.inv_h;
    b_row(rows, j, 1u, m.tangent1, ra[j], rb[j], -dot(rv[j], m.tangent1));
    b_bound[rows] = bound;
    rows++;
    b_row(rows, j, 2u, m.tangent2, ra[j], rb[j], -dot(rv[j], m.tangent2));
    b_bound[rows] = bound;
    rows++;
  }
  if (rows > normals && b_solve(rows, false, true) && b_targets_met(normals, rows)) {
    // stopped within its cones: the tangent rows' impulses P as position-level λ = h P (storeImpulses)
    for (var i = normals; i < rows; i++) {
      let j = b_point[i];
      if (b_kind[i] == 1u) { xpbd_points[4u * k + j].lambda.y += params.h * b_lambda[i]; }
      else { xpbd_points[4u * k + j].lambda.z += params.h * b_lambda[i]; }
    }
    va += d_xa; wa += d_ta; vb += d_xb; wb += d_tb;
  } else {
    // attempt 1: the normal rows alone (λ from 0), applied
    for (var i = 0u; i < normals; i++) { b_lambda[i] = 0.0; }
    if (normals > 0u && b_solve(normals, false, false)) { va += d_xa; wa += d_ta; vb += d_xb; wb += d_tb; }
    // then dynamic friction per point from the velocities that leaves (all points from the same ones)
    var sva = vec3f(0.0); var swa = vec3f(0.0); var svb = vec3f(0.0); var swb = vec3f(0.0);
    var applied = false;
    for (var j = 0u; j < np; j++) {
      let P = xpbd_points[4u * k + j];
      if (!act[j]) { continue; }
      let v = relative_velocity(va, wa, vb, wb, ra[j], rb[j]);
      let t = v - dot(v, n) * n;
      let vt = length(t);
      if (!(vt > 0.0) || !(P.mu > 0.0)) { continue; }
      let u = t / vt;
      let ca = cross(ra[j], u); let cb = cross(rb[j], u);
      let wt = b_ma + b_mb + dot(ca, b_Wa * ca) + dot(cb, b_Wb * cb);
      if (!(wt > 0.0)) { continue; }
      let cap = P.mu * P.lambda.x * params.inv_h;
      let pt = min(cap, vt / wt);
      // accumulate: B takes −pt u, A +pt u
      sva += b_ma * pt * u; swa += b_Wa * (pt * ca);
      svb -= b_mb * pt * u; swb -= b_Wb * (pt * cb);
      xpbd_points[4u * k + j].lambda.y -= params.h * pt * dot(u, m.tangent1);
      xpbd_points[4u * k + j].lambda.z -= params.h * pt * dot(u, m.tangent2);
      if (cap <= vt / wt) { applied = true; } // at its cap: the point slides
    }
    va += sva; wa += swa; vb += svb; wb += swb;
    // the normal rows once more where a point slid (friction at its cap; two rows or more), at the velocities it left: its
    // impulses at the contact points turned the bodies (xpbd/contacts.ts velocityNormalRows: a sliding box
    // kept that spin and went on sliding; velocityPassPoints: the tip skewed the slip)
    if (applied && normals >= 2u) {
      for (var j = 0u; j < np; j++) { rv[j] = relative_velocity(va, wa, vb, wb, ra[j], rb[j]); }
      if (velocity_normal_rows(k, np, act, ra, rb, rv) == normals && b_solve(normals, false, false)) { va += d_xa; wa += d_ta; vb += d_xb; wb += d_tb; }
    }
  }
  if (b_ma > 0.0) { velocity[2u * a] = vec4f(va, 0.0); velocity[2u * a + 1u] = vec4f(wa, 0.0); }
  if (b_mb > 0.0) { velocity[2u * b] = vec4f(vb, 0.0); velocity[2u * b + 1u] = vec4f(wb, 0.0); }
}
`;

/**
 * xpbd/contacts.ts collide for manifold k (restitution as collision propagation, Guendelman, Bridson & Fedkiw
 * 2003; rows/block-solver.ts applyRestitution derives it), in xc_collide's one workgroup: the sweep over the
 * colours and the manifold's projected Gauss-Seidel are cs_restitution's (contacts/gpu-contacts.wgsl.ts
 * restitutionSweepWgsl, collisionBlockWgsl); what is XPBD's is the velocities and the test. On Ṽ (pre_velocity:
 * the substep's predicted v, ω, saved by xc_save_velocity), per point with e > 0, the arms and I⁻¹ at the pose
 * now (after the projection), v_n = J_n Ṽ now and g_n = h n · (g_B − g_A) over the moving bodies:
 *   collides  iff v_n − g_n < −threshold and s̃ + h (v_n − ṽ_n) < 0 (the gap closes within the substep);
 *   target    v_n → −e (v_n − g_n) + g_n, by P ≥ 0 along n with w_A(n) + w_B(n) (generalizedInverseMass)
 * (the block at most BLOCK_SWEEPS sweeps); P is summed on the point over the sweeps and the point marked.
 */
const collideWgsl = /* wgsl */ `
${restitutionSweepVarsWgsl}${collisionBlockWgsl}
var<private> cb_Wa: mat3x3f;
var<private> cb_Wb: mat3x3f;
fn turn_a(c: vec3f) -> vec3f { return cb_Wa * c; }
fn turn_b(c: vec3f) -> vec3f { return cb_Wb * c; }
fn collide_manifold(k: u32) -> bool {
  let m = manifolds[k];
  if (m.count == 0u || !(m.restitution > 0.0)) { return false; }
  let a = m.body_a; let b = m.body_b; let n = m.normal;
  let qa = pose[2u * a + 1u]; let qb = pose[2u * b + 1u];
  let Ma = body_mass[a]; let Mb = body_mass[b];
  cb_Wa = mat3x3f(); cb_Wb = mat3x3f();
  if (Ma.mass > 0.0) { cb_Wa = world_inverse_inertia(qa, Ma.inertia); }
  if (Mb.mass > 0.0) { cb_Wb = world_inverse_inertia(qb, Mb.inertia); }
  cb_va = pre_velocity[2u * a].xyz; cb_wa = pre_velocity[2u * a + 1u].xyz;
  cb_vb = pre_velocity[2u * b].xyz; cb_wb = pre_velocity[2u * b + 1u].xyz;
  // g_n = h n · g on each moving body, B's minus A's
  let ng = dot(n, slot.gravity_step);
  let gn = select(0.0, ng, Mb.mass > 0.0) - select(0.0, ng, Ma.mass > 0.0);
  let rad_a = sphere_radius[a]; let rad_b = sphere_radius[b];
  var which: array<u32, 4>;
  var count = 0u;
  for (var j = 0u; j < min(m.count, 4u); j++) {
    let P = xpbd_points[4u * k + j];
    let ra = arm_a(rad_a, qa, P.anchor_a, n);
    let rb = arm_b(rad_b, qb, P.anchor_b, n);
    let vn = dot(n, cb_vb + cross(cb_wb, rb) - cb_va - cross(cb_wa, ra));
    if (!(vn - gn < -params.restitution_threshold) || !(P.predicted_separation + params.h * (vn - P.vn_before) < 0.0)) { continue; }
    cb_ra[count] = ra; cb_rb[count] = rb;
    cb_goal[count] = -m.restitution * (vn - gn) + gn;
    cb_impulse[count] = 0.0;
    // w_A(n) + w_B(n) = Σ mᵢ⁻¹ + (rᵢ × n)ᵀ Iᵢ⁻¹ (rᵢ × n) over the moving bodies
    var K = 0.0;
    if (Ma.mass > 0.0) { let c = cross(ra, n); K += Ma.mass + dot(c, cb_Wa * c); }
    if (Mb.mass > 0.0) { let c = cross(rb, n); K += Mb.mass + dot(c, cb_Wb * c); }
    cb_k[count] = K;
    which[count] = j;
    count++;
  }
  if (count == 0u) { return false; }
  collision_block(n, count, Ma.mass, Mb.mass, u32(${BLOCK_SWEEPS}));
  for (var i = 0u; i < count; i++) {
    let c = 4u * k + which[i];
    xpbd_points[c].collision += cb_impulse[i];
    xpbd_points[c].collided = 1u;
  }
  if (Ma.mass > 0.0) { pre_velocity[2u * a] = vec4f(cb_va, 0.0); pre_velocity[2u * a + 1u] = vec4f(cb_wa, 0.0); }
  if (Mb.mass > 0.0) { pre_velocity[2u * b] = vec4f(cb_vb, 0.0); pre_velocity[2u * b + 1u] = vec4f(cb_wb, 0.0); }
  return true;
}
`;

/**
 * The end of xpbd/contacts.ts collide for manifold k (colour by colour, after xc_collide): at each point that
 * collided the projection's λ_n / h is replaced by the collision's P, the bodies taking Q = P − λ_n / h along n
 * in velocity (Δv = ±m⁻¹ Q n, Δω = ±I⁻¹ (r × Q n), arms and I⁻¹ at the pose now) and, as XPBD's v = Δx / h
 * asks, in position (x += h Δv, q += ½ h (0, Δω) ⊗ q); λ_n ← h P, the point active.
 */
const applyWgsl = /* wgsl */ `
fn apply_manifold(k: u32) {
  let m = manifolds[k];
  if (m.count == 0u) { return; }
  let np = min(m.count, 4u);
  var touched = false;
  for (var j = 0u; j < np; j++) { touched = touched || xpbd_points[4u * k + j].collided == 1u; }
  if (!touched) { return; }
  let a = m.body_a; let b = m.body_b; let n = m.normal;
  let qa = pose[2u * a + 1u]; let qb = pose[2u * b + 1u];
  let Ma = body_mass[a]; let Mb = body_mass[b];
  var Wa = mat3x3f(); var Wb = mat3x3f();
  if (Ma.mass > 0.0) { Wa = world_inverse_inertia(qa, Ma.inertia); }
  if (Mb.mass > 0.0) { Wb = world_inverse_inertia(qb, Mb.inertia); }
  let rad_a = sphere_radius[a]; let rad_b = sphere_radius[b];
  var dva = vec3f(0.0); var dwa = vec3f(0.0); var dvb = vec3f(0.0); var dwb = vec3f(0.0);
  for (var j = 0u; j < np; j++) {
    var P = xpbd_points[4u * k + j];
    if (P.collided == 0u) { continue; }
    let q = (P.collision - P.lambda.x * params.inv_h) * n;
    dva -= Ma.mass * q; dwa -= Wa * cross(arm_a(rad_a, qa, P.anchor_a, n), q);
    dvb += Mb.mass * q; dwb += Wb * cross(arm_b(rad_b, qb, P.anchor_b, n), q);
    P.lambda.x = params.h * P.collision;
    P.is_active = 1u;
    xpbd_points[4u * k + j] = P;
  }
  if (Ma.mass > 0.0) {
    velocity[2u * a] = vec4f(velocity[2u * a].xyz + dva, 0.0); velocity[2u * a + 1u] = vec4f(velocity[2u * a + 1u].xyz + dwa, 0.0);
    pose[2u * a] = vec4f(pose[2u * a].xyz + params.h * dva, 0.0); pose[2u * a + 1u] = quat_add_rotation(qa, params.h * dwa);
  }
  if (Mb.mass > 0.0) {
    velocity[2u * b] = vec4f(velocity[2u * b].xyz + dvb, 0.0); velocity[2u * b + 1u] = vec4f(velocity[2u * b + 1u].xyz + dwb, 0.0);
    pose[2u * b] = vec4f(pose[2u * b].xyz + params.h * dvb, 0.0); pose[2u * b + 1u] = quat_add_rotation(qb, params.h * dwb);
  }
}
`;

const T = { u32s: 'array<u32>', f32s: 'array<f32>', vec4s: 'array<vec4f>', manifolds: 'array<SolverManifold>', points: 'array<SolverPoint>', xpoints: 'array<XpbdPoint>' };
const colourBindings = (v: 'pose' | 'velocity' | 'apply'): [XpbdContactBufferName, string, Access][] => [
  ['offsets', T.u32s, 'read'], ['order', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'],
  ['pose', T.vec4s, v === 'velocity' ? 'read' : 'read_write'],
  v === 'pose' ? ['pose_prev', T.vec4s, 'read_write'] : ['velocity', T.vec4s, 'read_write'],
  ['body_mass', 'array<BodyMass>', 'read'], ['xpbd_points', T.xpoints, 'read_write'], ['sphere_radius', T.f32s, 'read'],
];

export const XPBD_CONTACT_KERNELS: KernelDecl[] = [
  {
    // frame start: I⁻¹ in the world frame at the pose now, for the contact pipeline's records (cj_frame_bodies)
    name: 'xc_inertia',
    over: 'body',
    bindings: [['pose', T.vec4s, 'read'], ['body_mass', 'array<BodyMass>', 'read'], ['world_inertia', 'array<BodyMass>', 'read_write']],
    body: /* wgsl */ `
  let i = thread_index(gid, nwg);
  if (i >= params.body_count) { return; }
  let M = body_mass[i];
  var W: BodyMass;
  W.inertia = world_inverse_inertia(pose[2u * i + 1u], M.inertia);
  W.mass = M.mass;
  world_inertia[i] = W;`,
  },
  {
    // begin, its first half (xpbd/contacts.ts begin): a point that follows an old one (the pair table's pair,
    // then cj_match's rule: same feature id, else the nearest unused anchor within reach when n turned less
    // than acos 0.99; the store's ManifoldStore.origin on the CPU) that was stuck at the end of the last frame
    // keeps that point's reference; stuck = 1 marks it for xc_prepare
    name: 'xc_match',
    over: 'pair',
    bindings: [
      ['counters', T.u32s, 'read'], ['found', T.u32s, 'read'], ['prev_manifolds', T.manifolds, 'read'], ['prev_points', T.points, 'read'],
      ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read'], ['prev_xpbd_points', T.xpoints, 'read'], ['xpbd_points', T.xpoints, 'read_write'],
    ],
    helpers: matchPointWgsl,
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  for (var j = 0u; j < m.count; j++) { xpbd_points[4u * k + j].stuck = 0u; }
  let t = found[k];
  if (m.count == 0u || t == ${NOT_FOUND}u) { return; }
  let old = prev_manifolds[t];
  let turned = dot(old.normal, m.normal) < 0.99;
  let reach = min(${MATCH_DISTANCE}, 4.0 * m.slop);
  var used = 0u;
  for (var j = 0u; j < m.count; j++) {
    let p = points[4u * k + j];
    let hit = match_point(t, old.count, p.id, p.anchor_a, reach, turned, &used);
    if (hit < 0) { continue; }
    let o = prev_xpbd_points[4u * t + u32(hit)];
    if (o.stuck == 0u) { continue; }
    var P = xpbd_points[4u * k + j];
    P.ref_a = o.ref_a; P.ref_b = o.ref_b; P.slip = o.slip;
    P.stuck = 1u;
    xpbd_points[4u * k + j] = P;
  }`,
  },
  {
    // begin, its second half: the record's anchors (a_B = R_Bᵀ r_B at detection), the block's first iterate
    // h² f of the matched old point's force (cj_match's λ, N), μ_d of the pair (√(μ_A μ_B), pipeline.ts), and
    // a fresh reference where none was carried: the anchors and their offset p_B − p_A at the pose now
    name: 'xc_prepare',
    over: 'pair',
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read'], ['pose', T.vec4s, 'read'],
      ['materials', 'array<Material>', 'read'], ['xpbd_points', T.xpoints, 'read_write'],
    ],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  if (m.count == 0u) { return; }
  let a = m.body_a; let b = m.body_b;
  let xa = pose[2u * a].xyz; let qa = pose[2u * a + 1u];
  let xb = pose[2u * b].xyz; let qb = pose[2u * b + 1u];
  let mu = sqrt(materials[a].friction * materials[b].friction);
  for (var j = 0u; j < m.count; j++) {
    let p = points[4u * k + j];
    var P = xpbd_points[4u * k + j];
    P.anchor_a = p.anchor_a;
    P.anchor_b = rotate_back(qb, p.arm_b);
    P.mu = mu;
    P.warm = params.h * params.h * p.lambda;
    if (P.stuck == 0u) {
      P.ref_a = P.anchor_a;
      P.ref_b = P.anchor_b;
      P.slip = vec3f(0.0); // taken at the pose now, the first substep's start
    }
    P.stuck = 0u;
    P.lambda = vec3f(0.0);
    P.is_active = 0u;
    xpbd_points[4u * k + j] = P;
  }`,
  },
  {
    // beginSubstep's ṽ_n and recordCollisionInput's s̃ (xpbd/contacts.ts): after the prediction, before the
    // substep's projection, each point's n · ((v_B + ω_B × r_B) − (v_A + ω_A × r_A)) and (p_B − p_A) · n at the
    // predicted pose; collide's P and mark cleared. Dispatched only where a body has e > 0
    name: 'xc_begin_substep',
    over: 'pair',
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['pose', T.vec4s, 'read'], ['velocity', T.vec4s, 'read'],
      ['xpbd_points', T.xpoints, 'read_write'], ['sphere_radius', T.f32s, 'read'],
    ],
    helpers: armsWgsl,
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  let a = m.body_a; let b = m.body_b; let n = m.normal;
  let qa = pose[2u * a + 1u]; let qb = pose[2u * b + 1u];
  let va = velocity[2u * a].xyz; let wa = velocity[2u * a + 1u].xyz;
  let vb = velocity[2u * b].xyz; let wb = velocity[2u * b + 1u].xyz;
  let xa = pose[2u * a].xyz; let xb = pose[2u * b].xyz;
  let rad_a = sphere_radius[a]; let rad_b = sphere_radius[b];
  for (var j = 0u; j < min(m.count, 4u); j++) {
    var P = xpbd_points[4u * k + j];
    let ra = arm_a(rad_a, qa, P.anchor_a, n);
    let rb = arm_b(rad_b, qb, P.anchor_b, n);
    P.vn_before = dot((vb + cross(wb, rb)) - (va + cross(wa, ra)), n);
    // recordCollisionInput: s̃ = (p_B − p_A) · n at the predicted pose; collide's P = 0, none collided
    P.predicted_separation = dot(xb + rb - xa - ra, n);
    P.collision = 0.0;
    P.collided = 0u;
    xpbd_points[4u * k + j] = P;
  }`,
  },
  {
    // advanceSlip (xpbd/contacts.ts): at the substep's end, after update_velocities and before the velocity
    // pass, each reference pair's Δp carried to the pose now, the next substep's start: slip += its motion
    // since this substep's start (slip_since_start)
    name: 'xc_advance_slip',
    over: 'pair',
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['pose', T.vec4s, 'read'], ['pose_prev', T.vec4s, 'read'],
      ['body_mass', 'array<BodyMass>', 'read'], ['xpbd_points', T.xpoints, 'read_write'], ['sphere_radius', T.f32s, 'read'],
    ],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  let a = m.body_a; let b = m.body_b;
  if (m.count == 0u || sphere_radius[a] >= 0.0 || sphere_radius[b] >= 0.0) { return; }
  let ma = body_mass[a].mass; let mb = body_mass[b].mass;
  let qa = pose[2u * a + 1u]; let qb = pose[2u * b + 1u];
  let dxa = pose_prev[2u * a].xyz; let pqa = pose_prev[2u * a + 1u];
  let dxb = pose_prev[2u * b].xyz; let pqb = pose_prev[2u * b + 1u];
  for (var j = 0u; j < min(m.count, 4u); j++) {
    var P = xpbd_points[4u * k + j];
    P.slip += slip_since_start(ma, dxa, qa, pqa, mb, dxb, qb, pqb, P.ref_a, P.ref_b);
    xpbd_points[4u * k + j] = P;
  }`,
  },
  {
    // collide's input Ṽ (xpbd/contacts.ts recordCollisionInput's preV, preW): the predicted velocities at the
    // substep's start, kept for xc_collide (only where a body has e > 0)
    name: 'xc_save_velocity',
    over: 'body',
    bindings: [['velocity', T.vec4s, 'read'], ['pre_velocity', T.vec4s, 'read_write']],
    body: /* wgsl */ `
  let i = thread_index(gid, nwg);
  if (i >= params.body_count) { return; }
  pre_velocity[2u * i] = velocity[2u * i];
  pre_velocity[2u * i + 1u] = velocity[2u * i + 1u];`,
  },
  {
    // collide (xpbd/contacts.ts), the velocity pass's first part: the collisions on Ṽ, swept colour by colour
    // in one workgroup until none collides (collideWgsl; cs_restitution's sweep)
    name: 'xc_collide',
    over: 'restitution',
    bindings: [
      ['offsets', T.u32s, 'read'], ['order', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['pose', T.vec4s, 'read'],
      ['body_mass', 'array<BodyMass>', 'read'], ['xpbd_points', T.xpoints, 'read_write'], ['sphere_radius', T.f32s, 'read'],
      ['pre_velocity', T.vec4s, 'read_write'],
    ],
    helpers: `${armsWgsl}${collideWgsl}`,
    body: restitutionSweepWgsl,
  },
  // collide's end (applyWgsl), colour by colour: the collisions' impulses replace the projection's
  { name: 'xc_apply_colour', over: 'colour', bindings: colourBindings('apply'), body: /* wgsl */ `  solve_one(offsets[slot.colour] + thread_index(gid, nwg));` },
  { name: 'xc_apply_tail', over: 'tail', bindings: colourBindings('apply'), body: '' },
  { name: 'xc_project_colour', over: 'colour', bindings: colourBindings('pose'), body: /* wgsl */ `  solve_one(offsets[slot.colour] + thread_index(gid, nwg));` },
  { name: 'xc_project_tail', over: 'tail', bindings: colourBindings('pose'), body: '' },
  { name: 'xc_velocity_colour', over: 'colour', bindings: colourBindings('velocity'), body: /* wgsl */ `  solve_one(offsets[slot.colour] + thread_index(gid, nwg));` },
  { name: 'xc_velocity_tail', over: 'tail', bindings: colourBindings('velocity'), body: '' },
  {
    // store impulses (xpbd/contacts.ts storeImpulses): the last substep's forces λ / h² onto the records (the
    // next frame's matching carries them: its first iterate), and this frame's references kept as last frame's
    name: 'xc_store',
    over: 'pair',
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read_write'], ['xpbd_points', T.xpoints, 'read'],
      ['prev_xpbd_points', T.xpoints, 'read_write'],
    ],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  for (var j = 0u; j < m.count; j++) {
    let P = xpbd_points[4u * k + j];
    points[4u * k + j].lambda = P.lambda * params.inv_h2;
    prev_xpbd_points[4u * k + j] = P;
  }`,
  },
];

/**
 * xpbd/contacts.ts residual for manifold k (diagnostics; the residual kernels are built only for a frame that
 * records residuals: XPBD_RESIDUAL_KERNELS), the joints' r = (C + α̃ λ)/h² with α = 0 per contact row at the pose
 * now, projected (a row at its bound whose residual points outward counts 0), as squares into residual[k]:
 *   .x  normal rows: C = −(the row's target) = max(0, d̄ − v_push h) − d for d > 0, −d else (project's measure);
 *       0 where λ_n = 0 (its bound) and C > 0 (apart: the residual points out of λ_n ≥ 0)
 *   .y  static friction's tangent rows of a point held in this substep (stuck, λ_n > 0): C_i = Δp · t_i, the
 *       tangential motion still to undo; 0 where the manifold slid or λ_n = 0 (a disc of radius 0)
 * slot.first = 1: the substep's start, before its first projection (xpbd-cpu's beginSubstep has set λ = 0; the
 * records still hold the last substep's λ). Summed by contacts/gpu-contacts.wgsl.ts cj_residual_sum.
 */
export const XPBD_RESIDUAL_KERNELS: KernelDecl[] = [
  {
    name: 'xc_residual',
    over: 'residual',
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['pose', T.vec4s, 'read'], ['pose_prev', T.vec4s, 'read'],
      ['xpbd_points', T.xpoints, 'read'], ['sphere_radius', T.f32s, 'read'], ['residual', 'array<vec2f>', 'read_write'],
      ['body_mass', 'array<BodyMass>', 'read'],
    ],
    helpers: armsWgsl,
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  var sums = vec2f(0.0);
  if (m.count == 0u) { residual[k] = sums; return; }
  let np = min(m.count, 4u);
  let a = m.body_a; let b = m.body_b; let n = m.normal;
  let xa = pose[2u * a].xyz; let qa = pose[2u * a + 1u];
  let xb = pose[2u * b].xyz; let qb = pose[2u * b + 1u];
  // the substep's start pose x̄ = x − Δx, q̄ (pose_prev: the displacement and the start orientation)
  let dxa = pose_prev[2u * a].xyz; let pqa = pose_prev[2u * a + 1u];
  let dxb = pose_prev[2u * b].xyz; let pqb = pose_prev[2u * b + 1u];
  let pa = xa - dxa; let pb = xb - dxb;
  let rad_a = sphere_radius[a]; let rad_b = sphere_radius[b];
  for (var j = 0u; j < np; j++) {
    let P = xpbd_points[4u * k + j];
    // project's measure: the arms, d, the normal row's target and the tangential motion Δp
    let ra = arm_a(rad_a, qa, P.anchor_a, n);
    let rb = arm_b(rad_b, qb, P.anchor_b, n);
    let d = depth(rad_a, rad_b, xa, qa, xb, qb, P.anchor_a, P.anchor_b, n);
    let start = depth(rad_a, rad_b, pa, pqa, pb, pqb, P.anchor_a, P.anchor_b, n);
    let left = select(0.0, start - params.push, start > params.push);
    let C = -select(d, d - left, d > 0.0);
    let lam = select(P.lambda.x, 0.0, slot.first == 1u);
    if (lam > 0.0 || C <= 0.0) { let r = C * params.inv_h2; sums.x += r * r; }
    if (!(lam > 0.0) || P.stuck == 0u) { continue; }
    var motion: vec3f;
    if (rad_a < 0.0 && rad_b < 0.0) {
      motion = P.slip + slip_since_start(body_mass[a].mass, dxa, qa, pqa, body_mass[b].mass, dxb, qb, pqb, P.ref_a, P.ref_b);
    } else {
      let ua = quat_rotate(pqa, rotate_back(qa, ra));
      let ub = quat_rotate(pqb, rotate_back(qb, rb));
      motion = (dxb + rb - ub) - (dxa + ra - ua);
    }
    let r1 = dot(motion, m.tangent1) * params.inv_h2;
    let r2 = dot(motion, m.tangent2) * params.inv_h2;
    sums.y += r1 * r1 + r2 * r2;
  }
  residual[k] = sums;`,
  },
];

/** The WGSL module of kernel `name`. */
export function xpbdContactKernelSource(name: string): string {
  const k = XPBD_CONTACT_KERNELS.find((x) => x.name === name) ?? XPBD_RESIDUAL_KERNELS.find((x) => x.name === name);
  if (!k) throw new Error(`xpbd contacts: no kernel ${name}`);
  const sloted = k.over === 'colour' || k.over === 'tail';
  const first = sloted || k.over === 'restitution' || k.over === 'residual' ? 2 : 1;
  const decls = k.bindings.map(([name, type, access], i) => `@group(0) @binding(${i + first}) var<storage, ${access}> ${name}: ${type};`).join('\n');
  const stage = k.name.startsWith('xc_velocity') ? 'velocity' : k.name.startsWith('xc_apply') ? 'apply' : 'project';
  let helpers = k.helpers ?? '';
  let body = k.body;
  if (sloted) {
    // one manifold per thread within a colour; the late colours and the overflow set in one workgroup (tail)
    const call = { velocity: 'velocity_manifold(order[x]);', apply: 'apply_manifold(order[x]);', project: 'project_manifold(order[x], slot.first == 1u);' }[stage];
    const tailCall = { velocity: 'velocity_manifold(k);', apply: 'apply_manifold(k);', project: 'project_manifold(k, slot.first == 1u);' }[stage];
    helpers = `${stage === 'apply' ? '' : blockWgsl}${armsWgsl}${{ velocity: velocityWgsl, apply: applyWgsl, project: projectWgsl }[stage]}
fn solve_one(x: u32) {
  if (x >= offsets[slot.colour + 1u]) { return; }
  ${call}
}
`;
    if (k.over === 'tail') {
      helpers += tailSweepVarsWgsl;
      // (_ = slot: the layout keeps the slot's binding, which the velocity and apply passes read no field of)
      body = `  _ = slot;${tailSweepWgsl(tailCall, 'false')}`;
    }
  }
  const slot = sloted || k.over === 'residual' ? XpbdSlotRecord : k.over === 'restitution' ? RestitutionSlotRecord : null;
  return `${header}${slot ? `${slot.wgsl}@group(0) @binding(1) var<uniform> slot: ${slot.name};\n` : ''}
${decls}
${helpers}
${k.over === 'restitution' ? restitutionEntry(k.name) : k.over === 'tail' ? tailEntry(k.name) : kernelEntry(k.name)} {
${body}
}
`;
}

/** The storage bindings of kernel `name`, in order, and how it is dispatched. */
export function xpbdContactKernel(name: string): KernelDecl {
  const k = XPBD_CONTACT_KERNELS.find((x) => x.name === name) ?? XPBD_RESIDUAL_KERNELS.find((x) => x.name === name);
  if (!k) throw new Error(`xpbd contacts: no kernel ${name}`);
  return k;
}
