/**
 * Exclusive prefix sum of u32 on the GPU, in place: data[k] ← Σ_{m<k} data[m] (mod 2³²), for counts
 * up to 1024³ ≈ 1.07·10⁹ (three levels; 2²⁴ needs three, 2²⁰ two, 1 024 one).
 *
 * Scan-then-propagate (Blelloch 1990's multi-block scheme; Harris, Sengupta & Owens, GPU Gems 3
 * ch. 39): a level scans blocks of B = 1024 elements independently, each block's total going into
 * the next level's array (⌈n/B⌉ entries); that array is scanned the same way, until one block holds
 * it all; then, from the top down, each block of a level adds the scanned total of the blocks before
 * it (add_block_offsets). With s_l the level-l array:  s_l[k] ← scan_B(s_l)[k] + s_{l+1}[⌊k/B⌋].
 * The last level's total (s_L[0]) is the grand total: `total` names where it lies.
 *
 * Inside a workgroup (64 threads, 16 elements each): the block is loaded coalesced into workgroup
 * memory (thread t loads t + 64 k), each thread scans its 16 consecutive entries serially, the 64
 * thread totals are scanned by Hillis–Steele (inclusive: x_t ← x_t + x_{t−2^d} for d = 0..5), and
 * each thread adds the total before it. Hillis–Steele rather than Blelloch's up-sweep/down-sweep:
 * its extra work (n log n instead of 2n) applies to only 64 partial sums per 1 024 elements, and it
 * takes 6 steps of 2 barriers where Blelloch takes 12; the serial part (16 per thread) carries the
 * work efficiency. Barriers are what SwiftShader pays for (each one switches every 4-lane fibre of
 * the workgroup): 256 threads × 4 elements took 2.9–3.9 s for 2²⁰ elements there, 64 × 16 (padded) 0.19–0.21 s.
 * The tile is padded (pad()) so neither the coalesced load nor the serial pass has bank conflicts.
 *
 * Dispatch: one workgroup per block, in a 2-D grid beyond 65 535 blocks (block = wid.y · nwg.x + wid.x).
 */
import { defineRecord, UNIFORM_OFFSET_ALIGNMENT } from './layout.js';
import { Kernel } from './dispatch.js';
import { buildKernels } from './kernels.js';

/** Elements per scanned block (256 threads × 4). */
export const SCAN_BLOCK = 1024;
const SCAN_THREADS = 64;
/** elements per thread */
const PER_THREAD = SCAN_BLOCK / SCAN_THREADS;

export const ScanParamsRecord = defineRecord('ScanParams', [['count', 'u32', 'elements at this level']] as const);

const scanWgsl = /* wgsl */ `
${ScanParamsRecord.wgsl}
@group(0) @binding(0) var<uniform> level: ScanParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;
var<workgroup> tile: array<u32, ${SCAN_BLOCK + SCAN_BLOCK / 32}>;
// tile index of block element e, padded by one word per 32 so that both access patterns below
// (thread t at t + 64 k, and thread t at 16 t + k) fall in 32 distinct banks
fn pad(e: u32) -> u32 { return e + (e >> 5u); }
var<workgroup> partial: array<u32, ${SCAN_THREADS}>;

// s[k] ← Σ_{m<k} s[m] within the block; sums[block] ← the block's total
@compute @workgroup_size(${SCAN_THREADS})
fn scan_blocks(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let block = wid.y * nwg.x + wid.x;
  let base = block * ${SCAN_BLOCK}u;
  let n = level.count;
  for (var k = 0u; k < ${PER_THREAD}u; k++) {
    let idx = base + lid + ${SCAN_THREADS}u * k;
    var v = 0u;
    if (idx < n) { v = data[idx]; }
    tile[pad(lid + ${SCAN_THREADS}u * k)] = v;
  }
  workgroupBarrier();
  // serial exclusive scan of this thread's 4 consecutive entries
  var own: array<u32, ${PER_THREAD}>;
  var run = 0u;
  for (var k = 0u; k < ${PER_THREAD}u; k++) {
    own[k] = run;
    run += tile[pad(${PER_THREAD}u * lid + k)];
  }
  partial[lid] = run;
  workgroupBarrier();
  // Hillis–Steele inclusive scan of the thread totals: x_t ← x_t + x_{t−off}, off = 1, 2, …, 128
  for (var off = 1u; off < ${SCAN_THREADS}u; off = off * 2u) {
    var add = 0u;
    if (lid >= off) { add = partial[lid - off]; }
    workgroupBarrier();
    partial[lid] += add;
    workgroupBarrier();
  }
  let before = partial[lid] - run;
  for (var k = 0u; k < ${PER_THREAD}u; k++) { tile[pad(${PER_THREAD}u * lid + k)] = before + own[k]; }
  workgroupBarrier();
  for (var k = 0u; k < ${PER_THREAD}u; k++) {
    let idx = base + lid + ${SCAN_THREADS}u * k;
    if (idx < n) { data[idx] = tile[pad(lid + ${SCAN_THREADS}u * k)]; }
  }
  if (lid == ${SCAN_THREADS - 1}u) { sums[block] = partial[${SCAN_THREADS - 1}u]; }
}

// s_l[k] += scan(s_{l+1})[⌊k/B⌋]: the total of the blocks before this one
@compute @workgroup_size(${SCAN_THREADS})
fn add_block_offsets(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let block = wid.y * nwg.x + wid.x;
  let add = sums[block];
  let base = block * ${SCAN_BLOCK}u;
  for (var k = 0u; k < ${PER_THREAD}u; k++) {
    let idx = base + lid + ${SCAN_THREADS}u * k;
    if (idx < level.count) { data[idx] += add; }
  }
}
`;

