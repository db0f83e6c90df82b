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

beforeAll(async () => {
  const connectionString = await createTestDatabase('allocate_id');
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
