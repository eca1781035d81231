/**
 * xpbd-cpu — the f64 reference of the XPBD point-constraint solver (Müller et al.
 * 2020, "Detailed Rigid Body Simulation with Extended Position Based Dynamics",
 * as summarised in shared/seeds/starframe-solving-constraints.md, "XPBD"). Same
 * stages, same names as the WGSL kernels in kernels.wgsl.ts (xpbd-gpu).
 *
 * One frame = `substeps` steps of h = dt / substeps; one step:
 *   1. integrate          x_prev = x, q_prev = q; for dynamic bodies: v += h g; x += h v;
 *                         q += ½ h (0, ω) ⊗ q, normalise.  λ = 0 (XPBD restarts λ each step)
 *   2. N × for each colour c (in order): solve_colour c: for each constraint ℓ of colour c
 *        p₁ = x₁ + r₁, p₂ = x₂ + r₂ (rᵢ = Rᵢ rⁱ, the lever arms),  d = p₁ − p₂
 *        then one XPBD update  Δλ = (−C − α̃ λ) / (∇C M⁻¹ ∇Cᵀ + α̃),  α̃ = α / h²  (the text's Δλ)
 *        in one of two forms (XpbdVariant.form):
 *        'point' (default): C = d, three rows solved as one 3×3 block, λ ∈ R³:
 *            K = A₁ + A₂ + α̃ I₃,  Aᵢ = mᵢ⁻¹ I₃ − [rᵢ]× Iᵢ⁻¹ [rᵢ]×   (∇C M⁻¹ ∇Cᵀ of p₁ − p₂)
 *            Δλ = −K⁻¹ (d + α̃ λ),  p = Δλ
 *        'distance' (Müller 2020 §3.3.1 as the text gives it): C = |d|, n = d / C, one row:
 *            wᵢ = mᵢ⁻¹ + (rᵢ × n)ᵀ Iᵢ⁻¹ (rᵢ × n),  Δλ = (−C − α̃ λ) / (w₁ + w₂ + α̃),  p = Δλ n
 *        both:  λ += Δλ;  x₁ += p / m₁,  x₂ −= p / m₂;
 *               q₁ += ½ (0, I₁⁻¹ (r₁ × p)) ⊗ q₁,  q₂ −= ½ (0, I₂⁻¹ (r₂ × p)) ⊗ q₂, normalise
 *   3. update_velocities  v = (x − x_prev) / h;  ω = 2 Δq_v / h, Δq = q q_prev⁻¹ (negated if Δq_w < 0);
 *                         v ← v · max(0, 1 − μ_lin h),  ω ← ω · max(0, 1 − μ_ang h)
 * Body 1 = ib0, body 2 = ib1 (r¹ = 0 and m⁻¹ = 0 for a world anchor); Iᵢ⁻¹ = Rᵢ I_local⁻¹ Rᵢᵀ
 * at the current orientation.
 *
 * Why 'point' is the default. Both forms hold the same joint (d = 0 ⇔ |d| = 0) and, with
 * compliance, the same spring (energy ½ |d|²/α either way, force d/α). But one 'distance'
 * update maps d ↦ d − (|d|² / dᵀKd) K d (K = A₁ + A₂, linearised): the part of d along an
 * eigenvector of K with eigenvalue a is multiplied by 1 − a / (dᵀKd/|d|²). In a hanging
 * chain d is mostly the sag along the lever arm, the direction of least mobility
 * a∥ = Σ mᵢ⁻¹; the sideways mobility of a sphere held at its surface is
 * a⊥ = Σ (mᵢ⁻¹ + r² Iᵢ⁻¹) = 3.5 a∥ (I = 0.4 m r²), so a sideways offset is multiplied by
 * 1 − 3.5 = −2.5 each substep: any rounding error grows and flips sign until it is as large
 * as the sag, and the beads rattle (spin of ~ a⊥/a∥ · g h / r ≈ 1 rad/s at rest). The
 * 'point' update maps d ↦ d − K K⁻¹ d = 0: no such factor. test/xpbd.test.ts shows both.
 *
 * Invariants: within one colour no two constraints share a dynamic body
 * (colourConstraints), so solving them one after the other (here, along `order`)
 * or all at once (the GPU) gives the same result; colours run in order
 * (Gauss–Seidel across colours). Fixed bodies and world anchors (m⁻¹ = 0) are
 * never written. Rows per constraint: 3 ('point') or 1 ('distance', along n).
 *
 * Options: compliance α per constraint from complianceOf (0: a hard joint; α > 0:
 * a zero-rest-length spring of stiffness k = 1/α, f = d/α = λ/h²); linearDamping,
 * angularDamping as above. beta and warmStart are ignored: XPBD projects positions
 * (no Baumgarte term: the projection is the drift correction), and λ restarts at 0
 * every substep, which needs no warm start (the text: "it isn't helped by warm starting").
 * No torques (spheres): the only angular motion is what the constraints make.
 */
