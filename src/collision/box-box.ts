/**
 * Box–box narrow phase: a contact manifold (types.ts conventions) for two oriented boxes.
 *
 * 1. Separating axes. Two convex polyhedra are disjoint iff some axis separates their projections;
 *    for boxes the candidate axes are the face normals of the Minkowski sum A ⊕ (−B), i.e. the
 *    3 face normals of A, the 3 of B and the 9 cross products a_i × b_j of an edge direction of each.
 *    Along a unit axis L, with d = c_B − c_A, box A projects to c_A·L ± r_A(L) where
 *        r_A(L) = Σ_k h_A,k |a_k · L|     (support half-width: the farthest vertex along ±L),
 *    so the gap between the two intervals is
 *        s(L) = |d · L| − r_A(L) − r_B(L)          (> 0 apart along L, −s = overlap).
 *    Since those 15 directions are every facet normal of A ⊕ (−B), the minimum translation distance
 *    (penetration depth) of an overlapping pair is exactly −max_L s(L); for a separated pair max_L s(L)
 *    is a lower bound of their distance. If any s(L) ≥ margin the pair is apart by at least the
 *    margin: no manifold.
 * 2. Axis choice. The axis of largest s (least overlap), with a bias towards face axes: B's face
 *    replaces A's only when s_B > s_A + 0.02|s_A| + ε, an edge axis replaces the chosen face only
 *    when s_E > s_F + 0.05|s_F| + ε (ε a tiny length, 1e−5 of the smallest half extent). A resting
 *    box has its face axes and the edge crosses that duplicate them equal up to rounding; the bias
 *    makes the choice the same from step to step (stable feature ids), at the price of an overlap
 *    along n at most (D + ε)/0.95 for a least overlap D over the eligible axes. Two refinements for nearly flush boxes (normals
 *    within EDGE_FACE_ANGLE = 0.02 rad): when A's best face and B's best face are nearly antiparallel,
 *    the larger face is the reference (the overlaps along the two normals differ by lever × tilt,
 *    which tilt jitter would swap); an edge axis within that angle of a face normal is an edge lying
 *    on a face, left to the face clipping (nearFaceNormal).
 * 3. Face contact (axis = face normal of the reference box R): the reference face is R's face whose
 *    outward normal m points at the other (incident) box I; the incident face is I's face most
 *    anti-parallel to m. Clip the incident quadrilateral against R's four side planes
 *    (Sutherland–Hodgman); each surviving vertex x lies below/above the reference plane by
 *        s = m · x − (m · c_R + h_R,k)
 *    (its separation), and its foot on the reference face is x − s m. Points with s < margin are kept;
 *    more than four are reduced to four (deepest, farthest from it, then the largest triangle on
 *    each side of that diagonal: a large-area quadrilateral that keeps the deepest point).
 * 4. Edge contact (axis = a_i × b_j): A's edge along a_i farthest along n and B's edge along b_j
 *    farthest along −n; the closest points of the two lines (both ⟂ n, so their difference is s n).
 *    For the least-overlap axis they lie on both edges (the origin projects inside that facet of the
 *    Minkowski difference); when they do not (a biased or excluded choice), the face contact is used.
 * 5. Fallbacks, in order, when the chosen routine gives no point: the edge contact (after a face), the
 *    other box's best face; then, for a disjoint pair apart by less than the margin (e.g. two boxes
 *    apart diagonally, whose closest features are vertices or edges not facing along any of the 15
 *    axes), the exact closest points of the two solids (vertex–box and edge–edge): one speculative point.
 *
 * Feature ids (all < 2¹⁵ < 2²⁰), low 2 bits the kind:
 *   face:     0 | refIsB<<2 | refFace<<3 | incFace<<6 | vertexCode<<9, faces numbered 2·axis + (sign<0),
 *             vertexCode 0..3 an incident vertex, 4 + 4·edgeLabel + plane the crossing of a polygon
 *             edge (incident edges 0..3, clip-plane edges 4..7) with a side plane 0..3: a box sliding
 *             on another keeps the same codes while the same edges cross the same planes.
 *   edge:     1 | edgeA<<2 | edgeB<<6, an edge numbered 4·axis + (sign bits of the other two axes).
 *   fallback: 2 | kind<<2 | featureA<<4 | featureB<<8.
 */
import type { BoxShape } from '../model/world.js';
import type { ContactPoint, Manifold, Pose, V3 } from './types.js';

