/**
 * Narrow-phase routines for every shape pair but box–box (box-box.ts). Each routine is written for
 * one order of its two shapes (sphere < capsule < box < plane); narrow.ts swaps the others.
 * Conventions (types.ts): n unit from A towards B, pointA on A's surface, pointB on B's, separation
 * s = (pointB − pointA)·n, every point with s < margin reported, null when none, ≤ 4 points,
 * ids in [0, 2²⁰) naming the touching features.
 *
 * Sphere and capsule are "core ⊕ ball": the points within r of a point (sphere) or of a segment
 * (capsule). For convex sets K and a ball, the signed distance of (K ⊕ ball(r)) is that of K less r,
 * along the same direction (supports add: h_{K⊕B_r}(u) = h_K(u) + r), so every round pair reduces to
 * the distance between the cores — point–point, point–segment, segment–segment, point–box,
 * segment–box — minus the radii, and the contact points sit r along ±n from the cores' closest points.
 *
 * Scratch vectors are module-level (the routines are not re-entrant; JS is single-threaded): only the
 * returned manifold is allocated.
 */
import type { BoxShape, CapsuleShape, PlaneShape, SphereShape } from '../model/world.js';
import type { ContactPoint, Manifold, Pose, V3 } from './types.js';
import { MAX_MANIFOLD_POINTS } from './types.js';
import { addScaled, anyPerpendicular, axisY, closestSegmentSegment, cross, dot, inverseRotate, lineCapsuleEntry, normalize, rotate, scale, set, sub, toLocalPoint, toWorldPoint } from './geometry.js';

/**
 * Capsule–capsule: two nearly parallel capsules whose segments overlap in extent get two points,
 * at the ends of the overlap interval, both on the one normal n (so a capsule lying on another does
 * not rock on a single point). Two skew lines touch at one point only, so this is an approximation
 * of a line contact, used only while the lines are close to parallel: at each overlap end the offset
 * between A's surface point and B's core point has a part across n of at most
 * CAPSULE_PARALLEL_LATERAL · min(rA, rB). Each point is exact all the same: pointA is on A's surface
 * (capsuleOffset), pointB where the line through pointA along n enters B, s = (pointB − pointA)·n.
 */
export const CAPSULE_PARALLEL_LATERAL = 0.05;

// ---- scratch ----------------------------------------------------------------------------------
const sA: V3 = [0, 0, 0];
const sB: V3 = [0, 0, 0];
const sC: V3 = [0, 0, 0];
const sD: V3 = [0, 0, 0];
const sE: V3 = [0, 0, 0];
const sF: V3 = [0, 0, 0];
const sN: V3 = [0, 0, 0];
const sG: V3 = [0, 0, 0];
const sH: V3 = [0, 0, 0];
const sI: V3 = [0, 0, 0];
const sJ: V3 = [0, 0, 0];
const sK: V3 = [0, 0, 0];
const sL: V3 = [0, 0, 0];
const sM: V3 = [0, 0, 0];
const st: [number, number] = [0, 0];
const breaks = new Float64Array(8);
const boxVerts = new Float64Array(24); // 8 vertices × 3 (world)
const vertS = new Float64Array(8);

function point(pointA: V3, pointB: V3, separation: number, id: number): ContactPoint {
  return { pointA: [pointA[0], pointA[1], pointA[2]], pointB: [pointB[0], pointB[1], pointB[2]], separation, id };
}

/** A point from the two world points pointA = a, pointB = a + s n (they face each other by construction). */
function facingPoint(ax: number, ay: number, az: number, n: V3, s: number, id: number): ContactPoint {
  return { pointA: [ax, ay, az], pointB: [ax + s * n[0], ay + s * n[1], az + s * n[2]], separation: s, id };
}

/**
 * out = the unit offset m from a capsule's core point p(t) (t ∈ [0, 1] along the segment, u the unit
 * axis from end 0 to end 1) to the capsule's surface point that lies farthest along n among those
 * whose nearest core point is p(t): at an end whose cap faces n (t = 0 with n·u ≤ 0, t = 1 with
 * n·u ≥ 0) that is n itself; elsewhere it is on the cylinder, m = (n − (n·u)u)/|…| (p + r n would be
 * inside the capsule when n is not ⊥ u). Returns m·n.
 */
function capsuleOffset(out: V3, t: number, u: V3, n: V3): number {
  const nu = n[0] * u[0] + n[1] * u[1] + n[2] * u[2];
  if ((t <= 0 && nu <= 0) || (t >= 1 && nu >= 0)) {
    set(out, n[0], n[1], n[2]);
    return 1;
  }
  set(out, n[0] - nu * u[0], n[1] - nu * u[1], n[2] - nu * u[2]);
  const l = normalize(out, out);
  if (l < 1e-12) {
    anyPerpendicular(out, u);
    return 0;
  }
  return l; // m·n = |n − (n·u)u| = √(1 − (n·u)²)
}

// ---- sphere–sphere ------------------------------------------------------------------------------

/**
 * Core distance point–point: d = cB − cA, n = d/|d|, s = |d| − rA − rB, pointA = cA + rA n,
 * pointB = cB − rB n (so pointB − pointA = d − (rA + rB) n = s n). Concentric spheres: any n.
 */
export function collideSphereSphere(a: SphereShape, poseA: Pose, b: SphereShape, poseB: Pose, margin: number): Manifold | null {
  const d = sub(sA, poseB.position, poseA.position);
  const dist = Math.sqrt(dot(d, d));
  const s = dist - a.radius - b.radius;
  if (s >= margin) return null;
  const n: V3 = dist > 1e-12 * (a.radius + b.radius) ? [d[0] / dist, d[1] / dist, d[2] / dist] : [0, 1, 0];
  const pa = addScaled(sB, poseA.position, n, a.radius);
  const pb = addScaled(sC, poseB.position, n, -b.radius);
  return { normal: n, points: [point(pa, pb, s, 0)] };
}

// ---- sphere–plane -------------------------------------------------------------------------------

/**
 * Plane B: outward normal N = R_B ŷ through x_B. Height of the centre h = (c − x_B)·N, s = h − r.
 * The plane pushes the sphere along +N, so n (A → B) = −N; pointA = c − r N, pointB = c − h N
 * (the centre's foot on the plane).
 */
