/**
 * What a machine and a solver's arithmetic can hold, checked before anything is allocated.
 *
 * 1. Memory. A scene is counted (bodies, constraints, rows) before it is built — built-in scenes
 *    by their `count(params)`, scene files by their arrays — and its footprint estimated:
 *      description: a built-in scene's bodies and joints are packed into typed arrays as they are
 *                 made (model/packed.ts: 29 B per body, 60 B per joint); a scene file's parsed
 *                 JSON objects and their checked copy live in the JS heap together (≈ 190 B per
 *                 body and 210 B per joint each, measured) before they are packed;
 *      arrays:    the typed arrays each solver family allocates, counted from its code (bytes per
 *                 body, per constraint and per row, `solverFootprints` below);
 *      GPU:       a GPU solver's buffers (its `sizes()`), counted as host memory: on a software
 *                 adapter (SwiftShader) they are, and on a discrete GPU the upload's staging
 *                 copies are, for a moment, as large (so there the estimate errs high by them);
 *      wasm:      Rapier's wasm memory (≈ 1.7 kB per body and joint, measured);
 *      baseline:  what the process holds when it checks (its resident set: Node, the modules,
 *                 Dawn), which a run keeps.
 *    Checked against what this machine has, and why:
 *      JS heap  — v8.getHeapStatistics().heap_size_limit less what is in use (in the browser
 *                 viewer: the heap limit the engine reports, else 4 GiB): objects live in
 *                 V8's heap, and V8 *aborts* the process (exit 134, a native stack) when it is
 *                 full; it cannot be caught. `solverlab` sets it to ¾ of the machine (cli/heap.ts).
 *      memory   — everything together (baseline, heap, arrays, GPU buffers, wasm) against the
 *                 machine's physical memory, os.totalmem() (or the cgroup's limit,
 *                 process.constrainedMemory(), when lower): beyond it the kernel's OOM killer or
 *                 endless swapping ends the run. Not os.freemem(): a moment's reading that other
 *                 processes move, so the same command would pass or fail by chance.
 *      wasm     — 4 GiB, the 32-bit address space of a wasm32 module (Rapier).
 *    The estimate is the run's peak resident memory within ±15 % (test/scale.test.ts measures
 *    it, at two sizes, for a CPU and a GPU solver); a run prints both (`memory` in its summary).
 *    A single typed array can be as long as memory allows in Node ≥ 20 (ArrayBuffers up to
 *    2⁵³ bytes), so per-array length limits never bind before physical memory does.
 *
 * 2. Arithmetic. Per solver precision (f64: the CPU solvers; f32: the GPU solvers and Rapier's
 *    wasm) the ranges of mass, mass ratio, size and position it carries meaningfully, derived
 *    below (`checkRanges`); outside them a run is refused, or warned about where its result may
 *    still be of use.
 */
import { massProperties, leastHalfSize, shapeVolume, boundingRadius, type WorldDesc, type Shape } from './world.js';
import { CONTACT_SIZE_RANGE, inRange } from './ranges.js';
import { forEachBody, forEachConstraint, packedBodies, packedConstraints } from './packed.js';
import { isParticleSystem, type SceneDesc } from './scene-desc.js';
import { InputError } from './input-error.js';

/** Bodies (or particles) and constraints of a scene: all that its memory depends on. */
export interface SceneCount {
  kind: 'rigid' | 'particles';
  bodies: number;
  constraints: number;
  /** constraint rows of a rigid scene (src/rows/: point 3, distance 1 or 2, hinge 5 + 1 per limit, fixed 6); 3 per constraint where not given */
  rows?: number;
}

/** Rows of one joint (the constraint types' layouts in src/rows/). */
export function jointRows(c: WorldDesc['constraints'][number]): number {
  switch (c.type) {
    case 'point':
      return 3;
    case 'distance':
      return c.minLength !== undefined || c.maxLength !== undefined ? (c.minLength !== undefined ? 1 : 0) + (c.maxLength !== undefined ? 1 : 0) : 1;
    case 'hinge':
      return 5 + (c.lowerAngle !== undefined ? 1 : 0) + (c.upperAngle !== undefined ? 1 : 0);
    case 'fixed':
      return 6;
  }
}

export function countScene(desc: SceneDesc): SceneCount {
  if (isParticleSystem(desc)) return { kind: 'particles', bodies: desc.particles.length, constraints: desc.constraints.length };
  let rows = 0;
  const pc = packedConstraints(desc.constraints);
  if (pc) {
    const perPrototype = pc.prototypes.list.map((c) => jointRows(c as unknown as WorldDesc['constraints'][number]));
    for (let ic = 0; ic < pc.count; ic++) rows += perPrototype[pc.prototype[ic]];
  } else for (const c of desc.constraints) rows += c && typeof c === 'object' && 'type' in c ? jointRows(c) : 3;
  return { kind: 'rigid', bodies: desc.bodies.length, constraints: desc.constraints.length, rows };
}

/** Bytes per body and per constraint, in the JS heap, off the heap (typed arrays) and in wasm memory. */
interface Footprint {
  heapBody: number;
  heapConstraint: number;
  body: number;
  constraint: number;
  wasmBody?: number;
  wasmConstraint?: number;
}

const F64 = 8, F32 = 4, I32 = 4;

/** A scene file's description objects in the JS heap (measured: built necklace, joint-grid and cloth scenes, as plain objects). */
const descriptionHeap = {
  rigid: { body: 190, constraint: 210 },
  particles: { body: 130, constraint: 150 },
};
/** A rigid description packed (model/packed.ts): per body prototype index u32, position 3 f64, present u8; per joint prototype, bodies 2 i32, anchors 6 f64. */
const packedDescription = { body: I32 + 3 * F64 + 1, constraint: 3 * I32 + 6 * F64 };

/**
 * The compiled world every rigid solver builds (model/compiled.ts, connectivity.ts): per body
 * position 3, orientation 4, velocities 3 + 3, mass, inverse mass, inertia 9 and its inverse 9
 * = 33 f64, and a CSR offset i32; per constraint body indices 2 i32, kind u8, anchors 3 + 3,
 * axes 3 + 3, compliance, length, min and max length, lower and upper angle, reference
 * orientation 4 = 22 f64, and 2 CSR entries i32.
 */
const compiledWorld: Footprint = { heapBody: 0, heapConstraint: 0, body: 33 * F64 + I32, constraint: 4 * I32 + 1 + 22 * F64 };

