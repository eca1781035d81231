/**
 * Constraint rows: the one representation every velocity-level solver works on
 * (shared/seeds/constraint-rows-one-page.md, "Row Anatomy").
 *
 * A row r joins body A = bodyA[r] and body B = bodyB[r] and supplies
 *   the Jacobian pieces   J_vA, J_ωA, J_vB, J_ωB   (jacobian[12r .. 12r+12), in that order)
 *   the position error    C (m or rad; `error`, `angular` says which)
 *   the bounds            λ ∈ [lower, upper]  (±∞: an equality; [0, ∞): a one-sided row C ≥ 0)
 *   its compliance        α ≥ 0 (0: rigid; rows/softness.ts turns it into γ and a bias rate)
 *   a key                 an integer that names the row across steps (warm start follows it)
 * and the solver keeps its multiplier λ (`lambda`).
 *
 * Sign convention (the one-pager's): the row applies the impulse +h Jᵀλ, so over a step
 *   ΔV_A = h m_A⁻¹ J_vAᵀ λ,  Δω_A = h I_A⁻¹ J_ωAᵀ λ,  and the same for B,            (R1)
 * and the relative velocity along the row is Ċ = J V = J_vA·v_A + J_ωA·ω_A + J_vB·v_B + J_ωB·ω_B.  (R2)
 * J is the gradient of C, so λ ≥ 0 pushes C up: a one-sided row C ≥ 0 has bounds [0, ∞).
 * λ is a force (N, or N·m on an angular row): hλ is the impulse.
 *
 * Rows come in blocks of consecutive rows (`blockStart`): a block solver (jacobi, gs) solves a
 * block's rows together as one small dense system (a point joint is one 3-row block, as in the
 * Jacobi text; a hinge's 5 equality rows one block); a bounded row is always a block of its own,
 * so projecting λ onto [lower, upper] after the solve is exact for that block.
 *
 * Storage: structure of arrays, f64, sized by capacity and grown by doubling (`reserve`), so a
 * row set can change between steps (contacts come and go) without reallocating every step.
 *
 * The two products every velocity-level solver needs are written here once:
 *   blockVelocity J_r V  (R2), for the rows of one block (or one row);
 *   gatherImpulse per body i:  out_i = s M_i⁻¹ Σ_{r ∋ i} J_r,iᵀ λ_r  (R1), through the body → row
 *                 CSR (`RowConnectivity`): one pass, each body written by one iteration only.
 * The WGSL twins are in rows.wgsl.ts.
 */

/** RowSet.contactKind: a contact's normal block, and its friction block. */
export const CONTACT_NORMAL = 1;
export const CONTACT_FRICTION = 2;

/** Entries of the Jacobian per row: J_vA (3), J_ωA (3), J_vB (3), J_ωB (3). */
export const JACOBIAN_STRIDE = 12;

export class RowSet {
  /** rows in use */
  count = 0;
  /** blocks in use (blockStart has blockCount + 1 entries in use) */
  blockCount = 0;
  capacity = 0;
  blockCapacity = 0;
  bodyA = new Int32Array(0);
  bodyB = new Int32Array(0);
  jacobian = new Float64Array(0);
  error = new Float64Array(0);
  lower = new Float64Array(0);
  upper = new Float64Array(0);
  compliance = new Float64Array(0);
  key = new Float64Array(0);
  lambda = new Float64Array(0);
  /** 1 where the row is angular (C in rad), 0 where it is linear (C in m) */
  angular = new Uint8Array(0);
  /** the constraint the row belongs to (index into the solver's constraint list), −1 if none */
  owner = new Int32Array(0);
  /** per step (solver-filled): the bias rate (1/s) and γ of rows/softness.ts */
  biasRate = new Float64Array(0);
  gamma = new Float64Array(0);
  /** first row of each block; blockStart[blockCount] = count */
  blockStart = new Int32Array(1);
  /**
   * per block: 1 for a rigid point joint's block, whose three rows are J = (−e_k, −(a × e_k), e_k,
   * b × e_k) (point.ts) with the lever arms a, b in blockArm[6b .. 6b+6): the products of J·V, the
   * gather and the block's A read those 6 numbers instead of the 36 of J (the Jacobi text's own
   * form, the same arithmetic it always had); J is still written for the other readers
   */
  pointBlock = new Uint8Array(0);
  blockArm = new Float64Array(0);
  /**
   * per block: what a contact's block is (rows/contact.ts): CONTACT_NORMAL (one row, λ ∈ [0, ∞)),
   * CONTACT_FRICTION (two tangent rows whose λ_t = (λ₁, λ₂) is held in the disc |λ_t| ≤ μ λ_n of
   * its normal row: bounds tied to another row's λ), or 0 (a joint's block, plain bounds)
   */
  contactKind = new Uint8Array(0);
  /** per friction block: μ (dynamic, μ_d), static μ_s, and the normal row whose λ_n bounds it */
  blockMu = new Float64Array(0);
  blockMuStatic = new Float64Array(0);
  blockNormalRow = new Int32Array(0);
  /** the block of each row */
  rowBlock = new Int32Array(0);
  /**
   * whether a rigid point joint's rows get J written too (true: for readers that walk J, such as a
   * global solve's assembly or XPBD); jacobi and gs read only the lever arms of those blocks
   */
  pointJacobian = true;

