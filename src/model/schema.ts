/**
 * The world's schema (zod) and the scene-file format around it. The world
 * description types (WorldDesc, BodyDesc, Shape, ConstraintDesc and their
 * members) are inferred from this schema, so the schema and the types cannot
 * drift; world.ts re-exports them. Everything a schema can say is said here,
 * including the checks across fields (body indices in range, a constraint joins
 * two different bodies, not two fixed ones, mass or density): validateWorld
 * (world.ts) runs this same schema on objects handed to the library, and
 * worldFromJson runs it on files. Every fault becomes one WorldError naming the
 * JSON path of the first fault, e.g.
 *   bodies[1].shape.radius: expected a number > 0, got -0.1
 *
 * The format (documented in docs/scene-format.md):
 *   { "format": "solverlab-scene", "version": 1,              (optional)
 *     "name": "…", "description": "…",                          (optional)
 *     "gravity": [x, y, z],
 *     "bodies": [ { "shape": { "type": "sphere", "radius": r }
 *                          | { "type": "box", "halfExtents": [a, b, c] }
 *                          | { "type": "capsule", "radius": r, "halfHeight": h },
 *                   "mass": m | "density": ρ, "fixed": bool,
 *                   "position": [x, y, z], "orientation": [x, y, z, w],
 *                   "linearVelocity": [...], "angularVelocity": [...] } ],
 *     "constraints": [ { "type": "point", "bodyA": i, "bodyB": j | null,
 *                        "anchorA": [...], "anchorB": [...], "compliance"?: α }
 *                    | { "type": "distance", …point's fields, "length"? | "minLength"?, "maxLength"? }
 *                    | { "type": "hinge", …point's fields, "axisA", "axisB", "lowerAngle"?, "upperAngle"? }
 *                    | { "type": "fixed", …point's fields } ] }
 * Shapes and constraints are unions tagged by "type", so later shapes (plane,
 * mesh) and constraints (contact materials) are new members, and files written
 * today stay valid. Unknown keys are errors: a typo such as "raduis" must not
 * silently become a default.
 */
import { z } from 'zod';
import { FRICTION_RANGE, RESTITUTION_RANGE, inRange, rangeText } from './ranges.js';

export const SCENE_FORMAT = 'solverlab-scene';
export const SCENE_FORMAT_VERSION = 1;

/**
 * A fault in a world description; `path` is a JSON path like `bodies[3].mass`,
 * `source` the file it came from (if any).
 */
export class WorldError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
    readonly source?: string,
  ) {
    super(`${source ? `${source}: ` : ''}${path}: ${problem}`);
    this.name = 'WorldError';
  }
}

const finite = z.number({ error: (i) => `expected a finite number, got ${describe(i.input)}` });
const positive = finite.refine((x) => x > 0, { error: (i) => `expected a number > 0, got ${describe(i.input)}` });
const nonNegative = finite.refine((x) => x >= 0, { error: (i) => `expected a number ≥ 0, got ${describe(i.input)}` });
const vec3 = z.tuple([finite, finite, finite], { error: (i) => `expected an array of 3 numbers, got ${describe(i.input)}` });
const positiveVec3 = z.tuple([positive, positive, positive], { error: (i) => `expected an array of 3 numbers, got ${describe(i.input)}` });
const axis = vec3.refine((v) => Math.hypot(...v) > 1e-12, { error: 'zero vector (an axis needs a direction)' });
/** an angle in radians within (−π, π] */
const angle = finite.refine((x) => x > -Math.PI && x <= Math.PI, { error: (i) => `expected an angle in (−π, π] rad, got ${describe(i.input)}` });
const quat = z
  .tuple([finite, finite, finite, finite], { error: (i) => `expected a quaternion [x, y, z, w], got ${describe(i.input)}` })
  .refine((q) => Math.hypot(...q) > 1e-12, { error: 'zero quaternion (no rotation is [0, 0, 0, 1])' });
