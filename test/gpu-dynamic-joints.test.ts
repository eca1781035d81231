/**
 * Joints added and removed between steps on the GPU solvers (issue 14, item 4), each against its CPU
 * twin (jacobi-gpu / jacobi-cpu, gs-gpu / gs-cpu, xpbd-gpu / xpbd-cpu, global-gpu / global-cpu) on a
 * chain of six beads hanging from a fixed sphere, released level so it swings:
 *   - a few frames, then the joint between beads 3 and 4 is removed: the freed beads 4–6, still joined
 *     to each other, are a free system whose centre of mass gains exactly g t of downward velocity (the
 *     internal impulses of a joint are equal and opposite, so they cancel in Σ m v; no damping);
 *   - a distance rod is added between beads 3 and 4 at their distance then (its starting pose: on the
 *     GPU it is read back, so its length agrees with the CPU's within the bound on positions);
 *   - at both changes, the rows of the joints that persist keep their λ exactly (the f32 λ read back
 *     and uploaded again by key) and the new rod's rows start at λ = 0 (the λ buffer read once after the
 *     change; XPBD restarts λ = 0 every substep, so there is nothing to carry and its twin is compared
 *     on the state only);
 *   - every frame the GPU state agrees with the CPU twin within the f32 bound of the existing GPU tests
 *     (restated below, per solver family);
 * and 100 joints added one per step recreate each row buffer O(log n) times (capacity doubling).
 *
 * Bounds (ε = 2⁻²⁴), the existing tests' derivations:
 *   jacobi, gs (test/rows-gpu.test.ts): δv_step ≤ (16 N_it + κ) ε V, δv(S) ≤ S δv_step,
 *     δx(S) ≤ S ε X + S h δv(S), ℓ|δq| ≤ S 4 ε ℓ + S h δv(S); κ the largest block condition number,
 *     V the bodies' speed plus the largest impulse's h |λ| m⁻¹ (λ from the CPU twin).
 *   xpbd (test/xpbd-gpu-rows.test.ts): δ = 4 ε X per substep and block, after N substeps
 *     δx ≤ N² B δ, δv ≤ N B δ / h, with rotation's gain κ = m ℓ² / I: δq ≤ N² B (κ δ / ℓ + 4 ε);
 *     B the most blocks that move one body in a substep (2 joints × N_it iterations).
 *   global (test/global-gpu-rows.test.ts): per frame (one solve, substeps 1) the GPU's residual on the
 *     CPU's system r_g ≤ τ ‖b‖ + 32 ε (‖b‖ + ‖A‖_F ‖λ‖) + (k + 1) ε ‖A‖_F ‖λ‖, and
 *     δV ≤ Σ_frames h ‖M⁻¹ Jᵀ A⁻¹‖_F (r_g + r_c) + 4 ε (V + impulse), δx ≤ F ε X + F h δV.
 * A joint laid out wrong after a change (a stale row, a λ on the wrong row, a body's CSR entry missing, a
 * rod at the wrong length) is off by the joint's impulse, g h ≈ 4e-2 m/s within one frame, far above these.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireGpu, type GpuContext } from '../src/gpu/device.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { JacobiGpuSolver } from '../src/solvers/jacobi/gpu.js';
import { GaussSeidelCpuSolver } from '../src/solvers/gs/cpu.js';
import { GaussSeidelGpuSolver } from '../src/solvers/gs/gpu.js';
import { XpbdCpuSolver } from '../src/solvers/xpbd/cpu.js';
import { XpbdGpuSolver } from '../src/solvers/xpbd/gpu.js';
import { GlobalCpuSolver } from '../src/solvers/global/cpu.js';
import { GlobalGpuSolver, defaultGpuTolerance } from '../src/solvers/global/gpu.js';
import { cpuSystem, frobenius, inverse, largestBlockCondition, norm2 } from './support/matrix.js';
import type { RowBlockSolver } from '../src/rows/block-solver.js';
import type { JointSet } from '../src/rows/joint-set.js';
import type { ConstraintDesc, WorldDesc } from '../src/model/world.js';
import type { Snapshot, SolverOptions } from '../src/solvers/solver.js';

const eps = 2 ** -24;
const g = 9.81;
const radius = 0.05;
const beads = 6;

/** A fixed sphere at (0, 2, 0) and six beads in a level row along +x, each joined at the touching points (±r along x). */
function chain(): WorldDesc {
  const bead = { shape: { type: 'sphere' as const, radius }, density: 1000 };
  return {
    gravity: [0, -g, 0],
    collisions: false, // joints only
    bodies: [
      { shape: { type: 'sphere', radius }, fixed: true, position: [0, 2, 0] },
      ...Array.from({ length: beads }, (_, k) => ({ ...bead, position: [2 * radius * (k + 1), 2, 0] as [number, number, number] })),
    ],
    constraints: Array.from({ length: beads }, (_, i) => ({ type: 'point' as const, bodyA: i, bodyB: i + 1, anchorA: [radius, 0, 0] as [number, number, number], anchorB: [-radius, 0, 0] as [number, number, number] })),
  };
}

