/**
 * Every registered rigid solver against its declaration: on every built-in rigid scene (made small)
 * it either runs — the scene uses only constraint types and shapes it declares in `supports`, it
 * steps, and it hands back a finite snapshot of the scene's bodies with one timing per frame — or it
 * declines with a reason: where the scene has a constraint type or shape it does not declare, one
 * that names the solver and that type or shape. A solver whose declaration claims more than it can run, or
 * less, fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { solvers } from '../src/solvers/registry.js';
import { rigidScenes } from '../src/scenes/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import type { WorldDesc } from '../src/model/world.js';

/** Small versions of the built-in scenes (the software adapter is slow). */
const small: Record<string, Record<string, number>> = {
  necklace: { chains: 2, beads: 5 },
  'far-from-origin': { chains: 2, beads: 5 },
  'long-chain': { beads: 12 },
  'joint-grid': { columns: 4, rows: 3 },
  'hinge-chain': { links: 3 },
  cantilever: { boxes: 2 },
  pyramid: { base: 4 },
  'vertical-stack': { boxes: 3 },
  rain: { count: 30 },
  confined: { count: 27 },
  domino: { count: 5 },
  'brick-wall': { rows: 2, columns: 2, layers: 1 },
};

function uses(world: WorldDesc): { constraints: Set<string>; shapes: Set<string> } {
  return { constraints: new Set(world.constraints.map((c) => c.type ?? 'point')), shapes: new Set(world.bodies.map((b) => b.shape.type)) };
}

test('every rigid solver runs each built-in scene its declaration covers, and declines the others with the reason', async (t) => {
  let gpu: GpuContext | null = null;
  const rigid = solvers.filter((s) => s.supports);
  assert.ok(rigid.length >= 10, 'the rigid solvers declare what they support');
  for (const scene of rigidScenes) {
    const world = scene.build(small[scene.name] ?? {});
    const used = uses(world);
    for (const info of rigid) {
      const declared = info.supports!;
      const has = (list: readonly string[], x: string) => list.includes(x);
      const outside = [...used.constraints].filter((c) => !has(declared.constraints, c)).concat([...used.shapes].filter((s) => !has(declared.shapes, s)));
      // contacts: a world with collisions on and two or more bodies needs a solver that declares them
      if (!declared.contacts && world.collisions !== false && world.bodies.length >= 2) outside.push('contacts');
      const options = resolveOptions(info, {});
      const why = info.unsupported?.(world, options) ?? null;
      if (outside.length) {
        assert.ok(why, `${info.id} declares no ${outside.join(', ')} but accepts ${scene.name}`);
        assert.ok(why.includes(info.id) && outside.some((o) => why.includes(o)), `${info.id} on ${scene.name}: the reason names the solver and what it lacks: ${why}`);
        continue;
      }
      if (why) {
        // a reason of the solver's own (a loop for a tree solver, a one-sided row for an equality solve, …)
        assert.ok(why.length > 20, `${info.id} on ${scene.name}: a reason that says something: ${why}`);
        t.diagnostic(`${info.id} declines ${scene.name}: ${why}`);
        continue;
      }
      if (info.device === 'gpu') gpu ??= await acquireGpu();
      const solver = await info.create(world, options, gpu ?? undefined);
      try {
        assert.equal(solver.bodyCount, world.bodies.length, `${info.id} on ${scene.name}: bodies`);
        assert.equal(solver.constraintCount, world.constraints.length, `${info.id} on ${scene.name}: constraints`);
        await solver.step(3);
        const snap = await solver.snapshot();
        assert.equal(snap.frame, 3);
        assert.equal(snap.position.length, 3 * world.bodies.length);
        assert.equal(snap.orientation.length, 4 * world.bodies.length);
        for (const a of [snap.position, snap.orientation, snap.linearVelocity, snap.angularVelocity])
          assert.ok(a.every(Number.isFinite), `${info.id} on ${scene.name}: a non-finite state after 3 frames`);
        assert.equal(solver.timings().msPerFrame.length > 0, true);
        assert.ok(solver.cost().rowSolvesPerFrame >= 0);
      } finally {
        solver.destroy();
      }
    }
  }
});
