/**
 * PostgreSQL's ts_rank(tsvector, tsquery) with its default weights and normalization 0, bit for bit:
 * a port of src/backend/utils/adt/tsrank.c (calc_rank, calc_rank_or, calc_rank_and; unchanged from
 * 9.6 to 17) and of the parts of tsvector.c it relies on. C's `float` is float32: every value the C
 * code stores in a float (or computes from two floats) goes through Math.fround here; what C computes
 * in double stays a JS number. The in-memory search index orders its matches by this value, so it
 * must equal PostgreSQL's to the last bit (tsRank.int.test.ts compares them).
 */

/** A position (14 bits) and its weight (2 bits above it: 3 A, 2 B, 1 C, 0 D): PG's WordEntryPos. */
export type WordEntryPos = number;

/** One lexeme of a tsvector and its positions; no positions (`'a'::tsvector`) is an empty list. */
export interface TsVectorEntry {
  readonly lexeme: string;
  readonly positions: readonly WordEntryPos[];
}

/** A tsvector: its entries in PostgreSQL's order (compareLexemes), each lexeme once. */
export type TsVector = readonly TsVectorEntry[];

/** One operand of a tsquery: its lexeme, and whether it is a prefix (`'abc':*`). */
export interface TsQueryOperand {
  readonly lexeme: string;
  readonly prefix: boolean;
}

/** Positions are stored below this (MAXENTRYPOS); a larger one becomes MAXENTRYPOS - 1. */
export const MAX_ENTRY_POS = 1 << 14;
/** An entry keeps at most this many positions (MAXNUMPOS). */
export const MAX_NUM_POS = 256;

const POSITION_MASK = 0x3fff;

export const positionOf = (pos: WordEntryPos): number => pos & POSITION_MASK;
export const weightOf = (pos: WordEntryPos): number => (pos >> 14) & 3;
export const wordEntryPos = (position: number, weight: number): WordEntryPos =>
  ((weight & 3) << 14) | Math.min(position, MAX_ENTRY_POS - 1);

/** The default weights, indexed by a position's weight: {D 0.1, C 0.2, B 0.4, A 1.0} as float4. */
const WEIGHTS: readonly number[] = [0.1, 0.2, 0.4, 1.0].map(Math.fround);

const weightValue = (pos: WordEntryPos): number => WEIGHTS[weightOf(pos)] ?? 0;

/**
 * Where a surrogate pair sorts among the code units (0xD800..0xDFFF to 0xF800..0xFFFF, 0xE000..
 * 0xFFFF down by 0x800): comparing code units so is comparing code points, which is UTF-8's byte
 * order. JS's `<` compares UTF-16 code units, which puts U+10000 and above before U+E000..U+FFFF.
 */
const utf8Rank = (unit: number): number =>
  unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800;

/**
 * PostgreSQL's order of lexemes (tsCompareString without prefix): their UTF-8 bytes compared as
 * memcmp does over the common length, then the shorter first. Negative, zero or positive.
 */
