/**
 * The contact solver: contacts as their own constraint, not generic rows (Box2D v3 contact_solver.c,
 * Catto's "Solver2D" soft step; Jolt's ContactConstraintManager). Our code and words; the stage names
 * are Box2D's: prepare, warm start, solve (with or without bias), relax, restitution, store impulses.
 *
 * One record per manifold point c (one packed Float64Array, fields below), between bodies A and B with the
 * unit normal n from A to B, tangents t₁ = tangentOf(n), t₂ = n × t₁ (rows/contact.ts), lever arms
 * r_A = p_A − x_A, r_B = p_B − x_B from the centres of mass (world, fixed for the frame), and the
 * accumulated forces λ_n ≥ 0, λ_t = (λ₁, λ₂) (a (sub)step h applies the impulse h λ).
 *
 * prepare (once per frame, after collision):
 *   the angular Jacobians  r_A × n, r_B × n, r_A × t_k, r_B × t_k
 *   the effective masses   A_nn = m_A⁻¹ + m_B⁻¹ + (r_A×n)ᵀ I_A⁻¹ (r_A×n) + (r_B×n)ᵀ I_B⁻¹ (r_B×n),
 *                          the 2×2 A_tt of the tangents (coupled through the lever arms) and its inverse
 *   the base separation    s₀ (the narrow phase's, at the frame's start pose x⁰, q⁰)
 *   the softness           rows/softness.ts (S1–S3) of the contact rule: biasRate, massScale, impulseScale
 *   μ                      μ_s for a point at rest when found (slip < STATIC_SLIP_SPEED), else μ_d (K2)
 *   the warm start         λ from the pair's persistent manifold (collision/manifolds.ts), matched there
 * Within the frame nothing is rebuilt: the separation follows the bodies (Box2D's base separation plus
 * the change of the anchors' relative position), to first order in each body's motion since x⁰, q⁰:
 *   s = s₀ + n·(Δx_B − Δx_A) + Δθ_B·(r_B × n) − Δθ_A·(r_A × n),   Δθ = 2 vec(q q⁰⁻¹)          (K1)
 * (updatePose computes Δx, Δθ per body once per pose, not per point).
 *
 * solve(useBias) (Box2D b2SolveContact; Catto, Soft Constraints, GDC 2011), per point in list order:
 *   normal    v_n = J_n V;  s > 0 (apart, speculative): bias = s/h, rigid (the gap may close, no more);
 *             touching and useBias: bias = max(biasRate · min(0, s + slop), −maxPushout), soft;
 *             touching, no bias (relax): bias = 0, rigid.
 *             Δλ_n = −massScale · (v_n + bias) / (h A_nn) − impulseScale · λ_n,  λ_n ← max(0, λ_n + Δλ_n)   (S1)
 *   friction  the stick solution f = λ_t − h⁻¹ A_tt⁻¹ v_t; kept while |f| ≤ μ_s λ_n (static friction),
 *             else projected onto the disc |λ_t| ≤ μ λ_n in the metric of A_tt (Coulomb's maximal
 *             dissipation: rows/block-solver.ts frictionDisc), so friction is isotropic. With the rule's
 *             anchorFriction (the soft step), a sticking point's tangential drift from its friction
 *             anchors (collision/manifolds.ts) is fed back too, in the biased solve only (prepare).
 *   The slop is the rule's, at most the pair's (collision/pipeline.ts pairSlop: small bodies); within it
 *   a touching row is rigid and unbiased, past it the spring acts on s + slop.
 *   each impulse h Δλ is applied to V at once (sequential impulses / Gauss-Seidel).
 * relax = solve(useBias = false): removes the velocity the soft bias added, so push-out is not bounce.
 * restitution: collision propagation (Guendelman, Bridson & Fedkiw 2003), as rows/block-solver.ts's
 *   applyRestitution (its header has the derivation), on the points' own A_nn.
 * storeImpulses: λ back onto the manifold records, for the next frame's warm start.
 *
 * Invariants: prepare reads the contact list and the manifolds; every later stage reads only this
 * module's arrays and the bodies' velocities (v, ω: written in place), poses (updatePose) and world
 * inverse inertia (9 per body); the list must not change between prepare and storeImpulses. A body
 * with inverse mass 0 (fixed) takes no impulse.
 */
import type { ContactList } from '../rows/contact.js';
import { STATIC_SLIP_SPEED } from '../rows/contact.js';
import type { ManifoldStore } from '../collision/manifolds.js';
import { softness, type Softness, type SoftnessSpec } from '../rows/softness.js';
import { frictionDisc, COLLISION_SWEEPS, type ContactRule } from '../rows/block-solver.js';

/** Points of one manifold that collide together at most, and the Gauss-Seidel sweeps of their block (restitution). */
const MAX_COLLIDING = 8;
const MANIFOLD_SWEEPS = 32;

/** Anchored friction's Baumgarte rate, in units of 1/h (measured, see ContactSolver.prepare). */
export const FRICTION_ANCHOR_BETA = 0.1;

