import { loadConfig } from '#shared/config/config';
import { createHttpServer } from '#shared/http/index';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import { runUntilSignal, servingUntilSignal } from '#shared/platform/runUntilSignal';
import { createServicePlatform } from '#shared/platform/servicePlatform';
import { API_DOCUMENT, routeKeysOf } from '#shared/apiContract/apiContract';
import { createQueryDeps } from './queryDeps';
import { queryRoutes } from './queryRoutes';
import { createQueryApp } from './createQueryApp';
import { openSearchBackend } from '#shared/search/searchBackend';

/** The query API alone (distributed mode): reads the read models the projector maintains. */
void runUntilSignal('query-api', async () => {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'query-api', level: config.logLevel });
  const metrics = createMetrics('query-api');
  const infra = await openInfrastructure(config, logger);
  const platform = await createServicePlatform(config, infra, logger, metrics);
  const search = await openSearchBackend(config, infra.readModels, { logger });
  // It documents the whole service (the gateway sends /api/schema/ here) from the generated document.
  const app = createQueryApp(
    { ...platform.apiOptions, knownRoutes: routeKeysOf(API_DOCUMENT), openApiDocument: API_DOCUMENT },
    queryRoutes(createQueryDeps(config, infra, platform.progress, logger, search.reader)),
  );
  const server = createHttpServer(app, config.httpTimeouts).listen(config.port, config.host);
  logger.info('query-api listening', { port: config.port });
  return servingUntilSignal(
    logger,
    server,
    [
      ['search backend', () => search.close()],
      ['service platform', () => platform.close()],
    ],
    infra,
  );
});
