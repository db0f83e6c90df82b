import type { Visibility } from '#shared/domain/brains/visibility';
import { ensureCapacity, PostingLists } from './growableArrays';
import { compareLexemes } from './tsRank';
import { minSharedTrigrams, prepareIsWordSimilar, textTrigrams } from './wordSimilarity';

/**
 * One live document of the search projection as the in-memory index keeps it: what a search
 * filters, counts, matches and ranks by, as PostgreSQL computed it (lowercased name, the name's
 * words, the full-text vector), so the index matches exactly what the PostgreSQL statement does.
 */
export interface MemoryDocument {
  readonly brainId: number;
  readonly verified: boolean | null;
  readonly speciesId: number | null;
  readonly atlasId: number | null;
  readonly categoryId: number | null;
  readonly uploaderId: number | null;
  /** Microseconds since the epoch (timestamptz's precision); null sorts as PostgreSQL's NULL: above all. */
  readonly dateMicros: number | null;
  readonly embargoMicros: number | null;
  readonly visibility: Visibility | null;
  readonly readableId: string | null;
  /** lower(name), by PostgreSQL. */
  readonly nameLower: string;
  /** char_length(name). */
  readonly nameChars: number;
  /** name_words (NAME_WORDS_SQL). */
  readonly nameWords: readonly string[];
  /** The full-text vector as PostgreSQL writes it (search_vector::text). */
  readonly vectorText: string;
  readonly readers: readonly number[];
}

/**
 * A document's vector, packed: per entry in the vector's order, its lexeme's id, its number of
 * positions, then the positions as PostgreSQL packs them (WordEntryPos: weight << 14 | position).
 * Every document's lies in one shared array (MemoryDocuments.arena, from `start` to `end`) rather
 * than in objects per entry or a typed array per document: a million documents fit in memory.
 */
export interface PackedVector {
  readonly arena: Int32Array;
  readonly start: number;
  readonly end: number;
}

const WEIGHT_OF_LETTER: Readonly<Record<string, number>> = { A: 3, B: 2, C: 1, D: 0 };

/** A quoted lexeme of tsvectorout at `start` (quotes doubled, backslashes doubled) and where it ends. */
function quoted(text: string, start: number): [lexeme: string, end: number] {
  if (text[start] !== "'")
    throw new Error(`unexpected tsvector text at ${start}: ${text.slice(start, start + 20)}`);
  const close = text.indexOf("'", start + 1);
  const plain = text.slice(start + 1, close);
  if (text[close + 1] !== "'" && !plain.includes('\\')) return [plain, close + 1];
  let lexeme = '';
  let i = start + 1;
  for (;;) {
    const c = text[i];
    if (c === undefined) throw new Error('unterminated lexeme in tsvector text');
    if (c === '\\') {
      lexeme += text[i + 1] ?? '';
      i += 2;
    } else if (c === "'") {
      if (text[i + 1] !== "'") return [lexeme, i + 1];
      lexeme += "'";
      i += 2;
    } else {
      lexeme += c;
      i++;
    }
  }
}

/**
 * A string's first two UTF-16 units as one number (0 past its end: PostgreSQL text holds no NUL),
 * for prefix tests that rarely need the string (prefixMayMatch).
 */
export const textPrefix = (text: string): number =>
  ((text.length > 0 ? text.charCodeAt(0) : 0) << 16) | (text.length > 1 ? text.charCodeAt(1) : 0);

/**
 * Whether a string whose textPrefix is `prefix` may start with a text of `length` units whose
 * textPrefix is `textPrefixValue` (false: it certainly does not).
 */
export const prefixMayMatch = (prefix: number, textPrefixValue: number, length: number): boolean =>
  length >= 2 ? prefix === textPrefixValue : prefix >>> 16 === textPrefixValue >>> 16;

export const VISIBILITY_CODES: Readonly<Record<Visibility, number>> = { public: 0, private: 1, embargoed: 2 };
const NO_VISIBILITY = 3;

/** A facet column's values interned as small dense numbers, for counting with an array. */
export class DenseValues {
  private readonly denseOf = new Map<number, number>();
  readonly values: number[] = [];

  intern(value: number | null): number {
    if (value === null) return -1;
    let dense = this.denseOf.get(value);
    if (dense === undefined) {
      dense = this.values.length;
      this.values.push(value);
      this.denseOf.set(value, dense);
    }
    return dense;
  }

  denseFor(value: number): number | undefined {
    return this.denseOf.get(value);
  }
}

