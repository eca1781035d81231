/**
 * xpbd-gpu on the constraint rows (solve_colour_rows: distance with its rope/strut rows, hinge with
 * its limit rows, fixed) against xpbd-cpu (f64, same stages, same colour order), within the f32
 * bound derived below, on small scenes with sphere, box and capsule bodies; and the physical facts
 * of test/joints.test.ts measured on xpbd-gpu itself (rope stretch, hinge limit, cantilever).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';
import { XpbdGpuSolver } from '../src/solvers/xpbd/gpu.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../src/solvers/solver.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import { massProperties, type WorldDesc } from '../src/model/world.js';

const EPS32 = 2 ** -24;
const g = 9.81;

function options(): SolverOptions {
  return resolveOptions(findSolver('xpbd-gpu')!, {});
}

/*
 * Bound, f32 against f64 (ε = 2⁻²⁴), as test/xpbd.test.ts derives it for point joints: a substep rounds
 * each coordinate a few times (x + h v, once per block of each of the body's joints, its displacement Δx, v = Δx/h):
 * δ = 4 ε X per substep and block, X the largest coordinate; carried like Verlet, after N substeps
 *   δx(N) ≤ N² B δ,   δv(N) ≤ N B δ / h            (B: the most blocks that move one body in a substep)
 * Rotation: an impulse that moves a body's point at lever ℓ by δ turns it by m ℓ δ / I, i.e. moves
 * that point by κ δ with κ = m ℓ² / I (the scene's largest, given beside it); so ℓ δω ≤ κ δv plus the
 * rounding of q (4 ε a substep, 2/h in ω): ℓ δω ≤ κ N B δ / h + 8 N ε ℓ / h, δq ≤ N² B (κ δ / ℓ + 4 ε).
 * The angular rows (hinge, fixed) correct an angle error e by the impulse that turns the body by e,
 * whose rounding is ε e ≪ the δ/ℓ above. A wrong kernel (a sign, a missing row, a clamp the wrong way)
 * is off by ~g h_frame² ≈ 3e-3 m or by the violation it leaves, far above δx(N = 10) ≈ 1e-5 m here.
 */
/**
 * κ and ℓ of the bound above, from the scene: per dynamic body and anchor (lever ℓ in the body frame),
 * the gain m [ℓ]×ᵀ I⁻¹ [ℓ]× of a unit move at the anchor, bounded by its trace m Σ_k |ℓ × e_k|² / I_k
 * (principal axes e_k of the body frame, where the shapes' inertia is diagonal); ℓ the longest lever
 * (at least a bead's radius, 0.05 m, where no anchor is off centre).
 * B: the most blocks (xpbd-cpu's layout) that move one body in a substep.
 */
function boundShape(world: WorldDesc, cpu: XpbdCpuSolver): { kappa: number; lever: number; blocks: number } {
  let kappa = 0, lever = 0.05, blocks = 0;
  const rs = cpu.rowSolver;
  world.bodies.forEach((body, i) => {
    if (body.fixed) return;
    const mp = massProperties(body);
    const I = [mp.inertiaLocal[0], mp.inertiaLocal[4], mp.inertiaLocal[8]];
    let count = 0;
    world.constraints.forEach((c, ic) => {
      const arm = c.bodyA === i ? c.anchorA : c.bodyB === i ? c.anchorB : null;
      if (!arm) return;
      count += rs.constraintBlockEnd[ic] - rs.constraintBlock[ic];
      const [x, y, z] = arm;
      lever = Math.max(lever, Math.hypot(x, y, z));
      kappa = Math.max(kappa, mp.mass * ((y * y + z * z) / I[0] + (x * x + z * z) / I[1] + (x * x + y * y) / I[2]));
    });
    blocks = Math.max(blocks, count);
  });
  return { kappa, lever, blocks };
}