/**
 * What a run adds for any rigid solver: metrics (metrics/metrics.ts: mass 1 + inertia 9 f64 per
 * body, and the starting pose 7 f64 while it is made; per constraint compliance 1, reference
 * orientation 4, rest length 1, anchors 6 f64 and bodies 2 i32) and snapshots (run/run.ts keeps the
 * last good one and the current one, and the one before awaits collection, measured: 3 × 13 f64 per body).
 */
const rigidRun: Footprint = { heapBody: 0, heapConstraint: 0, body: 10 * F64 + 3 * 13 * F64, constraint: 12 * F64 + 2 * I32 };

/**
 * The constraint rows of the velocity-level CPU solvers (rows/rows.ts RowSet): per row body
 * indices 2 i32, J 12 f64, C, bounds 2, compliance, key, λ, bias rate, γ = 8 f64, angular u8,
 * owner i32, block i32; per block its start i32, point flag and contact kind u8, arms 6 f64,
 * friction 2 f64, normal row i32. The joints' rows are counted before they are laid out and the
 * set reserved at that size (rows/block-solver.ts layout), so it holds exactly the rows, one block
 * per joint (a hinge's limits add blocks: a few %). The rows are the scene's own count
 * (SceneCount.rows, by joint type) where it is known, else 3 per joint (a point joint).
 */
const ROW_BYTES = 2 * I32 + 20 * F64 + 1 + I32 + I32 + F64; // and the block solver's bias per row (at the first step)
const BLOCK_BYTES = I32 + 2 + 8 * F64 + I32;
const ROWS_PER_CONSTRAINT = 3;
function rowSetBytes(count: Omit<SceneCount, 'kind'>): number {
  const rows = count.rows ?? ROWS_PER_CONSTRAINT * count.constraints;
  return rows * ROW_BYTES + (count.constraints + 1) * BLOCK_BYTES;
}

/**
 * Typed arrays of each solver family, beyond the compiled world (counted from each solver's
 * constructor). `rows`: it also holds a RowSet (rowSetBytes). Every CPU solver also copies its
 * joints into a JointSet (rows/joint-set.ts: per joint kind u8, bodies 2 i32, id i32, and the
 * compiled world's 22 f64), JOINT_SET below.
 */
const JOINT_SET = 1 + 3 * I32 + 22 * F64;
/** The row block solver (rows/block-solver.ts) per point joint: first row, row count, first and
 * last block, order 5 i32; the 3×3 block matrix 9 f64; the row CSR's entries (2 per row) i32. */
const BLOCK_SOLVER = 5 * I32 + 9 * F64 + 2 * ROWS_PER_CONSTRAINT * I32;
const solverFootprints: Record<string, Footprint & { rows?: boolean; gpu?: GpuFootprint }> = {
  // jacobi/cpu.ts: per body ΔV 3 + ΔΩ 3 + I_world⁻¹ 9 f64, the rigid core's isotropic scale 1 and
  // midpoint offset 3 f64 and free flag u8 (rigid/body.ts), the row CSR's offset i32; per joint
  // the JointSet and the row block solver — and the rows.
  'jacobi-cpu': { heapBody: 0, heapConstraint: 0, body: 19 * F64 + I32 + 1, constraint: JOINT_SET + BLOCK_SOLVER, rows: true },
  // gs-cpu: jacobi-cpu over a colour-ordered copy of the constraint list (packed, model/packed.ts:
  // the description's 60 B per joint again), plus the colouring's degree, colour, order and CSR lists
  // (≈ 6 i32 per constraint).
  'gs-cpu': { heapBody: 0, heapConstraint: 0, body: 19 * F64 + 3 * I32 + 1, constraint: JOINT_SET + BLOCK_SOLVER + 6 * I32 + packedDescription.constraint, rows: true },
  // global-cpu: jacobi-cpu, plus the Delassus operator (per body 9 f64; per row scratch, right-hand
  // side, warm start, direct λ, refinement scratch 2 = 6 f64, a block index i32), the block graph's
  // neighbour lists (≈ 4 per joint in a chain, i32), and the envelope LDLᵀ's diagonal 3×3 blocks and
  // per-row vectors. The envelope's off-diagonal part depends on the ordering's bandwidth and is
  // not known before the world is built: this is a lower bound.
  'global-cpu': {
    heapBody: 0,
    heapConstraint: 0,
    body: 19 * F64 + I32 + 1 + 9 * F64 + I32,
    constraint: JOINT_SET + BLOCK_SOLVER + ROWS_PER_CONSTRAINT * (6 * F64 + I32) + 4 * I32 + 9 * F64 + ROWS_PER_CONSTRAINT * (4 * F64 + 3 * I32),
    rows: true,
  },
  // the contact solvers (pgs/, si-soft/, softstep/) are jacobi-cpu's arrays (they extend it), plus the
  // collision pipeline's per body bounds 6 f64, friction, restitution, radius, speed 4 f64, static u8
  // and the broad phase's order and keys (≈ 4 i32 + 8 f64). Their contact rows depend on how the
  // bodies come to touch, not on the scene's counts: not estimated here.
  'pgs-cpu': { heapBody: 0, heapConstraint: 0, body: 19 * F64 + I32 + 1 + 18 * F64 + 4 * I32 + 1, constraint: JOINT_SET + BLOCK_SOLVER, rows: true },
  'si-soft-cpu': { heapBody: 0, heapConstraint: 0, body: 19 * F64 + I32 + 1 + 18 * F64 + 4 * I32 + 1, constraint: JOINT_SET + BLOCK_SOLVER, rows: true },
  'softstep-cpu': { heapBody: 0, heapConstraint: 0, body: 19 * F64 + I32 + 1 + 18 * F64 + 4 * I32 + 1, constraint: JOINT_SET + BLOCK_SOLVER, rows: true },
  // xpbd/cpu.ts: per body previous position 3, orientation 4, world inverse inertia 9, the rigid
  // core's 4 f64 and u8; per joint the JointSet, the row block solver, the distance form's λ 3 f64,
  // and the colouring (≈ 6 i32) — and the rows.
  'xpbd-cpu': { heapBody: 0, heapConstraint: 0, body: 20 * F64 + 2 * I32 + 1, constraint: JOINT_SET + BLOCK_SOLVER + 3 * F64 + 6 * I32, rows: true },
  // GPU solvers, host side: as every GPU solver takes its rows' layout from the CPU's (a
  // RowBlockSolver over the joints, uploaded), the JointSet, the row block solver and the rows, and
  // per joint its point flag u8 and the prepare and block lists 2 u32 (gs-gpu: the colouring's
  // lists ≈ 6 i32 and the colour-ordered packed joints). The f32 staging of the upload (pose,
  // velocity, masses, rows, joint records) is not counted: it is garbage before the run allocates
  // its metrics and snapshots (≈ 0.5 kB per body, more than the staging), so it is never part of
  // the peak. Their buffers are `gpu` (GpuFootprint, below).
  'jacobi-gpu': { heapBody: 0, heapConstraint: 0, body: 0, constraint: 1 + 2 * I32 + JOINT_SET + BLOCK_SOLVER, rows: true },
  'gs-gpu': { heapBody: 0, heapConstraint: 0, body: 0, constraint: 1 + 2 * I32 + 6 * I32 + JOINT_SET + BLOCK_SOLVER + packedDescription.constraint, rows: true },
  'global-gpu': { heapBody: 0, heapConstraint: 0, body: 0, constraint: 1 + 2 * I32 + JOINT_SET + BLOCK_SOLVER, rows: true },
  // xpbd-gpu lays its joints' rows out on the host too (a RowBlockSolver over the compiled world): the
  // rows, the block solver, the colouring (≈ 6 i32) and its point and row orders (JS arrays, 8 B an entry).
  'xpbd-gpu': { heapBody: 0, heapConstraint: 16, body: 0, constraint: 6 * I32 + BLOCK_SOLVER, rows: true },
  // Rapier: a rigid body and a joint in wasm memory (measured ≈ 1.7 kB per body with its joint),
  // and the f64 snapshot arrays on our side.
  rapier: { heapBody: 0, heapConstraint: 0, body: 13 * F64, constraint: 0, wasmBody: 1200, wasmConstraint: 500 },
  'rapier-multibody': { heapBody: 0, heapConstraint: 0, body: 13 * F64, constraint: 0, wasmBody: 1200, wasmConstraint: 500 },
};

