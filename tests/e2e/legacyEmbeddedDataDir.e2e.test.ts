import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startAllInOne, type RunningService } from '#services/all-in-one/startAllInOne';
import { loadConfig } from '#shared/config/config';
import { startEmbeddedPostgres } from '#shared/infra/postgres/embeddedPostgres';
import { APPEND_FUNCTION_ARGUMENTS } from '#shared/eventStore/postgres/migrations/m0005AppendAsOwner';
import { migrations } from '#shared/eventStore/postgres/migrations/migrations';
import { createSilentLogger } from '#shared/logging/logger';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import { client, newUser } from '#tests/support/httpClient';

/**
 * A DATA_DIR made by the previous version: its embedded cluster has the superuser password
 * `postgres`, and the service connected as that superuser, so everything in the catalogue database
 * (event store, read models, rate-limit counters) belongs to it. The new version must take it over
 * on start: rotate the password, create the roles, hand the objects over, and keep every account.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-legacy-'));
chmodSync(dataDir, 0o755); // as root the cluster runs as `postgres`, which must reach its data dir
let service: RunningService | undefined;

afterAll(async () => {
  await service?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const serviceEnv = {
  DATA_DIR: dataDir,
  HOST: '127.0.0.1',
  PORT: '0',
  PASSWORD_HASH_LOG_N: '10',
  LOG_LEVEL: 'silent',
};

/** What the old all-in-one left behind: a cluster, and a catalogue database written as the superuser. */
async function makeLegacyDataDir() {
  const cluster = await startEmbeddedPostgres({
    dataDir: path.join(dataDir, 'postgres'),
    password: 'postgres',
  });
  try {
    await cluster.createDatabase('catalogue');
    const url = cluster.connectionString('catalogue');
    const old = await startAllInOne(loadConfig({ ...serviceEnv, DATABASE_URL: url }), createSilentLogger());
    const user = await newUser(client(old.url)).finally(() => old.close());
    // The old version had no migration 5 (append as owner): an invoker's append function, executable by PUBLIC.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query(`
      ALTER FUNCTION event_store.append_events(${APPEND_FUNCTION_ARGUMENTS}) SECURITY INVOKER RESET search_path;
      GRANT EXECUTE ON FUNCTION event_store.append_events(${APPEND_FUNCTION_ARGUMENTS}) TO PUBLIC;
      DELETE FROM event_store.schema_migrations WHERE version = 5;`);
    await db.end();
    return user;
  } finally {
    await cluster.stop();
  }
}

test('an old data dir is upgraded on start: password rotated, roles split, accounts kept', async () => {
  const oldUser = await makeLegacyDataDir();

  service = await startAllInOne(loadConfig(serviceEnv), createSilentLogger());
  const api = client(service.url);
  const embedded = service.embeddedPostgres!;
  expect(embedded.isRunning()).toBe(true);

  // The old account and its token still work: the read models were handed to the service's role.
  expect((await api.get('/api/auth/me/', { token: oldUser.token })).body.email).toBe(oldUser.email);
  const login = await api.post('/api/auth/login/', {
    json: { email: oldUser.email, password: oldUser.password },
  });
  expect(login.status).toBe(200);
  // New writes reach the read models through the projector, which now runs as that role.
  const newcomer = await newUser(api);
  expect((await api.get('/api/auth/me/', { token: newcomer.token })).body.email).toBe(newcomer.email);

  // The well-known password is refused; the generated ones are in a file only we can read.
  const oldSuperuser = `postgres://postgres:postgres@127.0.0.1:${embedded.port}/postgres`;
  await expect(connectAndEnd(oldSuperuser)).rejects.toMatchObject({ code: '28P01' });
  expect(statSync(path.join(dataDir, 'postgres-credentials.json')).mode & 0o777).toBe(0o600);

  const db = new pg.Client({ connectionString: embedded.connectionString('catalogue') });
  await db.connect();
  try {
    const owners = await db.query<{ object: string; owner: string }>(
      `
      SELECT 'database' AS object, pg_get_userbyid(datdba)::text AS owner FROM pg_database WHERE datname = 'catalogue'
      UNION ALL SELECT 'events', tableowner::text FROM pg_tables WHERE schemaname = 'event_store' AND tablename = 'events'
      UNION ALL SELECT 'read models', pg_get_userbyid(nspowner)::text FROM pg_namespace WHERE nspname = $1
      UNION ALL SELECT 'users view', viewowner::text FROM pg_views WHERE schemaname = 'public' AND viewname = 'users'
      UNION ALL SELECT 'rate limits', tableowner::text FROM pg_tables WHERE tablename = 'http_rate_limit_hits'
      ORDER BY object`,
      [READ_MODEL_SCHEMA],
    );
    expect(owners.rows).toEqual([
      { object: 'database', owner: 'catalogue_owner' },
      { object: 'events', owner: 'catalogue_owner' },
      { object: 'rate limits', owner: 'catalogue_app' },
      { object: 'read models', owner: 'catalogue_app' },
      { object: 'users view', owner: 'catalogue_app' },
    ]);
    const appended = await db.query<{ definer: boolean; public_may_run: boolean; version: number }>(`
      SELECT p.prosecdef AS definer,
             has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_run,
             (SELECT max(version) FROM event_store.schema_migrations) AS version
        FROM pg_proc p WHERE p.oid = 'event_store.append_events(${APPEND_FUNCTION_ARGUMENTS})'::regprocedure`);
    // Every migration ran, the last redefinition of the append function still running as its owner.
    expect(appended.rows).toEqual([
      { definer: true, public_may_run: false, version: Math.max(...migrations.map((m) => m.version)) },
    ]);
  } finally {
    await db.end();
  }
}, 180_000);

async function connectAndEnd(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  try {
    await c.connect();
  } finally {
    await c.end().catch(() => undefined);
  }
}
