/**
 * Split impulses for rigid joints (rows/block-solver.ts solvePositions): the Baumgarte feedback β C/h
 * solved on pseudo-velocities of its own, never stored in the warm-started λ nor left in V.
 *
 * The fault it fixes (issue 21, "joints with contacts hold"): `hinge-chain --param collisions=1` diverged
 * under pgs-cpu (frame 182), gs-cpu (178) and jacobi-cpu (125). Measured: the contacts knock the chain of
 * thin planks (0.3 × 0.04 × 0.04 m) out of its plane; in a plank's twist about its long axis (I_x ≈ I_z / 28)
 * the alignment rows of the two hinges on it pull on nearly the same direction, so a sweep removes only
 * a few per cent of that mode's residual (2 links: 1.1 → 0.7 over 32 sweeps); the solve ends each
 * substep unconverged there, and the warm start (the last substep's λ, its Baumgarte impulse included) and
 * the bias feed each other: energy grows. Cold joints, β = 0 or β = 0.01 held; more iterations, a relax
 * pass, or dropping contact impulses did not. The same chain with collisions off and a 0.5 rad/s spin out of
 * its plane diverged too (pgs-cpu at frame 50): the contacts only start it.
 *
 * Settings: each solver at its registry defaults for the scene (pgs-cpu 4 × 8; gs-cpu and jacobi-cpu their
 * contact defaults), sleeping off. pgs-cpu splits on every scene; gs-cpu and jacobi-cpu, and their GPU twins
 * gs-gpu and jacobi-gpu (the same position pass in WGSL, rows/rows.wgsl.ts solve_positions*), on contact
 * scenes, where the four diverged (gs-cpu 178, jacobi-cpu 125, gs-gpu 183, jacobi-gpu 125); on joint scenes
 * jacobi-* keep the Jacobi text's biased rows (jacobi/cpu.ts splitsImpulses). There jacobi-* also split their
 * joints' masses (rows/block-solver.ts massShare: the spun chain below; its GPU twin in test/rows-gpu.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type Solver } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { metricsFor } from '../src/metrics/metrics.js';
import { editableWorld } from '../src/model/packed.js';
import type { WorldDesc } from '../src/model/world.js';
import { acquireGpu } from '../src/gpu/device.js';

const ENERGY_SLACK = 0.3; // J (tolerances: below)
const VIOLATION = 0.02; // m

async function make(id: string, world: WorldDesc): Promise<Solver> {
  const info = findSolver(id)!;
  return info.create(world, resolveOptions(info, { sleep: 0 }, world));
}

/**
 * Steps `frames` frames: the energy at the start, the largest energy and the largest linear violation over
 * the run, and the first frame whose energy passed start + ENERGY_SLACK (0: none).
 */
async function run(id: string, world: WorldDesc, frames: number): Promise<{ start: number; most: number; violation: number; frame: number }> {
  const solver = await make(id, world);
  const metrics = metricsFor(world);
  try {
    const start = metrics.measure(await solver.snapshot()).energy;
    let most = start, violation = 0, frame = 0;
    for (let f = 1; f <= frames; f++) {
      await solver.step(1);
      const m = metrics.measure(await solver.snapshot());
      const energy = m.finite ? m.energy : Infinity;
      if (frame === 0 && energy > start + ENERGY_SLACK) frame = f;
      most = Math.max(most, energy);
      violation = Math.max(violation, m.finite ? m.maxViolation : Infinity);
      if (!m.finite) break;
    }
    return { start, most, violation, frame };
  } finally {
    solver.destroy();
  }
}

/*
 * Tolerances. Energy: nothing puts energy in (gravity is conservative, rigid joints do no work, contacts
 * and friction only take it out), so E(t) ≤ E(0). The position pass moves bodies without a velocity and
 * may lift one by up to its joint's correction: at most Σ m g |C| = 8 × 0.24 kg × 9.81 m/s² × 1.2 cm ≈
 * 0.23 J with the violations measured here, so E(t) ≤ E(0) + 0.3 J (0.5 % of E(0) = 64 J). The old code
 * left that bound at frames 125–170 here (sleeping off) and diverged. Violation: the worst linear violation of any
 * hinge over the run ≤ 2 cm (7 % of a 30 cm link); measured 1.02–1.16 cm here, softstep-cpu 0.99 cm and
 * Rapier 1.02 cm on the same scene; the old code reached 2.96 m.
 */

