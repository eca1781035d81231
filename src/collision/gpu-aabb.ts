/**
 * The GPU collision pipeline's first stage: each body's world box with its speculative margin, from
 * the solver's pose and velocity buffers, as the BodyAabb records the GPU broad phase reads
 * (gpu-broadphase.ts), and each body's speed bound s for the narrow phase's per-pair margin. The
 * twin of the loop at the top of CollisionPipeline.detect (pipeline.ts) and of shapeAabb (aabb.ts),
 * one thread per body, no readback:
 *   s_i = 0 for a fixed body, else |v_i| + |ω_i| R_i + ½ |g| h          (R_i the bounding radius)
 *   m_i = min(SPECULATIVE_DISTANCE, 4 · SLOP_SIZE_FRACTION · L_i) / 2 + h s_i   (L_i the least half size)
 *   box = c ± (e + m_i),  e_k = Σ_j |R_kj| h_j (box), |R_k1| h + r (capsule), r (sphere);
 *   a plane is bounded only along the axis its normal R_·1 is exactly parallel to (aabb.ts).
 * Flags: bit 0 of the record is "inactive" (fixed or asleep: the broad phase pairs no two of them),
 * taken from the per-body flags buffer (bit 0 inactive, bit 1 fixed), which the host writes when the
 * islands change.
 *
 * f32, and the broad phase must never lose a pair the f64 pipeline finds: each bound is moved
 * outwards by δ = 16 ε (|c| + e + m), ε = 2⁻²⁴. The f32 box of the f32 pose then holds the exact box
 * of that pose: R(q)'s entries carry at most ~4 ε of rounding (products and sums of unit-sized
 * terms), so e_k = Σ_j |R_kj| h_j is within 3 · 5 ε Σ_j h_j ≤ 15 ε e' of its exact value (e' the
 * largest extent, ≤ e + the errors' own size), the margin within 3 ε m, and c ± (e + m) rounds by
 * ε |c ± (e + m)| ≤ ε (|c| + e + m): in all ≤ 16 ε (|c| + e + m) (test/gpu-aabb.test.ts checks
 * GPU ⊇ exact and GPU ⊆ exact ± 2δ on random bodies). Unbounded sides are ±3.4e38, as packAabbs.
 */
import { buildKernels } from '../gpu/kernels.js';
import { defineRecord } from '../gpu/layout.js';
import { Kernel, THREAD_INDEX_WGSL, kernelEntry } from '../gpu/dispatch.js';
import { BodyAabbRecord } from './gpu-broadphase.wgsl.js';
import { BodyPoseRecord, BodyShapeRecord } from './gpu-narrow.wgsl.js';
import { SLOP_SIZE_FRACTION, SPECULATIVE_DISTANCE } from './pipeline.js';

export const AabbParamsRecord = defineRecord('AabbParams', [
  ['count', 'u32', 'bodies'],
  ['h', 'f32', "the frame's time step, s"],
  ['fall', 'f32', '½ |g| h, m/s'],
  ['pad', 'u32'],
] as const);

/** per-body flags (the host's u32 buffer): bit 0 inactive (fixed or asleep), bit 1 fixed */
export const FLAG_INACTIVE = 1;
export const FLAG_FIXED = 2;
/** the relative outward rounding of every finite bound (header: δ = AABB_ROUNDING · ε · (|c| + e + m)) */
export const AABB_ROUNDING = 16;

