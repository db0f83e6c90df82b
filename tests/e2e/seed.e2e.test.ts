import { SeedError } from '#services/command-api/seedHttp';
import { type SeedSummary, seedIdempotencyKey, seedOverHttp } from '#services/command-api/seedOverHttp';
import { SEED_CATALOGUE } from '#services/command-api/seedCatalogue';
import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';

const STAFF = { email: 'curator@example.org', password: 'curator-password' };
const ITEMS =
  SEED_CATALOGUE.categories.length + SEED_CATALOGUE.species.length + SEED_CATALOGUE.atlases.length;

let service: TestService;
let api: Client;

beforeAll(async () => {
  service = await startTestService({
    ADMIN_EMAIL: STAFF.email,
    ADMIN_PASSWORD: STAFF.password,
    ADMIN_USERNAME: 'curator',
  });
  api = client(service.url);
});
afterAll(() => service.close());

const seed = (credentials = STAFF) => seedOverHttp({ url: service.url, ...credentials });

interface ListedSpecies {
  scientific_name: string;
  category_name: string;
  atlases_count: number;
  atlases: { slug: string }[];
}
interface ListedAtlas {
  name: string;
  version: string;
  is_official: boolean;
  publication_url: string;
  color: string;
  species: { scientific_name: string };
}

test('a non-staff account is refused with a message that says how to get a staff one', async () => {
  const researcher = await newUser(api);
  const attempt = seed({ email: researcher.email, password: researcher.password });
  await expect(attempt).rejects.toThrow(SeedError);
  await expect(attempt).rejects.toThrow(/not a staff account.*npm run admin -- create-staff/);
  await expect(seed({ email: STAFF.email, password: 'wrong-password' })).rejects.toThrow(
    /cannot log in as curator@example.org/,
  );
  // Nothing was written.
  expect((await api.get('/api/categories/')).body).toEqual([]);
});

test('the first run creates the whole catalogue; the second creates nothing', async () => {
  expect(await seed()).toEqual({ created: ITEMS, existing: 0 });

  const categories = (await api.get('/api/categories/')).body as { name: string; atlases_count: number }[];
  expect(categories.map((c) => [c.name, c.atlases_count])).toEqual([
    ['fish', 2],
    ['primates', 5],
    ['rodents', 2],
  ]);
  const species = (await api.get('/api/species/')).body as ListedSpecies[];
  expect(
    Object.fromEntries(species.map((s) => [s.scientific_name, [s.category_name, s.atlases_count]])),
  ).toEqual({
    'Mus musculus': ['rodents', 1],
    'Rattus norvegicus': ['rodents', 1],
    'Homo sapiens': ['primates', 3],
    'Macaca mulatta': ['primates', 2],
    'Danio rerio': ['fish', 2],
  });
  for (const s of species) expect(s.atlases).toHaveLength(s.atlases_count);

  const atlases = (await api.get('/api/atlases/')).body as ListedAtlas[];
  expect(atlases).toHaveLength(SEED_CATALOGUE.atlases.length);
  const ccf = atlases.find((a) => a.name === 'Allen Mouse Brain Common Coordinate Framework');
  expect(ccf).toMatchObject({
    version: 'CCFv3 2017',
    is_official: true,
    publication_url: 'https://doi.org/10.1016/j.cell.2020.04.007',
    species: { scientific_name: 'Mus musculus' },
  });
  for (const a of atlases) {
    expect(a.is_official).toBe(true);
    expect(a.publication_url).toMatch(/^https:\/\/doi\.org\/10\.\d+\//);
    expect(a.color).toMatch(/^#[0-9a-f]{6}$/);
  }

  expect(await seed()).toEqual({ created: 0, existing: ITEMS });
  expect((await api.get('/api/atlases/')).body).toHaveLength(SEED_CATALOGUE.atlases.length);
  expect((await api.get('/api/species/')).body).toHaveLength(SEED_CATALOGUE.species.length);
});

test('runs racing each other create every item exactly once between them', async () => {
  const catalogue = {
    categories: [{ name: 'amphibians', description: 'Frogs and salamanders.' }],
    species: [
      {
        name: 'african clawed frog',
        scientificName: 'Xenopus laevis',
        description: 'A frog.',
        category: 'amphibians',
      },
    ],
    atlases: ['Tadpole atlas', 'Adult frog atlas', 'Froglet atlas'].map((name) => ({
      name,
      species: 'Xenopus laevis',
      version: '1',
      description: 'A test atlas.',
      publicationUrl: 'https://example.org/paper',
      color: '#336699',
    })),
  };
  const settled = await Promise.allSettled(
    Array.from({ length: 4 }, () => seedOverHttp({ url: service.url, ...STAFF, catalogue })),
  );
  const runs = settled.map((s) => (s.status === 'fulfilled' ? s.value : s.reason)) as SeedSummary[];
  expect(runs).toEqual(new Array(4).fill({ created: expect.any(Number), existing: expect.any(Number) }));
  expect(runs.reduce((sum, r) => sum + r.created, 0)).toBe(5);
  for (const run of runs) expect(run.created + run.existing).toBe(5);
  const frog = await api.get('/api/species/Xenopus-laevis/');
  expect(frog.body).toMatchObject({ category_name: 'amphibians', atlases_count: 3 });
  expect((await api.get('/api/atlases/?species=Xenopus+laevis')).body).toHaveLength(3);
});

test('the idempotency key is the item: same body, same key; another body, another key', () => {
  const body = { name: 'fish', description: 'Fish.' };
  expect(seedIdempotencyKey('category', body)).toBe(seedIdempotencyKey('category', { ...body }));
  expect(seedIdempotencyKey('category', body)).not.toBe(seedIdempotencyKey('category', { name: 'fish' }));
  expect(seedIdempotencyKey('category', body)).not.toBe(seedIdempotencyKey('species', body));
  expect(seedIdempotencyKey('atlas', body)).toMatch(/^[\x20-\x7e]{1,255}$/);
});
