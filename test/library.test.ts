/**
 * The library as a user meets it: a built-in scene's `build` merges what it is given with the
 * defaults (or refuses, naming the parameter); the published type declarations compile in a
 * strict consumer without skipLibCheck; the modules form no import cycle through the metrics.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, mkdirSync, symlinkSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join, dirname, resolve, relative } from 'node:path';
import { scenes, findRigidScene, buildScene, InputError, JacobiCpuSolver, runSolver } from '../src/index.js';
import { massProperties } from '../src/model/world.js';

const root = resolve(import.meta.dirname, '..');

test("findRigidScene('necklace').build({ chains: 2 }) is the necklace of 2 chains, defaults filled in", () => {
  const necklace = findRigidScene('necklace')!;
  const world = necklace.build({ chains: 2 });
  // 2 chains × 40 beads (the default), each bead a 5 cm sphere of water: m = 1000 · 4/3 π 0.05³ = 0.5236 kg
  assert.equal(world.bodies.length, 80);
  assert.equal(world.constraints.length, 80);
  for (const b of world.bodies) assert.ok(Math.abs(massProperties(b).mass - (1000 * 4 * Math.PI * 0.05 ** 3) / 3) < 1e-12);
  // each chain's beads touch: consecutive centres 2r = 0.1 m apart along +x
  assert.ok(Math.abs(world.bodies[1].position[0] - world.bodies[0].position[0] - 0.1) < 1e-12);
  assert.deepEqual(world, buildScene(necklace, { chains: 2 }));
  // every scene builds from nothing at all, as from its full set of defaults
  for (const scene of scenes) assert.deepEqual(scene.build(), buildScene(scene, {}), scene.name);
});

test('build refuses what it cannot use, naming it', () => {
  const necklace = findRigidScene('necklace')!;
  assert.throws(() => necklace.build({ chain: 2 }), (e: Error) => e instanceof InputError && /scene 'necklace' has no parameter 'chain' \(it has: chains, beads/.test(e.message));
  assert.throws(() => necklace.build({ chains: 2.5 }), (e: Error) => e instanceof InputError && /parameter 'chains' must be an integer/.test(e.message));
  assert.throws(() => necklace.build({ chains: 0 }), /parameter 'chains' must be ≥ 1/);
  assert.throws(() => necklace.build({ radius: NaN }), /parameter 'radius' must be a finite number/);
});

/** Relative import graph of src/ (static `import`/`export … from`, type-only ones included). */
function importCycles(dir: string): string[][] {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  walk(dir);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const deps = [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/g)].map((m) => resolve(dirname(f), m[1].replace(/\.js$/, '.ts')));
    graph.set(f, deps.filter((d) => graph.has(d) || files.includes(d)));
  }
  const cycles: string[][] = [];
  const state = new Map<string, number>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 1);
    stack.push(f);
    for (const d of graph.get(f) ?? []) {
      if (state.get(d) === 1) cycles.push(stack.slice(stack.indexOf(d)).map((x) => relative(root, x)));
      else if (!state.get(d)) visit(d);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of files) if (!state.get(f)) visit(f);
  return cycles;
}

