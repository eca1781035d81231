/**
 * The row machinery every velocity-level block solver shares (jacobi-cpu, gs-cpu, and the
 * operator of global-cpu): the joints laid out as rows (rows.ts) by their constraint types,
 * evaluated each step, each block's A_bb = J_b M⁻¹ J_bᵀ (+ γ) inverted, and the projected block
 * update of the multipliers.
 *
 * Per step (stage 3 of the Jacobi text, generalised to rows):
 *   evaluate   C and J of every row at the current pose (the constraint types)
 *   prepare    per row: biasRate and γ from rows/softness.ts — a rigid equality row β/h (the
 *              Jacobi text's Baumgarte term, eq. 8); a one-sided row that is apart (C > 0) the
 *              speculative 1/h with γ = 0 (it may close the gap within the step, no further); a
 *              soft row (α > 0) the spring's 1/h and γ = α/h² (S2);
 *              per block: A_bb + diag(γ), inverted (rows.ts invertBlock)
 * Per iteration, for each block b (all from the same V in Jacobi; one after the other, each
 * seeing the last, in Gauss-Seidel):
 *   ρ_p  = J_p V + biasRate_p C_p + h γ_p λ_p                          (velocity units)
 *   Δλ_b = −h⁻¹ (A_bb + γ)⁻¹ ρ_b                                         (the Jacobi text's (37), rows' signs)
 *   λ_p  ← clamp(λ_p + Δλ_p, lower_p, upper_p)                          (projected: the one-pager's row solve)
 * and the residual ‖b − Aλ‖ it reports is h⁻¹ ρ over the rows, projected: a joint's row at a bound
 * whose ρ pushes further out of bounds counted as 0 (complementarity holds there), a contact's normal
 * row and friction pair by the natural map of their complementarity problem (N1, contactNormalResidual),
 * which is 0 there too and ρ itself off the bounds.
 *
 * Warm start follows the rows' keys: `layout` keeps λ of every row whose key the previous
 * layout had, and a new row starts at 0.
 *
 * Split impulse (splitPositionBias; pgs-cpu, and gs-cpu and jacobi-cpu and their GPU twins on contact scenes): a rigid joint
 * row's Baumgarte term leaves the velocity solve, which then solves J V = 0 with the warm-started λ, and
 * goes to a position pass of its own (solvePositions) on pseudo-velocities P from λ_p = 0:
 *   J P = −β C / h,   x ← x + h (V + P),  P then forgotten, λ_p never stored
 * (Bullet's and ODE's split impulse; Box2D v2 keeps position error out of the velocities and the warm start
 * by its separate position iterations, Box2D v3 by the soft step's relax). Why: with the bias in the
 * velocity solve, λ carries its push into the next step's warm start, where it acts on V again. Where the
 * sweeps leave a mode unconverged (per-step contraction γ of its residual near 1) the warm start and the
 * bias feed each other: for a mode with e = λ − λ*, the velocity error h M⁻¹Jᵀe returns next step as −e in
 * λ*, and the position error it leaves comes back through β C / h; the linear model of the two is unstable
 * for γ > 0.85 at β = 0.2 (0.93 at 0.1), and stable for any γ < 1 with the bias split off (or cold λ).
 * Measured: a chain of thin planks twisted out of its plane (the twist about a plank's long axis, I_x ≈ I_z / 28,
 * is pulled on by both of its hinges' alignment rows; a sweep takes a few per cent of it) gained energy until
 * it diverged under pgs-cpu, gs-cpu and jacobi-cpu (test/joint-split.test.ts). Split, Baumgarte also puts no
 * kinetic energy in: a violated joint at rest is corrected and stays at rest. Soft rows (compliance, joint
 * springs) and speculative rows keep their bias in the velocity solve: theirs is a force or a velocity bound.
 */
import { RowSet, rowConnectivity, blockVelocity, pointBlockVelocity, gatherImpulse, invertBlock, blockDelassus, pointBlockDelassus, JACOBIAN_STRIDE, type RowConnectivity } from './rows.js';
import { constraintTypes } from './constraint-types.js';
import { MAX_ROWS_PER_CONSTRAINT } from './constraint-type.js';
import type { BodyPose, JointTable } from '../model/joint-data.js';
import { softness, type Softness, type SoftnessSpec } from './softness.js';
import { CONTACT_FRICTION, CONTACT_NORMAL } from './rows.js';
import { ContactList, copyContacts, evaluateContact, layoutContacts, tangentOf } from './contact.js';

/** How far (m, in body A's frame) a point may have moved and still take the last step's λ (matchByPosition). */
export const MATCH_DISTANCE = 0.02;

/**
 * How a solver treats contact rows' position error and bounce (the Starframe text's "Resolving
 * overlaps", slop, and "Other uses for bias"; Box2D v3's soft contact). For a normal row with
 * separation C (K1 of rows/contact.ts):
 *   C > 0 (apart, speculative)  bias = C / h, γ = 0: the row lets the gap close within the step, no more;
 *   C ≤ 0 (touching)            bias = max(rate · min(0, C + slop), −maxPushout):
 *                               the overlap beyond the slop is fed back (Baumgarte: rate = β/h; soft:
 *                               rate and γ of rows/softness.ts S3 from a frequency and a damping
 *                               ratio), at most at the push-out speed.
 * Restitution (applyRestitution) before the solve, as collision propagation (Guendelman et al. 2003):
 * a point with e > 0 approaching faster than `restitutionThreshold` whose gap closes within the step
 * takes the impulse that makes it leave at −e times its approach, pair after pair, swept until none
 * collides (a Newton's cradle passes the impulse down the row).
 */
export interface ContactRule {
  /** how overlap is fed back: Baumgarte ('rigid', β in units of 1/h) or a soft spring ('frequency') */
  softness: SoftnessSpec;
  /** the spring against a fixed body, where it differs (Box2D v3: twice the contact frequency) */
  staticSoftness?: SoftnessSpec;
  /**
   * Small bodies (a frequency spring only): the spring of a pair whose smaller body has least half size L
   * is at least ω_L = √(|g| / (sagFraction · L)), so a body's own weight sinks it by at most sagFraction · L
   * (a spring's sag is g/ω² per weight carried), at most `sizeHertzCap` Hz (contacts/contact-solver.ts prepare)
   */
  sizeSpring?: { sagFraction: number; gravity: number; capHertz: number };
  /** overlap left alone, m */
  slop: number;
  /** the fastest push-out, m/s */
  maxPushout: number;
  /** approach speed below which nothing bounces, m/s */
  restitutionThreshold: number;
}

/** The velocity solvers' contact defaults (slop 5 mm, push-out at most 3 m/s). */
export const CONTACT_SLOP = 0.005;
export const MAX_PUSHOUT = 3;
/**
 * m/s: the default approach speed below which nothing bounces (`--restitution-threshold`). Box2D uses
 * 1 m/s, to keep resting contacts from bouncing on the speed gravity gives them each step. Here the
 * collision pass takes the step's gravity out first (applyRestitution: v_n⁻ = v_n − J_n h g), so a
 * resting contact approaches at the solver's own noise only, and the threshold can be 10× lower:
 * measured, a pyramid of e = 0.8 boxes still falls asleep (0.5–0.9 s) and the `restitution` scene's
 * balls come to rest, while a Newton's cradle struck at 0.63 m/s (0.2 rad) passes its strike on (at
 * 1 m/s it did not: its last ball left at 0.2 of the speed).
 */
export const RESTITUTION_THRESHOLD = 0.1;
/** Collision sweeps at most per step (applyRestitution; a row of n touching spheres struck end-on needs ≤ n − 1). */
export const COLLISION_SWEEPS = 32;
/**
 * The nonzero values of rows 0..n−1 by their keys, looked up by key (0 where absent): typed arrays
 * sorted by key and a binary search, where a Map would stop at V8's 2²⁴ entries (a relayout of
 * 5.6M point joints carries 16.8M λ) and cost ~80 B an entry.
 */
