/**
 * What the GPU row solvers (jacobi-gpu and its subclasses, xpbd-gpu) share for joints added and
 * removed between steps: the one-line errors of the CPU solvers (cpu-base.ts checkAddedJoint), the
 * joint compiled at once at the creation pose and again, before the next step, at the GPU's pose
 * (read back then: it is not at hand synchronously), and the re-layout run before a step when the
 * joint set changed (each solver's syncJoints).
 */
import type { ConstraintDesc } from '../model/world.js';
import { compileJoint, type CompiledWorld } from '../model/compiled.js';
import type { JointSet } from '../rows/joint-set.js';
import type { RowBlockSolver } from '../rows/block-solver.js';
import { GpuSolverBase } from './gpu-base.js';
import { checkAddedJoint } from './cpu-base.js';

export abstract class JointEditingGpuSolver<B extends string> extends GpuSolverBase<B> {
  protected abstract readonly w: CompiledWorld;
  abstract readonly joints: JointSet;
  protected abstract readonly rowSolver: RowBlockSolver;
  /** joints added since the last step, to compile again at the GPU's pose (compilePendingJoints) */
  protected readonly pendingPose = new Map<number, ConstraintDesc>();

  /**
   * Adds a joint between two of the world's bodies before the next step (its starting pose is the
   * bodies' pose then, read back from the GPU); returns its id for removeConstraint. The CPU solvers'
   * one-line errors (cpu-base.ts checkAddedJoint).
   */
  addConstraint(c: ConstraintDesc): number {
    checkAddedJoint(c, this.w.worldBodyCount, this.w.inverseMass);
    const id = this.joints.add(c, this.w.position, this.w.orientation); // again at the GPU's pose in syncJoints
    this.pendingPose.set(id, c);
    return id;
  }

  /** Removes the joint with this id (the world's joints: their index; or addConstraint's id) before the next step. */
  removeConstraint(id: number): void {
    this.joints.remove(id);
    this.pendingPose.delete(id);
  }

  protected override async beforeStep(): Promise<void> {
    if (this.rowSolver.stale) await this.syncJoints();
  }

  /** Lays out and uploads the joints added or removed since the last step now (step does it by itself). */
  async applyJointChanges(): Promise<void> {
    await this.beforeStep();
  }

  /** The joints changed: lay them out again and upload them (each solver's own layout). */
  protected abstract syncJoints(): Promise<void>;

  /** Compiles the joints added since the last step at the pose read back from the GPU (`pose`: its pose buffer). */
  protected compilePendingJoints(pose: ArrayBuffer): void {
    const { position, orientation } = GpuSolverBase.poseFrom(pose, this.w.bodyCount);
    for (const [id, c] of this.pendingPose) compileJoint(this.joints, c, this.joints.indexOf(id), position, orientation);
    this.pendingPose.clear();
  }
}
