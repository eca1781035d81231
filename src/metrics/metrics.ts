/**
 * Metrics, recomputed from a Snapshot and the WorldDesc — never read from a
 * solver's own arrays (a solver's violations, multipliers or energies are not trusted).
 *
 *   violation   linear (m) and angular (rad), over the rigid joints (a soft joint's stretch is its
 *               spring's, not an error), written here from each joint's definition, independently of
 *               the solvers' rows (rows/), so a fault in a row's C is not hidden:
 *                 point, and the anchors of hinge and fixed:
 *                   |c_ℓ| = |x_A + R(q_A) r⁰ − x_B − R(q_B) r¹|   (reference text, eq. 3)
 *                 distance: | |p_A − p_B| − length |, or how far |p_A − p_B| is outside [minLength, maxLength]
 *                 hinge: the angle between R_A axisA and R_B axisB, atan2(|a × b|, a · b), and how far
 *                   the hinge angle θ = 2 atan2(v·axisA, w) of q_d = q_A⁻¹ q_B q_ref⁻¹ is outside its limits
 *                 fixed: the angle of the relative rotation q_A⁻¹ q_B q_ref⁻¹, 2 atan2(|v|, |w|)
 *               (q_ref = q_A⁻¹ q_B in the starting pose)
 *   energy      E = Σ ½ m |v|² + ½ ωᵀ I_world ω − m g·x + Σ_soft ½ |c_ℓ|²/α_ℓ
 *               (J; fixed bodies excluded; the last sum is the soft joints' elastic energy)
 *   momentum    p = Σ m v;  angular momentum L = Σ x × m v + I_world ω  (about the origin)
 *   contacts    (worlds with collisions on) collision detection run afresh on the snapshot's pose
 *               (collision/pipeline.ts, not the solver's contact list): the deepest penetration
 *               max(0, −s) over every contact point (m), and the number of points that touch:
 *               separation s ≤ the pair's slop (collision/pipeline.ts pairSlop, the solvers' own: 5 mm,
 *               2 % of the smaller body's least half size below 25 cm), the tolerance within which a
 *               resting contact sits; detection at rest finds every point out to 4 slops, so none
 *               within the slop is missed. (It was a fixed 5 mm, the slop before it followed the
 *               bodies' size: on bodies under 6.25 cm the detection margin 4 slops fell short of it,
 *               so the count was "s ≤ 4 slops", not what it said, and it grew with a body's size at
 *               the same relative gap: a 10 cm cube 2 mm above the ground touched, a 1 m cube 2 cm not.)
 *   awake       the dynamic bodies not asleep (Snapshot.asleep, awakeBodies), out of all dynamic ones:
 *               a count of state, read from the snapshot's mask (which bodies the solver froze), not a
 *               physical figure recomputed — every dynamic body when the snapshot has no mask
 */
import type { WorldDesc } from '../model/world.js';
import { massProperties } from '../model/world.js';
import { forEachBody, forEachConstraint, packedBodies, packedConstraints } from '../model/packed.js';
import { awakeBodies, type Snapshot } from '../model/snapshot.js';
import { isParticleSystem, type SceneDesc } from '../model/scene-desc.js';
import { ParticleMetricsContext } from '../particles/metrics.js';
import type { FrameMetrics } from './frame-metrics.js';
import { CollisionPipeline, pairSlop } from '../collision/pipeline.js';
import { ContactList } from '../rows/contact.js';

export type { FrameMetrics };

