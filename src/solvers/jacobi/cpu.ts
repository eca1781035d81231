/**
 * jacobi-cpu — the f64 reference of the GPU Jacobi point-constraint solver
 * (shared/seeds/gpu-jacobi-point-constraints.txt). Same stages, same names as
 * the WGSL kernels in kernels.wgsl.ts, so one can be read against the other.
 *
 * One solver step of h = dt / substeps:
 *   1. compute_inertia          I⁻¹ = R I_local⁻¹ Rᵀ                         (per body)
 *   2. compute_free_velocity    V* = V + h M⁻¹ F, clear ΔV                   (per body)
 *   3. compute_violation_and_jacobian_and_delassus
 *                               C_ℓ (3), J_ℓ (8), A_ℓℓ⁻¹ = (J_ℓ M⁻¹ J_ℓᵀ)⁻¹  (per constraint)
 *      warm start               λ⁰ = f · λ(previous step)
 *      apply warm start         ΔV = −h M⁻¹ Jᵀ λ⁰ (update_velocities once), so V⁰ = V* − h M⁻¹Jᵀλ⁰
 *   4. N × ( update_multipliers λ_ℓ += h⁻¹ A_ℓℓ⁻¹ (J_ℓ V^k + β C_ℓ)       (37) (per constraint)
 *            update_velocities  ΔV_i = −h M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ λ_ℓ            (34) (per body) )
 *   5. compute_positions        V = V* + ΔV; x += h v; q += ½ h (0, ω) ⊗ q; normalise
 *
 * Invariants: update_multipliers reads only V*, ΔV and per-constraint data and
 * writes only λ_ℓ of its own constraint; update_velocities reads λ and writes
 * only ΔV of its own body (a gather through the CSR connectivity), so each pass
 * is order-independent — a true Jacobi sweep, the same on the GPU.
 *
 * The reference text starts the iterations from V⁰ = V* even when λ⁰ ≠ 0; its
 * first multiplier update then adds the whole correction on top of λ⁰. Option
 * `applyWarmStart` (default true) makes V⁰ consistent with λ⁰ as in (5); false
 * reproduces the text as written. Angular acceleration is zero: no torques and
 * no gyroscopic term (exact for spheres, whose inertia is isotropic).
 */
import type { WorldDesc } from '../../model/world.js';
import { compileWorld, type CompiledWorld } from '../../model/compiled.js';
import {
  type Solver,
  type SolverOptions,
  type Snapshot,
  type StepTimings,
  type AdapterDescription,
  defaultSolverOptions,
} from '../solver.js';

export interface JacobiVariant {
  /** apply the warm-start impulses to the velocities before iterating (default true) */
  applyWarmStart: boolean;
}

export class JacobiCpuSolver implements Solver {
  readonly id = 'jacobi-cpu';
  readonly options: SolverOptions;
  readonly variant: JacobiVariant;
  readonly bodyCount: number;
  readonly constraintCount: number;
  readonly adapter: AdapterDescription = { name: 'cpu (f64)', software: false, timestamps: false };

  readonly w: CompiledWorld;
  // per body
  readonly linVelDelta: Float64Array;
  readonly angVelDelta: Float64Array;
  readonly angMassInv: Float64Array; // world-frame inverse inertia, 9 per body
  // per constraint
  readonly multiplier: Float64Array; // λ_ℓ (3)
  readonly jacobian: Float64Array; // jw0 (9) then jw1 (9)
  readonly violation: Float64Array; // C_ℓ (3)
  readonly delassusInv: Float64Array; // A_ℓℓ⁻¹ (9)

