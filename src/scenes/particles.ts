/**
 * Constrained particle scenes (Witkin slides): run by the witkin-* solvers.
 *   bead-on-wire             a bead on a circular wire, C = ½|x|² − ½r² (the slides' quiz state is
 *                            --param radius=2 --param position=0,-2 --param velocity=-4,0 --param mass=10)
 *   bead-on-wire-parametric  the same bead in reduced coordinates x = r(cos θ, sin θ): on the wire by construction
 *   double-pendulum          two particles on distance constraints from a fixed pivot (2-D)
 *   rope                     N particles joined by distance constraints, the first nailed (3-D)
 *   cloth                    a grid of particles with distance constraints to its neighbours, two opposite corners nailed (3-D)
 */
import { defineScene, type SceneInfo } from './scene.js';
import { ParticleSystemError, type ConstraintDesc, type ParticleDesc, type ParticleSystemDesc } from '../model/particle-system.js';

type ParticleSceneInfo = SceneInfo<ParticleSystemDesc>;

const beadParams = {
  radius: { default: 1, min: 1e-3, help: 'wire radius r, m (the wire is centred on the origin)' },
  mass: { default: 1, min: 1e-6, help: 'bead mass, kg' },
  gravity: { default: 9.8, min: 0, help: '|g|, m/s², pointing −y (the slides use 9.8)' },
};
const beadVectors = {
  position: { default: [1, 0], help: 'initial position (x, y), m; off the wire, the feedback pulls it on' },
  velocity: { default: [0, 0], help: 'initial velocity (x, y), m/s' },
};

function beadStart(p: Record<string, number>, v: Record<string, number[]> | undefined): { x: number[]; u: number[] } {
  const x = v?.position ?? beadVectors.position.default;
  const u = v?.velocity ?? beadVectors.velocity.default;
  if (Math.hypot(x[0], x[1]) < 1e-9 * p.radius)
    throw new ParticleSystemError('position', "the bead is at the wire's centre, where ∂C/∂x = x vanishes and no direction leads to the wire");
  return { x, u };
}

export const beadOnWire: ParticleSceneInfo = defineScene({
  kind: 'particles',
  count: () => ({ bodies: 1, constraints: 1 }),
  name: 'bead-on-wire',
  description: 'a bead on a circular wire under gravity, held by the implicit constraint C = ½|x|² − ½r² (2-D, Witkin)',
  params: beadParams,
  vectorParams: beadVectors,
  build(p, vectors) {
    const { x, u } = beadStart(p, vectors);
    return {
      kind: 'particles',
      dimension: 2,
      particles: [{ position: [...x], velocity: [...u], mass: p.mass, radius: 0.05 * p.radius }],
      forces: [{ type: 'gravity', g: [0, -p.gravity] }],
      constraints: [{ type: 'circle', particle: 0, center: [0, 0], radius: p.radius }],
    };
  },
});

export const beadOnWireParametric: ParticleSceneInfo = defineScene({
  kind: 'particles',
  count: () => ({ bodies: 1, constraints: 0 }),
  name: 'bead-on-wire-parametric',
  description:
    'the bead on a wire in reduced coordinates x = r(cos θ, sin θ), θ̈ = (T·f/m − T·Ṫθ̇)/(T·T): on the wire by construction (the start is projected onto the wire, the velocity onto its tangent)',
  params: beadParams,
  vectorParams: beadVectors,
  build(p, vectors) {
    const { x, u } = beadStart(p, vectors);
    const theta = Math.atan2(x[1], x[0]);
    // θ̇ = T·ẋ / T·T with T = r(−sin θ, cos θ): the tangential part of the velocity
    const thetaDot = (-Math.sin(theta) * u[0] + Math.cos(theta) * u[1]) / p.radius;
    return {
      kind: 'particles',
      dimension: 2,
      particles: [{ position: [p.radius * Math.cos(theta), p.radius * Math.sin(theta)], mass: p.mass, radius: 0.05 * p.radius }],
      forces: [{ type: 'gravity', g: [0, -p.gravity] }],
      constraints: [],
      parametric: [{ type: 'circle', particle: 0, center: [0, 0], radius: p.radius, theta, thetaDot }],
    };
  },
});

export const doublePendulum: ParticleSceneInfo = defineScene({
  kind: 'particles',
  count: () => ({ bodies: 3, constraints: 2 }),
  name: 'double-pendulum',
  description: 'two particles hung from a fixed pivot by two distance constraints (2-D); angles from the downward vertical',
  params: {
    length1: { default: 1, min: 1e-3, help: 'pivot to the first particle, m' },
    length2: { default: 1, min: 1e-3, help: 'first to second particle, m' },
    mass1: { default: 1, min: 1e-6, help: 'kg' },
    mass2: { default: 1, min: 1e-6, help: 'kg' },
    angle1: { default: Math.PI / 2, min: -Math.PI, max: Math.PI, help: 'first link from straight down, rad' },
    angle2: { default: Math.PI / 4, min: -Math.PI, max: Math.PI, help: 'second link from straight down, rad' },
    gravity: { default: 9.81, min: 0, help: '|g|, m/s², pointing −y' },
  },
  build(p) {
    const x1 = [p.length1 * Math.sin(p.angle1), -p.length1 * Math.cos(p.angle1)];
    const x2 = [x1[0] + p.length2 * Math.sin(p.angle2), x1[1] - p.length2 * Math.cos(p.angle2)];
    const r = 0.04 * Math.max(p.length1, p.length2);
    return {
      kind: 'particles',
      dimension: 2,
      particles: [
        { position: [0, 0], mass: 0, fixed: true, radius: r },
        { position: x1, mass: p.mass1, radius: r },
        { position: x2, mass: p.mass2, radius: r },
      ],
      forces: [{ type: 'gravity', g: [0, -p.gravity] }],
      constraints: [
        { type: 'distance', a: 0, b: 1, length: p.length1 },
        { type: 'distance', a: 1, b: 2, length: p.length2 },
      ],
    };
  },
});

