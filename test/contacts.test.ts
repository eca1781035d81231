/**
 * Contacts: collision, contact rows (normal + friction disc), restitution, under the velocity-level
 * contact solvers (softstep-cpu, pgs-cpu, si-soft-cpu; jacobi-cpu's mass-split Jacobi variant),
 * XPBD's position-level contacts (xpbd-cpu) and
 * Rapier where its model allows. Each test
 * checks a physical fact with its tolerance stated beside it; positions and velocities come from the
 * solvers' snapshots, penetration from the metrics (collision detection run afresh on the state,
 * src/metrics/metrics.ts), never from a solver's own contact arrays.
 *
 * Settings: each solver at its registry defaults (softstep-cpu 4 substeps × 1 iteration; pgs-cpu and
 * si-soft-cpu 4 substeps × 8 iterations; xpbd-cpu 10 substeps × 1 iteration; jacobi-cpu 1 step × 8 iterations
 * (its defaults without the scene: these one-body tests need none of its contact substeps); rapier 1 step)
 * at 1/60 s, with sleeping off, except where a
 * test says otherwise and why.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type Solver, type SolverOptions, type Snapshot } from '../src/solvers/solver.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { RAMP_FRICTIONS } from '../src/scenes/contact-scenes.js';
import type { WorldDesc } from '../src/model/world.js';
import { parseSceneFile, sceneFileJson } from '../src/model/schema.js';
import { stateHash } from '../src/metrics/hash.js';
import { CONTACT_SLOP } from '../src/rows/block-solver.js';
import { CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL } from '../src/solvers/jacobi/cpu.js';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';

const g = 9.81;
const CONTACT_SOLVERS = ['softstep-cpu', 'pgs-cpu', 'si-soft-cpu', 'xpbd-cpu', 'jacobi-cpu'];
const WITH_RAPIER = [...CONTACT_SOLVERS, 'rapier'];
/**
 * the GPU contact solvers (f32, on the software adapter here), in the tests whose physics they cover; gs-gpu
 * (gs-cpu's contacts on the GPU, 1 step × 8 sweeps at its defaults without the scene, as gs-cpu here) in the
 * slope and box-at-rest tests
 */
const GPU_CONTACT_SOLVERS = ['jacobi-gpu', 'softstep-gpu', 'xpbd-gpu'];
let gpuContext: GpuContext | null = null;
after(() => gpuContext?.device.destroy());

async function make(id: string, world: WorldDesc, asked: Partial<SolverOptions> = {}): Promise<Solver> {
  const info = findSolver(id)!;
  const why = info.unsupported?.(world) ?? null;
  assert.equal(why, null, `${id} should take this scene`);
  // sleeping off: these tests measure the solvers' resting contacts, which a sleeping island skips
  // (sleeping has its own tests, test/sleeping.test.ts)
  if (info.device === 'gpu') gpuContext ??= await acquireGpu();
  return info.create(world, resolveOptions(info, { sleep: 0, ...asked }), info.device === 'gpu' ? gpuContext! : undefined);
}

/** Steps `frames` frames, calling `each` with the frame number (1…) and the snapshot. */
async function run(solver: Solver, frames: number, each: (frame: number, s: Snapshot) => void): Promise<void> {
  for (let f = 1; f <= frames; f++) {
    await solver.step(1);
    each(f, await solver.snapshot());
  }
  solver.destroy();
}

const ground = (friction?: number) => ({ shape: { type: 'plane' as const }, fixed: true, position: [0, 0, 0] as [number, number, number], ...(friction !== undefined ? { friction } : {}) });

// --- friction on a slope --------------------------------------------------------------------------

/*
 * friction-ramp: five boxes on a ramp at θ = 0.25 rad (tan θ = 0.255) with pair μ 0.75, 0.5, 0.35,
 * 0.1, 0. Coulomb: a box with tan θ > μ slides with a = g (sin θ − μ cos θ) whatever its contacts do
 * inside (the normal forces sum to m g cos θ, each point's friction is μ λ_n against the slip); one with
 * tan θ < μ stays. a is measured from the velocity along the slope at 0.5 s and 1.5 s (within 3 %, the
 * issue's figure); the drift of the boxes that stay over the 2 s after a 0.25 s settle (below 1 mm).
 */
