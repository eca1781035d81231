/**
 * Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed) during a command: the unfinished temporary files are removed
 * (run/temp-files.ts: a trajectory being streamed, a scene being exported), one line on stderr says
 * where the command stopped, and the exit status is 128 + the signal's number, as a shell reports a
 * process killed by it (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
 *
 * Node runs a signal handler only when the event loop gets a turn: the run loop gives it one at least
 * every 50 ms of wall time (run/run.ts), and the streaming writers as they go; a single frame still
 * finishes first. `view` keeps its own handler (cli/view.ts: it stops its server).
 */
import { basename } from 'node:path';
import { constants } from 'node:os';
import { removeTemps } from '../run/temp-files.js';

/** Where the command is now, for the line printed when it is stopped (e.g. 'at frame 412 of 6,000'), and what it adds last ('nothing written'). */
let where: () => string = () => '';
let last = '';

export function setWhere(fn: () => string, after = ''): void {
  where = fn;
  last = after;
}

type Signal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

function onSignal(sig: Signal): void {
  const removed = removeTemps();
  const at = where();
  const files = removed.length ? `; removed the unfinished ${removed.map((f) => basename(f)).join(', ')}` : '';
  // a progress bar may be on the line: erase it first (only drawn on a terminal)
  process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}solverlab: stopped by ${sig}${at ? ` ${at}` : ''}${files}${last ? `; ${last}` : ''}\n`);
  process.exit(128 + constants.signals[sig]);
}

/** Installs the handlers (once); returns a function that removes them. */
export function handleInterrupts(): () => void {
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((sig) => [sig, () => onSignal(sig)] as const);
  for (const [sig, h] of handlers) process.on(sig, h);
  return () => {
    for (const [sig, h] of handlers) process.off(sig, h);
  };
}