/** Growable columns of the documents, one element per slot. */
class Columns {
  brainIds = new Int32Array(16);
  alive = new Uint8Array(16);
  /** -1 null, 0 false, 1 true. */
  verified = new Int8Array(16);
  species = new Int32Array(16);
  atlases = new Int32Array(16);
  categories = new Int32Array(16);
  uploaders = new Int32Array(16);
  dates = new Float64Array(16);
  embargoes = new Float64Array(16);
  visibility = new Uint8Array(16);
  nameChars = new Int32Array(16);
  /**
   * The first UTF-16 units of lower(name) and of readable_id (textPrefix): a tier's prefix test
   * compares these numbers first and reads the string only when they agree, which is rare; the
   * strings themselves lie all over the heap, one cache miss each.
   */
  namePrefixes = new Int32Array(16);
  readablePrefixes = new Int32Array(16);
  /** Where each slot's packed vector lies in the arena. */
  vectorStarts = new Int32Array(16);
  vectorEnds = new Int32Array(16);

  grow(needed: number): void {
    this.brainIds = ensureCapacity(this.brainIds, needed, Int32Array);
    this.alive = ensureCapacity(this.alive, needed, Uint8Array);
    this.verified = ensureCapacity(this.verified, needed, Int8Array);
    this.species = ensureCapacity(this.species, needed, Int32Array);
    this.atlases = ensureCapacity(this.atlases, needed, Int32Array);
    this.categories = ensureCapacity(this.categories, needed, Int32Array);
    this.uploaders = ensureCapacity(this.uploaders, needed, Int32Array);
    this.dates = ensureCapacity(this.dates, needed, Float64Array);
    this.embargoes = ensureCapacity(this.embargoes, needed, Float64Array);
    this.visibility = ensureCapacity(this.visibility, needed, Uint8Array);
    this.nameChars = ensureCapacity(this.nameChars, needed, Int32Array);
    this.namePrefixes = ensureCapacity(this.namePrefixes, needed, Int32Array);
    this.readablePrefixes = ensureCapacity(this.readablePrefixes, needed, Int32Array);
    this.vectorStarts = ensureCapacity(this.vectorStarts, needed, Int32Array);
    this.vectorEnds = ensureCapacity(this.vectorEnds, needed, Int32Array);
  }
}

/**
 * The documents in slots: a document's version occupies one slot for its life, a new version
 * takes a new slot and the old one dies (its posting entries are skipped, then dropped by the next
 * compaction). Posting lists per lexeme and per name word give a text's documents; the facets'
 * values are dense numbers so a search counts them with arrays.
 */
export class MemoryDocuments {
  readonly columns = new Columns();
  /** Slots ever used (live and dead). */
  slotCount = 0;
  liveCount = 0;
  readonly slotOf = new Map<number, number>();
  readonly slotOfReadableId = new Map<string, number>();
  nameLower: (string | null)[] = [];
  readableIds: (string | null)[] = [];
  /** Kept for the non-public documents only: the rule reads a public one's readers never. */
  readers: (readonly number[] | null)[] = [];
  /** The packed vectors of every slot, one after the other (a dead slot's stay until a compaction). */
  arena = new Int32Array(1024);
  arenaLength = 0;
  private readonly packing: number[] = [];

  readonly speciesValues = new DenseValues();
  readonly atlasValues = new DenseValues();
  readonly categoryValues = new DenseValues();

  private readonly lexemeIds = new Map<string, number>();
  readonly lexemes: string[] = [];
  readonly lexemePostings = new PostingLists();
  private sortedLexemes: number[] = [];
  private sortedUpTo = 0;

  private readonly wordIds = new Map<string, number>();
  readonly words: string[] = [];
  readonly wordPostings = new PostingLists();
  /**
   * The name words holding a letter, and their trigrams' words: a text of letters finds the words
   * containing it or like it (`%>`) among these alone (a word of digits shares no trigram with it).
   */
  private readonly letterWords: number[] = [];
  private readonly trigramWords = new Map<number, number[]>();
  private sharedTrigrams = new Int32Array(0);

  /** Weight patterns of a vector entry (its positions' weights in order), interned. */
  private readonly patternIds = new Map<string, number>();
  readonly patternWeights: number[][] = [];

  get deadCount(): number {
    return this.slotCount - this.liveCount;
  }

