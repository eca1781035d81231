/**
 * Box–box narrow phase (src/collision/box-box.ts) against geometric facts and independent references.
 *
 *  (1) face contacts: a box resting flat on a larger box (4 points at its corners, separation the
 *      gap, normal ±y); two boxes whose faces partly overlap (the corners of the overlap rectangle);
 *      a square face turned 45° on another, flat and tilted (the octagon, reduced to 4 points that
 *      keep the deepest and enclose the largest area among all 4-subsets of the octagon's vertices
 *      that hold it); equal boxes flush at a side, as in a pyramid (one point per corner, the same
 *      ids under rounding-level noise); two boxes apart corner to corner within the margin (one
 *      speculative point, at the exact distance).
 *  (2) edge–edge: two crossed boxes whose edges touch: one point, at the two edges' closest points,
 *      normal along the cross product of the edge directions.
 *  (3) a box balanced on a corner: one point, at that corner.
 *  (4) 200 seeded random pairs, and 120 nearly aligned stacked pairs, against references computed
 *      here by other means:
 *      - overlapping pairs: the penetration depth D* (minimum translation distance) is the least
 *        overlap of the two boxes' vertex projections over the 15 axes (the facet normals of the
 *        Minkowski sum); the test confirms no one of 2000 random directions gives less. The reported
 *        normal's overlap D_n (vertex projections again) must lie in [D*, bound], the bound derived
 *        from the documented choice rules (face bias (D + ε)/(1 − EDGE_REL_TOL); edge axes within
 *        EDGE_FACE_ANGLE of a face normal are edge-on-face contacts, left to the faces; nearly flush
 *        faces take the larger face as reference) in checkAgainstReferences. The deepest point may not
 *        be deeper than D_n, and equals it when n is the least-overlap axis (the origin then projects
 *        inside that facet of the Minkowski difference, so a deepest point of the incident box
 *        survives the clipping); moving B by (depth ± 1e−6)·n separates the pair / does not.
 *      - separated pairs: the distance d between the solids is the minimum over B's six faces of the
 *        exact point–box distance to A, a convex function on each face, minimised by nested
 *        golden-section search (to ~1e−13 m: the distance is 1-Lipschitz), cross-checked by a coarse
 *        grid (which can exceed it by at most the grid's half cell diagonal). null ⇔ d ≥ margin;
 *        every point's separation ≥ d (its two points are on the surfaces and s apart).
 *      For all: |n| = 1, pointA on A's surface, pointB on B's surface, pointB − pointA = s n, ≤ 4
 *      points, ids distinct integers in [0, 2²⁰).
 *  (5) a box sliding 50 steps of 1 mm over another's edge keeps its feature ids; points move ≤ the
 *      geometric bound per step.
 *  (6) swapping A and B negates the normal (where the least-overlap axis is unambiguous: the next
 *      axis overlaps 20 % more).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collideBoxBox, EDGE_FACE_ANGLE, EDGE_REL_TOL, FACE_B_REL_TOL, ABS_TOL_FRACTION, CLIP_TOL_FRACTION } from '../src/collision/box-box.js';
import type { Manifold, Pose, V3, Q4 } from '../src/collision/types.js';
import { FEATURE_ID_LIMIT, MAX_MANIFOLD_POINTS } from '../src/collision/types.js';
import type { BoxShape } from '../src/model/world.js';
import { mulberry32 } from './support/random.js';

// ---- small vector / quaternion helpers (independent of the code under test) --------------------
const add = (a: V3, b: V3): V3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const sub = (a: V3, b: V3): V3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const scale = (a: V3, s: number): V3 => [a[0] * s, a[1] * s, a[2] * s];
const dot = (a: V3, b: V3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: V3, b: V3): V3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a: V3) => Math.sqrt(dot(a, a));
const normalize = (a: V3): V3 => scale(a, 1 / norm(a));

function axisAngle(axis: V3, angle: number): Q4 {
  const u = normalize(axis);
  const s = Math.sin(angle / 2);
  return [u[0] * s, u[1] * s, u[2] * s, Math.cos(angle / 2)];
}
function qmul(a: Q4, b: Q4): Q4 {
  const [ax, ay, az, aw] = a;
  const [bx, by, bz, bw] = b;
  return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz];
}
/** v' = v + 2w (u × v) + 2 u × (u × v), q = (u, w) unit. */
function rotate(q: Q4, v: V3): V3 {
  const u: V3 = [q[0], q[1], q[2]];
  const t = scale(cross(u, v), 2);
  return add(add(v, scale(t, q[3])), cross(u, t));
}

interface Box {
  h: V3;
  pos: V3;
  q: Q4;
}
const shape = (b: Box): BoxShape => ({ type: 'box', halfExtents: b.h });
const pose = (b: Box): Pose => ({ position: b.pos, orientation: b.q });
const collide = (a: Box, b: Box, margin: number) => collideBoxBox(shape(a), pose(a), shape(b), pose(b), margin);
const IDENTITY: Q4 = [0, 0, 0, 1];

