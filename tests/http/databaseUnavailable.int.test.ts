import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { TokenAuthenticator } from '#shared/auth/tokenAuthenticator';
import { tokenUseRecorder } from '#shared/commandHandling/tokenUseRecorder';
import { generateTokenSecret } from '#shared/auth/tokens';
import type { PostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import type { RouteSpec } from '#shared/http/routeSpec';
import { freePort } from '#tests/support/freePort';
import { type DemoServer, startDemo } from './support/demoApp';

/**
 * A database that refuses connections (nothing listens on its port): requests that need it answer
 * 503 with Retry-After, never the generic 500, and a write whose append failed says so.
 */
let store: PostgresEventStore;
let readModels: pg.Pool;
let server: DemoServer;

const appendRoute: RouteSpec = {
  method: 'post',
  path: '/api/notes/',
  operationId: 'createNote',
  summary: 'Appends an event',
  tags: ['test'],
  auth: 'public',
  responses: { 201: { description: 'Created.' } },
  handler: async () => {
    const id = randomUUID();
    const result = await store.appendToStream(`note-${id}`, [
      {
        id,
        type: 'NoteTaken',
        data: {},
        metadata: { actor: 'test', requestId: null, correlationId: id, causationId: null, schemaVersion: 1 },
      },
    ]);
    return { status: 201, body: { id }, position: result.position };
  },
};

const meRoute: RouteSpec = {
  method: 'get',
  path: '/api/whoami/',
  operationId: 'whoami',
  summary: 'Needs a token',
  tags: ['test'],
  auth: 'required',
  responses: { 200: { description: 'You.' } },
  handler: (ctx) => Promise.resolve({ status: 200, body: { id: ctx.principal?.userId } }),
};

beforeAll(async () => {
  const url = `postgres://nobody:secret@127.0.0.1:${await freePort()}/gone`;
  store = createPostgresEventStore({ connectionString: url });
  readModels = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 2000 });
  server = await startDemo({
    routes: [appendRoute, meRoute],
    knownRoutes: [appendRoute, meRoute],
    openApiRoutes: [appendRoute, meRoute],
    authenticator: new TokenAuthenticator({ pool: readModels, store, recordUse: tokenUseRecorder(store) }),
  });
});
afterAll(async () => {
  await server.close();
  await store.close();
  await readModels.end();
});

test('a write whose append cannot reach the database is 503 with Retry-After, not 500', async () => {
  const res = await fetch(`${server.url}/api/notes/`, { method: 'POST' });
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('5');
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.detail).toMatch(/temporarily unavailable/);
  expect(res.headers.get('x-event-position')).toBeNull(); // nothing was written
  expect(server.waits).toEqual([]);
});

test('authentication that cannot read the tokens is 503, not 401 and not 500', async () => {
  const res = await fetch(`${server.url}/api/whoami/`, {
    headers: { Authorization: `Token ${generateTokenSecret('login')}` },
  });
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('5');
});

test('the outage is logged as a warning, without a stack trace', async () => {
  await fetch(`${server.url}/api/notes/`, { method: 'POST' });
  const line = server.logs.find((l) => l.msg === 'request failed: database unavailable');
  expect(line).toMatchObject({ level: 'warn' });
  expect(JSON.stringify(line)).not.toMatch(/\n\s+at /);
});