class KeyedValues {
  private readonly keys: Float64Array;
  private readonly values: Float64Array;
  constructor(key: Float64Array, value: Float64Array, n: number) {
    let m = 0;
    for (let r = 0; r < n; r++) if (value[r] !== 0) m++;
    const order = new Uint32Array(m);
    for (let r = 0, k = 0; r < n; r++) if (value[r] !== 0) order[k++] = r;
    order.sort((a, b) => key[a] - key[b]);
    this.keys = new Float64Array(m);
    this.values = new Float64Array(m);
    for (let k = 0; k < m; k++) (this.keys[k] = key[order[k]]), (this.values[k] = value[order[k]]);
  }
  get(key: number): number {
    let lo = 0, hi = this.keys.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1, k = this.keys[mid];
      if (k === key) return this.values[mid];
      if (k < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return 0;
  }
}

/** Points of one manifold that collide together at most, and the Gauss-Seidel sweeps of their block (applyRestitution). */
const MAX_MANIFOLD_POINTS = 8;
const MANIFOLD_SWEEPS = 32;

export function baumgarteContacts(beta: number, restitutionThreshold = RESTITUTION_THRESHOLD): ContactRule {
  return { softness: { kind: 'rigid', beta }, slop: CONTACT_SLOP, maxPushout: MAX_PUSHOUT, restitutionThreshold };
}

export class RowBlockSolver {
  readonly rows = new RowSet();
  /** rows of constraint slot ic: rowStart[ic] .. rowStart[ic] + rowCount[ic] − 1 */
  rowStart = new Int32Array(0);
  rowCount = new Int32Array(0);
  /** blocks of constraint slot ic: constraintBlock[ic] .. constraintBlockEnd[ic] − 1 */
  constraintBlock = new Int32Array(0);
  constraintBlockEnd = new Int32Array(0);
  /**
   * first block of the k-th constraint of the layout order (constraintCount + 1 entries): the
   * constraints order[from .. to) are the blocks orderBlock[from] .. orderBlock[to] − 1
   */
  orderBlock = new Int32Array(1);
  conn: RowConnectivity = { start: new Int32Array(1), entry: new Int32Array(0), point: null };
  /** A_bb⁻¹ of each block, row-major, at blockMatrixStart[b] */
  blockMatrix = new Float64Array(0);
  blockMatrixStart = new Int32Array(1);
  /** the joints' version (JointSet.version) the rows were laid out for */
  laidOutVersion = -1;
  private scratch = new Float64Array(0);
  /** rows and blocks of the joints (layout); contact rows and blocks follow them (setContacts) */
  jointRows = 0;
  jointBlocks = 0;
  /** the contacts laid out after the joints (setContacts), or null */
  contacts: ContactList | null = null;

  /**
   * The slop of the contact whose normal row is `row`: the rule's, at most the pair's (collision/
   * pipeline.ts pairSlop: 5 mm for metre-sized bodies, 2 % of the smaller body's least half size below
   * that), so a 1 cm cube is not left to sink half its height inside a 5 mm dead band. Contact c's normal
   * row is 3c after the joints' rows (rows/contact.ts layoutContacts).
   */
  private pointSlop(row: number, ruleSlop: number): number {
    const list = this.contacts!;
    const c = (row - (this.rows.count - 3 * list.count)) / 3;
    return Math.min(ruleSlop, list.slop[c]);
  }
  /** per row: A_pp = J_p M⁻¹ J_pᵀ without γ (restitution's effective mass 1/A_pp) */
  private diagonal = new Float64Array(0);
  /**
   * The position pass's (A_bb^p + γ)⁻¹ of each joint block (at blockMatrixStart[b]), where its mass split is
   * not the velocity solve's (positionShare; prepare fills it while massShare is set and the impulses split)
   */
  private positionMatrix = new Float64Array(0);
  /** whether solvePositions reads positionMatrix (prepare: massShare set, split on) or blockMatrix */
  private positionOwn = false;
  /** (A_bb)⁻¹ without γ, for the relax pass (prepare with relax = true) */
  private blockMatrixRigid = new Float64Array(0);
  /** per row: the bias of the relax pass (only a speculative contact's C/h) */
  private relaxBias = new Float64Array(0);
  /** whether a rigid point joint's block takes the lever-arm fast path (false once a joint spring makes γ ≠ 0) */
  private pointFast = true;
  /** every block is a rigid point joint's (block b: rows 3b..3b+2, its A⁻¹ at 9b): solvePointBlocks serves the sweep */
  private allPoint = false;

  /**
   * @param joints the compiled joints (a JointSet where they change between steps)
   * @param inverseMass per body (fixed bodies 0: they get no connectivity entries)
   * @param defaultCompliance α of the joints that set none (the solver's --compliance)
   */
  constructor(
    readonly joints: JointTable & { version?: number },
    readonly bodyCount: number,
    readonly inverseMass: Float64Array,
    readonly defaultCompliance: number,
  ) {
    this.layout();
  }

  /**
   * (Re)builds the row set from the joints, in `order` (default: slot order; a Gauss-Seidel solver
   * passes its colour order so each colour is a contiguous run of blocks): each constraint's blocks,
   * keys id · MAX_ROWS + k (id: the joint's stable id, JointTable.id, or its slot), λ carried over by
   * key from the previous layout; then the body → row CSR and the block matrices' offsets. Call again
   * whenever the constraint set changes.
   */
  layout(order?: Int32Array): void {
    const rows = this.rows;
    const j = this.joints;
    const previous = new KeyedValues(rows.key, rows.lambda, this.jointRows);
    if (this.contacts) this.saveContactLambda();
    rows.clear();
    const nc = j.constraintCount;
    // the joints' rows and blocks counted first (every constraint type lays its rows out through
    // addBlock alone), so the set is reserved at its size once, not grown by doubling to up to twice
    // it (at 10M joints: 30M rows, 2.6 GB of doubling's slack and copies)
    let needRows = 0, needBlocks = 0;
    const counter = { addBlock: (n: number) => ((needRows += n), needBlocks++, 0) } as unknown as RowSet;
    for (let ic = 0; ic < nc; ic++) constraintTypes[j.kind[ic]].layout(j, ic, counter, 0, 0);
    rows.reserve(needRows, needBlocks);
    this.rowStart = new Int32Array(nc);
    this.rowCount = new Int32Array(nc);
    this.constraintBlock = new Int32Array(nc);
    this.constraintBlockEnd = new Int32Array(nc);
    this.orderBlock = new Int32Array(nc + 1);
    for (let k = 0; k < nc; k++) {
      const ic = order ? order[k] : k;
      this.rowStart[ic] = rows.count;
      this.constraintBlock[ic] = rows.blockCount;
      this.orderBlock[k] = rows.blockCount;
      const own = j.compliance[ic];
      const alpha = Number.isNaN(own) ? this.defaultCompliance : own;
      constraintTypes[j.kind[ic]].layout(j, ic, rows, alpha, (j.id ? j.id[ic] : ic) * MAX_ROWS_PER_CONSTRAINT);
      this.rowCount[ic] = rows.count - this.rowStart[ic];
      this.constraintBlockEnd[ic] = rows.blockCount;
    }
    this.orderBlock[nc] = rows.blockCount;
    for (let r = 0; r < rows.count; r++) rows.lambda[r] = previous.get(rows.key[r]);
    this.jointRows = rows.count;
    this.jointBlocks = rows.blockCount;
    const contacts = this.contacts;
    this.contacts = null;
    if (contacts) this.setContacts(contacts);
    else this.connect();
    this.laidOutVersion = j.version ?? 0;
  }

  /**
   * Lays out the contacts of this step after the joints' rows (rows/contact.ts: a normal block and
   * a friction block per point), λ of each carried by its key from the last contacts (or `previous`),
   * then the connectivity and the block matrices' offsets. Call once per step, after collision.
   */
  setContacts(list: ContactList | null): void {
    const rows = this.rows;
    if (!this.lambdaSaved) this.saveContactLambda();
    this.lambdaSaved = false;
    const oldCount = this.lastCount;
    rows.truncate(this.jointRows, this.jointBlocks);
    this.contacts = list && list.count > 0 ? list : null;
    this.lastCount = 0;
    if (this.contacts) {
      layoutContacts(rows, this.contacts);
      this.carryContactLambda(this.contacts, oldCount);
      copyContacts(this.contacts, this.lastContacts);
      this.lastCount = this.contacts.count;
    }
    this.connect();
  }

  /** the contacts of the last step (pair, normal, anchors, key) and their λ (normal, t₁, t₂), for carryContactLambda */
  private readonly lastContacts = new ContactList();
  private lastCount = 0;
  private lastLambda = new Float64Array(0);
  private lambdaSaved = false;

  /** λ of the contact rows laid out now, into lastLambda (before the rows are cleared). */
  private saveContactLambda(): void {
    const n = this.contacts ? this.lastCount : 0;
    this.lastCount = n;
    if (this.lastLambda.length < 3 * n) this.lastLambda = new Float64Array(3 * this.lastContacts.capacity);
    for (let k = 0; k < 3 * n; k++) this.lastLambda[k] = this.rows.lambda[this.jointRows + k];
    this.lambdaSaved = true;
  }

