import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { startEmbeddedPostgres } from '#shared/infra/postgres/embeddedPostgres';
import { ProjectionRunner } from '#shared/projections/projectionRunner';
import { ledgerProjection } from '#services/projector/projections/ledgerProjection';
import { freePort } from '#tests/support/freePort';

/** Events per INSERT (one transaction each, so the global order spans many transaction ids). */
const PER_TRANSACTION = 5000;

/**
 * Appends `count` brain-shaped events straight into the events table (no append function, no
 * reservations): `BrainCreated` at revision 0 of `brain-<n>`, with the size of payload and metadata
 * the catalogue writes. For timing verify-ledger and the ledger over many events.
 */
export async function seedEvents(pool: pg.Pool, count: number, schema = 'event_store'): Promise<void> {
  for (let from = 1; from <= count; from += PER_TRANSACTION) {
    const to = Math.min(count, from + PER_TRANSACTION - 1);
    await pool.query(
      `INSERT INTO ${schema}.events (stream_name, stream_revision, event_id, event_type, data, metadata)
       SELECT 'brain-' || n, 0, gen_random_uuid(), 'BrainCreated',
              jsonb_build_object(
                'brainId', n, 'readableId', 'BR-' || lpad(n::text, 8, '0'), 'name', 'Brain specimen ' || n,
                'description', 'A seeded specimen for timing the ledger, number ' || n,
                'speciesId', 1 + n % 40, 'atlasId', 1 + n % 7, 'categoryIds', jsonb_build_array(1 + n % 12),
                'uploaderId', 1 + n % 500, 'fileUploadIds', jsonb_build_array(gen_random_uuid()),
                'visibility', 'public', 'createdAt', now()),
              jsonb_build_object(
                'actor', (1 + n % 500)::text, 'requestId', gen_random_uuid()::text,
                'correlationId', gen_random_uuid()::text, 'causationId', null, 'schemaVersion', 1)
         FROM generate_series($1::bigint, $2::bigint) AS n`,
      [from, to],
    );
  }
}

export interface SeededLedgerDatabase {
  /** The PostgreSQL data directory (its processes' CPU can be read from /proc). */
  readonly dataDir: string;
  readonly url: string;
  readonly store: ReturnType<typeof createPostgresEventStore>;
  readonly pool: pg.Pool;
}

/**
 * For the ledger's speed scripts: a throw-away embedded PostgreSQL with `events` seeded events
 * (seedEvents), handed to `work`, then stopped and removed whatever happens.
 */
export async function withSeededLedgerDatabase(
  events: number,
  work: (db: SeededLedgerDatabase) => Promise<void>,
): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'ledger-speed-'));
  chmodSync(root, 0o755); // the server may run as another user
  const dataDir = path.join(root, 'pg');
  const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), persistent: false });
  try {
    await server.createDatabase('ledger');
    const url = server.connectionString('ledger');
    const store = createPostgresEventStore({ connectionString: url });
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    // An idle client's socket closed as the server stops (after end() has returned) is no failure.
    pool.on('error', () => undefined);
    try {
      await store.migrate();
      const started = performance.now();
      await seedEvents(pool, events);
      console.log(`seeded ${events} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      await work({ dataDir, url, store, pool });
    } finally {
      await pool.end();
      await store.close();
    }
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Chains the events with the ledger projection alone, in batches of 2000, as the bench's catch-up does; the events chained. */
export function catchUpLedger({
  store,
  pool,
}: Pick<SeededLedgerDatabase, 'store' | 'pool'>): Promise<number> {
  return new ProjectionRunner({ store, pool, projections: [ledgerProjection], batchSize: 2000 }).catchUp();
}
