/**
 * Stress scenes of contacts (issue 16): many bodies, thin boxes, chains of impacts. Gravity 9.81 m/s²
 * down, collisions on. Every scene starts with no two bodies overlapping (touching at most) and no
 * body in or behind a plane; random choices come from a seeded PRNG, so a build is deterministic.
 *
 *   confined        `count` spheres on a grid inside a box of five planes (ground + four walls facing
 *                   in), sized so the spheres fill about half of its cube, with small random velocities
 *   card-house      a house of cards: A-frame pairs of thin cards leaned at `angle` from vertical, tops
 *                   touching, flat cards bridging neighbouring apexes, `levels` levels
 *   domino          a row of `count` thin upright tiles on the ground, the first tipped forward by `push`
 *   newtons-cradle  `count` spheres (e = 1, μ = 0) each hung on two distance joints to the world,
 *                   touching in a row; the first pulled out to `angle` and released
 *   rain            `count` mixed shapes (sphere, box, capsule in turn) of random size, orientation and
 *                   density on a 3-D grid above a box of five planes (ground + four walls)
 */
import type { BodyDesc, ConstraintDesc, Quat, Vec3, WorldDesc } from '../model/world.js';
import { defineScene, type RigidSceneInfo } from './scene.js';
import { contactHalfSize, frictionParam } from './contact-scenes.js';
import { CONTACT_SIZE_RANGE } from '../model/ranges.js';
import { mulberry32 } from '../math/random.js';

const GRAVITY: Vec3 = [0, -9.81, 0];
const DENSITY = 1000;

/** +0 for −0 (a JSON roundtrip turns −0 into 0: the exported scene must be the same world). */
const z0 = (x: number) => x + 0;

/** Rotation by θ about the z axis (unit quaternion [x, y, z, w]). */
const aboutZ = (th: number): Quat => [0, 0, z0(Math.sin(th / 2)), Math.cos(th / 2)];
/** Rotation by θ about the x axis. */
const aboutX = (th: number): Quat => [z0(Math.sin(th / 2)), 0, 0, Math.cos(th / 2)];

/**
 * The ground (y = 0, normal +y) and four walls around the square |x|, |z| ≤ L/2, each a fixed plane
 * whose normal (local +y) points into the box. Rotating local +y about z by θ gives (−sin θ, cos θ, 0):
 * θ = −π/2 → +x (the wall at x = −L/2), θ = +π/2 → −x (x = +L/2). About x by θ: (0, cos θ, sin θ):
 * θ = +π/2 → +z (the wall at z = −L/2), θ = −π/2 → −z (z = +L/2).
 */
function openBox(L: number, material: { friction?: number } = {}): BodyDesc[] {
  const h = L / 2;
  const plane = (position: Vec3, orientation: Quat): BodyDesc => ({ shape: { type: 'plane' }, fixed: true, position, orientation, ...material });
  return [
    plane([0, 0, 0], [0, 0, 0, 1]),
    plane([0 - h, 0, 0], aboutZ(-Math.PI / 2)),
    plane([h, 0, 0], aboutZ(Math.PI / 2)),
    plane([0, 0, 0 - h], aboutX(Math.PI / 2)),
    plane([0, 0, h], aboutX(-Math.PI / 2)),
  ];
}

/** the seeded PRNG of src/math/random.ts */
const prng = mulberry32;

/** A uniformly random unit quaternion (Shoemake's method: three uniforms u1, u2, u3). */
function randomQuat(rand: () => number): Quat {
  const u1 = rand(), u2 = rand(), u3 = rand();
  const a = Math.sqrt(1 - u1), b = Math.sqrt(u1);
  return [a * Math.sin(2 * Math.PI * u2), a * Math.cos(2 * Math.PI * u2), b * Math.sin(2 * Math.PI * u3), b * Math.cos(2 * Math.PI * u3)];
}

const seedParam = { default: 1, min: 0, max: 4294967295, integer: true, help: 'seed of the random numbers (the same seed builds the same scene)' };

// ---- confined --------------------------------------------------------------------------------

/** The confined scene's geometry: the box side L and the grid (k per row, pitch). */
export function confinedLayout(count: number, radius: number): { side: number; perRow: number; pitch: number } {
  // spheres fill about half of an L × L × L cube: count (4/3) π r³ = L³ / 2
  const pitch = 2.2 * radius; // grid pitch: a gap of 0.2 r between neighbours
  const side = Math.max(pitch, Math.cbrt((2 * count * 4 * Math.PI * radius ** 3) / 3));
  const perRow = Math.max(1, Math.floor(side / pitch));
  return { side, perRow, pitch };
}

