/**
 * XPBD (src/solvers/xpbd): xpbd-gpu (f32, WGSL) against xpbd-cpu (f64, same stages), and the
 * physics of xpbd-cpu. Each test checks one physical fact; tolerances are derived beside each
 * assertion, never copied from a run. The GPU test runs on the software adapter (SwiftShader)
 * where there is no GPU, so it keeps to a small scene and a few frames.
 *
 * Notation (src/solvers/xpbd/cpu.ts): h = dt / substeps, d = p₁ − p₂ the joint's gap,
 * α the compliance, α̃ = α/h², λ the multiplier, K = A₁ + A₂ (+ α̃ I₃) the 3×3 point mobility.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { XpbdCpuSolver, type XpbdVariant } from '../src/solvers/xpbd/cpu.js';
import { XpbdGpuSolver } from '../src/solvers/xpbd/gpu.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../src/solvers/solver.js';
import { runSolver } from '../src/run/run.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import { massProperties, type WorldDesc } from '../src/model/world.js';
import { resolveParams } from '../src/scenes/scene.js';
import { necklace } from '../src/scenes/necklace.js';
import { hangingChain } from '../src/scenes/hanging-chain.js';
import { pendulumPeriod } from './support/pendulum.js';

const EPS = Number.EPSILON;
const EPS32 = 2 ** -24; // f32 unit roundoff

/** The options a solver runs with from the registry, with `asked` on top. */
function registryOptions(id: string, asked: Partial<SolverOptions> = {}): SolverOptions {
  const info = findSolver(id);
  assert.ok(info, `${id} is registered`);
  return resolveOptions(info, asked);
}

// --- a) xpbd-gpu against xpbd-cpu --------------------------------------------------------------

/*
 * Bound, f32 against f64 (ε = 2⁻²⁴). A substep rounds each coordinate a few times: x + h v in
 * integrate, once per joint in solve_colour (a bead has two joints), and its displacement Δx (summed
 * beside x, v = Δx/h: xpbd/kernels.wgsl.ts pose_prev): δ = 4 ε X per substep, X the largest coordinate. XPBD carries positions like Verlet (x̃ = 2xₙ − xₙ₋₁ + h²g),
 * so a position error δ made at substep n is also a velocity error δ/h that persists; after N
 * substeps
 *   δx(N) ≤ Σₙ n δ ≤ N² δ,        δv(N) ≤ N δ / h.
 * Rotation: a joint impulse p turns a bead held at its surface (lever r, I = 0.4 m r²) by
 * r² p / I = 2.5 p / m, so the surface speed r δω ≤ 2.5 N δ / h, plus the rounding of q (4 ε a
 * substep, 2/h in ω): r δω ≤ 2.5 N δ / h + 8 N ε r / h. The quaternion itself: δq(N) ≤ N² (2.5 δ / r + 4 ε).
 * A wrong kernel (a sign, a missing term) is off by ~g h_frame² ≈ 3e-3 m after one frame,
 * far above δx(N = substeps) ≈ 1e-4 m.
 */
/**
 * Steps xpbd-cpu and xpbd-gpu side by side to each frame count in `frames` and checks every
 * snapshot against the bound above (r: the beads' radius, for the angular terms).
 */
async function compareWithCpu(
  t: { diagnostic(message: string): void },
  gpuSolver: XpbdGpuSolver,
  cpu: XpbdCpuSolver,
  world: WorldDesc,
  frames: number[],
  r: number,
): Promise<void> {
  const opts = cpu.options;
  const h = opts.dt / opts.substeps;
  const X = Math.max(...world.bodies.flatMap((b) => b.position.map(Math.abs)), ...world.constraints.flatMap((c) => c.anchorB.map(Math.abs)), 0.1);
  const delta = 4 * EPS32 * X;
  const before = (await cpu.snapshot()).frame;
  let done = before;
  for (const F of frames) {
    await cpu.step(F - done);
    await gpuSolver.step(F - done);
    done = F;
    const a = await cpu.snapshot();
    const b = await gpuSolver.snapshot();
    assert.equal(b.frame, F);
    const N = F * opts.substeps;
    const dxBound = N * N * delta;
    const dvBound = (N * delta) / h;
    const dwBound = 2.5 * dvBound + (8 * N * EPS32 * r) / h;
    const dqBound = N * N * (2.5 * delta / r + 4 * EPS32);
    let dx = 0, dv = 0, dw = 0, dq = 0;
    for (let i = 0; i < a.position.length; i++) {
      dx = Math.max(dx, Math.abs(a.position[i] - b.position[i]));
      dv = Math.max(dv, Math.abs(a.linearVelocity[i] - b.linearVelocity[i]));
      dw = Math.max(dw, r * Math.abs(a.angularVelocity[i] - b.angularVelocity[i]));
    }
    for (let i = 0; i < a.orientation.length; i++) dq = Math.max(dq, Math.abs(a.orientation[i] - b.orientation[i]));
    t.diagnostic(`${cpu.variant.form}, frame ${F}: |Δx| ${dx.toExponential(2)} ≤ ${dxBound.toExponential(2)} m, |Δv| ${dv.toExponential(2)} ≤ ${dvBound.toExponential(2)} m/s, r|Δω| ${dw.toExponential(2)} ≤ ${dwBound.toExponential(2)} m/s, |Δq| ${dq.toExponential(2)} ≤ ${dqBound.toExponential(2)}`);
    assert.ok(dx <= dxBound, `frame ${F}: |Δx| = ${dx} m > bound ${dxBound} m`);
    assert.ok(dv <= dvBound, `frame ${F}: |Δv| = ${dv} m/s > bound ${dvBound} m/s`);
    assert.ok(dw <= dwBound, `frame ${F}: r|Δω| = ${dw} m/s > bound ${dwBound} m/s`);
    assert.ok(dq <= dqBound, `frame ${F}: |Δq| = ${dq} > bound ${dqBound}`);
  }
}

