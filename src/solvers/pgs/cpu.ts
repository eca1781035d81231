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
 *
 * It shares the row machinery with jacobi-cpu and gs-cpu (rows/block-solver.ts); what makes it the
 * text's PGS is the order: every row in turn, each seeing the impulses of those before it, with no
 * colouring (it is the CPU sequential solve, not a GPU design).
 */
import type { WorldDesc } from '../../model/world.js';
import type { SolverOptions } from '../solver.js';
import { JacobiCpuSolver } from '../jacobi/cpu.js';

export class PgsCpuSolver extends JacobiCpuSolver {
  override readonly id: string = 'pgs-cpu';

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}) {
    super(world, options);
  }

  /**
   * Projected Gauss-Seidel: one sweep over every row block in turn, each applied at once; the sweeps
   * alternate direction (first to last, then last to first: symmetric Gauss-Seidel, block-solver.ts
   * solveBlocks), which converges to the same λ and has no preferred sense of rotation.
   */
  protected override iterate(h: number): void {
    this.updateMultipliers(h, true, 0, this.rowSolver.rows.blockCount, true, null, (this.sweeps++ & 1) === 1);
  }
}