const bodyIndex = z.number({ error: (i) => `expected a body index, got ${describe(i.input)}` }).int('expected an integer body index').min(0, 'expected a body index ≥ 0');
/** a friction coefficient μ (ranges.ts FRICTION_RANGE: 0 to 100) */
const frictionCoefficient = finite.refine((x) => inRange(x, FRICTION_RANGE), { error: (i) => `expected a friction coefficient ${rangeText(FRICTION_RANGE)}, got ${describe(i.input)}` });
const compliance = finite.refine((x) => x >= 0, { error: 'expected a compliance ≥ 0 (m/N)' });

// ---- shapes -------------------------------------------------------------------------------------

const SHAPE_TYPES = ['sphere', 'box', 'capsule', 'plane'];
/** A solid sphere about the body's origin. */
const sphereSchema = z.strictObject({ type: z.literal('sphere'), /** m */ radius: positive });
/** A solid box about the body's origin, edges along its local axes: |x| ≤ a, |y| ≤ b, |z| ≤ c. */
const boxSchema = z.strictObject({ type: z.literal('box'), /** [a, b, c], m, each > 0 */ halfExtents: positiveVec3 });
/** The points within `radius` of the segment (0, −halfHeight, 0)…(0, +halfHeight, 0) of the body's local frame. */
const capsuleSchema = z.strictObject({ type: z.literal('capsule'), /** m */ radius: positive, /** m, half the length of the segment (the cylinder) */ halfHeight: positive });
/**
 * The half-space below the body's local x–z plane (local y ≤ 0), its outward normal the body's local
 * +y, through the body's `position`: the ground, or a ramp when the body is rotated. Fixed bodies only.
 */
const planeSchema = z.strictObject({ type: z.literal('plane') });
const shapeSchema = z.discriminatedUnion('type', [sphereSchema, boxSchema, capsuleSchema, planeSchema], { error: (i) => shapeOrTypeError(i.input, SHAPE_TYPES) });

// ---- bodies -------------------------------------------------------------------------------------

export const bodySchema = z
  .strictObject({
    shape: shapeSchema,
    /** kg/m³; give `density` or `mass` (not needed when fixed). */
    density: positive.optional(),
    /** kg */
    mass: positive.optional(),
    /** A fixed body has zero inverse mass and inertia: it never moves. */
    fixed: z.boolean({ error: 'expected true or false' }).optional(),
    /** centre of mass, m */
    position: vec3,
    /** unit quaternion [x, y, z, w]; identity when omitted */
    orientation: quat.optional(),
    /** m/s */
    linearVelocity: vec3.optional(),
    /** world frame, rad/s */
    angularVelocity: vec3.optional(),
    /** Coulomb friction coefficient μ ≥ 0 (default 0.6), static and dynamic alike; a pair takes √(μA μB) */
    friction: frictionCoefficient.optional(),
    /** static friction μ_s ≥ 0 (default: `friction`): the most a resting contact holds, |f_t| ≤ μ_s f_n; a pair takes √(μsA μsB) */
    staticFriction: frictionCoefficient.optional(),
    /** dynamic (kinetic) friction μ_d ≥ 0 (default: `friction`): a sliding contact's |f_t| = μ_d f_n; a pair takes √(μdA μdB) */
    dynamicFriction: frictionCoefficient.optional(),
    /** coefficient of restitution e in [0, 1] (default 0); a pair takes max(eA, eB) */
    restitution: finite.refine((x) => inRange(x, RESTITUTION_RANGE), { error: (i) => `expected a coefficient of restitution ${rangeText(RESTITUTION_RANGE)}, got ${describe(i.input)}` }).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.shape?.type === 'plane' && b.fixed !== true) return ctx.addIssue({ code: 'custom', path: ['shape'], message: 'a plane is a fixed body only (add "fixed": true)' });
    if (b.mass !== undefined && b.density !== undefined) ctx.addIssue({ code: 'custom', path: [], message: 'give "mass" or "density", not both' });
    else if (!b.fixed && b.mass === undefined && b.density === undefined) ctx.addIssue({ code: 'custom', path: [], message: 'a body that is not fixed needs "mass" or "density"' });
    // Coulomb: a resting contact holds up to μ_s f_n and a sliding one feels μ_d f_n; with μ_s < μ_d a
    // contact that starts to slide would be held harder than the most it could hold at rest
    const staticMu = b.staticFriction ?? b.friction, dynamicMu = b.dynamicFriction ?? b.friction;
    if (typeof staticMu === 'number' && typeof dynamicMu === 'number' && staticMu < dynamicMu)
      ctx.addIssue({
        code: 'custom',
        path: [b.staticFriction !== undefined ? 'staticFriction' : 'dynamicFriction'],
        message: `expected staticFriction ≥ dynamicFriction (μ_s ≥ μ_d: a contact holds at rest at least what it feels sliding), got μ_s = ${staticMu} < μ_d = ${dynamicMu}`,
      });
  });

