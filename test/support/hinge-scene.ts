/** A two-body scene joined by a world point joint and a hinge (the declared-support tests of the CLI and compare). */
export const hingeSceneFile = {
  gravity: [0, -9.81, 0],
  bodies: [
    { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0, 0, 0] },
    { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0.2, 0, 0] },
  ],
  constraints: [
    { type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 0, 0] },
    { type: 'hinge', bodyA: 0, bodyB: 1, anchorA: [0.1, 0, 0], anchorB: [-0.1, 0, 0], axisA: [0, 0, 1], axisB: [0, 0, 1] },
  ],
};
