import type { FacetCount } from './searchIndex';

/** At most this many values per facet: the most frequent ones. */
export const FACET_VALUE_LIMIT = 200;

function compareValues(a: FacetCount['value'], b: FacetCount['value']): number {
  return Number(a) - Number(b);
}

/**
 * One order for every adapter (largest count first, then smallest value, false before true), so a
 * caller (and the contract suite) sees the same list whichever backend answered.
 */
export function orderFacetCounts(counts: readonly FacetCount[]): FacetCount[] {
  return [...counts]
    .sort((a, b) => b.count - a.count || compareValues(a.value, b.value))
    .slice(0, FACET_VALUE_LIMIT);
}
