/**
 * The command line: bad input is one line on stderr with exit status 2 and nothing
 * written; a good run prints the summary and writes its JSON; a run that blows up
 * says "diverged at frame N", flags it in the JSON, exits 3, and prints no NaN.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { solvers } from '../src/solvers/registry.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jointSceneFile, undeclaredJoint } from './support/hinge-scene.js';

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], { encoding: 'utf8' });
const dir = mkdtempSync(join(tmpdir(), 'solverlab-cli-'));

test('bad arguments: one line on stderr, exit status 2, no stack trace, nothing written', () => {
  const json = join(dir, 'bad.json');
  const cases: [string[], RegExp][] = [
    [['run', '--scene', 'nope'], /unknown scene 'nope'/],
    [['run', '--scene', 'necklace', '--solver', 'nope'], /unknown solver 'nope'/],
    [['run', '--scene', 'necklace', '--param', 'foo=1'], /no parameter 'foo'/],
    [['run', '--scene', 'necklace', '--param', 'chains=abc'], /chains must be a number/],
    [['run', '--scene', 'necklace', '--param', 'chains=2.5'], /'chains' must be an integer/],
    [['run', '--scene', 'necklace', '--frames', '-3'], /--frames must be ≥ 0/],
    [['run', '--scene', 'necklace', '--iterations', 'x'], /--iterations must be a number/],
    [['run', '--scene', 'necklace', '--dt', '0'], /--dt must be ≥/],
    [['run', '--scene', 'necklace', '--warm-start', '2'], /--warm-start must be ≤ 1/],
    [['run', '--scene', 'necklace', '--bogus'], /unknown option '--bogus'/],
    [['run', '--scene', 'pendulum', '--trace', '5'], /out of range/],
    [['frobnicate'], /unknown command/],
    // numbers are decimal: hexadecimal, octal, binary, digit separators and Infinity are refused, naming the flag
    [['run', '--scene', 'pendulum', '--frames', '0x10'], /--frames must be a number, got '0x10'/],
    [['run', '--scene', 'pendulum', '--iterations', '0o10'], /--iterations must be a number, got '0o10'/],
    [['run', '--scene', 'pendulum', '--substeps', '0b11'], /--substeps must be a number/],
    [['run', '--scene', 'pendulum', '--frames', '1_000'], /--frames must be a number/],
    [['run', '--scene', 'pendulum', '--dt', 'Infinity'], /--dt must be a number/],
    [['run', '--scene', 'necklace', '--param', 'chains=0x10'], /--param chains must be a number/],
    [['run', '--scene', 'pendulum', '--frames'], /option '--frames' needs a value/],
    [['run', '--scene', 'pendulum', '--frames', '--quiet'], /option '--frames' needs a value/],
    [['run', '--scene', 'pendulum', '--quiet=yes'], /option '--quiet' takes no value/],
    [['run', '--scene', 'pendulum', '--frames', '5', '--frames', '6'], /option '--frames' given twice/],
    [['run', '--scene', 'pendulum', 'extra'], /unexpected argument 'extra'/],
    [['run', '--scene', 'pendulum', '-x'], /unexpected argument '-x'/],
    [['run', '--scene', 'pendulum', '--solver', 'jacobi-cpu', '--constraints'], /--constraints: solver jacobi-cpu does not report constraint forces/],
  ];
  const noFolder = cli('run', '--scene', 'necklace', '--json', join(dir, 'no/such/folder/x.json'));
  assert.equal(noFolder.status, 2);
  assert.match(noFolder.stderr, /does not exist/);
  for (const [args, message] of cases) {
    const r = cli(...args, '--json', json);
    assert.equal(r.status, 2, `${args.join(' ')} → status ${r.status}: ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `${args.join(' ')}: expected one line, got:\n${r.stderr}`);
    assert.match(lines[0], message);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.equal(existsSync(json), false);
  }
});

test('a run prints the summary and writes the JSON with its per-frame series and traces', () => {
  const json = join(dir, 'ok.json');
  const r = cli('run', '--scene', 'hanging-chain', '--param', 'beads=5', '--solver', 'jacobi-cpu', '--frames', '600', '--json', json, '--trace', '0,4');
  assert.equal(r.status, 0, r.stderr);
  for (const key of ['bodies', 'step time', 'steps/s', 'violation', 'energy']) assert.match(r.stdout, new RegExp(key));
  const j = JSON.parse(readFileSync(json, 'utf8'));
  assert.equal(j.frames, 600);
  assert.equal(j.series.length, 601);
  assert.equal(j.diverged, null);
  assert.deepEqual(Object.keys(j.series[5].trace), ['0', '4']);
  // the JSON figures are the physics, not placeholders: a 5-bead chain at rest settles below 0.1 mm
  assert.ok(j.violation.finalMax < 1e-4, `final max violation ${j.violation.finalMax}`);
  assert.ok(j.violation.worstMax >= j.violation.finalMax);
  assert.equal(j.series[600].maxViolation, j.violation.finalMax);
});

test('divergence is a reported outcome: "diverged at frame N", flagged in the JSON, exit 3, no NaN', () => {
  const json = join(dir, 'div.json');
  // measured: the 10-bead hanging chain, warm-started at 8 iterations, blows up within seconds
  const r = cli('run', '--scene', 'hanging-chain', '--param', 'beads=10', '--solver', 'jacobi-cpu', '--frames', '900', '--json', json);
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stdout, /DIVERGED\s+at frame \d+/);
  assert.doesNotMatch(r.stdout, /NaN|Infinity/);
  const text = readFileSync(json, 'utf8');
  assert.doesNotMatch(text, /NaN|Infinity/);
  const j = JSON.parse(text);
  assert.ok(j.diverged && j.diverged.frame > 0 && j.diverged.frame < 900);
  assert.equal(j.violation.finalMax, null);
});

test('no GPU adapter: jacobi-gpu stops with one line saying what to install; jacobi-cpu still runs', () => {
  // a Vulkan loader pointed at no driver finds no adapter, as on a machine without a GPU or SwiftShader
  const env = { ...process.env, VK_ICD_FILENAMES: join(dir, 'no-such-icd.json') };
  const run = (solver: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'run', '--scene', 'pendulum', '--solver', solver, '--frames', '10'], { encoding: 'utf8', env });
  const gpu = run('jacobi-gpu');
  assert.equal(gpu.status, 1, gpu.stderr);
  const ours = gpu.stderr.split('\n').filter((l) => l.startsWith('solverlab:'));
  assert.equal(ours.length, 1, gpu.stderr);
  assert.match(ours[0], /no WebGPU adapter: .*apt-get install chromium-common/);
  const cpu = run('jacobi-cpu');
  assert.equal(cpu.status, 0, cpu.stderr);
  assert.match(cpu.stdout, /violation/);
});

/** The options the parser takes for `command`, from its own error message for an unknown one. */
function parserOptions(command: string, ...args: string[]): string[] {
  const r = cli(command, ...args, '--no-such-option');
  assert.equal(r.status, 2, r.stderr);
  const m = /\(options: (.*)\)/.exec(r.stderr);
  assert.ok(m, r.stderr);
  return m![1].split(', ');
}

