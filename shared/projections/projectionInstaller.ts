import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { withClient } from '#shared/infra/postgres/withClient';
import { dropTableAndCompanions } from '#shared/infra/postgres/companionFunctions';
import type { Projection } from './projection';
import { contextFor, physicalTable, READ_MODEL_SCHEMA } from './projection';
import { insertCheckpoint } from './checkpointStore';

const LOCK_KEY = 'catalogue:projections:schema';

async function pointViews(client: PoolClient, projection: Projection): Promise<void> {
  for (const table of projection.tables) {
    await client.query(`DROP VIEW IF EXISTS public."${table}"`);
    await client.query(`CREATE VIEW public."${table}" AS SELECT * FROM ${physicalTable(projection, table)}`);
  }
}

/** Projection.compatibleViews: the live version's tables read in this version's columns meanwhile. */
async function pointCompatibleViews(
  client: PoolClient,
  projection: Projection,
  liveVersion: number,
): Promise<void> {
  const views = projection.compatibleViews?.(liveVersion, (table) =>
    physicalTable({ version: liveVersion }, table),
  );
  for (const [table, select] of Object.entries(views ?? {})) {
    await client.query(`DROP VIEW IF EXISTS public."${table}"`);
    await client.query(`CREATE VIEW public."${table}" AS ${select}`);
  }
}

/**
 * Creates this version's tables and checkpoint if they are new. The first version goes live at
 * once (empty tables, views created); a later version is 'building' until the runner swaps it in.
 * Reader indexes (Projection.readerIndexes) come with a live version's tables unless
 * `deferReaderIndexes` (a catch-up about to fill them builds them at its end), and never with a
 * building version's (swapIn builds them).
 */
export async function installProjection(
  pool: Pool,
  projection: Projection,
  options: { deferReaderIndexes?: boolean } = {},
): Promise<void> {
  await inTransaction(
    pool,
    async (client) => {
      const { rows } = await client.query<{ version: number; status: string }>(
        `SELECT version, status FROM ${READ_MODEL_SCHEMA}.projection_checkpoints WHERE projection = $1`,
        [projection.name],
      );
      if (rows.some((r) => r.version === projection.version)) return;
      await projection.createTables(contextFor(projection, client));
      const anotherIsLive = rows.some((r) => r.status === 'live');
      await insertCheckpoint(
        client,
        projection.name,
        projection.version,
        anotherIsLive ? 'building' : 'live',
        projection.tables,
      );
      if (!anotherIsLive) await pointViews(client, projection);
      if (!anotherIsLive && !options.deferReaderIndexes) await createReaderIndexes(client, projection);
      const live = rows.find((r) => r.status === 'live');
      if (live) await pointCompatibleViews(client, projection, live.version);
    },
    LOCK_KEY,
  );
}

async function createReaderIndexes(client: PoolClient, projection: Projection): Promise<void> {
  for (const statement of projection.readerIndexes?.(contextFor(projection, client)) ?? [])
    await client.query(statement);
}

/**
 * Builds this version's reader indexes that are missing (none are: a few catalogue look-ups), on
 * this connection and, when the pool has one to spare, on a second one at the same time, each build
 * committed as it ends (one that fails leaves the others; the next start builds what is missing),
 * while this connection holds the schema lock (no other runner builds them or changes the schema
 * meanwhile). The audit log's at 200,000 events of the bench's catalogue, a GiST index half of
 * them: 1.7-2.2 s two at a time, against 2.7-2.8 s one after another.
 *
 * Each build is one backend's, sorting in memory where it can: parallel workers, each sorting in its
 * share of maintenance_work_mem and merged after, spent about 40 % more CPU for no shorter build on
 * a two-core host that also runs the catch-up's other lanes (the audit log's at 200,000 events: 13-15
 * against 9-9.5 µs per event), and at 1,000,000 events the default 64 MB sorted on disk (7.4-8.6
 * against 6.2-6.4 µs per event with 256 MB, which a build takes only as far as it needs).
 */
export async function buildReaderIndexes(pool: Pool, projection: Projection): Promise<void> {
  if (!projection.readerIndexes) return;
  await withClient(pool, async (client) => {
    // A session lock: the builds commit one by one, on this connection and another.
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [LOCK_KEY]);
    try {
      const queue = [...projection.readerIndexes!(contextFor(projection, client))];
      // This connection takes them from the start of the list, the other from its end (the audit
      // log lists its slowest, the GiST index, last).
      const build = async (builder: PoolClient, fromEnd: boolean): Promise<void> => {
        for (let statement = fromEnd ? queue.pop() : queue.shift(); statement;) {
          await buildIndex(builder, statement);
          statement = fromEnd ? queue.pop() : queue.shift();
        }
      };
      // Never waited for: a second connection that comes only once the list is done does nothing
      // (lanes still applying, or waiting for this lock, may hold the pool's others).
      let second: Promise<void> | undefined;
      if (queue.length > 1) withClient(pool, (other) => (second = build(other, true))).catch(() => undefined);
      await build(client, false);
      await second;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [LOCK_KEY]);
    }
  });
}

/** One build in a transaction of its own: one backend, sorting in up to 256 MB (buildReaderIndexes). */
async function buildIndex(client: PoolClient, statement: string): Promise<void> {
  try {
    await client.query(
      `BEGIN; SET LOCAL max_parallel_maintenance_workers = 0; SET LOCAL maintenance_work_mem = '256MB'; ${statement}; COMMIT`,
    );
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Builds this version's reader indexes, atomically points the views at it, then drops every other
 * version's tables.
 */
export async function swapIn(pool: Pool, projection: Projection): Promise<void> {
  await buildReaderIndexes(pool, projection);
  await inTransaction(
    pool,
    async (client) => {
      await pointViews(client, projection);
      const { rows } = await client.query<{ version: number; tables: string[] }>(
        `DELETE FROM ${READ_MODEL_SCHEMA}.projection_checkpoints WHERE projection = $1 AND version <> $2 RETURNING version, tables`,
        [projection.name, projection.version],
      );
      for (const old of rows) {
        for (const table of old.tables)
          await dropTableAndCompanions(client, physicalTable({ version: old.version }, table));
      }
      await client.query(
        `UPDATE ${READ_MODEL_SCHEMA}.projection_checkpoints SET status = 'live' WHERE projection = $1 AND version = $2`,
        [projection.name, projection.version],
      );
    },
    LOCK_KEY,
  );
}

/** `npm run rebuild`: throws every read model away; the runner's next catch-up rebuilds them from the events. */
export async function dropAllReadModels(pool: Pool, projections: readonly Projection[]): Promise<void> {
  await inTransaction(
    pool,
    async (client) => {
      for (const p of projections)
        for (const t of p.tables) await client.query(`DROP VIEW IF EXISTS public."${t}"`);
      await client.query(`DROP SCHEMA IF EXISTS ${READ_MODEL_SCHEMA} CASCADE`);
    },
    LOCK_KEY,
  );
}
