/**
 * global-gpu — host side of the global solve on the GPU (f32); global-cpu is its f64
 * reference, over the same constraint rows (every joint type's equality rows; a world with a
 * one-sided row, a rope, strut or hinge limit, is refused in the registry with global-cpu's
 * reason). Everything but stage 4 is jacobi-gpu's on rows: the same buffers and the same
 * kernels for stages 1–3 (with the warm start λ⁰ = f λ_prev), the impulses (update_velocities)
 * and stage 5. Stage 4 is the preconditioned conjugate residual method (CR) of
 * kernels.wgsl.ts — a Krylov solve of A λ = b that, unlike CG, also converges to a
 * least-squares λ where redundant joints leave b outside range(A) (see there):
 * `iterations` iterations are recorded per solver step, each dispatched indirectly from
 * workgroup counts the GPU zeroes once the solve is done (‖r‖ ≤ tolerance · ‖b‖, the
 * least-squares test, a null direction, or stagnation): the iterations after that run no
 * workgroups, and a step needs no readback. One frame is one compute pass, many frames
 * one submission, as for every GPU solver.
 *
 * `iterations` is the cap on iterations per step (the solver's default: 64; the 40-bead
 * necklace uses 41–50 of them, a swinging 100-bead chain needs ~104); the iterations each solve used,
 * the solves that ended above the tolerance, those that ended at a least-squares λ and those
 * stopped on a null direction or stagnation are counted on the GPU (cgStats(), read back with
 * every snapshot, and cost()).
 */
import type { WorldDesc } from '../../model/world.js';
import type { GpuContext } from '../../gpu/device.js';
import type { ResidualCurve, Solver, SolverCost, SolverOptions, Snapshot } from '../solver.js';
import { JacobiGpuSolver } from '../jacobi/gpu.js';
import { RESIDUAL_QUANTITY, type JacobiVariant } from '../jacobi/cpu.js';
import { readBuffers, type StagePass } from '../../gpu/frames.js';
import { buildKernels } from '../../gpu/kernels.js';
import { Kernel } from '../../gpu/dispatch.js';
import { cgKernelSpecs, cgKernelSource, cgCounter, cgIndirectOffset, CG_PARAMS_BYTES, CG_SCALARS_BYTES, type CgBufferName, type CgKernelSpec } from './kernels.wgsl.js';

/**
 * Relative tolerance of the f32 solve on the recurrence's residual: ‖r‖ ≤ 1e-6 ‖b‖. The true residual of the
 * f32 λ sits higher, at the rounding of A and b in f32 (ε ≈ 6e-8 times ‖A‖‖λ‖: ~4e-5 ‖b‖ on a small necklace).
 */
export const defaultGpuTolerance = 1e-6;

/**
 * Least-squares tolerance τ: a solve ends at a least-squares λ where ‖Â r̂‖ ≤ τ ‖Â‖ ‖r̂‖ (as global-cpu's MINRES
 * with its lsTolerance). 2⁻¹⁷ ≈ 7.6e-6 = 128 u (u = 2⁻²⁴, f32): eight times the rounding floor of the computed
 * ratio, ~16 u (s = A z in f32 is a sum of ≲ 16 terms per row); low enough that a consistent system can pass the
 * test only with its residual in eigenvalues σ̂ < τ ‖Â‖, i.e. a spectrum wider than 1.3e5 (a chain of ~570 beads).
 */
export const gpuLsTolerance = 2 ** -17;
/** η: a direction p with ‖Â p̂‖ ≤ η ‖Â‖ ‖p̂‖ is numerically null (16 u, the rounding of q = A p in f32), and the solve stops before stepping along it */
export const gpuNullFloor = 16 * 2 ** -24;
/** stagnation: m = 16 iterations in a row that bring neither ‖r̂‖² nor ‖Â r̂‖² below (1 − θ) of its least so far, θ = 1e-3, end the solve */
export const gpuStallLimit = 16;
export const gpuStallDecrease = 1e-3;
/** θ_p: λ's part along r̂ (the null direction b̂_N of a least-squares residual) is removed where that changes ‖r‖ by at most θ_p ‖r‖ */
export const gpuProjectChange = 1e-3;

/** the CG iterations dispatched per step by default (the `iterations` option) */
export const defaultGpuCgIterations = 64;