  private frame = 0;
  private msPerFrame: number[] = [];

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}, variant: Partial<JacobiVariant> = {}) {
    this.options = { ...defaultSolverOptions, ...options };
    this.variant = { applyWarmStart: true, ...variant };
    this.w = compileWorld(world);
    const nb = this.w.bodyCount;
    const nc = this.w.constraintCount;
    this.bodyCount = this.w.worldBodyCount;
    this.constraintCount = nc;
    this.linVelDelta = new Float64Array(3 * nb);
    this.angVelDelta = new Float64Array(3 * nb);
    this.angMassInv = new Float64Array(9 * nb);
    this.multiplier = new Float64Array(3 * nc);
    this.jacobian = new Float64Array(18 * nc);
    this.violation = new Float64Array(3 * nc);
    this.delassusInv = new Float64Array(9 * nc);
  }

  async step(frames: number): Promise<void> {
    for (let f = 0; f < frames; f++) {
      const t0 = performance.now();
      this.stepFrame();
      this.msPerFrame.push(performance.now() - t0);
    }
  }

  /** One frame: `substeps` solver steps of h = dt / substeps. */
  stepFrame(): void {
    const { dt, substeps, iterations, beta, warmStart } = this.options;
    const h = dt / substeps;
    for (let s = 0; s < substeps; s++) {
      this.computeInertia();
      this.computeFreeVelocity(h);
      this.computeViolationAndJacobianAndDelassus();
      this.warmStart(warmStart);
      if (this.variant.applyWarmStart && warmStart > 0) this.updateVelocities(h);
      const baumgarte = beta / h; // β in 1/s
      for (let k = 0; k < iterations; k++) {
        this.updateMultipliers(h, baumgarte);
        this.updateVelocities(h);
      }
      this.computePositions(h);
    }
    this.frame++;
  }

  /** 1. I⁻¹_world = R I⁻¹_local Rᵀ (the inverse of R I Rᵀ). */
  computeInertia(): void {
    const { orientation: q, inverseInertiaLocal: L, bodyCount } = this.w;
    const out = this.angMassInv;
    const R = new Float64Array(9);
    const T = new Float64Array(9);
    for (let ib = 0; ib < bodyCount; ib++) {
      quatToMat3(q, 4 * ib, R);
      // T = R · L
      const o = 9 * ib;
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++)
          T[3 * r + c] = R[3 * r] * L[o + c] + R[3 * r + 1] * L[o + 3 + c] + R[3 * r + 2] * L[o + 6 + c];
      // out = T · Rᵀ
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++)
          out[o + 3 * r + c] = T[3 * r] * R[3 * c] + T[3 * r + 1] * R[3 * c + 1] + T[3 * r + 2] * R[3 * c + 2];
    }
  }

  /** 2. V* = V + h M⁻¹ F (gravity on every body that can move); ΔV = 0. */
  computeFreeVelocity(h: number): void {
    const { linearVelocity: v, inverseMass, gravity: g, bodyCount } = this.w;
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] > 0) {
        v[3 * ib] += h * g[0];
        v[3 * ib + 1] += h * g[1];
        v[3 * ib + 2] += h * g[2];
      }
    }
    this.linVelDelta.fill(0);
    this.angVelDelta.fill(0);
  }

  /**
   * 3. C_ℓ = x_i + R(q_i) r⁰ − x_j − R(q_j) r¹                      (3)
   *    J_ℓ = [ I₃  −[R r⁰]×  −I₃  [R r¹]× ]; store jw0 = −[R r⁰]×, jw1 = [R r¹]×   (8)
   *    A_ℓℓ = (m_i⁻¹ + m_j⁻¹) I₃ − jw0 I_i⁻¹ jw0 − jw1 I_j⁻¹ jw1   (jwᵀ = −jw), stored inverted
   */
  computeViolationAndJacobianAndDelassus(): void {
    const { position: x, orientation: q, ib0, ib1, r0, r1, inverseMass, constraintCount } = this.w;
    const R = new Float64Array(9);
    const a = new Float64Array(3);
    const b = new Float64Array(3);
    const A = new Float64Array(9);
    const T = new Float64Array(9);
    for (let ic = 0; ic < constraintCount; ic++) {
      const b0 = ib0[ic];
      const b1 = ib1[ic];
      quatToMat3(q, 4 * b0, R);
      mat3MulVec(R, 0, r0, 3 * ic, a);
      quatToMat3(q, 4 * b1, R);
      mat3MulVec(R, 0, r1, 3 * ic, b);
      for (let d = 0; d < 3; d++) this.violation[3 * ic + d] = x[3 * b0 + d] - x[3 * b1 + d] + a[d] - b[d];
      const jo = 18 * ic;
      crossMat(a, -1, this.jacobian, jo); // jw0 = −[r0]×
      crossMat(b, 1, this.jacobian, jo + 9); // jw1 = [r1]×
      A.fill(0);
      A[0] = A[4] = A[8] = inverseMass[b0] + inverseMass[b1];
      subSandwich(this.jacobian, jo, this.angMassInv, 9 * b0, A, T);
      subSandwich(this.jacobian, jo + 9, this.angMassInv, 9 * b1, A, T);
      invertMat3(A, this.delassusInv, 9 * ic);
    }
  }

  /** λ⁰ = f · λ(previous step). */
  warmStart(factor: number): void {
    if (factor === 1) return;
    const m = this.multiplier;
    for (let i = 0; i < m.length; i++) m[i] *= factor;
  }

  /** 4a. λ_ℓ += h⁻¹ A_ℓℓ⁻¹ (J_ℓ V^k + β C_ℓ)   (37), V^k = V* + ΔV^k. */
  updateMultipliers(h: number, baumgarte: number): void {
    const { linearVelocity: v, angularVelocity: w, ib0, ib1, constraintCount } = this.w;
    const dv = this.linVelDelta;
    const dw = this.angVelDelta;
    const J = this.jacobian;
    const Ai = this.delassusInv;
    const lam = this.multiplier;
    const C = this.violation;
    const invH = 1 / h;
    for (let ic = 0; ic < constraintCount; ic++) {
      const o0 = 3 * ib0[ic];
      const o1 = 3 * ib1[ic];
      const w0x = w[o0] + dw[o0], w0y = w[o0 + 1] + dw[o0 + 1], w0z = w[o0 + 2] + dw[o0 + 2];
      const w1x = w[o1] + dw[o1], w1y = w[o1 + 1] + dw[o1 + 1], w1z = w[o1 + 2] + dw[o1 + 2];
      const jo = 18 * ic;
      const co = 3 * ic;
      let cv0 = v[o0] + dv[o0] - v[o1] - dv[o1] + baumgarte * C[co];
      let cv1 = v[o0 + 1] + dv[o0 + 1] - v[o1 + 1] - dv[o1 + 1] + baumgarte * C[co + 1];
      let cv2 = v[o0 + 2] + dv[o0 + 2] - v[o1 + 2] - dv[o1 + 2] + baumgarte * C[co + 2];
      cv0 += J[jo] * w0x + J[jo + 1] * w0y + J[jo + 2] * w0z + J[jo + 9] * w1x + J[jo + 10] * w1y + J[jo + 11] * w1z;
      cv1 += J[jo + 3] * w0x + J[jo + 4] * w0y + J[jo + 5] * w0z + J[jo + 12] * w1x + J[jo + 13] * w1y + J[jo + 14] * w1z;
      cv2 += J[jo + 6] * w0x + J[jo + 7] * w0y + J[jo + 8] * w0z + J[jo + 15] * w1x + J[jo + 16] * w1y + J[jo + 17] * w1z;
      const ao = 9 * ic;
      lam[co] += invH * (Ai[ao] * cv0 + Ai[ao + 1] * cv1 + Ai[ao + 2] * cv2);
      lam[co + 1] += invH * (Ai[ao + 3] * cv0 + Ai[ao + 4] * cv1 + Ai[ao + 5] * cv2);
      lam[co + 2] += invH * (Ai[ao + 6] * cv0 + Ai[ao + 7] * cv1 + Ai[ao + 8] * cv2);
    }
  }

  /**
   * 4b. ΔV_i = −h M_i⁻¹ Σ_ℓ∋i J_ℓ,iᵀ λ_ℓ   (34):
   *     linear  −h m⁻¹ λ (body 0), +h m⁻¹ λ (body 1);  angular +h I⁻¹ jw λ (jwᵀ = −jw).
   */
  updateVelocities(h: number): void {
    const { inverseMass, ib0, bodyCount } = this.w;
    const { ic0, constraintList } = this.w.connectivity;
    const dv = this.linVelDelta;
    const dw = this.angVelDelta;
    const J = this.jacobian;
    const lam = this.multiplier;
    const Ii = this.angMassInv;
    for (let ib = 0; ib < bodyCount; ib++) {
      let lx = 0, ly = 0, lz = 0; // Σ ±λ
      let ax = 0, ay = 0, az = 0; // Σ jw λ
      for (let k = ic0[ib]; k < ic0[ib + 1]; k++) {
        const ic = constraintList[k];
        const co = 3 * ic;
        const l0 = lam[co], l1 = lam[co + 1], l2 = lam[co + 2];
        const isBody0 = ib0[ic] === ib;
        const jo = 18 * ic + (isBody0 ? 0 : 9);
        if (isBody0) {
          lx -= l0; ly -= l1; lz -= l2;
        } else {
          lx += l0; ly += l1; lz += l2;
        }
        ax += J[jo] * l0 + J[jo + 1] * l1 + J[jo + 2] * l2;
        ay += J[jo + 3] * l0 + J[jo + 4] * l1 + J[jo + 5] * l2;
        az += J[jo + 6] * l0 + J[jo + 7] * l1 + J[jo + 8] * l2;
      }
      const o = 3 * ib;
      const s = h * inverseMass[ib];
      dv[o] = s * lx;
      dv[o + 1] = s * ly;
      dv[o + 2] = s * lz;
      const io = 9 * ib;
      dw[o] = h * (Ii[io] * ax + Ii[io + 1] * ay + Ii[io + 2] * az);
      dw[o + 1] = h * (Ii[io + 3] * ax + Ii[io + 4] * ay + Ii[io + 5] * az);
      dw[o + 2] = h * (Ii[io + 6] * ax + Ii[io + 7] * ay + Ii[io + 8] * az);
    }
  }

  /** 5. V = V* + ΔV; x += h v; q += ½ h (0, ω) ⊗ q, then normalise. */
  computePositions(h: number): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, bodyCount } = this.w;
    const dv = this.linVelDelta;
    const dw = this.angVelDelta;
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] === 0) continue; // fixed: never moves
      const o = 3 * ib;
      for (let d = 0; d < 3; d++) {
        v[o + d] += dv[o + d];
        w[o + d] += dw[o + d];
        x[o + d] += h * v[o + d];
      }
      integrateOrientation(q, 4 * ib, w[o], w[o + 1], w[o + 2], h);
    }
  }

  async snapshot(): Promise<Snapshot> {
    const n = this.bodyCount;
    return {
      frame: this.frame,
      time: this.frame * this.options.dt,
      bodyCount: n,
      position: this.w.position.slice(0, 3 * n),
      orientation: this.w.orientation.slice(0, 4 * n),
      linearVelocity: this.w.linearVelocity.slice(0, 3 * n),
      angularVelocity: this.w.angularVelocity.slice(0, 3 * n),
    };
  }

  timings(): StepTimings {
    return { clock: 'wall', msPerFrame: this.msPerFrame.slice(), wallMsPerFrame: this.msPerFrame.slice() };
  }

  resetTimings(): void {
    this.msPerFrame = [];
  }

  destroy(): void {}
}

