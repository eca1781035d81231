/**
 * Narrow phase for every shape pair but box–box (src/collision/pairs.ts, narrow.ts), against an
 * independent brute-force reference.
 *
 * The reference. Every solid here is a core ⊕ ball: sphere = point ⊕ ball(r), capsule = segment ⊕
 * ball(r), box = box ⊕ ball(0). The Minkowski difference A − B is then conv(P) ⊕ ball(R), where P is
 * the set of all differences of core vertices v_A − v_B (≤ 16 points) and R = r_A + r_B. Its signed
 * distance from the origin is the pair's signed distance σ (σ > 0: the gap; σ < 0: −σ is the
 * penetration depth, the least translation that separates them):
 *   origin outside conv(P): σ = dist(0, conv P) − R, and dist(0, conv P) is the least distance to a
 *     point, segment or triangle of points of P (the nearest point of a polytope lies in a face of
 *     dimension ≤ 2, the hull of ≤ 3 of its points; every such simplex lies in the hull): all ≤ 3
 *     subsets are enumerated;
 *   origin inside conv(P): σ = −(R + the distance to conv(P)'s boundary), which is the least support
 *     max_p p·u over the hull's facet normals u; the normals of all planes through 3 points of P
 *     include those, and every other direction has a larger support (referenceSigned says more).
 * A plane B (half-space y ≤ 0 of its frame) makes σ = min over A's core vertices of their height − r_A
 * (a linear function's least value over a polytope is at a vertex).
 * This is exact up to rounding: the agreement tolerance TOL = 1e-8 m (shapes of 0.1–1.5 m) is set by
 * floating point, not by a sampling density. Sampling is the second, cruder witness:
 *   - no one of 400 Fibonacci directions u has a support gap −h_A(u) − h_B(−u) above σ (a
 *     separating axis can only show less than the true separation): checks the reference;
 *   - B moved along n by (−s_min + 1e−6) no longer meets A: no sample of ~150 points on either
 *     surface lies inside the other solid (exact signed-distance functions).
 * Checked for every manifold: (1)/(2) the deepest separation equals σ (to TOL; apart and overlapping
 * alike); (3) |n| = 1 and n separates by s_min: the support gap along n ≥ s_min − TOL, and B moved by
 * (−s_min + 1e−6) n is apart by 1e−6 (the reference again, to TOL) and by the samples; (4) pointA on
 * A's surface, pointB on B's (exact SDFs, to TOL); (5) pointB − pointA = s n; every s < margin and
 * ≥ σ − TOL; ≤ 4 points; ids distinct in [0, 2²⁰). null ⇔ σ ≥ margin (cases within TOL of the margin
 * are not judged). collide(B, A): for two shape types, exactly the negated normal and swapped points
 * with the same separations and ids; for one type (computed afresh), all of the above again.
 * The random cases (seeded; NARROW_SEED=k draws another sample) cover deep, shallow and about-the-
 * margin pairs and reach every branch of each routine (read from the ids). Then fixed
 * configurations: a sphere centre inside a box, degenerate alignments, ids kept while a box slides on
 * a plane, two points for a capsule lying on a box face, on a plane and on another capsule, the
 * box–plane reduction to 4 points, plane–plane and the dispatcher's box–box.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collide } from '../src/collision/narrow.js';
import { FEATURE_ID_LIMIT, MAX_MANIFOLD_POINTS, type ContactPoint, type Manifold, type Pose, type Q4, type V3 } from '../src/collision/types.js';
import type { Shape } from '../src/model/world.js';
import { mulberry32 } from './support/random.js';

const TOL = 1e-8;
const MARGIN = 0.1;

// ---- vectors and rotations (written here, independent of the code under test) -------------------
const add = (a: V3, b: V3): V3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const sub = (a: V3, b: V3): V3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const mul = (a: V3, k: number): V3 => [a[0] * k, a[1] * k, a[2] * k];
const dot = (a: V3, b: V3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const crossV = (a: V3, b: V3): V3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a: V3) => Math.hypot(a[0], a[1], a[2]);

/** The rotation matrix of a unit quaternion [x, y, z, w], rows. */
function matrix(q: Q4): number[][] {
  const [x, y, z, w] = q;
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
  ];
}
const apply = (m: number[][], v: V3): V3 => [dot(m[0] as V3, v), dot(m[1] as V3, v), dot(m[2] as V3, v)];
const applyT = (m: number[][], v: V3): V3 => [m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2], m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2], m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2]];
const toWorld = (pose: Pose, p: V3): V3 => add(pose.position, apply(matrix(pose.orientation), p));
const toLocal = (pose: Pose, p: V3): V3 => applyT(matrix(pose.orientation), sub(p, pose.position));

function quatAxisAngle(axis: V3, angle: number): Q4 {
  const a = mul(axis, 1 / norm(axis));
  const s = Math.sin(angle / 2);
  return [a[0] * s, a[1] * s, a[2] * s, Math.cos(angle / 2)];
}
function quatMul(a: Q4, b: Q4): Q4 {
  const [ax, ay, az, aw] = a, [bx, by, bz, bw] = b;
  return [aw * bx + bw * ax + ay * bz - az * by, aw * by + bw * ay + az * bx - ax * bz, aw * bz + bw * az + ax * by - ay * bx, aw * bw - ax * bx - ay * by - az * bz];
}
/** Uniform random rotation (Shoemake). */
function randomQuat(rnd: () => number): Q4 {
  const u1 = rnd(), u2 = 2 * Math.PI * rnd(), u3 = 2 * Math.PI * rnd();
  const a = Math.sqrt(1 - u1), b = Math.sqrt(u1);
  return [a * Math.sin(u2), a * Math.cos(u2), b * Math.sin(u3), b * Math.cos(u3)];
}
function randomUnit(rnd: () => number): V3 {
  const z = 2 * rnd() - 1, phi = 2 * Math.PI * rnd(), s = Math.sqrt(1 - z * z);
  return [s * Math.cos(phi), s * Math.sin(phi), z];
}
function fibonacci(n: number): V3[] {
  const out: V3[] = [];
  const g = Math.PI * (3 - Math.sqrt(5));
  for (let i = 0; i < n; i++) {
    const y = 1 - (2 * (i + 0.5)) / n, r = Math.sqrt(1 - y * y);
    out.push([r * Math.cos(g * i), y, r * Math.sin(g * i)]);
  }
  return out;
}
const DIRECTIONS = fibonacci(400);

