/**
 * Islands and sleeping for the velocity-level CPU contact solvers (the Starframe text's "Islands and
 * sleeping"; the design Box2D describes: a resting group of bodies stops costing solver work until
 * something disturbs it). Our code and words.
 *
 * Islands. Nodes are the dynamic bodies (inverse mass > 0); an edge joins two of them when a contact
 * point of this frame's list connects them (every point the detection reported, speculative ones
 * included: a body about to touch a pile is already in its island, so it wakes the pile the frame
 * before it arrives) or a joint does. Fixed bodies are not nodes: a ground plane under two piles does
 * not make them one island (two piles that rest on it can sleep and wake apart). The islands are the
 * connected components, found by union-find (path halving, union by size) over the whole graph each
 * frame: O((bodies + edges) α) per frame, simple and cheap next to the detection that produced the
 * edges. Keeping the islands incrementally across frames (only splitting when an edge goes, as Box2D
 * does) is a possible later improvement; rebuilding them each frame is always correct.
 *
 * Sleep timer (per body), thresholds as Box2D's defaults:
 *   |v| < SLEEP_LINEAR_SPEED = 0.05 m/s and |ω| < SLEEP_ANGULAR_SPEED = 0.05 rad/s
 *     → timer += dt,  else timer ← 0,
 * read from the velocities at the frame's start (the end of the last frame's solve).
 *
 * Island rules, once per frame after detection:
 *   - an island with a sleeping body and an awake one (a contact or a joint now connects an awake
 *     body to a sleeper) wakes: every body of it is awake again with its timer at 0;
 *   - an island whose bodies are all awake with timer ≥ TIME_TO_SLEEP = 0.5 s falls asleep: their
 *     v, ω are set to 0 and the solver skips them (no gravity, no integration: RigidBodyCore.asleep;
 *     their contacts with fixed bodies or with each other are not laid out: dropSleepingContacts);
 *   - otherwise nothing changes (an island all asleep stays asleep).
 * A contact between two sleepers or a sleeper and a fixed body is dropped; after the wake rule no
 * contact joins a sleeper to an awake body, so every laid-out contact has only awake (or fixed) bodies.
 */
import type { ContactList } from '../rows/contact.js';

/** m/s: below this linear speed a body counts as resting (the order of Box2D v3's default body sleep threshold, 5 cm/s). */
export const SLEEP_LINEAR_SPEED = 0.05;
/** rad/s: below this angular speed a body counts as resting (Box2D-like; a 1 m box turning this fast moves its corners < 5 cm/s). */
export const SLEEP_ANGULAR_SPEED = 0.05;
/** s: an island whose bodies all rested this long falls asleep (Box2D's time to sleep). */
export const TIME_TO_SLEEP = 0.5;

/** The body pairs of a frame's edges: contact points (ContactList) or joints (JointSet). */
export interface BodyPairs {
  count: number;
  bodyA: Int32Array;
  bodyB: Int32Array;
}
export interface JointPairs {
  constraintCount: number;
  ib0: Int32Array;
  ib1: Int32Array;
}

/** Union-find over body indices (fixed bodies: parent −1, never joined). */
export class UnionFind {
  readonly parent: Int32Array;
  private readonly size: Int32Array;

  constructor(readonly n: number) {
    this.parent = new Int32Array(n);
    this.size = new Int32Array(n);
  }

  /** Every dynamic body its own set; fixed bodies (inverseMass 0) in none. */
  reset(inverseMass: Float64Array): void {
    for (let i = 0; i < this.n; i++) {
      this.parent[i] = inverseMass[i] > 0 ? i : -1;
      this.size[i] = 1;
    }
  }

  /** The root of i's set (−1 for a fixed body); path halving. */
  find(i: number): number {
    const p = this.parent;
    if (p[i] < 0) return -1;
    while (p[i] !== i) {
      p[i] = p[p[i]];
      i = p[i];
    }
    return i;
  }

  /** Joins the sets of a and b (nothing when either is fixed). */
  union(a: number, b: number): void {
    let ra = this.find(a), rb = this.find(b);
    if (ra < 0 || rb < 0 || ra === rb) return;
    if (this.size[ra] < this.size[rb]) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    this.size[ra] += this.size[rb];
  }
}

/**
 * The islands of a frame: per body its island's root (a body index), −1 for a fixed body, from the
 * contact pairs and the joints (header).
 */
export function buildIslands(inverseMass: Float64Array, contacts: BodyPairs | null, joints: JointPairs | null, uf = new UnionFind(inverseMass.length)): Int32Array {
  uf.reset(inverseMass);
  if (contacts) for (let c = 0; c < contacts.count; c++) uf.union(contacts.bodyA[c], contacts.bodyB[c]);
  if (joints) for (let c = 0; c < joints.constraintCount; c++) uf.union(joints.ib0[c], joints.ib1[c]);
  const root = new Int32Array(inverseMass.length);
  for (let i = 0; i < root.length; i++) root[i] = uf.find(i);
  return root;
}

