/**
 * Everything the viewer needs to draw a scene description, behind one function: renderInfo(desc).
 * The renderer never reads a WorldDesc itself, so a new kind of description (particle systems,
 * new shapes) is one new branch here.
 *
 * For a rigid WorldDesc (spheres and point constraints):
 *   - per body its radius, and its pose in the layout every GPU solver keeps (two vec4f per
 *     body: (x, 0) and the quaternion q = [x y z w]; src/gpu/frames.ts packBodyState), which
 *     the renderer reads from the solver's own buffer (GPU solvers) or from a snapshot
 *     packed by packPoses (CPU solvers);
 *   - per point constraint its bodies and local anchors r⁰, r¹ (r¹ a world point when bodyB is
 *     the world): the renderer's vertex shader turns them into the segments
 *     x_A → x_A + R(q_A) r⁰ → x_B + R(q_B) r¹ → x_B from the live poses (the middle segment is
 *     the violation c of reference text eq. 3), so no segment is computed on the CPU per frame.
 */
import type { WorldDesc } from '../src/model/world.js';
import type { Snapshot } from '../src/solvers/solver.js';

/** f32 per body in the pose layout: (x, y, z, 0), (qx, qy, qz, qw). */
export const POSE_FLOATS = 8;
/** bytes per joint record: u32 bodyA, i32 bodyB (−1 = the world), 2 × pad, vec4f r⁰, vec4f r¹ */
export const JOINT_BYTES = 48;

export interface Drawable {
  drawable: true;
  bodyCount: number;
  jointCount: number;
  /** per body, m */
  radius: Float32Array<ArrayBuffer>;
  /** joint records (JOINT_BYTES each) for the renderer's storage buffer */
  joints: ArrayBuffer;
  /** the initial poses (POSE_FLOATS per body) */
  initialPoses: Float32Array<ArrayBuffer>;
  /** axis-aligned box around the bodies and world anchors, m */
  bounds: { min: [number, number, number]; max: [number, number, number] };
  /** a snapshot's bodies in the pose layout (for solvers that do not live on the GPU) */
  packPoses(s: Snapshot, out: Float32Array): void;
}

export interface NotDrawable {
  drawable: false;
  reason: string;
}

export type RenderInfo = Drawable | NotDrawable;

/** A description as a scene may build it: a rigid WorldDesc, or (coming) another kind. */
export type SceneDescription = WorldDesc | { kind: string };

export function isRigidWorld(desc: unknown): desc is WorldDesc {
  return !!desc && typeof desc === 'object' && Array.isArray((desc as WorldDesc).bodies) && Array.isArray((desc as WorldDesc).constraints);
}

export function renderInfo(desc: SceneDescription): RenderInfo {
  if (!isRigidWorld(desc)) {
    const kind = (desc as { kind?: unknown })?.kind;
    return { drawable: false, reason: `${typeof kind === 'string' ? `a '${kind}' scene` : 'this scene'} is not drawable yet` };
  }
  const bodies = desc.bodies, constraints = desc.constraints;
  const other = bodies.find((b) => b.shape?.type !== 'sphere');
  if (other) return { drawable: false, reason: `shape '${(other.shape as { type?: string }).type}' is not drawable yet` };

  const n = bodies.length;
  const radius = new Float32Array(n);
  const initialPoses = new Float32Array(POSE_FLOATS * n);
  const min: [number, number, number] = [Infinity, Infinity, Infinity];
  const max: [number, number, number] = [-Infinity, -Infinity, -Infinity];
  const grow = (p: readonly number[], pad: number) => {
    for (let d = 0; d < 3; d++) {
      min[d] = Math.min(min[d], p[d] - pad);
      max[d] = Math.max(max[d], p[d] + pad);
    }
  };
  bodies.forEach((b, i) => {
    radius[i] = b.shape.radius;
    const q = b.orientation ?? [0, 0, 0, 1];
    const qn = Math.hypot(...q) || 1;
    initialPoses.set([b.position[0], b.position[1], b.position[2], 0, q[0] / qn, q[1] / qn, q[2] / qn, q[3] / qn], POSE_FLOATS * i);
    grow(b.position, b.shape.radius);
  });

  const joints = new ArrayBuffer(JOINT_BYTES * constraints.length);
  const u = new Uint32Array(joints), s = new Int32Array(joints), f = new Float32Array(joints);
  constraints.forEach((c, j) => {
    const o = (JOINT_BYTES / 4) * j;
    u[o] = c.bodyA;
    s[o + 1] = c.bodyB === null ? -1 : c.bodyB;
    f.set(c.anchorA, o + 4);
    f.set(c.anchorB, o + 8);
    if (c.bodyB === null) grow(c.anchorB, 0);
  });
  if (!Number.isFinite(min[0])) {
    min.fill(-1);
    max.fill(1);
  }

  return {
    drawable: true,
    bodyCount: n,
    jointCount: constraints.length,
    radius,
    joints,
    initialPoses,
    bounds: { min, max },
    packPoses(snap, out) {
      const x = snap.position, q = snap.orientation;
      for (let i = 0; i < snap.bodyCount; i++) {
        const o = POSE_FLOATS * i;
        out[o] = x[3 * i];
        out[o + 1] = x[3 * i + 1];
        out[o + 2] = x[3 * i + 2];
        out[o + 3] = 0;
        out[o + 4] = q[4 * i];
        out[o + 5] = q[4 * i + 1];
        out[o + 6] = q[4 * i + 2];
        out[o + 7] = q[4 * i + 3];
      }
    },
  };
}
