import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { Client as PgClient } from 'pg';
import { differencesFromFreshRebuild } from '#tests/support/faults/freshRebuild';
import { searchIndexDifferences, waitUntilCaughtUp } from '#tests/support/readModelAudit';
import { createTestDatabase } from '#tests/support/testPostgres';
import { brainForm, fresh, nifti } from './brainFixtures';

/**
 * Search and facets of GET /api/brains/ over HTTP. Every expected count is computed here from what
 * the test created (the `catalogue` model below), never read back from the service.
 */
let service: TestService;
let api: Client;
let staff: string;
let alice: { id: number; token: string };
let bob: { id: number; token: string };

interface Taxon {
  category: { id: number; name: string };
  species: { id: number; name: string; scientific_name: string };
  atlas: { id: number; name: string; slug: string };
}
let mouse: Taxon;
let rat: Taxon;

/** The test's own model of its brains: what the service should answer, computed independently. */
interface Known {
  id: number;
  readable_id: string;
  name: string;
  atlas: Taxon | undefined;
  category: Taxon;
  verified: boolean;
  uploader: number;
}
const catalogue: Known[] = [];
/** In every brain name of the counted set: searching it selects exactly those brains. */
let tag: string;

async function taxon(label: string): Promise<Taxon> {
  const category = await api.post('/api/categories/', { token: staff, json: { name: fresh(`${label}cat`) } });
  const species = await api.post('/api/species/', {
    token: staff,
    json: {
      name: fresh(`${label}common`),
      scientific_name: `${fresh(`${label}genus`)} sapiens`,
      description: '',
      category: category.body.id,
    },
  });
  const atlas = await api.post('/api/atlases/', {
    token: staff,
    json: { name: fresh(`${label}atlas`), species: species.body.id, description: '' },
  });
  for (const res of [category, species, atlas]) if (res.status !== 201) throw new Error(res.text);
  return { category: category.body, species: species.body, atlas: atlas.body };
}

async function create(
  name: string,
  where: { atlas?: Taxon; category?: Taxon },
  as: { id: number; token: string } | 'staff',
  extra: Record<string, string | boolean> = {},
): Promise<Known> {
  const fields: Record<string, string | number | boolean> = { name, ...extra };
  if (where.atlas) fields.atlas = where.atlas.atlas.id;
  else if (where.category) fields.category = where.category.category.id;
  const token = as === 'staff' ? staff : as.token;
  const res = await api.post('/api/brains/', { token, body: brainForm(fields, nifti()) });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return {
    id: res.body.id as number,
    readable_id: res.body.readable_id as string,
    name,
    atlas: where.atlas,
    category: (where.atlas ?? where.category)!,
    verified: extra.verified === true,
    uploader: as === 'staff' ? (res.body.uploader as number) : as.id,
  };
}

const search = (query: string) => api.get(`/api/brains/?${query}`);
const ids = (body: { id: number }[]) => body.map((b) => b.id);
const q = encodeURIComponent;

beforeAll(async () => {
  // No upload processor: nothing here depends on processing, and its events would keep the read
  // models moving under the final audit (which compares them with a fresh rebuild).
  ({ service, api, staff } = await startCuratedService({ PROCESSOR_ENABLED: 'false' }));
  [alice, bob] = await Promise.all([newUser(api), newUser(api)]);
  [mouse, rat] = await Promise.all([taxon('mus'), taxon('rattus')]);
  tag = fresh('set');
  const plan: [string, { atlas?: Taxon; category?: Taxon }, typeof alice | 'staff', boolean][] = [
    ['Cortex', { atlas: mouse }, alice, false],
    ['Cerebellum', { atlas: mouse }, bob, false],
    ['Thalamus', { atlas: mouse }, 'staff', true],
    ['Striatum', { atlas: rat }, alice, false],
    ['Amygdala', { atlas: rat }, 'staff', true],
    ['Pons', { atlas: rat }, bob, false],
    ['Retina', { category: rat }, alice, false],
    ['Olfactory bulb', { category: mouse }, bob, false],
  ];
  for (const [name, where, as, verified] of plan)
    catalogue.push(await create(`${tag} ${name}`, where, as, verified ? { verified: true } : {}));
});
afterAll(() => service.close());

/** Expected facet counts of a set of known brains, most frequent first then smallest id. */
function expectedFacets(brains: readonly Known[]) {
  const named = (pick: (b: Known) => { id: number; name: string } | undefined) => {
    const counts = new Map<number, { id: number; name: string; count: number }>();
    for (const b of brains) {
      const value = pick(b);
      if (!value) continue;
      const entry = counts.get(value.id) ?? { id: value.id, name: value.name, count: 0 };
      entry.count += 1;
      counts.set(value.id, entry);
    }
    return [...counts.values()].sort((x, y) => y.count - x.count || x.id - y.id);
  };
  const verified = [true, false]
    .map((value) => ({ value, count: brains.filter((b) => b.verified === value).length }))
    .filter((v) => v.count > 0)
    .sort((x, y) => y.count - x.count || Number(x.value) - Number(y.value));
  return {
    species: named((b) => b.atlas?.species),
    atlas: named((b) => b.atlas?.atlas),
    category: named((b) => b.category.category),
    verified,
  };
}

