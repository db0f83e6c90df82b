import type { Pool } from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { HealthCheck } from '#shared/http/system/healthChecks';
import type { Metrics } from '#shared/metrics/metrics';
import type { Logger } from '#shared/logging/logger';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import type { ProjectionProgress } from '#shared/projections/projectionProgress';
import { loopHealthCheck } from '#shared/platform/loopHealthCheck';
import type { SearchWriter } from '#shared/search/searchIndex';
import { projectionsWithSearchMirror } from './projections/allProjections';

/** Starts the read-model projector, reporting position and lag as metrics. */
export function startProjector(deps: {
  store: EventStore;
  pool: Pool;
  metrics: Metrics;
  logger: Logger;
  progress?: ProjectionProgress;
  /** SEARCH_BACKEND=elasticsearch: the index the search projection also feeds. */
  searchMirror?: SearchWriter;
}): ProjectionRunner {
  const runner = new ProjectionRunner({
    store: deps.store,
    pool: deps.pool,
    projections: projectionsWithSearchMirror(deps.searchMirror),
    progress: deps.progress,
    logger: deps.logger,
    metrics: deps.metrics,
    onBatch: ({ position, lastRecordedAt }) => {
      deps.metrics.setProjectionPosition('read_models', position);
      if (lastRecordedAt)
        deps.metrics.setProjectionLag(
          'read_models',
          Math.max(0, (Date.now() - Date.parse(lastRecordedAt)) / 1000),
        );
    },
  });
  runner.start();
  return runner;
}

/** /health/ check of a runner: failing while it cannot work (leading and standing by both count as running). */
export function projectionRunnerHealthCheck(runner: ProjectionRunner): HealthCheck {
  return loopHealthCheck(() => runner.status());
}