/** Residual channels of contact rows (the one-pager's diagnostics: normal and friction apart). */
export const CONTACT_NORMAL_CHANNEL = 'contact normal';
export const FRICTION_CHANNEL = 'friction';
/** What the contact solvers' residual curves hold (ResidualCurve.quantity). */
export const RESIDUAL_QUANTITY = '‖b − Aλᵏ‖₂ over each kind of joint\'s rows and over the contacts\' normal and friction rows, m/s² (rad/s² on angular rows; h·r is the velocity error left)';

/** The sums of squared residuals of one pass (residual): normal rows, friction rows (velocity², (m/s)²). */
export interface ContactResidual {
  normal: number;
  friction: number;
}

/**
 * The record of one point, packed: point c's numbers are data[STRIDE · c + field] (one typed array,
 * the record contiguous in memory, as Box2D's b2ContactConstraintPoint array; a sweep then streams one
 * array instead of two dozen).
 */
const N = 0; // n (3)
const T1 = 3; // t₁ (3)
const T2 = 6; // t₂ (3)
const RNA = 9; // r_A × n (3)
const RNB = 12; // r_B × n (3)
const R1A = 15; // r_A × t₁
const R1B = 18;
const R2A = 21; // r_A × t₂
const R2B = 24;
const IRNA = 27; // I_A⁻¹ (r_A × n) (3): the angular response, from the frame's start inertia (Box2D keeps the prepared inverse inertia too)
const IRNB = 30;
const IR1A = 33;
const IR1B = 36;
const IR2A = 39;
const IR2B = 42;
const MA = 45; // m_A⁻¹ (0: fixed)
const MB = 46;
const KN = 47; // A_nn
const TINV = 48; // A_tt⁻¹, row-major (4)
const S0 = 52; // base separation
const BIAS_RATE = 53;
const MASS_SCALE = 54;
const IMPULSE_SCALE = 55;
const MU = 56;
const MU_STATIC = 57;
const LN = 58; // λ_n
const LT1 = 59; // λ₁
const LT2 = 60; // λ₂
const E = 61; // restitution e
const SLOP = 62; // the point's slop: the rule's, at most the pair's (collision/pipeline.ts pairSlop)
const CT1 = 63; // anchored friction: the drift t₁·(f_B − f_A) of the friction anchors at prepare (0: not anchored)
const CT2 = 64;
const ANCHORED = 65; // 1: anchored friction on this point
const SLID = 66; // 1: the point slid (friction on the disc's rim) this frame, or its anchor was dropped
const STRIDE = 68;

export class ContactSolver {
  count = 0;
  private capacity = 0;
  bodyA = new Int32Array(0);
  bodyB = new Int32Array(0);
  manifoldPoint = new Int32Array(0);
  /** the packed records (STRIDE numbers per point, fields above) */
  data = new Float64Array(0);
  // per body: the pose at prepare, and the motion since (updatePose)
  private x0 = new Float64Array(0);
  private q0 = new Float64Array(0);
  private dx = new Float64Array(0);
  private dtheta = new Float64Array(0);
  private maxPushout = 0;
  private anyElastic = false;
  private readonly disc = new Float64Array(2);
  private readonly anchorScratch = new Float64Array(6);

