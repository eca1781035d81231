/**
 * The contact solver's Jacobi variant (jacobi-cpu's contacts; the layout issue 23 ports to WGSL): the
 * records, prepare, restitution, separation (K1) and store impulses of contacts/contact-solver.ts, with
 * a solve sweep in which no manifold sees another's impulses of the same sweep, made convergent by mass
 * splitting (Tonge, Benevolenskiy & Voroshilov 2012, "Mass splitting for jitter-free parallel rigid body
 * simulation", SIGGRAPH; our code and words).
 *
 * Mass splitting, as the paper's abstract states the method: "dividing each body mass term in the effective
 * mass by the number of contacts acting on the body, but use the full mass to apply impulses", and "solving
 * contacts in blocks" (here a block is a manifold); the paper proves convergence to the LCP's solution. The
 * derivation below is ours (no equation numbers of the paper are cited: its text was not at hand).
 * Body i, touched by n_i constraints, is split into n_i copies of mass
 * m_i / n_i and inertia I_i / n_i, one per constraint; each constraint acts on its own copies only
 * (inverse masses n_i m_i⁻¹, n_i I_i⁻¹), and the copies are then joined again by constraints that make
 * their velocities equal. Solving those joining constraints exactly is averaging the copies' velocities
 * (equal masses m_i / n_i): after a sweep in which every constraint c changed its copy of i by
 * δV_i,c = n_i M_i⁻¹ J_c,iᵀ P_c (P_c = h Δλ_c, the impulse it applied, with the split masses in its
 * effective mass), the body's velocity is
 *   V_i ← V_i + (1/n_i) Σ_c δV_i,c = V_i + M_i⁻¹ Σ_c J_c,iᵀ P_c                 (the copies averaged)
 * so the body update is the ordinary gather of the impulses with the true masses ("the full mass to apply
 * impulses"), and all that changes
 * from plain Jacobi is the effective mass each constraint divides by:
 *   A_c^s = J_c S M⁻¹ J_cᵀ,   S = diag(n_i)                                    (split effective mass)
 * Why it converges (our bound): per body, by Cauchy–Schwarz,
 *   ‖Σ_{c∋i} M_i^{-½} J_c,iᵀ λ_c‖² ≤ n_i Σ_{c∋i} ‖M_i^{-½} J_c,iᵀ λ_c‖²,
 * and summed over the bodies this is λᵀ A λ ≤ λᵀ D_s λ with D_s = blockdiag(A_c^s) (c: a manifold, its
 * block all its rows): the split block diagonal majorises A = J M⁻¹ Jᵀ. For the frictionless problem,
 * f(λ) = ½ λᵀ A λ − bᵀ λ over λ_n ≥ 0, a sweep's step Δ then gives
 *   f(λ + Δ) ≤ f(λ) + ∇f(λ)ᵀ Δ + ½ Δᵀ D_s Δ = f(λ) + q_s(Δ),
 * and q_s separates into the blocks; each manifold's projected Gauss-Seidel pass over its points on its
 * split copies lowers its part of q_s from 0 (its value at Δ = 0, feasible), so f falls every sweep,
 * whatever the number of coplanar or redundant points (a projected gradient step in the metric D_s, with
 * the blocks solved by one Gauss-Seidel pass each). With friction, whose disc follows λ_n, no such proof
 * holds (as for PGS); the tests measure it. Plain block Jacobi (S = I) has no such bound, and on a box at
 * rest it was chaotic (issue 21: a yaw 1e-15 rad off moved the box 0.6 mm in one frame, and its residual
 * stalled at 75.6 m/s²).
 *
 * The blocks are the manifolds: a thread per manifold solves its ≤ 4 points one after the other (normal,
 * then the friction disc, as contact-solver.ts solve does) on its own copies of the two bodies, read
 * from V at the sweep's start; so a box on the ground (n = 1) is solved as the sequential solvers solve
 * it, and the splitting acts only between manifolds. Within a manifold the points are walked forwards
 * on even sweeps and backwards on odd ones (no preferred sense of rotation: contact-solver.ts).
 *
 * What n_i counts: the contact manifolds of body i plus its joints (each joint one constraint). The joints
 * stay on the seed's Jacobi rows (rows/block-solver.ts; a joint-only scene keeps its trajectory to the bit)
 * and update from the same V in the same sweep, so they share the body with its contacts; on a contact
 * scene their blocks are mass-split too, by s_i = (n_i + 1)/2 (rows/block-solver.ts massShare, from this
 * solver's n_i), where the bound below took them whole.
 * With the weights of the majorisation above (a joint's block takes the whole body, a contact's 1/n_i of
 * it), the per-body bound 2 D − A ⪰ 0 of Jacobi's convergence holds when Σ 1/w ≤ 1 with w = 2 for a joint
 * and 2 n_i for a contact: k joints and c manifolds give k/2 + c/(2 n_i). Counting the joints (n_i = c + k)
 * it holds for a body with one joint and any number of contacts (1/2 + c/(2(c + 1)) < 1); counting the
 * contacts alone (n_i = c) a body held by one joint and one contact sits on the bound (1/2 + 1/2: its
 * error along the shared direction flips sign every sweep and does not decay). Bodies with two or more
 * joints broke that bound (k/2 ≥ 1: a plank's twist under its two hinges, corrected twice in a sweep, made
 * the spun hinge chain diverge); with the joints split by (n_i + 1)/2 the sum is c/(2 n_i) + k/(n_i + 1) < 1
 * for any k and c (block-solver.ts massShare). Measured (before the joints' split) on `necklace --param chains=3
 * --param collisions=1` (300 frames, sleeping off): the worst penetration 3.7 mm counting the joints,
 * 30 mm counting the contacts alone (joint violation 0.108 against 0.093 m, energy −13.4 against −12.1 %).
 *
 * Stages (the module's names): prepare (contact-solver.ts prepare, then n_i, the split effective masses
 * and the body → manifold adjacency), restitution (contact-solver.ts, on V before the solve: collision
 * propagation with the true masses, not split: it is not the Jacobi solve), warm start (gather of h λ⁰),
 * solve (N sweeps: solve, then gather), store impulses. No relax (jacobi-cpu's rigid Baumgarte rows add
 * no spring velocity to take out).
 *
 * On the GPU (issue 23), one sweep is two dispatches, with no float atomics:
 *   solve   one thread per manifold m: reads V_A, V_B (= V* + ΔV of the last gather), its points' records
 *           and λ; writes its points' λ and its total impulse T_m = (P, τ_A, τ_B),
 *           P = Σ_c h (λ_n n + λ₁ t₁ + λ₂ t₂)_c, τ_A = Σ_c r_A,c × P_c, τ_B = Σ_c r_B,c × P_c;
 *   gather  one thread per body i over its CSR row (start[i] .. start[i + 1]) of entries 2m + side:
 *           Δv_i += m_i⁻¹ Σ ±P_m, Δω_i += I_i⁻¹ Σ ±τ_{m,side} (− on side A, + on side B),
 *           after the joints' gather (rows.wgsl.ts) has written ΔV_i = h M_i⁻¹ Σ J_rᵀ λ_r.
 * Each thread writes only its own outputs, so the result does not depend on the order threads run in;
 * this CPU reference walks the same two loops in index order.
 *
 * Invariants: solve reads only V* + ΔV (the sweep's start), the records and λ of its own manifold, and
 * writes only those λ and T_m; gather reads only T and writes ΔV of its own body. The list and the
 * joints must not change between prepare and store impulses.
 */
