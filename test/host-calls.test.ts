/**
 * Where a GPU run's wall time goes on the host (run/run.ts RunHost, gpu/host-calls.ts), on the software adapter
 * and a small pile (a pyramid of base 6: 21 boxes touching from frame 0):
 *  - the record counts the host's syncs: one wait for the GPU per submitted batch (the frame clock's), one
 *    submit and one map per batch and per snapshot (the snapshot's readbacks in one), and nothing made per frame (no buffer, bind group or pipeline in a step: what the host makes, it makes at a
 *    snapshot or when a layout grows);
 *  - its times add up: the loop's wall is its step, snapshots, metrics and the rest; a step's recording,
 *    submit, wait and stamps are within it;
 *  - SOLVERLAB_DAWN_VALIDATION=off (Dawn's skip_validation: no per-call copy of the indirect arguments)
 *    leaves the physics to the bit: the same state hash after the same frames.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu } from '../src/gpu/device.js';
import { loadRigidScene } from '../src/scenes/load.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { runSolver, type RunResult } from '../src/run/run.js';

const FRAMES = 4, SAMPLE = 2;

/** `id` on the pyramid for FRAMES frames, sampled every SAMPLE; `warm`: one frame stepped before (its first step lays out its rows and binds them, once). */
async function run(id: string, warm = false): Promise<RunResult> {
  const { world } = loadRigidScene('pyramid', { base: 6 });
  const info = findSolver(id)!;
  const solver = await info.create(world, resolveOptions(info, {}, world), await acquireGpu());
  try {
    if (warm) await solver.step(1);
    return await runSolver(solver, world, { frames: FRAMES, sampleEvery: SAMPLE });
  } finally {
    solver.destroy();
  }
}

test('jacobi-gpu on the pyramid: the run record says where the host time went, and counts its syncs and indirect dispatches', async () => {
  const r = await run('jacobi-gpu', true);
  assert.equal(r.diverged, null);
  const h = r.host!;
  assert.ok(h, 'a host record');
  // batches of SAMPLE frames (run: one step call between samples), one wait for the GPU each
  assert.equal(h.batches, 1 / SAMPLE);
  const c = h.calls!;
  assert.equal(c.workDoneWaits, 1 / SAMPLE);
  // per batch one submit and one map (the stamps); per snapshot one of each: the contacts' counters read with the
  // pose and velocities through one staging buffer (before: 2 submits and 4 maps a snapshot, 1.5 and 3 a frame here)
  assert.equal(c.submits, 2 / SAMPLE, `${c.submits} submits per frame`);
  assert.equal(c.maps, 2 / SAMPLE, `${c.maps} maps per frame`);
  assert.ok(c.indirectDispatches > 0 && c.dispatches > 0, `${c.indirectDispatches} indirect, ${c.dispatches} direct`);
  assert.ok(c.passes >= 1, `${c.passes} passes per frame`);
  assert.equal(c.pipelinesCreated, 0);
  assert.equal(c.bindGroupsCreated, 0);
  assert.equal(h.dawnValidation, true);
  // the parts add up to the loop's wall (1e-9 ms: rounding); the step's split is within the step
  const parts = h.stepMs + h.snapshotMs + h.metricsMs + h.residualFrameMs + h.otherMs;
  assert.ok(Math.abs(parts - h.wallMs) < 1e-9, `${parts} = ${h.wallMs}`);
  const split = h.encodeMs! + h.submitMs! + h.gpuWaitMs! + h.stampsMs!;
  assert.ok(split <= h.stepMs + 1e-9, `recording + submit + wait + stamps ${split} ≤ step ${h.stepMs}`);
  assert.ok(h.gpuWaitMs! > 0 && h.encodeMs! > 0);
});

test('SOLVERLAB_DAWN_VALIDATION=off: the same state to the bit after the same frames (jacobi-gpu, pyramid)', async () => {
  const on = await run('jacobi-gpu');
  const saved = process.env.SOLVERLAB_DAWN_VALIDATION;
  process.env.SOLVERLAB_DAWN_VALIDATION = 'off';
  try {
    const off = await run('jacobi-gpu');
    assert.equal(off.host!.dawnValidation, false);
    assert.equal(off.host!.calls!.indirectDispatches, on.host!.calls!.indirectDispatches);
    assert.ok(on.finalStateHash && on.finalStateHash === off.finalStateHash, `${on.finalStateHash} vs ${off.finalStateHash}`);
  } finally {
    if (saved === undefined) delete process.env.SOLVERLAB_DAWN_VALIDATION;
    else process.env.SOLVERLAB_DAWN_VALIDATION = saved;
  }
});
