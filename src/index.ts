/** SolverLab's library surface: world model, scenes, solvers, metrics, runs. */
export * from './model/world.js';
export { compileWorld, type CompiledWorld } from './model/compiled.js';
export { computeConnectivity, type Connectivity } from './model/connectivity.js';
export { type SceneInfo, type ParamSpec, resolveParams } from './scenes/scene.js';
export { scenes, findScene } from './scenes/registry.js';
export * from './solvers/solver.js';
export { solvers, findSolver } from './solvers/registry.js';
export { JacobiCpuSolver, type JacobiVariant } from './solvers/jacobi/cpu.js';
export { JacobiGpuSolver, jacobiIterationBytes } from './solvers/jacobi/gpu.js';
export { acquireGpu, NoGpuError, type GpuContext } from './gpu/device.js';
export { MetricsContext, type FrameMetrics } from './metrics/metrics.js';
export { runSolver, DivergenceWatch, summariseTimings, type RunResult, type RunOptions, type SeriesPoint } from './run/run.js';
export { runBench, type BenchRow } from './bench/bench.js';
export * from './bench/results.js';
export { stateHash } from './metrics/hash.js';
