/**
 * gs-gpu — coloured block Gauss-Seidel on the GPU, on constraint rows; gs-cpu is its f64
 * reference, with the same colours in the same order. Everything but the iteration is
 * jacobi-gpu's (same buffers, same kernels for stages 1–3, the warm start and 5).
 *
 * The constraints are stored colour by colour (colourOrderedWorld), so colour c is one
 * contiguous range of joints. One iteration = per colour, in colour order, `solve_colour_point`
 * (its rigid point joints, the fast path) and `solve_colour` (its other joints), rows/rows.wgsl.ts:
 * a thread per joint, its blocks one after the other,
 *   λ_b ← clamp(λ_b − h⁻¹ (A_bb + γ)⁻¹ ρ_b);  ΔV_i += h M_i⁻¹ J_b,iᵀ Δλ_b   (37), (34), at once
 * Invariant: no two constraints of a colour share a dynamic body, so each thread is the only
 * writer of its two bodies' ΔV in its dispatch; fixed bodies and world anchors (which several may
 * share) are never written. WebGPU orders the dispatches of a pass, so colour c + 1 sees every
 * write of colour c.
 *
 * Joints added or removed between steps: coloured again and their rows laid out colour by colour,
 * as gs-cpu's relayout (relayoutRows); colour c is then the slots order[start[c] .. start[c+1]).
 *
 * Contacts (a world with collisions): gs-cpu's contact variant (gs/contacts.ts: the sequential stage list
 * with pgs-cpu's rule, rigid rows with Baumgarte β, the 5 mm slop, no relax) on the GPU contact stages in
 * their sequential mode (contacts/gpu-contacts.ts, the true masses, the manifolds coloured every frame on
 * the GPU), with jacobi-gpu's rule (the same baumgarteContacts). One frame, n substeps of h:
 *   collide, prepare contacts    (jacobi-gpu's encodeContactsStart)
 *   n × ( integrate velocities, prepare joints (stages 1–3)
 *         restitution            collision propagation on V, colour by colour (only where some body has e > 0)
 *         warm start             the joints' update_velocities, the contacts' gather, folded into V
 *         solve                  --iterations sweeps, each: the joints colour by colour (their ΔV), folded
 *                                into V, then the contacts colour by colour on V in place; every other
 *                                sweep of the run backwards, joints' colours and contacts alike (gs-cpu's
 *                                sweepParity 'run': its joints' blocks and its contacts reversed); then the
 *                                joints' split impulse: ⌈N/2⌉ position sweeps colour by colour on the
 *                                pseudo-velocities, every other one backwards (solve_colour_positions*,
 *                                gs-cpu's solvePositions over its colour-ordered blocks)
 *         integrate positions    compute_positions_split (x += h (v + P)); the separations follow the bodies (K1) )
 *   store impulses
 * Its CPU twin is gs-cpu sweeping its manifolds in the same colour order (ContactSolver.colourOrder).
 */
import type { WorldDesc } from '../../model/world.js';
import { colourConstraints, colourOrderedWorld, type Colouring } from '../../model/colouring.js';
import type { GpuContext } from '../../gpu/device.js';
import type { SolverOptions } from '../solver.js';
import { JacobiGpuSolver } from '../jacobi/gpu.js';
import type { JacobiVariant } from '../jacobi/cpu.js';
import { colourPositionKernels, solveColourKernels, type RowKernelSpec } from '../../rows/rows.wgsl.js';
import { RowBlockSolver } from '../../rows/block-solver.js';
import type { StagePass } from '../../gpu/frames.js';
import type { ContactMode } from '../../contacts/gpu-contacts.js';

export class GaussSeidelGpuSolver extends JacobiGpuSolver {
  override readonly id: string = 'gs-gpu';
  colouring!: Colouring;

  /** sweeps made over the run with contacts (every other one backwards: gs-cpu's sweepParity 'run') */
  private sweeps = 0;

  /**
   * Contacts only where two bodies can touch: some pair is not joined by a joint (joined pairs never collide).
   * A world of bodies all joined pairwise (a two-box cantilever) keeps the joint-only frame, as before contacts
   * came to gs-gpu: its sweeps all forwards, as gs-cpu's joint solver (gs/cpu.ts) that its joint tests pair it with.
   */
  protected override takesContacts(): boolean {
    const n = this.bodyCount, pairs = (n * (n - 1)) / 2, j = this.joints;
    if (j.constraintCount < pairs) return true; // fewer joints than pairs: some pair is free
    const joined = new Set<number>();
    for (let k = 0; k < j.constraintCount; k++) {
      const a = j.ib0[k], b = j.ib1[k];
      if (a !== b && a >= 0 && b >= 0 && a < n && b < n) joined.add(Math.min(a, b) * n + Math.max(a, b)); // world anchors: index ≥ n
    }
    return joined.size < pairs;
  }

  /** Contacts as gs-cpu's: the sequential (Gauss-Seidel) contact sweep, colour by colour (header). */
  protected override contactMode(): ContactMode {
    return 'sequential';
  }

