/**
 * The joints on the constraint rows (src/rows/): distance (rod and rope), hinge (with limits) and
 * fixed, under every CPU rigid solver that takes them. Each test checks one physical fact,
 * measured from the state by the metrics (src/metrics/metrics.ts, written independently of the
 * rows), with its tolerance stated beside it.
 *
 * Settings: "the velocity-level solvers with substeps" run at their default iterations (8) with
 * 4 substeps (h = 1/240 s); XPBD at its defaults (1 iteration × 10 substeps); AVBD at its defaults
 * (one step of 10 iterations per frame, h = 1/60 s: the paper's and its demos' setting).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type Solver, type SolverOptions } from '../src/solvers/solver.js';
import { MetricsContext } from '../src/metrics/metrics.js';
import { massProperties, type WorldDesc } from '../src/model/world.js';

const g = 9.81;
const VELOCITY_SOLVERS = ['jacobi-cpu', 'gs-cpu', 'global-cpu'];
const ALL = [...VELOCITY_SOLVERS, 'xpbd-cpu', 'avbd-cpu'];

function options(id: string): SolverOptions {
  const info = findSolver(id)!;
  return resolveOptions(info, id === 'xpbd-cpu' || id === 'avbd-cpu' ? {} : { substeps: 4 });
}

async function make(id: string, world: WorldDesc, asked: Partial<SolverOptions> = {}): Promise<Solver> {
  const info = findSolver(id)!;
  const why = info.unsupported?.(world) ?? null;
  assert.equal(why, null, `${id} should take this scene`);
  return info.create(world, { ...options(id), ...asked });
}

/** Steps frame by frame, calling `each` with the snapshot and its metrics. */
async function run(solver: Solver, world: WorldDesc, frames: number, each: (s: Awaited<ReturnType<Solver['snapshot']>>, m: ReturnType<MetricsContext['measure']>) => void) {
  const metrics = new MetricsContext(world);
  for (let f = 0; f < frames; f++) {
    await solver.step(1);
    const s = await solver.snapshot();
    each(s, metrics.measure(s));
  }
  solver.destroy();
}

// --- distance: a rope that goes slack and is caught -----------------------------------------------

/*
 * A bead on a rope (maxLength 1.5 m) to a world point 1 m above it, thrown up and sideways so the
 * rope goes slack. While slack the rope's row is apart (C > 0) and its λ stays clamped at 0, so the
 * bead must follow the same free flight as a bead with no rope at all, to the last bit (the same
 * integrator, nothing added). When the rope is taut it must catch the bead: the stretch beyond
 * maxLength stays below 1 cm (the figure) for the rest of the run.
 */
function ropeWorld(withRope: boolean): WorldDesc {
  return {
    gravity: [0, -g, 0],
    collisions: false, // joints only (contacts are test/contacts.test.ts)
    bodies: [{ shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [0, 1, 0], linearVelocity: [2, 3, 0] }],
    constraints: withRope ? [{ type: 'distance', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 2, 0], maxLength: 1.5 }] : [],
  };
}

for (const id of ['jacobi-cpu', 'gs-cpu', 'xpbd-cpu', 'avbd-cpu']) {
  test(`${id}: a slack rope follows the free parabola exactly, and catches the bead when taut (stretch < 1 cm)`, async () => {
    const frames = 180;
    const free: number[][] = [];
    await run(await make(id, ropeWorld(false)), ropeWorld(false), frames, (s) => free.push(Array.from(s.position.subarray(0, 3))));
    let slackFrames = 0, caught = false, worstStretch = 0;
    let frame = 0;
    await run(await make(id, ropeWorld(true)), ropeWorld(true), frames, (s) => {
      const x = s.position;
      const L = Math.hypot(x[0], x[1] - 2, x[2]);
      if (!caught && L < 1.5 - 1e-3 && free[frame] && Math.hypot(free[frame][0], free[frame][1] - 2, free[frame][2]) < 1.5 - 1e-3) {
        // slack at this frame in both runs: the same state, bit for bit
        assert.deepEqual(Array.from(x.subarray(0, 3)), free[frame], `frame ${frame + 1}: slack rope changed the flight`);
        slackFrames++;
      } else caught = true;
      if (caught) worstStretch = Math.max(worstStretch, L - 1.5);
      frame++;
    });
    assert.ok(slackFrames >= 20, `slack for ${slackFrames} frames only`);
    assert.ok(caught, 'the rope never went taut');
    assert.ok(worstStretch < 0.01, `${id}: stretch ${worstStretch} m beyond the rope's length`);
  });
}

