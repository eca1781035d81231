/**
 * Quaternion helpers of the rigid-body core (f64; the WGSL twins are in body.wgsl.ts).
 * Quaternions are [x y z w] (model/world.ts), stored 4 per body in a Float64Array; vectors
 * 3 per entry. Out-parameters and offsets, no allocation: these run in the solvers' hot loops
 * (were a call not inlined, every loose f64 argument would be boxed, so arrays + offsets).
 *
 *   rotate                out = R(q) v, R(q) written out row by row (jacobi's lever arms)
 *   rotateByQuat          out = R(q) v as v + 2 q_v × (q_v × v + w v) (xpbd's lever arms, as WGSL)
 *   integrateOrientation  q ← normalise(q + ½ h (0, ω) ⊗ q)
 *
 * integrateOrientation is the Cayley map, not a truncated exponential: q + ½h(0,ω)⊗q =
 * (1, ½hω) ⊗ q, and (1, ½hω)/|(1, ½hω)| = (cos θ/2, sin θ/2 ω̂) with tan(θ/2) = h|ω|/2, the
 * rotation Cay(hω) = (I − ½h[ω]×)⁻¹(I + ½h[ω]×) by θ = 2 atan(h|ω|/2) about ω. That is the
 * rotation the implicit midpoint rule of Euler's equations makes of L in the body frame, which
 * is why body.ts can make a free body's world angular momentum exact with it (see there).
 */

/** out[oo..oo+3) = R(q[qo..qo+4)) · v[vo..vo+3). */
export function rotate(q: Float64Array, qo: number, v: Float64Array, vo: number, out: Float64Array, oo: number): void {
  const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
  const vx = v[vo], vy = v[vo + 1], vz = v[vo + 2];
  out[oo] = (1 - 2 * (y * y + z * z)) * vx + 2 * (x * y - z * w) * vy + 2 * (x * z + y * w) * vz;
  out[oo + 1] = 2 * (x * y + z * w) * vx + (1 - 2 * (x * x + z * z)) * vy + 2 * (y * z - x * w) * vz;
  out[oo + 2] = 2 * (x * z - y * w) * vx + 2 * (y * z + x * w) * vy + (1 - 2 * (x * x + y * y)) * vz;
}

/** out[oo..oo+3) = R(q) (vx, vy, vz), q at q[qo..qo+4) unit: rotate's matrix on a vector given by its components. */
export function rotateVector(q: Float64Array, qo: number, vx: number, vy: number, vz: number, out: Float64Array, oo: number): void {
  const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
  out[oo] = (1 - 2 * (y * y + z * z)) * vx + 2 * (x * y - z * w) * vy + 2 * (x * z + y * w) * vz;
  out[oo + 1] = 2 * (x * y + z * w) * vx + (1 - 2 * (x * x + z * z)) * vy + 2 * (y * z - x * w) * vz;
  out[oo + 2] = 2 * (x * z - y * w) * vx + 2 * (y * z + x * w) * vy + (1 - 2 * (x * x + y * y)) * vz;
}

/** out[oo..oo+3) = R(q)ᵀ (vx, vy, vz): the transpose of rotate's matrix (world to body). */
export function rotateVectorBack(q: Float64Array, qo: number, vx: number, vy: number, vz: number, out: Float64Array, oo: number): void {
  const x = q[qo], y = q[qo + 1], z = q[qo + 2], w = q[qo + 3];
  out[oo] = (1 - 2 * (y * y + z * z)) * vx + 2 * (x * y + z * w) * vy + 2 * (x * z - y * w) * vz;
  out[oo + 1] = 2 * (x * y - z * w) * vx + (1 - 2 * (x * x + z * z)) * vy + 2 * (y * z + x * w) * vz;
  out[oo + 2] = 2 * (x * z + y * w) * vx + 2 * (y * z - x * w) * vy + (1 - 2 * (x * x + y * y)) * vz;
}

/**
 * q ← normalise(q + ½ h (0, ω) ⊗ q) (ω in the world frame; q = [x y z w]): the rotation Cay(hω)
 * applied on the world side (header). With h = 1 and ω = θ it adds a small rotation θ (xpbd).
 */
export function integrateOrientation(q: Float64Array, o: number, wx: number, wy: number, wz: number, h: number): void {
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  // (0, ω) ⊗ q = ( q_w ω + ω × q_v ,  −ω · q_v )
  const hh = 0.5 * h;
  const nx = x + hh * (w * wx + (wy * z - wz * y));
  const ny = y + hh * (w * wy + (wz * x - wx * z));
  const nz = z + hh * (w * wz + (wx * y - wy * x));
  const nw = w - hh * (wx * x + wy * y + wz * z);
  const inv = 1 / Math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw); // (Math.hypot allocates in V8)
  q[o] = nx * inv;
  q[o + 1] = ny * inv;
  q[o + 2] = nz * inv;
  q[o + 3] = nw * inv;
}

