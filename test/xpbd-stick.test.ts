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
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';

const MU = 0.5, HALF = 0.5;

function ramp(th: number, speed = 0): WorldDesc {
  const q: Quat = [0, 0, Math.sin(th / 2), Math.cos(th / 2)];
  const t: Vec3 = [Math.cos(th), Math.sin(th), 0], n: Vec3 = [-Math.sin(th), Math.cos(th), 0];
  // pair μ = √(μ_ramp μ_box) with the ramp's 1: the box's own value is the square
  const desc = {
    gravity: [0, -9.81, 0],
    collisions: true,
    constraints: [],
    bodies: [
      { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], orientation: q, friction: 1 },
      { shape: { type: 'box', halfExtents: [HALF, HALF, HALF] }, density: 1000, position: [3 * t[0] + HALF * n[0], 3 * t[1] + HALF * n[1], 0], orientation: [...q], friction: MU * MU, linearVelocity: [-speed * t[0], -speed * t[1], 0] },
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

/**
 * The largest |f_t| / (μ_s f_n) (the share of its disc a point uses) over the points of body `b`'s
 * manifolds (the forces the frame stored on the manifold records: collision/manifolds.ts), for the
 * points with f_n > 0.
 */
function worstShare(solver: any, b: number): number {
  const list = solver.contacts, store = solver.collision.manifolds;
  let worst = 0;
  for (let c = 0; c < list.count; c++) {
    if (list.bodyB[c] !== b) continue;
    const p = list.manifoldPoint[c], fn = store.normalImpulse[p];
    if (fn > 0) worst = Math.max(worst, Math.hypot(store.tangentImpulse1[p], store.tangentImpulse2[p]) / (list.staticFriction[c] * fn));
  }
  return worst;
}

/*
 * How xpbd-cpu spreads static friction over a face's corners (xpbd/contacts.ts shareStart). The corners'
 * forces are statically indeterminate; a self-equilibrated pattern (no net force or moment) moves no
 * body, and the warm start used to carry it from substep to substep: on friction-ramp one corner of the
 * μ 0.5 box sat at |f_t| / f_n = 0.4999 (its disc) where the slope needs tan θ = 0.255, and on a flat
 * stack, where the load needs f_t = 0, the ground contact's largest |f_t| / (μ_s f_n) grew by 1.5·10⁻⁴ a
 * second (0.0021 at 10 s, 1.0 at 6,600 s). Bounds:
 *   - ramp (θ = 0.25 rad, the held boxes μ_s 0.75, 0.5, 0.35): every corner within (tan θ + μ_s) / 2, i.e.
 *     at most halfway from the share the load needs to the disc (measured: tan θ = 0.2553 at every corner);
 *   - 5-box stack, flat ground: every contact's |f_t| ≤ 10⁻³ μ_s f_n at 10 s (the load needs 0; measured
 *     ≤ 1.1·10⁻⁵; before: 2.1·10⁻³ on the ground).
 */
test('xpbd-cpu: static friction loads a face\'s corners alike — ramp corners within (tan θ + μ_s)/2, a flat stack\'s |f_t| ≤ 10⁻³ μ_s f_n', async () => {
  const { loadRigidScene } = await import('../src/scenes/load.js');
  const info = findSolver('xpbd-cpu')!;
  const ramp = await info.create(loadRigidScene('friction-ramp', {}).world, resolveOptions(info, { sleep: 0 }));
  for (let f = 0; f < 120; f++) await ramp.step(1);
  const tan = Math.tan(0.25);
  for (const [b, mu] of [[2, 0.75], [3, 0.5], [4, 0.35]]) {
    const share = worstShare(ramp, b) * mu;
    assert.ok(share > 0 && share <= (tan + mu) / 2, `ramp box μ_s ${mu}: a corner carries |f_t| / f_n = ${share.toFixed(4)} where the slope needs ${tan.toFixed(4)}`);
  }
  ramp.destroy();
  const stack = await info.create(loadRigidScene('vertical-stack', { boxes: 5 }).world, resolveOptions(info, { sleep: 0 }));
  for (let f = 0; f < 600; f++) await stack.step(1);
  for (let b = 1; b <= 5; b++) {
    const share = worstShare(stack, b);
    assert.ok(share <= 1e-3, `stack box ${b}: |f_t| / (μ_s f_n) = ${share.toExponential(2)} where the load needs 0`);
  }
  stack.destroy();
});

/*
 * Dynamic friction on a sliding face (xpbd/contacts.ts velocityPassPoints, slidesWhole). Past the
 * limit the box slides at a = g (sin θ − μ_d cos θ) from rest. Its speed at t is a t. Its travel is
 * not ½ a t² exactly: XPBD moves positions first (x += h v with gravity, no friction) and takes dynamic
 * friction off the velocity after each substep (Müller et al. 2020, Algorithm 2), so every substep's
 * step runs ahead by h² μ_d g cos θ, a travel of ½ a (t₁² − t₀²) + h μ_d g cos θ (t₁ − t₀), first order in h
 * (14.6 mm over 2 s at h = 1/600 s). Bounds: the speed at 2.25 s within 0.5 % of a t; the travel from 0.25 s
 * to 2.25 s within 2 mm of that sum. Before: point after point from the first corner, the capped
 * impulses yawed the box and the friction along the slope fell to 26–49 % of μ_d f_n in the first frame;
 * then the friction's tip, left for the next projection, skewed the slip: tan θ = 1.016 μ_s, 0.1785 m/s
 * (+14 %) and 230.5 mm against 188.8; 1.093 μ_s, 0.9083 m/s (+1.3 %) and 1034 mm against 1011.
 */
test('xpbd-cpu: a box sliding past its static friction moves at a t (0.5 %) and travels ½ a Δt² + h μ_d g cos θ Δt (2 mm)', async () => {
  const info = findSolver('xpbd-cpu')!;
  const h = 1 / 600; // 1/60 s frames of xpbd-cpu's 10 substeps
  for (const th of [0.47, 0.5]) {
    const solver = await info.create(ramp(th), resolveOptions(info, { sleep: 0 }));
    const along = (p: Float64Array) => -(p[3] * Math.cos(th) + p[4] * Math.sin(th));
    let x0 = 0, x1 = 0, v1 = 0;
    for (let f = 1; f <= 135; f++) {
      await solver.step(1);
      if (f === 15) x0 = along((await solver.snapshot()).position);
      if (f === 135) {
        const s = await solver.snapshot();
        x1 = along(s.position);
        v1 = along(s.linearVelocity);
      }
    }
    solver.destroy();
    const g = 9.81, a = g * (Math.sin(th) - MU * Math.cos(th));
    const speed = a * 2.25;
    const travel = 0.5 * a * (2.25 ** 2 - 0.25 ** 2) + h * MU * g * Math.cos(th) * 2;
    assert.ok(Math.abs(v1 - speed) <= 5e-3 * speed, `tan θ = ${(Math.tan(th) / MU).toFixed(3)} μ_s: ${v1.toFixed(4)} m/s at 2.25 s where a t = ${speed.toFixed(4)}`);
    assert.ok(Math.abs(x1 - x0 - travel) <= 2e-3, `tan θ = ${(Math.tan(th) / MU).toFixed(3)} μ_s: travelled ${((x1 - x0) * 1e3).toFixed(1)} mm where ${(travel * 1e3).toFixed(1)} mm is due`);
  }
});

/*
 * A box that slides on a slope inside its cone must stop: tan θ = 0.991 μ_s (θ = 0.46), started at 13 mm/s down
 * the slope, decelerates at a = g (μ_d cos θ − sin θ) = 0.040 m/s² and stops at 0.32 s. xpbd-gpu's velocity pass
 * (its CPU twin: velocityBlock) solved a sliding manifold's normal rows, then dynamic friction point by point;
 * the friction impulses at the base, half the box below its centre, turned it (ω = μ_d P_n (0.5 m) / I =
 * 0.0218 rad/s), the spin was the substep's end velocity, and the box slid on at 13 mm/s for ever (23 mm from
 * 0.5 s to 2.25 s) with that ω at every frame's end. The normal rows solved once more after the friction
 * (velocityNormalRows) take the spin out: it stops by 0.33 s. Bound: < 1 mm from 0.5 s to 2.25 s (measured 0.000).
 * xpbd-cpu's own velocity pass (point after point) slid so too, at 17.7 mm/s; its normal rows are solved again
 * after friction as well (normalRows).
 */
test('xpbd-cpu\'s velocity passes (point after point, and velocityBlock: xpbd-gpu\'s): a box started at 13 mm/s on a slope at 0.991 μ_s stops', async () => {
  const th = 0.46;
  for (const block of [false, true]) {
    const s = new XpbdCpuSolver(ramp(th, 0.013), { substeps: 10, iterations: 1, sleep: 0 });
    s.contactSolver!.velocityBlock = block;
    const along = (p: Float64Array) => p[3] * Math.cos(th) + p[4] * Math.sin(th);
    await s.step(30);
    const x0 = along((await s.snapshot()).position);
    await s.step(105);
    const moved = Math.abs(along((await s.snapshot()).position) - x0);
    assert.ok(moved < 1e-3, `velocityBlock ${block}: the box moved ${(moved * 1e3).toFixed(3)} mm from 0.5 s to 2.25 s`);
  }
});
