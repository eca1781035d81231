/**
 * A scene reference as users give it — a built-in scene's name, or the path of a
 * scene file (anything ending in .json or containing a slash) — resolved to a
 * world. Every fault is an InputError (bad parameter, unknown scene) or a
 * WorldError (a bad file, with the file name and the JSON path of the fault).
 */
import { readFileSync, statSync } from 'node:fs';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { basename } from 'node:path';
import { WorldError, type WorldDesc } from '../model/world.js';
import type { SceneDesc } from '../model/scene-desc.js';
import { sceneFromJson } from './scene-file.js';
import { parseJsonText } from '../model/schema.js';
import { checkMemory, formatBytes, type SceneCount } from '../model/limits.js';
import { packWorld } from '../model/packed.js';
import { constants as bufferConstants } from 'node:buffer';

/** A scene file read, parsed, checked and (a rigid world) packed into typed arrays, as a built-in scene's lists are. */
function readSceneFile(ref: string): LoadedScene {
  let text: string;
  try {
    const st = statSync(ref);
    if (st.isDirectory()) throw new InputError(`scene file ${ref} is a folder`);
    // JSON is parsed from one string, and V8's strings end at 2²⁹ − 24 characters (≈ 3M bodies of
    // `scenes --export`'s format): a larger file cannot be read here, whatever the memory
    if (st.size > MAX_STRING_LENGTH)
      throw new InputError(
        `scene file ${ref} is ${formatBytes(st.size)}, beyond the ${formatBytes(MAX_STRING_LENGTH)} of JSON this reader takes in one piece (about 3M bodies): build a scene that large from a built-in scene and --param`,
      );
    text = readFileSync(ref, 'utf8');
  } catch (e) {
    if (e instanceof InputError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(`scene file ${ref}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  try {
    const value = parseJsonText(text);
    // counted from the file's arrays before the world is checked and copied
    checkMemory(`scene file ${ref}`, countJson(value), undefined, true);
    const { world, name, description } = sceneFromJson(value);
    return { name: name ?? basename(ref, '.json'), file: ref, description: description ?? `scene file ${ref}`, params: {}, world: isParticleSystem(world) ? world : packWorld(world) };
  } catch (e) {
    if (e instanceof WorldError) throw new WorldError(e.path, e.problem, ref);
    throw e;
  }
}

/**
 * A full collection now, where the engine allows one to be asked for (Node: V8's gc, exposed for this
 * call): after a scene file is parsed, checked and packed, its objects are garbage, and the memory
 * check that follows reads the process's resident memory.
 */
function collectGarbage(): void {
  try {
    const g = (globalThis as { gc?: () => void }).gc;
    if (g) return g();
    v8.setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
  } catch {
    // no collection to ask for: the check then errs high
  }
}

/** The longest string V8 makes (characters; a UTF-8 file of more bytes cannot be read as one). */
const MAX_STRING_LENGTH = bufferConstants.MAX_STRING_LENGTH;
import { ParticleSystemError, isParticleSystem } from '../model/particle-system.js';
import { scenes, findScene } from './registry.js';
import { resolveSceneParams, sceneWhat, type ParamValue, type SceneInfo } from './scene.js';
import { InputError } from '../model/input-error.js';

export { InputError };

export interface LoadedScene {
  /** the built-in name, or the file's base name */
  name: string;
  /** the file path, for file scenes */
  file?: string;
  description: string;
  /** resolved parameters, numbers and vectors (built-in scenes; empty for files) */
  params: Record<string, ParamValue>;
  /** a rigid world or a particle system */
  world: SceneDesc;
}

/** Bodies (particles) and constraints of a parsed scene file, from its arrays' lengths (0 where absent). */
function countJson(value: unknown): SceneCount {
  const v = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
  const length = (x: unknown) => (Array.isArray(x) ? x.length : 0);
  const particles = v.kind === 'particles';
  return { kind: particles ? 'particles' : 'rigid', bodies: length(particles ? v.particles : v.bodies), constraints: length(v.constraints) };
}

export function isSceneFile(ref: string): boolean {
  return ref.endsWith('.json') || ref.includes('/');
}

export function sceneNames(): string {
  return scenes.map((s) => s.name).join(', ');
}

/** The built-in scene called `name`, or an InputError listing the scenes. */
export function builtInScene(name: string): SceneInfo {
  const scene = findScene(name);
  if (!scene) throw new InputError(`unknown scene '${name}' (scenes: ${sceneNames()}; or give a scene file ending in .json)`);
  return scene;
}

export function loadScene(ref: string, params: Record<string, ParamValue> = {}): LoadedScene {
  if (isSceneFile(ref)) {
    const keys = Object.keys(params);
    if (keys.length) throw new InputError(`--param ${keys[0]}: a scene file has no parameters (edit the file instead)`);
    const loaded = readSceneFile(ref);
    // the file's text, parsed JSON and checked copy are out of scope now: collected before the run
    // is planned from what the process holds
    collectGarbage();
    return loaded;
  }
  const scene = builtInScene(ref);
  let resolved: ReturnType<typeof resolveSceneParams>;
  try {
    resolved = resolveSceneParams(scene, params);
  } catch (e) {
    throw new InputError((e as Error).message);
  }
  let world: SceneDesc;
  try {
    // the parameters as given (build merges the defaults, and names them in a memory refusal)
    const numbers: Record<string, number> = {}, vectors: Record<string, number[]> = {};
    for (const [k, v] of Object.entries(params)) if (Array.isArray(v)) vectors[k] = v; else numbers[k] = v;
    world = scene.build(numbers, vectors);
  } catch (e) {
    // a builder's own check of its parameters (e.g. a bead placed at the wire's centre)
    if (e instanceof ParticleSystemError) throw new InputError(`scene '${scene.name}': ${e.message}`);
    throw e;
  }
  return { name: scene.name, description: scene.description, params: { ...resolved.params, ...resolved.vectors }, world };
}

/**
 * Whether a built-in scene fits this machine under `solverId`, from its count, before it is built
 * (minutes at 10M bodies): the refusal (an InputError, one line), or null when it fits or `ref` is a
 * scene file (checked once read: preflight).
 */
export function builtInRefusal(ref: string, params: Record<string, ParamValue>, solverId: string): InputError | null {
  if (isSceneFile(ref)) return null;
  const scene = builtInScene(ref);
  try {
    checkMemory(sceneWhat(scene.name, params), scene.count(params as Record<string, number>), solverId);
    return null;
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
}

/** loadScene for a scene that must be of rigid bodies (the rigid solvers, tests); InputError for a particle system. */
export function loadRigidScene(ref: string, params: Record<string, ParamValue> = {}): LoadedScene & { world: WorldDesc } {
  const scene = loadScene(ref, params);
  if (isParticleSystem(scene.world)) throw new InputError(`scene '${scene.name}' is a particle system, not a rigid-body world`);
  return scene as LoadedScene & { world: WorldDesc };
}
