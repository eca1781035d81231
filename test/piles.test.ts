/**
 * Piles that hold awake (issue 21, item 4 and its "Done when"): solver-agnostic tests over every
 * contact solver, sleeping off (a pile that only stands because it falls asleep cannot be compared).
 * Each case states its physical fact and its tolerance beside it. Positions and velocities come from
 * the solvers' snapshots only, never from a solver's own contact arrays.
 *
 * Settings: each solver at its registry defaults at 1/60 s (softstep-cpu 4 substeps × 1 iteration;
 * pgs-cpu and si-soft-cpu 4 substeps × 8 iterations; gs-cpu 1 × 8 on joints and, on these contact
 * scenes, 4 × 8 (its contactDefaults, given the scene); on an unbraced column (the two tall stacks) these
 * three and softstep-cpu take more substeps, and the soft two a stiffer spring (solvers/pgs/substeps.ts); jacobi-cpu 8 iterations and, on these contact
 * scenes, softstep-cpu's ⌈4 √(2 cm / L)⌉ ≥ 4 substeps (its contactDefaults); xpbd-cpu 10 substeps × 1),
 * `sleep: 0`. The issue's targets are for the defaults: a solver that cannot meet one at its
 * defaults is to get new defaults, not a wider tolerance here.
 *
 * Cases that fail on the current contact core are marked with node:test's `todo` and the figure
 * measured (KNOWN below): the failure stays visible in the report and does not turn the suite red.
 * When a fix lands, its mark goes (a todo test that passes is reported as such). No tolerance here
 * was widened to make a solver pass.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { findSolver } from '../src/solvers/registry.js';
import { resolveOptions, type Solver, type Snapshot } from '../src/solvers/solver.js';
import { findRigidScene } from '../src/scenes/registry.js';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import type { BodyDesc, WorldDesc } from '../src/model/world.js';

const g = 9.81;
/**
 * every contact solver of ours. The issue excused jacobi-cpu from piles (plain block Jacobi at 1 × 8 does
 * not carry a pile's load: measured, a 10-box stack and a base-10 pyramid fall); its mass-split Jacobi at
 * its contact defaults (≥ 4 substeps) holds them (measured: 4.0 mm, yawed 5.6 mm, pyramid 0.34 mm), so it
 * is held to the same targets.
 */
const CONTACT_SOLVERS = ['softstep-cpu', 'pgs-cpu', 'si-soft-cpu', 'gs-cpu', 'xpbd-cpu', 'jacobi-cpu', 'avbd-cpu'] as const;
const PILE_SOLVERS = CONTACT_SOLVERS;

/**
 * The cases that still fail, with the figure measured (2-core Xeon VM; f64, deterministic: the same
 * figure on every run of the same code) and why. Key: `${solver} ${case}`; each value is the todo text
 * node:test prints. Remove an entry when its case passes. (jacobi-cpu's stacks of three 1 cm and 2 cm
 * cubes, which sank 8.7 % and 4.4 % of an edge on block Jacobi contact rows at 1 × 8, stand since its
 * contacts are the contact solver's mass-split Jacobi variant at ⌈8 √(2 cm / L)⌉ substeps, now the floor of its
 * load-aware rule on a pile: solvers/jacobi/substeps.ts. By that rule its stack of 15 (7 substeps: 8.4 mm, was
 * 21.98 mm at 4) and its ten 5 cm boxes (18: 0.25 mm, was 1.28 mm at 8) hold. The stack of 15 and the ten 5 cm
 * boxes held open under pgs-cpu, gs-cpu and si-soft-cpu (17.90 mm; 8.57 mm, and si-soft-cpu's fell) and
 * softstep-cpu (leaning 123.75 mm; fell) at 4 substeps: a single-file column rocks under Gauss-Seidel unless
 * each substep nearly solves it, and buckles on a soft spring below its Greenhill load; they stand since
 * the sequential solvers take the column's substeps and the soft ones its spring: solvers/pgs/substeps.ts.)
 */
const KNOWN: Record<string, string> = {};

function todo(id: string, name: string): { todo?: string } {
  const why = KNOWN[`${id} ${name}`];
  return why ? { todo: `open: ${why}` } : {};
}