for (const id of [...WITH_RAPIER, 'avbd-cpu', ...GPU_CONTACT_SOLVERS, 'gs-gpu']) {
  test(`${id}: a box on a 0.25 rad slope slides with a = g(sin θ − μ cos θ) (3 %) when tan θ > μ, and stays (< 1 mm in 2 s) when tan θ < μ`, async () => {
    const th = 0.25;
    const world = findRigidScene('friction-ramp')!.build({ angle: th });
    const n = world.bodies.length, first = n - RAMP_FRICTIONS.length;
    const up = [Math.cos(th), Math.sin(th), 0]; // up the slope (the ramp rises towards +x)
    const along = (a: Float64Array, i: number) => a[3 * i] * up[0] + a[3 * i + 1] * up[1] + a[3 * i + 2] * up[2];
    const v05: number[] = [], v15: number[] = [], x025: number[] = [], x225: number[] = [];
    await run(await make(id, world), 135, (f, s) => {
      for (let k = 0; k < RAMP_FRICTIONS.length; k++) {
        if (f === 15) x025[k] = along(s.position, first + k);
        if (f === 30) v05[k] = along(s.linearVelocity, first + k);
        if (f === 90) v15[k] = along(s.linearVelocity, first + k);
        if (f === 135) x225[k] = along(s.position, first + k);
      }
    });
    RAMP_FRICTIONS.forEach((mu, k) => {
      if (Math.tan(th) > mu) {
        const a = -(v15[k] - v05[k]) / 1.0;
        const expected = g * (Math.sin(th) - mu * Math.cos(th));
        assert.ok(Math.abs(a / expected - 1) < 0.03, `μ ${mu}: a = ${a.toFixed(4)} m/s², expected ${expected.toFixed(4)}`);
      } else {
        const drift = Math.abs(x225[k] - x025[k]);
        assert.ok(drift < 1e-3, `μ ${mu} > tan θ: drifted ${drift.toExponential(2)} m in 2 s`);
      }
    });
  });
}

// --- restitution -----------------------------------------------------------------------------------

/*
 * restitution: spheres dropped from H = 2 m (lowest point above the ground). A bounce with e sends the
 * sphere back up at e v, so the apex after the first bounce is e² H (0.5 m for e = 0.5), within 5 %.
 * Time step: the velocity solvers meet the ground at the start of a step with the sphere up to |v| h
 * above it (a speculative contact catches it there), and the bounce leaves from that height: at 1/60 s
 * that is up to 10 cm (20 % of e² H). softstep-cpu's 4 substeps and xpbd-cpu's 10 close the gap first
 * (h = 1/240 and 1/600 s within the frame); pgs-cpu, si-soft-cpu and rapier run at dt = 1/240 s (gap ≤ 2.6 cm). With e = 0 the sphere
 * comes to rest: below 1 mm/s after 3 s, its lowest point within the slop (plus si-soft's soft
 * contact: 2 mm) of the ground.
 * avbd-cpu (one step of 10 iterations a frame, at dt = 1/240 s as the one-step solvers: the collision acts
 * on the velocities a step starts from, with the sphere up to |v| h above the ground, as theirs) bounces
 * by the shared collision propagation before its step (avbd/cpu.ts header); measured apex 1.010 e² H.
 * Before restitution was added to it (issue 24), avbd-cpu (made directly, past the registry's refusal)
 * never bounced: no sphere rose faster than 0.5 m/s.
 */
