import { Client as PgClient } from 'pg';
import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { waitFor } from '#tests/support/waitFor';
import { type Taxonomy, brainForm, createTaxonomy, nifti, storedUploads } from './brainFixtures';

let service: TestService;
let api: Client;
let staff: string;
let owner: { id: number; token: string };
let stranger: { id: number; token: string };
let mouse: Taxonomy;
let rat: Taxonomy;
let db: PgClient;

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  [owner, stranger] = await Promise.all([newUser(api), newUser(api)]);
  [mouse, rat] = await Promise.all([createTaxonomy(api, staff), createTaxonomy(api, staff)]);
  db = new PgClient({ connectionString: service.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await service.close();
});

/** The brain's file upload records in the read model (a write answers once they are applied). */
const uploadsOf = async (brainId: number) =>
  (
    await db.query<{ status: string; filename: string; size_bytes: string; sha256: string }>(
      'SELECT status, filename, size_bytes, sha256 FROM file_uploads WHERE associated_brain_id = $1',
      [brainId],
    )
  ).rows;

interface Brain {
  id: number;
  readable_id: string;
}

async function createBrain(place: Taxonomy = mouse, token = owner.token): Promise<Brain> {
  const res = await api.post('/api/brains/', {
    token,
    body: brainForm(
      { name: 'Original', atlas: place.atlas.id, description: 'd', extra_link: 'https://x.org' },
      nifti(),
    ),
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Brain;
}

const count = async (path: string): Promise<number> => (await api.get(path)).body.brains_count as number;

describe('PATCH /api/brains/{key}/', () => {
  test('the uploader changes fields by id or readable_id; 200 in shape B; GET shows it', async () => {
    const brain = await createBrain();
    const res = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { name: 'Renamed', color: '#FFF', website: 'https://example.org' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: brain.id,
      name: 'Renamed',
      website: 'https://example.org',
      extra_link: 'https://x.org',
      readable_id: brain.readable_id,
      atlas: mouse.atlas.id,
      uploader: owner.id,
    });
    expect(res.headers.get('etag')).toBe('W/"1"');
    const byReadable = await api.patch(`/api/brains/${brain.readable_id}/`, {
      token: owner.token,
      json: { description: 'new' },
    });
    expect(byReadable.status).toBe(200);
    const shown = await api.get(`/api/brains/${brain.readable_id}/`);
    expect(shown.body).toMatchObject({ name: 'Renamed', description: 'new', color: '#ffffff' });
  });

  test('401 without a token, 403 for another user, 404 for an unknown key', async () => {
    const brain = await createBrain();
    const json = { name: 'x' };
    expect((await api.patch(`/api/brains/${brain.id}/`, { json })).status).toBe(401);
    expect((await api.patch(`/api/brains/${brain.id}/`, { token: stranger.token, json })).status).toBe(403);
    expect((await api.patch('/api/brains/999999/', { token: owner.token, json })).status).toBe(404);
    const wrongName = `not-it-${brain.id}`;
    expect((await api.patch(`/api/brains/${wrongName}/`, { token: owner.token, json })).status).toBe(404);
  });

  test('only staff may change verified', async () => {
    const brain = await createBrain();
    const json = { verified: true };
    expect((await api.patch(`/api/brains/${brain.id}/`, { token: owner.token, json })).status).toBe(403);
    const res = await api.patch(`/api/brains/${brain.id}/`, { token: staff, json });
    expect(res.status).toBe(200);
    expect(res.body.verified).toBe(true);
  });

  test('a new atlas moves the brain: category derived, counts follow; a contradicting category is 400', async () => {
    const place = await createTaxonomy(api, staff);
    const other = await createTaxonomy(api, staff);
    const brain = await createBrain(place);
    const moved = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { atlas: other.atlas.id },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ atlas: other.atlas.id, category: other.category.id });
    expect(await count(`/api/atlases/${place.atlas.slug}/`)).toBe(0);
    expect(await count(`/api/atlases/${other.atlas.slug}/`)).toBe(1);
    expect(await count(`/api/categories/${other.category.name}/`)).toBe(1);
    const refused = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { category: rat.category.id },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toHaveProperty('category');
    const bad = await api.patch(`/api/brains/${brain.id}/`, { token: owner.token, json: { color: 'blue' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toHaveProperty('color');
  });

  test('If-Match: the current ETag is accepted, a stale one is 409', async () => {
    const brain = await createBrain();
    const etag = (await api.get(`/api/brains/${brain.id}/`)).headers.get('etag')!;
    const first = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { name: 'First' },
      headers: { 'If-Match': etag },
    });
    expect(first.status).toBe(200);
    const stale = await api.patch(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { name: 'Second' },
      headers: { 'If-Match': etag },
    });
    expect(stale.status).toBe(409);
    expect((await api.get(`/api/brains/${brain.id}/`)).body.name).toBe('First');
  });
});

