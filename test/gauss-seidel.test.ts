/**
 * Physics of coloured Gauss-Seidel (gs-cpu): the pendulum period, and a chain that
 * the same equations solved by Jacobi at the same cost cannot hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GaussSeidelCpuSolver } from '../src/solvers/gs/cpu.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { runSolver } from '../src/run/run.js';
import { loadRigidScene } from '../src/scenes/load.js';
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
  const { world } = loadRigidScene('hanging-chain', { beads: 10 });
  const options = { iterations: 8, warmStart: 1 };
  const gs = await runSolver(new GaussSeidelCpuSolver(world, options), world, { frames: 600 });
  const jacobi = await runSolver(new JacobiCpuSolver(world, options), world, { frames: 600 });
  t.diagnostic(`gs: worst ${gs.worstMaxViolation.toExponential(2)} m, final ${gs.final!.maxViolation.toExponential(2)} m; jacobi: diverged at frame ${jacobi.diverged?.frame}`);
  assert.equal(gs.diverged, null);
  assert.ok(jacobi.diverged !== null, 'jacobi-cpu was expected to diverge on this chain');
  // at rest the joints settle: the final violation is far below a bead radius (5 cm)
  assert.ok(gs.final!.maxViolation < 1e-4, `gs final max violation ${gs.final!.maxViolation} m`);
});

test('a soft joint (compliance α = 1/k) in jacobi-cpu and gs-cpu oscillates at ω = √(k/m), and loses energy, never gains', async (t) => {
  // spring scene: bead released at the pin, oscillating about y_eq = y_pin − m g / k.
  // The soft row is backward Euler on the spring force (x_{n+1} = x_n + h v_{n+1},
  // v_{n+1} = v_n + h (g − ω² (x_{n+1} − x_eq))): its frequency is ω (1 + O((ωh)²)) and its
  // amplitude decays by ≈ 1 − (ωh)²/2 per step. With 16 substeps ωh ≈ 0.014: the
  // frequency error is ~1e-4, far inside 2 %.
  const { world, params: p } = loadRigidScene('spring', { stiffness: 100 });
  const params = p as Record<string, number>;
  const m = params.density * (4 / 3) * Math.PI * params.radius ** 3;
  const omega = Math.sqrt(params.stiffness / m);
  const g = 9.81;
  const pinY = world.constraints[0].anchorB[1];
  const yEq = pinY - (m * g) / params.stiffness;
  for (const make of [(w: typeof world) => new JacobiCpuSolver(w, { substeps: 16 }), (w: typeof world) => new GaussSeidelCpuSolver(w, { substeps: 16 })]) {
    const solver = make(world);
    const r = await runSolver(solver, world, { frames: 300, trace: [0] });
    const crossings: number[] = [];
    for (let k = 1; k < r.series.length; k++) {
      const a = r.series[k - 1], b = r.series[k];
      const ya = a.trace![0][1] - yEq, yb = b.trace![0][1] - yEq;
      if (ya > 0 && yb <= 0) crossings.push(a.t + (ya / (ya - yb)) * (b.t - a.t));
    }
    assert.ok(crossings.length >= 5, `${crossings.length} crossings`);
    const period = (crossings[crossings.length - 1] - crossings[0]) / (crossings.length - 1);
    const measured = (2 * Math.PI) / period;
    t.diagnostic(`${solver.id}: ω ${measured.toFixed(4)} rad/s, √(k/m) ${omega.toFixed(4)} rad/s (${(100 * (measured / omega - 1)).toFixed(3)} %), energy ${r.initial.energy.toFixed(4)} → ${r.final!.energy.toFixed(4)} J`);
    assert.ok(Math.abs(measured / omega - 1) < 0.02, `${solver.id}: ω = ${measured}, expected ${omega}`);
    // energy includes the spring's ½|C|²/α; backward Euler only removes energy
    assert.ok(r.final!.energy <= r.initial.energy + 1e-9, `${solver.id}: energy grew`);
    assert.ok(r.final!.elastic > 0, 'the spring is stretched');
  }
});