interface Twin {
  step(frames: number): Promise<void>;
  snapshot(): Promise<Snapshot>;
  addConstraint(c: ConstraintDesc): number;
  removeConstraint(id: number): void;
  readonly joints: JointSet;
  destroy(): void;
}
interface GpuTwin extends Twin {
  applyJointChanges(): Promise<void>;
  bufferCreations: number;
  multipliers?(): Promise<Float64Array>;
}

type Family = 'rows' | 'xpbd' | 'global';
interface Pair {
  gpuId: string;
  family: Family;
  options: Partial<SolverOptions>;
  cpu(w: WorldDesc): Twin;
  gpu(w: WorldDesc, c: GpuContext): Promise<GpuTwin>;
}

const rowsOptions: Partial<SolverOptions> = { dt: 1 / 60, substeps: 4, iterations: 8, linearDamping: 0, angularDamping: 0 };
const xpbdOptions: Partial<SolverOptions> = { dt: 1 / 60, substeps: 4, iterations: 4, linearDamping: 0, angularDamping: 0 };
const globalOptions: Partial<SolverOptions> = { dt: 1 / 60, substeps: 1, iterations: 64, linearDamping: 0, angularDamping: 0 };

const pairs: Pair[] = [
  { gpuId: 'jacobi-gpu', family: 'rows', options: rowsOptions, cpu: (w) => new JacobiCpuSolver(w, rowsOptions), gpu: (w, c) => JacobiGpuSolver.create(w, rowsOptions, c) },
  { gpuId: 'gs-gpu', family: 'rows', options: rowsOptions, cpu: (w) => new GaussSeidelCpuSolver(w, rowsOptions), gpu: (w, c) => GaussSeidelGpuSolver.create(w, rowsOptions, c) },
  { gpuId: 'xpbd-gpu', family: 'xpbd', options: xpbdOptions, cpu: (w) => new XpbdCpuSolver(w, xpbdOptions), gpu: (w, c) => XpbdGpuSolver.create(w, xpbdOptions, c) },
  { gpuId: 'global-gpu', family: 'global', options: globalOptions, cpu: (w) => new GlobalCpuSolver(w, globalOptions), gpu: (w, c) => GlobalGpuSolver.create(w, globalOptions, c) },
];

/** The CPU twin's rows (the same layout as the GPU's, which keeps its RowBlockSolver protected). */
const rowsOf = (s: object) => (s as unknown as { rowSolver: RowBlockSolver }).rowSolver;
/** The CPU twins' relayout (protected; step does it by itself). */
const relayout = (s: object) => (s as unknown as { relayout(): void }).relayout();

