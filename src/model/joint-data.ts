/**
 * What the constraint types read: the compiled joints (model/compiled.ts) and the body state.
 * An interface, so a solver, the metrics (over a snapshot) and tests can all evaluate rows.
 */

/** Joint kinds, as stored per constraint in CompiledWorld.kind. */
export const JointKind = { point: 0, distance: 1, hinge: 2, fixed: 3 } as const;
export type JointKindName = keyof typeof JointKind;
export const jointKindNames: JointKindName[] = ['point', 'distance', 'hinge', 'fixed'];

export interface JointTable {
  constraintCount: number;
  /** JointKind of each constraint */
  kind: Uint8Array;
  /** body indices (a world anchor is a fixed body of its own, model/compiled.ts) */
  ib0: Int32Array;
  ib1: Int32Array;
  /** anchors r_A, r_B in their bodies' frames (3 per constraint) */
  r0: Float64Array;
  r1: Float64Array;
  /** own compliance α, NaN where the solver's option applies */
  compliance: Float64Array;
  /** hinge: unit axes in A's and B's frames (3 per constraint) */
  axisA: Float64Array;
  axisB: Float64Array;
  /** distance: length, or the range [minLength, maxLength] (NaN: that side is open); length NaN for a range */
  length: Float64Array;
  minLength: Float64Array;
  maxLength: Float64Array;
  /** hinge: limits on the angle, rad (NaN: none) */
  lowerAngle: Float64Array;
  upperAngle: Float64Array;
  /** hinge, fixed: q_A⁻¹ ⊗ q_B in the starting pose (4 per constraint) */
  referenceOrientation: Float64Array;
  /** a stable id per constraint (the warm-start keys follow it); absent: the index is the id */
  id?: Int32Array;
}

/** Positions (3 per body) and orientations (4 per body, [x y z w]) the rows are evaluated at. */
export interface BodyPose {
  position: Float64Array;
  orientation: Float64Array;
}
