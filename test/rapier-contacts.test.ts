/**
 * Contacts in the Rapier baselines (src/solvers/rapier/rapier.ts, header 4.): the colliders of our
 * shapes, the material combine rules μ = √(μA μB) and e = max(eA, eB), no contact between jointed
 * bodies, none at all with `collisions: false`. These tests check our wiring of Rapier, not Rapier's
 * contact model; each tolerance is derived beside its test, none copied from a run.
 *
 * At the default options Rapier's integrator runs at h_s = dt / iterations = 1/480 s (dt = 1/60 s,
 * 8 solver iterations). Rapier's own contact parameters stay at its defaults: it leaves a penetration
 * up to its allowed linear error (5 mm in this build) uncorrected, so a resting body may sit up to
 * that far below the exact contact height.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import RAPIER from '@dimforge/rapier3d-compat';
import { RapierSolver, colliderDescOf, rapierReady } from '../src/solvers/rapier/rapier.js';
const colliderDesc = (b: Parameters<typeof colliderDescOf>[0]) => colliderDescOf(b) as RAPIER.ColliderDesc;
import { defaultSolverOptions, type Snapshot, type SolverOptions } from '../src/solvers/solver.js';
import type { BodyDesc, Vec3, WorldDesc } from '../src/model/world.js';

const KINDS = ['rapier', 'rapier-multibody'] as const;
const G = 9.81;
const DT = defaultSolverOptions.dt;
/** Rapier's allowed linear error (IntegrationParameters.normalizedAllowedLinearError × lengthUnit), read, not assumed */
async function allowedPenetration(): Promise<number> {
  await rapierReady();
  const w = new RAPIER.World({ x: 0, y: 0, z: 0 });
  const e = w.integrationParameters.normalizedAllowedLinearError * w.lengthUnit;
  w.free();
  return e;
}

/** RapierSolver.create directly (what the registry's two entries call), so this file does not load every solver. */
async function create(id: (typeof KINDS)[number], world: WorldDesc, options: Partial<SolverOptions> = {}): Promise<RapierSolver> {
  return RapierSolver.create(world, { ...defaultSolverOptions, ...options }, id === 'rapier' ? 'impulse' : 'multibody');
}

/** A fixed plane through `position` whose outward normal is local +y turned by `orientation`. */
function plane(extra: Partial<BodyDesc> = {}): BodyDesc {
  return { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], ...extra };
}

/** Quaternion [x, y, z, w] of a turn by θ about +z. */
const aboutZ = (theta: number): [number, number, number, number] => [0, 0, Math.sin(theta / 2), Math.cos(theta / 2)];

const vecAt = (a: ArrayLike<number>, i: number): Vec3 => [a[3 * i], a[3 * i + 1], a[3 * i + 2]];
const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const dist = (a: Vec3, b: Vec3) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

// --- 1. the pair's material: Rapier's manifold values are ours -----------------------------------

test('pair material: Rapier combines our colliders to μ = √(μA μB) and e = max(eA, eB) (read from its manifold)', async (t) => {
  // Two colliders made by colliderDesc, touching (a ball resting in a half-space), in a bare Rapier world;
  // its manifold reports the friction and restitution it combined for the pair. f32 storage: √μ rounds
  // once per collider and the product once, so |Δμ| ≤ 4 u μ (u = 2⁻²⁴); e passes through unchanged
  // but stored in f32, |Δe| ≤ u e.
  await rapierReady();
  const U = 2 ** -24;
  const cases = [
    { muA: 0.6, muB: 0.6, eA: 0, eB: 0 }, // the defaults
    { muA: 0.04, muB: 0.25, eA: 0.5, eB: 0 },
    { muA: 1.2, muB: 0.3, eA: 0.2, eB: 0.9 },
    { muA: 0, muB: 0.8, eA: 1, eB: 0.3 },
  ];
  for (const c of cases) {
    const world = new RAPIER.World({ x: 0, y: -G, z: 0 });
    const ground = world.createRigidBody(RAPIER.RigidBodyDesc.fixed());
    const groundDesc: BodyDesc = plane({ friction: c.muA, restitution: c.eA });
    const gc = world.createCollider(colliderDesc(groundDesc), ground);
    const ball = world.createRigidBody(RAPIER.RigidBodyDesc.dynamic().setTranslation(0, 0.099, 0).setAdditionalMassProperties(1, { x: 0, y: 0, z: 0 }, { x: 0.004, y: 0.004, z: 0.004 }, { x: 0, y: 0, z: 0, w: 1 }));
    const ballDesc: BodyDesc = { shape: { type: 'sphere', radius: 0.1 }, mass: 1, position: [0, 0.099, 0], friction: c.muB, restitution: c.eB };
    const bc = world.createCollider(colliderDesc(ballDesc), ball);
    world.step();
    let seen = 0, mu = NaN, e = NaN;
    world.contactPair(gc, bc, (m) => {
      seen++;
      mu = m.friction();
      e = m.restitution();
    });
    world.free();
    const muWant = Math.sqrt(c.muA * c.muB), eWant = Math.max(c.eA, c.eB);
    t.diagnostic(`μ ${c.muA}, ${c.muB} → Rapier ${mu} (√ product ${muWant}); e ${c.eA}, ${c.eB} → ${e} (max ${eWant})`);
    assert.equal(seen, 1, 'one manifold between the ball and the ground');
    assert.ok(Math.abs(mu - muWant) <= 4 * U * Math.max(muWant, 1e-30), `pair μ ${mu}, want √(${c.muA}·${c.muB}) = ${muWant}`);
    assert.ok(Math.abs(e - eWant) <= U * eWant, `pair e ${e}, want max(${c.eA}, ${c.eB}) = ${eWant}`);
  }
});

