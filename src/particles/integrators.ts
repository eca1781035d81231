/**
 * Integrators of the particle system, all driven through one derivative
 * evaluation f(Y) = dY/dt (ParticleSystem.derivative), as in Witkin & Baraff's
 * particle-system notes: the solver only ever asks for derivatives.
 *
 *   euler       explicit Euler          Y ← Y + h f(Y)
 *   symplectic  semi-implicit Euler     v ← v + h a(q, v);  q ← q + h v   (new v)
 *   rk4         classic Runge–Kutta     k₁ = f(Y), k₂ = f(Y + h/2 k₁), k₃ = f(Y + h/2 k₂), k₄ = f(Y + h k₃),
 *                                        Y ← Y + h/6 (k₁ + 2k₂ + 2k₃ + k₄)
 * Y = [q, v, u, u̇] (ParticleSystem): the symplectic update moves the velocities (v, u̇)
 * first and then the positions (q, u) with the new velocities.
 */
import type { ParticleSystem } from './system.js';

export type IntegratorName = 'euler' | 'symplectic' | 'rk4';
export const integratorNames: IntegratorName[] = ['euler', 'symplectic', 'rk4'];


export class Integrator {
  private readonly k: Float64Array[];
  private readonly tmp: Float64Array;
  constructor(readonly name: IntegratorName, private readonly sys: ParticleSystem) {
    const len = sys.y.length;
    this.k = Array.from({ length: name === 'rk4' ? 4 : 1 }, () => new Float64Array(len));
    this.tmp = new Float64Array(len);
  }

  /** Advance the system's state by h. */
  step(h: number): void {
    const sys = this.sys, y = sys.y, k = this.k, len = y.length;
    if (this.name === 'euler') {
      sys.derivative(y, k[0]);
      for (let i = 0; i < len; i++) y[i] += h * k[0][i];
    } else if (this.name === 'symplectic') {
      sys.derivative(y, k[0]);
      const d = sys.dimension, n = sys.n, m = sys.parametric.length;
      const dn = d * n;
      // velocities (v, u̇) first, then positions (q, u) from the new velocities
      for (let i = 0; i < dn; i++) y[dn + i] += h * k[0][dn + i];
      for (let j = 0; j < m; j++) y[2 * dn + m + j] += h * k[0][2 * dn + m + j];
      for (let i = 0; i < dn; i++) if (sys.invMass[(i / d) | 0] > 0) y[i] += h * y[dn + i]; // fixed and path particles: not integrated
      for (let j = 0; j < m; j++) y[2 * dn + j] += h * y[2 * dn + m + j];
    } else {
      const t = this.tmp;
      sys.derivative(y, k[0]);
      for (let i = 0; i < len; i++) t[i] = y[i] + 0.5 * h * k[0][i];
      sys.derivative(t, k[1]);
      for (let i = 0; i < len; i++) t[i] = y[i] + 0.5 * h * k[1][i];
      sys.derivative(t, k[2]);
      for (let i = 0; i < len; i++) t[i] = y[i] + h * k[2][i];
      sys.derivative(t, k[3]);
      for (let i = 0; i < len; i++) y[i] += (h / 6) * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
    }
    sys.time += h;
    sys.syncPaths(y);
  }
}
