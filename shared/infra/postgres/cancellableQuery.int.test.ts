import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import { waitFor } from '#tests/support/waitFor';
import { cancellableQuery } from './cancellableQuery';

let pool: pg.Pool;
let observer: pg.Pool;

beforeAll(async () => {
  const url = await createTestDatabase('cancellable_query');
  // One connection for the statements and one for the cancels: a cancel may not land on the next user.
  pool = new pg.Pool({ connectionString: url, max: 2 });
  observer = new pg.Pool({ connectionString: url, max: 1 });
});
afterAll(async () => {
  await pool.end();
  await observer.end();
});

/** The statements running now that contain `marker`, other than the observer's own. */
async function running(marker: string): Promise<number> {
  const { rows } = await observer.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity
      WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`,
    [marker],
  );
  return Number(rows[0]!.n);
}

class Gone extends Error {}

test('an abort stops the statement in PostgreSQL and rejects with the reason', async () => {
  const controller = new AbortController();
  const started = performance.now();
  const query = cancellableQuery(
    pool,
    { text: "SELECT pg_sleep(30), 'abort-me' AS marker" },
    controller.signal,
  );
  await waitFor('the statement running', async () => (await running('abort-me')) === 1);
  controller.abort(new Gone('client hung up'));
  await expect(query).rejects.toBeInstanceOf(Gone);
  expect(performance.now() - started).toBeLessThan(20_000);
  await waitFor('the statement stopped', async () => (await running('abort-me')) === 0);
  // The connection is given back healthy.
  const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
  expect(rows[0]!.one).toBe(1);
});

test('a pool whose every connection runs an abandoned statement still cancels them all', async () => {
  const controllers = [new AbortController(), new AbortController()];
  const queries = controllers.map((controller, i) =>
    cancellableQuery(pool, { text: `SELECT pg_sleep(30), 'full-pool-${i}'` }, controller.signal),
  );
  await waitFor('both statements running', async () => (await running('full-pool-')) === 2);
  for (const controller of controllers) controller.abort(new Gone('hung up'));
  // Both awaited at once: the second may reject while the first is awaited (an unhandled rejection).
  await Promise.all(queries.map((query) => expect(query).rejects.toBeInstanceOf(Gone)));
  await waitFor('both statements stopped', async () => (await running('full-pool-')) === 0);
});

test('an abort racing the answer never cancels the next statement on that connection', async () => {
  let stopped = 0;
  for (let i = 0; i < 30; i++) {
    const controller = new AbortController();
    const query = cancellableQuery(
      pool,
      { text: 'SELECT pg_sleep(0.03), $1::int AS n', values: [i] },
      controller.signal,
    );
    // Around the statement's end: sometimes during it, sometimes just after its answer.
    await new Promise((resolve) => setTimeout(resolve, 15 + (i % 6) * 6));
    controller.abort(new Gone('raced'));
    const outcome = await query.then(
      () => 'answered',
      (error: unknown) => (error instanceof Gone ? 'stopped' : error),
    );
    expect(['answered', 'stopped']).toContain(outcome);
    if (outcome === 'stopped') stopped++;
    // Whoever takes the connection next runs a statement long enough for a stray cancel to hit it.
    await expect(pool.query("SELECT pg_sleep(0.05), 'next-user'")).resolves.toBeDefined();
  }
  expect(stopped).toBeGreaterThan(0);
});

test('a signal aborted before the statement sends nothing; a failing statement fails with its own error', async () => {
  const controller = new AbortController();
  controller.abort(new Gone('already gone'));
  await expect(cancellableQuery(pool, { text: 'SELECT 1' }, controller.signal)).rejects.toBeInstanceOf(Gone);
  await expect(
    cancellableQuery(pool, { text: 'SELECT * FROM no_such_table' }, new AbortController().signal),
  ).rejects.toMatchObject({ code: '42P01' });
  // Without a signal: the pool's own query.
  await expect(cancellableQuery(pool, { text: 'SELECT 2 AS two' }, undefined)).resolves.toMatchObject({
    rows: [{ two: 2 }],
  });
});
