/**
 * One run in the viewer: a scene description and one or more solvers ("slots") stepping it in
 * lockstep, each with its metrics, divergence watch and timings.
 *
 * Invariants:
 *   - every slot starts from the same description with the same options (each solver's own
 *     defaults where the user set none), so their curves share one time axis;
 *   - metrics are recomputed from snapshots (src/metrics/metrics.ts), never from a solver's
 *     arrays; a GPU solver is read back only when metrics are sampled, never to draw;
 *   - a slot whose state diverges (DivergenceWatch of src/run/run.ts: not finite, runaway
 *     energy, constraints torn apart) or whose solver throws stops stepping and says why;
 *     the other slots and the page go on.
 *
 * Contacts on demand (ContactProbe): collision detection (src/collision/pipeline.ts) run afresh on
 * the main slot's snapshot of the frame drawn, as the metrics run it (MetricsContext.contactsOf:
 * the same pairs, the same touching test), turned into what the renderer draws.
 */
import type { GpuContext } from '../src/gpu/device.js';
import { CollisionPipeline } from '../src/collision/pipeline.js';
import { ContactList } from '../src/rows/contact.js';
import { CONTACT_SLOP } from '../src/rows/block-solver.js';
import { isParticleSystem } from '../src/model/scene-desc.js';
import { hasBodyStateBuffer } from '../src/solvers/gpu-base.js';
import { metricsFor, type FrameMetrics } from '../src/metrics/metrics.js';
import { DivergenceWatch } from '../src/run/run.js';
import { preflight } from '../src/model/limits.js';
import type { SceneDesc } from '../src/model/scene-desc.js';
import type { WorldDesc } from '../src/model/world.js';
import { resolveOptions, type Solver, type SolverInfo, type SolverOptions } from '../src/solvers/solver.js';
import type { Snapshot } from '../src/model/snapshot.js';
import type { Renderer, DrawSlot } from './renderer.js';
import { POSE_ASLEEP, POSE_FLOATS, type Drawable } from './render-info.js';

export type SlotStatus = 'starting' | 'running' | 'diverged' | 'failed';

/**
 * The contact points of a snapshot, to draw: per touching point (separation ≤ CONTACT_SLOP, the
 * metrics' `contacts`) six floats: the midpoint m = (p_A + p_B)/2 of its two surface points and the
 * tip m + ℓ n of a segment of length ℓ along its unit normal n (from A to B). p = x + arm, the arm
 * being the lever arm the pipeline keeps (ContactList.armA/armB, world, at the pose detected).
 */
export class ContactProbe {
  private readonly pipeline: CollisionPipeline;
  private readonly list = new ContactList();
  private readonly zeros: Float64Array;
  private readonly n: number;

  /** A probe for `desc`, or null where nothing collides (a particle system, collisions off, one body). */
  static for(desc: SceneDesc): ContactProbe | null {
    if (isParticleSystem(desc)) return null;
    const world = desc as WorldDesc;
    if (!Array.isArray(world.bodies) || world.collisions === false || world.bodies.length < 2) return null;
    return new ContactProbe(world);
  }

  private constructor(world: WorldDesc) {
    this.n = world.bodies.length;
    // only which bodies are fixed matters to the pipeline (no fixed pair is tested)
    this.pipeline = new CollisionPipeline(world.bodies, Float64Array.from(world.bodies, (b) => (b.fixed ? 0 : 1)));
    const joined = world.constraints.filter((c) => c.bodyB !== null);
    this.pipeline.setJoints(Int32Array.from(joined, (c) => c.bodyA), Int32Array.from(joined, (c) => c.bodyB as number), joined.length);
    this.zeros = new Float64Array(3 * this.n);
  }

