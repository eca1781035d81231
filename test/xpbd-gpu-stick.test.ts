/**
 * xpbd-gpu's static friction near the Coulomb limit (xpbd/contacts.wgsl.ts b_share, b_restick: the WGSL of
 * xpbd-cpu's shareStart and restickBlock, test/xpbd-stick.test.ts; slip_since_start). A 1 m box (density 1000)
 * of μ_s = μ_d = 0.5 on a ramp of slope θ, 3 m along it (coordinates ~2.5 m: f32 ulp 2.4e-7 m), sleeping off,
 * 1/60 s, on the software adapter:
 *   - tan θ = 0.4954 (θ = 0.46, 0.991 μ_s): Coulomb holds it. Bound: < 1 mm from 0.25 s to 1 s. Before the
 *     port, at 8 iterations × 1 substep: 133 mm over 1 s (the disc-projected block stopped at a sliding fixed
 *     point, as xpbd-cpu's did before restickBlock); with it 0.000 mm.
 *   - the same at the registry's 1 iteration × 10 substeps (h = 1/600 s, a tangential target of g sin θ h² ≈
 *     1.2e-5 m a substep): < 1 mm from 0.25 s to 1.25 s. Before slip_since_start (Δp from absolute positions,
 *     R_B a_B rounded per point by ~3e-8 m: targets off a rigid motion by ~0.5 %, the block's sweeps walking
 *     along its null space until the uphill corners' discs no longer held the load): 2.45 mm (the first slip
 *     at frame 41); with it 0.000 mm, as xpbd-cpu.
 *   - tan θ = 0.5152 (θ = 0.4757, 1.03 μ_s): it slides, a = g (sin θ − μ_d cos θ) = 0.134 m/s², ½ a (1² − 0.25²) s²
 *     = 62.8 mm from 0.25 s to 1 s: bound > 31 mm (half), so the second stick test holds no box Coulomb lets slide.
 *   - tan θ = 0.5080 (θ = 0.47, 1.016 μ_s), 1 × 10: it slides from rest at a = g (sin θ − μ_d cos θ) = 0.0697 m/s²,
 *     v = a t = 0.1568 m/s at 2.25 s (xpbd-cpu: 0.15678). Bound: within 0.5 %. Derivation (f32): the pose keeps
 *     the substep's increments to the roundings of one substep (kernels.wgsl.ts pose_start: |E| ≤ 1 ulp a
 *     component, n · E ≤ 0.45 · 2.4e-7 + 0.89 · 1.2e-7 = 2.1e-7 m at x ≈ 2.5, y ≈ 1.5), and the normal
 *     corrections telescope, so Σλ_n over the run is m g cos θ t h ± 2 m |n · E|, and friction's impulse
 *     μ Σλ_n / h is off by at most μ 2 m |n · E| / h: |Δv| ≤ 0.5 · 2 · 2.1e-7 · 600 = 1.3e-4 m/s (0.08 %);
 *     v's own f32 sums, 1350 substeps of ~4 roundings of ½ ulp(0.15) = 7.5e-9: 4e-5 m/s (0.03 %); 0.5 % leaves
 *     ×4 for what this leaves out (the split over four points, the turns' roundings). Before pose_start: 0.1531
 *     m/s (−2.3 %): the pose's rounding of the same normal correction every substep, 1.5e-8 m into the slope on
 *     average, taken out by the next projection (Σλ_n +0.03 %, friction as much); with it 0.15678 (0.00 %).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { XpbdGpuSolver } from '../src/solvers/xpbd/gpu.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import type { Quat, Vec3, WorldDesc } from '../src/model/world.js';
import { parseSceneFile } from '../src/model/schema.js';

const MU = 0.5, HALF = 0.5, G = 9.81;

function ramp(th: number): WorldDesc {
  const q: Quat = [0, 0, Math.sin(th / 2), Math.cos(th / 2)];
  const t: Vec3 = [Math.cos(th), Math.sin(th), 0], n: Vec3 = [-Math.sin(th), Math.cos(th), 0];
  // pair μ = √(μ_ramp μ_box) with the ramp's 1: the box's own value is the square
  const desc = {
    gravity: [0, -G, 0],
    collisions: true,
    constraints: [],
    bodies: [
      { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], orientation: q, friction: 1 },
      { shape: { type: 'box', halfExtents: [HALF, HALF, HALF] }, density: 1000, position: [3 * t[0] + HALF * n[0], 3 * t[1] + HALF * n[1], 0], orientation: [...q], friction: MU * MU },
    ],
  };
  return parseSceneFile(JSON.stringify(desc)).world;
}

test('xpbd-gpu: a box at tan θ = 0.991 μ_s rests (< 1 mm from 0.25 s to 1 s); at 1.03 μ_s it slides (> half of ½ a t²)', async () => {
  const gpu = await acquireGpu();
  const travel = async (th: number) => {
    const s = await XpbdGpuSolver.create(ramp(th), { iterations: 8, substeps: 1, sleep: 0 }, gpu);
    const along = (p: Float64Array) => p[3] * Math.cos(th) + p[4] * Math.sin(th);
    await s.step(15);
    const x0 = along((await s.snapshot()).position);
    await s.step(45);
    const x1 = along((await s.snapshot()).position);
    s.destroy();
    return Math.abs(x1 - x0);
  };
  const held = await travel(0.46);
  assert.ok(held < 1e-3, `tan θ = ${Math.tan(0.46).toFixed(4)} < μ_s: the box moved ${(held * 1e3).toFixed(3)} mm`);
  const th = 0.4757, a = G * (Math.sin(th) - MU * Math.cos(th));
  const slid = await travel(th), due = 0.5 * a * (1 - 0.25 * 0.25);
  assert.ok(slid > due / 2, `tan θ = ${Math.tan(th).toFixed(4)} > μ_s: the box moved ${(slid * 1e3).toFixed(1)} mm, ½ a t² = ${(due * 1e3).toFixed(1)} mm`);
});

test('xpbd-gpu at its registry defaults (1 × 10): a box at tan θ = 0.991 μ_s rests (< 1 mm from 0.25 s to 1.25 s)', async () => {
  const gpu = await acquireGpu();
  const th = 0.46;
  const info = findSolver('xpbd-gpu')!;
  const options = resolveOptions(info, { sleep: 0 });
  assert.deepEqual([options.iterations, options.substeps], [1, 10], 'the registry defaults this test covers');
  const s = await XpbdGpuSolver.create(ramp(th), options, gpu);
  const along = (p: Float64Array) => p[3] * Math.cos(th) + p[4] * Math.sin(th);
  await s.step(15);
  const x0 = along((await s.snapshot()).position);
  await s.step(60);
  const x1 = along((await s.snapshot()).position);
  s.destroy();
  const held = Math.abs(x1 - x0);
  assert.ok(held < 1e-3, `tan θ = ${Math.tan(th).toFixed(4)} < μ_s, 1 × 10: the box moved ${(held * 1e3).toFixed(3)} mm`);
});

test('xpbd-gpu at its registry defaults (1 × 10): a box at tan θ = 1.016 μ_s slides at v = a t within 0.5 % at 2.25 s', async () => {
  const gpu = await acquireGpu();
  const th = 0.47, a = G * (Math.sin(th) - MU * Math.cos(th)), t = 2.25;
  const info = findSolver('xpbd-gpu')!;
  const s = await XpbdGpuSolver.create(ramp(th), resolveOptions(info, { sleep: 0 }), gpu);
  await s.step(135);
  const v = (await s.snapshot()).linearVelocity;
  s.destroy();
  const down = -(v[3] * Math.cos(th) + v[4] * Math.sin(th));
  const off = down / (a * t) - 1;
  assert.ok(Math.abs(off) < 0.005, `tan θ = ${Math.tan(th).toFixed(4)}, 1 × 10: v = ${down.toFixed(5)} m/s at ${t} s, a t = ${(a * t).toFixed(5)} (${(100 * off).toFixed(2)} %)`);
});
