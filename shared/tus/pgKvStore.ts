import type { Pool } from 'pg';
import type { KvStore } from '@tus/server';
import { TUS_TABLE } from './tusUploadsTable';
import { tusUploadIdOfKey } from './tusKeys';

/**
 * The tus data stores' KvStore (the file store's "configstore", the S3 store's metadata cache) as
 * the `info` column of tus.uploads: every instance sees the same state, and it survives restarts.
 * Keys are the uploads' blob keys (shared/tus/tusKeys); the row itself is inserted when the
 * upload is created (with its owner), so `set` only fills it in.
 */
export class PgKvStore<T> implements KvStore<T> {
  constructor(
    private readonly pool: Pool,
    /** Turns the stored JSON back into the value the data store expects (class instances). */
    private readonly revive: (stored: T) => T = (stored) => stored,
  ) {}

  async get(key: string): Promise<T | undefined> {
    const id = tusUploadIdOfKey(key);
    if (!id) return undefined;
    const { rows } = await this.pool.query<{ info: T | null }>(
      `SELECT info FROM ${TUS_TABLE} WHERE id = $1`,
      [id],
    );
    const info = rows[0]?.info;
    return info === null || info === undefined ? undefined : this.revive(info);
  }

  async set(key: string, value: T): Promise<void> {
    const id = tusUploadIdOfKey(key);
    if (!id) throw new RangeError(`not a tus upload key: ${key}`);
    const { rowCount } = await this.pool.query(`UPDATE ${TUS_TABLE} SET info = $2 WHERE id = $1`, [
      id,
      JSON.stringify(value),
    ]);
    if (rowCount !== 1) throw new Error(`tus upload ${id} is gone`);
  }

  async delete(key: string): Promise<void> {
    const id = tusUploadIdOfKey(key);
    if (id) await this.pool.query(`UPDATE ${TUS_TABLE} SET info = NULL WHERE id = $1`, [id]);
  }

  async list(): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id::text AS id FROM ${TUS_TABLE} WHERE info IS NOT NULL`,
    );
    return rows.map((row) => `uploads/tus/${row.id}`);
  }
}