for (const id of [...WITH_RAPIER, 'avbd-cpu']) {
  test(`${id}: a sphere with e = 0.5 rebounds to e² of its drop height (5 %); with e = 0 it comes to rest`, async () => {
    const world = findRigidScene('restitution')!.build({ height: 2, radius: 0.5 });
    const n = world.bodies.length, first = n - 5; // e = 0, 0.25, 0.5, 0.75, 1
    const dt = id === 'softstep-cpu' || id === 'xpbd-cpu' ? 1 / 60 : 1 / 240; // the substepped solvers at their own h
    const H = 2, r = 0.5;
    let bounced = false, apex = NaN, lastVy = 0;
    let rest: Snapshot | null = null;
    await run(await make(id, world, { dt }), Math.round(3 / dt), (_, s) => {
      const i = first + 2;
      const vy = s.linearVelocity[3 * i + 1];
      if (vy > 0.5) bounced = true;
      if (bounced && Number.isNaN(apex) && lastVy > 0 && vy <= 0) apex = s.position[3 * i + 1] - r;
      lastVy = vy;
      rest = s;
    });
    assert.ok(Math.abs(apex / (0.25 * H) - 1) < 0.05, `apex ${apex.toFixed(4)} m, expected e²H = ${(0.25 * H).toFixed(4)} m`);
    const s = rest!;
    const speed = Math.hypot(s.linearVelocity[3 * first], s.linearVelocity[3 * first + 1], s.linearVelocity[3 * first + 2]);
    assert.ok(speed < 1e-3, `e = 0: still moving at ${speed.toExponential(2)} m/s after 3 s`);
    const gap = s.position[3 * first + 1] - r;
    assert.ok(gap > -(CONTACT_SLOP + 2e-3) && gap < 1e-3, `e = 0: rests ${gap.toExponential(2)} m from the ground`);
  });
}

/*
 * The same drop under the GPU contact solvers (f32; restitution by gpu-contacts.wgsl.ts cs_restitution, under
 * xpbd-gpu by xpbd-cpu's collision propagation, xpbd/contacts.wgsl.ts xc_collide and xc_apply, the same sweep),
 * shortened
 * to what the bounce needs on the software adapter: each sphere with e = 0.5, 0.75, 1 reaches e² H within 5 % at
 * its first apex (the last, e = 1, at 2 √(2H/g) = 1.28 s: 80 frames of 1/60 s), and the e = 0 sphere does not
 * bounce (it never rises faster than 1 cm/s after landing). All at h = 1/240 s, as softstep-cpu above:
 * softstep-gpu's and xpbd-gpu's 4 substeps, jacobi-gpu's contact default (⌈8 √(2 cm / L)⌉, at least 4) of the frame.
 */
for (const id of GPU_CONTACT_SOLVERS) {
  test(`${id}: spheres with e = 0.5, 0.75, 1 rebound to e² of their drop height (5 %); with e = 0 there is no bounce`, async () => {
    const world = findRigidScene('restitution')!.build({ height: 2, radius: 0.5 });
    const n = world.bodies.length, first = n - 5; // e = 0, 0.25, 0.5, 0.75, 1
    const H = 2, r = 0.5, es = [0.5, 0.75, 1];
    const apex = es.map(() => NaN), bounced = es.map(() => false), lastVy = es.map(() => 0);
    let rise = 0;
    await run(await make(id, world, { substeps: 4 }), 80, (_, s) => {
      es.forEach((e, k) => {
        const i = first + 2 + k, vy = s.linearVelocity[3 * i + 1];
        if (vy > 0.5) bounced[k] = true;
        if (bounced[k] && Number.isNaN(apex[k]) && lastVy[k] > 0 && vy <= 0) apex[k] = s.position[3 * i + 1] - r;
        lastVy[k] = vy;
      });
      if (s.position[3 * first + 1] - r < 0.01) rise = Math.max(rise, s.linearVelocity[3 * first + 1]);
    });
    es.forEach((e, k) => assert.ok(Math.abs(apex[k] / (e * e * H) - 1) < 0.05, `e = ${e}: apex ${apex[k].toFixed(4)} m, expected e²H = ${(e * e * H).toFixed(4)} m`));
    assert.ok(rise < 0.01, `e = 0: rose at ${rise.toFixed(4)} m/s after landing`);
  });
}

// --- stopping distance in 12 directions -----------------------------------------------------------

/*
 * A box (half extent 0.5 m, pair μ = 0.5) slid along the ground at v = 3 m/s stops after
 * d = v² / (2 μ g) = 0.917 m (the friction force μ m g is constant while it slides), within 5 %;
 * and the same in every direction: 12 directions, 30° apart (offset 0.1 rad from the axes), agree to
 * within 0.5 % — friction is a disc, not a pyramid (a pyramid's box [−μλ, μλ]² would let a box sliding
 * at 45° to the tangents go √2 times less far). The one-step solvers lose v h / 2 to the time step
 * (semi-implicit Euler: d_h = d − v h/2, 2.7 % at 1/60 s).
 */