export function collideSpherePlane(a: SphereShape, poseA: Pose, _b: PlaneShape, poseB: Pose, margin: number): Manifold | null {
  const N = axisY(sN, poseB.orientation);
  const c = poseA.position;
  const h = (c[0] - poseB.position[0]) * N[0] + (c[1] - poseB.position[1]) * N[1] + (c[2] - poseB.position[2]) * N[2];
  const s = h - a.radius;
  if (s >= margin) return null;
  const pa = addScaled(sA, c, N, -a.radius);
  const pb = addScaled(sB, c, N, -h);
  return { normal: [-N[0], -N[1], -N[2]], points: [point(pa, pb, s, 0)] };
}

// ---- sphere–box ---------------------------------------------------------------------------------

/**
 * In B's frame, c' = R_Bᵀ (c − x_B); the box's closest point is q = clamp(c', −e, e).
 *  - c' outside the box: n = (q − c')/|q − c'| (towards the box), s = |q − c'| − r, pointB = q,
 *    pointA = c' + r n. id = which faces clamped (3 states per axis: the box's face, edge or
 *    vertex region holding the sphere).
 *  - c' inside (or on) the box: the least translation that takes the ball out goes through the
 *    nearest face k (an interior point's distance to a convex set's boundary is the least facet
 *    distance, e_k − |c'_k|), and the ball needs r more: s = −(e_k − |c'_k| + r). With σ the side
 *    of c' (sign c'_k), the box's outward face normal is σ ê_k and the sphere leaves along it, so
 *    n = −σ ê_k; pointB = c' moved onto the face, pointA = c' + r n.
 */
export function collideSphereBox(a: SphereShape, poseA: Pose, b: BoxShape, poseB: Pose, margin: number): Manifold | null {
  const r = a.radius;
  const e = b.halfExtents;
  const c = toLocalPoint(sA, poseB, poseA.position);
  const q = sB;
  let code = 0;
  for (let i = 0, w = 1; i < 3; i++, w *= 3) {
    const x = c[i];
    if (x > e[i]) (q[i] = e[i]), (code += 2 * w);
    else if (x < -e[i]) (q[i] = -e[i]), (code += w);
    else q[i] = x;
  }
  const dx = q[0] - c[0], dy = q[1] - c[1], dz = q[2] - c[2];
  const dist = Math.sqrt(dx * dx + dy * dy + dz * dz);
  const nl = sC;
  let s: number, id: number;
  if (dist > 1e-12 * (r + e[0] + e[1] + e[2])) {
    s = dist - r;
    if (s >= margin) return null;
    set(nl, dx / dist, dy / dist, dz / dist);
    id = code;
  } else {
    let k = 0, depth = e[0] - Math.abs(c[0]);
    for (let i = 1; i < 3; i++) {
      const di = e[i] - Math.abs(c[i]);
      if (di < depth) (depth = di), (k = i);
    }
    s = -(depth + r);
    if (s >= margin) return null;
    const sigma = c[k] >= 0 ? 1 : -1;
    set(nl, 0, 0, 0);
    nl[k] = -sigma;
    q[0] = c[0];
    q[1] = c[1];
    q[2] = c[2];
    q[k] = sigma * e[k];
    id = 27 + 2 * k + (sigma > 0 ? 1 : 0);
  }
  const pa = addScaled(sD, c, nl, r);
  const normal = rotate([0, 0, 0], poseB.orientation, nl);
  toWorldPoint(pa, poseB, pa);
  const pb = toWorldPoint(sE, poseB, q);
  return { normal, points: [point(pa, pb, s, id)] };
}

// ---- sphere–capsule -----------------------------------------------------------------------------

/**
 * Core distance point–segment: B's axis u = R_B ŷ, closest parameter t = clamp((c − x_B)·u, −h, h),
 * q = x_B + t u; n = (q − c)/|q − c|, s = |q − c| − rA − rB, pointA = c + rA n, pointB = q − rB n.
 * A centre on the axis: any n ⊥ u (every such direction is a least translation, depth rA + rB).
 * id: 0, 1, 2 = closest to the end −h, the side, the end +h.
 */
export function collideSphereCapsule(a: SphereShape, poseA: Pose, b: CapsuleShape, poseB: Pose, margin: number): Manifold | null {
  const u = axisY(sA, poseB.orientation);
  const c = poseA.position;
  const rel = sub(sB, c, poseB.position);
  const h = b.halfHeight;
  let t = dot(rel, u);
  let id = 1;
  if (t <= -h) (t = -h), (id = 0);
  else if (t >= h) (t = h), (id = 2);
  const q = addScaled(sC, poseB.position, u, t);
  const d = sub(sD, q, c);
  const dist = Math.sqrt(dot(d, d));
  const R = a.radius + b.radius;
  const s = dist - R;
  if (s >= margin) return null;
  const n: V3 = [0, 0, 0];
  if (dist > 1e-12 * (R + h)) scale(n, d, 1 / dist);
  else anyPerpendicular(n, u);
  const pa = addScaled(sE, c, n, a.radius);
  const pb = addScaled(sF, q, n, -b.radius);
  return { normal: n, points: [point(pa, pb, s, id)] };
}

// ---- capsule–capsule ----------------------------------------------------------------------------

/**
 * Core distance segment–segment (geometry.ts closestSegmentSegment): closest points qA, qB,
 * n = (qB − qA)/|qB − qA|, s = |qB − qA| − rA − rB. Crossing segments (|qB − qA| = 0): the
 * Minkowski difference of two segments is a flat parallelogram, so the least translation is along
 * its normal ±(uA × uB) and the depth is rA + rB.
 * Nearly parallel segments that overlap in extent: two points, at the ends of the overlap interval
 * (the projection of B's segment on A's axis, cut to A's): pointA_i on A's surface over that core
 * point (capsuleOffset), pointB_i where the line pointA_i + λ n enters B, s_i = λ. Every s_i ≥ s:
 * the closest pair's n bounds a slab, (b − a)·n ≥ s for every a ∈ A, b ∈ B. When the closest pair
 * involves an end, that end (or its projection) is an overlap end, and there the line from A's
 * closest point enters B at B's closest point, so the smallest s_i is s itself. When instead the
 * lines cross inside the overlap, the ends are shallower than the closest pair, which then joins
 * them as a third point (when deeper by over 1e-9 (rA + rB)). See CAPSULE_PARALLEL_LATERAL for
 * when the two-point form is used.
 * ids: one point: 3·(A's feature) + (B's feature), features 0 = end 0, 1 = side, 2 = end 1;
 * two points: 9 (overlap end nearer A's end 0), 10 (nearer A's end 1), and 11 the closest pair.
 */
