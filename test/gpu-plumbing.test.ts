/**
 * The GPU plumbing (gpu/scan.ts, gpu/counters.ts, gpu/dispatch.ts, gpu/layout.ts) on SwiftShader:
 *  - the prefix scan equals a CPU scan exactly (integers mod 2³²: no tolerance), on random inputs of
 *    sizes around the block of 1 024 and the level boundaries (1 024² = 1 048 576: two and three
 *    levels), and on 2²⁴ elements;
 *  - a counter written by atomic appends drives an indirect dispatch that runs ⌈threads/64⌉ groups,
 *    in a 2-D grid beyond 65 535 groups, and the kernel's bounded threads are exactly count · scale;
 *  - a record's layout (offsets, stride) as the host packs it is what a WGSL kernel reads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { PrefixScan, SCAN_BLOCK } from '../src/gpu/scan.js';
import { Counters } from '../src/gpu/counters.js';
import { Kernel, THREAD_INDEX_WGSL, groups2d, kernelEntry } from '../src/gpu/dispatch.js';
import { defineRecord } from '../src/gpu/layout.js';
import { buildKernels } from '../src/gpu/kernels.js';
import { readBuffers } from '../src/gpu/frames.js';
import { mulberry32 } from './support/random.js';

let gpuPromise: Promise<GpuContext> | undefined;
const gpu = () => (gpuPromise ??= acquireGpu());

function storage(device: GPUDevice, data: Uint32Array<ArrayBuffer>): GPUBuffer {
  const b = device.createBuffer({ size: Math.max(16, data.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(b, 0, data);
  return b;
}

test('prefix scan: equals the CPU exclusive scan on random inputs of many sizes (one, two and three levels)', async () => {
  const { device } = await gpu();
  const scan = await PrefixScan.create(device);
  const rand = mulberry32(7);
  const sizes = [1, 2, 63, 64, 255, 1000, SCAN_BLOCK, SCAN_BLOCK + 1, 3 * SCAN_BLOCK + 17, 70_001, SCAN_BLOCK * SCAN_BLOCK, SCAN_BLOCK * SCAN_BLOCK + 1, 1_500_003];
  for (const n of sizes) {
    // small values, and at one size full-range u32 (the sums wrap mod 2³², as u32 addition does)
    const wide = n === 70_001;
    const input = Uint32Array.from({ length: n }, () => (wide ? Math.floor(rand() * 2 ** 32) : Math.floor(rand() * 16)));
    const buf = storage(device, input);
    const plan = scan.plan(buf, n);
    assert.equal(plan.counts.length, n <= SCAN_BLOCK ? 1 : n <= SCAN_BLOCK ** 2 ? 2 : 3, `levels for n = ${n}`);
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    plan.record(pass);
    pass.end();
    device.queue.submit([encoder.finish()]);
    const [out, tot] = await readBuffers(device, [buf, plan.total.buffer]);
    const got = new Uint32Array(out, 0, n);
    let run = 0;
    for (let k = 0; k < n; k++) {
      if (got[k] !== run) assert.fail(`n = ${n}: element ${k} is ${got[k]}, the CPU scan gives ${run}`);
      run = (run + input[k]) >>> 0;
    }
    assert.equal(new Uint32Array(tot)[0], run, `n = ${n}: total`);
    plan.destroy();
    buf.destroy();
  }
});

test('prefix scan: 2²⁴ elements (three levels) equal the CPU scan', async () => {
  const { device } = await gpu();
  const scan = await PrefixScan.create(device);
  const n = 1 << 24;
  const rand = mulberry32(11);
  const input = new Uint32Array(n);
  for (let k = 0; k < n; k++) input[k] = (rand() * 4) | 0;
  const buf = storage(device, input);
  const plan = scan.plan(buf, n);
  assert.deepEqual(plan.counts, [n, n / SCAN_BLOCK, n / SCAN_BLOCK ** 2]);
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  plan.record(pass);
  pass.end();
  device.queue.submit([encoder.finish()]);
  const [out] = await readBuffers(device, [buf]);
  const got = new Uint32Array(out);
  let run = 0, bad = -1;
  for (let k = 0; k < n; k++) {
    if (got[k] !== run) {
      bad = k;
      break;
    }
    run += input[k];
  }
  assert.equal(bad, -1, `first wrong element ${bad}`);
  plan.destroy();
  buf.destroy();
});

test('counters: atomic appends drive an indirect dispatch of exactly ⌈count·scale/64⌉ groups (2-D beyond 65 535)', async () => {
  const { device } = await gpu();
  const appendWgsl = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read> flags: array<u32>;
${THREAD_INDEX_WGSL}
${kernelEntry('append')} {
  let i = thread_index(gid, nwg);
  if (i < arrayLength(&flags) && flags[i] != 0u) { atomicAdd(&counters[0], 1u); }
}`;
  // counters[1]: every thread launched; counters[2]: threads below count·scale (the kernel's bound)
  const overWgsl = /* wgsl */ `
struct Scale { scale: u32 };
@group(0) @binding(0) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(1) var<uniform> s: Scale;
${THREAD_INDEX_WGSL}
${kernelEntry('over_list')} {
  let t = thread_index(gid, nwg);
  atomicAdd(&counters[1], 1u);
  if (t < atomicLoad(&counters[0]) * s.scale) { atomicAdd(&counters[2], 1u); }
}`;
  const [append, over] = await buildKernels(device, 'test', () => [Kernel.create(device, 'append', appendWgsl), Kernel.create(device, 'over_list', overWgsl)]);
  const maxX = device.limits.maxComputeWorkgroupsPerDimension;
  const rand = mulberry32(3);
  for (const [n, scale] of [[1000, 1], [5000, 7], [3, maxX * 64 + 5]] as const) {
    const flags = Uint32Array.from({ length: n }, () => (rand() < 0.4 ? 1 : 0));
    if (n === 3) flags.set([0, 1, 0]);
    const count = flags.reduce((a, b) => a + b, 0);
    const counters = await Counters.create(device, 3, [{ counter: 0, scale }]);
    const flagBuf = storage(device, flags);
    const sBuf = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(sBuf, 0, Uint32Array.of(scale, 0, 0, 0));
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    counters.recordClear(pass);
    append.dispatch(pass, append.bind([counters.buffer, flagBuf]), n);
    counters.recordArgs(pass);
    over.dispatchIndirect(pass, over.bind([counters.buffer, sBuf]), counters.args, counters.argsOffset(0));
    pass.end();
    device.queue.submit([encoder.finish()]);
    const [c, a] = (await readBuffers(device, [counters.buffer, counters.args])).map((d) => new Uint32Array(d));
    const [gx, gy] = groups2d(count * scale, maxX);
    assert.equal(c[0], count, 'appends counted');
    assert.deepEqual([...a], [gx, gy, 1], `arguments for ${count} × ${scale} threads`);
    assert.equal(c[1], gx * gy * 64, 'threads launched by the indirect dispatch');
    assert.equal(c[2], count * scale, 'threads within the list');
    counters.destroy();
    flagBuf.destroy();
    sBuf.destroy();
  }
});

