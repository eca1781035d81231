/**
 * jacobi-gpu and gs-gpu (f32, WGSL) against jacobi-cpu and gs-cpu (f64, same stages) on a small necklace.
 * Runs on the software adapter (SwiftShader) where there is no GPU.
 *
 * Bound, f32 against f64 (ε = 2⁻²⁴ ≈ 6e-8, the f32 unit roundoff): each frame rounds
 * x + h·v once (≤ ε·X, X the largest coordinate) and carries the velocity error δv
 * into the position (h·δv). The velocity error of one step is a rounding of the
 * free velocity (ε·V) plus the Jacobi solve's, which touches each λ in N_it
 * iterations of ~16 flops each: δv_step ≤ 16·N_it·ε·V, V = the largest speed
 * reached, ≤ g·t_F here. Errors add up over F frames:
 *   δv(F) ≤ F·16·N_it·ε·V,   δx(F) ≤ F·ε·X + F·h·δv(F).
 * A wrong kernel (a sign, a missing term) is off by g·h² ≈ 3e-3 m in one frame,
 * far above this bound.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { JacobiGpuSolver } from '../src/solvers/jacobi/gpu.js';
import { necklace } from '../src/scenes/necklace.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { GaussSeidelCpuSolver } from '../src/solvers/gs/cpu.js';
import { GaussSeidelGpuSolver } from '../src/solvers/gs/gpu.js';
import type { WorldDesc } from '../src/model/world.js';
import type { SolverOptions } from '../src/solvers/solver.js';

const eps = 2 ** -24;

// Gauss-Seidel (gs-*) touches each λ once per iteration too, and each body's ΔV once per
// constraint of the body (2 on a chain) instead of one gather: the same flop count per
// iteration, so the same bound holds.
const pairs = [
  { gpuId: 'jacobi-gpu', cpuId: 'jacobi-cpu', cpu: (w: WorldDesc, o: Partial<SolverOptions>) => new JacobiCpuSolver(w, o), gpu: JacobiGpuSolver.create },
  { gpuId: 'gs-gpu', cpuId: 'gs-cpu', cpu: (w: WorldDesc, o: Partial<SolverOptions>) => new GaussSeidelCpuSolver(w, o), gpu: GaussSeidelGpuSolver.create },
];

for (const pair of pairs)
test(`${pair.gpuId} agrees with ${pair.cpuId} within the f32 bound over the first frames`, async () => {
  const gpu = await acquireGpu();
  console.log(`adapter: ${gpu.adapterName}${gpu.software ? ' [software]' : ''}`);
  const world = necklace.build({ chains: 4, beads: 10, radius: 0.05, density: 1000, spacing: 0.5 });
  const opts = { dt: 1 / 60, iterations: 8 };
  const cpu = pair.cpu(world, opts);
  const gpuSolver = await pair.gpu(world, opts, gpu);
  const X = Math.max(...world.bodies.flatMap((b) => b.position.map(Math.abs)), 1);
  const g = 9.81;
  let done = 0;
  for (const F of [1, 3, 10]) {
    await cpu.step(F - done);
    await gpuSolver.step(F - done);
    done = F;
    const a = await cpu.snapshot();
    const b = await gpuSolver.snapshot();
    assert.equal(b.frame, F);
    const V = g * F * opts.dt + 1;
    const dvBound = F * 16 * opts.iterations * eps * V;
    const dxBound = F * eps * X + F * opts.dt * dvBound;
    let dx = 0, dv = 0, dq = 0;
    for (let i = 0; i < a.position.length; i++) {
      dx = Math.max(dx, Math.abs(a.position[i] - b.position[i]));
      dv = Math.max(dv, Math.abs(a.linearVelocity[i] - b.linearVelocity[i]), Math.abs(a.angularVelocity[i] - b.angularVelocity[i]) * 0.05);
    }
    for (let i = 0; i < a.orientation.length; i++) dq = Math.max(dq, Math.abs(a.orientation[i] - b.orientation[i]));
    assert.ok(dx <= dxBound, `frame ${F}: |Δx| = ${dx.toExponential(2)} m > bound ${dxBound.toExponential(2)} m`);
    // the angular velocity is compared through the surface speed r·|Δω| (r = 0.05 m)
    assert.ok(dv <= dvBound, `frame ${F}: |Δv| = ${dv.toExponential(2)} m/s > bound ${dvBound.toExponential(2)} m/s`);
    // quaternion: each frame rounds q + ½hΩq and its normalisation (a few ε) and carries h·r⁻¹·δv
    const dqBound = F * 4 * eps + F * opts.dt * dvBound / 0.05;
    assert.ok(dq <= dqBound, `frame ${F}: |Δq| = ${dq.toExponential(2)} > bound ${dqBound.toExponential(2)}`);
    // and the motion is real: after 10 frames the beads have fallen by centimetres
    if (F === 10) assert.ok(Math.abs(b.position[3 * 39 + 1] - world.bodies[39].position[1]) > 0.01);
  }
  const t = gpuSolver.timings();
  assert.equal(t.wallMsPerFrame.length, 10);
  gpuSolver.destroy();
  gpu.device.destroy();
});

test('jacobi-gpu: warm start 0 and 1 both run and the single-bead pendulum is solved exactly at the velocity level', async () => {
  const gpu = await acquireGpu();
  // one bead pinned at its top surface point, moving sideways and away from the pin
  const r = 0.05;
  const world = {
    gravity: [0, -9.81, 0] as [number, number, number],
    bodies: [{ shape: { type: 'sphere' as const, radius: r }, density: 1000, position: [0, -r, 0] as [number, number, number], linearVelocity: [0.3, -0.2, 0.1] as [number, number, number] }],
    constraints: [{ type: 'point' as const, bodyA: 0, bodyB: null, anchorA: [0, r, 0] as [number, number, number], anchorB: [0, 0, 0] as [number, number, number] }],
  };
  for (const warmStart of [0, 1]) {
    const s = await JacobiGpuSolver.create(world, { warmStart, beta: 0 }, gpu);
    await s.step(1);
    const snap = await s.snapshot();
    // velocity of the pinned point, J V = v + ω × R(q⁰) r⁰ with J taken at the start of the
    // step (q⁰ = identity), must vanish: Jacobi on one row is a direct solve
    const w = snap.angularVelocity, v = snap.linearVelocity;
    const a = [0, r, 0];
    const pv = [v[0] + w[1] * a[2] - w[2] * a[1], v[1] + w[2] * a[0] - w[0] * a[2], v[2] + w[0] * a[1] - w[1] * a[0]];
    // f32: the solve is a 3×3 inverse times a velocity of ~0.5 m/s: a few ε·|v|
    for (const c of pv) assert.ok(Math.abs(c) < 64 * eps, `pin point velocity ${pv} (warm ${warmStart})`);
    s.destroy();
  }
  gpu.device.destroy();
});

test('soft joints on the GPU: jacobi-gpu and gs-gpu swing the spring scene as their CPU references do', async () => {
  const gpu = await acquireGpu();
  const { world } = loadRigidScene('spring', { stiffness: 100 });
  const opts = { substeps: 4 };
  const frames = 30;
  try {
    for (const pair of pairs) {
      const cpu = pair.cpu(world, opts);
      const g = await pair.gpu(world, opts, gpu);
      await cpu.step(frames);
      await g.step(frames);
      const a = await cpu.snapshot(), b = await g.snapshot();
      g.destroy();
      // 120 steps, each rounding x + h v and a 3×3 solve in f32: ≤ 120 · 16 ε · max(|x|, 1) ≈ 1e-4 m;
      // a wrong soft row (β C instead of C/h, a missing α̃ on the diagonal) is off by centimetres
      const bound = frames * opts.substeps * 16 * eps * 1.5;
      for (let d = 0; d < 3; d++) assert.ok(Math.abs(a.position[d] - b.position[d]) <= bound, `${pair.gpuId}: x[${d}] ${b.position[d]} vs cpu ${a.position[d]}`);
      // and it moved: the bead has dropped by centimetres from the pin
      assert.ok(world.bodies[0].position[1] - a.position[1] > 0.01);
    }
  } finally {
    gpu.device.destroy();
  }
});

test('GPU timestamps keep their full resolution (Dawn would round them to 2¹⁶ ns = 65.5 µs, a third of a 100k-bead step on an H200)', async () => {
  const gpu = await acquireGpu();
  if (!gpu.timestamps) return gpu.device.destroy(); // an adapter without timestamp queries times on the wall clock
  const s = await JacobiGpuSolver.create(necklace.build({ chains: 2, beads: 10 }), { iterations: 2 }, gpu);
  await s.step(12);
  const t = s.timings();
  assert.equal(t.clock, 'gpu-timestamp');
  // Quantised, every frame time is a whole number of 65,536 ns; unquantised, a frame's time is such a
  // multiple with probability 2⁻¹⁶ (to the timer's 1 ns), so all 12 being multiples means quantisation.
  const multiples = t.msPerFrame.filter((ms) => Math.round(ms * 1e6) % 65536 === 0).length;
  assert.ok(multiples < t.msPerFrame.length, `all ${multiples} frame times are multiples of 65,536 ns: ${t.msPerFrame.map((ms) => Math.round(ms * 1e6))}`);
  s.destroy();
  gpu.device.destroy();
});

test('GPU frame times never add up to more than the wall time they were measured in (overlapping pass stamps are not counted twice)', async () => {
  const gpu = await acquireGpu();
  if (!gpu.timestamps) return gpu.device.destroy();
  const s = await JacobiGpuSolver.create(necklace.build({ chains: 4, beads: 10 }), { iterations: 4 }, gpu);
  await s.step(16); // one submission (≤ MAX_FRAMES_PER_SUBMIT frames): its wall time bounds the GPU's
  const t = s.timings();
  const gpuSum = t.msPerFrame.reduce((a, b) => a + b, 0), wallSum = t.wallMsPerFrame.reduce((a, b) => a + b, 0);
  assert.ok(gpuSum <= wallSum * (1 + 1e-9), `GPU frame times add up to ${gpuSum} ms, more than the batch's ${wallSum} ms of wall time`);
  s.destroy();
  gpu.device.destroy();
});
