/**
 * What collision detection hands the contact solvers: for a pair of bodies A, B, a contact
 * manifold — one unit normal and up to four points.
 *
 * Conventions (every narrow-phase routine keeps them, the tests check them):
 *   normal      unit, world frame, pointing from A towards B (A is pushed along −n, B along +n);
 *   pointA      a point on A's surface, world frame;
 *   pointB      a point on B's surface, world frame;
 *   separation  s = (pointB − pointA) · n: > 0 apart, < 0 overlapping (−s is the penetration depth);
 *               for a touching pair pointB − pointA = s n (the two points face each other along n);
 *   id          a feature key, an integer in [0, 2²⁰): the same features of A and B touching give
 *               the same id from step to step, so the solver can carry the point's λ (warm start:
 *               the Starframe text's impulse caching, its "incident edge labels").
 * A routine reports every point with s < margin (speculative contacts: a pair that is apart by less
 * than the margin still gets its points, so a fast body is caught before it tunnels).
 *
 * Poses are the body's position (its centre of mass, the shape's origin) and unit quaternion
 * [x, y, z, w] (model/world.ts).
 */
import type { Shape } from '../model/world.js';

export type V3 = [number, number, number];
export type Q4 = [number, number, number, number];

export interface Pose {
  position: V3;
  orientation: Q4;
}

export interface ContactPoint {
  pointA: V3;
  pointB: V3;
  separation: number;
  id: number;
}

export interface Manifold {
  normal: V3;
  points: ContactPoint[];
}

export type CollisionShape = Shape;

/** Feature keys are below this (20 bits), so a contact row's key can pack pair, feature and row. */
export const FEATURE_ID_LIMIT = 1 << 20;

/** Manifolds have at most this many points. */
export const MAX_MANIFOLD_POINTS = 4;
