/**
 * Softness of a constraint row, as one pure function every solver calls.
 *
 * A row solved on the velocity level with multiplier λ (a force: the step applies the
 * impulse h Jᵀλ) and effective mass m_eff = 1/A, A = J M⁻¹ Jᵀ, updates
 *
 *   Δλ = −h⁻¹ m_eff · massScale · (J V + biasRate · C) − impulseScale · λ        (S1)
 *
 * which is the row of (A + γ) Δλ = −h⁻¹ (J V + biasRate · C) − γ λ, solved exactly:
 *   massScale = 1 / (1 + γ m_eff),  impulseScale = γ m_eff / (1 + γ m_eff) = 1 − massScale.
 * A block solver (several rows at once, e.g. the 3 rows of a point joint) puts γ on the
 * diagonal of its block instead; both come from the same γ and biasRate.
 *
 * Where γ and biasRate come from (Catto, "Soft Constraints", GDC 2011; the Starframe text's
 * β and γ of the soft sequential impulses section): a spring of stiffness k = 1/α and a
 * damper c along the row, integrated implicitly over h, give
 *   γ = 1 / (h (c + h k)) = α / (h (c α + h)),    biasRate = k / (c + h k) = 1 / (c α + h).   (S2)
 * With c = 0: γ = α/h² = α̃ (the compliance XPBD puts in its denominator, Müller et al.
 * 2020 eq. 4) and biasRate = 1/h: the soft joint of jacobi/gs (A + α̃ I) λ = h⁻¹(J V* + C/h).
 *
 * Box2D v3's form sets the spring by a frequency f (Hz) and a damping ratio ζ relative to
 * the row's own effective mass: ω = 2π f, k = m_eff ω², c = 2 m_eff ζ ω, so (S2) becomes
 *   γ = 1 / (h m_eff ω (2ζ + h ω)),   biasRate = ω / (2ζ + h ω),
 *   massScale = h ω (2ζ + h ω) / (1 + h ω (2ζ + h ω)).                              (S3)
 *
 * A rigid row (α = 0, no frequency) has γ = 0, massScale = 1, impulseScale = 0 and the
 * solver's Baumgarte rate biasRate = β/h (the Jacobi text's β C, eq. 8).
 *
 * The WGSL twin is `softnessWgsl` below: the same arithmetic, in f32.
 */

/** How a row's softness is given. */
export type SoftnessSpec =
  | { kind: 'rigid'; /** Baumgarte β in units of 1/h */ beta: number }
  | { kind: 'compliance'; /** α, m/N (or rad/(N·m)) */ compliance: number; /** c, N·s/m (0: none) */ damping: number }
  | { kind: 'frequency'; /** f, Hz */ hertz: number; /** ζ, dimensionless */ dampingRatio: number };

export interface Softness {
  /** 1/s: the rate the position error C is fed back at */
  biasRate: number;
  /** on the row's diagonal of A (units of A, 1/kg or 1/(kg·m²)) */
  gamma: number;
  /** factor on the effective mass in (S1) */
  massScale: number;
  /** factor on the accumulated λ in (S1) */
  impulseScale: number;
}

/**
 * (S1–S3): biasRate, γ, massScale and impulseScale of a row over a step h, for a row whose
 * effective mass is `effectiveMass` = 1/(J M⁻¹ Jᵀ) (needed for massScale, and for γ in the
 * frequency form; Infinity or 0 give the limits). Pure: no state, no allocation besides the result.
 */
export function softness(spec: SoftnessSpec, h: number, effectiveMass: number): Softness {
  let gamma: number;
  let biasRate: number;
  if (spec.kind === 'rigid') {
    return { biasRate: spec.beta / h, gamma: 0, massScale: 1, impulseScale: 0 };
  } else if (spec.kind === 'compliance') {
    const { compliance: a, damping: c } = spec;
    if (a === 0) return { biasRate: 1 / h, gamma: 0, massScale: 1, impulseScale: 0 }; // infinitely stiff spring: full correction
    gamma = a / (h * (c * a + h));
    biasRate = 1 / (c * a + h);
  } else {
    const omega = 2 * Math.PI * spec.hertz;
    const a1 = 2 * spec.dampingRatio + h * omega;
    biasRate = omega / a1;
    const a2 = h * omega * a1;
    // γ m_eff = 1 / a2, so massScale = a2 / (1 + a2) independently of the effective mass
    const massScale = a2 / (1 + a2);
    gamma = effectiveMass > 0 && Number.isFinite(effectiveMass) ? 1 / (effectiveMass * a2) : 0;
    return { biasRate, gamma, massScale, impulseScale: 1 - massScale };
  }
  const gm = effectiveMass > 0 && Number.isFinite(effectiveMass) ? gamma * effectiveMass : 0;
  const massScale = 1 / (1 + gm);
  return { biasRate, gamma, massScale, impulseScale: gm * massScale };
}

/**
 * XPBD's time-scaled compliance α̃ = α / h² (Müller et al. 2020, eq. 4; h the substep), from
 * invH2 = 1/h² (computed once per step by the caller).
 */
export function compliancePerStep(compliance: number, invH2: number): number {
  return compliance * invH2;
}

/**
 * The WGSL twin of `softness` for the compliance form, and of `compliancePerStep` (the form the GPU solvers' joints use):
 * returns vec2(biasRate, γ) for compliance α, damping c and step h; α = 0 gives the rigid
 * (biasRate = baumgarte, γ = 0) row. massScale and impulseScale follow from γ and the row's
 * effective mass as in (S1).
 */
export const softnessWgsl = /* wgsl */ `
// (S2) of rows/softness.ts: vec2(biasRate, gamma) of a row; alpha = 0 is rigid (Baumgarte rate).
fn row_softness(alpha: f32, damping: f32, h: f32, baumgarte: f32) -> vec2<f32> {
  if (alpha <= 0.0) { return vec2<f32>(baumgarte, 0.0); }
  let denom = damping * alpha + h;
  return vec2<f32>(1.0 / denom, alpha / (h * denom));
}

// XPBD's α̃ = α / h² (Müller et al. 2020, eq. 4), from 1/h² (compliancePerStep)
fn compliance_per_step(alpha: f32, inv_h2: f32) -> f32 {
  return alpha * inv_h2;
}
`;
