import { Pool } from 'pg';
import { createRateLimiter, type RateLimiter } from '#shared/http/rateLimit/createRateLimiter';
import {
  PostgresRateLimitBackend,
  type PostgresRateLimitOptions,
} from '#shared/http/rateLimit/postgresRateLimitBackend';
import { RATE_LIMIT_TABLE } from '#shared/http/rateLimit/rateLimitSql';
import type { RateLimitConfig } from '#shared/http/rateLimit/rateLimitConfig';
import { createLogger } from '#shared/logging/logger';
import { createTestDatabase } from '#tests/support/testPostgres';
import { type DemoServer, startDemo } from './support/demoApp';

const MINUTE = 60_000;
let databaseUrl: string;
const pools: Pool[] = [];
const cleanups: (() => Promise<void>)[] = [];
const warnings: string[] = [];
const warningLog = createLogger({ service: 'test', sink: (line) => warnings.push(line) });

beforeAll(async () => {
  databaseUrl = await createTestDatabase('ratelimit');
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await Promise.all(pools.map((p) => p.end()));
});

function newPool(): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max: 10 });
  pools.push(pool);
  return pool;
}

interface Instance {
  readonly pool: Pool;
  readonly server: DemoServer;
  readonly backend: PostgresRateLimitBackend;
  readonly limiter: RateLimiter;
}

/** One "service instance": its own pool, backend, limiter and HTTP server on the shared database. */
async function instance(
  limits: Partial<RateLimitConfig>,
  backendOptions: Partial<PostgresRateLimitOptions> = {},
): Promise<Instance> {
  const pool = newPool();
  const backend = new PostgresRateLimitBackend({ pool, logger: warningLog, ...backendOptions });
  await backend.migrate();
  const limiter = createRateLimiter({ limits, backend });
  const server = await startDemo({ rateLimiter: limiter });
  cleanups.push(async () => {
    await server.close();
    await limiter.close();
  });
  return { pool, server, backend, limiter };
}

async function hits(bucket: string, keyPattern = '%'): Promise<number> {
  const { rows } = await newPool().query<{ total: string | null }>(
    `SELECT sum(hits)::text AS total FROM ${RATE_LIMIT_TABLE} WHERE bucket = $1 AND key LIKE $2`,
    [bucket, keyPattern],
  );
  return Number(rows[0]?.total ?? 0);
}

test('migrate is idempotent, also when instances start at the same time', async () => {
  const a = new PostgresRateLimitBackend({ pool: newPool() });
  const b = new PostgresRateLimitBackend({ pool: newPool() });
  await Promise.all([a.migrate(), b.migrate(), a.migrate()]);
  await b.migrate();
  await Promise.all([a.close(), b.close()]);
});

test('two instances sharing the store together never exceed the limit by more than a few', async () => {
  const limit = 40;
  const frozen = Date.now(); // one window for the whole test, even across a minute boundary
  const options = { now: () => frozen };
  const [one, two] = await Promise.all([
    instance({ login: { limit, windowMs: MINUTE } }, options),
    instance({ login: { limit, windowMs: MINUTE } }, options),
  ]);
  const statuses: number[] = [];
  // Bursts against both instances at once, then a pause so batches are flushed between rounds.
  for (let round = 0; round < 6; round++) {
    const requests = [one, two].flatMap(({ server }) =>
      Array.from({ length: 15 }, () =>
        fetch(`${server.url}/api/login/`, { method: 'POST' }).then((r) => r.status),
      ),
    );
    statuses.push(...(await Promise.all(requests)));
    await new Promise((r) => setTimeout(r, 300));
  }
  const admitted = statuses.filter((s) => s === 200).length;
  expect(warnings).toEqual([]); // a failing database would make the store fail open
  expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  expect(admitted).toBeGreaterThanOrEqual(limit - 3);
  expect(admitted).toBeLessThanOrEqual(limit + 3);
  await Promise.all([one.backend.flush(), two.backend.flush()]);
  expect(await hits('login')).toBe(statuses.length); // refused requests are counted too
});

test('far from the limit, requests do not touch the database; counts go in one batch', async () => {
  const { pool, server, backend } = await instance(
    { default: { limit: 10_000, windowMs: MINUTE } },
    { flushIntervalMs: 3_600_000 },
  );
  const query = jest.spyOn(pool, 'query');
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${server.url}/api/widgets/`, {
      headers: { Authorization: i % 2 ? 'Token alice' : 'Bearer bob' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
  }
  expect(query).not.toHaveBeenCalled();
  await backend.flush();
  expect(query).toHaveBeenCalledTimes(1); // both users' counts in one statement
  expect(await hits('default', 'u:%')).toBe(40);
});

test('near the limit every hit is decided by the database, so the remaining count is exact', async () => {
  const { server } = await instance({ upload: { limit: 5, windowMs: MINUTE } });
  const remaining: string[] = [];
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) {
    const form = new FormData();
    form.append('file', new Blob(['x']), 'x.nii');
    const res = await fetch(`${server.url}/api/uploads/`, {
      method: 'POST',
      headers: { Authorization: 'Token alice' },
      body: form,
    });
    await res.arrayBuffer();
    statuses.push(res.status);
    remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
  }
  // Accepted uploads count (a refused one, 400/413/415, would give its hit back).
  expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429]);
  expect(remaining.slice(0, 5)).toEqual(['4', '3', '2', '1', '0']);
});

test('ended windows are purged', async () => {
  const backend = new PostgresRateLimitBackend({ pool: newPool() });
  await backend.migrate();
  const pool = newPool();
  await pool.query(
    `INSERT INTO ${RATE_LIMIT_TABLE} (bucket, key, window_start, expires_at, hits) VALUES ('old', 'k', 0, now() - interval '1 hour', 3), ('current', 'k', 0, now() + interval '1 hour', 3)`,
  );
  await backend.purge();
  const { rows } = await pool.query<{ bucket: string }>(
    `SELECT bucket FROM ${RATE_LIMIT_TABLE} WHERE bucket IN ('old', 'current')`,
  );
  expect(rows.map((r) => r.bucket)).toEqual(['current']);
  await backend.close();
});

test('a database outage fails open and the counts are sent later', async () => {
  const { pool, server, backend } = await instance({}, { flushIntervalMs: 3_600_000 });
  const before = await hits('default', 'a:%');
  const outage = jest
    .spyOn(pool, 'query')
    .mockImplementation(() => Promise.reject(new Error('connection lost')));
  const res = await fetch(`${server.url}/api/widgets/`);
  expect(res.status).toBe(200);
  outage.mockRestore();
  await backend.flush();
  expect(await hits('default', 'a:%')).toBe(before + 1);
});
