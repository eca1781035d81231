/**
 * Persistent contact manifolds: the one contact datum every contact solver and the metrics read.
 * A pair of bodies that touches keeps one manifold record from frame to frame (Box2D v3's b2Manifold
 * kept on its b2Contact and refreshed by b2UpdateContact; Jolt's contact cache), updated in place by
 * the narrow phase. Our code and words.
 *
 * A record (slot s) holds the pair (bodyA < bodyB as the narrow phase ordered them), the normal of its
 * last update and up to MAX_MANIFOLD_POINTS points; point k of slot s is record s · 4 + k with
 *   id             the narrow phase's feature key (collision/types.ts)
 *   anchorA/B      the points on A and B in their bodies' local frames, m
 *   separation     s = (p_B − p_A)·n at the update, m
 *   normalImpulse  λ_n, and tangentImpulse1/2 λ_t along t₁ = tangentOf(n), t₂ = n × t₁ (rows/contact.ts),
 *                  the accumulated contact force, N (a solver of (sub)step h applies the impulse h λ);
 *                  written back by the contact solver's store-impulses stage (contacts/contact-solver.ts).
 *
 * Update (updatePoints), per touching pair each frame: a new point takes the impulses of the old point
 * with the same id; else (the features changed: two equal boxes face to face swap clipped-corner labels
 * as they shift) of the nearest unmatched old point whose anchor on A lies within MATCH_DISTANCE, when
 * the normal turned less than acos(0.99) (the Starframe text's "contact point positions … with a
 * tolerance region"); else it starts at 0. The friction impulse is carried as the world vector
 * λ₁ t₁ + λ₂ t₂ of the old tangents, projected onto the new ones, so a turn of the tangent basis loses
 * nothing. Each old point gives its impulse to one new point at most.
 *
 * Coherence (refresh): a pair that has barely moved relative to itself since its last full narrow
 * phase keeps its points, carried with the bodies, and skips the narrow phase (Rapier's parry does the
 * same, ContactManifold::try_update_contacts); the bounds that make this safe are at refresh.
 *
 * Lookup: open addressing (linear probing, load ≤ 1/2) from the pair to its slot in typed arrays;
 * slots come from a free list. Nothing is allocated per frame or per pair once the arrays have grown
 * to the scene's size (no Map rebuilt per frame).
 *
 * Lifetime (endFrame): a record not touched in a frame is freed, unless both of its bodies are
 * inactive (asleep or fixed) with at least one asleep: a sleeping pile's pairs are not looked at
 * (pipeline.ts), and its manifolds wait, impulses and all, for it to wake (Box2D keeps a sleeping
 * island's contacts the same way).
 */
import { hashPair } from '../math/hash-pair.js';
export { hashPair };
import { MAX_MANIFOLD_POINTS } from './types.js';
import { tangentOf } from '../rows/contact.js';
import { rotateVector, rotateVectorBack } from '../rigid/quat.js';

/**
 * How far (m, in body A's frame) a point may have moved and still take the last frame's impulses when its
 * key changed: 2 cm for metre-sized bodies, and 4 × the pair's slop below (beginUpdate's matchDistance;
 * collision/pipeline.ts pairSlop), so a 1 cm cube's four corners, 1 cm apart, are not one another's match.
 */
export const MATCH_DISTANCE = 0.02;
/** cos of the largest turn of the normal across which a point matched by position keeps its impulses */
const MATCH_NORMAL_COS = 0.99;