  /**
   * Warm start of the contact rows (the Starframe text's impulse caching): each point takes the λ of
   * the last step's point with the same key (pair and feature), or else, when its features changed
   * (two equal boxes face to face, whose clipped corners swap labels as they shift), of the last
   * step's point of the same pair, with the same normal, whose anchor on A lies within MATCH_DISTANCE
   * ("contact point positions … with a tolerance region"). The friction λ is carried as the world
   * vector λ₁ t₁ + λ₂ t₂ and projected on the new tangents, so a change of tangent basis loses nothing.
   */
  private carryContactLambda(list: ContactList, oldCount: number): void {
    if (oldCount === 0) return;
    const rows = this.rows, old = this.lastContacts, lam = this.lastLambda;
    const byKey = new Map<number, number>();
    let byPair: Map<number, number[]> | null = null;
    for (let k = 0; k < oldCount; k++) byKey.set(old.key[k], k);
    const t = this.tangentScratch;
    for (let c = 0; c < list.count; c++) {
      let k = byKey.get(list.key[c]) ?? -1;
      if (k < 0) {
        if (!byPair) {
          byPair = new Map();
          for (let q = 0; q < oldCount; q++) {
            const pair = old.bodyA[q] * this.bodyCount + old.bodyB[q];
            const at = byPair.get(pair);
            if (at) at.push(q);
            else byPair.set(pair, [q]);
          }
        }
        let bestD2 = MATCH_DISTANCE * MATCH_DISTANCE;
        for (const q of byPair.get(list.bodyA[c] * this.bodyCount + list.bodyB[c]) ?? []) {
          const dn = list.normal[3 * c] * old.normal[3 * q] + list.normal[3 * c + 1] * old.normal[3 * q + 1] + list.normal[3 * c + 2] * old.normal[3 * q + 2];
          if (dn < 0.99) continue;
          const dx = list.anchorA[3 * c] - old.anchorA[3 * q], dy = list.anchorA[3 * c + 1] - old.anchorA[3 * q + 1], dz = list.anchorA[3 * c + 2] - old.anchorA[3 * q + 2];
          const d2 = dx * dx + dy * dy + dz * dz;
          if (d2 < bestD2) {
            bestD2 = d2;
            k = q;
          }
        }
      }
      if (k < 0) continue;
      const row = this.jointRows + 3 * c;
      rows.lambda[row] = lam[3 * k];
      // friction as a world vector f = λ₁ t₁ + λ₂ t₂ of the old tangents, projected on the new ones
      const nx = old.normal[3 * k], ny = old.normal[3 * k + 1], nz = old.normal[3 * k + 2];
      tangentOf(nx, ny, nz, t, 0);
      t[3] = ny * t[2] - nz * t[1];
      t[4] = nz * t[0] - nx * t[2];
      t[5] = nx * t[1] - ny * t[0];
      const l1 = lam[3 * k + 1], l2 = lam[3 * k + 2];
      const fx = l1 * t[0] + l2 * t[3], fy = l1 * t[1] + l2 * t[4], fz = l1 * t[2] + l2 * t[5];
      const o = 3 * c;
      rows.lambda[row + 1] = fx * list.tangent1[o] + fy * list.tangent1[o + 1] + fz * list.tangent1[o + 2];
      rows.lambda[row + 2] = fx * list.tangent2[o] + fy * list.tangent2[o + 1] + fz * list.tangent2[o + 2];
    }
  }
  private readonly tangentScratch = new Float64Array(6);

  /** The body → row CSR and the block matrices' offsets for the rows laid out now. */
  private connect(): void {
    const rows = this.rows;
    this.conn = rowConnectivity(rows, this.bodyCount, this.inverseMass);
    let allPoint = rows.blockCount > 0;
    for (let b = 0; b < rows.blockCount && allPoint; b++) allPoint = rows.pointBlock[b] === 1;
    this.allPoint = allPoint;
    if (this.blockMatrixStart.length < rows.blockCount + 1) this.blockMatrixStart = new Int32Array(rows.blockCapacity + 1);
    let largest = 0;
    for (let b = 0; b < rows.blockCount; b++) {
      const n = rows.blockStart[b + 1] - rows.blockStart[b];
      largest = Math.max(largest, n);
      this.blockMatrixStart[b + 1] = this.blockMatrixStart[b] + n * n;
    }
    const size = this.blockMatrixStart[rows.blockCount];
    if (this.blockMatrix.length < size) this.blockMatrix = new Float64Array(Math.max(size, 2 * this.blockMatrix.length));
    if (this.scratch.length < 2 * largest * largest + largest) this.scratch = new Float64Array(2 * largest * largest + largest);
  }

  /** Contact c's normal row (its friction rows follow it). */
  contactRow(c: number): number {
    return this.jointRows + 3 * c;
  }

  /** Whether the joints changed since the last layout (a JointSet's version moved on). */
  get stale(): boolean {
    return (this.joints.version ?? 0) !== this.laidOutVersion;
  }

  /** C and J of constraint ic's rows at `pose` (its type's evaluate; XPBD evaluates one constraint at a time). */
  evaluateConstraint(ic: number, pose: BodyPose): void {
    constraintTypes[this.joints.kind[ic]].evaluate(this.joints, ic, pose, this.rows, this.rowStart[ic]);
  }

  /** C and J of every row at `pose` (the constraint types' evaluate; the contacts' rows/contact.ts). */
  evaluate(pose: BodyPose): void {
    const nc = this.joints.constraintCount;
    for (let ic = 0; ic < nc; ic++) constraintTypes[this.joints.kind[ic]].evaluate(this.joints, ic, pose, this.rows, this.rowStart[ic]);
    const list = this.contacts;
    if (list) for (let c = 0; c < list.count; c++) evaluateContact(this.rows, this.jointRows + 3 * c, list, c, pose.position, pose.orientation);
  }

  /**
   * Per row biasRate and γ (header) and the bias (velocity units), per block (A_bb + diag γ)⁻¹ (a
   * rigid point joint's A from its lever arms: pointBlockDelassus). `beta` in units of 1/h (the
   * solvers' --beta), `inverseInertia` the world-frame I⁻¹ of stage 1 (9 per body).
   *   contact  how contact rows are biased (ContactRule; default Baumgarte β with the slop and cap);
   *   joint    a spring for the joints' rigid equality rows instead of Baumgarte (soft solvers:
   *            rows/softness.ts S3 per row from its own A_pp), or null;
   *   relax    also keep (A_bb)⁻¹ without γ and the relax bias (a soft step's relax pass).
   */
  prepare(h: number, beta: number, inverseInertia: Float64Array, contact: ContactRule = baumgarteContacts(beta), joint: SoftnessSpec | null = null, relax = false): void {
    const rows = this.rows;
    const M = this.blockMatrix;
    if (this.bias.length < rows.count) {
      this.bias = new Float64Array(rows.capacity);
      this.diagonal = new Float64Array(rows.capacity);
      this.relaxBias = new Float64Array(rows.capacity);
    }
    const split = this.splitPositionBias;
    if (split && this.positionBias.length < rows.count) {
      this.positionBias = new Float64Array(rows.capacity);
      this.pseudoLambda = new Float64Array(rows.capacity);
    }
    if (relax && this.blockMatrixRigid.length < M.length) this.blockMatrixRigid = new Float64Array(M.length);
    // the position pass's own blocks (massShare, positionShare): a second inverse per joint block
    const ownPosition = split && this.massShare !== null;
    this.positionOwn = ownPosition;
    const P = this.positionMatrix.length < M.length && ownPosition ? (this.positionMatrix = new Float64Array(M.length)) : this.positionMatrix;
    const positionShare = this.positionShare;
    const rigidJoints = joint === null || joint.kind === 'rigid';
    this.pointFast = rigidJoints;
    const jointSpec: SoftnessSpec = joint ?? { kind: 'rigid', beta };
    // rows/softness.ts for each distinct compliance (the rows of a joint share theirs)
    let lastAlpha = NaN;
    let soft: Softness = softness({ kind: 'rigid', beta }, h, 0);
    const rigid = soft;
    const invH = 1 / h;
    const { slop, maxPushout } = contact;
    // the contact springs at unit effective mass, once per step (scaled per row below)
    const contactUnit = softness(contact.softness, h, 1);
    const staticUnit = contact.staticSoftness ? softness(contact.staticSoftness, h, 1) : null;
    for (let b = 0; b < rows.blockCount; b++) {
      const r0 = rows.blockStart[b], r1 = rows.blockStart[b + 1], n = r1 - r0;
      const o = this.blockMatrixStart[b];
      const kind = rows.contactKind[b];
      if (rows.pointBlock[b] === 1 && rigidJoints) {
        // a rigid point joint: rigid equality rows (β/h, γ = 0), A from its lever arms
        pointBlockDelassus(rows, b, this.inverseMass, inverseInertia, M, o, this.massShare);
        for (let p = r0; p < r1; p++) {
          rows.biasRate[p] = rigid.biasRate;
          rows.gamma[p] = 0;
          this.bias[p] = rigid.biasRate * rows.error[p];
          this.relaxBias[p] = 0;
          if (split) {
            // split impulse (header): the Baumgarte term goes to the position pass
            this.positionBias[p] = this.bias[p];
            this.bias[p] = 0;
          }
        }
        if (relax) this.blockMatrixRigid.set(M.subarray(o, o + 9), o);
        invertBlock(M, o, 3, this.scratch);
        if (relax) invertBlock(this.blockMatrixRigid, o, 3, this.scratch);
        if (ownPosition) {
          // the position pass's block, split by positionShare (null: A_bb), γ = 0 here
          pointBlockDelassus(rows, b, this.inverseMass, inverseInertia, P, o, positionShare);
          invertBlock(P, o, 3, this.scratch);
        }
        continue;
      }
      blockDelassus(rows, r0, r1, this.inverseMass, inverseInertia, M, o, b < this.jointBlocks ? this.massShare : null);
      for (let p = r0; p < r1; p++) this.diagonal[p] = M[o + (p - r0) * (n + 1)];
      if (relax) this.blockMatrixRigid.set(M.subarray(o, o + n * n), o);
      if (kind === CONTACT_NORMAL) {
        // (ContactRule): speculative when apart; else the overlap beyond the slop, capped
        const C = rows.error[r0];
        let rate = 0, gamma = 0, bias: number;
        const toFixed = contact.staticSoftness !== undefined && (this.inverseMass[rows.bodyA[r0]] === 0 || this.inverseMass[rows.bodyB[r0]] === 0);
        const unit = toFixed ? staticUnit! : contactUnit;
        // a frequency spring's γ = 1 / (m_eff a₂) (softness.ts S3) is γ(m_eff = 1) · A_nn; the bias rate does not depend on m_eff
        const touchRate = unit.biasRate;
        const touchGamma = unitScaled(toFixed ? contact.staticSoftness! : contact.softness) ? unit.gamma * this.diagonal[r0] : unit.gamma;
        if (C > 0) {
          rate = invH;
          bias = C * invH;
        } else {
          rate = touchRate;
          gamma = touchGamma;
          bias = Math.max(rate * Math.min(0, C + this.pointSlop(r0, slop)), -maxPushout);
        }
        rows.biasRate[r0] = rate;
        rows.gamma[r0] = gamma;
        this.bias[r0] = bias;
        this.relaxBias[r0] = C > 0 ? C * invH : 0;
        if (split) this.positionBias[r0] = 0;
        M[o] += gamma;
      } else if (kind === CONTACT_FRICTION) {
        // velocity only: no bias, no spring
        for (let p = r0; p < r1; p++) {
          rows.biasRate[p] = 0;
          rows.gamma[p] = 0;
          this.bias[p] = 0;
          this.relaxBias[p] = 0;
          if (split) this.positionBias[p] = 0;
        }
      } else {
        for (let p = r0; p < r1; p++) {
          const alpha = rows.compliance[p];
          const oneSided = rows.lower[p] === 0 && rows.upper[p] === Infinity;
          let rate: number, gamma: number;
          // a rigid row fed back by Baumgarte (not a compliance's nor a joint spring's row): split when asked
          const baumgarte = alpha === 0 && rigidJoints;
          if (alpha > 0 || rigidJoints) {
            if (alpha !== lastAlpha) {
              soft = alpha > 0 ? softness({ kind: 'compliance', compliance: alpha, damping: 0 }, h, 0) : rigid;
              lastAlpha = alpha;
            }
            rate = soft.biasRate;
            gamma = soft.gamma;
          } else {
            // a joint spring (soft solvers), per row from its own effective mass 1/A_pp
            const js = softness(jointSpec, h, 1 / this.diagonal[p]);
            rate = js.biasRate;
            gamma = js.gamma;
          }
          if (oneSided && rows.error[p] > 0) {
            // apart: the speculative row, no spring
            rows.biasRate[p] = invH;
            rows.gamma[p] = 0;
            this.relaxBias[p] = rows.error[p] * invH;
          } else {
            rows.biasRate[p] = rate;
            rows.gamma[p] = gamma;
            this.relaxBias[p] = 0;
          }
          this.bias[p] = rows.biasRate[p] * rows.error[p];
          if (split) {
            // split impulse (header): a Baumgarte row's feedback goes to the position pass; a speculative
            // row (apart: C/h lets the gap close within the step, no more) is a velocity bound and stays
            const speculative = oneSided && rows.error[p] > 0;
            this.positionBias[p] = baumgarte && !speculative ? this.bias[p] : 0;
            if (baumgarte && !speculative) this.bias[p] = 0;
          }
          M[o + (p - r0) * (n + 1)] += rows.gamma[p];
        }
      }
      invertBlock(M, o, n, this.scratch);
      if (relax) invertBlock(this.blockMatrixRigid, o, n, this.scratch);
      if (ownPosition && b < this.jointBlocks) {
        // the position pass's block, split by positionShare (null: A_bb), with the same γ as the velocity solve's
        blockDelassus(rows, r0, r1, this.inverseMass, inverseInertia, P, o, positionShare);
        for (let p = r0; p < r1; p++) P[o + (p - r0) * (n + 1)] += rows.gamma[p];
        invertBlock(P, o, n, this.scratch);
      }
    }
  }

