/** What both adapters need to know about the text of a query. */
export interface SearchText {
  /** Trimmed; never empty. */
  readonly text: string;
  /** The text as a brain id, when it is one (digits only, within PostgreSQL's integer range). */
  readonly numericId: number | undefined;
}

const MAX_ID = 2_147_483_647;

/** undefined for a missing or blank text: such a query lists by recency instead of relevance. */
export function parseSearchText(raw: string | undefined): SearchText | undefined {
  const text = raw?.trim() ?? '';
  if (text === '') return undefined;
  const numericId = /^\d{1,10}$/.test(text) && Number(text) <= MAX_ID ? Number(text) : undefined;
  return { text, numericId };
}

/** The text as a literal inside a LIKE / ILIKE pattern (backslash is PostgreSQL's default escape). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** At most this many words take part in full-text matching: a pasted paragraph stays a cheap query. */
export const MAX_SEARCH_WORDS = 10;

/** Lowercased words (letters and digits), as Elasticsearch's standard tokenizer splits them. */
export function searchWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_SEARCH_WORDS);
}
