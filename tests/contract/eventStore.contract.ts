import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  IdempotencyConflictError,
  START,
  WrongExpectedRevisionError,
  comparePositions,
  type AppendResult,
  type EventMetadataInput,
  type EventStore,
  type ExpectedRevision,
  type GlobalPosition,
  type NewEvent,
  type RecordedEvent,
} from '#shared/eventStore/eventStore';
import { waitFor } from '#tests/support/waitFor';
import { seededRandom } from '#tests/support/seededRandom';

/** An append whose transaction is still open: its events are inserted, not yet committed. */
export interface HeldAppend {
  /** Commits the transaction; resolves with the append's result. */
  commit(): Promise<AppendResult>;
}

export interface EventStoreContractFixture<Store extends EventStore = EventStore> {
  /** A store for one test; the suite closes it afterwards. Empty where the adapter can make it so. */
  create(): Promise<Store>;
  /**
   * Where an append can take its place in the global sequence before it commits (PostgreSQL),
   * begins one and leaves it open, so that later appends commit first. Omitted where appends
   * are atomic in the log (EventStoreDB); the concurrency test then runs without held appends.
   */
  holdOpenAppend?(store: Store, streamName: string, events: readonly NewEvent[]): Promise<HeldAppend>;
}

const TOTAL_EVENTS = 4000;
const WRITERS = 8;
const runId = randomUUID().slice(0, 8);
let streamCounter = 0;

function uniqueStream(label: string): string {
  streamCounter += 1;
  return `${label}-${runId}x${streamCounter}`;
}

function metadata(overrides: Partial<EventMetadataInput> = {}): EventMetadataInput {
  return {
    actor: 'system',
    requestId: null,
    correlationId: randomUUID(),
    causationId: null,
    schemaVersion: 1,
    ...overrides,
  };
}

function newEvent(data: Record<string, unknown> = {}, meta: Partial<EventMetadataInput> = {}): NewEvent {
  return { id: randomUUID(), type: 'ThingHappened', data, metadata: metadata(meta) };
}

function newEvents(count: number, data: Record<string, unknown> = {}): NewEvent[] {
  return Array.from({ length: count }, (_, index) => newEvent({ ...data, index }));
}

const ids = (events: readonly { id: string }[]): string[] => events.map((event) => event.id);