  private readonly disc = new Float64Array(2);

  /** per row: the bias (velocity units) of the solve pass */
  private bias = new Float64Array(0);

  /**
   * Split impulse (header): prepare moves a rigid joint row's Baumgarte term β C/h out of the velocity
   * solve into `positionBias`, and solvePositions solves it on pseudo-velocities from λ_p = 0 each step,
   * so the warm-started λ holds no position feedback. Off: the rows are biased as the Jacobi text's (8).
   */
  splitPositionBias = false;
  /**
   * Mass splitting for the joints' blocks (jacobi-cpu on a contact scene; Tonge, Benevolenskiy & Voroshilov 2012,
   * as its contacts, contacts/jacobi-contact-solver.ts): a factor s_i per body, and prepare inverts each joint
   * block's split effective mass  A_bb^s = J_b S M⁻¹ J_bᵀ, S = diag(s_i)  (rows.ts blockDelassus,
   * pointBlockDelassus) instead of A_bb; the gather keeps the true masses (the copies averaged). The velocity
   * solve only: the position pass (solvePositions) inverts blocks of its own, split by positionShare (below).
   * null: A_bb in both (the seed's rows, bit for bit).
   * Why: unsplit, two blocks pulling on one mode of a body (a plank's twist under its two hinges) each remove
   * all of it in a Jacobi sweep: twice the correction, an eigenvalue of I − D⁻¹A at −1, and the spun hinge chain
   * diverged. The factor (our derivation): body i in n_i blocks c (joints and manifolds), x_c = M_i^{-½} J_c,iᵀ λ_c;
   * by Cauchy–Schwarz with weights, ‖Σ_c x_c‖² ≤ (Σ_c 1/w_c)(Σ_c w_c ‖x_c‖²), so A ≺ 2 D_s when every body
   * has Σ_c 1/(2 s_c,i) < 1 (s_c,i the factor block c gives body i), and the Jacobi iteration λ ← λ − D_s⁻¹ r
   * then converges for the equality rows (spectrum of I − D_s⁻¹ A in (−1, 1)). The contacts take s = n_i
   * (their projected descent needs D_s ⪰ A: that header); the joints s_i = (n_i + 1)/2: with k joints and
   * c = n_i − k manifolds, c/(2 n_i) + k/(n_i + 1) < (c + 2k)/(2 n_i) ≤ 1 (any s_i > n_i/2 would do for the joints;
   * n_i + 1 over 2 keeps a margin, and the seed's block where n_i = 1). A body in one block keeps its mass
   * (s = 1: the seed's block); in two, ω = 2/3 on their shared mode (the twist's −1 becomes −1/3), where the full
   * split s = n_i (ω = 1/2) slows every chain's convergence more: measured on hinge-chain --param collisions=1,
   * spun, 300 frames, worst opening 1.05 cm at (n + 1)/2 and 1.07 cm at n; on the 20-chain necklace with
   * collisions, 120 frames, 2.5 and 3.5 cm (1.6 unsplit). Not proven for bounded joint rows (hinge limits,
   * ropes): the projected iteration's descent needs D_s ⪰ A.
   */
  massShare: Float64Array | null = null;
  /**
   * The position pass's own mass split (read while massShare is set; null: A_bb, unsplit), per body:
   * jacobi-cpu gives s^p_i = max(1, k_i/2), k_i the body's joints (the pass sweeps the joints alone), and the pass
   * an odd number of sweeps (ownPositionSweeps).
   * Why the two passes need different bounds (our derivation, from the weighted Cauchy–Schwarz above, where
   * s_i > n_i/2 puts the sweep's spectrum μ(I − D_s⁻¹A) in (−1, 1) and s_i ≥ n_i/2 in [−1, 1)):
   *  - the velocity solve is warm-started: its λ is carried from step to step, so a mode with |μ| = 1 is never
   *    corrected and what each step adds to it (gravity, the gyroscopic term, the pose's change) accumulates;
   *    it needs the strict bound, s_i > n_i/2 with n_i its manifolds and joints (the spun hinge chain diverged
   *    at β = 0 too: the velocity solve alone, test/joint-split.test.ts);
   *  - the position pass starts from λ_p = 0 each step and makes K = ⌈N/2⌉ sweeps on J P = −β C/h, so on an
   *    equality mode of D_s⁻¹A (eigenvalue 1 − μ) it moves C by h J P = −β (1 − μ^K) C: the step maps
   *    C ← (1 − β (1 − μ^K)) C, and for |μ| ≤ 1, 0 ≤ 1 − μ^K ≤ 2, a factor in [1 − 2β, 1] that never grows C
   *    (β ≤ 1); μ < −1 would (μ^K > 1 for even K). So it needs only s_i ≥ k_i/2, and a body in one or two
   *    joints (the chains, the necklace) keeps its whole mass there: the pass corrects a chain's smooth modes at
   *    the seed's rate, where the split (n_i + 1)/2 slowed them to 2/3. At the bound a mode can sit at μ = −1 (one
   *    that all of a body's joints take whole: two joints at one point of a box); an even K leaves it as it is
   *    (1 − μ^K = 0), an odd K removes 2β of it a substep: hence an odd number of sweeps (ownPositionSweeps),
   *    with which every mode contracts for 0 < β < 1. With k_i ≥ 3 the unsplit pass would expand (μ down to
   *    1 − k_i: three joints at one point of a box, μ = −2, C × (1 + 15 β) a substep at K = 4): there s_i = k_i/2.
   *    Measured (the 20-chain necklace with collisions, 120 frames, docs/solvers.md): worst violation 2.53 cm with
   *    both passes split, 1.80 with the pass unsplit at K = 4, 1.67 at K = 5.
   */
  positionShare: Float64Array | null = null;
  /** per row: the bias of the position pass (a split rigid joint row's β C/h; 0 for every other row) */
  private positionBias = new Float64Array(0);
  /** per row: λ_p of the position pass (never warm-started: cleared at each solvePositions) */
  pseudoLambda = new Float64Array(0);

