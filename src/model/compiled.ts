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
import type { Snapshot } from './snapshot.js';
import { JointKind, type JointTable } from './joint-data.js';
import { packedBodies, packedConstraints, type PackedBodies, type PackedConstraints } from './packed.js';

/**
 * The joints (every constraint of the desc) are also a JointTable (model/joint-data.ts): kind,
 * bodies, anchors, and what each kind adds (axes, lengths, limits, the starting relative
 * orientation), which the constraint types of rows/ turn into rows.
 */
export interface CompiledWorld extends JointTable {
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
  const pb = packedBodies(world.bodies), pc = packedConstraints(world.constraints);
  let anchorCount = 0;
  if (pc) for (let ic = 0; ic < constraintCount; ic++) anchorCount += pc.bodyB[ic] < 0 ? 1 : 0;
  else for (const c of world.constraints) anchorCount += c.bodyB === null ? 1 : 0;
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
    kind: new Uint8Array(constraintCount),
    axisA: new Float64Array(3 * constraintCount),
    axisB: new Float64Array(3 * constraintCount),
    length: new Float64Array(constraintCount).fill(NaN),
    minLength: new Float64Array(constraintCount).fill(NaN),
    maxLength: new Float64Array(constraintCount).fill(NaN),
    lowerAngle: new Float64Array(constraintCount).fill(NaN),
    upperAngle: new Float64Array(constraintCount).fill(NaN),
    referenceOrientation: new Float64Array(4 * constraintCount),
    connectivity: { ic0: new Int32Array(0), constraintList: new Int32Array(0) },
  };
  if (pb && pc) {
    compilePacked(cw, pb, pc);
    cw.connectivity = computeConnectivity(bodyCount, cw.ib0, cw.ib1);
    return cw;
  }
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
  world.constraints.forEach((c, ic) => compileJoint(cw, c, ic, cw.position, cw.orientation));
  cw.connectivity = computeConnectivity(bodyCount, cw.ib0, cw.ib1);
  return cw;
}

/**
 * compileWorld's body and joint loops over packed lists (model/packed.ts): the same arithmetic,
 * read from the typed arrays, with each prototype's mass properties computed once.
 */
function compilePacked(cw: CompiledWorld, pb: PackedBodies, pc: PackedConstraints): void {
  const props = pb.prototypes.list.map((proto) => massProperties({ ...proto, position: [0, 0, 0] } as Parameters<typeof massProperties>[0]));
  const fixed = pb.prototypes.list.map((proto) => proto.fixed === true);
  for (let i = 0; i < pb.count; i++) {
    const mp = props[pb.prototype[i]], bits = pb.present[i];
    cw.position[3 * i] = pb.position[3 * i];
    cw.position[3 * i + 1] = pb.position[3 * i + 1];
    cw.position[3 * i + 2] = pb.position[3 * i + 2];
    if (bits & 1) {
      const o = pb.orientation, q0 = o[4 * i], q1 = o[4 * i + 1], q2 = o[4 * i + 2], q3 = o[4 * i + 3];
      const qn = Math.hypot(q0, q1, q2, q3);
      cw.orientation[4 * i] = q0 / qn;
      cw.orientation[4 * i + 1] = q1 / qn;
      cw.orientation[4 * i + 2] = q2 / qn;
      cw.orientation[4 * i + 3] = q3 / qn;
    } else cw.orientation[4 * i + 3] = 1; // [0, 0, 0, 1] / 1
    if (!fixed[pb.prototype[i]]) {
      if (bits & 2) cw.linearVelocity.set(pb.linearVelocity.subarray(3 * i, 3 * i + 3), 3 * i);
      if (bits & 4) cw.angularVelocity.set(pb.angularVelocity.subarray(3 * i, 3 * i + 3), 3 * i);
    }
    cw.mass[i] = mp.mass;
    cw.inverseMass[i] = mp.inverseMass;
    cw.inertiaLocal.set(mp.inertiaLocal, 9 * i);
    cw.inverseInertiaLocal.set(mp.inverseInertiaLocal, 9 * i);
  }
  let anchor = cw.worldBodyCount;
  const joints = pc.prototypes.list as unknown as WorldDesc['constraints'];
  for (let ic = 0; ic < pc.count; ic++) {
    const proto = joints[pc.prototype[ic]];
    cw.ib0[ic] = pc.bodyA[ic];
    cw.r0.set(pc.anchorA.subarray(3 * ic, 3 * ic + 3), 3 * ic);
    if (proto.compliance !== undefined) cw.compliance[ic] = proto.compliance;
    if (pc.bodyB[ic] < 0) {
      // fixed anchor body at the world point; r¹ = 0
      cw.position.set(pc.anchorB.subarray(3 * ic, 3 * ic + 3), 3 * anchor);
      cw.orientation[4 * anchor + 3] = 1;
      cw.mass[anchor] = Infinity;
      cw.ib1[ic] = anchor++;
    } else {
      cw.ib1[ic] = pc.bodyB[ic];
      cw.r1.set(pc.anchorB.subarray(3 * ic, 3 * ic + 3), 3 * ic);
    }
  }
  // compileJoint reads only the joint's own fields (type, axes, lengths, limits): its prototype's
  for (let ic = 0; ic < pc.count; ic++) compileJoint(cw, joints[pc.prototype[ic]], ic, cw.position, cw.orientation);
}

