/**
 * The contact scenes start where their descriptions say: on a ground plane at y = 0, at rest
 * (rolling's sphere aside), touching what they rest on and overlapping nothing (but the overlaps
 * overlap-recovery means), with the pair friction and restitution the combine rules (μ = √(μA μB),
 * e = max(eA, eB)) give; and the joint scenes keep collisions off unless asked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findRigidScene, rigidScenes, scenes } from '../src/scenes/registry.js';
import { contactScenes, RAMP_FRICTIONS, SPHERE_RESTITUTIONS } from '../src/scenes/contact-scenes.js';
import { validateWorld, massProperties, type BodyDesc, type WorldDesc } from '../src/model/world.js';
import { parseSceneFile, sceneFileJson } from '../src/model/schema.js';
import { resolveParams } from '../src/scenes/scene.js';

type V = [number, number, number];
const EPS = Number.EPSILON;
const CONTACT = ['single-box', 'vertical-stack', 'pyramid', 'friction-ramp', 'restitution', 'overlap-recovery', 'heavy-on-light', 'rolling'];
const JOINT = ['necklace', 'pendulum', 'hanging-chain', 'long-chain', 'high-mass-ratio', 'stretched-chain', 'joint-grid', 'far-from-origin', 'spring', 'hinge-chain', 'cantilever', 'rope-swing'];
/** small versions of the big joint scenes */
const SMALL: Record<string, Record<string, number>> = { necklace: { chains: 2, beads: 3 }, 'far-from-origin': { chains: 2, beads: 3 }, 'long-chain': { beads: 5 }, 'joint-grid': { columns: 3, rows: 2 } };

/** Other parameter sets of each contact scene (the defaults are always tried too). */
const OTHERS: Record<string, Record<string, number>[]> = {
  'single-box': [{ size: 0.2, height: 0.3 }, { height: 0 }],
  'vertical-stack': [{ boxes: 1 }, { boxes: 6, offset: 0.1, gap: 0.003, size: 0.25 }],
  pyramid: [{ base: 1 }, { base: 5, gap: 0, friction: 0.2 }, { base: 7, size: 0.3, gap: 0.05 }],
  'friction-ramp': [{ angle: 0 }, { angle: 0.6, size: 0.2, distance: 2 }, { angle: 1.5, distance: 0.5 }],
  restitution: [{ radius: 0.1, height: 0 }, { radius: 1, height: 5 }],
  'overlap-recovery': [{ boxes: 1 }, { boxes: 7, overlap: 0.5, size: 0.3 }, { overlap: 0 }],
  'heavy-on-light': [{ ratio: 1 }, { ratio: 1e4, size: 0.1 }],
  rolling: [{ speed: 0 }, { speed: -3, radius: 0.2, friction: 1 }],
};

// ---- geometry: rotations, distances to planes, overlaps --------------------------------------

const dot = (a: number[], b: number[]) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const sub = (a: number[], b: number[]): V => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];

