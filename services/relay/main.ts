import { loadConfig } from '#shared/config/config';
import { createHttpServer } from '#shared/http/index';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import { runUntilSignal, servingUntilSignal } from '#shared/platform/runUntilSignal';
import { opsHttpHandler } from '#shared/http/system/opsHttpHandler';
import { createRelay } from './createRelay';

/**
 * `npm run start:relay`: the Kafka relay alone (distributed mode; KAFKA_BROKERS required). Several
 * may run: the one holding the leader lock publishes, the others stand by. Serves /metrics/,
 * /health/ and /health/live/ on PORT.
 */
void runUntilSignal('relay', async () => {
  const config = loadConfig(process.env);
  if (!config.kafka) throw new Error('KAFKA_BROKERS is not set: the relay has nowhere to publish');
  const logger = createLogger({ service: 'relay', level: config.logLevel });
  const metrics = createMetrics('relay');
  const infra = await openInfrastructure(config, logger, { poolSize: 4 });
  const relayWithBus = createRelay(config.kafka, infra, infra.store, logger, metrics);
  const healthChecks = {
    postgres: () => infra.readModels.query('SELECT 1'),
    event_store: () => infra.store.headPosition(),
    ...relayWithBus.healthChecks,
  };
  const server = createHttpServer(opsHttpHandler(metrics, healthChecks), config.httpTimeouts).listen(
    config.port,
    config.host,
  );
  logger.info('relay started', { brokers: config.kafka.brokers, port: config.port });
  return servingUntilSignal(logger, server, [['kafka relay', () => relayWithBus.close()]], infra);
});