// --- distance: a rod pendulum's period ------------------------------------------------------------

/*
 * A bead on a massless rod (distance, length L = 1 m) to a world point, its anchor at the bead's
 * centre: the bead's own rotation is free, so it is a simple pendulum, T = 2π √(L/g) (1 + θ₀²/16)
 * for amplitude θ₀ (the first correction of the elliptic integral). θ₀ = 0.1 rad. Within 1 %: the
 * integrators' period error at h ≤ 1/240 s is of order (ωh)² ≈ 1e-4.
 */
for (const id of ALL) {
  test(`${id}: a bead on a distance rod swings with the simple pendulum's period (1 %)`, async () => {
    const L = 1, theta0 = 0.1;
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      collisions: false, // joints only (contacts are test/contacts.test.ts)
      bodies: [{ shape: { type: 'sphere', radius: 0.05 }, density: 1000, position: [L * Math.sin(theta0), 2 - L * Math.cos(theta0), 0] }],
      constraints: [{ type: 'distance', bodyA: 0, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 2, 0], length: L }],
    };
    const crossings: number[] = [];
    let prev = world.bodies[0].position[0], t = 0;
    const dt = options(id).dt;
    await run(await make(id, world), world, 600, (s, m) => {
      const x = s.position[0];
      t += dt;
      if (prev > 0 && x <= 0) crossings.push(t - dt + (prev / (prev - x)) * dt);
      prev = x;
      assert.ok(m.maxViolation < 5e-3, `rod stretched ${m.maxViolation} m`);
    });
    const T = (crossings[crossings.length - 1] - crossings[0]) / (crossings.length - 1);
    const expected = 2 * Math.PI * Math.sqrt(L / g) * (1 + theta0 ** 2 / 16);
    assert.ok(Math.abs(T / expected - 1) < 0.01, `${id}: T = ${T} s, expected ${expected} s`);
  });
}

// --- hinge: a box swings about its axis as a physical pendulum ---------------------------------

/*
 * A box (half extents a = 0.1, b = 0.3, c = 0.05 m) hung from a world hinge whose axis is z, the
 * pivot d = 0.4 m above its centre: a physical pendulum about z, T = 2π √(I_p / (m g d)) (1 + θ₀²/16)
 * with I_p = I_zz + m d², I_zz = m (a² + b²)/3. θ₀ = 0.1 rad, within 1 %. The box also starts with a
 * spin about x and y (2 and 3 rad/s), which the hinge's two angular rows must take out: after 1 s the
 * box's z axis stays within 1 mrad of the hinge axis (the metrics' angular violation).
 */