/** the GPU contact solvers (f32, on the software adapter here): the 10-box stack (their other piles: their twin tests) */
const GPU_PILE_SOLVERS = ['jacobi-gpu', 'softstep-gpu', 'xpbd-gpu'] as const;
let gpuContext: GpuContext | null = null;
after(() => gpuContext?.device.destroy());

async function make(id: string, world: WorldDesc): Promise<Solver> {
  const info = findSolver(id)!;
  assert.equal(info.unsupported?.(world) ?? null, null, `${id} should take this scene`);
  if (info.device === 'gpu') gpuContext ??= await acquireGpu();
  return info.create(world, resolveOptions(info, { sleep: 0 }, world), info.device === 'gpu' ? gpuContext! : undefined);
}

/** Steps `frames` frames, calling `each` with the frame number (1…) and the snapshot. */
async function run(solver: Solver, frames: number, each: (frame: number, s: Snapshot) => void): Promise<void> {
  try {
    for (let f = 1; f <= frames; f++) {
      await solver.step(1);
      each(f, await solver.snapshot());
    }
  } finally {
    solver.destroy();
  }
}

const ground = (): BodyDesc => ({ shape: { type: 'plane' }, fixed: true, position: [0, 0, 0] });

/** Angle (rad) of the whole rotation q (from the identity it started at). */
function turned(q: Float64Array, i: number): number {
  return 2 * Math.acos(Math.min(1, Math.abs(q[4 * i + 3])));
}

/** Height of the lowest corner of the cube of half extent h that is body i (its centre y less Σ_k |R_yk| h). */
function lowestCorner(s: Snapshot, i: number, h: number): number {
  const q = s.orientation, x = q[4 * i], y = q[4 * i + 1], z = q[4 * i + 2], w = q[4 * i + 3];
  // the world-y row of R(q)
  const r0 = 2 * (x * y + z * w), r1 = 1 - 2 * (x * x + z * z), r2 = 2 * (y * z - x * w);
  return s.position[3 * i + 1] - h * (Math.abs(r0) + Math.abs(r1) + Math.abs(r2));
}

// --- piles hold awake ---------------------------------------------------------------------------------

/*
 * A pile at rest stays at rest: once it has settled (1 s), no box moves more than 1 cm over the next
 * 9 s (the target, item 4). 1 cm is 1 % of a box's 1 m size: a pile that holds moves by the
 * solver's noise (measured from 1 s to 11 s: Rapier 3.2 mm on this stack and 2.0 mm on the 78-box
 * pyramid, xpbd-cpu 0.1 and 0.01 mm; the runs: Rapier 0.8 and 0.5 mm), a pile that creeps
 * moves by centimetres and keeps going (pgs-cpu: 55 mm here, its top box rocking). Each box's
 * displacement from its pose at frame 60 is taken at every frame up to frame 600 and the largest is
 * checked, so a sway that happens to swing back by the end is caught.
 *   stack     vertical-stack, 10 boxes of 1 m, each shifted ±1 cm along x (its default offsets);
 *   stack, yawed   the same, each box i also turned by 0.01 sin(1.7 i) rad about y (≤ 0.6°): the
 *             issue's "small yaws", which a column of perfectly aligned faces does not have;
 *   pyramid   pyramid base 10 (55 boxes of 1 m, μ 0.6), its default 1 cm gaps.
 */
const PILES: { name: string; edge?: number; world: () => WorldDesc }[] = [
  { name: 'stack', world: () => findRigidScene('vertical-stack')!.build({ boxes: 10 }) },
  {
    name: 'stack, yawed',
    world: () => {
      const w = findRigidScene('vertical-stack')!.build({ boxes: 10 });
      const bodies = w.bodies.map((b, i): BodyDesc => {
        if (i === 0) return b;
        const a = 0.01 * Math.sin(1.7 * i);
        return { ...b, orientation: [0, Math.sin(a / 2), 0, Math.cos(a / 2)] };
      });
      return { ...w, bodies };
    },
  },
  { name: 'pyramid', world: () => findRigidScene('pyramid')!.build({ base: 10 }) },
  // beyond the cases (2026-11-27): `vertical-stack` at its defaults, and a tall stack of small boxes
  { name: 'stack of 15', world: () => findRigidScene('vertical-stack')!.build({}) },
  { name: 'stack of 10 5 cm boxes', edge: 0.05, world: () => findRigidScene('vertical-stack')!.build({ boxes: 10, size: 0.025, offset: 0.0005 }) },
];

