/**
 * rows/softness.ts, the one rule every solver takes a row's softness from: its forms agree with each
 * other and with the implicit spring they come from.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { softness, compliancePerStep } from '../src/rows/softness.js';

const close = (a: number, b: number, rel = 1e-12) => assert.ok(Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b)), `${a} vs ${b}`);

test('softness: rigid rows take the Baumgarte rate β/h; massScale + impulseScale = 1 in every form', () => {
  const h = 1 / 240;
  const rigid = softness({ kind: 'rigid', beta: 0.2 }, h, 2);
  assert.deepEqual(rigid, { biasRate: 0.2 / h, gamma: 0, massScale: 1, impulseScale: 0 });
  for (const spec of [
    { kind: 'compliance' as const, compliance: 1e-3, damping: 0 },
    { kind: 'compliance' as const, compliance: 1e-3, damping: 5 },
    { kind: 'frequency' as const, hertz: 30, dampingRatio: 10 },
  ]) {
    const s = softness(spec, h, 0.7);
    close(s.massScale + s.impulseScale, 1);
    // massScale is the exact row solve of (A + γ) Δλ = …: 1/(1 + γ m_eff)
    close(s.massScale, 1 / (1 + s.gamma * 0.7));
  }
});

test('softness: the frequency form is the compliance form with k = m_eff ω², c = 2 m_eff ζ ω (Box2D v3 from Catto 2011)', () => {
  const h = 1 / 60, m = 3.5, f = 12, zeta = 0.7;
  const omega = 2 * Math.PI * f;
  const byFrequency = softness({ kind: 'frequency', hertz: f, dampingRatio: zeta }, h, m);
  const byCompliance = softness({ kind: 'compliance', compliance: 1 / (m * omega * omega), damping: 2 * m * zeta * omega }, h, m);
  close(byFrequency.biasRate, byCompliance.biasRate, 1e-12);
  close(byFrequency.gamma, byCompliance.gamma, 1e-12);
  close(byFrequency.massScale, byCompliance.massScale, 1e-12);
});

test("softness: an undamped compliant row is XPBD's: γ = α̃ = α/h², bias rate 1/h", () => {
  const h = 1 / 600, alpha = 2e-4;
  const s = softness({ kind: 'compliance', compliance: alpha, damping: 0 }, h, 1);
  close(s.gamma, compliancePerStep(alpha, 1 / (h * h)));
  close(s.biasRate, 1 / h);
});

/*
 * The physics behind (S1): a mass m on a spring k (α = 1/k) along one row, stepped by the row update
 * with γ, biasRate from softness and semi-implicit Euler (x += h v after the velocity update), is the
 * implicit spring: it must oscillate at ω = √(k/m) (to the integrator's O((ωh)²) period error) and,
 * being implicit, never gain energy.
 */
test('softness: a mass on a soft row oscillates at √(k/m) and never gains energy', () => {
  const m = 2, k = 800, h = 1 / 600;
  const s = softness({ kind: 'compliance', compliance: 1 / k, damping: 0 }, h, m);
  let x = 0.01, v = 0, lambda = 0; // C = x, J = 1, M⁻¹ = 1/m; λ a force, warm-started
  const E0 = 0.5 * k * x * x;
  const crossings: number[] = [];
  let maxE = E0;
  for (let n = 0; n < 6000; n++) {
    // (S1): Δλ = −h⁻¹ m_eff massScale (J V + biasRate C) − impulseScale λ, with V = v + h λ / m
    const vWarm = v + (h * lambda) / m;
    const dl = (-m * s.massScale * (vWarm + s.biasRate * x)) / h - s.impulseScale * lambda;
    lambda += dl;
    const prev = x;
    v = v + (h * lambda) / m;
    x += h * v;
    if (prev > 0 && x <= 0) crossings.push((n + prev / (prev - x)) * h);
    maxE = Math.max(maxE, 0.5 * m * v * v + 0.5 * k * x * x);
  }
  const T = (crossings[crossings.length - 1] - crossings[0]) / (crossings.length - 1);
  const expected = 2 * Math.PI * Math.sqrt(m / k);
  assert.ok(Math.abs(T / expected - 1) < 0.01, `period ${T} s, √(m/k)·2π = ${expected} s`);
  assert.ok(maxE <= E0 * (1 + 1e-9), `energy rose to ${maxE} from ${E0}`);
});
