/**
 * The GPU frame clock (gpu/frames.ts) on a stand-in device whose timestamp queries return chosen
 * values: what a frame's time is made of, and that stamps which cannot be a measurement (frames adding
 * up to more than the wall time they ran in, as the H200's did) are refused for the wall clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameClock } from '../src/gpu/frames.js';

// the WebGPU enums the clock names (a real device's module defines them; the stand-in needs only the names)
const g = globalThis as Record<string, unknown>;
g.GPUBufferUsage ??= { QUERY_RESOLVE: 0x200, COPY_SRC: 0x4, MAP_READ: 0x1, COPY_DST: 0x8 };
g.GPUMapMode ??= { READ: 0x1 };

/** A device whose timestamp readback holds `stamps` (ns, begin/end per frame), and whose queue takes `wallMs`. */
function fakeDevice(stamps: bigint[], wallMs: number): GPUDevice {
  const buffer = () => ({
    mapAsync: async () => {},
    getMappedRange: () => new BigUint64Array(stamps).buffer,
    unmap: () => {},
    destroy: () => {},
  });
  const encoder = { resolveQuerySet: () => {}, copyBufferToBuffer: () => {}, finish: () => ({}), beginComputePass: () => ({ end: () => {} }) };
  return {
    createQuerySet: () => ({ destroy: () => {} }),
    createBuffer: buffer,
    createCommandEncoder: () => encoder,
    queue: {
      submit: () => {},
      onSubmittedWorkDone: () => new Promise<void>((r) => setTimeout(r, wallMs)),
    },
  } as unknown as GPUDevice;
}

test('a frame starts no earlier than the previous frame ends (overlapping top-of-pipe stamps are not counted twice)', async () => {
  // frame 0: 0 → 2 ms; frame 1's start stamp written at 1 ms, while frame 0 still ran; it ends at 3 ms
  const clock = new FrameClock(fakeDevice([0n, 2_000_000n, 1_000_000n, 3_000_000n], 20), true);
  await clock.run(2, () => {});
  const t = clock.timings();
  assert.equal(t.clock, 'gpu-timestamp');
  assert.deepEqual(t.msPerFrame, [2, 1]);
});

test('GPU frame times that add up to more than their wall time are refused: the wall clock is used, and the reason kept', async () => {
  // two frames of 50 ms each on the stamps, in a batch that took ~20 ms of wall time
  const clock = new FrameClock(fakeDevice([0n, 50_000_000n, 50_000_000n, 100_000_000n], 20), true);
  await clock.run(2, () => {});
  const t = clock.timings();
  assert.equal(t.clock, 'wall');
  assert.deepEqual(t.msPerFrame, t.wallMsPerFrame);
  assert.match(t.clockNote ?? '', /timestamps were not used: 2 frames read 100\.00 ms/);
  clock.reset();
  assert.equal(clock.timings().clockNote, undefined);
});

test('a sampled frame times each stage in a pass of its own: stage = its end less the later of its start and the previous end', async () => {
  // 9 frames of 1 ms each, back to back; frame 8 (STAGE_SAMPLE_EVERY / 2) is the sample, recorded as
  // stages a, b, a again (three passes; the pool's queries start at 512): a 0.5 ms, b 0.25 ms whose
  // start stamp reads 0.1 ms early (top of the pipe, while a still ran: not counted twice), a 0.25 ms
  const ms = 1_000_000n;
  const stamps = new Array<bigint>(518).fill(0n);
  for (let f = 0; f < 8; f++) {
    stamps[2 * f] = BigInt(f) * ms;
    stamps[2 * f + 1] = BigInt(f + 1) * ms;
  }
  const t8 = 8n * ms;
  [stamps[512], stamps[513]] = [t8, t8 + ms / 2n];
  [stamps[514], stamps[515]] = [t8 + ms / 2n - ms / 10n, t8 + (3n * ms) / 4n];
  [stamps[516], stamps[517]] = [t8 + (3n * ms) / 4n, t8 + ms];
  const device = fakeDevice(stamps, 50);
  const passes: string[] = [];
  (device as unknown as { createCommandEncoder: () => unknown }).createCommandEncoder = () => ({
    resolveQuerySet: () => {},
    copyBufferToBuffer: () => {},
    finish: () => ({}),
    beginComputePass: (d: GPUComputePassDescriptor) => {
      passes.push(String(d.timestampWrites?.beginningOfPassWriteIndex));
      return { end: () => {} };
    },
  });
  const clock = new FrameClock(device, true);
  await clock.run(9, (p) => {
    p.stage('a');
    p.stage('a'); // the stage still open: no new pass
    p.stage('b');
    p.stage('a');
  });
  // frames 0..7: one pass each, stamped at 2f; frame 8: three passes from the pool
  assert.deepEqual(passes, ['0', '2', '4', '6', '8', '10', '12', '14', '512', '514', '516']);
  const t = clock.timings();
  assert.equal(t.clock, 'gpu-timestamp');
  assert.deepEqual(t.msPerFrame, [1, 1, 1, 1, 1, 1, 1, 1, 1]);
  assert.deepEqual(clock.stageTimes(), { a: 0.75, b: 0.25 });
  assert.deepEqual(clock.stageSampling(), { clock: 'gpu-timestamp', frames: 1 });
  clock.reset();
  assert.deepEqual(clock.stageTimes(), {});
  assert.equal(clock.stageSampling().frames, 0);
});

