import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';
import { encodePng } from '#tests/media/imageEncoders';

let service: TestService;
let api: Client;
let staff: string;
let researcher: string;

beforeAll(async () => {
  service = await startTestService({
    ADMIN_EMAIL: 'taxonomist@example.org',
    ADMIN_PASSWORD: 'taxonomist-password',
    ADMIN_USERNAME: 'taxonomist',
  });
  api = client(service.url);
  const login = await api.post('/api/auth/login/', {
    json: { email: 'taxonomist@example.org', password: 'taxonomist-password' },
  });
  expect(login.status).toBe(200);
  staff = login.body.token as string;
  researcher = (await newUser(api)).token;
});
afterAll(() => service.close());

let unique = 0;
/** A name no other test of this file uses (names are unique service-wide). */
const fresh = (prefix: string): string => `${prefix}${process.pid}x${unique++}`;

function form(
  fields: Record<string, string>,
  file?: { name: string; bytes: Buffer; type: string },
): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  if (file) data.append('image', new Blob([file.bytes], { type: file.type }), file.name);
  return data;
}

async function createCategory(name = fresh('cat')): Promise<{ id: number; name: string }> {
  const res = await api.post('/api/categories/', { token: staff, json: { name, description: 'd' } });
  expect(res.status).toBe(201);
  return res.body as { id: number; name: string };
}

async function createSpecies(category: string | number, scientific = `${fresh('Genus')} species`) {
  const res = await api.post('/api/species/', {
    token: staff,
    json: { name: fresh('sp'), scientific_name: scientific, description: 'a species', category },
  });
  expect(res.status).toBe(201);
  return res.body as { id: number; name: string; scientific_name: string };
}

async function createAtlas(species: number, overrides: Record<string, unknown> = {}, token = researcher) {
  return api.post('/api/atlases/', { token, json: { name: fresh('Atlas '), species, ...overrides } });
}