  constructor(rows = 0, blocks = 0) {
    this.reserve(rows, blocks);
  }

  /** Grows the arrays (by doubling, keeping the rows in use) so `rows` rows and `blocks` blocks fit. */
  reserve(rows: number, blocks: number): void {
    if (rows > this.capacity) {
      const cap = Math.max(rows, 2 * this.capacity, 4);
      const n = this.count;
      this.bodyA = grow(this.bodyA, new Int32Array(cap), n);
      this.bodyB = grow(this.bodyB, new Int32Array(cap), n);
      this.jacobian = grow(this.jacobian, new Float64Array(JACOBIAN_STRIDE * cap), JACOBIAN_STRIDE * n);
      this.error = grow(this.error, new Float64Array(cap), n);
      this.lower = grow(this.lower, new Float64Array(cap), n);
      this.upper = grow(this.upper, new Float64Array(cap), n);
      this.compliance = grow(this.compliance, new Float64Array(cap), n);
      this.key = grow(this.key, new Float64Array(cap), n);
      this.lambda = grow(this.lambda, new Float64Array(cap), n);
      this.angular = grow(this.angular, new Uint8Array(cap), n);
      this.owner = grow(this.owner, new Int32Array(cap), n);
      this.biasRate = grow(this.biasRate, new Float64Array(cap), n);
      this.gamma = grow(this.gamma, new Float64Array(cap), n);
      this.rowBlock = grow(this.rowBlock, new Int32Array(cap), n);
      this.capacity = cap;
    }
    if (blocks > this.blockCapacity) {
      const cap = Math.max(blocks, 2 * this.blockCapacity, 4);
      this.blockStart = grow(this.blockStart, new Int32Array(cap + 1), this.blockCount + 1);
      this.pointBlock = grow(this.pointBlock, new Uint8Array(cap), this.blockCount);
      this.blockArm = grow(this.blockArm, new Float64Array(6 * cap), 6 * this.blockCount);
      this.contactKind = grow(this.contactKind, new Uint8Array(cap), this.blockCount);
      this.blockMu = grow(this.blockMu, new Float64Array(cap), this.blockCount);
      this.blockMuStatic = grow(this.blockMuStatic, new Float64Array(cap), this.blockCount);
      this.blockNormalRow = grow(this.blockNormalRow, new Int32Array(cap), this.blockCount);
      this.blockCapacity = cap;
    }
  }

  /** Empties the set (capacity kept). */
  clear(): void {
    this.truncate(0, 0);
  }

  /** Keeps the first `blocks` blocks (and their rows) and drops the rest (capacity kept). */
  truncate(rows: number, blocks: number): void {
    this.count = rows;
    this.blockCount = blocks;
    this.blockStart[blocks] = rows;
  }

