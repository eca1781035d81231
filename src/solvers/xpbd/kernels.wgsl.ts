/**
 * WGSL kernels of xpbd-gpu, one per stage of cpu.ts (the f64 reference, same
 * stage names; equations, references and the two forms 'point' / 'distance' in its
 * header); solve_colour is the point joints' (cpu.ts solveRows of a point joint's one
 * 3×3 block, or solveDistance), solve_colour_rows every other joint's (cpu.ts solveRows).
 * Each kernel is its own module that declares only the buffers it binds (≤ 7 storage
 * buffers each).
 *
 * Buffers (f32; legend: NB bodies incl. world anchors, NC point joints, NJ other joints,
 * NR rows, K colours; a "slot" s is a point joint's position in the colouring's `order`
 * with the other joints left out; a record k likewise for the other joints):
 *   pose[2·NB]            [2i] = (x_i, 0), [2i+1] = q_i = (x, y, z, w)
 *   pose_prev[2·NB]       [2i] = (Δx, 0): the displacement x − x_prev since the substep's start, summed from its
 *                         increments (integrate's h v, every projection's Δx; 0 for bodies that do not move),
 *                         [2i+1] = q_prev of the substep (dynamic bodies only). Why Δx: update_velocities'
 *                         v = (x − x_prev)/h would subtract two f32 positions, each rounded to ½ ulp(|x|), so v
 *                         would carry up to ε|x|/h of rounding per substep — 3e-4 m/s at |x| = 8 m and h = 1/600 s,
 *                         3.5 % of the μ g h a sliding box loses to friction in a substep, and biased where the
 *                         rounding of a constant increment is (measured: a box sliding at 3 m/s, 12 m from the
 *                         origin, stopped 1.7 % later than at the origin; at 140 m, 16 %; a free body thrown
 *                         sideways at 1 m/s 10 km out moved at 2 ulp/h = 1.17 m/s, a pendulum released there never
 *                         moved along x). The sum of the increments is the same Δx in exact arithmetic, rounded
 *                         relative to its own size (h|v|), not to |x|. Every world keeps it (joint-only ones too,
 *                         since issue 23: test/xpbd.test.ts "far from the origin"). What it cannot take back is the
 *                         position's own storage: x + h v still rounds to ½ ulp(|x|) a substep.
 *   pose_start[2·NB]      [2i] = (x̄, 0): the stored pose at the substep's start, [2i+1] = (c, 0): where the body's
 *                         increments put it then, less x̄ (integrate, dynamic bodies; c is small: x̄ − x exact). Why: x + Δ rounds to the f32
 *                         grid of |x|, and where Δ is the same every substep the error is the same every substep: a
 *                         box sliding down a slope 3 m from the origin took each substep the same normal correction
 *                         (g cos θ h² ≈ 2.4e-5 m), whose rounding moved it on average 1.5e-8 m into the slope a substep
 *                         (6 % of an ulp, measured in an f32 emulation of xpbd-cpu), which the next projection pushed
 *                         out: Σλ_n 0.064 % above m g cos θ, friction as much, and at tan θ = 1.016 μ_s (a = 0.0697
 *                         m/s²) the box slid 2.3 % slow on the GPU (4 % emulated; 6 % at 6 m; 0.55 % fast at the
 *                         origin). So integrate adds the last substep's lag e = (x̄ + c + Δx) − x to the new step
 *                         and keeps that lag as the new start's c: the pose stays within the roundings of one substep
 *                         of the increments' sum, and no rounding accumulates. Off (params.compensate = 0) where a
 *                         body has e > 0: xc_apply_* moves poses outside Δx (their 8 storage buffers are bound).
 *   velocity[2·NB]        [2i] = (v_i, 0), [2i+1] = (ω_i, 0)
 *   body_mass[NB]         { I_local⁻¹, m⁻¹ } (both 0 for fixed bodies and world anchors)
 *   bodies[NC]            per slot: (body 1, body 2) = (ib0, ib1)
 *   anchors[2·NC]         per slot: r⁰, r¹ in the local frames
 *   compliance[NC]        per slot: α (m/N)
 *   multiplier[NC]        per slot: λ ∈ R³ ('point'; the scalar along n in .x for 'distance'),
 *                         restarted each substep
 *   residual[NC]          per slot: |r|² with r = (C(x) + α̃λ)/h²: diagnostics only
 *   joint[7·NJ], row_jacobian[3·NR], row_error[NR], row_params[NR]   the other joints' records and
 *                         rows, rows/rows.wgsl.ts's legend (its xpbd part: the JointKind in the
 *                         flags' bits 8.., row_params.w = n + 8·more at a block's first row)
 *   row_lambda[NR]        λ of each row (N·s²), read as 0 in a substep's first iteration
 *   row_residual[NR]      |r|² per row (diagnostics; 0 for a one-sided row apart)
 *   midpoint_offset[NB]   (g, free): g = ω_m − ω* of a free body's gyroscopic step (rigid/body.wgsl.ts;
 *                         0 for spheres and jointed bodies), free = 1 where no constraint touches the body
 *   pass_info (uniform)   one 256-byte-aligned record per pass: (start, count, first) —
 *                         records 2c, 2c+1: colour c in the first / a later iteration;
 *                         records 2K, 2K+1: every slot, for compute_residual;
 *                         records 2K+2+2c, 2K+3+2c: colour c's other-joint records;
 *                         records 4K+2, 4K+3: every such record, for compute_residual_rows
 * `first` = 1 reads λ as 0: XPBD's λ = 0 at the start of a substep, with no pass of its own.
 */

