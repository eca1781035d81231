/**
 * The GPU narrow phase (collision/gpu-narrow.ts, f32) against the CPU's (narrow.ts collide(), f64) on
 * SwiftShader, on random configurations of every shape pair with a GPU routine: near contact (random
 * orientations, gaps from deep overlap to beyond the margin), resting (aligned faces and axes) and deep.
 * Both sides get the same poses: the f64 poses rounded to f32, handed to the CPU as those f64 values,
 * so the comparison measures the GPU's f32 arithmetic, not the rounding of its inputs.
 *
 * The bound. Every quantity is built from positions (|x| ≤ X), sizes (≤ L, the two bounding radii
 * summed) and unit vectors by a chain of roundings, each adding at most ε = 2⁻²⁴ relative to the
 * magnitude of its operands (f32, round to nearest; WGSL's sqrt and division are within a few ulp,
 * counted as 2). The longest chain of the ported routines: a point to the other body's frame (a
 * subtraction, then the rotation p + 2 v × (v × p + w p): 3 levels of 2-term cross products and sums
 * with |v|, |w| ≤ 1, ≈ 8 roundings on sums of up to 3 terms of size ≤ |p|, so ≤ 24 ε |p|), the
 * distance (3 products, 2 sums, sqrt: ≈ 8 ε), the surface offset (2), and the rotation back (≤ 24):
 * ≈ 60 ε (X + L). Hence
 *   |s_gpu − s_cpu| ≤ E = c ε (X + L),  c = 64;
 * a normal computed as a difference over its length ℓ (the core distance s + r_A + r_B of a round
 * pair, r = 0 for a box) has |δn| ≤ c ε + E/ℓ, and a point moved r ≤ L along it
 *   |δpoint| ≤ E (1 + L/ℓ);
 * a normal that is a body's axis (a plane's, a box face's) has ℓ = ∞ (κ = 1). The CPU's own f64 error
 * (~1e-16 relative) is far below E.
 *
 * Ambiguous configurations (within the bound of a feature change) are reported, not compared:
 *  - a CPU separation within E of the margin (the point may be in or out);
 *  - a decision the GPU makes with the CPU's cut-off grown by the f32 bound (gpu-narrow.wgsl.ts), when
 *    the CPU's decision quantity lies in the band between the two cut-offs: capsule–capsule's third
 *    point, capsule–box's apart/overlapping branch, its face-vs-edge normal (apart) and face-vs-edge
 *    axis (overlapping); each criterion is beside its code below;
 *  - otherwise, the CPU result recomputed at 8 poses perturbed by E (positions, each component
 *    ±E/√3·random) and c ε (quaternion components) changes the point count or the ids.
 * Ids are compared as a set and points matched by id (two points equally deep up to rounding swap
 * places in the CPU's deepest-first order). At most 10 % of a pair's near and deep configurations may
 * be skipped, and at most half of its resting ones (see the assertion), so the test cannot pass by
 * skipping; exactly stacked bricks, where the flat contacts are, are compared with nothing skipped.
 * The bound is a worst case: the errors seen are ≤ 0.1 E for separations and ≤ 0.52 E for points
 * (printed per pair), so a fault smaller than E (a 1e-5 relative error in s, say) would pass.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { GpuBroadPhase, gridCellSize, packAabbs, COUNTER_PAIRS } from '../src/collision/gpu-broadphase.js';
import { shapeAabb } from '../src/collision/aabb.js';
import { GPU_NARROW_PAIRS, GpuNarrowPhase, NARROW_STAGE, ManifoldRecord, ContactPointRecord, packPoses, packShapes } from '../src/collision/gpu-narrow.js';
import { CAPSULE_PARALLEL_LATERAL_WGSL } from '../src/collision/gpu-narrow.wgsl.js';
import { CAPSULE_PARALLEL_LATERAL } from '../src/collision/pairs.js';
import { collide } from '../src/collision/narrow.js';
import type { Manifold, Pose, V3 } from '../src/collision/types.js';
import type { CapsuleShape, Shape } from '../src/model/world.js';
import { closestSegmentSegment } from '../src/collision/geometry.js';
import { boundingRadius } from '../src/model/world.js';
import { mulberry32 } from './support/random.js';

const EPS = 2 ** -24;
const C = 64;
const MARGIN = 0.02;

let gpuPromise: Promise<GpuContext> | undefined;
const gpu = () => (gpuPromise ??= acquireGpu());
// one narrow phase for every test (its pipeline takes SwiftShader seconds to build)
let npPromise: Promise<GpuNarrowPhase> | undefined;
const narrow = () => (npPromise ??= gpu().then(({ device }) => GpuNarrowPhase.create(device, 4096, MARGIN)));

type Rand = () => number;

function randomQuat(rand: Rand): number[] {
  for (;;) {
    const u = [2 * rand() - 1, 2 * rand() - 1, 2 * rand() - 1, 2 * rand() - 1];
    const l = Math.hypot(...u);
    if (l > 0.1 && l <= 1) return u.map((x) => x / l);
  }
}

function unit(rand: Rand): number[] {
  const q = randomQuat(rand);
  const l = Math.hypot(q[0], q[1], q[2]);
  return [q[0] / l, q[1] / l, q[2] / l];
}

/** q ⊗ r, quaternions [x, y, z, w] */
function qmul(q: number[], r: number[]): number[] {
  const [ax, ay, az, aw] = q, [bx, by, bz, bw] = r;
  return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz];
}