// ---- the solids: cores, supports, signed distance functions, surface samples --------------------
interface Solid {
  shape: Shape;
  pose: Pose;
}
/** Core vertices (world) and the radius around them. */
function core(b: Solid): { verts: V3[]; r: number } {
  const s = b.shape;
  if (s.type === 'sphere') return { verts: [b.pose.position], r: s.radius };
  if (s.type === 'capsule') return { verts: [toWorld(b.pose, [0, -s.halfHeight, 0]), toWorld(b.pose, [0, s.halfHeight, 0])], r: s.radius };
  if (s.type === 'box') {
    const [a, bb, c] = s.halfExtents;
    const verts: V3[] = [];
    for (const x of [-a, a]) for (const y of [-bb, bb]) for (const z of [-c, c]) verts.push(toWorld(b.pose, [x, y, z]));
    return { verts, r: 0 };
  }
  throw new Error('no core for a plane');
}
const planeNormal = (b: Solid): V3 => apply(matrix(b.pose.orientation), [0, 1, 0]);
/** h(u) = max over the solid of x·u. */
function support(b: Solid, u: V3): number {
  if (b.shape.type === 'plane') {
    const N = planeNormal(b);
    if (norm(sub(u, N)) > 1e-12) return Infinity;
    return dot(b.pose.position, N);
  }
  const { verts, r } = core(b);
  let m = -Infinity;
  for (const v of verts) m = Math.max(m, dot(v, u));
  return m + r * norm(u);
}
/** Exact signed distance of x to the solid. */
function sdf(b: Solid, x: V3): number {
  const s = b.shape;
  if (s.type === 'plane') return dot(sub(x, b.pose.position), planeNormal(b));
  const p = toLocal(b.pose, x);
  if (s.type === 'sphere') return norm(p) - s.radius;
  if (s.type === 'capsule') {
    const y = Math.max(-s.halfHeight, Math.min(s.halfHeight, p[1]));
    return Math.hypot(p[0], p[1] - y, p[2]) - s.radius;
  }
  const q = [Math.abs(p[0]) - s.halfExtents[0], Math.abs(p[1]) - s.halfExtents[1], Math.abs(p[2]) - s.halfExtents[2]];
  const out = Math.hypot(Math.max(q[0], 0), Math.max(q[1], 0), Math.max(q[2], 0));
  return out + Math.min(Math.max(q[0], q[1], q[2]), 0);
}
/** ~150 points on the surface (none for a plane: it is checked through the other solid's samples). */
function surfaceSamples(b: Solid): V3[] {
  const s = b.shape;
  const local: V3[] = [];
  if (s.type === 'sphere') for (const u of fibonacci(150)) local.push(mul(u, s.radius));
  else if (s.type === 'capsule') {
    for (const u of fibonacci(80)) local.push(add(mul(u, s.radius), [0, u[1] >= 0 ? s.halfHeight : -s.halfHeight, 0]));
    for (let i = 0; i <= 6; i++)
      for (let k = 0; k < 12; k++) {
        const a = (2 * Math.PI * k) / 12;
        local.push([s.radius * Math.cos(a), -s.halfHeight + (2 * s.halfHeight * i) / 6, s.radius * Math.sin(a)]);
      }
  } else if (s.type === 'box') {
    const e = s.halfExtents;
    for (let ax = 0; ax < 3; ax++)
      for (const side of [-1, 1])
        for (let i = 0; i <= 4; i++)
          for (let j = 0; j <= 4; j++) {
            const p: V3 = [0, 0, 0];
            p[ax] = side * e[ax];
            p[(ax + 1) % 3] = e[(ax + 1) % 3] * (-1 + i / 2);
            p[(ax + 2) % 3] = e[(ax + 2) % 3] * (-1 + j / 2);
            local.push(p);
          }
  }
  return local.map((p) => toWorld(b.pose, p));
}

// ---- the exact reference ------------------------------------------------------------------------
/** Distance from the origin to the triangle abc's interior (Infinity when its projection is outside). */
function triangleInterior(a: V3, b: V3, c: V3): number {
  const m = crossV(sub(b, a), sub(c, a));
  const mm = dot(m, m);
  if (mm < 1e-24) return Infinity;
  const lam = dot(a, m) / mm;
  const p = mul(m, lam);
  if (dot(crossV(sub(b, a), sub(p, a)), m) < 0 || dot(crossV(sub(c, b), sub(p, b)), m) < 0 || dot(crossV(sub(a, c), sub(p, c)), m) < 0) return Infinity;
  return Math.abs(lam) * Math.sqrt(mm);
}
function segmentDistance(a: V3, b: V3): number {
  const d = sub(b, a);
  const dd = dot(d, d);
  const t = dd > 0 ? Math.max(0, Math.min(1, -dot(a, d) / dd)) : 0;
  return norm(add(a, mul(d, t)));
}
/** The pair's signed distance (header). */
function referenceSigned(A: Solid, B: Solid): number {
  if (B.shape.type === 'plane') {
    const { verts, r } = core(A);
    const N = planeNormal(B);
    return Math.min(...verts.map((v) => dot(sub(v, B.pose.position), N))) - r;
  }
  const ca = core(A), cb = core(B);
  const P: V3[] = [];
  for (const a of ca.verts) for (const b of cb.verts) P.push(sub(a, b));
  const R = ca.r + cb.r;
  let d = Infinity;
  for (let i = 0; i < P.length; i++) {
    d = Math.min(d, norm(P[i]));
    for (let j = i + 1; j < P.length; j++) {
      d = Math.min(d, segmentDistance(P[i], P[j]));
      for (let k = j + 1; k < P.length; k++) d = Math.min(d, triangleInterior(P[i], P[j], P[k]));
    }
  }
  // Inside a solid conv P the depth is the least support h_P(u) = max_p p·u over its facet normals u
  // (any unit u has h_P(u) ≥ the depth, a facet normal attains it). Every facet holds 3 points of P,
  // so the normals ±m/|m| of all planes through 3 points include the facet normals; their least
  // support is the depth when > 0, and ≤ 0 when the origin is outside (a facet separates it) or conv P
  // is flat (the plane's two normals give ±offset). A normal from a thin triangle is off by ≈ ε S/w
  // only in the tilt towards its thin direction w, which moves the support by ≈ ε S.
  const S = Math.max(...P.map(norm), 1e-3);
  let minH = Infinity;
  for (let i = 0; i < P.length; i++)
    for (let j = i + 1; j < P.length; j++)
      for (let k = j + 1; k < P.length; k++) {
        const m = crossV(sub(P[j], P[i]), sub(P[k], P[i]));
        const ml = norm(m);
        if (ml <= 1e-14 * S * S) continue;
        const u = mul(m, 1 / ml);
        let hp = -Infinity, hm = -Infinity;
        for (const p of P) (hp = Math.max(hp, dot(u, p))), (hm = Math.max(hm, -dot(u, p)));
        minH = Math.min(minH, hp, hm);
      }
  if (minH > 0 && minH < Infinity) return -(R + minH); // the origin inside conv P: R + its distance to the boundary
  return d - R; // outside, or conv P flat (the union of its triangles is all of it: d = 0 inside)
}