  /**
   * prepare (header): the records of every point of `list`, λ from the manifolds' records (times the
   * warm-start factor; no store: λ = 0), at the pose (position, orientation) of detection; `h` the
   * (sub)step the softness is for, `inverseInertia` the world I⁻¹ (9 per body).
   */
  prepare(list: ContactList, store: ManifoldStore | null, position: Float64Array, orientation: Float64Array, inverseMass: Float64Array, inverseInertia: Float64Array, h: number, rule: ContactRule, warmStart: number, round: Uint8Array | null = null): void {
    const anchoring = rule.anchorFriction === true && store !== null;
    const n = list.count;
    this.reserve(n, inverseMass.length);
    this.count = n;
    this.maxPushout = rule.maxPushout;
    this.x0.set(position.subarray(0, this.x0.length));
    this.q0.set(orientation.subarray(0, this.q0.length));
    this.dx.fill(0);
    this.dtheta.fill(0);
    const unit = springOf(rule.softness, h);
    const staticUnit = rule.staticSoftness ? springOf(rule.staticSoftness, h) : unit;
    const I = inverseInertia, D = this.data;
    const ln = list.normal, lt1 = list.tangent1, lt2 = list.tangent2, armA = list.armA, armB = list.armB;
    let anyElastic = false;
    for (let c = 0; c < n; c++) {
      const a = list.bodyA[c], b = list.bodyB[c];
      const mA = inverseMass[a], mB = inverseMass[b];
      this.bodyA[c] = a;
      this.bodyB[c] = b;
      const d = STRIDE * c, o = 3 * c;
      D[d + MA] = mA;
      D[d + MB] = mB;
      D[d + N] = ln[o]; D[d + N + 1] = ln[o + 1]; D[d + N + 2] = ln[o + 2];
      D[d + T1] = lt1[o]; D[d + T1 + 1] = lt1[o + 1]; D[d + T1 + 2] = lt1[o + 2];
      D[d + T2] = lt2[o]; D[d + T2 + 1] = lt2[o + 1]; D[d + T2 + 2] = lt2[o + 2];
      // r × d for d = n, t₁, t₂ on each side, and I⁻¹ (r × d)
      cross(armA, o, D, d + N, D, d + RNA);
      cross(armB, o, D, d + N, D, d + RNB);
      cross(armA, o, D, d + T1, D, d + R1A);
      cross(armB, o, D, d + T1, D, d + R1B);
      cross(armA, o, D, d + T2, D, d + R2A);
      cross(armB, o, D, d + T2, D, d + R2B);
      // A = J M⁻¹ Jᵀ per direction: m_A⁻¹ + m_B⁻¹ (t₁ ⟂ t₂: no linear coupling) + (r×d)ᵀ I⁻¹ (r×e) on each side
      let kN = mA + mB, k11 = mA + mB, k22 = mA + mB, k12 = 0;
      if (mA > 0) {
        const j = 9 * a;
        mat3(I, j, D, d + RNA, D, d + IRNA);
        mat3(I, j, D, d + R1A, D, d + IR1A);
        mat3(I, j, D, d + R2A, D, d + IR2A);
        kN += dot3(D, d + RNA, d + IRNA);
        k11 += dot3(D, d + R1A, d + IR1A);
        k22 += dot3(D, d + R2A, d + IR2A);
        k12 += dot3(D, d + R1A, d + IR2A);
      } else for (let k = 0; k < 3; k++) D[d + IRNA + k] = D[d + IR1A + k] = D[d + IR2A + k] = 0;
      if (mB > 0) {
        const j = 9 * b;
        mat3(I, j, D, d + RNB, D, d + IRNB);
        mat3(I, j, D, d + R1B, D, d + IR1B);
        mat3(I, j, D, d + R2B, D, d + IR2B);
        kN += dot3(D, d + RNB, d + IRNB);
        k11 += dot3(D, d + R1B, d + IR1B);
        k22 += dot3(D, d + R2B, d + IR2B);
        k12 += dot3(D, d + R1B, d + IR2B);
      } else for (let k = 0; k < 3; k++) D[d + IRNB + k] = D[d + IR1B + k] = D[d + IR2B + k] = 0;
      D[d + KN] = kN;
      const det = k11 * k22 - k12 * k12;
      D[d + TINV] = k22 / det;
      D[d + TINV + 1] = -k12 / det;
      D[d + TINV + 2] = -k12 / det;
      D[d + TINV + 3] = k11 / det;
      D[d + S0] = list.separation[c];
      D[d + SLOP] = Math.min(rule.slop, list.slop[c]);
      const spring = mA === 0 || mB === 0 ? staticUnit : unit;
      D[d + BIAS_RATE] = spring.biasRate;
      D[d + MASS_SCALE] = spring.massScale;
      D[d + IMPULSE_SCALE] = spring.impulseScale;
      // (K2) a point at rest when found may hold up to μ_s; a sliding one slides under μ_d
      D[d + MU] = list.slip[c] < STATIC_SLIP_SPEED ? list.staticFriction[c] : list.friction[c];
      D[d + MU_STATIC] = list.staticFriction[c];
      const e = list.restitution[c];
      D[d + E] = e;
      if (e > 0) anyElastic = true;
      const p = list.manifoldPoint[c];
      this.manifoldPoint[c] = p;
      D[d + SLID] = 0;
      D[d + ANCHORED] = 0;
      D[d + CT1] = 0;
      D[d + CT2] = 0;
      if (anchoring && p >= 0 && !(round && (round[a] || round[b]))) {
        // anchored friction (the drift a velocity-only friction never corrects): the anchors where the
        // point stuck, in the world now, f = x + R(q) f_local; its tangential drift C_t = t·(f_B − f_A)
        // (the current points face each other: t·(p_B − p_A) = 0), fed back in the biased solve at
        // FRICTION_ANCHOR_BETA / h (Baumgarte; the relax removes that velocity). Round bodies are left
        // out (their contact point moves over the surface as they roll), and a drift beyond the pair's
        // slop drops the anchor (the point has moved on: it is re-anchored). Measured on a 10-box stack
        // with yaws 0.5·y·sin(1.7 i), creep of the top over 9 s awake, y = 0 / .01 / .02 / .03 / .05 rad:
        // 3.1 / 5.5 / 7.8 / 5.2 / 27 mm without, 3.1 / 4.4 / 6.4 / 7.2 / 19 mm with (the stack is chaotic,
        // ±50 % between near-equal runs); fed by the contact spring instead it was 2.3 / 10 / 14 / 10 / 6.5.
        // A base-20 pyramid: 3.4 mm without, 10.9 with β_f, 1.5 with the spring. Neither form wins on
        // every pile, so no solver turns it on by default yet (softstep/cpu.ts).
        const fa = this.anchorScratch;
        localToWorld(orientation, a, store!.frictionAnchorA, 3 * p, position, fa, 0);
        localToWorld(orientation, b, store!.frictionAnchorB, 3 * p, position, fa, 3);
        const dx = fa[3] - fa[0], dy = fa[4] - fa[1], dz = fa[5] - fa[2];
        const c1 = D[d + T1] * dx + D[d + T1 + 1] * dy + D[d + T1 + 2] * dz;
        const c2 = D[d + T2] * dx + D[d + T2 + 1] * dy + D[d + T2 + 2] * dz;
        if (c1 * c1 + c2 * c2 <= list.slop[c] * list.slop[c]) {
          D[d + ANCHORED] = 1;
          D[d + CT1] = c1;
          D[d + CT2] = c2;
        } else D[d + SLID] = 1;
      }
      if (store && p >= 0 && warmStart > 0) {
        D[d + LN] = warmStart * store.normalImpulse[p];
        D[d + LT1] = warmStart * store.tangentImpulse1[p];
        D[d + LT2] = warmStart * store.tangentImpulse2[p];
      } else {
        D[d + LN] = 0;
        D[d + LT1] = 0;
        D[d + LT2] = 0;
      }
    }
    this.anyElastic = anyElastic;
  }

