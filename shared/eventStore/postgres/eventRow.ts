import type { EventMetadataInput, GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';

/** The columns every read selects; pg returns int8 and xid8 as text. */
export const EVENT_COLUMNS =
  'global_position, transaction_id, stream_name, stream_revision, event_id, event_type, data, metadata, recorded_at';

export interface EventRow {
  readonly global_position: string;
  readonly transaction_id: string;
  readonly stream_name: string;
  readonly stream_revision: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly data: unknown;
  readonly metadata: EventMetadataInput;
  readonly recorded_at: Date;
}

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.event_type,
    data: row.data,
    metadata: { ...row.metadata, recordedAt: row.recorded_at.toISOString() },
    streamName: row.stream_name,
    streamRevision: BigInt(row.stream_revision),
    position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.global_position) },
  };
}

/**
 * Query parameters for a position. xid8 has no negative values; real transaction ids start at 3,
 * so START maps to (0, -1), which precedes every event.
 */
export function positionParameters(position: GlobalPosition): [string, string] {
  const commit = position.commit < 0n ? 0n : position.commit;
  return [commit.toString(), position.prepare.toString()];
}
