/**
 * avbd-cpu (Augmented Vertex Block Descent, Giles et al. 2025): what sets it apart, each a physical
 * fact with its tolerance stated. The joint tests it shares with the other solvers are in
 * test/joints.test.ts (rope, rod and hinge periods, hinge limit, cantilever).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type SolverOptions } from '../src/solvers/solver.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import { findScene } from '../src/scenes/registry.js';
import { buildScene as build } from '../src/scenes/scene.js';
import type { WorldDesc } from '../src/model/world.js';
import { solveLdlt6 } from '../src/math/ldlt6.js';
import { BodyColouring, bodyColouringConflict } from '../src/model/body-colouring.js';

function buildScene(name: string, params: Record<string, number> = {}): WorldDesc {
  return build(findScene(name)!, params) as WorldDesc;
}

async function worstViolation(world: WorldDesc, asked: Partial<SolverOptions>, frames: number): Promise<number> {
  const info = findSolver('avbd-cpu')!;
  assert.equal(info.unsupported?.(world) ?? null, null);
  const solver = await info.create(world, resolveOptions(info, asked, world));
  const metrics = new MetricsContext(world);
  let worst = 0;
  for (let f = 0; f < frames; f++) {
    await solver.step(1);
    worst = Math.max(worst, metrics.measure(await solver.snapshot()).maxViolation);
  }
  solver.destroy();
  return worst;
}

/*
 * The paper's mass-ratio test: a light chain (5 beads of 0.52 kg) holding a ball 50,000 times
 * heavier (26.2 t), released 0.5 rad from the vertical, 10 s at the default 10 iterations of one
 * step per frame, at every default (the scale-free penalty schedule, cpu.ts). Every joint must stay
 * within 1 cm (the figure). The schedule measures each row's penalty against the heaviest body
 * its load path holds (the ball's M/h² = 9.4e7 N/m), which is what the paper's absolute β cannot do
 * with one number: at the paper's form with β_lin 1e6 the chain stretches 12 cm (measured).
 */
test('avbd-cpu holds the 50,000 : 1 mass-ratio pendulum within 1 cm over 10 s at the default iterations', async () => {
  const world = buildScene('mass-ratio-pendulum');
  const worst = await worstViolation(world, {}, 600);
  assert.ok(worst < 0.01, `joint violation ${worst} m`);
});

/*
 * A body whose joints are all satisfied and unloaded moves as a free body: a bead on a slack rope
 * is the same bits as without the rope (joints.test.ts); here the colouring: two dynamic bodies that
 * share a joint never share a colour, on a 10 × 10 joint grid (the paper's three-avbd finding: a
 * colour clash made a hard joint grid explode, so clashes must be zero).
 */
test('the body colouring has no clash on a joint grid (bodies of one colour share no joint)', () => {
  const world = buildScene('joint-grid');
  const n = world.bodies.length + 1;
  const inv = new Float64Array(n).fill(1);
  inv[n - 1] = 0;
  const ib0 = new Int32Array(world.constraints.length), ib1 = new Int32Array(world.constraints.length);
  world.constraints.forEach((c, k) => {
    ib0[k] = c.bodyA;
    ib1[k] = c.bodyB ?? n - 1;
  });
  const first = new Int32Array(n + 1);
  for (let k = 0; k < ib0.length; k++) for (const b of [ib0[k], ib1[k]]) if (inv[b] > 0) first[b + 1]++;
  for (let b = 0; b < n; b++) first[b + 1] += first[b];
  const fill = first.slice(0, n), items = new Int32Array(first[n]);
  for (let k = 0; k < ib0.length; k++) for (const b of [ib0[k], ib1[k]]) if (inv[b] > 0) items[fill[b]++] = k;
  const col = new BodyColouring();
  col.build(n, inv, first, items, ib0, ib1);
  assert.equal(bodyColouringConflict(col, ib0.length, ib0, ib1), -1);
  assert.ok(col.colourCount >= 2 && col.colourCount <= 8, `${col.colourCount} colours`);
  // every dynamic body is in exactly one colour
  assert.equal(col.start[col.colourCount], n - 1);
});

/*
 * The 6×6 LDLᵀ: on a random SPD matrix (A = B Bᵀ + I) the solve's residual ‖H x − f‖ is at the
 * level of rounding: below 1e-12 ‖f‖ for a condition number of order 1e2.
 */
test('the dense 6×6 LDLᵀ solves an SPD system to rounding', () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) - 0.5;
  for (let trial = 0; trial < 20; trial++) {
    const B = Array.from({ length: 36 }, rnd);
    const H = new Float64Array(36);
    for (let i = 0; i < 6; i++)
      for (let j = 0; j < 6; j++) {
        let s = i === j ? 1 : 0;
        for (let k = 0; k < 6; k++) s += B[6 * i + k] * B[6 * j + k];
        H[6 * i + j] = s;
      }
    const f = Float64Array.from({ length: 6 }, rnd);
    const x = f.slice(), Hc = H.slice();
    solveLdlt6(Hc, x);
    let r = 0, fn = 0;
    for (let i = 0; i < 6; i++) {
      let s = -f[i];
      for (let j = 0; j < 6; j++) s += H[6 * i + j] * x[j];
      r += s * s;
      fn += f[i] * f[i];
    }
    assert.ok(Math.sqrt(r) < 1e-12 * Math.sqrt(fn), `residual ${Math.sqrt(r)}`);
  }
});

