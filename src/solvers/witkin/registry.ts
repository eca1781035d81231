/** The particle-system solvers: one per integrator, all with the global (CG) multiplier solve. */
import type { SolverInfo } from '../solver.js';
import { isParticleSystem } from '../../model/particle-system.js';
import { WitkinSolver } from './solver.js';
import type { IntegratorName } from '../../particles/integrators.js';

/** Feedback C̈ = −k_s C − k_d Ċ critically damped at ω = 10 rad/s: k_s = ω², k_d = 2ω. */
const feedback = { feedbackStiffness: 100, feedbackDamping: 20 };

const entry = (integrator: IntegratorName, what: string): SolverInfo => ({
  id: `witkin-${integrator}`,
  description: `constrained particles (Witkin): global multiplier solve J W Jᵀ λ = … by conjugate gradient each evaluation, ${what}; f64`,
  device: 'cpu',
  defaults: feedback,
  reads: ['dt', 'substeps', 'feedbackStiffness', 'feedbackDamping'],
  iterationMode: 'tolerance',
  unsupported: (desc) => (isParticleSystem(desc) ? null : `witkin-${integrator} solves particle systems; this scene is of rigid bodies`),
  create: async (desc, options) => {
    if (!isParticleSystem(desc)) throw new Error(`witkin-${integrator} solves particle systems; this scene is of rigid bodies`);
    return new WitkinSolver(desc, options, integrator);
  },
});

export const particleSolvers: SolverInfo[] = [
  entry('euler', 'explicit Euler'),
  entry('symplectic', 'semi-implicit (symplectic) Euler'),
  entry('rk4', 'classic Runge–Kutta 4'),
];

/** true for the id of a particle-system solver */
export function isParticleSolver(id: string): boolean {
  return particleSolvers.some((s) => s.id === id);
}
