import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import { companionFunction, dropTableAndCompanions } from './companionFunctions';
import { withClient } from './withClient';

let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('companions') });
  await pool.query('CREATE SCHEMA kept');
});
afterAll(async () => {
  await pool.end();
});

const functions = async (): Promise<string[]> =>
  (
    await pool.query<{ fn: string }>(
      `SELECT p.proname AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'kept' ORDER BY p.proname`,
    )
  ).rows.map((row) => row.fn);

test("a table's companion functions are dropped with it, and no other table's", async () => {
  for (const table of ['docs_v1', 'docs_v10', 'docs'])
    await pool.query(`CREATE TABLE kept.${table} (id integer)`);
  expect(companionFunction('"kept"."docs_v1"', 'counts')).toBe('"kept"."docs_v1__counts"');
  for (const fn of [
    companionFunction('"kept"."docs_v1"', 'counts'),
    companionFunction('"kept"."docs_v1"', 'words'),
    companionFunction('"kept"."docs_v10"', 'counts'),
    companionFunction('"kept"."docs"', 'counts'),
  ])
    await pool.query(`CREATE FUNCTION ${fn}() RETURNS integer LANGUAGE sql AS 'SELECT 1'`);
  // A function of the same name taking arguments is the table's too.
  await pool.query(
    `CREATE FUNCTION kept.docs_v1__counts(integer) RETURNS integer LANGUAGE sql AS 'SELECT $1'`,
  );

  await withClient(pool, (client) => dropTableAndCompanions(client, '"kept"."docs_v1"'));
  expect(await functions()).toEqual(['docs__counts', 'docs_v10__counts']);
  const { rowCount } = await pool.query(
    `SELECT 1 FROM pg_tables WHERE schemaname = 'kept' AND tablename = 'docs_v1'`,
  );
  expect(rowCount).toBe(0);
  // Dropping what is gone already is no error.
  await withClient(pool, (client) => dropTableAndCompanions(client, '"kept"."docs_v1"'));
});

test('names that are not a quoted, lower-case schema-qualified table are refused', () => {
  expect(() => companionFunction('kept.docs', 'counts')).toThrow(/quoted/);
  expect(() => companionFunction('"kept"."Docs"', 'counts')).toThrow(/quoted/);
  expect(() => companionFunction('"kept"."docs"', 'Counts; DROP')).toThrow(/suffix/);
});
