/**
 * Building block of the chain scenes: a straight chain of beads of radius r
 * from a start point along a unit direction d. Bead k's centre is at
 *   start + (2k + 1) · r · s · d          (s = stretch; s = 1: touching beads)
 * and consecutive beads are joined where they touch at rest: anchors +r·d on
 * bead k and −r·d on bead k + 1, so with s > 1 every joint starts violated by
 * 2 r (s − 1) (the stretched chain), and with s = 1 every joint is satisfied.
 * With `pin`, bead 0 is pinned to the world at its −d surface point (start).
 */
import type { BodyDesc, PointConstraintDesc, Vec3 } from '../model/world.js';
import type { ParamSpec } from './scene.js';

/** The bead parameters every bead scene shares (one definition of their ranges and defaults). */
export const beadParams: Record<'radius' | 'density', ParamSpec> = {
  radius: { default: 0.05, min: 1e-6, help: 'bead radius, m' },
  density: { default: 1000, min: 1e-9, help: 'bead density, kg/m³' },
};

/**
 * The switch every joint scene has: its bodies collide (1) or not (0, the default). The joint
 * scenes are reference problems of joints alone (their numbers and state hashes are those of a
 * world without contacts), so they build `collisions: false` unless asked.
 */
export const collisionsParam: Record<'collisions', ParamSpec> = {
  collisions: { default: 0, integer: true, min: 0, max: 1, help: '1: bodies collide (the reference scene has no contacts)' },
};

export interface ChainSpec {
  start: Vec3;
  /** unit vector from the pin along the chain */
  direction: Vec3;
  beads: number;
  radius: number;
  density: number;
  stretch?: number;
  pin?: boolean;
}

/** Appends the chain to `bodies` and `constraints`; returns the index of its first bead. */
export function addChain(bodies: BodyDesc[], constraints: PointConstraintDesc[], c: ChainSpec): number {
  const r = c.radius, d = c.direction, s = c.stretch ?? 1;
  const first = bodies.length;
  const along = (t: number): Vec3 => [c.start[0] + t * d[0], c.start[1] + t * d[1], c.start[2] + t * d[2]];
  const tip: Vec3 = [r * d[0], r * d[1], r * d[2]];
  const tail: Vec3 = [0 - tip[0], 0 - tip[1], 0 - tip[2]]; // 0 − x: no −0 in the files
  for (let k = 0; k < c.beads; k++) {
    bodies.push({ shape: { type: 'sphere', radius: r }, density: c.density, position: along((2 * k + 1) * r * s) });
    if (k === 0) {
      if (c.pin ?? true) constraints.push({ type: 'point', bodyA: first, bodyB: null, anchorA: tail, anchorB: [...c.start] });
    } else constraints.push({ type: 'point', bodyA: first + k - 1, bodyB: first + k, anchorA: [...tip], anchorB: [...tail] });
  }
  return first;
}

/** Unit vector at `angle` from straight down, toward +x, in the x–y plane. */
export function fromVertical(angle: number): Vec3 {
  return [Math.sin(angle), -Math.cos(angle), 0];
}
