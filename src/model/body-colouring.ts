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
