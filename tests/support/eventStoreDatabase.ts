import pg from 'pg';
import {
  createPostgresEventStore,
  type PostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { createTestDatabase } from './testPostgres';

export interface EventStoreDatabase {
  readonly url: string;
  readonly store: PostgresEventStore;
  /** A pool on the same database (read models, checkpoints). */
  readonly pool: pg.Pool;
}

/**
 * A fresh test database with a migrated event store and a pool on it, open for the calling test
 * file's tests: registers the beforeAll that opens it and the afterAll that closes it.
 */
export function eventStoreDatabase(name: string): EventStoreDatabase {
  let open: EventStoreDatabase | undefined;
  beforeAll(async () => {
    const url = await createTestDatabase(name);
    const store = createPostgresEventStore({ connectionString: url });
    await store.migrate();
    open = { url, store, pool: new pg.Pool({ connectionString: url }) };
  });
  afterAll(async () => {
    await open?.store.close();
    await open?.pool.end();
  });
  const current = (): EventStoreDatabase => {
    if (!open) throw new Error(`the ${name} test database is open only while its tests run`);
    return open;
  };
  return {
    get url() {
      return current().url;
    },
    get store() {
      return current().store;
    },
    get pool() {
      return current().pool;
    },
  };
}
