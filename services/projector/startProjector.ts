import type { Pool } from 'pg';
import type { EventStore } from '#shared/eventStore/eventStore';
import type { HealthCheck } from '#shared/http/system/healthChecks';
import type { Metrics } from '#shared/metrics/metrics';
import type { Logger } from '#shared/logging/logger';
import { registerLedgerMetrics } from '#shared/metrics/ledgerMetrics';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import type { ProjectionProgress } from '#shared/projections/projectionProgress';
import { loopHealthCheck } from '#shared/platform/loopHealthCheck';
import type { SearchWriter } from '#shared/search/searchIndex';
import { projectionsWithSearchMirror } from './projections/allProjections';
import { readLedgerReadings, startLedgerHeadLog } from './ledgerHeadLog';

/** The running projector: its runner's status, and stop() for it and its ledger head log. */
export interface Projector {
  status(): ReturnType<ProjectionRunner['status']>;
  stop(): Promise<void>;
}

/**
 * Starts the read-model projector, reporting position and lag as metrics, with the ledger's gauges
 * and its head logged while this process leads (LEDGER_HEAD_LOG_INTERVAL_SECONDS).
 */
export function startProjector(deps: {
  store: EventStore;
  pool: Pool;
  metrics: Metrics;
  logger: Logger;
  progress?: ProjectionProgress;
  /** SEARCH_BACKEND=elasticsearch: the index the search projection also feeds. */
  searchMirror?: SearchWriter;
  /** Seconds between two `ledger head` log lines; 0 or absent: none. */
  ledgerHeadLogIntervalSeconds?: number;
}): Projector {
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
  registerLedgerMetrics(deps.metrics.registry, () => readLedgerReadings(deps.pool));
  const headLog = startLedgerHeadLog({
    pool: deps.pool,
    store: deps.store,
    logger: deps.logger,
    intervalSeconds: deps.ledgerHeadLogIntervalSeconds ?? 0,
    leading: () => runner.status().leading,
  });
  return {
    status: () => runner.status(),
    async stop() {
      headLog.stop();
      await runner.stop();
    },
  };
}

/** /health/ check of a runner: failing while it cannot work (leading and standing by both count as running). */
export function projectionRunnerHealthCheck(runner: Pick<Projector, 'status'>): HealthCheck {
  return loopHealthCheck(() => runner.status());
}
