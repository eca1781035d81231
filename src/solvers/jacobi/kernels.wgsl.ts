/**
 * WGSL kernels of jacobi-gpu, one per stage of the reference text's algorithm
 * (shared/seeds/gpu-jacobi-point-constraints.txt); the f64 twin is cpu.ts, with
 * the same stage names. Each kernel is its own module that declares only the
 * buffers it binds, so no kernel needs more than 8 storage buffers (the
 * browser's default limit).
 *
 * Two kernel sets share the header (Params, the body structs, rigid/body.wgsl.ts) and the body
 * stages 1, 2, 5 below: jacobi-gpu and gs-gpu run the row kernels of rows/rows.wgsl.ts
 * (rowKernelSpecs: every joint type); the point-joint kernels below (kernelSpecs: stage 3,
 * update_multipliers, update_velocities, compute_residual on the point-joint buffers) are what
 * global-gpu's CG still runs on. The buffer legend below is the point kernels'; the row buffers'
 * is in rows/rows.wgsl.ts.
 *
 * Buffers (f32; legend: NB bodies incl. world anchors, NC constraints):
 *   pose[2·NB]              [2i] = (x_i, 0), [2i+1] = q_i = (x, y, z, w)
 *   velocity[2·NB]          [2i] = (ẋ_i, 0), [2i+1] = (ω_i, 0); holds V* during the iterations
 *   velocity_delta[2·NB]    ΔV^k = −h M⁻¹ Jᵀ λ^k (lin, ang)
 *   inverse_mass[NB]        { I_i⁻¹ (world, per step), m_i⁻¹ }
 *   inverse_inertia_local[NB]  I_local⁻¹
 *   ic0[NB+1], constraint_list[2·NC]   CSR body → constraints (built on the CPU)
 *   bodies[NC]              (i_ℓ, j_ℓ) = (ib0, ib1)
 *   anchors[2·NC]           r⁰_ℓ, r¹_ℓ in the local frames; [2ℓ].w = compliance α of a soft joint (0: rigid)
 *   jacobian[2·NC]          a = R(q_i) r⁰, b = R(q_j) r¹; J_ℓ = [I₃ −[a]× −I₃ [b]×] (8),
 *                           i.e. jw0 = −[a]×, jw1 = [b]× stored as their vectors
 *   violation[NC]           C_ℓ (3), w = h·α̃ = α/h (0: rigid)
 *   delassus_inv[NC]        A_ℓℓ⁻¹
 *   multiplier[NC]          λ_ℓ (force units: V = V* − h M⁻¹ Jᵀ λ)
 *   residual[NC]            (shared with the row kernels: per row there) |r_ℓ|², r_ℓ = (b − Aλᵏ)_ℓ = h⁻¹ (J_ℓ Vᵏ + β C_ℓ)   (30, 33): diagnostics only
 *   colour (uniform)        { start, count } of one constraint colour, 256-byte slots (gs-gpu)
 *   midpoint_offset[NB]     (g, free): g = ω_m − ω* of a free body's gyroscopic step (rigid/body.wgsl.ts;
 *                           0 for spheres and jointed bodies), free = 1 where no constraint touches the body
 */

import { WORKGROUP_SIZE } from '../../gpu/frames.js';
import { rigidBodyWgsl } from '../../rigid/body.wgsl.js';
import { rowElementType, rowKernels, type RowBufferName, type RowKernelSpec } from '../../rows/rows.wgsl.js';
export { WORKGROUP_SIZE };

type Access = 'read' | 'read_write' | 'uniform';
export interface KernelSpec {
  name: string;
  /**
   * 'body' kernels run one thread per body, 'constraint' kernels one per constraint (point kernels),
   * 'block' kernels one per row block, 'point_block' / 'general_block' one per listed block of a
   * rigid point joint / of the others (rows/rows.wgsl.ts), 'joint' kernels one per joint of type
   * `jointKind`, 'colour' kernels one per constraint of one colour (point kernels: ic = colour.start
   * + thread) or one per listed block of a colour's general range, 'colour_point' of its point range (gs-gpu)
   */
  over: 'body' | 'constraint' | 'colour' | 'block' | 'joint' | 'point_block' | 'general_block' | 'colour_point';
  jointKind?: number;
  /** the block list of a 'point_block' / 'general_block' kernel (row kernels) */
  list?: 'prepare_list' | 'block_list';
  bindings: { name: BufferName; access: Access }[];
  /** module-scope WGSL the body calls (row kernels) */
  helpers?: string;
  body: string;
}

