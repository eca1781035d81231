/**
 * Sparse direct solve of a symmetric positive semi-definite system A x = b whose nonzeros come in
 * blocks (3×3 by default) on a block graph (block (i, j) may be nonzero only where i = j or i–j is an edge):
 * a reverse Cuthill–McKee ordering of the block graph, and an envelope (profile) LDLᵀ of the scalar
 * matrix in that order, in f64, with semi-definite pivots dropped. Written here from the methods'
 * definitions in
 *   [GL81]  A. George and J. W. H. Liu, Computer Solution of Large Sparse Positive Definite
 *           Systems, Prentice-Hall 1981: ch. 4 (RCM, pseudo-peripheral nodes §4.3, the envelope
 *           method §4.2, 4.4: fill stays inside the envelope);
 *   [GVL]   G. H. Golub and C. F. Van Loan, Matrix Computations, 4th ed. 2013: §4.1–4.2 (LDLᵀ,
 *           Cholesky), §3.5.3 (iterative refinement);
 *   [Hig]   N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed. 2002: ch. 10
 *           (Cholesky's backward error, the semi-definite case §10.3), ch. 12 (refinement).
 *
 * Ordering (computed once per sparsity pattern). RCM numbers the blocks breadth first from a
 * pseudo-peripheral node, neighbours by increasing degree, and reverses the order; each connected
 * component is numbered in one contiguous run, so a union of chains is ordered chain by chain and
 * each chain, a path graph, gets block bandwidth 1. The envelope of row i is the columns
 * first(i)..i, first(i) the least column of a nonzero in row i; LDLᵀ without pivoting fills only
 * inside it ([GL81] thm 4.2.1: L_ij = 0 for j < first(i)), so storing row i from first(i) holds L
 * exactly, and the work is Σ_i (i − first(i))², i.e. O(n w²) for a band of half-width w.
 *
 * Factorisation (row by row, the "bordering" form of [GL81] §4.2 and [GVL] alg. 4.1.2): with
 * t_j = L_ij d_j,
 *   t_j = a_ij − Σ_{k = max(first i, first j)}^{j−1} t_k L_jk,   j = first(i)..i−1
 *   L_ij = t_j / d_j,   d_i = a_ii − Σ_j t_j L_ij.
 * Semi-definite pivots: in exact arithmetic, for A PSD, a zero pivot d_j = 0 means the Schur complement's
 * row j is zero too, so every later t_j = 0: the unknown x_j is free and the rest of the system does
 * not depend on it. In f64 the computed d_i carries an error of at most about γ_{w+1} a_ii (w = the row's
 * width, γ_m = m u/(1 − m u), u = 2⁻⁵³): Cholesky's backward error |ΔA| ≤ γ_{w+1} |L||D||Lᵀ|, whose
 * diagonal is exactly a_ii ([Hig] thm 10.3). So a pivot d_i ≤ ε a_ii with ε ≫ w u cannot be told from
 * zero; it is taken as a null direction: d_i = 0, its column of L set to 0 (t_i = 0 in the rows after),
 * and x_i = 0 in the solve. That is the factorisation of A with row and column i deleted, which solves
 * A x = b whenever b ∈ range(A) (semi-definite Cholesky, [Hig] §10.3, here without pivoting).
 * ε = 1e-15 by default (≈ 9u), chosen between two measured populations on the joint grid (20 × 20, 2292
 * rows, rows up to w = 123 wide): the pivots of its exactly singular first step (a flat net) come out ≤ 0 or
 * ≤ 1e-16 a_ii (rounding in a sum of w terms of random sign is ~√w u a_ii in practice, below the
 * worst-case γ_{w+1} ≈ 1.4e-14), while the genuine pivots of the nearly flat net one step later reach down
 * to 1e-14 a_ii. Dropping a genuine pivot leaves the solve short in that direction, which refinement with
 * the same factor cannot repair (ε = 1e-13, 1e-12 or 1e-10 each left that step at 5e-10..3e-7 ‖b‖); keeping a
 * noise pivot only adds an arbitrary part along a (near-)null vector of A, which A maps to rounding, so the
 * residual — the test that decides — stays small (ε = 0 and ε = 1e-14 gave the same residuals there). The
 * caller checks the residual whatever ε did.
 *
 * Solve: L z = b (forward, by rows), w = D⁺ z (0 on null pivots), Lᵀ x = w (backward, by columns).
 */