export function collideCapsuleCapsule(a: CapsuleShape, poseA: Pose, b: CapsuleShape, poseB: Pose, margin: number): Manifold | null {
  const uA = axisY(sA, poseA.orientation);
  const uB = axisY(sB, poseB.orientation);
  const hA = a.halfHeight, hB = b.halfHeight, rA = a.radius, rB = b.radius, R = rA + rB;
  const p0 = addScaled(sC, poseA.position, uA, -hA);
  const q0 = addScaled(sD, poseB.position, uB, -hB);
  const d1 = scale(sE, uA, 2 * hA);
  const d2 = scale(sF, uB, 2 * hB);
  closestSegmentSegment(st, p0, d1, q0, d2);
  const s0 = st[0], t0 = st[1];
  const ax = p0[0] + s0 * d1[0], ay = p0[1] + s0 * d1[1], az = p0[2] + s0 * d1[2];
  const dx = q0[0] + t0 * d2[0] - ax, dy = q0[1] + t0 * d2[1] - ay, dz = q0[2] + t0 * d2[2] - az;
  const dist = Math.sqrt(dx * dx + dy * dy + dz * dz);
  const s = dist - R;
  if (s >= margin) return null;
  const n: V3 = [0, 0, 0];
  if (dist > 1e-12 * (R + hA + hB)) set(n, dx / dist, dy / dist, dz / dist);
  else {
    // cores touch: n ⊥ both axes, or (parallel) ⊥ A's axis towards B's centre, oriented A → B
    const cx = poseB.position[0] - poseA.position[0], cy = poseB.position[1] - poseA.position[1], cz = poseB.position[2] - poseA.position[2];
    cross(n, uA, uB);
    if (normalize(n, n) < 1e-9) {
      const along = cx * uA[0] + cy * uA[1] + cz * uA[2];
      set(n, cx - along * uA[0], cy - along * uA[1], cz - along * uA[2]);
      if (normalize(n, n) <= 1e-12 * (R + hA + hB)) anyPerpendicular(n, uA);
    }
    if (n[0] * cx + n[1] * cy + n[2] * cz < 0) scale(n, n, -1);
  }

  // two points for nearly parallel overlapping segments
  const cosAB = dot(uA, uB);
  if (1 - cosAB * cosAB < 0.01) {
    // B's ends on A's axis, as parameters of A's segment p0 + σ d1, σ ∈ [0, 1]
    const inv = 1 / (4 * hA * hA);
    const tb0 = ((q0[0] - p0[0]) * d1[0] + (q0[1] - p0[1]) * d1[1] + (q0[2] - p0[2]) * d1[2]) * inv;
    const tb1 = tb0 + dot(d2, d1) * inv;
    const lo = Math.max(0, Math.min(tb0, tb1));
    const hi = Math.min(1, Math.max(tb0, tb1));
    const lateralMax = CAPSULE_PARALLEL_LATERAL * Math.min(rA, rB);
    // an overlap shorter than 2·lateralMax (0.1 of the smaller radius) is an end-to-end touch: one point
    if ((hi - lo) * 2 * hA > 2 * lateralMax) {
      let ok = true;
      const pLo = sG, pHi = sH;
      let sLo = 0, sHi = 0;
      const m = sN;
      for (let end = 0; end < 2 && ok; end++) {
        const sig = end === 0 ? lo : hi;
        const pa = end === 0 ? pLo : pHi;
        const mn = capsuleOffset(m, sig, uA, n);
        const px = p0[0] + sig * d1[0], py = p0[1] + sig * d1[1], pz = p0[2] + sig * d1[2];
        set(pa, px + rA * m[0], py + rA * m[1], pz + rA * m[2]);
        // B's segment point closest to A's core point: the lateral offset test
        let tb = ((px - q0[0]) * d2[0] + (py - q0[1]) * d2[1] + (pz - q0[2]) * d2[2]) / (4 * hB * hB);
        tb = tb < 0 ? 0 : tb > 1 ? 1 : tb;
        const wx = q0[0] + tb * d2[0] - px, wy = q0[1] + tb * d2[1] - py, wz = q0[2] + tb * d2[2] - pz;
        const wn = wx * n[0] + wy * n[1] + wz * n[2];
        const lx = wx - wn * n[0] - rA * (m[0] - mn * n[0]);
        const ly = wy - wn * n[1] - rA * (m[1] - mn * n[1]);
        const lz = wz - wn * n[2] - rA * (m[2] - mn * n[2]);
        if (lx * lx + ly * ly + lz * lz > lateralMax * lateralMax) ok = false;
        // pointB: where the line pointA + λ n enters B (so both points are on the surfaces, facing)
        const si = lineCapsuleEntry(pa, n, q0, uB, 2 * hB, rB);
        if (!(si === si)) ok = false; // NaN: the line misses B
        if (end === 0) sLo = si;
        else sHi = si;
      }
      if (ok) {
        const points: ContactPoint[] = [];
        if (sLo < margin) points.push(facingPoint(pLo[0], pLo[1], pLo[2], n, sLo, 9));
        if (sHi < margin) points.push(facingPoint(pHi[0], pHi[1], pHi[2], n, sHi, 10));
        // the lines cross inside the overlap: the ends are shallower than the closest pair (by up to
        // |lateral|²/2rB), so the closest pair, the deepest point, is added
        if (s < Math.min(sLo, sHi) - 1e-9 * R) points.push({ pointA: [ax + rA * n[0], ay + rA * n[1], az + rA * n[2]], pointB: [ax + dx - rB * n[0], ay + dy - rB * n[1], az + dz - rB * n[2]], separation: s, id: 11 });
        if (points.length > 0) return { normal: n, points };
      }
    }
  }

  const fa = s0 <= 0 ? 0 : s0 >= 1 ? 2 : 1;
  const fb = t0 <= 0 ? 0 : t0 >= 1 ? 2 : 1;
  const pa: V3 = [ax + rA * n[0], ay + rA * n[1], az + rA * n[2]];
  const pb: V3 = [ax + dx - rB * n[0], ay + dy - rB * n[1], az + dz - rB * n[2]];
  return { normal: n, points: [{ pointA: pa, pointB: pb, separation: s, id: 3 * fa + fb }] };
}

// ---- capsule–plane ------------------------------------------------------------------------------

