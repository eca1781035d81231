/**
 * xpbd-gpu — host side of the GPU XPBD solver: every joint type (point, distance with its
 * rope/strut rows, hinge with its limit rows, fixed) on every shape. The kernels and the
 * buffer legend are in kernels.wgsl.ts; the f64 reference with the same stages, the
 * equations and the two forms of the point-joint update ('point', the default, and
 * 'distance'; XpbdVariant) is cpu.ts (solveRows for the other joints).
 *
 * One frame = one compute pass (GPU timestamps around it where the adapter has
 * them), holding `substeps` steps of h = dt / substeps:
 *   integrate → N × (solve_colour 0, solve_colour 1, …, solve_colour K−1) → update_velocities
 * (solve_colour c = the point joints' dispatch, then solve_colour_rows for the colour's other
joints, each skipped where the colour has none), i.e. 2 + (≤ 2K)·N dispatches a substep.
Point joints keep their own 3×3 kernel (the fast path); the other joints' rows are laid out
once on the CPU (RowBlockSolver.layout over the same joints: bounds, compliance, blocks) and
evaluated and projected on the GPU (rows/rows.wgsl.ts's evaluate functions, one thread per
joint, block by block). A colour's constraints share no dynamic body,
 * so one dispatch solves them all at once; dispatches in one pass run in order,
 * each seeing the previous one's writes, which makes the colours a Gauss–Seidel
 * sweep. Point joints are laid out by the colouring's `order` (slot s holds the s-th
 * point joint in it), the other joints' records likewise, so a colour is a contiguous run of each,
 * named to its dispatch by a 256-byte-aligned pass_info record and one bind group
 * per record (no dynamic offsets: the 'auto' layouts cannot have them).
 * Many frames are recorded into one submission (FrameClock, below); nothing is read
 * back until a snapshot is asked for. Where the CPU restarts λ = 0 in integrate, the
 * GPU reads λ as 0 in each substep's first iteration (pass_info.first): no extra pass.
 *
 * Joints added or removed between steps (addConstraint, removeConstraint: a JointSet, as xpbd-cpu)
 * are coloured and laid out again on the CPU before the next step, as xpbd-cpu's relayout, and
 * uploaded into buffers kept by capacity (GpuSolverBase.growBuffer: recreated at double the size only
 * when the new layout does not fit; the bind groups made again then). No λ is carried: XPBD restarts
 * λ = 0 every substep, so a new layout needs no readback but the pose, where a joint was added (its
 * starting pose).
 *
 * Contacts (a world with collisions, two bodies or more): xpbd-cpu's contact projection and velocity pass
 * in WGSL (gpu-contacts.ts, contacts.wgsl.ts) on the GPU contact pipeline (contacts/gpu-contacts.ts: GPU
 * collision, the pair table's persistence, the manifolds coloured every frame), with xpbd-cpu's stages:
 *   collide → substeps × (integrate → N × (the joints' colours, then the contacts' colours, the late ones and the overflow set in one workgroup)
 *   → update_velocities → velocity pass), and the store at the frame's end; one submission, no readback.
 * The contacts are swept in colour order (xpbd-cpu's twin in that order: XpbdContacts.colourOrder). Joints
 * and contacts share a world as on the CPU (jointed pairs do not collide). Restitution is xpbd-cpu's: its
 * collision propagation first in the velocity pass, then Müller's rule (xpbd/contacts.wgsl.ts header); not on
 * the GPU: sleeping (every body awake). The contact rows' residual (run --residuals) is xpbd-cpu's, on the GPU.
 */
