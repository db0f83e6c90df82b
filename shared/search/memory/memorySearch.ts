import { orderFacetCounts } from '#shared/search/facetOrder';
import type {
  FacetCount,
  SearchFacet,
  SearchFacets,
  SearchFilters,
  SearchQuery,
  SearchResult,
} from '#shared/search/searchIndex';
import {
  VISIBILITY_CODES,
  type DenseValues,
  type MemoryDocuments,
  type PackedVector,
  prefixMayMatch,
  textPrefix,
} from './memoryDocuments';
import { SlotBuffer } from './growableArrays';
import { TopK } from './topK';
import type { TsVectorEntry } from './tsRank';
import { MAX_PACKED_OPERANDS, rankAndPacked, type OperandMasks } from './packedRank';

/**
 * What PostgreSQL says of a text (MemorySearchIndex asks it, against the search projection's own
 * dictionaries), so that the index matches exactly what the statement of searchQuerySql.ts does.
 */
export interface TextAnalysis {
  readonly text: string;
  readonly numericId: number | undefined;
  /** lower(text) and char_length(text). */
  readonly textLower: string;
  readonly textChars: number;
  /** The prefix operands of q.tsq (every lexeme of the text), ANDed; empty: q.tsq is NULL. */
  readonly operands: readonly string[];
  /**
   * The dictionary's name words containing the text (a text of three or more letters and digits);
   * undefined: the name is matched with ILIKE (lower(name) contains lower(text)).
   */
  readonly substringWords: readonly string[] | undefined;
  /** Per word of the text (searchWords), the dictionary's name words like it (`%>`). */
  readonly typoWords: readonly (readonly string[])[];
}

/** PostgreSQL's ranking functions, as the in-memory index computes them (bit for bit). */
export interface Ranking {
  /** What calc_rank_or adds for one vector entry whose positions have these weights, in order. */
  contribution(weights: readonly number[]): number;
  /**
   * ts_rank(vector, the AND of these prefix operands), as float4, given the vector's entries that
   * some operand starts (in the vector's order; ts_rank reads no other) and never none of them.
   */
  rank(entries: readonly TsVectorEntry[], operands: readonly string[]): number;
  /** word_similarity(text, name): the name as lower(name) (pg_trgm lowercases both). */
  similarity(text: string, nameLower: string): number;
}

const PUBLIC = VISIBILITY_CODES.public;
const PRIVATE = VISIBILITY_CODES.private;
const EMBARGOED = VISIBILITY_CODES.embargoed;

/**
 * Scratch space per slot, reused by every search (a search runs to its end without yielding):
 * a stamp array tells which slots the current search has touched, without clearing it.
 */
class Scratch {
  marks = new Int32Array(0);
  counts = new Int32Array(0);
  ranks = new Float64Array(0);
  similarities = new Float64Array(0);
  tiers = new Uint8Array(0);
  /** The lists of slots a search builds, reused by the next. */
  readonly candidates = new SlotBuffer();
  readonly matches = new SlotBuffer();
  readonly wordMatches = new SlotBuffer();
  readonly substrings = new SlotBuffer();
  readonly typos = new SlotBuffer();
  /** The operands each lexeme is started by, for the current search (stamped by lexeme id). */
  lexemeMasks = new Uint32Array(0);
  lexemeStamps = new Int32Array(0);
  private lexemeStamp = 0;
  /** Marks of the name words' lookups (wordSlots, typoSlots), stamped apart from `marks`. */
  wordMarks = new Int32Array(0);
  private stamp = 0;
  private wordStamp = 0;

  /** A fresh stamp for the lexeme masks, sized for `lexemes`. */
  lexemeMaskStamp(lexemes: number): number {
    if (this.lexemeStamps.length < lexemes) {
      const length = Math.max(1024, lexemes * 2);
      this.lexemeMasks = new Uint32Array(length);
      this.lexemeStamps = new Int32Array(length);
      this.lexemeStamp = 0;
    }
    if (this.lexemeStamp + 1 >= 0x7fffffff) {
      this.lexemeStamps.fill(0);
      this.lexemeStamp = 0;
    }
    return ++this.lexemeStamp;
  }

