/**
 * The event log's SQL (decisions.md "Audit"): pages in global order (`seq`), every filter answered
 * from an index of audit_events (see services/projector/projections/auditLogProjection).
 *
 * Positions and times become seq bounds first, one index lookup each: `after` is the greatest seq
 * at or before the position (a position not in the table works too); `since` the first seq whose
 * recorded_hwm (the running maximum of recorded_at, which never decreases with seq) reaches it, as
 * no earlier event can be recorded at or after it. `until` also gives a seq, past which every event
 * was recorded after an earlier one that is already too late: up to it, `until` holds for every
 * row; past it, only for the rare "stragglers" recorded before an event ordered ahead of them
 * (a transaction that appended long after it began), found by the interval
 * [recorded_at, recorded_hwm] that contains `until`. The times stay exact row filters too.
 *
 * A page is then one index range per event type (or one range of the filter's index), each in seq
 * order and cut at the page size, merged: however far in the past a narrow time range lies, and
 * however common the type elsewhere, no scan goes beyond the rows the page needs. A type's range
 * carries each row's time (a covering index): the rows skipped for their time are never read. The
 * stragglers, all ordered after those ranges, are looked up only when the ranges leave the page
 * short: a lookup reads every event recorded across `until` (thousands under concurrent writers).
 */
import type { Pool } from 'pg';
import type { EventLogFilter } from './auditEventsFilter';

/** Where a filter's events lie in seq order, at the time the bounds were taken. */
export interface SeqBounds {
  /** No event can match (nothing recorded at or after `since` yet). */
  readonly empty: boolean;
  /** Exclusive lower bound. */
  readonly after: number;
  /** With `until`: from here on, only stragglers can match; undefined when every row may. */
  readonly stragglersFrom: number | undefined;
  /** The newest seq when the bounds were taken (an export stops there). */
  readonly head: number;
}

const seqOrNull = (value: string | null | undefined): number | null =>
  value === null || value === undefined ? null : Number(value);

/** One round trip: the seq bounds of `after`, `since` and `until`, and the head. */
export async function seqBounds(pool: Pool, filter: EventLogFilter): Promise<SeqBounds> {
  const values: unknown[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const columns = ['(SELECT max(seq) FROM audit_events) AS head'];
  if (filter.after)
    columns.push(`(SELECT seq FROM audit_events
        WHERE (commit_position, prepare_position) <= (${param(filter.after.commit.toString())}::bigint,
                                                      ${param(filter.after.prepare.toString())}::bigint)
        ORDER BY commit_position DESC, prepare_position DESC LIMIT 1) AS after`);
  const firstReaching = (time: Date): string =>
    `(SELECT seq FROM audit_events WHERE recorded_hwm >= ${param(time.toISOString())}::timestamptz
       ORDER BY recorded_hwm, seq LIMIT 1)`;
  if (filter.since) columns.push(`${firstReaching(filter.since)} AS since`);
  if (filter.until) columns.push(`${firstReaching(filter.until)} AS until`);
  const { rows } = await pool.query<Record<'head' | 'after' | 'since' | 'until', string | null>>(
    `SELECT ${columns.join(', ')}`,
    values,
  );
  const row = rows[0];
  const head = seqOrNull(row?.head) ?? 0;
  const since = seqOrNull(row?.since);
  const afterSeq = filter.after ? (seqOrNull(row?.after) ?? 0) : 0;
  return {
    empty: filter.since !== undefined && since === null,
    after: Math.max(afterSeq, since === null ? 0 : since - 1),
    stragglersFrom: seqOrNull(row?.until) ?? undefined,
    head,
  };
}

export interface PageRequest {
  /** Exclusive: the page starts after this seq. */
  readonly from: number;
  readonly limit: number;
  /** Inclusive upper bound (an export's head), if any. */
  readonly upTo?: number;
}

/**
 * The columns of an export line, as text: the payload as PostgreSQL prints its jsonb (no parse
 * here), the time as epoch milliseconds (no date parse), each row an array (no object per row).
 */
const LINE_COLUMNS = `e.commit_position || '.' || e.prepare_position, e.event_id, e.event_type, e.resource_type,
  e.resource_id, e.revision, floor(extract(epoch FROM e.recorded_at) * 1000)::bigint, e.actor_id, u.username,
  e.request_id, e.data::text`;

type LineRow = [
  position: string,
  id: string,
  type: string,
  resourceType: string | null,
  resourceId: string | null,
  revision: string | null,
  recordedMs: string,
  actorId: number | null,
  username: string | null,
  requestId: string | null,
  data: string,
];

/** A LineRow followed by the row's seq. */
type SeqLineRow = [...LineRow, seq: string];

const text = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));