/** v rotated by the unit quaternion q = [x, y, z, w] (normalised here): v + 2w (u × v) + 2 u × (u × v). */
function rotate(q: number[] | undefined, v: number[]): V {
  const [x0, y0, z0, w0] = q ?? [0, 0, 0, 1];
  const s = Math.hypot(x0, y0, z0, w0);
  const [x, y, z, w] = [x0 / s, y0 / s, z0 / s, w0 / s];
  const tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

/** the body's local axes in the world */
const axes = (b: BodyDesc): V[] => [rotate(b.orientation, [1, 0, 0]), rotate(b.orientation, [0, 1, 0]), rotate(b.orientation, [0, 0, 1])];

/** A plane body's outward unit normal (its local +y) and a point on it (its position). */
const planeOf = (b: BodyDesc) => ({ n: rotate(b.orientation, [0, 1, 0]), p: b.position });

/**
 * Signed distance from a plane to a body's lowest point along the plane's normal (< 0: the body
 * reaches into the half-space): n·(c − p) − the body's support along −n. A box's support along a
 * unit u is Σ_i h_i |u·e_i| (e_i its axes), a sphere's its radius.
 */
function clearance(body: BodyDesc, plane: BodyDesc): number {
  const { n, p } = planeOf(plane);
  const centre = dot(n, sub(body.position, p));
  const sh = body.shape;
  if (sh.type === 'sphere') return centre - sh.radius;
  if (sh.type === 'box') return centre - axes(body).reduce((s, e, i) => s + sh.halfExtents[i] * Math.abs(dot(n, e)), 0);
  throw new Error(`no clearance for a ${sh.type}`);
}

/**
 * How deep two bodies overlap (≤ 0: they do not). Spheres: r_A + r_B − |c_A − c_B|. Boxes turned
 * alike (every pair of boxes in these scenes): in their shared frame they are aligned boxes, which
 * overlap by min over the axes e_i of (h_Ai + h_Bi − |d·e_i|), d the centres' difference.
 */
function overlap(a: BodyDesc, b: BodyDesc): number {
  const d = sub(b.position, a.position);
  if (a.shape.type === 'sphere' && b.shape.type === 'sphere') return a.shape.radius + b.shape.radius - Math.hypot(...d);
  if (a.shape.type === 'box' && b.shape.type === 'box') {
    const ea = axes(a), eb = axes(b);
    for (let i = 0; i < 3; i++) assert.ok(Math.hypot(...sub(ea[i], eb[i])) <= 4 * EPS, 'boxes turned alike');
    const ha = a.shape.halfExtents, hb = b.shape.halfExtents;
    return Math.min(...ea.map((e, i) => ha[i] + hb[i] - Math.abs(dot(d, e))));
  }
  throw new Error(`no overlap test for ${a.shape.type} and ${b.shape.type}`);
}

/** Rounding scale of a world's coordinates: a few ε of its largest coordinate plus size (m). */
function roundoff(world: WorldDesc): number {
  let L = 1;
  for (const b of world.bodies) {
    const sh = b.shape;
    const size = sh.type === 'sphere' ? sh.radius : sh.type === 'box' ? Math.hypot(...sh.halfExtents) : 0;
    L = Math.max(L, ...b.position.map((x) => Math.abs(x) + size));
  }
  // positions and corners are sums of a handful of rounded products, each within ε of its size
  return 16 * EPS * L;
}

const pairFriction = (a: BodyDesc, b: BodyDesc) => Math.sqrt((a.friction ?? 0.6) * (b.friction ?? 0.6));
const pairRestitution = (a: BodyDesc, b: BodyDesc) => Math.max(a.restitution ?? 0, b.restitution ?? 0);
const build = (name: string, given: Record<string, number> = {}) => {
  const scene = findRigidScene(name)!;
  return { world: scene.build(given), p: resolveParams(scene, given) };
};

// ---- every contact scene --------------------------------------------------------------------

test('the contact scenes are registered once each, as rigid scenes, with help for every parameter and defaults in range', () => {
  assert.deepEqual(contactScenes.map((s) => s.name), CONTACT);
  for (const name of CONTACT) {
    assert.equal(scenes.filter((s) => s.name === name).length, 1, name);
    assert.equal(rigidScenes.filter((s) => s.name === name).length, 1, name);
    const scene = findRigidScene(name)!;
    assert.ok(scene.description.length > 30, `${name}: a description`);
    assert.ok(Object.keys(scene.params).length >= 1, name);
    for (const [k, spec] of Object.entries(scene.params)) {
      assert.ok(spec.help.length > 5, `${name}.${k}: help`);
      if (spec.min !== undefined) assert.ok(spec.default >= spec.min, `${name}.${k}`);
      if (spec.max !== undefined) assert.ok(spec.default <= spec.max, `${name}.${k}`);
      if (spec.integer) assert.ok(Number.isInteger(spec.default), `${name}.${k}`);
    }
  }
});

test('every contact scene validates, counts what it builds, stands on the ground plane with collisions on, and its bodies start apart from each other and the planes', () => {
  for (const name of CONTACT)
    for (const given of [{}, ...OTHERS[name]]) {
      const what = `${name} ${JSON.stringify(given)}`;
      const { world } = build(name, given);
      validateWorld(world);
      const count = findRigidScene(name)!.count(given);
      assert.deepEqual([count.bodies, count.constraints], [world.bodies.length, world.constraints.length], what);
      assert.equal(world.constraints.length, 0, what);
      assert.equal(world.collisions, true, what);
      assert.deepEqual(world.gravity, [0, -9.81, 0], what);
      // body 0: the ground, a fixed plane through the origin, normal +y
      const g = world.bodies[0];
      assert.equal(g.shape.type, 'plane', what);
      assert.equal(g.fixed, true, what);
      assert.deepEqual(g.position, [0, 0, 0], what);
      assert.deepEqual(planeOf(g).n, [0, 1, 0], what);
      const tol = roundoff(world);
      const planes = world.bodies.filter((b) => b.shape.type === 'plane');
      const moving = world.bodies.filter((b) => !b.fixed);
      assert.equal(planes.length + moving.length, world.bodies.length, `${what}: only planes are fixed`);
      for (const b of moving) {
        if (b.mass === undefined) assert.equal(b.density, 1000, `${what}: density 1000 (heavy-on-light's heavy box has its mass given)`);
        if (name !== 'rolling') {
          assert.deepEqual(b.linearVelocity ?? [0, 0, 0], [0, 0, 0], `${what}: at rest`);
          assert.deepEqual(b.angularVelocity ?? [0, 0, 0], [0, 0, 0], `${what}: at rest`);
        }
        for (const pl of planes) assert.ok(clearance(b, pl) >= -tol, `${what}: a body reaches ${-clearance(b, pl)} m into a plane`);
      }
      if (name === 'overlap-recovery') continue; // its own test: the overlaps are the point
      for (let i = 0; i < moving.length; i++)
        for (let j = i + 1; j < moving.length; j++) assert.ok(overlap(moving[i], moving[j]) <= tol, `${what}: bodies ${i + 1} and ${j + 1} overlap by ${overlap(moving[i], moving[j])} m`);
    }
});

test('every contact scene and every joint scene is the same world after export and import', () => {
  for (const scene of rigidScenes) {
    if (!CONTACT.includes(scene.name) && !JOINT.includes(scene.name)) continue;
    for (const given of [SMALL[scene.name] ?? {}, ...(OTHERS[scene.name] ?? [])]) {
      const world = scene.build(given);
      const params = resolveParams(scene, given);
      const text = sceneFileJson(world, { name: scene.name, description: scene.description, params });
      const back = parseSceneFile(text);
      assert.deepStrictEqual(back.world, world, `${scene.name} ${JSON.stringify(given)}`);
      assert.deepStrictEqual(back.file.params, params);
      assert.equal(back.file.collisions, world.collisions);
    }
  }
});

// ---- each contact scene's own facts ---------------------------------------------------------

test('single-box: one box of half extent `size`, its bottom face `height` above the ground', () => {
  for (const given of [{}, ...OTHERS['single-box']]) {
    const { world, p } = build('single-box', given);
    assert.equal(world.bodies.length, 2);
    const box = world.bodies[1];
    assert.deepEqual(box.shape, { type: 'box', halfExtents: [p.size, p.size, p.size] });
    assert.ok(Math.abs(clearance(box, world.bodies[0]) - p.height) <= roundoff(world), `${clearance(box, world.bodies[0])} vs ${p.height}`);
  }
});

test('vertical-stack: `boxes` boxes one above the other, `gap` apart, shifted ±`offset` alternately', () => {
  for (const given of [{}, ...OTHERS['vertical-stack']]) {
    const { world, p } = build('vertical-stack', given);
    const boxes = world.bodies.slice(1);
    assert.equal(boxes.length, p.boxes);
    const tol = roundoff(world);
    assert.ok(Math.abs(clearance(boxes[0], world.bodies[0]) - p.gap) <= tol, 'the bottom box is `gap` above the ground');
    boxes.forEach((b, i) => {
      assert.equal(b.position[0], i % 2 === 0 ? p.offset : -p.offset, `box ${i}: x`);
      assert.equal(b.position[2], 0);
      if (i === 0) return;
      // bottom face of box i to top face of box i − 1
      const below = boxes[i - 1];
      assert.ok(Math.abs(b.position[1] - p.size - (below.position[1] + p.size) - p.gap) <= tol, `box ${i}: gap`);
    });
  }
  // the defaults: 15 boxes of 1 m, shifted 1 cm, face on face
  const { world } = build('vertical-stack');
  assert.equal(world.bodies.length, 16);
  assert.equal(world.bodies[2].position[0], -0.01);
});

test('pyramid: base 5 makes 5 + 4 + 3 + 2 + 1 = 15 boxes and the ground; each box above the bottom row rests on two below', () => {
  assert.equal(build('pyramid', { base: 5 }).world.bodies.length, 15 + 1);
  assert.equal(findRigidScene('pyramid')!.count({ base: 5 }).bodies, 16);
  assert.equal(build('pyramid').world.bodies.length, 210 + 1); // base 20: 20·21/2
  for (const given of [{}, ...OTHERS.pyramid]) {
    const { world, p } = build('pyramid', given);
    const h = p.size, tol = roundoff(world);
    const boxes = world.bodies.slice(1);
    for (const b of world.bodies) assert.equal(b.friction, p.friction, 'every body has the given μ');
    // rows by height: row r holds base − r boxes, its bottom face at 2hr
    const rows = new Map<number, BodyDesc[]>();
    for (const b of boxes) {
      const r = Math.round((b.position[1] - h) / (2 * h));
      assert.ok(Math.abs(b.position[1] - h - 2 * h * r) <= tol, 'rows face on face');
      assert.equal(b.position[2], 0, 'one box deep');
      rows.set(r, [...(rows.get(r) ?? []), b]);
    }
    for (let r = 0; r < p.base; r++) {
      const row = rows.get(r)!.map((b) => b.position[0]).sort((a, b) => a - b);
      assert.equal(row.length, p.base - r, `row ${r}`);
      for (let k = 1; k < row.length; k++) assert.ok(Math.abs(row[k] - row[k - 1] - (2 * h + p.gap)) <= tol, `row ${r}: pitch`);
      assert.ok(Math.abs(row[0] + row[row.length - 1]) <= tol, `row ${r}: centred on x = 0`);
      if (r === 0) continue;
      // each box's bottom face overlaps the top faces of exactly two boxes of the row below
      for (const x of row) {
        const under = rows.get(r - 1)!.filter((b) => Math.abs(b.position[0] - x) < 2 * h - tol);
        assert.equal(under.length, 2, `row ${r}, x = ${x}`);
      }
    }
  }
});

test('friction-ramp: five boxes lie on the tilted plane, turned with it, the pair μ with the ramp 0.75, 0.5, 0.35, 0.1, 0', () => {
  assert.deepEqual([...RAMP_FRICTIONS], [0.75, 0.5, 0.35, 0.1, 0]);
  for (const given of [{}, ...OTHERS['friction-ramp']]) {
    const { world, p } = build('friction-ramp', given);
    const tol = roundoff(world);
    const [ground, ramp, ...boxes] = world.bodies;
    assert.equal(ramp.shape.type, 'plane');
    assert.equal(ramp.fixed, true);
    // the ramp's normal is +y turned by `angle` about z: (−sin θ, cos θ, 0)
    const { n } = planeOf(ramp);
    const expected = [-Math.sin(p.angle), Math.cos(p.angle), 0];
    for (let i = 0; i < 3; i++) assert.ok(Math.abs(n[i] - expected[i]) <= 4 * EPS, `normal ${n}`);
    assert.equal(boxes.length, 5);
    boxes.forEach((b, k) => {
      // the pair's μ by the combine rule, with the ramp and with the ground (where the box slides to)
      assert.equal(pairFriction(ramp, b), RAMP_FRICTIONS[k], `box ${k}: pair μ on the ramp`);
      assert.equal(pairFriction(ground, b), RAMP_FRICTIONS[k], `box ${k}: pair μ on the ground`);
      // resting on the ramp: its local y is the ramp's normal and its bottom face lies on the plane
      const [, ey] = axes(b);
      for (let i = 0; i < 3; i++) assert.ok(Math.abs(ey[i] - n[i]) <= 4 * EPS, `box ${k} turned with the ramp`);
      assert.ok(Math.abs(clearance(b, ramp)) <= tol, `box ${k}: ${clearance(b, ramp)} m off the ramp`);
      // `distance` up the slope t = (cos θ, sin θ, 0) from the foot
      assert.ok(Math.abs(b.position[0] * Math.cos(p.angle) + b.position[1] * Math.sin(p.angle) - p.distance) <= tol, `box ${k}: distance`);
    });
  }
  // at the default 0.25 rad, tan θ = 0.2553: three boxes hold (μ > tan θ), two slide
  const { world, p } = build('friction-ramp');
  const holds = world.bodies.slice(2).filter((b) => pairFriction(world.bodies[1], b) > Math.tan(p.angle));
  assert.equal(holds.length, 3);
});

test('restitution: five spheres of `radius`, pair e with the ground 0, 0.25, 0.5, 0.75, 1, their lowest points `height` up, side by side', () => {
  assert.deepEqual([...SPHERE_RESTITUTIONS], [0, 0.25, 0.5, 0.75, 1]);
  for (const given of [{}, ...OTHERS.restitution]) {
    const { world, p } = build('restitution', given);
    const [ground, ...spheres] = world.bodies;
    assert.equal(spheres.length, 5);
    spheres.forEach((s, k) => {
      assert.deepEqual(s.shape, { type: 'sphere', radius: p.radius });
      assert.equal(pairRestitution(ground, s), SPHERE_RESTITUTIONS[k], `sphere ${k}: pair e`);
      assert.ok(Math.abs(clearance(s, ground) - p.height) <= roundoff(world), `sphere ${k}: height`);
      if (k > 0) assert.ok(spheres[k].position[0] > spheres[k - 1].position[0], 'in order along x');
    });
  }
});

test('overlap-recovery: each box overlaps the one below by `overlap` of its height, no other pair overlaps, the bottom one rests on the ground', () => {
  for (const given of [{}, ...OTHERS['overlap-recovery']]) {
    const { world, p } = build('overlap-recovery', given);
    const boxes = world.bodies.slice(1);
    const tol = roundoff(world);
    assert.equal(boxes.length, p.boxes);
    assert.ok(Math.abs(clearance(boxes[0], world.bodies[0])) <= tol, 'the bottom box on the ground, not in it');
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const depth = overlap(boxes[i], boxes[j]);
        // neighbours: depth = overlap × the box height 2·size (the default: 25 % of 1 m)
        if (j === i + 1) assert.ok(Math.abs(depth - p.overlap * 2 * p.size) <= tol, `boxes ${i}, ${j}: ${depth} m`);
        else if (p.overlap <= 0.5) assert.ok(depth <= tol, `boxes ${i}, ${j} overlap by ${depth} m`);
      }
  }
  assert.ok(Math.abs(overlap(build('overlap-recovery').world.bodies[1], build('overlap-recovery').world.bodies[2]) - 0.25) <= 16 * EPS);
});

