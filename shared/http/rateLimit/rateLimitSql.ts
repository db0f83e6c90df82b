import type { Pool } from 'pg';
import type { HitEntry } from './hitEntry';

/** SQL of the PostgreSQL rate-limit store: one row per bucket, key and fixed window. */
export const RATE_LIMIT_TABLE = 'http_rate_limit_hits';

/**
 * Idempotent, and safe when several instances start at once: a multi-statement simple query runs
 * as one transaction, and the advisory lock serialises concurrent CREATE ... IF NOT EXISTS.
 */
export const MIGRATE_SQL = `
SELECT pg_advisory_xact_lock(hashtext('${RATE_LIMIT_TABLE}'));
CREATE TABLE IF NOT EXISTS ${RATE_LIMIT_TABLE} (
  bucket       text        NOT NULL,
  key          text        NOT NULL,
  window_start bigint      NOT NULL,
  expires_at   timestamptz NOT NULL,
  hits         integer     NOT NULL,
  PRIMARY KEY (bucket, key, window_start)
);
CREATE INDEX IF NOT EXISTS ${RATE_LIMIT_TABLE}_expires_at ON ${RATE_LIMIT_TABLE} (expires_at);
`;

/**
 * Adds a batch of local counts and returns the global totals. Rows are locked in key order so
 * two instances flushing overlapping batches cannot deadlock.
 */
export const ADD_HITS_SQL = {
  name: 'http_rate_limit_add_hits',
  text: `
INSERT INTO ${RATE_LIMIT_TABLE} AS h (bucket, key, window_start, expires_at, hits)
SELECT b, k, w, to_timestamp(e / 1000.0), n
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::integer[]) AS t(b, k, w, e, n)
ORDER BY b, k, w
ON CONFLICT (bucket, key, window_start) DO UPDATE SET hits = h.hits + EXCLUDED.hits
RETURNING bucket, key, window_start::text AS window_start, hits`,
};

export const PURGE_SQL = `DELETE FROM ${RATE_LIMIT_TABLE} WHERE expires_at < now()`;

export const RESET_KEY_SQL = `DELETE FROM ${RATE_LIMIT_TABLE} WHERE bucket = $1 AND key = $2`;

export interface AddHitsRow {
  readonly bucket: string;
  readonly key: string;
  readonly window_start: string;
  readonly hits: number;
}

/** One round trip: adds `counts[i]` to each entry's row and returns the new global totals. */
export async function addHits(
  pool: Pick<Pool, 'query'>,
  entries: readonly HitEntry[],
  counts: readonly number[],
): Promise<AddHitsRow[]> {
  const { rows } = await pool.query<AddHitsRow>({
    ...ADD_HITS_SQL,
    values: [
      entries.map((e) => e.bucket),
      entries.map((e) => e.key),
      entries.map((e) => e.windowStart),
      entries.map((e) => e.windowEnd),
      counts,
    ],
  });
  return rows;
}