/**
 * A GPU solver's buffers (bytes per body, per constraint, per row, per block: its `sizes()`), as in
 * jacobi/gpu.ts (jacobi-gpu, gs-gpu, global-gpu's body and row buffers) and xpbd/gpu.ts.
 *   jacobi: per body pose, velocity, Δvelocity 32 each, inverse mass 64, inverse inertia 48,
 *     midpoint offset 16, the body → row CSR's offsets 8; per row J 48, C 8, params 16, solve 48,
 *     point arm 32, CSR entries 8, residual 4; per block record 16 and two lists 4 each; per joint
 *     its record, JOINT_STRIDE (7) vec4f.
 *   xpbd: per body pose, previous pose, velocity 32 each, mass 64, midpoint offset 16; per joint
 *     bodies 8, anchors 32, compliance 4, multiplier 16, residual 4 and its record 7 vec4f; per row
 *     J 48, C 8, params 16, λ 4, residual 4.
 */
/** The GPU device and the solver's compiled pipelines, whatever the scene (measured on SwiftShader: 50–80 MB for a one-chain necklace). */
const GPU_CONTEXT = 64e6;
interface GpuFootprint {
  body: number;
  constraint: number;
  row: number;
  block: number;
}
const JACOBI_GPU: GpuFootprint = { body: 3 * 32 + 64 + 48 + 16 + 8, constraint: 7 * 16, row: 48 + 8 + 16 + 48 + 32 + 8 + 4, block: 16 + 4 + 4 };
const XPBD_GPU: GpuFootprint = { body: 3 * 32 + 64 + 16, constraint: 8 + 32 + 4 + 16 + 4 + 7 * 16, row: 48 + 8 + 16 + 4 + 4, block: 0 };
for (const id of ['jacobi-gpu', 'gs-gpu', 'global-gpu']) solverFootprints[id].gpu = JACOBI_GPU;
solverFootprints['xpbd-gpu'].gpu = XPBD_GPU;

/**
 * Particle systems (particles/system.ts, integrators.ts, cg.ts), d = 3: per particle the state y
 * (2d), force, work copies and Jᵀλ (5d), the integrator's stages (RK4: 4 × 2d) and a temporary (2d),
 * mass 1, metrics 1, snapshots 3 × 13 f64; per constraint (up to d rows) C, λ, J̇q̇, Jw, Ċ, rhs,
 * diagonal (7 per row), J and J̇ blocks (2 × 2 particles × d per row), CG's 4 vectors per row, f64;
 * and the constraint's evaluator object in the heap (≈ 150 B).
 */
const particleRun: Footprint = {
  heapBody: 0,
  heapConstraint: 150,
  body: (2 * 3 + 5 * 3 + 4 * 6 + 6 + 2 + 3 * 13) * F64,
  constraint: 3 * (7 + 12 + 4) * F64,
};

export interface MemoryEstimate {
  /** JS heap the description and the run need */
  heap: number;
  /** typed arrays: the packed description, the compiled world, the solver's and the run's */
  offHeap: number;
  /** a GPU solver's buffers (host memory on a software adapter) */
  gpu: number;
  /** Rapier's wasm memory */
  wasm: number;
  /** all of it: what the run adds to the process's resident memory */
  total: number;
}

export interface MemoryLimits {
  /** JS heap left: the heap's limit less what is in use now */
  heap: number;
  /** physical memory (or the cgroup's limit) less what this process holds now (its resident set) */
  memory: number;
  /** wasm32 address space */
  wasm: number;
}

/**
 * Node's v8 and os modules, reached through process.getBuiltinModule (Node ≥ 20.16) rather than
 * imported: the browser viewer bundles the scenes, and with them this module, where `node:*`
 * cannot be loaded.
 */
function nodeModules(): { v8: typeof import('node:v8'); os: typeof import('node:os') } | null {
  const p = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (!p?.getBuiltinModule) return null;
  return { v8: p.getBuiltinModule('node:v8') as typeof import('node:v8'), os: p.getBuiltinModule('node:os') as typeof import('node:os') };
}

/** The machine's physical memory, or the cgroup's limit where lower (bytes); null in a browser. */
export function physicalMemory(): number | null {
  const node = nodeModules();
  if (!node) return null;
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.() ?? 0;
  return constrained > 0 ? Math.min(constrained, node.os.totalmem()) : node.os.totalmem();
}

/**
 * This process's limits. In a browser (the viewer) or a Node without getBuiltinModule: the
 * heap limit the engine reports (Chrome's performance.memory) or V8's usual 4 GiB, and 4 GiB
 * of memory — a browser tab gets no more than that.
 */
