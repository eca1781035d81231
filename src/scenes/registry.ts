/** The built-in scenes, by name. A new scene is one file plus one line here. */
import type { SceneInfo } from './scene.js';
import { necklace } from './necklace.js';
import { pendulum } from './pendulum.js';
import { hangingChain } from './hanging-chain.js';

export const scenes: SceneInfo[] = [necklace, pendulum, hangingChain];

export function findScene(name: string): SceneInfo | undefined {
  return scenes.find((s) => s.name === name);
}