  /**
   * Appends a block of `rows` rows between bodies a and b with bounds [lower, upper] each, owned
   * by constraint `owner`, with keys key0, key0 + 1, …; returns its first row. J and C are left
   * for the constraint type to fill (evaluate); λ starts at 0. `point`: a rigid point joint's
   * block (pointBlock; its evaluate must also write blockArm).
   */
  addBlock(rows: number, a: number, b: number, lower: number, upper: number, compliance: number, owner: number, key0: number, point = false): number {
    this.reserve(this.count + rows, this.blockCount + 1);
    const first = this.count;
    this.pointBlock[this.blockCount] = point ? 1 : 0;
    this.contactKind[this.blockCount] = 0;
    for (let r = first; r < first + rows; r++) {
      this.rowBlock[r] = this.blockCount;
      this.bodyA[r] = a;
      this.bodyB[r] = b;
      this.lower[r] = lower;
      this.upper[r] = upper;
      this.compliance[r] = compliance;
      this.owner[r] = owner;
      this.key[r] = key0 + (r - first);
      this.lambda[r] = 0;
      this.angular[r] = 0;
      this.error[r] = 0;
      this.jacobian.fill(0, JACOBIAN_STRIDE * r, JACOBIAN_STRIDE * (r + 1));
    }
    this.count += rows;
    this.blockCount++;
    this.blockStart[this.blockCount] = this.count;
    return first;
  }

  /** The most rows any block has (the size of a block solver's scratch). */
  largestBlock(): number {
    let m = 0;
    for (let k = 0; k < this.blockCount; k++) m = Math.max(m, this.blockStart[k + 1] - this.blockStart[k]);
    return m;
  }
}

function grow<T extends Int32Array | Float64Array | Uint8Array>(old: T, fresh: T, used: number): T {
  (fresh as Float64Array).set((old as Float64Array).subarray(0, used));
  return fresh;
}

/**
 * blockVelocity of a rigid point joint's block (RowSet.pointBlock), from its lever arms (see there),
 * plus bias[r] (pass an array of zeros for none). Kept small so that the solvers' sweep inlines it.
 */
export function pointBlockVelocity(
  rows: RowSet,
  block: number,
  v: Float64Array,
  w: Float64Array,
  dv: Float64Array,
  dw: Float64Array,
  out: Float64Array,
  bias: Float64Array,
): void {
  const r0 = rows.blockStart[block];
  const a = 3 * rows.bodyA[r0], b = 3 * rows.bodyB[r0];
  const arm = rows.blockArm, ro = 6 * block;
  const ax = arm[ro], ay = arm[ro + 1], az = arm[ro + 2];
  const bx = arm[ro + 3], by = arm[ro + 4], bz = arm[ro + 5];
  const w0x = w[a] + dw[a], w0y = w[a + 1] + dw[a + 1], w0z = w[a + 2] + dw[a + 2];
  const w1x = w[b] + dw[b], w1y = w[b + 1] + dw[b + 1], w1z = w[b + 2] + dw[b + 2];
  out[0] = -(v[a] + dv[a] - v[b] - dv[b] + -bias[r0] + (w0y * az - w0z * ay - w1y * bz + w1z * by));
  out[1] = -(v[a + 1] + dv[a + 1] - v[b + 1] - dv[b + 1] + -bias[r0 + 1] + (w0z * ax - w0x * az + w1x * bz - w1z * bx));
  out[2] = -(v[a + 2] + dv[a + 2] - v[b + 2] - dv[b + 2] + -bias[r0 + 2] + (w0x * ay - w0y * ax - w1x * by + w1y * bx));
}

/** zeros for pointBlockVelocity's bias where the caller has none (grown with the row sets it serves) */
let zeroBias = new Float64Array(0);

/**
 * J_r V (R2) for the rows of block `block` (they join the same two bodies, RowSet.addBlock) into
 * out[0 .. n), V = (v, ω) + (Δv, Δω): the velocity plus a pending change (the Jacobi text's V* + ΔV;
 * pass zeros for Δv, Δω where there is none), plus bias[r] where `bias` is given (the solvers' β C).
 * The bodies' velocities are read once for the block. This is the one J·V of the row solvers.
 *
 * A rigid point joint's block (pointBlock) takes it from its lever arms: J_k V + bias_k = −cv_k with
 *   cv = v_A + Δv_A − v_B − Δv_B − bias + ω_A × a − ω_B × b
 * the Jacobi text's J_ℓ V + β C_ℓ (eq. 37, its signs), summed in the order it always was, so a
 * point-joint scene steps to the same bits as before the rows existed.
 */