/** Per-body sleep state and the per-frame island update (header). */
export class SleepState {
  /** 1 while the body sleeps (RigidBodyCore.asleep points here) */
  readonly asleep: Uint8Array;
  /** s the body has stayed below both speed thresholds (reset when it moves or wakes) */
  readonly timer: Float64Array;
  /** the island (root body) of each body at the last update; −1 for fixed bodies */
  island: Int32Array;
  /** bodies woken (by the last update, or by wakeAll since) and put to sleep by the last update */
  woken = 0;
  fellAsleep = 0;
  private readonly uf: UnionFind;
  // per root: counts of sleeping and awake bodies, and whether every awake one is past the timer
  private readonly sleepers: Int32Array;
  private readonly wakers: Int32Array;
  private readonly restless: Uint8Array;

  constructor(readonly inverseMass: Float64Array) {
    const n = inverseMass.length;
    this.asleep = new Uint8Array(n);
    this.timer = new Float64Array(n);
    this.island = new Int32Array(n).fill(-1);
    this.uf = new UnionFind(n);
    this.sleepers = new Int32Array(n);
    this.wakers = new Int32Array(n);
    this.restless = new Uint8Array(n);
  }

  /**
   * One frame's update (header): the timers from the velocities now, the islands of `contacts` and
   * `joints`, then the wake and sleep rules. Sleeping bodies get v = ω = 0.
   */
  update(dt: number, linearVelocity: Float64Array, angularVelocity: Float64Array, contacts: BodyPairs | null, joints: JointPairs | null): void {
    const n = this.inverseMass.length, im = this.inverseMass, asleep = this.asleep, timer = this.timer;
    const v2 = SLEEP_LINEAR_SPEED * SLEEP_LINEAR_SPEED, w2 = SLEEP_ANGULAR_SPEED * SLEEP_ANGULAR_SPEED;
    this.woken = 0;
    for (let i = 0; i < n; i++) {
      if (im[i] === 0 || asleep[i]) continue;
      const o = 3 * i;
      const sv = linearVelocity[o] ** 2 + linearVelocity[o + 1] ** 2 + linearVelocity[o + 2] ** 2;
      const sw = angularVelocity[o] ** 2 + angularVelocity[o + 1] ** 2 + angularVelocity[o + 2] ** 2;
      timer[i] = sv < v2 && sw < w2 ? timer[i] + dt : 0;
    }
    this.island = buildIslands(im, contacts, joints, this.uf);
    const root = this.island;
    this.sleepers.fill(0);
    this.wakers.fill(0);
    this.restless.fill(0);
    for (let i = 0; i < n; i++) {
      const r = root[i];
      if (r < 0) continue;
      if (asleep[i]) this.sleepers[r]++;
      else {
        this.wakers[r]++;
        if (timer[i] < TIME_TO_SLEEP) this.restless[r] = 1;
      }
    }
    this.fellAsleep = 0;
    for (let i = 0; i < n; i++) {
      const r = root[i];
      if (r < 0) continue;
      if (this.sleepers[r] > 0 && this.wakers[r] > 0) {
        // an awake body touches (or is jointed to) this sleeping island: all of it wakes
        if (asleep[i]) this.woken++;
        asleep[i] = 0;
        timer[i] = 0;
      } else if (this.sleepers[r] === 0 && this.restless[r] === 0) {
        // every body rested TIME_TO_SLEEP: the island falls asleep, at rest
        asleep[i] = 1;
        this.fellAsleep++;
        const o = 3 * i;
        linearVelocity[o] = linearVelocity[o + 1] = linearVelocity[o + 2] = 0;
        angularVelocity[o] = angularVelocity[o + 1] = angularVelocity[o + 2] = 0;
      }
    }
  }

  /**
   * Wakes every body (timers at 0): the joint set changed between steps. A removed joint can leave a
   * sleeping body unsupported (the text's "until their topology changes ... or something disappears"),
   * which no contact would report; waking all is the simple conservative answer.
   */
  wakeAll(): void {
    for (let i = 0; i < this.asleep.length; i++) if (this.asleep[i]) this.woken++;
    this.asleep.fill(0);
    this.timer.fill(0);
  }

  /** Dynamic bodies awake now. */
  awakeCount(): number {
    let k = 0;
    for (let i = 0; i < this.asleep.length; i++) if (this.inverseMass[i] > 0 && !this.asleep[i]) k++;
    return k;
  }

  /**
   * Keeps in `list` (in order, in place) only the points with an awake dynamic body: a point between
   * two sleepers, or a sleeper and a fixed body, is dropped (header). Returns the number kept.
   */
  dropSleepingContacts(list: ContactList): number {
    const im = this.inverseMass, asleep = this.asleep;
    const awake = (b: number) => im[b] > 0 && asleep[b] === 0;
    let k = 0;
    for (let c = 0; c < list.count; c++) {
      if (!awake(list.bodyA[c]) && !awake(list.bodyB[c])) continue;
      if (k !== c) movePoint(list, c, k);
      k++;
    }
    list.count = k;
    return k;
  }
}

/**
 * Copies point `from` of the list onto point `to`, every per-point array (each holds `stride` numbers
 * per point, stride = its length / capacity: found from the arrays themselves, so a field added to
 * ContactList is moved too).
 */
function movePoint(list: ContactList, from: number, to: number): void {
  const cap = list.capacity;
  for (const value of Object.values(list)) {
    if (!(value instanceof Float64Array || value instanceof Int32Array) || cap === 0) continue;
    const stride = value.length / cap;
    value.copyWithin(stride * to, stride * from, stride * from + stride);
  }
}
