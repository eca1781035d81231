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

/*
 * The column rule at another frame step (pgs/substeps.ts, "The frame step"): the column feels the substep
 * h = dt / substeps, so at dt = 1/30 s and 0.05 s the rule gives 2 and 3 times its count at 1/60 s and the
 * soft spring keeps its figure (it is static: 4 × the Greenhill stiffness, no dt in it).
 */
test('column substeps follow the frame step: h = dt / substeps never above the 1/60 s rule\'s, the spring unchanged', () => {
  const stack15 = build('vertical-stack', {}), small = build('vertical-stack', { boxes: 10, size: 0.025, offset: 0.0005 });
  for (const [dt, times] of [[1 / 30, 2], [0.05, 3]] as const) {
    assert.equal(columnSubsteps(stack15, dt), 6 * times);
    assert.equal(columnSubsteps(small, dt), 12 * times);
    for (const id of ['pgs-cpu', 'gs-cpu', 'gs-gpu', 'si-soft-cpu', 'softstep-cpu', 'softstep-gpu']) {
      const o = resolveOptions(findSolver(id)!, { dt }, stack15);
      assert.equal(o.substeps, 6 * times, `${id} at ${dt}`);
      assert.equal(o.contactHertz, id.startsWith('s') ? columnHertz(stack15) : 30, id);
    }
  }
  // a smaller step needs fewer, never below 4; 1/60 s gives the rule's own count exactly
  assert.equal(columnSubsteps(stack15, 1 / 120), 4);
  // where the floor set the count at 1/60 s, its substep 1/240 s is kept on a column: ten 1 m boxes (own need
  // C²/8 · √(2 cm / L) = 2.5) 4, 8, 12; a single box, a pyramid or a wall (C ≤ 2, braced) keeps 4 even at dt = 0.5 s
  const stack10 = build('vertical-stack', { boxes: 10 });
  assert.deepEqual([1 / 60, 1 / 30, 0.05].map((dt) => columnSubsteps(stack10, dt)), [4, 8, 12]);
  for (const [name, p] of [['single-box', {}], ['pyramid', { base: 10 }], ['brick-wall', { speed: 0 }]] as const) assert.equal(columnSubsteps(build(name, p), 0.5), 4, name);
  assert.equal(columnSubsteps(small, 1 / 120), 6);
  assert.equal(columnSubsteps(small, 1 / 60), 12);
});

/*
 * …and the columns then hold at the larger step. The fact: a column resting on the ground stays where it
 * settled; the top box's (and any box's) move from 1 s to 10 s stays under 1 % of its edge (piles.test.ts's
 * bound, the creep target scaled to the box). Before the rule read dt (6 and 12 substeps whatever
 * the step), measured: pgs-cpu's fifteen 1 m boxes at 1/30 s moved 31.06 mm (3.1 %), softstep-cpu's ten
 * 5 cm boxes at 0.05 s fell (624 mm); now 4.75 mm and 0.09 mm. ~1 s each.
 */
for (const [id, dt, p, edge] of [
  ['pgs-cpu', 1 / 30, {}, 1],
  ['softstep-cpu', 0.05, { boxes: 10, size: 0.025, offset: 0.0005 }, 0.05],
] as const) {
  test(`${id}: a column holds at dt = ${dt.toPrecision(3)} s: no box moves 1 % of its edge from 1 s to 10 s (sleeping off)`, async () => {
    const world = build('vertical-stack', p), info = findSolver(id)!;
    const solver = await info.create(world, resolveOptions(info, { dt, sleep: 0 }, world));
    const n = world.bodies.length, settle = Math.round(1 / dt), frames = Math.round(10 / dt);
    let settled: Float64Array | null = null, peak = 0, peakBody = -1;
    try {
      for (let f = 1; f <= frames; f++) {
        await solver.step(1);
        const s = await solver.snapshot();
        if (f === settle) settled = Float64Array.from(s.position);
        if (f <= settle) continue;
        for (let i = 1; i < n; i++) {
          const d = Math.hypot(s.position[3 * i] - settled![3 * i], s.position[3 * i + 1] - settled![3 * i + 1], s.position[3 * i + 2] - settled![3 * i + 2]);
          if (!(d <= peak)) (peak = d), (peakBody = i);
        }
      }
    } finally {
      solver.destroy();
    }
    assert.ok(peak < 0.01 * edge, `box ${peakBody} moved ${(peak * 1000).toFixed(2)} mm after settling (limit ${10 * edge} mm)`);
  });
}
