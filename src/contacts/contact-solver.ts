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
 *             dissipation: rows/block-solver.ts frictionDisc), so friction is isotropic.
 *             (Anchored friction, feeding back a sticking point's tangential drift, was tried and
 *             dropped: on a yawed 10-box stack it crept 19 against 27 mm at 0.05 rad, but on a base-20
 *             pyramid 10.9 against 3.4 mm; no solver turned it on.)
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
import { SLOP_SIZE_FRACTION } from '../collision/pipeline.js';
import { frictionDisc, COLLISION_SWEEPS, type ContactRule } from '../rows/block-solver.js';
import { colourJonesPlassmannCpu, CONTACT_COLOUR_ROUNDS, CONTACT_MAX_COLOURS } from '../gpu/colouring.js';

/** Points of one manifold that collide together at most, and the Gauss-Seidel sweeps of their block (restitution). */
const MAX_COLLIDING = 8;
export const MANIFOLD_SWEEPS = 32;

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
 * Layout (Box2D's b2ContactConstraint with its points, Box3D's likewise): one record per manifold
 * (consecutive points of one pair, one normal) holding what its points share, and one short record
 * per point. The lever-arm products r × d and I⁻¹ (r × P) are not stored: they are formed as the
 * sweep goes, from the arms and each body's inverse inertia (loaded once per manifold), so a sweep
 * streams about 20 numbers per point instead of 68 (the solve was bound by that traffic: measured,
 * 59 ns a point on a pile that fits in cache, 88 on one that does not).
 *
 * Within a point the normal and then the friction are solved, each on the velocities the one before
 * left (sequential impulses); the friction's velocities after the normal impulse P_n are formed as
 * u_t + A_tn P_n (A = J M⁻¹ Jᵀ, the point's 3×3 effective-mass matrix in the frame (n, t₁, t₂)),
 * which is exactly what J_t V reads after V += M⁻¹ J_nᵀ P_n, and the bodies take the point's whole
 * impulse P_n n + P₁ t₁ + P₂ t₂ once.
 */
// manifold record
const M_N = 0; // n (3)
const M_T1 = 3; // t₁ (3)
const M_T2 = 6; // t₂ (3)
const M_MA = 9; // m_A⁻¹ (0: fixed)
const M_MB = 10;
const M_BIAS_RATE = 11;
const M_MASS_SCALE = 12;
const M_IMPULSE_SCALE = 13;
const M_MU_STATIC = 14;
const M_E = 15; // restitution e
const M_SLOP = 16; // the rule's slop, at most the pair's (collision/pipeline.ts pairSlop)
const MSTRIDE = 17;
// point record
const P_RA = 0; // r_A (3), world, fixed for the frame
const P_RB = 3; // r_B (3)
const P_KN = 6; // A_nn
const P_KN1 = 7; // A_n1 = A_1n
const P_KN2 = 8; // A_n2
const P_TINV = 9; // A_tt⁻¹, row-major (4)
const P_S0 = 13; // base separation
const P_LN = 14; // λ_n
const P_LT1 = 15; // λ₁
const P_LT2 = 16; // λ₂
const P_MU = 17; // μ of the point (μ_s when found at rest, else μ_d: K2)
const PSTRIDE = 18;

/**
 * The record layout above, for the Jacobi variant (jacobi-contact-solver.ts), which reads the same records.
 * The offsets stay module-local constants here: an exported binding is read through its export cell,
 * which V8 does not fold into the hot loops (measured: solve, relax and warm start 10–20 % slower on the
 * base-20 pyramid with the offsets exported); a reader copies them into constants of its own.
 */
export const CONTACT_RECORDS = { M_N, M_T1, M_T2, M_MA, M_MB, M_BIAS_RATE, M_MASS_SCALE, M_IMPULSE_SCALE, M_MU_STATIC, M_E, M_SLOP, MSTRIDE, P_RA, P_RB, P_KN, P_KN1, P_KN2, P_TINV, P_S0, P_LN, P_LT1, P_LT2, P_MU, PSTRIDE } as const;

export class ContactSolver {
  /** points */
  count = 0;
  /** manifolds: manifold m holds points start[m] .. start[m + 1] − 1 */
  manifolds = 0;
  private capacity = 0;
  private manifoldCapacity = 0;
  bodyA = new Int32Array(0);
  bodyB = new Int32Array(0);
  manifoldPoint = new Int32Array(0);
  /** per point: its manifold */
  pointManifold = new Int32Array(0);
  start = new Int32Array(1);
  protected mdata = new Float64Array(0);
  protected pdata = new Float64Array(0);
  /** per body: the world inverse inertia at prepare (9, row-major): the frame's, as the records' masses */
  protected invI = new Float64Array(0);
  // per body: the pose at prepare, and the motion since (updatePose)
  protected x0 = new Float64Array(0);
  protected q0 = new Float64Array(0);
  protected dx = new Float64Array(0);
  protected dtheta = new Float64Array(0);
  protected maxPushout = 0;
  private anyElastic = false;
  protected readonly disc = new Float64Array(2);

  /**
   * prepare (header): the records of every point of `list`, λ from the manifolds' records (times the
   * warm-start factor; no store: λ = 0), at the pose (position, orientation) of detection; `h` the
   * (sub)step the softness is for, `inverseInertia` the world I⁻¹ (9 per body).
   */
  prepare(list: ContactList, store: ManifoldStore | null, position: Float64Array, orientation: Float64Array, inverseMass: Float64Array, inverseInertia: Float64Array, h: number, rule: ContactRule, warmStart: number): void {
    const n = list.count;
    const nb = inverseMass.length;
    this.reserve(n, nb);
    if (n > this.manifoldCapacity) this.growManifolds(n); // a manifold has one point at least
    this.count = n;
    this.maxPushout = rule.maxPushout;
    this.x0.set(position.subarray(0, this.x0.length));
    this.q0.set(orientation.subarray(0, this.q0.length));
    this.invI.set(inverseInertia.subarray(0, 9 * nb));
    this.dx.fill(0);
    this.dtheta.fill(0);
    const unit = springOf(rule.softness, h);
    const staticUnit = rule.staticSoftness ? springOf(rule.staticSoftness, h) : unit;
    const I = this.invI, MD = this.mdata, PD = this.pdata;
    const ln = list.normal, lt1 = list.tangent1, lt2 = list.tangent2, armA = list.armA, armB = list.armB;
    const warm = store !== null && warmStart > 0;
    const sized = rule.sizeSpring;
    let anyElastic = false;
    let m = -1;
    // the manifold's shared numbers, kept in locals for its points
    let a = -1, b = -1, mA = 0, mB = 0;
    let nx = 0, ny = 0, nz = 0, t1x = 0, t1y = 0, t1z = 0, t2x = 0, t2y = 0, t2z = 0;
    let ja = 0, jb = 0;
    for (let c = 0; c < n; c++) {
      const o = 3 * c;
      const ca = list.bodyA[c], cb = list.bodyB[c];
      if (ca !== a || cb !== b || ln[o] !== nx || ln[o + 1] !== ny || ln[o + 2] !== nz) {
        // a new manifold: the pair's shared record
        m++;
        this.start[m] = c;
        a = ca;
        b = cb;
        this.mBodyA[m] = a;
        this.mBodyB[m] = b;
        mA = inverseMass[a];
        mB = inverseMass[b];
        ja = 9 * a;
        jb = 9 * b;
        nx = ln[o]; ny = ln[o + 1]; nz = ln[o + 2];
        t1x = lt1[o]; t1y = lt1[o + 1]; t1z = lt1[o + 2];
        t2x = lt2[o]; t2y = lt2[o + 1]; t2z = lt2[o + 2];
        const e = MSTRIDE * m;
        MD[e + M_N] = nx; MD[e + M_N + 1] = ny; MD[e + M_N + 2] = nz;
        MD[e + M_T1] = t1x; MD[e + M_T1 + 1] = t1y; MD[e + M_T1 + 2] = t1z;
        MD[e + M_T2] = t2x; MD[e + M_T2 + 1] = t2y; MD[e + M_T2 + 2] = t2z;
        MD[e + M_MA] = mA;
        MD[e + M_MB] = mB;
        const spring = mA === 0 || mB === 0 ? staticUnit : unit;
        MD[e + M_BIAS_RATE] = spring.biasRate;
        MD[e + M_MASS_SCALE] = spring.massScale;
        MD[e + M_IMPULSE_SCALE] = spring.impulseScale;
        if (sized !== undefined && rule.softness.kind === 'frequency') {
          // a small pair's spring stiffened so its sag under its own weight stays a fraction of its size
          // (ContactRule.sizeSpring): L from the pair's slop, SLOP_SIZE_FRACTION · L below 25 cm (beyond,
          // ω_L is below every default frequency and nothing changes)
          const L = list.slop[c] / SLOP_SIZE_FRACTION;
          const hertz = Math.min(sized.capHertz, Math.sqrt(sized.gravity / (sized.sagFraction * L)) / (2 * Math.PI));
          const spec = mA === 0 || mB === 0 ? (rule.staticSoftness ?? rule.softness) : rule.softness;
          if (spec.kind === 'frequency' && hertz > spec.hertz) frequencySpring(hertz, spec.dampingRatio, h, MD, e + M_BIAS_RATE);
        }
        MD[e + M_MU_STATIC] = list.staticFriction[c];
        const re = list.restitution[c];
        MD[e + M_E] = re;
        if (re > 0) anyElastic = true;
        MD[e + M_SLOP] = Math.min(rule.slop, list.slop[c]);
      }
      this.bodyA[c] = a;
      this.bodyB[c] = b;
      this.pointManifold[c] = m;
      const d = PSTRIDE * c;
      const rax = armA[o], ray = armA[o + 1], raz = armA[o + 2];
      const rbx = armB[o], rby = armB[o + 1], rbz = armB[o + 2];
      PD[d + P_RA] = rax; PD[d + P_RA + 1] = ray; PD[d + P_RA + 2] = raz;
      PD[d + P_RB] = rbx; PD[d + P_RB + 1] = rby; PD[d + P_RB + 2] = rbz;
      pointMass(PD, d, MD, MSTRIDE * m, I, ja, jb, 1, 1, PD, d + P_KN);
      PD[d + P_S0] = list.separation[c];
      // (K2) a point at rest when found may hold up to μ_s; a sliding one slides under μ_d
      PD[d + P_MU] = list.slip[c] < STATIC_SLIP_SPEED ? list.staticFriction[c] : list.friction[c];
      const p = list.manifoldPoint[c];
      this.manifoldPoint[c] = p;
      if (warm && p >= 0) {
        PD[d + P_LN] = warmStart * store!.normalImpulse[p];
        PD[d + P_LT1] = warmStart * store!.tangentImpulse1[p];
        PD[d + P_LT2] = warmStart * store!.tangentImpulse2[p];
      } else {
        PD[d + P_LN] = 0;
        PD[d + P_LT1] = 0;
        PD[d + P_LT2] = 0;
      }
    }
    this.manifolds = m + 1;
    this.start[m + 1] = n;
    this.anyElastic = anyElastic;
    this.sweepOrder = this.colourOrder ? colourOrderOf(this.mBodyA, this.mBodyB, this.manifolds, inverseMass) : null;
  }
  /**
   * Sweep the manifolds colour by colour (gpu/colouring.ts's colours, computed here by its
   * CPU twin), as softstep-gpu's sweeps do, instead of in list order: the CPU twin of a GPU sequential
   * solve (a Gauss-Seidel sweep's result depends on its order). Off by default.
   */
  colourOrder = false;
  /** the manifolds in sweep order (colourOrder), else null: list order */
  private sweepOrder: Int32Array | null = null;
  protected mBodyA = new Int32Array(0);
  protected mBodyB = new Int32Array(0);

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

  /** The separation of point c at the pose of the last updatePose (K1): s₀ + n·(Δx_B − Δx_A) + Δθ_B·(r_B × n) − Δθ_A·(r_A × n). */
  separation(c: number): number {
    const d = PSTRIDE * c, e = MSTRIDE * this.pointManifold[c], a = 3 * this.bodyA[c], b = 3 * this.bodyB[c];
    const PD = this.pdata, MD = this.mdata, dx = this.dx, dt = this.dtheta;
    const nx = MD[e + M_N], ny = MD[e + M_N + 1], nz = MD[e + M_N + 2];
    const rax = PD[d + P_RA], ray = PD[d + P_RA + 1], raz = PD[d + P_RA + 2];
    const rbx = PD[d + P_RB], rby = PD[d + P_RB + 1], rbz = PD[d + P_RB + 2];
    return (
      PD[d + P_S0] +
      nx * (dx[b] - dx[a]) + ny * (dx[b + 1] - dx[a + 1]) + nz * (dx[b + 2] - dx[a + 2]) +
      dt[b] * (rby * nz - rbz * ny) + dt[b + 1] * (rbz * nx - rbx * nz) + dt[b + 2] * (rbx * ny - rby * nx) -
      (dt[a] * (ray * nz - raz * ny) + dt[a + 1] * (raz * nx - rax * nz) + dt[a + 2] * (rax * ny - ray * nx))
    );
  }

  /** warm start: V += h M⁻¹ Jᵀ λ of every point's accumulated λ. */
  warmStart(v: Float64Array, w: Float64Array, h: number): void {
    const MD = this.mdata, PD = this.pdata, I = this.invI, start = this.start;
    for (let m = 0; m < this.manifolds; m++) {
      const e = MSTRIDE * m;
      const ia = 3 * this.mBodyA[m], ib = 3 * this.mBodyB[m], ja = 3 * ia, jb = 3 * ib;
      const mA = MD[e + M_MA], mB = MD[e + M_MB];
      const nx = MD[e + M_N], ny = MD[e + M_N + 1], nz = MD[e + M_N + 2];
      const t1x = MD[e + M_T1], t1y = MD[e + M_T1 + 1], t1z = MD[e + M_T1 + 2];
      const t2x = MD[e + M_T2], t2y = MD[e + M_T2 + 1], t2z = MD[e + M_T2 + 2];
      // the manifold's total impulse on each body: P = Σ P_c, and the torque Σ r_c × P_c
      let px = 0, py = 0, pz = 0, tax = 0, tay = 0, taz = 0, tbx = 0, tby = 0, tbz = 0;
      for (let c = start[m]; c < start[m + 1]; c++) {
        const d = PSTRIDE * c;
        const ln = h * PD[d + P_LN], l1 = h * PD[d + P_LT1], l2 = h * PD[d + P_LT2];
        if (ln === 0 && l1 === 0 && l2 === 0) continue;
        const qx = ln * nx + l1 * t1x + l2 * t2x, qy = ln * ny + l1 * t1y + l2 * t2y, qz = ln * nz + l1 * t1z + l2 * t2z;
        px += qx; py += qy; pz += qz;
        const rax = PD[d + P_RA], ray = PD[d + P_RA + 1], raz = PD[d + P_RA + 2];
        const rbx = PD[d + P_RB], rby = PD[d + P_RB + 1], rbz = PD[d + P_RB + 2];
        tax += ray * qz - raz * qy; tay += raz * qx - rax * qz; taz += rax * qy - ray * qx;
        tbx += rby * qz - rbz * qy; tby += rbz * qx - rbx * qz; tbz += rbx * qy - rby * qx;
      }
      if (mA > 0) {
        v[ia] -= mA * px; v[ia + 1] -= mA * py; v[ia + 2] -= mA * pz;
        w[ia] -= I[ja] * tax + I[ja + 1] * tay + I[ja + 2] * taz;
        w[ia + 1] -= I[ja + 3] * tax + I[ja + 4] * tay + I[ja + 5] * taz;
        w[ia + 2] -= I[ja + 6] * tax + I[ja + 7] * tay + I[ja + 8] * taz;
      }
      if (mB > 0) {
        v[ib] += mB * px; v[ib + 1] += mB * py; v[ib + 2] += mB * pz;
        w[ib] += I[jb] * tbx + I[jb + 1] * tby + I[jb + 2] * tbz;
        w[ib + 1] += I[jb + 3] * tbx + I[jb + 4] * tby + I[jb + 5] * tbz;
        w[ib + 2] += I[jb + 6] * tbx + I[jb + 7] * tby + I[jb + 8] * tbz;
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
    const MD = this.mdata, PD = this.pdata, I = this.invI, dx = this.dx, dth = this.dtheta, start = this.start;
    const maxPushout = this.maxPushout;
    const M = this.manifolds;
    const disc = this.disc;
    const order = this.sweepOrder;
    for (let k = 0; k < M; k++) {
      const i = reverse ? M - 1 - k : k;
      const m = order === null ? i : order[i];
      const e = MSTRIDE * m;
      const ia = 3 * this.mBodyA[m], ib = 3 * this.mBodyB[m], ja = 3 * ia, jb = 3 * ib;
      const mA = MD[e + M_MA], mB = MD[e + M_MB];
      const nx = MD[e + M_N], ny = MD[e + M_N + 1], nz = MD[e + M_N + 2];
      const t1x = MD[e + M_T1], t1y = MD[e + M_T1 + 1], t1z = MD[e + M_T1 + 2];
      const t2x = MD[e + M_T2], t2y = MD[e + M_T2 + 1], t2z = MD[e + M_T2 + 2];
      const slop = MD[e + M_SLOP], muStatic = MD[e + M_MU_STATIC];
      let vax = v[ia], vay = v[ia + 1], vaz = v[ia + 2], wax = w[ia], way = w[ia + 1], waz = w[ia + 2];
      let vbx = v[ib], vby = v[ib + 1], vbz = v[ib + 2], wbx = w[ib], wby = w[ib + 1], wbz = w[ib + 2];
      // (K1) the separation moved with the bodies: s = s₀ + n·(Δx_B − Δx_A) + r_B·(n × Δθ_B) − r_A·(n × Δθ_A)
      const sLin = nx * (dx[ib] - dx[ia]) + ny * (dx[ib + 1] - dx[ia + 1]) + nz * (dx[ib + 2] - dx[ia + 2]);
      const uax = ny * dth[ia + 2] - nz * dth[ia + 1], uay = nz * dth[ia] - nx * dth[ia + 2], uaz = nx * dth[ia + 1] - ny * dth[ia];
      const ubx = ny * dth[ib + 2] - nz * dth[ib + 1], uby = nz * dth[ib] - nx * dth[ib + 2], ubz = nx * dth[ib + 1] - ny * dth[ib];
      const c0 = start[m], c1 = start[m + 1];
      for (let q = 0; q < c1 - c0; q++) {
        const c = reverse ? c1 - 1 - q : c0 + q;
        const d = PSTRIDE * c;
        const rax = PD[d + P_RA], ray = PD[d + P_RA + 1], raz = PD[d + P_RA + 2];
        const rbx = PD[d + P_RB], rby = PD[d + P_RB + 1], rbz = PD[d + P_RB + 2];
        const s = PD[d + P_S0] + sLin + (rbx * ubx + rby * uby + rbz * ubz) - (rax * uax + ray * uay + raz * uaz);
        let bias = 0, ms = 1, is = 0;
        if (s > 0) bias = s * invH; // speculative: close the gap, no more
        else if (useBias && s + slop < 0) {
          // beyond the slop: the spring on the overlap past it. Within the slop the row stays rigid with no
          // bias: a soft row there is a damper alone (bias 0, −impulseScale λ), which lets a resting body
          // sink through the slop at v_n = −h γ λ (measured under si-soft-cpu at 1/120 s: 2.4 mm/s)
          bias = MD[e + M_BIAS_RATE] * (s + slop);
          if (bias < -maxPushout) bias = -maxPushout;
          ms = MD[e + M_MASS_SCALE];
          is = MD[e + M_IMPULSE_SCALE];
        }
        // the relative velocity at the point, dv = v_B + ω_B × r_B − v_A − ω_A × r_A, and u = J V along n, t₁, t₂
        const dvx = vbx + (wby * rbz - wbz * rby) - vax - (way * raz - waz * ray);
        const dvy = vby + (wbz * rbx - wbx * rbz) - vay - (waz * rax - wax * raz);
        const dvz = vbz + (wbx * rby - wby * rbx) - vaz - (wax * ray - way * rax);
        const vn = nx * dvx + ny * dvy + nz * dvz;
        let v1 = t1x * dvx + t1y * dvy + t1z * dvz;
        let v2 = t2x * dvx + t2y * dvy + t2z * dvz;
        const kN = PD[d + P_KN];
        const oldN = PD[d + P_LN];
        let Pn = 0;
        if (residual) {
          // ρ = J V + bias + h γ λ, γ = A_nn · impulseScale / massScale (rows/softness.ts S1)
          const r = vn + bias + (is > 0 ? (h * kN * is * oldN) / ms : 0);
          if (!(oldN <= 0 && r > 0)) residual.normal += r * r;
        } else {
          // (S1) Δλ_n = −massScale (v_n + bias) / (h A_nn) − impulseScale λ_n, λ_n ≥ 0
          let next = oldN - (ms * (vn + bias) * invH) / kN - is * oldN;
          if (next < 0) next = 0;
          PD[d + P_LN] = next;
          Pn = h * (next - oldN);
          // the tangential velocities after the normal impulse: u_t + A_tn P_n
          v1 += PD[d + P_KN1] * Pn;
          v2 += PD[d + P_KN2] * Pn;
        }
        // friction: v_t = J_t V (K2). With λ_n = 0 the disc is the point λ_t = 0 whatever v_t (a speculative
        // or separating point): nothing to do when λ_t is 0 already
        const lamNow = PD[d + P_LN];
        const old1 = PD[d + P_LT1], old2 = PD[d + P_LT2];
        let P1 = 0, P2 = 0;
        if (residual !== null || lamNow !== 0 || old1 !== 0 || old2 !== 0) {
          const radius = PD[d + P_MU] * lamNow;
          let f1 = old1 - invH * (PD[d + P_TINV] * v1 + PD[d + P_TINV + 1] * v2);
          let f2 = old2 - invH * (PD[d + P_TINV + 2] * v1 + PD[d + P_TINV + 3] * v2);
          const len2 = f1 * f1 + f2 * f2;
          const staticRadius = muStatic * lamNow;
          const sliding = len2 > staticRadius * staticRadius;
          if (residual) {
            // on the disc's rim with the residual pushing outward (Δλ ∝ −ρ), or a disc of radius 0 (μ λ_n = 0:
            // λ_t = 0 is exact whatever the slip): complementarity holds, the row counts 0
            const atEdge = sliding && (radius <= 0 || (old1 * old1 + old2 * old2 >= radius * radius * (1 - 1e-12) && old1 * v1 + old2 * v2 < 0));
            if (!atEdge) residual.friction += v1 * v1 + v2 * v2;
            continue;
          }
          if (sliding && len2 > radius * radius) {
            // beyond the disc: its point nearest f in the metric of A_tt (maximal dissipation)
            frictionDisc(PD, d + P_TINV, f1, f2, radius, disc);
            f1 = disc[0];
            f2 = disc[1];
          }
          PD[d + P_LT1] = f1;
          PD[d + P_LT2] = f2;
          P1 = h * (f1 - old1);
          P2 = h * (f2 - old2);
        }
        if (Pn === 0 && P1 === 0 && P2 === 0) continue;
        // the point's whole impulse P = P_n n + P₁ t₁ + P₂ t₂: V_A −= M_A⁻¹ [P; r_A × P], V_B += M_B⁻¹ [P; r_B × P]
        const px = Pn * nx + P1 * t1x + P2 * t2x, py = Pn * ny + P1 * t1y + P2 * t2y, pz = Pn * nz + P1 * t1z + P2 * t2z;
        if (mA > 0) {
          vax -= mA * px; vay -= mA * py; vaz -= mA * pz;
          const tx = ray * pz - raz * py, ty = raz * px - rax * pz, tz = rax * py - ray * px;
          wax -= I[ja] * tx + I[ja + 1] * ty + I[ja + 2] * tz;
          way -= I[ja + 3] * tx + I[ja + 4] * ty + I[ja + 5] * tz;
          waz -= I[ja + 6] * tx + I[ja + 7] * ty + I[ja + 8] * tz;
        }
        if (mB > 0) {
          vbx += mB * px; vby += mB * py; vbz += mB * pz;
          const tx = rby * pz - rbz * py, ty = rbz * px - rbx * pz, tz = rbx * py - rby * px;
          wbx += I[jb] * tx + I[jb + 1] * ty + I[jb + 2] * tz;
          wby += I[jb + 3] * tx + I[jb + 4] * ty + I[jb + 5] * tz;
          wbz += I[jb + 6] * tx + I[jb + 7] * ty + I[jb + 8] * tz;
        }
      }
      if (residual) continue;
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
   * per manifold, the points with e > 0 approaching faster than `threshold` (before this step's
   * forces: v_n⁻ = v_n − J_n h g) whose gap closes within h take P ≥ 0 so that they leave at −e v_n⁻
   * (then the forces), by projected Gauss-Seidel on the manifold's points; swept until none collides
   * (at most COLLISION_SWEEPS). `gravityStep` = h g when V has this step's gravity in it, else null.
   * The collision impulses are not λ. Returns the sweeps that collided. The manifolds are swept in list
   * order, or in the solve's colour order with colourOrder (the twin of the GPU's cs_restitution).
   */
  restitution(v: Float64Array, w: Float64Array, h: number, threshold: number, gravityStep: ArrayLike<number> | null): number {
    if (!this.anyElastic) return 0;
    const gx = gravityStep ? gravityStep[0] : 0, gy = gravityStep ? gravityStep[1] : 0, gz = gravityStep ? gravityStep[2] : 0;
    const pts = this.collisionPoint, target = this.collisionTarget, impulse = this.collisionImpulse;
    const MD = this.mdata, PD = this.pdata;
    const order = this.sweepOrder;
    for (let sweep = 0; sweep < COLLISION_SWEEPS; sweep++) {
      let collided = false;
      for (let i = 0; i < this.manifolds; i++) {
        const m = order === null ? i : order[i];
        const e0 = MSTRIDE * m;
        const e = MD[e0 + M_E];
        if (!(e > 0)) continue;
        const ng = MD[e0 + M_N] * gx + MD[e0 + M_N + 1] * gy + MD[e0 + M_N + 2] * gz;
        const gn = (MD[e0 + M_MB] > 0 ? ng : 0) - (MD[e0 + M_MA] > 0 ? ng : 0);
        let k = 0;
        for (let c = this.start[m]; c < this.start[m + 1] && k < MAX_COLLIDING; c++) {
          const vn = this.normalVelocity(c, v, w);
          const before = vn - gn;
          if (!(before < -threshold) || !(this.separation(c) + h * vn < 0)) continue;
          pts[k] = c;
          target[k] = -e * before + gn;
          impulse[k] = 0;
          k++;
        }
        if (k === 0) continue;
        collided = true;
        for (let it = 0; it < MANIFOLD_SWEEPS; it++) {
          let change = 0, size = 0;
          for (let i = 0; i < k; i++) {
            const c = pts[i];
            const vn = this.normalVelocity(c, v, w);
            const next = Math.max(0, impulse[i] + (target[i] - vn) / PD[PSTRIDE * c + P_KN]);
            const dP = next - impulse[i];
            if (dP !== 0) this.applyNormal(c, dP, v, w);
            impulse[i] = next;
            change = Math.max(change, Math.abs(dP));
            size = Math.max(size, next);
          }
          if (k === 1 || change <= 1e-12 * size) break;
        }
      }
      if (!collided) return sweep;
    }
    return COLLISION_SWEEPS;
  }
  private readonly collisionPoint = new Int32Array(MAX_COLLIDING);
  private readonly collisionTarget = new Float64Array(MAX_COLLIDING);
  private readonly collisionImpulse = new Float64Array(MAX_COLLIDING);

  /** J_n V of point c (relative normal velocity, > 0 separating): n·(v_B + ω_B × r_B − v_A − ω_A × r_A). */
  normalVelocity(c: number, v: Float64Array, w: Float64Array): number {
    const d = PSTRIDE * c, e = MSTRIDE * this.pointManifold[c], a = 3 * this.bodyA[c], b = 3 * this.bodyB[c];
    const PD = this.pdata, MD = this.mdata;
    const rax = PD[d + P_RA], ray = PD[d + P_RA + 1], raz = PD[d + P_RA + 2];
    const rbx = PD[d + P_RB], rby = PD[d + P_RB + 1], rbz = PD[d + P_RB + 2];
    const dvx = v[b] + (w[b + 1] * rbz - w[b + 2] * rby) - v[a] - (w[a + 1] * raz - w[a + 2] * ray);
    const dvy = v[b + 1] + (w[b + 2] * rbx - w[b] * rbz) - v[a + 1] - (w[a + 2] * rax - w[a] * raz);
    const dvz = v[b + 2] + (w[b] * rby - w[b + 1] * rbx) - v[a + 2] - (w[a] * ray - w[a + 1] * rax);
    return MD[e + M_N] * dvx + MD[e + M_N + 1] * dvy + MD[e + M_N + 2] * dvz;
  }

  /** The impulse P along point c's normal row: V_A −= M_A⁻¹ [n; r_A × n] P, V_B += M_B⁻¹ [n; r_B × n] P. */
  private applyNormal(c: number, P: number, v: Float64Array, w: Float64Array): void {
    const d = PSTRIDE * c, e = MSTRIDE * this.pointManifold[c];
    const PD = this.pdata, MD = this.mdata, I = this.invI;
    const px = P * MD[e + M_N], py = P * MD[e + M_N + 1], pz = P * MD[e + M_N + 2];
    for (let side = 0; side < 2; side++) {
      const inv = MD[e + (side === 0 ? M_MA : M_MB)];
      if (!(inv > 0)) continue;
      const sign = side === 0 ? -1 : 1;
      const o = 3 * (side === 0 ? this.bodyA[c] : this.bodyB[c]), j = 3 * o;
      const r = d + (side === 0 ? P_RA : P_RB);
      const tx = PD[r + 1] * pz - PD[r + 2] * py, ty = PD[r + 2] * px - PD[r] * pz, tz = PD[r] * py - PD[r + 1] * px;
      v[o] += sign * inv * px;
      v[o + 1] += sign * inv * py;
      v[o + 2] += sign * inv * pz;
      w[o] += sign * (I[j] * tx + I[j + 1] * ty + I[j + 2] * tz);
      w[o + 1] += sign * (I[j + 3] * tx + I[j + 4] * ty + I[j + 5] * tz);
      w[o + 2] += sign * (I[j + 6] * tx + I[j + 7] * ty + I[j + 8] * tz);
    }
  }

  /** store impulses: λ of every point back onto its manifold record (the next frame's warm start). */
  storeImpulses(store: ManifoldStore): void {
    const PD = this.pdata;
    for (let c = 0; c < this.count; c++) {
      const p = this.manifoldPoint[c];
      if (p < 0) continue;
      const d = PSTRIDE * c;
      store.normalImpulse[p] = PD[d + P_LN];
      store.tangentImpulse1[p] = PD[d + P_LT1];
      store.tangentImpulse2[p] = PD[d + P_LT2];
    }
  }

  private reserve(points: number, bodies: number): void {
    if (this.x0.length !== 3 * bodies) {
      this.x0 = new Float64Array(3 * bodies);
      this.q0 = new Float64Array(4 * bodies);
      this.dx = new Float64Array(3 * bodies);
      this.dtheta = new Float64Array(3 * bodies);
      this.invI = new Float64Array(9 * bodies);
    }
    if (points <= this.capacity) return;
    const cap = Math.max(points, 2 * this.capacity, 16);
    this.bodyA = new Int32Array(cap);
    this.bodyB = new Int32Array(cap);
    this.manifoldPoint = new Int32Array(cap);
    this.pointManifold = new Int32Array(cap);
    this.pdata = new Float64Array(PSTRIDE * cap);
    this.capacity = cap;
  }

  private growManifolds(needed: number): void {
    const cap = Math.max(needed, 2 * this.manifoldCapacity, 16);
    const grow = <T extends Int32Array | Float64Array>(old: T, fresh: T): T => {
      fresh.set(old as never);
      return fresh;
    };
    this.mBodyA = grow(this.mBodyA, new Int32Array(cap));
    this.mBodyB = grow(this.mBodyB, new Int32Array(cap));
    this.mdata = grow(this.mdata, new Float64Array(MSTRIDE * cap));
    this.start = grow(this.start, new Int32Array(cap + 1));
    this.manifoldCapacity = cap;
  }
}

/**
 * The manifolds grouped by their colour (gpu/colouring.ts colourJonesPlassmannCpu: the GPU
 * colouring's twin, bit for bit; fixed bodies never conflict), by index within a colour; the overflow set
 * (colour K) last.
 */
function colourOrderOf(bodyA: Int32Array, bodyB: Int32Array, count: number, inverseMass: Float64Array): Int32Array {
  const nb = inverseMass.length;
  const isStatic = Uint8Array.from(inverseMass, (x) => (x > 0 ? 0 : 1));
  const { colour } = colourJonesPlassmannCpu(bodyA, bodyB, count, isStatic, nb, { maxColours: CONTACT_MAX_COLOURS, rounds: CONTACT_COLOUR_ROUNDS });
  const order = Int32Array.from({ length: count }, (_, m) => m);
  order.sort((x, y) => colour[x] - colour[y] || x - y);
  return order;
}

/**
 * (S3) of rows/softness.ts for a frequency spring f (Hz), damping ratio ζ, over h, without allocating:
 * out[o] = biasRate, out[o + 1] = massScale, out[o + 2] = impulseScale (the manifold record's order).
 */
function frequencySpring(hertz: number, dampingRatio: number, h: number, out: Float64Array, o: number): void {
  const omega = 2 * Math.PI * hertz;
  const a1 = 2 * dampingRatio + h * omega;
  const a2 = h * omega * a1;
  out[o] = omega / a1;
  out[o + 1] = a2 / (1 + a2);
  out[o + 2] = 1 / (1 + a2);
}

/** The spring of a contact rule at unit effective mass (rows/softness.ts S3: massScale and biasRate do not depend on it). */
function springOf(spec: SoftnessSpec, h: number): Softness {
  if (spec.kind === 'compliance') throw new Error('contact softness is a frequency spring or a rigid Baumgarte rate, not a compliance');
  return softness(spec, h, 1);
}

/**
 * A = J M⁻¹ Jᵀ of point record d (its arms in PD) in its manifold's frame (n, t₁, t₂; record e of MD),
 * with each body's inverse mass and inertia scaled by sA, sB (1: the true masses; n_i: the split masses
 * of the Jacobi variant, contacts/jacobi-contact-solver.ts), into out[o ..): A_nn, A_n1, A_n2, then
 * A_tt⁻¹ row-major (4). Per body k with s_k m_k⁻¹ > 0:
 *   A_ij += s_k m_k⁻¹ δ_ij + s_k (r_k × d_i)ᵀ I_k⁻¹ (r_k × d_j)     (the directions are orthonormal;
 *                                                                  both rows of a body carry the same sign)
 * (with sA = sB = 1 the arithmetic is the same as without the factors: x · 1 = x exactly).
 */
export function pointMass(PD: Float64Array, d: number, MD: Float64Array, e: number, I: Float64Array, ja: number, jb: number, sA: number, sB: number, out: Float64Array, o: number): void {
  const mA = MD[e + M_MA], mB = MD[e + M_MB];
  const nx = MD[e + M_N], ny = MD[e + M_N + 1], nz = MD[e + M_N + 2];
  const t1x = MD[e + M_T1], t1y = MD[e + M_T1 + 1], t1z = MD[e + M_T1 + 2];
  const t2x = MD[e + M_T2], t2y = MD[e + M_T2 + 1], t2z = MD[e + M_T2 + 2];
  const lin = sA * mA + sB * mB;
  let kNN = lin, kN1 = 0, kN2 = 0, k11 = lin, k12 = 0, k22 = lin;
  for (let side = 0; side < 2; side++) {
    const inv = side === 0 ? mA : mB;
    if (inv <= 0) continue;
    const sc = side === 0 ? sA : sB;
    const r = d + (side === 0 ? P_RA : P_RB);
    const rx = PD[r], ry = PD[r + 1], rz = PD[r + 2];
    const j = side === 0 ? ja : jb;
    const i00 = I[j], i01 = I[j + 1], i02 = I[j + 2], i10 = I[j + 3], i11 = I[j + 4], i12 = I[j + 5], i20 = I[j + 6], i21 = I[j + 7], i22 = I[j + 8];
    // c_d = r × d
    const cnx = ry * nz - rz * ny, cny = rz * nx - rx * nz, cnz = rx * ny - ry * nx;
    const c1x = ry * t1z - rz * t1y, c1y = rz * t1x - rx * t1z, c1z = rx * t1y - ry * t1x;
    const c2x = ry * t2z - rz * t2y, c2y = rz * t2x - rx * t2z, c2z = rx * t2y - ry * t2x;
    // g_d = I⁻¹ c_d
    const gnx = i00 * cnx + i01 * cny + i02 * cnz, gny = i10 * cnx + i11 * cny + i12 * cnz, gnz = i20 * cnx + i21 * cny + i22 * cnz;
    const g1x = i00 * c1x + i01 * c1y + i02 * c1z, g1y = i10 * c1x + i11 * c1y + i12 * c1z, g1z = i20 * c1x + i21 * c1y + i22 * c1z;
    const g2x = i00 * c2x + i01 * c2y + i02 * c2z, g2y = i10 * c2x + i11 * c2y + i12 * c2z, g2z = i20 * c2x + i21 * c2y + i22 * c2z;
    kNN += sc * (cnx * gnx + cny * gny + cnz * gnz);
    kN1 += sc * (cnx * g1x + cny * g1y + cnz * g1z);
    kN2 += sc * (cnx * g2x + cny * g2y + cnz * g2z);
    k11 += sc * (c1x * g1x + c1y * g1y + c1z * g1z);
    k12 += sc * (c1x * g2x + c1y * g2y + c1z * g2z);
    k22 += sc * (c2x * g2x + c2y * g2y + c2z * g2z);
  }
  out[o] = kNN;
  out[o + 1] = kN1;
  out[o + 2] = kN2;
  const det = k11 * k22 - k12 * k12;
  out[o + 3] = k22 / det;
  out[o + 4] = -k12 / det;
  out[o + 5] = -k12 / det;
  out[o + 6] = k11 / det;
}
