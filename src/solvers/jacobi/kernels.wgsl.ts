/**
 * WGSL of jacobi-gpu (and gs-gpu, global-gpu, which build on it): the shared header (Params, the
 * body structs, rigid/body.wgsl.ts), the body stages 1, 2, 5 below (compute_inertia,
 * compute_free_velocity, compute_positions), and kernelSource, which wraps these and the row kernels
 * of rows/rows.wgsl.ts (stage 3, the iterations, compute_residual; every joint type) into one module
 * each; the f64 twin is cpu.ts, with the same stage names. Each kernel is its own module that
 * declares only the buffers it binds, so no kernel needs more than 8 storage buffers (the browser's
 * default limit).
 *
 * Body buffers (f32; legend: NB bodies incl. world anchors; the row buffers' legend is in rows/rows.wgsl.ts):
 *   pose[2·NB]              [2i] = (x_i, 0), [2i+1] = q_i = (x, y, z, w)
 *   velocity[2·NB]          [2i] = (ẋ_i, 0), [2i+1] = (ω_i, 0); holds V* during the iterations
 *   velocity_delta[2·NB]    ΔV^k = −h M⁻¹ Jᵀ λ^k (lin, ang)
 *   inverse_mass[NB]        { I_i⁻¹ (world, per step), m_i⁻¹, s_i, s^p_i } (s_i: the joints' mass-splitting factor
 *                           (n_i + 1)/2, written per frame by the contacts' cj_share where jacobi-gpu splits
 *                           its joints' masses, read by prepare_*; 1 from the upload otherwise, and unread;
 *                           s^p_i the position pass's, block-solver.ts positionShare, the same way)
 *   inverse_inertia_local[NB]  I_local⁻¹
 *   colour (uniform)        ColourRange of one colour, 256-byte slots (gs-gpu)
 *   midpoint_offset[NB]     (g, free): g = ω_m − ω* of a free body's gyroscopic step (rigid/body.wgsl.ts;
 *                           0 for spheres and jointed bodies), free = 1 where no constraint touches the body
 *   pseudo_velocity[2·NB]   P = (p, p_ω) of the split impulse's position pass (rows/rows.wgsl.ts solve_positions*),
 *                           zeroed by compute_free_velocity each step, read by compute_positions_split; only
 *                           where the solver splits (jacobi-gpu, gs-gpu on a contact scene)
 */

import { WORKGROUP_SIZE } from '../../gpu/frames.js';
import { rigidBodyWgsl } from '../../rigid/body.wgsl.js';
import { rowElementType, rowKernels, type RowBufferName, type RowKernelSpec } from '../../rows/rows.wgsl.js';
export { WORKGROUP_SIZE };

type Access = 'read' | 'read_write' | 'uniform';
export interface KernelSpec {
  name: string;
  /**
   * 'body' kernels run one thread per body, 'block' kernels one per row block, 'point_block' /
   * 'general_block' one per listed block of a rigid point joint / of the others (rows/rows.wgsl.ts),
   * 'joint' kernels one per joint of type `jointKind` (−1: the rigid point joints), 'colour' /
   * 'colour_point' one per listed block of a colour's general / point range (gs-gpu)
   */
  over: RowKernelSpec['over'];
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
  | 'colour'
  | 'midpoint_offset'
  | 'pseudo_velocity'
  | RowBufferName;

const elementType: Record<BufferName, string> = {
  params: 'Params',
  pose: 'array<vec4f>',
  velocity: 'array<vec4f>',
  velocity_delta: 'array<vec4f>',
  inverse_mass: 'array<InverseMass>',
  inverse_inertia_local: 'array<mat3x3f>',
  colour: 'ColourRange',
  midpoint_offset: 'array<vec4f>',
  pseudo_velocity: 'array<vec4f>',
  ...rowElementType,
};

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
  share: f32,        // s_i of the joints' mass splitting (jacobi-gpu on a contact scene: cj_share, per frame; else 1)
  position_share: f32, // s^p_i, the position pass's (block-solver.ts positionShare; cj_share, as share; else 1)
};

