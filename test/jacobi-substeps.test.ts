/**
 * jacobi-cpu's and jacobi-gpu's contact substeps (solvers/jacobi/substeps.ts): the support graph it
 * reads at the start pose is the scene's geometry, exactly, and the rule gives a deeper pile more
 * substeps; and the sequential solvers' column rule (solvers/pgs/substeps.ts). (Whether a pile then holds is
 * test/brick-wall.test.ts's and test/piles.test.ts's.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findRigidScene } from '../src/scenes/registry.js';
import { supportGraph, jacobiContactSubsteps } from '../src/solvers/jacobi/substeps.js';
import { sizeSubsteps } from '../src/solvers/softstep/cpu.js';
import { columnSubsteps, columnHertz } from '../src/solvers/pgs/substeps.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';

const build = (name: string, params: Record<string, number>) => findRigidScene(name)!.build(params);

test('the support graph is the pile\'s: a stack of n boxes is n deep, each box shared by the one below and above (the top by one); a pyramid of base b and a wall of r courses are b and r deep; a rain at its start has none', () => {
  for (const n of [1, 2, 5, 12]) {
    const g = supportGraph(build('vertical-stack', { boxes: n }));
    assert.equal(g.depth, n);
    // box k (1 at the bottom) is k contacts from the ground: the mean (n + 1) / 2
    assert.ok(Math.abs(g.meanDepth - (n + 1) / 2) < 1e-12, `stack of ${n}: N̄ ${g.meanDepth}`);
    // box k touches box k − 1 (or the ground) and box k + 1: 2 each, the top 1: (2(n − 1) + 1) / n
    assert.ok(Math.abs(g.share - (2 * n - 1) / n) < 1e-12, `stack of ${n}: s̄ ${g.share}`);
  }
  for (const base of [3, 10]) assert.equal(supportGraph(build('pyramid', { base })).depth, base);
  for (const rows of [1, 4, 10]) assert.equal(supportGraph(build('brick-wall', { rows, speed: 0 })).depth, rows);
  assert.equal(supportGraph(build('rain', { count: 200 })).depth, 0);
});

test('jacobi substeps: a deeper pile takes more, never fewer than the former size rule on a pile, and the registry gives the same count to jacobi-cpu and jacobi-gpu', () => {
  const wall = (p: Record<string, number>) => jacobiContactSubsteps(build('brick-wall', { speed: 0, ...p }));
  // courses 5 → 10 → 20: more substeps; the measured piles get at least the count they held at
  assert.ok(wall({ rows: 5 }) < wall({ rows: 10 }) && wall({ rows: 10 }) < wall({ rows: 20 }));
  // (the default wall held at 8: 0.92 mm, failed at 6: 2.66 mm, at 4: 476 mm; 20 courses held at 22 and 16 for
  // one wythe, failed at 16 and 13; a stack of twelve 20 cm boxes held at 16, 1.48 mm at 12, failed at 8)
  assert.ok(wall({}) >= 8, `${wall({})}`);
  assert.ok(wall({ rows: 20 }) >= 22 && wall({ rows: 20, layers: 1 }) >= 16);
  assert.ok(jacobiContactSubsteps(build('vertical-stack', { boxes: 12, size: 0.1, offset: 0.001 })) >= 12);
  for (const [name, p] of [['pyramid', { base: 10 }], ['pyramid', { base: 10, size: 0.02, gap: 0.0004 }], ['vertical-stack', { boxes: 3, size: 0.005, offset: 0 }], ['brick-wall', {}]] as const) {
    const world = build(name, p);
    assert.ok(jacobiContactSubsteps(world) >= sizeSubsteps(world, 8), `${name} ${JSON.stringify(p)}`);
    const cpu = resolveOptions(findSolver('jacobi-cpu')!, {}, world).substeps, gpu = resolveOptions(findSolver('jacobi-gpu')!, {}, world).substeps;
    assert.equal(cpu, jacobiContactSubsteps(world));
    assert.equal(gpu, cpu);
  }
});

test('the single-file column C of the support graph: a stack of n boxes is n; a pyramid, a bonded wall and a rain, whose bodies rest on two or on nothing, at most 2', () => {
  for (const n of [1, 2, 5, 15]) assert.equal(supportGraph(build('vertical-stack', { boxes: n })).column, n);
  for (const base of [3, 10, 20]) assert.equal(supportGraph(build('pyramid', { base })).column, 1);
  for (const rows of [4, 10, 20]) assert.ok(supportGraph(build('brick-wall', { rows, speed: 0 })).column <= 2);
  assert.equal(supportGraph(build('rain', { count: 200 })).column, 0);
});

/*
 * The Gauss-Seidel column rule (solvers/pgs/substeps.ts): max(4, ⌈C²/8 · √(2 cm / L)⌉) substeps and, for the soft
 * solvers, a spring of 4 × the column's Greenhill stiffness, ω² = 4 · 8 g C³ / (7.837 · 2L). Exact values of the
 * formula on the measured columns; a pyramid, a wall and a rain keep 4 substeps and --contact-hertz's 30 Hz (the
 * speed benchmarks run those: their defaults must not move).
 */
test('column substeps and spring: the stacks of piles.test.ts get theirs, braced piles and the rain keep the plain defaults, under every sequential contact solver', () => {
  const stack15 = build('vertical-stack', {}), small = build('vertical-stack', { boxes: 10, size: 0.025, offset: 0.0005 });
  assert.equal(columnSubsteps(stack15), 6); // ⌈225/8 · 0.2⌉ = ⌈5.63⌉
  assert.equal(columnSubsteps(small), 12); // ⌈100/8 · √0.8⌉ = ⌈11.2⌉
  const hertz = (C: number, L: number) => Math.sqrt((4 * 8 * 9.81 * C ** 3) / (7.837 * 2 * L)) / (2 * Math.PI);
  assert.ok(Math.abs(columnHertz(stack15) - hertz(15, 0.5)) < 1e-9 && Math.abs(columnHertz(stack15) - 58.5) < 0.1);
  for (const id of ['pgs-cpu', 'gs-cpu', 'gs-gpu', 'si-soft-cpu', 'softstep-cpu', 'softstep-gpu']) {
    const o = resolveOptions(findSolver(id)!, {}, stack15);
    assert.equal(o.substeps, 6, id);
    assert.equal(o.contactHertz, id.startsWith('s') ? columnHertz(stack15) : 30, id);
    assert.equal(resolveOptions(findSolver(id)!, {}, small).substeps, 12, id);
    for (const [name, p] of [['pyramid', {}], ['pyramid', { base: 10 }], ['brick-wall', { speed: 0 }], ['rain', { count: 200 }]] as const) {
      const world = build(name, p);
      const plain = resolveOptions(findSolver(id)!, {}, world);
      assert.equal(plain.contactHertz, 30, `${id} ${name}`);
      assert.equal(plain.substeps, id.startsWith('softstep') ? sizeSubsteps(world, 4) : 4, `${id} ${name}`);
    }
    // asked for, an option wins over the rule
    assert.equal(resolveOptions(findSolver(id)!, { substeps: 4, contactHertz: 30 }, stack15).substeps, 4);
  }
});
