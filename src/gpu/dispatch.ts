/**
 * One kernel description and one dispatcher: a compute kernel is its WGSL (entry point = its name),
 * its pipeline, and dispatches of a number of threads, either counted on the host (direct) or read
 * from a GPU buffer written by an earlier kernel (indirect: gpu/counters.ts), so that a frame whose
 * work sizes come out of the GPU (pairs found, bodies in a list) needs no readback.
 *
 * Threads beyond 65 535 workgroups (WebGPU's default maxComputeWorkgroupsPerDimension) go into a 2-D
 * grid of rows of the widest dispatch, as gpu-base.ts groupsFor does. A kernel finds its linear
 * thread index with `thread_index(gid, nwg)` (THREAD_INDEX_WGSL): gid.y · (nwg.x · 64) + gid.x, read
 * from the builtin num_workgroups, so the same kernel serves direct and indirect dispatches without
 * a row width in its parameters. The grid rounds up: a kernel checks its index against its count.
 *
 * Invariants: a kernel declared here runs 64 threads per workgroup (DISPATCH_WORKGROUP_SIZE) and
 * binds its buffers in group 0 in the order of its WGSL bindings.
 */
import { bindBuffers, computePipeline, type BufferBinding } from './kernels.js';

/** Threads per workgroup of the kernels this module dispatches (the solvers' WORKGROUP_SIZE). */
export const DISPATCH_WORKGROUP_SIZE = 64;

/** WGSL: the linear thread index of a (possibly 2-D) dispatch of 64-thread workgroups. */
export const THREAD_INDEX_WGSL = /* wgsl */ `
fn thread_index(gid: vec3u, nwg: vec3u) -> u32 { return gid.y * (nwg.x * ${DISPATCH_WORKGROUP_SIZE}u) + gid.x; }
`;

/** The entry point's signature line for a 64-thread kernel `name` (gid and nwg builtins). */
export function kernelEntry(name: string): string {
  return `@compute @workgroup_size(${DISPATCH_WORKGROUP_SIZE}) fn ${name}(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u)`;
}

/**
 * Workgroups (x, y) for `threads` threads of `perGroup` each: one row while ≤ maxX workgroups,
 * else rows of maxX (y = ⌈groups / maxX⌉). (0, 1) for no threads.
 */
export function groups2d(threads: number, maxX: number, perGroup = DISPATCH_WORKGROUP_SIZE): [number, number] {
  const groups = Math.ceil(threads / perGroup);
  if (groups <= maxX) return [groups, 1];
  const y = Math.ceil(groups / maxX);
  if (y > maxX) throw new RangeError(`dispatch of ${threads} threads exceeds ${maxX}² workgroups of ${perGroup}`);
  return [maxX, y];
}

/** A compute kernel: its pipeline, bind groups from buffer lists, direct and indirect dispatches. */
export class Kernel {
  private constructor(
    readonly name: string,
    readonly pipeline: GPUComputePipeline,
    private readonly device: GPUDevice,
  ) {}

  /** The kernel of WGSL `code` whose entry point is `name` (call inside buildKernels to get its errors thrown). */
  static create(device: GPUDevice, name: string, code: string): Kernel {
    return new Kernel(name, computePipeline(device, name, code), device);
  }

  /** A bind group of group 0: buffers[k] at binding k. */
  bind(buffers: BufferBinding[], label = this.name): GPUBindGroup {
    return bindBuffers(this.device, this.pipeline, label, buffers);
  }

  /** Dispatches `threads` threads (host-counted) of this kernel; nothing when threads = 0. */
  dispatch(pass: GPUComputePassEncoder, bindGroup: GPUBindGroup, threads: number, perGroup = DISPATCH_WORKGROUP_SIZE): void {
    const [x, y] = groups2d(threads, this.device.limits.maxComputeWorkgroupsPerDimension, perGroup);
    if (x === 0) return;
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(x, y);
  }

  /** Dispatches the workgroups (x, y, z) stored as three u32 at byte `offset` of `args` (INDIRECT usage). */
  dispatchIndirect(pass: GPUComputePassEncoder, bindGroup: GPUBindGroup, args: GPUBuffer, offset: number): void {
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroupsIndirect(args, offset);
  }
}