import type { WorldDesc } from '../../model/world.js';
import { compileWorld, type CompiledWorld } from '../../model/compiled.js';
import { JointSet } from '../../rows/joint-set.js';
import { JointEditingGpuSolver } from '../gpu-joints.js';
import { colourConstraints, type Colouring } from '../../model/colouring.js';
import type { GpuContext } from '../../gpu/device.js';
import {
  type Solver,
  type SolverOptions,
  type SolverCost,
  type ResidualCurve,
  defaultSolverOptions,
} from '../solver.js';
import { buildKernels } from '../../gpu/kernels.js';
import { Kernel } from '../../gpu/dispatch.js';
import { packBodyState, writeMat3Columns, type StagePass } from '../../gpu/frames.js';
import { anyAnisotropic, dampingFactor, freeBodyFlags } from '../../rigid/body.js';
import { XPBD_MIN_DISTANCE, XPBD_RESIDUAL_QUANTITY, defaultXpbdVariant, xpbdRows, type XpbdVariant } from './cpu.js';
import { kernelSpecs, kernelSource, type BufferName, type KernelSpec } from './kernels.wgsl.js';
import { RowBlockSolver } from '../../rows/block-solver.js';
import { JointKind, jointKindNames } from '../../model/joint-data.js';
import { F32_MAX, JOINT_KIND_SHIFT, JOINT_STRIDE, writeJointRecord } from '../../rows/rows.wgsl.js';
import { sceneHasContacts, type SolverContactStats } from '../solver.js';
import { SolverFailure } from '../../model/failure.js';
import { XpbdContactStages } from './gpu-contacts.js';
import { contactPairCapacity } from '../../contacts/gpu-contacts.js';
import { CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL } from '../../contacts/contact-solver.js';

const PARAMS_BYTES = 48;

/** The buffers whose size follows the joints' layout (sizes()): kept by capacity, grown at a relayout. */
const LAYOUT_BUFFERS: BufferName[] = [
  'bodies', 'anchors', 'compliance', 'multiplier', 'residual', 'joint', 'row_jacobian', 'row_error', 'row_params', 'row_lambda', 'row_residual',
];

/** A body or slot kernel (gpu/dispatch.ts Kernel) with its bind groups. */
interface SlotKernel {
  spec: KernelSpec;
  kernel: Kernel;
  /** body kernels: one; slot kernels: one per pass_info record (see writePassInfo) */
  bindGroups: GPUBindGroup[];
}

export class XpbdGpuSolver extends JointEditingGpuSolver<BufferName> implements Solver {
  readonly id = 'xpbd-gpu';
  readonly variant: XpbdVariant;
  readonly bodyCount: number;
  colouring: Colouring;

  protected readonly w: CompiledWorld;
  /** the joints as they are now: the world's, then those added and less those removed between steps */
  readonly joints: JointSet;
  /** joints added since the last step, by id: compiled again at the GPU's pose before it (syncJoints) */
  private readonly params: GPUBuffer;
  private passInfo: GPUBuffer;
  private readonly passStride: number;
  private readonly kernels = new Map<string, SlotKernel>();
  /** the rows of every joint (rows/), laid out on the CPU; the non-point joints' are solved on the GPU */
  protected readonly rowSolver: RowBlockSolver;
  /** point joints (solve_colour's slots) in colour order, and the start of each colour's (K + 1 entries) */
  private pointOrder: number[] = [];
  private pointStart: number[] = [0];
  /** every other joint (solve_colour_rows's records) in colour order, and the start of each colour's */
  private rowOrder: number[] = [];
  private rowStart: number[] = [0];
  /** the world as given (its bodies' shapes and materials: the contact stages) */
  private readonly world: WorldDesc;
  /** the contact stages (gpu-contacts.ts), or null: a world without collisions */
  private contacts: XpbdContactStages | null = null;
  /** the world has collisions and two bodies or more: contacts */
  private readonly takesContacts: boolean;

  private constructor(world: WorldDesc, options: Partial<SolverOptions>, variant: Partial<XpbdVariant>, gpu: GpuContext) {
    super({ ...defaultSolverOptions, ...options }, gpu);
    this.variant = { ...defaultXpbdVariant, ...variant };
    this.world = world;
    this.takesContacts = sceneHasContacts(world) && world.bodies.length >= 2;
    this.w = compileWorld(world);
    this.bodyCount = this.w.worldBodyCount;
    this.joints = new JointSet(this.w);
    this.colouring = colourConstraints(this.w);
    this.rowSolver = new RowBlockSolver(this.joints, this.w.bodyCount, this.w.inverseMass, this.options.compliance);
    this.orderJoints();
    this.passStride = Math.max(16, this.device.limits.minUniformBufferOffsetAlignment);
    const uniform = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
    this.params = this.device.createBuffer({ label: 'params', size: PARAMS_BYTES, usage: uniform });
    this.passInfo = this.device.createBuffer({ label: 'pass_info', size: this.passStride * this.recordCount(), usage: uniform });
    this.bufferCreations += 2;
  }

