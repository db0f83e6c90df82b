import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` in one transaction on a pooled client: COMMIT when it resolves, ROLLBACK when it
 * throws (the original error wins over a failed rollback). With `lockKey`, a transaction-scoped
 * advisory lock serialises the work across processes (migrations, schema swaps).
 */
export async function inTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  lockKey?: string,
): Promise<T> {
  const client = await pool.connect();
  // A connection that dies between two statements is reported as an 'error' event on the checked-out
  // client (the pool only listens to idle ones): unheard, it would crash the process. The next
  // statement fails with it anyway; here it only marks the client so the pool discards it.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    if (lockKey) await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
