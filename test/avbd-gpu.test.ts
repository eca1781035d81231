/**
 * avbd-gpu (solvers/avbd/gpu.ts, kernels.wgsl.ts) against avbd-cpu (f64, the same stages, the same
 * body colouring and so the same order of updates), within the f32 bound derived below, on small joint
 * scenes of every joint type, on contacts and on a bounce (restitution); the 50,000 : 1 mass-ratio pendulum
 * held on the GPU itself (the figure); a frame recorded with no readback; the registry's declaration.
 * SwiftShader here: small scenes, few frames.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, supportReason } from '../src/solvers/solver.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import { boundingRadius, massProperties, type WorldDesc } from '../src/model/world.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { AvbdCpuSolver } from '../src/solvers/avbd/cpu.js';
import { AvbdGpuSolver } from '../src/solvers/avbd/gpu.js';
import { mapReadBuffersCreatedBy } from './support/gpu.js';
import { mulberry32 } from './support/random.js';
import { GpuBodyColouring, BODY_INACTIVE, BODY_LEFT, BODY_SUMMARY_WORDS } from '../src/gpu/body-colouring.js';
import { BODY_COLOUR_LIMIT, bodyColoursParallel } from '../src/model/body-colouring.js';
import { readBuffers } from '../src/gpu/frames.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { RAMP_FRICTIONS } from '../src/scenes/contact-scenes.js';
import { CONTACT_SLOP } from '../src/rows/block-solver.js';
import type { Snapshot } from '../src/model/snapshot.js';

const EPS32 = 2 ** -24;

/*
 * Bound, f32 against f64 (ε = 2⁻²⁴ the unit roundoff), X the largest coordinate of the scene (m).
 * In one step a body's position is written 1 + n times (the inertial start x + h v + h² g ŵ, then one
 * Newton step x ← x − H⁻¹ f per iteration, n iterations), each rounded by ε X; the step Δ = H⁻¹ f itself
 * carries the rounding of f: M/h² (x − y) is rounded relative to ε X, and each row's k C* is that of C
 * (ε X, C being a difference of positions), which H⁻¹ maps back to a move of at most that size (H ⪰ M/h²
 * and H ⪰ k JᵀJ, so H⁻¹ M/h² and H⁻¹ k JᵀJ have no eigenvalue above 1). So ≤ 4 ε X per write:
 *   δ = 4 (n + 1) ε X per step.
 * The error is carried from step to step through v = (x − x⁻)/h, as Verlet carries it: h δv_N ≤ Σ δ,
 * δx_N ≤ Σ_k h δv_k, so after N steps
 *   δx(N) ≤ N² δ,   δv(N) ≤ 2 N δ / h.
 * Rotation: a move δ of a joint's anchor at lever ℓ turns the body by at most κ δ / ℓ, κ = m ℓ² / I
 * (the scene's largest, bounded by the trace form below), plus the rounding of q (4 ε a write):
 *   δq(N) ≤ N² (κ δ / ℓ + 4 (n + 1) ε),   ℓ δω(N) ≤ 2 N (κ δ + 4 (n + 1) ε ℓ) / h.
 * A wrong kernel (a sign, a missing row, a wrong Hessian term) moves a body by about a free fall's
 * g h² ≈ 3e-3 m in the first frame, far above δx(1) ≈ 1e-5 m for X ≈ 2 m.
 * Contacts: a contact row's C = s₀ + J·Δ (contacts.ts) with s₀ from the narrow phase, on the GPU in f32
 * within E = 64 ε (X + L) of the CPU's (test/gpu-narrow.test.ts's bound, L the two bounding radii
 * summed). s₀ is fixed for the step, so its error shifts the row's target and, through H⁻¹ (as above),
 * the step's end by at most E: δ = 4 (n + 1) ε X + E per step. Its lever arms reach a body's corners, so
 * κ and ℓ are taken over the corners of each dynamic box (or the radius of a sphere) as over a joint's
 * anchors. (A stick decision, d₀ against STICK_DISTANCE, could flip between f32 and f64 and part the two;
 * on the first frames of a resting pile the slip is far from it.)
 */
function boundShape(world: WorldDesc): { kappa: number; lever: number } {
  let kappa = 0, lever = 0.05;
  world.bodies.forEach((body, i) => {
    if (body.fixed) return;
    const mp = massProperties(body);
    const I = [mp.inertiaLocal[0], mp.inertiaLocal[4], mp.inertiaLocal[8]];
    const arms = world.constraints.map((c) => (c.bodyA === i ? c.anchorA : c.bodyB === i ? c.anchorB : null)).filter((a) => a !== null);
    // a contact's arm: a box's corner, a sphere's radius
    if (world.collisions !== false) {
      const s = body.shape;
      if (s.type === 'box') arms.push(s.halfExtents);
      else if (s.type === 'sphere') arms.push([s.radius, 0, 0]);
    }
    for (const [x, y, z] of arms) {
      lever = Math.max(lever, Math.hypot(x, y, z));
      kappa = Math.max(kappa, mp.mass * ((y * y + z * z) / I[0] + (x * x + z * z) / I[1] + (x * x + y * y) / I[2]));
    }
  });
  return { kappa, lever };
}

