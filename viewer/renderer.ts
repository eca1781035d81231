/**
 * The WebGPU renderer, on the same device as the GPU solvers: body impostors (spheres, boxes,
 * capsules, ray-cast per fragment) with simple lighting, a ground grid, and joints as line
 * segments (a hinge with its axis).
 *
 * It draws into a RenderTarget: the page's canvas (canvasTarget) or an offscreen texture
 * (offscreenTarget: scripts/bench-render.ts times the same pipelines in Node, on any adapter).
 * Per frame it writes the camera uniform (256 bytes) and records one render pass, timed with
 * GPU timestamps where the adapter has them (drawTimings); body poses come from storage buffers:
 *   - a GPU solver's own `pose` buffer (GpuSolverBase.bodyState()): nothing is read back;
 *   - for a CPU solver, a buffer of the same layout the viewer fills from its snapshot.
 * Draw order: opaque bodies (one solver) → ground (plane bodies) → grid (not for a planar scene,
 * nor one with a ground) → guides → joints → translucent bodies (overlaid solvers, depth-tested,
 * not depth-writing, so each one shows through the others) → contacts (on demand: points and
 * normals, not depth-tested, so those inside a stack show).
 */
import type { GpuContext } from '../src/gpu/device.js';
import { OrbitCamera, invertRigid, type Vec3 } from './camera.js';
import { shaderSource } from './shaders.wgsl.js';
import { GROUND_FLOATS, JOINT_VERTICES, POSE_FLOATS, type Drawable } from './render-info.js';

const CAMERA_BYTES = 256;
const SLOT_BYTES = 48;
export const BACKGROUND = [0.082, 0.09, 0.106] as const;
/** contact points and normals: a light violet, unlit, drawn over everything (viewer/colours.ts; the viewer test checks its hue) */
export { CONTACT_COLOUR } from './colours.js';
import { CONTACT_COLOUR } from './colours.js';
/** radius of a contact point's disc, CSS px (× devicePixelRatio on the canvas) */
const CONTACT_RADIUS_PX = 3.5;
const CONTACT_BYTES = 32;

/** Where the renderer draws: a colour texture of `format`, `size()` device pixels, for each frame. */
export interface RenderTarget {
  readonly format: GPUTextureFormat;
  /** the size of the next frame, device pixels (a canvas follows its CSS size) */
  size(): { width: number; height: number };
  /** the texture of the next frame */
  view(): GPUTextureView;
}

/** The page's canvas, at its CSS size × devicePixelRatio (at most 2). */
export function canvasTarget(device: GPUDevice, canvas: HTMLCanvasElement): RenderTarget {
  const context = canvas.getContext('webgpu');
  if (!context) throw new Error('the canvas has no WebGPU context');
  const format = navigator.gpu.getPreferredCanvasFormat();
  context.configure({ device, format, alphaMode: 'opaque' });
  return {
    format,
    size() {
      const dpr = Math.min(window.devicePixelRatio || 1, 2);
      const width = Math.max(1, Math.round(canvas.clientWidth * dpr));
      const height = Math.max(1, Math.round(canvas.clientHeight * dpr));
      if (canvas.width !== width || canvas.height !== height) {
        canvas.width = width;
        canvas.height = height;
      }
      return { width, height };
    },
    view: () => context.getCurrentTexture().createView(),
  };
}

/** An offscreen colour texture of width × height (a benchmark's screen, or a test's). */
export function offscreenTarget(device: GPUDevice, width: number, height: number): RenderTarget & { texture: GPUTexture } {
  const format: GPUTextureFormat = 'rgba8unorm';
  const texture = device.createTexture({ label: 'offscreen', size: [width, height], format, usage: GPUTextureUsage.RENDER_ATTACHMENT | GPUTextureUsage.COPY_SRC });
  const view = texture.createView();
  return { format, texture, size: () => ({ width, height }), view: () => view };
}

export interface DrawSlot {
  bindGroup: GPUBindGroup;
  uniform: GPUBuffer;
  bodyCount: number;
  jointCount: number;
}

