/**
 * Implicit constraint modules of the particle system (Witkin slides, "How do we
 * implement all this?"): each knows its own C, its Jacobian blocks ∂C/∂x_k and
 * their time derivatives ∂Ċ/∂x_k for the particles it touches; the system places
 * the blocks in the global sparse J and J̇ by (row, particle).
 *
 * Block layout of one constraint with R rows touching P particles, in dimension d:
 * block (r, k) holds d numbers at ((r·P + k)·d); `blocks(q, v, J, Jd, o)` writes
 * them from offset o, `value(q, C, o)` writes C_r at o + r.
 */
import type { ConstraintDesc } from '../model/particle-system.js';

export interface ParticleConstraint {
  readonly desc: ConstraintDesc;
  /** the particles it touches, in block order */
  readonly particles: readonly number[];
  /** scalar rows C_r */
  readonly rows: number;
  /** C_r(q) for r < rows, written at C[o + r] */
  value(q: Float64Array, C: Float64Array, o: number): void;
  /** ∂C/∂x_k and ∂Ċ/∂x_k = d/dt(∂C/∂x_k) at (q, q̇) */
  blocks(q: Float64Array, v: Float64Array, J: Float64Array, Jd: Float64Array, o: number): void;
  /** the geometric error in metres (distance off the circle, stretch of the link, …), ≥ 0 */
  violation(q: Float64Array): number;
  /** a short name, e.g. "distance 3–4" */
  readonly label: string;
  /**
   * |∂C_r/∂x_k| where the constraint is met (r for the circle, L for a distance, 1 for
   * the linear ones): a row whose gradient is far below it has none (the check of
   * ParticleSystem against ∂C/∂x = 0)
   */
  readonly gradientScale: number;
}

function diff(q: Float64Array, i: number, p: number[], d: number, out: number[]): number[] {
  for (let c = 0; c < d; c++) out[c] = q[i * d + c] - p[c];
  return out;
}

/** Unit normals spanning the space ⟂ t̂ (d − 1 of them). */
export function normalsTo(t: number[]): number[][] {
  const len = Math.hypot(...t);
  const u = t.map((x) => x / len);
  if (u.length === 2) return [[-u[1], u[0]]];
  // 3-D: the axis least aligned with t̂, Gram–Schmidt, then the cross product
  const ax = Math.abs(u[0]) <= Math.abs(u[1]) && Math.abs(u[0]) <= Math.abs(u[2]) ? [1, 0, 0] : Math.abs(u[1]) <= Math.abs(u[2]) ? [0, 1, 0] : [0, 0, 1];
  const dot = ax[0] * u[0] + ax[1] * u[1] + ax[2] * u[2];
  const n1 = ax.map((a, c) => a - dot * u[c]);
  const l1 = Math.hypot(...n1);
  for (let c = 0; c < 3; c++) n1[c] /= l1;
  const n2 = [u[1] * n1[2] - u[2] * n1[1], u[2] * n1[0] - u[0] * n1[2], u[0] * n1[1] - u[1] * n1[0]];
  return [n1, n2];
}

/** The bead on a wire: C = ½ (x − c)·(x − c) − ½ r², ∂C/∂x = (x − c)ᵀ, ∂Ċ/∂x = ẋᵀ (slides, "The Bead Example"). */
class CircleConstraint implements ParticleConstraint {
  readonly rows = 1;
  readonly gradientScale: number;
  readonly particles: number[];
  readonly label: string;
  private readonly t: number[];
  constructor(readonly desc: Extract<ConstraintDesc, { type: 'circle' }>, private readonly d: number) {
    this.particles = [desc.particle];
    this.label = `circle ${desc.particle}`;
    this.gradientScale = desc.radius;
    this.t = new Array(d);
  }
  value(q: Float64Array, C: Float64Array, o: number): void {
    const x = diff(q, this.desc.particle, this.desc.center, this.d, this.t);
    let s = 0;
    for (const a of x) s += a * a;
    C[o] = 0.5 * s - 0.5 * this.desc.radius * this.desc.radius;
  }
  blocks(q: Float64Array, v: Float64Array, J: Float64Array, Jd: Float64Array, o: number): void {
    const i = this.desc.particle, d = this.d;
    for (let c = 0; c < d; c++) {
      J[o + c] = q[i * d + c] - this.desc.center[c];
      Jd[o + c] = v[i * d + c];
    }
  }
  violation(q: Float64Array): number {
    return Math.abs(Math.hypot(...diff(q, this.desc.particle, this.desc.center, this.d, this.t)) - this.desc.radius);
  }
}

