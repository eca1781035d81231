/**
 * The AVBD benchmark (issue 24): the AVBD paper's large scenes under `avbd-gpu` beside every other GPU
 * solver that can run them, and the CPU path under `avbd-cpu`:
 *
 *   brick-wall-110k  `brick-wall` 50 rows × 100 columns × 22 layers = 110,550 bricks (the paper's 110k ring
 *                    at 4 iterations took 9.8 ms a frame on an RTX 4090); GPU solvers that take contacts
 *   necklace-100k    `necklace` 2,500 chains × 40 beads (point joints, no contacts); GPU solvers with point joints
 *   pyramid-100      `pyramid` of base 100 (5,050 boxes) on the CPU path: avbd-cpu
 *
 * The GPU solvers come from the registry, never from a list here: each registered GPU solver that accepts
 * a small instance of the scene (its `unsupported`, asked of the same scene at a few bodies: the same
 * constraint types, shapes and collisions) runs it, so `avbd-gpu` joins the day it is registered. Until
 * then the benchmark runs what there is and says that `avbd-gpu` was not found.
 *
 * Each scene is one compare (bench/compare.ts), sleeping off, so every figure means what it means for
 * `run`: ms per frame (mean and median, on the run's clock: GPU timestamps where the adapter has them),
 * iterations × substeps (the solver's own defaults), the worst max joint violation and the worst
 * penetration over the sampled frames (metrics recomputed from the states, metrics/metrics.ts).
 */
import { solvers, findSolver } from '../solvers/registry.js';
import { builtInScene } from '../scenes/load.js';
import type { ParamValue } from '../scenes/scene.js';
import type { SolverInfo, SolverOptions } from '../solvers/solver.js';
import { runCompare, machineInfo, type CompareProgress } from './compare.js';
import { defaultSampleEvery, STAGE_EVERY_FRAME_BELOW } from './gpu-contacts.js';
import { isSkipped, meanFrameMs, runLabel, type CompareResults, type RunRecord, type SkippedRun } from './results.js';
import { formatNumber } from './table.js';
import { STAGE_SAMPLE_EVERY } from '../solvers/stages.js';

/** The solver the benchmark is for. */
export const AVBD_GPU = 'avbd-gpu';

export interface AvbdBenchScene {
  label: string;
  scene: string;
  params: Record<string, ParamValue>;
  /** the same scene at a few bodies: what a solver is asked whether it runs (SolverInfo.unsupported) */
  probe: Record<string, ParamValue>;
  /** 'gpu': every registered GPU solver that runs it; 'cpu': these CPU solvers */
  path: 'gpu' | 'cpu';
  cpuSolvers?: string[];
  /** ~100k bodies: run for `bigFrames` */
  big?: boolean;
}

export const AVBD_BENCH_SCENES: readonly AvbdBenchScene[] = [
  // 50 courses × (100 or 101 bricks) × 22 wythes = 110,550 bricks (docs/scenes.md), as bench --contacts
  { label: 'brick-wall-110k', scene: 'brick-wall', params: { rows: 50, columns: 100, layers: 22 }, probe: { rows: 2, columns: 2, layers: 1 }, path: 'gpu', big: true },
  { label: 'necklace-100k', scene: 'necklace', params: { chains: 2500, beads: 40 }, probe: { chains: 1, beads: 3 }, path: 'gpu', big: true },
  { label: 'pyramid-100', scene: 'pyramid', params: { base: 100 }, probe: { base: 2 }, path: 'cpu', cpuSolvers: ['avbd-cpu'] },
];

/**
 * The registered GPU solvers that run `scene` (asked of its small probe instance), in registry order;
 * `registry` is the solver list (the registry's by default; a test passes its own).
 */
export function gpuSolversFor(scene: AvbdBenchScene, registry: readonly Pick<SolverInfo, 'id' | 'device' | 'unsupported'>[] = solvers): string[] {
  const world = builtInScene(scene.scene).build(scene.probe as Record<string, number>);
  return registry.filter((s) => s.device === 'gpu' && !s.unsupported?.(world)).map((s) => s.id);
}

