import type { Config } from '#shared/config/config';
import type { Logger } from '#shared/logging/logger';
import type { Metrics } from '#shared/metrics/metrics';
import type { Infrastructure } from './openInfrastructure';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { TokenAuthenticator } from '#shared/auth/tokenAuthenticator';
import { tokenUseRecorder } from '#shared/commandHandling/tokenUseRecorder';
import { PostgresRateLimitBackend, createIdempotency, createRateLimiter } from '#shared/http/index';
import type { ApiAppOptions, HealthCheck } from '#shared/http/index';
import type { Idempotency } from '#shared/http/idempotency/idempotency';
import { IDEMPOTENT_REPLAYED_HEADER } from '#shared/http/idempotency/idempotencyKey';
import type { ConsistencyGate } from '#shared/projections/consistencyGate';
import { instrumentEventStore } from '#shared/eventStore/instrumentedEventStore';
import type { EventStore } from '#shared/eventStore/eventStore';
import { listenProjectionProgress } from './listenProjectionProgress';
import { dependencyHealthChecks } from './dependencyHealthChecks';
import { loopHealthCheck } from './loopHealthCheck';

export const API_INFO = { title: 'Brain Imaging Catalogue API', version: '1.0.0' } as const;

/** What every API process is built on, whichever routes it serves. */
export interface ServicePlatform {
  /** The event store, counting appends by type (events_appended_total). */
  readonly store: EventStore;
  /** Fed by this process's projector (all-in-one) and by the leading projector's notifications. */
  readonly progress: ProjectionProgress;
  /** Options of every API app of the process; each service adds its routes. */
  readonly apiOptions: Omit<ApiAppOptions, 'serviceName' | 'routes'>;
  /** Adds a check to /health/ of every app built from apiOptions (e.g. an in-process projection runner). */
  addHealthCheck(name: string, check: HealthCheck): void;
  /** Stops following the projector and flushes the rate-limit counts; the caller closes infra. */
  close(): Promise<void>;
}

/** Authentication, shared rate limits, read-your-writes progress and health checks for an API process. */
export async function createServicePlatform(
  config: Config,
  infra: Infrastructure,
  logger: Logger,
  metrics: Metrics,
  clock: () => Date = () => new Date(),
): Promise<ServicePlatform> {
  const store = instrumentEventStore(
    infra.store,
    (type, n) => metrics.eventsAppended(type, n),
    (seconds) => metrics.observeAppend(seconds),
  );
  const progress = new ProjectionProgress();
  // Any process may be served by another process's projector (several all-in-ones share one
  // database; only one projector leads): its notifications say what the read models have applied.
  const progressListener = listenProjectionProgress(
    infra.databaseUrl,
    infra.readModels,
    progress,
    logger,
    metrics,
  );
  const rateLimitBackend = new PostgresRateLimitBackend({ pool: infra.readModels, logger, metrics });
  await rateLimitBackend.migrate();
  const rateLimiter = createRateLimiter({
    limits: config.rateLimits,
    backend: rateLimitBackend,
    onRejected: (bucket) => metrics.rateLimitRejected(bucket),
  });
  // Records live with the events (one transaction) where the store allows it, else in the read
  // models' database.
  const idempotency = countingReplays(
    metrics,
    createIdempotency({
      ...(store.unitOfWork ? { unitOfWork: store.unitOfWork } : { pool: infra.readModels }),
      onCommitted: config.faultInjectCrashAfterCommit
        ? () => process.kill(process.pid, 'SIGKILL')
        : undefined,
    }),
  );
  await idempotency.ensureSchema();
  const authenticator = new TokenAuthenticator({
    pool: infra.readModels,
    store,
    recordUse: tokenUseRecorder(store),
    progress,
    logger,
    now: () => clock().getTime(),
  });
  // One record, read on every /health/ request: checks added later show up in every app.
  const healthChecks: Record<string, HealthCheck> = {
    ...dependencyHealthChecks({
      readModels: infra.readModels,
      store: infra.store,
      blobs: infra.blobs,
      maxProjectionLagSeconds: config.healthMaxProjectionLagSeconds,
    }),
    progress_listener: loopHealthCheck(() => progressListener.loop.status()),
  };
  const embedded = infra.embeddedPostgres;
  if (embedded)
    healthChecks.embedded_postgres = () =>
      embedded.isRunning()
        ? Promise.resolve()
        : Promise.reject(new Error(`the embedded PostgreSQL is ${embedded.state()}`));
  return {
    store,
    progress,
    addHealthCheck(name, check) {
      healthChecks[name] = check;
    },
    async close() {
      await progressListener.close();
      await rateLimiter.close();
    },
    apiOptions: {
      authenticator,
      consistency: countingTimeouts(metrics, progress),
      consistencyTimeoutMs: config.readYourWritesTimeoutMs,
      metrics,
      logger,
      rateLimiter,
      trustProxy: config.trustProxy,
      jsonBodyLimitBytes: config.jsonBodyLimitBytes,
      publicBaseUrl: config.publicBaseUrl,
      idempotency,
      allowedHosts: config.allowedHosts,
      openApiInfo: API_INFO,
      healthChecks,
      healthCheckTimeoutMs: HEALTH_CHECK_TIMEOUT_MS,
    },
  };
}

/** idempotency_replays_total: every reply that comes from a record (it carries Idempotent-Replayed). */
function countingReplays(metrics: Metrics, idempotency: Idempotency): Idempotency {
  return {
    ensureSchema: () => idempotency.ensureSchema(),
    async execute(request, handler) {
      const reply = await idempotency.execute(request, handler);
      if (reply.headers?.[IDEMPOTENT_REPLAYED_HEADER] === 'true') metrics.idempotencyReplayed();
      return reply;
    },
  };
}

/** read_your_writes_timeouts_total: every wait of a read that ran out. */
function countingTimeouts(metrics: Metrics, gate: ConsistencyGate): ConsistencyGate {
  return {
    async waitFor(position, timeoutMs) {
      const reached = await gate.waitFor(position, timeoutMs);
      if (!reached) metrics.readYourWritesTimedOut();
      return reached;
    },
  };
}

/** Short: a supervisor polling /health/ during an outage must get an answer, not a hang. */
const HEALTH_CHECK_TIMEOUT_MS = 2000;
