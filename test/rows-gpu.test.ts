/**
 * jacobi-gpu and gs-gpu on constraint rows (f32, rows/rows.wgsl.ts) against their CPU twins
 * jacobi-cpu and gs-cpu (f64, rows/block-solver.ts) on one small scene per joint type and shape:
 * a rope (one-sided distance row) that goes slack and taut again, a box on a hinge with a limit,
 * a fixed two-box cantilever, and a distance rod between a capsule and a sphere. Runs on the
 * software adapter (SwiftShader) where there is no GPU.
 *
 * Bound, f32 against f64 (ε = 2⁻²⁴), as test/jacobi-gpu.test.ts derives it for point joints, with
 * the blocks' conditioning added: each step rounds the free velocity (ε V) and the solve, which
 * touches each λ in N_it iterations of ~16 flops (16 N_it ε V), and whose f32 block inverse
 * (A_bb + γ)⁻¹ is off by up to κ ε relative, κ the largest condition number ‖A‖∞ ‖A⁻¹‖∞ of a block
 * (a hinge's or weld's block mixes linear rows in 1/kg and angular rows in 1/(kg m²)):
 *   δv_step ≤ (16 N_it + κ) ε V,   δv(S) ≤ S δv_step,   δx(S) ≤ S ε X + S h δv(S)
 * over S = frames × substeps steps, X the largest coordinate, and V the largest velocity the sums
 * hold: the bodies' speed (≤ g t + v₀) and each impulse's, h |λ| times the largest m⁻¹ (or ℓ I⁻¹ for
 * a torque; λ from the CPU twin), which in a loaded loop is far above the speed: the gather
 * Σ h M⁻¹ Jᵀ λ rounds at ε of its terms, not of their small sum.
 * The clamp of a one-sided row is a projection (1-Lipschitz), so it does not amplify the
 * difference; C crossing 0 switches the bias rate, but biasRate · C is continuous there (C ≈ 0).
 * Angular velocities are compared through the speed they give a point at the body's size ℓ (ℓ |Δω|),
 * orientations through ℓ |Δq|. A wrong row (a sign, a missing term, a wrong clamp) is off by g h² ≈
 * 2e-4 m within a step and centimetres within the run, far above this bound.
 * The cantilever and the rod have two bodies and collisions on (a contact scene, though no pair can touch):
 * jacobi-cpu and jacobi-gpu both split their joints' β there (the position pass, rows/rows.wgsl.ts
 * solve_positions*), so these two compare that stage too; gs-gpu takes no contacts where every pair is joined,
 * and its twin here (gs/cpu.ts, contacts on rows) does not split either.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { JacobiGpuSolver } from '../src/solvers/jacobi/gpu.js';
import { GaussSeidelCpuSolver } from '../src/solvers/gs/cpu.js';
import { GaussSeidelGpuSolver } from '../src/solvers/gs/gpu.js';
import { largestBlockCondition } from './support/matrix.js';
import type { WorldDesc } from '../src/model/world.js';
import { necklace } from '../src/scenes/necklace.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { editableWorld } from '../src/model/packed.js';
import type { Snapshot, SolverOptions } from '../src/solvers/solver.js';

const eps = 2 ** -24;
const g = 9.81;
const options: Partial<SolverOptions> = { dt: 1 / 60, substeps: 4, iterations: 8 };

const makePairs = (options: Partial<SolverOptions>) => [
  { gpuId: 'jacobi-gpu', options, cpu: (w: WorldDesc) => new JacobiCpuSolver(w, options), gpu: (w: WorldDesc, c: GpuContext) => JacobiGpuSolver.create(w, options, c) },
  { gpuId: 'gs-gpu', options, cpu: (w: WorldDesc) => new GaussSeidelCpuSolver(w, options), gpu: (w: WorldDesc, c: GpuContext) => GaussSeidelGpuSolver.create(w, options, c) },
];
const pairs = makePairs(options);


interface Scene {
  name: string;
  world: WorldDesc;
  frames: number;
  /** the bodies' size ℓ, m */
  size: number;
  /** a physical check on the CPU twin's run (frame by frame), so the scene does what it is meant to */
  check?: (snaps: Snapshot[]) => void;
}