export function machineLimits(): MemoryLimits {
  const node = nodeModules();
  if (!node) {
    const reported = (globalThis as { performance?: { memory?: { jsHeapSizeLimit?: number; usedJSHeapSize?: number } } }).performance?.memory;
    const heap = reported?.jsHeapSizeLimit ? reported.jsHeapSizeLimit - (reported.usedJSHeapSize ?? 0) : 2 ** 32;
    return { heap, memory: 2 ** 32, wasm: 2 ** 32 };
  }
  const stats = node.v8.getHeapStatistics();
  return {
    heap: stats.heap_size_limit - stats.used_heap_size,
    memory: Math.max(0, physicalMemory()! - process.memoryUsage.rss()),
    wasm: 2 ** 32,
  };
}

/**
 * Bytes a scene needs: its description alone (no solver: a scene built, exported or loaded), or
 * with a solver's run (the solver's arrays and GPU buffers, the compiled world, metrics, snapshots).
 * @param fromFile the description is a scene file's: parsed objects and their checked copy in the
 *   heap (then packed); else a built-in scene's, packed as it is built
 */
export function estimateMemory(count: SceneCount, solverId?: string, fromFile = false): MemoryEstimate {
  const est: MemoryEstimate = { heap: 0, offHeap: 0, gpu: 0, wasm: 0, total: 0 };
  if (count.kind === 'particles') {
    const desc = descriptionHeap.particles;
    est.heap += count.bodies * desc.body + count.constraints * desc.constraint;
  } else {
    if (fromFile) est.heap += 2 * (count.bodies * descriptionHeap.rigid.body + count.constraints * descriptionHeap.rigid.constraint);
    est.offHeap += count.bodies * packedDescription.body + count.constraints * packedDescription.constraint;
  }
  if (solverId !== undefined) {
    const parts: Footprint[] = [];
    if (count.kind === 'particles') parts.push(particleRun);
    else {
      parts.push(compiledWorld, rigidRun);
      const own = solverFootprints[solverId];
      if (own) parts.push(own);
      if (own?.rows) est.offHeap += rowSetBytes(count);
      if (own?.gpu) {
        const rows = count.rows ?? ROWS_PER_CONSTRAINT * count.constraints;
        // bodies: the scene's and one world anchor at most per joint (counted as the scene's: an upper bound of a few %)
        est.gpu += GPU_CONTEXT + count.bodies * own.gpu.body + count.constraints * (own.gpu.constraint + own.gpu.block) + rows * own.gpu.row;
      }
    }
    for (const f of parts) {
      est.heap += count.bodies * f.heapBody + count.constraints * f.heapConstraint;
      est.offHeap += count.bodies * f.body + count.constraints * f.constraint;
      est.wasm += count.bodies * (f.wasmBody ?? 0) + count.constraints * (f.wasmConstraint ?? 0);
    }
  }
  est.total = est.heap + est.offHeap + est.gpu + est.wasm;
  return est;
}

/** Bytes of typed arrays a rigid solver's constructor leaves allocated (once the arrays its rows grew out of are collected). */
export function solverArrayBytes(count: Omit<SceneCount, 'kind'>, solverId: string): number {
  const own = solverFootprints[solverId];
  if (!own) throw new Error(`no memory footprint for solver '${solverId}'`);
  const linear = [compiledWorld, own].reduce((sum, f) => sum + count.bodies * f.body + count.constraints * f.constraint, 0);
  return linear + (own.rows ? rowSetBytes(count) : 0);
}

/** 1.23 GB (decimal units). */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return 'more than 1.8e308 bytes';
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  let u = 0;
  while (n >= 1000 && u < units.length - 1) {
    n /= 1000;
    u++;
  }
  if (n >= 1000) return `${(n * 1000 ** u).toExponential(2)} bytes`;
  return `${n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0)} ${units[u]}`;
}

/** "about 1.23 GB", or "more than 1.8e308 bytes" for sizes past f64's range. */
function approx(n: number): string {
  return Number.isFinite(n) ? `about ${formatBytes(n)}` : formatBytes(n);
}

function formatCount(n: number): string {
  if (!Number.isFinite(n)) return 'more than 1.8e308';
  return n < 1e15 ? Math.round(n).toLocaleString('en-US') : n.toExponential(2);
}

/**
 * Throws an InputError (one line: the estimate and the limit) when `count` does not fit.
 * @param what names the scene in the message, e.g. "scene 'necklace'"
 */
export function checkMemory(what: string, count: SceneCount, solverId?: string, fromFile = false, limits: MemoryLimits = machineLimits()): void {
  const est = estimateMemory(count, solverId, fromFile);
  const items = count.kind === 'particles' ? 'particles' : 'bodies';
  const size = `${formatCount(count.bodies)} ${items}, ${formatCount(count.constraints)} constraints`;
  const by = solverId ? ` under ${solverId}` : '';
  if (!(est.heap <= limits.heap))
    throw new InputError(
      `${what} (${size}) needs ${approx(est.heap)} of JS heap${by}, beyond the ${formatBytes(limits.heap)} this Node process has left (node --max-old-space-size raises it)`,
    );
  if (!(est.wasm <= limits.wasm))
    throw new InputError(`${what} (${size}) needs ${approx(est.wasm)} of wasm memory${by}, beyond the ${formatBytes(limits.wasm)} a wasm32 module can address`);
  if (!(est.total <= limits.memory)) {
    const parts = [['JS heap', est.heap], ['arrays', est.offHeap], ['GPU buffers', est.gpu], ['wasm', est.wasm]]
      .filter(([, b]) => (b as number) > 0)
      .map(([name, b]) => `${name} ${formatBytes(b as number)}`)
      .join(', ');
    throw new InputError(`${what} (${size}) needs ${approx(est.total)} of memory${by} (${parts}), beyond the ${formatBytes(limits.memory)} this machine has left`);
  }
}

// ───────────────────────────── 2. arithmetic ─────────────────────────────

/** The floating-point format a solver computes in. */
export interface Arithmetic {
  name: 'f64' | 'f32';
  /** significand bits p, counting the implicit one (53, 24) */
  bits: number;
  /** unit roundoff u = 2⁻ᵖ: the relative rounding error of one operation */
  unitRoundoff: number;
  /** largest finite value */
  max: number;
  /** smallest normal value (below it, precision is lost; GPUs may flush it to zero) */
  minNormal: number;
}

