/**
 * WGSL kernels of global-gpu: a preconditioned Krylov solve of A λ = b, A = J M⁻¹ Jᵀ (+ α̃ I),
 * b of (8), in f32, with every scalar computed on the GPU: nothing is read back during a step.
 * Stages 1–3 and 5 and the impulses ΔV = −h M⁻¹ Jᵀ λ are jacobi-gpu's kernels
 * (jacobi/kernels.wgsl.ts), on jacobi-gpu's buffers.
 *
 * Why not CG. Redundant joints (the loops of a net) make A singular, positive semi-definite with
 * null(A) = null(Jᵀ), and once the joints drift b has a part b_N outside range(A) (b_N = h⁻² β P_N C:
 * J V* and A λ lie in range(J) = range(A), only the violation term leaves it); f32 rounding alone puts
 * ~u ‖b‖ there even on a consistent system. CG's rᵀz then never falls below ‖b̂_N‖², its steps
 * α = rᵀz / dᵀAd grow as d turns into null(A), and λ runs off along null(A): harmless in exact
 * arithmetic (M⁻¹ Jᵀ λ_N = 0), but in f32 the rounding of M⁻¹ Jᵀ λ is u |M⁻¹Jᵀ| |λ| — 2.2e11 J on the
 * 8 × 8 joint grid (before this module used CR).
 *
 * The method: the conjugate residual method (Stiefel 1955; CR is MINRES's iterate, with CG's two-term
 * recurrences) on Â ŷ = b̂, Â = D^-½ A D^-½, b̂ = D^-½ b, D = blockdiag(A_ℓℓ) (+ α̃ I) — the block
 * preconditioner of global-cpu, D⁻¹ the A_ℓℓ⁻¹ of stage 3. In λ (λ = D^-½ ŷ, r̂ = D^-½ r, p̂ = D^½ p):
 *   z = D⁻¹ r,  s = A z,  ρ = zᵀ s = r̂ᵀ Â r̂,  β = ρ_k / ρ_{k−1},  p = z + β p,  q = A p = s + β q,
 *   α = ρ / qᵀD⁻¹q = ρ / ‖Â p̂‖²,  λ += α p,  r −= α q
 * Each λ_k minimises ‖r̂‖ = ‖b − Aλ‖_{D⁻¹} over λ₀ + K_k(D⁻¹A, D⁻¹r₀), so ‖r̂‖ does not grow; on a system
 * with no solution it tends to the least ‖b̂_N‖, and ρ = r̂ᵀÂr̂ → 0 with Â r̂ → 0 (a D⁻¹-weighted
 * least-squares λ, A D⁻¹ (b − Aλ) = 0, the one global-cpu's MINRES finds): α shrinks with ρ, where CG's
 * α does not.
 *
 * How far from the least-norm least-squares λ⁺ = D^-½ Â⁺ b̂. ŷ_k lies in ŷ₀ + K_k(Â, r̂₀); Âʲ r̂₀ ∈ range(Â)
 * for j ≥ 1, so the null(Â) part of ŷ_k is that of ŷ₀ plus a multiple of b̂_N (from r̂₀ itself) — which
 * grows as the range part converges (5 ‖λ⁺‖ on the spread net of test/global.test.ts). Near a least-squares
 * λ, r̂ ≈ b̂_N, and cr_project removes that multiple: ŷ −= (ŷᵀr̂ / ‖r̂‖²) r̂, i.e. λ −= c z with
 * c = λᵀr / rᵀz — at the end of every solve where that is harmless, i.e. changes the residual (by c A z)
 * by at most θ_p ‖r‖ (a converged consistent solve has a large c ‖A z‖ / ‖r‖ and is left alone; the
 * least-squares stops, and the stops on a null direction next to one, pass). Then λ − λ⁺ is the null(A) part of λ₀ orthogonal to b̂_N (none from a cold start; it
 * moves nothing, M⁻¹Jᵀλ_N = 0) plus the range error, ‖Â(ŷ − ŷ⁺)‖ = ‖r̂ − b̂_N‖ ≤ ‖Â r̂‖ / σ̂⁺_min; the
 * velocity error in the kinetic metric, h ‖Â^½ (ŷ − ŷ⁺)‖, is at most h ‖Â r̂‖ / σ̂⁺_min^{3/2}. The
 * projection moves Â r̂ by c Â² r̂: at most |c| ‖Â‖ times the ‖Â r̂‖ of the stop (measured on the spread
 * net: ‖λ − λ⁺‖ = 2.6e-6 ‖λ⁺‖, ‖Â r̂‖ = 9e-5 ‖Â‖ ‖r̂‖ after it).
 *
 * Stopping, tested on r_k before each step (cr_beta) and on the last iterate:
 *   1 tolerance      ‖r‖₂ ≤ tol ‖b‖₂ (Euclidean, as global-cpu);
 *   2 least squares  ‖Â r̂‖ ≤ τ ‖Â‖ ‖r̂‖, ‖Â r̂‖² = sᵀD⁻¹s computed from s = A z itself (not a recurrence),
 *                    ‖Â‖ estimated by the largest ‖Â r̂‖ / ‖r̂‖ seen (≤ ‖Â‖): b ∉ range(A), λ is a
 *                    least-squares solution; counted converged, and as least squares;
 *   3 null direction ‖Â p̂‖ ≤ η ‖Â‖ ‖p̂‖ (cr_alpha, ‖p̂‖² = pᵀDp) or ρ ≤ 0: the step would go along a
 *                    direction f32 cannot tell from null(A), and is not taken;
 *   4 stagnation     m iterations in a row that bring neither ‖r̂‖² nor ‖Â r̂‖² below (1 − θ) × its least so
 *                    far (on a system with no solution ‖r̂‖² levels off at ‖b̂_N‖² while ‖Â r̂‖ still falls);
 *   0 the cap        `iterations`.
 * (τ, η, m, θ, θ_p: gpu.ts, with their reasons.) 3 and 4 end the solve unconverged, with its λ: by the
 * minimisation, the smallest ‖r̂‖ so far.
 *
 * The warm start, scaled: λ₀ = ξ λ⁰ with ξ = (Aλ⁰)ᵀD⁻¹b / ‖Aλ⁰‖²_{D⁻¹}, the ξ of least ‖b − ξAλ⁰‖_{D⁻¹}
 * (Hegedüs's scaled initial guess, in CR's norm): never worse than λ⁰ or 0 as a start. An unconverged λ
 * of an ill-conditioned step can be far worse than 0 for the next (on the 8 × 8 grid ‖r₀‖ = 48 ‖b‖).
 *
 * One solve (after stage 3 and the warm start λ⁰ = f λ_prev):
 *   update_velocities (jacobi)  ΔV = −h M⁻¹ Jᵀ λ⁰                              (5), (34)
 *   cg_start      r = h⁻¹ (J (V* + ΔV) + β C) − α̃ λ⁰ = b − A λ⁰,  b = h⁻¹ (J V* + β C)   (8), (30);
 *                 Σ (b − r)ᵀD⁻¹b, Σ ‖b − r‖²_{D⁻¹}, ‖b‖² per workgroup
 *   cg_init       ξ, the scalars of a new solve                    (one workgroup)
 *   cg_start_d    λ₀ = ξ λ⁰, r₀ = b − ξ (b − r), z₀ = D⁻¹ r₀
 *   N × ( cg_apply_jt   W_i = M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ z_ℓ          (per body, the gather of (34))
 *         cg_apply_j    s_ℓ = J_ℓ W + α̃ z_ℓ = (A z)_ℓ;  Σ zᵀs, sᵀD⁻¹s, rᵀz, rᵀr per workgroup   (8), (36)
 *         cr_beta       the tests 1, 2, 4 on r_k; β, ρ          (one workgroup)
 *         cr_update_pq  p = z + β p, q = s + β q;  Σ qᵀD⁻¹q, pᵀDp per workgroup
 *         cr_alpha      test 3; α = ρ / qᵀD⁻¹q                 (one workgroup)
 *         cr_update_xr  λ += α p,  r −= α q,  z = D⁻¹ r )
 *   cg_apply_jt, cg_apply_j, cr_beta: the tests on the last iterate
 *   cr_project_sums, cr_project_c, cr_project   λ −= (λᵀr / rᵀz) z where |c| ‖A z‖ ≤ θ_p ‖r‖
 *   cg_finish     count the iterations used, unconverged, least-squares and stopped solves
 *   update_velocities (jacobi)  ΔV = −h M⁻¹ Jᵀ λ, then compute_positions
 * Once `done`, α = β = 0, and the kernels that set `done` (cr_beta, cr_alpha) zero the workgroup
 * counts of cg_indirect, from which the per-constraint and per-body iteration kernels are dispatched
 * (dispatchWorkgroupsIndirect): the rest of the N recorded iterations run only cr_beta and cr_alpha,
 * one workgroup each, which write cg_indirect and so are dispatched directly (a buffer cannot be both
 * a dispatch's indirect arguments and writable in it). An on-GPU flag, no readback.
 *
 * Reductions: each constraint-kernel workgroup sums its 64 threads' terms in workgroup
 * memory (a tree) and writes one vec4f partial; a single 64-thread workgroup then sums the
 * partials. Sums in f32.
 *
 * Buffers (legend as in jacobi/kernels.wgsl.ts; f32):
 *   cg (uniform)        CgParams below
 *   cg_r[NC], cg_z[NC]  residual r, z = D⁻¹ r (vec4f, w = 0)
 *   cg_s[NC]            s = A z (b between cg_start and cg_start_d)
 *   cg_d[NC], cg_q[NC]  direction p, q = A p
 *   cg_w[2·NB]          W = M⁻¹ Jᵀ z: (lin, 0), (ang, 0) per body
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
  | 'cg_z'
  | 'cg_s'
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
  cg_z: 'array<vec4f>',
  cg_s: 'array<vec4f>',
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

/** Bytes of the CgParams uniform (GlobalGpuSolver.init fills it). */
export const CG_PARAMS_BYTES = 64;
/** Bytes of CgScalars (GlobalGpuSolver reads the counters from it). */
export const CG_SCALARS_BYTES = 96;
/** Byte offsets in cg_indirect of the dispatch arguments per constraint, per body, and of one workgroup */
export const cgIndirectOffset = { constraint: 0, body: 16, single: 32 } as const;
/** u32 index of each counter in CgScalars */
export const cgCounter = { iterations: 6, totalIterations: 7, steps: 8, unconverged: 9, converged: 10, leastSquares: 11, totalLeastSquares: 12, totalStopped: 13, anorm: 14, bestResidual2: 15, stall: 16, stop: 17, ls2: 18, rhat2: 19 } as const;

