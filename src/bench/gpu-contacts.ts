/**
 * The GPU contact benchmark (issue 23): `rain` of 10k and 100k bodies, `brick-wall` of 110k bricks (the
 * AVBD paper's count: 50 rows × 100 columns × 22 layers) and `pyramid` of base 100 (Box2D's
 * `large_pyramid`, 5,050 boxes), under every GPU solver that takes contacts (the registry's, so a new
 * one joins without an edit here), and `softstep-cpu` and `rapier` on the 10k rain in the same run.
 * Each scene is one compare (bench/compare.ts: every figure means what it means for `run`), sleeping off
 * (the GPU solvers do not sleep; the CPU references then do the same work).
 *
 * Per run, beside compare's record: ms per frame (mean and median, on the run's clock: GPU timestamps
 * where the adapter has them), split into collision (the `collide` stage: body boxes, broad and narrow
 * phase) and solve (every other stage: prepare contacts with the pair table and the colouring, warm
 * start, the sweeps, the integration, store impulses), each the mean over the frames whose stages were
 * timed (GPU timestamps around a pass per stage, gpu/frames.ts FramePasses; CPU solvers: wall clock,
 * every frame); the colours (most used, the last frame's sizes, the largest overflow set) and contact
 * points as the solver counted them (Solver.contactStats, read with the sampled snapshots); the touching
 * points and the worst penetration recomputed from the snapshots by the metrics (metrics/metrics.ts).
 */
import { solvers, findSolver } from '../solvers/registry.js';
import type { ParamValue } from '../scenes/scene.js';
import type { SolverOptions } from '../solvers/solver.js';
import { runCompare, machineInfo, type CompareProgress } from './compare.js';
import { isSkipped, meanFrameMs, runLabel, type CompareResults, type RunRecord, type SkippedRun } from './results.js';
import { formatNumber } from './table.js';
import { STAGE_SAMPLE_EVERY } from '../solvers/stages.js';

/** A scene of the benchmark: its label in the results, the built-in scene and its parameters. */
export interface BenchScene {
  label: string;
  scene: string;
  params: Record<string, ParamValue>;
  /** a scene of ~100k bodies: run for `bigFrames` */
  big?: boolean;
  /** the CPU references run on it too */
  references?: boolean;
}

export const GPU_CONTACT_SCENES: readonly BenchScene[] = [
  { label: 'rain-10k', scene: 'rain', params: { count: 10_000 }, references: true },
  { label: 'rain-100k', scene: 'rain', params: { count: 100_000 }, big: true },
  // 50 courses × (100 or 101 bricks) × 22 wythes = 110,550 bricks (docs/scenes.md)
  { label: 'brick-wall-110k', scene: 'brick-wall', params: { rows: 50, columns: 100, layers: 22 }, big: true },
  { label: 'pyramid-100', scene: 'pyramid', params: { base: 100 } },
];

/** The CPU references on the 10k rain (the issue's). */
export const GPU_CONTACT_REFERENCES = ['softstep-cpu', 'rapier'];

/** Every registered GPU solver that solves contacts (SolverInfo.supports.contacts). */
export function gpuContactSolvers(): string[] {
  return solvers.filter((s) => s.device === 'gpu' && s.supports?.contacts).map((s) => s.id);
}

/** Frames below which every frame's stages are timed (a short run would otherwise sample none or one). */
export const STAGE_EVERY_FRAME_BELOW = 64;

export interface GpuContactBenchOptions {
  /** frames per run on the scenes that are not big */
  frames: number;
  /** frames per run on the ~100k-body scenes (default `frames`) */
  bigFrames?: number;
  /** GPU solvers (default gpuContactSolvers()) */
  solvers?: string[];
  /** CPU solvers run on the 10k rain (default GPU_CONTACT_REFERENCES; [] for none) */
  references?: string[];
  /** scene labels to run (default all) */
  scenes?: string[];
  /** measure the metrics every K frames (default: 1 up to 60 frames, else ⌈frames / 60⌉) */
  sampleEvery?: number;
  /** time the GPU stages on one frame in this many (default 1 below STAGE_EVERY_FRAME_BELOW frames, else STAGE_SAMPLE_EVERY) */
  stageEvery?: number;
  onProgress?: (p: CompareProgress) => void;
  onRun?: (r: RunRecord | SkippedRun) => void;
  onWarning?: (line: string) => void;
  /** called with the results so far after each scene (a long benchmark keeps what it has) */
  onScene?: (results: CompareResults) => void;
  command?: string;
}

