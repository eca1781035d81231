/**
 * What every CPU solver shares: options, wall-clock timing per frame, the frame
 * count (WallTimedSolver); and, for the rigid solvers, the compiled f64 state
 * over a CompiledWorld and its Snapshot (CpuSolverBase). A CPU solver extends
 * one and steps one frame in stepFrame.
 */
import { WorldError, type ConstraintDesc, type WorldDesc } from '../model/world.js';
import { JointSet } from '../rows/joint-set.js';
import { SleepState } from '../collision/islands.js';
import { compileWorld, snapshotOf, type CompiledWorld } from '../model/compiled.js';
import { CollisionPipeline } from '../collision/pipeline.js';
import { ContactList } from '../rows/contact.js';
import { StageClock, type StageTimes, type StagedSolver } from './stages.js';
import { defaultSolverOptions, type AdapterDescription, type Snapshot, type SolverOptions, type StepTimings } from './solver.js';

export abstract class WallTimedSolver implements StagedSolver {
  abstract readonly id: string;
  readonly options: SolverOptions;
  readonly adapter: AdapterDescription = { name: 'cpu (f64)', software: false, timestamps: false };
  protected frame = 0;
  private msPerFrame: number[] = [];
  /** the wall time of each stage (solvers/stages.ts); a frame that times none is one stage, 'step' */
  protected readonly stageClock = new StageClock();
  /** the stage names of one frame, in order: a solver that times its stages lists them */
  get stageNames(): readonly string[] {
    return ['step'];
  }

  constructor(options: Partial<SolverOptions>) {
    this.options = { ...defaultSolverOptions, ...options };
  }

  /** One frame: `substeps` solver steps of h = dt / substeps; counts the frame. */
  abstract stepFrame(): void;

  async step(frames: number): Promise<void> {
    for (let f = 0; f < frames; f++) {
      const t0 = performance.now();
      const timed = this.stageClock.calls;
      this.stepFrame();
      const ms = performance.now() - t0;
      this.msPerFrame.push(ms);
      if (this.stageClock.calls === timed) this.stageClock.add('step', ms);
    }
  }

  timings(): StepTimings {
    return { clock: 'wall', msPerFrame: this.msPerFrame.slice(), wallMsPerFrame: this.msPerFrame.slice() };
  }

  stageTimes(): StageTimes {
    return this.stageClock.totals();
  }

  resetTimings(): void {
    this.msPerFrame = [];
    this.stageClock.reset();
  }

  destroy(): void {}
}

export abstract class CpuSolverBase extends WallTimedSolver {
  readonly bodyCount: number;
  readonly w: CompiledWorld;
  /**
   * The joints as they are now: the world's, then those added and less those removed between steps
   * (rows/joint-set.ts). Solvers on rows lay their rows out from it again when it changes.
   */
  readonly joints: JointSet;

  /**
   * Collision detection (collision/pipeline.ts), or null when the world has collisions off or fewer
   * than two bodies; `contacts` holds the points it found at the start of the last step.
   */
  readonly collision: CollisionPipeline | null;
  readonly contacts = new ContactList();
  private jointsSeenByCollision = -1;

  /**
   * The islands' sleep state (collision/islands.ts), or null: nothing sleeps (--sleep 0, a solver
   * without contacts, or a world without collisions, which so steps exactly as before sleeping existed).
   */
  readonly sleeping: SleepState | null;
  /** the joint set's version the sleep state last saw */
  private sleepJointsVersion = -1;

  constructor(world: WorldDesc, options: Partial<SolverOptions>) {
    super(options);
    this.w = compileWorld(world);
    this.bodyCount = this.w.worldBodyCount;
    this.joints = new JointSet(this.w);
    this.collision = this.solvesContacts() && world.collisions !== false && world.bodies.length >= 2 ? new CollisionPipeline(world.bodies, this.w.inverseMass) : null;
    this.sleeping = this.options.sleep === 1 && this.collision ? new SleepState(this.w.inverseMass) : null;
  }