/** A permutation in both directions: order[k] = the block numbered k; position[b] = the number of block b. */
export interface Ordering {
  order: Int32Array;
  position: Int32Array;
}

/**
 * Reverse Cuthill–McKee on an undirected graph in CSR form (adjStart.length = n + 1; adj holds each
 * edge in both directions; self-loops and repeats are ignored). Each component starts from a
 * pseudo-peripheral node found as in [GL81] §4.3.2 (Gibbs–Poole–Stockmeyer's heuristic): BFS from a
 * node of least degree, move to a node of least degree in the last level, repeat while the eccentricity grows.
 */
export function reverseCuthillMcKee(adjStart: Int32Array, adj: Int32Array): Ordering {
  const n = adjStart.length - 1;
  const degree = new Int32Array(n);
  for (let i = 0; i < n; i++) degree[i] = adjStart[i + 1] - adjStart[i];
  const order = new Int32Array(n);
  const numbered = new Uint8Array(n);
  // BFS scratch: level of each node in the current search (−1: not reached), a stamp per search
  const level = new Int32Array(n);
  const stamp = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);
  let search = 0;
  /** BFS from `root` over unnumbered nodes: returns [number reached, eccentricity]; queue holds them by level */
  const bfs = (root: number): [number, number] => {
    search++;
    let head = 0, tail = 0;
    queue[tail++] = root;
    stamp[root] = search;
    level[root] = 0;
    let depth = 0;
    while (head < tail) {
      const v = queue[head++];
      depth = level[v];
      for (let k = adjStart[v]; k < adjStart[v + 1]; k++) {
        const u = adj[k];
        if (numbered[u] || stamp[u] === search) continue;
        stamp[u] = search;
        level[u] = level[v] + 1;
        queue[tail++] = u;
      }
    }
    return [tail, depth];
  };
  let next = 0;
  const neighbours: number[] = [];
  for (let seed = 0; seed < n; seed++) {
    if (numbered[seed]) continue;
    // a node of least degree in seed's component
    const [count] = bfs(seed);
    let root = seed;
    for (let q = 0; q < count; q++) if (degree[queue[q]] < degree[root]) root = queue[q];
    // pseudo-peripheral: go to a least-degree node of the last level while the eccentricity grows
    // (the queue holds the last search's nodes by level, so the last level is its tail)
    let [reached, ecc] = bfs(root);
    for (;;) {
      let cand = -1;
      for (let q = reached - 1; q >= 0 && level[queue[q]] === ecc; q--) if (cand < 0 || degree[queue[q]] < degree[cand]) cand = queue[q];
      const [r2, e2] = bfs(cand);
      if (e2 <= ecc) break;
      root = cand;
      ecc = e2;
      reached = r2;
    }
    // Cuthill–McKee from root: number in BFS order, each node's unnumbered neighbours by increasing degree
    const start = next;
    order[next++] = root;
    numbered[root] = 1;
    for (let head = start; head < next; head++) {
      const v = order[head];
      neighbours.length = 0;
      for (let k = adjStart[v]; k < adjStart[v + 1]; k++) {
        const u = adj[k];
        if (!numbered[u]) {
          numbered[u] = 1;
          neighbours.push(u);
        }
      }
      neighbours.sort((a, b) => degree[a] - degree[b] || a - b);
      for (const u of neighbours) order[next++] = u;
    }
  }
  order.reverse(); // [GL81] §4.3.1: the reversed order never has a larger envelope, often a much smaller one
  const position = new Int32Array(n);
  for (let k = 0; k < n; k++) position[order[k]] = k;
  return { order, position };
}

