import type { Pool } from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { SQLSTATE, sqlState } from '#shared/infra/postgres/sqlState';

/**
 * tus.uploads: one row per resumable upload, shared by every instance. `info` is what the tus data
 * store keeps about it (offset bookkeeping, metadata); `owner_id` is the only user who may see it;
 * `completed_at` is set once its last byte is in and it is being (or has been) recorded;
 * `expired_at` once the cleanup removed the bytes of an upload left unfinished past its expiry (the
 * row stays one more expiry period, so its creator is told 410 Gone rather than 404).
 */
export const TUS_TABLE = 'tus.uploads';

/** Created at start-up by the service's own role; concurrent starts queue behind the advisory lock. */
export async function ensureTusSchema(pool: Pool): Promise<void> {
  await inTransaction(
    pool,
    async (client) => {
      await client.query('CREATE SCHEMA IF NOT EXISTS tus');
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${TUS_TABLE} (
           id           uuid PRIMARY KEY,
           owner_id     integer NOT NULL,
           info         jsonb,
           created_at   timestamptz NOT NULL,
           expires_at   timestamptz NOT NULL,
           completed_at timestamptz)`,
      );
      await client.query(`ALTER TABLE ${TUS_TABLE} ADD COLUMN IF NOT EXISTS expired_at timestamptz`);
      await client.query(`CREATE INDEX IF NOT EXISTS uploads_expires_at ON ${TUS_TABLE} (expires_at)`);
    },
    'tus-schema',
  );
}

export async function insertTusUpload(
  pool: Pool,
  row: { id: string; ownerId: number; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await pool.query(
    `INSERT INTO ${TUS_TABLE} (id, owner_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
    [row.id, row.ownerId, row.createdAt, row.expiresAt],
  );
}

/** The owner of an upload and whether the cleanup removed it as expired; undefined when there is none. */
export async function tusUploadOwner(
  pool: Pool,
  id: string,
): Promise<{ ownerId: number; expired: boolean } | undefined> {
  const { rows } = await pool.query<{ owner_id: number; expired: boolean }>(
    `SELECT owner_id, expired_at IS NOT NULL AS expired FROM ${TUS_TABLE} WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  return row && { ownerId: row.owner_id, expired: row.expired };
}

/** After the cleanup removed an expired upload's bytes: the row stays as a tombstone (410). */
export async function markTusUploadExpired(pool: Pool, id: string): Promise<void> {
  await pool.query(`UPDATE ${TUS_TABLE} SET expired_at = now() WHERE id = $1`, [id]);
}

/** Marks the upload complete; false when another request already did (it records it, not this one). */
export async function claimTusCompletion(pool: Pool, id: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE ${TUS_TABLE} SET completed_at = now() WHERE id = $1 AND completed_at IS NULL`,
    [id],
  );
  return rowCount === 1;
}

/** Undoes claimTusCompletion when recording failed without knowing whether it took: a retry records. */
export async function releaseTusCompletion(pool: Pool, id: string): Promise<void> {
  await pool.query(`UPDATE ${TUS_TABLE} SET completed_at = NULL WHERE id = $1`, [id]);
}

export async function deleteTusUpload(pool: Pool, id: string): Promise<void> {
  await pool.query(`DELETE FROM ${TUS_TABLE} WHERE id = $1`, [id]);
}

/**
 * Ids of every upload with a row (in progress, or complete and not yet purged): the blob sweep keeps
 * their keys. Empty before the table exists.
 */
export async function tusUploadIds(pool: Pool): Promise<Set<string>> {
  try {
    const { rows } = await pool.query<{ id: string }>(`SELECT id::text AS id FROM ${TUS_TABLE}`);
    return new Set(rows.map((row) => row.id));
  } catch (error) {
    const code = sqlState(error);
    if (code === SQLSTATE.undefinedTable || code === SQLSTATE.invalidSchemaName) return new Set();
    throw error;
  }
}
