import type { Pool } from 'pg';
import type { BlobStore } from '#shared/blobStore/blobStore';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { HealthCheck } from '#shared/http/system/healthChecks';
import { projectionLagSeconds } from '#shared/projections/projectionLag';

export interface DependencyHealthSources {
  readonly readModels: Pool;
  readonly store: EventStore;
  readonly blobs?: BlobStore;
  readonly maxProjectionLagSeconds: number;
}

/**
 * The checks every process runs on /health/, by name. Processes add their own (a projection runner's
 * state, a supervisor's) to the same record.
 */
export function dependencyHealthChecks(sources: DependencyHealthSources): Record<string, HealthCheck> {
  const { readModels, store, blobs, maxProjectionLagSeconds } = sources;
  const checks: Record<string, HealthCheck> = {
    postgres: () => readModels.query('SELECT 1'),
    event_store: () => store.headPosition(),
    projection_lag: async () => {
      const lag = await projectionLagSeconds(readModels, store);
      if (lag > maxProjectionLagSeconds)
        throw new Error(
          `the oldest event not yet applied is ${lag.toFixed(1)} s old (limit ${maxProjectionLagSeconds} s)`,
        );
      return lag;
    },
  };
  if (blobs) checks.blob_store = () => blobs.ping();
  return checks;
}
