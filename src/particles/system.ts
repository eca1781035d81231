/**
 * A constrained particle system and its derivative evaluation (Witkin slides,
 * "Modified deriv eval loop"):
 *   1. clear the force accumulators;
 *   2. invoke every force's apply;
 *   3. assemble the sparse J, J̇ from the constraints' blocks, solve
 *        J W Jᵀ λ = −J̇ q̇ − J W Q − k_s C − k_d Ċ        (slides, "Multiple force constraints"
 *                                                          with the "Feedback" term C̈ = −k_s C − k_d Ċ)
 *      by conjugate gradient, never forming J W Jᵀ, and add Q̂ = Jᵀ λ to the forces;
 *   4. return the derivatives (ẋ, v̇) = (v, W (Q + Q̂)).
 * Parametric particles (reduced coordinate u on a path x(u)) take
 *   Jᵀ M J ü = −Jᵀ M J̇ u̇ + Jᵀ Q,   J = ∂x/∂u            (slides, "Parametric constraints"),
 * i.e. for one particle on a circle θ̈ = (T·f/m − T·Ṫ θ̇)/(T·T), T = ∂x/∂θ.
 *
 * The state Y = [q (d·n), v (d·n), u (m), u̇ (m)] is what the integrators
 * (integrators.ts) advance; q and v of a parametric particle are read from its
 * path, never integrated. Constraints may be added and removed between steps.
 */
import { conjugateGradient } from '../math/cg.js';
import { makeConstraint, type ParticleConstraint } from './constraints.js';
import { makeForce, type ParticleForce } from './forces.js';
import { ParticleSystemError, validateParticleSystem, type ConstraintDesc, type ForceDesc, type ParametricCircleDesc, type ParticleSystemDesc } from '../model/particle-system.js';

import { SolverFailure } from '../model/failure.js';
export { SolverFailure };

export interface ConstraintForce {
  /** index in the system's constraint list */
  constraint: number;
  type: ConstraintDesc['type'];
  label: string;
  /** λ_r, one per row (units: force per unit of ∂C/∂x, e.g. N/m for C = ½|x|² − ½r²) */
  lambda: number[];
  /** Q̂ on each particle it touches: Σ_r λ_r ∂C_r/∂x_k (N) */
  forces: { particle: number; force: number[] }[];
}

export interface FeedbackGains {
  /** k_s, 1/s² */
  ks: number;
  /** k_d, 1/s */
  kd: number;
}

/** x(θ) = c + r(cos θ, sin θ [, 0]): T = ∂x/∂θ = r(−sin θ, cos θ), ∂T/∂θ = −r(cos θ, sin θ). */
export function circlePath(p: ParametricCircleDesc, theta: number, d: number): { x: number[]; T: number[]; dT: number[] } {
  const cs = Math.cos(theta), sn = Math.sin(theta), r = p.radius;
  const x = [p.center[0] + r * cs, p.center[1] + r * sn];
  const T = [-r * sn, r * cs];
  const dT = [-r * cs, -r * sn];
  if (d === 3) {
    x.push(p.center[2]);
    T.push(0);
    dT.push(0);
  }
  return { x, T, dT };
}

export class ParticleSystem {
  readonly dimension: 2 | 3;
  readonly n: number;
  /** 0 for fixed particles */
  readonly mass: Float64Array;
  /** 1/m, 0 for fixed (W) */
  readonly invMass: Float64Array;
  readonly radius: Float64Array;
  readonly forces: ParticleForce[];
  readonly parametric: ParametricCircleDesc[];
  private constraintList: ParticleConstraint[] = [];
  /** state Y = [q, v, u, u̇] */
  y: Float64Array;
  time = 0;
  gains: FeedbackGains;
  /** CG relative tolerance on ‖b − Aλ‖/‖b‖ */
  tolerance = 1e-10;
  /** running totals over every constraint solve since creation */
  totals = { solves: 0, iterations: 0, rowSolves: 0, unconverged: 0 };
  /** the CG residual after each iteration of the next solve, when set (diagnostics) */
  recordResiduals: number[] | null = null;

  // assembled per derivative evaluation
  private rowOffset: Int32Array = new Int32Array(1);
  private blockOffset: Int32Array = new Int32Array(1);
  private rows = 0;
  private C = new Float64Array(0);
  private J = new Float64Array(0);
  private Jd = new Float64Array(0);
  private lambda = new Float64Array(0);
  /** per-row work of one evaluation: J̇q̇, JWQ, Ċ = Jq̇, b, diag(J W Jᵀ) (sized by layout) */
  private jdv = new Float64Array(0);
  private jwq = new Float64Array(0);
  private cdot = new Float64Array(0);
  private rhs = new Float64Array(0);
  private diag = new Float64Array(0);
  /** per-coordinate work: Jᵀx, then W Jᵀx */
  private readonly jtx: Float64Array;
  private readonly force: Float64Array;
  private readonly qWork: Float64Array;
  private readonly vWork: Float64Array;
  private readonly scratch: Float64Array;