test('--help of every command lists every option the parser takes, and nothing else', () => {
  for (const command of ['run', 'compare', 'scenes', 'solvers', 'bench', 'view']) {
    const help = cli(command, '--help');
    assert.equal(help.status, 0, help.stderr);
    const listed = [...help.stdout.matchAll(/^ {2}(--[a-z][a-z-]*)/gm)].map((m) => m[1]);
    if (command === 'solvers') {
      assert.deepEqual(listed, [], help.stdout);
      continue;
    }
    assert.deepEqual([...listed].sort(), [...parserOptions(command)].sort(), `${command} --help:\n${help.stdout}`);
    // every listed option has a line saying what it does
    for (const line of help.stdout.split('\n').filter((l) => /^ {2}--/.test(l))) assert.match(line, /^ {2}--\S+( \S+)?( …)? +\S|^ {2}--\S+( \S+)?( …)?$/, line);
  }
  // the options issue 13 found missing, each with the solvers that read it
  const run = cli('run', '--help').stdout;
  for (const flag of ['--compliance', '--linear-damping', '--angular-damping', '--ks', '--kd', '--beta', '--warm-start', '--constraints', '--json', '--verbose'])
    assert.match(run, new RegExp(`^  ${flag}\\b`, 'm'), flag);
  assert.match(run, /--ks X[\s\S]*read by witkin-euler, witkin-symplectic, witkin-rk4/);
  assert.match(run, /--beta X[\s\S]*?read by [^\n]*jacobi-cpu/);
  // `solverlab help run` is `solverlab run --help`; the overview names every command's options
  assert.equal(cli('help', 'run').stdout, run);
  const overview = cli('--help').stdout;
  for (const flag of parserOptions('compare')) assert.ok(overview.includes(`[${flag}`), `${flag} in the overview`);
});

