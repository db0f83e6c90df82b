/** Typed arrays that grow by doubling, for columns indexed by a document's slot. */

type TypedArray = Int32Array | Float64Array | Uint8Array | Int8Array | Uint16Array;
type TypedArrayConstructor<T extends TypedArray> = new (length: number) => T;

/** A copy of `array` with room for at least `needed` elements (the same array when it has room). */
export function ensureCapacity<T extends TypedArray>(
  array: T,
  needed: number,
  make: TypedArrayConstructor<T>,
): T {
  if (needed <= array.length) return array;
  let length = Math.max(16, array.length);
  while (length < needed) length *= 2;
  const grown = new make(length);
  grown.set(array);
  return grown;
}

/** A list of slots (a posting list): appended to, read in insertion order. */
export class SlotList {
  slots = new Int32Array(4);
  length = 0;

  push(slot: number): void {
    this.slots = ensureCapacity(this.slots, this.length + 1, Int32Array);
    this.slots[this.length++] = slot;
  }

  /** Keeps the slots `keep` accepts, renumbered by `renumber` (compaction). */
  retain(keep: (slot: number) => boolean, renumber: (slot: number) => number): void {
    let kept = 0;
    for (let i = 0; i < this.length; i++) {
      const slot = this.slots[i]!;
      if (keep(slot)) this.slots[kept++] = renumber(slot);
    }
    this.length = kept;
  }
}

/** A posting list of a full-text lexeme: each document's slot and the weights pattern of its entry. */
export class LexemePostings extends SlotList {
  patterns = new Uint16Array(4);

  pushWith(slot: number, pattern: number): void {
    this.patterns = ensureCapacity(this.patterns, this.length + 1, Uint16Array);
    this.patterns[this.length] = pattern;
    this.push(slot);
  }

  override retain(keep: (slot: number) => boolean, renumber: (slot: number) => number): void {
    let kept = 0;
    for (let i = 0; i < this.length; i++) {
      const slot = this.slots[i]!;
      if (!keep(slot)) continue;
      this.slots[kept] = renumber(slot);
      this.patterns[kept] = this.patterns[i]!;
      kept++;
    }
    this.length = kept;
  }
}

/**
 * Many posting lists, by id. Most lexemes and words of a catalogue are in one document only (a
 * brain's number, its readable_id), so a list of one entry is kept in two array elements rather
 * than in an object with two typed arrays of its own (a few hundred bytes each): at a million
 * documents that is most of the memory.
 */
export class PostingLists {
  private singles = new Int32Array(16);
  private singlePatterns = new Uint16Array(16);
  private readonly lists: (LexemePostings | undefined)[] = [];
  private readonly view = new LexemePostings();
  private readonly empty = new LexemePostings();
  length = 0;

  /** A new empty list; its id. */
  add(): number {
    this.singles = ensureCapacity(this.singles, this.length + 1, Int32Array);
    this.singlePatterns = ensureCapacity(this.singlePatterns, this.length + 1, Uint16Array);
    this.singles[this.length] = -1;
    this.lists.push(undefined);
    return this.length++;
  }

  push(id: number, slot: number, pattern = 0): void {
    const list = this.lists[id];
    if (list) return list.pushWith(slot, pattern);
    const single = this.singles[id]!;
    if (single < 0) {
      this.singles[id] = slot;
      this.singlePatterns[id] = pattern;
      return;
    }
    const grown = new LexemePostings();
    grown.pushWith(single, this.singlePatterns[id]!);
    grown.pushWith(slot, pattern);
    this.lists[id] = grown;
    this.singles[id] = -1;
  }

  /** List `id`'s entries; a list of one is lent in a shared view, valid until the next call. */
  entries(id: number): LexemePostings {
    const list = this.lists[id];
    if (list) return list;
    const single = this.singles[id]!;
    if (single < 0) return this.empty;
    this.view.length = 0;
    this.view.pushWith(single, this.singlePatterns[id]!);
    return this.view;
  }

  retain(keep: (slot: number) => boolean, renumber: (slot: number) => number): void {
    for (let id = 0; id < this.length; id++) {
      const list = this.lists[id];
      if (list) list.retain(keep, renumber);
      else if (this.singles[id]! >= 0)
        this.singles[id] = keep(this.singles[id]!) ? renumber(this.singles[id]!) : -1;
    }
  }
}

/** A list of slots reused from one search to the next: no garbage however many it holds. */
export class SlotBuffer {
  data = new Int32Array(1024);
  length = 0;

  clear(): this {
    this.length = 0;
    return this;
  }

  push(slot: number): void {
    if (this.length === this.data.length) this.data = ensureCapacity(this.data, this.length + 1, Int32Array);
    this.data[this.length++] = slot;
  }
}
