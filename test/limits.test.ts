/**
 * Limits (src/model/limits.ts): sizes no machine can hold are refused before anything is
 * allocated, with the estimate and the limit; numbers a solver's arithmetic cannot carry are
 * refused (or warned about) naming the field — and the refusals stand where the physics really
 * breaks: just inside a mass bound the pendulum keeps its joint, outside it the bead free-falls.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { rigidScenes, scenes, findRigidScene } from '../src/scenes/registry.js';
import { loadScene, InputError } from '../src/scenes/load.js';
import { checkMemory, checkRanges, estimateMemory, solverArrayBytes, ulp, f32, f64, machineLimits, countScene } from '../src/model/limits.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';
import { GaussSeidelCpuSolver } from '../src/solvers/gs/cpu.js';
import type { WorldDesc } from '../src/model/world.js';
import { editableWorld } from '../src/model/packed.js';

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });
const errorLines = (stderr: string) => stderr.split('\n').filter((l) => l.trim() && !/^Warning: |^\s+at /.test(l));

v8.setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

// ───── memory ─────

test('every built-in scene counts exactly what it builds, at its defaults and at other sizes', () => {
  const others: Record<string, Record<string, number>> = {
    necklace: { chains: 3, beads: 7 },
    'hanging-chain': { beads: 4 },
    'long-chain': { beads: 9 },
    'high-mass-ratio': { beads: 3 },
    'stretched-chain': { beads: 5 },
    'joint-grid': { columns: 3, rows: 6 },
    'far-from-origin': { chains: 2, beads: 3 },
    'hinge-chain': { links: 4, limit: 0.5 },
    rope: { particles: 7 },
    cloth: { columns: 3, rows: 5 },
  };
  for (const scene of scenes)
    for (const p of [{}, others[scene.name] ?? {}]) {
      const built = scene.build(p);
      const count = scene.count(p);
      const bodies = 'particles' in built ? built.particles.length : built.bodies.length;
      assert.deepEqual([count.bodies, count.constraints], [bodies, built.constraints.length], `${scene.name} ${JSON.stringify(p)}`);
      // a scene that counts its rows counts what the rows' layout makes of its joints
      if (count.rows !== undefined && !('particles' in built)) {
        const solver = new JacobiCpuSolver(built, {});
        assert.equal(count.rows, solver.rowSolver.rows.count, `${scene.name} rows`);
        assert.equal(countScene(built).rows, solver.rowSolver.rows.count, `${scene.name}: countScene's rows`);
      }
    }
});

test('chains=1e9 and chains=1e308 are refused before anything is built, with the estimate and the limit', () => {
  const necklace = findRigidScene('necklace')!;
  for (const chains of [1e9, 1e308]) {
    const t0 = performance.now();
    assert.throws(
      () => necklace.build({ chains }),
      (e: Error) => e instanceof InputError && /needs (about [\d.]+ TB|more than 1\.8e308 bytes) of memory \(arrays [^)]*\), beyond the [\d.]+ [kMG]?B this machine has left/.test(e.message),
    );
    assert.ok(performance.now() - t0 < 100, `refused in ${performance.now() - t0} ms`);
  }
  // the estimate: 4e10 bodies and joints, packed as they are built (model/packed.ts) at 29 + 60 B ≈ 3.6 TB
  const est = estimateMemory(necklace.count({ chains: 1e9 }));
  assert.equal(est.heap, 0);
  assert.equal(est.offHeap, 4e10 * (29 + 60));
});

test('the command line refuses a necklace of 1e9 chains in one line, exit 2, in well under the 40 s it used to run', () => {
  const t0 = Date.now();
  const r = cli('run', '--scene', 'necklace', '--param', 'chains=1e9', '--solver', 'jacobi-cpu', '--frames', '1');
  assert.equal(r.status, 2, r.stderr);
  const lines = errorLines(r.stderr);
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^solverlab: scene 'necklace' with chains=1000000000 \(40,000,000,000 bodies, 40,000,000,000 constraints\) needs about [\d.]+ TB of memory under jacobi-cpu \(arrays [\d.]+ TB\), beyond the [\d.]+ GB this machine has left$/);
  assert.ok(Date.now() - t0 < 10_000, `${Date.now() - t0} ms`);
  const half = cli('run', '--scene', 'necklace', '--param', 'chains=2.5', '--frames', '1');
  assert.equal(half.status, 2);
  assert.match(half.stderr, /parameter 'chains' must be an integer/);
});

test('a scene file is counted from its arrays and refused before its bodies are checked and copied', () => {
  const dir = mkdtempSync(join(tmpdir(), 'solverlab-limits-'));
  try {
    // 20 million placeholder bodies (40 MB of JSON): as bodies they would need ≈ 7.6 GB of heap
    const file = join(dir, 'huge.json');
    writeFileSync(file, `{"format":"solverlab-scene","version":1,"gravity":[0,-9.81,0],"constraints":[],"bodies":[${'0,'.repeat(2e7 - 1)}0]}`);
    const t0 = performance.now();
    assert.throws(() => loadScene(file), (e: Error) => e instanceof InputError && e.message.startsWith(`scene file ${file} (20,000,000 bodies, 0 constraints) needs about 7.60 GB of JS heap`));
    assert.ok(performance.now() - t0 < 5000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the estimate holds the scenes' measured packed descriptions, and the CPU solvers' measured typed arrays, within 15 %", async () => {
  // collect, then let V8 finish sweeping array buffers (their memory is freed off the main thread)
  // (until two readings in a row agree: a loaded machine sweeps late)
  const settle = async () => {
    let last = NaN, same = 0;
    for (let k = 0; k < 100 && same < 2; k++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
      const now = process.memoryUsage().arrayBuffers;
      same = now === last ? same + 1 : 0;
      last = now;
    }
  };
  const alive: unknown[] = []; // measured solvers stay referenced, so none is collected inside another's measurement
  for (const [name, p] of [['necklace', { chains: 500 }], ['joint-grid', { columns: 150, rows: 150 }]] as const) {
    const scene = findRigidScene(name)!;
    const count = scene.count(p);
    // built once small first, so the builder's code is compiled (bytecode and feedback live in the heap
    // too, and a first build measured them: 118–151 kB on the necklace, flaky with what ran before)
    scene.build(name === 'necklace' ? { chains: 1 } : { columns: 2, rows: 2 });
    // packed as it is built (model/packed.ts): typed arrays, and next to nothing in the heap. The heap's
    // reading also takes whatever V8 did meanwhile (code compiled lazily, garbage swept or not yet),
    // measured from −270 to +210 kB around a build of this necklace (2026-11-27; 327 kB on the ten times larger one), whose 5 % is 89 kB: so the heap is
    // measured on a build ten times larger (5 % of it ~0.9 MB, above that noise; a description of JS
    // objects, ≥ 40 B a body, would add ≥ 8 MB there), and the typed arrays on this one
    const large: Record<string, number> = 'chains' in p ? { chains: 10 * p.chains } : { columns: Math.round(Math.sqrt(10) * p.columns), rows: Math.round(Math.sqrt(10) * p.rows) };
    await settle();
    const heapBefore = process.memoryUsage().heapUsed;
    let big: unknown = scene.build(large);
    await settle();
    const heap = process.memoryUsage().heapUsed - heapBefore, bigEstimate = estimateMemory(scene.count(large));
    big = null;
    await settle();
    const arrays0 = process.memoryUsage().arrayBuffers;
    const world = scene.build(p);
    await settle();
    const packed = process.memoryUsage().arrayBuffers - arrays0;
    const est = estimateMemory(count);
    assert.equal(est.heap, 0);
    assert.ok(big === null && heap < 0.05 * bigEstimate.offHeap, `${name} description (${JSON.stringify(large)}): ${heap} B of heap, limit ${0.05 * bigEstimate.offHeap} B`);
    assert.ok(Math.abs(packed / est.offHeap - 1) < 0.15, `${name} description: measured ${packed} B of typed arrays, estimated ${est.offHeap} B`);
    for (const [id, make] of [
      ['jacobi-cpu', () => new JacobiCpuSolver(world)],
      ['gs-cpu', () => new GaussSeidelCpuSolver(world)],
      ['xpbd-cpu', () => new XpbdCpuSolver(world)],
    ] as const) {
      await settle();
      const ab0 = process.memoryUsage().arrayBuffers;
      alive.push(make());
      await settle(); // the arrays a growing row set left behind
      const arrays = process.memoryUsage().arrayBuffers - ab0;
      const expected = solverArrayBytes(count, id);
      assert.ok(Math.abs(arrays / expected - 1) < 0.15, `${name} ${id}: measured ${arrays} B of typed arrays, estimated ${expected} B`);
    }
  }
});

test('a size past the wasm32 address space is refused for Rapier only', () => {
  const count = { kind: 'rigid' as const, bodies: 3e6, constraints: 3e6 };
  const roomy = { heap: 1e15, memory: 1e15, wasm: machineLimits().wasm };
  assert.doesNotThrow(() => checkMemory('x', count, 'jacobi-cpu', false, roomy));
  assert.throws(() => checkMemory('x', count, 'rapier', false, roomy), /wasm memory under rapier, beyond the 4\.29 GB a wasm32 module can address/);
});

// ───── arithmetic ─────

test('ulp is the spacing of f32 and f64 numbers (checked against Math.fround and f64 addition)', () => {
  for (const x of [1e-3, 0.05, 1, 425, 1e4, 16384, 3e7]) {
    const u32 = ulp(x, f32);
    const y = Math.fround(x);
    assert.notEqual(Math.fround(y + u32), y, `${x}`);
    assert.equal(Math.fround(y + u32 / 4), y, `${x}`);
    const u64 = ulp(x, f64);
    assert.notEqual(x + u64, x);
    assert.equal(x + u64 / 4, x);
  }
  assert.equal(ulp(1e4, f32), 2 ** -10); // far-from-origin: ≈ 1 mm
});

/** The pendulum with its bead's mass set to `mass` (kg): L = 0.5 m, r = 0.05 m, arm |a| = L. */
function pendulumOfMass(mass: number): WorldDesc {
  const w = editableWorld(findRigidScene('pendulum')!.build()); // built scenes are packed, read-only
  delete w.bodies[0].density;
  w.bodies[0].mass = mass;
  return w;
}
// m_min = 2 (1 + |a|²/ρ²)/∛max, ρ² = 0.4 r² (limits.ts): the lightest bead its effective mass carries
const pendulumMinMass = (max: number) => (2 * (1 + 0.25 / (0.4 * 0.05 * 0.05))) / Math.cbrt(max);

