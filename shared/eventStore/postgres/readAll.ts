import {
  START,
  comparePositions,
  type GlobalPosition,
  type ReadAllOptions,
  type RecordedEvent,
} from '#shared/eventStore/eventStore';
import { EVENT_COLUMNS, positionParameters, toRecordedEvent, type EventRow } from './eventRow';
import type { SqlExecutor } from './sqlExecutor';
import type { SqlNames } from './sqlNames';

export const DEFAULT_PAGE_SIZE = 1000;

/**
 * Only transactions older than the oldest one still running are readable. Any transaction that
 * has not finished yet, or that has not started, has a larger id, so its events will sort after
 * everything returned here: a reader that moves its checkpoint forward never skips one.
 */
const VISIBLE = 'transaction_id < pg_snapshot_xmin(pg_current_snapshot())';

export async function readAll(
  db: SqlExecutor,
  names: SqlNames,
  options: ReadAllOptions = {},
): Promise<RecordedEvent[]> {
  const { rows } = await db.query<EventRow>({
    name: `readAll:${names.schema}`,
    text: `SELECT ${EVENT_COLUMNS} FROM ${names.events}
            WHERE ${VISIBLE} AND (transaction_id, global_position) > ($1::xid8, $2::bigint)
            ORDER BY transaction_id, global_position
            LIMIT $3`,
    values: [...positionParameters(options.after ?? START), options.maxCount ?? DEFAULT_PAGE_SIZE],
  });
  return rows.map(toRecordedEvent);
}

export async function headPosition(db: SqlExecutor, names: SqlNames): Promise<GlobalPosition> {
  const { rows } = await db.query<{ transaction_id: string; global_position: string }>({
    name: `headPosition:${names.schema}`,
    text: `SELECT transaction_id, global_position FROM ${names.events}
            WHERE ${VISIBLE}
            ORDER BY transaction_id DESC, global_position DESC
            LIMIT 1`,
  });
  const row = rows[0];
  return row ? { commit: BigInt(row.transaction_id), prepare: BigInt(row.global_position) } : START;
}

/** The newest committed event's position, held back from readAll or not (EventStore.newestPosition). */
export async function newestPosition(db: SqlExecutor, names: SqlNames): Promise<GlobalPosition> {
  const { rows } = await db.query<{ transaction_id: string; global_position: string }>({
    name: `newestPosition:${names.schema}`,
    text: `SELECT transaction_id, global_position FROM ${names.events}
            ORDER BY transaction_id DESC, global_position DESC
            LIMIT 1`,
  });
  const row = rows[0];
  return row ? { commit: BigInt(row.transaction_id), prepare: BigInt(row.global_position) } : START;
}

/** One page of the global order for a subscription, and whether the store holds more past it. */
export interface SubscriptionPage {
  readonly events: RecordedEvent[];
  /**
   * True when the store holds an event past the page (past `after` when the page is empty): one of
   * a committed transaction that the page could not return yet because an older one is still open,
   * or one beyond the page's limit. Judged by position, not by the visibility horizon.
   */
  readonly more: boolean;
}

/**
 * A page of readAll and the held-back check in one statement (one snapshot), for a subscription's
 * every wake-up: the readable events after `after`, and the newest recorded event of all. An event that
 * commits after this snapshot is announced after its commit (appendNotifier) and wakes the
 * subscription; one committed before it and still held back by an older transaction is the newest
 * event here, past the page, so the subscription looks again soon.
 */
export async function readSubscriptionPage(
  db: SqlExecutor,
  names: SqlNames,
  after: GlobalPosition,
  maxCount: number,
): Promise<SubscriptionPage> {
  const { rows } = await db.query<
    Partial<EventRow> & { readonly newest_transaction_id: string; readonly newest_global_position: string }
  >({
    name: `readSubscriptionPage:${names.schema}`,
    text: `SELECT page.*, newest.transaction_id AS newest_transaction_id,
                  newest.global_position AS newest_global_position
             FROM (SELECT transaction_id, global_position FROM ${names.events}
                    ORDER BY transaction_id DESC, global_position DESC LIMIT 1) AS newest
             LEFT JOIN LATERAL (
                   SELECT ${EVENT_COLUMNS} FROM ${names.events}
                    WHERE ${VISIBLE} AND (transaction_id, global_position) > ($1::xid8, $2::bigint)
                    ORDER BY transaction_id, global_position
                    LIMIT $3) AS page ON true
            ORDER BY page.transaction_id, page.global_position`,
    values: [...positionParameters(after), maxCount],
  });
  const first = rows[0];
  if (!first) return { events: [], more: false }; // no event at all
  const events = rows.filter((row) => row.event_id !== null).map((row) => toRecordedEvent(row as EventRow));
  const last = events[events.length - 1]?.position ?? after;
  const newest = {
    commit: BigInt(first.newest_transaction_id),
    prepare: BigInt(first.newest_global_position),
  };
  return { events, more: comparePositions(newest, last) > 0 };
}
