/**
 * The contact residual on the GPU (contacts/gpu-contacts.wgsl.ts cj_residual, cj_residual_sum) against the CPU
 * twins' (contacts/contact-solver.ts solve with `residual`: the projected residual, a row at its bound pushed
 * outward counting 0): jacobi-gpu against jacobi-cpu, softstep-gpu and gs-gpu against softstep-cpu and gs-cpu
 * sweeping their manifolds in the same colour order (test/gpu-contacts.test.ts has why), coherence off on the CPU.
 *
 * Bound, f32 against f64 (ε = 2⁻²⁴), for the channel r_k = ‖ρ_k‖₂ / h after k sweeps of the recorded frame F,
 * over the P contact points, ρ per point (m/s):
 *   velocities   δV ≤ (S_before + k + 1) · 64 ε V  (test/gpu-contacts.test.ts's header: ≤ 64 ε V of rounding per
 *                sweep, a manifold ≤ 4 points of ~16 flops; S_before = the sweeps of the frames before F, the
 *                relax's and each substep's warm start counted as sweeps), V the largest speed reached, ≤ v₀ + g F dt;
 *   J V          |δ(J_c V)| ≤ 2 (1 + 4.5) δV: each body's δv and the lever arm's δω × r, |δω × r| ≤ m |r|² / I_min δv,
 *                and for a cube of half extent a (|r|² ≤ 3 a², I_min = (2/3) m a²) that factor is 4.5;
 *   bias         the separation's rounding δs over the bias rate ≤ 1/h (the speculative s/h; the springs' and
 *                Baumgarte's rates are below it): δs ≤ 4 ε X + (the frames before F) S ε X + F dt δV (positions);
 *   so           |Δr_k| ≤ √P (11 δV + δs / h) / h, and the f32 sum's (n / 256 + 8) ε r, far below.
 * A wrong kernel is off by far more: the wrong masses or V, a missing projection, the split masses' friction metric,
 * a rim test at f64's slack (the sliding box's slip v/h = 480 m/s² counted), are off by m/s² to hundreds of m/s².
 * Measured (SwiftShader): the pile's frame 1 agrees to ~3e-6 m/s² (1e-7 relative); the bound is a worst case.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { JacobiCpuSolver, CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL } from '../src/solvers/jacobi/cpu.js';
import { JacobiGpuSolver } from '../src/solvers/jacobi/gpu.js';
import { SoftStepCpuSolver, sizeSubsteps } from '../src/solvers/softstep/cpu.js';
import { SoftStepGpuSolver } from '../src/solvers/softstep/gpu.js';
import { GaussSeidelContactCpuSolver } from '../src/solvers/gs/contacts.js';
import { GaussSeidelGpuSolver } from '../src/solvers/gs/gpu.js';
import { loadRigidScene } from '../src/scenes/load.js';
import type { WorldDesc } from '../src/model/world.js';
import type { ResidualCurve, Solver, SolverOptions } from '../src/solvers/solver.js';
import type { ContactSolver } from '../src/contacts/contact-solver.js';
import type { GpuContext } from '../src/gpu/device.js';

const eps = 2 ** -24;
const g = 9.81;

/** a 1 m box sliding at 2 m/s on μ = 0.5 ground: its friction sits on the disc's rim against the slip */
const slidingBox: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [
    { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], friction: 0.5 },
    { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, friction: 0.5, position: [0, 0.5, 0], linearVelocity: [2, 0, 0] },
  ],
  constraints: [],
};

interface Twin {
  id: string;
  /** contact sweeps per iteration and substep (softstep: the solve's and the relax's) */
  sweeps: number;
  make(world: WorldDesc, gpu: GpuContext): Promise<{ cpu: Solver & { contactSolver: ContactSolver }; gpuSolver: Solver & { destroy(): void; options: SolverOptions } }>;
}