/** The solvers the benchmark runs on each scene, and a note where avbd-gpu is missing or refuses one. */
export function avbdBenchPlan(scenes: readonly AvbdBenchScene[] = AVBD_BENCH_SCENES, only?: string[]): { scene: AvbdBenchScene; solvers: string[] }[] {
  return scenes.map((scene) => {
    const ids = scene.path === 'gpu' ? gpuSolversFor(scene) : [...(scene.cpuSolvers ?? [])];
    return { scene, solvers: only ? ids.filter((id) => only.includes(id)) : ids };
  });
}

/** What to say about avbd-gpu: null where it is registered and runs every GPU scene of the plan. */
export function avbdGpuNote(plan: { scene: AvbdBenchScene; solvers: string[] }[], only?: string[]): string | null {
  if (only && !only.includes(AVBD_GPU)) return null; // not asked for
  if (!plan.some((p) => p.scene.path === 'gpu')) return null; // no GPU scene chosen
  if (!findSolver(AVBD_GPU)) return `${AVBD_GPU} was not found in the solver registry: the benchmark ran the GPU solvers there are (${[...new Set(plan.filter((p) => p.scene.path === 'gpu').flatMap((p) => p.solvers))].join(', ') || 'none'})`;
  const without = plan.filter((p) => p.scene.path === 'gpu' && !p.solvers.includes(AVBD_GPU)).map((p) => p.scene.label);
  return without.length ? `${AVBD_GPU} does not run ${without.join(', ')} (it refuses the scene)` : null;
}

export interface AvbdBenchOptions {
  frames: number;
  /** frames on the ~100k-body scenes (default `frames`) */
  bigFrames?: number;
  /** scene labels (default all) */
  scenes?: string[];
  /** only these solvers (default: the plan's) */
  solvers?: string[];
  sampleEvery?: number;
  onProgress?: (p: CompareProgress) => void;
  onRun?: (r: RunRecord | SkippedRun) => void;
  onWarning?: (line: string) => void;
  /** the results so far, after each scene */
  onScene?: (results: CompareResults) => void;
  command?: string;
}

export async function runAvbdBench(opts: AvbdBenchOptions): Promise<CompareResults> {
  for (const l of opts.scenes ?? []) if (!AVBD_BENCH_SCENES.some((s) => s.label === l)) throw new Error(`unknown benchmark scene '${l}' (${AVBD_BENCH_SCENES.map((s) => s.label).join(', ')})`);
  const scenes = opts.scenes ? AVBD_BENCH_SCENES.filter((s) => opts.scenes!.includes(s.label)) : AVBD_BENCH_SCENES;
  const plan = avbdBenchPlan(scenes, opts.solvers);
  const all: CompareResults = {
    createdAt: new Date().toISOString(),
    command: opts.command ?? '',
    machine: machineInfo([]),
    versions: {},
    frames: opts.frames,
    scenes: [],
    solvers: [...new Set(plan.flatMap((p) => p.solvers))],
    runs: [],
  };
  const options: Partial<SolverOptions> = { sleep: 0 };
  for (const { scene: s, solvers: ids } of plan) {
    if (!ids.length) continue;
    const frames = s.big ? (opts.bigFrames ?? opts.frames) : opts.frames;
    const r = await runCompare({
      scenes: [s.scene],
      solvers: ids,
      frames,
      params: s.params,
      options,
      residuals: false, // every frame timed (a recorded frame is left out of the times)
      sampleEvery: opts.sampleEvery ?? defaultSampleEvery(frames),
      stageEvery: frames < STAGE_EVERY_FRAME_BELOW ? 1 : STAGE_SAMPLE_EVERY,
      onProgress: (p) => opts.onProgress?.({ ...p, scene: s.label }),
      onRun: (run) => opts.onRun?.({ ...run, scene: s.label }),
      onWarning: opts.onWarning,
      command: opts.command,
    });
    for (const run of r.runs) all.runs.push({ ...run, scene: s.label });
    all.scenes.push(s.label);
    all.machine = { ...r.machine, adapters: [...new Set([...all.machine.adapters, ...r.machine.adapters])] };
    all.versions = r.versions;
    opts.onScene?.(all);
  }
  return all;
}