function axes(b: Box): [V3, V3, V3] {
  return [rotate(b.q, [1, 0, 0]), rotate(b.q, [0, 1, 0]), rotate(b.q, [0, 0, 1])];
}
function vertices(b: Box): V3[] {
  const [e0, e1, e2] = axes(b);
  const out: V3[] = [];
  for (const s0 of [-1, 1]) for (const s1 of [-1, 1]) for (const s2 of [-1, 1]) out.push(add(b.pos, add(scale(e0, s0 * b.h[0]), add(scale(e1, s1 * b.h[1]), scale(e2, s2 * b.h[2])))));
  return out;
}
function local(b: Box, x: V3): V3 {
  const [e0, e1, e2] = axes(b);
  const r = sub(x, b.pos);
  return [dot(r, e0), dot(r, e1), dot(r, e2)];
}
/** Signed distance of x to the box's surface (negative inside). */
function signedDistance(b: Box, x: V3): number {
  const p = local(b, x);
  const q = [Math.abs(p[0]) - b.h[0], Math.abs(p[1]) - b.h[1], Math.abs(p[2]) - b.h[2]];
  const outside = Math.hypot(Math.max(q[0], 0), Math.max(q[1], 0), Math.max(q[2], 0));
  return outside > 0 ? outside : Math.max(q[0], q[1], q[2]);
}
/** Distance from x to the solid box (0 inside). */
const distanceToSolid = (b: Box, x: V3) => Math.max(0, signedDistance(b, x));

function interval(b: Box, L: V3): [number, number] {
  let lo = Infinity, hi = -Infinity;
  for (const v of vertices(b)) {
    const p = dot(v, L);
    lo = Math.min(lo, p);
    hi = Math.max(hi, p);
  }
  return [lo, hi];
}
/** Overlap of the projections of A and B on the unit axis L (< 0: a gap). */
function overlap(a: Box, b: Box, L: V3): number {
  const [alo, ahi] = interval(a, L);
  const [blo, bhi] = interval(b, L);
  return Math.min(ahi - blo, bhi - alo);
}
function fifteenAxes(a: Box, b: Box): V3[] {
  const A = axes(a), B = axes(b);
  const out: V3[] = [...A, ...B];
  for (const u of A) for (const v of B) {
    const c = cross(u, v);
    if (norm(c) > 1e-9) out.push(normalize(c));
  }
  return out;
}
/** Least overlap over the 15 axes: the penetration depth when > 0. */
function leastOverlap(a: Box, b: Box): number {
  return Math.min(...fifteenAxes(a, b).map((L) => overlap(a, b, L)));
}
const translate = (b: Box, t: V3): Box => ({ ...b, pos: add(b.pos, t) });

/** Point on face (k, sign) of the box (axes E) at face coordinates (u, v) along the other two axes k+1, k+2. */
function facePoint(b: Box, E: V3[], k: number, sign: number, u: number, v: number): V3 {
  const k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  const out: V3 = [...b.pos];
  for (let c = 0; c < 3; c++) out[c] += E[k][c] * sign * b.h[k] + E[k1][c] * u + E[k2][c] * v;
  return out;
}
/** Distance from x to the solid box with axes E (0 inside): |max(|local| − h, 0)|. */
function solidDistanceFn(b: Box): (x: V3) => number {
  const E = axes(b);
  return (x) => {
    const r = sub(x, b.pos);
    let s = 0;
    for (let k = 0; k < 3; k++) {
      const q = Math.abs(dot(r, E[k])) - b.h[k];
      if (q > 0) s += q * q;
    }
    return Math.sqrt(s);
  };
}
/** Golden-section search for the minimum of a convex f on [lo, hi]: the bracket shrinks by 0.618 per step. */
function golden(lo: number, hi: number, f: (x: number) => number, iterations = 64): number {
  const g = (Math.sqrt(5) - 1) / 2;
  let x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  let f1 = f(x1), f2 = f(x2);
  for (let i = 0; i < iterations; i++) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - g * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + g * (hi - lo);
      f2 = f(x2);
    }
  }
  return Math.min(f1, f2, f(lo), f(hi));
}
/**
 * Distance between disjoint solids A and B: min over B's faces of dist(x, A), a convex function of x
 * on each (planar, convex) face, so min_v is convex in u and nested golden-section search finds the
 * minimum (bracket 0.618⁶⁴ ≈ 4e−14 of the face: the 1-Lipschitz distance to ~1e−13 m).
 */
function solidDistance(a: Box, b: Box): number {
  const dist = solidDistanceFn(a);
  const E = axes(b);
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    for (const sg of [-1, 1]) {
      const g = (u: number) => golden(-b.h[k2], b.h[k2], (v) => dist(facePoint(b, E, k, sg, u, v)));
      best = Math.min(best, golden(-b.h[k1], b.h[k1], g));
    }
  }
  return best;
}
/** The same by an N×N grid on each face of B, and the grid's covering radius (half cell diagonal). */
function gridDistance(a: Box, b: Box, N: number): { d: number; rho: number } {
  const dist = solidDistanceFn(a);
  const E = axes(b);
  let best = Infinity, rho = 0;
  for (let k = 0; k < 3; k++) {
    const k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    rho = Math.max(rho, 0.5 * Math.hypot((2 * b.h[k1]) / N, (2 * b.h[k2]) / N));
    for (const sg of [-1, 1])
      for (let i = 0; i <= N; i++)
        for (let j = 0; j <= N; j++) best = Math.min(best, dist(facePoint(b, E, k, sg, -b.h[k1] + (2 * b.h[k1] * i) / N, -b.h[k2] + (2 * b.h[k2] * j) / N)));
  }
  return { d: best, rho };
}

