/**
 * Islands and sleeping (collision/islands.ts) in the velocity-level CPU contact solvers: the islands
 * of hand-made contact and joint graphs; a base-10 pyramid settles and falls asleep, after which a
 * frame lays out no rows and moves nothing; a sphere dropped on the sleeping pyramid wakes it; with
 * --sleep 0 nothing sleeps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildIslands, IslandGraph, SleepState, TIME_TO_SLEEP } from '../src/collision/islands.js';
import { mulberry32 } from '../src/math/random.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import type { WorldDesc } from '../src/model/world.js';
import type { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { stateHash } from '../src/metrics/hash.js';
import { awakeBodies } from '../src/model/snapshot.js';

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

test('incremental islands (IslandGraph) against union-find from scratch on 300 frames of a random changing graph', () => {
  // 80 bodies, every 8th fixed; each frame about 5 % of the candidate pairs flip (appear or go), the
  // rest persist; contacts and joints both. Checks, every frame:
  //   1. each true island (buildIslands) lies inside one incremental island (never a sleeper beside
  //      an awake body it touches, even before a split);
  //   2. after every marked island is split, the two partitions are the same.
  const n = 80;
  const inverseMass = Float64Array.from({ length: n }, (_, i) => (i % 8 === 0 ? 0 : 1));
  const rand = mulberry32(7);
  const candidates: [number, number][] = [];
  for (let k = 0; k < 160; k++) {
    const a = Math.floor(rand() * n), b = Math.floor(rand() * n);
    if (a !== b) candidates.push(a < b ? [a, b] : [b, a]);
  }
  const on = candidates.map(() => rand() < 0.3);
  const graph = new IslandGraph(inverseMass);
  let splitsSeen = 0;
  for (let frame = 0; frame < 300; frame++) {
    for (let k = 0; k < on.length; k++) if (rand() < 0.05) on[k] = !on[k];
    const live = candidates.filter((_, k) => on[k]);
    const contacts = pairs(live.filter((_, k) => k % 4 !== 0));
    const jointList = joints(live.filter((_, k) => k % 4 === 0));
    graph.update(contacts, jointList);
    const truth = buildIslands(inverseMass, contacts, jointList);
    const same = (p: Int32Array, q: Int32Array) => {
      // p refines q: bodies together in p are together in q
      const map = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        if (p[i] < 0) {
          assert.equal(q[i], -1, `fixed body ${i}`);
          continue;
        }
        const seen = map.get(p[i]);
        if (seen === undefined) map.set(p[i], q[i]);
        else assert.equal(seen, q[i], `frame ${frame}: body ${i}`);
      }
    };
    same(truth, graph.island);
    for (let i = 0; i < n; i++) if (graph.island[i] >= 0 && graph.dirty[graph.island[i]]) graph.split(graph.island[i]);
    same(truth, graph.island);
    same(graph.island, truth);
    splitsSeen = graph.splits;
  }
  assert.ok(graph.merges > 100 && splitsSeen > 50, `the graph merged (${graph.merges}) and split (${splitsSeen}) as it changed`);
});

test('sleep state: a body at rest that a moving body has left falls asleep alone (its island is split)', () => {
  const inverseMass = Float64Array.from([0, 1, 1]);
  const s = new SleepState(inverseMass);
  const v = new Float64Array(9), w = new Float64Array(9);
  const dt = 0.1;
  v[3 * 2] = 1; // body 2 moves; body 1 rests on the ground (body 0)
  s.update(dt, v, w, pairs([[0, 1], [1, 2]]), null); // they touch: one island
  assert.equal(s.island[1], s.island[2]);
  for (let k = 0; k < 10; k++) s.update(dt, v, w, pairs([[0, 1]]), null); // body 2 has gone
  assert.deepEqual([...s.asleep], [0, 1, 0], 'body 1 sleeps, body 2 (moving) does not');
  assert.notEqual(s.island[1], s.island[2]);
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
  // timers reach 0.5 s after 5 frames of 0.1 s, each credited when the body was slow at both its ends
  // (islands.ts header): the first update is the first sample, which credits nothing, so 6 updates
  // (the update that reaches 0.5 s puts the island to sleep)
  assert.equal(frames, Math.round(TIME_TO_SLEEP / dt) + 1);
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

test('sleep state: a frame is credited only when the body was slow at both its ends (released at rest, at the top of a throw)', () => {
  // dt = TIME_TO_SLEEP: one credited frame would put a body to sleep
  const dt = TIME_TO_SLEEP, g = 9.81;
  const s = new SleepState(Float64Array.from([0, 1]));
  const v = new Float64Array(6), w = new Float64Array(6);
  // released at rest in mid-air: slow at the first sample, but no frame has been stepped yet
  s.update(dt, v, w, null, null);
  assert.equal(s.asleep[1], 0, 'a body released at rest is not put to sleep before its first step');
  // the step gave it g dt = 4.9 m/s (falling): not slow
  v[4] = -g * dt;
  s.update(dt, v, w, null, null);
  assert.equal(s.asleep[1], 0);
  // thrown up at g dt: one step later it stands at the top of its flight, v = 0, under gravity: slow
  // at this sample, fast at the last, so the frame is not a rest (|Δv| = g dt ≫ 0.1 m/s)
  const t = new SleepState(Float64Array.from([0, 1]));
  v[4] = g * dt;
  t.update(dt, v, w, null, null);
  v[4] = 0;
  t.update(dt, v, w, null, null);
  assert.equal(t.asleep[1], 0, 'a body at the top of a throw is not at rest');
  assert.equal(t.timer[1], 0);
  // slow at two samples in a row: that frame rested, and one frame of TIME_TO_SLEEP puts it to sleep
  t.update(dt, v, w, null, null);
  assert.equal(t.asleep[1], 1, 'slow at both ends of a frame of 0.5 s: asleep');
});

function pyramid(extra: WorldDesc['bodies'] = []): WorldDesc {
  const world = findRigidScene('pyramid')!.build({ base: 10 } as never);
  world.bodies.push(...extra);
  return world;
}

async function make(id: string, world: WorldDesc, options: Partial<SolverOptions> = {}): Promise<JacobiCpuSolver> {
  const info = findSolver(id)!;
  // each solver at its defaults for the scene (its contact defaults on a scene with contacts)
  return (await info.create(world, resolveOptions(info, { sleep: 1, ...options }, world), undefined as never)) as unknown as JacobiCpuSolver;
}

// measured (sleep on, 55 boxes, each solver at its defaults for the scene): asleep after softstep-cpu
// 0.58 s, pgs-cpu, si-soft-cpu, gs-cpu (4 substeps, its contact defaults) and xpbd-cpu 0.53 s, jacobi-cpu
// 0.82 s; rapier (its own rule) 0.52 s
const SLEEP_BY = 3; // s: the bound the test holds them to

/**
 * Every CPU contact solver, by the same rule (collision/islands.ts). jacobi-cpu too since its contacts are
 * the contact solver's mass-split Jacobi variant (at its contact defaults, 4 substeps: asleep at 0.82 s;
 * on block Jacobi contact rows it diverged on a pyramid at frame 4 and had no pile to put to sleep).
 */
