import type { Config } from '../shared/config/config';
import type { Logger } from '../shared/logging/logger';
import type { Metrics } from '../shared/metrics/metrics';
import type { Infrastructure } from '../shared/runtime/openInfrastructure';
import { ProjectionProgress } from '../shared/projections/projectionProgress';
import { TokenAuthenticator } from '../shared/auth/tokenAuthenticator';
import { PostgresRateLimitBackend, createRateLimiter } from '../shared/http';
import type { ApiAppOptions, RateLimiter } from '../shared/http';
import { createPasswordHasher } from '../shared/auth/passwords';
import { IdAllocator } from '../shared/commandHandling/allocateId';
import type { CommandDeps } from './command-api/commandDeps';
import type { QueryDeps } from './query-api/queryDeps';
import type { RouteSpec } from '../shared/http/routeSpec';
import { commandRoutes } from './command-api/commandRoutes';
import { queryRoutes } from './query-api/queryRoutes';
import { UserCache } from './query-api/features/account/userCache';

export interface ServiceContext {
  readonly progress: ProjectionProgress;
  readonly commandDeps: CommandDeps;
  readonly queryDeps: QueryDeps;
  readonly commandRoutes: readonly RouteSpec[];
  readonly queryRoutes: readonly RouteSpec[];
  /** Options shared by both API apps. */
  readonly apiOptions: Omit<ApiAppOptions, 'serviceName' | 'routes'>;
  readonly rateLimiter: RateLimiter;
}

/** What both APIs are built from: deps, route tables, authentication, shared rate limits, health checks. */
export async function createServiceContext(
  config: Config,
  infra: Infrastructure,
  logger: Logger,
  metrics: Metrics,
): Promise<ServiceContext> {
  const progress = new ProjectionProgress();
  const rateLimitBackend = new PostgresRateLimitBackend({ pool: infra.readModels, logger });
  await rateLimitBackend.migrate();
  const rateLimiter = createRateLimiter({ limits: config.rateLimits, backend: rateLimitBackend });
  const authenticator = new TokenAuthenticator({
    pool: infra.readModels,
    store: infra.store,
    progress,
    logger,
  });
  const commandDeps: CommandDeps = {
    store: infra.store,
    readModels: infra.readModels,
    blobs: infra.blobs,
    ids: new IdAllocator(infra.store),
    passwords: createPasswordHasher(config.passwordHashLogN),
    clock: () => new Date(),
    loginTokenTtlMs: config.loginTokenTtlMs,
    maxAvatarBytes: config.maxAvatarBytes,
  };
  const queryDeps: QueryDeps = {
    readModels: infra.readModels,
    blobs: infra.blobs,
    users: new UserCache(infra.readModels, progress),
  };
  const commands = commandRoutes(commandDeps);
  const queries = queryRoutes(queryDeps);
  return {
    progress,
    commandDeps,
    queryDeps,
    commandRoutes: commands,
    queryRoutes: queries,
    rateLimiter,
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
      openApiInfo: { title: 'Brain Imaging Catalogue API', version: '1.0.0' },
      healthChecks: {
        postgres: () => infra.readModels.query('SELECT 1'),
        event_store: () => infra.store.headPosition(),
        blob_store: () => infra.blobs.ping(),
      },
    },
  };
}
