/**
 * Everything the viewer needs to draw a scene description, behind one function: renderInfo(desc).
 * The renderer never reads a description itself, so a new kind of description (new shapes) is
 * one new branch here.
 *
 * Bodies are drawn as ray-cast impostors (spheres, boxes, capsules; SHAPE_FLOATS per body: the
 * shape's kind and dimensions, local frame) from poses in the layout every GPU solver keeps (two
 * vec4f per body: (x, 0) and the quaternion q = [x y z w]; src/gpu/frames.ts packBodyState),
 * which the renderer reads from the solver's own buffer (GPU solvers) or from a snapshot packed
 * by packPoses (CPU solvers). The free fourth float of x carries the sleep flag (POSE_ASLEEP):
 * packPoses writes 1 for a body the snapshot marks asleep (Snapshot.asleep), 0 otherwise; the GPU
 * solvers, which never sleep, keep 0 there. A body flagged asleep is drawn dimmed (dimmedColour). Per joint record (JOINT_BYTES) its bodies, local anchors r⁰, r¹
 * (r¹ a world point when bodyB is the world), a kind and an axis in A's frame; the vertex shader
 * draws three segments x_A → x_A + R(q_A) r⁰ → x_B + R(q_B) r¹ → x_B from the live poses, and a
 * hinge's axis, so no segment is computed on the CPU per frame:
 *   JOINT_POINT   a point or fixed joint: the middle segment is its violation c (reference text
 *                 eq. 3), drawn in the gap colour (a particle's nail: the particle to its nail)
 *   JOINT_ROD     a distance joint, or a particle distance constraint: the middle segment is the rod
 *   JOINT_SPRING  a spring force between two particles
 *   JOINT_HINGE   a hinge: as a point joint, and its axis R(q_A) axisA through A's anchor
 * Guides are fixed world-space line segments (a bead's wire, a plane, a line): drawn once per
 * scene, not per solver.
 *
 * Rigid WorldDesc: spheres, boxes and capsules; planes (fixed half-spaces) as a square of their
 * surface about where the other bodies meet them (Drawable.ground, drawn as ground, outside the
 * framing bounds but for the foot of the bodies on them); point, distance, hinge and fixed joints.
 * Particle system (src/model/particle-system.ts): each particle a sphere of its `radius` (or 2 % of the
 * scene's extent), identity orientation; 2-D scenes lie in the xy-plane (z = 0) and are `planar`
 * (the camera looks along −z).
 */
import { boundingRadius, type WorldDesc } from '../src/model/world.js';
import type { Snapshot } from '../src/model/snapshot.js';
import type { ParticleSystemDesc } from '../src/model/particle-system.js';
import { isParticleSystem } from '../src/model/scene-desc.js';

/** f32 per body in the pose layout: (x, y, z, s), (qx, qy, qz, qw); s = 1 while the body sleeps, else 0. */
export const POSE_FLOATS = 8;
/** the float of a body's pose that holds its sleep flag (1 asleep: drawn dimmed; 0 awake) */
export const POSE_ASLEEP = 3;
/**
 * A sleeping body's colour: its solver's colour c moved SLEEP_GREY of the way to its own grey
 * (luma ℓ = 0.2126 r + 0.7152 g + 0.0722 b, Rec. 709), then scaled by SLEEP_DARKEN:
 *   c_sleep = SLEEP_DARKEN · (c + SLEEP_GREY · (ℓ − c))
 * (before lighting; the shader applies the same, shaders.wgsl.ts sphere_fs). Greyer and darker, so
 * an awake body stands out among sleepers, and the hue still says which solver it is.
 */