export const f64: Arithmetic = { name: 'f64', bits: 53, unitRoundoff: 2 ** -53, max: Number.MAX_VALUE, minNormal: 2 ** -1022 };
export const f32: Arithmetic = { name: 'f32', bits: 24, unitRoundoff: 2 ** -24, max: (2 - 2 ** -23) * 2 ** 127, minNormal: 2 ** -126 };

/** f32 for the GPU solvers (WGSL f32) and Rapier (f32 wasm build); f64 for the CPU solvers. */
export function arithmeticOf(solverId: string): Arithmetic {
  return solverId.endsWith('-gpu') || solverId.startsWith('rapier') ? f32 : f64;
}

/** Spacing of the representable numbers at |x| (its ulp): 2^(⌊log₂|x|⌋ − (p − 1)); 0 at 0. */
export function ulp(x: number, a: Arithmetic): number {
  const ax = Math.abs(x);
  if (ax === 0) return 0;
  return 2 ** (Math.floor(Math.log2(ax)) - (a.bits - 1));
}

export interface RangeOptions {
  dt: number;
  substeps: number;
  /**
   * what the messages are about, before the field: a scene file's path (as the schema's errors
   * name it) or a built-in scene with its parameters ("scene 'rolling' with speed=1e300")
   */
  where?: string;
}

/** The field of a shape that sets its size: a sphere's radius, a box's halfExtents, the larger of a capsule's two. */
function shapeField(shape: Shape): string {
  switch (shape.type) {
    case 'sphere':
      return 'shape.radius';
    case 'box':
      return 'shape.halfExtents';
    case 'capsule':
      return shape.halfHeight > shape.radius ? 'shape.halfHeight' : 'shape.radius';
    default:
      return 'shape';
  }
}

/** Whether a world has contacts to solve (solvers/solver.ts sceneHasContacts, which the model cannot import): collisions on, two or more bodies. */
function collides(world: WorldDesc): boolean {
  return world.collisions !== false && world.bodies.length >= 2;
}

/**
 * The ranges a solver's arithmetic carries, checked body by body and joint by joint. Returns the
 * warnings; throws an InputError naming the field for what it cannot carry at all.
 *
 * Mass (refused). Every rigid solver forms, per joint, the 3×3 effective-mass (Delassus) block
 *   K = Σ_sides (m⁻¹ I₃ − [a]× I⁻¹ [a]×)                        (a: the anchor's lever arm)
 * and inverts it by its adjugate over det K (jacobi and xpbd on CPU and GPU, global-gpu's block
 * preconditioner; Rapier's own f32 arithmetic is taken to share the bounds). K's eigenvalues per
 * side lie between m⁻¹ and k = m⁻¹ + |a|²/I_min (and 1/I_min for the angular rows of hinge and
 * fixed joints), so every entry |K_ij| ≤ k_A + k_B, and det K and the adjugate are sums of products
 * of three entries, formed before they cancel. So
 *   - det K overflows (then K⁻¹ = 0 and the joint is silently lost: the bead free-falls) for some
 *     orientation unless (k_A + k_B)³ ≤ max; per side, k ≤ ∛max / 2, i.e. a lightest mass
 *         m_min = 2 (1 + |a|²/ρ²) / ∛max,    ρ² = I_min/m (the gyration radius, a property of shape);
 *     f64: ∛max = 5.6e102; f32: 7.0e12. Sufficient, not tight: the pendulum (|a|²/ρ² = 250) keeps
 *     its joint at m_min and loses it between 0.09 and 0.25 m_min in f64, below 0.1 m_min in f32.
 *   - det K underflows below the smallest normal number (then 1/det overflows, or a GPU flushes det
 *     to zero) unless (m_A⁻¹ + m_B⁻¹)³ ≥ minNormal (K ≥ (m_A⁻¹ + m_B⁻¹) I₃), i.e. the lighter body
 *     of a joint weighs at most 1/∛minNormal: f64 3.6e102 kg, f32 4.4e12 kg.
 *   A body's mass and inertia must themselves be finite normal numbers (f32: 1.2e-38 .. 3.4e38).
 * Mass ratio (warned). K's linear part is m_light⁻¹ + m_heavy⁻¹. Where m_light/m_heavy < u (the unit
 *   roundoff), the heavy body's share rounds away: the joint moves the light body as if the heavy one
 *   were fixed, and the solve's matrix has a condition number ≥ m_heavy/m_light ≥ 1/u, so an iterative
 *   or global solve resolves nothing of the heavy body's reaction. f64: 9.0e15; f32: 1.7e7.
 * Position and size. A coordinate x is stored to its ulp, 2^(⌊log₂|x|⌋ − (p − 1)) (f32 at 10⁴ m:
 *   2⁻¹⁰ ≈ 1 mm). Refused where a body's size (the radius of the sphere with its smallest moment per
 *   mass, √(2.5 I_min/m), = the radius for a sphere) is not above the ulp of its position: it cannot
 *   even be placed. Warned where the ulp exceeds 2⁻¹⁰ of its size (joint errors under 0.1 % of a body
 *   are rounding), and where a body falling from rest moves less than half an ulp in one substep,
 *   g h² < ulp/2 (its first steps of free motion round away; motion comes in ulp-sized jumps).
 */
