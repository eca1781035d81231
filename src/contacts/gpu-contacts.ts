/**
 * The contact stages on the GPU, in two solving modes: 'jacobi', jacobi-gpu's contacts, the twin of
 * contacts/jacobi-contact-solver.ts (jacobi-cpu's mass-split Jacobi variant); 'sequential', softstep-gpu's,
 * the twin of contacts/contact-solver.ts's Gauss-Seidel solve and relax with the true masses, swept colour
 * by colour (gpu/colouring.ts every frame; the CPU twin in the same order: ContactSolver.colourOrder).
 * A third mode, 'prepare', is the pipeline alone for a solver that brings its own solve (avbd-gpu): collide,
 * prepare contacts as the Jacobi mode prepares them (the same records, shares and CSR) and store impulses;
 * none of the sweeps' kernels is built, and the manifold colouring and restitution pass only where some body bounces.
 * Stage for stage, with the CPU's names; WGSL in gpu-contacts.wgsl.ts (its header has the records and why
 * the body sums are gathers). Below, the Jacobi mode; the sequential one shares collide, prepare contacts
 * (with n_i = 1, the soft rule's spring and the colouring), the warm start (gathered, then folded into V:
 * recordFold) and store impulses, and sweeps with recordSequentialSweep.
 *
 * A frame, recorded with no readback (the sizes of every per-pair stage come from the broad phase's
 * pair counter, as indirect dispatches):
 *   collide            collision/gpu-collision.ts: body boxes, broad phase, narrow phase (manifold k of pair k)
 *   prepare contacts   cj_frame_bodies (x⁰, q⁰, I⁻¹ of the frame's start, after the solver's compute_inertia);
 *                      the pair table (gpu/pair-table.ts) rebuilt from last frame's manifolds and looked up
 *                      by this frame's pairs; cj_points (the records, λ = 0); cj_match (λ⁰ = f · λ of the
 *                      matching old points); cj_prepare (masses, μ, slop, spring; the bodies' manifolds
 *                      counted); the counts scanned into the CSR's row starts (gpu/scan.ts); cj_share
 *                      (n_i = manifolds + joints); cj_fill (the CSR's entries, the split effective
 *                      masses); cj_sort (each row by the other body: a sum order independent of threads)
 *   per substep        restitution (only where some body has e > 0): cs_restitution, collision propagation on V
 *                      colour by colour in one workgroup (the colouring is then made in this mode too)
 *                      warm start: cj_totals, cj_gather (after the joints' update_velocities)
 *                      solve: per sweep cj_solve (forwards on even sweeps, cj_solve_reverse on odd ones),
 *                      then the joints' update_velocities and cj_gather
 *                      integrate positions: cj_pose (Δx, Δθ since the frame's start: K1) after compute_positions
 *   store impulses     cj_keep: the records and the pair count kept as last frame's (λ lives in the records)
 *
 * What it does not do (yet): sleeping (every body is awake) and the coherence shortcut of the CPU pipeline (every pair goes through
 * the narrow phase each frame: jacobi-cpu with coherence off is its exact twin). The residual diagnostics (beginResiduals,
 * recordResidual, readResiduals) are recorded only into a frame that asks for them.
 *
 * Capacity: `pairCapacity` pair slots. A frame that finds more pairs drops the rest (the broad phase
 * counts them); overflow() reads the count, and the solver checks it at every snapshot and throws.
 */
import type { BodyDesc } from '../model/world.js';
import { leastHalfSize, massProperties } from '../model/world.js';
import { GpuCollision } from '../collision/gpu-collision.js';
import { COUNTER_PAIRS } from '../collision/gpu-broadphase.js';
import { CollisionPipeline, DEFAULT_FRICTION, DEFAULT_RESTITUTION } from '../collision/pipeline.js';
import { GpuPairTable } from '../gpu/pair-table.js';
import { PrefixScan, type ScanPlan } from '../gpu/scan.js';
import { GpuColouring, CONTACT_COLOUR_ROUNDS, CONTACT_DISPATCHED_COLOURS, CONTACT_MAX_COLOURS } from '../gpu/colouring.js';
import { UNIFORM_OFFSET_ALIGNMENT } from '../gpu/layout.js';
import { Kernel } from '../gpu/dispatch.js';
import { buildKernels } from '../gpu/kernels.js';
import { readBuffers, type StagePass } from '../gpu/frames.js';
import { softness } from '../rows/softness.js';
import type { ContactRule } from '../rows/block-solver.js';
import {
  CONTACT_KERNELS,
  RESIDUAL_SUM_THREADS,
  ContactBodyRecord,
  ContactParamsRecord,
  ColourSlotRecord,
  RestitutionSlotRecord,
  RESTITUTION_THREADS,
  TAIL_THREADS,
  contactKernelSlotted,
  ManifoldTotalRecord,
  MaterialRecord,
  SolverManifoldRecord,
  SolverPointRecord,
  contactKernelBindings,
  contactKernelSource,
  type ContactBufferName,
} from './gpu-contacts.wgsl.js';