export const SLEEP_GREY = 0.7;
export const SLEEP_DARKEN = 0.55;
export function dimmedColour(c: readonly number[]): [number, number, number] {
  const l = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  return [0, 1, 2].map((k) => SLEEP_DARKEN * (c[k] + SLEEP_GREY * (l - c[k]))) as [number, number, number];
}
/** f32 per body in the shape buffer: kind (SHAPE_*), then sphere (r, 0, 0), box (a, b, c) half extents, capsule (r, h, 0) */
export const SHAPE_FLOATS = 4;
export const SHAPE_SPHERE = 0;
export const SHAPE_BOX = 1;
export const SHAPE_CAPSULE = 2;
/** a plane: no impostor (its quad is in Drawable.ground) */
export const SHAPE_PLANE = 3;
/** f32 per ground vertex: world position (3), unit normal (3), coordinates in the plane's local x, z from its position (2) */
export const GROUND_FLOATS = 8;
/** half the side of a plane's drawn square, in extents of the other bodies' bounds */
export const GROUND_HALF_EXTENTS = 3;
/**
 * bytes per joint record: u32 bodyA, i32 bodyB (−1 = the world), u32 kind, pad, vec4f r⁰,
 * vec4f r¹, vec4f (unit axis in A's frame, half length of its drawn segment)
 */
export const JOINT_BYTES = 64;
export const JOINT_POINT = 0;
export const JOINT_ROD = 1;
export const JOINT_SPRING = 2;
export const JOINT_HINGE = 3;
/** vertices drawn per joint: three segments and a hinge's axis (a line list) */
export const JOINT_VERTICES = 8;
/** segments per drawn circle */
const CIRCLE_SEGMENTS = 96;

type Box = { min: [number, number, number]; max: [number, number, number] };

export interface Drawable {
  drawable: true;
  bodyCount: number;
  jointCount: number;
  /** per body, the radius of the sphere about its centre that holds its shape, m */
  radius: Float32Array<ArrayBuffer>;
  /** per body, SHAPE_FLOATS: the shape the impostor ray-casts (kind, dimensions), m */
  shapes: Float32Array<ArrayBuffer>;
  /** joint records (JOINT_BYTES each) for the renderer's storage buffer */
  joints: ArrayBuffer;
  /** fixed world-space line segments, two xyz points each (a wire, a plane, a line) */
  guides: Float32Array<ArrayBuffer>;
  /**
   * plane bodies (fixed: their pose is the description's) as world-space triangles, GROUND_FLOATS
   * per vertex, six vertices (a square) per plane; empty without planes
   */
  ground: Float32Array<ArrayBuffer>;
  /** the initial poses (POSE_FLOATS per body) */
  initialPoses: Float32Array<ArrayBuffer>;
  /** axis-aligned box around the bodies, world anchors and guides, m */
  bounds: Box;
  /** a 2-D scene in the xy-plane: viewed along −z, no ground grid */
  planar: boolean;
  /** the bounds already hold everywhere the bodies can swing (no room is added below them for a fall) */
  reach: boolean;
  /** a snapshot's bodies in the pose layout (for solvers that do not live on the GPU) */
  packPoses(s: Snapshot, out: Float32Array): void;
}

export interface NotDrawable {
  drawable: false;
  reason: string;
}

export type RenderInfo = Drawable | NotDrawable;

/** A description as a scene may build it: a rigid WorldDesc, a particle system, or (coming) another kind. */
export type SceneDescription = WorldDesc | ParticleSystemDesc | { kind: string };

export function isRigidWorld(desc: unknown): desc is WorldDesc {
  return !!desc && typeof desc === 'object' && Array.isArray((desc as WorldDesc).bodies) && Array.isArray((desc as WorldDesc).constraints);
}

function emptyBox(): Box {
  return { min: [Infinity, Infinity, Infinity], max: [-Infinity, -Infinity, -Infinity] };
}

function grow(box: Box, p: readonly number[], pad: number): void {
  for (let d = 0; d < 3; d++) {
    box.min[d] = Math.min(box.min[d], p[d] - pad);
    box.max[d] = Math.max(box.max[d], p[d] + pad);
  }
}

/** A box with something in it: an empty one becomes the unit cube around the origin. */
function settle(box: Box): Box {
  if (!Number.isFinite(box.min[0])) {
    box.min.fill(-1);
    box.max.fill(1);
  }
  return box;
}

