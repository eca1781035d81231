/**
 * WGSL kernels of avbd-gpu (f32), one per stage of avbd-cpu (cpu.ts, the f64 reference: the equations,
 * the paper's numbers and the scale-free penalty schedule are derived in its header; each kernel cites
 * the equation it implements). Per step of h = dt / substeps:
 *
 *   warm_start        per joint: C(x⁻), J at the frame's start; C0 = the violating part of C(x⁻) (eq. 18);
 *                     the schedule's k_min, k_max, β (scale-free: in units of the row's body stiffness
 *                     s = m_eff/h², cpu.ts bodyStiffness); λ ← α γ λ, k ← clamp(γ k, k_min, k_max) (eq. 19)
 *   inertial_target   per body: x⁻, q⁻ kept; y = x + h v + h² g, q_y = exp(h ω) q (eq. 2); the adaptive
 *                     start x ← x + h v + h² g ŵ, q ← q_y (VBD)
 *   primal            per body of one colour (one indirect dispatch per colour, 1-D: ≤ 65,535 · 64 bodies a colour): gather over the body's joints
 *                     (CSR, no atomics) f = M/h² (x − y) + Σ Jᵀ F, F = clamp(k C* + λ, fmin, fmax) (eq. 13),
 *                     H = M/h² + Σ k J Jᵀ + G (eq. 17, §3.5's lumped geometric stiffness on the angular
 *                     diagonal), Δ = H⁻¹ f by a dense 6×6 LDLᵀ (math/ldlt6.ts), x ← x − Δ_x,
 *                     q ← exp(−Δ_θ) q (eq. 4)
 *   dual              per joint: λ ← clamp(k C* + λ, fmin, fmax) (eq. 11); k ← min(k + β|C*|, k_max)
 *                     while λ is inside its bounds (eq. 16)
 *   update_velocities per body: v = (x − x⁻)/h, ω = log(q q⁻⁻¹)/h (BDF1), the last v kept for ŵ
 * (post-stabilisation: primal once more at α = 0 after update_velocities.)
 *
 * A joint's rows are evaluated (C, J: rows/rows.wgsl.ts's evaluate functions, the twins of the
 * constraint types' evaluate) by the thread that reads them, at the pose it reads them: in primal by
 * the one body of the colour that the joint touches (bodies of a colour share no joint, so each joint is
 * evaluated by at most one thread of a dispatch, and its other body, of another colour or fixed, does
 * not move during it), in dual and warm_start by the joint's own thread.
 *
 * Buffers (f32 unless said; NB bodies incl. world anchors, NJ joints, NR rows):
 *   pose[2·NB]          [2i] = (x, 0), [2i+1] = q [x y z w] (the GPU solvers' layout)
 *   velocity[2·NB]      [2i] = (v, 0), [2i+1] = (ω, 0)
 *   body[NB]            AvbdBody: I_local, I_local⁻¹, m, m⁻¹ (0, 0 for a fixed body), load = M_isl m⁻¹
 *                       (the island's heaviest mass over the body's, cpu.ts islandMasses), ρ = √(tr I/2m)
 *   frame_state[5·NB]   [5i] (y, 0), [5i+1] q_y, [5i+2] (x⁻, 0), [5i+3] q⁻, [5i+4] (v of the last frame, 0)
 *   body_graph[…]       u32: [0 .. NB] the CSR offsets of each body's joint entries (entry = joint << 1 |
 *                       side, side 1 when the body is the joint's B), then the entries; then what the body
 *                       colouring reads and writes (gpu/body-colouring.ts: the adjacency, the active flags,
 *                       each colour's (start, count) at params.colour_info and its indirect arguments, the
 *                       dynamic bodies grouped by colour at params.order); primal's dispatch c is colour c's
 *   joint[7·NJ]         the joint records (rows.wgsl.ts legend), flags | kind << 8 | row count << 16
 *   row_jacobian[3·NR], row_error[NR]   C and J as the evaluate functions write them (rows.wgsl.ts)
 *   row_avbd[3·NR]      vec4f: [3r] (λ, k, C0, k_max of the frame), [3r+1] (fmin, fmax, stiffness,
 *                       β of the paper's form) — fixed at layout; stiffness F32_MAX on a hard row —,
 *                       [3r+2] (curvature of side A, of side B, β of the frame, 0)
 * Uniforms: params (Params below); pass_info (colour or start, count, α) of the dispatch.
 *
 * Invariants: warm_start and dual write only their joint's rows; primal writes only its body's pose
 * and the rows of its joints (which no other thread of the colour evaluates); inertial_target and
 * update_velocities only their body. Storage buffers per kernel ≤ 8.
 */
import { WORKGROUP_SIZE } from '../../gpu/frames.js';
import { rigidBodyWgsl } from '../../rigid/body.wgsl.js';
import { JOINT_STRIDE, rowEvaluateFunctionsWgsl } from '../../rows/rows.wgsl.js';
import { JointKind } from '../../model/joint-data.js';
import { THREAD_INDEX_WGSL } from '../../gpu/dispatch.js';
import { contactStructsWgsl, recWgsl, motionWgsl, type ContactKernelDecl } from './contacts.wgsl.js';

