/**
 * Scenes of contacts: boxes and spheres on a ground, 3-D versions of the classic contact tests
 * (the kinds of problem Solver2D compares its solvers on). Every scene's body 0 is the ground, a
 * fixed plane through the origin with normal +y (the half-space y ≤ 0); `collisions` is on; density
 * 1000 kg/m³; gravity 9.81 m/s² down. Bodies start at rest unless a scene says otherwise, touching
 * what they rest on exactly (zero separation) and overlapping nothing, except overlap-recovery's
 * intended overlaps.
 *
 *   single-box        one box dropped flat from `height` above the ground
 *   vertical-stack    `boxes` boxes stacked face on face, each shifted ±`offset` along x (alternating)
 *   pyramid           a 2-D pyramid (rows along x, one box deep in z), `base` boxes in its bottom row
 *   friction-ramp     a ramp (a fixed plane tilted by `angle` about z) with five boxes resting on it,
 *                     pair friction 0.75, 0.5, 0.35, 0.1, 0: those with μ > tan(angle) stay, the others slide
 *   restitution       five spheres dropped on the ground, pair restitution 0, 0.25, 0.5, 0.75, 1:
 *                     each rebounds to e²·`height`
 *   overlap-recovery  a stack of boxes created overlapping the one below by `overlap` of their height
 *   heavy-on-light    a wide box `ratio` times as heavy as each of the two small boxes it rests on
 *   rolling           a sphere launched sliding along x without spin: friction makes it roll
 *
 * Pair coefficients (schema.ts): μ = √(μA μB), e = max(eA, eB).
 */
import type { BodyDesc, Quat, Vec3, WorldDesc } from '../model/world.js';
import { defineScene, type ParamSpec, type RigidSceneInfo } from './scene.js';
import { CONTACT_SIZE_RANGE, FRICTION_RANGE } from '../model/ranges.js';

const GRAVITY: Vec3 = [0, -9.81, 0];
const DENSITY = 1000;

/** The ground: a fixed plane at y = 0, outward normal +y (identity orientation), body 0 of every scene. */
function ground(material: { friction?: number; restitution?: number } = {}): BodyDesc {
  return { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], ...material };
}

/** A cube of half extent `h`, density 1000, at rest at `position`. */
function cube(h: number, position: Vec3, extra: Partial<BodyDesc> = {}): BodyDesc {
  return { shape: { type: 'box', halfExtents: [h, h, h] }, density: DENSITY, position, ...extra };
}

/**
 * A half extent or radius of a body that collides: half the contact code's supported sizes
 * (model/ranges.ts CONTACT_SIZE_RANGE, a least extent of 1 cm to 10 m), 5 mm to 5 m.
 */
export function contactHalfSize(default_: number, help: string): ParamSpec {
  return { default: default_, min: CONTACT_SIZE_RANGE.min! / 2, max: CONTACT_SIZE_RANGE.max! / 2, help, why: 'the contact code supports bodies of 1 cm to 10 m' };
}
/** A friction coefficient (model/ranges.ts FRICTION_RANGE). */
export function frictionParam(default_: number, help: string): ParamSpec {
  return { default: default_, ...FRICTION_RANGE, help };
}

const sizeParam = contactHalfSize(0.5, 'half extent of each box, m');

export const singleBox: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: () => ({ bodies: 2, constraints: 0 }),
  name: 'single-box',
  description: 'one box dropped flat onto the ground from a small height: does it land and stay at rest, without bouncing or sinking',
  params: {
    size: sizeParam,
    height: { default: 1, min: 0, help: "drop height: from the ground to the box's bottom face, m" },
  },
  build(p): WorldDesc {
    // bottom face at y = height: centre one half extent above it
    return { gravity: GRAVITY, collisions: true, bodies: [ground(), cube(p.size, [0, p.height + p.size, 0])], constraints: [] };
  },
});