for (const id of ALL) {
  test(`${id}: a box on a hinge swings with the physical pendulum's period (1 %), and a spin off the axis is removed (< 1 mrad)`, async () => {
    const [a, b, c] = [0.1, 0.3, 0.05];
    const d = 0.4, theta0 = 0.1;
    const pivot = [0, 2, 0];
    const q = [0, 0, Math.sin(theta0 / 2), Math.cos(theta0 / 2)];
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      collisions: false, // joints only (contacts are test/contacts.test.ts)
      bodies: [
        {
          shape: { type: 'box', halfExtents: [a, b, c] },
          density: 500,
          position: [pivot[0] + d * Math.sin(theta0), pivot[1] - d * Math.cos(theta0), 0],
          orientation: q as [number, number, number, number],
          angularVelocity: [2, 3, 0],
        },
      ],
      constraints: [{ type: 'hinge', bodyA: 0, bodyB: null, anchorA: [0, d, 0], anchorB: pivot as [number, number, number], axisA: [0, 0, 1], axisB: [0, 0, 1] }],
    };
    const m = massProperties(world.bodies[0]).mass;
    const Ip = (m * (a * a + b * b)) / 3 + m * d * d;
    const expected = 2 * Math.PI * Math.sqrt(Ip / (m * g * d)) * (1 + theta0 ** 2 / 16);
    const crossings: number[] = [];
    let prev = world.bodies[0].position[0], t = 0, worstLate = 0;
    const dt = options(id).dt;
    await run(await make(id, world), world, 600, (s, met) => {
      const x = s.position[0];
      t += dt;
      if (prev > 0 && x <= 0) crossings.push(t - dt + (prev / (prev - x)) * dt);
      prev = x;
      if (t > 1) worstLate = Math.max(worstLate, met.maxAngularViolation ?? NaN);
    });
    const T = (crossings[crossings.length - 1] - crossings[0]) / (crossings.length - 1);
    assert.ok(Math.abs(T / expected - 1) < 0.01, `${id}: T = ${T} s, expected ${expected} s`);
    assert.ok(worstLate < 1e-3, `${id}: axis misaligned by ${worstLate} rad after 1 s`);
  });
}

// --- hinge limits -------------------------------------------------------------------------------

/*
 * A box held level from a world hinge (axis z) at its end, released: gravity turns it about z in
 * the negative sense. The hinge angle is B's (here the world's) rotation relative to A (the box)
 * about axisA, so it is minus the box's angle; with upperAngle = 0.5 rad the box must stop at
 * −0.5 rad: over the last second (settled) its angle stays within 10 mrad of −0.5 rad, and it never
 * passes the limit by more than 10 mrad (the figure).
 */
for (const id of ALL.filter((s) => s !== 'global-cpu')) {
  test(`${id}: a hinge with a limit stops at it (within 10 mrad)`, async () => {
    const limit = -0.5;
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      collisions: false, // joints only (contacts are test/contacts.test.ts)
      bodies: [{ shape: { type: 'box', halfExtents: [0.3, 0.05, 0.05] }, density: 500, position: [0.3, 2, 0] }],
      constraints: [{ type: 'hinge', bodyA: 0, bodyB: null, anchorA: [-0.3, 0, 0], anchorB: [0, 2, 0], axisA: [0, 0, 1], axisB: [0, 0, 1], upperAngle: -limit }],
    };
    const angles: number[] = [];
    await run(await make(id, world), world, 180, (s) => {
      // the box's x axis in the world: angle about z from +x
      const [qx, qy, qz, qw] = s.orientation;
      const ex = 1 - 2 * (qy * qy + qz * qz), ey = 2 * (qx * qy + qz * qw);
      angles.push(Math.atan2(ey, ex));
    });
    const beyond = Math.max(...angles.map((a) => limit - a));
    const late = angles.slice(-60);
    assert.ok(beyond < 0.01, `${id}: passed the limit by ${beyond} rad`);
    for (const a of late) assert.ok(Math.abs(a - limit) < 0.01, `${id}: settled at ${a} rad, limit ${limit}`);
  });
}

// --- fixed: a cantilever --------------------------------------------------------------------------

/*
 * Two boxes welded end to end, the first welded to the world, held out horizontally against gravity:
 * a cantilever. The weld's angular rows must hold it: the angular violation (the metrics' relative
 * rotation angle of each weld) stays below 5 mrad over 3 s, and the linear one below 5 mm.
 */
