import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { EventStore, ExpectedRevision, NewEvent, AppendResult } from '#shared/eventStore/eventStore';
import { appendEvents, appendEventsToStreams, isConcurrentDuplicate } from './appendEvents';
import type { AppendListener } from './appendListener';
import { AppendNotifier, notifyAtCommit } from './appendNotifier';
import { migrate } from './migrate';
import { PostgresUnitOfWork } from './postgresUnitOfWork';
import { headPosition, newestPosition, readAll } from './readAll';
import { readStream } from './readStream';
import type { SqlExecutor } from './sqlExecutor';
import { DEFAULT_SCHEMA, sqlNames, type SqlNames } from './sqlNames';
import { subscribeToAll } from './subscribeToAll';
import { heardClientErrors } from '#shared/infra/postgres/heardClientErrors';

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
  readonly unitOfWork: PostgresUnitOfWork;
  readonly appendToStreams: NonNullable<EventStore['appendToStreams']>;
  /**
   * Appends inside a transaction the caller owns; the events become readable when it commits. Keep
   * it short: an open transaction holds back every reader. Make the append the transaction's first
   * write: the global order is by transaction id, which PostgreSQL assigns at the first write, and
   * the append function takes the stream's lock before writing so that ids, and therefore the
   * global order, follow the stream's order (m0003). A transaction that already holds an id (it
   * wrote before, e.g. appended to another stream) may have to wait for that lock behind a younger
   * transaction; should that one have appended to the stream meanwhile, this append would sort
   * before an event it follows, so it fails with UnitOfWorkConflictError instead (m0004): roll back
   * and run the transaction again.
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
  const pool = heardClientErrors(
    new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5000,
    }),
  );
  // The pool discards an idle client whose connection dies; unhandled, the event would crash us.
  pool.on('error', () => undefined);
  const unitOfWork = new PostgresUnitOfWork(pool);
  // Tells this store's NOTIFYs from those of other processes (and other stores of this one).
  const origin = randomUUID();
  const notifier = new AppendNotifier(pool, names, origin);
  const closing = new AbortController();
  const localListeners = new Set<AppendListener>();
  const subscriptionContext = {
    pool,
    names,
    listenerConfig: { connectionString: options.connectionString },
    closing: closing.signal,
    localListeners,
    origin,
  };
  // This process's subscriptions hear its own appends at once; others by the NOTIFY.
  const announce = (): void => {
    for (const listener of localListeners) listener.appendCommitted();
    notifier.announce();
  };

  return {
    pool,
    names,
    unitOfWork,
    migrate: () => migrate(pool, names),
    appendWithin: async (db, streamName, events, appendOptions) => {
      const result = await appendEvents(db, names, streamName, events, appendOptions?.expectedRevision);
      await notifyAtCommit(db, names);
      return result;
    },
    // Inside a unit of work, appends and stream reads go through its transaction (the work sees
    // its own appends); everything else always uses the pool.
    appendToStream: async (streamName, events, appendOptions) => {
      const db = unitOfWork.executor();
      const append = () => appendEvents(db, names, streamName, events, appendOptions?.expectedRevision);
      let result: AppendResult;
      try {
        result = await append();
      } catch (error) {
        // In a unit of work the failed statement has aborted the transaction: no second try there.
        if (!(isConcurrentDuplicate(error) && db === pool)) throw error;
        result = await append();
      }
      // Subscribers are woken once the events are readable: now, or when the unit of work commits.
      if (db === pool) announce();
      else await unitOfWork.afterCommit(() => Promise.resolve(announce()));
      return result;
    },
    // The same, for several streams at once (m0007): one statement, one commit.
    appendToStreams: async (appends) => {
      const db = unitOfWork.executor();
      const append = () => appendEventsToStreams(db, names, appends);
      let results: AppendResult[];
      try {
        results = await append();
      } catch (error) {
        // Outside a unit of work the statement was its own transaction: nothing of it remains.
        if (!((isConcurrentDuplicate(error) || isDeadlock(error)) && db === pool)) throw error;
        results = await append();
      }
      if (db === pool) announce();
      else await unitOfWork.afterCommit(() => Promise.resolve(announce()));
      return results;
    },
    readStream: (streamName, readOptions) =>
      readStream(unitOfWork.executor(), names, streamName, readOptions),
    readAll: (readOptions) => readAll(pool, names, readOptions),
    subscribeToAll: (subscribeOptions) => subscribeToAll(subscriptionContext, subscribeOptions),
    headPosition: () => headPosition(pool, names),
    newestPosition: () => newestPosition(pool, names),
    close: async () => {
      if (closing.signal.aborted) return;
      closing.abort();
      notifier.close();
      await pool.end();
    },
  };
}

/**
 * deadlock_detected: a multi-stream append takes its streams' locks in one order, but a unit of work
 * appending to the same streams one by one in another order can meet it in a cycle.
 */
function isDeadlock(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === '40P01';
}