/** A CG kernel (gpu/dispatch.ts Kernel) with its bind group and the threads of a direct dispatch. */
interface CgKernel {
  spec: CgKernelSpec;
  kernel: Kernel;
  bindGroup: GPUBindGroup;
  threads: number;
}

export interface GpuCgStats {
  /** solves (solver steps) since creation */
  steps: number;
  /** CG iterations used, summed over those solves */
  iterations: number;
  /** solves that ended above the tolerance without a least-squares λ (the cap, a null direction, stagnation) */
  unconvergedSteps: number;
  /** solves that ended at a least-squares λ (b ∉ range(A): drifted redundant joints); counted converged */
  leastSquaresSteps: number;
  /** solves stopped before a step along a numerically null direction, or on stagnation (among the unconverged) */
  stoppedSteps: number;
}

export class GlobalGpuSolver extends JacobiGpuSolver implements Solver {
  override readonly id: string = 'global-gpu';
  readonly tolerance: number;
  private readonly cgBuffers = new Map<string, GPUBuffer>();
  private readonly cgKernels = new Map<string, CgKernel>();
  private stats: GpuCgStats = emptyGpuStats();
  /** the counters at the last resetTimings (cost() reports what came after) */
  private statsAtReset: GpuCgStats = emptyGpuStats();

  protected constructor(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext, tolerance: number) {
    // jacobi-gpu's rows (every equality joint type); its warm-start dispatch is encodeCgStart's own
    super(world, options, { applyWarmStart: false }, gpu);
    this.tolerance = tolerance;
  }

