import type pg from 'pg';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { positionParameters } from '#shared/eventStore/postgres/eventRow';
import { DEFAULT_SCHEMA, sqlNames } from '#shared/eventStore/postgres/sqlNames';
import { canonicalFromJsonText } from '#shared/audit/canonicalFromJsonText';
import { canonicalJson } from '#shared/audit/ledgerCanonicalJson';
import type { Page } from './ledgerPages';

/**
 * An event as the ledger chains it, read straight from the PostgreSQL events table: its id, its
 * position (decimal text) and the text of its canonical bytes, the same text canonicalEventText
 * gives for the event readAll returns. The payloads are never parsed into objects: their canonical
 * form is computed from the text PostgreSQL prints (canonicalFromJsonText), and the recorded time is
 * written as pg's parser and toISOString would write it. The connection must print times in UTC, ISO
 * style (EVENT_TEXTS_CONNECTION_OPTIONS). For stores read without upcasting (no
 * upcaster registered): an upcast event is chained in its new shape, which only the store's read
 * gives.
 */
export interface EventText {
  readonly id: string;
  readonly commit: string;
  readonly prepare: string;
  /**
   * The canonical bytes, UTF-8. Made at once from the text (a tree of the many small strings it was
   * built from, which would otherwise stay alive, all of them, until the page was hashed: most of
   * the CPU went to the garbage collector copying them).
   */
  readonly bytes: Buffer;
}

const VISIBLE = 'transaction_id < pg_snapshot_xmin(pg_current_snapshot())';

/**
 * The events after `after` up to `upTo` (the store's head at the start: all of them readable), at
 * most `pageSize`, in global order. Positions are compared as readAll compares them.
 */
export async function readEventTexts(
  db: pg.Pool | pg.PoolClient,
  schema: string | undefined,
  after: GlobalPosition,
  upTo: GlobalPosition,
  pageSize: number,
): Promise<Page<EventText>> {
  const names = sqlNames(schema ?? DEFAULT_SCHEMA);
  const { rows } = await db.query<string[]>({
    name: `ledgerEventTexts:${names.schema}`,
    // Qualified: a bare name in ORDER BY would be the output column of that name, the text.
    text: `SELECT e.transaction_id::text AS c, e.global_position::text AS p, e.event_id::text AS id,
                  e.event_type, e.stream_name, e.stream_revision::text AS r, e.data::text AS d,
                  e.metadata::text AS m, e.recorded_at::text AS t
             FROM ${names.events} e
            WHERE e.${VISIBLE} AND (e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)
              AND (e.transaction_id, e.global_position) <= ($3::xid8, $4::bigint)
            ORDER BY e.transaction_id, e.global_position
            LIMIT $5`,
    values: [...positionParameters(after), ...positionParameters(upTo), pageSize],
    rowMode: 'array',
  });
  const items = rows.map(eventText);
  return { items, done: items.length < pageSize };
}

function eventText(row: string[]): EventText {
  const [commit, prepare, id, type, stream, revision, data, metadata, recorded] = row as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const recordedAt = JSON.stringify(isoTime(recorded));
  const metadataText =
    metadata.charCodeAt(0) === 123 // {
      ? canonicalFromJsonText(metadata, ['recordedAt', recordedAt])
      : canonicalJson({ ...(JSON.parse(metadata) as object), recordedAt: JSON.parse(recordedAt) as string })!;
  return {
    id,
    commit,
    prepare,
    bytes: Buffer.from(
      `{"data":${canonicalFromJsonText(data)},"id":${JSON.stringify(id)},"metadata":${metadataText},` +
        `"revision":"${revision}","stream":${JSON.stringify(stream)},"type":${JSON.stringify(type)}}`,
      'utf8',
    ),
  };
}

/**
 * What a connection for readEventTexts must set: its recorded times are printed in UTC, ISO style
 * ("2026-11-27 07:39:56.123456+00"), which isoTime reads (cheaper than to_char in the query). Any
 * other form makes isoTime throw: never a wrong time.
 */
export const EVENT_TEXTS_CONNECTION_OPTIONS = '-c TimeZone=UTC -c DateStyle=ISO,YMD';

const UTC_TIME = /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?\+00$/;

/**
 * The recorded time, as PostgreSQL prints a timestamptz in UTC and ISO style, as toISOString()
 * writes the Date pg's parser makes of it: milliseconds = 1000 × the fraction of a second, truncated
 * (Date.UTC truncates), as pg's parser computes them.
 */
export function isoTime(utc: string): string {
  const m = UTC_TIME.exec(utc);
  if (!m) throw new Error(`unexpected recorded time ${utc} (not UTC, ISO style)`);
  const ms = m[7] ? 1000 * parseFloat(m[7]) : 0;
  const year = Number(m[1]);
  const date = new Date(
    Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), ms),
  );
  if (year < 100) date.setUTCFullYear(year);
  return date.toISOString();
}