const twins: Twin[] = [
  {
    id: 'jacobi-gpu',
    sweeps: 1,
    async make(world, gpu) {
      const opts = { substeps: sizeSubsteps(world, 8), sleep: 0 };
      const cpu = new JacobiCpuSolver(world, opts);
      cpu.collision!.coherence = false;
      return { cpu: cpu as never, gpuSolver: await JacobiGpuSolver.create(world, opts, gpu) };
    },
  },
  {
    id: 'softstep-gpu',
    sweeps: 2,
    async make(world, gpu) {
      const opts = { substeps: sizeSubsteps(world, 4), iterations: 1, sleep: 0 };
      const cpu = new SoftStepCpuSolver(world, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver.colourOrder = true;
      return { cpu, gpuSolver: await SoftStepGpuSolver.create(world, opts, gpu) };
    },
  },
  {
    id: 'gs-gpu',
    sweeps: 1,
    async make(world, gpu) {
      const opts = { substeps: 4, sleep: 0 };
      const cpu = new GaussSeidelContactCpuSolver(world, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver.colourOrder = true;
      return { cpu, gpuSolver: await GaussSeidelGpuSolver.create(world, opts, gpu) };
    },
  },
];

/** The header's bound on |Δr_k| for record point k of frame F (1 = the first), P points. */
function bound(world: WorldDesc, o: SolverOptions, sweeps: number, F: number, k: number, P: number): number {
  const h = o.dt / o.substeps;
  const X = Math.max(1, ...world.bodies.flatMap((b) => (b.shape.type === 'plane' ? [] : b.position.map(Math.abs))));
  const v0 = Math.max(0, ...world.bodies.map((b) => Math.hypot(...(b.linearVelocity ?? [0, 0, 0]))));
  const V = v0 + g * F * o.dt;
  const sweepsBefore = (F - 1) * o.substeps * (sweeps * o.iterations + 1);
  const dV = (sweepsBefore + k + 1) * 64 * eps * V;
  const ds = 4 * eps * X + (F - 1) * o.substeps * eps * X + F * o.dt * dV;
  return (Math.sqrt(P) * (11 * dV + ds / h)) / h;
}

for (const twin of twins)
  test(`${twin.id} records the contact residual of its CPU twin: a pile's first frame and a sliding box, within the f32 bound`, async () => {
    const gpu = await acquireGpu();
    try {
      for (const [name, world, F] of [
        ['pyramid base 3', loadRigidScene('pyramid', { base: 3 }).world, 1],
        ['sliding box', slidingBox, 3],
      ] as const) {
        const { cpu, gpuSolver } = await twin.make(world, gpu);
        try {
          await cpu.step(F - 1);
          await gpuSolver.step(F - 1);
          const rc: ResidualCurve = await cpu.stepRecordingResiduals!();
          const rg: ResidualCurve = await gpuSolver.stepRecordingResiduals!();
          const P = cpu.contactSolver.count;
          assert.ok(P > 0, `${name}: no contact point in frame ${F}`);
          for (const channel of [CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL]) {
            const a = rc.channels[channel], b = rg.channels[channel];
            assert.ok(b, `${twin.id}, ${name}: no '${channel}' channel (channels: ${Object.keys(rg.channels).join(', ')})`);
            assert.equal(b.length, a.length, `${twin.id}, ${name}, ${channel}: ${b.length} record points, the CPU ${a.length}`);
            let worst = 0, worstBound = 0;
            for (let k = 0; k < a.length; k++) {
              const B = bound(world, gpuSolver.options, twin.sweeps, F, k, P) + (P / 256 + 8) * eps * Math.abs(a[k]);
              const d = Math.abs(a[k] - b[k]);
              assert.ok(d <= B, `${twin.id}, ${name}, ${channel}, k = ${k}: GPU ${b[k]} against CPU ${a[k]} m/s², |Δ| ${d.toExponential(2)} > bound ${B.toExponential(2)}`);
              if (d > worst) [worst, worstBound] = [d, B];
            }
            console.log(`${twin.id}, ${name}, ${channel}: CPU ${a.map((x) => x.toPrecision(3)).join(' ')}; worst |Δ| ${worst.toExponential(1)} m/s² (bound ${worstBound.toExponential(1)})`);
          }
        } finally {
          gpuSolver.destroy();
        }
      }
    } finally {
      gpu.device.destroy();
    }
  });
