import pg, { type Pool, type PoolClient, type QueryConfig, type QueryResult, type QueryResultRow } from 'pg';
import { SQLSTATE, sqlState } from './sqlState';
import { withClient } from './withClient';

/** How long a cancel request may take before the statement is left to end by itself. */
const CANCEL_BOUND_MS = 5000;

/**
 * A statement that stops when `signal` aborts (its asker is gone: a superseded search typed as
 * you type, a client that hung up), instead of running to an answer nobody reads. Without a signal
 * it is `pool.query`. With one, it runs on a client of its own, and an abort sends PostgreSQL the
 * protocol's cancel request for that backend (requestCancel: no login and no pooled connection, so
 * a pool whose every connection runs an abandoned search can still cancel them); the statement then
 * fails with the signal's reason. Before the client goes back to the pool, one more statement runs
 * on it: a cancel that arrived after the answer is spent there (ignored while the backend waits
 * for a command, or cancelling that statement), never on the next user's statement.
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
    const key = backendKey(client);
    let cancelled: Promise<void> | undefined;
    const cancel = (): void => {
      cancelled = requestCancel(key);
    };
    signal.addEventListener('abort', cancel, { once: true });
    try {
      return await client.query<Row>(statement);
    } catch (error) {
      if (signal.aborted && sqlState(error) === SQLSTATE.queryCanceled) throw signal.reason;
      throw error;
    } finally {
      signal.removeEventListener('abort', cancel);
      if (cancelled) {
        await cancelled;
        await client.query('SELECT 1').catch(() => undefined);
      }
    }
  });
}

/** What a cancel request names (the backend's id and secret, kept by pg from BackendKeyData) and where it goes. */
interface BackendKey {
  readonly processID: number;
  readonly secretKey: number;
  readonly host: string;
  readonly port: number;
}

function backendKey(client: PoolClient): BackendKey {
  const { processID, secretKey, host, port } = client as unknown as Partial<BackendKey>;
  if (typeof processID !== 'number' || typeof secretKey !== 'number' || typeof host !== 'string' || !port)
    throw new Error('pg client without a backend key');
  return { processID, secretKey, host, port: Number(port) };
}

/** The part of pg's (untyped) Connection a cancel request uses. */
interface CancelConnection {
  readonly stream: { destroy(): void };
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  once(event: 'connect' | 'end', listener: () => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
}

/**
 * PostgreSQL's CancelRequest on a connection of its own, as pg's Client#cancel sends it. Resolves
 * when the server has closed that connection (it has then signalled the backend), or after
 * CANCEL_BOUND_MS; never rejects (a cancel that cannot be sent leaves the statement to end by itself).
 */
function requestCancel(key: BackendKey): Promise<void> {
  return new Promise((resolve) => {
    const connection = new pg.Connection() as unknown as CancelConnection;
    const done = (): void => {
      clearTimeout(bound);
      connection.stream.destroy();
      resolve();
    };
    const bound = setTimeout(done, CANCEL_BOUND_MS);
    connection.once('connect', () => connection.cancel(key.processID, key.secretKey));
    connection.once('end', done);
    connection.on('error', done);
    if (key.host.startsWith('/')) connection.connect(`${key.host}/.s.PGSQL.${key.port}`);
    else connection.connect(key.port, key.host);
  });
}
