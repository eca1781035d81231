/**
 * A 32-bit hash of an ordered pair of u32 indices, the one the CPU manifold store (collision/manifolds.ts)
 * and the GPU's pair table and colouring priorities (gpu/pair-table.ts, gpu/colouring.ts) share, so the
 * GPU can be tested against the CPU bit for bit. Multiplicative, with Knuth's and MurmurHash3's odd
 * constants.
 */
export function hashPair(a: number, b: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) >>> 0;
}