import type { ContactList } from '../rows/contact.js';
import type { ManifoldStore } from '../collision/manifolds.js';
import { frictionDisc, type ContactRule } from '../rows/block-solver.js';
import { ContactSolver, CONTACT_RECORDS, pointMass, type ContactResidual } from './contact-solver.js';

// the contact solver's record layout, as constants of this module (contact-solver.ts CONTACT_RECORDS)
const { M_N, M_T1, M_T2, M_MA, M_MB, M_BIAS_RATE, M_MASS_SCALE, M_IMPULSE_SCALE, M_MU_STATIC, M_SLOP, MSTRIDE } = CONTACT_RECORDS;
const { P_RA, P_RB, P_S0, P_LN, P_LT1, P_LT2, P_MU, PSTRIDE } = CONTACT_RECORDS;

/** per point, the split effective masses (pointMass with S = diag(n_i)): A_nn, A_n1, A_n2, A_tt⁻¹ (4) */
const S_KN = 0;
const S_KN1 = 1;
const S_KN2 = 2;
const S_TINV = 3;
const SSTRIDE = 7;
/** per manifold, its total impulse T_m: P (3), τ_A = Σ r_A × P_c (3), τ_B = Σ r_B × P_c (3) */
const TSTRIDE = 9;

/** The joints a body shares its mass with (rows/joint-set.ts JointSet's fields). */
export interface JointBodies {
  ib0: Int32Array;
  ib1: Int32Array;
  constraintCount: number;
}