/**
 * Runs both twins frame by frame and checks every frame against the bound. Returns the largest
 * |Δx| / bound seen, for the diagnostic.
 */
async function compare(pair: (typeof pairs)[number], scene: Scene, gpu: GpuContext): Promise<string> {
  const cpu = pair.cpu(scene.world);
  const gs = await pair.gpu(scene.world, gpu);
  const { dt, substeps, iterations } = { dt: 1 / 60, substeps: 1, iterations: 8, ...pair.options };
  const h = dt / substeps;
  const X = Math.max(1, ...scene.world.bodies.flatMap((b) => b.position.map(Math.abs)));
  const v0 = Math.max(0, ...scene.world.bodies.map((b) => Math.hypot(...(b.linearVelocity ?? [0, 0, 0])) + scene.size * Math.hypot(...(b.angularVelocity ?? [0, 0, 0]))));
  // the largest m⁻¹ or ℓ × (trace of I⁻¹, ≥ its largest eigenvalue) of a body: velocity per impulse
  const w = (cpu as JacobiCpuSolver).w;
  let mobility = 0;
  for (let i = 0; i < w.bodyCount; i++) {
    const I = w.inverseInertiaLocal;
    mobility = Math.max(mobility, w.inverseMass[i], scene.size * (I[9 * i] + I[9 * i + 4] + I[9 * i + 8]));
  }
  const snaps: Snapshot[] = [];
  let kappa = 1;
  let worst = { dx: 0, dv: 0, dq: 0, ratio: 0 };
  try {
    for (let F = 1; F <= scene.frames; F++) {
      await cpu.step(1);
      await gs.step(1);
      if (F === 1) kappa = largestBlockCondition(cpu as JacobiCpuSolver);
      const a = await cpu.snapshot();
      const b = await gs.snapshot();
      snaps.push(a);
      const S = F * substeps;
      let lambdaMax = 0;
      for (const l of (cpu as JacobiCpuSolver).multiplier) lambdaMax = Math.max(lambdaMax, Math.abs(l));
      const V = g * F * dt + v0 + 1 + h * lambdaMax * mobility;
      const dvBound = S * (16 * iterations + kappa) * eps * V;
      const dxBound = S * eps * X + S * h * dvBound;
      let dx = 0, dv = 0, dq = 0;
      for (let i = 0; i < a.position.length; i++) {
        dx = Math.max(dx, Math.abs(a.position[i] - b.position[i]));
        dv = Math.max(dv, Math.abs(a.linearVelocity[i] - b.linearVelocity[i]), scene.size * Math.abs(a.angularVelocity[i] - b.angularVelocity[i]));
      }
      // q and −q are one orientation: compare with the sign that makes them closest
      for (let i = 0; i < a.bodyCount; i++) {
        let plus = 0, minus = 0;
        for (let d = 0; d < 4; d++) {
          plus = Math.max(plus, Math.abs(a.orientation[4 * i + d] - b.orientation[4 * i + d]));
          minus = Math.max(minus, Math.abs(a.orientation[4 * i + d] + b.orientation[4 * i + d]));
        }
        dq = Math.max(dq, Math.min(plus, minus));
      }
      const dqBound = S * 4 * eps + (S * h * dvBound) / scene.size;
      assert.ok(dx <= dxBound, `${pair.gpuId}, ${scene.name}, frame ${F}: |Δx| = ${dx.toExponential(2)} m > bound ${dxBound.toExponential(2)} m (κ = ${kappa.toFixed(1)})`);
      assert.ok(dv <= dvBound, `${pair.gpuId}, ${scene.name}, frame ${F}: |Δv| = ${dv.toExponential(2)} m/s > bound ${dvBound.toExponential(2)} m/s (κ = ${kappa.toFixed(1)})`);
      assert.ok(dq <= dqBound, `${pair.gpuId}, ${scene.name}, frame ${F}: |Δq| = ${dq.toExponential(2)} > bound ${dqBound.toExponential(2)} (κ = ${kappa.toFixed(1)})`);
      const ratio = dx / dxBound;
      if (ratio > worst.ratio) worst = { dx, dv, dq, ratio };
    }
    scene.check?.(snaps);
  } finally {
    gs.destroy();
  }
  return `${pair.gpuId} ${scene.name}: κ = ${kappa.toFixed(1)}, worst |Δx| = ${worst.dx.toExponential(2)} m (${(100 * worst.ratio).toFixed(1)} % of its bound), |Δv| ${worst.dv.toExponential(2)} m/s, |Δq| ${worst.dq.toExponential(2)}`;
}

