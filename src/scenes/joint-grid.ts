/**
 * joint-grid — a `columns` × `rows` grid of touching beads in the horizontal x–z
 * plane, each joined to its right and back neighbour at the point where they
 * touch, the four corner beads pinned to the world at their centres. Released
 * at rest, it sags like a net. Unlike a chain, the constraint graph has loops
 * (every grid cell is a 4-cycle) and bodies with four joints, so the Jacobi
 * sweep's neighbours disagree more, and reduced-coordinate solvers cannot run it.
 */
import type { WorldDesc, PointConstraintDesc } from '../model/world.js';
import { packedBodyList, packedConstraintList } from '../model/packed.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { beadParams, collisionsParam } from './chain.js';

export const jointGrid: RigidSceneInfo = defineScene({
  kind: 'rigid',
  // (columns − 1)·rows joints along x, columns·(rows − 1) along z, four corner pins
  count: (p) => ({ bodies: p.columns * p.rows, constraints: (p.columns - 1) * p.rows + p.columns * (p.rows - 1) + 4 }),
  name: 'joint-grid',
  description: 'a horizontal grid of beads joined to their neighbours, the four corners pinned (a net; has loops)',
  params: {
    columns: { default: 20, min: 2, integer: true, help: 'beads along x' },
    rows: { default: 20, min: 2, integer: true, help: 'beads along z' },
    ...beadParams,
    ...collisionsParam,
  },
  build(p): WorldDesc {
    const nx = p.columns, nz = p.rows, r = p.radius;
    const height = 2 * r * Math.max(nx, nz) + 1; // the sagging net stays above y = 0
    const bodies = packedBodyList(p.columns * p.rows);
    const constraints = packedConstraintList<PointConstraintDesc>((p.columns - 1) * p.rows + p.columns * (p.rows - 1) + 4);
    const index = (i: number, k: number) => k * nx + i;
    for (let k = 0; k < nz; k++)
      for (let i = 0; i < nx; i++) bodies.push({ shape: { type: 'sphere', radius: r }, density: p.density, position: [2 * r * i, height, 2 * r * k] });
    for (let k = 0; k < nz; k++)
      for (let i = 0; i < nx; i++) {
        if (i + 1 < nx) constraints.push({ type: 'point', bodyA: index(i, k), bodyB: index(i + 1, k), anchorA: [r, 0, 0], anchorB: [-r, 0, 0] });
        if (k + 1 < nz) constraints.push({ type: 'point', bodyA: index(i, k), bodyB: index(i, k + 1), anchorA: [0, 0, r], anchorB: [0, 0, -r] });
      }
    for (const [i, k] of [[0, 0], [nx - 1, 0], [0, nz - 1], [nx - 1, nz - 1]]) {
      const b = index(i, k);
      constraints.push({ type: 'point', bodyA: b, bodyB: null, anchorA: [0, 0, 0], anchorB: [...bodies[b].position] });
    }
    return { gravity: [0, -9.81, 0], collisions: p.collisions === 1, bodies, constraints };
  },
});