/** C = ½ (x_a − x_b)·(x_a − x_b) − ½ L²: ∂C/∂x_a = (x_a − x_b)ᵀ = −∂C/∂x_b, ∂Ċ/∂x_a = (ẋ_a − ẋ_b)ᵀ (slides' distance quiz). */
class DistanceConstraint implements ParticleConstraint {
  readonly rows = 1;
  readonly gradientScale: number;
  readonly particles: number[];
  readonly label: string;
  constructor(readonly desc: Extract<ConstraintDesc, { type: 'distance' }>, private readonly d: number) {
    this.particles = [desc.a, desc.b];
    this.label = `distance ${desc.a}–${desc.b}`;
    this.gradientScale = desc.length;
  }
  private length2(q: Float64Array): number {
    const { a, b } = this.desc, d = this.d;
    let s = 0;
    for (let c = 0; c < d; c++) {
      const l = q[a * d + c] - q[b * d + c];
      s += l * l;
    }
    return s;
  }
  value(q: Float64Array, C: Float64Array, o: number): void {
    C[o] = 0.5 * this.length2(q) - 0.5 * this.desc.length * this.desc.length;
  }
  blocks(q: Float64Array, v: Float64Array, J: Float64Array, Jd: Float64Array, o: number): void {
    const { a, b } = this.desc, d = this.d;
    for (let c = 0; c < d; c++) {
      const l = q[a * d + c] - q[b * d + c], ld = v[a * d + c] - v[b * d + c];
      J[o + c] = l;
      J[o + d + c] = -l;
      Jd[o + c] = ld;
      Jd[o + d + c] = -ld;
    }
  }
  violation(q: Float64Array): number {
    return Math.abs(Math.sqrt(this.length2(q)) - this.desc.length);
  }
}

/**
 * Linear constraints C_r = n_r·(x − p) with constant unit normals n_r: J rows n_rᵀ, J̇ = 0.
 * A nail has the d axes as normals, a plane its normal, a line the d − 1 normals ⟂ its direction.
 */
class LinearConstraint implements ParticleConstraint {
  readonly rows: number;
  readonly gradientScale = 1;
  readonly particles: number[];
  readonly label: string;
  private readonly t: number[];
  constructor(
    readonly desc: Extract<ConstraintDesc, { type: 'nail' | 'plane' | 'line' }>,
    private readonly d: number,
    private readonly normals: number[][],
  ) {
    this.rows = normals.length;
    this.particles = [desc.particle];
    this.label = `${desc.type} ${desc.particle}`;
    this.t = new Array(d);
  }
  value(q: Float64Array, C: Float64Array, o: number): void {
    const x = diff(q, this.desc.particle, this.desc.point, this.d, this.t);
    this.normals.forEach((n, r) => {
      let s = 0;
      for (let c = 0; c < this.d; c++) s += n[c] * x[c];
      C[o + r] = s;
    });
  }
  blocks(_q: Float64Array, _v: Float64Array, J: Float64Array, Jd: Float64Array, o: number): void {
    const d = this.d;
    this.normals.forEach((n, r) => {
      for (let c = 0; c < d; c++) {
        J[o + r * d + c] = n[c];
        Jd[o + r * d + c] = 0;
      }
    });
  }
  /** the distance to the point, plane or line: |(n_r·(x − p))_r| */
  violation(q: Float64Array): number {
    const C = new Float64Array(this.rows);
    this.value(q, C, 0);
    return Math.hypot(...C);
  }
}

export function makeConstraint(desc: ConstraintDesc, d: number): ParticleConstraint {
  switch (desc.type) {
    case 'circle':
      return new CircleConstraint(desc, d);
    case 'distance':
      return new DistanceConstraint(desc, d);
    case 'nail':
      return new LinearConstraint(desc, d, Array.from({ length: d }, (_, r) => Array.from({ length: d }, (_, c) => (c === r ? 1 : 0))));
    case 'plane': {
      const len = Math.hypot(...desc.normal);
      return new LinearConstraint(desc, d, [desc.normal.map((x) => x / len)]);
    }
    case 'line':
      return new LinearConstraint(desc, d, normalsTo(desc.direction));
  }
}
