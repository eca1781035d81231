/**
 * necklace — the reference text's baseline scene: `chains` chains of `beads`
 * touching spheres, held out horizontally (+x) and released. Consecutive beads
 * are joined by a point constraint at the point where they touch; the first
 * bead is pinned to the world at its outer (−x) surface point. Chains stand on
 * a grid: rows `spacing` apart along z, columns far enough apart along x that a
 * swinging chain never reaches its neighbour (chains swing in their own x–y plane).
 */
import type { WorldDesc, PointConstraintDesc } from '../model/world.js';
import { packedBodyList, packedConstraintList } from '../model/packed.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { addChain, beadParams, collisionsParam } from './chain.js';

export const necklace: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.chains * p.beads, constraints: p.chains * p.beads }),
  name: 'necklace',
  description: 'chains of touching beads held out horizontally, pinned at one end, released (the Jacobi baseline)',
  params: {
    chains: { default: 2500, min: 1, integer: true, help: 'number of chains (2,500 × 40 = the reference 100k beads)' },
    beads: { default: 40, min: 1, integer: true, help: 'beads per chain' },
    ...beadParams,
    spacing: { default: 0.5, min: 0, help: 'gap between neighbouring chains, m' },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const chains = p.chains, beads = p.beads, r = p.radius, gap = p.spacing;
    const length = 2 * r * beads;
    const columns = Math.ceil(Math.sqrt(chains));
    const pitchX = 2 * length + gap; // a chain sweeps at most `length` either side of its pin
    const pitchZ = 2 * r + gap;
    const height = length + 1; // pins high enough that hanging chains stay above y = 0
    const bodies = packedBodyList(p.chains * p.beads);
    const constraints = packedConstraintList<PointConstraintDesc>(p.chains * p.beads);
    for (let c = 0; c < chains; c++) {
      const start: [number, number, number] = [(c % columns) * pitchX, height, Math.floor(c / columns) * pitchZ];
      addChain(bodies, constraints, { start, direction: [1, 0, 0], beads, radius: r, density: p.density });
    }
    return { gravity: [0, -9.81, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});
