import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` on one pooled client and gives it back. A connection that dies between two
 * statements is reported as an 'error' event on the checked-out client (the pool only listens to
 * idle ones): unheard, it would crash the process. The next statement fails with it anyway; here it
 * only marks the client so the pool discards it. `discard`: the client is closed after the work
 * even when healthy (its session settings must not reach the pool's next user).
 */
export async function withClient<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  { discard = false }: { readonly discard?: boolean } = {},
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } finally {
    client.off('error', onError);
    client.release(broken ?? (discard ? true : undefined));
  }
}