const minSep = (m: Manifold) => Math.min(...m.points.map((p) => p.separation));

/** Conventions every manifold keeps. */
function checkConventions(a: Box, b: Box, m: Manifold, label: string): void {
  const scaleLen = Math.max(...a.h, ...b.h);
  const surfTol = CLIP_TOL_FRACTION * scaleLen + 1e-12 * Math.max(1, norm(a.pos), norm(b.pos)) * 10;
  assert.ok(Math.abs(norm(m.normal) - 1) < 1e-12, `${label}: |n| = ${norm(m.normal)}`);
  assert.ok(m.points.length >= 1 && m.points.length <= MAX_MANIFOLD_POINTS, `${label}: ${m.points.length} points`);
  const ids = new Set<number>();
  for (const p of m.points) {
    assert.ok(Number.isInteger(p.id) && p.id >= 0 && p.id < FEATURE_ID_LIMIT, `${label}: id ${p.id}`);
    ids.add(p.id);
    const sa = signedDistance(a, p.pointA), sb = signedDistance(b, p.pointB);
    assert.ok(Math.abs(sa) <= surfTol, `${label}: pointA off A's surface by ${sa}`);
    assert.ok(Math.abs(sb) <= surfTol, `${label}: pointB off B's surface by ${sb}`);
    const gap = sub(p.pointB, p.pointA);
    const err = norm(sub(gap, scale(m.normal, p.separation)));
    assert.ok(err <= 1e-9 * scaleLen, `${label}: pointB − pointA − s n = ${err}`);
  }
  assert.equal(ids.size, m.points.length, `${label}: ids not distinct`);
}

function sameSet(actual: V3[], expected: V3[], tol: number, label: string): void {
  assert.equal(actual.length, expected.length, `${label}: ${actual.length} points, expected ${expected.length}`);
  for (const e of expected) assert.ok(actual.some((p) => norm(sub(p, e)) < tol), `${label}: no point at ${e}`);
}

// ---- (1) face contacts ----------------------------------------------------------------------------

test('a box resting on a larger box: 4 points at its corners, separation = gap, normal ±y', () => {
  const big: Box = { h: [2, 0.5, 1.5], pos: [0.1, -0.2, 0.3], q: IDENTITY };
  for (const gap of [0.01, 0, -0.003]) {
    for (const turn of [0, 0.5]) {
      const small: Box = { h: [0.4, 0.3, 0.25], pos: [0.5, -0.2 + 0.5 + 0.3 + gap, -0.4], q: axisAngle([0, 1, 0], turn) };
      const m = collide(big, small, 0.05);
      assert.ok(m);
      checkConventions(big, small, m, `on top gap ${gap}`);
      assert.ok(norm(sub(m.normal, [0, 1, 0])) < 1e-12);
      const corners = vertices(small).filter((v) => v[1] < small.pos[1]);
      sameSet(m.points.map((p) => p.pointB), corners, 1e-12, 'pointB at the corners');
      sameSet(m.points.map((p) => p.pointA), corners.map((c) => [c[0], 0.3, c[2]] as V3), 1e-12, 'pointA below them');
      for (const p of m.points) assert.ok(Math.abs(p.separation - gap) < 1e-12, `separation ${p.separation} vs gap ${gap}`);
      // the same pair with the small box as A (and below the big one: normal −y)
      const under: Box = { ...small, pos: [0.5, -0.2 - 0.5 - 0.3 - gap, -0.4] };
      const m2 = collide(under, big, 0.05);
      assert.ok(m2);
      checkConventions(under, big, m2, 'under');
      assert.ok(norm(sub(m2.normal, [0, 1, 0])) < 1e-12);
      const m3 = collide(big, under, 0.05);
      assert.ok(m3);
      assert.ok(norm(sub(m3.normal, [0, -1, 0])) < 1e-12);
      assert.equal(m3.points.length, 4);
      for (const p of m3.points) assert.ok(Math.abs(p.separation - gap) < 1e-12);
    }
  }
  // apart by more than the margin: nothing
  const far: Box = { h: [0.4, 0.3, 0.25], pos: [0.5, -0.2 + 0.8 + 0.06, -0.4], q: IDENTITY };
  assert.equal(collide(big, far, 0.05), null);
});

test('faces partly overlapping: the corners of the overlap rectangle', () => {
  const a: Box = { h: [1, 0.5, 1], pos: [0, 0, 0], q: IDENTITY };
  const b: Box = { h: [1, 0.5, 1], pos: [1.2, 0.99, 0.6], q: IDENTITY };
  const m = collide(a, b, 0.02);
  assert.ok(m);
  checkConventions(a, b, m, 'partial');
  assert.ok(norm(sub(m.normal, [0, 1, 0])) < 1e-12);
  // overlap of x ∈ [−1, 1] with [0.2, 2.2] and z ∈ [−1, 1] with [−0.4, 1.6]
  const rect: V3[] = [[0.2, 0.5, -0.4], [1, 0.5, -0.4], [1, 0.5, 1], [0.2, 0.5, 1]];
  sameSet(m.points.map((p) => p.pointA), rect, 1e-12, 'pointA');
  sameSet(m.points.map((p) => p.pointB), rect.map((r) => [r[0], 0.49, r[2]] as V3), 1e-12, 'pointB');
  for (const p of m.points) assert.ok(Math.abs(p.separation + 0.01) < 1e-12);
});

