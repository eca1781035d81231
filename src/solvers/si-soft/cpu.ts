/**
 * si-soft-cpu — the Starframe text's "Sequential impulses" with "Soft constraints" (Catto, Soft
 * Constraints, GDC 2011), joints and contacts in one solve, f64.
 *
 * The loop is pgs-cpu's (solvers/sequential-cpu.ts without relax: collision once per frame, V_{1+f},
 * impulse caching, one row after the other applied at once, restitution, semi-implicit Euler); what
 * changes is each row's equation:
 *   J v + (β / h) C + (γ / h) λ = 0,   Δλ = −(J v + (β/h) C + (γ/h) λ) / (J M⁻¹ Jᵀ + γ)
 * (the text's soft row, in its units), β and γ from a spring of frequency f and damping ratio ζ
 * on the row's own effective mass (rows/softness.ts S3: k = m_eff ω², c = 2 m_eff ζ ω):
 *   contacts   f = --contact-hertz (default 30 Hz, at most a quarter of the step rate 1/h so the spring
 *              stays resolved: 30 Hz at its default 4 substeps (the cap is then 60 Hz), 15 Hz at one step of 1/60 s),
 *              ζ = --contact-damping (10), on the overlap beyond the slop (5 mm, less for small bodies:
 *              collision/pipeline.ts pairSlop), push-out at most 3 m/s; within the slop the row is
 *              rigid (a soft row there would be a damper alone, letting a body sink through it), and a
 *              speculative contact (apart) stays rigid;
 *   joints     f = --joint-hertz (60 Hz, at most half the step rate), ζ = --joint-damping (2); a joint
 *              that sets its own compliance keeps it.
 * The defaults are Box2D v3's (its b2DefaultWorldDef), which this family shares; si-soft-cpu is
 * the soft step without substeps and without the relax pass (softstep-cpu adds both).
 */
import type { WorldDesc } from '../../model/world.js';
import type { SolverOptions } from '../solver.js';
import { SequentialCpuSolver } from '../sequential-cpu.js';
import { CONTACT_SLOP, MAX_PUSHOUT, type ContactRule } from '../../rows/block-solver.js';
import type { SoftnessSpec } from '../../rows/softness.js';

/** The soft contact rule for a (sub)step h: the spring capped at a quarter of the rate 1/h. */
export function softContactRule(options: SolverOptions, h: number): ContactRule {
  return {
    softness: { kind: 'frequency', hertz: Math.min(options.contactHertz, 0.25 / h), dampingRatio: options.contactDampingRatio },
    slop: CONTACT_SLOP,
    maxPushout: MAX_PUSHOUT,
    restitutionThreshold: options.restitutionThreshold,
  };
}

/** The soft joint spring for a (sub)step h: capped at half the rate 1/h. */
export function softJointSpring(options: SolverOptions, h: number): SoftnessSpec {
  return { kind: 'frequency', hertz: Math.min(options.jointHertz, 0.5 / h), dampingRatio: options.jointDampingRatio };
}

export class SiSoftCpuSolver extends SequentialCpuSolver {
  readonly id: string = 'si-soft-cpu';

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}) {
    super(world, options, { relax: false, contactRule: softContactRule, jointSpring: softJointSpring, sweepParity: 'run' });
  }
}
