import type { Pool } from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import { START } from '#shared/eventStore/eventStore';
import { readLivePosition } from './checkpointStore';

/**
 * Age in seconds of the oldest event the live read models have not applied yet; 0 when they are
 * caught up. Needs only the checkpoints and the store, so any process can tell, runner or not.
 */
export async function projectionLagSeconds(
  readModels: Pool,
  store: Pick<EventStore, 'readAll'>,
  now: number = Date.now(),
): Promise<number> {
  const live = (await readLivePosition(readModels)) ?? START;
  const [oldest] = await store.readAll({ after: live, maxCount: 1 });
  if (!oldest) return 0;
  return Math.max(0, (now - Date.parse(oldest.metadata.recordedAt)) / 1000);
}