import type { WorldDesc } from '../../model/world.js';
import { complianceOf } from '../../model/compiled.js';
import { colourConstraints, type Colouring } from '../../model/colouring.js';
import type { Solver, SolverOptions, SolverCost, ResidualCurve } from '../solver.js';
import { integrateOrientation, dampingFactor } from '../jacobi/cpu.js';
import { CpuSolverBase } from '../cpu-base.js';

/** What the XPBD solvers' residual curves hold (ResidualCurve.quantity). */
export const XPBD_RESIDUAL_QUANTITY = '‖(C(x) + α̃λ)/h²‖₂ over constraint rows, m/s² (XPBD equation residual; h²·r is the position error left)';

/**
 * 'distance' form only: a constraint whose |d| is below this (m) is left alone in a step,
 * as n = d/|d| is undefined at d = 0 (the 'point' form divides by nothing and needs no
 * such test). Safe in f64 and f32 alike: 1e-12 m is far below any violation that matters
 * (the tests measure mm and µm) and above f64 rounding of coordinates up to ~1 km
 * (ε·1e3 m ≈ 2e-13 m), so rounding noise does not pick a random n; in f32, |d|² ≥ 1e-24
 * is still a normal number (min 1.2e-38), so d/|d| stays accurate, and a nonzero f32 d is
 * a multiple of an ulp of the attachment points (≥ 1e-10 m for points ≥ 1 mm from the
 * origin), so in practice only an exact zero is skipped there. Skipping adds nothing: the
 * correction it would make is ≤ |d| in position.
 */
export const XPBD_MIN_DISTANCE = 1e-12;

export interface XpbdVariant {
  /** 'point': C = d, 3 rows as one block (default); 'distance': C = |d|, one row along n (see the header) */
  form: 'point' | 'distance';
}

export const defaultXpbdVariant: XpbdVariant = { form: 'point' };

/** Rows per constraint of a form: the three components of d, or the distance along n. */
export function xpbdRows(variant: XpbdVariant): number {
  return variant.form === 'point' ? 3 : 1;
}

