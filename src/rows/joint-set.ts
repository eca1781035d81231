/**
 * A joint table that can change between steps: joints added and removed while the bodies keep
 * their state (item 4 of the constraint-row issue; contacts will come and go the same way).
 *
 * Storage is by capacity (each array holds `capacity` joints) and grows by doubling; removing a
 * joint moves the last one into its slot. Every joint keeps a stable id (its index in the world
 * description for the joints it started with, then fresh numbers), and the rows' warm-start keys
 * follow the id (RowBlockSolver.layout), so a joint that persists keeps its λ and a new one starts
 * at 0 whatever the slots do.
 *
 * A joint added between steps joins two bodies of the world (bodyB may not be null: a world anchor
 * is a body of its own in the compiled world, made once; anchor to a fixed body instead).
 */
import type { JointTable } from '../model/joint-data.js';
import type { ConstraintDesc } from '../model/world.js';
import { compileJoint } from '../model/compiled.js';

type Arrays = Omit<JointTable, 'constraintCount' | 'id'>;
const perJoint: Record<keyof Arrays, number> = {
  kind: 1, ib0: 1, ib1: 1, r0: 3, r1: 3, compliance: 1, axisA: 3, axisB: 3,
  length: 1, minLength: 1, maxLength: 1, lowerAngle: 1, upperAngle: 1, referenceOrientation: 4,
};

export class JointSet implements JointTable {
  constraintCount = 0;
  capacity = 0;
  kind = new Uint8Array(0);
  ib0 = new Int32Array(0);
  ib1 = new Int32Array(0);
  r0 = new Float64Array(0);
  r1 = new Float64Array(0);
  compliance = new Float64Array(0);
  axisA = new Float64Array(0);
  axisB = new Float64Array(0);
  length = new Float64Array(0);
  minLength = new Float64Array(0);
  maxLength = new Float64Array(0);
  lowerAngle = new Float64Array(0);
  upperAngle = new Float64Array(0);
  referenceOrientation = new Float64Array(0);
  id = new Int32Array(0);
  private nextId = 0;
  /** incremented on every add or remove: solvers compare it to re-lay their rows */
  version = 0;

  /** A copy of a compiled world's joints; their ids are their indices. */
  constructor(from: JointTable) {
    this.reserve(from.constraintCount);
    for (const k of Object.keys(perJoint) as (keyof Arrays)[]) (this[k] as Float64Array).set((from[k] as Float64Array).subarray(0, perJoint[k] * from.constraintCount));
    this.constraintCount = from.constraintCount;
    let next = 0; // one past the largest id (a loop: a spread of one argument per joint overflows the stack)
    for (let i = 0; i < this.constraintCount; i++) {
      this.id[i] = from.id ? from.id[i] : i;
      if (this.id[i] >= next) next = this.id[i] + 1;
    }
    this.nextId = next;
  }

  private reserve(n: number): void {
    if (n <= this.capacity) return;
    const cap = Math.max(n, 2 * this.capacity, 4);
    for (const k of Object.keys(perJoint) as (keyof Arrays)[]) {
      const old = this[k] as Float64Array;
      const fresh = new (old.constructor as Float64ArrayConstructor)(perJoint[k] * cap);
      if (k === 'length' || k === 'minLength' || k === 'maxLength' || k === 'lowerAngle' || k === 'upperAngle' || k === 'compliance') fresh.fill(NaN);
      fresh.set(old.subarray(0, perJoint[k] * this.constraintCount));
      (this as unknown as Record<string, Float64Array>)[k] = fresh;
    }
    const id = new Int32Array(cap);
    id.set(this.id.subarray(0, this.constraintCount));
    this.id = id;
    this.capacity = cap;
  }

  /**
   * Adds joint `c` between two bodies at their current pose (position 3, orientation 4 per body):
   * its starting pose for the hinge angle, the weld and a default distance is now. Returns its id.
   */
  add(c: ConstraintDesc, position: Float64Array, orientation: Float64Array): number {
    if (c.bodyB === null) throw new Error('a joint added between steps joins two bodies (bodyB null is refused: anchor to a fixed body)');
    const ic = this.constraintCount;
    this.reserve(ic + 1);
    this.ib0[ic] = c.bodyA;
    this.ib1[ic] = c.bodyB;
    this.r0.set(c.anchorA, 3 * ic);
    this.r1.set(c.anchorB, 3 * ic);
    this.compliance[ic] = c.compliance ?? NaN; // NaN: the solver's option
    for (const k of ['length', 'minLength', 'maxLength', 'lowerAngle', 'upperAngle'] as const) this[k][ic] = NaN;
    this.constraintCount++;
    compileJoint(this, c, ic, position, orientation);
    this.id[ic] = this.nextId++;
    this.version++;
    return this.id[ic];
  }

  /** Removes the joint with this id (the last joint moves into its slot). */
  remove(id: number): void {
    const ic = this.id.subarray(0, this.constraintCount).indexOf(id);
    if (ic < 0) throw new Error(`no joint with id ${id}`);
    const last = this.constraintCount - 1;
    if (ic !== last) {
      for (const k of Object.keys(perJoint) as (keyof Arrays)[]) {
        const a = this[k] as Float64Array, n = perJoint[k];
        a.copyWithin(n * ic, n * last, n * last + n);
      }
      this.id[ic] = this.id[last];
    }
    this.constraintCount--;
    this.version++;
  }

  /** The slot of the joint with this id, or −1. */
  indexOf(id: number): number {
    return this.id.subarray(0, this.constraintCount).indexOf(id);
  }
}
