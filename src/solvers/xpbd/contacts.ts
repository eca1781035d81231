/**
 * Contacts of xpbd-cpu (Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position
 * Based Dynamics", §3.5–3.6, as the Starframe text gives it: "Adding rigid bodies", "Velocity").
 *
 * Per frame the contacts are found once (collision/pipeline.ts, speculative margin for the whole
 * frame); the normal n (from A to B) and each point's anchors a_A, a_B (local frames) are kept for the
 * frame. A manifold = the consecutive points of one pair (≤ 4, one n).
 *
 * Manifolds. The points are the pairs' persistent manifold records (collision/manifolds.ts), the one
 * contact datum of every solver: the anchors are read from the records, static friction's reference
 * follows the store's own matching of points from frame to frame (begin: ManifoldStore.origin, by
 * feature key or nearest anchor), and the forces go back onto the records (storeImpulses). Nothing is
 * kept by key in a Map of its own.
 * Coherence is on (the pipeline keeps a record's points, carried with the bodies, when the pair barely
 * moved since its last narrow phase: ManifoldStore.refresh). Why a refreshed record is valid for a
 * position-level solver that moves the bodies within the frame: the projection never uses the points'
 * world positions of detection, only (i) two material points, p_A = x_A + R_A a_A and p_B = x_B + R_B a_B,
 * re-evaluated at the pose of every substep, and (ii) the frame's fixed n. A fresh face contact gives
 * the incident body's vertex and its foot on the reference face, both then material points for the
 * frame; a refreshed one gives the same vertex and the foot of the last narrow phase, a point of the
 * same reference face offset along it by δ ≤ COHERENCE_DRIFT · slop (refresh's drift bound), with n the
 * reference face's normal carried to the pose now. Both feet lie in the face's plane, so d = −(p_B − p_A)·n
 * is the same at the detection pose; within the frame the face turns by θ (n held fixed, as for a
 * fresh record) and the two differ by (θ × δ)·n ≤ |θ| δ, second order (0.5 mm · θ for metre boxes), and
 * their lever arms by δ. The points left out (and so never projected in the frame) are bounded by
 * refresh's turn and margin tests, the same for every solver, since the margin covers the whole frame's
 * motion whichever solver makes it. So a refreshed record serves the projection as a fresh one does.
 * Round shapes and edge contacts are never refreshed (their points move over the surface).
 *
 * Per substep, after the joints (xpbd/cpu.ts), manifold after manifold (Gauss–Seidel):
 *   p_A = x_A + R_A a_A,  p_B = x_B + R_B a_B,  d = −(p_B − p_A) · n           (penetration, > 0: overlap)
 *   normal       compliance 0: per point the row J_n = (−n, −(r_A × n), n, r_B × n), target d, λ_n ≥ 0;
 *                K = J M⁻¹ Jᵀ, whose diagonal is Müller's w_A + w_B, wᵢ = mᵢ⁻¹ + (rᵢ × n)ᵀ Iᵢ⁻¹ (rᵢ × n);
 *                for one point Δλ_n = −(−d + α̃λ_n)/(w_A + w_B + α̃) = d/(w_A + w_B), as the text.
 *   static       Δp_t, the tangential part of the points' relative motion (below), is undone at the
 *   friction     position level (two tangent rows per point, target −Δp_t · t_k) when |λ_t| ≤ μ_s λ_n
 *                can do it; otherwise the motion is left to dynamic friction.
 *   B takes +Σ J_Bᵀ λ, A likewise: x += m⁻¹ P, q += ½ (0, I⁻¹ (r × P)) ⊗ q (the text's pose update).
 *
 * Four departures from the text's point-by-point loop, each for a measured reason (box of 1 m on the
 * ground, 1 iteration × 10 substeps at 1/60 s; 4.: a pyramid):
 *   1. A manifold's points are solved together, as one block of rows to convergence (projected
 *      Gauss–Seidel over ≤ 12 rows, solveBlock), not one point after the other: corner by corner, the
 *      first corner's correction tilts the box and the order leaves a bias (measured: a box at rest
 *      crept 2.6 cm in 10 s, a box slid in 12 directions stopped after 0.80…1.19 of v²/2μg).
 *   2. Static friction's test is the manifold's: the block with each point's tangent pair held in its
 *      disc |λ_t| ≤ μ_s λ_n (λ_n of the same block) meets its tangential targets (to 1 %) — a force
 *      distribution inside every cone holds the contact — else the manifold is solved again with its
 *      normal rows alone. The per-point test (|λ_t| ≤ μ_s λ_n of that point, else drop it) fails at the
 *      lightly loaded corners of a box on a slope (measured: μ = 0.35 at tan θ = 0.255 drifted 8 mm
 *      in 2 s). A block that misses the test by a little is tried once more from the cones' uniform
 *      share (restickBlock: the sweeps from λ_t = 0 can stop at a sliding fixed point though a stick
 *      state exists; measured: a box at 0.966 μ_s slid at 20 mm/s).
 *   3. Δp_t is measured from a reference that a resting contact keeps: for two non-spheres the
 *      anchor pair's offset when it was taken, (p_B − p_A) − (p_B − p_A)_ref, the reference being the
 *      detection's, or, for a point that persists (the store's match: same key, or nearest anchor) and was stuck at the end of the last frame,
 *      the one it had; a point whose manifold slid in a substep takes a new one there (retakeReference).
 *      The text's Δp since the substep's start lets the corrections of the manifolds
 *      above ratchet a stack sideways a little every substep (measured: a 10-box stack collapsed;
 *      measured from the frame's detection: the top crept 13 cm in 9 s; kept while stuck: 33 µm).
 *      A sphere's contact point is no material point (it rolls), so for a pair with a sphere Δp_t is the
 *      text's: the motion since the substep's start, p − p̄, p̄ = x̄ + R̄ a of the same body point.
 *
 * Velocity pass (after v, ω are derived from the poses):
 *   collisions   first, the points with e > 0 whose gap closes within the substep, approaching faster
 *                than the restitution threshold (`--restitution-threshold`, 0.1 m/s, the velocity solvers' rule): collision propagation
 *                (Guendelman et al. 2003) on the predicted velocities Ṽ, pair after pair, swept until none
 *                collides (collide; rows/block-solver.ts applyRestitution derives it). Each collided
 *                point's projection impulse λ_n/h is replaced by the collision's, in v and in x. A
 *                Newton's cradle passes the strike down its row; Müller's rule below would spread it.
 * then per manifold with a point active in the substep (λ_n > 0), the collided points aside:
 *   v = (v_B + ω_B × r_B) − (v_A + ω_A × r_A),  v_n = n · v,  v_t = v − v_n n
 *   restitution  Δv_n = −v_n + max(−e ṽ_n, 0), ṽ_n the normal velocity before the substep's solve,
 *                e = 0 when |ṽ_n| ≤ the threshold; the manifold's normal rows as one block
 *                (free sign, as the text's Δv_n), to convergence. (With the collisions first, e acts
 *                here only at a point they did not take: the sweeps ran out, or the projection closed
 *                a gap Ṽ did not.)
 *   dynamic      then point after point, each from the velocities the points before it left (the
 *   friction     text's loop over the contacts; velocityBlock: all from the same velocities, summed,
 *                after departure 4's stick block): an impulse along −v_t/|v_t| of magnitude
 *                min(μ_d λ_n / h, |v_t| / (w_A(t̂) + w_B(t̂))). The text writes Δv = −v̂_t min(h μ_d f_n,
 *                |v_t|), f_n = λ_n/h², then p = Δv/(w_A + w_B); h μ_d f_n is an impulse (N·s), not a
 *                velocity, so the cap is put on the impulse (Coulomb: |P_t| ≤ μ_d P_n, P_n = λ_n/h the
 *                normal impulse of the substep); for a point mass on the ground that is Δv = μ_d g h per
 *                substep, as it should be.
 *   4. (departure 4, in the velocity pass) dynamic friction's per-point rule, applied to the points
 *      of one manifold from the same velocities and summed, overshoots: the points sit on the same two rigid bodies, so each
 *      point's impulse also moves the others, and the sum removes more than the manifold's motion. On
 *      the small tangential motions of a resting pile (|v_t| below the cap μ_d λ_n / h) it maps the
 *      motion to a multiple < −1 of itself each substep, until the cap clips it: for a 1 m box on the
 *      ground (4 corners, uncapped) a yaw ω → −1.18 ω; a slide v_t → the box stopped but rocking
 *      ω = 3 v_t / 1 m, which leaves its bottom at −1.5 v_t; on the half-face patch between two boxes of
 *      a pyramid the map (I − D⁻¹K on the tangent rows, D = diag K) has eigenvalues down to −2.55
 *      (scratch/jacobi.py). So resting contacts were kicked back and forth at the Coulomb cap, and the
 *      position pass (one Gauss–Seidel sweep) did not take it all back: measured on the base-20
 *      pyramid (210 boxes, μ 0.6) ~35 boxes kept rocking (ω about x) and yawing (about y) at up to
 *      0.15 rad/s, neighbours in opposite senses, 210 awake at 3 s; 2 iterations or 20 substeps
 *      damped it (7, 3 boxes above the sleep thresholds). The velocity pass therefore first solves the
 *      manifold as one block, as the position pass does (1., 2.): its normal rows and a tangent pair
 *      per point held in its disc |P_t| ≤ μ_d λ_n / h, to convergence; if that meets the tangential
 *      targets (v_t → 0 at every point, to STICK_TOLERANCE) the manifold stops within its cones and
 *      that is the pass. Else it slides, and the text's rule runs as before (normal block, then per
 *      point along −v̂_t, capped): a sliding manifold's points are all at their caps, where the sum is
 *      Coulomb's μ_d P_n and cannot overshoot, while the disc-projected block would spend part of each
 *      disc on lateral components that cancel (measured: a box sliding down a slope decelerated 6 %
 *      too little, 1.58 for 1.49 m/s², and yawed at 0.03 rad/s). After: the base-20 pyramid below
 *      0.005 m/s and 0.002 rad/s at 0.5 s, asleep at 1.0 s (base 10 also at 1.0 s, was 2.5–3 s); the
 *      slope's slide unchanged (test/static-friction.test.ts), test/xpbd-rest.test.ts.
 *      That block is now xpbd-gpu's and its CPU twin's (velocityBlock). xpbd-cpu keeps the normal
 *      block and applies the rule point after point instead (Gauss–Seidel, as the text's loop over the
 *      contacts; velocityPassPoints says why that does not overshoot), for its cost: the stick blocks
 *      were most of the 10k rain's block sweeps.
 * μ_s (static friction's discs) and μ_d (dynamic friction's cap) are the pair's combined
 * `staticFriction` and `dynamicFriction` (ContactList.staticFriction, .friction); a body that gives only
 * `friction` uses it for both.
 *
 * Speed (the block solves, departures 1, 2, 4). A manifold of one point (a sphere's, most of the rain's)
 * is solved in closed form (solvePoint: Müller's per-point Δλ_n = d / (w_A + w_B) of §3.3 for its normal
 * alone; with its tangent pair the point's 3×3 system, whose unique solution the swept block converged
 * to, or gave up on); the rain's 10k bodies put 2.2 M such blocks through 2–16 sweeps in 70 frames.
 * A block of several points starts its sweeps from the λ its rows had in the substep before (warm:
 * n, t₁, t₂ at 3c; at a frame's start the manifold record's stored forces, h² f): the answer is the block's
 * solution either way (to BLOCK_CONVERGED), only the path shortens (measured: the rain's sweep work
 * −10 %). Several points keep the swept block: per-point projections (the text's) leave a resting box
 * unconverged after the substep's one iteration, which test/xpbd-contacts.test.ts's residual check and
 * departures 1 and 4 (creep, rocking) rule out; the blocks' slow sweeps (the residual falls ~×0.56 per
 * sweep on a box face: 12 rows of rank 6) are what the rain's frame still spends most in.
 * The block's layout (row, solveBlock): no 12-wide J, no K. A row keeps its lever-arm products
 * c = r × u and W = I⁻¹ c of each body; the block's Δ = M⁻¹ Jᵀ λ is kept in 9 numbers (Λ per direction
 * n, t₁, t₂ and θ_A, θ_B: sumsOf), so a row's J_i Δ is 7 products and its update 7 more, where the K
 * form formed K (66 sums of 6 products for 12 rows) and read a row of it per update; the iterates are
 * the same in exact arithmetic (f64 rounding apart). Per frame the manifolds' ends are found once
 * (begin); per substep a manifold's I⁻¹ is loaded only when one of its points touches, Δp only where a
 * tangent pair reads it, ṽ_n only where e > 0. Measured (CPU ms a frame, process time, main's K form
 * → this, alternating on one loaded 2-core VM): rain 3k 100 frames 96 → 74 (sleep on), 93 → 65 (sleep
 * off), softstep-cpu 30 / 24 there; pyramid base 20 sleep off 57.5 → 31.9; rain 10k 200 frames 429 →
 * 274 (softstep-cpu 79: 5.4× → 3.5×, not yet the 2× of issue 21). What is left is mostly the
 * sweeps themselves (~1.3 M row updates a frame on the 3k rain, most in blocks that run all 16) and the
 * 10 substeps against softstep's 4: per substep the contacts cost ~1.4× softstep's.
 *
 * Bounded push-out. The projection moves the bodies by d and XPBD reads the move as velocity,
 * v = (x − x̄)/h: an overlap d̄ that the bodies already have at a substep's start, taken out at once,
 * leaves up to d̄/h along n (0.2 m at h = 1/600 s: 120 m/s; measured before this rule: two spheres
 * created 0.2 m deep in each other flew apart at 22 m/s, the overlap-recovery stack gained 8 MJ and
 * its top box left at 74 m/s, worse with more substeps). Only the penetration the substep's own
 * motion made (after the prediction, d = d̄ + the approach) must go at once for the contact to stay
 * hard. So a normal row's target is
 *   d − max(0, d̄ − v_push h),     d̄ = −(p̄_B − p̄_A) · n at the substep's start pose (x̄, q̄)
 * the approach is undone in full and at most v_push h of the old overlap: the separation along n grows
 * by at most v_push h a substep, so the velocity the projection leaves along n is at most v_push.
 * Box2D v3 bounds its soft contacts' push-out the same way (b2WorldDef.contactPushMaxVelocity, 3 m/s:
 * PUSH_OUT_SPEED). A resting or an arriving contact (d̄ ≤ v_push h, 5 mm at h = 1/600 s) is projected in
 * full, as before, with the same arithmetic. Chosen over an overlap pass of its own because it acts
 * on the one row that holds the overlap, costs nothing where d̄ ≤ 0 and needs no second set of rows;
 * and the velocity pass (v_n → max(−e ṽ_n, 0) at active points) then takes even v_push out of a pair
 * pushed apart, so an overlap is undone at v_push by position and leaves ~no velocity. Measured (1/60 s,
 * 10 substeps): two spheres 0.2 m deep separate in 4 frames with |v| < 1 mm/s; the overlap-recovery
 * stack (3 pairs 0.25 m deep) stands up with its top box at ≤ 4.0 m/s (softstep-cpu 3.3, Rapier 3.5),
 * its energy up by exactly the potential energy of the lift (test/xpbd-overlap.test.ts).
 *
 * Rolling spheres. A point fixed on a sphere (its anchor) turns with it: rolling at ω it rises
 * r(1 − cos ωt) off the ground within the frame, and the normal correction applied there has a lever
 * arm along the ground, which brakes the rolling. A sphere's contact point along a fixed n is always its
 * centre ∓ r n (what the narrow phase would find again each substep), so for a sphere the point is taken
 * there every substep, r = ∓ r n (A: +r n, B: −r n). Other shapes keep the anchors of detection (their
 * contact points are corners or face points for the frame).
 */
