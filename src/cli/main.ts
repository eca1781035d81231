/**
 * The `solverlab` command: thin — parse, call the library, print.
 *   solverlab run      run one solver on one scene, print the summary, optionally write JSON
 *   solverlab compare  the solver × scene matrix: table, results.json, results.csv, report.html
 *   solverlab scenes   list the built-in scenes (or --export one as a scene file)
 *   solverlab solvers  list the solvers: the options each reads, the constraints and shapes each supports
 *   solverlab bench    the necklace benchmark (results file)
 *   solverlab view     the browser viewer on a local web server (src/cli/view.ts)
 * Exit status: 0 ok, 1 runtime failure (e.g. no GPU), 2 bad input (and no command at all), 3 the run
 * diverged; stopped by a signal, the process dies by it (a shell reports 130 for Ctrl-C), and a watcher
 * process removes its unfinished files and says where it stopped (cli/interrupt.ts).
 */
import { writeFileSync, renameSync, existsSync, statSync, mkdirSync, openSync, writeSync, closeSync, rmSync } from 'node:fs';
import { dirname, resolve, join } from 'node:path';
import v8 from 'node:v8';
import { parseArgs, numberFlag, paramFlags, indexList, UsageError, commandHelp, overviewHelp, type FlagSpec, type CommandSpec } from './args.js';
import { scenes } from '../scenes/registry.js';
import { loadScene, builtInScene, builtInRefusal, isSceneFile, InputError } from '../scenes/load.js';
import { sceneWhat } from '../scenes/scene.js';
import { anySceneFileChunks } from '../scenes/scene-file.js';
import { solvers, findSolver, defaultSolverFor } from '../solvers/registry.js';
import { solverOptionSpecs, resolveOptions, optionsRead, type SolverInfo, type SolverOptions, type SolverOptionSpec } from '../solvers/solver.js';
import type { Snapshot } from '../model/snapshot.js';
import { acquireGpu, NoGpuError, type GpuContext } from '../gpu/device.js';
import { setGpuVerbose } from '../gpu/vulkan-drivers.js';
import { runSolver, type RunResult } from '../run/run.js';
import { TrajectoryWriter, trajectoryFormat } from '../run/trajectory.js';
import { startProgress } from '../run/progress.js';
import { WorldError } from '../model/world.js';
import { preflight, estimateMemory, countScene, checkMemory, checkRunRecords } from '../model/limits.js';
import { necklace as necklaceScene } from '../scenes/necklace.js';
import { isParticleSystem, sceneBodyCount } from '../model/scene-desc.js';
import { runBench } from '../bench/bench.js';
import { runTradeoff, tradeoffTable, parseSettings } from '../bench/tradeoff.js';
import { formatSummary, hostText } from './report.js';
import { runRecord, isSkipped, runLabel, type CompareResults, type RunRecord, type SkippedRun } from '../bench/results.js';
import { parseSolverEntry } from './solver-entries.js';
import { runCompare, prepareCompare } from '../bench/compare.js';
import { DEFAULT_HOLD_TOLERANCES } from '../bench/holds.js';
import { AVBD_BENCH_SCENES, avbdBenchPlan, avbdGpuNote, runAvbdBench, avbdBenchTable, avbdBenchCsv } from '../bench/avbd-bench.js';
import { runGpuContactBench, gpuContactSolvers, gpuContactTable, gpuContactCsv, GPU_CONTACT_SCENES, GPU_CONTACT_REFERENCES } from '../bench/gpu-contacts.js';
import { formatCompareTable, compareCsv, countText, formatNumber } from '../bench/table.js';
import { renderReport, findUplot } from '../bench/report-html.js';
import { VERSION } from '../version.js';
import { cmdView, viewFlags } from './view.js';
import { solverOptionFlags, defaultText, readersText } from './option-flags.js';
import { startWatcher, setWhere, updateWhere } from './interrupt.js';
import { tempFor, tempDone } from '../run/temp-files.js';

/** Flags `run` and `compare` share: scene parameters, solver options, frames, diagnostics. */
const sharedRunFlags: Record<string, FlagSpec> = {
  param: { value: true, repeat: true, arg: 'k=v', help: "a scene parameter (see 'solverlab scenes'); a vector as k=x,y,z" },
  frames: { value: true, arg: 'N', help: 'frames to run (default 600)' },
  ...solverOptionFlags,
  'sample-every': { value: true, arg: 'K', help: 'measure violation and energy every K frames (default 1)' },
  residuals: { value: true, arg: 'FRAME', help: "record the residual after each iteration of that frame's solve (solvers that report it)" },
  quiet: { value: false, help: 'no adapter line, no progress' },
  verbose: { value: false, help: "also the GPU driver's own diagnostics (Dawn/Vulkan warnings), hidden otherwise" },
};

const runFlags: Record<string, FlagSpec> = {
  scene: { value: true, arg: 'NAME|FILE.json', help: "a built-in scene or a scene file (docs/scene-format.md)" },
  solver: { value: true, arg: 'ID', help: "the solver (see 'solverlab solvers'; default: softstep-cpu for a scene with contacts, jacobi-gpu for joints alone, witkin-rk4 for a particle system)" },
  ...sharedRunFlags,
  json: { value: true, arg: 'FILE', help: "write the run's record as JSON; '-' writes it to standard output (the summary then goes to standard error)" },
  trace: { value: true, arg: 'i,j,…', help: "record these bodies' positions in the JSON series" },
  constraints: { value: false, help: "print each constraint's multiplier λ and force at the initial state (particle solvers; the JSON has them always)" },
  trajectory: { value: true, arg: 'FILE.csv|FILE.json', help: "write every body's position, orientation, linear and angular velocity every K frames (CSV: one row per body per sample; JSON by the extension), streamed" },
  'trajectory-every': { value: true, arg: 'K', help: 'with --trajectory: a sample every K frames, and the last frame (default 1)' },
  divergence: { value: true, arg: 'off|E[,V]', help: "the divergence watch: bounds E × E_scale on the energy gained and V × the scene's size on the violation (default 10,100), beyond which a quantity that keeps growing stops the run; off: only a state that is not finite does" },
};

