/**
 * Shapes and the scene format of the new joints.
 *
 * Mass properties of box and capsule (massProperties, src/model/world.ts) against
 *   (a) the analytic formulas and their limits (a capsule of zero half height is a sphere,
 *       2/5 m r²; a capsule of vanishing radius is a thin rod, m L²/12 with L = 2h),
 *   (b) a deterministic slice integration of the capsule (discs of radius ρ(y) along its axis:
 *       dI_axis = dm ρ²/2, dI_transverse = dm (ρ²/4 + y²), dm = density π ρ² dy), composite
 *       Gauss–Legendre, exact to rounding on each polynomial piece,
 *   (c) a seeded Monte Carlo integration over the solid (uniform points in the bounding box with an
 *       inside test): every integral is a sample mean, and its tolerance is 5 standard errors
 *       estimated from the same samples (σ/√N), so the tolerance follows from the sample count.
 * Then the schema: each new shape and joint is accepted, each bad field is refused with one exact
 * line naming its JSON path, by scene files and by validateWorld (library users) alike, and a world
 * holding every shape and joint type survives export → import unchanged.
 * Rapier is handed the principal moments: one short step of a free spinning box and capsule turns
 * ω as Euler's equations say (an isotropic inertia would not turn it at all).
 * Last, the viewer draws each box and capsule where and as its pose says: along a body's rotated
 * long axis the picture is the body's colour inside the shape and not outside it.
 */
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { massProperties, validateWorld, WorldError, type BodyDesc, type Shape, type WorldDesc } from '../src/model/world.js';
import { parseSceneFile, sceneFileJson } from '../src/model/schema.js';
import { mulberry32 } from './support/random.js';
import { acquireGpu } from '../src/gpu/device.js';
import { renderInfo, type Drawable } from '../viewer/render-info.js';
import { Renderer, offscreenTarget } from '../viewer/renderer.js';
import { RapierSolver } from '../src/solvers/rapier/rapier.js';

const at0 = { position: [0, 0, 0] as [number, number, number] };
const tensor = (b: BodyDesc) => massProperties(b).inertiaLocal;

// ---- (a) analytic -------------------------------------------------------------------------------

test('box: mass ρ·8abc and I = m/3 (b² + c²), m/3 (a² + c²), m/3 (a² + b²), diagonal', () => {
  const [a, b, c] = [0.3, 0.5, 1.1], rho = 700;
  const mp = massProperties({ shape: { type: 'box', halfExtents: [a, b, c] }, density: rho, ...at0 });
  const m = rho * 2 * a * 2 * b * 2 * c;
  assert.ok(Math.abs(mp.mass / m - 1) < 1e-15);
  // a box of full edges (2a, 2b, 2c): I_x = m ((2b)² + (2c)²)/12
  const want = [(m * (4 * b * b + 4 * c * c)) / 12, (m * (4 * a * a + 4 * c * c)) / 12, (m * (4 * a * a + 4 * b * b)) / 12];
  const I = mp.inertiaLocal;
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(I[4 * k] / want[k] - 1) < 1e-14, `I[${k}${k}] = ${I[4 * k]}, want ${want[k]}`);
  for (const off of [1, 2, 3, 5, 6, 7]) assert.equal(I[off], 0);
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(mp.inverseInertiaLocal[4 * k] * I[4 * k] - 1) < 1e-15);
  // given the mass instead of the density: the same body
  const byMass = massProperties({ shape: { type: 'box', halfExtents: [a, b, c] }, mass: m, ...at0 }).inertiaLocal;
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(byMass[4 * k] / I[4 * k] - 1) < 1e-14);
  // a cube is isotropic: I = m s²/6 for edge s
  const cube = massProperties({ shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, mass: 6, ...at0 }).inertiaLocal;
  for (const k of [0, 4, 8]) assert.ok(Math.abs(cube[k] - 1) < 1e-15, `cube: ${cube[k]}, want 6·1²/6 = 1`);
});