  /** `width` fresh stamp values for the word marks. */
  wordStamps(width: number): number {
    if (this.wordStamp + width + 1 >= 0x7fffffff) {
      this.wordMarks.fill(0);
      this.wordStamp = 0;
    }
    const base = this.wordStamp + 1;
    this.wordStamp += width + 1;
    return base;
  }

  /** `width` fresh stamp values for this search, each above every value the marks hold. */
  begin(slots: number, width: number): number {
    if (this.marks.length < slots) {
      const length = Math.max(slots, this.marks.length * 2);
      this.marks = new Int32Array(length);
      this.counts = new Int32Array(length);
      this.ranks = new Float64Array(length);
      this.similarities = new Float64Array(length);
      this.tiers = new Uint8Array(length);
      this.wordMarks = new Int32Array(length);
      this.stamp = 0;
      this.wordStamp = 0;
    }
    if (this.stamp + width + 1 >= 0x7fffffff) {
      this.marks.fill(0);
      this.counts.fill(0);
      this.stamp = 0;
    }
    const base = this.stamp + 1;
    this.stamp += width + 1;
    return base;
  }
}

const scratch = new Scratch();

/**
 * A text search over the in-memory documents, with exactly the matches, tiers, ranks, order,
 * total and facets of searchSql (searchQuerySql.ts) over the same documents: see that function for
 * what each part means. Orders by date_uploaded or id only (an explicit name or readable_id order
 * sorts by the database's collation: the caller sends those to PostgreSQL).
 */
export function searchMemory(
  documents: MemoryDocuments,
  analysis: TextAnalysis,
  query: SearchQuery,
  nowMicros: number,
  ranking: Ranking,
): SearchResult {
  const filters = query.filters ?? {};
  const candidates = matchCandidates(documents, analysis, ranking);
  const matches = accepted(documents, filters, nowMicros, candidates.slots);
  const facets = query.facets ? countFacets(documents, matches, query.facets) : undefined;
  const ids = query.sort?.length
    ? explicitPage(documents, matches, query)
    : relevancePage(documents, analysis, candidates, matches, query, ranking);
  return { total: matches.length, ids, ...(facets ? { facets } : {}) };
}

interface Candidates {
  /** Every slot matched by some way (duplicates removed); not yet filtered. */
  readonly slots: SlotBuffer;
  /** The stamp marking the full-text matches (q.tsq) in scratch.marks. */
  readonly fullTextStamp: number;
  /** The stamp marking the name's substring matches in scratch.counts. */
  readonly substringStamp: number;
  /** With one operand, the full-text matches' ranks are in scratch.ranks. */
  readonly ranked: boolean;
}

/**
 * The union of every way of matching (`matches` in searchSql): full text, the name's words
 * (substring and typos), the exact readable_id and id. The full-text and substring matches are
 * marked for the tiers.
 */