test('xpbd-gpu agrees with xpbd-cpu within the f32 bound over the first frames of a necklace', async (t) => {
  const gpu = await acquireGpu();
  t.diagnostic(`adapter: ${gpu.adapterName}${gpu.software ? ' [software]' : ''}`);
  const world = necklace.build({ chains: 4, beads: 10, radius: 0.05, density: 1000, spacing: 0.5 });
  const opts = registryOptions('xpbd-gpu');
  assert.deepEqual(opts, registryOptions('xpbd-cpu'), 'the two register the same defaults');
  const cpu = new XpbdCpuSolver(world, opts);
  const gpuSolver = await XpbdGpuSolver.create(world, opts, gpu);
  const h = opts.dt / opts.substeps;
  const X = Math.max(...world.bodies.flatMap((b) => b.position.map(Math.abs)));

  // the residual of frame 1, substep 0: after integrate only the pins are open, each by g h² (every
  // bead fell by the same g h², so the bead-bead gaps stay exactly 0): ‖d‖/h² = √chains · g
  const rc = await cpu.stepRecordingResiduals();
  const rg = await gpuSolver.stepRecordingResiduals();
  const g = 9.81;
  assert.ok(Math.abs(rc.channels.point[0] / (2 * g) - 1) < 1e-9, `r⁰ = ${rc.channels.point[0]} m/s², expected √4 · g`);
  assert.ok(rc.channels.point[1] < rc.channels.point[0], 'one iteration lowers the residual');
  // f32: each of the 3·NC rows of d is rounded by ≤ δ = 4 ε X, i.e. r by δ/h²
  const residualBound = (Math.sqrt(3 * world.constraints.length) * 4 * EPS32 * X) / (h * h);
  rc.channels.point.forEach((v, k) =>
    assert.ok(Math.abs(v - rg.channels.point[k]) <= residualBound, `residual after ${k} iterations: cpu ${v}, gpu ${rg.channels.point[k]} (bound ${residualBound})`),
  );

  await compareWithCpu(t, gpuSolver, cpu, world, [1, 3, 10], 0.05);
  // the motion is real: after 10 frames the free ends have fallen by centimetres
  const b = await gpuSolver.snapshot();
  assert.ok(Math.abs(b.position[3 * 39 + 1] - world.bodies[39].position[1]) > 0.01);
  assert.equal(gpuSolver.timings().wallMsPerFrame.length, 9); // the recorded frame is not timed
  // one dispatch per colour per iteration, plus integrate and update_velocities, per substep
  assert.equal(gpuSolver.cost().dispatchesPerFrame, (2 + cpu.colouring.colourCount * opts.iterations) * opts.substeps);
  gpuSolver.destroy();
  gpu.device.destroy();
});

/*
 * Far from the origin (issue 23): xpbd-gpu takes v = Δx/h from the substep's displacement, summed beside
 * the position from its increments (integrate's h v, each joint's correction), not from x − x_prev of two
 * f32 positions. At X = 10 km f32 stores a coordinate to ulp(X) = 2⁻¹⁰ m ≈ 1 mm, and one substep's motion at
 * 1/600 s is below that (g h² = 2.7e-5 m from rest; 1 m/s: 1.7e-3 m, 1.7 ulp): x − x_prev read that motion in
 * whole ulps (a sideways 1 m/s came out 2 ulp/h = 1.17 m/s; a pendulum released from rest never moved in x,
 * each substep's x − x_prev being 0). One world, joints only (collisions off): a thrown free sphere
 * (v₀ = (1, 2, 0) m/s) and a pendulum (a sphere on a point joint 1 m below a world anchor, released at
 * 0.5 rad), built at the origin and 10 km out along x, 60 frames of 10 substeps (N = 600).
 *   free body    semi-implicit Euler gives v_n = v₀ + n h g exactly; in f32 each substep rounds v + h g, h v
 *                and Δx · (1/h) (1/h itself rounded once, the same every substep): |δv| ≤ 4 N ε max|v| (1.1e-3
 *                m/s here), at either X — the position does not enter its velocity. Its position still carries
 *                f32's storage: each x + h v rounds to ½ ulp(X), ≤ N ½ ulp(X) over the run (0.29 m at 10 km),
 *                biased where the increment is constant (measured: 0.17 m along x), which no velocity rule
 *                can take back.
 *   pendulum     its joint reads the stored (rounded) position: each substep's correction carries up to
 *                ½ ulp(X) of rounding along the rod into Δx, a velocity error ≤ ½ ulp(X)/h that the next
 *                substep's projection replaces (it does not add up), and a sideways position error that does,
 *                ≤ N ½ ulp(X) after N substeps. So far out it swings as at the origin within
 *                  |δx| ≤ N ½ ulp(X),   |δv| ≤ ½ ulp(X)/h + 4 N ε max|v|.
 *                (Taken from x − x_prev it stayed at its release x: 0.95 m off after 1 s.)
 * At the origin (ulp(5 m) = 4.8e-7) the same bounds are µm and µm/s; there the free body's velocity from
 * x − x_prev was off by 0.025 m/s after 1 s (a 5 m coordinate's ½ ulp / h = 1.4e-4 m/s a substep, biased).
 */