const SETTLE = 60; // frames: 1 s
const HOLD = 540; // frames: 9 s
const CREEP_LIMIT = 0.01; // m

for (const pile of PILES) {
  for (const id of [...PILE_SOLVERS, ...(pile.name === 'stack' ? GPU_PILE_SOLVERS : [])]) {
    const name = `${pile.name} holds`;
    const limit = CREEP_LIMIT * (pile.edge ?? 1); // 1 % of an edge
    test(`${id}: ${pile.name} holds awake: no box moves ${limit * 1000} mm (1 % of an edge) from 1 s to 10 s (sleeping off)`, todo(id, name), async () => {
      const world = pile.world();
      const n = world.bodies.length;
      let settled: Float64Array | null = null;
      let peak = 0, peakBody = -1;
      await run(await make(id, world), SETTLE + HOLD, (f, s) => {
        if (f === SETTLE) settled = Float64Array.from(s.position);
        if (f <= SETTLE) return;
        const p = s.position, p0 = settled!;
        for (let i = 1; i < n; i++) {
          const d = Math.hypot(p[3 * i] - p0[3 * i], p[3 * i + 1] - p0[3 * i + 1], p[3 * i + 2] - p0[3 * i + 2]);
          if (!(d <= peak)) (peak = d), (peakBody = i);
        }
      });
      assert.ok(peak < limit, `box ${peakBody} moved ${(peak * 1000).toFixed(2)} mm after settling (limit ${limit * 1000} mm)`);
    });
  }
}

/*
 * A house of cards holds awake under xpbd-cpu: card-house levels=2 (7 cards of 1 × 70 × 50 cm, μ 0.7:
 * two A-frames, a flat card on their apexes, an A-frame on it), sleeping off. Once settled (frame 60,
 * the scene's restsAfter), no card's centre moves 1 cm (CREEP_LIMIT, 1.4 % of a card's length) up to
 * frame 240 (4 s). Statics allow it: the apexes need |T|/N ≈ 0.37 (pgs-cpu's stored forces) inside
 * μ 0.7, and every other contact solver holds it (< 0.1 mm). xpbd-cpu let an apex that slid for one
 * substep keep the frame's static-friction reference, so it failed every later stick test of the
 * frame (xpbd/contacts.ts retakeReference): the cards leaned, 29 mm by frame 150 from frame 60, and
 * the house fell by frame 200 (energy −95.6 %). Now measured: 0.04 mm. 240 frames, ~1 s.
 */
test('xpbd-cpu: a 2-level card house holds awake: no card moves 10 mm from 1 s to 4 s (sleeping off)', async () => {
  const world = findRigidScene('card-house')!.build({ levels: 2 });
  const n = world.bodies.length;
  let settled: Float64Array | null = null;
  let peak = 0, peakBody = -1;
  await run(await make('xpbd-cpu', world), 240, (f, s) => {
    if (f === SETTLE) settled = Float64Array.from(s.position);
    if (f <= SETTLE) return;
    const p = s.position, p0 = settled!;
    for (let i = 1; i < n; i++) {
      const d = Math.hypot(p[3 * i] - p0[3 * i], p[3 * i + 1] - p0[3 * i + 1], p[3 * i + 2] - p0[3 * i + 2]);
      if (!(d <= peak)) (peak = d), (peakBody = i);
    }
  });
  assert.ok(peak < CREEP_LIMIT, `card ${peakBody} moved ${(peak * 1000).toFixed(2)} mm after settling (limit ${CREEP_LIMIT * 1000} mm)`);
});

// --- a rolling sphere keeps 5/7 v₀ -------------------------------------------------------------------