/** One line of the benchmark's summary: a run's figures, or why it did not run. */
export interface GpuContactRow {
  scene: string;
  solver: string;
  bodies: number | null;
  frames: number | null;
  /** the clock of the frame times ('gpu-timestamp' or 'wall') */
  clock: string | null;
  meanMs: number | null;
  medianMs: number | null;
  /** mean ms per timed frame in the collide stage, and in all the others; their clock */
  collisionMs: number | null;
  solveMs: number | null;
  /** the stages timed (a solver without a collide stage, e.g. Rapier's one world.step, is not split) */
  stageNames: string[] | null;
  /** of solveMs, the `prepare contacts` stage (records, warm-start matching by the pair table, the colouring) */
  prepareMs: number | null;
  stagesClock: string | null;
  /** the solver's own count at the last snapshot, and over the samples the most colours and the largest overflow set */
  points: number | null;
  manifolds: number | null;
  colours: number | null;
  colourSizes: number[] | null;
  overflow: number | null;
  /** touching points at the end and the worst penetration over the sampled frames, from the metrics (m) */
  touching: number | null;
  worstPenetration: number | null;
  /** 'diverged at frame N: reason', 'skipped: reason', or null */
  note: string | null;
}

/** The stage that is collision; every other stage of a contact solver is counted as solve. */
export const COLLISION_STAGE = 'collide';
/** The solve's first stage, shown apart: the contact records, the warm start's matching, the colouring. */
export const PREPARE_STAGE = 'prepare contacts';

export function gpuContactRow(r: RunRecord | SkippedRun): GpuContactRow {
  const empty = { bodies: null, frames: null, clock: null, meanMs: null, medianMs: null, collisionMs: null, solveMs: null, prepareMs: null, stageNames: null, stagesClock: null, points: null, manifolds: null, colours: null, colourSizes: null, overflow: null, touching: null, worstPenetration: null };
  if (isSkipped(r)) return { scene: r.scene, solver: runLabel(r), ...empty, note: `skipped: ${r.skipped}` };
  const stages = r.timing.stages;
  const collision = stages?.find((s) => s.name === COLLISION_STAGE)?.msPerFrame ?? null;
  const solve = stages ? stages.filter((s) => s.name !== COLLISION_STAGE).reduce((a, s) => a + s.msPerFrame, 0) : null;
  const sc = r.solverContacts;
  return {
    scene: r.scene,
    solver: runLabel(r),
    bodies: r.bodies,
    frames: r.frames,
    clock: r.timing.clock,
    meanMs: meanFrameMs(r),
    medianMs: r.timing.medianMs,
    collisionMs: collision,
    solveMs: stages && stages.length ? solve : null,
    stageNames: stages ? stages.map((s) => s.name) : null,
    prepareMs: stages?.find((s) => s.name === PREPARE_STAGE)?.msPerFrame ?? null,
    stagesClock: r.timing.stagesClock ?? null,
    points: sc ? sc.final.points : null,
    manifolds: sc ? sc.final.manifolds : null,
    colours: sc?.maxColours ?? null,
    colourSizes: sc?.final.colours?.sizes ?? null,
    overflow: sc?.maxOverflow ?? null,
    touching: r.contacts?.finalCount ?? null,
    worstPenetration: r.contacts?.worstMaxPenetration ?? null,
    note: r.diverged ? `diverged at frame ${r.diverged.frame}: ${r.diverged.reason}` : null,
  };
}

/** The default metric sampling: every frame up to 60 frames, else about 60 samples. */
export function defaultSampleEvery(frames: number): number {
  return frames <= 60 ? 1 : Math.ceil(frames / 60);
}

