import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';

/** Per day, so that no window ends during the test; addresses come from X-Forwarded-For. */
const LIMIT = 5;

let service: TestService;
let api: Client;

beforeAll(async () => {
  service = await startTestService({ RATE_LIMIT_LOGIN: `${LIMIT}/day`, TRUST_PROXY: 'true' });
  api = client(service.url);
});
afterAll(() => service.close());

let address = 0;
const freshAddress = () => `10.9.${Math.floor(++address / 250)}.${address % 250}`;

const wrongChange = (token: string, from: string) =>
  api.post('/api/auth/password/change/', {
    token,
    headers: { 'X-Forwarded-For': from },
    json: { old_password: `guess-${Math.random()}`, new_password: 'a-new-password' },
  });

function expectRateLimited(res: { status: number; body: any; headers: Headers }) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: 'rate_limited',
    detail: expect.any(String),
    retry_after: expect.any(Number),
  });
  expect(res.headers.get('retry-after')).toBe(String(res.body.retry_after));
}

test('guessing the old password on one token is limited per user, from however many addresses', async () => {
  const user = await newUser(api, {}); // its login counts for 127.0.0.1, not for the addresses below
  for (let i = 0; i < LIMIT; i++) {
    const res = await wrongChange(user.token, freshAddress());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ old_password: [expect.any(String)] });
  }
  expectRateLimited(await wrongChange(user.token, freshAddress()));
  // The right old password is refused too until the window ends: nothing is learnt from an answer.
  const right = await api.post('/api/auth/password/change/', {
    token: user.token,
    headers: { 'X-Forwarded-For': freshAddress() },
    json: { old_password: user.password, new_password: 'a-new-password' },
  });
  expect(right.status).toBe(429);
});

test('password changes and logins share the limit of their address', async () => {
  const from = freshAddress();
  const login = (email: string, password: string) =>
    api.post('/api/auth/login/', { headers: { 'X-Forwarded-For': from }, json: { email, password } });
  const [first, second] = [await newUser(api), await newUser(api)];
  // One login and two wrong changes per user from one address: 2 + 2 + 1 = 5.
  expect((await login(first.email, first.password)).status).toBe(200);
  for (const user of [first, second, first, second])
    expect((await wrongChange(user.token, from)).status).toBe(400);
  expectRateLimited(await wrongChange(second.token, from));
  expectRateLimited(await login(second.email, second.password));
  // Another address is not held back by this one.
  expect((await wrongChange(second.token, freshAddress())).status).toBe(400);
});
