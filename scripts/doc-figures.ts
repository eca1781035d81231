/**
 * The figures of README.md and docs/*.md that are measured or generated: each generator writes its
 * block between the markers `<!-- figures:NAME -->` and `<!-- /figures:NAME -->` in its file, with the
 * command that wrote it and the date, so a figure in the docs is what this script printed, not typed.
 *
 *   node --import tsx scripts/doc-figures.ts [NAME …]      regenerate these blocks (all without names)
 *   node --import tsx scripts/doc-figures.ts --check NAME  exit 1 if the block differs from what NAME
 *                                                         gives now (not the timed ones; the stamp line aside)
 *
 *   quickstart   README.md              the Quick start's compare: its table, and the wall time it took
 *   options      docs/command-line.md   every solver's default for every option it reads (the registry)
 *   restitution  docs/contacts.md       the restitution scene's bounce heights against e²H, every contact solver
 *   scenes       docs/scenes.md         every rigid scene under every CPU rigid solver at its defaults, 600 frames:
 *                                       diverged or not, worst violation or penetration, energy change (minutes)
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { solvers, findSolver } from '../src/solvers/registry.js';
import { solverOptionSpecs, resolveOptions, defaultSolverOptions, type SolverOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { runSolver } from '../src/run/run.js';
import type { Snapshot } from '../src/model/snapshot.js';
import { rigidScenes } from '../src/scenes/registry.js';
import { runCompare } from '../src/bench/compare.js';
import { isSkipped, type RunRecord } from '../src/bench/results.js';

const root = resolve(import.meta.dirname, '..');

interface Generator {
  file: string;
  /** measured (a run whose figures change by machine and moment) or generated from declarations (checkable) */
  measured: boolean;
  make(): Promise<string>;
}

const today = () => new Date().toISOString().slice(0, 10);
const machine = () => `${cpus().length}-core ${cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'CPU'}, Node ${process.versions.node}`;
const stamp = (name: string) => `_Written by \`node --import tsx scripts/doc-figures.ts ${name}\` on ${today()} (${machine()})._`;

/** The Quick start's first command, as README.md shows it (test/doc-commands.test.ts parses it there). */
export const QUICKSTART = ['compare', '--scenes', 'necklace', '--param', 'chains=20', '--solvers', 'jacobi-gpu,xpbd-gpu,rapier', '--frames', '600', '--out', 'quickstart'];

async function quickstart(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'solverlab-quickstart-'));
  try {
    const load = loadavg()[0];
    const t0 = performance.now();
    // under `time`, for the CPU the command used: on a busy machine its wall time says little
    const r = spawnSync('bash', ['-c', 'TIMEFORMAT=%U+%S; time "$0" "$@"', join(root, 'solverlab'), ...QUICKSTART], { cwd: dir, encoding: 'utf8' });
    const wall = (performance.now() - t0) / 1000;
    const cpu = /^([\d.]+)\+([\d.]+)$/m.exec(r.stderr);
    const cpuSeconds = cpu ? Number(cpu[1]) + Number(cpu[2]) : NaN;
    if (r.status !== 0) throw new Error(`quickstart: status ${r.status}: ${r.stderr}`);
    const adapter = /adapter: ([^\n]*)/.exec(r.stderr)?.[1];
    return [
      '```text',
      `$ ./solverlab ${QUICKSTART.join(' ')}`,
      r.stdout.trimEnd(),
      r.stderr.split('\n').find((l) => l.startsWith('written: '))?.replace(dir + '/', '') ?? '',
      '```',
      '',
      `${stamp('quickstart')} The whole command took ${wall.toFixed(0)} s of wall time and ${cpuSeconds.toFixed(0)} s of CPU${adapter ? ` (GPU solvers on ${adapter})` : ''}, set-up included; the load average was ${load.toFixed(1)} on ${cpus().length} cores when it started.`,
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every solver's default of each option it reads; on a scene with contacts where that differs. */
async function options(): Promise<string> {
  const keys = Object.keys(solverOptionSpecs) as (keyof SolverOptions)[];
  const head = `| solver | ${keys.map((k) => `\`--${solverOptionSpecs[k].flag}\``).join(' | ')} |`;
  const rule = `| --- | ${keys.map(() => '---').join(' | ')} |`;
  const rows = solvers.map((s) => {
    const plain = resolveOptions(s);
    const contact = { ...plain, ...s.contactDefaults };
    const cell = (k: keyof SolverOptions) => {
      if (!s.reads.includes(k)) return '·';
      const v = +plain[k].toPrecision(6);
      const c = +contact[k].toPrecision(6);
      return c !== v ? `${v} (contacts: ${c})` : String(v);
    };
    return `| \`${s.id}\` | ${keys.map(cell).join(' | ')} |`;
  });
  const shared = keys.map((k) => `\`--${solverOptionSpecs[k].flag}\` ${+defaultSolverOptions[k].toPrecision(6)}`).join(', ');
  return [
    head,
    rule,
    ...rows,
    '',
    `· = the solver does not read the option (a run names it in a note: ignored). The shared defaults: ${shared}.`,
    'Generated from the registry (`reads`, `defaults`, `contactDefaults` in `src/solvers/`) by',
    '`node --import tsx scripts/doc-figures.ts options`; `test/doc-commands.test.ts` fails when it is out of date.',
  ].join('\n');
}