test('the density-1e-100 pendulum is refused under gs-cpu, naming the field, and the refusal is where the joint is really lost', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'solverlab-limits-'));
  try {
    const world = editableWorld(findRigidScene('pendulum')!.build());
    world.bodies[0].density = 1e-100;
    const file = join(dir, 'feather.json');
    writeFileSync(file, JSON.stringify({ format: 'solverlab-scene', version: 1, ...world }));
    const r = cli('run', '--scene', file, '--solver', 'gs-cpu', '--frames', '10');
    assert.equal(r.status, 2, r.stderr);
    const lines = errorLines(r.stderr);
    assert.equal(lines.length, 1, r.stderr);
    // the file named first, as the schema's errors name it (issue 22)
    assert.ok(lines[0].startsWith(`solverlab: ${file}: `), lines[0]);
    assert.match(lines[0], /: bodies\[0\]\.density: 1e-100 gives a mass of 5\.24e-104 kg, below the 8\.89e-101 kg gs-cpu \(f64\) can carry through constraints\[0\]'s effective mass/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // The physics behind it (the check bypassed): at the bound the pendulum swings (its bead drops
  // 2.4 mm in 1 s, as at 1 kg); 100× lighter det K overflows, K⁻¹ = 0 and the bead falls freely,
  // ½ g t² = 4.905 m in 1 s (4.987 m with the semi-implicit Euler step's extra h g t/2).
  const mMin = pendulumMinMass(f64.max);
  const drop = async (mass: number) => {
    const w = pendulumOfMass(mass);
    const s = new JacobiCpuSolver(w);
    await s.step(60);
    return w.bodies[0].position[1] - (await s.snapshot()).position[1];
  };
  const reference = await drop(1);
  assert.ok(Math.abs((await drop(mMin)) - reference) < 1e-9, 'at the bound the pendulum is the 1 kg one');
  assert.doesNotThrow(() => checkRanges(pendulumOfMass(mMin), 'gs-cpu', { dt: 1 / 60, substeps: 1 }));
  const fallen = await drop(mMin / 100);
  const t = 1, h = 1 / 60, g = 9.81;
  assert.ok(Math.abs(fallen - (0.5 * g * t * t + 0.5 * g * h * t)) < 1e-6, `free fall: dropped ${fallen} m`);
  assert.throws(() => checkRanges(pendulumOfMass(mMin / 100), 'gs-cpu', { dt: 1 / 60, substeps: 1 }), /bodies\[0\]\.mass: 8\.89e-103 kg is below/);
});

