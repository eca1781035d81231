/**
 * What the viewer's frame costs on the GPU, in Node on any WebGPU adapter: the viewer's own
 * renderer (viewer/renderer.ts, the same WGSL pipelines) drawing a GPU solver's bodies straight
 * from the solver's `pose` buffer into an offscreen texture, as the page does into its canvas.
 *
 *   npm run bench:render -- [--scene necklace] [--param chains=2500 ...] [--solver jacobi-gpu]
 *                           [--frames 120] [--width 1920] [--height 1080] [--no-joints]
 *                           [--out bench-render.json]
 *   node dist/solverlab/bench-render.mjs ...   (the bundle: a GPU host with Node and nothing else)
 *
 * Two phases of `frames` frames each, every frame waited for (onSubmittedWorkDone), as the
 * viewer's loop does with one step per drawn frame:
 *   draw    the render pass alone (the scene paused)
 *   play    one solver step, then the render pass
 * Reported: medians of the render pass's GPU time (timestamp queries), of the solver step's GPU
 * time, and of the wall time per frame (performance.now(), the whole frame: encode, submit,
 * wait, timestamp readback). Not included: the browser's compositing and its JS, which the
 * viewer's heads-up line shows as ms/frame. Results go to a JSON file (written whole, or not).
 *
 * Bad input: one line on stderr, exit status 2, no file written.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { acquireGpu } from '../src/gpu/device.js';
import { hasBodyStateBuffer } from '../src/solvers/gpu-base.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { findSolver, solvers } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { UsageError, numberFlag, paramFlags, parseArgs } from '../src/cli/args.js';
import { renderInfo } from '../viewer/render-info.js';
import { Renderer, offscreenTarget } from '../viewer/renderer.js';

const flags = {
  scene: { value: true },
  param: { value: true, repeat: true },
  solver: { value: true },
  frames: { value: true },
  width: { value: true },
  height: { value: true },
  'no-joints': { value: false },
  out: { value: true },
};

function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

async function main(argv: string[]): Promise<void> {
  const { command, flags: f } = parseArgs(['bench-render', ...argv], { 'bench-render': { summary: 'render benchmark', flags } });
  if (command === 'help') {
    console.log('npm run bench:render -- [--scene necklace] [--param k=v ...] [--solver jacobi-gpu] [--frames 120] [--width 1920] [--height 1080] [--no-joints] [--out bench-render.json]');
    return;
  }
  const one = (k: string) => f.get(k)?.[0];
  const sceneName = one('scene') ?? 'necklace';
  const params = paramFlags(f.get('param') ?? (sceneName === 'necklace' ? ['chains=2500'] : []));
  const solverId = one('solver') ?? 'jacobi-gpu';
  const info = findSolver(solverId);
  if (!info) throw new UsageError(`unknown solver '${solverId}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
  if (info.device !== 'gpu') throw new UsageError(`--solver ${solverId} is not a GPU solver: the viewer draws CPU solvers from uploaded snapshots, which this benchmark does not time`);
  const frames = numberFlag('frames', one('frames') ?? '120', { integer: true, min: 1, max: 100_000 });
  const width = numberFlag('width', one('width') ?? '1920', { integer: true, min: 1, max: 8192 });
  const height = numberFlag('height', one('height') ?? '1080', { integer: true, min: 1, max: 8192 });
  const joints = !f.has('no-joints');
  const out = one('out') ?? 'bench-render.json';
  const { world: desc } = loadRigidScene(sceneName, params);
  const drawable = renderInfo(desc);
  if (!drawable.drawable) throw new UsageError(`--scene ${sceneName}: ${drawable.reason}`);

  const gpu = await acquireGpu();
  const target = offscreenTarget(gpu.device, width, height);
  const renderer = await Renderer.create(gpu, target);
  renderer.setScene(drawable, true);
  const options = resolveOptions(info, {});
  const solver = await info.create(desc, options, gpu);
  if (!hasBodyStateBuffer(solver)) throw new Error(`${solverId} keeps no pose buffer the renderer can read`);
  const slot = renderer.createSlot(solver.bodyState().buffer, [0.3, 0.6, 1], 1);
  const draw = () => renderer.draw([slot], { joints, translucent: false });
  const settle = async () => {
    await gpu.device.queue.onSubmittedWorkDone();
    await new Promise((r) => setTimeout(r, 0)); // the last timestamp readback's callback
  };

  // warm-up: pipelines compiled, buffers resident
  for (let k = 0; k < 5; k++) {
    await solver.step(1);
    draw();
    await settle();
  }
  renderer.drawTimings();
  solver.resetTimings();

  const drawWall: number[] = [];
  for (let k = 0; k < frames; k++) {
    const t0 = performance.now();
    draw();
    await gpu.device.queue.onSubmittedWorkDone();
    drawWall.push(performance.now() - t0);
  }
  await settle();
  const drawGpu = renderer.drawTimings();

  const playWall: number[] = [];
  for (let k = 0; k < frames; k++) {
    const t0 = performance.now();
    await solver.step(1);
    draw();
    await gpu.device.queue.onSubmittedWorkDone();
    playWall.push(performance.now() - t0);
  }
  await settle();
  const playDrawGpu = renderer.drawTimings();
  const step = solver.timings();
  solver.destroy();

  const result = {
    benchmark: 'viewer render pass (bench-render)',
    date: new Date().toISOString(),
    adapter: gpu.adapterName,
    software: gpu.software,
    scene: sceneName,
    params,
    bodies: drawable.bodyCount,
    joints: joints ? drawable.jointCount : 0,
    resolution: [width, height],
    solver: solverId,
    options,
    frames,
    clocks: { draw: gpu.timestamps ? 'gpu-timestamp' : 'none', step: step.clock, frame: 'wall' },
    median: {
      drawGpuMs: median([...drawGpu, ...playDrawGpu]),
      drawOnlyWallMsPerFrame: median(drawWall),
      stepMs: median(step.msPerFrame),
      playWallMsPerFrame: median(playWall),
    },
    samples: { drawGpuMs: [...drawGpu, ...playDrawGpu], drawOnlyWallMs: drawWall, stepMs: step.msPerFrame, playWallMs: playWall },
  };
  const tmp = `${out}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(result, null, 2) + '\n');
  renameSync(tmp, out);
  const m = result.median;
  const ms = (x: number) => (Number.isFinite(x) ? x.toPrecision(3) : 'n/a');
  console.log(`${gpu.adapterName}${gpu.software ? ' [software]' : ''}: ${sceneName}, ${result.bodies} bodies, ${result.joints} joints drawn, ${width}×${height}, ${solverId}`);
  console.log(`  render pass      ${ms(m.drawGpuMs)} ms (GPU timestamps, median of ${result.samples.drawGpuMs.length})`);
  console.log(`  draw only        ${ms(m.drawOnlyWallMsPerFrame)} ms/frame (wall, median of ${frames})`);
  console.log(`  ${solverId} step  ${ms(m.stepMs)} ms (${step.clock})`);
  console.log(`  step + draw      ${ms(m.playWallMsPerFrame)} ms/frame (wall) → ${ms(1000 / m.playWallMsPerFrame)} frames/s`);
  console.log(`  → ${out}`);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    const usage = e instanceof UsageError || (e as Error).name === 'InputError' || (e as Error).name === 'WorldError';
    console.error(`bench-render: ${(e as Error).message.split('\n')[0]}`);
    if (!usage) console.error((e as Error).stack);
    process.exit(usage ? 2 : 1);
  },
);