/** Support gap along u: −h_A(u) − h_B(−u) (> 0: u separates them by that much). */
const gap = (A: Solid, B: Solid, u: V3) => -support(A, u) - support(B, mul(u, -1));

// ---- checks -------------------------------------------------------------------------------------
function translated(b: Solid, t: V3): Solid {
  return { shape: b.shape, pose: { position: add(b.pose.position, t), orientation: b.pose.orientation } };
}

function checkPair(A: Solid, B: Solid, margin: number, where: string): { sigma: number; m: Manifold | null } {
  const sigma = referenceSigned(A, B);
  // the sampled directions never show more separation than σ (a check of the reference)
  if (B.shape.type !== 'plane') for (const u of DIRECTIONS) assert.ok(gap(A, B, u) <= sigma + 1e-9, `${where}: a sampled axis separates more than the reference σ = ${sigma}`);
  const m = collide(A.shape, A.pose, B.shape, B.pose, margin);
  const swapped = collide(B.shape, B.pose, A.shape, A.pose, margin);
  if (sigma >= margin + TOL) {
    assert.equal(m, null, `${where}: apart by σ = ${sigma} ≥ margin, but a manifold`);
    assert.equal(swapped, null, `${where}: swapped: apart, but a manifold`);
    return { sigma, m };
  }
  if (sigma > margin - TOL) return { sigma, m }; // on the margin: either answer
  assert.ok(m, `${where}: σ = ${sigma} < margin, but no manifold`);
  checkManifold(A, B, m, sigma, margin, where);
  // the swap: a pair of two types is computed once and turned round (exactly the negated normal and
  // the swapped points); a pair of one type is computed afresh the other way round, and must be as
  // right (the two-point capsule form then clips along the other capsule's axis)
  assert.ok(swapped, `${where}: swapped: no manifold`);
  if (A.shape.type !== B.shape.type) {
    assert.deepEqual(swapped.normal, m.normal.map((c) => -c), `${where}: swapped normal`);
    assert.equal(swapped.points.length, m.points.length);
    for (let i = 0; i < m.points.length; i++) {
      const p: ContactPoint = m.points[i], q: ContactPoint = swapped.points[i];
      assert.deepEqual([q.pointA, q.pointB, q.separation, q.id], [p.pointB, p.pointA, p.separation, p.id], `${where}: swapped point ${i}`);
    }
  } else {
    checkManifold(B, A, swapped, sigma, margin, `${where} (swapped)`);
    // cores apart: the direction of least distance is unique, so the two normals are opposite
    if (sigma + core(A).r + core(B).r > 1e-6) assert.ok(norm(add(swapped.normal, m.normal)) < 1e-9, `${where}: swapped normal ${swapped.normal} vs ${m.normal}`);
  }
  return { sigma, m };
}

/** (1)–(5) for one manifold of A and B whose signed distance is σ. */
function checkManifold(A: Solid, B: Solid, m: Manifold, sigma: number, margin: number, where: string): void {
  const n = m.normal;
  assert.ok(Math.abs(norm(n) - 1) < 1e-12, `${where}: |n| = ${norm(n)}`);
  assert.ok(m.points.length >= 1 && m.points.length <= MAX_MANIFOLD_POINTS, `${where}: ${m.points.length} points`);
  const ids = new Set<number>();
  let sMin = Infinity;
  for (const p of m.points) {
    assert.ok(Number.isInteger(p.id) && p.id >= 0 && p.id < FEATURE_ID_LIMIT, `${where}: id ${p.id}`);
    assert.ok(!ids.has(p.id), `${where}: id ${p.id} twice`);
    ids.add(p.id);
    assert.ok(p.separation < margin, `${where}: s = ${p.separation} ≥ margin`);
    assert.ok(p.separation >= sigma - TOL, `${where}: s = ${p.separation} below the true σ = ${sigma}`);
    sMin = Math.min(sMin, p.separation);
    // (4) on the surfaces
    if (p.id >= 120 && ((A.shape.type === 'capsule' && B.shape.type === 'box') || (A.shape.type === 'box' && B.shape.type === 'capsule'))) {
      // a capsule end's point beside an edge or vertex contact (pairs.ts capsuleBoxEnds): the capsule's
      // point on its surface; the box's on the box's support plane normal to n (outside the box or on
      // it); and the end's ball, moved along n towards the box, meets it within the margin (the gate)
      const capIsA = A.shape.type === 'capsule';
      const cap = capIsA ? A : B, box = capIsA ? B : A;
      const pc = capIsA ? p.pointA : p.pointB, pbx = capIsA ? p.pointB : p.pointA;
      const towards = capIsA ? n : mul(n, -1); // capsule → box
      assert.ok(Math.abs(sdf(cap, pc)) <= TOL, `${where}: end point ${p.id}: off the capsule's surface by ${sdf(cap, pc)}`);
      assert.ok(Math.abs(dot(pbx, towards) + support(box, mul(towards, -1))) <= TOL, `${where}: end point ${p.id}: off the support plane`);
      assert.ok(sdf(box, pbx) >= -TOL, `${where}: end point ${p.id}: inside the box by ${sdf(box, pbx)}`);
      const c = core(cap).verts[p.id - 120], rc = core(cap).r;
      let least = Infinity;
      for (let k = 0; k <= 2000; k++) least = Math.min(least, sdf(box, add(c, mul(towards, (k / 2000) * margin))) - rc);
      assert.ok(least <= 1e-4 * margin, `${where}: end point ${p.id}: its ball moved along n by up to the margin stays ${least} from the box`);
    } else {
      assert.ok(Math.abs(sdf(A, p.pointA)) <= TOL, `${where}: pointA off A's surface by ${sdf(A, p.pointA)}`);
      assert.ok(Math.abs(sdf(B, p.pointB)) <= TOL, `${where}: pointB off B's surface by ${sdf(B, p.pointB)}`);
    }
    // (5) facing along n
    const r = sub(sub(p.pointB, p.pointA), mul(n, p.separation));
    assert.ok(norm(r) <= TOL, `${where}: pointB − pointA − s n = ${norm(r)}`);
  }
  // (1), (2) the deepest point is the signed distance
  assert.ok(Math.abs(sMin - sigma) <= TOL, `${where}: deepest s = ${sMin}, reference σ = ${sigma}`);
  // (3) n is a direction that separates by s_min (the support gap along n), so B moved by
  // (−s_min + ε) n is clear of A; checked again exactly (the reference: apart by ε) and by sampling
  assert.ok(gap(A, B, n) >= sMin - TOL, `${where}: the support gap along n ${gap(A, B, n)} < s_min ${sMin}`);
  const Bm = translated(B, mul(n, -sMin + 1e-6));
  const after = referenceSigned(A, Bm);
  assert.ok(Math.abs(after - 1e-6) <= TOL, `${where}: B moved along n by −s_min + 1e-6 is apart by ${after}`);
  for (const x of surfaceSamples(Bm)) assert.ok(sdf(A, x) > 0, `${where}: B moved along n still inside A (sample ${x})`);
  for (const x of surfaceSamples(A)) assert.ok(sdf(Bm, x) > 0, `${where}: A still inside B moved along n`);
}

