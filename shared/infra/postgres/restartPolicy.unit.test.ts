import { RestartPolicy } from './restartPolicy';

test('waits twice as long after each failure, up to the cap, and gives up at the limit', () => {
  const policy = new RestartPolicy({
    maxFailures: 6,
    windowMs: 60_000,
    initialDelayMs: 100,
    maxDelayMs: 500,
  });
  const waits = [0, 1, 2, 3, 4, 5].map((i) => policy.failure(1_000 + i));
  expect(waits).toEqual([100, 200, 400, 500, 500, undefined]);
});

test('failures outside the window no longer count', () => {
  const policy = new RestartPolicy({
    maxFailures: 3,
    windowMs: 10_000,
    initialDelayMs: 100,
    maxDelayMs: 10_000,
  });
  expect(policy.failure(0)).toBe(100);
  expect(policy.failure(1_000)).toBe(200);
  // Both earlier failures are more than a window ago: a fresh start, not the third strike.
  expect(policy.failure(12_000)).toBe(100);
  expect(policy.recentFailures(12_000)).toBe(1);
  expect(policy.failure(13_000)).toBe(200);
  expect(policy.failure(14_000)).toBeUndefined();
});

test('a crash loop (each restart dies soon after) is given up on too', () => {
  const policy = new RestartPolicy({
    maxFailures: 4,
    windowMs: 60_000,
    initialDelayMs: 250,
    maxDelayMs: 15_000,
  });
  let now = 0;
  const outcomes: (number | undefined)[] = [];
  for (let crash = 0; crash < 4; crash++) {
    const wait = policy.failure(now);
    outcomes.push(wait);
    now += (wait ?? 0) + 2_000; // restarted, then up for two seconds before dying again
  }
  expect(outcomes).toEqual([250, 500, 1_000, undefined]);
});