const code = /* wgsl */ `
${AabbParamsRecord.wgsl}
${BodyPoseRecord.wgsl}
${BodyShapeRecord.wgsl}
${BodyAabbRecord.wgsl}
struct Velocity { v: vec4f, w: vec4f, };
@group(0) @binding(0) var<uniform> params: AabbParams;
@group(0) @binding(1) var<storage, read> poses: array<BodyPose>;
@group(0) @binding(2) var<storage, read> velocities: array<Velocity>;
@group(0) @binding(3) var<storage, read> shapes: array<BodyShape>;
@group(0) @binding(4) var<storage, read> flags: array<u32>;
@group(0) @binding(5) var<storage, read_write> aabbs: array<BodyAabb>;
@group(0) @binding(6) var<storage, read_write> speeds: array<f32>;
${THREAD_INDEX_WGSL}
const EPS: f32 = ${2 ** -24};
const ROUNDING: f32 = ${AABB_ROUNDING}.0;
const BIG: f32 = 3.4e38;
const SPEC: f32 = ${SPECULATIVE_DISTANCE};
const SIZE_FRACTION: f32 = ${SLOP_SIZE_FRACTION};

${kernelEntry('body_aabb')} {
  let i = thread_index(gid, nwg);
  if (i >= params.count) { return; }
  let p = poses[i];
  let shape = shapes[i];
  let fl = flags[i];
  let q = p.orientation;
  let x = q.x; let y = q.y; let z = q.z; let w = q.w;
  // R(q), row k, column j (rigid/quat.ts rotate; aabb.ts)
  let r00 = 1.0 - 2.0 * (y * y + z * z); let r01 = 2.0 * (x * y - z * w); let r02 = 2.0 * (x * z + y * w);
  let r10 = 2.0 * (x * y + z * w); let r11 = 1.0 - 2.0 * (x * x + z * z); let r12 = 2.0 * (y * z - x * w);
  let r20 = 2.0 * (x * z - y * w); let r21 = 2.0 * (y * z + x * w); let r22 = 1.0 - 2.0 * (x * x + y * y);
  let sz = shape.size;
  var radius = 0.0; // bounding radius (model/world.ts boundingRadius)
  var least = BIG; // least half size (leastHalfSize)
  var e = vec3f(0.0);
  if (shape.kind == 0u) { // sphere
    e = vec3f(sz.x); radius = sz.x; least = sz.x;
  } else if (shape.kind == 1u) { // capsule: the segment (0, ±h, 0), widened by r
    e = vec3f(abs(r01), abs(r11), abs(r21)) * sz.y + vec3f(sz.x); radius = sz.y + sz.x; least = sz.x;
  } else if (shape.kind == 2u) { // box
    e = vec3f(abs(r00) * sz.x + abs(r01) * sz.y + abs(r02) * sz.z,
              abs(r10) * sz.x + abs(r11) * sz.y + abs(r12) * sz.z,
              abs(r20) * sz.x + abs(r21) * sz.y + abs(r22) * sz.z);
    radius = length(sz); least = min(sz.x, min(sz.y, sz.z));
  }
  // s = |v| + |ω| R + ½ |g| h; 0 for a fixed body
  var s = 0.0;
  if ((fl & ${FLAG_FIXED}u) == 0u) {
    let vel = velocities[i];
    s = length(vel.v.xyz) + length(vel.w.xyz) * radius + params.fall;
  }
  speeds[i] = s;
  let m = min(SPEC, 4.0 * SIZE_FRACTION * least) / 2.0 + params.h * s;
  var out: BodyAabb;
  out.flags = fl & ${FLAG_INACTIVE}u;
  out.pad = 0u;
  let c = p.position;
  if (shape.kind == 3u) {
    // the half-space below the plane through c with normal n = R_·1: bounded only along an axis n
    // is exactly parallel to (aabb.ts); the bound c_k ± m moved out by its rounding
    var lo = vec3f(-BIG); var hi = vec3f(BIG);
    let d = ROUNDING * EPS * (abs(c) + vec3f(m));
    if (r11 == 0.0 && r21 == 0.0 && r01 != 0.0) {
      if (r01 > 0.0) { hi.x = c.x + m + d.x; } else { lo.x = c.x - m - d.x; }
    } else if (r01 == 0.0 && r21 == 0.0 && r11 != 0.0) {
      if (r11 > 0.0) { hi.y = c.y + m + d.y; } else { lo.y = c.y - m - d.y; }
    } else if (r01 == 0.0 && r11 == 0.0 && r21 != 0.0) {
      if (r21 > 0.0) { hi.z = c.z + m + d.z; } else { lo.z = c.z - m - d.z; }
    }
    out.lo = lo; out.hi = hi;
  } else {
    let ext = e + vec3f(m);
    let d = ROUNDING * EPS * (abs(c) + ext);
    out.lo = c - ext - d;
    out.hi = c + ext + d;
  }
  aabbs[i] = out;
}
`;

/** The body-box stage: `record` one dispatch writing `aabbs` (BodyAabb) and `speeds` (f32) for `count` bodies. */
export class GpuBodyAabbs {
  readonly params: GPUBuffer;
  readonly speeds: GPUBuffer;
  readonly aabbs: GPUBuffer;
  private bindGroup: GPUBindGroup | null = null;
  private bound: GPUBuffer[] = [];

  private constructor(
    private readonly device: GPUDevice,
    private readonly kernel: Kernel,
    readonly capacity: number,
    private count = 0,
  ) {
    const n = Math.max(1, capacity);
    this.params = device.createBuffer({ label: 'aabb params', size: AabbParamsRecord.stride, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.aabbs = device.createBuffer({ label: 'body aabbs', size: BodyAabbRecord.stride * n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    this.speeds = device.createBuffer({ label: 'body speeds', size: 4 * n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  }

  static async create(device: GPUDevice, capacity: number): Promise<GpuBodyAabbs> {
    const kernel = await buildKernels(device, 'gpu body boxes', () => Kernel.create(device, 'body_aabb', code));
    return new GpuBodyAabbs(device, kernel, capacity);
  }

  /** Sets the body count, the frame's time step h and |g| for the records from now on. */
  configure(count: number, h: number, gravity: number): void {
    if (count > this.capacity) throw new RangeError(`GpuBodyAabbs: ${count} bodies, capacity ${this.capacity}`);
    this.count = count;
    const buf = new ArrayBuffer(AabbParamsRecord.stride);
    const v = new DataView(buf);
    AabbParamsRecord.write(v, 0, 'count', count);
    AabbParamsRecord.write(v, 0, 'h', h);
    AabbParamsRecord.write(v, 0, 'fall', 0.5 * gravity * h);
    this.device.queue.writeBuffer(this.params, 0, buf);
  }

  /**
   * Records the stage into `pass`: poses (BodyPose, 32 bytes: frames.ts packBodyState's pose), velocities
   * ((v, 0), (ω, 0) per body: packBodyState's velocity), shapes (BodyShape: gpu-narrow.ts packShapes) and
   * flags (u32 per body, FLAG_INACTIVE | FLAG_FIXED).
   */
  record(pass: GPUComputePassEncoder, poses: GPUBuffer, velocities: GPUBuffer, shapes: GPUBuffer, flags: GPUBuffer): void {
    const inputs = [poses, velocities, shapes, flags];
    if (!this.bindGroup || inputs.some((b, k) => b !== this.bound[k])) {
      this.bindGroup = this.kernel.bind([this.params, ...inputs, this.aabbs, this.speeds]);
      this.bound = inputs;
    }
    this.kernel.dispatch(pass, this.bindGroup, this.count);
  }

  destroy(): void {
    this.params.destroy();
    this.aabbs.destroy();
    this.speeds.destroy();
  }
}
