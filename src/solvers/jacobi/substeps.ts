/**
 * jacobi-cpu's and jacobi-gpu's substeps on a scene with contacts: a rule that follows the load of a
 * pile, not only the size of its smallest body (issue 21: the 210-brick `brick-wall`, ten courses of
 * 20 cm, wandered 476 mm in 3 s at the old ⌈8 √(2 cm / L)⌉ = 4 substeps, and holds at 8).
 *
 * Why the load. The contacts are solved by mass-split Jacobi (contacts/jacobi-contact-solver.ts): body
 * i touched by s_i constraints gives each of them a copy of mass m_i / s_i, so a contact's effective
 * mass is s times the true one and each sweep moves a contact's impulse by about 1/s of what a
 * Gauss-Seidel update would (the split block diagonal D_s ≈ s·diag(A)). On a column of N contacts the
 * load of the bodies above must travel down through all N of them, one contact per sweep, each sweep
 * passing on 1/s of the correction: the slowest (load) mode of the iteration I − D_s⁻¹A on such a chain
 * decays per sweep by (1 − cos(π/(N+1)))/s ≈ π² / (2 s N²) (the chain's Laplacian; our derivation).
 * Each substep adds gravity's impulse h m g to every body, which the warm start carries but the sweeps
 * must pass on; what is not passed on before the step's positions are written is a velocity error that
 * the next substeps see as drift (friction and Baumgarte β only act on it after the fact). More
 * substeps make each step's new load h m g and its position error (∝ h²) smaller. Measured
 * (brick-wall with `--sleep 0`, 8 sweeps per substep, the peak move of any brick from 1 s to 4 s;
 * 2 mm is 1 % of a brick's least edge), the substeps needed grow linearly in the depth N and in s:
 *
 *   scene                         s̄ (mean split)   N    held at (peak mm)       failed at (peak mm)
 *   wall, 10 courses, 2 wythes      ≈ 11          10    8 (0.92)                 6 (2.66), 4 (476)
 *   wall, 15 courses, 2 wythes      ≈ 11          15    16 (0.72)                11 (3.0)
 *   wall, 20 courses, 2 wythes      ≈ 11          20    22 (1.42)                16 (3.5)
 *   wall, 10 courses, 1 wythe       ≈ 6           10    6 (0.64)                 4 (3.4)
 *   wall, 20 courses, 1 wythe       ≈ 6           20    16 (1.5)                 11 (2.9)
 *   pyramid base 10, 1 m boxes      ≈ 5           10    4 (0.34 of 10 mm)
 *   pyramid base 30, 1 m boxes      ≈ 5           30                             6 (11.3 of 10 mm)
 *
 * (more sweeps per substep help less than more substeps: the 10-course wall at 4 × 16 moved 3.15 mm,
 * at 8 × 8 0.92 mm, at the same 64 sweeps). Smaller bodies need more substeps for the same pile
 * (softstep/cpu.ts sizeSubsteps: the dimensionless step g h² / L, so substeps ∝ √(1/L) at a given
 * shape of pile; a base-10 pyramid of 4 cm boxes fell at 4 and held at 6, of 2 cm boxes held at 12).
 * So the rule is
 *
 *   substeps = max(4, ⌈max(K_SIZE, LOAD_FACTOR · s̄ · N) · √(SUBSTEP_SIZE / L)⌉)
 *
 * with L the least half size of the smallest moving body (softstep/cpu.ts SUBSTEP_SIZE = 2 cm),
 * K_SIZE = 4 the single small body's term (softstep-cpu's: a body must not fall a sizeable part of its
 * own size in a substep), and N and s̄ of the support graph found at build (supportGraph below):
 * LOAD_FACTOR fitted to the walls above, the hardest piles measured (the 2-wythe walls need
 * 0.8–1.0 × N substeps at s̄ ≈ 11 and √(2 cm / 10 cm) = 0.45: 0.16–0.2 per unit of s̄ N √).
 *
 * A scene that is not a pile at its start (the `rain`: bodies apart, falling into a loose heap) has no
 * support graph then (N = 0) and takes the size term alone: it lands as a heap a few bodies deep, and
 * falls asleep. A pile built later by the run is not foreseen; --substeps sets any count.
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
/** substeps per unit of s̄ · N at L = SUBSTEP_SIZE (fitted to the walls and pyramids in the header) */
export const LOAD_FACTOR = 0.25;

/** The support graph of a world at its start pose: what the substep rule reads. */
export interface SupportGraph {
  /** N: the most contacts any body's load crosses to reach a fixed body (the graph distance; 0: none) */
  depth: number;
  /** s̄: the mean count of bodies touching a moving body that touches anything (its mass split) */
  share: number;
  /** L: the least half size of the smallest moving body, m (Infinity: none) */
  size: number;
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
  if (world.collisions === false || n < 2) return { depth: 0, share: 0, size };
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
  let head = 0, tail = 0, depth = 0;
  for (let i = 0; i < n; i++) if (w.inverseMass[i] === 0) (dist[i] = 0), (queue[tail++] = i);
  while (head < tail) {
    const i = queue[head++];
    for (let k = start[i]; k < start[i + 1]; k++) {
      const j = adj[k];
      if (dist[j] >= 0 || w.inverseMass[j] === 0) continue;
      dist[j] = dist[i] + 1;
      depth = Math.max(depth, dist[j]);
      queue[tail++] = j;
    }
  }
  return { depth, share: touched > 0 ? sum / touched : 0, size };
}

/** substeps = max(4, ⌈max(k, LOAD_FACTOR · s̄ · N) · √(SUBSTEP_SIZE / L)⌉), k = K_PILE on a pile, else K_SIZE (header). */
export function jacobiContactSubsteps(world: WorldDesc): number {
  const { depth, share, size } = supportGraph(world);
  if (!(Number.isFinite(size) && size > 0)) return 4;
  const k = depth >= 2 ? K_PILE : K_SIZE;
  return Math.max(4, Math.ceil(Math.max(k, LOAD_FACTOR * share * depth) * Math.sqrt(SUBSTEP_SIZE / size)));
}
