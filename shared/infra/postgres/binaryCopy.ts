/**
 * PostgreSQL's binary COPY format, read as it streams (`COPY (...) TO STDOUT (FORMAT binary)` through
 * pg-copy-streams): a signature, then one tuple per row, each field as a 32-bit length and its bytes
 * in the type's binary send form (text: its UTF-8 bytes; bigint, xid8: 8 bytes big-endian; uuid: 16
 * bytes; timestamptz: microseconds since 2000-01-01 UTC, 8 bytes). No text escaping to undo and no
 * string made per field: a reader takes what it needs straight from the bytes.
 */

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** Signature, flags (32 bits), header extension length (32 bits). */
const HEADER_BYTES = SIGNATURE.length + 8;

/**
 * Cuts a binary COPY stream into tuples, whatever the chunks' boundaries: push() each chunk, then
 * next() until it answers false; a tuple split between two chunks is joined (only its own bytes are
 * copied). The current tuple's fields are `buffer[starts[i], ends[i])` (start -1: null), valid until
 * the next call. Throws on a malformed stream or a tuple of an unexpected width.
 */
export class BinaryCopyReader {
  buffer: Buffer = Buffer.alloc(0);
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  private at = 0;
  private headerRead = false;
  private ended = false;

  constructor(private readonly fields: number) {
    this.starts = new Int32Array(fields);
    this.ends = new Int32Array(fields);
  }

  /** Adds the stream's next chunk (after next() answered false). */
  push(chunk: Buffer): void {
    const rest = this.buffer.length - this.at;
    this.buffer = rest > 0 ? Buffer.concat([this.buffer.subarray(this.at), chunk]) : chunk;
    this.at = 0;
  }

  /** Reads the next whole tuple; false when the bytes pushed so far hold no more (or the trailer came). */
  next(): boolean {
    const { buffer, starts, ends } = this;
    if (!this.headerRead) {
      if (buffer.length < HEADER_BYTES) return false;
      if (!buffer.subarray(0, SIGNATURE.length).equals(SIGNATURE))
        throw new Error('not a binary COPY stream (bad signature)');
      const extension = buffer.readUInt32BE(SIGNATURE.length + 4);
      if (buffer.length < HEADER_BYTES + extension) return false;
      this.at = HEADER_BYTES + extension;
      this.headerRead = true;
    }
    const at = this.at;
    if (buffer.length - at < 2) return false;
    if (this.ended) throw new Error('binary COPY data after its trailer');
    const count = buffer.readInt16BE(at);
    if (count === -1) {
      this.ended = true;
      this.at = at + 2;
      return false;
    }
    if (count !== this.fields)
      throw new Error(`binary COPY tuple of ${count} fields, expected ${this.fields}`);
    let p = at + 2;
    const size = buffer.length;
    for (let i = 0; i < count; i++) {
      if (size - p < 4) return false;
      // readInt32BE's checks, once per field of every row, cost more than the four bytes' arithmetic.
      const length = (buffer[p]! << 24) | (buffer[p + 1]! << 16) | (buffer[p + 2]! << 8) | buffer[p + 3]!;
      p += 4;
      if (length === -1) {
        starts[i] = -1;
        ends[i] = -1;
        continue;
      }
      if (size - p < length) return false;
      starts[i] = p;
      ends[i] = p + length;
      p += length;
    }
    this.at = p;
    return true;
  }

  /** At the end of the stream: throws when a tuple was cut short or the trailer is missing. */
  finish(): void {
    if (this.at < this.buffer.length) throw new Error('binary COPY stream ended inside a tuple');
    if (!this.ended) throw new Error('binary COPY stream ended without its trailer');
  }
}

/** A signed 64-bit field as a number (exact below 2^53; larger throws rather than round). */
export function int64At(buffer: Buffer, at: number): number {
  const high = buffer.readInt32BE(at);
  const value = high * 4294967296 + buffer.readUInt32BE(at + 4);
  if (!Number.isSafeInteger(value)) throw new RangeError('64-bit value beyond 2^53');
  return value;
}

/** Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC). */
const POSTGRES_EPOCH_MS = 946_684_800_000;

/**
 * A binary timestamptz as pg's parser and Date.toISOString give it: milliseconds since the Unix
 * epoch, the microseconds below them dropped (pg's parser truncates the fraction of a second).
 */
export function timestampMsAt(buffer: Buffer, at: number): number {
  return Math.floor(int64At(buffer, at) / 1000) + POSTGRES_EPOCH_MS;
}

const TWO_TO_32 = 4294967296;
const TRAILER = Buffer.from([0xff, 0xff]);

