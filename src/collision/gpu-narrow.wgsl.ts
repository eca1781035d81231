/**
 * WGSL of the GPU narrow phase (gpu-narrow.ts has the design and the API): the CPU routines of
 * pairs.ts ported to f32, one function per shape pair, with the CPU's conventions (types.ts): n unit
 * from A to B, pointA on A, pointB on B, s = (pointB − pointA)·n, points with s < margin, ≤ 4 points,
 * the same feature ids and the same point order. Each function's derivation is in its CPU twin's
 * comment (pairs.ts); here only what differs for f32 is said.
 *
 * f32 thresholds. The CPU's degenerate-case tests compare against tiny multiples of a length
 * (1e-12·L, a direction of length < 1e-12) or 1e-300 (a zero test). 1e-12 is a normal f32 and is kept
 * (the branch it guards is the degenerate one either way: a length that small in f32 is rounding);
 * 1e-300 is 0 in f32 and is replaced by 1e-30 (above f32's least normal, 1.2e-38, below any square of
 * a real size). WGSL compilers may assume floats are finite, so no NaN or ∞ is used as a value: a
 * "missed" result travels as a flag.
 *
 * Buffers (kernel np_collide; 6 storage buffers, WebGPU's default allows 8):
 *   params      NarrowParams (uniform): pair capacity, which counter holds the pair count, margin
 *   pairs[cap]  BodyPair (a < b), as the GPU broad phase writes them
 *   counters    u32s; counters[params.counter] = pairs found (may exceed cap: overflow)
 *   poses[n]    BodyPose: position, orientation [x, y, z, w] (f32)
 *   shapes[n]   BodyShape: kind (0 sphere, 1 capsule, 2 box, 3 plane), size
 *   manifolds[cap]      Manifold: normal, point count, the pair
 *   points[4·cap]       ContactPoint: manifold k's point j is points[4k + j]
 *   status      atomic u32 [unsupported pairs seen]
 */
import { defineRecord } from '../gpu/layout.js';
import { LINEAR_SLOP, SLOP_SIZE_FRACTION } from './pipeline.js';
import { THREAD_INDEX_WGSL, kernelEntry } from '../gpu/dispatch.js';
import { EDGE_REL_TOL, FACE_B_REL_TOL } from './box-box.js';

export const BodyPoseRecord = defineRecord('BodyPose', [
  ['position', 'vec3f', 'centre of mass = shape origin, m'],
  ['pad', 'f32'],
  ['orientation', 'vec4f', 'unit quaternion [x, y, z, w]'],
] as const);

export const BodyShapeRecord = defineRecord('BodyShape', [
  ['size', 'vec3f', 'sphere (r, 0, 0); capsule (r, half height, 0); box half extents; plane 0, m'],
  ['kind', 'u32', '0 sphere, 1 capsule, 2 box, 3 plane (the routine order)'],
] as const);

export const NarrowParamsRecord = defineRecord('NarrowParams', [
  ['capacity', 'u32', 'pairs the pair and manifold buffers hold'],
  ['counter', 'u32', 'index of the pair count in counters'],
  ['margin', 'f32', 'points with s < margin are reported, m (per_pair 0)'],
  ['per_pair', 'u32', "1: the CPU pipeline's margin per pair, 4 slop + h (s_a + s_b), from speeds (gpu-aabb.ts)"],
  ['h', 'f32', "the frame's time step, s (per_pair 1)"],
  ['pad0', 'u32'],
  ['pad1', 'u32'],
  ['pad2', 'u32'],
] as const);

export const ManifoldRecord = defineRecord('Manifold', [
  ['normal', 'vec3f', 'unit, A → B (world)'],
  ['count', 'u32', 'points (0: none within the margin)'],
  ['body_a', 'u32', 'the pair (a < b, as in the pair buffer)'],
  ['body_b', 'u32'],
  ['pad0', 'u32'],
  ['pad1', 'u32'],
] as const);

export const ContactPointRecord = defineRecord('ContactPoint', [
  ['point_a', 'vec3f', 'on A, world, m'],
  ['id', 'u32', 'feature key (< 2^20)'],
  ['point_b', 'vec3f', 'on B, world, m'],
  ['separation', 'f32', '(point_b − point_a)·n, m'],
] as const);

export const SHAPE_KIND = { sphere: 0, capsule: 1, box: 2, plane: 3 } as const;
/** status[STATUS_UNSUPPORTED]: pairs whose shape pair has no GPU routine (they get count 0) */
export const STATUS_UNSUPPORTED = 0;

/** The shape pairs (routine order) the kernel has routines for. */
export const GPU_NARROW_PAIRS = ['sphere-sphere', 'sphere-capsule', 'sphere-box', 'sphere-plane', 'capsule-capsule', 'capsule-box', 'capsule-plane', 'box-box', 'box-plane'] as const;

/** c ε of the f32 error bound E = c ε (X + L) (test/gpu-narrow.test.ts header) */
export const F32_BOUND = 64 * 2 ** -24;

export const CAPSULE_PARALLEL_LATERAL_WGSL = 0.05; // pairs.ts CAPSULE_PARALLEL_LATERAL (test checks equal)