${rigidBodyWgsl}`;

/**
 * The body stages 1, 2, 5 (one thread per body), shared by jacobi-gpu, gs-gpu and global-gpu.
 * `anisotropic` = false (every moving body isotropic: rigid/body.ts anyAnisotropic) leaves the
 * gyroscopic step and the midpoint turn out: the isotropic arithmetic alone, bit for bit that branch.
 */
const bodyKernels = (anisotropic: boolean, split: boolean): KernelSpec[] => [
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
      ...(anisotropic
        ? ([
            { name: 'pose', access: 'read' },
            { name: 'inverse_inertia_local', access: 'read' },
            { name: 'midpoint_offset', access: 'read_write' },
          ] as const)
        : []),
      ...(split ? ([{ name: 'pseudo_velocity', access: 'read_write' }] as const) : []),
    ],
    body: /* wgsl */ `
  // V* = d V + h M⁻¹ F: gravity on every body that can move; d = damping factor; then the
  // gyroscopic step (E2) of a body that is not isotropic, keeping g = ω_m − ω* of a free one for compute_positions
  if (inverse_mass[ib].mass > 0.0) {
    velocity[2u * ib] = vec4f(params.linear_damping * velocity[2u * ib].xyz + params.h * params.gravity, 0.0);
    let w = params.angular_damping * velocity[2u * ib + 1u].xyz;
${
      anisotropic
        ? `    let inv_local = inverse_inertia_local[ib];
    if (is_isotropic(inv_local)) {
      velocity[2u * ib + 1u] = vec4f(w, 0.0);
    } else {
      let w_star = gyroscopic_step(w, pose[2u * ib + 1u], inv_local, params.h);
      velocity[2u * ib + 1u] = vec4f(w_star, 0.0);
      if (midpoint_offset[ib].w != 0.0) { midpoint_offset[ib] = vec4f(0.5 * (w - w_star), 1.0); }
    }`
        : `    velocity[2u * ib + 1u] = vec4f(w, 0.0);`
    }
  }
  velocity_delta[2u * ib] = vec4f(0.0);
  velocity_delta[2u * ib + 1u] = vec4f(0.0);${
    split
      ? `
  // the position pass starts from P = 0 (block-solver.ts solvePositions)
  pseudo_velocity[2u * ib] = vec4f(0.0);
  pseudo_velocity[2u * ib + 1u] = vec4f(0.0);`
      : ''
  }`,
  },
  {
    name: 'compute_positions',
    over: 'body',
    bindings: [
      { name: 'pose', access: 'read_write' },
      { name: 'velocity', access: 'read_write' },
      { name: 'velocity_delta', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      ...(anisotropic ? ([{ name: 'midpoint_offset', access: 'read' }] as const) : []),
    ],
    body: /* wgsl */ `
  if (inverse_mass[ib].mass == 0.0) { return; } // fixed: never moves
  // V = V* + ΔV; x += h v; q += ½ h (0, ω_orient) ⊗ q, then normalise; ω_orient = ω + g (E4)
  let v = velocity[2u * ib].xyz + velocity_delta[2u * ib].xyz;
  let w = velocity[2u * ib + 1u].xyz + velocity_delta[2u * ib + 1u].xyz;
  velocity[2u * ib] = vec4f(v, 0.0);
  pose[2u * ib] = vec4f(pose[2u * ib].xyz + params.h * v, 0.0);
${
    anisotropic
      ? `  let turn = integrate_body_orientation(pose[2u * ib + 1u], w, midpoint_offset[ib].xyz, params.h);
  velocity[2u * ib + 1u] = vec4f(turn.w, 0.0);
  pose[2u * ib + 1u] = turn.q;`
      : `  velocity[2u * ib + 1u] = vec4f(w, 0.0);
  pose[2u * ib + 1u] = quat_integrate(pose[2u * ib + 1u], w, params.h);`
  }`,
  },
  ...(split ? [computePositionsSplit(anisotropic)] : []),
];

/**
 * 5 with a split impulse (rigid/body.ts computePositionsSplit): V = V* + ΔV as compute_positions, but the pose
 * moves by V + P, P the position pass's pseudo-velocities, which V does not keep:
 *   x += h (v + p),  q ← Cay(h (ω + p_ω)) q
 * for a body whose turn is plain (isotropic, or jointed: g = 0); a free non-isotropic body (P = 0 there: no
 * joint touches it) turns by its gyroscopic midpoint as in compute_positions.
 */
function computePositionsSplit(anisotropic: boolean): KernelSpec {
  return {
    name: 'compute_positions_split',
    over: 'body',
    bindings: [
      { name: 'pose', access: 'read_write' },
      { name: 'velocity', access: 'read_write' },
      { name: 'velocity_delta', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'pseudo_velocity', access: 'read' },
      ...(anisotropic ? ([{ name: 'midpoint_offset', access: 'read' }] as const) : []),
    ],
    body: /* wgsl */ `
  if (inverse_mass[ib].mass == 0.0) { return; } // fixed: never moves
  let v = velocity[2u * ib].xyz + velocity_delta[2u * ib].xyz;
  let w = velocity[2u * ib + 1u].xyz + velocity_delta[2u * ib + 1u].xyz;
  velocity[2u * ib] = vec4f(v, 0.0);
  pose[2u * ib] = vec4f(pose[2u * ib].xyz + params.h * (v + pseudo_velocity[2u * ib].xyz), 0.0);
