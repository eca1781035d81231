/**
 * XPBD's rotation (src/solvers/xpbd/cpu.ts, header "ω from the orientation"): ω recovered after a
 * substep is the exact inverse of the orientation update, ω = 2 Δq_v / (h Δq_w), not Müller et al.
 * 2020's 2 Δq_v / h, which returns ω / √(1 + ¼h²|ω|²) and so takes ≈ ¼h²|ω|² of the rotational
 * energy every substep. Free bodies of every shape keep their rotational kinetic energy to rounding
 * (f64 on xpbd-cpu, f32 on xpbd-gpu), and a sphere rolling without slip keeps 5/7 of its launch speed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';
import { XpbdGpuSolver } from '../src/solvers/xpbd/gpu.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { massProperties, type BodyDesc, type WorldDesc } from '../src/model/world.js';
import type { Snapshot } from '../src/model/snapshot.js';

const EPS64 = 2 ** -53; // f64 unit roundoff
const EPS32 = 2 ** -24; // f32 unit roundoff
const SPIN = 20; // rad/s

function options(asked: Partial<SolverOptions> = {}): SolverOptions {
  return resolveOptions(findSolver('xpbd-cpu')!, asked);
}

/** Free bodies in free fall (gravity on: it does not turn them), spun at |ω| = 20 rad/s. */
const axis = (x: number, y: number, z: number): [number, number, number] => {
  const n = Math.hypot(x, y, z);
  return [(SPIN * x) / n, (SPIN * y) / n, (SPIN * z) / n];
};
const SPINNERS: [string, BodyDesc][] = [
  ['sphere', { shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0, 0, 0], angularVelocity: axis(1, 1, -1) }],
  ['box about a principal axis', { shape: { type: 'box', halfExtents: [0.5, 0.3, 0.2] }, density: 1000, position: [0, 0, 0], angularVelocity: axis(0, 1, 0) }],
  // a general axis: the box tumbles (ω moves in the body frame along the polhode), T and |L| stay
  ['box about a general axis', { shape: { type: 'box', halfExtents: [0.5, 0.3, 0.2] }, density: 1000, position: [0, 0, 0], angularVelocity: axis(1, 1, 1) }],
  ['capsule about a general axis', { shape: { type: 'capsule', radius: 0.2, halfHeight: 0.4 }, density: 1000, position: [0, 0, 0], angularVelocity: axis(1, 2, 0) }],
];

/** T = ½ ω_bᵀ I ω_b, ω_b = Rᵀ ω (body frame, where I = I_local), from a snapshot (body 0). */
function rotationalEnergy(s: Snapshot, inertiaLocal: ArrayLike<number>): number {
  const [x, y, z, w] = [s.orientation[0], s.orientation[1], s.orientation[2], s.orientation[3]];
  const R = [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w), 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w), 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)];
  const o = [s.angularVelocity[0], s.angularVelocity[1], s.angularVelocity[2]];
  const b = [0, 1, 2].map((j) => R[j] * o[0] + R[3 + j] * o[1] + R[6 + j] * o[2]);
  let t = 0;
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) t += 0.5 * b[i] * inertiaLocal[3 * i + j] * b[j];
  return t;
}

/*
 * Bound. In exact arithmetic a free body's ω comes back unchanged from each substep (sphere: the
 * Cayley step and its inverse; box, capsule: the implicit midpoint rule keeps T exactly, rigid/body.ts
 * (E2)–(E4), and the recovery inverts the turn it made). Rounding: per substep the quaternion is
 * rounded by integrate (sums of ≤ 4 products and a normalisation), and Δq_v = w_p q_v − w q_v,p −
 * q_v × q_v,p by ≤ 4 products per component; all of unit size. We count that as an error of at most
 * c ε in Δq_v, c = 64 (generous: ≈ 28 for integrate's angle, ≈ 9 for Δq_v, the gyroscopic step's
 * Newton solve and the transport by Cay(h ω) of a non-isotropic body a few more). Since ω = 2 Δq_v /
 * (h Δq_w) and |Δq_v| ≈ ½ h |ω|, that is |δω| ≤ 2 c ε / h each substep; nothing restores it, so over
 * N substeps |δω| ≤ 2 N c ε / h, and δT/T ≤ 2 |δω| / |ω|:
 *   |T/T₀ − 1| ≤ 4 N c ε / (h |ω|).
 * f64 (ε = 2⁻⁵³), registry defaults (h = 1/600 s), 10 s (N = 6000): 5.1e-9 (measured: ≤ 4e-12).
 * The old recovery loses ¼h²|ω|² = 2.8e-4 of T in the first substep alone, and 63 % over the 10 s.
 */
const C_ROUNDING = 64;
const energyBound = (n: number, h: number, eps: number): number => (4 * n * C_ROUNDING * eps) / (h * SPIN);

