/**
 * jacobi-gpu's contacts (contacts/gpu-contacts.ts, f32 WGSL) against jacobi-cpu's
 * (contacts/jacobi-contact-solver.ts, f64), the same stages on the same scenes, on the software adapter.
 *
 * The CPU twin runs with the pipeline's coherence off (collision/manifolds.ts refresh: a pair that barely
 * moved keeps its points without a narrow phase), which the GPU does not have: with it off both run the
 * narrow phase on every pair every frame, so they solve the same manifolds.
 *
 * Bound, f32 against f64 (ε = 2⁻²⁴, the f32 unit roundoff), as test/jacobi-gpu.test.ts's for joints:
 * each substep rounds x + h v (≤ ε X, X the largest coordinate) and carries the velocity error into the
 * position (h δv). A substep's velocity error is the solve's: N_it sweeps, each updating a body's
 * velocity through its manifolds' points, a manifold ≤ 4 points of ~16 flops each on velocities ≤ V, so
 * ≤ 64 N_it ε V per substep; over F frames of S substeps
 *   δv(F) ≤ F S · 64 N_it ε V,    δx(F) ≤ F S ε X + F dt δv(F),
 * V the largest speed reached (≤ the initial speed + g t). The scenes are chosen with mass ratios near 1:
 * a contact solve's rounding grows with its conditioning (heavy-on-light, a 100 : 1 ratio, parts at
 * 1e-4 m in 10 frames), which this bound does not model. A wrong kernel (a sign, a missing term, a
 * missed warm start, a wrong μ) is off by g h² ≈ 2e-4 m in one substep and by centimetres in ten frames.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { JacobiGpuSolver } from '../src/solvers/jacobi/gpu.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { sizeSubsteps } from '../src/solvers/softstep/cpu.js';
import { findSolver } from '../src/solvers/registry.js';
import { convergingSpheres, mapReadBuffersCreatedBy } from './support/gpu.js';
import type { WorldDesc } from '../src/model/world.js';
import { runSolver } from '../src/run/run.js';
import { contactPairCapacity, CONTACT_PAIRS_PER_BODY } from '../src/contacts/gpu-contacts.js';
import { compileWorld } from '../src/model/compiled.js';
import type { Solver, SolverOptions } from '../src/solvers/solver.js';
import { SoftStepCpuSolver } from '../src/solvers/softstep/cpu.js';
import { SoftStepGpuSolver } from '../src/solvers/softstep/gpu.js';
import { GaussSeidelContactCpuSolver } from '../src/solvers/gs/contacts.js';
import { GaussSeidelGpuSolver } from '../src/solvers/gs/gpu.js';

const eps = 2 ** -24;
const g = 9.81;

// a box landing, a small pyramid and stack (resting contacts, warm-started), a sphere sliding into rolling
// (friction, dynamic then static), spheres packed between planes, a wide box on two small ones at a
// mass ratio of 1, and a box held by a point joint at its corner while it rests on another (the joint's
// share of the split masses)
const hungBox: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [
    { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
    { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0.5, 0] },
    { shape: { type: 'box', halfExtents: [0.5, 0.25, 0.5] }, density: 1000, position: [0.2, 1.25, 0.1] },
  ],
  constraints: [{ type: 'point', bodyA: 2, bodyB: null, anchorA: [0.5, 0.25, 0.5], anchorB: [0.7, 1.5, 0.6] }],
};
const cases: [string, Record<string, number>][] = [
  ['single-box', { height: 0.02 }],
  ['pyramid', { base: 3 }],
  ['vertical-stack', { boxes: 3 }],
  ['rolling', {}],
  ['confined', { count: 20 }],
  ['heavy-on-light', { ratio: 1 }],
];

interface TwinCase {
  name: string;
  world: WorldDesc;
  /** the frames compared (a sequential solve's: see the softstep-gpu test) */
  frames: number[];
}
const twinCases = (list: [string, Record<string, number>, number[]][]): TwinCase[] =>
  list.map(([name, params, frames]) => ({ name, world: name === 'hung box' ? hungBox : loadRigidScene(name, params).world, frames }));

/**
 * Steps `cpu` and `gpu` side by side and compares every body's position and velocity at `frames` against the
 * header's bound, with `sweeps` sweeps of the contacts per substep (N_it for the Jacobi variant, the solve's
 * and the relax's for the soft step).
 */
