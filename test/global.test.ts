/**
 * global-cpu, the converged reference (src/solvers/global/), and the conjugate
 * gradient it runs on (src/math/cg.ts), checked against facts that do not lean on
 * the code under test:
 *   a) CG against dense Cholesky solves on random SPD systems, with and without a
 *      preconditioner; on a singular PSD system it finds the minimum-norm solution
 *      (plus the start's null-space part), and on an inconsistent one it says so;
 *   b) a chain hanging at rest: every joint's λ is the weight of the beads below it,
 *      and the chain stays at rest;
 *   c) on a random joint graph with a loop, a soft joint, a fixed body and a world pin,
 *      λ is the dense solve of A = J M⁻¹ Jᵀ (+ α̃ I), b of (8), assembled here from (3), (8);
 *   d) the λ-error channel of jacobi-cpu / gs-cpu against that λ* falls to 0, and
 *      recording it changes nothing of the step;
 *   e) the pendulum swings with the physical pendulum's period;
 *   f) global-gpu (f32) against global-cpu and against the exact hanging-chain tensions,
 *      within bounds derived from its tolerance and f32 rounding;
 *   c″) global-cpu's sparse direct solve (src/math/envelope-ldlt.ts: RCM + envelope LDLᵀ): against dense
 *      Cholesky and CG on random sparse SPD block systems, on singular consistent ones, on the joint grid
 *      where CG fails, and the O(n) envelope of chains.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conjugateGradient } from '../src/math/cg.js';
import { minres } from '../src/math/minres.js';
import { EnvelopeLdlt } from '../src/math/envelope-ldlt.js';
import { GlobalCpuSolver } from '../src/solvers/global/cpu.js';
import { LAMBDA_ERROR_CHANNEL } from '../src/solvers/global/lambda-error.js';
import { JacobiCpuSolver } from '../src/solvers/jacobi/cpu.js';
import { GaussSeidelCpuSolver } from '../src/solvers/gs/cpu.js';
import { addChain } from '../src/scenes/chain.js';
import { jointGrid } from '../src/scenes/joint-grid.js';
import { massProperties, type BodyDesc, type PointConstraintDesc, type WorldDesc, type Vec3, type Quat } from '../src/model/world.js';
import { mulberry32 } from './support/random.js';
import { pendulumPeriod } from './support/pendulum.js';
import { acquireGpu } from '../src/gpu/device.js';
import { GlobalGpuSolver, defaultGpuTolerance, gpuLsTolerance } from '../src/solvers/global/gpu.js';
import type { Snapshot } from '../src/solvers/solver.js';
import { defaultSolverOptions } from '../src/solvers/solver.js';
import { runSolver } from '../src/run/run.js';
import { runRecord } from '../src/bench/results.js';
import { plotSpecs } from '../src/bench/report-html.js';

// --- dense linear algebra, written here so the checks do not lean on the code under test ---

type Mat = Float64Array[]; // rows

const zeros = (n: number, m = n): Mat => Array.from({ length: n }, () => new Float64Array(m));
const norm = (x: ArrayLike<number>) => Math.sqrt(Array.from(x).reduce((s, v) => s + v * v, 0));
const sub = (a: ArrayLike<number>, b: ArrayLike<number>) => Float64Array.from(a, (v, i) => v - b[i]);
const matVec = (A: Mat, x: ArrayLike<number>) => Float64Array.from(A, (row) => row.reduce((s, v, k) => s + v * x[k], 0));
const transpose = (A: Mat): Mat => {
  const T = zeros(A[0].length, A.length);
  A.forEach((row, i) => row.forEach((v, j) => (T[j][i] = v)));
  return T;
};
const matMul = (A: Mat, B: Mat): Mat => A.map((row) => {
  const out = new Float64Array(B[0].length);
  row.forEach((v, k) => { if (v !== 0) for (let j = 0; j < out.length; j++) out[j] += v * B[k][j]; });
  return out;
});

/** L with A = L Lᵀ (A symmetric positive definite); throws when it is not. */
function cholesky(A: Mat): Mat {
  const n = A.length, L = zeros(n);
  for (let j = 0; j < n; j++) {
    let d = A[j][j];
    for (let k = 0; k < j; k++) d -= L[j][k] * L[j][k];
    if (!(d > 0)) throw new Error('not positive definite');
    L[j][j] = Math.sqrt(d);
    for (let i = j + 1; i < n; i++) {
      let s = A[i][j];
      for (let k = 0; k < j; k++) s -= L[i][k] * L[j][k];
      L[i][j] = s / L[j][j];
    }
  }
  return L;
}

/** x = A⁻¹ b by Cholesky: forward then back substitution (with L = cholesky(A) when given). */
function choleskySolve(A: Mat, b: ArrayLike<number>, L = cholesky(A)): Float64Array {
  const n = A.length, y = new Float64Array(n), x = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= L[i][k] * y[k];
    y[i] = s / L[i][i];
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i];
    for (let k = i + 1; k < n; k++) s -= L[k][i] * x[k];
    x[i] = s / L[i][i];
  }
  return x;
}

/** ‖A⁻¹‖_F ≥ ‖A⁻¹‖₂: with it, ‖x − y‖ ≤ ‖A⁻¹‖_F (‖b − Ax‖ + ‖b − Ay‖) for any x, y (a rigorous error bound). */
function inverseFrobenius(A: Mat): number {
  return frobenius(inverse(A));
}

/** A⁻¹ (A symmetric positive definite), column by column from one Cholesky factor; symmetric, so rows = columns. */
function inverse(A: Mat): Mat {
  const L = cholesky(A);
  return A.map((_, j) => choleskySolve(A, Float64Array.from(A, (_, i) => (i === j ? 1 : 0)), L));
}

const frobenius = (A: Mat) => Math.sqrt(A.reduce((s, row) => s + row.reduce((t, v) => t + v * v, 0), 0));

function randomMatrix(rand: () => number, n: number, m: number): Mat {
  return Array.from({ length: n }, () => Float64Array.from({ length: m }, () => 2 * rand() - 1));
}

/** A = BᵀB + shift·I: symmetric positive definite for shift > 0. */
function randomSpd(rand: () => number, n: number, shift: number): Mat {
  const B = randomMatrix(rand, n, n);
  const A = matMul(transpose(B), B);
  for (let i = 0; i < n; i++) A[i][i] += shift;
  return A;
}

const operator = (A: Mat) => (v: Float64Array, out: Float64Array) => out.set(matVec(A, v));

/**
 * Random SPD systems A x = b of sizes 1 to 45 with their dense Cholesky solution and ‖A⁻¹‖_F, each visited
 * without and with the diagonal (Jacobi) preconditioner.
 */
function forRandomSpdSystems(seed: number, visit: (c: { n: number; A: Mat; b: Float64Array; exact: Float64Array; bound: number; precondition?: (r: Float64Array, z: Float64Array) => void }) => void): void {
  const rand = mulberry32(seed);
  for (const n of [1, 3, 8, 20, 45]) {
    const A = randomSpd(rand, n, 0.1);
    const b = Float64Array.from({ length: n }, () => 2 * rand() - 1);
    const exact = choleskySolve(A, b);
    const bound = inverseFrobenius(A);
    const diag = Float64Array.from(A, (row, i) => row[i]);
    for (const precondition of [undefined, (r: Float64Array, z: Float64Array) => z.set(r.map((v, i) => v / diag[i]))]) visit({ n, A, b, exact, bound, precondition });
  }
}

// --- a) conjugate gradient against dense solves ------------------------------------------------

test('CG solves random SPD systems as a dense Cholesky solve does, to its own error bound', () => {
  forRandomSpdSystems(20240611, ({ n, A, b, exact, bound, precondition }) => {
    const x = new Float64Array(n);
    const result = conjugateGradient(operator(A), b, x, { tolerance: 1e-12, precondition });
    const residual = norm(sub(b, matVec(A, x))); // recomputed here, densely
    assert.ok(result.converged, `n = ${n}: not converged (${result.iterations} iterations)`);
    assert.ok(residual <= 1e-12 * norm(b), `n = ${n}: ‖b − Ax‖ = ${residual}, ‖b‖ = ${norm(b)}`);
    assert.ok(Math.abs(result.residualNorm - residual) <= 1e-14 * norm(b), 'the residual CG reports is the true one');
    // x − x_dense = A⁻¹ ((b − A x_dense) − (b − A x))
    const err = norm(sub(x, exact));
    const allowed = bound * (residual + norm(sub(b, matVec(A, exact))));
    assert.ok(err <= allowed, `n = ${n}${precondition ? ', preconditioned' : ''}: ‖x − x_dense‖ = ${err} > ${allowed}`);
  });
});

test('CG with the diagonal preconditioner does not see a diagonal scaling S A S; without it, it does', () => {
  // P = diag(SAS) = S diag(A) S, so P^-½ (SAS) P^-½ = diag(A)^-½ A diag(A)^-½: the preconditioned
  // iteration on SAS y = S b is the one on A x = b (y = S⁻¹ x), whatever S. Unpreconditioned, S spanning
  // six decades makes the condition number ~10¹² larger and CG needs many more iterations.
  const rand = mulberry32(7);
  const n = 30;
  const A = randomSpd(rand, n, 1);
  const b = Float64Array.from({ length: n }, () => 2 * rand() - 1);
  const S = Float64Array.from({ length: n }, (_, i) => 10 ** (-3 + (6 * i) / (n - 1)));
  const SAS = A.map((row, i) => row.map((v, j) => S[i] * v * S[j]));
  const Sb = b.map((v, i) => S[i] * v);
  const jacobi = (M: Mat) => (r: Float64Array, z: Float64Array) => z.set(r.map((v, i) => v / M[i][i]));
  const run = (M: Mat, rhs: Float64Array, pre?: (r: Float64Array, z: Float64Array) => void) => {
    const x = new Float64Array(n);
    return { x, result: conjugateGradient(operator(M), rhs, x, { tolerance: 1e-10, precondition: pre, maxIterations: 50 * n }) };
  };
  const plain = run(A, b, jacobi(A));
  const scaled = run(SAS, Sb, jacobi(SAS));
  const unpreconditioned = run(SAS, Sb);
  assert.ok(plain.result.converged && scaled.result.converged);
  // the same iteration up to rounding: the same count within one or two
  assert.ok(Math.abs(plain.result.iterations - scaled.result.iterations) <= 2, `${plain.result.iterations} vs ${scaled.result.iterations}`);
  assert.ok(unpreconditioned.result.iterations > 2 * scaled.result.iterations, `unpreconditioned ${unpreconditioned.result.iterations}, preconditioned ${scaled.result.iterations}`);
  // and the solutions agree: y = S⁻¹ x
  const y = scaled.x.map((v, i) => v * S[i]);
  assert.ok(norm(sub(y, plain.x)) <= 1e-6 * norm(plain.x), `‖S y − x‖ = ${norm(sub(y, plain.x))}`);
});

