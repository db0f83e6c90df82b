import {
  START,
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

/**
 * True when committed events exist that readAll cannot return yet, because an older transaction is
 * still open. That transaction may never NOTIFY (it need not be an append), so the caller polls.
 * Asked as "is the newest transaction id at or past the horizon": one row from the end of the
 * (transaction_id, global_position) index. An EXISTS over `transaction_id >= horizon` cannot know
 * the horizon when planned and scanned every event when none was held back (60 ms at 300k events,
 * four times a second per subscription).
 */
export async function hasHeldBackEvents(db: SqlExecutor, names: SqlNames): Promise<boolean> {
  const { rows } = await db.query<{ held_back: boolean }>({
    name: `heldBack:${names.schema}`,
    text: `SELECT coalesce((SELECT e.transaction_id FROM ${names.events} e
            ORDER BY e.transaction_id DESC LIMIT 1) >= pg_snapshot_xmin(pg_current_snapshot()), false) AS held_back`,
  });
  return rows[0]?.held_back ?? false;
}
