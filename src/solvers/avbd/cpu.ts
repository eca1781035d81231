/**
 * avbd-cpu: Augmented Vertex Block Descent for rigid bodies (Giles, Diaz & Yuksel, SIGGRAPH 2025),
 * the f64 reference. Equation numbers are the paper's (as its public demos cite them).
 *
 * The unknowns are the bodies' poses at the end of the frame. Each body's pose x_i = (position,
 * orientation) minimises, with the other bodies held,
 *   E_i(x_i) = ½ ‖x_i − y_i‖²_M / h² + Σ_{rows r ∋ i} (½ k_r C_r(x)² + λ_r C_r(x))      (eqs. 1, 10)
 * y_i = x⁻ + h v + h² g the inertial target (eq. 2). One Newton step per body and iteration:
 *   f_i = M_i/h² (x_i − y_i) + Σ_r J_r,iᵀ F_r,   F_r = clamp(k_r C*_r + λ_r, fmin_r, fmax_r)  (eq. 13, §3.2)
 *   H_i = M_i/h² + Σ_r k_r J_r,iᵀ J_r,i + G_i                                           (eq. 17)
 *   x_i ← x_i − H_i⁻¹ f_i   (a dense 6×6 LDLᵀ, math/ldlt6.ts)                             (eq. 4)
 * G_i the lumped geometric stiffness of §3.5 (|F_r| times the row's curvature, forces.ts). The
 * orientation part of x_i − y_i is the rotation vector of q_i q_y⁻¹, M_i's the world inertia
 * R I Rᵀ, and a step Δθ turns q ← normalise(q − ½ (Δθ, 0) ⊗ q).
 * Then the dual update per row (augmented Lagrangian):
 *   λ_r ← clamp(k_r C*_r + λ_r, fmin, fmax)                                               (eq. 11)
 *   k_r ← min(k_r + β |C*_r|, k_max, stiffness_r)   while fmin < λ_r < fmax               (eq. 16)
 * Hard rows (stiffness ∞) carry λ; soft rows (a joint's own compliance α_j: stiffness 1/α_j) use
 * λ = 0, their k capped at the stiffness, a spring.
 * Stabilisation (eq. 18): C*(x) = C(x) − α C(x⁻), of C(x⁻) only the part that violates the row
 * (an equality's all of it; a one-sided row's only an overlap, so a slack rope or a contact that is
 * still apart is not pulled shut).
 * Warm start per frame (eq. 19): λ ← α γ λ, k ← clamp(γ k, k_min, k_max); and the bodies start
 * from the adaptive guess of VBD: x ← x⁻ + h v + h² g ŵ, ŵ = clamp(a·ĝ / |g|, 0, 1), a the last
 * frame's acceleration (full gravity for a body falling freely, none for one at rest).
 * Velocities from the motion over the frame: v = (x − x⁻)/h, ω = rotation vector of q q⁻⁻¹ / h.
 * With post-stabilisation (the 2-D demo's default, option postStabilize): the iterations run at
 * α = 1 (no correction of old error), velocities are taken, then one more primal pass at α = 0
 * moves the bodies onto the constraints without adding that motion to the velocities.
 *
 * Order: per iteration, bodies colour by colour (model/body-colouring.ts, from the joints' and
 * contacts' graph), in index order within a colour (bodies of a colour share no row: a parallel
 * sweep gives the same result); then every row's dual update.
 *
 * Stages (solvers/stages.ts): collide · prepare contacts · colour bodies · warm start · inertial
 * target · primal · dual · update velocities (· post-stabilise) · store impulses.
 *
 * No restitution: the paper's step is implicit Euler with inelastic contacts, and AVBD has no
 * velocity pass in which a bounce could be imposed (the registry refuses a bouncing body). No sleeping.
 *
 * Invariants: a row's C, J are evaluated afresh (evaluate) wherever they are read; C0, bounds,
 * stiffness, β are fixed for the frame; λ and k persist across frames for joints (by slot) and
 * contacts (by their persistent manifold point, contacts.ts).
 */
