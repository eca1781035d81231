/**
 * The GPU body boxes (collision/gpu-aabb.ts) against the CPU pipeline's (pipeline.ts detect: shapeAabb
 * with the margin min(SPECULATIVE_DISTANCE, 4 · SLOP_SIZE_FRACTION · L) / 2 + h s, s = |v| + |ω| R + ½ |g| h,
 * 0 for a fixed body), on SwiftShader, for the same pose and velocity (the f32 values, read as f64 on
 * the CPU side):
 *   - every GPU box holds the exact box (no pair the f64 pipeline finds can be lost), and lies within
 *     2δ of it, δ = 16 ε (|c| + e + m) the module's outward rounding (its header derives it);
 *   - a plane is bounded only along the axis its normal is exactly parallel to, and there by c ± m;
 *   - speeds within 8 ε of the f64 ones (relative), 0 for fixed bodies; the inactive flag passed on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { readBuffers } from '../src/gpu/frames.js';
import { GpuBodyAabbs, FLAG_FIXED, FLAG_INACTIVE, AABB_ROUNDING } from '../src/collision/gpu-aabb.js';
import { BodyAabbRecord } from '../src/collision/gpu-broadphase.wgsl.js';
import { packShapes } from '../src/collision/gpu-narrow.js';
import { shapeAabb } from '../src/collision/aabb.js';
import { SLOP_SIZE_FRACTION, SPECULATIVE_DISTANCE } from '../src/collision/pipeline.js';
import { boundingRadius, leastHalfSize, type Shape } from '../src/model/world.js';
import { mulberry32 } from './support/random.js';

const EPS = 2 ** -24;
const f32 = Math.fround;

function randomBody(rnd: () => number, i: number): { shape: Shape; q: number[]; x: number[]; v: number[]; w: number[]; flags: number } {
  const u = (a: number, b: number) => a + (b - a) * rnd();
  const kind = i % 9 === 0 ? 'plane' : (['sphere', 'capsule', 'box'] as const)[i % 3];
  const shape: Shape =
    kind === 'sphere' ? { type: 'sphere', radius: u(0.005, 2) }
    : kind === 'capsule' ? { type: 'capsule', radius: u(0.005, 0.5), halfHeight: u(0.01, 2) }
    : kind === 'box' ? { type: 'box', halfExtents: [u(0.005, 2), u(0.005, 2), u(0.005, 2)] }
    : { type: 'plane' };
  let q: number[];
  if (kind === 'plane') {
    // exact axis-aligned normals (±x, ±y, ±z) and one tilted: bounded along one axis, or unbounded
    const h = Math.SQRT1_2;
    q = [[0, 0, 0, 1], [1, 0, 0, 0], [0, 0, -h, h], [0, 0, h, h], [h, 0, 0, h], [-h, 0, 0, h], [0.1, 0.2, 0.3, 0.927]][i % 7];
  } else {
    q = [u(-1, 1), u(-1, 1), u(-1, 1), u(-1, 1)];
  }
  const n = Math.hypot(...q);
  q = q.map((c) => f32(c / n));
  const scale = i % 4 === 0 ? 1000 : 20; // far from the origin too
  const x = [u(-scale, scale), u(-scale, scale), u(-scale, scale)].map(f32);
  const v = [u(-5, 5), u(-5, 5), u(-5, 5)].map(f32);
  const w = [u(-10, 10), u(-10, 10), u(-10, 10)].map(f32);
  const fixed = kind === 'plane' || i % 5 === 0;
  const flags = (fixed ? FLAG_FIXED | FLAG_INACTIVE : 0) | (i % 7 === 3 ? FLAG_INACTIVE : 0);
  return { shape, q, x, v, w, flags };
}

test('GPU body boxes hold the f64 pipeline\'s boxes of the same pose, within the derived rounding δ; speeds and flags as the CPU\'s', async () => {
  const { device } = await acquireGpu();
  const n = 2000, h = 1 / 60, g = 9.81;
  const rnd = mulberry32(7);
  const bodies = Array.from({ length: n }, (_, i) => randomBody(rnd, i));
  const pose = new Float32Array(8 * n), vel = new Float32Array(8 * n), flags = new Uint32Array(n);
  bodies.forEach((b, i) => {
    pose.set(b.x, 8 * i);
    pose.set(b.q, 8 * i + 4);
    vel.set(b.v, 8 * i);
    vel.set(b.w, 8 * i + 4);
    flags[i] = b.flags;
  });
  const make = (data: ArrayBufferView | ArrayBuffer, label: string) => {
    const bytes = data instanceof ArrayBuffer ? data : data.buffer;
    const buf = device.createBuffer({ label, size: bytes.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(buf, 0, bytes);
    return buf;
  };
  const poses = make(pose, 'poses'), velocities = make(vel, 'velocities'), shapes = make(packShapes(bodies.map((b) => b.shape)), 'shapes'), flagBuf = make(flags, 'flags');
  const stage = await GpuBodyAabbs.create(device, n);
  stage.configure(n, h, g);
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  stage.record(pass, poses, velocities, shapes, flagBuf);
  pass.end();
  device.queue.submit([encoder.finish()]);
  const [boxData, speedData] = await readBuffers(device, [stage.aabbs, stage.speeds]);
  const view = new DataView(boxData), speeds = new Float32Array(speedData);
  const cpu = new Float64Array(6);
  let worst = 0, planesBounded = 0;
  for (let i = 0; i < n; i++) {
    const b = bodies[i];
    const fixed = (b.flags & FLAG_FIXED) !== 0;
    const s = fixed ? 0 : Math.hypot(...b.v) + Math.hypot(...b.w) * boundingRadius(b.shape) + 0.5 * g * h;
    assert.ok(Math.abs(speeds[i] - s) <= 8 * EPS * s + 1e-30, `body ${i}: speed ${speeds[i]} against ${s}`);
    const m = Math.min(SPECULATIVE_DISTANCE, 4 * SLOP_SIZE_FRACTION * leastHalfSize(b.shape)) / 2 + h * s;
    shapeAabb(b.shape, b.x, 0, b.q, 0, m, cpu, 0);
    const lo = BodyAabbRecord.read(view, i, 'lo'), hi = BodyAabbRecord.read(view, i, 'hi');
    assert.equal(BodyAabbRecord.read(view, i, 'flags')[0], b.flags & FLAG_INACTIVE, `body ${i}: flags`);
    for (let k = 0; k < 3; k++) {
      for (const [gpuBound, cpuBound, side] of [[lo[k], cpu[k], -1], [hi[k], cpu[3 + k], 1]] as const) {
        if (!Number.isFinite(cpuBound)) {
          assert.ok(Math.abs(gpuBound) >= 1e30 && Math.sign(gpuBound) === Math.sign(cpuBound), `body ${i} (${b.shape.type}) axis ${k}: unbounded on the CPU, ${gpuBound} on the GPU`);
          continue;
        }
        if (b.shape.type === 'plane') planesBounded++;
        const c = Math.abs(b.x[k]), ext = Math.abs(cpuBound - b.x[k]);
        const delta = AABB_ROUNDING * EPS * (c + ext);
        // outwards of the exact bound (side −1: below it; +1: above), by at most 2δ
        const out = side * (gpuBound - cpuBound);
        assert.ok(out >= 0, `body ${i} (${b.shape.type}) axis ${k}: the GPU bound ${gpuBound} is inside the exact ${cpuBound}`);
        assert.ok(out <= 2 * delta, `body ${i} (${b.shape.type}) axis ${k}: ${out} m outside, beyond 2δ = ${2 * delta}`);
        worst = Math.max(worst, out / delta);
      }
    }
  }
  assert.ok(planesBounded > 0, 'no plane was bounded on any axis');
  console.log(`# worst outward rounding ${worst.toFixed(2)} δ over ${n} bodies; ${planesBounded} bounded plane sides`);
  stage.destroy();
  for (const b of [poses, velocities, shapes, flagBuf]) b.destroy();
});
