/**
 * The viewer's WGSL: sphere impostors, the ground grid and the joint segments.
 *
 * Bindings:
 *   group 0  0  cam     uniform  Camera (matrices relative to the scene origin, light, ground)
 *   group 1  0  slot    uniform  Slot (one solver's colour and counts)
 *            1  pose    storage  per body two vec4f: (x, 0), q = [x y z w] — a GPU solver's own
 *                                `pose` buffer (src/gpu/frames.ts packBodyState), or a CPU
 *                                solver's snapshot in the same layout
 *            2  radius  storage  per body f32
 *            3  joints  storage  per joint: bodyA, bodyB (−1 = world), kind, r⁰, r¹
 *                                (render-info.ts)
 * The grid and the guides (fixed world-space segments, a vertex buffer) use group 0 only.
 * Positions are made relative to cam.origin before any matrix (f32 positions 10 km out keep
 * their millimetres that way).
 */
export const shaderSource = /* wgsl */ `
struct Camera {
  view: mat4x4f,
  proj: mat4x4f,
  inv_view: mat4x4f,
  origin: vec4f,      // scene origin (world), subtracted from every position
  light: vec4f,       // unit direction towards the light, eye space
  ground: vec4f,      // (ground height rel. origin, grid cell m, grid offset x, grid offset z)
  focus: vec4f,       // the camera's target rel. origin; w = grid half-extent m
}

struct Slot {
  colour: vec4f,      // rgb, alpha (< 1 when solvers are overlaid)
  gap: vec4f,         // colour of a joint's violation segment
  body_count: u32,
  joint_count: u32,
  pad0: u32,
  pad1: u32,
}

struct Joint {
  body_a: u32,
  body_b: i32,        // −1: anchor_b is a world point
  kind: u32,          // 0 point constraint, 1 particle rod, 2 spring (render-info.ts JOINT_*)
  pad: u32,
  anchor_a: vec4f,    // r⁰ in A's frame
  anchor_b: vec4f,    // r¹ in B's frame, or the world point
}

@group(0) @binding(0) var<uniform> cam: Camera;
@group(1) @binding(0) var<uniform> slot: Slot;
@group(1) @binding(1) var<storage, read> pose: array<vec4f>;
@group(1) @binding(2) var<storage, read> radius: array<f32>;
@group(1) @binding(3) var<storage, read> joints: array<Joint>;

/** R(q) v = v + 2 q_v × (q_v × v + w v)  (as metrics.ts rotate) */
fn rotate(q: vec4f, v: vec3f) -> vec3f {
  let t = cross(q.xyz, v) + q.w * v;
  return v + 2.0 * cross(q.xyz, t);
}

fn body_position(i: u32) -> vec3f {
  return pose[2u * i].xyz - cam.origin.xyz;
}

// ---- spheres: one camera-facing quad per body, the sphere ray-cast in the fragment -------------

struct SphereOut {
  @builtin(position) clip: vec4f,
  @location(0) eye_point: vec3f,                    // point on the quad, eye space (= a ray direction)
  @location(1) @interpolate(flat) centre: vec3f,    // eye space
  @location(2) @interpolate(flat) r: f32,
  @location(3) @interpolate(flat) q: vec4f,
}

@vertex
fn sphere_vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> SphereOut {
  var out: SphereOut;
  let corner = vec2f(f32(v & 1u) * 2.0 - 1.0, f32(v >> 1u) * 2.0 - 1.0);
  let c = (cam.view * vec4f(body_position(i), 1.0)).xyz;
  let r = radius[i];
  let d2 = dot(c, c);
  out.centre = c;
  out.r = r;
  out.q = pose[2u * i + 1u];
  out.eye_point = c;
  out.clip = vec4f(0.0, 0.0, 2.0, 1.0);     // outside the clip volume: not drawn
  if (!(d2 > r * r * 1.0001) || !(d2 < 1e30)) { return out; } // the eye inside the sphere, or not finite
  // The cone from the eye tangent to the sphere cuts the plane through c normal to c in a circle
  // of radius s = r |c| / √(|c|² − r²) (similar triangles): a quad of half-size s there covers it.
  let dist = sqrt(d2);
  let s = r * dist / sqrt(d2 - r * r);
  let w = c / dist;
  var up = vec3f(0.0, 1.0, 0.0);
  if (abs(w.y) > 0.99) { up = vec3f(1.0, 0.0, 0.0); }
  let u = normalize(cross(up, w));
  let t = cross(w, u);
  let p = c + s * (corner.x * u + corner.y * t);
  out.eye_point = p;
  out.clip = cam.proj * vec4f(p, 1.0);
  return out;
}

struct SphereFrag {
  @location(0) colour: vec4f,
  @builtin(frag_depth) depth: f32,
}

@fragment
fn sphere_fs(in: SphereOut) -> SphereFrag {
  // ray x = t·dir from the eye; nearest hit t = b − √(r² − |c − b·dir|²), b = dir·c
  let dir = normalize(in.eye_point);
  let b = dot(dir, in.centre);
  let off = in.centre - b * dir;
  let h = in.r * in.r - dot(off, off);
  if (h < 0.0) { discard; }
  let p = (b - sqrt(h)) * dir;
  let n = (p - in.centre) / in.r;
  // Lambert + Blinn-Phong, eye space
  let l = cam.light.xyz;
  let diffuse = max(dot(n, l), 0.0);
  let half_vector = normalize(l - dir);
  let specular = pow(max(dot(n, half_vector), 0.0), 48.0) * 0.35;
  // a band around each body's local z axis makes its rotation visible
  let n_world = (cam.inv_view * vec4f(n, 0.0)).xyz;
  let q = in.q;
  let n_local = rotate(vec4f(-q.xyz, q.w), n_world);
  let band = select(1.0, 0.72, abs(n_local.z) < 0.14);
  let shade = (0.32 + 0.68 * diffuse) * band;
  var out: SphereFrag;
  out.colour = vec4f(slot.colour.rgb * shade + vec3f(specular), slot.colour.a);
  let clip = cam.proj * vec4f(p, 1.0);
  out.depth = clamp(clip.z / clip.w, 0.0, 1.0);
  return out;
}

// ---- the ground grid: a quad on y = ground, lines drawn per fragment -----------------------------

struct GridOut {
  @builtin(position) clip: vec4f,
  @location(0) xz: vec2f,        // rel. origin
}

@vertex
fn grid_vs(@builtin(vertex_index) v: u32) -> GridOut {
  let corner = vec2f(f32(v & 1u) * 2.0 - 1.0, f32(v >> 1u) * 2.0 - 1.0);
  let xz = cam.focus.xz + corner * cam.focus.w;
  var out: GridOut;
  out.xz = xz;
  out.clip = cam.proj * cam.view * vec4f(xz.x, cam.ground.x, xz.y, 1.0);
  return out;
}

/** 1 on a grid line of spacing \`cell\`, fading to 0 over about a pixel */
fn grid_line(xz: vec2f, cell: f32) -> f32 {
  let coord = xz / cell;
  let dist = abs(fract(coord - 0.5) - 0.5) / max(fwidth(coord), vec2f(1e-6));
  return 1.0 - min(min(dist.x, dist.y), 1.0);
}

@fragment
fn grid_fs(in: GridOut) -> @location(0) vec4f {
  let cell = cam.ground.y;
  let xz = in.xz + cam.ground.zw;        // offset: lines fall on world multiples of the cell
  let minor = grid_line(xz, cell);
  let major = grid_line(xz, 10.0 * cell);
  let fade = 1.0 - smoothstep(0.3, 1.0, length(in.xz - cam.focus.xz) / cam.focus.w);
  let a = max(minor * 0.35, major * 0.8) * fade;
  if (a < 0.004) { discard; }
  return vec4f(vec3f(0.62, 0.66, 0.72), a);
}

// ---- joints: per joint x_A → anchor A → anchor B → x_B, as three line segments ------------------

struct LineOut {
  @builtin(position) clip: vec4f,
  @location(0) colour: vec4f,
}

@vertex
fn joint_vs(@builtin(vertex_index) v: u32) -> LineOut {
  let j = joints[v / 6u];
  let k = v % 6u;
  let qa = pose[2u * j.body_a + 1u];
  let xa = body_position(j.body_a);
  let pa = xa + rotate(qa, j.anchor_a.xyz);               // x_A + R(q_A) r⁰
  var xb = j.anchor_b.xyz - cam.origin.xyz;               // a world point
  var pb = xb;
  if (j.body_b >= 0) {
    let b = u32(j.body_b);
    xb = body_position(b);
    pb = xb + rotate(pose[2u * b + 1u], j.anchor_b.xyz);  // x_B + R(q_B) r¹
  }
  var p = pa;
  if (k == 0u) { p = xa; }
  if (k == 3u || k == 4u) { p = pb; }
  if (k == 5u) { p = xb; }
  var out: LineOut;
  out.clip = cam.proj * cam.view * vec4f(p, 1.0);
  // the middle segment: a point constraint's violation c = pa − pb (reference text eq. 3),
  // or a particle rod or spring itself
  var middle = slot.gap;
  if (j.kind == 1u) { middle = vec4f(mix(slot.colour.rgb, vec3f(1.0), 0.35), 0.95); }
  if (j.kind == 2u) { middle = vec4f(mix(slot.colour.rgb, vec3f(1.0), 0.6), 0.6); }
  out.colour = select(vec4f(slot.colour.rgb * 0.45, 0.9), middle, k == 2u || k == 3u);
  return out;
}

@fragment
fn joint_fs(in: LineOut) -> @location(0) vec4f {
  return in.colour;
}

// ---- guides: fixed world-space segments (a bead's wire, a plane, a line) ---------------------------

@vertex
fn guide_vs(@location(0) p: vec3f) -> @builtin(position) vec4f {
  return cam.proj * cam.view * vec4f(p - cam.origin.xyz, 1.0);
}

@fragment
fn guide_fs() -> @location(0) vec4f {
  return vec4f(0.86, 0.8, 0.58, 0.85);
}
`;
