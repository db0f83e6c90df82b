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

describe('a shared load and the signals of its askers', () => {
  /** A load that waits until released, recording the signal it was given. */
  function pendingLoad() {
    let release!: (value: string) => void;
    let given: AbortSignal | undefined;
    const load = (signal: AbortSignal) => {
      given = signal;
      return new Promise<string>((resolve, reject) => {
        release = resolve;
        signal.addEventListener('abort', () => reject(signal.reason as Error));
      });
    };
    return { load, release: (value: string) => release(value), signal: () => given! };
  }

  test('the load is aborted only when every asker has gone, and forgotten at once', async () => {
    const { cache } = setUp();
    const pending = pendingLoad();
    const first = new AbortController();
    const second = new AbortController();
    const a = cache.get('k', at(10), pending.load, first.signal);
    const b = cache.get('k', at(10), () => Promise.resolve('not asked'), second.signal);
    first.abort(new Error('first gone'));
    expect(pending.signal().aborted).toBe(false);
    second.abort(new Error('second gone'));
    expect(pending.signal().aborted).toBe(true);
    await expect(a).rejects.toThrow('second gone');
    await expect(b).rejects.toThrow('second gone');
    // The next ask does not join the stopped load: it loads again.
    expect(await cache.get('k', at(10), () => Promise.resolve('again'))).toBe('again');
  });

  test('an asker without a signal keeps the load going for everyone', async () => {
    const { cache } = setUp();
    const pending = pendingLoad();
    const gone = new AbortController();
    const a = cache.get('k', at(10), pending.load, gone.signal);
    const b = cache.get('k', at(10), () => Promise.resolve('not asked'));
    gone.abort(new Error('gone'));
    expect(pending.signal().aborted).toBe(false);
    pending.release('kept');
    expect(await a).toBe('kept');
    expect(await b).toBe('kept');
    expect(await cache.get('k', at(10), () => Promise.resolve('not asked'))).toBe('kept');
  });

  test('askers going after the answer change nothing; an asker gone already is refused', async () => {
    const { cache } = setUp();
    const pending = pendingLoad();
    const late = new AbortController();
    const a = cache.get('k', at(10), pending.load, late.signal);
    pending.release('answered');
    expect(await a).toBe('answered');
    late.abort(new Error('late'));
    expect(pending.signal().aborted).toBe(false);
    expect(await cache.get('k', at(10), () => Promise.resolve('not asked'))).toBe('answered');
    const already = new AbortController();
    already.abort(new Error('already gone'));
    await expect(cache.get('other', at(10), () => Promise.resolve('x'), already.signal)).rejects.toThrow(
      'already gone',
    );
  });
});
