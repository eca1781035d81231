/**
 * Where a GPU solver's host time goes: one solver on the rain, stepped in calls of `batch` frames (as
 * `run` and `bench` do between snapshots), with every WebGPU call the host makes counted and its
 * synchronous time summed (prototype wrappers around Dawn's objects), and the promise waits
 * (onSubmittedWorkDone, mapAsync) timed to their resolution. Prints per frame: the calls, the host ms
 * in each, the JS time left outside them (the solver's own encoding), and the state hash.
 *   node --import tsx scripts/host-profile.ts SOLVER COUNT FRAMES [BATCH=FRAMES] [STAGE_EVERY=16] [WARM=2]
 * The first WARM frames (pipelines' first use) are stepped before the counting starts.
 */
import { createHash } from 'node:crypto';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { acquireGpu } from '../src/gpu/device.js';

const [id, count, framesArg, batchArg, stageArg = '16', warmArg = '2'] = process.argv.slice(2);
const frames = Number(framesArg), batch = Number(batchArg ?? framesArg), warm = Number(warmArg);
const world = findRigidScene('rain')!.build({ count: Number(count), size: 0.15, height: Number(process.env.HP_HEIGHT ?? 1), seed: 1 });
const info = findSolver(id);
if (!info) throw new Error(`no solver ${id}`);
const gpu = await acquireGpu();
const t0 = performance.now();
const solver = await info.create(world, resolveOptions(info, { sleep: 0 }, world), gpu);
const setupMs = performance.now() - t0;
(solver as unknown as { sampleStagesEvery?(k: number): void }).sampleStagesEvery?.(Number(stageArg));

const calls = new Map<string, { n: number; ms: number }>();
let counting = false;
const note = (name: string, ms: number) => {
  if (!counting) return;
  const c = calls.get(name) ?? { n: 0, ms: 0 };
  c.n++;
  c.ms += ms;
  calls.set(name, c);
};
const g = globalThis as unknown as Record<string, { prototype: Record<string, unknown> }>;
const wrap = (cls: string, method: string, async = false) => {
  const proto = g[cls].prototype;
  const orig = proto[method] as (...a: unknown[]) => unknown;
  proto[method] = function (this: unknown, ...a: unknown[]) {
    const s = performance.now();
    const r = orig.apply(this, a);
    if (async && r instanceof Promise) return r.then((v) => (note(`${cls}.${method} (to resolution)`, performance.now() - s), v));
    note(`${cls}.${method}`, performance.now() - s);
    return r;
  };
};
for (const m of ['setPipeline', 'setBindGroup', 'dispatchWorkgroups', 'dispatchWorkgroupsIndirect', 'end']) wrap('GPUComputePassEncoder', m);
for (const m of ['beginComputePass', 'copyBufferToBuffer', 'clearBuffer', 'resolveQuerySet', 'finish']) wrap('GPUCommandEncoder', m);
for (const m of ['createBuffer', 'createBindGroup', 'createComputePipeline', 'createComputePipelineAsync', 'createShaderModule', 'createCommandEncoder', 'createQuerySet']) wrap('GPUDevice', m);
for (const m of ['submit', 'writeBuffer']) wrap('GPUQueue', m);
wrap('GPUQueue', 'onSubmittedWorkDone', true);
wrap('GPUBuffer', 'mapAsync', true);
for (const m of ['getMappedRange', 'unmap', 'destroy']) wrap('GPUBuffer', m);

for (let f = 0; f < warm; f++) await solver.step(1);
counting = true;
const cpu0 = process.cpuUsage();
const w0 = performance.now();
for (let done = 0; done < frames; done += batch) await solver.step(Math.min(batch, frames - done));
const wallMs = performance.now() - w0;
const cpu = process.cpuUsage(cpu0);
counting = false;

const timings = solver.timings();
const gpuMs = timings.msPerFrame.slice(warm).reduce((a, b) => a + b, 0);
const s = await solver.snapshot();
const hash = createHash('sha256');
for (const a of [s.position, s.orientation, s.linearVelocity, s.angularVelocity]) hash.update(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
console.log(`${id} rain ${count}: ${frames} frames in calls of ${batch}, stages timed 1 in ${stageArg}; set-up ${setupMs.toFixed(0)} ms`);
console.log(`wall ${(wallMs / frames).toFixed(2)} ms/frame, process CPU ${((cpu.user + cpu.system) / 1000 / frames).toFixed(2)} ms/frame, clock (${timings.clock}) ${(gpuMs / frames).toFixed(2)} ms/frame`);
let sync = 0;
for (const [name, c] of [...calls].sort((a, b) => b[1].ms - a[1].ms)) {
  if (!name.includes('resolution')) sync += c.ms;
  console.log(`  ${name.padEnd(48)} ${(c.n / frames).toFixed(1).padStart(9)} /frame ${(c.ms / frames).toFixed(3).padStart(9)} ms/frame`);
}
const waits = [...calls].filter(([n]) => n.includes('resolution')).reduce((a, [, c]) => a + c.ms, 0);
console.log(`  WebGPU calls (sync) ${(sync / frames).toFixed(2)} ms/frame; waits ${(waits / frames).toFixed(2)}; rest (JS) ${((wallMs - sync - waits) / frames).toFixed(2)} ms/frame`);
console.log(`state ${hash.digest('hex').slice(0, 16)}`);
solver.destroy();
process.exit(0);
