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
  const encoder = { resolveQuerySet: () => {}, copyBufferToBuffer: () => {}, finish: () => ({}) };
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
