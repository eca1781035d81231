/**
 * The solver × scene matrix: every chosen solver on every chosen scene, the
 * same frames and options, each run through runSolver (so every figure means
 * what it means for `run`), collected as CompareResults with the machine it ran
 * on. A pair that cannot run is a SkippedRun with the reason — a solver that
 * declines the world (unsupported), no GPU adapter, a scene beyond the adapter's
 * limits, a solver that throws — never a crash of the whole matrix.
 *
 * Parameters: a `--param k=v` applies to every chosen built-in scene that has
 * parameter k, `--param SCENE.k=v` to that scene alone; one that no chosen scene has is an
 * InputError (a typo must not silently compare the defaults).
 *
 * Settings: an entry of the solver list may set options of its own (SolverEntry: on the command line
 * `NAME:key=value[:key=value…]`, src/cli/solver-entries.ts), so one compare runs the same solver at
 * several settings, at equal cost rather than equal flags. A run's options are, in order: the shared
 * defaults, the solver's own, the shared options asked for (`--iterations` …), then the entry's settings.
 * Such a run is labelled `NAME:key=value…` (entryLabel) wherever it is shown. An entry that sets an option
 * its solver does not read, or that runs with the same options as another entry of the same solver, is an
 * InputError (either would compare a run with itself).
 */
import { cpus, totalmem, type as osType, release, arch } from 'node:os';
import { createRequire } from 'node:module';
import { loadScene, isSceneFile, builtInScene, builtInRefusal, InputError, type LoadedScene } from '../scenes/load.js';
import { findSolver, solvers } from '../solvers/registry.js';
import { resolveOptions, optionsRead, solverOptionSpecs, type SolverOptions } from '../solvers/solver.js';
import type { ParamValue } from '../scenes/scene.js';
import { acquireGpu, NoGpuError, type GpuContext } from '../gpu/device.js';
import { runSolver } from '../run/run.js';
import { runRecord, isSkipped, runLabel, finiteOrNull, type CompareResults, type RunRecord, type SkippedRun, type MachineInfo } from './results.js';
import { VERSION } from '../version.js';
import { preflight } from '../model/limits.js';
import { DriftTracker, holdVerdict, DEFAULT_HOLD_TOLERANCES, type HoldTolerances } from './holds.js';

export interface CompareProgress {
  scene: string;
  /** the run's label (entryLabel: the solver's id, with its settings where its entry has some) */
  solver: string;
  /** 0-based index of this run in the matrix, and the matrix size */
  run: number;
  runs: number;
  frame: number;
  frames: number;
}

/** One entry of a compare's solver list: a solver, and the options it runs with that the others do not share. */
export interface SolverEntry {
  id: string;
  /** override CompareOptions.options for this entry's runs; its label names them in the order given */
  settings?: Partial<SolverOptions>;
}

export interface CompareOptions {
  /** built-in scene names or scene-file paths */
  scenes: string[];
  /** solver ids, or entries with settings of their own (the first is the speed baseline) */
  solvers: (string | SolverEntry)[];
  frames: number;
  params?: Record<string, ParamValue>;
  options?: Partial<SolverOptions>;
  /** record the residual of this frame's solve for solvers that can (default: frames / 2, at most 30) */
  residualFrame?: number;
  /** frames for some scenes (by name) in place of `frames` (a compare whose scenes need different run lengths) */
  sceneFrames?: Record<string, number>;
  /** false: record no residuals (a benchmark: every frame timed, none spent recording) */
  residuals?: boolean;
  sampleEvery?: number;
  /** GPU solvers: time the stages of one frame in this many (run/run.ts RunOptions.stageEvery; default theirs) */
  stageEvery?: number;
  onProgress?: (p: CompareProgress) => void;
  /** called when a run (or skip) is done */
  onRun?: (r: RunRecord | SkippedRun) => void;
  /** a warning of the pre-run checks (model/limits.ts preflight: a result that may still be useful) */
  onWarning?: (line: string) => void;
  command?: string;
  /** what a run must keep to hold its scene (bench/holds.ts; default DEFAULT_HOLD_TOLERANCES: 1 cm, 1 cm) */
  holds?: HoldTolerances;
}