// ---- constraints --------------------------------------------------------------------------------

/** The fields every joint shares: two bodies (or a body and the world) and an anchor on each. */
const jointFields = {
  bodyA: bodyIndex,
  /** null: the world, and anchorB is a world point */
  bodyB: bodyIndex.nullable(),
  /** r_A, in A's local frame, m */
  anchorA: vec3,
  /** r_B, in B's local frame, or a world point when bodyB is null, m */
  anchorB: vec3,
  /**
   * compliance α (1/stiffness) of a soft joint, m/N for a linear row (rad/(N·m) for an angular
   * one): the joint pulls with force |f| = |C|/α (XPBD, Müller et al. 2020). Omitted: the
   * solver's --compliance (0: rigid).
   */
  compliance: compliance.optional(),
};

/** Ball joint: x_A + R_A r_A = x_B + R_B r_B (three rows). */
const pointSchema = z.strictObject({ type: z.literal('point'), ...jointFields });

/**
 * Distance: |p_A − p_B| = length, p = x + R r the two anchors' world points; or, with minLength
 * and/or maxLength instead, minLength ≤ |p_A − p_B| ≤ maxLength, acting only when the distance
 * leaves that range (a rope: maxLength; a strut that only pushes: minLength). None of the three:
 * length is the anchors' distance in the starting pose.
 */
const distanceSchema = z
  .strictObject({
    type: z.literal('distance'),
    ...jointFields,
    /** m, ≥ 0 */
    length: nonNegative.optional(),
    /** m, ≥ 0 */
    minLength: nonNegative.optional(),
    /** m, ≥ 0 */
    maxLength: nonNegative.optional(),
  })
  .superRefine((c, ctx) => {
    if (c.length !== undefined && (c.minLength !== undefined || c.maxLength !== undefined))
      ctx.addIssue({ code: 'custom', path: [], message: 'give "length", or "minLength" and/or "maxLength", not both' });
    else if (c.minLength !== undefined && c.maxLength !== undefined && c.minLength > c.maxLength)
      ctx.addIssue({ code: 'custom', path: ['maxLength'], message: `expected maxLength ≥ minLength (${c.minLength}), got ${c.maxLength}` });
  });

/**
 * Hinge (revolute): the point joint plus the axes aligned, R_A axisA ∥ R_B axisB (axisB a world
 * axis when bodyB is null). Optional limits on the angle of B relative to A about the axis,
 * radians from the starting pose, positive by the right-hand rule about axisA.
 */
const hingeSchema = z
  .strictObject({
    type: z.literal('hinge'),
    ...jointFields,
    /** hinge axis in A's local frame; any non-zero length (normalised when compiled) */
    axisA: axis,
    /** hinge axis in B's local frame, or a world axis when bodyB is null; any non-zero length */
    axisB: axis,
    /** rad, in (−π, π], from the starting pose */
    lowerAngle: angle.optional(),
    /** rad, in (−π, π], from the starting pose, ≥ lowerAngle */
    upperAngle: angle.optional(),
  })
  .superRefine((c, ctx) => {
    if (c.lowerAngle !== undefined && c.upperAngle !== undefined && c.lowerAngle > c.upperAngle)
      ctx.addIssue({ code: 'custom', path: ['upperAngle'], message: `expected upperAngle ≥ lowerAngle (${c.lowerAngle}), got ${c.upperAngle}` });
  });

/** Fixed (weld): the point joint plus the relative orientation the bodies start with. */
const fixedSchema = z.strictObject({ type: z.literal('fixed'), ...jointFields });