  /** With contacts (header): the joints' colours, a fold, then the contacts' colours, each sweep. */
  protected override encodeFrame(at: StagePass): void {
    const c = this.encodeContactsStart(at);
    if (!c) return super.encodeFrame(at);
    const { substeps, iterations } = this.options;
    for (let s = 0; s < substeps; s++) {
      // integrate velocities, prepare joints, restitution, warm start (into ΔV), then ΔV folded into V
      this.encodeSolveStart(at);
      c.recordFold(at('warm start'));
      this.recordPoint(s); // (a frame that records residuals: after the warm start, then after each sweep)
      for (let k = 0; k < iterations; k++) {
        const pass = at('solve');
        const reverse = (this.sweeps++ & 1) === 1;
        const K = this.colourRanges.length;
        for (let x = 0; x < K; x++) {
          const colour = reverse ? K - 1 - x : x;
          this.dispatch(pass, 'solve_colour_point', colour);
          this.dispatch(pass, 'solve_colour', colour);
        }
        // the joints' ΔV into V, so the contacts see them (gs-cpu's foldVelocities), then the contacts
        c.recordFold(pass);
        c.recordSequentialSweep(pass, false, reverse);
        this.recordPoint(s);
      }
      // split impulse: the joints' Baumgarte feedback as a position pass of its own (gs-cpu's, in the solve)
      this.encodePositionPass(at('solve'));
      const end = at('integrate positions');
      this.dispatch(end, this.positionsKernel());
      c.recordPose(end);
    }
    c.recordStore(at('store impulses'));
  }

  static override async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext, variant: Partial<JacobiVariant> = {}): Promise<GaussSeidelGpuSolver> {
    const ordered = colourOrderedWorld(world);
    const s = new GaussSeidelGpuSolver(ordered.world, options, variant, gpu);
    const { start, colourCount } = ordered.colouring;
    s.colouring = ordered.colouring;
    // colour c: its constraints start[c] .. start[c+1]−1 (slot order); the row kernels list their blocks from them (init)
    s.colourJoints = Array.from({ length: colourCount }, (_, c) => Array.from({ length: start[c + 1] - start[c] }, (_, k) => start[c] + k));
    await s.init();
    return s;
  }

  /** The joints changed: colour them again and lay the rows out colour by colour (gs-cpu's relayout). */
  protected override relayoutRows(): void {
    const j = this.joints;
    this.colouring = colourConstraints({ constraintCount: j.constraintCount, bodyCount: this.w.bodyCount, ib0: j.ib0, ib1: j.ib1, inverseMass: this.w.inverseMass });
    const { order, start, colourCount } = this.colouring;
    this.rowSolver.layout(order);
    this.colourJoints = Array.from({ length: colourCount }, (_, c) => Array.from(order.subarray(start[c], start[c + 1])));
  }

  protected override extraRowKernels(): RowKernelSpec[] {
    return solveColourKernels;
  }

  /** The position pass's kernels: a colour's joints on P at once (rows/rows.wgsl.ts solve_colour_positions*). */
  protected override positionKernels(): RowKernelSpec[] {
    return colourPositionKernels;
  }

  /**
   * The split impulse's position pass (gs-cpu's solvePositions, order 'symmetric', over its colour-ordered
   * blocks): ⌈N/2⌉ sweeps colour by colour on the pseudo-velocities, every other sweep of the pass backwards.
   */
  protected override encodePositionPass(pass: GPUComputePassEncoder): void {
    if (!this.split) return;
    const K = this.colourRanges.length;
    for (let k = 0; k < RowBlockSolver.positionSweeps(this.options.iterations); k++) {
      const reverse = (k & 1) === 1;
      for (let x = 0; x < K; x++) {
        const colour = reverse ? K - 1 - x : x;
        this.dispatch(pass, 'solve_colour_positions_point', colour);
        this.dispatch(pass, 'solve_colour_positions', colour);
      }
    }
  }

  /** 4. One Gauss-Seidel sweep: colour by colour (its point joints, then its others; independent within the colour). */
  protected override encodeIteration(pass: GPUComputePassEncoder): void {
    for (let c = 0; c < this.colourRanges.length; c++) {
      this.dispatch(pass, 'solve_colour_point', c);
      this.dispatch(pass, 'solve_colour', c);
    }
  }

  protected override dispatchesPerIteration(): number {
    return this.colourRanges.reduce((n, r) => n + (r.count > 0 ? 1 : 0) + (r.generalCount > 0 ? 1 : 0), 0);
  }

  /**
   * Bytes of one sweep at the layout of rows/rows.wgsl.ts (f32), each element read or written once:
   * what update_multipliers_point / update_multipliers move (rowJacobiIterationBytes' first terms) plus,
   * per joint, inverse_mass 2×64 read and velocity_delta 2×32 read and written = 256; no per-body gather pass.
   */
  protected override iterationBytes(): number {
    const rows = this.rowSolver.rows;
    const points = this.pointJointCount();
    const joints = this.joints.constraintCount;
    return 324 * points + 148 * (rows.blockCount - points) + 128 * (rows.count - 3 * points) + 256 * joints;
  }
}