  /** Δx = x − x⁰ and Δθ = 2 vec(q q⁰⁻¹) (scalar part made ≥ 0) of every body at the pose now (K1). */
  updatePose(position: Float64Array, orientation: Float64Array): void {
    const x0 = this.x0, q0 = this.q0, dx = this.dx, dt = this.dtheta;
    const nb = dx.length / 3;
    for (let i = 0; i < nb; i++) {
      const o = 3 * i, q = 4 * i;
      dx[o] = position[o] - x0[o];
      dx[o + 1] = position[o + 1] - x0[o + 1];
      dx[o + 2] = position[o + 2] - x0[o + 2];
      const x = orientation[q], y = orientation[q + 1], z = orientation[q + 2], w = orientation[q + 3];
      const bx = -q0[q], by = -q0[q + 1], bz = -q0[q + 2], bw = q0[q + 3];
      const rw = w * bw - (x * bx + y * by + z * bz);
      const sign = rw < 0 ? -2 : 2;
      dt[o] = sign * (w * bx + bw * x + (y * bz - z * by));
      dt[o + 1] = sign * (w * by + bw * y + (z * bx - x * bz));
      dt[o + 2] = sign * (w * bz + bw * z + (x * by - y * bx));
    }
  }

  /** The separation of point c at the pose of the last updatePose (K1). */
  separation(c: number): number {
    const d = STRIDE * c, a = 3 * this.bodyA[c], b = 3 * this.bodyB[c];
    const D = this.data, dx = this.dx, dt = this.dtheta;
    return (
      D[d + S0] +
      D[d + N] * (dx[b] - dx[a]) + D[d + N + 1] * (dx[b + 1] - dx[a + 1]) + D[d + N + 2] * (dx[b + 2] - dx[a + 2]) +
      dt[b] * D[d + RNB] + dt[b + 1] * D[d + RNB + 1] + dt[b + 2] * D[d + RNB + 2] -
      (dt[a] * D[d + RNA] + dt[a + 1] * D[d + RNA + 1] + dt[a + 2] * D[d + RNA + 2])
    );
  }

  /** warm start: V += h M⁻¹ Jᵀ λ of every point's accumulated λ. */
  warmStart(v: Float64Array, w: Float64Array, h: number): void {
    const D = this.data;
    for (let c = 0; c < this.count; c++) {
      const d = STRIDE * c;
      const ln = h * D[d + LN], l1 = h * D[d + LT1], l2 = h * D[d + LT2];
      if (ln === 0 && l1 === 0 && l2 === 0) continue;
      const px = ln * D[d + N] + l1 * D[d + T1] + l2 * D[d + T2];
      const py = ln * D[d + N + 1] + l1 * D[d + T1 + 1] + l2 * D[d + T2 + 1];
      const pz = ln * D[d + N + 2] + l1 * D[d + T1 + 2] + l2 * D[d + T2 + 2];
      const mA = D[d + MA], mB = D[d + MB];
      if (mA > 0) {
        const o = 3 * this.bodyA[c];
        v[o] -= mA * px; v[o + 1] -= mA * py; v[o + 2] -= mA * pz;
        w[o] -= ln * D[d + IRNA] + l1 * D[d + IR1A] + l2 * D[d + IR2A];
        w[o + 1] -= ln * D[d + IRNA + 1] + l1 * D[d + IR1A + 1] + l2 * D[d + IR2A + 1];
        w[o + 2] -= ln * D[d + IRNA + 2] + l1 * D[d + IR1A + 2] + l2 * D[d + IR2A + 2];
      }
      if (mB > 0) {
        const o = 3 * this.bodyB[c];
        v[o] += mB * px; v[o + 1] += mB * py; v[o + 2] += mB * pz;
        w[o] += ln * D[d + IRNB] + l1 * D[d + IR1B] + l2 * D[d + IR2B];
        w[o + 1] += ln * D[d + IRNB + 1] + l1 * D[d + IR1B + 1] + l2 * D[d + IR2B + 1];
        w[o + 2] += ln * D[d + IRNB + 2] + l1 * D[d + IR1B + 2] + l2 * D[d + IR2B + 2];
      }
    }
  }