test('CG on a singular PSD system: consistent, it finds the minimum-norm solution plus the start\'s null-space part', () => {
  // A = BᵀB with B (m × n, m < n) of full row rank: rank m, null(A) = null(B). For b = A x_t the
  // solutions are x_mn + null(B), x_mn = Bᵀ (B Bᵀ)⁻¹ B x_t the minimum-norm one. CG from x₀ moves only
  // in the Krylov space of A, range(A) = range(Bᵀ), so it ends at x_mn + P_null x₀.
  const rand = mulberry32(99);
  const m = 6, n = 15;
  const B = randomMatrix(rand, m, n);
  const Bt = transpose(B);
  const A = matMul(Bt, B);
  const BBt = matMul(B, Bt);
  const xt = Float64Array.from({ length: n }, () => 2 * rand() - 1);
  const b = matVec(A, xt);
  const minNorm = matVec(Bt, choleskySolve(BBt, matVec(B, xt)));
  // P_range v = Bᵀ (B Bᵀ)⁻¹ B v
  const rangePart = (v: Float64Array) => matVec(Bt, choleskySolve(BBt, matVec(B, v)));
  // (BBᵀ)⁻¹ bounds the error in range(A): for e ∈ range(Bᵀ), ‖e‖ ≤ ‖(BBᵀ)⁻¹‖_F ‖A e‖
  const bound = inverseFrobenius(BBt);
  for (const start of ['zero', 'random'] as const) {
    const x0 = start === 'zero' ? new Float64Array(n) : Float64Array.from({ length: n }, () => 2 * rand() - 1);
    const expected = sub(minNorm, sub(rangePart(x0), x0)); // x_mn + (x₀ − P_range x₀)
    const x = x0.slice();
    const result = conjugateGradient(operator(A), b, x, { tolerance: 1e-12 });
    assert.ok(result.converged, `${start} start: not converged`);
    const residual = norm(sub(b, matVec(A, x)));
    assert.ok(residual <= 1e-12 * norm(b));
    const err = norm(sub(x, expected));
    assert.ok(err <= bound * (residual + norm(sub(b, matVec(A, expected)))) + 1e-13 * norm(expected), `${start} start: ‖x − expected‖ = ${err}`);
    assert.ok(x.every(Number.isFinite));
  }
});

test('CG on an inconsistent singular system reports non-convergence with a finite, true residual, not a blown-up iterate', () => {
  // b with a part in null(A) = range(A)^⊥: no x has ‖b − Ax‖ < ‖P_null b‖, so no tolerance below it can be
  // met. CG breaks down there (dᵀAd → 0 while rᵀz does not): its last iterate runs off along null(A) and,
  // through rounding, to a residual of ~1e10 on this system; cg.ts returns the best iterate instead.
  const rand = mulberry32(5);
  const m = 4, n = 10;
  const B = randomMatrix(rand, m, n);
  const A = matMul(transpose(B), B);
  const b = Float64Array.from({ length: n }, () => 2 * rand() - 1);
  const BBt = matMul(B, transpose(B));
  const nullPart = sub(b, matVec(transpose(B), choleskySolve(BBt, matVec(B, b))));
  const x = new Float64Array(n);
  const result = conjugateGradient(operator(A), b, x, { tolerance: 1e-10, maxIterations: 200 });
  assert.equal(result.converged, false);
  assert.ok(x.every(Number.isFinite) && Number.isFinite(result.residualNorm));
  const residual = norm(sub(b, matVec(A, x)));
  assert.ok(Math.abs(result.residualNorm - residual) <= 1e-12 * norm(b), `reported ${result.residualNorm}, true ${residual}`);
  assert.ok(residual >= norm(nullPart) * (1 - 1e-12), `${residual} < ‖P_null b‖ = ${norm(nullPart)}: impossible`);
  assert.ok(residual <= norm(b), `the returned iterate (‖r‖ = ${residual}) is worse than the start (‖b‖ = ${norm(b)})`);
});

// --- a′) MINRES against dense solves: least squares where there is no solution -------------------

/** diag(d)^p M diag(d)^p */
const scaleBoth = (M: Mat, d: Float64Array, p: number): Mat => M.map((row, i) => row.map((v, j) => v * d[i] ** p * d[j] ** p));

test('MINRES on a singular PSD system with no solution: A x is the dense least-squares projection of b, the residual the least there is', (t) => {
  // A = BᵀB (B: m × n, m < n, full row rank), range(A) = range(Bᵀ). With the preconditioner P (I, or D = diag A)
  // MINRES minimises ‖b − Ax‖_{P⁻¹}; its minimisers all have A x = Π b, Π = Bᵀ (B P⁻¹ Bᵀ)⁻¹ B P⁻¹ the
  // P⁻¹-orthogonal projection onto range(A) (P = I: the pseudo-inverse's A A⁺ b). In the scaled variables
  // Â = P^-½ A P^-½ = B̂ᵀB̂, B̂ = B P^-½, r̂ = P^-½ r: Â r̂ = −Â² P^½ (x − x*), so ‖Â P^½(x − x*)‖ ≤ ‖Â r̂‖ / σ⁺_min(Â),
  // σ⁺_min(Â) = λ_min(B̂B̂ᵀ) ≥ 1/‖(B̂B̂ᵀ)⁻¹‖_F, and ‖A x − Π b‖ ≤ max √P · ‖Â r̂‖ · ‖(B̂B̂ᵀ)⁻¹‖_F: a rigorous bound
  // from x's own normal-equation residual, computed here densely.
  const rand = mulberry32(31);
  for (const [m, n] of [[4, 10], [6, 15], [12, 30]]) {
    const B = randomMatrix(rand, m, n);
    const A = matMul(transpose(B), B);
    const b = Float64Array.from({ length: n }, () => 2 * rand() - 1);
    for (const weighted of [false, true]) {
      const P = Float64Array.from(A, (row, i) => (weighted ? row[i] : 1));
      const precondition = weighted ? (r: Float64Array, z: Float64Array) => z.set(r.map((v, i) => v / P[i])) : undefined;
      const Bh = B.map((row) => row.map((v, j) => v / Math.sqrt(P[j])));
      const BhBht = matMul(Bh, transpose(Bh));
      const BPBt = matMul(B.map((row) => row.map((v, j) => v / P[j])), transpose(B));
      const projected = matVec(transpose(B), choleskySolve(BPBt, matVec(B, b.map((v, i) => v / P[i])))); // Π b
      const wnorm = (r: ArrayLike<number>) => Math.sqrt(Array.from(r).reduce((s, v, i) => s + (v * v) / P[i], 0)); // ‖·‖_{P⁻¹}
      const least = wnorm(sub(b, projected));
      assert.ok(least > 0.1 * wnorm(b), 'b has a part no x can reach');
      for (const start of ['zero', 'random'] as const) {
        const x = start === 'zero' ? new Float64Array(n) : Float64Array.from({ length: n }, () => 2 * rand() - 1);
        const result = minres(operator(A), b, x, { tolerance: 1e-10, lsTolerance: 1e-9, precondition });
        const what = `${m}×${n}, ${weighted ? 'P = diag A' : 'P = I'}, ${start} start`;
        assert.ok(result.converged && result.leastSquares, `${what}: ${JSON.stringify(result)}`);
        assert.ok(x.every(Number.isFinite));
        const r = sub(b, matVec(A, x));
        assert.ok(Math.abs(result.residualNorm - norm(r)) <= 1e-13 * norm(b), `${what}: the residual it reports is the true one`);
        // the least residual there is: not below it (impossible), and on it to rounding
        assert.ok(wnorm(r) >= least * (1 - 1e-13), `${what}: ‖r‖ = ${wnorm(r)} < ${least}`);
        assert.ok(wnorm(r) <= least * (1 + 1e-12), `${what}: ‖r‖ = ${wnorm(r)}, least ${least}`);
        // A x = Π b within the bound from x's own normal-equation residual, and that bound is tight
        const rh = r.map((v, i) => v / Math.sqrt(P[i]));
        const Ahrh = matVec(scaleBoth(A, P, -0.5), rh);
        const bound = Math.sqrt(Math.max(...P)) * norm(Ahrh) * inverseFrobenius(BhBht);
        const err = norm(sub(matVec(A, x), projected));
        assert.ok(err <= bound + 1e-14 * norm(b), `${what}: ‖Ax − Πb‖ = ${err} > ${bound}`);
        assert.ok(bound <= 1e-8 * norm(b), `${what}: the bound ${bound} is too loose to see a wrong answer`);
        if (start === 'zero') t.diagnostic(`${what}: ${result.iterations} iterations (${result.stop}), ‖Ax − Πb‖/‖b‖ = ${(err / norm(b)).toExponential(1)} ≤ ${(bound / norm(b)).toExponential(1)}, ‖r‖ = ${(wnorm(r) / least).toFixed(15)} × least`);
      }
    }
  }
});

test('MINRES on SPD systems: the dense Cholesky solution, as CG finds it', () => {
  forRandomSpdSystems(20240612, ({ n, A, b, exact, bound, precondition }) => {
    const x = new Float64Array(n), y = new Float64Array(n);
    const result = minres(operator(A), b, x, { tolerance: 1e-12, precondition });
    const cg = conjugateGradient(operator(A), b, y, { tolerance: 1e-12, precondition });
    assert.ok(result.converged && !result.leastSquares && cg.converged, `n = ${n}: not converged`);
    const rm = norm(sub(b, matVec(A, x))), rc = norm(sub(b, matVec(A, y))), re = norm(sub(b, matVec(A, exact)));
    assert.ok(rm <= 1e-12 * norm(b), `n = ${n}: ‖b − Ax‖ = ${rm}`);
    // x − y = A⁻¹((b − Ay) − (b − Ax)) for any two
    assert.ok(norm(sub(x, exact)) <= bound * (rm + re), `n = ${n}: ‖x − x_Cholesky‖ = ${norm(sub(x, exact))}`);
    assert.ok(norm(sub(x, y)) <= bound * (rm + rc), `n = ${n}: ‖x_MINRES − x_CG‖ = ${norm(sub(x, y))}`);
  });
});

test('MINRES does not run off along null(A) on an ill-conditioned system with no solution: a finite, true, least-squares answer', () => {
  // A = S BᵀB S with S spanning 1..40 (κ⁺ ~ 1e9) and b not in its range. In exact arithmetic MINRES's last steps
  // go along a null vector of A with length ~1/γ_k, γ_k → 0 (harmless: A x does not change); in f64 an
  // unguarded run reaches ‖x‖ ~ 1e16 and a residual ~1e16 ‖b‖ here. The guard keeps the last iterate before that.
  const rand = mulberry32(1);
  const m = 25, n = 40;
  const B = randomMatrix(rand, m, n);
  const S = Float64Array.from({ length: n }, (_, i) => (1 + i) / 10);
  const A = scaleBoth(matMul(transpose(B), B), S, 1);
  const b = Float64Array.from({ length: n }, () => 2 * rand() - 1);
  // the least residual: b minus its projection onto range(A) = range(S Bᵀ)
  const SBt = transpose(B).map((row, i) => row.map((v) => S[i] * v));
  const least = norm(sub(b, matVec(SBt, choleskySolve(matMul(transpose(SBt), SBt), matVec(transpose(SBt), b)))));
  // nonzero eigenvalues of A = (S Bᵀ)(S Bᵀ)ᵀ are those of B S² Bᵀ: σ⁺_min ≥ 1/‖(B S² Bᵀ)⁻¹‖_F
  const invSigma = inverseFrobenius(matMul(transpose(SBt), SBt));
  for (const lsTolerance of [1e-8, 1e-13]) {
    const x = new Float64Array(n);
    const result = minres(operator(A), b, x, { tolerance: 1e-10, lsTolerance, maxIterations: 2000 });
    assert.ok(x.every(Number.isFinite) && norm(x) < 1e6, `‖x‖ = ${norm(x)}`);
    const rv = sub(b, matVec(A, x)), r = norm(rv);
    assert.ok(Math.abs(result.residualNorm - r) <= 1e-12 * norm(b), 'the residual it reports is the true one');
    // ‖r‖² = least² + ‖P_range r‖², ‖P_range r‖ ≤ ‖A r‖ / σ⁺_min
    const excess = norm(matVec(A, rv)) * invSigma;
    assert.ok(r >= least * (1 - 1e-12) && r * r <= least * least + excess * excess + 1e-12 * norm(b) ** 2, `‖r‖ = ${r}, least ${least}, excess ≤ ${excess}`);
    assert.ok(excess <= 1e-3 * least, `the answer is ${excess / least} of the least residual away from least squares`);
    // converged only where the dense normal-equation residual bears it out (‖Â‖ ≥ the solver's estimate)
    const t = norm(matVec(A, sub(b, matVec(A, x)))) / (result.operatorNorm * r);
    assert.equal(result.converged, t <= lsTolerance, `lsTolerance ${lsTolerance}: converged ${result.converged}, measure ${t}`);
  }
});

