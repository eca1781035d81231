/**
 * README.md and docs/*.md hold to the tool (issue 22, item 6):
 *   - every `solverlab …` command they show parses: the parser and the names and numbers each command
 *     takes (src/cli/parse-check.ts), nothing run; a synopsis with placeholders (NAME, FILE, […], …)
 *     is not a command and is left out, and the test says how many;
 *   - the Quick start is the compare that scripts/doc-figures.ts measures, then exactly `./scripts/test.sh`,
 *     which .ci/run calls too;
 *   - the README's solver and scene tables list every solver and scene the registries have;
 *   - the generated blocks (each solver's defaults, the restitution bounces) are what the script gives now;
 *   - every JSON example in the README is a valid scene file, and every relative link points to a file;
 *   - "none: every rigid solver that takes joints runs it" (pendulum) holds: none of them refuses it or diverges.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { checkCommandLine } from '../src/cli/parse-check.js';
import { solvers, findSolver } from '../src/solvers/registry.js';
import { scenes, findRigidScene } from '../src/scenes/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { runSolver } from '../src/run/run.js';
import { parseSceneFile } from '../src/index.js';
import { QUICKSTART, generate, current, unstamped } from '../scripts/doc-figures.js';

const root = resolve(import.meta.dirname, '..');
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const text = (page: string) => readFileSync(join(root, page), 'utf8');

/** A command's words, as a shell would split this simple text (no quotes are used in the docs' commands). */
const words = (cmd: string) => cmd.trim().split(/\s+/);

/** Every command shown: lines of ```sh blocks (with \ continuations) and inline `solverlab …` spans. */
function commandsIn(page: string): { cmd: string; where: string }[] {
  const out: { cmd: string; where: string }[] = [];
  const body = text(page);
  for (const m of body.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)) {
    const joined = m[1].replace(/\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) {
      const t = line.replace(/#.*$/, '').trim();
      if (/^(\.\/)?solverlab\b/.test(t)) out.push({ cmd: t, where: `${page} (code block)` });
    }
  }
  // inline spans, also across a line break; the Jacobi table's `run --scene …` cells are `solverlab run …`
  for (const m of body.matchAll(/`((?:\.\/)?solverlab [^`]+|run --scene [^`]+)`/g)) out.push({ cmd: m[1].replace(/\s+/g, ' '), where: `${page} (inline)` });
  return out;
}

