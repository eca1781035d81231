/**
 * Static against dynamic friction (scene fields `staticFriction` μ_s and `dynamicFriction` μ_d;
 * rows/contact.ts K2 for the velocity solvers, xpbd/contacts.ts for XPBD).
 *
 * Coulomb's two laws on a ramp of slope θ with μ_s > tan θ > μ_d: a box at rest needs the friction
 * m g sin θ ≤ μ_s m g cos θ to stay, so it stays; nudged, it slides, and a sliding box feels μ_d:
 *   a = g (sin θ − μ_d cos θ)  down the slope,
 * which is positive here (tan θ > μ_d): once moving it never stops. A solver that used μ_s for both
 * would stop the nudged box (it decelerates at g (μ_s cos θ − sin θ)); one that used μ_d for both
 * would not hold the box at rest. So each half fails for one of the two mistakes.
 *
 * The nudge: the state after the rest phase is taken from the snapshot (poses and velocities) and the
 * box is given a speed down the slope (0.1 or 0.03 m/s); a fresh solver runs from there (our solvers have no call that
 * changes a body's velocity between steps). a is measured from the velocity along the slope 0.5 s and
 * 1.5 s after the nudge, within 3 % (the figure).
 *
 * Solvers: every CPU contact solver that takes μ_s and μ_d (xpbd-cpu, softstep-cpu, pgs-cpu,
 * si-soft-cpu, gs-cpu), each at its registry defaults at 1/60 s with sleeping off (a sleeping box would
 * stay trivially). Rapier has one friction coefficient (it is given μ_d), so it is not in this test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type Snapshot } from '../src/solvers/solver.js';
import type { BodyDesc, Quat, Vec3, WorldDesc } from '../src/model/world.js';
import { parseSceneFile } from '../src/model/schema.js';

const g = 9.81;
const MU_S = 0.5, MU_D = 0.15; // pair values: μ_s > tan θ > μ_d
const HALF = 0.25; // the box's half extent, m
/**
 * Two slopes: tan θ = 0.309 nudged at 0.1 m/s, and tan θ = 0.471 (0.94 μ_s: the static friction
 * nearly used up) nudged at 0.03 m/s (3× the 1 cm/s below which the velocity solvers take a contact
 * as resting: rows/contact.ts STATIC_SLIP_SPEED).
 */
const CASES = [
  { th: 0.3, nudge: 0.1 },
  { th: 0.44, nudge: 0.03 },
];

/** The ramp (a plane turned by θ about z, μ 1 both ways) and a box resting on it 3 m up the slope. */
function world(TH: number, state: Snapshot | null, nudge: number): WorldDesc {
  const q: Quat = [0, 0, Math.sin(TH / 2), Math.cos(TH / 2)];
  const t: Vec3 = [Math.cos(TH), Math.sin(TH), 0], n: Vec3 = [-Math.sin(TH), Math.cos(TH), 0];
  // pair μ = √(μ_ramp μ_box) with the ramp's 1: the box's own values are the squares
  const box: BodyDesc = {
    shape: { type: 'box', halfExtents: [HALF, HALF, HALF] },
    density: 1000,
    position: [3 * t[0] + HALF * n[0], 3 * t[1] + HALF * n[1], 0],
    orientation: [...q],
    staticFriction: MU_S * MU_S,
    dynamicFriction: MU_D * MU_D,
  };
  if (state) {
    box.position = [state.position[3], state.position[4], state.position[5]];
    box.orientation = [state.orientation[4], state.orientation[5], state.orientation[6], state.orientation[7]];
    box.linearVelocity = [state.linearVelocity[3] - nudge * t[0], state.linearVelocity[4] - nudge * t[1], state.linearVelocity[5]];
    box.angularVelocity = [state.angularVelocity[3], state.angularVelocity[4], state.angularVelocity[5]];
  }
  const desc: WorldDesc = {
    gravity: [0, -g, 0],
    collisions: true,
    bodies: [{ shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], orientation: q, staticFriction: 1, dynamicFriction: 1 }, box],
    constraints: [],
  };
  // through the scene-file schema, as a file would come
  return parseSceneFile(JSON.stringify(desc)).world;
}

for (const id of ['xpbd-cpu', 'softstep-cpu', 'pgs-cpu', 'si-soft-cpu', 'gs-cpu']) for (const { th: TH, nudge } of CASES) {
  const along = (a: Float64Array) => a[3] * Math.cos(TH) + a[4] * Math.sin(TH);
  test(`${id}: μ_s ${MU_S} > tan θ ${Math.tan(TH).toFixed(3)} > μ_d ${MU_D}: the box rests (< 1 mm in 2 s) until nudged at ${nudge} m/s, then slides at g(sin θ − μ_d cos θ) (3 %)`, async () => {
    const info = findSolver(id)!;
    const options = resolveOptions(info, { sleep: 0 });
    // rest: 0.25 s to settle, then the drift along the slope over 2 s
    const rest = await info.create(world(TH, null, 0), options);
    let x0 = 0, last: Snapshot | null = null;
    for (let f = 1; f <= 135; f++) {
      await rest.step(1);
      last = await rest.snapshot();
      if (f === 15) x0 = along(last.position);
    }
    rest.destroy();
    const drift = Math.abs(along(last!.position) - x0);
    assert.ok(drift < 1e-3, `at rest the box moved ${(drift * 1e3).toFixed(3)} mm along the slope in 2 s`);
    // nudged down the slope
    const slide = await info.create(world(TH, last, nudge), options);
    let v05 = 0, v15 = 0;
    for (let f = 1; f <= 90; f++) {
      await slide.step(1);
      const s = await slide.snapshot();
      if (f === 30) v05 = -along(s.linearVelocity);
      if (f === 90) v15 = -along(s.linearVelocity);
    }
    slide.destroy();
    const a = (v15 - v05) / 1.0;
    const expected = g * (Math.sin(TH) - MU_D * Math.cos(TH));
    assert.ok(Math.abs(a / expected - 1) < 0.03, `nudged: a = ${a.toFixed(4)} m/s², expected g(sin θ − μ_d cos θ) = ${expected.toFixed(4)}`);
  });
}

test('a body that gives only `friction` uses it for both μ_s and μ_d; the pair combines each as √(μA μB)', async () => {
  const { CollisionPipeline } = await import('../src/collision/pipeline.js');
  const bodies: BodyDesc[] = [
    { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], friction: 0.9 },
    { shape: { type: 'sphere', radius: 0.5 }, density: 1, position: [0, 0.49, 0], staticFriction: 0.4, dynamicFriction: 0.1 },
    { shape: { type: 'sphere', radius: 0.5 }, density: 1, position: [3, 0.49, 0], friction: 0.25 },
  ];
  const desc = parseSceneFile(JSON.stringify({ gravity: [0, -g, 0], bodies, constraints: [] })).world;
  const pipeline = new CollisionPipeline(desc.bodies, new Float64Array([0, 1, 1]));
  assert.deepEqual([...pipeline.staticFriction], [0.9, 0.4, 0.25]);
  assert.deepEqual([...pipeline.friction], [0.9, 0.1, 0.25]);
});
