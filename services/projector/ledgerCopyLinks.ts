import { hash } from 'node:crypto';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { ByteSink, CanonicalJsonWriter } from '#shared/audit/canonicalJsonBytes';
import { canonicalJson } from '#shared/audit/ledgerCanonicalJson';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { positionParameters } from '#shared/eventStore/postgres/eventRow';
import { DEFAULT_SCHEMA, sqlNames } from '#shared/eventStore/postgres/sqlNames';
import { BinaryCopyReader, int64At, timestampMsAt } from '#shared/infra/postgres/binaryCopy';
import type { LinkCheck, LinkSegment } from './ledgerLinks';

/**
 * The links of a stretch of the ledger checked straight from the PostgreSQL tables, for a store read
 * without upcasting (no upcaster registered: an upcast event is chained in its new shape, which only
 * the store's read gives). The events stream in by binary COPY in global order, and each one's
 * canonical bytes (canonicalEventText's) are written from the payloads' bytes as they arrive
 * (CanonicalJsonWriter): no row parsed into strings, no payload into objects. The ledger's rows come
 * a page at a time, packed into one bytea by the server, the next page read while this one is checked.
 */
export interface CopyLinkSources {
  /** The event store's database. */
  readonly events: pg.Pool;
  /** The event store's schema (default event_store). */
  readonly schema?: string;
  /** The read models' database, where `audit_events` is (the same database on the PostgreSQL adapter). */
  readonly ledger: pg.Pool;
}

/** Per ledger row in a packed page: seq, event id, commit and prepare positions, hash. */
const ROW_BYTES = 8 + 16 + 8 + 8 + 32;
const ROW_ID = 8;
const ROW_COMMIT = 24;
const ROW_PREPARE = 32;
const ROW_HASH = 40;

/**
 * Ledger rows with seq in (afterSeq, lastSeq], packed ROW_BYTES each in seq order by the server, as
 * one binary COPY field: the bytes as they are, with no hex text to decode.
 */
async function readLedgerPage(db: pg.Pool, afterSeq: number, lastSeq: number): Promise<Buffer> {
  const client = await db.connect();
  let failed = false;
  try {
    const stream = client.query(
      copyTo(`COPY (
        SELECT string_agg(int8send(a.seq) || uuid_send(a.event_id) || int8send(a.commit_position)
                          || int8send(a.prepare_position) || a.hash, ''::bytea ORDER BY a.seq)
          FROM audit_events a WHERE a.seq > ${Math.floor(afterSeq)} AND a.seq <= ${Math.floor(lastSeq)}
      ) TO STDOUT (FORMAT binary)`),
    );
    const reader = new BinaryCopyReader(1);
    let packed: Buffer | undefined;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      reader.push(chunk);
      while (reader.next())
        packed =
          reader.starts[0]! < 0 ? Buffer.alloc(0) : reader.buffer.subarray(reader.starts[0], reader.ends[0]);
    }
    reader.finish();
    return packed ?? Buffer.alloc(0);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    client.release(failed ? new Error('COPY failed') : undefined);
  }
}

/** The event's columns, in the order the COPY below sends them. */
const enum Field {
  Commit,
  Prepare,
  Id,
  Type,
  Stream,
  Revision,
  Data,
  Metadata,
  RecordedAt,
}
const FIELDS = 9;

const literal = (text: string) => Buffer.from(text, 'latin1');
const DATA_OPEN = literal('{"data":');
const ID_OPEN = literal(',"id":"');
const METADATA_OPEN = literal('","metadata":');
const REVISION_OPEN = literal(',"revision":"');
const STREAM_OPEN = literal('","stream":');
const TYPE_OPEN = literal(',"type":');
const RECORDED_AT = literal('recordedAt');

/**
 * What the chain hashes for an event, from its binary COPY fields, into one buffer: the hash before
 * it, then its canonical bytes (canonicalEventText):
 * {"data":…,"id":"…","metadata":{…metadata, recordedAt},"revision":"…","stream":"…","type":"…"}.
 */
export class ChainedBytesWriter {
  readonly sink = new ByteSink();
  private readonly json = new CanonicalJsonWriter();
  private readonly recordedAt = new ByteSink(32);
  /** The recorded time last written, in milliseconds (events of one transaction often share it). */
  private recordedAtMs = Number.NaN;

