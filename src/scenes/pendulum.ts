/**
 * pendulum — one bead on a massless rod: a physical pendulum. The bead (radius
 * `radius`, density `density`) is pinned to a fixed world point at distance
 * `length` from its centre, by an off-centre anchor r⁰ = length · (unit vector
 * from the bead's centre toward the pin), in the bead's local frame. It is
 * released at rest at `angle` from the vertical, in the x–y plane (+x for a
 * positive angle).
 *
 * Small-angle period of a physical pendulum (I_cm = (2/5) m r² for a solid sphere):
 *   T = 2π √((I_cm + m L²) / (m g L))
 * The pin stands at (0, length + radius, 0), so the hanging bead just touches y = 0.
 */
import type { WorldDesc } from '../model/world.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { beadParams, collisionsParam } from './chain.js';

export const pendulum: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: () => ({ bodies: 1, constraints: 1 }),
  name: 'pendulum',
  description: 'one bead pinned to the world by an off-centre anchor, released at an angle (a physical pendulum)',
  params: {
    length: { default: 0.5, min: 1e-6, help: 'pin to bead centre, m' },
    ...beadParams,
    angle: { default: 0.1, min: -Math.PI, max: Math.PI, help: 'release angle from the vertical, rad (x–y plane)' },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const L = p.length, r = p.radius, th = p.angle;
    const pin: [number, number, number] = [0, L + r, 0];
    const dir: [number, number, number] = [Math.sin(th), -Math.cos(th), 0]; // pin → bead centre
    const centre: [number, number, number] = [pin[0] + L * dir[0], pin[1] + L * dir[1], 0];
    return {
      gravity: [0, -9.81, 0],
      collisions: p.collisions === 1,
      bodies: [{ shape: { type: 'sphere', radius: r }, density: p.density, position: centre }],
      constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA: [-L * dir[0], -L * dir[1], 0], anchorB: pin }],
    };
  },
});
