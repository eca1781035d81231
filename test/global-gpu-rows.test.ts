/**
 * global-gpu on constraint rows (f32 CR on rows/rows.wgsl.ts's buffers) against global-cpu (f64, direct
 * solve of the same A λ = b) on one small scene per equality joint type and shape: a box on a hinge (no
 * limit) with a spin off its axis, a fixed two-box cantilever, and distance rods between a capsule, a
 * sphere and the world; and the refusal of one-sided rows (a rope, a hinge limit) with global-cpu's reason.
 * Runs on the software adapter (SwiftShader) where there is no GPU.
 *
 * Bound, frame by frame (one solve per frame: substeps 1, h = dt), as test/global.test.ts (f) derives it
 * for point joints, here with A, b and J of the rows (global-cpu's DelassusOperator after its step):
 *   residual   the GPU's λ on the CPU's system: ‖b − A λ_gpu‖ ≤ τ ‖b‖ + 32 ε (‖b‖ + ‖A‖_F ‖λ‖) + (k + 1) ε ‖A‖_F ‖λ‖
 *              (τ the GPU's tolerance, k its iterations that step: the rounding of A, b in f32 and the drift
 *              of CR's recurrence residual from the true one);
 *   velocity   δV = h M⁻¹ Jᵀ δλ = h G (r_cpu − r_gpu), G = M⁻¹ Jᵀ A⁻¹: |δV| ≤ h ‖G‖_F (r_gpu + r_cpu), plus the
 *              f32 rounding of V* + ΔV (4 ε of |V| and of the largest impulse h |M⁻¹ Jᵀ| |λ|), summed over steps;
 *   position   |δx| ≤ F ε X + F h Σ δV (and ℓ |δq| likewise, ℓ the body size).
 * Angular velocities count as ℓ ω (the speed they give the body's surface) in V and in G. A wrong row
 * (a sign, a missing γ, a wrong preconditioner block that CR then trusts) moves λ by its own size,
 * orders of magnitude above these bounds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { GlobalCpuSolver } from '../src/solvers/global/cpu.js';
import { GlobalGpuSolver, defaultGpuTolerance } from '../src/solvers/global/gpu.js';
import { findSolver } from '../src/solvers/registry.js';
import type { WorldDesc } from '../src/model/world.js';
import { cpuSystem, frobenius, inverse, norm2 as norm } from './support/matrix.js';

const eps = 2 ** -24;
const g = 9.81;
const options = { dt: 1 / 60, substeps: 1, iterations: 64 };



interface Scene {
  name: string;
  world: WorldDesc;
  frames: number;
  /** ℓ, m: the bodies' size */
  size: number;
  /** the motion is real: a check on the CPU's last snapshot against the first (m) */
  moved?: (start: Float64Array, end: Float64Array) => number;
  /** a row whose λ a statics argument gives (N): checked on the GPU's λ within ‖A⁻¹‖_F times the residual bound */
  load?: { row: number; expected: number };
}

const box = (h: [number, number, number]) => ({ type: 'box' as const, halfExtents: h });

