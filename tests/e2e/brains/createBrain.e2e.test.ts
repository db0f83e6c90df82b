import { Client as PgClient } from 'pg';
import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import {
  type Taxonomy,
  brainForm,
  createTaxonomy,
  fresh,
  nifti,
  storedUploads,
  tiffBytes,
} from './brainFixtures';

const MAX_UPLOAD_BYTES = 64 * 1024;

let service: TestService;
let api: Client;
let staff: string;
let researcher: { id: number; token: string };
let mouse: Taxonomy;
let rat: Taxonomy;

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService({ MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) }));
  researcher = await newUser(api);
  [mouse, rat] = await Promise.all([createTaxonomy(api, staff), createTaxonomy(api, staff)]);
});
afterAll(() => service.close());

const create = (form: FormData, token: string | undefined = researcher.token) =>
  api.post('/api/brains/', { token, body: form });

describe('POST /api/brains/', () => {
  test('201 in shape B: species and category come from the atlas', async () => {
    const res = await create(
      brainForm(
        {
          name: 'P56 Reference',
          atlas: mouse.atlas.id,
          is_reference: 'true',
          extra_link: 'https://example.org/p56',
          website: 'https://example.org',
          color: '#ABC',
        },
        nifti('p56.nii'),
      ),
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'P56 Reference',
      date_uploaded: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      visibility: 'public',
      embargo_until: null,
      image: `${service.url}/api/brains/${res.body.id}/file/`,
      website: 'https://example.org',
      verified: false,
      category: mouse.category.id,
      uploader: researcher.id,
      atlas: mouse.atlas.id,
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      zarr_file: '',
      is_reference: true,
      extra_link: 'https://example.org/p56',
      readable_id: `p56-reference-${res.body.id}`,
      s3_url: `${service.url}/api/brains/${res.body.id}/file/`,
    });
  });

  test('a TIFF may come as image; a category alone files the brain without an atlas', async () => {
    const res = await create(
      brainForm(
        { name: 'Section', category: mouse.category.id },
        { field: 'image', name: 'section.TIF', bytes: tiffBytes() },
      ),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ atlas: null, category: mouse.category.id, extra_link: '', website: '' });
  });

  test('a category matching the atlas is accepted; one contradicting it is 400', async () => {
    const same = await create(
      brainForm({ name: 'Same', atlas: mouse.atlas.id, category: mouse.category.id }, nifti()),
    );
    expect(same.status).toBe(201);
    const other = await create(
      brainForm({ name: 'Other', atlas: mouse.atlas.id, category: rat.category.id }, nifti()),
    );
    expect(other.status).toBe(400);
    expect(other.body.category).toEqual([expect.stringContaining('does not match')]);
  });

  test.each([
    ['no name', { atlas: 'ATLAS' }, [nifti()], 'name'],
    ['no file', { name: 'x', atlas: 'ATLAS' }, [], 'file'],
    ['an unsupported format', { name: 'x', atlas: 'ATLAS' }, [{ name: 'x.png', bytes: tiffBytes() }], 'file'],
    [
      'a non-TIFF image',
      { name: 'x', atlas: 'ATLAS' },
      [{ field: 'image' as const, name: 'x.nii', bytes: tiffBytes() }],
      'image',
    ],
    ['no atlas nor category', { name: 'x' }, [nifti()], 'non_field_errors'],
    ['an unknown atlas', { name: 'x', atlas: 999_999 }, [nifti()], 'atlas'],
    ['an unknown category', { name: 'x', category: 999_999 }, [nifti()], 'category'],
    ['a bad colour', { name: 'x', atlas: 'ATLAS', color: 'red' }, [nifti()], 'color'],
    ['a non-integer atlas', { name: 'x', atlas: 'abc' }, [nifti()], 'atlas'],
    ['a bad extra_link', { name: 'x', atlas: 'ATLAS', extra_link: 'ftp://x' }, [nifti()], 'extra_link'],
    [
      'both file and image',
      { name: 'x', atlas: 'ATLAS' },
      [nifti(), { field: 'image' as const, name: 'x.tif', bytes: tiffBytes() }],
      'non_field_errors',
    ],
  ])('%s is 400 on the field, and no file bytes stay stored', async (_, fields, files, field) => {
    const before = storedUploads(service.dataDir).length;
    const withAtlas = Object.fromEntries(
      Object.entries(fields).map(([k, v]) => [k, v === 'ATLAS' ? mouse.atlas.id : v]),
    );
    const res = await create(brainForm(withAtlas, ...files));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toContain(field);
    expect(storedUploads(service.dataDir)).toHaveLength(before);
  });

  test('401 without a token', async () => {
    const res = await api.post('/api/brains/', {
      body: brainForm({ name: 'x', atlas: mouse.atlas.id }, nifti()),
    });
    expect(res.status).toBe(401);
  });

  test('only staff may set verified', async () => {
    const refused = await create(brainForm({ name: 'V', atlas: mouse.atlas.id, verified: 'true' }, nifti()));
    expect(refused.status).toBe(403);
    const accepted = await create(
      brainForm({ name: 'V', atlas: mouse.atlas.id, verified: 'true' }, nifti()),
      staff,
    );
    expect(accepted.status).toBe(201);
    expect(accepted.body.verified).toBe(true);
  });

  test('a file over MAX_UPLOAD_BYTES is 413 while streaming and leaves nothing stored', async () => {
    const before = storedUploads(service.dataDir).length;
    const big = { name: 'big.nii', bytes: Buffer.alloc(MAX_UPLOAD_BYTES + 1) };
    const res = await create(brainForm({ name: 'Big', atlas: mouse.atlas.id }, big));
    expect(res.status).toBe(413);
    expect(storedUploads(service.dataDir)).toHaveLength(before);
  });

  test('a .zarr file is served as zarr_file too', async () => {
    const res = await create(
      brainForm({ name: 'Store', atlas: rat.atlas.id }, { name: 'store.zarr', bytes: Buffer.from('PK') }),
    );
    expect(res.status).toBe(201);
    expect(res.body.zarr_file).toBe(res.body.s3_url);
  });

  test('20 parallel creates in one atlas: 20×201, distinct readable_ids, exact counts', async () => {
    const place = await createTaxonomy(api, staff);
    const name = fresh('Parallel ');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => create(brainForm({ name, atlas: place.atlas.id }, nifti()))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(results.map((r) => r.body.readable_id as string)).size).toBe(20);
    const atlas = await api.get(`/api/atlases/${place.atlas.slug}/`);
    expect(atlas.body.brains_count).toBe(20);
    const category = await api.get(`/api/categories/${place.category.name}/`);
    expect(category.body.brains_count).toBe(20);
  });

  test('with an Idempotency-Key, a repeat replays the create: one brain, one stored file', async () => {
    const before = storedUploads(service.dataDir).length;
    const send = () =>
      api.post('/api/brains/', {
        token: researcher.token,
        body: brainForm({ name: 'Once', atlas: rat.atlas.id }, nifti()),
        headers: { 'Idempotency-Key': fresh('brain-key-') },
      });
    const key = fresh('brain-key-');
    const again = () =>
      api.post('/api/brains/', {
        token: researcher.token,
        body: brainForm({ name: 'Once', atlas: rat.atlas.id }, nifti()),
        headers: { 'Idempotency-Key': key },
      });
    const first = await again();
    const second = await again();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.id).toBe(first.body.id);
    expect(storedUploads(service.dataDir)).toHaveLength(before + 1);
    expect((await send()).status).toBe(201);
    expect(storedUploads(service.dataDir)).toHaveLength(before + 2);
  });

  test('when the brain cannot be recorded, nothing of the create is (id, upload, brain: one append) and its bytes are deleted', async () => {
    const db = new PgClient({ connectionString: service.databaseUrl });
    await db.connect();
    try {
      // The append of the brain's events fails (as a lost database would make it fail).
      await db.query(`
        CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused for the test'; END $$;
        CREATE TRIGGER refuse_doomed BEFORE INSERT ON event_store.events FOR EACH ROW
        WHEN (NEW.event_type = 'BrainCreated' AND NEW.data->>'name' = 'Doomed')
        EXECUTE FUNCTION refuse_doomed();`);
      const before = storedUploads(service.dataDir).length;
      const res = await create(brainForm({ name: 'Doomed', atlas: mouse.atlas.id }, nifti('doomed.nii')));
      expect(res.status).toBe(500);
      expect(storedUploads(service.dataDir)).toHaveLength(before);
      const { rows } = await db.query<{ event_type: string }>(
        `SELECT event_type FROM event_store.events
          WHERE (event_type = 'UploadReceived' AND data->>'filename' = 'doomed.nii')
             OR (event_type = 'BrainCreated' AND data->>'name' = 'Doomed')`,
      );
      // The id, the upload and the brain are one atomic append: none of them was recorded, so
      // there is no upload to withdraw and nothing for the processor to begin on.
      expect(rows).toEqual([]);
      // The next create works, at the next id after the last one taken.
      const next = await create(brainForm({ name: 'Spared', atlas: mouse.atlas.id }, nifti('spared.nii')));
      expect(next.status).toBe(201);
    } finally {
      await db.query(
        'DROP TRIGGER IF EXISTS refuse_doomed ON event_store.events; DROP FUNCTION IF EXISTS refuse_doomed()',
      );
      await db.end();
    }
  });
});
