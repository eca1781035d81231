/**
 * xpbd-cpu — the f64 reference of the XPBD point-constraint solver (Müller et al.
 * 2020, "Detailed Rigid Body Simulation with Extended Position Based Dynamics",
 * as summarised in shared/seeds/starframe-solving-constraints.md, "XPBD"). Same
 * stages, same names as the WGSL kernels in kernels.wgsl.ts (xpbd-gpu).
 *
 * One frame = `substeps` steps of h = dt / substeps; one step:
 *   1. integrate          x_prev = x, q_prev = q; for dynamic bodies: v += h g; x += h v;
 *                         q += ½ h (0, ω) ⊗ q, normalise.  λ = 0 (XPBD restarts λ each step)
 *   2. N × for each colour c (in order): solve_colour c: for each constraint ℓ of colour c
 *        p₁ = x₁ + r₁, p₂ = x₂ + r₂ (rᵢ = Rᵢ rⁱ, the lever arms),  d = p₁ − p₂
 *        then one XPBD update  Δλ = (−C − α̃ λ) / (∇C M⁻¹ ∇Cᵀ + α̃),  α̃ = α / h²  (the text's Δλ)
 *        in one of two forms (XpbdVariant.form):
 *        'point' (default): C = d, three rows solved as one 3×3 block, λ ∈ R³:
 *            K = A₁ + A₂ + α̃ I₃,  Aᵢ = mᵢ⁻¹ I₃ − [rᵢ]× Iᵢ⁻¹ [rᵢ]×   (∇C M⁻¹ ∇Cᵀ of p₁ − p₂)
 *            Δλ = −K⁻¹ (d + α̃ λ),  p = Δλ
 *        'distance' (Müller 2020 §3.3.1 as the text gives it): C = |d|, n = d / C, one row:
 *            wᵢ = mᵢ⁻¹ + (rᵢ × n)ᵀ Iᵢ⁻¹ (rᵢ × n),  Δλ = (−C − α̃ λ) / (w₁ + w₂ + α̃),  p = Δλ n
 *        (the 'point' form of a point joint runs solvePoints, its block written out from the lever arms:
 *        no J, no generic Delassus or block inverse per substep; every other joint runs solveRows)
 *        both:  λ += Δλ;  x₁ += p / m₁,  x₂ −= p / m₂;
 *               q₁ += ½ (0, I₁⁻¹ (r₁ × p)) ⊗ q₁,  q₂ −= ½ (0, I₂⁻¹ (r₂ × p)) ⊗ q₂, normalise
 *      then (collisions on, points found) the contacts, manifold after manifold (xpbd/contacts.ts:
 *      normal projection with compliance 0, static friction on the position level)
 *   3. update_velocities  v = (x − x_prev) / h;  ω = 2 Δq_v / (h Δq_w), Δq = q q_prev⁻¹ (the exact
 *                         inverse of integrate's orientation update, below);
 *                         v ← v · max(0, 1 − μ_lin h),  ω ← ω · max(0, 1 − μ_ang h)
 *      then the contacts' velocity pass (restitution, dynamic friction; xpbd/contacts.ts)
 *   (joint-only worlds: 3 of one substep and 1 of the next run as one loop over the bodies, `advance`,
 *   each body taking the arithmetic of both passes in their order: the same bits, one sweep fewer)
 * Contacts are found once per frame, at its start (speculative margin for dt). With collisions off
 * (or fewer than two bodies) there is no pipeline and none of the contact code runs: joint-only
 * scenes step to the same bits as before contacts were added.
 * Body 1 = ib0, body 2 = ib1 (r¹ = 0 and m⁻¹ = 0 for a world anchor); Iᵢ⁻¹ = Rᵢ I_local⁻¹ Rᵢᵀ
 * at the current orientation.
 *
 * Why 'point' is the default. Both forms hold the same joint (d = 0 ⇔ |d| = 0) and, with
 * compliance, the same spring (energy ½ |d|²/α either way, force d/α). But one 'distance'
 * update maps d ↦ d − (|d|² / dᵀKd) K d (K = A₁ + A₂, linearised): the part of d along an
 * eigenvector of K with eigenvalue a is multiplied by 1 − a / (dᵀKd/|d|²). In a hanging
 * chain d is mostly the sag along the lever arm, the direction of least mobility
 * a∥ = Σ mᵢ⁻¹; the sideways mobility of a sphere held at its surface is
 * a⊥ = Σ (mᵢ⁻¹ + r² Iᵢ⁻¹) = 3.5 a∥ (I = 0.4 m r²), so a sideways offset is multiplied by
 * 1 − 3.5 = −2.5 each substep: any rounding error grows and flips sign until it is as large
 * as the sag, and the beads rattle (spin of ~ a⊥/a∥ · g h / r ≈ 1 rad/s at rest). The
 * 'point' update maps d ↦ d − K K⁻¹ d = 0: no such factor. test/xpbd.test.ts shows both.
 *
 * ω from the orientation (update_velocities). Müller et al. 2020 (Alg. 2, the velocity update
 * after the solve, and eq. 8, the orientation update) take ω ← 2 [q q_prev⁻¹]_xyz / h, negated
 * if Δq_w < 0. That is the inverse of the update only to first order: integrate's
 * q ← normalise(q + ½h (0, ω) ⊗ q) = normalise((1, ½hω) ⊗ q) (quat.ts: the Cayley map) turns by
 *   Δq = q q_prev⁻¹ = (½hω, 1) / √(1 + ¼h²|ω|²),
 * so 2 Δq_v / h returns ω / √(1 + ¼h²|ω|²): every substep takes the fraction ≈ ¼h²|ω|² of the
 * rotational energy (a sphere at 20 rad/s, h = 1/600 s: 2.8e-4 at first, 63 % in 10 s; a sphere
 * rolling at 7 rad/s: v fell 3 % in 10 s). The exact inverse is Δq_v / Δq_w = ½hω:
 *   ω = 2 Δq_v / (h Δq_w)
 * (−Δq gives the same ω, so the double cover needs no sign test, and a common scale of q and
 * q_prev — their norms' rounding — cancels). It inverts every rotation the substep made the same
 * way, the projection's ½(0, θ) ⊗ q included. Spheres take it here; every other shape (boxes,
 * capsules: I⁻¹_world = R I⁻¹_local Rᵀ, with the gyroscopic midpoint step) takes the same inverse
 * in rigid/body.ts angularVelocityFromRotation, with the midpoint offset of a free body. A free
 * body then keeps ω (sphere) and its kinetic energy (every shape) to rounding (test/xpbd-rotation.test.ts).
 *
 * Invariants: within one colour no two constraints share a dynamic body
 * (colourConstraints), so solving them one after the other (here, along `order`)
 * or all at once (the GPU) gives the same result; colours run in order
 * (Gauss–Seidel across colours). Fixed bodies and world anchors (m⁻¹ = 0) are
 * never written. Rows per constraint: 3 ('point') or 1 ('distance', along n).
 *
 * Options: compliance α per constraint from complianceOf (0: a hard joint; α > 0:
 * a zero-rest-length spring of stiffness k = 1/α, f = d/α = λ/h²); linearDamping,
 * angularDamping as above. beta and warmStart are ignored: XPBD projects positions
 * (no Baumgarte term: the projection is the drift correction), and λ restarts at 0
 * every substep, which needs no warm start (the text: "it isn't helped by warm starting").
 * No external torques; the gyroscopic torque −ω × Iω of a non-isotropic body is the rigid-body
 * core's (rigid/body.ts), zero for spheres.
 */
