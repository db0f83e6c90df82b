import type { Upcaster } from '#shared/domain/upcasters';
import { UPCASTERS, upcastData } from '#shared/domain/upcasters';
import type { EventStore, RecordedEvent } from './eventStore';

/**
 * Wraps a store so every event read from it (streams, the global order, subscriptions) arrives
 * in its newest shape. Wired once, where the store is opened.
 */
export function upcastingEventStore(
  store: EventStore,
  upcasters: ReadonlyMap<string, Upcaster> = UPCASTERS,
): EventStore {
  if (upcasters.size === 0) return store;
  const upcast = (event: RecordedEvent): RecordedEvent => {
    const { data, schemaVersion } = upcastData(
      event.type,
      event.metadata.schemaVersion,
      event.data,
      upcasters,
    );
    return schemaVersion === event.metadata.schemaVersion
      ? event
      : { ...event, data, metadata: { ...event.metadata, schemaVersion } };
  };
  return {
    ...store,
    appendToStream: (...args) => store.appendToStream(...args),
    readStream: async (...args) => (await store.readStream(...args)).map(upcast),
    readAll: async (...args) => (await store.readAll(...args)).map(upcast),
    async *subscribeToAll(options) {
      for await (const batch of store.subscribeToAll(options)) yield batch.map(upcast);
    },
    headPosition: () => store.headPosition(),
    ...(store.newestPosition ? { newestPosition: () => store.newestPosition!() } : {}),
    close: () => store.close(),
  };
}
