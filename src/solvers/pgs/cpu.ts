/**
 * pgs-cpu — the Starframe text's "Impulses with Projected Gauss-Seidel" (shared/seeds/
 * starframe-solving-constraints.md; after Catto 2005), joints and contacts in one solve, f64.
 *
 * One step of h = dt / substeps (default one step per frame), in the text's terms:
 *   collision detection   once per frame (collision/pipeline.ts): contact points → rows (rows/contact.ts)
 *   V_{1+f}               V₁ + h M⁻¹ F, the velocity the forces alone give (computeFreeVelocity)
 *   constructing the problem
 *                         J, C and the bounds of every row; A_ii = J_i M⁻¹ J_iᵀ; the bias
 *                         ζ = −β C / h with slop ("Resolving overlaps": rows/block-solver.ts ContactRule;
 *                         a joint's rows −β C / h), so  A λ = h⁻¹ (ζ − J V_{1+f})
 *   impulse caching       λ⁰ = λ of the previous step, row by row by key (warm start)
 *   projected Gauss-Seidel  N × for each row i in turn:
 *                           Δλ_i = (b_i − A_i λ) / A_ii,  λ_i ← clamp(λ_i + Δλ_i, λ⁻_i, λ⁺_i)
 *                         (every other sweep from the last row back to the first: symmetric GS)
 *                         applied at once to V (sequential), so A is never formed; a joint's equality
 *                         rows are solved together as one block, a friction pair as one 2×2 block
 *                         clamped to the disc |λ_t| ≤ μ λ_n (the text's −μλ_n ≤ λ ≤ μλ_n, isotropic)
 *   restitution           the bias −e J V₁ ("Other uses for bias"), as a velocity pass after the solve
 *   finishing steps       V₂ = V_{1+f} + h M⁻¹ Jᵀ λ;  x₂ = x₁ + h V₂ (semi-implicit Euler)
 *   split impulse         the joints' −β C / h is not in that solve: a position pass of its own on
 *                         pseudo-velocities P (from 0, never stored), x₂ = x₁ + h (V₂ + P)
 *                         (rows/block-solver.ts header: the warm start carried the bias's push into the next
 *                         step, which diverged joint chains; test/joint-split.test.ts)
 *
 * Its joints are rows (rows/block-solver.ts), its contacts the contact solver's records
 * (contacts/contact-solver.ts: a point's normal row, then its friction pair); what makes it the text's
 * PGS is the order: every row in turn, each seeing the impulses of those before it, with no colouring
 * (it is the CPU sequential solve, not a GPU design).
 */
import type { WorldDesc } from '../../model/world.js';
import type { SolverOptions } from '../solver.js';
import { baumgarteContacts } from '../../rows/block-solver.js';
import { SequentialCpuSolver } from '../sequential-cpu.js';

export class PgsCpuSolver extends SequentialCpuSolver {
  readonly id: string = 'pgs-cpu';

  /**
   * Projected Gauss-Seidel (header) as the sequential stage list (solvers/sequential-cpu.ts): rigid rows
   * with Baumgarte β and the 5 mm slop (rows/block-solver.ts baumgarteContacts), the joints' β by split
   * impulses, no relax; the sweeps
   * alternate direction over the run (symmetric Gauss-Seidel), which converges to the same λ and has no
   * preferred sense of rotation.
   */
  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}) {
    super(world, options, { relax: false, contactRule: (o) => baumgarteContacts(o.beta, o.restitutionThreshold), jointSpring: null, sweepParity: 'run', splitImpulse: true });
  }
}
