import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import { waitFor } from '#tests/support/waitFor';
import {
  IdempotencyConflictError,
  type NewEvent,
  type StreamAppend,
  WrongExpectedRevisionError,
  comparePositions,
} from '#shared/eventStore/eventStore';
import { createPostgresEventStore, type PostgresEventStore } from './postgresEventStore';

let connectionString: string;
let store: PostgresEventStore;

const newEvent = (type = 'ThingHappened'): NewEvent => ({
  id: randomUUID(),
  type,
  data: { n: randomUUID() },
  metadata: {
    actor: 'system',
    requestId: null,
    correlationId: randomUUID(),
    causationId: null,
    schemaVersion: 1,
  },
});

beforeAll(async () => {
  connectionString = await createTestDatabase('pg_append_to_streams');
});

beforeEach(async () => {
  store = createPostgresEventStore({ connectionString, schema: `es_${randomBytes(5).toString('hex')}` });
  await store.migrate();
});

afterEach(async () => {
  await store.close();
});

const appendToStreams = (appends: readonly StreamAppend[]) => store.appendToStreams(appends);

/**
 * The global order once `count` events are readable: readAll waits for every older transaction of
 * the cluster (other test files' included) to end.
 */
const readAllOf = (count: number) =>
  waitFor(`${count} events to be readable`, () => store.readAll({ maxCount: 1000 }), {
    until: (events) => events.length >= count,
  });

test('several streams in one statement: each at its revision, one transaction, in the order given', async () => {
  await store.appendToStream('seq', [newEvent(), newEvent()]);
  const appends: StreamAppend[] = [
    { streamName: 'seq', events: [newEvent('IdAllocated')], expectedRevision: 1n },
    { streamName: 'upload-1', events: [newEvent('UploadReceived')], expectedRevision: 'no_stream' },
    { streamName: 'brain-3', events: [newEvent('BrainCreated'), newEvent('BrainShared')] },
  ];
  const results = await appendToStreams(appends);
  expect(results.map((r) => r.nextExpectedRevision)).toEqual([2n, 0n, 1n]);
  // One transaction: one commit position; the positions follow the order given.
  expect(new Set(results.map((r) => r.position.commit)).size).toBe(1);
  expect(comparePositions(results[0]!.position, results[1]!.position)).toBeLessThan(0);
  expect(comparePositions(results[1]!.position, results[2]!.position)).toBeLessThan(0);
  const all = await readAllOf(5);
  expect(all.slice(2).map((e) => [e.streamName, e.streamRevision, e.id])).toEqual(
    appends.flatMap((a, i) => a.events.map((e, j) => [a.streamName, (i === 0 ? 2n : 0n) + BigInt(j), e.id])),
  );
  expect((await store.readStream('brain-3')).map((e) => e.type)).toEqual(['BrainCreated', 'BrainShared']);
  expect(all[all.length - 1]!.position).toEqual(results[2]!.position);
});

test('a wrong revision on any stream appends nothing anywhere and names that stream', async () => {
  await store.appendToStream('taken', [newEvent()]);
  const attempt = appendToStreams([
    { streamName: 'seq', events: [newEvent()], expectedRevision: 'no_stream' },
    { streamName: 'fresh', events: [newEvent()], expectedRevision: 'any' },
    { streamName: 'taken', events: [newEvent()], expectedRevision: 'no_stream' },
  ]);
  await expect(attempt).rejects.toThrow(WrongExpectedRevisionError);
  await expect(attempt).rejects.toMatchObject({ streamName: 'taken', actual: 0n });
  expect(await store.readStream('seq')).toEqual([]);
  expect(await store.readStream('fresh')).toEqual([]);
  expect(await store.readStream('taken')).toHaveLength(1);
  // Exact, stream_exists: checked the same way.
  await expect(
    appendToStreams([
      { streamName: 'taken', events: [newEvent()], expectedRevision: 0n },
      { streamName: 'missing', events: [newEvent()], expectedRevision: 'stream_exists' },
    ]),
  ).rejects.toMatchObject({ streamName: 'missing', actual: 'no_stream' });
  await expect(
    appendToStreams([{ streamName: 'taken', events: [newEvent()], expectedRevision: 5n }]),
  ).rejects.toMatchObject({ streamName: 'taken', actual: 0n });
  expect(await store.readStream('taken')).toHaveLength(1);
  expect(await readAllOf(1)).toHaveLength(1);
});

