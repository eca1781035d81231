/**
 * xpbd-gpu's contacts (xpbd/contacts.wgsl.ts over contacts/gpu-contacts.ts, f32) against xpbd-cpu's
 * (xpbd/contacts.ts, f64): the same stages on the same scenes, on the software adapter.
 *
 * The CPU twin runs with the pipeline's coherence off (the GPU has no coherence shortcut: both run the
 * narrow phase on every pair every frame) and with XpbdContacts.colourOrder on: the GPU projects its
 * manifolds colour by colour (Jones–Plassmann, the overflow set last), and a Gauss–Seidel sweep's result
 * depends on its order, so the CPU sweeps them in the same colour order.
 *
 * Bound, f32 against f64 (ε = 2⁻²⁴, the f32 unit roundoff). XPBD works on positions: in a substep a body's
 * position is rounded once by integrate (x + h v) and once per constraint that moves it (x + Δx, and its
 * orientation q + ½ (0, Δθ) ⊗ q, which moves a point at the lever arm by ≤ ε X), so by
 *   r = (1 + 2M) ε X,  M the most manifolds and joints on one body, X the largest coordinate (≥ 1 m).
 * The velocity is the substep's displacement over h (xpbd/kernels.wgsl.ts: Δx summed from its increments,
 * not x − x_prev of two rounded positions), but the next projection of a contact or joint takes the rounded
 * position back onto the constraint and reads that as velocity: up to r / h a substep. Over F frames of
 * S substeps:
 *   δv(F) ≤ F S r / h,    δx(F) ≤ F S r + F dt δv(F).
 * The velocity bound is the loose one (1/h: 600 at 10 substeps); frame 1 is where it is tightest. Beyond
 * rounding, the projection has branches (a point in or out, a manifold stuck or sliding) that f32 and f64
 * can take differently where a quantity sits at its threshold; the scenes are chosen away from those over
 * the frames compared (piles over their first frames, as the softstep-gpu twin test does). A wrong kernel
 * (a sign, a missing term, a wrong μ, a missed reference of static friction) is off by g h² ≈ 2.7e-5 m in
 * one substep and by the friction's μ g t (0.5–1.5 m/s) or centimetres in ten frames.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';
import { XpbdGpuSolver } from '../src/solvers/xpbd/gpu.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { findSolver } from '../src/solvers/registry.js';
import { convergingSpheres, mapReadBuffersCreatedBy } from './support/gpu.js';
import type { WorldDesc } from '../src/model/world.js';
import type { ContactList } from '../src/rows/contact.js';
import { runSolver } from '../src/run/run.js';

const eps = 2 ** -24;
const g = 9.81;

// a box held by a point joint at its corner while it rests on another: joints and contacts in one world
const hungBox: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [
    { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
    { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0.5, 0] },
    { shape: { type: 'box', halfExtents: [0.5, 0.25, 0.5] }, density: 1000, position: [0.2, 1.25, 0.1] },
  ],
  constraints: [{ type: 'point', bodyA: 2, bodyB: null, anchorA: [0.5, 0.25, 0.5], anchorB: [0.7, 1.5, 0.6] }],
};

/*
 * Bouncing bodies (restitution, Müller et al. 2020 §3.6 in the velocity pass): a sphere (e = 0.5) and a box
 * (e = 0.75, landing flat) arriving at the ground at 3 and 2 m/s, and two spheres (e = 1) meeting head-on at
 * 2 m/s each, 0.105 m apart, in the air (both fall alike: their normal velocity is the approach alone). They
 * meet 0.02625 s in, mid frame 2 and mid substep: a contact that starts at a substep's boundary (0.1 m apart:
 * 15 substeps exactly) can start a substep apart in f32 and f64, off by 2 m/s × h = 3.3 mm (measured).
 * Each bounce happens within the first frames and leaves at e v, well above the 0.1 m/s threshold.
 */
const bouncing: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [
    { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
    { shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0, 0.565, 0], linearVelocity: [0, -3, 0], restitution: 0.5 },
    { shape: { type: 'box', halfExtents: [0.4, 0.3, 0.4] }, density: 1000, position: [3, 0.335, 0], linearVelocity: [0, -2, 0], restitution: 0.75 },
    { shape: { type: 'sphere', radius: 0.4 }, density: 1000, position: [-3.4525, 4, 0], linearVelocity: [2, 0, 0], restitution: 1 },
    { shape: { type: 'sphere', radius: 0.4 }, density: 1000, position: [-2.5475, 4, 0], linearVelocity: [-2, 0, 0], restitution: 1 },
  ],
  constraints: [],
};

