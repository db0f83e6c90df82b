import { comparePositions, type GlobalPosition } from '#shared/eventStore/eventStore';

/**
 * Keeps the latest write per brain of one batch: a backend applies a batch as one statement or
 * request, where two writes to the same document would race (or, in PostgreSQL, fail).
 */
export function latestWrites<T extends { readonly position: GlobalPosition }>(
  entries: readonly T[],
  brainIdOf: (entry: T) => number,
): T[] {
  const latest = new Map<number, T>();
  for (const entry of entries) {
    const kept = latest.get(brainIdOf(entry));
    if (!kept || comparePositions(kept.position, entry.position) < 0) latest.set(brainIdOf(entry), entry);
  }
  return [...latest.values()];
}
