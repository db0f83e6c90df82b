import { type Client, newUser } from '#tests/support/httpClient';
import type { CuratedService } from '#tests/support/curatedService';
import { type TwoInstances, getTwice, resultIds, startTwoInstances } from './twoInstances';
import { waitFor } from '#tests/support/waitFor';
import { type Taxonomy, brainForm, createTaxonomy, fresh, nifti } from '#tests/e2e/brains/brainFixtures';

/*
 * Issue 19 on the search path of the brains list (`search=`, `facets=`): whoever may not see a
 * brain finds it in no answer, no count, no X-Total-Count and no facet, not even as a facet value
 * only that brain has. Every caller on two instances of one database, one keeping answers and
 * search rankings (the default) and one keeping none (LIST_CACHE_MB=0); each search is asked
 * twice, the second a kept answer where answers are kept. No processor: nothing writes but the
 * tests, so an embargo ending is seen with no write.
 */

type User = Awaited<ReturnType<typeof newUser>>;
type Name = 'pub' | 'emb' | 'priv';

let served: TwoInstances;
let a: CuratedService;
let instances: TwoInstances['instances'];
let owner: User;
let friend: User;
let stranger: User;
/** Where the public and embargoed brains are; the private brain alone is in `secret`. */
let place: Taxonomy;
let secret: Taxonomy;
/** A word in every name of this file's brains, and in no other brain's. */
const tag = fresh('zq').toLowerCase();
const brains = {} as Record<Name, { id: number }>;
const FACETS = 'facets=species,atlas,category,verified';

interface Caller {
  readonly name: string;
  readonly token: () => string | undefined;
  readonly sees: readonly Name[];
}
const CALLERS: readonly Caller[] = [
  { name: 'the uploader', token: () => owner.token, sees: ['priv', 'emb', 'pub'] },
  { name: 'a collaborator', token: () => friend.token, sees: ['priv', 'pub'] },
  { name: 'staff', token: () => a.staff, sees: ['priv', 'emb', 'pub'] },
  { name: 'a stranger', token: () => stranger.token, sees: ['pub'] },
  { name: 'anonymous', token: () => undefined, sees: ['pub'] },
];