/**
 * Each segment end e_i (i = 0: −h, 1: +h), at height h_i = (e_i − x_B)·N, gives a point when its
 * s_i < margin, n = −N, id = i: pointA = e_i + r m_i, the capsule's surface point below that end
 * (capsuleOffset: the cap's bottom e_i − r N for the lower end, the cylinder's lowest line for the
 * upper one, as e_i − r N would be inside the capsule), s_i = h_i − r (m_i·n) its height, pointB its
 * foot on the plane. The lower end's point is the capsule's deepest (a segment's height is least at
 * an end, and a ball's lowest point is r below its centre).
 */
export function collideCapsulePlane(a: CapsuleShape, poseA: Pose, _b: PlaneShape, poseB: Pose, margin: number): Manifold | null {
  const N = axisY(sN, poseB.orientation);
  const u = axisY(sA, poseA.orientation);
  const r = a.radius;
  const hc = (poseA.position[0] - poseB.position[0]) * N[0] + (poseA.position[1] - poseB.position[1]) * N[1] + (poseA.position[2] - poseB.position[2]) * N[2];
  const du = a.halfHeight * dot(u, N);
  const n = scale(sE, N, -1);
  let points: ContactPoint[] | null = null;
  for (let i = 0; i < 2; i++) {
    const sign = i === 0 ? -1 : 1;
    const mn = capsuleOffset(sF, i, u, n);
    const h = hc + sign * du;
    const s = h - r * mn; // the height of e_i + r m
    if (s >= margin) continue;
    const e = addScaled(sB, poseA.position, u, sign * a.halfHeight);
    const pa = addScaled(sC, e, sF, r);
    const pb = addScaled(sD, pa, N, -s);
    (points ??= []).push(point(pa, pb, s, i));
  }
  return points ? { normal: [-N[0], -N[1], -N[2]], points } : null;
}

// ---- capsule–box --------------------------------------------------------------------------------

/**
 * Capsule A against box B, in B's frame: the core segment p(t) = p0 + t d, t ∈ [0, 1].
 *
 * Why this method. The capsule is segment ⊕ ball(r), so everything follows from the segment–box
 * signed distance, computed exactly in its two regimes rather than by an iteration:
 *  - apart: the squared distance f(t) = Σ_i max(0, |p_i(t)| − e_i)² is convex and piecewise
 *    quadratic in t, its pieces separated by the (≤ 6) parameters where p(t) crosses a slab plane
 *    x_i = ±e_i. On each piece the set of coordinates outside their slab is fixed, so
 *    f(t) = Σ_active (α_i + t d_i)², and f' is linear there. The minimiser is where the continuous,
 *    non-decreasing f' reaches 0: found by its sign at the breakpoints and solved on that piece,
 *    t = −Σ α_i d_i / Σ d_i². That is the exact closest pair (no tolerance, no iteration count), and
 *    f = 0 there says the segment meets the box.
 *  - overlapping: the Minkowski difference segment ⊕ (−box) is a polytope whose facet normals are
 *    the box's face normals ê_k and the cross products d × ê_k (a box swept along the segment), and
 *    the least translation of a convex polytope holding the origin is its nearest facet's. So the
 *    separating-axis test over those 6 axes is exact for the depth (not merely a bound), and its
 *    least-overlap axis is the normal. Ties go to the face axes (a lying capsule gets the clean
 *    face normal).
 * Contact points:
 *  - the normal is a box face normal (apart: the box's closest point is inside a face, one coordinate
 *    clamped, so n = ∓ê_k exactly; overlapping: a face axis won): up to 2 points over that face
 *    (capsuleBoxFace): the deepest, at the deeper segment end, and the far end of the capsule's
 *    lowest line clipped to the face's rectangle; a capsule lying on the face gets both ends of its
 *    segment clipped to the face. ids 2·face + 0/1 (face = 2k + [outward normal along +ê_k]).
 *  - an edge axis d × ê_i won: the box's edge along ê_i that is extreme along −n, and the closest
 *    points of the segment and that edge (interior to both: the facet argument again); id 100 + edge.
 *  - apart, the closest box feature an edge or a vertex: the closest pair; id 16 + 3·(the box
 *    region of the segment's closest point, 27 codes) + (segment end 0, side, end 1).
 *  - in both of these, also the segment ends that are not the closest pair's, measured against the
 *    box's support plane along n, where the end's ball moved along n meets the box (capsuleBoxEnds):
 *    ids 120 + end.
 */