async function compare(
  t: { diagnostic(message: string): void },
  gpu: GpuContext,
  name: string,
  world: WorldDesc,
  frames: number[],
): Promise<{ cpu: XpbdCpuSolver; gpuSolver: XpbdGpuSolver }> {
  const opts = options();
  const cpu = new XpbdCpuSolver(world, opts);
  const gpuSolver = await XpbdGpuSolver.create(world, opts, gpu);
  const h = opts.dt / opts.substeps;
  const X = Math.max(...world.bodies.flatMap((b) => b.position.map(Math.abs)), ...world.constraints.flatMap((c) => c.anchorB.map(Math.abs)), 0.1);
  const delta = 4 * EPS32 * X;
  const { kappa, lever, blocks: B } = boundShape(world, cpu);
  t.diagnostic(`${name}: κ ${kappa.toFixed(2)}, ℓ ${lever} m, B ${B}`);
  let done = 0;
  for (const F of frames) {
    await cpu.step(F - done);
    await gpuSolver.step(F - done);
    done = F;
    const a = await cpu.snapshot();
    const b = await gpuSolver.snapshot();
    const N = F * opts.substeps;
    const dxBound = N * N * B * delta;
    const dvBound = (N * B * delta) / h;
    const dwBound = kappa * dvBound + (8 * N * EPS32 * lever) / h;
    const dqBound = N * N * B * ((kappa * delta) / lever + 4 * EPS32);
    let dx = 0, dv = 0, dw = 0, dq = 0;
    for (let i = 0; i < a.position.length; i++) {
      dx = Math.max(dx, Math.abs(a.position[i] - b.position[i]));
      dv = Math.max(dv, Math.abs(a.linearVelocity[i] - b.linearVelocity[i]));
      dw = Math.max(dw, lever * Math.abs(a.angularVelocity[i] - b.angularVelocity[i]));
    }
    for (let i = 0; i < a.orientation.length; i++) dq = Math.max(dq, Math.abs(a.orientation[i] - b.orientation[i]));
    t.diagnostic(`${name}, frame ${F}: |Δx| ${dx.toExponential(2)} ≤ ${dxBound.toExponential(2)} m, |Δv| ${dv.toExponential(2)} ≤ ${dvBound.toExponential(2)} m/s, ℓ|Δω| ${dw.toExponential(2)} ≤ ${dwBound.toExponential(2)} m/s, |Δq| ${dq.toExponential(2)} ≤ ${dqBound.toExponential(2)}`);
    assert.ok(dx <= dxBound, `${name} frame ${F}: |Δx| = ${dx} m > bound ${dxBound} m`);
    assert.ok(dv <= dvBound, `${name} frame ${F}: |Δv| = ${dv} m/s > bound ${dvBound} m/s`);
    assert.ok(dw <= dwBound, `${name} frame ${F}: ℓ|Δω| = ${dw} m/s > bound ${dwBound} m/s`);
    assert.ok(dq <= dqBound, `${name} frame ${F}: |Δq| = ${dq} > bound ${dqBound}`);
  }
  return { cpu, gpuSolver };
}

// a bead on a rope (maxLength 0.3 m) to a world point 0.2 m above it, thrown up and sideways
const ropeWorld: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [{ shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0, -0.2, 0], linearVelocity: [1.2, 0.3, 0.2] }],
  constraints: [{ type: 'distance', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 0, 0], maxLength: 0.3 }],
};

test('xpbd-gpu rows: a rope goes slack then taut as under xpbd-cpu (f32 bound)', async (t) => {
  const gpu = await acquireGpu();
  // anchor at the centre: no lever (κ = 0; ℓ = the radius for the ω term); one block
  const { cpu, gpuSolver } = await compare(t, gpu, 'rope', ropeWorld, [1, 5, 12]);
  // the scene does what it is for: slack at frame 1 (distance < maxLength), taut by frame 12
  gpuSolver.destroy();
  const d = (s: { position: Float64Array | number[] }) => Math.hypot(s.position[0], s.position[1], s.position[2]);
  const slack = new XpbdCpuSolver(ropeWorld, options());
  await slack.step(1);
  assert.ok(d(await slack.snapshot()) < 0.29, `slack at frame 1: ${d(await slack.snapshot())}`);
  t.diagnostic(`cpu distance at frame 12: ${d(await cpu.snapshot()).toFixed(5)} m (maxLength 0.3)`);
  assert.ok(Math.abs(d(await cpu.snapshot()) - 0.3) < 1e-3, 'taut by frame 12');
  gpu.device.destroy();
});

