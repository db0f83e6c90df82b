import { type EventStore, type StreamAppend, type AppendResult, afterCommit } from './eventStore';
import { forwardingEventStore } from './forwardingEventStore';

/**
 * Counts appended events by type (events_appended_total) without the adapters knowing about metrics.
 * Inside a unit of work they are counted once it commits: a rolled-back append appended nothing.
 */
export function instrumentEventStore(
  store: EventStore,
  onAppended: (type: string, count: number) => void,
  onAppendTimed?: (seconds: number) => void,
): EventStore {
  return {
    ...store, // optional capabilities of the adapter
    ...forwardingEventStore(store),
    async appendToStream(streamName, events, options) {
      const started = performance.now();
      let result;
      try {
        result = await store.appendToStream(streamName, events, options);
      } finally {
        onAppendTimed?.((performance.now() - started) / 1000);
      }
      const byType = new Map<string, number>();
      for (const e of events) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
      await afterCommit(store, () => {
        for (const [type, n] of byType) onAppended(type, n);
        return Promise.resolve();
      });
      return result;
    },
    ...(store.appendToStreams
      ? {
          appendToStreams: instrumentedAppendToStreams(
            store,
            store.appendToStreams,
            onAppended,
            onAppendTimed,
          ),
        }
      : {}),
  };
}

function instrumentedAppendToStreams(
  store: EventStore,
  appendToStreams: (appends: readonly StreamAppend[]) => Promise<AppendResult[]>,
  onAppended: (type: string, count: number) => void,
  onAppendTimed?: (seconds: number) => void,
): (appends: readonly StreamAppend[]) => Promise<AppendResult[]> {
  return async (appends) => {
    const started = performance.now();
    let results;
    try {
      results = await appendToStreams(appends);
    } finally {
      onAppendTimed?.((performance.now() - started) / 1000);
    }
    const byType = new Map<string, number>();
    for (const a of appends) for (const e of a.events) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
    await afterCommit(store, () => {
      for (const [type, n] of byType) onAppended(type, n);
      return Promise.resolve();
    });
    return results;
  };
}
