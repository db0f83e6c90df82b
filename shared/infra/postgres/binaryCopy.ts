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
    for (let i = 0; i < count; i++) {
      if (buffer.length - p < 4) return false;
      const length = buffer.readInt32BE(p);
      p += 4;
      if (length === -1) {
        starts[i] = -1;
        ends[i] = -1;
        continue;
      }
      if (buffer.length - p < length) return false;
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