describe('PUT /api/brains/{key}/', () => {
  test('replaces every field; absent optional ones return to their defaults', async () => {
    const brain = await createBrain();
    const res = await api.put(`/api/brains/${brain.id}/`, {
      token: owner.token,
      json: { name: 'Replaced', category: rat.category.id },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Replaced',
      atlas: null,
      category: rat.category.id,
      extra_link: '',
    });
    expect((await api.get(`/api/brains/${brain.id}/?shape=a`)).body.description).toBe('');
  });

  test('multipart text fields are accepted', async () => {
    const brain = await createBrain();
    const res = await api.put(`/api/brains/${brain.id}/`, {
      token: owner.token,
      body: brainForm({ name: 'Form', atlas: rat.atlas.id, is_reference: true }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Form', atlas: rat.atlas.id, is_reference: true });
  });

  test.each([
    ['name', { atlas: 'ATLAS' }],
    ['non_field_errors', { name: 'x' }],
  ])('without what create requires: 400 on %s', async (field, json) => {
    const brain = await createBrain();
    const body = Object.fromEntries(
      Object.entries(json).map(([k, v]) => [k, v === 'ATLAS' ? mouse.atlas.id : v]),
    );
    const res = await api.put(`/api/brains/${brain.id}/`, { token: owner.token, json: body });
    expect(res.status).toBe(400);
    expect(res.body).toHaveProperty(field);
  });
});

describe('DELETE /api/brains/{key}/', () => {
  test('204; the brain, its upload record and its stored bytes are gone', async () => {
    const brain = await createBrain();
    const detail = await api.get(`/api/brains/${brain.id}/`);
    expect((await fetch(detail.body.s3_url as string)).status).toBe(200);
    expect(await uploadsOf(brain.id)).toEqual([
      {
        // The all-in-one's processor may already be at it.
        status: expect.stringMatching(/^(uploaded|processing|completed)$/),
        filename: 'brain.nii',
        size_bytes: '360',
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    const before = storedUploads(service.dataDir).length;
    expect((await api.delete(`/api/brains/${brain.id}/`, { token: stranger.token })).status).toBe(403);
    expect((await api.delete(`/api/brains/${brain.id}/`)).status).toBe(401);
    const res = await api.delete(`/api/brains/${brain.readable_id}/`, { token: owner.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get(`/api/brains/${brain.id}/`)).status).toBe(404);
    expect((await api.get(`/api/brains/${brain.id}/file/`)).status).toBe(404);
    expect(storedUploads(service.dataDir)).toHaveLength(before - 1);
    expect(await uploadsOf(brain.id)).toEqual([]);
    expect((await api.delete(`/api/brains/${brain.id}/`, { token: owner.token })).status).toBe(404);
  });

  test('staff may delete any brain', async () => {
    const brain = await createBrain();
    expect((await api.delete(`/api/brains/${brain.id}/`, { token: staff })).status).toBe(204);
  });

  test('counts stay exact after parallel creates and deletes', async () => {
    const place = await createTaxonomy(api, staff);
    const brains = await Promise.all(Array.from({ length: 12 }, () => createBrain(place)));
    const statuses = await Promise.all(
      brains
        .slice(0, 7)
        .map(async (b) => (await api.delete(`/api/brains/${b.id}/`, { token: owner.token })).status),
    );
    expect(statuses).toEqual(Array(7).fill(204));
    expect(await count(`/api/atlases/${place.atlas.slug}/`)).toBe(5);
    expect(await count(`/api/categories/${place.category.name}/`)).toBe(5);
    const listed = await api.get(`/api/brains/?atlas=${place.atlas.id}`);
    expect(listed.body).toHaveLength(5);
  });

  test('a delete cut short before its uploads are gone is finished by a repeated DELETE (404)', async () => {
    const brain = await createBrain();
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM file_uploads WHERE associated_brain_id = $1',
      [brain.id],
    );
    const stream = `upload-${rows[0]!.id}`;
    const before = storedUploads(service.dataDir).length;
    await db.query(`
      CREATE FUNCTION refuse_upload_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused for the test'; END $$;
      CREATE TRIGGER refuse_upload_delete BEFORE INSERT ON event_store.events FOR EACH ROW
      WHEN (NEW.event_type = 'UploadDeleted' AND NEW.stream_name = '${stream}')
      EXECUTE FUNCTION refuse_upload_delete();`);
    try {
      expect((await api.delete(`/api/brains/${brain.id}/`, { token: owner.token })).status).toBe(500);
      expect(storedUploads(service.dataDir)).toHaveLength(before);
    } finally {
      await db.query(
        'DROP TRIGGER IF EXISTS refuse_upload_delete ON event_store.events; DROP FUNCTION IF EXISTS refuse_upload_delete()',
      );
    }
    expect((await api.delete(`/api/brains/${brain.id}/`, { token: owner.token })).status).toBe(404);
    expect(storedUploads(service.dataDir)).toHaveLength(before - 1);
    // A 404 does not wait for the read models: wait (bounded) until the record is gone there too.
    await waitFor('the upload record to be gone from the read models', () => uploadsOf(brain.id), {
      timeoutMs: 30_000,
      until: (uploads) => uploads.length === 0,
    });
  });
});
