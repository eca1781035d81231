/**
 * Packed body and constraint lists: a scene's bodies and joints held as structure-of-arrays typed
 * arrays from the moment the scene builder makes them, so a 10M-body necklace costs tens of bytes
 * per body in the JS heap instead of a few hundred (one BodyDesc object, its shape and its arrays).
 *
 * A packed list looks like a read-only BodyDesc[] (ConstraintDesc[]): `length`, index access,
 * iteration, forEach/map/filter and JSON.stringify all work, and `push(desc)` packs an element as
 * the builder adds it. What varies per element lives in typed arrays: a body's position,
 * orientation and velocities; a joint's bodies and anchors. Everything else (shape, density or
 * mass, fixed, friction, restitution; a joint's type, compliance, axes, lengths, limits) is
 * interned as a *prototype*: a scene of a million equal beads has one. Reading element i makes a
 * fresh, frozen BodyDesc from its prototype and its row of the arrays: editing it is an error
 * (TypeError in strict code), never a change silently lost; `editableWorld` gives a plain copy.
 *
 * Invariants: prototypes are frozen and shared; an element's per-element fields sit at 3i (4i for
 * an orientation); a `present` bit says whether the desc gave the optional field (so an element
 * reads back exactly as it was pushed, keys and all, and a scene exported from it is the file it
 * was before packing). The lists grow by doubling from a capacity hint (the scene's count).
 */
import type { BodyDesc, ConstraintDesc, WorldDesc } from './schema.js';

const BODY_FIELDS = ['position', 'orientation', 'linearVelocity', 'angularVelocity'] as const;
const JOINT_FIELDS = ['bodyA', 'bodyB', 'anchorA', 'anchorB'] as const;
const ORIENTATION = 1, LINEAR = 2, ANGULAR = 4;

/** Shallow-deep equality of two prototype objects (numbers, booleans, strings, arrays and objects of them). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let k = 0; k < ka.length; k++) {
    if (ka[k] !== kb[k]) return false;
    if (!sameValue((a as Record<string, unknown>)[ka[k]], (b as Record<string, unknown>)[kb[k]])) return false;
  }
  return true;
}

function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null && !Object.isFrozen(x)) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

/**
 * The prototypes of a packed list: interned by value and by the element's key order (its per-element
 * fields included, so an element reads back with its keys where the builder put them); the last one
 * used is tried first (runs of equal elements).
 */
class Prototypes<T extends object> {
  readonly list: T[] = [];
  /** each prototype's elements' keys, in their order */
  readonly keys: string[][] = [];
  private readonly byKey = new Map<string, number>();
  private last = -1;
  private same(k: number, rest: T, keys: string[]): boolean {
    const own = this.keys[k];
    return own.length === keys.length && own.every((x, i) => x === keys[i]) && sameValue(this.list[k], rest);
  }
  intern(rest: T, keys: string[]): number {
    if (this.last >= 0 && this.same(this.last, rest, keys)) return this.last;
    for (let k = Math.max(0, this.list.length - 8); k < this.list.length; k++) if (this.same(k, rest, keys)) return (this.last = k);
    const key = `${keys.join(',')}|${JSON.stringify(rest)}`;
    let k = this.byKey.get(key);
    if (k === undefined) {
      k = this.list.length;
      this.list.push(deepFreeze(rest));
      this.keys.push(Object.freeze(keys) as string[]);
      this.byKey.set(key, k);
    }
    return (this.last = k);
  }
  /** Takes `other`'s prototypes as its own (indices kept): a reordered copy of a list shares them. */
  adopt(other: Prototypes<T>): void {
    this.list.length = this.keys.length = 0;
    this.byKey.clear();
    other.list.forEach((p, k) => {
      this.list.push(p);
      this.keys.push(other.keys[k]);
      this.byKey.set(`${other.keys[k].join(',')}|${JSON.stringify(p)}`, k);
    });
    this.last = -1;
  }
}

/** An element read back: its keys in their order, each from its prototype or, for a per-element field, from `own`. */
function assemble(keys: readonly string[], proto: object, own: (key: string) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = own(k);
    out[k] = v === undefined ? (proto as Record<string, unknown>)[k] : v;
  }
  return out;
}

function grow<A extends Float64Array | Int32Array | Uint32Array | Uint8Array>(a: A, size: number): A {
  if (size <= a.length) return a;
  const fresh = new (a.constructor as new (n: number) => A)(Math.max(size, 2 * a.length));
  fresh.set(a);
  return fresh;
}