test('sampleStagesEvery(1) times the stages of every frame (a short run), each frame from its first pass to its last', async () => {
  // 3 frames of 1 ms, each recorded as stages a (0.25 ms) and b (0.75 ms): six passes from the pool (512 on)
  const ms = 1_000_000n;
  const stamps = new Array<bigint>(524).fill(0n);
  for (let f = 0; f < 3; f++) {
    const t0 = BigInt(f) * ms, q = 512 + 4 * f;
    [stamps[q], stamps[q + 1], stamps[q + 2], stamps[q + 3]] = [t0, t0 + ms / 4n, t0 + ms / 4n, t0 + ms];
  }
  const device = fakeDevice(stamps, 50);
  const passes: string[] = [];
  (device as unknown as { createCommandEncoder: () => unknown }).createCommandEncoder = () => ({
    resolveQuerySet: () => {},
    copyBufferToBuffer: () => {},
    finish: () => ({}),
    beginComputePass: (d: GPUComputePassDescriptor) => {
      passes.push(String(d.timestampWrites?.beginningOfPassWriteIndex));
      return { end: () => {} };
    },
  });
  const clock = new FrameClock(device, true);
  assert.throws(() => clock.sampleStagesEvery(0), /integer ≥ 1/);
  clock.sampleStagesEvery(1);
  await clock.run(3, (p) => {
    p.stage('a');
    p.stage('b');
  });
  assert.deepEqual(passes, ['512', '514', '516', '518', '520', '522']);
  assert.deepEqual(clock.timings().msPerFrame, [1, 1, 1]);
  assert.deepEqual(clock.stageTimes(), { a: 0.75, b: 2.25 });
  assert.deepEqual(clock.stageSampling(), { clock: 'gpu-timestamp', frames: 3 });
});

test('without timestamp queries a GPU clock times no stage, and says why', async () => {
  const clock = new FrameClock(fakeDevice([], 1), false);
  assert.match(clock.stageSampling().note ?? '', /no timestamp queries/);
});

test('the host time of a batch is split: recording the frames, submit, the wait for the GPU, the stamps (the wall clock beside the stamps says where it went)', async () => {
  // two frames whose recording takes ≥ 15 ms of host time each, in one batch whose GPU work takes ≥ 40 ms
  const clock = new FrameClock(fakeDevice([0n, 1_000_000n, 1_000_000n, 2_000_000n], 40), true);
  await clock.run(2, () => {
    const t0 = performance.now();
    while (performance.now() - t0 < 15);
  });
  const h = clock.timings().host!;
  assert.equal(h.batches, 1);
  assert.ok(h.encodeMs >= 30, `recording ${h.encodeMs} ms, ≥ 2 × 15`);
  assert.ok(h.waitMs >= 39, `wait ${h.waitMs} ms, ≥ the GPU's 40 (timer resolution 1 ms)`);
  // the frames' wall time (submit to done) is the submit and the wait, not the recording
  const wall = clock.timings().wallMsPerFrame.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(wall - (h.submitMs + h.waitMs)) < 1e-6, `wall ${wall} = submit ${h.submitMs} + wait ${h.waitMs}`);
  clock.reset();
  assert.deepEqual(clock.timings().host, { batches: 0, encodeMs: 0, submitMs: 0, waitMs: 0, stampsMs: 0 });
});
