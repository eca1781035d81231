/**
 * The rigid-body core (f64): the body stages every rigid solver shares. The WGSL twin, with
 * the same stage names, is body.wgsl.ts (f32); quaternion helpers are in quat.ts.
 *
 *   1. compute_inertia        I⁻¹_world = R I⁻¹_local Rᵀ                              (per body)
 *   2. compute_free_velocity  V* = d V + h M⁻¹ F (gravity, damping d) and the gyroscopic
 *                             term of Euler's equations, by the implicit midpoint rule
 *   5. compute_positions      V = V* + ΔV; x += h v; q ← Cay(h ω_orient) q, ω transported
 * (3–4 are the solver's constraint stages.) xpbd's integrate / update_velocities take their
 * pieces from here: gyroscopicStep, integrateBodyOrientation, angularVelocityFromRotation.
 *
 * State: x, q (world), v, ω (world frame) per body, as CompiledWorld holds them. Per solver,
 * RigidBodyCore adds `isotropicScale` (s where I⁻¹_local = s I₃, else NaN; fixed once, the
 * local inertia never changes) and `midpointOffset` (3 per body, see below).
 *
 * The gyroscopic term. In the body frame Euler's equations of a torque-free body are
 *   I ω̇ = −ω × I ω                                                                   (E1)
 * and they keep two quadratic invariants: |L|² = |Iω|² and 2T = ω · Iω. Explicit Euler
 * ωₙ₊₁ = ωₙ − h I⁻¹(ωₙ × Iωₙ) and implicit Euler (ωₙ₊₁ in the bracket) keep neither: on a
 * body of principal moments 1 : 2 : 3 spun at 3 rad/s about its intermediate axis (perturbed
 * by 0.02 rad/s) they drift 6.3 % and 5.9 % in energy, 3.3 % and 3.4 % in L, over 10 s at
 * h = 1/60 (measured when choosing the scheme; test/rigid.test.ts runs a like box). The
 * implicit midpoint rule keeps every quadratic invariant of an ODE exactly (Cooper 1987):
 *   ω_m = (ωₙ + ωₙ₊₁)/2,   ωₙ₊₁ = ωₙ − h I⁻¹ (ω_m × I ω_m)                             (E2)
 * (dot (E2) with I ω_m: |L|² is kept; dot with ω_m: T is kept). (E2) is 3 nonlinear
 * equations in ωₙ₊₁, solved by Newton's method from ωₙ:
 *   F(ω') = I (ω' − ωₙ) + h ω_m × I ω_m = 0,
 *   ∂F/∂ω' = I + ½h ([ω_m]× I − [I ω_m]×)                                              (E3)
 * converging quadratically (error ∝ (h|ω|)^(2^k)); we stop when the update is below f64
 * rounding (≤ 8 iterations, 3 in practice at h|ω| ≈ 0.05).
 *
 * Why the orientation then turns by ω_m, not ωₙ₊₁. (E2) for L = Iω reads
 * (1 + ½h[ω_m]×) Lₙ₊₁ = (1 − ½h[ω_m]×) Lₙ, i.e. Lₙ₊₁ = Cay(h ω_m)ᵀ Lₙ in the body frame
 * (quat.ts: Cay is the rotation integrateOrientation makes). The world momentum R L is then
 * exactly constant if and only if the body turns by Rₙ₊₁ = Rₙ Cay(h ω_m), i.e.
 * q ← Cay(h Rₙω_m) q with integrateOrientation. Turning by ωₙ₊₁ instead (the semi-implicit
 * Euler of the position stage) keeps |L| and T but rotates L in the world: 1.4 % over 10 s
 * on the box above; the exponential map q ← exp(½hω_m) ⊗ q instead of Cay: 2e-4 (measured).
 * So compute_positions turns a free body (one no constraint touches) by
 *   ω_orient = ωₙ₊₁ + (ω_m − ω*) = ω_m                                                 (E4)
 * (ω* the free velocity, ωₙ₊₁ = ω* for a free body). midpointOffset holds ω_m − ω* =
 * (ωₙ − ω*)/2 (world, from compute_free_velocity to compute_positions). The world ωₙ₊₁ was
 * computed with Rₙ; since the body turned by Cay(h ω_m) rather than about ωₙ₊₁ itself, ωₙ₊₁
 * is carried along with the body (ω ← Cay(h ω_orient) ω) so that its body-frame value is the
 * one (E2) computed. With both, a free body keeps L (vector) and T to rounding
 * (test/rigid.test.ts: 1e-14 over 10 s).
 *
 * A jointed body turns by ωₙ₊₁, offset 0 (the gyroscopic solve (E2) is the same). Its ωₙ₊₁ is
 * the velocity the constraint solve made consistent with the joints (J ωₙ₊₁ = −β C/h), and
 * the position update must follow it: turning it by ω_m instead moves its anchors by
 * h (ω_m − ω*) × r, a violation Baumgarte then has to take out. Measured on a gyroscope (a
 * 1 kg box 0.1 × 0.4 × 0.4 m spun at 100 rad/s about its short axis, pinned 0.3 m from its
 * centre on that axis, released horizontal): the depth of its first nutation dip at dt = 1/60
 * with 4 / 16 / 64 substeps is 0.244 / 0.098 / 0.037 m with the midpoint turn against
 * 0.168 / 0.057 / 0.030 m with ωₙ₊₁ (fast-top theory: 0.026 m), the precession rate within 1 %
 * of m g d / (I ω) either way from 16 substeps. RigidBodyCore.free says which bodies are free;
 * a solver whose constraint set changes calls markJointed again.
 *
 * Isotropic bodies (spheres, and fixed bodies with s = 0) take none of this: Iω ∥ ω, so
 * ω × Iω = 0, (E2) gives ωₙ₊₁ = ωₙ exactly, midpointOffset stays 0 and ω_orient = ωₙ₊₁: the
 * arithmetic (and the state hashes) of the sphere scenes are those of before the core.
 *
 * Damping: d = max(0, 1 − μ h) (Müller et al. 2020, sec. 3.5) on v and ω before gravity
 * and the gyroscopic solve (a body-frame scale commutes with (E2) only for d = 1; damping is
 * dissipative by design, so nothing is claimed of it).
 */