describe('search: what matches and in what order', () => {
  test('an exact name beats a name mention, which beats a description mention', async () => {
    const word = fresh('hippocampus');
    const inDescription = await create(`${fresh('Slice')} sample`, { atlas: mouse }, alice, {
      description: `shows the ${word} clearly`,
    });
    const inName = await create(`${word} left`, { atlas: mouse }, alice);
    const exact = await create(word, { atlas: rat }, bob);

    const res = await search(`search=${q(word)}`);

    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([exact.id, inName.id, inDescription.id]);
  });

  test('a name with a typo is found ("hipocampus")', async () => {
    const brain = await create(`Hippocampus ${fresh('ca')}`, { atlas: mouse }, alice);

    const res = await search('search=hipocampus');

    expect(ids(res.body)).toContain(brain.id);
  });

  test('by species (common and scientific name), atlas and category name, and readable_id', async () => {
    const ofMouse = catalogue.filter((b) => b.atlas === mouse).map((b) => b.id);
    const inRatCategory = catalogue.filter((b) => b.category === rat).map((b) => b.id);
    const found = async (text: string) =>
      ids((await search(`search=${q(text)}&page_size=100`)).body.results).sort((a, b) => a - b);

    expect(await found(mouse.species.name)).toEqual(expect.arrayContaining(ofMouse));
    expect(await found(mouse.species.scientific_name)).toEqual(expect.arrayContaining(ofMouse));
    expect(await found(mouse.atlas.name)).toEqual(expect.arrayContaining(ofMouse));
    expect(await found(rat.category.name)).toEqual(expect.arrayContaining(inRatCategory));
    for (const text of [mouse.species.name, mouse.atlas.name])
      expect(await found(text)).not.toContain(catalogue.find((b) => b.atlas === rat)!.id);
    const target = catalogue[3]!;
    expect(ids((await search(`search=${q(target.readable_id)}`)).body)[0]).toBe(target.id);
    expect(ids((await search(`search=${target.id}`)).body)[0]).toBe(target.id);
  });

  test('any substring of the name, however short (decisions.md), and an explicit ordering wins', async () => {
    // "fa" from the middle of "Olfactory": no word starts with it, no typo reaches it.
    const res = await search(`search=fa&category=${mouse.category.id}`);
    expect(ids(res.body)).toEqual([catalogue[7]!.id]);

    const byName = await search(`search=${q(tag)}&ordering=-name&page_size=100`);
    const expected = [...catalogue]
      .sort((a, b) => b.name.toLowerCase().localeCompare(a.name.toLowerCase()))
      .map((b) => b.id);
    expect(ids(byName.body.results)).toEqual(expected);
  });

  test('read-your-writes: a brain created is found by the very next search', async () => {
    const name = fresh('Freshly');
    const brain = await create(name, { atlas: rat }, bob);

    expect(ids((await search(`search=${q(name)}`)).body)).toEqual([brain.id]);
  });
});