// ---- random configurations ----------------------------------------------------------------------
function randomShape(type: Shape['type'], rnd: () => number): Shape {
  const u = (a: number, b: number) => a + (b - a) * rnd();
  if (type === 'sphere') return { type, radius: u(0.1, 1) };
  if (type === 'box') return { type, halfExtents: [u(0.1, 1), u(0.1, 1), u(0.1, 1)] };
  if (type === 'capsule') return { type, radius: u(0.1, 0.6), halfHeight: u(0.1, 1.2) };
  return { type: 'plane' };
}
/** A target gap along the approach direction: deep, shallow, or about the margin. */
function randomTarget(rnd: () => number): number {
  const k = rnd();
  if (k < 0.4) return -0.05 - 0.8 * rnd();
  if (k < 0.7) return -0.05 + (MARGIN + 0.05) * rnd();
  return MARGIN * (0.5 + 1.5 * rnd());
}
/** Puts B so that its support gap to A along the random direction w is τ (then σ ≥ τ). */
function place(A: Solid, shapeB: Shape, qB: Q4, w: V3, tau: number): Solid {
  const B0: Solid = { shape: shapeB, pose: { position: [0, 0, 0], orientation: qB } };
  const along = tau + support(A, w) + support(B0, mul(w, -1));
  return translated(B0, mul(w, along));
}
/** A small random rotation, angle 10^U(lo, hi). */
const tinyTurn = (rnd: () => number, lo: number, hi: number): Q4 => quatAxisAngle(randomUnit(rnd), 10 ** (lo + (hi - lo) * rnd()));