  /**
   * The position pass of a split impulse over the joints' blocks (not contacts): λ_p = 0 and pseudo-
   * velocities P = 0, then `sweeps` sweeps of the projected block update on P alone, biased by the
   * Baumgarte term only:  Δλ_p = −h⁻¹ A_bb⁻¹ (J_b P + β C_b / h + h γ_b λ_p).  `order`:
   *   'symmetric'  each block's impulse applied to P at once (Gauss-Seidel), every other sweep backwards, as
   *                the sequential solvers' velocity sweeps do (pgs-cpu; gs-cpu, whose joints' blocks are laid
   *                out colour by colour, so a sweep is its colours in order, or reversed: gs-gpu's
   *                solve_colour_positions*, rows/rows.wgsl.ts);
   *   'jacobi'     every block from the same P, then P = h M⁻¹ Jᵀ λ_p   (37), (34) on P: jacobi-cpu, whose twin
   *                is jacobi-gpu's solve_positions* and update_pseudo_velocities.
   * P is left in (pLin, pAng), 3 per body; the caller moves the positions by V + P and forgets P.
   */
  solvePositions(h: number, inverseInertia: Float64Array, sweeps: number, pLin: Float64Array, pAng: Float64Array, order: 'symmetric' | 'jacobi' = 'symmetric'): void {
    const n = 3 * this.bodyCount;
    if (this.pseudoZero.length < n) this.pseudoZero = new Float64Array(n);
    const zero = this.pseudoZero;
    pLin.fill(0, 0, n);
    pAng.fill(0, 0, n);
    this.pseudoLambda.fill(0, 0, this.rows.count);
    const blocks = this.jointBlocks;
    for (let k = 0; k < sweeps; k++) {
      if (order === 'jacobi') {
        this.solveBlocks(h, zero, zero, pLin, pAng, inverseInertia, true, 0, blocks, false, null, false, false, true);
        this.gather(h, inverseInertia, pLin, pAng, this.pseudoLambda);
      } else this.solveBlocks(h, zero, zero, pLin, pAng, inverseInertia, true, 0, blocks, true, null, false, (k & 1) === 1, true);
    }
  }
  /**
   * Sweeps of the position pass for `iterations` velocity sweeps: half, rounded up. It starts from λ_p = 0
   * each step and removes only the fraction β of C, so an unconverged pass is a slightly smaller β, not a
   * carried error (Box2D v2 likewise runs 3 position iterations to 8 velocity ones). Measured, pgs-cpu on
   * the 20-chain necklace: worst violation 4.6 / 3.9 / 4.2 cm at 2 / 4 / 8 sweeps (the old biased rows: 5.7 cm).
   */
  static positionSweeps(iterations: number): number {
    return Math.ceil(iterations / 2);
  }
  /**
   * The position pass's sweeps where its blocks are its own (positionShare: jacobi-* with the joints' masses split):
   * ⌈N/2⌉ rounded up to an odd number (8 iterations: 5). With s^p_i ≥ k_i/2 the pass's spectrum is μ ∈ [−1, 1), and a
   * substep maps a mode's C by 1 − β (1 − μ^K) (positionShare): for odd K, 1 − μ^K ∈ (0, 2], a factor in [1 − 2β, 1)
   * that contracts every mode for 0 < β < 1, the μ = −1 one included (which an even K leaves uncorrected: a box held by
   * two joints at one point kept its 2 cm violation for ever at K = 4; test/joint-split.test.ts).
   */
  static ownPositionSweeps(iterations: number): number {
    return Math.ceil(iterations / 2) | 1;
  }

  /** zeros: the pseudo-velocities' base (P = 0 + ΔP) */
  private pseudoZero = new Float64Array(0);

  /**
   * The projected block update (header) for blocks from .. to−1, V = (v, ω) + (Δv, Δω). Returns the
   * sum of the squared projected ρ before the update (h² ‖b − Aλ‖² over those rows); with apply =
   * false only that sum is computed. With immediate = true (Gauss-Seidel) each block's actual Δλ goes
   * at once into Δv, Δω of its two bodies (R1), so the next block sees it. `perRow`, when given, gets
   * each row's squared projected ρ. With relax = true (a soft step's relax pass) the rows are rigid
   * (γ = 0, (A_bb)⁻¹ of prepare(…, relax = true)) and unbiased but for a speculative contact's C/h.
   *
   * A contact's friction block (rows/contact.ts K2) is solved as one 2×2 block and λ_t projected
   * onto the disc |λ_t| ≤ μ λ_n of its normal row (λ_n as it stands at that moment).
   * reverse = true walks the blocks from the last to the first: a sequential solver that alternates
   * the direction sweep by sweep is symmetric Gauss-Seidel, whose iteration has no preferred sense of
   * rotation (one direction only, the four corners of a box face solved always in the same cyclic
   * order, drives a slow whirl of a tall stack: measured, test/contacts.test.ts).
   */
  solveBlocks(
    h: number,
    v: Float64Array,
    w: Float64Array,
    dv: Float64Array,
    dw: Float64Array,
    inverseInertia: Float64Array,
    apply = true,
    from = 0,
    to = this.rows.blockCount,
    immediate = false,
    perRow: Float64Array | null = null,
    relax = false,
    reverse = false,
    position = false,
  ): number {
    const rows = this.rows;
    const { lower, upper, blockStart, contactKind, jacobian: J } = rows;
    // the position pass of a split impulse (solvePositions): its own λ_p, the Baumgarte bias alone
    const lam = position ? this.pseudoLambda : rows.lambda;
    const gamma = relax ? zeros(rows.capacity) : rows.gamma;
    const bias = relax ? this.relaxBias : position ? this.positionBias : this.bias;
    const M = relax ? this.blockMatrixRigid : position && this.positionOwn ? this.positionMatrix : this.blockMatrix;
    const rho = this.scratch;
    const invH = 1 / h;
    const invMass = this.inverseMass;
    let squares = 0;
    const point = rows.pointBlock, matrixStart = this.blockMatrixStart;
    const pointFast = this.pointFast || relax;
    if (this.allPoint && pointFast && perRow === null && !reverse) return this.solvePointBlocks(h, v, w, dv, dw, inverseInertia, apply, from, to, immediate, bias, M, lam);
    for (let k = from; k < to; k++) {
      const b = reverse ? to - 1 - (k - from) : k;
      const r0 = blockStart[b];
      const o = matrixStart[b];
      if (point[b] === 1 && perRow === null && pointFast) {
        // a rigid point joint (the Jacobi text's 3×3 block): ρ = J V + β C, Δλ = −h⁻¹ A⁻¹ ρ, no bounds
        pointBlockVelocity(rows, b, v, w, dv, dw, rho, bias);
        const p0 = rho[0], p1 = rho[1], p2 = rho[2];
        squares += p0 * p0 + p1 * p1 + p2 * p2;
        if (!apply) continue;
        const l0 = -invH * (M[o] * p0 + M[o + 1] * p1 + M[o + 2] * p2);
        const l1 = -invH * (M[o + 3] * p0 + M[o + 4] * p1 + M[o + 5] * p2);
        const l2 = -invH * (M[o + 6] * p0 + M[o + 7] * p1 + M[o + 8] * p2);
        lam[r0] += l0;
        lam[r0 + 1] += l1;
        lam[r0 + 2] += l2;
        if (immediate) applyPointImpulse(rows, b, l0, l1, l2, h, invMass, inverseInertia, dv, dw);
        continue;
      }
      const kind = contactKind[b];
      if (kind === CONTACT_NORMAL && perRow === null) {
        // a contact's normal row (the generic one-row update below, written out: the hot path of a pile)
        const j = 12 * r0, ia = 3 * rows.bodyA[r0], ib = 3 * rows.bodyB[r0];
        const r =
          J[j] * (v[ia] + dv[ia]) + J[j + 1] * (v[ia + 1] + dv[ia + 1]) + J[j + 2] * (v[ia + 2] + dv[ia + 2]) +
          J[j + 3] * (w[ia] + dw[ia]) + J[j + 4] * (w[ia + 1] + dw[ia + 1]) + J[j + 5] * (w[ia + 2] + dw[ia + 2]) +
          J[j + 6] * (v[ib] + dv[ib]) + J[j + 7] * (v[ib + 1] + dv[ib + 1]) + J[j + 8] * (v[ib + 2] + dv[ib + 2]) +
          J[j + 9] * (w[ib] + dw[ib]) + J[j + 10] * (w[ib + 1] + dw[ib + 1]) + J[j + 11] * (w[ib + 2] + dw[ib + 2]) +
          bias[r0] + h * gamma[r0] * lam[r0];
        const old = lam[r0];
        const free = old - invH * M[o] * r;
        const next = free < 0 ? 0 : free;
        const q = free < 0 ? contactNormalResidual(old, next, h, M[o]) : r; // natural map (contactNormalResidual)
        squares += q * q;
        if (!apply) continue;
        lam[r0] = next;
        if (immediate && next !== old) applyImpulse(rows, r0, h * (next - old), invMass, inverseInertia, dv, dw);
        continue;
      }
      const r1 = blockStart[b + 1], n = r1 - r0;
      blockVelocity(rows, b, v, w, dv, dw, rho, bias);
      if (kind === CONTACT_FRICTION) {
        // the disc |λ_t| ≤ μ λ_n (rows/contact.ts K2): a 2×2 block solve, then projection
        const p0 = rho[0], p1 = rho[1];
        const old0 = lam[r0], old1 = lam[r0 + 1];
        const lamN = lam[rows.blockNormalRow[b]];
        const radius = rows.blockMu[b] * lamN; // sliding: the dynamic disc μ_d λ_n
        // the stick solution (the 2×2 block's update without bounds)
        let n0 = old0 - invH * (M[o] * p0 + M[o + 1] * p1);
        let n1 = old1 - invH * (M[o + 2] * p0 + M[o + 3] * p1);
        const len2 = n0 * n0 + n1 * n1;
        // static friction (rows/contact.ts K2): the stick solution is kept while it lies in the static
        // disc μ_s λ_n; beyond it the contact slides and friction acts on the dynamic disc μ_d λ_n
        const staticRadius = rows.blockMuStatic[b] * lamN;
        const sliding = len2 > staticRadius * staticRadius;
        const onDisc = sliding && len2 > radius * radius;
        if (onDisc) {
          // sliding: project the stick solution onto the disc in the metric of A_tt (frictionDisc):
          // the friction then opposes the slip that remains after it acts (Coulomb's maximal
          // dissipation), where scaling it back radially would not (A_tt couples the tangents through
          // the lever arms: measured on a sliding box, its friction fell 6 % short)
          frictionDisc(M, o, n0, n1, radius, this.disc);
          n0 = this.disc[0];
          n1 = this.disc[1];
        }
        // the residual: ρ where the stick solution stands, else the natural map (frictionResidual)
        let q0 = p0, q1 = p1;
        if (onDisc) {
          frictionResidual(M, o, old0 - n0, old1 - n1, h, this.disc);
          q0 = this.disc[0];
          q1 = this.disc[1];
        }
        squares += q0 * q0 + q1 * q1;
        if (perRow) {
          perRow[r0] = q0 * q0;
          perRow[r0 + 1] = q1 * q1;
        }
        if (!apply) continue;
        lam[r0] = n0;
        lam[r0 + 1] = n1;
        if (immediate) applyPairImpulse(rows, r0, h * (n0 - old0), h * (n1 - old1), invMass, inverseInertia, dv, dw);
        continue;
      }
      for (let p = r0; p < r1; p++) {
        const r = rho[p - r0] + h * gamma[p] * lam[p];
        rho[p - r0] = r;
        let projected: number;
        if (kind === CONTACT_NORMAL) {
          // a contact's normal row (a 1×1 block, λ_n ≥ 0): the natural map, as on the path above
          const free = lam[p] - invH * M[o] * r;
          const q = free < 0 ? contactNormalResidual(lam[p], 0, h, M[o]) : r;
          projected = q * q;
        } else {
          // a joint's row: projected residual, 0 where λ sits at a bound and ρ pushes it further out
          // (Δλ ∝ −ρ; the GPU rows' twin, rows.wgsl.ts, computes the same)
          projected = (lam[p] <= lower[p] && r > 0) || (lam[p] >= upper[p] && r < 0) ? 0 : r * r;
        }
        squares += projected;
        if (perRow) perRow[p] = projected;
      }
      if (!apply) continue;
      for (let p = 0; p < n; p++) {
        let s = 0;
        for (let q = 0; q < n; q++) s += M[o + p * n + q] * rho[q];
        const row = r0 + p;
        const old = lam[row];
        let next = old - invH * s;
        if (next < lower[row]) next = lower[row];
        else if (next > upper[row]) next = upper[row];
        lam[row] = next;
        if (immediate) applyImpulse(rows, row, h * (next - old), invMass, inverseInertia, dv, dw);
      }
    }
    return squares;
  }

