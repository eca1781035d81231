/**
 * WGSL kernels of global-gpu: the preconditioned conjugate gradient of global-cpu
 * (src/math/cg.ts, global/delassus.ts) on A λ = b, A = J M⁻¹ Jᵀ (+ α̃ I), b of (8),
 * in f32, with every scalar (α, β, rᵀz, ‖r‖², ‖b‖²) computed on the GPU: nothing
 * is read back during a step. Stages 1–3 and 5 and the impulses ΔV = −h M⁻¹ Jᵀ λ
 * are jacobi-gpu's kernels (jacobi/kernels.wgsl.ts), on jacobi-gpu's buffers.
 *
 * One solve (after stage 3 and the warm start λ⁰ = f λ_prev):
 *   update_velocities (jacobi)  ΔV = −h M⁻¹ Jᵀ λ⁰                              (5), (34)
 *   cg_start      r = h⁻¹ (J (V* + ΔV) + β C) − α̃ λ⁰ = b − A λ⁰,  b = h⁻¹ (J V* + β C)   (8), (30)
 *   cg_start_d    z = D⁻¹ r, d = z                           (D⁻¹: the A_ℓℓ⁻¹ of stage 3)
 *   cg_init       δ = rᵀz, ‖r‖², ‖b‖²; done when ‖r‖ ≤ tol ‖b‖
 *   N × ( cg_apply_jt   W_i = M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ d_ℓ          (per body, the gather of (34))
 *         cg_apply_j    q_ℓ = J_ℓ W + α̃ d_ℓ = (A d)_ℓ,  Σ dᵀq per workgroup          (8)
 *         cg_alpha      α = δ / dᵀq                        (one workgroup)
 *         cg_update_xr  λ += α d,  r −= α q,  z = D⁻¹ r,  Σ rᵀz, Σ rᵀr per workgroup
 *         cg_beta       β = rᵀz / δ, δ = rᵀz;  done when ‖r‖ ≤ tol ‖b‖   (one workgroup)
 *         cg_update_d   d = z + β d )
 *   cg_finish     count the iterations used and unconverged solves
 *   update_velocities (jacobi)  ΔV = −h M⁻¹ Jᵀ λ, then compute_positions
 * Once `done` (converged, or a breakdown dᵀAd ≤ 0), α = β = 0, and the kernels that set
 * `done` (cg_init, cg_alpha, cg_beta) zero the workgroup counts of cg_indirect, from which
 * the four per-constraint and per-body iteration kernels are dispatched
 * (dispatchWorkgroupsIndirect): the rest of the N recorded iterations run only cg_alpha
 * and cg_beta, one workgroup each, which write cg_indirect and so are dispatched directly
 * (a buffer cannot be both a dispatch's indirect arguments and writable in it).
 * An on-GPU convergence flag, no readback.
 *
 * Reductions: each constraint-kernel workgroup sums its 64 threads' terms in workgroup
 * memory (a tree) and writes one vec4f partial (x: rᵀz or dᵀq, y: ‖r‖², z: ‖b‖²); a
 * single 64-thread workgroup then sums the partials. Sums in f32.
 *
 * Buffers (legend as in jacobi/kernels.wgsl.ts; f32):
 *   cg (uniform)        CgParams below
 *   cg_r[NC], cg_d[NC], cg_q[NC]   residual r, direction d, q = A d (vec4f, w = 0)
 *   cg_w[2·NB]          W = M⁻¹ Jᵀ d: (lin, 0), (ang, 0) per body
 *   cg_partials[P]      one vec4f per workgroup of a constraint dispatch
 *   cg_scalars          CgScalars below
 *   cg_indirect[12]     dispatch arguments (x, y, z, pad) of the iteration kernels: [0] per
 *                       constraint, [4] per body, [8] one workgroup; zeros once done
 * and jacobi-gpu's bodies, jacobian (lever arms a, b), violation (C, h·α̃), inverse_mass,
 * ic0, constraint_list, velocity (V*), velocity_delta, multiplier (λ), delassus_inv.
 * Invariant: each per-constraint kernel writes only its own constraint's entries and
 * its workgroup's partial; cg_apply_jt writes only its body's W; the one-workgroup
 * kernels alone write cg_scalars. Dispatches of one pass are ordered (WebGPU), so each
 * kernel sees the previous one's writes.
 */
