/**
 * Collision detection for one step, from the bodies' state to the step's contact points
 * (rows/contact.ts ContactList): bounds (aabb.ts) → broad phase (broadphase.ts, sweep and prune,
 * kept from step to step) → narrow phase per candidate pair (narrow.ts) → contact points with their
 * local anchors, the pair's μ and e, and their keys (warm start).
 *
 * Which pairs collide: the world's `collisions` is not false; not two fixed bodies; not a pair joined
 * by a joint (model/schema.ts); the world-anchor bodies a compiled world adds for joints to the world
 * (model/compiled.ts) are not bodies of the scene and never collide.
 *
 * Speculative margin: a pair is reported when its separation is below
 *   margin = SPECULATIVE_DISTANCE + h_frame (s_A + s_B),   s = |v| + |ω| R + ½ |g| h_frame
 * (R: the shape's bounding radius; each s then raised to what a partner can hand the body in the frame,
 * strikeSpeeds) the distance the two can close in the frame at most — to first order
 * in the rotation, and with the ½ g h² a body falls in the frame whatever its speed at the frame's start
 * (without it a box released at rest at dt = 0.5 s was first seen 1.45 m into the ground: it fell
 * ½ g h² = 1.23 m in one frame from speed 0) — plus a fixed 2 cm (Box2D v3's speculative distance,
 * 4 × its 5 mm slop). A speculative row (C > 0) lets the gap close and no more
 * (block-solver.ts ContactRule), so a body at 1/60 s cannot pass through a thin one in one frame.
 */
import type { BodyDesc } from '../model/world.js';
import { boundingRadius, leastHalfSize } from '../model/world.js';
import { shapeAabb } from './aabb.js';
import { SweepAndPrune } from './broadphase.js';
import { SolverFailure } from '../model/failure.js';
import { collide } from './narrow.js';
import type { Pose, CollisionShape as Shape } from './types.js';
import { ContactList, contactKey, tangentOf } from '../rows/contact.js';
import { ManifoldStore, MATCH_DISTANCE } from './manifolds.js';
import { MAX_MANIFOLD_POINTS } from './types.js';
import { rotateVectorBack } from '../rigid/quat.js';

/** Broad-phase candidates per body beyond which detection reports a blow-up (detect). */
export const MAX_CANDIDATES_PER_BODY = 64;

export const SPECULATIVE_DISTANCE = 0.02;
/** strikeSpeeds: up to n / this many grown bodies are queried one by one, more take a second sweep */
export const GROWN_QUERY_SHARE = 16;
/** Coherence: a manifold's points are carried (ManifoldStore.refresh) while none slid more than this fraction of the pair's slop. */
export const COHERENCE_DRIFT = 0.1;
/** m: the contact slop of metre-sized bodies (Box2D v3's linear slop, 5 mm; rows/block-solver.ts CONTACT_SLOP) */
export const LINEAR_SLOP = 0.005;
/**
 * Small bodies: a pair's slop is at most this fraction of the smaller body's least half size (sphere and
 * capsule radius, box half extent; planes are unbounded), and its speculative distance is 4 × its slop
 * (Box2D's ratio, SPECULATIVE_DISTANCE = 4 × LINEAR_SLOP), so both follow the bodies' size below
 * 25 cm: a 2 cm cube gets 0.2 mm of slop and a 0.8 mm margin. With the fixed 2 cm margin a 2 cm cube resting
 * on the ground had its top vertices within the margin, and the box–plane reduction to four points
 * could keep top vertices in place of bottom ones: the cube stood on fewer than four supports, and
 * tilted (measured 19–125° under the velocity solvers).
 */
export const SLOP_SIZE_FRACTION = 0.02;


/** A pair's slop (SLOP_SIZE_FRACTION): min(LINEAR_SLOP, fraction × the smaller least half size). */
export function pairSlop(sizeA: number, sizeB: number): number {
  return Math.min(LINEAR_SLOP, SLOP_SIZE_FRACTION * Math.min(sizeA, sizeB));
}
/** defaults of the scene format (model/schema.ts) */
export const DEFAULT_FRICTION = 0.6;
export const DEFAULT_RESTITUTION = 0;

