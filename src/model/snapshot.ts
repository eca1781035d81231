/**
 * What a solver hands back, as plain data: its state (Snapshot: f64 arrays of the world's bodies, from
 * which the metrics recompute everything they report), its step times (StepTimings) and the adapter it
 * ran on (AdapterDescription). In the model, so that metrics, runs, reports and the viewer read them
 * without importing a solver (design: arrows point down only).
 */

export interface Snapshot {
  /** frames stepped since creation */
  frame: number;
  /** simulated time, s */
  time: number;
  /** the desc's bodies only (anchor bodies are left out) */
  bodyCount: number;
  position: Float64Array; // 3·bodyCount
  orientation: Float64Array; // 4·bodyCount [x y z w]
  linearVelocity: Float64Array; // 3·bodyCount
  angularVelocity: Float64Array; // 3·bodyCount
  /**
   * Per body 1 while it sleeps (islands and sleeping: collision/islands.ts; Rapier's own sleeping),
   * 0 while awake; absent when the solver never sleeps (every body awake). Fixed bodies are 0.
   */
  asleep?: Uint8Array; // bodyCount
}

/** Dynamic bodies awake in a snapshot: not fixed (`dynamic[i]`), not asleep. */
export function awakeBodies(snap: Snapshot, dynamic: ArrayLike<boolean | number>): number {
  let k = 0;
  for (let i = 0; i < snap.bodyCount; i++) if (dynamic[i] && !(snap.asleep && snap.asleep[i])) k++;
  return k;
}

export interface StepTimings {
  /** which clock the per-step times come from */
  clock: 'gpu-timestamp' | 'wall';
  /** per-frame times in milliseconds, one entry per stepped frame (or per batch average) */
  msPerFrame: number[];
  /** wall-clock ms per frame, without readbacks (batch wall time / frames in the batch) */
  wallMsPerFrame: number[];
  /** why the GPU's timestamps were not used although the adapter has them (then clock is 'wall') */
  clockNote?: string;
  /**
   * a GPU solver's host ms since the last reset: recording the frames, finish + submit, the wait for the
   * GPU, the stamps' readback (gpu/frames.ts FrameHostTimes)
   */
  host?: { batches: number; encodeMs: number; submitMs: number; waitMs: number; stampsMs: number };
}

export interface AdapterDescription {
  /** e.g. "nvidia / hopper / NVIDIA H100" or "cpu" */
  name: string;
  /** true for a software adapter (SwiftShader) */
  software: boolean;
  /** GPU timestamp queries available */
  timestamps: boolean;
}

