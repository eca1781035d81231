/**
 * Stopping and launching the command (issue 22, item 4):
 *   - SIGINT (Ctrl-C), SIGTERM or even SIGKILL during `run --trajectory`, `compare` or `scenes --export`:
 *     the process dies by the signal (a shell reports 130, 143, 137), and its watcher process
 *     (cli/interrupt.ts) removes the unfinished FILE.<pid>.tmp and prints one line saying where the
 *     command stopped; nothing else is written;
 *   - `./solverlab` through a symbolic link (and a link to a link) finds its clone;
 *   - no command: the usage on stderr and status 2 (`help` stays 0).
 * Each signal is sent once the temporary file exists and has grown (the run is under way), polled
 * every 50 ms for up to 60 s: the machine may be busy. That Ctrl-C stops a run inside a long frame
 * at once is test/run-behaviour.test.ts's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const nodeCli = ['--import', import.meta.resolve('tsx'), join(root, 'src/cli/bin.ts')];

/** Starts the CLI in `cwd`; resolves with its status and stderr once it has ended. */
function start(cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; ended: Promise<{ status: number | null; signal: string | null; stderr: string }> } {
  const child = spawn(process.execPath, [...nodeCli, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const ended = new Promise<{ status: number | null; signal: string | null; stderr: string }>((res) => child.on('close', (status, signal) => res({ status, signal, stderr })));
  return { child, ended };
}

/** Waits until `dir` holds a file matching `re` of at least `bytes` bytes (or `re` alone, bytes 0). */
async function waitForFile(dir: string, re: RegExp, bytes: number, child: ChildProcess): Promise<string> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the command ended (status ${child.exitCode}) before ${re} appeared`);
    for (const f of readdirSync(dir)) if (re.test(f) && statSync(join(dir, f)).size >= bytes) return f;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${re} of ${bytes} B in ${dir} after 60 s`);
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'solverlab-interrupt-'));
  return dir;
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGKILL'] as const) {
  test(`run --trajectory stopped by ${sig}: the .tmp removed, no file written, one line with the frame`, async () => {
    const dir = tempDir();
    try {
      const traj = sig === 'SIGTERM' ? 'traj.json' : 'traj.csv';
      const { child, ended } = start(dir, ['run', '--scene', 'necklace', '--param', 'chains=20', '--solver', 'jacobi-cpu', '--frames', '1000000', '--trajectory', traj, '--json', 'run.json', '--quiet']);
      // 1 MB streamed: well inside the run (800 bodies a frame, ≈ 150 B a body and sample)
      const tmp = await waitForFile(dir, new RegExp(`^${traj.replace('.', '\\.')}\\.\\d+\\.tmp$`), 1e6, child);
      child.kill(sig);
      const r = await ended; // once the watcher, which holds stderr too, has written its line
      assert.equal(r.signal, sig, r.stderr); // the process dies by the signal, as without SolverLab
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      const m = lines[0].match(new RegExp(`^solverlab: stopped at frame ([\\d,]+) of 1,000,000 \\(t = ([\\d.]+) s\\); removed the unfinished ${tmp.replace(/\./g, '\\.')}; nothing written$`));
      assert.ok(m, lines[0]);
      // the frame said is the last the watcher heard of (the run tells it at most every 20 ms): t = frame × dt
      const frame = Number(m[1].replace(/,/g, ''));
      assert.ok(Math.abs(Number(m[2]) - frame / 60) <= 5e-4 * (frame / 60), lines[0]);
      assert.deepEqual(readdirSync(dir), [], 'nothing left in the folder');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('the entry that starts itself again for its heap (the bundle, the installed bin): SIGTERM to it alone reaches the run, status 143', async () => {
  const dir = tempDir();
  try {
    // SOLVERLAB_HEAP_REEXEC=1: bin.ts starts a child node with ¾ of the machine as heap (cli/heap.ts) and waits for it
    const { SOLVERLAB_HEAP: _set, ...rest } = process.env;
    const env = { ...rest, SOLVERLAB_HEAP_REEXEC: '1', NODE_OPTIONS: '' };
    const { child, ended } = start(dir, ['run', '--scene', 'necklace', '--param', 'chains=20', '--solver', 'jacobi-cpu', '--frames', '1000000', '--trajectory', 'traj.csv', '--quiet'], env);
    const tmp = await waitForFile(dir, /^traj\.csv\.\d+\.tmp$/, 1e6, child);
    assert.notEqual(tmp, `traj.csv.${child.pid}.tmp`, 'the run is in a child process');
    child.kill('SIGTERM'); // the parent alone, as `kill PID` does
    const r = await ended;
    assert.equal(r.status, 143, r.stderr); // the child died by SIGTERM: 128 + 15, as a shell says it
    assert.match(r.stderr.trim(), new RegExp(`^solverlab: stopped at frame [\\d,]+ of 1,000,000 \\(t = [\\d.]+ s\\); removed the unfinished ${tmp.replace(/\./g, '\\.')}; nothing written$`));
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('compare stopped by SIGINT: which run and frame, nothing written to its folder', async () => {
  const dir = tempDir();
  try {
    const { child, ended } = start(dir, ['compare', '--scenes', 'necklace', '--param', 'chains=20', '--solvers', 'jacobi-cpu,gs-cpu', '--frames', '1000000', '--out', 'out']);
    // compare prints a line per finished run and nothing before: wait until it is running (its first frames)
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(child.exitCode, null, 'still running');
    child.kill('SIGINT');
    const r = await ended;
    assert.equal(r.signal, 'SIGINT', r.stderr);
    const last = r.stderr.trim().split('\n').pop()!;
    assert.match(last, /^solverlab: stopped (in run 1 of 2 \(jacobi-cpu on necklace\) at frame [\d,]+ of 1,000,000|before the first run); nothing written to .*out$/);
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('scenes --export stopped by SIGINT while it writes: the .tmp removed', async () => {
  const dir = tempDir();
  try {
    // 200k beads: about 50 MB, several seconds of writing
    const { child, ended } = start(dir, ['scenes', '--export', 'necklace', '--param', 'chains=5000', '--out', 'big.json']);
    const tmp = await waitForFile(dir, /^big\.json\.\d+\.tmp$/, 1e6, child);
    child.kill('SIGINT');
    const r = await ended;
    assert.equal(r.signal, 'SIGINT', r.stderr);
    assert.equal(r.stderr.trim(), `solverlab: stopped while writing the scene to ${join(dir, 'big.json')}; removed the unfinished ${tmp}`);
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('./solverlab through a symbolic link, and a link to that link, from another folder', () => {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  try {
    symlinkSync(join(root, 'solverlab'), join(dir, 'solverlab'));
    symlinkSync(join(dir, 'solverlab'), join(dir, 'sl'));
    for (const link of ['solverlab', 'sl']) {
      const r = spawnSync(join(dir, link), ['solvers'], { cwd: '/', encoding: 'utf8' });
      assert.equal(r.status, 0, `${link}: ${r.stderr}`);
      assert.match(r.stdout, /^jacobi-cpu /m);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no command: the usage on stderr, status 2; help and --help: the usage on stdout, status 0', () => {
  const none = spawnSync(process.execPath, nodeCli, { encoding: 'utf8' });
  assert.equal(none.status, 2, none.stderr);
  assert.equal(none.stdout, '');
  assert.match(none.stderr, /^solverlab: no command given\n/);
  assert.match(none.stderr, /^ {2}solverlab run {2}— /m);
  for (const h of ['help', '--help']) {
    const r = spawnSync(process.execPath, [...nodeCli, h], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^ {2}solverlab compare {2}— /m);
  }
});
