import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { SQLSTATE, sqlState } from '#shared/infra/postgres/sqlState';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import {
  createGeneration,
  createSearchExtensions,
  createSearchIndexes,
  dropGeneration,
  generationTables,
  pointViews,
  type SearchTableNames,
} from './searchTables';

/**
 * The projections' schema lock (projectionInstaller.ts): the read-model schema and the views in
 * public are created and repointed under it, whoever does it.
 */
const SCHEMA_LOCK = 'catalogue:projections:schema';

export class RebuildSupersededError extends Error {
  constructor(name: string, generation: number) {
    super(`search index ${name}: rebuild generation ${generation} was abandoned or replaced`);
    this.name = 'RebuildSupersededError';
  }
}

/**
 * pg_trgm and btree_gin are trusted extensions: a role with CREATE on the database (the service's)
 * may create them. The first generation goes live at once, with its indexes.
 */
export async function installSearchTables(pool: Pool, names: SearchTableNames): Promise<void> {
  await inTransaction(
    pool,
    async (client) => {
      await createSearchExtensions(client);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${READ_MODEL_SCHEMA}"`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${names.generations} (
           generation integer PRIMARY KEY,
           status text NOT NULL CHECK (status IN ('live', 'building')))`,
      );
      await client.query(`CREATE SEQUENCE IF NOT EXISTS ${names.generationSequence}`);
      const { rowCount } = await client.query(`SELECT 1 FROM ${names.generations} WHERE status = 'live'`);
      if (rowCount) return;
      const generation = await nextGeneration(client, names);
      await createGeneration(client, names, generation);
      await createSearchIndexes(client, generationTables(names, generation));
      await pointViews(client, names, generation);
      await client.query(`INSERT INTO ${names.generations} (generation, status) VALUES ($1, 'live')`, [
        generation,
      ]);
    },
    SCHEMA_LOCK,
  );
}

async function nextGeneration(client: PoolClient, names: SearchTableNames): Promise<number> {
  const { rows } = await client.query<{ next: string }>(
    `SELECT nextval('${names.generationSequence}') AS next`,
  );
  return Number(rows[0]?.next);
}

/**
 * The generation writes go to, share-locked until the caller's transaction ends: a swap (which
 * deletes or updates that row) waits for the write, so no write lands in a table being dropped.
 */
export async function lockGeneration(
  client: PoolClient,
  names: SearchTableNames,
  generation: number | 'live',
): Promise<number> {
  const { rows } = await client.query<{ generation: number }>(
    generation === 'live'
      ? `SELECT generation FROM ${names.generations} WHERE status = 'live' FOR SHARE`
      : `SELECT generation FROM ${names.generations} WHERE status = 'building' AND generation = $1 FOR SHARE`,
    generation === 'live' ? [] : [generation],
  );
  const locked = rows[0]?.generation;
  if (locked !== undefined) return locked;
  if (generation === 'live') throw new Error(`search index ${names.name} is not installed`);
  throw new RebuildSupersededError(names.name, generation);
}

/** A fresh generation beside the live one; an unfinished earlier rebuild is dropped. */
export async function beginGeneration(pool: Pool, names: SearchTableNames): Promise<number> {
  return inTransaction(
    pool,
    async (client) => {
      const { rows: stale } = await client.query<{ generation: number }>(
        `DELETE FROM ${names.generations} WHERE status = 'building' RETURNING generation`,
      );
      for (const { generation } of stale) await dropGeneration(client, names, generation);
      const generation = await nextGeneration(client, names);
      await createGeneration(client, names, generation);
      await client.query(`INSERT INTO ${names.generations} (generation, status) VALUES ($1, 'building')`, [
        generation,
      ]);
      return generation;
    },
    SCHEMA_LOCK,
  );
}

/**
 * Indexes and vacuums the new generation (outside the swap: it may take a while, and the live one
 * keeps answering), then repoints the views and drops the old generation in one short transaction.
 */
export async function swapGeneration(pool: Pool, names: SearchTableNames, generation: number): Promise<void> {
  await inTransaction(pool, async (client) => {
    await lockGeneration(client, names, generation);
    await createSearchIndexes(client, generationTables(names, generation));
  });
  await vacuumGeneration(pool, names, generation);
  await inTransaction(
    pool,
    async (client) => {
      await lockGeneration(client, names, generation);
      await pointViews(client, names, generation);
      const { rows } = await client.query<{ generation: number }>(
        `DELETE FROM ${names.generations} WHERE generation <> $1 RETURNING generation`,
        [generation],
      );
      for (const old of rows) await dropGeneration(client, names, old.generation);
      await client.query(`UPDATE ${names.generations} SET status = 'live' WHERE generation = $1`, [
        generation,
      ]);
    },
    SCHEMA_LOCK,
  );
}

/**
 * Marks the new generation's pages all-visible (VACUUM cannot run in a transaction), so that a
 * page's ids come from index-only scans from the first query on rather than once autovacuum has
 * passed. A generation dropped meanwhile (superseded) is left to the swap to report.
 */
async function vacuumGeneration(pool: Pool, names: SearchTableNames, generation: number): Promise<void> {
  try {
    await pool.query(`VACUUM ${names.documents(generation)}`);
  } catch (error) {
    if (sqlState(error) !== SQLSTATE.undefinedTable) throw error;
  }
}

export async function abandonGeneration(
  pool: Pool,
  names: SearchTableNames,
  generation: number,
): Promise<void> {
  await inTransaction(
    pool,
    async (client) => {
      const { rowCount } = await client.query(
        `DELETE FROM ${names.generations} WHERE generation = $1 AND status = 'building'`,
        [generation],
      );
      if (rowCount) await dropGeneration(client, names, generation);
    },
    SCHEMA_LOCK,
  );
}