test('a particle run prints a summary, the per-constraint table only with --constraints; both agree', () => {
  const quiet = cli('run', '--scene', 'cloth', '--frames', '2', '--quiet');
  assert.equal(quiet.status, 0, quiet.stderr);
  const lines = quiet.stdout.trim().split('\n');
  assert.ok(lines.length <= 16, `${lines.length} lines:\n${quiet.stdout}`);
  const digest = /forces at the initial state of (\d+) constraints, largest force ([\d.e+-]+) N/.exec(quiet.stdout);
  assert.ok(digest, quiet.stdout);
  assert.equal(Number(digest![1]), 114, 'the 8 × 8 cloth: 2·8·7 rods and 2 nails');
  const table = cli('run', '--scene', 'cloth', '--frames', '2', '--quiet', '--constraints');
  assert.equal(table.status, 0, table.stderr);
  const rows = table.stdout.split('\n').filter((l) => l.startsWith('constraint  ') && l.includes('λ ='));
  assert.equal(rows.length, 114);
  // the largest force the summary names is the largest of the table's (printed to 6 figures there, 4 in the digest)
  const forces = rows.flatMap((l) => [...l.matchAll(/\(([^()]+)\) N on/g)].map((m) => Math.hypot(...m[1].split(', ').map(Number))));
  const largest = Math.max(...forces);
  assert.ok(Math.abs(largest - Number(digest![2])) <= 1e-3 * largest, `${largest} against ${digest![2]}`);
  // a nail holds its corner against gravity and its rods: the largest force is at least m g of a particle (0.01 kg)
  assert.ok(largest >= 0.01 * 9.81 * (1 - 1e-6), `${largest} N`);
});

test("--json - writes the record to standard output (valid JSON) and the summary to standard error; no file '-'", () => {
  const cwd = mkdtempSync(join(tmpdir(), 'solverlab-json-'));
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), join(process.cwd(), 'src/cli/bin.ts'), 'run', '--scene', 'pendulum', '--solver', 'jacobi-cpu', '--frames', '30', '--json', '-', '--quiet'], { encoding: 'utf8', cwd });
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.frames, 30);
  assert.equal(j.series.length, 31);
  assert.match(r.stderr, /^scene {7}pendulum/m);
  assert.match(r.stderr, /state hash {2}[0-9a-f]{16}/);
  assert.equal(r.stderr.match(/state hash {2}([0-9a-f]{16})/)![1], j.finalStateHash, 'the summary and the record describe the same run');
  assert.equal(existsSync(join(cwd, '-')), false);
});