test('heavy-on-light: the wide box is `ratio` times as heavy as each light box and rests on both', () => {
  for (const given of [{}, ...OTHERS['heavy-on-light']]) {
    const { world, p } = build('heavy-on-light', given);
    const [, l1, l2, heavy] = world.bodies;
    const tol = roundoff(world);
    const mLight = massProperties(l1).mass;
    assert.equal(massProperties(l2).mass, mLight);
    const ratio = massProperties(heavy).mass / mLight;
    assert.ok(Math.abs(ratio - p.ratio) <= 4 * EPS * p.ratio, `mass ratio ${ratio}`);
    // resting on both: its bottom face on their top faces, and it spans both along x
    const sh = heavy.shape as { halfExtents: number[] };
    for (const l of [l1, l2]) {
      const lh = (l.shape as { halfExtents: number[] }).halfExtents;
      assert.ok(Math.abs(heavy.position[1] - sh.halfExtents[1] - (l.position[1] + lh[1])) <= tol, 'face on face');
      assert.ok(Math.abs(l.position[0]) + lh[0] <= Math.abs(heavy.position[0]) + sh.halfExtents[0] + tol, 'the heavy box covers it');
      assert.ok(Math.abs(clearance(l, world.bodies[0])) <= tol, 'the light box on the ground');
    }
    assert.ok(l1.position[0] < 0 && l2.position[0] > 0, 'one on each side of the heavy box’s centre');
  }
});

