import { memoryEventStore } from '#tests/support/memoryEventStore';
import { IdAllocator } from './allocateId';
import type { CommandContext } from './commandContext';

const ctx: CommandContext = { actor: 'system', requestId: null, correlationId: 'c', causationId: null };

describe('IdAllocator', () => {
  test('ids count up from 1; after the first, each costs exactly one append (the guess is right)', async () => {
    const store = memoryEventStore();
    const ids = new IdAllocator(store);
    expect([await ids.next('user', ctx), await ids.next('user', ctx), await ids.next('user', ctx)]).toEqual([
      1, 2, 3,
    ]);
    expect(store.attempts.map((a) => [a.expected, a.outcome])).toEqual([
      ['no_stream', 'appended'],
      [0n, 'appended'],
      [1n, 'appended'],
    ]);
    const events = await store.readStream('sequence-user');
    expect(events.map((e) => e.data)).toEqual([1, 2, 3].map((id) => ({ sequence: 'user', id })));
  });

  test('sequences are independent', async () => {
    const ids = new IdAllocator(memoryEventStore());
    expect(await ids.next('user', ctx)).toBe(1);
    expect(await ids.next('brain', ctx)).toBe(1);
    expect(await ids.next('user', ctx)).toBe(2);
  });

  test('a stale guess (another process allocated meanwhile) recovers from the conflict with one more try', async () => {
    const store = memoryEventStore();
    const here = new IdAllocator(store);
    const elsewhere = new IdAllocator(store);
    expect(await here.next('user', ctx)).toBe(1);
    for (const expected of [2, 3, 4]) expect(await elsewhere.next('user', ctx)).toBe(expected);
    store.attempts.length = 0;
    expect(await here.next('user', ctx)).toBe(5);
    // Guessed revision 0 (id 2), learned the actual revision 3 from the conflict, took id 5.
    expect(store.attempts.map((a) => [a.expected, a.outcome])).toEqual([
      [0n, 'conflict'],
      [3n, 'appended'],
    ]);
  });

  test('a fresh allocator on an existing sequence learns where it is from the first conflict', async () => {
    const store = memoryEventStore();
    const first = new IdAllocator(store);
    for (let i = 0; i < 3; i++) await first.next('user', ctx);
    expect(await new IdAllocator(store).next('user', ctx)).toBe(4);
  });

  test('concurrent allocations in one process take turns: distinct ids, no lost race', async () => {
    const store = memoryEventStore();
    const ids = new IdAllocator(store);
    const allocated = await Promise.all(Array.from({ length: 20 }, () => ids.next('user', ctx)));
    expect([...allocated].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(store.attempts.filter((a) => a.outcome === 'conflict')).toEqual([]);
  });
});
