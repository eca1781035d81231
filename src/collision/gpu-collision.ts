/**
 * The GPU collision pipeline, the twin of CollisionPipeline.detect (pipeline.ts) up to its contact
 * points: body boxes with their speculative margins (gpu-aabb.ts), the broad phase (gpu-broadphase.ts)
 * the strike speeds (gpu-strike.ts: pipeline.ts strikeSpeeds' twin, its new pairs appended to the broad
 * phase's) and the narrow phase with the CPU's per-pair margin 4 slop + h (s'_a + s'_b) (gpu-narrow.ts), recorded
 * one after the other into a frame's passes, with no readback. Its output is the narrow phase's:
 * manifold k of pair k (count 0: no point within the pair's margin) and its points, for the GPU
 * contact stages that follow (persistence by pair key, colouring, the solvers: issue 23).
 *
 * Inputs are the solver's buffers: poses ((x, 0), q per body) and velocities ((v, 0), (ω, 0)) in
 * frames.ts packBodyState's layout; the shapes (BodyShape, written once here) and the per-body flags
 * (u32: FLAG_INACTIVE for fixed or asleep bodies, FLAG_FIXED for fixed ones; setFlags, when the
 * islands change). Jointed pairs never collide (setJoints, as CollisionPipeline.setJoints).
 */
import type { Shape } from '../model/world.js';
import { GpuBodyAabbs, FLAG_FIXED, FLAG_INACTIVE } from './gpu-aabb.js';
import { GpuBroadPhase, gridCellSize, COUNTER_PAIRS } from './gpu-broadphase.js';
import { GpuNarrowPhase, packShapes, type GpuManifolds } from './gpu-narrow.js';
import { GpuStrikeSpeeds } from './gpu-strike.js';
import { shapeAabb } from './aabb.js';
import { SLOP_SIZE_FRACTION, SPECULATIVE_DISTANCE } from './pipeline.js';
import { leastHalfSize } from '../model/world.js';

export { FLAG_FIXED, FLAG_INACTIVE };

/** the stage names a frame records the pipeline under (gpu/frames.ts StagePass) */
export const AABB_STAGE = 'body boxes';
/** the strike speeds' stage (gpu-strike.ts) */
export const STRIKE_STAGE = 'strike speeds';

/** What the strike speeds read per body (pipeline.ts strikeSpeeds): 1/m (0 fixed) and e. */
export interface StrikeMaterials {
  inverseMass: ArrayLike<number>;
  restitution: ArrayLike<number>;
}

export class GpuCollision {
  readonly shapes: GPUBuffer;
  readonly flags: GPUBuffer;

  private constructor(
    private readonly device: GPUDevice,
    readonly count: number,
    readonly aabbs: GpuBodyAabbs,
    readonly broad: GpuBroadPhase,
    readonly narrow: GpuNarrowPhase,
    readonly strike: GpuStrikeSpeeds,
    shapes: readonly Shape[],
    fixed: ArrayLike<boolean | number>,
  ) {
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    const shapeData = packShapes(shapes);
    this.shapes = device.createBuffer({ label: 'collision shapes', size: shapeData.byteLength, usage });
    device.queue.writeBuffer(this.shapes, 0, shapeData);
    this.flags = device.createBuffer({ label: 'collision flags', size: 4 * Math.max(1, count), usage });
    this.setFlags(fixed, null);
    // the grid's cell from the shapes at rest (boxes with the smallest margin): only speed depends on it
    const boxes = new Float64Array(6 * count), zero = [0, 0, 0], unit = [0, 0, 0, 1];
    shapes.forEach((s, i) => shapeAabb(s, zero, 0, unit, 0, Math.min(SPECULATIVE_DISTANCE, 4 * SLOP_SIZE_FRACTION * leastHalfSize(s)) / 2, boxes, 6 * i));
    this.cellSize = gridCellSize(boxes, count);
  }

  /** the broad phase's grid cell, m (from the shapes; gridCellSize) */
  readonly cellSize: number;