export class CollisionPipeline {
  /** bodies of the scene (the compiled world's anchor bodies come after them and never collide) */
  readonly count: number;
  readonly shapes: Shape[];
  /** per body: dynamic friction μ_d (`dynamicFriction`, else `friction`) and static μ_s (`staticFriction`, else `friction`) */
  readonly friction: Float64Array;
  readonly staticFriction: Float64Array;
  readonly restitution: Float64Array;
  readonly radius: Float64Array;
  /** per body: 1 for a round shape (sphere, capsule), whose contact point moves over its surface as it rolls */
  readonly round: Uint8Array;
  /** per body: 1 for a plane */
  readonly isPlane: Uint8Array;
  /** per body: the least half size (model/world.ts leastHalfSize) */
  readonly size: Float64Array;
  readonly isStatic: Uint8Array;
  /** per body: 1/m (0 fixed): the strike speeds' share m_C/(m_B + m_C) (strikeSpeeds) */
  readonly inverseMass: Float64Array;
  readonly broad = new SweepAndPrune();
  /**
   * The pairs' persistent manifolds (manifolds.ts): updated in place by detect, each point of `out`
   * naming its record (ContactList.manifoldPoint), where the contact solver keeps its impulses.
   */
  readonly manifolds = new ManifoldStore();
  private aabbs: Float64Array;
  /** pairs joined by a joint: key lo · count + hi */
  private jointed = new Set<number>();
  /** candidate pairs of the last step (broad phase) and pairs that touched (narrow phase) */
  candidates = 0;
  touching = 0;

  constructor(bodies: readonly BodyDesc[], inverseMass: Float64Array) {
    const n = bodies.length;
    this.count = n;
    this.shapes = bodies.map((b) => b.shape);
    this.friction = Float64Array.from(bodies, (b) => b.dynamicFriction ?? b.friction ?? DEFAULT_FRICTION);
    this.staticFriction = Float64Array.from(bodies, (b) => b.staticFriction ?? b.friction ?? DEFAULT_FRICTION);
    this.restitution = Float64Array.from(bodies, (b) => b.restitution ?? DEFAULT_RESTITUTION);
    this.radius = Float64Array.from(bodies, (b) => boundingRadius(b.shape));
    this.size = Float64Array.from(bodies, (b) => leastHalfSize(b.shape));
    this.round = Uint8Array.from(bodies, (b) => (b.shape.type === 'sphere' || b.shape.type === 'capsule' ? 1 : 0));
    this.isPlane = Uint8Array.from(bodies, (b) => (b.shape.type === 'plane' ? 1 : 0));
    this.isStatic = Uint8Array.from(bodies, (_, i) => (inverseMass[i] === 0 ? 1 : 0));
    this.inverseMass = Float64Array.from(bodies, (_, i) => inverseMass[i]);
    this.aabbs = new Float64Array(6 * n);
  }

  /** Pairs joined by a joint (ib0/ib1 of the joints now) do not collide. */
  setJoints(ib0: Int32Array, ib1: Int32Array, count: number): void {
    this.jointed.clear();
    for (let k = 0; k < count; k++) {
      const a = ib0[k], b = ib1[k];
      if (a >= this.count || b >= this.count) continue; // a joint to the world
      this.jointed.add(a < b ? a * this.count + b : b * this.count + a);
    }
  }

  /**
   * The contact points at the pose given (3 per body positions, 4 per body orientations, velocities
   * 3 per body), into `out` (cleared first); h the frame's time step (the speculative margin).
   */
  /**
   * The broad phase's candidate pairs at the pose given, with the margins detect() would use (nothing else
   * is done: no narrow phase, no manifold touched). The GPU contact stages size their pair slots from it
   * (contacts/gpu-contacts.ts contactPairCapacity).
   */
  candidatePairs(position: Float64Array, orientation: Float64Array, linearVelocity: Float64Array, angularVelocity: Float64Array, h: number, gravity = 0): number {
    const n = this.count;
    const fall = 0.5 * gravity * h;
    const speed = this.speedScratch.length >= n ? this.speedScratch : (this.speedScratch = new Float64Array(n));
    for (let i = 0; i < n; i++) {
      const o = 3 * i;
      const s = this.isStatic[i] ? 0 : Math.hypot(linearVelocity[o], linearVelocity[o + 1], linearVelocity[o + 2]) + Math.hypot(angularVelocity[o], angularVelocity[o + 1], angularVelocity[o + 2]) * this.radius[i] + fall;
      speed[i] = s;
      shapeAabb(this.shapes[i], position, o, orientation, 4 * i, Math.min(SPECULATIVE_DISTANCE, 4 * SLOP_SIZE_FRACTION * this.size[i]) / 2 + h * s, this.aabbs, 6 * i);
    }
    this.broad.update(this.aabbs, n, this.isStatic);
    this.strikeSpeeds(position, orientation, h, speed, this.isStatic);
    return this.broad.pairCount;
  }