export class ManifoldStore {
  /** slots in use or freed: 0 .. slotCount − 1 */
  slotCount = 0;
  capacity = 0;
  bodyA = new Int32Array(0);
  bodyB = new Int32Array(0);
  pointCount = new Int32Array(0);
  /** the frame stamp of the slot's last update; −1: free */
  stamp = new Int32Array(0);
  /** unit normal of the last update, world (3 per slot) */
  normal = new Float64Array(0);
  // per point (4 per slot)
  id = new Int32Array(0);
  anchorA = new Float64Array(0);
  anchorB = new Float64Array(0);
  separation = new Float64Array(0);
  normalImpulse = new Float64Array(0);
  tangentImpulse1 = new Float64Array(0);
  tangentImpulse2 = new Float64Array(0);
  /**
   * per point: which old point of its slot (0..3) it took its impulses from in the slot's last update
   * (setPoint's match by key or by anchor), −1 none (a new point); k itself when refresh kept the points.
   * A solver with per-point data of its own (xpbd-cpu's static-friction reference) follows the store's
   * matching through it instead of matching again.
   */
  origin = new Int8Array(0);
  /**
   * coherence (refresh): per slot, the body whose frame carries the normal (0: A, 1: B, −1: the slot may
   * not be refreshed), and the normal of the last full narrow phase in A's and in B's local frames (3 each)
   */
  normalFrame = new Int8Array(0);
  normalLocalA = new Float64Array(0);
  normalLocalB = new Float64Array(0);
  /** manifolds in use now */
  active = 0;

  private free = new Int32Array(0);
  private freeCount = 0;
  /** hash table: slot index or −1 */
  private table = new Int32Array(0);
  private mask = -1;
  private frameStamp = 0;
  // scratch for an update: the old points of the slot
  private readonly oldId = new Int32Array(MAX_MANIFOLD_POINTS);
  private readonly oldAnchor = new Float64Array(3 * MAX_MANIFOLD_POINTS);
  private readonly oldForce = new Float64Array(3 * MAX_MANIFOLD_POINTS);
  private readonly oldLambdaN = new Float64Array(MAX_MANIFOLD_POINTS);
  private readonly tangents = new Float64Array(6);

  constructor(initialSlots = 16) {
    this.grow(initialSlots);
  }

  /** Starts a frame's updates (records touched from now on belong to this frame). */
  beginFrame(): void {
    this.frameStamp++;
  }

  /** The slot of pair (a, b), made (empty, impulses 0) when the pair has none; marks it touched this frame. */
  acquire(a: number, b: number): number {
    let s = this.find(a, b);
    if (s < 0) {
      if (this.freeCount === 0) this.grow(2 * this.capacity);
      s = this.free[--this.freeCount];
      if (s >= this.slotCount) this.slotCount = s + 1;
      this.bodyA[s] = a;
      this.bodyB[s] = b;
      this.pointCount[s] = 0;
      this.normalFrame[s] = -1;
      this.insert(s);
      this.active++;
    }
    this.stamp[s] = this.frameStamp;
    return s;
  }

  /** Marks slot s (found by find) touched this frame; returns s. */
  touch(s: number): number {
    this.stamp[s] = this.frameStamp;
    return s;
  }

  /** The slot of pair (a, b) (in the order acquired), or −1. */
  find(a: number, b: number): number {
    const t = this.table, mask = this.mask;
    for (let i = hashPair(a, b) & mask; ; i = (i + 1) & mask) {
      const s = t[i];
      if (s < 0) return -1;
      if (this.bodyA[s] === a && this.bodyB[s] === b) return s;
    }
  }

