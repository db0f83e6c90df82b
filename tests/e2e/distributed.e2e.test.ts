import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client, newUser } from '#tests/support/httpClient';
import { freePort } from '#tests/support/freePort';
import { serviceEnv } from '#tests/support/serviceEnv';
import type { ServiceProcess } from '#tests/support/spawnService';
import { spawnService } from '#tests/support/spawnService';
import { createTestDatabase } from '#tests/support/testPostgres';
import { waitFor } from '#tests/support/waitFor';

/**
 * Distributed mode: command API, query API and two projectors as separate processes from their own
 * entry points, configured only by environment variables, sharing one PostgreSQL.
 */
const running: ServiceProcess[] = [];
let dataDir: string;
let commands: ReturnType<typeof client>;
let queries: ReturnType<typeof client>;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-distributed-'));
  const databaseUrl = await createTestDatabase('dist');
  const admin = { ADMIN_EMAIL: 'ops@example.org', ADMIN_PASSWORD: 'operations-password' };
  const start = async (entry: string) => {
    const service = await spawnService(
      entry,
      serviceEnv(databaseUrl, dataDir, String(await freePort()), admin),
    );
    running.push(service);
    return service;
  };
  await start('services/projector/main.ts');
  await start('services/projector/main.ts'); // stands by: only the leader applies events
  commands = client((await start('services/command-api/main.ts')).url);
  queries = client((await start('services/query-api/main.ts')).url);
}, 120_000);

afterAll(async () => {
  await Promise.all(running.map((s) => s.kill()));
  rmSync(dataDir, { recursive: true, force: true });
});

test('a write on the command API is readable on the query API right after its 2xx', async () => {
  const user = await newUser(commands);
  const me = await queries.get('/api/auth/me/', { token: user.token });
  expect(me.status).toBe(200);
  expect(me.body.username).toBe(user.username);
  // Repeated: a stale answer is a race between the projector's notification and the next request.
  for (let round = 0; round < 30; round++) {
    const location = `Pavia ${round}`;
    const patched = await commands.patch('/api/profile/', { token: user.token, json: { location } });
    expect(patched.status).toBe(200);
    const profile = await queries.get('/api/profile/', { token: user.token });
    expect(profile.body.location).toBe(location);
    expect(profile.headers.get('etag')).toBe(patched.headers.get('etag'));
  }
});

test('a token revoked through the command API is refused by the query API within one second', async () => {
  const user = await newUser(commands);
  const pat = (await commands.post('/api/tokens/', { token: user.token, json: { name: 'ci' } })).body;
  expect((await queries.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' })).status).toBe(200);
  expect((await commands.delete(`/api/tokens/${pat.id}/`, { token: user.token })).status).toBe(204);
  await waitFor(
    'the query API to refuse the revoked token',
    async () => (await queries.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' })).status,
    { timeoutMs: 1000, intervalMs: 0, until: (status) => status === 401 },
  );
});

test('the command API ensured the staff account from ADMIN_* at start-up', async () => {
  const login = await commands.post('/api/auth/login/', {
    json: { email: 'ops@example.org', password: 'operations-password' },
  });
  expect(login.status).toBe(200);
  expect(login.body.user.is_staff).toBe(true);
});

test('each API serves its own half; the query API documents both', async () => {
  expect(
    (await queries.post('/api/auth/login/', { json: { email: 'a@example.org', password: 'whatever-pw' } }))
      .status,
  ).toBe(405);
  const schema = await queries.get('/api/schema/');
  expect(Object.keys(schema.body.paths)).toEqual(
    expect.arrayContaining(['/api/auth/register/', '/api/auth/me/']),
  );
  const health = await commands.get('/health/');
  expect(health.body.status).toBe('healthy');
});