async function create(taxonomy: Taxonomy, fields: Record<string, string>): Promise<{ id: number }> {
  const res = await a.api.post('/api/brains/', {
    token: owner.token,
    body: brainForm({ atlas: taxonomy.atlas.id, ...fields }, nifti()),
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as { id: number };
}

beforeAll(async () => {
  served = await startTwoInstances();
  ({ a, instances } = served);
  [owner, friend, stranger] = await Promise.all([newUser(a.api), newUser(a.api), newUser(a.api)]);
  place = await createTaxonomy(a.api, a.staff);
  secret = await createTaxonomy(a.api, a.staff);
  brains.pub = await create(place, { name: `${tag} public cortex` });
  brains.emb = await create(place, {
    name: `${tag} embargoed cortex`,
    visibility: 'embargoed',
    embargo_until: new Date(Date.now() + 86_400_000).toISOString(),
  });
  brains.priv = await create(secret, { name: `${tag} private cortex`, visibility: 'private' });
  const shared = await a.api.post(`/api/brains/${brains.priv.id}/collaborators/`, {
    token: owner.token,
    json: { user: friend.username, role: 'viewer' },
  });
  expect(shared.status).toBe(201);
  // Both instances' search indexes have every brain (staff sees all of them).
  for (const { api } of instances)
    await waitFor(
      'the search index to hold the brains',
      async () => (await api.get(`/api/brains/?search=${tag}&page_size=10`, { token: a.staff })).body.count,
      { timeoutMs: 20_000, intervalMs: 50, until: (count) => count === 3 },
    );
}, 120_000);

afterAll(async () => {
  await served?.close();
});

const ids = resultIds;
const idsOf = (names: readonly Name[]): number[] => names.map((name) => brains[name].id);

/** The facets these brains make: per species, atlas and category of theirs, and verified. */
function facetsOf(names: readonly Name[]) {
  const taxonomies = names.map((name) => (name === 'priv' ? secret : place));
  const named = (pick: (t: Taxonomy) => number) => {
    const tally = new Map<number, number>();
    for (const t of taxonomies) tally.set(pick(t), (tally.get(pick(t)) ?? 0) + 1);
    return [...tally].sort(([x, n], [y, m]) => m - n || x - y).map(([id, count]) => ({ id, count }));
  };
  return {
    species: named((t) => t.species.id),
    atlas: named((t) => t.atlas.id),
    category: named((t) => t.category.id),
    verified: names.length === 0 ? [] : [{ value: false, count: names.length }],
  };
}

const withoutNames = (facets: Record<string, { id?: number; value?: boolean; count: number }[]>) =>
  Object.fromEntries(
    Object.entries(facets).map(([facet, values]) => [
      facet,
      values.map(({ id, value, count }) => (id === undefined ? { value, count } : { id, count })),
    ]),
  );

describe.each([0, 1])('instance %#', (instance) => {
  const on = () => instances[instance]!.api;

  test.each(CALLERS)('search, its count and its facets as $name: only what it may see', async (caller) => {
    for (const text of [tag, `${tag} cortex`, 'private cortex', `${tag} priv`]) {
      const visible =
        text === 'private cortex' || text.endsWith(' priv')
          ? caller.sees.filter((name) => name === 'priv')
          : caller.sees;
      const paged = await getTwice(
        on(),
        `/api/brains/?search=${encodeURIComponent(text)}&ordering=-id&page_size=50&${FACETS}`,
        caller.token(),
      );
      expect(paged.status).toBe(200);
      // Other files' brains may match the plain words; this file's brains are all named with the tag.
      const mine = ids(paged).filter((id) => idsOf(['pub', 'emb', 'priv']).includes(id));
      expect({ text, mine }).toEqual({ text, mine: idsOf(visible) });
      if (text.startsWith(tag)) {
        expect(paged.body.count).toBe(visible.length);
        expect(withoutNames(paged.body.facets)).toEqual(facetsOf(visible));
        // A species only a hidden brain has is not even named.
        const speciesIds = paged.body.facets.species.map((s: { id: number }) => s.id);
        expect(speciesIds.includes(secret.species.id)).toBe(visible.includes('priv'));
        const array = await getTwice(
          on(),
          `/api/brains/?search=${encodeURIComponent(text)}&ordering=-id`,
          caller.token(),
        );
        expect(ids(array)).toEqual(idsOf(visible));
        expect(array.headers.get('x-total-count')).toBe(String(visible.length));
      }
    }
    // The private brain's species, filtered on: nothing for whoever may not see it.
    const filtered = await getTwice(
      on(),
      `/api/brains/?search=${tag}&species=${encodeURIComponent(secret.species.scientific_name)}&page_size=10&${FACETS}`,
      caller.token(),
    );
    expect(filtered.body.count).toBe(caller.sees.includes('priv') ? 1 : 0);
    // Facets without text (the kept counts plus the visible non-public brains).
    const faceted = await getTwice(
      on(),
      `/api/brains/?atlas=${secret.atlas.id}&page_size=10&${FACETS}`,
      caller.token(),
    );
    const priv = caller.sees.includes('priv') ? (['priv'] as const) : [];
    expect(faceted.body.count).toBe(priv.length);
    expect(withoutNames(faceted.body.facets)).toEqual(
      priv.length === 0 ? { species: [], atlas: [], category: [], verified: [] } : facetsOf(priv),
    );
  });

  test.each(CALLERS)(
    '`visibility` with search, as $name: the effective visibility, after the rule',
    async (caller) => {
      const kinds: Record<Name, string> = { pub: 'public', emb: 'embargoed', priv: 'private' };
      for (const visibility of ['public', 'private', 'embargoed']) {
        const wanted = caller.sees.filter((name) => kinds[name] === visibility);
        const res = await getTwice(
          on(),
          `/api/brains/?search=${tag}&visibility=${visibility}&ordering=-id&page_size=10&${FACETS}`,
          caller.token(),
        );
        expect(res.status).toBe(200);
        expect(ids(res)).toEqual(idsOf(wanted));
        expect(res.body.count).toBe(wanted.length);
        expect(withoutNames(res.body.facets)).toEqual(
          wanted.length === 0 ? { species: [], atlas: [], category: [], verified: [] } : facetsOf(wanted),
        );
      }
    },
  );
});

test('sharing and unsharing change what a caller finds on both instances, kept rankings included', async () => {
  const search = (api: Client) =>
    api.get(`/api/brains/?search=${tag}&ordering=-id&page_size=10&${FACETS}`, { token: stranger.token });
  for (const { api } of instances) expect(ids(await search(api))).toEqual(idsOf(['pub']));
  const added = await a.api.post(`/api/brains/${brains.priv.id}/collaborators/`, {
    token: owner.token,
    json: { user: stranger.username, role: 'viewer' },
  });
  expect(added.status).toBe(201);
  for (const { api } of instances)
    await waitFor('the stranger to find the shared brain', async () => ids(await search(api)), {
      timeoutMs: 20_000,
      intervalMs: 50,
      until: (found) => found.length === 2,
    });
  for (const { api } of instances) {
    const res = await search(api);
    expect(ids(res)).toEqual(idsOf(['priv', 'pub']));
    expect(withoutNames(res.body.facets)).toEqual(facetsOf(['priv', 'pub']));
  }
  const removed = await a.api.delete(`/api/brains/${brains.priv.id}/collaborators/${stranger.id}/`, {
    token: owner.token,
  });
  expect(removed.status).toBe(204);
  for (const { api } of instances)
    await waitFor('the stranger to lose the brain', async () => ids(await search(api)), {
      timeoutMs: 20_000,
      intervalMs: 50,
      until: (found) => found.length === 1,
    });
  for (const { api } of instances)
    expect(withoutNames((await search(api)).body.facets)).toEqual(facetsOf(['pub']));
});

test('an embargo ending during the test: its brain appears in a search kept before, on both instances, with no write', async () => {
  const word = fresh('zr').toLowerCase();
  const ends = Date.now() + 5_000;
  const brain = await create(place, {
    name: `${word} soon public`,
    visibility: 'embargoed',
    embargo_until: new Date(ends).toISOString(),
  });
  const search = (api: Client) => api.get(`/api/brains/?search=${word}&page_size=10&${FACETS}`);
  for (const { api } of instances)
    await waitFor(
      'the search index to hold the brain',
      async () => (await api.get(`/api/brains/?search=${word}`, { token: a.staff })).body.length,
      { timeoutMs: 20_000, intervalMs: 50, until: (n) => n === 1 },
    );
  // Asked (and kept) before the end: absent for anonymous, twice.
  for (const { api } of instances)
    for (let i = 0; i < 2; i++) {
      const res = await search(api);
      expect({ count: res.body.count, facets: res.body.facets.species }).toEqual({ count: 0, facets: [] });
    }
  expect(Date.now()).toBeLessThan(ends);
  for (const { api } of instances) {
    const res = await waitFor('the embargo to end', () => search(api), {
      timeoutMs: 20_000,
      intervalMs: 100,
      until: (r) => r.body.count === 1,
    });
    expect(Date.now()).toBeGreaterThanOrEqual(ends - 1000);
    expect(ids(res)).toEqual([brain.id]);
    expect(res.body.results[0].visibility).toBe('public');
    expect(res.body.facets.species).toEqual([expect.objectContaining({ id: place.species.id, count: 1 })]);
  }
}, 60_000);
