/**
 * Scenes of the joints on constraint rows (src/rows/): hinges with a limit, welds, ropes, on boxes,
 * capsules and spheres. Each starts with every joint exactly satisfied.
 *
 *   hinge-chain  `links` boxes in a horizontal row, each hinged to the next about z at their shared
 *                edge, the first hinged to the world: released, it swings down like a chain of
 *                planks; `limit` (rad, 0 = none) limits each hinge's bend both ways
 *   cantilever   `boxes` boxes welded end to end, the first welded to the world, held out level
 *                against gravity: how far the welds give (angular violation) is the measure
 *   rope-swing   a capsule hung from a world point by a rope (distance with maxLength) and thrown
 *                up so the rope goes slack and snaps taut again
 */
import type { WorldDesc } from '../model/world.js';
import { packedBodyList, packedConstraintList } from '../model/packed.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { collisionsParam } from './chain.js';

const g = -9.81;

export const hingeChain: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.links, constraints: p.links, rows: 5 * p.links + (p.limit > 0 ? 2 * (p.links - 1) : 0) }),
  name: 'hinge-chain',
  description: 'boxes held out in a row, hinged edge to edge about z, the first to the world, released: a chain of planks',
  params: {
    links: { default: 8, min: 1, integer: true, help: 'boxes in the chain' },
    length: { default: 0.3, min: 1e-6, help: 'length of each box along x, m' },
    thickness: { default: 0.04, min: 1e-6, help: 'height and depth of each box, m' },
    density: { default: 500, min: 1e-12, help: 'kg/m³' },
    limit: { default: 0, min: 0, max: Math.PI, help: "each hinge's bend limit either way, rad (0: no limit)" },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const half = p.length / 2, t = p.thickness / 2;
    const bodies = packedBodyList(p.links);
    const constraints = packedConstraintList(p.links);
    const top = 1 + p.links * p.length;
    const limits = p.limit > 0 ? { lowerAngle: -p.limit, upperAngle: p.limit } : {};
    for (let i = 0; i < p.links; i++) {
      bodies.push({ shape: { type: 'box', halfExtents: [half, t, t] }, density: p.density, position: [(2 * i + 1) * half, top, 0] });
      constraints.push(
        i === 0
          ? { type: 'hinge', bodyA: 0, bodyB: null, anchorA: [-half, 0, 0], anchorB: [0, top, 0], axisA: [0, 0, 1], axisB: [0, 0, 1] }
          : { type: 'hinge', bodyA: i - 1, bodyB: i, anchorA: [half, 0, 0], anchorB: [-half, 0, 0], axisA: [0, 0, 1], axisB: [0, 0, 1], ...limits },
      );
    }
    return { gravity: [0, g, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});

export const cantilever: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.boxes, constraints: p.boxes, rows: 6 * p.boxes }),
  name: 'cantilever',
  description: 'boxes welded end to end (fixed joints), the first to the world, held out level against gravity',
  params: {
    boxes: { default: 4, min: 1, integer: true, help: 'boxes in the beam' },
    length: { default: 0.5, min: 1e-6, help: 'length of each box along x, m' },
    thickness: { default: 0.1, min: 1e-6, help: 'height and depth of each box, m' },
    density: { default: 500, min: 1e-12, help: 'kg/m³' },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const half = p.length / 2, t = p.thickness / 2;
    const bodies = packedBodyList(p.boxes);
    const constraints = packedConstraintList(p.boxes);
    for (let i = 0; i < p.boxes; i++) {
      bodies.push({ shape: { type: 'box', halfExtents: [half, t, t] }, density: p.density, position: [(2 * i + 1) * half, 2, 0] });
      constraints.push(
        i === 0
          ? { type: 'fixed', bodyA: 0, bodyB: null, anchorA: [-half, 0, 0], anchorB: [0, 2, 0] }
          : { type: 'fixed', bodyA: i - 1, bodyB: i, anchorA: [half, 0, 0], anchorB: [-half, 0, 0] },
      );
    }
    return { gravity: [0, g, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});

export const ropeSwing: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: () => ({ bodies: 1, constraints: 1, rows: 1 }),
  name: 'rope-swing',
  description: 'a capsule on a rope (distance joint with maxLength) to a world point, thrown up so the rope goes slack and snaps taut',
  params: {
    rope: { default: 1.5, min: 1e-6, help: 'rope length, m' },
    speed: { default: 4, min: 0, help: 'launch speed, m/s (up and sideways at 45°)' },
    radius: { default: 0.05, min: 1e-6, help: 'capsule radius, m' },
    halfHeight: { default: 0.15, min: 0, minExclusive: true, help: "capsule's half segment length, m (> 0: a capsule has a segment; a sphere is not this scene)" },
    density: { default: 1000, min: 1e-12, help: 'kg/m³' },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const v = p.speed / Math.SQRT2;
    return {
      gravity: [0, g, 0],
      collisions: p.collisions === 1,
      bodies: [{ shape: { type: 'capsule', radius: p.radius, halfHeight: p.halfHeight }, density: p.density, position: [0, 2 - p.rope / 2, 0], linearVelocity: [v, v, 0] }],
      constraints: [{ type: 'distance', bodyA: 0, bodyB: null, anchorA: [0, p.halfHeight + p.radius, 0], anchorB: [0, 2, 0], maxLength: p.rope }],
    };
  },
});
