import { positionOf, weightOf, wordDistance } from './tsRank';

/**
 * calc_rank_and (tsRank.ts rankAnd) over a packed vector (memoryDocuments.ts PackedVector), for the
 * many matches of a text of several words: the same arithmetic and order, without unpacking each
 * document's entries into objects. tsRank.int.test.ts holds rankAnd to PostgreSQL; the in-memory
 * index's equivalence test holds this to the PostgreSQL statement.
 */

const WEIGHTS: readonly number[] = [0.1, 0.2, 0.4, 1.0].map(Math.fround);
/** word_distance of every distance it does not cut to 1e-30 (above 100). */
const DISTANCE_WEIGHTS: readonly number[] = Array.from({ length: 101 }, (_, d) => wordDistance(d));
const FAR = wordDistance(101);

/** The most operands a mask of one lexeme can tell apart. */
export const MAX_PACKED_OPERANDS = 30;

const lastFrom = new Int32Array(MAX_PACKED_OPERANDS);
const lastTo = new Int32Array(MAX_PACKED_OPERANDS);

/**
 * Which operands start each lexeme, for one search: `masks[id]` (bit i: operand i) where
 * `stamps[id] === stamp`, none elsewhere (arrays reused from search to search).
 */
export interface OperandMasks {
  readonly masks: Uint32Array;
  readonly stamps: Int32Array;
  readonly stamp: number;
}

/**
 * calc_rank_and of the vector in `arena[start, end)` for operands 0..n-1 in PostgreSQL's order
 * (sorted, distinct). -1 when no pair counts (calc_rank makes it 1e-20); undefined for an entry
 * without positions, which the caller ranks with tsRank itself (search_vector has none).
 */
export function rankAndPacked(
  arena: Int32Array,
  start: number,
  end: number,
  operands: number,
  { masks, stamps, stamp }: OperandMasks,
): number | undefined {
  lastFrom.fill(-1, 0, operands);
  let res = Math.fround(-1);
  for (let i = 0; i < operands; i++) {
    const bit = 1 << i;
    for (let e = start; e < end; e += 2 + arena[e + 1]!) {
      const id = arena[e]!;
      if (stamps[id] !== stamp || (masks[id]! & bit) === 0) continue;
      const count = arena[e + 1]!;
      if (count === 0) return undefined;
      const from = e + 2;
      const to = from + count;
      lastFrom[i] = from;
      lastTo[i] = to;
      for (let k = 0; k < i; k++)
        if (lastFrom[k]! >= 0) res = pairs(res, arena, from, to, lastFrom[k]!, lastTo[k]!);
    }
  }
  return res;
}

/** Every pair of positions of two entries (calc_rank_and's inner loops; no entry is positionless here). */
function pairs(
  start: number,
  arena: Int32Array,
  from: number,
  to: number,
  theirFrom: number,
  theirTo: number,
): number {
  let res = start;
  for (let l = from; l < to; l++) {
    const mine = arena[l]!;
    for (let p = theirFrom; p < theirTo; p++) {
      const theirs = arena[p]!;
      const distance = Math.abs(positionOf(mine) - positionOf(theirs));
      if (distance === 0) continue;
      const product = Math.fround(
        Math.fround(WEIGHTS[weightOf(mine)]! * WEIGHTS[weightOf(theirs)]!) *
          (distance > 100 ? FAR : DISTANCE_WEIGHTS[distance]!),
      );
      const weight = Math.fround(Math.sqrt(product));
      res = res < 0 ? weight : Math.fround(1.0 - (1.0 - res) * (1.0 - weight));
    }
  }
  return res;
}
