import pg from 'pg';
import { inTransaction } from '#shared/infra/postgres/inTransaction';
import { migrateSearchFunctions } from '#shared/search/postgres/searchMigrations';
import { createTestDatabase } from '#tests/support/testPostgres';

/** The search tables' trigger functions come from ordered .sql files, each applied once. */
let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('searchmigrations'), max: 2 });
});
afterAll(() => pool.end());

test('every file is applied once, in version order, and its function is there', async () => {
  await inTransaction(pool, migrateSearchFunctions);
  await inTransaction(pool, migrateSearchFunctions);
  const { rows: applied } = await pool.query<{ version: number; name: string }>(
    'SELECT version, name FROM rm.search_migrations ORDER BY version',
  );
  expect(applied).toEqual([
    { version: 1, name: 'search_count_deltas' },
    { version: 2, name: 'search_word_deltas' },
    { version: 3, name: 'search_lexeme_deltas' },
    { version: 4, name: 'search_public_count_deltas' },
  ]);
  const { rows: functions } = await pool.query<{ proname: string }>(
    `SELECT proname FROM pg_proc WHERE pronamespace = 'rm'::regnamespace ORDER BY proname`,
  );
  expect(functions.map((f) => f.proname)).toEqual([
    'search_count_deltas',
    'search_lexeme_deltas',
    'search_public_count_deltas',
    'search_word_deltas',
  ]);
});
