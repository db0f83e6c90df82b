import type { Pool } from 'pg';
import type { EventStore, GlobalPosition } from '#shared/eventStore/eventStore';
import { abortableSleep } from '#shared/runtime/abortableSleep';

const POLL_MS = 250;

/**
 * A position at or past every event committed before this call: the event store's head, read
 * once every PostgreSQL transaction running at the call has ended. headPosition alone is not
 * enough on the PostgreSQL event store: it leaves out events committed after an older transaction
 * still open began (readAll returns them only once it ends), which could name a blob. On
 * EventStoreDB the head already covers every committed event, and the wait (on the read models'
 * server) costs nothing. Undefined when transactions still run at `deadline` or the signal aborts.
 */
export async function settledHeadPosition(
  pool: Pool,
  store: Pick<EventStore, 'headPosition'>,
  deadline: number,
  signal: AbortSignal,
): Promise<GlobalPosition | undefined> {
  // A transaction id of our own: every transaction that committed before this call has a smaller
  // one. (A snapshot's xmax will not do: it is one past the latest *completed* id.)
  const { rows } = await pool.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid');
  const ours = rows[0]!.xid;
  for (;;) {
    const { rows: settled } = await pool.query<{ ended: boolean }>(
      'SELECT pg_snapshot_xmin(pg_current_snapshot()) > $1::xid8 AS ended',
      [ours],
    );
    if (settled[0]?.ended === true) return store.headPosition();
    if (signal.aborted || Date.now() >= deadline) return undefined;
    await abortableSleep(POLL_MS, signal);
  }
}