/** The most manifolds (runs of one pair in the list) and joints on one moving body (a fixed one is never rounded). */
function mostOnOneBody(list: ContactList, world: WorldDesc): number {
  const on = new Map<number, number>();
  const add = (b: number | null) => b !== null && b < world.bodies.length && !world.bodies[b].fixed && on.set(b, (on.get(b) ?? 0) + 1);
  for (let c = 0; c < list.count; c++) {
    if (c > 0 && list.bodyA[c] === list.bodyA[c - 1] && list.bodyB[c] === list.bodyB[c - 1]) continue;
    add(list.bodyA[c]);
    add(list.bodyB[c]);
  }
  for (const j of world.constraints) {
    add(j.bodyA);
    add(j.bodyB);
  }
  return Math.max(1, ...on.values());
}

test('xpbd-gpu solves contacts as xpbd-cpu does in its colour order: positions and velocities within the f32 bound over the first frames', async () => {
  const gpu = await acquireGpu();
  try {
    const list: [string, Record<string, number>, number[]][] = [
      ['single-box', { height: 0.02 }, [1, 3, 10]],
      ['rolling', {}, [1, 3, 10]],
      ['friction-ramp', {}, [1, 3, 10]],
      ['pyramid', { base: 3 }, [1, 3]],
      ['hung box', {}, [1, 3, 10]],
      ['bouncing', {}, [1, 3, 10]],
    ];
    for (const [name, params, frames] of list) {
      const world = name === 'hung box' ? hungBox : name === 'bouncing' ? bouncing : loadRigidScene(name, params).world;
      const opts = { substeps: 10, iterations: 1, sleep: 0 }; // the registry's defaults
      const cpu = new XpbdCpuSolver(world, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver!.colourOrder = true;
      // restitution: Müller's rule alone, as the GPU (xpbd-cpu's collision propagation is not on the GPU)
      cpu.contactSolver!.collisionPropagation = false;
      const gs = await XpbdGpuSolver.create(world, opts, gpu);
      const { dt, substeps: S } = gs.options;
      const h = dt / S;
      const X = Math.max(1, ...world.bodies.flatMap((b) => (b.shape.type === 'plane' ? [] : b.position.map(Math.abs))));
      let done = 0, touched = 0, M = 1;
      for (const F of frames) {
        await cpu.step(F - done);
        await gs.step(F - done);
        done = F;
        M = Math.max(M, mostOnOneBody(cpu.contacts, world));
        touched = Math.max(touched, cpu.contacts.count);
        const a = await cpu.snapshot(), b = await gs.snapshot();
        const r = (1 + 2 * M) * eps * X;
        const dvBound = (F * S * r) / h;
        const dxBound = F * S * r + F * dt * dvBound;
        let dx = 0, dv = 0;
        for (let i = 0; i < a.position.length; i++) {
          dx = Math.max(dx, Math.abs(a.position[i] - b.position[i]));
          dv = Math.max(dv, Math.abs(a.linearVelocity[i] - b.linearVelocity[i]));
        }
        assert.ok(dx <= dxBound, `${name}, frame ${F}: |Δx| = ${dx.toExponential(2)} m > bound ${dxBound.toExponential(2)} m`);
        assert.ok(dv <= dvBound, `${name}, frame ${F}: |Δv| = ${dv.toExponential(2)} m/s > bound ${dvBound.toExponential(2)} m/s`);
        console.log(`xpbd-gpu, ${name}, frame ${F}: |Δx| ${dx.toExponential(1)} m (bound ${dxBound.toExponential(1)}), |Δv| ${dv.toExponential(1)} m/s (bound ${dvBound.toExponential(1)}), M ${M}`);
      }
      // the comparison is about contacts: the CPU twin had some in these frames
      assert.ok(touched > 0, `${name}: no contact in the frames compared`);
      if (name === 'bouncing') {
        // and the bounces happened on both: every body moving away from its contact at frame 10
        const a = await cpu.snapshot(), b = await gs.snapshot();
        for (const snap of [a, b]) {
          assert.ok(snap.linearVelocity[3 * 1 + 1] > 0 && snap.linearVelocity[3 * 2 + 1] > 0, 'sphere and box rebound');
          assert.ok(snap.linearVelocity[3 * 3] < 0 && snap.linearVelocity[3 * 4] > 0, 'the e = 1 pair swapped velocities');
        }
      }
      gs.destroy();
    }
  } finally {
    gpu.device.destroy();
  }
});

test('xpbd-gpu with contacts records a frame with no readback (collision, colouring, projection, velocity pass with restitution and store on the GPU), with xpbd-cpu\'s stages', async () => {
  const gpu = await acquireGpu();
  try {
    const pyramid = loadRigidScene('pyramid', { base: 3 }).world;
    // bouncing boxes: restitution's ṽ_n kernel (xc_begin_substep) is recorded too
    const world: WorldDesc = { ...pyramid, bodies: pyramid.bodies.map((b) => ({ ...b, restitution: 0.3 })) };
    const s = await XpbdGpuSolver.create(world, { substeps: 4, sleep: 0 }, gpu);
    assert.ok((s as unknown as { contacts: { elastic: boolean } }).contacts.elastic, "restitution's ṽ_n kernel is not recorded");
    await s.step(2); // a frame with last frame's records follows: the pair table is in use
    const encoder = gpu.device.createCommandEncoder();
    let recorded: unknown;
    // encodeFrame is synchronous (it cannot await a mapped buffer) and creates no buffer to map
    const made = mapReadBuffersCreatedBy(gpu.device, () => {
      const pass = encoder.beginComputePass();
      recorded = (s as unknown as { encodeFrame(at: () => GPUComputePassEncoder): unknown }).encodeFrame(() => pass);
      pass.end();
    });
    assert.equal(recorded, undefined, 'encodeFrame returned something (a promise would mean it waits)');
    assert.equal(made, 0, 'a MAP_READ buffer was created while recording a frame');
    gpu.device.queue.submit([encoder.finish()]);
    assert.deepEqual(s.stageNames, new XpbdCpuSolver(world, { sleep: 0 }).stageNames);
    s.destroy();
  } finally {
    gpu.device.destroy();
  }
});

test('xpbd-gpu takes the contact scenes and every shape, refuses bouncing bodies until collision propagation is on the GPU (with the reason), and says it does not sleep', () => {
  const info = findSolver('xpbd-gpu')!;
  assert.equal(info.supports!.contacts, true);
  assert.deepEqual([...info.supports!.shapes].sort(), ['box', 'capsule', 'plane', 'sphere']);
  for (const name of ['single-box', 'pyramid', 'rolling', 'friction-ramp']) assert.equal(info.unsupported?.(loadRigidScene(name, {}).world) ?? null, null, name);
  // Müller's rule is on the GPU (the twin test above), the propagation that makes a cradle right is not
  for (const name of ['restitution', 'newtons-cradle']) assert.match(info.unsupported?.(loadRigidScene(name, {}).world) ?? '', /xpbd-gpu has no collision propagation on the GPU yet .*Newton's cradle/, name);
  assert.ok(info.reads.includes('restitutionThreshold'), 'xpbd-gpu reads --restitution-threshold');
  assert.equal(info.reads.includes('sleep'), false, 'xpbd-gpu reads no sleep option: every body stays awake');
  assert.match(info.description, /no sleeping/);
});

test('xpbd-gpu: a frame that finds more pairs than its contact stages hold is reported as the run\'s failure, not solved with contacts dropped', async () => {
  const gpu = await acquireGpu();
  try {
    // (convergingSpheres: they start apart and meet about frame 28, 780 pairs against the 320 slots)
    const world = convergingSpheres();
    const s = await XpbdGpuSolver.create(world, { substeps: 4 }, gpu);
    const r = await runSolver(s, world, { frames: 40 });
    s.destroy();
    assert.match(r.diverged?.reason ?? '', /xpbd-gpu: the broad phase found \d+ pairs more than its 320 slots/);
    const frame = r.diverged?.frame ?? NaN;
    assert.ok(frame >= 20 && frame <= 32, `reported at frame ${frame}, where the spheres meet (about 28)`);
  } finally {
    gpu.device.destroy();
  }
});
