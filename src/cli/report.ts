/** The run summary as text (CLI) and as JSON (--json): one definition of each figure. */
import { formatCompared, type Jump, type RunHost, type RunResult } from '../run/run.js';
import { energyDriftPercent, type RunMeta } from '../bench/results.js';

import { countText, formatNumber, optionsText } from '../bench/table.js';
import { formatBytes } from '../model/limits.js';
import type { ConstraintForce } from '../particles/system.js';

/** A number for people: NaN and infinities are never printed as numbers. */
const num = (x: number, digits = 3) => formatNumber(x, digits);

/**
 * A run's host time per frame in one line (run/run.ts RunHost): the loop's wall and its parts, a GPU solver's
 * step split (recording, submit, the wait for the GPU, the stamps), and its WebGPU calls per frame.
 */
export function hostText(h: RunHost): string {
  const split = h.gpuWaitMs !== undefined ? ` (record ${num(h.encodeMs!)}, submit ${num(h.submitMs!)}, GPU wait ${num(h.gpuWaitMs)}, stamps ${num(h.stampsMs!)})` : '';
  let s = `${num(h.wallMs)} ms per frame: step ${num(h.stepMs)}${split}, snapshots ${num(h.snapshotMs)}, metrics ${num(h.metricsMs)}`;
  if (h.residualFrameMs > 0) s += `, residual frame ${num(h.residualFrameMs)}`;
  s += `, other ${num(h.otherMs)}`;
  const c = h.calls;
  if (c) s += ` · per frame ${num(c.indirectDispatches)} indirect dispatches (${num(c.indirectMs)} ms) + ${num(c.dispatches)} direct, ${num(c.passes)} passes, ${num(c.submits)} submits, ${num(c.maps)} readbacks (${num(c.mapMs)} ms), ${num(c.buffersCreated)} buffers / ${num(c.bindGroupsCreated)} bind groups / ${num(c.pipelinesCreated)} pipelines created`;
  if (h.dawnValidation === false) s += ' · Dawn validation off';
  return s;
}

const clockName = { 'gpu-timestamp': 'GPU timestamps', wall: 'wall clock' } as const;

/** What the summary includes beyond its figures. */
export interface SummaryOptions {
  /** one line per constraint (λ and force at the initial state) instead of the one-line digest */
  constraints?: boolean;
}

/** The per-constraint forces in one line: how many, the largest force and where (the table: --constraints). */
function constraintDigest(forces: ConstraintForce[]): string {
  let best: { label: string; particle: number; size: number } | null = null;
  for (const f of forces)
    for (const q of f.forces) {
      const size = Math.hypot(...q.force);
      if (!best || size > best.size) best = { label: f.label, particle: q.particle, size };
    }
  const largest = best ? `, largest force ${num(best.size, 4)} N (${best.label}, on particle ${best.particle})` : '';
  return `constraint  forces at the initial state of ${countText(forces.length, 'constraint')}${largest}; --constraints lists each`;
}