test('far from the origin: a joint-only world takes v from the summed displacement, so a free body falls at v₀ + g t to f32 rounding and a pendulum swings 10 km out as at the origin', async (t) => {
  const gpu = await acquireGpu();
  const g = 9.81, F = 60, substeps = 10, a = 0.5;
  const world = (D: number): WorldDesc => ({
    gravity: [0, -g, 0],
    collisions: false,
    bodies: [
      { shape: { type: 'sphere', radius: 0.1 }, density: 1000, position: [D, 5, 3], linearVelocity: [1, 2, 0] },
      { shape: { type: 'sphere', radius: 0.1 }, density: 1000, position: [D + Math.sin(a), 5 - Math.cos(a), 0] },
    ],
    constraints: [{ type: 'point', bodyA: 1, bodyB: null, anchorA: [-Math.sin(a), Math.cos(a), 0], anchorB: [D, 5, 0] }],
  });
  const run = async (D: number) => {
    const s = await XpbdGpuSolver.create(world(D), { substeps, iterations: 1 }, gpu);
    await s.step(F);
    const snap = await s.snapshot();
    s.destroy();
    return snap;
  };
  try {
    const h = 1 / 60 / substeps, N = F * substeps, T = F / 60;
    const vMax = Math.hypot(1, Math.max(2, g * T - 2)); // |v| at its largest, at t = T
    const dvFree = 4 * N * EPS32 * vMax;
    const near = await run(0);
    for (const D of [0, 10000]) {
      const s = D === 0 ? near : await run(D);
      const halfUlp = D === 0 ? 2 ** -22 : 2 ** -11; // ½ ulp of the largest coordinate, 5 m or 10 km
      // the free body: v₀ + n h g, at either distance
      const v = [s.linearVelocity[0], s.linearVelocity[1], s.linearVelocity[2]];
      const dv = Math.max(Math.abs(v[0] - 1), Math.abs(v[1] - (2 - g * T)), Math.abs(v[2]));
      t.diagnostic(`X = ${D} m: free body |δv| ${dv.toExponential(2)} m/s (bound ${dvFree.toExponential(2)}), |δx| ${Math.abs(s.position[0] - D - T).toExponential(2)} m (f32 storage: ≤ ${(N * halfUlp).toExponential(2)})`);
      assert.ok(dv <= dvFree, `X = ${D} m: the free body's velocity is off by ${dv} m/s from v₀ + g t (bound ${dvFree})`);
      assert.ok(Math.abs(s.position[0] - D - T) <= N * halfUlp, `X = ${D} m: the free body's x is off by ${s.position[0] - D - T} m`);
      // the pendulum, against itself at the origin
      let dx = 0, dvp = 0;
      for (let k = 0; k < 3; k++) {
        dx = Math.max(dx, Math.abs(s.position[3 + k] - (k === 0 ? D : 0) - near.position[3 + k]));
        dvp = Math.max(dvp, Math.abs(s.linearVelocity[3 + k] - near.linearVelocity[3 + k]));
      }
      const dxBound = N * halfUlp, dvBound = halfUlp / h + dvFree;
      t.diagnostic(`X = ${D} m: pendulum against the origin's |δx| ${dx.toExponential(2)} m (bound ${dxBound.toExponential(2)}), |δv| ${dvp.toExponential(2)} m/s (bound ${dvBound.toExponential(2)})`);
      assert.ok(dx <= dxBound && dvp <= dvBound, `X = ${D} m: the pendulum is ${dx} m, ${dvp} m/s from the one at the origin`);
    }
    // and it swung: after 1 s (half its period 2π √(L/g) ≈ 2 s) it is across, near x = −sin 0.5
    assert.ok(Math.abs(near.position[3] + Math.sin(a)) < 0.05, `the pendulum at x = ${near.position[3]} m after 1 s`);
  } finally {
    gpu.device.destroy();
  }
});