function matchCandidates(documents: MemoryDocuments, analysis: TextAnalysis, ranking: Ranking): Candidates {
  const operands = analysis.operands;
  const base = scratch.begin(documents.slotCount, operands.length + 3);
  const fullTextStamp = base + Math.max(operands.length, 1) - 1;
  const unionStamp = base + operands.length + 1;
  const substringStamp = base + operands.length + 2;
  const slots = scratch.candidates.clear();
  const { marks, counts } = scratch;
  const ranked = operands.length === 1;
  if (ranked) markOneOperand(documents, operands[0]!, base, ranking, slots, unionStamp);
  else {
    markAllOperands(documents, operands, base);
    // Full-text matches: every slot whose mark reached the last operand's stamp.
    if (operands.length > 0)
      for (const lexeme of documents.lexemesStartingWith(operands[0]!)) {
        const postings = documents.lexemePostings.entries(lexeme);
        for (let i = 0; i < postings.length; i++) {
          const slot = postings.slots[i]!;
          if (marks[slot] === fullTextStamp && counts[slot] !== unionStamp) {
            counts[slot] = unionStamp;
            slots.push(slot);
          }
        }
      }
  }
  const substrings = substringSlots(documents, analysis);
  for (let i = 0; i < substrings.length; i++) {
    const slot = substrings.data[i]!;
    if (counts[slot] !== unionStamp && counts[slot] !== substringStamp) slots.push(slot);
    counts[slot] = substringStamp;
  }
  const others = typoSlots(documents, analysis.typoWords);
  const byReadableId = documents.slotOfReadableId.get(analysis.textLower);
  if (byReadableId !== undefined) others.push(byReadableId);
  const byId = analysis.numericId === undefined ? undefined : documents.slotOf.get(analysis.numericId);
  if (byId !== undefined) others.push(byId);
  for (let i = 0; i < others.length; i++) {
    const slot = others.data[i]!;
    if (counts[slot] !== unionStamp && counts[slot] !== substringStamp) {
      counts[slot] = unionStamp;
      slots.push(slot);
    }
  }
  return { slots, fullTextStamp, substringStamp, ranked };
}

/**
 * One operand: marks its documents (stamp `base`) and sums each one's rank as calc_rank_or does,
 * entry after entry in the vector's order (the lexemes' code point order), each sum stored as float4.
 */
function markOneOperand(
  documents: MemoryDocuments,
  operand: string,
  base: number,
  ranking: Ranking,
  slots: SlotBuffer,
  unionStamp: number,
): void {
  const { marks, ranks, counts } = scratch;
  const contributions = documents.patternWeights.map((weights) => ranking.contribution(weights));
  for (const lexeme of documents.lexemesStartingWith(operand)) {
    const postings = documents.lexemePostings.entries(lexeme);
    for (let i = 0; i < postings.length; i++) {
      const slot = postings.slots[i]!;
      if (marks[slot] !== base) {
        marks[slot] = base;
        ranks[slot] = 0;
        counts[slot] = unionStamp;
        slots.push(slot);
      }
      ranks[slot] = Math.fround(ranks[slot]! + contributions[postings.patterns[i]!]!);
    }
  }
}

/**
 * Several operands (ANDed): operand i advances a slot's mark from base + i - 1 to base + i, so a
 * slot is at base + n - 1 once every operand has found it. Several lexemes of one prefix finding
 * the same slot advance it once.
 */
function markAllOperands(documents: MemoryDocuments, operands: readonly string[], base: number): void {
  const { marks } = scratch;
  operands.forEach((operand, i) => {
    const from = base + i - 1;
    const to = base + i;
    for (const lexeme of documents.lexemesStartingWith(operand)) {
      const postings = documents.lexemePostings.entries(lexeme);
      for (let j = 0; j < postings.length; j++) {
        const slot = postings.slots[j]!;
        if (i === 0 ? marks[slot] !== to : marks[slot] === from) marks[slot] = to;
      }
    }
  });
}

/**
 * The name contains the text: through the dictionary's words (a text of letters and digits occurs
 * in a name exactly when it occurs in one of its words), or lower(name) containing lower(text),
 * looked for among the documents having a word that contains the text's longest run of ASCII letters
 * and digits (such a run cannot span a separator), or among all of them.
 */
function substringSlots(documents: MemoryDocuments, analysis: TextAnalysis): SlotBuffer {
  if (analysis.substringWords)
    return wordSlots(documents, analysis.substringWords, scratch.substrings.clear());
  const text = analysis.textLower;
  const run = longestAsciiRun(text);
  const found = scratch.substrings.clear();
  const check = (slot: number): void => {
    if (documents.nameLower[slot]?.includes(text)) found.push(slot);
  };
  if (run.length === 0) {
    for (let slot = 0; slot < documents.slotCount; slot++) if (documents.columns.alive[slot]) check(slot);
    return found;
  }
  const within = wordSlots(documents, wordsContaining(documents, run), scratch.wordMatches.clear());
  for (let i = 0; i < within.length; i++) check(within.data[i]!);
  return found;
}

