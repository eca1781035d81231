/**
 * The `solverlab` command: thin — parse, call the library, print.
 *   solverlab run      run one solver on one scene, print the summary, optionally write JSON
 *   solverlab scenes   list the built-in scenes with their parameters and defaults
 *   solverlab solvers  list the solvers and the options they share
 *   solverlab bench    the necklace benchmark (results file)
 * Exit status: 0 ok, 1 runtime failure (e.g. no GPU), 2 bad input, 3 the run diverged.
 */
import { writeFileSync, renameSync, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs, numberFlag, paramFlags, indexList, UsageError, type FlagSpec } from './args.js';
import { scenes, findScene } from '../scenes/registry.js';
import { resolveParams } from '../scenes/scene.js';
import { solvers, findSolver } from '../solvers/registry.js';
import { defaultSolverOptions, solverOptionSpecs, type SolverOptions } from '../solvers/solver.js';
import { acquireGpu, NoGpuError, type GpuContext } from '../gpu/device.js';
import { runSolver, type RunResult } from '../run/run.js';
import { WorldError } from '../model/world.js';
import { runBench } from '../bench/bench.js';
import { formatSummary } from './report.js';
import { runRecord } from '../bench/results.js';

const runFlags: Record<string, FlagSpec> = {
  scene: { value: true },
  param: { value: true, repeat: true },
  solver: { value: true },
  iterations: { value: true },
  substeps: { value: true },
  frames: { value: true },
  dt: { value: true },
  beta: { value: true },
  'warm-start': { value: true },
  'sample-every': { value: true },
  json: { value: true },
  trace: { value: true },
  quiet: { value: false },
};

const commands: Record<string, Record<string, FlagSpec>> = {
  run: runFlags,
  scenes: {},
  solvers: {},
  bench: { out: { value: true }, sizes: { value: true }, frames: { value: true }, solvers: { value: true } },
};

const help = `solverlab — run and compare rigid-body constraint solvers (WebGPU and CPU)

usage:
  solverlab run --scene NAME [--param k=v ...] --solver ID [--iterations N] [--substeps S]
                [--frames F] [--dt H] [--beta B] [--warm-start W] [--sample-every K]
                [--json FILE] [--trace i,j,...] [--quiet]
  solverlab scenes                 list scenes, parameters and defaults
  solverlab solvers                list solvers and their options
  solverlab bench [--out FILE] [--sizes 10000,100000] [--frames N] [--solvers a,b]

exit status: 0 ok · 1 failure (e.g. no GPU adapter) · 2 bad input · 3 the run diverged`;

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

export function solverOptionsFromFlags(flags: Map<string, string[]>): SolverOptions {
  const o: SolverOptions = { ...defaultSolverOptions };
  const map: [string, keyof SolverOptions][] = [
    ['dt', 'dt'],
    ['iterations', 'iterations'],
    ['substeps', 'substeps'],
    ['beta', 'beta'],
    ['warm-start', 'warmStart'],
  ];
  for (const [flag, key] of map) {
    const raw = one(flags, flag);
    if (raw !== undefined) o[key] = numberFlag(flag, raw, solverOptionSpecs[key]);
  }
  return o;
}

async function cmdRun(flags: Map<string, string[]>): Promise<number> {
  const sceneName = one(flags, 'scene');
  if (!sceneName) throw new UsageError(`run needs --scene NAME (scenes: ${scenes.map((s) => s.name).join(', ')})`);
  const scene = findScene(sceneName);
  if (!scene) throw new UsageError(`unknown scene '${sceneName}' (scenes: ${scenes.map((s) => s.name).join(', ')})`);
  const solverId = one(flags, 'solver') ?? 'jacobi-gpu';
  const info = findSolver(solverId);
  if (!info) throw new UsageError(`unknown solver '${solverId}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
  let params: Record<string, number>;
  try {
    params = resolveParams(scene, paramFlags(flags.get('param') ?? []));
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError((e as Error).message);
  }
  const options = solverOptionsFromFlags(flags);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '600', { integer: true, min: 0 });
  const sampleEvery = numberFlag('sample-every', one(flags, 'sample-every') ?? '1', { integer: true, min: 1 });
  const jsonPath = one(flags, 'json') !== undefined ? checkWritable('json', one(flags, 'json')!) : undefined;
  const world = scene.build(params);
  const trace = one(flags, 'trace') !== undefined ? indexList('trace', one(flags, 'trace')!) : [];
  for (const i of trace) if (i >= world.bodies.length) throw new UsageError(`--trace ${i}: body index out of range 0..${world.bodies.length - 1}`);
  const quiet = flags.has('quiet');

  let gpu: GpuContext | undefined;
  if (info.device === 'gpu') gpu = await acquireGpu();
  const solver = await info.create(world, options, gpu);
  if (!quiet) process.stderr.write(`adapter: ${solver.adapter.name}${solver.adapter.software ? ' [software]' : ''}\n`);
  let result: RunResult;
  try {
    result = await runSolver(solver, world, {
      frames,
      sampleEvery,
      trace,
      onProgress: progressBar(!quiet && !!process.stderr.isTTY),
    });
  } finally {
    solver.destroy();
    gpu?.device.destroy();
  }
  const meta = { scene: scene.name, params, options };
  process.stdout.write(formatSummary(meta, result) + '\n');
  if (jsonPath) writeAtomic(jsonPath, JSON.stringify(runRecord(meta, result), null, 1) + '\n');
  return result.diverged ? 3 : 0;
}

function cmdScenes(): number {
  for (const s of scenes) {
    console.log(`${s.name}  —  ${s.description}`);
    for (const [k, p] of Object.entries(s.params)) console.log(`    ${k.padEnd(10)} default ${String(p.default).padEnd(8)} ${p.help}`);
  }
  return 0;
}

function cmdSolvers(): number {
  for (const s of solvers) console.log(`${s.id.padEnd(12)} [${s.device}]  ${s.description}`);
  console.log('\noptions (all solvers):');
  const flagOf: Record<keyof SolverOptions, string> = { dt: 'dt', iterations: 'iterations', substeps: 'substeps', beta: 'beta', warmStart: 'warm-start' };
  for (const [k, spec] of Object.entries(solverOptionSpecs) as [keyof SolverOptions, (typeof solverOptionSpecs)[keyof SolverOptions]][])
    console.log(`    --${flagOf[k].padEnd(11)} default ${String(+defaultSolverOptions[k].toPrecision(6)).padEnd(10)} ${spec.help}`);
  return 0;
}

async function cmdBench(flags: Map<string, string[]>): Promise<number> {
  const out = checkWritable('out', one(flags, 'out') ?? 'bench-results.json');
  const sizes = one(flags, 'sizes') ? indexList('sizes', one(flags, 'sizes')!) : [10_000, 100_000];
  for (const n of sizes) if (n < 40 || n % 40) throw new UsageError(`--sizes: ${n} is not a positive multiple of 40 beads`);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '60', { integer: true, min: 1 });
  const ids = (one(flags, 'solvers') ?? 'jacobi-cpu,jacobi-gpu').split(',');
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
        console.log('solverlab 0.1.0');
        return 0;
      case 'run':
        return await cmdRun(flags);
      case 'scenes':
        return cmdScenes();
      case 'solvers':
        return cmdSolvers();
      case 'bench':
        return await cmdBench(flags);
    }
    return 2;
  } catch (e) {
    if (e instanceof UsageError || e instanceof WorldError) {
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
