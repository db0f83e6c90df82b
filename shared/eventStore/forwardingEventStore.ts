import type { EventStore } from './eventStore';

/**
 * An EventStore whose every method calls `store`'s: the base of a wrapper that replaces some of
 * them (`{ ...forwardingEventStore(store), readStream: … }`). An adapter's methods live on its
 * prototype, which a spread of the adapter does not copy. The adapter's other members are not
 * forwarded: a PostgreSQL adapter's pool and table names, by which eventTablesOf reads its tables
 * directly, stay with a wrapper only if it spreads the adapter itself.
 */
export function forwardingEventStore(store: EventStore): EventStore {
  return {
    appendToStream: (name, events, options) => store.appendToStream(name, events, options),
    ...(store.appendToStreams ? { appendToStreams: (appends) => store.appendToStreams!(appends) } : {}),
    readStream: (name, options) => store.readStream(name, options),
    readAll: (options) => store.readAll(options),
    subscribeToAll: (options) => store.subscribeToAll(options),
    headPosition: () => store.headPosition(),
    ...(store.newestPosition ? { newestPosition: () => store.newestPosition!() } : {}),
    close: () => store.close(),
    ...(store.unitOfWork ? { unitOfWork: store.unitOfWork } : {}),
  };
}