function longestAsciiRun(text: string): string {
  let longest = '';
  for (const run of text.match(/[a-z0-9]+/g) ?? []) if (run.length > longest.length) longest = run;
  return longest;
}

/** The name words containing `run` (a word of digits alone cannot contain a run holding a letter). */
function wordsContaining(documents: MemoryDocuments, run: string): string[] {
  return /[a-z]/.test(run)
    ? documents.letterWordsContaining(run)
    : documents.words.filter((word) => word.includes(run));
}

/** The slots of the documents having any of these name words (each once). */
function wordSlots(documents: MemoryDocuments, words: readonly string[], slots: SlotBuffer): SlotBuffer {
  const stamp = scratch.wordStamps(1);
  const marks = scratch.wordMarks;
  for (const word of words) {
    const id = documents.wordId(word);
    if (id === undefined) continue;
    const postings = documents.wordPostings.entries(id);
    for (let i = 0; i < postings.length; i++) {
      const slot = postings.slots[i]!;
      if (marks[slot] !== stamp) {
        marks[slot] = stamp;
        slots.push(slot);
      }
    }
  }
  return slots;
}

/**
 * Documents having, for every word of the text, a name word like it (the typo condition): word i
 * advances a slot's mark from stamp i - 1 to stamp i, so the last word's stamp marks the answer.
 */
function typoSlots(documents: MemoryDocuments, typoWords: readonly (readonly string[])[]): SlotBuffer {
  const slots = scratch.typos.clear();
  if (typoWords.length === 0) return slots;
  const base = scratch.wordStamps(typoWords.length);
  const marks = scratch.wordMarks;
  typoWords.forEach((words, i) => {
    const last = i === typoWords.length - 1;
    for (const word of words) {
      const id = documents.wordId(word);
      if (id === undefined) continue;
      const postings = documents.wordPostings.entries(id);
      for (let j = 0; j < postings.length; j++) {
        const slot = postings.slots[j]!;
        if (i === 0 ? marks[slot] === base + i : marks[slot] !== base + i - 1) continue;
        marks[slot] = base + i;
        if (last) slots.push(slot);
      }
    }
  });
  return slots;
}

/**
 * The candidates that pass the filters and the visibility rule (filterConditions, visibilityRule):
 * one loop over typed columns, each filter a lookup, the rule's slow part (a non-public document)
 * asked only for the few that are not public.
 */
function accepted(
  documents: MemoryDocuments,
  filters: SearchFilters,
  nowMicros: number,
  candidates: SlotBuffer,
): SlotBuffer {
  const c = documents.columns;
  const species = denseMask(documents.speciesValues, filters.speciesIds);
  const atlases = denseMask(documents.atlasValues, filters.atlasIds);
  const categories = denseMask(documents.categoryValues, filters.categoryIds);
  const verified = filters.verified === undefined ? -2 : filters.verified ? 1 : 0;
  const uploader = filters.uploaderId ?? -2;
  const hiddenVisible = visibilityTest(documents, filters, nowMicros);
  const everything = hiddenVisible === undefined;
  const publicToo = filters.visibility === undefined || filters.visibility === 'public';
  const matches = scratch.matches.clear();
  for (let i = 0; i < candidates.length; i++) {
    const slot = candidates.data[i]!;
    if (c.alive[slot] !== 1) continue;
    if (species !== undefined && species[c.species[slot]! + 1] !== 1) continue;
    if (atlases !== undefined && atlases[c.atlases[slot]! + 1] !== 1) continue;
    if (categories !== undefined && categories[c.categories[slot]! + 1] !== 1) continue;
    if (verified !== -2 && c.verified[slot] !== verified) continue;
    if (uploader !== -2 && c.uploaders[slot] !== uploader) continue;
    if (!everything && (c.visibility[slot] === PUBLIC ? !publicToo : !hiddenVisible(slot))) continue;
    matches.push(slot);
  }
  return matches;
}

