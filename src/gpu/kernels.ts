/**
 * Compute kernels from WGSL, as every GPU solver builds them: one shader module per kernel
 * whose entry point is the kernel's name, its pipeline with the 'auto' layout, and bind groups
 * of group 0 from a list of buffers (binding k = the k-th). Pipeline creation is checked in a
 * validation error scope (buildKernels): a WGSL or binding error is thrown at creation, named
 * after the solver, instead of surfacing later as a silent no-op dispatch.
 */

/** A binding: a whole buffer, or a range of one (a uniform record at an offset). */
export type BufferBinding = GPUBuffer | GPUBufferBinding;

/**
 * The pipeline of WGSL `code` whose entry point is `name`. Synchronous on purpose: dawn.node's
 * createComputePipelineAsync aborts the process on SwiftShader.
 */
export function computePipeline(device: GPUDevice, name: string, code: string): GPUComputePipeline {
  let known = pipelines.get(device);
  if (!known) pipelines.set(device, (known = new Map()));
  const key = `${name}\n${code}`;
  let pipeline = known.get(key);
  if (!pipeline) {
    const module = device.createShaderModule({ label: name, code });
    pipeline = device.createComputePipeline({ label: name, layout: 'auto', compute: { module, entryPoint: name } });
    known.set(key, pipeline);
  }
  return pipeline;
}

/**
 * The pipelines made on each device, by entry point and WGSL text. A pipeline is immutable and holds no
 * buffer (bind groups do), so solvers created again on one device — a compare over several scenes, the
 * viewer switching scenes, the tests — share it instead of compiling the same WGSL again, the slow part of
 * creating a solver on SwiftShader. Forgotten when a creation fails validation (buildKernels), so a broken
 * pipeline is never handed out again without its error.
 */
const pipelines = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

/** A bind group of `pipeline`'s group 0: `buffers[k]` at binding k. */
export function bindBuffers(device: GPUDevice, pipeline: GPUComputePipeline, label: string, buffers: BufferBinding[]): GPUBindGroup {
  return device.createBindGroup({
    label,
    layout: pipeline.getBindGroupLayout(0),
    entries: buffers.map((b, binding) => ({ binding, resource: isBufferBinding(b) ? b : { buffer: b } })),
  });
}

function isBufferBinding(b: BufferBinding): b is GPUBufferBinding {
  return 'buffer' in b;
}

/**
 * Runs `build` (the solver's computePipeline / bindBuffers calls) in a validation error scope and
 * throws `<who>: pipeline creation failed: <message>` if anything in it failed validation.
 */
export async function buildKernels<T>(device: GPUDevice, who: string, build: () => T): Promise<T> {
  device.pushErrorScope('validation');
  let result: T;
  try {
    result = build();
  } finally {
    const err = await device.popErrorScope();
    if (err) {
      pipelines.delete(device);
      throw new Error(`${who}: pipeline creation failed: ${err.message}`);
    }
  }
  return result;
}