function rotate(q: number[], p: number[]): number[] {
  const [x, y, z, w] = q;
  const tx = y * p[2] - z * p[1] + w * p[0], ty = z * p[0] - x * p[2] + w * p[1], tz = x * p[1] - y * p[0] + w * p[2];
  return [p[0] + 2 * (y * tz - z * ty), p[1] + 2 * (z * tx - x * tz), p[2] + 2 * (x * ty - y * tx)];
}

function randomShape(type: Shape['type'], rand: Rand): Shape {
  if (type === 'sphere') return { type, radius: 0.1 + 0.4 * rand() };
  if (type === 'capsule') return { type, radius: 0.1 + 0.2 * rand(), halfHeight: 0.1 + 0.4 * rand() };
  if (type === 'box') return { type, halfExtents: [0.1 + 0.4 * rand(), 0.1 + 0.4 * rand(), 0.1 + 0.4 * rand()] };
  return { type: 'plane' };
}

interface Config {
  shapes: [Shape, Shape];
  poses: [Pose, Pose];
  mode: string;
}

const fr = (v: number[]) => v.map((x) => Math.fround(x));

/**
 * A configuration of shape types (ta, tb): A at a random place within ±4 m; B near contact along a
 * random direction (mode 'near': centre distance (0.5…1.15) × the bounding radii summed; 'deep':
 * 0…0.5 ×); or, against a plane, at a height from −0.5 to 1.2 × its bounding radius; 'resting': a box
 * or capsule aligned with the plane (face down / lying), or a sphere on a box face, at a gap in
 * [−0.01, 0.015] m.
 */
function makeConfig(ta: Shape['type'], tb: Shape['type'], mode: string, rand: Rand): Config {
  const sa = randomShape(ta, rand), sb = randomShape(tb, rand);
  const xa = [8 * rand() - 4, 8 * rand() - 4, 8 * rand() - 4];
  let qa = randomQuat(rand), qb = randomQuat(rand);
  let xb: number[];
  const ra = boundingRadius(sa), rb = boundingRadius(sb);
  const plane = ta === 'plane' ? 0 : tb === 'plane' ? 1 : -1;
  if (plane >= 0) {
    const body = plane === 0 ? sb : sa;
    const qp = plane === 0 ? qa : qb;
    const N = rotate(qp, [0, 1, 0]);
    let qBody = plane === 0 ? qb : qa;
    let h: number;
    if (mode === 'resting' && body.type !== 'sphere') {
      // box face down: its y axis along N; capsule lying: its axis (y) ⊥ N (x axis along N)
      const spin = [0, Math.sin(rand() * Math.PI), 0, Math.cos(rand() * Math.PI)];
      const sl = Math.hypot(...spin);
      const about = spin.map((x) => x / sl);
      qBody = body.type === 'box' ? qmul(qp, about) : qmul(qmul(qp, about), [0, 0, Math.SQRT1_2, Math.SQRT1_2]);
      const rest = body.type === 'box' ? body.halfExtents[1] : (body as { radius: number }).radius;
      h = rest - 0.01 + 0.025 * rand();
    } else h = (mode === 'deep' ? -0.5 + 0.5 * rand() : -0.2 + 1.4 * rand()) * (plane === 0 ? rb : ra);
    const xp = xa; // the plane at A's place when A is the plane
    const other = [xp[0] + h * N[0] + 2 * rand() - 1, xp[1] + h * N[1], xp[2] + h * N[2] + 2 * rand() - 1];
    // keep the body over the plane at height h: remove the lateral offset's N component
    const off = [other[0] - xp[0], other[1] - xp[1], other[2] - xp[2]];
    const k = off[0] * N[0] + off[1] * N[1] + off[2] * N[2] - h;
    xb = [other[0] - k * N[0], other[1] - k * N[1], other[2] - k * N[2]];
    if (plane === 0) qb = qBody;
    else {
      // A is the body, B the plane: the plane through xb, the body at xa = xb + h N
      qa = qBody;
      const xbody = xa;
      xb = [xbody[0] - h * N[0] + (2 * rand() - 1) * 0, xbody[1] - h * N[1], xbody[2] - h * N[2]];
    }
  } else if (mode === 'resting' && tb === 'box' && ta === 'sphere') {
    // sphere on a box face
    const k = Math.floor(rand() * 3), sg = rand() < 0.5 ? -1 : 1;
    const e = (sb as { halfExtents: number[] }).halfExtents;
    const local = [(2 * rand() - 1) * e[0], (2 * rand() - 1) * e[1], (2 * rand() - 1) * e[2]];
    local[k] = sg * (e[k] + (sa as { radius: number }).radius - 0.01 + 0.025 * rand());
    xb = xa;
    const w = rotate(qb, local);
    xb = [xa[0] - w[0], xa[1] - w[1], xa[2] - w[2]];
  } else if (mode === 'resting' && ta === 'capsule' && tb === 'box') {
    // a capsule lying on the box's ±y face, turned about the face normal; half of them short enough to
    // lie within the face (its two-point face manifold), half anywhere over it (ends may overhang)
    const e = (sb as { halfExtents: number[] }).halfExtents, cap = sa as CapsuleShape;
    const ang = rand() * Math.PI, sg = rand() < 0.5 ? -1 : 1;
    qa = qmul(qmul(qb, [0, Math.sin(ang), 0, Math.cos(ang)]), [0, 0, Math.SQRT1_2, Math.SQRT1_2]);
    const within = rand() < 0.5;
    if (within) cap.halfHeight = 0.4 * Math.min(e[0], e[2]);
    // an overhanging one tilted by 0.002…0.02 rad about a horizontal axis: exactly flat over an edge,
    // the CPU's own choice between the face and the edge is made by the f32 rounding of the quaternion
    // (a tilt of ~1e-8 rad), a configuration neither side can decide
    else {
      const tilt = (0.002 + 0.018 * rand()) * (rand() < 0.5 ? -1 : 1);
      qa = qmul([Math.sin(tilt / 2) * Math.cos(ang), 0, Math.sin(tilt / 2) * Math.sin(ang), Math.cos(tilt / 2)], qa);
    }
    const reach = (i: number) => (within ? e[i] - cap.halfHeight : e[i]);
    const local = [(2 * rand() - 1) * reach(0), sg * (e[1] + cap.radius - 0.01 + 0.025 * rand()), (2 * rand() - 1) * reach(2)];
    const w = rotate(qb, local);
    xb = [xa[0] - w[0], xa[1] - w[1], xa[2] - w[2]];
  } else if (mode === 'resting' && ta === 'box' && tb === 'box') {
    // B resting on A's ±y face, turned about it; half of them stacked bricks: equal boxes, aligned
    // (turned by 0 or 90°), offset by up to 0.3 of a half extent or not at all (flush side faces)
    const ebA = (sa as { halfExtents: number[] }).halfExtents;
    const stacked = rand() < 0.5;
    let ang = rand() * Math.PI;
    if (stacked) {
      (sb as { halfExtents: number[] }).halfExtents = [...ebA];
      ang = rand() < 0.5 ? 0 : Math.PI / 4; // half angle: 0 or 90°
    }
    const ebB = (sb as { halfExtents: number[] }).halfExtents;
    qb = qmul(qa, [0, Math.sin(ang), 0, Math.cos(ang)]);
    const sg = rand() < 0.5 ? -1 : 1;
    const off = stacked ? (rand() < 0.25 ? 0 : 0.3) : 1;
    const local = [(2 * rand() - 1) * off * ebA[0], sg * (ebA[1] + ebB[1] - 0.01 + 0.025 * rand()), (2 * rand() - 1) * off * ebA[2]];
    const w = rotate(qa, local);
    xb = [xa[0] + w[0], xa[1] + w[1], xa[2] + w[2]];
  } else if (mode === 'resting' && ta === 'capsule' && tb === 'capsule') {
    // parallel capsules side by side (the two-point form)
    qb = qa;
    const side = rotate(qa, [1, 0, 0]), along = rotate(qa, [0, 1, 0]);
    const g = (sa as { radius: number }).radius + (sb as { radius: number }).radius - 0.01 + 0.025 * rand();
    const t = (2 * rand() - 1) * 0.3;
    xb = [xa[0] + g * side[0] + t * along[0], xa[1] + g * side[1] + t * along[1], xa[2] + g * side[2] + t * along[2]];
  } else {
    const dir = unit(rand);
    const f = mode === 'deep' ? 0.5 * rand() : 0.5 + 0.65 * rand();
    const d = f * (ra + rb);
    xb = [xa[0] + d * dir[0], xa[1] + d * dir[1], xa[2] + d * dir[2]];
  }
  return {
    shapes: [sa, sb],
    poses: [
      { position: fr(xa) as Pose['position'], orientation: fr(qa) as Pose['orientation'] },
      { position: fr(xb) as Pose['position'], orientation: fr(qb) as Pose['orientation'] },
    ],
    mode,
  };
}