/** The dense values of `ids` as a mask indexed by dense value + 1 (0: no value, never asked for). */
function denseMask(values: DenseValues, ids: readonly number[] | undefined): Uint8Array | undefined {
  if (ids === undefined) return undefined;
  const mask = new Uint8Array(values.values.length + 1);
  for (const id of ids) {
    const value = values.denseFor(id);
    if (value !== undefined) mask[value + 1] = 1;
  }
  return mask;
}

/**
 * The visibility rule of searchQuerySql.ts (visibilityRule, visibleCondition) for the documents
 * that are not public as stored (accepted() takes the public ones): those the viewer may see (an
 * embargo ended by now, or a reader; all for staff and for a caller without viewer), then the
 * effective `visibility` filter. Undefined when there is no rule (everything is in the answer).
 */
function visibilityTest(
  documents: MemoryDocuments,
  filters: SearchFilters,
  nowMicros: number,
): ((slot: number) => boolean) | undefined {
  const viewer = filters.viewer;
  const unruled = viewer === undefined || viewer.isStaff;
  if (unruled && filters.visibility === undefined) return undefined;
  const c = documents.columns;
  const embargoEnded = (slot: number): boolean =>
    c.visibility[slot] === EMBARGOED && c.embargoes[slot]! <= nowMicros;
  const seen = (slot: number): boolean =>
    unruled ||
    embargoEnded(slot) ||
    (viewer.userId !== null && (documents.readers[slot]?.includes(viewer.userId) ?? false));
  const effective = ((): ((slot: number) => boolean) => {
    switch (filters.visibility) {
      case undefined:
        return () => true;
      case 'public':
        return embargoEnded;
      case 'private':
        return (slot) => c.visibility[slot] === PRIVATE;
      case 'embargoed':
        return (slot) => c.visibility[slot] === EMBARGOED && !(c.embargoes[slot]! <= nowMicros);
    }
  })();
  return (slot) => {
    const visibility = c.visibility[slot];
    // A NULL visibility is neither public nor `<> 'public'`: no condition holds for it.
    if (visibility !== PRIVATE && visibility !== EMBARGOED) return false;
    return seen(slot) && effective(slot);
  };
}

/** Counts per facet value over the matches (NULL values not counted), in the adapters' one order. */
function countFacets(
  documents: MemoryDocuments,
  matches: SlotBuffer,
  facets: readonly SearchFacet[],
): SearchFacets {
  const c = documents.columns;
  const result: Partial<Record<SearchFacet, FacetCount[]>> = {};
  const dense = (column: Int32Array, values: DenseValues): FacetCount[] => {
    const counts = new Int32Array(values.values.length);
    for (let m = 0; m < matches.length; m++) {
      const slot = matches.data[m]!;
      const value = column[slot]!;
      if (value >= 0) counts[value]!++;
    }
    const found: FacetCount[] = [];
    counts.forEach((count, value) => {
      if (count > 0) found.push({ value: values.values[value]!, count });
    });
    return orderFacetCounts(found);
  };
  for (const facet of facets) {
    if (facet === 'species') result.species = dense(c.species, documents.speciesValues);
    else if (facet === 'atlas') result.atlas = dense(c.atlases, documents.atlasValues);
    else if (facet === 'category') result.category = dense(c.categories, documents.categoryValues);
    else {
      let no = 0;
      let yes = 0;
      for (let m = 0; m < matches.length; m++) {
        const slot = matches.data[m]!;
        const value = c.verified[slot];
        if (value === 1) yes++;
        else if (value === 0) no++;
      }
      const found: FacetCount[] = [];
      if (no > 0) found.push({ value: false, count: no });
      if (yes > 0) found.push({ value: true, count: yes });
      result.verified = orderFacetCounts(found);
    }
  }
  return result;
}

