import pg from 'pg';
import type { Client } from '#tests/support/httpClient';
import { client } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';
import { type Taxonomy, brainForm, createTaxonomy, fresh, nifti } from './brainFixtures';

/**
 * The brains list keeps its answers (LIST_CACHE_MB) until something they show changes. Two
 * instances on one database: A's projector applies the events, B hears of them by notification,
 * so B is where an answer kept from before a write could outlive it. Neither processes uploads:
 * processing is a write of its own (a brain's metadata), and the tests here must be the only
 * writers; the last test starts a processor to check that write too.
 */
const ADMIN = { ADMIN_EMAIL: 'lists@example.org', ADMIN_PASSWORD: 'lists-password', ADMIN_USERNAME: 'lists' };
const NO_PROCESSOR = { ...ADMIN, PROCESSOR_ENABLED: 'false' };
let a: TestService;
let b: TestService;
let apiA: Client;
let apiB: Client;
let staff: string;
let taxonomy: Taxonomy;

beforeAll(async () => {
  a = await startTestService(NO_PROCESSOR);
  b = await startTestService(NO_PROCESSOR, a.databaseUrl);
  apiA = client(a.url);
  apiB = client(b.url);
  const login = await apiA.post('/api/auth/login/', {
    json: { email: 'lists@example.org', password: 'lists-password' },
  });
  staff = login.body.token as string;
  taxonomy = await createTaxonomy(apiA, staff);
}, 120_000);
afterAll(async () => {
  await b.close();
  await a.close();
});

const page = (api: Client) =>
  api.get(`/api/brains/?species=${encodeURIComponent(taxonomy.species.scientific_name)}&page=1&page_size=5`);