/** The entry of auditEntryJson, as its JSON text; tests/audit/eventLog.e2e.test.ts holds the two equal. */
function entryText(row: SeqLineRow): string {
  const [
    position,
    id,
    type,
    resourceType,
    resourceId,
    revision,
    recordedMs,
    actorId,
    username,
    requestId,
    data,
  ] = row;
  let resource = 'null';
  if (resourceType !== null && resourceId !== null) {
    const uuid = resourceType === 'token' || resourceType === 'file_upload';
    const resourceIdJson = uuid ? text(resourceId) : JSON.stringify(Number(resourceId));
    resource = `{"type":${text(resourceType)},"id":${resourceIdJson}}`;
  }
  const actor = actorId === null ? 'null' : `{"id":${actorId},"username":${text(username)}}`;
  const recordedAt = new Date(Number(recordedMs)).toISOString();
  return (
    `{"position":"${position}","id":"${id}","type":${text(type)},"resource":${resource},` +
    `"revision":${revision ?? 'null'},"recorded_at":"${recordedAt}","actor":${actor},` +
    `"request_id":${text(requestId)},"data":${data}}`
  );
}

export interface NdjsonPage {
  /** The page's entries as UTF-8, one per line, each line ended by a newline; empty when none. */
  readonly bytes: Buffer;
  readonly count: number;
  /** The seq of the last entry (the next page starts after it). */
  readonly lastSeq: number;
}

/** Bytes a page's buffer starts with per entry (it grows when the entries need more). */
const ENTRY_BYTES_GUESS = 512;

/**
 * A page as NDJSON, in seq order: at most `limit` entries. Written without parsing any payload or
 * making an object per event: an export's memory stays flat and its rate high. Each entry is
 * encoded straight into the page's buffer: one string of the page's 2,000 entries joined, then
 * encoded for the socket, cost about 4 µs per entry (flattening the joined string, then copying it)
 * where this costs 0.5.
 */
export async function ndjsonPage(
  pool: Pool,
  filter: EventLogFilter,
  bounds: SeqBounds,
  page: PageRequest,
): Promise<NdjsonPage> {
  const rows = await lineRows(pool, filter, bounds, page);
  let bytes = Buffer.allocUnsafe(rows.length * ENTRY_BYTES_GUESS);
  let used = 0;
  for (const row of rows) {
    const entry = entryText(row);
    // A UTF-16 code unit is at most three bytes of UTF-8.
    const most = used + entry.length * 3 + 1;
    if (most > bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(most, bytes.length * 2));
      bytes.copy(grown, 0, 0, used);
      bytes = grown;
    }
    used += bytes.write(entry, used);
    bytes[used++] = 0x0a;
  }
  const last = rows[rows.length - 1];
  return { bytes: bytes.subarray(0, used), count: rows.length, lastSeq: last ? Number(last[11]) : page.from };
}

export interface EntryTexts {
  /** Each entry's JSON text (auditEntryJson's), in seq order. */
  readonly entries: string[];
  /** Each entry's position. */
  readonly positions: string[];
}

/** A page of the event log as JSON texts, written as the export writes its lines (no payload parsed). */
export async function entryTexts(
  pool: Pool,
  filter: EventLogFilter,
  bounds: SeqBounds,
  page: PageRequest,
): Promise<EntryTexts> {
  const rows = await lineRows(pool, filter, bounds, page);
  return { entries: rows.map(entryText), positions: rows.map((row) => row[0]) };
}

async function lineRows(
  pool: Pool,
  filter: EventLogFilter,
  bounds: SeqBounds,
  page: PageRequest,
): Promise<SeqLineRow[]> {
  if (bounds.empty) return [];
  const { where, values } = pageWhere(filter, bounds, page);
  const { rows } = await pool.query<SeqLineRow>({
    text: `SELECT ${LINE_COLUMNS}, e.seq FROM audit_events e LEFT JOIN users u ON u.id = e.actor_id
            WHERE ${where}`,
    values,
    rowMode: 'array',
  });
  return rows;
}

