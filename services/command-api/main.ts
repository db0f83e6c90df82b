import path from 'node:path';
import { loadConfig } from '#shared/config/config';
import { createHttpServer } from '#shared/http/index';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import { runUntilSignal, servingUntilSignal } from '#shared/platform/runUntilSignal';
import { createServicePlatform } from '#shared/platform/servicePlatform';
import { API_DOCUMENT, routeKeysOf } from '#shared/apiContract/apiContract';
import { createCommandDeps } from './commandDeps';
import { commandRoutes } from './commandRoutes';
import { createCommandApp } from './createCommandApp';
import { ensureConfiguredStaff } from './features/accounts/ensureStaffAccount';
import { startConfiguredBlobSweeper } from '#shared/platform/startConfiguredBlobSweeper';
import { openTusStorage } from '#shared/tus/openTusStorage';
import { tusEndpoint } from './features/tus/tusEndpoint';

/**
 * The command API alone (distributed mode): needs DATABASE_URL (read models, and the event store
 * unless EVENTSTORE_CONNECTION_STRING is set). Follows the projector's progress via NOTIFY.
 */
void runUntilSignal('command-api', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'command-api', level: config.logLevel });
  const metrics = createMetrics('command-api');
  const infra = await openInfrastructure(config, logger);
  const platform = await createServicePlatform(config, infra, logger, metrics);
  const deps = createCommandDeps(config, infra, platform.store, logger);
  // The command API stores uploads, avatars and category images: it sweeps what crashes left.
  const blobSweeper = startConfiguredBlobSweeper(config, infra, platform, logger, metrics);
  await ensureConfiguredStaff(config.admin, deps, logger);
  const tus = await openTusStorage({
    databaseUrl: infra.databaseUrl,
    pool: infra.readModels,
    blobs: infra.blobs,
    config: config.tus,
    s3: config.s3,
    blobRoot: path.join(config.dataDir, 'blobs'),
    directIo: config.blobDirectIo,
    logger,
    runCleanup: true,
  });

  const app = createCommandApp(
    {
      ...platform.apiOptions,
      knownRoutes: routeKeysOf(API_DOCUMENT),
      serve: { health: true, metrics: true, docs: false },
      rawHandlers: [tusEndpoint(deps, tus)],
    },
    commandRoutes(deps),
  );
  const server = createHttpServer(app, config.httpTimeouts).listen(config.port, config.host);
  logger.info('command-api listening', { port: config.port });
  return servingUntilSignal(
    logger,
    server,
    [
      ['blob sweeper', async () => blobSweeper?.stop()],
      ['tus storage', () => tus.close()],
      ['service platform', () => platform.close()],
    ],
    infra,
  );
});