for (const id of ['pgs-cpu', 'gs-cpu', 'jacobi-cpu']) {
  test(`${id}: the hinge chain with collisions keeps its energy and its joints over 4 s (the old code diverged within them)`, async () => {
    const world = findRigidScene('hinge-chain')!.build({ collisions: 1 });
    const r = await run(id, world, 240);
    assert.ok(r.most <= r.start + ENERGY_SLACK, `${id}: energy passed ${r.start.toFixed(3)} + ${ENERGY_SLACK} J at frame ${r.frame} (at most ${r.most.toPrecision(4)} J)`);
    assert.ok(r.violation <= VIOLATION, `${id}: a hinge opened ${(r.violation * 1000).toFixed(2)} mm`);
  });
}

/*
 * The mechanism without waiting for the contacts to start it: every link given a spin of ≤ 0.5 rad/s out of
 * the chain's plane at the start (ω = 0.5 (sin(1.3 i + 0.4), cos(0.7 i), 0) rad/s on link i), collisions on.
 * The old code passed the bound at frames 36 (pgs-cpu) and 33 (gs-cpu), and diverged. Same tolerances as above (the spin's
 * energy, 2·10⁻⁴ J, is inside E(0)).
 * jacobi-cpu with the split alone diverged here too (frame 115, at β = 0 from frame 58): both hinges of a plank
 * correct its twist in full in one Jacobi sweep, an eigenvalue of the sweep at −1 (the hinge residual 787 → 781
 * over 8 sweeps). Its joints' mass splitting on contact scenes (rows/block-solver.ts massShare, s_i = (n_i + 1)/2)
 * in the velocity solve holds it: worst 0.98 cm over 300 frames (1.05 with the position pass split too), the energy
 * never above E(0). The velocity solve's split is what holds it: with it taken out and the position pass's alone
 * split, the energy passed this bound at frame 121 (at 115 with neither), so this test fails if it is lost.
 */
for (const id of ['pgs-cpu', 'gs-cpu', 'jacobi-cpu']) {
  test(`${id}: the hinge chain spun out of its plane keeps its energy and its joints (the old code diverged within 100 frames)`, async () => {
    const world = editableWorld(findRigidScene('hinge-chain')!.build({ collisions: 1 }));
    world.bodies.forEach((b, i) => {
      b.angularVelocity = [0.5 * Math.sin(1.3 * i + 0.4), 0.5 * Math.cos(0.7 * i), 0];
    });
    const r = await run(id, world, 150);
    assert.ok(r.most <= r.start + ENERGY_SLACK, `${id}: energy passed ${r.start.toFixed(3)} + ${ENERGY_SLACK} J at frame ${r.frame} (at most ${r.most.toPrecision(4)} J)`);
    assert.ok(r.violation <= VIOLATION, `${id}: a hinge opened ${(r.violation * 1000).toFixed(2)} mm`);
  });
}

/*
 * What the split changes, on one body: a plank hinged to the world, released at rest without gravity with its
 * hinge violated (its anchor 2.2 cm off, its axis tilted 0.1 rad), a fixed ground far below so the scene has
 * contacts (gs-cpu and jacobi-cpu split only there). Nothing acts on it, so it must stay at rest: kinetic
 * energy exactly 0 (the velocity solve sees J V = 0 with λ = 0 and changes nothing; only the positions
 * move). With Baumgarte in the velocity solve the correction's velocity stays in V: the old code gave
 * 0.0148 J in the first frame, and the plank kept turning about its hinge (2.4·10⁻⁷ J after 1 s).
 * The position pass removes a fraction β of the error per substep: after the first frame of 4 substeps the
 * violation is (1 − β)⁴ = 0.4096 of the start, within 1 % (the rows are linear in the pose per substep;
 * the 0.1 rad tilt makes them off by ~θ²/2 = 0.5 %; measured 0.24 %).
 */
/** The violated hinge above: a plank hinged to the world, at rest, no gravity, a ground far below (a contact scene). */
function violatedHinge(): WorldDesc {
  const s = Math.sin(0.05), c = Math.cos(0.05);
  return {
    gravity: [0, 0, 0],
    bodies: [
      { shape: { type: 'box', halfExtents: [0.15, 0.02, 0.02] }, density: 500, position: [0.15, 0.02, 0.01], orientation: [s, 0, 0, c] },
      { shape: { type: 'plane' }, fixed: true, position: [0, -5, 0] },
    ],
    constraints: [{ type: 'hinge', bodyA: 0, bodyB: null, anchorA: [-0.15, 0, 0], anchorB: [0, 0, 0], axisA: [0, 0, 1], axisB: [0, 0, 1] }],
  };
}

