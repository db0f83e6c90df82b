import { ConflictError } from '#shared/domain/domainErrors';
import type { EventStore } from '#shared/eventStore/eventStore';
import { type MemoryEventStore, memoryEventStore } from '#tests/support/memoryEventStore';
import type { CommandContext } from './commandContext';
import { type Backoff, type BackoffClock, contentionBackoff } from './contentionBackoff';
import { handleCommand } from './handleCommand';

/** An aggregate whose state is how many events its stream holds (whoever appended them). */
type Counted = { type: 'Counted'; data: { value: number } };
const counter = { initialState: () => 0, evolve: (count: number) => count + 1 };
const countOnce = (state: number): Counted[] => [{ type: 'Counted', data: { value: state + 1 } }];
const ctx: CommandContext = { actor: '7', requestId: 'r1', correlationId: 'c1', causationId: null };

/** A clock that only moves when the code under test sleeps: no real waiting, exact budgets. */
function fakeClock(): BackoffClock & { sleeps: number[] } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: (ms) => {
      sleeps.push(ms);
      now += ms;
      return Promise.resolve();
    },
    random: () => 0.5,
  };
}

const policy = { budgetMs: 1000, baseDelayMs: 5, maxDelayMs: 100 };

describe('handleCommand on a lost race', () => {
  test('retries on fresh state after each conflict and succeeds', async () => {
    const store = memoryEventStore();
    store.conflictNext('counter-1', 3);
    const clock = fakeClock();
    const result = await handleCommand(store, 'counter-1', counter, countOnce, ctx, {
      backoff: contentionBackoff(policy, clock),
    });
    // Three intruders got in first; the fourth attempt folded them and appended after them.
    expect(store.attempts.map((a) => a.outcome)).toEqual(['conflict', 'conflict', 'conflict', 'appended']);
    expect(store.attempts.map((a) => a.expected)).toEqual(['no_stream', 0n, 1n, 2n]);
    expect(result.revision).toBe(3n);
    expect(result.state).toBe(4); // folded the three intruders' events, then its own
    expect(result.events).toEqual([{ type: 'Counted', data: { value: 4 } }]);
    expect(clock.sleeps).toHaveLength(3);
  });

  test('gives up with 409 once the time budget is spent, never sleeping past it', async () => {
    const store = memoryEventStore();
    store.conflictNext('counter-1', Number.MAX_SAFE_INTEGER);
    const clock = fakeClock();
    const attempt = handleCommand(store, 'counter-1', counter, countOnce, ctx, {
      backoff: contentionBackoff(policy, clock),
    });
    await expect(attempt).rejects.toBeInstanceOf(ConflictError);
    expect(store.attempts.every((a) => a.outcome === 'conflict')).toBe(true);
    const slept = clock.sleeps.reduce((a, b) => a + b, 0);
    expect(slept).toBeLessThan(policy.budgetMs);
    expect(slept + 50).toBeGreaterThanOrEqual(policy.budgetMs); // it used the budget: the last delay is ≤ 50
    expect(store.attempts.length).toBe(clock.sleeps.length + 1);
  });

  test('a stale If-Match is a 409 at once: nothing appended, no retry', async () => {
    const store = memoryEventStore();
    await handleCommand(store, 'counter-1', counter, countOnce, ctx);
    const wait = jest.fn<Promise<boolean>, []>();
    const backoff: Backoff = { wait };
    const stale = handleCommand(store, 'counter-1', counter, countOnce, ctx, {
      expectedRevision: 5n,
      backoff,
    });
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    expect(store.attempts).toHaveLength(1);
    expect(wait).not.toHaveBeenCalled();
  });

  test('with If-Match, a race lost after the check is a 409 too, not a retry', async () => {
    const store = memoryEventStore();
    await handleCommand(store, 'counter-1', counter, countOnce, ctx);
    store.conflictNext('counter-1', 1);
    const wait = jest.fn<Promise<boolean>, []>();
    const lost = handleCommand(store, 'counter-1', counter, countOnce, ctx, {
      expectedRevision: 0n,
      backoff: { wait },
    });
    await expect(lost).rejects.toBeInstanceOf(ConflictError);
    expect(wait).not.toHaveBeenCalled();
  });

  test('a decision with no events appends nothing and reports no position', async () => {
    const store = memoryEventStore();
    const result = await handleCommand(store, 'counter-1', counter, () => [], ctx);
    expect(result).toEqual({ state: 0, events: [], position: undefined, revision: undefined });
    expect(store.attempts).toEqual([]);
  });
});

