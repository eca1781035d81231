/**
 * What Ctrl-C (SIGINT), SIGTERM or SIGHUP leaves behind, cleaned up by a watcher process
 * (run/temp-files.ts says why it is a separate process): `startWatcher` starts it, in a session of its
 * own (so the terminal's Ctrl-C does not reach it) and ignoring those signals, with a pipe from this
 * process. Through the pipe it hears of each temporary file made and finished (T/D lines) and of
 * where the command is (W lines, at most every 20 ms); when the pipe closes without an F line (this
 * process ended without finishing: a signal, a kill -9, a V8 abort), it removes the files still
 * listed and prints one line: `solverlab: stopped at frame 412 of 6,000 (t = 6.87 s); removed the
 * unfinished traj.csv.1234.tmp; nothing written`. The process itself dies by the signal, so a shell
 * reports 128 + its number (130 for Ctrl-C, 143 for SIGTERM).
 */
import { spawn } from 'node:child_process';
import { reportTempsTo } from '../run/temp-files.js';

/** The watcher: plain JavaScript for `node -e` (no loader, starts in tens of ms). */
const WATCHER = String.raw`
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
const fs = require('node:fs'), path = require('node:path');
const temps = new Set(); let where = '', after = '', finished = false, rest = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  const lines = (rest + chunk).split('\n'); rest = lines.pop();
  for (const l of lines) {
    const kind = l[0], text = l.slice(2);
    if (kind === 'T') temps.add(text); else if (kind === 'D') temps.delete(text);
    else if (kind === 'W') where = text; else if (kind === 'A') after = text; else if (kind === 'F') finished = true;
  }
});
process.stdin.on('end', () => {
  // files still listed are removed whatever ended the command (a crash too); the line only for a stop
  const removed = [];
  for (const t of temps) { try { fs.rmSync(t, { force: true }); removed.push(path.basename(t)); } catch {} }
  if (finished) return;
  const parts = ['solverlab: stopped' + (where ? ' ' + where : '')];
  if (removed.length) parts.push('removed the unfinished ' + removed.join(', '));
  if (after) parts.push(after);
  fs.writeSync(2, (process.stderr.isTTY ? '\r\x1b[K' : '') + parts.join('; ') + '\n');
});
`;

let send: ((line: string) => void) | null = null;
let lastWhere = 0;
let whereText: () => string = () => '';

/** Starts the watcher (once); the command's temporary files and its place are reported to it from then on. */
export function startWatcher(): void {
  if (send) return;
  const child = spawn(process.execPath, ['-e', WATCHER], { stdio: ['pipe', 'ignore', 'inherit'], detached: true });
  child.on('error', () => {}); // no watcher: the command runs as it would without one
  child.unref();
  const stdin = child.stdin!;
  (stdin as unknown as { unref?: () => void }).unref?.();
  stdin.on('error', () => {});
  send = (line) => {
    stdin.write(line.replace(/\n/g, ' ') + '\n');
  };
  reportTempsTo(send);
  // a command that ends by itself (status 0, 1, 2, 3) says so: the watcher then prints nothing
  process.on('exit', () => send?.('F'));
}

/**
 * Where the command is now (e.g. 'at frame 412 of 6,000 (t = 6.87 s)') and what the line adds last
 * ('nothing written'); `update` sends the place again (at most every 20 ms: the run loop calls it each frame).
 */
export function setWhere(fn: () => string, after = ''): void {
  whereText = fn;
  send?.(`A ${after}`);
  send?.(`W ${fn()}`);
  lastWhere = performance.now();
}

export function updateWhere(): void {
  if (!send) return;
  const now = performance.now();
  if (now - lastWhere < 20) return;
  lastWhere = now;
  send(`W ${whereText()}`);
}
