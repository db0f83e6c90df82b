import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  jsonEvent,
  type AppendExpectedRevision,
  type EventData,
  type JSONType,
  type MetadataType,
  type Position,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import type {
  EventMetadataInput,
  ExpectedRevision,
  NewEvent,
  RecordedEvent,
} from '#shared/eventStore/eventStore';

/** Reads of $all skip what excludeSystemEvents() skips on subscriptions: event types starting with '$'. */
export function isSystemEvent(event: { readonly type: string }): boolean {
  return event.type.startsWith('$');
}

export function toEsdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return expected;
  }
}

export function toEventData(event: NewEvent): EventData {
  return jsonEvent({
    id: event.id,
    type: event.type,
    data: toJsonType(event.data),
    metadata: { ...event.metadata },
  });
}

export function fromEsdbEvent(event: EsdbRecordedEvent): RecordedEvent {
  return {
    id: event.id,
    type: event.type,
    data: event.isJson ? event.data : decodeJson(event.data),
    // Written by toEventData above, so it has the EventMetadataInput shape.
    metadata: {
      ...(decodeJson(event.metadata) as EventMetadataInput),
      recordedAt: event.created.toISOString(),
    },
    streamName: event.streamId,
    streamRevision: event.revision,
    position: requirePosition(event.position, event),
  };
}

function requirePosition(position: Position | undefined, event: EsdbRecordedEvent): Position {
  if (position) return { commit: position.commit, prepare: position.prepare };
  throw new Error(
    `EventStoreDB sent ${event.streamId}@${event.revision} without its position (server older than 22.6?)`,
  );
}

/** The client only carries JSON objects, arrays and strings as JSON event data. */
function toJsonType(data: unknown): JSONType {
  if (typeof data === 'string' || Array.isArray(data)) return data;
  if (typeof data === 'object' && data !== null) return data as Record<string, unknown>;
  throw new TypeError(`EventStoreDB event data must be a JSON object, array or string, got ${typeof data}`);
}

function decodeJson(value: MetadataType | undefined): unknown {
  if (value instanceof Uint8Array)
    return value.length === 0 ? {} : JSON.parse(Buffer.from(value).toString('utf8'));
  return value ?? {};
}