export type BufferName =
  | 'params'
  | 'pose'
  | 'velocity'
  | 'velocity_delta'
  | 'inverse_mass'
  | 'inverse_inertia_local'
  | 'ic0'
  | 'constraint_list'
  | 'bodies'
  | 'anchors'
  | 'jacobian'
  | 'violation'
  | 'delassus_inv'
  | 'multiplier'
  | 'colour'
  | 'midpoint_offset'
  | RowBufferName;

const elementType: Record<BufferName, string> = {
  params: 'Params',
  pose: 'array<vec4f>',
  velocity: 'array<vec4f>',
  velocity_delta: 'array<vec4f>',
  inverse_mass: 'array<InverseMass>',
  inverse_inertia_local: 'array<mat3x3f>',
  ic0: 'array<u32>',
  constraint_list: 'array<u32>',
  bodies: 'array<vec2u>',
  anchors: 'array<vec4f>',
  jacobian: 'array<vec4f>',
  violation: 'array<vec4f>',
  delassus_inv: 'array<mat3x3f>',
  multiplier: 'array<vec4f>',
  colour: 'ColourRange',
  midpoint_offset: 'array<vec4f>',
  ...rowElementType,
};

/**
 * `let cv = J_ℓ Vᵏ + β C_ℓ` for constraint ic, with jw0 ω0 = −a0 × ω0 and jw1 ω1 = a1 × ω1:
 * shared by update_multipliers and compute_residual, which bind the buffers it reads.
 */
export const constraintVelocityError = /* wgsl */ `
  let b = bodies[ic];
  let v0 = velocity[2u * b.x].xyz + velocity_delta[2u * b.x].xyz;
  let w0 = velocity[2u * b.x + 1u].xyz + velocity_delta[2u * b.x + 1u].xyz;
  let v1 = velocity[2u * b.y].xyz + velocity_delta[2u * b.y].xyz;
  let w1 = velocity[2u * b.y + 1u].xyz + velocity_delta[2u * b.y + 1u].xyz;
  // a soft joint (violation.w = h·α̃ = α/h > 0): bias C/h and −h·α̃ λ instead of β C (cpu.ts, softness)
  let soft = violation[ic].w;
  let bias = select(params.baumgarte, 1.0 / params.h, soft > 0.0);
  let cv = (v0 - v1) - cross(jacobian[2u * ic].xyz, w0) + cross(jacobian[2u * ic + 1u].xyz, w1)
         + bias * violation[ic].xyz - soft * multiplier[ic].xyz;`;

/**
 * WGSL: lin, ang = Σ_ℓ∋i J_ℓ,iᵀ v_ℓ over body `ib`'s constraints (CSR ic0 / constraint_list), with
 * J_ℓ,0ᵀ v = (v, a0 × v) and J_ℓ,1ᵀ v = (−v, −a1 × v) (jwᵀ = −jw). `source` is a per-constraint vec4f
 * buffer read as .xyz. Shared by update_velocities (v = λ) and global-gpu's A·d (v = d), as the CPU
 * solvers share gatherImpulses.
 */
export function gatherJacobianTranspose(source: string): string {
  return /* wgsl */ `
  var lin = vec3f(0.0);
  var ang = vec3f(0.0);
  for (var k = ic0[ib]; k < ic0[ib + 1u]; k++) {
    let ic = constraint_list[k];
    let v = ${source}[ic].xyz;
    if (bodies[ic].x == ib) {
      lin += v;
      ang += cross(jacobian[2u * ic].xyz, v);
    } else {
      lin -= v;
      ang -= cross(jacobian[2u * ic + 1u].xyz, v);
    }
  }`;
}

export const constraintVelocityBindings: { name: BufferName; access: Access }[] = [
  { name: 'bodies', access: 'read' },
  { name: 'velocity', access: 'read' },
  { name: 'velocity_delta', access: 'read' },
  { name: 'jacobian', access: 'read' },
  { name: 'violation', access: 'read' },
];