/** Vertices of the intersection of two convex polygons (x–z): each one's vertices inside the other, and edge crossings. */
function convexIntersection(P: [number, number][], Q: [number, number][]): [number, number][] {
  const inside = (poly: [number, number][], p: [number, number]) => {
    let sgn = 0;
    for (let i = 0; i < poly.length; i++) {
      const a = poly[i], b = poly[(i + 1) % poly.length];
      const c = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
      if (Math.abs(c) < 1e-12) continue;
      if (sgn === 0) sgn = Math.sign(c);
      else if (Math.sign(c) !== sgn) return false;
    }
    return true;
  };
  const out: [number, number][] = [...P.filter((p) => inside(Q, p)), ...Q.filter((q) => inside(P, q))];
  for (let i = 0; i < P.length; i++)
    for (let j = 0; j < Q.length; j++) {
      const p0 = P[i], p1 = P[(i + 1) % P.length], q0 = Q[j], q1 = Q[(j + 1) % Q.length];
      const r = [p1[0] - p0[0], p1[1] - p0[1]], s = [q1[0] - q0[0], q1[1] - q0[1]];
      const den = r[0] * s[1] - r[1] * s[0];
      if (Math.abs(den) < 1e-14) continue;
      const t = ((q0[0] - p0[0]) * s[1] - (q0[1] - p0[1]) * s[0]) / den;
      const u = ((q0[0] - p0[0]) * r[1] - (q0[1] - p0[1]) * r[0]) / den;
      if (t > 1e-12 && t < 1 - 1e-12 && u > 1e-12 && u < 1 - 1e-12) out.push([p0[0] + t * r[0], p0[1] + t * r[1]]);
    }
  return out;
}
/** Area of the convex hull of up to 4 points in the plane (shoelace in angular order about the centroid). */
function hullArea(pts: [number, number][]): number {
  const cx = pts.reduce((s, p) => s + p[0], 0) / pts.length, cz = pts.reduce((s, p) => s + p[1], 0) / pts.length;
  const sorted = [...pts].sort((p, q) => Math.atan2(p[1] - cz, p[0] - cx) - Math.atan2(q[1] - cz, q[0] - cx));
  let area = 0;
  for (let i = 0; i < sorted.length; i++) {
    const p = sorted[i], q = sorted[(i + 1) % sorted.length];
    area += p[0] * q[1] - q[0] * p[1];
  }
  return Math.abs(area) / 2;
}

test('a square face turned 45° on another: the octagon reduced to 4 points (deepest kept, largest area)', () => {
  const a: Box = { h: [1, 0.5, 1], pos: [0, 0, 0], q: IDENTITY };
  const square: [number, number][] = [[-1, -1], [1, -1], [1, 1], [-1, 1]];
  // flat (all octagon vertices equally deep), then B tilted 0.01 rad about a generic axis (one
  // deepest vertex). Nearly flush equal faces: A's top is the reference (normal +y); the polygon is
  // B's bottom face cut by A's side planes: in x–z, B's bottom corners' footprint ∩ A's square.
  for (const tilt of [0, 0.01]) {
    const q = qmul(axisAngle([1, 0, 0.3], tilt), axisAngle([0, 1, 0], Math.PI / 4));
    const by = axes({ h: [1, 0.5, 1], pos: [0, 0, 0], q })[1];
    const ringAt = (bb: Box) =>
      vertices(bb)
        .filter((v) => local(bb, v)[1] < 0)
        .map((v) => [v[0], v[2]] as [number, number])
        .sort((p, r) => Math.atan2(p[1] - bb.pos[2], p[0] - bb.pos[0]) - Math.atan2(r[1] - bb.pos[2], r[0] - bb.pos[0]));
    // height of B's bottom plane b_y·(p − c_B) = −h_y above (x, z), less A's top 0.5: the separation
    const sepAt = (bb: Box, x: number, z: number) => bb.pos[1] + (-bb.h[1] - by[0] * (x - bb.pos[0]) - by[2] * (z - bb.pos[2])) / by[1] - 0.5;
    const b0: Box = { h: [1, 0.5, 1], pos: [0, 1, 0], q };
    const oct = convexIntersection(square, ringAt(b0));
    assert.equal(oct.length, 8, 'the overlap is an octagon');
    // lower B along y (its footprint stays) until its deepest octagon vertex is 0.01 deep
    const lowest = Math.min(...oct.map(([x, z]) => sepAt(b0, x, z)));
    const b: Box = { ...b0, pos: [0, 1 - 0.01 - lowest, 0] };
    const depths = oct.map(([x, z]) => sepAt(b, x, z));
    const m = collide(a, b, 0.05);
    assert.ok(m);
    checkConventions(a, b, m, `octagon tilt ${tilt}`);
    assert.equal(m.points.length, 4);
    assert.ok(norm(sub(m.normal, [0, 1, 0])) < 1e-12, `normal ${m.normal}`);
    // every point is an octagon vertex, with its separation
    const chosen = m.points.map((p) => {
      const k = oct.findIndex(([x, z]) => Math.hypot(p.pointA[0] - x, p.pointA[2] - z) < 1e-9);
      assert.ok(k >= 0 && Math.abs(p.pointA[1] - 0.5) < 1e-12, `point ${p.pointA} is not an octagon vertex`);
      assert.ok(Math.abs(p.separation - depths[k]) < 1e-9, `separation ${p.separation} vs ${depths[k]}`);
      return k;
    });
    const deepest = Math.min(...depths);
    assert.ok(Math.abs(deepest + 0.01) < 1e-12);
    assert.ok(tilt === 0 || depths.filter((d) => d < deepest + 1e-6).length === 1, 'one deepest vertex when tilted');
    assert.ok(Math.abs(Math.min(...m.points.map((p) => p.separation)) - deepest) < 1e-12, 'the deepest vertex is kept');
    // brute force over all C(8,4) = 70 subsets that hold a deepest vertex
    let bestArea = 0;
    for (let i = 0; i < 8; i++) for (let j = i + 1; j < 8; j++) for (let k = j + 1; k < 8; k++) for (let l = k + 1; l < 8; l++) {
      const set = [i, j, k, l];
      if (!set.some((s) => depths[s] <= deepest + 1e-12)) continue;
      bestArea = Math.max(bestArea, hullArea(set.map((s) => oct[s])));
    }
    const area = hullArea(chosen.map((s) => oct[s]));
    assert.ok(Math.abs(area - bestArea) < 1e-9, `area ${area} vs best ${bestArea}`);
  }
});