import type { XpbdVariant } from './cpu.js';

import { WORKGROUP_SIZE } from '../../gpu/frames.js';
import { rigidBodyWgsl } from '../../rigid/body.wgsl.js';
import { softnessWgsl } from '../../rows/softness.js';
import { JOINT_KIND_SHIFT, JOINT_STRIDE, MAX_GPU_BLOCK_ROWS, invertBlockWgsl, rowEvaluateFunctionsWgsl } from '../../rows/rows.wgsl.js';
export { WORKGROUP_SIZE };

type Access = 'read' | 'read_write';
export interface KernelSpec {
  name: string;
  /** 'body' kernels run one thread per body; 'slot' kernels one per slot of the pass (pass_info) */
  over: 'body' | 'slot';
  bindings: { name: BufferName; access: Access }[];
  body: string;
  /** module-scope WGSL the body calls beyond the shared header */
  helpers?: string;
}

export type BufferName =
  | 'pose'
  | 'pose_prev'
  | 'pose_start'
  | 'velocity'
  | 'body_mass'
  | 'bodies'
  | 'anchors'
  | 'compliance'
  | 'multiplier'
  | 'residual'
  | 'midpoint_offset'
  | 'joint'
  | 'row_jacobian'
  | 'row_error'
  | 'row_params'
  | 'row_lambda'
  | 'row_residual';

const elementType: Record<BufferName, string> = {
  pose: 'array<vec4f>',
  pose_prev: 'array<vec4f>',
  pose_start: 'array<vec4f>',
  velocity: 'array<vec4f>',
  body_mass: 'array<BodyMass>',
  bodies: 'array<vec2u>',
  anchors: 'array<vec4f>',
  compliance: 'array<f32>',
  multiplier: 'array<vec4f>',
  residual: 'array<f32>',
  midpoint_offset: 'array<vec4f>',
  joint: 'array<vec4f>',
  row_jacobian: 'array<vec4f>',
  row_error: 'array<vec2f>',
  row_params: 'array<vec4f>',
  row_lambda: 'array<f32>',
  row_residual: 'array<f32>',
};

