/** mulberry32: a small seeded PRNG, uniform in [0, 1), for reproducible random test cases (src/math/random.ts). */
export { mulberry32 } from '../../src/math/random.js';