async function compare(t: { diagnostic(message: string): void }, gpu: GpuContext, name: string, world: WorldDesc, frames: number[]): Promise<{ cpu: AvbdCpuSolver; gpuSolver: AvbdGpuSolver }> {
  const info = findSolver('avbd-gpu')!;
  assert.equal(info.unsupported?.(world, resolveOptions(info, {}, world)) ?? null, null, name);
  const opts = resolveOptions(info, { sleep: 0 }, world);
  // avbd-cpu with avbd-gpu's body colouring (its CPU twin): the same colours, the same order of updates
  const cpu = new AvbdCpuSolver(world, opts, { colouring: 'parallel' });
  const gpuSolver = await AvbdGpuSolver.create(world, opts, gpu);
  const h = opts.dt / opts.substeps, n = opts.iterations;
  const X = Math.max(...world.bodies.flatMap((b) => b.position.map(Math.abs)), ...world.constraints.flatMap((c) => c.anchorB.map(Math.abs)), 0.1);
  // the narrow phase's f32 bound on s₀ where the scene has contacts (header): L the two largest bounding radii summed
  const radii = world.bodies.map((b) => boundingRadius(b.shape)).filter(Number.isFinite).sort((a, b) => b - a);
  const E = world.collisions !== false ? 64 * EPS32 * (X + radii[0] + (radii[1] ?? 0)) : 0;
  const delta = 4 * (n + 1) * EPS32 * X + E;
  const { kappa, lever } = boundShape(world);
  let done = 0;
  for (const F of frames) {
    await cpu.step(F - done);
    await gpuSolver.step(F - done);
    done = F;
    const a = await cpu.snapshot(), b = await gpuSolver.snapshot();
    const N = F * opts.substeps;
    const dxBound = N * N * delta;
    const dvBound = (2 * N * delta) / h;
    const dwBound = (2 * N * (kappa * delta + 4 * (n + 1) * EPS32 * lever)) / h;
    const dqBound = N * N * ((kappa * delta) / lever + 4 * (n + 1) * EPS32);
    let dx = 0, dv = 0, dw = 0, dq = 0;
    for (let i = 0; i < a.position.length; i++) {
      dx = Math.max(dx, Math.abs(a.position[i] - b.position[i]));
      dv = Math.max(dv, Math.abs(a.linearVelocity[i] - b.linearVelocity[i]));
      dw = Math.max(dw, lever * Math.abs(a.angularVelocity[i] - b.angularVelocity[i]));
    }
    for (let i = 0; i < a.orientation.length; i++) dq = Math.max(dq, Math.abs(a.orientation[i] - b.orientation[i]));
    t.diagnostic(`${name}, frame ${F}: |Δx| ${dx.toExponential(2)} ≤ ${dxBound.toExponential(2)} m, |Δv| ${dv.toExponential(2)} ≤ ${dvBound.toExponential(2)} m/s, ℓ|Δω| ${dw.toExponential(2)} ≤ ${dwBound.toExponential(2)} m/s, |Δq| ${dq.toExponential(2)} ≤ ${dqBound.toExponential(2)} (κ ${kappa.toFixed(2)}, ℓ ${lever} m, X ${X} m)`);
    assert.ok(dx <= dxBound, `${name} frame ${F}: |Δx| = ${dx} m > bound ${dxBound} m`);
    assert.ok(dv <= dvBound, `${name} frame ${F}: |Δv| = ${dv} m/s > bound ${dvBound} m/s`);
    assert.ok(dw <= dwBound, `${name} frame ${F}: ℓ|Δω| = ${dw} m/s > bound ${dwBound} m/s`);
    assert.ok(dq <= dqBound, `${name} frame ${F}: |Δq| = ${dq} > bound ${dqBound}`);
  }
  return { cpu, gpuSolver };
}

test('avbd-gpu agrees with avbd-cpu within the f32 bound: point joints (a small necklace), hinges, fixed joints, a rope', async (t) => {
  const gpu = await acquireGpu();
  try {
    const scenes: [string, Record<string, number>][] = [
      ['necklace', { chains: 2, beads: 5 }],
      ['hinge-chain', { links: 3 }],
      ['cantilever', { boxes: 2 }],
      ['rope-swing', {}],
    ];
    for (const [name, params] of scenes) {
      const { cpu, gpuSolver } = await compare(t, gpu, name, loadRigidScene(name, params).world, [1, 3, 10]);
      cpu.destroy();
      gpuSolver.destroy();
    }
  } finally {
    gpu.device.destroy();
  }
});

