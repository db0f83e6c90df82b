/**
 * mulberry32: a deterministic generator of numbers in [0, 1), so a failing case (or a bench's
 * drawn texts) can be reproduced from its seed. Exact 32-bit arithmetic: a long period, where an
 * LCG in doubles loses bits and cycles.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