export class JacobiContactSolver extends ContactSolver {
  /** per body: n_i, the constraints its mass is split among (its manifolds and joints; header) */
  share = new Float64Array(0);
  /** per point: the split effective masses */
  private sdata = new Float64Array(0);
  /** per manifold: its total impulse T_m (header) */
  private total = new Float64Array(0);
  /** body → manifold adjacency (CSR over the bodies with inverse mass > 0): entries 2m + side (0: A, 1: B) */
  private adjStart = new Int32Array(1);
  private adjEntry = new Int32Array(0);
  private adjFill = new Int32Array(0);
  /** the residual pass's V* + ΔV */
  private vk = new Float64Array(0);
  private wk = new Float64Array(0);

  /**
   * prepare (contact-solver.ts prepare, with the true masses), then n_i of every body (its manifolds
   * and `joints`), the split effective masses A_c^s of every point and the body → manifold adjacency.
   */
  prepareJacobi(list: ContactList, store: ManifoldStore | null, position: Float64Array, orientation: Float64Array, inverseMass: Float64Array, inverseInertia: Float64Array, h: number, rule: ContactRule, warmStart: number, joints: JointBodies): void {
    this.prepare(list, store, position, orientation, inverseMass, inverseInertia, h, rule, warmStart);
    const nb = inverseMass.length, M = this.manifolds, n = this.count;
    if (this.share.length !== nb) {
      this.share = new Float64Array(nb);
      this.adjStart = new Int32Array(nb + 1);
      this.vk = new Float64Array(3 * nb);
      this.wk = new Float64Array(3 * nb);
    }
    if (this.sdata.length < SSTRIDE * n) this.sdata = new Float64Array(SSTRIDE * Math.max(n, 2 * this.sdata.length / SSTRIDE));
    if (this.total.length < TSTRIDE * M) this.total = new Float64Array(TSTRIDE * Math.max(M, 2 * this.total.length / TSTRIDE));
    if (this.adjEntry.length < 2 * M) this.adjEntry = new Int32Array(Math.max(2 * M, 2 * this.adjEntry.length));
    // n_i: manifolds and joints touching body i (fixed bodies take no impulse: their count is not read)
    const share = this.share, start = this.adjStart, entry = this.adjEntry;
    share.fill(0);
    start.fill(0);
    const mBodyA = this.mBodyA, mBodyB = this.mBodyB, MD = this.mdata;
    for (let m = 0; m < M; m++) {
      const a = mBodyA[m], b = mBodyB[m];
      share[a]++;
      share[b]++;
      if (inverseMass[a] > 0) start[a + 1]++;
      if (inverseMass[b] > 0) start[b + 1]++;
    }
    for (let j = 0; j < joints.constraintCount; j++) {
      const a = joints.ib0[j], b = joints.ib1[j];
      if (a >= 0 && a < nb) share[a]++;
      if (b >= 0 && b < nb) share[b]++;
    }
    // the adjacency by counting sort: entries of body i in manifold order
    for (let i = 0; i < nb; i++) start[i + 1] += start[i];
    if (this.adjFill.length !== nb) this.adjFill = new Int32Array(nb);
    const fill = this.adjFill; // the next free entry per body
    for (let i = 0; i < nb; i++) fill[i] = start[i];
    for (let m = 0; m < M; m++) {
      const a = mBodyA[m], b = mBodyB[m];
      if (inverseMass[a] > 0) entry[fill[a]++] = 2 * m;
      if (inverseMass[b] > 0) entry[fill[b]++] = 2 * m + 1;
    }
    // A_c^s = J_c S M⁻¹ J_cᵀ of every point (pointMass with the factors n_A, n_B)
    const PD = this.pdata, SD = this.sdata, I = this.invI;
    for (let m = 0; m < M; m++) {
      const a = mBodyA[m], b = mBodyB[m], e = MSTRIDE * m;
      for (let c = this.start[m]; c < this.start[m + 1]; c++) pointMass(PD, PSTRIDE * c, MD, e, I, 9 * a, 9 * b, share[a], share[b], SD, SSTRIDE * c);
    }
  }