export function checkRanges(world: WorldDesc, solverId: string, options: RangeOptions): string[] {
  const a = arithmeticOf(solverId);
  const who = `${solverId} (${a.name})`;
  const warnings: string[] = [];
  const cbrtMax = Math.cbrt(a.max);
  const heaviest = 1 / Math.cbrt(a.minNormal);
  const n = world.bodies.length;
  const mass = new Float64Array(n);
  const inertiaMin = new Float64Array(n);
  const fixed = new Uint8Array(n);
  const at = options.where ? `${options.where}: ` : '';
  const fail = (message: string): never => {
    throw new InputError(at + message);
  };
  const field = (i: number) => {
    const b = world.bodies[i];
    if (b.mass !== undefined) return `bodies[${i}].mass: ${fmt(mass[i])} kg is`;
    // a mass from density × volume: the volume's own fault is the shape's (halfExtents 1e200), not the density's
    const volume = shapeVolume(b.shape);
    if (!(volume >= a.minNormal && volume <= a.max)) return `bodies[${i}].${shapeField(b.shape)}: the shape's volume ${fmt(volume)} m³ gives a mass of ${fmt(mass[i])} kg,`;
    return `bodies[${i}].density: ${fmt(b.density ?? NaN)} gives a mass of ${fmt(mass[i])} kg,`;
  };

  // per body: mass, inertia, position against size
  const h = options.dt / options.substeps;
  const g = Math.hypot(world.gravity[0], world.gravity[1], world.gravity[2]);
  // `as`: assigned inside the visitor below, which TypeScript's narrowing does not follow
  let worstSize = null as { i: number; ratio: number; ulp: number; size: number; at: number } | null;
  let worstFall = null as { i: number; ulp: number; at: number } | null;
  let largest = null as { i: number; extent: number } | null;
  const packed = packedBodies(world.bodies) !== null;
  const contacts = collides(world);
  const gravity = world.gravity;
  const props = new Map<object, ReturnType<typeof massProperties>>(); // per shared prototype (packed lists)
  // the velocities, from a packed list's arrays (present bits 2: linear, 4: angular) or the objects
  // (no object made per body: a packed list may hold 10M)
  const pb = packedBodies(world.bodies);
  const none: number[] = [];
  const relativeSpacing = 2 ** (1 - a.bits);
  forEachBody(world.bodies, (i, b, position, p) => {
    const velocity: ArrayLike<number> = pb ? pb.linearVelocity : (b.linearVelocity ?? none);
    const v = pb ? (pb.present[i] & 2 ? 3 * i : -1) : b.linearVelocity ? 0 : -1;
    const spin: ArrayLike<number> = pb ? pb.angularVelocity : (b.angularVelocity ?? none);
    const w = pb ? (pb.present[i] & 4 ? 3 * i : -1) : b.angularVelocity ? 0 : -1;
    // bodies that collide: the sizes the contact code supports (ranges.ts CONTACT_SIZE_RANGE; planes are unbounded)
    if (contacts && b.shape.type !== 'plane') {
      const extent = 2 * leastHalfSize(b.shape);
      if (!(extent >= CONTACT_SIZE_RANGE.min!))
        fail(
          `bodies[${i}].${shapeField(b.shape)}: the body is ${fmt(extent)} m across at its thinnest, below the ${CONTACT_SIZE_RANGE.min} m to ${CONTACT_SIZE_RANGE.max} m the contact code supports (its contact tolerances are fixed lengths: it would sink into what it rests on)`,
        );
      if (!inRange(extent, CONTACT_SIZE_RANGE) && (!largest || extent > largest.extent)) largest = { i, extent };
    }
    if (b.fixed) return void (fixed[i] = 1);
    let mp = props.get(b);
    if (!mp) {
      mp = massProperties({ ...b, position: [0, 0, 0] });
      if (packed) props.set(b, mp);
    }
    mass[i] = mp.mass;
    inertiaMin[i] = Math.min(mp.inertiaLocal[0], mp.inertiaLocal[4], mp.inertiaLocal[8]);
    if (!(mass[i] >= a.minNormal && mass[i] <= a.max)) fail(`${field(i)} outside the ${fmt(a.minNormal)} .. ${fmt(a.max)} kg ${who} can represent`);
    if (!(inertiaMin[i] >= a.minNormal && inertiaMin[i] <= a.max))
      fail(`bodies[${i}].${shapeField(b.shape)}: with its mass of ${fmt(mass[i])} kg the body has a moment of inertia ${fmt(inertiaMin[i])} kg·m², outside the ${fmt(a.minNormal)} .. ${fmt(a.max)} ${who} can represent`);
    const size = Math.sqrt((2.5 * inertiaMin[i]) / mass[i]);
    const at = Math.max(Math.abs(position[p]), Math.abs(position[p + 1]), Math.abs(position[p + 2]));
    const u = ulp(at, a);
    if (!(u < size)) fail(`bodies[${i}].position: at ${fmt(at)} m from the origin ${who} stores positions to ${fmt(u)} m, not below the body's size of ${fmt(size)} m`);
    // and its farthest point: a body 1e200 m long and 1 m thick cannot be placed at any position
    // (ulp(x) ≤ x · 2^(1 − p): where that bound is below the size, the exact ulp need not be formed)
    const reachOfShape = boundingRadius(b.shape), far = at + reachOfShape;
    const uFar = far * relativeSpacing < size ? 0 : ulp(far, a);
    if (!(uFar < size)) {
      if (reachOfShape >= at)
        fail(`bodies[${i}].${shapeField(b.shape)}: the body reaches ${fmt(reachOfShape)} m from its centre, where ${who} stores positions to ${fmt(uFar)} m, not below its thickness of ${fmt(size)} m`);
      fail(`bodies[${i}].position: the body reaches ${fmt(far)} m from the origin, where ${who} stores positions to ${fmt(uFar)} m, not below its size of ${fmt(size)} m`);
    }
    if (u > 2 ** -10 * size && (!worstSize || u / size > worstSize.ratio)) worstSize = { i, ratio: u / size, ulp: u, size, at };
    if (g > 0 && g * h * h < u / 2 && (!worstFall || u > worstFall.ulp)) worstFall = { i, ulp: u, at };
    // Motion within the first frame: unhindered, a body moves x(dt) = x₀ + v₀ dt + ½ g dt² (per axis,
    // bounded by |x₀| + |v₀| dt + ½ |g| dt²). Where the arithmetic cannot store that position finer
    // than the body's size — the test above, one frame on — its motion cannot be represented: a
    // velocity or gravity of 1e300 was a "divergence" at frame 1 (its ½ m v² overflows f64), not a result.
    const dt = options.dt;
    let reach = 0, byVelocity = 0, byGravity = 0;
    for (let d = 0; d < 3; d++) {
      const vd = v >= 0 ? Math.abs(velocity[v + d]) * dt : 0, gd = 0.5 * Math.abs(gravity[d]) * dt * dt;
      reach = Math.max(reach, Math.abs(position[p + d]) + vd + gd);
      byVelocity = Math.max(byVelocity, vd);
      byGravity = Math.max(byGravity, gd);
    }
    const u1 = reach * relativeSpacing < size ? 0 : ulp(reach, a);
    if (!(u1 < size)) {
      const speed = v >= 0 ? Math.hypot(velocity[v], velocity[v + 1], velocity[v + 2]) : 0;
      const where = Number.isFinite(u1)
        ? `${who} stores positions there to ${fmt(u1)} m, not below the body's size of ${fmt(size)} m: its motion cannot be represented`
        : `that is beyond the largest number ${who} holds (${fmt(a.max)}): its motion cannot be represented`;
      const len = (x: number) => (Number.isFinite(x) ? fmt(x) : `more than ${fmt(f64.max)}`);
      // the blame goes to the factor furthest from its ordinary value, in decades: the speed against 1 m/s
      // or |g| against 9.81 m/s², and the step against 1/60 s (its square where it multiplies g)
      const stepDecades = Math.log10(dt * 60);
      const moved = byVelocity >= byGravity ? `at ${fmt(speed)} m/s the body moves ${len(speed * dt)} m in one frame` : `${fmt(g)} m/s² moves a falling body ½ g dt² = ${len(0.5 * g * dt * dt)} m in one frame`;
      if (byVelocity >= byGravity ? stepDecades > Math.log10(speed) : 2 * stepDecades > Math.log10(g / 9.81))
        fail(`dt: a frame of ${fmt(dt)} s is too long for this scene: ${moved}; ${where}`);
      if (byVelocity >= byGravity) fail(`bodies[${i}].linearVelocity: ${moved} (dt = ${fmt(dt)} s); ${where}`);
      fail(`gravity: ${moved} (dt = ${fmt(dt)} s); ${where}`);
    }
    // spin: its kinetic energy ½ ω·Iω (≤ ½ I_max |ω|²) must be finite in the f64 the metrics measure it
    // in, and I ω (the angular momentum the solvers form) within the solver's arithmetic
    if (w >= 0) {
      const omega = Math.hypot(spin[w], spin[w + 1], spin[w + 2]);
      const inertiaMax = Math.max(mp.inertiaLocal[0], mp.inertiaLocal[4], mp.inertiaLocal[8]);
      if (!(0.5 * inertiaMax * omega * omega <= f64.max) || !(inertiaMax * omega <= a.max))
        fail(
          `bodies[${i}].angularVelocity: |ω| = ${fmt(omega)} rad/s with the body's moment of inertia ${fmt(inertiaMax)} kg·m² has an angular momentum or kinetic energy beyond what ${who} and the f64 energy can represent`,
        );
    }
  });
  if (largest)
    warnings.push(
      `bodies[${largest.i}].${shapeField(world.bodies[largest.i].shape)}: the body is ${fmt(largest.extent)} m across at its thinnest, beyond the ${CONTACT_SIZE_RANGE.min} m to ${CONTACT_SIZE_RANGE.max} m the contact code is tested for (not known to fail: untested)`,
    );
  if (worstSize)
    warnings.push(
      `bodies[${worstSize.i}].position: at ${fmt(worstSize.at)} m from the origin ${who} stores positions to ${fmt(worstSize.ulp)} m, ${fmt(100 * worstSize.ratio)} % of the body's size (${fmt(worstSize.size)} m): joint errors below that are rounding`,
    );
  if (worstFall)
    warnings.push(
      `bodies[${worstFall.i}].position: at ${fmt(worstFall.at)} m ${who} stores positions to ${fmt(worstFall.ulp)} m, more than twice the g·h² = ${fmt(g * h * h)} m a body falls from rest in one substep (h = ${fmt(h)} s): slow motion there rounds away`,
    );

  // per joint: the effective-mass block's determinant, and the mass ratio
  let ratioWarned = false;
  forEachConstraint(world.constraints, (ic, c, bodyA, bodyB, anchorA, anchorB, at) => {
    let inverseMassSum = 0;
    const dynamic: number[] = [];
    for (let side = 0; side < (bodyB === null ? 1 : 2); side++) {
      const ib = side === 0 ? bodyA : (bodyB as number), anchor = side === 0 ? anchorA : anchorB;
      if (fixed[ib]) continue;
      dynamic.push(ib);
      inverseMassSum += 1 / mass[ib];
      const arm2 = anchor[at] * anchor[at] + anchor[at + 1] * anchor[at + 1] + anchor[at + 2] * anchor[at + 2];
      // the side's largest eigenvalue of K in units of 1/m: (1 + |a|²/ρ²), or of 1/I (angular rows)
      const angularRows = (c.type as string) === 'hinge' || (c.type as string) === 'fixed';
      const spread = Math.max(1 + arm2 / (inertiaMin[ib] / mass[ib]), angularRows ? mass[ib] / inertiaMin[ib] : 0);
      const lightest = (2 * spread) / cbrtMax;
      if (!(mass[ib] >= lightest))
        fail(
          `${field(ib)} below the ${fmt(lightest)} kg ${who} can carry through constraints[${ic}]'s effective mass (the determinant of its 3×3 block overflows and the joint is lost)`,
        );
    }
    if (dynamic.length && !(inverseMassSum >= 1 / heaviest)) {
      const ib = dynamic.reduce((x, y) => (mass[x] < mass[y] ? x : y));
      fail(
        `${field(ib)} above the ${fmt(heaviest)} kg ${who} can carry through constraints[${ic}]'s effective mass (the determinant of its 3×3 block underflows)`,
      );
    }
    if (dynamic.length === 2 && !ratioWarned) {
      const [p, q] = dynamic;
      const ratio = Math.max(mass[p], mass[q]) / Math.min(mass[p], mass[q]);
      if (ratio * a.unitRoundoff > 1) {
        ratioWarned = true;
        const heavy = mass[p] > mass[q] ? p : q, light = heavy === p ? q : p;
        warnings.push(
          `constraints[${ic}]: bodies[${heavy}] is ${fmt(ratio)} times as heavy as bodies[${light}], beyond the 1/u = ${fmt(1 / a.unitRoundoff)} ${who} resolves: the heavy body's share of the joint's effective mass rounds away`,
        );
      }
    }
  });
  return warnings.map((line) => at + line);
}