export function blockVelocity(
  rows: RowSet,
  block: number,
  v: Float64Array,
  w: Float64Array,
  dv: Float64Array,
  dw: Float64Array,
  out: Float64Array,
  bias: Float64Array | null = null,
): void {
  if (rows.pointBlock[block] === 1) {
    pointBlockVelocity(rows, block, v, w, dv, dw, out, bias ?? (zeroBias.length >= rows.count ? zeroBias : (zeroBias = new Float64Array(rows.capacity))));
    return;
  }
  const r0 = rows.blockStart[block], r1 = rows.blockStart[block + 1];
  const a = 3 * rows.bodyA[r0];
  const b = 3 * rows.bodyB[r0];
  const J = rows.jacobian;
  const vax = v[a] + dv[a], vay = v[a + 1] + dv[a + 1], vaz = v[a + 2] + dv[a + 2];
  const wax = w[a] + dw[a], way = w[a + 1] + dw[a + 1], waz = w[a + 2] + dw[a + 2];
  const vbx = v[b] + dv[b], vby = v[b + 1] + dv[b + 1], vbz = v[b + 2] + dv[b + 2];
  const wbx = w[b] + dw[b], wby = w[b + 1] + dw[b + 1], wbz = w[b + 2] + dw[b + 2];
  for (let r = r0; r < r1; r++) {
    const j = JACOBIAN_STRIDE * r;
    out[r - r0] =
      J[j] * vax + J[j + 1] * vay + J[j + 2] * vaz +
      J[j + 3] * wax + J[j + 4] * way + J[j + 5] * waz +
      J[j + 6] * vbx + J[j + 7] * vby + J[j + 8] * vbz +
      J[j + 9] * wbx + J[j + 10] * wby + J[j + 11] * wbz +
      (bias ? bias[r] : 0);
  }
}

/**
 * Body → row connectivity in CSR form, the rows' version of the Jacobi text's ic0 /
 * constraint_list: the rows of body i are entry[start[i] .. start[i+1]), each entry 2r + side
 * (side 0: the body is the row's A, 1: its B), or, for a rigid point joint's block b (its three
 * rows at once), ~(2b + side) (negative). Bodies of zero inverse mass get no entries (nothing moves
 * them). Rebuilt whenever the row set changes.
 */
export interface RowConnectivity {
  start: Int32Array;
  entry: Int32Array;
  /**
   * when every entry is a rigid point joint's block (a chain or net of point joints, the necklace):
   * per entry its block's first row, its sign σ (−1 on A, +1 on B) and the offset of its lever arm
   * in blockArm, so the gather reads them directly (the Jacobi text's ic0 / constraint_list with the
   * sign and arm of each entry); null otherwise
   */
  point: { row: Int32Array; sign: Float64Array; arm: Int32Array } | null;
}

