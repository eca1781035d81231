/**
 * Particle-system scene files: the same file format as rigid scenes
 * (src/model/schema.ts), told apart by "kind": "particles", checked by a zod
 * schema and then by validateParticleSystem. Every fault is one WorldError
 * naming the JSON path, e.g.  constraints[2].length: must be > 0 (…)
 *
 *   { "format": "solverlab-scene", "version": 1, "kind": "particles", "dimension": 2 | 3,
 *     "particles":   [ { "position": [..], "velocity"?: [..], "mass": m, "fixed"?: bool, "radius"?: r } ],
 *     "forces":      [ { "type": "gravity", "g": [..] } | { "type": "spring", "a", "b", "restLength", "stiffness", "damping" }
 *                      | { "type": "drag", "k" } ],
 *     "constraints": [ { "type": "circle", "particle", "center", "radius" } | { "type": "distance", "a", "b", "length" }
 *                      | { "type": "nail", "particle", "point" } | { "type": "plane", "particle", "point", "normal" }
 *                      | { "type": "line", "particle", "point", "direction" } ],
 *     "parametric"?: [ { "type": "circle", "particle", "center", "radius", "theta", "thetaDot" } ] }
 */
import { z } from 'zod';
import { WorldError } from '../model/world.js';
import { SCENE_FORMAT, SCENE_FORMAT_VERSION, compactJson, schemaFault, schemaParts } from '../model/schema.js';
import { ParticleSystemError, validateParticleSystem, type ParticleSystemDesc } from '../model/particle-system.js';

const { finite, positive, describe, shapeOrTypeError } = schemaParts;
const vector = z.array(finite, { error: (i) => `expected an array of 2 or 3 numbers, got ${describe(i.input)}` }).min(2).max(3);
const index = z.number({ error: (i) => `expected a particle index, got ${describe(i.input)}` }).int('expected an integer particle index').min(0, 'expected a particle index ≥ 0');
const nonNegative = finite.refine((x) => x >= 0, { error: (i) => `expected a number ≥ 0, got ${describe(i.input)}` });

const particle = z.strictObject({
  position: vector,
  velocity: vector.optional(),
  mass: nonNegative,
  fixed: z.boolean({ error: 'expected true or false' }).optional(),
  radius: positive.optional(),
});
const force = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('gravity'), g: vector }),
    z.strictObject({ type: z.literal('spring'), a: index, b: index, restLength: nonNegative, stiffness: nonNegative, damping: nonNegative }),
    z.strictObject({ type: z.literal('drag'), k: nonNegative }),
  ],
  { error: (i) => shapeOrTypeError(i.input, ['gravity', 'spring', 'drag']) },
);
const constraint = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('circle'), particle: index, center: vector, radius: positive }),
    z.strictObject({ type: z.literal('distance'), a: index, b: index, length: finite }),
    z.strictObject({ type: z.literal('nail'), particle: index, point: vector }),
    z.strictObject({ type: z.literal('plane'), particle: index, point: vector, normal: vector }),
    z.strictObject({ type: z.literal('line'), particle: index, point: vector, direction: vector }),
  ],
  { error: (i) => shapeOrTypeError(i.input, ['circle', 'distance', 'nail', 'plane', 'line']) },
);
const path = z.strictObject({ type: z.literal('circle'), particle: index, center: vector, radius: positive, theta: finite, thetaDot: finite });

export const particleFileSchema = z.strictObject({
  $schema: z.string().optional(),
  format: z.literal(SCENE_FORMAT, { error: `expected "${SCENE_FORMAT}"` }).optional(),
  version: z.literal(SCENE_FORMAT_VERSION, { error: `this SolverLab reads version ${SCENE_FORMAT_VERSION}` }).optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  params: z.record(z.string(), z.union([finite, z.array(finite)])).optional(),
  kind: z.literal('particles'),
  dimension: z.union([z.literal(2), z.literal(3)], { error: 'expected 2 or 3' }),
  particles: z
    .array(particle, { error: 'expected an array of particles' })
    .refine((list) => list.length === 0 || list.some((q) => !q?.fixed), { error: 'every particle is fixed: nothing can move' })
    .refine((list) => list.length > 0, { error: 'a scene needs at least one particle, got none' }),
  forces: z.array(force, { error: 'expected an array of forces' }),
  constraints: z.array(constraint, { error: 'expected an array of constraints' }),
  parametric: z.array(path, { error: 'expected an array of paths' }).optional(),
});

export type ParticleFile = z.infer<typeof particleFileSchema>;

/** A parsed JSON value with "kind": "particles" → ParticleSystemDesc, or a WorldError naming the first fault. */
export function particleSystemFromJson(value: unknown): { desc: ParticleSystemDesc; file: ParticleFile } {
  const r = particleFileSchema.safeParse(value);
  if (!r.success) throw schemaFault(value, r.error);
  const f = r.data;
  const desc: ParticleSystemDesc = {
    kind: 'particles',
    dimension: f.dimension,
    particles: f.particles,
    forces: f.forces,
    constraints: f.constraints,
    ...(f.parametric ? { parametric: f.parametric } : {}),
  };
  try {
    validateParticleSystem(desc);
  } catch (e) {
    if (e instanceof ParticleSystemError) throw new WorldError(e.where, e.problem);
    throw e;
  }
  return { desc, file: f };
}

/** The scene-file text of a particle system (the format above). */
export function particleFileJson(desc: ParticleSystemDesc, meta: { name?: string; description?: string; params?: Record<string, number | number[]> } = {}): string {
  return compactJson({ format: SCENE_FORMAT, version: SCENE_FORMAT_VERSION, ...meta, ...desc });
}
