/**
 * mass-ratio-pendulum — the AVBD paper's mass-ratio test (Giles, Diaz & Yuksel 2025): a light chain
 * of `links` point-jointed beads, pinned at the top, holding a heavy ball `ratio` times a bead's mass
 * (default 50,000 : 1), released `angle` from the vertical so the whole swings as a pendulum. Every
 * joint starts satisfied. The joint next to the ball carries its weight, about `ratio` times the
 * load the chain's own beads put on a joint: the Delassus blocks along the chain differ by the mass
 * ratio, which stalls the iterative per-constraint solvers (the chain stretches, or the solve
 * diverges), where AVBD's per-body solve with a ramped penalty holds it.
 * The pin stands high enough that the ball clears y = 0 at the bottom of its swing.
 */
import type { WorldDesc, PointConstraintDesc } from '../model/world.js';
import { packedBodyList, packedConstraintList } from '../model/packed.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { addChain, beadParams, collisionsParam, fromVertical } from './chain.js';

export const massRatioPendulum: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.links + 1, constraints: p.links + 1 }),
  name: 'mass-ratio-pendulum',
  description: "the AVBD paper's test: a light chain of point-jointed beads holding a ball 50,000 times heavier, swinging",
  params: {
    links: { default: 5, min: 1, integer: true, help: 'beads in the light chain' },
    ...beadParams,
    ratio: { default: 50000, min: 1e-6, help: 'ball mass / bead mass' },
    ballRadius: { default: 0.25, min: 1e-6, help: 'ball radius, m' },
    angle: { default: 0.5, min: 0, max: 3.1, help: 'starting angle of the chain from the vertical, rad' },
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const r = p.radius, R = p.ballRadius;
    const bodies = packedBodyList(p.links + 1);
    const constraints = packedConstraintList<PointConstraintDesc>(p.links + 1);
    const length = 2 * r * p.links + 2 * R;
    const top = length + 0.5; // the ball's bottom 0.5 m above y = 0 when hanging straight down
    const d = fromVertical(p.angle);
    addChain(bodies, constraints, { start: [0, top, 0], direction: d, beads: p.links, radius: r, density: p.density });
    const beadMass = p.density * (4 / 3) * Math.PI * r * r * r;
    const last = bodies.length - 1;
    // the ball's centre lies R beyond the last bead's tip, on the chain's line
    const reach = 2 * r * p.links + R;
    bodies.push({ shape: { type: 'sphere', radius: R }, mass: p.ratio * beadMass, position: [reach * d[0], top + reach * d[1], reach * d[2]] });
    constraints.push({ type: 'point', bodyA: last, bodyB: last + 1, anchorA: [r * d[0], r * d[1], r * d[2]], anchorB: [-R * d[0], -R * d[1], -R * d[2]] });
    return { gravity: [0, -9.81, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});