function signature(m: Manifold | null): string {
  // the ids as a set: the order of a manifold's points is the CPU's (deepest first where a routine
  // says so), and two points equally deep up to rounding (a capsule lying flat) swap places
  return m ? m.points.map((p) => p.id).sort((a, b) => a - b).join(',') : '-';
}

function scaleOf(cfg: Config): { X: number; L: number } {
  const X = Math.max(...cfg.poses.map((p) => Math.hypot(...p.position)));
  const L = boundingRadius(cfg.shapes[0]) + boundingRadius(cfg.shapes[1]);
  return { X, L };
}

/** the feature choice is decided by rounding: perturbed poses change it, or a point is within E of the margin */
function ambiguous(cfg: Config, cpu: Manifold | null, E: number, rand: Rand): string | null {
  if (cpu && cpu.points.some((p) => Math.abs(p.separation - MARGIN) <= E)) return 'margin';
  // capsule–capsule two-point form: the closest pair joins the ends as id 11 when deeper than both by
  // over 1e-9 R (CPU) or, on the GPU, when its f32 difference (error ≤ 2E) is over 1e-9 R + 2E
  // (gpu-narrow.wgsl.ts): they agree unless the true difference is in (1e-9 R, 1e-9 R + 4E]
  if (cpu && cfg.shapes[0].type === 'capsule' && cfg.shapes[1].type === 'capsule' && cpu.points.some((p) => p.id === 9 || p.id === 10)) {
    const [a, b] = cfg.shapes as [CapsuleShape, CapsuleShape];
    const ends = cpu.points.filter((p) => p.id !== 11).map((p) => p.separation);
    const depth = Math.min(...ends) - closestCoreSeparation(a, cfg.poses[0], b, cfg.poses[1]);
    const R = a.radius + b.radius;
    if (depth > 1e-9 * R && depth <= 1e-9 * R + 4 * E) return 'capsule third point';
  }
  // capsule–box overlapping: an edge axis wins on the CPU when it beats the best face axis by over
  // 1e-9 L, on the GPU by over 1e-9 L + 2E (gpu-narrow.wgsl.ts, its f32 difference erring by ≤ 2E):
  // they agree unless that lead is in (1e-9 L, 1e-9 L + 4E]
  if (cpu && ((cfg.shapes[0].type === 'capsule' && cfg.shapes[1].type === 'box') || (cfg.shapes[0].type === 'box' && cfg.shapes[1].type === 'capsule'))) {
    // apart vs overlapping: the CPU's cut-off on the segment–box distance is 1e-12 L, the GPU's
    // 1e-12 L + E (its f32 residual is ≤ E): within 3E of the surface the branch is decided by rounding
    // (s + r is the core segment's signed distance to the box, both branches)
    const r = (cfg.shapes[0].type === 'capsule' ? cfg.shapes[0] : cfg.shapes[1]) as CapsuleShape;
    if (Math.abs(Math.min(...cpu.points.map((p) => p.separation)) + r.radius) <= 3 * E) return 'capsule-box branch';
    // apart, closest box feature an edge or vertex (ids 16…99): the CPU takes the face instead when n is
    // within 1e-12 rad of a face normal, the GPU when the closest points' lateral offset is below E;
    // an offset below 3E is decided by rounding
    const ai = cfg.shapes[0].type === 'box' ? 0 : 1;
    if (cpu.points.length === 1 && cpu.points[0].id >= 16 && cpu.points[0].id < 100) {
      const q = cfg.poses[ai].orientation;
      const nl = rotate([-q[0], -q[1], -q[2], q[3]], cpu.normal).map(Math.abs);
      const k = nl.indexOf(Math.max(...nl));
      const lat = Math.hypot(nl[(k + 1) % 3], nl[(k + 2) % 3]) * (cpu.points[0].separation + r.radius);
      if (lat <= 3 * E) return 'capsule-box face/edge (apart)';
    }
    const lead = capsuleBoxEdgeLead(cfg);
    if (lead !== null && lead.lead > lead.tie && lead.lead <= lead.tie + 4 * E) return 'capsule-box face/edge axis';
  }
  const sig = signature(cpu);
  for (let t = 0; t < 8; t++) {
    const poses = cfg.poses.map((p) => ({
      position: p.position.map((x) => x + ((2 * rand() - 1) * E) / Math.sqrt(3)) as Pose['position'],
      orientation: p.orientation.map((x) => x + (2 * rand() - 1) * C * EPS) as Pose['orientation'],
    }));
    const alt = signature(collide(cfg.shapes[0], poses[0], cfg.shapes[1], poses[1], MARGIN));
    if (alt !== sig) {
      if (process.env.NP_DEBUG) console.log('perturbed', sig, '->', alt, cpu?.points.map((p) => p.separation.toFixed(7)).join(' '));
      return 'perturbed';
    }
  }
  return null;
}