// --- 2. resting heights: each shape stands on the plane at its own extent ---------------------------

for (const id of KINDS) {
  test(`${id}: a sphere, a box, an upright and a lying capsule dropped on the plane rest at y = r, b, h + r, r (within 1 cm)`, async (t) => {
    // At rest the lowest point of each shape touches the plane y = 0: a sphere's centre at r, a box's (axes
    // aligned) at its half-height b, an upright capsule's (segment along local y, ±h) at h + r. Rapier leaves
    // up to its allowed penetration (5 mm here) uncorrected, and nothing else should move the resting body,
    // so 1 cm bounds it, and more tightly the centre lies in [want − that penetration − 1 mm, want + 0.1 mm]
    // (1 mm for the soft contact's sag under the weight, 0.1 mm as f32 roundoff is ≪ it). A capsule with
    // radius and half-height swapped would rest at the same h + r upright, so a second capsule lies on its
    // side (turned ¼ turn about z): its centre rests at r, not h.
    const slop = await allowedPenetration();
    const r = 0.1, b = 0.15, h = 0.3, rc = 0.05;
    const world: WorldDesc = {
      gravity: [0, -G, 0],
      bodies: [
        plane(),
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [0, 0.5, 0] },
        { shape: { type: 'box', halfExtents: [0.2, b, 0.25] }, mass: 2, position: [1, 0.5, 0] },
        { shape: { type: 'capsule', radius: rc, halfHeight: h }, mass: 1, position: [-1, 0.6, 0] },
        { shape: { type: 'capsule', radius: rc, halfHeight: h }, mass: 1, position: [0, 0.3, 1], orientation: aboutZ(Math.PI / 2) },
      ],
      constraints: [],
    };
    const solver = await create(id, world);
    await solver.step(120); // a 0.5 m drop lands in ≈ 0.3 s; e = 0, so it is at rest long before 2 s
    const s = await solver.snapshot();
    const contacts = solver.contactCount();
    solver.destroy();
    const want = [r, b, h + rc, rc];
    for (let k = 0; k < 4; k++) {
      const y = s.position[3 * (k + 1) + 1];
      const v = Math.hypot(...vecAt(s.linearVelocity, k + 1));
      t.diagnostic(`body ${k + 1}: y ${y.toFixed(5)} m, want ${want[k]} m; speed ${v.toExponential(2)} m/s`);
      assert.ok(Math.abs(y - want[k]) <= 0.01, `body ${k + 1} rests at y = ${y} m, want ${want[k]} m`);
      assert.ok(y <= want[k] + 1e-4 && y >= want[k] - slop - 1e-3, `body ${k + 1}: y = ${y} m is outside [want − allowed penetration, want]`);
      assert.ok(v < 0.01, `body ${k + 1} still moves at ${v} m/s`);
    }
    // active contact points: the sphere 1, the upright capsule 1, the box a face (Rapier's manifold: 4
    // corners), the lying capsule its segment (2 ends): at least 1 + 1 + 1 + 1, at most 1 + 4 + 1 + 2
    t.diagnostic(`contactCount() = ${contacts}`);
    assert.ok(contacts >= 4 && contacts <= 8, `${contacts} contact points`);
  });
}

// --- 3. restitution -------------------------------------------------------------------------------