  /**
   * Begins the update of slot s with normal n (header): saves its old points for matching, then
   * empties it; setPoint adds the new points one by one.
   */
  beginUpdate(s: number, nx: number, ny: number, nz: number, matchDistance = MATCH_DISTANCE): void {
    this.matchDistance2 = matchDistance * matchDistance;
    const n = this.pointCount[s];
    const o3 = 3 * s;
    const turned = this.normal[o3] * nx + this.normal[o3 + 1] * ny + this.normal[o3 + 2] * nz < MATCH_NORMAL_COS;
    const t = this.tangents;
    if (n > 0) {
      // old tangents (of the old normal): friction as a world vector
      tangentOf(this.normal[o3], this.normal[o3 + 1], this.normal[o3 + 2], t, 0);
      const onx = this.normal[o3], ony = this.normal[o3 + 1], onz = this.normal[o3 + 2];
      t[3] = ony * t[2] - onz * t[1];
      t[4] = onz * t[0] - onx * t[2];
      t[5] = onx * t[1] - ony * t[0];
    }
    this.oldCount = n;
    this.oldTurned = turned;
    this.oldUsed = 0;
    for (let k = 0; k < n; k++) {
      const p = 4 * s + k;
      this.oldId[k] = this.id[p];
      this.oldAnchor[3 * k] = this.anchorA[3 * p];
      this.oldAnchor[3 * k + 1] = this.anchorA[3 * p + 1];
      this.oldAnchor[3 * k + 2] = this.anchorA[3 * p + 2];
      this.oldLambdaN[k] = this.normalImpulse[p];
      const l1 = this.tangentImpulse1[p], l2 = this.tangentImpulse2[p];
      this.oldForce[3 * k] = l1 * t[0] + l2 * t[3];
      this.oldForce[3 * k + 1] = l1 * t[1] + l2 * t[4];
      this.oldForce[3 * k + 2] = l1 * t[2] + l2 * t[5];
    }
    this.normal[o3] = nx;
    this.normal[o3 + 1] = ny;
    this.normal[o3 + 2] = nz;
    // new tangents
    tangentOf(nx, ny, nz, t, 0);
    t[3] = ny * t[2] - nz * t[1];
    t[4] = nz * t[0] - nx * t[2];
    t[5] = nx * t[1] - ny * t[0];
    this.pointCount[s] = 0;
  }
  private oldCount = 0;
  private matchDistance2 = MATCH_DISTANCE * MATCH_DISTANCE;
  private oldTurned = false;
  private oldUsed = 0;

  /**
   * Adds point k = pointCount[s] of slot s (call after beginUpdate): its key, anchors (local) and
   * separation; its impulses carried from the matching old point (header). Returns the record index.
   */
  setPoint(s: number, id: number, ax: number, ay: number, az: number, bx: number, by: number, bz: number, separation: number): number {
    const k = this.pointCount[s]++;
    const p = 4 * s + k;
    this.id[p] = id;
    const o = 3 * p;
    this.anchorA[o] = ax;
    this.anchorA[o + 1] = ay;
    this.anchorA[o + 2] = az;
    this.anchorB[o] = bx;
    this.anchorB[o + 1] = by;
    this.anchorB[o + 2] = bz;
    this.separation[p] = separation;
    let m = -1;
    for (let q = 0; q < this.oldCount; q++) {
      if (this.oldId[q] === id && !(this.oldUsed & (1 << q))) {
        m = q;
        break;
      }
    }
    if (m < 0 && !this.oldTurned) {
      let best = this.matchDistance2;
      for (let q = 0; q < this.oldCount; q++) {
        if (this.oldUsed & (1 << q)) continue;
        const dx = ax - this.oldAnchor[3 * q], dy = ay - this.oldAnchor[3 * q + 1], dz = az - this.oldAnchor[3 * q + 2];
        const d2 = dx * dx + dy * dy + dz * dz;
        if (d2 < best) (best = d2), (m = q);
      }
    }
    this.origin[p] = m;
    if (m < 0) {
      this.normalImpulse[p] = 0;
      this.tangentImpulse1[p] = 0;
      this.tangentImpulse2[p] = 0;
      return p;
    }
    this.oldUsed |= 1 << m;
    const t = this.tangents;
    const fx = this.oldForce[3 * m], fy = this.oldForce[3 * m + 1], fz = this.oldForce[3 * m + 2];
    this.normalImpulse[p] = this.oldLambdaN[m];
    this.tangentImpulse1[p] = fx * t[0] + fy * t[1] + fz * t[2];
    this.tangentImpulse2[p] = fx * t[3] + fy * t[4] + fz * t[5];
    return p;
  }

