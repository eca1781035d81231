/**
 * xpbd-gpu's contacts (xpbd/contacts.wgsl.ts over contacts/gpu-contacts.ts, f32) against xpbd-cpu's
 * (xpbd/contacts.ts, f64): the same stages on the same scenes, on the software adapter.
 *
 * The CPU twin runs with the pipeline's coherence off (the GPU has no coherence shortcut: both run the
 * narrow phase on every pair every frame) and with XpbdContacts.colourOrder on: the GPU projects its
 * manifolds colour by colour (gpu/colouring.ts, the overflow set last), and a Gauss–Seidel sweep's result
 * depends on its order, so the CPU sweeps them in the same colour order.
 *
 * Bound, f32 against f64 (ε = 2⁻²⁴, the f32 unit roundoff). XPBD works on positions: in a substep a body's
 * position is rounded once by integrate (x + h v) and once per constraint that moves it (x + Δx, and its
 * orientation q + ½ (0, Δθ) ⊗ q, which moves a point at the lever arm by ≤ ε X), so by
 *   r = (1 + 2M) ε X,  M the most manifolds and joints on one body, X the largest coordinate (≥ 1 m).
 * Where a body has e > 0, restitution's collisions (xc_collide, xc_apply: xpbd/contacts.ts collide) move the
 * bodies of each manifold that collided once more, in position and orientation (x += h Q/m, q by h I⁻¹(r × Q n)):
 * r = (1 + 4M) ε X there. Their impulses are computed on velocities (rounded to ε |v|, |v| ≪ X / h) by a
 * block that stops at a change ≤ 1e-6 of its largest impulse (one point, a sphere's: exact), ≤ 1e-6 |v| a
 * collision, below the r / h ≥ ε X / h = 1e-4 m/s of one substep.
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
 * Bouncing bodies (restitution: xpbd-cpu's collision propagation, then Müller et al. 2020 §3.6 in the velocity
 * pass at the points the collisions did not take): a sphere (e = 0.5) and a box
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
      // restitution's scene dropped from 0.3 m (e = 0, 0.25, 0.5, 0.75, 1: they land at 2.4 m/s at frame 15 and
      // leave at e v); a Newton's cradle on 0.25 m strings (its first ball strikes at 0.77 m/s at frame 15 and the
      // strike runs down the row by propagation within a substep): each compared after its collisions
      ['restitution', { height: 0.3 }, [1, 10, 20]],
      ['newtons-cradle', { length: 0.25 }, [1, 10, 20]],
    ];
    for (const [name, params, frames] of list) {
      const world = name === 'hung box' ? hungBox : name === 'bouncing' ? bouncing : loadRigidScene(name, params).world;
      const opts = { substeps: 10, iterations: 1, sleep: 0 }; // the registry's defaults
      const cpu = new XpbdCpuSolver(world, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver!.colourOrder = true;
      cpu.contactSolver!.velocityBlock = true; // the GPU's velocity pass: the stick block per manifold
      assert.equal(cpu.contactSolver!.coneShare, true); // shareStart and restickBlock: in WGSL too (b_share, b_restick)
      // restitution as on the GPU: the collision propagation (on by default), then Müller's rule
      assert.equal(cpu.contactSolver!.collisionPropagation, true);
      const gs = await XpbdGpuSolver.create(world, opts, gpu);
      const { dt, substeps: S } = gs.options;
      const h = dt / S;
      const X = Math.max(1, ...world.bodies.flatMap((b) => (b.shape.type === 'plane' ? [] : b.position.map(Math.abs))));
      const elastic = world.bodies.some((b) => (b.restitution ?? 0) > 0);
      let done = 0, touched = 0, M = 1;
      for (const F of frames) {
        await cpu.step(F - done);
        await gs.step(F - done);
        done = F;
        M = Math.max(M, mostOnOneBody(cpu.contacts, world));
        touched = Math.max(touched, cpu.contacts.count);
        const a = await cpu.snapshot(), b = await gs.snapshot();
        const r = (1 + (elastic ? 4 : 2) * M) * eps * X;
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
      if (name === 'restitution') {
        // frame 20, 0.09 s after landing together at v = √(2 g H): e = 0 rests on the ground, and from e = 0.25 on
        // (all in flight until frame 22) each step of 0.25 in e left 0.25 v faster (they fall alike since), within 5 %
        const first = world.bodies.length - 5, v = Math.sqrt(2 * g * 0.3);
        for (const snap of [await cpu.snapshot(), await gs.snapshot()]) {
          const vy = (k: number) => snap.linearVelocity[3 * (first + k) + 1];
          assert.ok(Math.abs(vy(0)) < 0.01, `e = 0 rebounds at ${vy(0)} m/s`);
          for (let k = 2; k < 5; k++) assert.ok(Math.abs((vy(k) - vy(k - 1)) / (0.25 * v) - 1) < 0.05, `e = ${k / 4}: ${vy(k)} m/s against ${vy(k - 1)} at e = ${(k - 1) / 4}`);
        }
      }
      if (name === 'newtons-cradle') {
        // frame 20, after the strike: the last ball swings out, the first and middle ones stay (< 1 cm/s)
        const v0 = Math.sqrt(2 * g * 0.25 * (1 - Math.cos(0.5)));
        for (const snap of [await cpu.snapshot(), await gs.snapshot()]) {
          const speed = (i: number) => Math.hypot(snap.linearVelocity[3 * i], snap.linearVelocity[3 * i + 1], snap.linearVelocity[3 * i + 2]);
          const n = snap.position.length / 3;
          assert.ok(speed(n - 1) > 0.8 * v0, `the last ball leaves at ${speed(n - 1)} m/s (struck at ${v0})`);
          for (let i = 0; i < n - 1; i++) assert.ok(speed(i) < 0.01, `ball ${i} moves at ${speed(i)} m/s after the strike`);
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

test('xpbd-gpu takes the contact scenes, bouncing bodies and every shape, and says it does not sleep', () => {
  const info = findSolver('xpbd-gpu')!;
  assert.equal(info.supports!.contacts, true);
  assert.deepEqual([...info.supports!.shapes].sort(), ['box', 'capsule', 'plane', 'sphere']);
  // restitution and the cradle too: the collision propagation is on the GPU (the twin test above)
  for (const name of ['single-box', 'pyramid', 'rolling', 'friction-ramp', 'restitution', 'newtons-cradle']) assert.equal(info.unsupported?.(loadRigidScene(name, {}).world) ?? null, null, name);
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
