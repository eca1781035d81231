/**
 * WGSL kernels of global-gpu: a preconditioned Krylov solve of A λ = b over the constraint rows
 * (rows/rows.wgsl.ts), A = J M⁻¹ Jᵀ + Γ (Γ = diag γ of the soft rows), b_r = −h⁻¹ (J_r V* + biasRate_r C_r)
 * (global-cpu's system, rows' signs: the impulse is +h Jᵀλ), in f32, with every scalar computed on the
 * GPU: nothing is read back during a step. Stages 1–3 and 5 and the impulses ΔV = h M⁻¹ Jᵀ λ are
 * jacobi-gpu's row kernels, on jacobi-gpu's buffers; the vectors of the solve are per row, the
 * per-row kernels run one thread per row block (its rows together: the preconditioner is the block's
 * D⁻¹ = (A_bb + γ)⁻¹ that prepare_* stored, blocks of up to 6 rows), a rigid point joint's block by
 * the point fast path (its J from the lever arms, D⁻¹ as a 3×3; the same sums in the same order).
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
 * recurrences) on Â ŷ = b̂, Â = D^-½ A D^-½, b̂ = D^-½ b, D = blockdiag(A_bb + Γ_b) — the block
 * preconditioner of global-cpu, D⁻¹ the (A_bb + γ)⁻¹ of stage 3. In λ (λ = D^-½ ŷ, r̂ = D^-½ r, p̂ = D^½ p):
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
 *   update_velocities (jacobi)  ΔV = h M⁻¹ Jᵀ λ⁰                               (R1), (34)
 *   cg_block_matrix  D = A_bb + diag γ per block (for ‖p̂‖² = pᵀDp of test 3)
 *   cg_start      r = −h⁻¹ (J (V* + ΔV) + biasRate C) − γ λ⁰ = b − A λ⁰,  b = −h⁻¹ (J V* + biasRate C);
 *                 Σ (b − r)ᵀD⁻¹b, Σ ‖b − r‖²_{D⁻¹}, ‖b‖² per workgroup
 *   cg_init       ξ, the scalars of a new solve                    (one workgroup)
 *   cg_start_d    λ₀ = ξ λ⁰, r₀ = b − ξ (b − r), z₀ = D⁻¹ r₀
 *   N × ( cg_apply_jt   W_i = M_i⁻¹ Σ_r∋i J_r,iᵀ z_r          (per body, rowGather: the gather of (34))
 *         cg_apply_j    s_r = J_r W + γ_r z_r = (A z)_r;  Σ zᵀs, sᵀD⁻¹s, rᵀz, rᵀr per workgroup   (R2), (36)
 *         cr_beta       the tests 1, 2, 4 on r_k; β, ρ          (one workgroup)
 *         cr_update_pq  p = z + β p, q = s + β q;  Σ qᵀD⁻¹q, pᵀDp per workgroup
 *         cr_alpha      test 3; α = ρ / qᵀD⁻¹q                 (one workgroup)
 *         cr_update_xr  λ += α p,  r −= α q,  z = D⁻¹ r )
 *   cg_apply_jt, cg_apply_j, cr_beta: the tests on the last iterate
 *   cr_project_sums, cr_project_c, cr_project   λ −= (λᵀr / rᵀz) z where |c| ‖A z‖ ≤ θ_p ‖r‖
 *   cg_finish     count the iterations used, unconverged, least-squares and stopped solves
 *   update_velocities (jacobi)  ΔV = h M⁻¹ Jᵀ λ, then compute_positions
 * Once `done`, α = β = 0, and the kernels that set `done` (cr_beta, cr_alpha) zero the workgroup
 * counts of cg_indirect, from which the per-block and per-body iteration kernels are dispatched
 * (dispatchWorkgroupsIndirect): the rest of the N recorded iterations run only cr_beta and cr_alpha,
 * one workgroup each, which write cg_indirect and so are dispatched directly (a buffer cannot be both
 * a dispatch's indirect arguments and writable in it). An on-GPU flag, no readback.
 *
 * Reductions: each block-kernel workgroup sums its 64 threads' terms in workgroup
 * memory (a tree) and writes one vec4f partial; a single 64-thread workgroup then sums the
 * partials. Sums in f32.
 *
 * Buffers (legend as in jacobi/kernels.wgsl.ts; f32):
 *   cg (uniform)        CgParams below
 *   cg_rzs[NR]          per row (r, z = D⁻¹ r, s = A z, 0) (s holds b between cg_start and cg_start_d)
 *   cg_pq[NR]           per row (p, q = A p): the direction
 *   cg_dmat[2·NR]       row p of its block's D = A_bb + diag γ (8 entries, n used)
 *   cg_w[2·NB]          W = M⁻¹ Jᵀ z: (lin, 0), (ang, 0) per body
 *   cg_partials[P]      one vec4f per workgroup of a block dispatch
 *   cg_scalars          CgScalars below
 *   cg_indirect[12]     dispatch arguments (x, y, z, pad) of the iteration kernels: [0] per
 *                       block, [4] per body, [8] one workgroup; zeros once done
 * and jacobi-gpu's rows (rows/rows.wgsl.ts legend): row_block, row_jacobian, point_arm, row_solve
 * ((biasRate·C, γ, λ) and the rows of D⁻¹), body_rows, row_entries; and its inverse_mass, velocity
 * (V*), velocity_delta.
 * Invariant: each per-block kernel writes only its own block's rows and
 * its workgroup's partial; cg_apply_jt writes only its body's W; the one-workgroup
 * kernels alone write cg_scalars. Dispatches of one pass are ordered (WebGPU), so each
 * kernel sees the previous one's writes.
 */
