/**
 * xpbd-gpu's contact stages, host side (WGSL and the records in contacts.wgsl.ts; the f64 twin is
 * xpbd/contacts.ts). The contact pipeline is contacts/gpu-contacts.ts in its 'sequential' mode — GPU
 * collision, the pair table that finds last frame's manifold of each pair, cj_match's carrying of the old
 * points' forces, and the per-frame colouring of the manifolds (gpu/colouring.ts) with an overflow set — and
 * this module adds XPBD's own per-point records and kernels on top of it, no second pipeline.
 *
 * A frame, recorded with no readback (the per-pair stages' sizes come from the broad phase's pair counter,
 * the colours' from the colouring's counters, as indirect dispatches):
 *   collide            GpuContacts collide; xc_inertia (I⁻¹ in the world frame for cj_frame_bodies); GpuContacts
 *                      prepare (records, matching, colouring); xc_match, xc_prepare (xpbd/contacts.ts begin)
 *   per substep, after integrate positions
 *     (restitution)      xc_save_velocity (Ṽ), xc_begin_substep (ṽ_n, s̃ per point); only where a body has e > 0
 *   per substep, after each iteration's joints
 *     project contacts   xc_project_colour for colours 0 .. D−1 (D = CONTACT_DISPATCHED_COLOURS), then
 *                        xc_project_tail (one workgroup: the late colours, then the overflow set by one thread)
 *   per substep, after update_velocities
 *     velocity pass      (where a body has e > 0) xc_collide in one workgroup, xc_apply_colour for colours
 *                        0 .. D−1, xc_apply_tail; then xc_velocity_colour for colours 0 .. D−1, xc_velocity_tail
 *   end of the frame   xc_store (storeImpulses), GpuContacts store (the records kept for the next frame)
 */
import type { BodyDesc } from '../../model/world.js';
import { GpuContacts } from '../../contacts/gpu-contacts.js';
import { Kernel } from '../../gpu/dispatch.js';
import { buildKernels } from '../../gpu/kernels.js';
import { UNIFORM_OFFSET_ALIGNMENT } from '../../gpu/layout.js';
import { COUNTER_PAIRS } from '../../collision/gpu-broadphase.js';
import { baumgarteContacts } from '../../rows/block-solver.js';
import { PUSH_OUT_SPEED } from './contacts.js';
import { RESTITUTION_THREADS, RestitutionSlotRecord, TAIL_THREADS } from '../../contacts/gpu-contacts.wgsl.js';
import { CONTACT_DISPATCHED_COLOURS } from '../../gpu/colouring.js';
import {
  XPBD_CONTACT_KERNELS,
  XpbdContactParamsRecord,
  XpbdPointRecord,
  XpbdSlotRecord,
  xpbdContactKernel,
  xpbdContactKernelSource,
  type XpbdContactBufferName,
} from './contacts.wgsl.js';

/** The solver's buffers the contact kernels read and write (xpbd/kernels.wgsl.ts legend). */
export interface XpbdBodyBuffers {
  pose: GPUBuffer;
  pose_prev: GPUBuffer;
  velocity: GPUBuffer;
  body_mass: GPUBuffer;
}

export class XpbdContactStages {
  private readonly own = new Map<XpbdContactBufferName, GPUBuffer>();
  private readonly groups = new Map<string, GPUBindGroup>();
  private readonly params: GPUBuffer;
  private readonly slots: GPUBuffer;
  private readonly velocityDelta: GPUBuffer;
  /** a body has e > 0: restitution's stages run (xc_save_velocity, xc_begin_substep, xc_collide, xc_apply_*) */
  private readonly elastic: boolean;
  /** xc_collide's RestitutionSlot: (h g, K), written by configure; null where no body has e > 0 */
  private readonly restitutionSlot: GPUBuffer | null = null;
  /** every buffer a kernel may bind, by name */
  private readonly all: Map<XpbdContactBufferName, GPUBuffer>;
  /** xc_residual and its bind groups (λ as it stands, λ read as 0), made by the first frame that records residuals */
  private residual: { kernel: Kernel; groups: [GPUBindGroup, GPUBindGroup] } | null = null;

