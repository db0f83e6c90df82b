import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  createPostgresEventStore,
  type PostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { createTestDatabase } from '#tests/support/testPostgres';
import { describeEventStoreContract } from './eventStore.contract';

let connectionString: string;

beforeAll(async () => {
  connectionString = await createTestDatabase('event_store');
});

describeEventStoreContract<PostgresEventStore>('PostgreSQL', {
  // A schema per test: every test starts from an empty store.
  async create() {
    const store = createPostgresEventStore({
      connectionString,
      schema: `es_${randomBytes(5).toString('hex')}`,
    });
    await store.migrate();
    return store;
  },
  // A connection of its own, outside the pool, so held transactions never starve the writers.
  async holdOpenAppend(store, streamName, events) {
    const client = new pg.Client({ connectionString });
    await client.connect();
    await client.query('BEGIN');
    const result = await store.appendWithin(client, streamName, events);
    return {
      async commit() {
        await client.query('COMMIT');
        await client.end();
        return result;
      },
    };
  },
});