import type { BodyDesc } from '../../model/world.js';
import type { CompiledWorld } from '../../model/compiled.js';
import type { ContactList } from '../../rows/contact.js';
import type { ManifoldStore } from '../../collision/manifolds.js';
import type { RigidBodyCore } from '../../rigid/body.js';
import { integrateOrientation, integrateOrientationFrom, quatRelative, rotateByQuat, rotateByQuatInverse } from '../../rigid/quat.js';
import { COLLISION_SWEEPS, RESTITUTION_THRESHOLD } from '../../rows/block-solver.js';
import { colourJonesPlassmannCpu, CONTACT_COLOUR_ROUNDS, CONTACT_MAX_COLOURS } from '../../gpu/colouring.js';

export class XpbdContacts {
  /** per body: a sphere's radius (rolling contact point), NaN for every other shape */
  private readonly sphereRadius: Float64Array;
  private list: ContactList | null = null;
  // per point
  private lambdaN = new Float64Array(0);
  /** ṽ_n: the normal velocity before the substep's solve */
  private normalVelocityBefore = new Float64Array(0);
  /** the point was active (d > 0, λ_n > 0) in the substep */
  private active = new Uint8Array(0);
  /** deepest d met by the last substep's projection (m; diagnostics) */
  deepest = 0;
  // scratch: arms (A at 0, B at 3), world I⁻¹ (A at 6, B at 15), points, anchors
  private readonly s = new Float64Array(48);

  constructor(
    bodies: readonly BodyDesc[],
    private readonly w: CompiledWorld,
    private readonly rigid: RigidBodyCore,
    private readonly restitutionThreshold = RESTITUTION_THRESHOLD,
    /** v_push (m/s): the speed at which an overlap the bodies start a substep with is taken out (header) */
    private readonly pushOutSpeed = PUSH_OUT_SPEED,
  ) {
    this.sphereRadius = new Float64Array(w.bodyCount).fill(NaN);
    bodies.forEach((b, i) => {
      if (b.shape.type === 'sphere') this.sphereRadius[i] = b.shape.radius;
    });
  }

  /**
   * The frame's contact points (found once at its start), each naming its record in the pair's
   * persistent manifold (collision/manifolds.ts; ContactList.manifoldPoint = slot · 4 + k): its anchors
   * a_A, a_B (local) are the record's, not the list's (a refreshed record keeps the anchors of its last
   * full narrow phase, and the pipeline leaves the list's copies unwritten then: rowFields off).
   * Static friction's reference (refA, refB: local anchors whose relative tangential position is held;
   * slip: their Δp = (p_B − p_A) − (p_B − p_A)_ref at the substep's start, 0 when taken: slipSinceStart) is taken now from the record's anchors, except
   * for a point that persists and was stuck at the end of the last frame: it keeps the reference it had,
   * so a resting contact is held where it came to rest (departure 3). "Persists" is the store's verdict
   * (ManifoldStore.origin: the old point whose impulses the new one took, matched by feature key or by
   * nearest anchor, or itself when coherence kept the points): the references are kept per record
   * (slot · 4 + k) and follow that match, with nothing rebuilt or allocated per frame once grown. A
   * slot that this solver did not see in the frame before (its stamp moved by more than one: it slept,
   * or the pipeline ran twice in a frame after a wake) takes fresh references.
   */
  begin(list: ContactList, store: ManifoldStore, h: number): void {
    const n = list.count;
    const P = 4 * store.capacity;
    if (this.recordStuck.length < P) {
      const grow = (a: Float64Array, k: number) => {
        const f = new Float64Array(k * P);
        f.set(a);
        return f;
      };
      this.recordRefA = grow(this.recordRefA, 3);
      this.recordRefB = grow(this.recordRefB, 3);
      this.recordSlip = grow(this.recordSlip, 3);
      const st = new Uint8Array(P);
      st.set(this.recordStuck);
      this.recordStuck = st;
      const seen = new Int32Array(store.capacity).fill(-2);
      seen.set(this.slotSeen);
      this.slotSeen = seen;
    }
    // the last frame's references back onto their records (by the record each point had then)
    for (let c = 0; c < this.lastCount; c++) {
      const p = this.record[c], c3 = 3 * c, p3 = 3 * p;
      this.recordStuck[p] = this.stuck[c];
      if (!this.stuck[c]) continue;
      for (let k = 0; k < 3; k++) {
        this.recordRefA[p3 + k] = this.refA[c3 + k];
        this.recordRefB[p3 + k] = this.refB[c3 + k];
        this.recordSlip[p3 + k] = this.slip[c3 + k];
      }
    }
    if (this.lambdaN.length < n) {
      const cap = Math.max(n, 2 * this.lambdaN.length, 16);
      this.lambdaN = new Float64Array(cap);
      this.normalVelocityBefore = new Float64Array(cap);
      this.active = new Uint8Array(cap);
      this.stuck = new Uint8Array(cap);
      this.record = new Int32Array(cap);
      this.lambdaT1 = new Float64Array(cap);
      this.lambdaT2 = new Float64Array(cap);
      this.warm = new Float64Array(3 * cap);
      this.anchorA = new Float64Array(3 * cap);
      this.anchorB = new Float64Array(3 * cap);
      this.refA = new Float64Array(3 * cap);
      this.refB = new Float64Array(3 * cap);
      this.slip = new Float64Array(3 * cap);
    }
    const { position: x, orientation: q } = this.w;
    const s = this.s, stamp = store.stamp, origin = store.origin;
    for (let c = 0; c < n; c++) {
      const p = list.manifoldPoint[c], slot = p >> 2, c3 = 3 * c, p3 = 3 * p;
      this.record[c] = p;
      // the block's first iterate: the record's last forces as a substep's λ = h² f (project)
      this.warm[c3] = h * h * store.normalImpulse[p];
      this.warm[c3 + 1] = h * h * store.tangentImpulse1[p];
      this.warm[c3 + 2] = h * h * store.tangentImpulse2[p];
      for (let k = 0; k < 3; k++) {
        this.anchorA[c3 + k] = store.anchorA[p3 + k];
        this.anchorB[c3 + k] = store.anchorB[p3 + k];
      }
      // the old point this one follows (the store's match), when this solver saw the slot last frame
      const o = this.slotSeen[slot] === stamp[slot] - 1 ? origin[p] : -1;
      const from = o >= 0 ? 4 * slot + o : -1;
      if (from >= 0 && this.recordStuck[from]) {
        const f3 = 3 * from;
        for (let k = 0; k < 3; k++) {
          this.refA[c3 + k] = this.recordRefA[f3 + k];
          this.refB[c3 + k] = this.recordRefB[f3 + k];
          this.slip[c3 + k] = this.recordSlip[f3 + k];
        }
      } else {
        // a new reference: the record's anchors, Δp = 0 at the pose now (the first substep's start)
        for (let k = 0; k < 3; k++) {
          this.refA[c3 + k] = this.anchorA[c3 + k];
          this.refB[c3 + k] = this.anchorB[c3 + k];
          this.slip[c3 + k] = 0;
        }
      }
    }
    // each point's manifold end, once per frame (manifoldEnd reads it; the list does not change in the frame)
    if (this.endOf.length < n) this.endOf = new Int32Array(this.lambdaN.length);
    for (let m0 = 0; m0 < n; ) {
      const m1 = this.manifoldEndOf(list, m0);
      for (let c = m0; c < m1; c++) this.endOf[c] = m1;
      m0 = m1;
    }
    // marked seen after every point read its origin (a slot's points share one stamp)
    for (let c = 0; c < n; c++) {
      const slot = list.manifoldPoint[c] >> 2;
      this.slotSeen[slot] = stamp[slot];
    }
    this.stuck.fill(0, 0, n);
    this.lastCount = n;
    this.list = list;
    this.store = store;
    this.sweepOrder = this.colourOrder ? this.colourOrderOf(list) : null;
  }
  /**
   * Project and run the velocity pass over the manifolds colour by colour (gpu/colouring.ts's
   * colours, by its CPU twin, the overflow set last; by first point within a colour), as xpbd-gpu sweeps them,
   * instead of in list order: xpbd-gpu's CPU twin (a Gauss–Seidel sweep's result depends on its order).
   * Off by default (ContactSolver.colourOrder is softstep's).
   */
  colourOrder = false;
  /**
   * Restitution's collision propagation first in the velocity pass (collide), where a point has e > 0.
   * Off: Müller's rule alone (§3.6, v_n → max(−e ṽ_n, 0) at the active points). On by default, and on
   * xpbd-gpu (xpbd/contacts.wgsl.ts xc_collide).
   */
  collisionPropagation = true;
  /**
   * The velocity pass's friction as one stick block per manifold (departure 4's block: normal rows and
   * tangent pairs in their discs to convergence, else the normal block and the per-point rule from the
   * same velocities), as xpbd-gpu does it (contacts.wgsl.ts): on for xpbd-gpu's CPU twin. Off (the
   * default): the normal block, then the text's per-point rule point after point (velocityPassPoints).
   */
  velocityBlock = false;
  /** the manifolds' first points in sweep order (colourOrder), else null: list order */
  private sweepOrder: Int32Array | null = null;

  /** The first point of every manifold of `list`, grouped by colour (colourOrder). */
  private colourOrderOf(list: ContactList): Int32Array {
    const starts: number[] = [];
    for (let m0 = 0; m0 < list.count; m0 = this.manifoldEndOf(list, m0)) starts.push(m0);
    const bodyA = Int32Array.from(starts, (c) => list.bodyA[c]), bodyB = Int32Array.from(starts, (c) => list.bodyB[c]);
    const m = this.w.inverseMass;
    const isStatic = Uint8Array.from(m, (x) => (x > 0 ? 0 : 1));
    const { colour } = colourJonesPlassmannCpu(bodyA, bodyB, starts.length, isStatic, m.length, { maxColours: CONTACT_MAX_COLOURS, rounds: CONTACT_COLOUR_ROUNDS });
    const order = Int32Array.from(starts.keys());
    order.sort((x, y) => colour[x] - colour[y] || x - y);
    return Int32Array.from(order, (k) => starts[k]);
  }
  private manifoldEndOf(list: ContactList, c: number): number {
    const a = list.bodyA[c], b = list.bodyB[c];
    let e = c + 1;
    while (e < list.count && list.bodyA[e] === a && list.bodyB[e] === b) e++;
    return e;
  }
  private store: ManifoldStore | null = null;
  /** per point of the frame: its manifold record (slot · 4 + k), its anchors (local, the record's), static friction's reference */
  private record = new Int32Array(0);
  private anchorA = new Float64Array(0);
  private anchorB = new Float64Array(0);
  private refA = new Float64Array(0);
  private refB = new Float64Array(0);
  /** static friction's Δp of each point's reference pair at the substep's start (world, m: slipSinceStart) */
  private slip = new Float64Array(0);
  /** per point: static friction's λ_t (N·s², along t₁, t₂) of the last substep's position pass, and dynamic friction's impulse h λ_t added by its velocity pass */
  private lambdaT1 = new Float64Array(0);
  private lambdaT2 = new Float64Array(0);
  /** whether this substep sums λ_t (the frame's last: beginSubstep) */
  private tangentForces = true;
  /**
   * per point: the position pass's block λ (n, t₁, t₂; N·s²) of the substep before, its next first
   * iterate (project: the block is solved to convergence from there; the store's forces at a frame's start);
   * the three side by side at 3c (one stream and mostly one cache line a point, where three arrays took three)
   */
  private warm = new Float64Array(0);
  /** per manifold record: the reference it had at the end of the last frame, and whether it was stuck then */
  private recordRefA = new Float64Array(0);
  private recordRefB = new Float64Array(0);
  private recordSlip = new Float64Array(0);
  private recordStuck = new Uint8Array(0);
  /** per slot: the store's stamp when this solver last read it (begin) */
  private slotSeen = new Int32Array(0);
  /** the point held by static friction in the last substep */
  private stuck = new Uint8Array(0);
  private lastCount = 0;

  get count(): number {
    return this.list ? this.list.count : 0;
  }

  /**
   * Before the substep h's solve (after the prediction): λ = 0, ṽ_n per point, no point active, the push-out
   * bound v_push h. `last`: the frame's last substep, whose forces storeImpulses keeps; λ_t (lambdaT1, T2)
   * is read by storeImpulses alone, so the substeps before do not sum it (the same bits stored).
   */
  beginSubstep(h: number, last = true): void {
    const list = this.list!;
    this.pushPerSubstep = this.pushOutSpeed * h;
    const n = list.count;
    this.lambdaN.fill(0, 0, n);
    this.tangentForces = last;
    if (last) {
      this.lambdaT1.fill(0, 0, n);
      this.lambdaT2.fill(0, 0, n);
    }
    this.active.fill(0, 0, n);
    this.deepest = 0;
    // ṽ_n is read only where e > 0 (the velocity pass's restitution target, collide): elsewhere −e ṽ_n = 0
    const e = list.restitution;
    for (let c = 0; c < n; c++) {
      if (!(e[c] > 0)) continue;
      this.arms(c);
      this.normalVelocityBefore[c] = this.relativeNormalVelocity(c);
    }
    this.recordCollisionInput();
  }

