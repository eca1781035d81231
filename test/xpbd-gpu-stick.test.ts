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
 * Open (fault 5, not covered here): at tan θ = 1.016 μ_s (θ = 0.47), 1 × 10, the box slides at 0.1531 m/s at
 * 2.25 s where a t = 0.1568 (xpbd-cpu: 0.15678): 2.3 % slow. Measured: the mean normal force (Σλ_n / h², the
 * last substep of frames 60–135) is 8748.6 N against m g cos θ = 8746.3 N (xpbd-cpu 8746.27), +0.027 %, and
 * friction at its cap (|λ_t| / λ_n = 0.500000), so a bias of the normal pass of ~6e-9 m a substep (1/40 of an
 * ulp at 2.5 m); the same box started at the ramp's origin (coordinates ≤ 0.5 m) slides at 0.1577 (+0.55 %):
 * it follows the coordinates' size, i.e. the pose's f32 rounding, and slip_since_start does not change it
 * (the figures are the same before and after). Not yet found: which stage turns that rounding into a bias.
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
