import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type ApiResponse, newUser } from '#tests/support/httpClient';
import type { CuratedService } from '#tests/support/curatedService';
import { type TwoInstances, resultIds, startTwoInstances } from './twoInstances';
import { freePort } from '#tests/support/freePort';
import { type ServiceProcess, spawnService } from '#tests/support/spawnService';
import { waitFor } from '#tests/support/waitFor';
import { type Taxonomy, brainForm, createTaxonomy, nifti } from '#tests/e2e/brains/brainFixtures';

/*
 * Issue 19, "Must show": an embargo that ends during the test makes the brain appear in lists that
 * were kept before it ended, on two instances, with no write in between (decisions.md: an embargoed
 * brain whose embargo_until has passed reads as public; the issue: "no write, no job needed for
 * correctness"). Two all-in-ones on one database and one blob directory, answer caches on, no
 * processor: nothing writes while the embargo ends. Then a processor starts and records
 * EmbargoLifted in the brain's history.
 */

/** Long enough to create the brains and keep every answer on both instances first, on a busy machine. */
const EMBARGO_AHEAD_MS = 8_000;

let served: TwoInstances;
let a: CuratedService;
let instances: TwoInstances['instances'];
let taxonomy: Taxonomy;
let processor: ServiceProcess | undefined;

beforeAll(async () => {
  served = await startTwoInstances({ bothKeepAnswers: true });
  ({ a, instances } = served);
  taxonomy = await createTaxonomy(a.api, a.staff);
}, 120_000);

afterAll(async () => {
  await processor?.kill();
  await served?.close();
});

const ids = resultIds;