test('xpbd-gpu agrees with xpbd-cpu on a thrown pair (both forms, a compliant joint): X ≈ 0.1 m makes the bound tight', async (t) => {
  // A bead pinned at its surface point and thrown sideways, with a second bead on a compliant joint
  // (α = 1e-3 m/N) at its far side. Coordinates ≤ 0.15 m make δ = 4 ε X ≈ 4e-8 m, so the bound after
  // one frame (N = 10) is ~4e-6 m, while every substep opens the joints by h |v| ≈ 1e-4 m: a kernel
  // that closed them by only 80 % would be off by ~2e-5 m.
  const gpu = await acquireGpu();
  const r = 0.05;
  const world: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [
      { shape: { type: 'sphere', radius: r }, density: 1000, position: [0, -r, 0], linearVelocity: [0.1, -0.05, 0.08], angularVelocity: [1, 0, -2] },
      { shape: { type: 'sphere', radius: r }, density: 1000, position: [0, -3 * r, 0] },
    ],
    constraints: [
      { type: 'point', bodyA: 0, bodyB: null, anchorA: [0, r, 0], anchorB: [0, 0, 0] },
      { type: 'point', bodyA: 0, bodyB: 1, anchorA: [0, -r, 0], anchorB: [0, r, 0], compliance: 1e-3 },
    ],
  };
  const opts = registryOptions('xpbd-gpu');
  // 'distance' only to frame 1: its sideways gain |1 − a⊥/a∥| per substep (test f) would make any
  // longer comparison a measure of that, not of the kernels
  for (const [form, frames] of [['point', [1, 3]], ['distance', [1]]] as const) {
    const cpu = new XpbdCpuSolver(world, opts, { form });
    const gpuSolver = await XpbdGpuSolver.create(world, opts, gpu, { form });
    await compareWithCpu(t, gpuSolver, cpu, world, [...frames], r);
    gpuSolver.destroy();
  }
  gpu.device.destroy();
});

// --- b) the period of a physical pendulum ------------------------------------------------------

// Error budget, all ≪ 1 %: finite amplitude θ₀²/16 = 0.06 % at θ₀ = 0.1 rad; XPBD's implicit-Euler-like
// phase error (ω h)²/3 with ω h = 2π h / T ≈ 7e-3 at h = 1/600 s (≈ 2e-5); interpolating zero crossings
// between frames, O(h_frame³). A 1 % band is ten times that budget.
const PERIOD_TOLERANCE = 0.01;

test('pendulum: xpbd-cpu swings at the physical-pendulum period 2π√((I_cm + mL²)/(mgL)) within 1 %', async (t) => {
  for (const params of [{ angle: 0.1 }, { radius: 0.15, length: 0.25, angle: 0.1 }] as Record<string, number>[]) {
    const { measured, physical, simple, periods } = await pendulumPeriod(params, 600, (w) => new XpbdCpuSolver(w, registryOptions('xpbd-cpu')));
    assert.ok(periods >= 4);
    const rel = Math.abs(measured / physical - 1);
    t.diagnostic(`${JSON.stringify(params)}: T ${measured.toFixed(5)} s over ${periods} periods, physical ${physical.toFixed(5)} s (${(100 * rel).toFixed(3)} %), simple ${simple.toFixed(5)} s`);
    assert.ok(rel <= PERIOD_TOLERANCE, `measured T = ${measured} s, physical pendulum ${physical} s (${(100 * rel).toFixed(3)} %)`);
  }
});

// --- c) a hanging chain at rest ----------------------------------------------------------------

test('hanging chain: 10 beads at rest stay within 1 mm for 10 s under xpbd-cpu (registry defaults); warm-started Jacobi at 8 iterations does not', async (t) => {
  const world = hangingChain.build(resolveParams(hangingChain, { beads: 10 }));
  const frames = 600; // 10 s
  const BOUND = 1e-3; // m
  const xpbd = await runSolver(new XpbdCpuSolver(world, registryOptions('xpbd-cpu')), world, { frames });
  assert.equal(xpbd.diverged, null);
  t.diagnostic(`xpbd-cpu: worst max violation ${xpbd.worstMaxViolation.toExponential(3)} m over ${frames} frames, final ${xpbd.final!.maxViolation.toExponential(3)} m`);
  assert.ok(xpbd.worstMaxViolation < BOUND, `xpbd-cpu: worst max violation ${xpbd.worstMaxViolation} m`);

  // XPBD's sag is O(h²): each substep gravity opens every joint by ~g h² before one Gauss–Seidel
  // sweep closes most of it, and the part left is a fixed multiple of g h² (set by the chain's
  // length, the same at every h), so halving h quarters it. The worst over 10 s is taken at the
  // same point of the same motion, so it scales alike; 25 % allows for the h-dependence of the
  // transient (a term of relative size O(h)).
  const half = await runSolver(new XpbdCpuSolver(world, registryOptions('xpbd-cpu', { substeps: 2 * registryOptions('xpbd-cpu').substeps })), world, { frames });
  const ratio = xpbd.worstMaxViolation / half.worstMaxViolation;
  t.diagnostic(`halving h: worst violation ÷ ${ratio.toFixed(3)} (O(h²): 4)`);
  assert.ok(Math.abs(ratio / 4 - 1) < 0.25, `halving h divided the worst violation by ${ratio}, not ≈ 4`);

  const jacobiInfo = findSolver('jacobi-cpu')!;
  const jacobiOptions = resolveOptions(jacobiInfo, { iterations: 8, warmStart: 1 });
  const jacobi = await runSolver(await jacobiInfo.create(world, jacobiOptions), world, { frames });
  t.diagnostic(`jacobi-cpu (8 iterations, warm start 1): ${jacobi.diverged ? `diverged at frame ${jacobi.diverged.frame}: ${jacobi.diverged.reason}` : `worst ${jacobi.worstMaxViolation.toExponential(3)} m`}`);
  assert.ok(jacobi.diverged !== null || jacobi.worstMaxViolation >= BOUND, 'Jacobi holds the chain as well as XPBD');
});