  /** The touching points of `s` as (midpoint, tip) pairs, a segment of `length` m along each normal. */
  lines(s: Snapshot, length: number): Float32Array<ArrayBuffer> {
    const n = this.n;
    // at rest and h = 0: the margin is the fixed speculative distance, as the metrics detect
    this.pipeline.detect(s.position.subarray(0, 3 * n) as Float64Array, s.orientation.subarray(0, 4 * n) as Float64Array, this.zeros, this.zeros, 0, this.list);
    const L = this.list, x = s.position;
    let touching = 0;
    for (let c = 0; c < L.count; c++) if (L.separation[c] <= CONTACT_SLOP) touching++;
    const out = new Float32Array(6 * touching);
    let k = 0;
    for (let c = 0; c < L.count; c++) {
      if (L.separation[c] > CONTACT_SLOP) continue;
      const a = 3 * L.bodyA[c], b = 3 * L.bodyB[c], o = 3 * c;
      for (let d = 0; d < 3; d++) {
        const m = 0.5 * (x[a + d] + L.armA[o + d] + x[b + d] + L.armB[o + d]);
        out[6 * k + d] = m;
        out[6 * k + 3 + d] = m + length * L.normal[o + d];
      }
      k++;
    }
    return out;
  }
}

export class Slot {
  solver: Solver | null = null;
  status: SlotStatus = 'starting';
  /** why the slot stopped (diverged or failed) */
  reason = '';
  /** frames stepped */
  frame = 0;
  time = 0;
  metrics: FrameMetrics | null = null;
  /** ms per step over the last window (GPU clock: median; wall clock: mean, as the browser's timer is coarse), and its clock */
  msPerStep = NaN;
  clock: 'gpu-timestamp' | 'wall' = 'wall';
  stepsPerSecond = NaN;
  draw: DrawSlot | null = null;
  /** true when drawn from the solver's own GPU buffer */
  zeroCopy = false;
  /** contacts to draw (ContactProbe.lines) at frame `contactFrame` (−1: none yet) */
  contactLines: Float32Array<ArrayBuffer> | null = null;
  contactFrame = -1;
  /** the solver handed a sleep mask (Snapshot.asleep) in some snapshot: it can put bodies to sleep */
  sleeps = false;
  /** bodies flagged asleep (drawn dimmed) in the poses last uploaded (render-info.ts POSE_ASLEEP; 0 drawn from a GPU buffer) */
  dimmed = 0;
  private probe: ContactProbe | null = null;
  /** the options it runs with: resolved again for the scene when it starts (a solver's contact-scene defaults) */
  options: SolverOptions;
  private metricsContext: { measure(s: Snapshot): FrameMetrics } | null = null;
  private watch: DivergenceWatch | null = null;
  private ownPose: GPUBuffer | null = null;
  private poseScratch: Float32Array<ArrayBuffer> | null = null;
  /** the frame whose poses are in ownPose */
  private uploadedFrame = 0;
  private windowFrames = 0;
  private windowStart = performance.now();

  constructor(
    readonly info: SolverInfo,
    readonly colour: readonly number[],
    private readonly asked: Partial<SolverOptions>,
  ) {
    this.options = resolveOptions(info, asked);
  }

  get active(): boolean {
    return this.status === 'running';
  }

  /** Creates the solver and its metrics; with a renderer (a drawable scene), what it draws with. */
  async start(desc: SceneDesc, drawable: Drawable | null, gpu: GpuContext | null, renderer: Renderer | null, alpha: number): Promise<void> {
    try {
      if (this.info.device === 'gpu' && !gpu) throw new Error('no WebGPU adapter');
      this.options = resolveOptions(this.info, this.asked, desc);
      // what `run` refuses before its solver allocates (model/limits.ts: memory, the ranges its arithmetic
      // carries, a first frame it cannot represent), refused here with the same one line, never run to NaN
      preflight('the scene', desc, this.info.id, this.options);
      this.solver = await this.info.create(desc, this.options, gpu ?? undefined);
      this.metricsContext = metricsFor(desc, this.options.compliance);
      this.probe = ContactProbe.for(desc);
      const first = await this.solver.snapshot();
      if (first.asleep) this.sleeps = true;
      this.metrics = this.metricsContext.measure(first);
      this.watch = new DivergenceWatch(desc, this.metrics);
      if (renderer && drawable) {
        const state = hasBodyStateBuffer(this.solver) ? this.solver.bodyState() : null;
        this.zeroCopy = !!state && state.stride === 4 * POSE_FLOATS && state.position === 0 && state.orientation === 16;
        if (!this.zeroCopy) {
          this.ownPose = renderer.createPoseBuffer();
          this.poseScratch = new Float32Array(POSE_FLOATS * drawable.bodyCount);
        }
        this.draw = renderer.createSlot(this.zeroCopy ? state!.buffer : this.ownPose!, this.colour, alpha);
      }
      this.status = 'running';
    } catch (e) {
      this.fail(e);
    }
  }