/** A snapshot's bodies in the pose layout, each one's sleep flag (Snapshot.asleep; none: all awake) in its POSE_ASLEEP float. */
function packSnapshot(snap: Snapshot, out: Float32Array): void {
  const x = snap.position, q = snap.orientation, asleep = snap.asleep;
  for (let i = 0; i < snap.bodyCount; i++) {
    const o = POSE_FLOATS * i;
    out[o] = x[3 * i];
    out[o + 1] = x[3 * i + 1];
    out[o + 2] = x[3 * i + 2];
    out[o + POSE_ASLEEP] = asleep && asleep[i] ? 1 : 0;
    out[o + 4] = q[4 * i];
    out[o + 5] = q[4 * i + 1];
    out[o + 6] = q[4 * i + 2];
    out[o + 7] = q[4 * i + 3];
  }
}

/** Joint records from (bodyA, bodyB or −1, kind, r⁰, r¹, and a hinge's unit axis and drawn half length). */
function jointRecords(list: { a: number; b: number; kind: number; ra: readonly number[]; rb: readonly number[]; axis?: readonly number[]; axisHalf?: number }[]): ArrayBuffer {
  const joints = new ArrayBuffer(JOINT_BYTES * list.length);
  const u = new Uint32Array(joints), s = new Int32Array(joints), f = new Float32Array(joints);
  list.forEach((j, k) => {
    const o = (JOINT_BYTES / 4) * k;
    u[o] = j.a;
    s[o + 1] = j.b;
    u[o + 2] = j.kind;
    f.set(j.ra.slice(0, 3), o + 4);
    f.set(j.rb.slice(0, 3), o + 8);
    if (j.axis) f.set([j.axis[0], j.axis[1], j.axis[2], j.axisHalf ?? 0], o + 12);
  });
  return joints;
}

export function renderInfo(desc: SceneDescription): RenderInfo {
  if (isParticleSystem(desc)) return particleRenderInfo(desc);
  if (!isRigidWorld(desc)) {
    const kind = (desc as { kind?: unknown })?.kind;
    return { drawable: false, reason: `${typeof kind === 'string' ? `a '${kind}' scene` : 'this scene'} is not drawable yet` };
  }
  const bodies = desc.bodies, constraints = desc.constraints;
  const other = bodies.find((b) => !['sphere', 'box', 'capsule', 'plane'].includes(b.shape?.type));
  if (other) return { drawable: false, reason: `shape '${(other.shape as { type?: string }).type}' is not drawable yet` };

  const n = bodies.length;
  const radius = new Float32Array(n);
  const shapes = new Float32Array(SHAPE_FLOATS * n);
  const initialPoses = new Float32Array(POSE_FLOATS * n);
  const box = emptyBox();
  bodies.forEach((b, i) => {
    radius[i] = boundingRadius(b.shape);
    const sh = b.shape;
    if (sh.type === 'sphere') shapes.set([SHAPE_SPHERE, sh.radius, 0, 0], SHAPE_FLOATS * i);
    else if (sh.type === 'box') shapes.set([SHAPE_BOX, ...sh.halfExtents], SHAPE_FLOATS * i);
    else if (sh.type === 'capsule') shapes.set([SHAPE_CAPSULE, sh.radius, sh.halfHeight, 0], SHAPE_FLOATS * i);
    else shapes.set([SHAPE_PLANE, 0, 0, 0], SHAPE_FLOATS * i);
    const q = b.orientation ?? [0, 0, 0, 1];
    const qn = Math.hypot(...q) || 1;
    initialPoses.set([b.position[0], b.position[1], b.position[2], 0, q[0] / qn, q[1] / qn, q[2] / qn, q[3] / qn], POSE_FLOATS * i);
    // a plane is unbounded: it is framed by where the other bodies meet it (below), not by its position
    if (sh.type !== 'plane') grow(box, b.position, boundingRadius(b.shape));
  });
  for (const c of constraints) if (c.bodyB === null) grow(box, c.anchorB, 0);
  const ground = groundQuads(bodies, box);
  const joints = jointRecords(
    constraints.map((c) => {
      const link = { a: c.bodyA, b: c.bodyB === null ? -1 : c.bodyB, ra: c.anchorA, rb: c.anchorB };
      switch (c.type) {
        case 'point':
        case 'fixed':
          return { ...link, kind: JOINT_POINT };
        case 'distance':
          return { ...link, kind: JOINT_ROD };
        case 'hinge': {
          // the axis in A's frame, unit; drawn through A's anchor, as long as A is wide (at least)
          const l = Math.hypot(...c.axisA) || 1;
          return { ...link, kind: JOINT_HINGE, axis: c.axisA.map((x) => x / l), axisHalf: 1.25 * radius[c.bodyA] };
        }
      }
    }),
  );
  return { drawable: true, bodyCount: n, jointCount: constraints.length, radius, shapes, joints, guides: new Float32Array(0), ground, initialPoses, bounds: settle(box), planar: false, reach: false, packPoses: packSnapshot };
}