export function formatSummary(meta: RunMeta, r: RunResult, opts: SummaryOptions = {}): string {
  const o = meta.options;
  const t = r.timing;
  const lines = [
    `scene       ${meta.file ? `${meta.scene} (file ${meta.file})` : `${meta.scene} (${Object.entries(meta.params).map(([k, v]) => `${k}=${String(v)}`).join(' ')})`}`,
    `solver      ${r.solver} on ${r.adapter}`,
    `bodies      ${formatNumber(r.bodyCount, 15)}   constraints ${formatNumber(r.constraintCount, 15)}`,
    `options     ${optionsText(o, r.solver, meta.iterationMode)}`,
  ];
  if (t.frames > 0) {
    // the mean first: total time ÷ frames, what the run cost (frames of a sleeping pile are cheap, and the median is one of them)
    lines.push(`step time   mean ${num(t.meanMs)} ms (total ÷ frames), median ${num(t.medianMs)} ms, p95 ${num(t.p95Ms)} ms (${clockName[t.clock]})`);
    if (t.clockNote) lines.push(`            (${t.clockNote})`);
    if (t.clock !== 'wall') lines.push(`wall time   mean ${num(t.wallMeanMs)} ms, median ${num(t.wallMedianMs)} ms, p95 ${num(t.wallP95Ms)} ms per step (submit to done, no readback)`);
    lines.push(`steps/s     ${num(t.stepsPerSecond)} (wall, frames ÷ total time)`);
    // a GPU solver's (its wall clock can run far above its stamps: docs/hardware.md); a CPU run's is in the JSON record
    if (r.host?.gpuWaitMs !== undefined) lines.push(`host        ${hostText(r.host)}`);
    if (r.stages?.length) lines.push(`stages      ${r.stages.map((st) => `${st.name} ${num(st.msPerFrame)}`).join(' · ')} ms per frame (mean, ${r.stagesClock ?? 'wall'})`);
    else if (r.stagesClock) lines.push(`stages      ${r.stagesClock}`);
  }
  const c = r.cost;
  // rows: the mean over the run (run/run.ts RunCost), the last frame's beside it where they differ (0 once all sleep)
  const measured = c.solves !== undefined;
  let cost = `cost        ${num(c.rowSolvesPerFrame)} row solves per frame (mean over the run${!measured && t.frames > 0 && c.rowSolvesLastFrame !== c.rowSolvesPerFrame ? `; last frame ${num(c.rowSolvesLastFrame)}` : ''})`;
  // a direct solver runs CG only on the steps it hands on: its count is said only when there were some
  if (c.cgIterationsPerFrame !== undefined && !(meta.iterationMode === 'direct' && c.cgIterationsPerFrame === 0))
    cost += ` · ${num(c.cgIterationsPerFrame)} CG iterations per frame${meta.iterationMode === 'direct' ? ' (steps handed on to CG/MINRES)' : ''}`;
  if (c.solves !== undefined)
    cost += c.unconvergedSolves ? ` · ${num(c.unconvergedSolves, 15)} of ${num(c.solves, 15)} solves unconverged` : ` · all ${num(c.solves, 15)} solves converged`;
  if (c.dispatchesPerFrame !== undefined) cost += ` · ${num(c.dispatchesPerFrame, 15)} dispatches per frame`;
  if (c.iterationBytesPerFrame !== undefined) {
    cost += ` · iteration kernels move ~${num(c.iterationBytesPerFrame / 1e6)} MB per frame`;
    if (t.frames > 0) cost += ` (≥ ${num(c.iterationBytesPerFrame / (t.meanMs * 1e6))} GB/s over the mean frame)`;
  }
  lines.push(cost);
  if (meta.memory)
    lines.push(`memory      peak ${formatBytes(meta.memory.peakResidentBytes)} resident (estimated ${formatBytes(meta.memory.estimatedBytes)} before the run) · JS heap limit ${formatBytes(meta.memory.heapLimitBytes)}`);
  if (r.residuals) {
    // a frame with no rows (no joints, nothing touching) records no channel: say so rather than print the legend alone
    if (Object.keys(r.residuals.channels).length === 0)
      lines.push(`residual    frame ${r.residuals.frame}: no rows to solve (no joints, and nothing touching at that frame)`);
    for (const [channel, values] of Object.entries(r.residuals.channels))
      lines.push(`residual    frame ${r.residuals.frame}, ${channel} rows, after k = 0..${values.length - 1} iterations: ${values.map((x) => num(x)).join(' ')}`);
    lines.push(`            (${r.residuals.quantity})`);
  }
  if (r.constraintForces?.length && !opts.constraints) lines.push(constraintDigest(r.constraintForces));
  for (const f of opts.constraints ? (r.constraintForces ?? []) : [])
    lines.push(
      `constraint  ${f.label}: λ = ${f.lambda.map((x) => num(x, 6)).join(', ')}; force ${f.forces.map((q) => `(${q.force.map((x) => num(x, 6)).join(', ')}) N on ${q.particle}`).join(', ')} (initial state)`,
    );
  for (const j of r.jumps ?? []) lines.push(jumpLine(j));
  if (r.diverged) {
    lines.push(`DIVERGED    at frame ${r.diverged.frame} (t = ${num(r.diverged.t)} s): ${r.diverged.reason}`);
    lines.push(`violation   worst max before divergence ${num(r.worstMaxViolation)} m`);
    if (r.contacts) lines.push(`contacts    worst max penetration before divergence ${num(r.contacts.worstMaxPenetration)} m`);
    lines.push(`energy      start ${num(r.initial.energy, 6)} J`);
  } else if (r.final) {
    const drift = energyDriftPercent(r);
    lines.push(`frames      ${num(r.frames, 15)} (t = ${num(r.final.t)} s)`);
    lines.push(`violation   final max ${num(r.final.maxViolation)} m (rms ${num(r.final.rmsViolation)} m), worst max ${num(r.worstMaxViolation)} m`);
    if (r.worstMaxAngularViolation || r.final.maxAngularViolation)
      lines.push(`angular     final max ${num(r.final.maxAngularViolation ?? 0)} rad, worst max ${num(r.worstMaxAngularViolation ?? 0)} rad (hinge and fixed joints)`);
    if (r.contacts) lines.push(contactsLine(r));
    if (r.solverContacts) lines.push(solverContactsLine(r));
    if (r.awake && (r.awake.sleeps || r.awake.meanAwake < r.awake.dynamicBodies)) lines.push(awakeLine(r));
    lines.push(`energy      start ${num(r.initial.energy, 6)} J, end ${num(r.final.energy, 6)} J${drift === null ? '' : ` (${drift >= 0 ? '+' : ''}${num(drift)} %)`}`);
    lines.push(`momentum    end (${r.final.momentum.map((x) => num(x)).join(', ')}) kg·m/s`);
    lines.push(`state hash  ${r.finalStateHash} (final positions, orientations and velocities, exact bits)`);
  }
  return lines.join('\n');
}

