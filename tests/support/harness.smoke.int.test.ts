import { Client } from 'pg';
import { createTestDatabase } from './testPostgres';

test('the run has a real PostgreSQL and each file gets its own database', async () => {
  const url = await createTestDatabase();
  const client = new Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ v: string; db: string }>(
    'select version() as v, current_database() as db',
  );
  await client.end();
  expect(rows[0]?.v).toMatch(/PostgreSQL 1[5-9]/);
  expect(url).toContain(rows[0]?.db);
});
