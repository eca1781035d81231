/**
 * Contact rows (shared/seeds/constraint-rows-one-page.md, "Contact Specializations"; the Starframe
 * text's contact constraint, friction and impulse caching): every contact point of a manifold
 * (collision/types.ts) becomes a normal row and a friction block of two tangent rows.
 *
 * A point k between bodies A and B, found by collision detection at the start of the step with the
 * unit normal n (from A to B), the surface points p_A on A, p_B on B and the separation s₀, keeps for
 * the step its lever arms r_A = p_A − x_A⁰, r_B = p_B − x_B⁰ (world frame, fixed: the Jacobian is
 * the one of the step's start, as Box2D v3 prepares it once per step) and measures the separation at
 * a later pose of the step (a substep) to first order in the bodies' motion since the start,
 * Δx = x − x⁰ and the rotation vector Δθ of q q⁰⁻¹:
 *
 *   normal row    C_n = s₀ + n · (Δx_B − Δx_A) + Δθ_B · (r_B × n) − Δθ_A · (r_A × n)          (K1)
 *                 J_n = (−n, −(r_A × n), n, r_B × n),   λ_n ∈ [0, ∞)
 *     (C_n integrates J_n V over the step: d/dt n · (p_B − p_A) = n · (v_B + ω_B × r_B − v_A − ω_A × r_A),
 *      and n · (ω × r) = ω · (r × n); the one-pager's row with d̂ = n.) The contact points are not
 *      carried round with the bodies: a rolling ball's contact stays at its bottom, where a point
 *      fixed on the ball would climb its side, tilt J_n and brake the rolling (measured: a ball
 *      launched sliding ended at 0.44 of its speed instead of 5/7 under four substeps).
 *   friction      two rows along unit tangents t₁, t₂ ⟂ n (t₂ = n × t₁), velocity only (C = 0):
 *                 J_tk = (−t_k, −(r_A × t_k), t_k, r_B × t_k)                                   (K2)
 *                 bounds tied to the normal row: the pair λ_t = (λ₁, λ₂) is held in the disc
 *                 |λ_t| ≤ μ λ_n (Coulomb's circular cone; the one-pager's per-row box
 *                 [−μλ_n, μλ_n] makes a pyramid, whose strength depends on the direction of slip).
 *                 A block solver solves the two rows together (their 2×2 A) and scales λ_t back
 *                 onto the disc: the result does not depend on how t₁ is chosen in the tangent
 *                 plane, so friction is isotropic (test/contacts.test.ts slides a box 12 ways).
 *                 Static and dynamic friction (μ_s, μ_d; Coulomb's two laws): a point whose slip speed
 *                 when found, |v_t|, is below STATIC_SLIP_SPEED is at rest and its friction may reach
 *                 μ_s λ_n; a faster one sticks only if the impulse that stops it within the step lies
 *                 in the static disc |λ_t| ≤ μ_s λ_n (the test of XPBD's static friction,
 *                 xpbd/contacts.ts, at the velocity level; so a sliding body comes to rest), and else
 *                 slides with λ_t on the dynamic disc |λ_t| = μ_d λ_n. Why the speed as well as the
 *                 test: a body released on a slope is loaded by its soft contact over a few substeps,
 *                 and slips a little meanwhile (measured: 1.5 cm/s after the first frame under
 *                 softstep-cpu); by the test alone that slip would need more than μ_s to stop within a
 *                 step, so it would never stick again, where a real body at rest is held by μ_s.
 *
 * n, t₁, t₂ are fixed for the step (from the collision at the start of the step, as Box2D v3 does
 * across its substeps); C_n follows the bodies through the substeps.
 *
 * Keys (warm start): a contact's key names the pair and the feature (collision/types.ts id), so a
 * point that persists from step to step finds its λ again; row keys are negative (joints use ≥ 0):
 *   rowKey = −1 − (contactKey · 4 + k),  contactKey = (min(A,B) · N + max(A,B)) · 2²⁰ + id,  k = 0 (normal), 1, 2.
 * Exact while N² · 2²² < 2⁵³ (N < 46 000 bodies); beyond, two contacts may share a key (only a
 * warm start is then wrong, never the physics of the step).
 */
