/**
 * Islands and sleeping for the CPU contact solvers (the Starframe text's "Islands and sleeping"; the
 * design Box2D describes: a resting group of bodies stops costing solver work until something disturbs
 * it). Our code and words.
 *
 * Islands. Nodes are the dynamic bodies (inverse mass > 0); an edge joins two of them when a contact
 * point of this frame's list connects them (every point the detection reported, speculative ones
 * included: a body about to touch a pile is already in its island, so it wakes the pile the frame
 * before it arrives) or a joint does. Fixed bodies are not nodes: a ground plane under two piles does
 * not make them one island (two piles that rest on it can sleep and wake apart).
 *
 * Kept incrementally (IslandGraph), as Box2D keeps them: the islands persist from frame to frame as
 * lists of bodies. An edge that appears links its two islands (the smaller list is relabelled and
 * spliced into the larger: O(smaller)); an edge that goes only marks its island as possibly split. A
 * marked island is split into its connected components (a depth-first search over its bodies' edges)
 * only when that can matter: when one of its bodies has rested TIME_TO_SLEEP, so that a part at rest
 * can sleep without the part that left it. An island not yet split is a union of true islands, so
 * until then its parts sleep together and wake together: never a sleeper beside an awake body it
 * touches. The edges are diffed against the last frame's by pair key (EdgeSet), O(edges) per frame;
 * `buildIslands` (union-find over the whole graph) is the from-scratch reference the tests hold the
 * incremental islands to.
 *
 * Sleep timer (per body), thresholds as Box2D's defaults. A body is slow at a sample when
 *   |v| < SLEEP_LINEAR_SPEED = 0.05 m/s and |ω| < SLEEP_ANGULAR_SPEED = 0.05 rad/s,
 * sampled once per frame, at its start (the velocities the last frame's solve left, or the initial
 * ones). The last frame rested iff the body was slow at both ends of it:
 *     slow now and slow at the last sample → timer += dt,  else timer ← 0.
 * Why both ends: a body slow at one sample may be at rest under an unbalanced force (released at rest
 * in mid-air; at the top of a throw; a pendulum at its turning point): one sample cannot tell. Two
 * samples one frame apart bound its velocity change, |Δv| = |a| dt < 2 · 0.05 m/s, so a credited
 * frame has moved the body less than 0.05 dt and its net acceleration is below 0.1/dt; to reach
 * TIME_TO_SLEEP every frame of 0.5 s must pass this, which an unsupported body under g cannot at any
 * dt: g dt > 0.1 m/s when dt > 10 ms, and below that its speed stays under 0.05 m/s for at most
 * 0.1/g ≈ 10 ms ≪ 0.5 s. A frame not yet stepped is never credited (no sample before the first),
 * which is what let a body released at rest sleep at the first frame where dt ≥ TIME_TO_SLEEP (the
 * timer once read one sample: `single-box --dt 0.5` hung 1 m up, "all asleep from frame 1"). Box2D
 * credits a step whose solved velocity is slow; ours is the same test over the frame's two ends.
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

/**
 * The frame's edges as a set of body pairs (key min · n + max), diffed against the last frame's:
 * `mark` every pair of this frame (returns true when it is new), then `sweep` the pairs not marked
 * this frame (gone), calling `gone(a, b)` for each.
 */
export class EdgeSet {
  private readonly seen = new Map<number, number>();
  /** frames begun: the set's version (the pairs change only in a frame) */
  frame = 0;

  constructor(readonly n: number) {}

  /** Starts a frame's marking. */
  begin(): void {
    this.frame++;
  }

  /** Marks pair (a, b) present this frame; true when it was not present in the last frame. */
  mark(a: number, b: number): boolean {
    const key = a < b ? a * this.n + b : b * this.n + a;
    const was = this.seen.get(key);
    this.seen.set(key, this.frame);
    return was === undefined || was < this.frame - 1;
  }

  /** Removes the pairs not marked this frame, calling gone(a, b) for each. */
  sweep(gone: (a: number, b: number) => void): void {
    for (const [key, frame] of this.seen) {
      if (frame === this.frame) continue;
      this.seen.delete(key);
      gone(Math.floor(key / this.n), key % this.n);
    }
  }

