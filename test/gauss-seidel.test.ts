/**
 * Physics of coloured Gauss-Seidel (gs-cpu): the pendulum period, and a chain that
 * the same equations solved by Jacobi at the same cost cannot hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GaussSeidelCpuSolver } from '../src/solvers/gs/cpu.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { runSolver } from '../src/run/run.js';
import { loadScene } from '../src/scenes/load.js';
import { pendulumPeriod } from './support/pendulum.js';

test('gs-cpu: the small-angle pendulum period is the physical pendulum\'s within 1 %', async (t) => {
  // one constraint: Gauss-Seidel and Jacobi are the same direct 3×3 solve, so the budget of
  // physics.test.ts holds (amplitude 0.06 %, phase error ≲ 0.1 %, interpolation O(h³))
  const { measured, physical, periods } = await pendulumPeriod({ angle: 0.1 }, 600, (w) => new GaussSeidelCpuSolver(w));
  const rel = Math.abs(measured / physical - 1);
  t.diagnostic(`T ${measured.toFixed(5)} s over ${periods} periods, physical ${physical.toFixed(5)} s (${(100 * rel).toFixed(3)} %)`);
  assert.ok(rel <= 0.01, `measured ${measured} s, physical ${physical} s`);
});

test('a 10-bead chain hanging at rest: gs-cpu holds it at 8 warm-started iterations, jacobi-cpu diverges', async (t) => {
  // Warm-started, the error λ⁰ − λ* left by one step's solve is carried into the next; it
  // grows from step to step once the share the iterations leave, p ≈ ρᴺ, exceeds ~0.83.
  // The slowest Jacobi mode of this chain has ρ_J ≈ 0.988 (p = 0.91 at N = 8: unstable);
  // Gauss-Seidel on a two-coloured chain contracts by ρ_J² per sweep (p = 0.82: stable).
  const { world } = loadScene('hanging-chain', { beads: 10 });
  const options = { iterations: 8, warmStart: 1 };
  const gs = await runSolver(new GaussSeidelCpuSolver(world, options), world, { frames: 600 });
  const jacobi = await runSolver(new JacobiCpuSolver(world, options), world, { frames: 600 });
  t.diagnostic(`gs: worst ${gs.worstMaxViolation.toExponential(2)} m, final ${gs.final!.maxViolation.toExponential(2)} m; jacobi: diverged at frame ${jacobi.diverged?.frame}`);
  assert.equal(gs.diverged, null);
  assert.ok(jacobi.diverged !== null, 'jacobi-cpu was expected to diverge on this chain');
  // at rest the joints settle: the final violation is far below a bead radius (5 cm)
  assert.ok(gs.final!.maxViolation < 1e-4, `gs final max violation ${gs.final!.maxViolation} m`);
});