  /**
   * solveBlocks when every block is a rigid point joint's (allPoint: a chain or net of point joints,
   * the necklace): the same update in the same arithmetic as its point path (pointBlockVelocity,
   * applyPointImpulse), with block b's rows at 3b and its A⁻¹ at 9b read directly, as the Jacobi text's
   * per-constraint loop does.
   */
  private solvePointBlocks(h: number, v: Float64Array, w: Float64Array, dv: Float64Array, dw: Float64Array, inverseInertia: Float64Array, apply: boolean, from: number, to: number, immediate: boolean, bias: Float64Array, M: Float64Array, lam: Float64Array): number {
    const rows = this.rows;
    const arm = rows.blockArm, bodyA = rows.bodyA, bodyB = rows.bodyB;
    const invH = 1 / h;
    let squares = 0;
    for (let b = from; b < to; b++) {
      const r0 = 3 * b;
      const a = 3 * bodyA[r0], c = 3 * bodyB[r0];
      const ro = 6 * b;
      const ax = arm[ro], ay = arm[ro + 1], az = arm[ro + 2];
      const bx = arm[ro + 3], by = arm[ro + 4], bz = arm[ro + 5];
      const w0x = w[a] + dw[a], w0y = w[a + 1] + dw[a + 1], w0z = w[a + 2] + dw[a + 2];
      const w1x = w[c] + dw[c], w1y = w[c + 1] + dw[c + 1], w1z = w[c + 2] + dw[c + 2];
      const p0 = -(v[a] + dv[a] - v[c] - dv[c] + -bias[r0] + (w0y * az - w0z * ay - w1y * bz + w1z * by));
      const p1 = -(v[a + 1] + dv[a + 1] - v[c + 1] - dv[c + 1] + -bias[r0 + 1] + (w0z * ax - w0x * az + w1x * bz - w1z * bx));
      const p2 = -(v[a + 2] + dv[a + 2] - v[c + 2] - dv[c + 2] + -bias[r0 + 2] + (w0x * ay - w0y * ax - w1x * by + w1y * bx));
      squares += p0 * p0 + p1 * p1 + p2 * p2;
      if (!apply) continue;
      const o = 9 * b;
      const l0 = -invH * (M[o] * p0 + M[o + 1] * p1 + M[o + 2] * p2);
      const l1 = -invH * (M[o + 3] * p0 + M[o + 4] * p1 + M[o + 5] * p2);
      const l2 = -invH * (M[o + 6] * p0 + M[o + 7] * p1 + M[o + 8] * p2);
      lam[r0] += l0;
      lam[r0 + 1] += l1;
      lam[r0 + 2] += l2;
      if (immediate) applyPointImpulse(rows, b, l0, l1, l2, h, this.inverseMass, inverseInertia, dv, dw);
    }
    return squares;
  }