/** F32's largest finite value: a plane's "size" (it never sets a pair's slop). */
const F32_MAX = 3.4028234663852886e38;

/** The solver's buffers the contact stages read and write (jacobi/kernels.wgsl.ts legend). */
export interface SolverBodyBuffers {
  pose: GPUBuffer;
  velocity: GPUBuffer;
  velocity_delta: GPUBuffer;
  inverse_mass: GPUBuffer;
}

/** One manifold as read back (tests and tools). */
export interface GpuContactManifold {
  bodyA: number;
  bodyB: number;
  normal: number[];
  slop: number;
  muStatic: number;
  points: { armA: number[]; armB: number[]; s0: number; mu: number; lambda: number[]; id: number; anchorA: number[]; mass: number[]; tangentInverse: number[] }[];
}

/** Whether some body has a coefficient of restitution e > 0 (a pair takes max(e_A, e_B): then some pair may bounce). */
function anyElastic(bodies: readonly BodyDesc[]): boolean {
  return bodies.some((b) => (b.restitution ?? DEFAULT_RESTITUTION) > 0);
}

/**
 * A frame's contacts as the GPU counted them (read at a snapshot, GpuContacts.overflow): the broad phase's
 * pairs (within the capacity), the manifolds with points among them, their points, and where the solver
 * colours them (softstep-gpu), the colours' sizes in manifolds (colour 0 first) and the overflow set's.
 */
export type GpuContactStats = import('../solvers/solver.js').SolverContactStats;

/**
 * Pair slots per body at the least: a box in a settled pile touches about 6 others and each pair is one
 * slot, shared by its two bodies; the broad phase's boxes (grown by the speculative margin) add near misses.
 */
export const CONTACT_PAIRS_PER_BODY = 8;
/** Slots per pair found at the start pose (contactPairCapacity): room for a pile that settles or is struck. */
export const START_PAIR_HEADROOM = 1.5;

/**
 * The pair slots of the GPU contact stages for a world: max(256, CONTACT_PAIRS_PER_BODY n, ⌈1.5 P₀⌉), with
 * P₀ the CPU broad phase's candidate pairs at the start pose (collision/pipeline.ts candidatePairs: the
 * same speculative margins for the frame's dt, at the bodies' starting velocities). A dense build packs
 * more than 8 per body: the `brick-wall` of 110k bricks (22 wythes, 1 cm joints) has 9.5 pairs a brick
 * at rest, 1.05 M against the 884 k slots of 8 a body, and stopped at frame 1. Every slot costs its
 * records on the GPU, so the count follows the scene rather than a larger constant for every scene. A
 * frame that still finds more is reported at the next snapshot (the solvers' overflow check), not
 * dropped in silence.
 */
export function contactPairCapacity(bodies: readonly BodyDesc[], w: { position: Float64Array; orientation: Float64Array; linearVelocity: Float64Array; angularVelocity: Float64Array; inverseMass: Float64Array; gravity: ArrayLike<number> }, dt: number): number {
  const n = bodies.length;
  const floor = Math.max(256, CONTACT_PAIRS_PER_BODY * n);
  if (n < 2) return floor;
  const pipeline = new CollisionPipeline(bodies, w.inverseMass.subarray(0, n));
  const g = w.gravity;
  const found = pipeline.candidatePairs(w.position, w.orientation, w.linearVelocity, w.angularVelocity, dt, Math.hypot(g[0], g[1], g[2]));
  return Math.max(floor, Math.ceil(START_PAIR_HEADROOM * found));
}

/**
 * 'jacobi': the mass-split Jacobi sweep (jacobi-gpu); 'sequential': Gauss-Seidel colour by colour (softstep-gpu);
 * 'prepare': collide, prepare contacts (as 'jacobi' prepares them: split shares) and store impulses only, for a
 * solver with its own contact solve (avbd-gpu): no sweep, warm start or pose; the manifold colouring and the
 * restitution pass only where some body bounces (avbd-gpu's restitution stage records it)
 */
export type ContactMode = 'jacobi' | 'sequential' | 'prepare';

/** The kernels of the stages every mode records: collide's are gpu-collision.ts's; prepare contacts, store impulses. */
const PREPARE_KERNELS = new Set(['cj_frame_bodies', 'cj_points', 'cj_match', 'cj_prepare', 'cj_share', 'cj_fill', 'cj_sort', 'cj_keep']);

/**
 * Whether `mode` uses kernel `name` (WGSL compiles are the slow part of creating a solver on SwiftShader: each mode
 * builds its own). The sweeps' kernels are each solving mode's own, the warm start's and the pose's both solving
 * modes'; cs_restitution is every mode's where some body bounces; 'prepare' has the shared stages besides.
 */