async function create(api: Client, name: string): Promise<{ id: number; name: string }> {
  const res = await api.post('/api/brains/', {
    token: staff,
    body: brainForm({ name, atlas: taxonomy.atlas.id }, nifti()),
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as { id: number; name: string };
}

test.each([
  ['the same instance', () => [apiA, apiA] as const],
  ['another instance', () => [apiA, apiB] as const],
])(
  'a list read right after a write on %s shows the write (created, renamed, deleted), however often it was read before',
  async (_, clients) => {
    const [writer, reader] = clients();
    for (let round = 0; round < 8; round++) {
      const before = await page(reader);
      expect(before.status).toBe(200);
      expect((await page(reader)).body).toEqual(before.body); // kept, or read again: the same answer

      const made = await create(writer, fresh('cached '));
      const created = await page(reader);
      expect(created.body.count).toBe(before.body.count + 1);
      expect(created.body.results[0].id).toBe(made.id);
      expect(created.headers.get('x-total-count')).toBe(String(before.body.count + 1));

      const renamed = `${made.name} renamed`;
      const patch = await writer.patch(`/api/brains/${made.id}/`, { token: staff, json: { name: renamed } });
      expect(patch.status).toBe(200);
      expect((await page(reader)).body.results[0].name).toBe(renamed);

      if (round % 2 === 0) {
        expect((await writer.delete(`/api/brains/${made.id}/`, { token: staff })).status).toBe(204);
        const deleted = await page(reader);
        expect(deleted.body.count).toBe(before.body.count);
        expect(deleted.body.results.map((r: { id: number }) => r.id)).not.toContain(made.id);
      }
    }
  },
  120_000,
);

test('an answer is kept per URL and host: each one links to itself', async () => {
  const species = encodeURIComponent(taxonomy.species.scientific_name);
  const inLink = species.replaceAll('%20', '+'); // links are written as URLSearchParams writes them
  await create(apiA, fresh('linked '));
  await create(apiA, fresh('linked '));
  const one = await apiA.get(`/api/brains/?species=${species}&page=1&page_size=1`);
  const other = await apiA.get(`/api/brains/?page_size=1&species=${species}&page=1`);
  expect(one.body.next).toBe(`${a.url}/api/brains/?species=${inLink}&page=2&page_size=1`);
  expect(other.body.next).toBe(`${a.url}/api/brains/?page_size=1&species=${inLink}&page=2`);
  const elsewhere = await apiB.get(`/api/brains/?species=${species}&page=1&page_size=1`);
  expect(elsewhere.body.next).toBe(`${b.url}/api/brains/?species=${inLink}&page=2&page_size=1`);
});

test('a failed request is not kept: a page past the end is 404 until brains fill it', async () => {
  const fresher = await createTaxonomy(apiA, staff);
  const url = `/api/brains/?atlas=${fresher.atlas.id}&page=2&page_size=1`;
  expect((await apiB.get(url)).status).toBe(404);
  for (let i = 0; i < 2; i++)
    await apiA.post('/api/brains/', {
      token: staff,
      body: brainForm({ name: fresh('filler '), atlas: fresher.atlas.id }, nifti()),
    });
  expect((await apiB.get(url)).status).toBe(200);
});

test('an instance that missed the notifications (its listener cut) still answers with the write', async () => {
  const admin = new pg.Client({ connectionString: a.databaseUrl });
  await admin.connect();
  try {
    for (let round = 0; round < 5; round++) {
      const before = await page(apiB);
      // Every LISTEN connection of the database is cut: B hears nothing until its listener is back.
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
      );
      const made = await create(apiA, fresh('unheard '));
      const after = await page(apiB);
      expect(after.body.count).toBe(before.body.count + 1);
      expect(after.body.results[0].id).toBe(made.id);
    }
  } finally {
    await admin.end();
  }
});

test('the pages of one search are slices of one ranking, and a write shows in it at once on another instance', async () => {
  const word = fresh('ranked');
  for (let i = 0; i < 5; i++) await create(apiA, `${word} ${i}`);
  const search = (api: Client, query: string) =>
    api.get(`/api/brains/?search=${encodeURIComponent(word)}&${query}`);
  const whole = await search(apiB, 'page=1&page_size=100');
  expect(whole.body.count).toBe(5);
  const pages = await Promise.all([1, 2, 3].map((p) => search(apiB, `page=${p}&page_size=2`)));
  expect(pages.flatMap((p) => p.body.results.map((r: { id: number }) => r.id))).toEqual(
    whole.body.results.map((r: { id: number }) => r.id),
  );
  expect(pages.map((p) => p.body.count)).toEqual([5, 5, 5]);

  const exact = await create(apiA, word); // an exact name ranks first
  const after = await search(apiB, 'page=2&page_size=2');
  expect(after.body.count).toBe(6);
  expect((await search(apiB, 'page=1&page_size=2')).body.results[0].id).toBe(exact.id);
  expect((await apiA.delete(`/api/brains/${exact.id}/`, { token: staff })).status).toBe(204);
  expect((await search(apiB, 'page=3&page_size=2')).body.count).toBe(5);
});

test('a file processed after an answer was kept shows its metadata in that answer', async () => {
  const place = await createTaxonomy(apiA, staff);
  const url = `/api/brains/?atlas=${place.atlas.id}&page=1&page_size=5`;
  const res = await apiA.post('/api/brains/', {
    token: staff,
    body: brainForm({ name: fresh('processed '), atlas: place.atlas.id }, nifti()),
  });
  expect(res.status).toBe(201);
  const kept = await apiB.get(url);
  expect(kept.body.results[0].metadata).toEqual({});
  expect((await apiB.get(url)).body).toEqual(kept.body);
  // A processor of its own on A's database and files.
  const processor = await startTestService({ ...ADMIN, DATA_DIR: a.dataDir }, a.databaseUrl);
  try {
    const listed = await waitFor('B to list the processed metadata', () => apiB.get(url), {
      timeoutMs: 30_000,
      intervalMs: 100,
      until: (res) => Object.keys(res.body.results[0].metadata).length > 0,
    });
    expect(listed.body.results[0].metadata).toMatchObject({ format: 'nifti', nifti_version: 1 });
  } finally {
    await processor.close();
  }
}, 60_000);
