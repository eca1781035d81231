/**
 * The period of the `pendulum` scene as any solver swings it, and the two models
 * it is checked against: the physical pendulum 2π√((I_cm + mL²)/(mgL)) and the
 * simple one 2π√(L/g). Shared by the tests of every solver.
 */
import assert from 'node:assert/strict';
import type { Solver } from '../../src/solvers/solver.js';
import type { WorldDesc } from '../../src/model/world.js';
import { runSolver } from '../../src/run/run.js';
import { resolveParams } from '../../src/scenes/scene.js';
import { pendulum } from '../../src/scenes/pendulum.js';

const sphereMass = (density: number, r: number) => density * (4 / 3) * Math.PI * r ** 3;

/** Period from the downward zero crossings of the bead's x − x_pin, linearly interpolated between frames. */
export async function pendulumPeriod(params: Record<string, number>, frames: number, make: (world: WorldDesc) => Solver | Promise<Solver>) {
  const p = resolveParams(pendulum, params);
  const world = pendulum.build(p);
  const pinX = world.constraints[0].anchorB[0];
  const solver = await make(world);
  const result = await runSolver(solver, world, { frames, trace: [0] });
  solver.destroy();
  assert.equal(result.diverged, null);
  const crossings: number[] = [];
  for (let k = 1; k < result.series.length; k++) {
    const s0 = result.series[k - 1], s1 = result.series[k];
    const x0 = s0.trace![0][0] - pinX, x1 = s1.trace![0][0] - pinX;
    if (x0 > 0 && x1 <= 0) crossings.push(s0.t + (x0 / (x0 - x1)) * (s1.t - s0.t));
  }
  assert.ok(crossings.length >= 4, `only ${crossings.length} downward zero crossings in ${frames} frames`);
  const measured = (crossings[crossings.length - 1] - crossings[0]) / (crossings.length - 1);
  const m = sphereMass(p.density, p.radius);
  const g = Math.hypot(...world.gravity);
  const L = p.length;
  const Icm = 0.4 * m * p.radius ** 2;
  const physical = 2 * Math.PI * Math.sqrt((Icm + m * L * L) / (m * g * L));
  const simple = 2 * Math.PI * Math.sqrt(L / g);
  return { measured, physical, simple, periods: crossings.length - 1 };
}