export function collideCapsuleBox(a: CapsuleShape, poseA: Pose, b: BoxShape, poseB: Pose, margin: number): Manifold | null {
  const r = a.radius;
  const e = b.halfExtents;
  const ex = e[0], ey = e[1], ez = e[2];
  // segment in B's frame: p0 = Rᵀ(c − h u − x_B), d = Rᵀ(2 h u)
  const u = axisY(sA, poseA.orientation);
  const w0 = addScaled(sB, poseA.position, u, -a.halfHeight);
  const p0 = toLocalPoint(sC, poseB, w0);
  const d = inverseRotate(sD, poseB.orientation, scale(sE, u, 2 * a.halfHeight));
  const scaleLen = ex + ey + ez + 2 * a.halfHeight + r;

  // ---- apart: exact closest pair of the segment and the box (piecewise quadratic f) ----
  let nb = 0;
  breaks[nb++] = 0;
  for (let i = 0; i < 3; i++) {
    if (d[i] === 0) continue;
    const ta = (e[i] - p0[i]) / d[i];
    const tb = (-e[i] - p0[i]) / d[i];
    if (ta > 0 && ta < 1) breaks[nb++] = ta;
    if (tb > 0 && tb < 1) breaks[nb++] = tb;
  }
  breaks[nb++] = 1;
  // insertion sort (≤ 8 entries)
  for (let i = 1; i < nb; i++) {
    const v = breaks[i];
    let j = i - 1;
    while (j >= 0 && breaks[j] > v) (breaks[j + 1] = breaks[j]), j--;
    breaks[j + 1] = v;
  }
  // f'(t)/2 = Σ_active (α_i + t d_i) d_i is continuous (max(0, x)² is C¹) and non-decreasing (f is
  // convex), so the minimisers are where it reaches 0: the first such t (ta) and the last (tb).
  // (Comparing f's values between pieces would fix the minimiser only to ≈ √ε, f being flat there,
  // and the normal with it.) A flat stretch of minimisers, a segment parallel to the face it is
  // over, gives its middle: inside that face's region.
  let ta: number, tb: number;
  if (segBoxSlope(p0, d, e, 0) >= 0) ta = 0;
  else {
    let k = 1;
    while (k < nb && segBoxSlope(p0, d, e, breaks[k]) < 0) k++;
    ta = k === nb ? 1 : segBoxZero(p0, d, e, breaks[k - 1], breaks[k]);
  }
  if (segBoxSlope(p0, d, e, 1) <= 0) tb = 1;
  else {
    let k = nb - 2;
    while (k >= 0 && segBoxSlope(p0, d, e, breaks[k]) > 0) k--;
    tb = k < 0 ? 0 : segBoxZero(p0, d, e, breaks[k], breaks[k + 1]);
  }
  const tBest = 0.5 * (ta + tb);
  let fBest = 0;
  for (let i = 0; i < 3; i++) {
    const x = p0[i] + tBest * d[i];
    const o = x > e[i] ? x - e[i] : x < -e[i] ? x + e[i] : 0;
    fBest += o * o;
  }
  const dist = Math.sqrt(fBest);

  if (dist > 1e-12 * scaleLen) {
    const s = dist - r;
    if (s >= margin) return null;
    const q = set(sE, p0[0] + tBest * d[0], p0[1] + tBest * d[1], p0[2] + tBest * d[2]);
    const qb = sF;
    let code = 0, clamped = 0, k = 0;
    for (let i = 0, w = 1; i < 3; i++, w *= 3) {
      if (q[i] > e[i]) (qb[i] = e[i]), (code += 2 * w), clamped++, (k = i);
      else if (q[i] < -e[i]) (qb[i] = -e[i]), (code += w), clamped++, (k = i);
      else qb[i] = q[i];
    }
    // closest box point inside a face (one coordinate clamped): n = ∓ê_k exactly; or on its rim with
    // n a face normal to rounding (within 1e-12 rad)
    if (clamped === 1) return capsuleBoxFace(p0, d, r, e, k, qb[k] > q[k] ? 1 : -1, poseB, margin);
    const nl = set(sN, (qb[0] - q[0]) / dist, (qb[1] - q[1]) / dist, (qb[2] - q[2]) / dist);
    k = 0;
    for (let i = 1; i < 3; i++) if (Math.abs(nl[i]) > Math.abs(nl[k])) k = i;
    const j1 = (k + 1) % 3, j2 = (k + 2) % 3;
    const lat2 = nl[j1] * nl[j1] + nl[j2] * nl[j2]; // (not 1 − n_k²: that rounds to 0 below 1e−16)
    if (lat2 < 1e-24) return capsuleBoxFace(p0, d, r, e, k, nl[k] > 0 ? 1 : -1, poseB, margin);
    const pa = addScaled(sA, q, nl, r);
    const normal = rotate([0, 0, 0], poseB.orientation, nl);
    const qbLocal = set(sM, qb[0], qb[1], qb[2]);
    toWorldPoint(pa, poseB, pa);
    toWorldPoint(qb, poseB, qb);
    const region = tBest <= 0 ? 0 : tBest >= 1 ? 2 : 1;
    const points = [point(pa, qb, s, 16 + 3 * code + region)];
    capsuleBoxEnds(points, p0, d, r, e, nl, qbLocal, region, poseB, margin, scaleLen);
    return { normal, points };
  }

  // ---- overlapping: separating axes ê_k and d × ê_k (exact for the depth, see above) ----
  const p1x = p0[0] + d[0], p1y = p0[1] + d[1], p1z = p0[2] + d[2];
  let best = Infinity, bestK = 0, bestSigma = 1;
  for (let k = 0; k < 3; k++) {
    const v0 = p0[k], v1 = k === 0 ? p1x : k === 1 ? p1y : p1z;
    const lo = v0 < v1 ? v0 : v1, hi = v0 < v1 ? v1 : v0;
    const plus = hi + r + e[k]; // box pushed along +ê_k until its −e_k face clears the capsule
    const minus = e[k] - lo + r; // along −ê_k
    if (plus < best) (best = plus), (bestK = k), (bestSigma = 1);
    if (minus < best) (best = minus), (bestK = k), (bestSigma = -1);
  }
  const dl = Math.sqrt(dot(d, d));
  const tie = 1e-9 * scaleLen;
  let edgeAxis = -1, edgeSigma = 1;
  const c = sE;
  for (let i = 0; i < 3; i++) {
    // c = d × ê_i
    if (i === 0) set(c, 0, d[2], -d[1]);
    else if (i === 1) set(c, -d[2], 0, d[0]);
    else set(c, d[1], -d[0], 0);
    const cl = Math.sqrt(dot(c, c));
    if (cl < 1e-300) continue; // segment ∥ this edge direction: no axis (c's components are d's, exact)
    const sv = dot(p0, c) / cl; // the segment projects to one value (c ⊥ d)
    const hb = (ex * Math.abs(c[0]) + ey * Math.abs(c[1]) + ez * Math.abs(c[2])) / cl;
    const plus = sv + r + hb;
    const minus = hb - sv + r;
    if (plus < best - tie) (best = plus), (edgeAxis = i), (edgeSigma = 1);
    if (minus < best - tie) (best = minus), (edgeAxis = i), (edgeSigma = -1);
  }
  if (edgeAxis < 0) return capsuleBoxFace(p0, d, r, e, bestK, bestSigma, poseB, margin);

  const s = -best;
  if (s >= margin) return null;
  // n (local) = σ (d × ê_i)/|d × ê_i|
  const i = edgeAxis;
  if (i === 0) set(sN, 0, d[2], -d[1]);
  else if (i === 1) set(sN, -d[2], 0, d[0]);
  else set(sN, d[1], -d[0], 0);
  normalize(sN, sN);
  scale(sN, sN, edgeSigma);
  // the box edge along ê_i extreme along −n: x_j = −sign(n_j) e_j for j ≠ i
  const j = (i + 1) % 3, l = (i + 2) % 3;
  const sj = sN[j] > 0 ? -1 : 1, sl = sN[l] > 0 ? -1 : 1;
  const q0 = sA;
  q0[i] = -e[i];
  q0[j] = sj * e[j];
  q0[l] = sl * e[l];
  const ed = set(sB, 0, 0, 0);
  ed[i] = 2 * e[i];
  closestSegmentSegment(st, p0, d, q0, ed);
  const ps = set(sE, p0[0] + st[0] * d[0], p0[1] + st[0] * d[1], p0[2] + st[0] * d[2]);
  const pe = set(sF, q0[0] + st[1] * ed[0], q0[1] + st[1] * ed[1], q0[2] + st[1] * ed[2]);
  const sep = (pe[0] - ps[0]) * sN[0] + (pe[1] - ps[1]) * sN[1] + (pe[2] - ps[2]) * sN[2] - r;
  const pa = addScaled(sG, ps, sN, r); // (not sC: p0, read again by capsuleBoxEnds)
  const normal = rotate([0, 0, 0], poseB.orientation, sN);
  const peLocal = set(sM, pe[0], pe[1], pe[2]);
  toWorldPoint(pa, poseB, pa);
  toWorldPoint(pe, poseB, pe);
  const points = [point(pa, pe, sep, 100 + 4 * i + 2 * (sj > 0 ? 1 : 0) + (sl > 0 ? 1 : 0))];
  capsuleBoxEnds(points, p0, d, r, e, sN, peLocal, st[0] <= 0 ? 0 : st[0] >= 1 ? 2 : 1, poseB, margin, scaleLen);
  return { normal, points };
}

