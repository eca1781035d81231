/**
 * Counters on the GPU and the indirect dispatches they drive. A kernel that appends to a list takes
 * its slot with atomicAdd on a counter (WebGPU has integer atomics only: u32 counters); a tiny kernel
 * (write_dispatch_args) then turns counters into dispatch arguments in a buffer with INDIRECT usage,
 * and the kernel over the list is dispatched from there (Kernel.dispatchIndirect): the size of the
 * next stage never travels to the host.
 *
 * An argument slot k reads counter c_k, caps it at cap_k (a list's capacity: the entries past it were
 * counted but not written), and asks for threads = min(c_k, cap_k) · scale_k (scale: threads per item,
 * e.g. the bodies a big body is tested against), written as 64-thread workgroups in a 2-D grid:
 *   groups = ⌈threads / 64⌉,  x = min(groups, maxX),  y = ⌈groups / x⌉      (dispatch.ts groups2d)
 * at bytes 12 k .. 12 k + 12 of `args`. The grid rounds up; the kernel over the list checks its
 * thread index against min(c_k, cap_k) · scale_k itself. threads is clamped below 2³² (u32).
 *
 * Within a compute pass each dispatch is its own usage scope (WebGPU), so `args` may be written as
 * storage by one dispatch and read as indirect arguments by the next in the same pass.
 */
import { defineRecord } from './layout.js';
import { Kernel, THREAD_INDEX_WGSL, kernelEntry } from './dispatch.js';
import { buildKernels } from './kernels.js';
import { readBuffers } from './frames.js';

/** One indirect-argument slot: which counter, threads per item, the most items (the list's capacity). */
export interface ArgSlot {
  counter: number;
  scale?: number;
  cap?: number;
}

export const ArgSpecRecord = defineRecord('ArgSpec', [
  ['counter', 'u32', 'index of the counter'],
  ['scale', 'u32', 'threads per item'],
  ['cap', 'u32', 'items at most (capacity)'],
  ['max_x', 'u32', 'maxComputeWorkgroupsPerDimension'],
] as const);

/** Bytes per indirect-argument slot: (x, y, z) as u32. */
export const ARG_SLOT_BYTES = 12;

const argsWgsl = /* wgsl */ `
${ArgSpecRecord.wgsl}
@group(0) @binding(0) var<storage, read> counters: array<u32>;
@group(0) @binding(1) var<storage, read> specs: array<ArgSpec>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;
${THREAD_INDEX_WGSL}
${kernelEntry('write_dispatch_args')} {
  let s = thread_index(gid, nwg);
  if (s >= arrayLength(&specs)) { return; }
  let sp = specs[s];
  let items = min(counters[sp.counter], sp.cap);
  // threads = items · scale, clamped below 2³² (0xFFFFFFC0 = the last multiple of 64)
  var threads = 0xFFFFFFC0u;
  if (sp.scale == 0u || items <= 0xFFFFFFC0u / sp.scale) { threads = items * sp.scale; }
  let groups = (threads + 63u) / 64u;
  let x = min(groups, sp.max_x);
  var y = 1u;
  if (x > 0u) { y = (groups + x - 1u) / x; }
  args[3u * s] = x;
  args[3u * s + 1u] = y;
  args[3u * s + 2u] = 1u;
}
`;

const clearWgsl = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> counters: array<u32>;
${THREAD_INDEX_WGSL}
${kernelEntry('clear_counters')} {
  let k = thread_index(gid, nwg);
  if (k < arrayLength(&counters)) { counters[k] = 0u; }
}
`;

export class Counters {
  private readonly argsGroup: GPUBindGroup;
  private readonly clearGroup: GPUBindGroup;
  private readonly view: DataView;

  private constructor(
    private readonly device: GPUDevice,
    /** the counters (u32 each; atomic<u32> in the kernels that append) */
    readonly buffer: GPUBuffer,
    /** the dispatch arguments, ARG_SLOT_BYTES per slot (INDIRECT | STORAGE) */
    readonly args: GPUBuffer,
    private readonly specs: GPUBuffer,
    private readonly argsKernel: Kernel,
    private readonly clearKernel: Kernel,
    readonly counterCount: number,
    private readonly slots: ArgSlot[],
  ) {
    this.argsGroup = argsKernel.bind([buffer, specs, args], 'write_dispatch_args');
    this.clearGroup = clearKernel.bind([buffer], 'clear_counters');
    this.view = new DataView(new ArrayBuffer(ArgSpecRecord.stride * slots.length));
    this.writeSpecs();
  }

  /** `counterCount` counters and one indirect-argument slot per entry of `slots`. */
  static async create(device: GPUDevice, counterCount: number, slots: ArgSlot[], label = 'counters'): Promise<Counters> {
    if (counterCount < 1 || slots.length < 1) throw new RangeError('Counters: at least one counter and one argument slot');
    for (const s of slots) if (!(s.counter >= 0 && s.counter < counterCount)) throw new RangeError(`Counters: slot reads counter ${s.counter} of ${counterCount}`);
    const [argsKernel, clearKernel] = await buildKernels(device, label, () => [Kernel.create(device, 'write_dispatch_args', argsWgsl), Kernel.create(device, 'clear_counters', clearWgsl)]);
    const buffer = device.createBuffer({ label, size: 4 * counterCount, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const args = device.createBuffer({ label: `${label} args`, size: ARG_SLOT_BYTES * slots.length, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_SRC });
    const specs = device.createBuffer({ label: `${label} specs`, size: ArgSpecRecord.stride * slots.length, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    return new Counters(device, buffer, args, specs, argsKernel, clearKernel, counterCount, slots.map((s) => ({ ...s })));
  }

  /** Changes slot k (e.g. its cap after a list grew); takes effect from the next submission. */
  setSlot(k: number, slot: ArgSlot): void {
    this.slots[k] = { ...slot };
    this.writeSpecs();
  }

  private writeSpecs(): void {
    const maxX = this.device.limits.maxComputeWorkgroupsPerDimension;
    this.slots.forEach((s, k) => {
      ArgSpecRecord.write(this.view, k, 'counter', s.counter);
      ArgSpecRecord.write(this.view, k, 'scale', s.scale ?? 1);
      ArgSpecRecord.write(this.view, k, 'cap', Math.min(s.cap ?? 0xffffffff, 0xffffffff));
      ArgSpecRecord.write(this.view, k, 'max_x', maxX);
    });
    this.device.queue.writeBuffer(this.specs, 0, this.view.buffer);
  }

  /** Byte offset of slot k's arguments in `args`. */
  argsOffset(k: number): number {
    return ARG_SLOT_BYTES * k;
  }

  /** Records: every counter set to 0. */
  recordClear(pass: GPUComputePassEncoder): void {
    this.clearKernel.dispatch(pass, this.clearGroup, this.counterCount);
  }

  /** Records: every slot's arguments written from the counters as they stand at this point of the pass. */
  recordArgs(pass: GPUComputePassEncoder): void {
    this.argsKernel.dispatch(pass, this.argsGroup, this.slots.length);
  }

  /** The counters' values now (a readback: for tests and the host's overflow check, not for a frame). */
  async read(): Promise<Uint32Array> {
    const [data] = await readBuffers(this.device, [this.buffer]);
    return new Uint32Array(data);
  }

  destroy(): void {
    this.buffer.destroy();
    this.args.destroy();
    this.specs.destroy();
  }
}