const SLEEPERS = ['softstep-cpu', 'pgs-cpu', 'si-soft-cpu', 'gs-cpu', 'jacobi-cpu', 'xpbd-cpu'];

/** The top box's height after `frames` frames with sleeping off: where the solver holds the pile awake. */
async function topAwake(id: string, frames: number): Promise<number> {
  const s = await make(id, pyramid(), { sleep: 0 });
  await s.step(frames);
  return s.w.position[3 * (s.w.bodyCount - 1) + 1];
}

for (const id of SLEEPERS) {
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
    // the pile stands: the top box is where the same solver holds it with sleeping off after as many
    // frames (10 boxes of 2 × 0.5 m: centre at 9.5 m, less the solver's own settling: si-soft-cpu's
    // 15 Hz contact springs sag it 8 cm), within 1 cm: falling asleep froze the pile as it stood
    const top = s.w.bodyCount - 1;
    const awakeTop = await topAwake(id, frames);
    assert.ok(Math.abs(s.w.position[3 * top + 1] - awakeTop) < 0.01, `top box at ${s.w.position[3 * top + 1]}, awake ${awakeTop}`);
    assert.ok(Math.abs(awakeTop - 9.5) < 0.1, `the pile stands (top box at ${awakeTop} m)`);
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
    // sphere r = 0.5 m, 1000 kg/m³, its bottom `drop` m above the top box's top face (y = 10 m), over
    // it; it arrives after SLEEP_BY, when every solver's pyramid sleeps (2.52 s under xpbd-cpu before
    // its dynamic friction was solved per manifold: the drop height leaves room for a slow sleeper)
    const r = 0.5, drop = 50, g = 9.81;
    const sphere = { shape: { type: 'sphere' as const, radius: r }, density: 1000, position: [0, 10 + drop + r, 0] as [number, number, number] };
    const s = await make(id, pyramid([sphere]));
    const dt = s.options.dt;
    const arrival = Math.sqrt((2 * drop) / g); // free fall from rest: drop = ½ g t²  (3.19 s)
    assert.ok(arrival > SLEEP_BY);
    const ib = s.w.bodyCount - 1, top = ib - 1;
    let asleepAt = -1, wokeAt = -1, frame = 0, rowsAfter = 0;
    let topBefore = 0, topMoved = 0, rowsPile = 0;
    while (frame * dt < arrival + 0.5) {
      await s.step(1);
      frame++;
      const awake = s.awakeBodyCount();
      if (asleepAt < 0 && awake > 1) rowsPile = s.cost().rowSolvesPerFrame; // the pile awake, before it slept
      if (asleepAt < 0 && awake === 1) {
        asleepAt = frame * dt; // only the falling sphere is awake
        topBefore = s.w.position[3 * top + 1];
      }
      if (asleepAt >= 0 && wokeAt < 0 && awake > 1) {
        wokeAt = frame * dt;
        rowsAfter = s.cost().rowSolvesPerFrame;
      }
      if (wokeAt > 0) topMoved = Math.max(topMoved, Math.abs(s.w.position[3 * top + 1] - topBefore));
    }
    assert.ok(asleepAt > 0 && asleepAt < arrival, `the pyramid slept (${asleepAt} s) before the sphere arrived (${arrival.toFixed(3)} s)`);
    assert.ok(wokeAt > 0, 'the pyramid woke');
    // it wakes by the speculative contact, at most a frame or two before the touch
    assert.ok(wokeAt > arrival - 0.1 && wokeAt < arrival + 0.1, `woke at ${wokeAt}, arrival ${arrival.toFixed(3)}`);
    // the pile's own contacts (pairs of sleepers are not looked at while asleep) are found again in
    // the frame it wakes: its first awake frame solves at least the rows it solved before sleeping
    assert.ok(rowsAfter >= rowsPile && rowsPile > 0, `rows once awake ${rowsAfter}, before sleeping ${rowsPile}`);
    // (the largest excursion after waking: under xpbd-cpu the pile springs back to within 0.1 mm)
    assert.ok(topMoved > 1e-3, `the top box moved under the impact (${topMoved} m at most)`);
    console.log(`${id}: pyramid asleep at ${asleepAt.toFixed(3)} s, woken at ${wokeAt.toFixed(3)} s (arrival ${arrival.toFixed(3)} s), rows/frame then ${rowsAfter}`);
  });
}