// --- small f64 helpers (out-parameters, no allocation) -------------------------------

/** Row-major rotation matrix of the unit quaternion q[o..o+4) = [x y z w]. */
export function quatToMat3(q: ArrayLike<number>, o: number, R: Float64Array): void {
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - z * w);
  R[2] = 2 * (x * z + y * w);
  R[3] = 2 * (x * y + z * w);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - x * w);
  R[6] = 2 * (x * z - y * w);
  R[7] = 2 * (y * z + x * w);
  R[8] = 1 - 2 * (x * x + y * y);
}

function mat3MulVec(M: Float64Array, mo: number, v: ArrayLike<number>, vo: number, out: Float64Array): void {
  const a = v[vo], b = v[vo + 1], c = v[vo + 2];
  out[0] = M[mo] * a + M[mo + 1] * b + M[mo + 2] * c;
  out[1] = M[mo + 3] * a + M[mo + 4] * b + M[mo + 5] * c;
  out[2] = M[mo + 6] * a + M[mo + 7] * b + M[mo + 8] * c;
}

/** out[o..o+9) = s · [v]×, the cross-product matrix ([v]× u = v × u). */
function crossMat(v: Float64Array, s: number, out: Float64Array, o: number): void {
  out[o] = 0; out[o + 1] = -s * v[2]; out[o + 2] = s * v[1];
  out[o + 3] = s * v[2]; out[o + 4] = 0; out[o + 5] = -s * v[0];
  out[o + 6] = -s * v[1]; out[o + 7] = s * v[0]; out[o + 8] = 0;
}