  /**
   * solve (useBias = true) or relax (false), one sweep over the points (header); reverse = true walks
   * them from the last to the first. With `residual` given, nothing changes: the sums of the squared
   * projected residuals (velocity units) of the normal and friction rows are added to it (a row at
   * its bound whose residual pushes it further out counts 0).
   */
  solve(v: Float64Array, w: Float64Array, h: number, useBias: boolean, reverse = false, residual: ContactResidual | null = null): void {
    const invH = 1 / h;
    const D = this.data, dx = this.dx, dth = this.dtheta;
    const maxPushout = this.maxPushout;
    const count = this.count;
    const bodyA = this.bodyA, bodyB = this.bodyB, disc = this.disc;
    for (let k = 0; k < count; k++) {
      const c = reverse ? count - 1 - k : k;
      const d = STRIDE * c;
      const ia = 3 * bodyA[c], ib = 3 * bodyB[c];
      const mA = D[d + MA], mB = D[d + MB];
      let vax = v[ia], vay = v[ia + 1], vaz = v[ia + 2], wax = w[ia], way = w[ia + 1], waz = w[ia + 2];
      let vbx = v[ib], vby = v[ib + 1], vbz = v[ib + 2], wbx = w[ib], wby = w[ib + 1], wbz = w[ib + 2];
      const nx = D[d + N], ny = D[d + N + 1], nz = D[d + N + 2];
      const anx = D[d + RNA], any = D[d + RNA + 1], anz = D[d + RNA + 2];
      const bnx = D[d + RNB], bny = D[d + RNB + 1], bnz = D[d + RNB + 2];
      // (K1) the separation at the pose now
      const s =
        D[d + S0] +
        nx * (dx[ib] - dx[ia]) + ny * (dx[ib + 1] - dx[ia + 1]) + nz * (dx[ib + 2] - dx[ia + 2]) +
        dth[ib] * bnx + dth[ib + 1] * bny + dth[ib + 2] * bnz - (dth[ia] * anx + dth[ia + 1] * any + dth[ia + 2] * anz);
      let bias = 0, ms = 1, is = 0;
      if (s > 0) bias = s * invH; // speculative: close the gap, no more
      else if (useBias && s + D[d + SLOP] < 0) {
        // beyond the slop: the spring on the overlap past it. Within the slop the row stays rigid with no
        // bias: a soft row there is a damper alone (bias 0, −impulseScale λ), which lets a resting body
        // sink through the slop at v_n = −h γ λ (measured under si-soft-cpu at 1/120 s: 2.4 mm/s)
        bias = D[d + BIAS_RATE] * (s + D[d + SLOP]);
        if (bias < -maxPushout) bias = -maxPushout;
        ms = D[d + MASS_SCALE];
        is = D[d + IMPULSE_SCALE];
      }
      // normal: v_n = J_n V (S1)
      const vn = nx * (vbx - vax) + ny * (vby - vay) + nz * (vbz - vaz) + wbx * bnx + wby * bny + wbz * bnz - (wax * anx + way * any + waz * anz);
      const kN = D[d + KN];
      const oldN = D[d + LN];
      if (residual) {
        // ρ = J V + bias + h γ λ, γ = A_nn · impulseScale / massScale (rows/softness.ts S1)
        const r = vn + bias + (is > 0 ? (h * kN * is * oldN) / ms : 0);
        if (!(oldN <= 0 && r > 0)) residual.normal += r * r;
      } else {
        let next = oldN - (ms * (vn + bias) * invH) / kN - is * oldN;
        if (next < 0) next = 0;
        D[d + LN] = next;
        const P = h * (next - oldN);
        if (P !== 0) {
          // V_A −= M_A⁻¹ J_nAᵀ P, V_B += M_B⁻¹ J_nBᵀ P
          const pa = mA * P, pb = mB * P;
          vax -= pa * nx; vay -= pa * ny; vaz -= pa * nz;
          wax -= P * D[d + IRNA]; way -= P * D[d + IRNA + 1]; waz -= P * D[d + IRNA + 2];
          vbx += pb * nx; vby += pb * ny; vbz += pb * nz;
          wbx += P * D[d + IRNB]; wby += P * D[d + IRNB + 1]; wbz += P * D[d + IRNB + 2];
        }
      }
      // friction: v_t = J_t V (K2). With λ_n = 0 the disc is the point λ_t = 0 whatever v_t (a speculative
      // or separating point): nothing to do when λ_t is 0 already (the result is the same bits)
      if (residual === null && D[d + LN] === 0 && D[d + LT1] === 0 && D[d + LT2] === 0) {
        if (mA > 0) {
          v[ia] = vax; v[ia + 1] = vay; v[ia + 2] = vaz;
          w[ia] = wax; w[ia + 1] = way; w[ia + 2] = waz;
        }
        if (mB > 0) {
          v[ib] = vbx; v[ib + 1] = vby; v[ib + 2] = vbz;
          w[ib] = wbx; w[ib + 1] = wby; w[ib + 2] = wbz;
        }
        continue;
      }
      const dvx = vbx - vax, dvy = vby - vay, dvz = vbz - vaz;
      const v1 = D[d + T1] * dvx + D[d + T1 + 1] * dvy + D[d + T1 + 2] * dvz + wbx * D[d + R1B] + wby * D[d + R1B + 1] + wbz * D[d + R1B + 2] - (wax * D[d + R1A] + way * D[d + R1A + 1] + waz * D[d + R1A + 2]);
      const v2 = D[d + T2] * dvx + D[d + T2 + 1] * dvy + D[d + T2 + 2] * dvz + wbx * D[d + R2B] + wby * D[d + R2B + 1] + wbz * D[d + R2B + 2] - (wax * D[d + R2A] + way * D[d + R2A + 1] + waz * D[d + R2A + 2]);
      const old1 = D[d + LT1], old2 = D[d + LT2];
      const lamNow = D[d + LN];
      const radius = D[d + MU] * lamNow;
      // anchored friction (biased solve, touching): the drift C_t moved with the bodies (K1 along t_k)
      // is fed back, λ_t ← λ_t − A_tt⁻¹ (v_t + β_f C_t / h) / h, then the disc
      let b1 = 0, b2 = 0;
      if (useBias && s <= 0 && D[d + ANCHORED] === 1) {
        const c1 =
          D[d + CT1] + D[d + T1] * (dx[ib] - dx[ia]) + D[d + T1 + 1] * (dx[ib + 1] - dx[ia + 1]) + D[d + T1 + 2] * (dx[ib + 2] - dx[ia + 2]) +
          dth[ib] * D[d + R1B] + dth[ib + 1] * D[d + R1B + 1] + dth[ib + 2] * D[d + R1B + 2] - (dth[ia] * D[d + R1A] + dth[ia + 1] * D[d + R1A + 1] + dth[ia + 2] * D[d + R1A + 2]);
        const c2 =
          D[d + CT2] + D[d + T2] * (dx[ib] - dx[ia]) + D[d + T2 + 1] * (dx[ib + 1] - dx[ia + 1]) + D[d + T2 + 2] * (dx[ib + 2] - dx[ia + 2]) +
          dth[ib] * D[d + R2B] + dth[ib + 1] * D[d + R2B + 1] + dth[ib + 2] * D[d + R2B + 2] - (dth[ia] * D[d + R2A] + dth[ia + 1] * D[d + R2A + 1] + dth[ia + 2] * D[d + R2A + 2]);
        const rate = FRICTION_ANCHOR_BETA * invH;
        b1 = rate * c1;
        b2 = rate * c2;
        const bl = Math.sqrt(b1 * b1 + b2 * b2);
        if (bl > maxPushout) (b1 *= maxPushout / bl), (b2 *= maxPushout / bl);
      }
      const u1 = v1 + b1, u2 = v2 + b2;
      let f1 = old1 - invH * (D[d + TINV] * u1 + D[d + TINV + 1] * u2);
      let f2 = old2 - invH * (D[d + TINV + 2] * u1 + D[d + TINV + 3] * u2);
      const len2 = f1 * f1 + f2 * f2;
      const staticRadius = D[d + MU_STATIC] * lamNow;
      const sliding = len2 > staticRadius * staticRadius;
      if (residual) {
        // on the disc's rim with the residual pushing outward (Δλ ∝ −ρ), or a disc of radius 0 (μ λ_n = 0:
        // λ_t = 0 is exact whatever the slip): complementarity holds, the row counts 0
        const atEdge = sliding && (radius <= 0 || (old1 * old1 + old2 * old2 >= radius * radius * (1 - 1e-12) && old1 * u1 + old2 * u2 < 0));
        if (!atEdge) residual.friction += u1 * u1 + u2 * u2;
        continue;
      }
      if (sliding && len2 > radius * radius) {
        // beyond the disc: its point nearest f in the metric of A_tt (maximal dissipation)
        frictionDisc(D, d + TINV, f1, f2, radius, disc);
        f1 = disc[0];
        f2 = disc[1];
        D[d + SLID] = 1;
      }
      D[d + LT1] = f1;
      D[d + LT2] = f2;
      const P1 = h * (f1 - old1), P2 = h * (f2 - old2);
      if (P1 !== 0 || P2 !== 0) {
        const px = P1 * D[d + T1] + P2 * D[d + T2], py = P1 * D[d + T1 + 1] + P2 * D[d + T2 + 1], pz = P1 * D[d + T1 + 2] + P2 * D[d + T2 + 2];
        vax -= mA * px; vay -= mA * py; vaz -= mA * pz;
        wax -= P1 * D[d + IR1A] + P2 * D[d + IR2A];
        way -= P1 * D[d + IR1A + 1] + P2 * D[d + IR2A + 1];
        waz -= P1 * D[d + IR1A + 2] + P2 * D[d + IR2A + 2];
        vbx += mB * px; vby += mB * py; vbz += mB * pz;
        wbx += P1 * D[d + IR1B] + P2 * D[d + IR2B];
        wby += P1 * D[d + IR1B + 1] + P2 * D[d + IR2B + 1];
        wbz += P1 * D[d + IR1B + 2] + P2 * D[d + IR2B + 2];
      }
      if (mA > 0) {
        v[ia] = vax; v[ia + 1] = vay; v[ia + 2] = vaz;
        w[ia] = wax; w[ia + 1] = way; w[ia + 2] = waz;
      }
      if (mB > 0) {
        v[ib] = vbx; v[ib + 1] = vby; v[ib + 2] = vbz;
        w[ib] = wbx; w[ib + 1] = wby; w[ib + 2] = wbz;
      }
    }
  }

