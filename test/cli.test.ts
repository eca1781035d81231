/**
 * The command line: bad input is one line on stderr with exit status 2 and nothing
 * written; a good run prints the summary and writes its JSON; a run that blows up
 * says "diverged at frame N", flags it in the JSON, exits 3, and prints no NaN.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
