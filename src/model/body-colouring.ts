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
 * The most colours the parallel body colouring gives (the colours a body's neighbours hold fit one u32
 * mask): a body takes a colour no higher than its number of neighbours, so any graph of degree ≤ 31 fits;
 * a body of higher degree whose neighbours already hold all 32 is left uncoloured and counted (`left`).
 */
export const BODY_COLOUR_LIMIT = 32;
/**
 * The most rounds of the parallel body colouring (bodyColoursParallel): a bound, not a count run; the
 * rounds after every body is coloured dispatch no workgroup on the GPU. Measured with the CPU twin on
 * random graphs of degree ≤ 31 (400 to 100k bodies): 14 to 15 rounds; degree ≤ 12: 9 (test/avbd-gpu.test.ts
 * reports each graph's). A body still uncoloured after them is counted in `left`, which the solver reports.
 */
export const BODY_COLOUR_ROUNDS = 48;

/** A body's priority (Luby's random priorities, as Jones–Plassmann uses them): the shared 32-bit hash, ties to the larger index. */
export function bodyPriority(i: number): number {
  return hashPair(i, i);
}

/** What bodyColoursParallel gives: the colour per body (−1 inactive, −2 left uncoloured), the rounds that coloured some body, the bodies left. */
export interface ParallelColours {
  colour: Int32Array<ArrayBuffer>;
  rounds: number;
  left: number;
}

/**
 * The parallel body colouring (the CPU twin of gpu/body-colouring.ts: the same colours, bit for bit):
 * speculative greedy colouring in rounds (Gebremedhin & Manne 2000; Çatalyürek et al. 2012), its
 * conflicts settled by Jones–Plassmann's priorities (Jones & Plassmann 1993, Luby's hashed priorities),
 * over a shrinking list of the bodies not yet coloured. Body i's neighbours are
 * neighbours[offsets[i] .. offsets[i + 1]) (repeats allowed); only active bodies (dynamic: a fixed body
 * never moves, so it conflicts with nothing) are coloured or count as neighbours. Round r, over the
 * bodies still listed:
 *   tentative  t_i = the lowest colour no settled neighbour holds (settled: coloured in rounds < r)
 *   resolve    i settles with t_i unless a neighbour j still listed has t_j = t_i and outranks i;
 *              else it stays listed for round r + 1
 * No clash: two neighbours settling in one round with one colour would each have to outrank the other;
 * one settling now never takes a colour a neighbour settled before holds (tentative). Each round the
 * listed body that outranks all its listed neighbours settles, so the rounds are at most
 * Jones–Plassmann's (the longest chain of decreasing priority), and in practice about the colour
 * count (9 for degree 12, 15 for degree 31, where Jones–Plassmann needs 32 and 81: the colour of a
 * body is final unless a higher neighbour made the same choice in the same round). Deterministic: a
 * round reads only the previous rounds' colours and this round's choices, whatever the threads' order.
 * A body whose settled neighbours hold all `limit` colours, or still listed after `rounds` rounds, is
 * left uncoloured (−2) and counted.
 */
export function bodyColoursParallel(bodyCount: number, active: ArrayLike<number>, offsets: Int32Array, neighbours: Int32Array, rounds = BODY_COLOUR_ROUNDS, limit = BODY_COLOUR_LIMIT): ParallelColours {
  const UNC = -3, LEFT = -2;
  const colour = new Int32Array(bodyCount);
  const priority = new Uint32Array(bodyCount), tentative = new Int32Array(bodyCount);
  for (let i = 0; i < bodyCount; i++) priority[i] = bodyPriority(i);
  const outranks = (j: number, i: number) => priority[j] > priority[i] || (priority[j] === priority[i] && j > i);
  let list: number[] = [];
  for (let i = 0; i < bodyCount; i++) {
    colour[i] = active[i] ? UNC : -1;
    if (active[i]) list.push(i);
  }
  let used = 0;
  for (let r = 0; r < rounds && list.length > 0; r++) {
    used++;
    for (const i of list) {
      let mask = 0;
      for (let e = offsets[i]; e < offsets[i + 1]; e++) {
        const c = colour[neighbours[e]];
        if (c >= 0 && neighbours[e] !== i) mask |= 1 << c;
      }
      const c = 31 - Math.clz32(~mask & (mask + 1)); // the lowest clear bit (32 when none)
      tentative[i] = mask === -1 || c >= limit ? -1 : c;
    }
    const next: number[] = [], settled: number[] = [];
    for (const i of list) {
      const t = tentative[i];
      if (t < 0) {
        colour[i] = LEFT;
        continue;
      }
      let wins = true;
      for (let e = offsets[i]; e < offsets[i + 1] && wins; e++) {
        const j = neighbours[e];
        if (j !== i && colour[j] === UNC && tentative[j] === t && outranks(j, i)) wins = false;
      }
      (wins ? settled : next).push(i);
    }
    for (const i of settled) colour[i] = tentative[i];
    list = next;
  }
  for (const i of list) colour[i] = LEFT;
  let left = 0;
  for (let i = 0; i < bodyCount; i++) if (colour[i] === LEFT) left++;
  return { colour, rounds: used, left };
}

/**
 * BodyColouring's interface over the parallel colours (bodyColoursParallel), for avbd-cpu run beside
 * avbd-gpu with the GPU's colouring (the same colours, so the same order of updates): the graph from the
 * body → item CSR as BodyColouring.build takes it; bodies in index order within a colour. Throws where a
 * body is left uncoloured (the GPU reports the same).
 */
export class ParallelBodyColouring {
  colourCount = 0;
  rounds = 0;
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
    const { colour, rounds, left } = bodyColoursParallel(bodyCount, active, first, neighbours);
    if (left > 0) throw new RangeError(`parallel body colouring: ${left} bodies left uncoloured (a body with ${BODY_COLOUR_LIMIT} coloured neighbours or more, or more than ${BODY_COLOUR_ROUNDS} rounds)`);
    this.colour = colour;
    this.rounds = rounds;
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
