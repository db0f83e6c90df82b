import type { Pool, PoolClient } from 'pg';
import { comparePositions, type GlobalPosition } from '#shared/eventStore/eventStore';
import {
  EVENTS_COPY_SETTINGS,
  type CopiedEvents,
  type EventTables,
  readCopiedEvents,
} from '#shared/eventStore/postgres/eventsCopy';
import { withClient } from '#shared/infra/postgres/withClient';
import type { ActiveProjection } from './activeProjections';
import { commitBatch } from './applyBatch';
import { contextFor } from './projection';

export interface CopyLane {
  /** The read models' pool. */
  readonly pool: Pool;
  /** A projection offering beginCopyCatchUp. */
  readonly active: ActiveProjection;
  readonly tables: EventTables;
  /** Where the catch-up ends: everything committed before it began. */
  readonly head: GlobalPosition;
  readonly batchSize: number;
  /** Asked between batches: true ends the lane where it is (another lane failed). */
  readonly stopped: () => boolean;
  /** After each committed batch: events applied so far, and the position reached. */
  readonly onBatch: (applied: number, position: GlobalPosition) => void;
}

/**
 * One projection's catch-up from the PostgreSQL store's table (Projection.beginCopyCatchUp): the
 * events read by binary COPY on a connection of their own, the next batch while this one is applied
 * (and handed to the session's prepare as soon as it is read, in order), each batch applied with the
 * checkpoint in one transaction (commitBatch), one after another, as the runner's other lanes apply
 * theirs. Returns the events applied.
 */
export async function catchUpByCopy(lane: CopyLane): Promise<number> {
  const { active: a, pool } = lane;
  const session = await withClient(pool, (client) =>
    a.projection.beginCopyCatchUp!(contextFor(a.projection, client)),
  );
  // The session's settings must not reach the pool's next user: the connection is closed after.
  return withClient(
    lane.tables.pool,
    async (reader) => {
      await reader.query(EVENTS_COPY_SETTINGS);
      // Each batch goes to the session's prepare as soon as it is read (so in order), before apply.
      const read = async (after: GlobalPosition): Promise<CopiedEvents> => {
        const batch = await readTowards(reader, lane, after);
        if (batch.count > 0) session.prepare?.(batch);
        return batch;
      };
      let applied = 0;
      let batch = await read(a.position);
      while (batch.count > 0 && !lane.stopped()) {
        const current = batch;
        const committing = commitBatch(pool, [a], current.end, (client) =>
          session.apply(contextFor(a.projection, client), current),
        );
        committing.catch(() => undefined); // awaited below, whatever the read does
        try {
          batch = await read(current.end);
        } finally {
          await committing;
        }
        applied += current.count;
        lane.onBatch(applied, current.end);
      }
      return applied;
    },
    { discard: true },
  );
}

/**
 * The next batch up to the head, empty once there. Events up to the head are committed, but the
 * table gives only what no transaction still open on the server can precede (readAll's rule): while
 * an older one is open anywhere, the rest is held back for a moment; wait for it rather than end
 * short of the head.
 */
async function readTowards(client: PoolClient, lane: CopyLane, after: GlobalPosition): Promise<CopiedEvents> {
  for (let waitMs = 5; comparePositions(after, lane.head) < 0; waitMs = Math.min(waitMs * 2, 200)) {
    const batch = await readCopiedEvents(client, lane.tables.events, after, lane.head, lane.batchSize);
    if (batch.count > 0) return batch;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  return { bytes: Buffer.alloc(0), count: 0, end: after };
}