/**
 * Splits the --param values among the chosen scenes: `key=value` goes to every chosen built-in scene
 * that has parameter `key`; `SCENE.key=value` to that scene alone, over the shared value (e.g.
 * `--scenes domino,rain --param domino.count=50`). InputError for a parameter no chosen scene has, or
 * a SCENE that is not chosen or lacks the key.
 */
export function paramsPerScene(sceneRefs: string[], params: Record<string, ParamValue>): Map<string, Record<string, ParamValue>> {
  const out = new Map<string, Record<string, ParamValue>>();
  for (const ref of sceneRefs) out.set(ref, {});
  const has = (ref: string, k: string) => {
    if (isSceneFile(ref)) return false;
    const scene = builtInScene(ref);
    return k in scene.params || k in (scene.vectorParams ?? {});
  };
  const scoped: [string, string, ParamValue][] = [];
  for (const [k, v] of Object.entries(params)) {
    // SCENE.key: the scene is everything before the last dot (a parameter's name has none)
    const dot = k.lastIndexOf('.');
    if (dot > 0) {
      const ref = k.slice(0, dot), key = k.slice(dot + 1);
      if (!sceneRefs.includes(ref)) throw new InputError(`--param ${k}: '${ref}' is not one of the chosen scenes (${sceneRefs.join(', ')})`);
      if (isSceneFile(ref)) throw new InputError(`--param ${k}: a scene file has no parameters (edit the file instead)`);
      if (!has(ref, key)) {
        const scene = builtInScene(ref);
        throw new InputError(`--param ${k}: scene '${ref}' has no parameter '${key}' (it has: ${[...Object.keys(scene.params), ...Object.keys(scene.vectorParams ?? {})].join(', ')})`);
      }
      scoped.push([ref, key, v]);
      continue;
    }
    const takers = sceneRefs.filter((ref) => has(ref, k));
    if (!takers.length) throw new InputError(`--param ${k}: none of the chosen scenes (${sceneRefs.join(', ')}) has a parameter '${k}'`);
    for (const ref of takers) out.get(ref)![k] = v;
  }
  for (const [ref, key, v] of scoped) out.get(ref)![key] = v;
  return out;
}

/** An entry as a SolverEntry (a bare id has no settings). */
export function solverEntry(e: string | SolverEntry): SolverEntry {
  return typeof e === 'string' ? { id: e } : e;
}

/**
 * What an entry's runs are called: the solver's id, then each setting as `:flag=value` in the order
 * given, with the option's command-line flag name (solverOptionSpecs), e.g. 'pgs-cpu:substeps=4:iterations=8'.
 */
export function entryLabel(e: string | SolverEntry): string {
  const { id, settings } = solverEntry(e);
  const parts = Object.entries(settings ?? {}).map(([k, v]) => `:${solverOptionSpecs[k as keyof SolverOptions]?.flag ?? k}=${v}`);
  return id + parts.join('');
}

function hasSettings(e: SolverEntry): boolean {
  return !!e.settings && Object.keys(e.settings).length > 0;
}

/**
 * The entries checked: known solvers, settings that are options their solver reads (SolverInfo.reads),
 * and no two entries that would run the same solver with the same options (compared over the options it
 * reads, after the shared options and defaults: `pgs-cpu` and `pgs-cpu:iterations=10` are one run).
 */
function checkEntries(entries: SolverEntry[], shared: Partial<SolverOptions> = {}): void {
  const seen = new Map<string, string>();
  for (const e of entries) {
    const label = entryLabel(e);
    const info = findSolver(e.id);
    if (!info) throw new InputError(`unknown solver '${e.id}' (solvers: ${solvers.map((s) => s.id).join(', ')})`);
    for (const key of Object.keys(e.settings ?? {})) {
      const spec = solverOptionSpecs[key as keyof SolverOptions];
      if (!spec) throw new InputError(`'${label}': unknown option '${key}'`);
      if (!info.reads.includes(key as keyof SolverOptions))
        throw new InputError(`'${label}': ${info.id} does not read ${spec.flag} (it reads ${optionsRead(info).map((k) => solverOptionSpecs[k].flag).join(', ')})`);
    }
    const options = resolveOptions(info, { ...shared, ...e.settings });
    const key = `${e.id}\0${optionsRead(info).map((k) => options[k]).join('\0')}`;
    const other = seen.get(key);
    if (other !== undefined)
      throw new InputError(other === label ? `'${label}' is listed twice` : `'${other}' and '${label}' run ${e.id} with the same options (listed twice)`);
    seen.set(key, label);
  }
}

