/**
 * The JS heap a `solverlab` process gets: three quarters of the machine's memory (or of its
 * cgroup's limit, when lower), in place of V8's default of about 4 GiB whatever the machine.
 *
 * Why: V8 *aborts* a process whose heap is full (signal 6, a native stack; it cannot be caught),
 * and the memory check (model/limits.ts) refuses what the heap cannot hold. The scenes' bodies and
 * joints, the compiled world and every solver's state are typed arrays, off the heap
 * (model/packed.ts), so a built-in scene needs little heap at any size; what does need it is a
 * scene file (its parsed JSON objects) and long runs' series. The quarter left is for the typed
 * arrays, which the check counts against physical memory with the heap's estimate, not its limit.
 *
 * How it is set:
 *   - `./solverlab` (the launcher of a clone) passes `--max-old-space-size` to node, from
 *     /proc/meminfo, by the rule below in awk;
 *   - the bundle (`node dist/solverlab/solverlab.mjs`, what gpu-pack.sh carries to a GPU host)
 *     and the installed `solverlab` bin start themselves again with that flag when their heap
 *     limit is below it (`reexecWithHeap`), once: the child sees SOLVERLAB_HEAP set and runs.
 *   - A flag or NODE_OPTIONS that sets --max-old-space-size is the user's choice and is kept.
 */
import { spawn } from 'node:child_process';
import { totalmem, constants } from 'node:os';
import v8 from 'node:v8';

/** MiB of heap for this machine: ¾ of its memory (or of the cgroup's limit when lower). */
export function heapTargetMiB(): number {
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.() ?? 0;
  const physical = constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
  return Math.floor((0.75 * physical) / 2 ** 20);
}

/** Whether the user set the heap (a node flag, or NODE_OPTIONS). */
function heapSetByUser(): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('max-old-space-size') || a.includes('max_old_space_size'));
}

/**
 * Runs this command again in a child node with the heap of heapTargetMiB, when this process has
 * less (and the user set none); returns the child's exit status, or null to go on in this process.
 */
export async function reexecWithHeap(): Promise<number | null> {
  if (process.env.SOLVERLAB_HEAP || heapSetByUser()) return null;
  const target = heapTargetMiB();
  const limit = v8.getHeapStatistics().heap_size_limit / 2 ** 20;
  if (limit >= 0.9 * target) return null;
  const child = spawn(process.execPath, [...process.execArgv, `--max-old-space-size=${target}`, process.argv[1], ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, SOLVERLAB_HEAP: String(target) },
  });
  // a signal sent to this process goes on to the child, whose handler removes its unfinished files
  // and says where it stopped (cli/interrupt.ts): `kill PID` names this process alone. The terminal's
  // Ctrl-C reaches both (one process group); the child acts on the first and exits.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => child.kill(sig));
  return new Promise((resolve) => {
    child.on('error', () => resolve(null)); // could not start: run here, with the heap there is
    // a child killed by a signal: 128 + its number, as a shell reports it
    child.on('exit', (code, signal) => resolve(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1)));
  });
}
