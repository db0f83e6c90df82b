import type { Config } from '#shared/config/config';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import type { Infrastructure } from '#shared/platform/openInfrastructure';
import { blobSettingsOf } from './blobSettings';
import { type RunningProcessor, startProcessor } from './startProcessor';
import { inspectionTimeLimitSeconds } from './timeLimit';
import { workerInspector } from './workerInspector';

/** The processor as the composition roots start it: the configured stores, inspection in workers. */
export function createProcessor(
  config: Config,
  infra: Pick<Infrastructure, 'readModels' | 'blobs'>,
  store: EventStore,
  logger: Logger,
  metrics: Metrics,
): RunningProcessor {
  const { processor } = config;
  return startProcessor({
    store,
    pool: infra.readModels,
    blobs: infra.blobs,
    inspector: workerInspector({
      blobs: blobSettingsOf(config),
      inspectorModule: processor.inspectorModule,
      timeLimitMs: (job) => inspectionTimeLimitSeconds(processor, job.sizeBytes) * 1000,
      memoryMb: processor.workerMemoryMb,
      nice: processor.workerNice,
    }),
    config: processor,
    logger: logger.child({ component: 'processor' }),
    metrics,
  });
}
