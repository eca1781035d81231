/**
 * The row machinery every velocity-level block solver shares (jacobi-cpu, gs-cpu, and the
 * operator of global-cpu): the joints laid out as rows (rows.ts) by their constraint types,
 * evaluated each step, each block's A_bb = J_b M⁻¹ J_bᵀ (+ γ) inverted, and the projected block
 * update of the multipliers.
 *
 * Per step (stage 3 of the Jacobi text, generalised to rows):
 *   evaluate   C and J of every row at the current pose (the constraint types)
 *   prepare    per row: biasRate and γ from rows/softness.ts — a rigid equality row β/h (the
 *              Jacobi text's Baumgarte term, eq. 8); a one-sided row that is apart (C > 0) the
 *              speculative 1/h with γ = 0 (it may close the gap within the step, no further); a
 *              soft row (α > 0) the spring's 1/h and γ = α/h² (S2);
 *              per block: A_bb + diag(γ), inverted (rows.ts invertBlock)
 * Per iteration, for each block b (all from the same V in Jacobi; one after the other, each
 * seeing the last, in Gauss-Seidel):
 *   ρ_p  = J_p V + biasRate_p C_p + h γ_p λ_p                          (velocity units)
 *   Δλ_b = −h⁻¹ (A_bb + γ)⁻¹ ρ_b                                         (the Jacobi text's (37), rows' signs)
 *   λ_p  ← clamp(λ_p + Δλ_p, lower_p, upper_p)                          (projected: the one-pager's row solve)
 * and the residual ‖b − Aλ‖ it reports is h⁻¹ ρ over the rows, with a row at a bound whose ρ
 * pushes further out of bounds counted as 0 (complementarity holds there).
 *
 * Warm start follows the rows' keys: `layout` keeps λ of every row whose key the previous
 * layout had, and a new row starts at 0.
 */
import { RowSet, rowConnectivity, blockVelocity, pointBlockVelocity, gatherImpulse, invertBlock, blockDelassus, pointBlockDelassus, JACOBIAN_STRIDE, type RowConnectivity } from './rows.js';
import { constraintTypes } from './constraint-types.js';
import { MAX_ROWS_PER_CONSTRAINT } from './constraint-type.js';
import type { BodyPose, JointTable } from './joint-data.js';
import { softness, type Softness } from './softness.js';

export class RowBlockSolver {
  readonly rows = new RowSet();
  /** rows of constraint slot ic: rowStart[ic] .. rowStart[ic] + rowCount[ic] − 1 */
  rowStart = new Int32Array(0);
  rowCount = new Int32Array(0);
  /** blocks of constraint slot ic: constraintBlock[ic] .. constraintBlockEnd[ic] − 1 */
  constraintBlock = new Int32Array(0);
  constraintBlockEnd = new Int32Array(0);
  /**
   * first block of the k-th constraint of the layout order (constraintCount + 1 entries): the
   * constraints order[from .. to) are the blocks orderBlock[from] .. orderBlock[to] − 1
   */
  orderBlock = new Int32Array(1);
  conn: RowConnectivity = { start: new Int32Array(1), entry: new Int32Array(0) };
  /** A_bb⁻¹ of each block, row-major, at blockMatrixStart[b] */
  blockMatrix = new Float64Array(0);
  blockMatrixStart = new Int32Array(1);
  /** the joints' version (JointSet.version) the rows were laid out for */
  laidOutVersion = -1;
  private scratch = new Float64Array(0);

  /**
   * @param joints the compiled joints (a JointSet where they change between steps)
   * @param inverseMass per body (fixed bodies 0: they get no connectivity entries)
   * @param defaultCompliance α of the joints that set none (the solver's --compliance)
   */
  constructor(
    readonly joints: JointTable & { version?: number },
    readonly bodyCount: number,
    readonly inverseMass: Float64Array,
    readonly defaultCompliance: number,
  ) {
    this.layout();
  }