interface Collector {
  readonly events: RecordedEvent[];
  until(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** A subscriber consuming with `for await`, keeping the events the filter accepts. */
function collect(
  store: EventStore,
  accept: (event: RecordedEvent) => boolean,
  options: { after?: GlobalPosition; batchSize?: number } = {},
): Collector {
  const controller = new AbortController();
  const events: RecordedEvent[] = [];
  let failure: Error | undefined;
  const running = (async () => {
    for await (const batch of store.subscribeToAll({ ...options, signal: controller.signal })) {
      for (const event of batch) if (accept(event)) events.push(event);
    }
  })().catch((error: unknown) => {
    failure = error instanceof Error ? error : new Error(String(error));
  });
  return {
    events,
    async until(count, timeoutMs = 20_000) {
      await waitFor(
        `the subscriber to receive ${count} events`,
        () => {
          if (failure) throw failure;
          return events.length;
        },
        { timeoutMs, until: (received) => received >= count },
      );
      if (failure) throw failure;
    },
    async stop() {
      controller.abort();
      await running;
      if (failure) throw failure;
    },
  };
}

/**
 * The global order shows an event only once no transaction that could precede it is still open: on
 * PostgreSQL any writing transaction of the whole server, other test files' databases included.
 * So a test waits (bounded) for its events to become readable instead of assuming it is immediate.
 */
function untilReadable(store: EventStore, position: GlobalPosition): Promise<GlobalPosition> {
  return waitFor('the appended events to become readable', () => store.headPosition(), {
    timeoutMs: 15_000,
    until: (head) => comparePositions(head, position) >= 0,
  });
}

async function readAllPages(
  store: EventStore,
  after: GlobalPosition,
  pageSize: number,
): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (;;) {
    const page = await store.readAll({
      after: events[events.length - 1]?.position ?? after,
      maxCount: pageSize,
    });
    events.push(...page);
    if (page.length < pageSize) return events;
  }
}

/** Descriptions of every place where delivery broke the global or a stream's order. */
function orderViolations(events: readonly RecordedEvent[]): string[] {
  const violations: string[] = [];
  const nextRevision = new Map<string, bigint>();
  events.forEach((event, index) => {
    const previous = events[index - 1];
    if (previous && comparePositions(previous.position, event.position) >= 0) {
      violations.push(`position not increasing at #${index}`);
    }
    const expected = nextRevision.get(event.streamName) ?? 0n;
    if (event.streamRevision !== expected) {
      violations.push(`${event.streamName}: got revision ${event.streamRevision}, expected ${expected}`);
    }
    nextRevision.set(event.streamName, event.streamRevision + 1n);
  });
  return violations;
}

interface WriteLog {
  readonly ids: Set<string>;
  /** Highest global sequence number among appends already acknowledged. */
  maxPrepare: bigint;
  /** Held appends that committed after a later-numbered append had. */
  overtaken: number;
  readonly pendingCommits: Promise<void>[];
}

/** One writer: single and multi-event appends to its own streams (exact revisions) and shared ones. */
async function runWriter<Store extends EventStore>(
  store: Store,
  fixture: EventStoreContractFixture<Store>,
  writer: number,
  quota: number,
  prefix: string,
  log: WriteLog,
): Promise<void> {
  const random = seededRandom(writer + 1);
  const own = Array.from({ length: 5 }, (_, index): { name: string; revision: ExpectedRevision } => ({
    name: `${prefix}.w${writer}s${index}`,
    revision: 'no_stream',
  }));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  for (let left = quota, appends = 1; left > 0; appends += 1) {
    const events = newEvents(Math.min(left, random() < 0.4 ? 1 : 2 + Math.floor(random() * 4)), { writer });
    left -= events.length;
    for (const id of ids(events)) log.ids.add(id);
    if (fixture.holdOpenAppend && appends % 20 === 3) {
      const held = await fixture.holdOpenAppend(store, `${prefix}.held${writer}n${appends}`, events);
      const commit = commitLater(held, 15 + random() * 60, log);
      void commit.catch(() => undefined); // reported where the test awaits it, not as unhandled
      log.pendingCommits.push(commit);
      continue;
    }
    let result: AppendResult;
    if (random() < 0.25) {
      result = await store.appendToStream(`${prefix}.shared${pick([0, 1, 2, 3])}`, events, {
        expectedRevision: 'any',
      });
    } else {
      const stream = pick(own);
      result = await store.appendToStream(stream.name, events, { expectedRevision: stream.revision });
      stream.revision = result.nextExpectedRevision;
    }
    if (result.position.prepare > log.maxPrepare) log.maxPrepare = result.position.prepare;
  }
}

async function commitLater(held: HeldAppend, delayMs: number, log: WriteLog): Promise<void> {
  await sleep(delayMs);
  const overtakenBy = log.maxPrepare;
  const result = await held.commit();
  if (result.position.prepare < overtakenBy) log.overtaken += 1;
}

export function describeEventStoreContract<Store extends EventStore>(
  name: string,
  fixture: EventStoreContractFixture<Store>,
): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: Store;

    beforeEach(async () => {
      store = await fixture.create();
    });

    afterEach(async () => {
      await store.close();
    });

    test('concurrent writers with late commits: every event reaches subscribers once, in order, also after a restart', async () => {
      const prefix = uniqueStream('concurrency');
      const ours = (event: RecordedEvent): boolean => event.streamName.startsWith(prefix);
      const start = await store.headPosition();
      const live = collect(store, ours, { after: start, batchSize: 97 });
      const firstRun = collect(store, ours, { after: start, batchSize: 61 });
      const subscribers = [live, firstRun];
      const restart = (async () => {
        await firstRun.until(TOTAL_EVENTS / 2);
        await firstRun.stop();
        const checkpoint = firstRun.events[firstRun.events.length - 1]!.position;
        subscribers.push(collect(store, ours, { after: checkpoint }));
      })();
      void restart.catch(() => undefined); // reported where the test awaits it, not as unhandled
      const log: WriteLog = { ids: new Set(), maxPrepare: -1n, overtaken: 0, pendingCommits: [] };
      try {
        const quota = TOTAL_EVENTS / WRITERS;
        await Promise.all(
          Array.from({ length: WRITERS }, (_, w) => runWriter(store, fixture, w, quota, prefix, log)),
        );
        await Promise.all(log.pendingCommits);
        await live.until(TOTAL_EVENTS);
        await restart;
        await subscribers[2]!.until(TOTAL_EVENTS - firstRun.events.length);
        await sleep(300); // room for a duplicate to show up
      } finally {
        await Promise.allSettled([...log.pendingCommits, restart]);
        await Promise.all(subscribers.map((subscriber) => subscriber.stop()));
      }

      expect(log.ids.size).toBe(TOTAL_EVENTS);
      if (fixture.holdOpenAppend) expect(log.overtaken).toBeGreaterThan(0);
      const delivered = ids(live.events);
      expect(delivered).toHaveLength(TOTAL_EVENTS);
      expect(new Set(delivered)).toEqual(log.ids);
      expect(orderViolations(live.events)).toEqual([]);
      expect([...ids(firstRun.events), ...ids(subscribers[2]!.events)]).toEqual(delivered);
      expect(ids((await readAllPages(store, start, 1000)).filter(ours))).toEqual(delivered);
    }, 90_000);

