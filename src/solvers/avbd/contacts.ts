/**
 * Contacts as an AVBD constraint set (forces.ts), over the shared persistent manifolds
 * (collision/manifolds.ts), as the paper does them (Giles et al. 2025 §4; its demos' manifold):
 * each contact point is one item of three rows, normal n and tangents t₁, t₂ = n × t₁ (rows/contact.ts
 * K1, K2), linearised about the frame's start (a truncated Taylor series, its second-order term
 * dropped: no geometric stiffness):
 *   C_n  = s₀ + J_n · Δ,        Δ = (x_A − x_A⁻, θ_A, x_B − x_B⁻, θ_B), θ the rotation vector of q q⁻⁻¹
 *   C_tk = d₀ · t_k + J_tk · Δ,  d₀ = p_B − p_A between the point's two anchors at the frame's start
 * with J the rows' (J_n = (−n, −(r_A × n), n, r_B × n), the same for t_k), r_A, r_B the arms at the
 * frame's start. Bounds in AVBD's sign (forces.ts): the normal force F_n ∈ (−∞, 0] (C_n ≥ 0); the
 * tangent pair held in the disc |F_t| ≤ μ |F_n| (a friction pair, disc = 1; F_n the normal row's force
 * as applied, k C* + λ clamped, where the demos take its λ alone: with a stiff k much of the load is
 * k C*, and μ |λ_n| let a sliding box run 23 % too far), μ the pair's static coefficient while the
 * point sticks and its dynamic one while it slides (Coulomb's two laws).
 *
 * Static friction (the demos' stick rule): a point whose friction stayed inside its disc and whose
 * anchors were within STICK_DISTANCE of each other at the frame's start "sticks": the next frame it
 * keeps its two anchors (body frames) instead of the ones the narrow phase found, so d₀ is the slip
 * since it stuck, and the tangent rows pull it back: a resting body does not creep.
 *
 * Persistence: λ_n, λ_t are written back to the point's manifold record (store; the rows' sign,
 * λ_n = −F_n ≥ 0) and the narrow phase carries them to next frame's point (its matching); the
 * penalties k and the stick anchors live here by record (slot · 4 + k), reset where the record
 * carried no force (a new point).
 */
import type { AvbdConstraintSet, AvbdRows } from './forces.js';
import type { ContactList } from '../../rows/contact.js';
import type { ManifoldStore } from '../../collision/manifolds.js';
import type { BodyPose } from '../../model/joint-data.js';
import { JACOBIAN_STRIDE } from '../../rows/rows.js';
import { rotateVector } from '../../rigid/quat.js';
import { rotationBetween } from './rotation.js';

/** m: anchors closer than this at the frame's start, with friction inside its disc, stick (the 3-D demo's 1e-5 m; the 2-D demo's 1 cm holds a rolling sphere's material point as stuck, measured: it ends rolling at 0.67 v₀, not 5/7) */
export const STICK_DISTANCE = 1e-5;

export class ContactForces implements AvbdConstraintSet {
  readonly name = 'contacts';
  itemCount = 0;
  itemA = new Int32Array(0);
  itemB = new Int32Array(0);
  itemFirst = new Int32Array(0);
  itemRows = new Int32Array(0);
  /** per item: its manifold record (−1: none), s₀, d₀·t₁, d₀·t₂, μ_d, μ_s */
  private record = new Int32Array(0);
  private base = new Float64Array(0);
  private mu = new Float64Array(0);
  private muStatic = new Float64Array(0);
  /** the frame's start pose (the solver's x⁻, q⁻) the linearisation is about */
  private x0: Float64Array = new Float64Array(0);
  private q0: Float64Array = new Float64Array(0);
  /** by manifold record: penalties (3), stick flag, stick anchors (3 + 3, body frames) */
  private kept = new Float64Array(0);
  private stick = new Uint8Array(0);
  private anchors = new Float64Array(0);
  private readonly tmp = new Float64Array(6);
  /**
   * per body: its motion since the frame's start, (x − x⁻, rotation vector of q q⁻⁻¹), kept by
   * bodyMoved as the solver moves it: every item of a body reads it, so the rotation's log is taken
   * once per body step, not once per contact and side at every evaluation (pyramid base 10: 400 points,
   * 12,000 evaluations a frame)
   */
  private delta = new Float64Array(0);

