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
 *      warm start               λ⁰ = f · λ(previous step): CG's starting guess (method 'cg', and the fallback below)
 *   4. global solve             b_ℓ = h⁻¹ (J_ℓ V* + β C_ℓ)   (8)   (soft: h⁻¹ (J_ℓ V* + C_ℓ/h))
 *                               A λ = b, A = J M⁻¹ Jᵀ (+ α̃ I)  (35, 36), by default (method 'direct') by a
 *                               sparse LDLᵀ of A (global/delassus.ts solveDirect, math/envelope-ldlt.ts):
 *                               A assembled in 3×3 blocks, factored in f64 in a reverse Cuthill–McKee order
 *                               (computed once per topology) within its envelope, pivots ≤ 1e-15 a_ii dropped as
 *                               null directions, then iterative refinement with the matrix-free A while
 *                               ‖b − Aλ‖₂ > tolerance · ‖b‖₂ (at most 3 steps);
 *                               where that misses the tolerance (b ∉ range(A)), and with method 'cg': conjugate
 *                               gradient from λ⁰ preconditioned with D⁻¹ = blockdiag(A_ℓℓ⁻¹), matrix-free, to
 *                               ‖b − Aλ‖₂ ≤ tolerance · ‖b‖₂; where CG stalls or reaches the cap, preconditioned
 *                               MINRES (Paige & Saunders 1975; math/minres.ts) from λ = 0, which also stops at a
 *                               least-squares solution when b ∉ range(A)
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
 * and b in range(A); there neither CG nor MINRES reaches the tolerance within the cap (about 30 of 120
 * steps of the 20 × 20 grid stay unconverged with method 'cg'), while the direct solve does: Cholesky is
 * backward stable whatever the condition ([Hig] thm 10.3), so its residual is of the order u ‖A‖ ‖λ‖, not
 * u κ ‖b‖ (worst 6e-11 ‖b‖ over those 120 steps, none unconverged). Its first step, the flat net, is exactly
 * singular and consistent: ~325 pivots are dropped and the solution is exact.
 *
 * The `iterations` option does not apply: the direct solve has no iterations, and CG (and MINRES)
 * iterate until the tolerance, at most `maxIterations` per step in all. What each step did is counted
 * (cgStats: direct steps, refinement steps, null pivots, steps handed on to CG/MINRES, and their iterations;
 * cgIterationsPerStep), and cost() reports it: cgIterationsPerFrame counts CG and MINRES iterations only (0
 * where the direct solve sufficed), and row solves are 3 N_c per solve with the factor (a forward and a back
 * substitution resolve every row once, as one sweep does) and per CG or MINRES iteration (one application
 * of A). A step that ends above the tolerance without a least-squares λ is counted as unconverged
 * (cgStats().unconvergedSteps, cost().unconvergedSolves) and its best λ is applied.
 *
 * [Hig] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM 2002.
 */
import type { WorldDesc } from '../../model/world.js';
import type { ResidualCurve, Solver, SolverCost, SolverOptions } from '../solver.js';
import { JacobiCpuSolver, RESIDUAL_QUANTITY } from '../jacobi/cpu.js';
import { DelassusOperator, relativeError, type DirectSolveResult, type GlobalSolveResult } from './delassus.js';
import { defaultLsTolerance } from '../../math/minres.js';
import { LAMBDA_ERROR_CHANNEL, REFERENCE_TOLERANCE } from './lambda-error.js';

export interface GlobalSolveOptions {
  /** relative tolerance on ‖b − Aλ‖₂ / ‖b‖₂ (default 1e-10) */
  tolerance: number;
  /** least-squares tolerance on ‖Â r̂‖ / (‖Â‖ ‖r̂‖), for systems with no solution (default 1e-8, math/minres.ts) */
  lsTolerance: number;
  /** CG and MINRES iterations per step at most, together (default: min(2 · 3N_c + 100, 10 000)) */
  maxIterations: number;
  /**
   * 'direct' (default): the sparse LDLᵀ of A with iterative refinement, CG then MINRES only where it misses
   * the tolerance (b ∉ range A); 'cg': CG, then MINRES, as before the direct solve existed
   */
  method: GlobalMethod;
}

export type GlobalMethod = 'direct' | 'cg';

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
  /** steps solved by the direct factorisation (method 'direct'), its refinement steps, and the null pivots it dropped (summed) */
  directSteps: number;
  refinements: number;
  nullPivots: number;
  /** direct steps that missed the tolerance and went on to CG and MINRES */
  directFallbackSteps: number;
}

export class GlobalCpuSolver extends JacobiCpuSolver implements Solver {
  /** The equality solve A λ = b takes no contact rows (one-sided): a world's collisions are left out. */
  protected override solvesContacts(): boolean {
    return false;
  }

