import type { Projection } from '#shared/projections/projection';
import { installProjection, swapIn } from '#shared/projections/projectionInstaller';
import { migrateCheckpoints } from '#shared/projections/checkpointStore';
import { brainsProjection } from '#services/projector/projections/brainsProjection';
import { SqlConditions } from '#shared/query/sqlConditions';
import { whereVisible } from '#shared/query/brainVisibility';
import { ANONYMOUS, type Viewer } from '#shared/domain/brains/visibility';
import { eventStoreDatabase } from '#tests/support/eventStoreDatabase';

/**
 * Upgrading brains v2 → v3 (visibility): v3 is built beside the live v2, and meanwhile the query
 * side, already v3's code, reads v2's tables. The compatible views let it: every v2 brain reads as
 * public and shared with nobody (true: visibility did not exist when they were written), and the
 * rule's SQL runs instead of failing on a missing column or table.
 */
const db = eventStoreDatabase('brains_upgrade');

/** brains v2 as it was shipped (the layout only: rows are written directly). */
const brainsV2: Projection = {
  ...brainsProjection,
  version: 2,
  tables: ['brains', 'brain_counts'],
  compatibleViews: undefined,
  async createTables({ client, table }) {
    await client.query(`
      CREATE TABLE ${table('brains')} (
        id integer PRIMARY KEY, readable_id text NOT NULL UNIQUE, uuid uuid NOT NULL, name text NOT NULL,
        description text NOT NULL, atlas_id integer, species_id integer, category_id integer NOT NULL,
        is_reference boolean NOT NULL, extra_link text NOT NULL, website text NOT NULL, color text NOT NULL,
        verified boolean NOT NULL, uploader_id integer NOT NULL, file_upload_id text,
        date_uploaded timestamptz NOT NULL, revision bigint NOT NULL)`);
    await client.query(`
      CREATE TABLE ${table('brain_counts')} (
        atlas_id integer NOT NULL, species_id integer NOT NULL, category_id integer NOT NULL,
        verified boolean NOT NULL, brains bigint NOT NULL, PRIMARY KEY (atlas_id, species_id, category_id, verified))`);
  },
};

const visibleIds = async (viewer: Viewer): Promise<number[]> => {
  const where = whereVisible(new SqlConditions(), viewer);
  const { rows } = await db.pool.query<{ id: number }>(
    `SELECT b.id FROM brains b ${where.whereSql} ORDER BY b.id`,
    where.params(),
  );
  return rows.map((row) => row.id);
};

test('while v3 builds, the live v2 brains read as public through v3 columns; the swap points every view at v3', async () => {
  await migrateCheckpoints(db.pool);
  await installProjection(db.pool, brainsV2);
  for (const id of [1, 2])
    await db.pool.query(
      `INSERT INTO rm.brains_v2 VALUES ($1, $2, gen_random_uuid(), 'B', '', NULL, NULL, 1, false, '', '', '',
         false, 7, NULL, now(), 0)`,
      [id, `b-${id}`],
    );
  await expect(db.pool.query('SELECT visibility FROM brains')).rejects.toThrow(/visibility/);

  await installProjection(db.pool, brainsProjection);
  const { rows } = await db.pool.query('SELECT id, visibility, embargo_until FROM brains ORDER BY id');
  expect(rows).toEqual([
    { id: 1, visibility: 'public', embargo_until: null },
    { id: 2, visibility: 'public', embargo_until: null },
  ]);
  expect(await visibleIds(ANONYMOUS)).toEqual([1, 2]);
  expect(await visibleIds({ userId: 9, isStaff: false })).toEqual([1, 2]);
  expect((await db.pool.query('SELECT count(*)::int AS n FROM brain_collaborators')).rows).toEqual([
    { n: 0 },
  ]);
  expect((await db.pool.query('SELECT sum(brains) AS n FROM brain_counts')).rows).toEqual([{ n: null }]);

  // v3's own tables are untouched by the views; the swap repoints them all and drops v2.
  await db.pool.query(
    `INSERT INTO rm.brains_v3 (id, readable_id, uuid, name, description, category_id, is_reference, extra_link,
       website, color, verified, uploader_id, date_uploaded, visibility, revision)
     VALUES (3, 'b-3', gen_random_uuid(), 'C', '', 1, false, '', '', '', false, 7, now(), 'private', 0)`,
  );
  await db.pool.query(`INSERT INTO rm.brain_collaborators_v3 VALUES (3, 9, 'viewer', now())`);
  await swapIn(db.pool, brainsProjection);
  expect(await visibleIds(ANONYMOUS)).toEqual([]);
  expect(await visibleIds({ userId: 9, isStaff: false })).toEqual([3]);
  const { rows: tables } = await db.pool.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'rm' AND tablename LIKE 'brain%' ORDER BY 1`,
  );
  expect(tables.map((t) => t.name)).toEqual(['brain_collaborators_v3', 'brain_counts_v3', 'brains_v3']);
});
