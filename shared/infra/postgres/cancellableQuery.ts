import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { SQLSTATE, sqlState } from './sqlState';
import { withClient } from './withClient';

/**
 * A statement that stops when `signal` aborts (its asker is gone: a superseded search typed as
 * you type, a client that hung up), instead of running to an answer nobody reads. Without a signal
 * it is `pool.query`. With one, it runs on a client of its own, and an abort asks PostgreSQL to
 * cancel that backend's statement (pg_cancel_backend, on another pooled connection); the statement
 * then fails with the signal's reason. The client is given back only once the cancel request has
 * been carried out, so a cancel lands on this statement or on nothing (an idle backend ignores it),
 * never on the next statement of whoever takes the client from the pool after.
 */
export async function cancellableQuery<Row extends QueryResultRow>(
  pool: Pool,
  statement: QueryConfig,
  signal: AbortSignal | undefined,
): Promise<QueryResult<Row>> {
  if (!signal) return pool.query<Row>(statement);
  signal.throwIfAborted();
  return withClient(pool, async (client) => {
    signal.throwIfAborted();
    const pid = backendPid(client);
    let cancelled: Promise<unknown> | undefined;
    const cancel = (): void => {
      cancelled = pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => undefined);
    };
    signal.addEventListener('abort', cancel, { once: true });
    try {
      return await client.query<Row>(statement);
    } catch (error) {
      if (signal.aborted && sqlState(error) === SQLSTATE.queryCanceled) throw signal.reason;
      throw error;
    } finally {
      signal.removeEventListener('abort', cancel);
      await cancelled;
    }
  });
}

/** The backend's process id, which pg keeps from the connection's start (BackendKeyData) but does not type. */
function backendPid(client: PoolClient): number {
  const pid = (client as unknown as { processID?: unknown }).processID;
  if (typeof pid !== 'number') throw new Error('pg client without a backend process id');
  return pid;
}