test('capsule: the limits — no cylinder is a sphere (2/5 m r²), no radius is a thin rod (m (2h)²/12)', () => {
  const sphere = massProperties({ shape: { type: 'sphere', radius: 0.4 }, density: 1000, ...at0 });
  const squat = massProperties({ shape: { type: 'capsule', radius: 0.4, halfHeight: 1e-9 }, density: 1000, ...at0 });
  assert.ok(Math.abs(squat.mass / sphere.mass - 1) < 1e-8, `mass ${squat.mass} vs sphere ${sphere.mass}`);
  for (const k of [0, 4, 8]) assert.ok(Math.abs(squat.inertiaLocal[k] / sphere.inertiaLocal[k] - 1) < 1e-8, `I[${k}] ${squat.inertiaLocal[k]} vs ${sphere.inertiaLocal[k]}`);
  const h = 0.75, m = 3;
  const rod = massProperties({ shape: { type: 'capsule', radius: 1e-7, halfHeight: h }, mass: m, ...at0 }).inertiaLocal;
  const rodI = (m * (2 * h) ** 2) / 12;
  assert.ok(Math.abs(rod[0] / rodI - 1) < 1e-6 && Math.abs(rod[8] / rodI - 1) < 1e-6, `thin capsule: ${rod[0]}, rod: ${rodI}`);
  assert.ok(rod[4] < 1e-12 * rodI, 'a thin rod has no moment about its own axis');
});

// ---- (b) slice integration ----------------------------------------------------------------------

/** ∫_lo^hi f by composite 5-point Gauss–Legendre on `panels` panels (exact for degree ≤ 9 per panel). */
function gauss(f: (y: number) => number, lo: number, hi: number, panels: number): number {
  const x = [0, 0.5384693101056831, -0.5384693101056831, 0.906179845938664, -0.906179845938664];
  const w = [0.5688888888888889, 0.47862867049936647, 0.47862867049936647, 0.23692688505618908, 0.23692688505618908];
  const step = (hi - lo) / panels;
  let sum = 0;
  for (let p = 0; p < panels; p++) {
    const mid = lo + (p + 0.5) * step;
    for (let k = 0; k < 5; k++) sum += w[k] * f(mid + 0.5 * step * x[k]);
  }
  return 0.5 * step * sum;
}

test('capsule: mass and inertia against slice integration along its axis (discs), to 1e-12', () => {
  for (const [r, h] of [[0.5, 1], [0.2, 0.05], [1.3, 2.7]]) {
    const rho = 850;
    const mp = massProperties({ shape: { type: 'capsule', radius: r, halfHeight: h }, density: rho, ...at0 });
    // disc radius² at height y: r² on the cylinder, r² − (|y| − h)² on a cap
    const rho2 = (y: number) => (Math.abs(y) <= h ? r * r : r * r - (Math.abs(y) - h) ** 2);
    const integrate = (f: (y: number) => number) => gauss(f, -h - r, -h, 4) + gauss(f, -h, h, 4) + gauss(f, h, h + r, 4);
    const dm = (y: number) => rho * Math.PI * rho2(y);
    const mass = integrate(dm);
    const axial = integrate((y) => (dm(y) * rho2(y)) / 2);
    const transverse = integrate((y) => dm(y) * (rho2(y) / 4 + y * y));
    const what = `r = ${r}, h = ${h}`;
    assert.ok(Math.abs(mp.mass / mass - 1) < 1e-12, `${what}: mass ${mp.mass} vs ${mass}`);
    assert.ok(Math.abs(mp.inertiaLocal[4] / axial - 1) < 1e-12, `${what}: I_y ${mp.inertiaLocal[4]} vs ${axial}`);
    assert.ok(Math.abs(mp.inertiaLocal[0] / transverse - 1) < 1e-12, `${what}: I_x ${mp.inertiaLocal[0]} vs ${transverse}`);
    assert.ok(Math.abs(mp.inertiaLocal[8] / transverse - 1) < 1e-12, `${what}: I_z ${mp.inertiaLocal[8]} vs ${transverse}`);
  }
});

// ---- (c) Monte Carlo over the solid -------------------------------------------------------------

/**
 * Seeded Monte Carlo: N points uniform in the box |x| ≤ e; each integral ∫_solid g dV is
 * V_box · mean(inside · g), with standard error V_box · σ(inside · g)/√N.
 * Returns [estimate, standard error] for the mass and the six tensor entries.
 */
