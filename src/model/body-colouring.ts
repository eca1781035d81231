/**
 * Body colouring: the ordering a per-body Gauss-Seidel needs (AVBD, Giles et al. 2025 §3.6, "vertex
 * colouring" in VBD's words). Two dynamic bodies conflict when some constraint (a joint or a contact)
 * joins them; fixed bodies (inverse mass 0) never move, so they join nothing. Bodies of one colour
 * share no constraint, so their per-body updates read only bodies of other colours and can run at
 * once, in any order, with the result of running them one after the other.
 *
 * Greedy, largest degree first (Welsh–Powell), ties by index; each body takes the smallest colour no
 * coloured neighbour has. The graph is the body → item CSR the solver already holds (`first`, `items`
 * and the items' two bodies), so nothing is allocated per call beyond growing the scratch.
 *
 * Invariant (checked by bodyColouringConflict): no item joins two dynamic bodies of one colour.
 */
import { hashPair } from '../math/hash-pair.js';

export class BodyColouring {
  colourCount = 0;
  /** dynamic bodies grouped by colour: colour c is order[start[c] .. start[c + 1]) */
  order = new Int32Array(0);
  start = new Int32Array(1);
  /** the colour of each body, −1 for a fixed one */
  colour = new Int32Array(0);
  private degree = new Int32Array(0);
  private visit = new Int32Array(0);
  private mark = new Int32Array(16);

  /**
   * Colours the `bodyCount` bodies: body b's items are items[first[b] .. first[b + 1]), item k joins
   * itemA[k] and itemB[k]; a body is dynamic where inverseMass > 0 (and not asleep, where `asleep`).
   */
  build(bodyCount: number, inverseMass: Float64Array, first: Int32Array, items: Int32Array, itemA: Int32Array, itemB: Int32Array): void {
    if (this.colour.length < bodyCount) {
      this.colour = new Int32Array(bodyCount);
      this.degree = new Int32Array(bodyCount);
      this.visit = new Int32Array(bodyCount);
      this.order = new Int32Array(bodyCount);
    }
    const { colour, degree, visit } = this;
    let dynamic = 0, maxDegree = 0;
    for (let b = 0; b < bodyCount; b++) {
      colour[b] = -1;
      if (inverseMass[b] > 0) {
        degree[b] = first[b + 1] - first[b];
        if (degree[b] > maxDegree) maxDegree = degree[b];
        dynamic++;
      }
    }
    // counting sort by degree, descending, stable in the index
    const buckets = new Int32Array(maxDegree + 2);
    for (let b = 0; b < bodyCount; b++) if (inverseMass[b] > 0) buckets[maxDegree - degree[b] + 1]++;
    for (let d = 0; d <= maxDegree; d++) buckets[d + 1] += buckets[d];
    for (let b = 0; b < bodyCount; b++) if (inverseMass[b] > 0) visit[buckets[maxDegree - degree[b]]++] = b;
    let colours = 0;
    let stamp = 0;
    this.mark.fill(-1);
    for (let n = 0; n < dynamic; n++) {
      const b = visit[n];
      stamp++;
      for (let e = first[b]; e < first[b + 1]; e++) {
        const k = items[e];
        const other = itemA[k] === b ? itemB[k] : itemA[k];
        const c = colour[other];
        if (c >= 0) {
          if (c >= this.mark.length) this.grow(c + 1);
          this.mark[c] = stamp;
        }
      }
      let c = 0;
      while (c < this.mark.length && this.mark[c] === stamp) c++;
      if (c >= this.mark.length) this.grow(c + 1);
      colour[b] = c;
      if (c + 1 > colours) colours = c + 1;
    }
    this.colourCount = colours;
    if (this.start.length < colours + 1) this.start = new Int32Array(colours + 1);
    const start = this.start;
    start.fill(0, 0, colours + 1);
    for (let b = 0; b < bodyCount; b++) if (colour[b] >= 0) start[colour[b] + 1]++;
    for (let c = 0; c < colours; c++) start[c + 1] += start[c];
    const fill = start.slice(0, colours);
    // bodies in index order within a colour (deterministic)
    for (let b = 0; b < bodyCount; b++) if (colour[b] >= 0) this.order[fill[colour[b]]++] = b;
  }

  private grow(n: number): void {
    const m = new Int32Array(Math.max(n, 2 * this.mark.length)).fill(-1);
    m.set(this.mark);
    this.mark = m;
  }
}

/** The first item that joins two dynamic bodies of one colour, or −1 (the colouring's invariant). */
export function bodyColouringConflict(col: BodyColouring, itemCount: number, itemA: Int32Array, itemB: Int32Array): number {
  for (let k = 0; k < itemCount; k++) {
    const a = col.colour[itemA[k]], b = col.colour[itemB[k]];
    if (a >= 0 && a === b && itemA[k] !== itemB[k]) return k;
  }
  return -1;
}

/**
 * The most colours the Jones–Plassmann body colouring gives (the colours a body's neighbours hold fit
 * one u32 mask): a body of degree d takes a colour ≤ d, so any graph of degree ≤ 31 fits.
 */
export const BODY_COLOUR_LIMIT = 32;
/** Rounds of the Jones–Plassmann colouring before the serial clean-up (bodyColoursJonesPlassmann). */
export const BODY_COLOUR_ROUNDS = 16;