function vec(v: unknown, n: number, what: string): ArrayLike<number> {
  if (!Array.isArray(v) || v.length !== n) throw new TypeError(`packed list: ${what} must be an array of ${n} numbers`);
  return v as number[];
}

/** A scene's bodies as typed arrays plus interned prototypes (the shape, mass and material every body shares with others). */
export class PackedBodies {
  count = 0;
  readonly prototypes = new Prototypes<Omit<BodyDesc, 'position'>>();
  prototype: Uint32Array;
  position: Float64Array;
  /** [x y z w] per body; identity where `present` lacks the orientation bit */
  orientation: Float64Array;
  linearVelocity: Float64Array;
  angularVelocity: Float64Array;
  /** bit 1: orientation given, 2: linearVelocity, 4: angularVelocity */
  present: Uint8Array;

  constructor(capacity = 16) {
    const n = Math.max(1, capacity);
    this.prototype = new Uint32Array(n);
    this.position = new Float64Array(3 * n);
    this.orientation = new Float64Array(0);
    this.linearVelocity = new Float64Array(0);
    this.angularVelocity = new Float64Array(0);
    this.present = new Uint8Array(n);
  }

  push(b: BodyDesc): void {
    const i = this.count;
    this.prototype = grow(this.prototype, i + 1);
    this.present = grow(this.present, i + 1);
    this.position = grow(this.position, 3 * (i + 1));
    const rest: Record<string, unknown> = {};
    for (const k of Object.keys(b)) if (!(BODY_FIELDS as readonly string[]).includes(k)) rest[k] = (b as Record<string, unknown>)[k];
    this.prototype[i] = this.prototypes.intern(rest as Omit<BodyDesc, 'position'>, Object.keys(b));
    const p = vec(b.position, 3, `bodies[${i}].position`);
    this.position[3 * i] = p[0];
    this.position[3 * i + 1] = p[1];
    this.position[3 * i + 2] = p[2];
    let bits = 0;
    if (b.orientation !== undefined) {
      bits |= ORIENTATION;
      this.orientation = grow(this.orientation, 4 * this.position.length / 3);
      this.orientation.set(vec(b.orientation, 4, `bodies[${i}].orientation`), 4 * i);
    }
    if (b.linearVelocity !== undefined) {
      bits |= LINEAR;
      this.linearVelocity = grow(this.linearVelocity, this.position.length);
      this.linearVelocity.set(vec(b.linearVelocity, 3, `bodies[${i}].linearVelocity`), 3 * i);
    }
    if (b.angularVelocity !== undefined) {
      bits |= ANGULAR;
      this.angularVelocity = grow(this.angularVelocity, this.position.length);
      this.angularVelocity.set(vec(b.angularVelocity, 3, `bodies[${i}].angularVelocity`), 3 * i);
    }
    this.present[i] = bits;
    this.count++;
  }

  /** Body i as a fresh frozen BodyDesc: its keys in the order its builder wrote them, shared fields from its prototype. */
  at(i: number): BodyDesc {
    const k = this.prototype[i];
    const vector = (a: Float64Array, n: number) => Object.freeze(Array.from(a.subarray(n * i, n * i + n)));
    const b = assemble(this.prototypes.keys[k], this.prototypes.list[k], (key) =>
      key === 'position' ? vector(this.position, 3) : key === 'orientation' ? vector(this.orientation, 4) : key === 'linearVelocity' ? vector(this.linearVelocity, 3) : key === 'angularVelocity' ? vector(this.angularVelocity, 3) : undefined,
    );
    return Object.freeze(b) as unknown as BodyDesc;
  }
}

/** A scene's joints as typed arrays (bodies, anchors) plus interned prototypes (type, compliance, axes, lengths, limits). */
export class PackedConstraints {
  count = 0;
  readonly prototypes = new Prototypes<Record<string, unknown>>();
  prototype: Uint32Array;
  bodyA: Int32Array;
  /** −1: the world (bodyB null) */
  bodyB: Int32Array;
  anchorA: Float64Array;
  anchorB: Float64Array;

  constructor(capacity = 16) {
    const n = Math.max(1, capacity);
    this.prototype = new Uint32Array(n);
    this.bodyA = new Int32Array(n);
    this.bodyB = new Int32Array(n);
    this.anchorA = new Float64Array(3 * n);
    this.anchorB = new Float64Array(3 * n);
  }

