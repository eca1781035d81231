/**
 * Times the GPU broad phase (src/collision/gpu-broadphase.ts) beside the CPU's SweepAndPrune on the same
 * boxes: the scenes of scripts/bench-broadphase.ts (pile, moving, shuffled: boxes of half extents
 * 0.1–0.5 m, margin 0.02 m, one static ground plane). Each step: the scene moves, its f64 boxes are
 * computed (shapeAabb), SweepAndPrune updates (wall clock), the boxes are packed to f32 and uploaded,
 * and one GPU update runs in three compute passes, one per stage, with GPU timestamps around each
 * (the adapter's clock where it has timestamp queries; wall clock of submit → done beside it). On the
 * last step the GPU's pairs are checked against SweepAndPrune's (the same set; extras only within f32
 * rounding, test/gpu-broadphase.test.ts). Medians over the timed steps; written to --out.
 *
 *   node --import tsx scripts/bench-gpu-broadphase.ts [n …] [--scenes pile,moving] [--steps 10] [--cell-scale 1] [--out bench-gpu-broadphase.json]
 *   (default n: 10000)
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { acquireGpu } from '../src/gpu/device.js';
import { BROAD_STAGES, GpuBroadPhase, gridCellSize, packAabbs } from '../src/collision/gpu-broadphase.js';
import { SweepAndPrune } from '../src/collision/broadphase.js';
import { computeAabbs, makeScene, type Kind } from './bench-broadphase.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const k = args.indexOf(`--${name}`);
  return k >= 0 ? args.splice(k, 2)[1] : undefined;
};
const out = flag('out') ?? 'bench-gpu-broadphase.json';
const steps = Number(flag('steps') ?? 10);
/** multiplies the cell edge of gridCellSize (a measurement of the choice) */
const cellScale = Number(flag('cell-scale') ?? 1);
const kinds = (flag('scenes') ?? 'pile,moving,shuffled').split(',') as Kind[];
const sizes = args.map(Number).filter((x) => x > 0);
const ns = sizes.length ? sizes : [10000];

function median(v: number[]): number {
  const w = [...v].sort((x, y) => x - y);
  return w.length ? 0.5 * (w[(w.length - 1) >> 1] + w[w.length >> 1]) : NaN;
}

const gpu = await acquireGpu();
const { device } = gpu;
console.log(`GPU broad phase, ms per update: ${gpu.adapterName}${gpu.timestamps ? ' (GPU timestamps)' : ' (no timestamp queries: wall clock)'}; CPU ${cpus().length} cores ${cpus()[0]?.model ?? '?'}, Node ${process.version}`);