describe('filters, search and facets together', () => {
  const subsets: [string, () => string, (b: Known) => boolean][] = [
    ['no filter', () => '', () => true],
    ['species', () => `species=${q(mouse.species.scientific_name.toUpperCase())}`, (b) => b.atlas === mouse],
    ['atlas slug', () => `atlas=${rat.atlas.slug}`, (b) => b.atlas === rat],
    ['atlas id', () => `atlas=${mouse.atlas.id}`, (b) => b.atlas === mouse],
    ['category name', () => `category=${q(rat.category.name.toUpperCase())}`, (b) => b.category === rat],
    ['verified', () => 'verified=true', (b) => b.verified],
    [
      'uploader AND category id',
      () => `uploader=${alice.id}&category=${mouse.category.id}`,
      (b) => b.uploader === alice.id && b.category === mouse,
    ],
    ['unknown atlas slug', () => 'atlas=no-such-atlas', () => false],
  ];

  test.each(subsets)('%s: exact results, count and facets', async (_, filter, keep) => {
    const expected = catalogue.filter(keep);
    const res = await search(
      `search=${q(tag)}&${filter()}&page_size=100&facets=species,atlas,category,verified`,
    );

    expect(res.status).toBe(200);
    expect(res.body.count).toBe(expected.length);
    expect(ids(res.body.results).sort((a, b) => a - b)).toEqual(
      expected.map((b) => b.id).sort((a, b) => a - b),
    );
    expect(res.body.facets).toEqual(expectedFacets(expected));
  });

  test.each(subsets)(
    '%s: the index answers exactly what the SQL filters answer (same order, same count)',
    async (_, filter) => {
      // facets routes the request through the SearchIndex; without it the SQL path answers.
      const [viaIndex, viaSql] = await Promise.all([
        search(`${filter()}&page_size=100&facets=verified`),
        search(`${filter()}&page_size=100`),
      ]);
      expect(viaIndex.status).toBe(200);
      expect(viaIndex.body.count).toBe(viaSql.body.count);
      expect(ids(viaIndex.body.results)).toEqual(ids(viaSql.body.results));
      for (const ordering of ['name', '-readable_id', 'date_uploaded']) {
        const [a, b] = await Promise.all([
          search(`${filter()}&page_size=100&ordering=${ordering}&facets=atlas`),
          search(`${filter()}&page_size=100&ordering=${ordering}`),
        ]);
        expect(ids(a.body.results)).toEqual(ids(b.body.results));
      }
    },
  );

  test('a subset of facets, and pages share one count', async () => {
    const first = await search(`search=${q(tag)}&page=1&page_size=3&facets=verified,atlas`);
    const second = await search(`search=${q(tag)}&page=2&page_size=3&facets=verified`);
    const expected = expectedFacets(catalogue);

    expect(Object.keys(first.body.facets).sort()).toEqual(['atlas', 'verified']);
    expect(first.body.facets).toEqual({ atlas: expected.atlas, verified: expected.verified });
    expect(first.body.count).toBe(catalogue.length);
    expect(second.body.count).toBe(catalogue.length);
    expect([...ids(first.body.results), ...ids(second.body.results)]).toHaveLength(6);
    expect(first.headers.get('x-total-count')).toBe(String(catalogue.length));
  });

  test('facets follow an update (atlas moved, verified set) and a delete', async () => {
    const moved = catalogue.find((b) => b.atlas === mouse && b.uploader === bob.id)!;
    const patched = await api.patch(`/api/brains/${moved.id}/`, {
      token: staff,
      json: { atlas: rat.atlas.id, verified: true },
    });
    expect(patched.status).toBe(200);
    Object.assign(moved, { atlas: rat, category: rat, verified: true });
    const removed = catalogue.find((b) => b.name.endsWith('Pons'))!;
    expect((await api.delete(`/api/brains/${removed.id}/`, { token: bob.token })).status).toBe(204);
    catalogue.splice(catalogue.indexOf(removed), 1);

    const res = await search(`search=${q(tag)}&page_size=100&facets=species,atlas,category,verified`);
    expect(res.body.count).toBe(catalogue.length);
    expect(res.body.facets).toEqual(expectedFacets(catalogue));
    const byRatAtlas = await search(`search=${q(tag)}&atlas=${rat.atlas.id}&page_size=100&facets=atlas`);
    expect(ids(byRatAtlas.body.results)).toContain(moved.id);
    // The moved brain is found by its new atlas's name, no longer by the old one's.
    const newName = ids((await search(`search=${q(rat.atlas.name)}&page_size=100`)).body.results);
    const oldName = ids((await search(`search=${q(mouse.atlas.name)}&page_size=100`)).body.results);
    expect(newName).toContain(moved.id);
    expect(oldName).not.toContain(moved.id);
  });
});

describe('400s', () => {
  test('an unknown facet is 400 on facets', async () => {
    const res = await search('page_size=10&facets=species,colour');
    expect(res.status).toBe(400);
    expect(res.body.facets[0]).toContain('colour');
  });

  test('facets in array mode is 400 on facets, explaining it needs page or page_size', async () => {
    const res = await search(`search=${q(tag)}&facets=verified`);
    expect(res.status).toBe(400);
    expect(res.body.facets[0]).toMatch(/page/);
  });

  test('an empty facets asks for none; a repeated facet is counted once', async () => {
    const empty = await search(`search=${q(tag)}&page_size=1&facets=`);
    expect(empty.status).toBe(200);
    expect(empty.body).not.toHaveProperty('facets');
    const twice = await search(`search=${q(tag)}&page_size=1&facets=verified,%20verified`);
    expect(twice.body.facets).toEqual({ verified: expectedFacets(catalogue).verified });
  });

  test('a page past the last is 404 as on every list; a blank search lists everything', async () => {
    expect((await search(`search=${q(tag)}&page=99&page_size=10`)).status).toBe(404);
    const blank = await search('search=%20%20&page_size=1');
    const all = await search('page_size=1');
    expect(blank.body.count).toBe(all.body.count);
  });
});

describe('the index after all of the above', () => {
  test('agrees with the brains read model and equals a fresh rebuild; the audit sees a corrupted document', async () => {
    const db = new PgClient({ connectionString: service.databaseUrl });
    await db.connect();
    try {
      await waitUntilCaughtUp(db, 40_000);
      expect(await searchIndexDifferences(db)).toEqual([]);
      expect(
        await differencesFromFreshRebuild(service.databaseUrl, await createTestDatabase('rebuild')),
      ).toEqual([]);

      const victim = catalogue[0]!;
      await db.query(`UPDATE brain_search SET atlas_name = 'corrupted' WHERE brain_id = $1`, [victim.id]);
      expect(await searchIndexDifferences(db)).toEqual([
        `brain ${victim.id}: document differs from the brain`,
      ]);
      await db.query(`UPDATE brain_search SET atlas_name = $2 WHERE brain_id = $1`, [
        victim.id,
        victim.atlas?.atlas.name ?? null,
      ]);
    } finally {
      await db.end();
    }
  });
});