export type AvbdBufferName = 'pose' | 'velocity' | 'body' | 'frame_state' | 'body_graph' | 'joint' | 'row_jacobian' | 'row_error' | 'row_avbd';

const elementType: Record<AvbdBufferName, string> = {
  pose: 'array<vec4f>',
  velocity: 'array<vec4f>',
  body: 'array<AvbdBody>',
  frame_state: 'array<vec4f>',
  body_graph: 'array<u32>',
  joint: 'array<vec4f>',
  row_jacobian: 'array<vec4f>',
  row_error: 'array<vec2f>',
  row_avbd: 'array<vec4f>',
};

/** Bytes of the Params uniform (AvbdGpuSolver.writeParams). */
export const AVBD_PARAMS_BYTES = 128;
/** Bits of a joint record's flags word: the JointKind at 8.., the joint's row count at 16.. */
export const AVBD_KIND_SHIFT = 8;
export const AVBD_ROWS_SHIFT = 16;

const header = /* wgsl */ `
struct Params {
  gravity: vec3f,
  h: f32,                 // the step, dt / substeps
  inv_h2: f32,
  lambda_decay: f32,      // α γ (1 with post-stabilisation)
  gamma: f32,             // γ (eq. 19)
  relative: u32,          // 1: the scale-free schedule (k_min, k_max, β in units of s = m_eff/h²)
  k_min: f32,             // k̂_min (relative) or k_min in N/m
  k_max: f32,             // k̂_max or k_max
  beta_relative: f32,     // β̂
  body_count: u32,
  joint_count: u32,
  row_width: u32,         // threads per dispatch row (2-D dispatch for big scenes)
  colour_info: u32,       // body_graph word of the colours' (start, count) (gpu/body-colouring.ts)
  order: u32,             // body_graph word of the colour-grouped bodies
  // contacts (contacts.wgsl.ts; 0 on a joint scene)
  capacity: u32,          // pair slots of the contact pipeline
  pair_counter: u32,      // index of the pair count in the broad phase's counters
  contact_base: u32,      // row_avbd vec4f of pair slot 0's contact record
  contact_first: u32,     // body_graph word of the body → manifold CSR offsets [n + 1] (the entries follow)
  adjacency: u32,         // body_graph word of the colouring's adjacency offsets [n + 1] (this frame's)
  adjacency_lists: u32,   // body_graph word where its lists start
  joint_adjacency: u32,   // body_graph word of the joints' neighbour offsets [n + 1] (absolute, fixed)
  island: u32,            // body_graph word of the union–find's parents [n], then the roots' masses [n]
  beta_linear: f32,       // β of a contact row in the paper's form (avbdRelative 0)
};
struct PassInfo {
  start: u32,             // primal: the colour c it sweeps
  count: u32,             // dual: threads
  alpha: f32,             // eq. 18's α of this pass (0 in post-stabilisation)
  _pad: u32,
};
struct AvbdBody {
  inertia: mat3x3f,       // I_local
  inv_inertia: mat3x3f,   // I_local⁻¹
  mass: f32,              // m (0 for a fixed body)
  inv_mass: f32,          // m⁻¹ (0 for a fixed body)
  load: f32,              // M_isl m⁻¹: the heaviest mass of the body's island over its own
  gyration: f32,          // ρ = √(tr I_local / 2m)
};
const F32_MAX = 3.4028234663852886e38;
`;

/** rotation.ts in WGSL: the exact exponential map and its inverse. */
const rotationWgsl = /* wgsl */ `
// q ← exp(θ) ⊗ q: the world-frame turn by the rotation vector θ (rotation.ts turn); sin(|θ|/2)/|θ| by its
// series below 1e-3 rad (f32: the series' error |θ|⁴/3840 is far below ε there)
fn turn(q: vec4f, t: vec3f) -> vec4f {
  let angle = length(t);
  var k = 0.5 - angle * angle / 48.0;
  if (angle >= 1e-3) { k = sin(0.5 * angle) / angle; }
  let a = k * t;
  let c = cos(0.5 * angle);
  // (a, c) ⊗ (v, w) = (c v + w a + a × v, c w − a · v)
  return normalize(vec4f(c * q.xyz + q.w * a + cross(a, q.xyz), c * q.w - dot(a, q.xyz)));
}
// log(q_a ⊗ q_b⁻¹): the rotation vector (the short way) taking q_b to q_a (rotation.ts rotationBetween)
fn rotation_between(qa: vec4f, qb: vec4f) -> vec3f {
  let b = vec3f(-qb.xyz);
  var v = qa.w * b + qb.w * qa.xyz + cross(qa.xyz, b);
  var sw = qa.w * qb.w - dot(qa.xyz, b);
  if (sw < 0.0) { v = -v; sw = -sw; }
  let sn = length(v);
  // angle / sin(angle/2) = 2 atan2(|v|, w) / |v|  (→ 2/w for a tiny turn)
  var f = 2.0 / sw;
  if (sn > 1e-20) { f = 2.0 * atan2(sn, sw) / sn; }
  return f * v;
}
`;