/** Per-body mass and local inertia (diagonal for spheres), computed once per world. */
export class MetricsContext {
  readonly mass: Float64Array;
  readonly inertiaLocal: Float64Array; // 9 per body
  /** compliance α of each constraint (0: rigid) */
  readonly compliance: Float64Array;
  /** per constraint: q_ref = q_A⁻¹ q_B in the starting pose (4), and a distance joint's length (its starting length where it gives none) */
  private readonly reference: Float64Array;
  private readonly restLength: Float64Array;
  /** per body 1 when dynamic (not fixed), and how many (the count `awake` is out of) */
  private readonly dynamic: Uint8Array;
  readonly dynamicBodies: number;
  /** @param defaultCompliance α of the joints that set none (the solver's --compliance) */
  /** per joint: bodies (−1: the world), anchors (3 each), and its own fields (type, axes, lengths, limits) */
  private readonly ib0: Int32Array;
  private readonly ib1: Int32Array;
  private readonly rA: Float64Array;
  private readonly rB: Float64Array;
  private readonly joint: (ic: number) => Joint;
  constructor(readonly world: WorldDesc, defaultCompliance = 0) {
    // every list read once, in one pass (packed lists: from their typed arrays, no object per element)
    const n = world.bodies.length;
    this.mass = new Float64Array(n);
    this.inertiaLocal = new Float64Array(9 * n);
    const nc = world.constraints.length;
    this.compliance = new Float64Array(nc);
    this.reference = new Float64Array(4 * nc);
    this.restLength = new Float64Array(nc).fill(NaN);
    this.ib0 = new Int32Array(nc);
    this.ib1 = new Int32Array(nc);
    this.rA = new Float64Array(3 * nc);
    this.rB = new Float64Array(3 * nc);
    const packed = packedConstraints(world.constraints);
    const plain = world.constraints;
    this.joint = packed ? (ic) => packed.prototypes.list[packed.prototype[ic]] as unknown as Joint : (ic) => plain[ic];
    const x0 = new Float64Array(3 * n);
    const q0 = new Float64Array(4 * n);
    this.dynamic = new Uint8Array(n);
    const props = new Map<object, ReturnType<typeof massProperties>>(); // per shared prototype (packed), else per body
    const bodiesPacked = packedBodies(world.bodies) !== null;
    forEachBody(world.bodies, (i, b, x, at, q, qAt) => {
      x0[3 * i] = x[at];
      x0[3 * i + 1] = x[at + 1];
      x0[3 * i + 2] = x[at + 2];
      q0.set(unit(q ? [q[qAt], q[qAt + 1], q[qAt + 2], q[qAt + 3]] : [0, 0, 0, 1]), 4 * i);
      if (b.fixed) return; // fixed bodies carry no energy
      this.dynamic[i] = 1;
      let mp = props.get(b);
      if (!mp) props.set(b, (mp = massProperties({ ...b, position: [0, 0, 0] })));
      if (!bodiesPacked) props.clear(); // a plain list's bodies are each their own: no cache to keep
      this.mass[i] = mp.mass;
      this.inertiaLocal.set(mp.inertiaLocal, 9 * i);
    });
    this.dynamicBodies = this.dynamic.reduce((k, d) => k + d, 0);
    const pa = [0, 0, 0], pb = [0, 0, 0];
    forEachConstraint(world.constraints, (ic, c, bodyA, bodyB, anchorA, anchorB, at) => {
      this.ib0[ic] = bodyA;
      this.ib1[ic] = bodyB === null ? -1 : bodyB;
      for (let d = 0; d < 3; d++) (this.rA[3 * ic + d] = anchorA[at + d]), (this.rB[3 * ic + d] = anchorB[at + d]);
      this.compliance[ic] = c.compliance ?? defaultCompliance;
      relative(q0, bodyA, bodyB, IDENTITY, 0, this.reference, 4 * ic);
      if (c.type === 'distance' && c.length === undefined && c.minLength === undefined && c.maxLength === undefined) {
        this.anchors(x0, q0, ic, pa, pb);
        this.restLength[ic] = Math.hypot(pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]);
      } else if (c.type === 'distance' && c.length !== undefined) this.restLength[ic] = c.length;
    });
  }

  /** Joint ic's two anchor points in the world: a = x_A + R_A r_A, b = x_B + R_B r_B (or the world point). */
  private anchors(x: Float64Array, q: Float64Array, ic: number, a: number[], b: number[]): void {
    worldPoint(x, q, this.ib0[ic], this.rA, 3 * ic, a);
    const B = this.ib1[ic];
    if (B < 0) (b[0] = this.rB[3 * ic], b[1] = this.rB[3 * ic + 1], b[2] = this.rB[3 * ic + 2]);
    else worldPoint(x, q, B, this.rB, 3 * ic, b);
  }

  private collision: CollisionPipeline | null | undefined;
  private readonly contactList = new ContactList();
  /** zero velocities for detection on a snapshot (the margin then is the fixed speculative distance) */
  private restVelocity = new Float64Array(0);

  /** The deepest penetration (m) and the touching points at the snapshot's pose (header), or null without collisions. */
  contactsOf(s: Snapshot): { maxPenetration: number; contacts: number } | null {
    const world = this.world;
    if (this.collision === undefined) {
      if (world.collisions === false || world.bodies.length < 2) this.collision = null;
      else {
        const inverseMass = Float64Array.from(world.bodies, (b) => (b.fixed ? 0 : 1));
        this.collision = new CollisionPipeline(world.bodies, inverseMass);
        const joined = world.constraints.filter((c) => c.bodyB !== null);
        this.collision.setJoints(Int32Array.from(joined, (c) => c.bodyA), Int32Array.from(joined, (c) => c.bodyB as number), joined.length);
      }
    }
    if (!this.collision) return null;
    const n = world.bodies.length;
    const zeros = this.restVelocity.length === 3 * n ? this.restVelocity : (this.restVelocity = new Float64Array(3 * n));
    this.collision.detect(s.position.subarray(0, 3 * n) as Float64Array, s.orientation.subarray(0, 4 * n) as Float64Array, zeros, zeros, 0, this.contactList);
    const list = this.contactList;
    const size = this.collision.size;
    let deepest = 0, touching = 0;
    for (let c = 0; c < list.count; c++) {
      const sep = list.separation[c];
      if (-sep > deepest) deepest = -sep;
      if (sep <= pairSlop(size[list.bodyA[c]], size[list.bodyB[c]])) touching++; // within the pair's slop (header)
    }
    return { maxPenetration: deepest, contacts: touching };
  }

  measure(s: Snapshot): FrameMetrics {
    const { world } = this;
    const n = s.bodyCount;
    const x = s.position, q = s.orientation, v = s.linearVelocity, w = s.angularVelocity;
    let finite = true;
    for (const arr of [x, q, v, w]) {
      for (let i = 0; i < arr.length; i++) if (!Number.isFinite(arr[i])) { finite = false; break; }
      if (!finite) break;
    }

    // constraint violation
    let maxV = 0, sumSq = 0, rigid = 0, elastic = 0, maxAngle = 0;
    const a = [0, 0, 0], b = [0, 0, 0];
    for (let ic = 0; ic < this.ib0.length; ic++) {
      const c = this.joint(ic);
      const bodyA = this.ib0[ic], bodyB = this.ib1[ic] < 0 ? null : this.ib1[ic];
      this.anchors(x, q, ic, a, b);
      const d2 = (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2;
      let linear: number, angle = 0;
      if (c.type === 'distance') {
        const L = Math.sqrt(d2);
        if (!Number.isNaN(this.restLength[ic])) linear = Math.abs(L - this.restLength[ic]);
        else linear = Math.max(0, (c.minLength ?? -Infinity) - L, L - (c.maxLength ?? Infinity));
      } else linear = Math.sqrt(d2);
      if (c.type === 'hinge') angle = hingeViolation(q, c, bodyA, bodyB, this.reference, 4 * ic);
      else if (c.type === 'fixed') {
        relative(q, bodyA, bodyB, this.reference, 4 * ic, rel, 0);
        angle = 2 * Math.atan2(Math.hypot(rel[0], rel[1], rel[2]), Math.abs(rel[3]));
      }
      const alpha = this.compliance[ic];
      if (alpha > 0) {
        elastic += (0.5 * (linear * linear + angle * angle)) / alpha;
        continue;
      }
      rigid++;
      sumSq += linear * linear;
      if (linear > maxV || Number.isNaN(linear)) maxV = Number.isNaN(linear) ? NaN : linear;
      if (angle > maxAngle || Number.isNaN(angle)) maxAngle = Number.isNaN(angle) ? NaN : angle;
    }

    // energy and momentum
    const g = world.gravity;
    let kinetic = 0, potential = 0;
    const p: [number, number, number] = [0, 0, 0];
    const L: [number, number, number] = [0, 0, 0];
    const Iw = [0, 0, 0];
    for (let i = 0; i < n; i++) {
      const m = this.mass[i];
      if (m === 0) continue;
      const o = 3 * i;
      const vx = v[o], vy = v[o + 1], vz = v[o + 2];
      kinetic += 0.5 * m * (vx * vx + vy * vy + vz * vz);
      potential -= m * (g[0] * x[o] + g[1] * x[o + 1] + g[2] * x[o + 2]);
      p[0] += m * vx; p[1] += m * vy; p[2] += m * vz;
      worldInertiaTimes(this.inertiaLocal, 9 * i, q, 4 * i, w[o], w[o + 1], w[o + 2], Iw);
      kinetic += 0.5 * (w[o] * Iw[0] + w[o + 1] * Iw[1] + w[o + 2] * Iw[2]);
      L[0] += m * (x[o + 1] * vz - x[o + 2] * vy) + Iw[0];
      L[1] += m * (x[o + 2] * vx - x[o] * vz) + Iw[1];
      L[2] += m * (x[o] * vy - x[o + 1] * vx) + Iw[2];
    }
    return {
      t: s.time,
      maxViolation: maxV,
      maxAngularViolation: maxAngle,
      rmsViolation: rigid ? Math.sqrt(sumSq / rigid) : 0,
      energy: kinetic + potential + elastic,
      kinetic,
      potential: potential + elastic,
      elastic,
      momentum: p,
      angularMomentum: L,
      finite,
      ...(finite ? this.contactsOf(s) ?? {} : {}),
      awake: awakeBodies(s, this.dynamic),
      dynamicBodies: this.dynamicBodies,
    };
  }
}

