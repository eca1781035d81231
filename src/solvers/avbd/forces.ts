/**
 * AVBD's constraints ("forces" in the paper and its demos: Giles, Diaz & Yuksel, Augmented Vertex
 * Block Descent, SIGGRAPH 2025), as rows the per-body solve reads through one interface.
 *
 * A constraint set (joints, contacts) owns items; item k joins bodies itemA[k], itemB[k] and owns
 * rows itemFirst[k] .. itemFirst[k] + itemRows[k] of the shared row store. What a set supplies,
 * per item, when asked (`evaluate`), at the pose the bodies have now:
 *   C_r            the row's constraint value (m, or rad on an angular row)
 *   J_r            its gradient with respect to (x_A, θ_A, x_B, θ_B), 12 numbers, θ a world-frame
 *                  rotation vector (the rows' J: rows/rows.ts R2, J = ∂C/∂(x, θ))
 *   curvature_r,s  the lumped geometric stiffness of the row on side s (0: A, 1: B) per unit force:
 *                  §3.5 replaces the Hessian ∂²C/∂θ² by the diagonal of its column norms, scaled by
 *                  |f|; a set gives one number per side for the three angular diagonal entries
 * and, once per frame (`prepare`), the rows' force bounds [fmin, fmax], stiffness (∞: hard) and β.
 * Nothing else: the solver (cpu.ts) does the rest by the same code for every set, so a new kind of
 * constraint is a new set, not a branch in the solver.
 *
 * Sign convention (the paper's): the energy of a row is ½ k C² + λ C, its force f = clamp(k C + λ,
 * fmin, fmax) (§3.2), and the body's gradient gets + Jᵀ f (eq. 13). The rows of rows/ bound their
 * multiplier the other way round (λ_rows ≥ 0 pushes C up: rows.ts), so a row bounded [lo, hi] there
 * is bounded [−hi, −lo] here: a one-sided row C ≥ 0 has f ∈ (−∞, 0].
 *
 * A friction pair (two tangent rows r, r + 1 whose force is held in a disc) is marked disc[r] = 1 (2 while it slides),
 * with its μ and normal row: the disc's radius is μ |F_n|, F_n the force the normal row applies now
 * (in the primal its stamped force, in the dual its new λ); the solver clamps the pair together
 * (isotropic Coulomb friction) and gives it one penalty.
 */
import { RowSet, JACOBIAN_STRIDE } from '../../rows/rows.js';
import { constraintTypes } from '../../rows/constraint-types.js';
import { leverArms } from '../../rows/point.js';
import type { JointSet } from '../../rows/joint-set.js';
import type { BodyPose } from '../../model/joint-data.js';

/** The rows every set writes into (structure of arrays, f64, grown by doubling). */
export class AvbdRows {
  count = 0;
  capacity = 0;
  /** C(x) at the last evaluation */
  C = new Float64Array(0);
  /** J at the last evaluation: J_vA, J_ωA, J_vB, J_ωB (12 per row) */
  J = new Float64Array(0);
  /** geometric-stiffness scale per side (2 per row: A, B), per unit |f| */
  curvature = new Float64Array(0);
  /** the part of C(x⁻) at the frame's start that is a violation (what α keeps: eq. 18) */
  C0 = new Float64Array(0);
  fmin = new Float64Array(0);
  fmax = new Float64Array(0);
  /** dual variable λ (eq. 11), penalty k (eq. 16), material stiffness (∞: a hard row), β of the row */
  lambda = new Float64Array(0);
  penalty = new Float64Array(0);
  stiffness = new Float64Array(0);
  beta = new Float64Array(0);
  /** the row's greatest penalty this frame (eq. 16's cap: k_max, or k̂_max s in the scale-free schedule, and the material stiffness) */
  kmax = new Float64Array(0);
  /** at the first row of a friction pair (rows r, r + 1 share the disc |F| ≤ μ |F_n|): 1 sticking at the frame's start, 2 sliding; 0 elsewhere */
  disc = new Uint8Array(0);
  /** a friction pair's μ and its normal row (whose force F_n sizes the disc), at the pair's first row */
  mu = new Float64Array(0);
  normalRow = new Int32Array(0);
  /** the force each row applied at its last primal stamp (the disc reads its normal row's) */
  force = new Float64Array(0);

  reserve(n: number): void {
    if (n <= this.capacity) return;
    const cap = Math.max(n, 2 * this.capacity, 16), used = this.count;
    const g = <T extends Float64Array | Uint8Array>(old: T, fresh: T, k: number): T => {
      (fresh as Float64Array).set((old as Float64Array).subarray(0, k * used));
      return fresh;
    };
    this.C = g(this.C, new Float64Array(cap), 1);
    this.J = g(this.J, new Float64Array(JACOBIAN_STRIDE * cap), JACOBIAN_STRIDE);
    this.curvature = g(this.curvature, new Float64Array(2 * cap), 2);
    this.C0 = g(this.C0, new Float64Array(cap), 1);
    this.fmin = g(this.fmin, new Float64Array(cap), 1);
    this.fmax = g(this.fmax, new Float64Array(cap), 1);
    this.lambda = g(this.lambda, new Float64Array(cap), 1);
    this.penalty = g(this.penalty, new Float64Array(cap), 1);
    this.stiffness = g(this.stiffness, new Float64Array(cap), 1);
    this.beta = g(this.beta, new Float64Array(cap), 1);
    this.kmax = g(this.kmax, new Float64Array(cap), 1);
    this.disc = g(this.disc, new Uint8Array(cap), 1);
    this.mu = g(this.mu, new Float64Array(cap), 1);
    const normalRow = new Int32Array(cap);
    normalRow.set(this.normalRow.subarray(0, used));
    this.normalRow = normalRow;
    this.force = g(this.force, new Float64Array(cap), 1);
    this.capacity = cap;
  }
}

