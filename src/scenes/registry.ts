/** The built-in scenes, by name. A new scene is one file plus one line here. */
import type { SceneInfo } from './scene.js';
import { necklace } from './necklace.js';

export const scenes: SceneInfo[] = [necklace];

export function findScene(name: string): SceneInfo | undefined {
  return scenes.find((s) => s.name === name);
}
