/**
 * A WorldDesc laid out as structure-of-arrays (f64), the form every solver starts from.
 *
 * World anchors: a constraint whose bodyB is the world gets an extra fixed body
 * at the world point (zero inverse mass and inertia, as the reference text says),
 * with r¹ = 0. These anchor bodies come after the world's own bodies, so body
 * indices 0 .. worldBodyCount−1 are the same in the desc and in every solver.
 */
import { type WorldDesc, massProperties, validateWorld } from './world.js';
import { computeConnectivity, type Connectivity } from './connectivity.js';
import type { Snapshot } from '../solvers/solver.js';

export interface CompiledWorld {
  /** bodies of the desc */
  worldBodyCount: number;
  /** bodies of the desc plus one anchor body per world constraint */
  bodyCount: number;
  constraintCount: number;
  gravity: Float64Array; // 3
  position: Float64Array; // 3·bodyCount
  orientation: Float64Array; // 4·bodyCount, [x y z w]
  linearVelocity: Float64Array; // 3·bodyCount
  angularVelocity: Float64Array; // 3·bodyCount
  mass: Float64Array; // bodyCount (Infinity when fixed)
  inverseMass: Float64Array; // bodyCount
  inverseInertiaLocal: Float64Array; // 9·bodyCount, row-major
  inertiaLocal: Float64Array; // 9·bodyCount, row-major
  /** ib0, ib1: body indices of each constraint */
  ib0: Int32Array;
  ib1: Int32Array;
  /** r⁰, r¹: local anchors (3·constraintCount each) */
  r0: Float64Array;
  r1: Float64Array;
  /** the constraint's own compliance α (m/N), or NaN where it sets none (the solver's option applies) */
  compliance: Float64Array;
  connectivity: Connectivity;
}

export function compileWorld(world: WorldDesc): CompiledWorld {
  validateWorld(world);
  const worldBodyCount = world.bodies.length;
  const constraintCount = world.constraints.length;
  const anchorCount = world.constraints.filter((c) => c.bodyB === null).length;
  const bodyCount = worldBodyCount + anchorCount;
  const cw: CompiledWorld = {
    worldBodyCount,
    bodyCount,
    constraintCount,
    gravity: Float64Array.from(world.gravity),
    position: new Float64Array(3 * bodyCount),
    orientation: new Float64Array(4 * bodyCount),
    linearVelocity: new Float64Array(3 * bodyCount),
    angularVelocity: new Float64Array(3 * bodyCount),
    mass: new Float64Array(bodyCount),
    inverseMass: new Float64Array(bodyCount),
    inverseInertiaLocal: new Float64Array(9 * bodyCount),
    inertiaLocal: new Float64Array(9 * bodyCount),
    ib0: new Int32Array(constraintCount),
    ib1: new Int32Array(constraintCount),
    r0: new Float64Array(3 * constraintCount),
    r1: new Float64Array(3 * constraintCount),
    compliance: new Float64Array(constraintCount).fill(NaN),
    connectivity: { ic0: new Int32Array(0), constraintList: new Int32Array(0) },
  };
  world.bodies.forEach((b, i) => {
    const mp = massProperties(b);
    cw.position.set(b.position, 3 * i);
    const q = b.orientation ?? [0, 0, 0, 1];
    const qn = Math.hypot(q[0], q[1], q[2], q[3]);
    cw.orientation.set([q[0] / qn, q[1] / qn, q[2] / qn, q[3] / qn], 4 * i);
    if (!b.fixed) {
      cw.linearVelocity.set(b.linearVelocity ?? [0, 0, 0], 3 * i);
      cw.angularVelocity.set(b.angularVelocity ?? [0, 0, 0], 3 * i);
    }
    cw.mass[i] = mp.mass;
    cw.inverseMass[i] = mp.inverseMass;
    cw.inertiaLocal.set(mp.inertiaLocal, 9 * i);
    cw.inverseInertiaLocal.set(mp.inverseInertiaLocal, 9 * i);
  });
  let anchor = worldBodyCount;
  world.constraints.forEach((c, ic) => {
    cw.ib0[ic] = c.bodyA;
    cw.r0.set(c.anchorA, 3 * ic);
    if (c.compliance !== undefined) cw.compliance[ic] = c.compliance;
    if (c.bodyB === null) {
      // fixed anchor body at the world point; r¹ = 0
      cw.position.set(c.anchorB, 3 * anchor);
      cw.orientation[4 * anchor + 3] = 1;
      cw.mass[anchor] = Infinity;
      cw.ib1[ic] = anchor++;
    } else {
      cw.ib1[ic] = c.bodyB;
      cw.r1.set(c.anchorB, 3 * ic);
    }
  });
  cw.connectivity = computeConnectivity(bodyCount, cw.ib0, cw.ib1);
  return cw;
}

/** Each constraint's compliance α: its own, or `fallback` (the solver's --compliance) where it sets none. */
export function complianceOf(w: CompiledWorld, fallback: number): Float64Array {
  return w.compliance.map((a) => (Number.isNaN(a) ? fallback : a));
}

/** A Snapshot (copies) of a CPU solver's compiled state: the desc's bodies, without the world anchors. */
export function snapshotOf(w: CompiledWorld, frame: number, dt: number): Snapshot {
  const n = w.worldBodyCount;
  return {
    frame,
    time: frame * dt,
    bodyCount: n,
    position: w.position.slice(0, 3 * n),
    orientation: w.orientation.slice(0, 4 * n),
    linearVelocity: w.linearVelocity.slice(0, 3 * n),
    angularVelocity: w.angularVelocity.slice(0, 3 * n),
  };
}