// --- d) an XPBD spring ---------------------------------------------------------------------------

/** Times where x (a series of (t, x)) crosses zero, linearly interpolated between samples. */
function zeroCrossings(series: { t: number; x: number }[]): number[] {
  const out: number[] = [];
  for (let k = 1; k < series.length; k++) {
    const a = series[k - 1], b = series[k];
    if ((a.x > 0 && b.x <= 0) || (a.x < 0 && b.x >= 0)) out.push(a.t + (a.x / (a.x - b.x)) * (b.t - a.t));
  }
  return out;
}

/** One bead of mass m held at its centre by a joint of compliance α to the world point `pin`. */
function beadOnJoint(m: number, alpha: number, pin: [number, number, number], start: [number, number, number], gravity: [number, number, number]): WorldDesc {
  return {
    gravity,
    bodies: [{ shape: { type: 'sphere', radius: 0.05 }, mass: m, position: start }],
    constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: pin, compliance: alpha }],
  };
}

test('spring: a bead on a compliant joint oscillates at ω = √(k/m), k = 1/α, within 2 %, and its amplitude never grows', async (t) => {
  // C = p₁ − p₂ with both points at the bead's centre and the pin: a zero-rest-length spring pulling
  // the bead toward the pin, f = −d/α. m = 1 kg, α = 0.01 m/N: ω = 10 rad/s, T = 0.63 s.
  const m = 1, alpha = 0.01, A = 0.1;
  const omega = Math.sqrt(1 / (alpha * m));
  const opts = registryOptions('xpbd-cpu');
  const h = opts.dt / opts.substeps;
  // For this joint K = (m⁻¹ + α̃) I₃ and one iteration gives x_{n+1} = (2xₙ − xₙ₋₁)/(1 + (ωh)²): the
  // roots (1 ± iωh)/(1 + (ωh)²) turn by atan(ωh) a substep with modulus (1 + (ωh)²)^(−1/2). So the
  // scheme oscillates at ω_h = atan(ωh)/h (relative error (ωh)²/3 ≈ 1e-4 at ωh = 1/60) and loses
  // amplitude like implicit Euler. Interpolating zero crossings between frames errs by
  // O((ω Δt_frame)³/ω) ≈ 2e-5 s each, so the measured ω is within 1e-3 of ω_h and far within 2 % of ω.
  const world = beadOnJoint(m, alpha, [0, 0, 0], [A, 0, 0], [0, 0, 0]);
  const frames = 120; // 2 s, ~3 periods
  const result = await runSolver(new XpbdCpuSolver(world, opts), world, { frames, trace: [0] });
  assert.equal(result.diverged, null);
  const series = result.series.map((s) => ({ t: s.t, x: s.trace![0][0] }));
  const crossings = zeroCrossings(series);
  assert.ok(crossings.length >= 5, `${crossings.length} zero crossings`);
  const measured = (Math.PI * (crossings.length - 1)) / (crossings[crossings.length - 1] - crossings[0]);
  const omegaH = Math.atan(omega * h) / h;
  t.diagnostic(`ω measured ${measured.toFixed(5)} rad/s, √(k/m) ${omega.toFixed(5)} (${(100 * (measured / omega - 1)).toFixed(4)} %), scheme atan(ωh)/h ${omegaH.toFixed(5)}`);
  assert.ok(Math.abs(measured / omega - 1) <= 0.02, `ω = ${measured} rad/s, √(k/m) = ${omega} rad/s`);
  assert.ok(Math.abs(measured / omegaH - 1) <= 1e-3, `ω = ${measured} rad/s, the scheme's atan(ωh)/h = ${omegaH} rad/s`);
  // amplitude over the last period: at most what the decay (1 + (ωh)²)^(−n/2) leaves at its start, at
  // least what it leaves at its end less the sampling (a peak may fall between frames: cos(ω Δt/2))
  const decay = (time: number) => A * (1 + (omega * h) ** 2) ** (-time / (2 * h));
  const T = (2 * Math.PI) / omega;
  const tEnd = series[series.length - 1].t;
  const last = series.filter((s) => s.t >= tEnd - T);
  const peak = Math.max(...last.map((s) => Math.abs(s.x)));
  const low = decay(tEnd) * Math.cos((omega * opts.dt) / 2);
  const high = decay(tEnd - T);
  t.diagnostic(`amplitude over the last period ${peak.toFixed(6)} m, expected in [${low.toFixed(6)}, ${high.toFixed(6)}] m (started at ${A} m)`);
  assert.ok(peak <= high * (1 + 1e-9) && peak >= low, `amplitude ${peak} m outside [${low}, ${high}] m`);
});

