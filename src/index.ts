/**
 * SolverLab's library surface: world model, scenes, solvers, metrics, runs.
 *
 * The GPU solvers' declarations name WebGPU's types (GPUDevice, GPUBuffer, ...), which live in
 * @webgpu/types (a dependency): the reference below is kept in the emitted index.d.ts
 * (preserve="true"; TypeScript ≥ 5.5 drops references it did not write itself), so a consumer
 * compiling without skipLibCheck sees them without configuring anything.
 */
/// <reference types="@webgpu/types" preserve="true" />
export * from './model/world.js';
export { compileWorld, type CompiledWorld } from './model/compiled.js';
export { computeConnectivity, type Connectivity } from './model/connectivity.js';
export { packedBodyList, packedConstraintList, packedBodies, packedConstraints, packWorld, editableWorld, forEachBody, forEachConstraint, PackedBodies, PackedConstraints } from './model/packed.js';
export { type SceneInfo, type RigidSceneInfo, type ParamSpec, type VectorParamSpec, type ParamValue, resolveParams, resolveSceneParams, buildScene } from './scenes/scene.js';
export { scenes, rigidScenes, findScene, findRigidScene } from './scenes/registry.js';
export { type SceneDesc, isParticleSystem, sceneKind, rigidWorld } from './model/scene-desc.js';
export { parseAnySceneFile, anySceneFileJson } from './scenes/scene-file.js';
export {
  type ParticleDesc,
  type ForceDesc,
  type ConstraintDesc as ParticleConstraintDesc,
  type ParametricCircleDesc,
  type ParticleSystemDesc,
  ParticleSystemError,
  validateParticleSystem,
} from './model/particle-system.js';
export { ParticleSystem, SolverFailure, type ConstraintForce, type FeedbackGains } from './particles/system.js';
export { Integrator, type IntegratorName } from './particles/integrators.js';
export { WitkinSolver } from './solvers/witkin/solver.js';
export { conjugateGradient, type CgOptions, type CgResult } from './math/cg.js';
export * from './solvers/solver.js';
export { solvers, findSolver } from './solvers/registry.js';
export { JacobiCpuSolver, type JacobiVariant } from './solvers/jacobi/cpu.js';
export { JacobiGpuSolver, jacobiIterationBytes } from './solvers/jacobi/gpu.js';
export { GaussSeidelCpuSolver } from './solvers/gs/cpu.js';
export { GaussSeidelGpuSolver } from './solvers/gs/gpu.js';
export { GlobalCpuSolver } from './solvers/global/cpu.js';
export { GlobalGpuSolver } from './solvers/global/gpu.js';
export { XpbdCpuSolver, type XpbdVariant } from './solvers/xpbd/cpu.js';
export { XpbdGpuSolver } from './solvers/xpbd/gpu.js';
export { PgsCpuSolver } from './solvers/pgs/cpu.js';
export { SiSoftCpuSolver, softContactRule, softJointSpring } from './solvers/si-soft/cpu.js';
export { SoftStepCpuSolver, softStepContactRule } from './solvers/softstep/cpu.js';
export { collide } from './collision/narrow.js';
export { shapeAabb } from './collision/aabb.js';
export { SweepAndPrune, HashGrid, bruteForcePairs, type BroadPhase } from './collision/broadphase.js';
export { CollisionPipeline, SPECULATIVE_DISTANCE } from './collision/pipeline.js';
export type { Manifold, ContactPoint, Pose } from './collision/types.js';
export { ContactList, contactKey } from './rows/contact.js';
export { baumgarteContacts, CONTACT_SLOP, MAX_PUSHOUT, RESTITUTION_THRESHOLD, type ContactRule } from './rows/block-solver.js';
// the constraint-row core (src/rows/) and the rigid-body core (src/rigid/)
export { RowSet, JACOBIAN_STRIDE, blockVelocity, gatherImpulse, rowConnectivity, type RowConnectivity } from './rows/rows.js';
export { RowBlockSolver } from './rows/block-solver.js';
export { softness, compliancePerStep, type Softness, type SoftnessSpec } from './rows/softness.js';
export type { ConstraintType } from './rows/constraint-type.js';
export { constraintTypes } from './rows/constraint-types.js';
export { JointKind, type JointTable, type BodyPose } from './model/joint-data.js';
export { JointSet } from './rows/joint-set.js';
export { RigidBodyCore } from './rigid/body.js';
export { acquireGpu, NoGpuError, type GpuContext } from './gpu/device.js';
export { MetricsContext, type FrameMetrics } from './metrics/metrics.js';
export { runSolver, DivergenceWatch, summariseTimings, type RunResult, type RunOptions, type SeriesPoint, type ContactSummary } from './run/run.js';
export { runBench, type BenchRow } from './bench/bench.js';
export * from './bench/results.js';
export { stateHash } from './metrics/hash.js';
export { runCompare, prepareCompare, paramsPerScene, machineInfo, entryLabel, solverEntry, type CompareOptions, type CompareProgress, type SolverEntry } from './bench/compare.js';
export { formatCompareTable, compareCsv } from './bench/table.js';
export { renderReport } from './bench/report-html.js';
export { parseSceneFile, worldFromJson, sceneFileJson, sceneFileSchema } from './model/schema.js';
export { loadScene, loadRigidScene, isSceneFile, InputError, type LoadedScene } from './scenes/load.js';
export { RapierSolver } from './solvers/rapier/rapier.js';
export {
  preflight,
  checkMemory,
  checkRanges,
  estimateMemory,
  machineLimits,
  countScene,
  arithmeticOf,
  ulp,
  f32,
  f64,
  type SceneCount,
  type MemoryEstimate,
  type MemoryLimits,
  type Arithmetic,
  type RangeOptions,
} from './model/limits.js';
export { defineScene, type SceneDefinition } from './scenes/scene.js';
export { VERSION } from './version.js';
