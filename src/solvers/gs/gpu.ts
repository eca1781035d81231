/**
 * gs-gpu — coloured block Gauss-Seidel on the GPU; gs-cpu is its f64 reference,
 * with the same colours in the same order. Everything but the iteration is
 * jacobi-gpu's (same buffers, same kernels for stages 1–3, the warm start and 5).
 *
 * The constraints are stored colour by colour (colourOrderedWorld), so colour c
 * is one contiguous range. One iteration = one `solve_colour` dispatch per colour,
 * in colour order:
 *   Δλ_ℓ = h⁻¹ A_ℓℓ⁻¹ (J_ℓ V + β C_ℓ)   (37);  λ_ℓ += Δλ_ℓ;  ΔV_i −= h M_i⁻¹ J_ℓ,iᵀ Δλ_ℓ   (34)
 * Invariant: no two constraints of a colour share a dynamic body, so each thread
 * is the only writer of its two bodies' ΔV in its dispatch; fixed bodies and
 * world anchors (which several may share) are never written. WebGPU orders the
 * dispatches of a pass, so colour c + 1 sees every write of colour c.
 */
import type { WorldDesc } from '../../model/world.js';
import { colourOrderedWorld, type Colouring } from '../../model/colouring.js';
import type { GpuContext } from '../../gpu/device.js';
import type { SolverOptions } from '../solver.js';
import type { JacobiVariant } from '../jacobi/cpu.js';
import { JacobiGpuSolver } from '../jacobi/gpu.js';
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

  static override async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext, variant: Partial<JacobiVariant> = {}): Promise<GaussSeidelGpuSolver> {
    const ordered = colourOrderedWorld(world);
    const s = new GaussSeidelGpuSolver(ordered.world, options, variant, gpu);
    s.colouring = ordered.colouring;
    s.colourRanges = ordered.colouring.sizes.map((count, c) => ({ start: ordered.colouring.start[c], count }));
    await s.init();
    return s;
  }

  protected override kernelList(): KernelSpec[] {
    return [...kernelSpecs(), solveColour];
  }

  /** 4. One Gauss-Seidel sweep: one dispatch per colour, in colour order. */
  protected override encodeIteration(pass: GPUComputePassEncoder): void {
    for (let c = 0; c < this.colourRanges.length; c++) this.dispatch(pass, 'solve_colour', c);
  }

  protected override dispatchesPerIteration(): number {
    return this.colourRanges.length;
  }

  /**
   * Bytes of one sweep at the layout of kernels.wgsl.ts (f32), each element read or
   * written once: per constraint, what update_multipliers moves (264, see
   * jacobiIterationBytes) plus, per body, inverse_mass 64 read and velocity_delta
   * 32 written: 264 + 2·(64 + 32) = 456. No per-body gather pass.
   */
  protected override iterationBytes(): number {
    return 456 * this.w.constraintCount;
  }
}