  /**
   * The frame's contact rows from `list` (found at the pose x⁻, q⁻ now) into `rows` from `offset`:
   * bounds, β, λ from the records, k from here (then the solver's warm start scales them); returns
   * the row count.
   */
  prepare(list: ContactList, store: ManifoldStore, rows: AvbdRows, offset: number, x0: Float64Array, q0: Float64Array, beta: number): number {
    const n = list.count;
    this.x0 = x0;
    this.q0 = q0;
    if (this.itemA.length < n) {
      const cap = Math.max(n, 2 * this.itemA.length, 16);
      this.itemA = new Int32Array(cap);
      this.itemB = new Int32Array(cap);
      this.itemFirst = new Int32Array(cap);
      this.itemRows = new Int32Array(cap);
      this.record = new Int32Array(cap);
      this.base = new Float64Array(3 * cap);
      this.mu = new Float64Array(cap);
      this.muStatic = new Float64Array(cap);
    }
    const records = 4 * store.capacity;
    if (this.stick.length < records) {
      const k = new Float64Array(3 * records), s = new Uint8Array(records), a = new Float64Array(6 * records);
      k.set(this.kept);
      s.set(this.stick);
      a.set(this.anchors);
      this.kept = k;
      this.stick = s;
      this.anchors = a;
    }
    rows.reserve(offset + 3 * n);
    // the bodies are at x⁻, q⁻ now: no motion yet
    const bodies = x0.length / 3;
    if (this.delta.length < 6 * bodies) this.delta = new Float64Array(6 * bodies);
    else this.delta.fill(0, 0, 6 * bodies);
    const tmp = this.tmp;
    for (let c = 0; c < n; c++) {
      const a = list.bodyA[c], b = list.bodyB[c], p = list.manifoldPoint[c];
      this.itemA[c] = a;
      this.itemB[c] = b;
      this.itemFirst[c] = offset + 3 * c;
      this.itemRows[c] = 3;
      this.record[c] = p;
      this.mu[c] = list.friction[c];
      this.muStatic[c] = list.staticFriction[c];
      const fresh = p < 0 || store.normalImpulse[p] === 0;
      // d₀: the kept anchors of a sticking point, else the narrow phase's (d₀ = s₀ n: no tangential part)
      let d0t1 = 0, d0t2 = 0;
      if (p >= 0) {
        if (!fresh && this.stick[p] === 1) {
          rotateVector(q0, 4 * a, this.anchors[6 * p], this.anchors[6 * p + 1], this.anchors[6 * p + 2], tmp, 0);
          rotateVector(q0, 4 * b, this.anchors[6 * p + 3], this.anchors[6 * p + 4], this.anchors[6 * p + 5], tmp, 3);
          const dx = x0[3 * b] + tmp[3] - x0[3 * a] - tmp[0];
          const dy = x0[3 * b + 1] + tmp[4] - x0[3 * a + 1] - tmp[1];
          const dz = x0[3 * b + 2] + tmp[5] - x0[3 * a + 2] - tmp[2];
          const t1 = 3 * c;
          d0t1 = dx * list.tangent1[t1] + dy * list.tangent1[t1 + 1] + dz * list.tangent1[t1 + 2];
          d0t2 = dx * list.tangent2[t1] + dy * list.tangent2[t1 + 1] + dz * list.tangent2[t1 + 2];
        } else {
          for (let e = 0; e < 3; e++) {
            this.anchors[6 * p + e] = list.anchorA[3 * c + e];
            this.anchors[6 * p + 3 + e] = list.anchorB[3 * c + e];
          }
        }
      }
      this.base[3 * c] = list.separation[c];
      this.base[3 * c + 1] = d0t1;
      this.base[3 * c + 2] = d0t2;
      // J of the three rows, fixed for the frame (K1, K2): (−u, −(r_A × u), u, r_B × u)
      const r = offset + 3 * c;
      for (let k = 0; k < 3; k++) {
        const u = k === 0 ? list.normal : k === 1 ? list.tangent1 : list.tangent2;
        const ux = u[3 * c], uy = u[3 * c + 1], uz = u[3 * c + 2];
        const ax = list.armA[3 * c], ay = list.armA[3 * c + 1], az = list.armA[3 * c + 2];
        const bx = list.armB[3 * c], by = list.armB[3 * c + 1], bz = list.armB[3 * c + 2];
        const o = JACOBIAN_STRIDE * (r + k), J = rows.J;
        J[o] = -ux; J[o + 1] = -uy; J[o + 2] = -uz;
        J[o + 3] = -(ay * uz - az * uy); J[o + 4] = -(az * ux - ax * uz); J[o + 5] = -(ax * uy - ay * ux);
        J[o + 6] = ux; J[o + 7] = uy; J[o + 8] = uz;
        J[o + 9] = by * uz - bz * uy; J[o + 10] = bz * ux - bx * uz; J[o + 11] = bx * uy - by * ux;
        rows.curvature[2 * (r + k)] = 0;
        rows.curvature[2 * (r + k) + 1] = 0;
        rows.stiffness[r + k] = Infinity;
        rows.beta[r + k] = beta;
        rows.penalty[r + k] = fresh ? 0 : k === 0 ? this.kept[3 * p] : Math.max(this.kept[3 * p + 1], this.kept[3 * p + 2]);
      }
      rows.fmin[r] = -Infinity;
      rows.fmax[r] = 0;
      rows.disc[r] = 0;
      // t₁, t₂ a friction pair in the disc μ |F_n|: μ_s while the point sticks, else μ_d; disc 2 marks a
      // pair that slides (it did not stick at the frame's start: its Hessian is the secant, cpu.ts)
      const sliding = p >= 0 && !fresh && this.stick[p] === 0;
      rows.disc[r + 1] = sliding ? 2 : 1;
      rows.mu[r + 1] = p >= 0 && !fresh && this.stick[p] === 1 ? list.staticFriction[c] : list.friction[c];
      rows.normalRow[r + 1] = r;
      rows.force[r] = 0;
      rows.disc[r + 2] = 0;
      rows.fmin[r + 1] = rows.fmin[r + 2] = -Infinity;
      rows.fmax[r + 1] = rows.fmax[r + 2] = Infinity;
      rows.lambda[r] = p >= 0 ? -store.normalImpulse[p] : 0;
      rows.lambda[r + 1] = p >= 0 ? -store.tangentImpulse1[p] : 0;
      rows.lambda[r + 2] = p >= 0 ? -store.tangentImpulse2[p] : 0;
    }
    this.itemCount = n;
    return 3 * n;
  }