test('flush equal boxes (the rows of a pyramid): one point per corner, ids unchanged by rounding-level noise', () => {
  const h: V3 = [0.5, 0.5, 0.5];
  const lower: Box = { h, pos: [0, 0, 0], q: IDENTITY };
  let ids: number[] | null = null;
  for (const noise of [0, 1e-13, -1e-13]) {
    // the upper box straddles two lower ones: offset by half a width in x, flush in z (its corners
    // lie on the lower box's side planes z = ±0.5)
    const upper: Box = { h, pos: [0.5 + noise, 1 - 0.001, noise], q: axisAngle([0.3, 1, 0.2], noise) };
    const m = collide(lower, upper, 0.01);
    assert.ok(m);
    checkConventions(lower, upper, m, `flush ${noise}`);
    const expected: V3[] = [[0, 0.5, -0.5], [0.5, 0.5, -0.5], [0.5, 0.5, 0.5], [0, 0.5, 0.5]];
    sameSet(m.points.map((p) => p.pointA), expected, 1e-9, 'overlap rectangle');
    for (const p of m.points) assert.ok(Math.abs(p.separation + 0.001) < 1e-9);
    const now = m.points.map((p) => p.id).sort();
    if (ids) assert.deepEqual(now, ids, 'ids changed under rounding-level noise');
    ids = now;
  }
  // side by side in a row, touching: the whole shared face, 4 points, normal +x
  const right: Box = { h, pos: [1, 0, 0], q: IDENTITY };
  const m = collide(lower, right, 0.01);
  assert.ok(m);
  checkConventions(lower, right, m, 'side by side');
  assert.ok(norm(sub(m.normal, [1, 0, 0])) < 1e-12);
  sameSet(m.points.map((p) => p.pointA), [[0.5, -0.5, -0.5], [0.5, 0.5, -0.5], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5]], 1e-12, 'shared face');
  for (const p of m.points) assert.ok(Math.abs(p.separation) < 1e-12);
});

test('boxes apart corner to corner within the margin: one speculative point at the corners', () => {
  // no face of either box faces the other (the overlap of their projections on each face is empty),
  // so the point comes from the exact closest features: the two corners, √3·0.01 apart
  const a: Box = { h: [0.5, 0.5, 0.5], pos: [0, 0, 0], q: IDENTITY };
  const b: Box = { h: [0.5, 0.5, 0.5], pos: [1.01, 1.01, 1.01], q: IDENTITY };
  const m = collide(a, b, 0.05);
  assert.ok(m);
  checkConventions(a, b, m, 'corner to corner');
  assert.equal(m.points.length, 1);
  assert.ok(norm(sub(m.normal, normalize([1, 1, 1]))) < 1e-12);
  assert.ok(norm(sub(m.points[0].pointA, [0.5, 0.5, 0.5])) < 1e-12);
  assert.ok(norm(sub(m.points[0].pointB, [0.51, 0.51, 0.51])) < 1e-12);
  assert.ok(Math.abs(m.points[0].separation - 0.01 * Math.sqrt(3)) < 1e-12);
  // beyond the margin (√3·0.03 > 0.05, though each axis gap 0.03 is below it): nothing
  assert.equal(collide(a, { ...b, pos: [1.03, 1.03, 1.03] }, 0.05), null);
});