test('no import cycle runs through the metrics (metrics/metrics.ts ⇄ particles/metrics.ts)', () => {
  const cycles = importCycles(join(root, 'src'));
  const through = cycles.filter((c) => c.some((f) => f.includes('metrics')));
  assert.deepEqual(through, []);
  // the finder finds a cycle where there is one
  const dir = mkdtempSync(join(tmpdir(), 'solverlab-cycle-'));
  try {
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport type A = B;\n");
    writeFileSync(join(dir, 'b.ts'), "import { a } from './a.js';\nexport type B = number;\n");
    assert.equal(importCycles(dir).length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the published declarations compile in a strict consumer (skipLibCheck off), and its code runs against the build', async () => {
  const npm = spawnSync('npm', ['run', 'build'], { cwd: root, encoding: 'utf8' });
  assert.equal(npm.status, 0, npm.stdout + npm.stderr);
  // every package the declarations name is one a consumer installs with us (a dependency)
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const named = new Set<string>();
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.d.ts'))
        for (const m of readFileSync(p, 'utf8').matchAll(/(?:from\s+|import\(|reference types=)['"]([^'"./][^'"]*)['"]/g)) named.add(m[1].startsWith('@') ? m[1].split('/').slice(0, 2).join('/') : m[1].split('/')[0]);
    }
  };
  walk(join(root, 'dist'));
  for (const name of named) if (!name.startsWith('node:')) assert.ok(pkg.dependencies[name], `the declarations name '${name}', which is not a dependency`);
  assert.ok(named.has('@webgpu/types'), 'index.d.ts references @webgpu/types');

  const dir = mkdtempSync(join(tmpdir(), 'solverlab-consumer-'));
  try {
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(root, join(dir, 'node_modules', 'solverlab'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, outDir: 'out' }, files: ['main.ts'] }),
    );
    // the README's library example, and WebGPU types reached through our declarations
    writeFileSync(
      join(dir, 'main.ts'),
      [
        "import { findRigidScene, JacobiCpuSolver, runSolver, type GpuContext } from 'solverlab';",
        "const world = findRigidScene('necklace')!.build({ chains: 2, beads: 5 });",
        'const solver = new JacobiCpuSolver(world, { iterations: 8 });',
        'const result = await runSolver(solver, world, { frames: 60 });',
        'export const device: ((gpu: GpuContext) => GPUDevice) = (gpu) => gpu.device;',
        'console.log(JSON.stringify({ bodies: world.bodies.length, frames: result.frames, hash: result.finalStateHash }));',
      ].join('\n'),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    assert.equal(tsc.status, 0, `consumer tsc: ${tsc.stdout}${tsc.stderr}`);
    const run = spawnSync(process.execPath, [join(dir, 'out', 'main.js')], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout.trim().split('\n').pop()!);
    // the built library steps exactly as the source does: the same final state, bit for bit
    const world = findRigidScene('necklace')!.build({ chains: 2, beads: 5 });
    const here = await runSolver(new JacobiCpuSolver(world, { iterations: 8 }), world, { frames: 60 });
    assert.deepEqual(out, { bodies: 10, frames: 60, hash: here.finalStateHash });
    assert.match(String(out.hash), /^[0-9a-f]{16}$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the bundle starts itself again with ¾ of the machine as heap (cli/heap.ts); statuses and output pass through', () => {
  // dist/solverlab/solverlab.mjs: built by the test above
  const bundle = join(root, 'dist', 'solverlab', 'solverlab.mjs');
  const env = { ...process.env, NODE_OPTIONS: '' };
  const r = spawnSync(process.execPath, [bundle, 'run', '--scene', 'pendulum', '--solver', 'jacobi-cpu', '--frames', '2', '--json', '-', '--quiet'], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  const heap = JSON.parse(r.stdout).memory.heapLimitBytes;
  const target = 0.75 * totalmem();
  assert.ok(heap > 0.9 * target && heap < 1.1 * target, `heap limit ${heap} B, ¾ of the machine ${target} B`);
  // a user's own heap flag is kept: no second start
  const own = spawnSync(process.execPath, ['--max-old-space-size=1000', bundle, 'run', '--scene', 'pendulum', '--solver', 'jacobi-cpu', '--frames', '2', '--json', '-', '--quiet'], { encoding: 'utf8', env });
  assert.ok(JSON.parse(own.stdout).memory.heapLimitBytes < 1.2e9);
  // bad input: the child's one line and exit status 2
  const bad = spawnSync(process.execPath, [bundle, 'run', '--scene', 'pendulum', '--frames', 'x'], { encoding: 'utf8', env });
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
});

test("the docs' known failures are what the solvers do: each 'diverges at frame N' claim, run", async () => {
  // the scene rows are in docs/scenes.md, the solver rows in docs/solvers.md (README.md links to both)
  const scenesDoc = readFileSync(join(root, 'docs', 'scenes.md'), 'utf8');
  const solversDoc = readFileSync(join(root, 'docs', 'solvers.md'), 'utf8');
  const sceneRow = (first: string) => scenesDoc.split('\n').find((l) => l.startsWith(`| ${first} |`)) ?? '';
  const solverRow = (first: string) => solversDoc.split('\n').find((l) => l.startsWith(`| ${first} |`)) ?? '';
  // [scene, solver, frame, the words the scene row and the solver row use]
  const claims: [string, string, number, string, string][] = [
    ['joint-grid', 'jacobi-cpu', 5, '`jacobi-cpu` diverges at frame 5', '`joint-grid` (frame 5)'],
    ['high-mass-ratio', 'jacobi-cpu', 75, '`jacobi-*` diverge at frame 75', '`high-mass-ratio` (75)'],
    ['hanging-chain', 'jacobi-cpu', 112, '`jacobi-*` diverge at frame 112', '`hanging-chain` (112'],
    ['long-chain', 'jacobi-cpu', 117, '`jacobi-*` diverge at frame 117', '`long-chain` (117)'],
    ['stretched-chain', 'jacobi-cpu', 61, '`jacobi-cpu` diverges at frame 61', '`stretched-chain` (61)'],
    ['high-mass-ratio', 'gs-cpu', 80, '`gs-*` at 80', '`high-mass-ratio` (80)'],
    ['long-chain', 'gs-cpu', 113, '`gs-*` at 113', '`long-chain` (113)'],
  ];
  const { findSolver, resolveOptions } = await import('../src/index.js');
  for (const [scene, solverId, frame, sceneWords, solverWords] of claims) {
    assert.ok(sceneRow(`\`${scene}\``).includes(sceneWords), `docs/scenes.md row ${scene}: '${sceneWords}'`);
    assert.ok(solverRow(`\`${solverId}\``).includes(solverWords), `docs/solvers.md row ${solverId}: '${solverWords}'`);
    const world = findRigidScene(scene)!.build();
    const info = findSolver(solverId)!;
    const solver = await info.create(world, resolveOptions(info));
    const result = await runSolver(solver, world, { frames: frame + 1 });
    solver.destroy();
    assert.equal(result.diverged?.frame, frame, `${solverId} on ${scene}: ${JSON.stringify(result.diverged)}`);
  }
  // and a failure the docs say was mended: pgs-cpu held the cantilever once its joints' Baumgarte term became a
  // split impulse (it diverged at frame 28 before); 120 frames are four times that
  {
    assert.ok(sceneRow('`cantilever`').includes('`pgs-cpu` diverged at frame 28'), "docs/scenes.md row cantilever: '`pgs-cpu` diverged at frame 28'");
    assert.ok(solverRow('`pgs-cpu`').includes('nothing diverges on the joint scenes since the split impulse'), 'docs/solvers.md row pgs-cpu: nothing diverges since the split impulse');
    const world = findRigidScene('cantilever')!.build();
    const info = findSolver('pgs-cpu')!;
    const solver = await info.create(world, resolveOptions(info));
    const result = await runSolver(solver, world, { frames: 120 });
    solver.destroy();
    assert.ok(!result.diverged, `pgs-cpu on cantilever: ${JSON.stringify(result.diverged)}`);
  }
});