test('--json - into a pipe carries a record larger than the pipe buffer whole (the process waits for standard output before it exits)', () => {
  // 600 frames of 80 beads: a record of about 110 kB, above Linux's 64 KiB pipe buffer; exiting at once cut it there
  const q = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  // through the clone's launcher into a shell pipe, as a user runs it (spawnSync's own pipe, or node without the
  // launcher's heap flag, happened to drain in time)
  const command = [join(process.cwd(), 'solverlab'), 'run', '--scene', 'necklace', '--param', 'chains=2', '--solver', 'jacobi-cpu', '--frames', '600', '--json', '-', '--quiet'].map(q).join(' ');
  // the cut depended on timing (about one run in two on this machine before the fix): four runs
  for (let run = 0; run < 4; run++) {
    const r = spawnSync('bash', ['-c', `set -o pipefail; ${command} | cat`], { encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.length > 65536, `${r.stdout.length} characters: the record is cut at the pipe buffer, or the case no longer exceeds it`);
    const j = JSON.parse(r.stdout);
    assert.equal(j.frames, 600);
    assert.equal(j.series.length, 601);
  }
});

test("a run shows only the options its solver reads; options it does not read are noted, not silently taken", () => {
  const optionsLine = (out: string) => out.split('\n').find((l) => l.startsWith('options '))!;
  const multibody = cli('run', '--scene', 'pendulum', '--solver', 'rapier-multibody', '--frames', '2', '--quiet', '--beta', '0.5');
  assert.equal(multibody.status, 0, multibody.stderr);
  assert.doesNotMatch(optionsLine(multibody.stdout), /β|warm start|compliance|damping/);
  assert.match(optionsLine(multibody.stdout), /dt 0\.0166667 s · 8 iterations · 1 substep$/);
  assert.match(multibody.stderr, /rapier-multibody does not read --beta \(ignored\); it reads --dt, --iterations, --substeps/);
  const jacobi = cli('run', '--scene', 'pendulum', '--solver', 'jacobi-cpu', '--frames', '2', '--quiet');
  assert.match(optionsLine(jacobi.stdout), /8 iterations · 1 substep · β 0\.2\/h · warm start 1/);
  assert.doesNotMatch(jacobi.stderr, /does not read/);
  // the particle solvers: dt, substeps and the feedback gains, no iterations
  const witkin = cli('run', '--scene', 'bead-on-wire', '--frames', '2', '--quiet', '--iterations', '3');
  assert.doesNotMatch(optionsLine(witkin.stdout), /iteration|β|warm/);
  assert.match(witkin.stderr, /witkin-rk4 does not read --iterations/);
  // an option a solver cannot honour is refused, not noted: Rapier's joints here are rigid
  const soft = cli('run', '--scene', 'pendulum', '--solver', 'rapier', '--frames', '2', '--compliance', '1e-3');
  assert.equal(soft.status, 2, soft.stderr);
  assert.deepEqual(soft.stderr.trim().split('\n'), ["solverlab: rapier cannot run scene 'pendulum': --compliance is not mapped to Rapier; its joints here are rigid"]);
});

test('a scene with a constraint type or shape a solver does not declare is refused with the reason from its declaration', (t) => {
  // a solver and a joint type it does not declare (the lists grow as solvers gain joints: whichever, today)
  const lack = undeclaredJoint(solvers);
  if (!lack) return t.skip('every rigid solver declares every joint type');
  const { info, type } = lack;
  const file = join(dir, 'joint.json');
  writeFileSync(file, JSON.stringify(jointSceneFile(type)));
  const declared = info.supports!;
  const r = cli('run', '--scene', file, '--solver', info.id, '--frames', '1');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr.trim(), new RegExp(`^solverlab: ${info.id} cannot run scene 'joint': ${info.id} does not support ${type} joints \\(constraints\\[1\\]\\)$`));
  // `solverlab solvers` prints the same declaration
  const listing = cli('solvers').stdout;
  assert.ok(listing.includes(`supports constraints: ${declared.constraints.join(', ')}; shapes: ${declared.shapes.join(', ')}`), listing);
});

test('counts read as numbers do: "1 body, 1 constraint", thousands grouped', () => {
  const out = join(dir, 'pendulum-scene.json');
  const one = cli('scenes', '--export', 'pendulum', '--out', out);
  assert.equal(one.status, 0, one.stderr);
  assert.match(one.stderr, /\(1 body, 1 constraint\)/);
  const many = cli('scenes', '--export', 'necklace', '--param', 'chains=30', '--out', join(dir, 'necklace-scene.json'));
  assert.match(many.stderr, /\(1,200 bodies, 1,200 constraints\)/);
});

