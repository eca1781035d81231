/**
 * avbd-gpu's contacts in WGSL (f32): avbd-cpu's contact set (contacts.ts, the f64 reference: its header
 * derives the rows, the linearisation about the frame's start and the stick rule) on the manifolds of
 * the GPU contact pipeline (contacts/gpu-contacts.ts: GPU collision, the pair table's matching of last
 * frame's points, the body → manifold CSR), which this module does not duplicate: it adds AVBD's
 * per-point rows and state on top of it.
 *
 * Records, in the solver's row_avbd buffer after the joints' rows (vec4f units, from params.contact_base),
 * one per pair slot k of the broad phase (CONTACT_RECORD vec4f: a header, then four points):
 *   [0] (n, a)   [1] (t₁, b)   [2] (μ_d, μ_s, point count, 0)          a, b, count as u32 bits; t₂ = n × t₁
 *   point j at 3 + 7 j:
 *   [+0] (r_A, disc)   r_A = p_A − x_A⁻ (the frame's start); disc 1: a stuck pair, 2: sliding (contacts.ts)
 *   [+1] (r_B, μ)      μ: μ_s while the point sticks, else μ_d
 *   [+2] (s₀, d₀·t₁, d₀·t₂, 0)   the rows' values at the frame's start (contacts.ts base)
 *   [+3] λ = (λ_n, λ₁, λ₂)       AVBD's sign: F_n ≤ 0 pushes apart
 *   [+4] k = (k_n, k₁, k₂)
 *   [+5] C(x⁻)'s violating part (C0_n, C0₁, C0₂) (eq. 18)
 *   [+6] (k_max,n, k_max,t, β_n, β_t) of the frame (the pair's tangent rows share t₁'s, as avbd-cpu's dual)
 * The state a point keeps from frame to frame besides λ (λ rides on the pipeline's SolverPoint, in its
 * sign, λ_n ≥ 0, and cj_match carries it): contact_keep, 3 vec4f per point slot (4 k + j):
 *   (k_n, k₁, k₂, stick), (anchor on A in A's frame, 0), (anchor on B in B's frame, 0);
 *   prev_contact_keep: last frame's, found through the pair table as cj_match finds λ (match_point).
 *
 * Rows of point c (contacts.ts): C_u = base_u + J_u,A · Δ_A + J_u,B · Δ_B, u ∈ {n, t₁, t₂},
 *   J_u,A = (−u, −(r_A × u)), J_u,B = (u, r_B × u), Δ = (x − x⁻, log(q q⁻⁻¹)) the body's motion in the frame.
 *
 * Kernels (per pair slot unless said; sizes from the broad phase's pair counter, indirect):
 *   av_inertia    per body, where some body has e > 0: the world I⁻¹ into the pipeline's InverseMass
 *                 records, for its restitution pass (cs_restitution, on the velocities the step starts from)
 *   av_match      the kept state of each point from last frame's matching point (match_point, as cj_match)
 *   av_prepare    the records from the pipeline's (n, t, arms, s₀, λ), the stick anchors' d₀ (contacts.ts prepare)
 *   av_adjacency  per body: this frame's body → manifold CSR and the colouring's body adjacency (joints',
 *                 then the contacts' other bodies) into body_graph
 *   av_island_*   the islands of this frame (union–find over joints and contacts joining two dynamic
 *                 bodies, lock-free: a root is hooked under the smaller root by compare-exchange, as in
 *                 Jaiganesh & Burtscher's ECL-CC) and each body's load M_isl / m (cpu.ts islandMasses)
 *   av_contact_warm   eq. 18's C0 and eq. 19's warm start, the scale-free schedule (cpu.ts step1)
 *   av_contact_dual   eqs. 11, 16 for the points (cpu.ts dual: the friction pair in the disc μ|λ_n|)
 *   av_store      λ back onto the pipeline's points (their sign), k and the stick flag kept (contacts.ts store)
 *   av_keep       contact_keep → prev_contact_keep (then the pipeline's cj_keep)
 * The primal's contact part is in kernels.wgsl.ts (primal_contacts).
 */
import { SolverManifoldRecord, SolverPointRecord, ContactBodyRecord, MaterialRecord, matchPointWgsl } from '../../contacts/gpu-contacts.wgsl.js';
import { NOT_FOUND } from '../../gpu/pair-table.js';
import { STICK_DISTANCE } from './contacts.js';
import { MATCH_DISTANCE } from '../../collision/manifolds.js';
import { JOINT_STRIDE } from '../../rows/rows.wgsl.js';