/** Checks names, files and parameters before anything runs; returns the loaded scenes. */
export function prepareCompare(opts: CompareOptions): LoadedScene[] {
  if (!opts.scenes.length) throw new InputError('compare needs at least one scene');
  if (!opts.solvers.length) throw new InputError('compare needs at least one solver');
  const dupScene = opts.scenes.find((x, i) => opts.scenes.indexOf(x) !== i);
  if (dupScene) throw new InputError(`'${dupScene}' is listed twice`);
  const entries = opts.solvers.map(solverEntry);
  checkEntries(entries, opts.options);
  for (const ref of opts.scenes) if (!isSceneFile(ref)) builtInScene(ref);
  const per = paramsPerScene(opts.scenes, opts.params ?? {});
  // memory from the built-in scenes' counts, before any is built: where no scene × solver pair fits,
  // the first refusal is the answer (one line, exit 2); a pair that does not fit among others that do
  // is skipped with its reason when its turn comes (runCompare)
  let fits = false;
  let refusal: InputError | null = null;
  for (const ref of opts.scenes)
    for (const { id } of entries) {
      const why = builtInRefusal(ref, per.get(ref)!, id);
      if (why) refusal ??= why;
      else fits = true;
    }
  if (!fits && refusal) throw refusal;
  return opts.scenes.map((ref) => loadScene(ref, per.get(ref)!));
}

function packageVersion(name: string): string | null {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return null; // e.g. inside the single-file bundle
  }
}

export function machineInfo(adapters: string[]): MachineInfo {
  const cpu = cpus();
  return {
    os: `${osType()} ${release()} ${arch()}`,
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    adapters,
  };
}

