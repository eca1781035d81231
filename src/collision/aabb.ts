/**
 * World-frame axis-aligned bounding boxes of the shapes (src/model/schema.ts) at a pose, for the
 * broad phase (broadphase.ts). Six numbers per box: min x, y, z, then max x, y, z.
 *
 * With R = R(q) the rotation of the pose (rows R_i, columns R_·j) and c the position, a shape's
 * points are c + R p for p in the local shape S, so along world axis i the shape spans
 * c_i + [min over S of R_i·p, max over S of R_i·p]. For the shapes here, symmetric about the origin,
 * that is c_i ± e_i with e_i the support of S in direction R_i (the i-th row of R):
 *   sphere   e_i = r                                   (|R_i| = 1)
 *   box      e_i = Σ_j |R_ij| h_j                      (max over the 8 corners p = (±h_x, ±h_y, ±h_z))
 *   capsule  e_i = |R_i1| h + r                        (segment (0, ±h, 0): ends c ± h R_·1, plus r)
 * each exact: a corner, an end ± r, a sphere point attain it. The plane, the half-space
 * n · (x − c) ≤ 0 with n = R_·1 (local +y), projects onto world axis i as all of ℝ unless n = ±e_i
 * (any other n has a component along some j ≠ i, so moving along e_j makes up for any x_i):
 *   n = +e_i   x_i ∈ (−∞, c_i]          n = −e_i   x_i ∈ [c_i, +∞)          otherwise (−∞, +∞)
 * "n = ±e_i" is tested exactly (the other two components exactly 0): a plane tilted by rounding only
 * gets the infinite box on every axis, which is still a bound (never a missed pair), just looser.
 * Every box is then enlarged by `margin` on each side (speculative contacts, types.ts); ±∞ stays.
 *
 * R(q) is written out as in rigid/quat.ts `rotate` (unit q assumed), so a point placed with
 * `rotate` lies in the box up to rounding.
 */
import type { Shape } from '../model/world.js';

/**
 * out[oo..oo+6) = (min x, min y, min z, max x, max y, max z) of `shape` at position
 * position[po..po+3), orientation orientation[qo..qo+4) ([x, y, z, w], unit), enlarged by `margin`
 * (≥ 0) on every side. Infinite where a plane is unbounded (header).
 */
export function shapeAabb(
  shape: Shape,
  position: ArrayLike<number>,
  po: number,
  orientation: ArrayLike<number>,
  qo: number,
  margin: number,
  out: Float64Array,
  oo: number,
): void {
  const cx = position[po], cy = position[po + 1], cz = position[po + 2];
  const x = orientation[qo], y = orientation[qo + 1], z = orientation[qo + 2], w = orientation[qo + 3];
  // R(q), row i, column j (rigid/quat.ts rotate)
  const r00 = 1 - 2 * (y * y + z * z), r01 = 2 * (x * y - z * w), r02 = 2 * (x * z + y * w);
  const r10 = 2 * (x * y + z * w), r11 = 1 - 2 * (x * x + z * z), r12 = 2 * (y * z - x * w);
  const r20 = 2 * (x * z - y * w), r21 = 2 * (y * z + x * w), r22 = 1 - 2 * (x * x + y * y);
  let ex: number, ey: number, ez: number;
  switch (shape.type) {
    case 'sphere':
      ex = ey = ez = shape.radius;
      break;
    case 'box': {
      const [a, b, c] = shape.halfExtents;
      // e_i = Σ_j |R_ij| h_j
      ex = Math.abs(r00) * a + Math.abs(r01) * b + Math.abs(r02) * c;
      ey = Math.abs(r10) * a + Math.abs(r11) * b + Math.abs(r12) * c;
      ez = Math.abs(r20) * a + Math.abs(r21) * b + Math.abs(r22) * c;
      break;
    }
    case 'capsule': {
      const h = shape.halfHeight, r = shape.radius;
      // the segment's ends c ± h R_·1, each widened by r
      ex = Math.abs(r01) * h + r;
      ey = Math.abs(r11) * h + r;
      ez = Math.abs(r21) * h + r;
      break;
    }
    case 'plane': {
      // n = R_·1 (local +y); bounded only along the axis n is (exactly) parallel to
      let lx = -Infinity, ly = -Infinity, lz = -Infinity, hx = Infinity, hy = Infinity, hz = Infinity;
      if (r11 === 0 && r21 === 0 && r01 !== 0) {
        if (r01 > 0) hx = cx + margin;
        else lx = cx - margin;
      } else if (r01 === 0 && r21 === 0 && r11 !== 0) {
        if (r11 > 0) hy = cy + margin;
        else ly = cy - margin;
      } else if (r01 === 0 && r11 === 0 && r21 !== 0) {
        if (r21 > 0) hz = cz + margin;
        else lz = cz - margin;
      }
      out[oo] = lx;
      out[oo + 1] = ly;
      out[oo + 2] = lz;
      out[oo + 3] = hx;
      out[oo + 4] = hy;
      out[oo + 5] = hz;
      return;
    }
    default:
      throw new Error(`shapeAabb: unknown shape type ${(shape as { type: string }).type}`);
  }
  ex += margin;
  ey += margin;
  ez += margin;
  out[oo] = cx - ex;
  out[oo + 1] = cy - ey;
  out[oo + 2] = cz - ez;
  out[oo + 3] = cx + ex;
  out[oo + 4] = cy + ey;
  out[oo + 5] = cz + ez;
}
