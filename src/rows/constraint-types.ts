/** The constraint types by JointKind: a new type is one module in rows/ and one line here. */
import type { ConstraintType } from './constraint-type.js';
import { JointKind } from '../model/joint-data.js';
import { pointJoint } from './point.js';
import { distanceJoint } from './distance.js';
import { hingeJoint } from './hinge.js';
import { fixedJoint } from './fixed.js';

export const constraintTypes: ConstraintType[] = [];
constraintTypes[JointKind.point] = pointJoint;
constraintTypes[JointKind.distance] = distanceJoint;
constraintTypes[JointKind.hinge] = hingeJoint;
constraintTypes[JointKind.fixed] = fixedJoint;