for (const id of [...WITH_RAPIER, 'avbd-cpu', ...GPU_CONTACT_SOLVERS]) {
  test(`${id}: a box slid in 12 directions stops after v²/(2μg) (5 %), the same in every direction (0.5 %)`, async () => {
    const mu = 0.5, v0 = 3, d = (v0 * v0) / (2 * mu * g);
    // the 12 boxes in one world, 4 m apart on one ground (each slides 0.92 m: they never meet, and the
    // fixed ground couples no two of them), so one run covers the 12 directions
    const at = (k: number): [number, number, number] => [4 * (k % 4), 0.5, 4 * Math.floor(k / 4)];
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      bodies: [
        ground(mu),
        ...Array.from({ length: 12 }, (_, k) => {
          const a = (2 * Math.PI * k) / 12 + 0.1;
          return { shape: { type: 'box' as const, halfExtents: [0.5, 0.5, 0.5] as [number, number, number] }, density: 1000, friction: mu, position: at(k), linearVelocity: [v0 * Math.cos(a), 0, v0 * Math.sin(a)] as [number, number, number] };
        }),
      ],
      constraints: [],
    };
    let last: Snapshot | null = null;
    await run(await make(id, world), 120, (_, s) => (last = s)); // each stops after v/(μg) = 0.61 s
    const s = last!;
    const ratios: number[] = [];
    for (let k = 0; k < 12; k++) {
      const i = 3 * (k + 1), p0 = at(k);
      assert.ok(Math.hypot(s.linearVelocity[i], s.linearVelocity[i + 2]) < 1e-3, `${k}: still sliding`);
      ratios.push(Math.hypot(s.position[i] - p0[0], s.position[i + 2] - p0[2]) / d);
    }
    for (const r of ratios) assert.ok(Math.abs(r - 1) < 0.05, `stopped after ${r.toFixed(4)} d`);
    const spread = Math.max(...ratios) / Math.min(...ratios) - 1;
    assert.ok(spread < 0.005, `directions differ by ${(100 * spread).toFixed(3)} %: ${ratios.map((r) => r.toFixed(4)).join(' ')}`);
  });
}

// --- rolling ------------------------------------------------------------------------------------------

/*
 * A solid sphere launched sliding at v₀ with no spin: friction μ m g slows it and spins it up until
 * v = ω r; angular momentum about the contact point is kept (friction acts through it), so
 * m v₀ r = m v r + (2/5) m r² ω = (7/5) m v r: it ends rolling at v = 5/7 v₀, within 2 %, with ω r = v.
 */
for (const id of [...WITH_RAPIER, 'avbd-cpu', ...GPU_CONTACT_SOLVERS]) {
  test(`${id}: a sphere launched sliding without spin ends rolling at 5/7 of its speed (2 %)`, async () => {
    const world = findRigidScene('rolling')!.build({ speed: 5, friction: 0.3, radius: 0.5 });
    const i = world.bodies.length - 1;
    let last: Snapshot | null = null;
    await run(await make(id, world), 150, (_, s) => (last = s)); // sliding lasts 2 v₀/(7 μ g) = 0.49 s
    const s = last!;
    const v = s.linearVelocity[3 * i];
    assert.ok(Math.abs(v / (5 * (5 / 7)) - 1) < 0.02, `ends at ${(v / 5).toFixed(4)} v₀, expected ${(5 / 7).toFixed(4)}`);
    const spin = -s.angularVelocity[3 * i + 2] * 0.5;
    assert.ok(Math.abs(spin / v - 1) < 0.02, `ω r = ${spin.toFixed(4)} m/s against v = ${v.toFixed(4)} m/s: not rolling`);
  });
}

// --- at rest ------------------------------------------------------------------------------------------