test('f32 bounds: a GPU solver refuses a bead under 7.2e-11 kg and a pinned one over 4.4e12 kg; f64 carries both', () => {
  const opts = { dt: 1 / 60, substeps: 1 };
  const light = pendulumMinMass(f32.max);
  assert.ok(Math.abs(light / 7.19e-11 - 1) < 1e-3);
  for (const id of ['jacobi-gpu', 'gs-gpu', 'xpbd-gpu', 'global-gpu', 'rapier']) {
    assert.doesNotThrow(() => checkRanges(pendulumOfMass(light), id, opts));
    assert.throws(() => checkRanges(pendulumOfMass(light / 10), id, opts), new RegExp(`below the 7\\.19e-11 kg ${id} \\(f32\\)`));
    assert.throws(() => checkRanges(pendulumOfMass(1e13), id, opts), new RegExp(`bodies\\[0\\]\\.mass: 1e13 kg is above the 4\\.4e12 kg ${id} \\(f32\\)`));
  }
  for (const m of [light / 10, 1e13]) assert.deepEqual(checkRanges(pendulumOfMass(m), 'jacobi-cpu', opts), []);
});

test('far from the origin: f32 solvers warn that positions are stored to 1 mm (2 % of a bead), f64 ones do not', () => {
  const far = findRigidScene('far-from-origin')!.build({ chains: 2 });
  const opts = { dt: 1 / 60, substeps: 1 };
  assert.deepEqual(checkRanges(far, 'jacobi-cpu', opts), []);
  const w = checkRanges(far, 'jacobi-gpu', opts);
  assert.equal(w.length, 1);
  assert.match(w[0], /at 10000 m from the origin jacobi-gpu \(f32\) stores positions to 9\.77e-4 m, 1\.95 % of the body's size \(0\.05 m\)/);
  // xpbd's 10 substeps: a body falls g h² = 2.72e-5 m from rest in one, under half that ulp
  assert.match(checkRanges(far, 'xpbd-gpu', { dt: 1 / 60, substeps: 10 }).join('\n'), /g·h² = 2\.72e-5 m a body falls from rest in one substep/);
  // at the origin the default scenes raise nothing
  for (const scene of rigidScenes) {
    if (scene.name === 'far-from-origin') continue;
    assert.deepEqual(checkRanges(scene.build(scene.name === 'necklace' ? { chains: 100 } : {}), 'jacobi-gpu', opts), [], scene.name);
  }
  // a bead smaller than the spacing of positions where it stands cannot be placed at all
  const tiny = findRigidScene('far-from-origin')!.build({ chains: 1, beads: 2, radius: 1e-4 });
  assert.throws(() => checkRanges(tiny, 'jacobi-gpu', opts), /bodies\[0\]\.position: at 10000 m from the origin jacobi-gpu \(f32\) stores positions to 9\.77e-4 m, not below the body's size of 1e-4 m/);
});

/*
 * Every f32 GPU solver of the registry, xpbd-gpu and avbd-gpu among them, at its own defaults (resolveOptions,
 * given the scene: its substeps set h), on a scene 10 km out that it runs: far-from-origin for the joint
 * solvers, a box resting on the ground at x = 10 km for the contact-only ones. f32 stores a coordinate there to
 * ulp(10⁴) = 2⁻¹⁰ m = 9.77e-4 m (2^(⌊log₂ 10⁴⌋ − 23)), 1.95 % of a 5 cm bead: each gets that one-line warning,
 * named with its precision, and the one on the substep's fall where g h² < ulp/2, h = (1/60 s)/substeps:
 * h < √(ulp / 2g) = 7.06e-3 s, from 3 substeps (xpbd-gpu's 10: g h² = 2.72e-5 m). The f64 CPU twins raise
 * nothing. Preflight only: no GPU needed.
 */
test('far from the origin: every GPU solver (xpbd-gpu and avbd-gpu too) warns that f32 stores positions there to 9.77e-4 m, and of the substep fall below half of it', async () => {
  const { solvers } = await import('../src/solvers/registry.js');
  const { resolveOptions } = await import('../src/solvers/solver.js');
  const joints = findRigidScene('far-from-origin')!.build({ chains: 2 });
  const box: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [
      { shape: { type: 'plane' }, fixed: true, position: [1e4, 0, 0] },
      { shape: { type: 'box', halfExtents: [0.05, 0.05, 0.05] }, density: 1000, position: [1e4, 0.05, 0] },
    ],
    constraints: [],
  };
  const gpu = solvers.filter((s) => s.device === 'gpu');
  for (const id of ['xpbd-gpu', 'avbd-gpu', 'jacobi-gpu']) assert.ok(gpu.some((s) => s.id === id), id);
  for (const info of gpu) {
    const world = info.unsupported?.(joints) == null ? joints : box;
    assert.equal(info.unsupported?.(world) ?? null, null, `${info.id} runs neither scene`);
    const options = resolveOptions(info, {}, world);
    const warnings = checkRanges(world, info.id, options);
    assert.ok(warnings.some((w) => w.includes(`at 10000 m from the origin ${info.id} (f32) stores positions to 9.77e-4 m`)), `${info.id}: ${warnings.join(' | ')}`);
    const h = options.dt / options.substeps;
    const fall = 9.81 * h * h < 2 ** -10 / 2;
    assert.equal(warnings.some((w) => w.includes(`${info.id} (f32) stores positions to 9.77e-4 m, more than twice the g·h²`)), fall, `${info.id} at ${options.substeps} substeps: ${warnings.join(' | ')}`);
    for (const w of warnings) assert.ok(!w.includes('\n'), 'one line each');
    const twin = info.id.replace(/-gpu$/, '-cpu');
    if (solvers.some((s) => s.id === twin)) assert.deepEqual(checkRanges(world, twin, resolveOptions(solvers.find((s) => s.id === twin)!, {}, world)), [], twin);
  }
});

test('far-from-origin still runs under jacobi-gpu, with its f32 warning on one line', () => {
  const r = cli('run', '--scene', 'far-from-origin', '--param', 'chains=1', '--param', 'beads=5', '--solver', 'jacobi-gpu', '--frames', '5', '--quiet');
  assert.equal(r.status, 0, r.stderr);
  const warnings = r.stderr.split('\n').filter((l) => l.startsWith('solverlab: warning:'));
  assert.equal(warnings.length, 1, r.stderr);
  assert.match(warnings[0], /jacobi-gpu \(f32\) stores positions to 9\.77e-4 m, 1\.95 % of the body's size/);
  assert.match(r.stdout, /frames\s+5 /);
});

test('a joint whose mass ratio passes 1/u is warned about (f32: 1.7e7), not below', () => {
  const opts = { dt: 1 / 60, substeps: 1 };
  const hmr = findRigidScene('high-mass-ratio')!;
  assert.deepEqual(checkRanges(hmr.build({ ratio: 1e6 }), 'jacobi-gpu', opts), []);
  const w = checkRanges(hmr.build({ ratio: 1e8 }), 'jacobi-gpu', opts);
  assert.equal(w.length, 1);
  assert.match(w[0], /^constraints\[10\]: bodies\[10\] is 1e8 times as heavy as bodies\[9\], beyond the 1\/u = 1\.68e7 jacobi-gpu \(f32\) resolves/);
  assert.deepEqual(checkRanges(hmr.build({ ratio: 1e8 }), 'jacobi-cpu', opts), []);
});