/** Relative bias: B's face axis must beat A's by this fraction of |s| (plus the absolute bias). */
export const FACE_B_REL_TOL = 0.02;
/** Relative bias: an edge axis must beat the chosen face axis by this fraction of |s|. */
export const EDGE_REL_TOL = 0.05;
/** Absolute bias, as a fraction of the smallest half extent of the two boxes. */
export const ABS_TOL_FRACTION = 1e-5;
/** A vertex within this fraction of the reference face's half extent of a side plane counts as on it (kept). */
export const CLIP_TOL_FRACTION = 1e-9;
/** An edge axis within this angle (rad) of a face normal is left to the face contact (see nearFaceNormal). */
export const EDGE_FACE_ANGLE = 0.02;
const EDGE_FACE_COS = Math.cos(EDGE_FACE_ANGLE);
/** Edge pairs with |a_i × b_j| (the sine of their angle) below this are parallel: their cross is skipped. */
const PARALLEL_SINE = 1e-6;

// ---- scratch (no allocation in the hot path) ----------------------------------------------------
// A box: centre c (3), axes R (9; R[3i+k] = world component k of local axis i), half extents h (3).
const cA = new Float64Array(3);
const RA = new Float64Array(9);
const hA = new Float64Array(3);
const cB = new Float64Array(3);
const RB = new Float64Array(9);
const hB = new Float64Array(3);
const dv = new Float64Array(3);
const L = new Float64Array(3);
// Clip polygons: up to 8 vertices (4 + one per side plane), ping-pong buffers.
const MAXV = 8;
const polyX0 = new Float64Array(MAXV * 3);
const polyX1 = new Float64Array(MAXV * 3);
const polyCode0 = new Int32Array(MAXV);
const polyCode1 = new Int32Array(MAXV);
const polyLabel0 = new Int32Array(MAXV);
const polyLabel1 = new Int32Array(MAXV);
const depthBuf = new Float64Array(MAXV);
const keepIdx = new Int32Array(MAXV);
const planeN = new Float64Array(12);
const planeO = new Float64Array(4);
const S1 = [1, -1, -1, 1];
const S2 = [1, 1, -1, -1];

/**
 * True when the unit axis L is within EDGE_FACE_ANGLE of a face normal of A or B. L = a_i × b_j
 * close to b_k means A's edge a_i is nearly parallel to B's face k (an edge lying on a face, or two
 * nearly flush faces): that contact is a line or an area, which face clipping gives, while the
 * edge–edge routine would give one point. The SAT gap along such an L can be markedly smaller than
 * along the face normal itself (a tilted face's far corners, off the touching region, count in the
 * face axis' overlap: lever × tilt), so without this an almost flat box would be held by one point.
 */
function nearFaceNormal(lx: number, ly: number, lz: number): boolean {
  for (let k = 0; k < 3; k++) {
    if (Math.abs(RA[3 * k] * lx + RA[3 * k + 1] * ly + RA[3 * k + 2] * lz) > EDGE_FACE_COS) return true;
    if (Math.abs(RB[3 * k] * lx + RB[3 * k + 1] * ly + RB[3 * k + 2] * lz) > EDGE_FACE_COS) return true;
  }
  return false;
}

/** Rotation axes of a (not necessarily unit) quaternion [x, y, z, w]: R = I + 2w[v]× + 2[v]×², scaled by 1/|q|². */
function loadBox(shape: BoxShape, pose: Pose, c: Float64Array, R: Float64Array, h: Float64Array): void {
  const p = pose.position;
  const [x, y, z, w] = pose.orientation;
  const s = 2 / (x * x + y * y + z * z + w * w);
  c[0] = p[0];
  c[1] = p[1];
  c[2] = p[2];
  // column 0 (local x in world)
  R[0] = 1 - s * (y * y + z * z);
  R[1] = s * (x * y + z * w);
  R[2] = s * (x * z - y * w);
  // column 1 (local y)
  R[3] = s * (x * y - z * w);
  R[4] = 1 - s * (x * x + z * z);
  R[5] = s * (y * z + x * w);
  // column 2 (local z)
  R[6] = s * (x * z + y * w);
  R[7] = s * (y * z - x * w);
  R[8] = 1 - s * (x * x + y * y);
  h[0] = shape.halfExtents[0];
  h[1] = shape.halfExtents[1];
  h[2] = shape.halfExtents[2];
}

/** r(L) = Σ_k h_k |axis_k · L|: half-width of the box's projection on L. */
function supportRadius(R: Float64Array, h: Float64Array, lx: number, ly: number, lz: number): number {
  return (
    h[0] * Math.abs(R[0] * lx + R[1] * ly + R[2] * lz) +
    h[1] * Math.abs(R[3] * lx + R[4] * ly + R[5] * lz) +
    h[2] * Math.abs(R[6] * lx + R[7] * ly + R[8] * lz)
  );
}

