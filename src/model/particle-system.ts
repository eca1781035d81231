/**
 * The description of a constrained particle system (Witkin, "Constrained
 * dynamics", shared/seeds/witkin-constrained-dynamics-slides.txt): particles,
 * the forces that act on them, implicit constraints C(q) = 0 held by a global
 * multiplier solve, and parametric particles that live on a path x(u) by
 * construction. Plain data, like WorldDesc; a scene builds one, a solver
 * compiles it. `kind: 'particles'` tells it apart from a rigid WorldDesc.
 *
 * Units: SI. Positions and vectors have `dimension` components (2 or 3); a 2-D
 * system moves in the xy-plane and its snapshots carry z = 0.
 */

export interface ParticleDesc {
  position: number[];
  velocity?: number[];
  /** kg; ignored (infinite) when fixed */
  mass: number;
  /** a fixed particle never moves (W = 0) */
  fixed?: boolean;
  /** drawn radius, m (rendering only; no collision) */
  radius?: number;
}

/** Forces: each one applies itself to the particles' force accumulators ("deriv eval" loop). */
export type ForceDesc =
  /** f = m g on every particle */
  | { type: 'gravity'; g: number[] }
  /** Hooke spring with damping along the line between two particles (rest length ≥ 0) */
  | { type: 'spring'; a: number; b: number; restLength: number; stiffness: number; damping: number }
  /** viscous drag f = −k v on every particle (k in kg/s) */
  | { type: 'drag'; k: number };

/** Implicit constraints C(q) = 0. */
export type ConstraintDesc =
  /** the bead on a wire: C = ½|x − c|² − ½r² (a circle in 2-D, a sphere in 3-D) */
  | { type: 'circle'; particle: number; center: number[]; radius: number }
  /** C = ½|x_a − x_b|² − ½L², L > 0 */
  | { type: 'distance'; a: number; b: number; length: number }
  /** C = x − p (dimension rows) */
  | { type: 'nail'; particle: number; point: number[] }
  /** C = n̂·(x − p) (n normalised) */
  | { type: 'plane'; particle: number; point: number[]; normal: number[] }
  /** C = N̂_k·(x − p), k < dimension, for unit normals N̂_k ⟂ the line's direction */
  | { type: 'line'; particle: number; point: number[]; direction: number[] };

/** A particle held on a circle by its coordinate θ: x = c + r(cos θ, sin θ) (in the xy-plane). */
export interface ParametricCircleDesc {
  type: 'circle';
  particle: number;
  center: number[];
  radius: number;
  /** initial θ (rad) and θ̇ (rad/s); the particle's own position/velocity are ignored */
  theta: number;
  thetaDot: number;
}

export interface ParticleSystemDesc {
  kind: 'particles';
  dimension: 2 | 3;
  particles: ParticleDesc[];
  forces: ForceDesc[];
  constraints: ConstraintDesc[];
  /** particles in reduced coordinates (no implicit constraint may touch them) */
  parametric?: ParametricCircleDesc[];
}

/** A fault in a particle-system description, with where it is. */
export class ParticleSystemError extends Error {
  constructor(readonly where: string, readonly problem: string) {
    super(`${where}: ${problem}`);
    this.name = 'ParticleSystemError';
  }
}

export function isParticleSystem(desc: unknown): desc is ParticleSystemDesc {
  return typeof desc === 'object' && desc !== null && (desc as { kind?: unknown }).kind === 'particles';
}

function vec(where: string, v: unknown, d: number): void {
  if (!Array.isArray(v) || v.length !== d) throw new ParticleSystemError(where, `must be a vector of ${d} numbers`);
  if (!v.every((x) => typeof x === 'number' && Number.isFinite(x))) throw new ParticleSystemError(where, 'must hold finite numbers');
}

function positive(where: string, x: unknown, allowZero = false): void {
  if (typeof x !== 'number' || !Number.isFinite(x) || (allowZero ? x < 0 : x <= 0))
    throw new ParticleSystemError(where, `must be a finite number ${allowZero ? '≥' : '>'} 0`);
}

