import type { SqlExecutor } from '#shared/eventStore/postgres/sqlExecutor';

/**
 * The idempotency table: one row per (scope, key), found by the key's hash. `completed` rows hold
 * the sealed response; `pending` rows are claims, used only where the event store has no unit of
 * work (see claimingIdempotency). Rows older than the retention are treated as absent and purged.
 */
export interface StoredRecord {
  readonly state: 'pending' | 'completed';
  readonly fingerprint: Buffer | null;
  readonly status: number | null;
  readonly response: Buffer | null;
  /** X-Event-Position of the recorded response ("commit.prepare"), when it had one. */
  readonly position: string | null;
}

export interface CompletedRecord {
  readonly fingerprint: Buffer;
  readonly status: number;
  readonly response: Buffer;
  readonly position: string | null;
}

const TABLE = 'idempotency.requests';
/** The oldest creation time still within `milliseconds` (a parameter or argument holding a bigint). */
const ageLimit = (milliseconds: string): string =>
  `now() - ${milliseconds}::bigint * interval '1 millisecond'`;
const AGE_LIMIT = ageLimit('$2');

/**
 * Created at start-up by the service's own role; several processes may start at once, so the
 * statements queue behind an advisory lock. Run it inside a transaction.
 */
export async function ensureIdempotencySchema(sql: SqlExecutor): Promise<void> {
  const statements = [
    `SELECT pg_advisory_xact_lock(hashtextextended('idempotency-schema', 0))`,
    'CREATE SCHEMA IF NOT EXISTS idempotency',
    `CREATE TABLE IF NOT EXISTS ${TABLE} (
       key_hash       bytea PRIMARY KEY,
       state          text NOT NULL CHECK (state IN ('pending', 'completed')),
       fingerprint    bytea,
       status         smallint,
       response       bytea,
       event_position text,
       created_at     timestamptz NOT NULL DEFAULT now())`,
    `CREATE INDEX IF NOT EXISTS requests_created_at ON ${TABLE} (created_at)`,
    // Waits at most p_timeout for the key's lock; false instead of an error (which would abort the
    // transaction). The exception block also undoes the lock_timeout change.
    `CREATE OR REPLACE FUNCTION idempotency.lock_key(p_lock bigint, p_timeout text) RETURNS boolean
     LANGUAGE plpgsql AS $fn$
     BEGIN
       PERFORM set_config('lock_timeout', p_timeout, true);
       PERFORM pg_advisory_xact_lock(p_lock);
       RETURN true;
     EXCEPTION WHEN lock_not_available THEN
       RETURN false;
     END;
     $fn$`,
    // lock_key, then whether a live record of the key exists, in one round trip: 'busy' (the lock
    // was not had in time), 'recorded' or 'free'. The look-up is a statement of its own after the
    // lock, so its snapshot sees what the lock's previous holder committed.
    `CREATE OR REPLACE FUNCTION idempotency.lock_and_check(
       p_lock bigint, p_timeout text, p_lookup bytea, p_retention_ms bigint) RETURNS text
     LANGUAGE plpgsql AS $fn$
     BEGIN
       IF NOT idempotency.lock_key(p_lock, p_timeout) THEN
         RETURN 'busy';
       END IF;
       IF EXISTS (SELECT FROM ${TABLE}
                   WHERE key_hash = p_lookup
                     AND created_at >= ${ageLimit('p_retention_ms')}) THEN
         RETURN 'recorded';
       END IF;
       RETURN 'free';
     END;
     $fn$`,
  ];
  for (const text of statements) await sql.query({ text });
}

/** The live record for a key: undefined when none, or when it is older than the retention. */
export async function findRecord(
  sql: SqlExecutor,
  lookup: Buffer,
  retentionMs: number,
): Promise<StoredRecord | undefined> {
  const { rows } = await sql.query<StoredRecord>({
    text: `SELECT state, fingerprint, status, response, event_position AS position
             FROM ${TABLE} WHERE key_hash = $1 AND created_at >= ${AGE_LIMIT}`,
    values: [lookup, retentionMs],
  });
  return rows[0];
}

/**
 * Serialises requests with one key across processes until the transaction ends, then answers
 * findRecord's question (is a live record there?), in one statement: 'busy' when the lock was not
 * had within waitMs, 'recorded' when a record exists, else 'free' (the lock is held).
 */
export async function lockAndCheck(
  sql: SqlExecutor,
  lockId: bigint,
  waitMs: number,
  lookup: Buffer,
  retentionMs: number,
): Promise<'busy' | 'recorded' | 'free'> {
  const { rows } = await sql.query<{ state: 'busy' | 'recorded' | 'free' }>({
    name: 'idempotency-lock-and-check',
    text: 'SELECT idempotency.lock_and_check($1, $2, $3, $4) AS state',
    values: [lockId.toString(), `${Math.max(1, Math.round(waitMs))}ms`, lookup, retentionMs],
  });
  return rows[0]!.state;
}

/** False when a live record exists already (an expired one is replaced). */
export async function insertCompleted(
  sql: SqlExecutor,
  lookup: Buffer,
  record: CompletedRecord,
  retentionMs: number,
): Promise<boolean> {
  const { rowCount } = await sql.query({
    text: `INSERT INTO ${TABLE} AS r (key_hash, state, fingerprint, status, response, event_position)
           VALUES ($1, 'completed', $3, $4, $5, $6)
           ON CONFLICT (key_hash) DO UPDATE
              SET state = 'completed', fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status,
                  response = EXCLUDED.response, event_position = EXCLUDED.event_position,
                  created_at = now()
            WHERE r.created_at < ${AGE_LIMIT}`,
    values: [lookup, retentionMs, record.fingerprint, record.status, record.response, record.position],
  });
  return rowCount === 1;
}

/** A pending claim; true when this caller holds it (also when it replaced an expired or stale row). */
export async function claimKey(
  sql: SqlExecutor,
  lookup: Buffer,
  retentionMs: number,
  staleClaimMs: number,
): Promise<boolean> {
  const { rowCount } = await sql.query({
    text: `INSERT INTO ${TABLE} AS r (key_hash, state) VALUES ($1, 'pending')
           ON CONFLICT (key_hash) DO UPDATE
              SET state = 'pending', fingerprint = NULL, status = NULL, response = NULL,
                  event_position = NULL, created_at = now()
            WHERE r.created_at < ${AGE_LIMIT}
               OR (r.state = 'pending' AND r.created_at < ${ageLimit('$3')})`,
    values: [lookup, retentionMs, staleClaimMs],
  });
  return rowCount === 1;
}

export async function completeClaim(
  sql: SqlExecutor,
  lookup: Buffer,
  record: CompletedRecord,
): Promise<void> {
  await sql.query({
    text: `UPDATE ${TABLE}
              SET state = 'completed', fingerprint = $2, status = $3, response = $4, event_position = $5
            WHERE key_hash = $1 AND state = 'pending'`,
    values: [lookup, record.fingerprint, record.status, record.response, record.position],
  });
}

export async function releaseClaim(sql: SqlExecutor, lookup: Buffer): Promise<void> {
  await sql.query({
    text: `DELETE FROM ${TABLE} WHERE key_hash = $1 AND state = 'pending'`,
    values: [lookup],
  });
}

export async function purgeExpired(sql: SqlExecutor, retentionMs: number): Promise<void> {
  await sql.query({
    text: `DELETE FROM ${TABLE} WHERE created_at < ${ageLimit('$1')}`,
    values: [retentionMs],
  });
}
