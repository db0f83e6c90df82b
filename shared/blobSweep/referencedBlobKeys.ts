import type { Pool } from 'pg';
import { comparePositions, type GlobalPosition } from '#shared/eventStore/eventStore';
import { uploadPreviewKey } from '#shared/domain/uploads/events';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { SQLSTATE, sqlState } from '#shared/infra/postgres/sqlState';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';

/** The read models that name blobs: uploads (and so their previews), avatars, category images. */
export const REFERENCING_TABLES = ['file_uploads', 'users', 'categories'] as const;

/**
 * Every blob key a record names, read from the read models once every one of them has applied the
 * events up to `head`: undefined while one of them is behind (catching up, or rebuilt from zero by
 * `npm run rebuild`, when it is live but nearly empty) or not installed yet. The check and the
 * reads share one snapshot, so the keys are those of a state at or past `head`.
 *
 * An upload names its bytes and, whatever its processing status, its preview's key: the processor
 * stores a preview before the event that names it, under a key derived from the upload's id.
 */
export async function referencedBlobKeys(pool: Pool, head: GlobalPosition): Promise<Set<string> | undefined> {
  try {
    return await readWhenCaughtUp(pool, head);
  } catch (error) {
    // A command API started before any projector has installed the read models.
    const code = sqlState(error);
    if (code === SQLSTATE.undefinedTable || code === SQLSTATE.invalidSchemaName) return undefined;
    throw error;
  }
}

async function readWhenCaughtUp(pool: Pool, head: GlobalPosition): Promise<Set<string> | undefined> {
  return inTransaction(pool, async (client) => {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows: checkpoints } = await client.query<{ tables: string[]; commit: string; prepare: string }>(
      `SELECT tables, commit_position::text AS commit, prepare_position::text AS prepare
         FROM ${READ_MODEL_SCHEMA}.projection_checkpoints WHERE status = 'live'`,
    );
    const caughtUp = REFERENCING_TABLES.every((table) =>
      checkpoints.some(
        (c) =>
          c.tables.includes(table) &&
          comparePositions({ commit: BigInt(c.commit), prepare: BigInt(c.prepare) }, head) >= 0,
      ),
    );
    if (!caughtUp) return undefined;

    const keys = new Set<string>();
    const uploads = await client.query<{ id: string; blob_key: string; preview_blob_key: string | null }>(
      'SELECT id::text, blob_key, preview_blob_key FROM public.file_uploads',
    );
    for (const upload of uploads.rows) {
      keys.add(upload.blob_key);
      keys.add(uploadPreviewKey(upload.id));
      if (upload.preview_blob_key !== null) keys.add(upload.preview_blob_key);
    }
    const images = await client.query<{ key: string }>(
      `SELECT avatar_key AS key FROM public.users WHERE avatar_key IS NOT NULL
       UNION ALL SELECT image_key FROM public.categories WHERE image_key IS NOT NULL`,
    );
    for (const { key } of images.rows) keys.add(key);
    return keys;
  });
}