/** Checks everything a solver relies on; throws ParticleSystemError naming the first fault. */
export function validateParticleSystem(s: ParticleSystemDesc): void {
  const d = s.dimension;
  if (d !== 2 && d !== 3) throw new ParticleSystemError('dimension', 'must be 2 or 3');
  const n = s.particles.length;
  if (n === 0) throw new ParticleSystemError('particles', 'must not be empty');
  s.particles.forEach((p, i) => {
    vec(`particles[${i}].position`, p.position, d);
    if (p.velocity !== undefined) vec(`particles[${i}].velocity`, p.velocity, d);
    if (!p.fixed) positive(`particles[${i}].mass`, p.mass);
    if (p.radius !== undefined) positive(`particles[${i}].radius`, p.radius);
  });
  const index = (where: string, i: unknown) => {
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= n) throw new ParticleSystemError(where, `must be a particle index in 0..${n - 1}`);
  };
  const unit = (where: string, v: number[]) => {
    vec(where, v, d);
    if (Math.hypot(...v) < 1e-12) throw new ParticleSystemError(where, 'must not be zero');
  };
  s.forces.forEach((f, i) => {
    const w = `forces[${i}]`;
    if (f.type === 'gravity') vec(`${w}.g`, f.g, d);
    else if (f.type === 'spring') {
      index(`${w}.a`, f.a);
      index(`${w}.b`, f.b);
      if (f.a === f.b) throw new ParticleSystemError(w, 'a spring joins two different particles');
      positive(`${w}.restLength`, f.restLength, true);
      positive(`${w}.stiffness`, f.stiffness, true);
      positive(`${w}.damping`, f.damping, true);
    } else if (f.type === 'drag') positive(`${w}.k`, f.k, true);
    else throw new ParticleSystemError(`${w}.type`, `unknown force type '${(f as { type: unknown }).type}' (gravity, spring, drag)`);
  });
  const parametric = new Set((s.parametric ?? []).map((p) => p.particle));
  s.constraints.forEach((c, i) => {
    const w = `constraints[${i}]`;
    const touch = (k: string, p: number) => {
      index(`${w}.${k}`, p);
      if (parametric.has(p)) throw new ParticleSystemError(`${w}.${k}`, `particle ${p} is parametric (its path already constrains it)`);
    };
    switch (c.type) {
      case 'circle':
        touch('particle', c.particle);
        vec(`${w}.center`, c.center, d);
        positive(`${w}.radius`, c.radius);
        break;
      case 'distance':
        touch('a', c.a);
        touch('b', c.b);
        if (c.a === c.b) throw new ParticleSystemError(w, 'a distance joins two different particles');
        // C = ½|x_a − x_b|² − ½L² has ∂C/∂x = x_a − x_b = 0 wherever a zero length is met: no constraint force direction
        if (typeof c.length !== 'number' || !Number.isFinite(c.length) || c.length <= 0)
          throw new ParticleSystemError(`${w}.length`, 'must be > 0 (at length 0 the gradient x_a − x_b vanishes; nail the particles together or use a spring)');
        break;
      case 'nail':
        touch('particle', c.particle);
        vec(`${w}.point`, c.point, d);
        break;
      case 'plane':
        touch('particle', c.particle);
        vec(`${w}.point`, c.point, d);
        unit(`${w}.normal`, c.normal);
        break;
      case 'line':
        touch('particle', c.particle);
        vec(`${w}.point`, c.point, d);
        unit(`${w}.direction`, c.direction);
        break;
      default:
        throw new ParticleSystemError(`${w}.type`, `unknown constraint type '${(c as { type: unknown }).type}' (circle, distance, nail, plane, line)`);
    }
  });
  const seen = new Set<number>();
  (s.parametric ?? []).forEach((p, i) => {
    const w = `parametric[${i}]`;
    if (p.type !== 'circle') throw new ParticleSystemError(`${w}.type`, `unknown path '${(p as { type: unknown }).type}' (circle)`);
    index(`${w}.particle`, p.particle);
    if (seen.has(p.particle)) throw new ParticleSystemError(`${w}.particle`, `particle ${p.particle} already has a path`);
    seen.add(p.particle);
    if (s.particles[p.particle].fixed) throw new ParticleSystemError(`${w}.particle`, 'a fixed particle cannot have a path');
    vec(`${w}.center`, p.center, d);
    positive(`${w}.radius`, p.radius);
    for (const k of ['theta', 'thetaDot'] as const)
      if (typeof p[k] !== 'number' || !Number.isFinite(p[k])) throw new ParticleSystemError(`${w}.${k}`, 'must be a finite number');
  });
}
