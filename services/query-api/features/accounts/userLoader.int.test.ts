import pg from 'pg';
import { NotFoundError } from '#shared/errors/httpErrors';
import { createTestDatabase } from '#tests/support/testPostgres';
import { UserLoader } from './userLoader';

let pool: pg.Pool;
const queries: unknown[][] = [];

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase('userloader'), max: 4 });
  await pool.query(`CREATE TABLE users (
    id integer PRIMARY KEY, email text NOT NULL, username text NOT NULL, first_name text NOT NULL,
    last_name text NOT NULL, bio text NOT NULL, location text NOT NULL, avatar_key text,
    is_staff boolean NOT NULL, revision bigint NOT NULL)`);
  await pool.query(
    `INSERT INTO users SELECT i, 'u' || i || '@example.org', 'u' || i, '', '', '', 'Pavia', NULL, false, 0
       FROM generate_series(1, 20) AS i`,
  );
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = ((...args: unknown[]) => {
    queries.push(args);
    return query(...args);
  }) as typeof pool.query;
});
afterAll(() => pool.end());
beforeEach(() => {
  queries.length = 0;
});

test('lookups arriving together share one query, and each gets its own user', async () => {
  const loader = new UserLoader(pool);
  const ids = [1, 2, 3, 1, 5, 8, 13, 2, 20];
  const users = await Promise.all(ids.map((id) => loader.get(id)));
  expect(users.map((u) => u.id)).toEqual(ids);
  expect(users[0]!.username).toBe('u1');
  expect(users[0]!.revision).toBe(0n);
  expect(queries).toHaveLength(1);
});

test('a write committed before a lookup starts is always seen: nothing is cached', async () => {
  const loader = new UserLoader(pool);
  for (let round = 1; round <= 20; round++) {
    await pool.query('UPDATE users SET location = $2, revision = $3 WHERE id = $1', [4, `L${round}`, round]);
    const [a, b] = await Promise.all([loader.get(4), loader.get(4)]);
    expect(a.location).toBe(`L${round}`);
    expect(b.revision).toBe(BigInt(round));
  }
});

test('an unknown user is a 404 for its callers only', async () => {
  const loader = new UserLoader(pool);
  const [missing, found] = await Promise.allSettled([loader.get(999), loader.get(6)]);
  expect(missing.status).toBe('rejected');
  expect((missing as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError);
  expect(found.status === 'fulfilled' && found.value.username).toBe('u6');
});

test('a failed query rejects every caller of its batch, and the next batch runs afresh', async () => {
  const broken = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 1 });
  const failing = new UserLoader(broken);
  const results = await Promise.allSettled([failing.get(1), failing.get(2)]);
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  await broken.end();
  const loader = new UserLoader(pool);
  expect((await loader.get(7)).username).toBe('u7');
});