/*
 * A box resting on the ground stays: over 10 s it creeps less than 0.1 mm sideways and its deepest
 * point stays within the slop (5 mm) of the surface. A soft contact sinks further by its spring's
 * static deflection λ / (m_eff ω²) (rows/softness.ts S3 at rest): per corner λ = m g / 4 with
 * m_eff = m / 4 (1/m plus the corner's lever arm, 3/m, for a cube), so g / ω². si-soft-cpu's spring is
 * 15 Hz (30 Hz capped at a quarter of 60 Hz): 1.1 mm beyond its slop; softstep-cpu has no slop and
 * twice 30 Hz against the fixed ground: 0.07 mm.
 */
for (const id of [...WITH_RAPIER, 'gs-cpu', 'avbd-cpu', ...GPU_CONTACT_SOLVERS, 'gs-gpu']) {
  test(`${id}: a box at rest on the ground stays within the slop of the surface and does not creep over 10 s`, async () => {
    const world: WorldDesc = { gravity: [0, -g, 0], bodies: [ground(), { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0.5, 0] }], constraints: [] };
    const metrics = new MetricsContext(world);
    let deepest = 0, last: Snapshot | null = null;
    await run(await make(id, world), 600, (_, s) => {
      deepest = Math.max(deepest, metrics.measure(s).maxPenetration ?? NaN);
      last = s;
    });
    const deflection = id === 'si-soft-cpu' ? g / (2 * Math.PI * 15) ** 2 : 0;
    assert.ok(deepest <= CONTACT_SLOP + 1.02 * deflection, `penetration ${deepest.toExponential(3)} m beyond the slop (+ ${deflection.toExponential(3)} m)`);
    const creep = Math.hypot(last!.position[3], last!.position[5]);
    assert.ok(creep < 1e-4, `crept ${creep.toExponential(2)} m`);
  });
}

// --- a stack of ten ---------------------------------------------------------------------------------

/*
 * vertical-stack of 10 unit boxes (alternately offset ±1 cm). Once settled (after 1 s) the top box
 * creeps less than 1 cm over the next 9 s, and no contact sinks deeper than the slop plus 1 mm.
 *   softstep-cpu at its defaults: a soft contact under a load λ sinks λ / (m_eff ω²) (rows/softness.ts
 *     S3 at rest); the contact under the top nine boxes carries 9 m g / 4 per corner with m_eff = m/8, so
 *     18 g / ω² = 5.0 mm at 30 Hz (no slop in the soft step).
 *   pgs-cpu with 4 substeps: rigid contacts within the slop; one step of 10 sweeps at 1/60 s does not
 *     converge a stack this tall (measured: the top sways ±2 cm), four substeps do.
 */
for (const [id, asked] of [['softstep-cpu', {}], ['pgs-cpu', { substeps: 4 }], ['xpbd-cpu', {}], ['avbd-cpu', {}]] as const) {
  test(`${id}: a 10-box stack holds: the top box creeps < 1 cm from 1 s to 10 s, no contact deeper than the slop + 1 mm`, async () => {
    const world = findRigidScene('vertical-stack')!.build({ boxes: 10 });
    const top = world.bodies.length - 1;
    const metrics = new MetricsContext(world);
    let at1: number[] = [], deepest = 0, last: Snapshot | null = null;
    await run(await make(id, world, asked), 600, (f, s) => {
      if (f === 60) at1 = [s.position[3 * top], s.position[3 * top + 1], s.position[3 * top + 2]];
      if (f >= 60) deepest = Math.max(deepest, metrics.measure(s).maxPenetration ?? NaN);
      last = s;
    });
    const p = last!.position;
    const creep = Math.hypot(p[3 * top] - at1[0], p[3 * top + 1] - at1[1], p[3 * top + 2] - at1[2]);
    assert.ok(creep < 0.01, `the top box crept ${creep.toExponential(2)} m`);
    assert.ok(deepest < CONTACT_SLOP + 1e-3, `a contact sank ${deepest.toExponential(3)} m`);
  });
}

// --- residual channels, jacobi and gs on contacts, files -------------------------------------------------

