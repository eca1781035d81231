/**
 * softstep-gpu — Box2D v3's soft step (softstep-cpu, its f64 reference with the same stages and names)
 * on the GPU, for contacts: the collision pipeline, the manifolds' warm start and the contact records of
 * jacobi-gpu's contact stages (contacts/gpu-contacts.ts, with the true masses), and a sequential
 * (Gauss-Seidel) solve made parallel by colouring the manifolds every frame on the GPU (gpu/colouring.ts:
 * no two manifolds of one colour share a moving body; colours 0 .. 23 one dispatch each, the late ones up to
 * K = 64 in one workgroup, a manifold that finds none of them in the overflow set, solved by one thread last). The body stages are jacobi-gpu's kernels
 * (rigid/body.wgsl.ts: gravity and the gyroscopic step, the position update). A frame is one submission
 * with no readback.
 *
 * One frame of dt, n substeps of h = dt / n (softstep-cpu's header):
 *   collide              the GPU collision pipeline at the frame's start
 *   prepare contacts     records, λ⁰ matched from last frame's manifolds, the soft contact spring
 *                        (--contact-hertz, at most a quarter of the substep rate, twice that against a
 *                        fixed body, --contact-damping; no slop; the small-body spring), the colouring
 *   n × ( integrate velocities   v ← v + h g (and the gyroscopic term)
 *         restitution            collision propagation on V, colour by colour (cs_restitution; only where
 *                                some body has e > 0)
 *         warm start             V += h M⁻¹ Jᵀ λ (gathered per body, then folded into V)
 *         solve                  --iterations coloured sweeps with the soft bias, every other one backwards
 *         integrate positions    x ← x + h v, q ← q ⊕ h ω; the separations follow the bodies (K1)
 *         relax                  restitution once more (no forces in V yet), then --iterations coloured
 *                                sweeps, rigid and without bias, forwards )
 *   store impulses       the records kept for the next frame's matching
 *
 * The order of a sweep is the colours' (colour 0's manifolds, then colour 1's, …), not softstep-cpu's
 * manifold order: a Gauss-Seidel sweep's result depends on its order, so the twin test runs softstep-cpu
 * in the same colour order (contacts/contact-solver.ts colourOrder; its restitution too). Not on the GPU
 * yet: joints (refused with the reason), sleeping (every body awake). The residual diagnostics (run --residuals)
 * are softstep-cpu's: jacobi-gpu's stepRecordingResiduals over this frame, the contacts' on the GPU.
 */
import type { WorldDesc } from '../../model/world.js';
import type { GpuContext } from '../../gpu/device.js';
import type { SolverOptions } from '../solver.js';
import type { StagePass } from '../../gpu/frames.js';
import type { ContactMode } from '../../contacts/gpu-contacts.js';
import type { ContactRule } from '../../rows/block-solver.js';
import { JacobiGpuSolver } from '../jacobi/gpu.js';
import { softStepContactRule } from './cpu.js';

export class SoftStepGpuSolver extends JacobiGpuSolver {
  override readonly id: string = 'softstep-gpu';

  static override async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext): Promise<SoftStepGpuSolver> {
    if (world.constraints.length > 0) throw new Error('softstep-gpu: joints are not on the GPU soft step yet (use softstep-cpu, or jacobi-gpu for joints)');
    const s = new SoftStepGpuSolver(world, options, {}, gpu);
    await s.init();
    return s;
  }

  protected override contactMode(): ContactMode {
    return 'sequential';
  }

  /** No split impulse: no joints here (refused at creation), so no position pass. */
  protected override splitsImpulses(): boolean {
    return false;
  }

  /** softstep-cpu's rule for substep h: the soft spring, no slop, twice the frequency against a fixed body, the small-body spring. */
  protected override gpuContactRule(h: number): ContactRule {
    const rule = softStepContactRule(this.options, h);
    const g = this.w.gravity;
    if (rule.sizeSpring) rule.sizeSpring = { ...rule.sizeSpring, gravity: Math.hypot(g[0], g[1], g[2]) };
    return rule;
  }

  override get stageNames(): readonly string[] {
    return ['collide', 'prepare contacts', 'integrate velocities', 'restitution', 'warm start', 'solve', 'integrate positions', 'relax', 'store impulses'];
  }

  protected override encodeFrame(at: StagePass): void {
    const { substeps, iterations, warmStart } = this.options;
    const c = this.encodeContactsStart(at);
    for (let s = 0; s < substeps; s++) {
      this.dispatch(at('integrate velocities'), 'compute_free_velocity');
      // restitution: the substep's collisions before the solve (V has this substep's h g)
      if (c?.elastic) c.recordRestitution(at('restitution'), true);
      if (c && warmStart > 0) {
        const pass = at('warm start');
        c.recordWarmStart(pass);
        c.recordFold(pass);
      }
      if (c) {
        // (a frame that records residuals: after the warm start, then after each solve sweep; not the relax's)
        this.recordPoint(s);
        for (let k = 0; k < iterations; k++) {
          c.recordSequentialSweep(at('solve'), false, (k & 1) === 1);
          this.recordPoint(s);
        }
      }
      const end = at('integrate positions');
      this.dispatch(end, 'compute_positions');
      c?.recordPose(end);
      if (c) {
        // restitution again at the new pose, on the velocities the next substep starts from (no forces yet):
        // else the relax would stop inelastically a point that closes within the next substep (softstep-cpu)
        if (c.elastic) c.recordRestitution(at('restitution'), false);
        const pass = at('relax');
        for (let k = 0; k < iterations; k++) c.recordSequentialSweep(pass, true, false);
      }
    }
    if (c) c.recordStore(at('store impulses'));
  }
}