type Maker = (rnd: () => number) => [Solid, Solid, number];
function generic(ta: Shape['type'], tb: Shape['type']): Maker {
  return (rnd) => {
    const A: Solid = { shape: randomShape(ta, rnd), pose: { position: [2 * rnd() - 1, 2 * rnd() - 1, 2 * rnd() - 1], orientation: randomQuat(rnd) } };
    if (tb === 'plane') {
      // A over a random plane: A's lowest point at height τ
      const B: Solid = { shape: { type: 'plane' }, pose: { position: [2 * rnd() - 1, 2 * rnd() - 1, 2 * rnd() - 1], orientation: randomQuat(rnd) } };
      const N = planeNormal(B);
      const h = randomTarget(rnd) + support({ shape: A.shape, pose: { position: [0, 0, 0], orientation: A.pose.orientation } }, mul(N, -1));
      const v = randomUnit(rnd);
      const lateral = sub(v, mul(N, dot(v, N)));
      return [{ shape: A.shape, pose: { position: add(add(B.pose.position, mul(N, h)), lateral), orientation: A.pose.orientation } }, B, MARGIN];
    }
    // σ ≥ τ after place(); a few steps along w bring σ near τ (dσ/dλ along w is in (0, 1]), so the
    // regimes (deep, near, about the margin) are all well represented
    const w = randomUnit(rnd), tau = randomTarget(rnd);
    let B = place(A, randomShape(tb, rnd), randomQuat(rnd), w, tau);
    for (let k = 0; k < 4; k++) {
      const sigma = referenceSigned(A, B);
      if (Math.abs(sigma - tau) < 1e-3) break;
      B = translated(B, mul(w, tau - sigma));
    }
    return [A, B, MARGIN];
  };
}
/** A ball whose centre is inside a box (the push-out branch). */
const sphereInBox: Maker = (rnd) => {
  const box: Solid = { shape: randomShape('box', rnd), pose: { position: [rnd(), rnd(), rnd()], orientation: randomQuat(rnd) } };
  const e = (box.shape as { halfExtents: V3 }).halfExtents;
  const c: V3 = [e[0] * (2 * rnd() - 1), e[1] * (2 * rnd() - 1), e[2] * (2 * rnd() - 1)];
  return [{ shape: randomShape('sphere', rnd), pose: { position: toWorld(box.pose, c), orientation: randomQuat(rnd) } }, box, MARGIN];
};
/** Capsules nearly parallel (the two-point form and its neighbourhood). */
const parallelCapsules: Maker = (rnd) => {
  const qA = randomQuat(rnd);
  const A: Solid = { shape: randomShape('capsule', rnd), pose: { position: [0, 0, 0], orientation: qA } };
  const qB = quatMul(tinyTurn(rnd, -7, -1.5), qA);
  const axis = apply(matrix(qA), [0, 1, 0]);
  let w = randomUnit(rnd);
  w = mul(sub(w, mul(axis, dot(w, axis))), 1 / norm(sub(w, mul(axis, dot(w, axis)))));
  const B = place(A, randomShape('capsule', rnd), qB, w, randomTarget(rnd));
  return [A, translated(B, mul(axis, (rnd() - 0.5) * 2)), MARGIN];
};
/** A capsule lying on (or near, or in) a box face, nearly parallel to it, sometimes overhanging. */
const capsuleOnBoxFace: Maker = (rnd) => {
  const box: Solid = { shape: randomShape('box', rnd), pose: { position: [rnd(), rnd(), rnd()], orientation: randomQuat(rnd) } };
  const e = (box.shape as { halfExtents: V3 }).halfExtents;
  const cap = randomShape('capsule', rnd) as { type: 'capsule'; radius: number; halfHeight: number };
  const k = Math.floor(3 * rnd()), side = rnd() < 0.5 ? -1 : 1, j = (k + 1 + Math.floor(2 * rnd())) % 3;
  // capsule axis along box axis j (in the face k), turned a little
  const axisLocal: V3 = [0, 0, 0];
  axisLocal[j] = 1;
  const align = quatFromTo([0, 1, 0], axisLocal);
  const qLocal = quatMul(tinyTurn(rnd, -8, -1), align);
  const centre: V3 = [0, 0, 0];
  centre[k] = side * (e[k] + cap.radius + randomTarget(rnd) * 0.5);
  centre[j] = (rnd() - 0.5) * 2 * (e[j] + cap.halfHeight);
  const l = 3 - k - j;
  centre[l] = (rnd() - 0.5) * 2.2 * e[l];
  const A: Solid = { shape: cap, pose: { position: toWorld(box.pose, centre), orientation: quatMul(box.pose.orientation, qLocal) } };
  return [A, box, MARGIN];
};
/** A box with a face nearly parallel to a plane; sometimes a margin larger than the box (> 4 candidates). */
const boxFlatOnPlane: Maker = (rnd) => {
  const plane: Solid = { shape: { type: 'plane' }, pose: { position: [rnd(), rnd(), rnd()], orientation: randomQuat(rnd) } };
  const box = randomShape('box', rnd) as { type: 'box'; halfExtents: V3 };
  const k = Math.floor(3 * rnd());
  const faceDown: V3 = [0, 0, 0];
  faceDown[k] = rnd() < 0.5 ? 1 : -1;
  // box-local faceDown turned to the plane's −y, a spin about y and a small tilt
  const q = quatMul(plane.pose.orientation, quatMul(tinyTurn(rnd, -8, -1.5), quatMul(quatAxisAngle([0, 1, 0], 2 * Math.PI * rnd()), quatFromTo(faceDown, [0, -1, 0]))));
  const N = planeNormal(plane);
  const B0: Solid = { shape: box, pose: { position: [0, 0, 0], orientation: q } };
  const h = randomTarget(rnd) * 0.3 + support(B0, mul(N, -1));
  const margin = rnd() < 0.3 ? 2.5 : MARGIN;
  return [{ shape: box, pose: { position: add(plane.pose.position, mul(N, h)), orientation: q } }, plane, margin];
};
/** A capsule nearly parallel to a plane. */
const capsuleFlatOnPlane: Maker = (rnd) => {
  const plane: Solid = { shape: { type: 'plane' }, pose: { position: [rnd(), rnd(), rnd()], orientation: randomQuat(rnd) } };
  const cap = randomShape('capsule', rnd);
  const q = quatMul(plane.pose.orientation, quatMul(tinyTurn(rnd, -8, -1), quatAxisAngle([0, 0, 1], Math.PI / 2)));
  const N = planeNormal(plane);
  const B0: Solid = { shape: cap, pose: { position: [0, 0, 0], orientation: q } };
  const h = randomTarget(rnd) * 0.3 + support(B0, mul(N, -1));
  return [{ shape: cap, pose: { position: add(plane.pose.position, mul(N, h)), orientation: q } }, plane, MARGIN];
};
function quatFromTo(a: V3, b: V3): Q4 {
  const c = crossV(a, b), d = dot(a, b);
  if (d < -1 + 1e-12) return quatAxisAngle(Math.abs(a[0]) < 0.9 ? crossV(a, [1, 0, 0]) : crossV(a, [0, 1, 0]), Math.PI);
  const q: Q4 = [c[0], c[1], c[2], 1 + d];
  const l = Math.hypot(...q);
  return q.map((x) => x / l) as Q4;
}

/** Which branch of its routine made a point, read from its id (pairs.ts documents the ids). */
function idClass(name: string, id: number): string {
  if (name === 'sphere–box') return id >= 27 ? 'centre inside' : id === 1 || id === 2 || id === 3 || id === 6 || id === 9 || id === 18 ? 'face' : 'edge or vertex';
  if (name === 'capsule–capsule') return id >= 9 ? 'two-point' : id === 4 ? 'side–side' : 'end';
  if (name === 'capsule–box') return id < 12 ? 'face' : id < 100 ? 'edge or vertex, apart' : 'edge axis, overlapping';
  return 'one';
}
const EXPECTED_PATHS: Record<string, string[]> = {
  'sphere–box': ['centre inside', 'face', 'edge or vertex'],
  'capsule–capsule': ['two-point', 'side–side', 'end'],
  'capsule–box': ['face', 'edge or vertex, apart', 'edge axis, overlapping'],
};

const SUITES: [string, Maker[], number][] = [
  ['sphere–sphere', [generic('sphere', 'sphere')], 150],
  ['sphere–plane', [generic('sphere', 'plane')], 150],
  ['sphere–box', [generic('sphere', 'box'), generic('sphere', 'box'), sphereInBox], 200],
  ['sphere–capsule', [generic('sphere', 'capsule')], 150],
  ['capsule–capsule', [generic('capsule', 'capsule'), parallelCapsules], 200],
  ['capsule–plane', [generic('capsule', 'plane'), capsuleFlatOnPlane], 150],
  ['capsule–box', [generic('capsule', 'box'), capsuleOnBoxFace], 200],
  ['box–plane', [generic('box', 'plane'), boxFlatOnPlane], 200],
];

