import { type GlobalPosition } from '#shared/eventStore/eventStore';
import { ProjectionProgress } from '#shared/projections/projectionProgress';
import { ChangeAwareCache } from './changeAwareCache';

const at = (commit: number): GlobalPosition => ({ commit: BigInt(commit), prepare: BigInt(commit) });

function setUp(options: { maxEntries?: number; maxWeight?: number } = {}) {
  const progress = new ProjectionProgress();
  progress.advance(at(10), []);
  const cache = new ChangeAwareCache<string>(progress, {
    dependsOn: (key) => key.startsWith('brain:'),
    maxEntries: options.maxEntries ?? 100,
    maxWeight: options.maxWeight,
    weigh: (value) => value.length,
  });
  let loads = 0;
  const load = (value: string) => () => {
    loads++;
    return Promise.resolve(value);
  };
  return { progress, cache, load, loads: () => loads };
}

test('an answer is kept while nothing was committed since it was loaded', async () => {
  const { cache, load, loads } = setUp();
  expect(await cache.get('k', at(10), load('first'))).toBe('first');
  expect(await cache.get('k', at(10), load('second'))).toBe('first');
  expect(loads()).toBe(1);
});

test('changes this process has heard of keep it unless they are ones it depends on', async () => {
  const { progress, cache, load } = setUp();
  await cache.get('k', at(10), load('first'));
  progress.advance(at(11), ['token:4', 'user:2']);
  expect(await cache.get('k', at(11), load('second'))).toBe('first');
  progress.advance(at(12), ['brain:7']);
  expect(await cache.get('k', at(12), load('third'))).toBe('third');
  progress.advance(at(13), ['*']);
  expect(await cache.get('k', at(13), load('fourth'))).toBe('fourth');
});

test('a change committed but not yet heard of loads again (a notification in flight)', async () => {
  const { progress, cache, load } = setUp();
  await cache.get('k', at(10), load('first'));
  // The database is at 11; this process still thinks 10.
  expect(await cache.get('k', at(11), load('second'))).toBe('second');
  // The new answer was loaded at 11: current for any ask at 11 even before the notification.
  expect(await cache.get('k', at(11), load('third'))).toBe('second');
  progress.advance(at(11), ['brain:1']);
  expect(await cache.get('k', at(11), load('fourth'))).toBe('fourth');
});

test('a checkpoint read without change keys counts as a change of anything', async () => {
  const { progress, cache, load } = setUp();
  await cache.get('k', at(10), load('first'));
  progress.advance(at(12));
  expect(await cache.get('k', at(12), load('second'))).toBe('second');
});

test('concurrent asks share one load; a load overlapping an invalidation is answered but not kept', async () => {
  const { progress, cache } = setUp();
  let release: (value: string) => void = () => undefined;
  let loads = 0;
  const slow = () => {
    loads++;
    return new Promise<string>((resolve) => (release = resolve));
  };
  const first = cache.get('k', at(10), slow);
  const second = cache.get('k', at(10), slow);
  expect(loads).toBe(1);
  progress.advance(at(11), ['brain:3']); // while the load runs: it may have read the old rows
  release('old');
  expect(await first).toBe('old');
  expect(await second).toBe('old');
  expect(await cache.get('k', at(11), () => Promise.resolve('new'))).toBe('new');
});

test('a failed load is not kept', async () => {
  const { cache, load } = setUp();
  await expect(cache.get('k', at(10), () => Promise.reject(new Error('down')))).rejects.toThrow('down');
  expect(await cache.get('k', at(10), load('back'))).toBe('back');
});

test('the oldest answers go first when the entries or their weight exceed the bounds', async () => {
  const { cache, load } = setUp({ maxEntries: 2, maxWeight: 10 });
  await cache.get('a', at(10), load('aaaa'));
  await cache.get('b', at(10), load('bbbb'));
  await cache.get('c', at(10), load('cc'));
  expect(cache.size).toBe(2);
  expect(await cache.get('a', at(10), load('A'))).toBe('A');
  await cache.get('d', at(10), load('dddddddddd'));
  expect(cache.size).toBe(1);
});

test('a zero weight budget keeps nothing', async () => {
  const { cache, load, loads } = setUp({ maxWeight: 0 });
  await cache.get('k', at(10), load('x'));
  await cache.get('k', at(10), load('x'));
  expect(loads()).toBe(2);
  expect(cache.size).toBe(0);
});