  fail(e: unknown): void {
    this.status = 'failed';
    this.reason = (e as Error)?.message ?? String(e);
  }

  /** Steps `frames` frames; a throw stops the slot. */
  async step(frames: number): Promise<void> {
    if (!this.active || !this.solver) return;
    try {
      await this.solver.step(frames);
      this.frame += frames;
      this.time = this.frame * this.options.dt;
      this.windowFrames += frames;
    } catch (e) {
      this.fail(e);
    }
  }

  /** For a solver not drawn from its own buffer: its snapshot into the pose buffer. */
  async upload(renderer: Renderer, drawable: Drawable, snap?: Snapshot): Promise<Snapshot | undefined> {
    if (this.zeroCopy || !this.solver || !this.ownPose || this.status === 'failed' || this.uploadedFrame === this.frame) return snap;
    const s = snap ?? (await this.solver.snapshot());
    if (s.asleep) this.sleeps = true;
    drawable.packPoses(s, this.poseScratch!);
    // the flags the renderer gets: what is drawn dimmed
    let dimmed = 0;
    for (let i = POSE_ASLEEP; i < this.poseScratch!.length; i += POSE_FLOATS) if (this.poseScratch![i] === 1) dimmed++;
    this.dimmed = dimmed;
    renderer.device.queue.writeBuffer(this.ownPose, 0, this.poseScratch!);
    this.uploadedFrame = this.frame;
    return s;
  }

  /**
   * The contacts of the frame stepped to (from `snap` when it is of that frame, else a new
   * snapshot), each normal drawn `length` m long; kept until the slot steps again. Nothing for a
   * scene without collisions or a slot that never started.
   */
  async updateContacts(length: number, snap?: Snapshot): Promise<void> {
    if (!this.probe || !this.solver || this.contactFrame === this.frame) return;
    try {
      const s = snap && snap.frame === this.frame ? snap : await this.solver.snapshot();
      this.contactLines = this.probe.lines(s, length);
      this.contactFrame = this.frame;
    } catch (e) {
      this.fail(e);
    }
  }

  /** Snapshot → metrics → divergence check. Returns the snapshot (for a CPU upload). */
  async sample(): Promise<Snapshot | undefined> {
    if (!this.solver || this.status !== 'running') return undefined;
    try {
      const s = await this.solver.snapshot();
      if (s.asleep) this.sleeps = true;
      this.metrics = this.metricsContext!.measure(s);
      const why = this.watch!.check(this.metrics, this.frame);
      if (why) {
        this.status = 'diverged';
        this.reason = `DIVERGED at frame ${this.frame} (t = ${this.time.toFixed(3)} s): ${why}`;
      }
      return s;
    } catch (e) {
      this.fail(e);
      return undefined;
    }
  }

  /** Timings since the last call: median ms per step (solver's clock), steps per second of the viewer. */
  updateTimings(): void {
    if (!this.solver) return;
    const t = this.solver.timings();
    this.solver.resetTimings();
    if (t.msPerFrame.length) {
      const ms = t.msPerFrame;
      if (t.clock === 'gpu-timestamp') this.msPerStep = [...ms].sort((a, b) => a - b)[Math.floor((ms.length - 1) / 2)];
      // performance.now() ticks in 0.1 ms steps in a page that is not cross-origin isolated: the mean of many is still fair
      else this.msPerStep = ms.reduce((a, b) => a + b, 0) / ms.length;
      this.clock = t.clock;
    }
    const now = performance.now();
    // no frames in the window (paused, stopped): no rate to show
    this.stepsPerSecond = this.windowFrames > 0 && now > this.windowStart ? (1000 * this.windowFrames) / (now - this.windowStart) : NaN;
    this.windowFrames = 0;
    this.windowStart = now;
  }

  destroy(): void {
    try {
      this.solver?.destroy();
    } catch {
      // a solver whose device is gone: nothing left to free
    }
    this.ownPose?.destroy();
    this.draw?.uniform.destroy();
    this.solver = null;
    this.draw = null;
    this.contactLines = null;
  }
}