  /** A pipeline for `shapes` (fixed[i]: body i never moves), with room for `pairCapacity` pairs. */
  /**
   * `materials`: the bodies' 1/m and e for the strike speeds (gpu-strike.ts; the CPU pipeline's); when
   * left out, equal masses (1/m = 1, 0 for a fixed body) and e = 0.
   */
  static async create(device: GPUDevice, shapes: readonly Shape[], fixed: ArrayLike<boolean | number>, pairCapacity: number, materials?: StrikeMaterials): Promise<GpuCollision> {
    const n = shapes.length;
    const inverseMass = Array.from({ length: n }, (_, i) => (fixed[i] ? 0 : materials ? materials.inverseMass[i] : 1));
    const restitution = Array.from({ length: n }, (_, i) => (materials ? materials.restitution[i] : 0));
    const pad = shapes.map((s) => Math.min(SPECULATIVE_DISTANCE, 4 * SLOP_SIZE_FRACTION * leastHalfSize(s)) / 2);
    const [aabbs, broad, narrow, strike] = await Promise.all([
      GpuBodyAabbs.create(device, n),
      GpuBroadPhase.create(device, n, pairCapacity),
      GpuNarrowPhase.create(device, pairCapacity),
      GpuStrikeSpeeds.create(device, n, inverseMass, restitution, pad),
    ]);
    return new GpuCollision(device, n, aabbs, broad, narrow, strike, shapes, fixed);
  }

  /** The per-body flags: fixed bodies, and (when given) the sleeping ones, inactive. */
  setFlags(fixed: ArrayLike<boolean | number>, asleep: ArrayLike<boolean | number> | null): void {
    const f = new Uint32Array(Math.max(1, this.count));
    for (let i = 0; i < this.count; i++) f[i] = (fixed[i] ? FLAG_FIXED | FLAG_INACTIVE : 0) | (asleep && asleep[i] ? FLAG_INACTIVE : 0);
    this.device.queue.writeBuffer(this.flags, 0, f);
  }

  /** Pairs joined by a joint do not collide (CollisionPipeline.setJoints). */
  setJoints(ib0: ArrayLike<number>, ib1: ArrayLike<number>, count: number): void {
    this.broad.setJoints(ib0, ib1, count);
  }

  /** The frame's time step h and |g| (the speculative margins: pipeline.ts header). */
  configure(h: number, gravity: number): void {
    this.aabbs.configure(this.count, h, gravity);
    this.broad.configure(this.count, this.cellSize);
    this.narrow.usePairMargins(h);
    this.strike.configure(h);
  }

  /** Records the three stages into `at` (a StagePass: each stage under its name, or one pass for all). */
  record(at: (stage: string) => GPUComputePassEncoder, poses: GPUBuffer, velocities: GPUBuffer): void {
    this.aabbs.record(at(AABB_STAGE), poses, velocities, this.shapes, this.flags);
    this.broad.record(at, this.aabbs.aabbs);
    const b = this.broad;
    this.strike.record(
      at(STRIKE_STAGE),
      { speeds: this.aabbs.speeds, aabbs: this.aabbs.aabbs, pairs: b.pairs, counters: b.counters.buffer, joints: b.jointsBuffer, pairArgs: b.pairArgs, capacity: b.pairCapacity },
      (pass) => b.counters.recordArgs(pass),
    );
    this.narrow.record(at, { pairs: b.pairs, counters: b.counters.buffer, counter: COUNTER_PAIRS, args: b.pairArgs }, poses, this.shapes, this.strike.eff);
  }

  /** Reads the pairs and manifolds of the last frame recorded (tests and tools, not frames). */
  read(): Promise<GpuManifolds> {
    return this.narrow.read();
  }

  destroy(): void {
    this.aabbs.destroy();
    this.broad.destroy();
    this.narrow.destroy();
    this.strike.destroy();
    this.shapes.destroy();
    this.flags.destroy();
  }
}
