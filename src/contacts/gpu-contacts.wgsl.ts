/**
 * WGSL of the contact solver's Jacobi variant on the GPU (gpu-contacts.ts, the host side): the
 * twin of contacts/jacobi-contact-solver.ts (its stages, its names, its equations, in f32), on the
 * manifolds of the GPU narrow phase (collision/gpu-narrow.ts) and the pair table (gpu/pair-table.ts).
 *
 * Records (gpu/layout.ts: the WGSL structs and the host's offsets come from one description each):
 *   SolverManifold   one per pair slot k of the broad phase (manifold k of pair k; count 0: no point),
 *                    what its points share: n, t₁, t₂, the pair, m_A⁻¹, m_B⁻¹, μ_s, slop, the rule's spring
 *   SolverPoint      four per pair slot (4k + j): the lever arms r_A, r_B at detection, base separation
 *                    s₀, μ, λ = (λ_n, λ₁, λ₂) (force units: a step h applies h λ), the feature id and
 *                    the anchor on A in A's frame (the next frame's matching), the split effective
 *                    masses (jacobi-contact-solver.ts: A_nn^s, A_n1^s, A_n2^s and (A_tt^s)⁻¹)
 *   ContactBody      per body: the pose at the frame's start (x⁰, q⁰), n_i (share: its manifolds and
 *                    joints), the motion since (Δx, Δθ: K1), and I⁻¹ at the frame's start (rows)
 *   Material         per body: μ_d, μ_s, e, its least half size (the pair's slop: pipeline.ts pairSlop)
 *   ManifoldTotal    per pair slot: T_m = (P, τ_A, τ_B), the manifold's whole impulse of the last sweep
 * and u32 arrays: body_count (per body its manifolds with a moving body, then scanned in place into the
 * CSR's row starts), cursor (the fill's), entries (2k + side), joint_share (per body its joints).
 *
 * Why a gather and no float scatter (issue 23, item 1): WebGPU has no float atomics. Each manifold
 * writes its own T_m, and each body sums its manifolds' T_m over its CSR row: every thread writes only
 * its own outputs, as on the CPU (jacobi-contact-solver.ts header). The CSR is built every frame with
 * integer atomics only (counts, a scan, a fill) and each row is then sorted by the other body's index,
 * so the sums' order, and with it every bit of the result, does not depend on the order threads ran in
 * (the broad phase's pair order is not deterministic; what each pair computes is).
 */
import { defineRecord } from '../gpu/layout.js';
import { THREAD_INDEX_WGSL, kernelEntry } from '../gpu/dispatch.js';
import { ManifoldRecord, ContactPointRecord } from '../collision/gpu-narrow.wgsl.js';
import { LINEAR_SLOP, SLOP_SIZE_FRACTION } from '../collision/pipeline.js';
import { MATCH_DISTANCE } from '../collision/manifolds.js';
import { STATIC_SLIP_SPEED } from '../rows/contact.js';
import { NOT_FOUND } from '../gpu/pair-table.js';
import { COLLISION_SWEEPS } from '../rows/block-solver.js';
import { MANIFOLD_SWEEPS } from './contact-solver.js';
import { CONTACT_DISPATCHED_COLOURS, CONTACT_MAX_COLOURS } from '../gpu/colouring.js';

export const SolverManifoldRecord = defineRecord('SolverManifold', [
  ['normal', 'vec3f', 'n, A → B'],
  ['count', 'u32', 'points (0: none, or a slot past the pairs)'],
  ['tangent1', 'vec3f', 't₁ = tangentOf(n)'],
  ['body_a', 'u32', 'the pair (a < b)'],
  ['tangent2', 'vec3f', 't₂ = n × t₁'],
  ['body_b', 'u32'],
  ['inv_mass_a', 'f32', 'm_A⁻¹ (0: fixed)'],
  ['inv_mass_b', 'f32'],
  ['mu_static', 'f32', 'μ_s of the pair'],
  ['slop', 'f32', "the pair's slop (cj_points), then min(the rule's, the pair's) (cj_prepare), m"],
  ['bias_rate', 'f32', "the rule's spring (rows/softness.ts S3)"],
  ['mass_scale', 'f32'],
  ['impulse_scale', 'f32'],
  ['restitution', 'f32', 'e of the pair, max(e_A, e_B) (pipeline.ts)'],
] as const);

export const SolverPointRecord = defineRecord('SolverPoint', [
  ['arm_a', 'vec3f', 'r_A = p_A − x_A at detection, world, m'],
  ['s0', 'f32', 'base separation, m'],
  ['arm_b', 'vec3f', 'r_B'],
  ['mu', 'f32', 'μ_s when found at rest, else μ_d (K2)'],
  ['lambda', 'vec3f', '(λ_n, λ₁, λ₂), N'],
  ['id', 'u32', 'feature key'],
  ['anchor_a', 'vec3f', "the point on A in A's frame (matching)"],
  ['pad', 'f32'],
  ['mass', 'vec4f', 'split A_nn^s, A_n1^s, A_n2^s, 0'],
  ['tangent_inverse', 'vec4f', '(A_tt^s)⁻¹ row-major'],
] as const);

export const ContactBodyRecord = defineRecord('ContactBody', [
  ['x0', 'vec3f', "position at the frame's start"],
  ['share', 'f32', 'n_i: manifolds and joints of the body'],
  ['q0', 'vec4f', "orientation at the frame's start"],
  ['dx', 'vec3f', 'Δx = x − x⁰'],
  ['pad0', 'f32'],
  ['dtheta', 'vec3f', 'Δθ = 2 vec(q q⁰⁻¹) (K1)'],
  ['pad1', 'f32'],
  ['inertia0', 'vec4f', "I⁻¹ at the frame's start, row 0 (symmetric)"],
  ['inertia1', 'vec4f'],
  ['inertia2', 'vec4f'],
] as const);

export const MaterialRecord = defineRecord('Material', [
  ['friction', 'f32', 'μ_d'],
  ['static_friction', 'f32', 'μ_s'],
  ['restitution', 'f32', 'e'],
  ['size', 'f32', 'least half size, m (planes: F32 max)'],
] as const);

export const ManifoldTotalRecord = defineRecord('ManifoldTotal', [
  ['p', 'vec3f', 'P = Σ h λ_c (n, t₁, t₂ combined), N s'],
  ['pad0', 'f32'],
  ['torque_a', 'vec3f', 'Σ r_A,c × P_c'],
  ['pad1', 'f32'],
  ['torque_b', 'vec3f', 'Σ r_B,c × P_c'],
  ['pad2', 'f32'],
] as const);

export const ContactParamsRecord = defineRecord('ContactParams', [
  ['body_count', 'u32', 'bodies (with the world anchors: the solver buffers\' count)'],
  ['capacity', 'u32', 'pair slots'],
  ['pair_counter', 'u32', "index of the pair count in the broad phase's counters"],
  ['warm', 'f32', 'warm-start factor (λ⁰ = warm · λ matched)'],
  ['h', 'f32', 'the substep, s'],
  ['inv_h', 'f32'],
  ['max_pushout', 'f32', 'm/s'],
  ['rule_slop', 'f32', 'm'],
  ['bias_rate', 'f32', "the rule's spring at unit mass (S3)"],
  ['mass_scale', 'f32'],
  ['impulse_scale', 'f32'],
  ['static_bias_rate', 'f32', 'the spring against a fixed body'],
  ['static_mass_scale', 'f32'],
  ['static_impulse_scale', 'f32'],
  ['split', 'u32', '1: n_i = manifolds + joints (the Jacobi variant); 0: n_i = 1 (the true masses: the sequential solve)'],
  ['size_spring', 'u32', "1: the small-body spring (ContactRule.sizeSpring) on a frequency rule"],
  ['size_sag', 'f32', 'sagFraction'],
  ['size_gravity', 'f32', '|g|, m/s²'],
  ['size_cap_hertz', 'f32', 'the cap of the small-body spring, Hz'],
  ['hertz', 'f32', "the rule's frequency, Hz (size_spring)"],
  ['damping_ratio', 'f32'],
  ['static_hertz', 'f32', 'against a fixed body'],
  ['static_damping_ratio', 'f32'],
  ['restitution_threshold', 'f32', 'the approach speed below which nothing bounces, m/s (ContactRule)'],
] as const);

/** The colour a sequential sweep's dispatch solves, and how (a uniform slot per colour and mode). */
export const ColourSlotRecord = defineRecord('ColourSlot', [
  ['colour', 'u32', 'colour c of the colouring (D = CONTACT_DISPATCHED_COLOURS: the tail, cs_solve_tail)'],
  ['use_bias', 'u32', '1: solve (the soft bias); 0: relax (rigid, no bias but a speculative s/h)'],
  ['reverse', 'u32', "1: the manifold's points from the last to the first"],
  ['pad', 'u32'],
] as const);

/** Threads of cs_restitution's one workgroup (WebGPU's default maxComputeInvocationsPerWorkgroup). */
export const RESTITUTION_THREADS = 256;