/**
 * The WHERE clause (with ORDER BY and LIMIT) of a page of `audit_events e`, with its bind values:
 * one index range read in place, or the seqs of several ranges merged, then the stragglers if the
 * page is still short.
 */
export function pageWhere(
  filter: EventLogFilter,
  bounds: SeqBounds,
  page: PageRequest,
): { where: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = (value: unknown, cast = ''): string => {
    values.push(value);
    return `$${values.length}${cast}`;
  };
  const limit = param(page.limit, '::int');
  const from = param(Math.max(page.from, bounds.after), '::bigint');

  const common: string[] = [`e.seq > ${from}`];
  if (page.upTo !== undefined) common.push(`e.seq <= ${param(page.upTo, '::bigint')}`);
  if (filter.resource) {
    common.push(`e.resource_type = ${param(filter.resource.type)}`);
    if (filter.resource.id !== undefined) common.push(`e.resource_id = ${param(filter.resource.id)}`);
  }
  if (filter.actor !== undefined) common.push(`e.actor_id = ${param(filter.actor, '::int')}`);
  if (filter.requestId !== undefined) common.push(`e.request_id = ${param(filter.requestId)}`);
  if (!filter.includeInternal) common.push('NOT e.internal');
  if (filter.since) common.push(`e.recorded_at >= ${param(filter.since.toISOString(), '::timestamptz')}`);
  const until = filter.until ? param(filter.until.toISOString(), '::timestamptz') : undefined;
  if (until) common.push(`e.recorded_at < ${until}`);
  // The seq bound of `after` was taken in an earlier snapshot: this keeps it exact.
  if (filter.after)
    common.push(
      `(e.commit_position, e.prepare_position) > (${param(filter.after.commit.toString(), '::bigint')},
                                                  ${param(filter.after.prepare.toString(), '::bigint')})`,
    );

  const stragglersFrom =
    bounds.stragglersFrom === undefined ? undefined : param(bounds.stragglersFrom, '::bigint');
  const main = stragglersFrom ? [...common, `e.seq < ${stragglersFrom}`] : common;
  const types = filter.types ?? [];
  const ordered = `ORDER BY e.seq LIMIT ${limit}`;
  const range = (conditions: readonly string[]): string =>
    `SELECT e.seq FROM audit_events e WHERE ${conditions.join(' AND ')} ${ordered}`;
  const mainBranches =
    types.length === 0 ? [main] : types.map((type) => [...main, `e.event_type = ${param(type)}`]);

  if (!(stragglersFrom && until)) {
    if (mainBranches.length === 1) return { where: `${mainBranches[0]!.join(' AND ')} ${ordered}`, values };
    return { where: `e.seq IN (${merged(mainBranches.map(range), limit)}) ORDER BY e.seq`, values };
  }
  const late = [
    ...common,
    `e.seq >= ${stragglersFrom}`,
    // The straggler index's predicate and key: its recorded time lies before an earlier event's.
    'e.recorded_at < e.recorded_hwm',
    `tstzrange(e.recorded_at, e.recorded_hwm, '[]') @> ${until}`,
  ];
  if (types.length > 0) late.push(`e.event_type = ANY (${param(types, '::text[]')})`);
  // Every straggler lies past every row of the main ranges: the stragglers are looked up only when
  // those ranges leave the page short (a gate evaluated once, before the lookup would run).
  const mainSeqs =
    mainBranches.length === 1 ? range(mainBranches[0]!) : merged(mainBranches.map(range), limit);
  const stragglers = `SELECT e.seq FROM audit_events e
      WHERE ${late.join(' AND ')} AND (SELECT count(*) FROM main) < ${limit} ${ordered}`;
  return {
    where: `e.seq IN (WITH main AS MATERIALIZED (${mainSeqs})
      SELECT s.seq FROM (SELECT seq FROM main UNION ALL (${stragglers})) s ORDER BY s.seq LIMIT ${limit})
      ORDER BY e.seq`,
    values,
  };
}

/** The first `limit` seqs of several ranges, each in seq order. */
const merged = (ranges: readonly string[], limit: string): string =>
  `SELECT s.seq FROM (${ranges.map((r) => `(${r})`).join(' UNION ALL ')}) s ORDER BY s.seq LIMIT ${limit}`;