const CONSTRAINT_TYPES = ['point', 'distance', 'hinge', 'fixed'];
export const constraintSchema = z.discriminatedUnion('type', [pointSchema, distanceSchema, hingeSchema, fixedSchema], {
  error: (i) => shapeOrTypeError(i.input, CONSTRAINT_TYPES),
});

// ---- the world ----------------------------------------------------------------------------------

const worldFields = {
  /** m/s² */
  gravity: vec3,
  bodies: z.array(bodySchema, { error: 'expected an array of bodies' }),
  constraints: z.array(constraintSchema, { error: 'expected an array of constraints' }),
  /** whether bodies collide (default true); bodies joined by a joint never collide with each other */
  collisions: z.boolean({ error: 'expected true or false' }).optional(),
};

/** The checks across bodies and constraints: indices in range, two different bodies, not both fixed. */
function checkReferences(w: { bodies: { fixed?: boolean }[]; constraints: { bodyA: number; bodyB: number | null }[] }, ctx: z.RefinementCtx): void {
  // zod runs this refinement even after faults inside the arrays (those come first in the issue
  // list and are the one reported): look only at what is well formed.
  if (!Array.isArray(w.bodies) || !Array.isArray(w.constraints)) return;
  const n = w.bodies.length;
  const nothing = nothingMoves(n, (i) => w.bodies[i]?.fixed === true);
  if (nothing) return void ctx.addIssue({ code: 'custom', path: ['bodies'], message: nothing });
  const index = (k: unknown) => Number.isInteger(k) && (k as number) >= 0;
  for (let i = 0; i < w.constraints.length; i++) {
    const c = w.constraints[i];
    if (!c || typeof c !== 'object' || !index(c.bodyA) || (c.bodyB !== null && !index(c.bodyB))) continue;
    const fault = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path: ['constraints', i, ...path], message });
    if (c.bodyA >= n) return fault(['bodyA'], `body index out of range 0..${n - 1}`);
    if (c.bodyB !== null && c.bodyB >= n) return fault(['bodyB'], `body index out of range 0..${n - 1} (or null for the world)`);
    if (c.bodyB === c.bodyA) return fault(['bodyB'], 'a constraint joins two different bodies');
    if (w.bodies[c.bodyA]?.fixed === true && (c.bodyB === null || w.bodies[c.bodyB]?.fixed === true)) return fault([], 'joins two fixed bodies (nothing can move)');
  }
}

/**
 * Why a world of `count` bodies has nothing to simulate — no bodies, or every one fixed — or null. A
 * run of it would measure nothing (exit 0 and a table of zeros): refused like any other bad input.
 */
export function nothingMoves(count: number, fixed: (i: number) => boolean): string | null {
  if (count === 0) return 'a scene needs at least one body, got none';
  for (let i = 0; i < count; i++) if (!fixed(i)) return null;
  return `every body is fixed (${count === 1 ? 'the one body' : `all ${count}`}): nothing can move`;
}

/** A world description, as a library user or a built-in scene hands it over. */
export const worldSchema = z.strictObject(worldFields).superRefine(checkReferences);

export const sceneFileSchema = z
  .strictObject({
    $schema: z.string().optional(),
    format: z.literal(SCENE_FORMAT, { error: `expected "${SCENE_FORMAT}"` }).optional(),
    version: z.literal(SCENE_FORMAT_VERSION, { error: `this SolverLab reads version ${SCENE_FORMAT_VERSION}` }).optional(),
    name: z.string().optional(),
    description: z.string().optional(),
    /** the built-in scene's parameters, when exported from one (informative) */
    params: z.record(z.string(), finite).optional(),
    ...worldFields,
  })
  .superRefine(checkReferences);

// ---- the types, inferred (z.input: what a user writes; there are no transforms or defaults) ----