/** The box's x axis in the world, its angle about z from +x (test/joints.test.ts's measure). */
function angleAboutZ(q: ArrayLike<number>): number {
  const [qx, qy, qz, qw] = [q[0], q[1], q[2], q[3]];
  return Math.atan2(2 * (qx * qy + qz * qw), 1 - 2 * (qy * qy + qz * qz));
}

// a box on a hinge about z at its end (the world origin), released horizontal with a spin about x
// that the hinge's angular rows must remove; it swings down onto its limit at −0.5 rad
const hingeLimit = -0.5;
const hingeWorld: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [{ shape: { type: 'box', halfExtents: [0.3, 0.05, 0.05] }, density: 500, position: [0.3, 0, 0], angularVelocity: [0.5, 0, 0] }],
  constraints: [{ type: 'hinge', bodyA: 0, bodyB: null, anchorA: [-0.3, 0, 0], anchorB: [0, 0, 0], axisA: [0, 0, 1], axisB: [0, 0, 1], upperAngle: -hingeLimit }],
};

test('xpbd-gpu rows: a hinge box with a limit as under xpbd-cpu (f32 bound), and it stops at the limit (10 mrad)', async (t) => {
  const gpu = await acquireGpu();
  const { cpu, gpuSolver } = await compare(t, gpu, 'hinge', hingeWorld, [1, 5, 20]);
  cpu.destroy?.();
  // the physical fact on xpbd-gpu alone (test/joints.test.ts, 3 s): never past the limit by 10 mrad,
  // settled on it within 10 mrad over the last second, the box's z axis aligned with the hinge's (1 mrad)
  const angles: number[] = [];
  let tilt = 0;
  for (let f = 20; f < 180; f++) {
    await gpuSolver.step(1);
    const s = await gpuSolver.snapshot();
    angles.push(angleAboutZ(s.orientation));
    const [qx, qy] = [s.orientation[0], s.orientation[1]];
    if (f >= 120) tilt = Math.max(tilt, 2 * Math.hypot(qx, qy)); // angle of the box's z axis off the world's
  }
  const beyond = Math.max(...angles.map((a) => hingeLimit - a));
  const late = angles.slice(-60);
  const off = Math.max(...late.map((a) => Math.abs(a - hingeLimit)));
  t.diagnostic(`xpbd-gpu: past the limit by at most ${beyond.toExponential(2)} rad, last second within ${off.toExponential(2)} rad of it, axis off by ${tilt.toExponential(2)} rad`);
  assert.ok(beyond < 0.01, `passed the limit by ${beyond} rad`);
  assert.ok(off < 0.01, `settled ${off} rad from the limit`);
  assert.ok(tilt < 1e-3, `hinge axis off by ${tilt} rad`);
  gpuSolver.destroy();
  gpu.device.destroy();
});

// two boxes welded end to end, the first welded to the world at the origin: a cantilever
const box = { type: 'box' as const, halfExtents: [0.25, 0.05, 0.05] as [number, number, number] };
const cantileverWorld: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [
    { shape: box, density: 500, position: [0.25, 0, 0] },
    { shape: box, density: 500, position: [0.75, 0, 0] },
  ],
  constraints: [
    { type: 'fixed', bodyA: 0, bodyB: null, anchorA: [-0.25, 0, 0], anchorB: [0, 0, 0] },
    { type: 'fixed', bodyA: 0, bodyB: 1, anchorA: [0.25, 0, 0], anchorB: [-0.25, 0, 0] },
  ],
};

test('xpbd-gpu rows: a fixed two-box cantilever as under xpbd-cpu (f32 bound), held within 5 mrad', async (t) => {
  const gpu = await acquireGpu();
  const { gpuSolver } = await compare(t, gpu, 'cantilever', cantileverWorld, [1, 5, 20]);
  const metrics = new MetricsContext(cantileverWorld);
  let worstAngle = 0, worstLinear = 0;
  for (let f = 20; f < 180; f++) {
    await gpuSolver.step(1);
    const m = metrics.measure(await gpuSolver.snapshot());
    worstAngle = Math.max(worstAngle, m.maxAngularViolation ?? NaN);
    worstLinear = Math.max(worstLinear, m.maxViolation);
  }
  t.diagnostic(`xpbd-gpu: worst angular ${worstAngle.toExponential(2)} rad, linear ${worstLinear.toExponential(2)} m`);
  assert.ok(worstAngle < 5e-3, `welds turned by ${worstAngle} rad`);
  assert.ok(worstLinear < 5e-3, `welds opened by ${worstLinear} m`);
  gpuSolver.destroy();
  gpu.device.destroy();
});

