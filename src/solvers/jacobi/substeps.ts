/**
 * jacobi-cpu's and jacobi-gpu's substeps on a scene with contacts: a rule that follows the load of a
 * pile, not only the size of its smallest body (issue 21: the 210-brick `brick-wall`, ten courses of
 * 20 cm, wandered 476 mm in 3 s at the former ⌈8 √(2 cm / L)⌉ = 4 substeps, and holds at 8).
 *
 * Why the load. The contacts are solved by mass-split Jacobi (contacts/jacobi-contact-solver.ts): body
 * i touched by s_i constraints gives each a copy of mass m_i / s_i, so each sweep moves a contact's
 * impulse by about 1/s of a Gauss-Seidel update (the split block diagonal D_s ≈ s·diag(A)), and a
 * sweep passes a change on by one contact only (every manifold reads the velocities of the sweep's
 * start). The weight of a body N contacts above the ground must cross all N: on a column the slowest
 * (load) mode of the iteration I − D_s⁻¹A decays per sweep by (1 − cos(π/(N+1)))/s ≈ π² / (2 s N²)
 * (the chain's Laplacian; our derivation), so a cold solve would need ~s N² sweeps. Warm starting
 * carries the settled load from step to step; what the sweeps must still pass on each substep is that
 * substep's own change (gravity's h m g on every body, and the bodies' small motions), and what they
 * leave is a velocity error whose drift (∝ h²) friction and Baumgarte β correct only after the fact.
 * More substeps shrink both; more sweeps per substep help less (the 10-course wall at 4 × 16 moved
 * 3.15 mm, at 8 × 8 0.92 mm: the same 64 sweeps).
 *
 * Measured (`--sleep 0`, 8 sweeps per substep, the peak move of any body from 1 s to 4 s; the limit 1 %
 * of the least edge: 2 mm for the bricks, 10 mm for 1 m boxes), N̄ the mean depth of the moving bodies
 * (below), L the least half size, f = √(2 cm / L):
 *
 *   pile                              N̄      f      held at (peak mm)     failed at (peak mm)    S / (N̄^1.5 f)
 *   wall, 10 courses, 2 wythes        5.5   0.45    8 (0.92)              6 (2.66), 4 (476)      1.0–1.4
 *   wall, 15 courses, 2 wythes        8.0   0.45    16 (0.72)             11 (3.0)               1.1–1.6
 *   wall, 20 courses, 2 wythes       10.5   0.45    22 (1.42)             16 (3.5)               1.0–1.4
 *   wall, 10 courses, 1 wythe         5.5   0.45    6 (0.64)              4 (3.4)                0.7–1.0
 *   wall, 20 courses, 1 wythe        10.5   0.45    16 (1.5)              13 (2.54)              1.0–1.2
 *   pyramid base 30, 1 m boxes       11.0   0.20    8 (5.75)              6 (11.3)               0.8–1.1
 *   stack of 12, 20 cm boxes          6.5   0.45    16 (0.76)             8 (3.3)                1.1–2.1
 *   stack of 10, 1 m boxes            5.5   0.20    4 (4.0 in 9 s)                               ≤ 1.6
 *
 * so the substeps needed grow as N̄^1.5 (between a wave's N and Jacobi's bound N²) at a given size,
 * and smaller bodies need more for the same pile (softstep/cpu.ts sizeSubsteps: the dimensionless step
 * g h² / L, substeps ∝ √(1/L); a base-10 pyramid of 4 cm boxes fell at 4 and held at 6, of 2 cm boxes
 * held at 12). The rule:
 *
 *   substeps = max(4, ⌈max(k, LOAD_FACTOR · N̄^1.5) · √(SUBSTEP_SIZE / L)⌉),   LOAD_FACTOR = 1.5
 *
 * with L the least half size of the smallest moving body (softstep/cpu.ts SUBSTEP_SIZE = 2 cm) and
 * k = 8 on a pile (N ≥ 2: the former rule, calibrated on that pyramid of 4 cm boxes, kept as the floor)
 * or 4 where no body rests on another at the start (softstep-cpu's single small body). N and N̄ are
 * the support graph's at build (supportGraph). The mean depth, not the deepest: a pyramid's few top
 * boxes load less than a wall's full columns (by N̄ the walls and the pyramids fall on one line, by
 * the deepest body they did not). The mass split s̄ does not enter: it mattered between the walls (two
 * wythes, s̄ ≈ 10, against one, s̄ ≈ 5.4: about 1.3×), but a stack (s̄ ≈ 2) needed as much, where
 * its column rocks on its alternating offsets.
 *
 * A scene that is not a pile at its start (the `rain`: bodies apart, falling into a loose heap) has no
 * support graph then (N = 0) and takes softstep-cpu's size term alone: it lands as a heap a few bodies
 * deep, which the run measures (docs/benchmarks.md), and falls asleep. A pile built later by the run
 * is not foreseen; --substeps sets any count.
 */