/**
 * Capsule–box SAT in f64 (pairs.ts collideCapsuleBox, overlapping part): by how much the best edge axis
 * d × ê_i beats the best face axis (positive: the edge is less deep), and the CPU's tie margin 1e-9 L;
 * null when the segment does not meet the box (the apart branch decides instead).
 */
export function capsuleBoxEdgeLead(cfg: Config): { lead: number; tie: number } | null {
  const ci = cfg.shapes[0].type === 'capsule' ? 0 : 1;
  const cap = cfg.shapes[ci] as CapsuleShape, box = cfg.shapes[1 - ci] as { halfExtents: number[] };
  const pc = cfg.poses[ci], pb = cfg.poses[1 - ci];
  const inv = [-pb.orientation[0], -pb.orientation[1], -pb.orientation[2], pb.orientation[3]];
  const u = rotate(pc.orientation, [0, 1, 0]);
  const p0 = rotate(inv, [0, 1, 2].map((i) => pc.position[i] - cap.halfHeight * u[i] - pb.position[i]));
  const d = rotate(inv, u.map((x) => 2 * cap.halfHeight * x));
  const e = box.halfExtents, r = cap.radius;
  // does the segment meet the box? (slab clipping)
  let lo = 0, hi = 1;
  for (let i = 0; i < 3; i++) {
    if (d[i] === 0) {
      if (Math.abs(p0[i]) > e[i]) return null;
      continue;
    }
    const a = (-e[i] - p0[i]) / d[i], b = (e[i] - p0[i]) / d[i];
    lo = Math.max(lo, Math.min(a, b));
    hi = Math.min(hi, Math.max(a, b));
  }
  if (lo > hi) return null;
  let face = Infinity;
  for (let k = 0; k < 3; k++) {
    const a = p0[k], b = p0[k] + d[k];
    face = Math.min(face, Math.max(a, b) + r + e[k], e[k] - Math.min(a, b) + r);
  }
  let edge = Infinity;
  for (let i = 0; i < 3; i++) {
    const c = i === 0 ? [0, d[2], -d[1]] : i === 1 ? [-d[2], 0, d[0]] : [d[1], -d[0], 0];
    const cl = Math.hypot(...c);
    if (cl < 1e-300) continue;
    const sv = (p0[0] * c[0] + p0[1] * c[1] + p0[2] * c[2]) / cl;
    const hb = (e[0] * Math.abs(c[0]) + e[1] * Math.abs(c[1]) + e[2] * Math.abs(c[2])) / cl;
    edge = Math.min(edge, sv + r + hb, hb - sv + r);
  }
  return { lead: face - edge, tie: 1e-9 * (e[0] + e[1] + e[2] + 2 * cap.halfHeight + r) };
}