test('rapier: a sphere with e = 0.5 dropped from H = 1 m on a plane with e = 0 rebounds to about e² H (pair e = max)', async (t) => {
  // Impact speed v = √(2 g H); the rebound leaves at e v and rises (e v)²/(2g) = e² H = 0.25 m. The pair's e
  // is max(0.5, 0) = 0.5; the other rules would give Average 0.25 → 0.0625 m, Min or Multiply 0 → no rebound.
  // Rapier's discrete contact: the impact falls inside a step of dt = 1/60 s, and the velocity it reflects is
  // the one at that step, off the true impact speed by up to g dt, a relative 2 g dt / v in the apex height
  // (v = 4.43 m/s: 7.4 %); sampling the apex at 60 Hz errs by ≤ g dt²/8 (0.3 mm). The band is that 2 g dt / v,
  // far from the other rules' values.
  const r = 0.1, H = 1, e = 0.5;
  const world: WorldDesc = {
    gravity: [0, -G, 0],
    bodies: [plane(), { shape: { type: 'sphere', radius: r }, mass: 1, position: [0, r + H, 0], restitution: e }],
    constraints: [],
  };
  const solver = await create('rapier', world);
  let bounced = false, apex = -Infinity, prevVy = 0;
  for (let f = 0; f < 90; f++) {
    await solver.step(1);
    const s = await solver.snapshot();
    const vy = s.linearVelocity[4], y = s.position[4] - r;
    if (!bounced && prevVy < 0 && vy > 0) bounced = true;
    if (bounced) apex = Math.max(apex, y);
    prevVy = vy;
  }
  solver.destroy();
  const v = Math.sqrt(2 * G * H);
  const want = e * e * H, tol = (2 * G * DT) / v;
  t.diagnostic(`apex after the bounce ${apex.toFixed(4)} m, e² H = ${want} m (${((apex / want - 1) * 100).toFixed(2)} %, band ±${(100 * tol).toFixed(1)} %)`);
  assert.ok(bounced, 'the sphere never bounced');
  assert.ok(Math.abs(apex / want - 1) <= tol, `rebound apex ${apex} m, e² H = ${want} m`);
});

// --- 4. friction on a ramp --------------------------------------------------------------------------

/**
 * A box resting on a plane tilted by θ about z (the ramp's normal n = R_z(θ) e_y = (−sin θ, cos θ, 0)),
 * turned with it. Returns the box's velocity along the downhill direction d = −R_z(θ) e_x at 0.5 s and at
 * 1.5 s, and its displacement along d over the run.
 */
async function boxOnRamp(id: (typeof KINDS)[number], theta: number, muBox: number, muRamp: number) {
  const b = 0.1;
  const n: Vec3 = [-Math.sin(theta), Math.cos(theta), 0];
  const down: Vec3 = [-Math.cos(theta), -Math.sin(theta), 0];
  const start: Vec3 = [n[0] * b, n[1] * b, 0]; // its lower face on the ramp through the origin
  const world: WorldDesc = {
    gravity: [0, -G, 0],
    bodies: [
      plane({ orientation: aboutZ(theta), friction: muRamp }),
      { shape: { type: 'box', halfExtents: [0.2, b, 0.2] }, mass: 1, position: start, orientation: aboutZ(theta), friction: muBox },
    ],
    constraints: [],
  };
  const solver = await create(id, world);
  const vAt = async (frames: number) => {
    await solver.step(frames);
    const s: Snapshot = await solver.snapshot();
    return { v: dot(vecAt(s.linearVelocity, 1), down), x: vecAt(s.position, 1) };
  };
  const a = await vAt(30); // 0.5 s: past any settling into the allowed penetration
  const c = await vAt(60); // 1.5 s
  solver.destroy();
  const moved = dot([c.x[0] - start[0], c.x[1] - start[1], c.x[2] - start[2]], down);
  return { accel: (c.v - a.v) / 1.0, v: c.v, moved };
}

const THETA = 0.25;
/** a = g (sin θ − μ cos θ): gravity's pull down the slope less kinetic friction μ N, N = m g cos θ */
const slideAccel = (mu: number) => G * (Math.sin(THETA) - mu * Math.cos(THETA));

