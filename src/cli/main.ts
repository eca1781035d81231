/**
 * The `solverlab` command: thin — parse, call the library, print.
 *   solverlab run      run one solver on one scene, print the summary, optionally write JSON
 *   solverlab compare  the solver × scene matrix: table, results.json, results.csv, report.html
 *   solverlab scenes   list the built-in scenes (or --export one as a scene file)
 *   solverlab solvers  list the solvers and the options they share
 *   solverlab bench    the necklace benchmark (results file)
 *   solverlab view     the browser viewer on a local web server (src/cli/view.ts)
 * Exit status: 0 ok, 1 runtime failure (e.g. no GPU), 2 bad input, 3 the run diverged.
 */
import { writeFileSync, renameSync, existsSync, statSync, mkdirSync } from 'node:fs';
import { dirname, resolve, join } from 'node:path';
import { parseArgs, numberFlag, paramFlags, indexList, UsageError, type FlagSpec } from './args.js';
import { scenes } from '../scenes/registry.js';
import { loadScene, builtInScene, InputError } from '../scenes/load.js';
import { anySceneFileJson } from '../model/scene-file.js';
import { solvers, findSolver } from '../solvers/registry.js';
import { defaultSolverOptions, solverOptionSpecs, resolveOptions, type SolverOptions, type SolverOptionSpec } from '../solvers/solver.js';
import { acquireGpu, NoGpuError, type GpuContext } from '../gpu/device.js';
import { runSolver, type RunResult } from '../run/run.js';
import { WorldError } from '../model/world.js';
import { isParticleSystem, sceneBodyCount } from '../model/scene-desc.js';
import { runBench } from '../bench/bench.js';
import { runTradeoff, tradeoffTable, parseSettings } from '../bench/tradeoff.js';
import { formatSummary } from './report.js';
import { runRecord, isSkipped } from '../bench/results.js';
import { runCompare, prepareCompare } from '../bench/compare.js';
import { formatCompareTable, compareCsv } from '../bench/table.js';
import { renderReport, findUplot } from '../bench/report-html.js';
import { VERSION } from '../version.js';
import { cmdView, viewFlags, viewHelp } from './view.js';

/** Flags `run` and `compare` share: scene parameters, solver options, frames, diagnostics. */
const sharedRunFlags: Record<string, FlagSpec> = {
  param: { value: true, repeat: true },
  frames: { value: true },
  ...Object.fromEntries(Object.values(solverOptionSpecs).map((o) => [o.flag, { value: true }])),
  'sample-every': { value: true },
  residuals: { value: true },
  quiet: { value: false },
};

const runFlags: Record<string, FlagSpec> = {
  ...sharedRunFlags,
  scene: { value: true },
  solver: { value: true },
  json: { value: true },
  trace: { value: true },
};

const compareFlags: Record<string, FlagSpec> = {
  ...sharedRunFlags,
  scenes: { value: true },
  solvers: { value: true },
  out: { value: true },
};

const commands: Record<string, Record<string, FlagSpec>> = {
  run: runFlags,
  compare: compareFlags,
  scenes: { export: { value: true }, param: { value: true, repeat: true }, out: { value: true } },
  solvers: {},
  bench: { out: { value: true }, sizes: { value: true }, frames: { value: true }, solvers: { value: true }, tradeoff: { value: false }, settings: { value: true }, chains: { value: true } },
  view: viewFlags,
};

const help = `solverlab — run and compare rigid-body constraint solvers (WebGPU and CPU)

usage:
  solverlab run --scene NAME|FILE.json [--param k=v ...] --solver ID [--iterations N] [--substeps S]
                [--frames F] [--dt H] [--beta B] [--warm-start W] [--sample-every K]
                [--json FILE] [--trace i,j,...] [--residuals FRAME] [--quiet]
  solverlab compare --scenes a,b,... --solvers x,y,... [--frames F] [--param k=v ...]
                [--iterations N] [--substeps S] [--dt H] [--beta B] [--warm-start W]
                [--residuals FRAME] [--out DIR] [--quiet]
                    every solver on every scene: a table, DIR/results.json, results.csv, report.html
  solverlab scenes                 list scenes, parameters and defaults
  solverlab scenes --export NAME [--param k=v ...] [--out FILE]
                                   write a built-in scene as a scene file (stdout without --out)
  solverlab solvers                list solvers and their options
  solverlab bench [--out FILE] [--sizes 10000,100000] [--frames N] [--solvers a,b]
                                   necklace step times at several sizes
  solverlab bench --tradeoff [--chains 2500] [--frames 600] [--solvers a,b] [--settings 8x1,32x1,...] [--out FILE]
                                   cost against quality: step time and worst violation over the run,
                                   each solver at settings ITERATIONSxSUBSTEPS (default: its own, 4× iterations, 4× substeps)
${viewHelp}

exit status: 0 ok · 1 failure (e.g. no GPU adapter) · 2 bad input · 3 the run diverged (run only:
compare reports diverged and skipped runs in its table and exits 0)`;