/** The joint record's fields, the evaluate of its kind (rows.wgsl.ts), and the row pieces per side. */
const jointWgsl = /* wgsl */ `
struct AvbdJoint { first: u32, count: u32, kind: u32, a: u32, b: u32, };
fn avbd_joint(j: u32) -> AvbdJoint {
  let o = ${JOINT_STRIDE}u * j;
  let flags = bitcast<u32>(joint[o + 3u].w);
  return AvbdJoint(bitcast<u32>(joint[o].w), flags >> ${AVBD_ROWS_SHIFT}u, (flags >> ${AVBD_KIND_SHIFT}u) & 255u,
                   bitcast<u32>(joint[o + 1u].w), bitcast<u32>(joint[o + 2u].w));
}
// C and J of joint j's rows at the pose now (the constraint type's evaluate, rows.wgsl.ts)
fn evaluate_joint(j: u32, kind: u32) {
  if (kind == ${JointKind.point}u) { write_point_rows(joint_pose(j)); } else { evaluate_rows(j, kind); }
}
// side 0 (A): entries 0..5 of row r; side 1 (B): entries 6..11 (as rows.wgsl.ts rowGather)
fn row_lin(r: u32, side: u32) -> vec3f {
  let p = row_jacobian[3u * r + side];
  let q = row_jacobian[3u * r + side + 1u];
  return select(p.xyz, vec3f(p.zw, q.x), side == 1u);
}
fn row_ang(r: u32, side: u32) -> vec3f {
  let p = row_jacobian[3u * r + side];
  let q = row_jacobian[3u * r + side + 1u];
  return select(vec3f(p.w, q.xy), q.yzw, side == 1u);
}
`;

/** the name of H's entry (i, j), j ≤ i: a scalar variable of the primal kernel */
const hv = (i: number, j: number) => `h${i}${j}`;

/**
 * math/ldlt6.ts in WGSL, unrolled into straight-line code over the 21 scalars h{ij} (j ≤ i) of H's lower
 * triangle and f0 … f5 (no private array: SwiftShader, like a GPU, keeps scalars in registers but an
 * indexed array in memory), the same operations in the same order as ldlt6.ts:
 *   D_j = H_jj − Σ_{k<j} L_jk² D_k,   L_ij = (H_ij − Σ_{k<j} L_ik L_jk D_k) / D_j   (i > j)
 *   L z = f, D w = z, Lᵀ Δ = w; a pivot D_j ≤ 0 zeroes that direction's step (ldlt6.ts)
 * H is overwritten with L and D, f with Δ.
 */
function ldlt6Unrolled(): string {
  const out: string[] = [];
  for (let j = 0; j < 6; j++) {
    let d = hv(j, j);
    for (let k = 0; k < j; k++) d += ` - ${hv(j, k)} * ${hv(j, k)} * ${hv(k, k)}`;
    if (j > 0) out.push(`  ${hv(j, j)} = ${d};`);
    if (j < 5) out.push(`  let inv${j} = select(0.0, 1.0 / ${hv(j, j)}, ${hv(j, j)} > 0.0);`);
    for (let i = j + 1; i < 6; i++) {
      let e = hv(i, j);
      for (let k = 0; k < j; k++) e += ` - ${hv(i, k)} * ${hv(j, k)} * ${hv(k, k)}`;
      out.push(`  ${hv(i, j)} = ${j > 0 ? `(${e})` : e} * inv${j};`);
    }
  }
  for (let i = 1; i < 6; i++) {
    let e = `f${i}`;
    for (let k = 0; k < i; k++) e += ` - ${hv(i, k)} * f${k}`;
    out.push(`  f${i} = ${e};`);
  }
  for (let i = 0; i < 6; i++) out.push(`  f${i} = select(0.0, f${i} / ${hv(i, i)}, ${hv(i, i)} > 0.0);`);
  for (let i = 4; i >= 0; i--) {
    let e = `f${i}`;
    for (let k = i + 1; k < 6; k++) e += ` - ${hv(k, i)} * f${k}`;
    out.push(`  f${i} = ${e};`);
  }
  return out.join('\n');
}

/** WGSL: H += kk J Jᵀ (its lower triangle) and f += J F for one row, J = (j0 … j5) (eqs. 13, 17). */
function stampUnrolled(h = 'h', f = 'f'): string {
  const out: string[] = [];
  for (let a = 0; a < 6; a++) {
    out.push(`      ${f}${a} += j${a} * F;`);
    out.push(`      let kj${a} = kk * j${a};`);
    for (let c = 0; c <= a; c++) out.push(`      ${h}${a}${c} += kj${a} * j${c};`);
  }
  return out.join('\n');
}