export function compareLexemes(a: string, b: string): number {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

/**
 * The entries an operand matches (find_wordentry): the entry equal to its lexeme, or for a prefix
 * every entry the lexeme starts, which sort together from the first entry not below the lexeme.
 */
export function matchingEntries(vector: TsVector, operand: TsQueryOperand): { first: number; count: number } {
  const first = lowerBound(vector, operand.lexeme);
  if (!operand.prefix) {
    const entry = vector[first];
    return { first, count: entry !== undefined && entry.lexeme === operand.lexeme ? 1 : 0 };
  }
  let end = first;
  while (end < vector.length && vector[end]!.lexeme.startsWith(operand.lexeme)) end++;
  return { first, count: end - first };
}

/** The index of the first entry whose lexeme is not below `lexeme`. */
function lowerBound(vector: TsVector, lexeme: string): number {
  let low = 0;
  let high = vector.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareLexemes(vector[middle]!.lexeme, lexeme) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The distinct operands in PostgreSQL's order (SortAndUniqItems): sorted by lexeme alone, the
 * prefix flag ignored, and of equal lexemes the first kept. PostgreSQL collects them in the order
 * its tsquery stores them: an AND chain `a & b & c` is stored right operand first (c, b, a), and
 * below 7 operands its qsort is an insertion sort (stable). So of `x & x:*` the later one, `x:*`,
 * is kept. (With 7 or more operands, equal lexemes with different prefix flags keep whichever
 * PostgreSQL's quicksort leaves first: not replicated; the search never writes such a query.)
 */
export function uniqueOperands(operands: readonly TsQueryOperand[]): TsQueryOperand[] {
  const sorted = [...operands].reverse().sort((a, b) => compareLexemes(a.lexeme, b.lexeme));
  return sorted.filter((operand, i) => i === 0 || sorted[i - 1]!.lexeme !== operand.lexeme);
}

/** calc_rank_or's stand-in for an entry without positions: position 0, weight D. */
const OR_POSITIONLESS: readonly WordEntryPos[] = [wordEntryPos(0, 0)];

/**
 * What calc_rank_or adds to its sum for one matched entry, before the sum is stored as float4:
 * the weights over the squares of their ranks, the heaviest weight counted at rank 1 instead of
 * its own, over pi^2/6. A double (the division by 1.64493406685 is in double in C).
 */
export function entryContribution(positions: readonly WordEntryPos[]): number {
  const list = positions.length === 0 ? OR_POSITIONLESS : positions;
  let sum = 0; // resj: float
  let heaviest = -1; // wjm: float
  let heaviestAt = 0; // jm
  list.forEach((pos, j) => {
    const weight = weightValue(pos);
    sum = Math.fround(sum + Math.fround(weight / ((j + 1) * (j + 1))));
    if (weight > heaviest) {
      heaviest = weight;
      heaviestAt = j;
    }
  });
  const square = (heaviestAt + 1) * (heaviestAt + 1);
  return Math.fround(Math.fround(heaviest + sum) - Math.fround(heaviest / square)) / 1.64493406685;
}

/**
 * calc_rank_or: every matched entry's contribution summed in float4 (operands in uniqueOperands'
 * order, each one's entries in the vector's order), over the number of distinct operands.
 */
function rankOr(vector: TsVector, operands: readonly TsQueryOperand[]): number {
  const items = uniqueOperands(operands);
  let sum = 0;
  for (const item of items) {
    const { first, count } = matchingEntries(vector, item);
    for (let e = first; e < first + count; e++)
      sum = Math.fround(sum + entryContribution(vector[e]!.positions));
  }
  return items.length > 0 ? Math.fround(sum / items.length) : sum;
}

/** The weight of two positions `distance` apart (word_distance): float4. */
export function wordDistance(distance: number): number {
  if (distance > 100) return Math.fround(1e-30);
  return Math.fround(1.0 / (1.005 + 0.05 * Math.exp(distance / 1.5 - 2)));
}

/**
 * calc_rank_and's stand-in for an entry without positions: the last position, weight D. It is
 * told apart by identity, as C compares the pointer: at distance 0 it still counts (as MAXENTRYPOS).
 */
const AND_POSITIONLESS: readonly WordEntryPos[] = [wordEntryPos(MAX_ENTRY_POS - 1, 0)];

/**
 * calc_rank_and: every pair of positions of two different operands' entries, combined as
 * probabilities (1 - (1 - res)(1 - w)). Quirk kept: an operand remembers only its last matched
 * entry (`pos[k]` is overwritten entry by entry), so each entry of a later operand is paired with
 * the last entry of each earlier one. -1 when no pair counts.
 */
function rankAnd(vector: TsVector, operands: readonly TsQueryOperand[]): number {
  const items = uniqueOperands(operands);
  if (items.length < 2) return rankOr(vector, operands);
  const last: (readonly WordEntryPos[] | undefined)[] = [];
  let res = Math.fround(-1);
  items.forEach((item, i) => {
    const { first, count } = matchingEntries(vector, item);
    for (let e = first; e < first + count; e++) {
      const positions = vector[e]!.positions;
      const mine = positions.length === 0 ? AND_POSITIONLESS : positions;
      last[i] = mine;
      for (let k = 0; k < i; k++) {
        const theirs = last[k];
        if (theirs !== undefined) res = pairsRank(res, mine, theirs);
      }
    }
  });
  return res;
}

/** The innermost loops of calc_rank_and: `res` after every pair of `mine` and `theirs`. */
function pairsRank(start: number, mine: readonly WordEntryPos[], theirs: readonly WordEntryPos[]): number {
  const positionless = mine === AND_POSITIONLESS || theirs === AND_POSITIONLESS;
  let res = start;
  for (const l of mine) {
    for (const p of theirs) {
      let distance = Math.abs(positionOf(l) - positionOf(p));
      if (distance === 0 && !positionless) continue;
      if (distance === 0) distance = MAX_ENTRY_POS;
      const product = Math.fround(Math.fround(weightValue(l) * weightValue(p)) * wordDistance(distance));
      const weight = Math.fround(Math.sqrt(product));
      res = res < 0 ? weight : Math.fround(1.0 - (1.0 - res) * (1.0 - weight));
    }
  }
  return res;
}

/**
 * ts_rank(vector, query) for a query that is the AND of `operands` (written in this order), or the
 * one operand: the float4 PostgreSQL returns, as a number. calc_rank: 0 for an empty vector or
 * query; AND goes to calc_rank_and (which falls back to calc_rank_or for one distinct operand); a
 * negative result (no pair found) becomes 1e-20f.
 */
export function tsRank(vector: TsVector, operands: readonly TsQueryOperand[]): number {
  if (vector.length === 0 || operands.length === 0) return 0;
  const res = operands.length > 1 ? rankAnd(vector, operands) : rankOr(vector, operands);
  return res < 0 ? Math.fround(1e-20) : res;
}

/**
 * The rank of a one-operand query (or of one lexeme repeated) from precomputed contributions
 * (entryContribution of each matched entry's positions), in the vector's order: each added to a
 * float4 sum, stored as float4 after each addition (`sum = Math.fround(sum + c)`, from 0). The
 * division by the one operand leaves it unchanged; no match is 0.
 */
export function rankOfContributions(contributions: Iterable<number>): number {
  let sum = 0;
  for (const contribution of contributions) sum = Math.fround(sum + contribution);
  return sum;
}

/** The letter a weight is written with in a tsvector's text; D is written as nothing. */
const WEIGHT_LETTERS = ['', 'C', 'B', 'A'];

/** A tsvector as PostgreSQL writes it (tsvectorout): quotes doubled and backslashes too. */
export function formatTsvectorText(vector: TsVector): string {
  return vector
    .map(({ lexeme, positions }) => {
      const quoted = `'${lexeme.replace(/['\\]/g, (c) => c + c)}'`;
      if (positions.length === 0) return quoted;
      return `${quoted}:${positions.map((p) => `${positionOf(p)}${WEIGHT_LETTERS[weightOf(p)]}`).join(',')}`;
    })
    .join(' ');
}

/**
 * A tsvector from its text (tsvectorout's, or any tsvectorin accepts of quoted or bare words,
 * backslash escapes and `:1A,2,3b` positions). As tsvectorin does, entries are sorted, a lexeme
 * given twice has its positions merged, and each entry's positions are made unique (uniquePos).
 */
export function parseTsvectorText(text: string): TsVector {
  const parser = new TsvectorTextParser(text);
  const entries: TsVectorEntry[] = [];
  for (let entry = parser.next(); entry !== undefined; entry = parser.next()) entries.push(entry);
  return uniqueEntries(entries);
}

class TsvectorTextParser {
  private at = 0;
  constructor(private readonly text: string) {}

  next(): TsVectorEntry | undefined {
    while (this.at < this.text.length && /[ \t\n\r\v\f]/.test(this.text[this.at]!)) this.at++;
    if (this.at >= this.text.length) return undefined;
    const lexeme = this.text[this.at] === "'" ? this.quoted() : this.bare();
    const positions = this.text[this.at] === ':' ? this.positions() : [];
    return { lexeme, positions };
  }

  /** A quoted lexeme: `''` is a quote, a backslash escapes the character after it. */
  private quoted(): string {
    let lexeme = '';
    this.at++;
    for (;;) {
      const c = this.text[this.at];
      if (c === undefined) throw new Error(`unterminated quoted string in tsvector: ${this.text}`);
      this.at++;
      if (c === '\\') lexeme += this.escaped();
      else if (c !== "'") lexeme += c;
      else if (this.text[this.at] === "'") lexeme += this.text[this.at++];
      else return lexeme;
    }
  }

  /** A bare lexeme: up to a space or a colon. */
  private bare(): string {
    let lexeme = '';
    for (
      let c = this.text[this.at];
      c !== undefined && c !== ':' && !/[ \t\n\r\v\f]/.test(c);
      c = this.text[this.at]
    ) {
      this.at++;
      lexeme += c === '\\' ? this.escaped() : c;
    }
    return lexeme;
  }

  private escaped(): string {
    const c = this.text.codePointAt(this.at);
    if (c === undefined) throw new Error(`a backslash ends the tsvector: ${this.text}`);
    const character = String.fromCodePoint(c);
    this.at += character.length;
    return character;
  }

  /** `:1A,2,3b`: each position (at most MAX_ENTRY_POS - 1, not 0) with its weight, D if none. */
  private positions(): WordEntryPos[] {
    const positions: WordEntryPos[] = [];
    do {
      this.at++;
      const match = /^(\d+)([ABCDabcd]?)/.exec(this.text.slice(this.at, this.at + 12));
      const position = match ? Number(match[1]) : 0;
      if (!match || position === 0) throw new Error(`wrong position info in tsvector: ${this.text}`);
      this.at += match[0].length;
      positions.push(wordEntryPos(position, 'dcba'.indexOf((match[2] || 'd').toLowerCase())));
    } while (this.text[this.at] === ',');
    return positions;
  }
}

/** tsvectorin's uniqueentry: entries sorted, equal lexemes merged, positions made unique. */
function uniqueEntries(entries: readonly TsVectorEntry[]): TsVector {
  const sorted = [...entries].sort((a, b) => compareLexemes(a.lexeme, b.lexeme));
  const merged: { lexeme: string; positions: WordEntryPos[] }[] = [];
  for (const entry of sorted) {
    const previous = merged[merged.length - 1];
    if (previous !== undefined && previous.lexeme === entry.lexeme)
      previous.positions.push(...entry.positions);
    else merged.push({ lexeme: entry.lexeme, positions: [...entry.positions] });
  }
  return merged.map(({ lexeme, positions }) => ({ lexeme, positions: uniquePositions(positions) }));
}

/**
 * uniquePos: positions sorted, one per position (the heaviest weight of those given for it), at
 * most MAX_NUM_POS, and none kept after the last position (MAX_ENTRY_POS - 1) is reached.
 */
function uniquePositions(positions: readonly WordEntryPos[]): WordEntryPos[] {
  if (positions.length <= 1) return [...positions];
  const sorted = [...positions].sort((a, b) => positionOf(a) - positionOf(b));
  const kept: WordEntryPos[] = [sorted[0]!];
  for (const pos of sorted.slice(1)) {
    const last = kept[kept.length - 1]!;
    if (positionOf(pos) !== positionOf(last)) {
      kept.push(pos);
      if (kept.length >= MAX_NUM_POS || positionOf(pos) === MAX_ENTRY_POS - 1) break;
    } else if (weightOf(pos) > weightOf(last)) {
      kept[kept.length - 1] = wordEntryPos(positionOf(last), weightOf(pos));
    }
  }
  return kept;
}