function v3(x: number, y: number, z: number): V3 {
  return [x, y, z];
}

/**
 * Contact manifold of box A (pose A) against box B (pose B), or null when they are apart by at
 * least `margin` (m). Normal from A to B; see the file comment for the method.
 */
export function collideBoxBox(a: BoxShape, poseA: Pose, b: BoxShape, poseB: Pose, margin: number): Manifold | null {
  loadBox(a, poseA, cA, RA, hA);
  loadBox(b, poseB, cB, RB, hB);
  dv[0] = cB[0] - cA[0];
  dv[1] = cB[1] - cA[1];
  dv[2] = cB[2] - cA[2];
  const absTol = ABS_TOL_FRACTION * Math.min(hA[0], hA[1], hA[2], hB[0], hB[1], hB[2]);

  // ---- face axes of A: s = |d·a_i| − h_A,i − r_B(a_i)
  let sFA = -Infinity;
  let iFA = 0;
  for (let i = 0; i < 3; i++) {
    const ax = RA[3 * i], ay = RA[3 * i + 1], az = RA[3 * i + 2];
    const s = Math.abs(dv[0] * ax + dv[1] * ay + dv[2] * az) - hA[i] - supportRadius(RB, hB, ax, ay, az);
    if (s >= margin) return null;
    if (s > sFA) {
      sFA = s;
      iFA = i;
    }
  }
  // ---- face axes of B
  let sFB = -Infinity;
  let iFB = 0;
  for (let j = 0; j < 3; j++) {
    const bx = RB[3 * j], by = RB[3 * j + 1], bz = RB[3 * j + 2];
    const s = Math.abs(dv[0] * bx + dv[1] * by + dv[2] * bz) - hB[j] - supportRadius(RA, hA, bx, by, bz);
    if (s >= margin) return null;
    if (s > sFB) {
      sFB = s;
      iFB = j;
    }
  }
  // ---- edge axes a_i × b_j (normalised; skipped when nearly parallel)
  let sE = -Infinity;
  let sAll = Math.max(sFA, sFB); // largest gap over all 15 axes: > 0 iff the boxes are disjoint
  let iE = -1;
  let jE = -1;
  for (let i = 0; i < 3; i++) {
    const ax = RA[3 * i], ay = RA[3 * i + 1], az = RA[3 * i + 2];
    for (let j = 0; j < 3; j++) {
      const bx = RB[3 * j], by = RB[3 * j + 1], bz = RB[3 * j + 2];
      let lx = ay * bz - az * by;
      let ly = az * bx - ax * bz;
      let lz = ax * by - ay * bx;
      const len = Math.sqrt(lx * lx + ly * ly + lz * lz);
      if (len < PARALLEL_SINE) continue;
      lx /= len;
      ly /= len;
      lz /= len;
      const s = Math.abs(dv[0] * lx + dv[1] * ly + dv[2] * lz) - supportRadius(RA, hA, lx, ly, lz) - supportRadius(RB, hB, lx, ly, lz);
      if (s >= margin) return null;
      if (s > sAll) sAll = s;
      if (s > sE && !nearFaceNormal(lx, ly, lz)) {
        sE = s;
        iE = i;
        jE = j;
      }
    }
  }

  // ---- choice of the reference face. Nearly antiparallel best faces (a box resting on another):
  // the two normals differ by < EDGE_FACE_ANGLE and either gives the same overlap polygon, but their
  // overlaps differ by ~lever × tilt (the tilted face's far corners count), which a small tilt
  // jitter can swap; so the larger face is the reference there (ties: A's), a choice that depends
  // on the shapes only, not on the jitter. Otherwise the least overlap, biased towards A's face.
  let faceIsB: boolean;
  const cosFaces = Math.abs(RA[3 * iFA] * RB[3 * iFB] + RA[3 * iFA + 1] * RB[3 * iFB + 1] + RA[3 * iFA + 2] * RB[3 * iFB + 2]);
  if (cosFaces > EDGE_FACE_COS) {
    const areaA = hA[(iFA + 1) % 3] * hA[(iFA + 2) % 3];
    const areaB = hB[(iFB + 1) % 3] * hB[(iFB + 2) % 3];
    faceIsB = areaB > areaA * (1 + 1e-6);
  } else {
    faceIsB = sFB > sFA + FACE_B_REL_TOL * Math.abs(sFA) + absTol;
  }
  const sF = faceIsB ? sFB : sFA;
  // ---- then an edge axis only when clearly better than that face
  const useEdge = iE >= 0 && sE > sF + EDGE_REL_TOL * Math.abs(sF) + absTol;

  let m: Manifold | null = null;
  if (useEdge) {
    m = edgeContact(iE, jE, margin);
    if (m === null) m = faceContact(faceIsB, faceIsB ? iFB : iFA, margin);
  } else {
    m = faceContact(faceIsB, faceIsB ? iFB : iFA, margin);
    if (m === null && iE >= 0) m = edgeContact(iE, jE, margin);
  }
  // last resorts: the other box's best face (an overlapping pair must get its points), then, for a
  // disjoint pair, the exact closest features
  if (m === null) m = faceContact(!faceIsB, faceIsB ? iFA : iFB, margin);
  if (m === null && sAll > 0) m = closestFeatures(margin);
  return m;
}