/** vec4f per pair slot of the contact records in row_avbd (header 3 + 4 points × 7). */
export const CONTACT_RECORD = 31;
/** vec4f per point slot of contact_keep. */
export const CONTACT_KEEP = 3;

/** The pipeline's record structs for the contact kernels. */
export const contactStructsWgsl = /* wgsl */ `
${SolverManifoldRecord.wgsl}
${SolverPointRecord.wgsl}
${ContactBodyRecord.wgsl}
${MaterialRecord.wgsl}
fn pair_count(c: u32) -> u32 { return min(c, params.capacity); }
`;

/** The records' addresses (every contact kernel has them). */
export const recWgsl = /* wgsl */ `
fn rec(k: u32) -> u32 { return params.contact_base + ${CONTACT_RECORD}u * k; }
fn pt(k: u32, j: u32) -> u32 { return rec(k) + 3u + 7u * j; }
`;

/** The rows' values at the bodies' motion (kernels that bind pose and frame_state). */
export const motionWgsl = /* wgsl */ `
struct Motion { dx: vec3f, dq: vec3f };
// a body's motion since the frame's start (x⁻, q⁻ in frame_state): 0 for a fixed body (it never moves)
fn motion(i: u32) -> Motion {
  return Motion(pose[2u * i].xyz - frame_state[5u * i + 2u].xyz, rotation_between(pose[2u * i + 1u], frame_state[5u * i + 3u]));
}
// C_u = base + J_u,A · Δ_A + J_u,B · Δ_B  (contacts.ts evaluate, the two sides summed in its order)
fn contact_c(base: f32, u: vec3f, ra: vec3f, rb: vec3f, A: Motion, B: Motion) -> f32 {
  let ca = -dot(u, A.dx) - dot(cross(ra, u), A.dq);
  let cb = dot(u, B.dx) + dot(cross(rb, u), B.dq);
  return base + (ca + cb);
}
`;

/** The union–find's root (body_graph_atomic at params.island: parents, then the roots' masses). */
export const findWgsl = /* wgsl */ `
fn find_root(i: u32) -> u32 {
  var x = i;
  loop {
    let p = atomicLoad(&body_graph_atomic[params.island + x]);
    if (p == x) { return x; }
    x = p;
  }
}
`;

/** Union of two dynamic bodies: the larger root hooked under the smaller; a failed exchange (another thread hooked it first) retries. */
export const uniteWgsl = /* wgsl */ `
fn unite(a: u32, bb: u32) {
  if (body[a].inv_mass == 0.0 || body[bb].inv_mass == 0.0) { return; }
  loop {
    let ra = find_root(a);
    let rb = find_root(bb);
    if (ra == rb) { return; }
    let hi = max(ra, rb);
    let lo = min(ra, rb);
    if (atomicCompareExchangeWeak(&body_graph_atomic[params.island + hi], hi, lo).exchanged) { return; }
  }
}
`;

export interface ContactKernelDecl {
  name: string;
  over: 'pair' | 'body' | 'joint';
  bindings: { name: string; type: string; access: 'read' | 'read_write' }[];
  helpers: string;
  body: string;
  /** the dual's α comes from pass_info */
  pass?: boolean;
}

const b = (name: string, type: string, access: 'read' | 'read_write' = 'read') => ({ name, type, access });

const pairGuard = /* wgsl */ `
  let k = thread_index(gid, nwg);
  if (k >= pair_count(counters[params.pair_counter])) { return; }`;