test('rolling: a sphere on the ground moving at `speed` along x without spin, pair μ = `friction`', () => {
  for (const given of [{}, ...OTHERS.rolling]) {
    const { world, p } = build('rolling', given);
    const [ground, ball] = world.bodies;
    assert.deepEqual(ball.shape, { type: 'sphere', radius: p.radius });
    assert.ok(Math.abs(clearance(ball, ground)) <= roundoff(world), 'touching the ground');
    assert.deepEqual(ball.linearVelocity, [p.speed, 0, 0]);
    assert.deepEqual(ball.angularVelocity ?? [0, 0, 0], [0, 0, 0]);
    assert.equal(pairFriction(ground, ball), p.friction);
  }
});

// ---- the joint scenes -----------------------------------------------------------------------

test('the joint scenes have collisions off unless collisions=1, which changes nothing else', () => {
  for (const name of JOINT) {
    const scene = findRigidScene(name)!;
    assert.deepEqual(scene.params.collisions, { default: 0, integer: true, min: 0, max: 1, help: '1: bodies collide (the reference scene has no contacts)' }, name);
    const off = scene.build(SMALL[name] ?? {});
    const on = scene.build({ ...(SMALL[name] ?? {}), collisions: 1 });
    assert.equal(off.collisions, false, name);
    assert.equal(on.collisions, true, name);
    validateWorld(on);
    assert.deepStrictEqual(on.bodies, off.bodies, name);
    assert.deepStrictEqual(on.constraints, off.constraints, name);
    assert.throws(() => scene.build({ collisions: 2 }), /collisions/);
    assert.throws(() => scene.build({ collisions: 0.5 }), /collisions/);
  }
});
