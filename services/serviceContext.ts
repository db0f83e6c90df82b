import type { Config } from '../shared/config/config';
import type { Logger } from '../shared/logging/logger';
import type { Metrics } from '../shared/metrics/metrics';
import type { Infrastructure } from '../shared/runtime/openInfrastructure';
import { ProjectionProgress } from '../shared/projections/projectionProgress';
import { TokenAuthenticator } from '../shared/auth/tokenAuthenticator';
import { PostgresRateLimitBackend, createIdempotency, createRateLimiter } from '../shared/http';
import type { ApiAppOptions } from '../shared/http';
import { createPasswordHasher } from '../shared/auth/passwords';
import { IdAllocator } from '../shared/commandHandling/allocateId';
import type { CommandDeps } from './command-api/commandDeps';
import type { QueryDeps } from './query-api/queryDeps';
import type { RouteSpec } from '../shared/http/routeSpec';
import { commandRoutes } from './command-api/commandRoutes';
import { queryRoutes } from './query-api/queryRoutes';
import { UserLoader } from './query-api/features/account/userLoader';
import { instrumentEventStore } from '../shared/eventStore/instrumentedEventStore';
import type { EventStore } from '../shared/eventStore/eventStore';
import { listenProjectionProgress } from '../shared/runtime/listenProjectionProgress';

export interface ServiceContext {
  /** The event store, counting appends by type (events_appended_total). */
  readonly store: EventStore;
  /** Fed by this process's projector (all-in-one) and by the leading projector's notifications. */
  readonly progress: ProjectionProgress;
  readonly commandDeps: CommandDeps;
  readonly queryDeps: QueryDeps;
  readonly commandRoutes: readonly RouteSpec[];
  readonly queryRoutes: readonly RouteSpec[];
  /** Options shared by both API apps. */
  readonly apiOptions: Omit<ApiAppOptions, 'serviceName' | 'routes'>;
  /** Stops following the projector and flushes the rate-limit counts; the caller closes infra. */
  close(): Promise<void>;
}

/** What both APIs are built from: deps, route tables, authentication, shared rate limits, health checks. */
export async function createServiceContext(
  config: Config,
  infra: Infrastructure,
  logger: Logger,
  metrics: Metrics,
): Promise<ServiceContext> {
  const store = instrumentEventStore(infra.store, (type, n) => metrics.eventsAppended(type, n));
  const progress = new ProjectionProgress();
  // Any process may be served by another process's projector (several all-in-ones share one
  // database; only one projector leads): its notifications say what the read models have applied.
  const progressListener = await listenProjectionProgress(
    infra.databaseUrl,
    infra.readModels,
    progress,
    logger,
  );
  const rateLimitBackend = new PostgresRateLimitBackend({ pool: infra.readModels, logger });
  await rateLimitBackend.migrate();
  const rateLimiter = createRateLimiter({ limits: config.rateLimits, backend: rateLimitBackend });
  // Records live with the events (one transaction) where the store allows it, else in the read
  // models' database.
  const idempotency = createIdempotency({
    ...(store.unitOfWork ? { unitOfWork: store.unitOfWork } : { pool: infra.readModels }),
    onCommitted: config.faultInjectCrashAfterCommit ? () => process.kill(process.pid, 'SIGKILL') : undefined,
  });
  await idempotency.ensureSchema();
  const authenticator = new TokenAuthenticator({
    pool: infra.readModels,
    store,
    progress,
    logger,
  });
  const commandDeps: CommandDeps = {
    store,
    readModels: infra.readModels,
    blobs: infra.blobs,
    ids: new IdAllocator(store),
    passwords: createPasswordHasher(config.passwordHashLogN),
    clock: () => new Date(),
    loginTokenTtlMs: config.loginTokenTtlMs,
    maxAvatarBytes: config.maxAvatarBytes,
  };
  const queryDeps: QueryDeps = {
    readModels: infra.readModels,
    blobs: infra.blobs,
    users: new UserLoader(infra.readModels),
  };
  const commands = commandRoutes(commandDeps);
  const queries = queryRoutes(queryDeps);
  return {
    store,
    progress,
    commandDeps,
    queryDeps,
    commandRoutes: commands,
    queryRoutes: queries,
    async close() {
      await progressListener.close();
      await rateLimiter.close();
    },
    apiOptions: {
      knownRoutes: [...commands, ...queries],
      authenticator,
      consistency: progress,
      consistencyTimeoutMs: config.readYourWritesTimeoutMs,
      metrics,
      logger,
      rateLimiter,
      trustProxy: config.trustProxy,
      jsonBodyLimitBytes: config.jsonBodyLimitBytes,
      publicBaseUrl: config.publicBaseUrl,
      idempotency,
      openApiInfo: { title: 'Brain Imaging Catalogue API', version: '1.0.0' },
      healthChecks: {
        postgres: () => infra.readModels.query('SELECT 1'),
        event_store: () => infra.store.headPosition(),
        blob_store: () => infra.blobs.ping(),
      },
    },
  };
}