import { leastHalfSize, type WorldDesc } from '../../model/world.js';
import { forEachBody } from '../../model/packed.js';
import { CollisionPipeline } from '../../collision/pipeline.js';
import { ContactList } from '../../rows/contact.js';
import { SUBSTEP_SIZE } from '../softstep/cpu.js';

/** the size term's k where no body rests on another at the start (N ≤ 1): softstep-cpu's (softstep/cpu.ts) */
export const K_SIZE = 4;
/** the size term's k on a pile (N ≥ 2): jacobi-cpu's former rule, kept as the floor (header) */
export const K_PILE = 8;
/** substeps per unit of N̄^1.5 at L = SUBSTEP_SIZE (the measured piles in the header: 0.7–1.6, the top taken) */
export const LOAD_FACTOR = 1.5;

/** The support graph of a world at its start pose: what the substep rule reads. */
export interface SupportGraph {
  /** N: the most contacts any body's load crosses to reach a fixed body (the graph distance; 0: none) */
  depth: number;
  /** N̄: the mean of that distance over the moving bodies that reach a fixed one (0: none) */
  meanDepth: number;
  /** s̄: the mean count of bodies touching a moving body that touches anything (its mass split; measured, not read by the rule: header) */
  share: number;
  /** L: the least half size of the smallest moving body, m (Infinity: none) */
  size: number;
  /**
   * C: the longest single-file column, in bodies: a chain of moving bodies each resting on exactly one
   * support (a touching body one contact nearer the ground), that support the one below it in the chain
   * (a body on the ground or on two or more supports starts a chain of 1). A stack of n boxes: n; a
   * pyramid or a bonded wall, whose bodies above the bottom course rest on two: 1 (0: none). The
   * Gauss-Seidel rule reads it (solvers/pgs/substeps.ts): an unbraced column rocks, a braced pile does not.
   */
  column: number;
}

/**
 * The contact graph at the world's start pose, by the collision pipeline's own detection (the same
 * speculative margins as a run's first frame, at h = 1/60 s): its pairs are the edges. The depth is a
 * breadth-first search from the fixed bodies (the load's shortest way down, as the Jacobi sweeps pass
 * it on); the share is the mean number of partners of the moving bodies that have one (their n_i at the
 * first frame, contacts/jacobi-contact-solver.ts, joints not counted).
 */
export function supportGraph(world: WorldDesc): SupportGraph {
  const known = graphs.get(world);
  if (known) return known;
  const graph = findSupportGraph(world);
  graphs.set(world, graph);
  return graph;
}
/** one search per world (resolveOptions may ask more than once for a run) */
const graphs = new WeakMap<WorldDesc, SupportGraph>();