import type { WorldDesc } from '../../model/world.js';
import { complianceOf } from '../../model/compiled.js';
import { colourConstraints, type Colouring } from '../../model/colouring.js';
import type { Solver, SolverOptions, SolverCost, ResidualCurve } from '../solver.js';
import { RigidBodyCore, dampingFactor } from '../../rigid/body.js';
import { integrateOrientation, rotate, rotateByQuat } from '../../rigid/quat.js';
import { CpuSolverBase } from '../cpu-base.js';
import { RowBlockSolver } from '../../rows/block-solver.js';
import { blockDelassus, invertBlock, JACOBIAN_STRIDE } from '../../rows/rows.js';
import { JointKind, jointKindNames } from '../../model/joint-data.js';
import { compliancePerStep } from '../../rows/softness.js';
import { XpbdContacts } from './contacts.js';
import { CONTACT_NORMAL_CHANNEL, FRICTION_CHANNEL } from '../jacobi/cpu.js';

/** What the XPBD solvers' residual curves hold (ResidualCurve.quantity). */
export const XPBD_RESIDUAL_QUANTITY =
  '‖(C(x) + α̃λ)/h²‖₂ over constraint rows, m/s² (XPBD equation residual; h²·r is the position error left); contacts: the normal rows\' and static friction\'s (α = 0), projected: a row at its bound whose residual points outward counts 0';

/**
 * 'distance' form only: a constraint whose |d| is below this (m) is left alone in a step,
 * as n = d/|d| is undefined at d = 0 (the 'point' form divides by nothing and needs no
 * such test). Safe in f64 and f32 alike: 1e-12 m is far below any violation that matters
 * (the tests measure mm and µm) and above f64 rounding of coordinates up to ~1 km
 * (ε·1e3 m ≈ 2e-13 m), so rounding noise does not pick a random n; in f32, |d|² ≥ 1e-24
 * is still a normal number (min 1.2e-38), so d/|d| stays accurate, and a nonzero f32 d is
 * a multiple of an ulp of the attachment points (≥ 1e-10 m for points ≥ 1 mm from the
 * origin), so in practice only an exact zero is skipped there. Skipping adds nothing: the
 * correction it would make is ≤ |d| in position.
 */
export const XPBD_MIN_DISTANCE = 1e-12;

/**
 * The stage of advance (joint-only worlds): update velocities of one substep and integrate positions of
 * the next, one loop over the bodies; the first substep's integration and the last one's velocity
 * update keep their own names. xpbd-gpu runs the two as their own kernels.
 */
export const ADVANCE_STAGE = 'update velocities + integrate positions';

export interface XpbdVariant {
  /** 'point': C = d, 3 rows as one block (default); 'distance': C = |d|, one row along n (see the header) */
  form: 'point' | 'distance';
}

export const defaultXpbdVariant: XpbdVariant = { form: 'point' };

/** Rows per constraint of a form: the three components of d, or the distance along n. */
export function xpbdRows(variant: XpbdVariant): number {
  return variant.form === 'point' ? 3 : 1;
}

export class XpbdCpuSolver extends CpuSolverBase implements Solver {
  readonly id = 'xpbd-cpu';
  readonly variant: XpbdVariant;
  colouring: Colouring;
  // per body
  readonly positionPrev: Float64Array; // x_prev (3)
  readonly orientationPrev: Float64Array; // q_prev (4)
  /** the body stages (rigid/body.ts) over this.w: gyroscopic term, orientation update, world inverse inertia */
  readonly rigid: RigidBodyCore;
  // per constraint (by constraint index)
  /** λ_ℓ (3; N·s²) of the 'distance' form of point joints: the scalar along n in [3ℓ] */
  private readonly distanceMultiplier: Float64Array;
  readonly compliance: Float64Array; // α_ℓ (m/N)
  /** every joint's rows (rows/): C, J, bounds, compliance; λ (N·s², position level) restarts each substep */
  readonly rowSolver: RowBlockSolver;
  /** world-frame I⁻¹ of the bodies of the constraint being solved (9 per body, written just before use) */
  private readonly inverseInertiaWorld: Float64Array;
  private rowScratch = new Float64Array(0);
  /** the contact projection and velocity pass (xpbd/contacts.ts); null when the world has no collisions */
  readonly contactSolver: XpbdContacts | null;

  constructor(world: WorldDesc, options: Partial<SolverOptions> = {}, variant: Partial<XpbdVariant> = {}) {
    super(world, options);
    this.variant = { ...defaultXpbdVariant, ...variant };
    const nb = this.w.bodyCount, nc = this.w.constraintCount;
    this.colouring = colourConstraints(this.w);
    this.positionPrev = new Float64Array(3 * nb);
    this.orientationPrev = new Float64Array(4 * nb);
    this.distanceMultiplier = new Float64Array(3 * nc);
    this.compliance = complianceOf(this.w, this.options.compliance);
    this.rigid = new RigidBodyCore(this.w, this.w); // bodies, and the constraints that make some of them jointed
    this.rowSolver = new RowBlockSolver(this.joints, nb, this.w.inverseMass, this.options.compliance);
    this.inverseInertiaWorld = new Float64Array(9 * nb);
    const n = this.rowSolver.rows.largestBlock();
    this.rowScratch = new Float64Array(2 * n * n + 2 * n);
    this.contactSolver = this.collision ? new XpbdContacts(world.bodies, this.w, this.rigid, this.options.restitutionThreshold) : null;
    if (this.sleeping) this.rigid.asleep = this.sleeping.asleep;
    if (this.collision) {
      // the manifolds' points carried while a pair barely moves (collision/manifolds.ts refresh; why a
      // refreshed record serves the position-level projection as well as a fresh one: xpbd/contacts.ts
      // "Manifolds"), and the contacts read from the records, not the contact rows' fields
      this.collision.coherence = true;
      this.collision.rowFields = false;
    }
  }

  /** Whether body ib moves in this step: dynamic and not asleep (collision/islands.ts). */
  private moves(ib: number): boolean {
    return this.w.inverseMass[ib] > 0 && !(this.sleeping !== null && this.sleeping.asleep[ib]);
  }

  /** xpbd-cpu solves contacts (xpbd/contacts.ts): found once per frame, projected every substep. */
  protected override solvesContacts(): boolean {
    return true;
  }

  /**
   * λ of every row (N·s²; for point joints 3 per constraint in constraint order, the negative of
   * the text's λ = the point form's p, as the rows' C = p_B − p_A is the negative of d). Under the
   * 'distance' form, point joints' λ along n in [3ℓ] instead.
   */
  get multiplier(): Float64Array {
    return this.variant.form === 'distance' ? this.distanceMultiplier : this.rowSolver.rows.lambda.subarray(0, this.rowSolver.rows.count);
  }

  /** The joints changed between steps: colour them again and lay their rows out (λ restarts each substep anyway). */
  private relayout(): void {
    if (this.variant.form === 'distance') throw new Error("xpbd-cpu: joints added or removed between steps need form 'point'");
    const j = this.joints;
    this.rigid.markJointed(j.ib0, j.ib1, j.constraintCount);
    this.colouring = colourConstraints({ constraintCount: j.constraintCount, bodyCount: this.w.bodyCount, ib0: j.ib0, ib1: j.ib1, inverseMass: this.w.inverseMass });
    this.rowSolver.layout();
    const n = this.rowSolver.rows.largestBlock();
    if (this.rowScratch.length < 2 * n * n + 2 * n) this.rowScratch = new Float64Array(2 * n * n + 2 * n);
  }

  /** The stages of one frame (Müller et al. 2020, Alg. 2's loop), as stepFrame times them. */
  override get stageNames(): readonly string[] {
    return this.contactSolver
      ? ['collide', 'integrate positions', 'project joints', 'project contacts', 'update velocities', 'velocity pass']
      : ['integrate positions', 'project joints', ADVANCE_STAGE, 'update velocities'];
  }

  /** One frame: `substeps` steps of h = dt / substeps. */
  stepFrame(): void {
    this.stepFrameRecording(null);
  }

