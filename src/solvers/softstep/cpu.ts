/**
 * softstep-cpu — Box2D v3's "soft step" solver (Catto, "Solver2D" and the Box2D v3 release notes:
 * substepping with soft constraints and relaxation), in 3-D, f64. Our code and words; the stage names
 * are Box2D's (solver.h b2SolverStageType). The solver is the sequential stage list
 * (solvers/sequential-cpu.ts) over the shared modules — the rigid-body core (rigid/body.ts), the joint
 * rows (rows/block-solver.ts), collision with its persistent manifolds (collision/pipeline.ts,
 * manifolds.ts) and the contact solver (contacts/contact-solver.ts) — with the relax pass and its
 * contact rule below. It is not a subclass of another solver.
 *
 * One frame of dt, n = --substeps (default 4) substeps of h = dt / n:
 *   collide               the contact points at the frame's start, each on its pair's manifold
 *                         (with sleeping: the islands' update, cpu-base.ts updateSleep)
 *   prepare joints        once per frame: J, C, the effective masses and the joint spring (--joint-hertz
 *                         60 Hz, at most half the substep rate, --joint-damping 2; rows/softness.ts S3)
 *   prepare contacts      once per frame: lever arms, A_nn, A_tt, base separation, the contact spring
 *                         (--contact-hertz 30 Hz, at most a quarter of the substep rate; twice that
 *                         against a fixed body; --contact-damping ζ = 10; push-out at most 3 m/s; no
 *                         slop), λ from the manifolds (contacts/contact-solver.ts prepare)
 *   n × ( integrate velocities   v ← v + h g (and the gyroscopic term)               (rigid/body.ts)
 *         restitution            collisions of points approaching faster than --restitution-threshold
 *                                whose gap closes within the substep, propagated pair by pair
 *                                (Guendelman et al. 2003; Box2D instead bounces after the last relax)
 *         warm start             apply h M⁻¹ Jᵀ λ of the accumulated λ (joints, then contacts)
 *         solve                  a sequential sweep with the soft bias (useBias): joints, then contacts,
 *                                each contact's separation moved by the bodies' motion (K1)
 *         integrate positions    x ← x + h v, q ← q ⊕ h ω
 *         relax                  a sequential sweep, rigid and without bias (but a speculative contact's
 *                                s/h), at the new pose: removes the velocity the soft bias added, so
 *                                push-out does not become bounce; restitution runs once more just before
 *                                it, else the relax would stop inelastically a point that closes within
 *                                the next substep) )
 *   store impulses        λ back onto the manifolds, for the next frame's warm start
 * --iterations is the number of solve sweeps per substep (Box2D: 1) and of relax sweeps; with more
 * than one, every other solve sweep walks backwards (symmetric Gauss-Seidel); relax always forwards
 * (measured on a 10-box stack, a backward relax made it sway).
 */
import { leastHalfSize, type WorldDesc } from '../../model/world.js';
import { forEachBody } from '../../model/packed.js';
import type { SolverOptions } from '../solver.js';
import type { ContactRule } from '../../rows/block-solver.js';
import { SequentialCpuSolver } from '../sequential-cpu.js';
import { softContactRule, softJointSpring } from '../si-soft/cpu.js';
import { softColumnDefaults } from '../pgs/substeps.js';

/**
 * The soft step's contact rule: si-soft-cpu's spring, with Box2D v3's two choices: no slop (the soft
 * spring leaves its own small, bounded overlap: under a load λ, s = −λ / (m_eff ω²), rows/softness.ts
 * S3 at rest) and, against a fixed body, twice the frequency (its "static softness").
 */

/**
 * Small bodies need more substeps: a stack of three 1 cm cubes, placed exactly, turned 0.029 rad and slid
 * 5.8 % of an edge at 4 substeps (one sweep each does not share a manifold's load evenly, and the
 * unevenness tips a body by an angle that goes as 1 / (size · substeps²): 2 cm turned 0.013 rad and slid
 * 2.8 %, 5 cm 0.005 and 1.1 %), and 0.0066 rad and 1.3 % at 8. The time a body of least half size L takes
 * to fall its own size goes as √(L / g), so the substep follows √L: on a scene with contacts the default
 * is ⌈4 √(SUBSTEP_SIZE / L)⌉ substeps, at least 4, L the smallest moving body's (1 cm cubes: 8, 2 cm: 6,
 * from 4 cm: 4). --substeps sets it. On an unbraced column, at least the column's substeps, and its
 * contact spring stiff enough that the column does not buckle on it (pgs/substeps.ts: fifteen 1 m boxes
 * 6 substeps and 59 Hz, leaning 6.7 mm against 124 mm at 4 and 30 Hz; ten 5 cm boxes 12 and 142 Hz, 0.10 mm,
 * where they fell).
 */
export const SUBSTEP_SIZE = 0.02;

export function softStepContactDefaults(world: WorldDesc, dt?: number): Partial<SolverOptions> {
  // an unbraced column: the Gauss-Seidel column's substeps at this frame step and a spring it does not buckle on (pgs/substeps.ts)
  const column = softColumnDefaults(world, dt);
  return { ...column, substeps: Math.max(sizeSubsteps(world, 4), column.substeps!) };
}

/**
 * ⌈k √(SUBSTEP_SIZE / L)⌉ substeps, at least 4, L the least half size of the world's smallest moving body
 * (4 with no moving body). softstep-cpu takes k = 4 (above); jacobi-cpu k = 8 (jacobiContactDefaults).
 */
export function sizeSubsteps(world: WorldDesc, k: number): number {
  let least = Infinity;
  forEachBody(world.bodies, (_, proto) => {
    if (!proto.fixed) least = Math.min(least, leastHalfSize(proto.shape));
  });
  return Number.isFinite(least) && least > 0 ? Math.max(4, Math.ceil(k * Math.sqrt(SUBSTEP_SIZE / least))) : 4;
}

export function softStepContactRule(options: SolverOptions, h: number): ContactRule {
  const rule = softContactRule(options, h);
  const spring = rule.softness as { kind: 'frequency'; hertz: number; dampingRatio: number };
  return { ...rule, slop: 0, staticSoftness: { ...spring, hertz: 2 * spring.hertz } };
}

export class SoftStepCpuSolver extends SequentialCpuSolver {
  readonly id: string = 'softstep-cpu';

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}) {
    super(world, options, { relax: true, contactRule: softStepContactRule, jointSpring: softJointSpring, sweepParity: 'substep' });
  }
}