  /**
   * warm start, its first half: T_m of every manifold from its λ now (λ⁰; header). The gather then gives
   * ΔV += h M⁻¹ Jᵀ λ⁰ (after the joints' gather: the seed's update_velocities over every row).
   */
  totals(h: number): void {
    const PD = this.pdata, MD = this.mdata, T = this.total, start = this.start;
    for (let m = 0; m < this.manifolds; m++) {
      const e = MSTRIDE * m;
      const nx = MD[e + M_N], ny = MD[e + M_N + 1], nz = MD[e + M_N + 2];
      const t1x = MD[e + M_T1], t1y = MD[e + M_T1 + 1], t1z = MD[e + M_T1 + 2];
      const t2x = MD[e + M_T2], t2y = MD[e + M_T2 + 1], t2z = MD[e + M_T2 + 2];
      let px = 0, py = 0, pz = 0, tax = 0, tay = 0, taz = 0, tbx = 0, tby = 0, tbz = 0;
      for (let c = start[m]; c < start[m + 1]; c++) {
        const d = PSTRIDE * c;
        const ln = h * PD[d + P_LN], l1 = h * PD[d + P_LT1], l2 = h * PD[d + P_LT2];
        const qx = ln * nx + l1 * t1x + l2 * t2x, qy = ln * ny + l1 * t1y + l2 * t2y, qz = ln * nz + l1 * t1z + l2 * t2z;
        px += qx; py += qy; pz += qz;
        const rax = PD[d + P_RA], ray = PD[d + P_RA + 1], raz = PD[d + P_RA + 2];
        const rbx = PD[d + P_RB], rby = PD[d + P_RB + 1], rbz = PD[d + P_RB + 2];
        tax += ray * qz - raz * qy; tay += raz * qx - rax * qz; taz += rax * qy - ray * qx;
        tbx += rby * qz - rbz * qy; tby += rbz * qx - rbx * qz; tbz += rbx * qy - rby * qx;
      }
      const o = TSTRIDE * m;
      T[o] = px; T[o + 1] = py; T[o + 2] = pz;
      T[o + 3] = tax; T[o + 4] = tay; T[o + 5] = taz;
      T[o + 6] = tbx; T[o + 7] = tby; T[o + 8] = tbz;
    }
  }

