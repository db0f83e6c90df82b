import { chmodSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgresOptions,
  type RunningPostgres,
} from '#shared/infra/postgres/embeddedPostgres';
import { waitFor } from '#tests/support/waitFor';

/**
 * Private clusters (not the run's shared server): each test starts, kills or restarts its own.
 * No port is given unless a test needs one: a free one is chosen, as the all-in-one does.
 */
let root: string;
const running: RunningPostgres[] = [];

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'catalogue-embedded-'));
  chmodSync(root, 0o755); // as root the cluster runs as `postgres`, which must reach its data dir
});
afterEach(async () => {
  for (const cluster of running.splice(0)) await cluster.stop();
  rmSync(root, { recursive: true, force: true });
});

async function start(options: Partial<EmbeddedPostgresOptions> = {}): Promise<RunningPostgres> {
  const cluster = await startEmbeddedPostgres({ dataDir: path.join(root, 'postgres'), ...options });
  running.push(cluster);
  return cluster;
}

function recordingLogger() {
  const lines: string[] = [];
  return { lines, logger: { info: (m: string) => lines.push(m), error: (m: string) => lines.push(m) } };
}

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

function urlWithPassword(url: string, password: string): string {
  const u = new URL(url);
  u.password = password;
  return u.toString();
}

/** A restart of the embedded PostgreSQL, on a busy machine. */
const RESTART = { timeoutMs: 60_000, intervalMs: 100 };

test('a new cluster has a random superuser password in a 0600 file; the well-known one is refused', async () => {
  const cluster = await start({ loginRoles: ['service_role'] });
  const file = path.join(root, 'postgres-credentials.json');
  expect(statSync(file).mode & 0o777).toBe(0o600);

  const superuser = cluster.connectionString('postgres');
  expect(new URL(superuser).password).toMatch(/^[\w-]{32}$/);
  expect((await query(superuser, 'SELECT rolsuper FROM pg_roles WHERE rolname = current_user')).rows).toEqual(
    [{ rolsuper: true }],
  );
  await expect(query(urlWithPassword(superuser, 'postgres'), 'SELECT 1')).rejects.toMatchObject({
    code: '28P01',
  });

  const service = cluster.connectionString('postgres', 'service_role');
  const { rows } = await query(
    service,
    'SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user',
  );
  expect(rows).toEqual([{ rolsuper: false, rolcreaterole: false, rolcreatedb: false }]);
});

test('a cluster made with the old default password is upgraded: rotated, roles created', async () => {
  const old = await start({ password: 'postgres' });
  const oldUrl = old.connectionString('postgres');
  await query(oldUrl, 'CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)');
  await old.stop();
  running.splice(0);

  const upgraded = await start({ loginRoles: ['service_role'] });
  await expect(
    query(oldUrl.replace(`:${old.port}/`, `:${upgraded.port}/`), 'SELECT 1'),
  ).rejects.toMatchObject({
    code: '28P01',
  });
  expect((await query(upgraded.connectionString('postgres'), 'SELECT x FROM kept')).rows).toEqual([
    { x: 42 },
  ]);
  await expect(
    query(upgraded.connectionString('postgres', 'service_role'), 'SELECT 1'),
  ).resolves.toBeDefined();
});

test('a killed postmaster is restarted on the same port, and a pool reconnects by itself', async () => {
  const { lines, logger } = recordingLogger();
  const cluster = await start({ logger });
  const pool = new pg.Pool({ connectionString: cluster.connectionString('postgres'), max: 2 });
  pool.on('error', () => undefined);
  try {
    await pool.query('CREATE TABLE survivors (x int); INSERT INTO survivors VALUES (1)');
    const before = cluster.pid()!;
    process.kill(before, 'SIGKILL');
    await waitFor('the restart', () => ({ state: cluster.state(), pid: cluster.pid() }), {
      ...RESTART,
      until: ({ state, pid }) => state === 'running' && pid !== before,
    });
    const { rows } = await waitFor(
      'a query through the old pool',
      () => pool.query('SELECT x FROM survivors'),
      RESTART,
    );
    expect(rows).toEqual([{ x: 1 }]);
    expect(cluster.isRunning()).toBe(true);
    expect(lines).toEqual([
      'embedded PostgreSQL exited unexpectedly; restarting it',
      'embedded PostgreSQL is back',
    ]);
  } finally {
    await pool.end();
  }
});

test('when restarting keeps failing it gives up, once, with the reason', async () => {
  const { lines, logger } = recordingLogger();
  const gaveUp: Error[] = [];
  const cluster = await start({
    logger,
    restartPolicy: { maxFailures: 3, initialDelayMs: 50, maxDelayMs: 100 },
    onGiveUp: (error) => gaveUp.push(error),
  });
  process.kill(cluster.pid()!, 'SIGKILL');
  renameSync(path.join(root, 'postgres'), path.join(root, 'moved')); // nothing left to start from
  await waitFor('giving up', () => cluster.state(), { ...RESTART, until: (state) => state === 'failed' });
  expect(gaveUp).toHaveLength(1);
  expect(gaveUp[0]!.message).toMatch(/failed 3 times/);
  expect(cluster.isRunning()).toBe(false);
  expect(lines).toEqual([
    'embedded PostgreSQL exited unexpectedly; restarting it',
    'embedded PostgreSQL could not be restarted; giving up',
  ]);
});

test('a second process on the same data dir shares the running cluster (rebuild beside the service)', async () => {
  const owner = await start({ loginRoles: ['service_role'] });
  const guest = await startEmbeddedPostgres({
    dataDir: path.join(root, 'postgres'),
    loginRoles: ['service_role'],
  });
  expect(guest.port).toBe(owner.port);
  expect(guest.pid()).toBe(owner.pid());
  await expect(query(guest.connectionString('postgres', 'service_role'), 'SELECT 1')).resolves.toBeDefined();
  await guest.stop(); // leaves the owner's server alone
  expect(owner.isRunning()).toBe(true);
  await expect(query(owner.connectionString('postgres'), 'SELECT 1')).resolves.toBeDefined();
});