  /**
   * Coherence: slot s's points carried to the pose now without a narrow phase, when the pair has barely
   * moved relative to itself since its last full narrow phase (Rapier's parry does the same:
   * ContactManifold::try_update_contacts, 1° and 1 mm there). The normal is the generation's, carried
   * by the body whose frame it belongs to (normalFrame: the plane, or the reference box of a face
   * contact); each point is the incident body's anchor carried by it (p = x + R a: a box's vertex, or
   * where the clipped polygon crossed a side), its separation s = (p_inc − p_ref)·n from the reference
   * anchor (exact for those material points), and its foot on the reference face p − s n, as the narrow
   * phase gives the reference point. Refused (returns 0: the pair
   * goes through the narrow phase) when
   *   - the slot has no frame (edge contacts, round shapes' moving points: they are always regenerated);
   *   - the two bodies' copies of the normal differ by more than the turn whose cosine is `minCos`: a
   *     relative turn θ about a tangent moves a support point at lever L by θL along n, so with
   *     θ R ≤ 2 slop (the caller's bound, R the larger bounding radius) a point left out of the manifold,
   *     which was beyond the margin ≥ 4 slop, cannot reach contact unseen;
   *   - a point slid more than `maxDrift` across the normal (|p_B − p_A|² − s² > maxDrift²): the
   *     clipped polygon's crossings follow the other body's edges, so the features may have changed;
   *   - a point changed side (s s_old < 0; parry's rule too): touching points may appear or go;
   *   - a point is now beyond `margin`: the pair may have parted.
   * Otherwise writes the normal out[0..3) and per point k the record out[3 + 7k ..): p_A (3), p_B (3), s,
   * and its key ids[k]; returns the point count.
   */
  refresh(s: number, a: number, b: number, position: Float64Array, orientation: Float64Array, margin: number, maxDrift: number, minCos: number, out: Float64Array, ids: Int32Array): number {
    const frame = this.normalFrame[s];
    const n = this.pointCount[s];
    if (frame < 0 || n === 0 || this.stamp[s] < 0) return 0;
    const r = this.rotScratch;
    const o3 = 3 * s;
    rotateVector(orientation, 4 * a, this.normalLocalA[o3], this.normalLocalA[o3 + 1], this.normalLocalA[o3 + 2], r, 0);
    rotateVector(orientation, 4 * b, this.normalLocalB[o3], this.normalLocalB[o3 + 1], this.normalLocalB[o3 + 2], r, 3);
    if (r[0] * r[3] + r[1] * r[4] + r[2] * r[5] < minCos) return 0;
    const f = frame === 0 ? 0 : 3;
    const nx = r[f], ny = r[f + 1], nz = r[f + 2];
    const maxDrift2 = maxDrift * maxDrift;
    const xa = 3 * a, xb = 3 * b;
    for (let k = 0; k < n; k++) {
      const p = 4 * s + k, q = 3 * p;
      rotateVector(orientation, 4 * a, this.anchorA[q], this.anchorA[q + 1], this.anchorA[q + 2], r, 0);
      rotateVector(orientation, 4 * b, this.anchorB[q], this.anchorB[q + 1], this.anchorB[q + 2], r, 3);
      const pax = position[xa] + r[0], pay = position[xa + 1] + r[1], paz = position[xa + 2] + r[2];
      const pbx = position[xb] + r[3], pby = position[xb + 1] + r[4], pbz = position[xb + 2] + r[5];
      const dx = pbx - pax, dy = pby - pay, dz = pbz - paz;
      const sep = dx * nx + dy * ny + dz * nz;
      if (sep * this.separation[p] < 0 || sep >= margin) return 0;
      if (dx * dx + dy * dy + dz * dz - sep * sep > maxDrift2) return 0;
      const w = 3 + 7 * k;
      if (frame === 0) {
        // A carries the reference face: B's material point, and its foot on that face (as the narrow phase gives it)
        out[w] = pbx - sep * nx;
        out[w + 1] = pby - sep * ny;
        out[w + 2] = pbz - sep * nz;
        out[w + 3] = pbx;
        out[w + 4] = pby;
        out[w + 5] = pbz;
      } else {
        out[w] = pax;
        out[w + 1] = pay;
        out[w + 2] = paz;
        out[w + 3] = pax + sep * nx;
        out[w + 4] = pay + sep * ny;
        out[w + 5] = paz + sep * nz;
      }
      out[w + 6] = sep;
      ids[k] = this.id[p];
    }
    // accepted: the records keep their anchors (the generation's, so the drift above is measured
    // from it, not from the last step) and their impulses; the separations and normal are the pose's
    for (let k = 0; k < n; k++) {
      this.separation[4 * s + k] = out[3 + 7 * k + 6];
      this.origin[4 * s + k] = k;
    }
    this.turnNormal(s, nx, ny, nz);
    out[0] = nx;
    out[1] = ny;
    out[2] = nz;
    return n;
  }