describe('writers of one stream in one process', () => {
  const concurrently = (store: EventStore, n: number, clock = fakeClock()) =>
    Promise.all(
      Array.from({ length: n }, () =>
        handleCommand(store, 'counter-1', counter, countOnce, ctx, {
          backoff: contentionBackoff({ budgetMs: 60_000, baseDelayMs: 1, maxDelayMs: 10 }, clock),
        }),
      ),
    );

  test('take turns: 20 at once append one after another without a single lost race', async () => {
    const store = memoryEventStore();
    const results = await concurrently(store, 20);
    expect(store.attempts.filter((a) => a.outcome === 'conflict')).toEqual([]);
    expect(results.map((r) => r.revision).sort((a, b) => Number(a! - b!))).toEqual(
      Array.from({ length: 20 }, (_, i) => BigInt(i)),
    );
  });

  test('other streams do not wait for each other', async () => {
    const store = memoryEventStore();
    let release!: () => void;
    const held = handleCommand(
      store,
      'counter-1',
      counter,
      async (state) => {
        await new Promise<void>((resolve) => (release = resolve));
        return countOnce(state);
      },
      ctx,
    );
    await expect(handleCommand(store, 'counter-2', counter, countOnce, ctx)).resolves.toMatchObject({
      revision: 0n,
    });
    release();
    await held;
  });

  /** As the store looks from inside a unit of work (the memory store has no database lock). */
  const insideUnitOfWork = (memory: MemoryEventStore): EventStore => ({
    ...memory,
    unitOfWork: {
      run: (work) => work({ query: () => Promise.reject(new Error('unused')) }),
      isActive: () => true,
      afterCommit: (effect) => effect(),
      afterRollback: () => undefined,
    },
  });

  test('inside a unit of work they take no turns (the database lock queues them) and retry until all succeed', async () => {
    const memory = memoryEventStore();
    const results = await concurrently(insideUnitOfWork(memory), 20);
    expect(memory.attempts.some((a) => a.outcome === 'conflict')).toBe(true);
    expect(new Set(results.map((r) => r.revision)).size).toBe(20);
  });

  test('inside a unit of work a lost race is retried at once: the stream is now locked to this writer', async () => {
    const memory = memoryEventStore();
    memory.conflictNext('counter-1', 1);
    const wait = jest.fn<Promise<boolean>, []>(() => Promise.resolve(false));
    const result = await handleCommand(insideUnitOfWork(memory), 'counter-1', counter, countOnce, ctx, {
      backoff: { wait },
    });
    expect(result.revision).toBe(1n);
    expect(wait).not.toHaveBeenCalled();
  });
});

describe('contentionBackoff', () => {
  test('delays are full-jitter: uniform below a ceiling that doubles up to the cap', async () => {
    const ceilings: number[] = [];
    const clock = { ...fakeClock(), random: () => 0.999999 };
    const backoff = contentionBackoff({ budgetMs: 10_000, baseDelayMs: 5, maxDelayMs: 100 }, clock);
    for (let i = 0; i < 7; i++) {
      expect(await backoff.wait()).toBe(true);
      ceilings.push(Math.round(clock.sleeps[i]!));
    }
    expect(ceilings).toEqual([10, 20, 40, 80, 100, 100, 100]);
    const zero = contentionBackoff(policy, { ...fakeClock(), random: () => 0 });
    expect(await zero.wait()).toBe(true);
  });

  test('the budget counts from creation, including time spent outside the waits', async () => {
    const clock = fakeClock();
    const backoff = contentionBackoff({ budgetMs: 100, baseDelayMs: 5, maxDelayMs: 100 }, clock);
    await clock.sleep(99); // e.g. a slow first attempt
    expect(await backoff.wait()).toBe(false);
  });
});

