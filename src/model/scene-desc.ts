/**
 * What a scene describes: a rigid-body world (WorldDesc: spheres and point
 * constraints, for the rigid solvers) or a constrained particle system
 * (ParticleSystemDesc, `kind: 'particles'`, for the Witkin solvers). Both run
 * through the same run/compare/metrics path and produce the same Snapshot.
 */
import type { WorldDesc } from './world.js';
import { isParticleSystem, type ParticleSystemDesc } from './particle-system.js';

export type SceneDesc = WorldDesc | ParticleSystemDesc;
export { isParticleSystem };

/** 'rigid' or 'particles' */
export function sceneKind(desc: SceneDesc): 'rigid' | 'particles' {
  return isParticleSystem(desc) ? 'particles' : 'rigid';
}

/** The bodies (rigid) or particles of a scene. */
export function sceneBodyCount(desc: SceneDesc): number {
  return isParticleSystem(desc) ? desc.particles.length : desc.bodies.length;
}

export function sceneConstraintCount(desc: SceneDesc): number {
  return desc.constraints.length;
}

/** The rigid world of a scene, or an error saying it is a particle system. */
export function rigidWorld(desc: SceneDesc, what = 'this'): WorldDesc {
  if (isParticleSystem(desc)) throw new Error(`${what} needs a rigid-body scene; this one is a particle system`);
  return desc;
}