  /**
   * gather (header): per body i, Δv_i += m_i⁻¹ Σ ±P_m, Δω_i += I_i⁻¹ Σ ±τ_{m,side} over its manifolds
   * (− on side A, + on side B): the paper's average of the copies, M_i⁻¹ Σ_c J_c,iᵀ P_c.
   */
  gather(dv: Float64Array, dw: Float64Array): void {
    const T = this.total, I = this.invI, start = this.adjStart, entry = this.adjEntry;
    const MD = this.mdata;
    const nb = start.length - 1;
    for (let i = 0; i < nb; i++) {
      const k0 = start[i], k1 = start[i + 1];
      if (k0 === k1) continue;
      let px = 0, py = 0, pz = 0, tx = 0, ty = 0, tz = 0;
      for (let k = k0; k < k1; k++) {
        // side A (en even): −P and −τ_A at o + 3; side B: +P and +τ_B at o + 6. The side as arithmetic, not
        // a branch (a body's sides vary irregularly along its row): x + (±1)·T is x ± T to the bit (IEEE 754
        // defines x − y as x + (−y), and ±1·T is exact)
        const en = entry[k], side = en & 1, o = TSTRIDE * (en >> 1), sign = 2 * side - 1, ot = o + 3 + 3 * side;
        px += sign * T[o]; py += sign * T[o + 1]; pz += sign * T[o + 2];
        tx += sign * T[ot]; ty += sign * T[ot + 1]; tz += sign * T[ot + 2];
      }
      // m_i⁻¹ from the first manifold's record of body i (the records hold the true inverse masses)
      const en = entry[k0], inv = MD[MSTRIDE * (en >> 1) + ((en & 1) === 0 ? M_MA : M_MB)];
      const o = 3 * i, j = 9 * i;
      dv[o] += inv * px; dv[o + 1] += inv * py; dv[o + 2] += inv * pz;
      dw[o] += I[j] * tx + I[j + 1] * ty + I[j + 2] * tz;
      dw[o + 1] += I[j + 3] * tx + I[j + 4] * ty + I[j + 5] * tz;
      dw[o + 2] += I[j + 6] * tx + I[j + 7] * ty + I[j + 8] * tz;
    }
  }