import { WORKGROUP_SIZE } from '../../gpu/frames.js';
import { rowGather } from '../../rows/rows.wgsl.js';

export type CgBufferName =
  | 'cg'
  | 'cg_rzs'
  | 'cg_pq'
  | 'cg_dmat'
  | 'cg_w'
  | 'cg_partials'
  | 'cg_scalars'
  | 'cg_indirect'
  // jacobi-gpu's buffers (the rows of rows/rows.wgsl.ts, the bodies) these kernels bind
  | 'row_block'
  | 'row_jacobian'
  | 'point_arm'
  | 'row_solve'
  | 'body_rows'
  | 'row_entries'
  | 'inverse_mass'
  | 'velocity'
  | 'velocity_delta';

const elementType: Record<CgBufferName, string> = {
  cg: 'CgParams',
  cg_rzs: 'array<vec4f>',
  cg_pq: 'array<vec2f>',
  cg_dmat: 'array<vec4f>',
  cg_w: 'array<vec4f>',
  cg_partials: 'array<vec4f>',
  cg_scalars: 'CgScalars',
  cg_indirect: 'array<u32, 12>',
  row_block: 'array<vec4u>',
  row_jacobian: 'array<vec4f>',
  point_arm: 'array<vec4f>',
  row_solve: 'array<vec4f>',
  body_rows: 'array<u32>',
  row_entries: 'array<u32>',
  inverse_mass: 'array<InverseMass>',
  velocity: 'array<vec4f>',
  velocity_delta: 'array<vec4f>',
};

/** Bytes of the CgParams uniform (GlobalGpuSolver.init fills it). */
export const CG_PARAMS_BYTES = 64;
/** Bytes of CgScalars (GlobalGpuSolver reads the counters from it). */
export const CG_SCALARS_BYTES = 96;
/** Byte offsets in cg_indirect of the dispatch arguments per row block, per body, and of one workgroup */
export const cgIndirectOffset = { block: 0, body: 16, single: 32 } as const;
/** u32 index of each counter in CgScalars */
export const cgCounter = { iterations: 6, totalIterations: 7, steps: 8, unconverged: 9, converged: 10, leastSquares: 11, totalLeastSquares: 12, totalStopped: 13, anorm: 14, bestResidual2: 15, stall: 16, stop: 17, ls2: 18, rhat2: 19 } as const;

