/**
 * The strike speeds on the GPU (collision/gpu-strike.ts, the twin of pipeline.ts strikeSpeeds), on
 * SwiftShader: test/strike.test.ts's scene (a 4.19 kg ball 1 cm above the ground, a 20 kg box 3 cm above
 * it at 6 m/s).
 *  - collision alone: with a floor box 3 cm under the ball, the ball–floor pair is found only through the
 *    ball's re-expanded box (st_pairs), with the CPU's margin and points (the CPU's figure, within f32);
 *  - one GPU solver (softstep-gpu) on the ground plane: the ball goes no deeper than when struck while
 *    touching the ground, plus the pair's slop (2 mm), as on the CPU. The old code: 5.15 cm (measured;
 *    0.58 cm struck while touching).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { packBodyState } from '../src/gpu/frames.js';
import { GpuCollision } from '../src/collision/gpu-collision.js';
import { CollisionPipeline, pairSlop } from '../src/collision/pipeline.js';
import { ContactList } from '../src/rows/contact.js';
import { compileWorld } from '../src/model/compiled.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import type { BodyDesc, WorldDesc } from '../src/model/world.js';

const R = 0.1;
function strike(gap: number, floor: BodyDesc = { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] }): WorldDesc {
  return {
    gravity: [0, -9.81, 0],
    collisions: true,
    constraints: [],
    bodies: [
      floor,
      { shape: { type: 'sphere', radius: R }, density: 1000, position: [0, R + gap, 0] },
      { shape: { type: 'box', halfExtents: [0.2, 0.2, 0.2] }, mass: 20, position: [0, R + gap + R + 0.03 + 0.2, 0], linearVelocity: [0, -6, 0] },
    ],
  };
}

test('GPU collision: the struck ball gets its pair with a floor box its start-of-frame box did not reach, as on the CPU', async () => {
  const world = strike(0.03, { shape: { type: 'box', halfExtents: [1, 0.1, 1] }, fixed: true, position: [0, -0.1, 0] });
  const n = world.bodies.length, dt = 1 / 60, g = 9.81;
  const compiled = compileWorld(world);
  const f32 = (a: Float64Array) => Float64Array.from(a.subarray(0, a.length), Math.fround);
  const position = f32(compiled.position), orientation = f32(compiled.orientation), v = f32(compiled.linearVelocity), w = f32(compiled.angularVelocity);
  const cpu = new CollisionPipeline(world.bodies, compiled.inverseMass);
  const list = new ContactList();
  cpu.detect(position, orientation, v, w, dt, list, null, g);
  let cpuDeepest = Infinity;
  for (let c = 0; c < list.count; c++) if (list.bodyA[c] === 0 && list.bodyB[c] === 1) cpuDeepest = Math.min(cpuDeepest, list.separation[c]);
  assert.ok(cpuDeepest < Infinity, 'the CPU finds the ball–floor pair');
  const { device } = await acquireGpu();
  const fixed = Array.from({ length: n }, (_, i) => compiled.inverseMass[i] === 0);
  const gc = await GpuCollision.create(device, world.bodies.map((b) => b.shape), fixed, 64, { inverseMass: compiled.inverseMass, restitution: cpu.restitution });
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
  const found: string[] = [];
  let gpuDeepest = Infinity;
  for (let k = 0; k < out.manifolds.length; k++) {
    const a = out.pairs[2 * k], b = out.pairs[2 * k + 1];
    found.push(`${a}-${b}`);
    const m = out.manifolds[k];
    if (a === 0 && b === 1 && m) gpuDeepest = Math.min(...m.points.map((p) => p.separation));
  }
  assert.equal(new Set(found).size, found.length, `a pair twice: ${found.join(', ')}`);
  assert.ok(found.includes('0-1'), `the broad phase's pairs: ${found.join(', ')} (no ball–floor pair)`);
  assert.ok(Math.abs(gpuDeepest - cpuDeepest) <= 1e-5, `the ball–floor separation: GPU ${gpuDeepest}, CPU ${cpuDeepest}`);
  gc.destroy();
  poses.destroy();
  vels.destroy();
});

test('softstep-gpu: a ball 1 cm above the ground struck by a 20 kg box at 6 m/s goes no deeper than one struck on the ground', async () => {
  const gpu = await acquireGpu();
  const depth = async (gap: number) => {
    const world = strike(gap);
    const info = findSolver('softstep-gpu')!;
    const s = await info.create(world, resolveOptions(info, { sleep: 0 }, world), gpu);
    let deepest = 0;
    for (let f = 0; f < 30; f++) {
      await s.step(1);
      const snap = await s.snapshot();
      deepest = Math.max(deepest, R - snap.position[4]);
    }
    s.destroy();
    return deepest;
  };
  const slop = pairSlop(R, Infinity);
  const touching = await depth(0), above = await depth(0.01);
  assert.ok(above <= touching + slop, `the ball went ${(100 * above).toFixed(2)} cm into the ground (struck while touching it: ${(100 * touching).toFixed(2)} cm, bound that + ${(1000 * slop).toFixed(1)} mm)`);
});
