import { hash } from 'node:crypto';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { ChainedBytesWriter } from '#shared/audit/chainedEventBytes';
import {
  EVENT_FIELD,
  EVENT_FIELDS,
  eventTables,
  eventsCopySql,
} from '#shared/eventStore/postgres/eventsCopy';
import { BinaryCopyReader, int64At } from '#shared/infra/postgres/binaryCopy';
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
  /** The read models' database, where `ledger` is (the same database on the PostgreSQL adapter). */
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
          FROM ledger a WHERE a.seq > ${Math.floor(afterSeq)} AND a.seq <= ${Math.floor(lastSeq)}
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

/**
 * Whether `field` (source[start, end)) is the `length` bytes of `page` at `at`: compared here, as a
 * native compare's call costs more than these few bytes.
 */
function sameBytes(
  page: Buffer,
  at: number,
  source: Buffer,
  start: number,
  end: number,
  length: number,
): boolean {
  if (end - start !== length) return false;
  for (let i = 0; i < length; i++) if (page[at + i] !== source[start + i]) return false;
  return true;
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
  const reader = new BinaryCopyReader(EVENT_FIELDS);
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
      sameBytes(page, at + ROW_ID, buffer, starts[EVENT_FIELD.Id]!, ends[EVENT_FIELD.Id]!, 16) &&
      sameBytes(page, at + ROW_COMMIT, buffer, starts[EVENT_FIELD.Commit]!, ends[EVENT_FIELD.Commit]!, 8) &&
      sameBytes(page, at + ROW_PREPARE, buffer, starts[EVENT_FIELD.Prepare]!, ends[EVENT_FIELD.Prepare]!, 8)
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
      copyTo(
        eventsCopySql(
          eventTables(sources.events, sources.schema).events,
          segment.startPosition,
          segment.storeHead,
          toSeq - fromSeq + 1,
        ),
      ),
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