for (const id of ['gs-cpu', 'xpbd-cpu', 'global-cpu', 'jacobi-cpu', 'avbd-cpu']) {
  test(`${id}: fixed joints hold a two-box cantilever (angular violation < 5 mrad)`, async (t) => {
    const box = { type: 'box' as const, halfExtents: [0.25, 0.05, 0.05] as [number, number, number] };
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      collisions: false, // joints only (contacts are test/contacts.test.ts)
      bodies: [
        { shape: box, density: 500, position: [0.25, 2, 0] },
        { shape: box, density: 500, position: [0.75, 2, 0] },
      ],
      constraints: [
        { type: 'fixed', bodyA: 0, bodyB: null, anchorA: [-0.25, 0, 0], anchorB: [0, 2, 0] },
        { type: 'fixed', bodyA: 0, bodyB: 1, anchorA: [0.25, 0, 0], anchorB: [-0.25, 0, 0] },
      ],
    };
    let worstAngle = 0, worstLinear = 0;
    await run(await make(id, world), world, 180, (_s, m) => {
      worstAngle = Math.max(worstAngle, m.maxAngularViolation ?? NaN);
      worstLinear = Math.max(worstLinear, m.maxViolation);
    });
    t.diagnostic(`${id}: worst angular ${worstAngle.toExponential(2)} rad, linear ${worstLinear.toExponential(2)} m`);
    assert.ok(worstAngle < 5e-3, `${id}: welds turned by ${worstAngle} rad`);
    assert.ok(worstLinear < 5e-3, `${id}: welds opened by ${worstLinear} m`);
  });
}

test('global-cpu refuses one-sided rows (a rope, a hinge limit) with the reason, and takes the equality joints', () => {
  const info = findSolver('global-cpu')!;
  assert.match(info.unsupported!(ropeWorld(true)) ?? '', /constraints\[0\] has a one-sided row/);
  assert.equal(info.unsupported!(ropeWorld(false)), null);
});

// --- constraint sets that change between steps -------------------------------------------------

/*
 * A chain of three beads hanging from a fixed sphere. After 1 s at rest, the joint between beads 1
 * and 2 is removed: the two lower beads, still joined to each other, are then a free system, and
 * their centre of mass must fall with g: over the next 0.25 s, from rest, by the solvers' integrator
 * (v += h g, x += h v per substep h, n substeps) exactly g h² n(n+1)/2 = ½ g t² (1 + 1/n), to 0.5 % (the
 * chain hangs still after 1 s: what is left of its motion is far below that). The joints that stay keep their
 * λ across the change (their rows' keys persist: the layout carries λ by key), and a joint added
 * between steps starts at λ = 0 and holds: a rope added back from bead 1 to bead 2 catches them
 * (stretch < 1 cm).
 */
function beadChain(): WorldDesc {
  const bead = { shape: { type: 'sphere' as const, radius: 0.05 }, density: 1000 };
  return {
    gravity: [0, -g, 0],
    collisions: false, // joints only (contacts are test/contacts.test.ts)
    bodies: [
      { shape: { type: 'sphere', radius: 0.05 }, fixed: true, position: [0, 2, 0] },
      { ...bead, position: [0, 1.8, 0] },
      { ...bead, position: [0, 1.6, 0] },
      { ...bead, position: [0, 1.4, 0] },
    ],
    constraints: [0, 1, 2].map((i) => ({ type: 'point' as const, bodyA: i, bodyB: i + 1, anchorA: [0, -0.1, 0] as [number, number, number], anchorB: [0, 0.1, 0] as [number, number, number] })),
  };
}

