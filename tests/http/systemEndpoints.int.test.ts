import { type DemoServer, startDemo } from './support/demoApp';
import { sampleValue } from './support/promText';

let server: DemoServer;
let sick: DemoServer;
beforeAll(async () => {
  server = await startDemo({
    healthChecks: { database: () => Promise.resolve(), search: () => Promise.resolve('ok') },
    openApiInfo: { title: 'Demo API', version: '2.0.0' },
  });
  sick = await startDemo({
    healthChecks: {
      database: () => Promise.resolve(),
      search: () => Promise.reject(new Error('connection refused')),
      slow: () => new Promise(() => undefined),
    },
    healthCheckTimeoutMs: 200,
  });
});
afterAll(async () => {
  await server.close();
  await sick.close();
});

describe('/health/', () => {
  test('200 healthy when every check passes', async () => {
    const res = await fetch(`${server.url}/health/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({
      status: 'healthy',
      checks: { database: { status: 'ok' }, search: { status: 'ok' } },
    });
  });

  test('503 unhealthy naming the failing checks and why', async () => {
    const res = await fetch(`${sick.url}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'unhealthy',
      checks: {
        database: { status: 'ok' },
        search: { status: 'failing', reason: 'connection refused' },
        slow: { status: 'failing', reason: 'no answer within 200 ms' },
      },
    });
  });
});

describe('/metrics/', () => {
  test('Prometheus text with the exact content type, labelled by route template', async () => {
    await fetch(`${server.url}/api/widgets/123/`);
    await fetch(`${server.url}/api/widgets/456`);
    await fetch(`${server.url}/no/such/path/99`);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    const route = '/api/widgets/{widget_id}/';
    expect(
      sampleValue(text, 'http_requests_total', { method: 'GET', route, status: '200', service: 'demo' }),
    ).toBe(2);
    expect(
      sampleValue(text, 'http_request_duration_seconds_count', { method: 'GET', route, status: '200' }),
    ).toBe(2);
    expect(sampleValue(text, 'http_request_duration_seconds_bucket', { route, le: '+Inf' })).toBe(2);
    expect(text).toMatch(/route="unmatched",status="404"/);
    const routes = new Set([...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
    expect([...routes].filter((r) => /123|456|no\/such/.test(r!))).toEqual([]);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  test('the other metrics exist and are recorded through helpers', async () => {
    server.metrics.eventsAppended('BrainCreated', 2);
    server.metrics.setProjectionPosition('brains', { commit: 5n, prepare: 77n });
    server.metrics.setProjectionLag('brains', 0.3);
    server.metrics.uploadProcessed('completed', 1.5);
    const text = await (await fetch(`${server.url}/metrics/`)).text();
    expect(sampleValue(text, 'events_appended_total', { type: 'BrainCreated' })).toBe(2);
    expect(sampleValue(text, 'projection_position', { projection: 'brains' })).toBe(77);
    expect(sampleValue(text, 'projection_lag_seconds', { projection: 'brains' })).toBe(0.3);
    expect(sampleValue(text, 'projection_batch_lag_seconds_count', { projection: 'brains' })).toBe(1);
    expect(sampleValue(text, 'upload_processing_total', { outcome: 'completed' })).toBe(1);
    expect(sampleValue(text, 'upload_processing_duration_seconds_count', { outcome: 'completed' })).toBe(1);
  });
});

describe('/api/schema/', () => {
  interface Doc {
    openapi: string;
    info: { title: string; version: string };
    paths: Record<
      string,
      Record<
        string,
        {
          parameters: { name: string; in: string; required: boolean }[];
          requestBody?: { content: Record<string, unknown> };
          security: unknown[];
          responses: Record<string, unknown>;
        }
      >
    >;
    components: {
      securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
    };
    tags: { name: string }[];
  }

  test('an OpenAPI 3.1 document of the routes, served as JSON', async () => {
    const res = await fetch(`${server.url}/api/schema/?format=openapi-json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const doc = (await res.json()) as Doc;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info).toMatchObject({ title: 'Demo API', version: '2.0.0' });
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/widgets/',
        '/api/widgets/{widget_id}/',
        '/api/uploads/',
        '/api/me/',
        '/health/',
        '/metrics/',
      ]),
    );
    for (const path of Object.keys(doc.paths)) expect(path.endsWith('/')).toBe(true);
    // Routes served by another app of the service are documented too.
    expect(doc.paths['/api/me/']).toHaveProperty('put');
    expect(doc.tags.map((t) => t.name)).toEqual(
      expect.arrayContaining(['widgets', 'uploads', 'account', 'system']),
    );
  });

  test('parameters, bodies, responses and security come from the route specs', async () => {
    const doc = (await (await fetch(`${server.url}/api/schema`)).json()) as Doc;
    const get = doc.paths['/api/widgets/{widget_id}/']!.get!;
    expect(get.parameters).toContainEqual(
      expect.objectContaining({ name: 'widget_id', in: 'path', required: true }),
    );
    const list = doc.paths['/api/widgets/']!.get!;
    expect(list.parameters).toContainEqual(
      expect.objectContaining({ name: 'page', in: 'query', required: false }),
    );
    const create = doc.paths['/api/widgets/']!.post!;
    expect(Object.keys(create.requestBody!.content)).toEqual(['application/json']);
    expect(create.responses).toHaveProperty('201');
    expect(create.responses).toHaveProperty('400');
    expect(create.responses).toHaveProperty('429');
    const upload = doc.paths['/api/uploads/']!.post!;
    expect(Object.keys(upload.requestBody!.content)).toContain('multipart/form-data');
    expect(upload.security).toEqual([{ Token: [] }, { Bearer: [] }]);
    expect(doc.components.securitySchemes.Token).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
    });
    expect(doc.components.securitySchemes.Bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});

describe('/api/docs/', () => {
  test('a Swagger UI page whose assets are served locally', async () => {
    const res = await fetch(`${server.url}/api/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    const scripts = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(2);
    for (const asset of scripts) expect(asset.startsWith('/api/docs/')).toBe(true); // no CDN
    const bundle = await fetch(`${server.url}/api/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    const init = await (await fetch(`${server.url}/api/docs/swagger-initializer.js`)).text();
    expect(init).toContain('"/api/schema/"');
  });

  test('only the known asset files are served', async () => {
    expect((await fetch(`${server.url}/api/docs/package.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/api/docs/..%2Fpackage.json`)).status).toBe(404);
  });
});
