import { BLOB_SWEEPER_LOOP, startBlobSweeper } from '#shared/blobSweep/startBlobSweeper';
import type { Config } from '#shared/config/config';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import type { SupervisedLoop } from '#shared/runtime/supervisedLoop';
import { loopHealthCheck } from './loopHealthCheck';
import type { Infrastructure } from './openInfrastructure';
import type { ServicePlatform } from './servicePlatform';

/**
 * The blob sweep of a process that stores blobs (the all-in-one, the command API), when
 * BLOB_SWEEP_ENABLED: started, and named in the process's /health/. Undefined when disabled.
 */
export function startConfiguredBlobSweeper(
  config: Config,
  infra: Infrastructure,
  platform: ServicePlatform,
  logger: Logger,
  metrics: Metrics,
): SupervisedLoop | undefined {
  if (!config.blobSweep.enabled) return undefined;
  const sweeper = startBlobSweeper(
    { blobs: infra.blobs, pool: infra.readModels, store: platform.store, logger, metrics },
    config.blobSweep,
  );
  platform.addHealthCheck(
    BLOB_SWEEPER_LOOP,
    loopHealthCheck(() => sweeper.status()),
  );
  return sweeper;
}