  /** One frame, recording into `residual` (when given) the residual after k = 0..N iterations of the first substep. */
  private stepFrameRecording(residual: Record<string, number[]> | null): void {
    const { dt, substeps, iterations } = this.options;
    const h = dt / substeps;
    if (this.rowSolver.stale) this.relayout();
    const { colourCount } = this.colouring;
    const clock = this.stageClock;
    clock.paused = residual !== null; // a recording frame is not counted in timings(), nor in the stages
    let t = performance.now();
    // contacts: found once per frame at its start, the speculative margin covering the frame (dt);
    // none (and none of their code runs) when the world has collisions off or no point was found
    let contacts: XpbdContacts | null = null;
    this.contactRows = 0;
    if (this.contactSolver) {
      // with sleeping on, the islands' update, then only the points with an awake body (cpu-base.ts)
      const list = this.updateSleep(dt, this.detectContacts(dt))!;
      // a point's rows: the normal, and the two tangent rows of static friction
      this.contactRows = 3 * list.count;
      if (list.count > 0) {
        contacts = this.contactSolver;
        contacts.begin(list, this.collision!.manifolds, h);
      }
      t = clock.lap('collide', t);
    }
    // joint-only worlds: a substep's velocity update and the next one's integration as one pass (advance)
    const fused = this.contactSolver === null;
    for (let s = 0; s < substeps; s++) {
      if (s === 0 || !fused) {
        this.integrate(h);
        if (contacts) contacts.beginSubstep(h, s === substeps - 1);
        t = clock.lap('integrate positions', t);
      }
      const record = residual !== null && s === 0;
      if (record) this.recordResidual(h, residual, contacts);
      for (let k = 0; k < iterations; k++) {
        for (let c = 0; c < colourCount; c++) this.solveColour(c, h, k === 0);
        t = clock.lap('project joints', t);
        // then the contacts, one after the other (Gauss–Seidel after the joints' colours)
        if (contacts) {
          contacts.project(this.positionPrev, this.orientationPrev, k === 0);
          t = clock.lap('project contacts', t);
        }
        if (record) this.recordResidual(h, residual, contacts);
      }
      if (fused && s + 1 < substeps) {
        this.advance(h);
        t = clock.lap(ADVANCE_STAGE, t);
        continue;
      }
      this.updateVelocities(h);
      t = clock.lap('update velocities', t);
      // the velocity pass: dynamic friction and restitution of the points active in this substep
      if (contacts) {
        // static friction's Δp carried to the pose now, the next substep's start (before collide: contacts.wgsl.ts xc_advance_slip)
        contacts.advanceSlip(this.positionPrev, this.orientationPrev);
        contacts.velocityPass(h);
        t = clock.lap('velocity pass', t);
      }
    }
    if (contacts) contacts.storeImpulses(h);
    clock.paused = false;
    this.frame++;
  }

  /** The residual after k = 0..N iterations of the first substep, one channel per joint kind present. */
  async stepRecordingResiduals(): Promise<ResidualCurve> {
    const channels: Record<string, number[]> = {};
    this.stepFrameRecording(channels);
    return { frame: this.frame, substep: 0, quantity: XPBD_RESIDUAL_QUANTITY, channels };
  }

  /** One point of each residual channel: the joints' per kind, and with contacts this frame the contact rows' (XpbdContacts.residual). */
  private recordResidual(h: number, channels: Record<string, number[]>, contacts: XpbdContacts | null): void {
    for (const [kind, squares] of this.residualByKind(h)) (channels[kind] ??= []).push(Math.sqrt(squares));
    if (!contacts) return;
    const squares = contacts.residual(h, this.positionPrev, this.orientationPrev);
    (channels[CONTACT_NORMAL_CHANNEL] ??= []).push(Math.sqrt(squares[0]));
    (channels[FRICTION_CHANNEL] ??= []).push(Math.sqrt(squares[1]));
  }