/*
 * Restitution (cpu.ts header): Newton's impact law on the velocities the step starts from, then the step.
 * A sphere (r = 0.1 m, e = 0.5) 2 cm above the ground falling at ṽ = 3 m/s closes its gap within the frame
 * (s₀ + h ṽ_n = 0.02 − 0.05 < 0): the collision turns it to v⁺ = e ṽ = 1.5 m/s upward, and the step, with its
 * contact then opening (no force: C > 0, λ = 0), is the free implicit Euler step from there, x = y =
 * x⁻ + h v⁺ + h² g, so it leaves at v = v⁺ + h g = 1.5 − 9.81/60 m/s and stands at x⁻ + h v = 0.12 + 1.3365 h.
 * To rounding (1e-9 m/s, 1e-9 m: the step's numbers are of order 1, the f64 unit roundoff 1.1e-16).
 * The same sphere arriving at 0.05 m/s, below the restitution threshold (0.1 m/s), does not bounce: it
 * never moves upward faster than 1 mm/s (a hard contact stops it within the frame).
 */
test('avbd-cpu: a sphere with e = 0.5 struck at 3 m/s leaves at e ṽ + h g after the step (to rounding); one arriving below the threshold does not bounce', async () => {
  const info = findSolver('avbd-cpu')!;
  const world = (vy: number, y: number): WorldDesc => ({
    gravity: [0, -9.81, 0],
    bodies: [{ shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] }, { shape: { type: 'sphere', radius: 0.1 }, density: 1000, position: [0, y, 0], linearVelocity: [0, vy, 0], restitution: 0.5 }],
    constraints: [],
  });
  const struck = world(-3, 0.12);
  assert.equal(info.unsupported?.(struck) ?? null, null);
  const opts = resolveOptions(info, { sleep: 0 }, struck);
  assert.equal(opts.substeps, 1);
  const h = opts.dt;
  const solver = await info.create(struck, opts);
  await solver.step(1);
  const s = await solver.snapshot();
  const leave = 0.5 * 3 - 9.81 * h;
  assert.ok(Math.abs(s.linearVelocity[4] - leave) < 1e-9, `leaves at ${s.linearVelocity[4]} m/s, Newton's law and the step give ${leave}`);
  assert.ok(Math.abs(s.position[4] - (0.12 + leave * h)) < 1e-9, `at ${s.position[4]} m, expected ${0.12 + leave * h}`);
  solver.destroy();
  const slow = await info.create(world(-0.05, 0.1005), opts);
  let rise = -Infinity;
  for (let f = 0; f < 30; f++) {
    await slow.step(1);
    rise = Math.max(rise, (await slow.snapshot()).linearVelocity[4]);
  }
  slow.destroy();
  assert.ok(rise < 1e-3, `below the threshold it rose at ${rise} m/s`);
});

/*
 * A heavy landing does not drive a body deep into the ground. `rain` count=200 seed 1, frame 38: a
 * 20.8 kg box arriving at 5.9 m/s lands on a 1.7 kg sphere that sits on a 9.7 kg capsule (radius
 * 8.3 cm) on the ground plane. In the landing step's iterations the sandwiched sphere's contact forces
 * swing to 1e6 N; at one primal step the capsule's two ground rows were slack in the iterate (5.8 cm
 * apart to first order, λ = 0), so their k was left out of its Hessian, and the step moved the capsule
 * 16.8 cm down under 2.2e6 N over M/h² alone: it ended 23.8 cm into the ground (old code, measured).
 * The primal now takes a step again with the active piece of any slack row the step lands active
 * (cpu.ts primal). Measured over the first 45 frames (collision metric's detection, every pair):
 * avbd-cpu 3.3 cm; softstep-cpu 7.0 cm, Rapier 9.5 cm on the same run. Bound: 5 cm, 60 % of the
 * capsule's radius (no body sinks through most of itself), with room over the 3.3 cm for other
 * contacts of the pile; the old code's 23.8 cm fails it. ~2 s.
 */
test('avbd-cpu: a 20.8 kg box landing at 6 m/s on a light sphere on a capsule does not drive the capsule into the ground (rain, < 5 cm)', async () => {
  const world = buildScene('rain', { count: 200, seed: 1 });
  const info = findSolver('avbd-cpu')!;
  const solver = await info.create(world, resolveOptions(info, { sleep: 0 }, world));
  const metrics = new MetricsContext(world);
  let worst = 0, at = 0;
  for (let f = 1; f <= 45; f++) {
    await solver.step(1);
    const d = metrics.contactsOf(await solver.snapshot())!.maxPenetration;
    if (d > worst) (worst = d), (at = f);
  }
  solver.destroy();
  assert.ok(worst < 0.05, `deepest penetration ${(100 * worst).toFixed(1)} cm at frame ${at}`);
});
