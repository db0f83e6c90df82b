import { EventStoreDBClient, WrongExpectedVersionError } from '@eventstore/db-client';
import {
  IdempotencyConflictError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type GlobalPosition,
  type NewEvent,
} from '#shared/eventStore/eventStore';
import { toEsdbExpectedRevision, toEventData } from './esdbEvents';
import { headPosition, readAll, readStream } from './esdbReads';
import { subscribeToAll } from './esdbSubscription';

export interface EventStoreDbEventStoreOptions {
  /** e.g. `esdb://localhost:2113?tls=false` */
  readonly connectionString: string;
}

/** A thin adapter: idempotent retries, expected revisions and the global order are native here. */
export function createEventStoreDbEventStore(options: EventStoreDbEventStoreOptions): EventStore {
  const client = EventStoreDBClient.connectionString(options.connectionString);
  return {
    appendToStream: (streamName, events, appendOptions) =>
      append(client, streamName, events, appendOptions?.expectedRevision ?? 'any'),
    readStream: (streamName, readOptions) => readStream(client, streamName, readOptions),
    readAll: (readOptions) => readAll(client, readOptions),
    subscribeToAll: (subscribeOptions) => subscribeToAll(client, subscribeOptions),
    headPosition: () => headPosition(client),
    close: () => client.dispose(),
  };
}

async function append(
  client: EventStoreDBClient,
  streamName: string,
  events: readonly NewEvent[],
  expected: ExpectedRevision,
): Promise<AppendResult> {
  if (events.length === 0) throw new RangeError(`stream ${streamName}: an append needs at least one event`);
  try {
    const result = await client.appendToStream(streamName, events.map(toEventData), {
      expectedRevision: toEsdbExpectedRevision(expected),
    });
    return {
      nextExpectedRevision: result.nextExpectedRevision,
      // An idempotent retry is acknowledged without a position: look up the original event's.
      position: result.position ?? (await positionOf(client, streamName, result.nextExpectedRevision)),
    };
  } catch (error) {
    if (!(error instanceof WrongExpectedVersionError)) throw error;
    // The server reports a half-repeated retry as a version conflict; tell the two apart.
    if (await anyAlreadyAppended(client, streamName, events)) throw new IdempotencyConflictError(streamName);
    throw new WrongExpectedRevisionError(streamName, expected, error.actualVersion);
  }
}

async function positionOf(
  client: EventStoreDBClient,
  streamName: string,
  revision: bigint,
): Promise<GlobalPosition> {
  const [event] = await readStream(client, streamName, { fromRevision: revision, maxCount: 1 });
  if (!event) throw new Error(`stream ${streamName}: event ${revision} acknowledged but not found`);
  return event.position;
}

async function anyAlreadyAppended(
  client: EventStoreDBClient,
  streamName: string,
  events: readonly NewEvent[],
): Promise<boolean> {
  const ids = new Set(events.map((event) => event.id));
  const existing = await readStream(client, streamName);
  return existing.some((event) => ids.has(event.id));
}