import { CONTACT_FRICTION, CONTACT_NORMAL, JACOBIAN_STRIDE, type RowSet } from './rows.js';
import { FEATURE_ID_LIMIT } from '../collision/types.js';

/**
 * m/s: below this slip speed a contact point counts as at rest for static friction (K2). A body held
 * by μ_s > μ_d slides once nudged faster than this. It must exceed the slip a resting contact shows
 * while its load builds: measured on a box released on ramps up to tan θ = 0.94 μ_s, at most 3.6 mm/s
 * (si-soft-cpu; softstep-cpu 0.6, pgs-cpu 1.9, gs-cpu 3.0), so 1 cm/s holds them with a margin.
 */
export const STATIC_SLIP_SPEED = 0.01;

/** The contact points of a step, as structure of arrays (one entry per point). */
export class ContactList {
  count = 0;
  capacity = 0;
  bodyA = new Int32Array(0);
  bodyB = new Int32Array(0);
  /** unit normal from A to B, world (3 per point) */
  normal = new Float64Array(0);
  /** unit tangents t₁, t₂ = n × t₁, world (3 per point each) */
  tangent1 = new Float64Array(0);
  tangent2 = new Float64Array(0);
  /** the points on A and on B, each in its body's local frame (3 per point each; warm-start matching) */
  anchorA = new Float64Array(0);
  anchorB = new Float64Array(0);
  /** lever arms r_A = p_A − x_A, r_B = p_B − x_B at detection, world frame (3 per point each) */
  armA = new Float64Array(0);
  armB = new Float64Array(0);
  /** the bodies' positions (3) and orientations (4) at detection, per point */
  positionA0 = new Float64Array(0);
  positionB0 = new Float64Array(0);
  orientationA0 = new Float64Array(0);
  orientationB0 = new Float64Array(0);
  /** separation when found, m (negative: overlap) */
  separation = new Float64Array(0);
  /** the pair's dynamic μ_d = √(μd_A μd_B), static μ_s = √(μs_A μs_B) and e = max(e_A, e_B) */
  friction = new Float64Array(0);
  staticFriction = new Float64Array(0);
  restitution = new Float64Array(0);
  /** contactKey (header) */
  key = new Float64Array(0);
  /** relative normal velocity n · (v_pB − v_pA) when found, m/s (restitution's v₁) */
  approach = new Float64Array(0);
  /** relative tangential speed |v_t| at the points when found, m/s (static friction's test) */
  slip = new Float64Array(0);
  /** the pair's slop, m (collision/pipeline.ts pairSlop: 5 mm, less for bodies under 5 cm) */
  slop = new Float64Array(0);
  /** the point's record in its pair's persistent manifold (collision/manifolds.ts: slot · 4 + k), −1: none */
  manifoldPoint = new Int32Array(0);

  clear(): void {
    this.count = 0;
  }

  reserve(n: number): void {
    if (n <= this.capacity) return;
    const cap = Math.max(n, 2 * this.capacity, 16);
    const keep = this.count;
    const g = <T extends Int32Array | Float64Array>(old: T, fresh: T, k: number): T => {
      (fresh as Float64Array).set((old as Float64Array).subarray(0, k * keep));
      return fresh;
    };
    this.bodyA = g(this.bodyA, new Int32Array(cap), 1);
    this.bodyB = g(this.bodyB, new Int32Array(cap), 1);
    this.normal = g(this.normal, new Float64Array(3 * cap), 3);
    this.tangent1 = g(this.tangent1, new Float64Array(3 * cap), 3);
    this.tangent2 = g(this.tangent2, new Float64Array(3 * cap), 3);
    this.anchorA = g(this.anchorA, new Float64Array(3 * cap), 3);
    this.anchorB = g(this.anchorB, new Float64Array(3 * cap), 3);
    this.armA = g(this.armA, new Float64Array(3 * cap), 3);
    this.armB = g(this.armB, new Float64Array(3 * cap), 3);
    this.positionA0 = g(this.positionA0, new Float64Array(3 * cap), 3);
    this.positionB0 = g(this.positionB0, new Float64Array(3 * cap), 3);
    this.orientationA0 = g(this.orientationA0, new Float64Array(4 * cap), 4);
    this.orientationB0 = g(this.orientationB0, new Float64Array(4 * cap), 4);
    this.separation = g(this.separation, new Float64Array(cap), 1);
    this.friction = g(this.friction, new Float64Array(cap), 1);
    this.staticFriction = g(this.staticFriction, new Float64Array(cap), 1);
    this.restitution = g(this.restitution, new Float64Array(cap), 1);
    this.key = g(this.key, new Float64Array(cap), 1);
    this.approach = g(this.approach, new Float64Array(cap), 1);
    this.slip = g(this.slip, new Float64Array(cap), 1);
    this.slop = g(this.slop, new Float64Array(cap), 1);
    this.manifoldPoint = g(this.manifoldPoint, new Int32Array(cap), 1);
    this.capacity = cap;
  }
}