  /**
   * solve (useBias = true), one Jacobi sweep's first half (header): every manifold from V = v + Δv,
   * ω + Δω at the sweep's start, its points in turn on its own split copies of its two bodies (normal
   * and friction as contact-solver.ts solve: (S1), the disc in the metric of A_tt^s); writes λ and T_m,
   * nothing of the bodies. Then `gather` (after the joints' gather). reverse: each manifold's points
   * from the last to the first.
   */
  solveJacobi(v: Float64Array, w: Float64Array, dv: Float64Array, dw: Float64Array, h: number, useBias: boolean, reverse: boolean): void {
    const invH = 1 / h;
    const MD = this.mdata, PD = this.pdata, SD = this.sdata, T = this.total, I = this.invI, dx = this.dx, dth = this.dtheta, start = this.start;
    const share = this.share, mBodyA = this.mBodyA, mBodyB = this.mBodyB;
    const maxPushout = this.maxPushout;
    const disc = this.disc;
    for (let m = 0; m < this.manifolds; m++) {
      const e = MSTRIDE * m;
      const a = mBodyA[m], b = mBodyB[m];
      const ia = 3 * a, ib = 3 * b, ja = 3 * ia, jb = 3 * ib;
      // the copies' inverse masses n_i m_i⁻¹ and the factor n_i on I_i⁻¹ (split masses)
      const sA = share[a], sB = share[b];
      const mA = sA * MD[e + M_MA], mB = sB * MD[e + M_MB];
      const nx = MD[e + M_N], ny = MD[e + M_N + 1], nz = MD[e + M_N + 2];
      const t1x = MD[e + M_T1], t1y = MD[e + M_T1 + 1], t1z = MD[e + M_T1 + 2];
      const t2x = MD[e + M_T2], t2y = MD[e + M_T2 + 1], t2z = MD[e + M_T2 + 2];
      const slop = MD[e + M_SLOP], muStatic = MD[e + M_MU_STATIC];
      // the copies start from the bodies' velocities at the sweep's start, V* + ΔV
      let vax = v[ia] + dv[ia], vay = v[ia + 1] + dv[ia + 1], vaz = v[ia + 2] + dv[ia + 2];
      let wax = w[ia] + dw[ia], way = w[ia + 1] + dw[ia + 1], waz = w[ia + 2] + dw[ia + 2];
      let vbx = v[ib] + dv[ib], vby = v[ib + 1] + dv[ib + 1], vbz = v[ib + 2] + dv[ib + 2];
      let wbx = w[ib] + dw[ib], wby = w[ib + 1] + dw[ib + 1], wbz = w[ib + 2] + dw[ib + 2];
      // (K1) the separation moved with the bodies
      const sLin = nx * (dx[ib] - dx[ia]) + ny * (dx[ib + 1] - dx[ia + 1]) + nz * (dx[ib + 2] - dx[ia + 2]);
      const uax = ny * dth[ia + 2] - nz * dth[ia + 1], uay = nz * dth[ia] - nx * dth[ia + 2], uaz = nx * dth[ia + 1] - ny * dth[ia];
      const ubx = ny * dth[ib + 2] - nz * dth[ib + 1], uby = nz * dth[ib] - nx * dth[ib + 2], ubz = nx * dth[ib + 1] - ny * dth[ib];
      // T_m: the manifold's total impulse h Σ λ after this sweep
      let px = 0, py = 0, pz = 0, tax = 0, tay = 0, taz = 0, tbx = 0, tby = 0, tbz = 0;
      const c0 = start[m], c1 = start[m + 1];
      for (let q = 0; q < c1 - c0; q++) {
        const c = reverse ? c1 - 1 - q : c0 + q;
        const d = PSTRIDE * c, sd = SSTRIDE * c;
        const rax = PD[d + P_RA], ray = PD[d + P_RA + 1], raz = PD[d + P_RA + 2];
        const rbx = PD[d + P_RB], rby = PD[d + P_RB + 1], rbz = PD[d + P_RB + 2];
        const s = PD[d + P_S0] + sLin + (rbx * ubx + rby * uby + rbz * ubz) - (rax * uax + ray * uay + raz * uaz);
        // the bias of contact-solver.ts solve: speculative s/h; beyond the slop the rule's rate and spring
        // (jacobi-cpu: Baumgarte β/h, rigid: massScale 1, impulseScale 0), capped at the push-out speed
        let bias = 0, ms = 1, is = 0;
        if (s > 0) bias = s * invH;
        else if (useBias && s + slop < 0) {
          bias = MD[e + M_BIAS_RATE] * (s + slop);
          if (bias < -maxPushout) bias = -maxPushout;
          ms = MD[e + M_MASS_SCALE];
          is = MD[e + M_IMPULSE_SCALE];
        }
        const dvx = vbx + (wby * rbz - wbz * rby) - vax - (way * raz - waz * ray);
        const dvy = vby + (wbz * rbx - wbx * rbz) - vay - (waz * rax - wax * raz);
        const dvz = vbz + (wbx * rby - wby * rbx) - vaz - (wax * ray - way * rax);
        const vn = nx * dvx + ny * dvy + nz * dvz;
        let v1 = t1x * dvx + t1y * dvy + t1z * dvz;
        let v2 = t2x * dvx + t2y * dvy + t2z * dvz;
        // (S1) Δλ_n = −massScale (v_n + bias) / (h A_nn^s) − impulseScale λ_n, λ_n ≥ 0: the split effective mass
        const oldN = PD[d + P_LN];
        let next = oldN - (ms * (vn + bias) * invH) / SD[sd + S_KN] - is * oldN;
        if (next < 0) next = 0;
        PD[d + P_LN] = next;
        const Pn = h * (next - oldN);
        // the copies' tangential velocities after the normal impulse: u_t + A_tn^s P_n
        v1 += SD[sd + S_KN1] * Pn;
        v2 += SD[sd + S_KN2] * Pn;
        // friction (K2): the stick solution, kept inside the static disc, else onto the disc μ λ_n in the
        // metric of A_tt^s (contact-solver.ts solve; rows/block-solver.ts frictionDisc)
        const old1 = PD[d + P_LT1], old2 = PD[d + P_LT2];
        let f1 = old1, f2 = old2;
        if (next !== 0 || old1 !== 0 || old2 !== 0) {
          const radius = PD[d + P_MU] * next;
          f1 = old1 - invH * (SD[sd + S_TINV] * v1 + SD[sd + S_TINV + 1] * v2);
          f2 = old2 - invH * (SD[sd + S_TINV + 2] * v1 + SD[sd + S_TINV + 3] * v2);
          const len2 = f1 * f1 + f2 * f2;
          const staticRadius = muStatic * next;
          if (len2 > staticRadius * staticRadius && len2 > radius * radius) {
            frictionDisc(SD, sd + S_TINV, f1, f2, radius, disc);
            f1 = disc[0];
            f2 = disc[1];
          }
          PD[d + P_LT1] = f1;
          PD[d + P_LT2] = f2;
        }
        // this point's whole impulse h λ, for T_m
        const ln = h * next, l1 = h * f1, l2 = h * f2;
        const qx = ln * nx + l1 * t1x + l2 * t2x, qy = ln * ny + l1 * t1y + l2 * t2y, qz = ln * nz + l1 * t1z + l2 * t2z;
        px += qx; py += qy; pz += qz;
        tax += ray * qz - raz * qy; tay += raz * qx - rax * qz; taz += rax * qy - ray * qx;
        tbx += rby * qz - rbz * qy; tby += rbz * qx - rbx * qz; tbz += rbx * qy - rby * qx;
        // the change to the copies: δV = n_i M_i⁻¹ J_c,iᵀ P_c, P_c = Δ(h λ) (the next point sees it)
        const P1 = h * (f1 - old1), P2 = h * (f2 - old2);
        if (Pn === 0 && P1 === 0 && P2 === 0) continue;
        const dpx = Pn * nx + P1 * t1x + P2 * t2x, dpy = Pn * ny + P1 * t1y + P2 * t2y, dpz = Pn * nz + P1 * t1z + P2 * t2z;
        if (mA > 0) {
          vax -= mA * dpx; vay -= mA * dpy; vaz -= mA * dpz;
          const tx = ray * dpz - raz * dpy, ty = raz * dpx - rax * dpz, tz = rax * dpy - ray * dpx;
          wax -= sA * (I[ja] * tx + I[ja + 1] * ty + I[ja + 2] * tz);
          way -= sA * (I[ja + 3] * tx + I[ja + 4] * ty + I[ja + 5] * tz);
          waz -= sA * (I[ja + 6] * tx + I[ja + 7] * ty + I[ja + 8] * tz);
        }
        if (mB > 0) {
          vbx += mB * dpx; vby += mB * dpy; vbz += mB * dpz;
          const tx = rby * dpz - rbz * dpy, ty = rbz * dpx - rbx * dpz, tz = rbx * dpy - rby * dpx;
          wbx += sB * (I[jb] * tx + I[jb + 1] * ty + I[jb + 2] * tz);
          wby += sB * (I[jb + 3] * tx + I[jb + 4] * ty + I[jb + 5] * tz);
          wbz += sB * (I[jb + 6] * tx + I[jb + 7] * ty + I[jb + 8] * tz);
        }
      }
      const o = TSTRIDE * m;
      T[o] = px; T[o + 1] = py; T[o + 2] = pz;
      T[o + 3] = tax; T[o + 4] = tay; T[o + 5] = taz;
      T[o + 6] = tbx; T[o + 7] = tby; T[o + 8] = tbz;
    }
  }

  /**
   * The projected residual of the contacts at V = V* + ΔV now (contact-solver.ts solve with `residual`:
   * a row at its bound with the residual pushing outward counts 0), by a pass that changes nothing.
   */
  residualJacobi(v: Float64Array, w: Float64Array, dv: Float64Array, dw: Float64Array, h: number, residual: ContactResidual): void {
    const vk = this.vk, wk = this.wk;
    for (let k = 0; k < vk.length; k++) {
      vk[k] = v[k] + dv[k];
      wk[k] = w[k] + dw[k];
    }
    this.solve(vk, wk, h, true, false, residual);
  }
}