/** @param opts.loaded the scenes prepareCompare returned for these options (else it runs here) */
export async function runCompare(opts: CompareOptions & { loaded?: LoadedScene[] }): Promise<CompareResults> {
  const loaded = opts.loaded ?? prepareCompare(opts);
  // default: early enough that a run which later diverges still has its curve, late enough that warm starting is under way
  const residualFrame = opts.residualFrame ?? Math.min(30, Math.max(1, Math.floor(opts.frames / 2)));
  const createdAt = new Date().toISOString();
  const runs: (RunRecord | SkippedRun)[] = [];
  const adapters = new Set<string>();
  let gpu: GpuContext | undefined;
  let gpuError: string | undefined;
  const entries = opts.solvers.map(solverEntry);
  const labels = entries.map(entryLabel);
  const total = loaded.length * entries.length;

  const done = (r: RunRecord | SkippedRun) => {
    runs.push(r);
    opts.onRun?.(r);
  };

  try {
    for (const scene of loaded) {
      const frames = opts.sceneFrames?.[scene.name] ?? opts.frames;
      for (const [e, entry] of entries.entries()) {
        const { id } = entry;
        const index = runs.length;
        const info = findSolver(id)!;
        // each solver at its own defaults unless asked otherwise; an entry's settings over the shared options
        const options = resolveOptions(info, { ...opts.options, ...entry.settings }, scene.world);
        // an entry with settings: its label and settings in the record, beside the solver's id (results.ts runLabel)
        const named = hasSettings(entry) ? { label: labels[e], settings: { ...entry.settings } } : {};
        // refused: the solver declines the scene (unsupported, or the pre-run checks); else skipped for want of a means (no adapter, …)
        const skip = (reason: string, refused = false) => done({ scene: scene.name, params: scene.params, solver: id, ...named, skipped: reason, ...(refused ? { refused } : {}) });
        const reason = info.unsupported?.(scene.world, options) ?? null;
        if (reason) {
          skip(reason, true);
          continue;
        }
        const ignored = info.ignores?.(scene.world);
        if (ignored) opts.onWarning?.(`${labels[e]} on ${scene.name}: ${ignored}`);
        // what `run` checks before its solver allocates: memory for this solver, the arithmetic's ranges;
        // a refusal skips this pair with its reason, the others still run
        try {
          const what = scene.file !== undefined ? `scene file ${scene.file}` : `scene '${scene.name}'`;
          for (const w of preflight(what, scene.world, id, { ...options, where: scene.file })) opts.onWarning?.(`${labels[e]} on ${scene.name}: ${w}`);
        } catch (e) {
          if (!(e instanceof InputError)) throw e;
          skip(e.message, true);
          continue;
        }
        if (info.device === 'gpu' && !gpu) {
          if (gpuError === undefined) {
            try {
              gpu = await acquireGpu();
            } catch (e) {
              if (!(e instanceof NoGpuError)) throw e;
              gpuError = e.message;
            }
          }
          if (!gpu) {
            skip(`no WebGPU adapter: ${gpuError}`);
            continue;
          }
        }
        let solver;
        try {
          solver = await info.create(scene.world, options, gpu);
        } catch (e) {
          skip(`could not be created: ${(e as Error).message}`);
          continue;
        }
        // a scene built to stand still: its drift from the first sample at or after its settling (bench/holds.ts)
        const restsAfter = scene.file === undefined ? builtInScene(scene.name).restsAfter : undefined;
        const drift = restsAfter !== undefined ? new DriftTracker(restsAfter) : null;
        try {
          adapters.add(solver.adapter.name);
          const result = await runSolver(solver, scene.world, {
            frames,
            sampleEvery: opts.sampleEvery,
            // the sampled frames: snapshots the metrics take anyway, no extra readback
            ...(drift ? { observe: { every: Math.max(1, Math.floor(opts.sampleEvery ?? 1)), onSnapshot: (snap) => drift.observe(snap) } } : {}),
            // where the solver records them on this world (one that does not says why: residualsRefusal)
            residualFrame: opts.residuals !== false && solver.stepRecordingResiduals && !solver.residualsRefusal?.() && frames >= 1 ? Math.min(residualFrame, frames) : undefined,
            stageEvery: opts.stageEvery,
            onProgress: (frame, frames) => opts.onProgress?.({ scene: scene.name, solver: labels[e], run: index, runs: total, frame, frames }),
          });
          const { scene: name, params, solver: solverId, ...rest } = runRecord({ scene: scene.name, params: scene.params, options, iterationMode: info.iterationMode }, result);
          const restFigures = drift ? drift.result() : undefined;
          const holds = holdVerdict({ ...rest, ...(restFigures ? { rest: restFigures } : {}) }, opts.holds ?? DEFAULT_HOLD_TOLERANCES);
          const judged = {
            ...(restFigures ? { rest: { from: restFigures.from, drift: restFigures.drift === null ? null : finiteOrNull(restFigures.drift) } } : {}),
            ...(holds ? { holds } : {}),
          };
          done({ scene: name, params, solver: solverId, ...named, ...rest, ...judged }); // the label and settings after the solver's id
        } catch (e) {
          skip(`failed while running: ${(e as Error).message}`);
        } finally {
          solver.destroy();
        }
      }
    }
  } finally {
    gpu?.device.destroy();
  }

  // steps/s relative to the first entry of the solver list on the same scene
  for (const r of runs) {
    if (isSkipped(r)) continue;
    const first = runs.find((x) => x.scene === r.scene && runLabel(x) === labels[0]);
    const base = first && !isSkipped(first) ? first.timing.stepsPerSecond : null;
    r.stepsPerSecondRatio = base && r.timing.stepsPerSecond !== null ? r.timing.stepsPerSecond / base : null;
  }

  const versions: Record<string, string> = { solverlab: VERSION, node: process.version };
  for (const name of ['webgpu', '@dimforge/rapier3d-compat', 'zod', 'uplot']) {
    const v = packageVersion(name);
    if (v) versions[name] = v;
  }
  return {
    createdAt,
    command: opts.command ?? '',
    machine: machineInfo([...adapters]),
    versions,
    frames: opts.frames,
    holdTolerances: opts.holds ?? DEFAULT_HOLD_TOLERANCES,
    scenes: loaded.map((s) => s.name),
    solvers: labels,
    runs,
  };
}
