/**
 * far-from-origin — the necklace, translated `offset` metres along x (default
 * 10 km). The physics is the same as at the origin, so any difference is float
 * precision: at 10⁴ m an f32 position has a spacing of 2⁻¹⁰ m ≈ 1 mm (ulp of
 * 8192..16384), comparable to the joint errors being measured, while f64 keeps
 * ~2 pm. Compare a run here against the same run of `necklace`.
 */
import type { WorldDesc } from '../model/world.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { necklace } from './necklace.js';
import { packedBodies, packedConstraints } from '../model/packed.js';

// the necklace's parameters but its `chains` (a smaller default here) and `collisions` (listed last)
const { chains: _chains, collisions, ...necklaceParams } = necklace.params;

export const farFromOrigin: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.chains * p.beads, constraints: p.chains * p.beads }),
  name: 'far-from-origin',
  description: 'the necklace placed 10 km from the origin (float precision)',
  params: {
    chains: { default: 100, min: 1, integer: true, help: 'number of chains' },
    ...necklaceParams,
    offset: { default: 10_000, help: 'distance from the origin along x, m' },
    collisions,
  },
  build(p): WorldDesc {
    const { offset, ...rest } = p;
    const world = necklace.build(rest); // `collisions` too: the necklace's world says it
    // the necklace's lists are packed (model/packed.ts): move its typed arrays, not per-body copies
    const bodies = packedBodies(world.bodies)!, joints = packedConstraints(world.constraints)!;
    for (let i = 0; i < bodies.count; i++) bodies.position[3 * i] += offset;
    for (let ic = 0; ic < joints.count; ic++) if (joints.bodyB[ic] < 0) joints.anchorB[3 * ic] += offset;
    return world;
  },
});