  detect(position: Float64Array, orientation: Float64Array, linearVelocity: Float64Array, angularVelocity: Float64Array, h: number, out: ContactList, asleep: Uint8Array | null = null, gravity = 0): void {
    out.clear();
    const n = this.count;
    // `asleep` (optional, per body): sleeping bodies are passed to the broad phase as static, so a
    // pair of two sleepers or of a sleeper and a fixed body is not looked at (nothing moves there)
    let inactive = this.isStatic;
    if (asleep) {
      inactive = this.inactiveScratch.length >= n ? this.inactiveScratch : (this.inactiveScratch = new Uint8Array(n));
      for (let i = 0; i < n; i++) inactive[i] = this.isStatic[i] | asleep[i];
    }
    const speed = this.speedScratch.length >= n ? this.speedScratch : (this.speedScratch = new Float64Array(n));
    const fall = 0.5 * gravity * h; // ½ |g| h: the frame's fall ½ |g| h² as a speed over h (header)
    for (let i = 0; i < n; i++) {
      const o = 3 * i;
      const vx = linearVelocity[o], vy = linearVelocity[o + 1], vz = linearVelocity[o + 2];
      const wx = angularVelocity[o], wy = angularVelocity[o + 1], wz = angularVelocity[o + 2];
      const s = this.isStatic[i] ? 0 : Math.sqrt(vx * vx + vy * vy + vz * vz) + Math.sqrt(wx * wx + wy * wy + wz * wz) * this.radius[i] + fall; // (not Math.hypot: slow in V8)
      speed[i] = s;
      shapeAabb(this.shapes[i], position, o, orientation, 4 * i, Math.min(SPECULATIVE_DISTANCE, 4 * SLOP_SIZE_FRACTION * this.size[i]) / 2 + h * s, this.aabbs, 6 * i);
    }
    this.broad.update(this.aabbs, n, inactive);
    this.strikeSpeeds(position, orientation, h, speed, inactive);
    const pairs = this.broad.pairs;
    this.candidates = this.broad.pairCount;
    // a state blowing up (speeds growing without bound) makes every speculative margin h·|v| cover
    // the scene and every pair a candidate: reported as the run's failure, before the points of
    // ~n²/2 pairs exhaust memory. A real pile has a few dozen neighbours per body at most.
    const limit = Math.max(MAX_CANDIDATES_PER_BODY * n, 1_000_000);
    if (this.candidates > limit) {
      let fastest = 0;
      for (let i = 0; i < n; i++) if (!(speed[i] <= fastest)) fastest = speed[i];
      throw new SolverFailure(`collision detection: ${this.candidates} candidate pairs among ${n} bodies (over ${limit}), the fastest body at ${fastest.toPrecision(3)} m/s: the state is blowing up`);
    }
    this.touching = 0;
    this.refreshed = 0;
    const store = this.manifolds;
    store.beginFrame();
    this.narrowPhase(position, orientation, linearVelocity, angularVelocity, h, out, speed, pairs);
    store.endFrame(inactive, asleep);
  }
  /**
   * The strike speeds: a body at rest hit within the frame by a partner moves in that frame, though its own
   * speed at the frame's start (the margin's s) says it cannot; so a contact it had no point of at the start
   * (the ground under a ball struck from above) was missed and it went through (5–5.2 cm under every CPU
   * contact solver, 8.5 cm once under avbd-cpu, for a 20 kg box at 6 m/s onto a 4 kg ball 1 cm above the
   * ground; test/strike.test.ts). A body gains in a frame at most what a partner can hand it: along the
   * contact normal the impulse is P = (1 + e) v_n / K with K ≥ 1/m_B + 1/m_C (the rotational terms only add),
   * so B's velocity changes by P/m_B ≤ (1 + e) m_C/(m_B + m_C) v_n, v_n the closing speed, ≤ s_C for a B
   * at rest. So each body's speed for the margins is
   *   s'_B = max(s_B, max over its candidate partners C of (1 + e_BC) m_C/(m_B + m_C) s_C),  e_BC = max(e_B, e_C)
   * exact for a B at rest (the fault); a moving B struck can gain (1 + e) m_C/(m_B + m_C) (s_B + s_C), which
   * this leaves out: added to s_B it would double every margin of a rain in flight, and a moving B has its
   * own margin h s_B. The spin an off-centre hit gives is left out too (the linear share only).
   * One hop through the broad phase's pairs: C's own speed s_C, not its s'_C. A chain of hits (a Newton's
   * cradle, a ball struck into a row) hands the speed on body by body, but the bodies of a chain that
   * passes speed on within one frame touch (a gap of d takes d / v of the frame to close): their contacts
   * are within the 4 slop margin anyway, and the restitution stages propagate the strike along them.
   * A body whose margin grew by more than half its fixed pad (h (s' − s) > min(SPEC, 4 frac L)/4: a pair
   * it misses then still keeps its pads' slack) gets its box re-expanded and its new pairs: few such bodies
   * are queried alone (SweepAndPrune.addGrown), many (a rain landing) take a second sweep of all boxes.
   * The narrow phase's margins use s' for every pair. At rest in a pile s' − s is the partners' differences
   * of speed ~ mm/s: no box grows there.
   */
  private strikeSpeeds(position: Float64Array, orientation: Float64Array, h: number, speed: Float64Array, inactive: Uint8Array): void {
    const n = this.count;
    const pairs = this.broad.pairs, m = this.broad.pairCount;
    const own = this.ownScratch.length >= n ? this.ownScratch : (this.ownScratch = new Float64Array(n));
    own.set(speed.subarray(0, n));
    const e = this.restitution, fixed = this.isStatic, w = this.inverseMass;
    for (let k = 0; k < m; k++) {
      const a = pairs[2 * k], b = pairs[2 * k + 1];
      // (1 + e) m_C/(m_B + m_C) = (1 + e) w_B/(w_B + w_C) with w = 1/m (a fixed C: w_C = 0, s_C = 0)
      const e1 = (1 + Math.max(e[a], e[b])) / (w[a] + w[b]);
      if (fixed[a] === 0 && e1 * w[a] * own[b] > speed[a]) speed[a] = e1 * w[a] * own[b];
      if (fixed[b] === 0 && e1 * w[b] * own[a] > speed[b]) speed[b] = e1 * w[b] * own[a];
    }
    const grown = this.grownScratch.length >= n ? this.grownScratch : (this.grownScratch = new Int32Array(n));
    let k = 0;
    for (let i = 0; i < n; i++) {
      const pad = Math.min(SPECULATIVE_DISTANCE, 4 * SLOP_SIZE_FRACTION * this.size[i]) / 2;
      if (h * (speed[i] - own[i]) > 0.5 * pad) grown[k++] = i;
    }
    this.grown = k;
    if (k === 0) return;
    const old = this.oldBoxScratch.length >= 6 * k ? this.oldBoxScratch : (this.oldBoxScratch = new Float64Array(6 * Math.max(k, 2 * this.oldBoxScratch.length / 6)));
    for (let t = 0; t < k; t++) {
      const i = grown[t];
      old.set(this.aabbs.subarray(6 * i, 6 * i + 6), 6 * t);
      const pad = Math.min(SPECULATIVE_DISTANCE, 4 * SLOP_SIZE_FRACTION * this.size[i]) / 2;
      shapeAabb(this.shapes[i], position, 3 * i, orientation, 4 * i, pad + h * speed[i], this.aabbs, 6 * i);
    }
    // few grown: only theirs looked at; many (a rain landing): one more sweep over all the boxes
    // (from the order just sorted) is cheaper than k queries
    if (GROWN_QUERY_SHARE * k <= n) this.broad.addGrown(this.aabbs, n, grown, k, old, inactive);
    else this.broad.update(this.aabbs, n, inactive);
  }
  /**
   * The narrow phase over the broad phase's pairs, each touching pair's manifold updated and its points
   * appended to `out`. (Its own function: the frame's one long loop, so V8's on-stack-replaced code for
   * it never meets code after the loop that it has no type feedback for; measured, detect in one piece
   * was deoptimised at that point every frame.)
   */
  private narrowPhase(position: Float64Array, orientation: Float64Array, linearVelocity: Float64Array, angularVelocity: Float64Array, h: number, out: ContactList, speed: Float64Array, pairs: Int32Array): void {
    const n = this.count;
    const store = this.manifolds;
    const poseA = this.poseA, poseB = this.poseB;
    for (let k = 0; k < this.broad.pairCount; k++) {
      const a = pairs[2 * k], b = pairs[2 * k + 1];
      if (this.jointed.size > 0 && this.jointed.has(a * n + b)) continue;
      // the pair's slop and speculative distance follow the smaller body's size (SLOP_SIZE_FRACTION)
      const slop = pairSlop(this.size[a], this.size[b]);
      const margin = 4 * slop + h * (speed[a] + speed[b]);
      // a plane and a body whose bounding sphere lies beyond the margin: no point can be within it (the
      // routines would find none; a plane's pairs are every body's, its bounds being unbounded)
      if (this.isPlane[a] | this.isPlane[b]) {
        const pl = this.isPlane[a] ? a : b, other = pl === a ? b : a;
        const q = 4 * pl, x = orientation[q], y = orientation[q + 1], z = orientation[q + 2], w = orientation[q + 3];
        // the plane's normal: its local y axis in the world (rigid/quat.ts rotate's column 1)
        const px = 2 * (x * y - z * w), py = 1 - 2 * (x * x + z * z), pz = 2 * (y * z + x * w);
        const o = 3 * other, op = 3 * pl;
        if (px * (position[o] - position[op]) + py * (position[o + 1] - position[op + 1]) + pz * (position[o + 2] - position[op + 2]) - this.radius[other] >= margin) continue;
      }
      // coherence (manifolds.ts refresh): a pair that barely moved relative to itself keeps its points
      // (slid < COHERENCE_DRIFT · slop, turned < 2 slop / R); else the narrow phase
      const buf = this.pointBuffer, ids = this.pointIds;
      let count = 0;
      const known = store.find(a, b);
      if (known >= 0 && this.coherence) {
        const turn = (2 * slop) / this.pairRadius(a, b);
        count = store.refresh(known, a, b, position, orientation, margin, COHERENCE_DRIFT * slop, 1 - 0.5 * turn * turn, buf, ids);
      }
      const fresh = count === 0;
      if (fresh) {
        setPose(poseA, position, orientation, a);
        setPose(poseB, position, orientation, b);
        const m = collide(this.shapes[a], poseA, this.shapes[b], poseB, margin);
        if (!m || m.points.length === 0) continue;
        buf[0] = m.normal[0];
        buf[1] = m.normal[1];
        buf[2] = m.normal[2];
        count = m.points.length;
        for (let i = 0; i < count; i++) {
          const p = m.points[i], w = 3 + 7 * i;
          buf[w] = p.pointA[0];
          buf[w + 1] = p.pointA[1];
          buf[w + 2] = p.pointA[2];
          buf[w + 3] = p.pointB[0];
          buf[w + 4] = p.pointB[1];
          buf[w + 5] = p.pointB[2];
          buf[w + 6] = p.separation;
          ids[i] = p.id;
        }
      }
      this.touching++;
      if (!fresh) this.refreshed++;
      const mu = Math.sqrt(this.friction[a] * this.friction[b]);
      const muStatic = Math.sqrt(this.staticFriction[a] * this.staticFriction[b]);
      const e = Math.max(this.restitution[a], this.restitution[b]);
      out.reserve(out.count + count);
      const nx = buf[0], ny = buf[1], nz = buf[2];
      // the pair's manifold, updated in place: its points matched by key or by anchor (manifolds.ts)
      // (refreshed: the records stand, their separations and normal moved by refresh)
      const slot = known >= 0 ? store.touch(known) : store.acquire(a, b);
      if (fresh) {
        store.beginUpdate(slot, nx, ny, nz, Math.min(MATCH_DISTANCE, 4 * slop));
        store.setNormalFrame(slot, this.normalFrameOf(a, b, ids, count), a, b, orientation, nx, ny, nz);
      }
      // t₁ = tangentOf(n), t₂ = n × t₁: one basis for the manifold
      const tb = this.tangentBasis;
      tangentOf(nx, ny, nz, tb, 0);
      const t1x = tb[0], t1y = tb[1], t1z = tb[2];
      const t2x = ny * t1z - nz * t1y, t2y = nz * t1x - nx * t1z, t2z = nx * t1y - ny * t1x;
      const oa = 3 * a, ob = 3 * b;
      const xax = position[oa], xay = position[oa + 1], xaz = position[oa + 2];
      const xbx = position[ob], xby = position[ob + 1], xbz = position[ob + 2];
      const vax = linearVelocity[oa], vay = linearVelocity[oa + 1], vaz = linearVelocity[oa + 2];
      const wax = angularVelocity[oa], way = angularVelocity[oa + 1], waz = angularVelocity[oa + 2];
      const vbx = linearVelocity[ob], vby = linearVelocity[ob + 1], vbz = linearVelocity[ob + 2];
      const wbx = angularVelocity[ob], wby = angularVelocity[ob + 1], wbz = angularVelocity[ob + 2];
      for (let i = 0; i < count; i++) {
        const w = 3 + 7 * i;
        const c = out.count++;
        out.bodyA[c] = a;
        out.bodyB[c] = b;
        const o3 = 3 * c;
        out.normal[o3] = nx;
        out.normal[o3 + 1] = ny;
        out.normal[o3 + 2] = nz;
        out.tangent1[o3] = t1x;
        out.tangent1[o3 + 1] = t1y;
        out.tangent1[o3 + 2] = t1z;
        out.tangent2[o3] = t2x;
        out.tangent2[o3 + 1] = t2y;
        out.tangent2[o3 + 2] = t2z;
        // lever arms r = p − x at detection (rows/contact.ts K1), and the anchors in the bodies' frames a = Rᵀ r
        const rax = buf[w] - xax, ray = buf[w + 1] - xay, raz = buf[w + 2] - xaz;
        const rbx = buf[w + 3] - xbx, rby = buf[w + 4] - xby, rbz = buf[w + 5] - xbz;
        out.armA[o3] = rax;
        out.armA[o3 + 1] = ray;
        out.armA[o3 + 2] = raz;
        out.armB[o3] = rbx;
        out.armB[o3 + 1] = rby;
        out.armB[o3 + 2] = rbz;
        if (fresh || this.rowFields) {
          rotateVectorBack(orientation, 4 * a, rax, ray, raz, out.anchorA, o3);
          rotateVectorBack(orientation, 4 * b, rbx, rby, rbz, out.anchorB, o3);
        }
        out.manifoldPoint[c] = fresh ? store.setPoint(slot, ids[i], out.anchorA[o3], out.anchorA[o3 + 1], out.anchorA[o3 + 2], out.anchorB[o3], out.anchorB[o3 + 1], out.anchorB[o3 + 2], buf[w + 6]) : 4 * slot + i;
        if (this.rowFields) {
          // the bodies' pose at detection (the rows' K1), and the key of the rows' warm start
          out.positionA0[o3] = xax;
          out.positionA0[o3 + 1] = xay;
          out.positionA0[o3 + 2] = xaz;
          out.positionB0[o3] = xbx;
          out.positionB0[o3 + 1] = xby;
          out.positionB0[o3 + 2] = xbz;
          const o4 = 4 * c;
          for (let k = 0; k < 4; k++) {
            out.orientationA0[o4 + k] = orientation[4 * a + k];
            out.orientationB0[o4 + k] = orientation[4 * b + k];
          }
          out.key[c] = contactKey(a, b, n, ids[i]);
        }
        out.separation[c] = buf[w + 6];
        out.slop[c] = slop;
        out.friction[c] = mu;
        out.staticFriction[c] = muStatic;
        out.restitution[c] = e;
        // v = v_B + ω_B × r_B − v_A − ω_A × r_A at the points; v₁ = n · v (restitution's approach
        // speed) and the slip speed |v − v₁ n| (static friction's test, rows/contact.ts K2)
        const vx = vbx + (wby * rbz - wbz * rby) - vax - (way * raz - waz * ray);
        const vy = vby + (wbz * rbx - wbx * rbz) - vay - (waz * rax - wax * raz);
        const vz = vbz + (wbx * rby - wby * rbx) - vaz - (wax * ray - way * rax);
        const v1 = nx * vx + ny * vy + nz * vz;
        out.approach[c] = v1;
        const sx = vx - v1 * nx, sy = vy - v1 * ny, sz = vz - v1 * nz;
        out.slip[c] = Math.sqrt(sx * sx + sy * sy + sz * sz);
      }
    }
  }
  /**
   * Which body's frame carries a fresh manifold's normal (ManifoldStore.refresh): a plane's (fixed), or
   * the reference box of a box–box face contact (feature kind 0, its refIsB bit, box-box.ts); else −1
   * (edge contacts, round shapes: regenerated every step).
   */
  private normalFrameOf(a: number, b: number, ids: Int32Array, count: number): number {
    const ta = this.shapes[a].type, tb = this.shapes[b].type;
    if (ta === 'plane') return 0;
    if (tb === 'plane') return 1;
    if (ta !== 'box' || tb !== 'box') return -1;
    const frame = (ids[0] >> 2) & 1;
    for (let i = 0; i < count; i++) if ((ids[i] & 3) !== 0 || ((ids[i] >> 2) & 1) !== frame) return -1;
    return frame;
  }
  /** The larger bounding radius of a pair, a plane's left out (coherence's turn bound). */
  private pairRadius(a: number, b: number): number {
    const ra = this.radius[a], rb = this.radius[b];
    if (!Number.isFinite(ra)) return rb;
    if (!Number.isFinite(rb)) return ra;
    return Math.max(ra, rb);
  }
  /**
   * Whether a pair that barely moved keeps its manifold's points (ManifoldStore.refresh) instead of a
   * narrow phase. On for the contact solver's manifolds (sequential-cpu.ts); off for the metrics, which
   * measure every step with the narrow phase, and for the row-path solvers, whose contact rows are
   * keyed per step (gs-cpu's joint class made directly on a contact world). jacobi-cpu's contacts are
   * the contact solver's Jacobi variant, which turns it on too.
   */
  coherence = false;
  /**
   * Whether `detect` fills the list's fields that only contact rows read (rows/contact.ts: the poses
   * at detection, the keys; the anchors of refreshed points). The contact solver's solvers, which
   * read the manifolds instead, turn it off.
   */
  rowFields = true;
  /** pairs whose points came from coherence (refresh) in the last step */
  refreshed = 0;
  private readonly pointBuffer = new Float64Array(3 + 7 * MAX_MANIFOLD_POINTS);
  private readonly pointIds = new Int32Array(MAX_MANIFOLD_POINTS);
  private readonly tangentBasis = new Float64Array(3);
  private readonly poseA: Pose = { position: [0, 0, 0], orientation: [0, 0, 0, 1] };
  private readonly poseB: Pose = { position: [0, 0, 0], orientation: [0, 0, 0, 1] };
  private speedScratch = new Float64Array(0);
  private ownScratch = new Float64Array(0);
  private grownScratch = new Int32Array(0);
  private oldBoxScratch = new Float64Array(0);
  /** per body: the speeds s' the last detect's margins used (strikeSpeeds; a view, overwritten by the next) */
  get speeds(): Float64Array {
    return this.speedScratch.subarray(0, this.count);
  }
  /** bodies whose box the strike speeds re-expanded in the last step (strikeSpeeds) */
  grown = 0;
  private inactiveScratch = new Uint8Array(0);
}

function setPose(pose: Pose, position: Float64Array, orientation: Float64Array, i: number): void {
  pose.position[0] = position[3 * i];
  pose.position[1] = position[3 * i + 1];
  pose.position[2] = position[3 * i + 2];
  pose.orientation[0] = orientation[4 * i];
  pose.orientation[1] = orientation[4 * i + 1];
  pose.orientation[2] = orientation[4 * i + 2];
  pose.orientation[3] = orientation[4 * i + 3];
}
