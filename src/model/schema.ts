/**
 * Scene files: a whole WorldDesc as JSON, checked by a schema (zod) and then by
 * validateWorld's semantic checks (body indices, two fixed bodies, …). Every
 * fault becomes one WorldError naming the JSON path of the first fault, e.g.
 *   bodies[1].shape.radius: expected a number > 0, got -0.1
 *
 * The format (documented in docs/scene-format.md):
 *   { "format": "solverlab-scene", "version": 1,              (optional)
 *     "name": "…", "description": "…",                          (optional)
 *     "gravity": [x, y, z],
 *     "bodies": [ { "shape": { "type": "sphere", "radius": r },
 *                   "mass": m | "density": ρ, "fixed": bool,
 *                   "position": [x, y, z], "orientation": [x, y, z, w],
 *                   "linearVelocity": [...], "angularVelocity": [...] } ],
 *     "constraints": [ { "type": "point", "bodyA": i, "bodyB": j | null,
 *                        "anchorA": [...], "anchorB": [...], "compliance"?: α } ] }
 * Shapes and constraints are unions tagged by "type", so later shapes (box,
 * plane, capsule) and constraints (hinge, distance, contact materials) are new
 * members, and files written today stay valid. Unknown keys are errors: a typo
 * such as "raduis" must not silently become a default.
 */
import { z } from 'zod';
import { WorldError, validateWorld, type WorldDesc } from './world.js';

export const SCENE_FORMAT = 'solverlab-scene';
export const SCENE_FORMAT_VERSION = 1;

const finite = z.number({ error: (i) => `expected a finite number, got ${describe(i.input)}` });
const positive = finite.refine((x) => x > 0, { error: (i) => `expected a number > 0, got ${describe(i.input)}` });
const vec3 = z.tuple([finite, finite, finite], { error: (i) => `expected an array of 3 numbers, got ${describe(i.input)}` });
const quat = z
  .tuple([finite, finite, finite, finite], { error: (i) => `expected a quaternion [x, y, z, w], got ${describe(i.input)}` })
  .refine((q) => Math.hypot(...q) > 1e-12, { error: 'zero quaternion (no rotation is [0, 0, 0, 1])' });
const bodyIndex = z.number({ error: (i) => `expected a body index, got ${describe(i.input)}` }).int('expected an integer body index').min(0, 'expected a body index ≥ 0');

const sphere = z.strictObject({ type: z.literal('sphere'), radius: positive });
const shape = z.discriminatedUnion('type', [sphere], { error: (i) => shapeOrTypeError(i.input, ['sphere']) });

const body = z.strictObject({
  shape,
  density: positive.optional(),
  mass: positive.optional(),
  fixed: z.boolean({ error: 'expected true or false' }).optional(),
  position: vec3,
  orientation: quat.optional(),
  linearVelocity: vec3.optional(),
  angularVelocity: vec3.optional(),
});

const point = z.strictObject({
  type: z.literal('point'),
  bodyA: bodyIndex,
  bodyB: bodyIndex.nullable(),
  anchorA: vec3,
  anchorB: vec3,
  compliance: finite.refine((x) => x >= 0, { error: 'expected a compliance ≥ 0 (m/N)' }).optional(),
});
const constraint = z.discriminatedUnion('type', [point], { error: (i) => shapeOrTypeError(i.input, ['point']) });

export const sceneFileSchema = z.strictObject({
  $schema: z.string().optional(),
  format: z.literal(SCENE_FORMAT, { error: `expected "${SCENE_FORMAT}"` }).optional(),
  version: z.literal(SCENE_FORMAT_VERSION, { error: `this SolverLab reads version ${SCENE_FORMAT_VERSION}` }).optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  /** the built-in scene's parameters, when exported from one (informative) */
  params: z.record(z.string(), finite).optional(),
  gravity: vec3,
  bodies: z.array(body, { error: 'expected an array of bodies' }),
  constraints: z.array(constraint, { error: 'expected an array of constraints' }),
});

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

/** The schema pieces the particle-system file format shares. */
export const schemaParts = { finite, positive, describe, shapeOrTypeError };

/** A parsed JSON value → WorldDesc, or a WorldError naming the first fault's path. */
export function worldFromJson(value: unknown): { world: WorldDesc; file: SceneFile } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new WorldError('(top level)', 'expected a JSON object with gravity, bodies and constraints');
  const r = sceneFileSchema.safeParse(value);
  if (!r.success) throw schemaFault(value, r.error);
  const f = r.data;
  const world: WorldDesc = {
    gravity: f.gravity,
    bodies: f.bodies.map((b) => ({ ...b })),
    constraints: f.constraints.map((c) => ({ ...c })),
  };
  validateWorld(world);
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
    bodies: world.bodies,
    constraints: world.constraints,
  };
  return compactJson(file);
}

/** Indented JSON with one line per number array: a body or constraint reads as a few lines, not dozens. */
export function compactJson(value: unknown): string {
  return JSON.stringify(value, null, 1).replace(/\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g, (_, list: string) => `[${list.split(/,\s+/).join(', ')}]`) + '\n';
}
