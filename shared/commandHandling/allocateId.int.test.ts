import { createTestDatabase } from '#tests/support/testPostgres';
import {
  createPostgresEventStore,
  type PostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { IdAllocator } from './allocateId';
import type { CommandContext } from './commandContext';

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