function fmt(x: number): string {
  if (x === 0) return '0';
  // f64's largest number, 1.797…e308, rounds up to 1.80e308, which is Infinity as a number: keep the text
  if (Number.isFinite(x) && !Number.isFinite(+x.toPrecision(3))) return `${x < 0 ? '-' : ''}1.797e308`; // (only f64's largest numbers round so)
  const r = +x.toPrecision(3), ar = Math.abs(r);
  return (ar >= 1e-3 && ar < 1e6 ? String(r) : r.toExponential()).replace('e+', 'e');
}

/** This machine's limits with the already built description of `count` given back (it is counted in the estimate and already held). */
function withDescriptionHeld(count: SceneCount): MemoryLimits {
  const limits = machineLimits();
  return { ...limits, memory: limits.memory + estimateMemory(count).total };
}

/**
 * Everything a run checks before its solver allocates: memory for this solver, then the arithmetic's
 * ranges (rigid worlds). Throws an InputError for a refusal; returns warning lines.
 */
export function preflight(what: string, desc: SceneDesc, solverId: string, options: RangeOptions): string[] {
  // the description exists already: its part (and a file's parse) is in what the process holds now
  checkMemory(what, countScene(desc), solverId, false, withDescriptionHeld(countScene(desc)));
  if (isParticleSystem(desc)) {
    checkParticleRanges(desc, options);
    return [];
  }
  return checkRanges(desc, solverId, options);
}

