/**
 * Times the per-frame GPU colouring (src/gpu/colouring.ts) and the pair table's rebuild and lookup
 * (src/gpu/pair-table.ts) on pile-like contact graphs: an nx × ny × nz lattice of bodies over one fixed
 * ground (every bottom body touches it), lattice neighbours in contact with probability 0.9, the contact
 * list shuffled (as a narrow phase's atomic appends give it); the lattice in the proportions 25 : 16 : 25
 * (25 × 16 × 25 at 10k bodies: the test's pile; 54 × 34 × 54 at 100k). Each is one compute pass with GPU timestamps around it (the adapter's clock
 * where it has timestamp queries), wall clock of submit → done beside it; the CPU greedy colouring
 * (model/colouring.ts) on the same graph, wall clock. Medians over the timed repetitions.
 *
 *   node --import tsx scripts/bench-gpu-colouring.ts [bodies …] [--reps 8]     (default: 10000 100000)
 *
 * SwiftShader 5.0.0 on this 2-core Xeon VM (load ~2–3 from other jobs), GPU timestamps, medians of 5:
 *   bodies  contacts  colouring  colours  overflow  rounds  pair table (insert + find)  CPU greedy (colours)
 *   10 001    26 382    85 ms        9        0        24        4.4 ms                   32 ms (9)
 *   99 145   264 677  1024 ms       10        0        27         55 ms                  247 ms (11)
 * (sizes at 100k: 45553 44546 43364 41770 38870 32174 15801 2518 80 1.) SwiftShader runs the kernels on
 * the CPU's two cores: these say the work grows linearly, not what a GPU takes.
 */
import { acquireGpu } from '../src/gpu/device.js';
import { GpuColouring } from '../src/gpu/colouring.js';
import { GpuPairTable } from '../src/gpu/pair-table.js';
import { colourConstraints } from '../src/model/colouring.js';
import { mulberry32 } from '../src/math/random.js';

const args = process.argv.slice(2);
const k = args.indexOf('--reps');
const reps = k >= 0 ? Number(args.splice(k, 2)[1]) : 8;
const sizes = args.map(Number).filter((x) => x > 0);
const ns = sizes.length ? sizes : [10_000, 100_000];

const median = (v: number[]) => {
  const w = [...v].sort((x, y) => x - y);
  return 0.5 * (w[(w.length - 1) >> 1] + w[w.length >> 1]);
};

function pile(bodies: number, seed: number): { pairs: Uint32Array<ArrayBuffer>; bodyCount: number } {
  // a lattice 25:16:25 in shape (a pile wider than tall)
  const s = Math.cbrt(bodies / (25 * 16 * 25));
  const nx = Math.max(1, Math.round(25 * s)), ny = Math.max(1, Math.round(16 * s)), nz = Math.max(1, Math.round(25 * s));
  const rand = mulberry32(seed);
  const id = (x: number, y: number, z: number) => 1 + x + nx * (z + nz * y);
  const w: number[] = [];
  for (let y = 0; y < ny; y++)
    for (let z = 0; z < nz; z++)
      for (let x = 0; x < nx; x++) {
        if (y === 0) w.push(0, id(x, y, z));
        if (x + 1 < nx && rand() < 0.9) w.push(id(x, y, z), id(x + 1, y, z));
        if (z + 1 < nz && rand() < 0.9) w.push(id(x, y, z), id(x, y, z + 1));
        if (y + 1 < ny && rand() < 0.9) w.push(id(x, y, z), id(x, y + 1, z));
      }
  const n = w.length / 2;
  for (let a = n - 1; a > 0; a--) {
    const b = Math.floor(rand() * (a + 1));
    for (const o of [0, 1]) [w[2 * a + o], w[2 * b + o]] = [w[2 * b + o], w[2 * a + o]];
  }
  return { pairs: Uint32Array.from(w), bodyCount: 1 + nx * ny * nz };
}