import type { WorldDesc } from '../../model/world.js';
import { CpuSolverBase } from '../cpu-base.js';
import type { SolverCost, SolverOptions } from '../solver.js';
import { AvbdRows, JointForces, type AvbdConstraintSet } from './forces.js';
import { BodyColouring } from '../../model/body-colouring.js';
import { solveLdlt6 } from '../../math/ldlt6.js';
import { JACOBIAN_STRIDE } from '../../rows/rows.js';
import { SolverFailure } from '../../model/failure.js';
import { ContactForces } from './contacts.js';
import { turn, rotationBetween } from './rotation.js';

export class AvbdCpuSolver extends CpuSolverBase {
  readonly id: string = 'avbd-cpu';
  readonly rows = new AvbdRows();
  private readonly jointForces: JointForces;
  /** the contacts (contacts.ts), or null in a world without collisions */
  private readonly contactForces: ContactForces | null;
  /** the sets, joints first */
  private readonly sets: AvbdConstraintSet[];
  private jointRowCount = 0;
  private jointsVersion = -1;
  /** body → (set, item) CSR over every set: entries itemSet[e], itemIndex[e] of body b at first[b] .. first[b+1] */
  private first = new Int32Array(0);
  private entrySet = new Int32Array(0);
  private entryItem = new Int32Array(0);
  /** the items of all sets flattened (for the colouring): global item g = set offset + k */
  private flatA = new Int32Array(0);
  private flatB = new Int32Array(0);
  private flatEntries = new Int32Array(0);
  private readonly colouring = new BodyColouring();
  /** per body: the pose at the frame's start, the inertial target, the last frame's velocity */
  private readonly x0: Float64Array;
  private readonly q0: Float64Array;
  private readonly y: Float64Array;
  private readonly qy: Float64Array;
  private readonly vPrev: Float64Array;
  private readonly H = new Float64Array(36);
  private readonly f = new Float64Array(6);
  private readonly Iw = new Float64Array(9);

  constructor(world: WorldDesc, options: Partial<SolverOptions>) {
    super(world, { ...options, sleep: 0 });
    const n = this.w.bodyCount;
    this.x0 = new Float64Array(3 * n);
    this.q0 = new Float64Array(4 * n);
    this.y = new Float64Array(3 * n);
    this.qy = new Float64Array(4 * n);
    this.vPrev = this.w.linearVelocity.slice();
    this.jointForces = new JointForces(this.joints);
    this.contactForces = this.collision ? new ContactForces() : null;
    this.sets = this.contactForces ? [this.jointForces, this.contactForces] : [this.jointForces];
  }

  /** avbd-cpu solves contacts (contacts.ts): found once per frame, linearised about its start. */
  protected override solvesContacts(): boolean {
    return true;
  }

  override get stageNames(): readonly string[] {
    return [...(this.collision ? ['collide', 'prepare contacts'] : []), 'colour bodies', 'warm start', 'inertial target', 'primal', 'dual', 'update velocities', ...(this.options.postStabilize === 1 ? ['post-stabilise'] : []), ...(this.collision ? ['store impulses'] : [])];
  }

  /** Lays out the joints' rows again (their λ and k start afresh) and the graph over every set. */
  private relayout(): void {
    const o = this.options;
    this.jointRowCount = this.jointForces.layout(this.rows, 0, o.compliance, o, this.w);
    this.rows.count = this.jointRowCount;
    this.jointsVersion = this.joints.version;
    this.buildGraph();
  }