export function rowConnectivity(rows: RowSet, bodyCount: number, inverseMass: Float64Array): RowConnectivity {
  const start = new Int32Array(bodyCount + 1);
  const counted = (r: number) => rows.pointBlock[rows.rowBlock[r]] === 0 || rows.blockStart[rows.rowBlock[r]] === r;
  for (let r = 0; r < rows.count; r++) {
    if (!counted(r)) continue;
    if (inverseMass[rows.bodyA[r]] > 0) start[rows.bodyA[r] + 1]++;
    if (inverseMass[rows.bodyB[r]] > 0) start[rows.bodyB[r] + 1]++;
  }
  for (let i = 0; i < bodyCount; i++) start[i + 1] += start[i];
  const fill = start.slice(0, bodyCount);
  const entry = new Int32Array(start[bodyCount]);
  for (let r = 0; r < rows.count; r++) {
    if (!counted(r)) continue;
    const b = rows.rowBlock[r];
    const point = rows.pointBlock[b] === 1;
    if (inverseMass[rows.bodyA[r]] > 0) entry[fill[rows.bodyA[r]]++] = point ? ~(2 * b) : 2 * r;
    if (inverseMass[rows.bodyB[r]] > 0) entry[fill[rows.bodyB[r]]++] = point ? ~(2 * b + 1) : 2 * r + 1;
  }
  let allPoint = true;
  for (let k = 0; k < entry.length && allPoint; k++) allPoint = entry[k] < 0;
  let pointEntries: RowConnectivity['point'] = null;
  if (allPoint) {
    const n = entry.length;
    pointEntries = { row: new Int32Array(n), sign: new Float64Array(n), arm: new Int32Array(n) };
    for (let k = 0; k < n; k++) {
      const b = ~entry[k] >> 1, side = ~entry[k] & 1;
      pointEntries.row[k] = rows.blockStart[b];
      pointEntries.sign[k] = side === 0 ? -1 : 1;
      pointEntries.arm[k] = 6 * b + 3 * side;
    }
  }
  return { start, entry, point: pointEntries };
}

/**
 * gatherImpulse where every entry is a rigid point joint's block (RowConnectivity.point): the same
 * sums in the same order, with each entry's row, sign and lever arm read directly.
 */
function gatherPointImpulse(
  conn: RowConnectivity,
  arm: Float64Array,
  lambda: Float64Array,
  scale: number,
  inverseMass: Float64Array,
  Ii: Float64Array,
  outLin: Float64Array,
  outAng: Float64Array,
): void {
  const { start } = conn;
  const { row, sign, arm: armOffset } = conn.point!;
  const bodyCount = start.length - 1;
  for (let i = 0; i < bodyCount; i++) {
    let lx = 0, ly = 0, lz = 0;
    let ax = 0, ay = 0, az = 0;
    const end = start[i + 1];
    for (let k = start[i]; k < end; k++) {
      const s = sign[k];
      const co = row[k];
      const l0 = lambda[co], l1 = lambda[co + 1], l2 = lambda[co + 2];
      const ro = armOffset[k];
      const rx = arm[ro], ry = arm[ro + 1], rz = arm[ro + 2];
      lx += s * l0; ly += s * l1; lz += s * l2;
      ax += s * (ry * l2 - rz * l1);
      ay += s * (rz * l0 - rx * l2);
      az += s * (rx * l1 - ry * l0);
    }
    const o = 3 * i;
    const sm = scale * inverseMass[i];
    outLin[o] = sm * lx;
    outLin[o + 1] = sm * ly;
    outLin[o + 2] = sm * lz;
    const io = 9 * i;
    outAng[o] = scale * (Ii[io] * ax + Ii[io + 1] * ay + Ii[io + 2] * az);
    outAng[o + 1] = scale * (Ii[io + 3] * ax + Ii[io + 4] * ay + Ii[io + 5] * az);
    outAng[o + 2] = scale * (Ii[io + 6] * ax + Ii[io + 7] * ay + Ii[io + 8] * az);
  }
}

/** The rows an entry of RowConnectivity stands for, as (first row, count, side). */
export function entryRows(rows: RowSet, e: number): [number, number, number] {
  if (e >= 0) return [e >> 1, 1, e & 1];
  const b = ~e >> 1;
  return [rows.blockStart[b], 3, ~e & 1];
}

/**
 * The gather of (R1) for any λ and scale s: per body i,
 *   outLin_i = s m_i⁻¹ Σ J_v,iᵀ λ_r,   outAng_i = s I_i⁻¹ Σ J_ω,iᵀ λ_r   (I⁻¹ in the world frame, 9 per body)
 * i.e. out = s M⁻¹ Jᵀ λ. update_velocities is s = h (ΔV = h M⁻¹ Jᵀ λ); the global solve's
 * operator takes s = 1. Bodies without entries (fixed) get zeros.
 */
