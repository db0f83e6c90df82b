import pg from 'pg';
import type { EventStore, ExpectedRevision, NewEvent, AppendResult } from '../eventStore';
import { appendEvents, isConcurrentDuplicate } from './appendEvents';
import { migrate } from './migrate';
import { headPosition, readAll } from './readAll';
import { readStream } from './readStream';
import type { SqlExecutor } from './sqlExecutor';
import { DEFAULT_SCHEMA, sqlNames, type SqlNames } from './sqlNames';
import { subscribeToAll } from './subscribeToAll';

export interface PostgresEventStoreOptions {
  readonly connectionString: string;
  /** Connections for appends and reads; each subscription also holds one LISTEN connection. */
  readonly poolSize?: number;
  /** Defaults to `event_store`. */
  readonly schema?: string;
}

export interface PostgresEventStore extends EventStore {
  /** Creates or upgrades the schema; idempotent, safe when several processes start at once. */
  migrate(): Promise<void>;
  readonly pool: pg.Pool;
  readonly names: SqlNames;
  /**
   * Appends inside a transaction the caller owns (e.g. together with other writes); the events
   * become readable when it commits. Keep it short: an open transaction holds back every reader.
   */
  appendWithin(
    db: SqlExecutor,
    streamName: string,
    events: readonly NewEvent[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult>;
}

export function createPostgresEventStore(options: PostgresEventStoreOptions): PostgresEventStore {
  const names = sqlNames(options.schema ?? DEFAULT_SCHEMA);
  // A bounded connect: during an outage an append fails (503) instead of hanging.
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5000,
  });
  // The pool discards an idle client whose connection dies; unhandled, the event would crash us.
  pool.on('error', () => undefined);
  const closing = new AbortController();
  const subscriptionContext = {
    pool,
    names,
    listenerConfig: { connectionString: options.connectionString },
    closing: closing.signal,
  };

  return {
    pool,
    names,
    migrate: () => migrate(pool, names),
    appendWithin: (db, streamName, events, appendOptions) =>
      appendEvents(db, names, streamName, events, appendOptions?.expectedRevision),
    appendToStream: async (streamName, events, appendOptions) => {
      const append = () => appendEvents(pool, names, streamName, events, appendOptions?.expectedRevision);
      try {
        return await append();
      } catch (error) {
        if (isConcurrentDuplicate(error)) return append();
        throw error;
      }
    },
    readStream: (streamName, readOptions) => readStream(pool, names, streamName, readOptions),
    readAll: (readOptions) => readAll(pool, names, readOptions),
    subscribeToAll: (subscribeOptions) => subscribeToAll(subscriptionContext, subscribeOptions),
    headPosition: () => headPosition(pool, names),
    close: async () => {
      if (closing.signal.aborted) return;
      closing.abort();
      await pool.end();
    },
  };
}
