/**
 * xpbd-cpu's own contact checks (Müller et al. 2020 via the Starframe text; src/solvers/xpbd/contacts.ts):
 * its defaults and declaration, and that with collisions off no contact code runs. The physical facts
 * (slope, restitution, 12 directions, rolling, rest, stack) run in test/contacts.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import type { WorldDesc } from '../src/model/world.js';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';

const ID = 'xpbd-cpu';

test('xpbd-cpu runs at 1 iteration × 10 substeps by default, and takes planes and contacts', () => {
  const info = findSolver(ID)!;
  const o = resolveOptions(info, {});
  assert.equal(o.iterations, 1);
  assert.equal(o.substeps, 10);
  assert.equal(info.unsupported?.(findRigidScene('friction-ramp')!.build({})) ?? null, null);
});

// The analytic contact cases (slope, restitution, 12 directions, rolling, rest, a 10-box stack, joined
// pairs not colliding, collisions: false, tunnelling) run under xpbd-cpu in test/contacts.test.ts with
// the other contact solvers.

test('xpbd-cpu: with collisions off (or one body) no contact code runs: no pipeline, no contact solver', () => {
  const sphere = (x: number) => ({ shape: { type: 'sphere' as const, radius: 0.5 }, density: 1000, position: [x, 0, 0] as [number, number, number] });
  const world = (collisions: boolean, n: number): WorldDesc => ({ gravity: [0, -9.81, 0], collisions, bodies: [sphere(0), sphere(0.95)].slice(0, n), constraints: [] });
  assert.equal(new XpbdCpuSolver(world(false, 2)).contactSolver, null);
  assert.equal(new XpbdCpuSolver(world(true, 1)).contactSolver, null);
  assert.notEqual(new XpbdCpuSolver(world(true, 2)).contactSolver, null);
});