/**
 * The envelope LDLᵀ of a block symmetric matrix on a block graph, in the graph's RCM order. Blocks
 * are 3×3 by default (the point joints' rows); `blockStart` gives blocks of any sizes (block b holds
 * the scalar unknowns blockStart[b] .. blockStart[b+1] − 1, the rows of one constraint block).
 * Construct once per sparsity pattern; per matrix: clear(), addBlock() / addEntry() each part,
 * factor(), then solve() as often as needed.
 */
export class EnvelopeLdlt {
  /** scalar unknowns */
  readonly n: number;
  readonly ordering: Ordering;
  /** per scalar row i (in the factor's order): the first column of its envelope */
  readonly first: Int32Array;
  /** row i's strictly lower part, columns first(i)..i−1, at lower[rowStart[i] ..] */
  readonly rowStart: Int32Array;
  /** A's, then L's strictly lower envelope */
  readonly lower: Float64Array;
  /** A's, then D's diagonal; and 1/d (0 for a null pivot) */
  readonly diag: Float64Array;
  readonly diagInv: Float64Array;
  /** relative pivot threshold ε: d_i ≤ ε a_ii is a null direction (see the header) */
  pivotTolerance: number;
  /** null pivots of the last factor() */
  nullPivots = 0;
  private readonly work: Float64Array;
  /** the caller's block offsets, and the factor position of each of the caller's scalars */
  private readonly blockStart: Int32Array;
  private readonly scalarPosition: Int32Array;

  /**
   * @param adjStart, adj the block graph (CSR, both directions of each edge)
   * @param pivotTolerance ε of the header (default 1e-15)
   * @param blockStart offsets of the blocks' scalars (blocks + 1 entries; default 3 per block)
   */
  constructor(adjStart: Int32Array, adj: Int32Array, pivotTolerance = 1e-15, blockStart?: Int32Array) {
    const blocks = adjStart.length - 1;
    this.blockStart = blockStart ?? Int32Array.from({ length: blocks + 1 }, (_, b) => 3 * b);
    const bs = this.blockStart;
    this.ordering = reverseCuthillMcKee(adjStart, adj);
    const { order, position } = this.ordering;
    const n = (this.n = bs[blocks]);
    this.pivotTolerance = pivotTolerance;
    // factor offset of each position p
    const factorStart = new Int32Array(blocks + 1);
    for (let p = 0; p < blocks; p++) factorStart[p + 1] = factorStart[p] + (bs[order[p] + 1] - bs[order[p]]);
    this.scalarPosition = new Int32Array(n);
    this.first = new Int32Array(n);
    this.rowStart = new Int32Array(n + 1);
    for (let p = 0; p < blocks; p++) {
      const b = order[p];
      let f = p;
      for (let k = adjStart[b]; k < adjStart[b + 1]; k++) f = Math.min(f, position[adj[k]]);
      for (let c = 0; c < bs[b + 1] - bs[b]; c++) {
        this.first[factorStart[p] + c] = factorStart[f];
        this.scalarPosition[bs[b] + c] = factorStart[p] + c;
      }
    }
    for (let i = 0; i < n; i++) this.rowStart[i + 1] = this.rowStart[i] + (i - this.first[i]);
    this.lower = new Float64Array(this.rowStart[n]);
    this.diag = new Float64Array(n);
    this.diagInv = new Float64Array(n);
    this.work = new Float64Array(n);
  }

  /** entries of L's strictly lower envelope (the profile) */
  get profile(): number {
    return this.rowStart[this.n];
  }

  clear(): void {
    this.lower.fill(0);
    this.diag.fill(0);
  }

