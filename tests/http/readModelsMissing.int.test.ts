import pg from 'pg';
import type { RouteSpec } from '#shared/http/routeSpec';
import { createTestDatabase } from '#tests/support/testPostgres';
import { type DemoServer, startDemo } from './support/demoApp';

/**
 * A request that arrives before the table it reads exists (a first start: the port opens while the
 * projector is still installing the read models; a query API started before any projector): 503
 * with a short Retry-After and a clear message, never the generic 500; once the table exists, the
 * same request answers.
 */
let pool: pg.Pool;
let server: DemoServer;

const countRoute: RouteSpec = {
  method: 'get',
  path: '/api/widgets/',
  operationId: 'countWidgets',
  summary: 'Reads a read model',
  tags: ['test'],
  auth: 'public',
  responses: { 200: { description: 'Counted.' } },
  handler: async () => {
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM public.widgets');
    return { status: 200, body: { count: Number(rows[0]!.n) } };
  },
};

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('missing') });
  server = await startDemo({ routes: [countRoute], knownRoutes: [countRoute], openApiRoutes: [countRoute] });
});
afterAll(async () => {
  await server.close();
  await pool.end();
});

test('a table not installed yet is 503 with Retry-After, logged with the missing name; then the request answers', async () => {
  const early = await fetch(`${server.url}/api/widgets/`);
  expect(early.status).toBe(503);
  expect(early.headers.get('retry-after')).toBe('1');
  const body = (await early.json()) as Record<string, unknown>;
  expect(body.detail).toMatch(/starting/);
  expect(typeof body.request_id).toBe('string');
  const logged = server.logs.find((line) => line.request_id === body.request_id);
  expect(logged).toMatchObject({ level: 'warn', msg: 'request failed: a table it reads does not exist' });
  expect(String(logged?.error)).toMatch(/relation "public.widgets" does not exist/);
  expect(server.logs.some((line) => line.msg === 'unhandled error')).toBe(false);

  await pool.query('CREATE TABLE public.widgets (id integer)');
  const later = await fetch(`${server.url}/api/widgets/`);
  expect(later.status).toBe(200);
  expect(await later.json()).toEqual({ count: 0 });
});
