import { createApiApp } from '#shared/http/createApiApp';
import { createRateLimiter } from '#shared/http/rateLimit/createRateLimiter';
import type { RouteSpec } from '#shared/http/routeSpec';
import { createLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { fakeAuthenticator } from './support/demoRoutes';
import { type Listening, listen } from './support/listen';
import { rawRequest } from './support/rawRequest';

const UUID = '3f0c2e44-7a59-4a8e-9e43-2b1c9f3d8a10';
const echo = (ctx: Parameters<RouteSpec['handler']>[0]) =>
  Promise.resolve({ status: 200, body: { params: ctx.params, query: ctx.query, body: ctx.body } });

/** Routes that show what the dispatcher hands a handler, and what it answers around it. */
const routes: RouteSpec[] = [
  {
    method: 'get',
    path: '/api/things/{thing_id}/',
    operationId: 'thing',
    summary: 'Public data',
    tags: ['t'],
    auth: 'public',
    query: {
      type: 'object',
      properties: { upload: { type: 'string', format: 'uuid' }, q: { type: 'string' } },
    },
    responses: { 200: { description: 'Echo' } },
    handler: (ctx) => echo(ctx).then((reply) => ({ ...reply, headers: { ETag: 'W/"1"' } })),
  },
  {
    method: 'post',
    path: '/api/things/',
    operationId: 'createThing',
    summary: 'Personal data',
    tags: ['t'],
    auth: 'required',
    body: {
      type: 'object',
      properties: { upload: { type: 'string', format: 'uuid' }, name: { type: 'string' } },
    },
    responses: { 200: { description: 'Echo' } },
    handler: (ctx) =>
      echo(ctx).then((reply) => ({ ...reply, headers: { 'Cache-Control': 'public, max-age=60' } })),
  },
  {
    method: 'post',
    path: '/api/password/',
    operationId: 'password',
    summary: 'Checks a password',
    tags: ['t'],
    auth: 'required',
    rateLimit: 'login',
    responses: { 200: { description: 'Checked' } },
    handler: () => Promise.resolve({ status: 200, body: {} }),
  },
];

let server: Listening;

beforeAll(async () => {
  const app = createApiApp({
    serviceName: 'edge',
    routes,
    authenticator: fakeAuthenticator,
    metrics: createMetrics('edge'),
    logger: createLogger({ service: 'edge', level: 'silent' }),
    rateLimiter: createRateLimiter({ limits: { login: { limit: 2, windowMs: 3_600_000 } } }),
    trustProxy: true,
  });
  server = await listen(app);
});
afterAll(() => server.close());

test('UUIDs reach the handler in lowercase from the path and from uuid fields; other values as sent', async () => {
  const read = await rawRequest(
    `${server.url}/api/things/${UUID.toUpperCase()}/?upload=${UUID.toUpperCase()}&q=ABC`,
  );
  expect(JSON.parse(read.body)).toMatchObject({
    params: { thing_id: UUID },
    query: { upload: UUID, q: 'ABC' },
  });
  const written = await rawRequest(
    `${server.url}/api/things/`,
    { method: 'POST', headers: { Authorization: 'Token alice', 'Content-Type': 'application/json' } },
    JSON.stringify({ upload: UUID.toUpperCase(), name: UUID.toUpperCase() }),
  );
  expect(JSON.parse(written.body)).toMatchObject({ body: { upload: UUID, name: UUID.toUpperCase() } });
});

test('a public read may be cached (by the asker alone when it carries a token); anything else is no-store', async () => {
  const anonymous = await rawRequest(`${server.url}/api/things/1/`);
  expect(anonymous.headers['cache-control']).toBeUndefined();
  expect(anonymous.headers.etag).toBe('W/"1"');
  expect(anonymous.headers.vary).toContain('Authorization');
  const asAlice = await rawRequest(`${server.url}/api/things/1/`, {
    headers: { Authorization: 'Token alice' },
  });
  expect(asAlice.headers['cache-control']).toBe('private, no-cache');
  const revalidated = await rawRequest(`${server.url}/api/things/1/`, {
    headers: { 'If-None-Match': 'W/"1"' },
  });
  expect(revalidated.status).toBe(304);
  // The handler asked for a public cache: a request with credentials is not public data.
  const written = await rawRequest(
    `${server.url}/api/things/`,
    { method: 'POST', headers: { Authorization: 'Token alice', 'Content-Type': 'application/json' } },
    '{}',
  );
  expect(written.headers['cache-control']).toBe('no-store');
  for (const res of [anonymous, asAlice, written, await rawRequest(`${server.url}/api/nowhere/`)])
    expect(res.headers['x-content-type-options']).toBe('nosniff');
});

test('two Authorization headers are 400 before authentication; an array of raw headers gets there intact', async () => {
  const res = await rawRequest(`${server.url}/api/things/1/`, {
    headers: [
      'Host',
      new URL(server.url).host,
      'Authorization',
      'Token alice',
      'Authorization',
      'Bearer bob',
    ],
  });
  expect(res.status).toBe(400);
  expect(JSON.parse(res.body)).toEqual({ detail: expect.stringContaining('Authorization') });
});

test('the login bucket counts a signed-in request per address and per user', async () => {
  const post = (who: string, from: string) =>
    rawRequest(`${server.url}/api/password/`, {
      method: 'POST',
      headers: { Authorization: who, 'X-Forwarded-For': from },
    });
  // alice from three addresses: the third is her third try (limit 2 per user).
  expect((await post('Token alice', '10.0.0.1')).status).toBe(200);
  expect((await post('Token alice', '10.0.0.2')).status).toBe(200);
  const refused = await post('Token alice', '10.0.0.3');
  expect(refused.status).toBe(429);
  expect(JSON.parse(refused.body)).toEqual({
    error: 'rate_limited',
    detail: expect.any(String),
    retry_after: expect.any(Number),
  });
  // bob from alice's first address: its second try there is the address's third.
  expect((await post('Bearer bob', '10.0.0.4')).status).toBe(200);
  expect((await post('Bearer bob', '10.0.0.1')).status).toBe(200);
  expect((await post('Bearer bob', '10.0.0.1')).status).toBe(429);
});
