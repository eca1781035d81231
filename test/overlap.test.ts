/**
 * Overlapping bodies are pushed apart at a bounded speed under every contact solver (issue 21, item 6):
 * a contact's push-out is capped at v_push = 3 m/s along its normal (rows/block-solver.ts MAX_PUSHOUT for
 * the velocity solvers, Box2D v3's contactPushMaxVelocity; xpbd's PUSH_OUT_SPEED), so
 *   - two equal spheres created 0.2 m deep in each other, no gravity: the gap grows by at most
 *     v_push · dt a frame (0.05 m at 1/60 s; +1e-9 m for rounding), and neither moves faster than v_push;
 *   - overlap-recovery (4 boxes, each 1/4 of its height into the one below, the first into the ground):
 *     each of the 4 contacts under the top box may add v_push to it, so no box moves faster than
 *     4 v_push + g · 2 s (the gravity of the run's 2 s, which it can also have gained falling back).
 * Registry defaults at 1/60 s (given the scene), sleeping off. xpbd-cpu's own test
 * (test/xpbd-overlap.test.ts) holds it to tighter bounds of its own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { MAX_PUSHOUT } from '../src/rows/block-solver.js';
import { PUSH_OUT_SPEED } from '../src/solvers/xpbd/contacts.js';
import type { WorldDesc } from '../src/model/world.js';

const SOLVERS = ['softstep-cpu', 'pgs-cpu', 'si-soft-cpu', 'gs-cpu', 'jacobi-cpu', 'xpbd-cpu'];
assert.equal(PUSH_OUT_SPEED, MAX_PUSHOUT, 'one push-out bound for every contact solver');
const V_PUSH = MAX_PUSHOUT;

function speeds(v: Float64Array, n: number): number {
  let most = 0;
  for (let i = 0; i < n; i++) most = Math.max(most, Math.hypot(v[3 * i], v[3 * i + 1], v[3 * i + 2]));
  return most;
}

for (const id of SOLVERS) {
  test(`${id}: two spheres 0.2 m deep in each other part at no more than v_push = ${V_PUSH} m/s`, async () => {
    const r = 0.5;
    const world: WorldDesc = {
      gravity: [0, 0, 0],
      collisions: true,
      bodies: [
        { shape: { type: 'sphere', radius: r }, density: 1000, position: [0, 0, 0] },
        { shape: { type: 'sphere', radius: r }, density: 1000, position: [2 * r - 0.2, 0, 0] },
      ],
      constraints: [],
    };
    const info = findSolver(id)!;
    const s = await info.create(world, resolveOptions(info, { sleep: 0 }, world));
    const dt = s.options.dt;
    let prev = 2 * r - 0.2 - 2 * r, fastest = 0;
    for (let f = 1; f <= 30; f++) {
      await s.step(1);
      const snap = await s.snapshot();
      const p = snap.position;
      const gap = Math.hypot(p[3] - p[0], p[4] - p[1], p[5] - p[2]) - 2 * r;
      assert.ok(gap - prev <= V_PUSH * dt + 1e-9, `frame ${f}: the gap grew ${(gap - prev).toFixed(4)} m, more than v_push dt = ${V_PUSH * dt} m`);
      prev = gap;
      fastest = Math.max(fastest, speeds(snap.linearVelocity, 2));
    }
    assert.ok(fastest <= V_PUSH + 1e-9, `a sphere moved at ${fastest} m/s`);
    assert.ok(prev > -0.01, `still ${(-prev).toFixed(3)} m deep after 0.5 s`);
    s.destroy();
  });

  test(`${id}: overlap-recovery's stack is pushed apart at no more than 4 v_push (one per overlapped contact below the top)`, async () => {
    const world = findRigidScene('overlap-recovery')!.build({});
    const info = findSolver(id)!;
    const s = await info.create(world, resolveOptions(info, { sleep: 0 }, world));
    const frames = 120, bound = 4 * V_PUSH + 9.81 * frames * s.options.dt;
    let fastest = 0;
    for (let f = 1; f <= frames; f++) {
      await s.step(1);
      const snap = await s.snapshot();
      fastest = Math.max(fastest, speeds(snap.linearVelocity, snap.bodyCount));
    }
    assert.ok(fastest <= bound, `a box moved at ${fastest.toFixed(2)} m/s, beyond ${bound.toFixed(2)} m/s`);
    s.destroy();
  });
}