describe('POST /api/categories/', () => {
  test('staff create a category from JSON; the name is stored lowercase', async () => {
    const name = fresh('Rodents ');
    const res = await api.post('/api/categories/', {
      token: staff,
      json: {
        name: `  ${name.toUpperCase()} `,
        description: 'Mice and rats',
        image_url: 'https://example.org/r.png',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: name.toLowerCase(),
      description: 'Mice and rats',
      image: null,
      image_url: 'https://example.org/r.png',
      image_source: 'https://example.org/r.png',
      brains_count: 0,
      atlases_count: 0,
    });
    const read = await api.get(`/api/categories/${encodeURIComponent(name.toUpperCase())}/`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  test('anonymous is 401, a non-staff user 403 (JSON and multipart)', async () => {
    const anonymous = await api.post('/api/categories/', { json: { name: fresh('c') } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBeTruthy();
    const json = await api.post('/api/categories/', { token: researcher, json: { name: fresh('c') } });
    expect(json.status).toBe(403);
    const multipart = await api.post('/api/categories/', {
      token: researcher,
      body: form({ name: fresh('c') }, { name: 'a.png', bytes: encodePng(4, 4), type: 'image/png' }),
    });
    expect(multipart.status).toBe(403);
    expect(multipart.body).toEqual({ detail: expect.any(String) });
  });

  test('a duplicate name, in any case, is 400 on name', async () => {
    const { name } = await createCategory();
    const again = await api.post('/api/categories/', { token: staff, json: { name: name.toUpperCase() } });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ name: ['category with this name already exists.'] });
  });

  test('a missing or blank name, or a non-http image_url, is 400 on that field', async () => {
    const missing = await api.post('/api/categories/', { token: staff, json: { description: 'x' } });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body)).toEqual(['name']);
    const blank = await api.post('/api/categories/', { token: staff, json: { name: '   ' } });
    expect(blank.status).toBe(400);
    expect(Object.keys(blank.body)).toEqual(['name']);
    const url = await api.post('/api/categories/', {
      token: staff,
      json: { name: fresh('c'), image_url: 'javascript:alert(1)' },
    });
    expect(url.status).toBe(400);
    expect(Object.keys(url.body)).toEqual(['image_url']);
  });

  test('20 parallel creates of one name give exactly one 201, the others 400', async () => {
    const name = fresh('contested');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api.post('/api/categories/', { token: staff, json: { name } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...new Array<number>(19).fill(400)]);
    const list = await api.get(`/api/categories/?name=${name}`);
    expect(list.body).toHaveLength(1);
  });

  test('an uploaded image is checked by content, stored, and served at image/image_source', async () => {
    const png = encodePng(12, 8);
    const name = fresh('imaged');
    const res = await api.post('/api/categories/', {
      token: staff,
      body: form(
        { name, description: 'with a picture' },
        { name: 'picture.png', bytes: png, type: 'image/png' },
      ),
    });
    expect(res.status).toBe(201);
    expect(res.body.image).toMatch(new RegExp(`^${service.url}/media/categories/[\\w-]+\\.png/$`));
    expect(res.body.image_source).toBe(res.body.image);
    expect(res.body.image_url).toBeNull();
    const download = await fetch(res.body.image as string);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await download.arrayBuffer()).equals(png)).toBe(true);
    expect((await api.get(`/api/categories/${name}/`)).body.image).toBe(res.body.image);
  });

  test('a text file named .png is 400 on image; image and image_url together are 400 non_field_errors', async () => {
    const text = await api.post('/api/categories/', {
      token: staff,
      body: form(
        { name: fresh('c') },
        { name: 'fake.png', bytes: Buffer.from('not a picture'), type: 'image/png' },
      ),
    });
    expect(text.status).toBe(400);
    expect(Object.keys(text.body)).toEqual(['image']);
    const both = await api.post('/api/categories/', {
      token: staff,
      body: form(
        { name: fresh('c'), image_url: 'https://example.org/x.png' },
        { name: 'a.png', bytes: encodePng(2, 2), type: 'image/png' },
      ),
    });
    expect(both.status).toBe(400);
    expect(both.body).toEqual({ non_field_errors: [expect.any(String)] });
  });

  test('the name of a refused create stays free', async () => {
    const name = fresh('refused');
    const both = await api.post('/api/categories/', {
      token: staff,
      body: form(
        { name, image_url: 'https://example.org/x.png' },
        { name: 'a.png', bytes: encodePng(2, 2), type: 'image/png' },
      ),
    });
    expect(both.status).toBe(400);
    expect((await api.post('/api/categories/', { token: staff, json: { name } })).status).toBe(201);
  });

  test('an Idempotency-Key replays the first reply instead of creating again', async () => {
    const name = fresh('idem');
    const request = () =>
      api.post('/api/categories/', {
        token: staff,
        json: { name },
        headers: { 'Idempotency-Key': `category-${name}` },
      });
    const first = await request();
    expect(first.status).toBe(201);
    // The same name again: a replay, not a duplicate refused with 400.
    const second = await request();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
  });
});

