import type { Pool } from 'pg';
import type { GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import { comparePositions, formatPosition } from '#shared/eventStore/eventStore';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import type { ActiveProjection } from './activeProjections';
import { advanceCheckpoints } from './checkpointStore';
import { appliesTo, contextFor } from './projection';

export const PROGRESS_CHANNEL = 'projection_progress';

/** More changed keys than this in one batch: listeners are told "everything" ('*') instead. */
const MAX_NOTIFIED_KEYS = 200;

/**
 * Applies one batch to every active projection in ONE transaction that also advances each
 * checkpoint (guarded: a checkpoint not where this runner left it means another runner got there
 * first, and everything rolls back) and notifies PROGRESS_CHANNEL on commit. Returns the batch's
 * end and the changed keys.
 *
 * The commit is not waited for on disk (synchronous_commit off, this transaction only): the read
 * models are derived data, and a crash can only lose whole batches, effects and checkpoints
 * together (the WAL keeps their order), which the runner applies again from the events. What it
 * saves is a disk flush per batch, most of the projection lag and of a rebuild's time.
 */
export async function applyBatch(
  pool: Pool,
  active: ActiveProjection[],
  batch: readonly RecordedEvent[],
): Promise<{ end: GlobalPosition; changed: string[] }> {
  const end = batch[batch.length - 1]!.position;
  const changed: string[] = [];
  await inTransaction(pool, async (client) => {
    await client.query(`SELECT set_config('synchronous_commit', 'off', true)`);
    for (const a of active) {
      const events = batch.filter(
        (e) => appliesTo(a.projection, e.type) && comparePositions(e.position, a.position) > 0,
      );
      if (events.length > 0)
        changed.push(...(await a.projection.apply(contextFor(a.projection, client), events)));
    }
    const behind = active.filter((a) => comparePositions(end, a.position) > 0);
    const stale = await advanceCheckpoints(client, behind, end);
    if (stale.length > 0)
      throw new Error(`checkpoint of ${stale.join(', ')} moved under us (another runner?)`);
    const keys = changed.length > MAX_NOTIFIED_KEYS ? ['*'] : changed;
    await client.query('SELECT pg_notify($1, $2)', [
      PROGRESS_CHANNEL,
      `${formatPosition(end)} ${keys.join(' ')}`.trim(),
    ]);
  });
  for (const a of active) if (comparePositions(end, a.position) > 0) a.position = end;
  return { end, changed };
}