const routines = /* wgsl */ `
struct Out {
  n: vec3f,
  count: u32,
  pa: array<vec3f, 4>,
  pb: array<vec3f, 4>,
  s: array<f32, 4>,
  id: array<u32, 4>,
};
var<private> o: Out;

fn push(pa: vec3f, pb: vec3f, s: f32, id: u32) {
  let k = o.count;
  o.pa[k] = pa;
  o.pb[k] = pb;
  o.s[k] = s;
  o.id[k] = id;
  o.count = k + 1u;
}

// R(q) p = p + 2 v × (v × p + w p), q = (v, w) (geometry.ts rotate)
fn rot(q: vec4f, p: vec3f) -> vec3f {
  let t = cross(q.xyz, p) + q.w * p;
  return p + 2.0 * cross(q.xyz, t);
}
fn inv_rot(q: vec4f, p: vec3f) -> vec3f { return rot(vec4f(-q.xyz, q.w), p); }
// R(q) ŷ (geometry.ts axisY)
fn axis_y(q: vec4f) -> vec3f {
  return vec3f(2.0 * (q.x * q.y - q.z * q.w), 1.0 - 2.0 * (q.x * q.x + q.z * q.z), 2.0 * (q.y * q.z + q.x * q.w));
}
fn normalized(v: vec3f) -> vec3f {
  let l = sqrt(dot(v, v));
  if (l > 0.0) { return v * (1.0 / l); }
  return v;
}
// geometry.ts anyPerpendicular: a × (the world axis least aligned with a), normalised
fn any_perp(a: vec3f) -> vec3f {
  let b = abs(a);
  var v: vec3f;
  if (b.x <= b.y && b.x <= b.z) { v = vec3f(0.0, a.z, -a.y); }
  else if (b.y <= b.z) { v = vec3f(-a.z, 0.0, a.x); }
  else { v = vec3f(a.y, -a.x, 0.0); }
  return normalized(v);
}

// pairs.ts capsuleOffset: (m, m·n), m the unit offset from core point p(t) to the surface point
// farthest along n among those whose nearest core point is p(t)
fn capsule_offset(t: f32, u: vec3f, n: vec3f) -> vec4f {
  let nu = dot(n, u);
  if ((t <= 0.0 && nu <= 0.0) || (t >= 1.0 && nu >= 0.0)) { return vec4f(n, 1.0); }
  let v = n - nu * u;
  let l = sqrt(dot(v, v));
  if (l < 1e-12) { return vec4f(any_perp(u), 0.0); }
  return vec4f(v * (1.0 / l), l);
}

// ---- sphere–sphere (pairs.ts collideSphereSphere) ----
fn sphere_sphere(ra: f32, xa: vec3f, rb: f32, xb: vec3f, margin: f32) {
  let d = xb - xa;
  let dist = sqrt(dot(d, d));
  let s = dist - ra - rb;
  if (s >= margin) { return; }
  var n = vec3f(0.0, 1.0, 0.0);
  if (dist > 1e-12 * (ra + rb)) { n = d / dist; }
  o.n = n;
  push(xa + ra * n, xb - rb * n, s, 0u);
}

// ---- sphere–plane (collideSpherePlane) ----
fn sphere_plane(r: f32, c: vec3f, xb: vec3f, qb: vec4f, margin: f32) {
  let N = axis_y(qb);
  let h = dot(c - xb, N);
  let s = h - r;
  if (s >= margin) { return; }
  o.n = -N;
  push(c - r * N, c - h * N, s, 0u);
}

// ---- sphere–box (collideSphereBox) ----
fn sphere_box(r: f32, xa: vec3f, e: vec3f, xb: vec3f, qb: vec4f, margin: f32) {
  let c = inv_rot(qb, xa - xb);
  var q = c;
  var code = 0u;
  var w = 1u;
  for (var i = 0; i < 3; i++) {
    if (c[i] > e[i]) { q[i] = e[i]; code += 2u * w; }
    else if (c[i] < -e[i]) { q[i] = -e[i]; code += w; }
    w *= 3u;
  }
  let dv = q - c;
  let dist = sqrt(dot(dv, dv));
  var nl = vec3f(0.0);
  var s: f32;
  var id: u32;
  if (dist > 1e-12 * (r + e.x + e.y + e.z)) {
    s = dist - r;
    if (s >= margin) { return; }
    nl = dv / dist;
    id = code;
  } else {
    var k = 0;
    var depth = e.x - abs(c.x);
    for (var i = 1; i < 3; i++) {
      let di = e[i] - abs(c[i]);
      if (di < depth) { depth = di; k = i; }
    }
    s = -(depth + r);
    if (s >= margin) { return; }
    var sigma = -1.0;
    if (c[k] >= 0.0) { sigma = 1.0; }
    nl[k] = -sigma;
    q = c;
    q[k] = sigma * e[k];
    id = 27u + 2u * u32(k) + select(0u, 1u, sigma > 0.0);
  }
  o.n = rot(qb, nl);
  push(rot(qb, c + r * nl) + xb, rot(qb, q) + xb, s, id);
}

// ---- sphere–capsule (collideSphereCapsule) ----
fn sphere_capsule(ra: f32, c: vec3f, rb: f32, h: f32, xb: vec3f, qb: vec4f, margin: f32) {
  let u = axis_y(qb);
  var t = dot(c - xb, u);
  var id = 1u;
  if (t <= -h) { t = -h; id = 0u; }
  else if (t >= h) { t = h; id = 2u; }
  let q = xb + t * u;
  let d = q - c;
  let dist = sqrt(dot(d, d));
  let R = ra + rb;
  let s = dist - R;
  if (s >= margin) { return; }
  var n: vec3f;
  if (dist > 1e-12 * (R + h)) { n = d * (1.0 / dist); } else { n = any_perp(u); }
  o.n = n;
  push(c + ra * n, q - rb * n, s, id);
}

// ---- capsule–plane (collideCapsulePlane) ----
fn capsule_plane(r: f32, hh: f32, xa: vec3f, qa: vec4f, xb: vec3f, qb: vec4f, margin: f32) {
  let N = axis_y(qb);
  let u = axis_y(qa);
  let hc = dot(xa - xb, N);
  let du = hh * dot(u, N);
  let n = -N;
  for (var i = 0u; i < 2u; i++) {
    var sign = -1.0;
    if (i == 1u) { sign = 1.0; }
    let m = capsule_offset(f32(i), u, n);
    let s = hc + sign * du - r * m.w;
    if (s >= margin) { continue; }
    let pa = xa + (sign * hh) * u + r * m.xyz;
    push(pa, pa - s * N, s, i);
  }
  if (o.count > 0u) { o.n = n; }
}

// ---- box–plane (collideBoxPlane, reduceToFour) ----
var<private> verts: array<vec3f, 8>;
var<private> vs: array<f32, 8>;
fn tri_area(ia: u32, ib: u32, ic: u32, N: vec3f) -> f32 {
  return 0.5 * dot(cross(verts[ib] - verts[ia], verts[ic] - verts[ia]), N);
}
fn reduce_to_four(mask: u32, N: vec3f) -> u32 {
  var i0 = 8u;
  for (var i = 0u; i < 8u; i++) {
    if ((mask & (1u << i)) != 0u && (i0 == 8u || vs[i] < vs[i0])) { i0 = i; }
  }
  var best = -1.0;
  var best_mask = 1u << i0;
  for (var a = 0u; a < 8u; a++) {
    if ((mask & (1u << a)) == 0u || a == i0) { continue; }
    for (var b = a + 1u; b < 8u; b++) {
      if ((mask & (1u << b)) == 0u || b == i0) { continue; }
      for (var c = b + 1u; c < 8u; c++) {
        if ((mask & (1u << c)) == 0u || c == i0) { continue; }
        let q1 = abs(tri_area(i0, a, b, N) + tri_area(i0, b, c, N));
        let q2 = abs(tri_area(i0, a, c, N) + tri_area(i0, c, b, N));
        let q3 = abs(tri_area(i0, b, a, N) + tri_area(i0, a, c, N));
        let area = max(q1, max(q2, q3));
        if (area > best) { best = area; best_mask = (1u << i0) | (1u << a) | (1u << b) | (1u << c); }
      }
    }
  }
  return best_mask;
}
fn box_plane(e: vec3f, xa: vec3f, qa: vec4f, xb: vec3f, qb: vec4f, margin: f32) {
  let N = axis_y(qb);
  var count = 0u;
  var mask = 0u;
  for (var i = 0u; i < 8u; i++) {
    let l = vec3f(select(-e.x, e.x, (i & 1u) != 0u), select(-e.y, e.y, (i & 2u) != 0u), select(-e.z, e.z, (i & 4u) != 0u));
    let v = rot(qa, l) + xa;
    verts[i] = v;
    let s = dot(v - xb, N);
    vs[i] = s;
    if (s < margin) { mask |= 1u << i; count++; }
  }
  if (count == 0u) { return; }
  if (count > 4u) {
    var deepest = 3.4e38;
    for (var i = 0u; i < 8u; i++) { if ((mask & (1u << i)) != 0u && vs[i] < deepest) { deepest = vs[i]; } }
    let reach = deepest + min(e.x, min(e.y, e.z));
    for (var i = 0u; i < 8u; i++) {
      if ((mask & (1u << i)) != 0u && vs[i] > reach) { mask &= ~(1u << i); count--; }
    }
    if (count > 4u) { mask = reduce_to_four(mask, N); }
  }
  for (var i = 0u; i < 8u; i++) {
    if ((mask & (1u << i)) == 0u) { continue; }
    push(verts[i], verts[i] - vs[i] * N, vs[i], i);
  }
  o.n = -N;
}

// ---- capsule–capsule (collideCapsuleCapsule) ----
fn clamp01(x: f32) -> f32 { return clamp(x, 0.0, 1.0); }
// geometry.ts closestSegmentSegment: (s, t) of the closest points of p0 + s d1, q0 + t d2
fn closest_seg_seg(p0: vec3f, d1: vec3f, q0: vec3f, d2: vec3f) -> vec2f {
  let r = p0 - q0;
  let a = dot(d1, d1);
  let e = dot(d2, d2);
  let b = dot(d1, d2);
  let c = dot(d1, r);
  let f = dot(d2, r);
  var s = 0.0;
  var t = 0.0;
  if (a <= 1e-30 && e <= 1e-30) { return vec2f(0.0); }
  if (a <= 1e-30) { return vec2f(0.0, clamp01(f / e)); }
  if (e <= 1e-30) { return vec2f(clamp01(-c / a), 0.0); }
  // a e − b² = |d1 × d2|², b f − c e = (d2 × r)·(d1 × d2) (Lagrange's identity; geometry.ts)
  let m = cross(d1, d2);
  let denom = dot(m, m);
  // the CPU treats sin θ < 1e-12 as parallel (f64); f32 cross products are accurate to ≈ 1e-7/sin θ,
  // so the same cut-off for f32 is sin θ < 1e-6: denom > 1e-12 a e
  if (denom > 1e-12 * a * e) { s = clamp01(dot(cross(d2, r), m) / denom); }
  t = (b * s + f) / e;
  if (t < 0.0) { t = 0.0; s = clamp01(-c / a); }
  else if (t > 1.0) { t = 1.0; s = clamp01((b - c) / a); }
  return vec2f(s, t);
}
// geometry.ts smallerRoot of A λ² + 2 B λ + C = 0: (λ, 1) or (0, 0) when none
fn smaller_root(A: f32, B: f32, C: f32) -> vec2f {
  let D = B * B - A * C;
  if (D < 0.0) { return vec2f(0.0, 0.0); }
  let sq = sqrt(D);
  if (B > 0.0) { return vec2f((-B - sq) / A, 1.0); }
  let den = -B + sq;
  if (den > 0.0) { return vec2f(C / den, 1.0); }
  return vec2f(0.0, 1.0);
}
// geometry.ts lineCapsuleEntry: (λ, 1) of the least λ with o + λ n in the capsule, or (0, 0): missed
fn line_capsule_entry(o_: vec3f, n: vec3f, q0: vec3f, u: vec3f, len: f32, r: f32) -> vec2f {
  let m = o_ - q0;
  let mu = dot(m, u);
  let nu = dot(n, u);
  let p = m - mu * u;
  let q = n - nu * u;
  var best = 0.0;
  var hit = false;
  let A = dot(q, q);
  if (A > 1e-24) {
    let l = smaller_root(A, dot(p, q), dot(p, p) - r * r);
    let axial = mu + l.x * nu;
    if (l.y > 0.0 && axial >= 0.0 && axial <= len) { best = l.x; hit = true; }
  }
  for (var end = 0; end < 2; end++) {
    var tt = 0.0;
    if (end == 1) { tt = len; }
    let ev = m - tt * u;
    let l = smaller_root(1.0, dot(ev, n), dot(ev, ev) - r * r);
    if (l.y > 0.0 && (!hit || l.x < best)) { best = l.x; hit = true; }
  }
  return vec2f(best, select(0.0, 1.0, hit));
}
const LATERAL: f32 = ${CAPSULE_PARALLEL_LATERAL_WGSL};
const FACE_B_REL_TOL: f32 = ${FACE_B_REL_TOL};
const EDGE_REL_TOL: f32 = ${EDGE_REL_TOL};
// c ε of the f32 error bound (test/gpu-narrow.test.ts header: c = 64, ε = 2⁻²⁴)
const F32_BOUND: f32 = ${F32_BOUND};
fn capsule_capsule(ra: f32, ha: f32, xa: vec3f, qa: vec4f, rb: f32, hb: f32, xb: vec3f, qb: vec4f, margin: f32) {
  let uA = axis_y(qa);
  let uB = axis_y(qb);
  let R = ra + rb;
  let p0 = xa - ha * uA;
  let q0 = xb - hb * uB;
  let d1 = (2.0 * ha) * uA;
  let d2 = (2.0 * hb) * uB;
  let st = closest_seg_seg(p0, d1, q0, d2);
  let ap = p0 + st.x * d1;
  let dv = q0 + st.y * d2 - ap;
  let dist = sqrt(dot(dv, dv));
  let s = dist - R;
  if (s >= margin) { return; }
  var n: vec3f;
  if (dist > 1e-12 * (R + ha + hb)) { n = dv / dist; }
  else {
    let cv = xb - xa;
    let cr = cross(uA, uB);
    let cl = sqrt(dot(cr, cr));
    if (cl >= 1e-9) { n = cr / cl; }
    else {
      let w = cv - dot(cv, uA) * uA;
      let wl = sqrt(dot(w, w));
      if (wl <= 1e-12 * (R + ha + hb)) { n = any_perp(uA); } else { n = w / wl; }
    }
    if (dot(n, cv) < 0.0) { n = -n; }
  }
  o.n = n;

  let cosAB = dot(uA, uB);
  if (1.0 - cosAB * cosAB < 0.01) {
    let inv = 1.0 / (4.0 * ha * ha);
    let tb0 = dot(q0 - p0, d1) * inv;
    let tb1 = tb0 + dot(d2, d1) * inv;
    let lo = max(0.0, min(tb0, tb1));
    let hi = min(1.0, max(tb0, tb1));
    let lateral_max = LATERAL * min(ra, rb);
    if ((hi - lo) * 2.0 * ha > 2.0 * lateral_max) {
      var ok = true;
      var pe: array<vec3f, 2>;
      var se: array<f32, 2>;
      for (var end = 0; end < 2; end++) {
        var sig = lo;
        if (end == 1) { sig = hi; }
        let mm = capsule_offset(sig, uA, n);
        let m = mm.xyz;
        let px = p0 + sig * d1;
        let pa = px + ra * m;
        pe[end] = pa;
        let tb = clamp01(dot(px - q0, d2) / (4.0 * hb * hb));
        let w = q0 + tb * d2 - px;
        let wn = dot(w, n);
        let lat = w - wn * n - ra * (m - mm.w * n);
        if (dot(lat, lat) > lateral_max * lateral_max) { ok = false; }
        let si = line_capsule_entry(pa, n, q0, uB, 2.0 * hb, rb);
        if (si.y == 0.0) { ok = false; }
        se[end] = si.x;
        if (!ok) { break; }
      }
      if (ok) {
        if (se[0] < margin) { push(pe[0], pe[0] + se[0] * n, se[0], 9u); }
        if (se[1] < margin) { push(pe[1], pe[1] + se[1] * n, se[1], 10u); }
        // the CPU adds the closest pair when it is deeper than both ends by over 1e-9 R; in f32 each
        // separation carries up to E = F32_BOUND · (X + L) of rounding, their difference 2E, so the
        // cut-off grows by 2E: a closest pair within rounding of the ends (parallel capsules, whose
        // closest pair is as deep as the ends) is not a third point, as on the CPU
        let noise = 2.0 * F32_BOUND * (max(length(xa), length(xb)) + R + ha + hb);
        if (s < min(se[0], se[1]) - 1e-9 * R - noise) { push(ap + ra * n, ap + dv - rb * n, s, 11u); }
        if (o.count > 0u) { return; }
      }
    }
  }
  var fa = 1u;
  if (st.x <= 0.0) { fa = 0u; } else if (st.x >= 1.0) { fa = 2u; }
  var fb = 1u;
  if (st.y <= 0.0) { fb = 0u; } else if (st.y >= 1.0) { fb = 2u; }
  push(ap + ra * n, ap + dv - rb * n, s, 3u * fa + fb);
}

// ---- capsule–box (collideCapsuleBox, segBoxSlope, segBoxZero, capsuleBoxFace), in B's frame ----
fn seg_box_slope(p0: vec3f, d: vec3f, e: vec3f, t: f32) -> f32 {
  var g = 0.0;
  for (var i = 0; i < 3; i++) {
    let x = p0[i] + t * d[i];
    if (x > e[i]) { g += (x - e[i]) * d[i]; }
    else if (x < -e[i]) { g += (x + e[i]) * d[i]; }
  }
  return g;
}
fn seg_box_zero(p0: vec3f, d: vec3f, e: vec3f, t0: f32, t1: f32) -> f32 {
  let tm = 0.5 * (t0 + t1);
  var num = 0.0;
  var den = 0.0;
  for (var i = 0; i < 3; i++) {
    let x = p0[i] + tm * d[i];
    if (x > e[i]) { num += (p0[i] - e[i]) * d[i]; }
    else if (x < -e[i]) { num += (p0[i] + e[i]) * d[i]; }
    else { continue; }
    den += d[i] * d[i];
  }
  var t = t0;
  if (den > 0.0) { t = -num / den; }
  return clamp(t, t0, t1);
}
fn capsule_box_face(p0: vec3f, d: vec3f, r: f32, e: vec3f, k: i32, sigma: f32, xb: vec3f, qb: vec4f, margin: f32) {
  let j = (k + 1) % 3;
  let l = (k + 2) % 3;
  var nl = vec3f(0.0);
  nl[k] = sigma;
  let dl = sqrt(dot(d, d));
  let nu = sigma * d[k] / dl;
  var m = -nu * d / dl;
  m[k] += sigma;
  let mn = sqrt(dot(m, m));
  if (mn > 0.0) { m = m * (1.0 / mn); }
  var t_deep = 0.0;
  if (sigma * d[k] > 0.0) { t_deep = 1.0; }
  var lo = 0.0;
  var hi = -1.0;
  if (mn > 1e-12) { hi = 1.0; }
  for (var side = 0; side < 2; side++) {
    var c = j;
    if (side == 1) { c = l; }
    let q0 = p0[c] + r * m[c];
    if (abs(d[c]) < 1e-30) {
      if (abs(q0) > e[c]) { lo = 1.0; hi = 0.0; }
      continue;
    }
    let ta = (-e[c] - q0) / d[c];
    let tb = (e[c] - q0) / d[c];
    lo = max(lo, min(ta, tb));
    hi = min(hi, max(ta, tb));
  }
  let clipped = lo <= hi;
  let z0 = -sigma * p0[k] - e[k];
  let zd = -sigma * d[k];
  let face = 2u * u32(k) + select(0u, 1u, sigma < 0.0);
  o.n = rot(qb, nl);
  let ed = p0 + t_deep * d;
  var t1: f32;
  var s1: f32;
  var pa1: vec3f;
  if (abs(ed[j]) <= e[j] * (1.0 + 1e-12) && abs(ed[l]) <= e[l] * (1.0 + 1e-12)) {
    t1 = t_deep; s1 = z0 + t_deep * zd - r; pa1 = ed + r * nl;
  } else if (clipped) {
    t1 = select(lo, hi, t_deep == 1.0);
    s1 = z0 + t1 * zd - r * mn;
    pa1 = p0 + t1 * d + r * m;
  } else {
    t1 = t_deep; s1 = z0 + t_deep * zd - r; pa1 = ed + r * nl;
  }
  var t2 = -1.0;
  var s2 = 0.0;
  var has2 = false;
  var pa2 = vec3f(0.0);
  if (clipped) {
    let t = select(hi, lo, t_deep == 1.0);
    pa2 = p0 + t * d + r * m;
    let dj = pa2[j] - pa1[j];
    let dlat = pa2[l] - pa1[l];
    if (dj * dj + dlat * dlat > 1e-6 * r * r) { t2 = t; s2 = z0 + t * zd - r * mn; has2 = true; }
  }
  var end1 = 1u;
  if (t2 >= 0.0) { if (t1 < t2) { end1 = 0u; } } else if (t1 < 0.5) { end1 = 0u; }
  for (var i = 0; i < 2; i++) {
    var sp = s1;
    var pa = pa1;
    var end = end1;
    if (i == 1) {
      if (!has2) { continue; }
      sp = s2; pa = pa2; end = 1u - end1;
    }
    if (!(sp < margin)) { continue; }
    var foot = pa;
    foot[k] = -sigma * e[k];
    foot[j] = clamp(foot[j], -e[j], e[j]);
    foot[l] = clamp(foot[l], -e[l], e[l]);
    push(rot(qb, pa) + xb, rot(qb, foot) + xb, sp, 2u * face + end);
  }
}
fn capsule_box(r: f32, hh: f32, xa: vec3f, qa: vec4f, e: vec3f, xb: vec3f, qb: vec4f, margin: f32) {
  let u = axis_y(qa);
  let p0 = inv_rot(qb, xa - hh * u - xb);
  let d = inv_rot(qb, (2.0 * hh) * u);
  let scale_len = e.x + e.y + e.z + 2.0 * hh + r;
  // ---- apart: the exact closest pair (piecewise quadratic f, pairs.ts) ----
  var brk: array<f32, 8>;
  var nb = 0;
  brk[nb] = 0.0; nb++;
  for (var i = 0; i < 3; i++) {
    if (d[i] == 0.0) { continue; }
    let ta = (e[i] - p0[i]) / d[i];
    let tb = (-e[i] - p0[i]) / d[i];
    if (ta > 0.0 && ta < 1.0) { brk[nb] = ta; nb++; }
    if (tb > 0.0 && tb < 1.0) { brk[nb] = tb; nb++; }
  }
  brk[nb] = 1.0; nb++;
  for (var i = 1; i < nb; i++) {
    let v = brk[i];
    var j = i - 1;
    while (j >= 0 && brk[j] > v) { brk[j + 1] = brk[j]; j--; }
    brk[j + 1] = v;
  }
  var ta: f32;
  var tb: f32;
  if (seg_box_slope(p0, d, e, 0.0) >= 0.0) { ta = 0.0; }
  else {
    var k = 1;
    while (k < nb && seg_box_slope(p0, d, e, brk[k]) < 0.0) { k++; }
    if (k == nb) { ta = 1.0; } else { ta = seg_box_zero(p0, d, e, brk[k - 1], brk[k]); }
  }
  if (seg_box_slope(p0, d, e, 1.0) <= 0.0) { tb = 1.0; }
  else {
    var k = nb - 2;
    while (k >= 0 && seg_box_slope(p0, d, e, brk[k]) > 0.0) { k--; }
    if (k < 0) { tb = 0.0; } else { tb = seg_box_zero(p0, d, e, brk[k], brk[k + 1]); }
  }
  let t_best = 0.5 * (ta + tb);
  let q = p0 + t_best * d;
  let ov = q - clamp(q, -e, e);
  let dist = sqrt(dot(ov, ov));
  // apart or overlapping: the CPU's cut-off 1e-12 L is f64 rounding; f32 leaves a residual up to
  // E = F32_BOUND (X + L) where the segment meets the box (the breakpoints land beside the slab
  // planes), so the cut-off grows by E
  let noise = F32_BOUND * (max(length(xa), length(xb)) + scale_len);
  if (dist > 1e-12 * scale_len + noise) {
    let s = dist - r;
    if (s >= margin) { return; }
    var qbx = q;
    var code = 0u;
    var clamped = 0;
    var k = 0;
    var w = 1u;
    for (var i = 0; i < 3; i++) {
      if (q[i] > e[i]) { qbx[i] = e[i]; code += 2u * w; clamped++; k = i; }
      else if (q[i] < -e[i]) { qbx[i] = -e[i]; code += w; clamped++; k = i; }
      w *= 3u;
    }
    if (clamped == 1) {
      capsule_box_face(p0, d, r, e, k, select(-1.0, 1.0, qbx[k] > q[k]), xb, qb, margin);
      return;
    }
    let nl = (qbx - q) / dist;
    k = 0;
    for (var i = 1; i < 3; i++) { if (abs(nl[i]) > abs(nl[k])) { k = i; } }
    let j1 = (k + 1) % 3;
    let j2 = (k + 2) % 3;
    let lat2 = nl[j1] * nl[j1] + nl[j2] * nl[j2];
    // the CPU takes the face when n is within 1e-12 rad of its normal; in f32 the closest points'
    // lateral offset dist·√lat2 carries up to E of rounding, so an offset below E is the face too
    if (lat2 < 1e-24 || lat2 * dist * dist < noise * noise) {
      capsule_box_face(p0, d, r, e, k, select(-1.0, 1.0, nl[k] > 0.0), xb, qb, margin);
      return;
    }
    var region = 1u;
    if (t_best <= 0.0) { region = 0u; } else if (t_best >= 1.0) { region = 2u; }
    o.n = rot(qb, nl);
    push(rot(qb, q + r * nl) + xb, rot(qb, qbx) + xb, s, 16u + 3u * code + region);
    capsule_box_ends(p0, d, r, e, nl, qbx, region, xb, qb, margin, scale_len);
    return;
  }
  // ---- overlapping: separating axes ê_k and d × ê_k ----
  let p1 = p0 + d;
  var best = 3.4e38;
  var best_k = 0;
  var best_sigma = 1.0;
  for (var k = 0; k < 3; k++) {
    let lo = min(p0[k], p1[k]);
    let hi = max(p0[k], p1[k]);
    let plus = hi + r + e[k];
    let minus = e[k] - lo + r;
    if (plus < best) { best = plus; best_k = k; best_sigma = 1.0; }
    if (minus < best) { best = minus; best_k = k; best_sigma = -1.0; }
  }
  // the CPU lets an edge axis win only by more than 1e-9 L (ties go to the face); an edge axis that
  // duplicates a face axis (a capsule lying on a face: d × ê_i ∥ that face's normal) equals it up to
  // rounding, which in f32 is up to 2E apart (E = F32_BOUND (X + L)), so the margin grows by 2E
  let tie = 1e-9 * scale_len + 2.0 * noise;
  var edge_axis = -1;
  var edge_sigma = 1.0;
  for (var i = 0; i < 3; i++) {
    var c: vec3f;
    if (i == 0) { c = vec3f(0.0, d.z, -d.y); } else if (i == 1) { c = vec3f(-d.z, 0.0, d.x); } else { c = vec3f(d.y, -d.x, 0.0); }
    let cl = sqrt(dot(c, c));
    if (cl < 1e-30) { continue; }
    let sv = dot(p0, c) / cl;
    let hbx = dot(e, abs(c)) / cl;
    let plus = sv + r + hbx;
    let minus = hbx - sv + r;
    if (plus < best - tie) { best = plus; edge_axis = i; edge_sigma = 1.0; }
    if (minus < best - tie) { best = minus; edge_axis = i; edge_sigma = -1.0; }
  }
  if (edge_axis < 0) {
    capsule_box_face(p0, d, r, e, best_k, best_sigma, xb, qb, margin);
    return;
  }
  let s = -best;
  if (s >= margin) { return; }
  let i = edge_axis;
  var nl: vec3f;
  if (i == 0) { nl = vec3f(0.0, d.z, -d.y); } else if (i == 1) { nl = vec3f(-d.z, 0.0, d.x); } else { nl = vec3f(d.y, -d.x, 0.0); }
  nl = normalized(nl) * edge_sigma;
  let j = (i + 1) % 3;
  let l = (i + 2) % 3;
  let sj = select(1.0, -1.0, nl[j] > 0.0);
  let sl = select(1.0, -1.0, nl[l] > 0.0);
  var q0: vec3f;
  q0[i] = -e[i];
  q0[j] = sj * e[j];
  q0[l] = sl * e[l];
  var edv = vec3f(0.0);
  edv[i] = 2.0 * e[i];
  let st = closest_seg_seg(p0, d, q0, edv);
  let ps = p0 + st.x * d;
  let pe = q0 + st.y * edv;
  let sep = dot(pe - ps, nl) - r;
  o.n = rot(qb, nl);
  push(rot(qb, ps + r * nl) + xb, rot(qb, pe) + xb, sep, 100u + 4u * u32(i) + 2u * select(0u, 1u, sj > 0.0) + select(0u, 1u, sl > 0.0));
  var region = 1u;
  if (st.x <= 0.0) { region = 0u; } else if (st.x >= 1.0) { region = 2u; }
  capsule_box_ends(p0, d, r, e, nl, pe, region, xb, qb, margin, scale_len);
}

// pairs.ts capsuleBoxEnds: beside an edge or vertex contact, each segment end not at the closest pair
// (region 0: end 0, 1: the side, 2: end 1) gives pointA = c + r m on the capsule and its gap
// s = (q − pointA)·n to the box's support plane through q (local), pointB = pointA + s n, when the end's
// ball moved along n meets the box within the margin (Newton on g(λ) = sdf_box(c + λ n) − r from the
// entry into the slabs |x_i| ≤ e_i + r; f32: stopped at 1e-6 of the pair's size, so a gate decided
// within that of the margin may differ from the CPU's); ids 120 + end
fn capsule_box_ends(p0: vec3f, d: vec3f, r: f32, e: vec3f, nl: vec3f, q: vec3f, region: u32, xb: vec3f, qb: vec4f, margin: f32, scale_len: f32) {
  let dl = sqrt(dot(d, d));
  if (!(dl > 0.0)) { return; }
  let u = d / dl;
  let qn = dot(q, nl);
  let tol = 1e-6 * scale_len;
  for (var end = 0u; end < 2u; end++) {
    if (region == 2u * end) { continue; }
    let c = p0 + f32(end) * d;
    let m = capsule_offset(f32(end), u, nl);
    let pa = c + r * m.xyz;
    let sep = qn - dot(pa, nl);
    if (!(sep < margin)) { continue; }
    var lo = -3.4e38;
    var hi = 3.4e38;
    for (var i = 0; i < 3; i++) {
      let w = e[i] + r;
      if (abs(nl[i]) < 1e-12) {
        if (abs(c[i]) > w) { lo = 3.4e38; hi = -3.4e38; }
        continue;
      }
      let ta = (-w - c[i]) / nl[i];
      let tb = (w - c[i]) / nl[i];
      lo = max(lo, min(ta, tb));
      hi = min(hi, max(ta, tb));
    }
    if (!(lo <= hi) || !(lo < margin)) { continue; }
    var lam = lo;
    var touched = false;
    for (var k = 0; k < 32; k++) {
      let p = c + lam * nl;
      let dv = p - clamp(p, -e, e);
      let dist = sqrt(dot(dv, dv));
      let g = dist - r;
      if (g <= tol) { touched = true; break; }
      let slope = dot(dv, nl) / dist;
      if (!(slope < 0.0)) { break; }
      lam -= g / slope;
      if (!(lam < margin) || lam > hi) { break; }
    }
    if (!touched) { continue; }
    push(rot(qb, pa) + xb, rot(qb, pa + sep * nl) + xb, sep, 120u + end);
  }
}

// ---- box–box (box-box.ts: SAT over 15 axes, face clipping, edge–edge, closest features) ----
// box X (0 = A, 1 = B): centre bc[X], axes bR[X][k] (world, from the quaternion scaled by 1/|q|²), half extents bh[X]
var<private> bc: array<vec3f, 2>;
var<private> bR: array<array<vec3f, 3>, 2>;
var<private> bh: array<vec3f, 2>;
var<private> bdv: vec3f;
var<private> bnoise: f32;
fn load_box(X: u32, h: vec3f, c: vec3f, q: vec4f) {
  let x = q.x; let y = q.y; let z = q.z; let w = q.w;
  let s = 2.0 / (x * x + y * y + z * z + w * w);
  bc[X] = c;
  bR[X][0] = vec3f(1.0 - s * (y * y + z * z), s * (x * y + z * w), s * (x * z - y * w));
  bR[X][1] = vec3f(s * (x * y - z * w), 1.0 - s * (x * x + z * z), s * (y * z + x * w));
  bR[X][2] = vec3f(s * (x * z + y * w), s * (y * z - x * w), 1.0 - s * (x * x + y * y));
  bh[X] = h;
}
fn support_radius(X: u32, L: vec3f) -> f32 {
  return bh[X].x * abs(dot(bR[X][0], L)) + bh[X].y * abs(dot(bR[X][1], L)) + bh[X].z * abs(dot(bR[X][2], L));
}
const EDGE_FACE_COS: f32 = ${Math.cos(0.02)};
fn near_face_normal(L: vec3f) -> bool {
  for (var k = 0; k < 3; k++) {
    if (abs(dot(bR[0][k], L)) > EDGE_FACE_COS) { return true; }
    if (abs(dot(bR[1][k], L)) > EDGE_FACE_COS) { return true; }
  }
  return false;
}
var<private> pX: array<vec3f, 8>;
var<private> pC: array<u32, 8>;
var<private> pL: array<u32, 8>;
var<private> qX: array<vec3f, 8>;
var<private> qC: array<u32, 8>;
var<private> qL: array<u32, 8>;
var<private> depth: array<f32, 8>;
var<private> keep: array<u32, 8>;
const S1 = array<f32, 4>(1.0, -1.0, -1.0, 1.0);
const S2 = array<f32, 4>(1.0, 1.0, -1.0, -1.0);

// box-box.ts reduceToFour: the deepest, the farthest from it in the plane, the largest triangle each side
fn bb_reduce(count: u32, m: vec3f) {
  var i1 = 0u;
  for (var q = 1u; q < count; q++) { if (depth[keep[q]] < depth[keep[i1]]) { i1 = q; } }
  let x1 = pX[keep[i1]];
  var i2 = 0u;
  var far = -1.0;
  for (var q = 0u; q < count; q++) {
    if (q == i1) { continue; }
    let dd = pX[keep[q]] - x1;
    let dn = dot(dd, m);
    let d2 = dot(dd, dd) - dn * dn;
    if (d2 > far) { far = d2; i2 = q; }
  }
  let ev = pX[keep[i2]] - x1;
  var ipos = -1;
  var ineg = -1;
  var apos = 0.0;
  var aneg = 0.0;
  for (var q = 0u; q < count; q++) {
    if (q == i1 || q == i2) { continue; }
    let area = dot(cross(ev, pX[keep[q]] - x1), m);
    if (area > apos) { apos = area; ipos = i32(q); }
    if (area < aneg) { aneg = area; ineg = i32(q); }
  }
  var chosen: array<u32, 4>;
  chosen[0] = i1;
  chosen[1] = i2;
  var nc = 2u;
  if (ipos >= 0) { chosen[nc] = u32(ipos); nc++; }
  if (ineg >= 0) { chosen[nc] = u32(ineg); nc++; }
  while (nc < 4u) {
    var bq = 0u;
    var ba = -1.0;
    for (var q = 0u; q < count; q++) {
      var used = false;
      for (var c = 0u; c < nc; c++) { if (chosen[c] == q) { used = true; } }
      if (used) { continue; }
      let area = abs(dot(cross(ev, pX[keep[q]] - x1), m));
      if (area > ba) { ba = area; bq = q; }
    }
    chosen[nc] = bq;
    nc++;
  }
  var kept: array<u32, 4>;
  for (var q = 0u; q < 4u; q++) { kept[q] = keep[chosen[q]]; }
  for (var q = 0u; q < 4u; q++) { keep[q] = kept[q]; }
}

// box-box.ts faceContact: reference face k of box R (1 = B), incident face of the other, clipped
fn bb_face(ref_is_b: bool, k: i32, margin: f32) -> bool {
  let R = select(0u, 1u, ref_is_b);
  let I = 1u - R;
  var m = bR[R][k];
  var dsign = -1.0;
  if (dot(bc[I] - bc[R], m) >= 0.0) { dsign = 1.0; }
  m = m * dsign;
  let ref_face = 2u * u32(k) + select(0u, 1u, dsign < 0.0);
  var jI = 0;
  var best = -1.0;
  var dj = 0.0;
  for (var j = 0; j < 3; j++) {
    let d = dot(bR[I][j], m);
    if (abs(d) > best) { best = abs(d); jI = j; dj = d; }
  }
  var isign = 1.0;
  if (dj > 0.0) { isign = -1.0; }
  let inc_face = 2u * u32(jI) + select(0u, 1u, isign < 0.0);
  let j1 = (jI + 1) % 3;
  let j2 = (jI + 2) % 3;
  let fc = bc[I] + (isign * bh[I][jI]) * bR[I][jI];
  let e1 = bh[I][j1] * bR[I][j1];
  let e2 = bh[I][j2] * bR[I][j2];
  for (var v = 0; v < 4; v++) {
    pX[v] = fc + S1[v] * e1 + S2[v] * e2;
    pC[v] = u32(v);
    pL[v] = u32(v);
  }
  let k1 = (k + 1) % 3;
  let k2 = (k + 2) % 3;
  // the CPU snaps a vertex within 1e-9 h of a side plane onto it; f32 positions carry up to E
  // (bnoise) of rounding, so the snap band grows by 2E: a vertex on a side plane stays one point
  let clip_tol = 1e-9 * max(bh[R][k1], bh[R][k2]) + 2.0 * bnoise;
  var n = 4u;
  for (var p = 0u; p < 4u; p++) {
    if (n == 0u) { break; }
    var ax = k2;
    if (p < 2u) { ax = k1; }
    var sg = -1.0;
    if (p % 2u == 0u) { sg = 1.0; }
    let pn = sg * bR[R][ax];
    let po = dot(pn, bc[R]) + bh[R][ax];
    var out = 0u;
    var prev = n - 1u;
    var dprev = dot(pn, pX[prev]) - po;
    if (abs(dprev) <= clip_tol) { dprev = 0.0; }
    for (var cur = 0u; cur < n; cur++) {
      var dcur = dot(pn, pX[cur]) - po;
      if (abs(dcur) <= clip_tol) { dcur = 0.0; }
      if ((dprev < 0.0 && dcur > 0.0) || (dprev > 0.0 && dcur < 0.0)) {
        let t = dprev / (dprev - dcur);
        qX[out] = pX[prev] + t * (pX[cur] - pX[prev]);
        qC[out] = 4u + 4u * pL[cur] + p;
        if (dcur < 0.0) { qL[out] = 4u + p; } else { qL[out] = pL[cur]; }
        out++;
      }
      if (dcur <= 0.0) {
        qX[out] = pX[cur];
        qC[out] = pC[cur];
        if (dcur == 0.0 && dprev > 0.0) { qL[out] = 4u + p; } else { qL[out] = pL[cur]; }
        out++;
      }
      prev = cur;
      dprev = dcur;
    }
    n = out;
    for (var v = 0u; v < n; v++) { pX[v] = qX[v]; pC[v] = qC[v]; pL[v] = qL[v]; }
  }
  if (n == 0u) { return false; }
  let plane_off = dot(m, bc[R]) + bh[R][k];
  var count = 0u;
  for (var v = 0u; v < n; v++) {
    let sv = dot(m, pX[v]) - plane_off;
    if (sv < margin) { depth[v] = sv; keep[count] = v; count++; }
  }
  if (count == 0u) { return false; }
  if (count > 4u) { bb_reduce(count, m); count = 4u; }
  let id_base = select(0u, 4u, ref_is_b) | (ref_face << 3u) | (inc_face << 6u);
  for (var q = 0u; q < count; q++) {
    let v = keep[q];
    let sv = depth[v];
    let on_inc = pX[v];
    let on_ref = pX[v] - sv * m;
    if (ref_is_b) { push(on_inc, on_ref, sv, id_base | (pC[v] << 9u)); } else { push(on_ref, on_inc, sv, id_base | (pC[v] << 9u)); }
  }
  o.n = select(m, -m, ref_is_b);
  return true;
}

// box-box.ts edgeContact: A's edge along a_i and B's along b_j facing along L = a_i × b_j
fn bb_edge(i: i32, j: i32, margin: f32) -> bool {
  let u = bR[0][i];
  let v = bR[1][j];
  // 1 − β² (the CPU's den) is |u × v|²; in f32, 1 − β² cancels to 0 for |u × v| below ≈ 2.4e-4
  // (β² rounds to 1), so it is taken from the cross product, accurate to ≈ 1e-7 relative
  let cr = cross(u, v);
  let den = dot(cr, cr);
  var L = cr / sqrt(den);
  if (dot(bdv, L) < 0.0) { L = -L; }
  var p = bc[0];
  var edge_a = 4u * u32(i);
  for (var o_ = 1; o_ <= 2; o_++) {
    let k = (i + o_) % 3;
    var sg = 1.0;
    if (dot(bR[0][k], L) < 0.0) { sg = -1.0; edge_a |= u32(o_); }
    p += (sg * bh[0][k]) * bR[0][k];
  }
  var q = bc[1];
  var edge_b = 4u * u32(j);
  for (var o_ = 1; o_ <= 2; o_++) {
    let k = (j + o_) % 3;
    var sg = 1.0;
    if (-dot(bR[1][k], L) < 0.0) { sg = -1.0; edge_b |= u32(o_); }
    q += (sg * bh[1][k]) * bR[1][k];
  }
  let w = p - q;
  let beta = dot(u, v);
  let delta = dot(u, w);
  let e = dot(v, w);
  var t = (beta * e - delta) / den;
  var s = e + beta * t;
  // the CPU's 1e-9 h tolerance on "on the edge", grown by the f32 bound
  let tol_a = 1e-9 * bh[0][i] + bnoise;
  let tol_b = 1e-9 * bh[1][j] + bnoise;
  if (abs(t) > bh[0][i] + tol_a || abs(s) > bh[1][j] + tol_b) { return false; }
  t = clamp(t, -bh[0][i], bh[0][i]);
  s = clamp(s, -bh[1][j], bh[1][j]);
  let pa = p + t * u;
  let pb = q + s * v;
  let sep = dot(pb - pa, L);
  if (sep >= margin) { return false; }
  o.n = L;
  push(pa, pb, sep, 1u | (edge_a << 2u) | (edge_b << 6u));
  return true;
}

fn box_vertex(X: u32, v: u32) -> vec3f {
  var out = bc[X];
  for (var k = 0u; k < 3u; k++) {
    var sg = bh[X][k];
    if ((v & (1u << k)) != 0u) { sg = -sg; }
    out += sg * bR[X][k];
  }
  return out;
}
fn closest_on_box(X: u32, x: vec3f) -> vec3f {
  let r = x - bc[X];
  var out = bc[X];
  for (var k = 0; k < 3; k++) { out += clamp(dot(r, bR[X][k]), -bh[X][k], bh[X][k]) * bR[X][k]; }
  return out;
}
var<private> seg_p: vec3f;
var<private> seg_q: vec3f;
// box-box.ts segmentSegment (its own clamping order and cut-off 1e-14 a c)
fn bb_seg_seg(p: vec3f, u: vec3f, q: vec3f, v: vec3f) -> f32 {
  let r = p - q;
  let a = dot(u, u);
  let b = dot(u, v);
  let c = dot(v, v);
  let d = dot(u, r);
  let e = dot(v, r);
  // a c − b² = |u × v|² and b e − c d = (v × r)·(u × v) (Lagrange's identity, as geometry.ts does):
  // the f32 difference of products would leave noise of ≈ 6e-8 a c, far above the cut-off 1e-14 a c
  let m = cross(u, v);
  let den = dot(m, m);
  var t = 0.0;
  if (den > 1e-14 * a * c) { t = clamp01(dot(cross(v, r), m) / den); }
  var s = (b * t + e) / c;
  if (s < 0.0) { s = 0.0; t = clamp01(-d / a); }
  else if (s > 1.0) { s = 1.0; t = clamp01((b - d) / a); }
  seg_p = p + t * u;
  seg_q = q + s * v;
  let g = seg_q - seg_p;
  return dot(g, g);
}
fn edge_seg(X: u32, e: u32) -> array<vec3f, 2> {
  let ax = e >> 2u;
  var p = bc[X] - bh[X][ax] * bR[X][ax];
  for (var o_ = 1u; o_ <= 2u; o_++) {
    let k = (ax + o_) % 3u;
    var sg = bh[X][k];
    if ((e & o_) != 0u) { sg = -sg; }
    p += sg * bR[X][k];
  }
  return array<vec3f, 2>(p, (2.0 * bh[X][ax]) * bR[X][ax]);
}
// box-box.ts closestFeatures: vertex–box and edge–edge, the least distance (disjoint pairs)
fn bb_closest(margin: f32) -> bool {
  var best = 3.4e38;
  var id = 0u;
  var fa = vec3f(0.0);
  var fb = vec3f(0.0);
  for (var v = 0u; v < 8u; v++) {
    let vb = box_vertex(1u, v);
    let cb = closest_on_box(0u, vb);
    let g = vb - cb;
    let d2 = dot(g, g);
    if (d2 < best) { best = d2; fa = cb; fb = vb; id = 2u | (v << 8u); }
    let va = box_vertex(0u, v);
    let ca = closest_on_box(1u, va);
    let g2 = va - ca;
    let d2b = dot(g2, g2);
    if (d2b < best) { best = d2b; fa = va; fb = ca; id = 2u | (1u << 2u) | (v << 4u); }
  }
  for (var ea = 0u; ea < 12u; ea++) {
    let sa = edge_seg(0u, ea);
    for (var eb = 0u; eb < 12u; eb++) {
      let sb = edge_seg(1u, eb);
      let d2 = bb_seg_seg(sa[0], sa[1], sb[0], sb[1]);
      if (d2 < best) { best = d2; fa = seg_p; fb = seg_q; id = 2u | (2u << 2u) | (ea << 4u) | (eb << 8u); }
    }
  }
  let dist = sqrt(best);
  if (!(dist < margin) || dist == 0.0) { return false; }
  o.n = (fb - fa) / dist;
  push(fa, fb, dist, id);
  return true;
}

fn box_box(ea: vec3f, xa: vec3f, qa: vec4f, eb: vec3f, xb: vec3f, qb: vec4f, margin: f32) {
  load_box(0u, ea, xa, qa);
  load_box(1u, eb, xb, qb);
  bdv = xb - xa;
  bnoise = F32_BOUND * (max(length(xa), length(xb)) + length(ea) + length(eb));
  let abs_tol = 1e-5 * min(min(min(ea.x, ea.y), min(ea.z, eb.x)), min(eb.y, eb.z));
  var sfa = -3.4e38;
  var ifa = 0;
  for (var i = 0; i < 3; i++) {
    let ax = bR[0][i];
    let s = abs(dot(bdv, ax)) - bh[0][i] - support_radius(1u, ax);
    if (s >= margin) { return; }
    if (s > sfa) { sfa = s; ifa = i; }
  }
  var sfb = -3.4e38;
  var ifb = 0;
  for (var j = 0; j < 3; j++) {
    let bx = bR[1][j];
    let s = abs(dot(bdv, bx)) - bh[1][j] - support_radius(0u, bx);
    if (s >= margin) { return; }
    if (s > sfb) { sfb = s; ifb = j; }
  }
  var se = -3.4e38;
  var sall = max(sfa, sfb);
  var ie = -1;
  var je = -1;
  for (var i = 0; i < 3; i++) {
    for (var j = 0; j < 3; j++) {
      var L = cross(bR[0][i], bR[1][j]);
      let len = sqrt(dot(L, L));
      if (len < 1e-6) { continue; }
      L = L / len;
      let s = abs(dot(bdv, L)) - support_radius(0u, L) - support_radius(1u, L);
      if (s >= margin) { return; }
      if (s > sall) { sall = s; }
      if (s > se && !near_face_normal(L)) { se = s; ie = i; je = j; }
    }
  }
  var face_is_b: bool;
  let cos_faces = abs(dot(bR[0][ifa], bR[1][ifb]));
  if (cos_faces > EDGE_FACE_COS) {
    let area_a = bh[0][(ifa + 1) % 3] * bh[0][(ifa + 2) % 3];
    let area_b = bh[1][(ifb + 1) % 3] * bh[1][(ifb + 2) % 3];
    face_is_b = area_b > area_a * (1.0 + 1e-6);
  } else {
    face_is_b = sfb > sfa + FACE_B_REL_TOL * abs(sfa) + abs_tol;
  }
  let sf = select(sfa, sfb, face_is_b);
  let use_edge = ie >= 0 && se > sf + EDGE_REL_TOL * abs(sf) + abs_tol;
  var found = false;
  if (use_edge) {
    found = bb_edge(ie, je, margin);
    if (!found) { found = bb_face(face_is_b, select(ifa, ifb, face_is_b), margin); }
  } else {
    found = bb_face(face_is_b, select(ifa, ifb, face_is_b), margin);
    if (!found && ie >= 0) { found = bb_edge(ie, je, margin); }
  }
  if (!found) { found = bb_face(!face_is_b, select(ifb, ifa, face_is_b), margin); }
  if (!found && sall > 0.0) { found = bb_closest(margin); }
}
`;