  /**
   * (Re)builds the row set from the joints, in `order` (default: slot order; a Gauss-Seidel solver
   * passes its colour order so each colour is a contiguous run of blocks): each constraint's blocks,
   * keys id · MAX_ROWS + k (id: the joint's stable id, JointTable.id, or its slot), λ carried over by
   * key from the previous layout; then the body → row CSR and the block matrices' offsets. Call again
   * whenever the constraint set changes.
   */
  layout(order?: Int32Array): void {
    const rows = this.rows;
    const j = this.joints;
    const previous = new Map<number, number>();
    for (let r = 0; r < rows.count; r++) if (rows.lambda[r] !== 0) previous.set(rows.key[r], rows.lambda[r]);
    rows.clear();
    const nc = j.constraintCount;
    this.rowStart = new Int32Array(nc);
    this.rowCount = new Int32Array(nc);
    this.constraintBlock = new Int32Array(nc);
    this.constraintBlockEnd = new Int32Array(nc);
    this.orderBlock = new Int32Array(nc + 1);
    for (let k = 0; k < nc; k++) {
      const ic = order ? order[k] : k;
      this.rowStart[ic] = rows.count;
      this.constraintBlock[ic] = rows.blockCount;
      this.orderBlock[k] = rows.blockCount;
      const own = j.compliance[ic];
      const alpha = Number.isNaN(own) ? this.defaultCompliance : own;
      constraintTypes[j.kind[ic]].layout(j, ic, rows, alpha, (j.id ? j.id[ic] : ic) * MAX_ROWS_PER_CONSTRAINT);
      this.rowCount[ic] = rows.count - this.rowStart[ic];
      this.constraintBlockEnd[ic] = rows.blockCount;
    }
    this.orderBlock[nc] = rows.blockCount;
    for (let r = 0; r < rows.count; r++) rows.lambda[r] = previous.get(rows.key[r]) ?? 0;
    this.conn = rowConnectivity(rows, this.bodyCount, this.inverseMass);
    this.blockMatrixStart = new Int32Array(rows.blockCount + 1);
    let largest = 0;
    for (let b = 0; b < rows.blockCount; b++) {
      const n = rows.blockStart[b + 1] - rows.blockStart[b];
      largest = Math.max(largest, n);
      this.blockMatrixStart[b + 1] = this.blockMatrixStart[b] + n * n;
    }
    this.blockMatrix = new Float64Array(this.blockMatrixStart[rows.blockCount]);
    this.scratch = new Float64Array(2 * largest * largest + largest);
    this.laidOutVersion = j.version ?? 0;
  }

  /** Whether the joints changed since the last layout (a JointSet's version moved on). */
  get stale(): boolean {
    return (this.joints.version ?? 0) !== this.laidOutVersion;
  }

  /** C and J of constraint ic's rows at `pose` (its type's evaluate; XPBD evaluates one constraint at a time). */
  evaluateConstraint(ic: number, pose: BodyPose): void {
    constraintTypes[this.joints.kind[ic]].evaluate(this.joints, ic, pose, this.rows, this.rowStart[ic]);
  }

  /** C and J of every row at `pose` (the constraint types' evaluate). */
  evaluate(pose: BodyPose): void {
    const nc = this.joints.constraintCount;
    for (let ic = 0; ic < nc; ic++) constraintTypes[this.joints.kind[ic]].evaluate(this.joints, ic, pose, this.rows, this.rowStart[ic]);
  }

  /**
   * Per row biasRate and γ (header) and the bias biasRate · C (velocity units), per block
   * (A_bb + diag γ)⁻¹ (a rigid point joint's A from its lever arms: pointBlockDelassus). `beta` in units of 1/h (the solvers' --beta), `inverseInertia` the world-frame I⁻¹
   * of stage 1 (9 per body).
   */
  prepare(h: number, beta: number, inverseInertia: Float64Array): void {
    const rows = this.rows;
    const M = this.blockMatrix;
    if (this.bias.length < rows.count) this.bias = new Float64Array(rows.capacity);
    // rows/softness.ts for each distinct compliance (the rows of a joint share theirs)
    let lastAlpha = NaN;
    let soft: Softness = softness({ kind: 'rigid', beta }, h, 0);
    const rigid = soft;
    for (let b = 0; b < rows.blockCount; b++) {
      const r0 = rows.blockStart[b], r1 = rows.blockStart[b + 1], n = r1 - r0;
      const o = this.blockMatrixStart[b];
      if (rows.pointBlock[b] === 1) {
        // a rigid point joint: rigid equality rows (β/h, γ = 0), A from its lever arms
        pointBlockDelassus(rows, b, this.inverseMass, inverseInertia, M, o);
        for (let p = r0; p < r1; p++) {
          rows.biasRate[p] = rigid.biasRate;
          rows.gamma[p] = 0;
          this.bias[p] = rigid.biasRate * rows.error[p];
        }
        invertBlock(M, o, 3, this.scratch);
        continue;
      }
      blockDelassus(rows, r0, r1, this.inverseMass, inverseInertia, M, o);
      for (let p = r0; p < r1; p++) {
        const alpha = rows.compliance[p];
        const oneSided = rows.lower[p] === 0 && rows.upper[p] === Infinity;
        if (oneSided && rows.error[p] > 0) {
          // apart: the speculative row, no spring
          rows.biasRate[p] = 1 / h;
          rows.gamma[p] = 0;
        } else {
          if (alpha !== lastAlpha) {
            soft = alpha > 0 ? softness({ kind: 'compliance', compliance: alpha, damping: 0 }, h, 0) : rigid;
            lastAlpha = alpha;
          }
          rows.biasRate[p] = soft.biasRate;
          rows.gamma[p] = soft.gamma;
        }
        this.bias[p] = rows.biasRate[p] * rows.error[p];
        M[o + (p - r0) * (n + 1)] += rows.gamma[p];
      }
      invertBlock(M, o, n, this.scratch);
    }
  }

