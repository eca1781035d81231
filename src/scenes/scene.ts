/** A built-in scene: named parameters (numbers, and vectors for the particle scenes) with defaults, and a builder. */
import type { WorldDesc } from '../model/world.js';
import type { SceneDesc } from '../model/scene-desc.js';

export interface ParamSpec {
  default: number;
  min?: number;
  max?: number;
  integer?: boolean;
  help: string;
}

/** A vector parameter, given on the command line as `--param position=0,-2`. */
export interface VectorParamSpec {
  default: number[];
  help: string;
}

export type ParamValue = number | number[];

export interface SceneInfo<D extends SceneDesc = SceneDesc> {
  name: string;
  description: string;
  params: Record<string, ParamSpec>;
  vectorParams?: Record<string, VectorParamSpec>;
  /** `vectors` holds every vector parameter (defaults filled in) for scenes that have them */
  build(params: Record<string, number>, vectors?: Record<string, number[]>): D;
}

/** A scene of rigid bodies: its build returns a WorldDesc. */
export type RigidSceneInfo = SceneInfo<WorldDesc>;

/** Defaults overlaid with `given` (numbers only); throws an Error naming the first bad parameter. */
export function resolveParams(scene: SceneInfo, given: Record<string, number>): Record<string, number> {
  return resolveSceneParams(scene, given).params;
}

function allNames(scene: SceneInfo): string {
  return [...Object.keys(scene.params), ...Object.keys(scene.vectorParams ?? {})].join(', ');
}

/** Number and vector parameters, defaults overlaid with `given`; throws an Error naming the first bad one. */
export function resolveSceneParams(
  scene: SceneInfo,
  given: Record<string, ParamValue>,
): { params: Record<string, number>; vectors: Record<string, number[]> } {
  const params: Record<string, number> = {};
  const vectors: Record<string, number[]> = {};
  for (const [k, spec] of Object.entries(scene.params)) params[k] = spec.default;
  for (const [k, spec] of Object.entries(scene.vectorParams ?? {})) vectors[k] = [...spec.default];
  for (const [k, v] of Object.entries(given)) {
    const spec = scene.params[k];
    const vspec = scene.vectorParams?.[k];
    if (!spec && !vspec) throw new Error(`scene '${scene.name}' has no parameter '${k}' (it has: ${allNames(scene)})`);
    if (vspec) {
      const arr = Array.isArray(v) ? v : [v];
      if (arr.length !== vspec.default.length) throw new Error(`parameter '${k}' must be a vector of ${vspec.default.length} numbers (e.g. ${k}=${vspec.default.join(',')})`);
      if (!arr.every(Number.isFinite)) throw new Error(`parameter '${k}' must hold finite numbers`);
      vectors[k] = [...arr];
      continue;
    }
    if (Array.isArray(v)) throw new Error(`parameter '${k}' is a number, not a vector`);
    if (!Number.isFinite(v)) throw new Error(`parameter '${k}' must be a finite number`);
    if (spec.integer && !Number.isInteger(v)) throw new Error(`parameter '${k}' must be an integer`);
    if (spec.min !== undefined && v < spec.min) throw new Error(`parameter '${k}' must be ≥ ${spec.min}`);
    if (spec.max !== undefined && v > spec.max) throw new Error(`parameter '${k}' must be ≤ ${spec.max}`);
    params[k] = v;
  }
  return { params, vectors };
}

/** Resolve and build: the scene's description for the given parameters. */
export function buildScene(scene: SceneInfo, given: Record<string, ParamValue> = {}): SceneDesc {
  const { params, vectors } = resolveSceneParams(scene, given);
  return scene.build(params, vectors);
}
