/**
 * The contact core: persistent manifolds (collision/manifolds.ts), the contact-solver module
 * (contacts/contact-solver.ts) and the sequential solvers on it (softstep-cpu, pgs-cpu, si-soft-cpu).
 *
 * Physical facts checked, each with its tolerance:
 *   - a box at rest keeps one manifold of 4 points from frame to frame (the same record), and the normal
 *     forces stored on it sum to its weight m g: at rest the contacts cancel gravity (1 %: the soft
 *     contact's residual motion at rest is below 1e-4 of g);
 *   - cubes of 1 cm, 2 cm, 10 cm and 1 m rest flat and stack three high (sleeping off, 3 s): no box tilts
 *     more than 1° (a face-down cube has no torque to turn it; the solvers' noise measured ≤ 0.6°), none
 *     drifts sideways more than 5 % of its side (measured ≤ 1.7 %), and the top box sinks less than a
 *     third of its side (no merging; what it does sink is the contact spring's sag, g/ω² per weight
 *     carried, which does not scale with size: 28 % of a 1 cm side under si-soft-cpu's 30 Hz);
 *   - a 10-box stack of 1 m boxes holds awake at each solver's defaults: no box moves more than 1 cm
 *     from 1 s to 10 s (issue 21's target; measured 1.7 mm pgs-cpu, 2.7 mm si-soft-cpu, 3.1 mm softstep-cpu).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadScene } from '../src/scenes/load.js';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import type { WorldDesc } from '../src/model/world.js';
import type { SoftStepCpuSolver } from '../src/solvers/softstep/cpu.js';

const SOLVERS = ['softstep-cpu', 'pgs-cpu', 'si-soft-cpu'];

async function make(id: string, world: WorldDesc, options: Record<string, number> = {}) {
  const info = findSolver(id)!;
  return info.create(world, resolveOptions(info, { sleep: 0, ...options }));
}

test('a box at rest keeps one 4-point manifold record, and its stored normal forces sum to m g (1 %)', async () => {
  const world = loadScene('vertical-stack', { boxes: 1, size: 0.5, offset: 0 }).world as WorldDesc;
  const solver = (await make('softstep-cpu', world)) as unknown as SoftStepCpuSolver;
  await solver.step(60);
  const store = solver.collision!.manifolds;
  const slot = store.find(0, 1) >= 0 ? store.find(0, 1) : store.find(1, 0);
  assert.equal(store.active, 1);
  assert.ok(slot >= 0);
  for (let f = 0; f < 30; f++) {
    await solver.step(1);
    assert.equal(store.find(store.bodyA[slot], store.bodyB[slot]), slot, 'the pair keeps its record');
    assert.equal(store.pointCount[slot], 4);
  }
  let sum = 0;
  for (let k = 0; k < 4; k++) sum += store.normalImpulse[4 * slot + k];
  const weight = solver.w.mass[1] * Math.hypot(...solver.w.gravity);
  assert.ok(Math.abs(sum - weight) < 0.01 * weight, `Σλ_n ${sum} N against m g ${weight} N`);
});

for (const id of SOLVERS) {
  test(`${id}: cubes of 1 cm, 2 cm, 10 cm and 1 m rest flat and stack three high (sleeping off)`, async () => {
    for (const half of [0.005, 0.01, 0.05, 0.5]) {
      for (const boxes of [1, 3]) {
        const world = loadScene('vertical-stack', { boxes, size: half, offset: 0 }).world as WorldDesc;
        const solver = await make(id, world);
        const start = Float64Array.from((await solver.snapshot()).position);
        await solver.step(180);
        const s = await solver.snapshot();
        for (let i = 1; i <= boxes; i++) {
          const tilt = (2 * Math.acos(Math.min(1, Math.abs(s.orientation[4 * i + 3]))) * 180) / Math.PI;
          const drift = Math.hypot(s.position[3 * i] - start[3 * i], s.position[3 * i + 2] - start[3 * i + 2]);
          const sink = start[3 * i + 1] - s.position[3 * i + 1];
          const what = `${2 * half * 100} cm × ${boxes}, box ${i}`;
          assert.ok(tilt < 1, `${what}: tilted ${tilt.toFixed(2)}°`);
          assert.ok(drift < 0.05 * 2 * half, `${what}: drifted ${(drift * 1000).toFixed(3)} mm`);
          assert.ok(sink < (2 * half) / 3, `${what}: sank ${(sink * 1000).toFixed(3)} mm`);
        }
      }
    }
  });

  test(`${id}: a 10-box stack holds awake at the defaults (< 1 cm of any box from 1 s to 10 s)`, async () => {
    const world = loadScene('vertical-stack', { boxes: 10 }).world as WorldDesc;
    const solver = await make(id, world);
    const dt = solver.options.dt;
    await solver.step(Math.round(1 / dt));
    const start = Float64Array.from((await solver.snapshot()).position);
    await solver.step(Math.round(9 / dt));
    const s = await solver.snapshot();
    let worst = 0;
    for (let i = 0; i < s.position.length / 3; i++) worst = Math.max(worst, Math.hypot(s.position[3 * i] - start[3 * i], s.position[3 * i + 1] - start[3 * i + 1], s.position[3 * i + 2] - start[3 * i + 2]));
    assert.ok(worst < 0.01, `worst creep ${(worst * 1000).toFixed(2)} mm`);
  });
}
