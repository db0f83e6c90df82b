import type { Pool } from 'pg';
import type { Locker } from '@tus/server';
import type { BlobStore } from '#shared/blobStore/blobStore';
import type { TusConfig } from '#shared/config/config';
import { withClient } from '#shared/infra/postgres/withClient';
import type { Logger } from '#shared/logging/logger';
import type { BlobKeyedDataStore } from './tusDataStore';
import { tusOwnedKeys, tusBlobKey } from './tusKeys';
import { TUS_TABLE, deleteTusUpload, markTusUploadExpired } from './tusUploadsTable';

interface CleanupDeps {
  readonly dataStore: Pick<BlobKeyedDataStore, 'removeBytes'>;
  readonly locker: Locker;
  readonly pool: Pool;
  readonly blobs: BlobStore;
  readonly config: TusConfig;
}

const BATCH = 500;

/**
 * tus expiration, run by one instance at a time (an advisory lock): every unfinished upload past
 * its Upload-Expires loses its bytes (file, or S3 multipart upload and sidecars) and its row
 * becomes a tombstone (410 to its creator), forgotten one expiry period later; a finished upload's
 * row is forgotten one expiry period after completion (its bytes are the recorded upload's blob and
 * stay). An upload a request is working on is left for the next run.
 */
export async function removeExpiredTusUploads(deps: CleanupDeps, logger: Pick<Logger, 'debug' | 'warn'>) {
  return withClient(deps.pool, async (client) => {
    const { rows } = await client.query<{ locked: boolean }>(
      "SELECT pg_try_advisory_lock(hashtextextended('tus-cleanup', 0)) AS locked",
    );
    if (!rows[0]?.locked) return 0;
    try {
      return await removeAll(deps, logger);
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtextextended('tus-cleanup', 0))");
    }
  });
}

async function removeBytes(deps: CleanupDeps, id: string): Promise<void> {
  await deps.dataStore.removeBytes(id).catch(() => undefined); // already gone: the keys below
  for (const key of tusOwnedKeys(id)) await deps.blobs.delete(key);
}

async function removeAll(deps: CleanupDeps, logger: Pick<Logger, 'debug' | 'warn'>): Promise<number> {
  const now = new Date();
  const { rows: expired } = await deps.pool.query<{ id: string }>(
    `SELECT id::text AS id FROM ${TUS_TABLE}
      WHERE completed_at IS NULL AND expired_at IS NULL AND expires_at < $1
      ORDER BY expires_at LIMIT ${BATCH}`,
    [now],
  );
  let removed = 0;
  for (const { id } of expired) {
    const lock = deps.locker.newLock(id);
    try {
      await lock.lock(new AbortController().signal, () => undefined);
    } catch {
      continue; // a request holds it: next run
    }
    try {
      // Gone (410) from now on, before its bytes start to disappear.
      await markTusUploadExpired(deps.pool, id);
      await removeBytes(deps, id);
      removed++;
      logger.debug('expired tus upload removed', { upload_id: id });
    } catch (error) {
      logger.warn('could not remove an expired tus upload', { upload_id: id, error: String(error) });
    } finally {
      await lock.unlock();
    }
  }
  const forgetBefore = new Date(now.getTime() - deps.config.expiryMs);
  const { rows: tombstones } = await deps.pool.query<{ id: string }>(
    `SELECT id::text AS id FROM ${TUS_TABLE} WHERE expired_at < $1 LIMIT ${BATCH}`,
    [forgetBefore],
  );
  for (const { id } of tombstones) {
    try {
      await removeBytes(deps, id); // again: a removal that failed earlier is retried before the row goes
      await deleteTusUpload(deps.pool, id);
    } catch (error) {
      logger.warn('could not forget an expired tus upload', { upload_id: id, error: String(error) });
    }
  }
  const { rows: finished } = await deps.pool.query<{ id: string }>(
    `DELETE FROM ${TUS_TABLE} WHERE completed_at IS NOT NULL AND completed_at < $1 RETURNING id::text AS id`,
    [forgetBefore],
  );
  // The S3 store's sidecars of a finished upload; its bytes are the recorded upload's blob.
  for (const { id } of finished) {
    for (const key of tusOwnedKeys(id).filter((k) => k !== tusBlobKey(id)))
      await deps.blobs.delete(key).catch(() => undefined);
  }
  return removed;
}
