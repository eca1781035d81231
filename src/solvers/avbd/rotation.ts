/**
 * Rotations as AVBD's per-body step moves them (solvers/avbd/cpu.ts): a step Δθ is a world-frame
 * rotation vector, applied by the exponential map (turn) and read back by its exact inverse, the
 * logarithm (rotationBetween), so a body's angular velocity ω = log(q q⁻⁻¹)/h is the turn it made.
 */

/**
 * q ← exp(s θ) ⊗ q: the world-frame turn by the rotation vector s θ, exactly (angle |sθ| about θ̂). The
 * exact exponential, not the Cayley map q + ½ sθ ⊗ q, because the velocities are read back by its exact
 * inverse (rotationBetween): with the Cayley map a turn of 0.12 rad a frame read back 0.18 % slower,
 * every frame, and a rolling sphere lost 6 % of its speed in 2 s.
 */
export function turn(q: Float64Array, o: number, tx: number, ty: number, tz: number, s: number): void {
  tx *= s; ty *= s; tz *= s;
  const angle = Math.sqrt(tx * tx + ty * ty + tz * tz);
  // sin(|θ|/2)/|θ| by its series where |θ| is tiny (no 0/0)
  const k = angle < 1e-8 ? 0.5 - (angle * angle) / 48 : Math.sin(0.5 * angle) / angle, c = Math.cos(0.5 * angle);
  const ax = k * tx, ay = k * ty, az = k * tz;
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  // (a, c) ⊗ (v, w) = (c v + w a + a × v, c w − a · v)
  const nx = c * x + w * ax + (ay * z - az * y);
  const ny = c * y + w * ay + (az * x - ax * z);
  const nz = c * z + w * az + (ax * y - ay * x);
  const nw = c * w - (ax * x + ay * y + az * z);
  const il = 1 / Math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw);
  q[o] = nx * il; q[o + 1] = ny * il; q[o + 2] = nz * il; q[o + 3] = nw * il;
}

/** out[oo..oo+3) = s · log(q_a ⊗ q_b⁻¹): the rotation vector (angle · axis, the short way) taking q_b to q_a. */
export function rotationBetween(qa: Float64Array, a: number, qb: Float64Array, b: number, out: Float64Array, oo: number, s: number): void {
  const ax = qa[a], ay = qa[a + 1], az = qa[a + 2], aw = qa[a + 3];
  const bx = -qb[b], by = -qb[b + 1], bz = -qb[b + 2], bw = qb[b + 3];
  // (a ⊗ b⁻¹): vector part aw b⃗ + bw a⃗ + a⃗ × b⃗, scalar aw bw − a⃗·b⃗
  let vx = aw * bx + bw * ax + (ay * bz - az * by);
  let vy = aw * by + bw * ay + (az * bx - ax * bz);
  let vz = aw * bz + bw * az + (ax * by - ay * bx);
  let sw = aw * bw - (ax * bx + ay * by + az * bz);
  if (sw < 0) { vx = -vx; vy = -vy; vz = -vz; sw = -sw; }
  const sn = Math.sqrt(vx * vx + vy * vy + vz * vz);
  // angle / sin(angle/2) = 2 atan2(|v|, w) / |v| (→ 2/w for a tiny turn)
  const f = sn < 1e-12 ? 2 / sw : (2 * Math.atan2(sn, sw)) / sn;
  out[oo] = s * f * vx; out[oo + 1] = s * f * vy; out[oo + 2] = s * f * vz;
}

