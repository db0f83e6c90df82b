import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import {
  createPostgresEventStore,
  type PostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { IdAllocator } from './allocateId';
import type { CommandContext } from './commandContext';
import { toNewEvents } from './handleCommand';
import { WrongExpectedRevisionError } from '#shared/eventStore/eventStore';

const ctx: CommandContext = { actor: 'system', requestId: null, correlationId: 'c', causationId: null };
let stores: PostgresEventStore[] = [];
let connectionString: string;
const createTestClient = async (): Promise<pg.Client> => {
  const client = new pg.Client({ connectionString });
  await client.connect();
  return client;
};

beforeAll(async () => {
  connectionString = await createTestDatabase('allocate_id');
  // Three "processes": separate pools and allocators, one database.
  stores = [0, 1, 2].map(() => createPostgresEventStore({ connectionString, poolSize: 5 }));
  for (const store of stores) await store.migrate();
});
afterAll(async () => {
  for (const store of stores) await store.close();
});

test('concurrent allocation by several processes gives distinct ids without gaps', async () => {
  const allocators = stores.map((store) => new IdAllocator(store));
  const PER_PROCESS = 40;
  const ids = await Promise.all(
    allocators.flatMap((ids) => Array.from({ length: PER_PROCESS }, () => ids.next('brain', ctx))),
  );
  const total = allocators.length * PER_PROCESS;
  expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  // The sequence stream holds exactly one event per id, id n at revision n-1.
  const events = await stores[0]!.readStream('sequence-brain');
  expect(events.map((e) => [e.streamRevision, (e.data as { id: number }).id])).toEqual(
    Array.from({ length: total }, (_, i) => [BigInt(i), i + 1]),
  );
});

test('nextWith: the id and the new streams in one append; racing processes get distinct ids, each with its streams', async () => {
  const allocators = stores.map((store) => new IdAllocator(store));
  const PER_PROCESS = 15;
  const made = await Promise.all(
    allocators.flatMap((ids, p) =>
      Array.from({ length: PER_PROCESS }, (_, i) =>
        ids.nextWith('thing', ctx, (id) => [
          {
            streamName: `thing-${id}`,
            events: toNewEvents([{ type: 'ThingMade', data: { id, by: `${p}.${i}` } }], ctx),
            expectedRevision: 'no_stream',
          },
        ]),
      ),
    ),
  );
  const total = allocators.length * PER_PROCESS;
  expect(made.map((m) => m.id).sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  for (const { id, results } of made) {
    const events = await stores[0]!.readStream(`thing-${id}`);
    // Exactly one ThingMade per id (a lost guess appended nothing), in the same transaction as its IdAllocated.
    expect(events.map((e) => (e.data as { id: number }).id)).toEqual([id]);
    expect(results[0]?.position).toEqual(events[0]?.position);
    const allocated = (
      await stores[0]!.readStream('sequence-thing', { fromRevision: BigInt(id - 1), maxCount: 1 })
    )[0];
    expect(allocated?.position.commit).toBe(events[0]?.position.commit);
  }
});

test('nextWith: a refused stream of the caller is thrown as it is, and the id is not taken', async () => {
  const ids = new IdAllocator(stores[0]!);
  const { id } = await ids.nextWith('widget', ctx, (n) => [
    { streamName: `widget-${n}`, events: toNewEvents([{ type: 'WidgetMade', data: {} }], ctx) },
  ]);
  const refused = ids.nextWith('widget', ctx, () => [
    {
      streamName: `widget-${id}`,
      events: toNewEvents([{ type: 'WidgetMade', data: {} }], ctx),
      expectedRevision: 'no_stream',
    },
  ]);
  await expect(refused).rejects.toBeInstanceOf(WrongExpectedRevisionError);
  // The next id is still the one after the last taken.
  expect((await ids.nextWith('widget', ctx, () => [])).id).toBe(id + 1);
  expect(await stores[0]!.readStream('sequence-widget')).toHaveLength(2);
});

test('nextWith inside units of work at once: each guesses the id after the one begun before it, so none loses', async () => {
  const store = stores[0]!;
  let appends = 0;
  // The store as the allocator sees it, counting its multi-stream appends.
  const counted = Object.create(store) as PostgresEventStore;
  Object.defineProperty(counted, 'appendToStreams', {
    value: (...args: Parameters<NonNullable<PostgresEventStore['appendToStreams']>>) => {
      appends += 1;
      return store.appendToStreams(...args);
    },
  });
  const ids = new IdAllocator(counted);
  const make = () =>
    store.unitOfWork.run(() =>
      ids.nextWith('unit-thing', ctx, (id) => [
        {
          streamName: `unit-thing-${id}`,
          events: toNewEvents([{ type: 'ThingMade', data: { id } }], ctx),
          expectedRevision: 'no_stream',
        },
      ]),
    );
  await make(); // the allocator knows where the sequence stands
  const waiting = async (): Promise<number> =>
    Number(
      (
        await holder.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
        )
      ).rows[0]!.n,
    );
  // The sequence's lock held elsewhere: the units queue for it in the order they begin, and all
  // four have begun (and guessed) before the first append gets through.
  const holder = await createTestClient();
  try {
    await holder.query('BEGIN');
    await holder.query(
      `SELECT pg_advisory_xact_lock(hashtextextended('event_store:sequence-unit-thing', 0))`,
    );
    appends = 0;
    const made: Promise<{ id: number }>[] = [];
    for (let unit = 1; unit <= 4; unit++) {
      made.push(make());
      for (const until = Date.now() + 10_000; (await waiting()) < unit && Date.now() < until;)
        await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await holder.query('COMMIT');
    expect((await Promise.all(made)).map((m) => m.id)).toEqual([2, 3, 4, 5]);
    // One append each (guessed from the last id allocated, all but the first would lose and try
    // again: 7 appends).
    expect(appends).toBe(4);
  } finally {
    await holder.end();
  }
  // A guess proven wrong (another process allocated meanwhile) still costs one more try.
  await new IdAllocator(stores[1]!).nextWith('unit-thing', ctx, () => []);
  appends = 0;
  expect((await make()).id).toBe(7);
  expect(appends).toBe(2);
});
