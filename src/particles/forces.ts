/**
 * Force objects of the particle system: each applies itself to the force
 * accumulator ("deriv eval" loop, Witkin slides: clear forces, invoke every
 * apply_force, …) and knows its potential energy, so the metrics can check that
 * the conservative ones conserve.
 */
import type { ForceDesc } from '../model/particle-system.js';

export interface ParticleForce {
  readonly desc: ForceDesc;
  /** f += this force at (q, q̇); `mass[i]` is 0 for fixed particles */
  apply(q: Float64Array, v: Float64Array, mass: Float64Array, f: Float64Array): void;
  /** potential energy at q (J); 0 for a dissipative force */
  potential(q: Float64Array, mass: Float64Array): number;
}

/** f_i = m_i g; V = −Σ m_i g·x_i */
class Gravity implements ParticleForce {
  constructor(readonly desc: Extract<ForceDesc, { type: 'gravity' }>, private readonly d: number) {}
  apply(_q: Float64Array, _v: Float64Array, mass: Float64Array, f: Float64Array): void {
    const g = this.desc.g, d = this.d;
    for (let i = 0; i < mass.length; i++) for (let c = 0; c < d; c++) f[i * d + c] += mass[i] * g[c];
  }
  potential(q: Float64Array, mass: Float64Array): number {
    const g = this.desc.g, d = this.d;
    let e = 0;
    for (let i = 0; i < mass.length; i++) for (let c = 0; c < d; c++) e -= mass[i] * g[c] * q[i * d + c];
    return e;
  }
}

/**
 * Damped spring between a and b (Witkin & Baraff, "Physically Based Modeling", particle
 * dynamics notes): l = x_a − x_b,
 *   f_a = −[k_s(|l| − r) + k_d (l̇·l)/|l|] l/|l|,  f_b = −f_a;   V = ½ k_s (|l| − r)².
 * At |l| = 0 the direction is undefined: a zero-rest-length spring is then the linear
 * f_a = −k_s l − k_d l̇ (its limit); a spring with r > 0 pushes in no direction (f = 0).
 */
class Spring implements ParticleForce {
  constructor(readonly desc: Extract<ForceDesc, { type: 'spring' }>, private readonly d: number) {}
  apply(q: Float64Array, v: Float64Array, _mass: Float64Array, f: Float64Array): void {
    const { a, b, restLength, stiffness, damping } = this.desc, d = this.d;
    let len2 = 0, ldotl = 0;
    for (let c = 0; c < d; c++) {
      const l = q[a * d + c] - q[b * d + c];
      len2 += l * l;
      ldotl += l * (v[a * d + c] - v[b * d + c]);
    }
    const len = Math.sqrt(len2);
    if (len === 0) {
      if (restLength !== 0) return;
      for (let c = 0; c < d; c++) {
        const fc = -damping * (v[a * d + c] - v[b * d + c]);
        f[a * d + c] += fc;
        f[b * d + c] -= fc;
      }
      return;
    }
    const s = -(stiffness * (len - restLength) + (damping * ldotl) / len) / len;
    for (let c = 0; c < d; c++) {
      const fc = s * (q[a * d + c] - q[b * d + c]);
      f[a * d + c] += fc;
      f[b * d + c] -= fc;
    }
  }
  potential(q: Float64Array): number {
    const { a, b, restLength, stiffness } = this.desc, d = this.d;
    let len2 = 0;
    for (let c = 0; c < d; c++) len2 += (q[a * d + c] - q[b * d + c]) ** 2;
    return 0.5 * stiffness * (Math.sqrt(len2) - restLength) ** 2;
  }
}

/** Viscous drag f_i = −k v_i (dissipative: no potential). */
class Drag implements ParticleForce {
  constructor(readonly desc: Extract<ForceDesc, { type: 'drag' }>) {}
  apply(_q: Float64Array, v: Float64Array, _mass: Float64Array, f: Float64Array): void {
    for (let i = 0; i < v.length; i++) f[i] -= this.desc.k * v[i];
  }
  potential(): number {
    return 0;
  }
}

export function makeForce(desc: ForceDesc, d: number): ParticleForce {
  switch (desc.type) {
    case 'gravity':
      return new Gravity(desc, d);
    case 'spring':
      return new Spring(desc, d);
    case 'drag':
      return new Drag(desc);
  }
}
