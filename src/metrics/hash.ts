/**
 * A short fingerprint of a state: 64 bits over the exact f64 bytes of every
 * position, orientation and velocity of a snapshot. Two runs agree bit for bit
 * exactly when their hashes agree (up to a 2⁻⁶⁴ collision). Not cryptographic;
 * written here rather than taken from node:crypto so the browser can use it too.
 */
import type { Snapshot } from '../model/snapshot.js';

/** FNV-1a over the bytes, twice with different offset bases, as 16 hex digits. */
export function stateHash(s: Snapshot): string {
  let h1 = 0x811c9dc5 | 0;
  let h2 = 0x01000193 ^ 0x5bd1e995;
  for (const a of [s.position, s.orientation, s.linearVelocity, s.angularVelocity]) {
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      h1 = Math.imul(h1 ^ bytes[i], 0x01000193);
      h2 = Math.imul(h2 ^ bytes[i], 0x01000193) ^ (h1 >>> 15);
    }
  }
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}