  /**
   * Restitution as collision propagation (Guendelman, Bridson & Fedkiw 2003, "Nonconvex rigid bodies
   * with stacking", §4 time integration: (1) collisions, (2) velocity update by the forces, (3) contact,
   * (4) positions; collisions pair by pair with the velocities as they are at that moment, swept again
   * until none collides). Call it before the contact solve (and its warm start), on V = the step's
   * velocities after the forces, V_f = V₀ + h g (computeFreeVelocity); `gravityStep` = h g, which
   * every dynamic body took. Per point c (normal row J_n, A = J_n M⁻¹ J_nᵀ, separation C at the pose
   * the rows were evaluated at), with the velocities V as they are now:
   *   v_n = J_n V,  g_n = J_n (h g on the dynamic bodies),  v_n⁻ = v_n − g_n   (before the forces: (1) before (2))
   *   collides   iff e > 0, v_n⁻ < −threshold, and C + h v_n < 0: the gap closes within this step
   *              (a speculative point farther apart does not bounce early; it may next step);
   *   impulse    Newton's law v_n⁻ → −e v_n⁻, then the forces: v_n → −e v_n⁻ + g_n, so
   *              P = (−e v_n⁻ + g_n − v_n) / A = −(1 + e) v_n⁻ / A ≥ 0 along J_nᵀ, applied to V at once.
   * The points of one manifold (one pair, one n) collide together: P ≥ 0 per point by projected
   * Gauss-Seidel on that small block to convergence, each point's target −e v_n⁻ + g_n (from the
   * velocities before this manifold's collision): a box falling flat bounces without a spin.
   * Sweeps over the manifolds repeat until one finds nothing colliding, at most COLLISION_SWEEPS (what
   * still approaches then is the contact solve's, inelastic).
   * Why sequential: equal spheres touching in a row with e = 1 (a Newton's cradle), the first at v₀:
   * the first contact's P = m v₀ stops the first ball and gives the second v₀; the second contact then
   * approaches at v₀, and so on: the last ball leaves at v₀, the others stay. A simultaneous solve of
   * the touching row (the contact solve's LCP, or Poisson's restitution on its impulses) moves every
   * ball: inelastic, v₀/n each; with e times its impulses again the first ball rebounds.
   * Points with e = 0 are left to the contact solve (inelastic either way), so scenes without
   * restitution step exactly as without this pass. The collision impulses are not λ: no warm start,
   * no residual. Writes V (v, w); reads V + ΔV (dv, dw) for v_n. Returns the sweeps that collided.
   */
  applyRestitution(h: number, threshold: number, v: Float64Array, w: Float64Array, dv: Float64Array, dw: Float64Array, inverseInertia: Float64Array, gravityStep: ArrayLike<number> | null = null): number {
    const list = this.contacts;
    if (!list) return 0;
    let anyElastic = false;
    for (let c = 0; c < list.count && !anyElastic; c++) anyElastic = list.restitution[c] > 0;
    if (!anyElastic) return 0;
    const rows = this.rows, J = rows.jacobian, invMass = this.inverseMass;
    const gx = gravityStep ? gravityStep[0] : 0, gy = gravityStep ? gravityStep[1] : 0, gz = gravityStep ? gravityStep[2] : 0;
    const pts = this.collisionPoint, target = this.collisionTarget, impulse = this.collisionImpulse;
    for (let sweep = 0; sweep < COLLISION_SWEEPS; sweep++) {
      let collided = false;
      for (let m0 = 0; m0 < list.count; ) {
        const a = list.bodyA[m0], b = list.bodyB[m0];
        let m1 = m0 + 1;
        while (m1 < list.count && list.bodyA[m1] === a && list.bodyB[m1] === b) m1++;
        // the points of this manifold that collide, each with its target normal velocity
        let k = 0;
        for (let c = m0; c < m1 && k < pts.length; c++) {
          const e = list.restitution[c];
          if (!(e > 0)) continue;
          const row = this.jointRows + 3 * c;
          const vn = this.normalVelocity(row, v, w, dv, dw);
          const j = JACOBIAN_STRIDE * row;
          const gn = (invMass[a] > 0 ? J[j] * gx + J[j + 1] * gy + J[j + 2] * gz : 0) + (invMass[b] > 0 ? J[j + 6] * gx + J[j + 7] * gy + J[j + 8] * gz : 0);
          const before = vn - gn;
          if (!(before < -threshold) || !(rows.error[row] + h * vn < 0)) continue;
          pts[k] = row;
          target[k] = -e * before + gn;
          impulse[k] = 0;
          k++;
        }
        if (k > 0) {
          collided = true;
          // projected Gauss-Seidel on the manifold's block: P_i ≥ 0, J_i V → target_i
          for (let it = 0; it < MANIFOLD_SWEEPS; it++) {
            let change = 0, size = 0;
            for (let i = 0; i < k; i++) {
              const row = pts[i];
              const vn = this.normalVelocity(row, v, w, dv, dw);
              const next = Math.max(0, impulse[i] + (target[i] - vn) / this.diagonal[row]);
              const d = next - impulse[i];
              if (d !== 0) applyImpulse(rows, row, d, invMass, inverseInertia, v, w);
              impulse[i] = next;
              change = Math.max(change, Math.abs(d));
              size = Math.max(size, next);
            }
            if (k === 1 || change <= 1e-12 * size) break;
          }
        }
        m0 = m1;
      }
      if (!collided) return sweep;
    }
    return COLLISION_SWEEPS;
  }
  private readonly collisionPoint = new Int32Array(MAX_MANIFOLD_POINTS);
  private readonly collisionTarget = new Float64Array(MAX_MANIFOLD_POINTS);
  private readonly collisionImpulse = new Float64Array(MAX_MANIFOLD_POINTS);

  /** J_n (V + ΔV) of the normal row `row` (relative normal velocity, > 0 separating). */
  private normalVelocity(row: number, v: Float64Array, w: Float64Array, dv: Float64Array, dw: Float64Array): number {
    const J = this.rows.jacobian, j = JACOBIAN_STRIDE * row;
    const ia = 3 * this.rows.bodyA[row], ib = 3 * this.rows.bodyB[row];
    return (
      J[j] * (v[ia] + dv[ia]) + J[j + 1] * (v[ia + 1] + dv[ia + 1]) + J[j + 2] * (v[ia + 2] + dv[ia + 2]) +
      J[j + 3] * (w[ia] + dw[ia]) + J[j + 4] * (w[ia + 1] + dw[ia + 1]) + J[j + 5] * (w[ia + 2] + dw[ia + 2]) +
      J[j + 6] * (v[ib] + dv[ib]) + J[j + 7] * (v[ib + 1] + dv[ib + 1]) + J[j + 8] * (v[ib + 2] + dv[ib + 2]) +
      J[j + 9] * (w[ib] + dw[ib]) + J[j + 10] * (w[ib + 1] + dw[ib + 1]) + J[j + 11] * (w[ib + 2] + dw[ib + 2])
    );
  }

  /** ΔV = s M⁻¹ Jᵀ λ per body (rows.ts gatherImpulse); update_velocities is s = h. */
  gather(scale: number, inverseInertia: Float64Array, outLin: Float64Array, outAng: Float64Array, lambda: Float64Array = this.rows.lambda): void {
    if (this.rows.count === 0) {
      // no rows (a scene of contacts alone, which the contact module solves): ΔV = 0 without the
      // per-body sums (jacobi-cpu on the 10k rain: 0.3 s of a 60-frame run in the empty gather)
      outLin.fill(0, 0, 3 * this.bodyCount);
      outAng.fill(0, 0, 3 * this.bodyCount);
      return;
    }
    gatherImpulse(this.rows, this.conn, lambda, scale, this.inverseMass, inverseInertia, outLin, outAng);
  }

