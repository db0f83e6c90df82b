import { createRateLimiter, type RateLimiter } from '#shared/http/rateLimit/createRateLimiter';
import { type DemoServer, startDemo } from './support/demoApp';

const MINUTE = 60_000;
const servers: DemoServer[] = [];
const limiters: RateLimiter[] = [];

async function start(
  limits: Parameters<typeof createRateLimiter>[0],
  trustProxy: boolean | number = false,
): Promise<DemoServer> {
  const rateLimiter = createRateLimiter(limits);
  limiters.push(rateLimiter);
  const server = await startDemo({ rateLimiter, trustProxy });
  servers.push(server);
  return server;
}

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(limiters.map((l) => l.close()));
});

const login = (server: DemoServer, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/login/`, { method: 'POST', headers });

test('after the limit: 429 with the documented body, Retry-After and X-RateLimit headers in seconds', async () => {
  const server = await start({ limits: { login: { limit: 3, windowMs: MINUTE } } });
  const remaining: (string | null)[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await login(server);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('3');
    remaining.push(res.headers.get('x-ratelimit-remaining'));
  }
  expect(remaining).toEqual(['2', '1', '0']);

  const refused = await login(server);
  expect(refused.status).toBe(429);
  const body = (await refused.json()) as { error: string; detail: string; retry_after: number };
  expect(Object.keys(body).sort()).toEqual(['detail', 'error', 'retry_after']);
  expect(body.error).toBe('rate_limited');
  expect(typeof body.detail).toBe('string');
  expect(Number.isInteger(body.retry_after)).toBe(true);
  expect(body.retry_after).toBeGreaterThanOrEqual(1);
  expect(body.retry_after).toBeLessThanOrEqual(60);
  expect(refused.headers.get('retry-after')).toBe(String(body.retry_after));
  expect(refused.headers.get('x-ratelimit-limit')).toBe('3');
  expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
  const reset = Number(refused.headers.get('x-ratelimit-reset'));
  const nowSeconds = Date.now() / 1000;
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThan(nowSeconds - 1);
  expect(reset).toBeLessThanOrEqual(nowSeconds + 61);
});

test('every request counts against the default bucket, per user', async () => {
  const server = await start({ limits: { default: { limit: 2, windowMs: MINUTE } } });
  const get = (headers: Record<string, string> = {}) => fetch(`${server.url}/api/widgets/`, { headers });
  const alice = { Authorization: 'Token alice' };
  expect((await get(alice)).headers.get('x-ratelimit-limit')).toBe('2');
  expect((await get(alice)).status).toBe(200);
  expect((await get(alice)).status).toBe(429);
  // Another user and the anonymous caller have their own counts.
  expect((await get({ Authorization: 'Bearer bob' })).status).toBe(200);
  expect((await get()).status).toBe(200);
});

test('bad tokens count against the caller address before the 401', async () => {
  const server = await start({ limits: { default: { limit: 2, windowMs: MINUTE } } });
  const bad = () => fetch(`${server.url}/api/me/`, { headers: { Authorization: 'Token guess' } });
  expect((await bad()).status).toBe(401);
  expect((await bad()).status).toBe(401);
  expect((await bad()).status).toBe(429);
});

test('the client address comes from the socket unless a proxy is trusted', async () => {
  const direct = await start({ limits: { login: { limit: 1, windowMs: MINUTE } } });
  expect((await login(direct, { 'X-Forwarded-For': '10.0.0.1' })).status).toBe(200);
  expect((await login(direct, { 'X-Forwarded-For': '10.0.0.2' })).status).toBe(429);

  const proxied = await start({ limits: { login: { limit: 1, windowMs: MINUTE } } }, 1);
  expect((await login(proxied, { 'X-Forwarded-For': '10.0.0.1' })).status).toBe(200);
  expect((await login(proxied, { 'X-Forwarded-For': '10.0.0.2' })).status).toBe(200);
  expect((await login(proxied, { 'X-Forwarded-For': '10.0.0.1' })).status).toBe(429);
});

test('limits are validated', () => {
  expect(() => createRateLimiter({ limits: { login: { limit: 0, windowMs: MINUTE } } })).toThrow(/login/);
});