// ---- face contact -------------------------------------------------------------------------------

/**
 * Reference face on box (refIsB ? B : A), axis k; incident face on the other box.
 * The reference normal m points from the reference box towards the incident box.
 */
function faceContact(refIsB: boolean, k: number, margin: number): Manifold | null {
  const cR = refIsB ? cB : cA, RR = refIsB ? RB : RA, hR = refIsB ? hB : hA;
  const cI = refIsB ? cA : cB, RI = refIsB ? RA : RB, hI = refIsB ? hA : hB;
  // m = ±R_k, the sign of (c_I − c_R)·R_k (the same sign the SAT used through |d·L|)
  let mx = RR[3 * k], my = RR[3 * k + 1], mz = RR[3 * k + 2];
  const dsign = (cI[0] - cR[0]) * mx + (cI[1] - cR[1]) * my + (cI[2] - cR[2]) * mz >= 0 ? 1 : -1;
  mx *= dsign;
  my *= dsign;
  mz *= dsign;
  const refFace = 2 * k + (dsign < 0 ? 1 : 0);

  // incident face: the axis j of I with largest |I_j · m|, its side facing −m
  let jI = 0;
  let best = -1;
  let dj = 0;
  for (let j = 0; j < 3; j++) {
    const dot = RI[3 * j] * mx + RI[3 * j + 1] * my + RI[3 * j + 2] * mz;
    if (Math.abs(dot) > best) {
      best = Math.abs(dot);
      jI = j;
      dj = dot;
    }
  }
  const isign = dj > 0 ? -1 : 1;
  const incFace = 2 * jI + (isign < 0 ? 1 : 0);
  const j1 = (jI + 1) % 3, j2 = (jI + 2) % 3;
  const fcx = cI[0] + isign * hI[jI] * RI[3 * jI];
  const fcy = cI[1] + isign * hI[jI] * RI[3 * jI + 1];
  const fcz = cI[2] + isign * hI[jI] * RI[3 * jI + 2];
  const e1x = hI[j1] * RI[3 * j1], e1y = hI[j1] * RI[3 * j1 + 1], e1z = hI[j1] * RI[3 * j1 + 2];
  const e2x = hI[j2] * RI[3 * j2], e2y = hI[j2] * RI[3 * j2 + 1], e2z = hI[j2] * RI[3 * j2 + 2];
  // vertices in cyclic order (+,+), (−,+), (−,−), (+,−); label[i] = the edge (i−1 → i)
  for (let v = 0; v < 4; v++) {
    polyX0[3 * v] = fcx + S1[v] * e1x + S2[v] * e2x;
    polyX0[3 * v + 1] = fcy + S1[v] * e1y + S2[v] * e2y;
    polyX0[3 * v + 2] = fcz + S1[v] * e1z + S2[v] * e2z;
    polyCode0[v] = v;
    polyLabel0[v] = v;
  }

  // side planes of the reference face: ±u·x ≤ ±u·c_R + h_u, ±w·x ≤ ±w·c_R + h_w
  const k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  for (let p = 0; p < 4; p++) {
    const ax = p < 2 ? k1 : k2;
    const sg = p % 2 === 0 ? 1 : -1;
    const nx = sg * RR[3 * ax], ny = sg * RR[3 * ax + 1], nz = sg * RR[3 * ax + 2];
    planeN[3 * p] = nx;
    planeN[3 * p + 1] = ny;
    planeN[3 * p + 2] = nz;
    planeO[p] = nx * cR[0] + ny * cR[1] + nz * cR[2] + hR[ax];
  }
  const clipTol = CLIP_TOL_FRACTION * Math.max(hR[k1], hR[k2]);

  // Sutherland–Hodgman: for each side plane keep the part of the polygon with n·x − o ≤ 0. A vertex
  // within clipTol of the plane counts as on it (d = 0): it is kept, and no crossing is made next to
  // it, so an incident vertex lying on a side plane (boxes flush at a side) gives one point, not two.
  let n = 4;
  let inX = polyX0, inC = polyCode0, inL = polyLabel0;
  let outX = polyX1, outC = polyCode1, outL = polyLabel1;
  for (let p = 0; p < 4 && n > 0; p++) {
    const nx = planeN[3 * p], ny = planeN[3 * p + 1], nz = planeN[3 * p + 2], o = planeO[p];
    let out = 0;
    let prev = n - 1;
    let dPrev = nx * inX[3 * prev] + ny * inX[3 * prev + 1] + nz * inX[3 * prev + 2] - o;
    if (Math.abs(dPrev) <= clipTol) dPrev = 0;
    for (let cur = 0; cur < n; cur++) {
      let dCur = nx * inX[3 * cur] + ny * inX[3 * cur + 1] + nz * inX[3 * cur + 2] - o;
      if (Math.abs(dCur) <= clipTol) dCur = 0;
      if ((dPrev < 0 && dCur > 0) || (dPrev > 0 && dCur < 0)) {
        // crossing of edge (prev → cur) with the plane: x = x_prev + t (x_cur − x_prev), t = d_prev/(d_prev − d_cur) ∈ (0, 1)
        const t = dPrev / (dPrev - dCur);
        outX[3 * out] = inX[3 * prev] + t * (inX[3 * cur] - inX[3 * prev]);
        outX[3 * out + 1] = inX[3 * prev + 1] + t * (inX[3 * cur + 1] - inX[3 * prev + 1]);
        outX[3 * out + 2] = inX[3 * prev + 2] + t * (inX[3 * cur + 2] - inX[3 * prev + 2]);
        outC[out] = 4 + 4 * inL[cur] + p;
        // entering: the output edge that ends here ran along the plane; leaving: it is part of edge inL[cur]
        outL[out] = dCur < 0 ? 4 + p : inL[cur];
        out++;
      }
      if (dCur <= 0) {
        outX[3 * out] = inX[3 * cur];
        outX[3 * out + 1] = inX[3 * cur + 1];
        outX[3 * out + 2] = inX[3 * cur + 2];
        outC[out] = inC[cur];
        // a vertex on the plane reached from outside: the output edge ending here runs along the plane
        outL[out] = dCur === 0 && dPrev > 0 ? 4 + p : inL[cur];
        out++;
      }
      prev = cur;
      dPrev = dCur;
    }
    n = out;
    const tx = inX, tc = inC, tl = inL;
    inX = outX;
    inC = outC;
    inL = outL;
    outX = tx;
    outC = tc;
    outL = tl;
  }
  if (n === 0) return null;

  // separation of each clipped vertex from the reference plane m·x = m·c_R + h_R,k
  const planeOff = mx * cR[0] + my * cR[1] + mz * cR[2] + hR[k];
  let count = 0;
  for (let v = 0; v < n; v++) {
    const s = mx * inX[3 * v] + my * inX[3 * v + 1] + mz * inX[3 * v + 2] - planeOff;
    if (s < margin) {
      depthBuf[v] = s;
      keepIdx[count++] = v;
    }
  }
  if (count === 0) return null;
  if (count > 4) count = reduceToFour(inX, count, mx, my, mz);

  const idBase = (refIsB ? 1 << 2 : 0) | (refFace << 3) | (incFace << 6);
  const points: ContactPoint[] = [];
  for (let q = 0; q < count; q++) {
    const v = keepIdx[q];
    const s = depthBuf[v];
    const x = inX[3 * v], y = inX[3 * v + 1], z = inX[3 * v + 2];
    const onInc = v3(x, y, z);
    const onRef = v3(x - s * mx, y - s * my, z - s * mz); // foot on the reference face
    points.push({
      pointA: refIsB ? onInc : onRef,
      pointB: refIsB ? onRef : onInc,
      separation: s,
      id: idBase | (inC[v] << 9),
    });
  }
  // normal from A to B: m when A is the reference, −m otherwise
  const normal = refIsB ? v3(-mx, -my, -mz) : v3(mx, my, mz);
  return { normal, points };
}

