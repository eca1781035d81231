/**
 * WGSL kernels of xpbd-gpu, one per stage of cpu.ts (the f64 reference, same
 * stage names; equations, references and the two forms 'point' / 'distance' in its
 * header). Each kernel is its own module that declares only the buffers it binds
 * (≤ 6 storage buffers each).
 *
 * Buffers (f32; legend: NB bodies incl. world anchors, NC constraints, K colours;
 * a "slot" s is a position in the colouring's `order`: constraint order[s]; the
 * slots of colour c are start[c] .. start[c+1)):
 *   pose[2·NB]            [2i] = (x_i, 0), [2i+1] = q_i = (x, y, z, w)
 *   pose_prev[2·NB]       x_prev, q_prev of the substep (dynamic bodies only)
 *   velocity[2·NB]        [2i] = (v_i, 0), [2i+1] = (ω_i, 0)
 *   body_mass[NB]         { I_local⁻¹, m⁻¹ } (both 0 for fixed bodies and world anchors)
 *   bodies[NC]            per slot: (body 1, body 2) = (ib0, ib1)
 *   anchors[2·NC]         per slot: r⁰, r¹ in the local frames
 *   compliance[NC]        per slot: α (m/N)
 *   multiplier[NC]        per slot: λ ∈ R³ ('point'; the scalar along n in .x for 'distance'),
 *                         restarted each substep
 *   residual[NC]          per slot: |r|² with r = (C(x) + α̃λ)/h²: diagnostics only
 *   midpoint_offset[NB]   (g, free): g = ω_m − ω* of a free body's gyroscopic step (rigid/body.wgsl.ts;
 *                         0 for spheres and jointed bodies), free = 1 where no constraint touches the body
 *   pass_info (uniform)   one 256-byte-aligned record per pass: (start, count, first) —
 *                         records 2c, 2c+1: colour c in the first / a later iteration;
 *                         records 2K, 2K+1: every slot, for compute_residual
 * `first` = 1 reads λ as 0: XPBD's λ = 0 at the start of a substep, with no pass of its own.
 */

import type { XpbdVariant } from './cpu.js';

import { WORKGROUP_SIZE } from '../../gpu/frames.js';
import { rigidBodyWgsl } from '../../rigid/body.wgsl.js';
import { softnessWgsl } from '../../rows/softness.js';
export { WORKGROUP_SIZE };

type Access = 'read' | 'read_write';
export interface KernelSpec {
  name: string;
  /** 'body' kernels run one thread per body; 'slot' kernels one per slot of the pass (pass_info) */
  over: 'body' | 'slot';
  bindings: { name: BufferName; access: Access }[];
  body: string;
}

export type BufferName =
  | 'pose'
  | 'pose_prev'
  | 'velocity'
  | 'body_mass'
  | 'bodies'
  | 'anchors'
  | 'compliance'
  | 'multiplier'
  | 'residual'
  | 'midpoint_offset';

const elementType: Record<BufferName, string> = {
  pose: 'array<vec4f>',
  pose_prev: 'array<vec4f>',
  velocity: 'array<vec4f>',
  body_mass: 'array<BodyMass>',
  bodies: 'array<vec2u>',
  anchors: 'array<vec4f>',
  compliance: 'array<f32>',
  multiplier: 'array<vec4f>',
  residual: 'array<f32>',
  midpoint_offset: 'array<vec4f>',
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
const applyImpulse = /* wgsl */ `
  // no other slot of this pass shares a dynamic body with this one (colouring)
  if (m0.mass > 0.0) {
    pose[2u * b.x] = vec4f(pose[2u * b.x].xyz + m0.mass * p, 0.0);
    pose[2u * b.x + 1u] = quat_add_rotation(q0, W0 * cross(r0, p));
  }
  if (m1.mass > 0.0) {
    pose[2u * b.y] = vec4f(pose[2u * b.y].xyz - m1.mass * p, 0.0);
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

const kernels = (form: XpbdVariant['form']): KernelSpec[] => [
  {
    name: 'integrate',
    over: 'body',
    bindings: [
      { name: 'pose', access: 'read_write' },
      { name: 'pose_prev', access: 'read_write' },
      { name: 'velocity', access: 'read_write' },
      { name: 'body_mass', access: 'read' },
      { name: 'midpoint_offset', access: 'read_write' },
    ],
    body: /* wgsl */ `
  if (body_mass[ib].mass == 0.0) { return; } // fixed: never moves
  // x_prev = x, q_prev = q; v += h g; x += h v; q += ½ h (0, ω) ⊗ q, normalise
  let x = pose[2u * ib];
  let q = pose[2u * ib + 1u];
  pose_prev[2u * ib] = x;
  pose_prev[2u * ib + 1u] = q;
  let v = velocity[2u * ib].xyz + params.h * params.gravity;
  velocity[2u * ib] = vec4f(v, 0.0);
  pose[2u * ib] = vec4f(x.xyz + params.h * v, 0.0);
  let inv_local = body_mass[ib].inertia;
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
  pose[2u * ib + 1u] = integrate_body_orientation(q, w_star, g, params.h).q;`,
  },
  {
    name: 'solve_colour',
    over: 'slot',
    bindings: [
      ...jointBindings.map((j) => (j.name === 'pose' ? { name: j.name, access: 'read_write' as const } : j)),
      { name: 'body_mass', access: 'read' },
      { name: 'multiplier', access: 'read_write' },
    ],
    body: solveBody[form],
  },
  {
    name: 'update_velocities',
    over: 'body',
    bindings: [
      { name: 'pose', access: 'read' },
      { name: 'pose_prev', access: 'read' },
      { name: 'velocity', access: 'read_write' },
      { name: 'body_mass', access: 'read' },
      { name: 'midpoint_offset', access: 'read' },
    ],
    body: /* wgsl */ `
  if (body_mass[ib].mass == 0.0) { return; }
  // v = (x − x_prev)/h, damped
  let s = params.linear_factor / params.h;
  velocity[2u * ib] = vec4f((pose[2u * ib].xyz - pose_prev[2u * ib].xyz) * s, 0.0);
  // Δq = q q_prev⁻¹: Δq_v = w_p q_v − w q_v,p − q_v × q_v,p, Δq_w = q · q_prev; ω = ±2 Δq_v / h, damped
  let q = pose[2u * ib + 1u];
  let p = pose_prev[2u * ib + 1u];
  if (!is_isotropic(body_mass[ib].inertia)) {
    // the exact inverse of integrate's orientation update (rigid/body.wgsl.ts), damped
    velocity[2u * ib + 1u] = vec4f(params.angular_factor * angular_velocity_from_rotation(q, p, midpoint_offset[ib].xyz, params.h), 0.0);
    return;
  }
  let dq = p.w * q.xyz - q.w * p.xyz - cross(q.xyz, p.xyz);
  var a = 2.0 * params.angular_factor / params.h;
  if (dot(q, p) < 0.0) { a = -a; } // the shorter way round
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

/** The kernels of one form ('point' or 'distance': only solve_colour and compute_residual differ). */
export function kernelSpecs(variant: XpbdVariant): KernelSpec[] {
  return kernels(variant.form);
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
@compute @workgroup_size(${WORKGROUP_SIZE})
fn ${k.name}(@builtin(global_invocation_id) gid: vec3u) {
${entry}
${k.body}
}
`;
}