function modeUses(mode: ContactMode, name: string, elastic: boolean): boolean {
  if (PREPARE_KERNELS.has(name)) return true;
  if (name === 'cs_restitution') return elastic;
  if (mode === 'prepare') return false;
  if (name === 'cj_solve' || name === 'cj_solve_reverse') return mode === 'jacobi';
  if (name === 'cj_fold' || contactKernelSlotted(name)) return mode === 'sequential';
  return true;
}

/** The sequential sweeps' modes (ColourSlot use_bias, reverse): solve forwards and backwards, relax forwards. */
const SLOT_MODES = [
  { useBias: true, reverse: false },
  { useBias: true, reverse: true },
  { useBias: false, reverse: false },
] as const;

export class GpuContacts {
  private readonly buffers = new Map<ContactBufferName, GPUBuffer>();
  private readonly kernels = new Map<string, { kernel: Kernel; group: GPUBindGroup }>();
  private readonly params: GPUBuffer;
  private readonly scanPlan: ScanPlan;
  private warm = 0;
  /**
   * the per-frame colouring of the manifolds (gpu/colouring.ts): the sequential mode's, and the jacobi
   * mode's when `elastic` (the restitution pass sweeps colour by colour in both modes); else null
   */
  readonly colouring: GpuColouring | null;
  /** some body has e > 0 (and the mode solves): the restitution pass is recorded (a scene without it has no such dispatch) */
  readonly elastic: boolean;
  /** RestitutionSlot uniforms (0: with this step's forces in V, 1: without) and cs_restitution's bind groups */
  private readonly restitutionSlots: GPUBuffer | null = null;
  private readonly restitutionGroups: GPUBindGroup[] = [];
  /** sequential mode: per body bit 0 = static (the colouring's flags) */
  private readonly staticFlags: GPUBuffer | null = null;
  /** sequential mode: ColourSlot uniforms, SLOT_MODES per colour 0 .. K, and their bind groups per kernel */
  private readonly slots: GPUBuffer | null = null;
  private readonly slotGroups = new Map<string, GPUBindGroup>();

