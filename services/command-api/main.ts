import http from 'node:http';
import { loadConfig } from '../../shared/config/config';
import { createLogger } from '../../shared/logging/logger';
import { createMetrics } from '../../shared/metrics/metrics';
import { openInfrastructure } from '../../shared/runtime/openInfrastructure';
import { runUntilSignal } from '../../shared/runtime/runUntilSignal';
import { createServiceContext } from '../serviceContext';
import { createCommandApp } from './createCommandApp';
import { ensureConfiguredStaff } from '../../shared/domain/identity/ensureStaffAccount';

/**
 * The command API alone (distributed mode): needs DATABASE_URL (read models, and the event store
 * unless EVENTSTORE_CONNECTION_STRING is set). Follows the projector's progress via NOTIFY.
 */
void runUntilSignal('command-api', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'command-api', level: config.logLevel });
  const metrics = createMetrics('command-api');
  const infra = await openInfrastructure(config, logger);
  const context = await createServiceContext(config, infra, logger, metrics);
  await ensureConfiguredStaff(config.admin, context.commandDeps, logger);

  const app = createCommandApp(
    { ...context.apiOptions, serve: { health: true, metrics: true, docs: false } },
    context.commandRoutes,
  );
  const server = http.createServer(app).listen(config.port, config.host);
  server.requestTimeout = 0;
  logger.info('command-api listening', { port: config.port });
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