test(`rapier (its own sleeping rule): the base-10 pyramid falls asleep within ${SLEEP_BY} s and stays put; a sphere dropped on it wakes it`, async () => {
  const r = 0.5, drop = 50, g = 9.81;
  const sphere = { shape: { type: 'sphere' as const, radius: r }, density: 1000, position: [0, 10 + drop + r, 0] as [number, number, number] };
  const world = pyramid([sphere]);
  const info = findSolver('rapier')!;
  const s = await info.create(world, resolveOptions(info, { sleep: 1 }));
  const dynamic = world.bodies.map((b) => !b.fixed);
  const dt = s.options.dt, arrival = Math.sqrt((2 * drop) / g);
  const top = world.bodies.length - 2;
  let asleepAt = -1, wokeAt = -1, frame = 0, topAsleep = 0, topMovedWhileAsleep = 0;
  while (frame * dt < arrival + 0.5) {
    await s.step(1);
    frame++;
    const snap = await s.snapshot();
    const awake = awakeBodies(snap, dynamic);
    if (asleepAt < 0 && awake === 1) {
      asleepAt = frame * dt; // only the falling sphere is awake
      topAsleep = snap.position[3 * top + 1];
    }
    if (asleepAt >= 0 && wokeAt < 0) {
      if (awake > 1) wokeAt = frame * dt;
      else topMovedWhileAsleep = Math.max(topMovedWhileAsleep, Math.abs(snap.position[3 * top + 1] - topAsleep));
    }
  }
  s.destroy();
  assert.ok(asleepAt > 0 && asleepAt < SLEEP_BY, `the pyramid slept (${asleepAt} s) within ${SLEEP_BY} s`);
  assert.ok(Math.abs(topAsleep - 9.5) < 0.05, `the pile stands (top box at ${topAsleep} m)`);
  assert.equal(topMovedWhileAsleep, 0, 'nothing moves while asleep');
  assert.ok(wokeAt > arrival - 0.1 && wokeAt < arrival + 0.1, `woke at ${wokeAt}, arrival ${arrival.toFixed(3)}`);
  console.log(`rapier: pyramid asleep at ${asleepAt.toFixed(3)} s, woken at ${wokeAt.toFixed(3)} s (arrival ${arrival.toFixed(3)} s)`);
});