function monteCarlo(shape: Shape, density: number, e: [number, number, number], n: number, seed: number) {
  const inside = (x: number, y: number, z: number): boolean => {
    if (shape.type === 'box') return Math.abs(x) <= shape.halfExtents[0] && Math.abs(y) <= shape.halfExtents[1] && Math.abs(z) <= shape.halfExtents[2];
    if (shape.type === 'capsule') {
      const dy = Math.max(0, Math.abs(y) - shape.halfHeight); // distance along the axis past the segment
      return x * x + dy * dy + z * z <= shape.radius * shape.radius;
    }
    if (shape.type === 'plane') return y <= 0;
    return x * x + y * y + z * z <= shape.radius * shape.radius;
  };
  const rand = mulberry32(seed);
  const vBox = 8 * e[0] * e[1] * e[2];
  // integrands: 1, y²+z², x²+z², x²+y², xy, xz, yz
  const sum = new Float64Array(7), sumSq = new Float64Array(7);
  for (let i = 0; i < n; i++) {
    const x = (2 * rand() - 1) * e[0], y = (2 * rand() - 1) * e[1], z = (2 * rand() - 1) * e[2];
    if (!inside(x, y, z)) continue;
    const g = [1, y * y + z * z, x * x + z * z, x * x + y * y, -x * y, -x * z, -y * z];
    for (let k = 0; k < 7; k++) {
      sum[k] += g[k];
      sumSq[k] += g[k] * g[k];
    }
  }
  return Array.from(sum, (s, k) => {
    const mean = s / n, variance = sumSq[k] / n - mean * mean;
    return [density * vBox * mean, density * vBox * Math.sqrt(variance / (n - 1))] as [number, number];
  });
}

test('box and capsule: mass and inertia tensor against Monte Carlo over the solid (5 standard errors)', (t) => {
  const N = 400_000; // relative standard error of each moment ≈ 1/√N · O(1) ≈ 0.2 %
  const cases: [string, Shape, [number, number, number]][] = [
    ['box', { type: 'box', halfExtents: [0.3, 0.5, 1.1] }, [0.3, 0.5, 1.1]],
    ['capsule', { type: 'capsule', radius: 0.5, halfHeight: 1 }, [0.5, 1.5, 0.5]],
    ['squat capsule', { type: 'capsule', radius: 0.9, halfHeight: 0.2 }, [0.9, 1.1, 0.9]],
  ];
  for (const [what, shape, e] of cases) {
    const rho = 1200;
    const mp = massProperties({ shape, density: rho, ...at0 });
    const [mass, ixx, iyy, izz, ixy, ixz, iyz] = monteCarlo(shape, rho, e, N, 0x5eed + what.length);
    const I = mp.inertiaLocal;
    const check = (name: string, got: number, [est, se]: [number, number]) => {
      t.diagnostic(`${what} ${name}: ${got.toPrecision(6)}, Monte Carlo ${est.toPrecision(6)} ± ${se.toPrecision(2)} (${se > 0 ? (Math.abs(got - est) / se).toFixed(2) + ' σ' : 'no variance'})`);
      // (+ rounding: a box fills its bounding box, so its mass samples have no variance at all)
      assert.ok(Math.abs(got - est) <= 5 * se + 1e-12 * Math.abs(est), `${what} ${name}: ${got} vs ${est} ± ${se}`);
    };
    check('mass', mp.mass, mass);
    check('I_xx', I[0], ixx);
    check('I_yy', I[4], iyy);
    check('I_zz', I[8], izz);
    // products of inertia vanish: the local axes are principal axes
    check('I_xy', I[1], ixy);
    check('I_xz', I[2], ixz);
    check('I_yz', I[5], iyz);
    // and the check has teeth: without the caps' parallel-axis term (caps about the centre as one
    // sphere, 2/5 m_caps r²) the capsule's I_xx would sit many standard errors off
    if (shape.type === 'capsule') {
      const { radius: r, halfHeight: h } = shape;
      const vCyl = Math.PI * r * r * 2 * h, vCaps = (4 / 3) * Math.PI * r ** 3;
      const wrong = rho * vCyl * (r * r / 4 + h * h / 3) + rho * vCaps * 0.4 * r * r;
      assert.ok(Math.abs(wrong - ixx[0]) > 5 * ixx[1], `${what}: the Monte Carlo cannot tell a missing parallel-axis term`);
    }
  }
});

// ---- the schema ---------------------------------------------------------------------------------

