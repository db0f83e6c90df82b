import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';

/**
 * Many writes by one user hit one event stream at once. They must all succeed (the command handler
 * retries lost races with backoff); 409 is only for a client whose If-Match is stale.
 */
const { api } = testServiceForFile();

const PARALLEL = 50;

function statusCounts(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

test(`${PARALLEL} parallel POST /api/tokens/ by one user all give 201, and all ${PARALLEL} tokens exist`, async () => {
  const user = await newUser(api);
  const responses = await Promise.all(
    Array.from({ length: PARALLEL }, (_, i) =>
      api.post('/api/tokens/', { token: user.token, json: { name: `parallel ${i}` } }),
    ),
  );
  expect(statusCounts(responses.map((r) => r.status))).toEqual({ 201: PARALLEL });
  const listed = await api.get('/api/tokens/', { token: user.token });
  expect(listed.body.map((t: { name: string }) => t.name).sort()).toEqual(
    Array.from({ length: PARALLEL }, (_, i) => `parallel ${i}`).sort(),
  );
});

test(`${PARALLEL} parallel PATCH /api/profile/ without If-Match all give 200, each change applied`, async () => {
  const user = await newUser(api);
  const responses = await Promise.all(
    Array.from({ length: PARALLEL }, (_, i) =>
      api.patch('/api/profile/', { token: user.token, json: { bio: `edit ${i}` } }),
    ),
  );
  expect(statusCounts(responses.map((r) => r.status))).toEqual({ 200: PARALLEL });
  // Each success moved the stream on by one revision: the ETags are all different.
  expect(new Set(responses.map((r) => r.headers.get('etag'))).size).toBe(PARALLEL);
  const profile = await api.get('/api/profile/', { token: user.token });
  const last = responses.reduce((a, b) =>
    Number(/\d+/.exec(a.headers.get('etag')!)![0]) > Number(/\d+/.exec(b.headers.get('etag')!)![0]) ? a : b,
  );
  expect(profile.body.bio).toBe(last.body.bio);
});

test(`${PARALLEL} parallel keyed PATCH /api/profile/ (each in its own unit of work) all give 200`, async () => {
  const user = await newUser(api);
  const responses = await Promise.all(
    Array.from({ length: PARALLEL }, (_, i) =>
      api.patch('/api/profile/', {
        token: user.token,
        json: { bio: `keyed edit ${i}` },
        headers: { 'Idempotency-Key': `contention-${user.id}-${i}` },
      }),
    ),
  );
  expect(statusCounts(responses.map((r) => r.status))).toEqual({ 200: PARALLEL });
  expect(new Set(responses.map((r) => r.headers.get('etag'))).size).toBe(PARALLEL);
});

test('a stale If-Match is still an immediate 409, also amid parallel writes', async () => {
  const user = await newUser(api);
  const etag = (await api.get('/api/profile/', { token: user.token })).headers.get('etag')!;
  const moved = await api.patch('/api/profile/', { token: user.token, json: { bio: 'moved on' } });
  expect(moved.status).toBe(200);
  const [stale, ...others] = await Promise.all([
    api.patch('/api/profile/', {
      token: user.token,
      json: { bio: 'lost update' },
      headers: { 'If-Match': etag },
    }),
    ...Array.from({ length: 10 }, (_, i) =>
      api.patch('/api/profile/', { token: user.token, json: { location: `city ${i}` } }),
    ),
  ]);
  expect(stale.status).toBe(409);
  expect(stale.body).toEqual({ detail: expect.any(String) });
  expect(statusCounts(others.map((r) => r.status))).toEqual({ 200: 10 });
  expect((await api.get('/api/profile/', { token: user.token })).body.bio).toBe('moved on');
});
