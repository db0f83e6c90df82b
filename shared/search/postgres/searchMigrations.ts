import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PoolClient } from 'pg';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';

/**
 * The search tables' functions, as plain SQL files in ./migrations named `NNNN_name.sql`, applied
 * once each in version order. Append a new file to change one; never edit one that has shipped.
 * They live in the read-model schema with their bookkeeping, so `npm run rebuild` (which drops
 * that schema) reinstalls them. The build copies the files beside the compiled code.
 */
const DIRECTORY = path.join(__dirname, 'migrations');
const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;
const APPLIED = `"${READ_MODEL_SCHEMA}"."search_migrations"`;

interface SqlMigration {
  readonly version: number;
  readonly name: string;
  readonly file: string;
}

function sqlMigrations(): SqlMigration[] {
  return readdirSync(DIRECTORY)
    .flatMap((file) => {
      const match = FILE.exec(file);
      return match ? [{ version: Number(match[1]), name: match[2]!, file: path.join(DIRECTORY, file) }] : [];
    })
    .sort((a, b) => a.version - b.version);
}

/** Applies the pending files; the caller holds the projections' schema lock, in its transaction. */
export async function migrateSearchFunctions(client: PoolClient): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS "${READ_MODEL_SCHEMA}"`);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${APPLIED} (
       version integer PRIMARY KEY,
       name text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${APPLIED}`);
  const applied = new Set(rows.map((row) => row.version));
  for (const migration of sqlMigrations()) {
    if (applied.has(migration.version)) continue;
    await client.query(readFileSync(migration.file, 'utf8'));
    await client.query(`INSERT INTO ${APPLIED} (version, name) VALUES ($1, $2)`, [
      migration.version,
      migration.name,
    ]);
  }
}
