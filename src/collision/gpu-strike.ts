/**
 * The GPU twin of CollisionPipeline.strikeSpeeds (pipeline.ts, which derives it): after the broad phase,
 * each body's speed for the margins is raised to what a partner can hand it in the frame,
 *   s'_B = max(s_B, max over its candidate pairs (B, C) of (1 + e_BC) w_B/(w_B + w_C) s_C),   w = 1/m
 * (one hop, the partners' own speeds), and a body whose margin grew by more than half its fixed pad
 * (h (s' − s) > pad/2, pad = min(SPEC, 4 frac L)/2) gets its box re-expanded and its new pairs appended
 * to the broad phase's pair buffer, then the pair arguments are written again, so the narrow phase runs
 * over every pair with the margins 4 slop + h (s'_a + s'_b). Stages, recorded after the broad phase:
 *   st_init     per body: eff = s (the body-box stage's speeds), not grown; the grown counter cleared
 *   st_spread   per pair of the broad phase (its indirect arguments): atomicMax on eff of each body
 *               (speeds are ≥ 0, and non-negative f32 order as their u32 bits)
 *   st_grow     per body: grown ones listed (atomic append), their boxes widened by h (s' − s)
 *   st_pairs    (indirect, grown · n threads, as the broad phase's big list) each grown body against
 *               every body: a pair whose new boxes overlap and whose boxes at the broad phase did not
 *               (so none twice; a grown–grown pair once, from the thread of its lower index), not two
 *               inactive, not jointed: appended
 *   args        the broad phase's pair arguments again
 * The CPU queries few grown bodies alone and sweeps again for many; both give the pairs of the grown
 * boxes, as here. Cost and limit: st_pairs is grown · n threads (as bp_big is big · n), grown · n < 2³²
 * (the indirect arguments clamp there: beyond it pairs would be lost); a landing rain of 10k grows ~4–5k
 * boxes a frame on the CPU (pipeline.ts), ~5·10⁷ threads here: a second grid pass for many grown bodies,
 * as the CPU's second sweep, is not built. The widened box is the f32 box moved out by h (s' − s) and its rounding
 * (ROUNDING ε (|bound| + h (s' − s))), so it holds the exact box of the f64 margin, as gpu-aabb.ts's does.
 */
import { Counters } from '../gpu/counters.js';
import { Kernel, THREAD_INDEX_WGSL, kernelEntry } from '../gpu/dispatch.js';
import { buildKernels } from '../gpu/kernels.js';
import { defineRecord } from '../gpu/layout.js';
import { BOXES_OVERLAP_WGSL, BodyAabbRecord, BodyPairRecord, COUNTER_PAIRS, JOINTED_APPEND_WGSL, UNBOUNDED } from './gpu-broadphase.wgsl.js';
import { AABB_ROUNDING } from './gpu-aabb.js';

export const StrikeParamsRecord = defineRecord('StrikeParams', [
  ['count', 'u32', 'bodies'],
  ['capacity', 'u32', "pairs the broad phase's pair buffer holds"],
  ['h', 'f32', "the frame's time step, s"],
  ['max_grown', 'u32', 'grown bodies st_pairs takes (maxGrown): the first listed'],
] as const);

const common = /* wgsl */ `
${StrikeParamsRecord.wgsl}
@group(0) @binding(0) var<uniform> params: StrikeParams;
const COUNTER_PAIRS: u32 = ${COUNTER_PAIRS}u;
${THREAD_INDEX_WGSL}
`;

const initWgsl = /* wgsl */ `${common}
@group(0) @binding(1) var<storage, read> speeds: array<f32>;
@group(0) @binding(2) var<storage, read_write> eff: array<u32>;
@group(0) @binding(3) var<storage, read_write> grown: array<u32>;
${kernelEntry('st_init')} {
  let i = thread_index(gid, nwg);
  if (i >= params.count) { return; }
  eff[i] = bitcast<u32>(max(speeds[i], 0.0));
  grown[params.count + i] = 0u;
}
`;