  private constructor(
    private readonly device: GPUDevice,
    readonly contacts: GpuContacts,
    private readonly kernels: Map<string, Kernel>,
    bodies: XpbdBodyBuffers,
    worldInertia: GPUBuffer,
    velocityDelta: GPUBuffer,
    worldBodies: readonly BodyDesc[],
    private readonly bodyCount: number,
  ) {
    this.velocityDelta = velocityDelta;
    this.elastic = worldBodies.some((b) => (b.restitution ?? 0) > 0);
    const cap = contacts.collision.broad.pairCapacity;
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const make = (name: XpbdContactBufferName, size: number) => {
      const b = device.createBuffer({ label: `xpbd contacts ${name}`, size: Math.max(16, size), usage: storage });
      this.own.set(name, b);
      return b;
    };
    make('xpbd_points', 4 * XpbdPointRecord.stride * cap);
    make('prev_xpbd_points', 4 * XpbdPointRecord.stride * cap);
    // collide's Ṽ (xc_save_velocity), only where something bounces
    make('pre_velocity', this.elastic ? 32 * bodyCount : 16);
    const radius = new Float32Array(Math.max(4, bodyCount)).fill(-1);
    worldBodies.forEach((b, i) => {
      if (b.shape.type === 'sphere') radius[i] = b.shape.radius;
    });
    device.queue.writeBuffer(make('sphere_radius', radius.byteLength), 0, radius);
    this.own.set('world_inertia', worldInertia);
    const col = contacts.colouring!;
    const all = (this.all = new Map<XpbdContactBufferName, GPUBuffer>([
      ...this.own,
      ['pose', bodies.pose], ['pose_prev', bodies.pose_prev], ['velocity', bodies.velocity], ['body_mass', bodies.body_mass],
      ['counters', contacts.buffer('counters')], ['found', contacts.buffer('found')], ['prev_manifolds', contacts.buffer('prev_manifolds')],
      ['prev_points', contacts.buffer('prev_points')], ['manifolds', contacts.buffer('manifolds')], ['points', contacts.buffer('points')],
      ['materials', contacts.buffer('materials')], ['offsets', col.offsets], ['order', col.order],
    ]));
    this.params = device.createBuffer({ label: 'xpbd contacts params', size: XpbdContactParamsRecord.stride, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    // XpbdSlot (colour c, first) at slot 2c + first, UNIFORM_OFFSET_ALIGNMENT apart: the dispatched colours
    // c = 0 .. D − 1, and c = D for the tail (the late colours and the overflow set, one workgroup)
    const K = CONTACT_DISPATCHED_COLOURS, count = 2 * (K + 1);
    this.slots = device.createBuffer({ label: 'xpbd contacts slots', size: UNIFORM_OFFSET_ALIGNMENT * count, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const sv = new DataView(new ArrayBuffer(UNIFORM_OFFSET_ALIGNMENT * count));
    for (let c = 0; c <= K; c++)
      for (let first = 0; first < 2; first++) {
        const o = UNIFORM_OFFSET_ALIGNMENT * (2 * c + first);
        sv.setUint32(o + XpbdSlotRecord.offsets.colour, c, true);
        sv.setUint32(o + XpbdSlotRecord.offsets.first, first, true);
      }
    device.queue.writeBuffer(this.slots, 0, sv.buffer);
    if (this.elastic) this.restitutionSlot = device.createBuffer({ label: 'xpbd contacts restitution slot', size: RestitutionSlotRecord.stride, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    for (const [name, kernel] of kernels) {
      const decl = xpbdContactKernel(name);
      const storageBuffers = decl.bindings.map(([b]) => all.get(b)!);
      if (decl.over === 'restitution') this.groups.set(name, kernel.bind([this.params, { buffer: this.restitutionSlot!, size: RestitutionSlotRecord.stride }, ...storageBuffers]));
      else if (decl.over === 'colour' || decl.over === 'tail') {
        for (let c = 0; c <= K; c++)
          for (let first = 0; first < 2; first++) {
            const slot = { buffer: this.slots, offset: UNIFORM_OFFSET_ALIGNMENT * (2 * c + first), size: XpbdSlotRecord.stride };
            this.groups.set(`${name}:${c}:${first}`, kernel.bind([this.params, slot, ...storageBuffers]));
          }
      } else this.groups.set(name, kernel.bind([this.params, ...storageBuffers]));
    }
  }

  /**
   * The contact stages over xpbd-gpu's body buffers (`bodyCount` with the world anchors; `worldBodies` with
   * shapes and materials), with `capacity` pair slots (contacts/gpu-contacts.ts contactPairCapacity).
   */
  static async create(device: GPUDevice, bodyCount: number, worldBodies: readonly BodyDesc[], inverseMass: ArrayLike<number>, capacity: number, bodies: XpbdBodyBuffers): Promise<XpbdContactStages> {
    const n = worldBodies.length;
    const fixed = Array.from({ length: n }, (_, i) => inverseMass[i] === 0);
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    // I⁻¹ in the world frame at the frame's start (xc_inertia) for the pipeline's records, and the velocity
    // changes buffer its sequential mode binds (cj_fold; no xpbd stage runs it: XPBD has no warm start on V)
    const worldInertia = device.createBuffer({ label: 'xpbd contacts world inertia', size: 64 * Math.max(1, bodyCount), usage: storage });
    const velocityDelta = device.createBuffer({ label: 'xpbd contacts velocity delta', size: 32 * Math.max(1, bodyCount), usage: storage });
    // restitution's collision kernels only where something bounces (the others compile none of them)
    const elastic = worldBodies.some((b) => (b.restitution ?? 0) > 0);
    const collisionKernels = new Set(['xc_save_velocity', 'xc_collide', 'xc_apply_colour', 'xc_apply_tail']);
    const [contacts, kernels] = await Promise.all([
      GpuContacts.create(device, bodyCount, worldBodies, fixed, capacity, { pose: bodies.pose, velocity: bodies.velocity, velocity_delta: velocityDelta, inverse_mass: worldInertia }, 'sequential'),
      buildKernels(device, 'xpbd contacts', () =>
        new Map(XPBD_CONTACT_KERNELS.filter((k) => elastic || !collisionKernels.has(k.name)).map((k) => [k.name, Kernel.create(device, k.name, xpbdContactKernelSource(k.name))])),
      ),
    ]);
    return new XpbdContactStages(device, contacts, kernels, bodies, worldInertia, velocityDelta, worldBodies, bodyCount);
  }

  /**
   * The substep h and the frame's dt (the speculative margins), |g|. The pipeline's contact rule is read by
   * none of these stages (its spring and slop feed the velocity solvers' records only); cj_match's reach
   * uses the pair's slop, as the CPU store's matching does. λ is carried in full (warm 1): the first iterate
   * h² f of xpbd/contacts.ts begin.
   */
  configure(h: number, dt: number, gravity: ArrayLike<number>, beta: number, restitutionThreshold: number): void {
    this.contacts.configure(h, dt, gravity, baumgarteContacts(beta, restitutionThreshold), 1);
    const R = XpbdContactParamsRecord, v = new DataView(new ArrayBuffer(R.stride));
    R.write(v, 0, 'h', h);
    R.write(v, 0, 'inv_h', 1 / h);
    R.write(v, 0, 'inv_h2', 1 / (h * h));
    R.write(v, 0, 'push', PUSH_OUT_SPEED * h);
    R.write(v, 0, 'body_count', this.bodyCount);
    R.write(v, 0, 'capacity', this.contacts.collision.broad.pairCapacity);
    R.write(v, 0, 'pair_counter', COUNTER_PAIRS);
    R.write(v, 0, 'restitution_threshold', restitutionThreshold);
    this.device.queue.writeBuffer(this.params, 0, v.buffer);
    if (this.restitutionSlot) {
      // xc_collide: g_n's h g (the prediction's gravity in Ṽ), and the colours K (then the overflow set)
      const S = RestitutionSlotRecord, sv = new DataView(new ArrayBuffer(S.stride));
      S.write(sv, 0, 'gravity_step', h * gravity[0], h * gravity[1], h * gravity[2]);
      S.write(sv, 0, 'colours', this.contacts.colouring!.maxColours);
      this.device.queue.writeBuffer(this.restitutionSlot, 0, sv.buffer);
    }
  }

  /** Jointed pairs never collide (the pipeline's joint list). */
  setJoints(ib0: ArrayLike<number>, ib1: ArrayLike<number>, count: number): void {
    this.contacts.setJoints(ib0, ib1, count);
  }

  private perPair(pass: GPUComputePassEncoder, name: string): void {
    const args = this.contacts.collision.broad.pairArgs;
    this.kernels.get(name)!.dispatchIndirect(pass, this.groups.get(name)!, args.buffer, args.offset);
  }

  /** collide: the pipeline at the frame's start pose, its records and colouring, and xpbd/contacts.ts begin. */
  recordCollide(pass: GPUComputePassEncoder): void {
    this.contacts.recordCollide(pass);
    this.kernels.get('xc_inertia')!.dispatch(pass, this.groups.get('xc_inertia')!, this.bodyCount);
    this.contacts.recordPrepare(pass);
    this.perPair(pass, 'xc_match');
    this.perPair(pass, 'xc_prepare');
  }

  /**
   * The colours in order, of kernel pair `stage` ('project', 'velocity' or 'apply'): colours 0 .. D − 1 one
   * dispatch each (D = CONTACT_DISPATCHED_COLOURS), then the late colours and the overflow set in one workgroup.
   */
  private sweep(pass: GPUComputePassEncoder, stage: 'project' | 'velocity' | 'apply', first: boolean): void {
    const col = this.contacts.colouring!;
    const D = CONTACT_DISPATCHED_COLOURS, f = first ? 1 : 0;
    const colour = this.kernels.get(`xc_${stage}_colour`)!, tail = this.kernels.get(`xc_${stage}_tail`)!;
    for (let c = 0; c < D; c++) {
      const args = col.colourArgs(c);
      colour.dispatchIndirect(pass, this.groups.get(`xc_${stage}_colour:${c}:${f}`)!, args.buffer, args.offset);
    }
    tail.dispatch(pass, this.groups.get(`xc_${stage}_tail:${D}:${f}`)!, TAIL_THREADS, TAIL_THREADS);
  }

  /** project contacts: one iteration's sweep (`first`: the substep's first iteration). */
  recordProject(pass: GPUComputePassEncoder, first: boolean): void {
    this.sweep(pass, 'project', first);
  }

  /**
   * beginSubstep's ṽ_n per point (restitution's input), after integrate positions; nothing where no body has
   * e > 0 (their velocity pass reads no ṽ_n: the same dispatches and bits as before restitution).
   */
  recordBeginSubstep(pass: GPUComputePassEncoder): void {
    if (!this.elastic) return;
    this.kernels.get('xc_save_velocity')!.dispatch(pass, this.groups.get('xc_save_velocity')!, this.bodyCount);
    this.perPair(pass, 'xc_begin_substep');
  }

  /**
   * velocity pass, after update_velocities: where a body has e > 0 first collide (xpbd/contacts.ts: xc_collide's
   * collisions on Ṽ in one workgroup, then xc_apply_* colour by colour), then the velocity sweep.
   */
  recordVelocityPass(pass: GPUComputePassEncoder): void {
    this.perPair(pass, 'xc_advance_slip');
    if (this.elastic) {
      this.kernels.get('xc_collide')!.dispatch(pass, this.groups.get('xc_collide')!, RESTITUTION_THREADS, RESTITUTION_THREADS);
      this.sweep(pass, 'apply', false);
    }
    this.sweep(pass, 'velocity', false);
  }

  /** store impulses, at the frame's end: the forces onto the records, then the records kept for the next frame. */
  recordStore(pass: GPUComputePassEncoder): void {
    this.perPair(pass, 'xc_store');
    this.contacts.recordStore(pass);
  }

  /**
   * Readies a frame that records the contact rows' residual at `records` record points (xpbd-gpu's
   * stepRecordingResiduals): the contact stages' per-manifold squares and sums (GpuContacts.beginResiduals),
   * and xc_residual (contacts.wgsl.ts XPBD_RESIDUAL_KERNELS), built at the first such frame only.
   */
  async beginResiduals(records: number): Promise<void> {
    await this.contacts.beginResiduals(records);
    if (this.residual) return;
    const [kernel] = await buildKernels(this.device, 'xpbd contacts residual', () => [Kernel.create(this.device, 'xc_residual', xpbdContactKernelSource('xc_residual'))]);
    this.all.set('residual', this.contacts.buffer('residual'));
    const storageBuffers = xpbdContactKernel('xc_residual').bindings.map(([b]) => this.all.get(b)!);
    const group = (first: number) => kernel.bind([this.params, { buffer: this.slots, offset: UNIFORM_OFFSET_ALIGNMENT * first, size: XpbdSlotRecord.stride }, ...storageBuffers]);
    // XpbdSlot 0 is (colour 0, first 0), slot 1 (colour 0, first 1): λ as it stands, and λ read as 0
    this.residual = { kernel, groups: [group(0), group(1)] };
  }

  /**
   * One record point of the contact rows' residual (after beginResiduals): xc_residual per manifold, then the
   * sum appended; `start`: the substep's start, before its first projection (λ read as 0, as beginSubstep sets it).
   */
  recordResidual(pass: GPUComputePassEncoder, start: boolean): void {
    const r = this.residual;
    if (!r) throw new Error('xpbd contacts: recordResidual before beginResiduals');
    const args = this.contacts.collision.broad.pairArgs;
    r.kernel.dispatchIndirect(pass, r.groups[start ? 1 : 0], args.buffer, args.offset);
    this.contacts.recordResidualSum(pass);
  }

  destroy(): void {
    for (const b of this.own.values()) b.destroy();
    this.velocityDelta.destroy();
    this.params.destroy();
    this.slots.destroy();
    this.restitutionSlot?.destroy();
    this.contacts.destroy();
  }
}