/**
 * The segment ends' points of a capsule–box manifold whose normal is not a box face's (the closest
 * pair at a box edge or vertex, apart; or an edge axis, overlapping), where the closest pair alone
 * would stand for the whole capsule. The speculative margin covers what any point of the capsule can
 * close in the frame (|v| + |ω| R_bound), but a row keeps only its own point out: a capsule turning
 * about its closest pair swings the rest of its segment in, unconstrained. Measured on `rain` (count
 * 200, softstep-cpu): a capsule (r 3.9 cm, h 8.5 cm) struck a box's top edge with one end and spun at
 * 33 rad/s; its other end, over the top face with a 2.9 cm gap (within the 12 cm margin), went 5.9 cm
 * into the box in the next frame.
 * Each end t ∈ {0, 1} not at the closest pair (`region`: 0 end 0, 1 the side, 2 end 1), core point
 * c = p(t) (local), gives on the manifold's one normal n:
 *   pointA = c + r m, the capsule's surface point over that end farthest along n (capsuleOffset);
 *   s = (q − pointA)·n, its gap to the plane through the box's closest (apart) or edge (overlapping)
 *   point q normal to n, a support plane of the box (h_B(−n) = −q·n): the box lies beyond it, so the
 *   gap is never more than the distance to the box along any direction, and keeping the point on its
 *   side keeps it out of the box whichever way it moves (Box2D v3 measures its clipped points against
 *   the reference face's plane the same way); s ≥ the pair's σ (pointA·n ≤ h_A(n), σ = −h_A(n) −
 *   h_B(−n) along n); pointB = pointA + s n, on the plane (not on the box's surface);
 * only when the end's ball B(c, r), moved along n, meets the box within the margin: the first root
 * λ* < margin of g(λ) = sdf_box(c + λ n) − r. Beyond the box's rim the plane has nothing behind it:
 * gated by the plane alone (or by the slabs |x_i| ≤ e_i + r), a capsule tipping over an edge with its
 * centre of mass 1 cm past it hung at 15° on its far end's row (measured under softstep-cpu, avbd-cpu
 * and xpbd-cpu); gated so, it tips off as before. (Measuring s along n to the box, λ* itself, is
 * not conservative for an end that moves across n: the capsule turning onto the edge then went
 * 1.5–1.9 cm into the box.) ids 120 + end.
 * The root: g is convex (a convex set's signed distance is convex) and C¹ outside the box, so Newton's
 * method from the left of the first root (the entry into the slabs |x_i| ≤ e_i + r, which hold
 * box ⊕ ball(r), where g ≥ 0) rises monotonically to it without passing it: exact in one step over a
 * face (g linear there), quadratic over an edge or a vertex; g' ≥ 0 before g reaches 0 means the line
 * misses. Stopped at 1e-12 of the pair's size; no point if that takes over 32 steps (not met in tests).
 */
function capsuleBoxEnds(points: ContactPoint[], p0: V3, d: V3, r: number, e: readonly number[], nl: V3, q: V3, region: number, poseB: Pose, margin: number, scaleLen: number): void {
  const dl = Math.sqrt(dot(d, d));
  if (!(dl > 0)) return;
  const u = set(sI, d[0] / dl, d[1] / dl, d[2] / dl);
  const nx = nl[0], ny = nl[1], nz = nl[2];
  const qn = q[0] * nx + q[1] * ny + q[2] * nz;
  const tol = 1e-12 * scaleLen;
  for (let end = 0; end < 2; end++) {
    if (region === 2 * end) continue; // that end is the closest pair's
    const cx = p0[0] + end * d[0], cy = p0[1] + end * d[1], cz = p0[2] + end * d[2];
    // the gap to the support plane, and the point
    const m = sJ;
    capsuleOffset(m, end, u, nl);
    const pa = set(sK, cx + r * m[0], cy + r * m[1], cz + r * m[2]);
    const sep = qn - (pa[0] * nx + pa[1] * ny + pa[2] * nz);
    if (!(sep < margin)) continue;
    // the gate: the line c + λ n against the slabs |x_i| ≤ e_i + r (entry = max of entries ≤ exit =
    // min of exits), then Newton on g(λ) = |p − clamp(p)| − r, p = c + λ n, from that entry
    let lo = -Infinity, hi = Infinity;
    for (let i = 0; i < 3; i++) {
      const ni = nl[i], ci = i === 0 ? cx : i === 1 ? cy : cz, w = e[i] + r;
      if (Math.abs(ni) < 1e-12) {
        if (Math.abs(ci) > w) (lo = Infinity), (hi = -Infinity);
        continue;
      }
      const ta = (-w - ci) / ni, tb = (w - ci) / ni;
      lo = Math.max(lo, Math.min(ta, tb));
      hi = Math.min(hi, Math.max(ta, tb));
    }
    if (!(lo <= hi) || !(lo < margin)) continue;
    let lam = lo, touched = false;
    for (let k = 0; k < 32; k++) {
      const px = cx + lam * nx, py = cy + lam * ny, pz = cz + lam * nz;
      const dx = px > e[0] ? px - e[0] : px < -e[0] ? px + e[0] : 0;
      const dy = py > e[1] ? py - e[1] : py < -e[1] ? py + e[1] : 0;
      const dz = pz > e[2] ? pz - e[2] : pz < -e[2] ? pz + e[2] : 0;
      const dist = Math.sqrt(dx * dx + dy * dy + dz * dz);
      const g = dist - r;
      if (g <= tol) {
        touched = true;
        break;
      }
      const slope = (dx * nx + dy * ny + dz * nz) / dist; // g'(λ) = ∇sdf · n
      if (!(slope < 0)) break; // g at its least, above 0: the line passes beside the box
      lam -= g / slope;
      if (!(lam < margin) || lam > hi) break;
    }
    if (!touched) continue;
    const pb = addScaled(sL, pa, nl, sep);
    toWorldPoint(pa, poseB, pa);
    toWorldPoint(pb, poseB, pb);
    points.push(point(pa, pb, sep, 120 + end));
  }
}

