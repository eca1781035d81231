/** The solvers, by id. A new solver is one folder plus one line here. */
import type { SolverInfo } from './solver.js';
import { JacobiCpuSolver } from './jacobi/cpu.js';
import { JacobiGpuSolver } from './jacobi/gpu.js';

export const solvers: SolverInfo[] = [
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
];

export function findSolver(id: string): SolverInfo | undefined {
  return solvers.find((s) => s.id === id);
}