/** every (i, j ≤ i) of H's lower triangle, as `h{ij}` names with another prefix */
const lowerTriangle = Array.from({ length: 6 }, (_, a) => Array.from({ length: a + 1 }, (_, c) => [a, c] as const)).flat();

/**
 * WGSL: where the first solve's step Δ (f0 … f5) lands a slack row active (cpu.ts primal: C* − J Δ with
 * k (C* − J Δ) inside the bounds), that row's active piece onto the copies a{ij}, af{a} of H and f from
 * before the solve (f += Jᵀ k C*, H += k JᵀJ), counted in `added`. Cs is the row's C* at x, kr its k.
 */
function slackCheck(jl: string, ja: string, Cs: string, kr: string, fmin: string, fmax: string): string {
  return `      {
      let jl_ = ${jl}; let ja_ = ${ja};
      let after = ${kr} * (${Cs} - dot(jl_, vec3f(f0, f1, f2)) - dot(ja_, vec3f(f3, f4, f5)));
      if (after > ${fmin} && after < ${fmax}) {
        added++;
        let F = ${kr} * ${Cs}; let kk = ${kr};
        let j0 = jl_.x; let j1 = jl_.y; let j2 = jl_.z; let j3 = ja_.x; let j4 = ja_.y; let j5 = ja_.z;
${stampUnrolled('a', 'af')}
      }
      }`;
}

/** WGSL: one row's stamp (stampUnrolled) for J = (jl, ja) on this side, force F and stiffness kk. */
function stampBlock(jl: string, ja: string, F: string, kk: string): string {
  return `      {
      let jl_ = ${jl}; let ja_ = ${ja}; let F = ${F}; let kk = ${kk};
      let j0 = jl_.x; let j1 = jl_.y; let j2 = jl_.z; let j3 = ja_.x; let j4 = ja_.y; let j5 = ja_.z;
${stampUnrolled()}
      }`;
}

/**
 * WGSL: the primal's contact part (cpu.ts primal over contacts.ts's rows): body i's manifolds from this
 * frame's CSR (params.contact_first), each point's rows at the bodies' motion (its own Mi, the other's
 * read), J on i's side s = ±1: (s u, s (r × u)).
 *   normal:   F_n = min(k_n C*_n + λ_n, 0) (fmax 0); k_n JᵀJ while it carries a force (F = free or λ ≠ 0)
 *   friction: (F₁, F₂) = k C* + λ, scaled into the disc μ |F_n| (F_n as just applied); a sliding pair
 *             (disc 2) stamps its secant stiffness scale · k, a stuck one k (cpu.ts primal's reasons)
 * No geometric stiffness (a contact row's curvature is 0: linearised).
 */
function primalContactsWgsl(): string {
  return /* wgsl */ `
  let Mi = Motion(x - frame_state[5u * i + 2u].xyz, rotation_between(q, frame_state[5u * i + 3u]));
  for (var e = body_graph[params.contact_first + i]; e < body_graph[params.contact_first + i + 1u]; e++) {
    let entry = body_graph[e];
    let kc = entry >> 1u;
    let side = entry & 1u;
    let o = rec(kc);
    let n = row_avbd[o].xyz; let t1 = row_avbd[o + 1u].xyz; let t2 = cross(n, t1);
    let count = bitcast<u32>(row_avbd[o + 2u].z);
    var MA = Mi; var MB = Mi;
    if (side == 0u) { MB = motion(bitcast<u32>(row_avbd[o + 1u].w)); } else { MA = motion(bitcast<u32>(row_avbd[o].w)); }
    let sgn = select(-1.0, 1.0, side == 1u);
    for (var jp = 0u; jp < count; jp++) {
      let qp = pt(kc, jp);
      let ra = row_avbd[qp].xyz; let disc = row_avbd[qp].w;
      let rb = row_avbd[qp + 1u].xyz; let mu = row_avbd[qp + 1u].w;
      let base = row_avbd[qp + 2u]; let lam = row_avbd[qp + 3u].xyz; let kp = row_avbd[qp + 4u].xyz; let c0 = row_avbd[qp + 5u].xyz;
      let r_side = select(ra, rb, side == 1u);
      let free_n = kp.x * (contact_c(base.x, n, ra, rb, MA, MB) - alpha * c0.x) + lam.x;
      let Fn = min(free_n, 0.0);
${stampBlock('sgn * n', 'sgn * cross(r_side, n)', 'Fn', 'select(0.0, kp.x, Fn == free_n || lam.x != 0.0)')}
      if (!(Fn == free_n || lam.x != 0.0) && kp.x > 0.0) { n_slack++; }
      let F1 = kp.y * (contact_c(base.y, t1, ra, rb, MA, MB) - alpha * c0.y) + lam.y;
      let F2 = kp.z * (contact_c(base.z, t2, ra, rb, MA, MB) - alpha * c0.z) + lam.z;
      let len = sqrt(F1 * F1 + F2 * F2);
      let cap = mu * abs(Fn);
      var scale = 1.0;
      if (len > cap) { scale = select(0.0, cap / len, len > 0.0); }
      let slip = select(1.0, scale, disc == 2.0);
${stampBlock('sgn * t1', 'sgn * cross(r_side, t1)', 'F1 * scale', 'kp.y * slip')}
${stampBlock('sgn * t2', 'sgn * cross(r_side, t2)', 'F2 * scale', 'kp.z * slip')}
    }
  }`;
}