export class Renderer {
  readonly camera = new OrbitCamera();
  readonly device: GPUDevice;
  private readonly format: GPUTextureFormat;
  private readonly cameraBuffer: GPUBuffer;
  private readonly cameraGroup: GPUBindGroup;
  private readonly slotLayout: GPUBindGroupLayout;
  private readonly pipelines: {
    opaque: GPURenderPipeline;
    translucent: GPURenderPipeline;
    grid: GPURenderPipeline;
    joints: GPURenderPipeline;
    guides: GPURenderPipeline;
    ground: GPURenderPipeline;
    contactPoints: GPURenderPipeline;
    contactLines: GPURenderPipeline;
  };
  /** the contacts' uniform and bind group, and their vertex buffer (grown as needed) with what it holds */
  private readonly contactUniform: GPUBuffer;
  private readonly contactGroup: GPUBindGroup;
  private contactBuffer: GPUBuffer | null = null;
  private contactData: Float32Array | null = null;
  private contactCount = 0;
  private depth: GPUTexture | null = null;
  private depthSize = '';
  /** render-pass timestamps: a query set, its resolve buffer, and a readback buffer free when not mapping */
  private readonly timer: { set: GPUQuerySet; resolve: GPUBuffer; readback: GPUBuffer; busy: boolean } | null = null;
  private passMs: number[] = [];
  private scene: { info: Drawable; shapes: GPUBuffer; joints: GPUBuffer; guides: GPUBuffer | null; ground: GPUBuffer | null; origin: Vec3; groundY: number; cell: number } | null = null;

  /** A renderer on `gpu`'s device; a shader or pipeline fault is thrown here, not left for the first frame. */
  static async create(gpu: GpuContext, target: RenderTarget): Promise<Renderer> {
    gpu.device.pushErrorScope('validation');
    const renderer = new Renderer(gpu, target);
    const error = await gpu.device.popErrorScope();
    if (error) throw new Error(`the renderer's pipelines could not be made: ${error.message}`);
    return renderer;
  }

