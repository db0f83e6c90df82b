/**
 * pg_trgm's `word_similarity(query, target)` and `query <% target`, giving exactly what the
 * embedded PostgreSQL 17 returns (contrib/pg_trgm/trgm_op.c: generate_trgm_only, make_trigrams,
 * calc_word_similarity, iterate_word_similarity), so that the in-memory index orders and finds typo
 * matches as the PostgreSQL one does, without a round trip.
 *
 * Words are what pg_trgm's ISWORDCHR keeps: t_isalpha || t_isdigit. Our clusters are created with
 * LC_CTYPE "C" (initdb runs with LC_ALL=C; only the collation provider is builtin), so PostgreSQL 17
 * sets database_ctype_is_c and classifies every character by `isalpha`/`isdigit` of its first byte
 * in the C locale: ASCII letters and digits only. Every other character (é, ß, CJK, emoji, '_', '-')
 * separates words, like a space, and lowercasing (lowerstr_with_len, tolower in C) touches A-Z only.
 * A word's trigrams are then always three ASCII bytes, never the CRC of a multibyte trigram.
 * (PostgreSQL 18 classifies by the database's locale instead: recheck non-ASCII text on upgrade.)
 */

/** pg_trgm.word_similarity_threshold's default: `<%` holds when the float4 similarity is >= it. */
export const WORD_SIMILARITY_THRESHOLD = 0.6;

const SPACE = 0x20;