export const confined: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.count + 5, constraints: 0 }),
  name: 'confined',
  description: 'many spheres packed in a box of five planes (ground and four walls facing in), filling about half of it, with small random velocities',
  params: {
    count: { default: 100, min: 1, integer: true, help: 'spheres' },
    radius: contactHalfSize(0.1, 'sphere radius, m'),
    speed: { default: 0.5, min: 0, help: 'each velocity component random in [−speed, speed], m/s' },
    seed: seedParam,
  },
  build(p): WorldDesc {
    const r = p.radius;
    const { side, perRow, pitch } = confinedLayout(p.count, r);
    const rand = prng(p.seed);
    const bodies: BodyDesc[] = openBox(side);
    // a grid perRow × perRow per layer, centred: the outermost centres stand (perRow − 1) pitch / 2
    // from the middle, ≤ (side − pitch)/2, so each sphere clears the walls by ≥ pitch/2 − r = 0.1 r;
    // layer m's centres at y = pitch/2 + m pitch (0.1 r above the ground, 0.2 r between layers)
    for (let i = 0; i < p.count; i++) {
      const layer = Math.floor(i / (perRow * perRow)), inLayer = i % (perRow * perRow);
      const ix = inLayer % perRow, iz = Math.floor(inLayer / perRow);
      const v: Vec3 = [(2 * rand() - 1) * p.speed, (2 * rand() - 1) * p.speed, (2 * rand() - 1) * p.speed];
      bodies.push({
        shape: { type: 'sphere', radius: r },
        density: DENSITY,
        position: [z0((ix - (perRow - 1) / 2) * pitch), pitch / 2 + layer * pitch, z0((iz - (perRow - 1) / 2) * pitch)],
        linearVelocity: v.map(z0) as Vec3,
      });
    }
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

// ---- card-house ------------------------------------------------------------------------------

/** Card half extents: thickness (local x), length (local y), width (local z), m. */
export const CARD: Vec3 = [0.005, 0.35, 0.25];

/** Cards in a house of `levels` levels: level j (0 at the bottom) has n = levels − j A-frames (2n cards) and n − 1 flat cards on top. */
export const cardCount = (levels: number) => (3 * levels * (levels + 1)) / 2 - levels;

export const cardHouse: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: 1 + cardCount(p.levels), constraints: 0 }),
  name: 'card-house',
  // built at rest: after a second of settling (contacts' slop taken up) nothing should move (the piles tests' window)
  restsAfter: 1,
  description: 'a house of cards: thin cards leaned in A-frame pairs, tops touching, flat cards bridging neighbouring apexes, level on level',
  params: {
    levels: { default: 3, min: 1, integer: true, help: 'levels (the bottom one has `levels` A-frames)' },
    angle: { default: 0.35, min: 0.05, max: 0.45, help: "each leaning card's angle from vertical, rad (≤ 0.45 keeps a level's A-frames from touching)" },
    friction: frictionParam(0.7, 'friction coefficient of every card and of the ground (so of every pair)'),
  },
  build(p): WorldDesc {
    const [t, hl] = CARD, a = p.angle, s = Math.sin(a), c = Math.cos(a);
    const mat = { friction: p.friction };
    const bodies: BodyDesc[] = [{ shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], ...mat }];
    const card = (position: Vec3, orientation: Quat): BodyDesc => ({ shape: { type: 'box', halfExtents: [...CARD] }, density: DENSITY, position, orientation, ...mat });
    // A left card turned by −a about z: its axes e_x = (cos a, −sin a) (the inner face, towards the
    // apex), e_y = (sin a, cos a). Corners c ± t e_x ± hl e_y. On a surface y = y_b:
    //   lowest corner (+e_x, −e_y) at y = c_y − t sin a − hl cos a = y_b  →  c_y = y_b + hl cos a + t sin a;
    //   rightmost corner (+e_x, +e_y) at x = c_x + t cos a + hl sin a = X (the apex)  →  c_x = X − t cos a − hl sin a,
    //   at y = y_b + 2 hl cos a; the right card is the mirror image in x = X, so the two inner top
    //   edges meet on the line (X, y_b + 2 hl cos a): tops touching, no overlap.
    //   The outer top corners (−e_x, +e_y) stand at x = X ∓ 2t cos a, y = y_b + 2 hl cos a + 2 t sin a:
    //   the highest points of the frame, where flat cards rest.
    // Frames of a level stand P = 2 hl + 2t apart: a flat card (length 2 hl) bridging apexes X_k and
    // X_k+1 spans [X_k + t, X_k+1 − t], past each apex's outer corner (at 2t cos a > t from it), so it
    // rests on one outer corner of each; neighbouring flat cards' ends are 2t apart. A frame's foot
    // reaches 2 hl sin a + 2t cos a from its apex: below P/2 for a ≤ 0.45 (frames do not touch), and
    // within hl, so the frames of the next level (over the flat cards' centres) stand on their card.
    const P = 2 * hl + 2 * t;
    const footX = t * c + hl * s; // apex X minus the left card's centre x
    let yb = 0;
    for (let j = 0; j < p.levels; j++) {
      const n = p.levels - j;
      const yc = yb + hl * c + t * s;
      const yTop = yb + 2 * hl * c + 2 * t * s;
      for (let k = 0; k < n; k++) {
        const X = (k - (n - 1) / 2) * P;
        bodies.push(card([z0(X - footX), yc, 0], aboutZ(-a)));
        bodies.push(card([z0(X + footX), yc, 0], aboutZ(a)));
      }
      // flat cards: turned by π/2 about z (thickness along y, length along x), bottom face on yTop
      for (let k = 0; k + 1 < n; k++) bodies.push(card([z0((k + 0.5 - (n - 1) / 2) * P), yTop + t, 0], aboutZ(Math.PI / 2)));
      yb = yTop + 2 * t;
    }
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

