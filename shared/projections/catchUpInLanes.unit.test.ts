import type { GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import { START } from '#shared/eventStore/eventStore';
import { catchUpInLanes } from './catchUpInLanes';

const EVENTS = 23;
const at = (n: number): GlobalPosition => ({ commit: BigInt(n), prepare: BigInt(n) });
const event = (n: number): RecordedEvent => ({ id: String(n), position: at(n) }) as unknown as RecordedEvent;

/** Events 1..EVENTS in batches of `size` after a position. */
function reader(size: number, reads: GlobalPosition[] = []) {
  return (after: GlobalPosition): Promise<readonly RecordedEvent[]> => {
    reads.push(after);
    const first = Math.max(0, Number(after.commit)) + 1;
    const batch = [];
    for (let n = first; n < first + size && n <= EVENTS; n++) batch.push(event(n));
    return Promise.resolve(batch);
  };
}

/** A lane that takes `delayMs` per batch and records what it applied. */
const lane = (name: string, delayMs: number) => ({ name, delayMs, applied: [] as number[] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('every lane applies every event once, in order, each at its own pace; progress follows the slowest', async () => {
  const lanes = [lane('fast', 0), lane('slow', 3), lane('middle', 1)];
  const reads: GlobalPosition[] = [];
  const progress: [number, bigint][] = [];
  let furthestAhead = 0;
  const applied = await catchUpInLanes({
    lanes,
    start: START,
    read: reader(5, reads),
    apply: async (l, batch) => {
      await sleep(l.delayMs);
      l.applied.push(...batch.map((e) => Number(e.id)));
      const slowest = Math.min(...lanes.map((x) => x.applied.length));
      furthestAhead = Math.max(furthestAhead, reads.length * 5 - slowest);
    },
    onProgress: (n, position) => {
      expect(Math.min(...lanes.map((x) => x.applied.length))).toBeGreaterThanOrEqual(n);
      progress.push([n, position.commit]);
    },
    readAhead: 2,
  });
  const all = Array.from({ length: EVENTS }, (_, i) => i + 1);
  expect(applied).toBe(EVENTS);
  for (const l of lanes) expect(l.applied).toEqual(all);
  expect(progress).toEqual([
    [5, 5n],
    [10, 10n],
    [15, 15n],
    [20, 20n],
    [23, 23n],
  ]);
  // Each read starts where the previous batch ended, once; the reader stays within the read-ahead.
  expect(reads.map((p) => p.commit)).toEqual([START.commit, 5n, 10n, 15n, 20n, 23n]);
  expect(furthestAhead).toBeLessThanOrEqual(2 * 5 + 5);
});

test('a failing lane stops the others and the reader; its error is thrown once all have stopped', async () => {
  const lanes = [lane('ok', 1), lane('broken', 1)];
  let stillApplying = 0;
  const failure = catchUpInLanes({
    lanes,
    start: START,
    read: reader(2),
    apply: async (l, batch) => {
      stillApplying++;
      await sleep(l.delayMs);
      stillApplying--;
      if (l.name === 'broken' && batch[0]!.id === '5') throw new Error('projection failed');
      l.applied.push(...batch.map((e) => Number(e.id)));
    },
  });
  await expect(failure).rejects.toThrow('projection failed');
  expect(stillApplying).toBe(0);
  expect(lanes[1]!.applied).toEqual([1, 2, 3, 4]);
  expect(lanes[0]!.applied.length).toBeLessThan(EVENTS);
});

test('a failing read is thrown and no lane applies past what was read', async () => {
  const lanes = [lane('a', 0)];
  let reads = 0;
  await expect(
    catchUpInLanes({
      lanes,
      start: START,
      read: (after) => (++reads === 3 ? Promise.reject(new Error('store down')) : reader(4)(after)),
      apply: (l, batch) => Promise.resolve(void l.applied.push(...batch.map((e) => Number(e.id)))),
    }),
  ).rejects.toThrow('store down');
  expect(lanes[0]!.applied).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
});

test('nothing to read: nothing applied, no progress', async () => {
  const onProgress = jest.fn();
  const apply = jest.fn();
  expect(
    await catchUpInLanes({ lanes: [1, 2], start: START, read: () => Promise.resolve([]), apply, onProgress }),
  ).toBe(0);
  expect(apply).not.toHaveBeenCalled();
  expect(onProgress).not.toHaveBeenCalled();
});