  /** The body → item CSR and the body colouring, from the sets' items as they are now. */
  private buildGraph(): void {
    const n = this.w.bodyCount;
    let items = 0;
    for (const s of this.sets) items += s.itemCount;
    if (this.first.length < n + 1) this.first = new Int32Array(n + 1);
    if (this.entrySet.length < 2 * items) {
      this.entrySet = new Int32Array(2 * items);
      this.entryItem = new Int32Array(2 * items);
      this.flatEntries = new Int32Array(2 * items);
    }
    if (this.flatA.length < items) {
      this.flatA = new Int32Array(items);
      this.flatB = new Int32Array(items);
    }
    const first = this.first, invMass = this.w.inverseMass;
    first.fill(0, 0, n + 1);
    for (const s of this.sets)
      for (let k = 0; k < s.itemCount; k++) {
        if (invMass[s.itemA[k]] > 0) first[s.itemA[k] + 1]++;
        if (invMass[s.itemB[k]] > 0) first[s.itemB[k] + 1]++;
      }
    for (let b = 0; b < n; b++) first[b + 1] += first[b];
    const fill = first.slice(0, n);
    let g = 0;
    for (let si = 0; si < this.sets.length; si++) {
      const s = this.sets[si];
      for (let k = 0; k < s.itemCount; k++, g++) {
        this.flatA[g] = s.itemA[k];
        this.flatB[g] = s.itemB[k];
        for (let side = 0; side < 2; side++) {
          const b = side === 0 ? s.itemA[k] : s.itemB[k];
          if (invMass[b] > 0) {
            const e = fill[b]++;
            this.entrySet[e] = si;
            this.entryItem[e] = k;
            this.flatEntries[e] = g;
          }
        }
      }
    }
    this.colouring.build(n, invMass, first, this.flatEntries, this.flatA, this.flatB);
  }

  stepFrame(): void {
    if (this.joints.version !== this.jointsVersion) this.relayout();
    const substeps = this.options.substeps;
    const h = this.options.dt / substeps;
    for (let s = 0; s < substeps; s++) this.step1(h);
    this.frame++;
  }

