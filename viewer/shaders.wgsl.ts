/**
 * The viewer's WGSL: body impostors (spheres, boxes, capsules, ray-cast per fragment), the
 * ground grid, plane bodies (ground), the joint segments and contact points with their normals.
 *
 * Bindings:
 *   group 0  0  cam     uniform  Camera (matrices relative to the scene origin, light, ground)
 *   group 1  0  slot    uniform  Slot (one solver's colour and counts)
 *            1  pose    storage  per body two vec4f: (x, s), q = [x y z w] — a GPU solver's own
 *                                `pose` buffer (src/gpu/frames.ts packBodyState, s = 0), or a CPU
 *                                solver's snapshot in the same layout (s = 1 while the body sleeps:
 *                                drawn dimmed, render-info.ts dimmedColour)
 *            2  shape   storage  per body vec4f: kind (0 sphere, 1 box, 2 capsule, 3 plane: no
 *                                impostor), dimensions (sphere r; box half extents a, b, c;
 *                                capsule r, h) (render-info.ts)
 *            3  joints  storage  per joint: bodyA, bodyB (−1 = world), kind, r⁰, r¹, axis
 *                                (render-info.ts)
 *            4  contacts uniform Contacts (the contact pipelines' own layout: colour, viewport, radius)
 * The grid, the guides (fixed world-space segments, a vertex buffer) and the ground (plane bodies
 * as world-space triangles, a vertex buffer: render-info.ts Drawable.ground) use group 0 only; the
 * contact points and normals (a vertex buffer of world points) group 0 and their own uniform
 * (group 1: colour, viewport size, point radius in pixels).
 * Positions are made relative to cam.origin before any matrix (f32 positions 10 km out keep
 * their millimetres that way).
 */
import { SLEEP_DARKEN, SLEEP_GREY } from './render-info.js';