/**
 * Scenes with collisions on: the deepest penetration over the contact points (m) at the last frame and the
 * worst over the sampled frames, and the touching points (separation ≤ the pair's slop: 5 mm, less on bodies under 25 cm) at the last frame and
 * on average; all recomputed from the snapshots by collision detection (metrics/metrics.ts).
 */
function contactsLine(r: RunResult): string {
  const c = r.contacts!;
  const final = r.final!;
  const count = final.contacts ?? 0;
  return `contacts    max penetration final ${num(final.maxPenetration ?? NaN)} m, worst ${num(c.worstMaxPenetration)} m; ` +
    `${countText(count, 'touching point')} at the end (mean ${num(c.meanContacts)} over ${countText(c.samples, 'sampled frame')})`;
}

/**
 * Solvers that count their own contacts (the GPU contact solvers, read with each sampled snapshot): at the
 * last frame their pairs, manifolds and points, and where they colour, the colours' sizes and the overflow
 * set; over the samples the most colours and the largest overflow set (run/run.ts SolverContactSummary).
 */
function solverContactsLine(r: RunResult): string {
  const s = r.solverContacts!, f = s.final;
  let line = `solver's    ${countText(f.points, 'point')} in ${countText(f.manifolds, 'manifold')} of ${countText(f.pairs, 'pair')} at the end (its own count)`;
  if (f.colours)
    line += `; ${countText(f.colours.used, 'colour')} (${f.colours.sizes.join(' · ')} manifolds), overflow ${num(f.colours.overflow, 15)}; over ${countText(s.samples, 'sampled frame')} at most ${num(s.maxColours ?? 0, 15)} colours, overflow ${num(s.maxOverflow ?? 0, 15)}`;
  if (f.bodyColours) line += `; ${countText(f.bodyColours.used, 'body colour')} (${f.bodyColours.sizes.join(' · ')} bodies) in ${countText(f.bodyColours.rounds, 'round')}`;
  return line;
}

/**
 * Rigid runs whose solver sleeps (a sleep mask in its snapshots, or bodies counted asleep): the dynamic
 * bodies awake at the last frame, of all, their mean over the sampled frames, and the first sampled time
 * at which every one slept (metrics/metrics.ts awake; run/run.ts AwakeSummary).
 */
function awakeLine(r: RunResult): string {
  const a = r.awake!;
  const count = r.final!.awake ?? a.dynamicBodies;
  const all = a.allAsleep ? `all asleep from t = ${num(a.allAsleep.t)} s (frame ${num(a.allAsleep.frame, 15)})` : 'never all asleep';
  return `awake       ${formatNumber(count, 15)} of ${countText(a.dynamicBodies, 'dynamic body', 'dynamic bodies')} at the end ` +
    `(mean ${num(a.meanAwake)} over ${countText(a.samples, 'sampled frame')}); ${all}`;
}

/** A one-time jump (run/run.ts DivergenceWatch): beyond the divergence bound, then no longer growing. */
export function jumpLine(j: Jump): string {
  const what = j.quantity === 'energy' ? 'energy jumped: E − E₀' : 'violation jumped: max |C|';
  const unit = j.quantity === 'energy' ? 'J' : 'm';
  const when = j.firstFrame === j.frame ? `at frame ${j.frame}` : `at frame ${j.frame} (beyond the bound from frame ${j.firstFrame})`;
  return `warning     ${what} = ${formatCompared(j.size, j.bound)} ${unit} ${when}, t = ${num(j.t)} s, beyond the divergence bound ${formatCompared(j.bound, j.size)} ${unit}, then stopped growing: energy the solver put in once (an initial violation or overlap corrected faster than physics would), not divergence`;
}