/** Params uniform: must match XpbdGpuSolver.writeParams. */
const header = /* wgsl */ `
struct Params {
  gravity: vec3f,
  h: f32,               // substep (frame dt / substeps), s
  inv_h2: f32,          // 1/h², for α̃ = α/h²
  linear_factor: f32,   // max(0, 1 − μ_lin h)
  angular_factor: f32,  // max(0, 1 − μ_ang h)
  min_distance: f32,    // XPBD_MIN_DISTANCE: C below this is left alone (n undefined)
  body_count: u32,
  row_width: u32,       // threads per dispatch row (2-D dispatch for big scenes)
  compensate: u32,      // 1: integrate carries the pose's rounding (pose_start legend); 0 where xc_apply moves poses outside Δx
};
struct PassInfo {
  start: u32,           // first slot
  count: u32,           // slots in this pass
  first: u32,           // 1: read λ as 0 (first iteration of a substep)
};
struct BodyMass {
  inertia: mat3x3f,     // I_local⁻¹
  mass: f32,            // m⁻¹
};

${rigidBodyWgsl}
${softnessWgsl}
fn point_mobility(inv_mass: f32, inv_inertia: mat3x3f, r: vec3f) -> mat3x3f {
  // A = m⁻¹ I₃ − [r]× I⁻¹ [r]×: how p₁ moves per unit impulse at it, column j = m⁻¹ e_j − r × (I⁻¹ (r × e_j))
  let e0 = vec3f(1.0, 0.0, 0.0);
  let e1 = vec3f(0.0, 1.0, 0.0);
  let e2 = vec3f(0.0, 0.0, 1.0);
  return mat3x3f(inv_mass * e0 - cross(r, inv_inertia * cross(r, e0)),
                 inv_mass * e1 - cross(r, inv_inertia * cross(r, e1)),
                 inv_mass * e2 - cross(r, inv_inertia * cross(r, e2)));
}
`;

/**
 * The joint at slot k: lever arms r0 = R₁ r⁰, r1 = R₂ r¹, d = p₁ − p₂ = x₁ + r0 − x₂ − r1,
 * α̃ = α/h², and λ (read as 0 in a substep's first iteration). Shared by solve_colour and
 * compute_residual, which bind the buffers it reads.
 */
const joint = /* wgsl */ `
  let b = bodies[k];
  let q0 = pose[2u * b.x + 1u];
  let q1 = pose[2u * b.y + 1u];
  let r0 = quat_rotate(q0, anchors[2u * k].xyz);
  let r1 = quat_rotate(q1, anchors[2u * k + 1u].xyz);
  let d = pose[2u * b.x].xyz + r0 - pose[2u * b.y].xyz - r1;
  let alpha_tilde = compliance_per_step(compliance[k], params.inv_h2);
  var lambda = multiplier[k].xyz;
  if (pass_info.first != 0u) { lambda = vec3f(0.0); } // λ = 0 at the start of the substep`;

const jointBindings: { name: BufferName; access: Access }[] = [
  { name: 'pose', access: 'read' },
  { name: 'bodies', access: 'read' },
  { name: 'anchors', access: 'read' },
  { name: 'compliance', access: 'read' },
];

/** World inverse inertias W0, W1 (Iᵢ⁻¹ = Rᵢ I_local⁻¹ Rᵢᵀ; zero for fixed bodies) and masses, after `joint`. */
const jointMass = /* wgsl */ `
  let m0 = body_mass[b.x];
  let m1 = body_mass[b.y];
  let W0 = world_inverse_inertia(q0, m0.inertia);
  let W1 = world_inverse_inertia(q1, m1.inertia);`;

/** Body 1 takes +p, body 2 −p: x += ±m⁻¹ p, q += ±½ (0, I⁻¹ (r × p)) ⊗ q; fixed bodies are never written. */
/** Δx also onto the substep's displacement in pose_prev[2i] (legend). */
const addDisplacement = (body: string, delta: string) => `\n    pose_prev[2u * ${body}] = vec4f(pose_prev[2u * ${body}].xyz + ${delta}, 0.0);`;
const applyImpulse = /* wgsl */ `
  // no other slot of this pass shares a dynamic body with this one (colouring)
  if (m0.mass > 0.0) {
    pose[2u * b.x] = vec4f(pose[2u * b.x].xyz + m0.mass * p, 0.0);${addDisplacement('b.x', 'm0.mass * p')}
    pose[2u * b.x + 1u] = quat_add_rotation(q0, W0 * cross(r0, p));
  }
  if (m1.mass > 0.0) {
    pose[2u * b.y] = vec4f(pose[2u * b.y].xyz - m1.mass * p, 0.0);${addDisplacement('b.y', '-(m1.mass * p)')}
    pose[2u * b.y + 1u] = quat_add_rotation(q1, -(W1 * cross(r1, p)));
  }`;