/** ISWORDCHR under LC_CTYPE C, for one UTF-16 code unit (every non-ASCII one separates words). */
function isWordCode(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** tolower in the C locale. */
function lowerCode(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}

const packTrigram = (a: number, b: number, c: number): number => (a << 16) | (b << 8) | c;

/** A growable list of trigrams, reused from one target to the next. */
class TrigramList {
  data = new Int32Array(64);
  length = 0;

  push(trigram: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = trigram;
  }
}

/**
 * generate_trgm_only: each word, lowercased and padded with two spaces before and one after
 * (LPADDING 2, RPADDING 1), gives its trigrams left to right; a word of n characters gives n + 1.
 * Each trigram is its three bytes packed into one integer. Replaces what `list` held.
 */
function collectTrigrams(text: string, list: TrigramList): void {
  list.length = 0;
  let index = 0;
  while (index < text.length) {
    while (index < text.length && !isWordCode(text.charCodeAt(index))) index++;
    if (index === text.length) break;
    let before = SPACE;
    let last = SPACE;
    for (; index < text.length && isWordCode(text.charCodeAt(index)); index++) {
      const code = lowerCode(text.charCodeAt(index));
      list.push(packTrigram(before, last, code));
      before = last;
      last = code;
    }
    list.push(packTrigram(before, last, SPACE));
  }
}

/** The trigrams of `text` in order, duplicates kept (generate_trgm_only). */
export function textTrigrams(text: string): number[] {
  const list = new TrigramList();
  collectTrigrams(text, list);
  return Array.from(list.data.subarray(0, list.length));
}

/** CALCSML as float4: count / (len1 + len2 - count), the division in single precision. */
function calcSml(count: number, len1: number, len2: number): number {
  // Double rounding is innocuous for a quotient of two float32 integers: fround(a / b) is the
  // correctly rounded float4 quotient.
  return Math.fround(count / (len1 + len2 - count));
}

/**
 * iterate_word_similarity without WORD_SIMILARITY_STRICT. `groups[i]` is the trigram group of the
 * target's i-th trigram: below `ulen1` a trigram of the query ("found"), above it one that is not.
 * `stopAt` is WORD_SIMILARITY_CHECK_ONLY's threshold (Infinity for the full maximum); `lastpos` is
 * scratch of at least `groupCount` entries.
 */
function iterateWordSimilarity(
  groups: Int32Array,
  len2: number,
  ulen1: number,
  lastpos: Int32Array,
  groupCount: number,
  stopAt: number,
): number {
  lastpos.fill(-1, 0, groupCount);
  let ulen2 = 0;
  let count = 0;
  let lower = -1;
  let smlrMax = 0;
  for (let i = 0; i < len2; i++) {
    const group = groups[i]!;
    const found = group < ulen1;
    if (lower >= 0 || found) {
      if (lastpos[group]! < 0) {
        ulen2++;
        if (found) count++;
      }
      lastpos[group] = i;
    }
    if (!found) continue;
    const upper = i;
    if (lower === -1) {
      lower = i;
      ulen2 = 1;
    }
    let smlrCur = calcSml(count, ulen1, ulen2);
    // Also try moving the extent's start right, for a greater similarity.
    let tmpCount = count;
    let tmpUlen2 = ulen2;
    const prevLower = lower;
    for (let tmpLower = lower; tmpLower <= upper; tmpLower++) {
      const smlrTmp = calcSml(tmpCount, ulen1, tmpUlen2);
      if (smlrTmp > smlrCur) {
        smlrCur = smlrTmp;
        ulen2 = tmpUlen2;
        lower = tmpLower;
        count = tmpCount;
      }
      if (smlrCur >= stopAt) break;
      const tmpGroup = groups[tmpLower]!;
      if (lastpos[tmpGroup] === tmpLower) {
        tmpUlen2--;
        if (tmpGroup < ulen1) tmpCount--;
      }
    }
    smlrMax = smlrMax > smlrCur ? smlrMax : smlrCur;
    if (smlrMax >= stopAt) break;
    for (let tmpLower = prevLower; tmpLower < lower; tmpLower++) {
      const tmpGroup = groups[tmpLower]!;
      if (lastpos[tmpGroup] === tmpLower) lastpos[tmpGroup] = -1;
    }
  }
  return smlrMax;
}

/** A query's distinct trigrams, numbered 0..size-1 (calc_word_similarity's "found" groups). */
function queryGroups(query: string): Map<number, number> {
  const groups = new Map<number, number>();
  for (const trigram of textTrigrams(query)) if (!groups.has(trigram)) groups.set(trigram, groups.size);
  return groups;
}

/**
 * calc_word_similarity for one query against many targets: the query's trigrams are made once, and
 * the scratch arrays are reused. `stopAt` as in iterateWordSimilarity.
 */
function prepareCalc(query: string, stopAt: number): (target: string) => number {
  const found = queryGroups(query);
  const ulen1 = found.size;
  const others = new Map<number, number>();
  const trigrams = new TrigramList();
  let groups = new Int32Array(64);
  let lastpos = new Int32Array(128);
  return (target) => {
    if (ulen1 === 0) return 0;
    collectTrigrams(target, trigrams);
    const len2 = trigrams.length;
    if (groups.length < len2) groups = new Int32Array(trigrams.data.length);
    if (lastpos.length < ulen1 + len2) lastpos = new Int32Array(ulen1 + trigrams.data.length);
    others.clear();
    let anyFound = false;
    for (let i = 0; i < len2; i++) {
      const trigram = trigrams.data[i]!;
      let group = found.get(trigram);
      if (group === undefined) {
        group = others.get(trigram);
        if (group === undefined) others.set(trigram, (group = ulen1 + others.size));
      } else anyFound = true;
      groups[i] = group;
    }
    // Without a common trigram no extent starts: iterate_word_similarity returns 0.
    if (!anyFound) return 0;
    return iterateWordSimilarity(groups, len2, ulen1, lastpos, ulen1 + others.size, stopAt);
  };
}

/** `word_similarity(query, target)` for one query and many targets. */
export function prepareWordSimilarity(query: string): (target: string) => number {
  return prepareCalc(query, Infinity);
}

/** `query <% target` (also `target %> query`) for one query and many targets. */
export function prepareIsWordSimilar(query: string): (target: string) => boolean {
  // word_similarity_op: the float4 result (promoted to double) against the double threshold,
  // computed WORD_SIMILARITY_CHECK_ONLY (stops at the first extent that reaches it).
  const calc = prepareCalc(query, WORD_SIMILARITY_THRESHOLD);
  return (target) => calc(target) >= WORD_SIMILARITY_THRESHOLD;
}

/** pg_trgm's `word_similarity(query, target)`: the float4 value, as a number. */
export function wordSimilarity(query: string, target: string): number {
  return prepareWordSimilarity(query)(target);
}

/** pg_trgm's `query <% target` at the default threshold. */
export function isWordSimilar(query: string, target: string): boolean {
  return prepareIsWordSimilar(query)(target);
}

/**
 * Whether this port gives PostgreSQL's answer for `text`: every text PostgreSQL can hold (a NUL it
 * refuses). Lone surrogates reach PostgreSQL as U+FFFD, which separates words like the surrogate
 * does here.
 */
export function wordSimilarityIsExact(text: string): boolean {
  return !text.includes('\0');
}

/**
 * The exact trigram prefilter for `%>` over a dictionary: a word can only be word-similar to a query
 * of `ulen1` distinct trigrams if it holds at least this many of them. Similarity is
 * count / (ulen1 + ulen2 - count) with ulen2 >= count, so it is at most count / ulen1; and a float4
 * quotient of such small integers reaches 0.6 only if the exact one does (no quotient with a
 * denominator below 2^22 lies within float4 rounding of 3/5). So count * 5 >= ulen1 * 3.
 */
export function minSharedTrigrams(ulen1: number): number {
  return Math.max(1, Math.ceil((ulen1 * 3) / 5));
}

/** A dictionary of words answering `SELECT word FROM words WHERE word %> query` from memory. */
export interface WordSimilarityDictionary {
  /** The words `w` with `query <% w`, in the order they were given. */
  similarWords(query: string): string[];
}

/** Builds a trigram posting list per distinct trigram of each word, then counts shared ones. */
export function createWordSimilarityDictionary(words: readonly string[]): WordSimilarityDictionary {
  const postings = new Map<number, number[]>();
  words.forEach((word, slot) => {
    for (const trigram of new Set(textTrigrams(word))) {
      const list = postings.get(trigram);
      if (list) list.push(slot);
      else postings.set(trigram, [slot]);
    }
  });
  const shared = new Int32Array(words.length);
  return {
    similarWords(query) {
      const trigrams = [...queryGroups(query).keys()];
      if (trigrams.length === 0) return [];
      const needed = minSharedTrigrams(trigrams.length);
      const touched: number[] = [];
      for (const trigram of trigrams)
        for (const slot of postings.get(trigram) ?? []) if (shared[slot]!++ === 0) touched.push(slot);
      const similar = prepareIsWordSimilar(query);
      const result = touched
        .filter((slot) => shared[slot]! >= needed && similar(words[slot]!))
        .sort((a, b) => a - b)
        .map((slot) => words[slot]!);
      for (const slot of touched) shared[slot] = 0;
      return result;
    },
  };
}
