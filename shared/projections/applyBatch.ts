import type { Pool, PoolClient } from 'pg';
import type { GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import { comparePositions, formatPosition } from '#shared/eventStore/eventStore';
import { withClient } from '#shared/infra/postgres/withClient';
import type { ActiveProjection } from './activeProjections';
import { advanceCheckpoints } from './checkpointStore';
import { appliesTo, contextFor } from './projection';

export const PROGRESS_CHANNEL = 'projection_progress';

/** More changed keys than this in one batch: listeners are told "everything" ('*') instead. */
const MAX_NOTIFIED_KEYS = 200;
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more ("payload string too long"). */
const MAX_PAYLOAD_BYTES = 7900;

/** "<position> <key> <key>...", or "<position> *" when the keys are too many or too long to name. */
function progressPayload(end: GlobalPosition, changed: readonly string[]): string {
  const position = formatPosition(end);
  if (changed.length > MAX_NOTIFIED_KEYS) return `${position} *`;
  const named = `${position} ${changed.join(' ')}`.trim();
  return Buffer.byteLength(named) < MAX_PAYLOAD_BYTES ? named : `${position} *`;
}

/**
 * Applies one batch to every active projection in ONE transaction that also advances each
 * checkpoint (commitBatch). Returns the batch's end and the changed keys.
 */
export async function applyBatch(
  pool: Pool,
  active: ActiveProjection[],
  batch: readonly RecordedEvent[],
): Promise<{ end: GlobalPosition; changed: string[] }> {
  const end = batch[batch.length - 1]!.position;
  return commitBatch(pool, active, end, async (client) => {
    const changed: string[] = [];
    for (const a of active) {
      const events = batch.filter(
        (e) => appliesTo(a.projection, e.type) && comparePositions(e.position, a.position) > 0,
      );
      if (events.length > 0)
        changed.push(...(await a.projection.apply(contextFor(a.projection, client), events)));
    }
    return changed;
  });
}

/**
 * Runs `work` (the projections' writes for the events up to `end`; it returns the changed keys) in
 * ONE transaction that also advances each active projection's checkpoint to `end` (guarded: a
 * checkpoint not where this runner left it means another runner got there first, and everything
 * rolls back) and notifies PROGRESS_CHANNEL on commit. Returns `end` and the changed keys.
 *
 * The commit is not waited for on disk (synchronous_commit off, this transaction only): the read
 * models are derived data, and a crash can only lose whole batches, effects and checkpoints
 * together (the WAL keeps their order), which the runner applies again from the events. What it
 * saves is a disk flush per batch, most of the projection lag and of a rebuild's time.
 */
export async function commitBatch(
  pool: Pool,
  active: ActiveProjection[],
  end: GlobalPosition,
  work: (client: PoolClient) => Promise<readonly string[]>,
): Promise<{ end: GlobalPosition; changed: string[] }> {
  const changed: string[] = [];
  await unflushedTransaction(pool, async (client) => {
    changed.push(...(await work(client)));
    const behind = active.filter((a) => comparePositions(end, a.position) > 0);
    const stale = await advanceCheckpoints(client, behind, end);
    if (stale.length > 0)
      throw new Error(`checkpoint of ${stale.join(', ')} moved under us (another runner?)`);
    await client.query('SELECT pg_notify($1, $2)', [PROGRESS_CHANNEL, progressPayload(end, changed)]);
  });
  for (const a of active) if (comparePositions(end, a.position) > 0) a.position = end;
  return { end, changed };
}

/**
 * A transaction whose commit is not waited for on disk (see applyBatch), begun in one round trip:
 * BEGIN and the setting go together. COMMIT when `work` resolves, ROLLBACK when it throws (the
 * original error wins over a failed rollback).
 */
async function unflushedTransaction(pool: Pool, work: (client: PoolClient) => Promise<void>): Promise<void> {
  await withClient(pool, async (client) => {
    try {
      await client.query('BEGIN; SET LOCAL synchronous_commit TO off');
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}