  constructor(readonly desc: ParticleSystemDesc, gains: FeedbackGains = { ks: 0, kd: 0 }) {
    validateParticleSystem(desc);
    const d = (this.dimension = desc.dimension);
    const n = (this.n = desc.particles.length);
    this.gains = { ...gains };
    this.mass = Float64Array.from(desc.particles, (p) => (p.fixed ? 0 : p.mass));
    this.invMass = Float64Array.from(this.mass, (m) => (m > 0 ? 1 / m : 0));
    this.radius = Float64Array.from(desc.particles, (p) => p.radius ?? 0.05);
    this.forces = desc.forces.map((f) => makeForce(f, d));
    this.parametric = (desc.parametric ?? []).map((p) => ({ ...p, center: [...p.center] }));
    for (const p of this.parametric) this.invMass[p.particle] = 0; // moved by its path, never by Q̂
    const m = this.parametric.length;
    this.y = new Float64Array(2 * d * n + 2 * m);
    desc.particles.forEach((p, i) => {
      for (let c = 0; c < d; c++) {
        this.y[i * d + c] = p.position[c];
        this.y[d * n + i * d + c] = p.fixed ? 0 : (p.velocity?.[c] ?? 0);
      }
    });
    this.parametric.forEach((p, k) => {
      this.y[2 * d * n + k] = p.theta;
      this.y[2 * d * n + m + k] = p.thetaDot;
    });
    this.force = new Float64Array(d * n);
    this.qWork = new Float64Array(d * n);
    this.vWork = new Float64Array(d * n);
    this.scratch = new Float64Array(d * n);
    this.jtx = new Float64Array(d * n);
    for (const c of desc.constraints) this.addConstraint(c);
    this.syncPaths(this.y);
  }

  get constraints(): readonly ParticleConstraint[] {
    return this.constraintList;
  }

  /** Adds an implicit constraint (between steps); returns it, for removeConstraint. */
  addConstraint(desc: ConstraintDesc): ParticleConstraint {
    validateParticleSystem({ ...this.desc, parametric: this.parametric, constraints: [desc], forces: [] });
    const c = makeConstraint(desc, this.dimension);
    if (c.particles.every((p) => this.invMass[p] === 0))
      throw new ParticleSystemError(`constraint ${c.label}`, 'touches only fixed particles: nothing can move to meet it');
    this.constraintList.push(c);
    this.layout();
    return c;
  }

  removeConstraint(c: ParticleConstraint): void {
    const i = this.constraintList.indexOf(c);
    if (i < 0) throw new Error(`constraint ${c.label} is not in this system`);
    this.constraintList.splice(i, 1);
    this.layout();
  }

  addForce(desc: ForceDesc): void {
    validateParticleSystem({ ...this.desc, parametric: this.parametric, constraints: [], forces: [desc] });
    this.forces.push(makeForce(desc, this.dimension));
  }

  /** Row and block offsets of the constraint list; multipliers restart from zero. */
  private layout(): void {
    const k = this.constraintList.length, d = this.dimension;
    this.rowOffset = new Int32Array(k + 1);
    this.blockOffset = new Int32Array(k + 1);
    this.constraintList.forEach((c, i) => {
      this.rowOffset[i + 1] = this.rowOffset[i] + c.rows;
      this.blockOffset[i + 1] = this.blockOffset[i] + c.rows * c.particles.length * d;
    });
    this.rows = this.rowOffset[k];
    this.C = new Float64Array(this.rows);
    this.J = new Float64Array(this.blockOffset[k]);
    this.Jd = new Float64Array(this.blockOffset[k]);
    this.lambda = new Float64Array(this.rows);
    this.jdv = new Float64Array(this.rows);
    this.jwq = new Float64Array(this.rows);
    this.cdot = new Float64Array(this.rows);
    this.rhs = new Float64Array(this.rows);
    this.diag = new Float64Array(this.rows);
  }

  get rowCount(): number {
    return this.rows;
  }

  /** q and v of every particle at state Y (parametric ones from their path) into qWork/vWork. */
  private positions(y: Float64Array): void {
    const d = this.dimension, n = this.n, m = this.parametric.length;
    this.qWork.set(y.subarray(0, d * n));
    this.vWork.set(y.subarray(d * n, 2 * d * n));
    this.parametric.forEach((p, k) => {
      const th = y[2 * d * n + k], thd = y[2 * d * n + m + k];
      const { x, T } = circlePath(p, th, d);
      for (let c = 0; c < d; c++) {
        this.qWork[p.particle * d + c] = x[c];
        this.vWork[p.particle * d + c] = T[c] * thd; // ẋ = T θ̇
      }
    });
  }