  get constraintCount(): number {
    return this.joints.constraintCount;
  }

  /** pointOrder, rowOrder and their colour starts, from the colouring. */
  private orderJoints(): void {
    const { colourCount, start, order } = this.colouring;
    this.pointOrder = [];
    this.rowOrder = [];
    this.pointStart = [0];
    this.rowStart = [0];
    for (let c = 0; c < colourCount; c++) {
      for (let k = start[c]; k < start[c + 1]; k++) (this.joints.kind[order[k]] === JointKind.point ? this.pointOrder : this.rowOrder).push(order[k]);
      this.pointStart.push(this.pointOrder.length);
      this.rowStart.push(this.rowOrder.length);
    }
  }

  /**
   * The joints changed: colour them and lay their rows out again (xpbd-cpu's relayout), grow the
   * buffers the new layout outgrew, upload it. Only the pose is read back, where a joint was added.
   */
  protected async syncJoints(): Promise<void> {
    if (this.variant.form === 'distance') throw new Error("xpbd-gpu: joints added or removed between steps need form 'point'");
    if (this.pendingPose.size > 0) this.compilePendingJoints((await this.read(['pose'])).get('pose')!);
    const j = this.joints;
    const hadRows = this.rowOrder.length > 0, records = this.recordCount();
    this.colouring = colourConstraints({ constraintCount: j.constraintCount, bodyCount: this.w.bodyCount, ib0: j.ib0, ib1: j.ib1, inverseMass: this.w.inverseMass });
    this.rowSolver.layout();
    this.orderJoints();
    const sizes = this.sizes();
    let grew = records !== this.recordCount();
    for (const name of LAYOUT_BUFFERS) if (this.growBuffer(name, sizes[name])) grew = true;
    if (this.passInfo.size < this.passStride * this.recordCount()) {
      const capacity = Math.max(this.passStride * this.recordCount(), 2 * this.passInfo.size);
      this.passInfo.destroy();
      this.passInfo = this.device.createBuffer({ label: 'pass_info', size: capacity, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.bufferCreations++;
      grew = true;
    }
    const data: Partial<Record<BufferName, ArrayBuffer>> = {};
    this.jointData(data);
    this.uploadRows(data);
    for (const [name, d] of Object.entries(data) as [BufferName, ArrayBuffer][]) this.device.queue.writeBuffer(this.buffers.get(name)!, 0, d);
    this.writePassInfo();
    // the *_rows kernels exist only where some joint is not a point joint: built again when that changes
    if (hadRows !== this.rowOrder.length > 0) await this.buildPipelines();
    else if (grew) this.bindKernels();
    this.contacts?.setJoints(j.ib0, j.ib1, j.constraintCount);
  }

  static async create(world: WorldDesc, options: Partial<SolverOptions>, gpu: GpuContext, variant: Partial<XpbdVariant> = {}): Promise<XpbdGpuSolver> {
    const s = new XpbdGpuSolver(world, options, variant, gpu);
    s.checkLimits(s.sizes());
    s.upload();
    await s.buildPipelines();
    if (s.takesContacts) await s.createContacts();
    return s;
  }

  /** The contact stages over this solver's body buffers (frame dt for the speculative margins). */
  private async createContacts(): Promise<void> {
    const { dt, substeps, beta, restitutionThreshold } = this.options;
    const b = this.buffers;
    const c = await XpbdContactStages.create(this.device, this.w.bodyCount, this.world.bodies, this.w.inverseMass, contactPairCapacity(this.world.bodies, this.w, dt), {
      pose: b.get('pose')!,
      pose_prev: b.get('pose_prev')!,
      velocity: b.get('velocity')!,
      body_mass: b.get('body_mass')!,
    });
    const g = this.w.gravity;
    c.configure(dt / substeps, dt, g, beta, restitutionThreshold);
    c.setJoints(this.joints.ib0, this.joints.ib1, this.joints.constraintCount);
    this.contacts = c;
  }

  /** Read with the pose and velocities (one readback): with contacts, a frame that found more pairs than the slots hold is an error. */
  protected override snapshotExtras(): { buffers: GPUBuffer[]; take(data: ArrayBuffer[]): void } | null {
    const c = this.contacts?.contacts;
    if (!c) return null;
    return {
      buffers: c.overflowBuffers(),
      take: (data) => {
        const lost = c.overflowFrom(data);
        if (lost > 0) throw new SolverFailure(`${this.id}: the broad phase found ${lost} pairs more than its ${c.collision.broad.pairCapacity} slots (sized from the start pose: contactPairCapacity): contacts were lost; the scene packed denser than xpbd-gpu's pair capacity`);
      },
    };
  }

  /** pass_info records: 2K + 2 of the point slots (writePassInfo), then 2K + 2 of the row joints' records. */
  private recordCount(): number {
    return 4 * this.colouring.colourCount + 4;
  }

  /** Storage buffer sizes in bytes, from the world's counts. */
  private sizes(): Record<BufferName, number> {
    const nb = Math.max(1, this.w.bodyCount), nc = Math.max(1, this.pointOrder.length); // no zero-size bindings
    const nr = Math.max(1, this.rowSolver.rows.count), nj = Math.max(1, this.rowOrder.length);
    return {
      pose: 32 * nb,
      pose_prev: 32 * nb,
      pose_start: 32 * nb,
      velocity: 32 * nb,
      body_mass: 64 * nb,
      bodies: 8 * nc,
      anchors: 32 * nc,
      compliance: 4 * nc,
      multiplier: 16 * nc,
      residual: 4 * nc,
      midpoint_offset: 16 * nb, // (g, free): g = 0 until a free non-isotropic body's gyroscopic step writes it
      joint: 16 * JOINT_STRIDE * nj,
      row_jacobian: 48 * nr,
      row_error: 8 * nr,
      row_params: 16 * nr,
      row_lambda: 4 * nr,
      row_residual: 4 * nr,
    };
  }

  private upload(): void {
    const w = this.w;
    const nb = w.bodyCount;
    const data: Partial<Record<BufferName, ArrayBuffer>> = {};
    const { pose, velocity } = packBodyState(w);
    const bodyMass = new Float32Array(16 * nb);
    for (let i = 0; i < nb; i++) {
      writeMat3Columns(w.inverseInertiaLocal, 9 * i, bodyMass, 16 * i);
      bodyMass[16 * i + 12] = w.inverseMass[i];
    }
    data.pose = pose.buffer;
    // (Δx = 0, q_prev = q): the displacement and orientation of a substep's start (kernels.wgsl.ts legend)
    const prev = pose.slice();
    for (let i = 0; i < nb; i++) prev.fill(0, 8 * i, 8 * i + 4);
    data.pose_prev = prev.buffer;
    // (x̄ = x, c = 0): the substep's start as stored, and the increments' lag behind it (kernels.wgsl.ts legend)
    const start = pose.slice();
    for (let i = 0; i < nb; i++) start.fill(0, 8 * i + 3, 8 * i + 8);
    data.pose_start = start.buffer;
    data.velocity = velocity.buffer;
    data.body_mass = bodyMass.buffer;
    this.jointData(data, this.pointOrder.length);
    this.uploadRows(data);
    this.createBuffers(this.sizes(), data);
    this.writeParams();
    this.writePassInfo();
  }

  /**
   * midpoint_offset and the point joints' buffers: (g = 0, free) per body, free = 1 where none of the
   * first `freeOf` joints touches the body (rigid/body.ts, E4; at creation the world's point-joint count,
   * as before: the hashes; after a change every joint, as xpbd-cpu's markJointed); per point slot s,
   * constraint pointOrder[s]'s bodies, anchors and compliance α (its own, or the solver's).
   */
  private jointData(data: Partial<Record<BufferName, ArrayBuffer>>, freeOf = this.joints.constraintCount): void {
    const j = this.joints, nb = this.w.bodyCount, nc = this.pointOrder.length;
    const free = freeBodyFlags(nb, j.ib0, j.ib1, freeOf);
    data.midpoint_offset = Float32Array.from({ length: 4 * nb }, (_, k) => (k % 4 === 3 ? free[k >> 2] : 0)).buffer;
    const w = j;
    const alpha = (ic: number) => (Number.isNaN(j.compliance[ic]) ? this.options.compliance : j.compliance[ic]);
    const bodies = new Uint32Array(2 * nc);
    const anchors = new Float32Array(8 * nc);
    const compliance = new Float32Array(nc);
    this.pointOrder.forEach((ic, s) => {
      bodies[2 * s] = w.ib0[ic];
      bodies[2 * s + 1] = w.ib1[ic];
      for (let d = 0; d < 3; d++) {
        anchors[8 * s + d] = w.r0[3 * ic + d];
        anchors[8 * s + 4 + d] = w.r1[3 * ic + d];
      }
      compliance[s] = alpha(ic);
    });
    data.bodies = bodies.buffer;
    data.anchors = anchors.buffer;
    data.compliance = compliance.buffer;
  }

  /**
   * The other joints' rows (rows/rows.wgsl.ts legend, its xpbd part): per row (lower, upper, α, meta),
   * meta = n + 8·more at a block's first row; the joint records in colour order (record k holds
   * rowOrder[k]) with the JointKind in the flags' bits 8..; J, C and λ are written by the kernel.
   */
  private uploadRows(data: Partial<Record<BufferName, ArrayBuffer>>): void {
    const w = this.joints, rs = this.rowSolver, rows = rs.rows;
    const f32 = (x: number) => (x === Infinity ? F32_MAX : x === -Infinity ? -F32_MAX : x);
    const params = new Float32Array(4 * Math.max(1, rows.count));
    for (let r = 0; r < rows.count; r++) params.set([f32(rows.lower[r]), f32(rows.upper[r]), rows.compliance[r], 0], 4 * r);
    for (const ic of this.rowOrder) {
      const end = rs.constraintBlockEnd[ic];
      for (let b = rs.constraintBlock[ic]; b < end; b++) {
        const r0 = rows.blockStart[b];
        params[4 * r0 + 3] = rows.blockStart[b + 1] - r0 + (b + 1 < end ? 8 : 0);
      }
    }
    data.row_params = params.buffer;
    const record = new Float32Array(4 * JOINT_STRIDE * Math.max(1, this.rowOrder.length));
    this.rowOrder.forEach((ic, k) => writeJointRecord(w, rs.rowStart[ic], ic, record, 4 * JOINT_STRIDE * k, w.kind[ic] << JOINT_KIND_SHIFT));
    data.joint = record.buffer;
  }

  /** Params uniform, matching `struct Params` in kernels.wgsl.ts. */
  private writeParams(): void {
    const { dt, substeps, linearDamping, angularDamping } = this.options;
    const h = dt / substeps;
    const buf = new ArrayBuffer(PARAMS_BYTES);
    const f = new Float32Array(buf);
    const u = new Uint32Array(buf);
    f.set(this.w.gravity, 0);
    f[3] = h;
    f[4] = 1 / (h * h);
    f[5] = dampingFactor(linearDamping, h);
    f[6] = dampingFactor(angularDamping, h);
    f[7] = XPBD_MIN_DISTANCE;
    u[8] = this.w.bodyCount;
    u[9] = this.rowWidth();
    // xc_apply_* (restitution) moves poses outside pose_prev's Δx: no carried rounding where a body has e > 0
    u[10] = this.world.bodies.some((b) => (b.restitution ?? 0) > 0) ? 0 : 1;
    this.device.queue.writeBuffer(this.params, 0, buf);
  }

  /**
   * pass_info records (start, count, first): 2c + 1 − first for colour c's point slots; 2K + 1 − first
   * for all point slots; 2K + 2 + 2c + 1 − first for colour c's row-joint records; 4K + 3 − first for
   * all row-joint records.
   */
  private writePassInfo(): void {
    const { colourCount } = this.colouring;
    const u = new Uint32Array((this.passStride / 4) * this.recordCount());
    this.recordCounts = new Array<number>(this.recordCount()).fill(0);
    const put = (record: number, from: number, count: number, first: number) => {
      u.set([from, count, first], (record * this.passStride) / 4);
      this.recordCounts[record] = count;
    };
    const ps = this.pointStart, rs = this.rowStart;
    for (let c = 0; c < colourCount; c++)
      for (const first of [1, 0]) {
        put(2 * c + 1 - first, ps[c], ps[c + 1] - ps[c], first);
        put(2 * colourCount + 2 + 2 * c + 1 - first, rs[c], rs[c + 1] - rs[c], first);
      }
    for (const first of [1, 0]) {
      put(2 * colourCount + 1 - first, 0, this.pointOrder.length, first);
      put(4 * colourCount + 3 - first, 0, this.rowOrder.length, first);
    }
    this.device.queue.writeBuffer(this.passInfo, 0, u);
  }
  /** threads of each pass_info record (writePassInfo) */
  private recordCounts: number[] = [];

  /** Threads a pass runs: every body, or the slots of pass_info record `record`. */
  private passCount(spec: KernelSpec, record: number): number {
    return spec.over === 'body' ? this.w.bodyCount : this.recordCounts[record];
  }

  private async buildPipelines(): Promise<void> {
    this.kernels.clear();
    await buildKernels(this.device, this.id, () => {
      const anisotropic = anyAnisotropic(this.w.inverseMass, this.w.inverseInertiaLocal, this.w.bodyCount);
      for (const spec of kernelSpecs(this.variant, this.rowOrder.length > 0, anisotropic)) this.bindKernel(spec, Kernel.create(this.device, spec.name, kernelSource(spec)));
    });
  }

  /** Every kernel's bind groups again (a buffer was recreated, or the pass_info records changed in number). */
  private bindKernels(): void {
    for (const k of [...this.kernels.values()]) this.bindKernel(k.spec, k.kernel);
  }

  /** Kernel `spec`'s bind groups: one for a body kernel, one per pass_info record (the record at binding 1) for a slot kernel. */
  private bindKernel(spec: KernelSpec, kernel: Kernel): void {
    const storage = spec.bindings.map((b) => this.buffers.get(b.name)!);
    const bindGroups =
      spec.over === 'body'
        ? [kernel.bind([this.params, ...storage])]
        : Array.from({ length: this.recordCount() }, (_, r) => kernel.bind([this.params, { buffer: this.passInfo, offset: r * this.passStride, size: 16 }, ...storage]));
    this.kernels.set(spec.name, { spec, kernel, bindGroups });
  }

  /** One dispatch of kernel `name`, over every body or over the slots of pass_info record `record`. */
  private dispatch(pass: GPUComputePassEncoder, name: string, record = 0): void {
    const k = this.kernels.get(name);
    if (!k) return; // the *_rows kernels where every joint is a point joint
    k.kernel.dispatch(pass, k.bindGroups[k.spec.over === 'body' ? 0 : record], this.passCount(k.spec, record));
  }

  /** Iteration k of a substep: every colour in order (record 2c + 1 − first: λ read as 0 when k = 0). */
  private encodeIteration(pass: GPUComputePassEncoder, k: number): void {
    const K = this.colouring.colourCount;
    for (let c = 0; c < K; c++) {
      this.dispatch(pass, 'solve_colour', 2 * c + (k === 0 ? 0 : 1));
      this.dispatch(pass, 'solve_colour_rows', 2 * K + 2 + 2 * c + (k === 0 ? 0 : 1));
    }
  }

  private encodeSubstep(at: StagePass): void {
    const c = this.contacts;
    this.dispatch(at('integrate positions'), 'integrate');
    c?.recordBeginSubstep(at('integrate positions'));
    for (let k = 0; k < this.options.iterations; k++) {
      this.encodeIteration(at('project joints'), k);
      // then the contacts, colour by colour (Gauss–Seidel after the joints' colours, as xpbd-cpu)
      c?.recordProject(at('project contacts'), k === 0);
    }
    this.dispatch(at('update velocities'), 'update_velocities');
    c?.recordVelocityPass(at('velocity pass'));
  }

  /** xpbd-cpu's stage names (the contact stages with contacts) */
  get stageNames(): readonly string[] {
    return this.contacts
      ? ['collide', 'integrate positions', 'project joints', 'project contacts', 'update velocities', 'velocity pass']
      : ['integrate positions', 'project joints', 'update velocities'];
  }

  protected encodeFrame(at: StagePass): void {
    const c = this.contacts;
    // contacts: found once per frame at its start (the speculative margin covers the frame), as xpbd-cpu
    c?.recordCollide(at('collide'));
    for (let s = 0; s < this.options.substeps; s++) this.encodeSubstep(at);
    // store impulses (xpbd-cpu: after the last substep, timed with its velocity pass)
    c?.recordStore(at('velocity pass'));
  }

  /** The contacts' figures read with the last snapshot (pairs, manifolds, points, colours), or null: as jacobi-gpu's. */
  contactStats(): SolverContactStats | null {
    return this.contacts?.contacts.stats ?? null;
  }

  /**
   * One frame, as step(1), with compute_residual after integrate and after each
   * iteration of the first substep; each result is copied out between passes and
   * the per-constraint r² are summed in f64 here. Not timed. With collisions on, the frame runs its
   * contact stages too, and at the same record points the contact rows' residual (xc_residual: xpbd-cpu's
   * XpbdContacts.residual, projected; summed on the GPU by cj_residual_sum), in xpbd-cpu's two channels
   * where the frame had contact points.
   */
  async stepRecordingResiduals(): Promise<ResidualCurve> {
    await this.beforeStep();
    const c = this.contacts;
    const { substeps, iterations } = this.options;
    if (c) await c.beginResiduals(iterations + 1);
    const nc = this.pointOrder.length;
    const residual = this.buffers.get('residual')!;
    const rowResidual = this.buffers.get('row_residual')!;
    const slot = residual.size, rowSlot = rowResidual.size;
    const usage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
    const readback = this.device.createBuffer({ size: slot * (iterations + 1), usage });
    const rowReadback = this.device.createBuffer({ size: rowSlot * (iterations + 1), usage });
    const encoder = this.device.createCommandEncoder();
    const K = this.colouring.colourCount;
    const all = 2 * K, allRows = 4 * K + 2; // pass_info records of every point slot / row joint, λ read as 0
    const record = (k: number, body: (pass: GPUComputePassEncoder) => void) => {
      const pass = encoder.beginComputePass();
      body(pass);
      this.dispatch(pass, 'compute_residual', all + (k === 0 ? 0 : 1));
      this.dispatch(pass, 'compute_residual_rows', allRows + (k === 0 ? 0 : 1));
      c?.recordResidual(pass, k === 0);
      pass.end();
      encoder.copyBufferToBuffer(residual, 0, readback, k * slot, slot);
      encoder.copyBufferToBuffer(rowResidual, 0, rowReadback, k * rowSlot, rowSlot);
    };
    record(0, (pass) => {
      c?.recordCollide(pass);
      this.dispatch(pass, 'integrate');
      c?.recordBeginSubstep(pass);
    });
    for (let k = 0; k < iterations; k++)
      record(k + 1, (pass) => {
        this.encodeIteration(pass, k);
        c?.recordProject(pass, k === 0);
      });
    const pass = encoder.beginComputePass();
    this.dispatch(pass, 'update_velocities');
    c?.recordVelocityPass(pass);
    for (let s = 1; s < substeps; s++) this.encodeSubstep(() => pass);
    c?.recordStore(pass);
    pass.end();
    const point = await this.residualNorms(encoder, readback, slot, iterations + 1, nc);
    // the contact rows' sums of squares per record point, or null: no contact point this frame (no channel, as xpbd-cpu)
    const contactSums = c ? await c.contacts.readResiduals(iterations + 1) : null;
    // the other joints' rows, summed per joint kind in f64 (xpbd-cpu residualByKind's channels)
    await rowReadback.mapAsync(GPUMapMode.READ);
    const squares = new Float32Array(rowReadback.getMappedRange().slice(0));
    rowReadback.unmap();
    rowReadback.destroy();
    const channels: Record<string, number[]> = {};
    // (a world with no joint at all keeps its empty 'point' channel, unless its contacts give the curve)
    if (nc > 0 || (this.rowOrder.length === 0 && !contactSums)) channels.point = point;
    const rs = this.rowSolver;
    for (let k = 0; k <= iterations; k++) {
      const sums = new Map<string, number>();
      for (const ic of this.rowOrder) {
        const name = jointKindNames[this.joints.kind[ic]];
        let sum = sums.get(name) ?? 0;
        for (let r = rs.rowStart[ic]; r < rs.rowStart[ic] + rs.rowCount[ic]; r++) sum += squares[k * (rowSlot / 4) + r];
        sums.set(name, sum);
      }
      for (const [name, sum] of sums) (channels[name] ??= []).push(Math.sqrt(sum));
    }
    if (contactSums) {
      channels[CONTACT_NORMAL_CHANNEL] = contactSums.normal.map(Math.sqrt);
      channels[FRICTION_CHANNEL] = contactSums.friction.map(Math.sqrt);
    }
    this.frame++;
    return { frame: this.frame, substep: 0, quantity: XPBD_RESIDUAL_QUANTITY, channels };
  }

  /**
   * Dispatches as encodeFrame records them (empty ones skipped); rows: xpbdRows per point joint plus
   * every row of the other joints; bytes from xpbdIterationBytes, of the point joints' kernel only
   * (solve_colour_rows's traffic is not counted: a gap in the figure for scenes with other joints).
   */
  cost(): SolverCost {
    const { substeps, iterations } = this.options;
    const nc = this.pointOrder.length;
    const K = this.colouring.colourCount;
    let colourDispatches = 0, otherRows = 0;
    for (let c = 0; c < K; c++) colourDispatches += (this.pointStart[c + 1] > this.pointStart[c] ? 1 : 0) + (this.rowStart[c + 1] > this.rowStart[c] ? 1 : 0);
    for (const ic of this.rowOrder) otherRows += this.rowSolver.rowCount[ic];
    // contacts: 3 rows a point (normal and static friction's pair, the most it solves), once per iteration per
    // substep; the points are the GPU's count at the last snapshot (its readback). The dispatches and bytes are
    // not given: the contact stages' sizes come out of the GPU (indirect dispatches)
    if (this.contacts) return { rowSolvesPerFrame: (xpbdRows(this.variant) * nc + otherRows + 3 * this.contacts.contacts.points) * iterations * substeps };
    return {
      rowSolvesPerFrame: (xpbdRows(this.variant) * nc + otherRows) * iterations * substeps,
      dispatchesPerFrame: (2 + colourDispatches * iterations) * substeps,
      iterationBytesPerFrame: xpbdIterationBytes(nc, iterations) * substeps,
    };
  }

  override destroy(): void {
    this.contacts?.destroy();
    super.destroy();
    this.params.destroy();
    this.passInfo.destroy();
  }
}

/**
 * Bytes the constraint-solve kernels (solve_colour, every colour) move in one substep
 * of `iterations` iterations, at the layout of kernels.wgsl.ts (f32), counting each
 * element read or written once, per constraint and iteration:
 *   bodies 8, anchors 32, compliance 4, body_mass 2×64 (I_local⁻¹ and m⁻¹),
 *   pose 2×32 read + 2×32 written, multiplier 16 written (+16 read after the first iteration) = 316
 * The body passes around them (integrate ≈ 148 B and update_velocities ≈ 100 B per
 * dynamic body, see the kernels) are not counted, as jacobiIterationBytes leaves out
 * the stages outside its iterations.
 */
export function xpbdIterationBytes(constraintCount: number, iterations: number): number {
  return constraintCount * (316 * iterations + 16 * Math.max(0, iterations - 1));
}
