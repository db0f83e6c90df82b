/**
 * canonicalFromJsonText (canonicalFromJsonText.ts) over UTF-8 bytes, into bytes: the RFC 8785 form of
 * a JSON text, written into a growable buffer without making a JavaScript string of the text or of
 * its members. verify-ledger reads the events' payloads as bytes (binary COPY) and hashes bytes, so a
 * payload never becomes a string at all: per event that is a few microseconds instead of tens.
 *
 * What it writes is exactly canonicalJson(JSON.parse(text)) (a unit test holds the three together):
 * - a string without a backslash is copied as it is: JSON.stringify would write the same characters
 *   (PostgreSQL's text is valid UTF-8, and control characters cannot appear raw in JSON);
 *   one with an escape is decoded and written as JSON.stringify writes it;
 * - an integer of up to 15 digits is copied; any other number is written as JSON.stringify writes the
 *   double JSON.parse gives (1.0 is 1, 1e21 is 1e+21);
 * - object members are sorted by their names' UTF-16 code units: by their bytes when every name is
 *   ASCII without escapes (the same order), else by the decoded names; of members of one name, the
 *   last is kept, as JSON.parse keeps it;
 * - whitespace outside strings is dropped.
 * Malformed text throws a SyntaxError.
 */

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Bytes written one after another into a buffer that grows as needed. */
export class ByteSink {
  buffer: Buffer;
  length = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  /** Room for `n` more bytes. */
  reserve(n: number): void {
    const needed = this.length + n;
    if (needed <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  byte(b: number): void {
    if (this.length === this.buffer.length) this.reserve(1);
    this.buffer[this.length++] = b;
  }

  bytes(source: Buffer, start: number, end: number): void {
    const n = end - start;
    if (this.length + n > this.buffer.length) this.reserve(n);
    const { buffer } = this;
    if (n < 48) {
      // Short runs (names, numbers, ids) are copied here: a native call costs more than the loop.
      let at = this.length;
      for (let i = start; i < end; i++) buffer[at++] = source[i]!;
    } else source.copy(buffer, this.length, start, end);
    this.length += n;
  }

  /** Text written as UTF-8. */
  text(value: string): void {
    this.reserve(value.length * 3);
    this.length += this.buffer.write(value, this.length, 'utf8');
  }

  /** Text of code points below 128 only (digits, hex, fixed names). */
  ascii(value: string): void {
    this.reserve(value.length);
    for (let i = 0; i < value.length; i++) this.buffer[this.length++] = value.charCodeAt(i);
  }

  /** The bytes written, as a view (valid until the next write). */
  view(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/** One member of an object being written: where its name and the whole `"name":value` are in the sink. */
interface Member {
  /** The name's bytes, between its quotes. */
  nameStart: number;
  nameEnd: number;
  /** `"name":value`. */
  start: number;
  end: number;
  /** The name as JSON.parse gives it, when the object's names must be compared decoded. */
  decoded: string | undefined;
  /** The name's first three bytes as one number (0 past its end): most names differ there. */
  prefix: number;
}

/** Orders of members found before, kept per member count (objects of one shape recur event after event). */
const KNOWN_ORDERS_PER_COUNT = 8;

/** An integer JSON.stringify writes as given: 0, or up to 15 digits (exact in a double), no "-0". */
function isPlainInteger(source: Buffer, start: number, end: number): boolean {
  let i = start;
  if (source[i] === MINUS) i++;
  const digits = end - i;
  if (digits < 1 || digits > 15) return false;
  if (source[i] === ZERO) return digits === 1 && i === start;
  for (; i < end; i++) {
    const c = source[i]!;
    if (c < ZERO || c > NINE) return false;
  }
  return true;
}

/**
 * Writes canonical JSON. One writer serves many texts one after another (its member records are
 * reused); it is not reentrant.
 */
export class CanonicalJsonWriter {
  private source: Buffer = Buffer.alloc(0);
  private pos = 0;
  private end = 0;
  private sink: ByteSink = new ByteSink(0);
  /** Member records by object depth, reused from text to text. */
  private readonly levels: Member[][] = [];
  private depth = 0;
  private readonly scratch = new ByteSink(4096);
  private readonly order: number[] = [];
  /** By member count: orders that sorted objects of that many members before, newest first. */
  private readonly knownOrders: number[][][] = [];

  /**
   * Writes the canonical form of the JSON text source[start, end) into `sink`. `replace`, for the
   * outermost object only: a member of that name (its name and value canonical bytes given, the name
   * ASCII) is added last, so it stands instead of any member of that name in the text.
   */
  write(
    sink: ByteSink,
    source: Buffer,
    start: number,
    end: number,
    replace?: { readonly name: Buffer; readonly value: Buffer },
  ): void {
    this.sink = sink;
    this.source = source;
    this.pos = start;
    this.end = end;
    this.depth = 0;
    this.space();
    if (replace && source[this.pos] === OPEN_BRACE) this.object(replace);
    else this.value();
    this.space();
    if (this.pos < this.end) throw new SyntaxError(`unexpected text after JSON at ${this.pos - start}`);
  }

  private space(): void {
    const { source, end } = this;
    let i = this.pos;
    while (i < end) {
      const c = source[i]!;
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.pos = i;
  }

  private value(): void {
    this.space();
    if (this.pos >= this.end) throw new SyntaxError('unexpected end of JSON');
    const c = this.source[this.pos]!;
    if (c === OPEN_BRACE) this.object(undefined);
    else if (c === OPEN_BRACKET) this.array();
    else if (c === QUOTE) this.string();
    else this.literal();
  }

  /** Writes a string; true when it was copied as it is (no escape in it). */
  private string(): boolean {
    const { source, end } = this;
    const start = this.pos;
    let escaped = false;
    let i = start + 1;
    for (;;) {
      if (i >= end) throw new SyntaxError(`unterminated string at ${start}`);
      const c = source[i]!;
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        i += 2;
      } else {
        if (c < 32) throw new SyntaxError(`control character in a string at ${i}`);
        i++;
      }
    }
    this.pos = i + 1;
    if (!escaped) this.sink.bytes(source, start, i + 1);
    // Escapes are written the way JSON.stringify writes them (\u00e9 becomes é, \/ becomes /).
    else this.sink.text(JSON.stringify(JSON.parse(source.toString('utf8', start, i + 1))));
    return !escaped;
  }

  private literal(): void {
    const { source, end } = this;
    const start = this.pos;
    let i = start;
    while (i < end) {
      const c = source[i]!;
      if (
        c === COMMA ||
        c === CLOSE_BRACE ||
        c === CLOSE_BRACKET ||
        c === 32 ||
        c === 10 ||
        c === 13 ||
        c === 9
      )
        break;
      i++;
    }
    this.pos = i;
    const n = i - start;
    const first = source[start];
    if (
      (n === 4 &&
        first === 0x74 &&
        source[start + 1] === 0x72 &&
        source[start + 2] === 0x75 &&
        source[start + 3] === 0x65) || // true
      (n === 4 &&
        first === 0x6e &&
        source[start + 1] === 0x75 &&
        source[start + 2] === 0x6c &&
        source[start + 3] === 0x6c) || // null
      (n === 5 &&
        first === 0x66 &&
        source[start + 1] === 0x61 &&
        source[start + 2] === 0x6c &&
        source[start + 3] === 0x73 &&
        source[start + 4] === 0x65) || // false
      isPlainInteger(source, start, i)
    )
      return this.sink.bytes(source, start, i);
    // Any other number: the double JSON.parse would give, as JSON.stringify writes it (1.0 is 1).
    const token = source.toString('latin1', start, i);
    let parsed: unknown;
    try {
      parsed = JSON.parse(token);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'number') throw new SyntaxError(`unexpected ${token} at ${start}`);
    this.sink.ascii(JSON.stringify(parsed));
  }

  private array(): void {
    const { sink } = this;
    this.pos++; // [
    sink.byte(OPEN_BRACKET);
    this.space();
    if (this.source[this.pos] === CLOSE_BRACKET) {
      this.pos++;
      return sink.byte(CLOSE_BRACKET);
    }
    for (;;) {
      this.value();
      this.space();
      const c = this.pos < this.end ? this.source[this.pos++] : undefined;
      if (c === CLOSE_BRACKET) return sink.byte(CLOSE_BRACKET);
      if (c !== COMMA) throw new SyntaxError(`expected ',' or ']' at ${this.pos - 1}`);
      sink.byte(COMMA);
    }
  }

  private member(level: Member[], count: number): Member {
    let member = level[count];
    if (!member)
      level.push((member = { nameStart: 0, nameEnd: 0, start: 0, end: 0, decoded: undefined, prefix: 0 }));
    member.decoded = undefined;
    return member;
  }

  private object(replace: { readonly name: Buffer; readonly value: Buffer } | undefined): void {
    const { sink, source } = this;
    this.pos++; // {
    const level = (this.levels[this.depth] ??= []);
    this.depth++;
    const objectStart = sink.length;
    sink.byte(OPEN_BRACE);
    let count = 0;
    let plainNames = true;
    this.space();
    if (source[this.pos] === CLOSE_BRACE) this.pos++;
    else
      for (;;) {
        this.space();
        if (source[this.pos] !== QUOTE) throw new SyntaxError(`expected a member name at ${this.pos}`);
        const member = this.member(level, count++);
        member.start = sink.length;
        const copied = this.string();
        member.nameStart = member.start + 1;
        member.nameEnd = sink.length - 1;
        if (plainNames && (!copied || !asciiOnly(sink.buffer, member.nameStart, member.nameEnd)))
          plainNames = false;
        member.prefix = namePrefix(sink.buffer, member.nameStart, member.nameEnd);
        this.space();
        if (source[this.pos] !== COLON) throw new SyntaxError(`expected ':' at ${this.pos}`);
        this.pos++;
        sink.byte(COLON);
        this.value();
        member.end = sink.length;
        this.space();
        const c = this.pos < this.end ? source[this.pos++] : undefined;
        if (c === CLOSE_BRACE) break;
        if (c !== COMMA) throw new SyntaxError(`expected ',' or '}' at ${this.pos - 1}`);
        sink.byte(COMMA);
      }
    if (replace) {
      if (count > 0) sink.byte(COMMA);
      const member = this.member(level, count++);
      member.start = sink.length;
      sink.byte(QUOTE);
      member.nameStart = sink.length;
      sink.bytes(replace.name, 0, replace.name.length);
      member.nameEnd = sink.length;
      sink.byte(QUOTE);
      sink.byte(COLON);
      sink.bytes(replace.value, 0, replace.value.length);
      member.end = sink.length;
      if (!asciiOnly(sink.buffer, member.nameStart, member.nameEnd)) plainNames = false;
      member.prefix = namePrefix(sink.buffer, member.nameStart, member.nameEnd);
    }
    this.depth--;
    if (count > 1) this.sortMembers(level, count, objectStart, plainNames);
    sink.byte(CLOSE_BRACE);
  }

  /**
   * Rewrites the members after `{` at objectStart in canonical order, the last of each name kept.
   * Nothing moves when they are already in order with no name twice (a strict order).
   */
  private sortMembers(level: Member[], count: number, objectStart: number, plainNames: boolean): void {
    const { sink } = this;
    const buffer = sink.buffer;
    if (!plainNames)
      for (let i = 0; i < count; i++) {
        const member = level[i]!;
        member.decoded = JSON.parse(buffer.toString('utf8', member.start, member.nameEnd + 1)) as string;
      }
    let ordered = true;
    for (let i = 1; i < count && ordered; i++)
      if (compareNames(buffer, level[i - 1]!, level[i]!, plainNames) >= 0) ordered = false;
    if (ordered) return;
    // An order that sorted an object of as many members before, if it sorts these strictly (the
    // names then all differ): count - 1 comparisons instead of a sort's.
    const known = (this.knownOrders[count] ??= []);
    for (const order of known)
      if (strictlyOrdered(buffer, level, order, plainNames)) return this.rewrite(level, order, objectStart);
    // A stable insertion sort of the indexes (a few members; members of one name keep their order).
    const order = this.order;
    order.length = count;
    for (let i = 0; i < count; i++) {
      let j = i;
      while (j > 0 && compareNames(buffer, level[order[j - 1]!]!, level[i]!, plainNames) > 0) {
        order[j] = order[j - 1]!;
        j--;
      }
      order[j] = i;
    }
    // A later member of the same name stands instead (marked before the names are written over).
    let repeated = false;
    for (let k = 0; k + 1 < count; k++)
      if (compareNames(buffer, level[order[k]!]!, level[order[k + 1]!]!, plainNames) === 0) {
        order[k] = -1;
        repeated = true;
      }
    if (!repeated) {
      if (known.length === KNOWN_ORDERS_PER_COUNT) known.pop();
      known.unshift(order.slice());
    }
    this.rewrite(level, order, objectStart);
  }

  /** The members after `{` at objectStart written over in `order` (-1: a member left out). */
  private rewrite(level: Member[], order: readonly number[], objectStart: number): void {
    const { sink } = this;
    const buffer = sink.buffer;
    const count = order.length;
    const scratch = this.scratch;
    scratch.length = 0;
    const bodyStart = objectStart + 1;
    scratch.bytes(buffer, bodyStart, sink.length);
    sink.length = bodyStart;
    let first = true;
    for (let k = 0; k < count; k++) {
      if (order[k] === -1) continue;
      const member = level[order[k]!]!;
      if (!first) sink.byte(COMMA);
      first = false;
      sink.bytes(scratch.buffer, member.start - bodyStart, member.end - bodyStart);
    }
  }
}

/** Whether `order` puts the members in strictly increasing order of their names. */
function strictlyOrdered(
  buffer: Buffer,
  level: Member[],
  order: readonly number[],
  plainNames: boolean,
): boolean {
  for (let k = 1; k < order.length; k++)
    if (compareNames(buffer, level[order[k - 1]!]!, level[order[k]!]!, plainNames) >= 0) return false;
  return true;
}

/** A name's first three bytes, big-endian, 0 past its end: compared, the same order as the bytes'. */
function namePrefix(buffer: Buffer, start: number, end: number): number {
  const n = end - start;
  return (
    ((n > 0 ? buffer[start]! : 0) << 16) |
    ((n > 1 ? buffer[start + 1]! : 0) << 8) |
    (n > 2 ? buffer[start + 2]! : 0)
  );
}

/** Two members' names in UTF-16 code unit order: by their bytes when all are plain ASCII, else decoded. */
function compareNames(buffer: Buffer, a: Member, b: Member, plainNames: boolean): number {
  if (!plainNames) return a.decoded! < b.decoded! ? -1 : a.decoded! > b.decoded! ? 1 : 0;
  // A name ends before a byte of the other where its prefix has 0 (no name holds a 0 byte unescaped).
  const d = a.prefix - b.prefix;
  if (d !== 0) return d;
  const aStart = a.nameStart;
  const bStart = b.nameStart;
  const aLength = a.nameEnd - aStart;
  const bLength = b.nameEnd - bStart;
  const n = aLength < bLength ? aLength : bLength;
  for (let i = 0; i < n; i++) {
    const d = buffer[aStart + i]! - buffer[bStart + i]!;
    if (d !== 0) return d;
  }
  return aLength - bLength;
}

function asciiOnly(buffer: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buffer[i]! >= 0x80) return false;
  return true;
}