  /**
   * restitution: collision propagation (rows/block-solver.ts applyRestitution has the derivation):
   * per manifold (consecutive points of one pair), the points with e > 0 approaching faster than
   * `threshold` (before this step's forces: v_n⁻ = v_n − J_n h g) whose gap closes within h take
   * P ≥ 0 so that they leave at −e v_n⁻ (then the forces), by projected Gauss-Seidel on the manifold's
   * points; swept until none collides (at most COLLISION_SWEEPS). `gravityStep` = h g when V has
   * this step's gravity in it, else null. The collision impulses are not λ. Returns the sweeps that collided.
   */
  restitution(v: Float64Array, w: Float64Array, h: number, threshold: number, gravityStep: ArrayLike<number> | null): number {
    if (!this.anyElastic) return 0;
    const gx = gravityStep ? gravityStep[0] : 0, gy = gravityStep ? gravityStep[1] : 0, gz = gravityStep ? gravityStep[2] : 0;
    const pts = this.collisionPoint, target = this.collisionTarget, impulse = this.collisionImpulse;
    const D = this.data;
    for (let sweep = 0; sweep < COLLISION_SWEEPS; sweep++) {
      let collided = false;
      for (let m0 = 0; m0 < this.count; ) {
        const a = this.bodyA[m0], b = this.bodyB[m0];
        let m1 = m0 + 1;
        while (m1 < this.count && this.bodyA[m1] === a && this.bodyB[m1] === b) m1++;
        let k = 0;
        for (let c = m0; c < m1 && k < MAX_COLLIDING; c++) {
          const d = STRIDE * c;
          const e = D[d + E];
          if (!(e > 0)) continue;
          const vn = this.normalVelocity(c, v, w);
          const ng = D[d + N] * gx + D[d + N + 1] * gy + D[d + N + 2] * gz;
          const gn = (D[d + MB] > 0 ? ng : 0) - (D[d + MA] > 0 ? ng : 0);
          const before = vn - gn;
          if (!(before < -threshold) || !(this.separation(c) + h * vn < 0)) continue;
          pts[k] = c;
          target[k] = -e * before + gn;
          impulse[k] = 0;
          k++;
        }
        if (k > 0) {
          collided = true;
          for (let it = 0; it < MANIFOLD_SWEEPS; it++) {
            let change = 0, size = 0;
            for (let i = 0; i < k; i++) {
              const c = pts[i];
              const vn = this.normalVelocity(c, v, w);
              const next = Math.max(0, impulse[i] + (target[i] - vn) / D[STRIDE * c + KN]);
              const dP = next - impulse[i];
              if (dP !== 0) this.applyNormal(c, dP, v, w);
              impulse[i] = next;
              change = Math.max(change, Math.abs(dP));
              size = Math.max(size, next);
            }
            if (k === 1 || change <= 1e-12 * size) break;
          }
        }
        m0 = m1;
      }
      if (!collided) return sweep;
    }
    return COLLISION_SWEEPS;
  }
  private readonly collisionPoint = new Int32Array(MAX_COLLIDING);
  private readonly collisionTarget = new Float64Array(MAX_COLLIDING);
  private readonly collisionImpulse = new Float64Array(MAX_COLLIDING);

