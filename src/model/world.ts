/**
 * The world model: plain, JSON-able data that every solver consumes.
 *
 * Conventions: SI units, y up, right-handed. Quaternions are [x, y, z, w].
 * A point constraint pins the point anchorA (in body A's local frame) to the
 * point anchorB (in body B's local frame, or a world point when bodyB is null):
 *   c = x_A + R(q_A) r⁰ − x_B − R(q_B) r¹ = 0            (reference text, eq. 3)
 * The distance, hinge and fixed joints share its fields (schema.ts says what
 * each adds). The description types are inferred from the zod schema in
 * schema.ts; validateWorld runs that schema.
 *
 * Shapes: sphere, box, capsule, and plane (a half-space, fixed bodies only). Mass properties (mass, and the inertia tensor,
 * diagonal in the body's local frame) are computed once, here, by `massProperties`.
 */

import { WorldError, schemaFault, worldSchema, bodySchema, constraintSchema, elementFault, referenceFault, nothingMoves, type Shape, type Vec3, type BodyDesc, type WorldDesc } from './schema.js';
import { packedBodies, packedConstraints, type PackedBodies, type PackedConstraints } from './packed.js';

// The description types are inferred from the zod schema (schema.ts), so the two cannot drift.
export type {
  Vec3,
  Quat,
  SphereShape,
  BoxShape,
  CapsuleShape,
  PlaneShape,
  Shape,
  BodyDesc,
  PointConstraintDesc,
  DistanceConstraintDesc,
  HingeConstraintDesc,
  FixedConstraintDesc,
  ConstraintDesc,
  WorldDesc,
} from './schema.js';
export { WorldError };

export interface MassProperties {
  /** kg; Infinity for a fixed body */
  mass: number;
  inverseMass: number;
  /** local inertia tensor, row-major 3×3 (kg·m²); zeros for a fixed body */
  inertiaLocal: number[];
  /** local inverse inertia tensor, row-major 3×3; zeros for a fixed body */
  inverseInertiaLocal: number[];
}

/** Volume of a shape, m³. */
export function shapeVolume(shape: Shape): number {
  switch (shape.type) {
    case 'sphere':
      return (4 / 3) * Math.PI * shape.radius ** 3;
    case 'box': {
      const [a, b, c] = shape.halfExtents;
      return 8 * a * b * c;
    }
    case 'capsule': {
      const { radius: r, halfHeight: h } = shape;
      return Math.PI * r * r * 2 * h + (4 / 3) * Math.PI * r * r * r;
    }
    case 'plane':
      return Infinity; // a half-space (fixed bodies only: it has no mass to compute)
  }
}

/**
 * The least half size of a shape: a sphere's or capsule's radius, a box's smallest half extent;
 * Infinity for a plane (unbounded). The size collision/pipeline.ts scales its slop by, and
 * the one the contact code's supported range (ranges.ts CONTACT_SIZE_RANGE, as 2 × this) is of.
 */
export function leastHalfSize(shape: Shape): number {
  switch (shape.type) {
    case 'sphere':
    case 'capsule':
      return shape.radius;
    case 'box':
      return Math.min(shape.halfExtents[0], shape.halfExtents[1], shape.halfExtents[2]);
    case 'plane':
      return Infinity;
  }
}

/** Radius of the smallest sphere about the body's origin that holds the shape, m (framing, bounds). */
export function boundingRadius(shape: Shape): number {
  switch (shape.type) {
    case 'sphere':
      return shape.radius;
    case 'box':
      return Math.hypot(...shape.halfExtents);
    case 'capsule':
      return shape.halfHeight + shape.radius;
    case 'plane':
      return 0; // unbounded: framing and bounds take only its position
  }
}

