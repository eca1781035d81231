/** A built-in scene: named numeric parameters with defaults, and a builder. */
import type { WorldDesc } from '../model/world.js';

export interface ParamSpec {
  default: number;
  min?: number;
  max?: number;
  integer?: boolean;
  help: string;
}

export interface SceneInfo {
  name: string;
  description: string;
  params: Record<string, ParamSpec>;
  build(params: Record<string, number>): WorldDesc;
}

/** Defaults overlaid with `given`; throws an Error naming the first bad parameter. */
export function resolveParams(scene: SceneInfo, given: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, spec] of Object.entries(scene.params)) out[k] = spec.default;
  for (const [k, v] of Object.entries(given)) {
    const spec = scene.params[k];
    if (!spec) throw new Error(`scene '${scene.name}' has no parameter '${k}' (it has: ${Object.keys(scene.params).join(', ')})`);
    if (!Number.isFinite(v)) throw new Error(`parameter '${k}' must be a finite number`);
    if (spec.integer && !Number.isInteger(v)) throw new Error(`parameter '${k}' must be an integer`);
    if (spec.min !== undefined && v < spec.min) throw new Error(`parameter '${k}' must be ≥ ${spec.min}`);
    if (spec.max !== undefined && v > spec.max) throw new Error(`parameter '${k}' must be ≤ ${spec.max}`);
    out[k] = v;
  }
  return out;
}