test('--sleep 0: nothing sleeps', async () => {
  const s = await make('softstep-cpu', pyramid(), { sleep: 0 });
  assert.equal(s.sleeping, null);
  await s.step(60); // 1 s: past the 0.58 s the same pile falls asleep in with sleep on
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

/*
 * A box (half extent 0.5 m) released at rest with its bottom 1 m above the ground (the `single-box`
 * scene), or thrown up at g·dt so that one step later it stands at the top of its flight with v = 0:
 * it must not fall asleep before it has landed (its bottom within 1 cm of the ground, or below:
 * at dt = 0.5 s the contact solvers let it sink through before pushing it out, which is collision's
 * matter, not sleeping's), under every CPU contact solver, at dt = 0.5 s (one frame is a whole
 * TIME_TO_SLEEP: before the fix every solver put it to sleep hanging 1 m up, "all asleep from frame 1"),
 * at 1/60 s and at 1 ms (where a body at rest under g stays below 0.05 m/s for 5 ms). At 1/60 s it
 * then falls asleep on the ground within 2.5 s (sleeping still works for a body at rest).
 */
const CONTACT_SLEEPERS = ['softstep-cpu', 'pgs-cpu', 'si-soft-cpu', 'gs-cpu', 'jacobi-cpu', 'xpbd-cpu'];

function boxInAir(upward: number): WorldDesc {
  return {
    gravity: [0, -9.81, 0],
    bodies: [
      { shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] },
      { shape: { type: 'box', halfExtents: [0.5, 0.5, 0.5] }, density: 1000, position: [0, 1.5, 0], linearVelocity: [0, upward, 0] },
    ],
    constraints: [],
  };
}

for (const id of CONTACT_SLEEPERS) {
  test(`${id}: a box released in the air, or at the top of a throw, does not fall asleep before it lands (dt 0.5 s, 1/60 s, 1 ms)`, async () => {
    for (const [dt, seconds] of [[0.5, 6], [1 / 60, 2.5], [1e-3, 0.6]]) {
      for (const upward of [0, 9.81 * dt]) {
        const s = await make(id, boxInAir(upward), { dt });
        const frames = Math.round(seconds / dt);
        let landedAt = -1, asleepAt = -1;
        for (let f = 1; f <= frames; f++) {
          await s.step(1);
          const snap = await s.snapshot();
          if (landedAt < 0 && snap.position[4] - 0.5 <= 0.01) landedAt = f;
          if (asleepAt < 0 && snap.asleep?.[1]) asleepAt = f;
        }
        s.destroy();
        const what = `dt ${dt.toPrecision(3)} s, thrown up at ${upward.toFixed(3)} m/s`;
        if (asleepAt > 0) assert.ok(landedAt > 0 && landedAt <= asleepAt, `${what}: asleep at frame ${asleepAt}, landed at ${landedAt} (-1: never)`);
        if (dt === 1 / 60) assert.ok(asleepAt > 0, `${what}: the box on the ground falls asleep within ${seconds} s`);
      }
    }
  });
}