type Joint = WorldDesc['constraints'][number];
const IDENTITY = Float64Array.of(0, 0, 0, 1);
const rel = new Float64Array(4);
const axisA = [0, 0, 0], axisB = [0, 0, 0];

function unit(q: ArrayLike<number>): number[] {
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}


/** out = q_A⁻¹ ⊗ q_B ⊗ ref⁻¹ (q_B = identity for the world), ref = ref[ro..ro+4). */
function relative(q: Float64Array, bodyA: number, bodyB: number | null, ref: Float64Array, ro: number, out: Float64Array, oo: number): void {
  const ax = -q[4 * bodyA], ay = -q[4 * bodyA + 1], az = -q[4 * bodyA + 2], aw = q[4 * bodyA + 3];
  const bx = bodyB === null ? 0 : q[4 * bodyB], by = bodyB === null ? 0 : q[4 * bodyB + 1];
  const bz = bodyB === null ? 0 : q[4 * bodyB + 2], bw = bodyB === null ? 1 : q[4 * bodyB + 3];
  // t = conj(q_A) ⊗ q_B
  const tx = aw * bx + bw * ax + (ay * bz - az * by), ty = aw * by + bw * ay + (az * bx - ax * bz);
  const tz = aw * bz + bw * az + (ax * by - ay * bx), tw = aw * bw - (ax * bx + ay * by + az * bz);
  // t ⊗ conj(ref)
  const rx = -ref[ro], ry = -ref[ro + 1], rz = -ref[ro + 2], rw = ref[ro + 3];
  out[oo] = tw * rx + rw * tx + (ty * rz - tz * ry);
  out[oo + 1] = tw * ry + rw * ty + (tz * rx - tx * rz);
  out[oo + 2] = tw * rz + rw * tz + (tx * ry - ty * rx);
  out[oo + 3] = tw * rw - (tx * rx + ty * ry + tz * rz);
}