/** A body's Jones–Plassmann priority (Luby's random priorities): the shared 32-bit hash, ties to the larger index. */
export function bodyPriority(i: number): number {
  return hashPair(i, i);
}

/**
 * Jones–Plassmann colouring of the bodies (Jones & Plassmann 1993, with hashed priorities): the CPU
 * twin of gpu/body-colouring.ts, the same colours bit for bit. The graph: body i's neighbours are
 * neighbours[offsets[i] .. offsets[i + 1]); only active bodies (dynamic: a fixed body never moves, so it
 * conflicts with nothing) are coloured or count as neighbours. In round r, an uncoloured body that
 * outranks every uncoloured neighbour (a neighbour coloured in this same round counts as uncoloured:
 * the GPU's threads see each other's writes in no fixed order) takes the lowest colour none of its
 * coloured neighbours has. Winners of a round are never adjacent (each outranks the other), so no two
 * neighbours take a colour at once: the colouring has no clash by construction. The colours are those
 * of a sequential greedy pass in priority order, so a body of degree d takes a colour ≤ d. A body still
 * uncoloured after `rounds` (a long chain of decreasing priorities) is coloured by a serial greedy
 * pass in index order (one thread on the GPU), so the result is complete and clash-free whatever
 * `rounds` is. Returns the colour per body, −1 where inactive. Throws where a body has 32 neighbours
 * or more (BODY_COLOUR_LIMIT).
 */
export function bodyColoursJonesPlassmann(bodyCount: number, active: ArrayLike<number>, offsets: Int32Array, neighbours: Int32Array, rounds = BODY_COLOUR_ROUNDS): Int32Array<ArrayBuffer> {
  const UNC = -2;
  const colour = new Int32Array(bodyCount), round = new Int32Array(bodyCount).fill(-1);
  for (let i = 0; i < bodyCount; i++) colour[i] = active[i] ? UNC : -1;
  const priority = new Uint32Array(bodyCount);
  for (let i = 0; i < bodyCount; i++) priority[i] = bodyPriority(i);
  const outranks = (j: number, i: number) => priority[j] > priority[i] || (priority[j] === priority[i] && j > i);
  const lowestFree = (i: number, r: number, strict: boolean): number => {
    let mask = 0;
    for (let e = offsets[i]; e < offsets[i + 1]; e++) {
      const j = neighbours[e];
      if (j === i || !active[j]) continue;
      const uncoloured = colour[j] === UNC || (strict && round[j] === r);
      if (uncoloured) {
        if (strict && outranks(j, i)) return -1;
        continue;
      }
      mask |= 1 << colour[j];
    }
    if (mask === -1) throw new RangeError(`body ${i} has ${BODY_COLOUR_LIMIT} coloured neighbours or more: beyond the ${BODY_COLOUR_LIMIT} colours of the body colouring`);
    return 31 - Math.clz32(~mask & (mask + 1));
  };
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < bodyCount; i++) {
      if (colour[i] !== UNC) continue;
      const c = lowestFree(i, r, true);
      if (c >= 0) {
        colour[i] = c;
        round[i] = r;
      }
    }
  // the serial clean-up: every body left, in index order, against all coloured neighbours
  for (let i = 0; i < bodyCount; i++)
    if (colour[i] === UNC) {
      colour[i] = lowestFree(i, rounds, false);
      round[i] = rounds;
    }
  return colour;
}

/**
 * BodyColouring's interface over the Jones–Plassmann colours (bodyColoursJonesPlassmann), for avbd-cpu
 * run beside avbd-gpu with the GPU's colouring (the same colours, so the same order of updates): the
 * graph from the body → item CSR as BodyColouring.build takes it; bodies in index order within a colour.
 */
export class JonesPlassmannBodyColouring {
  colourCount = 0;
  order = new Int32Array(0);
  start = new Int32Array(1);
  colour = new Int32Array(0);

  build(bodyCount: number, inverseMass: Float64Array, first: Int32Array, items: Int32Array, itemA: Int32Array, itemB: Int32Array): void {
    const neighbours = new Int32Array(first[bodyCount]);
    for (let b = 0; b < bodyCount; b++)
      for (let e = first[b]; e < first[b + 1]; e++) {
        const k = items[e];
        neighbours[e] = itemA[k] === b ? itemB[k] : itemA[k];
      }
    const active = new Uint8Array(bodyCount);
    for (let b = 0; b < bodyCount; b++) active[b] = inverseMass[b] > 0 ? 1 : 0;
    this.colour = bodyColoursJonesPlassmann(bodyCount, active, first, neighbours);
    let colours = 0;
    for (let b = 0; b < bodyCount; b++) colours = Math.max(colours, this.colour[b] + 1);
    this.colourCount = colours;
    this.start = new Int32Array(colours + 1);
    for (let b = 0; b < bodyCount; b++) if (this.colour[b] >= 0) this.start[this.colour[b] + 1]++;
    for (let c = 0; c < colours; c++) this.start[c + 1] += this.start[c];
    const fill = this.start.slice(0, colours);
    this.order = new Int32Array(this.start[colours]);
    for (let b = 0; b < bodyCount; b++) if (this.colour[b] >= 0) this.order[fill[this.colour[b]]++] = b;
  }
}
