/**
 * Islands and sleeping (collision/islands.ts) in the velocity-level CPU contact solvers: the islands
 * of hand-made contact and joint graphs; a base-10 pyramid settles and falls asleep, after which a
 * frame lays out no rows and moves nothing; a sphere dropped on the sleeping pyramid wakes it; with
 * --sleep 0 nothing sleeps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildIslands, SleepState, TIME_TO_SLEEP } from '../src/collision/islands.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import type { WorldDesc } from '../src/model/world.js';
import type { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { stateHash } from '../src/metrics/hash.js';

const pairs = (list: [number, number][]) => ({ count: list.length, bodyA: Int32Array.from(list.map((p) => p[0])), bodyB: Int32Array.from(list.map((p) => p[1])) });
const joints = (list: [number, number][]) => ({ constraintCount: list.length, ib0: Int32Array.from(list.map((p) => p[0])), ib1: Int32Array.from(list.map((p) => p[1])) });

test('islands: two piles on one fixed ground are two islands; a joint merges them; the ground joins nothing', () => {
  // body 0: fixed ground; pile A = 1, 2, 3 (stacked), pile B = 4, 5; body 6 alone on the ground
  const inverseMass = Float64Array.from([0, 1, 1, 1, 1, 1, 1]);
  const contacts = pairs([[0, 1], [1, 2], [2, 3], [0, 4], [4, 5], [0, 6]]);
  const root = buildIslands(inverseMass, contacts, null);
  assert.equal(root[0], -1, 'the fixed ground is in no island');
  assert.equal(root[1], root[2]);
  assert.equal(root[2], root[3]);
  assert.equal(root[4], root[5]);
  assert.notEqual(root[1], root[4], 'piles touching only through the ground stay apart');
  assert.notEqual(root[6], root[1]);
  assert.notEqual(root[6], root[4]);
  // a joint between the piles' tops makes one island of both; a joint to the ground changes nothing
  const joined = buildIslands(inverseMass, contacts, joints([[3, 5], [0, 6]]));
  assert.equal(joined[1], joined[5]);
  assert.equal(joined[3], joined[4]);
  assert.notEqual(joined[6], joined[1]);
  assert.equal(new Set([...joined].filter((r) => r >= 0)).size, 2);
});

test('sleep state: an island sleeps after every body rested 0.5 s; an awake body touching it wakes all of it', () => {
  const inverseMass = Float64Array.from([0, 1, 1, 1]);
  const s = new SleepState(inverseMass);
  const v = new Float64Array(12), w = new Float64Array(12);
  const dt = 0.1;
  const pile = pairs([[0, 1], [1, 2]]);
  v[3 * 3] = 1; // body 3 moves (not touching the pile)
  v[3 * 1 + 1] = 0.04; // body 1 slow: below 0.05 m/s
  let frames = 0;
  while (!s.asleep[1] && frames < 100) {
    s.update(dt, v, w, pile, null);
    frames++;
  }
  // timers reach 0.5 s after 5 updates of 0.1 s (the update that reaches it puts the island to sleep)
  assert.equal(frames, Math.round(TIME_TO_SLEEP / dt));
  assert.deepEqual([...s.asleep], [0, 1, 1, 0]);
  assert.equal(v[3 * 1 + 1], 0, 'a sleeping body is at rest');
  assert.equal(s.awakeCount(), 1);
  // body 3 touches body 2: the whole pile wakes, timers at 0
  s.update(dt, v, w, pairs([[0, 1], [1, 2], [2, 3]]), null);
  assert.deepEqual([...s.asleep], [0, 0, 0, 0]);
  assert.equal(s.timer[1], 0);
  assert.equal(s.woken, 2);
  // a joint pulls too: the pile sleeps again, then a joint to body 3 wakes it
  for (let k = 0; k < 10; k++) s.update(dt, v, w, pile, null);
  assert.equal(s.asleep[1], 1);
  s.update(dt, v, w, pile, joints([[3, 1]]));
  assert.equal(s.asleep[1], 0);
});

function pyramid(extra: WorldDesc['bodies'] = []): WorldDesc {
  const world = findRigidScene('pyramid')!.build({ base: 10 } as never);
  world.bodies.push(...extra);
  return world;
}

async function make(id: string, world: WorldDesc, options: Partial<SolverOptions> = {}): Promise<JacobiCpuSolver> {
  const info = findSolver(id)!;
  return (await info.create(world, resolveOptions(info, { sleep: 1, ...options }), undefined as never)) as unknown as JacobiCpuSolver;
}

// measured (sleep on, 55 boxes): softstep-cpu asleep after 34 frames (0.57 s), pgs-cpu after 55 (0.92 s)
const SLEEP_BY = 3; // s: the bound the test holds them to

for (const id of ['softstep-cpu', 'pgs-cpu']) {
  test(`${id}: a base-10 pyramid falls asleep within ${SLEEP_BY} s; then a frame lays out 0 rows and moves nothing`, async () => {
    const s = await make(id, pyramid());
    const dt = s.options.dt;
    const boxes = s.awakeBodyCount();
    assert.equal(boxes, 55);
    let frames = 0;
    let rowsAwake = 0;
    while (s.awakeBodyCount() > 0 && frames * dt < SLEEP_BY) {
      await s.step(1);
      frames++;
      if (s.awakeBodyCount() > 0) rowsAwake = s.cost().rowSolvesPerFrame;
    }
    assert.equal(s.awakeBodyCount(), 0, `asleep within ${SLEEP_BY} s`);
    assert.ok(frames * dt >= TIME_TO_SLEEP, 'not before the timers could reach 0.5 s');
    assert.ok(rowsAwake > 0, 'rows before sleeping');
    // the pile stands: the top box is still on top (10 boxes of 2 × 0.5 m: centre at 9.5 m)
    const top = s.w.bodyCount - 1;
    assert.ok(Math.abs(s.w.position[3 * top + 1] - 9.5) < 0.05, `top box at ${s.w.position[3 * top + 1]}`);
    const before = Float64Array.from(s.w.position);
    const q0 = Float64Array.from(s.w.orientation);
    await s.step(30);
    assert.equal(s.cost().rowSolvesPerFrame, 0, 'a sleeping pile costs no rows');
    assert.deepEqual([...s.w.position], [...before], 'positions unchanged while asleep');
    assert.deepEqual([...s.w.orientation], [...q0]);
    // a joint added between steps (top box to the one under its left edge) wakes everything
    s.addConstraint({ type: 'point', bodyA: top, bodyB: top - 2, anchorA: [0, -0.5, 0], anchorB: [0.505, 0.5, 0] });
    await s.step(1);
    assert.equal(s.awakeBodyCount(), 55, 'a new joint wakes the sleepers');
    assert.ok(s.cost().rowSolvesPerFrame > 0);
    console.log(`${id}: asleep after ${frames} frames (${(frames * dt).toFixed(3)} s); rows/frame ${rowsAwake} → 0`);
  });

  test(`${id}: a sphere dropped on the sleeping pyramid wakes it`, async () => {
    // sphere r = 0.5 m, 1000 kg/m³, its bottom `drop` m above the top box's top face (y = 10 m), over it
    const r = 0.5, drop = 20, g = 9.81;
    const sphere = { shape: { type: 'sphere' as const, radius: r }, density: 1000, position: [0, 10 + drop + r, 0] as [number, number, number] };
    const s = await make(id, pyramid([sphere]));
    const dt = s.options.dt;
    const arrival = Math.sqrt((2 * drop) / g); // free fall from rest: drop = ½ g t²  (2.02 s)
    const ib = s.w.bodyCount - 1, top = ib - 1;
    let asleepAt = -1, wokeAt = -1, frame = 0, rowsAfter = 0;
    let topBefore = 0;
    while (frame * dt < arrival + 0.5) {
      await s.step(1);
      frame++;
      const awake = s.awakeBodyCount();
      if (asleepAt < 0 && awake === 1) {
        asleepAt = frame * dt; // only the falling sphere is awake
        topBefore = s.w.position[3 * top + 1];
      }
      if (asleepAt >= 0 && wokeAt < 0 && awake > 1) {
        wokeAt = frame * dt;
        rowsAfter = s.cost().rowSolvesPerFrame;
      }
    }
    assert.ok(asleepAt > 0 && asleepAt < arrival, `the pyramid slept (${asleepAt} s) before the sphere arrived (${arrival.toFixed(3)} s)`);
    assert.ok(wokeAt > 0, 'the pyramid woke');
    // it wakes by the speculative contact, at most a frame or two before the touch
    assert.ok(wokeAt > arrival - 0.1 && wokeAt < arrival + 0.1, `woke at ${wokeAt}, arrival ${arrival.toFixed(3)}`);
    assert.ok(rowsAfter > 0, 'rows again once awake');
    assert.ok(Math.abs(s.w.position[3 * top + 1] - topBefore) > 1e-3, 'the top box moved under the impact');
    console.log(`${id}: pyramid asleep at ${asleepAt.toFixed(3)} s, woken at ${wokeAt.toFixed(3)} s (arrival ${arrival.toFixed(3)} s), rows/frame then ${rowsAfter}`);
  });
}

test('--sleep 0: nothing sleeps', async () => {
  const s = await make('softstep-cpu', pyramid(), { sleep: 0 });
  assert.equal(s.sleeping, null);
  await s.step(60); // 1 s: past the 0.57 s the same pile falls asleep in with sleep on
  assert.equal(s.awakeBodyCount(), 55);
  assert.ok(s.cost().rowSolvesPerFrame > 0);
});

test('a world without collisions steps exactly as before: the necklace hashes (sleep on by default)', async () => {
  // the hashes of `solverlab run --scene necklace --param chains=10 --frames 120` before sleeping existed
  const expected: Record<string, string> = { 'jacobi-cpu': '572cda33af846e9e', 'gs-cpu': '3bda59568810c911' };
  for (const [id, hash] of Object.entries(expected)) {
    const s = await make(id, findRigidScene('necklace')!.build({ chains: 10 } as never));
    assert.equal(s.sleeping, null, 'no islands without collisions');
    await s.step(120);
    assert.equal(stateHash(await s.snapshot()), hash, id);
  }
});
