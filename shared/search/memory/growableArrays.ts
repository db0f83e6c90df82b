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