for (const [name, makers, count] of SUITES) {
  test(`${name}: ${count} seeded random pairs agree with the exact brute-force reference`, () => {
    const rnd = mulberry32(0x5eed + name.length * 7919 + name.charCodeAt(0) + Number(process.env.NARROW_SEED ?? 0));
    let near = 0, deep = 0, apart = 0, multi = 0, ends = 0;
    const paths = new Map<string, number>();
    for (let c = 0; c < count; c++) {
      const [A, B, margin] = makers[c % makers.length](rnd);
      let r;
      try {
        r = checkPair(A, B, margin, `${name} case ${c}`);
      } catch (err) {
        console.log(`failing case: ${JSON.stringify({ A, B, margin })}`);
        throw err;
      }
      const { sigma, m } = r;
      if (sigma >= margin) apart++;
      else if (sigma < -0.05) deep++;
      else near++;
      if (m && m.points.length > 1) multi++;
      if (m && name === 'capsule–box') ends += m.points.filter((p) => p.id >= 120).length;
      if (m) {
        const path = idClass(name, m.points[0].id);
        paths.set(path, (paths.get(path) ?? 0) + 1);
      }
    }
    // every branch of the routine is reached
    for (const path of EXPECTED_PATHS[name] ?? []) assert.ok((paths.get(path) ?? 0) >= 3, `${name}: branch "${path}" reached ${paths.get(path) ?? 0} times (${[...paths]})`);
    // the generator reaches every regime
    assert.ok(apart >= count / 40 && deep >= count / 20 && near >= count / 20, `${name}: apart ${apart}, deep ${deep}, near ${near}`);
    if (name.startsWith('capsule') || name.startsWith('box')) assert.ok(multi >= count / 20, `${name}: only ${multi} multi-point manifolds`);
    // the segment ends' points beside an edge or vertex contact (pairs.ts capsuleBoxEnds) are reached
    if (name === 'capsule–box') assert.ok(ends >= 3, `capsule–box: ${ends} end points beside edge contacts`);
  });
}

// ---- fixed configurations -----------------------------------------------------------------------
const I: Q4 = [0, 0, 0, 1];
const at = (shape: Shape, position: V3, orientation: Q4 = I): Solid => ({ shape, pose: { position, orientation } });
const ground = at({ type: 'plane' }, [0, 0, 0]);

test('sphere centre inside a box: pushed out through the nearest face, depth r + the face distance', () => {
  const box = at({ type: 'box', halfExtents: [1, 1, 1] }, [0, 0, 0]);
  const ball = at({ type: 'sphere', radius: 0.3 }, [0.1, 0.8, -0.2]);
  const { m } = checkPair(ball, box, MARGIN, 'inside');
  assert.ok(m);
  assert.equal(m.points.length, 1);
  assert.ok(Math.abs(m.points[0].separation + (0.2 + 0.3)) < 1e-12);
  assert.deepEqual(m.normal.map((x) => x + 0), [0, -1, 0]); // the sphere leaves along +y = −n
});

test('box sliding on a plane keeps its vertex ids', () => {
  const box: Shape = { type: 'box', halfExtents: [0.5, 0.25, 0.4] };
  const q = quatAxisAngle([0, 1, 0], 0.3);
  let prev: Map<number, V3> | null = null;
  for (let step = 0; step < 50; step++) {
    const A = at(box, [0.001 * step, 0.25 - 0.002, 0.0005 * step], q);
    const { m } = checkPair(A, ground, 0.02, `slide ${step}`);
    assert.ok(m);
    const byId = new Map(m.points.map((p) => [p.id, p.pointA] as [number, V3]));
    assert.deepEqual([...byId.keys()].sort(), [0, 1, 4, 5]); // the four vertices with local y = −b
    for (const [id, pa] of byId) {
      const local: V3 = [id & 1 ? 0.5 : -0.5, id & 2 ? 0.25 : -0.25, id & 4 ? 0.4 : -0.4];
      assert.ok(norm(sub(pa, toWorld(A.pose, local))) < 1e-12, `id ${id} is its vertex`);
      if (prev) assert.ok(norm(sub(pa, prev.get(id)!)) < 0.0012, `id ${id} moved with its vertex`);
    }
    prev = byId;
  }
});

test('box–plane with every vertex within the margin keeps 4: the deepest and the widest support of the near side', () => {
  const q = quatMul(quatAxisAngle([1, 0, 0], 0.01), quatAxisAngle([0, 0, 1], 0.02));
  const A = at({ type: 'box', halfExtents: [0.3, 0.1, 0.2] }, [0, 0.09, 0], q);
  const { m } = checkPair(A, ground, 1, 'all eight');
  assert.ok(m);
  assert.equal(m.points.length, 4);
  const deepest = Math.min(...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => toWorld(A.pose, [i & 1 ? 0.3 : -0.3, i & 2 ? 0.1 : -0.1, i & 4 ? 0.2 : -0.2])[1]));
  assert.ok(Math.abs(Math.min(...m.points.map((p) => p.separation)) - deepest) < 1e-12);
  // the far side (vertices more than the least half extent, 0.1 m, above the deepest) is no support: its
  // vertices project onto the near side's along the normal, and a top vertex kept in place of a bottom
  // one tilted the box (a margin this deep comes only with large steps). Of the near side's vertices,
  // the 4 enclose the largest area (seen from above) of all 4-subsets holding the deepest.
  const verts = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => toWorld(A.pose, [i & 1 ? 0.3 : -0.3, i & 2 ? 0.1 : -0.1, i & 4 ? 0.2 : -0.2]));
  const near = [0, 1, 2, 3, 4, 5, 6, 7].filter((i) => verts[i][1] <= deepest + 0.1);
  const i0 = verts.findIndex((v) => v[1] === deepest);
  let bestArea = 0;
  for (const a of near) for (const b of near) for (const c of near) if (a < b && b < c && ![a, b, c].includes(i0)) bestArea = Math.max(bestArea, quadArea([verts[i0], verts[a], verts[b], verts[c]]));
  const area = quadArea(m.points.map((p) => p.pointA));
  assert.ok(Math.abs(area - bestArea) < 1e-12 && m.points.some((p) => p.id === i0), `support area ${area}, best ${bestArea}`);
  assert.ok(m.points.every((p) => (p.id & 2) === 0), `a vertex of the box's top face kept: ${m.points.map((p) => p.id)}`);
});
/** Area of the convex hull of points seen along y (their x–z coordinates): monotone chain, then shoelace. */
function quadArea(p: V3[]): number {
  const pts = p.map((v) => [v[0], v[2]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const turn = (o: number[], a: number[], b: number[]) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (list: number[][]) => {
    const h: number[][] = [];
    for (const q of list) {
      while (h.length >= 2 && turn(h[h.length - 2], h[h.length - 1], q) <= 0) h.pop();
      h.push(q);
    }
    return h.slice(0, -1);
  };
  const hull = [...half(pts), ...half([...pts].reverse())];
  let s = 0;
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i], b = hull[(i + 1) % hull.length];
    s += a[0] * b[1] - b[0] * a[1];
  }
  return Math.abs(s) / 2;
}

