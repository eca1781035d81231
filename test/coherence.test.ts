/**
 * Coherence (collision/manifolds.ts refresh): a pair that has barely moved relative to itself since its
 * last narrow phase keeps its manifold's points, carried with the bodies, instead of a new narrow phase
 * (Rapier's parry does the same). Checked, each with its tolerance:
 *   - box on a plane: every point is a box vertex and its foot on the plane, so a refreshed manifold is
 *     the narrow phase's to rounding (1e-12 m): the same keys, separations and lever arms;
 *   - the bounds: a relative turn past 2 slop / R about a tangent, a slide past COHERENCE_DRIFT · slop,
 *     or a point changing side sends the pair back to the narrow phase; moves within them do not;
 *   - whole runs: softstep-cpu, pgs-cpu and jacobi-cpu (at their contact defaults) on a stack and a pyramid (sleeping off, 3 s), with and
 *     without coherence, end with every box within 1 mm of each other (a tenth of the piles' 1 cm creep
 *     target; measured 0.003–0.16 mm), while most pairs were refreshed (so the comparison means something).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CollisionPipeline, COHERENCE_DRIFT, pairSlop } from '../src/collision/pipeline.js';
import { ContactList } from '../src/rows/contact.js';
import { loadScene } from '../src/scenes/load.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import type { BodyDesc, WorldDesc } from '../src/model/world.js';
import { mulberry32 } from '../src/math/random.js';

const H = 0.5; // box half extent, m
const yawQ = (yaw: number): [number, number, number, number] => [0, Math.sin(yaw / 2), 0, Math.cos(yaw / 2)];

/** q = exp(θ/2 axis) ⊗ q0 */
function turned(q0: ArrayLike<number>, axis: [number, number, number], angle: number): number[] {
  const s = Math.sin(angle / 2), c = Math.cos(angle / 2);
  const ax = axis[0] * s, ay = axis[1] * s, az = axis[2] * s, aw = c;
  const [bx, by, bz, bw] = [q0[0], q0[1], q0[2], q0[3]];
  return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz];
}

function detector(bodies: BodyDesc[], coherent: boolean) {
  const inv = new Float64Array(bodies.map((b) => (b.fixed ? 0 : 1)));
  const p = new CollisionPipeline(bodies, inv);
  p.coherence = coherent;
  const list = new ContactList();
  const n = bodies.length;
  const zero = new Float64Array(3 * n);
  return {
    pipeline: p,
    list,
    detect(position: Float64Array, orientation: Float64Array) {
      p.detect(position, orientation, zero, zero, 1 / 60, list, null, 9.81);
      return p.refreshed;
    },
  };
}

