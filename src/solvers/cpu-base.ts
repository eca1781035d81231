/**
 * What every CPU solver over a CompiledWorld shares: options, the compiled f64
 * state, wall-clock timing per frame, the frame count and the Snapshot. A CPU
 * solver extends it and steps one frame in stepFrame.
 */
import type { WorldDesc } from '../model/world.js';
import { compileWorld, snapshotOf, type CompiledWorld } from '../model/compiled.js';
import { defaultSolverOptions, type AdapterDescription, type Snapshot, type SolverOptions, type StepTimings } from './solver.js';

export abstract class CpuSolverBase {
  abstract readonly id: string;
  readonly options: SolverOptions;
  readonly bodyCount: number;
  readonly constraintCount: number;
  readonly adapter: AdapterDescription = { name: 'cpu (f64)', software: false, timestamps: false };
  readonly w: CompiledWorld;
  protected frame = 0;
  private msPerFrame: number[] = [];

  constructor(world: WorldDesc, options: Partial<SolverOptions>) {
    this.options = { ...defaultSolverOptions, ...options };
    this.w = compileWorld(world);
    this.bodyCount = this.w.worldBodyCount;
    this.constraintCount = this.w.constraintCount;
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

  async snapshot(): Promise<Snapshot> {
    return snapshotOf(this.w, this.frame, this.options.dt);
  }

  timings(): StepTimings {
    return { clock: 'wall', msPerFrame: this.msPerFrame.slice(), wallMsPerFrame: this.msPerFrame.slice() };
  }

  resetTimings(): void {
    this.msPerFrame = [];
  }

  destroy(): void {}
}