  /** One AVBD step of length h. */
  private step1(h: number): void {
    const o = this.options, w = this.w, rows = this.rows, clock = this.stageClock;
    const n = w.bodyCount, x = w.position, q = w.orientation, v = w.linearVelocity, om = w.angularVelocity, inv = w.inverseMass;
    let t = performance.now();
    // x⁻, q⁻: the pose the frame starts from (the contacts' linearisation point, the velocities' origin)
    this.x0.set(x);
    this.q0.set(q);
    const contacts = this.contactForces;
    if (contacts) {
      const list = this.detectContacts(h)!;
      t = clock.lap('collide', t);
      rows.count = this.jointRowCount + contacts.prepare(list, this.collision!.manifolds, rows, this.jointRowCount, this.x0, this.q0, o.betaLinear);
      t = clock.lap('prepare contacts', t);
      this.buildGraph();
    }
    t = clock.lap('colour bodies', t);

    // --- warm start of the duals (eq. 19) and the error each row starts the frame with (eq. 18) ---
    const post = o.postStabilize === 1;
    const lambdaDecay = post ? 1 : o.avbdAlpha * o.avbdGamma; // post-stabilisation keeps λ whole (2-D demo)
    for (let r = 0; r < rows.count; r++) {
      rows.lambda[r] *= lambdaDecay;
      rows.penalty[r] = Math.min(Math.max(rows.penalty[r] * o.avbdGamma, o.penaltyMin), o.penaltyMax, rows.stiffness[r]);
    }
    for (const s of this.sets)
      for (let k = 0; k < s.itemCount; k++) {
        s.evaluate(k, w, rows);
        const r0 = s.itemFirst[k];
        for (let r = r0; r < r0 + s.itemRows[k]; r++) rows.C0[r] = violation(rows.C[r], rows.fmin[r], rows.fmax[r]);
      }
    t = clock.lap('warm start', t);

    // --- inertial target (eq. 2) and the adaptive warm start of the bodies (VBD) ---
    const gx = w.gravity[0], gy = w.gravity[1], gz = w.gravity[2];
    const g2 = gx * gx + gy * gy + gz * gz, gl = Math.sqrt(g2);
    for (let i = 0; i < n; i++) {
      const p = 3 * i, qo = 4 * i;
      if (inv[i] === 0) {
        this.y[p] = x[p]; this.y[p + 1] = x[p + 1]; this.y[p + 2] = x[p + 2];
        for (let c = 0; c < 4; c++) this.qy[qo + c] = q[qo + c];
        continue;
      }
      this.y[p] = x[p] + h * v[p] + h * h * gx;
      this.y[p + 1] = x[p + 1] + h * v[p + 1] + h * h * gy;
      this.y[p + 2] = x[p + 2] + h * v[p + 2] + h * h * gz;
      for (let c = 0; c < 4; c++) this.qy[qo + c] = q[qo + c];
      turn(this.qy, qo, om[p], om[p + 1], om[p + 2], h);
      // ŵ from the last frame's acceleration along g
      let weight = 0;
      if (gl > 0) {
        const along = ((v[p] - this.vPrev[p]) * gx + (v[p + 1] - this.vPrev[p + 1]) * gy + (v[p + 2] - this.vPrev[p + 2]) * gz) / (h * gl);
        weight = Math.min(Math.max(along / gl, 0), 1);
        if (!Number.isFinite(weight)) weight = 0;
      }
      x[p] += h * v[p] + h * h * gx * weight;
      x[p + 1] += h * v[p + 1] + h * h * gy * weight;
      x[p + 2] += h * v[p + 2] + h * h * gz * weight;
      for (let c = 0; c < 4; c++) q[qo + c] = this.qy[qo + c];
    }
    t = clock.lap('inertial target', t);

    const alphaIter = post ? 1 : o.avbdAlpha;
    for (let it = 0; it < o.iterations; it++) {
      this.primal(h, alphaIter);
      t = clock.lap('primal', t);
      this.dual(alphaIter);
      t = clock.lap('dual', t);
    }

    // --- velocities from the frame's motion (BDF1) ---
    for (let i = 0; i < n; i++) {
      const p = 3 * i;
      this.vPrev[p] = v[p]; this.vPrev[p + 1] = v[p + 1]; this.vPrev[p + 2] = v[p + 2];
      if (inv[i] === 0) continue;
      v[p] = (x[p] - this.x0[p]) / h;
      v[p + 1] = (x[p + 1] - this.x0[p + 1]) / h;
      v[p + 2] = (x[p + 2] - this.x0[p + 2]) / h;
      rotationBetween(q, 4 * i, this.q0, 4 * i, om, p, 1 / h);
      if (!Number.isFinite(v[p] + v[p + 1] + v[p + 2] + om[p] + om[p + 1] + om[p + 2])) throw new SolverFailure(`avbd-cpu: body ${i} has a non-finite velocity at frame ${this.frame + 1} (the solve diverged)`);
    }
    t = clock.lap('update velocities', t);
    if (post) {
      this.primal(h, 0);
      t = clock.lap('post-stabilise', t);
    }
    if (contacts) {
      contacts.store(this.collision!.manifolds, rows);
      clock.lap('store impulses', t);
    }
  }

