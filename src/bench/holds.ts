/**
 * Whether a run of a compare held its scene: one verdict per run, from figures the record already has
 * (metrics recomputed from the snapshots, never the solver's word), against tolerances the compare names.
 *
 *   joints       a scene with constraints holds while the worst max violation max|C| over the sampled
 *                frames stays ≤ `violation` (default 1 cm: the AVBD issue's bound for the 50,000 : 1
 *                mass-ratio pendulum over 10 s); above it the run "stretches" (the chain lets go of the
 *                ball without the divergence watch firing: Rapier's impulse joints end 9 m long there)
 *   at rest      a scene built to stand still (SceneInfo.restsAfter: a stack, a pyramid, a house of cards)
 *                holds while its drift — the farthest any body gets, at a sampled frame, from where it
 *                was at the first sample at or after restsAfter — stays ≤ `drift` (default 1 cm: the
 *                piles tests' creep bound for a 10-box stack awake, test/contacts.test.ts); above it the
 *                run "drifts" (it creeps, sinks or topples)
 *   diverged     the divergence watch stopped it: "diverges", whatever the figures before
 *
 * A scene with neither test (a rain, a domino run: motion is the point) gets no verdict (null).
 * Invariant: DriftTracker reads positions only (f64 snapshots, anchor bodies left out; a fixed body
 * never moves, so the maximum over all bodies is the maximum over the dynamic ones).
 */
import type { Snapshot } from '../model/snapshot.js';

export interface HoldTolerances {
  /** worst max |C| a run of a scene with joints may reach and still hold, m */
  violation: number;
  /** drift a run of a scene built to stand still may reach and still hold, m */
  drift: number;
}

/** 1 cm and 1 cm (see the header). */
export const DEFAULT_HOLD_TOLERANCES: HoldTolerances = { violation: 0.01, drift: 0.01 };

export type HoldVerdictKind = 'holds' | 'stretches' | 'drifts' | 'diverges';

export interface HoldVerdict {
  verdict: HoldVerdictKind;
  /** the figure that decided it, in words: 'max|C| 1.29 mm ≤ 1 cm', 'drift 4.1 cm > 1 cm', 'at frame 343' */
  why: string;
}

/** The figures a verdict reads (a RunRecord has them all). */
export interface HoldFigures {
  constraints: number;
  violation: { worstMax: number | null };
  diverged: { frame: number } | null;
  /** scenes built to stand still: the drift after `from` s (null: the run ended before it) */
  rest?: { from: number | null; drift: number | null };
}

/** A length for a verdict: µm below 1 mm, mm below 1 cm, cm below 1 m, else m (3 significant figures; e-notation below 0.1 µm). */
export function lengthText(m: number): string {
  const a = Math.abs(m);
  if (a === 0) return '0';
  if (a < 1e-7) return `${(m * 1e6).toExponential(1)} µm`;
  if (a < 1e-3) return `${+(m * 1e6).toPrecision(3)} µm`;
  if (a < 0.01) return `${+(m * 1e3).toPrecision(3)} mm`;
  if (a < 1) return `${+(m * 1e2).toPrecision(3)} cm`;
  return `${+m.toPrecision(3)} m`;
}

export function holdVerdict(r: HoldFigures, tol: HoldTolerances = DEFAULT_HOLD_TOLERANCES): HoldVerdict | null {
  const joints = r.constraints > 0;
  if (!joints && !r.rest) return null;
  if (r.diverged) return { verdict: 'diverges', why: `at frame ${r.diverged.frame}` };
  if (joints) {
    const c = r.violation.worstMax;
    // a violation the metrics could not give (not finite) does not hold
    if (c === null || !(c <= tol.violation)) return { verdict: 'stretches', why: `max|C| ${c === null ? 'not finite' : lengthText(c)} > ${lengthText(tol.violation)}` };
    if (!r.rest) return { verdict: 'holds', why: `max|C| ${lengthText(c)} ≤ ${lengthText(tol.violation)}` };
  }
  const d = r.rest!.drift;
  // a run shorter than the settling has no drift to judge: no verdict on rest
  if (d === null) return joints ? { verdict: 'holds', why: `max|C| ≤ ${lengthText(tol.violation)}; ended before ${r.rest!.from ?? '?'} s` } : null;
  if (!(d <= tol.drift)) return { verdict: 'drifts', why: `drift ${lengthText(d)} > ${lengthText(tol.drift)}` };
  return { verdict: 'holds', why: `drift ${lengthText(d)} ≤ ${lengthText(tol.drift)}` };
}

/**
 * The drift of a scene built to stand still, fed every observed snapshot in order: the first snapshot
 * at or after `after` s is the reference; from it on, drift = max over snapshots and bodies of
 * |x_i − x_i(reference)|.
 */
export class DriftTracker {
  private reference: Float64Array | null = null;
  private from: number | null = null;
  private worst = 0;
  constructor(private readonly after: number) {}

  observe(snap: Snapshot): void {
    // half a microsecond of slack: frame k's time is k·dt in floating point
    if (!this.reference) {
      if (snap.time < this.after - 5e-7) return;
      this.reference = Float64Array.from(snap.position.subarray(0, 3 * snap.bodyCount));
      this.from = snap.time;
      return;
    }
    const ref = this.reference;
    const p = snap.position;
    let worst2 = this.worst * this.worst;
    for (let i = 0; i < ref.length; i += 3) {
      const dx = p[i] - ref[i], dy = p[i + 1] - ref[i + 1], dz = p[i + 2] - ref[i + 2];
      const d2 = dx * dx + dy * dy + dz * dz;
      // a position that is not finite is the farthest drift there is
      if (!(d2 <= worst2)) worst2 = Number.isFinite(d2) ? d2 : Infinity;
    }
    this.worst = Math.sqrt(worst2);
  }

  /** the reference time and the drift since (null before the reference was taken; Infinity where a position was not finite) */
  result(): { from: number | null; drift: number | null } {
    return { from: this.from, drift: this.reference ? this.worst : null };
  }
}