const header = /* wgsl */ `
struct CgParams {
  block_count: u32,   // row blocks (rows/rows.wgsl.ts row_block)
  body_count: u32,
  row_width: u32,      // threads per dispatch row (2-D dispatch for big scenes)
  partial_count: u32,  // workgroups of a block dispatch = partials written
  h: f32,              // solver step, s
  baumgarte: f32,      // β in 1/s
  tolerance2: f32,     // (relative tolerance on ‖r‖/‖b‖)²
  ls_tolerance2: f32,  // (least-squares tolerance on ‖Â r̂‖ / (‖Â‖ ‖r̂‖))²
  block_groups: vec2u, // workgroups (x, y) of a block dispatch
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
  share: f32,          // jacobi-gpu's joints' mass-splitting factor (unread here)
  position_share: f32, // jacobi-gpu's position pass's factor (unread here)
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
  let c = select(vec2u(0u), cg.block_groups, on);
  let b = select(vec2u(0u), cg.body_groups, on);
  let s = select(0u, 1u, on);
  cg_indirect[0] = c.x; cg_indirect[1] = c.y; cg_indirect[2] = 1u;
  cg_indirect[4] = b.x; cg_indirect[5] = b.y; cg_indirect[6] = 1u;
  cg_indirect[8] = s; cg_indirect[9] = 1u; cg_indirect[10] = 1u;
}`;

type Access = 'read' | 'read_write' | 'uniform';
export interface CgKernelSpec {
  name: string;
  /** one thread per row block (with a per-workgroup partial), per body, or one workgroup */
  over: 'block' | 'body' | 'single';
  bindings: { name: CgBufferName; access: Access }[];
  /** module-scope WGSL the body calls */
  helpers?: string;
  body: string;
}

/**
 * Row access for the block kernels (bind row_jacobian, point_arm): row r's J as four vec3f. A rigid point
 * joint's block (row_block meta bit 5) has no stored J: its rows are (−e_k, −(a × e_k), e_k, b × e_k) of its
 * lever arms (point.ts), k = r − r0.
 */
const rowAccess = /* wgsl */ `
struct RowJ { va: vec3f, wa: vec3f, vb: vec3f, wb: vec3f, };
fn row_j(r: u32, r0: u32, point: bool) -> RowJ {
  if (point) {
    var e = vec3f(0.0);
    e[r - r0] = 1.0;
    let a = point_arm[2u * r0].xyz;
    let b = point_arm[2u * r0 + 1u].xyz;
    return RowJ(-e, -cross(a, e), e, cross(b, e));
  }
  let p = row_jacobian[3u * r];
  let q = row_jacobian[3u * r + 1u];
  let t = row_jacobian[3u * r + 2u];
  return RowJ(p.xyz, vec3f(p.w, q.xy), vec3f(q.zw, t.x), t.yzw);
}
// J_r U = J_vA·u_A + J_ωA·w_A + J_vB·u_B + J_ωB·w_B   (R2)
fn row_dot(j: RowJ, ua: vec3f, wa: vec3f, ub: vec3f, wb: vec3f) -> f32 {
  return dot(j.va, ua) + dot(j.wa, wa) + dot(j.vb, ub) + dot(j.wb, wb);
}`;

/**
 * The block preconditioner D⁻¹ = (A_bb + diag γ)⁻¹, row p of it at row_solve[3r + 1], [3r + 2] (r = r0 + p,
 * written by prepare_*; rows.wgsl.ts legend): (D⁻¹ v)_p of the block's vector v (8 entries, n used).
 */
const blockInverse = /* wgsl */ `
// a rigid point joint's block (3 rows at r0): D⁻¹ v with the rows of D⁻¹ at row_solve[3r0 + 1], [3r0 + 4], [3r0 + 7]
fn point_dinv(r0: u32, v: vec3f) -> vec3f {
  return vec3f(dot(row_solve[3u * r0 + 1u].xyz, v), dot(row_solve[3u * r0 + 4u].xyz, v), dot(row_solve[3u * r0 + 7u].xyz, v));
}
fn dinv_row(r: u32, v: array<f32, 8>) -> f32 {
  return dot(row_solve[3u * r + 1u], vec4f(v[0], v[1], v[2], v[3])) + dot(row_solve[3u * r + 2u], vec4f(v[4], v[5], v[6], v[7]));
}`;

