import type { SearchQuery } from './searchIndex';

/** A page that no backend could answer is a programming error, not an empty result. */
export function assertValidPage({ limit, offset }: Pick<SearchQuery, 'limit' | 'offset'>): void {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`invalid search limit: ${limit}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`invalid search offset: ${offset}`);
}
