import type { Pool, PoolClient } from 'pg';
import type { Lock, Locker } from '@tus/server';
import { ERRORS } from '@tus/server';
import { TusHttpError } from './tusHttpError';

/** 423: another request (on any instance) holds the upload for longer than a request waits. */
const uploadLocked = () =>
  new TusHttpError(423, { detail: 'Another request is writing this upload; try again once it is done.' });

const POLL_MS = 50;

/**
 * tus locks across instances: a session-level PostgreSQL advisory lock per upload id, held on a
 * connection of its own for as long as the request works on the upload. A process that dies loses
 * its connection, and PostgreSQL releases its locks with it. A request finding the lock taken waits
 * up to `waitMs` (a PATCH still draining after its client went away), then gets 423.
 */
export class PgAdvisoryLocker implements Locker {
  constructor(
    private readonly pool: Pool,
    private readonly waitMs: number,
  ) {}

  newLock(id: string): Lock {
    return new PgAdvisoryLock(this.pool, id, this.waitMs);
  }
}

class PgAdvisoryLock implements Lock {
  private client: PoolClient | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly id: string,
    private readonly waitMs: number,
  ) {}

  async lock(signal: AbortSignal): Promise<void> {
    const client = await this.pool.connect();
    const deadline = Date.now() + this.waitMs;
    try {
      for (;;) {
        const { rows } = await client.query<{ locked: boolean }>(
          "SELECT pg_try_advisory_lock(hashtextextended('tus:' || $1, 0)) AS locked",
          [this.id],
        );
        if (rows[0]?.locked) {
          this.client = client;
          return;
        }
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- tus's own error value
        if (signal.aborted) throw ERRORS.ABORTED;
        if (Date.now() >= deadline) throw uploadLocked();
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } catch (error) {
      client.release();
      throw error;
    }
  }

  async unlock(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      await client.query("SELECT pg_advisory_unlock(hashtextextended('tus:' || $1, 0))", [this.id]);
      client.release();
    } catch (error) {
      // A connection whose unlock failed is dropped: closing it releases the lock for sure.
      client.release(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