  /** J_n V of point c (relative normal velocity, > 0 separating). */
  normalVelocity(c: number, v: Float64Array, w: Float64Array): number {
    const d = STRIDE * c, a = 3 * this.bodyA[c], b = 3 * this.bodyB[c];
    const D = this.data;
    return (
      D[d + N] * (v[b] - v[a]) + D[d + N + 1] * (v[b + 1] - v[a + 1]) + D[d + N + 2] * (v[b + 2] - v[a + 2]) +
      w[b] * D[d + RNB] + w[b + 1] * D[d + RNB + 1] + w[b + 2] * D[d + RNB + 2] - (w[a] * D[d + RNA] + w[a + 1] * D[d + RNA + 1] + w[a + 2] * D[d + RNA + 2])
    );
  }

  /** The impulse P along point c's normal row: V_A −= M_A⁻¹ J_nAᵀ P, V_B += M_B⁻¹ J_nBᵀ P. */
  private applyNormal(c: number, P: number, v: Float64Array, w: Float64Array): void {
    const d = STRIDE * c, D = this.data;
    const mA = D[d + MA], mB = D[d + MB];
    if (mA > 0) {
      const o = 3 * this.bodyA[c];
      for (let k = 0; k < 3; k++) {
        v[o + k] -= mA * P * D[d + N + k];
        w[o + k] -= P * D[d + IRNA + k];
      }
    }
    if (mB > 0) {
      const o = 3 * this.bodyB[c];
      for (let k = 0; k < 3; k++) {
        v[o + k] += mB * P * D[d + N + k];
        w[o + k] += P * D[d + IRNB + k];
      }
    }
  }