/** The solve of one joint in each form (cpu.ts: solvePoint, solveDistance). */
const solveBody: Record<XpbdVariant['form'], string> = {
  point: /* wgsl */ `${joint}${jointMass}
  // K = A₁ + A₂ + α̃ I₃,  Aᵢ = mᵢ⁻¹ I₃ − [rᵢ]× Iᵢ⁻¹ [rᵢ]×
  let K = point_mobility(m0.mass, W0, r0) + point_mobility(m1.mass, W1, r1) + mat3x3f(alpha_tilde, 0.0, 0.0, 0.0, alpha_tilde, 0.0, 0.0, 0.0, alpha_tilde);
  // Δλ = −K⁻¹ (d + α̃ λ); K⁻¹: rows are (c1×c2, c2×c0, c0×c1) / det for columns c0, c1, c2
  let Kinv = transpose(mat3x3f(cross(K[1], K[2]), cross(K[2], K[0]), cross(K[0], K[1]))) * (1.0 / dot(K[0], cross(K[1], K[2])));
  let p = Kinv * -(d + alpha_tilde * lambda);
  multiplier[k] = vec4f(lambda + p, 0.0);${applyImpulse}`,
  distance: /* wgsl */ `${joint}
  let C = length(d);
  if (!(C > params.min_distance)) { multiplier[k] = vec4f(lambda, 0.0); return; } // n undefined; skipped correction ≤ C
  let n = d / C;${jointMass}
  // wᵢ = mᵢ⁻¹ + (rᵢ × n)ᵀ Iᵢ⁻¹ (rᵢ × n);  Δλ = (−C − α̃ λ) / (w₁ + w₂ + α̃);  p = Δλ n
  let c0 = cross(r0, n);
  let c1 = cross(r1, n);
  let w = m0.mass + dot(c0, W0 * c0) + m1.mass + dot(c1, W1 * c1);
  let dl = (-C - alpha_tilde * lambda.x) / (w + alpha_tilde);
  multiplier[k] = vec4f(lambda.x + dl, 0.0, 0.0, 0.0);
  let p = dl * n;${applyImpulse}`,
};

/** |r|², r = (C(x) + α̃ λ)/h² of one joint in each form. */
const residualBody: Record<XpbdVariant['form'], string> = {
  point: /* wgsl */ `${joint}
  let r = (d + alpha_tilde * lambda) * params.inv_h2;
  residual[k] = dot(r, r);`,
  distance: /* wgsl */ `${joint}
  let r = (length(d) + alpha_tilde * lambda.x) * params.inv_h2;
  residual[k] = r * r;`,
};

/**
 * solve_colour_rows: xpbd-cpu's solveRows for the joints of one colour that are not point joints
 * (distance, hinge, fixed; rows/rows.wgsl.ts's evaluate functions), one thread per joint record
 * k (records laid out colour by colour: pass_info's slots are records). Per block b of the joint,
 * at the current pose (evaluated again before each block):
 *   K = J_b M⁻¹ J_bᵀ + α̃ I,  Δλ = −K⁻¹ (C_b + α̃ λ_b),  α̃ = α / h²      (the text's Δλ, as a block)
 *   λ ← clamp(λ + Δλ, lower, upper), then with the clamped Δλ (nothing when every Δλ is 0):
 *   x += M⁻¹ J_vᵀ Δλ,  q += ½ (0, I⁻¹ J_ωᵀ Δλ) ⊗ q, normalise   (per body; fixed bodies never written)
 * I⁻¹ = R I_local⁻¹ Rᵀ at the current orientation. λ of the rows in row_lambda, read as 0 in a
 * substep's first iteration.
 */