for (const id of ['jacobi-cpu', 'gs-cpu', 'global-cpu', 'xpbd-cpu']) {
  test(`${id}: joints removed and added between steps: the freed part falls with g, persisting rows keep their λ, a new one starts at 0`, async () => {
    const world = beadChain();
    const solver = (await make(id, world)) as Solver & {
      addConstraint(c: WorldDesc['constraints'][number]): number;
      removeConstraint(id: number): void;
      rowSolver: import('../src/rows/block-solver.js').RowBlockSolver;
      relayout(): void;
    };
    await solver.step(60);
    const lambdaByKey = () => {
      const rows = solver.rowSolver.rows;
      return new Map(Array.from({ length: rows.count }, (_, r) => [rows.key[r], rows.lambda[r]] as const));
    };
    const before = lambdaByKey();
    solver.removeConstraint(1);
    assert.equal(solver.constraintCount, 2);
    solver.relayout();
    const after = lambdaByKey();
    if (id !== 'xpbd-cpu') {
      // rows of joints 0 and 2 (keys 0..2 and 16..18) keep their λ; joint 1's are gone
      for (const key of [0, 1, 2, 16, 17, 18]) assert.ok(after.get(key) === before.get(key), `key ${key}: λ ${before.get(key)} → ${after.get(key)}`);
      assert.ok(Math.abs(before.get(1)!) > 1, 'the chain carries its weight (the vertical row of joint 0)');
    }
    for (const key of [8, 9, 10]) assert.equal(after.has(key), false);
    const snap0 = await solver.snapshot();
    const com = (s: typeof snap0) => (s.position[7] + s.position[10]) / 2;
    const y0 = com(snap0);
    const frames = 15;
    await solver.step(frames);
    const t = frames * solver.options.dt, n = frames * solver.options.substeps;
    const fall = y0 - com(await solver.snapshot());
    const expected = 0.5 * g * t * t * (1 + 1 / n);
    assert.ok(Math.abs(fall / expected - 1) < 0.005, `${id}: fell ${fall} m in ${t} s, ½gt²(1 + 1/n) = ${expected}`);
    // a rope added back catches the lower beads
    const rope = solver.addConstraint({ type: 'distance', bodyA: 1, bodyB: 2, anchorA: [0, -0.1, 0], anchorB: [0, 0.1, 0], maxLength: 0.5 });
    assert.equal(typeof rope, 'number');
    solver.relayout();
    const rows = solver.rowSolver.rows;
    for (let r = 0; r < rows.count; r++) if (Math.floor(rows.key[r] / 8) === rope) assert.equal(rows.lambda[r], 0, 'a new row starts at λ = 0');
    let worst = 0;
    for (let f = 0; f < 120; f++) {
      await solver.step(1);
      const x = (await solver.snapshot()).position;
      const L = Math.hypot(x[3] - x[6], x[4] - 0.1 - (x[7] + 0.1), x[5] - x[8]);
      worst = Math.max(worst, L - 0.5);
    }
    assert.ok(worst < 0.01, `${id}: rope stretched ${worst} m`);
    solver.destroy();
  });
}

// --- every row's Jacobian is the derivative of its C -------------------------------------------

/*
 * For each joint type, at a pose away from the start (every C ≠ 0), move the two bodies along a
 * random velocity (v, ω) for ε = 1e-7 s (positions by x += ε v, orientations by the solvers' own
 * q ← normalise(q + ½ε(0, ω)⊗q)) and compare (C(ε) − C(0))/ε with J·(v, ω): they agree to O(ε)
 * (~1e-6 here; asserted 1e-5 relative to |J||V|) for the point, distance, fixed and hinge-alignment
 * rows at any pose, and for the hinge's limit rows while its axes are aligned (their
 * θ̇ = (ω_B − ω_A)·a is exact there; the alignment rows hold them so).
 */
