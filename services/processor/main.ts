import { loadConfig } from '#shared/config/config';
import { createHttpServer } from '#shared/http/index';
import { instrumentEventStore } from '#shared/eventStore/instrumentedEventStore';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import { runUntilSignal, servingUntilSignal } from '#shared/platform/runUntilSignal';
import { opsHttpHandler } from '#shared/http/system/opsHttpHandler';
import { createProcessor } from './createProcessor';
import { PROCESSOR_LOOP } from './startProcessor';

/**
 * `npm run start:processor`: the upload processor alone (distributed mode). Several may run on one
 * store; each upload is processed by one of them. Serves /metrics/, /health/ and /health/live/ on PORT.
 */
void runUntilSignal('processor', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'processor', level: config.logLevel });
  const metrics = createMetrics('processor');
  const infra = await openInfrastructure(config, logger, { poolSize: 4 });
  const store = instrumentEventStore(infra.store, (type, n) => metrics.eventsAppended(type, n));
  const processor = createProcessor(config, infra, store, logger, metrics);
  const healthChecks = {
    postgres: () => infra.readModels.query('SELECT 1'),
    event_store: () => infra.store.headPosition(),
    blob_store: () => infra.blobs.ping(),
    [PROCESSOR_LOOP]: processor.healthCheck,
  };
  const server = createHttpServer(opsHttpHandler(metrics, healthChecks), config.httpTimeouts).listen(
    config.port,
    config.host,
  );
  logger.info('processor started', { processor_id: processor.processorId, port: config.port });
  return servingUntilSignal(logger, server, [['upload processor', () => processor.stop()]], infra);
});