  /**
   * With sleeping on, once per frame after detection (`list`: every pair with an awake body, so an
   * awake body touching a sleeper is seen; pairs of two sleepers, or a sleeper and a fixed body, are
   * not looked at: detectContacts): the islands' update (a contact or a joint from an awake body
   * wakes a sleeping island; a resting island falls asleep; a joint added or removed between steps
   * wakes everything, islands.ts wakeAll), then only the points with an awake body are kept in
   * `list`. When bodies woke, the contacts are found again (the woken island's own contacts were
   * not looked at), so a woken pile steps with all its contacts from its first frame. Returns `list`.
   */
  protected updateSleep(dt: number, list: ContactList | null): ContactList | null {
    const sleeping = this.sleeping;
    if (!sleeping) return list;
    const jointsChanged = this.joints.version !== this.sleepJointsVersion;
    if (jointsChanged) sleeping.wakeAll();
    this.sleepJointsVersion = this.joints.version;
    const wokenBefore = jointsChanged ? sleeping.woken : 0;
    sleeping.update(dt, this.w.linearVelocity, this.w.angularVelocity, list, this.joints);
    if (list && (sleeping.woken > 0 || wokenBefore > 0)) list = this.detectContacts(this.lastDetectH);
    if (list) sleeping.dropSleepingContacts(list);
    return list;
  }
  private lastDetectH = 0;

  /** Dynamic bodies awake now (every dynamic body when nothing sleeps). */
  awakeBodyCount(): number {
    if (this.sleeping) return this.sleeping.awakeCount();
    let k = 0;
    for (let i = 0; i < this.w.bodyCount; i++) if (this.w.inverseMass[i] > 0) k++;
    return k;
  }

  /**
   * Whether this solver solves contacts. One that does not leaves a world's collisions out when it is
   * made directly from the library (its class says so); the registry refuses such a world with the
   * reason before making it (solver.ts supportReason), so `run` and `compare` never do that silently.
   */
  protected solvesContacts(): boolean {
    return false;
  }

  /**
   * The contact points at the state now (collision/pipeline.ts) into `contacts`, or null when the
   * world has no collisions; `h` the time the contacts must cover (the speculative margin).
   */
  protected detectContacts(h: number): ContactList | null {
    const c = this.collision;
    if (!c) return null;
    if (this.joints.version !== this.jointsSeenByCollision) {
      c.setJoints(this.joints.ib0, this.joints.ib1, this.joints.constraintCount);
      this.jointsSeenByCollision = this.joints.version;
    }
    // sleeping bodies count as fixed for the pairs looked at (a pair of two sleepers, or of a sleeper
    // and a fixed body, is not: nothing moves there); their islands keep them together (islands.ts)
    const g = this.w.gravity;
    c.detect(this.w.position, this.w.orientation, this.w.linearVelocity, this.w.angularVelocity, h, this.contacts, this.sleeping ? this.sleeping.asleep : null, Math.hypot(g[0], g[1], g[2]));
    this.lastDetectH = h;
    return this.contacts;
  }

  get constraintCount(): number {
    return this.joints.constraintCount;
  }

  /**
   * Adds a joint between two of the world's bodies before the next step (its starting pose is the
   * bodies' pose now); returns its id for removeConstraint. One-line errors for a bad joint.
   */
  addConstraint(c: ConstraintDesc): number {
    checkAddedJoint(c, this.w.worldBodyCount, this.w.inverseMass);
    return this.joints.add(c, this.w.position, this.w.orientation);
  }

  /** Removes the joint with this id (from the world's joints, their index; or addConstraint's id) before the next step. */
  removeConstraint(id: number): void {
    this.joints.remove(id);
  }

  async snapshot(): Promise<Snapshot> {
    return snapshotOf(this.w, this.frame, this.options.dt, this.asleepMask());
  }

  /** Per body 1 while asleep (collision/islands.ts), or null: this solver (or this run) never sleeps. */
  protected asleepMask(): Uint8Array | null {
    return this.sleeping ? this.sleeping.asleep : null;
  }
}

/**
 * The checks on a joint added between steps, shared by the CPU and the GPU solvers (one-line
 * WorldErrors): both bodies of the world's `bodyCount`, two different ones, not both fixed.
 */
export function checkAddedJoint(c: ConstraintDesc, bodyCount: number, inverseMass: Float64Array): void {
  const index = (b: unknown, field: string) => {
    if (!Number.isInteger(b) || (b as number) < 0 || (b as number) >= bodyCount) throw new WorldError(field, `body index out of range 0..${bodyCount - 1}`);
  };
  index(c.bodyA, 'bodyA');
  if (c.bodyB === null) throw new WorldError('bodyB', 'a joint added between steps joins two bodies (anchor to a fixed body, not the world)');
  index(c.bodyB, 'bodyB');
  if (c.bodyA === c.bodyB) throw new WorldError('bodyB', 'a constraint joins two different bodies');
  if (inverseMass[c.bodyA] === 0 && inverseMass[c.bodyB] === 0) throw new WorldError('bodyB', 'joins two fixed bodies (nothing can move)');
}
