/**
 * jacobi-gpu — host side of the GPU Jacobi solver, on constraint rows: every joint type (point,
 * distance with its rope/strut rows, hinge with its limit rows, fixed) and every shape. The row
 * kernels and their buffer legend are rows/rows.wgsl.ts (shared with gs-gpu); the body stages and
 * the body buffers are kernels.wgsl.ts; the f64 reference with the same stages is cpu.ts.
 *
 * One frame = one compute pass (GPU timestamps around it where the adapter has them), holding
 * `substeps` solver steps of h = dt / substeps:
 *   1. compute_inertia → 2. compute_free_velocity
 *   → 3. compute_violation_and_jacobian_and_delassus = evaluate_point_rigid, evaluate_<type> (one
 *        dispatch per constraint type present) + prepare_point_blocks, prepare_blocks (biasRate, γ,
 *        (A_bb + γ)⁻¹ per block, warm start λ ← f λ) [+ prepare_position_blocks where the joints' masses
 *        split (splitsMass): the position pass's own inverses, block-solver.ts positionShare; the point
 *        blocks' in prepare_point_blocks]
 *   → [update_velocities: apply the warm start]
 *   → 4. N × (update_multipliers_point, update_multipliers, update_velocities)   (37), (34)
 *   → [split impulse, on a contact scene (splitsImpulses): ⌈N/2⌉ × (solve_positions_point, solve_positions,
 *        update_pseudo_velocities) on the pseudo-velocities, jacobi-cpu's solvePositions in the Jacobi order;
 *        rounded up to odd where the joints' masses split (RowBlockSolver.ownPositionSweeps)]
 *   → 5. compute_positions (with the split: compute_positions_split, x += h (v + P))
 * A rigid point joint (the Jacobi text's 3×3 block) takes the *_point kernels, the fast path; every
 * other block the general ones (rows/rows.wgsl.ts). A kernel with nothing to do is not dispatched.
 * The rows' layout (bodies, bounds, compliance, blocks, the body → row CSR) comes from the CPU
 * RowBlockSolver.layout() over the same joints and is uploaded at creation; per step everything is
 * computed on the GPU. Joints added or removed between steps (addConstraint, removeConstraint: a
 * JointSet, as the CPU solvers) are laid out again on the CPU before the next step (relayoutRows)
 * and uploaded into buffers kept by capacity (GpuSolverBase.growBuffer: recreated, at double the
 * size, only when the new layout does not fit; the bind groups are made again then). Many frames
 * are recorded into one submission; nothing is read back until a snapshot is asked for (or, at a
 * change of joints, λ and the pose once). Dispatches in one pass run in order, each seeing the
 * previous one's writes (WebGPU orders storage writes between dispatches).
 */
import type { WorldDesc } from '../../model/world.js';
import { compileWorld, type CompiledWorld } from '../../model/compiled.js';
import { JointSet } from '../../rows/joint-set.js';
import { JointEditingGpuSolver } from '../gpu-joints.js';
import type { GpuContext } from '../../gpu/device.js';
import {
  type Solver,
  type SolverOptions,
  type SolverCost,
  type SolverContactStats,
  type ResidualCurve,
  defaultSolverOptions,
} from '../solver.js';
import { buildKernels, type BufferBinding } from '../../gpu/kernels.js';
import { Kernel } from '../../gpu/dispatch.js';
import { packBodyState, writeMat3Columns, type StagePass } from '../../gpu/frames.js';
import { RESIDUAL_QUANTITY, CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL, type JacobiVariant } from './cpu.js';
import { anyAnisotropic, dampingFactor, freeBodyFlags } from '../../rigid/body.js';
import { kernelSource, rowKernelSpecs, type BufferName, type KernelSpec } from './kernels.wgsl.js';
import { RowBlockSolver } from '../../rows/block-solver.js';
import { JointKind, jointKindNames } from '../../model/joint-data.js';
import { F32_MAX, JOINT_STRIDE, MAX_GPU_BLOCK_ROWS, hasEvaluateKernel, jacobiPositionKernels, writeJointRecord, type RowKernelSpec } from '../../rows/rows.wgsl.js';
import { GpuContacts, contactPairCapacity, type ContactMode } from '../../contacts/gpu-contacts.js';
import { baumgarteContacts, type ContactRule } from '../../rows/block-solver.js';
import { sceneHasContacts } from '../solver.js';
import { SolverFailure } from '../../model/failure.js';

/** A row or body kernel (gpu/dispatch.ts Kernel) with its bind groups and thread counts. */
interface RowKernel {
  spec: KernelSpec;
  kernel: Kernel;
  /** one bind group and thread count per colour for 'colour' kernels, else one */
  bindGroups: GPUBindGroup[];
  threads: number[];
}

/** Bytes between the colour ranges in the 'colour' uniform buffer (minUniformBufferOffsetAlignment ≤ 256). */
export const COLOUR_SLOT = 256;

export class JacobiGpuSolver extends JointEditingGpuSolver<BufferName> implements Solver {
  readonly id: string = 'jacobi-gpu';
  readonly variant: JacobiVariant;
  readonly bodyCount: number;
  /** the world as given (its bodies' shapes and materials: the contact stages) */
  protected readonly world: WorldDesc;