/** One line of the summary: a run's figures, or why it did not run. */
export interface AvbdBenchRow {
  scene: string;
  solver: string;
  bodies: number | null;
  frames: number | null;
  clock: string | null;
  meanMs: number | null;
  medianMs: number | null;
  /** iterations per (sub)step and substeps per frame, as the run used them */
  iterations: number | null;
  substeps: number | null;
  /** worst max |C| over the joints (m; null on a scene without joints) and worst penetration (m; null without contacts) */
  worstViolation: number | null;
  worstPenetration: number | null;
  note: string | null;
}

export function avbdBenchRow(r: RunRecord | SkippedRun): AvbdBenchRow {
  if (isSkipped(r))
    return { scene: r.scene, solver: runLabel(r), bodies: null, frames: null, clock: null, meanMs: null, medianMs: null, iterations: null, substeps: null, worstViolation: null, worstPenetration: null, note: `${r.refused ? 'refused' : 'skipped'}: ${r.skipped}` };
  return {
    scene: r.scene,
    solver: runLabel(r),
    bodies: r.bodies,
    frames: r.frames,
    clock: r.timing.clock,
    meanMs: meanFrameMs(r),
    medianMs: r.timing.medianMs,
    iterations: r.options.iterations ?? null,
    substeps: r.options.substeps ?? null,
    worstViolation: r.constraints > 0 ? r.violation.worstMax : null,
    worstPenetration: r.contacts?.worstMaxPenetration ?? null,
    note: r.diverged ? `diverged at frame ${r.diverged.frame}: ${r.diverged.reason}` : null,
  };
}

const cell = (x: number | null, digits = 3) => (x === null ? '—' : formatNumber(x, digits));

/** The summary as a Markdown table, with the note on avbd-gpu where there is one. */
export function avbdBenchTable(results: CompareResults, note: string | null): string {
  const lines = [
    '| scene | solver | bodies | frames | mean / median ms per frame | iterations × substeps | worst violation | worst penetration |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of results.runs.map(avbdBenchRow)) {
    if (r.bodies === null) {
      lines.push(`| ${r.scene} | \`${r.solver}\` | ${r.note} | | | | | |`);
      continue;
    }
    const clock = r.clock === 'gpu-timestamp' ? ' (GPU)' : ' (wall)';
    const len = (m: number | null) => (m === null ? '—' : `${formatNumber(1000 * m)} mm`);
    lines.push(`| ${r.scene} | \`${r.solver}\` | ${formatNumber(r.bodies, 15)} | ${r.frames}${r.note ? ` — ${r.note}` : ''} | ${cell(r.meanMs)} / ${cell(r.medianMs)}${clock} | ${r.iterations ?? '—'} × ${r.substeps ?? '—'} | ${len(r.worstViolation)} | ${len(r.worstPenetration)} |`);
  }
  lines.push('', 'Sleeping off; each solver at its own defaults. Worst violation: max |C| over the joints, worst penetration: the deepest contact, each the worst over the sampled frames (recomputed from the states). Mean / median over every frame, on the clock named.');
  if (note) lines.push('', `Note: ${note}.`);
  return lines.join('\n');
}

export function avbdBenchCsv(results: CompareResults): string {
  const head = ['scene', 'solver', 'bodies', 'frames', 'clock', 'mean_ms', 'median_ms', 'iterations', 'substeps', 'worst_violation_m', 'worst_penetration_m', 'note'];
  const q = (v: unknown) => {
    if (v === null || v === undefined) return '';
    const s = String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const rows = results.runs.map(avbdBenchRow).map((r) => [r.scene, r.solver, r.bodies, r.frames, r.clock, r.meanMs, r.medianMs, r.iterations, r.substeps, r.worstViolation, r.worstPenetration, r.note].map(q).join(','));
  return [head.join(','), ...rows].join('\n') + '\n';
}