/** The two scan kernels, built once per device and shared by every plan. */
export class PrefixScan {
  private constructor(
    private readonly device: GPUDevice,
    readonly scanKernel: Kernel,
    readonly addKernel: Kernel,
  ) {}

  static async create(device: GPUDevice): Promise<PrefixScan> {
    const [scan, add] = await buildKernels(device, 'prefix scan', () => [Kernel.create(device, 'scan_blocks', scanWgsl), Kernel.create(device, 'add_block_offsets', scanWgsl)]);
    return new PrefixScan(device, scan, add);
  }

  /** A plan that scans the first `count` u32 of `data` in place (its own level buffers and parameters). */
  plan(data: GPUBuffer, count: number): ScanPlan {
    if (!(count >= 1 && Number.isInteger(count))) throw new RangeError(`prefix scan: count ${count} must be a positive integer`);
    if (4 * count > data.size) throw new RangeError(`prefix scan: ${count} elements do not fit a buffer of ${data.size} bytes`);
    return new ScanPlan(this.device, this, data, count);
  }
}

/** The levels of one scan: level l scans `counts[l]` entries of `arrays[l]` (arrays[0] = data). */
export class ScanPlan {
  readonly counts: number[] = [];
  private readonly arrays: GPUBuffer[];
  private readonly owned: GPUBuffer[] = [];
  private readonly uniforms: GPUBuffer;
  private readonly scanGroups: GPUBindGroup[] = [];
  private readonly addGroups: GPUBindGroup[] = [];

  constructor(
    private readonly device: GPUDevice,
    private readonly kernels: PrefixScan,
    data: GPUBuffer,
    readonly count: number,
  ) {
    // level sizes: n_0 = count, n_{l+1} = ⌈n_l / B⌉, until a level fits one block; its total is s_L[0]
    const counts = this.counts;
    for (let n = count; ; n = Math.ceil(n / SCAN_BLOCK)) {
      counts.push(n);
      if (n <= SCAN_BLOCK) break;
    }
    this.arrays = [data];
    for (let l = 0; l < counts.length; l++) {
      const n = l + 1 < counts.length ? counts[l + 1] : 1;
      const b = device.createBuffer({ label: `scan level ${l + 1}`, size: Math.max(16, 4 * n), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
      this.owned.push(b);
      this.arrays.push(b);
    }
    this.uniforms = device.createBuffer({ label: 'scan levels', size: UNIFORM_OFFSET_ALIGNMENT * counts.length, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const u = new DataView(new ArrayBuffer(UNIFORM_OFFSET_ALIGNMENT * counts.length));
    counts.forEach((n, l) => u.setUint32(UNIFORM_OFFSET_ALIGNMENT * l + ScanParamsRecord.offsets.count, n, true));
    device.queue.writeBuffer(this.uniforms, 0, u.buffer);
    for (let l = 0; l < counts.length; l++) {
      const entries = [
        { buffer: this.uniforms, offset: UNIFORM_OFFSET_ALIGNMENT * l, size: 16 },
        this.arrays[l],
        this.arrays[l + 1],
      ];
      this.scanGroups.push(kernels.scanKernel.bind(entries, `scan level ${l}`));
      this.addGroups.push(kernels.addKernel.bind(entries, `scan add level ${l}`));
    }
  }

  /** Where the grand total lies after record (the top level's single entry). */
  get total(): { buffer: GPUBuffer; offset: number } {
    return { buffer: this.arrays[this.arrays.length - 1], offset: 0 };
  }

  /** Records the scan into `pass`: the levels upwards, then the offsets downwards. */
  record(pass: GPUComputePassEncoder): void {
    // a workgroup per block of SCAN_BLOCK entries (gpu/dispatch.ts Kernel: 2-D past 65 535 workgroups)
    const L = this.counts.length;
    for (let l = 0; l < L; l++) this.kernels.scanKernel.dispatch(pass, this.scanGroups[l], this.counts[l], SCAN_BLOCK);
    for (let l = L - 2; l >= 0; l--) this.kernels.addKernel.dispatch(pass, this.addGroups[l], this.counts[l], SCAN_BLOCK);
  }

  destroy(): void {
    for (const b of this.owned) b.destroy();
    this.uniforms.destroy();
  }
}
