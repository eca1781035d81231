/**
 * Times the broad phases of src/collision/broadphase.ts: sweep and prune (the order carried from
 * step to step; swept in bands, the default, and in one sweep, bandWidth 0), the hashed grid
 * (rebuilt each step) and all-pairs brute force, on seeded scenes of
 * boxes (half extents 0.1–0.5 m, margin 0.02 m) plus one static ground plane:
 *   pile     a settled pile: columns on a square footprint, boxes resting on each other, each body
 *            jittering by ~0.1 mm and ~1e-4 rad a step (much coherence);
 *   moving   boxes in a cube (about 2 overlapping pairs per box), each moving at up to 5 m/s and 3 rad/s,
 *            bouncing off the walls, steps of 1/60 s (coherent, but every body moves);
 *   shuffled every body placed anew each step (no coherence: the worst case of the carried sort).
 * Prints ms per update (median over the timed steps after warm-up) and checks every method's pairs
 * against brute force on the last step.
 *
 *   node --import tsx scripts/bench-broadphase.ts [n …]        (default: 1000 10000)
 */
import { shapeAabb } from '../src/collision/aabb.js';
import { SweepAndPrune, HashGrid, bruteForcePairs, type BroadPhase } from '../src/collision/broadphase.js';
import { integrateOrientation } from '../src/rigid/quat.js';
import type { Shape } from '../src/model/world.js';
import { mulberry32 } from '../test/support/random.js';
import { cpus } from 'node:os';
import { pathToFileURL } from 'node:url';

export type Kind = 'pile' | 'moving' | 'shuffled';

export interface Scene {
  n: number;
  shapes: Shape[];
  pos: Float64Array;
  quat: Float64Array;
  vel: Float64Array;
  isStatic: Uint8Array;
  aabbs: Float64Array;
  L: number;
  step: () => void;
}

export const MARGIN = 0.02, DT = 1 / 60;

export function makeScene(kind: Kind, boxes: number, seed: number): Scene {
  const rand = mulberry32(seed);
  const n = boxes + 1;
  const s: Scene = {
    n,
    shapes: [],
    pos: new Float64Array(3 * n),
    quat: new Float64Array(4 * n),
    vel: new Float64Array(6 * n),
    isStatic: new Uint8Array(n),
    aabbs: new Float64Array(6 * n),
    L: 0,
    step: () => {},
  };
  // body 0: the ground, y ≤ 0
  s.shapes[0] = { type: 'plane' };
  s.quat[3] = 1;
  s.isStatic[0] = 1;
  const yawQuat = (b: number, yaw: number) => s.quat.set([0, Math.sin(yaw / 2), 0, Math.cos(yaw / 2)], 4 * b);
  if (kind === 'pile') {
    // columns 1 m apart on a k × k footprint, ~10 layers; boxes 0.8–1 m wide so neighbours touch
    const layers = 10, k = Math.ceil(Math.sqrt(boxes / layers));
    const height = new Float64Array(k * k);
    for (let b = 1; b <= boxes; b++) {
      const c = (b - 1) % (k * k), cx = c % k, cz = Math.floor(c / k);
      const h: [number, number, number] = [0.4 + 0.1 * rand(), 0.1 + 0.4 * rand(), 0.4 + 0.1 * rand()];
      s.shapes[b] = { type: 'box', halfExtents: h };
      s.pos.set([cx + 0.05 * (rand() - 0.5), height[c] + h[1], cz + 0.05 * (rand() - 0.5)], 3 * b);
      height[c] += 2 * h[1];
      yawQuat(b, 0.1 * (rand() - 0.5));
    }
    s.step = () => {
      // settled: each body trembles by ~0.1 mm, ~1e-4 rad
      for (let b = 1; b < n; b++) {
        for (let i = 0; i < 3; i++) s.pos[3 * b + i] += 1e-4 * (rand() - 0.5);
        integrateOrientation(s.quat, 4 * b, 1e-4 * (rand() - 0.5), 1e-4 * (rand() - 0.5), 1e-4 * (rand() - 0.5), 1);
      }
    };
  } else {
    // box volume ⟨8abc⟩ ≈ 0.22 m³; a cube of side 2L holding the boxes at ~8% volume fraction
    const L = (s.L = 0.5 * Math.cbrt((boxes * 0.22) / 0.08));
    for (let b = 1; b <= boxes; b++) {
      s.shapes[b] = { type: 'box', halfExtents: [0.1 + 0.4 * rand(), 0.1 + 0.4 * rand(), 0.1 + 0.4 * rand()] };
      s.pos.set([L * (2 * rand() - 1), L * rand(), L * (2 * rand() - 1)], 3 * b);
      const q = [rand() - 0.5, rand() - 0.5, rand() - 0.5, rand() - 0.5], l = Math.hypot(...q);
      s.quat.set(q.map((x) => x / l), 4 * b);
      for (let i = 0; i < 3; i++) s.vel[6 * b + i] = 5 * (2 * rand() - 1) / Math.sqrt(3);
      for (let i = 3; i < 6; i++) s.vel[6 * b + i] = 3 * (2 * rand() - 1) / Math.sqrt(3);
    }
    s.step =
      kind === 'moving'
        ? () => {
            for (let b = 1; b < n; b++) {
              for (let i = 0; i < 3; i++) {
                const lo = i === 1 ? 0 : -L;
                const p = (s.pos[3 * b + i] += DT * s.vel[6 * b + i]);
                if (p < lo || p > L) s.vel[6 * b + i] = p < lo ? Math.abs(s.vel[6 * b + i]) : -Math.abs(s.vel[6 * b + i]);
              }
              integrateOrientation(s.quat, 4 * b, s.vel[6 * b + 3], s.vel[6 * b + 4], s.vel[6 * b + 5], DT);
            }
          }
        : () => {
            for (let b = 1; b < n; b++) s.pos.set([L * (2 * rand() - 1), L * rand(), L * (2 * rand() - 1)], 3 * b);
          };
  }
  return s;
}

