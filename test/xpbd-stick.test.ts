/**
 * xpbd-cpu's static friction near the Coulomb limit (xpbd/contacts.ts, restickBlock).
 *
 * A box of μ_s = μ_d = 0.5 on a ramp of slope θ: Coulomb holds it iff tan θ ≤ μ_s (the friction it
 * needs, m g sin θ, against μ_s m g cos θ), whatever the distribution of the forces over its four
 * corners, which rigid-body mechanics leaves open (a face's 12 rows have rank 6): one inside every
 * corner's cone exists, each corner carrying tan θ of its normal force.
 *   - tan θ = 0.4954 (θ = 0.46, 0.991 μ_s): it rests. Before restickBlock, the disc-projected block,
 *     started from λ_t = 0, stopped with every corner on its disc and lateral parts cancelling over the
 *     corners, and the box slid at ~20 mm/s (49.7 mm in 2 s); softstep-cpu, pgs-cpu and Rapier hold it.
 *     Bound: < 1 mm in 2 s after 0.25 s of settling (test/static-friction.test.ts's rest bound;
 *     measured 0.000 mm).
 *   - tan θ = 0.5080 (θ = 0.47, 1.016 μ_s): it slides, a = g (sin θ − μ_d cos θ) = 0.0695 m/s², so
 *     from rest at 0.25 s it moves ½ a (2.25² − 0.25²) s² = 174 mm by 2.25 s. The second stick test
 *     must not hold a box that Coulomb lets slide: bound > 87 mm (half of it; the sliding acceleration
 *     itself is static-friction.test.ts's subject).
 * 1 m box (density 1000), 1/60 s, xpbd-cpu's registry defaults, sleeping off.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import type { Quat, Vec3, WorldDesc } from '../src/model/world.js';
import { parseSceneFile } from '../src/model/schema.js';

const MU = 0.5, HALF = 0.5;

function ramp(th: number): WorldDesc {
  const q: Quat = [0, 0, Math.sin(th / 2), Math.cos(th / 2)];
  const t: Vec3 = [Math.cos(th), Math.sin(th), 0], n: Vec3 = [-Math.sin(th), Math.cos(th), 0];
  // pair μ = √(μ_ramp μ_box) with the ramp's 1: the box's own value is the square
  const desc = {
    gravity: [0, -9.81, 0],
    collisions: true,
    constraints: [],
    bodies: [
      { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], orientation: q, friction: 1 },
      { shape: { type: 'box', halfExtents: [HALF, HALF, HALF] }, density: 1000, position: [3 * t[0] + HALF * n[0], 3 * t[1] + HALF * n[1], 0], orientation: [...q], friction: MU * MU },
    ],
  };
  return parseSceneFile(JSON.stringify(desc)).world;
}

/** The box's travel along the slope from 0.25 s to 2.25 s (m). */
async function travel(th: number): Promise<number> {
  const info = findSolver('xpbd-cpu')!;
  const solver = await info.create(ramp(th), resolveOptions(info, { sleep: 0 }));
  const along = (p: Float64Array) => p[3] * Math.cos(th) + p[4] * Math.sin(th);
  let x0 = 0, x1 = 0;
  for (let f = 1; f <= 135; f++) {
    await solver.step(1);
    if (f === 15) x0 = along((await solver.snapshot()).position);
    if (f === 135) x1 = along((await solver.snapshot()).position);
  }
  solver.destroy();
  return Math.abs(x1 - x0);
}

test('xpbd-cpu: a box at tan θ = 0.991 μ_s rests (< 1 mm in 2 s); at 1.016 μ_s it slides (> 87 mm)', async () => {
  const held = await travel(0.46);
  assert.ok(held < 1e-3, `tan θ = ${Math.tan(0.46).toFixed(4)} < μ_s = ${MU}: the box moved ${(held * 1e3).toFixed(3)} mm in 2 s`);
  const slid = await travel(0.47);
  assert.ok(slid > 0.087, `tan θ = ${Math.tan(0.47).toFixed(4)} > μ_s = ${MU}: the box moved only ${(slid * 1e3).toFixed(1)} mm in 2 s`);
});
