/**
 * stretched-chain — a hanging chain created with its beads `stretch` times their
 * rest spacing apart (the rest chain scaled by `stretch` about the pin), at rest.
 * Every joint between beads starts open by 2·r·(stretch − 1), the pin by
 * r·(stretch − 1): the scene measures how
 * a solver recovers from a large error — how fast, and how much energy its
 * correction injects (Baumgarte's β turns position error into velocity).
 * The pin stands at the top of the stretched chain, which clears y = 0.
 */
import type { WorldDesc, PointConstraintDesc } from '../model/world.js';
import { packedBodyList, packedConstraintList } from '../model/packed.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { addChain, beadParams, collisionsParam } from './chain.js';

export const stretchedChain: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.beads, constraints: p.beads }),
  name: 'stretched-chain',
  description: 'a hanging chain created at twice its rest spacing, released at rest (recovery from a large error)',
  params: {
    beads: { default: 10, min: 2, integer: true, help: 'beads in the chain' },
    ...beadParams,
    stretch: { default: 2, min: 1, help: 'initial centre spacing over rest spacing' },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const bodies = packedBodyList(p.beads);
    const constraints = packedConstraintList<PointConstraintDesc>(p.beads);
    const top = 2 * p.radius * p.stretch * p.beads;
    addChain(bodies, constraints, { start: [0, top, 0], direction: [0, -1, 0], beads: p.beads, radius: p.radius, density: p.density, stretch: p.stretch });
    return { gravity: [0, -9.81, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});