test('bench prints figures (steps/s, their ratio, violations), not our targets', () => {
  const out = join(dir, 'bench.json');
  const r = cli('bench', '--sizes', '40', '--frames', '3', '--solvers', 'jacobi-cpu,rapier', '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /goal|not met|\bmet\b/);
  const j = JSON.parse(readFileSync(out, 'utf8'));
  const c = j.comparisons[0];
  // the printed ratio is the recorded steps/s of each, divided
  const m = /40 beads: jacobi-cpu ([\d.,]+)× rapier's steps\/s \(([\d.,]+) against ([\d.,]+)\)/.exec(r.stderr);
  assert.ok(m, r.stderr);
  const num = (s: string) => Number(s.replace(/,/g, ''));
  assert.ok(Math.abs(num(m![1]) - c.stepsPerSecond / c.baselineStepsPerSecond) <= 0.01 * num(m![1]) + 0.01, `${m![1]} against ${c.stepsPerSecondRatio}`);
  assert.ok(Math.abs(num(m![2]) - c.stepsPerSecond) <= 1e-3 * c.stepsPerSecond + 1);
});

test("Dawn's known-harmless warnings stay out of the terminal; --verbose shows the GPU driver's diagnostics", (t) => {
  const quiet = cli('run', '--scene', 'pendulum', '--solver', 'jacobi-gpu', '--frames', '2');
  if (quiet.status === 1 && /no WebGPU adapter/.test(quiet.stderr)) return t.skip('no WebGPU adapter here');
  assert.equal(quiet.status, 0, quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /vkCreateInstance|CheckVkSuccessImpl|^Warning:/m, quiet.stderr);
  assert.deepEqual(quiet.stderr.trim().split('\n').filter((l) => !l.startsWith('adapter: ')), [], quiet.stderr);
  const verbose = cli('run', '--scene', 'pendulum', '--solver', 'jacobi-gpu', '--frames', '2', '--verbose');
  assert.equal(verbose.status, 0, verbose.stderr);
  t.diagnostic(`--verbose stderr: ${JSON.stringify(verbose.stderr.slice(0, 300))}`);
  // the same run either way: the warnings are the loader's, not the simulation's
  const hash = (s: string) => /state hash {2}(\S+)/.exec(s)![1];
  assert.equal(hash(verbose.stdout), hash(quiet.stdout));
});

test("the Vulkan loader's driver search, as vulkanDriverManifests reads it (what decides whether Dawn's doomed attempt is made)", async () => {
  const { vulkanDriverManifests } = await import('../src/gpu/vulkan-drivers.js');
  const root = mkdtempSync(join(tmpdir(), 'solverlab-icd-'));
  const empty = { HOME: join(root, 'home'), XDG_CONFIG_DIRS: join(root, 'none'), XDG_DATA_DIRS: join(root, 'none') };
  // /etc/vulkan/icd.d is always searched: whatever this machine has there is in every answer
  const etc = await vulkanDriverManifests(empty);
  assert.ok(etc.every((p) => p.startsWith('/etc/vulkan/icd.d/')), etc.join());
  // a manifest in $XDG_DATA_DIRS/vulkan/icd.d is found; a file that is not .json is not
  mkdirSync(join(root, 'share', 'vulkan', 'icd.d'), { recursive: true });
  writeFileSync(join(root, 'share', 'vulkan', 'icd.d', 'gpu.json'), '{}');
  writeFileSync(join(root, 'share', 'vulkan', 'icd.d', 'README'), '');
  assert.deepEqual(await vulkanDriverManifests({ ...empty, XDG_DATA_DIRS: join(root, 'share') }), [...etc, join(root, 'share', 'vulkan', 'icd.d', 'gpu.json')]);
  // VK_ICD_FILENAMES (or VK_DRIVER_FILES) replaces the search: only the files it names that exist
  const icd = join(root, 'sw.json');
  writeFileSync(icd, '{}');
  assert.deepEqual(await vulkanDriverManifests({ ...empty, VK_ICD_FILENAMES: `${icd}:${join(root, 'missing.json')}` }), [icd]);
  assert.deepEqual(await vulkanDriverManifests({ ...empty, VK_DRIVER_FILES: join(root, 'missing.json') }), []);
});

test('run --residuals at a frame with no rows (a box still falling, no joints) says so, instead of printing the legend alone', () => {
  const r = cli('run', '--scene', 'single-box', '--solver', 'pgs-cpu', '--frames', '2', '--residuals', '1');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /residual {4}frame 1: no rows to solve/);
});