export const narrowWgsl = /* wgsl */ `
${NarrowParamsRecord.wgsl}
${BodyPoseRecord.wgsl}
${BodyShapeRecord.wgsl}
${ManifoldRecord.wgsl}
${ContactPointRecord.wgsl}
struct BodyPair { a: u32, b: u32, };
@group(0) @binding(0) var<uniform> params: NarrowParams;
@group(0) @binding(1) var<storage, read> pairs: array<BodyPair>;
@group(0) @binding(2) var<storage, read> counters: array<u32>;
@group(0) @binding(3) var<storage, read> poses: array<BodyPose>;
@group(0) @binding(4) var<storage, read> shapes: array<BodyShape>;
@group(0) @binding(5) var<storage, read_write> manifolds: array<Manifold>;
@group(0) @binding(6) var<storage, read_write> points: array<ContactPoint>;
@group(0) @binding(7) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read> speeds: array<f32>;
${THREAD_INDEX_WGSL}
${routines}

// the least half size of a shape (model/world.ts leastHalfSize; a plane: unbounded)
fn least_half(s: BodyShape) -> f32 {
  switch (s.kind) {
    case 0u, 1u: { return s.size.x; }
    case 2u: { return min(s.size.x, min(s.size.y, s.size.z)); }
    default: { return 3.4e38; }
  }
}

// the pair's margin: params.margin, or the CPU pipeline's (pipeline.ts): 4 slop + h (s_a + s_b),
// slop = min(LINEAR_SLOP, SLOP_SIZE_FRACTION · the smaller least half size) (pairSlop)
fn pair_margin(a: u32, b: u32, sa: BodyShape, sb: BodyShape) -> f32 {
  if (params.per_pair == 0u) { return params.margin; }
  let slop = min(${LINEAR_SLOP}, ${SLOP_SIZE_FRACTION} * min(least_half(sa), least_half(sb)));
  return 4.0 * slop + params.h * (speeds[a] + speeds[b]);
}

// the pair in routine order (kind(a) ≤ kind(b)); false when no routine exists for it
fn ordered(sa: BodyShape, pa: BodyPose, sb: BodyShape, pb: BodyPose, margin: f32) -> bool {
  let key = sa.kind * 4u + sb.kind;
  switch (key) {
    case 0u: { sphere_sphere(sa.size.x, pa.position, sb.size.x, pb.position, margin); }
    case 1u: { sphere_capsule(sa.size.x, pa.position, sb.size.x, sb.size.y, pb.position, pb.orientation, margin); }
    case 2u: { sphere_box(sa.size.x, pa.position, sb.size, pb.position, pb.orientation, margin); }
    case 3u: { sphere_plane(sa.size.x, pa.position, pb.position, pb.orientation, margin); }
    case 5u: { capsule_capsule(sa.size.x, sa.size.y, pa.position, pa.orientation, sb.size.x, sb.size.y, pb.position, pb.orientation, margin); }
    case 6u: { capsule_box(sa.size.x, sa.size.y, pa.position, pa.orientation, sb.size, pb.position, pb.orientation, margin); }
    case 7u: { capsule_plane(sa.size.x, sa.size.y, pa.position, pa.orientation, pb.position, pb.orientation, margin); }
    case 10u: { box_box(sa.size, pa.position, pa.orientation, sb.size, pb.position, pb.orientation, margin); }
    case 11u: { box_plane(sa.size, pa.position, pa.orientation, pb.position, pb.orientation, margin); }
    case 15u: { } // plane–plane: two fixed half-spaces, never a contact
    default: { return false; }
  }
  return true;
}

${kernelEntry('np_collide')} {
  let k = thread_index(gid, nwg);
  if (k >= min(counters[params.counter], params.capacity)) { return; }
  let pr = pairs[k];
  let sa = shapes[pr.a];
  let sb = shapes[pr.b];
  let pa = poses[pr.a];
  let pb = poses[pr.b];
  o.count = 0u;
  o.n = vec3f(0.0, 1.0, 0.0);
  var ok: bool;
  let swapped = sa.kind > sb.kind;
  let margin = pair_margin(pr.a, pr.b, sa, sb);
  if (swapped) { ok = ordered(sb, pb, sa, pa, margin); } else { ok = ordered(sa, pa, sb, pb, margin); }
  if (!ok) { atomicAdd(&status[${STATUS_UNSUPPORTED}], 1u); }
  // a swapped pair turned back (narrow.ts collide): n negated, pointA and pointB exchanged
  var m: Manifold;
  m.normal = select(o.n, -o.n, swapped);
  m.count = o.count;
  m.body_a = pr.a;
  m.body_b = pr.b;
  manifolds[k] = m;
  for (var j = 0u; j < o.count; j++) {
    var c: ContactPoint;
    if (swapped) { c.point_a = o.pb[j]; c.point_b = o.pa[j]; } else { c.point_a = o.pa[j]; c.point_b = o.pb[j]; }
    c.id = o.id[j];
    c.separation = o.s[j];
    points[4u * k + j] = c;
  }
}
`;