/** Params uniform: must match JacobiGpuSolver.writeParams. */
const header = /* wgsl */ `
struct Params {
  gravity: vec3f,
  h: f32,            // solver step (frame dt / substeps), s
  baumgarte: f32,    // β in 1/s (= beta / h)
  warm_start: f32,   // λ⁰ = warm_start · λ(previous step)
  body_count: u32,
  constraint_count: u32,
  row_width: u32,    // threads per dispatch row (2-D dispatch for big scenes)
  linear_damping: f32,   // v ← v · linear_damping per step: max(0, 1 − μ_lin h)
  angular_damping: f32,  // ω ← ω · angular_damping per step: max(0, 1 − μ_ang h)
  block_count: u32,      // row blocks (row kernels; rows/rows.wgsl.ts)
  joint_start: vec4u,    // first joint record of each type (point, distance, hinge, fixed) in 'joint'
  joint_count: vec4u,    // joints of each type
  point_block_count: u32,   // blocks of rigid point joints: prepare_list / block_list[0 ..)
  general_block_count: u32, // the other blocks: prepare_list / block_list[point_block_count ..)
  rigid_point_count: u32,   // the first point-joint records that are rigid (evaluate_point_rigid; the rest: evaluate_point)
};
struct ColourRange {
  start: u32,        // first constraint of the colour (constraints are stored colour by colour); row kernels: first of its point blocks in block_list
  count: u32,        // constraints in the colour; row kernels: its point blocks
  general_start: u32, // row kernels: first of the colour's other joints' first blocks in block_list
  general_count: u32, // row kernels: those blocks
};
struct InverseMass {
  inertia: mat3x3f,  // I⁻¹ in the world frame
  mass: f32,         // m⁻¹ (0 for fixed bodies and world anchors)
};

${rigidBodyWgsl}`;