/** Steps the violated hinge `frames` frames under `solver`: the kinetic energy must stay 0, the first frame keep (1 − β)^n of the violation. */
async function checkViolatedHinge(id: string, solver: Solver, world: WorldDesc, frames: number): Promise<void> {
  const metrics = metricsFor(world);
  const beta = solver.options.beta, substeps = solver.options.substeps;
  const start = metrics.measure(await solver.snapshot()).maxViolation;
  let kinetic = 0, first = NaN;
  for (let f = 1; f <= frames; f++) {
    await solver.step(1);
    const m = metrics.measure(await solver.snapshot());
    if (f === 1) first = m.maxViolation;
    kinetic = Math.max(kinetic, m.kinetic);
  }
  assert.equal(kinetic, 0, `${id}: the correction left ${kinetic} J of motion`);
  const expected = (1 - beta) ** substeps;
  assert.ok(Math.abs(first / start - expected) <= 0.01 * expected, `${id}: the first frame kept ${(first / start).toFixed(4)} of the violation, expected (1 − β)^n = ${expected.toFixed(4)}`);
}

for (const id of ['pgs-cpu', 'gs-cpu', 'jacobi-cpu']) {
  test(`${id}: a violated hinge is corrected without kinetic energy: a body at rest with nothing acting on it stays at rest`, async () => {
    const world = violatedHinge();
    const solver = await make(id, world);
    try {
      await checkViolatedHinge(id, solver, world, 60);
    } finally {
      solver.destroy();
    }
  });
}

/*
 * The GPU twins (SwiftShader where there is no GPU): the same check on the position pass in WGSL, over 10 frames
 * (the hinge chain's 240 frames take 14–27 s there; its figures under jacobi-gpu and gs-gpu match their CPU twins'
 * to the digits printed: worst 1.11 and 1.02 cm, −13.7 % energy). Kinetic energy exactly 0 in f32 too: with
 * V = 0, λ = 0 and no bias in the velocity rows every update is exactly 0 (ρ = 0); the old WGSL, biased, left the
 * correction's velocity in V. The ratio (1 − β)⁴ within the same 1 % (f32 rounding of C is ~1e-7 relative).
 * At the solvers' contact defaults on this scene (4 substeps for gs-gpu; jacobi-gpu's registry substeps).
 */
for (const id of ['jacobi-gpu', 'gs-gpu']) {
  test(`${id}: a violated hinge is corrected without kinetic energy (the position pass in WGSL)`, async () => {
    const world = violatedHinge();
    const gpu = await acquireGpu();
    try {
      const info = findSolver(id)!;
      const solver = await info.create(world, resolveOptions(info, { sleep: 0 }, world), gpu);
      try {
        await checkViolatedHinge(id, solver, world, 10);
      } finally {
        solver.destroy();
      }
    } finally {
      gpu.device.destroy();
    }
  });
}

/*
 * The position pass's own mass split (rows/block-solver.ts positionShare: s^p_i = max(1, k_i/2) on a body in k_i
 * joints) and its odd number of sweeps (ownPositionSweeps: K = ⌈N/2⌉ rounded up to odd, 5 at N = 8), against the
 * linear model of the pass, on bodies at rest, no gravity, a fixed ground far below (a contact scene: jacobi-*
 * split there), point joints at the bodies' centres (lever arms 0, so the rows are linear in the translations and
 * the model is exact). K Jacobi sweeps from λ_p = 0 on A λ = b give A λ_K = (I − (I − A D_s⁻¹)^K) b (D_s the blocks
 * of J S^p M⁻¹ Jᵀ, A = J M⁻¹ Jᵀ), so a substep maps the joints' C ← (I − β (I − (I − A D_s⁻¹)^K)) C. The model is
 * ours (this header); the solver's code is not used.
 *  - two joints at one point of a box (k = 2, s^p = 1): A = m⁻¹ 1 1ᵀ, the displacement at μ = 1 − 2/s = −1; the odd
 *    K removes 2β of it a substep, (1 − 2β)⁴ = 0.1296 after a frame; at K = 4 it stayed at 2 cm for ever (measured);
 *  - three joints at one point of a box (k = 3, s^p = 3/2): the same at μ = 1 − 3/s = −1; unsplit (s = 1, μ = −2)
 *    the pass multiplied C by 1 + 15 β = 4 a substep at K = 4 (measured: 256 after the frame);
 *  - two boxes on a line, box 0 held to the world and box 1 to box 0 (k = 2 on box 0: s^p = 1, unsplit; the
 *    velocity solve's split would be 1.5 there), both moved 2 cm: A = m⁻¹ [[1, −1], [−1, 2]], D = diag(A), its
 *    spectrum μ = ±1/√2. This one tells the unsplit pass from the velocity solve's split (1.5: a different figure).
 * Tolerance: 1e-9 relative in f64 (rounding of a few dozen operations), 1e-4 in f32 (C stored to ~6e-8
 * relative, four substeps). Kinetic energy exactly 0 (the velocity solve sees J V = 0, as above).
 */