// --- b) a chain hanging at rest ------------------------------------------------------------------

function hangingChainWorld(beads: number, radius = 0.05, density = 1000): WorldDesc {
  const bodies: BodyDesc[] = [], constraints: PointConstraintDesc[] = [];
  addChain(bodies, constraints, { start: [0, 2 * radius * beads, 0], direction: [0, -1, 0], beads, radius, density });
  return { gravity: [0, -9.81, 0], bodies, constraints };
}

test('a chain hanging at rest: global-cpu\'s λ of each joint is the weight of the beads below it, and the chain stays put', async (t) => {
  // Units and signs (reference text): V_{n+1} = V* − h M⁻¹ Jᵀ λ (5), so λ is a force (N); J_ℓ's
  // linear blocks are +I₃ on body i_ℓ and −I₃ on body j_ℓ (8), so −λ_ℓ acts on i_ℓ and +λ_ℓ on j_ℓ.
  // The chain (scenes/chain.ts): joint 0 pins bead 0 (i_0) to the world; joint ℓ ≥ 1 joins bead
  // ℓ−1 (i_ℓ, above) to bead ℓ (j_ℓ, below), at the point where they touch.
  // At rest the exact step keeps V_{n+1} = 0: with V* = h g, (5) asks M⁻¹ Jᵀ λ = g on every bead,
  // i.e. the joint forces hold each bead's weight m g. Lever arms are vertical and λ is vertical, so
  // a × λ = 0: no spin. Bead N−1: +λ_{N−1} = −m g; bead ℓ (1 ≤ ℓ < N−1): λ_ℓ − λ_{ℓ+1} = −m g; bead 0:
  // −λ_0 − λ_1 = −m g. Hence λ_ℓ = −(N − ℓ) m g for ℓ ≥ 1 (the bead below is pulled up by the weight
  // of the N − ℓ beads from ℓ down), and λ_0 = +N m g (the pin pulls bead 0 up with the whole weight).
  // J V_{n+1} = 0 and C = 0 make b of (8) consistent with this λ for any h and β; A is nonsingular on
  // a chain (a tree), so it is the one solution, and it is the same every step.
  for (const { beads, substeps, density } of [{ beads: 10, substeps: 1, density: 1000 }, { beads: 40, substeps: 3, density: 7800 }]) {
    const world = hangingChainWorld(beads, 0.05, density);
    const m = massProperties(world.bodies[0]).mass;
    const g = world.gravity;
    const solver = new GlobalCpuSolver(world, { substeps });
    const check = (when: string) => {
      let worst = 0;
      for (let l = 0; l < beads; l++) {
        const k = l === 0 ? beads : -(beads - l);
        const exact = g.map((gi) => k * m * gi);
        const got = solver.multiplier.subarray(3 * l, 3 * l + 3);
        const rel = norm(sub(got, exact)) / norm(exact);
        worst = Math.max(worst, rel);
        assert.ok(rel <= 1e-6, `${when}, ${beads} beads, joint ${l}: λ = ${Array.from(got)}, exact ${exact} (${rel.toExponential(2)} relative)`);
      }
      return worst;
    };
    await solver.step(1);
    const first = check('after the first step');
    await solver.step(59);
    const later = check('after 60 frames');
    const snap = await solver.snapshot();
    let drift = 0, speed = 0, spin = 0;
    for (let i = 0; i < beads; i++) {
      drift = Math.max(drift, norm(sub(snap.position.subarray(3 * i, 3 * i + 3), world.bodies[i].position)));
      speed = Math.max(speed, norm(snap.linearVelocity.subarray(3 * i, 3 * i + 3)));
      spin = Math.max(spin, norm(snap.angularVelocity.subarray(3 * i, 3 * i + 3)));
    }
    // a converged solve leaves ≲ 1e-10 of h g in velocity per step; rounding of x + h v at x ~ 1 m is 1e-16
    assert.ok(drift <= 1e-9, `${beads} beads: a bead moved ${drift} m`);
    assert.ok(speed <= 1e-9 && spin <= 1e-9, `${beads} beads: |v| ${speed} m/s, |ω| ${spin} rad/s`);
    const stats = solver.cgStats();
    assert.equal(stats.unconvergedSteps, 0);
    assert.ok(stats.worstRelativeResidual <= solver.solve.tolerance);
    t.diagnostic(`${beads} beads, ${substeps} substep(s): worst λ error ${first.toExponential(2)} (first step), ${later.toExponential(2)} (frame 60); ` +
      `${stats.directSteps} of ${stats.steps} steps solved directly, ${stats.refinements} refinement steps, CG iterations ${stats.iterations}, drift ${drift.toExponential(1)} m`);
  }
});

// --- c) a random joint graph with a loop against a dense solve -----------------------------------

const crossMat = (u: number[]) => [[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]];
/** R(q) u, q = [x y z w] unit, written out here: u + 2 q_v × (q_v × u + w u) */
function rotate(q: Quat, u: number[]): Vec3 {
  const [x, y, z, w] = q;
  const c1 = [y * u[2] - z * u[1] + w * u[0], z * u[0] - x * u[2] + w * u[1], x * u[1] - y * u[0] + w * u[2]];
  return [u[0] + 2 * (y * c1[2] - z * c1[1]), u[1] + 2 * (z * c1[0] - x * c1[2]), u[2] + 2 * (x * c1[1] - y * c1[0])];
}

function randomWorld(seed: number): { world: WorldDesc; softJoint: number } {
  const rand = mulberry32(seed);
  const r = (lo: number, hi: number) => lo + (hi - lo) * rand();
  const vec = (s: number): Vec3 => [r(-s, s), r(-s, s), r(-s, s)];
  const unitQuat = (): Quat => {
    const q = [r(-1, 1), r(-1, 1), r(-1, 1), r(-1, 1)];
    const n = norm(q);
    return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
  };
  const bodies: BodyDesc[] = [];
  for (let i = 0; i < 6; i++) {
    const radius = r(0.05, 0.2);
    bodies.push({
      shape: { type: 'sphere', radius },
      ...(i === 5 ? { fixed: true } : { density: r(300, 3000) }),
      position: vec(1),
      orientation: unitQuat(),
      linearVelocity: vec(1),
      angularVelocity: vec(3),
    });
  }
  // anchors on the spheres' surfaces, somewhere; the joints start violated (C ≠ 0)
  const anchor = (i: number): Vec3 => {
    const d = vec(1), n = norm(d), rad = (bodies[i].shape as { radius: number }).radius;
    return [(rad * d[0]) / n, (rad * d[1]) / n, (rad * d[2]) / n];
  };
  const joint = (a: number, b: number | null, compliance?: number): PointConstraintDesc => ({
    type: 'point', bodyA: a, bodyB: b, anchorA: anchor(a), anchorB: b === null ? vec(1) : anchor(b), ...(compliance !== undefined ? { compliance } : {}),
  });
  // a loop 0–1–2–3–0, a branch 2–4, 4 to the fixed body 5, a world pin on 0, body 1 also to 3 (a second loop)
  const constraints = [joint(0, 1), joint(1, 2), joint(2, 3), joint(3, 0), joint(2, 4), joint(4, 5), joint(0, null), joint(1, 3, 2e-4)];
  return { world: { gravity: [0, -9.81, 0], bodies, constraints, collisions: false }, softJoint: 7 }; // joints only
}

/** Dense A = J M⁻¹ Jᵀ + α̃ I and b of (8) for the world's first step (from its desc, by the text's equations). */
function denseSystem(world: WorldDesc, h: number, betaPerH: number) {
  const nb = world.bodies.length, nc = world.constraints.length, n = 6 * nb;
  const J = zeros(3 * nc, n);
  const C = new Float64Array(3 * nc);
  const softDiag = new Float64Array(3 * nc);
  const q = (i: number): Quat => world.bodies[i].orientation ?? [0, 0, 0, 1];
  world.constraints.forEach((c, l) => {
    const a = rotate(q(c.bodyA), c.anchorA);
    const xi = world.bodies[c.bodyA].position;
    const b = c.bodyB === null ? [0, 0, 0] : rotate(q(c.bodyB), c.anchorB);
    const xj = c.bodyB === null ? c.anchorB : world.bodies[c.bodyB].position;
    const ca = crossMat(a), cb = crossMat(b);
    for (let row = 0; row < 3; row++) {
      C[3 * l + row] = xi[row] + a[row] - xj[row] - b[row]; // (3)
      const Jr = J[3 * l + row];
      Jr[6 * c.bodyA + row] = 1; // I₃
      for (let k = 0; k < 3; k++) Jr[6 * c.bodyA + 3 + k] = -ca[row][k]; // −[a]×
      if (c.bodyB !== null) {
        Jr[6 * c.bodyB + row] = -1; // −I₃
        for (let k = 0; k < 3; k++) Jr[6 * c.bodyB + 3 + k] = cb[row][k]; // [b]×
      }
      softDiag[3 * l + row] = (c.compliance ?? 0) / (h * h); // α̃ = α/h²
    }
  });
  // M⁻¹: spheres have isotropic inertia, so the world-frame I⁻¹ = R I⁻¹ Rᵀ is I⁻¹ itself
  const Minv = new Float64Array(n), Vstar = new Float64Array(n);
  world.bodies.forEach((body, i) => {
    const mp = massProperties(body);
    for (let k = 0; k < 3; k++) {
      Minv[6 * i + k] = mp.inverseMass;
      Minv[6 * i + 3 + k] = mp.inverseInertiaLocal[4 * k];
      Vstar[6 * i + k] = body.fixed ? 0 : (body.linearVelocity?.[k] ?? 0) + h * world.gravity[k];
      Vstar[6 * i + 3 + k] = body.fixed ? 0 : (body.angularVelocity?.[k] ?? 0);
    }
  });
  // A = J M⁻¹ Jᵀ: A_pq = Σ_k J_pk M⁻¹_k J_qk, summed column by column (k ascending) over the few rows a column holds
  const A = zeros(3 * nc);
  for (let k = 0; k < n; k++) {
    const rows = J.flatMap((row, p) => (row[k] !== 0 ? [p] : []));
    for (const p of rows) for (const q of rows) A[p][q] += J[p][k] * Minv[k] * J[q][k];
  }
  softDiag.forEach((a, p) => (A[p][p] += a));
  const JV = matVec(J, Vstar);
  const bias = (p: number) => (softDiag[p] > 0 ? 1 / h : betaPerH);
  const b = Float64Array.from(JV, (v, p) => (v + bias(p) * C[p]) / h); // (8); soft: h⁻¹(J V* + C/h)
  return { A, b, J, Minv, Vstar, C, softDiag };
}

