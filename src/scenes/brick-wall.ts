/**
 * brick-wall (issue 23, item 7): the AVBD paper's wall of bricks smashed by a sphere (Giles et al.
 * 2025 use a ring of 110k bricks; this is the straight wall: the same contacts, brick on brick face
 * to face in a running bond, without the ring's curvature, which adds nothing a solver feels).
 *
 * The wall stands along x, centred on x = 0, its front face towards −z, on the ground (body 0, the
 * plane y = 0, normal +y). `rows` courses high; each course face on face on the one below (no
 * vertical gap). A running bond: course 0 (the bottom), 2, 4, … hold `columns` full bricks, `gap`
 * apart; courses 1, 3, … are shifted by half a brick, so each of their full bricks stands over a
 * joint of the course below, resting on two bricks, and a half brick closes each end, so the wall's
 * ends are flush. `layers` such walls (wythes) stand one behind the other along z, `gap` apart, not
 * bonded to each other (no headers). The sphere starts `distance` in front of the wall, level with
 * its middle (or resting on the ground if the wall is lower than the sphere), moving at `speed`
 * along +z; it falls g t²/2 on its way (t = distance/speed). Sleeping is the solver's option: the
 * scene sets none.
 *
 * Pair coefficients (schema.ts): μ = √(μA μB) = `friction` for every pair (ground, bricks and sphere
 * all take it), e = 0.
 */
import type { BodyDesc, Vec3, WorldDesc } from '../model/world.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { contactHalfSize, frictionParam } from './contact-scenes.js';
import { CONTACT_SIZE_RANGE } from '../model/ranges.js';

const GRAVITY: Vec3 = [0, -9.81, 0];
/** The bricks' density, kg/m³ (the contact scenes' 1000). */
export const BRICK_DENSITY = 1000;

/** Bricks in one layer: ⌈rows/2⌉ courses of `columns` full bricks and ⌊rows/2⌋ of columns − 1 full bricks and two half bricks. */
export const bricksPerLayer = (rows: number, columns: number) => Math.ceil(rows / 2) * columns + Math.floor(rows / 2) * (columns + 1);

/** The wall's extent: its length along x, height along y and thickness along z, m. */
export function wallExtent(p: Record<string, number>): { length: number; height: number; thickness: number } {
  return {
    length: p.columns * 2 * p.halfLength + (p.columns - 1) * p.gap,
    height: p.rows * 2 * p.halfHeight,
    thickness: p.layers * 2 * p.halfDepth + (p.layers - 1) * p.gap,
  };
}

export const brickWall: RigidSceneInfo = defineScene({
  kind: 'rigid',
  // the bricks, the ground and the sphere
  count: (p) => ({ bodies: p.layers * bricksPerLayer(p.rows, p.columns) + 2, constraints: 0 }),
  name: 'brick-wall',
  description: 'a wall of bricks in a running bond (rows × columns × layers) on the ground, hit by a heavy sphere: the AVBD paper\'s scene, straight',
  params: {
    rows: { default: 10, min: 1, integer: true, help: 'courses of bricks, one on another' },
    columns: { default: 10, min: 1, integer: true, help: 'full bricks in courses 0, 2, 4, … (the others hold columns − 1 and a half brick at each end)' },
    layers: { default: 2, min: 1, integer: true, help: 'walls one behind the other along z (wythes, not bonded to each other)' },
    halfLength: contactHalfSize(0.2, "a brick's half extent along the wall (x), m"),
    halfHeight: contactHalfSize(0.1, "a brick's half height (y), m"),
    halfDepth: contactHalfSize(0.1, "a brick's half depth across the wall (z), m"),
    gap: { default: 0.01, min: 0, help: 'gap between neighbouring bricks of a course and between layers, m (courses rest face on face)' },
    friction: frictionParam(0.6, 'friction coefficient of the ground, every brick and the sphere (so of every pair)'),
    radius: contactHalfSize(0.3, "the sphere's radius, m"),
    density: { default: 4000, min: 1e-12, help: "the sphere's density, kg/m³ (the bricks' is 1000)" },
    speed: { default: 10, help: "the sphere's speed along +z (towards the wall), m/s; 0 leaves the wall alone" },
    distance: { default: 1, min: 0, help: "from the sphere's front to the wall's front face at the start, m" },
  },
  // an odd course's half brick is L − gap/2 long (the derivation in build): it must be a body the
  // contact code supports (1 cm across at least), which also keeps gap < 2L (a brick over a joint
  // rests on both bricks beside it)
  check: (p) => {
    const half = p.halfLength - p.gap / 2;
    return half >= CONTACT_SIZE_RANGE.min!
      ? null
      : { param: 'gap', problem: `must leave the half bricks (halfLength − gap/2 = ${half} m long) at least ${CONTACT_SIZE_RANGE.min} m long, the least extent the contact code supports, got ${p.gap}` };
  },
  build(p): WorldDesc {
    const L = p.halfLength, h = p.halfHeight, d = p.halfDepth, g = p.gap, n = p.columns;
    const pitch = 2 * L + g; // centre to centre along a course
    const { length: W, height: H, thickness: T } = wallExtent(p);
    const mat = { friction: p.friction };
    const brick = (halfX: number, x: number, y: number, z: number): BodyDesc => ({ shape: { type: 'box', halfExtents: [halfX, h, d] }, density: BRICK_DENSITY, position: [x + 0, y, z + 0], ...mat });
    const bodies: BodyDesc[] = [{ shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], ...mat }];
    // The half brick: an odd course's first full brick stands over the first joint of the course
    // below, centred at x₀ = −W/2 + L + g/2 + … = −(n − 2) pitch/2, so its left face is at x₀ − L; the
    // half brick spans from the wall's end −W/2 to one gap before that face:
    //   (x₀ − L − g) − (−W/2) = −(n − 2)(2L + g)/2 − L − g + nL + (n − 1) g/2 = L − g/2.
    const halfBrick = L - g / 2;
    for (let layer = 0; layer < p.layers; layer++) {
      // layer 0 at the front (−z): centres from −T/2 + d, 2d + g apart
      const z = -T / 2 + d + layer * (2 * d + g);
      for (let r = 0; r < p.rows; r++) {
        const y = h + 2 * h * r; // each course's bottom face on the top face of the one below
        if (r % 2 === 0) {
          // n full bricks centred on x = 0
          for (let k = 0; k < n; k++) bodies.push(brick(L, (k - (n - 1) / 2) * pitch, y, z));
        } else {
          // a half brick at each end (flush with the wall's ends), n − 1 full bricks over the joints
          bodies.push(brick(halfBrick / 2, -W / 2 + halfBrick / 2, y, z));
          for (let k = 0; k < n - 1; k++) bodies.push(brick(L, (k - (n - 2) / 2) * pitch, y, z));
          bodies.push(brick(halfBrick / 2, W / 2 - halfBrick / 2, y, z));
        }
      }
    }
    // the sphere: level with the wall's middle (its lowest point on the ground if the wall is lower),
    // its front `distance` from the front face z = −T/2
    const r = p.radius;
    bodies.push({
      shape: { type: 'sphere', radius: r },
      density: p.density,
      position: [0, Math.max(r, H / 2), -T / 2 - p.distance - r],
      linearVelocity: [0, 0, p.speed],
      ...mat,
    });
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});