for (const [name, body] of SPINNERS) {
  test(`xpbd-cpu: a free ${name} spinning at ${SPIN} rad/s keeps its rotational energy to f64 rounding over 10 s`, async () => {
    const world: WorldDesc = { gravity: [0, -9.81, 0], bodies: [body], constraints: [] };
    const o = options();
    const s = new XpbdCpuSolver(world, o);
    const I = massProperties(body).inertiaLocal;
    const t0 = rotationalEnergy(await s.snapshot(), I);
    const frames = Math.round(10 / o.dt);
    const h = o.dt / o.substeps;
    const bound = energyBound(frames * o.substeps, h, EPS64);
    let worst = 0;
    for (let f = 0; f < frames; f += 60) {
      await s.step(60);
      worst = Math.max(worst, Math.abs(rotationalEnergy(await s.snapshot(), I) / t0 - 1));
    }
    assert.ok(worst <= bound, `|T/T₀ − 1| reached ${worst.toExponential(3)}, bound ${bound.toExponential(3)}`);
  });
}

/*
 * xpbd-gpu (f32, ε = 2⁻²⁴) by the same bound. At the registry's h = 1/600 s the f32 bound grows as
 * fast as the old recovery's loss (both ∝ N), so the GPU runs one substep a frame (h = 1/60 s, the
 * same kernels), 2 s (N = 120): bound 4·120·64·ε/(h·20) = 5.5e-3, where the old recovery loses
 * ¼h²|ω|² = 2.8 % in the first substep and 77 % over the 2 s (measured with the fix: ≤ 7e-6).
 * Energies are taken from the f32 snapshot (relative rounding ~1e-7, far below the bound).
 */
test(`xpbd-gpu: free bodies spinning at ${SPIN} rad/s keep their rotational energy within the f32 bound`, async (t) => {
  const gpu = await acquireGpu();
  t.diagnostic(`adapter: ${gpu.adapterName}${gpu.software ? ' [software]' : ''}`);
  const o = options({ substeps: 1 });
  const frames = 120;
  const h = o.dt / o.substeps;
  const bound = energyBound(frames * o.substeps, h, EPS32);
  for (const [name, body] of SPINNERS) {
    const world: WorldDesc = { gravity: [0, -9.81, 0], bodies: [body], constraints: [] };
    const s = await XpbdGpuSolver.create(world, o, gpu);
    const I = massProperties(body).inertiaLocal;
    const t0 = rotationalEnergy(await s.snapshot(), I);
    let worst = 0;
    for (let f = 0; f < frames; f += 20) {
      await s.step(20);
      worst = Math.max(worst, Math.abs(rotationalEnergy(await s.snapshot(), I) / t0 - 1));
    }
    t.diagnostic(`${name}: |T/T₀ − 1| ≤ ${worst.toExponential(2)} (bound ${bound.toExponential(2)})`);
    assert.ok(worst <= bound, `${name}: |T/T₀ − 1| reached ${worst.toExponential(3)}, bound ${bound.toExponential(3)}`);
    s.destroy();
  }
  gpu.device.destroy();
});

/*
 * A solid sphere launched sliding at v₀ without spin ends rolling at v = 5/7 v₀ (angular momentum
 * about the contact point is kept: m v₀ r = (7/5) m v r), after t = 2 v₀/(7 μ g) = 0.49 s here; rolling,
 * nothing acts on it along the ground, so it must keep 5/7 v₀. Tolerance 0.5 %: the sliding phase ends
 * at a substep, so the slip it leaves is at most one substep's change of v − ωr, 3.5 μ g h (5 mm/s at
 * h = 1/600 s), of which v takes 2/7 (0.4 mm/s, 0.01 % of 3.57 m/s); the rest of the 0.5 % is the
 * issue's criterion. The old recovery took ≈ ¼h²ω² of the spin's energy every substep and friction
 * took it out of v: 2.07 → 1.75 m/s over 9 s at the default size (measured here: −3 % in 10 s).
 */
test('xpbd-cpu: a sphere launched sliding ends rolling at 5/7 v₀ and holds it within 0.5 % for 10 s', async () => {
  const v0 = 5, r = 0.5;
  const world = findRigidScene('rolling')!.build({ speed: v0, friction: 0.3, radius: r } as never);
  const i = world.bodies.length - 1;
  const s = new XpbdCpuSolver(world, options({ sleep: 0 }));
  await s.step(60); // 1 s: sliding has ended (0.49 s)
  const target = (5 / 7) * v0;
  let worst = 0, worstSlip = 0;
  for (let f = 0; f < 600; f += 10) {
    await s.step(10);
    const snap = await s.snapshot();
    const v = snap.linearVelocity[3 * i];
    worst = Math.max(worst, Math.abs(v / target - 1));
    worstSlip = Math.max(worstSlip, Math.abs((-snap.angularVelocity[3 * i + 2] * r) / v - 1));
  }
  assert.ok(worst < 0.005, `v strayed ${(100 * worst).toFixed(3)} % from 5/7 v₀`);
  assert.ok(worstSlip < 0.005, `ω r strayed ${(100 * worstSlip).toFixed(3)} % from v: not rolling`);
});