/** What a constraint set gives the solver (header). */
export interface AvbdConstraintSet {
  readonly name: string;
  itemCount: number;
  itemA: Int32Array;
  itemB: Int32Array;
  itemFirst: Int32Array;
  itemRows: Int32Array;
  /** C, J and curvature of item k's rows at `pose` into `rows` (reads nothing else but what bodyMoved kept) */
  evaluate(k: number, pose: BodyPose, rows: AvbdRows): void;
  /** optional: body i has moved to its pose in `pose` (the solver calls it after every move) */
  bodyMoved?(i: number, pose: BodyPose): void;
}

/** The solver's β per kind of row (3-D demo: β_lin for metres, β_ang for radians). */
export interface RowBetas {
  betaLinear: number;
  betaAngular: number;
}

/**
 * The joints of the row core (rows/: point, distance with its rope and strut forms, hinge with its
 * limits, fixed) as an AVBD set: each joint is laid out by its ConstraintType (constraint-type.ts)
 * into a RowSet once per topology change, and `evaluate` calls that type's evaluate, C and J of its
 * rows, then copies them into the AVBD rows. The bounds come from the layout (mapped to AVBD's sign,
 * header); the stiffness from the joint's compliance α (1/α, ∞ when α = 0).
 *
 * Curvature (§3.5), per unit force: a linear row's C moves with the body's anchor a = R r, whose
 * second derivative in the rotation is of size |a| (for C = e·(R r): ∂²C/∂θ² = ½(e aᵀ + a eᵀ) −
 * (e·a) I, columns of norm ≤ 1.5 |a|), so |a| of that side; an angular row's C is a product of unit
 * vectors turning with the bodies, its second derivative of size 1, so 1.
 */
export class JointForces implements AvbdConstraintSet {
  readonly name = 'joints';
  itemCount = 0;
  itemA = new Int32Array(0);
  itemB = new Int32Array(0);
  itemFirst = new Int32Array(0);
  itemRows = new Int32Array(0);
  /** the row core's rows, one block list per joint, in the joints' order (evaluate's scratch) */
  readonly rowSet = new RowSet();
  /** the row core's first row of each joint in rowSet */
  private coreFirst = new Int32Array(0);
  private readonly arm = new Float64Array(6);

  constructor(private readonly joints: JointSet) {}

  /**
   * Lays the joints out at rows `offset` .. of `rows` (λ 0, penalty 0: the warm start raises it to
   * its minimum), with their bounds, stiffness and β; returns the row count.
   */
  layout(rows: AvbdRows, offset: number, defaultCompliance: number, betas: RowBetas, pose: BodyPose): number {
    const j = this.joints, n = j.constraintCount;
    this.itemCount = n;
    if (this.itemA.length < n) {
      this.itemA = new Int32Array(n);
      this.itemB = new Int32Array(n);
      this.itemFirst = new Int32Array(n);
      this.itemRows = new Int32Array(n);
      this.coreFirst = new Int32Array(n);
    }
    const rs = this.rowSet;
    rs.clear();
    rs.pointJacobian = true;
    for (let ic = 0; ic < n; ic++) {
      const alpha = Number.isNaN(j.compliance[ic]) ? defaultCompliance : j.compliance[ic];
      this.coreFirst[ic] = rs.count;
      constraintTypes[j.kind[ic]].layout(j, ic, rs, alpha, 8 * ic);
      this.itemA[ic] = j.ib0[ic];
      this.itemB[ic] = j.ib1[ic];
      this.itemFirst[ic] = offset + this.coreFirst[ic];
      this.itemRows[ic] = rs.count - this.coreFirst[ic];
    }
    rows.reserve(offset + rs.count);
    for (let r = 0; r < rs.count; r++) {
      const o = offset + r;
      rows.fmin[o] = -rs.upper[r];
      rows.fmax[o] = -rs.lower[r];
      rows.stiffness[o] = rs.compliance[r] > 0 ? 1 / rs.compliance[r] : Infinity;
      rows.lambda[o] = 0;
      rows.penalty[o] = 0;
      rows.disc[o] = 0;
    }
    // β by the row's units: evaluate once to learn which rows are angular
    for (let ic = 0; ic < n; ic++) constraintTypes[j.kind[ic]].evaluate(j, ic, pose, rs, this.coreFirst[ic]);
    for (let r = 0; r < rs.count; r++) rows.beta[offset + r] = rs.angular[r] ? betas.betaAngular : betas.betaLinear;
    return rs.count;
  }

  evaluate(k: number, pose: BodyPose, rows: AvbdRows): void {
    const j = this.joints, rs = this.rowSet;
    const first = this.coreFirst[k], count = this.itemRows[k], out = this.itemFirst[k];
    constraintTypes[j.kind[k]].evaluate(j, k, pose, rs, first);
    leverArms(j, k, pose, this.arm, 0);
    const a = Math.sqrt(this.arm[0] ** 2 + this.arm[1] ** 2 + this.arm[2] ** 2);
    const b = Math.sqrt(this.arm[3] ** 2 + this.arm[4] ** 2 + this.arm[5] ** 2);
    const J = rows.J, Jc = rs.jacobian;
    for (let i = 0; i < count; i++) {
      const r = first + i, o = out + i;
      rows.C[o] = rs.error[r];
      const src = JACOBIAN_STRIDE * r, dst = JACOBIAN_STRIDE * o;
      for (let e = 0; e < JACOBIAN_STRIDE; e++) J[dst + e] = Jc[src + e];
      const angular = rs.angular[r] === 1;
      rows.curvature[2 * o] = angular ? 1 : a;
      rows.curvature[2 * o + 1] = angular ? 1 : b;
    }
  }
}