function findSupportGraph(world: WorldDesc): SupportGraph {
  // the start pose, at rest (the margins of bodies that start moving are a little wider in a run)
  const n = world.bodies.length;
  const position = new Float64Array(3 * n), orientation = new Float64Array(4 * n), inverseMass = new Float64Array(n);
  let size = Infinity;
  forEachBody(world.bodies, (i, proto, p, at, q, qAt) => {
    for (let k = 0; k < 3; k++) position[3 * i + k] = p[at + k];
    for (let k = 0; k < 4; k++) orientation[4 * i + k] = q ? q[qAt + k] : k === 3 ? 1 : 0;
    if (!proto.fixed) (inverseMass[i] = 1), (size = Math.min(size, leastHalfSize(proto.shape)));
  });
  if (world.collisions === false || n < 2) return { depth: 0, meanDepth: 0, share: 0, size, column: 0 };
  const w = { inverseMass };
  const still = new Float64Array(3 * n);
  const pipeline = new CollisionPipeline(world.bodies, w.inverseMass);
  const list = new ContactList();
  const g = world.gravity ?? [0, 0, 0];
  pipeline.detect(position, orientation, still, still, 1 / 60, list, null, Math.hypot(g[0], g[1], g[2]));
  // the distinct pairs (a manifold's points come together; a Set only at build, not per frame)
  const seen = new Set<number>();
  const degree = new Int32Array(n);
  const pa: number[] = [], pb: number[] = [];
  for (let c = 0; c < list.count; c++) {
    const a = list.bodyA[c], b = list.bodyB[c];
    if (a >= n || b >= n) continue;
    const key = a < b ? a * n + b : b * n + a;
    if (seen.has(key)) continue;
    seen.add(key);
    pa.push(a), pb.push(b);
    degree[a]++, degree[b]++;
  }
  let sum = 0, touched = 0;
  for (let i = 0; i < n; i++) if (w.inverseMass[i] > 0 && degree[i] > 0) (sum += degree[i]), touched++;
  // adjacency (CSR) and the breadth-first search from every fixed body at distance 0
  const start = new Int32Array(n + 1);
  for (let k = 0; k < pa.length; k++) start[pa[k] + 1]++, start[pb[k] + 1]++;
  for (let i = 0; i < n; i++) start[i + 1] += start[i];
  const fill = start.slice(0, n), adj = new Int32Array(2 * pa.length);
  for (let k = 0; k < pa.length; k++) (adj[fill[pa[k]]++] = pb[k]), (adj[fill[pb[k]]++] = pa[k]);
  const dist = new Int32Array(n).fill(-1), queue = new Int32Array(n);
  let head = 0, tail = 0, depth = 0, depthSum = 0, reached = 0;
  for (let i = 0; i < n; i++) if (w.inverseMass[i] === 0) (dist[i] = 0), (queue[tail++] = i);
  while (head < tail) {
    const i = queue[head++];
    for (let k = start[i]; k < start[i + 1]; k++) {
      const j = adj[k];
      if (dist[j] >= 0 || w.inverseMass[j] === 0) continue;
      dist[j] = dist[i] + 1;
      depth = Math.max(depth, dist[j]);
      depthSum += dist[j];
      reached++;
      queue[tail++] = j;
    }
  }
  // the single-file columns (SupportGraph.column), in the search's order (a body's supports come first)
  const chain = new Int32Array(n);
  let column = 0;
  for (let q = 0; q < tail; q++) {
    const i = queue[q];
    if (w.inverseMass[i] === 0) continue;
    let supports = 0, below = -1;
    for (let k = start[i]; k < start[i + 1]; k++) if (dist[adj[k]] === dist[i] - 1) (supports++, (below = adj[k]));
    chain[i] = supports === 1 && w.inverseMass[below] > 0 ? chain[below] + 1 : 1;
    column = Math.max(column, chain[i]);
  }
  return { depth, meanDepth: reached > 0 ? depthSum / reached : 0, share: touched > 0 ? sum / touched : 0, size, column };
}

/** substeps = max(4, ⌈max(k, LOAD_FACTOR · N̄^1.5) · √(SUBSTEP_SIZE / L)⌉), k = K_PILE on a pile, else K_SIZE (header). */
export function jacobiContactSubsteps(world: WorldDesc): number {
  const { depth, meanDepth, size } = supportGraph(world);
  if (!(Number.isFinite(size) && size > 0)) return 4;
  const k = depth >= 2 ? K_PILE : K_SIZE;
  return Math.max(4, Math.ceil(Math.max(k, LOAD_FACTOR * meanDepth ** 1.5) * Math.sqrt(SUBSTEP_SIZE / size)));
}