export function gatherImpulse(
  rows: RowSet,
  conn: RowConnectivity,
  lambda: Float64Array,
  scale: number,
  inverseMass: Float64Array,
  inverseInertiaWorld: Float64Array,
  outLin: Float64Array,
  outAng: Float64Array,
): void {
  const J = rows.jacobian;
  const { start, entry } = conn;
  const arm = rows.blockArm;
  const bodyCount = start.length - 1;
  if (conn.point) {
    gatherPointImpulse(conn, arm, lambda, scale, inverseMass, inverseInertiaWorld, outLin, outAng);
    return;
  }
  for (let i = 0; i < bodyCount; i++) {
    let lx = 0, ly = 0, lz = 0;
    let ax = 0, ay = 0, az = 0;
    const end = start[i + 1];
    for (let k = start[i]; k < end; k++) {
      const e = entry[k];
      if (e < 0) {
        // a rigid point joint's three rows: Σ_k λ_k J_k = σ (λ, r × λ), σ = −1, r = a on A; σ = +1, r = b on B
        const b = ~e >> 1, side = ~e & 1;
        const co = rows.blockStart[b];
        const s = side === 0 ? -1 : 1;
        const l0 = lambda[co], l1 = lambda[co + 1], l2 = lambda[co + 2];
        const ro = 6 * b + 3 * side;
        const rx = arm[ro], ry = arm[ro + 1], rz = arm[ro + 2];
        lx += s * l0; ly += s * l1; lz += s * l2;
        ax += s * (ry * l2 - rz * l1);
        ay += s * (rz * l0 - rx * l2);
        az += s * (rx * l1 - ry * l0);
        continue;
      }
      const r = e >> 1;
      const l = lambda[r];
      const j = JACOBIAN_STRIDE * r + 6 * (e & 1); // J_vA, J_ωA or J_vB, J_ωB
      lx += J[j] * l; ly += J[j + 1] * l; lz += J[j + 2] * l;
      ax += J[j + 3] * l; ay += J[j + 4] * l; az += J[j + 5] * l;
    }
    const o = 3 * i;
    const sm = scale * inverseMass[i];
    outLin[o] = sm * lx;
    outLin[o + 1] = sm * ly;
    outLin[o + 2] = sm * lz;
    const io = 9 * i;
    const I = inverseInertiaWorld;
    outAng[o] = scale * (I[io] * ax + I[io + 1] * ay + I[io + 2] * az);
    outAng[o + 1] = scale * (I[io + 3] * ax + I[io + 4] * ay + I[io + 5] * az);
    outAng[o + 2] = scale * (I[io + 6] * ax + I[io + 7] * ay + I[io + 8] * az);
  }
}

/**
 * A_bb of a rigid point joint's block from its lever arms (the Jacobi text's A_ℓℓ, eq. 8, in the
 * arithmetic jacobi-cpu always had):
 *   A = (m_A⁻¹ + m_B⁻¹) I₃ − [a]× I_A⁻¹ [a]× − [b]× I_B⁻¹ [b]×
 * (J_ωA = −[a]× rows, so J_ωA I⁻¹ J_ωAᵀ = [a]× I⁻¹ [a]×ᵀ = −[a]× I⁻¹ [a]×; same for b) into m[o .. o+9).
 */
