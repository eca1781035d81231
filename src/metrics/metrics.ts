/**
 * Metrics, recomputed from a Snapshot and the WorldDesc — never read from a
 * solver's own arrays (a solver's violations, multipliers or energies are not trusted).
 *
 *   violation   |c_ℓ| = |x_A + R(q_A) r⁰ − x_B − R(q_B) r¹|   (reference text, eq. 3), m,
 *               over the rigid joints (a soft joint's stretch is its spring's, not an error)
 *   energy      E = Σ ½ m |v|² + ½ ωᵀ I_world ω − m g·x + Σ_soft ½ |c_ℓ|²/α_ℓ
 *               (J; fixed bodies excluded; the last sum is the soft joints' elastic energy)
 *   momentum    p = Σ m v;  angular momentum L = Σ x × m v + I_world ω  (about the origin)
 */
import type { WorldDesc } from '../model/world.js';
import { massProperties } from '../model/world.js';
import type { Snapshot } from '../solvers/solver.js';
import { isParticleSystem, type SceneDesc } from '../model/scene-desc.js';
import { ParticleMetricsContext } from '../particles/metrics.js';

export interface FrameMetrics {
  t: number;
  maxViolation: number;
  rmsViolation: number;
  energy: number;
  kinetic: number;
  /** gravitational plus elastic */
  potential: number;
  /** elastic energy of the soft joints, Σ ½ |c|²/α (J) */
  elastic: number;
  momentum: [number, number, number];
  angularMomentum: [number, number, number];
  /** false when any position, orientation or velocity is NaN or infinite */
  finite: boolean;
}

/** Per-body mass and local inertia (diagonal for spheres), computed once per world. */
export class MetricsContext {
  readonly mass: Float64Array;
  readonly inertiaLocal: Float64Array; // 9 per body
  /** compliance α of each constraint (0: rigid) */
  readonly compliance: Float64Array;
  /** @param defaultCompliance α of the joints that set none (the solver's --compliance) */
  constructor(readonly world: WorldDesc, defaultCompliance = 0) {
    this.compliance = Float64Array.from(world.constraints, (c) => c.compliance ?? defaultCompliance);
    const n = world.bodies.length;
    this.mass = new Float64Array(n);
    this.inertiaLocal = new Float64Array(9 * n);
    world.bodies.forEach((b, i) => {
      if (b.fixed) return; // fixed bodies carry no energy
      const mp = massProperties(b);
      this.mass[i] = mp.mass;
      this.inertiaLocal.set(mp.inertiaLocal, 9 * i);
    });
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
    let maxV = 0, sumSq = 0, rigid = 0, elastic = 0;
    const a = [0, 0, 0], b = [0, 0, 0];
    for (let ic = 0; ic < world.constraints.length; ic++) {
      const c = world.constraints[ic];
      worldPoint(x, q, c.bodyA, c.anchorA, a);
      if (c.bodyB === null) { b[0] = c.anchorB[0]; b[1] = c.anchorB[1]; b[2] = c.anchorB[2]; }
      else worldPoint(x, q, c.bodyB, c.anchorB, b);
      const d2 = (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2;
      const alpha = this.compliance[ic];
      if (alpha > 0) {
        elastic += (0.5 * d2) / alpha;
        continue;
      }
      rigid++;
      sumSq += d2;
      const d = Math.sqrt(d2);
      if (d > maxV || Number.isNaN(d)) maxV = Number.isNaN(d) ? NaN : d;
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
      rmsViolation: rigid ? Math.sqrt(sumSq / rigid) : 0,
      energy: kinetic + potential + elastic,
      kinetic,
      potential: potential + elastic,
      elastic,
      momentum: p,
      angularMomentum: L,
      finite,
    };
  }
}

/** out = x_i + R(q_i) r */
function worldPoint(x: Float64Array, q: Float64Array, i: number, r: ArrayLike<number>, out: number[]): void {
  rotate(q, 4 * i, r[0], r[1], r[2], out);
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