/*
 * A solid sphere launched sliding at v₀ without spin on level ground: friction μ m g slows it and
 * spins it up; angular momentum about the contact line is kept (the friction and the normal force
 * act through it), so m v₀ r = m v r + (2/5) m r² ω, and once it rolls (v = ω r, at
 * t = 2 v₀ / (7 μ g) = 0.49 s for v₀ = 5 m/s, μ = 0.3) v = 5/7 v₀ and friction stops acting: it rolls
 * on at 5/7 v₀ for ever (no rolling resistance is modelled). The stick solve that ends the slip keeps
 * the same momentum about the contact (its impulse acts there), so the discrete run reaches 5/7 v₀
 * too. Tolerance: the 0.5 % of 5/7 v₀ (18 mm/s), at every frame from 1 s (two slip times)
 * to 11 s, on v and on ω r. The issue: every velocity solver and Rapier hold it; a solver that loses
 * 0.5 % here brakes a rolling ball (xpbd-cpu today: 2.07 → 1.75 m/s in 9 s, issue 21 item 5).
 */
for (const id of CONTACT_SOLVERS) {
  test(`${id}: a rolling sphere holds 5/7 v₀ within 0.5 % from 1 s to 11 s (v and ω r)`, todo(id, 'rolling'), async () => {
    const v0 = 5, r = 0.5;
    const world = findRigidScene('rolling')!.build({ speed: v0, friction: 0.3, radius: r });
    const i = world.bodies.length - 1;
    const expected = (5 / 7) * v0;
    let worst = 0, worstAt = 0, worstWhat = '';
    await run(await make(id, world), 660, (f, s) => {
      if (f < 60) return;
      const v = Math.hypot(s.linearVelocity[3 * i], s.linearVelocity[3 * i + 2]);
      const spin = Math.hypot(s.angularVelocity[3 * i], s.angularVelocity[3 * i + 2]) * r;
      for (const [what, x] of [['v', v], ['ω r', spin]] as const) {
        const e = Math.abs(x / expected - 1);
        if (!(e <= worst)) (worst = e), (worstAt = f), (worstWhat = `${what} = ${x.toFixed(4)} m/s`);
      }
    });
    assert.ok(worst < 0.005, `${worstWhat} at frame ${worstAt}: ${(100 * worst).toFixed(2)} % off 5/7 v₀ = ${expected.toFixed(4)} m/s`);
  });
}

// --- cubes of every size rest flat and stack -----------------------------------------------------------

/*
 * A cube of edge a placed flat and at rest on the ground, and three such cubes stacked face on face
 * (no offsets), for a = 1 cm, 2 cm, 10 cm, 1 m (density 1000). Nothing acts on them but gravity and
 * the contacts, whose forces are symmetric about the vertical axis: exactly, the cubes stay where
 * they are. The tolerances are fractions of the size, since a contact model that is right at 1 m
 * must be right at 1 cm (the issue: "margins and slop must follow the bodies' size"):
 *   flat, no spin   the rotation from the start (tilt and turn about the vertical together) stays below
 *             0.02 rad at every frame: no corner moves by more than 2 % of the edge through turning
 *             (a corner is at most a·√3/2 from the centre, so it moves < 0.87 · 0.02 a); and at the end
 *             |ω| < 0.01 rad/s: at rest, not turning another 0.02 rad in the next 2 s. (A transient
 *             ω is allowed as long as it turns the cube by less than the bound: |ω| at frame 1 is set
 *             by how the four corners share the load in the first solve, and scales as 1 / a);
 *   sink      every corner above −2 % of a (below the ground by at most 2 % of the edge); a rigid
 *             solver sinks by its slop (5 mm today, the size of a 1 cm cube), a soft one by its
 *             spring's static deflection g / ω² (1.1 mm at 15 Hz, 0.07 mm at 60 Hz);
 *   stacked   each cube's bottom corners above the top face of the one below less 2 % of a (they do
 *             not merge), each centre within 2 % of a of where it started sideways (they do not slide
 *             off), and the tilt and spin bounds above.
 * Run: 2 s (120 frames); the checks hold at every frame from the first (the end spin at the last).
 */
const SIZES = [0.01, 0.02, 0.1, 1];
const FRACTION = 0.02;
const SPIN_LIMIT = 0.01; // rad/s

function cubes(edge: number, count: number): WorldDesc {
  const h = edge / 2;
  const bodies: BodyDesc[] = [ground()];
  for (let k = 0; k < count; k++) bodies.push({ shape: { type: 'box', halfExtents: [h, h, h] }, density: 1000, position: [0, h + k * edge, 0] });
  return { gravity: [0, -g, 0], collisions: true, bodies, constraints: [] };
}