/** WGSL: the contacts' normal rows again after the first solve, each slack one checked (slackCheck). */
function primalContactsSlackWgsl(): string {
  return /* wgsl */ `
  for (var e = body_graph[params.contact_first + i]; e < body_graph[params.contact_first + i + 1u]; e++) {
    let entry = body_graph[e];
    let kc = entry >> 1u;
    let side = entry & 1u;
    let o = rec(kc);
    let n = row_avbd[o].xyz;
    let count = bitcast<u32>(row_avbd[o + 2u].z);
    var MA = Mi; var MB = Mi;
    if (side == 0u) { MB = motion(bitcast<u32>(row_avbd[o + 1u].w)); } else { MA = motion(bitcast<u32>(row_avbd[o].w)); }
    let sgn = select(-1.0, 1.0, side == 1u);
    for (var jp = 0u; jp < count; jp++) {
      let qp = pt(kc, jp);
      let ra = row_avbd[qp].xyz; let rb = row_avbd[qp + 1u].xyz;
      let base = row_avbd[qp + 2u]; let lam = row_avbd[qp + 3u].xyz; let kp = row_avbd[qp + 4u].xyz; let c0 = row_avbd[qp + 5u].xyz;
      let r_side = select(ra, rb, side == 1u);
      let cs_n = contact_c(base.x, n, ra, rb, MA, MB) - alpha * c0.x;
      let free_n = kp.x * cs_n + lam.x;
      if (!(min(free_n, 0.0) == free_n || lam.x != 0.0) && kp.x > 0.0) {
${slackCheck('sgn * n', 'sgn * cross(r_side, n)', 'cs_n', 'kp.x', '-F32_MAX', '0.0')}
      }
    }
  }`;
}

interface AvbdKernel {
  name: string;
  /** one thread per body, per joint, or per listed body of a colour (pass_info) */
  over: 'body' | 'joint' | 'colour';
  bindings: { name: AvbdBufferName; access: 'read' | 'read_write' }[];
  helpers: string;
  body: string;
}

const evaluateHelpers = `${rigidBodyWgsl}${rowEvaluateFunctionsWgsl()}${jointWgsl}`;

/** The warm start of the duals (eq. 19) and the frame's schedule (cpu.ts step1's first loop, bodyStiffness). */
const warmStart: AvbdKernel = {
  name: 'warm_start',
  over: 'joint',
  bindings: [
    { name: 'pose', access: 'read' },
    { name: 'body', access: 'read' },
    { name: 'joint', access: 'read' },
    { name: 'row_jacobian', access: 'read_write' },
    { name: 'row_error', access: 'read_write' },
    { name: 'row_avbd', access: 'read_write' },
  ],
  helpers: /* wgsl */ `${evaluateHelpers}
// the part of C(x⁻) that violates the row (cpu.ts violation): all of an equality's; a one-sided row's overlap
fn violation(C: f32, fmin: f32, fmax: f32) -> f32 {
  if (fmax == 0.0 && fmin < 0.0) { return min(C, 0.0); }
  if (fmin == 0.0 && fmax > 0.0) { return max(C, 0.0); }
  if (fmin == 0.0 && fmax == 0.0) { return 0.0; }
  return C;
}
// row r's body stiffness s = m_eff / h² of its heavier side, m_side = load / (J_v² m⁻¹ + J_ωᵀ I⁻¹ J_ω) m
// (cpu.ts bodyStiffness, with the island's heaviest mass), and that side's ρ (1 on an angular row)
fn body_stiffness(r: u32, jt: AvbdJoint) -> vec2f {
  var best = 0.0;
  var len = 1.0;
  var angular = true;
  for (var side = 0u; side < 2u; side++) {
    let i = select(jt.a, jt.b, side == 1u);
    let bd = body[i];
    if (bd.inv_mass == 0.0) { continue; }
    let jv = row_lin(r, side);
    let jw = row_ang(r, side);
    let lin = dot(jv, jv);
    if (lin > 0.0) { angular = false; }
    let W = world_inverse_inertia(pose[2u * i + 1u], bd.inv_inertia);
    let w_side = lin * bd.inv_mass + dot(jw, W * jw);
    if (!(w_side > 0.0)) { continue; }
    let m = bd.load / w_side;
    if (m > best) { best = m; len = bd.gyration; }
  }
  if (angular || !(len > 0.0)) { len = 1.0; }
  return vec2f(best * params.inv_h2, len);
}`,
  body: /* wgsl */ `
  let jt = avbd_joint(j);
  evaluate_joint(j, jt.kind);
  for (var r = jt.first; r < jt.first + jt.count; r++) {
    let st = row_avbd[3u * r];
    let pr = row_avbd[3u * r + 1u];
    let cv = row_avbd[3u * r + 2u];
    let c0 = violation(row_error[r].x, pr.x, pr.y);  // eq. 18's C(x⁻)
    var kmin = params.k_min;
    var kmax = params.k_max;
    var beta = pr.w;
    if (params.relative == 1u) {
      // the scale-free schedule: k ∈ [k̂_min s, k̂_max s], β = β̂ s / ρ (cpu.ts header)
      let s = body_stiffness(r, jt);
      kmin *= s.x;
      kmax *= s.x;
      beta = params.beta_relative * s.x / s.y;
    }
    let kmax_r = min(kmax, pr.z);
    // λ ← α γ λ, k ← clamp(γ k, k_min, k_max)   (eq. 19)
    let k = min(max(st.y * params.gamma, kmin), kmax_r);
    row_avbd[3u * r] = vec4f(st.x * params.lambda_decay, k, c0, kmax_r);
    row_avbd[3u * r + 2u] = vec4f(cv.xy, beta, 0.0);
  }`,
};