test('box on a plane: a refreshed manifold is the narrow phase\'s to rounding (1e-12 m)', () => {
  const bodies: BodyDesc[] = [
    { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
    { shape: { type: 'box', halfExtents: [H, H, H] }, position: [0, H, 0], orientation: yawQ(0.3) },
  ];
  const coherent = detector(bodies, true), fresh = detector(bodies, false);
  const position = new Float64Array([0, 0, 0, 0, H - 0.003, 0]);
  const q0 = yawQ(0.3);
  const orientation = new Float64Array([0, 0, 0, 1, ...q0]);
  coherent.detect(position, orientation);
  const slop = pairSlop(Infinity, H);
  const turnBound = (2 * slop) / Math.hypot(H, H, H);
  const next = mulberry32(7);
  let refreshed = 0;
  for (let k = 0; k < 40; k++) {
    // moves well inside the bounds: a slide of ≤ 0.3 · COHERENCE_DRIFT · slop, and a tilt that slides the
    // bottom vertices (lever H below the centre) by ≤ 0.3 · COHERENCE_DRIFT · slop more
    position[3] = 0.3 * COHERENCE_DRIFT * slop * (2 * next() - 1) / Math.SQRT2;
    position[5] = 0.3 * COHERENCE_DRIFT * slop * (2 * next() - 1) / Math.SQRT2;
    position[4] = H - 0.003 + 0.0005 * (2 * next() - 1);
    orientation.set(turned(q0, [1, 0, 0], Math.min(turnBound, (0.3 * COHERENCE_DRIFT * slop) / H) * (2 * next() - 1)), 4);
    refreshed += coherent.detect(position, orientation);
    fresh.detect(position, orientation);
    const a = coherent.list, b = fresh.list;
    assert.equal(a.count, b.count);
    for (let c = 0; c < a.count; c++) {
      assert.equal(a.key[c], b.key[c], `step ${k}, point ${c}: key`);
      assert.ok(Math.abs(a.separation[c] - b.separation[c]) <= 1e-12, `step ${k}, point ${c}: s ${a.separation[c]} vs ${b.separation[c]}`);
      for (let i = 0; i < 3; i++) {
        assert.ok(Math.abs(a.armA[3 * c + i] - b.armA[3 * c + i]) <= 1e-12, `step ${k}, point ${c}: r_A`);
        assert.ok(Math.abs(a.armB[3 * c + i] - b.armB[3 * c + i]) <= 1e-12, `step ${k}, point ${c}: r_B`);
        assert.ok(Math.abs(a.normal[3 * c + i] - b.normal[3 * c + i]) <= 1e-15, `step ${k}, point ${c}: n`);
      }
    }
  }
  assert.ok(refreshed >= 35, `refreshed ${refreshed} of 40 steps (the moves are within the bounds)`);
});

test('box on a box: a turn past 2 slop / R, a slide past COHERENCE_DRIFT · slop or a point changing side goes back to the narrow phase', () => {
  const bodies: BodyDesc[] = [
    { shape: { type: 'box', halfExtents: [H, H, H] }, fixed: true, position: [0, H, 0] },
    { shape: { type: 'box', halfExtents: [H, H, H] }, position: [0.2, 3 * H, 0], orientation: yawQ(0.2) },
  ];
  const slop = pairSlop(H, H);
  const turnBound = (2 * slop) / Math.hypot(H, H, H);
  const q0 = yawQ(0.2);
  const run = (dx: number, tilt: number, dy: number) => {
    const d = detector(bodies, true);
    const position = new Float64Array([0, H, 0, 0.2, 3 * H - 0.001, 0]);
    const orientation = new Float64Array([0, 0, 0, 1, ...q0]);
    d.detect(position, orientation);
    assert.equal(d.list.count, 4, 'a face contact of 4 points');
    position[3] += dx;
    position[4] += dy;
    orientation.set(turned(q0, [0, 0, 1], tilt), 4);
    return d.detect(position, orientation);
  };
  assert.equal(run(0.5 * COHERENCE_DRIFT * slop, 0, 0), 1, 'a slide within the bound is refreshed');
  assert.equal(run(2 * COHERENCE_DRIFT * slop, 0, 0), 0, 'a slide past the bound is not');
  // a tilt θ about z slides the contact points (H below the top box's centre) by about H θ: the
  // slide bound is the tighter one here (θ ≤ COHERENCE_DRIFT · slop / H = 1e-3 rad against 2 slop / R = 1.2e-2)
  const tiltBound = Math.min(turnBound, (COHERENCE_DRIFT * slop) / H);
  assert.equal(run(0, 0.5 * tiltBound, 0), 1, 'a tilt within the bounds is refreshed');
  assert.equal(run(0, 2 * tiltBound, 0), 0, 'a tilt past them is not');
  assert.equal(run(0, 2 * turnBound, 0), 0, 'nor one past the turn bound');
  assert.equal(run(0, 0, 0.002), 0, 'the points leaving overlap (s from −1 mm to +1 mm) are not');
});

async function finalPositions(id: string, world: WorldDesc, coherent: boolean): Promise<{ position: Float64Array; refreshedShare: number }> {
  const info = findSolver(id)!;
  const solver = (await info.create(world, resolveOptions(info, { sleep: 0 }, world))) as never as {
    collision: CollisionPipeline;
    step(n: number): Promise<void>;
    snapshot(): Promise<{ position: Float64Array }>;
  };
  solver.collision.coherence = coherent;
  let touching = 0, refreshed = 0;
  for (let f = 0; f < 180; f++) {
    await solver.step(1);
    touching += solver.collision.touching;
    refreshed += solver.collision.refreshed;
  }
  return { position: (await solver.snapshot()).position, refreshedShare: refreshed / touching };
}

for (const id of ['softstep-cpu', 'pgs-cpu', 'jacobi-cpu']) {
  for (const [name, params] of [['vertical-stack', { boxes: 6 }], ['pyramid', { base: 6 }]] as const) {
    test(`${id}, ${name}: with and without coherence every box ends within 1 mm (3 s, sleeping off)`, async () => {
      const world = loadScene(name, params as never).world as WorldDesc;
      const on = await finalPositions(id, world, true);
      const off = await finalPositions(id, world, false);
      let worst = 0;
      for (let i = 0; i < on.position.length; i++) worst = Math.max(worst, Math.abs(on.position[i] - off.position[i]));
      assert.ok(worst < 1e-3, `the runs part by ${(worst * 1000).toFixed(3)} mm`);
      assert.ok(on.refreshedShare > 0.5, `only ${(100 * on.refreshedShare).toFixed(0)} % of the touching pairs were refreshed`);
    });
  }
}
