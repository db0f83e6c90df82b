import type { Pool } from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import { comparePositions } from '#shared/eventStore/eventStore';
import type { ActiveProjection } from './activeProjections';
import type { Logger } from './logger';
import { swapIn } from './projectionInstaller';

/**
 * Swaps in every building version that has reached the store's head. Compared with the head, not
 * inferred from a short batch: a catch-up that ends exactly on a full batch is caught up too, and
 * no further batch may come until the next append. Returns whether anything was swapped.
 */
export async function swapCaughtUp(
  pool: Pool,
  store: Pick<EventStore, 'headPosition'>,
  active: readonly ActiveProjection[],
  logger?: Logger,
): Promise<boolean> {
  const building = active.filter((a) => a.status === 'building');
  if (building.length === 0) return false;
  const head = await store.headPosition();
  let swapped = false;
  for (const a of building) {
    if (comparePositions(a.position, head) < 0) continue;
    await swapIn(pool, a.projection);
    a.status = 'live';
    swapped = true;
    logger?.info('projection version swapped in', {
      projection: a.projection.name,
      version: a.projection.version,
    });
  }
  return swapped;
}