import { WORKGROUP_SIZE } from '../../gpu/frames.js';
import { gatherJacobianTranspose } from '../jacobi/kernels.wgsl.js';

export type CgBufferName =
  | 'cg'
  | 'cg_r'
  | 'cg_d'
  | 'cg_q'
  | 'cg_w'
  | 'cg_partials'
  | 'cg_scalars'
  | 'cg_indirect'
  // jacobi-gpu's buffers these kernels bind
  | 'bodies'
  | 'jacobian'
  | 'violation'
  | 'inverse_mass'
  | 'ic0'
  | 'constraint_list'
  | 'velocity'
  | 'velocity_delta'
  | 'multiplier'
  | 'delassus_inv';

const elementType: Record<CgBufferName, string> = {
  cg: 'CgParams',
  cg_r: 'array<vec4f>',
  cg_d: 'array<vec4f>',
  cg_q: 'array<vec4f>',
  cg_w: 'array<vec4f>',
  cg_partials: 'array<vec4f>',
  cg_scalars: 'CgScalars',
  cg_indirect: 'array<u32, 12>',
  bodies: 'array<vec2u>',
  jacobian: 'array<vec4f>',
  violation: 'array<vec4f>',
  inverse_mass: 'array<InverseMass>',
  ic0: 'array<u32>',
  constraint_list: 'array<u32>',
  velocity: 'array<vec4f>',
  velocity_delta: 'array<vec4f>',
  multiplier: 'array<vec4f>',
  delassus_inv: 'array<mat3x3f>',
};

/** Bytes of the CgParams uniform (GlobalGpuSolver.writeCgParams fills it). */
export const CG_PARAMS_BYTES = 48;
/** Bytes of CgScalars (GlobalGpuSolver reads the counters from it). */
export const CG_SCALARS_BYTES = 48;
/** Byte offsets in cg_indirect of the dispatch arguments per constraint, per body, and of one workgroup */
export const cgIndirectOffset = { constraint: 0, body: 16, single: 32 } as const;
/** u32 index of each counter in CgScalars */
export const cgCounter = { iterations: 6, totalIterations: 7, steps: 8, unconverged: 9, converged: 10 } as const;

const header = /* wgsl */ `
struct CgParams {
  constraint_count: u32,
  body_count: u32,
  row_width: u32,      // threads per dispatch row (2-D dispatch for big scenes)
  partial_count: u32,  // workgroups of a constraint dispatch = partials written
  h: f32,              // solver step, s
  baumgarte: f32,      // β in 1/s
  tolerance2: f32,     // (relative tolerance on ‖r‖/‖b‖)²
  pad: f32,
  constraint_groups: vec2u, // workgroups (x, y) of a constraint dispatch
  body_groups: vec2u,       // workgroups (x, y) of a body dispatch
};
struct CgScalars {
  delta: f32,          // rᵀz
  alpha: f32,
  beta: f32,
  rhs2: f32,           // ‖b‖²
  residual2: f32,      // ‖r‖² (the recurrence's)
  done: u32,           // 1: converged or broken down, α = β = 0 from then on
  iterations: u32,     // CG iterations of this solve
  total_iterations: u32, // summed over the solves since creation
  steps: u32,          // solves since creation
  unconverged: u32,    // solves that ended above the tolerance
  converged: u32,      // this solve reached the tolerance
  pad: u32,
};
// jacobi-gpu's per-body inverse mass (jacobi/kernels.wgsl.ts, struct InverseMass: same layout)
struct InverseMass {
  inertia: mat3x3f,    // I⁻¹ in the world frame
  mass: f32,           // m⁻¹ (0 for fixed bodies and world anchors)
};

var<workgroup> sums: array<vec4f, ${WORKGROUP_SIZE}>;

// Σ over the workgroup's threads of v (a tree in workgroup memory); call from uniform control flow
fn workgroup_sum(lid: u32, v: vec4f) -> vec4f {
  sums[lid] = v;
  workgroupBarrier();
  for (var s = ${WORKGROUP_SIZE / 2}u; s > 0u; s = s >> 1u) {
    if (lid < s) { sums[lid] = sums[lid] + sums[lid + s]; }
    workgroupBarrier();
  }
  return sums[0];
}
`;