/** f'(t)/2 of the segment–box squared distance f (collideCapsuleBox): Σ over coordinates outside their slab of (x_i ∓ e_i) d_i. */
function segBoxSlope(p0: V3, d: V3, e: readonly number[], t: number): number {
  let g = 0;
  for (let i = 0; i < 3; i++) {
    const x = p0[i] + t * d[i];
    if (x > e[i]) g += (x - e[i]) * d[i];
    else if (x < -e[i]) g += (x + e[i]) * d[i];
  }
  return g;
}

/** The zero of f' on the piece [t0, t1] (one set of active coordinates): t = −Σ α_i d_i / Σ d_i², clamped. */
function segBoxZero(p0: V3, d: V3, e: readonly number[], t0: number, t1: number): number {
  const tm = 0.5 * (t0 + t1);
  let num = 0, den = 0;
  for (let i = 0; i < 3; i++) {
    const x = p0[i] + tm * d[i];
    if (x > e[i]) num += (p0[i] - e[i]) * d[i];
    else if (x < -e[i]) num += (p0[i] + e[i]) * d[i];
    else continue;
    den += d[i] * d[i];
  }
  const t = den > 0 ? -num / den : t0;
  return t < t0 ? t0 : t > t1 ? t1 : t;
}

/**
 * The face manifold of capsule–box (see collideCapsuleBox): n (local) = σ ê_k; the box face touched is
 * x_k = −σ e_k (outward normal −n), and heights over it along −n are z = −σ p_k − e_k.
 *  P1, the deepest point: the deeper segment end e_d (larger p·n; its cap faces n) moved r along n,
 *     s = z(e_d) − r, when e_d lies over the face: it does (apart, the closest pair is there;
 *     overlapping, the origin projects into the winning facet) unless the segment is parallel to
 *     the face, every point equally deep, or for rounding; then the seam's clipped end (below).
 *  P2: the capsule's lowest cylinder line, the seam q(t) = p(t) + r m with m = (n − (n·u)u)/|…| (on
 *     the surface for every t), clipped to the face's rectangle; its clipped end away from e_d, with
 *     s = z(t) − r m·n, when it lies more than 1e-3 r across the face from P1 (not for a capsule
 *     standing upright, m undefined). For a capsule lying flat (n ⊥ u) m = n and P1, P2 are the
 *     two ends of the segment clipped to the face.
 * Each has its foot on the face (pointB = pointA moved along n onto the face, inside the rectangle),
 * so the points face each other. ids 2·face + 0 for the point nearer end 0, + 1 for the other.
 */
function capsuleBoxFace(p0: V3, d: V3, r: number, e: readonly number[], k: number, sigma: number, poseB: Pose, margin: number): Manifold | null {
  const j = (k + 1) % 3, l = (k + 2) % 3;
  const nl = set(sN, 0, 0, 0);
  nl[k] = sigma;
  const dl = Math.sqrt(dot(d, d));
  const nu = (sigma * d[k]) / dl; // n·u, u = d/|d|
  const m = set(sF, (-nu * d[0]) / dl, (-nu * d[1]) / dl, (-nu * d[2]) / dl);
  m[k] += sigma;
  const mn = normalize(m, m); // m·n = √(1 − (n·u)²)
  const tDeep = sigma * d[k] > 0 ? 1 : 0;
  // clip the seam line q(t) = p0 + r m + t d to the rectangle |q_j| ≤ e_j, |q_l| ≤ e_l
  let lo = 0, hi = mn > 1e-12 ? 1 : -1;
  for (let pass = 0; pass < 2; pass++) {
    const c = pass === 0 ? j : l;
    const q0 = p0[c] + r * m[c];
    if (Math.abs(d[c]) < 1e-300) {
      if (Math.abs(q0) > e[c]) (lo = 1), (hi = 0);
      continue;
    }
    const ta = (-e[c] - q0) / d[c], tb = (e[c] - q0) / d[c];
    lo = Math.max(lo, Math.min(ta, tb));
    hi = Math.min(hi, Math.max(ta, tb));
  }
  const clipped = lo <= hi;
  // heights over the face along −n: z(t) = −σ p_k(t) − e_k
  const z0 = -sigma * p0[k] - e[k], zd = -sigma * d[k];
  const face = 2 * k + (sigma < 0 ? 1 : 0);
  const normal = rotate([0, 0, 0], poseB.orientation, nl);
  const ed = set(sA, p0[0] + tDeep * d[0], p0[1] + tDeep * d[1], p0[2] + tDeep * d[2]);
  // P1
  let t1: number, s1: number;
  const pa1 = sB;
  if (Math.abs(ed[j]) <= e[j] * (1 + 1e-12) && Math.abs(ed[l]) <= e[l] * (1 + 1e-12)) {
    t1 = tDeep;
    s1 = z0 + tDeep * zd - r;
    addScaled(pa1, ed, nl, r);
  } else if (clipped) {
    t1 = tDeep === 1 ? hi : lo;
    s1 = z0 + t1 * zd - r * mn;
    set(pa1, p0[0] + t1 * d[0] + r * m[0], p0[1] + t1 * d[1] + r * m[1], p0[2] + t1 * d[2] + r * m[2]);
  } else {
    // rounding only: the deep end, its foot clamped onto the face
    t1 = tDeep;
    s1 = z0 + tDeep * zd - r;
    addScaled(pa1, ed, nl, r);
  }
  // P2
  let t2 = -1, s2 = Infinity;
  const pa2 = sE;
  if (clipped) {
    const t = tDeep === 1 ? lo : hi;
    set(pa2, p0[0] + t * d[0] + r * m[0], p0[1] + t * d[1] + r * m[1], p0[2] + t * d[2] + r * m[2]);
    const dj = pa2[j] - pa1[j], dlat = pa2[l] - pa1[l];
    if (dj * dj + dlat * dlat > 1e-6 * r * r) (t2 = t), (s2 = z0 + t * zd - r * mn);
  }
  const points: ContactPoint[] = [];
  for (let i = 0; i < 2; i++) {
    const s = i === 0 ? s1 : s2;
    if (!(s < margin)) continue;
    const pa = i === 0 ? pa1 : pa2;
    const end1 = t2 >= 0 ? (t1 < t2 ? 0 : 1) : t1 < 0.5 ? 0 : 1;
    const end = i === 0 ? end1 : 1 - end1;
    const foot = set(sG, pa[0], pa[1], pa[2]);
    foot[k] = -sigma * e[k];
    foot[j] = Math.max(-e[j], Math.min(e[j], foot[j]));
    foot[l] = Math.max(-e[l], Math.min(e[l], foot[l]));
    const wa = toWorldPoint(sH, poseB, pa);
    toWorldPoint(foot, poseB, foot);
    points.push(point(wa, foot, s, 2 * face + end));
  }
  return points.length > 0 ? { normal, points } : null;
}