// ---- (2) edge–edge, (3) corner --------------------------------------------------------------------

test('crossed boxes touching edge to edge: one point at the closest points of the edges', () => {
  const r = Math.SQRT1_2; // a square section of half side 0.5 turned 45° reaches 0.5·√2 = r
  // A: long along x, turned 45° about x: its top edge is the line y = r, z = 0
  const a: Box = { h: [1, 0.5, 0.5], pos: [0, 0, 0], q: axisAngle([1, 0, 0], Math.PI / 4) };
  for (const depth of [0.01, -0.02]) {
    // B: long along z, turned 45° about z: its bottom edge is the line x = 0.1, y = y_B − r
    const b: Box = { h: [0.5, 0.5, 1], pos: [0.1, 2 * r - depth, 0.2], q: axisAngle([0, 0, 1], Math.PI / 4) };
    const m = collide(a, b, 0.05);
    assert.ok(m);
    checkConventions(a, b, m, `edge ${depth}`);
    assert.equal(m.points.length, 1);
    // normal ∥ (edge of A) × (edge of B) = x × z, oriented from A to B (up)
    assert.ok(norm(sub(m.normal, [0, 1, 0])) < 1e-12, `normal ${m.normal}`);
    const p = m.points[0];
    assert.ok(norm(sub(p.pointA, [0.1, r, 0])) < 1e-12, `pointA ${p.pointA}`);
    assert.ok(norm(sub(p.pointB, [0.1, r - depth, 0])) < 1e-12, `pointB ${p.pointB}`);
    assert.ok(Math.abs(p.separation + depth) < 1e-12);
  }
});

test('a cube balanced on a corner: one point at that corner', () => {
  const a: Box = { h: [1, 0.5, 1], pos: [0, 0, 0], q: IDENTITY };
  // turn the body diagonal (1,1,1)/√3 onto +y: the corner (−h,−h,−h) points straight down
  const u = normalize([1, 1, 1]);
  const q = axisAngle(cross(u, [0, 1, 0]), Math.acos(u[1]));
  const h = 0.3;
  const corner: V3 = [0.2, 0.5 - 0.005, -0.1];
  const b: Box = { h: [h, h, h], pos: add(corner, [0, h * Math.sqrt(3), 0]), q };
  assert.ok(norm(sub(vertices(b).reduce((lo, v) => (v[1] < lo[1] ? v : lo)), corner)) < 1e-12);
  const m = collide(a, b, 0.05);
  assert.ok(m);
  checkConventions(a, b, m, 'corner');
  assert.equal(m.points.length, 1);
  assert.ok(norm(sub(m.normal, [0, 1, 0])) < 1e-12);
  assert.ok(norm(sub(m.points[0].pointB, corner)) < 1e-12);
  assert.ok(norm(sub(m.points[0].pointA, [0.2, 0.5, -0.1])) < 1e-12);
  assert.ok(Math.abs(m.points[0].separation + 0.005) < 1e-12);
});

// ---- (4) random pairs -----------------------------------------------------------------------------

type Stats = Record<string, number>;
const randomDirections = (() => {
  const rand = mulberry32(7);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const out: V3[] = [];
  for (let i = 0; i < 2000; i++) out.push(normalize([gauss(), gauss(), gauss()]));
  return out;
})();

