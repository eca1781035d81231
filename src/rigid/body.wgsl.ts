/**
 * The rigid-body core in WGSL (f32): the twin of body.ts and quat.ts, same stages, same
 * equations (derivations in body.ts's header). A string of functions that the GPU solvers'
 * kernel modules include in their headers; each solver's body kernels (compute_inertia,
 * compute_free_velocity, compute_positions; xpbd's integrate and update_velocities) bind
 * their own buffers and call these:
 *
 *   world_inverse_inertia(q, I⁻¹_local)        1. I⁻¹_world = R I⁻¹_local Rᵀ
 *   is_isotropic(I⁻¹_local)                     I⁻¹_local = s I₃ (spheres): no gyroscopic term
 *   gyroscopic_step(ω, q, I⁻¹_local, h)         2. ω* of the implicit midpoint rule (E2) by Newton (E3)
 *   integrate_body_orientation(q, ω, g, h)      5. q ← Cay(h ω_orient) q, ω_orient = ω + g (E4),
 *                                                  ω carried with the body where g ≠ 0
 *   angular_velocity_from_rotation(q, q_prev, g, h)   xpbd: the exact inverse of the above
 *   quat_rotate, quat_to_mat3, cross_mat, mat3_inverse, quat_integrate, quat_add_rotation
 *
 * g = midpoint_offset.xyz = ω_m − ω* (world) of a free body (midpoint_offset.w = 1: no
 * constraint touches it; uploaded from body.ts freeBodyFlags), written by compute_free_velocity
 * and read by the orientation update; it stays 0 for jointed bodies (they turn by ωₙ₊₁, see
 * body.ts) and for isotropic ones, whose arithmetic is then exactly that of before the core
 * (ω_orient = ω, no transport).
 *
 * f32: Newton's method converges to f32 rounding in 3 iterations at h|ω| ≲ 0.1 (error ∝
 * (h|ω|)^(2^k) relative to the step's change of ω); 4 are run unless the update is already
 * below 1e-7 |ω|.
 */