/** The id of the joint between bodies a and b in a solver's joint set. */
function jointBetween(j: JointSet, a: number, b: number): number {
  for (let ic = 0; ic < j.constraintCount; ic++) if ((j.ib0[ic] === a && j.ib1[ic] === b) || (j.ib0[ic] === b && j.ib1[ic] === a)) return j.id[ic];
  throw new Error(`no joint between ${a} and ${b}`);
}

/** The GPU's λ by row key (one read of its λ buffer). */
async function gpuLambdaByKey(s: GpuTwin): Promise<Map<number, number>> {
  const lambda = await s.multipliers!();
  const rows = rowsOf(s).rows;
  return new Map(Array.from({ length: rows.count }, (_, r) => [rows.key[r], lambda[r]] as const));
}



/**
 * The comparison of one pair frame by frame, the bound accumulated over the whole run (the changes
 * included: the bounds count operations per step, whichever joints they are on).
 */
class Comparison {
  private S = 0; // substeps so far
  private F = 0; // frames so far
  private kappa = 1;
  private dvSum = 0; // global: Σ of the per-frame velocity bounds
  private iterationsBefore = 0;
  worst = 0;
  /** the last frame's bound on |Δx| */
  dxBound = 0;
  /** the last frame's bound on |Δv| */
  dvBound = 0;

  constructor(
    readonly pair: Pair,
    readonly cpu: Twin,
    readonly gpu: GpuTwin,
  ) {}

