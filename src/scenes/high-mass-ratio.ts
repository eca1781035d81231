/**
 * high-mass-ratio — a light chain of `beads` touching beads hanging at rest from
 * a pin, holding a heavy ball (radius `ballRadius`) `ratio` times a bead's mass
 * at its lower end, touching the last bead. Every joint starts satisfied; the
 * test is whether it stays so. The Delassus blocks of the joints next to the
 * ball differ by about the mass ratio, the classic case where iterative solvers
 * (Jacobi, Gauss-Seidel) converge slowly and the chain stretches.
 * The pin stands high enough that the ball clears y = 0.
 */
import type { WorldDesc, PointConstraintDesc } from '../model/world.js';
import { packedBodyList, packedConstraintList } from '../model/packed.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { addChain, beadParams, collisionsParam } from './chain.js';

export const highMassRatio: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.beads + 1, constraints: p.beads + 1 }),
  name: 'high-mass-ratio',
  description: 'a light hanging chain holding a heavy ball at its end; the mass ratio is a parameter',
  params: {
    beads: { default: 10, min: 1, integer: true, help: 'beads in the light chain' },
    ...beadParams,
    ratio: { default: 100, min: 1e-6, help: 'ball mass / bead mass' },
    ballRadius: { default: 0.15, min: 1e-6, help: 'ball radius, m' },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const r = p.radius, R = p.ballRadius;
    const bodies = packedBodyList(p.beads + 1);
    const constraints = packedConstraintList<PointConstraintDesc>(p.beads + 1);
    const top = 2 * r * p.beads + 2 * R;
    addChain(bodies, constraints, { start: [0, top, 0], direction: [0, -1, 0], beads: p.beads, radius: r, density: p.density });
    const beadMass = p.density * (4 / 3) * Math.PI * r * r * r;
    const last = bodies.length - 1;
    // the ball hangs below the last bead, touching it: centre R below the contact point
    bodies.push({ shape: { type: 'sphere', radius: R }, mass: p.ratio * beadMass, position: [0, top - 2 * r * p.beads - R, 0] });
    constraints.push({ type: 'point', bodyA: last, bodyB: last + 1, anchorA: [0, -r, 0], anchorB: [0, R, 0] });
    return { gravity: [0, -9.81, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});