/** Copies the pair, normal and anchors of every point of `from` into `to` (warm-start matching by position). */
export function copyContacts(from: ContactList, to: ContactList): void {
  to.clear();
  to.reserve(from.count);
  to.count = from.count;
  to.bodyA.set(from.bodyA.subarray(0, from.count));
  to.bodyB.set(from.bodyB.subarray(0, from.count));
  to.normal.set(from.normal.subarray(0, 3 * from.count));
  to.anchorA.set(from.anchorA.subarray(0, 3 * from.count));
  to.key.set(from.key.subarray(0, from.count));
}

/** contactKey of the header: the pair (unordered) and the feature id. */
export function contactKey(a: number, b: number, bodyCount: number, id: number): number {
  const lo = a < b ? a : b, hi = a < b ? b : a;
  return (lo * bodyCount + hi) * FEATURE_ID_LIMIT + id;
}

/** The row key of row k (0 normal, 1, 2 friction) of a contact (header). */
export function contactRowKey(key: number, k: number): number {
  return -1 - (key * 4 + k);
}

/**
 * A unit t₁ ⟂ n, a continuous function of n except where |n_z| = 0.9: t₁ = n × ẑ / |n × ẑ| while
 * |n_z| < 0.9, else n × x̂ / |n × x̂|. (No rule is continuous over every n — a tangent field on the
 * sphere vanishes somewhere — so the seam is put where contact normals seldom sit: a normal near an
 * axis, as in a stack, keeps its t₁ as the bodies rock.) Any t₁ serves physically (the friction
 * disc is isotropic); a fixed rule keeps runs repeatable.
 */
export function tangentOf(nx: number, ny: number, nz: number, out: Float64Array, o: number): void {
  let tx: number, ty: number, tz: number;
  if (Math.abs(nz) < 0.9) {
    // n × ẑ = (n_y, −n_x, 0)
    tx = ny; ty = -nx; tz = 0;
  } else {
    // n × x̂ = (0, n_z, −n_y)
    tx = 0; ty = nz; tz = -ny;
  }
  const l = Math.sqrt(tx * tx + ty * ty + tz * tz);
  out[o] = tx / l;
  out[o + 1] = ty / l;
  out[o + 2] = tz / l;
}

/**
 * Appends the rows of every contact of `list` to `rows` (after what is there): per point a normal
 * block (1 row, [0, ∞)) and a friction block (2 rows, the disc of (K2)), λ = 0 (the solver carries
 * the last step's λ over: block-solver.ts carryContactLambda). rows.count grows by 3 · list.count.
 */
export function layoutContacts(rows: RowSet, list: ContactList): void {
  rows.reserve(rows.count + 3 * list.count, rows.blockCount + 2 * list.count);
  for (let c = 0; c < list.count; c++) {
    const a = list.bodyA[c], b = list.bodyB[c];
    const key = list.key[c];
    const nBlock = rows.blockCount;
    const rn = rows.addBlock(1, a, b, 0, Infinity, 0, -1, contactRowKey(key, 0));
    rows.contactKind[nBlock] = CONTACT_NORMAL;
    const fBlock = rows.blockCount;
    const rf = rows.addBlock(2, a, b, -Infinity, Infinity, 0, -1, 0);
    rows.contactKind[fBlock] = CONTACT_FRICTION;
    // (K2) a point slipping slower than STATIC_SLIP_SPEED is at rest: its friction may reach μ_s even
    // while the solve lets it slip a little; a faster one slides under μ_d
    rows.blockMu[fBlock] = list.slip[c] < STATIC_SLIP_SPEED ? list.staticFriction[c] : list.friction[c];
    rows.blockMuStatic[fBlock] = list.staticFriction[c];
    rows.blockNormalRow[fBlock] = rn;
    rows.key[rf] = contactRowKey(key, 1);
    rows.key[rf + 1] = contactRowKey(key, 2);
    contactJacobian(rows, rn, list, c);
  }
}