/**
 * Reduces keepIdx[0..count) to 4 entries: the deepest point p1, the point p2 farthest from it, then
 * on each side of the line p1p2 the point with the largest triangle area |((p2−p1)×(p−p1))·m|/2
 * (for a fixed diagonal the quadrilateral's area is the sum of the two triangles', so each side is
 * maximised on its own). Returns the new count.
 */
function reduceToFour(X: Float64Array, count: number, mx: number, my: number, mz: number): number {
  let i1 = 0;
  for (let q = 1; q < count; q++) if (depthBuf[keepIdx[q]] < depthBuf[keepIdx[i1]]) i1 = q;
  const v1 = keepIdx[i1];
  const x1 = X[3 * v1], y1 = X[3 * v1 + 1], z1 = X[3 * v1 + 2];
  let i2 = -1;
  let far = -1;
  for (let q = 0; q < count; q++) {
    if (q === i1) continue;
    const v = keepIdx[q];
    const dx = X[3 * v] - x1, dy = X[3 * v + 1] - y1, dz = X[3 * v + 2] - z1;
    // distance within the reference plane (remove the component along m)
    const dn = dx * mx + dy * my + dz * mz;
    const d2 = dx * dx + dy * dy + dz * dz - dn * dn;
    if (d2 > far) {
      far = d2;
      i2 = q;
    }
  }
  const v2 = keepIdx[i2];
  const ex = X[3 * v2] - x1, ey = X[3 * v2 + 1] - y1, ez = X[3 * v2 + 2] - z1;
  let iPos = -1, iNeg = -1;
  let aPos = 0, aNeg = 0;
  for (let q = 0; q < count; q++) {
    if (q === i1 || q === i2) continue;
    const v = keepIdx[q];
    const px = X[3 * v] - x1, py = X[3 * v + 1] - y1, pz = X[3 * v + 2] - z1;
    // signed doubled area ((p2−p1) × (p−p1)) · m
    const area = (ey * pz - ez * py) * mx + (ez * px - ex * pz) * my + (ex * py - ey * px) * mz;
    if (area > aPos) {
      aPos = area;
      iPos = q;
    }
    if (area < aNeg) {
      aNeg = area;
      iNeg = q;
    }
  }
  const chosen = [i1, i2];
  if (iPos >= 0) chosen.push(iPos);
  if (iNeg >= 0) chosen.push(iNeg);
  // all remaining points on one side (or on the line): fill with the next largest |area|
  while (chosen.length < 4) {
    let bestQ = -1;
    let bestA = -1;
    for (let q = 0; q < count; q++) {
      if (chosen.includes(q)) continue;
      const v = keepIdx[q];
      const px = X[3 * v] - x1, py = X[3 * v + 1] - y1, pz = X[3 * v + 2] - z1;
      const area = Math.abs((ey * pz - ez * py) * mx + (ez * px - ex * pz) * my + (ex * py - ey * px) * mz);
      if (area > bestA) {
        bestA = area;
        bestQ = q;
      }
    }
    chosen.push(bestQ);
  }
  const kept = chosen.map((q) => keepIdx[q]);
  for (let q = 0; q < 4; q++) keepIdx[q] = kept[q];
  return 4;
}

