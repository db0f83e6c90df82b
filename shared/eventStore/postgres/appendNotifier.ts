import type pg from 'pg';
import type { SqlExecutor } from './sqlExecutor';
import type { SqlNames } from './sqlNames';

/**
 * Wakes subscriptions (AppendListener) after appends have committed (m0006). Appends that commit
 * while a NOTIFY is on its way are announced by one more NOTIFY sent after it, so every append is
 * followed by a notification sent after its commit, and a burst of appends costs two at most. The
 * NOTIFY's own commit is not flushed to disk (synchronous_commit off, for that statement only): a
 * notification lost in a crash costs nothing, the subscription's idle poll finds the events.
 */
export class AppendNotifier {
  private sending = false;
  private again = false;
  private closed = false;

  /** `origin`: the payload of its NOTIFYs, by which this store's own subscriptions know them (AppendListener). */
  constructor(
    private readonly pool: pg.Pool,
    private readonly names: SqlNames,
    private readonly origin = '',
  ) {}

  /** Call after an append committed. Never waits, never throws. */
  announce(): void {
    if (this.closed) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = true;
    void this.send();
  }

  close(): void {
    this.closed = true;
  }

  private async send(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.pool
          .query({
            name: `announce:${this.names.schema}`,
            text: `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`,
            values: [this.names.channel, this.origin],
          })
          .catch(() => undefined); // the subscription polls anyway
      } while (this.again && !this.closed);
    } finally {
      this.sending = false;
    }
  }
}

/** For an append inside a transaction the caller owns: PostgreSQL delivers it when that commits. */
export async function notifyAtCommit(db: SqlExecutor, names: SqlNames): Promise<void> {
  await db.query({
    name: `notifyAtCommit:${names.schema}`,
    text: `SELECT pg_notify($1, '')`,
    values: [names.channel],
  });
}