/**
 * Principal moments (Ix, Iy, Iz) of a solid of mass m, about its centre, in its local axes.
 *
 * Sphere, radius r:      I = 2/5 m r² about every axis.
 * Box, half extents a, b, c (full edges 2a, 2b, 2c):
 *   Ix = m/12 ((2b)² + (2c)²) = m/3 (b² + c²),  Iy = m/3 (a² + c²),  Iz = m/3 (a² + b²).
 * Capsule, radius r, half height h (a cylinder of height 2h along y and two hemispherical caps),
 * uniform density, so the mass splits by volume:
 *   m_cyl = m · 2πr²h / V,  m_caps = m · 4/3 πr³ / V (both caps),  V = 2πr²h + 4/3 πr³.
 *   Iy (the axis)  = m_cyl r²/2 + m_caps · 2/5 r²       (the two caps make one sphere about y).
 *   Ix = Iz:
 *     cylinder about a diameter through its centre: m_cyl (r²/4 + (2h)²/12) = m_cyl (r²/4 + h²/3);
 *     one cap, mass μ = m_caps/2, about a diameter of its flat face: 2/5 μ r² (half a sphere, same
 *     ratio as the whole). Its centroid lies 3r/8 from the flat face (∫₀^r z π(r² − z²) dz / (2/3 π r³)
 *     = (π r⁴/4) / (2/3 π r³) = 3r/8), so about its own centroid: 2/5 μ r² − μ (3r/8)² (parallel axis
 *     theorem, backwards), and about the capsule's centre, at h + 3r/8 from the centroid:
 *       2/5 μ r² − μ (3r/8)² + μ (h + 3r/8)² = μ (2/5 r² + h² + 3/4 h r).
 *     Both caps: m_caps (2/5 r² + h² + 3/4 h r).
 *   Ix = Iz = m_cyl (r²/4 + h²/3) + m_caps (2/5 r² + h² + 3/4 h r).
 */
export function principalInertia(shape: Shape, mass: number): Vec3 {
  switch (shape.type) {
    case 'sphere': {
      const i = 0.4 * mass * shape.radius * shape.radius;
      return [i, i, i];
    }
    case 'box': {
      const [a, b, c] = shape.halfExtents;
      return [(mass / 3) * (b * b + c * c), (mass / 3) * (a * a + c * c), (mass / 3) * (a * a + b * b)];
    }
    case 'capsule': {
      const { radius: r, halfHeight: h } = shape;
      const vCyl = Math.PI * r * r * 2 * h, vCaps = (4 / 3) * Math.PI * r * r * r;
      const mCyl = (mass * vCyl) / (vCyl + vCaps), mCaps = (mass * vCaps) / (vCyl + vCaps);
      const axial = mCyl * r * r * 0.5 + mCaps * 0.4 * r * r;
      const transverse = mCyl * (r * r / 4 + h * h / 3) + mCaps * (0.4 * r * r + h * h + 0.75 * h * r);
      return [transverse, axial, transverse];
    }
    case 'plane':
      return [Infinity, Infinity, Infinity]; // fixed bodies only (the schema refuses a movable plane)
  }
}

/**
 * Mass and local inertia of one body: mass from `mass`, or density × shapeVolume; the inertia
 * tensor is diagonal in the body's local frame (principalInertia).
 */
export function massProperties(body: BodyDesc): MassProperties {
  let mass: number;
  if (body.mass !== undefined) mass = body.mass;
  else if (body.density !== undefined) {
    const sh = body.shape;
    // the sphere's product in the order it has always been taken (state hashes stay bit-identical)
    mass = sh.type === 'sphere' ? body.density * (4 / 3) * Math.PI * sh.radius * sh.radius * sh.radius : body.density * shapeVolume(sh);
  }
  else mass = NaN;
  if (body.fixed) {
    return { mass: Infinity, inverseMass: 0, inertiaLocal: new Array(9).fill(0), inverseInertiaLocal: new Array(9).fill(0) };
  }
  const [ix, iy, iz] = principalInertia(body.shape, mass);
  return {
    mass,
    inverseMass: 1 / mass,
    inertiaLocal: [ix, 0, 0, 0, iy, 0, 0, 0, iz],
    inverseInertiaLocal: [1 / ix, 0, 0, 0, 1 / iy, 0, 0, 0, 1 / iz],
  };
}