/** cg_indirect := the full workgroup counts (on) or none (off, the solve is done) */
const setDispatch = /* wgsl */ `
fn set_dispatch(on: bool) {
  let c = select(vec2u(0u), cg.constraint_groups, on);
  let b = select(vec2u(0u), cg.body_groups, on);
  let s = select(0u, 1u, on);
  cg_indirect[0] = c.x; cg_indirect[1] = c.y; cg_indirect[2] = 1u;
  cg_indirect[4] = b.x; cg_indirect[5] = b.y; cg_indirect[6] = 1u;
  cg_indirect[8] = s; cg_indirect[9] = 1u; cg_indirect[10] = 1u;
}`;

type Access = 'read' | 'read_write' | 'uniform';
export interface CgKernelSpec {
  name: string;
  /** one thread per constraint (with a per-workgroup partial), per body, or one workgroup */
  over: 'constraint' | 'body' | 'single';
  bindings: { name: CgBufferName; access: Access }[];
  /** module-scope WGSL the body calls */
  helpers?: string;
  body: string;
}

/** z = D⁻¹ r for constraint ic */
const precondition = /* wgsl */ `delassus_inv[ic] * cg_r[ic].xyz`;

/** the sum of the partials of the last constraint dispatch, in every thread of the one workgroup */
const sumPartials = /* wgsl */ `
  var part = vec4f(0.0);
  for (var i = lid; i < cg.partial_count; i += ${WORKGROUP_SIZE}u) { part += cg_partials[i]; }
  let total = workgroup_sum(lid, part);`;