export class XpbdCpuSolver extends CpuSolverBase implements Solver {
  readonly id = 'xpbd-cpu';
  readonly variant: XpbdVariant;
  readonly colouring: Colouring;
  // per body
  readonly positionPrev: Float64Array; // x_prev (3)
  readonly orientationPrev: Float64Array; // q_prev (4)
  /** s where I_local⁻¹ = s I₃ (every sphere; then I⁻¹ = R s I₃ Rᵀ = s I₃ at any orientation), else NaN */
  private readonly isotropicInertia: Float64Array;
  // per constraint (by constraint index)
  /** λ_ℓ (3; N·s²): the vector λ ('point'), or the scalar along n in [3ℓ] ('distance') */
  readonly multiplier: Float64Array;
  readonly compliance: Float64Array; // α_ℓ (m/N)

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}, variant: Partial<XpbdVariant> = {}) {
    super(world, options);
    this.variant = { ...defaultXpbdVariant, ...variant };
    const nb = this.w.bodyCount, nc = this.w.constraintCount;
    this.colouring = colourConstraints(this.w);
    this.positionPrev = new Float64Array(3 * nb);
    this.orientationPrev = new Float64Array(4 * nb);
    this.multiplier = new Float64Array(3 * nc);
    this.compliance = complianceOf(this.w, this.options.compliance);
    const L = this.w.inverseInertiaLocal;
    this.isotropicInertia = new Float64Array(nb).map((_, ib) => {
      const o = 9 * ib;
      const off = L[o + 1] === 0 && L[o + 2] === 0 && L[o + 3] === 0 && L[o + 5] === 0 && L[o + 6] === 0 && L[o + 7] === 0;
      return off && L[o + 4] === L[o] && L[o + 8] === L[o] ? L[o] : NaN;
    });
  }

  /** One frame: `substeps` steps of h = dt / substeps. */
  stepFrame(): void {
    this.stepFrameRecording(null);
  }

  /** One frame, recording into `residual` (when given) the residual after k = 0..N iterations of the first substep. */
  private stepFrameRecording(residual: number[] | null): void {
    const { dt, substeps, iterations } = this.options;
    const h = dt / substeps;
    const { colourCount } = this.colouring;
    for (let s = 0; s < substeps; s++) {
      this.integrate(h);
      const record = residual !== null && s === 0;
      if (record) residual.push(this.residual(h));
      for (let k = 0; k < iterations; k++) {
        for (let c = 0; c < colourCount; c++) this.solveColour(c, h);
        if (record) residual.push(this.residual(h));
      }
      this.updateVelocities(h);
    }
    this.frame++;
  }

  async stepRecordingResiduals(): Promise<ResidualCurve> {
    const point: number[] = [];
    this.stepFrameRecording(point);
    return { frame: this.frame, substep: 0, quantity: XPBD_RESIDUAL_QUANTITY, channels: { point } };
  }

  /** 1. x_prev = x, q_prev = q; dynamic bodies: v += h g, x += h v, q += ½ h (0, ω) ⊗ q; λ = 0. */
  integrate(h: number): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, gravity: g, bodyCount } = this.w;
    this.positionPrev.set(x);
    this.orientationPrev.set(q);
    const gx = h * g[0], gy = h * g[1], gz = h * g[2];
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] === 0) continue; // fixed: never moves
      const o = 3 * ib;
      x[o] += h * (v[o] += gx);
      x[o + 1] += h * (v[o + 1] += gy);
      x[o + 2] += h * (v[o + 2] += gz);
      integrateOrientation(q, 4 * ib, w[o], w[o + 1], w[o + 2], h);
    }
    this.multiplier.fill(0);
  }

  /**
   * 2. One colour's constraints, one after the other along `order` (they share no dynamic
   *    body, so any order gives the same result): the XPBD update of the header per constraint.
   */
  solveColour(c: number, h: number): void {
    const { order, start } = this.colouring;
    const invH2 = 1 / (h * h);
    const point = this.variant.form === 'point';
    for (let k = start[c]; k < start[c + 1]; k++) {
      if (point) this.solvePoint(order[k], invH2);
      else this.solveDistance(order[k], invH2);
    }
  }

  /** 'point' form: Δλ = −K⁻¹ (d + α̃ λ), K = A₁ + A₂ + α̃ I₃, p = Δλ (λ ∈ R³). */
  private solvePoint(ic: number, invH2: number): void {
    const { position: x, inverseMass, ib0, ib1 } = this.w;
    const a = scratch; // [0..6) lever arms r₁, r₂; [6..15), [15..24) I₁⁻¹, I₂⁻¹ (world); [24..27) p
    const b0 = ib0[ic], b1 = ib1[ic];
    const o0 = 3 * b0, o1 = 3 * b1;
    this.leverArms(ic);
    const alphaTilde = this.compliance[ic] * invH2;
    // K = α̃ I₃ + Σᵢ Aᵢ,  Aᵢ = mᵢ⁻¹ I₃ − [rᵢ]× Iᵢ⁻¹ [rᵢ]×  (symmetric: six entries)
    let k00 = alphaTilde, k01 = 0, k02 = 0, k11 = alphaTilde, k12 = 0, k22 = alphaTilde;
    for (let side = 0; side < 2; side++) {
      const ib = side === 0 ? b0 : b1;
      const m = inverseMass[ib];
      if (m === 0) continue; // fixed: no mobility, never written
      const ro = 3 * side, io = 6 + 9 * side;
      this.worldInverseInertia(ib, a, io);
      const rx = a[ro], ry = a[ro + 1], rz = a[ro + 2];
      const i00 = a[io], i01 = a[io + 1], i02 = a[io + 2];
      const i10 = a[io + 3], i11 = a[io + 4], i12 = a[io + 5];
      const i20 = a[io + 6], i21 = a[io + 7], i22 = a[io + 8];
      // T = [r]× I⁻¹;  A = m I₃ − T [r]×  (lower triangle from symmetry)
      const t00 = ry * i20 - rz * i10, t01 = ry * i21 - rz * i11, t02 = ry * i22 - rz * i12;
      const t10 = rz * i00 - rx * i20, t11 = rz * i01 - rx * i21, t12 = rz * i02 - rx * i22;
      const t20 = rx * i10 - ry * i00, t21 = rx * i11 - ry * i01;
      k00 += m - (t01 * rz - t02 * ry);
      k01 -= t02 * rx - t00 * rz;
      k02 -= t00 * ry - t01 * rx;
      k11 += m - (t12 * rx - t10 * rz);
      k12 -= t10 * ry - t11 * rx;
      k22 += m - (t20 * ry - t21 * rx);
    }
    // −(d + α̃ λ), d = x₁ + r₁ − x₂ − r₂
    const lam = this.multiplier, lo = 3 * ic;
    const e0 = -(x[o0] + a[0] - x[o1] - a[3] + alphaTilde * lam[lo]);
    const e1 = -(x[o0 + 1] + a[1] - x[o1 + 1] - a[4] + alphaTilde * lam[lo + 1]);
    const e2 = -(x[o0 + 2] + a[2] - x[o1 + 2] - a[5] + alphaTilde * lam[lo + 2]);
    // Δλ = K⁻¹ e by the adjugate of the symmetric K (det > 0: K ≥ mᵢ⁻¹ I₃ for a dynamic body)
    const c00 = k11 * k22 - k12 * k12, c01 = k02 * k12 - k01 * k22, c02 = k01 * k12 - k02 * k11;
    const c11 = k00 * k22 - k02 * k02, c12 = k01 * k02 - k00 * k12, c22 = k00 * k11 - k01 * k01;
    const inv = 1 / (k00 * c00 + k01 * c01 + k02 * c02);
    const px = (c00 * e0 + c01 * e1 + c02 * e2) * inv;
    const py = (c01 * e0 + c11 * e1 + c12 * e2) * inv;
    const pz = (c02 * e0 + c12 * e1 + c22 * e2) * inv;
    lam[lo] += px;
    lam[lo + 1] += py;
    lam[lo + 2] += pz;
    a[24] = px;
    a[25] = py;
    a[26] = pz;
    this.applyImpulse(b0, 0, 1);
    this.applyImpulse(b1, 1, -1);
  }

  /** 'distance' form: C = |d|, n = d/C, Δλ = (−C − α̃ λ)/(w₁ + w₂ + α̃), p = Δλ n. */
  private solveDistance(ic: number, invH2: number): void {
    const { position: x, inverseMass, ib0, ib1 } = this.w;
    const a = scratch;
    const b0 = ib0[ic], b1 = ib1[ic];
    const o0 = 3 * b0, o1 = 3 * b1;
    this.leverArms(ic);
    // d = p₁ − p₂, C = |d|
    const dx = x[o0] + a[0] - x[o1] - a[3];
    const dy = x[o0 + 1] + a[1] - x[o1 + 1] - a[4];
    const dz = x[o0 + 2] + a[2] - x[o1 + 2] - a[5];
    const C = Math.sqrt(dx * dx + dy * dy + dz * dz);
    if (!(C > XPBD_MIN_DISTANCE)) return; // n undefined; the skipped correction is ≤ C
    const nx = dx / C, ny = dy / C, nz = dz / C;
    // wᵢ = mᵢ⁻¹ + (rᵢ × n)ᵀ Iᵢ⁻¹ (rᵢ × n)
    let wSum = 0;
    for (let side = 0; side < 2; side++) {
      const ib = side === 0 ? b0 : b1;
      if (inverseMass[ib] === 0) continue;
      const ro = 3 * side, io = 6 + 9 * side;
      this.worldInverseInertia(ib, a, io);
      const rx = a[ro], ry = a[ro + 1], rz = a[ro + 2];
      const cx = ry * nz - rz * ny, cy = rz * nx - rx * nz, cz = rx * ny - ry * nx;
      wSum += inverseMass[ib];
      wSum += cx * (a[io] * cx + a[io + 1] * cy + a[io + 2] * cz);
      wSum += cy * (a[io + 3] * cx + a[io + 4] * cy + a[io + 5] * cz);
      wSum += cz * (a[io + 6] * cx + a[io + 7] * cy + a[io + 8] * cz);
    }
    // Δλ = (−C − α̃ λ) / (w₁ + w₂ + α̃),  α̃ = α / h²;  λ += Δλ
    const alphaTilde = this.compliance[ic] * invH2;
    const lo = 3 * ic;
    const dl = (-C - alphaTilde * this.multiplier[lo]) / (wSum + alphaTilde);
    this.multiplier[lo] += dl;
    a[24] = dl * nx;
    a[25] = dl * ny;
    a[26] = dl * nz;
    this.applyImpulse(b0, 0, 1);
    this.applyImpulse(b1, 1, -1);
  }

  /** Lever arms r₁ = R₁ r⁰ → scratch[0..3), r₂ = R₂ r¹ → scratch[3..6) of constraint ic. */
  private leverArms(ic: number): void {
    const { orientation: q, ib0, ib1, r0, r1 } = this.w;
    rotateByQuat(q, 4 * ib0[ic], r0, 3 * ic, scratch, 0);
    rotateByQuat(q, 4 * ib1[ic], r1, 3 * ic, scratch, 3);
  }

  /**
   * Iᵢ⁻¹ = R I_local⁻¹ Rᵀ of body ib, row-major into out[o..o+9): s I₃ when I_local⁻¹ = s I₃,
   * else the product with R = R(q) written out.
   */
  private worldInverseInertia(ib: number, out: Float64Array, o: number): void {
    const s = this.isotropicInertia[ib];
    if (s === s) {
      out[o] = s; out[o + 1] = 0; out[o + 2] = 0;
      out[o + 3] = 0; out[o + 4] = s; out[o + 5] = 0;
      out[o + 6] = 0; out[o + 7] = 0; out[o + 8] = s;
      return;
    }
    const q = this.w.orientation, L = this.w.inverseInertiaLocal;
    const qo = 4 * ib, lo = 9 * ib;
    const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
    const R = [
      1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
      2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
      2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
    ]; // general inertia only (no sphere comes here): the allocation does not matter
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        let sum = 0;
        for (let k = 0; k < 3; k++) for (let l = 0; l < 3; l++) sum += R[3 * i + k] * L[lo + 3 * k + l] * R[3 * j + l];
        out[o + 3 * i + j] = sum;
      }
  }

  /**
   * Body ib (side 0: body 1, sign +1; side 1: body 2, sign −1) takes ±p, p = scratch[24..27):
   * x += ±m⁻¹ p,  q += ±½ (0, I⁻¹ (r × p)) ⊗ q, normalise; r, I⁻¹ from scratch. Fixed bodies: nothing.
   * (Integers in, numbers through scratch: no f64 argument to box were the call not inlined.)
   */
  private applyImpulse(ib: number, side: number, sign: number): void {
    const m = this.w.inverseMass[ib];
    if (m === 0) return;
    const x = this.w.position, a = scratch;
    const px = a[24], py = a[25], pz = a[26];
    const o = 3 * ib, ro = 3 * side, io = 6 + 9 * side;
    x[o] += sign * m * px;
    x[o + 1] += sign * m * py;
    x[o + 2] += sign * m * pz;
    const rx = a[ro], ry = a[ro + 1], rz = a[ro + 2];
    const cx = sign * (ry * pz - rz * py), cy = sign * (rz * px - rx * pz), cz = sign * (rx * py - ry * px);
    integrateOrientation(
      this.w.orientation,
      4 * ib,
      a[io] * cx + a[io + 1] * cy + a[io + 2] * cz,
      a[io + 3] * cx + a[io + 4] * cy + a[io + 5] * cz,
      a[io + 6] * cx + a[io + 7] * cy + a[io + 8] * cz,
      1,
    );
  }

  /** 3. v = (x − x_prev)/h; ω = ±2 Δq_v / h, Δq = q q_prev⁻¹; then damping. */
  updateVelocities(h: number): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, bodyCount } = this.w;
    const { linearDamping, angularDamping } = this.options;
    const xp = this.positionPrev, qp = this.orientationPrev;
    const invH = 1 / h;
    const linScale = invH * dampingFactor(linearDamping, h);
    const angScale = 2 * invH * dampingFactor(angularDamping, h);
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] === 0) continue;
      const o = 3 * ib;
      v[o] = (x[o] - xp[o]) * linScale;
      v[o + 1] = (x[o + 1] - xp[o + 1]) * linScale;
      v[o + 2] = (x[o + 2] - xp[o + 2]) * linScale;
      // Δq = q ⊗ q_prev*:  Δq_v = w_p q_v − w q_v,p − q_v × q_v,p,  Δq_w = w w_p + q_v · q_v,p
      const qo = 4 * ib;
      const x1 = q[qo], y1 = q[qo + 1], z1 = q[qo + 2], w1 = q[qo + 3];
      const x0 = qp[qo], y0 = qp[qo + 1], z0 = qp[qo + 2], w0 = qp[qo + 3];
      const dqw = w1 * w0 + x1 * x0 + y1 * y0 + z1 * z0;
      const s = dqw < 0 ? -angScale : angScale; // the shorter way round
      w[o] = s * (w0 * x1 - w1 * x0 - (y1 * z0 - z1 * y0));
      w[o + 1] = s * (w0 * y1 - w1 * y0 - (z1 * x0 - x1 * z0));
      w[o + 2] = s * (w0 * z1 - w1 * z0 - (x1 * y0 - y1 * x0));
    }
  }

  /**
   * ‖r‖₂ over constraint rows, r = (C(x) + α̃ λ) / h²: the XPBD equation C + α̃λ = 0 at the
   * current positions and multipliers (m/s²; h² r is the position error left), with
   * C = d ∈ R³ ('point') or C = |d| ('distance').
   */
  residual(h: number): number {
    const { position: x, ib0, ib1, constraintCount } = this.w;
    const a = scratch, lam = this.multiplier;
    const invH2 = 1 / (h * h);
    const point = this.variant.form === 'point';
    let squares = 0;
    for (let ic = 0; ic < constraintCount; ic++) {
      const o0 = 3 * ib0[ic], o1 = 3 * ib1[ic], lo = 3 * ic;
      this.leverArms(ic);
      const at = this.compliance[ic] * invH2;
      const dx = x[o0] + a[0] - x[o1] - a[3];
      const dy = x[o0 + 1] + a[1] - x[o1 + 1] - a[4];
      const dz = x[o0 + 2] + a[2] - x[o1 + 2] - a[5];
      if (point) squares += ((dx + at * lam[lo]) ** 2 + (dy + at * lam[lo + 1]) ** 2 + (dz + at * lam[lo + 2]) ** 2) * invH2 * invH2;
      else squares += ((Math.sqrt(dx * dx + dy * dy + dz * dz) + at * lam[lo]) * invH2) ** 2;
    }
    return Math.sqrt(squares);
  }


  /** Rows per constraint (3 'point', 1 'distance'), solved once per iteration per substep. */
  cost(): SolverCost {
    const { substeps, iterations } = this.options;
    return { rowSolvesPerFrame: xpbdRows(this.variant) * this.constraintCount * iterations * substeps };
  }

}

/** Scratch for lever arms, world inverse inertias (no allocation in the loops). */
const scratch = new Float64Array(27);

/**
 * out[oo..oo+3) = R(q) v with q = q[qo..qo+4), v = v[vo..vo+3), as R(q) v = v + 2 q_v × (q_v × v + w v).
 * Arrays and offsets, not loose numbers: were the call not inlined, every f64 argument would be boxed.
 */
function rotateByQuat(q: Float64Array, qo: number, v: Float64Array, vo: number, out: Float64Array, oo: number): void {
  const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
  const vx = v[vo], vy = v[vo + 1], vz = v[vo + 2];
  const tx = y * vz - z * vy + w * vx;
  const ty = z * vx - x * vz + w * vy;
  const tz = x * vy - y * vx + w * vz;
  out[oo] = vx + 2 * (y * tz - z * ty);
  out[oo + 1] = vy + 2 * (z * tx - x * tz);
  out[oo + 2] = vz + 2 * (x * ty - y * tx);
}
