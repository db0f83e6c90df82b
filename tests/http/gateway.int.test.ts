import { createApiApp } from '#shared/http/createApiApp';
import { createGateway } from '#shared/http/createGateway';
import { createSilentLogger } from '#shared/logging/logger';
import { createMetrics } from '#shared/metrics/metrics';
import { demoRoutes, elsewhereRoutes, fakeAuthenticator } from './support/demoRoutes';
import { type Listening, listen } from './support/listen';
import { sampleValue } from './support/promText';

let gateway: Listening;
const served: string[] = [];

beforeAll(async () => {
  const allRoutes = [...demoRoutes, ...elsewhereRoutes];
  const metrics = createMetrics('all-in-one');
  const common = {
    knownRoutes: allRoutes,
    authenticator: fakeAuthenticator,
    metrics,
    logger: createSilentLogger(),
  };
  const queryApp = createApiApp({
    ...common,
    serviceName: 'query-api',
    routes: allRoutes.filter((r) => r.method === 'get'),
  });
  const commandApp = createApiApp({
    ...common,
    serviceName: 'command-api',
    routes: allRoutes.filter((r) => r.method !== 'get'),
    serve: { health: false, metrics: false, docs: false },
  });
  gateway = await listen(
    createGateway({
      queryApp: (req, res) => {
        served.push(`query ${req.method} ${req.url}`);
        void queryApp(req, res);
      },
      commandApp: (req, res) => {
        served.push(`command ${req.method} ${req.url}`);
        void commandApp(req, res);
      },
    }),
  );
});
afterAll(() => gateway.close());

const url = (path: string): string => `${gateway.url}${path}`;

test('reads go to the query app, writes to the command app', async () => {
  expect((await fetch(url('/api/widgets/'))).status).toBe(200);
  expect((await fetch(url('/api/widgets/1'), { method: 'HEAD' })).status).toBe(200);
  const created = await fetch(url('/api/widgets'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{"name":"w"}',
  });
  expect(created.status).toBe(201);
  expect(
    (await fetch(url('/api/widgets/1/'), { method: 'DELETE', headers: { Authorization: 'Token alice' } }))
      .status,
  ).toBe(204);
  expect(served).toEqual(
    expect.arrayContaining([
      'query GET /api/widgets/',
      'query HEAD /api/widgets/1',
      'command POST /api/widgets',
      'command DELETE /api/widgets/1/',
    ]),
  );
});

test('a write to a read-only path is 405 listing the methods of both apps', async () => {
  const res = await fetch(url('/api/me/'), { method: 'PATCH' });
  expect(res.status).toBe(405);
  expect(res.headers.get('allow')).toBe('GET, PUT, HEAD, OPTIONS');
});

test('a read of a write-only path is 405 too', async () => {
  const res = await fetch(url('/api/uploads/'));
  expect(res.status).toBe(405);
  expect(res.headers.get('allow')).toBe('POST, OPTIONS');
});

test('preflight is 204 with CORS headers', async () => {
  const res = await fetch(url('/api/widgets/'), {
    method: 'OPTIONS',
    headers: { Origin: 'https://x.example', 'Access-Control-Request-Method': 'DELETE' },
  });
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('access-control-allow-methods')).toContain('DELETE');
});

test('system endpoints are served once, by the query app, whatever the method', async () => {
  expect((await fetch(url('/health/'))).status).toBe(200);
  expect((await fetch(url('/api/docs/'))).status).toBe(200);
  expect((await fetch(url('/api/schema/'))).status).toBe(200);
  const post = await fetch(url('/health'), { method: 'POST' });
  expect(post.status).toBe(405);
  expect(served).toContain('query POST /health');
  const metrics = await (await fetch(url('/metrics/'))).text();
  // One registry for the process: both apps' requests are in it.
  expect(
    sampleValue(metrics, 'http_requests_total', { method: 'POST', route: '/api/widgets/', status: '201' }),
  ).toBe(1);
  expect(
    sampleValue(metrics, 'http_requests_total', { method: 'GET', route: '/api/widgets/', status: '200' }),
  ).toBe(1);
});

test('unknown paths are 404 from either app', async () => {
  expect((await fetch(url('/nowhere'))).status).toBe(404);
  expect((await fetch(url('/nowhere'), { method: 'POST' })).status).toBe(404);
  expect((await fetch(url('/healthz'), { method: 'POST' })).status).toBe(404);
});
