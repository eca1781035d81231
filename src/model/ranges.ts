/**
 * One way to state and check a number's range, for every input that has one: the scene schema
 * (schema.ts), the command line's options (cli/args.ts numberFlag, the solver options'
 * solverOptionSpecs), the built-in scenes' parameters (scenes/scene.ts). So every range reads the
 * same wherever it is refused — "expected a number in [0, 2], got 50" — and none prints a bound
 * of ±Infinity: an open end is written as a one-sided bound ("≥ 1", "> 0").
 *
 * A leaf module (imports nothing): the model, scenes, CLI and viewer all read it.
 */

/** A closed or half-open interval of numbers, optionally of integers. */
export interface NumberRange {
  /** least value (absent: none) */
  min?: number;
  /** the least value itself is excluded (x > min) */
  minExclusive?: boolean;
  /** greatest value (absent: none) */
  max?: number;
  /** the greatest value itself is excluded (x < max) */
  maxExclusive?: boolean;
  integer?: boolean;
}

/** A number as a range shows it: up to 6 significant digits, exponents for the very large and small. */
export function formatBound(x: number): string {
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e-4 && a < 1e7) return String(+x.toPrecision(6));
  return x.toExponential().replace(/(\.\d{0,5})\d*e/, '$1e').replace('.e', 'e').replace('e+', 'e');
}

/** Whether a bound is given at all (an infinite bound is no bound: it is never printed). */
const bounded = (b: number | undefined): b is number => b !== undefined && Number.isFinite(b);

/** The range in words: 'in [0, 2]', 'in (0, 1]', '≥ 1', '> 0', '≤ 100', or '' when it has no bound. */
export function rangeText(r: NumberRange): string {
  const lo = bounded(r.min), hi = bounded(r.max);
  if (lo && hi) return `in ${r.minExclusive ? '(' : '['}${formatBound(r.min!)}, ${formatBound(r.max!)}${r.maxExclusive ? ')' : ']'}`;
  if (lo) return `${r.minExclusive ? '>' : '≥'} ${formatBound(r.min!)}`;
  if (hi) return `${r.maxExclusive ? '<' : '≤'} ${formatBound(r.max!)}`;
  return '';
}

/** Whether `x` is a finite number within `r`. */
export function inRange(x: number, r: NumberRange): boolean {
  if (!Number.isFinite(x)) return false;
  if (r.integer && !Number.isInteger(x)) return false;
  if (bounded(r.min) && (r.minExclusive ? !(x > r.min) : !(x >= r.min))) return false;
  if (bounded(r.max) && (r.maxExclusive ? !(x < r.max) : !(x <= r.max))) return false;
  return true;
}

/**
 * The bound `x` breaks ('≥ 1', '≤ 2', '> 0'), or null when it keeps both: what a one-line refusal
 * says of a flag or parameter ("--beta must be ≤ 2, got 50"). Not for integers or non-finite x
 * (those are said first, in their own words).
 */
export function brokenBound(x: number, r: NumberRange): string | null {
  if (bounded(r.min) && (r.minExclusive ? !(x > r.min) : !(x >= r.min))) return `${r.minExclusive ? '>' : '≥'} ${formatBound(r.min)}`;
  if (bounded(r.max) && (r.maxExclusive ? !(x < r.max) : !(x <= r.max))) return `${r.maxExclusive ? '<' : '≤'} ${formatBound(r.max)}`;
  return null;
}

/**
 * What is wrong with `x` for `r`, as the end of a one-line message ('expected an integer ≥ 1, got 0'),
 * or null when it is in range. `unit` follows the bounds ('in [0.01, 10] m').
 */
export function rangeFault(x: number, r: NumberRange, unit = ''): string | null {
  if (inRange(x, r)) return null;
  const text = rangeText(r);
  const what = r.integer ? 'an integer' : Number.isFinite(x) ? 'a number' : 'a finite number';
  const got = typeof x === 'number' ? formatBound(x) : String(x);
  return `expected ${what}${text ? ` ${text}` : ''}${text && unit ? ` ${unit}` : ''}, got ${got}`;
}

// ───────────── the physical ranges that more than one input shares ─────────────

/**
 * Friction coefficients μ (friction, staticFriction, dynamicFriction; the scenes' `friction`): 0 to 100.
 * The largest measured between real materials are of order 1 to 10 (clean metals in vacuum); at
 * μ = 100 the friction cone holds a tangential impulse of 100 × the normal one, which no scene here
 * comes near (a contact at that μ never slips), and beyond it μ λ_n only nears overflow
 * (μ = 1e300 times a normal impulse above 1.8e8 N·s is infinite in f64).
 */
export const FRICTION_RANGE: NumberRange = { min: 0, max: 100 };

/** A coefficient of restitution e: 0 (no bounce) to 1 (elastic); above 1 a bounce would make energy. */
export const RESTITUTION_RANGE: NumberRange = { min: 0, max: 1 };

/**
 * The body sizes the contact code supports (bodies that collide: a world with collisions on and two
 * or more bodies), as the body's least extent — a sphere's or capsule's diameter, a box's shortest
 * edge, 2 × leastHalfSize (collision/pipeline.ts scales its slop by it) — in metres: 1 cm to 10 m.
 *   Below (refused): the contact's own tolerances are fixed lengths, not fractions of the body. The
 *   soft contact spring (30 Hz) sinks a resting body by g/ω² = 9.81/(2π·30)² = 0.28 mm whatever its
 *   size, and the rigid solvers' slop is at least 2 % of the size (pairSlop) only down to what
 *   f64 and the iteration resolve: measured, a cube of half extent 0.1 mm sinks 69 % of its half
 *   height into the ground under softstep-cpu and rapier (2 mm: 3.5 %, 5 mm: 1.4 %); a 1 cm cube
 *   (half extent 5 mm) is the smallest the contact tests stack (test/contact-core.test.ts). The
 *   result is then wrong by a share of the body that grows as it shrinks: no result to keep.
 *   Above (warned): the slop (5 mm) and speculative distance (2 cm) become a smaller share of the
 *   body, and a cube of half extent 500 m was measured resting within 1e-4 of its size: nothing is
 *   known to fail, but the contact tests stop at 10 m, so a result there is untested, not wrong.
 */
export const CONTACT_SIZE_RANGE: NumberRange = { min: 0.01, max: 10 };