describe('GET /api/categories/', () => {
  test('an array by default with X-Total-Count, an envelope with page or page_size', async () => {
    for (let i = 0; i < 3; i++) await createCategory();
    const all = await api.get('/api/categories/');
    expect(all.status).toBe(200);
    expect(Array.isArray(all.body)).toBe(true);
    const total = Number(all.headers.get('x-total-count'));
    expect(total).toBe(all.body.length);
    const names = (all.body as { name: string }[]).map((c) => c.name);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));

    const page = await api.get('/api/categories/?page=2&page_size=2');
    expect(page.body).toMatchObject({ count: total, results: all.body.slice(2, 4) });
    expect(page.body.previous).toBe(`${service.url}/api/categories/?page=1&page_size=2`);
    const beyond = await api.get(`/api/categories/?page=${total + 1}&page_size=1`);
    expect(beyond.status).toBe(404);
    expect(beyond.body).toEqual({ detail: 'Invalid page.' });
    const clamped = await api.get('/api/categories/?page_size=1000');
    expect(clamped.body.results.length).toBe(Math.min(total, 100));
    expect((await api.get('/api/categories/?page=abc')).status).toBe(400);
  });

  test('ordering, the name filter, unknown parameters and paths without the slash', async () => {
    const desc = await api.get('/api/categories/?ordering=-id&whatever=1');
    const ids = (desc.body as { id: number }[]).map((c) => c.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const { name } = await createCategory();
    const filtered = await api.get(`/api/categories?name=${name.toUpperCase()}`);
    expect(filtered.status).toBe(200);
    expect((filtered.body as { name: string }[]).map((c) => c.name)).toEqual([name]);
    expect((await api.get(`/api/categories/${name}`)).status).toBe(200);
    expect((await api.get(`/api/categories/${fresh('missing')}/`)).status).toBe(404);
  });
});

describe('species', () => {
  test('staff create species; names normalised; category by id or name', async () => {
    const category = await createCategory();
    const genus = fresh('mUS');
    const res = await api.post('/api/species/', {
      token: staff,
      json: {
        name: `${genus} HOUSE`,
        scientific_name: `  ${genus}   MUSCULUS `,
        category: category.name.toUpperCase(),
      },
    });
    expect(res.status).toBe(201);
    const scientific = `${genus.charAt(0).toUpperCase()}${genus.slice(1).toLowerCase()} musculus`;
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: `${genus.toLowerCase()} house`,
      scientific_name: scientific,
      description: '',
      category: { id: category.id, name: category.name },
      category_name: category.name,
      brains: [],
      atlases: [],
      brains_count: 0,
      atlases_count: 0,
    });
    const byId = await createSpecies(category.id);
    expect(
      (await api.get(`/api/species/${encodeURIComponent(byId.scientific_name)}/`)).body.category,
    ).toEqual({ id: category.id, name: category.name });
    for (const path of [
      encodeURIComponent(scientific.toUpperCase()),
      `${genus}+musculus`,
      `${genus}_musculus`,
      `${genus}-MUSCULUS`,
    ]) {
      const read = await api.get(`/api/species/${path}/`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    }
    expect((await api.get(`/api/species/${genus}-rattus/`)).status).toBe(404);
  });

  test('401 anonymous, 403 non-staff, 400 on duplicates and unknown categories', async () => {
    const category = await createCategory();
    const body = { name: fresh('sp'), scientific_name: `${fresh('Genus')} one`, category: category.id };
    expect((await api.post('/api/species/', { json: body })).status).toBe(401);
    expect((await api.post('/api/species/', { token: researcher, json: body })).status).toBe(403);
    expect((await api.post('/api/species/', { token: staff, json: body })).status).toBe(201);
    const sameName = await api.post('/api/species/', {
      token: staff,
      json: { ...body, name: body.name.toUpperCase(), scientific_name: `${fresh('Genus')} two` },
    });
    expect(sameName.status).toBe(400);
    expect(sameName.body).toEqual({ name: ['species with this name already exists.'] });
    const sameScientific = await api.post('/api/species/', {
      token: staff,
      json: { ...body, name: fresh('sp'), scientific_name: body.scientific_name.toLowerCase() },
    });
    expect(sameScientific.status).toBe(400);
    expect(sameScientific.body).toEqual({
      scientific_name: ['species with this scientific name already exists.'],
    });
    for (const unknown of [999_999, fresh('nocategory')]) {
      const res = await api.post('/api/species/', {
        token: staff,
        json: { name: fresh('sp'), scientific_name: `${fresh('Genus')} x`, category: unknown },
      });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['category']);
    }
  });

  test('the list filters by category (name or id) and scientific name, with exact counts', async () => {
    const category = await createCategory();
    const a = await createSpecies(category.name);
    const b = await createSpecies(category.id);
    await createSpecies((await createCategory()).id);
    for (let i = 0; i < 3; i++) expect((await createAtlas(a.id)).status).toBe(201);

    const byName = await api.get(`/api/species/?category=${category.name.toUpperCase()}`);
    expect(byName.status).toBe(200);
    expect((byName.body as { id: number }[]).map((s) => s.id).sort()).toEqual([a.id, b.id].sort());
    const byId = await api.get(`/api/species/?category=${category.id}&page_size=10`);
    expect(byId.body.count).toBe(2);
    const species = (byName.body as { id: number; atlases_count: number; atlases: unknown[] }[]).find(
      (s) => s.id === a.id,
    )!;
    expect(species.atlases_count).toBe(3);
    expect(species.atlases).toHaveLength(3);
    expect(species.atlases[0]).toEqual({
      id: expect.any(Number),
      name: expect.any(String),
      slug: expect.any(String),
    });

    const scientific = await api.get(
      `/api/species/?scientific_name=${encodeURIComponent(b.scientific_name.toUpperCase())}`,
    );
    expect((scientific.body as { id: number }[]).map((s) => s.id)).toEqual([b.id]);
    expect((await api.get(`/api/species/?category=${fresh('none')}`)).body).toEqual([]);
  });
});