/** How a restitution pass runs (cs_restitution): a uniform slot per kind of call. */
export const RestitutionSlotRecord = defineRecord('RestitutionSlot', [
  ['gravity_step', 'vec3f', "h g when V has this step's forces in it (taken out of each approach), else 0, m/s"],
  ['colours', 'u32', 'K: the colours 0 .. K − 1, then the overflow set K'],
] as const);

/** The narrow phase's records, re-declared for these kernels (the same descriptions). */
const header = /* wgsl */ `
${ContactParamsRecord.wgsl}
${SolverManifoldRecord.wgsl}
${SolverPointRecord.wgsl}
${ContactBodyRecord.wgsl}
${MaterialRecord.wgsl}
${ManifoldTotalRecord.wgsl}
${ManifoldRecord.wgsl}
${ContactPointRecord.wgsl}
struct InverseMass {
  inertia: mat3x3f, // I⁻¹ in the world frame (jacobi/kernels.wgsl.ts)
  mass: f32,
  share: f32,       // the joints' mass-splitting factor s_i (cj_share writes it; jacobi-gpu's prepare_* read it)
  position_share: f32, // the position pass's factor s^p_i (cj_share writes it; jacobi-gpu's prepare_* read it)
};
@group(0) @binding(0) var<uniform> params: ContactParams;
${THREAD_INDEX_WGSL}
fn pair_count(c: u32) -> u32 { return min(c, params.capacity); }
// I⁻¹ v of a body's ContactBody (rows of a symmetric matrix)
fn inertia_times(b: ContactBody, v: vec3f) -> vec3f {
  return vec3f(dot(b.inertia0.xyz, v), dot(b.inertia1.xyz, v), dot(b.inertia2.xyz, v));
}
`;

/** WGSL of rows/contact.ts tangentOf: t₁ = normalise(n × ẑ), or n × x̂ when |n_z| ≥ 0.9. */
const tangentWgsl = /* wgsl */ `
fn tangent_of(n: vec3f) -> vec3f {
  var t = vec3f(0.0, n.z, -n.y);
  if (abs(n.z) < 0.9) { t = vec3f(n.y, -n.x, 0.0); }
  return t / sqrt(dot(t, t));
}
`;

/**
 * WGSL of rows/block-solver.ts frictionDisc: the point of the disc |λ| ≤ r nearest f in the metric
 * A = M⁻¹ (M = (A_tt^s)⁻¹, row-major in a vec4f), by A's eigenbasis and Newton on κ (its header). The
 * CPU's "isotropic" cut-off 1e-13 is f64 rounding; here 1e-6 (f32's ε is 1.2e-7): either branch gives
 * the same λ for an isotropic metric, so the cut-off only picks the cheaper one.
 */
export const discWgsl = /* wgsl */ `
fn friction_disc(M: vec4f, f_in: vec2f, r_in: f32) -> vec2f {
  if (!(r_in > 0.0)) { return vec2f(0.0); }
  // the projection is homogeneous of degree 1 in (f, r): solved for (f, r)/F, F = max |f_i|, and scaled
  // back, so neither |f|² nor |λ|² under- or overflows f32 (a point barely touching has λ ~ 1e-19 N,
  // whose square is below f32's smallest normal: flushed to 0, Newton divided 0 by 0)
  let F = max(abs(f_in.x), abs(f_in.y));
  let f = f_in / F;
  let r = r_in / F;
  let m00 = M.x; let m01 = 0.5 * (M.y + M.z); let m11 = M.w;
  if (abs(m01) <= 1e-6 * (m00 + m11) && abs(m00 - m11) <= 1e-6 * (m00 + m11)) {
    return F * (f * (r / length(f)));
  }
  let det = m00 * m11 - m01 * m01;
  let a00 = m11 / det; let a01 = -m01 / det; let a11 = m00 / det;
  let dh = 0.5 * (a00 - a11);
  let q = sqrt(dh * dh + a01 * a01);
  var cos2 = 1.0;
  if (q > 0.0) { cos2 = dh / q; }
  let c = sqrt(max(0.0, 0.5 * (1.0 + cos2)));
  let s = select(1.0, -1.0, a01 < 0.0) * sqrt(max(0.0, 0.5 * (1.0 - cos2)));
  let e1 = c * c * a00 + 2.0 * c * s * a01 + s * s * a11;
  let e2 = s * s * a00 - 2.0 * c * s * a01 + c * c * a11;
  let g1 = e1 * (c * f.x + s * f.y);
  let g2 = e2 * (-s * f.x + c * f.y);
  if (r < 1e-6) {
    // r far below |f|∞ = 1: κ ≫ e_i, λ(κ) = (E + κ)⁻¹ g ≈ g / κ, the direction of g to e_i r / |g| relative
    // (below f32's ε), scaled to r. Newton would square λ ~ r, under f32's smallest normal for r < 1e-19:
    // 0 / 0 at the end (a base-100 pyramid under jacobi-gpu went NaN at frame 10: a point barely loaded,
    // μ λ_n ~ 1e-30 N, against a warm-started friction impulse)
    let gx = c * g1 - s * g2; let gy = s * g1 + c * g2;
    let gm = max(abs(gx), abs(gy));
    if (!(gm > 0.0)) { return vec2f(0.0); }
    let d = vec2f(gx, gy) / gm;
    return r_in * (d / length(d));
  }
  // Newton on 1/|λ(κ)| = 1/r from κ = 0 (frictionDisc's header: rising and concave, so from below)
  var k = 0.0;
  var d1 = e1; var d2 = e2;
  var l1 = g1 / d1; var l2 = g2 / d2;
  for (var it = 0; it < 30; it++) {
    let s2 = l1 * l1 + l2 * l2;
    if (s2 - r * r <= 1e-6 * r * r) { break; }
    k += s2 * (sqrt(s2) / r - 1.0) / (l1 * l1 / d1 + l2 * l2 / d2);
    d1 = e1 + k; d2 = e2 + k;
    l1 = g1 / d1; l2 = g2 / d2;
  }
  let x = c * l1 - s * l2; let y = s * l1 + c * l2;
  return F * (vec2f(x, y) * (r / sqrt(x * x + y * y)));
}
`;

/**
 * cj_match's point matching (collision/manifolds.ts setPoint), shared with xpbd-gpu's xc_match (its
 * reference carried the same way): point (id, anchor_a) of the new manifold against record t of last
 * frame's `prev_points` (a binding of the kernel that includes it), the same feature id first, else, when
 * the normal turned less than acos 0.99, the nearest unused old anchor within reach; the old point found
 * is marked in *used (each gives its impulses once). −1: none.
 */
export const matchPointWgsl = /* wgsl */ `
fn match_point(t: u32, old_count: u32, id: u32, anchor_a: vec3f, reach: f32, turned: bool, used: ptr<function, u32>) -> i32 {
  var hit = -1;
  for (var q = 0u; q < old_count; q++) {
    if (prev_points[4u * t + q].id == id && ((*used) & (1u << q)) == 0u) { hit = i32(q); break; }
  }
  if (hit < 0 && !turned) {
    var best = reach * reach;
    for (var q = 0u; q < old_count; q++) {
      if (((*used) & (1u << q)) != 0u) { continue; }
      let d = anchor_a - prev_points[4u * t + q].anchor_a;
      let d2 = dot(d, d);
      if (d2 < best) { best = d2; hit = i32(q); }
    }
  }
  if (hit >= 0) { *used |= 1u << u32(hit); }
  return hit;
}
`;

/**
 * contact-solver.ts solve for one point, shared by both modes: point c of manifold m, its separation moved
 * with the bodies (K1: s₀ + sLin + r_B·u_B − r_A·u_A), the bias (speculative s/h; beyond the slop the rule's
 * spring when use_bias, capped at the push-out speed), the normal update (S1) and the friction disc (K2);
 * λ written back to the record, the change applied at once to the copies *v with inverse masses sA m_A⁻¹,
 * sB m_B⁻¹ and inertias sA I_A⁻¹, sB I_B⁻¹ (the Jacobi variant's split copies: sA = n_A; the sequential
 * solve's bodies: 1, and 1 · x = x exactly), and the point's whole impulse h λ added to *t (the Jacobi
 * variant's T_m).
 */