/**
 * The restitution scene (spheres dropped from H = 2 m with e = 0, 0.25, 0.5, 0.75, 1) under every
 * contact solver at its defaults, 240 frames of 1/60 s: each sphere's first rebound apex (the highest
 * bottom point between its first bounce and its next fall) over e²H, the height an exact bounce reaches.
 */
async function restitution(): Promise<string> {
  const scene = findRigidScene('restitution')!;
  const world = scene.build();
  const H = scene.params.height.default;
  const es = [0.25, 0.5, 0.75, 1];
  const ids = solvers.filter((s) => s.supports?.contacts && s.device === 'cpu').map((s) => s.id);
  const rows: string[] = [];
  for (const id of ids) {
    const info = findSolver(id)!;
    const solver = await info.create(world, resolveOptions(info, {}, world));
    // body 0 is the ground; spheres 1..5 with e = 0, 0.25, …
    const n = 5;
    const radius = (i: number) => (world.bodies[i].shape as { radius: number }).radius;
    const bounced = new Array(n + 1).fill(false);
    const apex = new Array(n + 1).fill(0);
    const done = new Array(n + 1).fill(false);
    const onSnapshot = (s: Snapshot) => {
      for (let i = 2; i <= n; i++) {
        if (done[i]) continue;
        const vy = s.linearVelocity[3 * i + 1];
        const bottom = s.position[3 * i + 1] - radius(i);
        if (!bounced[i] && vy > 0) bounced[i] = true;
        if (bounced[i]) {
          apex[i] = Math.max(apex[i], bottom);
          if (vy < 0) done[i] = true;
        }
      }
    };
    await runSolver(solver, world, { frames: 240, observe: { every: 1, onSnapshot } });
    solver.destroy();
    const cells = es.map((e, k) => {
      const ratio = apex[k + 2] / (e * e * H);
      const pct = (ratio - 1) * 100;
      return `${pct >= 0 ? '+' : '−'}${Math.abs(pct).toFixed(pct !== 0 && Math.abs(pct) < 1 ? 1 : 0)} %`;
    });
    const o = resolveOptions(info, {}, world);
    rows.push(`| \`${id}\` | ${info.reads.includes('iterations') ? o.iterations : '—'} × ${o.substeps} | ${cells.join(' | ')} |`);
  }
  return [
    `| solver | it × sub | e = 0.25 | e = 0.5 | e = 0.75 | e = 1 |`,
    `| --- | --- | --- | --- | --- | --- |`,
    ...rows,
    '',
    `First rebound apex of each sphere's lowest point over e²H (H = ${H} m), −: lower; the \`restitution\` scene at each solver's defaults (sleeping on), dt = 1/60 s, 240 frames.`,
    stamp('restitution'),
  ].join('\n');
}

/** 3 significant figures, e-notation below 1e-3 (the tool's own style). */
function sig(x: number): string {
  if (x === 0) return '0';
  if (Math.abs(x) < 1e-3) return x.toExponential(1).replace('e-', 'e-');
  return String(+x.toPrecision(Math.abs(x) >= 100 ? 4 : 2));
}

/**
 * Every rigid scene under every CPU rigid solver (the GPU solvers give their CPU twins' outcomes:
 * test/jacobi-gpu.test.ts and the others hold them to it) at its defaults, 600 frames of 1/60 s; the
 * necklace at 20 chains (800 beads) rather than its 2,500.
 */