/**
 * q += ½ (0, Δθ) ⊗ q, normalised, with Δθ = ±S[so..so+3) (− where `negate`): integrateOrientation(q, o,
 * ±S[so], ±S[so + 1], ±S[so + 2], 1) in the same arithmetic, its rate read from S rather than passed as
 * doubles, which V8 boxes when the call is not inlined (xpbd/contacts.ts applyDelta, once per manifold a substep).
 */
export function integrateOrientationFrom(q: Float64Array, o: number, S: Float64Array, so: number, negate: boolean): void {
  const wx = negate ? -S[so] : S[so], wy = negate ? -S[so + 1] : S[so + 1], wz = negate ? -S[so + 2] : S[so + 2];
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  const hh = 0.5; // ½ h, h = 1
  const nx = x + hh * (w * wx + (wy * z - wz * y));
  const ny = y + hh * (w * wy + (wz * x - wx * z));
  const nz = z + hh * (w * wz + (wx * y - wy * x));
  const nw = w - hh * (wx * x + wy * y + wz * z);
  const inv = 1 / Math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw);
  q[o] = nx * inv;
  q[o + 1] = ny * inv;
  q[o + 2] = nz * inv;
  q[o + 3] = nw * inv;
}

/**
 * out[oo..oo+3) = R(q) v with q = q[qo..qo+4), v = v[vo..vo+3), as R(q) v = v + 2 q_v × (q_v × v + w v):
 * the same rotation as `rotate` in another order of operations (xpbd's lever arms, the WGSL
 * quat_rotate); each solver keeps the form it had so its state hashes stay those of before.
 */
export function rotateByQuat(q: Float64Array, qo: number, v: Float64Array, vo: number, out: Float64Array, oo: number): void {
  rotateBy(q[qo], q[qo + 1], q[qo + 2], q[qo + 3], v, vo, out, oo);
}

/** out[oo..oo+3) = R(q)ᵀ v (the inverse rotation: q's conjugate in rotateByQuat's arithmetic); out may not alias v. */
export function rotateByQuatInverse(q: Float64Array, qo: number, v: Float64Array, vo: number, out: Float64Array, oo: number): void {
  rotateBy(-q[qo], -q[qo + 1], -q[qo + 2], q[qo + 3], v, vo, out, oo);
}

/** R(x, y, z, w) v = v + 2 q_v × (q_v × v + w v) into out[oo..oo+3) (rotateByQuat's arithmetic). */
function rotateBy(x: number, y: number, z: number, w: number, v: Float64Array, vo: number, out: Float64Array, oo: number): void {
  const vx = v[vo], vy = v[vo + 1], vz = v[vo + 2];
  const tx = y * vz - z * vy + w * vx;
  const ty = z * vx - x * vz + w * vy;
  const tz = x * vy - y * vx + w * vz;
  out[oo] = vx + 2 * (y * tz - z * ty);
  out[oo + 1] = vy + 2 * (z * tx - x * tz);
  out[oo + 2] = vz + 2 * (x * ty - y * tx);
}

/** out[oo..oo+4) = a ⊗ b = (a_w b_v + b_w a_v + a_v × b_v, a_w b_w − a_v · b_v). out may alias a or b (the rows' joint frames). */
export function quatMultiply(a: Float64Array, ao: number, b: Float64Array, bo: number, out: Float64Array, oo: number): void {
  const ax = a[ao], ay = a[ao + 1], az = a[ao + 2], aw = a[ao + 3];
  const bx = b[bo], by = b[bo + 1], bz = b[bo + 2], bw = b[bo + 3];
  out[oo] = aw * bx + bw * ax + (ay * bz - az * by);
  out[oo + 1] = aw * by + bw * ay + (az * bx - ax * bz);
  out[oo + 2] = aw * bz + bw * az + (ax * by - ay * bx);
  out[oo + 3] = aw * bw - (ax * bx + ay * by + az * bz);
}

/**
 * out[oo..oo+4) = q ⊗ p* (q at qo, p at po): the rotation that takes p to q,
 * (p_w q_v − q_w p_v − q_v × p_v, q · p). XPBD reads ω and a body point's motion from it (rigid/body.ts
 * angularVelocityFromRotation, xpbd/contacts.ts pointMoved).
 */
export function quatRelative(q: Float64Array, qo: number, p: Float64Array, po: number, out: Float64Array, oo: number): void {
  const x1 = q[qo], y1 = q[qo + 1], z1 = q[qo + 2], w1 = q[qo + 3];
  const x0 = p[po], y0 = p[po + 1], z0 = p[po + 2], w0 = p[po + 3];
  out[oo] = w0 * x1 - w1 * x0 - (y1 * z0 - z1 * y0);
  out[oo + 1] = w0 * y1 - w1 * y0 - (z1 * x0 - x1 * z0);
  out[oo + 2] = w0 * z1 - w1 * z0 - (x1 * y0 - y1 * x0);
  out[oo + 3] = w1 * w0 + x1 * x0 + y1 * y0 + z1 * z0;
}
