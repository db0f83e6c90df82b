import { createHash } from 'node:crypto';
import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { type Taxonomy, brainForm, createTaxonomy, fresh, nifti, niftiBytes } from './brainFixtures';

let service: TestService;
let api: Client;
let staff: string;
let alice: { id: number; token: string; username: string; email: string };
let bob: { id: number; token: string };
let mouse: Taxonomy;
let rat: Taxonomy;
/** Brains created for these tests, oldest first. */
const made: { id: number; readable_id: string; name: string }[] = [];
let tag: string;

async function create(fields: Record<string, string | number | boolean>, token: string) {
  const res = await api.post('/api/brains/', { token, body: brainForm(fields, nifti()) });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  made.push(res.body);
  return res.body as { id: number; readable_id: string; name: string };
}

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  [alice, bob] = await Promise.all([newUser(api), newUser(api)]);
  [mouse, rat] = await Promise.all([createTaxonomy(api, staff), createTaxonomy(api, staff)]);
  tag = fresh('tag');
  // Sequential, so "newest first" has one right answer.
  await create({ name: `${tag} Alpha`, atlas: mouse.atlas.id, description: 'first' }, alice.token);
  await create({ name: `${tag} Beta`, atlas: mouse.atlas.id, is_reference: true }, bob.token);
  await create({ name: `${tag} Gamma`, atlas: rat.atlas.id, verified: true }, staff);
  await create({ name: `${tag} Delta`, category: rat.category.id }, alice.token);
});
afterAll(() => service.close());

const names = (body: { name: string }[]): string[] => body.map((b) => b.name);
const list = (query: string) => api.get(`/api/brains/?search=${encodeURIComponent(tag)}&${query}`);

describe('GET /api/brains/', () => {
  test('an array in shape A, newest first', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual([`${tag} Delta`, `${tag} Gamma`, `${tag} Beta`, `${tag} Alpha`]);
    // Beyond shape A: the file's preview (null until processing made one) and metadata.
    const { preview_url: previewUrl, ...alpha } = res.body[3];
    expect([null, `${service.url}/api/brains/${made[0]!.id}/preview/`]).toContain(previewUrl);
    expect(alpha).toEqual({
      id: made[0]!.id,
      readable_id: made[0]!.readable_id,
      name: `${tag} Alpha`,
      description: 'first',
      date_uploaded: expect.any(String),
      visibility: 'public',
      embargo_until: null,
      verified: false,
      color: '',
      atlas: {
        id: mouse.atlas.id,
        name: expect.any(String),
        slug: mouse.atlas.slug,
        description: 'an atlas',
      },
      species: {
        id: mouse.species.id,
        name: expect.any(String),
        scientific_name: mouse.species.scientific_name,
        category: { id: mouse.category.id, name: mouse.category.name },
      },
      uploader: { id: alice.id, username: alice.username, email: alice.email },
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      is_reference: false,
      file_size_mb: 0,
      metadata: expect.any(Object),
    });
    expect(res.body[0]).toMatchObject({ atlas: null, species: null });
  });

  test('with page or page_size, an envelope in shape B; shape= overrides both ways', async () => {
    const paged = await list('page_size=3');
    expect(paged.body).toMatchObject({ count: 4, previous: null });
    expect(paged.body.next).toContain('page=2');
    expect(paged.body.results).toHaveLength(3);
    expect(paged.body.results[0]).toMatchObject({ category: rat.category.id, atlas: null, zarr_file: '' });
    expect((await list('page=2&page_size=3&shape=a')).body.results[0].uploader).toMatchObject({
      id: alice.id,
    });
    expect((await list('shape=b')).body[0].uploader).toBe(alice.id);
    expect((await list('page=3&page_size=3')).status).toBe(404);
  });

  test.each([
    [
      'species (scientific name, any case)',
      () => `species=${encodeURIComponent(mouse.species.scientific_name.toUpperCase())}`,
      ['Beta', 'Alpha'],
    ],
    ['verified', () => 'verified=true', ['Gamma']],
    ['uploader', () => `uploader=${alice.id}`, ['Delta', 'Alpha']],
    ['atlas id', () => `atlas=${rat.atlas.id}`, ['Gamma']],
    ['atlas slug', () => `atlas=${mouse.atlas.slug}`, ['Beta', 'Alpha']],
    ['category id', () => `category=${rat.category.id}`, ['Delta', 'Gamma']],
    ['category name', () => `category=${rat.category.name.toUpperCase()}`, ['Delta', 'Gamma']],
    ['filters with AND', () => `category=${rat.category.id}&uploader=${alice.id}`, ['Delta']],
  ])('filter: %s', async (_, query, expected) => {
    const res = await list(query());
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(expected.map((n) => `${tag} ${n}`));
  });

  // Without search the total comes from the projection's kept counts, not from counting rows:
  // it must still be the number of brains the filters select (this file's service is its own).
  test.each([
    ['no filter', () => '', ['Delta', 'Gamma', 'Beta', 'Alpha']],
    ['species', () => `species=${encodeURIComponent(mouse.species.scientific_name)}`, ['Beta', 'Alpha']],
    ['verified', () => 'verified=false', ['Delta', 'Beta', 'Alpha']],
    ['atlas slug', () => `atlas=${mouse.atlas.slug}`, ['Beta', 'Alpha']],
    ['category name and verified', () => `category=${rat.category.name}&verified=true`, ['Gamma']],
    ['an unknown species', () => 'species=Nullus%20nullus', []],
    ['an unknown atlas slug', () => 'atlas=no-such-atlas', []],
  ])('X-Total-Count and count of %s equal the brains listed', async (_, query, expected) => {
    const all = await api.get(`/api/brains/?${query()}`);
    expect(names(all.body)).toEqual(expected.map((n) => `${tag} ${n}`));
    expect(all.headers.get('x-total-count')).toBe(String(expected.length));
    const paged = await api.get(`/api/brains/?${query()}&page=1&page_size=1`);
    expect(paged.body.count).toBe(expected.length);
    expect(names(paged.body.results)).toEqual(expected.slice(0, 1).map((n) => `${tag} ${n}`));
  });

  // Pages past the middle are read from the other end of the index: every page must still hold
  // the brains the whole list has at its place, in every ordering.
  test.each(['', 'ordering=name', 'ordering=-id', 'species=Nullus%20nullus'])(
    'pages of every size, from both ends, add up to the whole list (%s)',
    async (query) => {
      const whole = names((await api.get(`/api/brains/?${query}`)).body);
      for (const size of [1, 2, 3]) {
        const pages: string[] = [];
        for (let page = 1; page <= Math.max(1, Math.ceil(whole.length / size)); page++) {
          const res = await api.get(`/api/brains/?${query}&page=${page}&page_size=${size}`);
          expect(res.status).toBe(200);
          pages.push(...names(res.body.results));
        }
        expect(pages).toEqual(whole);
      }
    },
  );

  test('search matches a name substring, an exact id or an exact readable_id', async () => {
    const bySubstring = await api.get(`/api/brains/?search=${encodeURIComponent(`${tag} ga`.toUpperCase())}`);
    // The only name containing it comes first; names a typo away may follow (search.e2e tests).
    expect(names(bySubstring.body)[0]).toBe(`${tag} Gamma`);
    const byId = await api.get(`/api/brains/?search=${made[1]!.id}`);
    expect(byId.body.map((b: { id: number }) => b.id)).toContain(made[1]!.id);
    const byReadable = await api.get(`/api/brains/?search=${made[2]!.readable_id}`);
    expect(names(byReadable.body)[0]).toBe(`${tag} Gamma`);
  });

  test('ordering', async () => {
    expect(names((await list('ordering=name')).body)).toEqual(
      ['Alpha', 'Beta', 'Delta', 'Gamma'].map((n) => `${tag} ${n}`),
    );
    expect(names((await list('ordering=date_uploaded')).body)[0]).toBe(`${tag} Alpha`);
  });

  test.each(['verified=maybe', 'uploader=abc', 'page=0', 'shape=c'])(
    '%s is 400 on its field',
    async (query) => {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toContain(query.split('=')[0]);
    },
  );
});

