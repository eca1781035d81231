/**
 * A two-body scene: a world point joint and a second joint of a chosen type (the declared-support
 * tests of the CLI and compare), and which solver lacks which joint type today.
 */
import type { SolverInfo } from '../../src/solvers/solver.js';

const second = {
  hinge: { type: 'hinge', bodyA: 0, bodyB: 1, anchorA: [0.1, 0, 0], anchorB: [-0.1, 0, 0], axisA: [0, 0, 1], axisB: [0, 0, 1] },
  distance: { type: 'distance', bodyA: 0, bodyB: 1, anchorA: [0.1, 0, 0], anchorB: [-0.1, 0, 0], length: 0 },
  fixed: { type: 'fixed', bodyA: 0, bodyB: 1, anchorA: [0.1, 0, 0], anchorB: [-0.1, 0, 0] },
};
export type SecondJoint = keyof typeof second;

export function jointSceneFile(type: SecondJoint) {
  return {
    gravity: [0, -9.81, 0],
    bodies: [
      { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0, 0, 0] },
      { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0.2, 0, 0] },
    ],
    constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 0, 0] }, second[type]],
  };
}

/** The first rigid solver and joint type (hinge, distance, fixed) it does not declare, or null when every solver declares all. */
export function undeclaredJoint(solvers: SolverInfo[]): { info: SolverInfo; type: SecondJoint } | null {
  for (const type of Object.keys(second) as SecondJoint[]) {
    // the scene's first joint is a point joint: a solver that declares it, lacking `type`
    const info = solvers.find((x) => x.supports && x.supports.constraints.includes('point') && !x.supports.constraints.includes(type));
    if (info) return { info, type };
  }
  return null;
}