async function compareTwins(label: string, c: TwinCase, cpu: Solver, gs: Solver & { options: SolverOptions; destroy(): void }, sweeps: number, contactCount: () => number, atEnd?: () => Promise<void>): Promise<void> {
  const { dt, substeps: S } = gs.options;
  const X = Math.max(1, ...c.world.bodies.flatMap((b) => (b.shape.type === 'plane' ? [] : b.position.map(Math.abs))));
  const v0 = Math.max(0, ...c.world.bodies.map((b) => Math.hypot(...(b.linearVelocity ?? [0, 0, 0]))));
  let done = 0, touched = 0;
  for (const F of c.frames) {
    await cpu.step(F - done);
    await gs.step(F - done);
    done = F;
    const a = await cpu.snapshot(), b = await gs.snapshot();
    const V = v0 + g * F * dt + 1;
    const dvBound = F * S * 64 * sweeps * eps * V;
    const dxBound = F * S * eps * X + F * dt * dvBound;
    let dx = 0, dv = 0;
    for (let i = 0; i < a.position.length; i++) {
      dx = Math.max(dx, Math.abs(a.position[i] - b.position[i]));
      dv = Math.max(dv, Math.abs(a.linearVelocity[i] - b.linearVelocity[i]));
    }
    assert.ok(dx <= dxBound, `${label}, ${c.name}, frame ${F}: |Δx| = ${dx.toExponential(2)} m > bound ${dxBound.toExponential(2)} m`);
    assert.ok(dv <= dvBound, `${label}, ${c.name}, frame ${F}: |Δv| = ${dv.toExponential(2)} m/s > bound ${dvBound.toExponential(2)} m/s`);
    touched = Math.max(touched, contactCount());
    if (F === c.frames[c.frames.length - 1]) console.log(`${label}, ${c.name}, frame ${F}: |Δx| ${dx.toExponential(1)} m (bound ${dxBound.toExponential(1)}), |Δv| ${dv.toExponential(1)} m/s (bound ${dvBound.toExponential(1)})`);
  }
  // the comparison is about contacts: the CPU twin had some in these frames
  assert.ok(touched > 0, `${c.name}: no contact in the frames compared`);
  if (atEnd) await atEnd();
  gs.destroy();
}

test('jacobi-gpu solves contacts as jacobi-cpu does: positions and velocities within the f32 bound over the first frames', async () => {
  const gpu = await acquireGpu();
  try {
    // and a 35-box stack over two frames: at the top of a tall stack a point barely touches, its λ ~ 1e-19 N, and
    // the friction disc's |f|² fell below f32's smallest normal (flushed to 0): NaN at frame 2, now scaled away
    for (const c of twinCases([...cases.map(([n, p]) => [n, p, [1, 3, 10]] as [string, Record<string, number>, number[]]), ['hung box', {}, [1, 3, 10]], ['vertical-stack', { boxes: 35 }, [1, 2]]])) {
      const opts = { substeps: sizeSubsteps(c.world, 8), sleep: 0 };
      const cpu = new JacobiCpuSolver(c.world, opts);
      cpu.collision!.coherence = false;
      const gs = await JacobiGpuSolver.create(c.world, opts, gpu);
      await compareTwins('jacobi-gpu', c, cpu, gs, gs.options.iterations, () => cpu.contacts.count);
    }
  } finally {
    gpu.device.destroy();
  }
});

/*
 * softstep-gpu against softstep-cpu sweeping its manifolds in the same colour order (ContactSolver.colourOrder):
 * a Gauss-Seidel sweep's result depends on its order, and so on the colours, and the colours on which pairs
 * have points. f32 and f64 can disagree on that where a point sits at the margin's edge (a speculative
 * point, or one of box–box clipping's equally deep points that the reduction to four keeps in one and not
 * the other: the known reduction tie), and a colour changed then moves the result by the coupling, not by
 * rounding. So piles of aligned boxes and colliding spheres are compared over their first frame (their
 * pairs and points are then those of the same start), and scenes whose contact sets stay put over 10 frames.
 */