// ---- edge contact -------------------------------------------------------------------------------

/**
 * Axis L = a_i × b_j (normalised, oriented A→B). A's support edge along L: the edge parallel to a_i
 * through c_A + Σ_{k≠i} h_A,k sgn(a_k·L) a_k; B's along −L likewise. Closest points of the two lines
 * p + t u, q + s v (|u| = |v| = 1, β = u·v, w = p − q): ∂/∂t, ∂/∂s of |w + t u − s v|² = 0 give
 *     t = (β e − δ)/(1 − β²),   s = e + β t,   δ = u·w, e = v·w.
 * Both lines are ⟂ L and lie in the planes L·x = max_A, L·x = min_B, so pointB − pointA = s_L L.
 * Returns null when a closest point falls off its edge (then the edges do not face each other).
 */
function edgeContact(i: number, j: number, margin: number): Manifold | null {
  const ux = RA[3 * i], uy = RA[3 * i + 1], uz = RA[3 * i + 2];
  const vx = RB[3 * j], vy = RB[3 * j + 1], vz = RB[3 * j + 2];
  let lx = uy * vz - uz * vy, ly = uz * vx - ux * vz, lz = ux * vy - uy * vx;
  const len = Math.sqrt(lx * lx + ly * ly + lz * lz);
  lx /= len;
  ly /= len;
  lz /= len;
  if (dv[0] * lx + dv[1] * ly + dv[2] * lz < 0) {
    lx = -lx;
    ly = -ly;
    lz = -lz;
  }
  L[0] = lx;
  L[1] = ly;
  L[2] = lz;
  let px = cA[0], py = cA[1], pz = cA[2];
  let edgeA = 4 * i;
  for (let o = 1; o <= 2; o++) {
    const k = (i + o) % 3;
    const dot = RA[3 * k] * lx + RA[3 * k + 1] * ly + RA[3 * k + 2] * lz;
    const sg = dot >= 0 ? 1 : -1;
    if (sg < 0) edgeA |= o; // bit 0: axis i+1 negative, bit 1: axis i+2 negative
    px += sg * hA[k] * RA[3 * k];
    py += sg * hA[k] * RA[3 * k + 1];
    pz += sg * hA[k] * RA[3 * k + 2];
  }
  let qx = cB[0], qy = cB[1], qz = cB[2];
  let edgeB = 4 * j;
  for (let o = 1; o <= 2; o++) {
    const k = (j + o) % 3;
    const dot = -(RB[3 * k] * lx + RB[3 * k + 1] * ly + RB[3 * k + 2] * lz);
    const sg = dot >= 0 ? 1 : -1;
    if (sg < 0) edgeB |= o;
    qx += sg * hB[k] * RB[3 * k];
    qy += sg * hB[k] * RB[3 * k + 1];
    qz += sg * hB[k] * RB[3 * k + 2];
  }
  const wx = px - qx, wy = py - qy, wz = pz - qz;
  const beta = ux * vx + uy * vy + uz * vz;
  const delta = ux * wx + uy * wy + uz * wz;
  const e = vx * wx + vy * wy + vz * wz;
  const den = 1 - beta * beta; // = |a_i × b_j|² ≥ PARALLEL_SINE²
  let t = (beta * e - delta) / den;
  let s = e + beta * t;
  const tolA = 1e-9 * hA[i], tolB = 1e-9 * hB[j];
  if (Math.abs(t) > hA[i] + tolA || Math.abs(s) > hB[j] + tolB) return null;
  t = Math.max(-hA[i], Math.min(hA[i], t));
  s = Math.max(-hB[j], Math.min(hB[j], s));
  const pointA = v3(px + t * ux, py + t * uy, pz + t * uz);
  const pointB = v3(qx + s * vx, qy + s * vy, qz + s * vz);
  const sep = (pointB[0] - pointA[0]) * lx + (pointB[1] - pointA[1]) * ly + (pointB[2] - pointA[2]) * lz;
  if (sep >= margin) return null;
  return { normal: v3(lx, ly, lz), points: [{ pointA, pointB, separation: sep, id: 1 | (edgeA << 2) | (edgeB << 6) }] };
}

