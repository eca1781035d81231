/**
 * The sequential (Gauss-Seidel) contact solvers' substeps on a scene with contacts, and the soft ones'
 * contact spring, for an unbraced column (issue 21, item 4: a stack of 15 boxes of 1 m and a stack of ten
 * 5 cm boxes crept or fell awake under pgs-cpu, gs-cpu, si-soft-cpu and softstep-cpu at 4 substeps).
 *
 * What was measured (test/piles.test.ts's two stacks, sleeping off, the peak move of any box from 1 s to
 * 10 s; pgs-cpu at 4 × 8 unless said):
 *   warm-start matching   every point of both stacks takes its impulses from the last frame's from frame 2
 *                         on (ManifoldStore.origin): not the cause;
 *   friction              μ 0.2, 0.6, 2, 10: 14.6, 17.9, 17.0, 17.0 mm on the 15-stack: not the cause (the
 *                         boxes do not slide on one another, 0.01–0.1 mm; the column rocks: each box
 *                         tilts ~1.4 mrad, the interfaces turning most at the bottom);
 *   sweep order           the list is already bottom-up (support order); top-down 17.2 mm, shuffled 31 mm;
 *                         one direction only (not symmetric) 100–157 mm: the alternating sweep is right;
 *   Baumgarte             β 0.1–0.8: 17.9 mm (nothing overlaps past the 5 mm slop); no slop: 188 mm;
 *   convergence           12, 16, 32 sweeps: 8.9, 4.1, 3.5 mm; 6, 8, 16 substeps: 4.8, 3.8, 0.7 mm.
 * So the column is not solved to rest per substep: settled at 100 sweeps and then run at 8, the ten 5 cm
 * boxes rocked with a growing amplitude and fell within 5 s (the velocity error a substep leaves in the
 * rocking mode is not fed back by position within the slop, and the stale warm start feeds it).
 * Solving each manifold's points twice in a row per sweep held both stacks at 4 × 8 (1.5 and 0.16 mm),
 * but costs 1.7× on the base-20 pyramid, which does not need it; substeps only where a column stands.
 *
 * Why a column and not the pile's depth (jacobi/substeps.ts's N̄): a body resting on two supports (a
 * pyramid's, a bonded wall's) is braced; a single-file column has a rocking mode that runs through all
 * of it. Gauss-Seidel on a chain of C bodies damps its slowest mode by about π² / C² per sweep (the
 * chain's Laplacian), so the sweeps a substep needs grow as C² (measured: between C = 6 and 14 the
 * substeps needed went as C^1.4–2); and a smaller body needs more for the same column (the dimensionless
 * step g h² / L, softstep/cpu.ts SUBSTEP_SIZE: substeps ∝ √(1 / L)). Measured with pgs-cpu at 8 sweeps,
 * the substeps that held (creep below 1 % of the edge, with its figure as a fraction of the limit):
 *
 *   column                  L        held at                    failed at              S / (C² √(2 cm / L))
 *   10 boxes of 1 m         0.5      4 (0.31)                                          ≥ 0.2 (4 is the floor)
 *   15 boxes of 1 m         0.5      6 (0.48), 5 (0.83)         4 (1.79)               0.11–0.13
 *   20 boxes of 1 m         0.5      8 (0.92)                   6 (1.90), 7 (1.39)     0.10
 *   10 boxes of 20 cm       0.1      6 (0.48)                   5 (1.35)               0.13
 *   15 boxes of 20 cm       0.1                                 8 (2.19)               > 0.08
 *   6 boxes of 5 cm         0.025    5 (0.31), 4 (0.61)                                0.12–0.14
 *   10 boxes of 5 cm        0.025    12 (0.65), 16 (0.23)       7 (2.57), 8 (0.74)¹    0.13
 *   14 boxes of 5 cm        0.025                               16 (1.28)              > 0.09
 *   (¹ 8 held by the test's bound, 10 gave 0.98: the figure is not monotonic near the bound)
 *
 * and the rule, the top of those ratios taken:
 *
 *   substeps = max(4, ⌈COLUMN_FACTOR · C² · √(SUBSTEP_SIZE / L)⌉),   COLUMN_FACTOR = 1/8
 *
 * C from the support graph at the start (jacobi/substeps.ts supportGraph: the same search, read here),
 * L the smallest moving body's least half size. A pyramid or a wall (C = 1 or 2) keeps 4; a stack of 10
 * boxes of 1 m 4, of 15 6, of ten 5 cm boxes 12. --substeps sets any count.
 *
 * The frame step. Every figure above is at dt = 1/60 s (REFERENCE_DT), and what the column feels is the
 * substep h = dt / substeps (the dimensionless step g h² / L; the sweeps per substep are fixed), so the
 * count the rule gives at 1/60 s, S₆₀, stands for a largest substep h_C = REFERENCE_DT / S₆₀ and at
 * another frame step the column takes
 *
 *   substeps = max(4, ⌈S₆₀ · dt / REFERENCE_DT⌉)        (h ≤ h_C: the substep measured to hold)
 *
 * for a column, C ≥ 3, with S₆₀ the whole count at 1/60 s, its floor of 4 included: where the floor set it,
 * the substep 1/240 s is what held, not the column's own smaller need (ten 1 m boxes need C²/8 · √(2 cm / L)
 * = 2.5; scaled from that, 5 substeps at 1/30 s and 8 at 0.05 s, softstep-cpu's top box moved 25 and 14 mm;
 * at 8 and 12, 5.4 mm; three 1 m boxes under softstep-cpu at 1/30 s: 55 mm at 4, 0.01 mm at 8). A braced
 * pile (C ≤ 2: a box, a pyramid, a wall) is no column and keeps 4 at any dt (a box at dt = 0.5 s:
 * test/large-step.test.ts).
 *
 * Measured before this (the rule blind to dt, every solver of the four at its defaults, top box's move from
 * 1 s to 10 s over 1 % of its edge): at dt = 1/30 fifteen 1 m boxes 31 mm (pgs-cpu) and 70 mm
 * (softstep-cpu) at 6 substeps, ten 5 cm boxes 1.5 and 20 mm at 12; at dt = 0.05 59 and 150 mm, and the
 * 5 cm column fell under si-soft-cpu and softstep-cpu. With h held: 12 and 23–24 substeps at 1/30, 18 and
 * 36 at 0.05 hold them (4.1–9.4 mm, 0.09–0.3 mm). The threshold is h, not the count: softstep-cpu's 5 cm
 * column fails alike at 11 substeps of 1/60 s, 22 of 1/30 s and 34 of 0.05 s (3.6–4.1 % of an edge), and
 * holds at 12, 24, 36 (so ⌈C²/8 · √(2 cm / L) · dt / REFERENCE_DT⌉, without the ceiling at 1/60 s, is not
 * enough: 34 at 0.05 s). At a smaller dt the count falls with it, never below 4.
 *
 * The soft contact's spring (si-soft-cpu, softstep-cpu) adds a second limit: a column on springs buckles
 * under its own weight (Greenhill's self-weight column: q ℓ³ / EI < 7.837). For cubes of edge a = 2L face
 * on face, each point's spring is k = m_eff ω² with m_eff = m / 8 (A_nn = 2/m + 2 · (a²/2) · 6/(m a²) per
 * point at the corners), so an interface resists a tilt with k_θ = 4 k (a/2)² = m ω² a² / 8, and a column
 * of C cubes is EI = k_θ a, q = m g / a, ℓ = C a:
 *   q ℓ³ / EI = 8 g C³ / (ω² a) < 7.837   ⇔   ω² > 8 g C³ / (7.837 · 2L)
 * At 30 Hz a column of fifteen 1 m cubes stands at 0.95 of its buckling load (it leaned 124 mm under
 * softstep-cpu), ten 5 cm cubes at 5.6 × it (they fell). The spring is raised to COLUMN_MARGIN = 4 times
 * the critical stiffness (the load a quarter of the buckling load):
 *   ω_C² = COLUMN_MARGIN · 8 g C³ / (7.837 · 2L)        (15 × 1 m: 59 Hz; 10 × 5 cm: 142 Hz)
 * where it is above --contact-hertz, within the quarter of the substep rate the rule leaves (90 and 180 Hz).
 */