  /** The bytes hashed: `previous` (the chain's hash before the event), then the event's canonical bytes. */
  write(previous: Buffer, buffer: Buffer, starts: Int32Array, ends: Int32Array): Buffer {
    const { sink, json } = this;
    sink.length = 0;
    sink.bytes(previous, 0, previous.length);
    sink.bytes(DATA_OPEN, 0, DATA_OPEN.length);
    json.write(sink, buffer, starts[Field.Data]!, ends[Field.Data]!);
    sink.bytes(ID_OPEN, 0, ID_OPEN.length);
    writeUuid(sink, buffer, starts[Field.Id]!);
    sink.bytes(METADATA_OPEN, 0, METADATA_OPEN.length);
    const recordedAt = this.recordedAt;
    const ms = timestampMsAt(buffer, starts[Field.RecordedAt]!);
    if (ms !== this.recordedAtMs) {
      this.recordedAtMs = ms;
      recordedAt.length = 0;
      recordedAt.byte(0x22);
      recordedAt.ascii(new Date(ms).toISOString());
      recordedAt.byte(0x22);
    }
    const metadataStart = starts[Field.Metadata]!;
    const metadataEnd = ends[Field.Metadata]!;
    if (buffer[metadataStart] === 0x7b)
      json.write(sink, buffer, metadataStart, metadataEnd, { name: RECORDED_AT, value: recordedAt.view() });
    else sink.text(oddMetadata(buffer.toString('utf8', metadataStart, metadataEnd), recordedAt.view()));
    sink.bytes(REVISION_OPEN, 0, REVISION_OPEN.length);
    sink.ascii(String(int64At(buffer, starts[Field.Revision]!)));
    sink.bytes(STREAM_OPEN, 0, STREAM_OPEN.length);
    jsonString(sink, buffer, starts[Field.Stream]!, ends[Field.Stream]!);
    sink.bytes(TYPE_OPEN, 0, TYPE_OPEN.length);
    jsonString(sink, buffer, starts[Field.Type]!, ends[Field.Type]!);
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

/** The events after `after` up to `upTo`, at most `limit`, as binary COPY (positions compared as readAll compares them). */
function eventsCopySql(
  schema: string | undefined,
  after: GlobalPosition,
  upTo: GlobalPosition,
  limit: number,
): string {
  const names = sqlNames(schema ?? DEFAULT_SCHEMA);
  // COPY takes no parameters: the values are numbers written here, never text from outside.
  const [afterCommit, afterPrepare] = positionParameters(after);
  const [upToCommit, upToPrepare] = positionParameters(upTo);
  return `COPY (
    SELECT e.transaction_id, e.global_position, e.event_id, e.event_type, e.stream_name,
           e.stream_revision, e.data::text, e.metadata::text, e.recorded_at
      FROM ${names.events} e
     WHERE e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       AND (e.transaction_id, e.global_position) > ('${BigInt(afterCommit)}'::xid8, ${BigInt(afterPrepare)})
       AND (e.transaction_id, e.global_position) <= ('${BigInt(upToCommit)}'::xid8, ${BigInt(upToPrepare)})
     ORDER BY e.transaction_id, e.global_position
     LIMIT ${Math.floor(limit)}
  ) TO STDOUT (FORMAT binary)`;
}

/** Ledger pages read one ahead. */
class LedgerPages {
  private next: Promise<Buffer> | undefined;
  private readUpTo: number;

  constructor(
    private readonly db: pg.Pool,
    afterSeq: number,
    private readonly lastSeq: number,
    private readonly pageSize: number,
  ) {
    this.readUpTo = afterSeq;
    this.next = this.request();
  }

  private request(): Promise<Buffer> | undefined {
    if (this.readUpTo >= this.lastSeq) return undefined;
    const after = this.readUpTo;
    this.readUpTo = Math.min(this.lastSeq, after + this.pageSize);
    const page = readLedgerPage(this.db, after, this.readUpTo);
    page.catch(() => undefined); // awaited by take(), or abandoned when the check stops
    return page;
  }

  /** The next page (empty when there is none), the one after it already requested. */
  async take(): Promise<Buffer> {
    const current = this.next;
    if (!current) return Buffer.alloc(0);
    const page = await current;
    this.next = this.request();
    return page;
  }

  /** Waits for a page still in flight, so its connection is back in the pool. */
  async settle(): Promise<void> {
    await this.next?.catch(() => undefined);
  }
}

/**
 * Checks every link of a segment on its own: ledger row n holds the event the store has n-th after
 * the segment's start, at the same position, and its hash is SHA-256(the STORED hash of row n - 1 ‖
 * the event's canonical bytes). When every link from seq 1 (or from a proven seq) up to n holds, the
 * stored hashes are the recomputed chain by induction, so a segment checked this way, beside the
 * segments before it, proves what the sequential walk proves; and the first link that fails is where
 * the sequential walk, carrying its own recomputed hash, would stop too. Segments can thus be checked
 * in parallel (ledgerSegmentWorker.ts), the first broken one in seq order then named by the walk.
 * `onPage` hears the links checked after each ledger page; `stop`, asked then, ends the check early
 * (its answer no longer matters).
 */
export async function checkLinksByCopy(
  sources: CopyLinkSources,
  segment: LinkSegment,
  onPage?: (checked: number) => void,
  stop?: () => boolean,
): Promise<LinkCheck> {
  const { fromSeq, toSeq, pageSize } = segment;
  if (toSeq < fromSeq) return { firstBroken: undefined, checked: 0 };
  const pages = new LedgerPages(sources.ledger, fromSeq - 1, toSeq, pageSize);
  const writer = new ChainedBytesWriter();
  const reader = new BinaryCopyReader(FIELDS);
  const { starts, ends } = reader;
  let page: Buffer = Buffer.alloc(0);
  let pageAt = 0;
  let seq = fromSeq;
  const previous = Buffer.from(segment.previousHash);

  /** Ledger row `seq` (at pageAt) against the event the reader holds. */
  const holds = (): boolean => {
    const buffer = reader.buffer;
    const at = pageAt;
    if (!(
      page.length - at >= ROW_BYTES &&
      int64At(page, at) === seq &&
      buffer.compare(page, at + ROW_ID, at + ROW_ID + 16, starts[Field.Id], ends[Field.Id]) === 0 &&
      buffer.compare(page, at + ROW_COMMIT, at + ROW_COMMIT + 8, starts[Field.Commit], ends[Field.Commit]) ===
        0 &&
      buffer.compare(
        page,
        at + ROW_PREPARE,
        at + ROW_PREPARE + 8,
        starts[Field.Prepare],
        ends[Field.Prepare],
      ) === 0
    ))
      return false;
    // One call, no Hash object: a third of createHash's cost per event. The digest comes as a
    // one-byte string ('binary': a character per byte), compared with the stored hash byte by byte.
    const digest = hash('sha256', writer.write(previous, buffer, starts, ends), 'binary');
    const stored = at + ROW_HASH;
    for (let i = 0; i < 32; i++) if (digest.charCodeAt(i) !== page[stored + i]) return false;
    // The next event's input starts with this stored hash (which the digest equals).
    page.copy(previous, 0, stored, stored + 32);
    return true;
  };

  const client = await sources.events.connect();
  // A COPY left midway leaves its connection mid-protocol: then it is closed, not reused.
  let abandoned = false;
  try {
    // The events in index order as they are read, one backend: the planner, which cannot estimate a
    // range of (xid8, bigint), otherwise sorted every event on disk in parallel workers before sending
    // the first (nothing to hash meanwhile, and no core left to hash with).
    await client.query(
      'BEGIN; SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off; SET LOCAL max_parallel_workers_per_gather = 0',
    );
    page = await pages.take();
    const stream = client.query(
      copyTo(eventsCopySql(sources.schema, segment.startPosition, segment.storeHead, toSeq - fromSeq + 1)),
    );
    const end = (firstBroken: number | undefined): LinkCheck => {
      abandoned = true;
      stream.destroy();
      return { firstBroken, checked: seq - fromSeq };
    };
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      reader.push(chunk);
      while (reader.next()) {
        if (pageAt >= page.length) {
          onPage?.(seq - fromSeq);
          if (stop?.()) return end(undefined);
          page = await pages.take();
          pageAt = 0;
        }
        if (!holds()) return end(seq);
        pageAt += ROW_BYTES;
        seq++;
      }
    }
    reader.finish();
    await client.query('COMMIT');
    // Fewer events than rows: the first row without its event is where the links break.
    return seq > toSeq
      ? { firstBroken: undefined, checked: toSeq - fromSeq + 1 }
      : { firstBroken: seq, checked: seq - fromSeq };
  } catch (error) {
    abandoned = true;
    throw error;
  } finally {
    client.release(abandoned ? new Error('COPY abandoned') : undefined);
    await pages.settle();
  }
}