    test('a subscription delivers appended events in batches of at most batchSize, and ends when its signal aborts', async () => {
      const stream = uniqueStream('batches');
      const start = await store.headPosition();
      const appended = newEvents(5);
      await store.appendToStream(stream, appended, { expectedRevision: 'no_stream' });
      const controller = new AbortController();
      const batches: RecordedEvent[][] = [];
      const ours = (): RecordedEvent[] => batches.flat().filter((event) => event.streamName === stream);
      let ended = false;
      const iterate = (async () => {
        for await (const batch of store.subscribeToAll({
          after: start,
          batchSize: 2,
          signal: controller.signal,
        }))
          batches.push([...batch]);
        ended = true;
      })();
      try {
        await waitFor('the subscription to deliver what was appended', () => ours().length, {
          timeoutMs: 15_000,
          until: (delivered) => delivered >= appended.length,
        }).catch(() => undefined); // the assertion below says what is missing
        expect(ids(ours())).toEqual(ids(appended));
        expect(
          batches.filter((batch) => batch.some((event) => event.streamName === stream)).length,
        ).toBeGreaterThanOrEqual(3);
        for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(2);
      } finally {
        controller.abort();
      }
      // Bounded wait for the condition, not a timing assertion: the loop must end by itself.
      await waitFor('the subscription loop to end', () => ended, { timeoutMs: 15_000 });
      await iterate;
    });

    describe('idempotent append', () => {
      test('repeating an append with the same event ids returns the original result and writes nothing', async () => {
        const stream = uniqueStream('retry');
        const events = newEvents(2);
        const original = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });
        await expect(
          store.appendToStream(stream, events, { expectedRevision: 'no_stream' }),
        ).resolves.toEqual(original);
        await expect(store.appendToStream(stream, events, { expectedRevision: 'any' })).resolves.toEqual(
          original,
        );

        const next = [newEvent()];
        const nextResult = await store.appendToStream(stream, next, { expectedRevision: 1n });
        await expect(store.appendToStream(stream, next, { expectedRevision: 1n })).resolves.toEqual(
          nextResult,
        );
        await expect(
          store.appendToStream(stream, events, { expectedRevision: 'no_stream' }),
        ).resolves.toEqual(original);

        expect(ids(await store.readStream(stream))).toEqual(ids([...events, ...next]));
        expect(nextResult.nextExpectedRevision).toBe(2n);
      });

