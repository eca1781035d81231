/**
 * WebGPU device acquisition, in Node (Dawn, through the `webgpu` package) and in
 * the browser (navigator.gpu), behind one function.
 *
 * Order in Node: a hardware adapter if the Vulkan loader finds one; else the
 * SwiftShader software adapter that Debian's `chromium-common` ships, by pointing
 * the loader at its ICD file; else NoGpuError with a one-line remedy.
 */

import { installHostCalls } from './host-calls.js';

export const swiftShaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';

export interface GpuContext {
  device: GPUDevice;
  /** "vendor architecture (description)" as the adapter reports it */
  adapterName: string;
  software: boolean;
  timestamps: boolean;
  limits: GPUSupportedLimits;
}

export class NoGpuError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoGpuError';
  }
}

export const noGpuHint =
  'no WebGPU adapter: install a Vulkan GPU driver, or the SwiftShader software adapter with `apt-get install chromium-common` (Debian), then run again';

/**
 * Dawn instances made in Node. They must outlive every adapter and device made
 * from them: dawn.node aborts the process when an instance is garbage-collected
 * while its device is still in use.
 */
const liveInstances: GPU[] = [];

/**
 * Dawn's toggles for a measuring tool: Dawn rounds timestamp queries down to a multiple of 2¹⁶ ns
 * (65.5 µs, its `timestamp_quantization` toggle, a browser's defence against timing attacks), which is
 * a third of a 100k-bead step on an H200 (0.197 ms); Node runs our own code, so the full resolution is
 * taken (the browser's viewer keeps the browser's quantised clock).
 */
const DAWN_FLAGS = ['disable-dawn-features=timestamp_quantization'];

/**
 * SOLVERLAB_DAWN_VALIDATION=off: Dawn's `skip_validation` toggle, for a measurement (default: validation on). With
 * validation on, Dawn encodes each indirect dispatch as a one-thread dispatch of its own that copies the arguments
 * into a scratch buffer (zeroed if beyond maxComputeWorkgroupsPerDimension), with a uniform buffer (and its staging
 * buffer) and a bind group made for that call alone (ComputePassEncoder::TransformIndirectDispatchBuffer). Our
 * arguments are within the bound by construction (gpu/counters.ts write_dispatch_args: x ≤ max_x, y ≤ 2²⁶ / max_x),
 * so the copy changes nothing the kernels compute; it costs per call: on SwiftShader a median 23 µs of encoding, and on
 * the GPU an extra dispatch (gs-gpu: 914 indirect dispatches a frame on the 1k rain). Off, every other WebGPU
 * validation is off too: a wrong binding is then undefined behaviour, not an error, so the tests keep it on.
 */
export function dawnValidation(): boolean {
  return (typeof process === 'undefined' ? undefined : process.env?.SOLVERLAB_DAWN_VALIDATION) !== 'off';
}

function newInstance(create: (flags: string[]) => GPU): GPU {
  const gpu = create(dawnValidation() ? DAWN_FLAGS : [...DAWN_FLAGS, 'enable-dawn-features=skip_validation']);
  liveInstances.push(gpu);
  return gpu;
}

const isNode = typeof process !== 'undefined' && !!process.versions?.node && typeof navigator === 'undefined';

async function nodeAdapter(powerPreference: GPUPowerPreference): Promise<GPUAdapter | null> {
  let mod: { create: (flags: string[]) => GPU; globals: Record<string, unknown> };
  try {
    mod = (await import('webgpu')) as unknown as typeof mod;
  } catch (e) {
    throw new NoGpuError(`the 'webgpu' package (Dawn for Node) could not be loaded: ${(e as Error).message.split('\n')[0]}`);
  }
  Object.assign(globalThis, mod.globals); // GPUBufferUsage, GPUMapMode, … as in a browser
  installHostCalls(mod.globals); // the WebGPU calls counted for the run records (host-calls.ts)
  if (!process.env.XDG_RUNTIME_DIR) {
    // Vulkan drivers complain on stderr without a private (0700) runtime dir
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    process.env.XDG_RUNTIME_DIR = mkdtempSync(join(tmpdir(), 'solverlab-xdg-'));
  }
  // no driver manifest on the loader's path: skip the attempt that can only fail (and print Dawn's
  // "Found no drivers" warnings on every run); --verbose makes it anyway (vulkan-drivers.ts)
  const drivers = await import('./vulkan-drivers.js');
  const hopeless = !drivers.gpuVerbose() && (await drivers.vulkanDriverManifests()).length === 0 && !process.env.VK_ICD_FILENAMES && !process.env.VK_DRIVER_FILES;
  let adapter = hopeless ? null : await newInstance(mod.create).requestAdapter({ powerPreference });
  if (!adapter && !process.env.VK_ICD_FILENAMES) {
    const { existsSync } = await import('node:fs');
    if (existsSync(swiftShaderIcd)) {
      process.env.VK_ICD_FILENAMES = swiftShaderIcd;
      adapter = await newInstance(mod.create).requestAdapter({ powerPreference });
    }
  }
  return adapter;
}

function describe(adapter: GPUAdapter): { name: string; software: boolean } {
  const info = adapter.info;
  const parts = [info.vendor, info.architecture].filter(Boolean).join(' ');
  const detail = info.description || info.device;
  const name = `${parts || 'unknown adapter'}${detail ? ` (${detail})` : ''}`;
  const software = !!(info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter || /swiftshader|llvmpipe|lavapipe/i.test(name);
  return { name, software };
}

/** Acquire an adapter and a device with the limits of the adapter (big scenes need them). */
export async function acquireGpu(opts: { powerPreference?: GPUPowerPreference } = {}): Promise<GpuContext> {
  const powerPreference = opts.powerPreference ?? 'high-performance';
  let adapter: GPUAdapter | null;
  if (isNode) adapter = await nodeAdapter(powerPreference);
  else if (typeof navigator !== 'undefined' && navigator.gpu) adapter = await navigator.gpu.requestAdapter({ powerPreference });
  else throw new NoGpuError('this browser has no WebGPU (navigator.gpu): use a recent Chrome or Edge, or enable WebGPU in its flags');
  if (!adapter) throw new NoGpuError(noGpuHint);

  const { name, software } = describe(adapter);
  const timestamps = adapter.features.has('timestamp-query');
  const want: (keyof GPUSupportedLimits)[] = [
    'maxStorageBufferBindingSize',
    'maxBufferSize',
    'maxStorageBuffersPerShaderStage',
    'maxComputeWorkgroupsPerDimension',
  ];
  const requiredLimits: Record<string, number> = {};
  for (const k of want) requiredLimits[k] = adapter.limits[k] as number;
  const device = await adapter.requestDevice({
    requiredFeatures: timestamps ? ['timestamp-query'] : [],
    requiredLimits,
  });
  return { device, adapterName: name, software, timestamps, limits: device.limits };
}