/** A hinge's angular violation: the angle between its axes in the world, or how far its angle is past a limit. */
function hingeViolation(q: Float64Array, c: Joint & { type: 'hinge' }, bodyA: number, bodyB: number | null, ref: Float64Array, ro: number): number {
  const na = Math.hypot(c.axisA[0], c.axisA[1], c.axisA[2]), nb = Math.hypot(c.axisB[0], c.axisB[1], c.axisB[2]);
  rotate(q, 4 * bodyA, c.axisA[0] / na, c.axisA[1] / na, c.axisA[2] / na, axisA);
  if (bodyB === null) (axisB[0] = c.axisB[0] / nb, axisB[1] = c.axisB[1] / nb, axisB[2] = c.axisB[2] / nb);
  else rotate(q, 4 * bodyB, c.axisB[0] / nb, c.axisB[1] / nb, c.axisB[2] / nb, axisB);
  const cx = axisA[1] * axisB[2] - axisA[2] * axisB[1], cy = axisA[2] * axisB[0] - axisA[0] * axisB[2], cz = axisA[0] * axisB[1] - axisA[1] * axisB[0];
  let angle = Math.atan2(Math.hypot(cx, cy, cz), axisA[0] * axisB[0] + axisA[1] * axisB[1] + axisA[2] * axisB[2]);
  if (c.lowerAngle !== undefined || c.upperAngle !== undefined) {
    relative(q, bodyA, bodyB, ref, ro, rel, 0);
    const s = Math.sign(rel[3]) || 1;
    const theta = 2 * Math.atan2(s * (rel[0] * c.axisA[0] + rel[1] * c.axisA[1] + rel[2] * c.axisA[2]) / na, s * rel[3]);
    angle = Math.max(angle, (c.lowerAngle ?? -Infinity) - theta, theta - (c.upperAngle ?? Infinity));
  }
  return angle;
}