  /** One frame on both, then the states compared. */
  async frame(what: string): Promise<{ a: Snapshot; b: Snapshot }> {
    const { dt, substeps, iterations } = { dt: 1 / 60, substeps: 1, iterations: 8, ...this.pair.options };
    const h = dt / substeps;
    await this.cpu.step(1);
    await this.gpu.step(1);
    this.F++;
    this.S += substeps;
    const a = await this.cpu.snapshot(), b = await this.gpu.snapshot();
    const X = Math.max(1, ...Array.from(a.position, Math.abs));
    const ell = radius;
    let dxBound: number, dvBound: number, dqBound: number;
    if (this.pair.family === 'rows') {
      const cpu = this.cpu as unknown as JacobiCpuSolver;
      this.kappa = Math.max(this.kappa, largestBlockCondition(cpu));
      let lambdaMax = 0;
      for (const l of cpu.multiplier) lambdaMax = Math.max(lambdaMax, Math.abs(l));
      const mobility = Math.max(...Array.from(cpu.w.inverseMass).filter((m) => m > 0));
      const V = g * this.F * dt + 1 + h * lambdaMax * mobility;
      dvBound = this.S * (16 * iterations + this.kappa) * eps * V;
      dxBound = this.S * eps * X + this.S * h * dvBound;
      dqBound = this.S * 4 * eps + (this.S * h * dvBound) / ell;
    } else if (this.pair.family === 'xpbd') {
      // beads joined at their surface: lever ℓ = r, κ = m r² / I = 1 / 0.4 (a solid sphere's I = 0.4 m r²)
      const B = 2 * iterations, delta = 4 * eps * X, kappa = 2.5, N = this.S;
      dxBound = N * N * B * delta;
      dvBound = (N * B * delta) / h;
      dqBound = N * N * B * ((kappa * delta) / ell + 4 * eps);
    } else {
      const cpu = this.cpu as unknown as GlobalCpuSolver;
      const gs = this.gpu as unknown as GlobalGpuSolver;
      const { op, A, b: bvec, C } = cpuSystem(cpu, ell);
      const nr = A.length;
      const stats = await gs.readCgStats();
      const used = stats.iterations - this.iterationsBefore;
      this.iterationsBefore = stats.iterations;
      const lg = await gs.multipliers(), lc = cpu.multiplier;
      assert.equal(lg.length, lc.length);
      const rg = op.residualNorm(bvec, lg), rc = op.residualNorm(bvec, lc);
      const nbv = norm2(bvec), AF = frobenius(A), nl = norm2(lg);
      const rBound = defaultGpuTolerance * nbv + 32 * eps * (nbv + AF * nl) + (used + 1) * eps * AF * nl;
      assert.ok(rg <= rBound, `${what}: GPU ‖b − Aλ‖ = ${rg.toExponential(2)} > ${rBound.toExponential(2)}`);
      const Ainv = inverse(A);
      const G = C.map((row) => Float64Array.from({ length: nr }, (_, j) => row.reduce((s, v, r) => s + v * Ainv[r][j], 0)));
      const V = Math.max(...Array.from(a.linearVelocity, Math.abs), ...Array.from(a.angularVelocity, (w) => ell * Math.abs(w)), 1e-3);
      const impulse = Math.max(...C.map((row) => h * row.reduce((s, v, r) => s + Math.abs(v * lc[r]), 0)));
      this.dvSum += h * frobenius(G) * (rg + rc) + 4 * eps * (V + impulse);
      dvBound = this.dvSum;
      dxBound = this.F * eps * X + this.F * h * this.dvSum;
      dqBound = (this.F * eps * ell + this.F * h * this.dvSum) / ell;
    }
    let dx = 0, dv = 0, dq = 0;
    for (let i = 0; i < a.position.length; i++) {
      dx = Math.max(dx, Math.abs(a.position[i] - b.position[i]));
      dv = Math.max(dv, Math.abs(a.linearVelocity[i] - b.linearVelocity[i]), ell * Math.abs(a.angularVelocity[i] - b.angularVelocity[i]));
    }
    for (let i = 0; i < a.bodyCount; i++) {
      let plus = 0, minus = 0;
      for (let d = 0; d < 4; d++) {
        plus = Math.max(plus, Math.abs(a.orientation[4 * i + d] - b.orientation[4 * i + d]));
        minus = Math.max(minus, Math.abs(a.orientation[4 * i + d] + b.orientation[4 * i + d]));
      }
      dq = Math.max(dq, Math.min(plus, minus));
    }
    const id = this.pair.gpuId;
    assert.ok(dx <= dxBound, `${id}, ${what}, frame ${this.F}: |Δx| = ${dx.toExponential(2)} m > bound ${dxBound.toExponential(2)} m`);
    assert.ok(dv <= dvBound, `${id}, ${what}, frame ${this.F}: |Δv| = ${dv.toExponential(2)} m/s > bound ${dvBound.toExponential(2)} m/s`);
    assert.ok(dq <= dqBound, `${id}, ${what}, frame ${this.F}: |Δq| = ${dq.toExponential(2)} > bound ${dqBound.toExponential(2)}`);
    this.worst = Math.max(this.worst, dx / dxBound, dv / dvBound, dq / dqBound);
    this.dxBound = dxBound;
    this.dvBound = dvBound;
    return { a, b };
  }
}

/** The world point of body i's local point r: x + R(q) r, R(q) r = r + 2w (u × r) + 2 u × (u × r), q = (u, w). */
function anchorAt(s: Snapshot, i: number, r: [number, number, number]): number[] {
  const [ux, uy, uz, w] = Array.from(s.orientation.subarray(4 * i, 4 * i + 4));
  const cross = (a: number[], b: number[]) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const t = cross([ux, uy, uz], r).map((v) => 2 * v);
  const ut = cross([ux, uy, uz], t);
  return [0, 1, 2].map((d) => s.position[3 * i + d] + r[d] + w * t[d] + ut[d]);
}

/** Downward velocity of the centre of mass of beads `bodies` (equal masses: the mean). */
const comVy = (s: Snapshot, bodies: number[]) => bodies.reduce((sum, i) => sum + s.linearVelocity[3 * i + 1], 0) / bodies.length;