test('a capsule lying on a plane, on a box face, on another capsule: two points', () => {
  const lying = quatAxisAngle([0, 0, 1], Math.PI / 2); // axis along x
  const cap: Shape = { type: 'capsule', radius: 0.2, halfHeight: 0.5 };
  // on the ground, resting 1 mm deep
  let r = checkPair(at(cap, [0.3, 0.199, -0.2], lying), ground, MARGIN, 'capsule on plane');
  assert.deepEqual(r.m!.points.map((p) => p.id), [0, 1]);
  for (const p of r.m!.points) assert.ok(Math.abs(p.separation + 0.001) < 1e-12);
  // on a box top face (box B), and with the box as A
  const box = at({ type: 'box', halfExtents: [1, 0.5, 1] }, [0, -0.5, 0]);
  const onBox = at(cap, [0.3, 0.199, -0.2], lying);
  r = checkPair(onBox, box, MARGIN, 'capsule on box');
  assert.equal(r.m!.points.length, 2);
  for (const p of r.m!.points) assert.ok(Math.abs(p.separation + 0.001) < 1e-12 && Math.abs(p.pointB[1]) < 1e-12);
  const xs = r.m!.points.map((p) => p.pointA[0]).sort((a, b) => a - b);
  assert.ok(Math.abs(xs[0] + 0.2) < 1e-12 && Math.abs(xs[1] - 0.8) < 1e-12, `the segment's ends ${xs}`);
  // overhanging the box's edge x = 1: clipped there
  r = checkPair(at(cap, [0.8, 0.201, 0], lying), box, MARGIN, 'capsule over the edge');
  const xo = r.m!.points.map((p) => p.pointB[0]).sort((a, b) => a - b);
  assert.ok(Math.abs(xo[0] - 0.3) < 1e-12 && Math.abs(xo[1] - 1) < 1e-12, `clipped to the face: ${xo}`);
  const swapped = collide(box.shape, box.pose, onBox.shape, onBox.pose, MARGIN)!;
  assert.equal(swapped.points.length, 2);
  // on another capsule, parallel, overlapping over x ∈ [0.1, 0.8]
  const lower = at({ type: 'capsule', radius: 0.15, halfHeight: 0.6 }, [0.2, -0.15, 0], lying);
  r = checkPair(at(cap, [0.3, 0.2 - 0.001, 0], lying), lower, MARGIN, 'capsule on capsule');
  assert.equal(r.m!.points.length, 2);
  const xc = r.m!.points.map((p) => p.pointA[0]).sort((a, b) => a - b);
  assert.ok(Math.abs(xc[0] + 0.2) < 1e-12 && Math.abs(xc[1] - 0.8) < 1e-12, `overlap interval ends ${xc}`);
  // crossed at right angles: one point
  r = checkPair(at(cap, [0.3, 0.2 - 0.001, 0], quatAxisAngle([1, 0, 0], Math.PI / 2)), lower, MARGIN, 'crossed capsules');
  assert.equal(r.m!.points.length, 1);
});

test('a capsule touching a box edge with one end, the other end over the top face: that end gets its own point, at its analytic gap', () => {
  // The rain scene's fault (pairs.ts capsuleBoxEnds): the closest pair alone stood for the capsule, and
  // the end over the face, turning down, went through it. Box of half size 0.1 at the origin; capsule
  // r = 0.04, h = 0.085, end 0 at c0 = (0.12, 0.15, 0) beyond the top edge (x, y = 0.1), its axis
  // u = (−cos 0.6, sin 0.6, 0) rising over the top face (tan 0.6 > 0.05/0.02: the distance grows from
  // end 0 along u, so end 0 is the closest pair, to the edge point q = (0.1, 0.1, 0)).
  //   n = (q − c0)/|q − c0| (capsule → box), σ = |q − c0| − r;
  //   end 1 = c0 + 2h u, its surface point farthest along n on the cylinder (its cap faces away:
  //   n·u < 0), so its gap to the support plane through q is (q − end 1)·n − r √(1 − (n·u)²);
  //   the gate: end 1's ball moved along n meets the top face (its centre r above it, y = 0.1 + r)
  //   after (end1_y − 0.1 − r)/(−n_y), at x = end1_x + that · n_x (inside |x| ≤ 0.1), within the margin.
  const r = 0.04, h = 0.085, t = 0.6, margin = 0.2;
  const u: V3 = [-Math.cos(t), Math.sin(t), 0];
  const c0: V3 = [0.12, 0.15, 0];
  const centre = add(c0, mul(u, h));
  // the capsule's local y axis turned onto u: a turn about z by atan2(cos t, sin t) (ŷ → (−sin a, cos a))
  const cap = at({ type: 'capsule', radius: r, halfHeight: h }, centre, quatAxisAngle([0, 0, 1], Math.atan2(Math.cos(t), Math.sin(t))));
  const box = at({ type: 'box', halfExtents: [0.1, 0.1, 0.1] }, [0, 0, 0]);
  const q: V3 = [0.1, 0.1, 0];
  const dq = sub(q, c0);
  const n = mul(dq, 1 / norm(dq));
  const sigma = norm(dq) - r;
  const nu = dot(n, u);
  const end1 = add(c0, mul(u, 2 * h));
  const gap1 = dot(sub(q, end1), n) - r * Math.sqrt(1 - nu * nu);
  const travel = (end1[1] - 0.1 - r) / -n[1];
  assert.ok(Math.abs(end1[0] + travel * n[0]) < 0.1 && travel < margin && gap1 > sigma && gap1 < travel, 'the configuration: end 1 meets the top face within the margin');
  const res = checkPair(cap, box, margin, 'capsule on a box edge, end over the face');
  const m = res.m!;
  assert.ok(Math.abs(res.sigma - sigma) < 1e-12, `σ ${res.sigma} vs analytic ${sigma}`);
  assert.ok(norm(sub(m.normal, n)) < 1e-12, `normal ${m.normal} vs analytic ${n}`);
  assert.equal(m.points.length, 2, `points ${m.points.map((p) => p.id)}`);
  const [closest, other] = m.points;
  assert.ok(closest.id >= 16 && closest.id < 100 && Math.abs(closest.separation - sigma) < 1e-12, `closest pair ${closest.id} s ${closest.separation}`);
  assert.equal(other.id, 121);
  assert.ok(Math.abs(other.separation - gap1) < 1e-12, `end 1: s ${other.separation}, analytic gap ${gap1}`);
  // the gate: with a margin short of the ball's travel, end 1 has no point (its plane gap is within it)
  const short = collide(cap.shape, cap.pose, box.shape, box.pose, (gap1 + travel) / 2)!;
  assert.deepEqual(short.points.map((p) => p.id), [closest.id], 'margin between the plane gap and the travel: no end point');
});