  push(c: ConstraintDesc): void {
    const i = this.count;
    if (!Number.isInteger(c.bodyA) || c.bodyA < 0 || c.bodyA > 0x7fffffff || (c.bodyB !== null && (!Number.isInteger(c.bodyB) || c.bodyB < 0 || c.bodyB > 0x7fffffff)))
      throw new TypeError(`packed list: constraints[${i}] needs body indices that are integers ≥ 0 (bodyB null for the world)`);
    this.prototype = grow(this.prototype, i + 1);
    this.bodyA = grow(this.bodyA, i + 1);
    this.bodyB = grow(this.bodyB, i + 1);
    this.anchorA = grow(this.anchorA, 3 * (i + 1));
    this.anchorB = grow(this.anchorB, 3 * (i + 1));
    const rest: Record<string, unknown> = {};
    for (const k of Object.keys(c)) if (!(JOINT_FIELDS as readonly string[]).includes(k)) rest[k] = (c as Record<string, unknown>)[k];
    this.prototype[i] = this.prototypes.intern(rest, Object.keys(c));
    this.bodyA[i] = c.bodyA;
    this.bodyB[i] = c.bodyB === null ? -1 : c.bodyB;
    this.anchorA.set(vec(c.anchorA, 3, `constraints[${i}].anchorA`), 3 * i);
    this.anchorB.set(vec(c.anchorB, 3, `constraints[${i}].anchorB`), 3 * i);
    this.count++;
  }

  /** Joint i as a fresh frozen ConstraintDesc: its keys in the order its builder wrote them, its own fields from its prototype. */
  at(i: number): ConstraintDesc {
    const k = this.prototype[i];
    const vector = (a: Float64Array) => Object.freeze([a[3 * i], a[3 * i + 1], a[3 * i + 2]]);
    const c = assemble(this.prototypes.keys[k], this.prototypes.list[k], (key) =>
      key === 'bodyA' ? this.bodyA[i] : key === 'bodyB' ? (this.bodyB[i] < 0 ? null : this.bodyB[i]) : key === 'anchorA' ? vector(this.anchorA) : key === 'anchorB' ? vector(this.anchorB) : undefined,
    );
    return Object.freeze(c) as unknown as ConstraintDesc;
  }
}

type Packing = PackedBodies | PackedConstraints;
const packingOfList = new WeakMap<object, Packing>();

