/**
 * global-cpu — the converged reference for the velocity-level point-constraint
 * solvers: the equations of the Jacobi text (shared/seeds/gpu-jacobi-point-constraints.txt)
 * with its iterative stage 4 replaced by a solve of the whole system to a tight
 * tolerance, so its λ is (to that tolerance) the exact solution of (21)/(35) that
 * jacobi-* and gs-* approach iteration by iteration.
 *
 * One solver step of h = dt / substeps (stages 1–3 and 5 are jacobi-cpu's own methods):
 *   1. compute_inertia          I⁻¹ = R I_local⁻¹ Rᵀ                               (per body)
 *   2. compute_free_velocity    V* = d V + h M⁻¹ F, clear ΔV                       (per body)
 *   3. compute_violation_and_jacobian_and_delassus
 *                               C_ℓ, J_ℓ, A_ℓℓ⁻¹ (+ α̃ I₃ on soft rows)             (per constraint)
 *      warm start               λ⁰ = f · λ(previous step): the CG's starting guess
 *   4. global solve             b_ℓ = h⁻¹ (J_ℓ V* + β C_ℓ)   (8)   (soft: h⁻¹ (J_ℓ V* + C_ℓ/h))
 *                               A λ = b, A = J M⁻¹ Jᵀ (+ α̃ I)  (35, 36), by conjugate gradient
 *                               preconditioned with D⁻¹ = blockdiag(A_ℓℓ⁻¹), matrix-free
 *                               (global/delassus.ts), to ‖b − Aλ‖₂ ≤ tolerance · ‖b‖₂;
 *                               where CG stalls or reaches the cap, preconditioned MINRES
 *                               (Paige & Saunders 1975; math/minres.ts) from λ = 0, which
 *                               also stops at a least-squares solution when b ∉ range(A)
 *      apply the impulses       ΔV = −h M⁻¹ Jᵀ λ   (5), (34): update_velocities once
 *   5. compute_positions        V = V* + ΔV; x += h v; q += ½ h (0, ω) ⊗ q; normalise
 *
 * Units: λ is a force (N): V = V* − h M⁻¹ Jᵀ λ, so hλ is the impulse; −λ acts on body
 * i_ℓ (at its anchor) and +λ on body j_ℓ.
 *
 * Redundant joints (a loop of joints that can carry a self-stress, as in a planar net) make A
 * singular, A = J M⁻¹ Jᵀ with null(A) = null(Jᵀ); once the joints drift, b has a part outside
 * range(A) and A λ = b has no solution. Every least-squares λ then gives the same motion (the
 * derivation is at DelassusOperator.solveLeastSquares: λ is determined up to null(Jᵀ), which moves
 * nothing), and MINRES finds one; such a step counts as converged, and as a least-squares step.
 * Not the same thing as a nearly singular A: the built-in joint-grid (a nearly flat net, nearly taut)
 * has, after its first step, no null space but hundreds of eigenvalues 1e-12 to 1e-4 of the largest,
 * and b in range(A); there neither CG nor MINRES reaches the tolerance within the cap, and such steps
 * are counted unconverged (a direct factorisation would solve them: a dense LU leaves 1e-11 ‖b‖).
 *
 * The `iterations` option does not apply: CG (and MINRES) iterate until the tolerance, at most
 * `maxIterations` per step in all. The iterations each step took are counted (cgStats,
 * cgIterationsPerStep, and cost(): cgIterationsPerFrame, and row solves 3 N_c per iteration —
 * one CG or MINRES iteration applies A once, a sweep over every row, as one Jacobi iteration does);
 * a step that stops at the cap without reaching either test is counted as unconverged
 * (cgStats().unconvergedSteps, cost().unconvergedSolves) and its best λ is applied.
 */
import type { WorldDesc } from '../../model/world.js';
import type { ResidualCurve, Solver, SolverCost, SolverOptions } from '../solver.js';
import { JacobiCpuSolver, RESIDUAL_QUANTITY } from '../jacobi/cpu.js';
import { DelassusOperator, relativeError, type GlobalSolveResult } from './delassus.js';
import { defaultLsTolerance } from '../../math/minres.js';
import { LAMBDA_ERROR_CHANNEL, REFERENCE_TOLERANCE } from './lambda-error.js';

export interface GlobalSolveOptions {
  /** relative tolerance on ‖b − Aλ‖₂ / ‖b‖₂ (default 1e-10) */
  tolerance: number;
  /** least-squares tolerance on ‖Â r̂‖ / (‖Â‖ ‖r̂‖), for systems with no solution (default 1e-8, math/minres.ts) */
  lsTolerance: number;
  /** CG and MINRES iterations per step at most, together (default: min(2 · 3N_c + 100, 10 000)) */
  maxIterations: number;
}

export const defaultGlobalTolerance = 1e-10;

export interface CgStats {
  /** solver steps solved since creation or resetTimings */
  steps: number;
  /** CG and MINRES iterations, summed over those steps */
  iterations: number;
  /** the most iterations one step took */
  maxIterationsPerStep: number;
  /** steps that hit maxIterations before the tolerance or the least-squares test */
  unconvergedSteps: number;
  /** the largest ‖b − Aλ‖₂ / ‖b‖₂ left at the end of a step (a least-squares step leaves the least there is) */
  worstRelativeResidual: number;
  /** steps where CG handed over to MINRES, and the MINRES iterations among `iterations` */
  minresSteps: number;
  minresIterations: number;
  /** steps whose A λ = b had no solution and that ended at a least-squares λ */
  leastSquaresSteps: number;
}