  /**
   * Slot s's normal becomes n with its points kept (refresh): each point's friction impulse is carried
   * as the world vector λ₁ t₁ + λ₂ t₂ of the old tangents, projected onto the new ones (beginUpdate's rule).
   */
  private turnNormal(s: number, nx: number, ny: number, nz: number): void {
    const o3 = 3 * s;
    const onx = this.normal[o3], ony = this.normal[o3 + 1], onz = this.normal[o3 + 2];
    if (onx === nx && ony === ny && onz === nz) return;
    const t = this.tangents, u = this.rotScratch;
    tangentOf(onx, ony, onz, t, 0);
    t[3] = ony * t[2] - onz * t[1];
    t[4] = onz * t[0] - onx * t[2];
    t[5] = onx * t[1] - ony * t[0];
    tangentOf(nx, ny, nz, u, 0);
    u[3] = ny * u[2] - nz * u[1];
    u[4] = nz * u[0] - nx * u[2];
    u[5] = nx * u[1] - ny * u[0];
    for (let k = 0; k < this.pointCount[s]; k++) {
      const p = 4 * s + k;
      const l1 = this.tangentImpulse1[p], l2 = this.tangentImpulse2[p];
      const fx = l1 * t[0] + l2 * t[3], fy = l1 * t[1] + l2 * t[4], fz = l1 * t[2] + l2 * t[5];
      this.tangentImpulse1[p] = fx * u[0] + fy * u[1] + fz * u[2];
      this.tangentImpulse2[p] = fx * u[3] + fy * u[4] + fz * u[5];
    }
    this.normal[o3] = nx;
    this.normal[o3 + 1] = ny;
    this.normal[o3 + 2] = nz;
  }

  /**
   * After a full narrow phase of slot s with normal n: which body carries n (frame, refresh's header;
   * −1: never refreshed) and n in A's and B's local frames, n_local = Rᵀ n.
   */
  setNormalFrame(s: number, frame: number, a: number, b: number, orientation: Float64Array, nx: number, ny: number, nz: number): void {
    this.normalFrame[s] = frame;
    if (frame < 0) return;
    const r = this.rotScratch;
    rotateVectorBack(orientation, 4 * a, nx, ny, nz, r, 0);
    rotateVectorBack(orientation, 4 * b, nx, ny, nz, r, 3);
    const o3 = 3 * s;
    for (let i = 0; i < 3; i++) {
      this.normalLocalA[o3 + i] = r[i];
      this.normalLocalB[o3 + i] = r[3 + i];
    }
  }
  private readonly rotScratch = new Float64Array(6);

  /**
   * Ends a frame's updates: frees every record not touched in it, but those of an inactive pair with
   * a sleeper (header). `inactive`: per body 1 when asleep or fixed; `asleep` per body, or null.
   */
  endFrame(inactive: Uint8Array, asleep: Uint8Array | null): void {
    for (let s = 0; s < this.slotCount; s++) {
      const st = this.stamp[s];
      if (st < 0 || st === this.frameStamp) continue;
      const a = this.bodyA[s], b = this.bodyB[s];
      if (asleep && inactive[a] && inactive[b] && (asleep[a] || asleep[b])) continue;
      this.release(s);
    }
  }