const anchor = [0, 0, 0] as [number, number, number];
function jointedBoxes(boxes: number, joints: [number, number | null][]): WorldDesc {
  return {
    gravity: [0, 0, 0],
    bodies: [
      ...Array.from({ length: boxes }, () => ({ shape: { type: 'box' as const, halfExtents: [0.1, 0.1, 0.1] as [number, number, number] }, density: 500, position: [0.02, 0, 0] as [number, number, number] })),
      { shape: { type: 'plane' }, fixed: true, position: [0, -5, 0] },
    ],
    constraints: joints.map(([a, b]) => ({ type: 'point' as const, bodyA: a, bodyB: b, anchorA: anchor, anchorB: anchor })),
  };
}

/** The largest |C| after `substeps` substeps of the position pass's linear model (header), from C0. */
function positionPassModel(A: number[][], D: number[], K: number, beta: number, substeps: number, C0: number[]): number {
  const n = D.length;
  const mul = (X: number[][], Y: number[][]) => X.map((row) => Y[0].map((_, j) => row.reduce((s, x, k) => s + x * Y[k][j], 0)));
  const G = A.map((row, i) => row.map((a, j) => (i === j ? 1 : 0) - a / D[j])); // I − A D⁻¹
  let GK: number[][] = G.map((row, i) => row.map((_, j) => (i === j ? 1 : 0)));
  for (let k = 0; k < K; k++) GK = mul(GK, G);
  const T = GK.map((row, i) => row.map((g, j) => (i === j ? 1 : 0) - beta * ((i === j ? 1 : 0) - g)));
  let C = C0.map((c) => [c]);
  for (let s = 0; s < substeps; s++) C = mul(T, C);
  return Math.max(...C.map((c) => Math.abs(c[0])));
}

const positionCases = [
  { name: 'a box in two joints at one point (s^p = 1, μ = −1)', world: () => jointedBoxes(1, [[0, null], [0, null]]), A: [[1, 1], [1, 1]], D: [1, 1], C0: [0.02, 0.02] },
  { name: 'a box in three joints at one point (s^p = 3/2, μ = −1)', world: () => jointedBoxes(1, [[0, null], [0, null], [0, null]]), A: [[1, 1, 1], [1, 1, 1], [1, 1, 1]], D: [1.5, 1.5, 1.5], C0: [0.02, 0.02, 0.02] },
  { name: 'two boxes in a line, the first in two joints (s^p = 1, unsplit)', world: () => jointedBoxes(2, [[0, null], [1, 0]]), A: [[1, -1], [-1, 2]], D: [1, 2], C0: [0.02, 0] },
];
for (const id of ['jacobi-cpu', 'jacobi-gpu']) {
  for (const c of positionCases) {
    test(`${id}: ${c.name}: the position pass corrects it as its linear model says, without kinetic energy`, async () => {
      const world = c.world();
      const gpu = id.endsWith('-gpu') ? await acquireGpu() : null;
      try {
        const info = findSolver(id)!;
        const solver = await info.create(world, resolveOptions(info, { sleep: 0 }, world), gpu ?? undefined);
        try {
          const metrics = metricsFor(world);
          const { beta, substeps, iterations } = solver.options;
          const start = metrics.measure(await solver.snapshot()).maxViolation;
          await solver.step(1);
          const m = metrics.measure(await solver.snapshot());
          const expected = positionPassModel(c.A, c.D, Math.ceil(iterations / 2) | 1, beta, substeps, c.C0) / Math.max(...c.C0);
          assert.equal(m.kinetic, 0, `${id}: the correction left ${m.kinetic} J of motion`);
          const tolerance = gpu ? 1e-4 : 1e-9;
          assert.ok(Math.abs(m.maxViolation / start - expected) <= tolerance * expected, `${id}: the frame kept ${(m.maxViolation / start).toFixed(6)} of the violation, the model ${expected.toFixed(6)}`);
        } finally {
          solver.destroy();
        }
      } finally {
        gpu?.device.destroy();
      }
    });
  }
}