const compareFlags: Record<string, FlagSpec> = {
  scenes: { value: true, arg: 'a,b,…', help: 'built-in scenes or scene files' },
  solvers: {
    value: true,
    arg: 'x,y,…',
    help:
      "solvers (the first is the speed baseline); an entry NAME:key=value[:key=value…] runs that solver with options of its own, " +
      'named by their flags below (e.g. rapier:iterations=4,pgs-cpu:substeps=4:iterations=8): they override the shared flags for that run, and the same solver may be listed at several settings',
  },
  ...sharedRunFlags,
  // compare's --param also takes SCENE.k=v (it keeps the shared flags' place in --help)
  param: { value: true, repeat: true, arg: '[SCENE.]k=v', help: "a scene parameter (see 'solverlab scenes'), for every chosen scene that has it, or with SCENE. for that scene alone (domino.count=50); a vector as k=x,y,z" },
  'scene-frames': { value: true, repeat: true, arg: 'SCENE=N', help: 'frames for that scene in place of --frames (e.g. mass-ratio-pendulum=600 beside --frames 240)' },
  'hold-violation': { value: true, arg: 'M', help: 'a run holds a scene with joints while its worst max |C| stays at most M metres (default 0.01: the AVBD issue\'s 1 cm for the mass-ratio pendulum); the table\'s holds column' },
  'hold-drift': { value: true, arg: 'M', help: 'a run holds a scene built to stand still (vertical-stack, pyramid, card-house) while no body drifts more than M metres after it settled (default 0.01)' },
  out: { value: true, arg: 'DIR', help: 'folder for results.json, results.csv, report.html (default compare-results)' },
};

export const commands: Record<string, CommandSpec> = {
  run: {
    summary: 'run one solver on one scene, print the summary, optionally write the JSON record',
    usage: ['solverlab run --scene NAME|FILE.json [--solver ID] [options]'],
    flags: runFlags,
  },
  compare: {
    summary: 'every solver on every scene: a table, DIR/results.json, results.csv, report.html',
    usage: [
      'solverlab compare --scenes a,b,… --solvers x,y,… [options]',
      'solverlab compare --scenes pyramid --solvers softstep-cpu,rapier:iterations=4,pgs-cpu:iterations=20 [options]',
      'diverged and skipped runs are results: shown in the table, exit status 0',
    ],
    flags: compareFlags,
  },
  scenes: {
    summary: 'list the built-in scenes, their parameters and defaults, or write one as a scene file',
    usage: ['solverlab scenes', 'solverlab scenes --export NAME [--param k=v …] [--out FILE]'],
    flags: {
      export: { value: true, arg: 'NAME', help: 'write this built-in scene as a scene file (standard output without --out)' },
      param: { value: true, repeat: true, arg: 'k=v', help: 'a parameter of the exported scene' },
      out: { value: true, arg: 'FILE', help: 'the file to write' },
    },
  },
  solvers: { summary: 'list the solvers, the options each one reads, and what each one supports', flags: {} },
  bench: {
    summary: 'necklace step times at several sizes, with --tradeoff cost against quality, or with --contacts the GPU contact benchmark',
    usage: [
      'solverlab bench [--out FILE] [--sizes 10000,100000] [--frames N] [--solvers a,b]',
      'solverlab bench --tradeoff [--chains 2500] [--frames 600] [--solvers a,b] [--settings 8x1,32x1,…] [--out FILE]',
      'solverlab bench --contacts [--frames 10] [--big-frames N] [--solvers a,b] [--references softstep-cpu,rapier] [--scenes …] [--out DIR]',
      'solverlab bench --avbd [--frames 10] [--big-frames N] [--solvers a,b] [--scenes …] [--out DIR]',
    ],
    flags: {
      out: { value: true, arg: 'FILE', help: 'results file (default bench-results.json, bench-tradeoff.json with --tradeoff)' },
      sizes: { value: true, arg: 'N,M,…', help: 'bead counts, multiples of 40 (default 10000,100000)' },
      frames: { value: true, arg: 'N', help: 'timed frames per run (default 60, 600 with --tradeoff)' },
      solvers: { value: true, arg: 'a,b,…', help: 'solvers (default jacobi-cpu,jacobi-gpu,rapier; with --tradeoff the CPU and GPU jacobi, gs, xpbd)' },
      tradeoff: { value: false, help: 'step time against worst violation over the run, each solver at several settings' },
      settings: { value: true, arg: 'IxS,…', help: 'with --tradeoff: ITERATIONSxSUBSTEPS settings (default: its own, 4× iterations, 4× substeps)' },
      chains: { value: true, arg: 'N', help: 'with --tradeoff: 40-bead chains in the necklace (default 2500)' },
      contacts: {
        value: false,
        help:
          'the GPU contact benchmark: rain 10k and 100k, brick-wall 110k, pyramid base 100 under every GPU contact solver (softstep-cpu and rapier on the 10k rain), sleeping off; ' +
          'ms per frame split into collision and solve (GPU timestamps), colours, contact points, worst penetration; writes DIR/results.json, results.csv, report.html, summary.md, summary.csv',
      },
      avbd: {
        value: false,
        help:
          "the AVBD benchmark: brick-wall 110k and necklace 100k under every GPU solver that runs them (the registry's: avbd-gpu when registered), pyramid base 100 under avbd-cpu, sleeping off; " +
          'ms per frame, iterations × substeps, worst violation and penetration; writes DIR/results.json, results.csv, report.html, summary.md, summary.csv',
      },
      'big-frames': { value: true, arg: 'N', help: 'with --contacts or --avbd: frames on the 100k-body scenes (default --frames)' },
      references: { value: true, arg: 'a,b,…', help: "with --contacts: CPU solvers on the 10k rain (default softstep-cpu,rapier; 'none' for none)" },
      scenes: { value: true, arg: 'a,b,…', help: 'with --contacts: some of rain-10k, rain-100k, brick-wall-110k, pyramid-100; with --avbd: some of brick-wall-110k, necklace-100k, pyramid-100 (default all)' },
      'sample-every': { value: true, arg: 'K', help: 'with --contacts or --avbd: measure the metrics every K frames (default 1 up to 60 frames, else ⌈frames / 60⌉)' },
      verbose: { value: false, help: "also the GPU driver's own diagnostics (Dawn/Vulkan warnings), hidden otherwise" },
    },
  },
  view: {
    summary: 'the browser viewer on a local web server (several solvers are overlaid); runs until Ctrl+C',
    usage: ['solverlab view [--port 5173] [--scene NAME|FILE.json] [--solver ID[,ID…]] [options]'],
    flags: viewFlags,
  },
};