const spreadWgsl = /* wgsl */ `${common}
${BodyPairRecord.wgsl}
@group(0) @binding(1) var<storage, read> speeds: array<f32>;
@group(0) @binding(2) var<storage, read> material: array<vec4f>;
@group(0) @binding(3) var<storage, read> pairs: array<BodyPair>;
@group(0) @binding(4) var<storage, read> counters: array<u32>;
@group(0) @binding(5) var<storage, read_write> eff: array<atomic<u32>>;
// s'_B = max over pairs of (1 + e_BC) w_B/(w_B + w_C) s_C (pipeline.ts strikeSpeeds)
${kernelEntry('st_spread')} {
  let k = thread_index(gid, nwg);
  if (k >= min(counters[COUNTER_PAIRS], params.capacity)) { return; }
  let p = pairs[k];
  let ma = material[p.a];
  let mb = material[p.b];
  let share = (1.0 + max(ma.y, mb.y)) / (ma.x + mb.x);
  if (ma.x > 0.0) { atomicMax(&eff[p.a], bitcast<u32>(max(share * ma.x * speeds[p.b], 0.0))); }
  if (mb.x > 0.0) { atomicMax(&eff[p.b], bitcast<u32>(max(share * mb.x * speeds[p.a], 0.0))); }
}
`;

const growWgsl = /* wgsl */ `${common}
${BodyAabbRecord.wgsl}
@group(0) @binding(1) var<storage, read> speeds: array<f32>;
@group(0) @binding(2) var<storage, read> material: array<vec4f>;
@group(0) @binding(3) var<storage, read> eff: array<f32>;
@group(0) @binding(4) var<storage, read> aabbs: array<BodyAabb>;
@group(0) @binding(5) var<storage, read_write> grown: array<u32>;
@group(0) @binding(6) var<storage, read_write> boxes: array<BodyAabb>;
@group(0) @binding(7) var<storage, read_write> gcount: array<atomic<u32>>;
const EPS: f32 = ${2 ** -24};
const ROUNDING: f32 = ${AABB_ROUNDING}.0;
// grown: h (s' − s) > pad / 2; its box widened by d = h (s' − s) and the rounding (header)
${kernelEntry('st_grow')} {
  let i = thread_index(gid, nwg);
  if (i >= params.count) { return; }
  let d = params.h * (eff[i] - speeds[i]);
  if (!(d > 0.5 * material[i].z)) { return; }
  let k = atomicAdd(&gcount[0], 1u);
  if (k >= params.max_grown) { return; } // beyond the thread budget: not listed, not flagged, box as it was (header)
  grown[k] = i;
  grown[params.count + i] = k + 1u;
  var b = aabbs[i];
  let lo = b.lo; let hi = b.hi;
  let dl = vec3f(d) + ROUNDING * EPS * (abs(lo) + vec3f(d));
  let dh = vec3f(d) + ROUNDING * EPS * (abs(hi) + vec3f(d));
  // unbounded sides stay (a moving body is never a plane; kept for safety)
  b.lo = select(lo - dl, lo, abs(lo) >= vec3f(${UNBOUNDED}));
  b.hi = select(hi + dh, hi, abs(hi) >= vec3f(${UNBOUNDED}));
  boxes[i] = b;
}
`;