test('a retry with the same events returns the original results; a partial overlap is refused', async () => {
  const appends: StreamAppend[] = [
    { streamName: 'a', events: [newEvent(), newEvent()], expectedRevision: 'no_stream' },
    { streamName: 'b', events: [newEvent()], expectedRevision: 'no_stream' },
  ];
  const first = await appendToStreams(appends);
  // The expected revisions no longer hold: still the original results, nothing appended twice.
  expect(await appendToStreams(appends)).toEqual(first);
  expect(await readAllOf(3)).toHaveLength(3);
  await expect(
    appendToStreams([appends[0]!, { streamName: 'b', events: [newEvent()], expectedRevision: 'any' }]),
  ).rejects.toThrow(IdempotencyConflictError);
  // The same events under other stream names: not a retry.
  await expect(
    appendToStreams([
      { streamName: 'b', events: appends[0]!.events },
      { streamName: 'a', events: appends[1]!.events },
    ]),
  ).rejects.toThrow(IdempotencyConflictError);
  expect(await readAllOf(3)).toHaveLength(3);
});

test('concurrent appends over the same streams in either order: none deadlocks, every stream keeps its order in the global order', async () => {
  const ROUNDS = 30;
  const appends = Array.from({ length: ROUNDS }, (_, i) =>
    appendToStreams(
      (i % 2 === 0 ? ['x', 'y', 'z'] : ['z', 'y', 'x']).map((streamName) => ({
        streamName,
        events: [newEvent()],
      })),
    ),
  );
  const results = await Promise.all(appends);
  expect(results).toHaveLength(ROUNDS);
  const all = await readAllOf(3 * ROUNDS);
  expect(all).toHaveLength(3 * ROUNDS);
  for (const name of ['x', 'y', 'z']) {
    const revisions = all.filter((e) => e.streamName === name).map((e) => e.streamRevision);
    expect(revisions).toEqual(Array.from({ length: ROUNDS }, (_, i) => BigInt(i)));
  }
  // Concurrent appends at one exact revision: exactly one wins.
  const contested = await Promise.allSettled(
    Array.from({ length: 6 }, (_, i) =>
      appendToStreams([
        { streamName: `other-${i}`, events: [newEvent()], expectedRevision: 'no_stream' },
        { streamName: 'x', events: [newEvent()], expectedRevision: BigInt(ROUNDS - 1) },
      ]),
    ),
  );
  expect(contested.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  for (const r of contested)
    if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(WrongExpectedRevisionError);
  expect(await readAllOf(3 * ROUNDS + 2)).toHaveLength(3 * ROUNDS + 2);
});

test('in a unit of work: visible at its commit, gone with its rollback', async () => {
  await expect(
    store.unitOfWork.run(async () => {
      await appendToStreams([
        { streamName: 'u1', events: [newEvent()] },
        { streamName: 'u2', events: [newEvent()] },
      ]);
      expect(await store.readStream('u1')).toHaveLength(1); // its own appends
      throw new Error('changed its mind');
    }),
  ).rejects.toThrow('changed its mind');
  expect([...(await store.readStream('u1')), ...(await store.readStream('u2'))]).toEqual([]);
  await store.unitOfWork.run(async () => {
    await appendToStreams([
      { streamName: 'u1', events: [newEvent()] },
      { streamName: 'u2', events: [newEvent()] },
    ]);
  });
  expect((await readAllOf(2)).map((e) => e.streamName)).toEqual(['u1', 'u2']);
});

test('malformed appends are refused before the database: no streams, an empty stream, a stream twice', async () => {
  await expect(appendToStreams([])).rejects.toThrow(RangeError);
  await expect(appendToStreams([{ streamName: 'a', events: [] }])).rejects.toThrow(RangeError);
  await expect(
    appendToStreams([
      { streamName: 'a', events: [newEvent()] },
      { streamName: 'a', events: [newEvent()] },
    ]),
  ).rejects.toThrow(/malformed/);
  expect(await store.readStream('a')).toEqual([]);
});

test('the append functions run as their owner (SECURITY DEFINER) on a pinned search_path and generic plans; PUBLIC cannot call them', async () => {
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ name: string; definer: boolean; public: boolean; config: string[] }>(
      `SELECT p.proname AS name, p.prosecdef AS definer,
              has_function_privilege('public', p.oid, 'EXECUTE') AS public,
              p.proconfig AS config
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = $1 AND p.proname IN ('append_events', 'append_to_streams')
        ORDER BY p.proname`,
      [store.names.schema.replaceAll('"', '')],
    );
    const settings = ['plan_cache_mode=force_generic_plan', 'search_path=pg_catalog, pg_temp'];
    expect(rows.map((row) => ({ ...row, config: [...row.config].sort() }))).toEqual([
      { name: 'append_events', definer: true, public: false, config: settings },
      { name: 'append_to_streams', definer: true, public: false, config: settings },
    ]);
  } finally {
    await admin.end();
  }
});
