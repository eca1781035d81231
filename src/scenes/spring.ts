/**
 * spring — one bead hung from a world point by a soft joint: a zero-rest-length
 * spring of stiffness k (compliance α = 1/k, in m/N) between the point and the
 * bead's centre. Released at rest at the point, under gravity, the bead oscillates
 * about the equilibrium m g / k below it, between the point and 2 m g / k below, at
 *   ω = √(k/m)      (m = the bead's mass from radius and density)
 * The soft joint's force is |f| = |C|/α (XPBD, Müller et al. 2020; the same soft row
 * the velocity-level solvers use, jacobi/cpu.ts `softness`).
 */
import type { WorldDesc } from '../model/world.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { beadParams, collisionsParam } from './chain.js';

export const spring: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: () => ({ bodies: 1, constraints: 1 }),
  name: 'spring',
  description: 'one bead hung from a world point by a soft joint (compliance 1/k), released at the point: oscillates at √(k/m)',
  params: {
    stiffness: { default: 100, min: 1e-9, help: 'spring stiffness k = 1/compliance, N/m' },
    ...beadParams,
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const pin: [number, number, number] = [0, 1, 0];
    return {
      gravity: [0, -9.81, 0],
      collisions: p.collisions === 1,
      bodies: [{ shape: { type: 'sphere', radius: p.radius }, density: p.density, position: [...pin] }],
      constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: pin, compliance: 1 / p.stiffness }],
    };
  },
});