/**
 * (K1), (K2): J of the rows of contact c (its normal row `row`, friction rows row+1, row+2): fixed for
 * the step (the lever arms of detection), so written once, when the contacts are laid out.
 */
export function contactJacobian(rows: RowSet, row: number, list: ContactList, c: number): void {
  const o3 = 3 * c;
  const rax = list.armA[o3], ray = list.armA[o3 + 1], raz = list.armA[o3 + 2];
  const rbx = list.armB[o3], rby = list.armB[o3 + 1], rbz = list.armB[o3 + 2];
  const J = rows.jacobian;
  for (let k = 0; k < 3; k++) {
    const dir = k === 0 ? list.normal : k === 1 ? list.tangent1 : list.tangent2;
    const x = dir[o3], y = dir[o3 + 1], z = dir[o3 + 2];
    const j = JACOBIAN_STRIDE * (row + k);
    J[j] = -x; J[j + 1] = -y; J[j + 2] = -z;
    J[j + 3] = -(ray * z - raz * y); J[j + 4] = -(raz * x - rax * z); J[j + 5] = -(rax * y - ray * x);
    J[j + 6] = x; J[j + 7] = y; J[j + 8] = z;
    J[j + 9] = rby * z - rbz * y; J[j + 10] = rbz * x - rbx * z; J[j + 11] = rbx * y - rby * x;
  }
  rows.error[row + 1] = 0;
  rows.error[row + 2] = 0;
}

/**
 * (K1): C of contact c's normal row at the pose (position 3 per body, orientation 4 per body), from
 * its J (contactJacobian): C_n = s₀ + J_n · (Δx_A, Δθ_A, Δx_B, Δθ_B).
 */
export function evaluateContact(rows: RowSet, row: number, list: ContactList, c: number, position: Float64Array, orientation: Float64Array): void {
  const a = list.bodyA[c], b = list.bodyB[c];
  const o3 = 3 * c, o4 = 4 * c;
  const J = rows.jacobian;
  // (K1): C_n = s₀ + J_n · (Δx_A, Δθ_A, Δx_B, Δθ_B)
  const j = JACOBIAN_STRIDE * row;
  let C = list.separation[c];
  for (let side = 0; side < 2; side++) {
    const body = side === 0 ? a : b;
    const p0 = side === 0 ? list.positionA0 : list.positionB0;
    const q0 = side === 0 ? list.orientationA0 : list.orientationB0;
    const po = 3 * body, qo = 4 * body, jo = j + 6 * side;
    C += J[jo] * (position[po] - p0[o3]) + J[jo + 1] * (position[po + 1] - p0[o3 + 1]) + J[jo + 2] * (position[po + 2] - p0[o3 + 2]);
    // Δθ = 2 vec(q q⁰⁻¹) (sign of its scalar part made ≥ 0): the small rotation since detection
    const x = orientation[qo], y = orientation[qo + 1], z = orientation[qo + 2], w = orientation[qo + 3];
    const x0 = -q0[o4], y0 = -q0[o4 + 1], z0 = -q0[o4 + 2], w0 = q0[o4 + 3];
    let dw = w * w0 - (x * x0 + y * y0 + z * z0);
    let dx = w * x0 + w0 * x + (y * z0 - z * y0);
    let dy = w * y0 + w0 * y + (z * x0 - x * z0);
    let dz = w * z0 + w0 * z + (x * y0 - y * x0);
    if (dw < 0) { dx = -dx; dy = -dy; dz = -dz; dw = -dw; }
    C += 2 * (J[jo + 3] * dx + J[jo + 4] * dy + J[jo + 5] * dz);
  }
  rows.error[row] = C;
}
