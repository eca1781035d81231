/**
 * jacobi-cpu's and jacobi-gpu's contact substeps (solvers/jacobi/substeps.ts): the support graph it
 * reads at the start pose is the scene's geometry, exactly, and the rule gives a deeper pile more
 * substeps. (Whether a pile then holds is test/brick-wall.test.ts's and test/piles.test.ts's.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findRigidScene } from '../src/scenes/registry.js';
import { supportGraph, jacobiContactSubsteps } from '../src/solvers/jacobi/substeps.js';
import { sizeSubsteps } from '../src/solvers/softstep/cpu.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';

const build = (name: string, params: Record<string, number>) => findRigidScene(name)!.build(params);

test('the support graph is the pile\'s: a stack of n boxes is n deep, each box shared by the one below and above (the top by one); a pyramid of base b and a wall of r courses are b and r deep; a rain at its start has none', () => {
  for (const n of [1, 2, 5, 12]) {
    const g = supportGraph(build('vertical-stack', { boxes: n }));
    assert.equal(g.depth, n);
    // box k touches box k − 1 (or the ground) and box k + 1: 2 each, the top 1: (2(n − 1) + 1) / n
    assert.ok(Math.abs(g.share - (2 * n - 1) / n) < 1e-12, `stack of ${n}: s̄ ${g.share}`);
  }
  for (const base of [3, 10]) assert.equal(supportGraph(build('pyramid', { base })).depth, base);
  for (const rows of [1, 4, 10]) assert.equal(supportGraph(build('brick-wall', { rows, speed: 0 })).depth, rows);
  assert.equal(supportGraph(build('rain', { count: 200 })).depth, 0);
});

test('jacobi substeps: a deeper pile or a wider mass split takes more, never fewer than the former size rule on a pile, and the registry gives the same count to jacobi-cpu and jacobi-gpu', () => {
  const wall = (p: Record<string, number>) => jacobiContactSubsteps(build('brick-wall', { speed: 0, ...p }));
  // courses 5 → 10 → 20: more substeps; one wythe (a smaller split) fewer than two
  assert.ok(wall({ rows: 5 }) < wall({ rows: 10 }) && wall({ rows: 10 }) < wall({ rows: 20 }));
  assert.ok(wall({ layers: 1 }) < wall({ layers: 2 }));
  // the default wall: at least the 8 at which it was measured to hold (0.92 mm; 2.66 mm at 6, 476 mm at 4)
  assert.ok(wall({}) >= 8, `${wall({})}`);
  for (const [name, p] of [['pyramid', { base: 10 }], ['pyramid', { base: 10, size: 0.02, gap: 0.0004 }], ['vertical-stack', { boxes: 3, size: 0.005, offset: 0 }], ['brick-wall', {}]] as const) {
    const world = build(name, p);
    assert.ok(jacobiContactSubsteps(world) >= sizeSubsteps(world, 8), `${name} ${JSON.stringify(p)}`);
    const cpu = resolveOptions(findSolver('jacobi-cpu')!, {}, world).substeps, gpu = resolveOptions(findSolver('jacobi-gpu')!, {}, world).substeps;
    assert.equal(cpu, jacobiContactSubsteps(world));
    assert.equal(gpu, cpu);
  }
});