for (const id of KINDS) {
  test(`${id}: a box on a ramp at 0.25 rad stays with pair μ = 0.5 (> tan θ = 0.255) and slides at g(sin θ − μ cos θ) within 5 % with μ = 0.1`, async (t) => {
    // Static: the friction needed to hold the box is m g sin θ ≤ μ m g cos θ for μ ≥ tan θ, so with μ = 0.5 it
    // must not move. 'Stays' is bounded by 1 cm over 1.5 s: a box that slipped at even a tenth of the μ = 0.1
    // acceleration would cover ½ (0.15 m/s²)(1.5 s)² ≈ 0.17 m. Kinetic: over [0.5, 1.5] s the velocity
    // grows at a; da/dμ = −g cos θ = −9.5 m/s², so the 5 % band (±0.074 m/s²) is the pair μ within 0.1 ± 0.008,
    // room for Rapier's soft contact and per-manifold friction, and far tighter than the combine-rule errors below.
    const stay = await boxOnRamp(id, THETA, 0.5, 0.5);
    t.diagnostic(`μ = 0.5: moved ${stay.moved.toExponential(2)} m down the ramp, speed ${stay.v.toExponential(2)} m/s`);
    assert.ok(Math.abs(stay.moved) <= 0.01 && Math.abs(stay.v) <= 0.01, `the box moved ${stay.moved} m (speed ${stay.v} m/s) with μ = 0.5`);
    const slide = await boxOnRamp(id, THETA, 0.1, 0.1);
    const want = slideAccel(0.1);
    t.diagnostic(`μ = 0.1: a = ${slide.accel.toFixed(4)} m/s², g(sin θ − μ cos θ) = ${want.toFixed(4)} m/s² (${((slide.accel / want - 1) * 100).toFixed(2)} %)`);
    assert.ok(Math.abs(slide.accel / want - 1) <= 0.05, `slide acceleration ${slide.accel} m/s², want ${want}`);
  });
}

test('rapier: the combine rule on the ramp — box μ 0.04 on ramp μ 0.25 slides as μ = √(0.04·0.25) = 0.1', async (t) => {
  // The other rules would give Average 0.145 (a −29 %), Min 0.04 (+39 %), Max 0.25 (a ≈ 0.05 m/s², barely
  // sliding), Multiply on the raw μ 0.01 (+58 %): the 5 % band of the test above tells them apart.
  const r = await boxOnRamp('rapier', THETA, 0.04, 0.25);
  const want = slideAccel(Math.sqrt(0.04 * 0.25));
  t.diagnostic(`a = ${r.accel.toFixed(4)} m/s², for μ = 0.1: ${want.toFixed(4)} m/s²`);
  assert.ok(Math.abs(r.accel / want - 1) <= 0.05, `slide acceleration ${r.accel} m/s², want ${want}`);
});

// --- 5. jointed bodies do not collide; collisions: false -------------------------------------------

for (const id of KINDS) {
  test(`${id}: bodies joined by a joint do not collide although they overlap (a control pair without the joint does)`, async (t) => {
    // No gravity, all at rest. Spheres 1 and 2 (r = 0.1, centres 0.15 apart: 5 cm overlap, ten times Rapier's
    // allowed penetration) hang on a point joint 0.3 m above their midpoint: a contact force along the line of
    // centres would swing them apart about it. Sphere 3 hangs by a point joint from the fixed box 0 that it
    // overlaps by 5 cm (rapier-multibody: through its private fixed copy, so the filter hook must drop the pair).
    // Nothing else acts, so each must stay where it is (1 mm: f32 roundoff of a 0.1 m-scale pose is ~1e-8 m).
    // Control: spheres 4 and 5, overlapping the same way without a joint, must be pushed apart.
    const r = 0.1;
    const world: WorldDesc = {
      gravity: [0, 0, 0],
      bodies: [
        { shape: { type: 'box', halfExtents: [0.1, 0.1, 0.1] }, fixed: true, position: [0, 0, -2] },
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [0, 0, 0] },
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [0.15, 0, 0] },
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [0.15, 0, -2] },
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [0, 0, 2] },
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [0.15, 0, 2] },
      ],
      constraints: [
        { type: 'point', bodyA: 1, bodyB: 2, anchorA: [0.075, 0.3, 0], anchorB: [-0.075, 0.3, 0] },
        { type: 'point', bodyA: 3, bodyB: 0, anchorA: [-0.075, 0.3, 0], anchorB: [0.075, 0.3, 0] },
      ],
    };
    const solver = await create(id, world);
    await solver.step(60);
    const s = await solver.snapshot();
    solver.destroy();
    for (const k of [1, 2, 3]) {
      const d = dist(vecAt(s.position, k), world.bodies[k].position as Vec3);
      t.diagnostic(`jointed sphere ${k} moved ${d.toExponential(2)} m`);
      assert.ok(d <= 1e-3, `jointed sphere ${k} moved ${d} m: it collided with the body it is joined to`);
    }
    const gap = dist(vecAt(s.position, 4), vecAt(s.position, 5));
    t.diagnostic(`control pair: centres ${gap.toFixed(4)} m apart after 1 s (started 0.15 m, touching at ${2 * r} m)`);
    assert.ok(gap >= 2 * r - 0.01, `the unjointed control pair was not pushed apart (${gap} m): contacts are not on`);
  });
}