test('compliance: a bead hanging on a joint of compliance α settles at the stretch α m g (Hooke), so α → 0 is the hard joint', async (t) => {
  // At rest after integrate d̃ = d* + h²g; one update with K = (m⁻¹ + α̃) I₃ moves the bead by
  // −m⁻¹ d̃ / (m⁻¹ + α̃), which is −h²g (back where it was) exactly when d* = α m g: the stretch of a
  // spring k = 1/α under the weight, for every h. The start (at the pin, d = 0) rings at ω = 1/√(αm)
  // and decays as (1 + (ωh)²)^(−n/2): for α ≤ 1e-4 (ωh ≥ 1/6) that is < e⁻⁸⁰ after the 6000 substeps.
  const m = 2, g = 9.81;
  for (const alpha of [1e-4, 1e-6, 1e-8, 0]) {
    const world = beadOnJoint(m, alpha, [0, 1, 0], [0, 1, 0], [0, -g, 0]);
    const solver = new XpbdCpuSolver(world, registryOptions('xpbd-cpu'));
    await solver.step(600);
    const s = await solver.snapshot();
    const stretch = 1 - s.position[1];
    const expected = alpha * m * g;
    // rounding: coordinates ≈ 1 m, a handful of operations a substep on the stretch: 1e-12 m is
    // thousands of ε·1 m, and a hard joint (α = 0) must hold to that
    t.diagnostic(`α = ${alpha} m/N: stretch ${stretch.toExponential(6)} m, α m g = ${expected.toExponential(6)} m`);
    assert.ok(Math.abs(stretch - expected) <= 1e-12, `α = ${alpha}: stretch ${stretch} m, expected ${expected} m`);
    assert.ok(Math.abs(s.position[0]) + Math.abs(s.position[2]) === 0, 'the bead hangs straight below the pin');
  }
});

// --- e) energy ------------------------------------------------------------------------------------

test('energy: a free-swinging physical pendulum (θ₀ = 1 rad) never gains energy from one frame to the next', async (t) => {
  // XPBD with one iteration behaves like implicit Euler, which only removes energy (by (ωh)² a substep
  // in the linear limit); a gain beyond rounding means the projection or the velocity update is wrong.
  // Rounding of E: sums of a few terms of size E_scale = m g |x| + KE: 16 ε E_scale.
  const world: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [{ shape: { type: 'sphere', radius: 0.15 }, density: 1000, position: [0.25 * Math.sin(1), 1 - 0.25 * Math.cos(1), 0] }],
    constraints: [
      { type: 'point', bodyA: 0, bodyB: null, anchorA: [-0.25 * Math.sin(1), 0.25 * Math.cos(1), 0], anchorB: [0, 1, 0] },
    ],
  };
  const solver = new XpbdCpuSolver(world, registryOptions('xpbd-cpu'));
  const metrics = new MetricsContext(world);
  const m = massProperties(world.bodies[0]).mass;
  let prev = metrics.measure(await solver.snapshot());
  const e0 = prev.energy;
  let worstGain = -Infinity;
  for (let n = 0; n < 300; n++) {
    await solver.step(1);
    const s = await solver.snapshot();
    const cur = metrics.measure(s);
    const scale = m * 9.81 * Math.hypot(s.position[0], s.position[1], s.position[2]) + cur.kinetic;
    worstGain = Math.max(worstGain, cur.energy - prev.energy);
    assert.ok(cur.energy - prev.energy <= 16 * EPS * scale, `frame ${n + 1}: E rose by ${cur.energy - prev.energy} J`);
    prev = cur;
  }
  t.diagnostic(`E ${e0.toFixed(6)} → ${prev.energy.toFixed(6)} J over 5 s; largest gain in a frame ${worstGain.toExponential(2)} J`);
  assert.ok(prev.energy < e0, 'implicit-Euler-like damping removes some energy');
});

// --- f) why the default form is 'point' ------------------------------------------------------------

