import {
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
} from '#shared/eventStore/eventStore';

export interface MemoryEventStore extends EventStore {
  /** Every append attempt, in order, with what it expected and how it ended. */
  readonly attempts: { stream: string; expected: ExpectedRevision; outcome: 'appended' | 'conflict' }[];
  /** Makes the next `n` appends to `stream` lose a race: another writer gets in first. */
  conflictNext(stream: string, n: number): void;
}

/**
 * Unit-test double of the EventStore port: per-stream optimistic concurrency as the contract suite
 * demands, kept in memory. Only what command handling uses (append, readStream) is implemented.
 */
export function memoryEventStore(): MemoryEventStore {
  const streams = new Map<string, RecordedEvent[]>();
  const pendingConflicts = new Map<string, number>();
  const attempts: MemoryEventStore['attempts'] = [];
  let position = 0n;

  const record = (stream: string, event: NewEvent, revision: bigint): RecordedEvent => ({
    ...event,
    metadata: { ...event.metadata, recordedAt: new Date().toISOString() },
    streamName: stream,
    streamRevision: revision,
    position: { commit: ++position, prepare: position },
  });

  /** Another writer's event: what a lost race leaves behind. */
  const intrude = (stream: string, events: RecordedEvent[]): void => {
    const intruder: NewEvent = {
      id: `intruder-${position}`,
      type: 'Intruded',
      data: {},
      metadata: { actor: 'other', requestId: null, correlationId: 'x', causationId: null, schemaVersion: 1 },
    };
    events.push(record(stream, intruder, BigInt(events.length)));
  };

  return {
    attempts,
    conflictNext(stream, n) {
      pendingConflicts.set(stream, n);
    },
    appendToStream(stream, newEvents, options = {}): Promise<AppendResult> {
      const expected = options.expectedRevision ?? 'any';
      const events = streams.get(stream) ?? [];
      streams.set(stream, events);
      const pending = pendingConflicts.get(stream) ?? 0;
      if (pending > 0) {
        pendingConflicts.set(stream, pending - 1);
        intrude(stream, events);
      }
      const actual = events.length === 0 ? 'no_stream' : BigInt(events.length - 1);
      const matches =
        expected === 'any' ||
        (expected === 'no_stream' && actual === 'no_stream') ||
        (expected === 'stream_exists' && actual !== 'no_stream') ||
        expected === actual;
      attempts.push({ stream, expected, outcome: matches ? 'appended' : 'conflict' });
      if (!matches) return Promise.reject(new WrongExpectedRevisionError(stream, expected, actual));
      for (const event of newEvents) events.push(record(stream, event, BigInt(events.length)));
      const last = events[events.length - 1]!;
      return Promise.resolve({ nextExpectedRevision: last.streamRevision, position: last.position });
    },
    readStream(stream, options = {}) {
      const events = (streams.get(stream) ?? []).filter(
        (e) => e.streamRevision >= (options.fromRevision ?? 0n),
      );
      return Promise.resolve(events.slice(0, options.maxCount ?? events.length));
    },
    readAll: () => Promise.reject(new Error('memoryEventStore: readAll is not implemented')),
    subscribeToAll: () => {
      throw new Error('memoryEventStore: subscribeToAll is not implemented');
    },
    headPosition: () => Promise.resolve({ commit: position, prepare: position }),
    close: () => Promise.resolve(),
  };
}
