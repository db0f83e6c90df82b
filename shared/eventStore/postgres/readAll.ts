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
 * True when the store holds an event past `after` (a position the caller has read up to): one that
 * readAll could not return yet because an older transaction is still open, or one that became
 * readable since. Either way the caller reads again soon: the transaction that held it back may
 * never NOTIFY (it need not be an append). Judged by position, not by the visibility horizon, which
 * a fresh snapshot may already see past after readAll's snapshot did not (the event then waited
 * for the idle poll). One row from the end of the (transaction_id, global_position) index.
 */
export async function hasHeldBackEvents(
  db: SqlExecutor,
  names: SqlNames,
  after: GlobalPosition,
): Promise<boolean> {
  const { rows } = await db.query<{ held_back: boolean }>({
    name: `heldBack:${names.schema}`,
    text: `SELECT coalesce((SELECT (e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)
              FROM ${names.events} e
             ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1), false) AS held_back`,
    values: positionParameters(after),
  });
  return rows[0]?.held_back ?? false;
}
