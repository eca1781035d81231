/**
 * The WebGPU renderer, on the same device as the GPU solvers: sphere impostors with simple
 * lighting, a ground grid, and point constraints as line segments.
 *
 * Per frame it writes the camera uniform (256 bytes) and records one render pass; body poses
 * come from storage buffers:
 *   - a GPU solver's own `pose` buffer (GpuSolverBase.bodyState()): nothing is read back;
 *   - for a CPU solver, a buffer of the same layout the viewer fills from its snapshot.
 * Draw order: opaque spheres (one solver) → grid (not for a planar scene) → guides → joints →
 * translucent spheres (overlaid solvers, depth-tested, not depth-writing, so each one shows
 * through the others).
 */
import type { GpuContext } from '../src/gpu/device.js';
import { OrbitCamera, invertRigid, type Vec3 } from './camera.js';
import { shaderSource } from './shaders.wgsl.js';
import { POSE_FLOATS, type Drawable } from './render-info.js';

const CAMERA_BYTES = 256;
const SLOT_BYTES = 48;
export const BACKGROUND = [0.082, 0.09, 0.106] as const;

export interface DrawSlot {
  bindGroup: GPUBindGroup;
  uniform: GPUBuffer;
  bodyCount: number;
  jointCount: number;
}

export class Renderer {
  readonly camera = new OrbitCamera();
  readonly device: GPUDevice;
  private readonly context: GPUCanvasContext;
  private readonly format: GPUTextureFormat;
  private readonly cameraBuffer: GPUBuffer;
  private readonly cameraGroup: GPUBindGroup;
  private readonly slotLayout: GPUBindGroupLayout;
  private readonly pipelines: { opaque: GPURenderPipeline; translucent: GPURenderPipeline; grid: GPURenderPipeline; joints: GPURenderPipeline; guides: GPURenderPipeline };
  private depth: GPUTexture | null = null;
  private scene: { info: Drawable; radius: GPUBuffer; joints: GPUBuffer; guides: GPUBuffer | null; origin: Vec3; groundY: number; cell: number } | null = null;

  /** A renderer on `gpu`'s device; a shader or pipeline fault is thrown here, not left for the first frame. */
  static async create(gpu: GpuContext, canvas: HTMLCanvasElement): Promise<Renderer> {
    gpu.device.pushErrorScope('validation');
    const renderer = new Renderer(gpu, canvas);
    const error = await gpu.device.popErrorScope();
    if (error) throw new Error(`the renderer's pipelines could not be made: ${error.message}`);
    return renderer;
  }

  private constructor(gpu: GpuContext, readonly canvas: HTMLCanvasElement) {
    this.device = gpu.device;
    const context = canvas.getContext('webgpu');
    if (!context) throw new Error('the canvas has no WebGPU context');
    this.context = context;
    this.format = navigator.gpu.getPreferredCanvasFormat();
    this.context.configure({ device: this.device, format: this.format, alphaMode: 'opaque' });

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
    };
  }

  /** A new scene: its radius and joint buffers, origin, ground and a camera that frames it. */
  setScene(info: Drawable, reframe: boolean): void {
    this.clearScene();
    const d = this.device;
    const radius = d.createBuffer({ label: 'radius', size: Math.max(16, info.radius.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    d.queue.writeBuffer(radius, 0, info.radius);
    const joints = d.createBuffer({ label: 'joints', size: Math.max(48, info.joints.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    if (info.joints.byteLength) d.queue.writeBuffer(joints, 0, info.joints);
    let guides: GPUBuffer | null = null;
    if (info.guides.length) {
      guides = d.createBuffer({ label: 'guides', size: info.guides.byteLength, usage: GPUBufferUsage.VERTEX | GPUBufferUsage.COPY_DST });
      d.queue.writeBuffer(guides, 0, info.guides);
    }
    const { min, max } = info.bounds;
    const extent = Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2], 1e-3);
    // the ground: y = 0, or below the scene when it starts below 0
    const groundY = Math.min(0, min[1] - 0.05 * extent);
    const origin: Vec3 = [(min[0] + max[0]) / 2, (min[1] + max[1]) / 2, (min[2] + max[2]) / 2];
    const cell = 10 ** Math.floor(Math.log10(extent / 3));
    this.scene = { info, radius, joints, guides, origin, groundY, cell };
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
    this.camera.frame(min, max, Math.max(0.2, this.canvas.clientWidth / Math.max(1, this.canvas.clientHeight)));
  }

  clearScene(): void {
    this.scene?.radius.destroy();
    this.scene?.joints.destroy();
    this.scene?.guides?.destroy();
    this.scene = null;
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
    const { info, radius, joints } = this.scene!;
    const uniform = this.device.createBuffer({ label: 'slot', size: SLOT_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const bindGroup = this.device.createBindGroup({
      layout: this.slotLayout,
      entries: [
        { binding: 0, resource: { buffer: uniform } },
        { binding: 1, resource: { buffer: pose } },
        { binding: 2, resource: { buffer: radius } },
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

  /** Canvas size in device pixels, following its CSS size. */
  private resize(): { width: number; height: number } {
    const dpr = Math.min(window.devicePixelRatio || 1, 2);
    const width = Math.max(1, Math.round(this.canvas.clientWidth * dpr));
    const height = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
    if (this.canvas.width !== width || this.canvas.height !== height || !this.depth) {
      this.canvas.width = width;
      this.canvas.height = height;
      this.depth?.destroy();
      this.depth = this.device.createTexture({ size: [width, height], format: 'depth24plus', usage: GPUTextureUsage.RENDER_ATTACHMENT });
    }
    return { width, height };
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

  /** Records and submits one frame. */
  draw(slots: DrawSlot[], opts: { joints: boolean; translucent: boolean }): void {
    const { width, height } = this.resize();
    const encoder = this.device.createCommandEncoder({ label: 'frame' });
    const pass = encoder.beginRenderPass({
      colorAttachments: [
        { view: this.context.getCurrentTexture().createView(), clearValue: [BACKGROUND[0], BACKGROUND[1], BACKGROUND[2], 1], loadOp: 'clear', storeOp: 'store' },
      ],
      depthStencilAttachment: { view: this.depth!.createView(), depthClearValue: 1, depthLoadOp: 'clear', depthStoreOp: 'store' },
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
      if (!this.scene.info.planar) {
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
          pass.draw(6 * s.jointCount);
        }
      }
      if (opts.translucent) spheres(this.pipelines.translucent);
    }
    pass.end();
    this.device.queue.submit([encoder.finish()]);
  }
}

function normalize3(v: number[]): number[] {
  const l = Math.hypot(v[0], v[1], v[2]);
  return [v[0] / l, v[1] / l, v[2] / l];
}
