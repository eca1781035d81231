/**
 * The temporary files of the writers that are whole or nothing (a file written as FILE.<pid>.tmp
 * and renamed into place when complete: run/trajectory.ts, cli/main.ts writeAtomic): each is listed
 * here while it exists, so that a command stopped by a signal (cli/interrupt.ts) removes them all
 * rather than leave a partial file behind. SIGKILL cannot be caught: it leaves them.
 */
import { rmSync } from 'node:fs';

const live = new Set<string>();

/** The temporary name of `path` for this process, listed until `tempDone`. */
export function tempFor(path: string): string {
  const tmp = `${path}.${process.pid}.tmp`;
  live.add(tmp);
  return tmp;
}

/** `tmp` was renamed into place or removed: no longer listed. */
export function tempDone(tmp: string): void {
  live.delete(tmp);
}

/** Removes every listed temporary file (synchronously: from a signal handler); returns their names. */
export function removeTemps(): string[] {
  const removed = [...live];
  for (const tmp of removed) rmSync(tmp, { force: true });
  live.clear();
  return removed;
}
