import type { Pool } from 'pg';
import type { GlobalPosition } from '#shared/eventStore/eventStore';
import { minPosition } from '#shared/eventStore/eventStore';
import type { CheckpointRow } from './checkpointStore';
import { migrateCheckpoints, readCheckpoints } from './checkpointStore';
import type { Projection } from './projection';
import { installProjection } from './projectionInstaller';

/** A projection the runner applies events to, with where its checkpoint stands. */
export interface ActiveProjection {
  readonly projection: Projection;
  status: CheckpointRow['status'];
  position: GlobalPosition;
}

/**
 * Installs tables and checkpoints that are new, then reads every checkpoint: the runner resumes
 * from what was committed, so a restart after any failure neither skips nor repeats an event.
 */
export async function loadActiveProjections(
  pool: Pool,
  projections: readonly Projection[],
  options: { deferReaderIndexes?: boolean } = {},
): Promise<ActiveProjection[]> {
  await migrateCheckpoints(pool);
  for (const projection of projections) await installProjection(pool, projection, options);
  const rows = await readCheckpoints(pool);
  return projections.map((projection) => {
    const row = rows.find((r) => r.projection === projection.name && r.version === projection.version);
    if (!row) throw new Error(`projection ${projection.name} v${projection.version} has no checkpoint`);
    return { projection, status: row.status, position: row.position };
  });
}

/** Where a read starts so that no active projection misses an event. */
export function earliestPosition(active: readonly { position: GlobalPosition }[]): GlobalPosition {
  return minPosition(active.map((a) => a.position));
}

/** What readers may rely on: the position every live projection has applied (undefined if none is live). */
export function livePosition(active: readonly ActiveProjection[]): GlobalPosition | undefined {
  const live = active.filter((a) => a.status === 'live');
  return live.length > 0 ? earliestPosition(live) : undefined;
}
