/**
 * Time per stage (solvers/stages.ts): the clock adds each stage's wall time; a run reports each stage's
 * mean ms per frame, which, the stages running inside the frame, add up to no more than the frame's
 * own mean time; the compare report shows one row per staged run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StageClock, isStaged } from '../src/solvers/stages.js';
import { runSolver } from '../src/run/run.js';
import { findRigidScene, findScene } from '../src/scenes/registry.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { stagesHtml } from '../src/bench/report-html.js';
import { acquireGpu } from '../src/gpu/device.js';
import type { RunRecord } from '../src/bench/results.js';

test('StageClock sums each stage over its calls, keeps first-run order, and resets to zero', () => {
  const clock = new StageClock();
  clock.add('solve', 2);
  clock.add('relax', 1);
  clock.add('solve', 3);
  assert.deepEqual(Object.entries(clock.totals()), [['solve', 5], ['relax', 1]]);
  assert.equal(clock.run('relax', () => 7), 7);
  assert.ok(clock.totals().relax >= 1);
  clock.reset();
  assert.deepEqual(clock.totals(), { solve: 0, relax: 0 });
});

for (const [id, scene] of [['softstep-cpu', 'single-box'], ['xpbd-cpu', 'single-box'], ['pgs-cpu', 'single-box'], ['jacobi-cpu', 'single-box'], ['rapier', 'single-box'], ['global-cpu', 'necklace'], ['witkin-rk4', 'rope'], ['jacobi-cpu', 'necklace'], ['gs-cpu', 'necklace'], ['xpbd-cpu', 'necklace']]) {
  test(`${id}: a run reports its stages, and they add up to no more than the frame time`, async () => {
    const world = (findRigidScene(scene) ?? findScene(scene))!.build(scene === 'necklace' ? { chains: 1, beads: 8 } : {});
    const info = findSolver(id)!;
    const solver = await info.create(world, resolveOptions(info, { sleep: 0 }));
    assert.ok(isStaged(solver), `${id} declares no stages`);
    const r = await runSolver(solver, world, { frames: 20 });
    assert.ok(r.stages && r.stages.length > 0, 'no stages in the result');
    assert.deepEqual(r.stages!.map((st) => st.name), solver.stageNames.filter((n) => r.stages!.some((st) => st.name === n)), 'stages out of step order');
    assert.ok(!r.stages!.some((st) => st.name === 'step') || id === 'rapier', `${id} times its frame as one stage`);
    const staged = r.stages!.reduce((a, st) => a + st.msPerFrame, 0);
    const frames = r.msPerFrame.reduce((a, b) => a + b, 0) / r.msPerFrame.length;
    // each stage is timed inside its frame: the sum can exceed the frame's time only by clock rounding (μs)
    assert.ok(staged <= frames + 0.01, `stages add up to ${staged} ms per frame, more than the frame's ${frames} ms`);
    solver.destroy();
  });
}

for (const id of ['jacobi-gpu', 'xpbd-gpu']) {
  test(`${id}: a run reports its stages from GPU timestamps on its sampled frames, no more than a frame's time`, async () => {
    const world = findRigidScene('necklace')!.build({ chains: 1, beads: 8 });
    const info = findSolver(id)!;
    const solver = await info.create(world, resolveOptions(info, {}), await acquireGpu());
    assert.ok(isStaged(solver), `${id} declares no stages`);
    const r = await runSolver(solver, world, { frames: 20 });
    if (r.timing.clock !== 'gpu-timestamp') {
      assert.match(r.stagesClock ?? '', /^not timed: /); // an adapter without timestamps says why
      return;
    }
    // 20 frames: frame 8 alone is a sample (STAGE_SAMPLE_EVERY = 16, from the 9th on)
    assert.equal(r.stagesClock, 'GPU timestamps, 1 sampled frame');
    const names = r.stages!.map((st) => st.name);
    assert.deepEqual(names, solver.stageNames.filter((n) => names.includes(n)), 'stages out of step order');
    assert.ok(names.includes(id === 'xpbd-gpu' ? 'project joints' : 'solve'), names.join(', '));
    // the sample's stages run inside its frame, whose time is one of the run's frame times
    const staged = r.stages!.reduce((a, st) => a + st.msPerFrame, 0);
    assert.ok(staged <= Math.max(...r.msPerFrame) + 1e-6, `stages add up to ${staged} ms, more than any frame's time`);
    solver.destroy();
  });
}

test('the compare report shows one row per staged run, its stages as columns in step order', () => {
  const run = (solver: string, stages: [string, number][]) =>
    ({ solver, timing: { stages: stages.map(([name, msPerFrame]) => ({ name, msPerFrame })) } }) as unknown as RunRecord;
  const html = stagesHtml([run('a-cpu', [['collide', 1], ['solve', 3]]), run('b-cpu', [['collide', 2], ['relax', 1]])])!;
  assert.equal((html.match(/<tr data-run=/g) ?? []).length, 2);
  const header = html.slice(html.indexOf('<thead>'), html.indexOf('</thead>'));
  assert.ok(header.indexOf('collide') < header.indexOf('solve') && header.indexOf('solve') < header.indexOf('relax'), header);
  assert.equal(stagesHtml([{ solver: 'x', timing: {} } as unknown as RunRecord]), null);
});