/** `solverlab --help`: the commands and their flags, from the same table the parser reads. */
function overview(): string {
  return `solverlab — run and compare rigid-body constraint solvers (WebGPU and CPU)

usage:
${overviewHelp(commands)}

'solverlab COMMAND --help' describes each option of a command.
exit status: 0 ok · 1 failure (e.g. no GPU adapter) · 2 bad input (or no command) · 3 the run diverged
(run only: compare reports diverged and skipped runs in its table and exits 0) · 130 stopped by Ctrl-C
(SIGINT), 143 by SIGTERM: unfinished files removed`;
}

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

/** All of `chunks` written to a file descriptor, with no string of them all (a pipe that is full is waited on). */
function writeChunks(fd: number, chunks: Iterable<string>): void {
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (const chunk of chunks) {
    const bytes = Buffer.from(chunk);
    for (let at = 0; at < bytes.length; ) {
      try {
        at += writeSync(fd, bytes, at);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') return; // the reader has gone (… | head): nothing more to write
        if (code !== 'EAGAIN') throw e;
        Atomics.wait(wait, 0, 0, 5); // a non-blocking pipe is full: let the reader catch up
      }
    }
  }
}

/** writeAtomic for text made in pieces (a scene file of millions of bodies). */
export function writeChunksAtomic(path: string, chunks: Iterable<string>): void {
  const tmp = tempFor(path); // listed, so that a signal removes it (run/temp-files.ts)
  try {
    const fd = openSync(tmp, 'w');
    try {
      writeChunks(fd, chunks);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  } finally {
    tempDone(tmp);
  }
}

/** Write whole or not at all: a temporary file renamed into place. */
export function writeAtomic(path: string, text: string): void {
  writeChunksAtomic(path, [text]);
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

/** The solver options given on the command line that `info` does not read (SolverInfo.reads), each as a note. */
function unreadOptions(info: SolverInfo, flags: Map<string, string[]>): string[] {
  const given = (Object.entries(solverOptionSpecs) as [keyof SolverOptions, SolverOptionSpec][]).filter(([key, spec]) => flags.has(spec.flag) && !info.reads.includes(key));
  if (!given.length) return [];
  const reads = optionsRead(info).map((k) => `--${solverOptionSpecs[k].flag}`).join(', ');
  return [`${info.id} does not read ${given.map(([, spec]) => `--${spec.flag}`).join(', ')} (ignored); it reads ${reads}`];
}

/** `--divergence off|E[,V]` → the divergence watch's options for runSolver (run/run.ts DivergenceWatch). */
export function divergenceFlag(raw: string | undefined): { divergenceWatch?: boolean; energyFactor?: number; violationFactor?: number } {
  if (raw === undefined) return {};
  if (raw === 'off') return { divergenceWatch: false };
  const parts = raw.split(',');
  if (parts.length > 2) throw new UsageError(`--divergence expects off, E or E,V (bounds in E_scale and scene sizes), got '${raw}'`);
  const [e, v] = parts.map((x) => {
    const f = numberFlag('divergence', x);
    if (!(f > 0)) throw new UsageError(`--divergence bounds must be > 0, got '${raw}'`);
    return f;
  });
  return { energyFactor: e, ...(v !== undefined ? { violationFactor: v } : {}) };
}

function findSolverOrThrow(id: string) {
  const info = findSolver(id);
  if (!info) throw new UsageError(`unknown solver '${id}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
  return info;
}

async function cmdRun(flags: Map<string, string[]>): Promise<number> {
  const sceneRef = one(flags, 'scene');
  if (!sceneRef) throw new UsageError(`run needs --scene NAME or FILE.json (scenes: ${scenes.map((s) => s.name).join(', ')})`);
  const given = paramFlags(flags.get('param') ?? []);
  // a built-in scene's memory under its solver from its count, before it is built (minutes at 10M bodies)
  if (!isSceneFile(sceneRef)) {
    const id = one(flags, 'solver') ?? (builtInScene(sceneRef).count(given as Record<string, number>).kind === 'particles' ? 'witkin-rk4' : 'jacobi-gpu');
    const refusal = findSolver(id) ? builtInRefusal(sceneRef, given, id) : null;
    if (refusal) throw refusal;
  }
  const scene = loadScene(sceneRef, given);
  const { params, world } = scene;
  // the default solver: one that runs the scene (registry defaultSolverFor: RK4 for particle systems,
  // softstep-cpu where bodies collide, the GPU Jacobi baseline for joints)
  const info = findSolverOrThrow(one(flags, 'solver') ?? defaultSolverFor(world));
  const options = resolveOptions(info, solverOptionsFromFlags(flags), world);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '600', { integer: true, min: 0 });
  const sampleEvery = numberFlag('sample-every', one(flags, 'sample-every') ?? '1', { integer: true, min: 1 });
  // --json -: the record on standard output, and the summary (for people) on standard error
  const jsonToStdout = one(flags, 'json') === '-';
  const jsonPath = one(flags, 'json') !== undefined && !jsonToStdout ? checkWritable('json', one(flags, 'json')!) : undefined;
  const residualFrame = one(flags, 'residuals') !== undefined ? numberFlag('residuals', one(flags, 'residuals')!, { integer: true, min: 1, max: frames }) : undefined;
  // a solver refuses what it cannot honour (e.g. --compliance for Rapier); what it merely does not read is noted
  const unsupported = info.unsupported?.(world, options);
  if (unsupported) throw new UsageError(`${info.id} cannot run scene '${scene.name}': ${unsupported}`);
  for (const w of unreadOptions(info, flags)) process.stderr.write(`solverlab: note: ${w}\n`);
  // and what of the scene it does not read (e.g. Rapier's one friction coefficient)
  const ignored = info.ignores?.(world);
  if (ignored) process.stderr.write(`solverlab: note: ${ignored}\n`);
  // memory for this solver, and the ranges its arithmetic carries (model/limits.ts): refused or warned
  // (a file's faults name the file, as its schema errors do; a built-in scene's name it with the parameters given)
  const what = scene.file !== undefined ? `scene file ${scene.file}` : sceneWhat(scene.name, given);
  for (const w of preflight(what, world, info.id, { ...options, where: scene.file ?? what })) process.stderr.write(`solverlab: warning: ${w}\n`);
  // what the process holds now (the description built) and what the run will add: shown beside the peak
  const estimatedBytes = process.memoryUsage.rss() + estimateMemory(countScene(world), info.id).total - estimateMemory(countScene(world)).total;
  const trace = one(flags, 'trace') !== undefined ? indexList('trace', one(flags, 'trace')!) : [];
  const bodies = sceneBodyCount(world);
  for (const i of trace) if (i >= bodies) throw new UsageError(`--trace ${i}: body index out of range 0..${bodies - 1}`);
  // the run's series, timings and JSON record: refused before it runs when they will not fit (model/limits.ts)
  checkRunRecords(what, { frames, sampleEvery, traced: trace.length, json: jsonToStdout || jsonPath !== undefined });
  const quiet = flags.has('quiet');
  const watch = divergenceFlag(one(flags, 'divergence'));
  const trajectoryPath = one(flags, 'trajectory') !== undefined ? checkWritable('trajectory', one(flags, 'trajectory')!) : undefined;
  const trajectoryFmt = trajectoryPath !== undefined ? trajectoryFormat(trajectoryPath) : null;
  if (trajectoryPath !== undefined && !trajectoryFmt) throw new UsageError(`--trajectory ${one(flags, 'trajectory')}: the file must end in .csv or .json (the format is chosen by the extension)`);
  if (flags.has('trajectory-every') && trajectoryPath === undefined) throw new UsageError('--trajectory-every goes with --trajectory FILE');
  if (trajectoryPath !== undefined && trajectoryPath === jsonPath) throw new UsageError(`--trajectory and --json name the same file ${trajectoryPath}`);
  const trajectoryEvery = numberFlag('trajectory-every', one(flags, 'trajectory-every') ?? '1', { integer: true, min: 1 });

  // what a Ctrl-C line says (cli/interrupt.ts): the frame reached, and that nothing was written
  let framesDone = 0;
  const grouped = (n: number) => n.toLocaleString('en-US');
  setWhere(() => `at frame ${grouped(framesDone)} of ${grouped(frames)} (t = ${+(framesDone * options.dt).toPrecision(4)} s)`, trajectoryPath || jsonPath ? 'nothing written' : '');
  let gpu: GpuContext | undefined;
  if (info.device === 'gpu') gpu = await acquireGpu();
  const solver = await info.create(world, options, gpu);
  const residualsRefusal = solver.residualsRefusal?.();
  if (residualFrame !== undefined && (!solver.stepRecordingResiduals || residualsRefusal)) {
    solver.destroy();
    gpu?.device.destroy();
    throw new UsageError(residualsRefusal ? `--residuals: ${residualsRefusal}` : `--residuals: solver ${info.id} does not report residuals`);
  }
  if (flags.has('constraints') && !solver.constraintForces) {
    solver.destroy();
    gpu?.device.destroy();
    throw new UsageError(`--constraints: solver ${info.id} does not report constraint forces (the particle solvers do)`);
  }
  if (!quiet) process.stderr.write(`adapter: ${solver.adapter.name}${solver.adapter.software ? ' [software]' : ''}\n`);
  let result: RunResult;
  // streamed to FILE.<pid>.tmp, moved into place when the run ends, removed if it fails (run/trajectory.ts)
  let trajectory: TrajectoryWriter | undefined;
  // on a terminal only, never with --quiet (run/progress.ts: drawn by a worker, even inside a long frame)
  const progress = !quiet && process.stderr.isTTY ? startProgress(frames) : undefined;
  try {
    if (trajectoryPath) trajectory = new TrajectoryWriter(trajectoryPath, trajectoryFmt!, { scene: scene.name, solver: info.id, dt: options.dt, every: trajectoryEvery });
    result = await runSolver(solver, world, {
      frames,
      sampleEvery,
      trace,
      residualFrame,
      constraintForces: true,
      onProgress: (done: number) => {
        framesDone = done;
        updateWhere();
        progress?.update(done);
      },
      ...watch,
      ...(trajectory ? { observe: { every: trajectoryEvery, onSnapshot: (snap: Snapshot) => trajectory!.write(snap) } } : {}),
    });
    trajectory?.close();
  } finally {
    await progress?.stop();
    trajectory?.abort(); // a no-op once closed
    solver.destroy();
    gpu?.device.destroy();
  }
  const memory = { estimatedBytes, peakResidentBytes: process.resourceUsage().maxRSS * 1024, heapLimitBytes: v8.getHeapStatistics().heap_size_limit };
  const meta = { scene: scene.name, file: scene.file, params, options, iterationMode: info.iterationMode, memory };
  const summary = formatSummary(meta, result, { constraints: flags.has('constraints') }) + '\n';
  // the JSON text only when asked for (one string: checkRunRecords has checked it fits)
  const json = () => JSON.stringify(runRecord(meta, result), null, 1) + '\n';
  if (jsonToStdout) {
    process.stderr.write(summary);
    process.stdout.write(json());
  } else {
    process.stdout.write(summary);
    if (jsonPath) writeAtomic(jsonPath, json());
  }
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
  const chunks = anySceneFileChunks(scene.world, { name: scene.name, description: scene.description, params: scene.params });
  if (out) {
    setWhere(() => `while writing the scene to ${out}`);
    writeChunksAtomic(out, chunks);
    const n = sceneBodyCount(scene.world);
    const what = isParticleSystem(scene.world) ? countText(n, 'particle') : countText(n, 'body', 'bodies');
    process.stderr.write(`scene '${scene.name}' (${what}, ${countText(scene.world.constraints.length, 'constraint')}) written to ${out}\n`);
  } else writeChunks(1, chunks);
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
  // each entry a solver, alone or with options of its own (NAME:key=value…: cli/solver-entries.ts)
  const entries = list('solvers').map(parseSolverEntry);
  const solverIds = entries.map((e) => e.id);
  const options = solverOptionsFromFlags(flags);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '600', { integer: true, min: 1 });
  const sampleEvery = numberFlag('sample-every', one(flags, 'sample-every') ?? '1', { integer: true, min: 1 });
  const residualFrame = one(flags, 'residuals') !== undefined ? numberFlag('residuals', one(flags, 'residuals')!, { integer: true, min: 1, max: frames }) : undefined;
  const outDir = resolve(one(flags, 'out') ?? 'compare-results');
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new UsageError(`--out ${outDir}: is a file, not a folder`);
  if (!existsSync(dirname(outDir))) throw new UsageError(`--out ${outDir}: folder ${dirname(outDir)} does not exist`);
  const params = paramFlags(flags.get('param') ?? []);
  const sceneFrames: Record<string, number> = {};
  for (const raw of flags.get('scene-frames') ?? []) {
    const at = raw.lastIndexOf('=');
    const name = raw.slice(0, at);
    if (at <= 0 || !sceneRefs.includes(name)) throw new UsageError(`--scene-frames ${raw}: expected SCENE=N with SCENE one of the chosen scenes (${sceneRefs.join(', ')})`);
    sceneFrames[name] = numberFlag('scene-frames', raw.slice(at + 1), { integer: true, min: 1 });
  }
  // every run's record is kept until results.json (one JSON text) and the report are written
  checkRunRecords('compare', { frames: Math.max(frames, ...Object.values(sceneFrames)), sampleEvery, runs: sceneRefs.length * entries.length, json: true });
  const holds = {
    violation: numberFlag('hold-violation', one(flags, 'hold-violation') ?? String(DEFAULT_HOLD_TOLERANCES.violation), { min: 0 }),
    drift: numberFlag('hold-drift', one(flags, 'hold-drift') ?? String(DEFAULT_HOLD_TOLERANCES.drift), { min: 0 }),
  };
  const opts = { scenes: sceneRefs, solvers: entries, frames, params, options, residualFrame, sampleEvery, holds, sceneFrames };
  const loaded = prepareCompare(opts); // every name, file and parameter checked (and the scenes built once) before anything runs
  // an option no chosen solver reads would change nothing: said, not silently taken
  for (const [key, spec] of Object.entries(solverOptionSpecs) as [keyof SolverOptions, SolverOptionSpec][])
    if (flags.has(spec.flag) && !solverIds.some((id) => findSolver(id)?.reads.includes(key)))
      process.stderr.write(`solverlab: note: none of ${solverIds.join(', ')} reads --${spec.flag} (ignored)\n`);
  findUplot(); // and the report's charting library found, so the report cannot fail after the runs
  const quiet = flags.has('quiet');
  const progress = compareProgress(!quiet && !!process.stderr.isTTY);
  let at: import('../bench/compare.js').CompareProgress | undefined;
  setWhere(() => (at ? `in run ${at.run + 1} of ${at.runs} (${at.solver} on ${at.scene}) at frame ${at.frame.toLocaleString('en-US')} of ${at.frames.toLocaleString('en-US')}` : 'before the first run'), `nothing written to ${outDir}`);
  const results = await runCompare({
    ...opts,
    loaded,
    command: ['solverlab', ...argv].join(' '),
    onProgress: (p) => {
      at = p;
      updateWhere();
      progress?.(p);
    },
    onWarning: (line) => {
      if (progress) process.stderr.write('\r\x1b[K');
      process.stderr.write(`solverlab: warning: ${line}\n`);
    },
    onRun: (r) => {
      if (quiet) return;
      if (progress) process.stderr.write('\r\x1b[K');
      const what = isSkipped(r) ? `${r.refused ? 'refused' : 'skipped'} (${r.skipped})` : r.diverged ? `DIVERGED at frame ${r.diverged.frame}` : countText(r.frames, 'frame');
      process.stderr.write(`${runLabel(r)} on ${r.scene}: ${what}\n`);
    // where the wall time went on the host (a GPU run's wall clock can run far above its stamps: docs/hardware.md)
    if (!isSkipped(r) && r.host?.gpuWaitMs !== undefined) process.stderr.write(`  host: ${hostText(r.host)}\n`);
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

/** `solverlab solvers`: each solver and what it declares (the options it reads, what it supports), then the options. */
function cmdSolvers(): number {
  for (const s of solvers) {
    console.log(`${s.id.padEnd(16)} [${s.device}]  ${s.description}`);
    const reads = optionsRead(s).map((k) => `--${solverOptionSpecs[k].flag}${s.defaults?.[k] !== undefined ? ` (default ${s.defaults[k]})` : ''}`);
    console.log(`${''.padEnd(24)}reads ${reads.join(', ')}`);
    if (s.supports) console.log(`${''.padEnd(24)}supports constraints: ${s.supports.constraints.join(', ')}; shapes: ${s.supports.shapes.join(', ')}; ${s.supports.contacts ? 'contacts' : 'no contacts (scenes with collisions on are refused)'}`);
    else console.log(`${''.padEnd(24)}supports particle systems`);
  }
  console.log('\noptions:');
  for (const [k, spec] of Object.entries(solverOptionSpecs) as [keyof SolverOptions, SolverOptionSpec][])
    console.log(`    --${spec.flag.padEnd(16)} ${spec.help}; ${defaultText(k)}; ${readersText(k)}`);
  return 0;
}

async function cmdTradeoff(flags: Map<string, string[]>): Promise<number> {
  if (flags.has('sizes')) throw new UsageError('--sizes goes with the necklace benchmark; --tradeoff takes --chains');
  const out = checkWritable('out', one(flags, 'out') ?? 'bench-tradeoff.json');
  const chains = numberFlag('chains', one(flags, 'chains') ?? '2500', { integer: true, min: 1 });
  const frames = numberFlag('frames', one(flags, 'frames') ?? '600', { integer: true, min: 1 });
  const ids = (one(flags, 'solvers') ?? 'jacobi-cpu,gs-cpu,xpbd-cpu,jacobi-gpu,gs-gpu,xpbd-gpu').split(',');
  for (const id of ids) findSolverOrThrow(id);
  checkRunRecords('bench --tradeoff', { frames, sampleEvery: 1, sampleFlag: false }); // each run samples every frame (bench/tradeoff.ts)
  let settings;
  try {
    settings = one(flags, 'settings') !== undefined ? parseSettings(one(flags, 'settings')!) : undefined;
  } catch (e) {
    throw new UsageError(`--settings: ${(e as Error).message}`);
  }
  setWhere(() => 'during the trade-off runs', `nothing written to ${out}`);
  const results = await runTradeoff({ solvers: ids, chains, frames, settings, log: (s) => process.stderr.write(s + '\n') });
  writeAtomic(out, JSON.stringify(results, null, 1) + '\n');
  process.stdout.write(tradeoffTable(results.rows) + '\n');
  process.stderr.write(`results written to ${out}\n`);
  return 0;
}

/** `bench --contacts`: the GPU contact benchmark (bench/gpu-contacts.ts) into a folder, as compare writes one, with its summary. */
async function cmdContactBench(flags: Map<string, string[]>, argv: string[]): Promise<number> {
  if (flags.has('tradeoff')) throw new UsageError('--contacts and --tradeoff are two benchmarks: give one');
  for (const f of ['settings', 'chains', 'sizes']) if (flags.has(f)) throw new UsageError(`--${f} does not go with --contacts`);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '10', { integer: true, min: 1 });
  const bigFrames = numberFlag('big-frames', one(flags, 'big-frames') ?? String(frames), { integer: true, min: 1 });
  const sampleEvery = one(flags, 'sample-every') !== undefined ? numberFlag('sample-every', one(flags, 'sample-every')!, { integer: true, min: 1 }) : undefined;
  const list = (name: string) => (one(flags, name) === undefined ? undefined : one(flags, name)!.split(',').map((x) => x.trim()).filter((x) => x && x !== 'none'));
  const ids = list('solvers') ?? gpuContactSolvers();
  for (const id of ids) {
    const info = findSolverOrThrow(id);
    if (info.device !== 'gpu' || !info.supports?.contacts) throw new UsageError(`--solvers: ${id} is not a GPU solver that takes contacts (those: ${gpuContactSolvers().join(', ')})`);
  }
  const refs = list('references');
  for (const id of refs ?? []) findSolverOrThrow(id);
  const scenesGiven = list('scenes');
  for (const l of scenesGiven ?? []) if (!GPU_CONTACT_SCENES.some((s) => s.label === l)) throw new UsageError(`--scenes: unknown benchmark scene '${l}' (${GPU_CONTACT_SCENES.map((s) => s.label).join(', ')})`);
  const outDir = resolve(one(flags, 'out') ?? 'bench-contacts-gpu');
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new UsageError(`--out ${outDir}: is a file, not a folder`);
  if (!existsSync(dirname(outDir))) throw new UsageError(`--out ${outDir}: folder ${dirname(outDir)} does not exist`);
  // each scene under each solver checked before any runs: a refusal is one line and nothing written (model/limits.ts)
  for (const s of GPU_CONTACT_SCENES.filter((x) => !scenesGiven || scenesGiven.includes(x.label)))
    for (const id of s.references ? [...ids, ...(refs ?? GPU_CONTACT_REFERENCES)] : ids) {
      const why = builtInRefusal(s.scene, s.params, id);
      if (why) throw why;
    }
  checkRunRecords('bench --contacts', { frames: Math.max(frames, bigFrames), sampleEvery: sampleEvery ?? 1, runs: GPU_CONTACT_SCENES.length * (ids.length + 2), json: true });
  findUplot();
  const quiet = flags.has('quiet');
  const write = benchFolderWriter(outDir, gpuContactCsv, gpuContactTable);
  setWhere(() => 'during the GPU contact benchmark', `what was done is in ${outDir}`);
  const results = await runGpuContactBench({
    frames,
    bigFrames,
    solvers: ids,
    references: refs,
    scenes: scenesGiven,
    sampleEvery,
    command: ['solverlab', ...argv].join(' '),
    onRun: benchRunLine(quiet),
    onWarning: (line) => process.stderr.write(`solverlab: warning: ${line}\n`),
    onScene: write, // after each scene: a benchmark stopped by a time bound keeps its finished scenes
  });
  write(results);
  process.stdout.write(gpuContactTable(results) + '\n');
  process.stderr.write(`written: ${join(outDir, 'summary.md')}, summary.csv, results.json, results.csv, report.html\n`);
  return 0;
}

/** A benchmark's folder writer (as compare writes one, with the benchmark's own summary.csv and summary.md). */
function benchFolderWriter(outDir: string, summaryCsv: (r: CompareResults) => string, summaryMd: (r: CompareResults) => string): (results: CompareResults) => void {
  return (results) => {
    mkdirSync(outDir, { recursive: true });
    writeAtomic(join(outDir, 'results.json'), JSON.stringify(results, null, 1) + '\n');
    writeAtomic(join(outDir, 'results.csv'), compareCsv(results));
    writeAtomic(join(outDir, 'report.html'), renderReport(results));
    writeAtomic(join(outDir, 'summary.csv'), summaryCsv(results));
    writeAtomic(join(outDir, 'summary.md'), summaryMd(results) + '\n');
  };
}

/** A benchmark's line per finished run on stderr: refused or skipped (why), diverged, or its frames and mean ms. */
function benchRunLine(quiet: boolean): (r: RunRecord | SkippedRun) => void {
  return (r) => {
    if (quiet) return;
    const what = isSkipped(r) ? `${r.refused ? 'refused' : 'skipped'} (${r.skipped})` : r.diverged ? `DIVERGED at frame ${r.diverged.frame}` : `${countText(r.frames, 'frame')}, mean ${formatNumber(r.timing.meanMs ?? NaN)} ms`;
    process.stderr.write(`${runLabel(r)} on ${r.scene}: ${what}\n`);
    // where the wall time went on the host (a GPU run's wall clock can run far above its stamps: docs/hardware.md)
    if (!isSkipped(r) && r.host?.gpuWaitMs !== undefined) process.stderr.write(`  host: ${hostText(r.host)}\n`);
  };
}

/** `bench --avbd`: the AVBD benchmark (bench/avbd-bench.ts) into a folder, as compare writes one, with its summary. */
async function cmdAvbdBench(flags: Map<string, string[]>, argv: string[]): Promise<number> {
  for (const f of ['contacts', 'tradeoff', 'settings', 'chains', 'sizes', 'references']) if (flags.has(f)) throw new UsageError(`--${f} does not go with --avbd`);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '10', { integer: true, min: 1 });
  const bigFrames = numberFlag('big-frames', one(flags, 'big-frames') ?? String(frames), { integer: true, min: 1 });
  const sampleEvery = one(flags, 'sample-every') !== undefined ? numberFlag('sample-every', one(flags, 'sample-every')!, { integer: true, min: 1 }) : undefined;
  const list = (name: string) => (one(flags, name) === undefined ? undefined : one(flags, name)!.split(',').map((x) => x.trim()).filter(Boolean));
  const only = list('solvers');
  for (const id of only ?? []) findSolverOrThrow(id);
  const scenesGiven = list('scenes');
  for (const l of scenesGiven ?? []) if (!AVBD_BENCH_SCENES.some((s) => s.label === l)) throw new UsageError(`--scenes: unknown benchmark scene '${l}' (${AVBD_BENCH_SCENES.map((s) => s.label).join(', ')})`);
  const outDir = resolve(one(flags, 'out') ?? 'bench-avbd');
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new UsageError(`--out ${outDir}: is a file, not a folder`);
  if (!existsSync(dirname(outDir))) throw new UsageError(`--out ${outDir}: folder ${dirname(outDir)} does not exist`);
  const plan = avbdBenchPlan(AVBD_BENCH_SCENES.filter((s) => !scenesGiven || scenesGiven.includes(s.label)), only);
  // each scene under each solver checked before any runs: a refusal (memory, ranges) is one line and nothing written
  for (const { scene, solvers: ids } of plan)
    for (const id of ids) {
      const why = builtInRefusal(scene.scene, scene.params, id);
      if (why) throw why;
    }
  const runs = plan.reduce((a, p) => a + p.solvers.length, 0);
  if (!runs) throw new UsageError(`no solver to run: ${only ? `none of ${only.join(', ')} runs ` : ''}${plan.map((p) => p.scene.label).join(', ')}`);
  checkRunRecords('bench --avbd', { frames: Math.max(frames, bigFrames), sampleEvery: sampleEvery ?? 1, runs, json: true });
  findUplot();
  const note = avbdGpuNote(plan, only);
  if (note) process.stderr.write(`solverlab: note: ${note}\n`);
  const quiet = flags.has('quiet');
  const write = benchFolderWriter(outDir, avbdBenchCsv, (r) => avbdBenchTable(r, note));
  setWhere(() => 'during the AVBD benchmark', `what was done is in ${outDir}`);
  const results = await runAvbdBench({
    frames,
    bigFrames,
    solvers: only,
    scenes: scenesGiven,
    sampleEvery,
    command: ['solverlab', ...argv].join(' '),
    onRun: benchRunLine(quiet),
    onWarning: (line) => process.stderr.write(`solverlab: warning: ${line}\n`),
    onScene: write,
  });
  write(results);
  process.stdout.write(avbdBenchTable(results, note) + '\n');
  process.stderr.write(`written: ${join(outDir, 'summary.md')}, summary.csv, results.json, results.csv, report.html\n`);
  return 0;
}

async function cmdBench(flags: Map<string, string[]>, argv: string[] = []): Promise<number> {
  if (flags.has('avbd')) return cmdAvbdBench(flags, argv);
  if (flags.has('contacts')) return cmdContactBench(flags, argv);
  for (const f of ['big-frames', 'references', 'scenes', 'sample-every']) if (flags.has(f)) throw new UsageError(`--${f} goes with --contacts`);
  if (flags.has('tradeoff')) return cmdTradeoff(flags);
  for (const f of ['settings', 'chains']) if (flags.has(f)) throw new UsageError(`--${f} goes with --tradeoff`);
  const out = checkWritable('out', one(flags, 'out') ?? 'bench-results.json');
  const sizes = one(flags, 'sizes') ? indexList('sizes', one(flags, 'sizes')!) : [10_000, 100_000];
  for (const n of sizes) if (n < 40 || n % 40) throw new UsageError(`--sizes: ${n} is not a positive multiple of 40 beads`);
  const frames = numberFlag('frames', one(flags, 'frames') ?? '60', { integer: true, min: 1 });
  const ids = (one(flags, 'solvers') ?? 'jacobi-cpu,jacobi-gpu,rapier').split(',');
  for (const id of ids) if (!findSolver(id)) throw new UsageError(`unknown solver '${id}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
  // every size under every solver checked before any runs: a refusal is one line and nothing written (model/limits.ts)
  for (const n of sizes) for (const id of ids) checkMemory(`the necklace of ${countText(n, 'bead')}`, necklaceScene.count({ chains: n / 40, beads: 40 }), id);
  // and each run's series and timings (sampled every frame: the CPU solvers' default, the most a run keeps), one run at a time
  checkRunRecords('bench', { frames, sampleEvery: 1, sampleFlag: false });
  setWhere(() => 'during the benchmark', `nothing written to ${out}`);
  const results = await runBench({ sizes, frames, solvers: ids, log: (s) => process.stderr.write(s + '\n') });
  writeAtomic(out, JSON.stringify(results, null, 1) + '\n');
  process.stderr.write(`results written to ${out}\n`);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  // no command: the usage, and the status of bad input (`solverlab help` and `--help` exit 0)
  if (argv.length === 0) {
    process.stderr.write(`solverlab: no command given\n\n${overview()}\n`);
    return 2;
  }
  try {
    const { command, flags } = parseArgs(argv, commands);
    // Ctrl-C, SIGTERM, SIGHUP, kill -9: a watcher process removes the unfinished files and says where
    // the command stopped (cli/interrupt.ts); for the commands that run or write
    if (command === 'run' || command === 'compare' || command === 'bench' || (command === 'scenes' && flags.has('export'))) startWatcher();
    setGpuVerbose(flags.has('verbose')); // the GPU driver's own warnings only when asked (src/gpu/vulkan-drivers.ts)
    switch (command) {
      case 'help': {
        const about = flags.get('command')?.[0];
        console.log(about ? commandHelp(about, commands[about]) : overview());
        return 0;
      }
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
        return await cmdBench(flags, argv);
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
    // an error no check names is a fault of SolverLab's: --verbose shows where, for a report
    if (argv.includes('--verbose') && (e as Error).stack) process.stderr.write(`${(e as Error).stack}\n`);
    return 1;
  }
}