export const AVBD_CONTACT_KERNELS: ContactKernelDecl[] = [
  {
    // restitution's input (only where some body has e > 0), at the frame's start before the pipeline's
    // cj_frame_bodies copies it: the world I⁻¹ = R I_local⁻¹ Rᵀ of each body into the pipeline's InverseMass
    // records, which cs_restitution's A_nn and impulses read (cpu.ts worldInverseInertia; 0 for a fixed body)
    name: 'av_inertia',
    over: 'body',
    bindings: [b('pose', 'array<vec4f>'), b('body', 'array<AvbdBody>'), b('inverse_mass', 'array<InverseMass>', 'read_write')],
    helpers: /* wgsl */ `
struct InverseMass { inertia: mat3x3f, mass: f32, share: f32 };  // contacts/gpu-contacts.ts's record (jacobi/kernels.wgsl.ts)
`,
    body: /* wgsl */ `
  inverse_mass[ib].inertia = world_inverse_inertia(pose[2u * ib + 1u], body[ib].inv_inertia);`,
  },
  {
    // the kept state (k, stick, anchors) of the point last frame's matching point gave its λ to (cj_match's
    // match_point, the same inputs in the same order: the same hits); a new point starts from nothing
    name: 'av_match',
    over: 'pair',
    bindings: [
      b('counters', 'array<u32>'), b('found', 'array<u32>'), b('prev_manifolds', 'array<SolverManifold>'), b('prev_points', 'array<SolverPoint>'),
      b('manifolds', 'array<SolverManifold>'), b('points', 'array<SolverPoint>'), b('prev_contact_keep', 'array<vec4f>'), b('contact_keep', 'array<vec4f>', 'read_write'),
    ],
    helpers: matchPointWgsl,
    body: /* wgsl */ `${pairGuard}
  let m = manifolds[k];
  for (var j = 0u; j < m.count; j++) { contact_keep[${3}u * (4u * k + j)] = vec4f(0.0); }
  let t = found[k];
  if (m.count == 0u || t == ${NOT_FOUND}u) { return; }
  let old = prev_manifolds[t];
  let turned = dot(old.normal, m.normal) < 0.99;
  let reach = min(${MATCH_DISTANCE}, 4.0 * m.slop);
  var used = 0u;
  for (var j = 0u; j < m.count; j++) {
    let hit = match_point(t, old.count, points[4u * k + j].id, points[4u * k + j].anchor_a, reach, turned, &used);
    if (hit < 0) { continue; }
    for (var e = 0u; e < 3u; e++) { contact_keep[3u * (4u * k + j) + e] = prev_contact_keep[3u * (4u * t + u32(hit)) + e]; }
  }`,
  },
  {
    // contacts.ts prepare: the rows' records from the pipeline's manifold k (found at the frame's start
    // x⁻, q⁻), λ from the matched point (warm 1: λ whole, the warm start scales it), k where the point
    // carried a force, the stick anchors' d₀ where it stuck, else the narrow phase's anchors kept
    name: 'av_prepare',
    over: 'pair',
    bindings: [
      b('counters', 'array<u32>'), b('manifolds', 'array<SolverManifold>'), b('points', 'array<SolverPoint>'), b('contact_body', 'array<ContactBody>'),
      b('materials', 'array<Material>'), b('contact_keep', 'array<vec4f>', 'read_write'), b('row_avbd', 'array<vec4f>', 'read_write'),
    ],
    helpers: '',
    body: /* wgsl */ `${pairGuard}
  let m = manifolds[k];
  let o = rec(k);
  if (m.count == 0u) { row_avbd[o + 2u] = vec4f(0.0); return; }
  let a = m.body_a; let bb = m.body_b;
  // the pair's friction (pipeline.ts: √(μ_A μ_B), dynamic and static)
  let mu = sqrt(materials[a].friction * materials[bb].friction);
  row_avbd[o] = vec4f(m.normal, bitcast<f32>(a));
  row_avbd[o + 1u] = vec4f(m.tangent1, bitcast<f32>(bb));
  row_avbd[o + 2u] = vec4f(mu, m.mu_static, bitcast<f32>(m.count), 0.0);
  let A = contact_body[a]; let B = contact_body[bb];
  for (var j = 0u; j < m.count; j++) {
    let p = points[4u * k + j];
    let s = 3u * (4u * k + j);
    let kept = contact_keep[s];
    // a new point: the matched old point carried no normal force (contacts.ts: fresh)
    let fresh = p.lambda.x == 0.0;
    let stick = !fresh && kept.w == 1.0;
    var d0 = vec2f(0.0);
    if (stick) {
      // d₀ = p_B − p_A between the kept anchors at the frame's start: the slip since the point stuck
      let d = (B.x0 + quat_rotate(B.q0, contact_keep[s + 2u].xyz)) - (A.x0 + quat_rotate(A.q0, contact_keep[s + 1u].xyz));
      d0 = vec2f(dot(d, m.tangent1), dot(d, m.tangent2));
    } else {
      // the narrow phase's anchors (body frames): Rᵀ r at the frame's start
      contact_keep[s + 1u] = vec4f(p.anchor_a, 0.0);
      contact_keep[s + 2u] = vec4f(quat_rotate(vec4f(-B.q0.xyz, B.q0.w), p.arm_b), 0.0);
    }
    let sliding = !fresh && !stick;
    let q = pt(k, j);
    row_avbd[q] = vec4f(p.arm_a, select(1.0, 2.0, sliding));
    row_avbd[q + 1u] = vec4f(p.arm_b, select(mu, m.mu_static, stick));
    row_avbd[q + 2u] = vec4f(p.s0, d0, 0.0);
    row_avbd[q + 3u] = vec4f(-p.lambda, 0.0);
    let kt = max(kept.y, kept.z);
    row_avbd[q + 4u] = select(vec4f(kept.x, kt, kt, 0.0), vec4f(0.0), fresh);
  }`,
  },
  {
    // per body: the body → manifold CSR of this frame (the pipeline's, sorted by the other body) copied
    // into body_graph, and the colouring's adjacency: the joints' neighbours (fixed), then each manifold's
    // other body (repeats allowed: the colouring counts a neighbour once)
    name: 'av_adjacency',
    over: 'body',
    bindings: [b('body_graph', 'array<u32>', 'read_write'), b('body_count', 'array<u32>'), b('entries', 'array<u32>'), b('row_avbd', 'array<vec4f>')],
    helpers: '',
    body: /* wgsl */ `
  let n = params.body_count;
  let ja = params.joint_adjacency;
  let joints_before = body_graph[ja + ib] - body_graph[ja];
  let cs = body_count[ib];
  let ce = body_count[ib + 1u];
  let entries_at = params.contact_first + n + 1u;
  if (ib == 0u) {
    body_graph[params.contact_first + n] = entries_at + body_count[n];
    body_graph[params.adjacency + n] = params.adjacency_lists + (body_graph[ja + n] - body_graph[ja]) + body_count[n];
  }
  body_graph[params.contact_first + ib] = entries_at + cs;
  var out = params.adjacency_lists + joints_before + cs;
  body_graph[params.adjacency + ib] = out;
  for (var e = body_graph[ja + ib]; e < body_graph[ja + ib + 1u]; e++) { body_graph[out] = body_graph[e]; out++; }
  for (var e = cs; e < ce; e++) {
    let entry = entries[e];
    body_graph[entries_at + e] = entry;
    let o = rec(entry >> 1u);
    body_graph[out] = select(bitcast<u32>(row_avbd[o + 1u].w), bitcast<u32>(row_avbd[o].w), (entry & 1u) == 1u);
    out++;
  }`,
  },
  {
    name: 'av_island_init',
    over: 'body',
    bindings: [b('body_graph_atomic', 'array<atomic<u32>>', 'read_write')],
    helpers: '',
    body: /* wgsl */ `
  atomicStore(&body_graph_atomic[params.island + ib], ib);
  atomicStore(&body_graph_atomic[params.island + params.body_count + ib], 0u);`,
  },
  {
    // union of a joint's two dynamic bodies (a fixed body carries no load onward: cpu.ts islandMasses)
    name: 'av_island_joints',
    over: 'joint',
    bindings: [b('body_graph_atomic', 'array<atomic<u32>>', 'read_write'), b('joint', 'array<vec4f>'), b('body', 'array<AvbdBody>')],
    helpers: findWgsl + uniteWgsl,
    body: /* wgsl */ `
  let o = ${JOINT_STRIDE}u * j;
  unite(bitcast<u32>(joint[o + 1u].w), bitcast<u32>(joint[o + 2u].w));`,
  },
  {
    name: 'av_island_contacts',
    over: 'pair',
    bindings: [b('body_graph_atomic', 'array<atomic<u32>>', 'read_write'), b('counters', 'array<u32>'), b('row_avbd', 'array<vec4f>'), b('body', 'array<AvbdBody>')],
    helpers: findWgsl + uniteWgsl,
    body: /* wgsl */ `${pairGuard}
  let o = rec(k);
  if (bitcast<u32>(row_avbd[o + 2u].z) == 0u) { return; }
  unite(bitcast<u32>(row_avbd[o].w), bitcast<u32>(row_avbd[o + 1u].w));`,
  },
  {
    // each island's heaviest mass at its root: atomicMax on the bits (a positive f32's bits order as its value)
    name: 'av_island_mass',
    over: 'body',
    bindings: [b('body_graph_atomic', 'array<atomic<u32>>', 'read_write'), b('body', 'array<AvbdBody>')],
    helpers: findWgsl,
    body: /* wgsl */ `
  if (body[ib].inv_mass == 0.0) { return; }
  atomicMax(&body_graph_atomic[params.island + params.body_count + find_root(ib)], bitcast<u32>(body[ib].mass));`,
  },
  {
    // load = M_isl / m (cpu.ts bodyStiffness's islandMass · m⁻¹)
    name: 'av_island_load',
    over: 'body',
    bindings: [b('body_graph_atomic', 'array<atomic<u32>>', 'read_write'), b('body', 'array<AvbdBody>', 'read_write')],
    helpers: findWgsl,
    body: /* wgsl */ `
  if (body[ib].inv_mass == 0.0) { return; }
  body[ib].load = bitcast<f32>(atomicLoad(&body_graph_atomic[params.island + params.body_count + find_root(ib)])) * body[ib].inv_mass;`,
  },
  {
    // the warm start of the contact rows (cpu.ts step1's loop): C0 (eq. 18: the normal row's overlap, the
    // tangents' whole value), the schedule (scale-free: per row its body stiffness s and ρ), λ ← α γ λ,
    // k ← clamp(γ k, k_min, k_max) (eq. 19); the rows are hard (stiffness ∞: k_max unbounded by it)
    name: 'av_contact_warm',
    over: 'pair',
    bindings: [b('counters', 'array<u32>'), b('pose', 'array<vec4f>'), b('body', 'array<AvbdBody>'), b('row_avbd', 'array<vec4f>', 'read_write')],
    helpers: '' + /* wgsl */ `
// cpu.ts bodyStiffness for a contact row u: the heavier side's m_eff = load / (|u|² m⁻¹ + (r × u)ᵀ I⁻¹ (r × u)),
// s = m_eff / h², and that side's ρ (a contact row is linear)
fn contact_stiffness(a: u32, bb: u32, u: vec3f, ra: vec3f, rb: vec3f) -> vec2f {
  var best = 0.0;
  var len = 1.0;
  for (var side = 0u; side < 2u; side++) {
    let i = select(a, bb, side == 1u);
    let bd = body[i];
    if (bd.inv_mass == 0.0) { continue; }
    let jw = select(-cross(ra, u), cross(rb, u), side == 1u);
    let W = world_inverse_inertia(pose[2u * i + 1u], bd.inv_inertia);
    let w_side = dot(u, u) * bd.inv_mass + dot(jw, W * jw);
    if (!(w_side > 0.0)) { continue; }
    let m = bd.load / w_side;
    if (m > best) { best = m; len = bd.gyration; }
  }
  if (!(len > 0.0)) { len = 1.0; }
  return vec2f(best * params.inv_h2, len);
}`,
    body: /* wgsl */ `${pairGuard}
  let o = rec(k);
  let count = bitcast<u32>(row_avbd[o + 2u].z);
  if (count == 0u) { return; }
  let n = row_avbd[o].xyz; let t1 = row_avbd[o + 1u].xyz; let t2 = cross(n, t1);
  let a = bitcast<u32>(row_avbd[o].w); let bb = bitcast<u32>(row_avbd[o + 1u].w);
  for (var j = 0u; j < count; j++) {
    let q = pt(k, j);
    let ra = row_avbd[q].xyz; let rb = row_avbd[q + 1u].xyz;
    let base = row_avbd[q + 2u];
    // C(x⁻) = base (no motion yet): the normal row's violation is its overlap, the tangents' all of it
    let c0 = vec3f(min(base.x, 0.0), base.y, base.z);
    var kmin = vec3f(params.k_min);
    var kmax = vec3f(params.k_max);
    var beta = vec2f(params.beta_linear);
    if (params.relative == 1u) {
      let sn = contact_stiffness(a, bb, n, ra, rb);
      let s1 = contact_stiffness(a, bb, t1, ra, rb);
      let s2 = contact_stiffness(a, bb, t2, ra, rb);
      kmin = params.k_min * vec3f(sn.x, s1.x, s2.x);
      kmax = params.k_max * vec3f(sn.x, s1.x, s2.x);
      beta = params.beta_relative * vec2f(sn.x / sn.y, s1.x / s1.y);
    }
    // λ ← α γ λ, k ← clamp(γ k, k_min, k_max)   (eq. 19)
    row_avbd[q + 3u] = vec4f(row_avbd[q + 3u].xyz * params.lambda_decay, 0.0);
    row_avbd[q + 4u] = vec4f(min(max(row_avbd[q + 4u].xyz * params.gamma, kmin), kmax), 0.0);
    row_avbd[q + 5u] = vec4f(c0, 0.0);
    row_avbd[q + 6u] = vec4f(kmax.x, kmax.y, beta.x, beta.y);
  }`,
  },
  {
    // cpu.ts dual for the points: λ_n ← min(k_n C*_n + λ_n, 0), k_n += β_n |C*_n| while λ_n < 0 (eqs. 11, 16);
    // the friction pair into the disc μ |λ_n| (the new λ_n), its one penalty ramped by |C*_t| while inside
    name: 'av_contact_dual',
    over: 'pair',
    pass: true,
    bindings: [b('counters', 'array<u32>'), b('pose', 'array<vec4f>'), b('frame_state', 'array<vec4f>'), b('row_avbd', 'array<vec4f>', 'read_write')],
    helpers: motionWgsl,
    body: /* wgsl */ `${pairGuard}
  let o = rec(k);
  let count = bitcast<u32>(row_avbd[o + 2u].z);
  if (count == 0u) { return; }
  let alpha = pass_info.alpha;
  let n = row_avbd[o].xyz; let t1 = row_avbd[o + 1u].xyz; let t2 = cross(n, t1);
  let A = motion(bitcast<u32>(row_avbd[o].w));
  let B = motion(bitcast<u32>(row_avbd[o + 1u].w));
  for (var j = 0u; j < count; j++) {
    let q = pt(k, j);
    let ra = row_avbd[q].xyz; let rb = row_avbd[q + 1u].xyz;
    let mu = row_avbd[q + 1u].w;
    let base = row_avbd[q + 2u];
    var l = row_avbd[q + 3u].xyz;
    var kk = row_avbd[q + 4u].xyz;
    let c0 = row_avbd[q + 5u].xyz;
    let sched = row_avbd[q + 6u];
    let cn = contact_c(base.x, n, ra, rb, A, B) - alpha * c0.x;
    let c1 = contact_c(base.y, t1, ra, rb, A, B) - alpha * c0.y;
    let c2 = contact_c(base.z, t2, ra, rb, A, B) - alpha * c0.z;
    l.x = min(kk.x * cn + l.x, 0.0);
    if (l.x < 0.0) { kk.x = min(kk.x + sched.z * abs(cn), sched.x); }
    var f = vec2f(kk.y * c1 + l.y, kk.z * c2 + l.z);
    let len = sqrt(f.x * f.x + f.y * f.y);
    let cap = mu * abs(l.x);
    let inside = len < cap;
    if (!inside) { f *= select(0.0, cap / len, len > 0.0); }
    l.y = f.x; l.z = f.y;
    if (inside) {
      let kt = min(max(kk.y, kk.z) + sched.w * sqrt(c1 * c1 + c2 * c2), sched.y);
      kk.y = kt; kk.z = kt;
    }
    row_avbd[q + 3u] = vec4f(l, 0.0);
    row_avbd[q + 4u] = vec4f(kk, 0.0);
  }`,
  },
  {
    // contacts.ts store: λ onto the pipeline's points in their sign (cj_match carries it to the next
    // frame), k kept, and the stick flag: friction inside μ_s |λ_n|, a normal force, d₀ within STICK_DISTANCE
    name: 'av_store',
    over: 'pair',
    bindings: [b('counters', 'array<u32>'), b('points', 'array<SolverPoint>', 'read_write'), b('row_avbd', 'array<vec4f>'), b('contact_keep', 'array<vec4f>', 'read_write')],
    helpers: '',
    body: /* wgsl */ `${pairGuard}
  let o = rec(k);
  let count = bitcast<u32>(row_avbd[o + 2u].z);
  let mu_static = row_avbd[o + 2u].y;
  for (var j = 0u; j < count; j++) {
    let q = pt(k, j);
    let l = row_avbd[q + 3u].xyz;
    points[4u * k + j].lambda = -l;
    let base = row_avbd[q + 2u];
    let lt = sqrt(l.y * l.y + l.z * l.z);
    let slip = sqrt(base.y * base.y + base.z * base.z);
    let stick = l.x < 0.0 && lt < mu_static * abs(l.x) && slip < ${STICK_DISTANCE};
    contact_keep[3u * (4u * k + j)] = vec4f(row_avbd[q + 4u].xyz, select(0.0, 1.0, stick));
  }`,
  },
  {
    name: 'av_keep',
    over: 'pair',
    bindings: [b('counters', 'array<u32>'), b('manifolds', 'array<SolverManifold>'), b('contact_keep', 'array<vec4f>'), b('prev_contact_keep', 'array<vec4f>', 'read_write')],
    helpers: '',
    body: /* wgsl */ `${pairGuard}
  let count = manifolds[k].count;
  for (var e = 0u; e < 3u * count; e++) { prev_contact_keep[12u * k + e] = contact_keep[12u * k + e]; }`,
  },
];