  /** One primal pass: every dynamic body's Newton step (eq. 4), colour by colour. */
  private primal(h: number, alpha: number): void {
    const w = this.w, rows = this.rows, H = this.H, f = this.f, Iw = this.Iw;
    const x = w.position, q = w.orientation;
    const col = this.colouring, first = this.first;
    const ih2 = 1 / (h * h);
    for (let c = 0; c < col.colourCount; c++) {
      for (let e0 = col.start[c]; e0 < col.start[c + 1]; e0++) {
        const i = col.order[e0];
        const p = 3 * i, qo = 4 * i;
        // M/h² and M/h² (x − y) (eqs. 5, 6): the world inertia R I Rᵀ, the rotation vector of q q_y⁻¹
        const m = w.mass[i] * ih2;
        worldInertia(q, qo, w.inertiaLocal, 9 * i, Iw);
        H.fill(0);
        H[0] = H[7] = H[14] = m;
        for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) H[6 * (3 + a) + 3 + b] = Iw[3 * a + b] * ih2;
        f[0] = m * (x[p] - this.y[p]);
        f[1] = m * (x[p + 1] - this.y[p + 1]);
        f[2] = m * (x[p + 2] - this.y[p + 2]);
        rotationBetween(q, qo, this.qy, qo, f, 3, 1);
        const dx = f[3], dy = f[4], dz = f[5];
        f[3] = (Iw[0] * dx + Iw[1] * dy + Iw[2] * dz) * ih2;
        f[4] = (Iw[3] * dx + Iw[4] * dy + Iw[5] * dz) * ih2;
        f[5] = (Iw[6] * dx + Iw[7] * dy + Iw[8] * dz) * ih2;
        let gAng = 0;
        for (let e = first[i]; e < first[i + 1]; e++) {
          const s = this.sets[this.entrySet[e]], k = this.entryItem[e];
          s.evaluate(k, w, rows);
          const side = s.itemA[k] === i ? 0 : 1;
          const r0 = s.itemFirst[k], r1 = r0 + s.itemRows[k];
          for (let r = r0; r < r1; r++) {
            let F: number;
            if (rows.disc[r] === 1) {
              // a friction pair: both rows' forces held together in the disc |F| ≤ fmax[r]
              const F1 = rows.penalty[r] * (rows.C[r] - alpha * rows.C0[r]) + rows.lambda[r];
              const F2 = rows.penalty[r + 1] * (rows.C[r + 1] - alpha * rows.C0[r + 1]) + rows.lambda[r + 1];
              const len = Math.sqrt(F1 * F1 + F2 * F2), cap = rows.mu[r] * Math.abs(rows.force[rows.normalRow[r]]);
              const scale = len > cap ? (len > 0 ? cap / len : 0) : 1;
              // k JᵀJ stays while sliding (the demos'): dropped, the box never came to rest (the full
              // μ|F_n| each iteration overshoots the stop), kept, a stiff k (β 1e8) holds it back a
              // little each iteration (a slid 1000 kg box ran 22 % too far at β 1e8; 1 % at 1e6)
              this.stamp(r, side, F1 * scale, rows.penalty[r]);
              this.stamp(r + 1, side, F2 * scale, rows.penalty[r + 1]);
              r++;
              continue;
            }
            const hard = rows.stiffness[r] === Infinity;
            const free = rows.penalty[r] * (rows.C[r] - alpha * rows.C0[r]) + (hard ? rows.lambda[r] : 0);
            F = Math.min(Math.max(free, rows.fmin[r]), rows.fmax[r]);
            rows.force[r] = F;
            // k JᵀJ stays in the Hessian while the force is clamped (as the demos keep it: it damps the
            // step of a one-sided row switching on and off, which would otherwise chatter), except on a
            // row that carries no force at all (clamped, λ = 0: a slack rope, a contact still apart),
            // which so adds nothing to the body's step
            this.stamp(r, side, F, F === free || rows.lambda[r] !== 0 ? rows.penalty[r] : 0);
            gAng += Math.abs(F) * rows.curvature[2 * r + side];
          }
        }
        // lumped geometric stiffness (§3.5) on the angular diagonal
        H[21] += gAng; H[28] += gAng; H[35] += gAng;
        solveLdlt6(H, f);
        x[p] -= f[0];
        x[p + 1] -= f[1];
        x[p + 2] -= f[2];
        turn(q, qo, -f[3], -f[4], -f[5], 1);
      }
    }
  }

  /** Adds row r's force F on `side` to the body's system: f += Jᵀ F (eq. 13), H += k J Jᵀ (eq. 17). */
  private stamp(r: number, side: number, F: number, k: number): void {
    const rows = this.rows, J = rows.J, H = this.H, f = this.f;
    const o = JACOBIAN_STRIDE * r + 6 * side;
    for (let a = 0; a < 6; a++) {
      const ja = J[o + a];
      if (ja === 0) continue;
      f[a] += ja * F;
      const kja = k * ja;
      for (let b = 0; b < 6; b++) H[6 * a + b] += kja * J[o + b];
    }
  }

  /** The dual update of every row (eqs. 11, 16), at the poses after the primal pass. */
  private dual(alpha: number): void {
    const rows = this.rows, o = this.options;
    for (const s of this.sets)
      for (let k = 0; k < s.itemCount; k++) {
        s.evaluate(k, this.w, rows);
        const r0 = s.itemFirst[k], r1 = r0 + s.itemRows[k];
        for (let r = r0; r < r1; r++) {
          const kmax = Math.min(o.penaltyMax, rows.stiffness[r]);
          if (rows.disc[r] === 1) {
            const C1 = rows.C[r] - alpha * rows.C0[r], C2 = rows.C[r + 1] - alpha * rows.C0[r + 1];
            let l1 = rows.penalty[r] * C1 + rows.lambda[r], l2 = rows.penalty[r + 1] * C2 + rows.lambda[r + 1];
            const len = Math.sqrt(l1 * l1 + l2 * l2), cap = rows.mu[r] * Math.abs(rows.lambda[rows.normalRow[r]]);
            const inside = len < cap;
            if (!inside) {
              const sc = len > 0 ? cap / len : 0;
              l1 *= sc;
              l2 *= sc;
            }
            rows.lambda[r] = l1;
            rows.lambda[r + 1] = l2;
            // one penalty for the pair, ramped by the slip's length: the disc stays a disc (isotropic)
            if (inside) rows.penalty[r] = rows.penalty[r + 1] = Math.min(Math.max(rows.penalty[r], rows.penalty[r + 1]) + rows.beta[r] * Math.sqrt(C1 * C1 + C2 * C2), kmax);
            r++;
            continue;
          }
          const Cs = rows.C[r] - alpha * rows.C0[r];
          const hard = rows.stiffness[r] === Infinity;
          const l = Math.min(Math.max(rows.penalty[r] * Cs + (hard ? rows.lambda[r] : 0), rows.fmin[r]), rows.fmax[r]);
          rows.lambda[r] = l;
          if (l > rows.fmin[r] && l < rows.fmax[r]) rows.penalty[r] = Math.min(rows.penalty[r] + rows.beta[r] * Math.abs(Cs), kmax);
        }
      }
  }

  cost(): SolverCost {
    return { rowSolvesPerFrame: this.rows.count * this.options.iterations * this.options.substeps };
  }
}