  /** per row: biasRate · C, m/s (or rad/s) */
  private bias = new Float64Array(0);

  /**
   * The projected block update (header) for blocks from .. to−1, V = (v, ω) + (Δv, Δω). Returns the
   * sum of the squared projected ρ before the update (h² ‖b − Aλ‖² over those rows); with apply =
   * false only that sum is computed. With immediate = true (Gauss-Seidel) each block's actual Δλ goes
   * at once into Δv, Δω of its two bodies (R1), so the next block sees it. `perRow`, when given, gets
   * each row's squared projected ρ.
   */
  solveBlocks(
    h: number,
    v: Float64Array,
    w: Float64Array,
    dv: Float64Array,
    dw: Float64Array,
    inverseInertia: Float64Array,
    apply = true,
    from = 0,
    to = this.rows.blockCount,
    immediate = false,
    perRow: Float64Array | null = null,
  ): number {
    const rows = this.rows;
    const { lambda: lam, gamma, lower, upper, blockStart } = rows;
    const bias = this.bias;
    const M = this.blockMatrix;
    const rho = this.scratch;
    const invH = 1 / h;
    const invMass = this.inverseMass;
    let squares = 0;
    const point = rows.pointBlock, matrixStart = this.blockMatrixStart;
    for (let b = from; b < to; b++) {
      const r0 = blockStart[b];
      const o = matrixStart[b];
      if (point[b] === 1 && perRow === null) {
        // a rigid point joint (the Jacobi text's 3×3 block): ρ = J V + β C, Δλ = −h⁻¹ A⁻¹ ρ, no bounds
        pointBlockVelocity(rows, b, v, w, dv, dw, rho, bias);
        const p0 = rho[0], p1 = rho[1], p2 = rho[2];
        squares += p0 * p0 + p1 * p1 + p2 * p2;
        if (!apply) continue;
        const l0 = -invH * (M[o] * p0 + M[o + 1] * p1 + M[o + 2] * p2);
        const l1 = -invH * (M[o + 3] * p0 + M[o + 4] * p1 + M[o + 5] * p2);
        const l2 = -invH * (M[o + 6] * p0 + M[o + 7] * p1 + M[o + 8] * p2);
        lam[r0] += l0;
        lam[r0 + 1] += l1;
        lam[r0 + 2] += l2;
        if (immediate) applyPointImpulse(rows, b, l0, l1, l2, h, invMass, inverseInertia, dv, dw);
        continue;
      }
      const r1 = blockStart[b + 1], n = r1 - r0;
      blockVelocity(rows, b, v, w, dv, dw, rho, bias);
      for (let p = r0; p < r1; p++) {
        const r = rho[p - r0] + h * gamma[p] * lam[p];
        rho[p - r0] = r;
        // projected residual: 0 where λ sits at a bound and ρ pushes it further out (Δλ ∝ −ρ)
        const projected = (lam[p] <= lower[p] && r > 0) || (lam[p] >= upper[p] && r < 0) ? 0 : r * r;
        squares += projected;
        if (perRow) perRow[p] = projected;
      }
      if (!apply) continue;
      for (let p = 0; p < n; p++) {
        let s = 0;
        for (let q = 0; q < n; q++) s += M[o + p * n + q] * rho[q];
        const row = r0 + p;
        const old = lam[row];
        let next = old - invH * s;
        if (next < lower[row]) next = lower[row];
        else if (next > upper[row]) next = upper[row];
        lam[row] = next;
        if (immediate) applyImpulse(rows, row, h * (next - old), invMass, inverseInertia, dv, dw);
      }
    }
    return squares;
  }