test('global-cpu\'s λ is the dense solve of A λ = b on a random joint graph with loops, a soft joint and a fixed body', async (t) => {
  for (const seed of [1, 2, 3]) {
    const { world } = randomWorld(seed);
    const options = { dt: 1 / 60, beta: 0.2, warmStart: 0 };
    const h = options.dt;
    const { A, b, J, Minv, Vstar, C, softDiag } = denseSystem(world, h, options.beta / h);
    const exact = choleskySolve(A, b); // A is SPD: J has full row rank here (no self-stress), or Cholesky throws
    const solver = new GlobalCpuSolver(world, options);
    await solver.step(1);
    const lambda = solver.multiplier;
    const residual = norm(sub(b, matVec(A, lambda)));
    assert.ok(residual <= solver.solve.tolerance * norm(b) * (1 + 1e-6), `seed ${seed}: dense ‖b − Aλ‖ = ${residual}, ‖b‖ = ${norm(b)}`);
    const err = norm(sub(lambda, exact));
    const bound = inverseFrobenius(A) * (residual + norm(sub(b, matVec(A, exact))));
    assert.ok(err <= bound, `seed ${seed}: ‖λ − λ_dense‖ = ${err} > ${bound}`);
    // the impulses reach the bodies as (5): V_{n+1} = V* − h M⁻¹ Jᵀ λ, and then (4)+(7): J V_{n+1} = −β C on rigid rows,
    // −C/h + h α̃ λ on the soft one (its implicit spring)
    const snap = await solver.snapshot();
    const Vnext = Vstar.map((v, k) => v - h * Minv[k] * J.reduce((s, row, p) => s + row[k] * lambda[p], 0));
    const got = new Float64Array(Vstar.length);
    for (let i = 0; i < world.bodies.length; i++)
      for (let k = 0; k < 3; k++) {
        got[6 * i + k] = snap.linearVelocity[3 * i + k];
        got[6 * i + 3 + k] = snap.angularVelocity[3 * i + k];
      }
    assert.ok(norm(sub(got, Vnext)) <= 1e-12 * norm(Vnext), `seed ${seed}: V_{n+1} is not V* − h M⁻¹ Jᵀ λ`);
    const JV = matVec(J, Vnext);
    const target = Float64Array.from(C, (c, p) => (softDiag[p] > 0 ? -c / h + h * softDiag[p] * lambda[p] : -(options.beta / h) * c));
    // ‖J V_{n+1} − target‖ = h ‖b − A λ‖ exactly (the two differ by h times the residual)
    assert.ok(norm(sub(JV, target)) <= h * residual * (1 + 1e-6) + 1e-12 * norm(target), `seed ${seed}: J V_{n+1} misses the velocity constraint`);
    assert.equal(solver.cgStats().minresSteps, 0, 'a system with a solution: MINRES never called');
    assert.deepEqual([solver.cgStats().directSteps, solver.cgStats().directFallbackSteps], [1, 0], 'solved by the direct factorisation');
    t.diagnostic(`seed ${seed}: ${world.constraints.length} joints, ‖λ − λ_dense‖/‖λ_dense‖ = ${(err / norm(exact)).toExponential(2)}, direct, ${solver.cgStats().refinements} refinement steps`);
  }
});

// --- c′) redundant joints: no solution, a least-squares step ------------------------------------

/** A = V diag(values) Vᵀ for symmetric A, by cyclic Jacobi rotations; vectors[k] is the k-th eigenvector. */
function symmetricEigen(M: Mat): { values: Float64Array; vectors: Float64Array[] } {
  const n = M.length;
  const a = M.map((row) => Float64Array.from(row));
  const V = zeros(n).map((row, i) => ((row[i] = 1), row)); // V[i][k]: component i of eigenvector k
  const scale = frobenius(M);
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p][q] * a[p][q];
    if (Math.sqrt(off) <= 1e-17 * scale) break;
    for (let p = 0; p < n; p++)
      for (let q = p + 1; q < n; q++) {
        if (a[p][q] === 0) continue;
        // the rotation (c, s) that zeroes a[p][q]: t = tan θ, the smaller root of t² + 2τt − 1 = 0
        const tau = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const tt = (tau >= 0 ? 1 : -1) / (Math.abs(tau) + Math.sqrt(1 + tau * tau));
        const c = 1 / Math.sqrt(1 + tt * tt), s = tt * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = V[k][p], vkq = V[k][q];
          V[k][p] = c * vkp - s * vkq;
          V[k][q] = s * vkp + c * vkq;
        }
      }
  }
  return { values: Float64Array.from(a, (row, i) => row[i]), vectors: transpose(V) };
}

/**
 * The joint-grid scene's net of n × n beads, spread to `spread` × its spacing (every joint starts open, C ≠ 0)
 * and stood upright: gravity in its plane. A planar net of ball joints has more joint rows in its plane (2 per
 * joint) than the in-plane freedoms they fix (3 per bead), so it carries self-stresses, J has a null space
 * in every plane configuration — not only at special ones — and since the motion stays in the plane, it keeps
 * it: A = J M⁻¹ Jᵀ is singular at every step, and with the joints open b has a part outside range(A).
 */
function spreadNet(n: number, spread: number): WorldDesc {
  const net = jointGrid.build({ columns: n, rows: n, radius: 0.05, density: 1000 });
  const bodies = net.bodies.map((b) => ({ ...b, position: [b.position[0] * spread, b.position[1], b.position[2] * spread] as Vec3 }));
  const constraints = net.constraints.map((c) => (c.bodyB === null ? { ...c, anchorB: [...bodies[c.bodyA].position] as Vec3 } : c));
  return { gravity: [0, 0, -9.81], bodies, constraints };
}

test('redundant joints, drifted (a planar net): global-cpu\'s step is a least-squares solve whose velocities are the dense pseudo-inverse solve\'s', async (t) => {
  const world = spreadNet(4, 1.1);
  const solver = new GlobalCpuSolver(world);
  await solver.step(3);
  const before = solver.cgStats();
  const snap = await solver.snapshot();
  const h = solver.options.dt;
  // this step's system, densely, from the state before it (denseSystem: by the text's equations, not the code's)
  const { A, b, J, Minv, Vstar } = denseSystem(worldAt(world, snap), h, solver.options.beta / h);
  await solver.step(1);
  const after = solver.cgStats();
  const lambda = solver.multiplier;
  const n = b.length;
  // the preconditioner's metric: D = blockdiag(A_ℓℓ) = L Lᵀ; Â = L⁻¹ A L⁻ᵀ, b̂ = L⁻¹ b
  const Linv = zeros(n);
  for (let l = 0; l < n / 3; l++) {
    const block = [0, 1, 2].map((i) => Float64Array.from([0, 1, 2], (j) => A[3 * l + i][3 * l + j]));
    const Lb = cholesky(block);
    for (let j = 0; j < 3; j++) {
      // column j of L⁻¹: forward substitution on e_j
      const e = [0, 1, 2].map((i) => (i === j ? 1 : 0));
      const y = [0, 0, 0];
      for (let i = 0; i < 3; i++) y[i] = (e[i] - (i > 0 ? Lb[i][0] * y[0] : 0) - (i > 1 ? Lb[i][1] * y[1] : 0)) / Lb[i][i];
      for (let i = 0; i < 3; i++) Linv[3 * l + i][3 * l + j] = y[i];
    }
  }
  const Ah = matMul(matMul(Linv, A), transpose(Linv));
  const { values, vectors } = symmetricEigen(Ah);
  const top = Math.max(...values);
  const kept = [...values.keys()].filter((k) => values[k] > 1e-10 * top);
  const sigma = Math.min(...kept.map((k) => values[k])); // σ⁺_min(Â)
  const nullity = n - kept.length;
  // the rank is unambiguous: the null eigenvalues are rounding, the least kept one far above it
  assert.ok(nullity >= 1 && values.every((v, k) => kept.includes(k) || Math.abs(v) <= 1e-13 * top), `null eigenvalues ${values.filter((v) => v <= 1e-10 * top)}`);
  assert.ok(sigma >= 1e-5 * top, `σ⁺_min = ${sigma}`);
  const bh = matVec(Linv, b);
  const proj = (v: Float64Array, x: Float64Array) => v.reduce((s, vi, i) => s + vi * x[i], 0);
  const bhRange = kept.reduce((acc, k) => acc.map((s, i) => s + proj(vectors[k], bh) * vectors[k][i]), new Float64Array(n));
  assert.ok(norm(sub(bh, bhRange)) >= 0.1 * norm(bh), 'b has a part outside range(A): the step has no solution');
  // and CG alone cannot solve it
  const cgTry = conjugateGradient(operator(A), b, new Float64Array(n), { tolerance: 1e-10, maxIterations: 10 * n });
  assert.equal(cgTry.converged, false);
  // the step: converged, as least squares, by MINRES
  assert.equal(after.unconvergedSteps, 0, 'every step so far converged');
  assert.equal(after.leastSquaresSteps - before.leastSquaresSteps, 1);
  assert.equal(after.minresSteps - before.minresSteps, 1);
  // its λ satisfies the (weighted) least-squares optimality condition A D⁻¹ (b − Aλ) = 0, i.e. Â r̂ = 0,
  // to the tolerance it claims (‖Â‖ = the largest eigenvalue ≥ the solver's estimate of it)
  const rh = matVec(Linv, sub(b, matVec(A, lambda)));
  const Arh = norm(matVec(Ah, rh));
  assert.ok(Arh <= solver.solve.lsTolerance * top * norm(rh), `‖Â r̂‖ / (‖Â‖ ‖r̂‖) = ${Arh / (top * norm(rh))}`);
  // the pseudo-inverse solve: ŷ* = Â⁺ b̂, λ* = L⁻ᵀ ŷ* (the least-norm one of the least-squares λ)
  const yStar = kept.reduce((acc, k) => acc.map((s, i) => s + (proj(vectors[k], bh) / values[k]) * vectors[k][i]), new Float64Array(n));
  const lambdaStar = matVec(transpose(Linv), yStar);
  // velocities: V = V* − h M⁻¹ Jᵀ λ for both; the solver's from its snapshot
  const impulse = (l: Float64Array) => Vstar.map((v, k) => v - h * Minv[k] * J.reduce((s, row, p) => s + row[k] * l[p], 0));
  const expected = impulse(lambdaStar);
  const s1 = await solver.snapshot();
  const got = new Float64Array(Vstar.length);
  for (let i = 0; i < world.bodies.length; i++)
    for (let k = 0; k < 3; k++) {
      got[6 * i + k] = s1.linearVelocity[3 * i + k];
      got[6 * i + 3 + k] = s1.angularVelocity[3 * i + k];
    }
  // the kinetic metric ‖δV‖_M = (δVᵀ M δV)^½ = h (δλᵀ A δλ)^½ = h ‖Â^½ δŷ‖, δŷ = Lᵀ δλ; Â r̂ = −Â² δŷ gives
  // ‖Â δŷ‖ ≤ ‖Â r̂‖/σ⁺ and ‖Â^½ δŷ‖ ≤ ‖Â r̂‖/σ⁺^{3/2}: a bound from the solver's own λ, plus rounding of V
  const mNorm = (v: Float64Array) => Math.sqrt(v.reduce((s, x, k) => s + (Minv[k] > 0 ? (x * x) / Minv[k] : 0), 0));
  const dV = mNorm(sub(got, expected));
  const dvSolver = mNorm(sub(got, impulse(lambda))); // the solver applied its λ (5), to rounding
  const bound = (h * Arh) / sigma ** 1.5;
  const scale = mNorm(sub(expected, Vstar));
  assert.ok(dvSolver <= 1e-12 * mNorm(got), `V_{n+1} is not V* − h M⁻¹ Jᵀ λ: ${dvSolver}`);
  assert.ok(dV <= bound + 1e-12 * mNorm(got), `‖V − V_pinv‖_M = ${dV} > ${bound}`);
  assert.ok(bound <= 1e-3 * scale, `the bound (${bound / scale} of the impulse) is too loose to see wrong physics`);
  // the same in the constraint space: ‖Â(ŷ − ŷ*)‖ ≤ ‖Â r̂‖ / σ⁺
  const dAy = norm(matVec(Linv, matVec(A, sub(lambda, lambdaStar))));
  assert.ok(dAy <= Arh / sigma + 1e-13 * norm(bh), `‖Â(ŷ − ŷ*)‖ = ${dAy} > ${Arh / sigma}`);
  t.diagnostic(`${n} rows, ${nullity} self-stresses, σ⁺ ${sigma.toExponential(2)}…${top.toFixed(2)}; least residual ${(norm(sub(bh, bhRange)) / norm(bh)).toFixed(3)} ‖b̂‖; ` +
    `MINRES ${after.minresIterations - before.minresIterations} iterations; ‖Â r̂‖/(‖Â‖‖r̂‖) ${(Arh / (top * norm(rh))).toExponential(1)}; ` +
    `‖V − V_pinv‖_M ${(dV / scale).toExponential(1)} of the impulse (bound ${(bound / scale).toExponential(1)}); ‖λ‖ ${norm(lambda).toFixed(0)}, ‖λ*‖ ${norm(lambdaStar).toFixed(0)}`);
  // and every step of a longer run converges as least squares, λ's self-stress part not piling up over the steps
  await solver.step(26);
  const run = solver.cgStats();
  assert.equal(run.unconvergedSteps, 0);
  assert.equal(run.leastSquaresSteps, run.steps);
  assert.ok(norm(solver.multiplier) <= 1e3 * norm(lambdaStar), `‖λ‖ = ${norm(solver.multiplier)} after 30 steps`);
});