const every = (): WorldDesc => ({
  gravity: [0, -9.81, 0],
  bodies: [
    { shape: { type: 'box', halfExtents: [0.2, 0.1, 0.3] }, density: 500, position: [0, 1, 0], orientation: [0, 0.3826834323650898, 0, 0.9238795325112867] },
    { shape: { type: 'capsule', radius: 0.1, halfHeight: 0.4 }, mass: 2, position: [1, 1, 0], angularVelocity: [0, 0, 3] },
    { shape: { type: 'sphere', radius: 0.1 }, density: 1000, position: [2, 1, 0] },
    { shape: { type: 'box', halfExtents: [1, 0.1, 1] }, fixed: true, position: [0, 0, 0] },
  ],
  constraints: [
    { type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0.1, 0], anchorB: [0, 1.1, 0] },
    { type: 'distance', bodyA: 0, bodyB: 1, anchorA: [0.2, 0, 0], anchorB: [0, 0.5, 0], length: 0.9 },
    { type: 'distance', bodyA: 1, bodyB: 2, anchorA: [0, -0.5, 0], anchorB: [0, 0, 0], maxLength: 1.5 },
    { type: 'distance', bodyA: 2, bodyB: null, anchorA: [0, 0, 0], anchorB: [2, 3, 0], minLength: 0.5, maxLength: 2.5, compliance: 1e-6 },
    { type: 'distance', bodyA: 2, bodyB: 0, anchorA: [0, 0, 0], anchorB: [0, 0, 0] },
    { type: 'hinge', bodyA: 0, bodyB: 3, anchorA: [0, -0.1, 0], anchorB: [0, 0.9, 0], axisA: [0, 0, 1], axisB: [0, 0, 2], lowerAngle: -0.5, upperAngle: Math.PI },
    { type: 'hinge', bodyA: 1, bodyB: null, anchorA: [0, 0.5, 0], anchorB: [1, 1.5, 0], axisA: [1, 0, 0], axisB: [1, 0, 0] },
    { type: 'fixed', bodyA: 1, bodyB: 3, anchorA: [0, -0.5, 0], anchorB: [1, 0.5, 0], compliance: 0 },
  ],
});

test('a world with every shape and joint type: valid, and export → import gives it back unchanged', () => {
  const world = every();
  validateWorld(world);
  const text = sceneFileJson(world, { name: 'every', description: 'every shape and joint' });
  assert.match(text, /"halfExtents": \[0.2, 0.1, 0.3\]/, 'number arrays stay on one line');
  const back = parseSceneFile(text);
  assert.deepEqual(back.world, world);
  assert.equal(back.file.name, 'every');
  // and once more, from the imported world (the schema may order the keys its own way)
  assert.deepEqual(parseSceneFile(sceneFileJson(back.world)).world, world);
});

test('the examples in docs/scene-format.md are valid scene files, and every joint in them starts satisfied', () => {
  const doc = readFileSync(new URL('../docs/scene-format.md', import.meta.url), 'utf8');
  const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(examples.length >= 2, `${examples.length} examples`);
  for (const text of examples) {
    const { world } = parseSceneFile(text);
    for (const c of world.constraints) {
      // the anchors' world points coincide (point, hinge, fixed), or lie within the rope's range
      const at = (i: number | null, r: readonly number[]) => {
        if (i === null) return [...r];
        const b = world.bodies[i];
        assert.deepEqual(b.orientation ?? [0, 0, 0, 1], [0, 0, 0, 1], 'the examples start unrotated');
        return b.position.map((x, k) => x + r[k]);
      };
      const pa = at(c.bodyA, c.anchorA), pb = at(c.bodyB, c.anchorB);
      const d = Math.hypot(pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]);
      if (c.type === 'distance') assert.ok(d <= (c.maxLength ?? c.length ?? d) + 1e-12 && d >= (c.minLength ?? 0), `${c.type}: ${d} m`);
      else assert.ok(d < 1e-12, `${c.type} joint ${JSON.stringify(c)} starts ${d} m apart`);
    }
  }
});

