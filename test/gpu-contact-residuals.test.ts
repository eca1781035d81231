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
 * xpbd-gpu against xpbd-cpu: its own test below, with its position-level bound.
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
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';
import { XpbdGpuSolver } from '../src/solvers/xpbd/gpu.js';
import type { ContactList } from '../src/rows/contact.js';
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

/*
 * xpbd-gpu's contact residual (xpbd/contacts.wgsl.ts xc_residual, summed by cj_residual_sum) against xpbd-cpu's
 * (xpbd/contacts.ts residual: r = C / h² per contact row, projected), both sweeping their manifolds in the same
 * colour order, coherence off on the CPU; record points k = 0 (the first substep's start, λ = 0) .. N (after each
 * of its N iterations) of frame 1.
 *
 * Bound, f32 against f64 (ε = 2⁻²⁴), per row: test/xpbd-gpu-contacts.test.ts's rounding model, the one its
 * positions are held to: integrate rounds each body's position once, and each projection of a manifold rounds
 * its bodies' x and q once (a point at the lever arm moved by ≤ ε X each), so after k iterations of the first
 * substep the positions differ by δx_k ≤ (1 + 2 M k) ε X (M the most manifolds on one body, X the largest
 * coordinate, ≥ 1 m). A row's C (d = −(p_B − p_A) · n, or Δp · t: sums of ~8 terms of size ≤ X, two rotations)
 * adds ≤ 8 ε X of its own rounding: |δC| ≤ 2 δx_k + 8 ε X, |δr| ≤ |δC| / h². Over the ≤ 3P rows (a normal and two
 * tangent rows a point): |Δ‖r‖₂| ≤ ‖δr‖₂ ≤ √(3P) |δC| / h²; the f32 sum of squares adds (n / 256 + 8) ε ‖r‖², far
 * below. The projection's branches (λ_n > 0 or C ≤ 0; stuck or sliding) differ only where C or λ sit within
 * their rounding of 0, where a row's term is within the same |δC| / h²; the piles are at rest (stuck) in frame 1.
 * What a wrong kernel gives: the apart rows counted (a speculative point 1 mm apart is 360 m/s² at h = 1/600), a
 * wrong 1/h² (×600), the push-out's allowed overlap left out, λ not read as 0 at the substep's start, the friction
 * rows of a point that is not held, are off by far more than the bound at k = 0, where the pile's rows carry its
 * substep's fall g h² (≈ g per row: the bound is a few per cent of it). After the projections (k ≥ 1) the rows are
 * met up to the Gauss–Seidel coupling of the manifolds and the residual is of the bound's size or below it: there
 * the check only says the two stay within rounding of each other (measured: the pile's normal rows to 5e-2 m/s² of
 * 11–34, its friction rows to 0.3 of 3–10, SwiftShader).
 */
/** a box held by a point joint at its corner while it rests on another (test/xpbd-gpu-contacts.test.ts): joints and contacts */
const hungBox: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [
    { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
    { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0.5, 0] },
    { shape: { type: 'box', halfExtents: [0.5, 0.25, 0.5] }, density: 1000, position: [0.2, 1.25, 0.1] },
  ],
  constraints: [{ type: 'point', bodyA: 2, bodyB: null, anchorA: [0.5, 0.25, 0.5], anchorB: [0.7, 1.5, 0.6] }],
};

test('xpbd-gpu records the contact residual of xpbd-cpu: a pile\'s and a hung box\'s first frame, within the f32 bound', async () => {
  const gpu = await acquireGpu();
  try {
    for (const [name, world] of [
      ['pyramid base 3', loadRigidScene('pyramid', { base: 3 }).world],
      ['hung box', hungBox],
    ] as const) {
      const opts = { substeps: 10, iterations: 2, sleep: 0 };
      const cpu = new XpbdCpuSolver(world, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver!.colourOrder = true;
      const gs = await XpbdGpuSolver.create(world, opts, gpu);
      try {
        const rc: ResidualCurve = await cpu.stepRecordingResiduals();
        const rg: ResidualCurve = await gs.stepRecordingResiduals();
        const P = cpu.contacts.count;
        assert.ok(P > 0, `${name}: no contact point in frame 1`);
        const M = mostManifoldsOnOneBody(cpu.contacts, world);
        const h = gs.options.dt / gs.options.substeps;
        const X = Math.max(1, ...world.bodies.flatMap((b) => (b.shape.type === 'plane' ? [] : b.position.map(Math.abs))));
        for (const channel of [CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL]) {
          const a = rc.channels[channel], b = rg.channels[channel];
          assert.ok(a, `${name}: xpbd-cpu gives no '${channel}' channel`);
          assert.ok(b, `xpbd-gpu, ${name}: no '${channel}' channel (channels: ${Object.keys(rg.channels).join(', ')})`);
          assert.equal(b.length, a.length, `${name}, ${channel}: ${b.length} record points, the CPU ${a.length}`);
          let worst = 0, worstBound = 0;
          for (let k = 0; k < a.length; k++) {
            const dC = (2 * (1 + 2 * M * k) + 8) * eps * X;
            const B = (Math.sqrt(3 * P) * dC) / (h * h) + (P / 256 + 8) * eps * Math.abs(a[k]);
            const d = Math.abs(a[k] - b[k]);
            assert.ok(d <= B, `xpbd-gpu, ${name}, ${channel}, k = ${k}: GPU ${b[k]} against CPU ${a[k]} m/s², |Δ| ${d.toExponential(2)} > bound ${B.toExponential(2)}`);
            if (d > worst) [worst, worstBound] = [d, B];
            // where the check bites: the normal rows at the substep's start hold the fall g h² each, far above the bound
            if (channel === CONTACT_NORMAL_CHANNEL && k === 0) assert.ok(B < 0.2 * a[0], `${name}: the bound ${B.toExponential(2)} is not below a fifth of the residual ${a[0]} at k = 0`);
          }
          console.log(`xpbd-gpu, ${name} (${P} points, M = ${M}), ${channel}: CPU ${a.map((x) => x.toPrecision(3)).join(' ')}, GPU ${b.map((x) => x.toPrecision(3)).join(' ')} m/s²; worst |Δ| ${worst.toExponential(1)} (bound ${worstBound.toExponential(1)})`);
        }
      } finally {
        gs.destroy();
      }
    }
  } finally {
    gpu.device.destroy();
  }
});

/** The most manifolds (runs of one pair in the list) on one moving body. */
function mostManifoldsOnOneBody(list: ContactList, world: WorldDesc): number {
  const on = new Map<number, number>();
  const add = (b: number) => b < world.bodies.length && !world.bodies[b].fixed && on.set(b, (on.get(b) ?? 0) + 1);
  for (let c = 0; c < list.count; c++) {
    if (c > 0 && list.bodyA[c] === list.bodyA[c - 1] && list.bodyB[c] === list.bodyB[c - 1]) continue;
    add(list.bodyA[c]);
    add(list.bodyB[c]);
  }
  return Math.max(1, ...on.values());
}