const kernels: CgKernelSpec[] = [
  {
    name: 'cg_start',
    over: 'constraint',
    bindings: [
      { name: 'bodies', access: 'read' },
      { name: 'velocity', access: 'read' },
      { name: 'velocity_delta', access: 'read' },
      { name: 'jacobian', access: 'read' },
      { name: 'violation', access: 'read' },
      { name: 'multiplier', access: 'read' },
      { name: 'cg_r', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {
    let b = bodies[ic];
    let a0 = jacobian[2u * ic].xyz;
    let a1 = jacobian[2u * ic + 1u].xyz;
    // J_ℓ V = v_i − v_j + ω_i × a − ω_j × b   (8)
    let jv_star = velocity[2u * b.x].xyz - velocity[2u * b.y].xyz
                + cross(velocity[2u * b.x + 1u].xyz, a0) - cross(velocity[2u * b.y + 1u].xyz, a1);
    let jdv = velocity_delta[2u * b.x].xyz - velocity_delta[2u * b.y].xyz
            + cross(velocity_delta[2u * b.x + 1u].xyz, a0) - cross(velocity_delta[2u * b.y + 1u].xyz, a1);
    // a soft joint (violation.w = h·α̃ > 0): bias C/h and α̃ on the diagonal (jacobi-cpu, softness)
    let soft = violation[ic].w;
    let bias = select(cg.baumgarte, 1.0 / cg.h, soft > 0.0);
    // b = h⁻¹ (J V* + β C)   (8);  r = b − A λ⁰ = h⁻¹ (J (V* + ΔV) + β C) − α̃ λ⁰,  ΔV = −h M⁻¹ Jᵀ λ⁰   (5), (30)
    let rhs = (jv_star + bias * violation[ic].xyz) / cg.h;
    let r = rhs + jdv / cg.h - (soft / cg.h) * multiplier[ic].xyz;
    cg_r[ic] = vec4f(r, 0.0);
    term = vec4f(0.0, dot(r, r), dot(rhs, rhs), 0.0);
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = total; }`,
  },
  {
    name: 'cg_start_d',
    over: 'constraint',
    bindings: [
      { name: 'delassus_inv', access: 'read' },
      { name: 'cg_r', access: 'read' },
      { name: 'cg_d', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {
    // z = D⁻¹ r, d = z
    let z = ${precondition};
    cg_d[ic] = vec4f(z, 0.0);
    term = vec4f(dot(cg_r[ic].xyz, z), 0.0, 0.0, 0.0);
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = vec4f(total.x, cg_partials[wg].yz, 0.0); }`,
  },
  {
    name: 'cg_init',
    over: 'single',
    bindings: [
      { name: 'cg_partials', access: 'read' },
      { name: 'cg_scalars', access: 'read_write' },
      { name: 'cg_indirect', access: 'read_write' },
    ],
    helpers: setDispatch,
    body: /* wgsl */ `${sumPartials}
  if (lid == 0u) {
    cg_scalars.delta = total.x;
    cg_scalars.residual2 = total.y;
    cg_scalars.rhs2 = total.z;
    cg_scalars.alpha = 0.0;
    cg_scalars.beta = 0.0;
    cg_scalars.iterations = 0u;
    cg_scalars.converged = select(0u, 1u, total.y <= cg.tolerance2 * total.z);
    cg_scalars.done = cg_scalars.converged;
    cg_scalars.steps += 1u;
    set_dispatch(cg_scalars.done == 0u);
  }`,
  },
  {
    name: 'cg_apply_jt',
    over: 'body',
    bindings: [
      { name: 'ic0', access: 'read' },
      { name: 'constraint_list', access: 'read' },
      { name: 'bodies', access: 'read' },
      { name: 'jacobian', access: 'read' },
      { name: 'cg_d', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'cg_w', access: 'read_write' },
    ],
    body: /* wgsl */ `
  if (ib >= cg.body_count) { return; }
  // W_i = M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ d_ℓ${gatherJacobianTranspose('cg_d')}
  let m = inverse_mass[ib];
  cg_w[2u * ib] = vec4f(m.mass * lin, 0.0);
  cg_w[2u * ib + 1u] = vec4f(m.inertia * ang, 0.0);`,
  },
  {
    name: 'cg_apply_j',
    over: 'constraint',
    bindings: [
      { name: 'bodies', access: 'read' },
      { name: 'jacobian', access: 'read' },
      { name: 'violation', access: 'read' },
      { name: 'cg_w', access: 'read' },
      { name: 'cg_d', access: 'read' },
      { name: 'cg_q', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {
    let b = bodies[ic];
    // q = (A d)_ℓ = J_ℓ W + α̃ d_ℓ = W_lin,i − W_lin,j + W_ang,i × a − W_ang,j × b + α̃ d_ℓ   (8), (36)
    let d = cg_d[ic].xyz;
    let q = cg_w[2u * b.x].xyz - cg_w[2u * b.y].xyz
          + cross(cg_w[2u * b.x + 1u].xyz, jacobian[2u * ic].xyz) - cross(cg_w[2u * b.y + 1u].xyz, jacobian[2u * ic + 1u].xyz)
          + (violation[ic].w / cg.h) * d;
    cg_q[ic] = vec4f(q, 0.0);
    term = vec4f(dot(d, q), 0.0, 0.0, 0.0);
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = total; }`,
  },
  {
    name: 'cg_alpha',
    over: 'single',
    bindings: [
      { name: 'cg_partials', access: 'read' },
      { name: 'cg_scalars', access: 'read_write' },
      { name: 'cg_indirect', access: 'read_write' },
    ],
    helpers: setDispatch,
    body: /* wgsl */ `${sumPartials}
  if (lid == 0u) {
    // α = δ / dᵀAd; a curvature ≤ 0 (converged to rounding, or A not PSD) ends the solve
    let curvature = total.x;
    if (cg_scalars.done == 0u && curvature > 0.0 && cg_scalars.delta > 0.0) {
      cg_scalars.alpha = cg_scalars.delta / curvature;
    } else {
      cg_scalars.alpha = 0.0;
      cg_scalars.done = 1u;
      set_dispatch(false); // cg_update_xr and cg_update_d of this iteration are skipped too: α = 0
    }
  }`,
  },
  {
    name: 'cg_update_xr',
    over: 'constraint',
    bindings: [
      { name: 'cg_scalars', access: 'read' },
      { name: 'cg_d', access: 'read' },
      { name: 'cg_q', access: 'read' },
      { name: 'delassus_inv', access: 'read' },
      { name: 'multiplier', access: 'read_write' },
      { name: 'cg_r', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {
    // λ += α d, r −= α q; z = D⁻¹ r
    let alpha = cg_scalars.alpha;
    multiplier[ic] = vec4f(multiplier[ic].xyz + alpha * cg_d[ic].xyz, 0.0);
    let r = cg_r[ic].xyz - alpha * cg_q[ic].xyz;
    cg_r[ic] = vec4f(r, 0.0);
    let z = ${precondition};
    term = vec4f(dot(r, z), dot(r, r), 0.0, 0.0);
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = total; }`,
  },
  {
    name: 'cg_beta',
    over: 'single',
    bindings: [
      { name: 'cg_partials', access: 'read' },
      { name: 'cg_scalars', access: 'read_write' },
      { name: 'cg_indirect', access: 'read_write' },
    ],
    helpers: setDispatch,
    body: /* wgsl */ `${sumPartials}
  if (lid == 0u) {
    if (cg_scalars.done == 0u) {
      cg_scalars.iterations += 1u;
      cg_scalars.residual2 = total.y;
      if (total.y <= cg.tolerance2 * cg_scalars.rhs2) {
        cg_scalars.converged = 1u;
        cg_scalars.done = 1u;
        cg_scalars.beta = 0.0;
        set_dispatch(false);
      } else {
        // β = rᵀz (new) / rᵀz (old)
        cg_scalars.beta = total.x / cg_scalars.delta;
        cg_scalars.delta = total.x;
      }
    } else {
      cg_scalars.beta = 0.0;
    }
  }`,
  },
  {
    name: 'cg_update_d',
    over: 'constraint',
    bindings: [
      { name: 'cg_scalars', access: 'read' },
      { name: 'delassus_inv', access: 'read' },
      { name: 'cg_r', access: 'read' },
      { name: 'cg_d', access: 'read_write' },
    ],
    body: /* wgsl */ `
  if (!in_range) { return; }
  // d = z + β d, z = D⁻¹ r
  cg_d[ic] = vec4f(${precondition} + cg_scalars.beta * cg_d[ic].xyz, 0.0);`,
  },
  {
    name: 'cg_finish',
    over: 'single',
    bindings: [{ name: 'cg_scalars', access: 'read_write' }],
    body: /* wgsl */ `
  _ = cg.pad; // every kernel binds cg at binding 0 (a 'auto' layout keeps only what is used)
  if (lid == 0u) {
    cg_scalars.total_iterations += cg_scalars.iterations;
    if (cg_scalars.converged == 0u) { cg_scalars.unconverged += 1u; }
  }`,
  },
];

export function cgKernelSpecs(): CgKernelSpec[] {
  return kernels;
}

/** Full WGSL of one kernel: header, its bindings (binding 0: the cg uniform), its entry point. */
export function cgKernelSource(k: CgKernelSpec): string {
  const decls = [`@group(0) @binding(0) var<uniform> cg: CgParams;`];
  k.bindings.forEach((b, i) => {
    const space = b.access === 'uniform' ? 'uniform' : `storage, ${b.access}`;
    decls.push(`@group(0) @binding(${i + 1}) var<${space}> ${b.name}: ${elementType[b.name]};`);
  });
  const builtins =
    '@builtin(global_invocation_id) gid: vec3u, @builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u';
  const index =
    k.over === 'constraint'
      ? `let ic = gid.y * cg.row_width + gid.x;\n  let in_range = ic < cg.constraint_count;\n  let wg = wid.y * nwg.x + wid.x;`
      : k.over === 'body'
        ? `let ib = gid.y * cg.row_width + gid.x;`
        : '';
  return `${header}
${decls.join('\n')}
${k.helpers ?? ''}

@compute @workgroup_size(${WORKGROUP_SIZE})
fn ${k.name}(${builtins}) {
  ${index}
${k.body}
}
`;
}