const kernels: KernelSpec[] = [
  {
    name: 'compute_inertia',
    over: 'body',
    bindings: [
      { name: 'pose', access: 'read' },
      { name: 'inverse_inertia_local', access: 'read' },
      { name: 'inverse_mass', access: 'read_write' },
    ],
    body: /* wgsl */ `
  // I⁻¹_world = R I⁻¹_local Rᵀ
  inverse_mass[ib].inertia = world_inverse_inertia(pose[2u * ib + 1u], inverse_inertia_local[ib]);`,
  },
  {
    name: 'compute_free_velocity',
    over: 'body',
    bindings: [
      { name: 'velocity', access: 'read_write' },
      { name: 'velocity_delta', access: 'read_write' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'pose', access: 'read' },
      { name: 'inverse_inertia_local', access: 'read' },
      { name: 'midpoint_offset', access: 'read_write' },
    ],
    body: /* wgsl */ `
  // V* = d V + h M⁻¹ F: gravity on every body that can move; d = damping factor; then the
  // gyroscopic step (E2) of a body that is not isotropic, keeping g = ω_m − ω* of a free one for compute_positions
  if (inverse_mass[ib].mass > 0.0) {
    velocity[2u * ib] = vec4f(params.linear_damping * velocity[2u * ib].xyz + params.h * params.gravity, 0.0);
    let w = params.angular_damping * velocity[2u * ib + 1u].xyz;
    let inv_local = inverse_inertia_local[ib];
    if (is_isotropic(inv_local)) {
      velocity[2u * ib + 1u] = vec4f(w, 0.0);
    } else {
      let w_star = gyroscopic_step(w, pose[2u * ib + 1u], inv_local, params.h);
      velocity[2u * ib + 1u] = vec4f(w_star, 0.0);
      if (midpoint_offset[ib].w != 0.0) { midpoint_offset[ib] = vec4f(0.5 * (w - w_star), 1.0); }
    }
  }
  velocity_delta[2u * ib] = vec4f(0.0);
  velocity_delta[2u * ib + 1u] = vec4f(0.0);`,
  },
  {
    name: 'compute_violation_and_jacobian_and_delassus',
    over: 'constraint',
    bindings: [
      { name: 'bodies', access: 'read' },
      { name: 'pose', access: 'read' },
      { name: 'anchors', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'violation', access: 'read_write' },
      { name: 'jacobian', access: 'read_write' },
      { name: 'delassus_inv', access: 'read_write' },
      { name: 'multiplier', access: 'read_write' },
    ],
    body: /* wgsl */ `
  let b = bodies[ic];
  let a0 = quat_rotate(pose[2u * b.x + 1u], anchors[2u * ic].xyz);
  let a1 = quat_rotate(pose[2u * b.y + 1u], anchors[2u * ic + 1u].xyz);
  // C_ℓ = x_i − x_j + R(q_i) r⁰ − R(q_j) r¹   (3); w: h·α̃ = α/h of a soft joint (α in anchors[2ℓ].w)
  let soft = anchors[2u * ic].w / params.h;
  violation[ic] = vec4f(pose[2u * b.x].xyz - pose[2u * b.y].xyz + a0 - a1, soft);
  // J_ℓ = [I₃  −[a0]×  −I₃  [a1]×]   (8)
  jacobian[2u * ic] = vec4f(a0, 0.0);
  jacobian[2u * ic + 1u] = vec4f(a1, 0.0);
  // A_ℓℓ = J_ℓ M⁻¹ J_ℓᵀ = (m_i⁻¹ + m_j⁻¹) I₃ − [a0]× I_i⁻¹ [a0]× − [a1]× I_j⁻¹ [a1]×
  let m0 = inverse_mass[b.x];
  let m1 = inverse_mass[b.y];
  let s0 = cross_mat(a0);
  let s1 = cross_mat(a1);
  let lin = m0.mass + m1.mass + soft / params.h; // + α̃ I₃ for a soft joint
  let A = mat3x3f(vec3f(lin, 0.0, 0.0), vec3f(0.0, lin, 0.0), vec3f(0.0, 0.0, lin))
        - s0 * m0.inertia * s0 - s1 * m1.inertia * s1;
  // A⁻¹: rows are (c1×c2, c2×c0, c0×c1) / det for columns c0, c1, c2
  let det = dot(A[0], cross(A[1], A[2]));
  var inv = mat3x3f();
  if (det != 0.0) {
    inv = transpose(mat3x3f(cross(A[1], A[2]), cross(A[2], A[0]), cross(A[0], A[1]))) * (1.0 / det);
  }
  delassus_inv[ic] = inv;
  // warm start: λ⁰ = f · λ(previous step)
  multiplier[ic] = multiplier[ic] * params.warm_start;`,
  },
  {
    name: 'update_multipliers',
    over: 'constraint',
    bindings: [...constraintVelocityBindings, { name: 'delassus_inv', access: 'read' }, { name: 'multiplier', access: 'read_write' }],
    body: /* wgsl */ `${constraintVelocityError}
  // λ_ℓ += h⁻¹ A_ℓℓ⁻¹ (J_ℓ V^k + β C_ℓ)   (37)
  multiplier[ic] = vec4f(multiplier[ic].xyz + delassus_inv[ic] * cv * (1.0 / params.h), 0.0);`,
  },
  {
    // diagnostics (not part of a step): |r_ℓ|² with r_ℓ = (b − Aλᵏ)_ℓ = h⁻¹ (J_ℓ Vᵏ + β C_ℓ)   (30, 33)
    name: 'compute_residual',
    over: 'constraint',
    bindings: [...constraintVelocityBindings, { name: 'multiplier', access: 'read' }, { name: 'residual', access: 'read_write' }],
    body: /* wgsl */ `${constraintVelocityError}
  let r = cv * (1.0 / params.h);
  residual[ic] = dot(r, r);`,
  },
  {
    name: 'update_velocities',
    over: 'body',
    bindings: [
      { name: 'ic0', access: 'read' },
      { name: 'constraint_list', access: 'read' },
      { name: 'bodies', access: 'read' },
      { name: 'jacobian', access: 'read' },
      { name: 'multiplier', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'velocity_delta', access: 'read_write' },
    ],
    body: /* wgsl */ `
  // ΔV_i = −h M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ λ_ℓ   (34)${gatherJacobianTranspose('multiplier')}
  let m = inverse_mass[ib];
  velocity_delta[2u * ib] = vec4f(-params.h * m.mass * lin, 0.0);
  velocity_delta[2u * ib + 1u] = vec4f(-params.h * (m.inertia * ang), 0.0);`,
  },
  {
    name: 'compute_positions',
    over: 'body',
    bindings: [
      { name: 'pose', access: 'read_write' },
      { name: 'velocity', access: 'read_write' },
      { name: 'velocity_delta', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'midpoint_offset', access: 'read' },
    ],
    body: /* wgsl */ `
  if (inverse_mass[ib].mass == 0.0) { return; } // fixed: never moves
  // V = V* + ΔV; x += h v; q += ½ h (0, ω_orient) ⊗ q, then normalise; ω_orient = ω + g (E4)
  let v = velocity[2u * ib].xyz + velocity_delta[2u * ib].xyz;
  let w = velocity[2u * ib + 1u].xyz + velocity_delta[2u * ib + 1u].xyz;
  velocity[2u * ib] = vec4f(v, 0.0);
  pose[2u * ib] = vec4f(pose[2u * ib].xyz + params.h * v, 0.0);
  let turn = integrate_body_orientation(pose[2u * ib + 1u], w, midpoint_offset[ib].xyz, params.h);
  velocity[2u * ib + 1u] = vec4f(turn.w, 0.0);
  pose[2u * ib + 1u] = turn.q;`,
  },
];