test('softstep-gpu solves contacts as softstep-cpu does in its colour order: positions and velocities within the f32 bound', async () => {
  const gpu = await acquireGpu();
  try {
    const list: [string, Record<string, number>, number[]][] = [
      ['single-box', { height: 0.02 }, [1, 3, 10]],
      ['rolling', {}, [1, 3, 10]],
      ['friction-ramp', {}, [1, 3, 10]],
      ['heavy-on-light', { ratio: 1 }, [1, 3, 10]],
      ['pyramid', { base: 3 }, [1]],
      ['vertical-stack', { boxes: 3 }, [1]],
      ['confined', { count: 20 }, [1, 3]],
    ];
    for (const c of twinCases(list)) {
      const opts = { substeps: sizeSubsteps(c.world, 4), iterations: 1, sleep: 0 }; // the registry's defaults
      const cpu = new SoftStepCpuSolver(c.world, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver.colourOrder = true;
      const gs = await SoftStepGpuSolver.create(c.world, opts, gpu);
      await compareTwins('softstep-gpu', c, cpu, gs, 2 * gs.options.iterations, () => cpu.contacts.count);
    }
  } finally {
    gpu.device.destroy();
  }
});

/*
 * gs-gpu against gs-cpu's contact variant (gs/contacts.ts) sweeping its manifolds in the same colour order, as
 * softstep-gpu's test above (the same caveat: piles compared over their first frames, before a point at the
 * margin's edge can part them): a landing box, a base-3 pyramid and the box hung by a point joint (the joints'
 * coloured sweep, folded into V before the contacts', every other sweep backwards on both). The bound counts one
 * contact sweep per iteration and the restitution pass (none here: e = 0).
 */
test('gs-gpu solves contacts as gs-cpu does in its colour order: positions and velocities within the f32 bound', async () => {
  const gpu = await acquireGpu();
  try {
    const list: [string, Record<string, number>, number[]][] = [
      ['single-box', { height: 0.02 }, [1, 3, 10]],
      ['pyramid', { base: 3 }, [1, 3]],
      ['hung box', {}, [1, 3, 10]],
    ];
    for (const c of twinCases(list)) {
      const opts = { substeps: 4, sleep: 0 }; // gs-cpu's and gs-gpu's contact defaults (8 sweeps)
      const cpu = new GaussSeidelContactCpuSolver(c.world, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver.colourOrder = true;
      const gs = await GaussSeidelGpuSolver.create(c.world, opts, gpu);
      await compareTwins('gs-gpu', c, cpu, gs, gs.options.iterations, () => cpu.contacts.count);
    }
  } finally {
    gpu.device.destroy();
  }
});

for (const [id, create, stages] of [
  ['jacobi-gpu', JacobiGpuSolver.create, ['collide', 'prepare contacts', 'integrate velocities', 'prepare joints', 'restitution', 'warm start', 'solve', 'integrate positions', 'store impulses']],
  ['softstep-gpu', SoftStepGpuSolver.create, ['collide', 'prepare contacts', 'integrate velocities', 'restitution', 'warm start', 'solve', 'integrate positions', 'relax', 'store impulses']],
  ['gs-gpu', GaussSeidelGpuSolver.create, ['collide', 'prepare contacts', 'integrate velocities', 'prepare joints', 'restitution', 'warm start', 'solve', 'integrate positions', 'store impulses']],
] as const)
test(`${id} with contacts records a frame with no readback (collision, colouring, restitution, warm start, solve and store on the GPU)`, async () => {
  const gpu = await acquireGpu();
  try {
    // bouncing boxes: the restitution pass is recorded too; jacobi-gpu and gs-gpu with the top box hung by a
    // point joint at its place, so the joints' split impulse (its position pass) is recorded too
    const pyramid = loadRigidScene('pyramid', { base: 3 }).world;
    const top = pyramid.bodies.length - 1;
    const hang = id === 'softstep-gpu' ? [] : [{ type: 'point' as const, bodyA: top, bodyB: null, anchorA: [0, 0, 0] as [number, number, number], anchorB: [...pyramid.bodies[top].position] as [number, number, number] }];
    const world: WorldDesc = { ...pyramid, bodies: pyramid.bodies.map((b) => ({ ...b, restitution: 0.3 })), constraints: [...pyramid.constraints, ...hang] };
    const s = await create(world, { substeps: 4, sleep: 0 }, gpu);
    assert.ok((s as unknown as { contacts: { elastic: boolean } }).contacts.elastic, 'the restitution pass is not recorded');
    assert.equal((s as unknown as { split: boolean }).split, hang.length > 0, 'the position pass is recorded where there are joints');
    await s.step(2); // a warm-started frame follows: the pair table is in use
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
    // and the stage list is the CPU twin's (softstep-gpu: no joints)
    assert.deepEqual(s.stageNames, stages);
    s.destroy();
  } finally {
    gpu.device.destroy();
  }
});

test('the GPU contact solvers take bouncing bodies and the contact scenes they can solve; softstep-gpu still refuses joints, with the reason', () => {
  for (const id of ['jacobi-gpu', 'softstep-gpu']) {
    const info = findSolver(id)!;
    for (const [name, params] of [['restitution', {}], ...cases] as [string, Record<string, number>][]) assert.equal(info.unsupported!(loadRigidScene(name, params).world), null, `${id}: ${name}`);
  }
  // the cradle's balls hang on distance joints: jacobi-gpu takes it, softstep-gpu has no joints yet
  const cradle = loadRigidScene('newtons-cradle', {}).world;
  assert.equal(findSolver('jacobi-gpu')!.unsupported!(cradle), null);
  assert.match(findSolver('softstep-gpu')!.unsupported!(cradle) ?? '', /distance/);
});

/*
 * Restitution (gpu-contacts.wgsl.ts cs_restitution, the twin of contact-solver.ts restitution) on a scene
 * that bounces in its first frames: a sphere (e = 0.8) and a box landing flat (e = 0.5: its four points
 * collide together, the manifold's projected Gauss-Seidel) hit the ground at 3 and 2 m/s in frame 1, and
 * two equal spheres (e = 1) meet head-on at 2 m/s in the air in frame 2 (they swap velocities). Both CPU
 * twins sweep the collisions in the GPU's colour order (ContactSolver.colourOrder: for jacobi-cpu it orders
 * only the restitution pass, its solve being Jacobi). The bound is the header's, with the collision
 * passes counted as sweeps: a pass is a manifold's projected Gauss-Seidel, ≤ 4 points of ~16 flops each
 * on velocities ≤ V per sweep of its block, converged (the f32 stop at a change ≤ 1e-6 of the impulse
 * leaves ≤ 1e-6 V, below 64 ε V = 3.8e-6 V), so one pass adds at most what one solve sweep does: jacobi-gpu
 * and gs-gpu N_it + 1 (one pass a step), softstep-gpu 2 N_it + 2 (one before the solve, one before the relax).
 */
const bouncing: WorldDesc = {
  gravity: [0, -g, 0],
  bodies: [
    { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
    { shape: { type: 'sphere', radius: 0.5 }, density: 1000, restitution: 0.8, position: [0, 0.56, 0], linearVelocity: [0, -3, 0] },
    { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, restitution: 0.5, position: [3, 0.54, 0], linearVelocity: [0, -2, 0] },
    { shape: { type: 'sphere', radius: 0.3 }, density: 1000, restitution: 1, position: [-3, 2, 0], linearVelocity: [1, 0, 0] },
    { shape: { type: 'sphere', radius: 0.3 }, density: 1000, restitution: 1, position: [-2.34, 2, 0], linearVelocity: [-1, 0, 0] },
  ],
  constraints: [],
};

test('restitution on the GPU as on the CPU: jacobi-gpu, softstep-gpu and gs-gpu against their twins in the same colour order, within the f32 bound', async () => {
  const gpu = await acquireGpu();
  try {
    const c: TwinCase = { name: 'bouncing', world: bouncing, frames: [1, 3, 10] };
    // the collisions happened: the spheres swapped their velocities, the ground sent the others back up
    const swapped = (s: Solver) => async () => {
      const snap = await s.snapshot();
      assert.ok(snap.linearVelocity[9] < -0.9 && snap.linearVelocity[12] > 0.9, `the e = 1 spheres did not swap velocities: ${snap.linearVelocity[9]}, ${snap.linearVelocity[12]}`);
      // at rest on the ground they would sit at 0.5 m; bounced (2.4 and 1 m/s up, 0.15 s ago) they are higher
      assert.ok(snap.position[4] > 0.7 && snap.position[7] > 0.52, `the sphere and the box did not bounce: y = ${snap.position[4]}, ${snap.position[7]} m`);
    };
    {
      const opts = { substeps: sizeSubsteps(bouncing, 8), sleep: 0 };
      const cpu = new JacobiCpuSolver(bouncing, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver!.colourOrder = true;
      const gs = await JacobiGpuSolver.create(bouncing, opts, gpu);
      await compareTwins('jacobi-gpu', c, cpu, gs, gs.options.iterations + 1, () => cpu.contacts.count, swapped(gs));
    }
    {
      const opts = { substeps: sizeSubsteps(bouncing, 4), iterations: 1, sleep: 0 };
      const cpu = new SoftStepCpuSolver(bouncing, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver.colourOrder = true;
      const gs = await SoftStepGpuSolver.create(bouncing, opts, gpu);
      await compareTwins('softstep-gpu', c, cpu, gs, 2 * gs.options.iterations + 2, () => cpu.contacts.count, swapped(gs));
    }
    {
      const opts = { substeps: 4, sleep: 0 };
      const cpu = new GaussSeidelContactCpuSolver(bouncing, opts);
      cpu.collision!.coherence = false;
      cpu.contactSolver.colourOrder = true;
      const gs = await GaussSeidelGpuSolver.create(bouncing, opts, gpu);
      await compareTwins('gs-gpu', c, cpu, gs, gs.options.iterations + 1, () => cpu.contacts.count, swapped(gs));
    }
  } finally {
    gpu.device.destroy();
  }
});

test('a frame that finds more pairs than the GPU contact stages hold is reported as the run\'s failure, not solved with contacts dropped', async () => {
  const gpu = await acquireGpu();
  try {
    // (convergingSpheres: they start apart and meet about frame 28, 780 pairs against the 320 slots)
    const world = convergingSpheres();
    for (const create of [JacobiGpuSolver.create, SoftStepGpuSolver.create]) {
      const s = await create(world, { substeps: 4 }, gpu);
      const r = await runSolver(s, world, { frames: 40 });
      s.destroy();
      assert.match(r.diverged?.reason ?? '', /the broad phase found \d+ pairs more than its 320 slots/, s.id);
      const frame = r.diverged?.frame ?? NaN;
      assert.ok(frame >= 20 && frame <= 32, `${s.id}: reported at frame ${frame}, where the spheres meet (about 28)`);
    }
  } finally {
    gpu.device.destroy();
  }
});


/*
 * A build packed denser than 8 pairs a body gets the slots its start pose needs (contactPairCapacity: 1.5 ×
 * the CPU broad phase's candidates there). A 6 × 6 × 6 block of 20 cm boxes 1 mm apart on the ground: the
 * speculative margins (1 mm each side, and the frame's fall) reach every face, edge and corner neighbour,
 * 3·36·5 + 6·6·25 + 4·125 = 1,940 pairs and 36 with the ground, 9.1 a box against the 8 × 216 = 1,728 slots
 * of a fixed 8 a body (the 110k `brick-wall`, 22 wythes: 9.5 a brick, stopped at frame 1 that way). Both
 * frames run with every pair kept: no overflow reported.
 */
test('a block packed denser than 8 pairs a body runs: its pair slots follow its start pose', async () => {
  const n = 6, e = 0.1, gap = 0.001;
  const world: WorldDesc = {
    gravity: [0, -g, 0],
    bodies: [
      { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
      ...Array.from({ length: n * n * n }, (_, k) => {
        const i = k % n, j = Math.floor(k / n) % n, l = Math.floor(k / (n * n));
        return { shape: { type: 'box' as const, halfExtents: [e, e, e] as [number, number, number] }, density: 500, position: [i * (2 * e + gap), e + gap / 2 + j * (2 * e + gap), l * (2 * e + gap)] as [number, number, number] };
      }),
    ],
    constraints: [],
  };
  const slots = contactPairCapacity(world.bodies, compileWorld(world), 1 / 60);
  assert.ok(slots > CONTACT_PAIRS_PER_BODY * world.bodies.length, `${slots} slots, over the fixed ${CONTACT_PAIRS_PER_BODY} a body`);
  const gpu = await acquireGpu();
  try {
    const s = await JacobiGpuSolver.create(world, { substeps: 4 }, gpu);
    const r = await runSolver(s, world, { frames: 2 });
    s.destroy();
    assert.equal(r.diverged, null, JSON.stringify(r.diverged));
    assert.equal(r.frames, 2);
  } finally {
    gpu.device.destroy();
  }
});