import type { WorldDesc } from '../../model/world.js';
import { defaultSolverOptions, type SolverOptions } from '../solver.js';
import { supportGraph } from '../jacobi/substeps.js';
import { SUBSTEP_SIZE } from '../softstep/cpu.js';

/** substeps per C² at L = SUBSTEP_SIZE (header: the measured columns gave 0.10–0.14) */
export const COLUMN_FACTOR = 1 / 8;
/** Greenhill's self-weight buckling constant, q ℓ³ / EI at the critical load */
export const GREENHILL = 7.837;
/** the column's spring is this many times its critical stiffness (its load a quarter of the buckling load) */
export const COLUMN_MARGIN = 4;

/** the frame step the column figures of the header were measured at, s */
export const REFERENCE_DT = 1 / 60;

/**
 * substeps at 1/60 s S₆₀ = max(4, ⌈COLUMN_FACTOR · C² · √(SUBSTEP_SIZE / L)⌉), and on a column (C ≥ 3) at frame
 * step dt max(4, ⌈S₆₀ · dt / REFERENCE_DT⌉) (header: the substep h = dt / substeps never above the one measured
 * to hold at 1/60 s); 4 without a moving body.
 */
export function columnSubsteps(world: WorldDesc, dt: number = REFERENCE_DT): number {
  const { column, size } = supportGraph(world);
  if (!(Number.isFinite(size) && size > 0)) return 4;
  const atReference = Math.max(4, Math.ceil(COLUMN_FACTOR * column * column * Math.sqrt(SUBSTEP_SIZE / size)));
  // a braced pile (C ≤ 2: a box, a pyramid, a wall) is no column: 4 at any dt (header)
  if (column < 3) return atReference;
  // a column keeps the substep the rule measured to hold at 1/60 s; the 1e-9 keeps ⌈12 · 1⌉ at 12 where
  // dt / REFERENCE_DT rounds a hair above 1
  return Math.max(4, Math.ceil(atReference * (dt / REFERENCE_DT) - 1e-9));
}

