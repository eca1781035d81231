/**
 * The pieces of the GPU contact benchmark (bench/gpu-contacts.ts), on the software adapter and a small
 * pile (a pyramid of base 6: 21 boxes on the ground, every box touching from frame 0):
 *  - the stage times of a GPU contact solver from GPU timestamps, every frame timed (stageEvery 1): the
 *    stages are the solver's (collide first, solve among them), and they add up to the frame's own GPU
 *    time, since a sampled frame is its stages' passes one after the other (gpu/frames.ts readStamps: a
 *    stage's time is its end less the later of its start and the previous stage's end, so the sum is the
 *    frame's span less the gaps between passes, which are never negative);
 *  - the solver's own contact figures read with the snapshot (Solver.contactStats) against two other
 *    readbacks of the same frame: the manifolds and points read whole (GpuContacts.read) and the
 *    colouring read whole (GpuColouring.read), whose sizes less the point-less pairs (colour 0) must be
 *    the figures', exactly (integers counted by two routes);
 *  - the colours are a colouring: no two manifolds of one colour share a moving body;
 *  - the summary row splits a record's stages into collision (collide) and solve (the rest);
 *  - compare runs a GPU contact solver (it used to skip them all), and the command's refusals.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { runSolver } from '../src/run/run.js';
import { runRecord, isSkipped } from '../src/bench/results.js';
import { runCompare } from '../src/bench/compare.js';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { gpuContactRow, gpuContactSolvers, COLLISION_STAGE } from '../src/bench/gpu-contacts.js';
import type { GpuContacts } from '../src/contacts/gpu-contacts.js';

const FRAMES = 3;
const root = resolve(import.meta.dirname, '..');

test('GPU contact solvers: the registry lists jacobi-gpu and softstep-gpu among them', () => {
  const ids = gpuContactSolvers();
  for (const id of ['jacobi-gpu', 'softstep-gpu']) assert.ok(ids.includes(id), `${id} in ${ids.join(', ')}`);
  for (const id of ids) assert.equal(findSolver(id)!.device, 'gpu');
});

for (const id of ['softstep-gpu', 'jacobi-gpu']) {
  test(`${id}: stage split from GPU timestamps and the contact figures read with the snapshot, pyramid base 6`, async () => {
    const { world } = loadRigidScene('pyramid', { base: 6 });
    const info = findSolver(id)!;
    const gpu = await acquireGpu();
    const solver = await info.create(world, resolveOptions(info, {}, world), gpu);
    try {
      if (!solver.adapter.timestamps) return; // no timestamp queries on this adapter: the split is not measured (the record says why)
      const result = await runSolver(solver, world, { frames: FRAMES, stageEvery: 1 });
      assert.equal(result.diverged, null);
      const record = runRecord({ scene: 'pyramid', params: { base: 6 }, options: solver.options }, result);
      // the stages: the solver's names, collide first, every frame timed
      const names = record.timing.stages!.map((s) => s.name);
      assert.equal(names[0], COLLISION_STAGE);
      assert.ok(names.includes('solve') && names.includes('prepare contacts'), names.join(', '));
      assert.match(record.timing.stagesClock!, new RegExp(`GPU timestamps, ${FRAMES} sampled frames`));
      assert.equal(record.timing.clock, 'gpu-timestamp');
      // Σ stages = the frame's span less the gaps between its passes: ≤ the mean frame (1e-6 ms: the
      // ns stamps' rounding in the division), and every stage ≥ 0
      const sum = record.timing.stages!.reduce((a, s) => a + s.msPerFrame, 0);
      for (const s of record.timing.stages!) assert.ok(s.msPerFrame >= 0, `${s.name} ${s.msPerFrame}`);
      assert.ok(sum <= record.timing.meanMs! + 1e-6, `stages ${sum} ms ≤ frame ${record.timing.meanMs} ms`);
      assert.ok(sum > 0);
      const row = gpuContactRow(record);
      assert.equal(row.collisionMs, record.timing.stages![0].msPerFrame);
      assert.ok(Math.abs(row.collisionMs! + row.solveMs! - sum) <= 1e-9 * sum);
      assert.equal(row.prepareMs, record.timing.stages!.find((s) => s.name === 'prepare contacts')!.msPerFrame);
      assert.ok(row.prepareMs! <= row.solveMs!);

      // the figures read with the last snapshot against the manifolds and the colouring read whole
      const stats = solver.contactStats!()!;
      assert.deepEqual(record.solverContacts!.final, stats);
      const contacts = (solver as unknown as { contacts: GpuContacts }).contacts;
      const manifolds = await contacts.read();
      assert.equal(stats.manifolds, manifolds.length);
      assert.equal(stats.points, manifolds.reduce((a, m) => a + m.points.length, 0));
      assert.ok(stats.manifolds > 20, `${stats.manifolds} manifolds: 21 boxes resting on each other and the ground`);
      if (id === 'softstep-gpu') {
        const col = await contacts.colouring!.read();
        assert.equal(col.count, stats.pairs);
        const sizes = col.sizes.slice();
        sizes[0] -= stats.pairs - stats.manifolds; // the point-less pairs take colour 0
        assert.deepEqual(sizes.slice(0, stats.colours!.used), stats.colours!.sizes);
        assert.ok(sizes.slice(stats.colours!.used).every((n) => n === 0));
        assert.equal(col.overflow, stats.colours!.overflow);
        assert.equal(stats.colours!.sizes.reduce((a, n) => a + n, 0) + stats.colours!.overflow, stats.manifolds);
        // a colouring: within a colour, no moving body twice (the ground, fixed, may be shared)
        const fixed = new Set(world.bodies.map((b, i) => (b.fixed ? i : -1)).filter((i) => i >= 0));
        const byColour = new Map<number, Set<number>>();
        const narrow = await contacts.collision.read();
        for (let k = 0; k < col.count; k++) {
          if (!narrow.manifolds[k]?.points.length) continue; // a pair without points: no bodies in the colouring
          const a = narrow.pairs[2 * k], b = narrow.pairs[2 * k + 1];
          const seen = byColour.get(col.colour[k]) ?? new Set<number>();
          for (const body of [a, b]) {
            if (fixed.has(body)) continue;
            assert.ok(!seen.has(body) || col.colour[k] === contacts.colouring!.maxColours, `body ${body} twice in colour ${col.colour[k]}`);
            seen.add(body);
          }
          byColour.set(col.colour[k], seen);
        }
        assert.ok(stats.colours!.used >= 2, 'a pile needs two colours at least');
      } else assert.equal(stats.colours, undefined);
    } finally {
      solver.destroy();
      gpu.device.destroy();
    }
  });
}

test('compare runs a GPU contact solver, records its contact residual and keeps its contact figures', async () => {
  // before: compare asked every solver with stepRecordingResiduals for a residual frame, which a GPU
  // solver with contacts refused, so every GPU contact run was skipped ("failed while running"); the GPU
  // contact stages now record the contact rows' residual (test/gpu-contact-residuals.test.ts checks its values)
  const r = await runCompare({ scenes: ['pyramid'], params: { base: 3 }, solvers: ['jacobi-gpu'], frames: 2 });
  const run = r.runs[0];
  assert.ok(!isSkipped(run), isSkipped(run) ? run.skipped : '');
  if (isSkipped(run)) return;
  // the pile touches from its first frame: both contact channels, one value per record point (k = 0..8)
  assert.deepEqual(Object.keys(run.residuals!.channels).sort(), ['contact normal', 'friction']);
  for (const curve of Object.values(run.residuals!.channels)) assert.equal(curve.length, 9);
  assert.equal(run.frames, 2);
  // 6 boxes: 3 on the ground, 2 on those, 1 on top: each resting pair a manifold with points
  assert.ok(run.solverContacts!.final.manifolds >= 3 + 2 * 2 + 2, `${run.solverContacts!.final.manifolds} manifolds`);
});

test('compare runs xpbd-gpu on a pile and records its contact residual', async () => {
  // before: xpbd-gpu declared it recorded no contact residual (residualsRefusal) and compare kept none; its
  // contact stages now record xpbd-cpu's (xc_residual; test/gpu-contact-residuals.test.ts checks its values)
  const r = await runCompare({ scenes: ['pyramid'], params: { base: 2 }, solvers: ['xpbd-gpu'], frames: 2 });
  const run = r.runs[0];
  assert.ok(!isSkipped(run), isSkipped(run) ? run.skipped : '');
  if (isSkipped(run)) return;
  // the pile touches from its first frame: both contact channels, one value per record point (k = 0 .. 1: one iteration)
  assert.deepEqual(Object.keys(run.residuals!.channels).sort(), ['contact normal', 'friction']);
  for (const curve of Object.values(run.residuals!.channels)) assert.equal(curve.length, 2);
  assert.equal(run.frames, 2);
  // 3 boxes: 2 on the ground, 1 on those: at least 2 + 2 manifolds
  assert.ok(run.solverContacts!.final.manifolds >= 4, `${run.solverContacts!.final.manifolds} manifolds`);
});

test('bench --contacts: a solver that is not a GPU contact solver, or a flag of another benchmark, is one line and exit 2', () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { cwd: root, encoding: 'utf8' });
  let r = cli('bench', '--contacts', '--solvers', 'softstep-cpu');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /softstep-cpu is not a GPU solver that takes contacts/);
  r = cli('bench', '--big-frames', '3');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--big-frames goes with --contacts/);
  r = cli('bench', '--contacts', '--scenes', 'rain-1k');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /unknown benchmark scene 'rain-1k'/);
});