      test('repeating only some of the event ids is an IdempotencyConflictError and writes nothing', async () => {
        const stream = uniqueStream('partial');
        const [first, second] = newEvents(2);
        await store.appendToStream(stream, [first!, second!], { expectedRevision: 'no_stream' });
        const third = newEvent();
        await store.appendToStream(stream, [third], { expectedRevision: 1n });

        await expect(
          store.appendToStream(stream, [first!, newEvent()], { expectedRevision: 'no_stream' }),
        ).rejects.toBeInstanceOf(IdempotencyConflictError);
        await expect(
          store.appendToStream(stream, [third, newEvent()], { expectedRevision: 1n }),
        ).rejects.toBeInstanceOf(IdempotencyConflictError);
        expect(ids(await store.readStream(stream))).toEqual(ids([first!, second!, third]));
      });
    });

    describe('expected revision', () => {
      async function conflict(promise: Promise<unknown>): Promise<WrongExpectedRevisionError> {
        const error = await promise.then(
          () => undefined,
          (reason: unknown) => reason,
        );
        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        return error as WrongExpectedRevisionError;
      }

      test('no_stream on an existing stream, a stale revision and stream_exists on a missing stream conflict', async () => {
        const stream = uniqueStream('conflict');
        await store.appendToStream(stream, newEvents(3), { expectedRevision: 'no_stream' });

        const exists = await conflict(
          store.appendToStream(stream, [newEvent()], { expectedRevision: 'no_stream' }),
        );
        expect(exists).toMatchObject({ streamName: stream, expected: 'no_stream', actual: 2n });
        const stale = await conflict(store.appendToStream(stream, [newEvent()], { expectedRevision: 1n }));
        expect(stale).toMatchObject({ expected: 1n, actual: 2n });

        const missing = uniqueStream('missing');
        const absent = await conflict(
          store.appendToStream(missing, [newEvent()], { expectedRevision: 'stream_exists' }),
        );
        expect(absent).toMatchObject({ streamName: missing, expected: 'stream_exists', actual: 'no_stream' });
        const exact = await conflict(store.appendToStream(missing, [newEvent()], { expectedRevision: 0n }));
        expect(exact.actual).toBe('no_stream');

        const appended = await store.appendToStream(stream, newEvents(2), {
          expectedRevision: 'stream_exists',
        });
        expect(appended.nextExpectedRevision).toBe(4n);
        expect(await store.readStream(stream)).toHaveLength(5);
        expect(await store.readStream(missing)).toEqual([]);
      });

      test('concurrent appends to one stream keep its revision order in the global order', async () => {
        const stream = uniqueStream('contended');
        const start = await store.headPosition();
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            let last = START;
            for (let i = 0; i < 40; i++)
              ({ position: last } = await store.appendToStream(stream, newEvents(1), {
                expectedRevision: 'any',
              }));
            await untilReadable(store, last);
          }),
        );
        const globalOrder = (await readAllPages(store, start, 1000)).filter((e) => e.streamName === stream);
        expect(globalOrder).toHaveLength(320);
        // Plain numbers: a failure message with bigints could not cross jest's worker boundary.
        const revisions = globalOrder.map((e) => Number(e.streamRevision));
        expect(revisions).toEqual(revisions.map((_, i) => i));
      });

      test('of parallel appends expecting the same revision, exactly one succeeds', async () => {
        const stream = uniqueStream('race');
        const { nextExpectedRevision } = await store.appendToStream(stream, [newEvent()], {
          expectedRevision: 'no_stream',
        });
        const attempts = await Promise.allSettled(
          Array.from({ length: 10 }, () =>
            store.appendToStream(stream, newEvents(2), { expectedRevision: nextExpectedRevision }),
          ),
        );
        const rejected = attempts.filter((attempt) => attempt.status === 'rejected');
        expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).toHaveLength(1);
        for (const attempt of rejected) expect(attempt.reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(stream)).toHaveLength(3);

        const reserved = uniqueStream('reservation');
        const claims = await Promise.allSettled(
          Array.from({ length: 10 }, () =>
            store.appendToStream(reserved, [newEvent()], { expectedRevision: 'no_stream' }),
          ),
        );
        expect(claims.filter((claim) => claim.status === 'fulfilled')).toHaveLength(1);
        expect(await store.readStream(reserved)).toHaveLength(1);
      });
    });

    describe('reading a stream', () => {
      test('by revision range, count and up to a global position', async () => {
        const stream = uniqueStream('asOf');
        const [e0, e1, e2] = newEvents(3);
        await store.appendToStream(stream, [e0!], { expectedRevision: 'no_stream' });
        const second = await store.appendToStream(stream, [e1!], { expectedRevision: 0n });
        await store.appendToStream(uniqueStream('other'), [newEvent()]);
        await store.appendToStream(stream, [e2!], { expectedRevision: 1n });

        expect(ids(await store.readStream(stream))).toEqual(ids([e0!, e1!, e2!]));
        expect(ids(await store.readStream(stream, { toPosition: second.position }))).toEqual(ids([e0!, e1!]));
        expect(ids(await store.readStream(stream, { fromRevision: 1n }))).toEqual(ids([e1!, e2!]));
        expect(ids(await store.readStream(stream, { toRevision: 1n }))).toEqual(ids([e0!, e1!]));
        expect(ids(await store.readStream(stream, { maxCount: 1 }))).toEqual(ids([e0!]));
        expect((await store.readStream(stream)).map((event) => event.streamRevision)).toEqual([0n, 1n, 2n]);
      });

      test('up to a time', async () => {
        const stream = uniqueStream('asOfTime');
        await store.appendToStream(stream, [newEvent()], { expectedRevision: 'no_stream' });
        await sleep(30);
        await store.appendToStream(stream, [newEvent()], { expectedRevision: 0n });
        const [first, second] = await store.readStream(stream);
        const firstAt = Date.parse(first!.metadata.recordedAt);

        expect(ids(await store.readStream(stream, { toTime: new Date(firstAt) }))).toEqual([first!.id]);
        expect(await store.readStream(stream, { toTime: new Date(firstAt - 1) })).toEqual([]);
        expect(
          await store.readStream(stream, { toTime: new Date(second!.metadata.recordedAt) }),
        ).toHaveLength(2);
      });

      test('a stream that does not exist reads as []', async () => {
        expect(await store.readStream(uniqueStream('nothing'))).toEqual([]);
      });
    });

    test('data and metadata round trip, with recordedAt set by the store', async () => {
      const stream = uniqueStream('metadata');
      const cause = newEvent(
        { name: 'Ünïcode "quoted" \\ brain', nested: { list: [1, 2.5, null, true], empty: {} } },
        { actor: '42', requestId: 'req-1', correlationId: randomUUID(), causationId: null, schemaVersion: 2 },
      );
      const effect = newEvent({}, { correlationId: cause.metadata.correlationId, causationId: cause.id });
      const start = await store.headPosition();
      const before = Date.now();
      const appended = await store.appendToStream(stream, [cause, effect], { expectedRevision: 'no_stream' });
      await untilReadable(store, appended.position);
      const after = await store.headPosition();

      const read = await store.readStream(stream);
      const fromAll = (await store.readAll({ after: start })).filter((event) => event.streamName === stream);
      for (const events of [read, fromAll]) {
        expect(events.map(({ id, type, data }) => ({ id, type, data }))).toEqual(
          [cause, effect].map(({ id, type, data }) => ({ id, type, data })),
        );
        expect(events[0]!.metadata).toEqual({ ...cause.metadata, recordedAt: expect.any(String) });
        expect(events[1]!.metadata).toEqual({ ...effect.metadata, recordedAt: expect.any(String) });
      }
      const recordedAt = read[0]!.metadata.recordedAt;
      expect(recordedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Math.abs(Date.parse(recordedAt) - before)).toBeLessThan(60_000);
      expect(read[1]!.position).toEqual(after);
    });

    test('headPosition and readAll paging', async () => {
      const before = await store.headPosition();
      if ((await store.readAll({ maxCount: 1 })).length === 0) expect(before).toEqual(START);
      const [a, b, c, d, e] = newEvents(5);
      const s1 = uniqueStream('paging');
      const s2 = uniqueStream('paging');
      const first = await store.appendToStream(s1, [a!, b!], { expectedRevision: 'no_stream' });
      await store.appendToStream(s2, [c!], { expectedRevision: 'no_stream' });
      const last = await store.appendToStream(s1, [d!, e!], { expectedRevision: first.nextExpectedRevision });
      await untilReadable(store, last.position);

      expect(await store.headPosition()).toEqual(last.position);
      const page1 = await store.readAll({ after: before, maxCount: 2 });
      const page2 = await store.readAll({ after: page1[1]!.position, maxCount: 2 });
      const page3 = await store.readAll({ after: page2[1]!.position, maxCount: 2 });
      expect([page1, page2, page3].map(ids)).toEqual([ids([a!, b!]), ids([c!, d!]), ids([e!])]);
      expect(page1[1]!.position).toEqual(first.position);
      expect(page3[0]!.position).toEqual(last.position);
      expect(await store.readAll({ after: last.position })).toEqual([]);
      expect(ids(await store.readAll({ after: before }))).toEqual(ids([a!, b!, c!, d!, e!]));
      expect(orderViolations(await store.readAll({ after: before }))).toEqual([]);
    });
  });
}
