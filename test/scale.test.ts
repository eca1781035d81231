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