const header = /* wgsl */ `
struct CgParams {
  constraint_count: u32,
  body_count: u32,
  row_width: u32,      // threads per dispatch row (2-D dispatch for big scenes)
  partial_count: u32,  // workgroups of a constraint dispatch = partials written
  h: f32,              // solver step, s
  baumgarte: f32,      // β in 1/s
  tolerance2: f32,     // (relative tolerance on ‖r‖/‖b‖)²
  ls_tolerance2: f32,  // (least-squares tolerance on ‖Â r̂‖ / (‖Â‖ ‖r̂‖))²
  constraint_groups: vec2u, // workgroups (x, y) of a constraint dispatch
  body_groups: vec2u,       // workgroups (x, y) of a body dispatch
  null_floor2: f32,    // η²: a direction with ‖Â p̂‖ ≤ η ‖Â‖ ‖p̂‖ is numerically in null(Â)
  stall_limit: u32,    // m: stagnant iterations in a row that end the solve
  stall_decrease: f32, // θ: an iteration that does not bring ‖r̂‖² below (1 − θ) × its least is stagnant
  project_change: f32, // θ_p: the null part along r̂ is removed where that changes ‖r‖ by at most θ_p ‖r‖
};
struct CgScalars {
  rho: f32,            // ρ_k = z_kᵀ A z_k = r̂ᵀ Â r̂
  alpha: f32,
  beta: f32,
  rhs2: f32,           // ‖b‖²
  residual2: f32,      // ‖r‖² (the recurrence's, Euclidean)
  done: u32,           // 1: converged, least squares, or stopped; α = β = 0 from then on
  iterations: u32,     // iterations (steps taken) of this solve
  total_iterations: u32, // summed over the solves since creation
  steps: u32,          // solves since creation
  unconverged: u32,    // solves that ended above the tolerance without a least-squares λ
  converged: u32,      // this solve reached the tolerance or the least-squares test
  least_squares: u32,  // this solve ended at a least-squares λ (b ∉ range(A), to f32)
  total_least_squares: u32, // solves that ended so, since creation
  total_stopped: u32,  // solves ended by a null direction or stagnation, since creation
  anorm: f32,          // ‖Â‖ estimate: the largest ‖Â r̂‖ / ‖r̂‖ of this solve (≤ ‖Â‖)
  best_residual2: f32, // the smallest ‖r̂‖² = rᵀz of this solve
  stall: u32,          // stagnant iterations in a row
  stop: u32,           // why this solve ended: 0 cap, 1 tolerance, 2 least squares, 3 null direction, 4 stagnation
  ls2: f32,            // ‖Â r̂‖² of the last residual tested
  rhat2: f32,          // ‖r̂‖² = rᵀ D⁻¹ r of the last residual tested
  xi: f32,             // ξ: λ₀ = ξ λ⁰ (the warm start's scaling)
  null_shift: f32,     // c = λᵀr / rᵀz: a least-squares λ less c z has no part along r̂ ≈ b̂_N (0 otherwise)
  best_ls2: f32,       // the smallest ‖Â r̂‖² of this solve
  pad3: u32,
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

/** M⁻¹ of a 3×3 matrix by its cofactors (0 where M is singular): D d from the stored D⁻¹ = A_ℓℓ⁻¹ */
const inverse3 = /* wgsl */ `
fn inverse3(m: mat3x3f) -> mat3x3f {
  let det = determinant(m);
  if (det == 0.0) { return mat3x3f(); }
  return transpose(mat3x3f(cross(m[1], m[2]), cross(m[2], m[0]), cross(m[0], m[1]))) * (1.0 / det);
}`;

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
      { name: 'delassus_inv', access: 'read' },
      { name: 'cg_r', access: 'read_write' },
      { name: 'cg_s', access: 'read_write' },
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
    cg_s[ic] = vec4f(rhs, 0.0); // b, for cg_start_d
    // g = A λ⁰ = b − r: x: gᵀD⁻¹b, y: gᵀD⁻¹g (the scaling ξ of cg_init), z: ‖b‖²
    let g = rhs - r;
    let dinv = delassus_inv[ic];
    term = vec4f(dot(g, dinv * rhs), dot(g, dinv * g), dot(rhs, rhs), 0.0);
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = total; }`,
  },
  {
    name: 'cg_start_d',
    over: 'constraint',
    bindings: [
      { name: 'cg_scalars', access: 'read' },
      { name: 'delassus_inv', access: 'read' },
      { name: 'cg_s', access: 'read' },
      { name: 'multiplier', access: 'read_write' },
      { name: 'cg_r', access: 'read_write' },
      { name: 'cg_z', access: 'read_write' },
    ],
    body: /* wgsl */ `
  if (!in_range) { return; }
  // λ₀ = ξ λ⁰, r₀ = b − ξ A λ⁰ = b − ξ (b − r), z₀ = D⁻¹ r₀
  let xi = cg_scalars.xi;
  let b = cg_s[ic].xyz;
  multiplier[ic] = vec4f(xi * multiplier[ic].xyz, 0.0);
  cg_r[ic] = vec4f(b - xi * (b - cg_r[ic].xyz), 0.0);
  cg_z[ic] = vec4f(${precondition}, 0.0);`,
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
    // the warm start scaled to least ‖b − ξ A λ⁰‖_{D⁻¹}: ξ = (Aλ⁰)ᵀD⁻¹b / ‖Aλ⁰‖²_{D⁻¹} (1 where Aλ⁰ = 0)
    cg_scalars.xi = select(1.0, total.x / total.y, total.y > 0.0);
    cg_scalars.rho = 0.0;
    cg_scalars.residual2 = 0.0;
    cg_scalars.rhs2 = total.z;
    cg_scalars.alpha = 0.0;
    cg_scalars.beta = 0.0;
    cg_scalars.iterations = 0u;
    cg_scalars.converged = 0u; // the tolerance is tested on r₀ by the first cr_beta
    cg_scalars.done = 0u;
    cg_scalars.least_squares = 0u;
    cg_scalars.anorm = 0.0;
    cg_scalars.best_residual2 = 3.0e38;
    cg_scalars.best_ls2 = 3.0e38;
    cg_scalars.stall = 0u;
    cg_scalars.stop = 0u;
    cg_scalars.steps += 1u;
    set_dispatch(true);
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
      { name: 'cg_z', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'cg_w', access: 'read_write' },
    ],
    body: /* wgsl */ `
  if (ib >= cg.body_count) { return; }
  // W_i = M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ z_ℓ${gatherJacobianTranspose('cg_z')}
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
      { name: 'cg_z', access: 'read' },
      { name: 'cg_r', access: 'read' },
      { name: 'delassus_inv', access: 'read' },
      { name: 'cg_s', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {
    let b = bodies[ic];
    // s = (A z)_ℓ = J_ℓ W + α̃ z_ℓ = W_lin,i − W_lin,j + W_ang,i × a − W_ang,j × b + α̃ z_ℓ   (8), (36)
    let z = cg_z[ic].xyz;
    let s = cg_w[2u * b.x].xyz - cg_w[2u * b.y].xyz
          + cross(cg_w[2u * b.x + 1u].xyz, jacobian[2u * ic].xyz) - cross(cg_w[2u * b.y + 1u].xyz, jacobian[2u * ic + 1u].xyz)
          + (violation[ic].w / cg.h) * z;
    cg_s[ic] = vec4f(s, 0.0);
    let r = cg_r[ic].xyz;
    // x: ρ = zᵀAz = r̂ᵀÂr̂, y: ‖Â r̂‖² = (Az)ᵀ D⁻¹ (Az), z: ‖r̂‖² = rᵀz, w: ‖r‖²
    term = vec4f(dot(z, s), dot(s, delassus_inv[ic] * s), dot(r, z), dot(r, r));
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = total; }`,
  },
  {
    name: 'cr_beta',
    over: 'single',
    bindings: [
      { name: 'cg_partials', access: 'read' },
      { name: 'cg_scalars', access: 'read_write' },
      { name: 'cg_indirect', access: 'read_write' },
    ],
    helpers: setDispatch,
    body: /* wgsl */ `${sumPartials}
  if (lid == 0u && cg_scalars.done == 0u) {
    let rho = total.x;     // r̂ᵀ Â r̂
    let ls2 = total.y;     // ‖Â r̂‖²
    let rhat2 = total.z;   // ‖r̂‖²
    cg_scalars.residual2 = total.w;
    cg_scalars.ls2 = ls2;
    cg_scalars.rhat2 = rhat2;
    // ‖Â‖ ≥ ‖Â r̂‖ / ‖r̂‖ for every r̂ seen
    if (rhat2 > 0.0) { cg_scalars.anorm = max(cg_scalars.anorm, sqrt(ls2 / rhat2)); }
    let anorm = cg_scalars.anorm;
    // stagnant: neither ‖r̂‖² (which tends to ‖b̂_N‖² on a system with no solution) nor ‖Â r̂‖² (which tends to 0 on
    // any) fell below (1 − θ) of its least so far
    let progress = rhat2 < (1.0 - cg.stall_decrease) * cg_scalars.best_residual2 || ls2 < (1.0 - cg.stall_decrease) * cg_scalars.best_ls2;
    if (progress) { cg_scalars.stall = 0u; } else { cg_scalars.stall += 1u; }
    cg_scalars.best_residual2 = min(cg_scalars.best_residual2, rhat2);
    cg_scalars.best_ls2 = min(cg_scalars.best_ls2, ls2);
    var stop = 0u;
    if (total.w <= cg.tolerance2 * cg_scalars.rhs2) {
      stop = 1u; // ‖r‖ ≤ tol ‖b‖
    } else if (ls2 <= cg.ls_tolerance2 * anorm * anorm * rhat2) {
      stop = 2u; // λ_k is a least-squares solution: Â r̂ = 0 to the tolerance (r̂ numerically in null(Â))
    } else if (!(rho > 0.0)) {
      stop = 3u; // r̂ᵀÂr̂ ≤ 0: rounding has the better of it (or A is not PSD); no step can be trusted
    } else if (cg_scalars.stall >= cg.stall_limit) {
      stop = 4u; // stagnation
    }
    if (stop != 0u) {
      cg_scalars.done = 1u;
      cg_scalars.stop = stop;
      cg_scalars.beta = 0.0;
      if (stop <= 2u) { cg_scalars.converged = 1u; }
      if (stop == 2u) { cg_scalars.least_squares = 1u; }
      set_dispatch(false);
    } else {
      // β = ρ_k / ρ_{k−1} (0 on the first iteration: p = z, q = A z)
      cg_scalars.beta = select(rho / cg_scalars.rho, 0.0, cg_scalars.iterations == 0u);
      cg_scalars.rho = rho;
    }
  }`,
  },
  {
    name: 'cr_update_pq',
    over: 'constraint',
    bindings: [
      { name: 'cg_scalars', access: 'read' },
      { name: 'delassus_inv', access: 'read' },
      { name: 'cg_z', access: 'read' },
      { name: 'cg_s', access: 'read' },
      { name: 'cg_d', access: 'read_write' },
      { name: 'cg_q', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    helpers: inverse3,
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {
    // p = z + β p,  q = A p = A z + β q   (β = 0 on the first iteration: the old p, q are not read)
    let beta = cg_scalars.beta;
    let first = beta == 0.0;
    let p = cg_z[ic].xyz + select(beta * cg_d[ic].xyz, vec3f(0.0), first);
    let q = cg_s[ic].xyz + select(beta * cg_q[ic].xyz, vec3f(0.0), first);
    cg_d[ic] = vec4f(p, 0.0);
    cg_q[ic] = vec4f(q, 0.0);
    let dinv = delassus_inv[ic];
    // x: ‖Â p̂‖² = qᵀ D⁻¹ q, y: ‖p̂‖² = pᵀ D p
    term = vec4f(dot(q, dinv * q), dot(p, inverse3(dinv) * p), 0.0, 0.0);
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = total; }`,
  },
  {
    name: 'cr_alpha',
    over: 'single',
    bindings: [
      { name: 'cg_partials', access: 'read' },
      { name: 'cg_scalars', access: 'read_write' },
      { name: 'cg_indirect', access: 'read_write' },
    ],
    helpers: setDispatch,
    body: /* wgsl */ `${sumPartials}
  if (lid == 0u) {
    let aq2 = total.x;  // ‖Â p̂‖²
    let p2 = total.y;   // ‖p̂‖²
    let anorm = cg_scalars.anorm;
    if (cg_scalars.done == 0u && aq2 > cg.null_floor2 * anorm * anorm * p2) {
      // α = ρ / ‖Â p̂‖²
      cg_scalars.alpha = cg_scalars.rho / aq2;
      cg_scalars.iterations += 1u;
    } else {
      cg_scalars.alpha = 0.0;
      if (cg_scalars.done == 0u) {
        cg_scalars.done = 1u;
        cg_scalars.stop = 3u; // p̂ numerically in null(Â): the step α p would run off along it
      }
      set_dispatch(false); // cr_update_xr of this iteration is skipped too: α = 0
    }
  }`,
  },
  {
    name: 'cr_update_xr',
    over: 'constraint',
    bindings: [
      { name: 'cg_scalars', access: 'read' },
      { name: 'cg_d', access: 'read' },
      { name: 'cg_q', access: 'read' },
      { name: 'delassus_inv', access: 'read' },
      { name: 'multiplier', access: 'read_write' },
      { name: 'cg_r', access: 'read_write' },
      { name: 'cg_z', access: 'read_write' },
    ],
    body: /* wgsl */ `
  if (!in_range) { return; }
  // λ += α p, r −= α q, z = D⁻¹ r
  let alpha = cg_scalars.alpha;
  multiplier[ic] = vec4f(multiplier[ic].xyz + alpha * cg_d[ic].xyz, 0.0);
  cg_r[ic] = vec4f(cg_r[ic].xyz - alpha * cg_q[ic].xyz, 0.0);
  cg_z[ic] = vec4f(${precondition}, 0.0);`,
  },
  {
    name: 'cr_project_sums',
    over: 'constraint',
    bindings: [
      { name: 'multiplier', access: 'read' },
      { name: 'cg_r', access: 'read' },
      { name: 'cg_z', access: 'read' },
      { name: 'cg_s', access: 'read' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {
    // x: λᵀr = ŷᵀr̂, y: rᵀz = ‖r̂‖², z: ‖A z‖², w: ‖r‖²   (s = A z of the last tests, for this r)
    let r = cg_r[ic].xyz;
    let s = cg_s[ic].xyz;
    term = vec4f(dot(multiplier[ic].xyz, r), dot(r, cg_z[ic].xyz), dot(s, s), dot(r, r));
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = total; }`,
  },
  {
    name: 'cr_project_c',
    over: 'single',
    bindings: [
      { name: 'cg_partials', access: 'read' },
      { name: 'cg_scalars', access: 'read_write' },
    ],
    body: /* wgsl */ `${sumPartials}
  if (lid == 0u) {
    // c = ŷᵀr̂ / ‖r̂‖², where r̂ is (nearly) all in null(Â) — r̂ ≈ b̂_N, the least-squares residual — as shown by what
    // the shift λ −= c z does to the residual: r += c A z, kept only if |c| ‖A z‖ ≤ θ_p ‖r‖ (0 otherwise)
    let c = select(0.0, total.x / total.y, total.y > 0.0);
    let harmless = abs(c) * sqrt(total.z) <= cg.project_change * sqrt(total.w);
    cg_scalars.null_shift = select(0.0, c, harmless);
  }`,
  },
  {
    name: 'cr_project',
    over: 'constraint',
    bindings: [
      { name: 'cg_scalars', access: 'read' },
      { name: 'cg_z', access: 'read' },
      { name: 'multiplier', access: 'read_write' },
    ],
    body: /* wgsl */ `
  let c = cg_scalars.null_shift;
  if (!in_range || c == 0.0) { return; }
  // ŷ −= c r̂  ⇔  λ −= c D⁻¹ r = c z
  multiplier[ic] = vec4f(multiplier[ic].xyz - c * cg_z[ic].xyz, 0.0);`,
  },
  {
    name: 'cg_finish',
    over: 'single',
    bindings: [{ name: 'cg_scalars', access: 'read_write' }],
    body: /* wgsl */ `
  _ = cg.project_change; // every kernel binds cg at binding 0 (a 'auto' layout keeps only what is used)
  if (lid == 0u) {
    cg_scalars.total_iterations += cg_scalars.iterations;
    if (cg_scalars.converged == 0u) { cg_scalars.unconverged += 1u; }
    cg_scalars.total_least_squares += cg_scalars.least_squares;
    if (cg_scalars.stop >= 3u) { cg_scalars.total_stopped += 1u; }
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