import { integrateOrientation, quatRelative } from './quat.js';

/** The per-body arrays the core reads and writes (CompiledWorld has them). */
export interface RigidBodyArrays {
  bodyCount: number;
  position: Float64Array; // 3 per body
  orientation: Float64Array; // 4 per body, [x y z w]
  linearVelocity: Float64Array; // 3 per body
  angularVelocity: Float64Array; // 3 per body, world frame
  inverseMass: Float64Array; // 1 per body (0: fixed)
  inertiaLocal: Float64Array; // 9 per body, row-major
  inverseInertiaLocal: Float64Array; // 9 per body, row-major
}

/** Velocity damping over a step h: v ← v · max(0, 1 − μ h) (μ in 1/s; Müller et al. 2020, sec. 3.5). */
export function dampingFactor(mu: number, h: number): number {
  return Math.max(0, 1 - mu * h);
}

/** s where the row-major L[o..o+9) is s I₃ exactly, else NaN. */
function isotropicScaleOf(L: Float64Array, o: number): number {
  const off = L[o + 1] === 0 && L[o + 2] === 0 && L[o + 3] === 0 && L[o + 5] === 0 && L[o + 6] === 0 && L[o + 7] === 0;
  return off && L[o + 4] === L[o] && L[o + 8] === L[o] ? L[o] : NaN;
}

/**
 * Whether any body that moves (inverse mass > 0) has an inertia that is not isotropic: only then do
 * the GPU body kernels need the gyroscopic step and the midpoint turn. A kernel built without them
 * does the isotropic arithmetic alone, the same for every body as the branch it replaces (a software
 * adapter runs both sides of a branch its lanes do not all take, so the unused branch costs there).
 */
export function anyAnisotropic(inverseMass: Float64Array, inverseInertiaLocal: Float64Array, bodyCount: number): boolean {
  for (let ib = 0; ib < bodyCount; ib++) if (inverseMass[ib] > 0 && isotropicScaleOf(inverseInertiaLocal, 9 * ib) !== isotropicScaleOf(inverseInertiaLocal, 9 * ib)) return true;
  return false;
}

/**
 * Per body 1 where no constraint of 0 .. count−1 touches it (bodies ib0[c], ib1[c]), else 0: the
 * bodies that turn by the midpoint ω (E4). The GPU solvers upload it (midpoint_offset.w).
 */