const Q = 2 * BROAD_STAGES.length;
const querySet = gpu.timestamps ? device.createQuerySet({ type: 'timestamp', count: Q }) : null;
const resolve = device.createBuffer({ size: 8 * Q, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
const readback = device.createBuffer({ size: 8 * Q, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });

interface Row {
  scene: Kind;
  n: number;
  pairs: number;
  big: number;
  cellSize: number;
  gpuMs: number;
  stageMs: Record<string, number>;
  gpuWallMs: number;
  uploadMs: number;
  sapMs: number;
  sameAsSap: boolean;
  extras: number;
}
const rows: Row[] = [];
console.log(['scene', 'n', 'pairs', 'big', 'cell m', 'GPU ms', ...BROAD_STAGES, 'GPU wall', 'upload', 'CPU SAP ms', 'same pairs'].join('\t'));
for (const n of ns) {
  for (const kind of kinds) {
    const scene = makeScene(kind, n - 1, 1234 + n);
    const sap = new SweepAndPrune();
    const bp = await GpuBroadPhase.create(device, scene.n, 8 * scene.n);
    const aabbBuf = device.createBuffer({ size: 32 * scene.n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const t: { gpu: number[]; wall: number[]; upload: number[]; sap: number[]; stages: number[][] } = { gpu: [], wall: [], upload: [], sap: [], stages: BROAD_STAGES.map(() => []) };
    const warm = 2;
    let last: { pairs: Int32Array; found: number; big: number } = { pairs: new Int32Array(0), found: 0, big: 0 };
    for (let step = 0; step < warm + steps; step++) {
      scene.step();
      computeAabbs(scene);
      let t0 = performance.now();
      sap.update(scene.aabbs, scene.n, scene.isStatic);
      const sapMs = performance.now() - t0;
      t0 = performance.now();
      if (step === 0) bp.configure(scene.n, cellScale * gridCellSize(scene.aabbs, scene.n));
      device.queue.writeBuffer(aabbBuf, 0, packAabbs(scene.aabbs, scene.n, scene.isStatic));
      await device.queue.onSubmittedWorkDone();
      const uploadMs = performance.now() - t0;
      const encoder = device.createCommandEncoder();
      let open: GPUComputePassEncoder | null = null;
      let q = 0;
      bp.record((name) => {
        open?.end();
        const k = BROAD_STAGES.indexOf(name as (typeof BROAD_STAGES)[number]);
        q = 2 * k;
        open = encoder.beginComputePass(querySet ? { timestampWrites: { querySet, beginningOfPassWriteIndex: q, endOfPassWriteIndex: q + 1 } } : {});
        return open;
      }, aabbBuf);
      (open as GPUComputePassEncoder | null)?.end();
      if (querySet) {
        encoder.resolveQuerySet(querySet, 0, Q, resolve, 0);
        encoder.copyBufferToBuffer(resolve, 0, readback, 0, 8 * Q);
      }
      t0 = performance.now();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      const wallMs = performance.now() - t0;
      let stamps: BigUint64Array | null = null;
      if (querySet) {
        await readback.mapAsync(GPUMapMode.READ);
        stamps = new BigUint64Array(readback.getMappedRange().slice(0));
        readback.unmap();
      }
      if (step >= warm) {
        t.sap.push(sapMs);
        t.upload.push(uploadMs);
        t.wall.push(wallMs);
        if (stamps) {
          // a stage's time: its end less the later of its start and the previous stage's end (frames.ts readStamps)
          let before = stamps[0];
          for (let k = 0; k < BROAD_STAGES.length; k++) {
            const b = stamps[2 * k] > before ? stamps[2 * k] : before, e = stamps[2 * k + 1];
            t.stages[k].push(Number(e - b) / 1e6);
            before = e;
          }
          t.gpu.push(Number(stamps[Q - 1] - stamps[0]) / 1e6);
        }
      }
      if (step === warm + steps - 1) {
        const r = await bp.readPairs();
        if (r.overflow) throw new Error(`pair buffer overflow: ${r.found} pairs, capacity ${r.capacity}`);
        last = r;
      }
    }
    // the same set as SweepAndPrune (GPU ⊇ CPU; extras only within f32 rounding of touching)
    const cpuPairs = sap.pairs.subarray(0, 2 * sap.pairCount);
    const key = (p: Int32Array, k: number) => p[2 * k] * 2 ** 32 + p[2 * k + 1];
    const g = new Set<number>();
    for (let k = 0; k < last.pairs.length / 2; k++) g.add(key(last.pairs, k));
    let missing = 0;
    for (let k = 0; k < cpuPairs.length / 2; k++) if (!g.has(key(cpuPairs, k))) missing++;
    const c = new Set<number>();
    for (let k = 0; k < cpuPairs.length / 2; k++) c.add(key(cpuPairs, k));
    // an extra pair must be within f32 rounding of touching: lo_a − hi_b ≤ 2⁻²⁴ (|lo_a| + |hi_b|) per axis
    let extras = 0;
    const a = scene.aabbs;
    for (let k = 0; k < last.pairs.length / 2; k++) {
      if (c.has(key(last.pairs, k))) continue;
      extras++;
      const i = last.pairs[2 * k], j = last.pairs[2 * k + 1];
      for (let d = 0; d < 3; d++)
        for (const [x, y] of [[i, j], [j, i]]) {
          const lo = a[6 * x + d], hi = a[6 * y + 3 + d];
          if (lo - hi > 2 ** -24 * (Math.abs(lo) + Math.abs(hi))) throw new Error(`${kind} ${n}: extra pair (${i}, ${j}) ${lo - hi} m apart, beyond f32 rounding`);
        }
    }
    const row: Row = {
      scene: kind,
      n: scene.n,
      pairs: sap.pairCount,
      big: last.big,
      cellSize: bp.cellSize,
      gpuMs: median(t.gpu),
      stageMs: Object.fromEntries(BROAD_STAGES.map((s, k) => [s, median(t.stages[k])])),
      gpuWallMs: median(t.wall),
      uploadMs: median(t.upload),
      sapMs: median(t.sap),
      sameAsSap: missing === 0 && extras === 0,
      extras,
    };
    if (missing > 0) throw new Error(`${kind} ${n}: the GPU missed ${missing} of SweepAndPrune's pairs`);
    rows.push(row);
    console.log([kind, row.n, row.pairs, row.big, row.cellSize.toFixed(3), row.gpuMs.toFixed(2), ...BROAD_STAGES.map((s) => row.stageMs[s].toFixed(2)), row.gpuWallMs.toFixed(2), row.uploadMs.toFixed(2), row.sapMs.toFixed(2), row.sameAsSap ? 'yes' : `+${extras} within f32`].join('\t'));
    bp.destroy();
    aabbBuf.destroy();
  }
}
const result = {
  what: 'GPU broad phase (hashed grid, collision/gpu-broadphase.ts) against CPU SweepAndPrune, ms per update, medians',
  adapter: gpu.adapterName,
  software: gpu.software,
  clock: gpu.timestamps ? 'gpu-timestamp' : 'wall',
  cpu: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
  node: process.version,
  steps,
  cellScale,
  rows,
};
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
console.log(`written: ${out}`);
process.exit(0);