  /** The pairs present now, as a body → neighbours CSR over the bodies (for splitting). */
  adjacency(start: Int32Array, list: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
    start.fill(0);
    for (const key of this.seen.keys()) {
      start[Math.floor(key / this.n) + 1]++;
      start[(key % this.n) + 1]++;
    }
    for (let i = 0; i < this.n; i++) start[i + 1] += start[i];
    const fill = start.slice(0, this.n);
    if (list.length < start[this.n]) list = new Int32Array(2 * start[this.n]);
    for (const key of this.seen.keys()) {
      const a = Math.floor(key / this.n), b = key % this.n;
      list[fill[a]++] = b;
      list[fill[b]++] = a;
    }
    return list;
  }

  get size(): number {
    return this.seen.size;
  }
}

/**
 * Persistent islands (header): per dynamic body its island id (−1 for a fixed body), per island its
 * bodies as a linked list and whether an edge of it went since it was last split.
 */
export class IslandGraph {
  /** per body: its island's id, −1 for a fixed body */
  readonly island: Int32Array;
  private readonly next: Int32Array; // per body: the next body of its island's list, −1 at the end
  private readonly head: Int32Array; // per island id: its first body, −1 for a free id
  private readonly tail: Int32Array;
  private readonly size: Int32Array;
  /** per island id: 1 when an edge of it went since it was last split (it may be several islands) */
  readonly dirty: Uint8Array;
  private readonly free: number[] = [];
  readonly edges: EdgeSet;
  /** islands merged, split (pieces made) over the graph's life: what the incremental upkeep did */
  merges = 0;
  splits = 0;
  private adjStart: Int32Array;
  private adjList = new Int32Array(0);
  private adjFrame = -1; // the edges' frame the adjacency was built for
  private readonly stack: Int32Array;

  constructor(readonly inverseMass: Float64Array) {
    const n = inverseMass.length;
    this.island = new Int32Array(n);
    this.next = new Int32Array(n).fill(-1);
    this.head = new Int32Array(n).fill(-1);
    this.tail = new Int32Array(n).fill(-1);
    this.size = new Int32Array(n);
    this.dirty = new Uint8Array(n);
    this.edges = new EdgeSet(n);
    this.adjStart = new Int32Array(n + 1);
    this.stack = new Int32Array(n);
    // every dynamic body its own island, id = its index; the ids of fixed bodies are free
    for (let i = 0; i < n; i++) {
      if (inverseMass[i] > 0) {
        this.island[i] = i;
        this.head[i] = this.tail[i] = i;
        this.size[i] = 1;
      } else {
        this.island[i] = -1;
        this.free.push(i);
      }
    }
  }

  /** An edge appeared between a and b: their islands become one (the smaller spliced into the larger). */
  link(a: number, b: number): void {
    let ia = this.island[a], ib = this.island[b];
    if (ia < 0 || ib < 0 || ia === ib) return;
    if (this.size[ia] < this.size[ib]) [ia, ib] = [ib, ia];
    for (let k = this.head[ib]; k >= 0; k = this.next[k]) this.island[k] = ia;
    this.next[this.tail[ia]] = this.head[ib];
    this.tail[ia] = this.tail[ib];
    this.size[ia] += this.size[ib];
    this.dirty[ia] |= this.dirty[ib];
    this.head[ib] = this.tail[ib] = -1;
    this.size[ib] = 0;
    this.dirty[ib] = 0;
    this.free.push(ib);
    this.merges++;
  }

  /** An edge between a and b went: their island may now be several. */
  unlink(a: number, b: number): void {
    const i = this.island[a] >= 0 ? this.island[a] : this.island[b];
    if (i >= 0) this.dirty[i] = 1;
  }

  /**
   * One frame's edges: contact pairs (consecutive points of a pair count once) and joints. New pairs
   * link, gone pairs mark their island. Pairs with a fixed body are not edges.
   */
  update(contacts: BodyPairs | null, joints: JointPairs | null): void {
    const im = this.inverseMass, e = this.edges;
    e.begin();
    const add = (a: number, b: number) => {
      if (im[a] === 0 || im[b] === 0) return;
      if (e.mark(a, b)) this.link(a, b);
    };
    if (contacts) {
      for (let c = 0; c < contacts.count; c++) {
        const a = contacts.bodyA[c], b = contacts.bodyB[c];
        if (c > 0 && contacts.bodyA[c - 1] === a && contacts.bodyB[c - 1] === b) continue; // same manifold
        add(a, b);
      }
    }
    if (joints) for (let c = 0; c < joints.constraintCount; c++) add(joints.ib0[c], joints.ib1[c]);
    e.sweep((a, b) => this.unlink(a, b));
  }