export function computeAabbs(s: Scene): void {
  for (let b = 0; b < s.n; b++) shapeAabb(s.shapes[b], s.pos, 3 * b, s.quat, 4 * b, MARGIN, s.aabbs, 6 * b);
}

interface Row {
  scene: string;
  n: number;
  pairs: number;
  aabb: number;
  sap: number;
  sap1: number;
  grid: number;
  brute: number;
  shifts: number;
  candidates: number;
  full: number;
  bands: number;
}

function median(v: number[]): number {
  const w = [...v].sort((x, y) => x - y);
  return w.length ? 0.5 * (w[(w.length - 1) >> 1] + w[w.length >> 1]) : NaN;
}

function measure(kind: Kind, boxes: number, warm: number, timed: number, timedBrute: number): Row {
  const scene = makeScene(kind, boxes, 1234 + boxes);
  const methods: [string, BroadPhase | null][] = [
    ['sap', new SweepAndPrune()],
    ['sap1', new SweepAndPrune({ bandWidth: 0 })],
    ['grid', new HashGrid()],
    ['brute', null],
  ];
  const sap = methods[0][1] as SweepAndPrune;
  const times: Record<string, number[]> = { sap: [], sap1: [], grid: [], brute: [], aabb: [] };
  let shifts = 0, candidates = 0, full = 0, bands = 0;
  for (let step = 0; step < warm + timed; step++) {
    scene.step();
    let t = performance.now();
    computeAabbs(scene);
    if (step >= warm) times.aabb.push(performance.now() - t);
    for (const [name, bp] of methods) {
      if (!bp && (step < warm - 1 || step >= warm + timedBrute)) continue;
      t = performance.now();
      if (bp) bp.update(scene.aabbs, scene.n, scene.isStatic);
      else bruteForcePairs(scene.aabbs, scene.n, scene.isStatic);
      if (step >= warm) times[name].push(performance.now() - t);
    }
    if (step >= warm) {
      shifts += sap.stats.shifts;
      candidates += sap.stats.candidates;
      full += sap.stats.fullSort ? 1 : 0;
      bands += sap.stats.bands;
    }
  }
  // every method agrees with brute force (last step)
  const ref = bruteForcePairs(scene.aabbs, scene.n, scene.isStatic);
  for (const [name, bp] of methods) {
    if (!bp) continue;
    const same = bp.pairCount * 2 === ref.length && ref.every((v, k) => bp.pairs[k] === v);
    if (!same) throw new Error(`${name} disagrees with brute force on ${kind} ${boxes}`);
  }
  return {
    scene: kind,
    n: scene.n,
    pairs: ref.length / 2,
    aabb: median(times.aabb),
    sap: median(times.sap),
    sap1: median(times.sap1),
    grid: median(times.grid),
    brute: median(times.brute),
    shifts: shifts / timed,
    candidates: candidates / timed,
    full,
    bands: bands / timed,
  };
}

// run as a script (scripts/bench-gpu-broadphase.ts imports the scenes)
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sizes = process.argv.slice(2).map(Number).filter((x) => x > 0);
  const ns = sizes.length ? sizes : [1000, 10000];
  console.log(`broad phase, ms per update (${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, Node ${process.version})`);
  // JIT warm-up of every code path on a small scene first (otherwise the first scene measured pays it)
  for (const kind of ['pile', 'moving', 'shuffled'] as Kind[]) measure(kind, 500, 150, 1, 1);
  const head = ['scene', 'n', 'pairs', 'SAP', 'SAP 1 band', 'grid', 'brute', 'shapeAabb', 'SAP shifts', 'SAP candidates', 'SAP full sorts', 'SAP bands'];
  console.log(head.join('\t'));
  for (const n of ns) {
    for (const kind of ['pile', 'moving', 'shuffled'] as Kind[]) {
      const r = n > 5000 ? measure(kind, n, 10, 30, 3) : measure(kind, n, 50, 100, 20);
      console.log(
        [r.scene, r.n, r.pairs, r.sap.toFixed(3), r.sap1.toFixed(3), r.grid.toFixed(3), r.brute.toFixed(2), r.aabb.toFixed(3), Math.round(r.shifts), Math.round(r.candidates), r.full, Math.round(r.bands)].join('\t'),
      );
    }
  }
}