  /** store impulses: λ of every point back onto its manifold record (the next frame's warm start). */
  storeImpulses(store: ManifoldStore): void {
    const D = this.data;
    for (let c = 0; c < this.count; c++) {
      const p = this.manifoldPoint[c];
      if (p < 0) continue;
      const d = STRIDE * c;
      store.normalImpulse[p] = D[d + LN];
      store.tangentImpulse1[p] = D[d + LT1];
      store.tangentImpulse2[p] = D[d + LT2];
      // a point that slid, or carries no load, is anchored afresh where it is now
      if (D[d + SLID] === 1 || D[d + LN] === 0) store.resetFrictionAnchor(p);
    }
  }

  /** Point c's λ_n (N). */
  normalForce(c: number): number {
    return this.data[STRIDE * c + LN];
  }

  private reserve(points: number, bodies: number): void {
    if (this.x0.length !== 3 * bodies) {
      this.x0 = new Float64Array(3 * bodies);
      this.q0 = new Float64Array(4 * bodies);
      this.dx = new Float64Array(3 * bodies);
      this.dtheta = new Float64Array(3 * bodies);
    }
    if (points <= this.capacity) return;
    const cap = Math.max(points, 2 * this.capacity, 16);
    this.bodyA = new Int32Array(cap);
    this.bodyB = new Int32Array(cap);
    this.manifoldPoint = new Int32Array(cap);
    this.data = new Float64Array(STRIDE * cap);
    this.capacity = cap;
  }
}

/** The spring of a contact rule at unit effective mass (rows/softness.ts S3: massScale and biasRate do not depend on it). */
function springOf(spec: SoftnessSpec, h: number): Softness {
  if (spec.kind === 'compliance') throw new Error('contact softness is a frequency spring or a rigid Baumgarte rate, not a compliance');
  return softness(spec, h, 1);
}

/** out[q..q+3) = r × d, r at R[o..o+3), d at Dv[p..p+3). */
function cross(R: Float64Array, o: number, Dv: Float64Array, p: number, out: Float64Array, q: number): void {
  const rx = R[o], ry = R[o + 1], rz = R[o + 2], x = Dv[p], y = Dv[p + 1], z = Dv[p + 2];
  out[q] = ry * z - rz * y;
  out[q + 1] = rz * x - rx * z;
  out[q + 2] = rx * y - ry * x;
}

/** out[q..q+3) = I x, I row-major 3×3 at I[i..i+9), x at X[o..o+3). */
function mat3(I: Float64Array, i: number, X: Float64Array, o: number, out: Float64Array, q: number): void {
  const x0 = X[o], x1 = X[o + 1], x2 = X[o + 2];
  out[q] = I[i] * x0 + I[i + 1] * x1 + I[i + 2] * x2;
  out[q + 1] = I[i + 3] * x0 + I[i + 4] * x1 + I[i + 5] * x2;
  out[q + 2] = I[i + 6] * x0 + I[i + 7] * x1 + I[i + 8] * x2;
}

/** out[q..q+3) = x_i + R(q_i) l, l at L[o..o+3) (body i's local point in the world; rigid/quat.ts rotate's matrix). */
function localToWorld(orientation: Float64Array, i: number, L: Float64Array, o: number, position: Float64Array, out: Float64Array, q: number): void {
  const qo = 4 * i;
  const x = orientation[qo], y = orientation[qo + 1], z = orientation[qo + 2], w = orientation[qo + 3];
  const lx = L[o], ly = L[o + 1], lz = L[o + 2];
  out[q] = position[3 * i] + (1 - 2 * (y * y + z * z)) * lx + 2 * (x * y - z * w) * ly + 2 * (x * z + y * w) * lz;
  out[q + 1] = position[3 * i + 1] + 2 * (x * y + z * w) * lx + (1 - 2 * (x * x + z * z)) * ly + 2 * (y * z - x * w) * lz;
  out[q + 2] = position[3 * i + 2] + 2 * (x * z - y * w) * lx + 2 * (y * z + x * w) * ly + (1 - 2 * (x * x + y * y)) * lz;
}

/** X[o..o+3) · X[p..p+3) */
function dot3(X: Float64Array, o: number, p: number): number {
  return X[o] * X[p] + X[o + 1] * X[p + 1] + X[o + 2] * X[p + 2];
}