/** ω_C / 2π = √(COLUMN_MARGIN · 8 g C³ / (GREENHILL · 2L)) / 2π, Hz: the spring a column of C cubes of half size L stands on (header); 0 without one. */
export function columnHertz(world: WorldDesc): number {
  const { column, size } = supportGraph(world);
  if (!(Number.isFinite(size) && size > 0) || column < 2) return 0;
  const g = world.gravity ?? [0, 0, 0];
  const gravity = Math.hypot(g[0], g[1], g[2]);
  return Math.sqrt((COLUMN_MARGIN * 8 * gravity * column ** 3) / (GREENHILL * 2 * size)) / (2 * Math.PI);
}

/** pgs-cpu's, gs-cpu's and gs-gpu's defaults on a scene with contacts, at frame step dt: the column's substeps. */
export function gaussSeidelContactDefaults(world: WorldDesc, dt: number = REFERENCE_DT): Partial<SolverOptions> {
  return { substeps: columnSubsteps(world, dt) };
}

/**
 * si-soft-cpu's defaults on a scene with contacts: the column's substeps, and its spring where a column
 * needs a stiffer one than --contact-hertz's default (header); nothing else changes elsewhere.
 */
export function softColumnDefaults(world: WorldDesc, dt: number = REFERENCE_DT): Partial<SolverOptions> {
  // the spring is static (no dt in it); its cap, a quarter of the substep rate, does not fall with a larger dt,
  // since the substep rate substeps / dt does not
  const hertz = columnHertz(world), substeps = columnSubsteps(world, dt);
  return hertz > defaultSolverOptions.contactHertz ? { substeps, contactHertz: hertz } : { substeps };
}
