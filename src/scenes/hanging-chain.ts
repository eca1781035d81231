/**
 * hanging-chain — `beads` touching beads hanging straight down at rest from a
 * world pin at the top of the first bead. Consecutive beads are joined by a point
 * constraint at the point where they touch, so the chain starts exactly
 * satisfying every constraint. The pin stands at (0, 2·radius·beads, 0), so the
 * last bead just touches y = 0.
 */
import type { WorldDesc, PointConstraintDesc } from '../model/world.js';
import { packedBodyList, packedConstraintList } from '../model/packed.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { addChain, beadParams, collisionsParam } from './chain.js';

export const hangingChain: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.beads, constraints: p.beads }),
  name: 'hanging-chain',
  description: 'a chain of touching beads hanging straight down at rest from a world pin',
  params: {
    beads: { default: 10, min: 1, integer: true, help: 'beads in the chain' },
    ...beadParams,
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const n = p.beads, r = p.radius;
    const top = 2 * r * n;
    const bodies = packedBodyList(p.beads);
    const constraints = packedConstraintList<PointConstraintDesc>(p.beads);
    addChain(bodies, constraints, { start: [0, top, 0], direction: [0, -1, 0], beads: n, radius: r, density: p.density });
    return { gravity: [0, -9.81, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});