const solveRowsBody = /* wgsl */ `
  let o = ${JOINT_STRIDE}u * k;
  let ia = bitcast<u32>(joint[o + 1u].w);
  let ib = bitcast<u32>(joint[o + 2u].w);
  let kind = bitcast<u32>(joint[o + 3u].w) >> ${JOINT_KIND_SHIFT}u;
  let ma = body_mass[ia];
  let mb = body_mass[ib];
  var r0 = bitcast<u32>(joint[o].w);
  loop {
    let block_meta = u32(row_params[r0].w);
    let n = block_meta & 7u;
    evaluate_rows(k, kind);
    let qa = pose[2u * ia + 1u];
    let qb = pose[2u * ib + 1u];
    let Wa = world_inverse_inertia(qa, ma.inertia);
    let Wb = world_inverse_inertia(qb, mb.inertia);
    // K = J_b M⁻¹ J_bᵀ + α̃ I (rows.ts blockDelassus), e = −(C + α̃ λ)
    var K: array<f32, ${MAX_GPU_BLOCK_ROWS * MAX_GPU_BLOCK_ROWS}>;
    var e: array<f32, ${MAX_GPU_BLOCK_ROWS}>;
    var lam: array<f32, ${MAX_GPU_BLOCK_ROWS}>;
    for (var p = 0u; p < n; p++) {
      for (var q = p; q < n; q++) {
        var a = 0.0;
        if (ma.mass > 0.0) { a += ma.mass * dot(row_jva(r0 + p), row_jva(r0 + q)) + dot(row_jwa(r0 + p), Wa * row_jwa(r0 + q)); }
        if (mb.mass > 0.0) { a += mb.mass * dot(row_jvb(r0 + p), row_jvb(r0 + q)) + dot(row_jwb(r0 + p), Wb * row_jwb(r0 + q)); }
        K[p * n + q] = a;
        K[q * n + p] = a;
      }
      let at = compliance_per_step(row_params[r0 + p].z, params.inv_h2);
      K[p * n + p] += at;
      lam[p] = select(row_lambda[r0 + p], 0.0, pass_info.first != 0u); // λ = 0 at the start of the substep
      e[p] = -(row_error[r0 + p].x + at * lam[p]);
    }
    let inv = invert_block(K, n);
    var lin_a = vec3f(0.0);
    var ang_a = vec3f(0.0);
    var lin_b = vec3f(0.0);
    var ang_b = vec3f(0.0);
    var moved = false;
    for (var p = 0u; p < n; p++) {
      var s = 0.0;
      for (var q = 0u; q < n; q++) { s += inv[p * n + q] * e[q]; }
      let r = r0 + p;
      let bounds = row_params[r];
      let next = clamp(lam[p] + s, bounds.x, bounds.y);
      row_lambda[r] = next;
      let dl = next - lam[p];
      if (dl != 0.0) { moved = true; }
      lin_a += dl * row_jva(r);
      ang_a += dl * row_jwa(r);
      lin_b += dl * row_jvb(r);
      ang_b += dl * row_jwb(r);
    }
    if (moved) {
      // no other joint of this colour shares a dynamic body with this one (colouring)
      if (ma.mass > 0.0) {
        pose[2u * ia] = vec4f(pose[2u * ia].xyz + ma.mass * lin_a, 0.0);${addDisplacement('ia', 'ma.mass * lin_a')}
        pose[2u * ia + 1u] = quat_add_rotation(qa, Wa * ang_a);
      }
      if (mb.mass > 0.0) {
        pose[2u * ib] = vec4f(pose[2u * ib].xyz + mb.mass * lin_b, 0.0);${addDisplacement('ib', 'mb.mass * lin_b')}
        pose[2u * ib + 1u] = quat_add_rotation(qb, Wb * ang_b);
      }
    }
    if ((block_meta & 8u) == 0u) { break; }
    r0 += n;
  }`;

/**
 * compute_residual_rows (diagnostics): per row of joint record k, r² with r = (C(x) + α̃ λ)/h² at the
 * current pose (xpbd-cpu residualByKind); 0 for a one-sided row at λ ≤ 0 that is apart (C + α̃λ > 0).
 */
const residualRowsBody = /* wgsl */ `
  let o = ${JOINT_STRIDE}u * k;
  evaluate_rows(k, bitcast<u32>(joint[o + 3u].w) >> ${JOINT_KIND_SHIFT}u);
  var r0 = bitcast<u32>(joint[o].w);
  loop {
    let block_meta = u32(row_params[r0].w);
    let n = block_meta & 7u;
    for (var r = r0; r < r0 + n; r++) {
      let bounds = row_params[r];
      let lam = select(row_lambda[r], 0.0, pass_info.first != 0u);
      let e = row_error[r].x + compliance_per_step(bounds.z, params.inv_h2) * lam;
      let apart = bounds.x == 0.0 && lam <= 0.0 && e > 0.0;
      let res = e * params.inv_h2;
      row_residual[r] = select(res * res, 0.0, apart);
    }
    if ((block_meta & 8u) == 0u) { break; }
    r0 += n;
  }`;

