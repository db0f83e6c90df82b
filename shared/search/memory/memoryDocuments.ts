import type { Visibility } from '#shared/domain/brains/visibility';
import { ensureCapacity, LexemePostings, SlotList } from './growableArrays';

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
  /** The full-text vector's entries, in the vector's order. */
  readonly vector: readonly VectorEntry[];
  readonly readers: readonly number[];
}

/** A lexeme of a vector and its positions as PostgreSQL packs them (WordEntryPos: weight << 14 | position). */
export interface VectorEntry {
  readonly lexeme: string;
  readonly positions: readonly number[];
}

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

/** Code point order, which is UTF-8 byte order: PostgreSQL's order of a vector's lexemes ("C"). */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (a code point above U+FFFF) sorts after every BMP unit in code point order.
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy) return sx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
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
  readers: (readonly number[] | null)[] = [];
  vectors: (readonly VectorEntry[] | null)[] = [];

  readonly speciesValues = new DenseValues();
  readonly atlasValues = new DenseValues();
  readonly categoryValues = new DenseValues();

  private readonly lexemeIds = new Map<string, number>();
  readonly lexemes: string[] = [];
  readonly lexemePostings: LexemePostings[] = [];
  private sortedLexemes: number[] = [];
  private sortedUpTo = 0;

  private readonly wordIds = new Map<string, number>();
  readonly words: string[] = [];
  readonly wordPostings: SlotList[] = [];

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
    this.nameLower[slot] = document.nameLower;
    this.readableIds[slot] = document.readableId;
    this.readers[slot] = document.readers;
    this.vectors[slot] = document.vector;
    this.slotOf.set(document.brainId, slot);
    if (document.readableId !== null) this.slotOfReadableId.set(document.readableId, slot);
    for (const entry of document.vector)
      this.postingsOfLexeme(entry.lexeme).pushWith(slot, this.patternOf(entry.positions));
    for (const word of new Set(document.nameWords)) if (word !== '') this.postingsOfWord(word).push(slot);
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
    this.vectors[slot] = null;
    this.liveCount--;
  }

  /** The ids of the lexemes starting with `prefix`, in the vectors' order (code point order). */
  lexemesStartingWith(prefix: string): number[] {
    const sorted = this.sorted();
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareCodePoints(this.lexemes[sorted[middle]!]!, prefix) < 0) low = middle + 1;
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
    this.vectors = move(this.vectors);
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
    ];
    for (const column of columns) {
      for (let slot = 0; slot < this.slotCount; slot++) {
        const to = renumbered[slot]!;
        if (to >= 0) column[to] = column[slot]!;
      }
      column.fill(0, next);
    }
    const keep = (slot: number): boolean => renumbered[slot]! >= 0;
    const renumber = (slot: number): number => renumbered[slot]!;
    for (const postings of this.lexemePostings) postings.retain(keep, renumber);
    for (const postings of this.wordPostings) postings.retain(keep, renumber);
    for (const [brainId, slot] of this.slotOf) this.slotOf.set(brainId, renumbered[slot]!);
    for (const [readableId, slot] of this.slotOfReadableId)
      this.slotOfReadableId.set(readableId, renumbered[slot]!);
    this.slotCount = next;
  }

  private sorted(): number[] {
    if (this.sortedUpTo !== this.lexemes.length) {
      this.sortedLexemes = this.lexemes.map((_, id) => id);
      this.sortedLexemes.sort((a, b) => compareCodePoints(this.lexemes[a]!, this.lexemes[b]!));
      this.sortedUpTo = this.lexemes.length;
    }
    return this.sortedLexemes;
  }

  private postingsOfLexeme(lexeme: string): LexemePostings {
    let id = this.lexemeIds.get(lexeme);
    if (id === undefined) {
      id = this.lexemes.length;
      this.lexemes.push(lexeme);
      this.lexemePostings.push(new LexemePostings());
      this.lexemeIds.set(lexeme, id);
    }
    return this.lexemePostings[id]!;
  }

  private postingsOfWord(word: string): SlotList {
    let id = this.wordIds.get(word);
    if (id === undefined) {
      id = this.words.length;
      this.words.push(word);
      this.wordPostings.push(new SlotList());
      this.wordIds.set(word, id);
    }
    return this.wordPostings[id]!;
  }

  private patternOf(positions: readonly number[]): number {
    const weights = positions.map((p) => p >> 14);
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
