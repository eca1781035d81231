/**
 * gs-cpu — coloured block Gauss-Seidel for point constraints, the f64 reference
 * of gs-gpu. The Jacobi text ends by naming it as the next step: the same
 * velocity-level equations as jacobi-cpu (A_ℓℓ, b of (8), Baumgarte β, warm start,
 * stages 1–3 and 5 unchanged), but within an iteration each constraint sees the
 * impulses of the constraints solved before it.
 *
 * 4. N × for each colour c (constraints start[c] .. start[c+1]−1, see colouring.ts):
 *        for each ℓ in c:  Δλ_ℓ = h⁻¹ A_ℓℓ⁻¹ (J_ℓ V + β C_ℓ)          (37)
 *                          λ_ℓ += Δλ_ℓ;  ΔV_i −= h M_i⁻¹ J_ℓ,iᵀ Δλ_ℓ   (34), at once
 *
 * Invariant: constraints of one colour share no dynamic body, so solving them one
 * after the other (here) or all at once (gs-gpu, one dispatch per colour) gives the
 * same result; the colours are walked in the same order on both. Block Gauss-Seidel
 * on the SPD matrix A = J M⁻¹ Jᵀ converges for any order, about twice as fast as
 * Jacobi per iteration on a chain (Jacobi's spectral radius ρ, Gauss-Seidel's ≈ ρ²).
 */
import type { WorldDesc } from '../../model/world.js';
import { colourConstraints, colourOrderedWorld, type Colouring } from '../../model/colouring.js';
import type { SolverOptions } from '../solver.js';
import { JacobiCpuSolver, type JacobiVariant } from '../jacobi/cpu.js';

export class GaussSeidelCpuSolver extends JacobiCpuSolver {
  override readonly id: string = 'gs-cpu';
  colouring: Colouring;

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}, variant: Partial<JacobiVariant> = {}) {
    const ordered = colourOrderedWorld(world);
    super(ordered.world, options, variant);
    this.colouring = ordered.colouring;
  }

  /** Its contacts (a world with collisions made directly with this class) stay on the rows. */
  protected override contactsOnRows(): boolean {
    return true;
  }

  /** The joints changed: colour them again and lay the rows out colour by colour. */
  protected override relayout(): void {
    this.colouring = recolourJointRows(this);
  }

  /** 4. One Gauss-Seidel sweep, colour by colour (colour c: the blocks of order[start[c] .. start[c+1])). */
  protected override iterate(h: number): void {
    const { start, colourCount } = this.colouring;
    const blockOf = this.rowSolver.orderBlock;
    for (let c = 0; c < colourCount; c++) this.updateMultipliers(h, true, blockOf[start[c]], blockOf[start[c + 1]], true);
    // then the contacts, one after the other (the CPU needs no colours for them), in alternating
    // directions (symmetric Gauss-Seidel: no preferred sense of rotation, block-solver.ts solveBlocks)
    const rs = this.rowSolver;
    if (rs.contacts) this.updateMultipliers(h, true, rs.jointBlocks, rs.rows.blockCount, true, null, (this.sweeps++ & 1) === 1);
  }
}

/**
 * The joints changed (gs-cpu, on joint or contact scenes): mark the jointed bodies, colour the joints
 * again and lay their rows out colour by colour (as gs-gpu); returns the new colouring.
 */
export function recolourJointRows(solver: {
  readonly joints: { ib0: Int32Array; ib1: Int32Array; constraintCount: number };
  readonly w: { bodyCount: number; inverseMass: Float64Array };
  readonly rigid: { markJointed(ib0: Int32Array, ib1: Int32Array, count: number): void };
  readonly rowSolver: { layout(order?: Int32Array): void };
}): Colouring {
  const j = solver.joints;
  solver.rigid.markJointed(j.ib0, j.ib1, j.constraintCount);
  const colouring = colourConstraints({ constraintCount: j.constraintCount, bodyCount: solver.w.bodyCount, ib0: j.ib0, ib1: j.ib1, inverseMass: solver.w.inverseMass });
  solver.rowSolver.layout(colouring.order);
  return colouring;
}
