/** The solvers, by id. A new solver is one folder plus one line here. */
import type { RigidSolverInfo, SolverInfo } from './solver.js';
import { isParticleSystem } from '../particles/model.js';
import { particleSolvers } from '../particles/registry.js';
import { JacobiCpuSolver } from './jacobi/cpu.js';
import { JacobiGpuSolver } from './jacobi/gpu.js';
import { GaussSeidelCpuSolver } from './gs/cpu.js';
import { GaussSeidelGpuSolver } from './gs/gpu.js';
import { GlobalCpuSolver } from './global/cpu.js';
import { GlobalGpuSolver, defaultGpuCgIterations } from './global/gpu.js';
import { XpbdCpuSolver } from './xpbd/cpu.js';
import { XpbdGpuSolver } from './xpbd/gpu.js';
import { RapierSolver, multibodyLoopReason, rapierSoftJointReason } from './rapier/rapier.js';

/** The rigid-body solvers (a new one is one line here). */
const rigidSolvers: RigidSolverInfo[] = [
  {
    id: 'jacobi-gpu',
    description: 'Jacobi point-constraint solver in WGSL compute kernels (the reference text; f32)',
    device: 'gpu',
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('jacobi-gpu needs a WebGPU device');
      return JacobiGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'jacobi-cpu',
    description: 'Jacobi point-constraint solver, f64 CPU reference of jacobi-gpu (same stages)',
    device: 'cpu',
    create: async (world, options) => new JacobiCpuSolver(world, options),
  },
  {
    id: 'gs-gpu',
    description: 'coloured block Gauss-Seidel: the Jacobi equations, one dispatch per constraint colour (the Jacobi text\'s next step; f32)',
    device: 'gpu',
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('gs-gpu needs a WebGPU device');
      return GaussSeidelGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'gs-cpu',
    description: 'coloured block Gauss-Seidel, f64 CPU reference of gs-gpu (same colours, same order)',
    device: 'cpu',
    create: async (world, options) => new GaussSeidelCpuSolver(world, options),
  },
  {
    id: 'global-cpu',
    description: 'converged reference (f64): the Jacobi equations (same A, b, β, soft rows), but each step solves the whole system A λ = b by a sparse LDLᵀ (reverse Cuthill–McKee envelope, semi-definite pivots dropped) with iterative refinement, to 1e-10 relative residual (CG then MINRES least squares where redundant joints leave it no solution); --iterations does not apply',
    device: 'cpu',
    iterationMode: 'direct',
    create: async (world, options) => new GlobalCpuSolver(world, options),
  },
  {
    id: 'global-gpu',
    description: 'global-cpu\'s preconditioned conjugate gradient in WGSL kernels (f32): --iterations CG iterations per step (default 64), an on-GPU flag stops at ‖r‖ ≤ 1e-6 ‖b‖; α, β and the reductions on the GPU, no readback',
    device: 'gpu',
    defaults: { iterations: defaultGpuCgIterations },
    iterationMode: 'cap',
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('global-gpu needs a WebGPU device');
      return GlobalGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'xpbd-gpu',
    description: 'XPBD (Müller et al. 2020, via the Starframe text): substeps of position projection, each joint C = p₁ − p₂ as one 3×3 block, one dispatch per constraint colour (WGSL, f32)',
    device: 'gpu',
    defaults: { iterations: 1, substeps: 10 },
    create: async (world, options, gpu) => {
      if (!gpu) throw new Error('xpbd-gpu needs a WebGPU device');
      return XpbdGpuSolver.create(world, options, gpu);
    },
  },
  {
    id: 'xpbd-cpu',
    description: 'XPBD, f64 CPU reference of xpbd-gpu (same stages, same colour order; beta, warmStart not used)',
    device: 'cpu',
    defaults: { iterations: 1, substeps: 10 },
    create: async (world, options) => new XpbdCpuSolver(world, options),
  },
  {
    id: 'rapier',
    description: 'Rapier 0.21 (@dimforge/rapier3d-compat, wasm, f32): spherical impulse joints; iterations = its TGS substeps; beta, warmStart not mapped',
    device: 'cpu',
    unsupported: (world) => rapierSoftJointReason(world),
    create: (world, options) => RapierSolver.create(world, options, 'impulse'),
  },
  {
    id: 'rapier-multibody',
    description: 'Rapier 0.21 (@dimforge/rapier3d-compat, wasm, f32): spherical multibody joints, reduced coordinates, no drift (trees only; Rapier damps joints 0.1 N·m·s)',
    device: 'cpu',
    unsupported: (world) => rapierSoftJointReason(world) ?? multibodyLoopReason(world),
    create: (world, options) => RapierSolver.create(world, options, 'multibody'),
  },
];

/** A rigid solver's entry as a SolverInfo: it declines particle systems with the reason. */
function forAnyScene(info: RigidSolverInfo): SolverInfo {
  const particles = (id: string) => `${id} solves rigid bodies; this scene is a particle system (use ${particleSolvers.map((p) => p.id).join(', ')})`;
  return {
    ...info,
    unsupported: (desc) => (isParticleSystem(desc) ? particles(info.id) : (info.unsupported?.(desc) ?? null)),
    create: (desc, options, gpu) => {
      if (isParticleSystem(desc)) throw new Error(particles(info.id));
      return info.create(desc, options, gpu);
    },
  };
}

export const solvers: SolverInfo[] = [...rigidSolvers.map(forAnyScene), ...particleSolvers];

export function findSolver(id: string): SolverInfo | undefined {
  return solvers.find((s) => s.id === id);
}
