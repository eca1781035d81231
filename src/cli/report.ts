/** The run summary as text (CLI) and as JSON (--json): one definition of each figure. */
import { isParticleSolver } from '../particles/registry.js';
import type { RunResult } from '../run/run.js';
import { energyDriftPercent, type RunMeta } from '../bench/results.js';

import { formatNumber, optionsText } from '../bench/table.js';

/** A number for people: NaN and infinities are never printed as numbers. */
const num = (x: number, digits = 3) => formatNumber(x, digits);

const clockName = { 'gpu-timestamp': 'GPU timestamps', wall: 'wall clock' } as const;

export function formatSummary(meta: RunMeta, r: RunResult): string {
  const o = meta.options;
  const t = r.timing;
  const lines = [
    `scene       ${meta.file ? `${meta.scene} (file ${meta.file})` : `${meta.scene} (${Object.entries(meta.params).map(([k, v]) => `${k}=${String(v)}`).join(' ')})`}`,
    `solver      ${r.solver} on ${r.adapter}`,
    `bodies      ${r.bodyCount}   constraints ${r.constraintCount}`,
    `options     ${optionsText(o, isParticleSolver(r.solver) ? 'particles' : 'rigid', meta.iterationMode)}`,
  ];
  if (t.frames > 0) {
    lines.push(`step time   median ${num(t.medianMs)} ms, p95 ${num(t.p95Ms)} ms (${clockName[t.clock]})`);
    if (t.clock !== 'wall') lines.push(`wall time   median ${num(t.wallMedianMs)} ms, p95 ${num(t.wallP95Ms)} ms per step (submit to done, no readback)`);
    lines.push(`steps/s     ${num(t.stepsPerSecond)} (wall)`);
  }
  const c = r.cost;
  let cost = `cost        ${num(c.rowSolvesPerFrame)} row solves per frame`;
  // a direct solver runs CG only on the steps it hands on: its count is said only when there were some
  if (c.cgIterationsPerFrame !== undefined && !(meta.iterationMode === 'direct' && c.cgIterationsPerFrame === 0))
    cost += ` · ${num(c.cgIterationsPerFrame)} CG iterations per frame${meta.iterationMode === 'direct' ? ' (steps handed on to CG/MINRES)' : ''}`;
  if (c.solves !== undefined)
    cost += c.unconvergedSolves ? ` · ${c.unconvergedSolves} of ${c.solves} solves unconverged` : ` · all ${c.solves} solves converged`;
  if (c.dispatchesPerFrame !== undefined) cost += ` · ${c.dispatchesPerFrame} dispatches per frame`;
  if (c.iterationBytesPerFrame !== undefined) {
    cost += ` · iteration kernels move ~${num(c.iterationBytesPerFrame / 1e6)} MB per frame`;
    if (t.frames > 0) cost += ` (≥ ${num(c.iterationBytesPerFrame / (t.medianMs * 1e6))} GB/s)`;
  }
  lines.push(cost);
  if (r.residuals) {
    for (const [channel, values] of Object.entries(r.residuals.channels))
      lines.push(`residual    frame ${r.residuals.frame}, ${channel} rows, after k = 0..${values.length - 1} iterations: ${values.map((x) => num(x)).join(' ')}`);
    lines.push(`            (${r.residuals.quantity})`);
  }
  for (const f of r.constraintForces ?? [])
    lines.push(
      `constraint  ${f.label}: λ = ${f.lambda.map((x) => num(x, 6)).join(', ')}; force ${f.forces.map((q) => `(${q.force.map((x) => num(x, 6)).join(', ')}) N on ${q.particle}`).join(', ')} (initial state)`,
    );
  if (r.diverged) {
    lines.push(`DIVERGED    at frame ${r.diverged.frame} (t = ${num(r.diverged.t)} s): ${r.diverged.reason}`);
    lines.push(`violation   worst max before divergence ${num(r.worstMaxViolation)} m`);
    lines.push(`energy      start ${num(r.initial.energy, 6)} J`);
  } else if (r.final) {
    const drift = energyDriftPercent(r);
    lines.push(`frames      ${r.frames} (t = ${num(r.final.t)} s)`);
    lines.push(`violation   final max ${num(r.final.maxViolation)} m (rms ${num(r.final.rmsViolation)} m), worst max ${num(r.worstMaxViolation)} m`);
    lines.push(`energy      start ${num(r.initial.energy, 6)} J, end ${num(r.final.energy, 6)} J${drift === null ? '' : ` (${drift >= 0 ? '+' : ''}${num(drift)} %)`}`);
    lines.push(`momentum    end (${r.final.momentum.map((x) => num(x)).join(', ')}) kg·m/s`);
    lines.push(`state hash  ${r.finalStateHash} (final positions, orientations and velocities, exact bits)`);
  }
  return lines.join('\n');
}

