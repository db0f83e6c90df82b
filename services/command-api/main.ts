import http from 'node:http';
import { loadConfig } from '../../shared/config/config';
import { createLogger } from '../../shared/logging/logger';
import { createMetrics } from '../../shared/metrics/metrics';
import { openInfrastructure } from '../../shared/runtime/openInfrastructure';
import { listenProjectionProgress } from '../../shared/runtime/listenProjectionProgress';
import { runUntilSignal } from '../../shared/runtime/runUntilSignal';
import { instrumentEventStore } from '../../shared/eventStore/instrumentedEventStore';
import { createServiceContext } from '../serviceContext';
import { createCommandApp } from './createCommandApp';
import { ensureConfiguredStaff } from '../../shared/domain/identity/ensureStaffAccount';

/**
 * The command API alone (distributed mode): needs DATABASE_URL (read models, and the event store
 * unless EVENTSTORE_CONNECTION_STRING is set). Waits for the projector's progress via NOTIFY.
 */
void runUntilSignal('command-api', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'command-api', level: config.logLevel });
  const metrics = createMetrics('command-api');
  const infra = await openInfrastructure(config, logger);
  const store = instrumentEventStore(infra.store, (type, n) => metrics.eventsAppended(type, n));
  const context = await createServiceContext(config, { ...infra, store }, logger, metrics);
  const progress = await listenProjectionProgress(infra.databaseUrl, context.progress, logger);
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
        await progress.close();
        await context.rateLimiter.close();
        await infra.close();
      },
    },
  };
});
