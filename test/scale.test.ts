/**
 * Scale: the necklace at a million beads through the command line, on the CPU path and on a GPU
 * solver (SwiftShader here), one frame each, so a per-element spread, a per-element recursion or a
 * JS object per body on the host fails CI rather than a lent GPU's first call (issue: every
 * solver failed above ~125k bodies with "Maximum call stack size exceeded").
 *
 * What is checked is physics and honesty, not only "it ran":
 *   - the necklace's chains are independent (no collisions, a swing never reaches the next chain):
 *     chain 0 of the million-bead necklace moves exactly as a necklace of that one chain does
 *     (jacobi-cpu: bit for bit; jacobi-gpu, f32: to a few ulp of its coordinates);
 *   - the memory estimate behind the refusal (model/limits.ts) is the run's measured peak resident
 *     memory within ±15 %, at two sizes, for the CPU and the GPU solver.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRigidScene } from '../src/scenes/registry.js';
import { checkMemory, estimateMemory } from '../src/model/limits.js';
import { InputError } from '../src/scenes/load.js';
import { GpuSolverBase } from '../src/solvers/gpu-base.js';

interface RunJson {
  bodies: number;
  violation: { finalMax: number | null };
  memory: { estimatedBytes: number; peakResidentBytes: number };
  series: { trace?: { [body: string]: number[] } }[];
}

function run(solver: string, chains: number): RunJson {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/bin.ts', 'run', '--scene', 'necklace', '--param', `chains=${chains}`, '--solver', solver, '--frames', '1', '--trace', '0,39', '--json', '-', '--quiet'],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  assert.equal(r.status, 0, `${solver} chains=${chains}: ${r.stderr}`);
  return JSON.parse(r.stdout) as RunJson;
}

const traced = (rec: RunJson) => rec.series[rec.series.length - 1].trace as unknown as { [k: string]: number[] };

test('a million-bead necklace steps one frame on jacobi-cpu and on jacobi-gpu; chain 0 moves as it does alone; memory as estimated', () => {
  for (const solver of ['jacobi-cpu', 'jacobi-gpu']) {
    const alone = run(solver, 1);
    const small = run(solver, 2_500); // 100k beads: the estimate's second size
    const big = run(solver, 25_000); // 1M beads
    assert.equal(big.bodies, 1_000_000);
    assert.ok(big.violation.finalMax !== null && big.violation.finalMax < 1e-3, `${solver}: violation ${big.violation.finalMax}`);
    for (const body of ['0', '39']) {
      const [a, b] = [traced(alone)[body], traced(big)[body]];
      if (solver === 'jacobi-cpu') assert.deepEqual(b, a, `${solver} body ${body}`);
      else for (let d = 0; d < 3; d++) assert.ok(Math.abs(b[d] - a[d]) <= 4 * 2 ** -23 * Math.max(1, Math.abs(a[d])), `${solver} body ${body}[${d}]: ${b[d]} alone ${a[d]}`);
    }
    for (const [n, rec] of [['100k', small], ['1M', big]] as const) {
      const { estimatedBytes: est, peakResidentBytes: peak } = rec.memory;
      assert.ok(Math.abs(est / peak - 1) <= 0.15, `${solver} ${n}: estimated ${(est / 1e6).toFixed(0)} MB, peak ${(peak / 1e6).toFixed(0)} MB`);
    }
  }
});

test('past the machine: run, compare, bench and view refuse a 40M-bead necklace in one line, exit 2, nothing written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'solverlab-scale-'));
  try {
    const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8', timeout: 60_000 });
    const chains = 'chains=1000000'; // 40M beads: ≈ 130 GB under jacobi-gpu, more than this or a CI machine has
    const cases: [string, string[], string][] = [
      ['run', ['run', '--scene', 'necklace', '--param', chains, '--solver', 'jacobi-gpu', '--frames', '1', '--json', join(dir, 'run.json')], join(dir, 'run.json')],
      ['compare', ['compare', '--scenes', 'necklace', '--param', chains, '--solvers', 'jacobi-cpu,jacobi-gpu', '--frames', '1', '--out', join(dir, 'cmp')], join(dir, 'cmp')],
      ['bench', ['bench', '--sizes', '40000000', '--solvers', 'jacobi-gpu', '--frames', '1', '--out', join(dir, 'bench.json')], join(dir, 'bench.json')],
      ['view', ['view', '--scene', 'necklace', '--param', chains, '--solver', 'jacobi-gpu', '--port', '0'], ''],
    ];
    for (const [name, args, output] of cases) {
      const t0 = Date.now();
      const r = cli(...args);
      assert.equal(r.status, 2, `${name}: ${r.stderr}`);
      const lines = r.stderr.split('\n').filter((l) => l.trim());
      assert.equal(lines.length, 1, `${name}: ${r.stderr}`);
      assert.match(lines[0], /^solverlab: .*\(40,000,000 bodies, 40,000,000 constraints\) needs about [\d.]+ GB of memory under jacobi-(gpu|cpu) \(arrays [\d.]+ GB(, GPU buffers [\d.]+ GB)?\), beyond the [\d.]+ GB this machine has left$/, name);
      assert.equal(r.stdout, '', name);
      if (output) assert.ok(!existsSync(output), `${name} wrote ${output}`);
      assert.ok(Date.now() - t0 < 20_000, `${name}: refused after ${Date.now() - t0} ms`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the size check at 4M and 10M beads: within a 128 GB GPU host, refused where memory is short, naming the parts', () => {
  const necklace = findRigidScene('necklace')!;
  for (const [beads, solver] of [[4e6, 'jacobi-cpu'], [4e6, 'jacobi-gpu'], [1e7, 'jacobi-gpu'], [1e7, 'gs-gpu'], [1e7, 'xpbd-gpu']] as const) {
    const count = necklace.count({ chains: beads / 40 });
    const est = estimateMemory(count, solver);
    // measured: ≈ 2.0–2.9 kB per bead and joint at 1M (test above); the estimate scales linearly in the counts
    assert.ok(est.total > 1.5e3 * beads && est.total < 4e3 * beads, `${solver} ${beads}: ${est.total}`);
    assert.doesNotThrow(() => checkMemory('x', count, solver, false, { heap: 4e9, memory: 128e9, wasm: 2 ** 32 }));
    assert.throws(
      () => checkMemory('x', count, solver, false, { heap: 4e9, memory: est.total * 0.99, wasm: 2 ** 32 }),
      (e: Error) => e instanceof InputError && /^x \([\d,]+ bodies, [\d,]+ constraints\) needs about [\d.]+ GB of memory under \S+ \((JS heap [\d.]+ [MG]B, )?arrays [\d.]+ GB(, GPU buffers [\d.]+ GB)?\), beyond the [\d.]+ GB this machine has left$/.test(e.message),
    );
  }
});

test("a buffer past the adapter's binding limit is refused naming the buffer and the limit (InputError: one line, exit 2)", () => {
  // the check itself, on a stand-in for a solver whose device has SwiftShader's 1 GiB binding limit
  const solver = { device: { limits: { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 32 } }, adapter: { name: 'test adapter' } };
  const check = (GpuSolverBase.prototype as unknown as { checkLimits(this: unknown, sizes: Record<string, number>): void }).checkLimits;
  assert.doesNotThrow(() => check.call(solver, { pose: 2 ** 30 }));
  assert.throws(
    () => check.call(solver, { pose: 1000, row_jacobian: 48 * 30e6 }), // a 10M-bead necklace's Jacobian rows
    (e: Error) => e instanceof InputError && e.message === "scene too big for this adapter (test adapter): buffer 'row_jacobian' needs 1.44 GB (1440000000 bytes), beyond its maxStorageBufferBindingSize of 1.07 GB",
  );
});
