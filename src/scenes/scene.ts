/**
 * A built-in scene: named parameters (numbers, and vectors for the particle scenes) with defaults,
 * a builder, and a count of what the builder would make.
 *
 * Invariant (defineScene): `build` and `count` take any subset of the parameters, overlay them on
 * the defaults and check them (throwing an InputError naming the first bad one), so a library
 * caller's `build({ chains: 2 })` is the scene with 2 chains, never a half-filled one. `build`
 * checks the description fits the JS heap from `count` before it allocates anything.
 */
import type { WorldDesc } from '../model/world.js';
import { isParticleSystem, type SceneDesc } from '../model/scene-desc.js';
import { packWorld } from '../model/packed.js';
import { checkMemory, type SceneCount } from '../model/limits.js';
import { InputError } from '../model/input-error.js';
import { brokenBound, formatBound, type NumberRange } from '../model/ranges.js';

/** A number parameter: its default, its range (model/ranges.ts) and its meaning. */
export interface ParamSpec extends NumberRange {
  default: number;
  help: string;
  /** why the range is what it is, said beside a refusal */
  why?: string;
}

/**
 * A check across a scene's parameters (each is in its own range already): the fault as
 * { param, problem } naming the parameter to change, or null. E.g. vertical-stack's offset must be
 * below half its size, or a box does not rest on the one below.
 */
export type ParamsCheck = (p: Record<string, number>) => { param: string; problem: string } | null;

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
  /** the checks across parameters (ParamsCheck), run with the ranges */
  check?: ParamsCheck;
  /**
   * A scene built to stand still (a stack, a pyramid, a house of cards): from this time on, s (its
   * settling), no body should move. `compare` measures each run's drift, the farthest any body gets from
   * where it was at this time, and a run holds the scene only while that stays small (bench/holds.ts).
   */
  restsAfter?: number;
  /**
   * The scene for the given parameters (any subset; the rest take their defaults). Throws an
   * InputError naming a bad or unknown parameter, or a scene too large for this process's memory.
   */
  build(params?: Record<string, number>, vectors?: Record<string, number[]>): D;
  /** Bodies (particles) and constraints `build` would make, without making them: cheap for any size. */
  count(params?: Record<string, number>): SceneCount;
}

/** A scene's definition: its builder and counter see every parameter, defaults filled in and checked. */
export interface SceneDefinition<D extends SceneDesc> {
  name: string;
  description: string;
  params: Record<string, ParamSpec>;
  vectorParams?: Record<string, VectorParamSpec>;
  check?: ParamsCheck;
  restsAfter?: number;
  build(params: Record<string, number>, vectors: Record<string, number[]>): D;
  count(params: Record<string, number>): Omit<SceneCount, 'kind'>;
  kind: SceneCount['kind'];
}

/** The SceneInfo of a definition: parameters merged with the defaults and checked, memory checked, then built. */
export function defineScene<D extends SceneDesc>(def: SceneDefinition<D>): SceneInfo<D> {
  const scene: SceneInfo<D> = {
    name: def.name,
    description: def.description,
    params: def.params,
    ...(def.vectorParams ? { vectorParams: def.vectorParams } : {}),
    ...(def.check ? { check: def.check } : {}),
    ...(def.restsAfter !== undefined ? { restsAfter: def.restsAfter } : {}),
    count(given = {}) {
      return { kind: def.kind, ...def.count(resolveSceneParams(scene, given).params) };
    },
    build(given = {}, vectors = {}) {
      const resolved = resolveSceneParams(scene, { ...given, ...vectors });
      const what = sceneWhat(def.name, given);
      checkMemory(what, { kind: def.kind, ...def.count(resolved.params) });
      const built = def.build(resolved.params, resolved.vectors);
      // a rigid world's lists packed into typed arrays (model/packed.ts), whichever way the builder made them
      return (isParticleSystem(built) ? built : packWorld(built)) as D;
    },
  };
  return scene;
}

/** How a memory refusal names a built-in scene: `scene 'necklace' with chains=25000` (the parameters as given). */
export function sceneWhat(name: string, given: Record<string, unknown>): string {
  return `scene '${name}' with ${Object.entries(given).map(([k, v]) => `${k}=${v}`).join(' ') || 'its defaults'}`;
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

/** Number and vector parameters, defaults overlaid with `given`; throws an InputError naming the first bad one. */
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
    if (!spec && !vspec) throw new InputError(`scene '${scene.name}' has no parameter '${k}' (it has: ${allNames(scene)})`);
    if (vspec) {
      const arr = Array.isArray(v) ? v : [v];
      if (arr.length !== vspec.default.length) throw new InputError(`parameter '${k}' must be a vector of ${vspec.default.length} numbers (e.g. ${k}=${vspec.default.join(',')})`);
      if (!arr.every(Number.isFinite)) throw new InputError(`parameter '${k}' must hold finite numbers`);
      vectors[k] = [...arr];
      continue;
    }
    if (Array.isArray(v)) throw new InputError(`parameter '${k}' is a number, not a vector`);
    if (!Number.isFinite(v)) throw new InputError(`parameter '${k}' must be a finite number`);
    if (spec.integer && !Number.isInteger(v)) throw new InputError(`parameter '${k}' must be an integer`);
    const broken = brokenBound(v, spec);
    if (broken) throw new InputError(`parameter '${k}' must be ${broken}, got ${formatBound(v)}${spec.why ? ` (${spec.why})` : ''}`);
    params[k] = v;
  }
  // the checks across parameters, on the values the scene will be built with (defaults included)
  const fault = scene.check?.(params);
  if (fault) throw new InputError(`scene '${scene.name}': parameter '${fault.param}' ${fault.problem}`);
  return { params, vectors };
}

/** Resolve and build: the scene's description for the given parameters. */
export function buildScene(scene: SceneInfo, given: Record<string, ParamValue> = {}): SceneDesc {
  const { params, vectors } = resolveSceneParams(scene, given);
  return scene.build(params, vectors);
}