  protected readonly w: CompiledWorld;
  /** the joints as they are now: the world's, then those added and less those removed between steps */
  readonly joints: JointSet;
  /** joints added since the last step, by id: compiled again at the GPU's pose before it (syncJoints) */
  /**
   * gs-gpu: per colour, swept one after the other, its point blocks block_list[start, start + count)
   * ('colour_point' kernels) and its other joints' first blocks [generalStart, generalStart + generalCount)
   * ('colour' kernels); none for Jacobi
   */
  protected colourRanges: { start: number; count: number; generalStart: number; generalCount: number }[] = [];
  /** gs-gpu: each colour's constraint slots, in the rows' order, from which colourRanges is built */
  protected colourJoints: number[][] = [];
  /** prepare_list and block_list (rows/rows.wgsl.ts), and how many blocks are rigid point joints' */
  private prepareList = new Uint32Array(0);
  private blockList = new Uint32Array(0);
  private pointBlockCount = 0;
  /** per constraint: 1 for a rigid point joint (the point fast path) */
  private rigidPoint = new Uint8Array(0);
  private readonly kernels = new Map<string, RowKernel>();
  /** the rows' layout: the CPU RowBlockSolver over the same joints, laid out again when they change */
  protected readonly rowSolver: RowBlockSolver;
  /**
   * jacobi-gpu's contacts (contacts/gpu-contacts.ts: the contact solver's Jacobi variant in WGSL,
   * on the GPU collision pipeline), or null: a world without collisions, or a subclass that takes none
   */
  protected contacts: GpuContacts | null = null;
  /** sweeps made in this substep (the contacts' points walk backwards on odd ones, as jacobi-cpu's) */
  private contactSweep = 0;
  /** joints of each JointKind, and the first record of each in the 'joint' buffer */
  private jointCount = [0, 0, 0, 0];
  private jointStart = [0, 0, 0, 0];

  protected constructor(world: WorldDesc, options: Partial<SolverOptions>, variant: Partial<JacobiVariant>, gpu: GpuContext) {
    super({ ...defaultSolverOptions, ...options }, gpu);
    this.world = world;
    this.variant = { applyWarmStart: true, ...variant };
    this.w = compileWorld(world);
    this.bodyCount = this.w.worldBodyCount;
    this.joints = new JointSet(this.w);
    this.checkJointKinds();
    this.rowSolver = new RowBlockSolver(this.joints, this.w.bodyCount, this.w.inverseMass, this.options.compliance);
    this.checkBlocks();
  }

  get constraintCount(): number {
    return this.joints.constraintCount;
  }

  private checkJointKinds(): void {
    const j = this.joints;
    for (let ic = 0; ic < j.constraintCount; ic++)
      if (!hasEvaluateKernel(j.kind[ic])) throw new Error(`${this.id}: constraints[${ic}]: no WGSL evaluate kernel for joint type ${jointKindNames[j.kind[ic]] ?? j.kind[ic]} (rows/rows.wgsl.ts)`);
  }

  private checkBlocks(): void {
    const largest = this.rowSolver.rows.largestBlock();
    if (largest > MAX_GPU_BLOCK_ROWS) throw new Error(`${this.id}: a block of ${largest} rows; the GPU inverts blocks of at most ${MAX_GPU_BLOCK_ROWS}`);
  }

  /**
   * The joints changed: lay the rows out again and upload them. λ follows each row's key: the
   * GPU's λ (row_solve) is read back once here, at a change only, together with the pose where a
   * joint was added (its starting pose), and carried by RowBlockSolver.layout as on the CPU; a
   * readback per change is cheaper than keeping a CPU copy of λ in step with the GPU every step.
   */
  protected async syncJoints(): Promise<void> {
    const rs = this.rowSolver;
    const oldRows = rs.rows.count;
    const names: BufferName[] = [];
    if (oldRows > 0) names.push('row_solve');
    if (this.pendingPose.size > 0) names.push('pose');
    const data = names.length ? await this.read(names) : new Map<BufferName, ArrayBuffer>();
    const solve = data.get('row_solve');
    if (solve) {
      const f = new Float32Array(solve);
      for (let r = 0; r < oldRows; r++) rs.rows.lambda[r] = f[12 * r + 2]; // row_solve[3r].z (rows.wgsl.ts legend)
    }
    const pose = data.get('pose');
    if (pose) this.compilePendingJoints(pose);
    this.checkJointKinds();
    this.relayoutRows();
    this.checkBlocks();
    const colours = this.colourRanges.length;
    this.buildLists();
    // the buffers whose size follows the rows: grown where the layout outgrew them
    const sizes = this.sizes();
    let grew = colours !== this.colourRanges.length;
    for (const name of LAYOUT_BUFFERS) if (this.growBuffer(name, sizes[name], name === 'colour')) grew = true;
    const upload: Partial<Record<BufferName, ArrayBuffer>> = {};
    this.uploadRows(upload);
    upload.colour = this.colourData().buffer;
    upload.midpoint_offset = this.midpointData().buffer; // free flags of the new joints, offsets 0 (RigidBodyCore.markJointed)
    // λ carried by key (layout), the rest of row_solve is written by prepare_blocks every step
    const lambda = new Float32Array(12 * Math.max(1, rs.rows.count));
    for (let r = 0; r < rs.rows.count; r++) lambda[12 * r + 2] = rs.rows.lambda[r];
    upload.row_solve = lambda.buffer;
    for (const [name, d] of Object.entries(upload) as [BufferName, ArrayBuffer][]) this.device.queue.writeBuffer(this.buffers.get(name)!, 0, d);
    this.writeParams();
    this.bindKernels(grew);
    this.contacts?.setJoints(this.joints.ib0, this.joints.ib1, this.joints.constraintCount);
    await this.layoutChanged(grew);
  }

  /** Lays the rows out again over the joints (jacobi-cpu's relayout; gs-gpu: coloured, as gs-cpu's). */
  protected relayoutRows(): void {
    this.rowSolver.layout();
  }

  /** After a new layout was uploaded (global-gpu: its own buffers); `grew`: some buffer was recreated. */
  protected async layoutChanged(_grew: boolean): Promise<void> {}

