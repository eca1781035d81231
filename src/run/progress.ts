/**
 * The progress bar of a long run on a terminal: frames done, time elapsed, time left.
 *
 * A CPU solver steps a frame synchronously, and one frame can take minutes (`--substeps 1000000`),
 * during which the main thread runs nothing: so the bar is drawn by a worker thread that wakes every
 * 250 ms, reads the frames done from shared memory (the main thread stores them after each batch)
 * and writes the line straight to the terminal's file descriptor. It appears once the run has taken
 * PROGRESS_AFTER_MS (a run expected to take more than a few seconds), and is erased when the run ends,
 * so the summary starts on a clean line. Ctrl-C stops the process as it would without it (no signal
 * handler is installed: one on the main thread could not run until the frame under way ended).
 *
 * Time left: the mean time per frame so far × frames left, less the time already spent on the
 * frame under way (never below zero); unknown until the first frame is done.
 */
import { Worker } from 'node:worker_threads';

export const PROGRESS_AFTER_MS = 2000;
const TICK_MS = 250;

/** mm:ss, or h:mm:ss from an hour on. */
export function clockText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  return (h ? `${h}:${String(m).padStart(2, '0')}` : String(m)) + ':' + String(sec).padStart(2, '0');
}

/**
 * The bar's text for `done` of `total` frames, `elapsedMs` into the run, the last frame done at
 * `lastDoneMs` (ms into the run). Self-contained but for clockText (no closures, no nested functions): the
 * worker runs the source of both.
 */
export function progressText(done: number, total: number, elapsedMs: number, lastDoneMs: number): string {
  const width = 24;
  const filled = total > 0 ? Math.min(width, Math.floor((width * done) / total)) : width;
  let left = 'time left: after the first frame';
  if (done > 0 && done < total) left = 'about ' + clockText(Math.max(0, (lastDoneMs / done) * (total - done) - (elapsedMs - lastDoneMs))) + ' left';
  else if (done >= total) left = 'done';
  return '[' + '#'.repeat(filled) + '.'.repeat(width - filled) + '] ' + done.toLocaleString('en-US') + '/' + total.toLocaleString('en-US') + ' frames · elapsed ' + clockText(elapsedMs) + ' · ' + left;
}

/** The worker: draws progressText on fd every TICK_MS once the run has taken PROGRESS_AFTER_MS, until told to stop. */
const workerSource = (clockSource: string, progressSource: string) => `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const clockText = ${clockSource};
const progressText = ${progressSource};
const state = new Float64Array(workerData.shared, 0, 4); // done, total, start (ms since epoch), last frame done (ms into the run)
const flag = new Int32Array(workerData.shared, 32, 2);   // [0]: 1 = stop; [1]: 1 = something drawn
let shown = '';
for (;;) {
  if (Atomics.wait(flag, 0, 0, ${TICK_MS}) !== 'timed-out' || flag[0] !== 0) break;
  const elapsed = Date.now() - state[2];
  if (elapsed < ${PROGRESS_AFTER_MS}) continue;
  const text = progressText(state[0], state[1], elapsed, state[3]);
  if (text === shown) continue;
  try {
    writeSync(workerData.fd, '\\r' + text + '\\x1b[K');
    shown = text;
    flag[1] = 1;
  } catch {
    break; // the terminal is gone
  }
}
`;

export interface Progress {
  /** frames done so far (call after each batch) */
  update(done: number): void;
  /** stops drawing and erases the bar */
  stop(): Promise<void>;
}

/** A progress bar for `total` frames on file descriptor `fd` (2: standard error). */
export function startProgress(total: number, fd = 2): Progress {
  const shared = new SharedArrayBuffer(40);
  const state = new Float64Array(shared, 0, 4);
  const flag = new Int32Array(shared, 32, 2);
  const start = Date.now();
  state.set([0, total, start, 0]);
  const worker = new Worker(workerSource(clockText.toString(), progressText.toString()), { eval: true, workerData: { shared, fd } });
  worker.unref(); // never keeps the process alive
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => resolve());
    worker.once('error', () => resolve());
  });
  return {
    update(done: number) {
      state[0] = done;
      state[3] = Date.now() - start;
    },
    async stop() {
      worker.ref(); // until it has exited: unreferenced, its exit would not keep the process alive to see it
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
      await exited;
      if (flag[1]) process.stderr.write('\r\x1b[K');
    },
  };
}
