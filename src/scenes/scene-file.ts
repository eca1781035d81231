/**
 * A scene file of either kind: a rigid world (src/model/schema.ts) or, with
 * "kind": "particles", a particle system (src/particles/schema.ts). Used by the
 * command line and the viewer alike; every fault is one WorldError with its JSON path.
 */
import { parseJsonText, sceneFileChunks, worldFromJson } from '../model/schema.js';
import { particleFileJson, particleSystemFromJson } from '../particles/schema.js';
import { isParticleSystem, type SceneDesc } from '../model/scene-desc.js';
import type { ParamValue } from './scene.js';

export interface ParsedSceneFile {
  world: SceneDesc;
  name?: string;
  description?: string;
}

export function sceneFromJson(value: unknown): ParsedSceneFile {
  if (value && typeof value === 'object' && (value as { kind?: unknown }).kind === 'particles') {
    const { desc, file } = particleSystemFromJson(value);
    return { world: desc, name: file.name, description: file.description };
  }
  const { world, file } = worldFromJson(value);
  return { world, name: file.name, description: file.description };
}

export function parseAnySceneFile(text: string): ParsedSceneFile {
  return sceneFromJson(parseJsonText(text));
}

export function anySceneFileJson(desc: SceneDesc, meta: { name?: string; description?: string; params?: Record<string, ParamValue> } = {}): string {
  return [...anySceneFileChunks(desc, meta)].join('');
}

/** anySceneFileJson's text in pieces: a rigid world element by element (any size, schema.ts sceneFileChunks), a particle system (small) as one. */
export function anySceneFileChunks(desc: SceneDesc, meta: { name?: string; description?: string; params?: Record<string, ParamValue> } = {}): Iterable<string> {
  if (isParticleSystem(desc)) return [particleFileJson(desc, meta)];
  const { params, ...rest } = meta;
  const numeric = params && Object.fromEntries(Object.entries(params).filter((e): e is [string, number] => typeof e[1] === 'number'));
  return sceneFileChunks(desc, { ...rest, ...(numeric ? { params: numeric } : {}) });
}
