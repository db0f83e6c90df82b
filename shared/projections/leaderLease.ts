import type { Pool, PoolClient } from 'pg';
import { abortableSleep } from '#shared/runtime/abortableSleep';
import type { LoopBody } from '#shared/runtime/supervisedLoop';

export const LEADER_LOCK = 'catalogue:projector:leader';

interface Held {
  readonly client: PoolClient;
  readonly lost: AbortController;
  readonly onLost: (error?: Error) => void;
}

/**
 * Leadership as a session advisory lock held by one pooled connection. A session lock outlives the
 * transaction and stays with the connection: released to the pool still holding it, the pool would
 * keep the lock and no other process could lead. So release() unlocks first, and destroys the
 * connection when unlocking is not possible.
 */
export class LeaderLease {
  private held: Held | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly lockName = LEADER_LOCK,
  ) {}

  get isHeld(): boolean {
    return this.held !== undefined;
  }

  /**
   * Takes the lock when it is free. Returns a signal that aborts if the connection holding the lock
   * dies (the server then frees the lock and another process may lead), or undefined when another
   * process leads.
   */
  async tryAcquire(): Promise<AbortSignal | undefined> {
    if (this.held) return this.held.lost.signal;
    const client = await this.pool.connect();
    let acquired: boolean;
    try {
      const { rows } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtext($1)) AS ok',
        [this.lockName],
      );
      acquired = rows[0]?.ok === true;
    } catch (error) {
      client.release(true);
      throw error;
    }
    if (!acquired) {
      client.release();
      return undefined;
    }
    const lost = new AbortController();
    const onLost = (error?: Error): void => {
      if (!lost.signal.aborted) lost.abort(error ?? new Error('the leader connection ended'));
    };
    client.on('error', onLost);
    client.on('end', onLost);
    this.held = { client, lost, onLost };
    return lost.signal;
  }

  /** Gives leadership up so another process can take it at once. */
  async release(): Promise<void> {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    const { client, lost, onLost } = held;
    let unlocked = false;
    if (!lost.signal.aborted) {
      unlocked = await client
        .query('SELECT pg_advisory_unlock(hashtext($1))', [this.lockName])
        .then(() => true)
        .catch(() => false);
    }
    client.off('error', onLost);
    client.off('end', onLost);
    // Not unlocked: destroy the connection, which is the only other way to free a session lock.
    client.release(unlocked ? undefined : true);
  }
}

/**
 * A supervised loop's body for work only one process may do at a time. When the lease is free it
 * takes it and runs `work` under it; the work's signal also aborts when the lease's connection dies,
 * and then this throws so the loop retries. Otherwise it reports up (standing by is healthy) and
 * looks again every `standbyPollMs`. The lease is released whenever the work ends.
 */
export async function leadOrStandBy(
  lease: LeaderLease,
  { signal, up }: LoopBody,
  work: (signal: AbortSignal, up: () => void) => Promise<void>,
  standbyPollMs: number,
): Promise<void> {
  while (!signal.aborted) {
    const lost = await lease.tryAcquire();
    if (lost) {
      try {
        await work(AbortSignal.any([signal, lost]), up);
        if (lost.aborted && !signal.aborted)
          throw new Error('lost the leader connection', { cause: lost.reason });
      } finally {
        await lease.release();
      }
      return;
    }
    up();
    await abortableSleep(standbyPollMs, signal);
  }
}