export const rope: ParticleSceneInfo = defineScene({
  kind: 'particles',
  count: (p) => ({ bodies: p.particles, constraints: p.particles }), // one nail, N − 1 links
  name: 'rope',
  description: 'a rope of N particles joined by distance constraints, the first nailed at the origin, released horizontal (3-D)',
  params: {
    particles: { default: 20, min: 2, integer: true, help: 'particles, N' },
    length: { default: 2, min: 1e-3, help: 'rope length, m' },
    mass: { default: 0.05, min: 1e-6, help: 'mass of each particle, kg' },
    drag: { default: 0.02, min: 0, help: 'viscous drag k, kg/s (f = −k v on every particle); without it the free end whips faster than a 1/60 s step can follow' },
    gravity: { default: 9.81, min: 0, help: '|g|, m/s², pointing −y' },
  },
  build(p) {
    const n = p.particles, seg = p.length / (n - 1);
    const particles: ParticleDesc[] = Array.from({ length: n }, (_, i) => ({ position: [i * seg, 0, 0], mass: p.mass, radius: 0.3 * seg }));
    const constraints: ConstraintDesc[] = [{ type: 'nail', particle: 0, point: [0, 0, 0] }];
    for (let i = 0; i + 1 < n; i++) constraints.push({ type: 'distance', a: i, b: i + 1, length: seg });
    const forces: ParticleSystemDesc['forces'] = [{ type: 'gravity', g: [0, -p.gravity, 0] }];
    if (p.drag > 0) forces.push({ type: 'drag', k: p.drag });
    return { kind: 'particles', dimension: 3, particles, forces, constraints };
  },
});

export const cloth: ParticleSceneInfo = defineScene({
  kind: 'particles',
  // two nails, (columns − 1)·rows links along x, columns·(rows − 1) along z
  count: (p) => ({ bodies: p.columns * p.rows, constraints: 2 + (p.columns - 1) * p.rows + p.columns * (p.rows - 1) }),
  name: 'cloth',
  // Opposite corners: with two corners of one edge nailed, that edge is a straight inextensible line between
  // two nails, which no finite tension holds against a sideways load (its rows of J are dependent, and
  // J W Jᵀ λ = b has no solution once it moves). The grid still meets such configurations as it falls and
  // lines of links pull straight: RK4 at 1/60 s follows it into one at ≈ 0.4 s (reported as diverged);
  // semi-implicit Euler with 4 substeps runs 10 s (README).
  description: 'a cloth: a grid of particles with distance constraints to its row and column neighbours, two opposite corners nailed, released horizontal (3-D)',
  params: {
    columns: { default: 8, min: 2, integer: true, help: 'particles along x' },
    rows: { default: 8, min: 2, integer: true, help: 'particles along z' },
    spacing: { default: 0.1, min: 1e-3, help: 'rest distance between neighbours, m' },
    mass: { default: 0.01, min: 1e-6, help: 'mass of each particle, kg' },
    drag: { default: 0, min: 0, help: 'viscous drag k, kg/s' },
    gravity: { default: 9.81, min: 0, help: '|g|, m/s², pointing −y' },
  },
  build(p) {
    const { columns: nc, rows: nr, spacing: s } = p;
    const id = (i: number, j: number) => j * nc + i;
    const particles: ParticleDesc[] = [];
    for (let j = 0; j < nr; j++) for (let i = 0; i < nc; i++) particles.push({ position: [i * s, 0, j * s], mass: p.mass, radius: 0.25 * s });
    const constraints: ConstraintDesc[] = [
      { type: 'nail', particle: id(0, 0), point: [0, 0, 0] },
      { type: 'nail', particle: id(nc - 1, nr - 1), point: [(nc - 1) * s, 0, (nr - 1) * s] },
    ];
    for (let j = 0; j < nr; j++)
      for (let i = 0; i < nc; i++) {
        if (i + 1 < nc) constraints.push({ type: 'distance', a: id(i, j), b: id(i + 1, j), length: s });
        if (j + 1 < nr) constraints.push({ type: 'distance', a: id(i, j), b: id(i, j + 1), length: s });
      }
    const forces: ParticleSystemDesc['forces'] = [{ type: 'gravity', g: [0, -p.gravity, 0] }];
    if (p.drag > 0) forces.push({ type: 'drag', k: p.drag });
    return { kind: 'particles', dimension: 3, particles, forces, constraints };
  },
});

export const particleScenes: ParticleSceneInfo[] = [beadOnWire, beadOnWireParametric, doublePendulum, rope, cloth];