${
      anisotropic
        ? `  let g = midpoint_offset[ib].xyz;
  if (all(g == vec3f(0.0))) {
    velocity[2u * ib + 1u] = vec4f(w, 0.0);
    pose[2u * ib + 1u] = quat_integrate(pose[2u * ib + 1u], w + pseudo_velocity[2u * ib + 1u].xyz, params.h);
  } else {
    let turn = integrate_body_orientation(pose[2u * ib + 1u], w, g, params.h);
    velocity[2u * ib + 1u] = vec4f(turn.w, 0.0);
    pose[2u * ib + 1u] = turn.q;
  }`
        : `  velocity[2u * ib + 1u] = vec4f(w, 0.0);
  pose[2u * ib + 1u] = quat_integrate(pose[2u * ib + 1u], w + pseudo_velocity[2u * ib + 1u].xyz, params.h);`
    }`,
  };
}

/**
 * jacobi-gpu's kernels: the body stages 1, 2, 5 above and the row kernels of rows/rows.wgsl.ts
 * (evaluate_<type>, prepare_blocks, update_multipliers, update_velocities, compute_residual),
 * plus `extra` (gs-gpu's solve_colour; the position pass's kernels); `split`: the split impulse's
 * prepare (rows/rows.wgsl.ts rowSoftnessOf), P zeroed in compute_free_velocity, compute_positions_split;
 * `massSplit`: prepare_* invert the joints' split effective masses J S M⁻¹ Jᵀ, S = diag(inverse_mass.share)
 * (rows/block-solver.ts massShare).
 */
export function rowKernelSpecs(extra: RowKernelSpec[] = [], anisotropic = true, split = false, massSplit = false): KernelSpec[] {
  return [...bodyKernels(anisotropic, split), ...([...rowKernels(split, massSplit), ...extra] as KernelSpec[])];
}

/** Full WGSL of one kernel: shared header, its bindings, and its entry point. */
export function kernelSource(k: KernelSpec): string {
  const decls = [`@group(0) @binding(0) var<uniform> params: Params;`];
  k.bindings.forEach((b, i) => {
    const space = b.access === 'uniform' ? 'uniform' : `storage, ${b.access}`;
    decls.push(`@group(0) @binding(${i + 1}) var<${space}> ${b.name}: ${elementType[b.name]};`);
  });
  const index = threadIndex(k, 'gid.y * params.row_width + gid.x');
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

/** WGSL: the thread's index from `thread` (one per KernelSpec.over item), returning when past the last item. */
function threadIndex(k: KernelSpec, thread: string): string {
  switch (k.over) {
    case 'body':
      return `let ib = ${thread};\n  if (ib >= params.body_count) { return; }`;
    case 'block':
      return `let ib_block = ${thread};\n  if (ib_block >= params.block_count) { return; }`;
    case 'joint':
      // jointKind −1: the rigid point joints, the first point-joint records; 0: the other (soft) point joints
      if (k.jointKind === -1) return `let t = ${thread};\n  if (t >= params.rigid_point_count) { return; }\n  let j = params.joint_start[0] + t;`;
      if (k.jointKind === 0)
        return `let t = ${thread};\n  if (t >= params.joint_count[0] - params.rigid_point_count) { return; }\n  let j = params.joint_start[0] + params.rigid_point_count + t;`;
      return `let t = ${thread};\n  if (t >= params.joint_count[${k.jointKind}]) { return; }\n  let j = params.joint_start[${k.jointKind}] + t;`;
    case 'point_block':
      return `let t = ${thread};\n  if (t >= params.point_block_count) { return; }\n  let ib_block = ${k.list}[t];`;
    case 'general_block':
      return `let t = ${thread};\n  if (t >= params.general_block_count) { return; }\n  let ib_block = ${k.list}[params.point_block_count + t];`;
    case 'colour_point':
      return `let t = ${thread};\n  if (t >= colour.count) { return; }\n  let ib_block = block_list[colour.start + t];`;
    case 'colour':
      return `let t = ${thread};\n  if (t >= colour.general_count) { return; }\n  let ib_block = block_list[colour.general_start + t];`;
  }
}