for (const pair of pairs) {
  test(`${pair.gpuId}: a joint removed and one added between steps, as ${pair.gpuId.replace('gpu', 'cpu')} within the f32 bound; the freed part falls with g; λ kept by key, a new row's at 0`, async (t) => {
    const gpu = await acquireGpu();
    const world = chain();
    const cpu = pair.cpu(world);
    const gs = await pair.gpu(world, gpu);
    const carries = pair.family !== 'xpbd';
    try {
      const cmp = new Comparison(pair, cpu, gs);
      for (let f = 0; f < 6; f++) await cmp.frame('before the change');

      // remove the joint between beads 3 and 4 (bodies 3, 4): the same id on both twins
      const cut = jointBetween(cpu.joints, 3, 4);
      assert.equal(jointBetween(gs.joints, 3, 4), cut);
      const before = carries ? await gpuLambdaByKey(gs) : null;
      cpu.removeConstraint(cut);
      gs.removeConstraint(cut);
      assert.equal(gs.joints.constraintCount, beads - 1);
      relayout(cpu);
      await gs.applyJointChanges();
      const cutKeys = [0, 1, 2].map((k) => 8 * cut + k);
      if (before) {
        const after = await gpuLambdaByKey(gs);
        for (const key of cutKeys) assert.equal(after.has(key), false, `the removed joint's row ${key} is gone`);
        assert.equal(after.size, before.size - 3);
        for (const [key, l] of after) assert.equal(l, before.get(key), `row key ${key}: λ ${before.get(key)} → ${l}, not kept`);
        assert.ok([...after.values()].some((l) => Math.abs(l) > 1), 'the chain carries its weight');
      }

      // the freed beads 4–6: Σ m v gains M g t exactly (internal impulses cancel), t = frames·dt
      const freed = [4, 5, 6];
      const vCpu0 = comVy(await cpu.snapshot(), freed), vGpu0 = comVy(await gs.snapshot(), freed);
      const frames = 8;
      let last!: { a: Snapshot; b: Snapshot };
      for (let f = 0; f < frames; f++) last = await cmp.frame('after the removal');
      const gt = g * frames * pair.options.dt!;
      const fallCpu = vCpu0 - comVy(last.a, freed), fallGpu = vGpu0 - comVy(last.b, freed);
      // f64: the sums round at ~1e-16 of the velocities (~1 m/s): 1e-9 m/s leaves a wide margin and no physics
      assert.ok(Math.abs(fallCpu - gt) < 1e-9, `${pair.gpuId.replace('gpu', 'cpu')}: the freed part gained ${fallCpu} m/s downward, g t = ${gt}`);
      // f32: each bead's velocity within the bound of the comparison, at the start and the end
      assert.ok(Math.abs(fallGpu - gt) <= 2 * cmp.dvBound + 1e-9, `${pair.gpuId}: the freed part gained ${fallGpu} m/s downward, g t = ${gt} (bound ${cmp.dvBound.toExponential(2)})`);

      // add a rod between beads 3 and 4 at their distance now (no length: the starting pose's, read back on the GPU)
      const rod: ConstraintDesc = { type: 'distance', bodyA: 3, bodyB: 4, anchorA: [radius, 0, 0], anchorB: [-radius, 0, 0] };
      const beforeAdd = carries ? await gpuLambdaByKey(gs) : null;
      const idCpu = cpu.addConstraint(rod), idGpu = gs.addConstraint(rod);
      assert.equal(idGpu, idCpu, 'the same fresh id on both twins');
      relayout(cpu);
      await gs.applyJointChanges();
      const lengthCpu = cpu.joints.length[cpu.joints.indexOf(idCpu)], lengthGpu = gs.joints.length[gs.joints.indexOf(idGpu)];
      assert.ok(lengthCpu > 2 * radius + 1e-3, `the freed beads fell away: rod ${lengthCpu} m`);
      // the anchors' distance at the GPU's pose: within twice the bound on positions (and q's effect at lever r)
      assert.ok(Math.abs(lengthGpu - lengthCpu) <= 2 * cmp.dxBound + 4 * radius * cmp.dxBound, `rod length ${lengthGpu} on the GPU, ${lengthCpu} on the CPU`);
      if (beforeAdd) {
        const after = await gpuLambdaByKey(gs);
        for (const [key, l] of after) {
          if (Math.floor(key / 8) === idGpu) assert.equal(l, 0, `the new rod's row ${key} starts at λ = 0`);
          else assert.equal(l, beforeAdd.get(key), `row key ${key}: λ ${beforeAdd.get(key)} → ${l}, not kept`);
        }
        assert.ok([...after.keys()].some((key) => Math.floor(key / 8) === idGpu), "the rod's row is laid out");
      }
      for (let f = 0; f < 10; f++) await cmp.frame('after the addition');
      // the rod holds (the CPU twin, substepped solvers: < 1 cm, joints.test.ts's figure). global's one velocity
      // solve per frame (substeps 1, for its per-solve bound) lets the rod drift ~v² h / L a step while it catches
      // the beads (v ≈ 2 m/s: ~4 mm a frame), so there only the agreement with its twin above is asserted
      const s = await cpu.snapshot();
      const pa = anchorAt(s, 3, [radius, 0, 0]), pb = anchorAt(s, 4, [-radius, 0, 0]);
      const d = Math.hypot(pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]);
      if (pair.options.substeps! > 1) assert.ok(Math.abs(d - lengthCpu) < 0.01, `rod length ${d} m, set ${lengthCpu} m`);
      t.diagnostic(`${pair.gpuId}: worst |Δ|/bound ${cmp.worst.toExponential(2)}, rod ${lengthCpu.toFixed(4)} m`);
    } finally {
      gs.destroy();
      cpu.destroy();
      gpu.device.destroy();
    }
  });
}