  /** The world lever arms of point c at the current poses: r_A → s[0..3), r_B → s[3..6). */
  private arms(c: number): void {
    const list = this.list!, s = this.s;
    const { orientation: q } = this.w;
    const o3 = 3 * c;
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? list.bodyA[c] : list.bodyB[c];
      const ro = 3 * side;
      const radius = this.sphereRadius[body];
      if (radius === radius) {
        // sphere: the point along the fixed n, A's towards B (+n), B's towards A (−n)
        const sign = side === 0 ? radius : -radius;
        s[ro] = sign * list.normal[o3];
        s[ro + 1] = sign * list.normal[o3 + 1];
        s[ro + 2] = sign * list.normal[o3 + 2];
      } else {
        rotateByQuat(q, 4 * body, side === 0 ? this.anchorA : this.anchorB, o3, s, ro);
      }
    }
  }

  /** Keeps the arms s[0..6) and the relative velocity s[42..45) of the manifold's point k (< 4). */
  private saveArms(k: number): void {
    const s = this.s, a = this.armCache, o = 9 * k;
    a[o] = s[0]; a[o + 1] = s[1]; a[o + 2] = s[2]; a[o + 3] = s[3]; a[o + 4] = s[4]; a[o + 5] = s[5];
    a[o + 6] = s[42]; a[o + 7] = s[43]; a[o + 8] = s[44];
  }
  /** Puts back what saveArms(k) kept. */
  private loadArms(k: number): void {
    const s = this.s, a = this.armCache, o = 9 * k;
    s[0] = a[o]; s[1] = a[o + 1]; s[2] = a[o + 2]; s[3] = a[o + 3]; s[4] = a[o + 4]; s[5] = a[o + 5];
    s[42] = a[o + 6]; s[43] = a[o + 7]; s[44] = a[o + 8];
  }
  private readonly armCache = new Float64Array(9 * 8);

  /** n · ((v_B + ω_B × r_B) − (v_A + ω_A × r_A)) of point c, arms in s[0..6). */
  private relativeNormalVelocity(c: number): number {
    this.relativeVelocity(c, this.s, 42);
    const n = this.list!.normal, o3 = 3 * c, s = this.s;
    return n[o3] * s[42] + n[o3 + 1] * s[43] + n[o3 + 2] * s[44];
  }

  /** (v_B + ω_B × r_B) − (v_A + ω_A × r_A) of point c into out[o..o+3), arms in s[0..6). */
  private relativeVelocity(c: number, out: Float64Array, o: number): void {
    const list = this.list!, s = this.s;
    const { linearVelocity: v, angularVelocity: om } = this.w;
    let x = 0, y = 0, z = 0;
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? list.bodyA[c] : list.bodyB[c];
      const sign = side === 0 ? -1 : 1, bo = 3 * body, ro = 3 * side;
      const rx = s[ro], ry = s[ro + 1], rz = s[ro + 2];
      const wx = om[bo], wy = om[bo + 1], wz = om[bo + 2];
      x += sign * (v[bo] + wy * rz - wz * ry);
      y += sign * (v[bo + 1] + wz * rx - wx * rz);
      z += sign * (v[bo + 2] + wx * ry - wy * rx);
    }
    out[o] = x; out[o + 1] = y; out[o + 2] = z;
  }

  /** World I⁻¹ of both bodies of point c at their current orientation → s[6..15), s[15..24). */
  private inertias(c: number): void {
    const list = this.list!;
    const m = this.w.inverseMass;
    if (m[list.bodyA[c]] !== 0) this.rigid.worldInverseInertiaOf(list.bodyA[c], this.s, 6);
    if (m[list.bodyB[c]] !== 0) this.rigid.worldInverseInertiaOf(list.bodyB[c], this.s, 15);
  }

  /**
   * w_A(u) + w_B(u) = Σ mᵢ⁻¹ + (rᵢ × u)ᵀ Iᵢ⁻¹ (rᵢ × u) of point c along unit u = vecIn[0..3), into
   * vecIn[3]; arms and I⁻¹ in s. (u and w in vecIn, not as arguments and a return value: row's note.)
   */
  private generalizedInverseMass(c: number): void {
    const list = this.list!, s = this.s, m = this.w.inverseMass, u = this.vecIn;
    const ux = u[0], uy = u[1], uz = u[2];
    let sum = 0;
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? list.bodyA[c] : list.bodyB[c];
      const mi = m[body];
      if (mi === 0) continue;
      const ro = 3 * side, io = 6 + 9 * side;
      const rx = s[ro], ry = s[ro + 1], rz = s[ro + 2];
      const cx = ry * uz - rz * uy, cy = rz * ux - rx * uz, cz = rx * uy - ry * ux;
      sum += mi;
      sum += cx * (s[io] * cx + s[io + 1] * cy + s[io + 2] * cz);
      sum += cy * (s[io + 3] * cx + s[io + 4] * cy + s[io + 5] * cz);
      sum += cz * (s[io + 6] * cx + s[io + 7] * cy + s[io + 8] * cz);
    }
    u[3] = sum;
  }
  /** generalizedInverseMass's u (in) and w (out), accumulate's P */
  private readonly vecIn = new Float64Array(4);


  /**
   * Adds point c's share to the manifold's sums: B takes +P, A takes −P at the arms in s (I⁻¹ in s):
   * Δ(x or v) += ±m⁻¹ P, Δ(θ or ω) += I⁻¹ (r × ±P)  →  acc[0..6) for A, acc[6..12) for B; P in vecIn[0..3).
   */
  private accumulate(c: number): void {
    const list = this.list!, s = this.s, m = this.w.inverseMass, acc = this.acc;
    const px = this.vecIn[0], py = this.vecIn[1], pz = this.vecIn[2];
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? list.bodyA[c] : list.bodyB[c];
      const mi = m[body];
      if (mi === 0) continue; // fixed: never written
      const sign = side === 0 ? -1 : 1, ro = 3 * side, io = 6 + 9 * side, ao = 6 * side;
      const qx = sign * px, qy = sign * py, qz = sign * pz;
      const rx = s[ro], ry = s[ro + 1], rz = s[ro + 2];
      const tx = ry * qz - rz * qy, ty = rz * qx - rx * qz, tz = rx * qy - ry * qx;
      acc[ao] += mi * qx; acc[ao + 1] += mi * qy; acc[ao + 2] += mi * qz;
      acc[ao + 3] += s[io] * tx + s[io + 1] * ty + s[io + 2] * tz;
      acc[ao + 4] += s[io + 3] * tx + s[io + 4] * ty + s[io + 5] * tz;
      acc[ao + 5] += s[io + 6] * tx + s[io + 7] * ty + s[io + 8] * tz;
    }
  }

  /**
   * Applies the manifold's sums to its two bodies and clears them: positions x += Δx,
   * q += ½ (0, Δθ) ⊗ q (normalised); or velocities v += Δv, ω += Δω.
   */
  private commit(a: number, b: number, velocity: boolean): void {
    const acc = this.acc, m = this.w.inverseMass;
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? a : b;
      const ao = 6 * side;
      if (m[body] !== 0) {
        const bo = 3 * body;
        const lin = velocity ? this.w.linearVelocity : this.w.position;
        lin[bo] += acc[ao]; lin[bo + 1] += acc[ao + 1]; lin[bo + 2] += acc[ao + 2];
        if (velocity) {
          const om = this.w.angularVelocity;
          om[bo] += acc[ao + 3]; om[bo + 1] += acc[ao + 4]; om[bo + 2] += acc[ao + 5];
        } else {
          integrateOrientation(this.w.orientation, 4 * body, acc[ao + 3], acc[ao + 4], acc[ao + 5], 1);
        }
      }
      acc[ao] = 0; acc[ao + 1] = 0; acc[ao + 2] = 0; acc[ao + 3] = 0; acc[ao + 4] = 0; acc[ao + 5] = 0;
    }
  }
  private readonly acc = new Float64Array(12);

  /** The end of the manifold that starts at point c (its points are consecutive: one pair, one n; begin finds them once a frame). */
  private manifoldEnd(c: number): number {
    return this.endOf[c];
  }
  /** per point of the frame: the end of its manifold (begin) */
  private endOf = new Int32Array(0);

  /**
   * The manifold whose block is laid out next (its first point m0): its two bodies' inverse masses and
   * its basis n, t₁, t₂ (one per manifold: collision/pipeline.ts), which the block's rows and its Δ read.
   */
  private beginBlock(m0: number): void {
    const list = this.list!, m = this.w.inverseMass, o3 = 3 * m0, u = this.bBasis;
    this.bMassA = m[list.bodyA[m0]];
    this.bMassB = m[list.bodyB[m0]];
    u[0] = list.normal[o3]; u[1] = list.normal[o3 + 1]; u[2] = list.normal[o3 + 2];
    u[3] = list.tangent1[o3]; u[4] = list.tangent1[o3 + 1]; u[5] = list.tangent1[o3 + 2];
    u[6] = list.tangent2[o3]; u[7] = list.tangent2[o3 + 1]; u[8] = list.tangent2[o3 + 2];
  }
  private bMassA = 0;
  private bMassB = 0;
  /** the block's manifold basis: n, t₁, t₂ (the directions of row kinds 0, 1, 2) */
  private readonly bBasis = new Float64Array(9);

  /**
   * Row i of the manifold block: J_i = (−u, −(r_A × u), u, r_B × u) for a point along unit u (arms and
   * I⁻¹ in s). Kept in the lever-arm form, no 12-wide J: c_A = r_A × u, c_B = r_B × u, their images
   * W_A = I_A⁻¹ c_A, W_B = I_B⁻¹ c_B (0 on a fixed body), and K_ii = J_i M⁻¹ J_iᵀ = w_A(u) + w_B(u) =
   * (m_A⁻¹ + m_B⁻¹)|u|² + c_A · W_A + c_B · W_B; target b, λ = 0; bounds by kind (the caller's).
   * u and b come in rowIn (u_x, u_y, u_z, b), not as arguments: doubles passed to (or returned by) a
   * call V8 does not inline are boxed as heap numbers, and this one ran per row of every block of
   * every substep (measured on the 10k rain: the position and velocity passes allocated ~23 MB a
   * frame, ~10 ms a frame of scavenges).
   */
  private row(i: number): void {
    const s = this.s, C = this.bC, W = this.bW, j = 6 * i;
    const u = this.rowIn, ux = u[0], uy = u[1], uz = u[2], b = u[3];
    const mA = this.bMassA, mB = this.bMassB;
    const ax = s[1] * uz - s[2] * uy, ay = s[2] * ux - s[0] * uz, az = s[0] * uy - s[1] * ux;
    const bx = s[4] * uz - s[5] * uy, by = s[5] * ux - s[3] * uz, bz = s[3] * uy - s[4] * ux;
    C[j] = ax; C[j + 1] = ay; C[j + 2] = az;
    C[j + 3] = bx; C[j + 4] = by; C[j + 5] = bz;
    let d = (mA + mB) * (ux * ux + uy * uy + uz * uz);
    if (mA !== 0) {
      const wx = s[6] * ax + s[7] * ay + s[8] * az, wy = s[9] * ax + s[10] * ay + s[11] * az, wz = s[12] * ax + s[13] * ay + s[14] * az;
      W[j] = wx; W[j + 1] = wy; W[j + 2] = wz;
      d += ax * wx + ay * wy + az * wz;
    } else {
      W[j] = 0; W[j + 1] = 0; W[j + 2] = 0;
    }
    if (mB !== 0) {
      const wx = s[15] * bx + s[16] * by + s[17] * bz, wy = s[18] * bx + s[19] * by + s[20] * bz, wz = s[21] * bx + s[22] * by + s[23] * bz;
      W[j + 3] = wx; W[j + 4] = wy; W[j + 5] = wz;
      d += bx * wx + by * wy + bz * wz;
    } else {
      W[j + 3] = 0; W[j + 4] = 0; W[j + 5] = 0;
    }
    this.bDiag[i] = d;
    this.bTarget[i] = b;
    // the sweeps' copies, scaled by 1 / K_ii (solveBlock: Δλ_i = (b_i − J_i Δ) / K_ii in one product less)
    const inv = 1 / d, Cs = this.bCScaled;
    Cs[j] = ax * inv; Cs[j + 1] = ay * inv; Cs[j + 2] = az * inv;
    Cs[j + 3] = bx * inv; Cs[j + 4] = by * inv; Cs[j + 5] = bz * inv;
    this.bLinScaled[i] = (mA + mB) * inv;
    this.bTargetScaled[i] = b * inv;
    this.bLambda[i] = 0;
  }

  /**
   * The block's Δ = M⁻¹ Jᵀ λ held in 9 numbers (bSum), from which every J_i Δ follows without K:
   *   Λ_k = Σ_{rows j of kind k} λ_j (k = 0, 1, 2: n, t₁, t₂),  θ_A = Σ_j W_A,j λ_j,  θ_B = Σ_j W_B,j λ_j
   *   Δx_A = −m_A⁻¹ (Λ₀ n + Λ₁ t₁ + Λ₂ t₂),  Δθ_A = −θ_A,  Δx_B = m_B⁻¹ (…),  Δθ_B = θ_B
   *   J_i Δ = (m_A⁻¹ + m_B⁻¹) Λ_kind(i) + c_A,i · θ_A + c_B,i · θ_B
   * (n, t₁, t₂ orthonormal: u_i · u_j is 1 for rows of one kind, 0 otherwise, as K's linear part).
   * Sets bSum from bLambda over `rows` rows.
   */
  private sumsOf(rows: number): void {
    const W = this.bW, lam = this.bLambda, kind = this.bKind, S = this.bSum;
    S[0] = 0; S[1] = 0; S[2] = 0; S[3] = 0; S[4] = 0; S[5] = 0; S[6] = 0; S[7] = 0; S[8] = 0;
    for (let i = 0; i < rows; i++) {
      const l = lam[i];
      if (l === 0) continue;
      const j = 6 * i;
      S[kind[i]] += l;
      S[3] += W[j] * l; S[4] += W[j + 1] * l; S[5] += W[j + 2] * l;
      S[6] += W[j + 3] * l; S[7] += W[j + 4] * l; S[8] += W[j + 5] * l;
    }
  }
  /** Λ₀, Λ₁, Λ₂, θ_A (3), θ_B (3) of the last block solved (sumsOf) */
  private readonly bSum = new Float64Array(9);
  /** row's input: the row's unit direction u and its target b */
  private readonly rowIn = new Float64Array(4);

  /**
   * Whether the last block solve met the targets of rows [from, to) (the tangent rows) to
   * STICK_TOLERANCE of their norm: |target − J Δ| ≤ tol |target| (the stick tests).
   */
  private targetsMet(from: number, to: number): boolean {
    return this.unmet(from, to) <= STICK_TOLERANCE;
  }
  /** |target − J Δ| / |target| over rows [from, to) after the last block solve (targetsMet, restickBlock) */
  private unmet(from: number, to: number): number {
    const C = this.bC, S = this.bSum, kind = this.bKind, lin = this.bMassA + this.bMassB;
    let r2 = 0, b2 = 0;
    for (let i = from; i < to; i++) {
      const j = 6 * i;
      const jd = lin * S[kind[i]] + (C[j] * S[3] + C[j + 1] * S[4] + C[j + 2] * S[5]) + (C[j + 3] * S[6] + C[j + 4] * S[7] + C[j + 5] * S[8]);
      r2 += (this.bTarget[i] - jd) ** 2;
      b2 += this.bTarget[i] ** 2;
    }
    return r2 <= STICK_TOLERANCE * STICK_TOLERANCE * b2 ? 0 : Math.sqrt(r2 / b2);
  }

  /**
   * Projected Gauss–Seidel on the manifold's block of `rows` rows (K λ = b, K = J M⁻¹ Jᵀ, to
   * convergence: up to BLOCK_SWEEPS sweeps over ≤ 12 rows, fewer once converged): rows kind 0 normal
   * (λ ≥ 0 when `oneSided`, else free), then per point a pair of tangent rows (kind 1 and 2: free when
   * `bound` < 0, else the pair held in the disc |λ_t| ≤ bound[pair]). The result Δ = M⁻¹ Jᵀ λ in bSum.
   * A row's update reads J_i M⁻¹ Jᵀ λ = J_i Δ from Δ kept up to date in its 9 numbers (sumsOf: 7 terms
   * to read and 7 to write a row, with a fixed body 4 and 4) instead of forming K (66 sums of 6
   * products a 12-row block) and reading rows terms of it: the same iteration in exact arithmetic, up
   * to rounding (profile, 10k rain: the K form's solveBlock was 37 % of the frame).
   */
  private solveBlock(rows: number, oneSided: boolean, stickTest: boolean, velocityFloor: boolean): boolean {
    const floor = this.floors[velocityFloor ? 1 : 0];
    const lam = this.bLambda, kind = this.bKind, W = this.bW, Cs = this.bCScaled, Q = this.bLinScaled, G = this.bTargetScaled;
    const diag = this.bDiag, mu = this.bMu, bound = this.bBound, point = this.bPoint;
    // one point (its normal row, or its normal and tangent pair): solved exactly, not swept
    if (rows === 1 || (rows === 3 && kind[1] === 1 && kind[2] === 2)) return this.solvePoint(rows, oneSided);
    // Δ of the first iterate (0, or the warm start's λ)
    this.sumsOf(rows);
    const S = this.bSum;
    let L0 = S[0], L1 = S[1], L2 = S[2];
    let ax = S[3], ay = S[4], az = S[5], bx = S[6], by = S[7], bz = S[8];
    // the rows are laid out normals first (kind 0), then the tangent pairs (kinds 1, 2): swept in two runs
    let normals = 0;
    while (normals < rows && kind[normals] === 0) normals++;
    let done = true;
    for (let sweep = 0; sweep < BLOCK_SWEEPS; sweep++) {
      let change = 0, size = 0, resid = 0;
      for (let i = 0; i < normals; i++) {
        if (!(diag[i] > 0)) continue;
        const j = 6 * i;
        // (b_i − J_i Δ) / K_ii from the row's scaled copies (bScaled: c / K_ii, b / K_ii, (m_A⁻¹ + m_B⁻¹) / K_ii)
        const old = lam[i];
        let dl = G[i] - (Q[i] * L0 + (Cs[j] * ax + Cs[j + 1] * ay + Cs[j + 2] * az) + (Cs[j + 3] * bx + Cs[j + 4] * by + Cs[j + 5] * bz));
        let next = old + dl;
        if (oneSided && next < 0) {
          next = 0;
          dl = -old;
        }
        if (Math.abs(next) > size) size = Math.abs(next);
        if (dl === 0) continue;
        if (Math.abs(dl) > change) change = Math.abs(dl);
        if (Math.abs(dl) * diag[i] > resid) resid = Math.abs(dl) * diag[i];
        lam[i] = next;
        L0 += dl;
        ax += W[j] * dl; ay += W[j + 1] * dl; az += W[j + 2] * dl;
        bx += W[j + 3] * dl; by += W[j + 4] * dl; bz += W[j + 5] * dl;
      }
      for (let i = normals; i < rows; i += 2) {
        // the pair (i, i + 1): t₁ free, then t₂ and the pair held in the disc of radius bound
        let j = 6 * i;
        if (diag[i] > 0) {
          const old = lam[i];
          const dl = G[i] - (Q[i] * L1 + (Cs[j] * ax + Cs[j + 1] * ay + Cs[j + 2] * az) + (Cs[j + 3] * bx + Cs[j + 4] * by + Cs[j + 5] * bz));
          const next = old + dl;
          if (Math.abs(next) > size) size = Math.abs(next);
          if (dl !== 0) {
            if (Math.abs(dl) > change) change = Math.abs(dl);
            if (Math.abs(dl) * diag[i] > resid) resid = Math.abs(dl) * diag[i];
            lam[i] = next;
            L1 += dl;
            ax += W[j] * dl; ay += W[j + 1] * dl; az += W[j + 2] * dl;
            bx += W[j + 3] * dl; by += W[j + 4] * dl; bz += W[j + 5] * dl;
          }
        }
        const i2 = i + 1;
        if (!(diag[i2] > 0)) continue;
        j += 6;
        const old = lam[i2];
        let dl = G[i2] - (Q[i2] * L2 + (Cs[j] * ax + Cs[j + 1] * ay + Cs[j + 2] * az) + (Cs[j + 3] * bx + Cs[j + 4] * by + Cs[j + 5] * bz));
        let next = old + dl;
        const r = mu[i2] > 0 ? mu[i2] * lam[point[i2]] : bound[i2];
        if (r >= 0) {
          const t1 = lam[i], l = Math.sqrt(t1 * t1 + next * next);
          if (l > r) {
            const f = l > 0 ? r / l : 0;
            const scaled = t1 * f, d1 = scaled - t1;
            lam[i] = scaled;
            if (d1 !== 0) {
              // the pair's first row scaled too: its share of Δ follows
              const k = j - 6;
              L1 += d1;
              ax += W[k] * d1; ay += W[k + 1] * d1; az += W[k + 2] * d1;
              bx += W[k + 3] * d1; by += W[k + 4] * d1; bz += W[k + 5] * d1;
            }
            next *= f;
            dl = next - old;
          }
        }
        if (Math.abs(next) > size) size = Math.abs(next);
        if (dl === 0) continue;
        if (Math.abs(dl) > change) change = Math.abs(dl);
        if (Math.abs(dl) * diag[i2] > resid) resid = Math.abs(dl) * diag[i2];
        lam[i2] = next;
        L2 += dl;
        ax += W[j] * dl; ay += W[j + 1] * dl; az += W[j + 2] * dl;
        bx += W[j + 3] * dl; by += W[j + 4] * dl; bz += W[j + 5] * dl;
      }
      if (change <= BLOCK_CONVERGED * size || resid <= floor) break; // converged: a sweep changed no λ by more than this fraction
      // a stick test's block still cycling after GIVE_UP_SWEEPS (its discs clamping back and forth: it
      // slides) fails the test: stopped here, its Δ unused (GIVE_UP_CHANGE says what that changes)
      if (stickTest && sweep === GIVE_UP_SWEEPS - 1 && change > GIVE_UP_CHANGE * size) {
        done = false;
        break;
      }
    }
    S[0] = L0; S[1] = L1; S[2] = L2;
    S[3] = ax; S[4] = ay; S[5] = az; S[6] = bx; S[7] = by; S[8] = bz;
    return done;
  }
  /**
   * solveBlock for a manifold of one point: the projection of Müller et al. 2020 §3.5 at that point, in
   * closed form. Its normal row alone: Δλ_n = d / (w_A + w_B) (§3.3's Δλ with α = 0, the block's
   * K₀₀ = w_A + w_B), λ_n ≥ 0 when `oneSided`. Its normal and tangent pair (the point's 3×3 K = J M⁻¹ Jᵀ in
   * the frame n, t₁, t₂, positive definite: K ≥ (m_A⁻¹ + m_B⁻¹) I): λ = K⁻¹ b, the one solution the
   * swept block converges to when it lies in the disc; static friction holds (§3.5: |λ_t| ≤ μ_s λ_n;
   * the velocity pass: |P_t| ≤ its fixed bound) iff it does (and λ_n ≥ 0 for `oneSided`), and then Δ = M⁻¹ Jᵀ λ.
   * Outside it, the point slides: false (the caller solves the normal row alone, as for a block that fails
   * its stick test). The swept block reached the same answer to BLOCK_CONVERGED, or gave up (measured
   * on the 10k rain: 1.2 M one-point blocks of 3 rows gave up after 8 sweeps, 0.9 M ran 2).
   * K's off-diagonal terms K_ij = c_A,i · W_A,j + c_B,i · W_B,j (the linear part is 0: u_i ⊥ u_j).
   */
  private solvePoint(rows: number, oneSided: boolean): boolean {
    const C = this.bC, W = this.bW, lam = this.bLambda, target = this.bTarget;
    const k00 = this.bDiag[0];
    if (!(k00 > 0)) return false;
    if (rows === 1) {
      let l = target[0] / k00;
      if (oneSided && l < 0) l = 0;
      lam[0] = l;
    } else {
      const k01 = C[0] * W[6] + C[1] * W[7] + C[2] * W[8] + (C[3] * W[9] + C[4] * W[10] + C[5] * W[11]);
      const k02 = C[0] * W[12] + C[1] * W[13] + C[2] * W[14] + (C[3] * W[15] + C[4] * W[16] + C[5] * W[17]);
      const k12 = C[6] * W[12] + C[7] * W[13] + C[8] * W[14] + (C[9] * W[15] + C[10] * W[16] + C[11] * W[17]);
      const k11 = this.bDiag[1], k22 = this.bDiag[2];
      // λ = K⁻¹ b by the adjugate of the symmetric K
      const c00 = k11 * k22 - k12 * k12, c01 = k02 * k12 - k01 * k22, c02 = k01 * k12 - k02 * k11;
      const c11 = k00 * k22 - k02 * k02, c12 = k01 * k02 - k00 * k12, c22 = k00 * k11 - k01 * k01;
      const det = k00 * c00 + k01 * c01 + k02 * c02;
      if (!(det > 0)) return false;
      const inv = 1 / det, b0 = target[0], b1 = target[1], b2 = target[2];
      const ln = (c00 * b0 + c01 * b1 + c02 * b2) * inv;
      const l1 = (c01 * b0 + c11 * b1 + c12 * b2) * inv;
      const l2 = (c02 * b0 + c12 * b1 + c22 * b2) * inv;
      if (oneSided && ln < 0) return false;
      const mu = this.bMu[2];
      const radius = mu > 0 ? mu * ln : this.bBound[2];
      if (radius >= 0 && l1 * l1 + l2 * l2 > radius * radius) return false;
      lam[0] = ln;
      lam[1] = l1;
      lam[2] = l2;
    }
    this.sumsOf(rows);
    return true;
  }

  /**
   * solveBlock's residual floors: BLOCK_RESIDUAL (m, the position pass) and BLOCK_RESIDUAL / h (m/s, the
   * velocity pass; set by velocityPass), read from here rather than passed (a double passed to a call V8
   * does not inline is boxed: row's note)
   */
  private readonly floors = new Float64Array([BLOCK_RESIDUAL, BLOCK_RESIDUAL]);
  /** the velocity pass's h (velocityPass), read by its helpers rather than passed (floors' note) */
  private readonly passH = new Float64Array(1);

  /** per row of the block (≤ 12): c_A, c_B (6; row), W_A, W_B (6), K_ii, target, λ, bound, kind, μ, point */
  private readonly bC = new Float64Array(6 * 12);
  private readonly bW = new Float64Array(6 * 12);
  private readonly bDiag = new Float64Array(12);
  /** the sweeps' copies of c_A, c_B (6 a row), m_A⁻¹ + m_B⁻¹ and b, each divided by K_ii (row) */
  private readonly bCScaled = new Float64Array(6 * 12);
  private readonly bLinScaled = new Float64Array(12);
  private readonly bTargetScaled = new Float64Array(12);
  private readonly bTarget = new Float64Array(12);
  private readonly bLambda = new Float64Array(12);
  private readonly bBound = new Float64Array(12);
  private readonly bKind = new Uint8Array(12);
  /** μ of a tangent row whose disc follows its point's λ_n in the block (bPoint = the normal row); 0: bBound */
  private readonly bMu = new Float64Array(12);
  private readonly bPoint = new Int32Array(12);
  private readonly stick = new Uint8Array(4);

  /** Applies the block's Δ (bSum) to the manifold's two bodies: positions (x += Δx, q += ½ (0, Δθ) ⊗ q) or velocities. */
  private applyDelta(a: number, b: number, velocity: boolean): void {
    const S = this.bSum, u = this.bBasis;
    const px = S[0] * u[0] + S[1] * u[3] + S[2] * u[6];
    const py = S[0] * u[1] + S[1] * u[4] + S[2] * u[7];
    const pz = S[0] * u[2] + S[1] * u[5] + S[2] * u[8];
    const lin = velocity ? this.w.linearVelocity : this.w.position;
    const mA = this.bMassA, mB = this.bMassB;
    if (mA !== 0) {
      const bo = 3 * a;
      lin[bo] -= mA * px; lin[bo + 1] -= mA * py; lin[bo + 2] -= mA * pz;
      if (velocity) {
        const om = this.w.angularVelocity;
        om[bo] -= S[3]; om[bo + 1] -= S[4]; om[bo + 2] -= S[5];
      } else {
        integrateOrientationFrom(this.w.orientation, 4 * a, S, 3, true);
      }
    }
    if (mB !== 0) {
      const bo = 3 * b;
      lin[bo] += mB * px; lin[bo + 1] += mB * py; lin[bo + 2] += mB * pz;
      if (velocity) {
        const om = this.w.angularVelocity;
        om[bo] += S[6]; om[bo + 1] += S[7]; om[bo + 2] += S[8];
      } else {
        integrateOrientationFrom(this.w.orientation, 4 * b, S, 6, false);
      }
    }
  }

  /**
   * One pass over the manifolds, one after the other (header). A manifold's points (≤ 4, one pair,
   * one n) are solved together as one block: their normal rows (target d, λ_n ≥ 0) and, for the
   * points allowed to stick, two tangent rows each (target −Δp·t, the motion since the substep's
   * start undone), K = J M⁻¹ Jᵀ at the current pose, to convergence (solveBlock); a point whose
   * |λ_t| > μ_s λ_n is left to dynamic friction (Müller's rule) and the block solved again without it.
   * positionPrev, orientationPrev: the substep's start pose (p̄).
   */
  project(positionPrev: Float64Array, orientationPrev: Float64Array, warm = true): void {
    const list = this.list!, s = this.s;
    const { position: x, orientation: q } = this.w;
    const order = this.sweepOrder; // null: list order
    for (let i = 0, m0 = 0; order !== null ? i < order.length : m0 < list.count; i++) {
      if (order !== null) m0 = order[i];
      const m1 = this.manifoldEnd(m0);
      const np = Math.min(m1 - m0, 4);
      const a = list.bodyA[m0], b = list.bodyB[m0], ao = 3 * a, bo = 3 * b, o3 = 3 * m0;
      const nx = list.normal[o3], ny = list.normal[o3 + 1], nz = list.normal[o3 + 2];
      // penetrations d = −(p_B − p_A) · n and tangential motions Δp_t at the pose now
      let deepest = 0;
      const dp = this.dp;
      for (let k = 0; k < np; k++) {
        const c = m0 + k;
        this.penetration(c, o3, positionPrev, orientationPrev, dp, 4 * k);
        const d = this.depthOut[0];
        // Δp_t only where a tangent pair will read it (a point allowed to stick)
        const stick = d > 0 && list.staticFriction[c] > 0 ? 1 : 0;
        if (stick) this.tangentialMotion(c, positionPrev, orientationPrev, dp, 4 * k);
        this.saveArms(k); // the pose does not change until the manifold's Δ is applied
        if (d > deepest) deepest = d;
        this.stick[k] = stick;
      }
      if (!(deepest > 0)) {
        m0 = m1;
        continue;
      }
      if (deepest > this.deepest) this.deepest = deepest;
      // the bodies' I⁻¹ at the pose now (the same two bodies for the whole manifold; measuring reads none)
      this.inertias(m0);
      this.beginBlock(m0);
      let blockRows = np, slid = false;
      for (let attempt = 0; attempt < 2; attempt++) {
        // lay the block out: normals first, then the tangent pairs of the points allowed to stick
        // (attempt 1: the same normal rows, λ from 0 again)
        let rows = 0;
        if (attempt === 0) {
          for (let k = 0; k < np; k++) {
            const c = m0 + k;
            this.loadArms(k);
            this.bKind[rows] = 0;
            this.bPoint[rows] = k;
            const u = this.rowIn;
            u[0] = nx; u[1] = ny; u[2] = nz; u[3] = dp[4 * k + 3];
            this.row(rows++);
          }
        } else {
          rows = np;
          for (let i = 0; i < np; i++) this.bLambda[i] = 0;
        }
        for (let k = 0; k < np; k++) {
          if (!this.stick[k]) continue;
          const c = m0 + k, t3 = 3 * c;
          this.loadArms(k);
          for (let t = 1; t <= 2; t++) {
            const T = t === 1 ? list.tangent1 : list.tangent2;
            const tx = T[t3], ty = T[t3 + 1], tz = T[t3 + 2];
            this.bKind[rows] = t;
            this.bPoint[rows] = k;
            this.bBound[rows] = -1;
            this.bMu[rows] = list.staticFriction[c]; // the static disc |λ_t| ≤ μ_s λ_n, λ_n of the same block
            const u = this.rowIn;
            u[0] = tx; u[1] = ty; u[2] = tz; u[3] = -(dp[4 * k] * tx + dp[4 * k + 1] * ty + dp[4 * k + 2] * tz);
            this.row(rows++);
          }
        }
        blockRows = rows;
        if (warm) {
          // the first iterate: the λ this block's rows had in the substep before (warm, header "Speed")
          for (let i = 0; i < rows; i++) {
            const c = m0 + this.bPoint[i], kd = this.bKind[i];
            this.bLambda[i] = this.warm[3 * c + kd];
          }
          // the tangent rows' start spread to the cones' uniform share (shareStart: no null-space pattern carried)
          if (rows > np + 2 && this.coneShare) this.shareStart(rows, np);
          // the normal rows' start without their self-equilibrated pattern (normalShare)
          if (np === 4 && this.coneShare) this.normalShare();
        }
        let solved = this.solveBlock(rows, true, rows > np, false);
        // several points that missed the stick test by a little: once more from the uniform share of
        // the cones (restickBlock; RESTICK_UNMET)
        if (rows > np + 2 && this.coneShare) {
          const left = this.unmet(np, rows);
          if ((!solved || left > 0) && left <= RESTICK_UNMET) solved = this.restickBlock(rows, np);
        }
        // static friction holds when a force distribution inside every point's cone undoes the
        // tangential motion: the block solve with the discs met its tangent targets (to STICK_TOLERANCE
        // of their norm). Else the manifold slides: solved again with its normal rows alone, and
        // dynamic friction (velocity pass) takes the tangential motion
        if (rows === np || (solved && this.targetsMet(np, rows))) break;
        for (let k = 0; k < np; k++) this.stick[k] = 0;
        slid = true;
      }
      for (let k = 0; k < np; k++) {
        const c = m0 + k;
        this.stuck[c] = this.stick[k];
        this.lambdaN[c] += this.bLambda[k];
        if (this.lambdaN[c] > 0) this.active[c] = 1;
      }
      if (warm) {
        for (let k = 0; k < np; k++) {
          const w3 = 3 * (m0 + k);
          this.warm[w3] = this.bLambda[k];
          this.warm[w3 + 1] = 0;
          this.warm[w3 + 2] = 0;
        }
      }
      // static friction's λ_t of the points held (storeImpulses)
      for (let i = np; i < blockRows; i++) {
        const k = this.bPoint[i];
        if (!this.stick[k]) continue;
        if (this.tangentForces) {
          if (this.bKind[i] === 1) this.lambdaT1[m0 + k] += this.bLambda[i];
          else this.lambdaT2[m0 + k] += this.bLambda[i];
        }
        if (!warm) continue;
        this.warm[3 * (m0 + k) + this.bKind[i]] = this.bLambda[i];
      }
      this.applyDelta(a, b, false);
      // a manifold that slid takes new references where it is now (retakeReference)
      if (slid) for (let k = 0; k < np; k++) this.retakeReference(m0 + k, a, b, positionPrev, orientationPrev);
      m0 = m1;
    }
  }
  private readonly dp = new Float64Array(16);

  /**
   * Second stick test of a manifold of several points whose disc-projected block (solveBlock) missed
   * the first by at most RESTICK_UNMET (project). Why the first can fail where sticking is admissible:
   * the distribution of a manifold's forces over its points is not determined by rigid-body mechanics
   * (a box face: 12 rows, K = J M⁻¹ Jᵀ of rank 6, a 6-dimensional null space of self-equilibrated
   * patterns that move no body), and Coulomb's law at several points has more than one solution.
   * Projected Gauss–Seidel started from λ_t = 0 (no stick in the substep before) can stop at a fixed
   * point where every point sits on its disc |λ_t| = μ_s λ_n with lateral parts that cancel over the
   * points (a null-space pattern): a sliding state, though a distribution inside every cone exists.
   * Measured: a 1 m box, μ_s 0.5, on a slope tan θ = 0.483 (0.966 μ_s): each substep's block stopped with
   * all four corners on their discs, t₂ parts ±1.8·10⁻³ (t₁ parts up to 5.9·10⁻³), Σλ_t,1 =
   * 0.468 Σλ_n where 0.483 is needed; the box slid at 20 mm/s for ever (softstep-cpu, pgs-cpu and Rapier
   * hold it to 0.000 mm). Box2D v3 (contact_solver.c: per-point accumulated impulses, each clamped to
   * its own μ λ_n) and Rapier live with the indeterminacy; their slide at a clamp is one velocity step,
   * not a test that decides the substep.
   * The second start: the same sums, Σλ_n and T = Σλ_t (one manifold basis), spread so that every point
   * uses the same share of its cone, λ_t,i = T λ_n,i / Σλ_n, i.e. |λ_t,i| / λ_n,i = |T| / Σλ_n ≤ μ_s when
   * the points share μ_s (|T| ≤ Σ|λ_t,i| ≤ Σ μ_s λ_n,i): inside every disc, the lateral parts that cancel
   * taken out, while the force the points carry together stays. This changes only the pattern in
   * the null space and the moment about n (for points at one depth below the body), so the block's
   * sweeps from there finish the stick solution when it exists; else it fails the test again and the
   * manifold slides, as before.
   */
  private restickBlock(rows: number, np: number): boolean {
    const lam = this.bLambda, mu = this.bMu, kind = this.bKind, point = this.bPoint;
    let sumN = 0, t1 = 0, t2 = 0;
    for (let i = np; i < rows; i++) {
      if (kind[i] === 1) {
        sumN += lam[point[i]];
        t1 += lam[i];
      } else t2 += lam[i];
    }
    if (!(sumN > 0)) return false;
    const share = Math.sqrt(t1 * t1 + t2 * t2) / sumN;
    for (let i = np; i < rows; i++) if (share > mu[i]) return false; // points of unequal μ_s: not inside every disc
    for (let i = np; i < rows; i++) lam[i] = ((kind[i] === 1 ? t1 : t2) * lam[point[i]]) / sumN;
    return this.solveBlock(rows, true, true, false);
  }
  /**
   * The stick block's first iterate of the tangent rows (the substep before's λ_t, project's warm
   * start) spread over the points in the cones' uniform share: λ_t,i = T λ_n,i / Σλ_n with the same
   * sums Σλ_n and T = Σλ_t (one manifold basis; restickBlock's spread).
   * Why: a manifold of several points is statically indeterminate. A pattern λ₀ with K λ₀ = 0 has
   * λ₀ᵀ K λ₀ = |M^(−1/2) Jᵀ λ₀|² = 0, so Jᵀ λ₀ = 0: it moves no body (Δ = M⁻¹ Jᵀ λ) and does no work,
   * and nothing in the sweeps removes it (they correct only J Δ − b). Carried from substep to substep
   * by the warm start, it was never removed, and grew: measured on a 5-box stack on flat ground (sleep
   * off, 1 m boxes, μ 0.5), the ground manifold's largest |λ_t| / (μ_s λ_n) rose linearly by 1.5·10⁻⁴
   * a second, reaching 1.0 (a corner at its disc) at 6,600 s, where the load needs λ_t = 0; the null
   * content went 1 % → 50 % of |λ|; the boxes did not move (f64). On friction-ramp the first
   * substep's sweeps left one corner of the μ 0.5 box at its disc for good (|λ_t| / λ_n = 0.4999),
   * though the slope needs tan θ = 0.255 (0.51 μ_s): a corner with no margin left for any further load.
   * The spread changes the start by a null-space pattern and, for points at one depth below the body
   * (tangential forces at c + ρ_i + d n: their moment is Σ ρ_i × f_i + d n × T), by a moment about n
   * only; the sweeps restore that where the load needs it. So every body's motion is the block's
   * solution as before (to BLOCK_CONVERGED), and the distribution is the one that uses each cone
   * alike: with it the stack's ratio stays 0.0000 over 600 s and the ramp's boxes sit at tan θ / μ_s
   * at every corner (0.340, 0.510, 0.729). Box2D v3 (contact_solver.c) and Rapier warm-start each
   * point from its own accumulated impulse and keep whatever distribution the iterations left.
   */
  /**
   * The first iterate of a four-point manifold's normal rows (the substep before's λ_n, rows 0..3) with
   * its self-equilibrated pattern taken out: λ_n − (λ_n · v / v · v) v, v the one pattern with
   * J_nᵀ v = 0 (Σ v_i = 0 and Σ v_i (r_i × n) = 0: no force, no moment), kept only where every λ_n
   * stays ≥ 0. v_i are the signed 3×3 minors of the 3×4 rows (1, (r_i × n) · t₁, (r_i × n) · t₂)
   * (r × n lies in the face's plane), the arms of the moving body (B's, else A's).
   * Why: as shareStart's tangent rows, four points' normal rows are statically indeterminate (a face's
   * normals have rank 3): PGS leaves a pattern that depends on its row order and the warm start
   * carries it, so a box face at rest on a slope sat at λ_n = (1.14, 0.08, 0.69, 0.54)·10⁻² N·s²
   * (f64, 0.991 μ_s), one corner nearly unloaded and so its disc nearly empty: the stick block then
   * met the slope's load only with every cone near its edge, and in f32 (xpbd-gpu, 1 × 10 substeps)
   * rounding tipped it over: the box slid 12.8 mm over frames 15–75; started without v, 2.5 mm. The
   * pattern moves no body (Jᵀ v = 0), so the block's motion is unchanged; the start is the
   * distribution linear over the face, the least-squares one (an elastic face's).
   */
  private normalShare(): void {
    const C = this.bC, u = this.bBasis, lam = this.bLambda, o = this.bMassB !== 0 ? 3 : 0;
    const A = this.nsA, B = this.nsB, v = this.nsV;
    for (let i = 0; i < 4; i++) {
      const j = 6 * i + o;
      A[i] = C[j] * u[3] + C[j + 1] * u[4] + C[j + 2] * u[5];
      B[i] = C[j] * u[6] + C[j + 1] * u[7] + C[j + 2] * u[8];
    }
    for (let i = 0; i < 4; i++) {
      const x = i === 0 ? 1 : 0, y = i <= 1 ? 2 : 1, z = i <= 2 ? 3 : 2;
      const det = A[y] * B[z] - A[z] * B[y] - (A[x] * B[z] - A[z] * B[x]) + (A[x] * B[y] - A[y] * B[x]);
      v[i] = (i & 1) === 1 ? -det : det;
    }
    const vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    if (!(vv > 0)) return;
    const f = (lam[0] * v[0] + lam[1] * v[1] + lam[2] * v[2] + lam[3] * v[3]) / vv;
    for (let i = 0; i < 4; i++) if (lam[i] - f * v[i] < 0) return;
    for (let i = 0; i < 4; i++) lam[i] -= f * v[i];
  }
  private readonly nsA = new Float64Array(4);
  private readonly nsB = new Float64Array(4);
  private readonly nsV = new Float64Array(4);
  private shareStart(rows: number, np: number): void {
    const lam = this.bLambda, kind = this.bKind, point = this.bPoint;
    let sumN = 0, t1 = 0, t2 = 0;
    for (let i = np; i < rows; i++) {
      if (kind[i] === 1) {
        sumN += lam[point[i]];
        t1 += lam[i];
      } else t2 += lam[i];
    }
    if (!(sumN > 0)) return;
    for (let i = np; i < rows; i++) lam[i] = ((kind[i] === 1 ? t1 : t2) * lam[point[i]]) / sumN;
  }
  /**
   * The cones' uniform share in the position pass's stick blocks: the start (shareStart) and the
   * second stick test (restickBlock). Off: neither. xpbd-gpu has both (contacts.wgsl.ts b_share, b_restick).
   */
  coneShare = true;

  /**
   * Static friction's reference for point c re-taken at the pose now (its anchors and their offset
   * p_B − p_A), after its manifold failed the stick test in this substep and slid. The slide is
   * dynamic friction's (Müller et al. 2020 §3.5: static friction undoes Δp only when |λ_t| ≤ μ_s λ_n
   * can; otherwise the motion is left to the velocity pass), so the next substep measures Δp from where
   * the point is, as the text's Δp since the substep's start does, and can hold it again. Kept instead
   * (the frame's reference), every later substep of the frame had the whole slide so far as its target,
   * which one substep's disc cannot undo: one slip cost the point static friction for the rest of the
   * frame. Measured on card-house levels=2, sleep off: an apex (a card's top edge on its partner's
   * face, 5.6 N normal, needing |T|/N ≈ 0.37 of μ 0.7) slid one substep per frame on its neighbours'
   * corrections (Δp_t 5·10⁻⁵ m against d 3.7·10⁻⁵ m), then failed every later stick test of the frame with
   * targets of ~10⁻⁴ m while it moved ~3·10⁻⁶ m a substep: the house leaned and fell (energy −95.6 % in
   * 240 frames). A point that holds keeps its reference across substeps and frames (departure 3).
   * A pair with a sphere has no reference (measure: the text's Δp since the substep's start).
   */
  private retakeReference(c: number, a: number, b: number, positionPrev: Float64Array, orientationPrev: Float64Array): void {
    if (this.sphereRadius[a] === this.sphereRadius[a] || this.sphereRadius[b] === this.sphereRadius[b]) return;
    const c3 = 3 * c, m = this.moved;
    // Δp = 0 now: at the substep's start it was minus the motion since
    this.slipSinceStart(a, b, this.anchorA, this.anchorB, c3, positionPrev, orientationPrev);
    for (let k = 0; k < 3; k++) {
      this.refA[c3 + k] = this.anchorA[c3 + k];
      this.refB[c3 + k] = this.anchorB[c3 + k];
      this.slip[c3 + k] = -m[k];
    }
  }

  /**
   * Static friction's Δp of each point carried to the pose now (slip += the reference pair's motion since the
   * substep's start, slipSinceStart), which is the next substep's start: the simulation calls it after
   * updateVelocities and before velocityPass (so collide's position shift is not added). Δp is kept this way,
   * as its value at the substep's start plus the motion since, rather than as (p_B − p_A) − (p_B − p_A)_ref
   * from absolute positions, for xpbd-gpu's f32 (contacts.wgsl.ts slip_since_start: there R_B a_B rounded per
   * point by ~3·10⁻⁸ m against tangential targets of ~1.2·10⁻⁵ m left them off a rigid motion by ~0.5 %, and
   * a box at 0.991 μ_s slid 1.42 mm by 1 s); in f64 the two agree to rounding (a pyramid's state hash moves).
   */
  advanceSlip(positionPrev: Float64Array, orientationPrev: Float64Array): void {
    const list = this.list;
    if (list === null) return;
    for (let c = 0; c < list.count; c++) {
      const a = list.bodyA[c], b = list.bodyB[c];
      if (this.sphereRadius[a] === this.sphereRadius[a] || this.sphereRadius[b] === this.sphereRadius[b]) continue;
      const c3 = 3 * c, m = this.moved;
      this.slipSinceStart(a, b, this.refA, this.refB, c3, positionPrev, orientationPrev);
      this.slip[c3] += m[0];
      this.slip[c3 + 1] += m[1];
      this.slip[c3 + 2] += m[2];
    }
  }
  /**
   * The motion since the substep's start of the anchor pair (ancA, ancB)[c3..c3+3) (local) of bodies a, b into
   * moved[0..3): p_B's less p_A's, each Δx + (R(δq) − I) R̄ a with δq = q ⊗ q̄* and (R(δq) − I) u =
   * 2 w (v × u) + 2 v × (v × u) (δq = (v, w), unit); a fixed body's 0 (contacts.wgsl.ts slip_since_start).
   */
  private slipSinceStart(a: number, b: number, ancA: Float64Array, ancB: Float64Array, c3: number, positionPrev: Float64Array, orientationPrev: Float64Array): void {
    const m = this.moved;
    m[0] = 0; m[1] = 0; m[2] = 0;
    const inv = this.w.inverseMass;
    if (inv[b] > 0) this.pointMoved(b, ancB, c3, positionPrev, orientationPrev, 1);
    if (inv[a] > 0) this.pointMoved(a, ancA, c3, positionPrev, orientationPrev, -1);
  }
  private pointMoved(body: number, anc: Float64Array, c3: number, positionPrev: Float64Array, orientationPrev: Float64Array, sign: number): void {
    const { position: x, orientation: q } = this.w;
    const u = this.movedU, m = this.moved, o = 3 * body, qo = 4 * body;
    rotateByQuat(orientationPrev, qo, anc, c3, u, 0);
    // δq = q ⊗ q̄* (updateVelocities' arithmetic)
    const dq = this.movedQ;
    quatRelative(q, qo, orientationPrev, qo, dq, 0);
    const vx = dq[0], vy = dq[1], vz = dq[2], w = dq[3];
    const cx = vy * u[2] - vz * u[1], cy = vz * u[0] - vx * u[2], cz = vx * u[1] - vy * u[0];
    const ex = vy * cz - vz * cy, ey = vz * cx - vx * cz, ez = vx * cy - vy * cx;
    m[0] += sign * (x[o] - positionPrev[o] + (2 * w * cx + 2 * ex));
    m[1] += sign * (x[o + 1] - positionPrev[o + 1] + (2 * w * cy + 2 * ey));
    m[2] += sign * (x[o + 2] - positionPrev[o + 2] + (2 * w * cz + 2 * ez));
  }
  private readonly moved = new Float64Array(3);
  private readonly movedU = new Float64Array(3);
  private readonly movedQ = new Float64Array(4);

  /**
   * Point c of the manifold whose normal is at list.normal[n3..], at the pose now (arms into s[0..6)): its penetration d = −(p_B − p_A) · n (returned),
   * the normal row's target into out[o + 3] (d less the overlap the push-out may leave, header
   * "Bounded push-out"; d itself where d ≤ 0), and its tangential motion Δp (header, departure 3)
   * into out[o..o+3).
   */
  private measure(c: number, n3: number, positionPrev: Float64Array, orientationPrev: Float64Array, out: Float64Array, o: number): number {
    this.penetration(c, n3, positionPrev, orientationPrev, out, o);
    this.tangentialMotion(c, positionPrev, orientationPrev, out, o);
    return this.depthOut[0];
  }
  /**
   * measure's first half: the arms into s[0..6), d into depthOut[0] and the normal row's target into
   * out[o + 3]. (d is not returned: a double returned from a call V8 does not inline is boxed, as row's
   * arguments were; this one ran per point of every projection.)
   */
  private penetration(c: number, n3: number, positionPrev: Float64Array, orientationPrev: Float64Array, out: Float64Array, o: number): void {
    const list = this.list!, s = this.s;
    const x = this.w.position;
    const ao = 3 * list.bodyA[c], bo = 3 * list.bodyB[c];
    const nx = list.normal[n3], ny = list.normal[n3 + 1], nz = list.normal[n3 + 2]; // the manifold's n (n3: its first point)
    this.arms(c);
    const d = -((x[bo] + s[3] - x[ao] - s[0]) * nx + (x[bo + 1] + s[4] - x[ao + 1] - s[1]) * ny + (x[bo + 2] + s[5] - x[ao + 2] - s[2]) * nz);
    out[o + 3] = d > 0 ? d - this.overlapLeft(c, positionPrev, orientationPrev) : d;
    this.depthOut[0] = d;
  }
  /** penetration's d */
  private readonly depthOut = new Float64Array(1);
  /** measure's second half: Δp of point c (arms in s[0..6), from penetration) into out[o..o+3). */
  private tangentialMotion(c: number, positionPrev: Float64Array, orientationPrev: Float64Array, out: Float64Array, o: number): void {
    const list = this.list!, s = this.s;
    const { position: x, orientation: q } = this.w;
    const a = list.bodyA[c], b = list.bodyB[c], ao = 3 * a, bo = 3 * b, c3 = 3 * c;
    let dx = 0, dy = 0, dz = 0;
    if (this.sphereRadius[a] !== this.sphereRadius[a] && this.sphereRadius[b] !== this.sphereRadius[b]) {
      // (p_B − p_A) − (p_B − p_A)_ref of the reference anchor pair: its Δp at the substep's start and its motion since
      this.slipSinceStart(a, b, this.refA, this.refB, c3, positionPrev, orientationPrev);
      const m = this.moved;
      dx = this.slip[c3] + m[0];
      dy = this.slip[c3 + 1] + m[1];
      dz = this.slip[c3 + 2] + m[2];
    } else for (let side = 0; side < 2; side++) {
      const body = side === 0 ? a : b, sign = side === 0 ? -1 : 1, ro = 3 * side, p = 3 * body;
      // a = Rᵀ r (the body point now at the arm), p̄ − x̄ = R̄ a
      rotateByQuatInverse(q, 4 * body, s, ro, s, 24);
      rotateByQuat(orientationPrev, 4 * body, s, 24, s, 27);
      dx += sign * (x[p] + s[ro] - positionPrev[p] - s[27]);
      dy += sign * (x[p + 1] + s[ro + 1] - positionPrev[p + 1] - s[28]);
      dz += sign * (x[p + 2] + s[ro + 2] - positionPrev[p + 2] - s[29]);
    }
    out[o] = dx; out[o + 1] = dy; out[o + 2] = dz;
  }

  /**
   * The contact rows' residual now (diagnostics; changes nothing), as the joints' r = (C + α̃ λ)/h²
   * with α = 0, projected (a row at its bound whose residual points outward counts 0), summed as
   * squares into residualSquares[0] (normal rows) and [1] (static friction's tangent rows):
   *   normal    C = −(the row's target) = allowed overlap − d; 0 where λ_n = 0 (its bound) and C > 0
   *             (apart: the residual points out of the feasible set λ_n ≥ 0);
   *   friction  for a point held by static friction in this substep (stuck, λ_n > 0: λ_t inside
   *             its disc |λ_t| ≤ μ_s λ_n), C_k = Δp · t_k, the tangential motion still to undo;
   *             0 where the manifold slides (its friction at the Coulomb bound, the motion pointing
   *             out of the disc: dynamic friction's business) or λ_n = 0 (a disc of radius 0).
   */
  residual(h: number, positionPrev: Float64Array, orientationPrev: Float64Array): Float64Array {
    const list = this.list!, out = this.residualSquares, m = this.dp;
    const invH2 = 1 / (h * h);
    out[0] = 0;
    out[1] = 0;
    for (let m0 = 0; m0 < list.count; ) {
      const m1 = this.manifoldEnd(m0), np = Math.min(m1 - m0, 4); // the points project solves
      for (let c = m0; c < m0 + np; c++) {
        this.measure(c, 3 * m0, positionPrev, orientationPrev, m, 0);
        const C = -m[3], lam = this.lambdaN[c];
        if (lam > 0 || C <= 0) out[0] += (C * invH2) ** 2;
        if (!(lam > 0) || !this.stuck[c]) continue;
        const c3 = 3 * c;
        for (let t = 1; t <= 2; t++) {
          const T = t === 1 ? list.tangent1 : list.tangent2;
          out[1] += ((m[0] * T[c3] + m[1] * T[c3 + 1] + m[2] * T[c3 + 2]) * invH2) ** 2;
        }
      }
      m0 = m1;
    }
    return out;
  }
  private readonly residualSquares = new Float64Array(2);

  /**
   * The overlap point c may keep after this substep's projection (header, "Bounded push-out"):
   * max(0, d̄ − v_push h), d̄ = −(p̄_B − p̄_A) · n its penetration at the substep's start pose (x̄, q̄;
   * a sphere's point along n is ±r n at any orientation). 0 (full projection) unless d̄ > v_push h.
   * Uses s[30..36) (the arms in s[0..6) are left as they are).
   */
  private overlapLeft(c: number, positionPrev: Float64Array, orientationPrev: Float64Array): number {
    const push = this.pushPerSubstep;
    if (!(push < Infinity)) return 0;
    const list = this.list!, s = this.s, o3 = 3 * c;
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? list.bodyA[c] : list.bodyB[c];
      const ro = 30 + 3 * side, radius = this.sphereRadius[body];
      if (radius === radius) {
        const sign = side === 0 ? radius : -radius;
        s[ro] = sign * list.normal[o3]; s[ro + 1] = sign * list.normal[o3 + 1]; s[ro + 2] = sign * list.normal[o3 + 2];
      } else {
        rotateByQuat(orientationPrev, 4 * body, side === 0 ? this.anchorA : this.anchorB, o3, s, ro);
      }
    }
    const ao = 3 * list.bodyA[c], bo = 3 * list.bodyB[c], xp = positionPrev;
    const start = -((xp[bo] + s[33] - xp[ao] - s[30]) * list.normal[o3] + (xp[bo + 1] + s[34] - xp[ao + 1] - s[31]) * list.normal[o3 + 1] + (xp[bo + 2] + s[35] - xp[ao + 2] - s[32]) * list.normal[o3 + 2]);
    return start > push ? start - push : 0;
  }
  /** v_push h of the current substep (m), set by beginSubstep; Infinity: no bound */
  private pushPerSubstep = Infinity;

  /**
   * Restitution's input, at the substep's start (after the prediction, beginSubstep): whether any
   * point has e > 0, and then the predicted velocities Ṽ of every body and each point's predicted
   * separation s̃ = (p_B − p_A) · n at the predicted pose (collide).
   */
  private recordCollisionInput(): void {
    const list = this.list!, n = list.count, s = this.s;
    let elastic = false;
    for (let c = 0; c < n && !elastic; c++) elastic = list.restitution[c] > 0;
    this.elastic = elastic;
    if (!elastic) return;
    const { position: x, linearVelocity: v, angularVelocity: om } = this.w;
    if (this.preV.length < v.length) {
      this.preV = new Float64Array(v.length);
      this.preW = new Float64Array(v.length);
    }
    if (this.predictedSeparation.length < n) {
      const cap = Math.max(n, 2 * this.predictedSeparation.length, 16);
      this.predictedSeparation = new Float64Array(cap);
      this.collisionP = new Float64Array(cap);
      this.collided = new Uint8Array(cap);
    }
    this.preV.set(v);
    this.preW.set(om);
    for (let c = 0; c < n; c++) {
      if (!(list.restitution[c] > 0)) continue;
      this.arms(c);
      const ao = 3 * list.bodyA[c], bo = 3 * list.bodyB[c], o3 = 3 * c;
      this.predictedSeparation[c] =
        (x[bo] + s[3] - x[ao] - s[0]) * list.normal[o3] + (x[bo + 1] + s[4] - x[ao + 1] - s[1]) * list.normal[o3 + 1] + (x[bo + 2] + s[5] - x[ao + 2] - s[2]) * list.normal[o3 + 2];
    }
  }
  /** a point has e > 0 this substep (recordCollisionInput) */
  private elastic = false;
  /** per body: Ṽ (the predicted v, ω), then collide's scratch velocities */
  private preV = new Float64Array(0);
  private preW = new Float64Array(0);
  /** per point: s̃, the separation at the predicted pose; the collision impulse P; whether it collided */
  private predictedSeparation = new Float64Array(0);
  private collisionP = new Float64Array(0);
  private collided = new Uint8Array(0);
  private readonly cPoint = new Int32Array(4);
  private readonly cTarget = new Float64Array(4);
  private readonly cImpulse = new Float64Array(4);
  private readonly cMass = new Float64Array(4);

  /** n · ((v_B + ω_B × r_B) − (v_A + ω_A × r_A)) of point c from the velocities (lin, ang), arms in s. */
  private normalVelocityOf(c: number, lin: Float64Array, ang: Float64Array): number {
    const list = this.list!, s = this.s, o3 = 3 * c;
    let vn = 0;
    for (let side = 0; side < 2; side++) {
      const bo = 3 * (side === 0 ? list.bodyA[c] : list.bodyB[c]), ro = 3 * side, sign = side === 0 ? -1 : 1;
      const rx = s[ro], ry = s[ro + 1], rz = s[ro + 2];
      const wx = ang[bo], wy = ang[bo + 1], wz = ang[bo + 2];
      vn += sign * ((lin[bo] + wy * rz - wz * ry) * list.normal[o3] + (lin[bo + 1] + wz * rx - wx * rz) * list.normal[o3 + 1] + (lin[bo + 2] + wx * ry - wy * rx) * list.normal[o3 + 2]);
    }
    return vn;
  }

  /** The impulse p n at point c (B takes +, A −; arms and I⁻¹ in s) added to the velocities (lin, ang). */
  private impulseOn(c: number, p: number, lin: Float64Array, ang: Float64Array): void {
    const list = this.list!, s = this.s, m = this.w.inverseMass, o3 = 3 * c;
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? list.bodyA[c] : list.bodyB[c];
      const mi = m[body];
      if (mi === 0) continue;
      const q = side === 0 ? -p : p, bo = 3 * body, ro = 3 * side, io = 6 + 9 * side;
      const qx = q * list.normal[o3], qy = q * list.normal[o3 + 1], qz = q * list.normal[o3 + 2];
      const tx = s[ro + 1] * qz - s[ro + 2] * qy, ty = s[ro + 2] * qx - s[ro] * qz, tz = s[ro] * qy - s[ro + 1] * qx;
      lin[bo] += mi * qx; lin[bo + 1] += mi * qy; lin[bo + 2] += mi * qz;
      ang[bo] += s[io] * tx + s[io + 1] * ty + s[io + 2] * tz;
      ang[bo + 1] += s[io + 3] * tx + s[io + 4] * ty + s[io + 5] * tz;
      ang[bo + 2] += s[io + 6] * tx + s[io + 7] * ty + s[io + 8] * tz;
    }
  }

  /**
   * Restitution as collision propagation (Guendelman, Bridson & Fedkiw 2003: collisions pair by pair
   * on the step's velocities before the contact solve, swept until none collides; the same rule as
   * rows/block-solver.ts applyRestitution, whose header derives it and says why a Newton's cradle needs
   * it), in the velocity pass. On Ṽ (the substep's predicted velocities, before the projection), per
   * point with e > 0, v_n its normal velocity now and g_n = h n · (g_B − g_A) (dynamic bodies) the
   * gravity of the prediction in it:
   *   collides   iff v_n − g_n < −threshold and s̃ + h (v_n − ṽ_n) < 0: the gap closes within the
   *              substep at these velocities (s̃, ṽ_n: the predicted separation and normal velocity);
   *   impulse    P = −(1 + e)(v_n − g_n) / (w_A + w_B) ≥ 0 along n: v_n − g_n → −e (v_n − g_n); a
   *              manifold's colliding points together (projected Gauss-Seidel on their block).
   * Sweeps until none collides (at most COLLISION_SWEEPS). Then the projection's λ_n at each point that
   * collided is replaced by the collision's h P: the bodies take Q = P − λ_n / h along n, in velocity
   * and, as XPBD's v = (x − x̄)/h asks, in position h Q (and h I⁻¹(r × Q n) in orientation); so the
   * bodies of a struck row end the substep where Ṽ + M⁻¹ Jᵀ P (not the projection) takes them.
   * λ_n ← h P there (dynamic friction's bound is the collision's impulse). Returns whether any collided.
   */
  private collide(h: number): boolean {
    const list = this.list!, n = list.count, m = this.w.inverseMass, g = this.w.gravity;
    const lin = this.preV, ang = this.preW, P = this.collisionP, done = this.collided;
    const pts = this.cPoint, target = this.cTarget, imp = this.cImpulse, mass = this.cMass;
    P.fill(0, 0, n);
    done.fill(0, 0, n);
    let any = false;
    for (let sweep = 0; sweep < COLLISION_SWEEPS; sweep++) {
      let now = false;
      for (let m0 = 0; m0 < n; ) {
        const m1 = this.manifoldEnd(m0);
        const a = list.bodyA[m0], b = list.bodyB[m0], o3 = 3 * m0;
        const nx = list.normal[o3], ny = list.normal[o3 + 1], nz = list.normal[o3 + 2];
        const gn = h * (nx * g[0] + ny * g[1] + nz * g[2]) * ((m[b] > 0 ? 1 : 0) - (m[a] > 0 ? 1 : 0));
        let k = 0, inertias = false;
        for (let c = m0; c < m1 && k < pts.length; c++) {
          const e = list.restitution[c];
          if (!(e > 0)) continue;
          if (!inertias) {
            this.inertias(m0); // the same two bodies for the whole manifold
            inertias = true;
          }
          this.arms(c);
          const vn = this.normalVelocityOf(c, lin, ang);
          if (!(vn - gn < -this.restitutionThreshold) || !(this.predictedSeparation[c] + h * (vn - this.normalVelocityBefore[c]) < 0)) continue;
          pts[k] = c;
          target[k] = -e * (vn - gn) + gn;
          imp[k] = 0;
          const u = this.vecIn;
          u[0] = nx; u[1] = ny; u[2] = nz;
          this.generalizedInverseMass(c);
          mass[k] = u[3];
          k++;
        }
        if (k > 0) {
          now = true;
          for (let it = 0; it < BLOCK_SWEEPS; it++) {
            let change = 0, size = 0;
            for (let i = 0; i < k; i++) {
              const c = pts[i];
              this.arms(c);
              const next = Math.max(0, imp[i] + (target[i] - this.normalVelocityOf(c, lin, ang)) / mass[i]);
              const d = next - imp[i];
              if (d !== 0) this.impulseOn(c, d, lin, ang);
              imp[i] = next;
              change = Math.max(change, Math.abs(d));
              size = Math.max(size, next);
            }
            if (k === 1 || change <= BLOCK_CONVERGED * size) break;
          }
          for (let i = 0; i < k; i++) {
            P[pts[i]] += imp[i];
            done[pts[i]] = 1;
          }
        }
        m0 = m1;
      }
      if (!now) break;
      any = true;
    }
    if (!any) return false;
    // the projection's λ_n / h at the points that collided replaced by P: Q = P − λ_n / h, into v, ω and x, q
    const { position: x, orientation: q, linearVelocity: v, angularVelocity: om } = this.w;
    const dv = this.preV, dw = this.preW;
    for (let m0 = 0; m0 < n; ) {
      const m1 = this.manifoldEnd(m0);
      let touched = false;
      for (let c = m0; c < m1; c++) touched ||= done[c] === 1;
      if (!touched) {
        m0 = m1;
        continue;
      }
      const a = list.bodyA[m0], b = list.bodyB[m0];
      dv.fill(0, 3 * a, 3 * a + 3);
      dw.fill(0, 3 * a, 3 * a + 3);
      dv.fill(0, 3 * b, 3 * b + 3);
      dw.fill(0, 3 * b, 3 * b + 3);
      this.inertias(m0);
      for (let c = m0; c < m1; c++) {
        if (!done[c]) continue;
        this.arms(c);
        this.impulseOn(c, P[c] - this.lambdaN[c] / h, dv, dw);
        this.lambdaN[c] = h * P[c];
        this.active[c] = 1;
      }
      for (let side = 0; side < 2; side++) {
        const body = side === 0 ? a : b;
        if (m[body] === 0) continue;
        const o = 3 * body;
        for (let k = o; k < o + 3; k++) {
          v[k] += dv[k];
          om[k] += dw[k];
          x[k] += h * dv[k];
        }
        integrateOrientation(q, 4 * body, dw[o], dw[o + 1], dw[o + 2], h);
      }
      m0 = m1;
    }
    return true;
  }

  /**
   * Store impulses (Box2D's stage name): the last substep's contact forces onto the points' manifold
   * records, the one contact datum the metrics and every solver read (collision/manifolds.ts: forces in
   * N, a solver of (sub)step h applies the impulse h λ). XPBD's multipliers are position-level (N·s²):
   * the force of a substep h is λ / h² (Müller et al. 2020 §3.5: f_n = λ_n / h²). Normal: the
   * projection's λ_n (a collision's h P where restitution replaced it); tangent: static friction's λ_t
   * of a point held, plus dynamic friction's impulse P as h P. XPBD starts every substep from λ = 0 and
   * reads none of them back (no warm start).
   */
  storeImpulses(h: number): void {
    const list = this.list!, store = this.store!, n = list.count, invH2 = 1 / (h * h);
    for (let c = 0; c < n; c++) {
      const p = this.record[c];
      store.normalImpulse[p] = this.lambdaN[c] * invH2;
      store.tangentImpulse1[p] = this.lambdaT1[c] * invH2;
      store.tangentImpulse2[p] = this.lambdaT2[c] * invH2;
    }
  }

  /**
   * The velocity pass (header) over the points active in the substep, manifold by manifold: first its
   * normal rows (targets Δv_n, free sign as Müller's Δv_n) and its tangent pairs (targets −v_t · t_k,
   * each pair in its disc |P_t| ≤ μ_d λ_n / h) as one block to convergence (solveBlock); kept when it
   * stops the manifold's tangential motion (departure 4). Else the normal rows alone as one block, then
   * dynamic friction per point from the velocities that leaves, all the manifold's points from the same
   * velocities (Jacobi within the manifold; all at their caps when sliding), summed and applied once.
   */
  velocityPass(h: number): void {
    const list = this.list!, s = this.s;
    // restitution first: the substep's collisions, propagated pair by pair (collide); a point that
    // collided has its normal velocity from there, and the block below (Müller's Δv_n) leaves it
    const collided = this.elastic && this.collisionPropagation && this.collide(h);
    this.floors[1] = BLOCK_RESIDUAL / h;
    this.passH[0] = h;
    if (!this.velocityBlock) {
      this.velocityPassPoints(h, collided);
      return;
    }
    const order = this.sweepOrder; // null: list order
    for (let i = 0, m0 = 0; order !== null ? i < order.length : m0 < list.count; i++) {
      if (order !== null) m0 = order[i];
      const m1 = this.manifoldEnd(m0);
      const a = list.bodyA[m0], b = list.bodyB[m0];
      let any = false;
      for (let c = m0; c < m1; c++) any ||= this.active[c] === 1;
      if (!any) {
        m0 = m1;
        continue;
      }
      this.inertias(m0);
      this.beginBlock(m0);
      // attempt 0: the normal rows and the tangent pairs in one block, each pair in its Coulomb disc
      // |P_t| ≤ μ_d λ_n / h; kept when it meets the tangential targets (the manifold stops sliding
      // within its cones). Attempt 1 (it does not: the manifold slides): the normal rows alone, then
      // Müller's rule per point below
      let stopped = false;
      // the arms of the manifold's active points (the poses do not change in this pass), and their
      // relative velocities until the manifold's Δ is applied
      for (let c = m0; c < m1; c++) {
        if (!this.active[c]) continue;
        this.arms(c);
        this.relativeVelocity(c, s, 42);
        this.saveArms(c - m0);
      }
      let normals = 0;
      for (let attempt = 0; attempt < 2 && !stopped; attempt++) {
        let rows = 0;
        if (attempt === 0) {
          rows = this.velocityNormalRows(m0, m1, collided, false);
          normals = rows;
        } else {
          // attempt 1: attempt 0's normal rows (nothing moved since), λ from 0 again
          rows = normals;
          for (let i = 0; i < normals; i++) this.bLambda[i] = 0;
        }
        if (attempt === 0) {
          for (let c = m0; c < m1; c++) {
            const mu = list.friction[c]; // dynamic μ_d
            if (!this.active[c] || !(mu > 0)) continue;
            const o3 = 3 * c;
            this.loadArms(c - m0);
            for (let t = 1; t <= 2; t++) {
              const T = t === 1 ? list.tangent1 : list.tangent2;
              const tx = T[o3], ty = T[o3 + 1], tz = T[o3 + 2];
              this.bKind[rows] = t;
              this.bPoint[rows] = c - m0;
              this.bMu[rows] = 0;
              this.bBound[rows] = (mu * this.lambdaN[c]) / h;
              const u = this.rowIn;
              u[0] = tx; u[1] = ty; u[2] = tz; u[3] = -(s[42] * tx + s[43] * ty + s[44] * tz);
              this.row(rows++);
            }
          }
          if (rows === normals) continue; // no friction: attempt 1 is the normal block
        }
        const solved = rows > 0 && this.solveBlock(rows, false, attempt === 0, true);
        if (attempt === 0) {
          // the tangential targets met to STICK_TOLERANCE of their norm, as the position pass's test
          if (!solved || !this.targetsMet(normals, rows)) continue;
          stopped = true;
          // the tangent rows' impulses P (N·s) as position-level λ = h P (storeImpulses)
          if (this.tangentForces) for (let i = normals; i < rows; i++) {
            const c = m0 + this.bPoint[i];
            if (this.bKind[i] === 1) this.lambdaT1[c] += h * this.bLambda[i];
            else this.lambdaT2[c] += h * this.bLambda[i];
          }
        }
        if (rows > 0) this.applyDelta(a, b, true);
      }
      if (stopped) {
        m0 = m1;
        continue;
      }
      let applied = false; // a point's friction at its Coulomb cap
      for (let c = m0; c < m1; c++) {
        if (!this.active[c]) continue;
        const o3 = 3 * c;
        const nx = list.normal[o3], ny = list.normal[o3 + 1], nz = list.normal[o3 + 2];
        this.loadArms(c - m0);
        this.relativeVelocity(c, s, 42);
        const vx = s[42], vy = s[43], vz = s[44];
        const vn = vx * nx + vy * ny + vz * nz;
        const tx = vx - vn * nx, ty = vy - vn * ny, tz = vz - vn * nz;
        const vt = Math.sqrt(tx * tx + ty * ty + tz * tz);
        const mu = list.friction[c]; // dynamic μ_d
        if (!(vt > 0) || !(mu > 0)) continue;
        const ux = tx / vt, uy = ty / vt, uz = tz / vt;
        const u = this.vecIn; // the calls' vectors in vecIn, not as boxed arguments (row's note)
        u[0] = ux; u[1] = uy; u[2] = uz;
        this.generalizedInverseMass(c);
        const wt = u[3];
        if (!(wt > 0)) continue;
        const cap = (mu * this.lambdaN[c]) / h;
        const pt = Math.min(cap, vt / wt);
        u[0] = -pt * ux; u[1] = -pt * uy; u[2] = -pt * uz;
        this.accumulate(c);
        if (cap <= vt / wt) applied = true; // at its cap: the point slides (normalRows below)
        // as position-level λ = h P along t₁, t₂ (storeImpulses)
        if (!this.tangentForces) continue;
        this.lambdaT1[c] -= h * pt * (ux * list.tangent1[o3] + uy * list.tangent1[o3 + 1] + uz * list.tangent1[o3 + 2]);
        this.lambdaT2[c] -= h * pt * (ux * list.tangent2[o3] + uy * list.tangent2[o3 + 1] + uz * list.tangent2[o3 + 2]);
      }
      this.commit(a, b, true);
      // the normal rows again where a point slid (its friction at the cap), two rows or more (velocityPassPoints says why)
      if (applied) this.normalRows(m0, m1, collided, 2);
      m0 = m1;
    }
  }


  /**
   * The velocity pass's normal rows of the manifold [m0, m1) (velocityBlock), laid out as the block's
   * rows 0.. (λ = 0), one per active point that did not collide: target Δv_n = −v_n + max(−e ṽ_n, 0)
   * (Müller et al. 2020 §3.6; e = 0 when |ṽ_n| ≤ the threshold). Arms from saveArms; the relative
   * velocity from s[42..45) (velocityPass's, taken before the manifold's Δ), or, `now`, at the
   * velocities as they are. Returns the row count.
   * Laid out again (`now`) after the sliding manifold's dynamic friction (normalRows): the friction
   * impulses act at the contact points, off the bodies' centres (a box's base, half its height below
   * it), so they turn the bodies and give the points a normal velocity that the normal rows solved
   * before them had taken out: for a box sliding on its face, ω = μ_d P_n (H/2) / I about the axis
   * in the face across the slide, its front corners into the support and its back ones up. Left
   * there, that spin was the substep's end velocity: the next prediction tipped the box, the
   * position pass's normal rows loaded the front corners alone, the back corners' discs had no λ_n
   * and the stick test failed again; and ω × r at the base cancelled most of the slide's v_t, so
   * dynamic friction, capped by v_t / w_t, did not slow the box. A self-sustaining slide: measured
   * (f64, 1 m box, μ 0.5, tan θ = 0.991 μ_s, 1 × 10 substeps) a box started at 13 mm/s down the
   * slope went on at 13 mm/s with ω = 0.0218 rad/s = μ_d P_n (0.5 m) / I at every frame's end, where
   * Coulomb stops it within 0.33 s (a = g (μ_d cos θ − sin θ) = 0.040 m/s²); one Gauss–Seidel step
   * more between the normal rows and the friction (normal block, friction, normal block) shifts the
   * normal impulses to the front corners as the real contact does, and it stops (0.65 mm after 0.25 s).
   */
  private velocityNormalRows(m0: number, m1: number, collided: boolean, now: boolean): number {
    const list = this.list!, s = this.s;
    let rows = 0;
    for (let c = m0; c < m1; c++) {
      if (!this.active[c] || (collided && this.collided[c])) continue;
      const o3 = 3 * c;
      const nx = list.normal[o3], ny = list.normal[o3 + 1], nz = list.normal[o3 + 2];
      this.loadArms(c - m0);
      if (now) this.relativeVelocity(c, s, 42);
      const vn = s[42] * nx + s[43] * ny + s[44] * nz;
      const before = this.normalVelocityBefore[c];
      const e = Math.abs(before) > this.restitutionThreshold ? list.restitution[c] : 0;
      this.bKind[rows] = 0;
      this.bPoint[rows] = c - m0;
      const u = this.rowIn;
      u[0] = nx; u[1] = ny; u[2] = nz; u[3] = -vn + Math.max(-e * before, 0);
      this.row(rows++);
    }
    return rows;
  }

  /**
   * The velocity pass (default; velocityBlock off), manifold by manifold over those with a point active
   * in the substep, the collided points' normals aside:
   *   restitution  the manifold's normal rows (targets Δv_n = −v_n + max(−e ṽ_n, 0), free sign) as one
   *                block (solveBlock), as attempt 1 of the block pass;
   *   dynamic      then Müller et al. 2020 §3.6 point after point (Algorithm 2's loop over the contacts):
   *   friction     each from the velocities the points before it left (Gauss–Seidel), an impulse along
   *                −v̂_t of min(μ_d λ_n / h, |v_t| / (w_A(t̂) + w_B(t̂))) (the header's Coulomb cap),
   *                applied at once; a patch that slides as a whole (slidesWhole) takes every point's
   *                impulse from the same velocities, each at its cap;
   *   normal       then, where a point's friction met its cap (it slides; two rows or more), the normal block once more: it
   *   again        holds the tip that friction's impulses below the plane give the body.
   * Departure 4 replaced the rule applied to all points from the same velocities (Jacobi), whose map
   * I − D⁻¹K overshoots (eigenvalues down to −2.55 on a pyramid's patch: resting piles rocked), by a
   * stick block swept to convergence. Point after point the rule does not overshoot: each point's
   * impulse is the exact (or capped) projection of its own row on the velocities as they are, a
   * Gauss–Seidel step, whose error map on K = J M⁻¹ Jᵀ (positive semi-definite) does not grow in K's
   * energy norm; what one pass leaves, the next substep's pass takes. A sliding manifold's points are
   * at their caps, where the sum is Coulomb's μ_d P_n, as before. Measured (10k rain, 120 frames): the
   * stick blocks were ~55 % of the frame's block sweeps (12-row box faces and 6-row edges, cold, ~15 of
   * 16 sweeps each); the slope, sliding, rolling, rest, stack, pyramid and card-house tests pass unchanged.
   */
  private velocityPassPoints(h: number, collided: boolean): void {
    const list = this.list!, s = this.s, u = this.vecIn;
    const order = this.sweepOrder;
    for (let i = 0, m0 = 0; order !== null ? i < order.length : m0 < list.count; i++) {
      if (order !== null) m0 = order[i];
      const m1 = this.manifoldEnd(m0);
      const a = list.bodyA[m0], b = list.bodyB[m0];
      let any = false;
      for (let c = m0; c < m1; c++) any ||= this.active[c] === 1;
      if (!any) {
        m0 = m1;
        continue;
      }
      this.inertias(m0);
      const o3 = 3 * m0;
      const nx = list.normal[o3], ny = list.normal[o3 + 1], nz = list.normal[o3 + 2];
      for (let c = m0; c < m1; c++) {
        if (!this.active[c]) continue;
        this.arms(c);
        this.saveArms(c - m0);
      }
      this.normalRows(m0, m1, collided, 1);
      const jacobi = this.slidesWhole(m0, m1);
      let applied = false; // a point's friction at its Coulomb cap
      for (let c = m0; c < m1; c++) {
        if (!this.active[c]) continue;
        this.loadArms(c - m0);
        const mu = list.friction[c];
        if (!(mu > 0)) continue;
        this.relativeVelocity(c, s, 42);
        const vx = s[42], vy = s[43], vz = s[44];
        const vn = vx * nx + vy * ny + vz * nz;
        const tx = vx - vn * nx, ty = vy - vn * ny, tz = vz - vn * nz;
        const vt = Math.sqrt(tx * tx + ty * ty + tz * tz);
        if (!(vt > 0)) continue;
        const ux = tx / vt, uy = ty / vt, uz = tz / vt;
        u[0] = ux; u[1] = uy; u[2] = uz;
        this.generalizedInverseMass(c);
        const wt = u[3];
        if (!(wt > 0)) continue;
        const cap = (mu * this.lambdaN[c]) / h;
        const pt = Math.min(cap, vt / wt);
        u[0] = -pt * ux; u[1] = -pt * uy; u[2] = -pt * uz;
        this.accumulate(c);
        if (cap <= vt / wt) applied = true; // at its cap: the point slides (normalRows below)
        if (!jacobi) this.commit(a, b, true);
        // as position-level λ = h P along t₁, t₂ (storeImpulses)
        if (!this.tangentForces) continue;
        const c3 = 3 * c;
        this.lambdaT1[c] -= h * pt * (ux * list.tangent1[c3] + uy * list.tangent1[c3 + 1] + uz * list.tangent1[c3 + 2]);
        this.lambdaT2[c] -= h * pt * (ux * list.tangent2[c3] + uy * list.tangent2[c3 + 1] + uz * list.tangent2[c3 + 2]);
      }
      if (jacobi) this.commit(a, b, true);
      // the normal rows again (free sign, Müller's targets), where a point slid (its friction at the cap) on
      // a patch of two rows or more: friction's impulses, below the contact plane, tip the body (a sliding 1 m box on a slope
      // by μ_d m g cos θ · h/2 / I = 0.022 rad/s a substep), which the points' normal forces, shifting
      // from back to front, hold in the body (Coulomb's block: normal and tangent rows together). Left
      // for the next substep's projection, the tip is undone only there, on the position level, and
      // the slip slidesWhole reads is off by ω × r (the box's frame-1 speed 0.0057 m/s against a t =
      // 0.0012; with it 0.00116, and 0.15678 m/s at 2.25 s against 0.1568). A patch whose friction stopped
      // every point (below its caps: at rest, or stopping) is left as before: its tip is as small as the
      // slip it stopped, and the second solve on every resting manifold doubled the pass (3k rain: 11 → 19–22
      // ms a frame, wall, loaded)
      if (applied) this.normalRows(m0, m1, collided, 2);
      m0 = m1;
    }
  }

  /**
   * The manifold's normal rows (targets Δv_n = −v_n + max(−e ṽ_n, 0), free sign: Müller's rule) as one
   * block (solveBlock), its points' arms from saveArms; solved where there are at least minRows of them.
   */
  private normalRows(m0: number, m1: number, collided: boolean, minRows: number): void {
    this.beginBlock(m0);
    const rows = this.velocityNormalRows(m0, m1, collided, true);
    if (rows >= minRows && rows > 0) {
      this.solveBlock(rows, false, false, true);
      this.applyDelta(this.list!.bodyA[m0], this.list!.bodyB[m0], true);
    }
  }


  /**
   * Whether manifold [m0, m1) slides as a whole in the velocity pass (velocityPassPoints): it has two
   * points or more with friction, and the impulse that stops the mean tangential velocity of its points
   * by translation alone, |v̄_t| / (m_A⁻¹ + m_B⁻¹), exceeds the sum of their Coulomb caps Σ μ_d λ_n / h.
   * No distribution over the points can stop a patch's common slip with less than that linear impulse
   * (each point's impulse moves the centres of mass by m⁻¹ P, whatever its lever arm), so Coulomb's
   * answer is every point at its cap, opposed to its own slip: applied from the same velocities
   * (Jacobi within the manifold). Point after point instead, the first corner's capped impulse, off the
   * line of the slip through the centre, yaws the body and turns the next corners' slip sideways
   * (measured: a 1 m box at tan θ = 1.016 μ_s, slip directions up to 87° off the slope, the friction
   * along it 26–49 % of μ_d f_n in the first frame, 99 % after), so a box slid 230 mm in 2 s where
   * a = g (sin θ − μ_d cos θ) gives 174 mm. A manifold that could stop keeps the point-after-point pass.
   */
  private slidesWhole(m0: number, m1: number): boolean {
    const list = this.list!, s = this.s, h = this.passH[0];
    const o3 = 3 * m0;
    const nx = list.normal[o3], ny = list.normal[o3 + 1], nz = list.normal[o3 + 2];
    let caps = 0, sx = 0, sy = 0, sz = 0, count = 0;
    for (let c = m0; c < m1; c++) {
      if (!this.active[c]) continue;
      const mu = list.friction[c];
      if (!(mu > 0)) continue;
      this.loadArms(c - m0);
      this.relativeVelocity(c, s, 42);
      const vn = s[42] * nx + s[43] * ny + s[44] * nz;
      sx += s[42] - vn * nx; sy += s[43] - vn * ny; sz += s[44] - vn * nz;
      caps += (mu * this.lambdaN[c]) / h;
      count++;
    }
    if (count < 2) return false;
    const slip = Math.sqrt(sx * sx + sy * sy + sz * sz) / count;
    return slip > (this.bMassA + this.bMassB) * caps;
  }

}