/*
 * The paper's mass-ratio test on the GPU: 5 beads of 0.52 kg holding a 26.2 t ball, at the default 10
 * iterations and the scale-free schedule: every joint within 1 cm (the figure, which avbd-cpu
 * meets over 10 s, test/avbd.test.ts), here over 5 s — nearly three swings, the worst stretch coming at
 * the bottom of each — sampled every 5th frame (SwiftShader; the violation moves smoothly with the swing:
 * 1.3 mm at most on the CPU, measured every frame; `solverlab run --scene mass-ratio-pendulum --solver
 * avbd-gpu` gives 1.29 mm over the 10 s). The first frames are held to avbd-cpu by the bound above: the
 * 6×6 systems here are the worst conditioned of the scenes (k̂ up to 1e4 of the ball's M/h² on a bead's
 * Hessian).
 */
test('avbd-gpu holds the 50,000 : 1 mass-ratio pendulum within 1 cm over 5 s, and agrees with avbd-cpu over its first frames', async (t) => {
  const gpu = await acquireGpu();
  try {
    const world = loadRigidScene('mass-ratio-pendulum', {}).world;
    const { cpu, gpuSolver } = await compare(t, gpu, 'mass-ratio-pendulum', world, [1, 3, 10]);
    cpu.destroy();
    const metrics = new MetricsContext(world);
    let worst = 0;
    for (let f = 10; f < 300; f += 5) {
      await gpuSolver.step(5);
      worst = Math.max(worst, metrics.measure(await gpuSolver.snapshot()).maxViolation);
    }
    gpuSolver.destroy();
    t.diagnostic(`worst joint violation over 5 s: ${worst.toExponential(2)} m`);
    assert.ok(worst < 0.01, `joint violation ${worst} m`);
  } finally {
    gpu.device.destroy();
  }
});

test('avbd-gpu records a frame with no readback, with avbd-cpu\'s stages', async () => {
  const gpu = await acquireGpu();
  try {
    for (const [world, postStabilize] of [
      [loadRigidScene('necklace', { chains: 2, beads: 5 }).world, 0],
      [loadRigidScene('necklace', { chains: 2, beads: 5 }).world, 1],
      [loadRigidScene('pyramid', { base: 2 }).world, 0],
      [loadRigidScene('restitution', {}).world, 0],
    ] as const) {
      const s = await AvbdGpuSolver.create(world, { postStabilize }, gpu);
      await s.step(1);
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
      assert.deepEqual(s.stageNames, new AvbdCpuSolver(world, { postStabilize }).stageNames);
      s.destroy();
    }
  } finally {
    gpu.device.destroy();
  }
});

test('avbd-gpu takes every joint type, contacts and bouncing bodies and reads avbd-cpu\'s options with its defaults; it refuses a body jointed to 32 with the reason', () => {
  const gpuInfo = findSolver('avbd-gpu')!, cpuInfo = findSolver('avbd-cpu')!;
  assert.deepEqual([...gpuInfo.supports!.constraints].sort(), ['distance', 'fixed', 'hinge', 'point']);
  assert.deepEqual([...gpuInfo.reads].sort(), [...cpuInfo.reads].sort());
  assert.deepEqual(gpuInfo.defaults, cpuInfo.defaults);
  for (const name of ['necklace', 'hinge-chain', 'cantilever', 'rope-swing', 'joint-grid', 'mass-ratio-pendulum']) assert.equal(gpuInfo.unsupported?.(loadRigidScene(name, {}).world) ?? null, null, name);
  for (const name of ['single-box', 'pyramid', 'friction-ramp', 'brick-wall']) {
    const world = loadRigidScene(name, {}).world;
    assert.equal(gpuInfo.unsupported?.(world) ?? null, null, name);
    assert.equal(supportReason('avbd-gpu', gpuInfo.supports!, world), null, name);
    assert.deepEqual(resolveOptions(gpuInfo, {}, world).substeps, resolveOptions(cpuInfo, {}, world).substeps, `${name}: avbd-cpu's contact substeps`);
  }
  assert.equal(gpuInfo.unsupported?.(loadRigidScene('restitution', {}).world) ?? null, null, 'restitution');
  // a hub jointed to 40 beads: beyond the body colouring's 32 colours (31 neighbours at most), refused with the reason
  const hub: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [{ shape: { type: 'sphere', radius: 0.1 }, density: 1000, position: [0, 0, 0] }, ...Array.from({ length: 40 }, (_, i) => ({ shape: { type: 'sphere' as const, radius: 0.05 }, density: 1000, position: [Math.cos(i), 0.5, Math.sin(i)] as [number, number, number] }))],
    constraints: Array.from({ length: 40 }, (_, i) => ({ type: 'point' as const, bodyA: 0, bodyB: i + 1, anchorA: [0, 0, 0] as [number, number, number], anchorB: [-Math.cos(i), -0.5, -Math.sin(i)] as [number, number, number] })),
    collisions: false,
  };
  assert.match(gpuInfo.unsupported?.(hub) ?? '', /avbd-gpu colours its bodies in 32 colours, so a body may be jointed to at most 31 others; bodies\[0\]/);
  assert.equal(cpuInfo.unsupported?.(hub) ?? null, null, 'avbd-cpu takes it');
});


