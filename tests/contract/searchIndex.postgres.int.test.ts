import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresSearchIndex } from '#shared/search/postgres/postgresSearchIndex';
import { createTestDatabase } from '#tests/support/testPostgres';
import { describeSearchIndexContract } from './searchIndex.contract';

let pool: pg.Pool;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('search'), max: 4 });
});

afterAll(async () => {
  await pool.end();
});

describeSearchIndexContract('PostgreSQL', {
  // Tables of their own per test: every test starts from an empty index.
  async create() {
    const index = createPostgresSearchIndex({ pool, name: `search_${randomBytes(5).toString('hex')}` });
    await index.install();
    return index;
  },
});