  static async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext, variant: Partial<JacobiVariant> = {}): Promise<JacobiGpuSolver> {
    const s = new JacobiGpuSolver(world, options, variant, gpu);
    await s.init();
    return s;
  }

  protected async init(): Promise<void> {
    this.split = this.splitsImpulses();
    this.buildLists();
    this.checkLimits(this.sizes());
    this.upload();
    await this.buildPipelines();
    if (this.takesContacts() && sceneHasContacts(this.world) && this.world.bodies.length >= 2) await this.createContacts();
  }

  /**
   * Whether the rigid joints' Baumgarte feedback is the split impulse's position pass (rows/rows.wgsl.ts
   * solve_positions*, compute_positions_split) rather than a bias in the warm-started velocity solve: where
   * this solver takes contacts (a contact scene), as its CPU twin (jacobi/cpu.ts splitsImpulses; gs-gpu: gs-cpu's
   * contact solver, gs/contacts.ts). Decided once, at creation (init), before the kernels are built.
   */
  protected splitsImpulses(): boolean {
    return this.takesContacts() && sceneHasContacts(this.world) && this.world.bodies.length >= 2;
  }
  /** whether this solver splits (splitsImpulses, at init) */
  protected split = false;
  /**
   * Whether prepare_* invert the joints' split effective masses (rows/block-solver.ts massShare, the factor
   * s_i = (n_i + 1)/2 that the contacts' cj_share writes into inverse_mass per frame) for the velocity solve, and
   * for the position pass a second inverse per block by its own factor (block-solver.ts positionShare, s^p_i, from
   * cj_share too) in row_position_inverse, which solve_positions* read: where the joints split their
   * impulses and the contacts take the mass-split Jacobi sweep (jacobi-gpu on a contact scene, as jacobi-cpu;
   * not gs-gpu, whose sweeps are sequential).
   */
  protected splitsMass(): boolean {
    return this.split && this.contactMode() === 'jacobi';
  }

  /** Whether this solver solves contacts on a world with collisions (jacobi-gpu; its subclasses do not yet). */
  protected takesContacts(): boolean {
    return true;
  }

  /**
   * The contact stages (contacts/gpu-contacts.ts) over this solver's body buffers: jacobi-cpu's
   * rule (Baumgarte β with the 5 mm slop and the 3 m/s push-out cap), the frame's dt for the speculative
   * margins, and the pair slots of contactPairCapacity (at least CONTACT_PAIRS_PER_BODY per body).
   */
  protected async createContacts(): Promise<void> {
    const { dt, substeps, warmStart } = this.options;
    const b = this.buffers;
    const n = this.world.bodies.length;
    const fixed = Array.from({ length: n }, (_, i) => this.w.inverseMass[i] === 0);
    const capacity = contactPairCapacity(this.world.bodies, this.w, dt);
    const c = await GpuContacts.create(this.device, this.w.bodyCount, this.world.bodies, fixed, capacity, {
      pose: b.get('pose')!,
      velocity: b.get('velocity')!,
      velocity_delta: b.get('velocity_delta')!,
      inverse_mass: b.get('inverse_mass')!,
    }, this.contactMode());
    const g = this.w.gravity;
    c.configure(dt / substeps, dt, g, this.gpuContactRule(dt / substeps), warmStart);
    c.setJoints(this.joints.ib0, this.joints.ib1, this.joints.constraintCount);
    this.contacts = c;
  }

  /** How the contacts are solved: jacobi-gpu's mass-split Jacobi sweep (softstep-gpu: 'sequential'). */
  protected contactMode(): ContactMode {
    return 'jacobi';
  }

  /** The contact rule for substep h: jacobi-cpu's (Baumgarte β with the 5 mm slop, push-out at most 3 m/s). */
  protected gpuContactRule(_h: number): ContactRule {
    return baumgarteContacts(this.options.beta, this.options.restitutionThreshold);
  }

  /** Read with the pose and velocities (one readback): with contacts, a frame that found more pairs than the slots hold is an error. */
  protected override snapshotExtras(): { buffers: GPUBuffer[]; take(data: ArrayBuffer[]): void } | null {
    const c = this.contacts;
    if (!c) return null;
    return {
      buffers: c.overflowBuffers(),
      take: (data) => {
        const lost = c.overflowFrom(data);
        if (lost > 0) throw new SolverFailure(`${this.id}: the broad phase found ${lost} pairs more than its ${c.collision.broad.pairCapacity} slots (sized from the start pose: contactPairCapacity): contacts were lost; the scene packed denser than ${this.id}'s pair capacity`);
      },
    };
  }

  /** The contacts' figures read with the last snapshot (pairs, manifolds, points; softstep-gpu: its colours), or null. */
  contactStats(): SolverContactStats | null {
    return this.contacts?.stats ?? null;
  }

  /** The kernels this solver builds: the body stages of kernels.wgsl.ts and the row kernels of rows/rows.wgsl.ts. */
  protected kernelList(): KernelSpec[] {
    const extra = [...this.extraRowKernels(), ...(this.split ? this.positionKernels() : [])];
    return rowKernelSpecs(extra, anyAnisotropic(this.w.inverseMass, this.w.inverseInertiaLocal, this.w.bodyCount), this.split, this.splitsMass());
  }

  /** The split impulse's position-pass kernels (rows/rows.wgsl.ts): jacobi-gpu's Jacobi sweep (gs-gpu: its colours'). */
  protected positionKernels(): RowKernelSpec[] {
    return jacobiPositionKernels(this.splitsMass());
  }

  /**
   * The split impulse's position pass (rows/rows.wgsl.ts; jacobi-cpu's solvePositions with order 'jacobi'):
   * ⌈N/2⌉ Jacobi sweeps on the pseudo-velocities P, each every block's update from the same P, then the gather.
   */
  protected encodePositionPass(pass: GPUComputePassEncoder): void {
    if (!this.split) return;
    // with the joints' masses split the pass has its own blocks and an odd number of sweeps (jacobi-cpu's rule)
    const sweeps = this.splitsMass() ? RowBlockSolver.ownPositionSweeps(this.options.iterations) : RowBlockSolver.positionSweeps(this.options.iterations);
    for (let k = 0; k < sweeps; k++) {
      this.dispatch(pass, 'solve_positions_point');
      this.dispatch(pass, 'solve_positions');
      this.dispatch(pass, 'update_pseudo_velocities');
    }
  }

  /** Stage 5's kernel: compute_positions, or with the split compute_positions_split (x += h (v + P)). */
  protected positionsKernel(): string {
    return this.split ? 'compute_positions_split' : 'compute_positions';
  }

  /** Row kernels a subclass adds (gs-gpu: solve_colour). */
  protected extraRowKernels(): RowKernelSpec[] {
    return [];
  }

  /** Buffer sizes in bytes, from the world's counts (rows/rows.wgsl.ts legend for the row buffers). */
  private sizes(): Record<BufferName, number> {
    const nb = Math.max(1, this.w.bodyCount), nc = Math.max(1, this.joints.constraintCount); // no zero-size bindings
    const rows = this.rowSolver.rows;
    const nr = Math.max(1, rows.count), nk = Math.max(1, rows.blockCount);
    return {
      params: PARAMS_BYTES,
      pose: 32 * nb,
      velocity: 32 * nb,
      velocity_delta: 32 * nb,
      inverse_mass: 64 * nb,
      inverse_inertia_local: 48 * nb,
      colour: COLOUR_SLOT * Math.max(1, this.colourRanges.length),
      midpoint_offset: 16 * nb, // (g, free): g = 0 until a free non-isotropic body's gyroscopic step writes it
      pseudo_velocity: this.split ? 32 * nb : 16, // the split impulse's P (only where it splits)
      row_jacobian: 48 * nr,
      row_error: 8 * nr,
      row_params: 16 * nr,
      row_solve: 48 * nr,
      point_arm: 32 * nr,
      row_block: 16 * nk,
      prepare_list: 4 * nk,
      block_list: 4 * nk,
      body_rows: 4 * (2 * nb + 1),
      row_entries: 4 * Math.max(1, 2 * rows.count),
      joint: 16 * JOINT_STRIDE * nc,
      residual: 4 * nr,
      row_pseudo: this.split ? 4 * nr : 4, // λ_p of the position pass (only where it splits)
      row_position_inverse: this.splitsMass() ? 32 * nr : 16, // the position pass's own block inverses (only where the joints' masses split)
    };
  }

  private upload(): void {
    const w = this.w;
    const nb = w.bodyCount;
    const sizes = this.sizes();
    const data: Partial<Record<BufferName, ArrayBuffer>> = {};

    const { pose, velocity } = packBodyState(w);
    const invMass = new Float32Array(16 * nb);
    const invInertiaLocal = new Float32Array(12 * nb);
    for (let i = 0; i < nb; i++) {
      invMass[16 * i + 12] = w.inverseMass[i];
      invMass[16 * i + 13] = 1; // s_i, the joints' mass-splitting factor (cj_share writes it per frame where it splits)
      invMass[16 * i + 14] = 1; // s^p_i, the position pass's (the same)
      writeMat3Columns(w.inverseInertiaLocal, 9 * i, invInertiaLocal, 12 * i);
    }
    data.pose = pose.buffer;
    data.velocity = velocity.buffer;
    data.inverse_mass = invMass.buffer;
    data.inverse_inertia_local = invInertiaLocal.buffer;
    data.midpoint_offset = this.midpointData().buffer;
    data.colour = this.colourData().buffer;
    this.uploadRows(data);
    this.createBuffers(sizes, data, ['params', 'colour']);
    this.writeParams();
  }

  /** (g = 0, free) per body: free = 1 where no joint touches the body (rigid/body.ts, E4). */
  private midpointData(): Float32Array<ArrayBuffer> {
    const nb = this.w.bodyCount, j = this.joints;
    const free = freeBodyFlags(nb, j.ib0, j.ib1, j.constraintCount);
    return Float32Array.from({ length: 4 * nb }, (_, k) => (k % 4 === 3 ? free[k >> 2] : 0));
  }

  /** The 'colour' uniform: per colour at COLOUR_SLOT · c its (start, count, generalStart, generalCount). */
  private colourData(): Uint32Array<ArrayBuffer> {
    const colour = new Uint32Array((COLOUR_SLOT / 4) * Math.max(1, this.colourRanges.length));
    this.colourRanges.forEach((r, c) => colour.set([r.start, r.count, r.generalStart, r.generalCount], (COLOUR_SLOT / 4) * c));
    return colour;
  }

  /**
   * The row buffers (rows/rows.wgsl.ts legend) from the CPU layout: rows' bounds and compliance,
   * blocks, the body → row CSR, the joints grouped by type; λ = 0, J, C and the block inverses
   * are written by the kernels every step.
   */
  private uploadRows(data: Partial<Record<BufferName, ArrayBuffer>>): void {
    const w = this.w, j = this.joints;
    const rs = this.rowSolver;
    const rows = rs.rows;
    const nc = j.constraintCount;
    const f32 = (x: number) => (x === Infinity ? F32_MAX : x === -Infinity ? -F32_MAX : x);
    const params = new Float32Array(4 * Math.max(1, rows.count));
    for (let r = 0; r < rows.count; r++) params.set([f32(rows.lower[r]), f32(rows.upper[r]), rows.compliance[r], 0], 4 * r);
    data.row_params = params.buffer;
    // per block: first row, meta = n | plain << 4 | (blocks of its joint, at its first block) << 8, bodies
    const blocks = new Uint32Array(4 * Math.max(1, rows.blockCount));
    for (let b = 0; b < rows.blockCount; b++) {
      const r0 = rows.blockStart[b], n = rows.blockStart[b + 1] - r0;
      let plain = 1;
      for (let r = r0; r < r0 + n; r++) if (rows.lower[r] !== -Infinity || rows.upper[r] !== Infinity || rows.compliance[r] !== 0) plain = 0;
      blocks.set([r0, n | (plain << 4), rows.bodyA[r0], rows.bodyB[r0]], 4 * b);
    }
    for (let ic = 0; ic < nc; ic++) {
      const first = rs.constraintBlock[ic];
      const count = rs.constraintBlockEnd[ic] - first;
      if (count > 0) blocks[4 * first + 1] |= (count << 8) | (this.rigidPoint[ic] << 5);
    }
    data.row_block = blocks.buffer;
    data.prepare_list = padded(this.prepareList).buffer;
    data.block_list = padded(this.blockList).buffer;
    // the body → row CSR (rows.ts rowConnectivity's, built here in the GPU's entry form): a rigid point
    // joint's three rows one entry r0 << 2 | 2 | side, every other row r << 2 | side; per body its point
    // entries from bodyRows[2i], its others from bodyRows[2i + 1]; bodies of zero inverse mass get none
    const pointFirst = new Uint8Array(rows.count); // 1 at a point block's first row, 2 at its others
    for (let k = 0; k < this.pointBlockCount; k++) pointFirst.set([1, 2, 2], rows.blockStart[this.prepareList[k]]);
    const nb = w.bodyCount;
    // a counting sort into typed arrays (no per-body JS arrays: the host side stays off the JS heap at
    // 10M bodies): slot 2i + kind counts body i's entries of that kind, its prefix sum is bodyRows,
    // and a second pass fills the entries in row order within each slot
    const bodyRows = new Uint32Array(2 * nb + 1);
    const eachEntry = (visit: (slot: number, tag: number) => void): void => {
      for (let r = 0; r < rows.count; r++) {
        if (pointFirst[r] === 2) continue;
        const kind = pointFirst[r] === 1 ? 0 : 1;
        const tag = (r << 2) | (kind === 0 ? 2 : 0);
        if (w.inverseMass[rows.bodyA[r]] > 0) visit(2 * rows.bodyA[r] + kind, tag);
        if (w.inverseMass[rows.bodyB[r]] > 0) visit(2 * rows.bodyB[r] + kind, tag | 1);
      }
    };
    eachEntry((slot) => bodyRows[slot + 1]++);
    for (let s = 0; s < 2 * nb; s++) bodyRows[s + 1] += bodyRows[s];
    const entries = new Uint32Array(bodyRows[2 * nb]);
    const fillAt = bodyRows.slice(0, 2 * nb);
    eachEntry((slot, tag) => (entries[fillAt[slot]++] = tag));
    data.body_rows = bodyRows.buffer;
    data.row_entries = padded(entries).buffer;
    // the joints grouped by type, each JOINT_STRIDE vec4f (rows.wgsl.ts legend)
    const record = new Float32Array(4 * JOINT_STRIDE * Math.max(1, nc));
    this.jointCount = [0, 0, 0, 0];
    for (let ic = 0; ic < nc; ic++) this.jointCount[j.kind[ic]]++;
    this.jointStart = [0, 0, 0, 0];
    for (let k = 1; k < 4; k++) this.jointStart[k] = this.jointStart[k - 1] + this.jointCount[k - 1];
    const fill = this.jointStart.slice();
    // the rigid point joints first among the point joints (evaluate_point_rigid), then the soft ones
    for (const rigid of [1, 0])
      for (let ic = 0; ic < nc; ic++) if (this.rigidPoint[ic] === rigid) writeJointRecord(j, rs.rowStart[ic], ic, record, 4 * JOINT_STRIDE * fill[j.kind[ic]]++);
    data.joint = record.buffer;
  }

  /**
   * prepare_list and block_list (rows/rows.wgsl.ts legend): the blocks of rigid point joints (a point
   * joint's one block, no compliance: the point fast path), then the others; gs-gpu's block_list colour
   * by colour (colourJoints), the point joints' blocks, then the first block of every other joint,
   * with colourRanges pointing at both.
   */
  private buildLists(): void {
    const rs = this.rowSolver;
    const rows = rs.rows;
    const j = this.joints;
    const nc = j.constraintCount;
    const pointJoint = (ic: number) =>
      j.kind[ic] === JointKind.point && rs.constraintBlockEnd[ic] - rs.constraintBlock[ic] === 1 && rows.compliance[rows.blockStart[rs.constraintBlock[ic]]] === 0;
    this.rigidPoint = Uint8Array.from({ length: nc }, (_, ic) => (pointJoint(ic) ? 1 : 0));
    let pointCount = 0, generalCount = 0;
    for (let ic = 0; ic < nc; ic++)
      if (this.rigidPoint[ic]) pointCount++;
      else generalCount += rs.constraintBlockEnd[ic] - rs.constraintBlock[ic];
    // the rigid point joints' blocks, then every block of the others (typed, filled in place)
    this.prepareList = new Uint32Array(pointCount + generalCount);
    let atPoint = 0, atGeneral = pointCount;
    for (let ic = 0; ic < nc; ic++) {
      if (this.rigidPoint[ic]) this.prepareList[atPoint++] = rs.constraintBlock[ic];
      else for (let b = rs.constraintBlock[ic]; b < rs.constraintBlockEnd[ic]; b++) this.prepareList[atGeneral++] = b;
    }
    this.pointBlockCount = pointCount;
    if (this.colourJoints.length === 0) {
      this.blockList = this.prepareList;
      return;
    }
    const list: number[] = [];
    this.colourRanges = this.colourJoints.map((joints) => {
      const pointStart = list.length;
      for (const ic of joints) if (pointJoint(ic)) list.push(rs.constraintBlock[ic]);
      const generalStart = list.length;
      for (const ic of joints) if (!pointJoint(ic) && rs.constraintBlockEnd[ic] > rs.constraintBlock[ic]) list.push(rs.constraintBlock[ic]);
      return { start: pointStart, count: generalStart - pointStart, generalStart, generalCount: list.length - generalStart };
    });
    this.blockList = Uint32Array.from(list);
  }

  /** Rigid point joints (the point fast path; each one block). */
  protected pointJointCount(): number {
    return this.pointBlockCount;
  }

  /** λ of every row (rows.wgsl.ts row_solve[3r].z), as jacobi-cpu's `multiplier`. */
  async multipliers(): Promise<Float64Array> {
    const rows = this.rowSolver.rows;
    const solve = new Float32Array((await this.read(['row_solve'])).get('row_solve')!);
    return Float64Array.from({ length: rows.count }, (_, r) => solve[12 * r + 2]);
  }

  /** Params uniform, matching `struct Params` in kernels.wgsl.ts. */
  private writeParams(): void {
    const { dt, substeps, beta, warmStart } = this.options;
    const h = dt / substeps;
    const buf = new ArrayBuffer(PARAMS_BYTES);
    const f = new Float32Array(buf);
    const u = new Uint32Array(buf);
    f.set(this.w.gravity, 0);
    f[3] = h;
    f[4] = beta / h;
    f[5] = warmStart;
    u[6] = this.w.bodyCount;
    u[7] = this.joints.constraintCount;
    u[8] = this.rowWidth();
    f[9] = dampingFactor(this.options.linearDamping, h);
    f[10] = dampingFactor(this.options.angularDamping, h);
    u[11] = this.rowSolver.rows.blockCount;
    u.set(this.jointStart, 12);
    u.set(this.jointCount, 16);
    u[20] = this.pointBlockCount;
    u[21] = this.prepareList.length - this.pointBlockCount;
    u[22] = this.pointBlockCount; // a rigid point joint is one point block
    this.device.queue.writeBuffer(this.buffers.get('params')!, 0, buf);
  }

  private async buildPipelines(): Promise<void> {
    await buildKernels(this.device, this.id, () => {
      for (const spec of this.kernelList()) this.bindKernel(spec, Kernel.create(this.device, spec.name, kernelSource(spec)));
    });
  }

  /**
   * Every kernel's workgroup grids for a new layout, and its bind groups again where `rebind` (a buffer
   * was recreated or the colours changed in number); else the bind groups it has hold the same buffers.
   */
  private bindKernels(rebind: boolean): void {
    for (const k of [...this.kernels.values()]) this.bindKernel(k.spec, k.kernel, rebind ? undefined : k.bindGroups);
  }

  /** Kernel `spec`'s bind groups (unless `keep`: those it has, its buffers unchanged) and thread counts. */
  private bindKernel(spec: KernelSpec, kernel: Kernel, keep?: GPUBindGroup[]): void {
    // a 'colour' kernel gets one bind group per colour, its range at offset COLOUR_SLOT·c of the 'colour' buffer
    const colour = spec.over === 'colour' || spec.over === 'colour_point';
    const ranges = colour ? this.colourRanges : [null];
    const bindGroups =
      keep ??
      ranges.map((_, c) =>
        kernel.bind([
          this.buffers.get('params')!,
          ...spec.bindings.map(
            (b): BufferBinding => (b.name === 'colour' ? { buffer: this.buffers.get('colour')!, offset: COLOUR_SLOT * c, size: 16 } : this.buffers.get(b.name)!),
          ),
        ]),
      );
    const counts = colour ? this.colourRanges.map((r) => (spec.over === 'colour_point' ? r.count : r.generalCount)) : [this.threadCount(spec)];
    this.kernels.set(spec.name, { spec, kernel, bindGroups, threads: counts });
  }

  /** Threads of one dispatch of a kernel that is not a 'colour' one (KernelSpec.over). */
  private threadCount(spec: KernelSpec): number {
    switch (spec.over) {
      case 'body':
        return this.w.bodyCount;
      case 'block':
        return this.rowSolver.rows.blockCount;
      case 'point_block':
        return this.pointBlockCount;
      case 'general_block':
        return this.prepareList.length - this.pointBlockCount;
      case 'joint':
        // jointKind −1: the rigid point joints (evaluate_point_rigid); point: the soft ones
        return spec.jointKind === -1 ? this.pointBlockCount : this.jointCount[spec.jointKind!] - (spec.jointKind === JointKind.point ? this.pointBlockCount : 0);
      default:
        throw new Error(`${this.id}: kernel ${spec.name}: no thread count for '${spec.over}'`);
    }
  }

  /** One dispatch of kernel `name` (for a 'colour' kernel: over colour `colour`'s constraints); none with no threads. */
  protected dispatch(pass: GPUComputePassEncoder, name: string, colour = 0): void {
    const k = this.kernels.get(name)!;
    k.kernel.dispatch(pass, k.bindGroups[colour], k.threads[colour]);
  }

  /** Stages 1–3 of a step and the warm start: everything before the iterations (global-gpu: stages 1–3 with applyWarmStart false). */
  protected encodeSolveStart(at: StagePass): void {
    let pass = at('integrate velocities');
    this.dispatch(pass, 'compute_inertia');
    this.dispatch(pass, 'compute_free_velocity');
    // 3. compute_violation_and_jacobian_and_delassus: C, J per constraint type, then per block
    pass = at('prepare joints');
    this.dispatch(pass, 'evaluate_point_rigid');
    for (const kind of jointKindNames) this.dispatch(pass, `evaluate_${kind}`);
    this.dispatch(pass, 'prepare_point_blocks');
    this.dispatch(pass, 'prepare_blocks');
    // the position pass's own inverses of the general blocks (the point blocks' in prepare_point_blocks)
    if (this.splitsMass()) this.dispatch(pass, 'prepare_position_blocks');
    // restitution (jacobi-cpu's, before the warm start): the step's collisions propagated colour by colour on
    // V, which has this step's h g (compute_free_velocity; ΔV is 0 there)
    if (this.contacts?.elastic) this.contacts.recordRestitution(at('restitution'), true);
    if (this.variant.applyWarmStart && this.options.warmStart > 0) {
      pass = at('warm start');
      this.dispatch(pass, 'update_velocities');
      this.contacts?.recordWarmStart(pass);
    }
    this.contactSweep = 0;
  }

  /** One Jacobi iteration (37), (34). */
  protected encodeIteration(pass: GPUComputePassEncoder): void {
    this.dispatch(pass, 'update_multipliers_point');
    this.dispatch(pass, 'update_multipliers');
    // the contacts' manifolds from the same V^k (jacobi-cpu iterate), then both gathers
    this.contacts?.recordSweep(pass, (this.contactSweep++ & 1) === 1);
    this.dispatch(pass, 'update_velocities');
    this.contacts?.recordGather(pass);
  }

  /** jacobi-cpu's stage names, the contact stages (restitution among them) only with contacts. */
  get stageNames(): readonly string[] {
    if (!this.contacts) return ['integrate velocities', 'prepare joints', 'warm start', 'solve', 'integrate positions'];
    return ['collide', 'prepare contacts', 'integrate velocities', 'prepare joints', 'restitution', 'warm start', 'solve', 'integrate positions', 'store impulses'];
  }

  /** collide, then prepare contacts at the frame's start pose (I⁻¹ there: compute_inertia first); the contacts, or null. */
  protected encodeContactsStart(at: StagePass): GpuContacts | null {
    const c = this.contacts;
    if (!c) return null;
    c.recordCollide(at('collide'));
    const pass = at('prepare contacts');
    this.dispatch(pass, 'compute_inertia');
    c.recordPrepare(pass);
    return c;
  }

  protected encodeFrame(at: StagePass): void {
    const { substeps, iterations } = this.options;
    const c = this.encodeContactsStart(at);
    for (let s = 0; s < substeps; s++) {
      this.encodeSolveStart(at);
      this.recordPoint(s);
      for (let k = 0; k < iterations; k++) {
        this.encodeIteration(at('solve'));
        this.recordPoint(s);
      }
      // split impulse: the joints' Baumgarte feedback as a position pass of its own, in the solve (jacobi-cpu's)
      this.encodePositionPass(at('solve'));
      const end = at('integrate positions');
      this.dispatch(end, this.positionsKernel());
      c?.recordPose(end);
    }
    if (c) c.recordStore(at('store impulses'));
  }

  /** While a frame records residuals (stepRecordingResiduals): what a record point adds to the frame; else null. */
  private residualProbe: (() => void) | null = null;

  /**
   * A record point of substep `s` of the frame being recorded (k = 0 after the warm start, then after each solve
   * sweep: the CPU twins' points): the residual's dispatches, on the first substep of a frame that records them;
   * nothing in an ordinary frame. It may end the pass and begin another: a frame encoder takes its pass from
   * `at` again after it.
   */
  protected recordPoint(s: number): void {
    if (s === 0 && this.residualProbe) this.residualProbe();
  }

  /**
   * One frame, as step(1) (encodeFrame), recording the residual of its first substep after the warm start and
   * after each solve sweep (iterations + 1 record points), not timed:
   *   joints     compute_residual's per-row ρ² copied out at each point (the pass ended there), summed per
   *              joint kind in f64 here (rowResidualChannels);
   *   contacts   cj_residual and cj_residual_sum (contacts/gpu-contacts.wgsl.ts): the projected residual of the
   *              contact rows (contact-solver.ts solve with `residual`, the CPU twins' definition), summed on the
   *              GPU per record point into one buffer, read back once when the frame is done;
   *              channels 'contact normal' and 'friction', √(Σ ρ²) / h as the CPU's.
   * Only this frame reads back; an ordinary frame records none of it (recordPoint).
   */
  async stepRecordingResiduals(): Promise<ResidualCurve> {
    await this.beforeStep();
    const records = this.options.iterations + 1;
    const h = this.options.dt / this.options.substeps;
    const residual = this.buffers.get('residual')!;
    const slot = residual.size;
    const contacts = this.contacts;
    if (contacts) await contacts.beginResiduals(records);
    const readback = this.rowSolver.rows.count > 0 ? this.device.createBuffer({ size: slot * records, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }) : null;
    const encoder = this.device.createCommandEncoder();
    let pass = encoder.beginComputePass();
    let recorded = 0;
    this.residualProbe = () => {
      contacts?.recordResidual(pass);
      if (readback) {
        this.dispatch(pass, 'compute_residual');
        pass.end();
        encoder.copyBufferToBuffer(residual, 0, readback, recorded * slot, slot);
        pass = encoder.beginComputePass();
      }
      recorded++;
    };
    try {
      this.encodeFrame(() => pass);
    } finally {
      this.residualProbe = null;
    }
    pass.end();
    if (recorded !== records && (readback || contacts)) throw new Error(`${this.id}: ${recorded} residual record points in a frame, ${records} expected`);
    let channels: Record<string, number[]> = {};
    if (readback) channels = await this.rowResidualChannels(encoder, readback, slot, records);
    else this.device.queue.submit([encoder.finish()]);
    const sums = contacts ? await contacts.readResiduals(records) : null;
    if (sums) {
      channels[CONTACT_NORMAL_CHANNEL] = sums.normal.map((x) => Math.sqrt(x) / h);
      channels[FRICTION_CHANNEL] = sums.friction.map((x) => Math.sqrt(x) / h);
    }
    this.frame++;
    return { frame: this.frame, substep: 0, quantity: RESIDUAL_QUANTITY, channels };
  }

  /**
   * Submits `encoder`, reads `records` copies of compute_residual's per-row ρ² (velocity units)
   * `slot` bytes apart from `readback`; per joint kind ‖b − Aλ‖ = √(Σ ρ²) / h, as jacobi-cpu's channels.
   */
  protected async rowResidualChannels(encoder: GPUCommandEncoder, readback: GPUBuffer, slot: number, records: number): Promise<Record<string, number[]>> {
    this.device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const squares = new Float32Array(readback.getMappedRange().slice(0));
    readback.unmap();
    readback.destroy();
    const rows = this.rowSolver.rows;
    const h = this.options.dt / this.options.substeps;
    const channels: Record<string, number[]> = {};
    for (let k = 0; k < records; k++) {
      const sums = new Map<string, number>();
      for (let r = 0; r < rows.count; r++) {
        const kind = jointKindNames[this.joints.kind[rows.owner[r]]];
        sums.set(kind, (sums.get(kind) ?? 0) + squares[k * (slot / 4) + r]);
      }
      for (const [kind, sum] of sums) (channels[kind] ??= []).push(Math.sqrt(sum) / h);
    }
    return channels;
  }

  override destroy(): void {
    this.contacts?.destroy();
    super.destroy();
  }

  /** Dispatches as encodeFrame records them; bytes from rowJacobiIterationBytes. */
  cost(): SolverCost {
    const { substeps, iterations, warmStart } = this.options;
    // stages 1, 2, 3, 5
    const stage3 = this.stage3Dispatches();
    const perStep = 3 + stage3 + this.dispatchesPerIteration() * iterations + (this.variant.applyWarmStart && warmStart > 0 ? 1 : 0);
    // contacts: 3 rows a point (normal, two friction), swept contactSweeps() times a step; the points are the
    // GPU's count at the last snapshot (its readback), so a run's mean counts them as sampled
    const contactRows = this.contacts ? 3 * this.contacts.points * this.contactSweeps() * substeps : 0;
    // with contacts, the dispatches and bytes below count the joints' kernels only (the contact stages' sizes
    // come out of the GPU: indirect dispatches): not given, rather than given short
    if (this.contacts) return { rowSolvesPerFrame: this.rowSolver.rows.count * iterations * substeps + contactRows };
    return {
      rowSolvesPerFrame: this.rowSolver.rows.count * iterations * substeps,
      dispatchesPerFrame: perStep * substeps,
      iterationBytesPerFrame: this.iterationBytes() * iterations * substeps,
    };
  }

  /** Sweeps of the contacts per step that the cost counts: one per iteration (softstep-gpu: as softstep-cpu, the solve's, not the relax's). */
  protected contactSweeps(): number {
    return this.options.iterations;
  }

  /** Dispatches of stage 3: one per constraint type present and the prepare kernels with blocks. */
  protected stage3Dispatches(): number {
    const evaluates = this.jointCount.filter((n, k) => n - (k === JointKind.point ? this.pointBlockCount : 0) > 0).length + (this.pointBlockCount > 0 ? 1 : 0);
    return evaluates + (this.pointBlockCount > 0 ? 1 : 0) + (this.prepareList.length > this.pointBlockCount ? 1 : 0);
  }

  /** Dispatches encodeIteration records. */
  protected dispatchesPerIteration(): number {
    return 1 + (this.pointBlockCount > 0 ? 1 : 0) + (this.prepareList.length > this.pointBlockCount ? 1 : 0);
  }

  /** Bytes one iteration moves (rowJacobiIterationBytes). */
  protected iterationBytes(): number {
    const rows = this.rowSolver.rows;
    return rowJacobiIterationBytes(this.w.bodyCount, this.pointBlockCount, rows.blockCount - this.pointBlockCount, rows.count - 3 * this.pointBlockCount);
  }
}