/**
 * A random body graph: n bodies, a fraction `fixedShare` of them fixed, edges drawn at random (pairs of
 * distinct bodies, duplicates kept, no body beyond `maxDegree`), as a CSR over both directions.
 */
function randomGraph(seed: number, n: number, edges: number, fixedShare: number, maxDegree: number): { active: Uint8Array; offsets: Int32Array; neighbours: Int32Array; pairs: [number, number][] } {
  const rnd = mulberry32(seed);
  const active = Uint8Array.from({ length: n }, () => (rnd() < fixedShare ? 0 : 1));
  const degree = new Int32Array(n);
  const pairs: [number, number][] = [];
  for (let k = 0; k < edges; k++) {
    const a = Math.floor(rnd() * n), b = Math.floor(rnd() * n);
    if (a === b || degree[a] >= maxDegree || degree[b] >= maxDegree) continue;
    degree[a]++;
    degree[b]++;
    pairs.push([a, b]);
  }
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + degree[i];
  const fill = offsets.slice(0, n), neighbours = new Int32Array(offsets[n]);
  for (const [a, b] of pairs) {
    neighbours[fill[a]++] = b;
    neighbours[fill[b]++] = a;
  }
  return { active, offsets, neighbours, pairs };
}

/** A path of n active bodies, body i joined to i + 1. */
function pathGraph(n: number): { active: Uint8Array; offsets: Int32Array; neighbours: Int32Array; pairs: [number, number][] } {
  const offsets = new Int32Array(n + 1), neighbours: number[] = [], pairs: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0) neighbours.push(i - 1);
    if (i + 1 < n) {
      neighbours.push(i + 1);
      pairs.push([i, i + 1]);
    }
    offsets[i + 1] = neighbours.length;
  }
  return { active: new Uint8Array(n).fill(1), offsets, neighbours: Int32Array.from(neighbours), pairs };
}

/** The body graph of a contact pile: avbd-cpu's body → item CSR (joints and contact points) after `frames` frames, as neighbour lists. */
async function pileGraph(world: WorldDesc, frames: number): Promise<{ active: Uint8Array; offsets: Int32Array; neighbours: Int32Array; pairs: [number, number][] }> {
  const cpu = new AvbdCpuSolver(world, { sleep: 0 });
  await cpu.step(frames);
  const g = cpu as unknown as { first: Int32Array; flatEntries: Int32Array; flatA: Int32Array; flatB: Int32Array; w: { bodyCount: number; inverseMass: Float64Array } };
  const n = g.w.bodyCount;
  const offsets = g.first.slice(0, n + 1), neighbours = new Int32Array(offsets[n]), pairs: [number, number][] = [];
  for (let b = 0; b < n; b++)
    for (let e = offsets[b]; e < offsets[b + 1]; e++) {
      const k = g.flatEntries[e];
      neighbours[e] = g.flatA[k] === b ? g.flatB[k] : g.flatA[k];
      pairs.push([b, neighbours[e]]);
    }
  return { active: Uint8Array.from({ length: n }, (_, i) => (g.w.inverseMass[i] > 0 ? 1 : 0)), offsets, neighbours, pairs };
}

/*
 * The body colouring on the GPU (gpu/body-colouring.ts) against its CPU twin (model/body-colouring.ts
 * bodyColoursParallel): the same colour for every body, bit for bit (same hashed priorities, same rounds),
 * and the facts a per-body Gauss–Seidel needs, each of which fails when the colouring is wrong: no clash
 * (no edge joins two active bodies of one colour: the three-avbd finding, a leftover clash made a hard
 * joint grid explode), every active body coloured (none left: no serial pass exists to catch it) and
 * listed once in the colour-grouped order under its colour's (start, count), fixed bodies never coloured
 * and free to touch any colour, at most Δ + 1 colours (a greedy choice). Graphs: random ones of degree up
 * to 31 (the 32-colour limit) with 400 and 4000 bodies, 20 % fixed; a long path; the contact graph of a
 * brick wall (6 × 8 × 2, 90 bricks and the sphere on the ground: each brick touches up to 7 others), after
 * the frame the sphere hits it. The rounds are the bound R = 48; each graph's rounds used are reported.
 * Each graph is coloured both ways the rounds are recorded: dispatched round by round, and in the one
 * workgroup that loops until no body is listed (bc_rounds_loop, a small graph's): the same colours.
 */