  override readonly id: string = 'global-cpu';
  /** its step is its own (stepGlobal), timed as one stage */
  override get stageNames(): readonly string[] {
    return ['step'];
  }
  readonly solve: GlobalSolveOptions;
  private op: DelassusOperator;
  /** b of (8), per step */
  private rhs: Float64Array;
  /** λ⁰ (the warm start), kept for CG where the direct solve hands over; the direct λ, kept meanwhile */
  private warm: Float64Array;
  private directLambda: Float64Array;
  private stats: CgStats = emptyStats();
  /** CG iterations of each solver step since creation or resetTimings, in order */
  private perStep: number[] = [];

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}, solve: Partial<GlobalSolveOptions> = {}) {
    super(world, options);
    const rows = this.rowSolver.rows.count;
    this.solve = { tolerance: defaultGlobalTolerance, lsTolerance: defaultLsTolerance, maxIterations: Math.min(2 * rows + 100, 10_000), method: 'direct', ...solve };
    if (this.solve.method !== 'direct' && this.solve.method !== 'cg') throw new Error(`global-cpu: method must be 'direct' or 'cg', got ${String(this.solve.method)}`);
    if (!(this.solve.tolerance > 0)) throw new Error(`global-cpu: tolerance must be > 0, got ${this.solve.tolerance}`);
    if (!(this.solve.lsTolerance > 0)) throw new Error(`global-cpu: lsTolerance must be > 0, got ${this.solve.lsTolerance}`);
    if (!(this.solve.maxIterations >= 1)) throw new Error(`global-cpu: maxIterations must be ≥ 1, got ${this.solve.maxIterations}`);
    this.op = new DelassusOperator(this.delassusSource());
    this.rhs = new Float64Array(rows);
    this.warm = new Float64Array(rows);
    this.directLambda = new Float64Array(rows);
  }

  override stepFrame(): void {
    this.stepGlobal(null);
  }

  /** The direct solve assembles A from every row's J (delassus.ts assemble). */
  protected override needsPointJacobian(): boolean {
    return true;
  }

  /** The joints changed: the rows, and with them the system's size and sparsity (a new operator and factor ordering). */
  protected override relayout(): void {
    super.relayout();
    const rows = this.rowSolver.rows.count;
    this.op = new DelassusOperator(this.delassusSource());
    this.rhs = new Float64Array(rows);
    this.warm = new Float64Array(rows);
    this.directLambda = new Float64Array(rows);
  }

  /**
   * One frame; with `record`, the first substep's true residual ‖b − Aλᵏ‖₂ after each CG
   * iteration k = 0.. (k = 0: the warm-start guess) and ‖λᵏ − λ*‖₂/‖λ*‖₂ against a
   * separate solve to REFERENCE_TOLERANCE. Recording evaluates, never changes, the iterates.
   */
  private stepGlobal(record: { point: number[]; error: number[] } | null): void {
    const { dt, substeps, warmStart } = this.options;
    const h = dt / substeps;
    if (this.rowSolver.stale) this.relayout();
    for (let s = 0; s < substeps; s++) {
      this.computeInertia(); // 1
      this.computeFreeVelocity(h); // 2
      this.computeViolationAndJacobianAndDelassus(h); // 3
      this.warmStart(warmStart); // λ⁰
      this.op.rhs(this.rhs); // b   (8)
      const lambda = this.multiplier;
      const iterates: Float64Array[] = [];
      const points: number[] = [];
      // recording: every iterate (k = 0 the warm start, then CG's, or the direct solve's and its refinements'), its true residual
      const onIteration = record && s === 0 ? (_k: number, x: Float64Array) => {
        iterates.push(x.slice());
        points.push(this.op.residualNorm(this.rhs, x));
      } : undefined;
      if (onIteration && this.solve.method === 'direct') onIteration(0, lambda); // (CG reports its k = 0 itself)
      // 4. A λ = b: by the direct factorisation, or by preconditioned CG from λ⁰ (35, 36); least squares by MINRES where it has no solution
      const result = this.solveStep(lambda, onIteration);
      this.count(result);
      if (record && s === 0) {
        // λ* for the error channel: this step's λ if it converged, refined further towards REFERENCE_TOLERANCE
        // on a copy (direct), or a separate CG solve to it (method 'cg'); the step's λ is not changed
        const reference = lambda.slice();
        let haveReference: boolean;
        if (this.solve.method === 'direct') {
          haveReference = result.converged && !result.leastSquares && reference.some((x) => x !== 0);
          if (haveReference && result.direct?.converged) this.op.refine(this.rhs, reference, REFERENCE_TOLERANCE);
        } else {
          reference.set(iterates[0]);
          const ref = this.op.solve(this.rhs, reference, { tolerance: REFERENCE_TOLERANCE });
          haveReference = ref.converged && reference.some((x) => x !== 0);
        }
        for (const p of points) record.point.push(p);
        if (haveReference) for (const x of iterates) record.error.push(relativeError(x, reference));
      }
      // ΔV = h M⁻¹ Jᵀ λ   (5), (34) in the rows' signs
      this.updateVelocities(h);
      this.computePositions(h); // 5
    }
    this.frame++;
  }

  /**
   * One step's solve of A λ = b into λ (holding λ⁰). 'direct': the LDLᵀ with refinement; where it misses the
   * tolerance (b ∉ range(A): redundant joints that drifted), λ⁰ is put back and CG then MINRES run as in 'cg',
   * and the direct λ stays only where neither of them converged and it left the smaller residual.
   */
  private solveStep(lambda: Float64Array, onIteration: ((k: number, x: Float64Array, rn: number) => void) | undefined): StepResult {
    if (this.solve.method === 'cg') return { ...this.op.solveLeastSquares(this.rhs, lambda, { ...this.solve, onIteration }), direct: null };
    this.warm.set(lambda);
    const direct = this.op.solveDirect(this.rhs, lambda, { tolerance: this.solve.tolerance, onIteration });
    const none = { iterations: 0, cgIterations: 0, minresIterations: 0, leastSquares: false };
    if (direct.converged) return { ...none, residualNorm: direct.residualNorm, rhsNorm: direct.rhsNorm, converged: true, direct };
    this.directLambda.set(lambda);
    lambda.set(this.warm);
    const k0 = 1 + direct.refinements;
    const r = this.op.solveLeastSquares(this.rhs, lambda, { ...this.solve, onIteration: onIteration ? (k, x, rn) => k > 0 && onIteration(k0 + k, x, rn) : undefined });
    if (r.converged || r.residualNorm <= direct.residualNorm) return { ...r, direct };
    lambda.set(this.directLambda);
    return { ...r, residualNorm: direct.residualNorm, rhsNorm: direct.rhsNorm, converged: false, leastSquares: false, direct };
  }

  private count(r: StepResult): void {
    const st = this.stats;
    st.steps++;
    st.iterations += r.iterations;
    st.maxIterationsPerStep = Math.max(st.maxIterationsPerStep, r.iterations);
    if (!r.converged) st.unconvergedSteps++;
    st.worstRelativeResidual = Math.max(st.worstRelativeResidual, r.rhsNorm > 0 ? r.residualNorm / r.rhsNorm : 0);
    if (r.minresIterations > 0) st.minresSteps++;
    st.minresIterations += r.minresIterations;
    if (r.leastSquares) st.leastSquaresSteps++;
    if (r.direct) {
      st.directSteps++;
      st.refinements += r.direct.refinements;
      st.nullPivots += r.direct.nullPivots;
      if (!r.direct.converged) st.directFallbackSteps++;
    }
    this.perStep.push(r.iterations);
  }

  override async stepRecordingResiduals(): Promise<ResidualCurve> {
    const record = { point: [] as number[], error: [] as number[] };
    this.stepGlobal(record);
    const channels: Record<string, number[]> = { point: record.point };
    if (record.error.length) channels[LAMBDA_ERROR_CHANNEL] = record.error;
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  /** What the solves did (direct steps, refinements, CG and MINRES iterations) and their convergence since creation or the last resetTimings. */
  cgStats(): CgStats {
    return { ...this.stats };
  }

  /** CG and MINRES iterations of each solver step since creation or the last resetTimings (0: solved directly). */
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
   * substeps; 0 where every step was solved directly), row solves = 3 N_c per solve with the factor (the
   * first and each refinement) and per CG or MINRES iteration (one application of A, a sweep over every
   * row), and the solves (one per step) and how many of them ended unconverged. The factorisation itself
   * (O(Σ_i width_i²) flops, e.g. ~3·(3·2w)² per row on a w × w grid) has no counterpart in row solves and
   * is not folded in; timings() measure it.
   */
  override cost(): SolverCost {
    const { steps, iterations, unconvergedSteps, directSteps, refinements } = this.stats;
    const perStep = (x: number) => (steps > 0 ? (x / steps) * this.options.substeps : 0);
    const cgPerFrame = perStep(iterations);
    const factorSolvesPerFrame = perStep(directSteps + refinements);
    return {
      rowSolvesPerFrame: 3 * this.constraintCount * (cgPerFrame + factorSolvesPerFrame),
      cgIterationsPerFrame: cgPerFrame,
      solves: steps,
      unconvergedSolves: unconvergedSteps,
    };
  }
}

/** one step's solve: the CG/MINRES result (zero iterations where the direct solve sufficed), and the direct solve's */
type StepResult = GlobalSolveResult & { direct: DirectSolveResult | null };

function emptyStats(): CgStats {
  return {
    steps: 0, iterations: 0, maxIterationsPerStep: 0, unconvergedSteps: 0, worstRelativeResidual: 0, minresSteps: 0, minresIterations: 0, leastSquaresSteps: 0,
    directSteps: 0, refinements: 0, nullPivots: 0, directFallbackSteps: 0,
  };
}