const scenes: Scene[] = [
  {
    // joints.test.ts's physical pendulum: a box on a world hinge about z, with a spin about x and y the angular rows take out
    name: 'hinge box pendulum',
    world: {
      gravity: [0, -g, 0],
      collisions: false, // joints only (contacts are test/contacts.test.ts)
      bodies: [{ shape: box([0.1, 0.3, 0.05]), density: 500, position: [0.4 * Math.sin(0.3), 2 - 0.4 * Math.cos(0.3), 0], orientation: [0, 0, Math.sin(0.15), Math.cos(0.15)], angularVelocity: [2, 3, 0] }],
      constraints: [{ type: 'hinge', bodyA: 0, bodyB: null, anchorA: [0, 0.4, 0], anchorB: [0, 2, 0], axisA: [0, 0, 1], axisB: [0, 0, 1] }],
    },
    frames: 30,
    size: 0.3,
    moved: (a, b) => Math.abs(b[0] - a[0]),
  },
  {
    name: 'fixed two-box cantilever',
    world: {
      gravity: [0, -g, 0],
      collisions: false, // joints only (contacts are test/contacts.test.ts)
      bodies: [
        { shape: box([0.25, 0.05, 0.05]), density: 500, position: [0.25, 2, 0], linearVelocity: [0, 0.2, 0] },
        { shape: box([0.25, 0.05, 0.05]), density: 500, position: [0.75, 2, 0], angularVelocity: [0.5, 0, 1] },
      ],
      constraints: [
        { type: 'fixed', bodyA: 0, bodyB: null, anchorA: [-0.25, 0, 0], anchorB: [0, 2, 0] },
        { type: 'fixed', bodyA: 0, bodyB: 1, anchorA: [0.25, 0, 0], anchorB: [-0.25, 0, 0] },
      ],
    },
    frames: 30,
    size: 0.25,
    // the velocity-level welds take the kicks out in the first step and then hold the boxes still (an exact
    // solve leaves no motion to see); the root weld carries the whole weight: its vertical row (row 1; J_vA = −e_y,
    // the impulse on box 0 is −h λ e_y) has λ = −(m₀ + m₁) g
    load: { row: 1, expected: -2 * 500 * (0.5 * 0.1 * 0.1) * g },
  },
  {
    // a capsule on a rod to the world, a sphere on a rod to the capsule's end: a double pendulum of rods
    name: 'distance rods (capsule, sphere)',
    world: {
      gravity: [0, -g, 0],
      collisions: false, // joints only (contacts are test/contacts.test.ts)
      bodies: [
        { shape: { type: 'capsule', radius: 0.05, halfHeight: 0.15 }, density: 800, position: [0.5, 1.8, 0], orientation: [0, 0, Math.sin(-0.4), Math.cos(-0.4)] },
        { shape: { type: 'sphere', radius: 0.06 }, density: 1000, position: [1.1, 1.7, 0.1], linearVelocity: [0, 0, 0.5] },
      ],
      constraints: [
        { type: 'distance', bodyA: 0, bodyB: null, anchorA: [0, 0.15, 0], anchorB: [0, 2, 0], length: 0.5 },
        { type: 'distance', bodyA: 0, bodyB: 1, anchorA: [0, -0.15, 0], anchorB: [0, 0, 0], length: 0.45 },
      ],
    },
    frames: 30,
    size: 0.2,
    moved: (a, b) => Math.abs(b[4] - a[4]),
  },
];