export const rigidBodyWgsl = /* wgsl */ `
fn quat_rotate(q: vec4f, v: vec3f) -> vec3f {
  // R(q) v = v + 2 q_v × (q_v × v + w v)
  let t = cross(q.xyz, v) + q.w * v;
  return v + 2.0 * cross(q.xyz, t);
}

fn quat_to_mat3(q: vec4f) -> mat3x3f {
  // columns of R(q)
  return mat3x3f(
    vec3f(1.0 - 2.0 * (q.y * q.y + q.z * q.z), 2.0 * (q.x * q.y + q.z * q.w), 2.0 * (q.x * q.z - q.y * q.w)),
    vec3f(2.0 * (q.x * q.y - q.z * q.w), 1.0 - 2.0 * (q.x * q.x + q.z * q.z), 2.0 * (q.y * q.z + q.x * q.w)),
    vec3f(2.0 * (q.x * q.z + q.y * q.w), 2.0 * (q.y * q.z - q.x * q.w), 1.0 - 2.0 * (q.x * q.x + q.y * q.y)));
}

fn cross_mat(v: vec3f) -> mat3x3f {
  // [v]×, column-major: [v]× u = v × u
  return mat3x3f(vec3f(0.0, v.z, -v.y), vec3f(-v.z, 0.0, v.x), vec3f(v.y, -v.x, 0.0));
}

fn mat3_inverse(A: mat3x3f) -> mat3x3f {
  // rows of A⁻¹ are (c1×c2, c2×c0, c0×c1) / det for columns c0, c1, c2; zero when singular
  let det = dot(A[0], cross(A[1], A[2]));
  if (det == 0.0) { return mat3x3f(); }
  return transpose(mat3x3f(cross(A[1], A[2]), cross(A[2], A[0]), cross(A[0], A[1]))) * (1.0 / det);
}

fn quat_integrate(q: vec4f, w: vec3f, h: f32) -> vec4f {
  // q + ½ h (0, ω) ⊗ q, normalised: the Cayley rotation Cay(hω) (quat.ts);  (0, ω) ⊗ q = (q_w ω + ω × q_v, −ω · q_v)
  let dq = vec4f(q.w * w + cross(w, q.xyz), -dot(w, q.xyz));
  return normalize(q + 0.5 * h * dq);
}

fn quat_add_rotation(q: vec4f, theta: vec3f) -> vec4f {
  // q + ½ (0, θ) ⊗ q, normalised (a small rotation θ already multiplied by its time)
  return normalize(q + 0.5 * vec4f(q.w * theta + cross(theta, q.xyz), -dot(theta, q.xyz)));
}

fn world_inverse_inertia(q: vec4f, inv_local: mat3x3f) -> mat3x3f {
  // I⁻¹_world = R I⁻¹_local Rᵀ
  let R = quat_to_mat3(q);
  return R * inv_local * transpose(R);
}

fn is_isotropic(inv_local: mat3x3f) -> bool {
  // I⁻¹_local = s I₃: ω × Iω = 0, no gyroscopic term
  return inv_local[0].y == 0.0 && inv_local[0].z == 0.0 && inv_local[1].x == 0.0 && inv_local[1].z == 0.0
      && inv_local[2].x == 0.0 && inv_local[2].y == 0.0 && inv_local[1].y == inv_local[0].x && inv_local[2].z == inv_local[0].x;
}

fn gyroscopic_step(w: vec3f, q: vec4f, inv_local: mat3x3f, h: f32) -> vec3f {
  // (E2) in the body frame: ωₙ₊₁ = ωₙ − h I⁻¹ (ω_m × I ω_m), ω_m = (ωₙ + ωₙ₊₁)/2, by Newton on
  // F(ω') = I (ω' − ωₙ) + h ω_m × I ω_m,  ∂F/∂ω' = I + ½h ([ω_m]× I − [I ω_m]×)   (E3)
  let I = mat3_inverse(inv_local);
  let R = quat_to_mat3(q);
  let a = transpose(R) * w; // ωₙ, body frame
  var b = a;
  let tol2 = 1e-14 * dot(a, a);
  for (var k = 0; k < 4; k++) {
    let m = 0.5 * (a + b);
    let l = I * m;
    let F = I * (b - a) + h * cross(m, l);
    let J = I + (0.5 * h) * (cross_mat(m) * I - cross_mat(l));
    let d = mat3_inverse(J) * F;
    b -= d;
    if (dot(d, d) <= tol2) { break; }
  }
  return R * b; // ω*, world frame (the same R)
}

struct BodyTurn {
  q: vec4f,
  w: vec3f,
};

fn integrate_body_orientation(q: vec4f, w: vec3f, g: vec3f, h: f32) -> BodyTurn {
  // (E4): q ← Cay(h ω_orient) q, ω_orient = ω + g; where g ≠ 0, ω ← Cay(h ω_orient) ω (carried with the body)
  if (all(g == vec3f(0.0))) { return BodyTurn(quat_integrate(q, w, h), w); }
  let wo = w + g;
  return BodyTurn(quat_integrate(q, wo, h), quat_rotate(normalize(vec4f(0.5 * h * wo, 1.0)), w));
}

fn angular_velocity_from_rotation(q: vec4f, q_prev: vec4f, g: vec3f, h: f32) -> vec3f {
  // the inverse of integrate_body_orientation: Δq = q q_prev⁻¹, ω_orient = (2/h) Δq_v / Δq_w (the
  // sign of Δq cancels), ω = Cay(h ω_orient)(ω_orient − g)
  let dq_v = q_prev.w * q.xyz - q.w * q_prev.xyz - cross(q.xyz, q_prev.xyz);
  let wo = (2.0 / (h * dot(q, q_prev))) * dq_v;
  return quat_rotate(normalize(vec4f(0.5 * h * wo, 1.0)), wo - g);
}
`;
