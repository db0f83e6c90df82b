import { createMemoryRateLimitBackend } from '#shared/http/rateLimit/memoryRateLimitBackend';

test('fixed windows: counts per key, reset at the window boundary', async () => {
  let now = 120_000 + 5_000;
  const store = createMemoryRateLimitBackend(() => now).store('login', 10, 60_000);
  expect(await store.increment('a')).toEqual({ totalHits: 1, resetTime: new Date(180_000) });
  expect((await store.increment('a')).totalHits).toBe(2);
  expect((await store.increment('b')).totalHits).toBe(1);
  now = 180_000;
  expect(await store.increment('a')).toEqual({ totalHits: 1, resetTime: new Date(240_000) });
});