function one(flags: Map<string, string[]>, name: string): string | undefined {
  return flags.get(name)?.[0];
}

/** Checks that FILE can be written (its folder exists) before anything runs. */
function checkWritable(flag: string, file: string): string {
  const path = resolve(file);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`--${flag} ${file}: folder ${dir} does not exist`);
  if (existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`--${flag} ${file}: is a folder`);
  return path;
}

/** Write whole or not at all: a temporary file renamed into place. */
export function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

function progressBar(enabled: boolean): ((done: number, total: number) => void) | undefined {
  if (!enabled) return undefined;
  const start = Date.now();
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (now - start < 2000 || (now - last < 200 && done < total)) return; // only runs longer than a few seconds
    last = now;
    const width = 30;
    const filled = Math.round((width * done) / total);
    const eta = done ? ((now - start) / done) * (total - done) / 1000 : 0;
    process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} frames, ${eta.toFixed(0)} s left `);
    if (done >= total) process.stderr.write('\n');
  };
}

/** The solver options given on the command line (the rest come from resolveOptions). */
export function solverOptionsFromFlags(flags: Map<string, string[]>): Partial<SolverOptions> {
  const o: Partial<SolverOptions> = {};
  for (const [key, spec] of Object.entries(solverOptionSpecs) as [keyof SolverOptions, SolverOptionSpec][]) {
    const raw = one(flags, spec.flag);
    if (raw !== undefined) o[key] = numberFlag(spec.flag, raw, spec);
  }
  return o;
}

function findSolverOrThrow(id: string) {
  const info = findSolver(id);
  if (!info) throw new UsageError(`unknown solver '${id}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
  return info;
}

async function cmdRun(flags: Map<string, string[]>): Promise<number> {
  const sceneRef = one(flags, 'scene');
  if (!sceneRef) throw new UsageError(`run needs --scene NAME or FILE.json (scenes: ${scenes.map((s) => s.name).join(', ')})`);
  const scene = loadScene(sceneRef, paramFlags(flags.get('param') ?? []));
  const { params, world } = scene;
  // the default solver: the GPU Jacobi baseline for rigid scenes, RK4 for particle systems
  const info = findSolverOrThrow(one(flags, 'solver') ?? (isParticleSystem(world) ? 'witkin-rk4' : 'jacobi-gpu'));
  const options = resolveOptions(info, solverOptionsFromFlags(flags));
  const frames = numberFlag('frames', one(flags, 'frames') ?? '600', { integer: true, min: 0 });
  const sampleEvery = numberFlag('sample-every', one(flags, 'sample-every') ?? '1', { integer: true, min: 1 });
  const jsonPath = one(flags, 'json') !== undefined ? checkWritable('json', one(flags, 'json')!) : undefined;
  const residualFrame = one(flags, 'residuals') !== undefined ? numberFlag('residuals', one(flags, 'residuals')!, { integer: true, min: 1, max: frames }) : undefined;
  const unsupported = info.unsupported?.(world);
  if (unsupported) throw new UsageError(`${info.id} cannot run scene '${scene.name}': ${unsupported}`);
  const trace = one(flags, 'trace') !== undefined ? indexList('trace', one(flags, 'trace')!) : [];
  const bodies = sceneBodyCount(world);
  for (const i of trace) if (i >= bodies) throw new UsageError(`--trace ${i}: body index out of range 0..${bodies - 1}`);
  const quiet = flags.has('quiet');

  let gpu: GpuContext | undefined;
  if (info.device === 'gpu') gpu = await acquireGpu();
  const solver = await info.create(world, options, gpu);
  if (residualFrame !== undefined && !solver.stepRecordingResiduals) {
    solver.destroy();
    gpu?.device.destroy();
    throw new UsageError(`--residuals: solver ${info.id} does not report residuals`);
  }
  if (!quiet) process.stderr.write(`adapter: ${solver.adapter.name}${solver.adapter.software ? ' [software]' : ''}\n`);
  let result: RunResult;
  try {
    result = await runSolver(solver, world, {
      frames,
      sampleEvery,
      trace,
      residualFrame,
      constraintForces: true,
      onProgress: progressBar(!quiet && !!process.stderr.isTTY),
    });
  } finally {
    solver.destroy();
    gpu?.device.destroy();
  }
  const meta = { scene: scene.name, file: scene.file, params, options, iterationMode: info.iterationMode };
  process.stdout.write(formatSummary(meta, result) + '\n');
  if (jsonPath) writeAtomic(jsonPath, JSON.stringify(runRecord(meta, result), null, 1) + '\n');
  return result.diverged ? 3 : 0;
}