async function scenesMatrix(): Promise<string> {
  // rapier-multibody is left out: on the 20-chain necklace a frame took it 3 s (2026-11-26), and its
  // reduced coordinates are exact by construction (its violation is 6e-6 m there)
  const ids = solvers.filter((s) => s.device === 'cpu' && s.supports && s.id !== 'rapier-multibody').map((s) => s.id);
  const out: string[] = [];
  for (const contacts of [false, true]) {
    // a joint scene keeps collisions off by default (its `collisions` parameter); a contact scene has them
    const names = rigidScenes.filter((s) => ('collisions' in s.params) !== contacts).map((s) => s.name);
    out.push(`| scene | ${ids.map((id) => `\`${id}\``).join(' | ')} |`, `| --- | ${ids.map(() => '---').join(' | ')} |`);
    for (const name of names) {
      const params: Record<string, number> = name === 'necklace' ? { chains: 20 } : {};
      const results = await runCompare({ scenes: [name], solvers: ids, frames: 600, params, residualFrame: undefined });
      const cells = ids.map((id) => {
        const r = results.runs.find((x) => x.solver === id)!;
        if (isSkipped(r)) return 'refused';
        const rec = r as RunRecord;
        if (rec.diverged) return `**diverges at ${rec.diverged.frame}**`;
        const e = rec.energy.driftPercent;
        const energy = e === null || e === undefined ? '' : ` · ${e >= 0 ? '+' : '−'}${sig(Math.abs(e))} %`;
        if (contacts) {
          const pen = rec.contacts?.worstMaxPenetration ?? 0;
          const asleep = rec.awake?.allAsleepT;
          return `${sig(pen * 1000)} mm${energy}${asleep !== null && asleep !== undefined ? ` · asleep ${sig(asleep)} s` : ''}`;
        }
        return `${sig(rec.violation.worstMax ?? NaN)} m${energy}`;
      });
      out.push(`| \`${name}\`${name === 'necklace' ? ' (20 chains)' : ''} | ${cells.join(' | ')} |`);
      process.stderr.write(`scenes: ${name} done\n`);
    }
    out.push('');
  }
  out.push(
    'Each cell: the worst max violation over the run (joint scenes) or the worst penetration (contact scenes), the energy change',
    'from the start (% of |E₀|), and when every body fell asleep; **diverges at N**: the divergence watch stopped it at frame N;',
    "refused: the solver cannot run the scene (the reason is in `compare`'s table). Each solver at its defaults (sleeping on), 600 frames of 1/60 s.",
    "`rapier-multibody` is not in it: a frame of the 20-chain necklace takes it seconds.",
    stamp('scenes'),
  );
  return out.join('\n');
}

const generators: Record<string, Generator> = {
  quickstart: { file: 'README.md', measured: true, make: quickstart },
  options: { file: 'docs/command-line.md', measured: false, make: options },
  // deterministic (CPU solvers and Rapier give the same bits on every run): checkable
  restitution: { file: 'docs/contacts.md', measured: false, make: restitution },
  scenes: { file: 'docs/scenes.md', measured: true, make: scenesMatrix },
};

/** The text between NAME's markers in `text`, or null. */
export function block(text: string, name: string): { start: number; end: number } | null {
  const open = `<!-- figures:${name} -->\n`;
  const close = `<!-- /figures:${name} -->`;
  const a = text.indexOf(open);
  const b = text.indexOf(close);
  return a < 0 || b < a ? null : { start: a + open.length, end: b };
}

export async function generate(name: string): Promise<string> {
  const g = generators[name];
  if (!g) throw new Error(`unknown figures '${name}' (${Object.keys(generators).join(', ')})`);
  return (await g.make()) + '\n';
}

/** The block without its `_Written by …_` line (its date and machine). */
export function unstamped(text: string): string {
  return text.split('\n').filter((l) => !l.startsWith('_Written by ')).join('\n');
}

export function current(name: string): string {
  const g = generators[name];
  const text = readFileSync(join(root, g.file), 'utf8');
  const at = block(text, name);
  if (!at) throw new Error(`${g.file}: no <!-- figures:${name} --> block`);
  return text.slice(at.start, at.end);
}

async function main(argv: string[]) {
  if (argv[0] === '--check') {
    let stale = 0;
    for (const name of argv.slice(1)) {
      if (generators[name]?.measured) throw new Error(`${name} is measured: it cannot be checked, only written again`);
      if (unstamped(current(name)) !== unstamped(await generate(name))) {
        console.error(`${generators[name].file}: the ${name} block is out of date: node --import tsx scripts/doc-figures.ts ${name}`);
        stale++;
      }
    }
    return stale ? 1 : 0;
  }
  for (const name of argv.length ? argv : Object.keys(generators)) {
    const g = generators[name];
    const made = await generate(name);
    const path = join(root, g?.file ?? '');
    const text = readFileSync(path, 'utf8');
    const at = block(text, name);
    if (!at) throw new Error(`${g.file}: no <!-- figures:${name} --> block`);
    writeFileSync(path, text.slice(0, at.start) + made + text.slice(at.end));
    console.error(`${g.file}: ${name} written`);
  }
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await main(process.argv.slice(2)));