/**
 * Checks a world description; throws a WorldError naming the first fault (its JSON path and one
 * line). Runs the scene schema (schema.ts: structure, ranges and the checks across bodies and
 * constraints), the single source of truth for what a world may hold, so built-in scenes and
 * library users are held to exactly what a scene file is.
 */
export function validateWorld(world: WorldDesc): void {
  if (!world || typeof world !== 'object' || Array.isArray(world)) throw new WorldError('(top level)', 'expected an object with gravity, bodies and constraints');
  const pb = packedBodies(world.bodies), pc = packedConstraints(world.constraints);
  if (pb && pc) return validatePacked(world, pb, pc);
  const r = worldSchema.safeParse(world);
  if (!r.success) throw schemaFault(world, r.error);
}

/**
 * validateWorld for packed lists (model/packed.ts), without a zod pass over every element (seconds
 * and a copy of every object at 10M bodies): the schema checks the top level, and one element of
 * each prototype, which holds every field but the per-element numbers; those are checked in a loop
 * (finite, a quaternion not zero), and an element found faulty there goes through the schema for
 * the exact message a plain list would give. The references are checkReferences's, per joint.
 */
function validatePacked(world: WorldDesc, pb: PackedBodies, pc: PackedConstraints): void {
  // the top level alone, with a stand-in body (the lists are checked below, and whether anything
  // can move from the packed fixed flags: nothingMoves)
  const standIn: BodyDesc = { shape: { type: 'sphere', radius: 1 }, mass: 1, position: [0, 0, 0] };
  const top = worldSchema.safeParse({ ...world, bodies: [standIn], constraints: [] });
  if (!top.success) throw schemaFault(world, top.error);
  const checkBody = (i: number) => {
    const r = bodySchema.safeParse(pb.at(i));
    if (!r.success) throw elementFault('bodies', i, pb.at(i), r.error);
  };
  const checkJoint = (ic: number) => {
    const r = constraintSchema.safeParse(pc.at(ic));
    if (!r.success) throw elementFault('constraints', ic, pc.at(ic), r.error);
  };
  const finite = (a: Float64Array, from: number, n: number) => {
    for (let k = from; k < from + n; k++) if (!Number.isFinite(a[k])) return false;
    return true;
  };
  const seen = new Uint8Array(pb.prototypes.list.length);
  for (let i = 0; i < pb.count; i++) {
    const k = pb.prototype[i], bits = pb.present[i];
    let suspect = !seen[k] || !finite(pb.position, 3 * i, 3);
    if (bits & 1) suspect ||= !finite(pb.orientation, 4 * i, 4) || Math.hypot(pb.orientation[4 * i], pb.orientation[4 * i + 1], pb.orientation[4 * i + 2], pb.orientation[4 * i + 3]) <= 1e-12;
    if (bits & 2) suspect ||= !finite(pb.linearVelocity, 3 * i, 3);
    if (bits & 4) suspect ||= !finite(pb.angularVelocity, 3 * i, 3);
    seen[k] = 1;
    if (suspect) checkBody(i);
  }
  const fixed = pb.prototypes.list.map((b) => b.fixed === true);
  const isFixed = (i: number) => fixed[pb.prototype[i]];
  const nothing = nothingMoves(pb.count, isFixed);
  if (nothing) throw new WorldError('bodies', nothing);
  const seenJoint = new Uint8Array(pc.prototypes.list.length);
  for (let ic = 0; ic < pc.count; ic++) {
    const k = pc.prototype[ic];
    if (!seenJoint[k] || !finite(pc.anchorA, 3 * ic, 3) || !finite(pc.anchorB, 3 * ic, 3)) checkJoint(ic);
    seenJoint[k] = 1;
  }
  for (let ic = 0; ic < pc.count; ic++) {
    const fault = referenceFault(ic, pc.bodyA[ic], pc.bodyB[ic] < 0 ? null : pc.bodyB[ic], pb.count, isFixed);
    if (fault) throw fault;
  }
}