/** [what, an edit of every(), the exact one-line message] */
const refusals: [string, (w: WorldDesc & Record<string, any>) => void, string][] = [
  ['box with a zero extent', (w) => (w.bodies[0].shape = { type: 'box', halfExtents: [0.2, 0, 0.3] }), 'bodies[0].shape.halfExtents[1]: expected a number > 0, got 0'],
  ['box with two extents', (w) => ((w.bodies[0].shape as any).halfExtents = [0.2, 0.1]), 'bodies[0].shape.halfExtents: expected an array of 3 numbers, got an array of 2'],
  ['box with a radius', (w) => ((w.bodies[0].shape as any).radius = 1), 'bodies[0].shape: unknown key "radius"'],
  ['capsule without halfHeight', (w) => delete (w.bodies[1].shape as any).halfHeight, 'bodies[1].shape.halfHeight: missing'],
  ['capsule with a negative radius', (w) => ((w.bodies[1].shape as any).radius = -1), 'bodies[1].shape.radius: expected a number > 0, got -1'],
  ['unknown shape', (w) => ((w.bodies[2].shape as any).type = 'cone'), 'bodies[2].shape.type: unknown type "cone" (expected "sphere" or "box" or "capsule" or "plane")'],
  ['unknown joint', (w) => ((w.constraints[0] as any).type = 'slider'), 'constraints[0].type: unknown type "slider" (expected "point" or "distance" or "hinge" or "fixed")'],
  ['length and maxLength', (w) => ((w.constraints[1] as any).maxLength = 2), 'constraints[1]: give "length", or "minLength" and/or "maxLength", not both'],
  ['negative length', (w) => ((w.constraints[1] as any).length = -0.1), 'constraints[1].length: expected a number ≥ 0, got -0.1'],
  ['minLength above maxLength', (w) => ((w.constraints[3] as any).minLength = 3), 'constraints[3].maxLength: expected maxLength ≥ minLength (3), got 2.5'],
  ['negative compliance', (w) => ((w.constraints[3] as any).compliance = -1), 'constraints[3].compliance: expected a compliance ≥ 0 (m/N)'],
  ['hinge without axisB', (w) => delete (w.constraints[5] as any).axisB, 'constraints[5].axisB: missing'],
  ['hinge with a zero axis', (w) => ((w.constraints[5] as any).axisA = [0, 0, 0]), 'constraints[5].axisA: zero vector (an axis needs a direction)'],
  ['hinge limit beyond π', (w) => ((w.constraints[5] as any).upperAngle = 3.5), 'constraints[5].upperAngle: expected an angle in (−π, π] rad, got 3.5'],
  ['hinge limit at −π', (w) => ((w.constraints[5] as any).lowerAngle = -Math.PI), `constraints[5].lowerAngle: expected an angle in (−π, π] rad, got ${-Math.PI}`],
  ['hinge limits crossed', (w) => Object.assign(w.constraints[5], { lowerAngle: 0.4, upperAngle: 0.3 }), 'constraints[5].upperAngle: expected upperAngle ≥ lowerAngle (0.4), got 0.3'],
  ['a distance field on a hinge', (w) => ((w.constraints[6] as any).length = 1), 'constraints[6]: unknown key "length"'],
  ['fixed joint with an axis', (w) => ((w.constraints[7] as any).axisA = [1, 0, 0]), 'constraints[7]: unknown key "axisA"'],
  ['fixed joint to itself', (w) => ((w.constraints[7] as any).bodyB = 1), 'constraints[7].bodyB: a constraint joins two different bodies'],
  ['hinge between two fixed bodies', (w) => Object.assign(w.constraints[5], { bodyA: 3, bodyB: null }), 'constraints[5]: joins two fixed bodies (nothing can move)'],
  ['distance to a missing body', (w) => ((w.constraints[2] as any).bodyB = 4), 'constraints[2].bodyB: body index out of range 0..3 (or null for the world)'],
];

test('bad shapes and joints: one exact line naming the JSON path, from a file and from validateWorld alike', () => {
  for (const [what, edit, message] of refusals) {
    const world = every() as WorldDesc & Record<string, any>;
    edit(world);
    const fromFile = (() => {
      try {
        parseSceneFile(JSON.stringify(world));
      } catch (e) {
        return e;
      }
    })();
    assert.ok(fromFile instanceof WorldError, `${what}: the file was accepted`);
    assert.equal(fromFile.message, message, what);
    assert.throws(() => validateWorld(world), (e: unknown) => e instanceof WorldError && e.message === message, `${what}: validateWorld`);
  }
});