export class GlobalCpuSolver extends JacobiCpuSolver implements Solver {
  override readonly id: string = 'global-cpu';
  readonly solve: GlobalSolveOptions;
  private readonly op: DelassusOperator;
  /** b of (8), per step */
  private readonly rhs: Float64Array;
  private stats: CgStats = emptyStats();
  /** CG iterations of each solver step since creation or resetTimings, in order */
  private perStep: number[] = [];

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}, solve: Partial<GlobalSolveOptions> = {}) {
    super(world, options);
    const rows = 3 * this.w.constraintCount;
    this.solve = { tolerance: defaultGlobalTolerance, lsTolerance: defaultLsTolerance, maxIterations: Math.min(2 * rows + 100, 10_000), ...solve };
    if (!(this.solve.tolerance > 0)) throw new Error(`global-cpu: tolerance must be > 0, got ${this.solve.tolerance}`);
    if (!(this.solve.lsTolerance > 0)) throw new Error(`global-cpu: lsTolerance must be > 0, got ${this.solve.lsTolerance}`);
    if (!(this.solve.maxIterations >= 1)) throw new Error(`global-cpu: maxIterations must be ≥ 1, got ${this.solve.maxIterations}`);
    this.op = new DelassusOperator(this);
    this.rhs = new Float64Array(rows);
  }

  override stepFrame(): void {
    this.stepGlobal(null);
  }

  /**
   * One frame; with `record`, the first substep's true residual ‖b − Aλᵏ‖₂ after each CG
   * iteration k = 0.. (k = 0: the warm-start guess) and ‖λᵏ − λ*‖₂/‖λ*‖₂ against a
   * separate solve to REFERENCE_TOLERANCE. Recording evaluates, never changes, the iterates.
   */
  private stepGlobal(record: { point: number[]; error: number[] } | null): void {
    const { dt, substeps, beta, warmStart } = this.options;
    const h = dt / substeps;
    const baumgarte = beta / h; // β in 1/s
    for (let s = 0; s < substeps; s++) {
      this.computeInertia(); // 1
      this.computeFreeVelocity(h); // 2
      this.computeViolationAndJacobianAndDelassus(); // 3
      this.warmStart(warmStart); // λ⁰
      this.op.rhs(h, baumgarte, this.rhs); // b   (8)
      const lambda = this.multiplier;
      let onIteration: ((k: number, x: Float64Array) => void) | undefined;
      if (record && s === 0) {
        const reference = lambda.slice();
        const ref = this.op.solve(this.rhs, reference, { tolerance: REFERENCE_TOLERANCE });
        const haveReference = ref.converged && reference.some((x) => x !== 0);
        onIteration = (_k, x) => {
          record.point.push(this.op.residualNorm(this.rhs, x));
          if (haveReference) record.error.push(relativeError(x, reference));
        };
      }
      // 4. A λ = b by preconditioned CG from λ⁰ (35, 36); least squares by MINRES where it has no solution
      const result = this.op.solveLeastSquares(this.rhs, lambda, { ...this.solve, onIteration });
      this.count(result);
      // ΔV = −h M⁻¹ Jᵀ λ   (5), (34)
      this.updateVelocities(h);
      this.computePositions(h); // 5
    }
    this.frame++;
  }

  private count(r: GlobalSolveResult): void {
    const st = this.stats;
    st.steps++;
    st.iterations += r.iterations;
    st.maxIterationsPerStep = Math.max(st.maxIterationsPerStep, r.iterations);
    if (!r.converged) st.unconvergedSteps++;
    st.worstRelativeResidual = Math.max(st.worstRelativeResidual, r.rhsNorm > 0 ? r.residualNorm / r.rhsNorm : 0);
    if (r.minresIterations > 0) st.minresSteps++;
    st.minresIterations += r.minresIterations;
    if (r.leastSquares) st.leastSquaresSteps++;
    this.perStep.push(r.iterations);
  }

  override async stepRecordingResiduals(): Promise<ResidualCurve> {
    const record = { point: [] as number[], error: [] as number[] };
    this.stepGlobal(record);
    const channels: Record<string, number[]> = { point: record.point };
    if (record.error.length) channels[LAMBDA_ERROR_CHANNEL] = record.error;
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  /** CG iterations and convergence since creation or the last resetTimings. */
  cgStats(): CgStats {
    return { ...this.stats };
  }

  /** CG iterations of each solver step since creation or the last resetTimings. */
  cgIterationsPerStep(): number[] {
    return this.perStep.slice();
  }

  override resetTimings(): void {
    super.resetTimings();
    this.stats = emptyStats();
    this.perStep = [];
  }

  /**
   * Measured since creation or resetTimings: CG (and MINRES) iterations per frame (mean per step ×
   * substeps), row solves = 3 N_c per iteration (one application of A, a sweep over every row), and
   * the solves (one per step) and how many of them ended unconverged.
   */
  override cost(): SolverCost {
    const { steps, iterations, unconvergedSteps } = this.stats;
    const perFrame = steps > 0 ? (iterations / steps) * this.options.substeps : 0;
    return { rowSolvesPerFrame: 3 * this.constraintCount * perFrame, cgIterationsPerFrame: perFrame, solves: steps, unconvergedSolves: unconvergedSteps };
  }
}

function emptyStats(): CgStats {
  return { steps: 0, iterations: 0, maxIterationsPerStep: 0, unconvergedSteps: 0, worstRelativeResidual: 0, minresSteps: 0, minresIterations: 0, leastSquaresSteps: 0 };
}
