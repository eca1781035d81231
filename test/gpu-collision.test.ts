/**
 * The GPU collision pipeline (collision/gpu-collision.ts: body boxes → broad phase → narrow phase,
 * one submission, per-pair margins) against the CPU's (pipeline.ts detect, a fresh pipeline: no
 * coherence), on SwiftShader, at the same state (the f32 values of the pose and velocity, read as f64
 * by the CPU): the rain of mixed shapes (spheres, boxes, capsules) into its bin,
 * while it lands (the CPU solver moved it there: bodies falling, touching, moving).
 * The bound is the narrow phase's (test/gpu-narrow.test.ts derives it): E = 64 ε (X + L), X the pair's
 * largest |coordinate|, L its bounding radii summed, ε = 2⁻²⁴. Per pair:
 *   - a pair whose CPU points reach below its margin by more than E has GPU points too, and the GPU's
 *     deepest separation is the CPU's within E (the deepest, not each point: resting faces tie, and
 *     rounding picks which equally deep corners are kept);
 *   - a pair with GPU points and none on the CPU has its GPU deepest within E of its margin (a point
 *     the rounding put on the other side of the margin);
 *   - the margin is the CPU's, 4 slop + h (s_a + s_b): a GPU margin of one size for every pair makes
 *     fast pairs miss (the test fails with usePairMargins(null)).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { packBodyState } from '../src/gpu/frames.js';
import { GpuCollision } from '../src/collision/gpu-collision.js';
import { CollisionPipeline, pairSlop } from '../src/collision/pipeline.js';
import { ContactList } from '../src/rows/contact.js';
import { boundingRadius, leastHalfSize } from '../src/model/world.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { compileWorld } from '../src/model/compiled.js';
import type { Snapshot } from '../src/model/snapshot.js';

const EPS = 2 ** -24;
const f32 = (a: Float64Array) => Float64Array.from(a, Math.fround);

for (const frames of [30, 90]) {
  test(`the GPU collision pipeline finds the CPU pipeline's touching pairs and deepest separations within E (rain of 300 mixed shapes, frame ${frames})`, async () => {
    const world = findRigidScene('rain')!.build({ count: 300, seed: 3 });
    const dt = 1 / 60, g = 9.81;
    // the state: the scene's start, or after `frames` frames of softstep-cpu
    let snap: Snapshot;
    {
      const info = findSolver('softstep-cpu')!;
      const solver = await info.create(world, resolveOptions(info, { sleep: 0 }, world));
      await solver.step(frames);
      snap = await solver.snapshot();
      solver.destroy();
    }
    const n = world.bodies.length;
    const position = f32(snap.position), orientation = f32(snap.orientation), v = f32(snap.linearVelocity), w = f32(snap.angularVelocity);
    const compiled = compileWorld(world);
    // CPU
    const cpu = new CollisionPipeline(world.bodies, compiled.inverseMass);
    const list = new ContactList();
    cpu.detect(position, orientation, v, w, dt, list, null, g);
    const cpuDeepest = new Map<number, number>();
    for (let c = 0; c < list.count; c++) {
      const key = list.bodyA[c] * n + list.bodyB[c];
      cpuDeepest.set(key, Math.min(cpuDeepest.get(key) ?? Infinity, list.separation[c]));
    }
    // GPU
    const { device } = await acquireGpu();
    const fixed = Array.from({ length: n }, (_, i) => compiled.inverseMass[i] === 0);
    const gc = await GpuCollision.create(device, world.bodies.map((b) => b.shape), fixed, 16 * n, { inverseMass: compiled.inverseMass, restitution: cpu.restitution });
    gc.configure(dt, g);
    const state = packBodyState({ ...compiled, bodyCount: n, position, orientation, linearVelocity: v, angularVelocity: w } as never);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    const poses = device.createBuffer({ size: state.pose.byteLength, usage }), vels = device.createBuffer({ size: state.velocity.byteLength, usage });
    device.queue.writeBuffer(poses, 0, state.pose);
    device.queue.writeBuffer(vels, 0, state.velocity);
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    gc.record(() => pass, poses, vels);
    pass.end();
    device.queue.submit([encoder.finish()]);
    const out = await gc.read();
    assert.ok(out.found <= gc.broad.pairCapacity, `pair buffer overflow: ${out.found} pairs`);
    assert.equal(out.unsupported, 0);
    const gpuDeepest = new Map<number, number>();
    for (let k = 0; k < out.manifolds.length; k++) {
      const m = out.manifolds[k];
      if (!m) continue;
      const a = out.pairs[2 * k], b = out.pairs[2 * k + 1];
      gpuDeepest.set(a * n + b, Math.min(...m.points.map((p) => p.separation)));
    }
    // the CPU's speeds for the margins: s = |v| + |ω| R + ½ |g| h raised to the strike speeds s' (pipeline.ts strikeSpeeds)
    const own = (i: number) => (fixed[i] ? 0 : Math.hypot(v[3 * i], v[3 * i + 1], v[3 * i + 2]) + Math.hypot(w[3 * i], w[3 * i + 1], w[3 * i + 2]) * boundingRadius(world.bodies[i].shape) + 0.5 * g * dt);
    const effective = Float64Array.from(cpu.speeds);
    let raised = 0;
    for (let i = 0; i < n; i++) {
      assert.ok(effective[i] >= own(i) * (1 - 1e-12), `body ${i}: s' ${effective[i]} below its own speed ${own(i)}`);
      if (effective[i] > own(i) * (1 + 1e-9)) raised++;
    }
    const speed = (i: number) => effective[i];
    const bound = (a: number, b: number) => {
      let X = 0;
      for (const i of [a, b]) if (world.bodies[i].shape.type !== 'plane') for (let d = 0; d < 3; d++) X = Math.max(X, Math.abs(position[3 * i + d]));
      const L = [a, b].reduce((s, i) => s + (world.bodies[i].shape.type === 'plane' ? 0 : boundingRadius(world.bodies[i].shape)), 0);
      return 64 * EPS * (X + L);
    };
    const margin = (a: number, b: number) => 4 * pairSlop(leastHalfSize(world.bodies[a].shape), leastHalfSize(world.bodies[b].shape)) + dt * (speed(a) + speed(b));
    let compared = 0, edge = 0;
    for (const [key, s] of cpuDeepest) {
      const a = Math.floor(key / n), b = key % n, E = bound(a, b);
      const gs = gpuDeepest.get(key);
      if (gs === undefined) {
        assert.ok(s >= margin(a, b) - E, `pair (${a}, ${b}): the CPU has a point ${s} m apart (margin ${margin(a, b)}), the GPU none`);
        edge++;
        continue;
      }
      assert.ok(Math.abs(gs - s) <= E, `pair (${a}, ${b}) ${world.bodies[a].shape.type}–${world.bodies[b].shape.type}: deepest ${gs} on the GPU, ${s} on the CPU (E ${E})`);
      compared++;
    }
    for (const [key, gs] of gpuDeepest) {
      if (cpuDeepest.has(key)) continue;
      const a = Math.floor(key / n), b = key % n;
      assert.ok(gs >= margin(a, b) - bound(a, b), `pair (${a}, ${b}): the GPU has a point ${gs} m apart within the margin ${margin(a, b)}, the CPU none`);
      edge++;
    }
    assert.ok(compared > 50, `only ${compared} pairs compared`);
    console.log(`# frame ${frames}: ${compared} touching pairs agree, ${edge} at the margin's edge; ${out.found} GPU pairs from the broad phase; ${raised} bodies' speeds raised by a partner (${cpu.grown} boxes grown)`);
    gc.destroy();
    poses.destroy();
    vels.destroy();
  });
}