test('validateWorld protects library users: a non-object, a NaN, an unknown key', () => {
  assert.throws(() => validateWorld(null as unknown as WorldDesc), /\(top level\): expected an object/);
  const w = every();
  w.bodies[1].position = [0, NaN, 0];
  assert.throws(() => validateWorld(w), (e: unknown) => e instanceof WorldError && e.message === 'bodies[1].position[1]: expected a finite number, got NaN');
  const v = every() as WorldDesc & Record<string, any>;
  (v.bodies[0] as any).colour = 'red';
  assert.throws(() => validateWorld(v), (e: unknown) => e instanceof WorldError && e.message === 'bodies[0]: unknown key "colour"');
});

// ---- the viewer ---------------------------------------------------------------------------------

test('the viewer draws a box and a capsule in their orientation: colour inside, none outside, along each long axis', async () => {
  const W = 320, H = 240;
  // 35° about z then 20° about x: a wrong-handed or unapplied rotation puts the long axes elsewhere
  const qz = [0, 0, Math.sin(0.3054), Math.cos(0.3054)], qx = [Math.sin(0.1745), 0, 0, Math.cos(0.1745)];
  const mul = (a: number[], b: number[]) => [
    a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
    a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
    a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
    a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
  ];
  const q = mul(qx, qz) as [number, number, number, number];
  /** R(q) v through the rotation matrix (independent of the shader's formula) */
  const rot = (v: readonly number[]) => {
    const [x, y, z, w] = q;
    return [
      (1 - 2 * (y * y + z * z)) * v[0] + 2 * (x * y - z * w) * v[1] + 2 * (x * z + y * w) * v[2],
      2 * (x * y + z * w) * v[0] + (1 - 2 * (x * x + z * z)) * v[1] + 2 * (y * z - x * w) * v[2],
      2 * (x * z - y * w) * v[0] + 2 * (y * z + x * w) * v[1] + (1 - 2 * (x * x + y * y)) * v[2],
    ];
  };
  const world: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [
      { shape: { type: 'box', halfExtents: [0.8, 0.12, 0.12] }, density: 1000, position: [-0.9, 1, 0], orientation: q },
      { shape: { type: 'capsule', radius: 0.12, halfHeight: 0.6 }, density: 1000, position: [0.9, 1, 0], orientation: q },
    ],
    constraints: [{ type: 'hinge', bodyA: 0, bodyB: 1, anchorA: [0.8, 0, 0], anchorB: [0, -0.72, 0], axisA: [0, 0, 1], axisB: [0, 0, 1] }],
  };
  const gpu = await acquireGpu();
  const info = renderInfo(world) as Drawable;
  assert.equal(info.drawable, true);
  const target = offscreenTarget(gpu.device, W, H);
  const renderer = await Renderer.create(gpu, target);
  renderer.setScene(info, true);
  renderer.camera.yaw = 0; // look along −z, so the long axes lie across the picture
  renderer.camera.pitch = 0;
  const colour = [0.9, 0.35, 0.1];
  const slot = renderer.createSlot(renderer.createPoseBuffer(), colour, 1);
  renderer.draw([slot], { joints: false, translucent: false });
  const row = Math.ceil((4 * W) / 256) * 256;
  const buf = gpu.device.createBuffer({ size: row * H, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const enc = gpu.device.createCommandEncoder();
  enc.copyTextureToBuffer({ texture: target.texture }, { buffer: buf, bytesPerRow: row }, [W, H]);
  gpu.device.queue.submit([enc.finish()]);
  await buf.mapAsync(GPUMapMode.READ);
  const px = new Uint8Array(buf.getMappedRange().slice(0));
  buf.unmap();
  const hue = colour[0] / (colour[0] + colour[1] + colour[2]);
  const isBody = (p: number[]) => {
    const [x, y] = renderer.project(p)!.map(Math.round);
    const k = 4 * (y * W + x);
    const [r, g, b] = [px[k], px[k + 1], px[k + 2]];
    return r + g + b > 30 && Math.abs(r / (r + g + b) - hue) < 0.06;
  };
  const along = (centre: readonly number[], axis: readonly number[], s: number) => {
    const d = rot(axis);
    return centre.map((c, k) => c + s * d[k]);
  };
  for (const [what, centre, axis, half] of [
    ['box', [-0.9, 1, 0], [1, 0, 0], 0.8],
    ['capsule', [0.9, 1, 0], [0, 1, 0], 0.72],
  ] as const) {
    for (const s of [0, 0.5, 0.9, -0.9]) assert.ok(isBody(along(centre, axis, s * half)), `${what}: ${s} of the half length along its axis is drawn`);
    for (const s of [1.2, -1.2]) assert.ok(!isBody(along(centre, axis, s * half)), `${what}: ${s} of the half length along its axis is not`);
    // across the long axis the body is thin: 2.5 thicknesses out is empty
    assert.ok(!isBody(along(centre, [0, 0, 0], 0).map((c, k) => c + 0.3 * rot(what === 'box' ? [0, 1, 0] : [1, 0, 0])[k])), `${what}: thin across`);
  }
  renderer.clearScene();
});

// ---- Rapier's mass properties -------------------------------------------------------------------

test('rapier gets the principal inertia: one step of a free spinning box and capsule turns ω as Euler\'s equations say', async (t) => {
  // Torque-free, at identity orientation (body frame = world frame): I ω̇ = −ω × I ω (Euler's
  // equations), so one short step turns ω by h ω̇, and ω̇ depends on the ratios of the principal
  // moments. Rapier's response must be far closer to ω̇ from our moments than to ω̇ from any
  // plausible wrong set: isotropic (what Rapier was given before: ω̇ = 0), the capsule's caps
  // without their parallel-axis term, the box's x and z moments swapped. The threshold: ten times
  // closer to the right one than to the nearest wrong one. The step is short so that Rapier's own
  // first-order error, O(h), stays well inside that: measured 4e-2 rad/s² on the capsule at
  // h = 1 ms, a tenth of the nearest wrong tensor's distance, so h = 0.2 ms (f32 rounding of ω
  // over h, 2⁻²⁴ |ω| / h ≈ 1.5e-3 rad/s², is still small).
  const cross = (a: number[], b: number[]) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const euler = (Id: number[], w: number[]) => cross(w, w.map((x, k) => Id[k] * x)).map((x, k) => -x / Id[k]);
  const h = 2e-4, w0: [number, number, number] = [1, 5, 0.2];
  const capsule: Shape = { type: 'capsule', radius: 0.2, halfHeight: 0.6 };
  const box: Shape = { type: 'box', halfExtents: [0.1, 0.3, 0.6] };
  const noParallelAxis = (() => {
    const r = 0.2, hh = 0.6, vCyl = Math.PI * r * r * 2 * hh, vCaps = (4 / 3) * Math.PI * r ** 3;
    const transverse = vCyl * (r * r / 4 + hh * hh / 3) + vCaps * 0.4 * r * r, axial = vCyl * r * r / 2 + vCaps * 0.4 * r * r;
    return [transverse, axial, transverse];
  })();
  const cases: [Shape, [string, number[]][]][] = [
    [capsule, [['isotropic', [1, 1, 1]], ['caps without the parallel-axis term', noParallelAxis]]],
    [box, [['isotropic', [1, 1, 1]], ['x and z swapped', (() => { const I = tensor({ shape: box, mass: 1, ...at0 }); return [I[8], I[4], I[0]]; })()]]],
  ];
  for (const [shape, wrong] of cases) {
    const body: BodyDesc = { shape, density: 1000, position: [0, 0, 0], angularVelocity: w0 };
    const I = tensor(body);
    const want = euler([I[0], I[4], I[8]], w0);
    const solver = await RapierSolver.create({ gravity: [0, 0, 0], bodies: [body], constraints: [] }, { dt: h, substeps: 1, iterations: 1 });
    await solver.step(1);
    const w = (await solver.snapshot()).angularVelocity;
    solver.destroy();
    const got = [0, 1, 2].map((k) => (w[k] - w0[k]) / h);
    const miss = Math.hypot(...got.map((g, k) => g - want[k]));
    const nearestWrong = Math.min(...wrong.map(([, Id]) => Math.hypot(...euler(Id, w0).map((x, k) => x - want[k]))));
    t.diagnostic(`${shape.type}: dω/dt ${got.map((x) => x.toFixed(4))} rad/s², Euler's equations ${want.map((x) => x.toFixed(4))}; |miss| ${miss.toExponential(2)}, nearest wrong tensor ${nearestWrong.toExponential(2)} away`);
    assert.ok(miss < 0.1 * nearestWrong, `${shape.type}: |miss| ${miss} is not 10× below ${nearestWrong} (${wrong.map(([n]) => n).join(', ')})`);
  }
});
