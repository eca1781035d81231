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

/*
 * --residuals on contact scenes (src/solvers/xpbd/contacts.ts residual): the contact rows' channels,
 * 'contact normal' and 'friction' (the other solvers' names), one value after k = 0..iterations of the
 * first substep, each the projected XPBD residual (C + α̃λ)/h² with α = 0.
 * A unit cube at rest on the ground (sleep off, after 3 frames): each substep ends with its 4 corners
 * projected onto the ground and v_n = 0 (velocity pass), so the next prediction sinks each by g h², and
 * λ_n = 0 there: C = −g h² < 0 points inward, so it counts: r⁰ = √4 · g h² / h² = 2g (to the block
 * solve's convergence, 1e-9 of λ: 1e-6 relative is generous). After the iteration (solved to
 * convergence) ≤ 1e-6 g. Friction before the solve: λ_n = 0, a disc of radius 0, so 0 exactly.
 * Sliding at 2 m/s, frictionless or with μ = 0.3, the friction rows are at their bound (radius 0, or the
 * manifold slides and dynamic friction takes it) and the residual points out of the disc: 0 exactly,
 * at every k (the unprojected drift would be ~v h / h² = 1200 m/s²).
 */
test('xpbd-cpu --residuals on contacts: the normal rows from 2g to ~0 on a resting box, friction projected to 0 where it cannot act', async () => {
  const g = 9.81;
  for (const [what, speed, mu] of [['at rest', 0, 0.5], ['sliding, frictionless', 2, 0], ['sliding, μ = 0.3', 2, 0.3]] as const) {
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      collisions: true,
      bodies: [
        { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0], friction: mu },
        { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 0.5, 0], linearVelocity: [speed, 0, 0], friction: mu },
      ],
      constraints: [],
    };
    const s = new XpbdCpuSolver(world, resolveOptions(findSolver(ID)!, { sleep: 0 } as never));
    for (let f = 0; f < 3; f++) s.stepFrame();
    const curve = await s.stepRecordingResiduals();
    const normal = curve.channels['contact normal'], friction = curve.channels['friction'];
    assert.ok(normal && friction, `${what}: both contact channels recorded (${Object.keys(curve.channels).join(', ')})`);
    assert.equal(normal.length, s.options.iterations + 1);
    assert.equal(friction.length, s.options.iterations + 1);
    assert.equal(friction[0], 0, `${what}: no friction before the normal rows act`);
    if (speed === 0) {
      assert.ok(Math.abs(normal[0] / (2 * g) - 1) < 1e-6, `${what}: r⁰ = ${normal[0]} m/s², expected 2g`);
      assert.ok(normal[1] <= 1e-6 * g, `${what}: r¹ = ${normal[1]} m/s²`);
      assert.ok(friction[1] <= 1e-6 * g, `${what}: friction r¹ = ${friction[1]} m/s²`);
    } else {
      assert.ok(normal[1] < 1e-3 * normal[0], `${what}: the normal residual falls (${normal.join(', ')})`);
      assert.deepEqual(friction, friction.map(() => 0), `${what}: friction at its bound, pointing out`);
      assert.ok(s.w.linearVelocity[3] > 1, `${what}: still sliding`);
    }
  }
});