/** The checks of (4) and (6) on one pair; counts which branch it took in stats. */
function checkAgainstReferences(a: Box, b: Box, margin: number, label: string, stats: Stats): void {
  const directions = randomDirections;
  const m = collide(a, b, margin);
  const D = leastOverlap(a, b);
  if (D > 0) {
    stats.overlap++;
    // the 15 axes are enough: no sampled direction gives less overlap
    for (const L of directions) assert.ok(overlap(a, b, L) >= D - 1e-12, `${label}: direction with overlap below the 15 axes'`);
    assert.ok(m, `${label}: overlapping by ${D} but no manifold`);
    checkConventions(a, b, m, label);
    const Dn = overlap(a, b, m.normal);
    const absTol = ABS_TOL_FRACTION * Math.min(...a.h, ...b.h);
    assert.ok(Dn >= D - 1e-12, `${label}: overlap along n ${Dn} < least ${D}`);
    // the axes the routine may choose: faces, and edge crosses farther than EDGE_FACE_ANGLE from
    // every face normal (nearer ones are edge-on-face contacts, left to face clipping)
    const faceNormals = [...axes(a), ...axes(b)];
    const allowed = fifteenAxes(a, b).filter((L, k) => k < 6 || faceNormals.every((f) => Math.acos(Math.min(1, Math.abs(dot(L, f)))) >= EDGE_FACE_ANGLE));
    const Dallowed = Math.min(...allowed.map((L) => overlap(a, b, L)));
    // the biased choice: B's face over A's only when better by FACE_B_REL_TOL·|s| + ε, an edge
    // over the chosen face only when better by EDGE_REL_TOL·|s| + ε, so along the chosen axis
    // D ≤ (D_allowed + ε)/(1 − EDGE_REL_TOL). When the least overlap is an excluded edge axis, the
    // best allowed edge axis need not be where the edges face each other (only the least facet of the
    // Minkowski difference is sure to hold the origin's projection); then the face is used, whose
    // overlap is within (min over faces + ε)/(1 − FACE_B_REL_TOL).
    let bound = (Dallowed + absTol) / (1 - EDGE_REL_TOL);
    if (Dallowed > D + 1e-12) {
      stats.edgeOnFace++;
      const Dface = Math.min(...allowed.slice(0, 6).map((L) => overlap(a, b, L)));
      bound = Math.max(bound, (Dface + absTol) / (1 - FACE_B_REL_TOL));
    }
    // nearly antiparallel best faces: the larger face is the reference whichever overlaps less; the
    // overlap along L is a support function of the Minkowski difference, Lipschitz in L with constant
    // R = max |v_A − v_B| over vertex pairs, so it exceeds the other face's by at most R·|f_A ± f_B|
    const fa = axes(a), fb = axes(b);
    const ovA = fa.map((L) => overlap(a, b, L)), ovB = fb.map((L) => overlap(a, b, L));
    const iA = ovA.indexOf(Math.min(...ovA)), iB = ovB.indexOf(Math.min(...ovB));
    const cosAB = Math.abs(dot(fa[iA], fb[iB]));
    if (cosAB > Math.cos(EDGE_FACE_ANGLE)) {
      stats.flushFaces++;
      let R = 0;
      for (const va of vertices(a)) for (const vb of vertices(b)) R = Math.max(R, norm(sub(va, vb)));
      bound = Math.max(bound, Math.min(ovA[iA], ovB[iB]) + R * Math.sqrt(Math.max(0, 2 - 2 * cosAB)));
    }
    assert.ok(Dn <= bound + 1e-12, `${label}: overlap along n ${Dn} beyond the bias bound ${bound}`);
    const depth = -minSep(m);
    assert.ok(depth <= Dn + 1e-9, `${label}: deepest point ${depth} deeper than the overlap ${Dn} along n`);
    if (Dn - D < 1e-9) {
      stats.exactAxis++;
      assert.ok(Math.abs(depth - D) < 1e-9, `${label}: depth ${depth} vs least overlap ${D}`);
      // moving B out along n by the depth (and a hair) separates the pair
      const moved = translate(b, scale(m.normal, depth + 1e-6));
      assert.ok(leastOverlap(a, moved) < 0, `${label}: still overlapping after moving out`);
      assert.ok(leastOverlap(a, translate(b, scale(m.normal, depth - 1e-6))) > 0, `${label}: the depth is over-stated`);
    }
    // (6) swapped call: the opposite normal, when the least-overlap axis is unambiguous
    const ov = fifteenAxes(a, b).map((L) => overlap(a, b, L)).sort((x, y) => x - y);
    const sw = collide(b, a, margin);
    assert.ok(sw);
    if (ov[1] > 1.2 * ov[0] + 1e-6 && Dn - D < 1e-9) {
      stats.swapChecked++;
      assert.ok(norm(add(sw.normal, m.normal)) < 1e-9, `${label}: swapped normal ${sw.normal} vs ${m.normal}`);
      assert.ok(Math.abs(minSep(sw) - minSep(m)) < 1e-9);
    }
  } else {
    stats.separated++;
    const d = solidDistance(a, b);
    const grid = gridDistance(a, b, 16);
    assert.ok(d <= grid.d + 1e-9 && grid.d <= d + grid.rho + 1e-9, `${label}: reference distance ${d} vs grid ${grid.d} ± ${grid.rho}`);
    assert.ok(d >= -D - 1e-9, `${label}: distance ${d} below the axis gap ${-D}`);
    if (m === null) {
      stats.separatedNull++;
      assert.ok(d >= margin - 1e-8, `${label}: apart by ${d} < margin but no manifold`);
    } else {
      stats.separatedHit++;
      if (Math.abs(minSep(m) - d) < 1e-8) stats.separatedExact++;
      if ((m.points[0].id & 3) === 2) stats.closestFallback++;
      assert.ok(d < margin + 1e-8, `${label}: apart by ${d} ≥ margin but a manifold`);
      checkConventions(a, b, m, label);
      for (const p of m.points) assert.ok(p.separation >= d - 1e-8, `${label}: separation ${p.separation} below the distance ${d}`);
      // the gap along n is a lower bound of the distance
      assert.ok(-overlap(a, b, m.normal) <= d + 1e-8);
    }
  }
}

/** B slid from A's centre along u to first contact (t₀, where the least overlap over the 15 axes, a
 *  concave function of t, crosses zero: bisection), then shifted by δ along u. */
function placeAlong(a: Box, b0: Box, u: V3, delta: number): Box {
  let lo = 0, hi = 4;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (leastOverlap(a, { ...b0, pos: add(a.pos, scale(u, mid)) }) > 0) lo = mid;
    else hi = mid;
  }
  return { ...b0, pos: add(a.pos, scale(u, lo + delta)) };
}
const newStats = (): Stats => ({ flushFaces: 0, separatedExact: 0, closestFallback: 0, edgeOnFace: 0, overlap: 0, exactAxis: 0, separated: 0, separatedHit: 0, separatedNull: 0, swapChecked: 0 });

