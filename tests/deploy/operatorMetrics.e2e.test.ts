import { sampleValue } from '#tests/http/support/promText';
import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';

const { api } = testServiceForFile({ RATE_LIMIT_LOGIN: '2/minute', READ_YOUR_WRITES_TIMEOUT_MS: '200' });

async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = (await api.get('/metrics/')).text;
  return sampleValue(text, name, labels) ?? 0;
}

test('rate-limit rejections by bucket, Idempotency-Key replays, append latency, read-your-writes timeouts', async () => {
  const user = await newUser(api);
  // Rate limit: the login bucket (2 per minute per address) refuses the third try.
  const wrong = { json: { email: user.email, password: 'wrong-password-here' } };
  const statuses = [];
  for (let i = 0; i < 4; i += 1) statuses.push((await api.post('/api/auth/login/', wrong)).status);
  expect(statuses).toContain(429);
  expect(await metric('rate_limit_rejections_total', { bucket: 'login' })).toBe(
    statuses.filter((status) => status === 429).length,
  );

  // Idempotency-Key: the second identical request is a replay.
  const headers = { 'Idempotency-Key': `replay-${Date.now()}` };
  const first = await api.post('/api/tokens/', { token: user.token, headers, json: { name: 'ci' } });
  const again = await api.post('/api/tokens/', { token: user.token, headers, json: { name: 'ci' } });
  expect([first.status, again.status]).toEqual([201, 201]);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(await metric('idempotency_replays_total')).toBe(1);

  // Every append is timed.
  expect(await metric('event_store_append_duration_seconds_count')).toBeGreaterThan(2);

  // A read asking for a position the read models never reach waits its bound, then is counted.
  const timeoutsBefore = await metric('read_your_writes_timeouts_total');
  const far = `${Number.MAX_SAFE_INTEGER}.${Number.MAX_SAFE_INTEGER}`;
  await api.get('/api/auth/me/', { token: user.token, headers: { 'X-Min-Position': far } });
  expect(await metric('read_your_writes_timeouts_total')).toBeGreaterThanOrEqual(timeoutsBefore + 1);
});