/**
 * Joint slot ic of `cw` (whose ib0, ib1, r0, r1 are set) from its desc, at the bodies' pose (position,
 * orientation: 3 and 4 per body). What each joint kind adds to the point joint's fields: unit hinge axes, the distance's length
 * (the anchors' distance in the starting pose when the desc gives none) or range, hinge limits,
 * and q_ref = q_A⁻¹ ⊗ q_B in the starting pose (hinge angle zero, weld target).
 */
export function compileJoint(cw: JointTable, c: WorldDesc['constraints'][number], ic: number, position: Float64Array, orientation: Float64Array): void {
  cw.kind[ic] = JointKind[c.type];
  const qa = orientation.subarray(4 * cw.ib0[ic], 4 * cw.ib0[ic] + 4);
  const qb = orientation.subarray(4 * cw.ib1[ic], 4 * cw.ib1[ic] + 4);
  // q_A⁻¹ ⊗ q_B (unit quaternions: the inverse is the conjugate)
  const [ax, ay, az, aw] = [-qa[0], -qa[1], -qa[2], qa[3]];
  const [bx, by, bz, bw] = qb;
  cw.referenceOrientation.set(
    [aw * bx + bw * ax + (ay * bz - az * by), aw * by + bw * ay + (az * bx - ax * bz), aw * bz + bw * az + (ax * by - ay * bx), aw * bw - (ax * bx + ay * by + az * bz)],
    4 * ic,
  );
  if (c.type === 'hinge') {
    const unit = (v: number[]) => {
      const n = Math.hypot(v[0], v[1], v[2]);
      return [v[0] / n, v[1] / n, v[2] / n];
    };
    cw.axisA.set(unit(c.axisA), 3 * ic);
    cw.axisB.set(unit(c.axisB), 3 * ic);
    if (c.lowerAngle !== undefined) cw.lowerAngle[ic] = c.lowerAngle;
    if (c.upperAngle !== undefined) cw.upperAngle[ic] = c.upperAngle;
  } else if (c.type === 'distance') {
    if (c.minLength !== undefined || c.maxLength !== undefined) {
      if (c.minLength !== undefined) cw.minLength[ic] = c.minLength;
      if (c.maxLength !== undefined) cw.maxLength[ic] = c.maxLength;
    } else if (c.length !== undefined) cw.length[ic] = c.length;
    else {
      // the anchors' distance in the starting pose
      const p = (b: number, r: Float64Array) => {
        const x = position, q = orientation;
        const [qx, qy, qz, qw] = [q[4 * b], q[4 * b + 1], q[4 * b + 2], q[4 * b + 3]];
        const [vx, vy, vz] = [r[3 * ic], r[3 * ic + 1], r[3 * ic + 2]];
        return [
          x[3 * b] + (1 - 2 * (qy * qy + qz * qz)) * vx + 2 * (qx * qy - qz * qw) * vy + 2 * (qx * qz + qy * qw) * vz,
          x[3 * b + 1] + 2 * (qx * qy + qz * qw) * vx + (1 - 2 * (qx * qx + qz * qz)) * vy + 2 * (qy * qz - qx * qw) * vz,
          x[3 * b + 2] + 2 * (qx * qz - qy * qw) * vx + 2 * (qy * qz + qx * qw) * vy + (1 - 2 * (qx * qx + qy * qy)) * vz,
        ];
      };
      const pa = p(cw.ib0[ic], cw.r0), pb = p(cw.ib1[ic], cw.r1);
      cw.length[ic] = Math.hypot(pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]);
    }
  }
}

/** Each constraint's compliance α: its own, or `fallback` (the solver's --compliance) where it sets none. */
export function complianceOf(w: CompiledWorld, fallback: number): Float64Array {
  return w.compliance.map((a) => (Number.isNaN(a) ? fallback : a));
}

/** A Snapshot (copies) of a CPU solver's compiled state: the desc's bodies, without the world anchors. */
export function snapshotOf(w: CompiledWorld, frame: number, dt: number, asleep: Uint8Array | null = null): Snapshot {
  const n = w.worldBodyCount;
  return {
    ...(asleep ? { asleep: asleep.slice(0, n) } : {}),
    frame,
    time: frame * dt,
    bodyCount: n,
    position: w.position.slice(0, 3 * n),
    orientation: w.orientation.slice(0, 4 * n),
    linearVelocity: w.linearVelocity.slice(0, 3 * n),
    angularVelocity: w.angularVelocity.slice(0, 3 * n),
  };
}
