import type { Config } from '../config/config';
import type { Logger } from '../logging/logger';
import type { Metrics } from '../metrics/metrics';
import type { Infrastructure } from './openInfrastructure';
import { ProjectionProgress } from '../projections/projectionProgress';
import { TokenAuthenticator } from '../auth/tokenAuthenticator';
import { PostgresRateLimitBackend, createRateLimiter } from '../http';
import type { ApiAppOptions } from '../http';
import { instrumentEventStore } from '../eventStore/instrumentedEventStore';
import type { EventStore } from '../eventStore/eventStore';
import { listenProjectionProgress } from './listenProjectionProgress';

export const API_INFO = { title: 'Brain Imaging Catalogue API', version: '1.0.0' } as const;

/** What every API process is built on, whichever routes it serves. */
export interface ServicePlatform {
  /** The event store, counting appends by type (events_appended_total). */
  readonly store: EventStore;
  /** Fed by this process's projector (all-in-one) and by the leading projector's notifications. */
  readonly progress: ProjectionProgress;
  /** Options of every API app of the process; each service adds its routes. */
  readonly apiOptions: Omit<ApiAppOptions, 'serviceName' | 'routes'>;
  /** Stops following the projector and flushes the rate-limit counts; the caller closes infra. */
  close(): Promise<void>;
}

/** Authentication, shared rate limits, read-your-writes progress and health checks for an API process. */
export async function createServicePlatform(
  config: Config,
  infra: Infrastructure,
  logger: Logger,
  metrics: Metrics,
): Promise<ServicePlatform> {
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
  const authenticator = new TokenAuthenticator({
    pool: infra.readModels,
    store,
    progress,
    logger,
  });
  return {
    store,
    progress,
    async close() {
      await progressListener.close();
      await rateLimiter.close();
    },
    apiOptions: {
      authenticator,
      consistency: progress,
      consistencyTimeoutMs: config.readYourWritesTimeoutMs,
      metrics,
      logger,
      rateLimiter,
      trustProxy: config.trustProxy,
      jsonBodyLimitBytes: config.jsonBodyLimitBytes,
      publicBaseUrl: config.publicBaseUrl,
      allowedHosts: config.allowedHosts,
      openApiInfo: API_INFO,
      healthChecks: {
        postgres: () => infra.readModels.query('SELECT 1'),
        event_store: () => infra.store.headPosition(),
        blob_store: () => infra.blobs.ping(),
      },
    },
  };
}
