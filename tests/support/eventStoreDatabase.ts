import pg from 'pg';
import {
  createPostgresEventStore,
  type PostgresEventStore,
} from '#shared/eventStore/postgres/postgresEventStore';
import { type GlobalPosition, comparePositions } from '#shared/eventStore/eventStore';
import { createTestDatabase } from './testPostgres';
import { waitFor } from './waitFor';

export interface EventStoreDatabase {
  readonly url: string;
  readonly store: PostgresEventStore;
  /** A pool on the same database (read models, checkpoints). */
  readonly pool: pg.Pool;
  /**
   * Waits until readAll returns events up to `position`: an event is read once no older write is
   * still open anywhere on the cluster, other test files' included.
   */
  readable(position: GlobalPosition): Promise<void>;
}

/**
 * A fresh test database with a migrated event store and a pool on it, open for the calling test
 * file's tests: registers the beforeAll that opens it and the afterAll that closes it.
 */
export function eventStoreDatabase(name: string): EventStoreDatabase {
  let open: Omit<EventStoreDatabase, 'readable'> | undefined;
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
  const current = (): Omit<EventStoreDatabase, 'readable'> => {
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
    async readable(position) {
      await waitFor('the appended events to be readable', () => current().store.headPosition(), {
        until: (head) => comparePositions(head, position) >= 0,
        timeoutMs: 20_000,
      });
    },
  };
}