export function freeBodyFlags(bodyCount: number, ib0: Int32Array, ib1: Int32Array, count: number): Uint8Array {
  const free = new Uint8Array(bodyCount).fill(1);
  for (let c = 0; c < count; c++) {
    free[ib0[c]] = 0;
    free[ib1[c]] = 0;
  }
  return free;
}

/** out[o..o+9) = R(q) L Rᵀ, q = q[qo..qo+4), L = L[lo..lo+9) row-major: the general world inverse inertia (T = R L, then T Rᵀ). */
function worldInverseInertia(q: Float64Array, qo: number, L: Float64Array, lo: number, out: Float64Array, o: number): void {
  const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
  const r00 = 1 - 2 * (y * y + z * z), r01 = 2 * (x * y - z * w), r02 = 2 * (x * z + y * w);
  const r10 = 2 * (x * y + z * w), r11 = 1 - 2 * (x * x + z * z), r12 = 2 * (y * z - x * w);
  const r20 = 2 * (x * z - y * w), r21 = 2 * (y * z + x * w), r22 = 1 - 2 * (x * x + y * y);
  const l00 = L[lo], l01 = L[lo + 1], l02 = L[lo + 2];
  const l10 = L[lo + 3], l11 = L[lo + 4], l12 = L[lo + 5];
  const l20 = L[lo + 6], l21 = L[lo + 7], l22 = L[lo + 8];
  const t00 = r00 * l00 + r01 * l10 + r02 * l20, t01 = r00 * l01 + r01 * l11 + r02 * l21, t02 = r00 * l02 + r01 * l12 + r02 * l22;
  const t10 = r10 * l00 + r11 * l10 + r12 * l20, t11 = r10 * l01 + r11 * l11 + r12 * l21, t12 = r10 * l02 + r11 * l12 + r12 * l22;
  const t20 = r20 * l00 + r21 * l10 + r22 * l20, t21 = r20 * l01 + r21 * l11 + r22 * l21, t22 = r20 * l02 + r21 * l12 + r22 * l22;
  out[o] = t00 * r00 + t01 * r01 + t02 * r02;
  out[o + 1] = t00 * r10 + t01 * r11 + t02 * r12;
  out[o + 2] = t00 * r20 + t01 * r21 + t02 * r22;
  out[o + 3] = t10 * r00 + t11 * r01 + t12 * r02;
  out[o + 4] = t10 * r10 + t11 * r11 + t12 * r12;
  out[o + 5] = t10 * r20 + t11 * r21 + t12 * r22;
  out[o + 6] = t20 * r00 + t21 * r01 + t22 * r02;
  out[o + 7] = t20 * r10 + t21 * r11 + t22 * r12;
  out[o + 8] = t20 * r20 + t21 * r21 + t22 * r22;
}

/** The core's per-solver state over one body set, and stages 1, 2 and 5. */
export class RigidBodyCore {
  /** s where I⁻¹_local = s I₃ (every sphere; fixed bodies: 0), else NaN */
  readonly isotropicScale: Float64Array;
  /** ω_m − ω* (3 per body, world, rad/s) of a free body: written by the gyroscopic step, read by the orientation update (E4); 0 otherwise */
  readonly midpointOffset: Float64Array;
  /** angularVelocityFromRotation's Δq */
  private readonly relativeScratch = new Float64Array(4);
  /** 1 where no constraint touches the body (it turns by ω_m, E4), 0 where one does */
  readonly free: Uint8Array;
  /**
   * Per body 1 while it sleeps (collision/islands.ts: its velocity is 0 and stages 2 and 5 skip it, as
   * they skip a fixed body), or null: nothing sleeps (the solvers that never sleep leave it null).
   */
  asleep: Uint8Array | null = null;

  constructor(readonly b: RigidBodyArrays, constraints?: { ib0: Int32Array; ib1: Int32Array; constraintCount: number }) {
    const n = b.bodyCount;
    this.isotropicScale = new Float64Array(n);
    for (let ib = 0; ib < n; ib++) this.isotropicScale[ib] = isotropicScaleOf(b.inverseInertiaLocal, 9 * ib);
    this.midpointOffset = new Float64Array(3 * n);
    this.free = new Uint8Array(n);
    this.markJointed(constraints?.ib0 ?? new Int32Array(0), constraints?.ib1 ?? new Int32Array(0), constraints?.constraintCount ?? 0);
  }