  /** Rows of constraint slot ic, [first, end). */
  rowsOf(ic: number): [number, number] {
    return [this.rowStart[ic], this.rowStart[ic] + this.rowCount[ic]];
  }
}

/**
 * (R1) for a rigid point joint's block, Δλ = (l0, l1, l2) (the same as the Jacobi text's Δλ: point.ts),
 * from the lever arms, in the arithmetic gs-cpu always had: J_A = (−I, −[a]×), J_B = (I, [b]×), so
 * body A (σ = −h) and B (σ = +h) take
 *   Δv += σ m⁻¹ l,   Δω += σ I⁻¹ (r × l),   r = a on A, b on B.
 */
function applyPointImpulse(rows: RowSet, block: number, l0: number, l1: number, l2: number, h: number, invMass: Float64Array, inverseInertia: Float64Array, dv: Float64Array, dw: Float64Array): void {
  const r0 = rows.blockStart[block];
  const arm = rows.blockArm, ro = 6 * block;
  const Ii = inverseInertia;
  for (let side = 0; side < 2; side++) {
    const ib = side === 0 ? rows.bodyA[r0] : rows.bodyB[r0];
    if (invMass[ib] === 0) continue; // fixed: nothing moves it
    const o = 3 * ib;
    const sh = side === 0 ? -h : h;
    const sm = sh * invMass[ib];
    dv[o] += sm * l0;
    dv[o + 1] += sm * l1;
    dv[o + 2] += sm * l2;
    const rx = arm[ro + 3 * side], ry = arm[ro + 3 * side + 1], rz = arm[ro + 3 * side + 2];
    const tx = ry * l2 - rz * l1, ty = rz * l0 - rx * l2, tz = rx * l1 - ry * l0; // r × l
    const io = 9 * ib;
    dw[o] += sh * (Ii[io] * tx + Ii[io + 1] * ty + Ii[io + 2] * tz);
    dw[o + 1] += sh * (Ii[io + 3] * tx + Ii[io + 4] * ty + Ii[io + 5] * tz);
    dw[o + 2] += sh * (Ii[io + 6] * tx + Ii[io + 7] * ty + Ii[io + 8] * tz);
  }
}

/*
 * The contact rows' residual: the natural map of their complementarity problem. A contact point's
 * multipliers lie in a convex set K (the normal row: λ_n ≥ 0; the friction pair: the disc
 * |λ_t| ≤ μ λ_n, λ_n as it stands), and λ solves the step's problem iff it is a fixed point of the
 * solver's own projected update (Facchinei & Pang 2003, "Finite-Dimensional Variational Inequalities
 * and Complementarity Problems", vol. I §1.5, the natural map F_nat(λ) = λ − Π_K(λ − F(λ)); here with the
 * metric of the block's W = A + γ, the solver's step):
 *   λ⁺ = Π_K^W(λ − h⁻¹ W⁻¹ ρ),    r_nat = h W (λ − λ⁺)                                  (N1)
 * r_nat is in ρ's units (velocity), and
 *   - where the projection does nothing (a row off its bound, a stick solution inside the disc),
 *     r_nat = ρ exactly: we return ρ itself there, so an unclamped row's residual is unchanged;
 *   - at a bound with ρ pushing λ out of K (a separating point at λ_n = 0; a sliding point with λ_t
 *     on the disc's edge against the slip), λ⁺ = λ and r_nat = 0: complementarity holds, and the
 *     residual says so. With μ = 0 the disc is the point 0 and the friction residual is 0;
 *   - near a bound it is the step to the bound, not the whole ρ (continuous in λ, where dropping ρ
 *     only exactly at the bound jumps: a friction λ_t a hair inside the disc after a reverse sweep moved
 *     λ_n would report the whole slip, ~v/h).
 * As the step shrinks, (N1) tends to the projected gradient of Calamai & Moré (1987): ρ with its
 * outward component dropped at the bound (the joints' rows' rule in solveBlocks).
 */

/** (N1) for a contact normal row (1×1, W = 1/M_oo): λ⁺ = max(0, λ − h⁻¹ M ρ) was clamped, so r = h (λ − λ⁺) / M_oo. */
function contactNormalResidual(old: number, next: number, h: number, inverseW: number): number {
  return (h * (old - next)) / inverseW;
}

/**
 * (N1) for a friction pair projected onto its disc: r = h W (λ − λ⁺), W = M⁻¹ of the block's stored
 * 2×2 inverse at M[o..o+4), from dλ = λ − λ⁺. Writes r into out[0..2).
 */
function frictionResidual(M: Float64Array, o: number, d0: number, d1: number, h: number, out: Float64Array): void {
  const det = M[o] * M[o + 3] - M[o + 1] * M[o + 2];
  out[0] = (h * (M[o + 3] * d0 - M[o + 1] * d1)) / det;
  out[1] = (h * (M[o] * d1 - M[o + 2] * d0)) / det;
}

/** (R1) for one row's impulse P = h Δλ: Δv_A += m_A⁻¹ J_vA P, Δω_A += I_A⁻¹ J_ωA P, and the same for B. */
/**
 * The friction pair's update on the disc |λ| ≤ r (block-solver.ts solveBlocks): the point of the
 * disc nearest the stick solution f in the metric of A = A_tt = M⁻¹ (M the block's stored inverse at
 * M[o..o+4), row-major 2×2):
 *   minimise (λ − f)ᵀ A (λ − f)  subject to |λ| ≤ r,
 * the block Gauss-Seidel step for this convex set. Its KKT condition A (λ − f) = −κ λ, κ ≥ 0, says the
 * slip left after the update, h A (λ − f), points against λ: Coulomb friction opposes the sliding.
 * In A's eigenbasis (eigenvalues a₁, a₂; f' the components of f) λ'_i = a_i f'_i / (a_i + κ), with
 * κ ≥ 0 the root of |λ(κ)| = r. Newton on the secular equation in the form u(κ) = 1/|λ(κ)| = 1/r
 * (Moré & Sorensen 1983; Nocedal & Wright, "Numerical Optimization", §4.3, apply it to the trust
 * region's |p(λ)| = Δ): with s = |λ|² = Σ l_i², l_i = a_i f'_i / d_i, d_i = a_i + κ,
 *   u' = s^(−3/2) Σ l_i² / d_i > 0,   u'' ∝ (Σ l_i²/d_i)² − s Σ l_i²/d_i² ≤ 0 (Cauchy–Schwarz),
 * so u rises and is concave: from κ = 0 (u = 1/|f| < 1/r) every step κ += s (√s / r − 1) / Σ l_i²/d_i
 * stays below the root and converges to it, quadratically, and u is linear in κ where a₁ = a₂ (one
 * step then). Newton on |λ|² − r² instead (convex: also from below) grows κ only about 1.5-fold a step
 * while |λ| ≫ r: on the 10k rain (jacobi-cpu) it took 7.5 steps a call on average, this 3.3. Same stop,
 * |λ|² − r² ≤ 1e-14 r². Writes λ into out[0..2). Requires |f| > r.
 */
export function frictionDisc(M: Float64Array, o: number, f0: number, f1: number, r: number, out: Float64Array): void {
  if (!(r > 0)) {
    out[0] = 0;
    out[1] = 0;
    return;
  }
  const m00 = M[o], m01 = 0.5 * (M[o + 1] + M[o + 2]), m11 = M[o + 3];
  if (Math.abs(m01) <= 1e-13 * (m00 + m11) && Math.abs(m00 - m11) <= 1e-13 * (m00 + m11)) {
    // an isotropic metric (A = a I: a sphere's point, a body's centre line): the nearest point in it is
    // the radial one, λ = r f / |f| (κ = a (|f|/r − 1) above), without the eigenbasis and Newton
    const scale = r / Math.sqrt(f0 * f0 + f1 * f1);
    out[0] = f0 * scale;
    out[1] = f1 * scale;
    return;
  }
  const det = m00 * m11 - m01 * m01;
  // A = M⁻¹ (symmetric)
  const a00 = m11 / det, a01 = -m01 / det, a11 = m00 / det;
  // eigenvectors of a symmetric 2×2: rotation by φ with tan 2φ = 2 a01 / (a00 − a11), φ ∈ (−π/2, π/2];
  // cos φ ≥ 0 and sin φ from the half-angle formulas (cos 2φ = d/q, sin 2φ = a01/q), without trigonometry
  const dh = 0.5 * (a00 - a11), q = Math.sqrt(dh * dh + a01 * a01);
  const cos2 = q > 0 ? dh / q : 1;
  const c = Math.sqrt(Math.max(0, 0.5 * (1 + cos2))), s = (a01 < 0 ? -1 : 1) * Math.sqrt(Math.max(0, 0.5 * (1 - cos2)));
  const e1 = c * c * a00 + 2 * c * s * a01 + s * s * a11;
  const e2 = s * s * a00 - 2 * c * s * a01 + c * c * a11;
  const g1 = e1 * (c * f0 + s * f1), g2 = e2 * (-s * f0 + c * f1); // a_i f'_i
  let k = 0, d1 = e1 + k, d2 = e2 + k, l1 = g1 / d1, l2 = g2 / d2; // λ' at κ = k
  for (let it = 0; it < 30; it++) {
    const s2 = l1 * l1 + l2 * l2;
    if (s2 - r * r <= 1e-14 * r * r) break;
    k += (s2 * (Math.sqrt(s2) / r - 1)) / (l1 * l1 / d1 + l2 * l2 / d2);
    d1 = e1 + k;
    d2 = e2 + k;
    l1 = g1 / d1;
    l2 = g2 / d2;
  }
  // back to the tangents, and exactly onto the circle (Newton stops a hair inside)
  const x = c * l1 - s * l2, y = s * l1 + c * l2;
  const scale = r / Math.sqrt(x * x + y * y);
  out[0] = x * scale;
  out[1] = y * scale;
}

/**
 * (R1) for two rows r, r+1 between the same bodies (a friction pair) with impulses P₀, P₁ at once:
 * Δv = m⁻¹ (J_v,r P₀ + J_v,r+1 P₁), Δω = I⁻¹ (J_ω,r P₀ + J_ω,r+1 P₁) per body (one I⁻¹ product, not two).
 */
function applyPairImpulse(rows: RowSet, r: number, p0: number, p1: number, invMass: Float64Array, inverseInertia: Float64Array, dv: Float64Array, dw: Float64Array): void {
  if (p0 === 0 && p1 === 0) return;
  const J = rows.jacobian;
  const I = inverseInertia;
  for (let side = 0; side < 2; side++) {
    const body = side === 0 ? rows.bodyA[r] : rows.bodyB[r];
    if (invMass[body] === 0) continue;
    const j = JACOBIAN_STRIDE * r + 6 * side, k = j + JACOBIAN_STRIDE;
    const o = 3 * body;
    const m = invMass[body];
    dv[o] += m * (J[j] * p0 + J[k] * p1);
    dv[o + 1] += m * (J[j + 1] * p0 + J[k + 1] * p1);
    dv[o + 2] += m * (J[j + 2] * p0 + J[k + 2] * p1);
    const tx = J[j + 3] * p0 + J[k + 3] * p1, ty = J[j + 4] * p0 + J[k + 4] * p1, tz = J[j + 5] * p0 + J[k + 5] * p1;
    const io = 9 * body;
    dw[o] += I[io] * tx + I[io + 1] * ty + I[io + 2] * tz;
    dw[o + 1] += I[io + 3] * tx + I[io + 4] * ty + I[io + 5] * tz;
    dw[o + 2] += I[io + 6] * tx + I[io + 7] * ty + I[io + 8] * tz;
  }
}

/** Whether a spring's γ scales with the row's A (a frequency spring, set relative to the row's own effective mass). */
function unitScaled(spec: SoftnessSpec): boolean {
  return spec.kind === 'frequency';
}

let zeroRows = new Float64Array(0);
/** zeros for at least n rows (the relax pass's γ) */
function zeros(n: number): Float64Array {
  if (zeroRows.length < n) zeroRows = new Float64Array(n);
  return zeroRows;
}

function applyImpulse(rows: RowSet, r: number, impulse: number, invMass: Float64Array, inverseInertia: Float64Array, dv: Float64Array, dw: Float64Array): void {
  if (impulse === 0) return;
  const J = rows.jacobian;
  for (let side = 0; side < 2; side++) {
    const body = side === 0 ? rows.bodyA[r] : rows.bodyB[r];
    if (invMass[body] === 0) continue;
    const j = JACOBIAN_STRIDE * r + 6 * side;
    const o = 3 * body;
    const sm = impulse * invMass[body];
    dv[o] += sm * J[j];
    dv[o + 1] += sm * J[j + 1];
    dv[o + 2] += sm * J[j + 2];
    const tx = impulse * J[j + 3], ty = impulse * J[j + 4], tz = impulse * J[j + 5];
    const io = 9 * body;
    const I = inverseInertia;
    dw[o] += I[io] * tx + I[io + 1] * ty + I[io + 2] * tz;
    dw[o + 1] += I[io + 3] * tx + I[io + 4] * ty + I[io + 5] * tz;
    dw[o + 2] += I[io + 6] * tx + I[io + 7] * ty + I[io + 8] * tz;
  }
}