/**
 * v_push (m/s): the most speed at which the projection takes out an overlap that the bodies already had
 * at a substep's start (header, "Bounded push-out"). Box2D v3's contact push-out bound
 * (b2WorldDef.contactPushMaxVelocity, "contactPushVelocity" in v3.0), 3 m/s.
 */
export const PUSH_OUT_SPEED = 3;

/** Sweeps of the manifold block's projected Gauss–Seidel (≤ 12 rows; enough to converge a box's four corners). */
const BLOCK_SWEEPS = 16;
/**
 * A stick test's block (normals and tangent pairs in their discs) whose sweep number GIVE_UP_SWEEPS
 * still changes a λ by more than GIVE_UP_CHANGE of the largest |λ| is not converging: its discs clamp
 * back and forth, the manifold slides, and the block is given up as failing the test (its result was
 * discarded then anyway). Measured on the 10k rain (frames 20–60, position and velocity passes): of
 * 1,277,063 such blocks, 12 met the stick test after all BLOCK_SWEEPS sweeps (0.0009 %), every other
 * one failed it; blocks below this change at sweep 8 go on to BLOCK_SWEEPS as before. It halves the
 * sweeps of a sliding manifold's block.
 */
const GIVE_UP_SWEEPS = 8;
const GIVE_UP_CHANGE = 0.1;
/** A block sweep that changes no λ by more than this fraction of the largest |λ| ends the solve. */
const BLOCK_CONVERGED = 1e-9;
/**
 * A block sweep whose rows were all left within this distance (m) of their targets ends the solve too:
 * the largest |b_i − J_i Δ| of the sweep (a row's update is Δλ_i K_ii = that residual), in metres for
 * the position pass's rows (penetration, static friction's Δp_t) and in m/s for the velocity pass's,
 * whose floor is BLOCK_RESIDUAL / h (a velocity left that moves the point by less than BLOCK_RESIDUAL
 * within the substep). 1 nm is 10⁻⁵ of the smallest pair slop of a supported body (a 1 cm cube's, 0.1 mm:
 * collision/pipeline.ts pairSlop) and of no test's tolerance. The relative test alone kept blocks of
 * tiny targets sweeping to BLOCK_SWEEPS on rounding noise: measured on the 10k rain (120 frames), ~3,400
 * velocity blocks a frame with every target below 10⁻¹⁴ m/s ran all 16 sweeps, and 41 % of the swept
 * blocks hit the cap with residuals of 10⁻⁶ to 10⁻¹⁵.
 */
const BLOCK_RESIDUAL = 1e-9;
/**
 * Static friction holds a manifold when its block solve leaves at most this fraction (in norm) of the
 * tangential motion to undo (a feasible stick converges to ~0; a slide is clamped by the discs and
 * leaves most of it: |Δp_t| ≫ what μ_s λ_n can undo).
 */
const STICK_TOLERANCE = 0.01;
/**
 * restickBlock runs where the first stick test left at most this fraction (in norm) of the tangential
 * motion undone. A cost bound, measured on the 3k rain (100 frames, sleep off): of 7,043 manifolds the
 * second start held, 95 % had missed by < 1/4 (77 % by < 0.05), at 19 % of the 333k failed blocks of
 * several points. With this bound (and shareStart) the rain's frame went 51.4 → 53.3 ms (median of 3,
 * CPU time, alternating with main's head on one loaded 2-core VM; pyramid base 20: 18.3 → 18.5). The
 * box of restickBlock's measurement (friction-ramp, angle 0.45) missed by < 0.05.
 */
const RESTICK_UNMET = 0.25;