/*
 * 101 beads in a level row, no joints, falling together; one point joint added per step between beads k
 * and k + 1 (C = 0 when added: the beads fall alike). Each buffer whose size follows the joints is
 * recreated only when the layout outgrows it, at double its size: from its size for ≤ 1 joint, 100 joints
 * need at most ⌈log₂ 100⌉ + 1 = 8 recreations of each (the first from the zero-joint size), not 100.
 * Counted per buffer label through the device's createBuffer (readback staging buffers, MAP_READ, left out).
 */
for (const pair of pairs) {
  test(`${pair.gpuId}: 100 joints added one per step recreate each row buffer at most ⌈log₂ 100⌉ + 1 times`, async (t) => {
    const gpu = await acquireGpu();
    const n = 100;
    const world: WorldDesc = {
      gravity: [0, -g, 0],
      collisions: false,
      bodies: Array.from({ length: n + 1 }, (_, k) => ({ shape: { type: 'sphere' as const, radius }, density: 1000, position: [2 * radius * k, 2, 0] as [number, number, number] })),
      constraints: [],
    };
    const options = { ...pair.options, substeps: 1, iterations: pair.family === 'global' ? 16 : 2 };
    const gs = await (pair.family === 'rows'
      ? pair.gpuId === 'gs-gpu'
        ? GaussSeidelGpuSolver.create(world, options, gpu)
        : JacobiGpuSolver.create(world, options, gpu)
      : pair.family === 'xpbd'
        ? XpbdGpuSolver.create(world, options, gpu)
        : GlobalGpuSolver.create(world, options, gpu));
    const counts = new Map<string, number>();
    const device = gpu.device;
    const create = device.createBuffer.bind(device);
    device.createBuffer = (d: GPUBufferDescriptor) => {
      if (!(d.usage & GPUBufferUsage.MAP_READ)) counts.set(d.label ?? '?', (counts.get(d.label ?? '?') ?? 0) + 1);
      return create(d);
    };
    try {
      const created0 = gs.bufferCreations;
      let stepsWithCreations = 0;
      for (let k = 0; k < n; k++) {
        gs.addConstraint({ type: 'point', bodyA: k, bodyB: k + 1, anchorA: [radius, 0, 0], anchorB: [-radius, 0, 0] });
        const before = gs.bufferCreations;
        await gs.step(1);
        if (gs.bufferCreations > before) stepsWithCreations++;
      }
      assert.equal(gs.constraintCount, n);
      const limit = Math.ceil(Math.log2(n)) + 1;
      for (const [label, c] of counts) assert.ok(c <= limit, `${pair.gpuId}: buffer '${label}' created ${c} times for ${n} joints added one per step (> ${limit})`);
      assert.ok(counts.size > 0, 'the row buffers grew');
      assert.equal(gs.bufferCreations - created0, [...counts.values()].reduce((s, c) => s + c, 0), "the solver's counter counts the same creations");
      // still one chain falling freely: every joint's C stays 0, so every bead falls with g alike
      const s = await gs.snapshot();
      const t1 = n * pair.options.dt!;
      // f32: per step the velocity rounds at (16 N_it + 4) ε V (the rows' bound, V = g t + 1; CR's N_it its cap);
      // XPBD's v = Δx/h (the displacement summed beside x) at N B δ / h with δ = 4 ε X (test/xpbd-gpu-rows.test.ts), X the row's length
      const V = g * t1 + 1, X = 2 * radius * n + 2;
      const bound = pair.family === 'xpbd' ? (n * 2 * options.iterations * 4 * eps * X) / pair.options.dt! : n * (16 * options.iterations + 4) * eps * V;
      for (let i = 0; i <= n; i++) assert.ok(Math.abs(s.linearVelocity[3 * i + 1] + g * t1) <= bound, `bead ${i}: v_y ${s.linearVelocity[3 * i + 1]}, −g t ${-g * t1} (bound ${bound.toExponential(2)})`);
      t.diagnostic(`${pair.gpuId}: ${[...counts].map(([l, c]) => `${l} ${c}`).join(', ')}; ${stepsWithCreations} of ${n} steps recreated a buffer`);
    } finally {
      device.createBuffer = create;
      gs.destroy();
      device.destroy();
    }
  });
}

