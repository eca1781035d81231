/**
 * Small vector and quaternion helpers of the narrow phase, on V3 / Q4 tuples (types.ts).
 * Every helper that makes a vector writes it into an `out` argument and returns it, so the
 * per-step collision routines can work in preallocated scratch vectors (no allocation in the
 * inner loops); `out` may alias an input unless said otherwise.
 *
 * Rotation: for a unit quaternion q = (v, w) = [x, y, z, w], R(q) p = p + 2 v × (v × p + w p)
 * (expand q ⊗ (p, 0) ⊗ q*); the inverse rotation is that of the conjugate (−v, w).
 */
import type { Pose, Q4, V3 } from './types.js';

export function v3(x = 0, y = 0, z = 0): V3 {
  return [x, y, z];
}

export function dot(a: V3, b: V3): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

export function length(a: V3): number {
  return Math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

export function set(out: V3, x: number, y: number, z: number): V3 {
  out[0] = x;
  out[1] = y;
  out[2] = z;
  return out;
}

export function copy(out: V3, a: V3): V3 {
  out[0] = a[0];
  out[1] = a[1];
  out[2] = a[2];
  return out;
}

/** out = a − b */
export function sub(out: V3, a: V3, b: V3): V3 {
  out[0] = a[0] - b[0];
  out[1] = a[1] - b[1];
  out[2] = a[2] - b[2];
  return out;
}

/** out = a + b */
export function add(out: V3, a: V3, b: V3): V3 {
  out[0] = a[0] + b[0];
  out[1] = a[1] + b[1];
  out[2] = a[2] + b[2];
  return out;
}

/** out = a + k b */
export function addScaled(out: V3, a: V3, b: V3, k: number): V3 {
  out[0] = a[0] + k * b[0];
  out[1] = a[1] + k * b[1];
  out[2] = a[2] + k * b[2];
  return out;
}

/** out = k a */
export function scale(out: V3, a: V3, k: number): V3 {
  out[0] = k * a[0];
  out[1] = k * a[1];
  out[2] = k * a[2];
  return out;
}

/** out = a × b (out must not alias a or b) */
export function cross(out: V3, a: V3, b: V3): V3 {
  const x = a[1] * b[2] - a[2] * b[1];
  const y = a[2] * b[0] - a[0] * b[2];
  const z = a[0] * b[1] - a[1] * b[0];
  out[0] = x;
  out[1] = y;
  out[2] = z;
  return out;
}

/** out = a / |a|; returns |a| (out untouched when |a| = 0). */
export function normalize(out: V3, a: V3): number {
  const l = Math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  if (l > 0) scale(out, a, 1 / l);
  return l;
}

/** out = R(q) p, R(q) p = p + 2 v × (v × p + w p) with q = (v, w) (header). */
export function rotate(out: V3, q: Q4, p: V3): V3 {
  return rotateBy(out, q[0], q[1], q[2], q[3], p);
}

/** out = R(q)ᵀ p = R(q*) p, q* = (−v, w). */
export function inverseRotate(out: V3, q: Q4, p: V3): V3 {
  return rotateBy(out, -q[0], -q[1], -q[2], q[3], p);
}

function rotateBy(out: V3, x: number, y: number, z: number, w: number, p: V3): V3 {
  const px = p[0], py = p[1], pz = p[2];
  // t = v × p + w p
  const tx = y * pz - z * py + w * px;
  const ty = z * px - x * pz + w * py;
  const tz = x * py - y * px + w * pz;
  // p + 2 v × t
  out[0] = px + 2 * (y * tz - z * ty);
  out[1] = py + 2 * (z * tx - x * tz);
  out[2] = pz + 2 * (x * ty - y * tx);
  return out;
}

/** out = R(q) ŷ, the body's local +y axis in the world (a capsule's axis, a plane's normal): R's second column. */
export function axisY(out: V3, q: Q4): V3 {
  const x = q[0], y = q[1], z = q[2], w = q[3];
  out[0] = 2 * (x * y - z * w);
  out[1] = 1 - 2 * (x * x + z * z);
  out[2] = 2 * (y * z + x * w);
  return out;
}

/** out = R(q)ᵀ (p − x): a world point in the body's local frame. */
export function toLocalPoint(out: V3, pose: Pose, p: V3): V3 {
  sub(out, p, pose.position);
  return inverseRotate(out, pose.orientation, out);
}

/** out = x + R(q) p: a local point in the world. */
export function toWorldPoint(out: V3, pose: Pose, p: V3): V3 {
  rotate(out, pose.orientation, p);
  return add(out, out, pose.position);
}

/** out = a unit vector perpendicular to a (a ≠ 0): a × (the world axis least aligned with a), normalised. */
export function anyPerpendicular(out: V3, a: V3): V3 {
  const ax = Math.abs(a[0]), ay = Math.abs(a[1]), az = Math.abs(a[2]);
  if (ax <= ay && ax <= az) set(out, 0, a[2], -a[1]); // a × x̂
  else if (ay <= az) set(out, -a[2], 0, a[0]); // a × ŷ
  else set(out, a[1], -a[0], 0); // a × ẑ
  normalize(out, out);
  return out;
}

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x);