/** s of the capsules' closest core points (geometry.ts closestSegmentSegment) */
function closestCoreSeparation(a: CapsuleShape, pa: Pose, b: CapsuleShape, pb: Pose): number {
  const ua = rotate(pa.orientation, [0, 1, 0]), ub = rotate(pb.orientation, [0, 1, 0]);
  const p0 = pa.position.map((x, i) => x - a.halfHeight * ua[i]) as V3, q0 = pb.position.map((x, i) => x - b.halfHeight * ub[i]) as V3;
  const d1 = ua.map((x) => 2 * a.halfHeight * x) as V3, d2 = ub.map((x) => 2 * b.halfHeight * x) as V3;
  const st: [number, number] = [0, 0];
  closestSegmentSegment(st, p0, d1, q0, d2);
  const P = p0.map((x, i) => x + st[0] * d1[i]), Q = q0.map((x, i) => x + st[1] * d2[i]);
  return dist3(P, Q) - a.radius - b.radius;
}

const ROUND = new Set(['sphere', 'capsule']);
const radiusOf = (s: Shape) => (s.type === 'sphere' || s.type === 'capsule' ? s.radius : 0);

/** the normal's conditioning length ℓ (header): ∞ for a body's axis */
function normalLength(cfg: Config, cpu: Manifold): number {
  const [a, b] = cfg.shapes;
  if (a.type === 'plane' || b.type === 'plane') return Infinity;
  if (!ROUND.has(a.type) && !ROUND.has(b.type)) return Infinity;
  const l = Math.min(...cpu.points.map((p) => p.separation)) + radiusOf(a) + radiusOf(b);
  return l > 0 ? l : Infinity; // a centre inside a box: the normal is the box face's
}

const dist3 = (u: number[], v: number[]) => Math.hypot(u[0] - v[0], u[1] - v[1], u[2] - v[2]);

export async function runConfigs(configs: Config[]): Promise<{ manifolds: (Manifold | null)[]; unsupported: number; pairs: Int32Array }> {
  const { device } = await gpu();
  const n = configs.length;
  // bodies 2k, 2k + 1 of configuration k; the pair's lower index gets A (collide's A), so half of them
  // are given in the order the routine was not written for (a plane as A, say): the swap is tested
  const shapes: Shape[] = [], position: number[] = [], orientation: number[] = [];
  for (const c of configs) for (let i = 0; i < 2; i++) {
    shapes.push(c.shapes[i]);
    position.push(...c.poses[i].position);
    orientation.push(...c.poses[i].orientation);
  }
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const mk = (data: ArrayBuffer | Uint32Array<ArrayBuffer>, extra = 0) => {
    const b = device.createBuffer({ size: Math.max(16, data.byteLength), usage: usage | extra });
    device.queue.writeBuffer(b, 0, data);
    return b;
  };
  const pairs = new Uint32Array(2 * n);
  for (let k = 0; k < n; k++) (pairs[2 * k] = 2 * k), (pairs[2 * k + 1] = 2 * k + 1);
  const pairBuf = mk(pairs), counters = mk(new Uint32Array([n, 0, 0, 0])), args = mk(new Uint32Array([Math.ceil(n / 64), 1, 1, 0]), GPUBufferUsage.INDIRECT);
  const poses = mk(packPoses(position, orientation, 2 * n)), shapeBuf = mk(packShapes(shapes));
  const np = await narrow();
  const encoder = device.createCommandEncoder();
  np.encode(encoder, { pairs: pairBuf, counters, counter: 0, args: { buffer: args, offset: 0 } }, poses, shapeBuf);
  device.queue.submit([encoder.finish()]);
  const r = await np.read();
  for (const b of [pairBuf, counters, args, poses, shapeBuf]) b.destroy();
  return r;
}


test('GPU narrow-phase records: layouts as WGSL lays them out, constants shared with the CPU', () => {
  assert.equal(ManifoldRecord.stride, 32);
  assert.equal(ContactPointRecord.stride, 32);
  assert.equal(CAPSULE_PARALLEL_LATERAL_WGSL, CAPSULE_PARALLEL_LATERAL);
});