  /** Puts a document's current version in (replacing any earlier one). */
  put(document: MemoryDocument): void {
    this.remove(document.brainId);
    const slot = this.slotCount++;
    const c = this.columns;
    c.grow(this.slotCount);
    c.brainIds[slot] = document.brainId;
    c.alive[slot] = 1;
    c.verified[slot] = document.verified === null ? -1 : document.verified ? 1 : 0;
    c.species[slot] = this.speciesValues.intern(document.speciesId);
    c.atlases[slot] = this.atlasValues.intern(document.atlasId);
    c.categories[slot] = this.categoryValues.intern(document.categoryId);
    c.uploaders[slot] = document.uploaderId ?? -1;
    c.dates[slot] = document.dateMicros ?? Number.POSITIVE_INFINITY;
    c.embargoes[slot] = document.embargoMicros ?? Number.NaN;
    c.visibility[slot] = document.visibility === null ? NO_VISIBILITY : VISIBILITY_CODES[document.visibility];
    c.nameChars[slot] = document.nameChars;
    c.namePrefixes[slot] = textPrefix(document.nameLower);
    c.readablePrefixes[slot] = document.readableId === null ? -1 : textPrefix(document.readableId);
    this.nameLower[slot] = document.nameLower;
    this.readableIds[slot] = document.readableId;
    this.readers[slot] = document.visibility === 'public' ? null : document.readers;
    c.vectorStarts[slot] = this.arenaLength;
    this.pack(document.vectorText);
    c.vectorEnds[slot] = this.arenaLength;
    this.slotOf.set(document.brainId, slot);
    if (document.readableId !== null) this.slotOfReadableId.set(document.readableId, slot);
    const arena = this.arena;
    for (let i = c.vectorStarts[slot]; i < c.vectorEnds[slot]; i += 2 + arena[i + 1]!)
      this.lexemePostings.push(arena[i]!, slot, this.patternOf(arena, i + 2, arena[i + 1]!));
    for (const word of new Set(document.nameWords))
      if (word !== '') this.wordPostings.push(this.wordIdFor(word), slot);
    this.liveCount++;
  }

  /** Takes a document out (a removal, or before its next version goes in). */
  remove(brainId: number): void {
    const slot = this.slotOf.get(brainId);
    if (slot === undefined) return;
    this.slotOf.delete(brainId);
    const readableId = this.readableIds[slot];
    if (readableId != null && this.slotOfReadableId.get(readableId) === slot)
      this.slotOfReadableId.delete(readableId);
    this.columns.alive[slot] = 0;
    this.nameLower[slot] = null;
    this.readableIds[slot] = null;
    this.readers[slot] = null;
    this.liveCount--;
  }