  /** Bodies of island i, in list order (each body once). */
  *bodiesOf(i: number): Generator<number> {
    for (let k = this.head[i]; k >= 0; k = this.next[k]) yield k;
  }

  /**
   * Splits island i into its connected components over the present edges (depth-first search; the
   * first component keeps the id, the others take free ids). Clears its mark.
   */
  split(i: number): void {
    this.dirty[i] = 0;
    if (this.size[i] <= 1) return;
    if (this.adjFrame !== this.edges.frame) {
      this.adjList = this.edges.adjacency(this.adjStart, this.adjList);
      this.adjFrame = this.edges.frame;
    }
    const start = this.adjStart, adj = this.adjList, island = this.island, stack = this.stack;
    // mark the island's bodies unvisited (island id −2), keeping their list
    const members: number[] = [];
    for (let k = this.head[i]; k >= 0; k = this.next[k]) members.push(k);
    for (const k of members) island[k] = -2;
    let first = true;
    for (const seed of members) {
      if (island[seed] !== -2) continue;
      const id = first ? i : this.free.pop()!;
      if (!first) this.splits++;
      first = false;
      this.head[id] = this.tail[id] = -1;
      this.size[id] = 0;
      this.dirty[id] = 0;
      let top = 0;
      stack[top++] = seed;
      island[seed] = id;
      while (top > 0) {
        const k = stack[--top];
        // append k to id's list
        this.next[k] = -1;
        if (this.head[id] < 0) this.head[id] = k;
        else this.next[this.tail[id]] = k;
        this.tail[id] = k;
        this.size[id]++;
        for (let q = start[k]; q < start[k + 1]; q++) {
          const j = adj[q];
          if (island[j] !== -2) continue;
          island[j] = id;
          stack[top++] = j;
        }
      }
    }
  }
}

/** Per-body sleep state and the per-frame island update (header). */
export class SleepState {
  /** 1 while the body sleeps (RigidBodyCore.asleep points here) */
  readonly asleep: Uint8Array;
  /** s the body has stayed below both speed thresholds (reset when it moves or wakes) */
  readonly timer: Float64Array;
  /** 1 when the body was slow at the last sample (header); 0 before the first (no frame stepped yet) */
  private readonly slowBefore: Uint8Array;
  /** the persistent islands (header) */
  readonly graph: IslandGraph;
  /** bodies woken (by the last update, or by wakeAll since) and put to sleep by the last update */
  woken = 0;
  fellAsleep = 0;
  // per root: counts of sleeping and awake bodies, and whether every awake one is past the timer
  private readonly sleepers: Int32Array;
  private readonly wakers: Int32Array;
  private readonly restless: Uint8Array;

  constructor(readonly inverseMass: Float64Array) {
    const n = inverseMass.length;
    this.asleep = new Uint8Array(n);
    this.timer = new Float64Array(n);
    this.slowBefore = new Uint8Array(n);
    this.graph = new IslandGraph(inverseMass);
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
      // the last frame rested iff the body was slow at both its ends (header)
      const slow = sv < v2 && sw < w2 ? 1 : 0;
      timer[i] = slow && this.slowBefore[i] ? timer[i] + dt : 0;
      this.slowBefore[i] = slow;
    }
    const graph = this.graph;
    graph.update(contacts, joints);
    const root = graph.island;
    // split the possibly-split islands where a body has rested long enough to sleep (header)
    for (let i = 0; i < n; i++) {
      const r = root[i];
      if (r >= 0 && graph.dirty[r] && !asleep[i] && timer[i] >= TIME_TO_SLEEP) graph.split(r);
    }
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

  /** the island of each body (an island id), −1 for fixed bodies */
  get island(): Int32Array {
    return this.graph.island;
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
