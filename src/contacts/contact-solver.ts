/**
 * The contact solver: contacts as their own constraint, not generic rows (Box2D v3 contact_solver.c,
 * Catto's "Solver2D" soft step; Jolt's ContactConstraintManager). Our code and words; the stage names
 * are Box2D's: prepare, warm start, solve (with or without bias), relax, restitution, store impulses.
 *
 * One record per manifold point c (structure of arrays, Float64Array), between bodies A and B with the
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
 *             dissipation: rows/block-solver.ts frictionDisc), so friction is isotropic.
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

export class ContactSolver {
  count = 0;
  private capacity = 0;
  bodyA = new Int32Array(0);
  bodyB = new Int32Array(0);
  invMassA = new Float64Array(0);
  invMassB = new Float64Array(0);
  /** n, t₁, t₂ (3 each per point) */
  normal = new Float64Array(0);
  tangent1 = new Float64Array(0);
  tangent2 = new Float64Array(0);
  /** r × n, r × t₁, r × t₂ on A and on B (3 each per point) */
  rnA = new Float64Array(0);
  rnB = new Float64Array(0);
  rt1A = new Float64Array(0);
  rt1B = new Float64Array(0);
  rt2A = new Float64Array(0);
  rt2B = new Float64Array(0);
  /** A_nn (1 per point); A_tt⁻¹ row-major (4 per point) */
  normalA = new Float64Array(0);
  tangentInverse = new Float64Array(0);
  baseSeparation = new Float64Array(0);
  biasRate = new Float64Array(0);
  massScale = new Float64Array(0);
  impulseScale = new Float64Array(0);
  mu = new Float64Array(0);
  muStatic = new Float64Array(0);
  /** e = max(e_A, e_B) per point */
  elasticity = new Float64Array(0);
  /** λ_n, λ₁, λ₂ (N) */
  lambdaN = new Float64Array(0);
  lambdaT1 = new Float64Array(0);
  lambdaT2 = new Float64Array(0);
  manifoldPoint = new Int32Array(0);
  // per body: the pose at prepare, and the motion since (updatePose)
  private x0 = new Float64Array(0);
  private q0 = new Float64Array(0);
  private dx = new Float64Array(0);
  private dtheta = new Float64Array(0);
  private slop = 0;
  private maxPushout = 0;
  private anyElastic = false;
  private readonly disc = new Float64Array(2);
  private readonly discMatrix = new Float64Array(4);

  /**
   * prepare (header): the records of every point of `list`, λ from the manifolds' records (times the
   * warm-start factor; no store: λ = 0), at the pose (position, orientation) of detection; `h` the
   * (sub)step the softness is for, `inverseInertia` the world I⁻¹ (9 per body).
   */
  prepare(list: ContactList, store: ManifoldStore | null, position: Float64Array, orientation: Float64Array, inverseMass: Float64Array, inverseInertia: Float64Array, h: number, rule: ContactRule, warmStart: number): void {
    const n = list.count;
    this.reserve(n, inverseMass.length);
    this.count = n;
    this.slop = rule.slop;
    this.maxPushout = rule.maxPushout;
    this.x0.set(position.subarray(0, this.x0.length));
    this.q0.set(orientation.subarray(0, this.q0.length));
    this.dx.fill(0);
    this.dtheta.fill(0);
    const unit = springOf(rule.softness, h);
    const staticUnit = rule.staticSoftness ? springOf(rule.staticSoftness, h) : unit;
    const I = inverseInertia;
    let anyElastic = false;
    for (let c = 0; c < n; c++) {
      const a = list.bodyA[c], b = list.bodyB[c];
      const mA = inverseMass[a], mB = inverseMass[b];
      this.bodyA[c] = a;
      this.bodyB[c] = b;
      this.invMassA[c] = mA;
      this.invMassB[c] = mB;
      const o = 3 * c;
      const ax = list.armA[o], ay = list.armA[o + 1], az = list.armA[o + 2];
      const bx = list.armB[o], by = list.armB[o + 1], bz = list.armB[o + 2];
      const ia = 9 * a, ib = 9 * b;
      let kN = mA + mB, k11 = mA + mB, k22 = mA + mB, k12 = 0;
      for (let d = 0; d < 3; d++) {
        const dir = d === 0 ? list.normal : d === 1 ? list.tangent1 : list.tangent2;
        const x = dir[o], y = dir[o + 1], z = dir[o + 2];
        const out = d === 0 ? this.normal : d === 1 ? this.tangent1 : this.tangent2;
        out[o] = x;
        out[o + 1] = y;
        out[o + 2] = z;
        const outA = d === 0 ? this.rnA : d === 1 ? this.rt1A : this.rt2A;
        const outB = d === 0 ? this.rnB : d === 1 ? this.rt1B : this.rt2B;
        outA[o] = ay * z - az * y;
        outA[o + 1] = az * x - ax * z;
        outA[o + 2] = ax * y - ay * x;
        outB[o] = by * z - bz * y;
        outB[o + 1] = bz * x - bx * z;
        outB[o + 2] = bx * y - by * x;
      }
      // A = J M⁻¹ Jᵀ per direction: the linear parts m_A⁻¹ + m_B⁻¹ (t₁ ⟂ t₂: no coupling), the angular (r×d)ᵀ I⁻¹ (r×e)
      if (mA > 0) {
        kN += quad(I, ia, this.rnA, o, this.rnA, o);
        k11 += quad(I, ia, this.rt1A, o, this.rt1A, o);
        k22 += quad(I, ia, this.rt2A, o, this.rt2A, o);
        k12 += quad(I, ia, this.rt1A, o, this.rt2A, o);
      }
      if (mB > 0) {
        kN += quad(I, ib, this.rnB, o, this.rnB, o);
        k11 += quad(I, ib, this.rt1B, o, this.rt1B, o);
        k22 += quad(I, ib, this.rt2B, o, this.rt2B, o);
        k12 += quad(I, ib, this.rt1B, o, this.rt2B, o);
      }
      this.normalA[c] = kN;
      const det = k11 * k22 - k12 * k12;
      const o4 = 4 * c;
      this.tangentInverse[o4] = k22 / det;
      this.tangentInverse[o4 + 1] = -k12 / det;
      this.tangentInverse[o4 + 2] = -k12 / det;
      this.tangentInverse[o4 + 3] = k11 / det;
      this.baseSeparation[c] = list.separation[c];
      const spring = mA === 0 || mB === 0 ? staticUnit : unit;
      this.biasRate[c] = spring.biasRate;
      this.massScale[c] = spring.massScale;
      this.impulseScale[c] = spring.impulseScale;
      // (K2) a point at rest when found may hold up to μ_s; a sliding one slides under μ_d
      this.mu[c] = list.slip[c] < STATIC_SLIP_SPEED ? list.staticFriction[c] : list.friction[c];
      this.muStatic[c] = list.staticFriction[c];
      const e = list.restitution[c];
      this.elasticity[c] = e;
      if (e > 0) anyElastic = true;
      const p = list.manifoldPoint[c];
      this.manifoldPoint[c] = p;
      if (store && p >= 0 && warmStart > 0) {
        this.lambdaN[c] = warmStart * store.normalImpulse[p];
        this.lambdaT1[c] = warmStart * store.tangentImpulse1[p];
        this.lambdaT2[c] = warmStart * store.tangentImpulse2[p];
      } else {
        this.lambdaN[c] = 0;
        this.lambdaT1[c] = 0;
        this.lambdaT2[c] = 0;
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
    const o = 3 * c, a = 3 * this.bodyA[c], b = 3 * this.bodyB[c];
    const n = this.normal, dx = this.dx, dt = this.dtheta, ra = this.rnA, rb = this.rnB;
    return (
      this.baseSeparation[c] +
      n[o] * (dx[b] - dx[a]) + n[o + 1] * (dx[b + 1] - dx[a + 1]) + n[o + 2] * (dx[b + 2] - dx[a + 2]) +
      dt[b] * rb[o] + dt[b + 1] * rb[o + 1] + dt[b + 2] * rb[o + 2] -
      (dt[a] * ra[o] + dt[a + 1] * ra[o + 1] + dt[a + 2] * ra[o + 2])
    );
  }

  /** warm start: V += h M⁻¹ Jᵀ λ of every point's accumulated λ. */
  warmStart(v: Float64Array, w: Float64Array, inverseInertia: Float64Array, h: number): void {
    for (let c = 0; c < this.count; c++) {
      const ln = h * this.lambdaN[c], l1 = h * this.lambdaT1[c], l2 = h * this.lambdaT2[c];
      if (ln === 0 && l1 === 0 && l2 === 0) continue;
      const o = 3 * c;
      const n = this.normal, t1 = this.tangent1, t2 = this.tangent2;
      const px = ln * n[o] + l1 * t1[o] + l2 * t2[o];
      const py = ln * n[o + 1] + l1 * t1[o + 1] + l2 * t2[o + 1];
      const pz = ln * n[o + 2] + l1 * t1[o + 2] + l2 * t2[o + 2];
      const mA = this.invMassA[c], mB = this.invMassB[c];
      if (mA > 0) {
        const ra = this.rnA, r1 = this.rt1A, r2 = this.rt2A;
        applyBody(v, w, inverseInertia, this.bodyA[c], mA, -px, -py, -pz, -(ln * ra[o] + l1 * r1[o] + l2 * r2[o]), -(ln * ra[o + 1] + l1 * r1[o + 1] + l2 * r2[o + 1]), -(ln * ra[o + 2] + l1 * r1[o + 2] + l2 * r2[o + 2]));
      }
      if (mB > 0) {
        const rb = this.rnB, r1 = this.rt1B, r2 = this.rt2B;
        applyBody(v, w, inverseInertia, this.bodyB[c], mB, px, py, pz, ln * rb[o] + l1 * r1[o] + l2 * r2[o], ln * rb[o + 1] + l1 * r1[o + 1] + l2 * r2[o + 1], ln * rb[o + 2] + l1 * r1[o + 2] + l2 * r2[o + 2]);
      }
    }
  }

  /**
   * solve (useBias = true) or relax (false), one sweep over the points (header); reverse = true walks
   * them from the last to the first. With `residual` given, nothing changes: the sums of the squared
   * projected residuals (velocity units) of the normal and friction rows are added to it (a row at
   * its bound whose residual pushes it further out counts 0).
   */
  solve(v: Float64Array, w: Float64Array, I: Float64Array, h: number, useBias: boolean, reverse = false, residual: ContactResidual | null = null): void {
    const invH = 1 / h;
    const n = this.normal, t1 = this.tangent1, t2 = this.tangent2;
    const rnA = this.rnA, rnB = this.rnB, r1A = this.rt1A, r1B = this.rt1B, r2A = this.rt2A, r2B = this.rt2B;
    const dx = this.dx, dth = this.dtheta;
    const lamN = this.lambdaN, lamT1 = this.lambdaT1, lamT2 = this.lambdaT2;
    const Ti = this.tangentInverse;
    const slop = this.slop, maxPushout = this.maxPushout;
    const count = this.count;
    for (let k = 0; k < count; k++) {
      const c = reverse ? count - 1 - k : k;
      const o = 3 * c;
      const ia = 3 * this.bodyA[c], ib = 3 * this.bodyB[c];
      const mA = this.invMassA[c], mB = this.invMassB[c];
      let vax = v[ia], vay = v[ia + 1], vaz = v[ia + 2], wax = w[ia], way = w[ia + 1], waz = w[ia + 2];
      let vbx = v[ib], vby = v[ib + 1], vbz = v[ib + 2], wbx = w[ib], wby = w[ib + 1], wbz = w[ib + 2];
      const nx = n[o], ny = n[o + 1], nz = n[o + 2];
      const anx = rnA[o], any = rnA[o + 1], anz = rnA[o + 2], bnx = rnB[o], bny = rnB[o + 1], bnz = rnB[o + 2];
      // (K1) the separation at the pose now
      const s =
        this.baseSeparation[c] +
        nx * (dx[ib] - dx[ia]) + ny * (dx[ib + 1] - dx[ia + 1]) + nz * (dx[ib + 2] - dx[ia + 2]) +
        dth[ib] * bnx + dth[ib + 1] * bny + dth[ib + 2] * bnz - (dth[ia] * anx + dth[ia + 1] * any + dth[ia + 2] * anz);
      let bias = 0, ms = 1, is = 0;
      if (s > 0) bias = s * invH; // speculative: close the gap, no more
      else if (useBias) {
        bias = this.biasRate[c] * Math.min(0, s + slop);
        if (bias < -maxPushout) bias = -maxPushout;
        ms = this.massScale[c];
        is = this.impulseScale[c];
      }
      // normal: v_n = J_n V (S1)
      const vn = nx * (vbx - vax) + ny * (vby - vay) + nz * (vbz - vaz) + wbx * bnx + wby * bny + wbz * bnz - (wax * anx + way * any + waz * anz);
      const kN = this.normalA[c];
      const oldN = lamN[c];
      if (residual) {
        // ρ = J V + bias + h γ λ, γ = A_nn · impulseScale / massScale (rows/softness.ts S1)
        const r = vn + bias + (is > 0 ? (h * kN * is * oldN) / ms : 0);
        if (!(oldN <= 0 && r > 0)) residual.normal += r * r;
      } else {
        let next = oldN - (ms * (vn + bias) * invH) / kN - is * oldN;
        if (next < 0) next = 0;
        lamN[c] = next;
        const P = h * (next - oldN);
        if (P !== 0) {
          // V_A −= M_A⁻¹ J_nAᵀ P, V_B += M_B⁻¹ J_nBᵀ P
          if (mA > 0) {
            vax -= mA * P * nx; vay -= mA * P * ny; vaz -= mA * P * nz;
            const j = 3 * ia;
            wax -= P * (I[j] * anx + I[j + 1] * any + I[j + 2] * anz);
            way -= P * (I[j + 3] * anx + I[j + 4] * any + I[j + 5] * anz);
            waz -= P * (I[j + 6] * anx + I[j + 7] * any + I[j + 8] * anz);
          }
          if (mB > 0) {
            vbx += mB * P * nx; vby += mB * P * ny; vbz += mB * P * nz;
            const j = 3 * ib;
            wbx += P * (I[j] * bnx + I[j + 1] * bny + I[j + 2] * bnz);
            wby += P * (I[j + 3] * bnx + I[j + 4] * bny + I[j + 5] * bnz);
            wbz += P * (I[j + 6] * bnx + I[j + 7] * bny + I[j + 8] * bnz);
          }
        }
      }
      // friction: v_t = J_t V (K2)
      const dvx = vbx - vax, dvy = vby - vay, dvz = vbz - vaz;
      const v1 = t1[o] * dvx + t1[o + 1] * dvy + t1[o + 2] * dvz + wbx * r1B[o] + wby * r1B[o + 1] + wbz * r1B[o + 2] - (wax * r1A[o] + way * r1A[o + 1] + waz * r1A[o + 2]);
      const v2 = t2[o] * dvx + t2[o + 1] * dvy + t2[o + 2] * dvz + wbx * r2B[o] + wby * r2B[o + 1] + wbz * r2B[o + 2] - (wax * r2A[o] + way * r2A[o + 1] + waz * r2A[o + 2]);
      const o4 = 4 * c;
      const old1 = lamT1[c], old2 = lamT2[c];
      const lamNow = lamN[c];
      const radius = this.mu[c] * lamNow;
      let f1 = old1 - invH * (Ti[o4] * v1 + Ti[o4 + 1] * v2);
      let f2 = old2 - invH * (Ti[o4 + 2] * v1 + Ti[o4 + 3] * v2);
      const len2 = f1 * f1 + f2 * f2;
      const staticRadius = this.muStatic[c] * lamNow;
      const sliding = len2 > staticRadius * staticRadius;
      if (residual) {
        const atEdge = sliding && old1 * old1 + old2 * old2 >= radius * radius * (1 - 1e-12) && old1 * v1 + old2 * v2 < 0;
        if (!atEdge) residual.friction += v1 * v1 + v2 * v2;
        continue;
      }
      if (sliding && len2 > radius * radius) {
        // beyond the disc: its point nearest f in the metric of A_tt (maximal dissipation)
        const M = this.discMatrix;
        M[0] = Ti[o4]; M[1] = Ti[o4 + 1]; M[2] = Ti[o4 + 2]; M[3] = Ti[o4 + 3];
        frictionDisc(M, 0, f1, f2, radius, this.disc);
        f1 = this.disc[0];
        f2 = this.disc[1];
      }
      lamT1[c] = f1;
      lamT2[c] = f2;
      const P1 = h * (f1 - old1), P2 = h * (f2 - old2);
      if (P1 !== 0 || P2 !== 0) {
        const px = P1 * t1[o] + P2 * t2[o], py = P1 * t1[o + 1] + P2 * t2[o + 1], pz = P1 * t1[o + 2] + P2 * t2[o + 2];
        if (mA > 0) {
          vax -= mA * px; vay -= mA * py; vaz -= mA * pz;
          const tx = P1 * r1A[o] + P2 * r2A[o], ty = P1 * r1A[o + 1] + P2 * r2A[o + 1], tz = P1 * r1A[o + 2] + P2 * r2A[o + 2];
          const j = 3 * ia;
          wax -= I[j] * tx + I[j + 1] * ty + I[j + 2] * tz;
          way -= I[j + 3] * tx + I[j + 4] * ty + I[j + 5] * tz;
          waz -= I[j + 6] * tx + I[j + 7] * ty + I[j + 8] * tz;
        }
        if (mB > 0) {
          vbx += mB * px; vby += mB * py; vbz += mB * pz;
          const tx = P1 * r1B[o] + P2 * r2B[o], ty = P1 * r1B[o + 1] + P2 * r2B[o + 1], tz = P1 * r1B[o + 2] + P2 * r2B[o + 2];
          const j = 3 * ib;
          wbx += I[j] * tx + I[j + 1] * ty + I[j + 2] * tz;
          wby += I[j + 3] * tx + I[j + 4] * ty + I[j + 5] * tz;
          wbz += I[j + 6] * tx + I[j + 7] * ty + I[j + 8] * tz;
        }
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
  restitution(v: Float64Array, w: Float64Array, I: Float64Array, h: number, threshold: number, gravityStep: ArrayLike<number> | null): number {
    if (!this.anyElastic) return 0;
    const gx = gravityStep ? gravityStep[0] : 0, gy = gravityStep ? gravityStep[1] : 0, gz = gravityStep ? gravityStep[2] : 0;
    const pts = this.collisionPoint, target = this.collisionTarget, impulse = this.collisionImpulse;
    const n = this.normal;
    for (let sweep = 0; sweep < COLLISION_SWEEPS; sweep++) {
      let collided = false;
      for (let m0 = 0; m0 < this.count; ) {
        const a = this.bodyA[m0], b = this.bodyB[m0];
        let m1 = m0 + 1;
        while (m1 < this.count && this.bodyA[m1] === a && this.bodyB[m1] === b) m1++;
        let k = 0;
        for (let c = m0; c < m1 && k < MAX_COLLIDING; c++) {
          const e = this.elasticity[c];
          if (!(e > 0)) continue;
          const vn = this.normalVelocity(c, v, w);
          const o = 3 * c;
          const ng = n[o] * gx + n[o + 1] * gy + n[o + 2] * gz;
          const gn = (this.invMassB[c] > 0 ? ng : 0) - (this.invMassA[c] > 0 ? ng : 0);
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
              const next = Math.max(0, impulse[i] + (target[i] - vn) / this.normalA[c]);
              const d = next - impulse[i];
              if (d !== 0) this.applyNormal(c, d, v, w, I);
              impulse[i] = next;
              change = Math.max(change, Math.abs(d));
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
    const o = 3 * c, a = 3 * this.bodyA[c], b = 3 * this.bodyB[c];
    const n = this.normal, ra = this.rnA, rb = this.rnB;
    return (
      n[o] * (v[b] - v[a]) + n[o + 1] * (v[b + 1] - v[a + 1]) + n[o + 2] * (v[b + 2] - v[a + 2]) +
      w[b] * rb[o] + w[b + 1] * rb[o + 1] + w[b + 2] * rb[o + 2] - (w[a] * ra[o] + w[a + 1] * ra[o + 1] + w[a + 2] * ra[o + 2])
    );
  }

  /** The impulse P along point c's normal row: V_A −= M_A⁻¹ J_nAᵀ P, V_B += M_B⁻¹ J_nBᵀ P. */
  private applyNormal(c: number, P: number, v: Float64Array, w: Float64Array, I: Float64Array): void {
    const o = 3 * c, n = this.normal;
    const mA = this.invMassA[c], mB = this.invMassB[c];
    if (mA > 0) applyBody(v, w, I, this.bodyA[c], mA, -P * n[o], -P * n[o + 1], -P * n[o + 2], -P * this.rnA[o], -P * this.rnA[o + 1], -P * this.rnA[o + 2]);
    if (mB > 0) applyBody(v, w, I, this.bodyB[c], mB, P * n[o], P * n[o + 1], P * n[o + 2], P * this.rnB[o], P * this.rnB[o + 1], P * this.rnB[o + 2]);
  }

  /** store impulses: λ of every point back onto its manifold record (the next frame's warm start). */
  storeImpulses(store: ManifoldStore): void {
    for (let c = 0; c < this.count; c++) {
      const p = this.manifoldPoint[c];
      if (p < 0) continue;
      store.normalImpulse[p] = this.lambdaN[c];
      store.tangentImpulse1[p] = this.lambdaT1[c];
      store.tangentImpulse2[p] = this.lambdaT2[c];
    }
  }

  /** The points' normal λ (N), 0 .. count − 1. */
  get normalForces(): Float64Array {
    return this.lambdaN.subarray(0, this.count);
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
    for (const k of ['invMassA', 'invMassB', 'normalA', 'baseSeparation', 'biasRate', 'massScale', 'impulseScale', 'mu', 'muStatic', 'elasticity', 'lambdaN', 'lambdaT1', 'lambdaT2'] as const) this[k] = new Float64Array(cap);
    for (const k of ['normal', 'tangent1', 'tangent2', 'rnA', 'rnB', 'rt1A', 'rt1B', 'rt2A', 'rt2B'] as const) this[k] = new Float64Array(3 * cap);
    this.tangentInverse = new Float64Array(4 * cap);
    this.capacity = cap;
  }
}

/** The spring of a contact rule at unit effective mass (rows/softness.ts S3: massScale and biasRate do not depend on it). */
function springOf(spec: SoftnessSpec, h: number): Softness {
  if (spec.kind === 'compliance') throw new Error('contact softness is a frequency spring or a rigid Baumgarte rate, not a compliance');
  return softness(spec, h, 1);
}

/** xᵀ I y for body I⁻¹ at I[i..i+9) (row-major 3×3), x at X[o..o+3), y at Y[q..q+3). */
function quad(I: Float64Array, i: number, X: Float64Array, o: number, Y: Float64Array, q: number): number {
  const y0 = Y[q], y1 = Y[q + 1], y2 = Y[q + 2];
  return X[o] * (I[i] * y0 + I[i + 1] * y1 + I[i + 2] * y2) + X[o + 1] * (I[i + 3] * y0 + I[i + 4] * y1 + I[i + 5] * y2) + X[o + 2] * (I[i + 6] * y0 + I[i + 7] * y1 + I[i + 8] * y2);
}

/** v_i += m⁻¹ P, ω_i += I_i⁻¹ τ (P and τ = r × P signed for the body's side: −J_A, +J_B). */
function applyBody(v: Float64Array, w: Float64Array, I: Float64Array, body: number, invMass: number, px: number, py: number, pz: number, tx: number, ty: number, tz: number): void {
  const o = 3 * body, j = 9 * body;
  v[o] += invMass * px;
  v[o + 1] += invMass * py;
  v[o + 2] += invMass * pz;
  w[o] += I[j] * tx + I[j + 1] * ty + I[j + 2] * tz;
  w[o + 1] += I[j + 3] * tx + I[j + 4] * ty + I[j + 5] * tz;
  w[o + 2] += I[j + 6] * tx + I[j + 7] * ty + I[j + 8] * tz;
}
