/**
 * rows/block-solver.ts frictionDisc: the friction pair's update onto the disc |λ| ≤ r is the point of the
 * disc nearest the stick solution f in the metric of A = A_tt (minimise (λ − f)ᵀ A (λ − f)), checked
 * against a brute-force search over the circle (the minimiser lies on it when |f| > r), for random
 * symmetric positive definite A (condition up to 10⁴, any orientation, and isotropic ones, where it is the
 * radial point r f / |f|). Tolerance: the objective within 1e-9 relative of the search's best (the
 * search's own step, 2π / 2·10⁵, leaves about 1e-10 of it), and λ on the circle to 1e-12.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frictionDisc } from '../src/rows/block-solver.js';
import { mulberry32 } from '../src/math/random.js';

test('frictionDisc: the disc point nearest f in the metric of A_tt (brute force over the circle, 1e-9)', () => {
  const rand = mulberry32(11);
  const out = new Float64Array(2);
  for (let trial = 0; trial < 60; trial++) {
    // A = R diag(e1, e2) Rᵀ; trials 0–9 isotropic
    const e1 = 0.1 + 10 * rand(), e2 = trial < 10 ? e1 : e1 * 10 ** (4 * rand() - 2);
    const th = Math.PI * (2 * rand() - 1), c = Math.cos(th), s = Math.sin(th);
    const a00 = c * c * e1 + s * s * e2, a01 = c * s * (e1 - e2), a11 = s * s * e1 + c * c * e2;
    // the stored block is M = A⁻¹, row-major
    const det = a00 * a11 - a01 * a01;
    const M = new Float64Array([a11 / det, -a01 / det, -a01 / det, a00 / det]);
    const r = 0.5 + rand();
    const ang = 2 * Math.PI * rand(), len = r * (1.05 + 5 * rand());
    const f0 = len * Math.cos(ang), f1 = len * Math.sin(ang);
    frictionDisc(M, 0, f0, f1, r, out);
    const obj = (x: number, y: number) => {
      const dx = x - f0, dy = y - f1;
      return a00 * dx * dx + 2 * a01 * dx * dy + a11 * dy * dy;
    };
    let best = Infinity;
    const N = 200_000;
    for (let k = 0; k < N; k++) {
      const t = (2 * Math.PI * k) / N;
      best = Math.min(best, obj(r * Math.cos(t), r * Math.sin(t)));
    }
    assert.ok(Math.abs(Math.hypot(out[0], out[1]) - r) <= 1e-12 * r, `trial ${trial}: |λ| = ${Math.hypot(out[0], out[1])}, r = ${r}`);
    assert.ok(obj(out[0], out[1]) <= best * (1 + 1e-9), `trial ${trial}: objective ${obj(out[0], out[1])} > brute force ${best}`);
  }
});

/*
 * The WGSL twin (contacts/gpu-contacts.wgsl.ts friction_disc, f32 on the software adapter) against this f64
 * one, over the disc radius from 0.9 |f| down to 1e-30 |f| (a point barely loaded against a large
 * warm-started friction impulse: at the top of a tall pile λ_n ~ 1e-30 N where f ~ 1 N). Below r ~ 1e-19 |f|
 * the squares of λ ~ r that Newton forms fall under f32's smallest normal number and are flushed to 0; the
 * WGSL then divided 0 by 0 (a base-100 pyramid under jacobi-gpu went NaN at frame 10). Tolerance: λ within
 * 1e-4 r of the f64 point (f32's ε 1.2e-7 times the metric's condition, here ≤ 100, and Newton's stop at a
 * relative 1e-6 of r²), and finite.
 */
test('friction_disc (WGSL, f32) agrees with frictionDisc (f64) to 1e-4 r, for r from 0.9 |f| down to 1e-30 |f|', async () => {
  const { acquireGpu } = await import('../src/gpu/device.js');
  const { discWgsl } = await import('../src/contacts/gpu-contacts.wgsl.js');
  const gpu = await acquireGpu();
  const device = gpu.device;
  try {
    const rand = mulberry32(5);
    const rel = [0.9, 0.5, 0.1, 1e-3, 1e-6, 1e-7, 1e-10, 1e-15, 1e-19, 1e-22, 1e-26, 1e-30];
    const cases: { M: Float64Array; f0: number; f1: number; r: number }[] = [];
    for (let trial = 0; trial < 8; trial++) {
      const e1 = 0.1 + 10 * rand(), e2 = trial < 2 ? e1 : e1 * 10 ** (2 * rand() - 1);
      const th = Math.PI * (2 * rand() - 1), c = Math.cos(th), s = Math.sin(th);
      const a00 = c * c * e1 + s * s * e2, a01 = c * s * (e1 - e2), a11 = s * s * e1 + c * c * e2;
      const det = a00 * a11 - a01 * a01;
      const M = new Float64Array([a11 / det, -a01 / det, -a01 / det, a00 / det]);
      const ang = 2 * Math.PI * rand(), len = 10 ** (6 * rand() - 3);
      for (const k of rel) cases.push({ M, f0: len * Math.cos(ang), f1: len * Math.sin(ang), r: k * len });
    }
    const n = cases.length;
    // per case: M (vec4f), f (vec2f), r, pad: 8 floats; out: vec2f
    const input = new Float32Array(8 * n);
    cases.forEach((k, i) => input.set([k.M[0], k.M[1], k.M[2], k.M[3], k.f0, k.f1, k.r, 0], 8 * i));
    const code = `${discWgsl}
struct Case { M: vec4f, f: vec2f, r: f32, pad: f32 };
@group(0) @binding(0) var<storage, read> cases: array<Case>;
@group(0) @binding(1) var<storage, read_write> outs: array<vec2f>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  if (id.x >= arrayLength(&cases)) { return; }
  let k = cases[id.x];
  outs[id.x] = friction_disc(k.M, k.f, k.r);
}`;
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code }), entryPoint: 'main' } });
    const inBuf = device.createBuffer({ size: input.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(inBuf, 0, input);
    const outBuf = device.createBuffer({ size: 8 * n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    const read = device.createBuffer({ size: 8 * n, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: inBuf } }, { binding: 1, resource: { buffer: outBuf } }] });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(Math.ceil(n / 64));
    pass.end();
    enc.copyBufferToBuffer(outBuf, 0, read, 0, 8 * n);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const out = new Float32Array(read.getMappedRange().slice(0));
    read.unmap();
    const ref = new Float64Array(2);
    cases.forEach((k, i) => {
      // the f64 reference at the f32-rounded inputs the GPU saw
      const M = Float64Array.from(input.subarray(8 * i, 8 * i + 4));
      const f0 = input[8 * i + 4], f1 = input[8 * i + 5], r = input[8 * i + 6];
      frictionDisc(M, 0, f0, f1, r, ref);
      const gx = out[2 * i], gy = out[2 * i + 1];
      assert.ok(Number.isFinite(gx) && Number.isFinite(gy), `case ${i} (r = ${r.toExponential(2)}, |f| = ${Math.hypot(f0, f1).toExponential(2)}): λ = (${gx}, ${gy})`);
      const err = Math.hypot(gx - ref[0], gy - ref[1]);
      assert.ok(err <= 1e-4 * r, `case ${i} (r/|f| = ${(r / Math.hypot(f0, f1)).toExponential(1)}): |λ_f32 − λ_f64| = ${err.toExponential(3)} > 1e-4 r = ${(1e-4 * r).toExponential(3)}`);
    });
    inBuf.destroy(); outBuf.destroy(); read.destroy();
  } finally {
    device.destroy();
  }
});