/** R(q) v for a unit quaternion [x, y, z, w]: v + 2 q_v × (q_v × v + w v) (as the shaders' rotate). */
function rotateBy(q: readonly number[], v: readonly number[]): number[] {
  const [x, y, z, w] = q;
  const t = [y * v[2] - z * v[1] + w * v[0], z * v[0] - x * v[2] + w * v[1], x * v[1] - y * v[0] + w * v[2]];
  return [v[0] + 2 * (y * t[2] - z * t[1]), v[1] + 2 * (z * t[0] - x * t[2]), v[2] + 2 * (x * t[1] - y * t[0])];
}

/**
 * Each plane body as a square of its surface: the plane through x_P spanned by u = R(q) e_x and
 * w = R(q) e_z (its outward normal n = R(q) e_y = w × u), centred on the foot of the other bodies'
 * bounds centre c on it, f = c − ((c − x_P) · n) n, of half side GROUND_HALF_EXTENTS × their extent.
 * A vertex carries its coordinates (s, t) = ((p − x_P)·u, (p − x_P)·w), so the shaded pattern is
 * fixed to the plane. `box` (the other bodies' bounds) grows by each foot that lies within two
 * extents of c — a ground the bodies will fall onto is framed, a far-away plane is not.
 */
function groundQuads(bodies: WorldDesc['bodies'], box: Box): Float32Array<ArrayBuffer> {
  const planes = bodies.filter((b) => b.shape.type === 'plane');
  if (!planes.length) return new Float32Array(0);
  const empty = !Number.isFinite(box.min[0]);
  const c = empty ? [0, 0, 0] : [0, 1, 2].map((d) => (box.min[d] + box.max[d]) / 2);
  const extent = empty ? 1 : Math.max(box.max[0] - box.min[0], box.max[1] - box.min[1], box.max[2] - box.min[2], 1e-3);
  const half = GROUND_HALF_EXTENTS * extent;
  const out = new Float32Array(6 * GROUND_FLOATS * planes.length);
  const feet: number[][] = [];
  planes.forEach((b, k) => {
    const q0 = b.orientation ?? [0, 0, 0, 1];
    const qn = Math.hypot(...q0) || 1;
    const q = q0.map((x) => x / qn);
    const u = rotateBy(q, [1, 0, 0]), n = rotateBy(q, [0, 1, 0]), w = rotateBy(q, [0, 0, 1]);
    const x = b.position;
    const s = (c[0] - x[0]) * n[0] + (c[1] - x[1]) * n[1] + (c[2] - x[2]) * n[2];
    const foot = [0, 1, 2].map((d) => c[d] - s * n[d]);
    if (Math.abs(s) <= 2 * extent) feet.push(foot);
    // (s, t) of the foot: the square spans s₀ ± half, t₀ ± half
    const s0 = (foot[0] - x[0]) * u[0] + (foot[1] - x[1]) * u[1] + (foot[2] - x[2]) * u[2];
    const t0 = (foot[0] - x[0]) * w[0] + (foot[1] - x[1]) * w[1] + (foot[2] - x[2]) * w[2];
    const corners = [[-1, -1], [1, -1], [1, 1], [-1, -1], [1, 1], [-1, 1]];
    corners.forEach(([a, e], v) => {
      const p = [0, 1, 2].map((d) => foot[d] + half * (a * u[d] + e * w[d]));
      out.set([p[0], p[1], p[2], n[0], n[1], n[2], s0 + half * a, t0 + half * e], GROUND_FLOATS * (6 * k + v));
    });
  });
  for (const f of feet) grow(box, f, 0);
  return out;
}

