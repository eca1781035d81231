/**
 * xpbd-cpu's own contact checks (Müller et al. 2020 via the Starframe text; src/solvers/xpbd/contacts.ts):
 * its defaults and declaration, and that with collisions off no contact code runs. The physical facts
 * (slope, restitution, 12 directions, rolling, rest, stack) run in test/contacts.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type Solver, type SolverOptions, type Snapshot } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import type { WorldDesc } from '../src/model/world.js';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';

const ID = 'xpbd-cpu';

async function make(world: WorldDesc, asked: Partial<SolverOptions> = {}): Promise<Solver> {
  const info = findSolver(ID)!;
  const why = info.unsupported?.(world) ?? null;
  assert.equal(why, null, `${ID} should take this scene`);
  return info.create(world, resolveOptions(info, asked));
}

/** Steps `frames` frames, calling `each` with the frame number (1…) and the snapshot. */
async function run(solver: Solver, frames: number, each: (frame: number, s: Snapshot) => void): Promise<void> {
  for (let f = 1; f <= frames; f++) {
    await solver.step(1);
    each(f, await solver.snapshot());
  }
  solver.destroy();
}

test('xpbd-cpu runs at 1 iteration × 10 substeps by default, and takes planes and contacts', () => {
  const info = findSolver(ID)!;
  const o = resolveOptions(info, {});
  assert.equal(o.iterations, 1);
  assert.equal(o.substeps, 10);
  assert.equal(info.unsupported?.(findRigidScene('friction-ramp')!.build({})) ?? null, null);
});

// The analytic contact cases (slope, restitution, 12 directions, rolling, rest, a 10-box stack, joined
// pairs, tunnelling) run under xpbd-cpu in test/contacts.test.ts with the other contact solvers.

/*
 * With collisions off no contact code runs (no pipeline, no contact solver), so joint-only scenes step
 * as before; with them on, two overlapping spheres (5 cm, no gravity, not joined) are pushed apart to
 * touching within the frame (the projection removes the overlap; XPBD has no slop), while the same pair
 * joined by a point joint is not pushed (joined bodies never collide).
 */
test('xpbd-cpu: collisions off runs no contact code; unjoined overlapping spheres are pushed apart, joined ones are not', async () => {
  const pair = (joined: boolean, collisions?: boolean): WorldDesc => ({
    gravity: [0, 0, 0],
    ...(collisions !== undefined ? { collisions } : {}),
    bodies: [
      { shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0, 0, 0] },
      { shape: { type: 'sphere', radius: 0.5 }, density: 1000, position: [0.95, 0, 0] },
    ],
    constraints: joined ? [{ type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.475, 0, 0], anchorB: [-0.475, 0, 0] }] : [],
  });
  assert.equal(new XpbdCpuSolver(pair(false, false)).contactSolver, null);
  const gap = async (w: WorldDesc) => {
    let last: Snapshot | null = null;
    await run(await make(w), 30, (_, s) => (last = s));
    return last!.position[3] - last!.position[0] - 1; // centre distance − 2r
  };
  assert.ok(Math.abs((await gap(pair(true))) + 0.05) < 1e-6, 'the joined pair was pushed apart');
  assert.ok((await gap(pair(false))) > -1e-6, 'the unjoined pair still overlaps');
  assert.ok(Math.abs((await gap(pair(false, false))) + 0.05) < 1e-12, 'collisions off, yet the pair moved');
});
