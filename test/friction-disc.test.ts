/**
 * rows/block-solver.ts frictionDisc: the friction pair's update onto the disc |λ| ≤ r is the point of the
 * disc nearest the stick solution f in the metric of A = A_tt (minimise (λ − f)ᵀ A (λ − f)), checked
 * against a brute-force search over the circle (the minimiser lies on it when |f| > r), for random
 * symmetric positive definite A (condition up to 10⁴, any orientation, and isotropic ones, where it is the
 * radial point r f / |f|). Tolerance: the objective within 1e-9 relative of the search's best (the
 * search's own step, 2π / 2·10⁵, leaves about 1e-10 of it), and λ on the circle to 1e-12.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frictionDisc } from '../src/rows/block-solver.js';
import { mulberry32 } from '../src/math/random.js';

test('frictionDisc: the disc point nearest f in the metric of A_tt (brute force over the circle, 1e-9)', () => {
  const rand = mulberry32(11);
  const out = new Float64Array(2);
  for (let trial = 0; trial < 60; trial++) {
    // A = R diag(e1, e2) Rᵀ; trials 0–9 isotropic
    const e1 = 0.1 + 10 * rand(), e2 = trial < 10 ? e1 : e1 * 10 ** (4 * rand() - 2);
    const th = Math.PI * (2 * rand() - 1), c = Math.cos(th), s = Math.sin(th);
    const a00 = c * c * e1 + s * s * e2, a01 = c * s * (e1 - e2), a11 = s * s * e1 + c * c * e2;
    // the stored block is M = A⁻¹, row-major
    const det = a00 * a11 - a01 * a01;
    const M = new Float64Array([a11 / det, -a01 / det, -a01 / det, a00 / det]);
    const r = 0.5 + rand();
    const ang = 2 * Math.PI * rand(), len = r * (1.05 + 5 * rand());
    const f0 = len * Math.cos(ang), f1 = len * Math.sin(ang);
    frictionDisc(M, 0, f0, f1, r, out);
    const obj = (x: number, y: number) => {
      const dx = x - f0, dy = y - f1;
      return a00 * dx * dx + 2 * a01 * dx * dy + a11 * dy * dy;
    };
    let best = Infinity;
    const N = 200_000;
    for (let k = 0; k < N; k++) {
      const t = (2 * Math.PI * k) / N;
      best = Math.min(best, obj(r * Math.cos(t), r * Math.sin(t)));
    }
    assert.ok(Math.abs(Math.hypot(out[0], out[1]) - r) <= 1e-12 * r, `trial ${trial}: |λ| = ${Math.hypot(out[0], out[1])}, r = ${r}`);
    assert.ok(obj(out[0], out[1]) <= best * (1 + 1e-9), `trial ${trial}: objective ${obj(out[0], out[1])} > brute force ${best}`);
  }
});