test('layout: records packed by the host read back field by field in WGSL (offsets and stride agree)', async () => {
  const { device } = await gpu();
  const R = defineRecord('Mixed', [
    ['a', 'f32'],
    ['b', 'vec3f'],
    ['c', 'u32'],
    ['d', 'vec2u'],
    ['e', 'i32'],
    ['f', 'vec4f'],
    ['g', 'vec3i'],
  ] as const);
  assert.equal(R.stride, 80); // a@0 b@16 c@28 d@32 e@40 f@48 g@64, size 76 → 80 (align 16)
  const fields = ['a', 'b', 'c', 'd', 'e', 'f', 'g'] as const;
  const widths = fields.map((f) => (R.types[f].startsWith('vec') ? Number(R.types[f][3]) : 1));
  const perRecord = widths.reduce((s, w) => s + w, 0);
  const n = 37;
  const view = new DataView(new ArrayBuffer(R.stride * n));
  const rand = mulberry32(5);
  const expect: number[] = [];
  for (let i = 0; i < n; i++)
    fields.forEach((f, k) => {
      const vals = Array.from({ length: widths[k] }, () => Math.floor(rand() * 1e6));
      R.write(view, i, f, ...vals);
      for (const v of vals) expect.push(v);
    });
  const copy = fields
    .map((f, k) => {
      const t = R.types[f];
      const conv = t.endsWith('f') || t === 'f32' ? (x: string) => `u32(${x})` : t.endsWith('i') || t === 'i32' ? (x: string) => `u32(${x})` : (x: string) => x;
      return widths[k] === 1 ? `out[o] = ${conv(`r.${f}`)}; o++;` : Array.from({ length: widths[k] }, (_, c) => `out[o] = ${conv(`r.${f}[${c}]`)}; o++;`).join(' ');
    })
    .join('\n  ');
  const wgsl = /* wgsl */ `
${R.wgsl}
@group(0) @binding(0) var<storage, read> recs: array<Mixed>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
${THREAD_INDEX_WGSL}
${kernelEntry('unpack')} {
  let i = thread_index(gid, nwg);
  if (i >= arrayLength(&recs)) { return; }
  let r = recs[i];
  var o = i * ${perRecord}u;
  ${copy}
}`;
  const [k] = await buildKernels(device, 'layout test', () => [Kernel.create(device, 'unpack', wgsl)]);
  const recs = device.createBuffer({ size: view.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(recs, 0, view.buffer);
  const out = device.createBuffer({ size: 4 * perRecord * n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  k.dispatch(pass, k.bind([recs, out]), n);
  pass.end();
  device.queue.submit([encoder.finish()]);
  const [data] = await readBuffers(device, [out]);
  assert.deepEqual([...new Uint32Array(data)], expect);
  assert.deepEqual(R.read(view, 3, 'g'), expect.slice(3 * perRecord + perRecord - 3, 4 * perRecord));
});
