/**
 * witkin-euler, witkin-symplectic, witkin-rk4: the constrained particle system
 * (system.ts) behind the common Solver interface, one integrator each. A frame
 * is `substeps` steps of h = dt / substeps; each derivative evaluation solves the
 * global multiplier system by conjugate gradient to the system's tolerance, so
 * `iterations` does not apply (the CG iterations used are reported in cost()).
 * Options used: dt, substeps, feedbackStiffness (k_s), feedbackDamping (k_d).
 */
import type { ResidualCurve, Solver, SolverCost, SolverOptions } from '../solver.js';
import type { Snapshot } from '../../model/snapshot.js';
import { WallTimedSolver } from '../cpu-base.js';
import { Integrator, type IntegratorName } from '../../particles/integrators.js';
import { ParticleSystem, type ConstraintForce } from '../../particles/system.js';
import type { ParticleSystemDesc } from '../../model/particle-system.js';

export const CG_RESIDUAL_QUANTITY = '‖b − JWJᵀλ‖₂ per CG iteration (units of C̈ per row)';

export class WitkinSolver extends WallTimedSolver implements Solver {
  readonly id: string;
  readonly system: ParticleSystem;
  readonly integrator: Integrator;
  readonly bodyCount: number;
  readonly constraintCount: number;
  private costFrames = 0;
  private costStart = { solves: 0, iterations: 0, rowSolves: 0, unconverged: 0 };

  constructor(desc: ParticleSystemDesc, options: Partial<SolverOptions>, readonly integratorName: IntegratorName) {
    super(options);
    this.id = `witkin-${integratorName}`;
    this.system = new ParticleSystem(desc, { ks: this.options.feedbackStiffness, kd: this.options.feedbackDamping });
    this.integrator = new Integrator(integratorName, this.system);
    this.bodyCount = this.system.n;
    this.constraintCount = this.system.constraints.length;
  }

  /** the notes' steps: forces applied, the constraint force solve, the rest of each derivative and the integrator's update */
  override get stageNames(): readonly string[] {
    return ['apply forces', 'constraint forces', 'integrate'];
  }

  stepFrame(): void {
    const h = this.options.dt / this.options.substeps;
    const ms = this.system.stageMs, forces = ms.forces, constraints = ms.constraints;
    const t0 = performance.now();
    for (let s = 0; s < this.options.substeps; s++) this.integrator.step(h);
    const total = performance.now() - t0;
    const clock = this.stageClock, df = ms.forces - forces, dc = ms.constraints - constraints;
    clock.add('apply forces', df);
    clock.add('constraint forces', dc);
    clock.add('integrate', total - df - dc);
    this.costFrames++;
    this.frame++;
  }

  override resetTimings(): void {
    super.resetTimings();
    this.costFrames = 0;
    this.costStart = { ...this.system.totals };
  }

  async snapshot(): Promise<Snapshot> {
    const d = this.system.dimension, n = this.system.n;
    const { q, v } = this.system.state();
    const position = new Float64Array(3 * n), linearVelocity = new Float64Array(3 * n);
    const orientation = new Float64Array(4 * n);
    for (let i = 0; i < n; i++) {
      for (let c = 0; c < d; c++) {
        position[3 * i + c] = q[i * d + c];
        linearVelocity[3 * i + c] = v[i * d + c];
      }
      orientation[4 * i + 3] = 1;
    }
    return { frame: this.frame, time: this.frame * this.options.dt, bodyCount: n, position, orientation, linearVelocity, angularVelocity: new Float64Array(3 * n) };
  }

  /**
   * Row solves per frame: rows × CG iterations × derivative evaluations (measured, averaged over the frames
   * stepped); the constraint solves (one per derivative evaluation) and those that ended above the tolerance.
   */
  cost(): SolverCost {
    const frames = Math.max(1, this.costFrames), t = this.system.totals;
    return {
      rowSolvesPerFrame: (t.rowSolves - this.costStart.rowSolves) / frames,
      cgIterationsPerFrame: (t.iterations - this.costStart.iterations) / frames,
      solves: t.solves - this.costStart.solves,
      unconvergedSolves: t.unconverged - this.costStart.unconverged,
    };
  }

  /** λ and Q̂ of each constraint at the current state. */
  constraintForces(): ConstraintForce[] {
    return this.system.constraintForces();
  }

  /** One frame, recording the CG residual of its first constraint solve. */
  async stepRecordingResiduals(): Promise<ResidualCurve> {
    const curve: number[] = [];
    this.system.recordResiduals = curve;
    const before = { ...this.system.totals }, frames = this.costFrames;
    this.stageClock.paused = true; // like the timings, the recorded frame is not counted in the stages
    this.stepFrame();
    this.stageClock.paused = false;
    // like the timings, the recorded frame is not counted in cost()
    this.costFrames = frames;
    for (const key of ['solves', 'iterations', 'rowSolves', 'unconverged'] as const) this.costStart[key] += this.system.totals[key] - before[key];
    return { frame: this.frame, substep: 0, quantity: CG_RESIDUAL_QUANTITY, channels: { constraints: curve } };
  }
}