test('every row of every joint type has J = ∂C/∂(x, θ): finite differences of C agree with J·V', async () => {
  const { RowSet, JACOBIAN_STRIDE } = await import('../src/rows/rows.js');
  const { constraintTypes } = await import('../src/rows/constraint-types.js');
  const { compileWorld } = await import('../src/model/compiled.js');
  const { integrateOrientation } = await import('../src/rigid/quat.js');
  let seed = 12345;
  const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
  const box = { type: 'box' as const, halfExtents: [0.2, 0.1, 0.3] as [number, number, number] };
  for (const aligned of [false, true]) {
    const world: WorldDesc = {
      gravity: [0, 0, 0],
      collisions: false,
      bodies: [
        { shape: box, density: 1, position: [0, 0, 0], orientation: [0.1, 0.2, 0.3, 0.9] },
        { shape: box, density: 1, position: [0.5, 0.1, 0], orientation: [0.1, 0.2, 0.3, 0.9] },
      ],
      constraints: [
        { type: 'point', bodyA: 0, bodyB: 1, anchorA: [0.2, 0, 0], anchorB: [-0.2, 0.1, 0] },
        { type: 'distance', bodyA: 0, bodyB: 1, anchorA: [0.2, 0, 0], anchorB: [-0.2, 0.1, 0], length: 0.3 },
        { type: 'distance', bodyA: 0, bodyB: 1, anchorA: [0.2, 0, 0], anchorB: [-0.2, 0.1, 0], minLength: 0.1, maxLength: 2 },
        { type: 'hinge', bodyA: 0, bodyB: 1, anchorA: [0.2, 0, 0], anchorB: [-0.2, 0.1, 0], axisA: [0, 0, 1], axisB: [0, 0, 1], lowerAngle: -0.3, upperAngle: 0.4 },
        { type: 'fixed', bodyA: 0, bodyB: 1, anchorA: [0.2, 0, 0], anchorB: [-0.2, 0.1, 0] },
      ],
    };
    const w = compileWorld(world);
    // away from the start: B turned (about A's hinge axis only when `aligned`) and moved
    const axisWorld = [0, 0, 0];
    {
      const [x, y, z, s] = [0.1, 0.2, 0.3, 0.9].map((c) => c / Math.hypot(0.1, 0.2, 0.3, 0.9));
      axisWorld[0] = 2 * (x * z + y * s); axisWorld[1] = 2 * (y * z - x * s); axisWorld[2] = 1 - 2 * (x * x + y * y);
    }
    if (aligned) integrateOrientation(w.orientation, 4, 0.7 * axisWorld[0], 0.7 * axisWorld[1], 0.7 * axisWorld[2], 1);
    else integrateOrientation(w.orientation, 4, 0.3, -0.2, 0.5, 1);
    w.position[3] += 0.05;
    for (let ic = 0; ic < w.constraintCount; ic++) {
      const type = constraintTypes[w.kind[ic]];
      const rows = new RowSet();
      type.layout(w, ic, rows, 0, 0);
      const pose = { position: w.position.slice(), orientation: w.orientation.slice() };
      type.evaluate(w, ic, pose, rows, 0);
      const C0 = rows.error.slice(0, rows.count), J = rows.jacobian.slice(0, JACOBIAN_STRIDE * rows.count);
      const V = Array.from({ length: 12 }, rand); // v_A, ω_A, v_B, ω_B
      const eps = 1e-7;
      for (let b = 0; b < 2; b++) {
        for (let k = 0; k < 3; k++) pose.position[3 * b + k] += eps * V[6 * b + k];
        integrateOrientation(pose.orientation, 4 * b, V[6 * b + 3], V[6 * b + 4], V[6 * b + 5], eps);
      }
      type.evaluate(w, ic, pose, rows, 0);
      for (let r = 0; r < rows.count; r++) {
        const limitRow = type.name === 'hinge' && r >= 5;
        if (limitRow && !aligned) continue;
        const fd = (rows.error[r] - C0[r]) / eps;
        let jv = 0, scale = 0;
        for (let k = 0; k < 12; k++) (jv += J[JACOBIAN_STRIDE * r + k] * V[k]), (scale += Math.abs(J[JACOBIAN_STRIDE * r + k] * V[k]));
        assert.ok(Math.abs(fd - jv) <= 1e-5 * Math.max(scale, 1e-3), `${type.name} row ${r}${aligned ? ' (aligned)' : ''}: ∂C/∂t ${fd} against J·V ${jv}`);
      }
    }
  }
});