/**
 * A particle system: particles as spheres, distance constraints as rods, springs as lines,
 * nails as point joints to the world; wires (circle/sphere constraints and parametric circles),
 * planes and lines as guides.
 */
function particleRenderInfo(desc: ParticleSystemDesc): Drawable {
  const dim = desc.dimension;
  const p3 = (v: readonly number[]): [number, number, number] => [v[0], v[1], dim === 3 ? v[2] : 0];
  const n = desc.particles.length;
  const positions = desc.particles.map((p) => p3(p.position));

  // the extent first (particles, nails, wires), as it sizes undrawn radii, planes and lines
  const box = emptyBox();
  for (const x of positions) grow(box, x, 0);
  const wires: { centre: [number, number, number]; r: number }[] = [];
  for (const c of desc.constraints) {
    if (c.type === 'circle') wires.push({ centre: p3(c.center), r: c.radius });
    else if (c.type === 'nail') grow(box, p3(c.point), 0);
  }
  for (const c of desc.parametric ?? []) wires.push({ centre: p3(c.center), r: c.radius });
  for (const w of wires) grow(box, w.centre, w.r);
  // what hangs from fixed points (fixed particles, nails) moves within its reach, the farthest
  // particle from one at the start. A 2-D scene frames the whole disc of reach (a double
  // pendulum may loop over its pivot). A 3-D one, seen from an angle, where a sphere of reach
  // frames it far too small: that much below the point, and, hung from one point alone, the
  // mirror side it swings through.
  const anchors = [...desc.particles.flatMap((p, i) => (p.fixed ? [positions[i]] : [])), ...desc.constraints.flatMap((c) => (c.type === 'nail' ? [p3(c.point)] : []))];
  for (const a of anchors) {
    const reach = Math.max(0, ...positions.map((x) => Math.hypot(x[0] - a[0], x[1] - a[1], x[2] - a[2])));
    if (dim === 2) grow(box, a, reach);
    grow(box, [a[0], a[1] - reach, a[2]], 0);
    if (anchors.length === 1) for (const x of positions) grow(box, [2 * a[0] - x[0], a[1], 2 * a[2] - x[2]], 0);
  }
  if (dim === 2) box.min[2] = box.max[2] = 0;
  settle(box);
  const extent = Math.max(box.max[0] - box.min[0], box.max[1] - box.min[1], box.max[2] - box.min[2], 1e-3);

  const radius = new Float32Array(n);
  const shapes = new Float32Array(SHAPE_FLOATS * n);
  const initialPoses = new Float32Array(POSE_FLOATS * n);
  desc.particles.forEach((p, i) => {
    radius[i] = p.radius ?? 0.02 * extent;
    shapes.set([SHAPE_SPHERE, radius[i], 0, 0], SHAPE_FLOATS * i);
    initialPoses.set([...positions[i], 0, 0, 0, 0, 1], POSE_FLOATS * i);
    grow(box, positions[i], radius[i]);
  });

  const zero = [0, 0, 0];
  const links: Parameters<typeof jointRecords>[0] = [];
  for (const c of desc.constraints) {
    if (c.type === 'distance') links.push({ a: c.a, b: c.b, kind: JOINT_ROD, ra: zero, rb: zero });
    else if (c.type === 'nail') links.push({ a: c.particle, b: -1, kind: JOINT_POINT, ra: zero, rb: p3(c.point) });
  }
  for (const f of desc.forces) if (f.type === 'spring') links.push({ a: f.a, b: f.b, kind: JOINT_SPRING, ra: zero, rb: zero });

  const guides: number[] = [];
  const segment = (a: readonly number[], b: readonly number[]) => guides.push(a[0], a[1], a[2], b[0], b[1], b[2]);
  /** the circle about `centre` of radius r in the plane spanned by unit vectors u, v */
  const circle = (centre: readonly number[], r: number, u: readonly number[], v: readonly number[]) => {
    const at = (k: number) => {
      const t = (2 * Math.PI * k) / CIRCLE_SEGMENTS;
      return [0, 1, 2].map((d) => centre[d] + r * (Math.cos(t) * u[d] + Math.sin(t) * v[d]));
    };
    for (let k = 0; k < CIRCLE_SEGMENTS; k++) segment(at(k), at(k + 1));
  };
  const X = [1, 0, 0], Y = [0, 1, 0], Z = [0, 0, 1];
  for (const w of wires) {
    circle(w.centre, w.r, X, Y);
    // a sphere (a circle constraint in 3-D): its three great circles
    if (dim === 3) {
      circle(w.centre, w.r, Y, Z);
      circle(w.centre, w.r, Z, X);
    }
  }
  const unit = (v: readonly number[]) => {
    const l = Math.hypot(v[0], v[1], v[2]) || 1;
    return [v[0] / l, v[1] / l, v[2] / l];
  };
  const along = (o: readonly number[], d: readonly number[], s: number) => [o[0] + s * d[0], o[1] + s * d[1], o[2] + s * d[2]];
  for (const c of desc.constraints) {
    if (c.type !== 'plane' && c.type !== 'line') continue;
    const x = positions[c.particle], o = p3(c.point);
    if (c.type === 'line' || dim === 2) {
      // a line (a plane in 2-D is the line normal to n), drawn through the particle's foot on it
      const d = c.type === 'line' ? unit(p3(c.direction)) : unit([-c.normal[1], c.normal[0], 0]);
      const foot = along(o, d, (x[0] - o[0]) * d[0] + (x[1] - o[1]) * d[1] + (x[2] - o[2]) * d[2]);
      segment(along(foot, d, -extent), along(foot, d, extent));
      for (let dd = 0; dd < 3; dd++) {
        box.min[dd] = Math.min(box.min[dd], foot[dd] - Math.abs(d[dd]) * extent);
        box.max[dd] = Math.max(box.max[dd], foot[dd] + Math.abs(d[dd]) * extent);
      }
    } else {
      // a plane in 3-D: a square of side 2·extent about the particle's foot, with its diagonals
      const nrm = unit(c.normal);
      const s = (x[0] - o[0]) * nrm[0] + (x[1] - o[1]) * nrm[1] + (x[2] - o[2]) * nrm[2];
      const foot = along(x, nrm, -s);
      const u = unit(Math.abs(nrm[1]) < 0.9 ? [nrm[2], 0, -nrm[0]] : [0, -nrm[2], nrm[1]]);
      const v = [nrm[1] * u[2] - nrm[2] * u[1], nrm[2] * u[0] - nrm[0] * u[2], nrm[0] * u[1] - nrm[1] * u[0]];
      const corner = (a: number, b: number) => [0, 1, 2].map((d) => foot[d] + extent * (a * u[d] + b * v[d]));
      const cs = [corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, 1)];
      for (let k = 0; k < 4; k++) segment(cs[k], cs[(k + 1) % 4]);
      segment(cs[0], cs[2]);
      segment(cs[1], cs[3]);
      for (const p of cs) grow(box, p, 0);
    }
  }

  return {
    drawable: true,
    bodyCount: n,
    jointCount: links.length,
    radius,
    shapes,
    joints: jointRecords(links),
    guides: new Float32Array(guides),
    ground: new Float32Array(0),
    initialPoses,
    bounds: box,
    planar: dim === 2,
    reach: anchors.length > 0,
    packPoses: packSnapshot,
  };
}