const box = (x: number, y: number, z: number) => ({ type: 'box' as const, halfExtents: [x, y, z] as [number, number, number] });

const scenes: Scene[] = [
  {
    // a bead on a rope (maxLength 1 m) hanging taut 1 m below its world point, thrown up and sideways:
    // the rope goes slack (its row apart, λ clamped at 0), the bead flies and falls, the rope catches it
    name: 'rope slack and taut',
    world: {
      gravity: [0, -g, 0],
      bodies: [{ shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0, 1, 0], linearVelocity: [1.5, 3, 0] }],
      constraints: [{ type: 'distance', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 2, 0], maxLength: 1 }],
    },
    frames: 48,
    size: 0.05,
    check: (snaps) => {
      const L = snaps.map((s) => Math.hypot(s.position[0], s.position[1] - 2, s.position[2]));
      const slack = L.findIndex((l) => l < 0.9);
      assert.ok(slack >= 0, 'the rope never went slack');
      const taut = L.findIndex((l, f) => f > slack && l > 1 - 1e-2);
      assert.ok(taut > slack, `the rope never went taut again (largest length after slack ${Math.max(...L.slice(slack)).toFixed(3)} m)`);
      // caught: never stretched past 1 cm (the figure for the velocity-level solvers with substeps)
      assert.ok(Math.max(...L) < 1 + 1e-2, `stretch ${(Math.max(...L) - 1).toExponential(2)} m`);
    },
  },
  {
    // a 0.6 m box on a hinge about z at one end, released level: it swings down until the limit stops
    // it 0.5 rad below level (B, the world, turns +0.5 rad relative to the box: its upper limit)
    name: 'hinge box pendulum with a limit',
    world: {
      gravity: [0, -g, 0],
      bodies: [{ shape: box(0.3, 0.05, 0.05), density: 500, position: [0.3, 2, 0] }],
      constraints: [{ type: 'hinge', bodyA: 0, bodyB: null, anchorA: [-0.3, 0, 0], anchorB: [0, 2, 0], axisA: [0, 0, 1], axisB: [0, 0, 1], upperAngle: 0.5 }],
    },
    frames: 36,
    size: 0.3,
    check: (snaps) => {
      // the angle of the box's x axis below the horizontal, from its orientation
      const angle = (s: Snapshot) => {
        const [x, y, z, w] = s.orientation;
        return Math.atan2(2 * (x * y + z * w), 1 - 2 * (y * y + z * z));
      };
      const lowest = Math.min(...snaps.map(angle));
      assert.ok(lowest > -0.5 - 0.01, `passed the limit: ${lowest.toFixed(4)} rad`);
      assert.ok(angle(snaps[snaps.length - 1]) < -0.45, `did not reach the limit: ${angle(snaps[snaps.length - 1]).toFixed(4)} rad`);
    },
  },
  {
    // two boxes welded end to end, the first welded to a world point: a cantilever held level
    name: 'fixed two-box cantilever',
    world: {
      gravity: [0, -g, 0],
      bodies: [
        { shape: box(0.25, 0.05, 0.05), density: 500, position: [0.25, 2, 0] },
        { shape: box(0.25, 0.05, 0.05), density: 500, position: [0.75, 2, 0] },
      ],
      constraints: [
        { type: 'fixed', bodyA: 0, bodyB: null, anchorA: [-0.25, 0, 0], anchorB: [0, 2, 0] },
        { type: 'fixed', bodyA: 0, bodyB: 1, anchorA: [0.25, 0, 0], anchorB: [-0.25, 0, 0] },
      ],
    },
    frames: 24,
    size: 0.25,
    check: (snaps) => {
      // held: the tip (1 m out) sags by less than 5 mm
      const s = snaps[snaps.length - 1];
      assert.ok(2 - s.position[4] < 5e-3, `the far box sagged ${(2 - s.position[4]).toExponential(2)} m`);
    },
  },
  {
    // a capsule (along y) joined to a sphere by a 0.8 m rod between the capsule's tip and the sphere's
    // centre, the capsule pinned at its centre: the pair swings, the sphere falling on its rod's circle
    name: 'distance rod (capsule, sphere)',
    world: {
      gravity: [0, -g, 0],
      bodies: [
        { shape: { type: 'capsule', radius: 0.05, halfHeight: 0.2 }, density: 800, position: [0, 2, 0], angularVelocity: [0, 0, 1] },
        { shape: { type: 'sphere', radius: 0.08 }, density: 1000, position: [0.8, 2.25, 0] },
      ],
      constraints: [
        { type: 'point', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 2, 0] },
        { type: 'distance', bodyA: 0, bodyB: 1, anchorA: [0, 0.25, 0], anchorB: [0, 0, 0], length: 0.8 },
      ],
    },
    frames: 30,
    size: 0.25,
    check: (snaps) => {
      const s = snaps[snaps.length - 1];
      assert.ok(2.25 - s.position[4] > 0.05, 'the sphere did not fall');
    },
  },
];

