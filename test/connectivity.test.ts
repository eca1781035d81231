/**
 * Body → constraint connectivity (CSR) against a brute-force count, and the
 * world anchors that compileWorld adds for constraints pinned to the world.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeConnectivity } from '../src/model/connectivity.js';
import { compileWorld } from '../src/model/compiled.js';
import type { WorldDesc } from '../src/model/world.js';
import { mulberry32 } from './support/random.js';

const sorted = (xs: Iterable<number>) => [...xs].sort((p, q) => p - q);

test('computeConnectivity matches a brute-force count on random topologies', () => {
  const rand = mulberry32(0x5eed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1)); // inclusive
  for (let trial = 0; trial < 300; trial++) {
    const bodyCount = int(2, 60);
    // from no constraints at all to dense multigraphs (repeated pairs allowed)
    const constraintCount = trial % 10 === 0 ? 0 : int(1, 4 * bodyCount);
    const ib0 = new Int32Array(constraintCount);
    const ib1 = new Int32Array(constraintCount);
    for (let ic = 0; ic < constraintCount; ic++) {
      const i = int(0, bodyCount - 1);
      let j = int(0, bodyCount - 2);
      if (j >= i) j++; // j ≠ i, uniform over the others
      ib0[ic] = i;
      ib1[ic] = j;
    }
    const { ic0, constraintList } = computeConnectivity(bodyCount, ib0, ib1);
    const where = `trial ${trial} (${bodyCount} bodies, ${constraintCount} constraints)`;

    assert.equal(ic0.length, bodyCount + 1, where);
    assert.equal(constraintList.length, 2 * constraintCount, where);
    assert.equal(ic0[0], 0, where);
    assert.equal(ic0[bodyCount], 2 * constraintCount, `${where}: sentinel`);
    for (let b = 0; b < bodyCount; b++) assert.ok(ic0[b] <= ic0[b + 1], `${where}: ic0 not monotone at ${b}`);

    // each body's slice is exactly the multiset of constraints that touch it
    for (let b = 0; b < bodyCount; b++) {
      const expected: number[] = [];
      for (let ic = 0; ic < constraintCount; ic++) if (ib0[ic] === b || ib1[ic] === b) expected.push(ic);
      const slice = sorted(constraintList.subarray(ic0[b], ic0[b + 1]));
      assert.deepEqual(slice, expected, `${where}: body ${b}`);
    }

    // each constraint appears exactly twice overall
    const seen = new Int32Array(constraintCount);
    for (const ic of constraintList) {
      assert.ok(ic >= 0 && ic < constraintCount, `${where}: constraint index ${ic} out of range`);
      seen[ic]++;
    }
    for (let ic = 0; ic < constraintCount; ic++) assert.equal(seen[ic], 2, `${where}: constraint ${ic}`);
  }
});

test('compileWorld adds one fixed anchor body per world constraint, with zero inverse mass and inertia', () => {
  const sphere = { type: 'sphere' as const, radius: 0.1 };
  const world: WorldDesc = {
    gravity: [0, -9.81, 0],
    bodies: [
      { shape: sphere, density: 1000, position: [0, 0, 0], linearVelocity: [1, 2, 3] },
      { shape: sphere, mass: 2, position: [1, 0, 0] },
      { shape: sphere, density: 500, position: [2, 0, 0] },
    ],
    constraints: [
      { type: 'point', bodyA: 0, bodyB: null, anchorA: [-0.1, 0, 0], anchorB: [-0.1, 0, 0] },
      { type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.1, 0, 0], anchorB: [-0.1, 0, 0] },
      // two constraints on the same world point still get two anchors
      { type: 'point', bodyA: 2, bodyB: null, anchorA: [0, 0.1, 0], anchorB: [3, 4, 5] },
      { type: 'point', bodyA: 1, bodyB: null, anchorA: [0, 0.1, 0], anchorB: [3, 4, 5] },
    ],
  };
  const cw = compileWorld(world);
  const worldConstraints = world.constraints.filter((c) => c.bodyB === null).length;
  assert.equal(cw.worldBodyCount, 3);
  assert.equal(cw.bodyCount, 3 + worldConstraints);
  assert.equal(cw.constraintCount, 4);

  const anchors = new Set<number>();
  world.constraints.forEach((c, ic) => {
    assert.equal(cw.ib0[ic], c.bodyA);
    if (c.bodyB !== null) {
      assert.equal(cw.ib1[ic], c.bodyB);
      return;
    }
    const k = cw.ib1[ic];
    assert.ok(k >= cw.worldBodyCount && k < cw.bodyCount, `constraint ${ic}: anchor index ${k}`);
    assert.ok(!anchors.has(k), `constraint ${ic}: anchor ${k} shared`);
    anchors.add(k);
    assert.equal(cw.inverseMass[k], 0);
    assert.equal(cw.mass[k], Infinity);
    assert.deepEqual([...cw.inverseInertiaLocal.subarray(9 * k, 9 * k + 9)], new Array(9).fill(0));
    assert.deepEqual([...cw.position.subarray(3 * k, 3 * k + 3)], c.anchorB); // at the world point
    assert.deepEqual([...cw.orientation.subarray(4 * k, 4 * k + 4)], [0, 0, 0, 1]);
    assert.deepEqual([...cw.linearVelocity.subarray(3 * k, 3 * k + 3)], [0, 0, 0]);
    assert.deepEqual([...cw.angularVelocity.subarray(3 * k, 3 * k + 3)], [0, 0, 0]);
    assert.deepEqual([...cw.r1.subarray(3 * ic, 3 * ic + 3)], [0, 0, 0]); // r¹ = 0 on the anchor
  });
  assert.equal(anchors.size, worldConstraints);
  // the desc's own bodies can move
  for (let i = 0; i < cw.worldBodyCount; i++) assert.ok(cw.inverseMass[i] > 0, `body ${i}`);
  // the connectivity covers the anchors too
  assert.equal(cw.connectivity.ic0.length, cw.bodyCount + 1);
  for (const k of anchors) assert.equal(cw.connectivity.ic0[k + 1] - cw.connectivity.ic0[k], 1, `anchor ${k} has one constraint`);
});
