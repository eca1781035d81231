/**
 * Large steps do not tunnel (collision/pipeline.ts speculative margin; collision/pairs.ts box–plane):
 * a 1 m box released at rest 1 m above the ground at dt = 0.5 s falls ½ g dt² = 1.23 m in its first
 * frame from speed 0. The margin used to be h·(|v| + |ω| R) + 2 cm — nothing for a body at rest — so the
 * box was first seen 0.53–1.45 m into the ground (pgs-cpu, gs-cpu, si-soft-cpu, softstep-cpu,
 * jacobi-cpu) and pushed out over several frames; with ½ |g| h in the speed it is seen while falling and
 * lands. With the larger margin the box's far side came within it too, and the box–plane reduction to
 * four points kept top vertices (they project onto the bottom ones): the box tilted and sank 19 cm; only
 * vertices within the least half extent of the deepest are kept now.
 * Bound: the deepest point is at most 3 cm under the ground at any frame, and the box ends at rest on its
 * face (centre height 0.5 m within 3 cm, tilt < 0.01 rad). 3 cm covers the soft contact's sag: at
 * h = 0.125 s its spring is capped at a quarter of the substep rate (2 Hz, twice that against the fixed
 * ground), g/ω² = 9.81/(2π·4)² = 1.6 cm (measured 1.66 cm under softstep-cpu); the rigid solvers
 * rest within their slop (0.6 mm). A tunnelling box is ≥ 0.5 m deep.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { MetricsContext } from '../src/metrics/metrics.js';

for (const id of ['softstep-cpu', 'pgs-cpu', 'si-soft-cpu', 'gs-cpu', 'jacobi-cpu', 'xpbd-cpu']) {
  test(`${id}: a box released 1 m above the ground at dt = 0.5 s lands on it, not through it`, async () => {
    const world = findRigidScene('single-box')!.build({});
    const info = findSolver(id)!;
    const s = await info.create(world, resolveOptions(info, { sleep: 0, dt: 0.5 }, world));
    const metrics = new MetricsContext(world);
    let deepest = 0;
    let last = await s.snapshot();
    for (let f = 1; f <= 12; f++) {
      await s.step(1);
      last = await s.snapshot();
      deepest = Math.max(deepest, metrics.measure(last).maxPenetration ?? 0);
    }
    assert.ok(deepest <= 0.03, `the box went ${deepest.toFixed(3)} m into the ground`);
    const i = last.bodyCount - 1;
    const y = last.position[3 * i + 1];
    assert.ok(Math.abs(y - 0.5) <= 0.03, `it ends with its centre at ${y.toFixed(3)} m (resting: 0.5 m)`);
    const q = last.orientation.subarray(4 * i, 4 * i + 4);
    const tilt = 2 * Math.acos(Math.min(1, Math.abs(q[3]))) ;
    assert.ok(tilt < 0.01 || Math.abs(tilt - Math.PI / 2) < 0.01, `it ends tilted by ${tilt.toFixed(3)} rad`);
    s.destroy();
  });
}