test("forms: one 'distance' update multiplies a sideways gap by 1 − a⊥/a∥ = −2.5; the 'point' update closes it", async (t) => {
  // One bead (radius r) hanging at rest from a pin at its top surface point, the pin moved sideways by
  // e. After integrate the gap is d = (−e, −g h², 0): mostly the sag along the lever arm, where the
  // point's mobility is a∥ = m⁻¹; sideways it is a⊥ = m⁻¹ + r² I⁻¹ = 3.5 m⁻¹ (I = 0.4 m r²).
  // 'distance' moves the point along n = d/|d| with w = nᵀ K n ≈ a∥: the sideways gap becomes
  // −e (1 − a⊥/a∥) = 2.5 e, to relative O((e/(g h²))²) ≈ 1e-9 and O(rotation²) ≈ 1e-7. 'point' solves
  // with K⁻¹: the gap closes to those second-order terms, ≤ 1e-6 e.
  const r = 0.05, e = 1e-9;
  const world: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [{ shape: { type: 'sphere', radius: r }, density: 1000, position: [0, -r, 0] }],
    constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA: [0, r, 0], anchorB: [e, 0, 0] }],
  };
  const sidewaysGapAfterOneUpdate = (form: XpbdVariant['form']) => {
    const s = new XpbdCpuSolver(world, registryOptions('xpbd-cpu'), { form });
    const h = s.options.dt / s.options.substeps;
    s.integrate(h);
    for (let c = 0; c < s.colouring.colourCount; c++) s.solveColour(c, h);
    // gap along x: x + R(q) r⁰ − pin, with R(q) r⁰ = r⁰ + 2 q_v × (q_v × r⁰ + w r⁰)
    const [qx, qy, qz, qw] = s.w.orientation.slice(0, 4);
    const t1 = [qy * 0 - qz * r, qz * 0 - qx * 0, qx * r - qy * 0].map((c, i) => c + qw * [0, r, 0][i]);
    const armX = 0 + 2 * (qy * t1[2] - qz * t1[1]);
    return s.w.position[0] + armX - e;
  };
  const ratio = sidewaysGapAfterOneUpdate('distance') / -e;
  const closed = sidewaysGapAfterOneUpdate('point') / -e;
  t.diagnostic(`sideways gap after one update ÷ before: distance ${ratio.toFixed(8)} (1 − a⊥/a∥ = −2.5), point ${closed.toExponential(2)}`);
  assert.ok(Math.abs(ratio - (1 - 3.5)) < 1e-5, `distance: ratio ${ratio}`);
  assert.ok(Math.abs(closed) < 1e-6, `point: ratio ${closed}`);
});

// --- c) what the CPU's cost cuts must not change ---------------------------------------------------

test('joint-only frames: the fused velocity update + integration (advance) steps to the bits of the two passes one after the other', async () => {
  // A chain of boxes and spheres (the general and the isotropic body paths) on point joints, a compliant
  // one among them, and a hinge (the generic row path), spinning and falling. One solver steps its frames
  // (between two substeps the velocity update and the next integration as one loop over the bodies);
  // the other is driven pass by pass as Müller et al. 2020, Alg. 2 lists them. Each body's arithmetic is
  // the same in both, in the same order, so the states must agree exactly: no tolerance.
  const r = 0.1, bodies: WorldDesc['bodies'] = [], constraints: WorldDesc['constraints'] = [];
  for (let k = 0; k < 8; k++) {
    const shape: WorldDesc['bodies'][number]['shape'] = k % 2 ? { type: 'sphere', radius: r } : { type: 'box', halfExtents: [r, 0.6 * r, 0.8 * r] };
    bodies.push({ shape, density: 1000, position: [(2 * k + 1) * r, 3, 0.01 * k], orientation: [0, 0.05 * k, 0, 1], angularVelocity: [0.3, -0.2 * k, 1] });
    if (k === 0) constraints.push({ type: 'point', bodyA: 0, bodyB: null, anchorA: [-r, 0, 0], anchorB: [0, 3, 0] });
    else if (k === 5) constraints.push({ type: 'hinge', bodyA: 4, bodyB: 5, anchorA: [r, 0, 0], anchorB: [-r, 0, 0], axisA: [0, 0, 1], axisB: [0, 0, 1] });
    else constraints.push({ type: 'point', bodyA: k - 1, bodyB: k, anchorA: [r, 0, 0], anchorB: [-r, 0, 0], ...(k === 3 ? { compliance: 1e-6 } : {}) });
  }
  const world: WorldDesc = { gravity: [0, -9.81, 0], collisions: false, bodies, constraints };
  const options = registryOptions('xpbd-cpu', { iterations: 2, substeps: 6, linearDamping: 0.1, angularDamping: 0.2 });
  const fused = new XpbdCpuSolver(world, options);
  const passes = new XpbdCpuSolver(world, options);
  const h = options.dt / options.substeps;
  for (let frame = 0; frame < 30; frame++) {
    await fused.step(1);
    for (let s = 0; s < options.substeps; s++) {
      passes.integrate(h);
      for (let k = 0; k < options.iterations; k++) for (let c = 0; c < passes.colouring.colourCount; c++) passes.solveColour(c, h, k === 0);
      passes.updateVelocities(h);
    }
  }
  for (const key of ['position', 'orientation', 'linearVelocity', 'angularVelocity'] as const) assert.deepStrictEqual(fused.w[key], passes.w[key], key);
  assert.ok(fused.stageNames.includes('update velocities + integrate positions'), fused.stageNames.join(', '));
});