  /**
   * A's block (bi, bj) += m (size(bi) × size(bj), row-major from m[o]), block indices in the caller's
   * numbering. The matrix is symmetric: add each off-diagonal block once, as (bi, bj) or (bj, bi), and
   * for a diagonal block the whole (symmetric) block; only the lower triangle is kept.
   */
  addBlock(bi: number, bj: number, m: ArrayLike<number>, o = 0): void {
    const bs = this.blockStart;
    const ni = bs[bi + 1] - bs[bi], nj = bs[bj + 1] - bs[bj];
    for (let a = 0; a < ni; a++)
      for (let c = 0; c < nj; c++) {
        if (bi === bj && c > a) continue; // a diagonal block: its lower triangle
        this.addEntry(bs[bi] + a, bs[bj] + c, m[o + nj * a + c]);
      }
  }

  /**
   * A_ij += v (and A_ji, the same entry: add each off-diagonal pair once), scalar indices in the
   * caller's numbering; (i, j) must lie in the block graph's envelope (the same or adjacent blocks).
   */
  addEntry(i: number, j: number, v: number): void {
    let p = this.scalarPosition[i], q = this.scalarPosition[j];
    if (p < q) {
      const t = p;
      p = q;
      q = t;
    }
    if (p === q) this.diag[p] += v;
    else this.lower[this.rowStart[p] - this.first[p] + q] += v;
  }

  /** LDLᵀ in place (see the header). Returns the number of null pivots. */
  factor(): number {
    const n = this.n, L = this.lower, first = this.first, rowStart = this.rowStart, d = this.diag, dInv = this.diagInv;
    const eps = this.pivotTolerance;
    let nulls = 0;
    for (let i = 0; i < n; i++) {
      const fi = first[i], ri = rowStart[i] - fi; // L_ik at L[ri + k]
      // t_j = a_ij − Σ_k t_k L_jk, in place
      for (let j = fi; j < i; j++) {
        const fj = first[j], rj = rowStart[j] - fj;
        const k0 = fi > fj ? fi : fj;
        let s = L[ri + j];
        for (let k = k0; k < j; k++) s -= L[ri + k] * L[rj + k];
        L[ri + j] = dInv[j] === 0 ? 0 : s; // a null column stays 0
      }
      // L_ij = t_j / d_j, d_i = a_ii − Σ t_j L_ij
      const aii = d[i];
      let di = aii;
      for (let j = fi; j < i; j++) {
        const t = L[ri + j];
        const l = t * dInv[j];
        L[ri + j] = l;
        di -= t * l;
      }
      if (di > eps * aii && aii > 0) {
        d[i] = di;
        dInv[i] = 1 / di;
      } else {
        d[i] = 0;
        dInv[i] = 0;
        nulls++;
      }
    }
    this.nullPivots = nulls;
    return nulls;
  }

  /** x from the factor: L z = b, w = D⁺ z, Lᵀ x = w (x's null-pivot components 0); b and x in the caller's numbering (may alias). */
  solve(b: ArrayLike<number>, x: Float64Array): void {
    const n = this.n, L = this.lower, first = this.first, rowStart = this.rowStart, dInv = this.diagInv;
    const z = this.work;
    // permute in: z_i = b of the scalar in factor position i
    const pos = this.scalarPosition;
    for (let i = 0; i < n; i++) z[pos[i]] = b[i];
    for (let i = 0; i < n; i++) {
      const fi = first[i], ri = rowStart[i] - fi;
      let s = z[i];
      for (let k = fi; k < i; k++) s -= L[ri + k] * z[k];
      z[i] = s;
    }
    for (let i = 0; i < n; i++) z[i] *= dInv[i];
    for (let i = n - 1; i >= 0; i--) {
      const fi = first[i], ri = rowStart[i] - fi;
      const xi = z[i];
      if (xi !== 0) for (let k = fi; k < i; k++) z[k] -= L[ri + k] * xi;
    }
    for (let i = 0; i < n; i++) x[i] = z[pos[i]];
  }
}
