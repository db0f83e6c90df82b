import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { UPCASTERS } from '#shared/domain/upcasters';
import type { EventStore, GlobalPosition } from '#shared/eventStore/eventStore';
import { BinaryCopyReader } from '#shared/infra/postgres/binaryCopy';
import { positionParameters } from './eventRow';
import { DEFAULT_SCHEMA, sqlNames } from './sqlNames';

/**
 * The events of the PostgreSQL store's table in global order as binary COPY, for readers that take
 * them as bytes (the ledger's chain, checked or built): no row parsed into strings, no payload into
 * objects. What is read is what readAll would return (the same visibility rule and order), before
 * any upcasting: only for a store read without upcasters (eventTablesOf).
 */

/** The fields of each tuple, in the order eventsCopySql sends them. */
export const EVENT_FIELD = {
  /** xid8, 8 bytes: the position's commit part. */
  Commit: 0,
  /** bigint, 8 bytes: the position's prepare part. */
  Prepare: 1,
  /** uuid, 16 bytes. */
  Id: 2,
  Type: 3,
  Stream: 4,
  /** bigint, 8 bytes. */
  Revision: 5,
  /** The payload, jsonb in its binary form: a version byte, then its text (jsonText). */
  Data: 6,
  /** The stored metadata (without recordedAt), jsonb as Data is. */
  Metadata: 7,
  /** timestamptz, 8 bytes. */
  RecordedAt: 8,
} as const;
export const EVENT_FIELDS = 9;

/**
 * Where the JSON text of the jsonb field at buffer[start] begins: past the version byte of jsonb's
 * binary form (sent so, jsonb costs the server less than its ::text).
 */
export function jsonTextStart(buffer: Buffer, start: number): number {
  const version = buffer[start];
  if (version !== 1) throw new Error(`jsonb of an unknown binary version ${version}`);
  return start + 1;
}

/**
 * Settings for the session or transaction that runs eventsCopySql: the events in index order as
 * they are read, by one backend. The planner, which cannot estimate a range of (xid8, bigint),
 * otherwise sorted every event on disk in parallel workers before sending the first.
 */
export const EVENTS_COPY_SETTINGS =
  'SET enable_sort = off; SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0';

/**
 * The events of `eventsTable` (quoted, SqlNames.events) after `after` up to `upTo`, at most
 * `limit`, as binary COPY (positions compared as readAll compares them).
 */
export function eventsCopySql(
  eventsTable: string,
  after: GlobalPosition,
  upTo: GlobalPosition,
  limit: number,
): string {
  // COPY takes no parameters: the values are numbers written here, never text from outside.
  const [afterCommit, afterPrepare] = positionParameters(after);
  const [upToCommit, upToPrepare] = positionParameters(upTo);
  return `COPY (
    SELECT e.transaction_id, e.global_position, e.event_id, e.event_type, e.stream_name,
           e.stream_revision, e.data, e.metadata, e.recorded_at
      FROM ${eventsTable} e
     WHERE e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       AND (e.transaction_id, e.global_position) > ('${BigInt(afterCommit)}'::xid8, ${BigInt(afterPrepare)})
       AND (e.transaction_id, e.global_position) <= ('${BigInt(upToCommit)}'::xid8, ${BigInt(upToPrepare)})
     ORDER BY e.transaction_id, e.global_position
     LIMIT ${Math.floor(limit)}
  ) TO STDOUT (FORMAT binary)`;
}

/** Where a store's events are: the PostgreSQL store's pool and its events table. */
export interface EventTables {
  readonly pool: pg.Pool;
  /** Quoted (SqlNames.events). */
  readonly events: string;
}

/** The events table of the store in `schema` (default event_store), read through `pool`. */
export function eventTables(pool: pg.Pool, schema?: string): EventTables {
  return { pool, events: sqlNames(schema ?? DEFAULT_SCHEMA).events };
}

/**
 * The tables behind `store` when reading them gives exactly what the store's reads give: the
 * PostgreSQL adapter (its pool and SqlNames), with no upcaster registered (an upcast event only
 * exists in the store's read). undefined otherwise (EventStoreDB). A wrapper that spreads the
 * adapter keeps its pool and names, so it must not change what is read (instrumentEventStore counts
 * appends; upcastingEventStore is the adapter itself while UPCASTERS is empty).
 */
export function eventTablesOf(store: EventStore): EventTables | undefined {
  if (UPCASTERS.size > 0) return undefined;
  const candidate = store as Partial<{ pool: unknown; names: { events?: unknown } }>;
  const pool = candidate.pool as pg.Pool | undefined;
  const events = candidate.names?.events;
  if (typeof pool?.connect !== 'function' || typeof events !== 'string') return undefined;
  return { pool, events };
}

/** One batch of events as binary COPY bytes (header, tuples, trailer), with their count and last position. */
export interface CopiedEvents {
  readonly bytes: Buffer;
  readonly count: number;
  /** The last event's position (`after` when the batch is empty). */
  readonly end: GlobalPosition;
}

/**
 * The next batch after `after`, up to `upTo`, on `client` (a session with EVENTS_COPY_SETTINGS):
 * the COPY's bytes whole, checked tuple by tuple.
 */
export async function readCopiedEvents(
  client: pg.PoolClient,
  eventsTable: string,
  after: GlobalPosition,
  upTo: GlobalPosition,
  limit: number,
): Promise<CopiedEvents> {
  const chunks: Buffer[] = [];
  const stream = client.query(copyTo(eventsCopySql(eventsTable, after, upTo, limit)));
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const reader = new BinaryCopyReader(EVENT_FIELDS);
  reader.push(bytes);
  let count = 0;
  let lastCommit = -1;
  let lastPrepare = -1;
  while (reader.next()) {
    count++;
    lastCommit = reader.starts[EVENT_FIELD.Commit]!;
    lastPrepare = reader.starts[EVENT_FIELD.Prepare]!;
  }
  reader.finish();
  const end =
    count === 0
      ? after
      : { commit: bytes.readBigUInt64BE(lastCommit), prepare: bytes.readBigInt64BE(lastPrepare) };
  return { bytes, count, end };
}