/** Bytes of the Params uniform (struct Params in kernels.wgsl.ts). */
const PARAMS_BYTES = 96;

/** The buffers whose size follows the joints' layout (sizes()): kept by capacity, grown at a relayout. */
const LAYOUT_BUFFERS: BufferName[] = [
  'colour', 'row_jacobian', 'row_error', 'row_params', 'row_solve', 'point_arm', 'row_block', 'prepare_list', 'block_list', 'row_entries', 'joint', 'residual', 'row_pseudo', 'row_position_inverse',
];

/** A copy with at least one entry (no zero-size buffers). */
function padded(a: Uint32Array): Uint32Array<ArrayBuffer> {
  return a.length ? Uint32Array.from(a) : new Uint32Array(1);
}

/**
 * Bytes one Jacobi iteration on rows must move, at the layout of rows/rows.wgsl.ts (f32), each
 * element read or written once:
 *   update_multipliers_point, per rigid point joint: block_list 4, row_block 16, velocity 2×32,
 *     velocity_delta 2×32, point_arm 32, row_solve 3×16 state read + 3×16 written + 3×16 matrix = 324
 *   update_multipliers, per general block: block_list 4, row_block 16, velocity 2×32, velocity_delta
 *     2×32 = 148; per row: row_jacobian 48, row_solve 16 read + 16 written + 32 matrix, row_params 16 = 128
 *   update_velocities, per body: body_rows 8, inverse_mass 64, velocity_delta 32 written = 104;
 *     per point-joint entry (2 per joint): row_entries 4, row_solve 3×16, point_arm 16 = 68;
 *     per general-row entry (2 per row): row_entries 4, row_jacobian 2×16, row_solve 16 = 52
 */
export function rowJacobiIterationBytes(bodyCount: number, pointJoints: number, generalBlocks: number, generalRows: number): number {
  return (324 + 2 * 68) * pointJoints + 148 * generalBlocks + (128 + 2 * 52) * generalRows + 104 * bodyCount;
}

/**
 * Bytes one Jacobi iteration of a point-joint-only layout would move (the former point kernels
 * update_multipliers + update_velocities, removed: every GPU solver runs on rows). No solver calls it;
 * kept only for its export from src/index.ts. Per element read or written once, f32:
 *   update_multipliers, per constraint: bodies 8, velocity 2×32, velocity_delta 2×32,
 *     jacobian 32, violation 16, delassus_inv 48, multiplier 16 read + 16 written = 264
 *   update_velocities, per body: ic0 8, inverse_mass 64, velocity_delta 32 written = 104;
 *     per (body, constraint) entry (2 per constraint): constraint_list 4, bodies 8,
 *     jacobian 16, multiplier 16 = 44
 */
export function jacobiIterationBytes(bodyCount: number, constraintCount: number): number {
  return 264 * constraintCount + 104 * bodyCount + 2 * 44 * constraintCount;
}