// ---- domino ----------------------------------------------------------------------------------

/** Tile half extents: thickness along x, height along y, width along z, m. */
export const TILE: Vec3 = [0.05, 0.5, 0.25];

export const domino: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.count + 1, constraints: 0 }),
  name: 'domino',
  description: 'a row of thin upright tiles on the ground, the first tipped towards the others: a chain of falls',
  params: {
    count: { default: 20, min: 1, integer: true, help: 'tiles' },
    spacing: { default: 0.6, min: 0.15, max: 0.95, help: "distance between neighbouring tiles' centres, as a fraction of a tile's height (1 m); < 1, so a falling tile reaches the next" },
    push: { default: 1.5, min: 0, help: "the first tile's starting spin about its front bottom edge, rad/s (≥ 0.38 tips it over)" },
    friction: frictionParam(0.6, 'friction coefficient of every tile and of the ground'),
  },
  build(p): WorldDesc {
    const [t, h] = TILE;
    const pitch = p.spacing * 2 * h;
    const mat = { friction: p.friction };
    const bodies: BodyDesc[] = [{ shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], ...mat }];
    // The first tile turns about its front bottom edge E = (t, 0) at ω = (0, 0, −push) (towards +x):
    // its centre moves at v = ω × (c − E) = (0, 0, −w) × (−t, h, 0) = (w h, w t, 0), so the edge stays
    // put. It tips over once its centre passes over E: it must rise √(h² + t²) − h, which takes
    // ½ I_E ω² ≥ m g (√(h² + t²) − h), I_E = m ((2t)² + (2h)²)/12 + m (t² + h²): ω ≥ 0.38 rad/s here.
    const w = p.push;
    for (let k = 0; k < p.count; k++) {
      bodies.push({
        shape: { type: 'box', halfExtents: [...TILE] },
        density: DENSITY,
        position: [k * pitch, h, 0],
        ...(k === 0 ? { linearVelocity: [w * h, w * t, 0] as Vec3, angularVelocity: [0, 0, z0(0 - w)] as Vec3 } : {}),
        ...mat,
      });
    }
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

// ---- newtons-cradle --------------------------------------------------------------------------

/** Half the distance between a sphere's two suspension points (along z), m. */
export const CRADLE_SPREAD = 0.3;