export type Vec3 = [number, number, number];
export type Quat = [number, number, number, number];
export type SphereShape = z.input<typeof sphereSchema>;
export type BoxShape = z.input<typeof boxSchema>;
export type CapsuleShape = z.input<typeof capsuleSchema>;
export type PlaneShape = z.input<typeof planeSchema>;
export type Shape = z.input<typeof shapeSchema>;
export type BodyDesc = z.input<typeof bodySchema>;
export type PointConstraintDesc = z.input<typeof pointSchema>;
export type DistanceConstraintDesc = z.input<typeof distanceSchema>;
export type HingeConstraintDesc = z.input<typeof hingeSchema>;
export type FixedConstraintDesc = z.input<typeof fixedSchema>;
export type ConstraintDesc = z.input<typeof constraintSchema>;
export type WorldDesc = z.input<typeof worldSchema>;
export type SceneFile = z.infer<typeof sceneFileSchema>;

function describe(x: unknown): string {
  if (x === undefined) return 'nothing';
  if (x === null) return 'null';
  if (typeof x === 'number') return String(x);
  if (typeof x === 'string') return JSON.stringify(x.length > 20 ? x.slice(0, 20) + '…' : x);
  if (Array.isArray(x)) return `an array of ${x.length}`;
  return typeof x === 'object' ? 'an object' : typeof x;
}

function shapeOrTypeError(input: unknown, types: string[]): string {
  const expected = types.map((t) => `"${t}"`).join(' or ');
  if (!input || typeof input !== 'object' || Array.isArray(input)) return `expected an object, got ${describe(input)}`;
  const t = (input as { type?: unknown }).type;
  return t === undefined ? `missing "type" (${expected})` : `unknown type ${describe(t)} (expected ${expected})`;
}

/** ['bodies', 1, 'shape', 'radius'] → 'bodies[1].shape.radius' */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) out += typeof k === 'number' ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out || '(top level)';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) v = v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/** The first issue zod found in `value`, as a WorldError naming its JSON path. */
export function schemaFault(value: unknown, error: z.ZodError): WorldError {
  const issue = error.issues[0];
  let problem = issue.message;
  if (issue.code === 'unrecognized_keys') problem = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  else if (issue.code === 'invalid_type' && valueAt(value, issue.path) === undefined) problem = 'missing';
  return new WorldError(jsonPath(issue.path), problem);
}

/** The first issue zod found in one element of a list (`bodies`, `constraints`), its path under `list[index]`. */
export function elementFault(list: string, index: number, value: unknown, error: z.ZodError): WorldError {
  const issue = error.issues[0];
  const inner = schemaFault(value, error);
  return new WorldError(jsonPath([list, index, ...issue.path]), inner.problem);
}

/** The checks across bodies and constraints (checkReferences) for one joint, as a WorldError or null. */
export function referenceFault(ic: number, bodyA: number, bodyB: number | null, bodyCount: number, fixed: (i: number) => boolean): WorldError | null {
  const at = (...path: (string | number)[]) => jsonPath(['constraints', ic, ...path]);
  if (bodyA >= bodyCount) return new WorldError(at('bodyA'), `body index out of range 0..${bodyCount - 1}`);
  if (bodyB !== null && bodyB >= bodyCount) return new WorldError(at('bodyB'), `body index out of range 0..${bodyCount - 1} (or null for the world)`);
  if (bodyB === bodyA) return new WorldError(at('bodyB'), 'a constraint joins two different bodies');
  if (fixed(bodyA) && (bodyB === null || fixed(bodyB))) return new WorldError(at(), 'joins two fixed bodies (nothing can move)');
  return null;
}

/** The schema pieces the particle-system file format shares. */
export const schemaParts = { finite, positive, describe, shapeOrTypeError };

/** A parsed JSON value → WorldDesc, or a WorldError naming the first fault's path. */
export function worldFromJson(value: unknown): { world: WorldDesc; file: SceneFile } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new WorldError('(top level)', 'expected a JSON object with gravity, bodies and constraints');
  const r = sceneFileSchema.safeParse(value);
  if (!r.success) throw schemaFault(value, r.error);
  const f = r.data; // the schema made every check validateWorld makes
  const world: WorldDesc = {
    gravity: f.gravity,
    bodies: f.bodies.map((b) => ({ ...b })),
    constraints: f.constraints.map((c) => ({ ...c })),
  };
  if (f.collisions !== undefined) world.collisions = f.collisions;
  return { world, file: f };
}