test('degenerate configurations: exact alignments, coincident centres, crossing axes, touching', () => {
  const sphere: Shape = { type: 'sphere', radius: 0.4 };
  const cap: Shape = { type: 'capsule', radius: 0.25, halfHeight: 0.6 };
  const box: Shape = { type: 'box', halfExtents: [0.5, 0.3, 0.4] };
  const lying = quatAxisAngle([0, 0, 1], Math.PI / 2);
  const cases: [string, Solid, Solid][] = [
    ['concentric spheres', at(sphere, [0.2, 0.1, 0]), at({ type: 'sphere', radius: 0.3 }, [0.2, 0.1, 0])],
    ['sphere centre on a capsule axis', at(sphere, [0, 0.3, 0]), at(cap, [0, 0, 0])],
    ['sphere centre at a box centre', at(sphere, [1, 1, 1]), at(box, [1, 1, 1])],
    ['sphere centre on a box face', at(sphere, [0.5, 0.1, 0]), at(box, [0, 0, 0])],
    ['sphere touching a box edge', at(sphere, [0.5 + 0.4 / Math.SQRT2, 0.3 + 0.4 / Math.SQRT2, 0]), at(box, [0, 0, 0])],
    ['crossing capsule axes', at(cap, [0, 0, 0]), at(cap, [0, 0, 0], lying)],
    ['coaxial capsules', at(cap, [0, 0, 0]), at(cap, [0, 0.5, 0])],
    ['parallel capsules, exactly', at(cap, [0, 0, 0], lying), at(cap, [0.3, 0.45, 0], lying)],
    ['capsule along a box edge', at(cap, [0, 0.3 + 0.2, 0.4 + 0.2], lying), at(box, [0, 0, 0])],
    ['capsule upright on a box face', at(cap, [0.1, 0.3 + 0.6 + 0.249, 0]), at(box, [0, 0, 0])],
    ['capsule axis through a box', at(cap, [0.1, 0, 0.05]), at(box, [0, 0, 0])],
    ['capsule lying in a box', at(cap, [0, 0.1, 0], lying), at(box, [0, 0, 0])],
    ['capsule upright on a plane, margin over its length', at(cap, [0, 0.85 - 0.001, 0]), ground],
    ['box exactly on a plane', at(box, [0, 0.3, 0]), ground],
    ['box on its edge on a plane', at(box, [0, 0.5, 0], quatAxisAngle([0, 0, 1], Math.atan2(0.3, 0.5))), ground],
  ];
  for (const [name, A, B] of cases) {
    checkPair(A, B, name.includes('margin over') ? 2 : MARGIN, name);
    checkPair(B.shape.type === 'plane' ? A : B, B.shape.type === 'plane' ? B : A, MARGIN, `${name}, other order`);
  }
});

test('apart by more than the margin: no manifold for any pair', () => {
  const shapes: Shape[] = [{ type: 'sphere', radius: 0.5 }, { type: 'capsule', radius: 0.3, halfHeight: 0.4 }, { type: 'box', halfExtents: [0.4, 0.3, 0.2] }];
  for (const a of shapes) {
    for (const b of shapes) {
      if (a.type === 'box' && b.type === 'box') continue;
      assert.equal(collide(a, { position: [0, 0, 0], orientation: I }, b, { position: [0, 3, 0], orientation: I }, 0.5), null);
    }
    assert.equal(collide(a, { position: [0, 1.5, 0], orientation: I }, ground.shape, ground.pose, 0.5), null);
    assert.equal(collide(ground.shape, ground.pose, a, { position: [0, 1.5, 0], orientation: I }, 0.5), null);
  }
  assert.equal(collide(ground.shape, ground.pose, ground.shape, ground.pose, 1), null, 'plane–plane');
});

test('dispatcher: box–box through collide, and the swap negates its normal', () => {
  const a: Shape = { type: 'box', halfExtents: [0.5, 0.5, 0.5] };
  const b: Shape = { type: 'box', halfExtents: [0.3, 0.2, 0.3] };
  const pa: Pose = { position: [0, 0, 0], orientation: I };
  const pb: Pose = { position: [0.1, 0.69, 0], orientation: quatAxisAngle([0, 1, 0], 0.4) };
  const m = collide(a, pa, b, pb, MARGIN);
  const w = collide(b, pb, a, pa, MARGIN);
  assert.ok(m && w);
  assert.ok(Math.abs(m.normal[1] - 1) < 1e-9 && Math.abs(w.normal[1] + 1) < 1e-9, `normals ${m.normal} ${w.normal}`);
  for (const p of m.points) assert.ok(Math.abs(p.separation + 0.01) < 1e-9);
});