  /** free = freeBodyFlags(...) for a new constraint set; offsets restart at 0. */
  markJointed(ib0: Int32Array, ib1: Int32Array, count: number): void {
    this.free.set(freeBodyFlags(this.b.bodyCount, ib0, ib1, count));
    this.midpointOffset.fill(0);
  }

  /**
   * 1. I⁻¹_world = R I⁻¹_local Rᵀ (the inverse of R I Rᵀ) into out (9 per body, row-major), as
   *    T = R I⁻¹_local, then T Rᵀ. Isotropic I⁻¹_local = s I₃ has T = s R exactly (the
   *    products with the zero entries add nothing), so only T Rᵀ is left to compute (this is
   *    jacobi's arithmetic of before the core, kept to the bit; worldInverseInertiaOf's s I₃
   *    is xpbd's); the general path is the full product.
   */
  computeInertia(out: Float64Array): void {
    const { orientation: q, inverseInertiaLocal: L, bodyCount } = this.b;
    const iso = this.isotropicScale;
    for (let ib = 0; ib < bodyCount; ib++) {
      const s = iso[ib];
      if (s !== s) {
        worldInverseInertia(q, 4 * ib, L, 9 * ib, out, 9 * ib);
        continue;
      }
      // R = R(q), row-major; T = R · s I₃ = s R, then out = T Rᵀ
      const qo = 4 * ib;
      const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
      const r00 = 1 - 2 * (y * y + z * z), r01 = 2 * (x * y - z * w), r02 = 2 * (x * z + y * w);
      const r10 = 2 * (x * y + z * w), r11 = 1 - 2 * (x * x + z * z), r12 = 2 * (y * z - x * w);
      const r20 = 2 * (x * z - y * w), r21 = 2 * (y * z + x * w), r22 = 1 - 2 * (x * x + y * y);
      const o = 9 * ib;
      const t00 = r00 * s, t01 = r01 * s, t02 = r02 * s;
      const t10 = r10 * s, t11 = r11 * s, t12 = r12 * s;
      const t20 = r20 * s, t21 = r21 * s, t22 = r22 * s;
      out[o] = t00 * r00 + t01 * r01 + t02 * r02;
      out[o + 1] = t00 * r10 + t01 * r11 + t02 * r12;
      out[o + 2] = t00 * r20 + t01 * r21 + t02 * r22;
      out[o + 3] = t10 * r00 + t11 * r01 + t12 * r02;
      out[o + 4] = t10 * r10 + t11 * r11 + t12 * r12;
      out[o + 5] = t10 * r20 + t11 * r21 + t12 * r22;
      out[o + 6] = t20 * r00 + t21 * r01 + t22 * r02;
      out[o + 7] = t20 * r10 + t21 * r11 + t22 * r12;
      out[o + 8] = t20 * r20 + t21 * r21 + t22 * r22;
    }
  }

  /**
   * I⁻¹_world of one body ib at its current orientation into out[o..o+9): s I₃ exactly when
   * isotropic (R s I₃ Rᵀ = s I₃), else the product of computeInertia. For solvers that need
   * it mid-step (xpbd: the orientation changes during the projection).
   */
  worldInverseInertiaOf(ib: number, out: Float64Array, o: number): void {
    const s = this.isotropicScale[ib];
    if (s === s) {
      out[o] = s; out[o + 1] = 0; out[o + 2] = 0;
      out[o + 3] = 0; out[o + 4] = s; out[o + 5] = 0;
      out[o + 6] = 0; out[o + 7] = 0; out[o + 8] = s;
      return;
    }
    worldInverseInertia(this.b.orientation, 4 * ib, this.b.inverseInertiaLocal, 9 * ib, out, o);
  }