  /** Frees every record (a world whose joints changed, or a reset). */
  clear(): void {
    for (let s = 0; s < this.slotCount; s++) if (this.stamp[s] >= 0) this.release(s);
  }

  private release(s: number): void {
    this.remove(s);
    this.stamp[s] = -1;
    this.pointCount[s] = 0;
    this.free[this.freeCount++] = s;
    this.active--;
  }

  private insert(s: number): void {
    const t = this.table, mask = this.mask;
    let i = hashPair(this.bodyA[s], this.bodyB[s]) & mask;
    while (t[i] >= 0) i = (i + 1) & mask;
    t[i] = s;
  }

  /** Deletes slot s from the table (linear probing's backward-shift deletion: no tombstones). */
  private remove(s: number): void {
    const t = this.table, mask = this.mask;
    let i = hashPair(this.bodyA[s], this.bodyB[s]) & mask;
    while (t[i] !== s) i = (i + 1) & mask;
    t[i] = -1;
    for (let j = (i + 1) & mask; t[j] >= 0; j = (j + 1) & mask) {
      const q = t[j];
      const home = hashPair(this.bodyA[q], this.bodyB[q]) & mask;
      // q may move into the hole at i when its home is not in (i, j] (cyclically)
      const inRange = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!inRange) {
        t[i] = q;
        t[j] = -1;
        i = j;
      }
    }
  }

  private grow(slots: number): void {
    const cap = Math.max(slots, 16);
    const old = this.capacity;
    const g = <T extends Int32Array | Float64Array>(a: T, fresh: T): T => {
      fresh.set(a as never);
      return fresh;
    };
    this.bodyA = g(this.bodyA, new Int32Array(cap));
    this.bodyB = g(this.bodyB, new Int32Array(cap));
    this.pointCount = g(this.pointCount, new Int32Array(cap));
    const stamp = new Int32Array(cap).fill(-1);
    stamp.set(this.stamp);
    this.stamp = stamp;
    this.normal = g(this.normal, new Float64Array(3 * cap));
    const frame = new Int8Array(cap).fill(-1);
    frame.set(this.normalFrame);
    this.normalFrame = frame;
    this.normalLocalA = g(this.normalLocalA, new Float64Array(3 * cap));
    this.normalLocalB = g(this.normalLocalB, new Float64Array(3 * cap));
    const P = MAX_MANIFOLD_POINTS * cap;
    this.id = g(this.id, new Int32Array(P));
    this.anchorA = g(this.anchorA, new Float64Array(3 * P));
    this.anchorB = g(this.anchorB, new Float64Array(3 * P));
    this.separation = g(this.separation, new Float64Array(P));
    this.normalImpulse = g(this.normalImpulse, new Float64Array(P));
    this.tangentImpulse1 = g(this.tangentImpulse1, new Float64Array(P));
    this.tangentImpulse2 = g(this.tangentImpulse2, new Float64Array(P));
    const origin = new Int8Array(P).fill(-1);
    origin.set(this.origin);
    this.origin = origin;
    const free = new Int32Array(cap);
    free.set(this.free.subarray(0, this.freeCount));
    // new slots, handed out lowest first
    for (let s = cap - 1; s >= old; s--) free[this.freeCount++] = s;
    this.free = free;
    this.capacity = cap;
    // the table at twice the slots (load ≤ 1/2), rebuilt
    let size = 16;
    while (size < 2 * cap) size *= 2;
    this.table = new Int32Array(size).fill(-1);
    this.mask = size - 1;
    for (let s = 0; s < this.slotCount; s++) if (this.stamp[s] >= 0) this.insert(s);
  }
}

