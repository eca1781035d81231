/**
 * Counts of the WebGPU calls the host makes, and the host time spent in the ones that can take long, so a
 * run's record can say where its wall time went beside the GPU's own stamps (docs/hardware.md: on the H200
 * the contact benchmark's wall clock ran 5–45× above the stamps). Installed once in Node on Dawn's classes
 * (gpu/device.ts): each wrapped method increments a counter; the submit, the waits (onSubmittedWorkDone
 * and mapAsync, timed to their resolution) and the indirect dispatch (where Dawn validates the arguments:
 * per call a uniform buffer, a bind group and a one-thread dispatch of its own) are also timed. A counter
 * costs a closure call and an add, against the microseconds of the call it counts.
 */

/** Calls since the process started (or since install): counts, and host ms where named *Ms. */
export interface HostCalls {
  /** queue.submit calls and their synchronous ms (with the command buffers' finish) */
  submits: number;
  submitMs: number;
  /** queue.onSubmittedWorkDone waits and the ms until each resolved */
  workDoneWaits: number;
  workDoneMs: number;
  /** buffer.mapAsync calls (readbacks) and the ms until each resolved */
  maps: number;
  mapMs: number;
  /** compute passes begun */
  passes: number;
  /** direct dispatches */
  dispatches: number;
  /** indirect dispatches and their synchronous ms (Dawn's argument validation is encoded there) */
  indirectDispatches: number;
  indirectMs: number;
  /** setPipeline and setBindGroup calls */
  setPipelines: number;
  setBindGroups: number;
  /** objects created: buffers, bind groups, compute pipelines (sync or async), command encoders */
  buffersCreated: number;
  bindGroupsCreated: number;
  pipelinesCreated: number;
  encodersCreated: number;
  /** queue.writeBuffer calls */
  writeBuffers: number;
}

const counts: HostCalls = {
  submits: 0,
  submitMs: 0,
  workDoneWaits: 0,
  workDoneMs: 0,
  maps: 0,
  mapMs: 0,
  passes: 0,
  dispatches: 0,
  indirectDispatches: 0,
  indirectMs: 0,
  setPipelines: 0,
  setBindGroups: 0,
  buffersCreated: 0,
  bindGroupsCreated: 0,
  pipelinesCreated: 0,
  encodersCreated: 0,
  writeBuffers: 0,
};

let installed = false;

/** Whether the counters are installed (Node, after acquireGpu): else every count stays 0. */
export function hostCallsInstalled(): boolean {
  return installed;
}

/** A copy of the counts now. */
export function hostCalls(): HostCalls {
  return { ...counts };
}

/** b − a, field by field. */
export function hostCallsSince(a: HostCalls, b: HostCalls = hostCalls()): HostCalls {
  const d = { ...b };
  for (const k of Object.keys(d) as (keyof HostCalls)[]) d[k] = b[k] - a[k];
  return d;
}

type Key = keyof HostCalls;
type Proto = Record<string, unknown>;

/** Wraps `method` of `proto`: counts into `n`, and where `ms` is given adds its synchronous time (or, async, the time to resolution). */
function wrap(proto: Proto | undefined, method: string, n: Key, ms?: Key, async = false): void {
  const orig = proto?.[method];
  if (typeof orig !== 'function') return;
  if (ms === undefined) {
    proto![method] = function (this: unknown, ...a: unknown[]) {
      counts[n]++;
      return (orig as (...a: unknown[]) => unknown).apply(this, a);
    };
    return;
  }
  proto![method] = function (this: unknown, ...a: unknown[]) {
    counts[n]++;
    const t0 = performance.now();
    const r = (orig as (...a: unknown[]) => unknown).apply(this, a);
    if (async && r instanceof Promise)
      return r.finally(() => {
        counts[ms] += performance.now() - t0;
      });
    counts[ms] += performance.now() - t0;
    return r;
  };
}

/**
 * Installs the counters on the WebGPU classes of `globals` (the `webgpu` package's, once assigned to
 * globalThis); a second call does nothing.
 */
export function installHostCalls(globals: Record<string, unknown>): void {
  if (installed) return;
  const p = (name: string) => (globals[name] as { prototype?: Proto } | undefined)?.prototype;
  const pass = p('GPUComputePassEncoder'), enc = p('GPUCommandEncoder'), dev = p('GPUDevice'), queue = p('GPUQueue'), buf = p('GPUBuffer');
  if (!pass || !enc || !dev || !queue || !buf) return;
  wrap(queue, 'submit', 'submits', 'submitMs');
  wrap(queue, 'onSubmittedWorkDone', 'workDoneWaits', 'workDoneMs', true);
  wrap(queue, 'writeBuffer', 'writeBuffers');
  wrap(buf, 'mapAsync', 'maps', 'mapMs', true);
  wrap(enc, 'beginComputePass', 'passes');
  wrap(pass, 'dispatchWorkgroups', 'dispatches');
  wrap(pass, 'dispatchWorkgroupsIndirect', 'indirectDispatches', 'indirectMs');
  wrap(pass, 'setPipeline', 'setPipelines');
  wrap(pass, 'setBindGroup', 'setBindGroups');
  wrap(dev, 'createBuffer', 'buffersCreated');
  wrap(dev, 'createBindGroup', 'bindGroupsCreated');
  wrap(dev, 'createComputePipeline', 'pipelinesCreated');
  wrap(dev, 'createComputePipelineAsync', 'pipelinesCreated');
  wrap(dev, 'createCommandEncoder', 'encodersCreated');
  installed = true;
}