/** An explicit order by date_uploaded or id (then the highest id), as explicitOrder does. */
function explicitPage(documents: MemoryDocuments, matches: SlotBuffer, query: SearchQuery): number[] {
  const c = documents.columns;
  const keys = (query.sort ?? []).map((s) => {
    if (s.field !== 'date_uploaded' && s.field !== 'id')
      throw new Error(`the in-memory search index cannot order by ${s.field}`);
    const column = s.field === 'id' ? c.brainIds : c.dates;
    const direction = s.descending ? -1 : 1;
    return (a: number, b: number): number => direction * compareNumbers(column[a]!, column[b]!);
  });
  const compare = (a: number, b: number): number => {
    for (const key of keys) {
      const order = key(a, b);
      if (order !== 0) return order;
    }
    return c.brainIds[b]! - c.brainIds[a]!;
  };
  return pageOf(documents, matches, query, compare);
}

const compareNumbers = (a: number, b: number): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The relevance order: tier, then text rank (full text and prefix tiers), similarity (exact and
 * typo tiers), newest, highest id. Ranks are computed for the matches whose tier reads them.
 */
function relevancePage(
  documents: MemoryDocuments,
  analysis: TextAnalysis,
  candidates: Candidates,
  matches: SlotBuffer,
  query: SearchQuery,
  ranking: Ranking,
): number[] {
  const c = documents.columns;
  const { marks, counts, ranks, similarities, tiers } = scratch;
  const operands = analysis.operands;
  let ranked = 0;
  const prefix = textPrefix(analysis.textLower);
  const masks = operands.length > 1 && !candidates.ranked ? operandMasks(documents, operands) : undefined;
  for (let m = 0; m < matches.length; m++) {
    const slot = matches.data[m]!;
    const fullText = marks[slot] === candidates.fullTextStamp && operands.length > 0;
    const tier = tierOf(
      documents,
      slot,
      analysis,
      fullText || counts[slot] === candidates.substringStamp,
      prefix,
    );
    tiers[slot] = tier;
    if (tier < 3) ranked++;
    ranks[slot] =
      tier === 3 || operands.length === 0
        ? 0
        : candidates.ranked
          ? fullText
            ? ranks[slot]!
            : 0
          : rankOfAll(documents, documents.vectorOf(slot), operands, ranking, masks);
  }
  // Similarity orders the exact tier (a few) and the typo tier, which a page reaches only when the
  // tiers before it are shorter than the page's end.
  const typosReached = ranked < query.offset + query.limit;
  const similarityOf = new Map<string, number>();
  const keyOf = similarityKey(analysis.text);
  for (let m = 0; m < matches.length; m++) {
    const slot = matches.data[m]!;
    const tier = tiers[slot];
    if (tier === 0 || (tier === 3 && typosReached)) {
      const name = keyOf(documents.nameLower[slot]!);
      let similarity = similarityOf.get(name);
      if (similarity === undefined) {
        similarity = ranking.similarity(analysis.text, name);
        similarityOf.set(name, similarity);
      }
      similarities[slot] = similarity;
    } else similarities[slot] = 0;
  }
  const compare = (a: number, b: number): number =>
    tiers[a]! - tiers[b]! ||
    compareNumbers(ranks[b]!, ranks[a]!) ||
    compareNumbers(similarities[b]!, similarities[a]!) ||
    compareNumbers(c.dates[b]!, c.dates[a]!) ||
    c.brainIds[b]! - c.brainIds[a]!;
  return pageOf(documents, matches, query, compare);
}

/**
 * Trailing words of digits alone and separators: pg_trgm makes trigrams of words of ASCII letters
 * and digits only (the database's ctype is C), and word_similarity's scan moves only at a trigram
 * of the text, so trigrams after the last one the text has change nothing. A text without digits
 * has none of a number's trigrams: "visual cortex, mouse 123" and "…, mouse 124" are one computation.
 */