const inertialTarget: AvbdKernel = {
  name: 'inertial_target',
  over: 'body',
  bindings: [
    { name: 'pose', access: 'read_write' },
    { name: 'velocity', access: 'read' },
    { name: 'body', access: 'read' },
    { name: 'frame_state', access: 'read_write' },
  ],
  helpers: rotationWgsl,
  body: /* wgsl */ `
  let x = pose[2u * ib].xyz;
  let q = pose[2u * ib + 1u];
  frame_state[5u * ib + 2u] = vec4f(x, 0.0);
  frame_state[5u * ib + 3u] = q;
  if (body[ib].inv_mass == 0.0) { return; }
  let h = params.h;
  let g = params.gravity;
  let v = velocity[2u * ib].xyz;
  // y = x + h v + h² g, q_y = exp(h ω) q   (eq. 2)
  let qy = turn(q, h * velocity[2u * ib + 1u].xyz);
  frame_state[5u * ib] = vec4f(x + h * v + h * h * g, 0.0);
  frame_state[5u * ib + 1u] = qy;
  // the adaptive start (VBD): ŵ = clamp(a·ĝ / |g|, 0, 1), a the last frame's acceleration
  let gl = length(g);
  var weight = 0.0;
  if (gl > 0.0) {
    let along = dot(v - frame_state[5u * ib + 4u].xyz, g) / (h * gl);
    weight = clamp(along / gl, 0.0, 1.0);
  }
  pose[2u * ib] = vec4f(x + h * v + h * h * g * weight, 0.0);
  pose[2u * ib + 1u] = qy;`,
};