test('200 random pairs against the exact depth / distance references', () => {
  const rand = mulberry32(20261123);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const randomQuat = (): Q4 => {
    const q: Q4 = [gauss(), gauss(), gauss(), gauss()];
    const n = Math.hypot(...q);
    return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
  };
  const stats = newStats();
  for (let n = 0; n < 200; n++) {
    const hA: V3 = [0.1 + 0.9 * rand(), 0.1 + 0.9 * rand(), 0.1 + 0.9 * rand()];
    const hB: V3 = [0.1 + 0.9 * rand(), 0.1 + 0.9 * rand(), 0.1 + 0.9 * rand()];
    const a: Box = { h: hA, pos: [2 * rand() - 1, 2 * rand() - 1, 2 * rand() - 1], q: randomQuat() };
    const b0: Box = { h: hB, pos: [0, 0, 0], q: randomQuat() };
    const u = normalize([gauss(), gauss(), gauss()]);
    const delta = rand() < 0.55 ? -0.2 * Math.min(...hA, ...hB) * rand() : 0.12 * rand();
    checkAgainstReferences(a, placeAlong(a, b0, u, delta), 0.05, `case ${n}`, stats);
  }
  // the sample exercises every branch
  assert.ok(stats.overlap >= 60 && stats.separatedHit >= 15 && stats.separatedNull >= 15 && stats.swapChecked >= 30, JSON.stringify(stats));
});

test('120 random stacked pairs: nearly aligned boxes (tilts up to 0.05 rad), the resting case', () => {
  // B turned from A's orientation by a quarter-turn multiple about A's y and a small tilt, placed
  // above A's top face (direction within ~0.3 rad of A's y): near-parallel faces and edges, the
  // degenerate configurations of a stack, where the face bias and the edge-on-face rule act.
  const rand = mulberry32(4242);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const stats = newStats();
  for (let n = 0; n < 120; n++) {
    const hA: V3 = [0.2 + 0.8 * rand(), 0.1 + 0.4 * rand(), 0.2 + 0.8 * rand()];
    const hB: V3 = [0.2 + 0.8 * rand(), 0.1 + 0.4 * rand(), 0.2 + 0.8 * rand()];
    const qa = axisAngle([gauss(), gauss(), gauss()], 2 * Math.PI * rand());
    const a: Box = { h: hA, pos: [0, 0, 0], q: qa };
    const tilt = n % 4 === 0 ? 0 : 0.05 * rand() ** 2;
    const qb = qmul(qa, qmul(axisAngle([gauss(), 0, gauss()], tilt), axisAngle([0, 1, 0], (Math.PI / 2) * Math.floor(4 * rand()) + (n % 3 === 0 ? 0 : 0.5 * rand()))));
    const b0: Box = { h: hB, pos: [0, 0, 0], q: qb };
    const u = rotate(qa, normalize([0.3 * gauss(), 1, 0.3 * gauss()]));
    const delta = rand() < 0.6 ? -0.05 * Math.min(...hA, ...hB) * rand() : 0.04 * rand();
    checkAgainstReferences(a, placeAlong(a, b0, u, delta), 0.02, `stacked ${n}`, stats);
  }
  assert.ok(stats.overlap >= 40 && stats.separatedHit >= 10, JSON.stringify(stats));
});

// ---- (5) sliding keeps the ids ----------------------------------------------------------------------

test('a box sliding 50 × 1 mm over an edge keeps its feature ids, its points move continuously', () => {
  const a: Box = { h: [1, 0.5, 1], pos: [0, 0, 0], q: IDENTITY };
  const turn = (20 * Math.PI) / 180;
  const step = 0.001;
  // B's corners lie at x offsets ±0.513, ±0.239 from its centre: from x = 0.9 to 0.85 two stay past
  // A's edge x = 1 and two inside, so the same features touch throughout.
  let prev: Map<number, { a: V3; b: V3 }> | null = null;
  for (let k = 0; k <= 50; k++) {
    const b: Box = { h: [0.4, 0.3, 0.4], pos: [0.9 - k * step, 0.5 + 0.3 - 0.001, 0.1], q: axisAngle([0, 1, 0], turn) };
    const m = collide(a, b, 0.02);
    assert.ok(m);
    checkConventions(a, b, m, `slide ${k}`);
    assert.equal(m.points.length, 4);
    const now = new Map(m.points.map((p) => [p.id, { a: p.pointA, b: p.pointB }]));
    if (prev) {
      assert.deepEqual([...now.keys()].sort(), [...prev.keys()].sort(), `step ${k}: ids changed`);
      // a corner moves with B (1 mm); where B's edge at angle φ to x crosses A's edge x = 1 the point
      // moves along z by step·|tan φ|, φ = 20° or 110°: at most step / tan 20°.
      for (const [id, p] of now) {
        const q = prev.get(id)!;
        assert.ok(norm(sub(p.b, q.b)) <= step / Math.tan(turn) + 1e-12, `step ${k}: point ${id} jumped ${norm(sub(p.b, q.b))}`);
        assert.ok(norm(sub(p.a, q.a)) <= step / Math.tan(turn) + 1e-12);
      }
    }
    prev = now;
  }
});
