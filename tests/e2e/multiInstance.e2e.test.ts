import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';

/** Two instances of the service on one database, as a load balancer would spread clients. */
let a: TestService;
let b: TestService;
let apiA: Client;
let apiB: Client;

beforeAll(async () => {
  a = await startTestService();
  b = await startTestService({}, a.databaseUrl);
  apiA = client(a.url);
  apiB = client(b.url);
});
afterAll(async () => {
  await b.close();
  await a.close();
});

test('a write on either instance is readable on the same instance right after its 2xx', async () => {
  for (const [writer, name] of [
    [apiA, 'a'],
    [apiB, 'b'],
  ] as const) {
    const user = await newUser(writer);
    const patched = await writer.patch('/api/profile/', {
      token: user.token,
      json: { bio: `written on ${name}` },
    });
    expect(patched.status).toBe(200);
    expect((await writer.get('/api/auth/me/', { token: user.token })).body.bio).toBe(`written on ${name}`);
  }
});

test('a token revoked on one instance is refused by the other within one second', async () => {
  const user = await newUser(apiA);
  const pat = (await apiA.post('/api/tokens/', { token: user.token, json: { name: 'shared' } })).body;
  expect((await apiB.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' })).status).toBe(200);
  expect((await apiA.delete(`/api/tokens/${pat.id}/`, { token: user.token })).status).toBe(204);
  expect((await apiA.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' })).status).toBe(401);
  await waitFor(
    'the other instance to refuse the revoked token',
    async () => (await apiB.get('/api/auth/me/', { token: pat.token, scheme: 'Bearer' })).status,
    { timeoutMs: 1000, intervalMs: 0, until: (status) => status === 401 },
  );
});

test('one email registered on both instances at once gives exactly one account', async () => {
  const body = (i: number) => ({
    email: 'twin@example.org',
    username: `twin${i}`,
    password: 'long-enough-password',
    password_confirm: 'long-enough-password',
    first_name: 'T',
    last_name: 'W',
  });
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      (i % 2 ? apiA : apiB).post('/api/auth/register/', { json: body(i) }),
    ),
  );
  expect(results.filter((r) => r.status === 201)).toHaveLength(1);
  expect(results.filter((r) => r.status === 400)).toHaveLength(9);
});