  /** `extra.tolerance`: the relative tolerance of the solve (default 1e-6); Jacobi's applyWarmStart does not apply. */
  static override async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext, extra: Partial<JacobiVariant> & { tolerance?: number } = {}): Promise<GlobalGpuSolver> {
    // `iterations` is the CG cap here: its own default (64), not the Jacobi solvers' 8
    const s = new GlobalGpuSolver(world, { iterations: defaultGpuCgIterations, ...options }, gpu, extra.tolerance ?? defaultGpuTolerance);
    await s.init();
    return s;
  }

  protected override async init(): Promise<void> {
    await super.init();
    const sizes = this.cgSizes();
    this.checkLimits(sizes);
    for (const [name, size] of Object.entries(sizes)) {
      this.cgBuffers.set(name, this.device.createBuffer({ label: name, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST }));
      this.bufferCreations++;
    }
    this.cgBuffers.set('cg_scalars', this.device.createBuffer({ label: 'cg_scalars', size: CG_SCALARS_BYTES, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST }));
    // dispatch arguments of the iteration kernels, written on the GPU (cg_init, cg_alpha, cg_beta)
    this.cgBuffers.set('cg_indirect', this.device.createBuffer({ label: 'cg_indirect', size: 48, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_DST }));
    const cg = this.device.createBuffer({ label: 'cg', size: CG_PARAMS_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.cgBuffers.set('cg', cg);
    this.bufferCreations += 3;
    this.writeCgParams();
    await this.buildCgPipelines();
  }

  /** The CG buffers whose size follows the rows (and the bodies), in bytes. */
  private cgSizes(): Record<string, number> {
    const rows = this.rowSolver.rows;
    const nb = Math.max(1, this.w.bodyCount), nr = Math.max(1, rows.count);
    const [gx, gy] = this.groupsFor(rows.blockCount);
    return {
      cg_rzs: 16 * nr,
      cg_pq: 8 * nr,
      cg_dmat: 32 * nr,
      cg_w: 32 * nb,
      cg_partials: 16 * Math.max(1, gx * gy),
    };
  }

  /** The cg uniform (struct CgParams in kernels.wgsl.ts), from the rows' layout now. */
  private writeCgParams(): void {
    const rows = this.rowSolver.rows;
    const [gx, gy] = this.groupsFor(rows.blockCount);
    const partials = Math.max(1, gx * gy);
    const { substeps, beta, dt } = this.options;
    const h = dt / substeps;
    const params = new ArrayBuffer(CG_PARAMS_BYTES);
    const u = new Uint32Array(params), f = new Float32Array(params);
    u[0] = rows.blockCount;
    u[1] = this.w.bodyCount;
    u[2] = this.rowWidth();
    u[3] = partials;
    f[4] = h;
    f[5] = beta / h;
    f[6] = this.tolerance * this.tolerance;
    f[7] = gpuLsTolerance * gpuLsTolerance;
    f[12] = gpuNullFloor * gpuNullFloor;
    u[13] = gpuStallLimit;
    f[14] = gpuStallDecrease;
    f[15] = gpuProjectChange;
    const bodyGroups = this.groupsFor(this.w.bodyCount);
    u.set([gx, gy, bodyGroups[0], bodyGroups[1]], 8);
    this.device.queue.writeBuffer(this.bufferOf('cg'), 0, params);
  }

  /**
   * A new rows' layout (joints added or removed): the CG buffers grown where it outgrew them (at double
   * the size, as growBuffer), the cg uniform written again, the bind groups made again where a buffer of
   * either set was recreated, the workgroup grids from the new counts. The solve's vectors are per step
   * (cg_start), so nothing of them is carried; λ is jacobi-gpu's row_solve, carried by key there.
   */
  protected override async layoutChanged(grew: boolean): Promise<void> {
    for (const [name, size] of Object.entries(this.cgSizes())) {
      const old = this.cgBuffers.get(name)!;
      if (old.size >= size) continue;
      const capacity = Math.max(size, 2 * old.size);
      this.checkLimits({ [name]: capacity });
      old.destroy();
      this.cgBuffers.set(name, this.device.createBuffer({ label: name, size: capacity, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST }));
      this.bufferCreations++;
      grew = true;
    }
    this.writeCgParams();
    for (const k of this.cgKernels.values()) {
      if (grew) k.bindGroup = this.cgBindGroup(k.spec, k.kernel);
      k.threads = this.cgThreads(k.spec);
    }
  }

  /** A buffer of this solver or of jacobi-gpu's set, by name. */
  private bufferOf(name: CgBufferName): GPUBuffer {
    const b = this.cgBuffers.get(name) ?? this.buffers.get(name as never);
    if (!b) throw new Error(`global-gpu: no buffer '${name}'`);
    return b;
  }

  private async buildCgPipelines(): Promise<void> {
    await buildKernels(this.device, this.id, () => {
      for (const spec of cgKernelSpecs()) {
        const kernel = Kernel.create(this.device, spec.name, cgKernelSource(spec));
        this.cgKernels.set(spec.name, { spec, kernel, bindGroup: this.cgBindGroup(spec, kernel), threads: this.cgThreads(spec) });
      }
    });
  }

  private cgBindGroup(spec: CgKernelSpec, kernel: Kernel): GPUBindGroup {
    return kernel.bind([this.bufferOf('cg'), ...spec.bindings.map((b) => this.bufferOf(b.name))]);
  }

  /** Threads of a direct dispatch: one workgroup for a 'single' kernel, else one per body or per block. */
  private cgThreads(spec: CgKernelSpec): number {
    return spec.over === 'single' ? 1 : spec.over === 'body' ? this.w.bodyCount : this.rowSolver.rows.blockCount;
  }

  /**
   * One dispatch of a CG kernel; `indirect`: with the workgroup counts of cg_indirect (none once the solve is
   * done). Nothing where the kernel has no threads (no blocks: cg_indirect's counts are then never written).
   */
  private cgDispatch(pass: GPUComputePassEncoder, name: string, indirect = false): void {
    const k = this.cgKernels.get(name)!;
    if (k.threads === 0) return;
    if (indirect) k.kernel.dispatchIndirect(pass, k.bindGroup, this.bufferOf('cg_indirect'), cgIndirectOffset[k.spec.over]);
    else k.kernel.dispatch(pass, k.bindGroup, k.threads);
  }

  /** Stages 1–3 and the warm start (jacobi-gpu's row kernels), then the solve's start: D, r = b − Aλ⁰, ξ, λ₀ = ξ λ⁰, r₀, z₀. */
  private encodeCgStart(at: StagePass): void {
    this.encodeSolveStart(at); // stages 1–3: C, J, biasRate, γ, D⁻¹ = (A_bb + γ)⁻¹ per block, λ⁰ = f λ_prev
    const pass = at('solve start');
    this.dispatch(pass, 'update_velocities'); // ΔV = h M⁻¹ Jᵀ λ⁰ (R1)
    this.cgDispatch(pass, 'cg_block_matrix');
    this.cgDispatch(pass, 'cg_start');
    this.cgDispatch(pass, 'cg_init');
    this.cgDispatch(pass, 'cg_start_d');
  }

  /** One iteration: the tests on r_k and β (encodeCheck), p and q = A p, α, then λ, r and z; dispatched indirectly, so nothing runs once the solve is done. */
  protected override encodeIteration(pass: GPUComputePassEncoder): void {
    this.encodeCheck(pass);
    this.cgDispatch(pass, 'cr_update_pq', true);
    this.cgDispatch(pass, 'cr_alpha'); // (the one-workgroup kernels write cg_indirect: dispatched directly)
    this.cgDispatch(pass, 'cr_update_xr', true);
  }

  /** The tests on the current residual (tolerance, least squares, stagnation) and β: s = A z, then cr_beta. */
  private encodeCheck(pass: GPUComputePassEncoder): void {
    this.cgDispatch(pass, 'cg_apply_jt', true);
    this.cgDispatch(pass, 'cg_apply_j', true);
    this.cgDispatch(pass, 'cr_beta');
  }

  /** The counters, then the impulses ΔV = h M⁻¹ Jᵀ λ (R1), and stage 5. */
  private encodeCgEnd(at: StagePass): void {
    let pass = at('solve end');
    this.encodeCheck(pass); // the last iterate's tests
    // a least-squares λ: its part along r̂ ≈ b̂_N (null(Â)) removed
    this.cgDispatch(pass, 'cr_project_sums');
    this.cgDispatch(pass, 'cr_project_c');
    this.cgDispatch(pass, 'cr_project');
    this.cgDispatch(pass, 'cg_finish');
    this.dispatch(pass, 'update_velocities');
    pass = at('integrate positions');
    this.dispatch(pass, 'compute_positions');
  }

  override get stageNames(): readonly string[] {
    return ['integrate velocities', 'prepare joints', 'solve start', 'solve', 'solve end', 'integrate positions'];
  }

  /** global-gpu solves the equalities A λ = b: no contacts (the registry refuses them, with the reason). */
  protected override takesContacts(): boolean {
    return false;
  }

  protected override encodeFrame(at: StagePass): void {
    const { substeps, iterations } = this.options;
    for (let s = 0; s < substeps; s++) {
      this.encodeCgStart(at);
      const pass = at('solve');
      for (let k = 0; k < iterations; k++) this.encodeIteration(pass);
      this.encodeCgEnd(at);
    }
  }

  /**
   * One frame, as step(1), recording the true residual ‖b − Aλᵏ‖₂ (f32, jacobi-gpu's
   * compute_residual after update_velocities puts ΔV = h M⁻¹ Jᵀ λᵏ; per joint type, as jacobi-gpu on rows) at the start and after
   * each dispatched CG iteration of the first substep (constant once converged). Not timed.
   */
  override async stepRecordingResiduals(): Promise<ResidualCurve> {
    await this.beforeStep();
    const { substeps, iterations } = this.options;
    const residual = this.bufferOf('residual' as CgBufferName);
    const slot = residual.size;
    const readback = this.device.createBuffer({ size: slot * (iterations + 1), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.device.createCommandEncoder();
    const record = (k: number, body: (pass: GPUComputePassEncoder) => void) => {
      const pass = encoder.beginComputePass();
      body(pass);
      this.dispatch(pass, 'update_velocities'); // ΔV from λᵏ: CG's iterations do not read ΔV
      this.dispatch(pass, 'compute_residual');
      pass.end();
      encoder.copyBufferToBuffer(residual, 0, readback, k * slot, slot);
    };
    record(0, (pass) => this.encodeCgStart(() => pass));
    for (let k = 0; k < iterations; k++) record(k + 1, (pass) => this.encodeIteration(pass));
    const pass = encoder.beginComputePass();
    this.encodeCgEnd(() => pass);
    for (let s = 1; s < substeps; s++) {
      this.encodeCgStart(() => pass);
      for (let k = 0; k < iterations; k++) this.encodeIteration(pass);
      this.encodeCgEnd(() => pass);
    }
    pass.end();
    const channels = await this.rowResidualChannels(encoder, readback, slot, iterations + 1);
    this.frame++;
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  /** Reads the GPU's counters (one 96-byte buffer); also done with every snapshot. */
  async readCgStats(): Promise<GpuCgStats> {
    const [data] = await readBuffers(this.device, [this.bufferOf('cg_scalars')]);
    const u = new Uint32Array(data);
    this.stats = {
      steps: u[cgCounter.steps], iterations: u[cgCounter.totalIterations], unconvergedSteps: u[cgCounter.unconverged],
      leastSquaresSteps: u[cgCounter.totalLeastSquares], stoppedSteps: u[cgCounter.totalStopped],
    };
    return { ...this.stats };
  }

  /** The counters as of the last snapshot or readCgStats. */
  cgStats(): GpuCgStats {
    return { ...this.stats };
  }

  override async snapshot(): Promise<Snapshot> {
    const snap = await super.snapshot();
    await this.readCgStats();
    return snap;
  }

  override resetTimings(): void {
    super.resetTimings();
    this.statsAtReset = { ...this.stats };
  }

  /**
   * The iterations used per frame since the last resetTimings (as of the last snapshot; the
   * GPU counts them), and the row solves (N_r per iteration: one application of A) and bytes
   * they moved; before any snapshot, the work of `iterations` iterations. Dispatches: as recorded
   * (the iterations after the solve is done are recorded but run no workgroups). The solves (one per
   * step) and those that ended above the tolerance without a least-squares λ, as of the last snapshot
   * (none before one).
   */
  override cost(): SolverCost {
    const { substeps } = this.options;
    const steps = this.stats.steps - this.statsAtReset.steps;
    const used = this.stats.iterations - this.statsAtReset.iterations;
    const iterations = steps > 0 ? used / steps : this.options.iterations;
    // per step (encodeFrame): stages 1–3 (jacobi-gpu's: 2 + its stage-3 dispatches) and 5 to start (update_velocities,
    // cg_block_matrix, cg_start, cg_init, cg_start_d), 6 per iteration, 9 to end (the last tests: cg_apply_jt, cg_apply_j,
    // cr_beta; cr_project_sums, cr_project_c, cr_project; cg_finish, update_velocities, compute_positions)
    const perStep = 2 + this.stage3Dispatches() + 5 + 6 * this.options.iterations + 9;
    const rows = this.rowSolver.rows;
    return {
      rowSolvesPerFrame: rows.count * iterations * substeps,
      dispatchesPerFrame: perStep * substeps,
      iterationBytesPerFrame: cgIterationBytes(this.w.bodyCount, rows.blockCount, rows.count, 2 * rows.count) * iterations * substeps,
      ...(steps > 0 ? { cgIterationsPerFrame: (used / steps) * substeps } : {}),
      ...(steps > 0 ? { solves: steps, unconvergedSolves: this.stats.unconvergedSteps - this.statsAtReset.unconvergedSteps } : {}),
    };
  }

  override destroy(): void {
    for (const b of this.cgBuffers.values()) b.destroy();
    super.destroy();
  }
}

/**
 * Bytes one iteration moves at the f32 layout of kernels.wgsl.ts, each element once (an upper figure: a rigid
 * point joint's rows read its lever arms, 32 bytes per block, instead of 48 per row of J):
 *   cg_apply_jt, per body: body_rows 8, inverse_mass 64, cg_w 32 written = 104; per (body, row) entry
 *     (`entries`, 2 per row): row_entries 4, row_jacobian 32, cg_rzs 16 = 52
 *   cg_apply_j, per block: row_block 16, cg_w 4×16 = 80; per row: row_jacobian 48, row_solve 16 + 32 (γ, D⁻¹ row),
 *     cg_rzs 16 + 16 = 128
 *   cr_update_pq, per block: row_block 16; per row: cg_rzs 16, cg_pq 8 + 8, row_solve 32, cg_dmat 32 = 96
 *   cr_update_xr, per block: row_block 16; per row: cg_pq 8, row_solve 16 + 16 + 32, cg_rzs 16 + 16 = 104
 *   (partials and the one-workgroup kernels: 16 per 64 blocks, left out)
 */
export function cgIterationBytes(bodyCount: number, blockCount: number, rowCount: number, entries: number): number {
  return 104 * bodyCount + 52 * entries + (80 + 16 + 16) * blockCount + (128 + 96 + 104) * rowCount;
}

function emptyGpuStats(): GpuCgStats {
  return { steps: 0, iterations: 0, unconvergedSteps: 0, leastSquaresSteps: 0, stoppedSteps: 0 };
}