for (const scene of scenes)
  test(`rows on the GPU: jacobi-gpu and gs-gpu agree with their CPU twins on the ${scene.name} within the f32 bound`, async (t) => {
    const gpu = await acquireGpu();
    try {
      for (const pair of pairs) t.diagnostic(await compare(pair, scene, gpu));
    } finally {
      gpu.device.destroy();
    }
  });

/*
 * Many closed loops (the necklace: 25 loops of 40 beads, rigid point joints, warm start on, the
 * solvers' defaults of one substep), 30 frames. A loop's rows are redundant: a uniform tension
 * round a loop moves nothing, so Jacobi carries any part of the bias β C/h that lies in that null
 * space into λ, step after step. The f32 C must therefore be the positions' difference computed
 * first, (x_B − x_A) + (b − a): summed as x_B + b − x_A − a it rounds at ε |x| (~1e-6 m here) and
 * that noise drifted λ by ~1e-3 N a frame, and the beads 1e-3 m off the CPU twin by frame 30,
 * above this bound.
 */
test('rows on the GPU: 25 necklace loops (redundant rows, warm start) stay with the CPU twins for 30 frames', async (t) => {
  const gpu = await acquireGpu();
  const params = Object.fromEntries(Object.entries(necklace.params).map(([k, p]) => [k, p.default])) as Parameters<typeof necklace.build>[0];
  const world = necklace.build({ ...params, chains: 25, beads: 40 });
  try {
    for (const pair of makePairs({ dt: 1 / 60, iterations: 8 }))
      t.diagnostic(await compare(pair, { name: 'necklace 25 × 40', world, frames: 30, size: world.bodies[0].shape.type === 'sphere' ? world.bodies[0].shape.radius : 0.05 }, gpu));
  } finally {
    gpu.device.destroy();
  }
});

/*
 * The joints' mass splitting (rows/block-solver.ts massShare) on the GPU: jacobi-gpu's prepare_* invert
 * J S M⁻¹ Jᵀ with s_i = (n_i + 1)/2 that the contacts' cj_share writes into inverse_mass each frame, where
 * jacobi-cpu takes s_i from its contact solver's n_i. The hinge chain with collisions (8 planks, each inner one
 * in two hinges: s = 1.5), spun out of its plane as in test/joint-split.test.ts, 10 frames at 4 × 8: the same
 * derived f32 bound as above (measured 0.2 % of it). It tells the factor apart: the WGSL with s_i = 1 written
 * instead (checked by hand) failed at frame 1, |Δv| = 2.2e-2 m/s against a bound of 6.3e-3 m/s.
 */
test('rows on the GPU: jacobi-gpu splits its joints\' masses as jacobi-cpu does (the spun hinge chain with collisions, 10 frames)', async (t) => {
  const gpu = await acquireGpu();
  const world = editableWorld(findRigidScene('hinge-chain')!.build({ collisions: 1 }));
  world.bodies.forEach((b, i) => {
    b.angularVelocity = [0.5 * Math.sin(1.3 * i + 0.4), 0.5 * Math.cos(0.7 * i), 0];
  });
  try {
    t.diagnostic(await compare(pairs[0], { name: 'spun hinge chain with collisions', world, frames: 10, size: 0.15 }, gpu));
  } finally {
    gpu.device.destroy();
  }
});