const pairsWgsl = /* wgsl */ `${common}
${BodyAabbRecord.wgsl}
${BodyPairRecord.wgsl}
@group(0) @binding(1) var<storage, read> aabbs: array<BodyAabb>;
@group(0) @binding(2) var<storage, read> boxes: array<BodyAabb>;
@group(0) @binding(3) var<storage, read> grown: array<u32>;
@group(0) @binding(4) var<storage, read> joints: array<u32>;
@group(0) @binding(5) var<storage, read> gcount: array<u32>;
@group(0) @binding(6) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> pairs: array<BodyPair>;
${BOXES_OVERLAP_WGSL}
${JOINTED_APPEND_WGSL}
// thread t = (grown body t / n) x (body t mod n), as the broad phase's big list (gpu-broadphase.wgsl.ts bp_big)
${kernelEntry('st_pairs')} {
  let t = thread_index(gid, nwg);
  let n = params.count;
  let k = t / n;
  if (k >= min(gcount[0], params.max_grown)) { return; }
  let i = grown[k];
  let j = t - k * n;
  if (j == i) { return; }
  let gj = grown[n + j];
  if (gj != 0u && j < i) { return; } // a grown–grown pair from the lower index's thread only
  let a = boxes[i];
  var b = aabbs[j];
  let a0 = aabbs[i];
  if ((a0.flags & b.flags & 1u) != 0u) { return; }
  let b0 = b;
  if (gj != 0u) { b = boxes[j]; }
  if (!boxes_overlap(a.lo, a.hi, b.lo, b.hi)) { return; }
  if (boxes_overlap(a0.lo, a0.hi, b0.lo, b0.hi)) { return; } // the broad phase has it
  let lo = min(i, j);
  let hi = max(i, j);
  if (jointed(lo, hi)) { return; }
  append_pair(lo, hi);
}
`;

/**
 * The grown bodies st_pairs tests, at most: STRIKE_THREADS / n (at least 1). st_pairs is grown · n threads; unbounded,
 * a landing 100k rain (25–50k grown, by the 10k rain's 2.5–5.3k on the CPU) would run 2.5–5·10⁹ a frame and pass the
 * 2³² that indirect arguments hold, losing pairs. With the budget a 10k scene takes up to 6,710 (the 10k rain's all),
 * a 100k one 671: the bodies grown beyond it, in the order the atomic list met them, keep the margin of their own
 * speed (the fault's old behaviour, for them) where the CPU twin covers every one; a second grid pass over the grown
 * boxes, as the CPU's second sweep, would lift the bound and is not built.
 */
export const STRIKE_THREADS = 2 ** 26;
export function maxGrown(n: number): number {
  return Math.max(1, Math.min(n, Math.floor(STRIKE_THREADS / n)));
}

export interface StrikeInputs {
  speeds: GPUBuffer;
  aabbs: GPUBuffer;
  pairs: GPUBuffer;
  counters: GPUBuffer;
  joints: GPUBuffer;
  pairArgs: { buffer: GPUBuffer; offset: number };
  capacity: number;
}

export class GpuStrikeSpeeds {
  readonly params: GPUBuffer;
  /** the effective speeds s' (f32 per body; the narrow phase's margins) */
  readonly eff: GPUBuffer;
  /** per body, written once: (1/m (0 fixed), e, the fixed pad min(SPEC, 4 frac L)/2, 0) */
  private readonly material: GPUBuffer;
  /** [0, n) the grown bodies' list, [n, 2n) per body its place there + 1 (0: not grown) */
  private readonly grown: GPUBuffer;
  private readonly boxes: GPUBuffer;
  private groups: { key: GPUBuffer[]; init: GPUBindGroup; spread: GPUBindGroup; grow: GPUBindGroup; pairs: GPUBindGroup } | null = null;
  private capacityWritten = -1;
  private h = 0;

