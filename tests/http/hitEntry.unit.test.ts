import { DEFAULT_SYNC_POLICY, mustSync, newEntry } from '#shared/http/rateLimit/hitEntry';

const policy = DEFAULT_SYNC_POLICY;
const now = 1_000_000;

test('a key never synced may take one hit (or 2 % of the limit) before asking the database', () => {
  const small = newEntry('login', 'a:1', 0, 60_000, 10);
  expect(mustSync(small, now, policy)).toBe(false);
  small.pending = 1;
  expect(mustSync(small, now, policy)).toBe(true);

  const large = newEntry('default', 'u:1', 0, 60_000, 600);
  large.pending = 11;
  expect(mustSync(large, now, policy)).toBe(false);
  large.pending = 12;
  expect(mustSync(large, now, policy)).toBe(true);
});

test('with a fresh total, a tenth of the headroom is counted locally', () => {
  const entry = newEntry('default', 'u:1', 0, 60_000, 600);
  entry.synced = 100;
  entry.syncedAt = now - 200;
  entry.pending = 49;
  expect(mustSync(entry, now, policy)).toBe(false);
  entry.inFlight = 1;
  expect(mustSync(entry, now, policy)).toBe(true);
});

test('close to the limit every hit is decided by the database', () => {
  const entry = newEntry('default', 'u:1', 0, 60_000, 600);
  entry.synced = 591;
  entry.syncedAt = now;
  expect(mustSync(entry, now, policy)).toBe(true);
});

test('a stale total falls back to the small share', () => {
  const entry = newEntry('default', 'u:1', 0, 60_000, 600);
  entry.synced = 100;
  entry.syncedAt = now - 5_000;
  entry.pending = 10;
  expect(mustSync(entry, now, policy)).toBe(true);
});

test('once the limit is reached the answer is known without asking', () => {
  const entry = newEntry('login', 'a:1', 0, 60_000, 10);
  entry.synced = 10;
  entry.pending = 50;
  expect(mustSync(entry, now, policy)).toBe(false);
});