/**
 * The part of a row's starting value C(x⁻) that violates it (what eq. 18's α keeps): all of it for an
 * equality; for a one-sided row only the side its force pushes against (F ≤ 0 pushes C up, so C < 0
 * is the violation; F ≥ 0, C > 0).
 */
function violation(C: number, fmin: number, fmax: number): number {
  if (fmax === 0 && fmin < 0) return Math.min(C, 0);
  if (fmin === 0 && fmax > 0) return Math.max(C, 0);
  if (fmin === 0 && fmax === 0) return 0;
  return C;
}

const rotationScratch = new Float64Array(9);

/** out (row-major 3×3) = R(q) I_local R(q)ᵀ, the world inertia. */
function worldInertia(q: Float64Array, o: number, I: Float64Array, io: number, out: Float64Array): void {
  const x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
  const R0 = 1 - 2 * (y * y + z * z), R1 = 2 * (x * y - z * w), R2 = 2 * (x * z + y * w);
  const R3 = 2 * (x * y + z * w), R4 = 1 - 2 * (x * x + z * z), R5 = 2 * (y * z - x * w);
  const R6 = 2 * (x * z - y * w), R7 = 2 * (y * z + x * w), R8 = 1 - 2 * (x * x + y * y);
  const R = rotationScratch;
  R[0] = R0; R[1] = R1; R[2] = R2; R[3] = R3; R[4] = R4; R[5] = R5; R[6] = R6; R[7] = R7; R[8] = R8;
  for (let a = 0; a < 3; a++)
    for (let b = 0; b < 3; b++) {
      let sum = 0;
      for (let c = 0; c < 3; c++) for (let d = 0; d < 3; d++) sum += R[3 * a + c] * I[io + 3 * c + d] * R[3 * b + d];
      out[3 * a + b] = sum;
    }
}
