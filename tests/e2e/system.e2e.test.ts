import { Client as PgClient } from 'pg';
import type { ApiResponse, Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import { startTestService, testServiceForFile } from '#tests/support/testService';

const { api, service } = testServiceForFile({ JSON_BODY_LIMIT_BYTES: '2048' });

describe('system endpoints', () => {
  test('/health/ is 200 healthy JSON with every dependency checked', async () => {
    for (const path of ['/health/', '/health']) {
      const res = await api.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.status).toBe('healthy');
      expect(Object.keys(res.body.checks).sort()).toEqual([
        'blob_store',
        'blob_sweeper',
        'event_store',
        'postgres',
        'progress_listener',
        'projection_lag',
        'projection_runner',
        'upload_processor',
      ]);
    }
  });

  test('/metrics/ is Prometheus text labelled by route template, never the raw path', async () => {
    const user = await newUser(api);
    await api.delete('/api/tokens/00000000-0000-4000-8000-000000000000/', { token: user.token });
    const res = await api.get('/metrics/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toMatch(/# TYPE http_requests_total counter/);
    expect(res.text).toMatch(/# TYPE http_request_duration_seconds histogram/);
    expect(res.text).toMatch(
      /http_requests_total\{[^}]*route="\/api\/tokens\/\{token_id\}\/"[^}]*status="404"/,
    );
    expect(res.text).not.toContain('00000000-0000-4000-8000-000000000000');
    expect(res.text).toMatch(/events_appended_total\{[^}]*type="UserRegistered"/);
    expect(res.text).toMatch(/projection_position/);
  });
});

describe('errors are JSON in the DRF shape', () => {
  test('unknown route 404, wrong method 405 with Allow, unsupported type 415, oversize 413', async () => {
    const unknown = await api.get('/api/nothing-here/');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'Not found.' });
    const wrongMethod = await api.put('/api/auth/me/', { json: {} });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toMatch(/GET/);
    expect(wrongMethod.body).toEqual({ detail: expect.stringMatching(/PUT/) });
    const tokensDelete = await api.delete('/api/tokens/');
    expect(tokensDelete.status).toBe(405);
    expect(tokensDelete.headers.get('allow')).toMatch(/GET.*POST|POST.*GET/);
    const text = await api.post('/api/auth/login/', {
      body: 'email=a',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.body).toEqual({ detail: expect.any(String) });
    const huge = await api.post('/api/auth/login/', {
      json: { email: 'a@example.org', password: 'x'.repeat(5000) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({ detail: expect.any(String) });
    for (const res of [unknown, wrongMethod, text, huge])
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('CORS', () => {
  test('preflight is 204 with the documented methods and headers; responses expose our headers', async () => {
    const res = await fetch(`${service().url}/api/tokens/`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://atlas.example.org',
        'Access-Control-Request-Method': 'DELETE',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
      expect(res.headers.get('access-control-allow-methods')).toContain(m);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toEqual(
      expect.stringContaining('authorization'),
    );
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toEqual(
      expect.stringContaining('content-type'),
    );
    const get = await api.get('/health/', { headers: { Origin: 'https://atlas.example.org' } });
    expect(get.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = get.headers.get('access-control-expose-headers') ?? '';
    for (const h of [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Link',
      'X-Total-Count',
      'ETag',
    ])
      expect(exposed).toContain(h);
  });
});

describe('OpenAPI', () => {
  test('/api/schema/ documents every endpoint; /api/docs/ is a browsable page', async () => {
    const schema = await api.get('/api/schema/');
    expect(schema.status).toBe(200);
    expect(schema.body.openapi).toMatch(/^3\.1/);
    const paths = Object.keys(schema.body.paths);
    for (const p of [
      '/api/auth/register/',
      '/api/auth/login/',
      '/api/auth/logout/',
      '/api/auth/password/change/',
      '/api/auth/me/',
      '/api/profile/',
      '/api/tokens/',
      '/api/tokens/{token_id}/',
      '/health/',
      '/metrics/',
    ])
      expect(paths).toContain(p);
    expect(schema.body.paths['/api/profile/'].patch.requestBody.content).toHaveProperty([
      'multipart/form-data',
    ]);
    expect(schema.body.components.securitySchemes).toBeDefined();
    const docs = await api.get('/api/docs/');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
  });
});

/** Each rate-limit test runs on its own instance so no other test's requests fill its buckets. */
async function withService(env: Record<string, string>, run: (api: Client) => Promise<void>): Promise<void> {
  const own = await startTestService(env);
  try {
    await run(client(own.url));
  } finally {
    await own.close();
  }
}

describe('rate limits', () => {
  test('login: 10 per minute per address (the default), then 429 with the documented body and headers', () =>
    withService({ RATE_LIMIT_LOGIN: '10/minute' }, async (api) => {
      const statuses: number[] = [];
      let last: ApiResponse | undefined;
      for (let i = 0; i < 11; i++) {
        last = await api.post('/api/auth/login/', {
          json: { email: 'nobody@example.org', password: 'wrong-password' },
        });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 10).every((s) => s === 400)).toBe(true);
      expect(last!.status).toBe(429);
      expect(last!.body).toEqual({
        error: 'rate_limited',
        detail: expect.any(String),
        retry_after: expect.any(Number),
      });
      expect(Number.isInteger(last!.body.retry_after)).toBe(true);
      expect(last!.headers.get('retry-after')).toBe(String(last!.body.retry_after));
      expect(last!.headers.get('x-ratelimit-limit')).toBe('10');
      expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
      const reset = Number(last!.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThan(Date.now() / 1000 + 61);
    }));

  test('other requests: limited per user, with headers on every response', () =>
    withService({ RATE_LIMIT_DEFAULT: '40/minute' }, async (api) => {
      const user = await newUser(api);
      const first = await api.get('/api/auth/me/', { token: user.token });
      expect(first.headers.get('x-ratelimit-limit')).toBe('40');
      let status = 200;
      for (let i = 0; i < 45 && status !== 429; i++)
        status = (await api.get('/api/auth/me/', { token: user.token })).status;
      expect(status).toBe(429);
      const other = await newUser(api);
      expect((await api.get('/api/auth/me/', { token: other.token })).status).toBe(200);
    }));
});

describe('auditability', () => {
  test('events carry the request id, actor, correlation id, schema version and time', async () => {
    const registered = await api.post('/api/auth/register/', {
      json: {
        email: 'audited@example.org',
        username: 'audited',
        password: 'long-enough-password',
        password_confirm: 'long-enough-password',
        first_name: 'A',
        last_name: 'B',
      },
      headers: { 'X-Request-Id': 'req-audit-0001' },
    });
    expect(registered.headers.get('x-request-id')).toBe('req-audit-0001');
    const db = new PgClient({ connectionString: service().databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT event_type, metadata FROM event_store.events WHERE metadata->>'requestId' = 'req-audit-0001'`,
      );
      expect(rows.map((r) => r.event_type)).toEqual(
        expect.arrayContaining(['UserRegistered', 'ValueReserved', 'IdAllocated']),
      );
      for (const { metadata } of rows) {
        expect(metadata).toMatchObject({
          actor: 'anonymous',
          correlationId: 'req-audit-0001',
          schemaVersion: 1,
        });
      }
    } finally {
      await db.end();
    }
  });
});