export const newtonsCradle: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.count, constraints: 2 * p.count, rows: 2 * p.count }),
  name: 'newtons-cradle',
  description: "Newton's cradle: spheres (restitution 1, no friction) each hung on two distance joints, touching in a row; the first pulled out and released",
  params: {
    count: { default: 5, min: 1, integer: true, help: 'spheres' },
    radius: contactHalfSize(0.1, 'sphere radius, m'),
    length: { default: 1, min: 1e-6, help: "from the suspension line to a sphere's centre, m" },
    angle: { default: 0.5, min: 0, max: 1.5, help: 'the first sphere pulled out (towards −x) by this angle, rad' },
    gap: { default: 0, min: 0, help: 'gap between neighbouring spheres at rest, m' },
  },
  build(p): WorldDesc {
    const r = p.radius, L = p.length, b = CRADLE_SPREAD;
    const top = L + 1; // the suspension lines at y = top, spheres' centres at rest 1 m above y = 0
    const strand = Math.hypot(L, b); // each joint's length: centre to a suspension point
    const bodies: BodyDesc[] = [];
    const constraints: ConstraintDesc[] = [];
    for (let i = 0; i < p.count; i++) {
      const x = i * (2 * r + p.gap);
      // sphere i swings about the line through (x, top, ±b) parallel to z; pulled out by α it stands
      // at (x − L sin α, top − L cos α, 0), still √(L² + b²) from both points: the joints hold exactly.
      // At rest (α = 0) straight below the line, where gravity has no torque about it.
      const al = i === 0 ? p.angle : 0;
      bodies.push({
        shape: { type: 'sphere', radius: r },
        density: DENSITY,
        position: [z0(x - L * Math.sin(al)), top - L * Math.cos(al), 0],
        friction: 0,
        restitution: 1,
      });
      for (const zb of [0 - b, b]) constraints.push({ type: 'distance', bodyA: i, bodyB: null, anchorA: [0, 0, 0], anchorB: [x, top, zb], length: strand });
    }
    return { gravity: GRAVITY, collisions: true, bodies, constraints };
  },
});

// ---- rain ------------------------------------------------------------------------------------

/** The rain scene's grid: k bodies per row (k × k per layer), pitch apart; the box side is k·pitch. */
export function rainLayout(count: number, size: number): { perRow: number; pitch: number; side: number } {
  // the largest body's bounding radius: a box of half extents ≤ size has √3 size, a capsule
  // (radius ≤ 0.6 size, half height ≤ size) 1.6 size, a sphere size; pitch leaves 0.1 size between
  // bounding spheres, so no two bodies touch
  const pitch = 2 * Math.sqrt(3) * size + 0.1 * size;
  // about four layers: k = ⌈√(count/4)⌉
  const perRow = Math.max(1, Math.ceil(Math.sqrt(count / 4)));
  return { perRow, pitch, side: perRow * pitch };
}

export const rain: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.count + 5, constraints: 0 }),
  name: 'rain',
  description: 'many mixed shapes (sphere, box, capsule in turn) of random size, orientation and density falling into a box of five planes',
  params: {
    count: { default: 1000, min: 1, integer: true, help: 'falling bodies' },
    // its thinnest body, a capsule of radius 0.2·size, is 0.4·size across; its widest least extent, a
    // sphere of radius size, 2·size: both within the contact code's 1 cm to 10 m (model/ranges.ts)
    size: {
      default: 0.15,
      min: CONTACT_SIZE_RANGE.min! / 0.4,
      max: CONTACT_SIZE_RANGE.max! / 2,
      help: 'largest sphere radius, box half extent or capsule half height, m (each random in [size/3, size]; capsule radius in [0.2, 0.6]·size)',
      why: 'its bodies, 0.4·size to 2·size across, must stay within the 1 cm to 10 m the contact code supports',
    },
    height: { default: 1, min: 0, help: "the lowest layer's centres above the ground, beyond the pitch/2 clearance, m" },
    seed: seedParam,
  },
  build(p): WorldDesc {
    const S = p.size;
    const { perRow, pitch, side } = rainLayout(p.count, S);
    const rand = prng(p.seed);
    const u = (lo: number, hi: number) => lo + (hi - lo) * rand();
    const bodies: BodyDesc[] = openBox(side);
    // grid centres at (ix − (k−1)/2) pitch: pitch/2 from the walls at ±k pitch/2, more than any
    // bounding radius; layer m at y = height + pitch/2 + m pitch
    for (let i = 0; i < p.count; i++) {
      const layer = Math.floor(i / (perRow * perRow)), inLayer = i % (perRow * perRow);
      const ix = inLayer % perRow, iz = Math.floor(inLayer / perRow);
      const position: Vec3 = [z0((ix - (perRow - 1) / 2) * pitch), p.height + pitch / 2 + layer * pitch, z0((iz - (perRow - 1) / 2) * pitch)];
      const kind = i % 3;
      const shape =
        kind === 0
          ? { type: 'sphere' as const, radius: u(S / 3, S) }
          : kind === 1
            ? { type: 'box' as const, halfExtents: [u(S / 3, S), u(S / 3, S), u(S / 3, S)] as Vec3 }
            : { type: 'capsule' as const, radius: u(0.2 * S, 0.6 * S), halfHeight: u(S / 3, S) };
      bodies.push({ shape, density: u(500, 1500), position, orientation: randomQuat(rand) });
    }
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

/** Every stress scene, in the order the registry lists them. */
export const stressScenes: RigidSceneInfo[] = [confined, cardHouse, domino, newtonsCradle, rain];
