import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type CliUser, type CliWorld, loggedInUser, startCliWorld } from './cliService';
import { startInterceptingProxy } from './interceptingProxy';
import { runCli } from './runCli';

const storedToken = (u: CliUser): string =>
  (JSON.parse(readFileSync(path.join(u.configDir, 'config.json'), 'utf8')) as { token: string }).token;

let world: CliWorld;
let user: CliUser;

beforeAll(async () => {
  world = await startCliWorld();
  user = await loggedInUser(world);
});

afterAll(async () => {
  await world?.service.close();
});

const rateLimited = (retryAfter: number) => ({
  reply: {
    status: 429,
    headers: { 'Content-Type': 'application/json', 'Retry-After': String(retryAfter) },
    body: JSON.stringify({
      error: 'rate_limited',
      detail: 'Request was throttled.',
      retry_after: retryAfter,
    }),
  },
});

describe('bic on 429, 503 and failures', () => {
  it('waits for Retry-After on a 429 and retries', async () => {
    const proxy = await startInterceptingProxy(world.service.url, (_, index) =>
      index === 0 ? rateLimited(1) : undefined,
    );
    try {
      const list = await runCli(['categories', 'list', '--json'], { ...user.env, BIC_SERVER: proxy.url });
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: world.taxonomy.category.id })]),
      );
      expect(list.stderr).toBe('bic: rate limited; retrying in 1 s\n');
      expect(proxy.seen).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });

  it('gives up after a bounded number of 429s: exit code 8', async () => {
    const proxy = await startInterceptingProxy(world.service.url, () => rateLimited(0));
    try {
      const list = await runCli(['categories', 'list'], { ...user.env, BIC_SERVER: proxy.url });
      expect(list.code).toBe(8);
      expect(list.stderr.trim().split('\n').at(-1)).toBe('bic: rate limited: Request was throttled.');
      expect(proxy.seen).toHaveLength(6);
    } finally {
      await proxy.close();
    }
  });

  it('a write whose response was lost (503) is retried with the same Idempotency-Key and happens once', async () => {
    const proxy = await startInterceptingProxy(world.service.url, (req) =>
      req.method === 'POST' && proxySawPosts++ === 0 ? { forwardThenFail: 503 } : undefined,
    );
    let proxySawPosts = 0;
    try {
      // The stored token is sent only to the server it was stored for: name it for the proxy.
      const created = await runCli(['tokens', 'create', 'retried', '--json'], {
        ...user.env,
        BIC_SERVER: proxy.url,
        BIC_TOKEN: storedToken(user),
      });
      expect(created.code).toBe(0);
      const posts = proxy.seen.filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(2);
      expect(posts[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
      expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
      const token = JSON.parse(created.stdout);
      expect((await world.api.get('/api/auth/me/', { token: token.token })).status).toBe(200);
    } finally {
      await proxy.close();
    }
    const list = await runCli(['tokens', 'list', '--json'], user.env);
    expect(JSON.parse(list.stdout).filter((t: { name: string }) => t.name === 'retried')).toHaveLength(1);
  });

  it('a 500 gives its request id and exit code 7; an unreachable server exit code 7', async () => {
    const proxy = await startInterceptingProxy(world.service.url, () => ({
      reply: {
        status: 500,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ detail: 'A server error occurred.', request_id: 'req-123' }),
      },
    }));
    try {
      const failed = await runCli(['brains', 'list'], { ...user.env, BIC_SERVER: proxy.url });
      expect(failed).toMatchObject({
        code: 7,
        stderr: 'bic: server error 500: A server error occurred. (request id req-123)\n',
      });
    } finally {
      await proxy.close();
    }
    const gone = await runCli(['brains', 'list'], { ...user.env, BIC_SERVER: proxy.url });
    expect(gone.code).toBe(7);
    expect(gone.stderr.trim().split('\n').at(-1)).toMatch(
      /^bic: cannot reach http:\/\/127\.0\.0\.1:\d+ \(.+\)$/,
    );
  });
});