  /**
   * 1. x_prev = x, q_prev = q; dynamic bodies: v += h g, x += h v, the gyroscopic step of a
   *    non-isotropic body (ω ← ω*, implicit midpoint), q += ½ h (0, ω_orient) ⊗ q (ω_orient = ω
   *    for spheres, the midpoint ω otherwise; rigid/body.ts); λ = 0.
   */
  integrate(h: number): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, gravity: g, bodyCount } = this.w;
    const rigid = this.rigid, iso = rigid.isotropicScale;
    this.positionPrev.set(x);
    this.orientationPrev.set(q);
    // λ = 0 before the bodies' loop: a call that enters the loop's on-stack-replaced code left it there
    // with no type feedback for what followed, and deoptimised every substep (--trace-deopt, 10k rain)
    if (this.variant.form === 'distance') this.distanceMultiplier.fill(0); // read by the 'distance' form only
    this.rowSolver.rows.lambda.fill(0, 0, this.rowSolver.rows.count);
    const gx = h * g[0], gy = h * g[1], gz = h * g[2];
    const asleep = this.sleeping ? this.sleeping.asleep : null;
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] === 0) continue; // fixed: never moves
      if (asleep !== null && asleep[ib]) continue; // asleep: v = 0, stays put until woken
      const o = 3 * ib;
      x[o] += h * (v[o] += gx);
      x[o + 1] += h * (v[o + 1] += gy);
      x[o + 2] += h * (v[o + 2] += gz);
      // integrateBodyOrientation, its isotropic case (spheres) written in the loop, as computePositions does
      if (iso[ib] === iso[ib]) {
        // integrateOrientation(q, 4 ib, ω, h) written out (same arithmetic): q ← normalise(q + ½ h (0, ω) ⊗ q)
        const qo = 4 * ib, hh = 0.5 * h, wx = w[o], wy = w[o + 1], wz = w[o + 2];
        const ox = q[qo], oy = q[qo + 1], oz = q[qo + 2], ow = q[qo + 3];
        const nx = ox + hh * (ow * wx + (wy * oz - wz * oy));
        const ny = oy + hh * (ow * wy + (wz * ox - wx * oz));
        const nz = oz + hh * (ow * wz + (wx * oy - wy * ox));
        const nw = ow - hh * (wx * ox + wy * oy + wz * oz);
        const n = 1 / Math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw);
        q[qo] = nx * n; q[qo + 1] = ny * n; q[qo + 2] = nz * n; q[qo + 3] = nw * n;
      } else {
        rigid.gyroscopicStep(ib, h);
        rigid.integrateBodyOrientation(ib, h);
      }
    }
  }

  /**
   * 3 then 1: updateVelocities of this substep and integrate of the next as one loop over the bodies
   * (joint-only worlds, between two substeps of a frame: nothing runs between the two passes then),
   * each body taking exactly the arithmetic of both, in their order:
   *   v = (x − x_prev)/h · d_lin,  ω = 2 Δq_v / (h Δq_w) · d_ang   (3, the exact inverse of the Cayley step)
   *   x_prev = x, q_prev = q;  v += h g,  x += h v,  q ← normalise(q + ½ h (0, ω) ⊗ q)   (1, Müller 2020 Alg. 2)
   * so the state is bit for bit that of the two passes (a body's stages read and write that body alone).
   * One sweep of the body arrays instead of two, and no separate copy into x_prev, q_prev: on the
   * 10k necklace 176 against 222 µs per substep boundary (2-core VM, CPU time). Fixed and sleeping
   * bodies are copied to x_prev, q_prev as integrate's copy does, and not moved.
   */
  advance(h: number): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, gravity: g, bodyCount } = this.w;
    const { linearDamping, angularDamping } = this.options;
    const xp = this.positionPrev, qp = this.orientationPrev;
    const invH = 1 / h;
    const linScale = invH * dampingFactor(linearDamping, h);
    const angScale = 2 * invH * dampingFactor(angularDamping, h);
    const angFactor = dampingFactor(angularDamping, h);
    const rigid = this.rigid, iso = rigid.isotropicScale;
    const asleep = this.sleeping ? this.sleeping.asleep : null;
    // λ = 0 (integrate's), before the loop as there
    if (this.variant.form === 'distance') this.distanceMultiplier.fill(0);
    this.rowSolver.rows.lambda.fill(0, 0, this.rowSolver.rows.count);
    const gx = h * g[0], gy = h * g[1], gz = h * g[2], hh = 0.5 * h;
    for (let ib = 0; ib < bodyCount; ib++) {
      const o = 3 * ib, qo = 4 * ib;
      if (inverseMass[ib] === 0 || (asleep !== null && asleep[ib])) {
        xp[o] = x[o]; xp[o + 1] = x[o + 1]; xp[o + 2] = x[o + 2];
        qp[qo] = q[qo]; qp[qo + 1] = q[qo + 1]; qp[qo + 2] = q[qo + 2]; qp[qo + 3] = q[qo + 3];
        continue;
      }
      // 3. v = (x − x_prev)/h, damped; then 1. x_prev = x, v += h g, x += h v
      const px = x[o], py = x[o + 1], pz = x[o + 2];
      const vx = (px - xp[o]) * linScale + gx;
      const vy = (py - xp[o + 1]) * linScale + gy;
      const vz = (pz - xp[o + 2]) * linScale + gz;
      v[o] = vx; v[o + 1] = vy; v[o + 2] = vz;
      xp[o] = px; xp[o + 1] = py; xp[o + 2] = pz;
      x[o] = px + h * vx; x[o + 1] = py + h * vy; x[o + 2] = pz + h * vz;
      if (iso[ib] !== iso[ib]) {
        // the general body: rigid/body.ts's inverse, then integrate's gyroscopic step and orientation update
        rigid.angularVelocityFromRotation(ib, h, qp, angFactor);
        qp[qo] = q[qo]; qp[qo + 1] = q[qo + 1]; qp[qo + 2] = q[qo + 2]; qp[qo + 3] = q[qo + 3];
        rigid.gyroscopicStep(ib, h);
        rigid.integrateBodyOrientation(ib, h);
        continue;
      }
      // 3. ω = 2 Δq_v / (h Δq_w), Δq = q ⊗ q_prev* (updateVelocities' arithmetic)
      const x1 = q[qo], y1 = q[qo + 1], z1 = q[qo + 2], w1 = q[qo + 3];
      const x0 = qp[qo], y0 = qp[qo + 1], z0 = qp[qo + 2], w0 = qp[qo + 3];
      const sc = angScale / (w1 * w0 + x1 * x0 + y1 * y0 + z1 * z0);
      const wx = sc * (w0 * x1 - w1 * x0 - (y1 * z0 - z1 * y0));
      const wy = sc * (w0 * y1 - w1 * y0 - (z1 * x0 - x1 * z0));
      const wz = sc * (w0 * z1 - w1 * z0 - (x1 * y0 - y1 * x0));
      w[o] = wx; w[o + 1] = wy; w[o + 2] = wz;
      // 1. q_prev = q; q ← normalise(q + ½ h (0, ω) ⊗ q) (integrate's arithmetic)
      qp[qo] = x1; qp[qo + 1] = y1; qp[qo + 2] = z1; qp[qo + 3] = w1;
      const nx = x1 + hh * (w1 * wx + (wy * z1 - wz * y1));
      const ny = y1 + hh * (w1 * wy + (wz * x1 - wx * z1));
      const nz = z1 + hh * (w1 * wz + (wx * y1 - wy * x1));
      const nw = w1 - hh * (wx * x1 + wy * y1 + wz * z1);
      const n = 1 / Math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw);
      q[qo] = nx * n; q[qo + 1] = ny * n; q[qo + 2] = nz * n; q[qo + 3] = nw * n;
    }
  }

  /**
   * 2. One colour's constraints, one after the other along `order` (they share no dynamic
   *    body, so any order gives the same result): the XPBD update of the header per constraint.
   *    `first`: the substep's first iteration, whose λ the point joints read as 0 without loading it
   *    (integrate set it to 0; the WGSL's pass_info.first); false reads λ, the same result then.
   */
  solveColour(c: number, h: number, first = false): void {
    const { order, start } = this.colouring;
    const invH2 = 1 / (h * h);
    if (this.variant.form === 'point') {
      this.solvePoints(start[c], start[c + 1], invH2, first);
      return;
    }
    const kind = this.joints.kind;
    const ib0 = this.joints.ib0, ib1 = this.joints.ib1, sleeping = this.sleeping !== null;
    for (let k = start[c]; k < start[c + 1]; k++) {
      const ic = order[k];
      // a joint of sleepers (or a sleeper and a fixed body) is left alone: after the islands' wake
      // rule no joint joins a sleeper to an awake body, so nothing moves it (collision/islands.ts)
      if (sleeping && !this.moves(ib0[ic]) && !this.moves(ib1[ic])) continue;
      if (kind[ic] === JointKind.point) this.solveDistance(ic, invH2);
      else this.solveRows(ic, invH2);
    }
  }

  /**
   * One constraint on its rows (rows/; the 'point' form of a point joint is its three rows as one
   * block): per block b of the constraint, at the current pose (re-evaluated before each block),
   *   K = J_b M⁻¹ J_bᵀ + α̃ I,  Δλ = −K⁻¹ (C_b + α̃ λ_b),  α̃ = α / h²    (the text's Δλ, as a block)
   *   λ ← clamp(λ + Δλ, lower, upper) (a one-sided row: the projection keeps λ ≥ 0, so a rope that
   *   is slack, C > 0, is left alone), then with the clamped Δλ:
   *   x += M⁻¹ J_vᵀ Δλ,  q += ½ (0, I⁻¹ J_ωᵀ Δλ) ⊗ q, normalise      (per body of the block)
   * I⁻¹ = R I_local⁻¹ Rᵀ at the bodies' current orientation.
   */
  private solveRows(ic: number, invH2: number): void {
    const rs = this.rowSolver, rows = rs.rows;
    const { inverseMass } = this.w;
    const { ib0, ib1 } = this.joints;
    const Iw = this.inverseInertiaWorld;
    const K = this.rowScratch;
    const firstBlock = rs.constraintBlock[ic], endBlock = rs.constraintBlockEnd[ic];
    for (let b = firstBlock; b < endBlock; b++) {
      rs.evaluateConstraint(ic, this.w);
      this.rigid.worldInverseInertiaOf(ib0[ic], Iw, 9 * ib0[ic]);
      this.rigid.worldInverseInertiaOf(ib1[ic], Iw, 9 * ib1[ic]);
      const r0 = rows.blockStart[b], r1 = rows.blockStart[b + 1], n = r1 - r0;
      blockDelassus(rows, r0, r1, inverseMass, Iw, K, 0);
      const e = 2 * n * n; // −(C + α̃ λ) at K[e ..], Δλ at K[e + n ..] (the inverse's scratch is K[n² ..])
      for (let p = 0; p < n; p++) {
        const at = compliancePerStep(rows.compliance[r0 + p], invH2);
        K[p * (n + 1)] += at;
        K[e + p] = -(rows.error[r0 + p] + at * rows.lambda[r0 + p]);
      }
      invertBlock(K, 0, n, this.inverseScratch(n));
      let moved = false;
      for (let p = 0; p < n; p++) {
        let s = 0;
        for (let q = 0; q < n; q++) s += K[p * n + q] * K[e + q];
        const r = r0 + p;
        const old = rows.lambda[r];
        let next = old + s;
        if (next < rows.lower[r]) next = rows.lower[r];
        else if (next > rows.upper[r]) next = rows.upper[r];
        rows.lambda[r] = next;
        K[e + n + p] = next - old;
        if (next !== old) moved = true;
      }
      if (!moved) continue;
      this.applyRows(r0, r1, K, e + n);
    }
  }

  /**
   * The point joint's fast path (the twin of jacobi-cpu's lever-arm blocks, rows/rows.ts
   * pointBlockDelassus): solveRows of its one 3-row block with J, A and K⁻¹ written out from the
   * lever arms a = R_A r_A, b = R_B r_B, so nothing is read or written through the generic row
   * arrays but λ (rows.lambda, the rows' sign: C = p_B − p_A, rows/point.ts):
   *   C = x_B + b − x_A − a,  K = A_A + A_B + α̃ I₃,  Aᵢ = mᵢ⁻¹ I₃ − [rᵢ]× Iᵢ⁻¹ [rᵢ]×   (Müller 2020 eq. 2–4 as a block)
   *   Δλ = −K⁻¹ (C + α̃ λ),  λ += Δλ  (no bounds: equality rows)
   *   x_A −= m_A⁻¹ Δλ, q_A += ½ (0, −I_A⁻¹ (a × Δλ)) ⊗ q_A;  x_B += m_B⁻¹ Δλ, q_B += ½ (0, I_B⁻¹ (b × Δλ)) ⊗ q_B
   * (J_A = (−I, −[a]×), J_B = (I, [b]×): J_ωAᵀ Δλ = −a × Δλ). The same update as solveRows (and the
   * WGSL solve_colour) up to rounding: K is summed per body in closed form (an isotropic body, a
   * sphere: Aᵢ = (mᵢ⁻¹ + s|r|²) I₃ − s r rᵀ) and inverted by its adjugate, not by the generic block.
   * Measured on the 10k necklace (chains=250, collisions off; 2-core VM, CPU time of the solver's own
   * stages per frame): 39 → 11 ms, the generic path having spent it in blockDelassus, applyRows,
   * solveRows and evaluatePointRows. Then the lever arms by the quaternion product (18 products, not
   * the matrix's 27), each body's q read once per joint, the bodies' constants packed per slot, and
   * between two isotropic bodies K⁻¹ e through K's rank-two structure (below; ~60 operations and one
   * division, not the adjugate's ~85): the 10k necklace's frame 7.3–7.8 → 6.4–6.5 ms CPU time with
   * `advance` (two revisions alternating in one process, 2-core VM under load). The state hash moves
   * with the rounding (300 frames: d753c3b8cd2c5e93 → b4ccdbdb25185677); violation and energy
   * over 600 frames are those of before to 3 digits (worst max 12.8 mm, energy −17.6 %).
   */
  /**
   * The joints' constants that solvePoints reads, packed in the colouring's order (so a colour's
   * sweep reads them in one stream): per slot k, packedIds (joint, body 1, body 2, first row; −1
   * there for a joint that is not a point joint) and PACKED_ARMS doubles in packedArms: the local
   * arms r⁰ [0, 3), r¹ [3, 6), the row's α [6], and the bodies' constants, fixed with the bodies:
   * m_A⁻¹ [7], m_B⁻¹ [8], s_A [9], s_B [10] (I⁻¹ = s I₃ of an isotropic body, 0 for a fixed one
   * (it adds nothing to K), NaN otherwise: the general path), s_A |r⁰|² [11], s_B |r¹|² [12],
   * m_A⁻¹ + m_B⁻¹ [13]. Built again when the colouring or the rows' layout is replaced (relayout).
   */
  private packPointJoints(): void {
    const rs = this.rowSolver;
    if (this.packedFor === this.colouring && this.packedRows === rs.rowStart) return;
    const { order, start, colourCount } = this.colouring;
    const j = this.joints, n = start[colourCount];
    const inverseMass = this.w.inverseMass, iso = this.rigid.isotropicScale;
    if (this.packedIds.length < 4 * n) {
      this.packedIds = new Int32Array(4 * n);
      this.packedArms = new Float64Array(PACKED_ARMS * n);
    }
    const I = this.packedIds, P = this.packedArms;
    for (let k = 0; k < n; k++) {
      const ic = order[k], point = j.kind[ic] === JointKind.point;
      const b0 = j.ib0[ic], b1 = j.ib1[ic], o = PACKED_ARMS * k;
      I[4 * k] = ic;
      I[4 * k + 1] = b0;
      I[4 * k + 2] = b1;
      I[4 * k + 3] = point ? rs.rowStart[ic] : -1;
      for (let d = 0; d < 3; d++) {
        P[o + d] = j.r0[3 * ic + d];
        P[o + 3 + d] = j.r1[3 * ic + d];
      }
      P[o + 6] = point ? rs.rows.compliance[rs.rowStart[ic]] : 0;
      const m0 = inverseMass[b0], m1 = inverseMass[b1];
      const s0 = m0 === 0 ? 0 : iso[b0], s1 = m1 === 0 ? 0 : iso[b1];
      P[o + 7] = m0;
      P[o + 8] = m1;
      P[o + 9] = s0;
      P[o + 10] = s1;
      P[o + 11] = s0 * (P[o] * P[o] + P[o + 1] * P[o + 1] + P[o + 2] * P[o + 2]);
      P[o + 12] = s1 * (P[o + 3] * P[o + 3] + P[o + 4] * P[o + 4] + P[o + 5] * P[o + 5]);
      P[o + 13] = m0 + m1;
    }
    this.packedFor = this.colouring;
    this.packedRows = rs.rowStart;
  }
  private packedFor: Colouring | null = null;
  private packedRows: Int32Array | null = null;
  private packedIds = new Int32Array(0);
  private packedArms = new Float64Array(0);

  private solvePoints(k0: number, k1: number, invH2: number, first: boolean): void {
    // Every helper of the update written out (integrateOrientation, compliancePerStep) with their
    // arithmetic in their order, and the colour's loop here with its arrays in locals (profile of the
    // 10k necklace: V8 left `rotate` a call, and each call of a per-joint method read its arrays from
    // the solver again). Each body's q is read once per joint: the lever arm and the update use the
    // same q (A ≠ B, model/schema.ts), so the writes to x and q between them need no reload.
    this.packPointJoints();
    const sleeping = this.sleeping !== null;
    const P = this.packedArms, I = this.packedIds, lam = this.rowSolver.rows.lambda;
    const x = this.w.position, q = this.w.orientation;
    const a = scratch; // [6..15), [15..24): I_A⁻¹, I_B⁻¹ (world) of a body that is not isotropic
    for (let k = k0; k < k1; k++) {
      const i4 = 4 * k, o = PACKED_ARMS * k;
      const ic = I[i4], b0 = I[i4 + 1], b1 = I[i4 + 2], r0 = I[i4 + 3];
      // a joint of sleepers (or a sleeper and a fixed body) is left alone: after the islands' wake
      // rule no joint joins a sleeper to an awake body, so nothing moves it (collision/islands.ts)
      if (sleeping && !this.moves(b0) && !this.moves(b1)) continue;
      if (r0 < 0) {
        this.solveRows(ic, invH2); // not a point joint
        continue;
      }
      const qa = 4 * b0, qb = 4 * b1;
      const qax = q[qa], qay = q[qa + 1], qaz = q[qa + 2], qaw = q[qa + 3];
      const qbx = q[qb], qby = q[qb + 1], qbz = q[qb + 2], qbw = q[qb + 3];
      // lever arms a = R_A r_A, b = R_B r_B, each as the rotation of a vector by a unit quaternion
      // (w, u): R v = v + w t + u × t, t = 2 u × v (the product (w, u) ⊗ (0, v) ⊗ (w, −u) expanded;
      // the same R as rigid/quat.ts rotate's matrix and WGSL quat_rotate, in 18 products, not 27)
      let vx = P[o], vy = P[o + 1], vz = P[o + 2];
      let tx = 2 * (qay * vz - qaz * vy), ty = 2 * (qaz * vx - qax * vz), tz = 2 * (qax * vy - qay * vx);
      const ax = vx + qaw * tx + (qay * tz - qaz * ty);
      const ay = vy + qaw * ty + (qaz * tx - qax * tz);
      const az = vz + qaw * tz + (qax * ty - qay * tx);
      vx = P[o + 3]; vy = P[o + 4]; vz = P[o + 5];
      tx = 2 * (qby * vz - qbz * vy); ty = 2 * (qbz * vx - qbx * vz); tz = 2 * (qbx * vy - qby * vx);
      const bx = vx + qbw * tx + (qby * tz - qbz * ty);
      const by = vy + qbw * ty + (qbz * tx - qbx * tz);
      const bz = vz + qbw * tz + (qbx * ty - qby * tx);
      const at = P[o + 6] * invH2; // compliancePerStep
      const m0 = P[o + 7], m1 = P[o + 8], s0 = P[o + 9], s1 = P[o + 10];
      // e = −(C + α̃ λ), C = −(x_A − x_B + a − b) (rows/point.ts's order); in a substep's first
      // iteration λ is 0 (λ restarts each substep) and is read as 0, as WGSL solve_colour's pass_info.first
      const pa = 3 * b0, pb = 3 * b1;
      let e0 = x[pa] - x[pb] + ax - bx;
      let e1 = x[pa + 1] - x[pb + 1] + ay - by;
      let e2 = x[pa + 2] - x[pb + 2] + az - bz;
      if (!first) {
        e0 -= at * lam[r0];
        e1 -= at * lam[r0 + 1];
        e2 -= at * lam[r0 + 2];
      }
      let lx, ly, lz;
      if (s0 === s0 && s1 === s1) {
        // Both bodies isotropic (I⁻¹ = s I₃; a fixed one s = m⁻¹ = 0), the necklace's beads: then
        //   K = (m_A⁻¹ + m_B⁻¹ + α̃) I₃ + s_A (|a|² I₃ − a aᵀ) + s_B (|b|² I₃ − b bᵀ) = D I₃ − s_A a aᵀ − s_B b bᵀ,
        //   D = m_A⁻¹ + m_B⁻¹ + α̃ + s_A |a|² + s_B |b|²  (|a| = |r⁰|, |b| = |r¹|: R keeps lengths; packed),
        // a rank-two update of D I₃, and K Δλ = e is solved through its two projections p = a·Δλ, r = b·Δλ:
        //   Δλ = (e + s_A p a + s_B r b) / D, and a·, b· of that:
        //   A₁₁ p − s_B (a·b) r = a·e,  −s_A (a·b) p + A₂₂ r = b·e,  A₁₁ = D − s_A|a|², A₂₂ = D − s_B|b|²
        //   p = P / δ, r = R / δ:  P = A₂₂ a·e + s_B (a·b) b·e,  R = A₁₁ b·e + s_A (a·b) a·e,
        //   δ = A₁₁ A₂₂ − s_A s_B (a·b)² (= det K / D > 0),  Δλ = (δ e + s_A P a + s_B R b) / (D δ)
        // The same Δλ = K⁻¹ e as the adjugate below, in ~60 operations and one division, not ~85.
        const c = P[o + 13] + at, A11 = c + P[o + 12], A22 = c + P[o + 11], D = A11 + P[o + 11];
        const ab = ax * bx + ay * by + az * bz, ae = ax * e0 + ay * e1 + az * e2, be = bx * e0 + by * e1 + bz * e2;
        const det = A11 * A22 - (s0 * s1) * (ab * ab);
        const pp = s0 * (A22 * ae + s1 * ab * be), rr = s1 * (A11 * be + s0 * ab * ae);
        const inv = 1 / (D * det);
        lx = (det * e0 + pp * ax + rr * bx) * inv;
        ly = (det * e1 + pp * ay + rr * by) * inv;
        lz = (det * e2 + pp * az + rr * bz) * inv;
      } else {
        let k00 = at, k01 = 0, k02 = 0, k11 = at, k12 = 0, k22 = at;
        if (m0 !== 0) {
          if (s0 === s0) {
            // I⁻¹ = s I₃:  A = m I₃ − s [r]×² = (m + s |r|²) I₃ − s r rᵀ
            const d = m0 + s0 * (ax * ax + ay * ay + az * az);
            k00 += d - s0 * ax * ax; k11 += d - s0 * ay * ay; k22 += d - s0 * az * az;
            k01 -= s0 * ax * ay; k02 -= s0 * ax * az; k12 -= s0 * ay * az;
          } else {
            this.rigid.worldInverseInertiaOf(b0, a, 6);
            const i00 = a[6], i01 = a[7], i02 = a[8], i10 = a[9], i11 = a[10], i12 = a[11], i20 = a[12], i21 = a[13], i22 = a[14];
            // T = [r]× I⁻¹;  A = m I₃ − T [r]×  (symmetric: the upper triangle)
            const t00 = ay * i20 - az * i10, t01 = ay * i21 - az * i11, t02 = ay * i22 - az * i12;
            const t10 = az * i00 - ax * i20, t11 = az * i01 - ax * i21, t12 = az * i02 - ax * i22;
            const t20 = ax * i10 - ay * i00, t21 = ax * i11 - ay * i01;
            k00 += m0 - (t01 * az - t02 * ay);
            k01 -= t02 * ax - t00 * az;
            k02 -= t00 * ay - t01 * ax;
            k11 += m0 - (t12 * ax - t10 * az);
            k12 -= t10 * ay - t11 * ax;
            k22 += m0 - (t20 * ay - t21 * ax);
          }
        }
        if (m1 !== 0) {
          if (s1 === s1) {
            const d = m1 + s1 * (bx * bx + by * by + bz * bz);
            k00 += d - s1 * bx * bx; k11 += d - s1 * by * by; k22 += d - s1 * bz * bz;
            k01 -= s1 * bx * by; k02 -= s1 * bx * bz; k12 -= s1 * by * bz;
          } else {
            this.rigid.worldInverseInertiaOf(b1, a, 15);
            const i00 = a[15], i01 = a[16], i02 = a[17], i10 = a[18], i11 = a[19], i12 = a[20], i20 = a[21], i21 = a[22], i22 = a[23];
            const t00 = by * i20 - bz * i10, t01 = by * i21 - bz * i11, t02 = by * i22 - bz * i12;
            const t10 = bz * i00 - bx * i20, t11 = bz * i01 - bx * i21, t12 = bz * i02 - bx * i22;
            const t20 = bx * i10 - by * i00, t21 = bx * i11 - by * i01;
            k00 += m1 - (t01 * bz - t02 * by);
            k01 -= t02 * bx - t00 * bz;
            k02 -= t00 * by - t01 * bx;
            k11 += m1 - (t12 * bx - t10 * bz);
            k12 -= t10 * by - t11 * bx;
            k22 += m1 - (t20 * by - t21 * bx);
          }
        }
        // Δλ = K⁻¹ e by the adjugate of the symmetric K (det > 0: K ≥ mᵢ⁻¹ I₃ for a dynamic body)
        const c00 = k11 * k22 - k12 * k12, c01 = k02 * k12 - k01 * k22, c02 = k01 * k12 - k02 * k11;
        const c11 = k00 * k22 - k02 * k02, c12 = k01 * k02 - k00 * k12, c22 = k00 * k11 - k01 * k01;
        const inv = 1 / (k00 * c00 + k01 * c01 + k02 * c02);
        lx = (c00 * e0 + c01 * e1 + c02 * e2) * inv;
        ly = (c01 * e0 + c11 * e1 + c12 * e2) * inv;
        lz = (c02 * e0 + c12 * e1 + c22 * e2) * inv;
      }
      // λ += Δλ (from 0 in the first iteration: λ = Δλ)
      if (first) {
        lam[r0] = lx; lam[r0 + 1] = ly; lam[r0 + 2] = lz;
      } else {
        lam[r0] += lx; lam[r0 + 1] += ly; lam[r0 + 2] += lz;
      }
      if (lx === 0 && ly === 0 && lz === 0) continue; // nothing moves (solveRows: `moved`)
      // A takes −Δλ at a, B +Δλ at b: x ± m⁻¹ Δλ, θ = ±I⁻¹ (r × Δλ), q ← normalise(q + ½ (0, θ) ⊗ q)
      // (Müller 2020 eq. 8 with h = 1 for the impulse's rotation; rigid/quat.ts integrateOrientation);
      // ½θ is formed first (ω = ½θ below): scaling by ½ is exact, so the bits are those of ½ (…) after
      if (m0 !== 0) {
        x[pa] -= m0 * lx;
        x[pa + 1] -= m0 * ly;
        x[pa + 2] -= m0 * lz;
        const tx = az * ly - ay * lz, ty = ax * lz - az * lx, tz = ay * lx - ax * ly; // −a × Δλ
        let wx, wy, wz;
        if (s0 === s0) {
          const hs = 0.5 * s0;
          wx = hs * tx; wy = hs * ty; wz = hs * tz;
        } else {
          wx = 0.5 * (a[6] * tx + a[7] * ty + a[8] * tz); wy = 0.5 * (a[9] * tx + a[10] * ty + a[11] * tz); wz = 0.5 * (a[12] * tx + a[13] * ty + a[14] * tz);
        }
        const nx = qax + (qaw * wx + (wy * qaz - wz * qay));
        const ny = qay + (qaw * wy + (wz * qax - wx * qaz));
        const nz = qaz + (qaw * wz + (wx * qay - wy * qax));
        const nw = qaw - (wx * qax + wy * qay + wz * qaz);
        const n = 1 / Math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw);
        q[qa] = nx * n; q[qa + 1] = ny * n; q[qa + 2] = nz * n; q[qa + 3] = nw * n;
      }
      if (m1 !== 0) {
        x[pb] += m1 * lx;
        x[pb + 1] += m1 * ly;
        x[pb + 2] += m1 * lz;
        const tx = by * lz - bz * ly, ty = bz * lx - bx * lz, tz = bx * ly - by * lx; // b × Δλ
        let wx, wy, wz;
        if (s1 === s1) {
          const hs = 0.5 * s1;
          wx = hs * tx; wy = hs * ty; wz = hs * tz;
        } else {
          wx = 0.5 * (a[15] * tx + a[16] * ty + a[17] * tz); wy = 0.5 * (a[18] * tx + a[19] * ty + a[20] * tz); wz = 0.5 * (a[21] * tx + a[22] * ty + a[23] * tz);
        }
        const nx = qbx + (qbw * wx + (wy * qbz - wz * qby));
        const ny = qby + (qbw * wy + (wz * qbx - wx * qbz));
        const nz = qbz + (qbw * wz + (wx * qby - wy * qbx));
        const nw = qbw - (wx * qbx + wy * qby + wz * qbz);
        const n = 1 / Math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw);
        q[qb] = nx * n; q[qb + 1] = ny * n; q[qb + 2] = nz * n; q[qb + 3] = nw * n;
      }
    }
  }

  /** scratch for invertBlock of an n-block: 2n² + n entries, apart from the caller's (allocated once per size) */
  private inverseScratch(n: number): Float64Array {
    if (this.invScratch.length < 2 * n * n + n) this.invScratch = new Float64Array(2 * n * n + n);
    return this.invScratch;
  }
  private invScratch = new Float64Array(0);

  /** x += M⁻¹ J_vᵀ Δλ, q += ½ (0, I⁻¹ J_ωᵀ Δλ) ⊗ q for both bodies of rows r0..r1−1, Δλ at d[o ..]. */
  private applyRows(r0: number, r1: number, d: Float64Array, o: number): void {
    const rows = this.rowSolver.rows, J = rows.jacobian;
    const { position: x, orientation: q, inverseMass } = this.w;
    const Iw = this.inverseInertiaWorld;
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? rows.bodyA[r0] : rows.bodyB[r0];
      const m = inverseMass[body];
      if (m === 0) continue; // fixed: never written
      let px = 0, py = 0, pz = 0, tx = 0, ty = 0, tz = 0;
      for (let r = r0; r < r1; r++) {
        const l = d[o + r - r0];
        const j = JACOBIAN_STRIDE * r + 6 * side;
        px += J[j] * l; py += J[j + 1] * l; pz += J[j + 2] * l;
        tx += J[j + 3] * l; ty += J[j + 4] * l; tz += J[j + 5] * l;
      }
      const xo = 3 * body, io = 9 * body;
      x[xo] += m * px;
      x[xo + 1] += m * py;
      x[xo + 2] += m * pz;
      integrateOrientation(
        q,
        4 * body,
        Iw[io] * tx + Iw[io + 1] * ty + Iw[io + 2] * tz,
        Iw[io + 3] * tx + Iw[io + 4] * ty + Iw[io + 5] * tz,
        Iw[io + 6] * tx + Iw[io + 7] * ty + Iw[io + 8] * tz,
        1,
      );
    }
  }

  /** 'distance' form: C = |d|, n = d/C, Δλ = (−C − α̃ λ)/(w₁ + w₂ + α̃), p = Δλ n. */
  private solveDistance(ic: number, invH2: number): void {
    const { position: x, inverseMass, ib0, ib1 } = this.w;
    const a = scratch;
    const b0 = ib0[ic], b1 = ib1[ic];
    const o0 = 3 * b0, o1 = 3 * b1;
    this.leverArms(ic);
    // d = p₁ − p₂, C = |d|
    const dx = x[o0] + a[0] - x[o1] - a[3];
    const dy = x[o0 + 1] + a[1] - x[o1 + 1] - a[4];
    const dz = x[o0 + 2] + a[2] - x[o1 + 2] - a[5];
    const C = Math.sqrt(dx * dx + dy * dy + dz * dz);
    if (!(C > XPBD_MIN_DISTANCE)) return; // n undefined; the skipped correction is ≤ C
    const nx = dx / C, ny = dy / C, nz = dz / C;
    // wᵢ = mᵢ⁻¹ + (rᵢ × n)ᵀ Iᵢ⁻¹ (rᵢ × n)
    let wSum = 0;
    for (let side = 0; side < 2; side++) {
      const ib = side === 0 ? b0 : b1;
      if (inverseMass[ib] === 0) continue;
      const ro = 3 * side, io = 6 + 9 * side;
      this.worldInverseInertia(ib, a, io);
      const rx = a[ro], ry = a[ro + 1], rz = a[ro + 2];
      const cx = ry * nz - rz * ny, cy = rz * nx - rx * nz, cz = rx * ny - ry * nx;
      wSum += inverseMass[ib];
      wSum += cx * (a[io] * cx + a[io + 1] * cy + a[io + 2] * cz);
      wSum += cy * (a[io + 3] * cx + a[io + 4] * cy + a[io + 5] * cz);
      wSum += cz * (a[io + 6] * cx + a[io + 7] * cy + a[io + 8] * cz);
    }
    // Δλ = (−C − α̃ λ) / (w₁ + w₂ + α̃),  α̃ = α / h²;  λ += Δλ
    const alphaTilde = compliancePerStep(this.compliance[ic], invH2);
    const lo = 3 * ic;
    const dl = (-C - alphaTilde * this.distanceMultiplier[lo]) / (wSum + alphaTilde);
    this.distanceMultiplier[lo] += dl;
    a[24] = dl * nx;
    a[25] = dl * ny;
    a[26] = dl * nz;
    this.applyImpulse(b0, 0, 1);
    this.applyImpulse(b1, 1, -1);
  }

  /** Lever arms r₁ = R₁ r⁰ → scratch[0..3), r₂ = R₂ r¹ → scratch[3..6) of constraint ic. */
  private leverArms(ic: number): void {
    const { orientation: q, ib0, ib1, r0, r1 } = this.w;
    rotateByQuat(q, 4 * ib0[ic], r0, 3 * ic, scratch, 0);
    rotateByQuat(q, 4 * ib1[ic], r1, 3 * ic, scratch, 3);
  }

  /** Iᵢ⁻¹ = R I_local⁻¹ Rᵀ of body ib at its current orientation, row-major into out[o..o+9) (rigid/body.ts). */
  private worldInverseInertia(ib: number, out: Float64Array, o: number): void {
    this.rigid.worldInverseInertiaOf(ib, out, o);
  }

  /**
   * Body ib (side 0: body 1, sign +1; side 1: body 2, sign −1) takes ±p, p = scratch[24..27):
   * x += ±m⁻¹ p,  q += ±½ (0, I⁻¹ (r × p)) ⊗ q, normalise; r, I⁻¹ from scratch. Fixed bodies: nothing.
   * (Integers in, numbers through scratch: no f64 argument to box were the call not inlined.)
   */
  private applyImpulse(ib: number, side: number, sign: number): void {
    const m = this.w.inverseMass[ib];
    if (m === 0) return;
    const x = this.w.position, a = scratch;
    const px = a[24], py = a[25], pz = a[26];
    const o = 3 * ib, ro = 3 * side, io = 6 + 9 * side;
    x[o] += sign * m * px;
    x[o + 1] += sign * m * py;
    x[o + 2] += sign * m * pz;
    const rx = a[ro], ry = a[ro + 1], rz = a[ro + 2];
    const cx = sign * (ry * pz - rz * py), cy = sign * (rz * px - rx * pz), cz = sign * (rx * py - ry * px);
    integrateOrientation(
      this.w.orientation,
      4 * ib,
      a[io] * cx + a[io + 1] * cy + a[io + 2] * cz,
      a[io + 3] * cx + a[io + 4] * cy + a[io + 5] * cz,
      a[io + 6] * cx + a[io + 7] * cy + a[io + 8] * cz,
      1,
    );
  }

  /**
   * 3. v = (x − x_prev)/h; ω = 2 Δq_v / (h Δq_w), Δq = q q_prev⁻¹ (spheres: the exact inverse of
   *    the Cayley step, header); then damping. A body that is not isotropic takes the same inverse
   *    in rigid/body.ts angularVelocityFromRotation (ω_orient = 2 Δq_v / (h Δq_w), less the
   *    midpoint offset, carried with the body). Müller's 2 Δq_v / h returns ω / √(1 + (h|ω|/2)²),
   *    which loses energy every substep (e.g. 3.7 % over 10 s at 3 rad/s and h = 1/600).
   */
  updateVelocities(h: number): void {
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: w, inverseMass, bodyCount } = this.w;
    const { linearDamping, angularDamping } = this.options;
    const xp = this.positionPrev, qp = this.orientationPrev;
    const invH = 1 / h;
    const linScale = invH * dampingFactor(linearDamping, h);
    const angScale = 2 * invH * dampingFactor(angularDamping, h);
    const iso = this.rigid.isotropicScale;
    const angFactor = dampingFactor(angularDamping, h);
    const asleep = this.sleeping ? this.sleeping.asleep : null;
    for (let ib = 0; ib < bodyCount; ib++) {
      if (inverseMass[ib] === 0) continue;
      if (asleep !== null && asleep[ib]) continue; // asleep: v = ω = 0
      const o = 3 * ib;
      v[o] = (x[o] - xp[o]) * linScale;
      v[o + 1] = (x[o + 1] - xp[o + 1]) * linScale;
      v[o + 2] = (x[o + 2] - xp[o + 2]) * linScale;
      if (iso[ib] !== iso[ib]) {
        this.rigid.angularVelocityFromRotation(ib, h, qp, angFactor);
        continue;
      }
      // Δq = q ⊗ q_prev*:  Δq_v = w_p q_v − w q_v,p − q_v × q_v,p,  Δq_w = w w_p + q_v · q_v,p
      const qo = 4 * ib;
      const x1 = q[qo], y1 = q[qo + 1], z1 = q[qo + 2], w1 = q[qo + 3];
      const x0 = qp[qo], y0 = qp[qo + 1], z0 = qp[qo + 2], w0 = qp[qo + 3];
      const dqw = w1 * w0 + x1 * x0 + y1 * y0 + z1 * z0;
      // ω = 2 Δq_v / (h Δq_w): the exact inverse of integrate's Cayley step (header); dividing by Δq_w
      // also picks the shorter way round (Δq and −Δq give the same ω, so the double cover needs no test)
      const s = angScale / dqw;
      w[o] = s * (w0 * x1 - w1 * x0 - (y1 * z0 - z1 * y0));
      w[o + 1] = s * (w0 * y1 - w1 * y0 - (z1 * x0 - x1 * z0));
      w[o + 2] = s * (w0 * z1 - w1 * z0 - (x1 * y0 - y1 * x0));
    }
  }

  /**
   * ‖r‖₂ over constraint rows, r = (C(x) + α̃ λ) / h²: the XPBD equation C + α̃λ = 0 at the
   * current positions and multipliers (m/s²; h² r is the position error left); a one-sided row at
   * λ = 0 that is apart (C > 0) counts 0. Per joint kind (channel = the kind's name); the 'distance'
   * form's point joints, C = |d|, in channel 'point'.
   */
  residualByKind(h: number): Map<string, number> {
    const { position: x } = this.w;
    const { ib0, ib1, constraintCount, kind } = this.joints;
    const a = scratch;
    const invH2 = 1 / (h * h);
    const distanceForm = this.variant.form === 'distance';
    const rs = this.rowSolver, rows = rs.rows;
    const sums = new Map<string, number>();
    for (let ic = 0; ic < constraintCount; ic++) {
      const name = jointKindNames[kind[ic]];
      const at = compliancePerStep(this.compliance[ic], invH2);
      let squares = 0;
      if (distanceForm && kind[ic] === JointKind.point) {
        const o0 = 3 * ib0[ic], o1 = 3 * ib1[ic];
        this.leverArms(ic);
        const dx = x[o0] + a[0] - x[o1] - a[3];
        const dy = x[o0 + 1] + a[1] - x[o1 + 1] - a[4];
        const dz = x[o0 + 2] + a[2] - x[o1 + 2] - a[5];
        squares = ((Math.sqrt(dx * dx + dy * dy + dz * dz) + at * this.distanceMultiplier[3 * ic]) * invH2) ** 2;
      } else {
        rs.evaluateConstraint(ic, this.w);
        for (let r = rs.rowStart[ic]; r < rs.rowStart[ic] + rs.rowCount[ic]; r++) {
          const e = rows.error[r] + compliancePerStep(rows.compliance[r], invH2) * rows.lambda[r];
          if (rows.lower[r] === 0 && rows.lambda[r] <= 0 && e > 0) continue;
          squares += (e * invH2) ** 2;
        }
      }
      sums.set(name, (sums.get(name) ?? 0) + squares);
    }
    return sums;
  }

  /** ‖r‖₂ over every row (residualByKind, all kinds together). */
  residual(h: number): number {
    let total = 0;
    for (const v of this.residualByKind(h).values()) total += v;
    return Math.sqrt(total);
  }

  /**
   * Rows per constraint (3 'point', 1 'distance'), and 3 per contact point of the last frame (its
   * normal and static friction's tangent pair, the most it solves), solved once per iteration per
   * substep. With sleeping on, joints whose bodies all sleep (or are fixed) are skipped, and not counted.
   */
  cost(): SolverCost {
    const { substeps, iterations } = this.options;
    let jointRows = this.variant.form === 'distance' ? this.rowSolver.rows.count - 2 * this.countKind(JointKind.point) : this.rowSolver.rows.count;
    if (this.sleeping) {
      const { ib0, ib1, constraintCount } = this.joints;
      for (let ic = 0; ic < constraintCount; ic++) if (!this.moves(ib0[ic]) && !this.moves(ib1[ic])) jointRows -= this.rowSolver.rowCount[ic];
    }
    return { rowSolvesPerFrame: (jointRows + this.contactRows) * iterations * substeps };
  }
  /** rows of the last frame's contact points (3 per point with an awake body) */
  private contactRows = 0;

  private countKind(k: number): number {
    let n = 0;
    for (let ic = 0; ic < this.joints.constraintCount; ic++) if (this.joints.kind[ic] === k) n++;
    return n;
  }

}

/** Scratch for lever arms, world inverse inertias (no allocation in the loops). */
const scratch = new Float64Array(27);

/** doubles per slot of XpbdCpuSolver's packed point joints (packPointJoints) */
const PACKED_ARMS = 14;