describe('atlases', () => {
  let species: { id: number; name: string; scientific_name: string };
  let category: { id: number; name: string };
  beforeAll(async () => {
    category = await createCategory();
    species = await createSpecies(category.id);
  });

  test('any user creates an atlas; slug, colour and species object are derived', async () => {
    const name = fresh('Allen Mouse Brain ');
    const res = await createAtlas(species.id, {
      name,
      description: 'CCF',
      version: '3',
      color: '#AbC',
      publication_url: 'https://doi.org/10.1016/j.cell.2020.04.007',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name,
      slug: name.toLowerCase().trim().replace(/\s+/g, '-'),
      description: 'CCF',
      species: {
        id: species.id,
        name: species.name,
        scientific_name: species.scientific_name,
        category: { id: category.id, name: category.name },
      },
      is_official: false,
      verified: false,
      version: '3',
      color: '#aabbcc',
      brains_count: 0,
      publication_url: 'https://doi.org/10.1016/j.cell.2020.04.007',
    });
    const read = await api.get(`/api/atlases/${res.body.slug as string}/`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    expect((await api.get(`/api/atlases/${res.body.slug as string}`)).status).toBe(200);
    expect((await api.get(`/api/atlases/${fresh('no-such')}/`)).status).toBe(404);

    const again = await createAtlas(species.id, { name, version: '3' });
    expect(again.body.slug).toBe(`${res.body.slug as string}-3`);
  });

  test('401 anonymous; is_official or verified by non-staff 403; staff may set them', async () => {
    expect((await api.post('/api/atlases/', { json: { name: 'x', species: species.id } })).status).toBe(401);
    expect((await createAtlas(species.id, { is_official: true })).status).toBe(403);
    expect((await createAtlas(species.id, { verified: true })).status).toBe(403);
    const official = await createAtlas(species.id, { is_official: true, verified: true }, staff);
    expect(official.status).toBe(201);
    expect(official.body).toMatchObject({ is_official: true, verified: true });
  });

  test('bad fields are 400 on that field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ species: 999_999 }, 'species'],
      [{ species: 'abc' }, 'species'],
      [{ color: 'red' }, 'color'],
      [{ color: '#12345' }, 'color'],
      [{ publication_url: 'ftp://example.org/paper' }, 'publication_url'],
      [{ name: '' }, 'name'],
    ];
    for (const [override, field] of cases) {
      const res = await createAtlas(species.id, override);
      expect([res.status, Object.keys(res.body)]).toEqual([400, [field]]);
    }
    const missingName = await api.post('/api/atlases/', { token: researcher, json: { species: species.id } });
    expect(missingName.status).toBe(400);
    expect(Object.keys(missingName.body)).toEqual(['name']);
  });

  test('20 parallel creates with one name give 20 atlases with 20 distinct slugs', async () => {
    const name = fresh('Crowded ');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => createAtlas(species.id, { name, version: '1.0' })),
    );
    expect(results.map((r) => r.status)).toEqual(new Array<number>(20).fill(201));
    const slugs = new Set(results.map((r) => r.body.slug as string));
    expect(slugs.size).toBe(20);
    for (const slug of slugs) expect(slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    const listed = await api.get(`/api/atlases/?name=${encodeURIComponent(name.toUpperCase())}`);
    expect(listed.body).toHaveLength(20);
  });

  test('counts of the category and species follow the atlases created', async () => {
    const cat = await createCategory();
    const sp = await createSpecies(cat.id);
    for (let i = 0; i < 4; i++) expect((await createAtlas(sp.id)).status).toBe(201);
    expect((await api.get(`/api/categories/${cat.name}/`)).body.atlases_count).toBe(4);
    const read = await api.get(`/api/species/${encodeURIComponent(sp.scientific_name)}/`);
    expect(read.body).toMatchObject({ atlases_count: 4, brains_count: 0, brains: [] });
    expect(read.body.atlases).toHaveLength(4);
  });

  test('the list filters by species, flags and name; invalid values are 400 on the field', async () => {
    const sp = await createSpecies(category.id);
    const plain = await createAtlas(sp.id);
    const official = await createAtlas(sp.id, { is_official: true }, staff);
    const verified = await createAtlas(sp.id, { verified: true }, staff);
    const ids = (res: { body: { id: number }[] }) => res.body.map((a) => a.id).sort((x, y) => x - y);

    expect(ids(await api.get(`/api/atlases/?species=${sp.id}`))).toEqual(
      [plain.body.id, official.body.id, verified.body.id].sort((x, y) => x - y),
    );
    const bySciName = await api.get(
      `/api/atlases/?species=${sp.scientific_name.replace(' ', '+').toLowerCase()}`,
    );
    expect(bySciName.body).toHaveLength(3);
    expect(ids(await api.get(`/api/atlases/?species=${sp.id}&is_official=true`))).toEqual([official.body.id]);
    expect(ids(await api.get(`/api/atlases/?species=${sp.id}&verified=true`))).toEqual([verified.body.id]);
    expect(ids(await api.get(`/api/atlases/?species=${sp.id}&verified=false&is_official=false`))).toEqual([
      plain.body.id,
    ]);
    expect(ids(await api.get(`/api/atlases/?name=${encodeURIComponent(plain.body.name as string)}`))).toEqual(
      [plain.body.id],
    );

    const maybe = await api.get('/api/atlases/?verified=maybe');
    expect(maybe.status).toBe(400);
    expect(Object.keys(maybe.body)).toEqual(['verified']);
    const official400 = await api.get('/api/atlases/?is_official=perhaps');
    expect(Object.keys(official400.body)).toEqual(['is_official']);

    const paged = await api.get(`/api/atlases/?species=${sp.id}&page_size=2`);
    expect(paged.body).toMatchObject({ count: 3, previous: null });
    expect(paged.body.results).toHaveLength(2);
    expect(paged.body.next).toBe(`${service.url}/api/atlases/?species=${sp.id}&page_size=2&page=2`);
  });
});

test('the fixtures text file named .png is refused as a category image', async () => {
  const fake = readFileSync(path.join(__dirname, '..', 'fixtures', 'images', 'not-an-image.png'));
  const res = await api.post('/api/categories/', {
    token: staff,
    body: form({ name: fresh('c') }, { name: 'not-an-image.png', bytes: fake, type: 'image/png' }),
  });
  expect(res.status).toBe(400);
  expect(res.body.image).toEqual([expect.stringMatching(/valid image/)]);
});