describe('handleCommand on a stream named by a fresh id (newStream)', () => {
  /** Counts the stream reads the store is asked for. */
  const countingReads = (memory: MemoryEventStore) => {
    const reads: string[] = [];
    const store: EventStore = {
      ...memory,
      appendToStream: (...args) => memory.appendToStream(...args),
      readStream: (stream, options) => {
        reads.push(stream);
        return memory.readStream(stream, options);
      },
    };
    return { store, reads };
  };

  test('appends with no_stream on the initial state without reading the stream', async () => {
    const memory = memoryEventStore();
    const { store, reads } = countingReads(memory);
    const result = await handleCommand(store, 'counter-9', counter, countOnce, ctx, { newStream: true });
    expect(reads).toEqual([]);
    expect(memory.attempts.map((a) => [a.expected, a.outcome])).toEqual([['no_stream', 'appended']]);
    expect(result).toMatchObject({ revision: 0n, state: 1 });
  });

  test('a stream that exists after all is read and decided on its real state, at once, no backoff', async () => {
    const memory = memoryEventStore();
    await handleCommand(memory, 'counter-9', counter, countOnce, ctx);
    await handleCommand(memory, 'counter-9', counter, countOnce, ctx);
    const { store, reads } = countingReads(memory);
    const wait = jest.fn<Promise<boolean>, []>();
    const result = await handleCommand(store, 'counter-9', counter, countOnce, ctx, {
      newStream: true,
      backoff: { wait },
    });
    expect(memory.attempts.slice(2).map((a) => [a.expected, a.outcome])).toEqual([
      ['no_stream', 'conflict'],
      [1n, 'appended'],
    ]);
    expect(reads).toEqual(['counter-9']);
    expect(result.events).toEqual([{ type: 'Counted', data: { value: 3 } }]);
    expect(result.revision).toBe(2n);
    expect(wait).not.toHaveBeenCalled();
  });

  test('a decision refused on the real state is refused, whatever the initial state allowed', async () => {
    const memory = memoryEventStore();
    await handleCommand(memory, 'counter-9', counter, countOnce, ctx);
    const onlyFirst = (state: number): Counted[] => {
      if (state > 0) throw new ConflictError('exists');
      return countOnce(state);
    };
    await expect(
      handleCommand(memory, 'counter-9', counter, onlyFirst, ctx, { newStream: true }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(memory.attempts.slice(1).map((a) => a.outcome)).toEqual(['conflict']);
  });
});

describe('handleCommand on a stream the caller knows (known)', () => {
  const countingReads = (memory: MemoryEventStore) => {
    const reads: string[] = [];
    const store: EventStore = {
      ...memory,
      appendToStream: (...args) => memory.appendToStream(...args),
      readStream: (stream, options) => {
        reads.push(stream);
        return memory.readStream(stream, options);
      },
    };
    return { store, reads };
  };

  test('decides on the known state and appends at its revision without reading the stream', async () => {
    const memory = memoryEventStore();
    const first = await handleCommand(memory, 'counter-5', counter, countOnce, ctx);
    const { store, reads } = countingReads(memory);
    const known = { state: first.state, revision: first.revision };
    const result = await handleCommand(store, 'counter-5', counter, countOnce, ctx, { known });
    expect(reads).toEqual([]);
    expect(memory.attempts.slice(1).map((a) => [a.expected, a.outcome])).toEqual([[0n, 'appended']]);
    expect(result).toMatchObject({ revision: 1n, state: 2 });
  });

  test('a stale known state loses the append, and the stream is read and decided on again at once', async () => {
    const memory = memoryEventStore();
    const first = await handleCommand(memory, 'counter-5', counter, countOnce, ctx);
    await handleCommand(memory, 'counter-5', counter, countOnce, ctx); // someone else moved it on
    const { store, reads } = countingReads(memory);
    const wait = jest.fn<Promise<boolean>, []>();
    const result = await handleCommand(store, 'counter-5', counter, countOnce, ctx, {
      known: { state: first.state, revision: first.revision },
      backoff: { wait },
    });
    expect(memory.attempts.slice(2).map((a) => [a.expected, a.outcome])).toEqual([
      [0n, 'conflict'],
      [1n, 'appended'],
    ]);
    expect(reads).toEqual(['counter-5']);
    expect(result.events).toEqual([{ type: 'Counted', data: { value: 3 } }]);
    expect(wait).not.toHaveBeenCalled();
  });

  test('If-Match wins over a known state: checked against the stream as read', async () => {
    const memory = memoryEventStore();
    const first = await handleCommand(memory, 'counter-5', counter, countOnce, ctx);
    await handleCommand(memory, 'counter-5', counter, countOnce, ctx);
    await expect(
      handleCommand(memory, 'counter-5', counter, countOnce, ctx, {
        known: { state: first.state, revision: first.revision },
        expectedRevision: 0n,
      }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(memory.attempts).toHaveLength(2);
  });
});