test('pgs-cpu reports the contact rows\' residual in two channels, normal and friction, each falling over the sweeps', async () => {
  const world = findRigidScene('pyramid')!.build({ base: 3 });
  const solver = await make('pgs-cpu', world);
  await solver.step(30);
  const curve = await solver.stepRecordingResiduals!();
  for (const channel of [CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL]) {
    const c = curve.channels[channel];
    assert.ok(c && c.length === solver.options.iterations + 1 && c.every(Number.isFinite), `${channel}: ${c}`);
    assert.ok(c[c.length - 1] < c[0], `${channel}: the residual does not fall (${c[0]} → ${c[c.length - 1]})`);
  }
  solver.destroy();
});

test('a contact scene exported to a file and run from it steps to the same state hash', async () => {
  for (const name of ['pyramid', 'friction-ramp']) {
    const scene = findRigidScene(name)!;
    const built = scene.build(name === 'pyramid' ? { base: 4 } : {});
    const fromFile = parseSceneFile(sceneFileJson(built, { name })).world;
    const hashes: string[] = [];
    for (const w of [built, fromFile]) {
      const solver = await make('softstep-cpu', w);
      await solver.step(40);
      hashes.push(stateHash(await solver.snapshot()));
      solver.destroy();
    }
    assert.equal(hashes[1], hashes[0], `${name}: the file's run differs`);
  }
});

/*
 * Which pairs collide (model/schema.ts): bodies joined by a joint never do, and `collisions: false`
 * turns all contacts off. Two spheres overlapping by 5 cm, joined by a point joint at their common
 * centre of overlap, with no gravity: a contact would push them apart at up to 3 m/s; the joint keeps
 * them where they are. The same pair without the joint is pushed apart; with collisions off it is not.
 */
test('bodies joined by a joint do not collide, unjoined ones do, and collisions: false turns contacts off', async () => {
  const pair = (joined: boolean, collisions?: boolean): WorldDesc => ({
    gravity: [0, 0, 0],
    ...(collisions !== undefined ? { collisions } : {}),
    bodies: [
      { shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0, 0, 0] },
      { shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0.95, 0, 0] },
    ],
    constraints: joined ? [{ type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.475, 0, 0], anchorB: [-0.475, 0, 0] }] : [],
  });
  for (const id of CONTACT_SOLVERS) {
    const gap = async (w: WorldDesc) => {
      let last: Snapshot | null = null;
      await run(await make(id, w), 30, (_, s) => (last = s));
      return last!.position[3] - last!.position[0] - 1; // centre distance − 2r
    };
    assert.ok(Math.abs((await gap(pair(true))) + 0.05) < 1e-6, `${id}: the joined pair was pushed apart`);
    assert.ok((await gap(pair(false))) > -0.005, `${id}: the unjoined pair still overlaps beyond the slop`);
    assert.ok(Math.abs((await gap(pair(false, false))) + 0.05) < 1e-12, `${id}: collisions off, yet the pair moved`);
  }
});

/*
 * Speculative contacts: a small sphere (r = 5 cm) falling at 20 m/s onto a thin box (2 cm thick) moves
 * 33 cm per frame at 1/60 s, far more than both are thick; without a speculative margin it would pass
 * through between two frames. Its centre must never get below the box's top face, and it must end up
 * resting on the box (its lowest point within 1 cm of the top face: the soft solvers' impact sinks
 * the sphere a few mm into the box before the spring pushes it back out).
 */
test('a fast sphere does not tunnel through a thin box at 1/60 s (speculative contacts)', async () => {
  for (const id of [...CONTACT_SOLVERS, 'gs-cpu']) {
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      bodies: [
        { shape: { type: 'box', halfExtents: [1, 0.01, 1] }, fixed: true, position: [0, 0, 0] },
        { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0, 1, 0], linearVelocity: [0, -20, 0] },
      ],
      constraints: [],
    };
    let minY = Infinity, lastY = NaN;
    await run(await make(id, world), 60, (_, s) => {
      minY = Math.min(minY, s.position[4]);
      lastY = s.position[4];
    });
    assert.ok(minY > 0.01, `${id}: the sphere's centre reached y = ${minY.toFixed(4)} m, below the box's top face (0.01 m)`);
    assert.ok(Math.abs(lastY - 0.06) < 0.01, `${id}: the sphere ends at y = ${lastY.toFixed(4)} m, not resting on the box (0.06 m)`);
  }
});