test('GPU narrow phase = CPU collide() within the f32 bound, every ported shape pair, both orders', async () => {
  const rand = mulberry32(23);
  const PER_MODE = 120;
  const modes = ['near', 'deep', 'resting'];
  const configs: Config[] = [];
  const label: string[] = [];
  for (const name of GPU_NARROW_PAIRS) {
    const [ta, tb] = name.split('-') as Shape['type'][];
    for (const mode of modes)
      for (let i = 0; i < PER_MODE; i++) {
        const c = makeConfig(ta, tb, mode, rand);
        // every other configuration in the order the routine was not written for
        if (i % 2 === 1 && ta !== tb) {
          c.shapes.reverse();
          c.poses.reverse();
        }
        configs.push(c);
        label.push(`${name} ${mode} #${i}${i % 2 === 1 && ta !== tb ? ' (swapped)' : ''}`);
      }
  }
  const r = await runConfigs(configs);
  assert.equal(r.unsupported, 0, 'every pair has a GPU routine');
  const stats = new Map<string, { total: number; skipped: number; contacts: number; worstS: number; worstP: number; why: Record<string, number>; resting: number; restingSkipped: number }>();
  const prand = mulberry32(7);
  for (let k = 0; k < configs.length; k++) {
    const cfg = configs[k];
    const name = label[k].split(' ')[0];
    const st = stats.get(name) ?? { total: 0, skipped: 0, contacts: 0, worstS: 0, worstP: 0, why: {}, resting: 0, restingSkipped: 0 };
    stats.set(name, st);
    st.total++;
    const resting = cfg.mode === 'resting';
    if (resting) st.resting++;
    const cpu = collide(cfg.shapes[0], cfg.poses[0], cfg.shapes[1], cfg.poses[1], MARGIN);
    const g = r.manifolds[k];
    const { X, L } = scaleOf(cfg);
    const E = C * EPS * (X + L);
    const why = ambiguous(cfg, cpu, E, prand);
    if (why) {
      st.skipped++;
      if (resting) st.restingSkipped++;
      st.why[why] = (st.why[why] ?? 0) + 1;
      if (process.env.NP_DEBUG) console.log("skip", label[k], why);
      continue;
    }
    const what = `${label[k]}: ${JSON.stringify(cfg)}`;
    assert.equal(signature(g), signature(cpu), `${what}: point ids (GPU vs CPU)`);
    if (!cpu || !g) continue;
    st.contacts++;
    const ell = normalLength(cfg, cpu);
    const nTol = C * EPS + E / ell, pTol = E * (1 + L / ell);
    assert.ok(dist3(g.normal, cpu.normal) <= nTol, `${what}: normal ${g.normal} vs ${cpu.normal}, tolerance ${nTol}`);
    for (let j = 0; j < cpu.points.length; j++) {
      const b = cpu.points[j], a = g.points.find((p) => p.id === b.id)!;
      const ds = Math.abs(a.separation - b.separation), da = dist3(a.pointA, b.pointA), db = dist3(a.pointB, b.pointB);
      st.worstS = Math.max(st.worstS, ds / E);
      st.worstP = Math.max(st.worstP, Math.max(da, db) / pTol);
      assert.ok(ds <= E, `${what}: point ${j} separation ${a.separation} vs ${b.separation}, bound ${E}`);
      assert.ok(da <= pTol && db <= pTol, `${what}: point ${j} pointA ${a.pointA} vs ${b.pointA}, pointB ${a.pointB} vs ${b.pointB}, bound ${pTol}`);
    }
  }
  for (const [name, st] of stats) {
    console.log(`${name}: ${st.total} configurations, ${st.contacts} compared with points, ${st.skipped} ambiguous (${st.restingSkipped} resting) ${JSON.stringify(st.why)}; worst error / bound: separation ${st.worstS.toFixed(3)}, points ${st.worstP.toFixed(3)}`);
    // near and deep: at most 10 % ambiguous; resting: at most half (a box turned on another has an
    // octagon of equally deep clip points, whose reduction to four starts from "the deepest", a choice
    // rounding makes on the CPU too; exactly stacked bricks are compared in full by the next test)
    const nd = st.total - st.resting, ndSkipped = st.skipped - st.restingSkipped;
    assert.ok(ndSkipped <= 0.1 * nd, `${name}: ${ndSkipped} of ${nd} near/deep configurations ambiguous (more than 10 %)`);
    assert.ok(st.restingSkipped <= 0.5 * st.resting, `${name}: ${st.restingSkipped} of ${st.resting} resting configurations ambiguous (more than half)`);
    assert.ok(st.contacts >= 0.3 * st.total, `${name}: only ${st.contacts} of ${st.total} with contacts`);
  }
});

/**
 * Stacked and side-by-side bricks on exact poses (a pile, a pyramid, a wall): boxes with dyadic half
 * extents at dyadic positions, orientation the identity or a half turn about y ([0, 1, 0, 0]), so
 * every input is the same number in f32 and f64 and the flush faces are exactly flush on both sides
 * (vertices exactly on side planes, equal depths, parallel edges). Nothing is skipped here: same ids in
 * the same order, separations and points within E (the normal is a box axis, κ = 1).
 */
test('GPU narrow phase = CPU collide() on exactly stacked and side-by-side bricks, every configuration', async () => {
  const configs: Config[] = [];
  const sizes: V3[] = [[0.5, 0.25, 0.25], [0.25, 0.25, 0.25], [0.375, 0.125, 0.5]];
  const turns: Pose['orientation'][] = [[0, 0, 0, 1], [0, 1, 0, 0]];
  for (const ea of sizes)
    for (const eb of sizes)
      for (const qb of turns)
        for (const gap of [-1 / 64, 0, 1 / 128])
          for (const [ox, oz] of [[0, 0], [0.25, 0], [0.5, 0.25], [-0.125, 0.375], [1, 0]] as const)
            for (const side of [false, true]) {
              const xa: V3 = [1.5, 0.75, -2];
              // on top: B over A's +y face, lateral offset (ox e_A.x, oz e_A.z); beside: B against A's +x face, offset (ox e_A.y, oz e_A.z)
              const xb: V3 = side
                ? [xa[0] + ea[0] + eb[0] + gap, xa[1] + ox * ea[1], xa[2] + oz * ea[2]]
                : [xa[0] + ox * ea[0], xa[1] + ea[1] + eb[1] + gap, xa[2] + oz * ea[2]];
              configs.push({
                shapes: [{ type: 'box', halfExtents: [...ea] }, { type: 'box', halfExtents: [...eb] }],
                poses: [{ position: xa, orientation: [0, 0, 0, 1] }, { position: xb, orientation: qb }],
                mode: 'exact',
              });
            }
  const r = await runConfigs(configs);
  let withPoints = 0;
  for (let k = 0; k < configs.length; k++) {
    const cfg = configs[k];
    const cpu = collide(cfg.shapes[0], cfg.poses[0], cfg.shapes[1], cfg.poses[1], MARGIN);
    const g = r.manifolds[k];
    const what = JSON.stringify(cfg);
    assert.deepEqual(g?.points.map((p) => p.id) ?? null, cpu?.points.map((p) => p.id) ?? null, `${what}: ids in order`);
    if (!cpu || !g) continue;
    withPoints++;
    const { X, L } = scaleOf(cfg);
    const E = C * EPS * (X + L);
    assert.ok(dist3(g.normal, cpu.normal) <= C * EPS, `${what}: normal`);
    cpu.points.forEach((b, j) => {
      const a = g.points[j];
      assert.ok(Math.abs(a.separation - b.separation) <= E && dist3(a.pointA, b.pointA) <= E && dist3(a.pointB, b.pointB) <= E, `${what}: point ${j}`);
    });
  }
  console.log(`exact bricks: ${configs.length} configurations, ${withPoints} with points, all compared`);
  assert.ok(withPoints >= configs.length / 2);
});