function cmdScenes(flags: Map<string, string[]>): number {
  const name = one(flags, 'export');
  if (name === undefined) {
    if (flags.has('param') || flags.has('out')) throw new UsageError('--param and --out go with --export NAME');
    for (const s of scenes) {
      console.log(`${s.name}  —  ${s.description}`);
      for (const [k, p] of Object.entries(s.params)) console.log(`    ${k.padEnd(10)} default ${String(+p.default.toPrecision(6)).padEnd(8)} ${p.help}`);
      for (const [k, p] of Object.entries(s.vectorParams ?? {})) console.log(`    ${k.padEnd(10)} default ${p.default.join(',').padEnd(8)} ${p.help}`);
    }
    console.log('\nor a scene file: --scene FILE.json (format: docs/scene-format.md; write one with scenes --export NAME)');
    return 0;
  }
  builtInScene(name);
  const out = one(flags, 'out') !== undefined ? checkWritable('out', one(flags, 'out')!) : undefined;
  const scene = loadScene(name, paramFlags(flags.get('param') ?? []));
  const text = anySceneFileJson(scene.world, { name: scene.name, description: scene.description, params: scene.params });
  if (out) {
    writeAtomic(out, text);
    const what = isParticleSystem(scene.world) ? 'particles' : 'bodies';
    process.stderr.write(`scene '${scene.name}' (${sceneBodyCount(scene.world)} ${what}, ${scene.world.constraints.length} constraints) written to ${out}\n`);
  } else process.stdout.write(text);
  return 0;
}