const pointWgsl = /* wgsl */ `
struct Copies { va: vec3f, wa: vec3f, vb: vec3f, wb: vec3f };
fn solve_point(c: u32, m: SolverManifold, A: ContactBody, B: ContactBody, sA: f32, sB: f32, sLin: f32, ua: vec3f, ub: vec3f, use_bias: bool, v: ptr<function, Copies>, t: ptr<function, ManifoldTotal>) {
  let n = m.normal; let t1 = m.tangent1; let t2 = m.tangent2;
  let mA = sA * m.inv_mass_a; let mB = sB * m.inv_mass_b;
  var p = points[c];
  let ra = p.arm_a; let rb = p.arm_b;
  let s = p.s0 + sLin + dot(rb, ub) - dot(ra, ua);
  var bias = 0.0; var ms = 1.0; var is = 0.0;
  if (s > 0.0) { bias = s * params.inv_h; }
  else if (use_bias && s + m.slop < 0.0) {
    bias = max(m.bias_rate * (s + m.slop), -params.max_pushout);
    ms = m.mass_scale;
    is = m.impulse_scale;
  }
  let dv = (*v).vb + cross((*v).wb, rb) - (*v).va - cross((*v).wa, ra);
  let vn = dot(n, dv);
  var v1 = dot(t1, dv);
  var v2 = dot(t2, dv);
  // (S1) Δλ_n = −massScale (v_n + bias) / (h A_nn) − impulseScale λ_n, λ_n ≥ 0 (A_nn of the copies)
  let oldN = p.lambda.x;
  let next = max(0.0, oldN - (ms * (vn + bias) * params.inv_h) / p.mass.x - is * oldN);
  let Pn = params.h * (next - oldN);
  // the tangential velocities after the normal impulse: u_t + A_tn P_n
  v1 += p.mass.y * Pn;
  v2 += p.mass.z * Pn;
  // friction (K2): the stick solution, kept inside the static disc, else onto the disc μ λ_n in the
  // metric of A_tt (friction_disc)
  let old1 = p.lambda.y; let old2 = p.lambda.z;
  var f = vec2f(old1, old2);
  if (next != 0.0 || old1 != 0.0 || old2 != 0.0) {
    let radius = p.mu * next;
    let M = p.tangent_inverse;
    f = vec2f(old1 - params.inv_h * (M.x * v1 + M.y * v2), old2 - params.inv_h * (M.z * v1 + M.w * v2));
    let len2 = dot(f, f);
    let staticRadius = m.mu_static * next;
    if (len2 > staticRadius * staticRadius && len2 > radius * radius) { f = friction_disc(M, f, radius); }
  }
  p.lambda = vec3f(next, f.x, f.y);
  points[c] = p;
  let l = params.h * p.lambda;
  let q = l.x * n + l.y * t1 + l.z * t2;
  (*t).p += q;
  (*t).torque_a += cross(ra, q);
  (*t).torque_b += cross(rb, q);
  // the change to the copies: δV = s M⁻¹ J_cᵀ P_c (the next point sees it)
  let dp = Pn * n + params.h * (f.x - old1) * t1 + params.h * (f.y - old2) * t2;
  if (mA > 0.0) {
    (*v).va -= mA * dp;
    (*v).wa -= sA * inertia_times(A, cross(ra, dp));
  }
  if (mB > 0.0) {
    (*v).vb += mB * dp;
    (*v).wb += sB * inertia_times(B, cross(rb, dp));
  }
}
`;

type Access = 'read' | 'read_write';
interface KernelDecl {
  name: string;
  /**
   * a uniform slot at binding 1, storage bindings following: 'colour' a ColourSlot (the sequential sweep's
   * colour and mode), 'restitution' a RestitutionSlot (cs_restitution's forces and colours)
   */
  slot?: 'colour' | 'restitution';
  /** the entry point's line, when not the 64-thread kernelEntry (cs_restitution: one workgroup) */
  entry?: string;
  /** storage bindings 1.. in order: [name, WGSL type, access] */
  bindings: [string, string, Access][];
  body: string;
  helpers?: string;
}

function source(k: KernelDecl): string {
  const first = k.slot ? 2 : 1;
  const decls = k.bindings.map(([name, type, access], i) => `@group(0) @binding(${i + first}) var<storage, ${access}> ${name}: ${type};`).join('\n');
  const record = k.slot === 'colour' ? ColourSlotRecord : k.slot === 'restitution' ? RestitutionSlotRecord : null;
  return `${header}${record ? `${record.wgsl}@group(0) @binding(1) var<uniform> slot: ${record.name};\n` : ''}
${decls}
${k.helpers ?? ''}
${k.entry ?? kernelEntry(k.name)} {
${k.body}
}
`;
}

/** The binding names of each kernel, in order (the host binds its buffers by these names). */
export type ContactBufferName =
  | 'counters' | 'narrow_manifolds' | 'narrow_points' | 'found' | 'prev_manifolds' | 'prev_points' | 'prev_count'
  | 'manifolds' | 'points' | 'pose' | 'velocity' | 'velocity_delta' | 'inverse_mass' | 'contact_body' | 'materials'
  | 'body_count' | 'cursor' | 'entries' | 'joint_share' | 'totals' | 'offsets' | 'order' | 'stats' | 'residual' | 'residual_sums';

const T = {
  u32s: 'array<u32>',
  atomics: 'array<atomic<u32>>',
  manifolds: 'array<SolverManifold>',
  points: 'array<SolverPoint>',
  bodies: 'array<ContactBody>',
  vec4s: 'array<vec4f>',
};

/** The entry point of a restitution pass (cs_restitution, xpbd-gpu's xc_collide): one workgroup of RESTITUTION_THREADS. */
export function restitutionEntry(name: string): string {
  return `@compute @workgroup_size(${RESTITUTION_THREADS}) fn ${name}(@builtin(local_invocation_index) lid: u32)`;
}

/**
 * A manifold's collisions (restitution's impulse, shared by cs_restitution and xpbd-gpu's xc_collide; the
 * header of restitutionKernel): projected Gauss-Seidel on its `count` colliding points,
 *   P_i ← max(0, P_i + (goal_i − J_n,i V) / A_nn,i),   V_A −= M_A⁻¹ [n; r_A × n] ΔP, V_B += M_B⁻¹ [n; r_B × n] ΔP,
 * each change applied to V at once, at most `sweeps` sweeps (f32: a sweep changing no P by more than 1e-6 of
 * the largest stops it; one point is exact after one). The caller fills the private inputs (arms cb_ra, cb_rb,
 * goals, A_nn in cb_k, P = 0, the two bodies' V in cb_va … cb_wb) and defines turn_a(c), turn_b(c): I⁻¹ c of
 * each body; the result is P in cb_impulse and V in cb_va … cb_wb.
 */
export const collisionBlockWgsl = /* wgsl */ `
var<private> cb_ra: array<vec3f, 4>;
var<private> cb_rb: array<vec3f, 4>;
var<private> cb_goal: array<f32, 4>;
var<private> cb_k: array<f32, 4>;
var<private> cb_impulse: array<f32, 4>;
var<private> cb_va: vec3f;
var<private> cb_wa: vec3f;
var<private> cb_vb: vec3f;
var<private> cb_wb: vec3f;
fn collision_block(n: vec3f, count: u32, inv_mass_a: f32, inv_mass_b: f32, sweeps: u32) {
  for (var it = 0u; it < sweeps; it++) {
    var change = 0.0; var size = 0.0;
    for (var i = 0u; i < count; i++) {
      let vn = dot(n, cb_vb + cross(cb_wb, cb_rb[i]) - cb_va - cross(cb_wa, cb_ra[i]));
      let next = max(0.0, cb_impulse[i] + (cb_goal[i] - vn) / cb_k[i]);
      let dP = next - cb_impulse[i];
      if (dP != 0.0) {
        // V_A −= M_A⁻¹ [n; r_A × n] ΔP, V_B += M_B⁻¹ [n; r_B × n] ΔP
        let q = dP * n;
        if (inv_mass_a > 0.0) { cb_va -= inv_mass_a * q; cb_wa -= turn_a(cross(cb_ra[i], q)); }
        if (inv_mass_b > 0.0) { cb_vb += inv_mass_b * q; cb_wb += turn_b(cross(cb_rb[i], q)); }
      }
      cb_impulse[i] = next;
      change = max(change, abs(dP));
      size = max(size, next);
    }
    if (count == 1u || change <= 1e-6 * size) { break; }
  }
}
`;

/** Threads of a tail sweep's one workgroup (tailSweepWgsl). */
export const TAIL_THREADS = 256;

/** The entry point of a tail sweep (one workgroup of TAIL_THREADS, its local index `lid`). */
export function tailEntry(name: string): string {
  return `@compute @workgroup_size(${TAIL_THREADS}) fn ${name}(@builtin(local_invocation_index) lid: u32)`;
}

/** The workgroup variable tailSweepWgsl uses (module scope). */
export const tailSweepVarsWgsl = /* wgsl */ `
var<workgroup> tail_used: u32;
`;

/**
 * The body of a sequential sweep's tail, in one workgroup (gpu/colouring.ts header): the colours
 * D = CONTACT_DISPATCHED_COLOURS .. K − 1 (K = CONTACT_MAX_COLOURS) that a manifold took once the first D were
 * taken around it, in order, a colour's manifolds spread over the workgroup with a barrier between colours
 * (no two of a colour share a moving body, so within a colour any order is the serial one), then the
 * overflow set K by one thread in index order; `reverse`: the overflow set backwards first, then the colours
 * K − 1 .. D. The colours before D are dispatched one by one (a colour of a large pile fills the GPU); these
 * late ones hold a few manifolds each (the 22-wythe wall's colours 21 .. 25: 712, 174, 17, 1 of 80k), and an
 * empty one costs two barriers here instead of a dispatch per sweep. `call` solves manifold `k` (a u32); the
 * kernel binds `offsets` and `order` (the colouring's).
 */