export const verticalStack: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.boxes + 1, constraints: 0 }),
  name: 'vertical-stack',
  // built at rest: after a second of settling (contacts' slop taken up) nothing should move (the piles tests' window)
  restsAfter: 1,
  description: 'a tall stack of boxes face on face, alternately shifted a little along x: does it stand still',
  params: {
    boxes: { default: 15, min: 1, integer: true, help: 'boxes in the stack' },
    size: sizeParam,
    offset: { default: 0.01, min: 0, help: 'each box shifted this far along x, +x and −x alternately (box 0 at +x), m (below size/2)' },
    gap: { default: 0, min: 0, help: 'vertical gap between a box and the one below (and the ground), m (0: resting face on face)' },
  },
  // neighbours are shifted +offset and −offset: a box's centre stands 2·offset from the centre of the
  // one below, whose top face reaches `size` either side of its centre; the boxes above a box alternate
  // about x = 0, so their centre of mass too lies within 2·offset of it. Below 2·offset < size every
  // box's load falls inside its support; at 2·offset ≥ size it falls at or beyond the edge and the stack
  // cannot stand (at offset ≥ size a box does not even rest on the one below).
  check: (p) => (2 * p.offset < p.size ? null : { param: 'offset', problem: `must be below size/2 = ${p.size / 2} m, got ${p.offset} (a box's centre stands 2·offset from the one below, beyond the edge of its support at 2·offset ≥ size)` }),
  build(p): WorldDesc {
    const h = p.size;
    const bodies: BodyDesc[] = [ground()];
    // box i: bottom face at i (2h + gap) + gap, so centre y = h + gap + i (2h + gap). The alternating
    // shift puts every box's centre 2·offset from the centre of the one below; with 2·offset < h (the
    // scene's check) each box's weight (and the stack's above it) falls inside its support, so the
    // stack can stand still; the shift only breaks the symmetry a perfect column has.
    for (let i = 0; i < p.boxes; i++) bodies.push(cube(h, [i % 2 === 0 ? p.offset : 0 - p.offset, h + p.gap + i * (2 * h + p.gap), 0]));
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

export const pyramid: RigidSceneInfo = defineScene({
  kind: 'rigid',
  // rows of base, base − 1, …, 1 boxes: base (base + 1)/2 of them, and the ground
  count: (p) => ({ bodies: (p.base * (p.base + 1)) / 2 + 1, constraints: 0 }),
  name: 'pyramid',
  // built at rest: after a second of settling (contacts' slop taken up) nothing should move (the piles tests' window)
  restsAfter: 1,
  description: 'a 2-D pyramid of boxes (rows along x, one box deep): each box rests on two below; many contacts, deep load paths',
  params: {
    base: { default: 20, min: 1, integer: true, help: 'boxes in the bottom row' },
    size: sizeParam,
    gap: { default: 0.01, min: 0, help: 'horizontal gap between neighbouring boxes of a row, m (rows rest face on face; below 2·size)' },
    friction: frictionParam(0.6, 'friction coefficient of the ground and of every box (so of every pair)'),
  },
  // a box of row r + 1 is centred over the gap between two boxes of row r, whose near edges stand gap/2
  // either side of that centre: its bottom face (half width `size`) rests on both only while gap/2 < size
  check: (p) => (p.gap < 2 * p.size ? null : { param: 'gap', problem: `must be below 2·size = ${2 * p.size} m, got ${p.gap} (a box of the row above is centred over the gap and falls through it)` }),
  build(p): WorldDesc {
    const h = p.size, pitch = 2 * h + p.gap;
    const bodies: BodyDesc[] = [ground({ friction: p.friction })];
    // row r (0 at the bottom) holds base − r boxes centred on x = 0, pitch apart; its boxes sit over
    // the gaps of row r − 1 (half a pitch in), their bottom faces on its top faces: y = h + 2hr
    for (let r = 0; r < p.base; r++) {
      const n = p.base - r;
      for (let k = 0; k < n; k++) bodies.push(cube(h, [(k - (n - 1) / 2) * pitch, h + 2 * h * r, 0], { friction: p.friction }));
    }
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

/** The five boxes' pair friction coefficients on the ramp, in order along +z. */
export const RAMP_FRICTIONS = [0.75, 0.5, 0.35, 0.1, 0] as const;

export const frictionRamp: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: () => ({ bodies: 2 + RAMP_FRICTIONS.length, constraints: 0 }),
  name: 'friction-ramp',
  description: 'five boxes resting on a ramp, pair friction 0.75, 0.5, 0.35, 0.1, 0: those with μ > tan(angle) stay put, the others slide down onto the ground',
  params: {
    angle: { default: 0.25, min: 0, max: 1.5, help: "the ramp's slope, rad (tan 0.25 = 0.255: the boxes with μ 0.1 and 0 slide)" },
    size: sizeParam,
    distance: { default: 4, min: 0, help: "along the slope from the ramp's foot (the line x = y = 0) to each box's centre, m (≥ size keeps the boxes off the ground)" },
  },
  // each box's bottom face spans distance ± size along the slope from the foot: below distance = size
  // its lower edge lies past the foot, below the ground plane (y < 0): the box starts inside the ground
  check: (p) => (p.distance >= p.size ? null : { param: 'distance', problem: `must be ≥ size = ${p.size} m, got ${p.distance} (a box's lower edge would start past the ramp's foot, inside the ground)` }),
  build(p): WorldDesc {
    const th = p.angle, h = p.size;
    // The ramp: a plane through the origin turned by θ about z, q = [0, 0, sin θ/2, cos θ/2]. It takes
    // local +x to t = (cos θ, sin θ, 0) (up the slope) and its normal, local +y, to n = (−sin θ, cos θ, 0).
    // For x > 0 it stands above the ground (y = x tan θ), for x < 0 below it: a box sliding down
    // passes onto the ground at x = 0.
    const q: Quat = [0, 0, Math.sin(th / 2), Math.cos(th / 2)];
    const t: Vec3 = [Math.cos(th), Math.sin(th), 0];
    const n: Vec3 = [0 - Math.sin(th), Math.cos(th), 0];
    // Pair μ = √(μ_ramp μ_box): with the ramp's (and the ground's) μ = 1 and each box's μ = μ², the
    // pair takes √(μ²) = μ, exactly in floating point (a correctly rounded √ of a correctly rounded
    // square gives back μ), so the pairs hold the listed values.
    const bodies: BodyDesc[] = [ground({ friction: 1 }), { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], orientation: q, friction: 1 }];
    // each box turned with the ramp, its bottom face on it: centre = distance·t + h·n; 2 box widths
    // apart along z (a gap of 2h between neighbours) so that none touches another
    const pitch = 4 * h;
    RAMP_FRICTIONS.forEach((mu, k) => {
      const centre: Vec3 = [p.distance * t[0] + h * n[0], p.distance * t[1] + h * n[1], (k - (RAMP_FRICTIONS.length - 1) / 2) * pitch];
      bodies.push(cube(h, centre, { orientation: [...q], friction: mu * mu }));
    });
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

/** The five spheres' coefficients of restitution, in order along +x. */
export const SPHERE_RESTITUTIONS = [0, 0.25, 0.5, 0.75, 1] as const;

export const restitution: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: () => ({ bodies: 1 + SPHERE_RESTITUTIONS.length, constraints: 0 }),
  name: 'restitution',
  description: 'five spheres, restitution 0, 0.25, 0.5, 0.75, 1, dropped on the ground: each should rebound to e² times the drop height',
  params: {
    radius: contactHalfSize(0.5, 'sphere radius, m'),
    height: { default: 2, min: 0, help: "drop height: from the ground to each sphere's lowest point, m" },
  },
  build(p): WorldDesc {
    const r = p.radius;
    // ground e = 0, so the pair takes max(0, e) = the sphere's e. A sphere dropped from rest hits at
    // v = √(2 g H) and leaves at e v, so it rises to (e v)²/(2g) = e² H.
    const bodies: BodyDesc[] = [ground({ restitution: 0 })];
    // 4 r apart along x: a gap of one diameter, and they fall straight down
    SPHERE_RESTITUTIONS.forEach((e, k) =>
      bodies.push({ shape: { type: 'sphere', radius: r }, density: DENSITY, position: [(k - (SPHERE_RESTITUTIONS.length - 1) / 2) * 4 * r, p.height + r, 0], restitution: e }),
    );
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

export const overlapRecovery: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: (p) => ({ bodies: p.boxes + 1, constraints: 0 }),
  name: 'overlap-recovery',
  description: 'a stack of boxes created each overlapping the one below by a quarter of its height: how gently a solver pushes them apart',
  params: {
    boxes: { default: 4, min: 1, integer: true, help: 'boxes in the stack' },
    size: sizeParam,
    overlap: { default: 0.25, min: 0, max: 0.9, help: "each box's overlap with the one below, as a fraction of the box's height 2·size" },
  },
  build(p): WorldDesc {
    const h = p.size;
    // the bottom box rests on the ground (no overlap there); box i's centre stands 2h (1 − overlap)
    // above box i − 1's, so each pair of neighbours overlaps by 2h − 2h (1 − overlap) = 2h·overlap.
    // At rest, without overlaps, the stack would be 2h·boxes tall: the recovery lifts its top by
    // 2h·overlap·(boxes − 1).
    const bodies: BodyDesc[] = [ground()];
    for (let i = 0; i < p.boxes; i++) bodies.push(cube(h, [0, h + i * 2 * h * (1 - p.overlap), 0]));
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

export const heavyOnLight: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: () => ({ bodies: 4, constraints: 0 }),
  name: 'heavy-on-light',
  description: 'a wide box `ratio` times as heavy as each of the two small boxes it rests on (a large mass ratio across contacts)',
  params: {
    // beyond 1/u = 9e15 (f64's unit roundoff u = 2⁻⁵³) the light boxes' share of a contact's effective mass, 1/m_light + 1/m_heavy, rounds away
    ratio: { default: 100, min: 1e-6, max: 1e15, help: 'heavy box mass / the mass of each light box', why: "beyond 1e15 the heavy box's share of a contact's effective mass rounds away in f64" },
    size: contactHalfSize(0.5, 'half extent of each light box (the heavy one is 3·size × size × size), m'),
  },
  build(p): WorldDesc {
    const s = p.size;
    // light cubes (half extent s, density 1000, mass 1000·(2s)³) centred at x = ±2s on the ground:
    // they span |x| in [s, 3s]. The heavy box, half extents (3s, s, s), spans |x| ≤ 3s and rests on
    // both, its bottom face (y = 2s) on their top faces; its mass is given: ratio × a light box's.
    const lightMass = DENSITY * 8 * s * s * s;
    const bodies: BodyDesc[] = [
      ground(),
      cube(s, [0 - 2 * s, s, 0]),
      cube(s, [2 * s, s, 0]),
      { shape: { type: 'box', halfExtents: [3 * s, s, s] }, mass: p.ratio * lightMass, position: [0, 3 * s, 0] },
    ];
    return { gravity: GRAVITY, collisions: true, bodies, constraints: [] };
  },
});

export const rolling: RigidSceneInfo = defineScene({
  kind: 'rigid',
  count: () => ({ bodies: 2, constraints: 0 }),
  name: 'rolling',
  description: 'a sphere on the ground launched sliding along x without spin: friction slows it and spins it up until it rolls at 5/7 of the launch speed',
  params: {
    radius: contactHalfSize(0.5, 'sphere radius, m'),
    speed: { default: 5, help: 'launch speed along x, m/s' },
    friction: frictionParam(0.3, 'friction coefficient of the ground and of the sphere (so of the pair)'),
  },
  build(p): WorldDesc {
    // Sliding, kinetic friction μ m g decelerates the centre, dv/dt = −μ g, and spins the sphere up,
    // dω/dt = μ m g r / (2/5 m r²) = 5 μ g / (2 r). Rolling (v = ω r) begins at t = 2 v₀ / (7 μ g),
    // at v = 5/7 v₀, and then friction stops acting. Pair μ = √(μ μ) = μ.
    const r = p.radius;
    return {
      gravity: GRAVITY,
      collisions: true,
      bodies: [
        ground({ friction: p.friction }),
        { shape: { type: 'sphere', radius: r }, density: DENSITY, position: [0, r, 0], linearVelocity: [p.speed, 0, 0], angularVelocity: [0, 0, 0], friction: p.friction },
      ],
      constraints: [],
    };
  },
});

/** Every contact scene, in the order the registry lists them. */
export const contactScenes: RigidSceneInfo[] = [singleBox, verticalStack, pyramid, frictionRamp, restitution, overlapRecovery, heavyOnLight, rolling];