  /** Body i moved to its pose in `pose`: its motion since the frame's start, for evaluate. */
  bodyMoved(i: number, pose: BodyPose): void {
    const x = pose.position, x0 = this.x0, d = this.delta, o = 6 * i;
    d[o] = x[3 * i] - x0[3 * i];
    d[o + 1] = x[3 * i + 1] - x0[3 * i + 1];
    d[o + 2] = x[3 * i + 2] - x0[3 * i + 2];
    rotationBetween(pose.orientation, 4 * i, this.q0, 4 * i, d, o + 3, 1);
  }

  /**
   * C of item k's rows (J is the frame's, written by prepare) at the bodies' motion as bodyMoved last
   * recorded it, which the solver keeps equal to `pose` (it calls bodyMoved after each move).
   */
  evaluate(k: number, _pose: BodyPose, rows: AvbdRows): void {
    const a = this.itemA[k], b = this.itemB[k], r = this.itemFirst[k];
    const J = rows.J, d = this.delta;
    const oa = 6 * a, ob = 6 * b;
    const jn = JACOBIAN_STRIDE * r, j1 = jn + JACOBIAN_STRIDE, j2 = j1 + JACOBIAN_STRIDE;
    rows.C[r] = this.base[3 * k] + (dot6(J, jn, d, oa) + dot6(J, jn + 6, d, ob));
    rows.C[r + 1] = this.base[3 * k + 1] + (dot6(J, j1, d, oa) + dot6(J, j1 + 6, d, ob));
    rows.C[r + 2] = this.base[3 * k + 2] + (dot6(J, j2, d, oa) + dot6(J, j2 + 6, d, ob));
  }

  /**
   * After the frame: λ back onto the records (the rows' sign), the penalties kept, and each point's
   * stick flag for the next frame (friction inside its disc, anchors within STICK_DISTANCE).
   */
  store(store: ManifoldStore, rows: AvbdRows): void {
    for (let k = 0; k < this.itemCount; k++) {
      const p = this.record[k], r = this.itemFirst[k];
      if (p < 0) continue;
      store.normalImpulse[p] = -rows.lambda[r];
      store.tangentImpulse1[p] = -rows.lambda[r + 1];
      store.tangentImpulse2[p] = -rows.lambda[r + 2];
      for (let e = 0; e < 3; e++) this.kept[3 * p + e] = rows.penalty[r + e];
      const lt = Math.hypot(rows.lambda[r + 1], rows.lambda[r + 2]);
      const slip = Math.hypot(this.base[3 * k + 1], this.base[3 * k + 2]);
      const inside = lt < this.muStatic[k] * Math.abs(rows.lambda[r]);
      // a point that starts sticking keeps the anchors prepare wrote this frame
      this.stick[p] = rows.lambda[r] < 0 && inside && slip < STICK_DISTANCE ? 1 : 0;
    }
  }
}

/** J[j .. j + 6) · d[o .. o + 6), summed in index order */
function dot6(J: Float64Array, j: number, d: Float64Array, o: number): number {
  return J[j] * d[o] + J[j + 1] * d[o + 1] + J[j + 2] * d[o + 2] + J[j + 3] * d[o + 3] + J[j + 4] * d[o + 4] + J[j + 5] * d[o + 5];
}