export function pointBlockDelassus(rows: RowSet, block: number, inverseMass: Float64Array, inverseInertiaWorld: Float64Array, m: Float64Array, o: number, share: Float64Array | null = null): void {
  const r0 = rows.blockStart[block];
  const b0 = rows.bodyA[r0], b1 = rows.bodyB[r0];
  const arm = rows.blockArm, ro = 6 * block;
  const Ii = inverseInertiaWorld;
  // mass splitting (blockDelassus): body k's m⁻¹ and I⁻¹ times n_k; n = 1 (no share) is the arithmetic as it was
  const n0 = share ? share[b0] : 1, n1 = share ? share[b1] : 1;
  const s = inverseMass[b0] * n0 + inverseMass[b1] * n1;
  let a00 = s, a01 = 0, a02 = 0;
  let a10 = 0, a11 = s, a12 = 0;
  let a20 = 0, a21 = 0, a22 = s;
  for (let side = 0; side < 2; side++) {
    const uo = ro + 3 * side;
    const io = 9 * (side === 0 ? b0 : b1);
    const ux = arm[uo], uy = arm[uo + 1], uz = arm[uo + 2];
    const k = side === 0 ? n0 : n1;
    const i00 = Ii[io] * k, i01 = Ii[io + 1] * k, i02 = Ii[io + 2] * k;
    const i10 = Ii[io + 3] * k, i11 = Ii[io + 4] * k, i12 = Ii[io + 5] * k;
    const i20 = Ii[io + 6] * k, i21 = Ii[io + 7] * k, i22 = Ii[io + 8] * k;
    // T = [u]× I⁻¹
    const t00 = uy * i20 - uz * i10, t01 = uy * i21 - uz * i11, t02 = uy * i22 - uz * i12;
    const t10 = uz * i00 - ux * i20, t11 = uz * i01 - ux * i21, t12 = uz * i02 - ux * i22;
    const t20 = ux * i10 - uy * i00, t21 = ux * i11 - uy * i01, t22 = ux * i12 - uy * i02;
    // A −= T [u]×
    a00 -= t01 * uz - t02 * uy; a01 -= t02 * ux - t00 * uz; a02 -= t00 * uy - t01 * ux;
    a10 -= t11 * uz - t12 * uy; a11 -= t12 * ux - t10 * uz; a12 -= t10 * uy - t11 * ux;
    a20 -= t21 * uz - t22 * uy; a21 -= t22 * ux - t20 * uz; a22 -= t20 * uy - t21 * ux;
  }
  m[o] = a00; m[o + 1] = a01; m[o + 2] = a02;
  m[o + 3] = a10; m[o + 4] = a11; m[o + 5] = a12;
  m[o + 6] = a20; m[o + 7] = a21; m[o + 8] = a22;
}

/**
 * A_bb = J_b M⁻¹ J_bᵀ of the block of rows r0 .. r1−1 into m[o ..] (n×n row-major, n = r1 − r0).
 * The rows of a block join the same two bodies (RowSet.addBlock), so
 *   A_pq = Σ_{k ∈ {A, B}, m_k⁻¹ > 0}  m_k⁻¹ J_v,p·J_v,q + J_ω,p · I_k⁻¹ J_ω,q.
 * A body of zero inverse mass (fixed, or a world anchor) adds nothing.
 * With `share` (n_k per body) the split effective mass A_bb^s = J_b S M⁻¹ J_bᵀ, S = diag(n_k): body k's
 * m⁻¹ and I⁻¹ times n_k (mass splitting, Tonge et al. 2012; block-solver.ts massShare). Without: n_k = 1,
 * the arithmetic as it was (x · 1 = x exactly).
 */
export function blockDelassus(rows: RowSet, r0: number, r1: number, inverseMass: Float64Array, inverseInertiaWorld: Float64Array, m: Float64Array, o: number, share: Float64Array | null = null): void {
  const n = r1 - r0;
  const J = rows.jacobian;
  const I = inverseInertiaWorld;
  m.fill(0, o, o + n * n);
  for (let side = 0; side < 2; side++) {
    const body = side === 0 ? rows.bodyA[r0] : rows.bodyB[r0];
    if (inverseMass[body] === 0) continue;
    const k = share ? share[body] : 1;
    const mi = inverseMass[body] * k;
    const io = 9 * body;
    const i00 = I[io] * k, i01 = I[io + 1] * k, i02 = I[io + 2] * k;
    const i10 = I[io + 3] * k, i11 = I[io + 4] * k, i12 = I[io + 5] * k;
    const i20 = I[io + 6] * k, i21 = I[io + 7] * k, i22 = I[io + 8] * k;
    for (let p = 0; p < n; p++) {
      const jp = JACOBIAN_STRIDE * (r0 + p) + 6 * side;
      // u = I⁻¹ J_ω,p
      const ux = i00 * J[jp + 3] + i01 * J[jp + 4] + i02 * J[jp + 5];
      const uy = i10 * J[jp + 3] + i11 * J[jp + 4] + i12 * J[jp + 5];
      const uz = i20 * J[jp + 3] + i21 * J[jp + 4] + i22 * J[jp + 5];
      for (let q = p; q < n; q++) {
        const jq = JACOBIAN_STRIDE * (r0 + q) + 6 * side;
        const a = mi * (J[jp] * J[jq] + J[jp + 1] * J[jq + 1] + J[jp + 2] * J[jq + 2]) + ux * J[jq + 3] + uy * J[jq + 4] + uz * J[jq + 5];
        m[o + p * n + q] += a;
        if (q !== p) m[o + q * n + p] += a;
      }
    }
  }
}