// ---- exact closest points of two disjoint boxes (fallback) -------------------------------------

/** Vertex v (0..7) of a box: signs from its bits (bit k set → −h_k). */
function vertex(c: Float64Array, R: Float64Array, h: Float64Array, v: number, out: Float64Array): void {
  out[0] = c[0];
  out[1] = c[1];
  out[2] = c[2];
  for (let k = 0; k < 3; k++) {
    const sg = v & (1 << k) ? -h[k] : h[k];
    out[0] += sg * R[3 * k];
    out[1] += sg * R[3 * k + 1];
    out[2] += sg * R[3 * k + 2];
  }
}

/** Closest point of the solid box to x: local coordinates clamped to ±h. */
function closestOnBox(c: Float64Array, R: Float64Array, h: Float64Array, x: Float64Array, out: Float64Array): void {
  const rx = x[0] - c[0], ry = x[1] - c[1], rz = x[2] - c[2];
  out[0] = c[0];
  out[1] = c[1];
  out[2] = c[2];
  for (let k = 0; k < 3; k++) {
    const local = rx * R[3 * k] + ry * R[3 * k + 1] + rz * R[3 * k + 2];
    const cl = Math.max(-h[k], Math.min(h[k], local));
    out[0] += cl * R[3 * k];
    out[1] += cl * R[3 * k + 1];
    out[2] += cl * R[3 * k + 2];
  }
}

/** x clamped to [0, 1] */
function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

/**
 * Closest points of segments P(t) = p + t u, Q(s) = q + s v, t, s ∈ [0, 1]. f = |r + t u − s v|²,
 * r = p − q, is a convex quadratic; its stationary point solves a t − b s = −d, −b t + c s = e
 * (a = u·u, b = u·v, c = v·v, d = u·r, e = v·r): t = (b e − c d)/(a c − b²). Clamp t; the best s
 * for that t is (b t + e)/c; if s leaves [0, 1] the optimum lies on that side s = 0 or 1, where the
 * best t is −d/a or (b − d)/a, clamped. Writes the two points; returns the squared distance.
 */