/** A synopsis, not a command: placeholders in capitals, optional parts, alternatives, an ellipsis or a pipe to another tool. */
const synopsis = (cmd: string) => /[…\[|]|\b(NAME|ID|FILE|COMMAND|FRAMES|OUT|CHAINS|SOLVER|DIR)\b/.test(cmd);

test('every solverlab command shown in README.md and docs/*.md parses (nothing is run)', (t) => {
  let checked = 0, skipped = 0;
  const faults: string[] = [];
  for (const page of pages) {
    for (const { cmd, where } of commandsIn(page)) {
      if (synopsis(cmd)) {
        skipped++;
        continue;
      }
      const argv = words(cmd).filter((w, i) => !(i === 0 && /^(\.\/)?solverlab$/.test(w)));
      try {
        checkCommandLine(argv);
        checked++;
      } catch (e) {
        faults.push(`${where}: ${cmd}\n    ${(e as Error).message}`);
      }
    }
  }
  t.diagnostic(`${checked} commands parsed, ${skipped} synopses (placeholders) left out`);
  assert.deepEqual(faults, []);
  assert.ok(checked >= 20, `only ${checked} commands found: the extraction is broken`);
});

test('the parse check is not vacuous: a wrong option, scene, solver, parameter or number is refused', () => {
  for (const bad of [
    'run --scene necklace --frobnicate 1',
    'run --scene nosuch',
    'run --scene necklace --solver nosuch',
    'run --scene necklace --param chainz=2',
    'run --scene necklace --frames 0x10',
    'compare --scenes pyramid --solvers rapier:beta=0.3',
    'compare --scenes pyramid,nosuch --solvers rapier',
    'scenes --export nosuch',
  ])
    assert.throws(() => checkCommandLine(words(bad)), /./, bad);
  checkCommandLine(words('run --scene necklace --param chains=2 --solver xpbd-cpu --frames 10'));
});

test('the Quick start: the measured compare, then exactly ./scripts/test.sh, which .ci/run calls', () => {
  const readme = text('README.md');
  const quick = /## Quick start\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1].trim().split('\n');
  assert.deepEqual(quick, [`./solverlab ${QUICKSTART.join(' ')}`, './scripts/test.sh']);
  assert.match(readme, /<!-- figures:quickstart -->\n```text\n\$ \.\/solverlab compare/, 'its output is the block scripts/doc-figures.ts wrote');
  const ci = readFileSync(join(root, '.ci/run'), 'utf8');
  assert.match(ci, /^bash scripts\/test\.sh$/m);
});

test("the README's tables list every solver and every scene", () => {
  const readme = text('README.md');
  const section = (title: string) => readme.split(`## ${title}\n`)[1].split('\n## ')[0];
  const listed = (s: string) => new Set([...s.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1].matchAll(/`([^`]+)`/g)].map((x) => x[1])));
  const solverRows = listed(section('Solvers'));
  assert.deepEqual(solvers.map((s) => s.id).filter((id) => !solverRows.has(id)), []);
  const sceneRows = listed(section('Scenes'));
  assert.deepEqual(scenes.map((s) => s.name).filter((n) => !sceneRows.has(n)), []);
  const rigid = solvers.filter((s) => s.supports).length;
  assert.match(readme, new RegExp(`now ${['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'][rigid]} rigid solvers`));
});

test('the generated blocks are current: each solver\'s defaults (registry) and the restitution bounces (deterministic runs)', async () => {
  for (const name of ['options', 'restitution']) assert.equal(unstamped(current(name)), unstamped(await generate(name)), `node --import tsx scripts/doc-figures.ts ${name}`);
});

test('JSON examples in the README are valid scene files; relative links point to files', () => {
  const readme = text('README.md');
  const examples = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(examples.length >= 1);
  for (const e of examples) parseSceneFile(e);
  const broken: string[] = [];
  for (const page of pages)
    for (const m of text(page).matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)) if (!existsSync(join(root, dirname(page), m[1]))) broken.push(`${page}: ${m[1]}`);
  assert.deepEqual(broken, []);
});

test('pendulum: every rigid solver that takes joints runs it (none of them refuses it; none diverges: 600 frames on the CPU, 60 on the GPU)', async () => {
  const world = findRigidScene('pendulum')!.build();
  // fifteen of the sixteen: softstep-gpu has contacts only, and refuses a joint with the reason
  const rigid = solvers.filter((s) => s.supports && s.supports.constraints.includes('point'));
  assert.equal(rigid.length, 15);
  const jointless = solvers.filter((s) => s.supports && !s.supports.constraints.includes('point'));
  for (const info of jointless) assert.match(info.unsupported?.(world, resolveOptions(info, {}, world)) ?? '', /does not support point joints/, info.id);
  const { acquireGpu } = await import('../src/gpu/device.js');
  let gpu: Awaited<ReturnType<typeof acquireGpu>> | undefined;
  for (const info of rigid) {
    const options = resolveOptions(info, {}, world);
    assert.equal(info.unsupported?.(world, options) ?? null, null, info.id);
    if (info.device === 'gpu') gpu ??= await acquireGpu();
    const solver = await findSolver(info.id)!.create(world, options, info.device === 'gpu' ? gpu : undefined);
    // a GPU solver on SwiftShader: 60 frames (global-gpu takes about a second a frame's 64 CG
    // iterations there under load); its CPU twin runs the 600, and the GPU tests hold each to its twin
    const frames = info.device === 'gpu' ? 60 : 600;
    const r = await runSolver(solver, world, { frames, sampleEvery: 20 });
    solver.destroy();
    assert.equal(r.diverged, null, `${info.id}: ${JSON.stringify(r.diverged)}`);
    assert.equal(r.frames, frames);
  }
  gpu?.device.destroy();
});