// --- d) the λ-error channel of the iterative solvers ----------------------------------------------

function stretchedChain(beads: number, stretch: number): WorldDesc {
  const bodies: BodyDesc[] = [], constraints: PointConstraintDesc[] = [];
  addChain(bodies, constraints, { start: [0, 2, 0], direction: [Math.sin(0.7), -Math.cos(0.7), 0], beads, radius: 0.05, density: 1000, stretch });
  // joints only: the channel compares with global-cpu's λ*, a joint solve (global-cpu refuses contact scenes)
  return { gravity: [0, -9.81, 0], bodies, constraints, collisions: false };
}

test('jacobi-cpu\'s λ-error channel: 1 from a cold start, falling to 0 on a converged run, and it is the distance to global-cpu\'s λ', async (t) => {
  const world = stretchedChain(4, 1.3);
  const iterations = 300;
  const jacobi = new JacobiCpuSolver(world, { iterations, warmStart: 0 });
  const curve = await jacobi.stepRecordingResiduals();
  const error = curve.channels[LAMBDA_ERROR_CHANNEL];
  assert.ok(error, 'jacobi-cpu records the λ-error channel');
  assert.equal(error.length, iterations + 1);
  assert.equal(error[0], 1, 'λ⁰ = 0: ‖0 − λ*‖/‖λ*‖ = 1 exactly');
  // block Jacobi converges here (spectral radius < 1); the 2-norm may rise for a step, the envelope falls
  for (let k = 20; k <= iterations; k += 20) assert.ok(error[k] < error[k - 20] || error[k] < 1e-10, `k = ${k}: ${error[k]} ≥ ${error[k - 20]}`);
  assert.ok(error[iterations] < 1e-9, `a converged Jacobi run leaves ${error[iterations]} of λ*`);
  // the same first step in global-cpu: its λ is λ* (to its tolerance), so the channel's last value is the
  // distance between the two solvers' λ
  const global = new GlobalCpuSolver(world, { warmStart: 0 });
  await global.step(1);
  const distance = norm(sub(jacobi.multiplier, global.multiplier)) / norm(global.multiplier);
  assert.ok(distance < 1e-9, `jacobi after ${iterations} iterations vs global-cpu: ${distance}`);
  // and on a frame where Jacobi has not converged, the channel is that distance too
  const few = new JacobiCpuSolver(world, { iterations: 6, warmStart: 0 });
  const e6 = (await few.stepRecordingResiduals()).channels[LAMBDA_ERROR_CHANNEL];
  const d6 = norm(sub(few.multiplier, global.multiplier)) / norm(global.multiplier);
  assert.ok(Math.abs(e6[6] - d6) <= 1e-8 * d6, `channel ${e6[6]} vs distance to global-cpu's λ ${d6}`);
  t.diagnostic(`λ error after 8, 32, 128, ${iterations} iterations: ${[8, 32, 128, iterations].map((k) => error[k].toExponential(2)).join(', ')}`);
});

test('gs-cpu\'s λ-error channel falls faster than jacobi-cpu\'s on a long chain', async () => {
  // the same first step from rest, cold start; block Gauss-Seidel on a two-coloured chain contracts the
  // error by ρ_J² per sweep against Jacobi's ρ_J (consistently ordered), so after k ≥ 8 sweeps it is behind
  const world = stretchedChain(30, 1);
  const options = { iterations: 64, warmStart: 0 };
  const jacobi = (await new JacobiCpuSolver(world, options).stepRecordingResiduals()).channels[LAMBDA_ERROR_CHANNEL];
  const gs = (await new GaussSeidelCpuSolver(world, options).stepRecordingResiduals()).channels[LAMBDA_ERROR_CHANNEL];
  assert.equal(jacobi[0], 1);
  assert.equal(gs[0], 1);
  for (const k of [8, 16, 32, 64]) assert.ok(gs[k] < jacobi[k], `k = ${k}: Gauss-Seidel ${gs[k]} ≥ Jacobi ${jacobi[k]}`);
});

test('recording residuals and the λ error changes nothing: jacobi-cpu and global-cpu step to the same bits', async () => {
  const { world } = randomWorld(11);
  for (const make of [(w: WorldDesc) => new JacobiCpuSolver(w, { iterations: 5 }), (w: WorldDesc) => new GlobalCpuSolver(w)]) {
    const plain = make(world), recorded = make(world);
    await plain.step(4);
    await recorded.step(2);
    const curve = await recorded.stepRecordingResiduals!();
    await recorded.step(1);
    assert.ok(curve.channels.point.length > 0 && curve.channels[LAMBDA_ERROR_CHANNEL].length === curve.channels.point.length);
    const [a, b] = [await plain.snapshot(), await recorded.snapshot()];
    for (const key of ['position', 'orientation', 'linearVelocity', 'angularVelocity'] as const)
      assert.deepEqual(Array.from(b[key]), Array.from(a[key]), `${plain.id}: ${key}`);
    assert.deepEqual(Array.from(recorded.multiplier), Array.from(plain.multiplier), `${plain.id}: λ`);
  }
});

test('the report draws the λ error (dimensionless) on its own right-hand axis, apart from the residual (m/s²)', async () => {
  const world = stretchedChain(5, 1.2);
  const runs = [];
  for (const solver of [new JacobiCpuSolver(world), new GlobalCpuSolver(world)]) {
    const r = await runSolver(solver, world, { frames: 4, residualFrame: 2 });
    runs.push(runRecord({ scene: 'chain', params: {}, options: { ...defaultSolverOptions } }, r));
  }
  const results = {
    createdAt: '', command: '', frames: 4, scenes: ['chain'], solvers: ['jacobi-cpu', 'global-cpu'], versions: {}, runs,
    machine: { os: '', cpu: '', cores: 1, memoryGiB: 1, node: '', adapters: [] },
  };
  const plot = plotSpecs(results).find((p) => p.kind === 'convergence')!;
  assert.ok(plot.y2Label, 'a right-hand axis for the λ error');
  for (const l of plot.lines) {
    const isError = l.label.includes(LAMBDA_ERROR_CHANNEL);
    assert.equal(l.scale === 'error', isError, `${l.label}: on the ${l.scale === 'error' ? 'right' : 'left'} axis`);
  }
  assert.equal(plot.lines.filter((l) => l.scale === 'error').length, 2, 'both solvers record the λ error');
});

test('global-cpu\'s recorded curve: the true residual of each iterate (direct solve and refinements, or CG), to the tolerance, and λ error to ~0', async () => {
  const world = stretchedChain(12, 1.2);
  for (const method of ['direct', 'cg'] as const) {
    const solver = new GlobalCpuSolver(world, { warmStart: 0 }, { method });
    const curve = await solver.stepRecordingResiduals();
    const r = curve.channels.point, e = curve.channels[LAMBDA_ERROR_CHANNEL];
    const h = solver.options.dt;
    const { A, b } = denseSystem(world, h, solver.options.beta / h);
    const st = solver.cgStats();
    // k = 0 (the start), then: direct — the solve and each refinement step; cg — one point per CG iteration
    const points = method === 'direct' ? 2 + st.refinements : st.iterations + 1;
    assert.equal(r.length, points, `${method}: ${r.length} points`);
    if (method === 'direct') assert.deepEqual([st.directSteps, st.iterations], [1, 0], 'solved by the factor alone');
    assert.ok(Math.abs(r[0] - norm(b)) <= 1e-12 * norm(b), 'cold start: the residual at k = 0 is ‖b‖');
    assert.ok(r[r.length - 1] <= solver.solve.tolerance * norm(b));
    assert.ok(Math.abs(r[r.length - 1] - norm(sub(b, matVec(A, solver.multiplier)))) <= 1e-13 * norm(b), `${method}: the last point is the dense residual of the λ applied`);
    assert.equal(e[0], 1);
    assert.ok(e[e.length - 1] <= 1e-8, `${method}: λ error at the end ${e[e.length - 1]}`);
  }
});

// --- c″) the sparse direct solve: RCM + envelope LDLᵀ (math/envelope-ldlt.ts) -------------------