/** A −= jw · I⁻¹ · jw  (jw at J[jo..], I⁻¹ at Ii[io..]); T is scratch. */
function subSandwich(J: Float64Array, jo: number, Ii: Float64Array, io: number, A: Float64Array, T: Float64Array): void {
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++)
      T[3 * r + c] = J[jo + 3 * r] * Ii[io + c] + J[jo + 3 * r + 1] * Ii[io + 3 + c] + J[jo + 3 * r + 2] * Ii[io + 6 + c];
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++)
      A[3 * r + c] -= T[3 * r] * J[jo + c] + T[3 * r + 1] * J[jo + 3 + c] + T[3 * r + 2] * J[jo + 6 + c];
}

/** out[o..o+9) = A⁻¹ by the adjugate; zero when A is singular. */
export function invertMat3(A: ArrayLike<number>, out: Float64Array, o: number): void {
  const c00 = A[4] * A[8] - A[5] * A[7];
  const c01 = A[5] * A[6] - A[3] * A[8];
  const c02 = A[3] * A[7] - A[4] * A[6];
  const det = A[0] * c00 + A[1] * c01 + A[2] * c02;
  if (det === 0 || !Number.isFinite(det)) {
    out.fill(0, o, o + 9);
    return;
  }
  const id = 1 / det;
  out[o] = c00 * id;
  out[o + 1] = (A[2] * A[7] - A[1] * A[8]) * id;
  out[o + 2] = (A[1] * A[5] - A[2] * A[4]) * id;
  out[o + 3] = c01 * id;
  out[o + 4] = (A[0] * A[8] - A[2] * A[6]) * id;
  out[o + 5] = (A[2] * A[3] - A[0] * A[5]) * id;
  out[o + 6] = c02 * id;
  out[o + 7] = (A[1] * A[6] - A[0] * A[7]) * id;
  out[o + 8] = (A[0] * A[4] - A[1] * A[3]) * id;
}

/** q += ½ h (0, ω) ⊗ q, then normalise (ω in the world frame; q = [x y z w]). */
export function integrateOrientation(q: Float64Array, o: number, wx: number, wy: number, wz: number, h: number): void {
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  // (0, ω) ⊗ q = ( q_w ω + ω × q_v ,  −ω · q_v )
  const hh = 0.5 * h;
  const nx = x + hh * (w * wx + (wy * z - wz * y));
  const ny = y + hh * (w * wy + (wz * x - wx * z));
  const nz = z + hh * (w * wz + (wx * y - wy * x));
  const nw = w - hh * (wx * x + wy * y + wz * z);
  const inv = 1 / Math.hypot(nx, ny, nz, nw);
  q[o] = nx * inv;
  q[o + 1] = ny * inv;
  q[o + 2] = nz * inv;
  q[o + 3] = nw * inv;
}
