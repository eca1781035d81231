/**
 * The temporary files of the writers that are whole or nothing (a file written as FILE.<pid>.tmp
 * and renamed into place when complete: run/trajectory.ts, cli/main.ts writeAtomic). Each is listed
 * here while it exists, and, once a watcher is started (cli/interrupt.ts startWatcher), told to it.
 *
 * The watcher is a small separate process: when this one ends without saying it finished — stopped
 * by Ctrl-C, SIGTERM, SIGHUP, even SIGKILL or a V8 abort — it removes the files still listed and
 * prints one line saying where the command stopped. A separate process, because a signal handler
 * on this one could not run until the frame under way ended (a CPU frame can take minutes) and would
 * keep Ctrl-C from stopping it at once; so no handler is installed and a signal ends this process
 * as it would without SolverLab (a shell reports 128 + its number: 130 for Ctrl-C).
 */
const live = new Set<string>();

/** Where listed files are reported as they come and go (the watcher's pipe), if anywhere. */
let report: ((line: string) => void) | null = null;

export function reportTempsTo(fn: ((line: string) => void) | null): void {
  report = fn;
  if (fn) for (const tmp of live) fn(`T ${tmp}`);
}

/** The temporary name of `path` for this process, listed until `tempDone`. */
export function tempFor(path: string): string {
  const tmp = `${path}.${process.pid}.tmp`;
  live.add(tmp);
  report?.(`T ${tmp}`);
  return tmp;
}

/** `tmp` was renamed into place or removed: no longer listed. */
export function tempDone(tmp: string): void {
  live.delete(tmp);
  report?.(`D ${tmp}`);
}