  /** The ids of the lexemes starting with `prefix`, in the vectors' order (code point order). */
  lexemesStartingWith(prefix: string): number[] {
    const sorted = this.sorted();
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareLexemes(this.lexemes[sorted[middle]!]!, prefix) < 0) low = middle + 1;
      else high = middle;
    }
    const ids: number[] = [];
    for (let i = low; i < sorted.length && this.lexemes[sorted[i]!]!.startsWith(prefix); i++)
      ids.push(sorted[i]!);
    return ids;
  }

  wordId(word: string): number | undefined {
    return this.wordIds.get(word);
  }

  /**
   * Renumbers the live slots densely and drops the dead ones from every posting list; worth it
   * once the dead are many (a document's every update leaves one).
   */
  compact(): void {
    const renumbered = new Int32Array(this.slotCount).fill(-1);
    let next = 0;
    const c = this.columns;
    for (let slot = 0; slot < this.slotCount; slot++) if (c.alive[slot]) renumbered[slot] = next++;
    const move = <T>(array: T[]): T[] => {
      const moved: T[] = new Array<T>(next);
      for (let slot = 0; slot < this.slotCount; slot++) {
        const to = renumbered[slot]!;
        if (to >= 0) moved[to] = array[slot]!;
      }
      return moved;
    };
    this.nameLower = move(this.nameLower);
    this.readableIds = move(this.readableIds);
    this.readers = move(this.readers);
    const columns = [
      c.brainIds,
      c.alive,
      c.verified,
      c.species,
      c.atlases,
      c.categories,
      c.uploaders,
      c.dates,
      c.embargoes,
      c.visibility,
      c.nameChars,
      c.namePrefixes,
      c.readablePrefixes,
      c.vectorStarts,
      c.vectorEnds,
    ];
    for (const column of columns) {
      for (let slot = 0; slot < this.slotCount; slot++) {
        const to = renumbered[slot]!;
        if (to >= 0) column[to] = column[slot]!;
      }
      column.fill(0, next);
    }
    this.compactArena(next);
    const keep = (slot: number): boolean => renumbered[slot]! >= 0;
    const renumber = (slot: number): number => renumbered[slot]!;
    this.lexemePostings.retain(keep, renumber);
    this.wordPostings.retain(keep, renumber);
    for (const [brainId, slot] of this.slotOf) this.slotOf.set(brainId, renumbered[slot]!);
    for (const [readableId, slot] of this.slotOfReadableId)
      this.slotOfReadableId.set(readableId, renumbered[slot]!);
    this.slotCount = next;
  }

  private sorted(): number[] {
    if (this.sortedUpTo !== this.lexemes.length) {
      this.sortedLexemes = this.lexemes.map((_, id) => id);
      this.sortedLexemes.sort((a, b) => compareLexemes(this.lexemes[a]!, this.lexemes[b]!));
      this.sortedUpTo = this.lexemes.length;
    }
    return this.sortedLexemes;
  }

  /** The packed vector of a live slot. */
  vectorOf(slot: number): PackedVector {
    return {
      arena: this.arena,
      start: this.columns.vectorStarts[slot]!,
      end: this.columns.vectorEnds[slot]!,
    };
  }

  /** The live slots' vectors moved together, in slot order (after the columns moved: `slots` live). */
  private compactArena(slots: number): void {
    const c = this.columns;
    let live = 0;
    for (let slot = 0; slot < slots; slot++) live += c.vectorEnds[slot]! - c.vectorStarts[slot]!;
    const arena = new Int32Array(Math.max(1024, Math.ceil(live * 1.25)));
    let length = 0;
    for (let to = 0; to < slots; to++) {
      const start = c.vectorStarts[to]!;
      const end = c.vectorEnds[to]!;
      arena.set(this.arena.subarray(start, end), length);
      c.vectorStarts[to] = length;
      length += end - start;
      c.vectorEnds[to] = length;
    }
    this.arena = arena;
    this.arenaLength = length;
  }

  /**
   * Parses PostgreSQL's text of a vector (tsvectorout: sorted, each lexeme once) into its packed
   * form at the arena's end.
   */
  private pack(text: string): void {
    const packed = this.packing;
    packed.length = 0;
    let i = 0;
    while (i < text.length) {
      if (text[i] === ' ') {
        i++;
        continue;
      }
      const [lexeme, end] = quoted(text, i);
      packed.push(this.lexemeId(lexeme), 0);
      const countAt = packed.length - 1;
      i = end;
      if (text[i] === ':') {
        do {
          i++;
          let position = 0;
          while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57)
            position = position * 10 + text.charCodeAt(i++) - 48;
          const weight = WEIGHT_OF_LETTER[text[i] ?? ''];
          if (weight !== undefined) i++;
          packed.push(((weight ?? 0) << 14) | position);
          packed[countAt]!++;
        } while (text[i] === ',');
      }
    }
    this.arena = ensureCapacity(this.arena, this.arenaLength + packed.length, Int32Array);
    this.arena.set(packed, this.arenaLength);
    this.arenaLength += packed.length;
  }

  private lexemeId(lexeme: string): number {
    return this.lexemeIds.get(lexeme) ?? this.newLexeme(lexeme);
  }

  private newLexeme(lexeme: string): number {
    const id = this.lexemePostings.add();
    this.lexemes.push(lexeme);
    this.lexemeIds.set(lexeme, id);
    return id;
  }

  private wordIdFor(word: string): number {
    let id = this.wordIds.get(word);
    if (id === undefined) {
      id = this.wordPostings.add();
      this.words.push(word);
      this.wordIds.set(word, id);
      if (/[a-z]/.test(word)) this.indexLetterWord(word, id);
    }
    return id;
  }

  private indexLetterWord(word: string, id: number): void {
    this.letterWords.push(id);
    for (const trigram of new Set(textTrigrams(word))) {
      const words = this.trigramWords.get(trigram);
      if (words) words.push(id);
      else this.trigramWords.set(trigram, [id]);
    }
  }

  /** The name words holding a letter that contain `text` (`word LIKE '%text%'`, text of letters). */
  letterWordsContaining(text: string): string[] {
    const found: string[] = [];
    for (const id of this.letterWords) if (this.words[id]!.includes(text)) found.push(this.words[id]!);
    return found;
  }

  /**
   * The name words like `query` (`word %> query`, pg_trgm at its default threshold), for a query of
   * letters: those sharing enough of its trigrams (minSharedTrigrams), then checked one by one.
   */
  wordsLike(query: string): string[] {
    const trigrams = [...new Set(textTrigrams(query))];
    if (trigrams.length === 0) return [];
    if (this.sharedTrigrams.length < this.words.length)
      this.sharedTrigrams = new Int32Array(Math.max(1024, this.words.length * 2));
    const shared = this.sharedTrigrams;
    const touched: number[] = [];
    for (const trigram of trigrams)
      for (const id of this.trigramWords.get(trigram) ?? []) if (shared[id]!++ === 0) touched.push(id);
    const needed = minSharedTrigrams(trigrams.length);
    const similar = prepareIsWordSimilar(query);
    const found: string[] = [];
    for (const id of touched) {
      if (shared[id]! >= needed && similar(this.words[id]!)) found.push(this.words[id]!);
      shared[id] = 0;
    }
    return found;
  }

  private patternOf(arena: Int32Array, from: number, count: number): number {
    const weights = Array.from(arena.subarray(from, from + count), (p) => p >> 14);
    const key = weights.join('');
    let id = this.patternIds.get(key);
    if (id === undefined) {
      id = this.patternWeights.length;
      if (id > 0xffff) throw new Error('too many distinct weight patterns for the in-memory search index');
      this.patternWeights.push(weights);
      this.patternIds.set(key, id);
    }
    return id;
  }
}