  private constructor(gpu: GpuContext, readonly target: RenderTarget) {
    this.device = gpu.device;
    this.format = target.format;
    if (gpu.timestamps) {
      const d = gpu.device;
      this.timer = {
        set: d.createQuerySet({ label: 'render pass', type: 'timestamp', count: 2 }),
        resolve: d.createBuffer({ label: 'render pass times', size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC }),
        readback: d.createBuffer({ label: 'render pass times (read)', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
        busy: false,
      };
    }

    const d = this.device;
    const VF = GPUShaderStage.VERTEX | GPUShaderStage.FRAGMENT;
    const cameraLayout = d.createBindGroupLayout({ label: 'camera', entries: [{ binding: 0, visibility: VF, buffer: { type: 'uniform' } }] });
    this.slotLayout = d.createBindGroupLayout({
      label: 'slot',
      entries: [
        { binding: 0, visibility: VF, buffer: { type: 'uniform' } },
        { binding: 1, visibility: GPUShaderStage.VERTEX, buffer: { type: 'read-only-storage' } },
        { binding: 2, visibility: GPUShaderStage.VERTEX, buffer: { type: 'read-only-storage' } },
        { binding: 3, visibility: GPUShaderStage.VERTEX, buffer: { type: 'read-only-storage' } },
      ],
    });
    this.cameraBuffer = d.createBuffer({ label: 'camera', size: CAMERA_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.cameraGroup = d.createBindGroup({ layout: cameraLayout, entries: [{ binding: 0, resource: { buffer: this.cameraBuffer } }] });

    const module = d.createShaderModule({ label: 'viewer', code: shaderSource });
    const full = d.createPipelineLayout({ bindGroupLayouts: [cameraLayout, this.slotLayout] });
    const cameraOnly = d.createPipelineLayout({ bindGroupLayouts: [cameraLayout] });
    const blend: GPUBlendState = {
      color: { srcFactor: 'src-alpha', dstFactor: 'one-minus-src-alpha' },
      alpha: { srcFactor: 'one', dstFactor: 'one-minus-src-alpha' },
    };
    const contactLayout = d.createBindGroupLayout({ label: 'contacts', entries: [{ binding: 4, visibility: VF, buffer: { type: 'uniform' } }] });
    this.contactUniform = d.createBuffer({ label: 'contacts', size: CONTACT_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.contactGroup = d.createBindGroup({ layout: contactLayout, entries: [{ binding: 4, resource: { buffer: this.contactUniform } }] });
    const withContacts = d.createPipelineLayout({ bindGroupLayouts: [cameraLayout, contactLayout] });
    const pipeline = (label: string, layout: GPUPipelineLayout, vs: string, fs: string, topology: GPUPrimitiveTopology, blended: boolean, depthWrite: boolean, compare: GPUCompareFunction, buffers: GPUVertexBufferLayout[] = []) =>
      d.createRenderPipeline({
        label,
        layout,
        vertex: { module, entryPoint: vs, buffers },
        fragment: { module, entryPoint: fs, targets: [{ format: this.format, blend: blended ? blend : undefined }] },
        primitive: { topology, cullMode: 'none' },
        depthStencil: { format: 'depth24plus', depthWriteEnabled: depthWrite, depthCompare: compare },
      });
    this.pipelines = {
      opaque: pipeline('spheres', full, 'sphere_vs', 'sphere_fs', 'triangle-strip', false, true, 'less'),
      translucent: pipeline('spheres (overlay)', full, 'sphere_vs', 'sphere_fs', 'triangle-strip', true, false, 'less'),
      grid: pipeline('grid', cameraOnly, 'grid_vs', 'grid_fs', 'triangle-strip', true, true, 'less'),
      joints: pipeline('joints', full, 'joint_vs', 'joint_fs', 'line-list', true, false, 'less-equal'),
      guides: pipeline('guides', cameraOnly, 'guide_vs', 'guide_fs', 'line-list', true, false, 'less-equal', [
        { arrayStride: 12, attributes: [{ shaderLocation: 0, offset: 0, format: 'float32x3' }] },
      ]),
      ground: pipeline('ground', cameraOnly, 'ground_vs', 'ground_fs', 'triangle-list', false, true, 'less', [
        {
          arrayStride: 4 * GROUND_FLOATS,
          attributes: [
            { shaderLocation: 0, offset: 0, format: 'float32x3' },
            { shaderLocation: 1, offset: 12, format: 'float32x3' },
            { shaderLocation: 2, offset: 24, format: 'float32x2' },
          ],
        },
      ]),
      // contacts: six floats per point (the point, the tip of its normal); a disc per point (instanced) and a segment each
      contactPoints: pipeline('contact points', withContacts, 'contact_point_vs', 'contact_point_fs', 'triangle-strip', false, false, 'always', [
        { arrayStride: 24, stepMode: 'instance', attributes: [{ shaderLocation: 0, offset: 0, format: 'float32x3' }] },
      ]),
      contactLines: pipeline('contact normals', withContacts, 'contact_line_vs', 'contact_line_fs', 'line-list', false, false, 'always', [
        { arrayStride: 12, attributes: [{ shaderLocation: 0, offset: 0, format: 'float32x3' }] },
      ]),
    };
  }

  /** A new scene: its shape and joint buffers, origin, ground and a camera that frames it. */
  setScene(info: Drawable, reframe: boolean): void {
    this.clearScene();
    const d = this.device;
    const shapes = d.createBuffer({ label: 'shapes', size: Math.max(16, info.shapes.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    d.queue.writeBuffer(shapes, 0, info.shapes);
    const joints = d.createBuffer({ label: 'joints', size: Math.max(64, info.joints.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    if (info.joints.byteLength) d.queue.writeBuffer(joints, 0, info.joints);
    let guides: GPUBuffer | null = null;
    if (info.guides.length) {
      guides = d.createBuffer({ label: 'guides', size: info.guides.byteLength, usage: GPUBufferUsage.VERTEX | GPUBufferUsage.COPY_DST });
      d.queue.writeBuffer(guides, 0, info.guides);
    }
    let ground: GPUBuffer | null = null;
    if (info.ground.length) {
      ground = d.createBuffer({ label: 'ground', size: info.ground.byteLength, usage: GPUBufferUsage.VERTEX | GPUBufferUsage.COPY_DST });
      d.queue.writeBuffer(ground, 0, info.ground);
    }
    const { min, max } = info.bounds;
    const extent = Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2], 1e-3);
    // the ground: y = 0, or below the scene when it starts below 0
    const groundY = Math.min(0, min[1] - 0.05 * extent);
    const origin: Vec3 = [(min[0] + max[0]) / 2, (min[1] + max[1]) / 2, (min[2] + max[2]) / 2];
    const cell = 10 ** Math.floor(Math.log10(extent / 3));
    this.scene = { info, shapes, joints, guides, ground, origin, groundY, cell };
    if (reframe) this.frameScene();
  }

  frameScene(): void {
    if (!this.scene) return;
    const { info, origin, groundY } = this.scene;
    const rel = (p: readonly number[]): Vec3 => [p[0] - origin[0], p[1] - origin[1], p[2] - origin[2]];
    const min = rel(info.bounds.min), max = rel(info.bounds.max);
    // things fall: show the space below the scene, down to the ground, by up to half its width
    const width = Math.max(max[0] - min[0], max[2] - min[2]);
    if (!info.reach) min[1] = Math.max(groundY - origin[1], Math.min(min[1], min[1] - 0.5 * width));
    // a 2-D scene (the xy-plane) is seen face on
    if (info.planar) {
      this.camera.yaw = 0;
      this.camera.pitch = 0;
    }
    const { width: w, height: h } = this.target.size();
    this.camera.frame(min, max, Math.max(0.2, w / Math.max(1, h)));
  }

  clearScene(): void {
    this.scene?.shapes.destroy();
    this.scene?.joints.destroy();
    this.scene?.guides?.destroy();
    this.scene?.ground?.destroy();
    this.scene = null;
    this.setContacts(null);
  }

  /** A pose buffer (STORAGE | COPY_DST) for a CPU solver, holding the scene's initial poses. */
  createPoseBuffer(): GPUBuffer {
    const info = this.scene!.info;
    const buf = this.device.createBuffer({ label: 'pose (cpu)', size: Math.max(32, POSE_FLOATS * 4 * info.bodyCount), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    this.device.queue.writeBuffer(buf, 0, info.initialPoses);
    return buf;
  }

  /** What one solver draws with: its pose buffer (its own, or one from createPoseBuffer) and colour. */
  createSlot(pose: GPUBuffer, colour: readonly number[], alpha: number): DrawSlot {
    const { info, shapes, joints } = this.scene!;
    const uniform = this.device.createBuffer({ label: 'slot', size: SLOT_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const bindGroup = this.device.createBindGroup({
      layout: this.slotLayout,
      entries: [
        { binding: 0, resource: { buffer: uniform } },
        { binding: 1, resource: { buffer: pose } },
        { binding: 2, resource: { buffer: shapes } },
        { binding: 3, resource: { buffer: joints } },
      ],
    });
    const slot = { bindGroup, uniform, bodyCount: info.bodyCount, jointCount: info.jointCount };
    this.setSlotColour(slot, colour, alpha);
    return slot;
  }

  setSlotColour(slot: DrawSlot, colour: readonly number[], alpha: number): void {
    const buf = new ArrayBuffer(SLOT_BYTES);
    const f = new Float32Array(buf), u = new Uint32Array(buf);
    f.set([colour[0], colour[1], colour[2], alpha], 0);
    f.set([1.0, 0.45, 0.1, 1.0], 4); // the violation segment: orange
    u[8] = slot.bodyCount;
    u[9] = slot.jointCount;
    this.device.queue.writeBuffer(slot.uniform, 0, buf);
  }

  /** The target's size, and a depth texture of that size. */
  private resize(): { width: number; height: number } {
    const { width, height } = this.target.size();
    if (this.depthSize !== `${width}x${height}` || !this.depth) {
      this.depth?.destroy();
      this.depth = this.device.createTexture({ size: [width, height], format: 'depth24plus', usage: GPUTextureUsage.RENDER_ATTACHMENT });
      this.depthSize = `${width}x${height}`;
    }
    return { width, height };
  }

  /**
   * Where world point `p` lands on the target, in pixels from its top-left corner (the sphere
   * shader's projection: relative to the scene origin, then view and projection), or null when
   * it is behind the eye or no scene is set.
   */
  project(p: readonly number[]): [number, number] | null {
    if (!this.scene) return null;
    const { width, height } = this.target.size();
    const o = this.scene.origin;
    const v = this.camera.view(), m = this.camera.projection(width / height);
    const rel = [p[0] - o[0], p[1] - o[1], p[2] - o[2], 1];
    const eye = [0, 1, 2, 3].map((r) => v[r] * rel[0] + v[4 + r] * rel[1] + v[8 + r] * rel[2] + v[12 + r] * rel[3]);
    const clip = [0, 1, 3].map((r) => m[r] * eye[0] + m[4 + r] * eye[1] + m[8 + r] * eye[2] + m[12 + r] * eye[3]);
    if (!(clip[2] > 0)) return null;
    return [((clip[0] / clip[2] + 1) / 2) * width, ((1 - clip[1] / clip[2]) / 2) * height];
  }

  /** GPU ms of each render pass timed since the last call (empty without timestamp queries). */
  drawTimings(): number[] {
    const out = this.passMs;
    this.passMs = [];
    return out;
  }

  private writeCamera(aspect: number): void {
    const s = this.scene!;
    const cam = this.camera;
    const view = cam.view();
    const data = new Float32Array(CAMERA_BYTES / 4);
    data.set(view, 0);
    data.set(cam.projection(aspect), 16);
    data.set(invertRigid(view), 32);
    data.set([s.origin[0], s.origin[1], s.origin[2], 0], 48);
    // light from above, behind the viewer's left shoulder, as an eye-space direction
    const lw = normalize3([-0.4, 1, 0.6]);
    const l = [0, 1, 2].map((r) => view[r] * lw[0] + view[4 + r] * lw[1] + view[8 + r] * lw[2]);
    data.set([l[0], l[1], l[2], 0], 52);
    // grid: cells on world multiples, so offset the origin-relative coordinates by origin mod cell
    const cell = s.cell;
    const mod = (x: number) => x - Math.floor(x / (10 * cell)) * 10 * cell;
    data.set([s.groundY - s.origin[1], cell, mod(s.origin[0]), mod(s.origin[2])], 56);
    const half = Math.max(cam.distance * 4, cam.sceneRadius * 4, cell * 20);
    data.set([cam.target[0], cam.target[1], cam.target[2], half], 60);
    this.device.queue.writeBuffer(this.cameraBuffer, 0, data);
  }

  /**
   * The contact points to draw from now on: per point six floats, the point and the tip of its
   * normal segment (world); null or empty: none. Uploaded once per new array.
   */
  setContacts(lines: Float32Array | null): void {
    if (lines === this.contactData) return;
    this.contactData = lines;
    this.contactCount = lines ? Math.floor(lines.length / 6) : 0;
    if (!lines || !this.contactCount) return;
    if (!this.contactBuffer || this.contactBuffer.size < lines.byteLength) {
      this.contactBuffer?.destroy();
      this.contactBuffer = this.device.createBuffer({ label: 'contacts', size: Math.max(1024, 2 * lines.byteLength), usage: GPUBufferUsage.VERTEX | GPUBufferUsage.COPY_DST });
    }
    this.device.queue.writeBuffer(this.contactBuffer, 0, lines.buffer, lines.byteOffset, 24 * this.contactCount);
  }

  /** Records and submits one frame. */
  draw(slots: DrawSlot[], opts: { joints: boolean; translucent: boolean }): void {
    const { width, height } = this.resize();
    const encoder = this.device.createCommandEncoder({ label: 'frame' });
    // timed when the readback buffer is free (a frame or two after the last timed one)
    const timer = this.timer && !this.timer.busy ? this.timer : null;
    const pass = encoder.beginRenderPass({
      colorAttachments: [{ view: this.target.view(), clearValue: [BACKGROUND[0], BACKGROUND[1], BACKGROUND[2], 1], loadOp: 'clear', storeOp: 'store' }],
      depthStencilAttachment: { view: this.depth!.createView(), depthClearValue: 1, depthLoadOp: 'clear', depthStoreOp: 'store' },
      ...(timer ? { timestampWrites: { querySet: timer.set, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {}),
    });
    if (this.scene) {
      this.writeCamera(width / height);
      pass.setBindGroup(0, this.cameraGroup);
      const spheres = (pipeline: GPURenderPipeline) => {
        pass.setPipeline(pipeline);
        for (const s of slots) {
          if (!s.bodyCount) continue;
          pass.setBindGroup(1, s.bindGroup);
          pass.draw(4, s.bodyCount);
        }
      };
      if (!opts.translucent) spheres(this.pipelines.opaque);
      if (this.scene.ground) {
        pass.setPipeline(this.pipelines.ground);
        pass.setVertexBuffer(0, this.scene.ground);
        pass.draw(this.scene.info.ground.length / GROUND_FLOATS);
      }
      // the grid stands in for a ground where the scene has none
      if (!this.scene.info.planar && !this.scene.ground) {
        pass.setPipeline(this.pipelines.grid);
        pass.draw(4);
      }
      if (this.scene.guides) {
        pass.setPipeline(this.pipelines.guides);
        pass.setVertexBuffer(0, this.scene.guides);
        pass.draw(this.scene.info.guides.length / 3);
      }
      if (opts.joints) {
        pass.setPipeline(this.pipelines.joints);
        for (const s of slots) {
          if (!s.jointCount) continue;
          pass.setBindGroup(1, s.bindGroup);
          pass.draw(JOINT_VERTICES * s.jointCount);
        }
      }
      if (opts.translucent) spheres(this.pipelines.translucent);
      if (this.contactCount && this.contactBuffer) {
        const dpr = typeof window === 'undefined' ? 1 : Math.min(window.devicePixelRatio || 1, 2);
        this.device.queue.writeBuffer(this.contactUniform, 0, new Float32Array([...CONTACT_COLOUR, 1, width, height, CONTACT_RADIUS_PX * dpr, 0]));
        pass.setBindGroup(1, this.contactGroup);
        pass.setPipeline(this.pipelines.contactLines);
        pass.setVertexBuffer(0, this.contactBuffer);
        pass.draw(2 * this.contactCount);
        pass.setPipeline(this.pipelines.contactPoints);
        pass.draw(4, this.contactCount);
      }
    }
    pass.end();
    if (timer) {
      encoder.resolveQuerySet(timer.set, 0, 2, timer.resolve, 0);
      encoder.copyBufferToBuffer(timer.resolve, 0, timer.readback, 0, 16);
    }
    this.device.queue.submit([encoder.finish()]);
    if (timer) {
      timer.busy = true;
      timer.readback.mapAsync(GPUMapMode.READ).then(
        () => {
          const t = new BigUint64Array(timer.readback.getMappedRange());
          // timestamps in ns; a pass the GPU reports out of order (a clock reset) is not counted
          if (t[1] > t[0]) this.passMs.push(Number(t[1] - t[0]) / 1e6);
          timer.readback.unmap();
          timer.busy = false;
        },
        () => {
          // the device is gone: no more timings
        },
      );
    }
  }
}

function normalize3(v: number[]): number[] {
  const l = Math.hypot(v[0], v[1], v[2]);
  return [v[0] / l, v[1] / l, v[2] / l];
}