test('the GPU solvers refuse a bad joint added between steps with the CPU twins\' one-line errors', async () => {
  const gpu = await acquireGpu();
  const world = chain();
  const bad: [string, ConstraintDesc][] = [
    ['body out of range', { type: 'point', bodyA: 0, bodyB: beads + 1, anchorA: [0, 0, 0], anchorB: [0, 0, 0] }],
    ['world anchor', { type: 'point', bodyA: 1, bodyB: null, anchorA: [0, 0, 0], anchorB: [0, 0, 0] }],
    ['same body', { type: 'point', bodyA: 2, bodyB: 2, anchorA: [0, 0, 0], anchorB: [0, 0, 0] }],
  ];
  try {
    for (const pair of pairs) {
      const cpu = pair.cpu(world);
      const gs = await pair.gpu(world, gpu);
      try {
        for (const [what, c] of bad) {
          let expected = '';
          assert.throws(() => cpu.addConstraint(c), (e: Error) => ((expected = e.message), true));
          assert.ok(expected.length > 0 && !expected.includes('\n'), `${what}: one line`);
          assert.throws(() => gs.addConstraint(c), (e: Error) => e.message === expected, `${pair.gpuId}, ${what}: ${expected}`);
        }
        let expected = '';
        assert.throws(() => cpu.removeConstraint(99), (e: Error) => ((expected = e.message), true));
        assert.throws(() => gs.removeConstraint(99), (e: Error) => e.message === expected);
        assert.equal(gs.joints.constraintCount, beads, 'nothing changed');
      } finally {
        gs.destroy();
        cpu.destroy();
      }
    }
  } finally {
    gpu.device.destroy();
  }
});