/** A read-only array view over a packing: index access makes element i; `push` packs. */
function listView<T>(pack: Packing & { at(i: number): T; push(x: T): void }): T[] {
  const index = (key: string | symbol): number => {
    if (typeof key !== 'string' || key.length === 0) return -1;
    const c = key.charCodeAt(0);
    if (c < 48 || c > 57) return -1;
    const i = Number(key);
    return Number.isInteger(i) && String(i) === key ? i : -1;
  };
  const readOnly = (what: string) => {
    throw new TypeError(`a packed ${pack instanceof PackedBodies ? 'body' : 'constraint'} list is read-only (${what}): editableWorld() gives a plain copy to edit`);
  };
  const push = (...xs: T[]) => {
    for (const x of xs) pack.push(x);
    return pack.count;
  };
  const view = new Proxy([] as T[], {
    get(target, key, receiver) {
      const i = index(key);
      if (i >= 0) return i < pack.count ? pack.at(i) : undefined;
      if (key === 'length') return pack.count;
      if (key === 'push') return push;
      return Reflect.get(target, key, receiver);
    },
    has(target, key) {
      const i = index(key);
      if (i >= 0) return i < pack.count;
      return Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      const i = index(key);
      if (i >= 0) return i < pack.count ? { value: pack.at(i), writable: false, enumerable: true, configurable: true } : undefined;
      if (key === 'length') return { value: pack.count, writable: true, enumerable: false, configurable: false };
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    ownKeys() {
      // index keys are not listed (10M strings); `length` is what iteration uses
      return ['length'];
    },
    set: (_t, key) => readOnly(`setting ${String(key)}`),
    defineProperty: (_t, key) => readOnly(`defining ${String(key)}`),
    deleteProperty: (_t, key) => readOnly(`deleting ${String(key)}`),
  });
  packingOfList.set(view, pack);
  return view;
}

/** An empty packed body list to push BodyDescs into; `capacity`: the scene's count, so it never regrows. */
export function packedBodyList(capacity?: number): BodyDesc[] {
  return listView(new PackedBodies(capacity));
}

/** An empty packed constraint list to push ConstraintDescs into. */
export function packedConstraintList<C extends ConstraintDesc = ConstraintDesc>(capacity?: number): C[] {
  return listView(new PackedConstraints(capacity)) as C[];
}

/** The packing behind a body list, or null for a plain array. */
export function packedBodies(list: readonly unknown[]): PackedBodies | null {
  const p = packingOfList.get(list);
  return p instanceof PackedBodies ? p : null;
}

/** The packing behind a constraint list, or null for a plain array. */
export function packedConstraints(list: readonly unknown[]): PackedConstraints | null {
  const p = packingOfList.get(list);
  return p instanceof PackedConstraints ? p : null;
}

/** The world with plain, editable arrays of plain objects (a deep copy of every element). */
export function editableWorld(world: WorldDesc): WorldDesc {
  const copy = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;
  return {
    ...world,
    gravity: [...world.gravity] as WorldDesc['gravity'],
    bodies: Array.from(world.bodies, (b) => copy(b)),
    constraints: Array.from(world.constraints, (c) => copy(c)),
  };
}

/**
 * One pass over a body list, plain or packed, without making an object per body where it is
 * packed: `visit(i, proto, position, orientation)` gets the body's shared fields (its prototype,
 * or the body itself in a plain list: shape, mass or density, fixed, material), its position
 * (3 numbers at `at`) and orientation (4 at `orientationAt`, null where the desc gives none).
 */
export function forEachBody(
  bodies: readonly BodyDesc[],
  visit: (i: number, proto: Omit<BodyDesc, 'position'>, position: ArrayLike<number>, at: number, orientation: ArrayLike<number> | null, orientationAt: number) => void,
): void {
  const pb = packedBodies(bodies);
  if (pb) {
    const protos = pb.prototypes.list;
    for (let i = 0; i < pb.count; i++) visit(i, protos[pb.prototype[i]], pb.position, 3 * i, pb.present[i] & ORIENTATION ? pb.orientation : null, 4 * i);
    return;
  }
  for (let i = 0; i < bodies.length; i++) {
    const b = bodies[i];
    visit(i, b, b.position, 0, b.orientation ?? null, 0);
  }
}

/** As forEachBody, for joints: the joint's own fields (type, compliance, axes, lengths, limits) and its bodies and anchors. */
export function forEachConstraint(
  constraints: readonly ConstraintDesc[],
  visit: (ic: number, proto: ConstraintDesc, bodyA: number, bodyB: number | null, anchorA: ArrayLike<number>, anchorB: ArrayLike<number>, at: number) => void,
): void {
  const pc = packedConstraints(constraints);
  if (pc) {
    const protos = pc.prototypes.list as unknown as ConstraintDesc[];
    for (let ic = 0; ic < pc.count; ic++) visit(ic, protos[pc.prototype[ic]], pc.bodyA[ic], pc.bodyB[ic] < 0 ? null : pc.bodyB[ic], pc.anchorA, pc.anchorB, 3 * ic);
    return;
  }
  for (let ic = 0; ic < constraints.length; ic++) {
    const c = constraints[ic];
    visit(ic, c, c.bodyA, c.bodyB, c.anchorA, c.anchorB, 0);
  }
}

/** The world with packed lists (itself where both already are): what every built-in rigid scene and a loaded scene file hand on. */
export function packWorld(world: WorldDesc): WorldDesc {
  if (packedBodies(world.bodies) && packedConstraints(world.constraints)) return world;
  const bodies = packedBodyList(world.bodies.length);
  for (const b of world.bodies) bodies.push(b);
  const constraints = packedConstraintList(world.constraints.length);
  for (const c of world.constraints) constraints.push(c);
  return { ...world, bodies, constraints };
}

/** A constraint list in another order: element k of the result is element order[k] of `list` (packed in, packed out). */
export function reorderedConstraints(list: readonly ConstraintDesc[], order: ArrayLike<number>): ConstraintDesc[] {
  const from = packedConstraints(list);
  if (!from) return Array.from(order as ArrayLike<number>, (ic) => list[ic]);
  const n = order.length;
  const out = packedConstraintList(n);
  const to = packedConstraints(out)!;
  to.prototypes.adopt(from.prototypes);
  for (let k = 0; k < n; k++) {
    const ic = order[k];
    to.prototype[k] = from.prototype[ic];
    to.bodyA[k] = from.bodyA[ic];
    to.bodyB[k] = from.bodyB[ic];
    to.anchorA.set(from.anchorA.subarray(3 * ic, 3 * ic + 3), 3 * k);
    to.anchorB.set(from.anchorB.subarray(3 * ic, 3 * ic + 3), 3 * k);
  }
  to.count = n;
  return out;
}