  private constructor(
    private readonly device: GPUDevice,
    /** bodies of the solver's buffers (world bodies and joint anchors) */
    readonly bodyCount: number,
    readonly collision: GpuCollision,
    readonly table: GpuPairTable,
    scan: PrefixScan,
    kernels: Map<string, Kernel>,
    solver: SolverBodyBuffers,
    bodies: readonly BodyDesc[],
    colouring: GpuColouring | null,
    fixed: ArrayLike<boolean | number>,
    readonly mode: ContactMode,
  ) {
    this.colouring = colouring;
    this.elastic = anyElastic(bodies);
    const cap = collision.broad.pairCapacity;
    const nb = bodyCount;
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const make = (name: ContactBufferName, size: number) => {
      const b = device.createBuffer({ label: `contacts ${name}`, size: Math.max(16, size), usage: storage });
      this.buffers.set(name, b);
      return b;
    };
    make('manifolds', SolverManifoldRecord.stride * cap);
    make('points', 4 * SolverPointRecord.stride * cap);
    make('prev_manifolds', SolverManifoldRecord.stride * cap);
    make('prev_points', 4 * SolverPointRecord.stride * cap);
    make('prev_count', 4);
    make('contact_body', ContactBodyRecord.stride * nb);
    make('materials', MaterialRecord.stride * nb);
    make('body_count', 4 * (nb + 1));
    make('cursor', 4 * nb);
    make('entries', 4 * 2 * cap);
    make('joint_share', 4 * nb);
    make('totals', ManifoldTotalRecord.stride * cap);
    make('stats', 16);
    this.buffers.set('counters', collision.broad.counters.buffer);
    this.buffers.set('narrow_manifolds', collision.narrow.manifolds);
    this.buffers.set('narrow_points', collision.narrow.points);
    this.buffers.set('found', table.found);
    for (const k of ['pose', 'velocity', 'velocity_delta', 'inverse_mass'] as const) this.buffers.set(k, solver[k]);
    this.params = device.createBuffer({ label: 'contacts params', size: ContactParamsRecord.stride, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    // materials: μ_d, μ_s, e, least half size (pipeline.ts's per-body arrays; anchors: no shape, never paired)
    const mv = new DataView(new ArrayBuffer(MaterialRecord.stride * nb));
    for (let i = 0; i < nb; i++) {
      const b = bodies[i];
      const size = b ? leastHalfSize(b.shape) : Infinity;
      MaterialRecord.write(mv, i, 'friction', b ? (b.dynamicFriction ?? b.friction ?? DEFAULT_FRICTION) : 0);
      MaterialRecord.write(mv, i, 'static_friction', b ? (b.staticFriction ?? b.friction ?? DEFAULT_FRICTION) : 0);
      MaterialRecord.write(mv, i, 'restitution', b ? (b.restitution ?? DEFAULT_RESTITUTION) : 0);
      MaterialRecord.write(mv, i, 'size', Number.isFinite(size) ? size : F32_MAX);
    }
    device.queue.writeBuffer(this.buffers.get('materials')!, 0, mv.buffer);
    this.scanPlan = scan.plan(this.buffers.get('body_count')!, nb + 1);
    // the pair table: last frame's SolverManifold records keyed by (body_a, body_b) words; queries: this frame's pairs
    const words = SolverManifoldRecord.stride / 4;
    table.configure(
      { stride: words, offsetA: SolverManifoldRecord.offsets.body_a / 4, offsetB: SolverManifoldRecord.offsets.body_b / 4 },
      { stride: 2, offsetA: 0, offsetB: 1 },
    );
    if (colouring) {
      this.buffers.set('offsets', colouring.offsets);
      this.buffers.set('order', colouring.order);
      colouring.configure(nb, { stride: words, offsetA: SolverManifoldRecord.offsets.body_a / 4, offsetB: SolverManifoldRecord.offsets.body_b / 4 });
      const flags = new Uint32Array(Math.max(4, nb));
      for (let i = 0; i < nb; i++) flags[i] = i >= fixed.length || fixed[i] ? 1 : 0;
      this.staticFlags = device.createBuffer({ label: 'contacts static flags', size: flags.byteLength, usage: storage });
      device.queue.writeBuffer(this.staticFlags, 0, flags);
      // ColourSlot (c, use_bias, reverse) at slot SLOT_MODES · c + mode, UNIFORM_OFFSET_ALIGNMENT apart, for the
      // dispatched colours c = 0 .. D − 1 and the tail (c = D: its colours and the overflow set, one workgroup)
      if (colouring.maxColours !== CONTACT_MAX_COLOURS) throw new Error(`contacts: a colouring of ${colouring.maxColours} colours; the tail sweep is compiled for ${CONTACT_MAX_COLOURS}`);
      const K = CONTACT_DISPATCHED_COLOURS;
      const count = SLOT_MODES.length * (K + 1);
      this.slots = device.createBuffer({ label: 'contacts colour slots', size: UNIFORM_OFFSET_ALIGNMENT * count, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      const sv = new DataView(new ArrayBuffer(UNIFORM_OFFSET_ALIGNMENT * count));
      for (let c = 0; c <= K; c++)
        SLOT_MODES.forEach((m, j) => {
          const o = UNIFORM_OFFSET_ALIGNMENT * (SLOT_MODES.length * c + j);
          sv.setUint32(o + ColourSlotRecord.offsets.colour, c, true);
          sv.setUint32(o + ColourSlotRecord.offsets.use_bias, m.useBias ? 1 : 0, true);
          sv.setUint32(o + ColourSlotRecord.offsets.reverse, m.reverse ? 1 : 0, true);
        });
      device.queue.writeBuffer(this.slots, 0, sv.buffer);
    }
    if (this.elastic) {
      // RestitutionSlot: (h g, K) at slot 0 (V has the step's forces), (0, K) at slot 1; h g written by configure
      this.restitutionSlots = device.createBuffer({ label: 'contacts restitution slots', size: 2 * UNIFORM_OFFSET_ALIGNMENT, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    }
    for (const [name, kernel] of kernels) {
      const storageBuffers = contactKernelBindings(name).map((b) => this.buffers.get(b)!);
      if (name === 'cs_restitution') {
        if (!this.restitutionSlots) continue;
        for (let j = 0; j < 2; j++) this.restitutionGroups.push(kernel.bind([this.params, { buffer: this.restitutionSlots, offset: UNIFORM_OFFSET_ALIGNMENT * j, size: RestitutionSlotRecord.stride }, ...storageBuffers]));
        this.kernels.set(name, { kernel, group: this.restitutionGroups[0] });
        continue;
      }
      if (contactKernelSlotted(name)) {
        const K = CONTACT_DISPATCHED_COLOURS;
        for (let c = 0; c <= K; c++)
          for (let j = 0; j < SLOT_MODES.length; j++) {
            const slot = { buffer: this.slots!, offset: UNIFORM_OFFSET_ALIGNMENT * (SLOT_MODES.length * c + j), size: ColourSlotRecord.stride };
            this.slotGroups.set(`${name}:${c}:${j}`, kernel.bind([this.params, slot, ...storageBuffers]));
          }
        this.kernels.set(name, { kernel, group: this.slotGroups.get(`${name}:0:0`)! });
        continue;
      }
      this.kernels.set(name, { kernel, group: kernel.bind([this.params, ...storageBuffers]) });
    }
  }

  /**
   * The contact stages for the solver's bodies (`bodyCount` with its anchors; `bodies` the world's, with
   * shapes and materials; `fixed[i]`: body i never moves), with room for `pairCapacity` pairs.
   */
  static async create(device: GPUDevice, bodyCount: number, bodies: readonly BodyDesc[], fixed: ArrayLike<boolean | number>, pairCapacity: number, solver: SolverBodyBuffers, mode: ContactMode = 'jacobi'): Promise<GpuContacts> {
    const elastic = anyElastic(bodies);
    const [collision, table, scan, kernels, colouring] = await Promise.all([
      GpuCollision.create(device, bodies.map((b) => b.shape), fixed, pairCapacity, {
        inverseMass: bodies.map((b, i) => (fixed[i] ? 0 : massProperties(b).inverseMass)),
        restitution: bodies.map((b) => b.restitution ?? DEFAULT_RESTITUTION),
      }),
      GpuPairTable.create(device, pairCapacity, pairCapacity),
      PrefixScan.create(device),
      // each mode's kernels only (modeUses)
      buildKernels(device, 'gpu contacts', () => new Map(CONTACT_KERNELS.filter((k) => modeUses(mode, k.name, elastic)).map((k) => [k.name, Kernel.create(device, k.name, contactKernelSource(k.name))]))),
      mode === 'sequential' || elastic ? GpuColouring.create(device, { capacity: pairCapacity, bodyCapacity: Math.max(1, bodyCount), maxColours: CONTACT_MAX_COLOURS, rounds: CONTACT_COLOUR_ROUNDS }) : Promise.resolve(null),
    ]);
    return new GpuContacts(device, bodyCount, collision, table, scan, kernels, solver, bodies, colouring, fixed, mode);
  }

  /**
   * The substep h, the frame's dt (the speculative margins), |g|, the contact rule (its spring at unit
   * mass: rows/softness.ts S3) and the warm-start factor; written for the next submission.
   */
  configure(h: number, dt: number, gravity: ArrayLike<number>, rule: ContactRule, warmStart: number): void {
    const g = Math.hypot(gravity[0], gravity[1], gravity[2]);
    this.collision.configure(dt, g);
    const unit = softness(rule.softness, h, 1);
    const fixedUnit = rule.staticSoftness ? softness(rule.staticSoftness, h, 1) : unit;
    const R = ContactParamsRecord, v = new DataView(new ArrayBuffer(R.stride));
    R.write(v, 0, 'body_count', this.bodyCount);
    R.write(v, 0, 'capacity', this.collision.broad.pairCapacity);
    R.write(v, 0, 'pair_counter', COUNTER_PAIRS);
    R.write(v, 0, 'warm', warmStart);
    R.write(v, 0, 'h', h);
    R.write(v, 0, 'inv_h', 1 / h);
    R.write(v, 0, 'max_pushout', rule.maxPushout);
    R.write(v, 0, 'rule_slop', rule.slop);
    R.write(v, 0, 'bias_rate', unit.biasRate);
    R.write(v, 0, 'mass_scale', unit.massScale);
    R.write(v, 0, 'impulse_scale', unit.impulseScale);
    R.write(v, 0, 'static_bias_rate', fixedUnit.biasRate);
    R.write(v, 0, 'static_mass_scale', fixedUnit.massScale);
    R.write(v, 0, 'static_impulse_scale', fixedUnit.impulseScale);
    R.write(v, 0, 'split', this.mode === 'sequential' ? 0 : 1);
    R.write(v, 0, 'restitution_threshold', rule.restitutionThreshold);
    const spec = rule.softness, fixedSpec = rule.staticSoftness ?? rule.softness;
    if (rule.sizeSpring && spec.kind === 'frequency' && fixedSpec.kind === 'frequency') {
      R.write(v, 0, 'size_spring', 1);
      R.write(v, 0, 'size_sag', rule.sizeSpring.sagFraction);
      R.write(v, 0, 'size_gravity', rule.sizeSpring.gravity);
      R.write(v, 0, 'size_cap_hertz', rule.sizeSpring.capHertz);
      R.write(v, 0, 'hertz', spec.hertz);
      R.write(v, 0, 'damping_ratio', spec.dampingRatio);
      R.write(v, 0, 'static_hertz', fixedSpec.hertz);
      R.write(v, 0, 'static_damping_ratio', fixedSpec.dampingRatio);
    }
    this.device.queue.writeBuffer(this.params, 0, v.buffer);
    if (this.restitutionSlots) {
      const S = RestitutionSlotRecord, sv = new DataView(new ArrayBuffer(2 * UNIFORM_OFFSET_ALIGNMENT));
      const K = this.colouring!.maxColours;
      S.write(sv, 0, 'gravity_step', h * gravity[0], h * gravity[1], h * gravity[2]);
      S.write(sv, 0, 'colours', K);
      S.write(new DataView(sv.buffer, UNIFORM_OFFSET_ALIGNMENT), 0, 'colours', K);
      this.device.queue.writeBuffer(this.restitutionSlots, 0, sv.buffer);
    }
    this.warm = warmStart;
  }

  /** The joints now: jointed pairs never collide, and each joint takes a share of its bodies' mass (n_i). */
  setJoints(ib0: ArrayLike<number>, ib1: ArrayLike<number>, count: number): void {
    this.collision.setJoints(ib0, ib1, count);
    const share = new Uint32Array(Math.max(4, this.bodyCount));
    for (let j = 0; j < count; j++) {
      if (ib0[j] >= 0 && ib0[j] < this.bodyCount) share[ib0[j]]++;
      if (ib1[j] >= 0 && ib1[j] < this.bodyCount) share[ib1[j]]++;
    }
    this.device.queue.writeBuffer(this.buffers.get('joint_share')!, 0, share);
  }

  /** Kernel `name` with its bind group; a stage of another mode is an error (its kernels were not built). */
  private kernel(name: string): { kernel: Kernel; group: GPUBindGroup } {
    const k = this.kernels.get(name);
    if (!k) throw new Error(`contacts: kernel ${name} is not built in the '${this.mode}' mode`);
    return k;
  }

  private perPair(pass: GPUComputePassEncoder, name: string): void {
    const k = this.kernel(name), args = this.collision.broad.pairArgs;
    k.kernel.dispatchIndirect(pass, k.group, args.buffer, args.offset);
  }

  private perBody(pass: GPUComputePassEncoder, name: string): void {
    const k = this.kernel(name);
    k.kernel.dispatch(pass, k.group, this.bodyCount);
  }

  /** collide: the GPU collision pipeline at the pose now (its three stages in the pass of `stage`). */
  recordCollide(pass: GPUComputePassEncoder): void {
    const b = this.buffers;
    this.collision.record(() => pass, b.get('pose')!, b.get('velocity')!);
  }

  /** prepare contacts (after the solver's compute_inertia at the frame's start pose). */
  recordPrepare(pass: GPUComputePassEncoder): void {
    const b = this.buffers;
    this.perBody(pass, 'cj_frame_bodies');
    this.perPair(pass, 'cj_points');
    if (this.warm > 0) {
      this.table.recordInsert(pass, b.get('prev_manifolds')!, { buffer: b.get('prev_count')!, offset: 0 });
      this.table.recordFind(pass, b.get('prev_manifolds')!, this.collision.broad.pairs, { buffer: b.get('counters')!, offset: 4 * COUNTER_PAIRS });
      this.perPair(pass, 'cj_match');
    }
    this.perPair(pass, 'cj_prepare');
    this.scanPlan.record(pass);
    this.perBody(pass, 'cj_share');
    this.perPair(pass, 'cj_fill');
    this.perBody(pass, 'cj_sort');
    // sequential mode: the manifolds coloured (those without points have no bodies: no conflict)
    if (this.colouring) this.colouring.record(pass, { pairs: this.buffers.get('manifolds')!, flags: this.staticFlags!, count: { buffer: this.buffers.get('counters')!, offset: 4 * COUNTER_PAIRS } });
  }

  /**
   * restitution (gpu-contacts.wgsl.ts cs_restitution: contact-solver.ts restitution's collision propagation,
   * colour by colour) on V in place, before the warm start; `forces`: V has this step's h g (taken out of
   * each approach), else it has none yet (softstep's pass before the relax). Nothing when no body bounces.
   */
  recordRestitution(pass: GPUComputePassEncoder, forces: boolean): void {
    if (!this.elastic) return;
    this.kernels.get('cs_restitution')!.kernel.dispatch(pass, this.restitutionGroups[forces ? 0 : 1], 1, RESTITUTION_THREADS);
  }

  /** Sequential mode, warm start: the gathered λ⁰ impulses folded into V (after recordWarmStart). */
  recordFold(pass: GPUComputePassEncoder): void {
    this.perBody(pass, 'cj_fold');
  }

  /**
   * Sequential mode: one Gauss-Seidel sweep over the manifolds on V in place, colour by colour: colours
   * 0 .. D − 1 one dispatch each (D = CONTACT_DISPATCHED_COLOURS), then the late colours and the overflow set
   * in one workgroup (cs_solve_tail: gpu-contacts.wgsl.ts tailSweepWgsl); `relax`: without the bias;
   * `reverse`: the tail first (the overflow set, then its colours, backwards), then colours D − 1 .. 0, and
   * each manifold's points backwards.
   */
  recordSequentialSweep(pass: GPUComputePassEncoder, relax: boolean, reverse: boolean): void {
    const col = this.colouring!;
    const D = CONTACT_DISPATCHED_COLOURS;
    const j = SLOT_MODES.findIndex((m) => m.useBias === !relax && m.reverse === reverse);
    if (j < 0) throw new Error(`contacts: no sweep mode relax=${relax} reverse=${reverse}`);
    const colour = this.kernels.get('cs_solve_colour')!.kernel, tail = this.kernels.get('cs_solve_tail')!.kernel;
    for (let x = 0; x <= D; x++) {
      const c = reverse ? D - x : x;
      if (c === D) tail.dispatch(pass, this.slotGroups.get(`cs_solve_tail:${c}:${j}`)!, TAIL_THREADS, TAIL_THREADS);
      else {
        const args = col.colourArgs(c);
        colour.dispatchIndirect(pass, this.slotGroups.get(`cs_solve_colour:${c}:${j}`)!, args.buffer, args.offset);
      }
    }
  }

  /** warm start, after the joints' update_velocities: ΔV += h M⁻¹ Jᵀ λ⁰ of the contacts. */
  recordWarmStart(pass: GPUComputePassEncoder): void {
    this.perPair(pass, 'cj_totals');
    this.perBody(pass, 'cj_gather');
  }

  /** solve, a sweep's first half (the manifolds; `reverse` on odd sweeps): then the joints' update_velocities, then recordGather. */
  recordSweep(pass: GPUComputePassEncoder, reverse: boolean): void {
    this.perPair(pass, reverse ? 'cj_solve_reverse' : 'cj_solve');
  }

  /** the sweep's gather, after the joints' update_velocities. */
  recordGather(pass: GPUComputePassEncoder): void {
    this.perBody(pass, 'cj_gather');
  }

  /** integrate positions, after compute_positions: the motion since the frame's start (K1). */
  recordPose(pass: GPUComputePassEncoder): void {
    this.perBody(pass, 'cj_pose');
  }

  /** store impulses: this frame's records kept for the next frame's matching. */
  recordStore(pass: GPUComputePassEncoder): void {
    this.perPair(pass, 'cj_keep');
  }

  /**
   * Pairs the broad phase found beyond the capacity in the last frame recorded (0: none lost); and, read with
   * them, that frame's figures (`stats`: pairs, manifolds with points, contact points, and in the sequential
   * mode the colouring's colour sizes and overflow set; the solver's cost line and the benchmark's colours).
   * One readback of three small counter buffers (a snapshot's, never a frame's).
   */
  async overflow(): Promise<number> {
    return this.overflowFrom(await readBuffers(this.device, this.overflowBuffers()));
  }

  /** The buffers overflow() reads, for a snapshot that reads them in its own readback (then overflowFrom). */
  overflowBuffers(): GPUBuffer[] {
    const col = this.colouring;
    return [this.collision.broad.counters.buffer, this.buffers.get('stats')!, ...(col ? [col.counters.buffer] : [])];
  }

  /** overflow() from the contents of overflowBuffers(), read back. */
  overflowFrom([c, st, cc]: ArrayBuffer[]): number {
    const col = this.colouring;
    const found = new Uint32Array(c)[COUNTER_PAIRS], cap = this.collision.broad.pairCapacity;
    const words = new Uint32Array(st);
    this.points = words[0];
    const pairs = Math.min(found, cap), manifolds = words[1];
    this.stats = { pairs, manifolds, points: words[0] };
    if (col && cc) {
      const counts = new Uint32Array(cc);
      const sizes = Array.from({ length: col.maxColours }, (_, k) => counts[col.sizeCounter(k)]);
      // a pair without points has no bodies (cj_points), so no neighbour: it takes colour 0 in the first
      // round; the colour sizes given are the manifolds with points (they are what a sweep solves)
      sizes[0] = Math.max(0, sizes[0] - (pairs - manifolds));
      let used = 0;
      sizes.forEach((n, k) => { if (n > 0) used = k + 1; });
      this.stats.colours = { used, sizes: sizes.slice(0, used), overflow: counts[col.sizeCounter(col.maxColours)] };
    }
    return Math.max(0, found - cap);
  }
  /** contact points of the frame last read by overflow() (a snapshot) */
  points = 0;
  /** the figures of the frame last read by overflow() (a snapshot), or null before the first */
  stats: GpuContactStats | null = null;

  /** One of the stages' buffers (a solver's own contact kernels bind the records: xpbd/contacts.wgsl.ts). */
  buffer(name: ContactBufferName): GPUBuffer {
    const b = this.buffers.get(name);
    if (!b) throw new Error(`contacts: no buffer ${name}`);
    return b;
  }

  /** the residual diagnostics' kernels and bind groups (made by the first frame that records residuals), and the record points their sums hold */
  private residuals: { point: Kernel; sum: Kernel; pointGroup: GPUBindGroup; sumGroup: GPUBindGroup; records: number } | null = null;

  /**
   * Readies a frame that records the contacts' residual at `records` record points (ResidualCurve; the solvers'
   * stepRecordingResiduals): the kernels cj_residual and cj_residual_sum (gpu-contacts.wgsl.ts), built here, at
   * the first such frame, so an ordinary solver never compiles them; per manifold squares and the sums' buffer
   * (grown to `records`), its record counter set to 0 for the next submission. Nothing of an ordinary frame.
   */
  async beginResiduals(records: number): Promise<void> {
    const r = this.residuals;
    if (!r || r.records < records) {
      const [point, sum] = r
        ? [r.point, r.sum]
        : await buildKernels(this.device, 'gpu contacts residual', () => ['cj_residual', 'cj_residual_sum'].map((name) => Kernel.create(this.device, name, contactKernelSource(name))));
      const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      if (!this.buffers.has('residual')) this.buffers.set('residual', this.device.createBuffer({ label: 'contacts residual', size: Math.max(16, 8 * this.collision.broad.pairCapacity), usage: storage }));
      this.buffers.get('residual_sums')?.destroy();
      // ResidualSums: the record counter (u32) and a pad, then (Σ ρ_n², Σ |ρ_t|²) per record point
      this.buffers.set('residual_sums', this.device.createBuffer({ label: 'contacts residual sums', size: 8 + 8 * records, usage: storage }));
      const group = (k: Kernel) => k.bind([this.params, ...contactKernelBindings(k.name).map((b) => this.buffers.get(b)!)]);
      this.residuals = { point, sum, pointGroup: group(point), sumGroup: group(sum), records };
    }
    this.device.queue.writeBuffer(this.buffers.get('residual_sums')!, 0, new Uint32Array(2));
  }

  /** One record point of the contacts' residual (after beginResiduals): per manifold, then the sum appended (one workgroup). */
  recordResidual(pass: GPUComputePassEncoder): void {
    const r = this.residuals;
    if (!r) throw new Error('contacts: recordResidual before beginResiduals');
    const args = this.collision.broad.pairArgs;
    r.point.dispatchIndirect(pass, r.pointGroup, args.buffer, args.offset);
    r.sum.dispatch(pass, r.sumGroup, 1, RESIDUAL_SUM_THREADS);
  }

  /**
   * A record point's sum alone (after beginResiduals), over the per-manifold squares another kernel wrote into
   * buffer('residual') (xpbd-gpu's xc_residual: its own rows, the same sums).
   */
  recordResidualSum(pass: GPUComputePassEncoder): void {
    const r = this.residuals;
    if (!r) throw new Error('contacts: recordResidualSum before beginResiduals');
    r.sum.dispatch(pass, r.sumGroup, 1, RESIDUAL_SUM_THREADS);
  }

  /**
   * The sums of the `records` record points of the frame just submitted (one readback: the sums and the frame's
   * point count): Σ ρ_n² and Σ |ρ_t|² (m²/s², f32 sums) per record point, or null when the frame had no contact
   * point (the CPU solvers then give no contact channel).
   */
  async readResiduals(records: number): Promise<{ normal: number[]; friction: number[] } | null> {
    const [sums, st] = await readBuffers(this.device, [this.buffers.get('residual_sums')!, this.buffers.get('stats')!]);
    if (new Uint32Array(st)[0] === 0) return null;
    const written = new Uint32Array(sums, 0, 1)[0];
    if (written !== records) throw new Error(`contacts: ${written} residual record points written, ${records} expected`);
    const f = new Float32Array(sums, 8, 2 * records);
    return { normal: Array.from({ length: records }, (_, k) => f[2 * k]), friction: Array.from({ length: records }, (_, k) => f[2 * k + 1]) };
  }

  /** The manifolds with points of the last frame recorded, as the solver's records (tests and tools; a readback). */
  async read(): Promise<GpuContactManifold[]> {
    const [c, mb, pb] = await readBuffers(this.device, [this.collision.broad.counters.buffer, this.buffers.get('manifolds')!, this.buffers.get('points')!]);
    const n = Math.min(new Uint32Array(c)[COUNTER_PAIRS], this.collision.broad.pairCapacity);
    const mv = new DataView(mb), pv = new DataView(pb);
    const M = SolverManifoldRecord, P = SolverPointRecord;
    const out: GpuContactManifold[] = [];
    for (let k = 0; k < n; k++) {
      const count = M.read(mv, k, 'count')[0];
      if (count === 0) continue;
      const points = [];
      for (let j = 0; j < count; j++) {
        const r = 4 * k + j;
        points.push({
          armA: P.read(pv, r, 'arm_a'),
          armB: P.read(pv, r, 'arm_b'),
          s0: P.read(pv, r, 's0')[0],
          mu: P.read(pv, r, 'mu')[0],
          lambda: P.read(pv, r, 'lambda'),
          id: P.read(pv, r, 'id')[0],
          anchorA: P.read(pv, r, 'anchor_a'),
          mass: P.read(pv, r, 'mass'),
          tangentInverse: P.read(pv, r, 'tangent_inverse'),
        });
      }
      out.push({ bodyA: M.read(mv, k, 'body_a')[0], bodyB: M.read(mv, k, 'body_b')[0], normal: M.read(mv, k, 'normal'), slop: M.read(mv, k, 'slop')[0], muStatic: M.read(mv, k, 'mu_static')[0], points });
    }
    return out;
  }

  destroy(): void {
    for (const [name, b] of this.buffers) if (!['counters', 'narrow_manifolds', 'narrow_points', 'found', 'pose', 'velocity', 'velocity_delta', 'inverse_mass', 'offsets', 'order'].includes(name)) b.destroy();
    this.params.destroy();
    this.staticFlags?.destroy();
    this.slots?.destroy();
    this.restitutionSlots?.destroy();
    this.colouring?.destroy();
    this.scanPlan.destroy();
    this.table.destroy();
    this.collision.destroy();
  }
}