/**
 * Writes rows in PostgreSQL's binary COPY format (`COPY <table> (<columns>) FROM STDIN (FORMAT
 * binary)`): a signature, then per tuple its field count and each field as a 32-bit length and its
 * bytes in the type's binary receive form, then a trailer. Nothing for the server to parse but the
 * values themselves (jsonb's text; no escapes, no hex, no dates as text). Fields are written in
 * the table's column order, one method per type; take() hands over what is written so far, to send
 * as one CopyData piece while the writer goes on in a fresh buffer.
 */
export class BinaryCopyWriter {
  private buffer: Buffer;
  private length = 0;

  constructor(private readonly chunkBytes = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(chunkBytes + 16 * 1024);
    this.raw(SIGNATURE, 0, SIGNATURE.length);
    this.int32(0); // flags
    this.int32(0); // header extension length
  }

  /** Bytes written and not yet taken. */
  get pending(): number {
    return this.length;
  }

  /** True once a piece of about chunkBytes is ready to take. */
  get full(): boolean {
    return this.length >= this.chunkBytes;
  }

  /** The bytes written so far (the writer continues in a new buffer). */
  take(): Buffer {
    const taken = this.buffer.subarray(0, this.length);
    // A piece and the row that fills it up: room for most rows without growing.
    this.buffer = Buffer.allocUnsafe(this.chunkBytes + 16 * 1024);
    this.length = 0;
    return taken;
  }

  /** The trailer, then take(): the end of the data. */
  end(): Buffer {
    this.raw(TRAILER, 0, TRAILER.length);
    return this.take();
  }

  /** Starts a tuple of `fields` fields. */
  tuple(fields: number): void {
    this.reserve(2);
    const buffer = this.buffer;
    buffer[this.length++] = fields >>> 8;
    buffer[this.length++] = fields;
  }

  null(): void {
    this.reserve(4);
    this.int32(-1);
  }

  /** A bigint from a safe integer. */
  int8(value: number): void {
    this.reserve(12);
    this.int32(8);
    const high = Math.floor(value / TWO_TO_32);
    this.int32(high);
    this.int32(value - high * TWO_TO_32);
  }

  /** An integer (32 bits). */
  int4(value: number): void {
    if (!Number.isInteger(value) || value < -2147483648 || value > 2147483647)
      throw new RangeError(`${value} is out of range for an integer`);
    this.reserve(8);
    this.int32(4);
    this.int32(value);
  }

  bool(value: boolean): void {
    this.reserve(5);
    this.int32(1);
    this.buffer[this.length++] = value ? 1 : 0;
  }

  /** A field of source[start, end) as it is: text's UTF-8, bytea, a uuid's or a bigint's binary form. */
  bytes(source: Buffer, start: number, end: number): void {
    this.reserve(4 + end - start);
    this.int32(end - start);
    this.raw(source, start, end);
  }

  /** A bytea from a string of one character per byte (a digest in Node's 'binary' encoding). */
  binaryString(value: string): void {
    this.reserve(4 + value.length);
    this.int32(value.length);
    this.length += this.buffer.write(value, this.length, 'latin1');
  }

  text(value: string): void {
    this.reserve(4 + value.length * 3);
    const at = this.length;
    this.length += 4;
    const written = this.buffer.write(value, this.length, 'utf8');
    this.length = at;
    this.int32(written);
    this.length += written;
  }

  /** A jsonb from the JSON text in source[start, end) (its binary form: a version byte, then the text). */
  jsonb(source: Buffer, start: number, end: number): void {
    this.reserve(5 + end - start);
    this.int32(1 + end - start);
    this.buffer[this.length++] = 1;
    this.raw(source, start, end);
  }

  /** A jsonb from JSON text. */
  jsonbText(value: string): void {
    this.reserve(5 + value.length * 3);
    const at = this.length;
    this.length += 4;
    this.buffer[this.length++] = 1;
    const written = this.buffer.write(value, this.length, 'utf8');
    this.length = at;
    this.int32(1 + written);
    this.length += 1 + written;
  }

  /** A timestamptz from milliseconds since the Unix epoch (microseconds since PostgreSQL's). */
  timestampMs(ms: number): void {
    this.int8((ms - POSTGRES_EPOCH_MS) * 1000);
  }

  /** Four bytes big-endian, room reserved by the caller. */
  private int32(value: number): void {
    const buffer = this.buffer;
    const at = this.length;
    buffer[at] = value >>> 24;
    buffer[at + 1] = value >>> 16;
    buffer[at + 2] = value >>> 8;
    buffer[at + 3] = value;
    this.length = at + 4;
  }

  private raw(source: Buffer, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    if (n < 48) {
      // Short runs (ids, numbers, names) are copied here: a native call costs more than the loop.
      const buffer = this.buffer;
      let at = this.length;
      for (let i = start; i < end; i++) buffer[at++] = source[i]!;
    } else source.copy(this.buffer, this.length, start, end);
    this.length += n;
  }

  private reserve(n: number): void {
    const needed = this.length + n;
    if (needed <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
