import path from 'node:path';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '#shared/config/config';
import type { Logger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import type { RunningPostgres } from '#shared/infra/postgres/embeddedPostgres';
import { closeHttpServer, createGateway, createHttpServer } from '#shared/http/index';
import { closeInOrder } from '#shared/runtime/closeInOrder';
import { createServicePlatform } from '#shared/platform/servicePlatform';
import { ensureConfiguredStaff } from '#services/command-api/features/accounts/ensureStaffAccount';
import { createCommandDeps } from '#services/command-api/commandDeps';
import { createCommandApp } from '#services/command-api/createCommandApp';
import { createQueryDeps } from '#services/query-api/queryDeps';
import { createQueryApp } from '#services/query-api/createQueryApp';
import { projectionRunnerHealthCheck, startProjector } from '#services/projector/startProjector';
import { createProcessor } from '#services/processor/createProcessor';
import { PROCESSOR_LOOP } from '#services/processor/startProcessor';
import { serviceRoutes } from './serviceRoutes';
import { openSearchBackend } from '#shared/search/searchBackend';
import { createRelay } from '#services/relay/createRelay';
import { startConfiguredBlobSweeper } from '#shared/platform/startConfiguredBlobSweeper';
import { openTusStorage } from '#shared/tus/openTusStorage';
import { tusEndpoint } from '#services/command-api/features/tus/tusEndpoint';

export interface RunningService {
  readonly url: string;
  readonly server: http.Server;
  /** The supervised embedded PostgreSQL (no DATABASE_URL): state() / isRunning() for /health/. */
  readonly embeddedPostgres: RunningPostgres | undefined;
  /** Resolves once the query side's in-memory search index is loaded (SearchBackend.loaded). */
  searchLoaded(): Promise<void>;
  close(): Promise<void>;
}

export interface AllInOneOptions {
  /** The clock of commands and token expiry (tests move it instead of sleeping). */
  readonly clock?: () => Date;
}

/**
 * The all-in-one: gateway, command API, query API, projector and upload processor (unless
 * PROCESSOR_ENABLED=false) in one process, on an embedded PostgreSQL unless DATABASE_URL is given.
 * The projector feeds read-your-writes directly.
 */
export async function startAllInOne(
  config: Config,
  logger: Logger,
  options: AllInOneOptions = {},
): Promise<RunningService> {
  const clock = options.clock ?? (() => new Date());
  const metrics = createMetrics('catalogue');
  const infra = await openInfrastructure(config, logger);
  const platform = await createServicePlatform(config, infra, logger, metrics, clock);
  const search = await openSearchBackend(config, infra.readModels, { logger });
  const projector = startProjector({
    searchMirror: search.mirror,
    store: platform.store,
    pool: infra.readModels,
    metrics,
    logger,
    progress: platform.progress,
    ledgerHeadLogIntervalSeconds: config.ledgerHeadLogIntervalSeconds,
  });
  platform.addHealthCheck('projection_runner', projectionRunnerHealthCheck(projector));
  // Inspection runs in worker threads: never on the event loop that answers requests.
  const processor = config.processor.enabled
    ? createProcessor(config, infra, platform.store, logger, metrics)
    : undefined;
  if (processor) platform.addHealthCheck(PROCESSOR_LOOP, processor.healthCheck);
  // Events out to Kafka for other consumers, when brokers are configured.
  const relay = config.kafka ? createRelay(config.kafka, infra, platform.store, logger, metrics) : undefined;
  for (const [name, check] of Object.entries(relay?.healthChecks ?? {})) platform.addHealthCheck(name, check);
  // Leftovers of killed writes and blobs no record names, swept by one process at a time.
  const blobSweeper = startConfiguredBlobSweeper(config, infra, platform, logger, metrics);
  const commandDeps = createCommandDeps(config, infra, platform.store, logger, clock);
  await ensureConfiguredStaff(config.admin, commandDeps, logger);

  const { commands, queries } = serviceRoutes(
    commandDeps,
    createQueryDeps(config, infra, platform.progress, logger, search.reader),
  );
  const common = { ...platform.apiOptions, knownRoutes: [...commands, ...queries] };
  // Resumable uploads: state in PostgreSQL and the blob store, shared with every other instance.
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
  const commandApp = createCommandApp(
    {
      ...common,
      serve: { health: false, metrics: false, docs: false },
      rawHandlers: [tusEndpoint(commandDeps, tus)],
    },
    commands,
  );
  const queryApp = createQueryApp({ ...common, openApiRoutes: [...commands, ...queries] }, queries);
  const server = createHttpServer(createGateway({ commandApp, queryApp }), config.httpTimeouts);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  logger.info('catalogue listening', { url });
  return {
    url,
    server,
    embeddedPostgres: infra.embeddedPostgres,
    searchLoaded: () => search.loaded(),
    async close() {
      await closeInOrder(logger, [
        ['http server', () => closeHttpServer(server)],
        ['blob sweeper', async () => blobSweeper?.stop()],
        ['tus storage', () => tus.close()],
        ['upload processor', async () => processor?.stop()],
        ['kafka relay', async () => relay?.close()],
        ['projector', () => projector.stop()],
        ['search backend', () => search.close()],
        ['service platform', () => platform.close()],
        ['infrastructure', () => infra.close()],
      ]);
    },
  };
}
