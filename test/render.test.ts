/**
 * The viewer's renderer in Node (Dawn, the software adapter in CI), drawing offscreen as
 * scripts/bench-render.ts does: a GPU solver's beads are drawn from the solver's own pose buffer
 * at its current state (not its initial one), each where the camera projects its centre.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { hasBodyStateBuffer } from '../src/solvers/gpu-base.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { renderInfo, type Drawable } from '../viewer/render-info.js';
import { BACKGROUND, Renderer, offscreenTarget } from '../viewer/renderer.js';

const W = 320, H = 240;

/** The target's pixels, RGBA8, rows of W (bytes per row padded to 256 in the copy). */
async function readPixels(device: GPUDevice, texture: GPUTexture): Promise<Uint8Array> {
  const row = Math.ceil((4 * W) / 256) * 256;
  const buf = device.createBuffer({ size: row * H, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const enc = device.createCommandEncoder();
  enc.copyTextureToBuffer({ texture }, { buffer: buf, bytesPerRow: row }, [W, H]);
  device.queue.submit([enc.finish()]);
  await buf.mapAsync(GPUMapMode.READ);
  const src = new Uint8Array(buf.getMappedRange());
  const out = new Uint8Array(4 * W * H);
  for (let y = 0; y < H; y++) out.set(src.subarray(y * row, y * row + 4 * W), 4 * W * y);
  buf.destroy();
  return out;
}

test('jacobi-gpu beads are drawn from its own pose buffer, where the camera projects their current centres', async () => {
  const gpu = await acquireGpu();
  const { world } = loadRigidScene('necklace', { chains: 1, beads: 8 });
  const drawable = renderInfo(world) as Drawable;
  const target = offscreenTarget(gpu.device, W, H);
  const renderer = await Renderer.create(gpu, target);
  renderer.setScene(drawable, true);
  const info = findSolver('jacobi-gpu')!;
  const solver = await info.create(world, resolveOptions(info, {}), gpu);
  assert.ok(hasBodyStateBuffer(solver));
  const colour = [0.3, 0.6, 1];
  const slot = renderer.createSlot(solver.bodyState().buffer, colour, 1);
  await solver.step(30); // half a second of swinging

  renderer.draw([slot], { joints: false, translucent: false });
  const px = await readPixels(gpu.device, target.texture);
  const snap = await solver.snapshot();
  const chroma = (r: number, g: number, b: number) => [r / (r + g + b), g / (r + g + b)];
  const [cr, cg] = chroma(colour[0], colour[1], colour[2]);
  let moved = 0;
  for (let i = 0; i < snap.bodyCount; i++) {
    const now = renderer.project(Array.from(snap.position.subarray(3 * i, 3 * i + 3)))!;
    const then = renderer.project(world.bodies[i].position)!;
    const radiusPx = Math.abs(renderer.project([snap.position[3 * i] + drawable.radius[i], snap.position[3 * i + 1], snap.position[3 * i + 2]])![0] - now[0]);
    if (Math.hypot(now[0] - then[0], now[1] - then[1]) > 3 * radiusPx) moved++;
    const k = 4 * (Math.round(now[1]) * W + Math.round(now[0]));
    const [r, g, b] = [px[k], px[k + 1], px[k + 2]];
    const [pr, pg] = chroma(r, g, b);
    // lit or shaded, a bead's pixel keeps its colour's hue (the highlight sits off-centre)
    assert.ok(Math.abs(pr - cr) < 0.04 && Math.abs(pg - cg) < 0.04, `bead ${i} at (${now.map(Math.round)}): rgb ${r},${g},${b}`);
  }
  // the beads have swung well away from where they started: the drawing follows the solver
  assert.ok(moved >= snap.bodyCount / 2, `${moved} of ${snap.bodyCount} beads moved more than 3 radii on screen`);
  // and a corner of the picture (the sky above the scene) is the background
  assert.deepEqual(Array.from(px.subarray(0, 3)), BACKGROUND.map((c) => Math.round(c * 255)));
  solver.destroy();
});
