import { loadConfig } from '#shared/config/config';
import { createHttpServer } from '#shared/http/index';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { dependencyHealthChecks } from '#shared/platform/dependencyHealthChecks';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import { runUntilSignal, servingUntilSignal } from '#shared/platform/runUntilSignal';
import { openSearchBackend } from '#shared/search/searchBackend';
import { opsHttpHandler } from '#shared/http/system/opsHttpHandler';
import { projectionRunnerHealthCheck, startProjector } from './startProjector';

/**
 * The projector alone (distributed mode). Several may run: one holds the leader lock and works,
 * the others wait to take over. Serves /metrics/, /health/ and /health/live/ on PORT.
 */
void runUntilSignal('projector', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'projector', level: config.logLevel });
  const metrics = createMetrics('projector');
  const infra = await openInfrastructure(config, logger);
  const search = await openSearchBackend(config, infra.readModels);
  const runner = startProjector({
    store: infra.store,
    pool: infra.readModels,
    metrics,
    logger,
    searchMirror: search.mirror,
    ledgerHeadLogIntervalSeconds: config.ledgerHeadLogIntervalSeconds,
  });
  const healthChecks = {
    ...dependencyHealthChecks({
      readModels: infra.readModels,
      store: infra.store,
      maxProjectionLagSeconds: config.healthMaxProjectionLagSeconds,
    }),
    projection_runner: projectionRunnerHealthCheck(runner),
  };
  const server = createHttpServer(opsHttpHandler(metrics, healthChecks), config.httpTimeouts).listen(
    config.port,
    config.host,
  );
  return servingUntilSignal(
    logger,
    server,
    [
      ['projection runner', () => runner.stop()],
      ['search backend', () => search.close()],
    ],
    infra,
  );
});