export async function runGpuContactBench(opts: GpuContactBenchOptions): Promise<CompareResults> {
  const gpuIds = opts.solvers ?? gpuContactSolvers();
  const refs = opts.references ?? GPU_CONTACT_REFERENCES;
  for (const id of [...gpuIds, ...refs]) if (!findSolver(id)) throw new Error(`unknown solver '${id}'`);
  const scenes = opts.scenes ? GPU_CONTACT_SCENES.filter((s) => opts.scenes!.includes(s.label)) : GPU_CONTACT_SCENES;
  if (opts.scenes) for (const l of opts.scenes) if (!GPU_CONTACT_SCENES.some((s) => s.label === l)) throw new Error(`unknown benchmark scene '${l}' (${GPU_CONTACT_SCENES.map((s) => s.label).join(', ')})`);
  const all: CompareResults = {
    createdAt: new Date().toISOString(),
    command: opts.command ?? '',
    machine: machineInfo([]),
    versions: {},
    frames: opts.frames,
    scenes: [],
    solvers: [...new Set([...gpuIds, ...refs])],
    runs: [],
  };
  const options: Partial<SolverOptions> = { sleep: 0 };
  for (const s of scenes) {
    const frames = s.big ? (opts.bigFrames ?? opts.frames) : opts.frames;
    const ids = s.references ? [...gpuIds, ...refs] : gpuIds;
    if (!ids.length) continue;
    const r = await runCompare({
      scenes: [s.scene],
      solvers: ids,
      frames,
      params: s.params,
      options,
      sampleEvery: opts.sampleEvery ?? defaultSampleEvery(frames),
      stageEvery: opts.stageEvery ?? (frames < STAGE_EVERY_FRAME_BELOW ? 1 : STAGE_SAMPLE_EVERY),
      onProgress: (p) => opts.onProgress?.({ ...p, scene: s.label }),
      onRun: (run) => opts.onRun?.({ ...run, scene: s.label }),
      onWarning: opts.onWarning,
      command: opts.command,
    });
    // the scene's label in place of its name: the two rains are told apart in every table and in the report
    for (const run of r.runs) all.runs.push({ ...run, scene: s.label });
    all.scenes.push(s.label);
    all.machine = { ...r.machine, adapters: [...new Set([...all.machine.adapters, ...r.machine.adapters])] };
    all.versions = r.versions;
    opts.onScene?.(all);
  }
  return all;
}

const cell = (x: number | null, digits = 3) => (x === null ? '—' : formatNumber(x, digits));

/** The summary as a Markdown table (summary.md, and what the command prints). */
export function gpuContactTable(results: CompareResults): string {
  const rows = results.runs.map(gpuContactRow);
  const lines = [
    '| scene | solver | frames | mean / median ms | collision / solve (prepare) ms | colours, most (largest overflow set) | points (manifolds) at the end | touching at the end | worst penetration |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    if (r.bodies === null) {
      lines.push(`| ${r.scene} | \`${r.solver}\` | ${r.note} | | | | | | |`);
      continue;
    }
    const clock = r.clock === 'gpu-timestamp' ? ' (GPU)' : ' (wall)';
    const split = r.collisionMs === null ? (r.stageNames?.length ? `not split (${r.stageNames.join(', ')})` : (r.stagesClock ?? '—')) : `${cell(r.collisionMs)} / ${cell(r.solveMs)}${r.prepareMs === null ? '' : ` (${cell(r.prepareMs)})`}`;
    const colours = r.colours === null ? '—' : `${r.colours} (${r.overflow})`;
    const points = r.points === null ? '—' : `${formatNumber(r.points, 15)} (${formatNumber(r.manifolds, 15)})`;
    const pen = r.worstPenetration === null ? '—' : `${formatNumber(1000 * r.worstPenetration)} mm`;
    const note = r.note ? ` — ${r.note}` : '';
    lines.push(`| ${r.scene} | \`${r.solver}\` | ${r.frames}${note} | ${cell(r.meanMs)} / ${cell(r.medianMs)}${clock} | ${split} | ${colours} | ${points} | ${cell(r.touching, 15)} | ${pen} |`);
  }
  const clocks = [...new Set(rows.map((r) => r.stagesClock).filter((c): c is string => c !== null))];
  lines.push('', `Collision: the \`collide\` stage (body boxes, broad phase, narrow phase); solve: every other stage, of which prepare: \`prepare contacts\` (the records, the warm start's matching by the pair table, the colouring). Stage times are means over the timed frames (${clocks.join('; ') || 'none'}); mean / median over every frame.`);
  return lines.join('\n');
}

/** The summary as CSV: one row per run, the figures of GpuContactRow. */
export function gpuContactCsv(results: CompareResults): string {
  const head = ['scene', 'solver', 'bodies', 'frames', 'clock', 'mean_ms', 'median_ms', 'collision_ms', 'solve_ms', 'prepare_ms', 'stages_clock', 'points', 'manifolds', 'colours_max', 'colour_sizes_last', 'overflow_max', 'touching_points', 'worst_penetration_m', 'note'];
  const q = (v: unknown) => {
    if (v === null || v === undefined) return '';
    const s = Array.isArray(v) ? v.join(' ') : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const rows = results.runs.map(gpuContactRow).map((r) =>
    [r.scene, r.solver, r.bodies, r.frames, r.clock, r.meanMs, r.medianMs, r.collisionMs, r.solveMs, r.prepareMs, r.stagesClock, r.points, r.manifolds, r.colours, r.colourSizes, r.overflow, r.touching, r.worstPenetration, r.note].map(q).join(','),
  );
  return [head.join(','), ...rows].join('\n') + '\n';
}