for (const scene of scenes) {
  test(`global-gpu on rows agrees with global-cpu on the ${scene.name} within the f32 bound`, async (t) => {
    assert.equal(findSolver('global-gpu')!.unsupported!(scene.world), null, 'global-gpu takes the equality joints');
    const gpu = await acquireGpu();
    const cpu = new GlobalCpuSolver(scene.world, options);
    const gs = await GlobalGpuSolver.create(scene.world, options, gpu);
    try {
      const h = options.dt;
      const ell = scene.size;
      const X = Math.max(...scene.world.bodies.flatMap((b) => b.position.map(Math.abs)), 1);
      const start = (await cpu.snapshot()).position.slice();
      let dvSum = 0, iterationsBefore = 0, worst = 0, worstResidual = 0, loadError = 0;
      for (let F = 1; F <= scene.frames; F++) {
        await cpu.step(1);
        await gs.step(1);
        const { op, A, b, C } = cpuSystem(cpu, ell);
        const stats = await gs.readCgStats();
        const used = stats.iterations - iterationsBefore;
        iterationsBefore = stats.iterations;
        const lg = await gs.multipliers(), lc = cpu.multiplier;
        assert.equal(lg.length, lc.length);
        const rg = op.residualNorm(b, lg), rc = op.residualNorm(b, lc);
        const nb = norm(b), AF = frobenius(A), nl = norm(lg);
        const rBound = defaultGpuTolerance * nb + 32 * eps * (nb + AF * nl) + (used + 1) * eps * AF * nl;
        assert.ok(rg <= rBound, `frame ${F}: GPU ‖b − Aλ‖ = ${rg.toExponential(2)} > ${rBound.toExponential(2)} (${used} iterations)`);
        worstResidual = Math.max(worstResidual, rg / nb);
        const Ainv = inverse(A);
        const G = C.map((row) => Float64Array.from({ length: A.length }, (_, j) => row.reduce((s, v, r) => s + v * Ainv[r][j], 0)));
        const a = await cpu.snapshot(), s = await gs.snapshot();
        const V = Math.max(...Array.from(a.linearVelocity, Math.abs), ...Array.from(a.angularVelocity, (w) => ell * Math.abs(w)), 1e-3);
        const impulse = Math.max(...C.map((row) => h * row.reduce((acc, v, r) => acc + Math.abs(v * lc[r]), 0)));
        dvSum += h * frobenius(G) * (rg + rc) + 4 * eps * (V + impulse);
        let dv = 0, dx = 0, dq = 0;
        for (let i = 0; i < a.linearVelocity.length; i++)
          dv = Math.max(dv, Math.abs(a.linearVelocity[i] - s.linearVelocity[i]), ell * Math.abs(a.angularVelocity[i] - s.angularVelocity[i]));
        for (let i = 0; i < a.position.length; i++) dx = Math.max(dx, Math.abs(a.position[i] - s.position[i]));
        for (let i = 0; i < a.orientation.length / 4; i++) {
          const q = a.orientation.subarray(4 * i, 4 * i + 4), p = s.orientation.subarray(4 * i, 4 * i + 4);
          const minus = Math.hypot(...Array.from(q, (v, k) => v - p[k])), plus = Math.hypot(...Array.from(q, (v, k) => v + p[k]));
          dq = Math.max(dq, ell * Math.min(minus, plus));
        }
        assert.ok(dv <= dvSum, `frame ${F}: |Δv| = ${dv.toExponential(2)} > ${dvSum.toExponential(2)}`);
        const dxBound = F * eps * X + F * h * dvSum;
        assert.ok(dx <= dxBound, `frame ${F}: |Δx| = ${dx.toExponential(2)} > ${dxBound.toExponential(2)}`);
        const dqBound = F * eps * ell + F * h * dvSum;
        assert.ok(dq <= dqBound, `frame ${F}: ℓ|Δq| = ${dq.toExponential(2)} > ${dqBound.toExponential(2)}`);
        worst = Math.max(worst, dx / dxBound, dq / dqBound);
        if (scene.load && F > 1) {
          // λ − λ_exact = A⁻¹ (b − A λ) on the CPU's system, where λ_exact is the statics load (after the first step, which takes out the kicks)
          const err = Math.abs(lg[scene.load.row] - scene.load.expected);
          const lBound = frobenius(Ainv) * rBound;
          assert.ok(err <= lBound, `frame ${F}: load ${lg[scene.load.row]} N, statics ${scene.load.expected} N, |Δ| ${err} > ${lBound}`);
          loadError = Math.max(loadError, err / Math.abs(scene.load.expected));
        }
      }
      const end = (await cpu.snapshot()).position;
      const moved = scene.moved?.(start, end) ?? NaN;
      if (scene.moved) assert.ok(moved > 1e-3, `the scene moved only ${moved} m`);
      assert.equal(gs.cgStats().unconvergedSteps, 0, 'every solve reached the tolerance');
      const fact = scene.moved ? `moved ${moved.toExponential(2)} m` : `root weld's vertical λ within ${loadError.toExponential(2)} of the weight`;
      t.diagnostic(`${scene.name}: ${cpu.rowSolver.rows.count} rows, worst ‖b − Aλ_gpu‖/‖b‖ ${worstResidual.toExponential(2)}, worst |Δ|/bound ${worst.toExponential(2)}, ${fact}, ${(gs.cgStats().iterations / scene.frames).toFixed(1)} CR iterations per solve`);
    } finally {
      gs.destroy();
      gpu.device.destroy();
    }
  });
}

test('global-gpu refuses one-sided rows (a rope, a hinge limit) with the reason global-cpu gives', () => {
  const info = findSolver('global-gpu')!;
  const rope: WorldDesc = {
    gravity: [0, -g, 0],
    collisions: false, // joints only (contacts are test/contacts.test.ts)
    bodies: [{ shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0, 1, 0] }],
    constraints: [{ type: 'distance', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 2, 0], maxLength: 1.5 }],
  };
  const limited: WorldDesc = {
    gravity: [0, -g, 0],
    collisions: false, // joints only (contacts are test/contacts.test.ts)
    bodies: [{ shape: box([0.3, 0.05, 0.05]), density: 500, position: [0.3, 2, 0] }],
    constraints: [{ type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0.3, 2, 0] }, { type: 'hinge', bodyA: 0, bodyB: null, anchorA: [-0.3, 0, 0], anchorB: [0, 2, 0], axisA: [0, 0, 1], axisB: [0, 0, 1], upperAngle: 0.5 }],
  };
  const why = info.unsupported!(rope) ?? '';
  assert.match(why, /^global-gpu solves the equality system A λ = b; constraints\[0\] has a one-sided row/);
  assert.equal(why.replace('global-gpu', 'global-cpu'), findSolver('global-cpu')!.unsupported!(rope));
  assert.match(info.unsupported!(limited) ?? '', /constraints\[1\] has a one-sided row/);
});