for (const id of KINDS) {
  test(`${id}: only the jointed pairs are excluded — two unjointed links of one chain collide`, async (t) => {
    // A V: spheres 0 and 2 hang from sphere 1 by point joints at its centre, and overlap each other by 5 cm,
    // with no joint between them (rapier-multibody: all three are one multibody). No gravity: only a contact
    // between 0 and 2 can move anything, and it must push them to at least touching (2r, less Rapier's
    // allowed penetration and 1 cm of swing-back).
    const r = 0.1;
    const world: WorldDesc = {
      gravity: [0, 0, 0],
      bodies: [
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [-0.075, 0, 0] },
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [0, 0.3, 0] },
        { shape: { type: 'sphere', radius: r }, mass: 1, position: [0.075, 0, 0] },
      ],
      constraints: [
        { type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.075, 0.3, 0], anchorB: [0, 0, 0] },
        { type: 'point', bodyA: 2, bodyB: 1, anchorA: [-0.075, 0.3, 0], anchorB: [0, 0, 0] },
      ],
    };
    const solver = await create(id, world);
    await solver.step(60);
    const s = await solver.snapshot();
    solver.destroy();
    const gap = dist(vecAt(s.position, 0), vecAt(s.position, 2));
    t.diagnostic(`spheres 0 and 2: centres ${gap.toFixed(4)} m apart after 1 s (started 0.15 m)`);
    assert.ok(gap >= 2 * r - 0.01, `the unjointed links 0 and 2 did not collide (${gap} m apart)`);
  });

  test(`${id}: a collider turns with its body — a box welded under a sphere, its long axis turned upright, stands at its half-length`, async (t) => {
    // Box 2 (half-extents 0.3 × 0.1 × 0.1) is turned ¼ turn about z, so its long local x axis is vertical,
    // and welded (fixed joint) to sphere 1 above it. rapier-multibody holds the box, a child of the sphere, in
    // a changed body frame (q' = q ⊗ C): its collider must be turned back by C⁻¹, else the box would stand on
    // its short side. The composite lands on the box's end face: its centre rests at y = 0.3 (not 0.1), within
    // 1 cm (Rapier's allowed penetration is 5 mm).
    const world: WorldDesc = {
      gravity: [0, -G, 0],
      bodies: [
        plane(),
        { shape: { type: 'sphere', radius: 0.05 }, mass: 0.2, position: [0, 0.9, 0] },
        { shape: { type: 'box', halfExtents: [0.3, 0.1, 0.1] }, mass: 1, position: [0, 0.5, 0], orientation: aboutZ(Math.PI / 2) },
      ],
      constraints: [{ type: 'fixed', bodyA: 1, bodyB: 2, anchorA: [0, -0.05, 0], anchorB: [0.35, 0, 0] }],
    };
    const solver = await create(id, world);
    await solver.step(90);
    const s = await solver.snapshot();
    solver.destroy();
    const y = s.position[7];
    t.diagnostic(`box centre at y = ${y.toFixed(5)} m (standing on its end: 0.3 m)`);
    assert.ok(Math.abs(y - 0.3) <= 0.01, `the box rests at y = ${y} m, want 0.3 m`);
  });
}

for (const id of KINDS) {
  test(`${id}: with collisions false a sphere falls through the ground as in free fall, and no contact is reported`, async (t) => {
    // Free fall from y0 for T = 1 s: y = y0 − ½ g T (T + h_s) under Rapier's symplectic Euler at h_s = 1/480 s;
    // 1 mm is far above f32 roundoff (~1e-6 m here) and far below the 1.2 m the sphere would stop short by.
    const world: WorldDesc = {
      gravity: [0, -G, 0],
      bodies: [plane(), { shape: { type: 'sphere', radius: 0.1 }, mass: 1, position: [0, 0.3, 0] }],
      constraints: [],
      collisions: false,
    };
    const solver = await create(id, world);
    await solver.step(60);
    const s = await solver.snapshot();
    const contacts = solver.contactCount();
    solver.destroy();
    const T = 60 * DT, hs = DT / defaultSolverOptions.iterations;
    const want = 0.3 - 0.5 * G * T * (T + hs);
    t.diagnostic(`y = ${s.position[4].toFixed(5)} m, free fall ${want.toFixed(5)} m; contactCount() = ${contacts}`);
    assert.ok(Math.abs(s.position[4] - want) <= 1e-3, `y = ${s.position[4]} m, free fall gives ${want} m`);
    assert.equal(contacts, 0);
  });
}