function primalKernel(contacts: boolean): AvbdKernel {
  return {
  name: 'primal',
  over: 'colour',
  bindings: [
    { name: 'pose', access: 'read_write' },
    { name: 'body', access: 'read' },
    { name: 'frame_state', access: 'read' },
    { name: 'body_graph', access: 'read' },
    { name: 'joint', access: 'read' },
    { name: 'row_jacobian', access: 'read_write' },
    { name: 'row_error', access: 'read_write' },
    { name: 'row_avbd', access: 'read' },
  ],
  helpers: `${evaluateHelpers}${rotationWgsl}${contacts ? contactStructsWgsl + recWgsl + motionWgsl : ''}`,
  body: /* wgsl */ `
  let i = body_graph[k];
  let bd = body[i];
  let x = pose[2u * i].xyz;
  let q = pose[2u * i + 1u];
  let ih2 = params.inv_h2;
  let alpha = pass_info.alpha;
  // M/h² and M/h² (x − y) (eqs. 5, 6): the world inertia R I Rᵀ, the rotation vector of q q_y⁻¹
  let R = quat_to_mat3(q);
  let Iw = R * bd.inertia * transpose(R);
  let m = bd.mass * ih2;
  // H's lower triangle and f as scalars (ldlt6Unrolled)
${Array.from({ length: 6 }, (_, a) => Array.from({ length: a + 1 }, (_, c) => `  var ${hv(a, c)} = 0.0;`).join('\n')).join('\n')}
  h00 = m; h11 = m; h22 = m;
  h33 = Iw[0][0] * ih2; h43 = Iw[0][1] * ih2; h44 = Iw[1][1] * ih2;
  h53 = Iw[0][2] * ih2; h54 = Iw[1][2] * ih2; h55 = Iw[2][2] * ih2;
  let dx = m * (x - frame_state[5u * i].xyz);
  let da = (Iw * rotation_between(q, frame_state[5u * i + 1u])) * ih2;
  var f0 = dx.x; var f1 = dx.y; var f2 = dx.z; var f3 = da.x; var f4 = da.y; var f5 = da.z;
  var g_ang = 0.0;
  var n_slack = 0u;
  for (var e = body_graph[i]; e < body_graph[i + 1u]; e++) {
    let entry = body_graph[e];
    let j = entry >> 1u;
    let side = entry & 1u;
    let jt = avbd_joint(j);
    evaluate_joint(j, jt.kind);
    for (var r = jt.first; r < jt.first + jt.count; r++) {
      let st = row_avbd[3u * r];
      let pr = row_avbd[3u * r + 1u];
      let hard = pr.z >= F32_MAX;
      // F = clamp(k C* + λ, fmin, fmax), C* = C − α C(x⁻)   (eqs. 13, 18; a soft row has no λ)
      let free = st.y * (row_error[r].x - alpha * st.z) + select(0.0, st.x, hard);
      let F = min(max(free, pr.x), pr.y);
      // k JᵀJ stays while F is clamped, except on a row that carries no force at all (cpu.ts primal)
      let kk = select(0.0, st.y, F == free || st.x != 0.0);
      if (!(F == free || st.x != 0.0) && st.y > 0.0) { n_slack++; }
      let jl = row_lin(r, side);
      let ja = row_ang(r, side);
      let j0 = jl.x; let j1 = jl.y; let j2 = jl.z; let j3 = ja.x; let j4 = ja.y; let j5 = ja.z;
      // f += Jᵀ F (eq. 13), H += k J Jᵀ, its lower triangle (eq. 17)
${stampUnrolled()}
      g_ang += abs(F) * select(row_avbd[3u * r + 2u].x, row_avbd[3u * r + 2u].y, side == 1u);
    }
  }
${contacts ? primalContactsWgsl() : ''}
  // the lumped geometric stiffness (§3.5) on the angular diagonal
  h33 += g_ang; h44 += g_ang; h55 += g_ang;
  // H and f as they are before the solve, for the step taken again (cpu.ts primal)
${lowerTriangle.map(([a, c]) => `  var a${a}${c} = h${a}${c};`).join('\n')}
${[0, 1, 2, 3, 4, 5].map((a) => `  var af${a} = f${a};`).join('\n')}
  // Δ = H⁻¹ f by the dense LDLᵀ (math/ldlt6.ts)
  {
${ldlt6Unrolled()}
  }
  // a slack row (clamped, λ = 0, k left out of H) that the step lands active: the step taken again with
  // that row's active piece, Newton on the piece it lands in (cpu.ts primal's reasons, eqs. 13, 17)
  if (n_slack > 0u) {
    var added = 0u;
    for (var e = body_graph[i]; e < body_graph[i + 1u]; e++) {
      let entry = body_graph[e];
      let j = entry >> 1u;
      let side = entry & 1u;
      let jt = avbd_joint(j);
      evaluate_joint(j, jt.kind);
      for (var r = jt.first; r < jt.first + jt.count; r++) {
        let st = row_avbd[3u * r];
        let pr = row_avbd[3u * r + 1u];
        let hard = pr.z >= F32_MAX;
        let cs = row_error[r].x - alpha * st.z;
        let free = st.y * cs + select(0.0, st.x, hard);
        let F = min(max(free, pr.x), pr.y);
        if (!(F == free || st.x != 0.0) && st.y > 0.0) {
${slackCheck('row_lin(r, side)', 'row_ang(r, side)', 'cs', 'st.y', 'pr.x', 'pr.y')}
        }
      }
    }
${contacts ? primalContactsSlackWgsl() : ''}
    if (added > 0u) {
${lowerTriangle.map(([a, c]) => `      h${a}${c} = a${a}${c};`).join('\n')}
${[0, 1, 2, 3, 4, 5].map((a) => `      f${a} = af${a};`).join('\n')}
${ldlt6Unrolled()}
    }
  }
  // x ← x − Δ (eq. 4), the turn by the exact exponential map
  pose[2u * i] = vec4f(x - vec3f(f0, f1, f2), 0.0);
  pose[2u * i + 1u] = turn(q, -vec3f(f3, f4, f5));`,
};
}