test('an embargo ends: kept lists and searches on two instances show the brain at once, then EmbargoLifted is recorded', async () => {
  const uploader = await newUser(a.api);
  const post = (fields: Record<string, string | number>) =>
    a.api.post('/api/brains/', {
      token: uploader.token,
      body: brainForm({ atlas: taxonomy.atlas.id, ...fields }, nifti()),
    });
  const neighbour = await post({ name: 'Neighbour cortex' });
  expect(neighbour.status).toBe(201);
  const until = new Date(Date.now() + EMBARGO_AHEAD_MS).toISOString();
  const embargoed = await post({ name: 'Embargoed cortex', visibility: 'embargoed', embargo_until: until });
  expect(embargoed.status).toBe(201);
  expect(embargoed.body).toMatchObject({ visibility: 'embargoed' });
  expect(Date.parse(embargoed.body.embargo_until)).toBe(Date.parse(until));
  const lastWrite = embargoed.headers.get('x-event-position');
  expect(lastWrite).toBeTruthy();
  const [P, E] = [neighbour.body.id as number, embargoed.body.id as number];

  const slug = taxonomy.atlas.slug;
  const lists = [
    `/api/brains/?atlas=${slug}`,
    `/api/brains/?atlas=${slug}&page=1&page_size=10`,
    `/api/brains/?search=cortex&page_size=10`,
    `/api/brains/?search=cortex`,
    `/api/brains/?atlas=${slug}&page_size=10&facets=species,atlas,category,verified`,
    `/api/brains/?species=${encodeURIComponent(taxonomy.species.scientific_name)}&visibility=public`,
  ];
  const atlasFacet = (res: ApiResponse) =>
    (res.body.facets.atlas as { id: number; count: number }[]).find((f) => f.id === taxonomy.atlas.id)?.count;

  // Before the end, anonymous: every list read twice on each instance (the second from the kept answer).
  for (let round = 0; round < 2; round++)
    for (const { name, api } of instances)
      for (const path of lists) {
        const res = await api.get(path);
        expect({ name, path, status: res.status }).toEqual({ name, path, status: 200 });
        expect({ name, path, ids: ids(res) }).toEqual({ name, path, ids: [P] });
        expect({ name, path, total: res.headers.get('x-total-count') }).toEqual({ name, path, total: '1' });
        if (path.includes('facets')) expect(atlasFacet(res)).toBe(1);
      }
  for (const { api } of instances) {
    expect((await api.get(`/api/brains/${E}/`)).status).toBe(404);
    expect((await api.get(`/api/brains/${E}/file/`)).status).toBe(404);
    expect(
      (await api.get(`/api/brains/by_readable_id/?readable_id=${embargoed.body.readable_id}`)).status,
    ).toBe(404);
  }

  // Proof that the lists are kept answers: a change made behind the service's back (in the read
  // model, not through an event) is not seen through them, only by a query not asked before.
  const db = new pg.Client({ connectionString: a.service.databaseUrl });
  await db.connect();
  try {
    await db.query(`UPDATE brains SET name = 'Renamed behind the back' WHERE id = $1`, [P]);
    for (const { name, api } of instances) {
      const kept = await api.get(lists[0]!);
      expect({ name, kept: kept.body[0].name }).toEqual({ name, kept: 'Neighbour cortex' });
      const fresh = await api.get(`${lists[0]}&ordering=id`);
      expect({ name, fresh: fresh.body[0].name }).toEqual({ name, fresh: 'Renamed behind the back' });
    }
    if (Date.now() >= Date.parse(until))
      throw new Error(
        'the embargo ended before the answers were kept (a slow machine): raise EMBARGO_AHEAD_MS',
      );

    await sleep(Date.parse(until) - Date.now() + 20);

    // From that instant, with no write in between: public on both instances, kept answers included.
    for (const { name, api } of instances)
      for (const path of lists) {
        const res = await api.get(path);
        expect({ name, path, ids: [...ids(res)].sort() }).toEqual({ name, path, ids: [P, E].sort() });
        expect({ name, path, total: res.headers.get('x-total-count') }).toEqual({ name, path, total: '2' });
        if (path.includes('facets')) expect(atlasFacet(res)).toBe(2);
      }
    for (const { name, api } of instances) {
      // The kept array answer was dropped at the embargo's end: it is read afresh (the rename shows).
      expect({
        name,
        first: (await api.get(lists[0]!)).body.find((x: { id: number }) => x.id === P)?.name,
      }).toEqual({
        name,
        first: 'Renamed behind the back',
      });
      const detail = await api.get(`/api/brains/${E}/`);
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({ id: E, visibility: 'public' });
      expect(Date.parse(detail.body.embargo_until)).toBe(Date.parse(until));
      expect((await api.get(`/api/brains/${E}/file/`)).status).toBe(200);
      expect(
        (await api.get(`/api/brains/by_readable_id/?readable_id=${embargoed.body.readable_id}`)).status,
      ).toBe(200);
    }
  } finally {
    await db.query(`UPDATE brains SET name = 'Neighbour cortex' WHERE id = $1`, [P]);
    await db.end();
  }

  // Nothing was written since the embargoed brain was created: the end alone made it public.
  const since = await a.api.get(`/api/audit/events/?after=${encodeURIComponent(lastWrite!)}`, {
    token: a.staff,
  });
  expect(since.status).toBe(200);
  expect(since.body.results).toEqual([]);

  // The processor's timer records EmbargoLifted for the history (not needed for what the lists show).
  processor = await spawnService('services/processor/main.ts', {
    DATABASE_URL: a.service.databaseUrl,
    DATA_DIR: a.service.dataDir,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
  });
  const history = await waitFor(
    'EmbargoLifted in the brain history',
    async () => {
      const res = await a.api.get(`/api/brains/${E}/history/`, { token: a.staff });
      return (res.body as { type: string }[]).find((entry) => entry.type === 'EmbargoLifted')
        ? res.body
        : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, detail: () => processor?.output() ?? '' },
  );
  expect(history.filter((entry: { type: string }) => entry.type === 'EmbargoLifted')).toHaveLength(1);
  for (const { name, api } of instances) {
    const after = await api.get(lists[1]!);
    expect({ name, ids: [...ids(after)].sort() }).toEqual({ name, ids: [P, E].sort() });
    expect((await api.get(`/api/brains/${E}/`)).body).toMatchObject({ visibility: 'public' });
  }
}, 150_000);