function compareProgress(enabled: boolean) {
  if (!enabled) return undefined;
  let last = 0;
  return (p: import('../bench/compare.js').CompareProgress) => {
    const now = Date.now();
    if (now - last < 200 && p.frame < p.frames) return;
    last = now;
    const width = 24;
    const share = (p.run + (p.frames ? p.frame / p.frames : 1)) / p.runs;
    const filled = Math.round(width * share);
    process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] run ${p.run + 1}/${p.runs} ${p.solver} on ${p.scene}: ${p.frame}/${p.frames} frames\x1b[K`);
  };
}

async function cmdCompare(flags: Map<string, string[]>, argv: string[]): Promise<number> {
  const list = (name: string) => {
    const raw = one(flags, name);
    if (raw === undefined) throw new UsageError(`compare needs --${name} a,b,...`);
    const items = raw.split(',').map((x) => x.trim());
    if (items.some((x) => !x)) throw new UsageError(`--${name} '${raw}' has an empty entry`);
    return items;
  };
  const sceneRefs = list('scenes');
  const solverIds = list('solvers');
  const options = solverOptionsFromFlags(flags);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '600', { integer: true, min: 1 });
  const sampleEvery = numberFlag('sample-every', one(flags, 'sample-every') ?? '1', { integer: true, min: 1 });
  const residualFrame = one(flags, 'residuals') !== undefined ? numberFlag('residuals', one(flags, 'residuals')!, { integer: true, min: 1, max: frames }) : undefined;
  const outDir = resolve(one(flags, 'out') ?? 'compare-results');
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new UsageError(`--out ${outDir}: is a file, not a folder`);
  if (!existsSync(dirname(outDir))) throw new UsageError(`--out ${outDir}: folder ${dirname(outDir)} does not exist`);
  const params = paramFlags(flags.get('param') ?? []);
  const opts = { scenes: sceneRefs, solvers: solverIds, frames, params, options, residualFrame, sampleEvery };
  prepareCompare(opts); // every name, file and parameter checked before anything runs
  findUplot(); // and the report's charting library found, so the report cannot fail after the runs
  const quiet = flags.has('quiet');
  const progress = compareProgress(!quiet && !!process.stderr.isTTY);
  const results = await runCompare({
    ...opts,
    command: ['solverlab', ...argv].join(' '),
    onProgress: progress,
    onRun: (r) => {
      if (quiet) return;
      if (progress) process.stderr.write('\r\x1b[K');
      const what = isSkipped(r) ? `skipped (${r.skipped})` : r.diverged ? `DIVERGED at frame ${r.diverged.frame}` : `${r.frames} frames`;
      process.stderr.write(`${r.solver} on ${r.scene}: ${what}\n`);
    },
  });
  process.stdout.write(formatCompareTable(results) + '\n');
  mkdirSync(outDir, { recursive: true });
  writeAtomic(join(outDir, 'results.json'), JSON.stringify(results, null, 1) + '\n');
  writeAtomic(join(outDir, 'results.csv'), compareCsv(results));
  writeAtomic(join(outDir, 'report.html'), renderReport(results));
  process.stderr.write(`written: ${join(outDir, 'results.json')}, results.csv, report.html\n`);
  return 0; // the matrix ran: diverged and skipped runs are results, shown in the table and the report
}

function cmdSolvers(): number {
  for (const s of solvers) console.log(`${s.id.padEnd(12)} [${s.device}]  ${s.description}`);
  console.log('\noptions (all solvers):');
  for (const [k, spec] of Object.entries(solverOptionSpecs) as [keyof SolverOptions, SolverOptionSpec][]) {
    const own = solvers.filter((s) => s.defaults?.[k] !== undefined).map((s) => `${s.id} ${s.defaults![k]}`);
    console.log(`    --${spec.flag.padEnd(15)} default ${String(+defaultSolverOptions[k].toPrecision(6)).padEnd(6)} ${spec.help}${own.length ? ` (${own.join(', ')})` : ''}`);
  }
  return 0;
}

async function cmdTradeoff(flags: Map<string, string[]>): Promise<number> {
  if (flags.has('sizes')) throw new UsageError('--sizes goes with the necklace benchmark; --tradeoff takes --chains');
  const out = checkWritable('out', one(flags, 'out') ?? 'bench-tradeoff.json');
  const chains = numberFlag('chains', one(flags, 'chains') ?? '2500', { integer: true, min: 1 });
  const frames = numberFlag('frames', one(flags, 'frames') ?? '600', { integer: true, min: 1 });
  const ids = (one(flags, 'solvers') ?? 'jacobi-cpu,gs-cpu,xpbd-cpu,jacobi-gpu,gs-gpu,xpbd-gpu').split(',');
  for (const id of ids) findSolverOrThrow(id);
  let settings;
  try {
    settings = one(flags, 'settings') !== undefined ? parseSettings(one(flags, 'settings')!) : undefined;
  } catch (e) {
    throw new UsageError(`--settings: ${(e as Error).message}`);
  }
  const results = await runTradeoff({ solvers: ids, chains, frames, settings, log: (s) => process.stderr.write(s + '\n') });
  writeAtomic(out, JSON.stringify(results, null, 1) + '\n');
  process.stdout.write(tradeoffTable(results.rows) + '\n');
  process.stderr.write(`results written to ${out}\n`);
  return 0;
}

async function cmdBench(flags: Map<string, string[]>): Promise<number> {
  if (flags.has('tradeoff')) return cmdTradeoff(flags);
  for (const f of ['settings', 'chains']) if (flags.has(f)) throw new UsageError(`--${f} goes with --tradeoff`);
  const out = checkWritable('out', one(flags, 'out') ?? 'bench-results.json');
  const sizes = one(flags, 'sizes') ? indexList('sizes', one(flags, 'sizes')!) : [10_000, 100_000];
  for (const n of sizes) if (n < 40 || n % 40) throw new UsageError(`--sizes: ${n} is not a positive multiple of 40 beads`);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '60', { integer: true, min: 1 });
  const ids = (one(flags, 'solvers') ?? 'jacobi-cpu,jacobi-gpu,rapier').split(',');
  for (const id of ids) if (!findSolver(id)) throw new UsageError(`unknown solver '${id}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
  const results = await runBench({ sizes, frames, solvers: ids, log: (s) => process.stderr.write(s + '\n') });
  writeAtomic(out, JSON.stringify(results, null, 1) + '\n');
  process.stderr.write(`results written to ${out}\n`);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  try {
    const { command, flags } = parseArgs(argv, commands);
    switch (command) {
      case 'help':
        console.log(help);
        return 0;
      case 'version':
        console.log(`solverlab ${VERSION}`);
        return 0;
      case 'run':
        return await cmdRun(flags);
      case 'compare':
        return await cmdCompare(flags, argv);
      case 'scenes':
        return cmdScenes(flags);
      case 'solvers':
        return cmdSolvers();
      case 'bench':
        return await cmdBench(flags);
      case 'view':
        return await cmdView(flags);
    }
    return 2;
  } catch (e) {
    if (e instanceof UsageError || e instanceof WorldError || e instanceof InputError) {
      process.stderr.write(`solverlab: ${e.message}\n`);
      return 2;
    }
    if (e instanceof NoGpuError) {
      process.stderr.write(`solverlab: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`solverlab: ${(e as Error).message ?? String(e)}\n`);
    return 1;
  }
}