export function tailSweepWgsl(call: string, reverse: string): string {
  const D = CONTACT_DISPATCHED_COLOURS, K = CONTACT_MAX_COLOURS;
  return /* wgsl */ `
  // the colours up to the last one with a manifold (the rest are empty: no barriers spent on them)
  if (lid == 0u) {
    var used = ${D}u;
    for (var c = ${D}u; c < ${K}u; c++) { if (offsets[c + 1u] > offsets[c]) { used = c + 1u; } }
    tail_used = used;
  }
  let used = workgroupUniformLoad(&tail_used);
  let reverse = ${reverse};
  let first_overflow = offsets[${K}u];
  let overflow = offsets[${K + 1}u] - first_overflow;
  if (reverse) {
    if (lid == 0u) {
      for (var x = 0u; x < overflow; x++) { let k = order[first_overflow + overflow - 1u - x]; ${call} }
    }
    storageBarrier();
    workgroupBarrier();
  }
  for (var x = ${D}u; x < used; x++) {
    var c = x;
    if (reverse) { c = used - 1u - (x - ${D}u); }
    let first = offsets[c];
    let size = offsets[c + 1u] - first;
    for (var t = lid; t < size; t += ${TAIL_THREADS}u) { let k = order[first + t]; ${call} }
    storageBarrier();
    workgroupBarrier();
  }
  if (!reverse && lid == 0u) {
    for (var x = 0u; x < overflow; x++) { let k = order[first_overflow + x]; ${call} }
  }`;
}

/**
 * The body of a restitution pass in one workgroup (restitutionKernel's header: the colours in order, a colour's
 * manifolds spread over the workgroup with barriers between colours, the overflow set by one thread, swept
 * until a sweep finds nothing colliding, at most COLLISION_SWEEPS), shared by cs_restitution and xpbd-gpu's
 * xc_collide. The kernel binds `offsets` and `order` (the colouring's), a RestitutionSlot `slot` (its colours
 * K), and defines collide_manifold(k) -> bool (true when a point of manifold k collided).
 */
export const restitutionSweepWgsl = /* wgsl */ `
  // the colours up to the last one with a manifold (the rest are empty: no barriers spent on them)
  if (lid == 0u) {
    var used = 0u;
    for (var c = 0u; c < slot.colours; c++) { if (offsets[c + 1u] > offsets[c]) { used = c + 1u; } }
    colours_used = used;
  }
  let colours = workgroupUniformLoad(&colours_used);
  for (var sweep = 0u; sweep < ${COLLISION_SWEEPS}u; sweep++) {
    if (lid == 0u) { atomicStore(&hit, 0u); }
    workgroupBarrier();
    // the colours in order, a colour's manifolds spread over the workgroup; a barrier between colours
    for (var c = 0u; c < colours; c++) {
      let first = offsets[c];
      let size = offsets[c + 1u] - first;
      for (var x = lid; x < size; x += ${RESTITUTION_THREADS}u) {
        if (collide_manifold(order[first + x])) { atomicStore(&hit, 1u); }
      }
      storageBarrier();
      workgroupBarrier();
    }
    // the overflow set, by one thread in index order
    if (lid == 0u) {
      let first = offsets[slot.colours];
      let size = offsets[slot.colours + 1u] - first;
      for (var x = 0u; x < size; x++) {
        if (collide_manifold(order[first + x])) { atomicStore(&hit, 1u); }
      }
      hit_uniform = atomicLoad(&hit);
    }
    storageBarrier();
    // a sweep that found nothing colliding ends the pass (workgroupUniformLoad: a barrier, then one value for all)
    if (workgroupUniformLoad(&hit_uniform) == 0u) { break; }
  }`;

/** The workgroup variables restitutionSweepWgsl uses (module scope). */
export const restitutionSweepVarsWgsl = /* wgsl */ `
var<workgroup> hit: atomic<u32>;
var<workgroup> hit_uniform: u32;
var<workgroup> colours_used: u32;
`;