/**
 * A particle system's motion over its first frame in the f64 its solvers (witkin-*) and metrics
 * compute in: each free particle's speed within the frame, at most |v₀| + |g| dt, must leave its
 * kinetic energy ½ m v² finite, and its reach |x₀| + |v₀| dt + ½ |g| dt² finite. Beyond either, the
 * first step is infinite (a velocity or gravity of 1e300 was a "divergence at frame 1").
 */
export function checkParticleRanges(desc: Extract<SceneDesc, { kind: 'particles' }>, options: RangeOptions): void {
  const at = options.where ? `${options.where}: ` : '';
  const dt = options.dt;
  let g = 0, gi = -1;
  desc.forces.forEach((f, k) => {
    if (f.type === 'gravity') {
      const norm = Math.hypot(...f.g);
      if (norm > g) (g = norm), (gi = k);
    }
  });
  for (let i = 0; i < desc.particles.length; i++) {
    const p = desc.particles[i];
    if (p.fixed) continue;
    const v0 = p.velocity ? Math.hypot(...p.velocity) : 0;
    const x0 = Math.max(...p.position.map(Math.abs));
    const speed = v0 + g * dt, reach = x0 + v0 * dt + 0.5 * g * dt * dt;
    if (Number.isFinite(0.5 * p.mass * speed * speed) && Number.isFinite(reach)) continue;
    const blame = v0 * dt >= 0.5 * g * dt * dt ? `particles[${i}].velocity: ${fmt(v0)} m/s` : `forces[${gi}].g: ${fmt(g)} m/s²`;
    throw new InputError(`${at}${blame} gives particle ${i} (${fmt(p.mass)} kg) a kinetic energy or a position beyond f64 within its first frame (dt = ${fmt(dt)} s): its motion cannot be represented`);
  }
}

// ───────────── 3. a run's records: its series, timings and JSON ─────────────

/**
 * What a run keeps per frame and per sampled frame until it ends (run/run.ts): per frame its two
 * timings (msPerFrame, wallMsPerFrame: f64 in JS arrays, which grow by doubling: up to 2 × 8 B each);
 * per sampled frame a SeriesPoint (frame, t, violations, energy, momentum, contacts, awake: an object
 * and a 3-array, measured 200–220 B) and per traced body a 3-array under its key (≈ 80 B).
 * Measured on single-box (pgs-cpu) and pendulum (jacobi-cpu) over 20,000 frames: 237 and 250 B per
 * frame at --sample-every 1; the figures below sum to 252.
 */
export const RUN_RECORD_HEAP = { perFrame: 32, perSample: 220, perTracedSample: 80 };
/**
 * Characters of the JSON record (`run --json`, compare's results.json: JSON.stringify, indent 1): per
 * frame its timing on a line of its own (≈ 22), per sampled frame its series point (≈ 190; measured
 * 193–213 per frame in all at --sample-every 1), per traced body ≈ 60 more.
 */
export const RUN_RECORD_JSON = { perFrame: 22, perSample: 190, perTracedSample: 60 };
/** V8's longest string (2²⁹ − 24 characters on 64-bit builds): JSON.stringify cannot make a longer one. */
export const MAX_STRING_CHARS = 2 ** 29 - 24;

export interface RunRecordPlan {
  frames: number;
  sampleEvery: number;
  /** bodies traced (`run --trace`) */
  traced?: number;
  /** runs kept together (compare's matrix: every run's record lives until results.json is written) */
  runs?: number;
  /** whether the record is written as one JSON text (run --json, compare's results.json) */
  json?: boolean;
  /** the command has --sample-every (bench does not: its sampling is its own) */
  sampleFlag?: boolean;
}

/** Bytes of JS heap and characters of JSON the records of `plan` take. */
export function estimateRunRecords(plan: RunRecordPlan): { heap: number; jsonChars: number; samples: number } {
  const samples = Math.ceil(plan.frames / Math.max(1, plan.sampleEvery)) + 1; // frame 0, every K-th and the last
  const runs = plan.runs ?? 1, traced = plan.traced ?? 0;
  const heap = runs * (plan.frames * RUN_RECORD_HEAP.perFrame + samples * (RUN_RECORD_HEAP.perSample + traced * RUN_RECORD_HEAP.perTracedSample));
  const jsonChars = runs * (plan.frames * RUN_RECORD_JSON.perFrame + samples * (RUN_RECORD_JSON.perSample + traced * RUN_RECORD_JSON.perTracedSample));
  return { heap, jsonChars, samples };
}

/**
 * Refuses (an InputError, one line with the figures) a run whose records do not fit: in the JS heap
 * left, or, written as JSON, in one string. Checked before anything runs: `--frames 1e9` grew to 4 GB in
 * 10 minutes and would have been lost at the end. `flag` names what to change ("--frames").
 */
export function checkRunRecords(what: string, plan: RunRecordPlan, limits: Pick<MemoryLimits, 'heap'> = machineLimits()): void {
  const est = estimateRunRecords(plan);
  const runs = (plan.runs ?? 1) > 1 ? ` over ${plan.runs} runs` : '';
  const per = `${RUN_RECORD_HEAP.perSample + (plan.traced ?? 0) * RUN_RECORD_HEAP.perTracedSample} B per sampled frame, ${RUN_RECORD_HEAP.perFrame} B per frame`;
  const sampled = plan.sampleFlag ?? true;
  const frames = `--frames ${formatCount(plan.frames)}${sampled ? ` at --sample-every ${plan.sampleEvery}` : ''}`;
  const remedy = sampled ? 'fewer frames, or a larger --sample-every' : 'fewer frames';
  if (!(est.heap <= limits.heap))
    throw new InputError(
      `${what}: ${frames} keeps a series and timings of ${approx(est.heap)}${runs} (${per}), beyond the ${formatBytes(limits.heap)} of JS heap this Node process has left: ${remedy}`,
    );
  if (plan.json && !(est.jsonChars <= MAX_STRING_CHARS))
    throw new InputError(
      `${what}: ${frames} makes a JSON record of about ${formatCount(est.jsonChars)} characters${runs}, beyond the ${formatCount(MAX_STRING_CHARS)} of one JavaScript string: ${remedy}`,
    );
}