/** A random connected-or-not block graph on `blocks` nodes: a shuffled chain per component plus `extra` random edges. */
function randomBlockGraph(rand: () => number, blocks: number, components: number, extra: number): [number, number][] {
  const perm = Array.from({ length: blocks }, (_, i) => i);
  for (let i = blocks - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  const edges: [number, number][] = [];
  const size = Math.ceil(blocks / components);
  for (let i = 1; i < blocks; i++) if (i % size !== 0) edges.push([perm[i - 1], perm[i]]);
  for (let e = 0; e < extra; e++) {
    const i = Math.floor(rand() * blocks), j = Math.floor(rand() * blocks);
    if (i !== j && Math.floor(perm.indexOf(i) / size) === Math.floor(perm.indexOf(j) / size)) edges.push([i, j]);
  }
  return edges;
}

function csr(blocks: number, edges: [number, number][]): { adjStart: Int32Array; adj: Int32Array } {
  const lists: number[][] = Array.from({ length: blocks }, () => []);
  for (const [i, j] of edges) {
    lists[i].push(j);
    lists[j].push(i);
  }
  const adjStart = new Int32Array(blocks + 1);
  lists.forEach((l, i) => (adjStart[i + 1] = adjStart[i] + l.length));
  return { adjStart, adj: Int32Array.from(lists.flat()) };
}

/**
 * A symmetric PSD matrix on the block graph: Σ over edges (i, j) of G Gᵀ, G = [P; Q] on blocks i, j (P, Q random
 * 3 × r), plus shift · I: nonzero blocks exactly on the diagonal and the edges. Given to the factor block by block,
 * each edge once in a random orientation.
 */
function randomBlockPsd(rand: () => number, blocks: number, edges: [number, number][], r: number, shift: number) {
  const n = 3 * blocks;
  const A = zeros(n);
  for (const [i, j] of edges) {
    const G = randomMatrix(rand, 6, r);
    const rows = [0, 1, 2].map((a) => 3 * i + a).concat([0, 1, 2].map((a) => 3 * j + a));
    for (let a = 0; a < 6; a++) for (let c = 0; c < 6; c++) A[rows[a]][rows[c]] += G[a].reduce((s, v, k) => s + v * G[c][k], 0);
  }
  for (let i = 0; i < n; i++) A[i][i] += shift;
  const block = (bi: number, bj: number) => Float64Array.from({ length: 9 }, (_, k) => A[3 * bi + Math.floor(k / 3)][3 * bj + (k % 3)]);
  const load = (f: EnvelopeLdlt) => {
    f.clear();
    for (let i = 0; i < blocks; i++) f.addBlock(i, i, block(i, i));
    const seen = new Set<string>();
    for (const [i, j] of edges) {
      const key = i < j ? `${i},${j}` : `${j},${i}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (rand() < 0.5) f.addBlock(i, j, block(i, j));
      else f.addBlock(j, i, block(j, i));
    }
  };
  return { A, load };
}

const u64 = 2 ** -53;
const gamma = (m: number) => (m * u64) / (1 - m * u64);

test('envelope LDLᵀ in RCM order solves random sparse SPD block systems as dense Cholesky and CG do, to the error bound of its residual', () => {
  // Cholesky of SPD A is backward stable: (A + ΔA) x̂ = b, ‖ΔA‖₂ ≤ γ_{3n+1} ‖|L||D||Lᵀ|‖₂ ≤ γ_{3n+1} n ‖A‖₂ (Higham,
  // Accuracy and Stability, thm 10.4 and the remark after it), so ‖b − A x̂‖ ≤ γ_{3n+1} n ‖A‖_F ‖x̂‖; and any two
  // approximate solutions differ by ‖x − y‖ ≤ ‖A⁻¹‖_F (‖b − Ax‖ + ‖b − Ay‖), each residual recomputed densely here.
  const rand = mulberry32(424242);
  for (const [blocks, components, extra, r, shift] of [[1, 1, 0, 3, 0.5], [12, 1, 6, 2, 0.05], [30, 3, 15, 3, 0.01], [40, 4, 0, 1, 0.1]]) {
    const edges = randomBlockGraph(rand, blocks, components, extra);
    const { adjStart, adj } = csr(blocks, edges);
    const f = new EnvelopeLdlt(adjStart, adj);
    const { A, load } = randomBlockPsd(rand, blocks, edges, r, shift);
    const n = 3 * blocks;
    load(f);
    assert.equal(f.factor(), 0, 'SPD: no null pivots');
    const b = Float64Array.from({ length: n }, () => 2 * rand() - 1);
    const x = new Float64Array(n);
    f.solve(b, x);
    const exact = choleskySolve(A, b);
    const y = new Float64Array(n);
    const cg = conjugateGradient(operator(A), b, y, { tolerance: 1e-12 });
    assert.ok(cg.converged);
    const rx = norm(sub(b, matVec(A, x))), re = norm(sub(b, matVec(A, exact))), ry = norm(sub(b, matVec(A, y)));
    const what = `${blocks} blocks, ${edges.length} edges`;
    assert.ok(rx <= gamma(3 * n + 1) * n * frobenius(A) * norm(x), `${what}: ‖b − Ax‖ = ${rx} above the backward-stability bound`);
    const bound = inverseFrobenius(A);
    assert.ok(norm(sub(x, exact)) <= bound * (rx + re), `${what}: ‖x − x_Cholesky‖ = ${norm(sub(x, exact))} > ${bound * (rx + re)}`);
    assert.ok(norm(sub(x, y)) <= bound * (rx + ry), `${what}: ‖x − x_CG‖ = ${norm(sub(x, y))} > ${bound * (rx + ry)}`);
    // refactoring new values on the same pattern (as every step does) gives that matrix's solution
    const again = randomBlockPsd(rand, blocks, edges, r, shift);
    again.load(f);
    f.factor();
    f.solve(b, x);
    assert.ok(norm(sub(b, matVec(again.A, x))) <= gamma(3 * n + 1) * n * frobenius(again.A) * norm(x), `${what}: refactored`);
  }
});

test('envelope LDLᵀ on a singular consistent PSD system: null pivots dropped, and A x = b to 1e-10 ‖b‖', () => {
  // rank-1 coupling per edge on a union of chains: rank A ≤ edges < 3 · blocks, so A is singular, PSD; b = A x_t is in range(A)
  const rand = mulberry32(77);
  for (const [blocks, components, extra] of [[10, 1, 0], [24, 3, 8], [40, 2, 30]]) {
    const edges = randomBlockGraph(rand, blocks, components, extra);
    const { adjStart, adj } = csr(blocks, edges);
    const f = new EnvelopeLdlt(adjStart, adj);
    const { A, load } = randomBlockPsd(rand, blocks, edges, 1, 0);
    const n = 3 * blocks;
    const rank = symmetricEigen(A).values.filter((v) => v > 1e-10 * frobenius(A)).length;
    assert.ok(rank < n, 'singular');
    load(f);
    const nulls = f.factor();
    // each null pivot is one direction of null(A); without pivoting, a pivot can also come out small but genuine,
    // so at most n − rank and at least one here (a pivot of exactly singular A must vanish somewhere)
    assert.ok(nulls >= 1 && nulls <= n - rank, `${nulls} null pivots, nullity ${n - rank}`);
    const xt = Float64Array.from({ length: n }, () => 2 * rand() - 1);
    const b = matVec(A, xt);
    const x = new Float64Array(n);
    f.solve(b, x);
    const res = norm(sub(b, matVec(A, x)));
    assert.ok(res <= 1e-10 * norm(b), `${blocks} blocks: ‖b − Ax‖ = ${(res / norm(b)).toExponential(2)} ‖b‖`);
    assert.ok(x.every(Number.isFinite));
  }
});

/** the joint grid of the built-in scene, n × n beads */
const gridWorld = (n: number): WorldDesc => jointGrid.build({ columns: n, rows: n, radius: 0.05, density: 1000 });

test('joint grid (10 × 10): every step of the direct solve converges where CG, from the same state and warm start, does not; J V = −β C/h to the tolerance', async (t) => {
  // After its first step the nearly flat, nearly taut net has A = J M⁻¹ Jᵀ nearly singular (condition ~1e12) with
  // b ∈ range(A): CG (then MINRES) stops short of 1e-10 ‖b‖ on several of the first steps; Cholesky, backward
  // stable, does not. Each step's system is rebuilt here from the state before it (denseSystem: the text's equations).
  const world = gridWorld(10);
  const solver = new GlobalCpuSolver(world);
  const h = solver.options.dt, beta = solver.options.beta;
  let cgFailed = 0;
  for (let F = 1; F <= 4; F++) {
    const before = await solver.snapshot();
    const lambdaPrev = solver.multiplier.slice();
    const { J, Vstar, C } = denseSystem(worldAt(world, before), h, beta / h);
    await solver.step(1);
    const st = solver.cgStats();
    assert.deepEqual([st.unconvergedSteps, st.directFallbackSteps, st.directSteps, st.iterations], [0, 0, F, 0], `step ${F}: ${JSON.stringify(st)}`);
    // the previous method on this step: a solver at the same state with the same λ to warm-start from
    const cg = new GlobalCpuSolver(worldAt(world, before), {}, { method: 'cg' });
    cg.multiplier.set(lambdaPrev);
    await cg.step(1);
    if (cg.cgStats().unconvergedSteps === 1) cgFailed++;
    // the velocities: J V_{n+1} = −β C/h exactly where b − Aλ = 0; ‖J V_{n+1} + β C/h‖ = h ‖b − Aλ‖ ≤ h · tol · ‖b‖
    const snap = await solver.snapshot();
    const V = new Float64Array(Vstar.length);
    for (let i = 0; i < world.bodies.length; i++)
      for (let k = 0; k < 3; k++) {
        V[6 * i + k] = snap.linearVelocity[3 * i + k];
        V[6 * i + 3 + k] = snap.angularVelocity[3 * i + k];
      }
    const target = Float64Array.from(C, (c) => (-beta / h) * c);
    const bNorm = norm(Float64Array.from(matVec(J, Vstar), (v, p) => (v + (beta / h) * C[p]) / h));
    const miss = norm(sub(matVec(J, V), target));
    assert.ok(miss <= h * solver.solve.tolerance * bNorm * (1 + 1e-6) + 1e-13 * norm(matVec(J, Vstar)), `step ${F}: ‖J V − rhs‖ = ${miss}, allowed ${h * solver.solve.tolerance * bNorm}`);
    if (F === 2) t.diagnostic(`step 2: ‖J V + βC/h‖ = ${miss.toExponential(2)} m/s (h · 1e-10 ‖b‖ = ${(h * 1e-10 * bNorm).toExponential(2)}); CG from the same state: ${cg.cgStats().iterations} iterations, worst residual ${cg.cgStats().worstRelativeResidual.toExponential(1)} ‖b‖`);
  }
  assert.ok(cgFailed >= 1, 'CG left at least one of these steps unconverged (else the test shows nothing)');
  assert.ok(solver.cgStats().nullPivots > 0, 'the first step (a flat net, exactly singular) dropped null pivots');
  assert.equal(solver.cgStats().unconvergedSteps, 0);
});

test('RCM keeps a necklace\'s envelope O(n): profile ≤ 4 n for chains given in shuffled order', async () => {
  // a chain is a path in the joint graph; RCM numbers each component contiguously along its path, so a joint's block
  // row reaches back one block at most: its three scalar rows hold 0 + 1 + 2 in-block entries and 3 × 3 of the block
  // before, 12 per 3 rows. Profile ≤ 4 n, n = 3 N_c the scalar rows, whatever order the joints come in.
  const rand = mulberry32(3);
  const bodies: BodyDesc[] = [], constraints: PointConstraintDesc[] = [];
  for (let c = 0; c < 6; c++) addChain(bodies, constraints, { start: [0.5 * c, 2, 0], direction: [1, 0, 0], beads: 30, radius: 0.05, density: 1000 });
  for (let i = constraints.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [constraints[i], constraints[j]] = [constraints[j], constraints[i]];
  }
  const world: WorldDesc = { gravity: [0, -9.81, 0], bodies, constraints };
  const solver = new GlobalCpuSolver(world);
  await solver.step(1);
  const f = (solver as unknown as { op: { factorization(): EnvelopeLdlt } }).op.factorization();
  assert.equal(f.n, 3 * constraints.length);
  assert.ok(f.profile <= 4 * f.n, `profile ${f.profile} > 4 · ${f.n}`);
  // in the given (shuffled) order the envelope would be ~n²/ (components) instead: the ordering is what does it
  const natural = Array.from({ length: constraints.length }, (_, i) => i);
  let shuffledProfile = 0;
  const { adjStart, adj } = csr(constraints.length, (() => {
    const e: [number, number][] = [];
    const at = new Map<number, number[]>();
    constraints.forEach((c, l) => [c.bodyA, c.bodyB].forEach((b) => b !== null && at.set(b, [...(at.get(b) ?? []), l])));
    for (const ls of at.values()) for (let a = 0; a < ls.length; a++) for (let b = a + 1; b < ls.length; b++) e.push([ls[a], ls[b]]);
    return e;
  })());
  for (const i of natural) {
    let first = i;
    for (let k = adjStart[i]; k < adjStart[i + 1]; k++) first = Math.min(first, adj[k]);
    shuffledProfile += 3 * 3 * (i - first) + 3;
  }
  assert.ok(shuffledProfile > 20 * f.profile, `unordered profile ${shuffledProfile} vs RCM ${f.profile}`);
  assert.equal(solver.cgStats().unconvergedSteps, 0);
});

// --- e) the pendulum ---------------------------------------------------------------------------

test('global-cpu: the small-angle pendulum period is the physical pendulum\'s within 1 %', async (t) => {
  // one joint: the global solve is the same direct 3×3 solve as Jacobi's, so the budget of physics.test.ts
  // holds (amplitude 0.06 %, semi-implicit Euler's phase error ≲ 0.1 %, interpolation O(h³))
  const { measured, physical, periods } = await pendulumPeriod({ angle: 0.1 }, 600, (w) => new GlobalCpuSolver(w));
  const rel = Math.abs(measured / physical - 1);
  t.diagnostic(`T ${measured.toFixed(5)} s over ${periods} periods, physical ${physical.toFixed(5)} s (${(100 * rel).toFixed(3)} %)`);
  assert.ok(rel <= 0.01, `measured ${measured} s, physical ${physical} s`);
});

// --- f) global-gpu: the same CG in f32 on the GPU ----------------------------------------------

const eps32 = 2 ** -24;

/** The world with the bodies' state replaced by a snapshot's (the CPU solver's state before a step). */
function worldAt(world: WorldDesc, snap: Snapshot): WorldDesc {
  const v3 = (a: Float64Array, i: number): Vec3 => [a[3 * i], a[3 * i + 1], a[3 * i + 2]];
  return {
    ...world,
    bodies: world.bodies.map((b, i) => ({
      ...b,
      position: v3(snap.position, i),
      orientation: [snap.orientation[4 * i], snap.orientation[4 * i + 1], snap.orientation[4 * i + 2], snap.orientation[4 * i + 3]] as Quat,
      linearVelocity: v3(snap.linearVelocity, i),
      angularVelocity: v3(snap.angularVelocity, i),
    })),
  };
}

/** λ of a GPU solver, f32 → f64, one per row (3 per point joint, in the CPU's row order) */
async function gpuMultipliers(s: GlobalGpuSolver): Promise<Float64Array> {
  return s.multipliers();
}

/**
 * The f32 residual bound: the GPU stops when its recurrence residual is ≤ τ‖b‖; its true residual
 * (in f64, of the f32 λ it returns) differs from that by the rounding of its A and b — inputs rounded
 * to f32 (positions, arms, masses: a few ε each) and each (A λ)_ℓ a sum of ≲ 30 products (γ₃₀ ≈ 30ε),
 * so ≤ 32 ε (‖b‖ + ‖A‖_F ‖λ‖) — and by the drift of the recurrence from the true residual, ≤ k ε ‖A‖_F ‖λ‖
 * over k iterations (Greenbaum's bound for finite-precision CG), plus λ itself rounded to f32 on output.
 */
function residualBound(A: Mat, b: Float64Array, lambda: Float64Array, iterations: number): number {
  const nb = norm(b), AF = frobenius(A), nl = norm(lambda);
  return defaultGpuTolerance * nb + 32 * eps32 * (nb + AF * nl) + (iterations + 1) * eps32 * AF * nl;
}

test('global-gpu agrees with global-cpu on a small necklace within the bound of its tolerance and f32 rounding', async (t) => {
  const gpu = await acquireGpu();
  const bodies: BodyDesc[] = [], constraints: PointConstraintDesc[] = [];
  for (let c = 0; c < 4; c++) addChain(bodies, constraints, { start: [2.5 * c, 2, 0], direction: [1, 0, 0], beads: 10, radius: 0.05, density: 1000 });
  const world: WorldDesc = { gravity: [0, -9.81, 0], bodies, constraints };
  const options = { dt: 1 / 60, iterations: 64 };
  const h = options.dt;
  const cpu = new GlobalCpuSolver(world, options);
  const g = await GlobalGpuSolver.create(world, options, gpu);
  try {
    const X = Math.max(...bodies.flatMap((b) => b.position.map(Math.abs)), 1);
    let dvSum = 0; // Σ over steps of the velocity bound: errors of successive steps add up (as in jacobi-gpu.test.ts)
    let iterationsBefore = 0;
    for (let F = 1; F <= 10; F++) {
      // this step's system, from the CPU's state before it (the GPU's differs by the bounds so far)
      const { A, b, J, Minv } = denseSystem(worldAt(world, await cpu.snapshot()), h, 0.2 / h);
      await cpu.step(1);
      await g.step(1);
      const stats = await g.readCgStats();
      const used = stats.iterations - iterationsBefore;
      iterationsBefore = stats.iterations;
      const lg = await gpuMultipliers(g), lc = cpu.multiplier;
      const rg = norm(sub(b, matVec(A, lg))), rc = norm(sub(b, matVec(A, lc)));
      const rBound = residualBound(A, b, lg, used);
      assert.ok(rg <= rBound, `frame ${F}: GPU ‖b − Aλ‖ = ${rg.toExponential(2)} > ${rBound.toExponential(2)} (${used} CG iterations)`);
      // λ: x − y = A⁻¹((b − Ay) − (b − Ax))   (this frame's system; at frame 1 both start from the same state)
      const dl = norm(sub(lg, lc));
      const Ainv = inverse(A);
      const lBound = frobenius(Ainv) * (rg + rc);
      if (F === 1) assert.ok(dl <= lBound, `frame 1: ‖λ_gpu − λ_cpu‖ = ${dl.toExponential(2)} > ${lBound.toExponential(2)}`);
      // velocities: δV = −h M⁻¹ Jᵀ δλ = −h G δr, G = M⁻¹ Jᵀ A⁻¹, δr the difference of the two residuals
      // (‖G‖ ~ ‖M^-½‖‖A^-½‖, far below ‖M⁻¹Jᵀ‖‖A⁻¹‖); plus the f32 rounding of V* + ΔV and of the GPU's
      // own J, M⁻¹ in ΔV (a few ε of |V| and of h |M⁻¹Jᵀ| |λ|)
      const MJt = transpose(J).map((col, k) => col.map((v) => Minv[k] * v));
      const G = matMul(MJt, Ainv);
      const a = await cpu.snapshot(), s = await g.snapshot();
      const V = Math.max(...Array.from(a.linearVelocity, Math.abs), ...Array.from(a.angularVelocity, (w) => 0.05 * Math.abs(w)), 1e-3);
      const impulse = Math.max(...MJt.map((row) => h * row.reduce((acc, v, p) => acc + Math.abs(v * lc[p]), 0)));
      dvSum += h * frobenius(G) * (rg + rc) + 4 * eps32 * (V + impulse);
      let dv = 0, dx = 0;
      for (let i = 0; i < a.linearVelocity.length; i++)
        dv = Math.max(dv, Math.abs(a.linearVelocity[i] - s.linearVelocity[i]), 0.05 * Math.abs(a.angularVelocity[i] - s.angularVelocity[i]));
      for (let i = 0; i < a.position.length; i++) dx = Math.max(dx, Math.abs(a.position[i] - s.position[i]));
      // surface speed r·|Δω|, r = 0.05 m: an angular velocity error shows at the joints through the lever arms
      assert.ok(dv <= dvSum, `frame ${F}: |Δv| = ${dv.toExponential(2)} > ${dvSum.toExponential(2)}`);
      const dxBound = F * eps32 * X + F * h * dvSum;
      assert.ok(dx <= dxBound, `frame ${F}: |Δx| = ${dx.toExponential(2)} > ${dxBound.toExponential(2)}`);
      if (F === 1 || F === 10)
        t.diagnostic(`frame ${F}: GPU residual ${(rg / norm(b)).toExponential(2)} of ‖b‖ in ${used} CG iterations (CPU: direct), ‖δλ‖/‖λ‖ ${(dl / norm(lc)).toExponential(2)}, |Δx| ${dx.toExponential(2)} m (bound ${dxBound.toExponential(2)})`);
    }
    // and the motion is real: the chains' tips have fallen by centimetres
    assert.ok((await g.snapshot()).position[3 * 9 + 1] < 2 - 0.01);
    assert.equal(g.cgStats().unconvergedSteps, 0, 'every solve reached the tolerance within 64 iterations');
  } finally {
    g.destroy();
    gpu.device.destroy();
  }
});

test('global-gpu: a chain hanging at rest carries the weight of the beads below each joint, within the f32 bound', async (t) => {
  // the exact λ of the hanging-chain test (b) above; A λ_exact = b exactly, so ‖λ_gpu − λ_exact‖ ≤ ‖A⁻¹‖_F ‖b − A λ_gpu‖
  const gpu = await acquireGpu();
  const beads = 10;
  const world = hangingChainWorld(beads);
  const m = massProperties(world.bodies[0]).mass;
  const h = 1 / 60;
  const { A, b } = denseSystem(world, h, 0.2 / h);
  const g = await GlobalGpuSolver.create(world, {}, gpu);
  try {
    await g.step(1);
    const lg = await gpuMultipliers(g);
    const exact = new Float64Array(3 * beads);
    for (let l = 0; l < beads; l++) exact.set(world.gravity.map((gi) => (l === 0 ? beads : -(beads - l)) * m * gi), 3 * l);
    const rg = norm(sub(b, matVec(A, lg)));
    const rBound = residualBound(A, b, lg, (await g.readCgStats()).iterations);
    assert.ok(rg <= rBound, `‖b − Aλ_gpu‖ = ${rg} > ${rBound}`);
    const err = norm(sub(lg, exact));
    const bound = inverseFrobenius(A) * rg;
    assert.ok(err <= bound, `‖λ_gpu − λ_exact‖ = ${err} > ${bound}`);
    assert.ok(bound < 1e-3 * norm(exact), 'the bound is tight enough to see a wrong tension');
    // 60 frames later the chain still hangs where it was: each step leaves at most h·‖r‖-sized velocities
    await g.step(59);
    const snap = await g.snapshot();
    let drift = 0;
    for (let i = 0; i < beads; i++) drift = Math.max(drift, norm(sub(snap.position.subarray(3 * i, 3 * i + 3), world.bodies[i].position)));
    // f32 positions near 1 m are spaced 6e-8 m; a per-step velocity error ≤ h‖M⁻¹Jᵀ‖ ‖δλ‖ ≪ 1e-6 m/s
    assert.ok(drift <= 1e-5, `a bead moved ${drift} m`);
    t.diagnostic(`‖λ_gpu − λ_exact‖/‖λ_exact‖ = ${(err / norm(exact)).toExponential(2)} (bound ${(bound / norm(exact)).toExponential(2)}), drift after 60 frames ${drift.toExponential(2)} m`);
  } finally {
    g.destroy();
    gpu.device.destroy();
  }
});

test('global-gpu on the random joint graph (loops, a soft joint, a fixed body, turned bodies): λ within the f32 bound of the dense solve', async () => {
  const gpu = await acquireGpu();
  try {
    for (const seed of [1, 2]) {
      const { world } = randomWorld(seed);
      const options = { dt: 1 / 60, beta: 0.2, warmStart: 0 };
      const h = options.dt;
      const { A, b } = denseSystem(world, h, options.beta / h);
      const exact = choleskySolve(A, b);
      const g = await GlobalGpuSolver.create(world, options, gpu);
      await g.step(1);
      const lg = await gpuMultipliers(g);
      const stats = await g.readCgStats();
      g.destroy();
      const rg = norm(sub(b, matVec(A, lg)));
      const rBound = residualBound(A, b, lg, stats.iterations);
      assert.ok(rg <= rBound, `seed ${seed}: ‖b − Aλ_gpu‖ = ${rg} > ${rBound} (${stats.iterations} CG iterations)`);
      const err = norm(sub(lg, exact));
      const bound = inverseFrobenius(A) * (rg + norm(sub(b, matVec(A, exact))));
      assert.ok(err <= bound, `seed ${seed}: ‖λ_gpu − λ_dense‖ = ${err} > ${bound}`);
      assert.ok(bound < 1e-2 * norm(exact), `seed ${seed}: the bound (${bound / norm(exact)} relative) is tight enough to see a wrong term`);
    }
  } finally {
    gpu.device.destroy();
  }
});

test('global-gpu on drifted redundant joints (a planar net, b ∉ range A): a least-squares step, its velocities the dense pseudo-inverse solve\'s, λ not run off', async (t) => {
  // the spread net of the global-cpu test above; its first step, from rest: every joint stretched by 10 %
  const world = spreadNet(4, 1.1);
  const gpu = await acquireGpu();
  const g = await GlobalGpuSolver.create(world, {}, gpu);
  try {
    const h = g.options.dt;
    const { A, b, J, Minv, Vstar } = denseSystem(world, h, g.options.beta / h);
    const n = b.length;
    // Â = L⁻¹ A L⁻ᵀ with D = blockdiag(A_ℓℓ) = L Lᵀ (the GPU's preconditioner), as in the CPU test
    const Linv = zeros(n);
    for (let l = 0; l < n / 3; l++) {
      const Lb = cholesky([0, 1, 2].map((i) => Float64Array.from([0, 1, 2], (j) => A[3 * l + i][3 * l + j])));
      for (let j = 0; j < 3; j++) {
        const y = [0, 0, 0];
        for (let i = 0; i < 3; i++) y[i] = ((i === j ? 1 : 0) - (i > 0 ? Lb[i][0] * y[0] : 0) - (i > 1 ? Lb[i][1] * y[1] : 0)) / Lb[i][i];
        for (let i = 0; i < 3; i++) Linv[3 * l + i][3 * l + j] = y[i];
      }
    }
    const Ah = matMul(matMul(Linv, A), transpose(Linv));
    const { values, vectors } = symmetricEigen(Ah);
    const top = Math.max(...values);
    const kept = [...values.keys()].filter((k) => values[k] > 1e-10 * top);
    const sigma = Math.min(...kept.map((k) => values[k]));
    const bh = matVec(Linv, b);
    const proj = (v: Float64Array, x: Float64Array) => v.reduce((s, vi, i) => s + vi * x[i], 0);
    const bhRange = kept.reduce((acc, k) => acc.map((s, i) => s + proj(vectors[k], bh) * vectors[k][i]), new Float64Array(n));
    const leastResidual = norm(sub(bh, bhRange));
    assert.ok(n - kept.length >= 1 && leastResidual >= 0.1 * norm(bh), 'the step has no solution: b̂ has a part outside range(Â)');
    await g.step(1);
    const stats = await g.readCgStats();
    assert.deepEqual([stats.leastSquaresSteps, stats.unconvergedSteps], [1, 0], 'the solve ended at its least-squares test');
    const lambda = await gpuMultipliers(g);
    // optimality of the f32 λ, in f64: ‖Â r̂‖ ≤ (τ + 16u) ‖Â‖ ‖r̂‖ on the GPU's recurrence residual; the true one differs by
    // δ ≤ (32 + k) u (‖b‖ + ‖A‖_F ‖λ‖) (residualBound above), which Â L⁻¹ maps to at most ‖Â‖ ‖L⁻¹‖_F ‖δ‖
    const rh = matVec(Linv, sub(b, matVec(A, lambda)));
    const Arh = norm(matVec(Ah, rh));
    const delta = (32 + stats.iterations) * eps32 * (norm(b) + frobenius(A) * norm(lambda));
    const lsBound = (gpuLsTolerance + 16 * eps32) * top * (norm(rh) + frobenius(Linv) * delta) + top * frobenius(Linv) * delta;
    assert.ok(Arh <= lsBound, `‖Â r̂‖ / (‖Â‖ ‖r̂‖) = ${Arh / (top * norm(rh))} (bound ${lsBound / (top * norm(rh))})`);
    // the residual left is the least there is: ‖r̂‖ ≥ ‖b̂_N‖, and above it only by the range error ≤ ‖Â r̂‖ / σ⁺
    assert.ok(norm(rh) <= leastResidual + Arh / sigma + 1e-12 * norm(bh), `‖r̂‖ = ${norm(rh)}, least ${leastResidual}`);
    // velocities against the pseudo-inverse λ* = L⁻ᵀ Â⁺ b̂, in the kinetic metric: ‖δV‖_M ≤ h ‖Â r̂‖ / σ⁺^{3/2} (the CPU test's
    // derivation), plus V rounded to f32 (4 u of |V| and of the impulse per component, summed in the metric)
    const yStar = kept.reduce((acc, k) => acc.map((s, i) => s + (proj(vectors[k], bh) / values[k]) * vectors[k][i]), new Float64Array(n));
    const lambdaStar = matVec(transpose(Linv), yStar);
    const impulse = (l: Float64Array) => Vstar.map((v, k) => v - h * Minv[k] * J.reduce((s, row, p) => s + row[k] * l[p], 0));
    const expected = impulse(lambdaStar);
    const snap = await g.snapshot();
    const got = new Float64Array(Vstar.length);
    for (let i = 0; i < world.bodies.length; i++)
      for (let k = 0; k < 3; k++) {
        got[6 * i + k] = snap.linearVelocity[3 * i + k];
        got[6 * i + 3 + k] = snap.angularVelocity[3 * i + k];
      }
    const mNorm = (v: Float64Array) => Math.sqrt(v.reduce((s, x, k) => s + (Minv[k] > 0 ? (x * x) / Minv[k] : 0), 0));
    const massSum = Minv.reduce((s, m) => s + (m > 0 ? 1 / m : 0), 0);
    const rounding = 4 * eps32 * Math.max(...Array.from(expected, Math.abs), ...Array.from(sub(expected, Vstar), Math.abs)) * Math.sqrt(massSum);
    const dV = mNorm(sub(got, expected));
    const bound = (h * Arh) / sigma ** 1.5 + rounding;
    const scale = mNorm(sub(expected, Vstar));
    assert.ok(dV <= bound, `‖V − V_pinv‖_M = ${dV} > ${bound}`);
    assert.ok(bound <= 1e-2 * scale, `the bound (${bound / scale} of the impulse) is too loose to see wrong physics`);
    // λ has not run off along null(A) (CG's λ reached 3000 ‖λ*‖ here): from λ⁰ = 0 the iterates stay in range(D⁻¹A), where λ* is
    // (in exact arithmetic they differ by ‖Lᵀ(λ − λ*)‖ ≤ ‖Â r̂‖ / σ⁺²; f32 adds a null part of rounding size)

    assert.ok(norm(lambda) <= 2 * norm(lambdaStar), `‖λ‖ = ${norm(lambda)}, ‖λ*‖ = ${norm(lambdaStar)}`);
    t.diagnostic(`${n} rows, ${n - kept.length} self-stresses, least residual ${(leastResidual / norm(bh)).toFixed(3)} ‖b̂‖; ${stats.iterations} iterations; ` +
      `‖Â r̂‖/(‖Â‖‖r̂‖) ${(Arh / (top * norm(rh))).toExponential(1)} (bound ${(lsBound / (top * norm(rh))).toExponential(1)}); ‖V − V_pinv‖_M ${(dV / scale).toExponential(1)} of the impulse (bound ${(bound / scale).toExponential(1)}); ` +
      `‖λ‖ ${norm(lambda).toFixed(2)}, ‖λ*‖ ${norm(lambdaStar).toFixed(2)}, ‖λ − λ*‖/‖λ*‖ ${(norm(sub(lambda, lambdaStar)) / norm(lambdaStar)).toExponential(1)}`);
    // and a longer run: while the net stays in its plane A stays singular and b outside its range, so every step ends at
    // the least-squares test or just before it on a null direction — none runs to the cap — and λ's self-stress part
    // does not pile up over the steps (the warm start carries it; each step removes its part along b̂_N). (Later, f32
    // rounding tips the net out of its plane, where it has no stiffness, and the steps become consistent but ill-conditioned.)
    await g.step(11);
    const run = await g.readCgStats();
    const lambdaEnd = norm(await gpuMultipliers(g));
    t.diagnostic(`12 steps: ${run.leastSquaresSteps} least squares, ${run.stoppedSteps} stopped on a null direction or stagnation, ${run.unconvergedSteps - run.stoppedSteps} at the cap; ‖λ‖ ${lambdaEnd.toFixed(2)}`);
    assert.equal(run.leastSquaresSteps + run.stoppedSteps, run.steps);
    assert.equal(run.unconvergedSteps, run.stoppedSteps, 'no step ran to the cap');
    assert.ok(lambdaEnd <= 2 * norm(lambdaStar), `‖λ‖ = ${lambdaEnd} after 12 steps, ‖λ*‖ of the first ${norm(lambdaStar)}`);
  } finally {
    g.destroy();
    gpu.device.destroy();
  }
});
