import type { Pool, PoolClient } from 'pg';
import { withClient } from './withClient';

/**
 * Runs `work` in one transaction on a pooled client: COMMIT when it resolves, ROLLBACK when it
 * throws (the original error wins over a failed rollback). With `lockKey`, a transaction-scoped
 * advisory lock serialises the work across processes (migrations, schema swaps).
 */
export function inTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  lockKey?: string,
): Promise<T> {
  return withClient(pool, async (client) => {
    try {
      await client.query('BEGIN');
      if (lockKey) await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}
