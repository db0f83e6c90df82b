import type { ReadStreamOptions, RecordedEvent } from '#shared/eventStore/eventStore';
import { EVENT_COLUMNS, positionParameters, toRecordedEvent, type EventRow } from './eventRow';
import type { SqlExecutor } from './sqlExecutor';
import type { SqlNames } from './sqlNames';

/**
 * Every committed event of the stream (no visibility horizon here: the write side must see its
 * own appends at once). recordedAt is reported in milliseconds, so toTime is compared at that
 * precision too: reading "as of" an event's recordedAt includes that event.
 */
export async function readStream(
  db: SqlExecutor,
  names: SqlNames,
  streamName: string,
  options: ReadStreamOptions = {},
): Promise<RecordedEvent[]> {
  const toPosition = options.toPosition ? positionParameters(options.toPosition) : [null, null];
  const { rows } = await db.query<EventRow>({
    name: `readStream:${names.schema}`,
    text: `SELECT ${EVENT_COLUMNS} FROM ${names.events}
            WHERE stream_name = $1
              AND stream_revision >= $2
              AND ($3::bigint IS NULL OR stream_revision <= $3)
              AND ($4::xid8 IS NULL OR (transaction_id, global_position) <= ($4::xid8, $5::bigint))
              AND ($6::timestamptz IS NULL OR recorded_at < $6::timestamptz + interval '1 millisecond')
            ORDER BY stream_revision
            LIMIT $7`,
    values: [
      streamName,
      (options.fromRevision ?? 0n).toString(),
      options.toRevision?.toString() ?? null,
      ...toPosition,
      options.toTime ?? null,
      options.maxCount ?? null,
    ],
  });
  return rows.map(toRecordedEvent);
}