  /** Writes the parametric particles' q, v into Y itself (after a step), so Y reads as the true state. */
  syncPaths(y: Float64Array): void {
    if (!this.parametric.length) return;
    this.positions(y);
    const d = this.dimension, n = this.n;
    for (const p of this.parametric)
      for (let c = 0; c < d; c++) {
        y[p.particle * d + c] = this.qWork[p.particle * d + c];
        y[d * n + p.particle * d + c] = this.vWork[p.particle * d + c];
      }
  }

  /** out = J x (x: d·n, out: rows) */
  private applyJ(J: Float64Array, x: Float64Array, out: Float64Array): void {
    const d = this.dimension;
    out.fill(0);
    this.constraintList.forEach((c, i) => {
      const P = c.particles.length;
      let o = this.blockOffset[i];
      for (let r = 0; r < c.rows; r++) {
        let s = 0;
        for (let k = 0; k < P; k++) {
          const pi = c.particles[k] * d;
          for (let a = 0; a < d; a++) s += J[o + a] * x[pi + a];
          o += d;
        }
        out[this.rowOffset[i] + r] = s;
      }
    });
  }

  /** out = Jᵀ λ (λ: rows, out: d·n) */
  private applyJT(lambda: Float64Array, out: Float64Array): void {
    const d = this.dimension, J = this.J;
    out.fill(0);
    this.constraintList.forEach((c, i) => {
      const P = c.particles.length;
      let o = this.blockOffset[i];
      for (let r = 0; r < c.rows; r++) {
        const l = lambda[this.rowOffset[i] + r];
        for (let k = 0; k < P; k++) {
          const pi = c.particles[k] * d;
          for (let a = 0; a < d; a++) out[pi + a] += J[o + a] * l;
          o += d;
        }
      }
    });
  }

  /** Steps 1–3 at state Y: applied forces into this.force, constraint forces solved, Q + Q̂ left in this.force. */
  /**
   * Wall ms spent so far in the notes' steps 1–2 (clear and apply forces) and 3 (constraint forces:
   * J, b and the multiplier solve), over every derivative evaluation (the solver's stage times).
   */
  readonly stageMs = { forces: 0, constraints: 0 };

  private evaluateForces(y: Float64Array): void {
    const t0 = performance.now();
    this.applyForces(y);
    const t1 = performance.now();
    this.stageMs.forces += t1 - t0;
    if (this.rows === 0) return;
    this.constraintForce();
    this.stageMs.constraints += performance.now() - t1;
  }

  /** Steps 1–2: clear the force accumulators, then every force's apply_force, at state y. */
  private applyForces(y: Float64Array): void {
    this.positions(y);
    const q = this.qWork, v = this.vWork, f = this.force;
    f.fill(0); // 1. clear force accumulators
    for (const force of this.forces) force.apply(q, v, this.mass, f); // 2. apply_force
  }

