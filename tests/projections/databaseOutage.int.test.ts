import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { opsHttpHandler } from '#shared/http/system/opsHttpHandler';
import { projectionRunnerHealthCheck } from '#services/projector/startProjector';
import type { PostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { PostgresRateLimitBackend } from '#shared/http/rateLimit/postgresRateLimitBackend';
import { RATE_LIMIT_TABLE } from '#shared/http/rateLimit/rateLimitSql';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { dependencyHealthChecks } from '#shared/platform/dependencyHealthChecks';
import { listenProjectionProgress } from '#shared/platform/listenProjectionProgress';
import { type PrivatePostgres, startPrivatePostgres } from '#tests/support/privatePostgres';
import { waitFor } from '#tests/support/waitFor';
import { appendCounted, appliedCounts, countingProjection } from './support/countingProjection';

/**
 * The operator's report, on a PostgreSQL of this file's own: the database goes away for a while
 * and comes back. Every loop must heal by itself, /health/ must say what is going on, and a write
 * after recovery must become readable without waiting out the read-your-writes timeout.
 */
let cluster: PrivatePostgres;
let url: string;
const cleanups: (() => Promise<void>)[] = [];
const logLines: { level: string; msg: string; loop?: string }[] = [];
const logger = createLogger({
  service: 'outage-test',
  level: 'info',
  sink: (line) => logLines.push(JSON.parse(line) as (typeof logLines)[number]),
});

beforeAll(async () => {
  cluster = await startPrivatePostgres();
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('CREATE DATABASE outage');
  await admin.end();
  url = cluster.url.replace(/\/postgres$/, '/outage');
}, 120_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await cluster?.close();
}, 60_000);

interface Health {
  readonly status: number;
  readonly checks: Record<string, { status: string; reason?: string }>;
}

async function healthOf(base: string): Promise<Health> {
  const res = await fetch(`${base}/health/`, { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { checks: Health['checks'] };
  return { status: res.status, checks: body.checks };
}

const failing = (health: Health, check: string): boolean => health.checks[check]?.status === 'failing';

async function rateLimitHits(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ total: string | null }>(
    `SELECT sum(hits)::text AS total FROM ${RATE_LIMIT_TABLE} WHERE key = 'outage-client'`,
  );
  return Number(rows[0]?.total ?? 0);
}

test('PostgreSQL stops and starts again: the runner, the listener and the rate-limit sync heal, /health/ is 503 then 200', async () => {
  const store: PostgresEventStore = createPostgresEventStore({ connectionString: url });
  await store.migrate();
  cleanups.push(() => store.close());
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 2000 });
  pool.on('error', () => undefined); // idle connections die with the server: expected here
  cleanups.push(() => pool.end());

  const progress = new ProjectionProgress();
  const runner = new ProjectionRunner({
    store,
    pool,
    projections: [countingProjection('outage')],
    progress,
    logger,
    backoff: { initialMs: 100, maxMs: 1000 },
  });
  runner.start();
  cleanups.push(() => runner.stop());
  // What a separate API process does: follow the runner through NOTIFY and the checkpoints.
  const remoteProgress = new ProjectionProgress();
  const listener = listenProjectionProgress(url, pool, remoteProgress, logger);
  cleanups.push(() => listener.close());
  const rateLimits = new PostgresRateLimitBackend({ pool, logger, flushIntervalMs: 50 });
  await rateLimits.migrate();
  cleanups.push(() => rateLimits.close());

  const server = http.createServer(
    opsHttpHandler(createMetrics('outage-test'), {
      ...dependencyHealthChecks({ readModels: pool, store, maxProjectionLagSeconds: 30 }),
      projection_runner: projectionRunnerHealthCheck(runner),
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const before = await appendCounted(store, 20);
  expect(await progress.waitFor(before.position, 20_000)).toBe(true);
  expect(await remoteProgress.waitFor(before.position, 20_000)).toBe(true);
  await waitFor('/health/ to be 200 before the outage', async () => (await healthOf(base)).status, {
    timeoutMs: 20_000,
    until: (status) => status === 200,
  });

  await cluster.stop();
  await waitFor(
    '/health/ is 503 naming the database and the runner during the outage',
    async () => {
      const health = await healthOf(base);
      return health.status === 503 && failing(health, 'postgres') && failing(health, 'projection_runner');
    },
    { timeoutMs: 20_000 },
  );
  expect((await fetch(`${base}/health/live/`)).status).toBe(200);
  // Requests keep being counted during the outage: the rate limiter fails open.
  for (let i = 0; i < 5; i++) await rateLimits.hit('default', 'outage-client', 1000, 3_600_000);
  // The sync loop must have met the outage (a flush of those hits failed) before it ends; on a
  // loaded machine its next flush could otherwise come only after the restart, and see no outage.
  await waitFor('the rate-limit sync met the outage', () => rateLimits.syncStatus().state === 'retrying', {
    timeoutMs: 20_000,
  });

  await cluster.start();
  await waitFor('/health/ to be 200 again', async () => (await healthOf(base)).status, {
    timeoutMs: 60_000,
    until: (status) => status === 200,
  });
  const after = await appendCounted(store, 20);
  // Well within the read-your-writes timeout: the runner and the listener are back.
  expect(await progress.waitFor(after.position, 4_000)).toBe(true);
  expect(await remoteProgress.waitFor(after.position, 4_000)).toBe(true);
  await waitFor('rate-limit hits counted during the outage are sent', () => rateLimitHits(pool), {
    timeoutMs: 20_000,
    until: (hits) => hits === 5,
  });

  const applied = await appliedCounts(pool, 'outage');
  expect([...applied.keys()].sort()).toEqual([...before.ids, ...after.ids].sort());
  expect([...applied.values()].filter((n) => n !== 1)).toEqual([]);

  // One warning when each loop's outage began and one line when it ended, not one per attempt.
  for (const loop of ['projection_runner', 'projection_progress_listener']) {
    const lines = logLines.filter((line) => line.loop === loop).map((line) => line.level);
    expect(lines).toEqual(['warn', 'info']);
  }
  const syncLines = logLines.filter((line) => line.loop === 'rate_limit_sync').map((line) => line.level);
  expect(syncLines).toEqual(['warn', 'info']);
}, 180_000);
