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
 * With the variant rows: false (not used by the registry) the point-joint kernel below runs instead.
 */
import type { WorldDesc } from '../../model/world.js';
import { colourOrderedWorld, type Colouring } from '../../model/colouring.js';
import type { GpuContext } from '../../gpu/device.js';
import type { SolverOptions } from '../solver.js';
import { JacobiGpuSolver, type JacobiGpuVariant } from '../jacobi/gpu.js';
import { solveColourKernels, type RowKernelSpec } from '../../rows/rows.wgsl.js';
import { kernelSpecs, constraintVelocityError, constraintVelocityBindings, type KernelSpec } from '../jacobi/kernels.wgsl.js';

const solveColour: KernelSpec = {
  name: 'solve_colour',
  over: 'colour',
  bindings: [
    { name: 'colour', access: 'uniform' },
    ...constraintVelocityBindings.map((b) => (b.name === 'velocity_delta' ? { ...b, access: 'read_write' as const } : b)),
    { name: 'delassus_inv', access: 'read' },
    { name: 'multiplier', access: 'read_write' },
    { name: 'inverse_mass', access: 'read' },
  ],
  body: /* wgsl */ `${constraintVelocityError}
  // Δλ = h⁻¹ A_ℓℓ⁻¹ (J_ℓ V + β C_ℓ)   (37)
  let dl = delassus_inv[ic] * cv * (1.0 / params.h);
  multiplier[ic] = vec4f(multiplier[ic].xyz + dl, 0.0);
  // ΔV −= h M⁻¹ J_ℓᵀ Δλ   (34): body i: Δv −= h m⁻¹ Δλ, Δω −= h I⁻¹ (a × Δλ); body j: Δv += h m⁻¹ Δλ, Δω += h I⁻¹ (b × Δλ)
  let m0 = inverse_mass[b.x];
  if (m0.mass > 0.0) {
    velocity_delta[2u * b.x] = vec4f(velocity_delta[2u * b.x].xyz - params.h * m0.mass * dl, 0.0);
    velocity_delta[2u * b.x + 1u] = vec4f(velocity_delta[2u * b.x + 1u].xyz - params.h * (m0.inertia * cross(jacobian[2u * ic].xyz, dl)), 0.0);
  }
  let m1 = inverse_mass[b.y];
  if (m1.mass > 0.0) {
    velocity_delta[2u * b.y] = vec4f(velocity_delta[2u * b.y].xyz + params.h * m1.mass * dl, 0.0);
    velocity_delta[2u * b.y + 1u] = vec4f(velocity_delta[2u * b.y + 1u].xyz + params.h * (m1.inertia * cross(jacobian[2u * ic + 1u].xyz, dl)), 0.0);
  }`,
};

export class GaussSeidelGpuSolver extends JacobiGpuSolver {
  override readonly id: string = 'gs-gpu';
  colouring!: Colouring;

  static override async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext, variant: Partial<JacobiGpuVariant> = {}): Promise<GaussSeidelGpuSolver> {
    const ordered = colourOrderedWorld(world);
    const s = new GaussSeidelGpuSolver(ordered.world, options, { rows: true, ...variant }, gpu);
    const { start, colourCount } = ordered.colouring;
    s.colouring = ordered.colouring;
    // colour c: its constraints start[c] .. start[c+1]−1 (slot order); the row kernels list their blocks from them (init)
    const joints = Array.from({ length: colourCount }, (_, c) => ({ start: start[c], count: start[c + 1] - start[c] }));
    if (s.rowSolver) s.colourJoints = joints;
    else s.colourRanges = joints;
    await s.init();
    return s;
  }

  protected override kernelList(): KernelSpec[] {
    return this.rowSolver ? super.kernelList() : [...kernelSpecs(), solveColour];
  }

  protected override extraRowKernels(): RowKernelSpec[] {
    return solveColourKernels;
  }

  /** 4. One Gauss-Seidel sweep: colour by colour (rows: its point joints, then its others; independent within the colour). */
  protected override encodeIteration(pass: GPUComputePassEncoder): void {
    for (let c = 0; c < this.colourRanges.length; c++) {
      if (this.rowSolver) this.dispatch(pass, 'solve_colour_point', c);
      this.dispatch(pass, 'solve_colour', c);
    }
  }

  protected override dispatchesPerIteration(): number {
    if (this.rowSolver) return this.colourRanges.reduce((n, r) => n + (r.count > 0 ? 1 : 0) + ((r.generalCount ?? 0) > 0 ? 1 : 0), 0);
    return this.colourRanges.length;
  }

  /**
   * Bytes of one sweep at the layout of kernels.wgsl.ts (f32), each element read or
   * written once: per constraint, what update_multipliers moves (264, see
   * jacobiIterationBytes) plus, per body, inverse_mass 64 read and velocity_delta
   * 32 written: 264 + 2·(64 + 32) = 456. No per-body gather pass.
   */
  protected override iterationBytes(): number {
    if (this.rowSolver) {
      // rows: what update_multipliers_point / update_multipliers move (rowJacobiIterationBytes' first
      // terms) plus, per joint, inverse_mass 2×64 read and velocity_delta 2×32 read and written = 256;
      // no per-body gather pass
      const rows = this.rowSolver.rows;
      const points = this.pointJointCount();
      const joints = this.w.constraintCount;
      return 324 * points + 148 * (rows.blockCount - points) + 128 * (rows.count - 3 * points) + 256 * joints;
    }
    return 456 * this.w.constraintCount;
  }
}