test('point joint between two spheres: Δλ through K\'s rank-two structure is the solution of the 3×3 system K Δλ = e', () => {
  // Two spheres of different sizes and densities, turned and moving, joined 1 cm apart of the joint
  // (a gap e of about 1 cm), the joint compliant. After integrate, one update must give Δλ = K⁻¹ e with
  //   K = (m_A⁻¹ + m_B⁻¹ + α̃) I₃ + s_A (|a|² I₃ − a aᵀ) + s_B (|b|² I₃ − b bᵀ),  e = x_A + a − x_B − b
  // (a, b the lever arms, sᵢ = 1/(0.4 mᵢ rᵢ²)), solved here by Gaussian elimination with pivoting.
  // Bound: both are backward-stable solves of a system with condition number κ ≤ 1 + s|r|²/m⁻¹ = 3.5
  // per body (≤ 8 here), so they differ by ≲ 10 κ ε ≈ 2e-14 relative; the lever arms' rounding
  // (ε · 0.1 m) against a gap of 1 cm adds ~2e-15. Tolerance 1e-12 of |Δλ|, far below any physics.
  const world: WorldDesc = {
    gravity: [0, -9.81, 0],
    collisions: false,
    bodies: [
      { shape: { type: 'sphere', radius: 0.1 }, density: 1000, position: [0, 1, 0], orientation: [0.1, 0.3, -0.2, 0.9], angularVelocity: [1, -2, 0.5], linearVelocity: [0.2, 0, -0.1] },
      { shape: { type: 'sphere', radius: 0.05 }, density: 3000, position: [0.16, 1.01, 0.005], orientation: [-0.3, 0.1, 0.4, 0.8], angularVelocity: [-0.5, 0.3, 2] },
    ],
    constraints: [{ type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.1, 0, 0], anchorB: [-0.05, 0, 0], compliance: 1e-7 }],
  };
  const s = new XpbdCpuSolver(world, registryOptions('xpbd-cpu'));
  const h = s.options.dt / s.options.substeps;
  s.integrate(h);
  const { position: x, orientation: q } = s.w;
  const rotate = (o: number, v: number[]) => {
    const [qx, qy, qz, qw] = [q[o], q[o + 1], q[o + 2], q[o + 3]];
    return [
      (1 - 2 * (qy * qy + qz * qz)) * v[0] + 2 * (qx * qy - qz * qw) * v[1] + 2 * (qx * qz + qy * qw) * v[2],
      2 * (qx * qy + qz * qw) * v[0] + (1 - 2 * (qx * qx + qz * qz)) * v[1] + 2 * (qy * qz - qx * qw) * v[2],
      2 * (qx * qz - qy * qw) * v[0] + 2 * (qy * qz + qx * qw) * v[1] + (1 - 2 * (qx * qx + qy * qy)) * v[2],
    ];
  };
  const a = rotate(0, [0.1, 0, 0]), b = rotate(4, [-0.05, 0, 0]);
  const e = [0, 1, 2].map((i) => x[i] + a[i] - x[3 + i] - b[i]);
  const mp = world.bodies.map((body) => massProperties(body));
  const mA = 1 / mp[0].mass, mB = 1 / mp[1].mass;
  const sA = 1 / (0.4 * mp[0].mass * 0.1 ** 2), sB = 1 / (0.4 * mp[1].mass * 0.05 ** 2);
  const alphaTilde = 1e-7 / (h * h);
  const dot = (u: number[], v: number[]) => u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
  const K = [0, 1, 2].map((i) => [0, 1, 2].map((j) => (i === j ? mA + mB + alphaTilde + sA * dot(a, a) + sB * dot(b, b) : 0) - sA * a[i] * a[j] - sB * b[i] * b[j]));
  // Gaussian elimination with partial pivoting on [K | e]
  const M = K.map((row, i) => [...row, e[i]]);
  for (let c = 0; c < 3; c++) {
    let p = c;
    for (let i = c + 1; i < 3; i++) if (Math.abs(M[i][c]) > Math.abs(M[p][c])) p = i;
    [M[c], M[p]] = [M[p], M[c]];
    for (let i = c + 1; i < 3; i++) {
      const f = M[i][c] / M[c][c];
      for (let j = c; j < 4; j++) M[i][j] -= f * M[c][j];
    }
  }
  const expected = [0, 0, 0];
  for (let i = 2; i >= 0; i--) {
    let v = M[i][3];
    for (let j = i + 1; j < 3; j++) v -= M[i][j] * expected[j];
    expected[i] = v / M[i][i];
  }
  for (let c = 0; c < s.colouring.colourCount; c++) s.solveColour(c, h, true);
  const got = Array.from(s.multiplier.subarray(0, 3));
  const size = Math.hypot(...expected);
  assert.ok(size > 1e-6, `a gap to close: |Δλ| = ${size}`);
  for (let i = 0; i < 3; i++) assert.ok(Math.abs(got[i] - expected[i]) <= 1e-12 * size, `Δλ[${i}]: ${got[i]} against K⁻¹e ${expected[i]} (|Δλ| ${size})`);
});
