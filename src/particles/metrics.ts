/**
 * Metrics of a particle system, recomputed from a Snapshot and the description
 * (never from the solver's arrays), with the same fields as the rigid metrics:
 *   violation   the geometric error of every implicit constraint (distance off the
 *               wire, stretch of a link, distance from the nail, plane or line, m)
 *               and of every parametric particle off its path (zero by construction)
 *   energy      E = Σ ½ m |v|² + Σ_forces V(q)   (gravity −Σ m g·x, springs ½ k_s (|l| − r)²;
 *               drag has none); fixed particles carry none
 *   momentum    p = Σ m v, L = Σ x × m v (about the origin)
 */
import type { FrameMetrics } from '../metrics/frame-metrics.js';
import type { Snapshot } from '../model/snapshot.js';
import { makeConstraint, type ParticleConstraint } from './constraints.js';
import { makeForce, type ParticleForce } from './forces.js';
import type { ParticleSystemDesc } from '../model/particle-system.js';

export class ParticleMetricsContext {
  private readonly mass: Float64Array;
  private readonly constraints: ParticleConstraint[];
  private readonly forces: ParticleForce[];
  private readonly d: number;

  constructor(readonly desc: ParticleSystemDesc) {
    this.d = desc.dimension;
    this.mass = Float64Array.from(desc.particles, (p) => (p.fixed ? 0 : p.mass));
    this.constraints = desc.constraints.map((c) => makeConstraint(c, this.d));
    // a path is measured as the implicit circle it replaces
    for (const p of desc.parametric ?? [])
      this.constraints.push(makeConstraint({ type: 'circle', particle: p.particle, center: p.center, radius: p.radius }, this.d));
    this.forces = desc.forces.map((f) => makeForce(f, this.d));
  }

  measure(s: Snapshot): FrameMetrics {
    const d = this.d, n = s.bodyCount;
    const x = s.position, v = s.linearVelocity;
    let finite = true;
    for (const arr of [x, v]) for (let i = 0; i < arr.length && finite; i++) if (!Number.isFinite(arr[i])) finite = false;
    const q = new Float64Array(d * n), qd = new Float64Array(d * n);
    for (let i = 0; i < n; i++)
      for (let c = 0; c < d; c++) {
        q[i * d + c] = x[3 * i + c];
        qd[i * d + c] = v[3 * i + c];
      }
    let maxV = 0, sumSq = 0;
    for (const c of this.constraints) {
      const e = c.violation(q);
      sumSq += e * e;
      if (e > maxV || Number.isNaN(e)) maxV = Number.isNaN(e) ? NaN : Math.max(maxV, e);
    }
    let kinetic = 0, gravity = 0, elastic = 0;
    const p: [number, number, number] = [0, 0, 0], L: [number, number, number] = [0, 0, 0];
    for (let i = 0; i < n; i++) {
      const m = this.mass[i], o = 3 * i;
      kinetic += 0.5 * m * (v[o] ** 2 + v[o + 1] ** 2 + v[o + 2] ** 2);
      for (let c = 0; c < 3; c++) p[c] += m * v[o + c];
      L[0] += m * (x[o + 1] * v[o + 2] - x[o + 2] * v[o + 1]);
      L[1] += m * (x[o + 2] * v[o] - x[o] * v[o + 2]);
      L[2] += m * (x[o] * v[o + 1] - x[o + 1] * v[o]);
    }
    for (const f of this.forces) {
      const e = f.potential(q, this.mass);
      if (f.desc.type === 'gravity') gravity += e;
      else elastic += e;
    }
    return {
      t: s.time,
      maxViolation: maxV,
      rmsViolation: this.constraints.length ? Math.sqrt(sumSq / this.constraints.length) : 0,
      energy: kinetic + gravity + elastic,
      kinetic,
      potential: gravity + elastic,
      elastic,
      momentum: p,
      angularMomentum: L,
      finite,
    };
  }
}
