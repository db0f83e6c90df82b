/** Small statistics for benchmark rounds. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

const ascending = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);

/** Nearest-rank percentile (p in 0..100) of a non-empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of an empty sample');
  const sorted = ascending(values);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function spread(values: readonly number[]): Spread {
  const sorted = ascending(values);
  if (sorted.length === 0) throw new RangeError('spread of an empty sample');
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}