/** The kernels, each with its bindings (≤ 8 storage buffers: WebGPU's default per stage). */
export const CONTACT_KERNELS: KernelDecl[] = [
  {
    // frame start (after compute_inertia): the pose and I⁻¹ of the frame's start, no motion yet, counts cleared
    name: 'cj_frame_bodies',
    bindings: [['pose', T.vec4s, 'read'], ['inverse_mass', 'array<InverseMass>', 'read'], ['contact_body', T.bodies, 'read_write'], ['body_count', T.u32s, 'read_write'], ['stats', T.u32s, 'read_write']],
    body: /* wgsl */ `
  let i = thread_index(gid, nwg);
  if (i == 0u) { body_count[params.body_count] = 0u; stats[0] = 0u; stats[1] = 0u; }
  if (i >= params.body_count) { return; }
  var b: ContactBody;
  b.x0 = pose[2u * i].xyz;
  b.q0 = pose[2u * i + 1u];
  b.share = 0.0;
  let I = inverse_mass[i].inertia;
  b.inertia0 = vec4f(I[0], 0.0); // columns = rows (symmetric)
  b.inertia1 = vec4f(I[1], 0.0);
  b.inertia2 = vec4f(I[2], 0.0);
  contact_body[i] = b;
  body_count[i] = 0u;`,
  },
  {
    // prepare, its first part: the narrow phase's manifold k as the solver's records (contact-solver.ts
    // prepare; pipeline.ts narrowPhase: the arms r = p − x at detection, the anchors Rᵀ r), λ = 0
    name: 'cj_points',
    helpers: tangentWgsl,
    bindings: [
      ['counters', T.u32s, 'read'], ['narrow_manifolds', 'array<Manifold>', 'read'], ['narrow_points', 'array<ContactPoint>', 'read'],
      ['contact_body', T.bodies, 'read'], ['materials', 'array<Material>', 'read'], ['manifolds', T.manifolds, 'read_write'], ['points', T.points, 'read_write'],
    ],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let nm = narrow_manifolds[k];
  var m: SolverManifold;
  m.count = nm.count;
  m.body_a = nm.body_a;
  m.body_b = nm.body_b;
  if (nm.count == 0u) {
    // no point: a pair of no bodies for the colouring (indices past the bodies are the world's: no conflict)
    m.body_a = 0xffffffffu;
    m.body_b = 0xffffffffu;
    manifolds[k] = m;
    return;
  }
  let n = nm.normal;
  m.normal = n;
  let t1 = tangent_of(n);
  m.tangent1 = t1;
  m.tangent2 = cross(n, t1);
  // the pair's slop (pipeline.ts pairSlop): min(LINEAR_SLOP, SLOP_SIZE_FRACTION · the smaller least half size)
  m.slop = min(${LINEAR_SLOP}, ${SLOP_SIZE_FRACTION} * min(materials[nm.body_a].size, materials[nm.body_b].size));
  manifolds[k] = m;
  let A = contact_body[nm.body_a];
  let B = contact_body[nm.body_b];
  for (var j = 0u; j < nm.count; j++) {
    let c = narrow_points[4u * k + j];
    var p: SolverPoint;
    p.arm_a = c.point_a - A.x0;
    p.arm_b = c.point_b - B.x0;
    p.s0 = c.separation;
    p.id = c.id;
    // Rᵀ r: r turned by q⁰⁻¹ (rigid/quat.ts rotateVectorBack)
    let u = -A.q0.xyz;
    let tt = 2.0 * cross(u, p.arm_a);
    p.anchor_a = p.arm_a + A.q0.w * tt + cross(u, tt);
    p.lambda = vec3f(0.0);
    p.mu = 0.0;
    points[4u * k + j] = p;
  }`,
  },
  {
    // the warm start's matching (collision/manifolds.ts setPoint): last frame's manifold of the pair
    // (the pair table's found[k]); a new point takes the impulses of the old point with its id, else,
    // when the normal turned less than acos(0.99), of the nearest unused old point whose anchor on A lies
    // within min(MATCH_DISTANCE, 4 slop); each old point gives its impulses once. Friction is carried
    // as the world vector λ₁ t₁ + λ₂ t₂ of the old tangents, projected onto the new ones; λ⁰ = warm · λ
    name: 'cj_match',
    bindings: [
      ['counters', T.u32s, 'read'], ['found', T.u32s, 'read'], ['prev_manifolds', T.manifolds, 'read'], ['prev_points', T.points, 'read'],
      ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read_write'],
    ],
    helpers: matchPointWgsl,
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  let t = found[k];
  if (m.count == 0u || t == ${NOT_FOUND}u) { return; }
  let old = prev_manifolds[t];
  let turned = dot(old.normal, m.normal) < 0.99;
  let reach = min(${MATCH_DISTANCE}, 4.0 * m.slop);
  var used = 0u;
  for (var j = 0u; j < m.count; j++) {
    var p = points[4u * k + j];
    let hit = match_point(t, old.count, p.id, p.anchor_a, reach, turned, &used);
    if (hit < 0) { continue; }
    let l = prev_points[4u * t + u32(hit)].lambda;
    let f = l.y * old.tangent1 + l.z * old.tangent2;
    p.lambda = params.warm * vec3f(l.x, dot(f, m.tangent1), dot(f, m.tangent2));
    points[4u * k + j] = p;
  }`,
  },
  {
    // prepare, its second part (contact-solver.ts prepare): masses, the pair's friction, slop and
    // spring, each point's μ from its slip at detection (K2); the body's manifolds counted (CSR)
    name: 'cj_prepare',
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read_write'], ['points', T.points, 'read_write'], ['velocity', T.vec4s, 'read'],
      ['inverse_mass', 'array<InverseMass>', 'read'], ['materials', 'array<Material>', 'read'], ['body_count', T.atomics, 'read_write'],
      ['stats', T.atomics, 'read_write'],
    ],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  var m = manifolds[k];
  if (m.count == 0u) { return; }
  let a = m.body_a; let b = m.body_b;
  m.inv_mass_a = inverse_mass[a].mass;
  m.inv_mass_b = inverse_mass[b].mass;
  let fa = materials[a]; let fb = materials[b];
  let mu = sqrt(fa.friction * fb.friction);
  m.mu_static = sqrt(fa.static_friction * fb.static_friction);
  m.restitution = max(fa.restitution, fb.restitution); // pipeline.ts: the pair takes max(e_A, e_B)
  let pair_slop = m.slop;
  m.slop = min(params.rule_slop, pair_slop);
  if (m.inv_mass_a == 0.0 || m.inv_mass_b == 0.0) {
    m.bias_rate = params.static_bias_rate; m.mass_scale = params.static_mass_scale; m.impulse_scale = params.static_impulse_scale;
  } else {
    m.bias_rate = params.bias_rate; m.mass_scale = params.mass_scale; m.impulse_scale = params.impulse_scale;
  }
  if (params.size_spring == 1u) {
    // a small pair's spring stiffened so its sag under its own weight stays a fraction of its size
    // (contact-solver.ts prepare, ContactRule.sizeSpring): L from the pair's slop (cj_points)
    let L = pair_slop / ${SLOP_SIZE_FRACTION};
    let hz = min(params.size_cap_hertz, sqrt(params.size_gravity / (params.size_sag * L)) / ${2 * Math.PI});
    let fixed = m.inv_mass_a == 0.0 || m.inv_mass_b == 0.0;
    let spec_hz = select(params.hertz, params.static_hertz, fixed);
    let zeta = select(params.damping_ratio, params.static_damping_ratio, fixed);
    if (hz > spec_hz) {
      // rows/softness.ts (S3) for the frequency hz and damping ratio ζ over h
      let omega = ${2 * Math.PI} * hz;
      let a1 = 2.0 * zeta + params.h * omega;
      let a2 = params.h * omega * a1;
      m.bias_rate = omega / a1;
      m.mass_scale = a2 / (1.0 + a2);
      m.impulse_scale = 1.0 / (1.0 + a2);
    }
  }
  manifolds[k] = m;
  let va = velocity[2u * a].xyz; let wa = velocity[2u * a + 1u].xyz;
  let vb = velocity[2u * b].xyz; let wb = velocity[2u * b + 1u].xyz;
  for (var j = 0u; j < m.count; j++) {
    var p = points[4u * k + j];
    let v = vb + cross(wb, p.arm_b) - va - cross(wa, p.arm_a);
    let slip = v - dot(m.normal, v) * m.normal;
    p.mu = select(mu, m.mu_static, length(slip) < ${STATIC_SLIP_SPEED});
    points[4u * k + j] = p;
  }
  if (m.inv_mass_a > 0.0) { atomicAdd(&body_count[a], 1u); }
  if (m.inv_mass_b > 0.0) { atomicAdd(&body_count[b], 1u); }
  // the frame's contact points and manifolds with points (the run's cost line and the benchmark, read at a snapshot)
  atomicAdd(&stats[0], m.count);
  atomicAdd(&stats[1], 1u);`,
  },
  {
    // after the scan (body_count = the CSR's row starts): the fill's cursors, and n_i = manifolds + joints
    name: 'cj_share',
    bindings: [['body_count', T.u32s, 'read'], ['cursor', T.u32s, 'read_write'], ['joint_share', T.u32s, 'read'], ['contact_body', T.bodies, 'read_write'], ['inverse_mass', 'array<InverseMass>', 'read_write']],
    body: /* wgsl */ `
  let i = thread_index(gid, nwg);
  if (i >= params.body_count) { return; }
  cursor[i] = body_count[i];
  if (params.split == 1u) {
    let n = f32(body_count[i + 1u] - body_count[i] + joint_share[i]);
    contact_body[i].share = n;
    // the joints' mass-splitting factor s_i = (n_i + 1)/2 (rows/block-solver.ts massShare; jacobi/cpu.ts), this frame's
    inverse_mass[i].share = 0.5 * (n + 1.0);
    // the position pass's s^p_i = max(1, k_i/2) from the body's k_i joints alone (block-solver.ts positionShare)
    inverse_mass[i].position_share = max(1.0, 0.5 * f32(joint_share[i]));
  }
  else { contact_body[i].share = 1.0; }`,
  },
  {
    // the CSR's entries (2k + side, per moving body), and each point's split effective masses
    // A_c^s = J_c S M⁻¹ J_cᵀ, S = diag(n_i) (jacobi-contact-solver.ts prepareJacobi; contact-solver.ts pointMass)
    name: 'cj_fill',
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read_write'], ['contact_body', T.bodies, 'read'],
      ['cursor', T.atomics, 'read_write'], ['entries', T.u32s, 'read_write'],
    ],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  if (m.count == 0u) { return; }
  let A = contact_body[m.body_a];
  let B = contact_body[m.body_b];
  if (m.inv_mass_a > 0.0) { entries[atomicAdd(&cursor[m.body_a], 1u)] = 2u * k; }
  if (m.inv_mass_b > 0.0) { entries[atomicAdd(&cursor[m.body_b], 1u)] = 2u * k + 1u; }
  let sA = A.share; let sB = B.share;
  let lin = sA * m.inv_mass_a + sB * m.inv_mass_b;
  for (var j = 0u; j < m.count; j++) {
    var p = points[4u * k + j];
    var kNN = lin; var kN1 = 0.0; var kN2 = 0.0; var k11 = lin; var k12 = 0.0; var k22 = lin;
    if (m.inv_mass_a > 0.0) {
      let cn = cross(p.arm_a, m.normal); let c1 = cross(p.arm_a, m.tangent1); let c2 = cross(p.arm_a, m.tangent2);
      let gn = inertia_times(A, cn); let g1 = inertia_times(A, c1); let g2 = inertia_times(A, c2);
      kNN += sA * dot(cn, gn); kN1 += sA * dot(cn, g1); kN2 += sA * dot(cn, g2);
      k11 += sA * dot(c1, g1); k12 += sA * dot(c1, g2); k22 += sA * dot(c2, g2);
    }
    if (m.inv_mass_b > 0.0) {
      let cn = cross(p.arm_b, m.normal); let c1 = cross(p.arm_b, m.tangent1); let c2 = cross(p.arm_b, m.tangent2);
      let gn = inertia_times(B, cn); let g1 = inertia_times(B, c1); let g2 = inertia_times(B, c2);
      kNN += sB * dot(cn, gn); kN1 += sB * dot(cn, g1); kN2 += sB * dot(cn, g2);
      k11 += sB * dot(c1, g1); k12 += sB * dot(c1, g2); k22 += sB * dot(c2, g2);
    }
    let det = k11 * k22 - k12 * k12;
    p.mass = vec4f(kNN, kN1, kN2, 0.0);
    p.tangent_inverse = vec4f(k22 / det, -k12 / det, -k12 / det, k11 / det);
    points[4u * k + j] = p;
  }`,
  },
  {
    // each body's CSR row sorted by (the other body, side): the gather's sums in an order that does
    // not depend on the threads' (a pair has one manifold, so the keys are distinct)
    name: 'cj_sort',
    bindings: [['body_count', T.u32s, 'read'], ['entries', T.u32s, 'read_write'], ['manifolds', T.manifolds, 'read']],
    body: /* wgsl */ `
  let i = thread_index(gid, nwg);
  if (i >= params.body_count) { return; }
  let s0 = body_count[i]; let s1 = body_count[i + 1u];
  for (var x = s0 + 1u; x < s1; x++) {
    let e = entries[x];
    let me = manifolds[e >> 1u];
    let key = 2u * select(me.body_a, me.body_b, (e & 1u) == 0u) + (e & 1u);
    var y = x;
    loop {
      if (y <= s0) { break; }
      let f = entries[y - 1u];
      let mf = manifolds[f >> 1u];
      let kf = 2u * select(mf.body_a, mf.body_b, (f & 1u) == 0u) + (f & 1u);
      if (kf <= key) { break; }
      entries[y] = f;
      y--;
    }
    entries[y] = e;
  }`,
  },
  {
    // warm start, its first half (jacobi-contact-solver.ts totals): T_m from λ now
    name: 'cj_totals',
    bindings: [['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read'], ['totals', 'array<ManifoldTotal>', 'read_write']],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  var t: ManifoldTotal;
  t.p = vec3f(0.0); t.torque_a = vec3f(0.0); t.torque_b = vec3f(0.0);
  for (var j = 0u; j < m.count; j++) {
    let pt = points[4u * k + j];
    let l = params.h * pt.lambda;
    let q = l.x * m.normal + l.y * m.tangent1 + l.z * m.tangent2;
    t.p += q;
    t.torque_a += cross(pt.arm_a, q);
    t.torque_b += cross(pt.arm_b, q);
  }
  totals[k] = t;`,
  },
  {
    // gather (jacobi-contact-solver.ts gather): Δv_i += m_i⁻¹ Σ ±P_m, Δω_i += I_i⁻¹ Σ ±τ_{m,side}
    // (− on side A, + on side B), after the joints' update_velocities wrote ΔV
    name: 'cj_gather',
    bindings: [
      ['body_count', T.u32s, 'read'], ['entries', T.u32s, 'read'], ['totals', 'array<ManifoldTotal>', 'read'], ['manifolds', T.manifolds, 'read'],
      ['contact_body', T.bodies, 'read'], ['velocity_delta', T.vec4s, 'read_write'],
    ],
    body: /* wgsl */ `
  let i = thread_index(gid, nwg);
  if (i >= params.body_count) { return; }
  let s0 = body_count[i]; let s1 = body_count[i + 1u];
  if (s0 == s1) { return; }
  var p = vec3f(0.0); var tq = vec3f(0.0);
  for (var x = s0; x < s1; x++) {
    let e = entries[x];
    let t = totals[e >> 1u];
    if ((e & 1u) == 0u) { p -= t.p; tq -= t.torque_a; } else { p += t.p; tq += t.torque_b; }
  }
  let e0 = entries[s0];
  let m0 = manifolds[e0 >> 1u];
  let inv = select(m0.inv_mass_b, m0.inv_mass_a, (e0 & 1u) == 0u);
  velocity_delta[2u * i] = vec4f(velocity_delta[2u * i].xyz + inv * p, 0.0);
  velocity_delta[2u * i + 1u] = vec4f(velocity_delta[2u * i + 1u].xyz + inertia_times(contact_body[i], tq), 0.0);`,
  },
  solveKernel('cj_solve', false),
  solveKernel('cj_solve_reverse', true),
  ...sequentialKernels(),
  restitutionKernel(),
  {
    // the sequential solve works on V in place: the warm start's gather (into ΔV) folded into V
    name: 'cj_fold',
    bindings: [['velocity', T.vec4s, 'read_write'], ['velocity_delta', T.vec4s, 'read_write']],
    body: /* wgsl */ `
  let i = thread_index(gid, nwg);
  if (i >= params.body_count) { return; }
  velocity[2u * i] = vec4f(velocity[2u * i].xyz + velocity_delta[2u * i].xyz, 0.0);
  velocity[2u * i + 1u] = vec4f(velocity[2u * i + 1u].xyz + velocity_delta[2u * i + 1u].xyz, 0.0);
  velocity_delta[2u * i] = vec4f(0.0);
  velocity_delta[2u * i + 1u] = vec4f(0.0);`,
  },
  {
    // integrate positions, after compute_positions (contact-solver.ts updatePose): Δx = x − x⁰,
    // Δθ = 2 vec(q q⁰⁻¹) with the scalar part made ≥ 0 (K1)
    name: 'cj_pose',
    bindings: [['pose', T.vec4s, 'read'], ['contact_body', T.bodies, 'read_write']],
    body: /* wgsl */ `
  let i = thread_index(gid, nwg);
  if (i >= params.body_count) { return; }
  var b = contact_body[i];
  b.dx = pose[2u * i].xyz - b.x0;
  let q = pose[2u * i + 1u];
  let u = -b.q0.xyz; let bw = b.q0.w;
  let rw = q.w * bw - dot(q.xyz, u);
  let sgn = select(2.0, -2.0, rw < 0.0);
  b.dtheta = sgn * (q.w * u + bw * q.xyz + cross(q.xyz, u));
  contact_body[i] = b;`,
  },
  {
    // store impulses: λ lives in the point records; they and the pair count are kept as last frame's
    // for the next frame's matching (the ping-pong of manifolds.ts's old and new points)
    name: 'cj_keep',
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read'], ['prev_manifolds', T.manifolds, 'read_write'],
      ['prev_points', T.points, 'read_write'], ['prev_count', T.u32s, 'read_write'],
    ],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  let n = pair_count(counters[params.pair_counter]);
  if (k == 0u) { prev_count[0] = n; }
  if (k >= n) { return; }
  let m = manifolds[k];
  prev_manifolds[k] = m;
  for (var j = 0u; j < m.count; j++) { prev_points[4u * k + j] = points[4u * k + j]; }`,
  },
];

