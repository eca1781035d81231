/** The built-in scenes, by name. A new scene is one file plus one line here. */
import type { RigidSceneInfo, SceneInfo } from './scene.js';
import { necklace } from './necklace.js';
import { pendulum } from './pendulum.js';
import { hangingChain } from './hanging-chain.js';
import { longChain } from './long-chain.js';
import { highMassRatio } from './high-mass-ratio.js';
import { massRatioPendulum } from './mass-ratio-pendulum.js';
import { stretchedChain } from './stretched-chain.js';
import { jointGrid } from './joint-grid.js';
import { farFromOrigin } from './far-from-origin.js';
import { spring } from './spring.js';
import { hingeChain, cantilever, ropeSwing } from './joint-scenes.js';
import { contactScenes } from './contact-scenes.js';
import { stressScenes } from './stress-scenes.js';
import { particleScenes } from './particles.js';
import { brickWall } from './brick-wall.js';

/** Scenes of rigid bodies, joints and contacts (the rigid solvers): the joint scenes, then the contact scenes, then the stress scenes, then the brick wall. */
export const rigidScenes: RigidSceneInfo[] = [necklace, pendulum, hangingChain, longChain, highMassRatio, massRatioPendulum, stretchedChain, jointGrid, farFromOrigin, spring, hingeChain, cantilever, ropeSwing, ...contactScenes, ...stressScenes, brickWall];

/** Every scene: the rigid ones, then the constrained particle systems (the witkin-* solvers). */
export const scenes: SceneInfo[] = [...rigidScenes, ...particleScenes];

export function findScene(name: string): SceneInfo | undefined {
  return scenes.find((s) => s.name === name);
}

export function findRigidScene(name: string): RigidSceneInfo | undefined {
  return rigidScenes.find((s) => s.name === name);
}