const TRAILING_NUMBERS = /(?:(?<![a-z0-9])[0-9]+|[^a-z0-9]+)+$/;

/** The part of a name word_similarity with this text depends on (the name itself if it has digits). */
function similarityKey(text: string): (nameLower: string) => string {
  return /[0-9]/.test(text) ? (name) => name : (name) => name.replace(TRAILING_NUMBERS, '');
}

/** No pair of positions: calc_rank_and's -1, which calc_rank makes 1e-20 (as float4). */
const NO_PAIR = Math.fround(1e-20);

/**
 * ts_rank of several operands from a packed vector (rankAndPacked, with the operands each lexeme
 * matches marked for this search); a vector none of whose entries match ranks 1e-20, an empty one 0.
 * More operands than a mask holds, or an entry without positions: unpacked and ranked by tsRank.
 */
function rankOfAll(
  documents: MemoryDocuments,
  vector: PackedVector,
  operands: readonly string[],
  ranking: Ranking,
  operandsOf: OperandMasks | undefined,
): number {
  const { arena, start, end } = vector;
  if (start === end) return 0;
  const packed = operandsOf && rankAndPacked(arena, start, end, operands.length, operandsOf);
  if (packed !== undefined) return packed < 0 ? NO_PAIR : packed;
  const entries: TsVectorEntry[] = [];
  for (let i = start; i < end; i += 2 + arena[i + 1]!) {
    const lexeme = documents.lexemes[arena[i]!]!;
    if (operands.some((operand) => lexeme.startsWith(operand)))
      entries.push({ lexeme, positions: Array.from(arena.subarray(i + 2, i + 2 + arena[i + 1]!)) });
  }
  return entries.length === 0 ? NO_PAIR : ranking.rank(entries, operands);
}

/**
 * For this search, the operands that start each lexeme (bit i: operand i), or undefined when there
 * are more operands than a mask holds.
 */
function operandMasks(documents: MemoryDocuments, operands: readonly string[]): OperandMasks | undefined {
  if (operands.length > MAX_PACKED_OPERANDS) return undefined;
  const stamp = scratch.lexemeMaskStamp(documents.lexemes.length);
  const { lexemeMasks: masks, lexemeStamps: stamps } = scratch;
  operands.forEach((operand, i) => {
    for (const id of documents.lexemesStartingWith(operand)) {
      if (stamps[id] !== stamp) {
        stamps[id] = stamp;
        masks[id] = 0;
      }
      masks[id]! |= 1 << i;
    }
  });
  return { masks, stamps, stamp };
}

/**
 * The tier (tierSql): 0 exact id, readable_id or name; 1 a prefix of the name or readable_id;
 * 2 full text or substring; 3 a typo only.
 */
function tierOf(
  documents: MemoryDocuments,
  slot: number,
  analysis: TextAnalysis,
  fullText: boolean,
  prefix: number,
): number {
  const c = documents.columns;
  const text = analysis.textLower;
  if (c.brainIds[slot] === analysis.numericId) return 0;
  const readableMay = prefixMayMatch(c.readablePrefixes[slot]!, prefix, text.length);
  if (readableMay && documents.readableIds[slot] === text) return 0;
  if (
    prefixMayMatch(c.namePrefixes[slot]!, prefix, text.length) &&
    documents.nameLower[slot]!.startsWith(text)
  )
    return c.nameChars[slot] === analysis.textChars ? 0 : 1;
  if (readableMay && documents.readableIds[slot]?.startsWith(text)) return 1;
  return fullText ? 2 : 3;
}

/** The page's brain ids: the first offset + limit in `compare`'s order, without sorting them all. */
function pageOf(
  documents: MemoryDocuments,
  matches: SlotBuffer,
  query: SearchQuery,
  compare: (a: number, b: number) => number,
): number[] {
  const best = TopK.of(matches.data, matches.length, query.offset + query.limit, compare);
  return best.slice(query.offset).map((slot) => documents.columns.brainIds[slot]!);
}