/** the block `blk` of this thread: r0, n, point (the row_block legend) */
const blockHead = /* wgsl */ `
    let blk = row_block[ib_block];
    let r0 = blk.x;
    let n = blk.y & 15u;
    let point = (blk.y & 32u) != 0u;`;

/** the sum of the partials of the last block dispatch, in every thread of the one workgroup */
const sumPartials = /* wgsl */ `
  var part = vec4f(0.0);
  for (var i = lid; i < cg.partial_count; i += ${WORKGROUP_SIZE}u) { part += cg_partials[i]; }
  let total = workgroup_sum(lid, part);`;

const kernels: CgKernelSpec[] = [
  {
    name: 'cg_block_matrix',
    over: 'block',
    bindings: [
      { name: 'row_block', access: 'read' },
      { name: 'row_jacobian', access: 'read' },
      { name: 'point_arm', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'row_solve', access: 'read' },
      { name: 'cg_dmat', access: 'read_write' },
    ],
    helpers: rowAccess,
    body: /* wgsl */ `
  _ = cg.block_count;
  if (!in_range) { return; }${blockHead}
  // D = A_bb + diag γ, A_bb = J_b M⁻¹ J_bᵀ (rows.ts blockDelassus; prepare_* invert it): row p at cg_dmat[2r], [2r + 1]
  let ma = inverse_mass[blk.z];
  let mb = inverse_mass[blk.w];
  for (var p = 0u; p < n; p++) {
    let jp = row_j(r0 + p, r0, point);
    var line: array<f32, 8>;
    for (var q = 0u; q < n; q++) {
      let jq = row_j(r0 + q, r0, point);
      var a = 0.0;
      if (ma.mass > 0.0) { a += ma.mass * dot(jp.va, jq.va) + dot(jp.wa, ma.inertia * jq.wa); }
      if (mb.mass > 0.0) { a += mb.mass * dot(jp.vb, jq.vb) + dot(jp.wb, mb.inertia * jq.wb); }
      line[q] = a;
    }
    line[p] += row_solve[3u * (r0 + p)].y;
    cg_dmat[2u * (r0 + p)] = vec4f(line[0], line[1], line[2], line[3]);
    cg_dmat[2u * (r0 + p) + 1u] = vec4f(line[4], line[5], line[6], line[7]);
  }`,
  },
  {
    name: 'cg_start',
    over: 'block',
    bindings: [
      { name: 'row_block', access: 'read' },
      { name: 'row_jacobian', access: 'read' },
      { name: 'point_arm', access: 'read' },
      { name: 'velocity', access: 'read' },
      { name: 'velocity_delta', access: 'read' },
      { name: 'row_solve', access: 'read' },
      { name: 'cg_rzs', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    helpers: rowAccess + blockInverse,
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {${blockHead}
    let va = velocity[2u * blk.z].xyz;
    let wa = velocity[2u * blk.z + 1u].xyz;
    let vb = velocity[2u * blk.w].xyz;
    let wb = velocity[2u * blk.w + 1u].xyz;
    let dva = velocity_delta[2u * blk.z].xyz;
    let dwa = velocity_delta[2u * blk.z + 1u].xyz;
    let dvb = velocity_delta[2u * blk.w].xyz;
    let dwb = velocity_delta[2u * blk.w + 1u].xyz;
    var rhs: array<f32, 8>;
    var g: array<f32, 8>;
    for (var p = 0u; p < n; p++) {
      let r = r0 + p;
      let j = row_j(r, r0, point);
      let st = row_solve[3u * r]; // (biasRate·C, γ, λ⁰)
      // b_r = −h⁻¹ (J_r V* + biasRate_r C_r)   (global-cpu's b; rows' signs, R1: ΔV = +h M⁻¹ Jᵀ λ)
      let b = -(row_dot(j, va, wa, vb, wb) + st.x) / cg.h;
      // r = b − A λ⁰ = −h⁻¹ (J_r (V* + ΔV) + biasRate_r C_r) − γ_r λ⁰_r,  ΔV = h M⁻¹ Jᵀ λ⁰ (update_velocities)
      let res = b - row_dot(j, dva, dwa, dvb, dwb) / cg.h - st.y * st.z;
      rhs[p] = b;
      g[p] = b - res; // A λ⁰
      cg_rzs[r] = vec4f(res, 0.0, b, 0.0); // b in the s slot, for cg_start_d
    }
    // x: gᵀD⁻¹b, y: gᵀD⁻¹g (the scaling ξ of cg_init), z: ‖b‖²
    for (var p = 0u; p < n; p++) {
      term += vec4f(g[p] * dinv_row(r0 + p, rhs), g[p] * dinv_row(r0 + p, g), rhs[p] * rhs[p], 0.0);
    }
  }
  let total = workgroup_sum(lid, term);
  if (lid == 0u) { cg_partials[wg] = total; }`,
  },
  {
    name: 'cg_start_d',
    over: 'block',
    bindings: [
      { name: 'row_block', access: 'read' },
      { name: 'cg_scalars', access: 'read' },
      { name: 'row_solve', access: 'read_write' },
      { name: 'cg_rzs', access: 'read_write' },
    ],
    helpers: blockInverse,
    body: /* wgsl */ `
  if (!in_range) { return; }${blockHead}
  // λ₀ = ξ λ⁰, r₀ = b − ξ A λ⁰ = b − ξ (b − r), z₀ = D⁻¹ r₀
  let xi = cg_scalars.xi;
  var res: array<f32, 8>;
  for (var p = 0u; p < n; p++) {
    let r = r0 + p;
    let v = cg_rzs[r];
    res[p] = v.z - xi * (v.z - v.x);
    let st = row_solve[3u * r];
    row_solve[3u * r] = vec4f(st.xy, xi * st.z, st.w);
  }
  for (var p = 0u; p < n; p++) { cg_rzs[r0 + p] = vec4f(res[p], dinv_row(r0 + p, res), 0.0, 0.0); }`,
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
      { name: 'body_rows', access: 'read' },
      { name: 'row_entries', access: 'read' },
      { name: 'row_jacobian', access: 'read' },
      { name: 'point_arm', access: 'read' },
      { name: 'cg_rzs', access: 'read' },
      { name: 'inverse_mass', access: 'read' },
      { name: 'cg_w', access: 'read_write' },
    ],
    body: /* wgsl */ `
  if (ib >= cg.body_count) { return; }
  // W_i = M_i⁻¹ Σ_{r ∋ i} J_r,iᵀ z_r (the Jᵀ gather of update_velocities, rows.ts gatherImpulse)${rowGather((r) => `cg_rzs[${r}].y`)}
  let m = inverse_mass[ib];
  cg_w[2u * ib] = vec4f(m.mass * lin, 0.0);
  cg_w[2u * ib + 1u] = vec4f(m.inertia * ang, 0.0);`,
  },
  {
    name: 'cg_apply_j',
    over: 'block',
    bindings: [
      { name: 'row_block', access: 'read' },
      { name: 'row_jacobian', access: 'read' },
      { name: 'point_arm', access: 'read' },
      { name: 'cg_w', access: 'read' },
      { name: 'row_solve', access: 'read' },
      { name: 'cg_rzs', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    helpers: rowAccess + blockInverse,
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {${blockHead}
    let ua = cg_w[2u * blk.z].xyz;
    let wa = cg_w[2u * blk.z + 1u].xyz;
    let ub = cg_w[2u * blk.w].xyz;
    let wb = cg_w[2u * blk.w + 1u].xyz;
    if (point) {
      // the point fast path: J W = W_lin,B + W_ang,B × b − W_lin,A − W_ang,A × a (point.ts's rows), γ = 0 (rigid);
      // summed in row_dot's order (J_vA, J_ωA, J_vB, J_ωB terms), so that it rounds as the general path does
      let s3 = ((-ua - cross(wa, point_arm[2u * r0].xyz)) + ub) + cross(wb, point_arm[2u * r0 + 1u].xyz);
      let v0 = cg_rzs[r0];
      let v1 = cg_rzs[r0 + 1u];
      let v2 = cg_rzs[r0 + 2u];
      cg_rzs[r0] = vec4f(v0.xy, s3.x, 0.0);
      cg_rzs[r0 + 1u] = vec4f(v1.xy, s3.y, 0.0);
      cg_rzs[r0 + 2u] = vec4f(v2.xy, s3.z, 0.0);
      let rr = vec3f(v0.x, v1.x, v2.x);
      let z = vec3f(v0.y, v1.y, v2.y);
      term = vec4f(dot(z, s3), dot(s3, point_dinv(r0, s3)), dot(rr, z), dot(rr, rr));
    } else {
    var s: array<f32, 8>;
    for (var p = 0u; p < n; p++) {
      let r = r0 + p;
      let v = cg_rzs[r]; // (r, z)
      // s = (A z)_r = J_r W + γ_r z_r,  A = J M⁻¹ Jᵀ + Γ   (global-cpu's A)
      s[p] = row_dot(row_j(r, r0, point), ua, wa, ub, wb) + row_solve[3u * r].y * v.y;
      cg_rzs[r] = vec4f(v.x, v.y, s[p], 0.0);
      // x: ρ = zᵀAz = r̂ᵀÂr̂, z: ‖r̂‖² = rᵀz, w: ‖r‖²
      term += vec4f(v.y * s[p], 0.0, v.x * v.y, v.x * v.x);
    }
    // y: ‖Â r̂‖² = (Az)ᵀ D⁻¹ (Az)
    for (var p = 0u; p < n; p++) { term.y += s[p] * dinv_row(r0 + p, s); }
    }
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
    over: 'block',
    bindings: [
      { name: 'row_block', access: 'read' },
      { name: 'cg_scalars', access: 'read' },
      { name: 'cg_dmat', access: 'read' },
      { name: 'row_solve', access: 'read' },
      { name: 'cg_rzs', access: 'read' },
      { name: 'cg_pq', access: 'read_write' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    helpers: blockInverse,
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {${blockHead}
    // p = z + β p,  q = A p = A z + β q   (β = 0 on the first iteration: the old p, q are not read)
    let beta = cg_scalars.beta;
    let first = beta == 0.0;
    if (point) {
      let v0 = cg_rzs[r0];
      let v1 = cg_rzs[r0 + 1u];
      let v2 = cg_rzs[r0 + 2u];
      let o0 = cg_pq[r0];
      let o1 = cg_pq[r0 + 1u];
      let o2 = cg_pq[r0 + 2u];
      let p3 = vec3f(v0.y, v1.y, v2.y) + select(beta * vec3f(o0.x, o1.x, o2.x), vec3f(0.0), first);
      let q3 = vec3f(v0.z, v1.z, v2.z) + select(beta * vec3f(o0.y, o1.y, o2.y), vec3f(0.0), first);
      cg_pq[r0] = vec2f(p3.x, q3.x);
      cg_pq[r0 + 1u] = vec2f(p3.y, q3.y);
      cg_pq[r0 + 2u] = vec2f(p3.z, q3.z);
      let dp = vec3f(dot(cg_dmat[2u * r0].xyz, p3), dot(cg_dmat[2u * r0 + 2u].xyz, p3), dot(cg_dmat[2u * r0 + 4u].xyz, p3));
      term = vec4f(dot(q3, point_dinv(r0, q3)), dot(p3, dp), 0.0, 0.0);
    } else {
    var p: array<f32, 8>;
    var q: array<f32, 8>;
    for (var k = 0u; k < n; k++) {
      let r = r0 + k;
      let v = cg_rzs[r];
      let old = cg_pq[r];
      p[k] = v.y + select(beta * old.x, 0.0, first);
      q[k] = v.z + select(beta * old.y, 0.0, first);
      cg_pq[r] = vec2f(p[k], q[k]);
    }
    // x: ‖Â p̂‖² = qᵀ D⁻¹ q, y: ‖p̂‖² = pᵀ D p
    let plo = vec4f(p[0], p[1], p[2], p[3]);
    let phi = vec4f(p[4], p[5], p[6], p[7]);
    for (var k = 0u; k < n; k++) {
      let r = r0 + k;
      term += vec4f(q[k] * dinv_row(r, q), p[k] * (dot(cg_dmat[2u * r], plo) + dot(cg_dmat[2u * r + 1u], phi)), 0.0, 0.0);
    }
    }
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
    over: 'block',
    bindings: [
      { name: 'row_block', access: 'read' },
      { name: 'cg_scalars', access: 'read' },
      { name: 'cg_pq', access: 'read' },
      { name: 'row_solve', access: 'read_write' },
      { name: 'cg_rzs', access: 'read_write' },
    ],
    helpers: blockInverse,
    body: /* wgsl */ `
  if (!in_range) { return; }${blockHead}
  // λ += α p, r −= α q, z = D⁻¹ r
  let alpha = cg_scalars.alpha;
  if (point) {
    let o0 = cg_pq[r0];
    let o1 = cg_pq[r0 + 1u];
    let o2 = cg_pq[r0 + 2u];
    let l0 = row_solve[3u * r0];
    let l1 = row_solve[3u * r0 + 3u];
    let l2 = row_solve[3u * r0 + 6u];
    row_solve[3u * r0] = vec4f(l0.xy, l0.z + alpha * o0.x, l0.w);
    row_solve[3u * r0 + 3u] = vec4f(l1.xy, l1.z + alpha * o1.x, l1.w);
    row_solve[3u * r0 + 6u] = vec4f(l2.xy, l2.z + alpha * o2.x, l2.w);
    let v0 = cg_rzs[r0];
    let v1 = cg_rzs[r0 + 1u];
    let v2 = cg_rzs[r0 + 2u];
    let res3 = vec3f(v0.x, v1.x, v2.x) - alpha * vec3f(o0.y, o1.y, o2.y);
    let z3 = point_dinv(r0, res3);
    cg_rzs[r0] = vec4f(res3.x, z3.x, v0.z, 0.0);
    cg_rzs[r0 + 1u] = vec4f(res3.y, z3.y, v1.z, 0.0);
    cg_rzs[r0 + 2u] = vec4f(res3.z, z3.z, v2.z, 0.0);
    return;
  }
  var res: array<f32, 8>;
  for (var k = 0u; k < n; k++) {
    let r = r0 + k;
    let pq = cg_pq[r];
    let st = row_solve[3u * r];
    row_solve[3u * r] = vec4f(st.xy, st.z + alpha * pq.x, st.w);
    res[k] = cg_rzs[r].x - alpha * pq.y;
  }
  for (var k = 0u; k < n; k++) {
    let r = r0 + k;
    cg_rzs[r] = vec4f(res[k], dinv_row(r, res), cg_rzs[r].z, 0.0);
  }`,
  },
  {
    name: 'cr_project_sums',
    over: 'block',
    bindings: [
      { name: 'row_block', access: 'read' },
      { name: 'row_solve', access: 'read' },
      { name: 'cg_rzs', access: 'read' },
      { name: 'cg_partials', access: 'read_write' },
    ],
    body: /* wgsl */ `
  var term = vec4f(0.0);
  if (in_range) {${blockHead}
    _ = point;
    // x: λᵀr = ŷᵀr̂, y: rᵀz = ‖r̂‖², z: ‖A z‖², w: ‖r‖²   (s = A z of the last tests, for this r)
    for (var k = 0u; k < n; k++) {
      let r = r0 + k;
      let v = cg_rzs[r];
      term += vec4f(row_solve[3u * r].z * v.x, v.x * v.y, v.z * v.z, v.x * v.x);
    }
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
    over: 'block',
    bindings: [
      { name: 'row_block', access: 'read' },
      { name: 'cg_scalars', access: 'read' },
      { name: 'cg_rzs', access: 'read' },
      { name: 'row_solve', access: 'read_write' },
    ],
    body: /* wgsl */ `
  let c = cg_scalars.null_shift;
  if (!in_range || c == 0.0) { return; }${blockHead}
  _ = point;
  // ŷ −= c r̂  ⇔  λ −= c D⁻¹ r = c z
  for (var k = 0u; k < n; k++) {
    let r = r0 + k;
    let st = row_solve[3u * r];
    row_solve[3u * r] = vec4f(st.xy, st.z - c * cg_rzs[r].y, st.w);
  }`,
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
    k.over === 'block'
      ? `let ib_block = gid.y * cg.row_width + gid.x;\n  let in_range = ib_block < cg.block_count;\n  let wg = wid.y * nwg.x + wid.x;`
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