/** A number as a WGSL f32 literal (always with a decimal point or exponent). */
function wgslFloat(x: number): string {
  const s = String(x);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

export const shaderSource = /* wgsl */ `
// a sleeping body's colour (render-info.ts dimmedColour): SLEEP_DARKEN · (c + SLEEP_GREY · (luma(c) − c))
const SLEEP_GREY: f32 = ${wgslFloat(SLEEP_GREY)};
const SLEEP_DARKEN: f32 = ${wgslFloat(SLEEP_DARKEN)};

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
  kind: u32,          // 0 point / fixed joint, 1 rod (distance joint), 2 spring, 3 hinge (render-info.ts JOINT_*)
  pad: u32,
  anchor_a: vec4f,    // r⁰ in A's frame
  anchor_b: vec4f,    // r¹ in B's frame, or the world point
  axis: vec4f,        // a hinge's unit axis in A's frame; w: half the length drawn
}

@group(0) @binding(0) var<uniform> cam: Camera;
@group(1) @binding(0) var<uniform> slot: Slot;
@group(1) @binding(1) var<storage, read> pose: array<vec4f>;
@group(1) @binding(2) var<storage, read> shape: array<vec4f>;
@group(1) @binding(3) var<storage, read> joints: array<Joint>;

/** R(q) v = v + 2 q_v × (q_v × v + w v)  (as metrics.ts rotate) */
fn rotate(q: vec4f, v: vec3f) -> vec3f {
  let t = cross(q.xyz, v) + q.w * v;
  return v + 2.0 * cross(q.xyz, t);
}

fn body_position(i: u32) -> vec3f {
  return pose[2u * i].xyz - cam.origin.xyz;
}

/** the radius of the sphere about the body's centre that holds its shape */
fn bounding_radius(s: vec4f) -> f32 {
  if (s.x > 1.5) { return s.y + s.z; }          // capsule: r + h
  if (s.x > 0.5) { return length(s.yzw); }      // box: |(a, b, c)|
  return s.y;                                   // sphere
}

/** the columns' transpose of the view's rotation: eye-space vector → world */
fn eye_to_world(v: vec3f) -> vec3f {
  return (cam.inv_view * vec4f(v, 0.0)).xyz;
}

// ---- bodies: one camera-facing quad per body covering its bounding sphere, the shape ray-cast ---
// ---- in the fragment (a sphere in eye space; a box or capsule in the body's local frame) -------

struct SphereOut {
  @builtin(position) clip: vec4f,
  @location(0) eye_point: vec3f,                    // point on the quad, eye space (= a ray direction)
  @location(1) @interpolate(flat) centre: vec3f,    // eye space
  @location(2) @interpolate(flat) r: f32,           // bounding radius
  @location(3) @interpolate(flat) q: vec4f,
  @location(4) @interpolate(flat) shape: vec4f,
  @location(5) @interpolate(flat) asleep: f32,      // the pose's sleep flag: 1 drawn dimmed
}

@vertex
fn sphere_vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> SphereOut {
  var out: SphereOut;
  let corner = vec2f(f32(v & 1u) * 2.0 - 1.0, f32(v >> 1u) * 2.0 - 1.0);
  let c = (cam.view * vec4f(body_position(i), 1.0)).xyz;
  let sh = shape[i];
  let r = bounding_radius(sh);
  let d2 = dot(c, c);
  out.centre = c;
  out.r = r;
  out.q = pose[2u * i + 1u];
  out.asleep = pose[2u * i].w;
  out.shape = sh;
  out.eye_point = c;
  out.clip = vec4f(0.0, 0.0, 2.0, 1.0);     // outside the clip volume: not drawn
  if (sh.x > 2.5) { return out; }            // a plane: drawn as ground (ground_vs), not as an impostor
  if (!(d2 > r * r * 1.0001) || !(d2 < 1e30)) { return out; } // the eye inside the bounding sphere, or not finite
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

/** A ray's first entry into a body: distance t along the unit ray (< 0: a miss) and the outward normal. */
struct Hit {
  t: f32,
  n: vec3f,
}

/** Ray o + t d (unit d) against the sphere |x − c| = r: its entry, or t = −1. */
fn hit_sphere(o: vec3f, d: vec3f, c: vec3f, r: f32) -> Hit {
  let oc = o - c;
  let b = dot(oc, d);
  let h = b * b - (dot(oc, oc) - r * r);
  if (h < 0.0) { return Hit(-1.0, vec3f(0.0)); }
  let t = -b - sqrt(h);
  return Hit(t, (oc + t * d) / r);
}

/** Slabs: the box |x_k| ≤ e_k, local frame; the entry is the largest of the three near planes. */
fn hit_box(o: vec3f, d: vec3f, e: vec3f) -> Hit {
  let inv = 1.0 / select(d, vec3f(1e-30), abs(d) < vec3f(1e-30));
  let t1 = (-e - o) * inv;
  let t2 = (e - o) * inv;
  let near = min(t1, t2);
  let far = max(t1, t2);
  let t_in = max(max(near.x, near.y), near.z);
  let t_out = min(min(far.x, far.y), far.z);
  if (t_in > t_out || t_out < 0.0) { return Hit(-1.0, vec3f(0.0)); }
  var n = vec3f(0.0, 0.0, -sign(d.z));
  if (t_in == near.x) { n = vec3f(-sign(d.x), 0.0, 0.0); } else if (t_in == near.y) { n = vec3f(0.0, -sign(d.y), 0.0); }
  return Hit(t_in, n);
}

/**
 * The capsule within r of the segment (0, ±h, 0), local frame: the union of the finite cylinder
 * and the two end spheres, so its entry is the nearest of the side wall's entry (where |y| ≤ h)
 * and the two spheres' entries (the cylinder's flat ends lie inside the spheres).
 */
fn hit_capsule(o: vec3f, d: vec3f, r: f32, h: f32) -> Hit {
  var best = Hit(-1.0, vec3f(0.0));
  let a = d.x * d.x + d.z * d.z;
  let b = o.x * d.x + o.z * d.z;
  let c = o.x * o.x + o.z * o.z - r * r;
  let disc = b * b - a * c;
  if (a > 1e-12 && disc >= 0.0) {
    let t = (-b - sqrt(disc)) / a;
    let p = o + t * d;
    if (abs(p.y) <= h) { best = Hit(t, vec3f(p.x, 0.0, p.z) / r); }
  }
  for (var k = 0; k < 2; k++) {
    let cap = hit_sphere(o, d, vec3f(0.0, select(-h, h, k == 1), 0.0), r);
    if (cap.t >= 0.0 && (best.t < 0.0 || cap.t < best.t)) { best = cap; }
  }
  return best;
}

@fragment
fn sphere_fs(in: SphereOut) -> SphereFrag {
  let dir = normalize(in.eye_point);
  let q = in.q;
  let q_inv = vec4f(-q.xyz, q.w);
  var p: vec3f;          // the hit, eye space
  var n: vec3f;          // its outward normal, eye space
  var n_local: vec3f;    // and in the body's frame
  var band = 1.0;
  if (in.shape.x < 0.5) {
    // sphere: ray x = t·dir from the eye; nearest hit t = b − √(r² − |c − b·dir|²), b = dir·c
    let b = dot(dir, in.centre);
    let off = in.centre - b * dir;
    let h = in.r * in.r - dot(off, off);
    if (h < 0.0) { discard; }
    p = (b - sqrt(h)) * dir;
    n = (p - in.centre) / in.r;
    n_local = rotate(q_inv, eye_to_world(n));
    // a band around each body's local z axis makes its rotation visible
    band = select(1.0, 0.72, abs(n_local.z) < 0.14);
  } else {
    // box or capsule: the ray in the body's frame, o = R(q)ᵀ (eye − x), d = R(q)ᵀ dir (world → local)
    let o = rotate(q_inv, eye_to_world(-in.centre));
    let d = rotate(q_inv, eye_to_world(dir));
    var hit: Hit;
    if (in.shape.x < 1.5) { hit = hit_box(o, d, in.shape.yzw); } else { hit = hit_capsule(o, d, in.shape.y, in.shape.z); }
    if (hit.t < 0.0) { discard; }
    p = hit.t * dir;
    n_local = hit.n;
    n = (cam.view * vec4f(rotate(q, n_local), 0.0)).xyz;
    let x = o + hit.t * d;   // the hit, local frame
    if (in.shape.x < 1.5) {
      // a box's edges darkened: where the hit is near a second face
      let f = abs(x) / in.shape.yzw;
      let second = f.x + f.y + f.z - max(max(f.x, f.y), f.z) - min(min(f.x, f.y), f.z);
      band = select(1.0, 0.72, second > 0.96);
    } else {
      // a capsule: the sphere's band about local z, a stripe along it (its spin about y shows)
      band = select(1.0, 0.72, abs(n_local.z) < 0.14);
    }
  }
  // Lambert + Blinn-Phong, eye space
  let l = cam.light.xyz;
  let diffuse = max(dot(n, l), 0.0);
  let half_vector = normalize(l - dir);
  let specular = pow(max(dot(n, half_vector), 0.0), 48.0) * 0.35;
  let shade = (0.32 + 0.68 * diffuse) * band;
  var out: SphereFrag;
  var base = slot.colour.rgb;
  var gloss = specular;
  if (in.asleep > 0.5) {
    let luma = dot(base, vec3f(0.2126, 0.7152, 0.0722));
    base = SLEEP_DARKEN * mix(base, vec3f(luma), SLEEP_GREY);
    gloss = specular * SLEEP_DARKEN;   // a dull highlight: a sleeper does not shine as brightly
  }
  out.colour = vec4f(base * shade + vec3f(gloss), slot.colour.a);
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

// ---- joints: per joint x_A → anchor A → anchor B → x_B, as three line segments, and a hinge's ----
// ---- axis through anchor A (JOINT_VERTICES = 8 per joint, a line list) -----------------------

struct LineOut {
  @builtin(position) clip: vec4f,
  @location(0) colour: vec4f,
}

@vertex
fn joint_vs(@builtin(vertex_index) v: u32) -> LineOut {
  let j = joints[v / 8u];
  let k = v % 8u;
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
  // a hinge's axis R(q_A) axisA through anchor A, ± half its drawn length
  let axis = rotate(qa, j.axis.xyz) * j.axis.w;
  if (k == 6u) { p = pa - axis; }
  if (k == 7u) { p = pa + axis; }
  var out: LineOut;
  out.clip = cam.proj * cam.view * vec4f(p, 1.0);
  if (k >= 6u && j.kind != 3u) {
    out.clip = vec4f(0.0, 0.0, 2.0, 1.0);     // no axis: outside the clip volume, not drawn
    out.colour = vec4f(0.0);
    return out;
  }
  if (k >= 6u) {
    out.colour = vec4f(mix(slot.colour.rgb, vec3f(1.0, 0.9, 0.3), 0.7), 1.0);
    return out;
  }
  // the middle segment: a point, fixed or hinge joint's violation c = pa − pb (reference text
  // eq. 3), or a distance joint's or particle rod's rod, or a spring itself
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

// ---- the ground: plane bodies as world-space squares (render-info.ts groundQuads), lit, with a ----
// ---- checker of the grid's cell in the plane's own coordinates, fading far from the focus ---------

struct GroundOut {
  @builtin(position) clip: vec4f,
  @location(0) n: vec3f,         // unit outward normal, eye space
  @location(1) st: vec2f,        // coordinates in the plane's local x, z, m
  @location(2) rel: vec3f,       // rel. origin
}

@vertex
fn ground_vs(@location(0) p: vec3f, @location(1) n: vec3f, @location(2) st: vec2f) -> GroundOut {
  var out: GroundOut;
  out.rel = p - cam.origin.xyz;
  out.clip = cam.proj * cam.view * vec4f(out.rel, 1.0);
  out.n = (cam.view * vec4f(n, 0.0)).xyz;
  out.st = st;
  return out;
}

/** the ground's colour (render-info and the viewer test check its hue): a grey green */
const GROUND = vec3f(0.36, 0.45, 0.35);

@fragment
fn ground_fs(in: GroundOut) -> @location(0) vec4f {
  // checker of 10 grid cells: parity of ⌊s/L⌋ + ⌊t/L⌋, a shade apart (the hue stays the ground's)
  let cells = floor(in.st / (10.0 * cam.ground.y));
  let odd = abs(cells.x + cells.y) % 2.0;
  // seen from below its surface (inside the half-space), the plane is darker
  let diffuse = max(dot(normalize(in.n), cam.light.xyz), 0.0);
  let shade = (0.5 + 0.5 * diffuse) * select(1.0, 0.86, odd > 0.5);
  return vec4f(GROUND * shade, 1.0);
}

// ---- contacts: a disc at each contact point (a camera-facing square of CONTACT radius pixels, ----
// ---- drawn over everything) and a segment along its normal (render-info / sim.ts contactLines) -----

struct Contacts {
  colour: vec4f,
  viewport: vec2f,   // the target's size, px
  radius: f32,       // a disc's radius, px
  pad: f32,
}

@group(1) @binding(4) var<uniform> contacts: Contacts;   // binding 4: its own layout, no clash with the slot's

struct ContactOut {
  @builtin(position) clip: vec4f,
  @location(0) corner: vec2f,
}

@vertex
fn contact_point_vs(@builtin(vertex_index) v: u32, @location(0) p: vec3f) -> ContactOut {
  let corner = vec2f(f32(v & 1u) * 2.0 - 1.0, f32(v >> 1u) * 2.0 - 1.0);
  var clip = cam.proj * cam.view * vec4f(p - cam.origin.xyz, 1.0);
  // r pixels in NDC are 2 r / size; times w, as the divide comes after
  clip = vec4f(clip.xy + corner * 2.0 * contacts.radius / contacts.viewport * clip.w, clip.zw);
  var out: ContactOut;
  out.clip = clip;
  out.corner = corner;
  return out;
}

@fragment
fn contact_point_fs(in: ContactOut) -> @location(0) vec4f {
  if (dot(in.corner, in.corner) > 1.0) { discard; }
  return contacts.colour;
}

@vertex
fn contact_line_vs(@location(0) p: vec3f) -> @builtin(position) vec4f {
  return cam.proj * cam.view * vec4f(p - cam.origin.xyz, 1.0);
}

@fragment
fn contact_line_fs() -> @location(0) vec4f {
  return contacts.colour;
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
