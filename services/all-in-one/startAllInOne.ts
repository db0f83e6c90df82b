import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../shared/config/config';
import type { Logger } from '../../shared/logging/logger';
import { createMetrics } from '../../shared/metrics/metrics';
import { openInfrastructure } from '../../shared/runtime/openInfrastructure';
import type { RunningPostgres } from '../../shared/infra/postgres/embeddedPostgres';
import { createGateway } from '../../shared/http';
import { ensureConfiguredStaff } from '../../shared/domain/identity/ensureStaffAccount';
import { createServiceContext } from '../serviceContext';
import { createCommandApp } from '../command-api/createCommandApp';
import { createQueryApp } from '../query-api/createQueryApp';
import { startProjector } from '../projector/startProjector';

export interface RunningService {
  readonly url: string;
  readonly server: http.Server;
  /** The supervised embedded PostgreSQL (no DATABASE_URL): state() / isRunning() for /health/. */
  readonly embeddedPostgres: RunningPostgres | undefined;
  close(): Promise<void>;
}

export interface AllInOneOptions {
  /** The clock of commands and token expiry (tests move it instead of sleeping). */
  readonly clock?: () => Date;
}

/**
 * The all-in-one: gateway, command API, query API and projector in one process, on an embedded
 * PostgreSQL unless DATABASE_URL is given. The projector feeds read-your-writes directly.
 */
export async function startAllInOne(
  config: Config,
  logger: Logger,
  options: AllInOneOptions = {},
): Promise<RunningService> {
  const metrics = createMetrics('catalogue');
  const infra = await openInfrastructure(config, logger);
  const context = await createServiceContext(config, infra, logger, metrics, { clock: options.clock });
  const projector = startProjector({
    store: context.store,
    pool: infra.readModels,
    metrics,
    logger,
    progress: context.progress,
  });
  await ensureConfiguredStaff(config.admin, context.commandDeps, logger);

  const commandApp = createCommandApp(
    { ...context.apiOptions, serve: { health: false, metrics: false, docs: false } },
    context.commandRoutes,
  );
  const queryApp = createQueryApp(context.apiOptions, context.queryRoutes);
  const server = http.createServer(createGateway({ commandApp, queryApp }));
  // Uploads can be slow: no whole-request deadline, but idle sockets are still reaped.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
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
    async close() {
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await projector.stop();
      await context.close();
      await infra.close();
    },
  };
}