const kernels = (form: XpbdVariant['form'], anisotropic: boolean): KernelSpec[] => [
  {
    name: 'integrate',
    over: 'body',
    bindings: [
      { name: 'pose', access: 'read_write' },
      { name: 'pose_prev', access: 'read_write' },
      { name: 'velocity', access: 'read_write' },
      { name: 'body_mass', access: 'read' },
      { name: 'pose_start', access: 'read_write' },
      ...(anisotropic ? ([{ name: 'midpoint_offset', access: 'read_write' }] as const) : []),
    ],
    body: /* wgsl */ `
  if (body_mass[ib].mass == 0.0) { return; } // fixed: never moves
  // x_prev = x, kept as the displacement Δx = h v (pose_prev legend), q_prev = q; v += h g;
  // x += h v (with the last substep's rounding carried: pose_start legend); q += ½ h (0, ω) ⊗ q, normalise
  let x = pose[2u * ib].xyz;
  let q = pose[2u * ib + 1u];
  pose_prev[2u * ib + 1u] = q;
  let v = velocity[2u * ib].xyz + params.h * params.gravity;
  velocity[2u * ib] = vec4f(v, 0.0);
  // e: where the last substep's increments put the body (its start's x̄ + c, plus Δx) less where the stored
  // pose is; x̄ − x exact (two f32 within a factor 2), the rest at the size of the increments
  var e = vec3f(0.0);
  if (params.compensate == 1u) { e = ((pose_start[2u * ib].xyz - x) + pose_prev[2u * ib].xyz) + pose_start[2u * ib + 1u].xyz; }
  // this substep's start: x̄ = x as stored, c = e (the increments put the body at x̄ + c)
  pose_start[2u * ib] = vec4f(x, 0.0);
  pose_start[2u * ib + 1u] = vec4f(e, 0.0);
  pose_prev[2u * ib] = vec4f(params.h * v, 0.0);
  pose[2u * ib] = vec4f(x + (e + params.h * v), 0.0);
${
  anisotropic
    ? `  let inv_local = body_mass[ib].inertia;
  if (is_isotropic(inv_local)) {
    pose[2u * ib + 1u] = quat_add_rotation(q, params.h * velocity[2u * ib + 1u].xyz);
    return;
  }
  // not isotropic: the gyroscopic step ω ← ω* (E2); a free body keeps g = ω_m − ω* and turns by ω_m (E4)
  let w = velocity[2u * ib + 1u].xyz;
  let w_star = gyroscopic_step(w, q, inv_local, params.h);
  let free = midpoint_offset[ib].w;
  let g = select(vec3f(0.0), 0.5 * (w - w_star), free != 0.0);
  velocity[2u * ib + 1u] = vec4f(w_star, 0.0);
  midpoint_offset[ib] = vec4f(g, free);
  pose[2u * ib + 1u] = integrate_body_orientation(q, w_star, g, params.h).q;`
    : `  pose[2u * ib + 1u] = quat_add_rotation(q, params.h * velocity[2u * ib + 1u].xyz); // every moving body isotropic`
}`,
  },
  {
    name: 'solve_colour',
    over: 'slot',
    bindings: [
      ...jointBindings.map((j) => (j.name === 'pose' ? { name: j.name, access: 'read_write' as const } : j)),
      { name: 'body_mass', access: 'read' },
      { name: 'multiplier', access: 'read_write' },
      { name: 'pose_prev', access: 'read_write' },
    ],
    body: solveBody[form],
  },
  {
    name: 'solve_colour_rows',
    over: 'slot',
    bindings: [
      { name: 'pose', access: 'read_write' },
      { name: 'pose_prev', access: 'read_write' },
      { name: 'body_mass', access: 'read' },
      { name: 'joint', access: 'read' },
      { name: 'row_jacobian', access: 'read_write' },
      { name: 'row_error', access: 'read_write' },
      { name: 'row_params', access: 'read' },
      { name: 'row_lambda', access: 'read_write' },
    ],
    helpers: rowEvaluateFunctionsWgsl() + invertBlockWgsl,
    body: solveRowsBody,
  },
  {
    name: 'compute_residual_rows',
    over: 'slot',
    bindings: [
      { name: 'pose', access: 'read' },
      { name: 'joint', access: 'read' },
      { name: 'row_jacobian', access: 'read_write' },
      { name: 'row_error', access: 'read_write' },
      { name: 'row_params', access: 'read' },
      { name: 'row_lambda', access: 'read' },
      { name: 'row_residual', access: 'read_write' },
    ],
    helpers: rowEvaluateFunctionsWgsl(),
    body: residualRowsBody,
  },
  {
    name: 'update_velocities',
    over: 'body',
    bindings: [
      { name: 'pose', access: 'read' },
      { name: 'pose_prev', access: 'read' },
      { name: 'velocity', access: 'read_write' },
      { name: 'body_mass', access: 'read' },
      ...(anisotropic ? ([{ name: 'midpoint_offset', access: 'read' }] as const) : []),
    ],
    body: /* wgsl */ `
  if (body_mass[ib].mass == 0.0) { return; }
  // v = (x − x_prev)/h as Δx/h, the substep's displacement (pose_prev legend), damped
  let s = params.linear_factor / params.h;
  velocity[2u * ib] = vec4f(pose_prev[2u * ib].xyz * s, 0.0);
  // Δq = q q_prev⁻¹: Δq_v = w_p q_v − w q_v,p − q_v × q_v,p, Δq_w = q · q_prev; ω = 2 Δq_v / (h Δq_w), damped
  let q = pose[2u * ib + 1u];
  let p = pose_prev[2u * ib + 1u];
${
  anisotropic
    ? `  if (!is_isotropic(body_mass[ib].inertia)) {
    // the exact inverse of integrate's orientation update (rigid/body.wgsl.ts), damped
    velocity[2u * ib + 1u] = vec4f(params.angular_factor * angular_velocity_from_rotation(q, p, midpoint_offset[ib].xyz, params.h), 0.0);
    return;
  }`
    : ''
}
  // ω = 2 Δq_v / (h Δq_w): the exact inverse of integrate's Cayley step q ← normalise((1, ½hω) ⊗ q)
  // (xpbd/cpu.ts updateVelocities); the sign of Δq cancels (the shorter way round), and so does any
  // f32 error in the norms of q and q_prev
  let dq = p.w * q.xyz - q.w * p.xyz - cross(q.xyz, p.xyz);
  let a = 2.0 * params.angular_factor / (params.h * dot(q, p));
  velocity[2u * ib + 1u] = vec4f(a * dq, 0.0);`,
  },
  {
    // diagnostics (not part of a step): |r|² with r = (C(x) + α̃ λ)/h², the XPBD equation residual
    name: 'compute_residual',
    over: 'slot',
    bindings: [...jointBindings, { name: 'multiplier', access: 'read' }, { name: 'residual', access: 'read_write' }],
    body: residualBody[form],
  },
];

/**
 * The kernels of one form ('point' or 'distance': only solve_colour and compute_residual differ);
 * solve_colour_rows and compute_residual_rows only when some joint is not a point joint (`rows`).
 */
/**
 * xpbd-gpu's kernels; `anisotropic` = false (every moving body isotropic: rigid/body.ts
 * anyAnisotropic) builds integrate and update_velocities without the gyroscopic step and the
 * midpoint turn, the isotropic arithmetic alone.
 */
export function kernelSpecs(variant: XpbdVariant, rows = true, anisotropic = true): KernelSpec[] {
  return kernels(variant.form, anisotropic).filter((k) => rows || !k.name.endsWith('_rows'));
}

/** Full WGSL of one kernel: shared header, its bindings, and its entry point. */
export function kernelSource(k: KernelSpec): string {
  const decls = [`@group(0) @binding(0) var<uniform> params: Params;`];
  if (k.over === 'slot') decls.push(`@group(0) @binding(1) var<uniform> pass_info: PassInfo;`);
  const first = k.over === 'slot' ? 2 : 1;
  k.bindings.forEach((b, i) => decls.push(`@group(0) @binding(${i + first}) var<storage, ${b.access}> ${b.name}: ${elementType[b.name]};`));
  const entry =
    k.over === 'body'
      ? `  let ib = gid.y * params.row_width + gid.x;\n  if (ib >= params.body_count) { return; }`
      : `  let index = gid.y * params.row_width + gid.x;\n  if (index >= pass_info.count) { return; }\n  let k = pass_info.start + index;`;
  return `${decls.join('\n')}
${header}
${k.helpers ?? ''}
@compute @workgroup_size(${WORKGROUP_SIZE})
fn ${k.name}(@builtin(global_invocation_id) gid: vec3u) {
${entry}
${k.body}
}
`;
}