/** Scene-file text → WorldDesc; malformed JSON is a WorldError too (with line and column). */
export function parseSceneFile(text: string): { world: WorldDesc; file: SceneFile } {
  return worldFromJson(parseJsonText(text));
}

/** JSON text → value, or a WorldError with the line and column of the first fault. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new WorldError('(file)', `malformed JSON: ${jsonErrorWhere(text, e as Error)}`);
  }
}

/**
 * Where JSON.parse failed, as "what at line L, column C": V8's own message names
 * no position on every Node version, so a small syntax scanner (RFC 8259
 * grammar, values not built) finds the first offending character.
 */
function jsonErrorWhere(text: string, e: Error): string {
  let i = 0;
  const fail = (what: string): never => {
    throw Object.assign(new Error(what), { at: i });
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const literal = (word: string) => (text.startsWith(word, i) ? (i += word.length) : fail(`unexpected ${show()}`));
  const show = () => (i >= text.length ? 'end of file' : `'${text[i]}'`);
  const string = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail('control character in a string');
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail(`unexpected ${show()}`);
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a "key", got ${show()}`);
        string();
        ws();
        if (text[i] !== ':') fail(`expected ':', got ${show()}`);
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail(`expected ',' or '}', got ${show()}`);
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail(`expected ',' or ']', got ${show()}`);
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c >= '0' && c <= '9')) number();
    else fail(`unexpected ${show()}`);
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${show()} after the end of the document`);
    return e.message; // the scanner found nothing: report what JSON.parse said
  } catch (err) {
    const at = (err as { at?: number }).at ?? 0;
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    return `${(err as Error).message} at line ${line}, column ${column}`;
  }
}

/** A WorldDesc as scene-file JSON (the `scenes --export` output). */
export function sceneFileJson(world: WorldDesc, meta: { name?: string; description?: string; params?: Record<string, number> } = {}): string {
  const file = {
    format: SCENE_FORMAT,
    version: SCENE_FORMAT_VERSION,
    ...meta,
    gravity: world.gravity,
    ...(world.collisions !== undefined ? { collisions: world.collisions } : {}),
    bodies: world.bodies,
    constraints: world.constraints,
  };
  return compactJson(file);
}

/**
 * sceneFileJson's text in pieces, element by element, so a scene of any size is written without
 * one string of it all (V8's strings end at 2²⁹ − 24 characters, ≈ 3M bodies of this format):
 * the pieces joined are exactly sceneFileJson's text (the elements are JSON.stringify'd at their
 * depth in the file, indent 1, with compactJson's one-line number arrays).
 */
export function* sceneFileChunks(world: WorldDesc, meta: { name?: string; description?: string; params?: Record<string, number> } = {}): Generator<string> {
  const head = compactJson({
    format: SCENE_FORMAT,
    version: SCENE_FORMAT_VERSION,
    ...meta,
    gravity: world.gravity,
    ...(world.collisions !== undefined ? { collisions: world.collisions } : {}),
  });
  yield head.slice(0, head.length - '\n}\n'.length); // the object left open
  const list = function* (name: string, items: readonly unknown[], last: boolean) {
    if (items.length === 0) {
      yield `,\n "${name}": []`;
    } else {
      yield `,\n "${name}": [\n`;
      let batch = '';
      for (let i = 0; i < items.length; i++) {
        // depth 2 in the file: every line of the element two spaces in
        const text = compactJson(items[i]).slice(0, -1).replace(/\n/g, '\n  ');
        batch += `${i ? ',\n' : ''}  ${text}`;
        if (batch.length > 1 << 20) {
          yield batch;
          batch = '';
        }
      }
      yield `${batch}\n ]`;
    }
    if (last) yield '\n}\n';
  };
  yield* list('bodies', world.bodies, false);
  yield* list('constraints', world.constraints, true);
}

/** Indented JSON with one line per number array: a body or constraint reads as a few lines, not dozens. */
export function compactJson(value: unknown): string {
  return JSON.stringify(value, null, 1).replace(/\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g, (_, list: string) => `[${list.split(/,\s+/).join(', ')}]`) + '\n';
}