// ---- box–plane ----------------------------------------------------------------------------------

/**
 * Every box vertex v_i (i = bit 0: x sign, bit 1: y, bit 2: z; + when set) at height s_i = (v_i − x_B)·N
 * with s_i < margin gives a point: pointA = v_i, pointB = v_i − s_i N, n = −N, id = i (so a box
 * sliding on its face keeps its ids). More than 4: the vertices more than the least half extent above
 * the deepest are dropped (the box's far side, within a margin only at large steps), then the deepest
 * and the 3 that with it enclose the largest area in the plane are kept (reduceToFour), the widest support.
 */
export function collideBoxPlane(a: BoxShape, poseA: Pose, _b: PlaneShape, poseB: Pose, margin: number): Manifold | null {
  const N = axisY(sN, poseB.orientation);
  const e = a.halfExtents;
  let count = 0;
  let mask = 0;
  for (let i = 0; i < 8; i++) {
    set(sA, i & 1 ? e[0] : -e[0], i & 2 ? e[1] : -e[1], i & 4 ? e[2] : -e[2]);
    toWorldPoint(sB, poseA, sA);
    const o = 3 * i;
    boxVerts[o] = sB[0];
    boxVerts[o + 1] = sB[1];
    boxVerts[o + 2] = sB[2];
    const s = (sB[0] - poseB.position[0]) * N[0] + (sB[1] - poseB.position[1]) * N[1] + (sB[2] - poseB.position[2]) * N[2];
    vertS[i] = s;
    if (s < margin) (mask |= 1 << i), count++;
  }
  if (count === 0) return null;
  if (count > MAX_MANIFOLD_POINTS) {
    // a margin deeper than the box (a large step: h·(|v| + ½|g|h) grows past its height) takes in the
    // far side too, whose vertices project onto the near side's along N: the far side is not a support.
    // Only vertices within the box's least half extent of the deepest are kept (a resting face's four,
    // an edge's two and their neighbours when tilted), then the widest four of them.
    let deepest = Infinity;
    for (let i = 0; i < 8; i++) if (mask & (1 << i) && vertS[i] < deepest) deepest = vertS[i];
    const reach = deepest + Math.min(e[0], e[1], e[2]);
    for (let i = 0; i < 8; i++) if (mask & (1 << i) && vertS[i] > reach) (mask &= ~(1 << i)), count--;
    if (count > MAX_MANIFOLD_POINTS) mask = reduceToFour(mask, N);
  }
  const points: ContactPoint[] = [];
  for (let i = 0; i < 8; i++) {
    if (!(mask & (1 << i))) continue;
    const o = 3 * i;
    const s = vertS[i];
    const vx = boxVerts[o], vy = boxVerts[o + 1], vz = boxVerts[o + 2];
    points.push({ pointA: [vx, vy, vz], pointB: [vx - s * N[0], vy - s * N[1], vz - s * N[2]], separation: s, id: i });
  }
  return { normal: [-N[0], -N[1], -N[2]], points };
}

/** |((b − a) × (c − a))·N| / 2 over boxVerts indices: a triangle's area seen along N. */
function triArea(ia: number, ib: number, ic: number, N: V3): number {
  const a = 3 * ia, b = 3 * ib, c = 3 * ic;
  const ux = boxVerts[b] - boxVerts[a], uy = boxVerts[b + 1] - boxVerts[a + 1], uz = boxVerts[b + 2] - boxVerts[a + 2];
  const vx = boxVerts[c] - boxVerts[a], vy = boxVerts[c + 1] - boxVerts[a + 1], vz = boxVerts[c + 2] - boxVerts[a + 2];
  return 0.5 * ((uy * vz - uz * vy) * N[0] + (uz * vx - ux * vz) * N[1] + (ux * vy - uy * vx) * N[2]);
}

/**
 * The 4 of the candidate vertices (bit mask) that collideBoxPlane keeps: the deepest, and the 3 others
 * that with it enclose the largest area seen along N (all ≤ C(7, 3) = 35 choices are tried; this runs
 * only when more than 4 vertices are within the margin). For 4 points in a plane the convex hull's
 * area is the largest |signed area| of the three quadrilaterals through them (the other two cross
 * themselves, or, with a point inside the others' triangle, fall short of it).
 */
function reduceToFour(mask: number, N: V3): number {
  let i0 = -1;
  for (let i = 0; i < 8; i++) if (mask & (1 << i) && (i0 < 0 || vertS[i] < vertS[i0])) i0 = i;
  let best = -1, bestMask = 1 << i0;
  for (let a = 0; a < 8; a++) {
    if (!(mask & (1 << a)) || a === i0) continue;
    for (let b = a + 1; b < 8; b++) {
      if (!(mask & (1 << b)) || b === i0) continue;
      for (let c = b + 1; c < 8; c++) {
        if (!(mask & (1 << c)) || c === i0) continue;
        const q1 = Math.abs(triArea(i0, a, b, N) + triArea(i0, b, c, N)); // i0 a b c
        const q2 = Math.abs(triArea(i0, a, c, N) + triArea(i0, c, b, N)); // i0 a c b
        const q3 = Math.abs(triArea(i0, b, a, N) + triArea(i0, a, c, N)); // i0 b a c
        const area = Math.max(q1, q2, q3);
        if (area > best) (best = area), (bestMask = (1 << i0) | (1 << a) | (1 << b) | (1 << c));
      }
    }
  }
  return bestMask;
}
