/**
 * A step that cannot go on (a constraint without a gradient, a state blowing up past what collision
 * detection can hold): reported as the run's failure (run/run.ts: the run diverged, with this
 * message), never as NaN or a crash. In the model so that every layer can throw it.
 */
export class SolverFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SolverFailure';
  }
}
