/**
 * The narrow phase: the contact manifold of two shapes at their poses (types.ts conventions), or
 * null when no point is within `margin`. The routine is picked by the two shape types; each is
 * written for one order (sphere < capsule < box < plane, pairs.ts and box-box.ts), and a pair given
 * the other way round is computed as (B, A) and turned back: the normal negated and pointA, pointB
 * swapped (s = (pointB − pointA)·n is unchanged by the two sign changes; the ids name the same
 * features). Plane–plane: two fixed half-spaces, never a contact.
 */
import type { Shape } from '../model/world.js';
import type { Manifold, Pose } from './types.js';
import { collideBoxBox } from './box-box.js';
import { collideCapsuleBox, collideCapsuleCapsule, collideCapsulePlane, collideBoxPlane, collideSphereBox, collideSphereCapsule, collideSpherePlane, collideSphereSphere } from './pairs.js';

const RANK = { sphere: 0, capsule: 1, box: 2, plane: 3 } as const;

/** The pair in routine order (rank(a) ≤ rank(b)). */
function ordered(a: Shape, poseA: Pose, b: Shape, poseB: Pose, margin: number): Manifold | null {
  switch (a.type) {
    case 'sphere':
      switch (b.type) {
        case 'sphere':
          return collideSphereSphere(a, poseA, b, poseB, margin);
        case 'capsule':
          return collideSphereCapsule(a, poseA, b, poseB, margin);
        case 'box':
          return collideSphereBox(a, poseA, b, poseB, margin);
        case 'plane':
          return collideSpherePlane(a, poseA, b, poseB, margin);
      }
      break;
    case 'capsule':
      switch (b.type) {
        case 'capsule':
          return collideCapsuleCapsule(a, poseA, b, poseB, margin);
        case 'box':
          return collideCapsuleBox(a, poseA, b, poseB, margin);
        case 'plane':
          return collideCapsulePlane(a, poseA, b, poseB, margin);
      }
      break;
    case 'box':
      switch (b.type) {
        case 'box':
          return collideBoxBox(a, poseA, b, poseB, margin);
        case 'plane':
          return collideBoxPlane(a, poseA, b, poseB, margin);
      }
      break;
  }
  return null; // plane–plane
}

/** The contact manifold of A and B (normal from A towards B), or null when none is within `margin`. */
export function collide(shapeA: Shape, poseA: Pose, shapeB: Shape, poseB: Pose, margin: number): Manifold | null {
  if (RANK[shapeA.type] <= RANK[shapeB.type]) return ordered(shapeA, poseA, shapeB, poseB, margin);
  const m = ordered(shapeB, poseB, shapeA, poseA, margin);
  if (!m) return null;
  const n = m.normal;
  n[0] = -n[0];
  n[1] = -n[1];
  n[2] = -n[2];
  for (const p of m.points) {
    const t = p.pointA;
    p.pointA = p.pointB;
    p.pointB = t;
  }
  return m;
}
