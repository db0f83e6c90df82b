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
    client.release();
  }
}
