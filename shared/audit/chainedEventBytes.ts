import { EVENT_FIELD, jsonTextStart } from '#shared/eventStore/postgres/eventsCopy';
import { int64At, timestampMsAt } from '#shared/infra/postgres/binaryCopy';
import { ByteSink, CanonicalJsonWriter } from './canonicalJsonBytes';
import { canonicalJson } from './ledgerCanonicalJson';

/** Read once: a module's export read per event costs a getter call where modules are transpiled (tsx). */
const FIELD = EVENT_FIELD;
const literal = (text: string) => Buffer.from(text, 'latin1');
const DATA_OPEN = literal('{"data":');
const ID_OPEN = literal(',"id":"');
const METADATA_OPEN = literal('","metadata":');
const REVISION_OPEN = literal(',"revision":"');
const STREAM_OPEN = literal('","stream":');
const TYPE_OPEN = literal(',"type":');
const RECORDED_AT = literal('recordedAt');

/**
 * What the ledger's chain hashes for an event read as a binary COPY tuple (eventsCopy.ts), written
 * into one buffer: the hash before it, then its canonical bytes (canonicalEventText's)
 * {"data":…,"id":"…","metadata":{…metadata, recordedAt},"revision":"…","stream":"…","type":"…"},
 * each payload written from its bytes (CanonicalJsonWriter): no string made of the event.
 * After write(), the canonical data and metadata are sink.buffer[dataStart, dataEnd) and
 * [metadataStart, metadataEnd), and recordedAtMs is the event's recorded time.
 */
export class ChainedBytesWriter {
  readonly sink = new ByteSink();
  dataStart = 0;
  dataEnd = 0;
  metadataStart = 0;
  metadataEnd = 0;
  /** The recorded time last written, in milliseconds (events of one transaction often share it). */
  recordedAtMs = Number.NaN;
  private readonly json = new CanonicalJsonWriter();
  private readonly recordedAt = new ByteSink(32);

  /** The bytes hashed: `previous` (the chain's hash before the event), then the event's canonical bytes. */
  write(previous: Buffer, buffer: Buffer, starts: Int32Array, ends: Int32Array): Buffer {
    const { sink, json } = this;
    sink.length = 0;
    sink.bytes(previous, 0, previous.length);
    sink.bytes(DATA_OPEN, 0, DATA_OPEN.length);
    this.dataStart = sink.length;
    json.write(sink, buffer, jsonTextStart(buffer, starts[FIELD.Data]!), ends[FIELD.Data]!);
    this.dataEnd = sink.length;
    sink.bytes(ID_OPEN, 0, ID_OPEN.length);
    writeUuid(sink, buffer, starts[FIELD.Id]!);
    sink.bytes(METADATA_OPEN, 0, METADATA_OPEN.length);
    const recordedAt = this.recordedAt;
    const ms = timestampMsAt(buffer, starts[FIELD.RecordedAt]!);
    if (ms !== this.recordedAtMs) {
      this.recordedAtMs = ms;
      recordedAt.length = 0;
      recordedAt.byte(0x22);
      recordedAt.ascii(new Date(ms).toISOString());
      recordedAt.byte(0x22);
    }
    const metadataStart = jsonTextStart(buffer, starts[FIELD.Metadata]!);
    const metadataEnd = ends[FIELD.Metadata]!;
    this.metadataStart = sink.length;
    if (buffer[metadataStart] === 0x7b)
      json.write(sink, buffer, metadataStart, metadataEnd, { name: RECORDED_AT, value: recordedAt.view() });
    else sink.text(oddMetadata(buffer.toString('utf8', metadataStart, metadataEnd), recordedAt.view()));
    this.metadataEnd = sink.length;
    sink.bytes(REVISION_OPEN, 0, REVISION_OPEN.length);
    sink.ascii(String(int64At(buffer, starts[FIELD.Revision]!)));
    sink.bytes(STREAM_OPEN, 0, STREAM_OPEN.length);
    jsonString(sink, buffer, starts[FIELD.Stream]!, ends[FIELD.Stream]!);
    sink.bytes(TYPE_OPEN, 0, TYPE_OPEN.length);
    jsonString(sink, buffer, starts[FIELD.Type]!, ends[FIELD.Type]!);
    sink.byte(0x7d);
    return sink.view();
  }
}

/** Metadata that is not an object (never written by the service): as readAll's spread makes it. */
function oddMetadata(text: string, recordedAt: Buffer): string {
  return canonicalJson({
    ...(JSON.parse(text) as object),
    recordedAt: JSON.parse(recordedAt.toString('utf8')) as string,
  })!;
}

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/** A binary uuid (16 bytes at `at`) in its text form, lowercase with dashes. */
function writeUuid(sink: ByteSink, buffer: Buffer, at: number): void {
  sink.reserve(36);
  const out = sink.buffer;
  let o = sink.length;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) out[o++] = 0x2d;
    const b = buffer[at + i]!;
    out[o++] = HEX_DIGITS[b >> 4]!;
    out[o++] = HEX_DIGITS[b & 15]!;
  }
  sink.length = o;
}

/** A text column as JSON.stringify writes the string: its bytes in quotes unless one needs escaping. */
function jsonString(sink: ByteSink, buffer: Buffer, start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const c = buffer[i]!;
    if (c < 0x20 || c === 0x22 || c === 0x5c)
      return sink.text(JSON.stringify(buffer.toString('utf8', start, end)));
  }
  sink.byte(0x22);
  sink.bytes(buffer, start, end);
  sink.byte(0x22);
}
