/**
 * What every CPU solver shares: options, wall-clock timing per frame, the frame
 * count (WallTimedSolver); and, for the rigid solvers, the compiled f64 state
 * over a CompiledWorld and its Snapshot (CpuSolverBase). A CPU solver extends
 * one and steps one frame in stepFrame.
 */
import type { WorldDesc } from '../model/world.js';
import { compileWorld, snapshotOf, type CompiledWorld } from '../model/compiled.js';
import { defaultSolverOptions, type AdapterDescription, type Snapshot, type SolverOptions, type StepTimings } from './solver.js';

export abstract class WallTimedSolver {
  abstract readonly id: string;
  readonly options: SolverOptions;
  readonly adapter: AdapterDescription = { name: 'cpu (f64)', software: false, timestamps: false };
  protected frame = 0;
  private msPerFrame: number[] = [];

  constructor(options: Partial<SolverOptions>) {
    this.options = { ...defaultSolverOptions, ...options };
  }

  /** One frame: `substeps` solver steps of h = dt / substeps; counts the frame. */
  abstract stepFrame(): void;

  async step(frames: number): Promise<void> {
    for (let f = 0; f < frames; f++) {
      const t0 = performance.now();
      this.stepFrame();
      this.msPerFrame.push(performance.now() - t0);
    }
  }

  timings(): StepTimings {
    return { clock: 'wall', msPerFrame: this.msPerFrame.slice(), wallMsPerFrame: this.msPerFrame.slice() };
  }

  resetTimings(): void {
    this.msPerFrame = [];
  }

  destroy(): void {}
}

export abstract class CpuSolverBase extends WallTimedSolver {
  readonly bodyCount: number;
  readonly constraintCount: number;
  readonly w: CompiledWorld;

  constructor(world: WorldDesc, options: Partial<SolverOptions>) {
    super(options);
    this.w = compileWorld(world);
    this.bodyCount = this.w.worldBodyCount;
    this.constraintCount = this.w.constraintCount;
  }

  async snapshot(): Promise<Snapshot> {
    return snapshotOf(this.w, this.frame, this.options.dt);
  }
}