/**
 * The two GPU stages composed as a frame will compose them: the GPU broad phase's pair buffer, pair
 * counter and indirect arguments feed the narrow phase directly (one submission, no readback between);
 * every pair's manifold is the CPU collide() of that pair (a scene of all four shapes, a ground plane,
 * bodies dropped into a heap; the margin-inflated boxes of the CPU pipeline). Ids compared as sets
 * where the pair is not ambiguous (the criteria of the random test), separations within E.
 */
test('GPU broad phase → GPU narrow phase: the manifold of every pair is the CPU one', async () => {
  const { device } = await gpu();
  const rand = mulberry32(5);
  const n = 160, side = 4;
  const shapes: Shape[] = [{ type: 'plane' }];
  const position = [0, 0, 0], orientation = [0, 0, 0, 1];
  for (let i = 1; i < n; i++) {
    shapes.push(randomShape((['sphere', 'capsule', 'box'] as const)[i % 3], rand));
    position.push(side * rand(), 0.8 * rand(), side * rand());
    orientation.push(...randomQuat(rand));
  }
  const pos32 = position.map(Math.fround), q32 = orientation.map(Math.fround);
  const aabbs = new Float64Array(6 * n);
  for (let i = 0; i < n; i++) shapeAabb(shapes[i], pos32, 3 * i, q32, 4 * i, MARGIN, aabbs, 6 * i);
  const bp = await GpuBroadPhase.create(device, n, 16 * n);
  bp.configure(n, gridCellSize(aabbs, n));
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const mk = (data: ArrayBuffer) => {
    const b = device.createBuffer({ size: data.byteLength, usage });
    device.queue.writeBuffer(b, 0, data);
    return b;
  };
  const boxBuf = mk(packAabbs(aabbs, n)), poseBuf = mk(packPoses(pos32, q32, n)), shapeBuf = mk(packShapes(shapes));
  const np = await narrow();
  const encoder = device.createCommandEncoder();
  encoder.clearBuffer(np.status);
  const stages: string[] = [];
  const pass = encoder.beginComputePass();
  bp.record(pass, boxBuf);
  np.record((stage) => (stages.push(stage), pass), { pairs: bp.pairs, counters: bp.counters.buffer, counter: COUNTER_PAIRS, args: bp.pairArgs }, poseBuf, shapeBuf);
  pass.end();
  device.queue.submit([encoder.finish()]);
  const r = await np.read();
  assert.deepEqual(stages, [NARROW_STAGE]);
  assert.equal(r.unsupported, 0);
  const pairCount = r.pairs.length / 2;
  assert.ok(r.found === pairCount && pairCount < bp.pairCapacity, `no overflow: ${r.found} pairs, capacity ${bp.pairCapacity}`);
  assert.ok(pairCount > n / 2, `${pairCount} pairs`);
  const prand = mulberry32(9);
  let compared = 0, contacts = 0, skipped = 0;
  for (let k = 0; k < pairCount; k++) {
    const a = r.pairs[2 * k], b = r.pairs[2 * k + 1];
    assert.ok(a < b);
    const cfg: Config = {
      shapes: [shapes[a], shapes[b]],
      poses: [
        { position: pos32.slice(3 * a, 3 * a + 3) as V3, orientation: q32.slice(4 * a, 4 * a + 4) as Pose['orientation'] },
        { position: pos32.slice(3 * b, 3 * b + 3) as V3, orientation: q32.slice(4 * b, 4 * b + 4) as Pose['orientation'] },
      ],
      mode: 'scene',
    };
    const cpu = collide(cfg.shapes[0], cfg.poses[0], cfg.shapes[1], cfg.poses[1], MARGIN);
    const { X, L } = scaleOf(cfg);
    const E = C * EPS * (X + L);
    if (ambiguous(cfg, cpu, E, prand)) {
      skipped++;
      continue;
    }
    compared++;
    const g = r.manifolds[k];
    assert.equal(signature(g), signature(cpu), `pair (${a}, ${b}): ids`);
    if (!cpu || !g) continue;
    contacts++;
    for (const p of cpu.points) assert.ok(Math.abs(g.points.find((q) => q.id === p.id)!.separation - p.separation) <= E, `pair (${a}, ${b}): separation`);
  }
  // a second frame's recording: no buffer created (no staging buffer, so no readback), nothing written
  // from the host, no map: record() only binds and dispatches
  const calls: string[] = [];
  const create = device.createBuffer.bind(device), write = device.queue.writeBuffer.bind(device.queue);
  device.createBuffer = (d: GPUBufferDescriptor) => (calls.push(`createBuffer ${d.label ?? ''}`), create(d));
  device.queue.writeBuffer = ((...a: Parameters<GPUQueue['writeBuffer']>) => (calls.push('writeBuffer'), write(...a))) as GPUQueue['writeBuffer'];
  try {
    const enc = device.createCommandEncoder();
    const p2 = enc.beginComputePass();
    np.record(p2, { pairs: bp.pairs, counters: bp.counters.buffer, counter: COUNTER_PAIRS, args: bp.pairArgs }, poseBuf, shapeBuf);
    p2.end();
    device.queue.submit([enc.finish()]);
  } finally {
    device.createBuffer = create;
    device.queue.writeBuffer = write;
  }
  assert.deepEqual(calls, [], 'record() of a second frame: no buffer created or written');
  console.log(`broad → narrow: ${pairCount} pairs, ${compared} compared (${contacts} with points), ${skipped} ambiguous`);
  assert.ok(skipped <= 0.1 * pairCount);
  for (const buf of [boxBuf, poseBuf, shapeBuf]) buf.destroy();
  bp.destroy();
});