/** The point-joint kernels (global-gpu's CG runs on their buffers). */
export function kernelSpecs(): KernelSpec[] {
  return kernels;
}

/** The stage names of the body kernels (stages 1, 2, 5), shared by both kernel sets. */
const bodyStages = ['compute_inertia', 'compute_free_velocity', 'compute_positions'];

/**
 * jacobi-gpu's kernels on rows: the body stages 1, 2, 5 above and the row kernels of
 * rows/rows.wgsl.ts (evaluate_<type>, prepare_blocks, update_multipliers, update_velocities,
 * compute_residual), plus `extra` (gs-gpu's solve_colour).
 */
export function rowKernelSpecs(extra: RowKernelSpec[] = []): KernelSpec[] {
  return [...kernels.filter((k) => bodyStages.includes(k.name)), ...([...rowKernels(), ...extra] as KernelSpec[])];
}

/** Full WGSL of one kernel: shared header, its bindings, and its entry point. */
export function kernelSource(k: KernelSpec): string {
  const decls = [`@group(0) @binding(0) var<uniform> params: Params;`];
  k.bindings.forEach((b, i) => {
    const space = b.access === 'uniform' ? 'uniform' : `storage, ${b.access}`;
    decls.push(`@group(0) @binding(${i + 1}) var<${space}> ${b.name}: ${elementType[b.name]};`);
  });
  const thread = 'gid.y * params.row_width + gid.x';
  const rowKernel = k.helpers !== undefined;
  const index =
    k.over === 'body'
      ? `let ib = ${thread};\n  if (ib >= params.body_count) { return; }`
      : k.over === 'constraint'
        ? `let ic = ${thread};\n  if (ic >= params.constraint_count) { return; }`
        : k.over === 'block'
          ? `let ib_block = ${thread};\n  if (ib_block >= params.block_count) { return; }`
          : k.over === 'joint' && k.jointKind === -1
            ? `let t = ${thread};\n  if (t >= params.rigid_point_count) { return; }\n  let j = params.joint_start[0] + t;`
            : k.over === 'joint' && k.jointKind === 0
            ? `let t = ${thread};\n  if (t >= params.joint_count[0] - params.rigid_point_count) { return; }\n  let j = params.joint_start[0] + params.rigid_point_count + t;`
            : k.over === 'joint'
            ? `let t = ${thread};\n  if (t >= params.joint_count[${k.jointKind}]) { return; }\n  let j = params.joint_start[${k.jointKind}] + t;`
            : k.over === 'point_block'
              ? `let t = ${thread};\n  if (t >= params.point_block_count) { return; }\n  let ib_block = ${k.list}[t];`
              : k.over === 'general_block'
                ? `let t = ${thread};\n  if (t >= params.general_block_count) { return; }\n  let ib_block = ${k.list}[params.point_block_count + t];`
                : k.over === 'colour_point'
                  ? `let t = ${thread};\n  if (t >= colour.count) { return; }\n  let ib_block = block_list[colour.start + t];`
                  : rowKernel
                    ? `let t = ${thread};\n  if (t >= colour.general_count) { return; }\n  let ib_block = block_list[colour.general_start + t];`
                    : `let t = ${thread};\n  if (t >= colour.count) { return; }\n  let ic = colour.start + t;`;
  return `${header}
${decls.join('\n')}
${k.helpers ?? ''}

@compute @workgroup_size(${WORKGROUP_SIZE})
fn ${k.name}(@builtin(global_invocation_id) gid: vec3u) {
  ${index}
${k.body}
}
`;
}