// a capsule pinned at its top to the world (a point joint: the fast kernel) with a sphere on a
// distance rod from its bottom, thrown sideways: both kernels in one colour sweep
const rodWorld: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [
    { shape: { type: 'capsule', radius: 0.05, halfHeight: 0.15 }, density: 1000, position: [0, -0.2, 0] },
    { shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0.3, -0.4, 0], linearVelocity: [0, 0.3, 0.5] },
  ],
  constraints: [
    { type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0.2, 0], anchorB: [0, 0, 0] },
    { type: 'distance', bodyA: 0, bodyB: 1, anchorA: [0, -0.2, 0], anchorB: [0, 0, 0], length: 0.3 },
  ],
};

test('xpbd-gpu rows: a distance rod on a pinned capsule as under xpbd-cpu (f32 bound), its length held', async (t) => {
  const gpu = await acquireGpu();
  const { gpuSolver } = await compare(t, gpu, 'rod', rodWorld, [1, 5, 20]);
  const s = await gpuSolver.snapshot();
  // the rod's ends: the capsule's bottom R q (0, −0.2, 0) + x₀ and the sphere's centre
  const [qx, qy, qz, qw] = [s.orientation[0], s.orientation[1], s.orientation[2], s.orientation[3]];
  const ly = -0.2;
  const end = [2 * (qx * qy - qz * qw) * ly + s.position[0], (1 - 2 * (qx * qx + qz * qz)) * ly + s.position[1], 2 * (qy * qz + qx * qw) * ly + s.position[2]];
  const L = Math.hypot(s.position[3] - end[0], s.position[4] - end[1], s.position[5] - end[2]);
  t.diagnostic(`xpbd-gpu rod length at frame 20: ${L.toFixed(6)} m (0.3)`);
  assert.ok(Math.abs(L - 0.3) < 1e-3, `rod length ${L}`);
  gpuSolver.destroy();
  gpu.device.destroy();
});

test('xpbd-gpu rows: the residual curve of the first substep, per joint kind, as xpbd-cpu\'s (f32 bound)', async (t) => {
  // Frame 1 of each scene: the rope is slack (its one-sided row counts 0 on both), the hinge's angular
  // rows are open by the spin's h ω, the welds and the rod by about g h²; one iteration closes most of
  // it. f32: each row's C is rounded by ≤ δ = 4 ε max(X, 1) (coordinates, or unit-quaternion
  // components for the angular rows), so a channel of n ≤ (the scene's rows) rows by √n δ / h².
  const gpu = await acquireGpu();
  for (const [name, world] of [['rope', ropeWorld], ['hinge', hingeWorld], ['cantilever', cantileverWorld], ['rod', rodWorld]] as const) {
    const opts = options();
    const cpu = new XpbdCpuSolver(world, opts);
    const gpuSolver = await XpbdGpuSolver.create(world, opts, gpu);
    const h = opts.dt / opts.substeps;
    const X = Math.max(1, ...world.bodies.flatMap((b) => b.position.map(Math.abs)));
    const rc = await cpu.stepRecordingResiduals();
    const rg = await gpuSolver.stepRecordingResiduals();
    assert.deepEqual(Object.keys(rg.channels).sort(), Object.keys(rc.channels).sort(), `${name}: the same channels`);
    for (const [kind, curve] of Object.entries(rc.channels)) {
      const rowsInScene = cpu.rowSolver.rows.count;
      const bound = (Math.sqrt(rowsInScene) * 4 * EPS32 * X) / (h * h);
      t.diagnostic(`${name} ${kind}: cpu ${curve.map((v) => v.toExponential(3)).join(', ')}; gpu ${rg.channels[kind].map((v) => v.toExponential(3)).join(', ')} (bound ${bound.toExponential(2)} m/s²)`);
      curve.forEach((v, k) => assert.ok(Math.abs(v - rg.channels[kind][k]) <= bound, `${name} ${kind} after ${k} iterations: cpu ${v}, gpu ${rg.channels[kind][k]}`));
    }
    gpuSolver.destroy();
  }
  gpu.device.destroy();
});
