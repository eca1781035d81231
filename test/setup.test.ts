/**
 * The clone's launcher (./solverlab) and its set-up check (scripts/setup.sh):
 *   - the launcher runs from any folder, including a path with spaces, '#' and '%';
 *   - the check of the Vulkan loader is exact and reads the linker cache whole: a listing long
 *     enough to fill the pipe (where `ldconfig -p | grep -q` killed ldconfig with SIGPIPE and,
 *     under pipefail, reported an installed library as missing) gives the same answer 50 times
 *     out of 50, as root and as a user without /sbin on the PATH;
 *   - and it is not vacuous: a cache without libvulkan.so.1 is reported, naming the file and the package.
 * `--check` installs nothing, so these runs never call apt-get.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, chmodSync, symlinkSync, mkdirSync, existsSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const setup = join(root, 'scripts/setup.sh');
const icd = '/usr/lib/chromium/vk_swiftshader_icd.json';
const vulkanInstalled = existsSync(icd) && ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib/aarch64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib'].some((d) => existsSync(join(d, 'libvulkan.so.1')));
const isRoot = process.getuid?.() === 0;

/** A folder with a fake `ldconfig` whose `-p` listing is `lines`, then `fill` bytes more (then exit `status`). */
function fakeLdconfig(lines: string[], fill: number, status = 0): string {
  const dir = mkdtempSync(join(tmpdir(), 'solverlab-ldconfig-'));
  chmodSync(dir, 0o755);
  const filler = `\tlibfiller.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libfiller.so.0`;
  const script = `#!/bin/bash
echo "${lines.length + Math.ceil(fill / filler.length)} libs found in cache \\\`/etc/ld.so.cache'"
${lines.map((l) => `printf '%s\\n' '${l}'`).join('\n')}
for ((i = 0; i < ${Math.ceil(fill / filler.length)}; i++)); do printf '%s\\n' '${filler}'; done
exit ${status}
`;
  writeFileSync(join(dir, 'ldconfig'), script);
  chmodSync(join(dir, 'ldconfig'), 0o755);
  return dir;
}

/**
 * What `setup.sh --check` reads, copied where every user can read it: the script, package-lock.json and
 * the installed packages' lock hash. The clone itself may sit in a folder that user nobody cannot
 * enter (a home folder, a `mktemp -d`), where running its setup.sh as nobody is refused.
 */
function readableCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'solverlab-setup-copy-'));
  for (const d of [dir, join(dir, 'scripts'), join(dir, 'node_modules')]) {
    mkdirSync(d, { recursive: true });
    chmodSync(d, 0o755);
  }
  for (const f of ['scripts/setup.sh', 'package-lock.json', 'node_modules/.solverlab-lock-sha256']) {
    if (!existsSync(join(root, f))) continue;
    copyFileSync(join(root, f), join(dir, f));
    chmodSync(join(dir, f), 0o644);
  }
  return dir;
}

function runCheck(env: Record<string, string>, asNobody = false, copy?: string) {
  const args = ['bash', asNobody ? join(copy!, 'scripts/setup.sh') : setup, '--check'];
  const cmd = asNobody ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...args] : args;
  return spawnSync(cmd[0], cmd.slice(1), { env: { HOME: tmpdir(), ...env }, encoding: 'utf8', cwd: tmpdir() });
}

const vulkanLine = '\tlibvulkan.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libvulkan.so.1';

test('launcher: ./solverlab runs from another folder, and from a clone under a path with spaces, # and %', (t) => {
  const fromTmp = spawnSync(join(root, 'solverlab'), ['scenes'], { cwd: tmpdir(), encoding: 'utf8' });
  assert.equal(fromTmp.status, 0, fromTmp.stderr);
  assert.match(fromTmp.stdout, /^necklace {2}— /m);
  assert.doesNotMatch(fromTmp.stderr, /ERR_MODULE_NOT_FOUND|tsx/);
  const base = mkdtempSync(join(tmpdir(), 'solverlab launcher '));
  const odd = join(base, 'a #1 100%');
  mkdirSync(odd);
  symlinkSync(root, join(odd, 'clone'));
  try {
    const r = spawnSync(join(odd, 'clone', 'solverlab'), ['solvers'], { cwd: '/', encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^jacobi-cpu /m);
    t.diagnostic(`ran from ${tmpdir()} and from '${join(odd, 'clone')}'`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('setup check: an installed Vulkan loader is found 50 times out of 50, with a listing that fills the pipe', { skip: !vulkanInstalled && 'the software GPU is not installed here' }, () => {
  // 256 kB after the match: four pipe buffers, so a reader that stopped at the match would leave
  // ldconfig writing into a closed pipe
  const dir = fakeLdconfig([vulkanLine], 256 * 1024);
  try {
    for (let i = 0; i < 50; i++) {
      const r = runCheck({ PATH: `${dir}:/usr/bin:/bin` });
      assert.equal(r.stderr, '', `run ${i + 1}: ${r.stderr}`);
      assert.equal(r.status, 0, `run ${i + 1}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('setup check: the real linker cache, 50 runs in a row, as root and as a user without /sbin on the PATH', { skip: !vulkanInstalled && 'the software GPU is not installed here' }, (t) => {
  const users = isRoot ? [false, true] : [false];
  if (!isRoot) t.diagnostic('not root: the run as user nobody is left out');
  // as nobody: a readable copy of what the check reads (the clone's folder may be closed to nobody)
  const copy = isRoot ? readableCopy() : undefined;
  try {
    for (const asNobody of users) {
      for (let i = 0; i < 50; i++) {
        const r = runCheck({ PATH: asNobody ? '/usr/bin:/bin' : `/usr/sbin:/sbin:/usr/bin:/bin` }, asNobody, copy);
        assert.equal(r.stderr, '', `${asNobody ? 'nobody' : 'this user'}, run ${i + 1}: ${r.stderr}`);
        assert.equal(r.status, 0);
      }
    }
  } finally {
    if (copy) rmSync(copy, { recursive: true, force: true });
  }
});

test('setup check: a cache without libvulkan.so.1 (only a look-alike) is reported, naming the file and the package; ldconfig failing falls back to the library folders', { skip: !vulkanInstalled && 'the software GPU is not installed here' }, () => {
  // 'libvulkan.so.1.3' is another soname: an exact comparison must not take it for the loader
  const without = fakeLdconfig(['\tlibvulkan.so.1.3 (libc6,x86-64) => /opt/x/libvulkan.so.1.3', '\tlibfoo.so.2 (libc6,x86-64) => /lib/libfoo.so.2'], 100 * 1024);
  const failing = fakeLdconfig([], 0, 1);
  try {
    const r = runCheck({ PATH: `${without}:/usr/bin:/bin` });
    assert.equal(r.status, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^solverlab: missing: libvulkan\.so\.1 \(Debian packages libvulkan1: as root, apt-get install libvulkan1\)/);
    const f = runCheck({ PATH: `${failing}:/usr/bin:/bin` });
    assert.equal(f.stderr, '');
    assert.equal(f.status, 0);
  } finally {
    rmSync(without, { recursive: true, force: true });
    rmSync(failing, { recursive: true, force: true });
  }
});
