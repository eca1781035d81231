/**
 * Constraint-graph colouring: the machinery every parallel Gauss-Seidel-type
 * solver needs (gs-*, xpbd-*). Two constraints conflict when they share a
 * dynamic body; fixed bodies and world anchors (inverse mass 0) never move, so
 * they do not count. Constraints of one colour then touch disjoint dynamic
 * bodies, and all of a colour can be solved at once, in any order, with the
 * same result as solving them one after the other.
 *
 * Built on the CPU once per topology change, like the CSR connectivity.
 *
 * Algorithm (two greedy passes over one order):
 *   order   constraints by decreasing degree (the number of constraints sharing a
 *           dynamic body with it, "largest first", Welsh–Powell), ties by index;
 *   pass 1  first fit: each constraint takes the smallest colour no neighbour has,
 *           which fixes the colour count K;
 *   pass 2  balanced recolouring: in the same order, each constraint takes, among
 *           colours 0..K−1 that no already recoloured neighbour has, the one with
 *           the fewest constraints so far (a new colour only if none is free).
 * First fit alone leaves a long tail (an odd necklace loop gets a third colour of
 * one constraint per chain); pass 2 spreads the constraints evenly over the K
 * colours, so no colour is a dispatch that does almost nothing. Where a graph
 * needs many colours (a body with d constraints needs d colours) they stay
 * separate, one dispatch each, and `sizes` reports them.
 */
import type { WorldDesc } from './world.js';
import { compileWorld } from './compiled.js';
import { reorderedConstraints } from './packed.js';

export interface Colouring {
  colourCount: number;
  /** constraint indices grouped by colour: colour c is order[start[c] .. start[c+1]) */
  order: Int32Array;
  /** colourCount + 1 offsets into `order` */
  start: Int32Array;
  /** the colour of each constraint */
  colour: Int32Array;
  /** constraints per colour */
  sizes: number[];
}

export interface ConstraintGraph {
  constraintCount: number;
  bodyCount: number;
  ib0: Int32Array;
  ib1: Int32Array;
  /** 0 marks a fixed body (or world anchor): it does not count as shared */
  inverseMass: Float64Array;
}

