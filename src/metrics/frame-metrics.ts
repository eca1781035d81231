/**
 * FrameMetrics: what the metrics report for one frame, for rigid worlds (metrics.ts)
 * and particle systems (particles/metrics.ts) alike. A leaf module (it imports
 * nothing), so that both can use the type without importing each other.
 */
export interface FrameMetrics {
  t: number;
  /** the largest linear violation over the rigid joints, m (point, the anchors of hinge and fixed, distance) */
  maxViolation: number;
  rmsViolation: number;
  /** the largest angular violation over the rigid joints, rad (hinge axes and limits, fixed orientation); 0 without such joints */
  maxAngularViolation?: number;
  energy: number;
  kinetic: number;
  /** gravitational plus elastic */
  potential: number;
  /** elastic energy of the soft joints, Σ ½ |c|²/α (J) */
  elastic: number;
  momentum: [number, number, number];
  angularMomentum: [number, number, number];
  /** worlds with collisions on: the deepest penetration over the contact points, m (metrics.ts) */
  maxPenetration?: number;
  /** worlds with collisions on: contact points that touch (separation ≤ the pair's slop, collision/pipeline.ts pairSlop) */
  contacts?: number;
  /**
   * rigid worlds: the dynamic (not fixed) bodies awake at this frame, Snapshot.asleep's zeros among them;
   * every dynamic body when the solver never sleeps (no mask). Absent for particle systems.
   */
  awake?: number;
  /** rigid worlds: the dynamic (not fixed) bodies, the count `awake` is out of */
  dynamicBodies?: number;
  /** false when any position, orientation or velocity is NaN or infinite */
  finite: boolean;
}
