import type pg from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { migrations } from './migrations/migrations';
import type { SqlNames } from './sqlNames';

/**
 * Applies the pending migrations in one transaction. Several processes may start at once: the
 * advisory lock makes them queue, and each one after the first finds nothing left to do.
 */
export async function migrate(pool: pg.Pool, names: SqlNames): Promise<void> {
  await inTransaction(
    pool,
    async (client) => {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${names.schema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${names.migrations} (
           version integer PRIMARY KEY,
           name text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      await applyPending(client, names);
    },
    `event-store-migrations:${names.schema}`,
  );
}

async function applyPending(client: pg.PoolClient, names: SqlNames): Promise<void> {
  const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${names.migrations}`);
  const applied = new Set(rows.map((row) => row.version));
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    await client.query(migration.sql(names));
    await client.query(`INSERT INTO ${names.migrations} (version, name) VALUES ($1, $2)`, [
      migration.version,
      migration.name,
    ]);
  }
}