  /**
   * 2. V* = d V + h M⁻¹ F (gravity g on every body that can move and is awake), d = dampingFactor (1: V
   *    unchanged), then the gyroscopic step (E2) of every body that is not isotropic.
   */
  computeFreeVelocity(h: number, gravity: Float64Array, linearDamping: number, angularDamping: number): void {
    const { linearVelocity: v, angularVelocity: w, inverseMass, bodyCount } = this.b;
    const iso = this.isotropicScale;
    const gx = h * gravity[0], gy = h * gravity[1], gz = h * gravity[2];
    const dl = dampingFactor(linearDamping, h), da = dampingFactor(angularDamping, h);
    const asleep = this.asleep;
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] > 0 && !(asleep !== null && asleep[ib])) {
        const o = 3 * ib;
        if (dl !== 1) (v[o] *= dl, v[o + 1] *= dl, v[o + 2] *= dl);
        if (da !== 1) (w[o] *= da, w[o + 1] *= da, w[o + 2] *= da);
        v[o] += gx;
        v[o + 1] += gy;
        v[o + 2] += gz;
        if (iso[ib] !== iso[ib]) this.gyroscopicStep(ib, h);
      }
    }
  }

  /**
   * (E2) for body ib (not isotropic): ω ← ω* solving the implicit midpoint rule of (E1) in the
   * body frame of the current q, by Newton's method (E3); for a free body also
   * midpointOffset ← ω_m − ω* = (ωₙ − ω*)/2 (E4).
   */
  gyroscopicStep(ib: number, h: number): void {
    const { orientation: q, angularVelocity: w, inertiaLocal: I } = this.b;
    const o = 3 * ib, qo = 4 * ib, io = 9 * ib;
    // body frame: ω_b = Rᵀ ω
    const qx = q[qo], qy = q[qo + 1], qz = q[qo + 2], qw = q[qo + 3];
    const r00 = 1 - 2 * (qy * qy + qz * qz), r01 = 2 * (qx * qy - qz * qw), r02 = 2 * (qx * qz + qy * qw);
    const r10 = 2 * (qx * qy + qz * qw), r11 = 1 - 2 * (qx * qx + qz * qz), r12 = 2 * (qy * qz - qx * qw);
    const r20 = 2 * (qx * qz - qy * qw), r21 = 2 * (qy * qz + qx * qw), r22 = 1 - 2 * (qx * qx + qy * qy);
    const wx = w[o], wy = w[o + 1], wz = w[o + 2];
    const ax = r00 * wx + r10 * wy + r20 * wz; // ωₙ (body)
    const ay = r01 * wx + r11 * wy + r21 * wz;
    const az = r02 * wx + r12 * wy + r22 * wz;
    const i00 = I[io], i01 = I[io + 1], i02 = I[io + 2];
    const i10 = I[io + 3], i11 = I[io + 4], i12 = I[io + 5];
    const i20 = I[io + 6], i21 = I[io + 7], i22 = I[io + 8];
    const hh = 0.5 * h;
    let bx = ax, by = ay, bz = az; // ω' (body), from ωₙ
    const tol2 = (1e-15 * 1e-15) * (ax * ax + ay * ay + az * az);
    for (let k = 0; k < 8; k++) {
      const mx = 0.5 * (ax + bx), my = 0.5 * (ay + by), mz = 0.5 * (az + bz); // ω_m
      const lx = i00 * mx + i01 * my + i02 * mz; // I ω_m
      const ly = i10 * mx + i11 * my + i12 * mz;
      const lz = i20 * mx + i21 * my + i22 * mz;
      // F = I (ω' − ωₙ) + h ω_m × I ω_m
      const dx = bx - ax, dy = by - ay, dz = bz - az;
      const fx = i00 * dx + i01 * dy + i02 * dz + h * (my * lz - mz * ly);
      const fy = i10 * dx + i11 * dy + i12 * dz + h * (mz * lx - mx * lz);
      const fz = i20 * dx + i21 * dy + i22 * dz + h * (mx * ly - my * lx);
      // J = I + ½h ([ω_m]× I − [I ω_m]×); [u]× rows: (0, −u_z, u_y), (u_z, 0, −u_x), (−u_y, u_x, 0)
      const j00 = i00 + hh * (-mz * i10 + my * i20), j01 = i01 + hh * (-mz * i11 + my * i21 + lz), j02 = i02 + hh * (-mz * i12 + my * i22 - ly);
      const j10 = i10 + hh * (mz * i00 - mx * i20 - lz), j11 = i11 + hh * (mz * i01 - mx * i21), j12 = i12 + hh * (mz * i02 - mx * i22 + lx);
      const j20 = i20 + hh * (-my * i00 + mx * i10 + ly), j21 = i21 + hh * (-my * i01 + mx * i11 - lx), j22 = i22 + hh * (-my * i02 + mx * i12);
      // δ = J⁻¹ F by the adjugate
      const c00 = j11 * j22 - j12 * j21, c01 = j02 * j21 - j01 * j22, c02 = j01 * j12 - j02 * j11;
      const c10 = j12 * j20 - j10 * j22, c11 = j00 * j22 - j02 * j20, c12 = j02 * j10 - j00 * j12;
      const c20 = j10 * j21 - j11 * j20, c21 = j01 * j20 - j00 * j21, c22 = j00 * j11 - j01 * j10;
      const inv = 1 / (j00 * c00 + j01 * c10 + j02 * c20);
      const ex = (c00 * fx + c01 * fy + c02 * fz) * inv;
      const ey = (c10 * fx + c11 * fy + c12 * fz) * inv;
      const ez = (c20 * fx + c21 * fy + c22 * fz) * inv;
      bx -= ex; by -= ey; bz -= ez;
      if (ex * ex + ey * ey + ez * ez <= tol2) break;
    }
    // back to the world frame with the same R: ω* = R ω'
    const sx = r00 * bx + r01 * by + r02 * bz;
    const sy = r10 * bx + r11 * by + r12 * bz;
    const sz = r20 * bx + r21 * by + r22 * bz;
    if (this.free[ib]) {
      const m = this.midpointOffset;
      m[o] = 0.5 * (wx - sx);
      m[o + 1] = 0.5 * (wy - sy);
      m[o + 2] = 0.5 * (wz - sz);
    }
    w[o] = sx;
    w[o + 1] = sy;
    w[o + 2] = sz;
  }

  /**
   * 5. V = V* + ΔV (dv, dw: the constraints' ΔV); x += h v; then integrateBodyOrientation.
   *    Fixed bodies never move, nor do sleeping ones (asleep).
   */
  computePositions(h: number, dv: Float64Array, dw: Float64Array): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, bodyCount } = this.b;
    const iso = this.isotropicScale, free = this.free, asleep = this.asleep;
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] === 0) continue; // fixed: never moves
      if (asleep !== null && asleep[ib]) continue; // asleep: v = 0, does not move until woken
      const o = 3 * ib;
      const vx = (v[o] += dv[o]), vy = (v[o + 1] += dv[o + 1]), vz = (v[o + 2] += dv[o + 2]);
      const wx = (w[o] += dw[o]), wy = (w[o + 1] += dw[o + 1]), wz = (w[o + 2] += dw[o + 2]);
      x[o] += h * vx;
      x[o + 1] += h * vy;
      x[o + 2] += h * vz;
      // integrateBodyOrientation, its common case (spheres, jointed bodies) written in the loop
      if (iso[ib] === iso[ib] || free[ib] === 0) integrateOrientation(q, 4 * ib, wx, wy, wz, h);
      else this.integrateBodyOrientation(ib, h);
    }
  }

  /**
   * 5 with a split impulse (rows/block-solver.ts solvePositions): V = V* + ΔV as computePositions, but the
   * pose moves by V + P, P the position pass's pseudo-velocities (pLin, pAng), which V does not keep:
   *   x += h (v + p),  q ← Cay(h (ω + p_ω)) q
   * P is 0 on a body no rigid joint touches, so a free body turns as integrateBodyOrientation says.
   */
  computePositionsSplit(h: number, dv: Float64Array, dw: Float64Array, pLin: Float64Array, pAng: Float64Array): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, bodyCount } = this.b;
    const iso = this.isotropicScale, free = this.free, asleep = this.asleep;
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] === 0) continue;
      if (asleep !== null && asleep[ib]) continue;
      const o = 3 * ib;
      const vx = (v[o] += dv[o]), vy = (v[o + 1] += dv[o + 1]), vz = (v[o + 2] += dv[o + 2]);
      const wx = (w[o] += dw[o]), wy = (w[o + 1] += dw[o + 1]), wz = (w[o + 2] += dw[o + 2]);
      x[o] += h * (vx + pLin[o]);
      x[o + 1] += h * (vy + pLin[o + 1]);
      x[o + 2] += h * (vz + pLin[o + 2]);
      if (iso[ib] === iso[ib] || free[ib] === 0) integrateOrientation(q, 4 * ib, wx + pAng[o], wy + pAng[o + 1], wz + pAng[o + 2], h);
      else this.integrateBodyOrientation(ib, h);
    }
  }

  /**
   * q ← Cay(h ω_orient) q with ω_orient = ω + midpointOffset (E4) and ω ← Cay(h ω_orient) ω
   * (carried with the body, header) for a free non-isotropic body; ω_orient = ω otherwise.
   */
  integrateBodyOrientation(ib: number, h: number): void {
    const { orientation: q, angularVelocity: w } = this.b;
    const o = 3 * ib;
    const wx = w[o], wy = w[o + 1], wz = w[o + 2];
    if (this.isotropicScale[ib] === this.isotropicScale[ib] || !this.free[ib]) {
      integrateOrientation(q, 4 * ib, wx, wy, wz, h);
      return;
    }
    const m = this.midpointOffset;
    const ox = wx + m[o], oy = wy + m[o + 1], oz = wz + m[o + 2];
    integrateOrientation(q, 4 * ib, ox, oy, oz, h);
    // ω ← R(Δ) ω, Δ = (½hω_orient, 1)/|·| the same rotation: R(Δ) u = u + 2 Δ_v × (Δ_v × u + Δ_w u)
    const hh = 0.5 * h;
    const n = 1 / Math.sqrt(1 + hh * hh * (ox * ox + oy * oy + oz * oz));
    const dx = hh * ox * n, dy = hh * oy * n, dz = hh * oz * n;
    const tx = dy * wz - dz * wy + n * wx;
    const ty = dz * wx - dx * wz + n * wy;
    const tz = dx * wy - dy * wx + n * wz;
    w[o] = wx + 2 * (dy * tz - dz * ty);
    w[o + 1] = wy + 2 * (dz * tx - dx * tz);
    w[o + 2] = wz + 2 * (dx * ty - dy * tx);
  }

  /**
   * xpbd's update_velocities for ω of body ib, the inverse of integrateBodyOrientation: from
   * Δq = q q_prev⁻¹, ω_orient = (2/h) Δq_v / Δq_w (the inverse of the Cayley map, exact for a free
   * body; the sign of Δq cancels), then ω = scale · Cay(h ω_orient)(ω_orient − midpointOffset):
   * the velocity the step ends with, carried with the body; `scale` is the angular damping
   * factor. Used for non-isotropic bodies (spheres take the same inverse, ω = 2 Δq_v / (h Δq_w),
   * without offset or transport, inline in xpbd/cpu.ts).
   */
  angularVelocityFromRotation(ib: number, h: number, qPrev: Float64Array, scale: number): void {
    const { orientation: q, angularVelocity: w } = this.b;
    const qo = 4 * ib, o = 3 * ib;
    // Δq = q ⊗ q_prev*:  Δq_v = w_p q_v − w q_v,p − q_v × q_v,p,  Δq_w = w w_p + q_v · q_v,p
    const dq = this.relativeScratch;
    quatRelative(q, qo, qPrev, qo, dq, 0);
    const dqx = dq[0], dqy = dq[1], dqz = dq[2], dqw = dq[3];
    const a = 2 / (h * dqw); // the sign of Δq_w cancels: the shorter way round
    const ox = a * dqx, oy = a * dqy, oz = a * dqz; // ω_orient
    const m = this.midpointOffset;
    const ux = ox - m[o], uy = oy - m[o + 1], uz = oz - m[o + 2]; // ωₙ₊₁ in the frame of Rₙ
    const hh = 0.5 * h;
    const n = 1 / Math.sqrt(1 + hh * hh * (ox * ox + oy * oy + oz * oz));
    const dx = hh * ox * n, dy = hh * oy * n, dz = hh * oz * n;
    const tx = dy * uz - dz * uy + n * ux;
    const ty = dz * ux - dx * uz + n * uy;
    const tz = dx * uy - dy * ux + n * uz;
    w[o] = scale * (ux + 2 * (dy * tz - dz * ty));
    w[o + 1] = scale * (uy + 2 * (dz * tx - dx * tz));
    w[o + 2] = scale * (uz + 2 * (dx * ty - dy * tx));
  }
}