function segmentSegment(p: Float64Array, u: Float64Array, q: Float64Array, v: Float64Array, outP: Float64Array, outQ: Float64Array): number {
  const rx = p[0] - q[0], ry = p[1] - q[1], rz = p[2] - q[2];
  const a = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
  const b = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
  const c = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  const d = u[0] * rx + u[1] * ry + u[2] * rz;
  const e = v[0] * rx + v[1] * ry + v[2] * rz;
  const den = a * c - b * b;
  let t = den > 1e-14 * a * c ? clamp01((b * e - c * d) / den) : 0;
  let s = (b * t + e) / c;
  if (s < 0) {
    s = 0;
    t = clamp01(-d / a);
  } else if (s > 1) {
    s = 1;
    t = clamp01((b - d) / a);
  }
  for (let k = 0; k < 3; k++) {
    outP[k] = p[k] + t * u[k];
    outQ[k] = q[k] + s * v[k];
  }
  const gx = outQ[0] - outP[0], gy = outQ[1] - outP[1], gz = outQ[2] - outP[2];
  return gx * gx + gy * gy + gz * gz;
}

const fv = new Float64Array(3);
const fc = new Float64Array(3);
const fpA = new Float64Array(3);
const fpB = new Float64Array(3);
const eP = new Float64Array(3);
const eU = new Float64Array(3);
const eQ = new Float64Array(3);
const eV = new Float64Array(3);
const eOutP = new Float64Array(3);
const eOutQ = new Float64Array(3);

/** Edge e (0..11) of a box as p + t u, t ∈ [0, 1]: axis ⌊e/4⌋, the other two axes' signs from e's low bits. */
function edgeSegment(c: Float64Array, R: Float64Array, h: Float64Array, e: number, p: Float64Array, u: Float64Array): void {
  const ax = e >> 2;
  p[0] = c[0] - h[ax] * R[3 * ax];
  p[1] = c[1] - h[ax] * R[3 * ax + 1];
  p[2] = c[2] - h[ax] * R[3 * ax + 2];
  for (let o = 1; o <= 2; o++) {
    const k = (ax + o) % 3;
    const sg = e & o ? -h[k] : h[k];
    p[0] += sg * R[3 * k];
    p[1] += sg * R[3 * k + 1];
    p[2] += sg * R[3 * k + 2];
  }
  u[0] = 2 * h[ax] * R[3 * ax];
  u[1] = 2 * h[ax] * R[3 * ax + 1];
  u[2] = 2 * h[ax] * R[3 * ax + 2];
}

/**
 * Distance of two disjoint convex polyhedra: it is attained by a vertex of one against the other
 * solid, or by an edge of each (a face–face or edge–face closest pair also has a vertex or
 * edge–edge pair at the same distance). So: 8 + 8 vertex–box clamps and 12 × 12 segment pairs.
 * One point when the distance is below the margin. Called only for pairs the SAT found apart.
 */
function closestFeatures(margin: number): Manifold | null {
  let best = Infinity;
  let id = 0;
  for (let v = 0; v < 8; v++) {
    vertex(cB, RB, hB, v, fv);
    closestOnBox(cA, RA, hA, fv, fc);
    const d2 = (fv[0] - fc[0]) ** 2 + (fv[1] - fc[1]) ** 2 + (fv[2] - fc[2]) ** 2;
    if (d2 < best) {
      best = d2;
      fpA.set(fc);
      fpB.set(fv);
      id = 2 | (0 << 2) | (v << 8);
    }
    vertex(cA, RA, hA, v, fv);
    closestOnBox(cB, RB, hB, fv, fc);
    const d2b = (fv[0] - fc[0]) ** 2 + (fv[1] - fc[1]) ** 2 + (fv[2] - fc[2]) ** 2;
    if (d2b < best) {
      best = d2b;
      fpA.set(fv);
      fpB.set(fc);
      id = 2 | (1 << 2) | (v << 4);
    }
  }
  for (let ea = 0; ea < 12; ea++) {
    edgeSegment(cA, RA, hA, ea, eP, eU);
    for (let eb = 0; eb < 12; eb++) {
      edgeSegment(cB, RB, hB, eb, eQ, eV);
      const d2 = segmentSegment(eP, eU, eQ, eV, eOutP, eOutQ);
      if (d2 < best) {
        best = d2;
        fpA.set(eOutP);
        fpB.set(eOutQ);
        id = 2 | (2 << 2) | (ea << 4) | (eb << 8);
      }
    }
  }
  const dist = Math.sqrt(best);
  if (!(dist < margin) || dist === 0) return null;
  const nx = (fpB[0] - fpA[0]) / dist, ny = (fpB[1] - fpA[1]) / dist, nz = (fpB[2] - fpA[2]) / dist;
  return {
    normal: v3(nx, ny, nz),
    points: [{ pointA: v3(fpA[0], fpA[1], fpA[2]), pointB: v3(fpB[0], fpB[1], fpB[2]), separation: dist, id }],
  };
}
