/**
 * long-chain — one chain of many touching beads, pinned at the top and released
 * at rest at `angle` from the vertical (0: hanging straight down, already
 * satisfying every joint; π/2: held out horizontally). A stress for information
 * travel: a Jacobi sweep moves an impulse one link per iteration, so the pin's
 * reaction to the far end's weight takes `beads` iterations to arrive.
 * The pin stands at height 2·r·beads + r, so the hanging chain clears y = 0.
 */
import type { WorldDesc, PointConstraintDesc } from '../model/world.js';
import { packedBodyList, packedConstraintList } from '../model/packed.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { addChain, fromVertical, beadParams, collisionsParam } from './chain.js';

export const longChain: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.beads, constraints: p.beads }),
  name: 'long-chain',
  description: 'one long chain of touching beads pinned at the top, released at an angle (information travel)',
  params: {
    beads: { default: 100, min: 1, integer: true, help: 'beads in the chain' },
    ...beadParams,
    angle: { default: 0, min: -Math.PI, max: Math.PI, help: 'release angle from the vertical, rad (0 = hanging at rest)' },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const bodies = packedBodyList(p.beads);
    const constraints = packedConstraintList<PointConstraintDesc>(p.beads);
    const top = 2 * p.radius * p.beads + p.radius;
    addChain(bodies, constraints, { start: [0, top, 0], direction: fromVertical(p.angle), beads: p.beads, radius: p.radius, density: p.density });
    return { gravity: [0, -9.81, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});
