import type { Pool } from 'pg';
import type { GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import { comparePositions, formatPosition } from '#shared/eventStore/eventStore';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import type { ActiveProjection } from './activeProjections';
import { advanceCheckpoint } from './checkpointStore';
import { appliesTo, contextFor } from './projection';

export const PROGRESS_CHANNEL = 'projection_progress';

/** More changed keys than this in one batch: listeners are told "everything" ('*') instead. */
const MAX_NOTIFIED_KEYS = 200;

/**
 * Applies one batch to every active projection in ONE transaction that also advances each
 * checkpoint (guarded: zero rows moved means another runner got there first, and everything rolls
 * back) and notifies PROGRESS_CHANNEL on commit. Returns the batch's end and the changed keys.
 */
export async function applyBatch(
  pool: Pool,
  active: ActiveProjection[],
  batch: readonly RecordedEvent[],
): Promise<{ end: GlobalPosition; changed: string[] }> {
  const end = batch[batch.length - 1]!.position;
  const changed: string[] = [];
  await inTransaction(pool, async (client) => {
    for (const a of active) {
      const events = batch.filter(
        (e) => appliesTo(a.projection, e.type) && comparePositions(e.position, a.position) > 0,
      );
      if (events.length > 0)
        changed.push(...(await a.projection.apply(contextFor(a.projection, client), events)));
      if (comparePositions(end, a.position) > 0) {
        const moved = await advanceCheckpoint(
          client,
          a.projection.name,
          a.projection.version,
          a.position,
          end,
        );
        if (!moved) throw new Error(`checkpoint of ${a.projection.name} moved under us (another runner?)`);
      }
    }
    const keys = changed.length > MAX_NOTIFIED_KEYS ? ['*'] : changed;
    await client.query('SELECT pg_notify($1, $2)', [
      PROGRESS_CHANNEL,
      `${formatPosition(end)} ${keys.join(' ')}`.trim(),
    ]);
  });
  for (const a of active) if (comparePositions(end, a.position) > 0) a.position = end;
  return { end, changed };
}
