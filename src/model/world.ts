/**
 * The world model: plain, JSON-able data that every solver consumes.
 *
 * Conventions: SI units, y up, right-handed. Quaternions are [x, y, z, w].
 * A point constraint pins the point anchorA (in body A's local frame) to the
 * point anchorB (in body B's local frame, or a world point when bodyB is null):
 *   c = x_A + R(q_A) r⁰ − x_B − R(q_B) r¹ = 0            (reference text, eq. 3)
 *
 * Mass properties are computed once, here, by `massProperties`.
 */

export type Vec3 = [number, number, number];
export type Quat = [number, number, number, number];

export interface SphereShape {
  type: 'sphere';
  radius: number;
}

export type Shape = SphereShape;

export interface BodyDesc {
  shape: Shape;
  /** kg/m³; give `density` or `mass` (not needed when fixed). */
  density?: number;
  /** kg */
  mass?: number;
  /** A fixed body has zero inverse mass and inertia: it never moves. */
  fixed?: boolean;
  position: Vec3;
  /** unit quaternion [x, y, z, w]; identity when omitted */
  orientation?: Quat;
  linearVelocity?: Vec3;
  /** world frame, rad/s */
  angularVelocity?: Vec3;
}

export interface PointConstraintDesc {
  type: 'point';
  bodyA: number;
  /** null: the world, and anchorB is a world point */
  bodyB: number | null;
  /** r⁰, in A's local frame */
  anchorA: Vec3;
  /** r¹, in B's local frame, or a world point when bodyB is null */
  anchorB: Vec3;
  /**
   * compliance α in m/N (1/stiffness) of a soft joint: the joint pulls with force
   * |f| = |c|/α (XPBD, Müller et al. 2020). Omitted: the solver's --compliance (0: rigid).
   */
  compliance?: number;
}

export type ConstraintDesc = PointConstraintDesc;

export interface WorldDesc {
  gravity: Vec3;
  bodies: BodyDesc[];
  constraints: ConstraintDesc[];
}

/**
 * A fault in a world description; `path` is a JSON path like `bodies[3].mass`,
 * `source` the file it came from (if any).
 */
export class WorldError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
    readonly source?: string,
  ) {
    super(`${source ? `${source}: ` : ''}${path}: ${problem}`);
    this.name = 'WorldError';
  }
}

export interface MassProperties {
  /** kg; Infinity for a fixed body */
  mass: number;
  inverseMass: number;
  /** local inertia tensor, row-major 3×3 (kg·m²); zeros for a fixed body */
  inertiaLocal: number[];
  /** local inverse inertia tensor, row-major 3×3; zeros for a fixed body */
  inverseInertiaLocal: number[];
}

/**
 * Mass and local inertia of one body. A solid sphere of mass m and radius r has
 * I = (2/5) m r² about any axis through its centre.
 */
export function massProperties(body: BodyDesc): MassProperties {
  const r = body.shape.radius;
  let mass: number;
  if (body.mass !== undefined) mass = body.mass;
  else if (body.density !== undefined) mass = body.density * (4 / 3) * Math.PI * r * r * r;
  else mass = NaN;
  if (body.fixed) {
    return { mass: Infinity, inverseMass: 0, inertiaLocal: new Array(9).fill(0), inverseInertiaLocal: new Array(9).fill(0) };
  }
  const i = 0.4 * mass * r * r;
  return {
    mass,
    inverseMass: 1 / mass,
    inertiaLocal: [i, 0, 0, 0, i, 0, 0, 0, i],
    inverseInertiaLocal: [1 / i, 0, 0, 0, 1 / i, 0, 0, 0, 1 / i],
  };
}

function finiteVec(v: unknown, n: number, path: string): void {
  if (!Array.isArray(v) || v.length !== n) throw new WorldError(path, `expected an array of ${n} numbers`);
  v.forEach((x, k) => {
    if (typeof x !== 'number' || !Number.isFinite(x)) throw new WorldError(`${path}[${k}]`, 'expected a finite number');
  });
}

function positive(x: unknown, path: string): void {
  if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0) throw new WorldError(path, 'expected a finite number > 0');
}

/**
 * Checks a world description; throws a WorldError naming the first fault.
 * Scene files are checked structurally by the schema (schema.ts) first; built-in
 * scenes and library users come straight here, so the structural checks stay.
 */
export function validateWorld(world: WorldDesc): void {
  finiteVec(world.gravity, 3, 'gravity');
  if (!Array.isArray(world.bodies)) throw new WorldError('bodies', 'expected an array');
  if (!Array.isArray(world.constraints)) throw new WorldError('constraints', 'expected an array');
  world.bodies.forEach((b, i) => {
    const p = `bodies[${i}]`;
    if (!b || typeof b !== 'object') throw new WorldError(p, 'expected an object');
    if (!b.shape || b.shape.type !== 'sphere') throw new WorldError(`${p}.shape.type`, 'expected "sphere"');
    positive(b.shape.radius, `${p}.shape.radius`);
    finiteVec(b.position, 3, `${p}.position`);
    if (b.orientation !== undefined) {
      finiteVec(b.orientation, 4, `${p}.orientation`);
      const [x, y, z, w] = b.orientation;
      if (Math.hypot(x, y, z, w) < 1e-12) throw new WorldError(`${p}.orientation`, 'zero quaternion');
    }
    if (b.linearVelocity !== undefined) finiteVec(b.linearVelocity, 3, `${p}.linearVelocity`);
    if (b.angularVelocity !== undefined) finiteVec(b.angularVelocity, 3, `${p}.angularVelocity`);
    if (b.mass !== undefined && b.density !== undefined) throw new WorldError(p, 'give "mass" or "density", not both');
    if (!b.fixed) {
      if (b.mass !== undefined) positive(b.mass, `${p}.mass`);
      else if (b.density !== undefined) positive(b.density, `${p}.density`);
      else throw new WorldError(p, 'a body that is not fixed needs "mass" or "density"');
    }
  });
  const n = world.bodies.length;
  world.constraints.forEach((c, i) => {
    const p = `constraints[${i}]`;
    if (!c || c.type !== 'point') throw new WorldError(`${p}.type`, 'expected "point"');
    if (!Number.isInteger(c.bodyA) || c.bodyA < 0 || c.bodyA >= n)
      throw new WorldError(`${p}.bodyA`, `body index out of range 0..${n - 1}`);
    if (c.bodyB !== null && (!Number.isInteger(c.bodyB) || c.bodyB < 0 || c.bodyB >= n))
      throw new WorldError(`${p}.bodyB`, `body index out of range 0..${n - 1} (or null for the world)`);
    if (c.bodyB === c.bodyA) throw new WorldError(`${p}.bodyB`, 'a constraint joins two different bodies');
    finiteVec(c.anchorA, 3, `${p}.anchorA`);
    finiteVec(c.anchorB, 3, `${p}.anchorB`);
    if (c.compliance !== undefined && (typeof c.compliance !== 'number' || !Number.isFinite(c.compliance) || c.compliance < 0))
      throw new WorldError(`${p}.compliance`, 'expected a finite number ≥ 0');
    const fixedA = !!world.bodies[c.bodyA].fixed;
    const fixedB = c.bodyB === null || !!world.bodies[c.bodyB].fixed;
    if (fixedA && fixedB) throw new WorldError(p, 'joins two fixed bodies (nothing can move)');
  });
}