/**
 * Inverts the n×n symmetric block at m[o .. o + n²) (row-major) in place. n = 3 (a point joint) by
 * the adjugate, as the Jacobi solvers have always done (zero when singular); otherwise by
 * Gauss–Jordan elimination with diagonal pivots (A = J M⁻¹ Jᵀ is positive semi-definite, so a zero
 * pivot means the Schur complement's whole row is zero: that row depends on the others). A dependent
 * row (pivot ≤ 1e-14 of the largest diagonal entry) gets a zero row and column: it takes no
 * impulse of its own. `scratch` needs 2n² + n entries.
 */
export function invertBlock(m: Float64Array, o: number, n: number, scratch: Float64Array): void {
  if (n === 1) {
    const a = m[o];
    m[o] = a > 0 && Number.isFinite(a) ? 1 / a : 0;
    return;
  }
  if (n === 3) {
    invert3(m, o);
    return;
  }
  const w = 2 * n;
  const dropped = 2 * n * n; // flags in scratch[dropped .. dropped + n)
  let scale = 0;
  for (let i = 0; i < n; i++) scale = Math.max(scale, Math.abs(m[o + i * n + i]));
  for (let i = 0; i < n; i++) {
    scratch[dropped + i] = 0;
    for (let j = 0; j < w; j++) scratch[i * w + j] = j < n ? m[o + i * n + j] : j - n === i ? 1 : 0;
  }
  const tiny = 1e-14 * scale;
  for (let c = 0; c < n; c++) {
    const p = scratch[c * w + c];
    if (!(p > tiny) || !Number.isFinite(p)) {
      scratch[dropped + c] = 1;
      continue;
    }
    const inv = 1 / p;
    for (let j = 0; j < w; j++) scratch[c * w + j] *= inv;
    for (let i = 0; i < n; i++) {
      if (i === c) continue;
      const f = scratch[i * w + c];
      if (f === 0) continue;
      for (let j = 0; j < w; j++) scratch[i * w + j] -= f * scratch[c * w + j];
    }
  }
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) m[o + i * n + j] = scratch[dropped + i] || scratch[dropped + j] ? 0 : scratch[i * w + n + j];
}

/** A⁻¹ of a 3×3 block in place, by the adjugate; zero when the determinant is 0 or not finite. */
function invert3(m: Float64Array, o: number): void {
  const a00 = m[o], a01 = m[o + 1], a02 = m[o + 2];
  const a10 = m[o + 3], a11 = m[o + 4], a12 = m[o + 5];
  const a20 = m[o + 6], a21 = m[o + 7], a22 = m[o + 8];
  const c00 = a11 * a22 - a12 * a21;
  const c01 = a12 * a20 - a10 * a22;
  const c02 = a10 * a21 - a11 * a20;
  const det = a00 * c00 + a01 * c01 + a02 * c02;
  if (det === 0 || !Number.isFinite(det)) {
    m.fill(0, o, o + 9);
    return;
  }
  const id = 1 / det;
  m[o] = c00 * id;
  m[o + 1] = (a02 * a21 - a01 * a22) * id;
  m[o + 2] = (a01 * a12 - a02 * a11) * id;
  m[o + 3] = c01 * id;
  m[o + 4] = (a00 * a22 - a02 * a20) * id;
  m[o + 5] = (a02 * a10 - a00 * a12) * id;
  m[o + 6] = c02 * id;
  m[o + 7] = (a01 * a20 - a00 * a21) * id;
  m[o + 8] = (a00 * a11 - a01 * a10) * id;
}
