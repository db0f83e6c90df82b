import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '#shared/config/config';
import type { NewEvent } from '#shared/eventStore/eventStore';
import { provisionDatabase } from '#shared/infra/postgres/provisionDatabase';
import { ensureLoginRoles } from '#shared/infra/postgres/superuserAccess';
import { createSilentLogger } from '#shared/logging/logger';
import { openInfrastructure, type Infrastructure } from '#shared/platform/openInfrastructure';
import { splitRoles } from '#tests/support/splitRoles';
import { serverUrl } from '#tests/support/testPostgres';

/**
 * The split the embedded cluster uses, and an external DATABASE_URL + MIGRATION_DATABASE_URL
 * gets: an owner role migrates, the service's role appends and reads through the adapter and can
 * do nothing else to the event store.
 */
const { suffix, roles, passwords, database, urlFor } = splitRoles('t_privileges');
const dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-privileges-'));

let superuser: pg.Client;
/** The superuser on the test database, to look at what the attempts left behind. */
let inspector: pg.Client;
let infra: Infrastructure;
let app: pg.Client;

const event = (): NewEvent => ({
  id: randomUUID(),
  type: 'ThingHappened',
  data: { n: 1 },
  metadata: {
    actor: 'test',
    requestId: null,
    correlationId: randomUUID(),
    causationId: null,
    schemaVersion: 1,
  },
});

beforeAll(async () => {
  superuser = new pg.Client({ connectionString: serverUrl() });
  await superuser.connect();
  await ensureLoginRoles(superuser, passwords);
  await provisionDatabase({ superuserUrl: serverUrl(), database, roles, ownerSchema: 'event_store' });
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: urlFor(roles.app),
    MIGRATION_DATABASE_URL: urlFor(roles.owner),
  });
  infra = await openInfrastructure(config, createSilentLogger());
  app = new pg.Client({ connectionString: urlFor(roles.app) });
  await app.connect();
  const inspectorUrl = new URL(serverUrl());
  inspectorUrl.pathname = `/${database}`;
  inspector = new pg.Client({ connectionString: inspectorUrl.toString() });
  await inspector.connect();
});

afterAll(async () => {
  await app?.end();
  await inspector?.end();
  await infra?.close();
  await superuser.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  for (const role of Object.values(roles)) await superuser.query(`DROP ROLE IF EXISTS ${role}`);
  await superuser.end();
  rmSync(dataDir, { recursive: true, force: true });
});

test('the service role appends and reads through the event store adapter', async () => {
  const appended = await infra.store.appendToStream(`thing-${suffix}`, [event(), event()], {
    expectedRevision: 'no_stream',
  });
  expect(appended.nextExpectedRevision).toBe(1n);
  const read = await infra.store.readStream(`thing-${suffix}`);
  expect(read.map((e) => e.type)).toEqual(['ThingHappened', 'ThingHappened']);
  const { rows } = await app.query<{ role: string }>('SELECT current_user AS role');
  expect(rows[0]?.role).toBe(roles.app);
  // Several streams in one statement, through its own SECURITY DEFINER function.
  const [first, second] = await infra.store.appendToStreams!([
    { streamName: `many-${suffix}`, events: [event(), event()], expectedRevision: 'no_stream' },
    { streamName: `other-${suffix}`, events: [event()], expectedRevision: 'no_stream' },
  ]);
  expect([first?.nextExpectedRevision, second?.nextExpectedRevision]).toEqual([1n, 0n]);
});

test.each([
  ['UPDATE an event', `UPDATE event_store.events SET data = '{}'`],
  ['DELETE an event', 'DELETE FROM event_store.events'],
  ['TRUNCATE the events', 'TRUNCATE event_store.events'],
  [
    'INSERT around the append function',
    `INSERT INTO event_store.events (stream_name, stream_revision, event_id, event_type, data, metadata) VALUES ('x', 0, gen_random_uuid(), 'T', '{}', '{}')`,
  ],
  ['UPDATE a stream revision', 'UPDATE event_store.streams SET revision = 0'],
  ['read the stream table', 'SELECT * FROM event_store.streams'],
  [
    'switch the immutability trigger off',
    'ALTER TABLE event_store.events DISABLE TRIGGER events_are_immutable',
  ],
  ['DROP the trigger', 'DROP TRIGGER events_are_immutable ON event_store.events'],
  ['ALTER the events table', 'ALTER TABLE event_store.events ADD COLUMN extra text'],
  ['DROP the events table', 'DROP TABLE event_store.events'],
  ['DROP the streams table', 'DROP TABLE event_store.streams'],
  [
    'replace the trigger function',
    `CREATE OR REPLACE FUNCTION event_store.forbid_event_changes() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'`,
  ],
  ['DROP the append function', 'DROP FUNCTION event_store.append_events'],
  ['create objects in the event store schema', 'CREATE TABLE event_store.mine (x int)'],
  ['DROP the event store schema', 'DROP SCHEMA event_store CASCADE'],
  ['rewrite the migrations table', 'DELETE FROM event_store.schema_migrations'],
  ['become the owner role', `SET ROLE ${roles.owner}`],
  ['DROP the database', `DROP DATABASE ${database}`],
])('the service role cannot %s', async (_what, sql) => {
  await expect(app.query(sql)).rejects.toMatchObject({ code: '42501' }); // insufficient_privilege
  const { rows } = await inspector.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_trigger WHERE tgname = 'events_are_immutable' AND tgenabled = 'O'`,
  );
  expect(rows[0]?.n).toBe(1);
});

test('the events are still there and unchanged after every attempt', async () => {
  const read = await infra.store.readStream(`thing-${suffix}`);
  expect(read.map((e) => e.data)).toEqual([{ n: 1 }, { n: 1 }]);
});

test('the service role may create and own its own schemas and tables (read models)', async () => {
  await app.query(`CREATE SCHEMA own_${suffix}`);
  await app.query(`CREATE TABLE own_${suffix}.rows (x int)`);
  await app.query(`INSERT INTO own_${suffix}.rows VALUES (1)`);
  await app.query(`CREATE TABLE public.own_${suffix} (x int)`);
  await app.query(`DROP SCHEMA own_${suffix} CASCADE`);
});