describe('one brain', () => {
  test('a numeric key is the id (shape B), any other the readable_id (shape A), with a weak ETag', async () => {
    const beta = made[1]!;
    const byId = await api.get(`/api/brains/${beta.id}/`);
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({
      id: beta.id,
      uploader: bob.id,
      atlas: mouse.atlas.id,
      is_reference: true,
    });
    expect(byId.headers.get('etag')).toMatch(/^W\/"0\.[0-9a-f]{16}"$/);
    const byReadable = await api.get(`/api/brains/${beta.readable_id}/`);
    expect(byReadable.body).toMatchObject({ id: beta.id, uploader: { id: bob.id } });
    expect((await api.get(`/api/brains/${beta.id}/?shape=a`)).body.uploader).toMatchObject({ id: bob.id });
    expect((await api.get('/api/brains/999999/')).status).toBe(404);
    expect((await api.get('/api/brains/99999999999999/')).status).toBe(404);
    expect((await api.get('/api/brains/no-such-brain-1/')).status).toBe(404);
  });

  test('by_readable_id answers shape A; 400 without the parameter, 404 when unknown', async () => {
    const res = await api.get(`/api/brains/by_readable_id/?readable_id=${made[0]!.readable_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: made[0]!.id, uploader: { id: alice.id } });
    const missing = await api.get('/api/brains/by_readable_id/');
    expect(missing.status).toBe(400);
    expect(missing.body).toHaveProperty('readable_id');
    expect((await api.get('/api/brains/by_readable_id/?readable_id=nope-1')).status).toBe(404);
  });

  test("by_atlas_slug answers the atlas's reference brain, else its oldest, in shape B", async () => {
    const reference = await api.get(`/api/brains/by_atlas_slug/?slug=${mouse.atlas.slug}`);
    expect(reference.status).toBe(200);
    expect(reference.body).toMatchObject({ id: made[1]!.id, uploader: bob.id });
    const oldest = await api.get(`/api/brains/by_atlas_slug/?slug=${rat.atlas.slug}`);
    expect(oldest.body.id).toBe(made[2]!.id);
    const empty = await createTaxonomy(api, staff);
    expect((await api.get(`/api/brains/by_atlas_slug/?slug=${empty.atlas.slug}`)).status).toBe(404);
    expect((await api.get('/api/brains/by_atlas_slug/?slug=no-such-atlas')).status).toBe(404);
    const missing = await api.get('/api/brains/by_atlas_slug/');
    expect(missing.status).toBe(400);
    expect(missing.body).toHaveProperty('slug');
  });

  test('s3_url and image download the stored bytes, with Content-Length and the SHA-256 as ETag', async () => {
    const detail = await api.get(`/api/brains/${made[0]!.id}/`);
    for (const url of [detail.body.s3_url as string, detail.body.image as string]) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.equals(niftiBytes())).toBe(true);
      expect(res.headers.get('content-length')).toBe(String(bytes.length));
      expect(res.headers.get('etag')).toBe(`"${createHash('sha256').update(bytes).digest('hex')}"`);
    }
    expect((await api.get('/api/brains/999999/file/')).status).toBe(404);
  });
});