/**
 * The sequential (Gauss-Seidel) solve on the GPU, colour by colour (gpu/colouring.ts: no two manifolds of
 * one colour share a moving body, so a colour's manifolds run in parallel and each writes its bodies'
 * velocities in place): contact-solver.ts solve, with the true masses, one manifold per thread. A sweep is
 * the colours 0 .. D−1 one dispatch each (cs_solve_colour), then the late colours D .. K−1 and the overflow
 * set K in one workgroup (cs_solve_tail: tailSweepWgsl; the overflow set by one thread in index order); a
 * reverse sweep the tail backwards (the overflow set, then colours K−1 .. D), then the colours D−1 .. 0,
 * each manifold's points from the last to the
 * first (contact-solver.ts solve's reverse). use_bias 0 is the relax pass (rigid, no bias beyond a
 * speculative s/h). The CPU twin solves its manifolds in the same colour order (ContactSolver.colourOrder).
 */
function sequentialKernels(): KernelDecl[] {
  const bindings: [string, string, Access][] = [
    ['offsets', T.u32s, 'read'], ['order', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read_write'],
    ['velocity', T.vec4s, 'read_write'], ['contact_body', T.bodies, 'read'],
  ];
  const helpers = `${discWgsl}${pointWgsl}
// contact-solver.ts solve for manifold k: its points in turn on V in place, the separation moved with the
// bodies (K1); use_bias: the rule's spring beyond the slop (solve), else rigid with no bias (relax)
fn solve_manifold(k: u32, use_bias: bool, reverse: bool) {
  let m = manifolds[k];
  if (m.count == 0u) { return; }
  let a = m.body_a; let b = m.body_b;
  let A = contact_body[a]; let B = contact_body[b];
  var v: Copies;
  v.va = velocity[2u * a].xyz; v.wa = velocity[2u * a + 1u].xyz;
  v.vb = velocity[2u * b].xyz; v.wb = velocity[2u * b + 1u].xyz;
  var unused: ManifoldTotal;
  let sLin = dot(m.normal, B.dx - A.dx);
  let ua = cross(m.normal, A.dtheta); let ub = cross(m.normal, B.dtheta);
  for (var q = 0u; q < m.count; q++) {
    solve_point(4u * k + select(q, m.count - 1u - q, reverse), m, A, B, 1.0, 1.0, sLin, ua, ub, use_bias, &v, &unused);
  }
  if (m.inv_mass_a > 0.0) { velocity[2u * a] = vec4f(v.va, 0.0); velocity[2u * a + 1u] = vec4f(v.wa, 0.0); }
  if (m.inv_mass_b > 0.0) { velocity[2u * b] = vec4f(v.vb, 0.0); velocity[2u * b + 1u] = vec4f(v.wb, 0.0); }
}
`;
  return [
    {
      name: 'cs_solve_colour',
      slot: 'colour',
      helpers,
      bindings,
      body: /* wgsl */ `
  let t = thread_index(gid, nwg);
  let first = offsets[slot.colour];
  if (t >= offsets[slot.colour + 1u] - first) { return; }
  solve_manifold(order[first + t], slot.use_bias == 1u, slot.reverse == 1u);`,
    },
    {
      name: 'cs_solve_tail',
      slot: 'colour',
      entry: tailEntry('cs_solve_tail'),
      helpers: `${helpers}${tailSweepVarsWgsl}`,
      bindings,
      body: tailSweepWgsl('solve_manifold(k, slot.use_bias == 1u, slot.reverse == 1u);', 'slot.reverse == 1u'),
    },
  ];
}

/**
 * restitution (contact-solver.ts restitution; rows/block-solver.ts applyRestitution derives it): collision
 * propagation (Guendelman, Bridson & Fedkiw 2003), on V in place, before the solve, in both modes. Per
 * manifold with e > 0, with V as it is at that moment (g_n = J_n (h g on the moving bodies), the forces
 * this step put in V, 0 when the slot's gravity_step is 0):
 *   v_n = J_n V,  v_n⁻ = v_n − g_n                                        (the approach before the forces)
 *   a point collides iff v_n⁻ < −threshold and s + h v_n < 0 (s: K1; the gap closes within the step)
 *   target  v_n → −e v_n⁻ + g_n (Newton's law, then the forces), by P ≥ 0 along J_nᵀ per point,
 *           projected Gauss-Seidel on the manifold's colliding points, the true A_nn (not split):
 *           P_i ← max(0, P_i + (target_i − J_n,i V) / A_nn,i), each change applied to V at once,
 *           to convergence (at most MANIFOLD_SWEEPS; f32: a change ≤ 1e-6 of the largest P stops it)
 * and the manifolds swept again until a sweep finds nothing colliding (at most COLLISION_SWEEPS). The
 * order is the sweeps' (contact-solver.ts solve's colour order, ContactSolver.colourOrder on the CPU):
 * colour by colour, a colour's manifolds in parallel (they share no moving body, so any order within a
 * colour is the serial one), then the overflow set by one thread. Why sequential and not a Jacobi sweep,
 * also in jacobi mode (jacobi-cpu's restitution is the same sequential pass with the true masses): a
 * simultaneous solve of a touching row (a Newton's cradle) converges to the LCP's impulses, which move
 * every ball (applyRestitution's header); propagation passes the strike down the row.
 * One workgroup runs the whole pass in one dispatch: the colours are separated by storage barriers, and
 * the sweeps' "anything collided" is a workgroup flag, read uniformly; so the pass costs one dispatch,
 * not COLLISION_SWEEPS × (K + 1), and a sweep that finds nothing ends it. The collision impulses are not
 * λ (no warm start). Writes only the velocities of the bodies of a colliding manifold.
 * The sweep (restitutionSweepWgsl) and the manifold's projected Gauss-Seidel (collisionBlockWgsl) are shared
 * with xpbd-gpu's xc_collide (xpbd/contacts.wgsl.ts), which differs in its velocities, arms and test.
 */
function restitutionKernel(): KernelDecl {
  return {
    name: 'cs_restitution',
    slot: 'restitution',
    entry: restitutionEntry('cs_restitution'),
    bindings: [
      ['offsets', T.u32s, 'read'], ['order', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read'],
      ['velocity', T.vec4s, 'read_write'], ['contact_body', T.bodies, 'read'],
    ],
    helpers: /* wgsl */ `
${restitutionSweepVarsWgsl}${collisionBlockWgsl}
// I⁻¹ c of the manifold's two bodies (collision_block's hooks): their ContactBody rows
var<private> cb_body_a: ContactBody;
var<private> cb_body_b: ContactBody;
fn turn_a(c: vec3f) -> vec3f { return inertia_times(cb_body_a, c); }
fn turn_b(c: vec3f) -> vec3f { return inertia_times(cb_body_b, c); }
// the collisions of manifold k (header); true when a point collided
fn collide_manifold(k: u32) -> bool {
  let m = manifolds[k];
  if (m.count == 0u || !(m.restitution > 0.0)) { return false; }
  let a = m.body_a; let b = m.body_b;
  let A = contact_body[a]; let B = contact_body[b];
  cb_body_a = A; cb_body_b = B;
  let n = m.normal;
  cb_va = velocity[2u * a].xyz; cb_wa = velocity[2u * a + 1u].xyz;
  cb_vb = velocity[2u * b].xyz; cb_wb = velocity[2u * b + 1u].xyz;
  // g_n = J_n (h g) over the moving bodies
  let ng = dot(n, slot.gravity_step);
  let gn = select(0.0, ng, m.inv_mass_b > 0.0) - select(0.0, ng, m.inv_mass_a > 0.0);
  // (K1) the separation moved with the bodies
  let sLin = dot(n, B.dx - A.dx);
  let ua = cross(n, A.dtheta); let ub = cross(n, B.dtheta);
  var count = 0u;
  for (var j = 0u; j < m.count; j++) {
    let p = points[4u * k + j];
    let vn = dot(n, cb_vb + cross(cb_wb, p.arm_b) - cb_va - cross(cb_wa, p.arm_a));
    let before = vn - gn;
    let s = p.s0 + sLin + dot(p.arm_b, ub) - dot(p.arm_a, ua);
    if (!(before < -params.restitution_threshold) || !(s + params.h * vn < 0.0)) { continue; }
    cb_ra[count] = p.arm_a; cb_rb[count] = p.arm_b;
    cb_goal[count] = -m.restitution * before + gn;
    cb_impulse[count] = 0.0;
    // A_nn = m_A⁻¹ + m_B⁻¹ + (r_A × n)ᵀ I_A⁻¹ (r_A × n) + (r_B × n)ᵀ I_B⁻¹ (r_B × n), the true masses
    // (contact-solver.ts pointMass with S = 1: in jacobi mode the record's mass is the split one)
    var K = m.inv_mass_a + m.inv_mass_b;
    if (m.inv_mass_a > 0.0) { let c = cross(p.arm_a, n); K += dot(c, inertia_times(A, c)); }
    if (m.inv_mass_b > 0.0) { let c = cross(p.arm_b, n); K += dot(c, inertia_times(B, c)); }
    cb_k[count] = K;
    count++;
  }
  if (count == 0u) { return false; }
  collision_block(n, count, m.inv_mass_a, m.inv_mass_b, ${MANIFOLD_SWEEPS}u);
  if (m.inv_mass_a > 0.0) { velocity[2u * a] = vec4f(cb_va, 0.0); velocity[2u * a + 1u] = vec4f(cb_wa, 0.0); }
  if (m.inv_mass_b > 0.0) { velocity[2u * b] = vec4f(cb_vb, 0.0); velocity[2u * b + 1u] = vec4f(cb_wb, 0.0); }
  return true;
}
`,
    body: restitutionSweepWgsl,
  };
}

/**
 * solve, one Jacobi sweep's first half (jacobi-contact-solver.ts solveJacobi): every manifold from
 * V = V* + ΔV at the sweep's start, its points in turn on its own split copies of its two bodies, with
 * the separation moved with the bodies (K1) and the bias of contact-solver.ts solve; writes its points'
 * λ and T_m, nothing of the bodies. `reverse`: the points from the last to the first (odd sweeps).
 */
function solveKernel(name: string, reverse: boolean): KernelDecl {
  return {
    name,
    helpers: `${discWgsl}${pointWgsl}`,
    bindings: [
      ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read_write'], ['velocity', T.vec4s, 'read'],
      ['velocity_delta', T.vec4s, 'read'], ['contact_body', T.bodies, 'read'], ['totals', 'array<ManifoldTotal>', 'read_write'],
    ],
    body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  var t: ManifoldTotal;
  t.p = vec3f(0.0); t.torque_a = vec3f(0.0); t.torque_b = vec3f(0.0);
  if (m.count == 0u) { totals[k] = t; return; }
  let a = m.body_a; let b = m.body_b;
  let A = contact_body[a]; let B = contact_body[b];
  // the copies start from the bodies' velocities at the sweep's start, V* + ΔV
  var v: Copies;
  v.va = velocity[2u * a].xyz + velocity_delta[2u * a].xyz;
  v.wa = velocity[2u * a + 1u].xyz + velocity_delta[2u * a + 1u].xyz;
  v.vb = velocity[2u * b].xyz + velocity_delta[2u * b].xyz;
  v.wb = velocity[2u * b + 1u].xyz + velocity_delta[2u * b + 1u].xyz;
  // (K1) s = s₀ + n·(Δx_B − Δx_A) + r_B·(n × Δθ_B) − r_A·(n × Δθ_A)
  let sLin = dot(m.normal, B.dx - A.dx);
  let ua = cross(m.normal, A.dtheta); let ub = cross(m.normal, B.dtheta);
  // each point on the split copies (inverse masses n_i m_i⁻¹, inertias n_i I_i⁻¹)
  for (var q = 0u; q < m.count; q++) {
    solve_point(4u * k + ${reverse ? 'm.count - 1u - q' : 'q'}, m, A, B, A.share, B.share, sLin, ua, ub, true, &v, &t);
  }
  totals[k] = t;`,
  };
}

/** Threads of cj_residual_sum's one workgroup (a power of two: its tree reduction halves it). */
export const RESIDUAL_SUM_THREADS = 256;

/**
 * Relative slack of the residual's test "λ_t on the disc's rim": |λ_t|² ≥ (μ λ_n)² (1 − RIM_SLACK). The CPU's is
 * 1e-12 (f64 rounding); here 64 ε (ε = 2⁻²⁴): friction_disc puts λ_t on the rim through about six f32 roundings
 * (the scaling by 1/F, r/|u|, the product, F back), so |λ_t| = r (1 ± 6ε) and its square r² (1 ± 12ε), with the
 * dot product and r² a few ε more; 64 ε holds that with room, and is still far below any friction a sweep leaves
 * inside the disc on purpose.
 */
export const RIM_SLACK = 64 * 2 ** -24;

/**
 * The residual diagnostics (ResidualCurve; gpu-contacts.ts recordResidual), a frame that records them only:
 *   cj_residual       one thread per manifold: contact-solver.ts solve with `residual` for each of its points at
 *                     V = V* + ΔV now (the jacobi mode's sweep start; the sequential mode's V, its ΔV folded: 0),
 *                     changing nothing. Per point, with the bias of the solve (use_bias) and the TRUE effective
 *                     masses A = J M⁻¹ Jᵀ (S = 1: in jacobi mode the record's are split; the CPU's residual pass
 *                     uses the true ones in both variants):
 *                       ρ_n = J_n V + bias + h γ λ_n,  γ = A_nn · impulseScale / massScale   (rows/softness.ts S1)
 *                       counted unless λ_n ≤ 0 and ρ_n > 0 (at the bound λ_n = 0, pushed outward: 0)
 *                       ρ_t = J_t V, counted unless the stick solution λ_t − h⁻¹ A_tt⁻¹ ρ_t leaves the static disc
 *                       and λ_t sits on the rim |λ_t| = μ λ_n with ρ_t·λ_t < 0 (Δλ ∝ −ρ pushes outward), or the
 *                       disc has radius 0 (issue 21 item 6: a row at its bound pushed outward counts 0)
 *                     and writes the manifold's (Σ ρ_n², Σ |ρ_t|²) (m²/s²) to residual[k].
 *   cj_residual_sum   one workgroup: residual[0 .. pairs) summed (strided partial sums, then a tree), appended to
 *                     residual_sums at its record counter (one record per call, so the record points of a
 *                     frame need no host-side index and no readback until the frame is done).
 * f32 sums of n non-negative terms: relative error ≤ (n / 256 + 8) ε.
 */
function residualKernels(): KernelDecl[] {
  return [
    {
      name: 'cj_residual',
      helpers: '',
      bindings: [
        ['counters', T.u32s, 'read'], ['manifolds', T.manifolds, 'read'], ['points', T.points, 'read'], ['velocity', T.vec4s, 'read'],
        ['velocity_delta', T.vec4s, 'read'], ['contact_body', T.bodies, 'read'], ['residual', 'array<vec2f>', 'read_write'],
      ],
      body: /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }
  let m = manifolds[k];
  var sums = vec2f(0.0);
  if (m.count == 0u) { residual[k] = sums; return; }
  let a = m.body_a; let b = m.body_b;
  let A = contact_body[a]; let B = contact_body[b];
  let va = velocity[2u * a].xyz + velocity_delta[2u * a].xyz;
  let wa = velocity[2u * a + 1u].xyz + velocity_delta[2u * a + 1u].xyz;
  let vb = velocity[2u * b].xyz + velocity_delta[2u * b].xyz;
  let wb = velocity[2u * b + 1u].xyz + velocity_delta[2u * b + 1u].xyz;
  let n = m.normal; let t1 = m.tangent1; let t2 = m.tangent2;
  // (K1) s = s₀ + n·(Δx_B − Δx_A) + r_B·(n × Δθ_B) − r_A·(n × Δθ_A)
  let sLin = dot(n, B.dx - A.dx);
  let ua = cross(n, A.dtheta); let ub = cross(n, B.dtheta);
  for (var j = 0u; j < m.count; j++) {
    let p = points[4u * k + j];
    let ra = p.arm_a; let rb = p.arm_b;
    let s = p.s0 + sLin + dot(rb, ub) - dot(ra, ua);
    // the solve's bias (use_bias): speculative s/h; beyond the slop the rule's spring, capped at the push-out speed
    var bias = 0.0; var ms = 1.0; var is = 0.0;
    if (s > 0.0) { bias = s * params.inv_h; }
    else if (s + m.slop < 0.0) {
      bias = max(m.bias_rate * (s + m.slop), -params.max_pushout);
      ms = m.mass_scale;
      is = m.impulse_scale;
    }
    let dv = vb + cross(wb, rb) - va - cross(wa, ra);
    let vn = dot(n, dv);
    let vt = vec2f(dot(t1, dv), dot(t2, dv));
    // the true A_nn and A_tt (contact-solver.ts pointMass with S = 1)
    var kNN = m.inv_mass_a + m.inv_mass_b; var k11 = kNN; var k12 = 0.0; var k22 = kNN;
    if (m.inv_mass_a > 0.0) {
      let cn = cross(ra, n); let c1 = cross(ra, t1); let c2 = cross(ra, t2);
      let g1 = inertia_times(A, c1); let g2 = inertia_times(A, c2);
      kNN += dot(cn, inertia_times(A, cn)); k11 += dot(c1, g1); k12 += dot(c1, g2); k22 += dot(c2, g2);
    }
    if (m.inv_mass_b > 0.0) {
      let cn = cross(rb, n); let c1 = cross(rb, t1); let c2 = cross(rb, t2);
      let g1 = inertia_times(B, c1); let g2 = inertia_times(B, c2);
      kNN += dot(cn, inertia_times(B, cn)); k11 += dot(c1, g1); k12 += dot(c1, g2); k22 += dot(c2, g2);
    }
    // normal: ρ = J V + bias + h γ λ (S1); at its bound λ_n = 0 with ρ > 0 (pushing it out) it counts 0
    let oldN = p.lambda.x;
    var r = vn + bias;
    if (is > 0.0) { r += (params.h * kNN * is * oldN) / ms; }
    if (!(oldN <= 0.0 && r > 0.0)) { sums.x += r * r; }
    // friction: the stick solution f = λ_t − h⁻¹ A_tt⁻¹ v_t; beyond the static disc, with λ_t on the rim and
    // v_t·λ_t < 0 (the step pushes it further out), or a disc of radius 0, complementarity holds: 0
    let old = p.lambda.yz;
    let det = k11 * k22 - k12 * k12;
    let f = old - params.inv_h * vec2f(k22 * vt.x - k12 * vt.y, k11 * vt.y - k12 * vt.x) / det;
    let radius = p.mu * oldN;
    let staticRadius = m.mu_static * oldN;
    let sliding = dot(f, f) > staticRadius * staticRadius;
    let rim = dot(old, old) >= radius * radius * (1.0 - ${RIM_SLACK}) && dot(old, vt) < 0.0;
    if (!(sliding && (radius <= 0.0 || rim))) { sums.y += dot(vt, vt); }
  }
  residual[k] = sums;`,
    },
    {
      name: 'cj_residual_sum',
      entry: `@compute @workgroup_size(${RESIDUAL_SUM_THREADS}) fn cj_residual_sum(@builtin(local_invocation_index) lid: u32)`,
      helpers: /* wgsl */ `
struct ResidualSums {
  records: u32, // record points written so far (the host sets 0 before the frame)
  pad: u32,
  sums: array<vec2f>, // per record point: (Σ ρ_n², Σ |ρ_t|²) over every contact point
};
var<workgroup> partial: array<vec2f, ${RESIDUAL_SUM_THREADS}>;
`,
      bindings: [['counters', T.u32s, 'read'], ['residual', 'array<vec2f>', 'read'], ['residual_sums', 'ResidualSums', 'read_write']],
      body: /* wgsl */ `
  let n = pair_count(counters[params.pair_counter]);
  var s = vec2f(0.0);
  for (var x = lid; x < n; x += ${RESIDUAL_SUM_THREADS}u) { s += residual[x]; }
  partial[lid] = s;
  workgroupBarrier();
  for (var w = ${RESIDUAL_SUM_THREADS / 2}u; w > 0u; w >>= 1u) {
    if (lid < w) { partial[lid] += partial[lid + w]; }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let r = residual_sums.records;
    residual_sums.sums[r] = partial[0];
    residual_sums.records = r + 1u;
  }`,
    },
  ];
}

/** The residual kernels (built only when a frame records residuals: gpu-contacts.ts). */
export const RESIDUAL_KERNELS: KernelDecl[] = residualKernels();

/** The WGSL module of kernel `name` (its header, helpers and bindings). */
export function contactKernelSource(name: string): string {
  const k = CONTACT_KERNELS.find((x) => x.name === name) ?? RESIDUAL_KERNELS.find((x) => x.name === name);
  if (!k) throw new Error(`gpu-contacts: no kernel ${name}`);
  return source(k);
}

/** Whether kernel `name` takes a ColourSlot uniform at binding 1. */
export function contactKernelSlotted(name: string): boolean {
  return CONTACT_KERNELS.find((x) => x.name === name)?.slot === 'colour';
}

/** The storage binding names of kernel `name`, in order (after the params uniform and its slot, if any). */
export function contactKernelBindings(name: string): ContactBufferName[] {
  const k = CONTACT_KERNELS.find((x) => x.name === name) ?? RESIDUAL_KERNELS.find((x) => x.name === name);
  if (!k) throw new Error(`gpu-contacts: no kernel ${name}`);
  return k.bindings.map(([n]) => n as ContactBufferName);
}
