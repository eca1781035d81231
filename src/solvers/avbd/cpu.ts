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
 * A one-sided row clamped with λ = 0 (a slack rope, a contact apart in the iterate) leaves its k out of
 * H_i; where the step lands such a row active, the step is taken again with that row's active piece in
 * eqs. 13 and 17 (primal: a body pushed hard must not cross a row it had lifted off with nothing resisting).
 * G_i the lumped geometric stiffness of §3.5 (|F_r| times the row's curvature, forces.ts). The
 * orientation part of x_i − y_i is the rotation vector of q_i q_y⁻¹, M_i's the world inertia
 * R I Rᵀ, and a step Δθ turns q ← normalise(q − ½ (Δθ, 0) ⊗ q).
 * Then the dual update per row (augmented Lagrangian):
 *   λ_r ← clamp(k_r C*_r + λ_r, fmin, fmax)                                               (eq. 11)
 *   k_r ← min(k_r + β_r |C*_r|, k_max,r, stiffness_r)   while fmin < λ_r < fmax          (eq. 16)
 * The penalty schedule, scale-free (option avbdRelative 1, the default). Eq. 16's β is in N/m² (N·m/rad²
 * on an angular row), k_min, k_max in N/m: the paper notes that their right size follows the scene's
 * units and masses, so one number cannot fit a 1 kg bead and a 26 t ball. What k competes with is the
 * body's own term in eq. 17: with one row on a body of effective mass m along it, the primal step leaves
 * C = (λ* − λ)/(s + k), s = m/h², and the dual step (eq. 11) leaves λ* − λ reduced by s/(s + k) =
 * 1/(1 + k̂), k̂ = k/s. So the schedule is kept in k̂, per row and per frame:
 *   s_r = m_r / h²,  m_r = (M_isl / m_i) / (J_i M_i⁻¹ J_iᵀ)  the heavier side i of the row     (bodyStiffness)
 *   k ∈ [k̂_min s_r, k̂_max s_r] (eq. 19's clamp),   k += β̂ s_r |C*| / ρ_r   (eq. 16, β = β̂ s_r / ρ_r)
 * with M_isl the heaviest body of the row's island (the dynamic bodies its rows join this frame) and ρ_r
 * that side's radius of gyration √(tr I / 2m) on a linear row, 1 on an angular one: β̂ ramps k̂ by β̂
 * per unit of error relative to the body's size (a rotation θ moves the body's points by about ρ θ, so
 * |C|/ρ and θ are the same measure). M_isl / m_i carries the load path: a light bead holding a heavy
 * ball carries the ball's load, and its λ converges only at the ball's rate (the 50,000 : 1 pendulum
 * stretched 19 cm with the bead's own mass, 1.3 mm with the ball's). Defaults: k̂_min 1 (a row's first
 * dual step halves its force error), k̂_max 1e4, β̂ 100: at β̂ 30 a two-box cantilever's weld turns 6.5
 * mrad (test limit 5), at 300 and 1000 `hanging-chain` gains 8 % and 9 % energy in 10 s (100: 0.1 %).
 * Substeps on contact scenes follow the smallest body (avbdContactSubsteps), the one ratio left: how
 * far a body falls in a step against its size. The paper's form (avbdRelative 0): β_lin, β_ang,
 * k_min, k_max as given, in SI.
 * Hard rows (stiffness ∞) carry λ; soft rows (a joint's own compliance α_j: stiffness 1/α_j) use
 * λ = 0, their k capped at the stiffness, a spring.
 * Stabilisation (eq. 18): C*(x) = C(x) − α C(x⁻), of C(x⁻) only the part that violates the row
 * (an equality's all of it; a one-sided row's only an overlap, so a slack rope or a contact that is
 * still apart is not pulled shut). So an overlap left after a step is removed at 1 − α = 1 % a frame (an
 * 11.4 cm one in `rain` count=200 seed 1 went to 8.1 cm over 32 frames, 0.99³² = 0.72). A smaller α
 * or post-stabilisation recovers faster but does not hold a pile at rest (600 frames, sleep 0, from
 * frame 60, measured): α 0.95 and 0.9 let the base-10 pyramid jitter (Σ ½ v² per unit mass up to 1e-4
 * and 6e-4 against 1e-9 at 0.99), and post-stabilisation walks the 10-box stack 10 mm and brings the
 * pyramid down (61 mm). The pyramid has contacts only, so α on the contact rows alone fares the same.
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
 * Stages (solvers/stages.ts): collide · prepare contacts (· restitution) · colour bodies · warm start ·
 * inertial target · primal · dual · update velocities (· post-stabilise) · store impulses.
 *
 * Restitution (where some body has e > 0; the paper has none: its implicit Euler step is inelastic, a
 * hard contact stops the approach within the step). Newton's impact law, v_n⁺ = −e ṽ_n, at each point
 * approaching at the step's start faster than --restitution-threshold whose gap s₀ closes within the
 * step (s₀ + h ṽ_n < 0, ṽ_n = J_n V⁻ from the velocities the step starts from), by the shared contact
 * solver's collision propagation (contacts/contact-solver.ts restitution; Guendelman, Bridson & Fedkiw
 * 2003; rows/block-solver.ts applyRestitution derives it): per point an impulse P ≥ 0 along J_nᵀ,
 *   P ← max(0, P + (−e ṽ_n − J_n V) / A_nn),   V += M⁻¹ J_nᵀ ΔP,
 * manifold after manifold, swept until none collides, so a strike passes down a touching row (the cradle).
 * It acts on V⁻ before the inertial target, not after the solve (Box2D v3's restitution stage after
 * relax; Müller et al. 2020 §3.6's Δv_n = −v_n + max(−e ṽ_n, 0) after the projection): AVBD's velocity
 * is the step's motion, v = (x − x⁻)/h, so V⁺ enters y = x + h V⁺ + h² g and the step moves the bodies
 * by it (the bounced body then leaves the ground at −e ṽ_n + h g_n, the velocity solvers' figure). A
 * pass after the step would meet the cradle already moving as one (the hard contacts pushed the row
 * along inelastically, every ball at v/5), where each point's own target −e ṽ_n cannot be met one
 * collision after another; imposing all of them at once (relative speed v at every contact of the row,
 * momentum m v) throws the first ball back at −9v/5. xpbd-cpu does the same collision on its
 * predicted velocities and then replaces the projection's impulse by it (xpbd/contacts.ts collide).
 * A world without a bounce never runs the stage: its steps are bit for bit the same. No sleeping.
 *
 * Invariants: a row's C, J are evaluated afresh (evaluate) wherever they are read; C0, bounds,
 * stiffness, β are fixed for the frame; λ and k persist across frames for joints (by slot) and
 * contacts (by their persistent manifold point, contacts.ts).
 */
import { leastHalfSize, type WorldDesc } from '../../model/world.js';
import { forEachBody } from '../../model/packed.js';
import { defaultSolverOptions } from '../solver.js';
import { CpuSolverBase } from '../cpu-base.js';
import type { SolverCost, SolverOptions } from '../solver.js';
import { AvbdRows, JointForces, type AvbdConstraintSet } from './forces.js';
import { BodyColouring, ParallelBodyColouring } from '../../model/body-colouring.js';
import { solveLdlt6 } from '../../math/ldlt6.js';
import { JACOBIAN_STRIDE } from '../../rows/rows.js';
import { SolverFailure } from '../../model/failure.js';
import { ContactForces } from './contacts.js';
import { turn, rotationBetween } from './rotation.js';
import { ContactSolver } from '../../contacts/contact-solver.js';
import { baumgarteContacts, type ContactRule } from '../../rows/block-solver.js';

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
  /** the body colouring: greedy largest-first (BodyColouring, the default), or avbd-gpu's parallel colouring (its CPU twin ParallelBodyColouring, for the twin tests) */
  private readonly colouring: BodyColouring | ParallelBodyColouring;
  /** per body: the pose at the frame's start, the inertial target, the last frame's velocity */
  private readonly x0: Float64Array;
  private readonly q0: Float64Array;
  private readonly y: Float64Array;
  private readonly qy: Float64Array;
  private readonly vPrev: Float64Array;
  private readonly H = new Float64Array(36);
  private readonly f = new Float64Array(6);
  private readonly Iw = new Float64Array(9);
  /** H and f before the solve, and the body's slack rows (row, side), for the step taken again where it lands one active (primal) */
  private readonly H1 = new Float64Array(36);
  private readonly f1 = new Float64Array(6);
  private slack = new Int32Array(64);
  private slackCount = 0;
  /**
   * restitution (header): the shared contact solver's records and its collision propagation
   * (contacts/contact-solver.ts restitution), made only where some body has e > 0 (null otherwise: the
   * stage is not run, and a world without a bounce steps exactly as before)
   */
  private readonly collisions: ContactSolver | null = null;
  private readonly collisionRule: ContactRule | null = null;

  constructor(world: WorldDesc, options: Partial<SolverOptions>, variant: { colouring?: 'greedy' | 'parallel' } = {}) {
    super(world, { ...options, sleep: 0 });
    this.colouring = variant.colouring === 'parallel' ? new ParallelBodyColouring() : new BodyColouring();
    const n = this.w.bodyCount;
    this.x0 = new Float64Array(3 * n);
    this.q0 = new Float64Array(4 * n);
    this.y = new Float64Array(3 * n);
    this.qy = new Float64Array(4 * n);
    this.vPrev = this.w.linearVelocity.slice();
    this.jointForces = new JointForces(this.joints);
    this.contactForces = this.collision ? new ContactForces() : null;
    this.sets = this.contactForces ? [this.jointForces, this.contactForces] : [this.jointForces];
    if (this.collision && this.collision.restitution.some((e) => e > 0)) {
      this.collisions = new ContactSolver();
      // the twin of avbd-gpu sweeps the manifolds in its colour order (cs_restitution's), as softstep's twins do
      this.collisions.colourOrder = variant.colouring === 'parallel';
      // only the records' masses, normals, arms and s₀ are read (restitution): no spring, no slop, no λ
      this.collisionRule = baumgarteContacts(0, this.options.restitutionThreshold);
    }
  }

  /** avbd-cpu solves contacts (contacts.ts): found once per frame, linearised about its start. */
  protected override solvesContacts(): boolean {
    return true;
  }

  override get stageNames(): readonly string[] {
    return [...(this.collision ? ['collide', 'prepare contacts'] : []), ...(this.collisions ? ['restitution'] : []), 'colour bodies', 'warm start', 'inertial target', 'primal', 'dual', 'update velocities', ...(this.options.postStabilize === 1 ? ['post-stabilise'] : []), ...(this.collision ? ['store impulses'] : [])];
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
      const cs = this.collisions;
      if (cs) {
        // --- restitution: collision propagation on the velocities the step starts from (header) ---
        // per point approaching faster than the threshold whose gap closes within h (s₀ + h ṽ_n < 0):
        // v_n → −e ṽ_n (Newton's impact law) by P ← max(0, P + (−e ṽ_n − J_n V)/A_nn), V += M⁻¹ J_nᵀ ΔP,
        // swept until none collides (Guendelman et al. 2003; contacts/contact-solver.ts restitution)
        this.worldInverseInertia();
        cs.prepare(list, null, x, q, inv, this.invInertiaWorld, h, this.collisionRule!, 0);
        cs.restitution(v, om, h, o.restitutionThreshold, null);
        t = clock.lap('restitution', t);
      }
      this.buildGraph();
    }
    t = clock.lap('colour bodies', t);

    // --- warm start of the duals (eq. 19) and the error each row starts the frame with (eq. 18) ---
    const post = o.postStabilize === 1;
    const lambdaDecay = post ? 1 : o.avbdAlpha * o.avbdGamma; // post-stabilisation keeps λ whole (2-D demo)
    const relative = o.avbdRelative === 1;
    if (relative) {
      this.worldInverseInertia();
      this.islandMasses();
    }
    for (const s of this.sets)
      for (let k = 0; k < s.itemCount; k++) {
        s.evaluate(k, w, rows);
        const r0 = s.itemFirst[k];
        for (let r = r0; r < r0 + s.itemRows[k]; r++) {
          rows.C0[r] = violation(rows.C[r], rows.fmin[r], rows.fmax[r]);
          let kmin = o.penaltyMin, kmax = o.penaltyMax;
          if (relative) {
            // the scale-free schedule (header): k_min, k_max and β in units of the row's body stiffness s
            const sr = this.bodyStiffness(r, s.itemA[k], s.itemB[k], h);
            kmin = o.penaltyMinRelative * sr;
            kmax = o.penaltyMaxRelative * sr;
            rows.beta[r] = (o.betaRelative * sr) / this.rowLength;
          }
          rows.kmax[r] = Math.min(kmax, rows.stiffness[r]);
          rows.lambda[r] *= lambdaDecay;
          rows.penalty[r] = Math.min(Math.max(rows.penalty[r] * o.avbdGamma, kmin), rows.kmax[r]);
        }
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
    if (contacts) for (let i = 0; i < n; i++) if (inv[i] !== 0) contacts.bodyMoved(i, w);
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
            if (rows.disc[r] !== 0) {
              // a friction pair: both rows' forces held together in the disc |F| ≤ fmax[r]
              const F1 = rows.penalty[r] * (rows.C[r] - alpha * rows.C0[r]) + rows.lambda[r];
              const F2 = rows.penalty[r + 1] * (rows.C[r + 1] - alpha * rows.C0[r + 1]) + rows.lambda[r + 1];
              const len = Math.sqrt(F1 * F1 + F2 * F2), cap = rows.mu[r] * Math.abs(rows.force[rows.normalRow[r]]);
              const scale = len > cap ? (len > 0 ? cap / len : 0) : 1;
              // The Hessian of a pair that slides (disc 2: it did not stick at the frame's start) is its
              // secant stiffness s·k, the k of the spring that gives the clamped force F = s (k C* + λ).
              // The demos keep all of k while sliding, which divides each step by (M/h² + k) / (M/h²)
              // although the force no longer grows with the slip: a stiff k held a sliding box back (a
              // 1000 kg box ran 16-22 % too far at β_lin 1e8; with the secant 2.7 %, the time step's
              // v h/2); k dropped (the exact derivative along the slip, 0) lets the full μ|F_n| act each
              // iteration and overshoot the stop (it never came to rest). The secant is k as the slip
              // falls back inside the disc (s = 1) and fades to 0 as it outgrows it: the step is the
              // spring's minimiser, which cannot pass the point where the friction falls inside the disc.
              // A pair that stuck at the frame's start (disc 1) keeps k while an iteration clamps it: its
              // clamping is a transient of the iteration, and the stiffness damps it (the yawed 10-box
              // stack swayed 16 mm with the secant there, 8.5 mm without).
              const slip = rows.disc[r] === 2 ? scale : 1;
              this.stamp(r, side, F1 * scale, rows.penalty[r] * slip);
              this.stamp(r + 1, side, F2 * scale, rows.penalty[r + 1] * slip);
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
            // which so adds nothing to the body's step, unless the step lands it active (below)
            const keep = F === free || rows.lambda[r] !== 0;
            this.stamp(r, side, F, keep ? rows.penalty[r] : 0);
            if (!keep && rows.penalty[r] > 0) {
              if (this.slackCount * 2 + 2 > this.slack.length) {
                const grown = new Int32Array(2 * this.slack.length);
                grown.set(this.slack);
                this.slack = grown;
              }
              this.slack[2 * this.slackCount] = r;
              this.slack[2 * this.slackCount + 1] = side;
              this.slackCount++;
            }
            gAng += Math.abs(F) * rows.curvature[2 * r + side];
          }
        }
        // lumped geometric stiffness (§3.5) on the angular diagonal
        H[21] += gAng; H[28] += gAng; H[35] += gAng;
        if (this.slackCount > 0) {
          this.H1.set(H);
          this.f1.set(f);
        }
        solveLdlt6(H, f);
        // A slack row left out of H is one piece of a piecewise energy (½ k C*² where k C* + λ is inside
        // the bounds, 0 where clamped with λ = 0): eq. 4's Newton step on the slack piece ignores it, and
        // a step that crosses it lands the row active with nothing resisting: the step is as long as the
        // other rows' force over M/h² alone. Measured (rain count=200 seed 1, frame 38): a 9.7 kg capsule
        // whose two ground rows had lifted 5.8 cm apart in the iterate took one step of 16.8 cm down under a
        // transient 2.2e6 N from the sphere above it and ended 23.8 cm into the ground. So where the step
        // lands a slack row active (k (C* − J Δ) inside its bounds), the step is taken again with that row's
        // active piece (eqs. 13, 17 for it: f += Jᵀ k C*, H += k JᵀJ): Newton on the piece the step lands
        // in, which along one row leaves C*_new = s/(s + k) of the crossing the slack step made (s = M/h²),
        // the row's own step at k. A row the step does not cross keeps the slack step bit for bit.
        if (this.slackCount > 0) {
          let added = 0;
          for (let e = 0; e < this.slackCount; e++) {
            const r = this.slack[2 * e], side = this.slack[2 * e + 1];
            const o = JACOBIAN_STRIDE * r + 6 * side;
            // C* after the step x ← x − Δ, to first order: C* − J Δ
            let Cs = rows.C[r] - alpha * rows.C0[r];
            for (let a = 0; a < 6; a++) Cs -= rows.J[o + a] * f[a];
            const k = rows.penalty[r], after = k * Cs;
            if (!(after > rows.fmin[r] && after < rows.fmax[r])) continue;
            // the step lands the row active: Newton on that piece (its force k C* at x, λ = 0; H += k JᵀJ)
            if (added === 0) H.set(this.H1);
            added++;
            const J = rows.J, F0 = k * (rows.C[r] - alpha * rows.C0[r]);
            for (let a = 0; a < 6; a++) {
              const ja = J[o + a];
              if (ja === 0) continue;
              this.f1[a] += ja * F0;
              for (let b = 0; b <= a; b++) H[6 * a + b] += k * ja * J[o + b];
            }
          }
          this.slackCount = 0;
          if (added > 0) {
            f.set(this.f1);
            solveLdlt6(H, f);
          }
        }
        x[p] -= f[0];
        x[p + 1] -= f[1];
        x[p + 2] -= f[2];
        turn(q, qo, -f[3], -f[4], -f[5], 1);
        if (this.contactForces) this.contactForces.bodyMoved(i, w);
      }
    }
  }

  /** Adds row r's force F on `side` to the body's system: f += Jᵀ F (eq. 13), H += k J Jᵀ (eq. 17, its lower triangle). */
  private stamp(r: number, side: number, F: number, k: number): void {
    const rows = this.rows, J = rows.J, H = this.H, f = this.f;
    const o = JACOBIAN_STRIDE * r + 6 * side;
    for (let a = 0; a < 6; a++) {
      const ja = J[o + a];
      if (ja === 0) continue;
      f[a] += ja * F;
      // the lower triangle only: the LDLᵀ solve (math/ldlt6.ts) reads no more of the symmetric H
      const kja = k * ja;
      for (let b = 0; b <= a; b++) H[6 * a + b] += kja * J[o + b];
    }
  }

  /** The dual update of every row (eqs. 11, 16), at the poses after the primal pass. */
  private dual(alpha: number): void {
    const rows = this.rows;
    for (const s of this.sets)
      for (let k = 0; k < s.itemCount; k++) {
        s.evaluate(k, this.w, rows);
        const r0 = s.itemFirst[k], r1 = r0 + s.itemRows[k];
        for (let r = r0; r < r1; r++) {
          const kmax = rows.kmax[r];
          if (rows.disc[r] !== 0) {
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

  /** per body: the world inverse inertia R I⁻¹ Rᵀ at the frame's start (row-major 3×3), for bodyStiffness */
  private invInertiaWorld = new Float64Array(0);
  /** the length ρ of the row bodyStiffness last measured (m, or 1 rad on an angular row) */
  private rowLength = 1;

  /** union-find over the dynamic bodies joined by any row this frame, and each island's greatest mass */
  private parent = new Int32Array(0);
  private islandMass = new Float64Array(0);

  private find(i: number): number {
    const p = this.parent;
    while (p[i] !== i) {
      p[i] = p[p[i]];
      i = p[i];
    }
    return i;
  }

  private islandMasses(): void {
    const n = this.w.bodyCount, inv = this.w.inverseMass;
    if (this.parent.length < n) {
      this.parent = new Int32Array(n);
      this.islandMass = new Float64Array(n);
    }
    for (let i = 0; i < n; i++) this.parent[i] = i;
    for (const s of this.sets)
      for (let k = 0; k < s.itemCount; k++) {
        const a = s.itemA[k], b = s.itemB[k];
        if (inv[a] === 0 || inv[b] === 0) continue; // a fixed body carries no load onward
        const ra = this.find(a), rb = this.find(b);
        if (ra !== rb) this.parent[ra] = rb;
      }
    this.islandMass.fill(0, 0, n);
    for (let i = 0; i < n; i++) if (inv[i] > 0) {
      const r = this.find(i);
      this.islandMass[r] = Math.max(this.islandMass[r], this.w.mass[i]);
    }
  }

  private worldInverseInertia(): void {
    const w = this.w, n = w.bodyCount;
    if (this.invInertiaWorld.length < 9 * n) this.invInertiaWorld = new Float64Array(9 * n);
    for (let i = 0; i < n; i++) {
      worldInertia(w.orientation, 4 * i, w.inverseInertiaLocal, 9 * i, this.Iw);
      this.invInertiaWorld.set(this.Iw, 9 * i);
    }
  }

  /**
   * Row r's body stiffness s = m_eff / h² (N/m, or N·m/rad on an angular row): the heavier of its two
   * bodies as the row sees it, m_side = 1 / (J_v² / m + J_ωᵀ I⁻¹ J_ω) from that side's J alone. It is
   * what the row's penalty competes with in that body's Hessian H = M/h² + k JᵀJ (eq. 17): one dual step
   * (eq. 11) leaves 1/(1 + k/s) of the force's error, so k̂ = k/s is the schedule's natural unit (header).
   * The heavier side, not the reduced mass: a light body between stiff rows moves with them at any k̂ ≥ 1,
   * while the heavy one moves only by (λ* − λ)/(s + k) per iteration, so its s is the one k must reach
   * (the mass-ratio pendulum: the 26 t ball, not the 0.52 kg bead). Also sets rowLength: that body's
   * radius of gyration ρ = √(tr I / 2m) on a linear row (the size against which an error is small or
   * large), 1 on an angular row.
   */
  private bodyStiffness(r: number, a: number, b: number, h: number): number {
    const w = this.w, J = this.rows.J, inv = w.inverseMass, Ii = this.invInertiaWorld;
    let best = 0, length = 1, angular = true;
    for (let side = 0; side < 2; side++) {
      const i = side === 0 ? a : b;
      if (inv[i] === 0) continue;
      const o = JACOBIAN_STRIDE * r + 6 * side;
      const lin = J[o] * J[o] + J[o + 1] * J[o + 1] + J[o + 2] * J[o + 2];
      if (lin > 0) angular = false;
      let ang = 0;
      for (let u = 0; u < 3; u++) {
        let t = 0;
        for (let v = 0; v < 3; v++) t += Ii[9 * i + 3 * u + v] * J[o + 3 + v];
        ang += J[o + 3 + u] * t;
      }
      const wSide = lin * inv[i] + ang;
      if (!(wSide > 0)) continue;
      // the body's effective mass along the row, carried to the heaviest body its load path holds
      const m = this.islandMass[this.find(i)] * inv[i] / wSide;
      if (m > best) {
        best = m;
        const I = w.inertiaLocal;
        length = Math.sqrt(((I[9 * i] + I[9 * i + 4] + I[9 * i + 8]) * inv[i]) / 2);
      }
    }
    this.rowLength = angular || !(length > 0) ? 1 : length;
    return best / (h * h);
  }

  cost(): SolverCost {
    return { rowSolvesPerFrame: this.rows.count * this.options.iterations * this.options.substeps };
  }
}

/** the most of its smallest body's edge that one step's free fall g h² may be, on a contact scene */
export const FALL_PER_STEP = 0.03;

/**
 * avbd-cpu's substeps on a contact scene: enough that one step's free fall g h² is at most
 * FALL_PER_STEP (3 %) of the smallest dynamic body's edge 2ℓ, n = ⌈√(g (dt)² / (0.03 · 2ℓ))⌉ ≥ 1 at the
 * default dt. The scale-free penalties (header) make the solve the same at every size but this one
 * ratio: how far a body falls in a step against its size. A 1 m box falls 0.27 % of itself per 1/60 s
 * step, a 1 cm cube 27 %, and 10 iterations of block descent do not lift a column of three such cubes
 * back out of the ground (measured at one step: the top one sank 63 % of its edge into the one below;
 * at 4 substeps, none). 1 for bodies of 9 cm and up, so the paper's scenes keep one step per frame.
 */
export function avbdContactSubsteps(world: WorldDesc): number {
  let least = Infinity;
  forEachBody(world.bodies, (_, proto) => {
    if (!proto.fixed) least = Math.min(least, leastHalfSize(proto.shape));
  });
  const g = Math.hypot(...(world.gravity ?? [0, 0, 0]));
  const h = defaultSolverOptions.dt;
  if (!(least > 0 && Number.isFinite(least) && g > 0)) return 1;
  return Math.max(1, Math.ceil(Math.sqrt((g * h * h) / (FALL_PER_STEP * 2 * least))));
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