export function colourConstraints(g: ConstraintGraph, { balance = true }: { balance?: boolean } = {}): Colouring {
  const { constraintCount: nc, bodyCount: nb, ib0, ib1, inverseMass } = g;
  // CSR of dynamic body → constraints
  const count = new Int32Array(nb + 1);
  for (let c = 0; c < nc; c++) {
    if (inverseMass[ib0[c]] > 0) count[ib0[c]]++;
    if (inverseMass[ib1[c]] > 0 && ib1[c] !== ib0[c]) count[ib1[c]]++;
  }
  const first = new Int32Array(nb + 1);
  for (let b = 0; b < nb; b++) first[b + 1] = first[b] + count[b];
  const list = new Int32Array(first[nb]);
  const fill = first.slice(0, nb);
  for (let c = 0; c < nc; c++) {
    if (inverseMass[ib0[c]] > 0) list[fill[ib0[c]]++] = c;
    if (inverseMass[ib1[c]] > 0 && ib1[c] !== ib0[c]) list[fill[ib1[c]]++] = c;
  }
  const dynamicBodies = (c: number): number[] => {
    const out: number[] = [];
    if (inverseMass[ib0[c]] > 0) out.push(ib0[c]);
    if (inverseMass[ib1[c]] > 0 && ib1[c] !== ib0[c]) out.push(ib1[c]);
    return out;
  };
  // largest degree first, ties by index (a stable, deterministic order)
  const degree = new Int32Array(nc);
  for (let c = 0; c < nc; c++) for (const b of dynamicBodies(c)) degree[c] += count[b] - 1;
  // a counting sort by degree, descending, stable in the index (a comparison sort of a JS array of nc
  // numbers takes seconds and its heap at 10M joints)
  let maxDegree = 0;
  for (let c = 0; c < nc; c++) if (degree[c] > maxDegree) maxDegree = degree[c];
  const byDegree = new Int32Array(maxDegree + 2);
  for (let c = 0; c < nc; c++) byDegree[maxDegree - degree[c] + 1]++;
  for (let d = 0; d <= maxDegree; d++) byDegree[d + 1] += byDegree[d];
  const visit = new Int32Array(nc);
  for (let c = 0; c < nc; c++) visit[byDegree[maxDegree - degree[c]]++] = c;

  const colour = new Int32Array(nc).fill(-1);
  // mark[k] === stamp: colour k is taken by a neighbour of the constraint being coloured
  let mark = new Int32Array(16).fill(-1);
  const markNeighbours = (c: number, stamp: number): void => {
    for (const b of dynamicBodies(c))
      for (let k = first[b]; k < first[b + 1]; k++) {
        const col = colour[list[k]];
        if (col < 0) continue;
        if (col >= mark.length) {
          const grown = new Int32Array(Math.max(2 * mark.length, col + 1)).fill(-1);
          grown.set(mark);
          mark = grown;
        }
        mark[col] = stamp;
      }
  };

  // pass 1: first fit
  let colourCount = 0;
  visit.forEach((c, stamp) => {
    markNeighbours(c, stamp);
    let col = 0;
    while (col < mark.length && mark[col] === stamp) col++;
    colour[c] = col;
    colourCount = Math.max(colourCount, col + 1);
  });
  // pass 2: balanced recolouring over the same K colours
  const sizes: number[] = new Array(colourCount).fill(0);
  if (balance) colour.fill(-1);
  else colour.forEach((col) => sizes[col]++);
  mark.fill(-1);
  if (balance) visit.forEach((c, stamp) => {
    markNeighbours(c, stamp);
    let best = -1;
    for (let col = 0; col < sizes.length; col++)
      if ((col >= mark.length || mark[col] !== stamp) && (best < 0 || sizes[col] < sizes[best])) best = col;
    if (best < 0) {
      best = sizes.length;
      sizes.push(0);
    }
    colour[c] = best;
    sizes[best]++;
  });

  const start = new Int32Array(sizes.length + 1);
  for (let k = 0; k < sizes.length; k++) start[k + 1] = start[k] + sizes[k];
  const order = new Int32Array(nc);
  const at = start.slice(0, sizes.length);
  for (let c = 0; c < nc; c++) order[at[colour[c]]++] = c; // by index within a colour
  return { colourCount: sizes.length, order, start, colour, sizes };
}

/** The first constraint pair of one colour sharing a dynamic body, or null if the colouring is proper. */
export function colouringConflict(g: ConstraintGraph, col: Colouring): [number, number] | null {
  const owner = new Map<number, number>(); // key colour·bodyCount + body → constraint
  for (let c = 0; c < g.constraintCount; c++)
    for (const b of [g.ib0[c], g.ib1[c]]) {
      if (!(g.inverseMass[b] > 0)) continue;
      const key = col.colour[c] * g.bodyCount + b;
      const other = owner.get(key);
      if (other !== undefined && other !== c) return [other, c];
      owner.set(key, c);
    }
  return null;
}

/**
 * The world with its constraints reordered colour by colour, and its colouring
 * (now colour c is constraints start[c] .. start[c+1]−1, and `order` is the identity).
 * Solvers that sweep colours use it so that each colour is one contiguous range of
 * every per-constraint array. Bodies keep their indices, so snapshots and metrics
 * are those of the original world.
 */
export function colourOrderedWorld(world: WorldDesc): { world: WorldDesc; colouring: Colouring } {
  const col = colourConstraints(compileWorld(world));
  const constraints = reorderedConstraints(world.constraints, col.order); // packed stays packed
  const colour = Int32Array.from(col.order, (ic) => col.colour[ic]);
  const order = Int32Array.from(col.order, (_, k) => k);
  return { world: { ...world, constraints }, colouring: { ...col, colour, order } };
}
