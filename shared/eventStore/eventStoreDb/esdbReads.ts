import {
  BACKWARDS,
  END,
  FORWARDS,
  START as ESDB_START,
  StreamNotFoundError,
  type AllStreamRecordedEvent,
  type EventStoreDBClient,
  type ReadPosition,
} from '@eventstore/db-client';
import {
  START,
  comparePositions,
  type GlobalPosition,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
} from '#shared/eventStore/eventStore';
import { fromEsdbEvent, isSystemEvent } from './esdbEvents';

export const DEFAULT_PAGE_SIZE = 1000;

export function toReadPosition(position: GlobalPosition): ReadPosition {
  return comparePositions(position, START) <= 0
    ? ESDB_START
    : { commit: position.commit, prepare: position.prepare };
}

export async function readStream(
  client: EventStoreDBClient,
  streamName: string,
  options: ReadStreamOptions = {},
): Promise<RecordedEvent[]> {
  const limit = options.maxCount ?? Number.MAX_SAFE_INTEGER;
  const events: RecordedEvent[] = [];
  if (limit <= 0) return events;
  const read = client.readStream(streamName, {
    fromRevision: options.fromRevision ?? ESDB_START,
    direction: FORWARDS,
    maxCount: limit,
  });
  try {
    for await (const resolved of read) {
      if (!resolved.event) continue;
      const event = fromEsdbEvent(resolved.event);
      if (isBeyondBounds(event, options)) break;
      events.push(event);
      if (events.length >= limit) break;
    }
  } catch (error) {
    if (error instanceof StreamNotFoundError) return [];
    throw error;
  }
  return events;
}

/** The bounds the server cannot apply: checked while reading, and reading stops at the first miss. */
function isBeyondBounds(event: RecordedEvent, options: ReadStreamOptions): boolean {
  if (options.toRevision !== undefined && event.streamRevision > options.toRevision) return true;
  if (options.toPosition && comparePositions(event.position, options.toPosition) > 0) return true;
  return options.toTime !== undefined && Date.parse(event.metadata.recordedAt) > options.toTime.getTime();
}

/**
 * $all read from a position includes the event at that position, and the client cannot filter
 * system events on reads, so both are skipped here, page after page, until maxCount are found.
 */
export async function readAll(
  client: EventStoreDBClient,
  options: ReadAllOptions = {},
): Promise<RecordedEvent[]> {
  const maxCount = options.maxCount ?? DEFAULT_PAGE_SIZE;
  const pageSize = Math.min(Math.max(maxCount + 1, 32), 4096);
  const events: RecordedEvent[] = [];
  let cursor = options.after ?? START;
  while (events.length < maxCount) {
    const page = await readPage(client, toReadPosition(cursor), pageSize, FORWARDS);
    for (const event of page) {
      if (comparePositions(event.position, cursor) <= 0) continue;
      cursor = event.position;
      if (!isSystemEvent(event)) events.push(fromEsdbEvent(event));
      if (events.length >= maxCount) break;
    }
    if (page.length < pageSize) break;
  }
  return events;
}

export async function headPosition(client: EventStoreDBClient): Promise<GlobalPosition> {
  const pageSize = 100;
  let from: ReadPosition = END;
  for (;;) {
    const page = await readPage(client, from, pageSize, BACKWARDS);
    const latest = page.find((event) => !isSystemEvent(event));
    if (latest) return { commit: latest.position.commit, prepare: latest.position.prepare };
    const oldest = page[page.length - 1];
    if (!oldest || page.length < pageSize) return START;
    from = oldest.position;
  }
}

async function readPage(
  client: EventStoreDBClient,
  from: ReadPosition,
  maxCount: number,
  direction: typeof FORWARDS | typeof BACKWARDS,
): Promise<AllStreamRecordedEvent[]> {
  const page: AllStreamRecordedEvent[] = [];
  for await (const resolved of client.readAll({ fromPosition: from, maxCount, direction })) {
    if (resolved.event) page.push(resolved.event);
  }
  return page;
}
