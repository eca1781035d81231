/**
 * The λ-error channel of the residual curves: how far an iterative solver's
 * multipliers are from the converged solution of the same frame's system,
 *   e_k = ‖λᵏ − λ*‖₂ / ‖λ*‖₂,   A λ* = b   (reference text, (8), (36)),
 * λ* by preconditioned conjugate gradient to REFERENCE_TOLERANCE (global/delassus.ts).
 * Dimensionless, unlike the residual channel (m/s²): the report draws it on its own axis.
 * Kept apart from the solvers so that the report can name it without importing them.
 */

/** ResidualCurve channel name of the relative multiplier error */
export const LAMBDA_ERROR_CHANNEL = 'λ error';

/** relative tolerance of the CG that gives λ* (‖b − Aλ*‖ ≤ 1e-12 ‖b‖) */
export const REFERENCE_TOLERANCE = 1e-12;

/** what the λ-error channel holds, for the report */
export const LAMBDA_ERROR_QUANTITY =
  '‖λᵏ − λ*‖₂ / ‖λ*‖₂, dimensionless; λ* solves the same step’s A λ = b (CG to ‖b − Aλ*‖ ≤ 1e-12 ‖b‖, from the same warm start); where A is singular (redundant joints) λ* is one of many solutions, the one CG reaches from that warm start';
