/**
 * An orbit camera (target, yaw, pitch, distance) and the 4×4 matrices the renderer needs,
 * column-major as WGSL's mat4x4f. Coordinates are relative to the scene's origin (the
 * renderer subtracts it on the GPU), y up, right-handed; clip depth in [0, 1] (WebGPU).
 */
export type Vec3 = [number, number, number];

export class OrbitCamera {
  target: Vec3 = [0, 0, 0];
  /** rotation about +y, radians; 0 looks along −z (the eye on +z) */
  yaw = 0.45;
  /** elevation of the eye above the target's horizontal plane, radians */
  pitch = 0.3;
  distance = 5;
  fovY = (45 * Math.PI) / 180;
  /** how far the scene reaches from the target, m (sets the far plane) */
  sceneRadius = 5;

  eye(): Vec3 {
    const c = Math.cos(this.pitch);
    return [
      this.target[0] + this.distance * c * Math.sin(this.yaw),
      this.target[1] + this.distance * Math.sin(this.pitch),
      this.target[2] + this.distance * c * Math.cos(this.yaw),
    ];
  }

  /**
   * Frames a box: the target at its centre, and the eye (at the current yaw and pitch) just far
   * enough back that all eight corners are inside the view of the given aspect, with a margin.
   */
  frame(min: Vec3, max: Vec3, aspect: number): void {
    this.target = [0, 1, 2].map((d) => (min[d] + max[d]) / 2) as Vec3;
    this.sceneRadius = Math.max(1e-3, 0.5 * Math.hypot(max[0] - min[0], max[1] - min[1], max[2] - min[2]));
    const view = lookAt([0, 0, 0], [-Math.cos(this.pitch) * Math.sin(this.yaw), -Math.sin(this.pitch), -Math.cos(this.pitch) * Math.cos(this.yaw)], [0, 1, 0]);
    const tanY = Math.tan(this.fovY / 2) / 1.1, tanX = tanY * aspect;
    let distance = 1e-3;
    for (let k = 0; k < 8; k++) {
      const c = [k & 1 ? max[0] : min[0], k & 2 ? max[1] : min[1], k & 4 ? max[2] : min[2]].map((v, d) => v - this.target[d]);
      // the corner in the camera's axes (rows of the view rotation); the eye sits at +distance on its z
      const [x, y, z] = [0, 1, 2].map((r) => view[r] * c[0] + view[4 + r] * c[1] + view[8 + r] * c[2]);
      distance = Math.max(distance, z + Math.abs(x) / tanX, z + Math.abs(y) / tanY);
    }
    this.distance = distance;
  }

  orbit(dx: number, dy: number): void {
    this.yaw -= dx * 0.006;
    this.pitch = Math.max(-1.55, Math.min(1.55, this.pitch + dy * 0.006));
  }

  /** Moves the target in the view plane by (dx, dy) pixels of a viewport `height` pixels high. */
  pan(dx: number, dy: number, height: number): void {
    const view = this.view();
    const perPixel = (2 * this.distance * Math.tan(this.fovY / 2)) / Math.max(1, height);
    // the view matrix's rows 0 and 1 are the camera's right and up axes in world space
    for (let d = 0; d < 3; d++) this.target[d] += (-dx * view[4 * d] + dy * view[4 * d + 1]) * perPixel;
  }

  zoom(wheelDelta: number): void {
    this.distance = Math.max(1e-3, this.distance * Math.exp(wheelDelta * 0.0015));
  }

  view(): Float32Array {
    return lookAt(this.eye(), this.target, [0, 1, 0]);
  }

  near(): number {
    return Math.max(1e-4, this.distance * 0.01);
  }

  far(): number {
    return this.distance * 20 + this.sceneRadius * 20;
  }

  projection(aspect: number): Float32Array {
    return perspective(this.fovY, aspect, this.near(), this.far());
  }
}

/** View matrix: world → eye space (the eye looks along −z). */
export function lookAt(eye: Vec3, target: Vec3, up: Vec3): Float32Array {
  const z = normalize(sub(eye, target));
  let x = cross(up, z);
  if (Math.hypot(...x) < 1e-9) x = cross([0, 0, 1], z);
  x = normalize(x);
  const y = cross(z, x);
  // column-major: element (row r, column c) at [4c + r]
  return new Float32Array([
    x[0], y[0], z[0], 0,
    x[1], y[1], z[1], 0,
    x[2], y[2], z[2], 0,
    -dot(x, eye), -dot(y, eye), -dot(z, eye), 1,
  ]);
}

/** Right-handed perspective projection onto WebGPU's clip depth [0, 1] (near → 0, far → 1). */
export function perspective(fovY: number, aspect: number, near: number, far: number): Float32Array {
  const f = 1 / Math.tan(fovY / 2);
  const nf = 1 / (near - far);
  return new Float32Array([
    f / aspect, 0, 0, 0,
    0, f, 0, 0,
    0, 0, far * nf, -1,
    0, 0, near * far * nf, 0,
  ]);
}

/** The inverse of a rigid view matrix [R t; 0 1]: [Rᵀ −Rᵀt; 0 1]. */
export function invertRigid(m: Float32Array): Float32Array {
  const out = new Float32Array(16);
  for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) out[4 * c + r] = m[4 * r + c];
  for (let r = 0; r < 3; r++) out[12 + r] = -(out[r] * m[12] + out[4 + r] * m[13] + out[8 + r] * m[14]);
  out[15] = 1;
  return out;
}

function sub(a: Vec3, b: Vec3): Vec3 {
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
}
function dot(a: Vec3, b: Vec3): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
function cross(a: Vec3, b: Vec3): Vec3 {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}
function normalize(a: Vec3): Vec3 {
  const l = Math.hypot(...a) || 1;
  return [a[0] / l, a[1] / l, a[2] / l];
}