test('the GPU body colouring matches its CPU twin colour for colour, every dynamic body coloured, zero clashes, no serial pass', async (t) => {
  const gpu = await acquireGpu();
  try {
    const wall = loadRigidScene('brick-wall', { rows: 6, columns: 8, layers: 2, distance: 0.05 }).world;
    const cases = [
      { name: 'random, degree 31, 400 bodies', ...randomGraph(2, 400, 12000, 0.2, 31) },
      { name: 'random, degree 31, 4000 bodies', ...randomGraph(3, 4000, 120000, 0.2, 31) },
      { name: 'path', ...pathGraph(300) },
      { name: 'brick wall 6 × 8 × 2 contact graph', ...(await pileGraph(wall, 3)) },
    ];
    for (const [c, loopCapacity] of cases.flatMap((x) => [[x, 0], [x, Infinity]] as const)) {
      const n = c.active.length, K = BODY_COLOUR_LIMIT;
      const cpu = bodyColoursParallel(n, c.active, c.offsets, c.neighbours);
      // the graph buffer: adjacency (absolute offsets), active flags, colour info, order, summary
      const adjacency = 0, lists = n + 1, active = lists + c.neighbours.length, colourInfo = active + n, order = colourInfo + 5 * K, summary = order + n;
      const words = new Uint32Array(summary + BODY_SUMMARY_WORDS);
      for (let i = 0; i <= n; i++) words[adjacency + i] = lists + c.offsets[i];
      words.set(c.neighbours, lists);
      words.set(c.active, active);
      const graph = gpu.device.createBuffer({ size: words.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      gpu.device.queue.writeBuffer(graph, 0, words);
      const colouring = await GpuBodyColouring.create(gpu.device, graph, { bodyCount: n, adjacency, active, colourInfo, order, summary }, undefined, loopCapacity);
      assert.equal(colouring.loop, loopCapacity > 0);
      const encoder = gpu.device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      colouring.record(pass);
      pass.end();
      gpu.device.queue.submit([encoder.finish()]);
      const [wordsBack, colourBack, summaryBack] = (await readBuffers(gpu.device, [graph, colouring.colourBuffer, colouring.summaryBuffer])).map((b) => new Uint32Array(b));
      colouring.destroy();
      graph.destroy();
      assert.deepEqual(Array.from(summaryBack.subarray(0, BODY_SUMMARY_WORDS)), Array.from(wordsBack.subarray(summary, summary + BODY_SUMMARY_WORDS)), `${c.name}: the summary's copy`);
      const colour = Array.from(colourBack, (w) => (w === BODY_INACTIVE ? -1 : w >= BODY_LEFT ? -2 : w & 255));
      assert.deepEqual(colour, Array.from(cpu.colour), `${c.name}: the GPU's colours are the CPU twin's`);
      let clashes = 0;
      for (const [a, b] of c.pairs) if (a !== b && c.active[a] && c.active[b] && colour[a] === colour[b]) clashes++;
      assert.equal(clashes, 0, `${c.name}: edges joining two active bodies of one colour`);
      const colours = wordsBack[summary], left = wordsBack[summary + 1], rounds = wordsBack[summary + 2];
      assert.equal(left, 0, `${c.name}: bodies left uncoloured`);
      assert.equal(rounds, cpu.rounds, `${c.name}: rounds used`);
      assert.equal(colours, Math.max(...cpu.colour) + 1, `${c.name}: colour count`);
      const seen = new Uint8Array(n);
      for (let k = 0; k < colours; k++) {
        const start = wordsBack[colourInfo + 2 * k], count = wordsBack[colourInfo + 2 * k + 1];
        assert.equal(wordsBack[colourInfo + 2 * K + 3 * k], Math.ceil(count / 64), `${c.name}: colour ${k}'s workgroups`);
        for (let e = start; e < start + count; e++) {
          const b = wordsBack[order + e];
          assert.equal(colour[b], k, `${c.name}: body ${b} listed under colour ${k}`);
          seen[b]++;
        }
      }
      for (let b = 0; b < n; b++) assert.equal(seen[b], c.active[b], `${c.name}: body ${b} listed ${seen[b]} times`);
      let maxDegree = 0;
      for (let b = 0; b < n; b++) maxDegree = Math.max(maxDegree, new Set(c.neighbours.subarray(c.offsets[b], c.offsets[b + 1]).filter((j) => c.active[j] && j !== b)).size);
      assert.ok(colours <= maxDegree + 1, `${c.name}: ${colours} colours for degree ${maxDegree} (greedy: at most Δ + 1)`);
      t.diagnostic(`${c.name}, ${colouring.loop ? 'one workgroup' : 'dispatched rounds'}: ${n} bodies (${n - c.active.reduce((s, x) => s + x, 0)} fixed), degree ≤ ${maxDegree}: ${colours} colours in ${rounds} rounds (of at most ${colouring.rounds}), none left, no clash`);
    }
  } finally {
    gpu.device.destroy();
  }
});

/*
 * A body whose neighbours already hold all 32 colours cannot be coloured: it is left (counted in the
 * summary, in no colour: the solver reports it), and the others are still coloured without a clash. A
 * star of 33 bodies fully joined (the complete graph K33: every body has 32 neighbours) needs 33 colours.
 */
test('the GPU body colouring leaves and counts a body that finds no colour of 32, as its CPU twin does', async () => {
  const gpu = await acquireGpu();
  try {
    const n = 33, offsets = new Int32Array(n + 1), neighbours: number[] = [];
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) if (j !== i) neighbours.push(j);
      offsets[i + 1] = neighbours.length;
    }
    const activeFlags = new Uint8Array(n).fill(1);
    const cpu = bodyColoursParallel(n, activeFlags, offsets, Int32Array.from(neighbours));
    assert.equal(cpu.left, 1, 'K33 in 32 colours: one body left');
    const K = BODY_COLOUR_LIMIT, adjacency = 0, lists = n + 1, active = lists + neighbours.length, colourInfo = active + n, order = colourInfo + 5 * K, summary = order + n;
    const words = new Uint32Array(summary + BODY_SUMMARY_WORDS);
    for (let i = 0; i <= n; i++) words[i] = lists + offsets[i];
    words.set(neighbours, lists);
    words.set(activeFlags, active);
    // both ways the rounds are recorded: dispatched one by one (loop capacity 0), in one workgroup (the default here)
    for (const loopCapacity of [0, undefined]) {
      const graph = gpu.device.createBuffer({ size: words.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      gpu.device.queue.writeBuffer(graph, 0, words);
      const colouring = await GpuBodyColouring.create(gpu.device, graph, { bodyCount: n, adjacency, active, colourInfo, order, summary }, undefined, loopCapacity);
      const encoder = gpu.device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      colouring.record(pass);
      pass.end();
      gpu.device.queue.submit([encoder.finish()]);
      const [back, colourBack] = (await readBuffers(gpu.device, [graph, colouring.colourBuffer])).map((b) => new Uint32Array(b));
      const way = colouring.loop ? 'one workgroup' : 'dispatched rounds';
      colouring.destroy();
      graph.destroy();
      assert.deepEqual(Array.from(colourBack, (w) => (w >= BODY_LEFT ? -2 : w & 255)), Array.from(cpu.colour), way);
      assert.equal(back[summary], 32, `colours (${way})`);
      assert.equal(back[summary + 1], 1, `bodies left (${way})`);
    }
  } finally {
    gpu.device.destroy();
  }
});

/*
 * avbd-gpu's own colouring on a joint grid with loops (the scene of three-avbd's finding, four corners
 * pinned to the world): read back after the first frame, no joint joins two dynamic bodies of one colour,
 * the world anchor is never coloured, and it is the CPU twin's (what avbd-cpu runs beside it).
 */
test('avbd-gpu colours a joint grid on the GPU with zero clashes, as its CPU twin does', async () => {
  const gpu = await acquireGpu();
  try {
    const world: WorldDesc = loadRigidScene('joint-grid', { columns: 6, rows: 5 }).world;
    const s = await AvbdGpuSolver.create(world, {}, gpu);
    await s.step(1);
    const colouring = (s as unknown as { colouring: GpuBodyColouring }).colouring;
    const words = new Uint32Array((await readBuffers(gpu.device, [colouring.colourBuffer]))[0]);
    const colour = Array.from(words, (w) => (w === BODY_INACTIVE ? -1 : w & 255));
    const n = colour.length;
    assert.equal(colour[n - 1], -1, 'the world anchor (fixed) takes no colour');
    for (const [k, c] of world.constraints.entries()) {
      if (c.bodyB === null || c.bodyB === undefined) continue;
      assert.notEqual(colour[c.bodyA], colour[c.bodyB], `constraints[${k}] joins bodies ${c.bodyA} and ${c.bodyB} of colour ${colour[c.bodyA]}`);
    }
    const cpu = new AvbdCpuSolver(world, {}, { colouring: 'parallel' });
    await cpu.step(1);
    assert.deepEqual(colour, Array.from((cpu as unknown as { colouring: { colour: Int32Array } }).colouring.colour.subarray(0, n)));
    s.destroy();
  } finally {
    gpu.device.destroy();
  }
});

/*
 * avbd-gpu against avbd-cpu on contact scenes (the same colouring, so the same order of updates), within
 * the bound above (δ with the narrow phase's E): a small pyramid (10 boxes on two below each, 22 pairs,
 * 88 points: normal rows and stuck friction pairs carrying the load) and the friction ramp (five boxes: three
 * stuck, two sliding, disc 2's secant stiffness) and heavy-on-light (a box 100 times heavier than the two
 * it rests on: the light ones' schedule carries the island's heaviest mass, found by the GPU's union–find
 * each step; with the islands left out, avbd-gpu parts from avbd-cpu by 1.9 mm at frame 1, far beyond the
 * bound), over their first frames, before chaos could part them.
 */
test('avbd-gpu agrees with avbd-cpu within the f32 bound on contacts: a small pyramid, the friction ramp, heavy on light, joints with contacts', async (t) => {
  const gpu = await acquireGpu();
  try {
    // joints and contacts together: a light box on the ground, a rod (distance joint) to a box 50 times
    // heavier beside it, a third box resting on the light one; the light box's schedule carries the heavy
    // one's mass through the joint (the islands join joints and contacts: without the joints' edges
    // avbd-gpu parts from avbd-cpu by 1.8 cm at frame 5)
    const box = (x: number, y: number, density: number) => ({ shape: { type: 'box' as const, halfExtents: [0.5, 0.5, 0.5] as [number, number, number] }, density, position: [x, y, 0] as [number, number, number] });
    const jointed: WorldDesc = {
      gravity: [0, -9.81, 0],
      bodies: [{ shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] }, box(0, 0.5, 1000), box(2.2, 0.5, 50000), box(0.1, 1.5, 1000)],
      constraints: [{ type: 'distance', bodyA: 1, bodyB: 2, anchorA: [0.5, 0, 0], anchorB: [-0.5, 0, 0] }],
    };
    const worlds: [string, WorldDesc][] = [
      ['pyramid', loadRigidScene('pyramid', { base: 4 }).world],
      ['friction-ramp', loadRigidScene('friction-ramp', {}).world],
      ['heavy-on-light', loadRigidScene('heavy-on-light', {}).world],
      ['rod to a heavy box, a box on top', jointed],
    ];
    for (const [name, world] of worlds) {
      const { cpu, gpuSolver } = await compare(t, gpu, name, world, [1, 3, 5]);
      t.diagnostic(`${name}: ${JSON.stringify(gpuSolver.contactStats())}, body colours ${JSON.stringify(gpuSolver.lastColours)}`);
      cpu.destroy();
      gpuSolver.destroy();
    }
  } finally {
    gpu.device.destroy();
  }
});

/*
 * Restitution on the GPU (the pipeline's cs_restitution, after av_inertia) against avbd-cpu's (the shared
 * contact solver's collision propagation, in the GPU's colour order: ContactSolver.colourOrder), within the
 * same f32 bound: on the ground, a sphere with e = 1 struck at 3 m/s in the first frame, one with e = 0.5 at
 * 2 m/s in the third, one with e = 0 (no collision: the hard contact stops it), and a flat box with e = 0.5
 * (a manifold of four points, their collisions solved together) in the second; frames 1, 3 and 6 (before,
 * during and after the bounces). The bound holds the collisions too: a collision v⁺ = v⁻ + M⁻¹ J_nᵀ P
 * turns the normal velocity's error into e (≤ 1) times itself (the point's v_n⁺ = −e v_n⁻) and adds its own
 * f32 rounding, a few ε |v| (1e-7 m/s here, against δv(1) ≈ 1e-3 m/s); each point's collision test
 * (s₀ + h ṽ_n < 0, the approach against the 0.1 m/s threshold) is kept far from its edge (gaps of 2 to 6 cm
 * against ṽ h of 3 to 5 cm). Without the GPU's restitution stage the struck sphere would part from
 * avbd-cpu by (1 + e) · 3 m/s in its velocity at frame 1.
 */
test('avbd-gpu agrees with avbd-cpu within the f32 bound on a bounce: spheres with e = 1, 0.5 and 0, a box with e = 0.5', async (t) => {
  const gpu = await acquireGpu();
  try {
    const sphere = (x: number, y: number, vy: number, e: number) => ({ shape: { type: 'sphere' as const, radius: 0.1 }, density: 1000, position: [x, y, 0] as [number, number, number], linearVelocity: [0, vy, 0] as [number, number, number], restitution: e });
    const world: WorldDesc = {
      gravity: [0, -9.81, 0],
      bodies: [
        { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
        sphere(-1, 0.12, -3, 1),
        sphere(0, 0.2, -2, 0.5),
        sphere(1, 0.12, -3, 0),
        { shape: { type: 'box', halfExtents: [0.1, 0.1, 0.1] }, density: 1000, position: [2, 0.16, 0], linearVelocity: [0, -3, 0], restitution: 0.5 },
      ],
      constraints: [],
    };
    const { cpu, gpuSolver } = await compare(t, gpu, 'bounce', world, [1, 3, 6]);
    // the bounces happened (else the comparison says nothing of restitution): the e = 1 sphere rising at frame 6
    const s = await cpu.snapshot();
    assert.ok(s.linearVelocity[4] > 2, `the e = 1 sphere moves at ${s.linearVelocity[4]} m/s at frame 6`);
    cpu.destroy();
    gpuSolver.destroy();
  } finally {
    gpu.device.destroy();
  }
});

/*
 * avbd-gpu's contacts on analytic cases (at its registry defaults on these scenes: 10 iterations, one step
 * per frame, sleeping off), shorter than test/contacts.test.ts's runs for the CPU solvers (SwiftShader):
 *  - friction ramp, θ = 0.25 rad (tan θ = 0.255), pair μ 0.75, 0.5, 0.35, 0.1, 0: a box with tan θ > μ
 *    slides with a = g (sin θ − μ cos θ) (Coulomb, whatever its points do inside), measured from the
 *    velocity along the slope at 0.5 s and 1.0 s, within 1 % (the 3 % for the velocity solvers;
 *    implicit Euler keeps a constant acceleration exactly: measured 0.01 %); one with tan θ < μ moves less
 *    than 1 mm from 0.25 s to 1.5 s (the static anchors: measured 0);
 *  - a box at rest on the ground for 1 s: its deepest point within the 5 mm slop of the velocity
 *    solvers (AVBD's hard rows: measured 4.5e-7 m) and no sideways creep above 0.1 mm;
 *  - a stack of 5 boxes (offset ±1 cm) awake: the top box creeps less than 1 cm from 0.5 s to 2 s and no
 *    contact sinks deeper than the slop + 1 mm (test/contacts.test.ts's limits for a 10-box stack).
 */
test('avbd-gpu: a box on a slope slides with a = g(sin θ − μ cos θ) or stays; a box rests; a 5-box stack holds awake', async (t) => {
  const gpu = await acquireGpu();
  const info = findSolver('avbd-gpu')!;
  const make = (world: WorldDesc) => info.create(world, resolveOptions(info, { sleep: 0 }, world), gpu);
  try {
    const th = 0.25, g = 9.81;
    const ramp = findRigidScene('friction-ramp')!.build({ angle: th });
    const first = ramp.bodies.length - RAMP_FRICTIONS.length;
    const along = (a: Float64Array, i: number) => a[3 * i] * Math.cos(th) + a[3 * i + 1] * Math.sin(th);
    const s = await make(ramp);
    const v: Record<number, number[]> = {}, x: Record<number, number[]> = {};
    for (let f = 1; f <= 90; f++) {
      await s.step(1);
      if (f === 15 || f === 30 || f === 60 || f === 90) {
        const sn = await s.snapshot();
        v[f] = RAMP_FRICTIONS.map((_, k) => along(sn.linearVelocity, first + k));
        x[f] = RAMP_FRICTIONS.map((_, k) => along(sn.position, first + k));
      }
    }
    s.destroy();
    RAMP_FRICTIONS.forEach((mu, k) => {
      if (Math.tan(th) > mu) {
        const a = -(v[60][k] - v[30][k]) / 0.5, expected = g * (Math.sin(th) - mu * Math.cos(th));
        t.diagnostic(`μ ${mu}: a = ${a.toFixed(4)} m/s², expected ${expected.toFixed(4)}`);
        assert.ok(Math.abs(a / expected - 1) < 0.01, `μ ${mu}: a = ${a} m/s², expected ${expected}`);
      } else {
        const drift = Math.abs(x[90][k] - x[15][k]);
        assert.ok(drift < 1e-3, `μ ${mu} > tan θ: drifted ${drift} m`);
      }
    });

    const box: WorldDesc = { gravity: [0, -g, 0], bodies: [{ shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] }, { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0.5, 0] }], constraints: [] };
    const boxMetrics = new MetricsContext(box);
    const b = await make(box);
    let deepest = 0, last: Snapshot | null = null;
    for (let f = 1; f <= 60; f++) {
      await b.step(1);
      last = await b.snapshot();
      deepest = Math.max(deepest, boxMetrics.measure(last).maxPenetration ?? NaN);
    }
    b.destroy();
    const creep = Math.hypot(last!.position[3], last!.position[5]);
    t.diagnostic(`box at rest: deepest ${deepest.toExponential(2)} m, creep ${creep.toExponential(2)} m`);
    assert.ok(deepest <= CONTACT_SLOP, `penetration ${deepest} m`);
    assert.ok(creep < 1e-4, `crept ${creep} m`);

    const stack = findRigidScene('vertical-stack')!.build({ boxes: 5 });
    const top = stack.bodies.length - 1;
    const stackMetrics = new MetricsContext(stack);
    const st = await make(stack);
    let at: number[] = [], deep = 0, end: Snapshot | null = null;
    for (let f = 1; f <= 120; f++) {
      await st.step(1);
      if (f < 30) continue;
      end = await st.snapshot();
      if (f === 30) at = Array.from(end.position.subarray(3 * top, 3 * top + 3));
      deep = Math.max(deep, stackMetrics.measure(end).maxPenetration ?? NaN);
    }
    st.destroy();
    const p = end!.position;
    const drift = Math.hypot(p[3 * top] - at[0], p[3 * top + 1] - at[1], p[3 * top + 2] - at[2]);
    t.diagnostic(`5-box stack: the top crept ${drift.toExponential(2)} m from 0.5 s to 2 s, deepest ${deep.toExponential(2)} m`);
    assert.ok(drift < 0.01, `the top box crept ${drift} m`);
    assert.ok(deep < CONTACT_SLOP + 1e-3, `a contact sank ${deep} m`);
  } finally {
    gpu.device.destroy();
  }
});
