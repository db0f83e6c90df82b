import http from 'node:http';
import pg from 'pg';
import { testServiceForFile } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';

/**
 * A search whose client hangs up (a search typed as you type, superseded by the next key) stops in
 * PostgreSQL instead of running to an answer nobody reads. The search is made to wait, for as long
 * as the test likes, on a lock the test holds on the search index, so the statement is certainly
 * running when the client goes.
 */
// The PostgreSQL statement's cancellation: with the in-memory index off, as while it loads (the
// index's own statements are a shared catch-up and a small analysis of the text, cancelled the same way).
const { api, service } = testServiceForFile({ SEARCH_IN_MEMORY: 'false' });
let db: pg.Pool;

beforeAll(async () => {
  db = new pg.Pool({ connectionString: service().databaseUrl, max: 2 });
  // The search projection makes its views when it first goes live.
  await waitFor('the search index', async () => {
    const { rows } = await db.query<{ view: string | null }>(
      `SELECT to_regclass('public.brain_search') AS view`,
    );
    return rows[0]!.view;
  });
});
afterAll(() => db.end());

/** Text searches of the service waiting on a lock (pg_stat_activity keeps a statement's first 1 KiB). */
async function waitingSearches(): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'
        AND query LIKE '%WITH RECURSIVE q AS%'`,
  );
  return Number(rows[0]!.n);
}

/** Sends GET `path` on a connection of its own; the returned function hangs up. */
function openRequest(path: string): () => void {
  const request = http.get(`${service().url}${path}`);
  request.on('error', () => undefined);
  return () => request.destroy();
}

test('a search whose client hangs up is cancelled in PostgreSQL; the service answers the next one', async () => {
  const holder = await db.connect();
  try {
    await holder.query('BEGIN');
    // A lock on the view locks the tables behind it (the live generation).
    await holder.query('LOCK TABLE public.brain_search IN ACCESS EXCLUSIVE MODE');
    const hangUp = openRequest('/api/brains/?page=1&search=abandoned-search-text&facets=species');
    await waitFor('the search waiting on the lock', async () => (await waitingSearches()) === 1);
    // It keeps waiting while its client is there…
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await waitingSearches()).toBe(1);
    // …and stops once the client is gone, though the lock is still held.
    hangUp();
    await waitFor('the search statement cancelled', async () => (await waitingSearches()) === 0);
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  const res = await api.get('/api/brains/?page=1&search=abandoned-search-text&facets=species');
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ count: 0, results: [] });
});

test('a search two clients wait for goes on when one of them hangs up', async () => {
  const holder = await db.connect();
  let answer: Promise<{ status: number; body: unknown }> | undefined;
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE public.brain_search IN ACCESS EXCLUSIVE MODE');
    const path = '/api/brains/?page=1&search=shared-search-text';
    const hangUp = openRequest(path);
    await waitFor('the search waiting on the lock', async () => (await waitingSearches()) === 1);
    answer = api.get(path);
    // The second asker joins the same statement (one load per kept answer), which must not stop.
    await new Promise((resolve) => setTimeout(resolve, 300));
    hangUp();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await waitingSearches()).toBe(1);
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  const res = await answer;
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ count: 0, results: [] });
});