  /** ΔV = s M⁻¹ Jᵀ λ per body (rows.ts gatherImpulse); update_velocities is s = h. */
  gather(scale: number, inverseInertia: Float64Array, outLin: Float64Array, outAng: Float64Array, lambda: Float64Array = this.rows.lambda): void {
    gatherImpulse(this.rows, this.conn, lambda, scale, this.inverseMass, inverseInertia, outLin, outAng);
  }

  /** Rows of constraint slot ic, [first, end). */
  rowsOf(ic: number): [number, number] {
    return [this.rowStart[ic], this.rowStart[ic] + this.rowCount[ic]];
  }
}

/**
 * (R1) for a rigid point joint's block, Δλ = (l0, l1, l2) (the same as the Jacobi text's Δλ: point.ts),
 * from the lever arms, in the arithmetic gs-cpu always had: J_A = (−I, −[a]×), J_B = (I, [b]×), so
 * body A (σ = −h) and B (σ = +h) take
 *   Δv += σ m⁻¹ l,   Δω += σ I⁻¹ (r × l),   r = a on A, b on B.
 */
function applyPointImpulse(rows: RowSet, block: number, l0: number, l1: number, l2: number, h: number, invMass: Float64Array, inverseInertia: Float64Array, dv: Float64Array, dw: Float64Array): void {
  const r0 = rows.blockStart[block];
  const arm = rows.blockArm, ro = 6 * block;
  const Ii = inverseInertia;
  for (let side = 0; side < 2; side++) {
    const ib = side === 0 ? rows.bodyA[r0] : rows.bodyB[r0];
    if (invMass[ib] === 0) continue; // fixed: nothing moves it
    const o = 3 * ib;
    const sh = side === 0 ? -h : h;
    const sm = sh * invMass[ib];
    dv[o] += sm * l0;
    dv[o + 1] += sm * l1;
    dv[o + 2] += sm * l2;
    const rx = arm[ro + 3 * side], ry = arm[ro + 3 * side + 1], rz = arm[ro + 3 * side + 2];
    const tx = ry * l2 - rz * l1, ty = rz * l0 - rx * l2, tz = rx * l1 - ry * l0; // r × l
    const io = 9 * ib;
    dw[o] += sh * (Ii[io] * tx + Ii[io + 1] * ty + Ii[io + 2] * tz);
    dw[o + 1] += sh * (Ii[io + 3] * tx + Ii[io + 4] * ty + Ii[io + 5] * tz);
    dw[o + 2] += sh * (Ii[io + 6] * tx + Ii[io + 7] * ty + Ii[io + 8] * tz);
  }
}

/** (R1) for one row's impulse P = h Δλ: Δv_A += m_A⁻¹ J_vA P, Δω_A += I_A⁻¹ J_ωA P, and the same for B. */
function applyImpulse(rows: RowSet, r: number, impulse: number, invMass: Float64Array, inverseInertia: Float64Array, dv: Float64Array, dw: Float64Array): void {
  if (impulse === 0) return;
  const J = rows.jacobian;
  for (let side = 0; side < 2; side++) {
    const body = side === 0 ? rows.bodyA[r] : rows.bodyB[r];
    if (invMass[body] === 0) continue;
    const j = JACOBIAN_STRIDE * r + 6 * side;
    const o = 3 * body;
    const sm = impulse * invMass[body];
    dv[o] += sm * J[j];
    dv[o + 1] += sm * J[j + 1];
    dv[o + 2] += sm * J[j + 2];
    const tx = impulse * J[j + 3], ty = impulse * J[j + 4], tz = impulse * J[j + 5];
    const io = 9 * body;
    const I = inverseInertia;
    dw[o] += I[io] * tx + I[io + 1] * ty + I[io + 2] * tz;
    dw[o + 1] += I[io + 3] * tx + I[io + 4] * ty + I[io + 5] * tz;
    dw[o + 2] += I[io + 6] * tx + I[io + 7] * ty + I[io + 8] * tz;
  }
}