for (const count of [1, 3]) {
  for (const edge of SIZES) {
    for (const id of CONTACT_SOLVERS) {
      const label = `${count === 1 ? 'cube' : 'stack of 3'} ${edge * 100} cm`;
      test(`${id}: ${label} ${count === 1 ? 'rests flat' : 'stands'}: turns < 0.02 rad, ends with |ω| < 0.01 rad/s, sinks and slides < 2 % of the edge`, todo(id, label), async () => {
        const world = cubes(edge, count);
        const h = edge / 2, tol = FRACTION * edge;
        // the worst of each quantity over every cube and frame
        let turn = 0, sink = -Infinity, slide = 0, spinEnd = 0;
        await run(await make(id, world), 120, (f, s) => {
          for (let k = 0; k < count; k++) {
            const i = 1 + k;
            turn = Math.max(turn, turned(s.orientation, i));
            // the face it rests on: the ground, or the top face of the cube below (its centre + h)
            const support = k === 0 ? 0 : s.position[3 * (i - 1) + 1] + h;
            sink = Math.max(sink, support - lowestCorner(s, i, h));
            slide = Math.max(slide, Math.hypot(s.position[3 * i], s.position[3 * i + 2]));
            if (f === 120) spinEnd = Math.max(spinEnd, Math.hypot(s.angularVelocity[3 * i], s.angularVelocity[3 * i + 1], s.angularVelocity[3 * i + 2]));
          }
        });
        const figures = `turned ${turn.toFixed(4)} rad, sank ${((100 * sink) / edge).toFixed(1)} % of the edge, slid ${((100 * slide) / edge).toFixed(1)} %, |ω| ${spinEnd.toExponential(1)} rad/s at the end`;
        assert.ok(turn < FRACTION && sink < tol && slide < tol && spinEnd < SPIN_LIMIT, figures);
      });
    }
  }
}

/*
 * Pyramids of small boxes, sleeping off, 5 s: every contact solver holds them, the deepest contact under
 * 10 % of an edge and the energy within 10 % of the start (a pile that falls loses most of its potential
 * energy).
 *   base 8 of 1.2 cm boxes (size 0.006 m): −66 % when si-soft-cpu's plain 30 Hz spring let it sink 4.9 mm
 *     and fall, before the small-body spring (si-soft/cpu.ts SIZE_SAG). Measured: 0.22–0.54 mm, −0.6 % to −2 %.
 *   base 10 of 4 cm boxes (size 0.02 m, gaps 0.4 mm): jacobi-cpu at ⌈4 √(2 cm / L)⌉ = 4 substeps let it
 *     fall apart (the top box 40 cm away within 9 s); its default on a pile is now at least ⌈8 √(2 cm / L)⌉
 *     (solvers/jacobi/substeps.ts: 12 here, by the load term).
 */
const SMALL_PYRAMIDS: { base: number; size: number; gap?: number }[] = [
  { base: 8, size: 0.006 }, // the scene's default gap
  { base: 10, size: 0.02, gap: 0.0004 },
];
for (const p of SMALL_PYRAMIDS) {
  const edge = 2 * p.size;
  for (const id of PILE_SOLVERS) {
    test(`${id}: a base-${p.base} pyramid of ${(edge * 100).toFixed(1)} cm boxes holds (deepest contact < 10 % of an edge, energy within 10 %, sleeping off)`, async () => {
      const { runSolver } = await import('../src/run/run.js');
      const world = findRigidScene('pyramid')!.build(p as never);
      const info = findSolver(id)!;
      const solver = await info.create(world, resolveOptions(info, { sleep: 0 }, world));
      const r = await runSolver(solver, world, { frames: 300 });
      solver.destroy();
      assert.equal(r.diverged, null);
      const pen = r.contacts!.worstMaxPenetration, drop = (r.final!.energy - r.initial.energy) / Math.abs(r.initial.energy);
      assert.ok(pen < 0.1 * edge && Math.abs(drop) < 0.1, `deepest contact ${(pen * 1000).toFixed(3)} mm, energy ${(100 * drop).toFixed(2)} %`);
    });
  }
}