/**
 * Closest points of the segments P(s) = p0 + s d1 and Q(t) = q0 + t d2, s, t ∈ [0, 1]; writes
 * [s, t] into `out`. Derivation: F(s, t) = |r + s d1 − t d2|², r = p0 − q0, is a convex quadratic.
 * With a = d1·d1, e = d2·d2, b = d1·d2, c = d1·r, f = d2·r:
 *   ∂F/∂s = 0  ⇔  a s − b t + c = 0  ⇔  s = (b t − c)/a        (best s for a given t)
 *   ∂F/∂t = 0  ⇔  b s − e t + f = 0  ⇔  t = (b s + f)/e        (best t for a given s)
 * and both together s = (b f − c e)/(a e − b²). Clamp that s to [0, 1] and take the best t for it;
 * if that t leaves [0, 1], clamp it and take the best s for the clamped t (clamped). Each step
 * ends on a point satisfying the KKT conditions of the box-constrained convex problem, so the
 * result is a global minimiser.
 * Conditioning: for nearly parallel segments a e − b² and b f − c e are small differences of
 * large products (a e − b² loses all its digits once sin²θ ≈ 1e−16). By Lagrange's identity
 * (u × v)·(w × x) = (u·w)(v·x) − (u·x)(v·w) they are |d1 × d2|² and (d2 × r)·(d1 × d2), whose
 * cross products keep a relative accuracy ≈ 1e−16/sin θ, so the stationary s stays accurate down
 * to sin θ ≈ 1e−12; below that the segments are treated as parallel (a whole set of closest pairs;
 * the start s = 0 picks one).
 */
export function closestSegmentSegment(out: [number, number] | Float64Array, p0: V3, d1: V3, q0: V3, d2: V3): void {
  const rx = p0[0] - q0[0], ry = p0[1] - q0[1], rz = p0[2] - q0[2];
  const a = dot(d1, d1), e = dot(d2, d2), b = dot(d1, d2);
  const c = d1[0] * rx + d1[1] * ry + d1[2] * rz;
  const f = d2[0] * rx + d2[1] * ry + d2[2] * rz;
  let s: number, t: number;
  if (a <= 1e-300 && e <= 1e-300) {
    s = 0;
    t = 0;
  } else if (a <= 1e-300) {
    s = 0;
    t = clamp01(f / e);
  } else if (e <= 1e-300) {
    t = 0;
    s = clamp01(-c / a);
  } else {
    // m = d1 × d2, k = d2 × r: a e − b² = m·m, b f − c e = k·m
    const mx = d1[1] * d2[2] - d1[2] * d2[1], my = d1[2] * d2[0] - d1[0] * d2[2], mz = d1[0] * d2[1] - d1[1] * d2[0];
    const denom = mx * mx + my * my + mz * mz;
    if (denom > 1e-24 * a * e) {
      const kx = d2[1] * rz - d2[2] * ry, ky = d2[2] * rx - d2[0] * rz, kz = d2[0] * ry - d2[1] * rx;
      s = clamp01((kx * mx + ky * my + kz * mz) / denom);
    } else s = 0;
    t = (b * s + f) / e;
    if (t < 0) {
      t = 0;
      s = clamp01(-c / a);
    } else if (t > 1) {
      t = 1;
      s = clamp01((b - c) / a);
    }
  }
  out[0] = s;
  out[1] = t;
}

/**
 * The smaller root of A λ² + 2 B λ + C = 0 (A > 0), or NaN when there is none: λ = (−B − √D)/A,
 * D = B² − A C, written as C/(−B + √D) when B < 0 (no cancellation of −B against √D).
 */
function smallerRoot(A: number, B: number, C: number): number {
  const D = B * B - A * C;
  if (D < 0) return NaN;
  const sq = Math.sqrt(D);
  if (B > 0) return (-B - sq) / A;
  const den = -B + sq;
  return den > 0 ? C / den : 0; // den = 0: B = 0 = D, so C = 0 and the double root is 0
}

/**
 * The least λ with o + λ n inside the capsule {x : dist(x, segment) ≤ r}, segment q0 + τ u,
 * τ ∈ [0, len] (u, n unit): where the line o + λ n enters it, or NaN when it misses. The capsule is
 * the union of the finite cylinder and the two end balls, so its entry is the first of: the entry
 * through the cylinder's side, |(m + λ n)⊥u|² = r² with m = o − q0, taken when its axial
 * coordinate (m + λ n)·u lies in [0, len] (an entry through a flat end disc is inside a ball and so
 * covered by it), and the entries into the balls, |o + λ n − c|² = r².
 */
export function lineCapsuleEntry(o: V3, n: V3, q0: V3, u: V3, len: number, r: number): number {
  const mx = o[0] - q0[0], my = o[1] - q0[1], mz = o[2] - q0[2];
  const mu = mx * u[0] + my * u[1] + mz * u[2];
  const nu = n[0] * u[0] + n[1] * u[1] + n[2] * u[2];
  const px = mx - mu * u[0], py = my - mu * u[1], pz = mz - mu * u[2];
  const qx = n[0] - nu * u[0], qy = n[1] - nu * u[1], qz = n[2] - nu * u[2];
  let best = Infinity;
  const A = qx * qx + qy * qy + qz * qz;
  if (A > 1e-24) {
    const l = smallerRoot(A, px * qx + py * qy + pz * qz, px * px + py * py + pz * pz - r * r);
    const axial = mu + l * nu;
    if (axial >= 0 && axial <= len) best = l; // (NaN fails both tests)
  }
  for (let end = 0; end < 2; end++) {
    const t = end === 0 ? 0 : len;
    const ex = mx - t * u[0], ey = my - t * u[1], ez = mz - t * u[2];
    const l = smallerRoot(1, ex * n[0] + ey * n[1] + ez * n[2], ex * ex + ey * ey + ez * ez - r * r);
    if (l < best) best = l;
  }
  return best === Infinity ? NaN : best;
}
