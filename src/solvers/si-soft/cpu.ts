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
/**
 * Small bodies: the soft contact spring (si-soft-cpu's, and so softstep-cpu's) is stiffened (ContactRule.sizeSpring) so that a body's own
 * weight sinks it by at most this fraction of its least half size, up to Box2D's cap of a quarter of the
 * substep rate. The sag of a spring is g/ω² per weight carried, whatever the body's size, so at 30 Hz a
 * 1 cm cube under two others sat 11.2 % of its edge low; with this 3.7 %, a 2 cm one 1.8 % (5.5 % before) under softstep-cpu.
 * Above ~10 cm ω_L is below 30 Hz and nothing changes. (Half the substep rate as the cap was unstable:
 * the 1 cm stack turned 0.46 rad.)
 */
export const SIZE_SAG = 0.005;

export function softContactRule(options: SolverOptions, h: number): ContactRule {
  return {
    softness: { kind: 'frequency', hertz: Math.min(options.contactHertz, 0.25 / h), dampingRatio: options.contactDampingRatio },
    slop: CONTACT_SLOP,
    maxPushout: MAX_PUSHOUT,
    restitutionThreshold: options.restitutionThreshold,
    // small bodies: the spring stiffened so a body's own weight sinks it at most SIZE_SAG of its least half
    // size (softstep/cpu.ts; at 1.2 cm a base-8 pyramid sank 4.9 mm under this rule's plain spring and fell)
    sizeSpring: { sagFraction: SIZE_SAG, gravity: 9.81, capHertz: 0.25 / h },
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
