import type pg from 'pg';

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