/** out = x_i + R(q_i) r, r = r[ro..ro+3) */
function worldPoint(x: Float64Array, q: Float64Array, i: number, r: ArrayLike<number>, ro: number, out: number[]): void {
  rotate(q, 4 * i, r[ro], r[ro + 1], r[ro + 2], out);
  out[0] += x[3 * i]; out[1] += x[3 * i + 1]; out[2] += x[3 * i + 2];
}

/** out = R(q) v, by v + 2 q_v × (q_v × v + w v). */
export function rotate(q: ArrayLike<number>, o: number, vx: number, vy: number, vz: number, out: number[]): void {
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  const tx = y * vz - z * vy + w * vx;
  const ty = z * vx - x * vz + w * vy;
  const tz = x * vy - y * vx + w * vz;
  out[0] = vx + 2 * (y * tz - z * ty);
  out[1] = vy + 2 * (z * tx - x * tz);
  out[2] = vz + 2 * (x * ty - y * tx);
}

// scratch of worldInertiaTimes (no allocation per body in the metrics loop)
const conj = [0, 0, 0, 1];
const local = [0, 0, 0];

/** out = R I_local Rᵀ ω = R (I_local (Rᵀ ω)) */
function worldInertiaTimes(I: Float64Array, io: number, q: Float64Array, qo: number, wx: number, wy: number, wz: number, out: number[]): void {
  conj[0] = -q[qo]; conj[1] = -q[qo + 1]; conj[2] = -q[qo + 2]; conj[3] = q[qo + 3];
  rotate(conj, 0, wx, wy, wz, local);
  const lx = I[io] * local[0] + I[io + 1] * local[1] + I[io + 2] * local[2];
  const ly = I[io + 3] * local[0] + I[io + 4] * local[1] + I[io + 5] * local[2];
  const lz = I[io + 6] * local[0] + I[io + 7] * local[1] + I[io + 8] * local[2];
  rotate(q, qo, lx, ly, lz, out);
}

/** The metrics of any scene: rigid (MetricsContext) or a particle system (ParticleMetricsContext). */
export function metricsFor(desc: SceneDesc, defaultCompliance = 0): { measure(s: Snapshot): FrameMetrics } {
  return isParticleSystem(desc) ? new ParticleMetricsContext(desc) : new MetricsContext(desc, defaultCompliance);
}