const gpu = await acquireGpu();
const { device } = gpu;
console.log(`GPU colouring and pair table, ms: ${gpu.adapterName}${gpu.timestamps ? ' (GPU timestamps)' : ' (no timestamp queries: wall clock only)'}; medians of ${reps}`);
const querySet = gpu.timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 }) : null;
const resolve = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
const readback = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const upload = (d: Uint32Array<ArrayBuffer>) => {
  const b = device.createBuffer({ size: Math.max(16, d.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(b, 0, d);
  return b;
};

/** one pass recorded by `record`, timed: [GPU ms (NaN without timestamps), wall ms] */
async function timed(record: (pass: GPUComputePassEncoder) => void): Promise<[number, number]> {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass(querySet ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {});
  record(pass);
  pass.end();
  if (querySet) {
    encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
    encoder.copyBufferToBuffer(resolve, 0, readback, 0, 16);
  }
  const t0 = performance.now();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  const wall = performance.now() - t0;
  let ms = NaN;
  if (querySet) {
    await readback.mapAsync(GPUMapMode.READ);
    const s = new BigUint64Array(readback.getMappedRange().slice(0));
    readback.unmap();
    ms = Number(s[1] - s[0]) / 1e6;
  }
  return [ms, wall];
}

console.log(['bodies', 'contacts', 'colour GPU', 'wall', 'colours', 'overflow', 'rounds', 'sizes', 'table GPU', 'wall', 'CPU greedy ms', 'greedy colours'].join('\t'));
for (const n of ns) {
  const g = pile(n, 4);
  const count = g.pairs.length / 2;
  const pairs = upload(g.pairs);
  const flagWords = new Uint32Array(g.bodyCount);
  flagWords[0] = 1;
  const flags = upload(flagWords);
  const col = await GpuColouring.create(device, { capacity: count, bodyCapacity: g.bodyCount });
  col.configure(g.bodyCount);
  const colCount = col.setHostCount(count);
  const table = await GpuPairTable.create(device, count, count);
  const ins = table.setHostCount('insert', count), fnd = table.setHostCount('find', count);
  const t = { col: [] as number[], colWall: [] as number[], tab: [] as number[], tabWall: [] as number[] };
  for (let r = 0; r < reps + 1; r++) {
    const [c, cw] = await timed((pass) => col.record(pass, { pairs, flags, count: colCount }));
    const [p, pw] = await timed((pass) => {
      table.recordInsert(pass, pairs, ins);
      table.recordFind(pass, pairs, pairs, fnd);
    });
    if (r === 0) continue; // warm-up
    t.col.push(c);
    t.colWall.push(cw);
    t.tab.push(p);
    t.tabWall.push(pw);
  }
  const res = await col.read();
  const tab = await table.read();
  if (tab.inserted !== count || tab.found.some((x, q) => x !== q)) throw new Error(`pair table: ${tab.inserted} of ${count} inserted, or a pair not found as itself`);
  const ib0 = Int32Array.from({ length: count }, (_, q) => g.pairs[2 * q]), ib1 = Int32Array.from({ length: count }, (_, q) => g.pairs[2 * q + 1]);
  const inverseMass = Float64Array.from(flagWords, (f) => (f ? 0 : 1));
  const t0 = performance.now();
  const greedy = colourConstraints({ constraintCount: count, bodyCount: g.bodyCount, ib0, ib1, inverseMass });
  const greedyMs = performance.now() - t0;
  const rounds = res.survivors.findIndex((s) => s === 0) + 1;
  console.log([g.bodyCount, count, median(t.col).toFixed(2), median(t.colWall).toFixed(1), res.coloursUsed, res.overflow, rounds || `>${col.rounds}`, res.sizes.slice(0, res.coloursUsed).join(' '), median(t.tab).toFixed(2), median(t.tabWall).toFixed(1), greedyMs.toFixed(0), greedy.colourCount].join('\t'));
  col.destroy();
  table.destroy();
  pairs.destroy();
  flags.destroy();
}
