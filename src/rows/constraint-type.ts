/**
 * A constraint type: how one kind of joint (or, later, contact) becomes rows.
 *
 * Adding a constraint type: write one module in rows/ that derives C and J (in a comment above
 * the code, as point.ts does), implements this interface, and add it to `constraintTypes`
 * (constraint-types.ts) under its JointKind. Every row-based solver then picks it up: it calls
 * `layout` once per topology change and `evaluate` once per step (XPBD: after every projection).
 *
 * Contract:
 *   layout(j, ic, rows, α, key)   appends the constraint's blocks to `rows` (RowSet.addBlock) with
 *                                 their bounds and compliance α, keys key, key + 1, …; the number
 *                                 of rows is fixed for the constraint (a one-sided row that is not
 *                                 touching its bound stays, with λ clamped to 0 and a speculative bias);
 *   evaluate(j, ic, pose, rows, first)
 *                                 fills J and C of those rows (first .. first + rows − 1, in layout's
 *                                 order) at the given pose; reads nothing else and writes only them.
 */
import type { RowSet } from './rows.js';
import type { BodyPose, JointTable } from '../model/joint-data.js';

export interface ConstraintType {
  name: string;
  layout(j: JointTable, ic: number, rows: RowSet, compliance: number, key: number): void;
  evaluate(j: JointTable, ic: number, pose: BodyPose, rows: RowSet, first: number): void;
}

/** Rows a constraint may have at most (the key of row k of constraint ic is ic · MAX_ROWS + k). */
export const MAX_ROWS_PER_CONSTRAINT = 8;