  /** Step 3: the constraint force Q̂ = Jᵀλ from J W Jᵀ λ = b, added into the force accumulators. */
  private constraintForce(): void {
    const d = this.dimension, n = this.n;
    const q = this.qWork, v = this.vWork, f = this.force;
    // 3. constraint forces: blocks, then b = −J̇q̇ − JWQ − k_s C − k_d Ċ (Ċ = J q̇)
    const rows = this.rows, J = this.J, Jd = this.Jd, C = this.C;
    this.constraintList.forEach((c, i) => {
      c.value(q, C, this.rowOffset[i]);
      c.blocks(q, v, J, Jd, this.blockOffset[i]);
    });
    const W = this.invMass, wq = this.scratch;
    for (let i = 0; i < n; i++) for (let a = 0; a < d; a++) wq[i * d + a] = W[i] * f[i * d + a];
    const { jdv, jwq, cdot, rhs: b, diag } = this;
    this.applyJ(Jd, v, jdv);
    this.applyJ(J, wq, jwq);
    this.applyJ(J, v, cdot);
    const { ks, kd } = this.gains;
    let partsNorm = 0;
    for (let r = 0; r < rows; r++) {
      b[r] = -jdv[r] - jwq[r] - ks * C[r] - kd * cdot[r];
      partsNorm += jdv[r] * jdv[r] + jwq[r] * jwq[r] + (ks * C[r]) ** 2 + (kd * cdot[r]) ** 2;
    }
    // diagonal of J W Jᵀ (the preconditioner); a zero one is a row without a gradient
    this.constraintList.forEach((c, i) => {
      const P = c.particles.length;
      let o = this.blockOffset[i];
      for (let r = 0; r < c.rows; r++) {
        let s = 0;
        for (let k = 0; k < P; k++) {
          const w = W[c.particles[k]];
          for (let a = 0; a < d; a++) s += w * J[o + a] * J[o + a];
          o += d;
        }
        diag[this.rowOffset[i] + r] = s;
      }
    });
    // a row whose Σ w_k |∂C/∂x_k|² is below 1e-16 of its value where met, Σ w_k · scale², has no gradient
    this.constraintList.forEach((c, i) => {
      let wsum = 0;
      for (const p of c.particles) wsum += W[p];
      for (let r = this.rowOffset[i]; r < this.rowOffset[i + 1]; r++)
        if (!(diag[r] > 1e-16 * wsum * c.gradientScale * c.gradientScale))
          throw new SolverFailure(`constraint ${i} (${c.label}) has a zero gradient at t = ${this.time.toFixed(4)} s: ∂C/∂x = 0, so no force can hold it`);
    });
    // J W Jᵀ x, applied as Jᵀ, then W, then J
    const tmp = this.jtx;
    const apply = (x: Float64Array, out: Float64Array) => {
      this.applyJT(x, tmp);
      for (let i = 0; i < n; i++) for (let a = 0; a < d; a++) tmp[i * d + a] *= W[i];
      this.applyJ(J, tmp, out);
    };
    const rec = this.recordResiduals;
    const res = conjugateGradient(apply, b, this.lambda, {
      tolerance: this.tolerance,
      absoluteTolerance: 1e-14 * Math.sqrt(partsNorm),
      precondition: (r, z) => {
        for (let i = 0; i < rows; i++) z[i] = r[i] / diag[i];
      },
      onIteration: rec ? (_k, rn) => rec.push(rn) : undefined,
    });
    this.recordResiduals = null;
    this.totals.solves++;
    this.totals.iterations += res.iterations;
    this.totals.rowSolves += res.iterations * rows;
    if (!res.converged) this.totals.unconverged++;
    this.applyJT(this.lambda, tmp); // Q̂ = Jᵀ λ
    for (let i = 0; i < d * n; i++) f[i] += tmp[i];
  }

  /** dY/dt at Y: (v, W(Q + Q̂), u̇, ü); writes into out. */
  derivative(y: Float64Array, out: Float64Array): void {
    const d = this.dimension, n = this.n, m = this.parametric.length;
    this.evaluateForces(y);
    const f = this.force;
    for (let i = 0; i < n; i++)
      for (let a = 0; a < d; a++) {
        out[i * d + a] = this.invMass[i] > 0 ? y[d * n + i * d + a] : 0;
        out[d * n + i * d + a] = this.invMass[i] * f[i * d + a];
      }
    this.parametric.forEach((p, k) => {
      // θ̈ = (T·f/m − T·Ṫ θ̇)/(T·T), Ṫ = (∂T/∂θ) θ̇
      const th = y[2 * d * n + k], thd = y[2 * d * n + m + k];
      const { T, dT } = circlePath(p, th, d);
      const mass = this.mass[p.particle];
      let tf = 0, tt = 0, tdt = 0;
      for (let a = 0; a < d; a++) {
        tf += T[a] * f[p.particle * d + a];
        tt += T[a] * T[a];
        tdt += T[a] * dT[a] * thd;
      }
      out[2 * d * n + k] = thd;
      out[2 * d * n + m + k] = (tf / mass - tdt * thd) / tt;
    });
  }

  /** λ and Q̂ of every constraint at the current state (one derivative evaluation; the state is not changed). */
  constraintForces(): ConstraintForce[] {
    const d = this.dimension;
    this.evaluateForces(this.y);
    return this.constraintList.map((c, i) => {
      const lambda = Array.from(this.lambda.subarray(this.rowOffset[i], this.rowOffset[i + 1]));
      const P = c.particles.length;
      const forces = c.particles.map((p, k) => {
        const force = new Array<number>(d).fill(0);
        for (let r = 0; r < c.rows; r++) {
          const o = this.blockOffset[i] + (r * P + k) * d;
          for (let a = 0; a < d; a++) force[a] += this.J[o + a] * lambda[r];
        }
        return { particle: p, force };
      });
      return { constraint: i, type: c.desc.type, label: c.label, lambda, forces };
    });
  }

  /** Current q and v (d·n each; parametric particles on their path). */
  state(): { q: Float64Array; v: Float64Array } {
    const d = this.dimension, n = this.n;
    return { q: this.y.slice(0, d * n), v: this.y.slice(d * n, 2 * d * n) };
  }
}
