/**
 * jacobi-cpu's contacts: the contact solver's Jacobi variant (src/contacts/jacobi-contact-solver.ts,
 * mass splitting after Tonge, Benevolenskiy & Voroshilov 2012). Each test checks a fact of the method
 * with its tolerance stated beside it; velocities come from the solvers' snapshots.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../src/solvers/solver.js';
import type { BodyDesc, WorldDesc } from '../src/model/world.js';

const g = 9.81;

async function velocities(id: string, world: WorldDesc, asked: Partial<SolverOptions>): Promise<{ v: Float64Array; w: Float64Array }> {
  const info = findSolver(id)!;
  const solver = await info.create(world, resolveOptions(info, { sleep: 0, ...asked }));
  await solver.step(1);
  const s = await solver.snapshot();
  solver.destroy();
  return { v: Float64Array.from(s.linearVelocity), w: Float64Array.from(s.angularVelocity) };
}

/*
 * Converged, the Jacobi variant solves the same problem as projected Gauss-Seidel. Three frictionless
 * boxes of different densities stacked face on face, exactly touching, the top one thrown down at
 * 2 m/s and the middle one spinning at 3 rad/s about a horizontal axis (so its corners drive into the
 * boxes above and below): one frame of 1/60 s, cold (λ⁰ = 0), one step. Without friction the contact
 * problem is a strictly convex QP in V (min ½ ‖V − V*‖²_M subject to J_n V ≥ 0 at the touching points,
 * no bias: every point is within the slop), so its V is unique however redundant the four points of a
 * face: pgs-cpu (sequential, in place) and jacobi-cpu (every manifold from the sweep's start on split
 * masses, then a gather with the true masses) must reach the same V. At 2000 sweeps both are converged
 * (the Jacobi variant's slowest rate on such a stack measured about 0.83 a sweep without friction):
 * they agree to 1e-9 m/s and rad/s (measured 1.6e-15; the top box's 2 m/s are stopped). The fixed point
 * does not depend on the effective masses the blocks divide by (the splitting sets the rate, which
 * test/residuals.test.ts checks), but it does on the gather: one with the split masses, or a wrong sign
 * or lever arm, moves V by the order of the impulses (0.1–2 m/s here).
 */
test('jacobi-cpu converged: the same velocities as pgs-cpu on a frictionless stack struck from above (1e-9)', async () => {
  const half = 0.5;
  const box = (y: number, density: number, extra: Partial<BodyDesc> = {}): BodyDesc => ({ shape: { type: 'box', halfExtents: [half, half, half] }, density, friction: 0, position: [0, y, 0], ...extra });
  const world: WorldDesc = {
    gravity: [0, -g, 0],
    bodies: [
      { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], friction: 0 },
      box(half, 1000),
      box(3 * half, 400, { angularVelocity: [3, 0, 0] }),
      box(5 * half, 2500, { linearVelocity: [0.3, -2, 0] }),
    ],
    constraints: [],
  };
  const options = { iterations: 2000, substeps: 1, warmStart: 0 };
  const jacobi = await velocities('jacobi-cpu', world, options);
  const pgs = await velocities('pgs-cpu', world, options);
  let worst = 0, moved = 0;
  for (let k = 3; k < jacobi.v.length; k++) {
    worst = Math.max(worst, Math.abs(jacobi.v[k] - pgs.v[k]), Math.abs(jacobi.w[k] - pgs.w[k]));
    moved = Math.max(moved, Math.abs(pgs.v[k] - (world.bodies[k / 3 | 0].linearVelocity?.[k % 3] ?? 0)));
  }
  assert.ok(moved > 0.1, `the contacts changed the velocities (by ${moved} m/s): the comparison means something`);
  assert.ok(worst < 1e-9, `jacobi-cpu and pgs-cpu differ by ${worst}`);
});

/*
 * A sweep is order-independent (the GPU's contract: one thread per manifold, one per body). Five
 * frictionless spheres (one point per manifold), three side by side on the ground and two in their
 * grooves, all thrown at different velocities, one frame at the default 8 sweeps (not converged, so
 * the order of the updates would show), cold: the same world with its bodies listed in reverse order
 * (so its manifolds, their body roles and the gather's sums come in another order) gives the same
 * velocities to rounding, 1e-12 m/s (the sums' order changes the last bits only; measured 2.2e-16).
 * pgs-cpu, whose sweep is sequential, differs by the order of its iteration error (measured 0.055 m/s);
 * it is checked to differ by more than 1e-6, so the test could see an order dependence.
 */
test('jacobi-cpu: a sweep does not depend on the order of the bodies (to 1e-12), where pgs-cpu does', async () => {
  const r = 0.5;
  const spheres: BodyDesc[] = [
    [-1, r, [0.5, -1, 0.2]], [0, r, [-0.3, -0.5, 0.1]], [1, r, [0.1, -2, -0.4]],
    [-0.5, r + Math.sqrt(3) * r, [0.8, -1.5, 0]], [0.5, r + Math.sqrt(3) * r, [-0.6, -2.5, 0.3]],
  ].map(([x, y, v]) => ({ shape: { type: 'sphere', radius: r }, density: 1000, friction: 0, position: [x as number, y as number, 0], linearVelocity: v as [number, number, number] }));
  const ground: BodyDesc = { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], friction: 0 };
  const forward: WorldDesc = { gravity: [0, -g, 0], bodies: [ground, ...spheres], constraints: [] };
  const backward: WorldDesc = { gravity: [0, -g, 0], bodies: [ground, ...[...spheres].reverse()], constraints: [] };
  const n = spheres.length;
  const difference = async (id: string) => {
    const options = { iterations: 8, substeps: 1, warmStart: 0 };
    const a = await velocities(id, forward, options), b = await velocities(id, backward, options);
    let worst = 0;
    for (let i = 0; i < n; i++) {
      const p = 3 * (1 + i), q = 3 * (n - i); // sphere i is body 1 + i forwards, n − i backwards
      for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(a.v[p + k] - b.v[q + k]), Math.abs(a.w[p + k] - b.w[q + k]));
    }
    return worst;
  };
  const jacobi = await difference('jacobi-cpu');
  const pgs = await difference('pgs-cpu');
  assert.ok(jacobi < 1e-12, `jacobi-cpu: the reversed world differs by ${jacobi} m/s`);
  assert.ok(pgs > 1e-6, `pgs-cpu: the reversed world differs by only ${pgs} m/s (the test would not see an order dependence)`);
});