const dual: AvbdKernel = {
  name: 'dual',
  over: 'joint',
  bindings: [
    { name: 'pose', access: 'read' },
    { name: 'joint', access: 'read' },
    { name: 'row_jacobian', access: 'read_write' },
    { name: 'row_error', access: 'read_write' },
    { name: 'row_avbd', access: 'read_write' },
  ],
  helpers: evaluateHelpers,
  body: /* wgsl */ `
  let jt = avbd_joint(j);
  evaluate_joint(j, jt.kind);
  let alpha = params_alpha();
  for (var r = jt.first; r < jt.first + jt.count; r++) {
    var st = row_avbd[3u * r];
    let pr = row_avbd[3u * r + 1u];
    let cs = row_error[r].x - alpha * st.z;
    let hard = pr.z >= F32_MAX;
    // λ ← clamp(k C* + λ, fmin, fmax)   (eq. 11)
    let l = min(max(st.y * cs + select(0.0, st.x, hard), pr.x), pr.y);
    st.x = l;
    // k ← min(k + β |C*|, k_max) while λ is inside its bounds   (eq. 16)
    if (l > pr.x && l < pr.y) { st.y = min(st.y + row_avbd[3u * r + 2u].z * abs(cs), st.w); }
    row_avbd[3u * r] = st;
  }`,
};

const updateVelocities: AvbdKernel = {
  name: 'update_velocities',
  over: 'body',
  bindings: [
    { name: 'pose', access: 'read' },
    { name: 'velocity', access: 'read_write' },
    { name: 'body', access: 'read' },
    { name: 'frame_state', access: 'read_write' },
  ],
  helpers: rotationWgsl,
  body: /* wgsl */ `
  frame_state[5u * ib + 4u] = velocity[2u * ib];
  if (body[ib].inv_mass == 0.0) { return; }
  // v = (x − x⁻)/h, ω = log(q q⁻⁻¹)/h   (BDF1)
  let inv_h = 1.0 / params.h;
  velocity[2u * ib] = vec4f((pose[2u * ib].xyz - frame_state[5u * ib + 2u].xyz) * inv_h, 0.0);
  velocity[2u * ib + 1u] = vec4f(rotation_between(pose[2u * ib + 1u], frame_state[5u * ib + 3u]) * inv_h, 0.0);`,
};

export type AvbdKernelSpec = AvbdKernel;

/** The kernels of a scene: with contacts, primal gathers the contact points too (primalContactsWgsl). */
export function avbdKernelSpecs(contacts = false): AvbdKernelSpec[] {
  return [warmStart, inertialTarget, primalKernel(contacts), dual, updateVelocities];
}

/** Full WGSL of one kernel: its bindings, the shared header, its helpers and its entry point. */
export function avbdKernelSource(k: AvbdKernelSpec): string {
  const decls = [`@group(0) @binding(0) var<uniform> params: Params;`];
  const usesPass = k.over === 'colour' || k.name === 'dual';
  if (usesPass) decls.push(`@group(0) @binding(1) var<uniform> pass_info: PassInfo;`);
  const first = usesPass ? 2 : 1;
  k.bindings.forEach((b, i) => decls.push(`@group(0) @binding(${i + first}) var<storage, ${b.access}> ${b.name}: ${elementType[b.name]};`));
  const entry =
    k.over === 'body'
      ? `  let ib = gid.y * params.row_width + gid.x;\n  if (ib >= params.body_count) { return; }`
      : k.over === 'joint'
        ? `  let j = gid.y * params.row_width + gid.x;\n  if (j >= params.joint_count) { return; }`
        : // a colour's bodies: their count and start in the order as the colouring wrote them (indirect dispatch: 1-D)
          `  let index = gid.x;\n  let c = pass_info.start;\n  if (index >= body_graph[params.colour_info + 2u * c + 1u]) { return; }\n  let k = params.order + body_graph[params.colour_info + 2u * c] + index;`;
  const alphaFn = k.name === 'dual' ? 'fn params_alpha() -> f32 { return pass_info.alpha; }\n' : '';
  return `${decls.join('\n')}
${header}
${k.helpers}
${alphaFn}
@compute @workgroup_size(${WORKGROUP_SIZE})
fn ${k.name}(@builtin(global_invocation_id) gid: vec3u) {
${entry}
${k.body}
}
`;
}

/** Full WGSL of one contact kernel (contacts.wgsl.ts): its bindings, the shared header, the records' helpers, its entry point. */
export function avbdContactKernelSource(k: ContactKernelDecl): string {
  const decls = [`@group(0) @binding(0) var<uniform> params: Params;`];
  if (k.pass) decls.push(`@group(0) @binding(1) var<uniform> pass_info: PassInfo;`);
  const first = k.pass ? 2 : 1;
  k.bindings.forEach((b, i) => decls.push(`@group(0) @binding(${i + first}) var<storage, ${b.access}> ${b.name}: ${b.type};`));
  const entry =
    k.over === 'body'
      ? `  let ib = thread_index(gid, nwg);\n  if (ib >= params.body_count) { return; }`
      : k.over === 'joint'
        ? `  let j = thread_index(gid, nwg);\n  if (j >= params.joint_count) { return; }`
        : '';
  return `${decls.join('\n')}
${header}
${contactStructsWgsl}
${rigidBodyWgsl}
${rotationWgsl}
${recWgsl}
${THREAD_INDEX_WGSL}
${k.helpers}
@compute @workgroup_size(${WORKGROUP_SIZE})
fn ${k.name}(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
${entry}
${k.body}
}
`;
}