/**
 * The CPU's degenerate branches, on exact inputs (dyadic positions and sizes; quaternions the identity,
 * a half turn, or [½, ½, ½, ½], which takes y to z exactly), so both sides take the same branch:
 * concentric spheres (n = ŷ by convention), a sphere centred on a capsule's axis (anyPerpendicular), a
 * sphere centre inside a box (the nearest face), crossing and collinear capsule cores (n from the axes,
 * or ⊥ the axis), a capsule through a box's centre (the SAT branch), a box sunk below a plane (the
 * reach filter and the reduction to four), concentric boxes, and two boxes apart diagonally within the
 * margin (the closest-feature fallback). Same ids in the same order, within E; nothing skipped.
 */
test('GPU narrow phase = CPU collide() in the degenerate branches', async () => {
  const I: Pose['orientation'] = [0, 0, 0, 1], Z: Pose['orientation'] = [0.5, 0.5, 0.5, 0.5], H: Pose['orientation'] = [0, 1, 0, 0];
  const sphere = (r: number): Shape => ({ type: 'sphere', radius: r });
  const capsule = (r: number, h: number): Shape => ({ type: 'capsule', radius: r, halfHeight: h });
  const box = (x: number, y: number, z: number): Shape => ({ type: 'box', halfExtents: [x, y, z] });
  const at = (position: V3, orientation = I): Pose => ({ position, orientation });
  const cases: [string, Shape, Pose, Shape, Pose][] = [
    ['concentric spheres', sphere(0.5), at([1, 2, 3]), sphere(0.25), at([1, 2, 3])],
    ['sphere on a capsule axis', sphere(0.25), at([1, 2.125, 3]), capsule(0.25, 0.5), at([1, 2, 3])],
    ['sphere centre inside a box', sphere(0.25), at([1.125, 2, 3.0625]), box(0.5, 0.25, 0.375), at([1, 2, 3])],
    ['crossing capsule cores', capsule(0.125, 0.5), at([1, 2, 3]), capsule(0.25, 0.5), at([1, 2.25, 3], Z)],
    ['collinear capsule cores', capsule(0.125, 0.5), at([1, 2, 3]), capsule(0.25, 0.5), at([1, 2.5, 3], H)],
    ['capsule through a box centre', capsule(0.125, 0.75), at([1, 2, 3]), box(0.5, 0.25, 0.375), at([1, 2, 3])],
    ['capsule lying in a box', capsule(0.125, 0.25), at([1, 2, 3], Z), box(0.5, 0.25, 0.375), at([1.125, 2, 3])],
    ['box sunk below a plane', box(0.5, 0.25, 0.375), at([1, -0.125, 3]), { type: 'plane' }, at([0, 0.5, 0])],
    ['concentric boxes', box(0.5, 0.25, 0.375), at([1, 2, 3]), box(0.25, 0.5, 0.125), at([1, 2, 3], Z)],
    ['boxes apart diagonally', box(0.25, 0.25, 0.25), at([1, 2, 3]), box(0.25, 0.25, 0.25), at([1.5078125, 2.5078125, 3])],
  ];
  const configs: Config[] = [];
  for (const [, sa, pa, sb, pb] of cases) {
    configs.push({ shapes: [sa, sb], poses: [pa, pb], mode: 'exact' });
    configs.push({ shapes: [sb, sa], poses: [pb, pa], mode: 'exact' }); // and the other order
  }
  const r = await runConfigs(configs);
  configs.forEach((cfg, k) => {
    const name = `${cases[k >> 1][0]}${k & 1 ? ' (swapped)' : ''}`;
    const cpu = collide(cfg.shapes[0], cfg.poses[0], cfg.shapes[1], cfg.poses[1], MARGIN);
    const g = r.manifolds[k];
    assert.ok(cpu, `${name}: the CPU finds a contact`);
    assert.deepEqual(g?.points.map((p) => p.id), cpu.points.map((p) => p.id), `${name}: ids in order`);
    const { X, L } = scaleOf(cfg);
    const E = C * EPS * (X + L);
    assert.ok(dist3(g!.normal, cpu.normal) <= C * EPS, `${name}: normal ${g!.normal} vs ${cpu.normal}`);
    cpu.points.forEach((b, j) => {
      const a = g!.points[j];
      assert.ok(Math.abs(a.separation - b.separation) <= E && dist3(a.pointA, b.pointA) <= E && dist3(a.pointB, b.pointB) <= E, `${name}: point ${j}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    });
  });
  const fallback = collide(cases[9][1], cases[9][2], cases[9][3], cases[9][4], MARGIN)!;
  assert.equal(fallback.points[0].id & 3, 2, 'the diagonal pair is held by the closest-feature fallback');
});
