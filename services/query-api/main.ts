import http from 'node:http';
import { loadConfig } from '../../shared/config/config';
import { createLogger } from '../../shared/logging/logger';
import { createMetrics } from '../../shared/metrics/metrics';
import { openInfrastructure } from '../../shared/runtime/openInfrastructure';
import { runUntilSignal } from '../../shared/runtime/runUntilSignal';
import { createServiceContext } from '../serviceContext';
import { createQueryApp } from './createQueryApp';

/** The query API alone (distributed mode): reads the read models the projector maintains. */
void runUntilSignal('query-api', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'query-api', level: config.logLevel });
  const metrics = createMetrics('query-api');
  const infra = await openInfrastructure(config, logger);
  const context = await createServiceContext(config, infra, logger, metrics);
  const server = http
    .createServer(createQueryApp(context.apiOptions, context.queryRoutes))
    .listen(config.port, config.host);
  logger.info('query-api listening', { port: config.port });
  return {
    logger,
    service: {
      async close() {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await context.close();
        await infra.close();
      },
    },
  };
});