  private constructor(
    private readonly device: GPUDevice,
    readonly count: number,
    private readonly kernels: Record<'init' | 'spread' | 'grow' | 'pairs', Kernel>,
    readonly gcount: Counters,
    material: Float32Array<ArrayBuffer>,
  ) {
    const n = Math.max(1, count);
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.params = device.createBuffer({ label: 'strike params', size: StrikeParamsRecord.stride, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.eff = device.createBuffer({ label: 'strike speeds', size: 4 * n, usage: storage });
    this.material = device.createBuffer({ label: 'strike material', size: 16 * n, usage: storage });
    device.queue.writeBuffer(this.material, 0, material);
    this.grown = device.createBuffer({ label: 'strike grown', size: 8 * n, usage: storage });
    this.boxes = device.createBuffer({ label: 'strike boxes', size: BodyAabbRecord.stride * n, usage: storage });
  }

  /**
   * For `count` bodies: inverseMass[i] (0 fixed), restitution[i] and pad[i] = min(SPEC, 4 frac L_i)/2 (the
   * fixed part of the box's margin, gpu-aabb.ts).
   */
  static async create(device: GPUDevice, count: number, inverseMass: ArrayLike<number>, restitution: ArrayLike<number>, pad: ArrayLike<number>): Promise<GpuStrikeSpeeds> {
    const kernels = await buildKernels(device, 'gpu strike speeds', () => ({
      init: Kernel.create(device, 'st_init', initWgsl),
      spread: Kernel.create(device, 'st_spread', spreadWgsl),
      grow: Kernel.create(device, 'st_grow', growWgsl),
      pairs: Kernel.create(device, 'st_pairs', pairsWgsl),
    }));
    const n = Math.max(1, count);
    const gcount = await Counters.create(device, 1, [{ counter: 0, scale: n, cap: maxGrown(n) }], 'strike counters');
    const material = new Float32Array(4 * n);
    for (let i = 0; i < count; i++) {
      material[4 * i] = inverseMass[i];
      material[4 * i + 1] = restitution[i];
      material[4 * i + 2] = pad[i];
    }
    return new GpuStrikeSpeeds(device, count, kernels, gcount, material);
  }

  /** The frame's time step h. */
  configure(h: number): void {
    this.h = h;
    this.capacityWritten = -1;
  }

  private writeParams(capacity: number): void {
    const R = StrikeParamsRecord, v = new DataView(new ArrayBuffer(R.stride));
    R.write(v, 0, 'count', this.count);
    R.write(v, 0, 'capacity', capacity);
    R.write(v, 0, 'h', this.h);
    R.write(v, 0, 'max_grown', maxGrown(Math.max(1, this.count)));
    this.device.queue.writeBuffer(this.params, 0, v.buffer);
    this.capacityWritten = capacity;
  }

  /** Records the stages (header) into `pass`, after the broad phase whose buffers `input` names. */
  record(pass: GPUComputePassEncoder, input: StrikeInputs, writeArgs: (pass: GPUComputePassEncoder) => void): void {
    if (input.capacity !== this.capacityWritten) this.writeParams(input.capacity);
    const key = [input.speeds, input.aabbs, input.pairs, input.counters, input.joints];
    if (!this.groups || key.some((b, k) => b !== this.groups!.key[k])) {
      const k = this.kernels, p = this.params;
      this.groups = {
        key,
        init: k.init.bind([p, input.speeds, this.eff, this.grown]),
        spread: k.spread.bind([p, input.speeds, this.material, input.pairs, input.counters, this.eff]),
        grow: k.grow.bind([p, input.speeds, this.material, this.eff, input.aabbs, this.grown, this.boxes, this.gcount.buffer]),
        pairs: k.pairs.bind([p, input.aabbs, this.boxes, this.grown, input.joints, this.gcount.buffer, input.counters, input.pairs]),
      };
    }
    const g = this.groups, k = this.kernels;
    this.gcount.recordClear(pass);
    k.init.dispatch(pass, g.init, this.count);
    k.spread.dispatchIndirect(pass, g.spread, input.pairArgs.buffer, input.pairArgs.offset);
    k.grow.dispatch(pass, g.grow, this.count);
    this.gcount.recordArgs(pass);
    k.pairs.dispatchIndirect(pass, g.pairs, this.gcount.args, this.gcount.argsOffset(0));
    writeArgs(pass);
  }

  destroy(): void {
    for (const b of [this.params, this.eff, this.material, this.grown, this.boxes]) b.destroy();
    this.gcount.destroy();
  }
}
