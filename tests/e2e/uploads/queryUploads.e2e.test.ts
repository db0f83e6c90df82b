import type { Client } from '#tests/support/httpClient';
import { newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { encodePng } from '#tests/media/imageEncoders';
import { brainForm, createTaxonomy, nifti } from '#tests/e2e/brains/brainFixtures';
import { waitFor } from '#tests/support/waitFor';
import { UPLOAD_WAIT, filesUnder, finishProcessing, upload } from './uploadFixtures';

let service: TestService;
let api: Client;
let staff: string;
let alice: { id: number; token: string };
let bob: { id: number; token: string };
/** Alice's uploads, oldest first. */
const ids: string[] = [];
let brain: { id: number; readable_id: string; name: string };
let brainUploadId: string;

beforeAll(async () => {
  // These tests drive processing themselves (finishProcessing appends its events), so each outcome
  // is known; the processor's own behaviour is tested in tests/processor and processing.e2e.
  ({ service, api, staff } = await startCuratedService({
    PROCESSOR_ENABLED: 'false',
  }));
  [alice, bob] = [await newUser(api), await newUser(api)];
  for (const name of ['a.nii', 'b.tif', 'c.zarr']) {
    const res = await upload(api, alice.token, name, Buffer.from(name));
    expect(res.status).toBe(201);
    ids.push(res.body.id as string);
  }
  const place = await createTaxonomy(api, staff);
  const created = await api.post('/api/brains/', {
    token: alice.token,
    body: brainForm({ name: 'Filed', atlas: place.atlas.id }, nifti('filed.nii')),
  });
  expect(created.status).toBe(201);
  brain = created.body;
  const own = await api.get(`/api/file-uploads/?associated_brain=${brain.id}`, { token: alice.token });
  brainUploadId = own.body[0].id as string;
  expect((await upload(api, bob.token, 'bob.nii', Buffer.from('bob'))).status).toBe(201);
});
afterAll(() => service.close());

const get = (path: string, token = alice.token) => api.get(path, { token });
const detail = (id: string, token = alice.token) => get(`/api/file-uploads/${id}/`, token);

describe('GET /api/file-uploads/', () => {
  test('your own uploads only, newest first, as an array with X-Total-Count', async () => {
    const res = await get('/api/file-uploads/');
    expect(res.status).toBe(200);
    expect(res.body.map((u: { id: string }) => u.id)).toEqual([brainUploadId, ...[...ids].reverse()]);
    expect(res.headers.get('x-total-count')).toBe('4');
    expect(res.body[0].associated_brain).toEqual({
      id: brain.id,
      name: 'Filed',
      readable_id: brain.readable_id,
    });
    const bobs = await get('/api/file-uploads/', bob.token);
    expect(bobs.body.map((u: { filename: string }) => u.filename)).toEqual(['bob.nii']);
    // Staff see their own list too: administration of others' files goes by id.
    expect((await get('/api/file-uploads/', staff)).body).toEqual([]);
  });

  test('with page or page_size, the paginated envelope', async () => {
    const first = await get('/api/file-uploads/?page_size=3');
    expect(first.body).toMatchObject({ count: 4, previous: null });
    expect(first.body.results).toHaveLength(3);
    expect(first.body.next).toBe(`${service.url}/api/file-uploads/?page_size=3&page=2`);
    const second = await get('/api/file-uploads/?page=2&page_size=3');
    expect(second.body.results.map((u: { id: string }) => u.id)).toEqual([ids[0]]);
    expect((await get('/api/file-uploads/?page=3&page_size=3')).status).toBe(404);
    expect((await get('/api/file-uploads/?page=0')).status).toBe(400);
  });

  test('filters status and associated_brain; invalid values are 400 on the field', async () => {
    await finishProcessing(service.databaseUrl, service.dataDir, ids[1]!, { reason: 'not a TIFF file' });
    await waitFor('the upload to be failed', async () => (await detail(ids[1]!)).body.status, {
      ...UPLOAD_WAIT,
      until: (status) => status === 'failed',
    });
    const failed = await get('/api/file-uploads/?status=failed');
    expect(failed.body.map((u: { id: string }) => u.id)).toEqual([ids[1]]);
    const uploaded = await get('/api/file-uploads/?status=uploaded&associated_brain=none');
    expect(uploaded.body.map((u: { id: string }) => u.id)).toEqual([ids[2], ids[0]]);
    const ofBrain = await get(`/api/file-uploads/?associated_brain=${brain.id}&page=1`);
    expect(ofBrain.body.results.map((u: { id: string }) => u.id)).toEqual([brainUploadId]);
    const badStatus = await get('/api/file-uploads/?status=done');
    expect(badStatus.status).toBe(400);
    expect(Object.keys(badStatus.body)).toEqual(['status']);
    const badBrain = await get('/api/file-uploads/?associated_brain=abc');
    expect(badBrain.status).toBe(400);
    expect(Object.keys(badBrain.body)).toEqual(['associated_brain']);
  });

  test('401 without a token', async () => {
    expect((await api.get('/api/file-uploads/')).status).toBe(401);
  });
});

describe('GET /api/file-uploads/{id}/', () => {
  test('the owner and staff see it; another user, an unknown or an invalid id get 404', async () => {
    const own = await detail(ids[0]!);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: ids[0], filename: 'a.nii', status: 'uploaded', metadata: {} });
    expect((await detail(ids[0]!, staff)).body.id).toBe(ids[0]);
    expect((await detail(ids[0]!, bob.token)).status).toBe(404);
    expect((await detail('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await detail('not-a-uuid')).status).toBe(404);
    expect((await api.get(`/api/file-uploads/${ids[0]}/`)).status).toBe(401);
  });

  test('a failed upload carries its reason in metadata.error', async () => {
    await waitFor('the upload to be failed', async () => (await detail(ids[1]!)).body.status, {
      ...UPLOAD_WAIT,
      until: (status) => status === 'failed',
    });
    const res = await detail(ids[1]!);
    expect(res.body).toMatchObject({ metadata: { error: 'not a TIFF file' }, preview_url: null });
    expect(res.body.processing_started).toEqual(expect.any(String));
    expect(res.body.processing_completed).toEqual(expect.any(String));
  });
});

describe('previews', () => {
  const png = encodePng(4, 3);

  test('preview_url appears once processing stored one; the PNG is served with caching headers', async () => {
    expect((await get(`/api/file-uploads/${ids[0]}/preview/`)).status).toBe(404);
    await finishProcessing(service.databaseUrl, service.dataDir, ids[0]!, {
      metadata: { format: 'nifti1', shape: [2, 2, 2] },
      preview: png,
    });
    await waitFor('the upload to be completed', async () => (await detail(ids[0]!)).body.status, {
      ...UPLOAD_WAIT,
      until: (status) => status === 'completed',
    });
    const res = await detail(ids[0]!);
    expect(res.body.metadata).toEqual({ format: 'nifti1', shape: [2, 2, 2] });
    expect(res.body.preview_url).toBe(`${service.url}/api/file-uploads/${ids[0]}/preview/`);
    const preview = await fetch(res.body.preview_url as string, {
      headers: { Authorization: `Token ${alice.token}` },
    });
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-type')).toBe('image/png');
    // A private upload's preview is never stored by a cache; its ETag still revalidates.
    expect(preview.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await preview.arrayBuffer())).toEqual(png);
    const etag = preview.headers.get('etag')!;
    const again = await get(`/api/file-uploads/${ids[0]}/preview/`, alice.token);
    expect(again.headers.get('etag')).toBe(etag);
    const revalidated = await api.get(`/api/file-uploads/${ids[0]}/preview/`, {
      token: alice.token,
      headers: { 'If-None-Match': etag },
    });
    expect(revalidated.status).toBe(304);
    expect((await get(`/api/file-uploads/${ids[0]}/preview/`, bob.token)).status).toBe(404);
    expect((await get(`/api/file-uploads/${ids[0]}/preview/`, staff)).status).toBe(200);
  });

  test("a brain carries its file's preview_url and metadata in both shapes; the brain preview is public", async () => {
    const before = await api.get(`/api/brains/${brain.id}/`);
    expect(before.body).toMatchObject({ preview_url: null, metadata: {} });
    await finishProcessing(service.databaseUrl, service.dataDir, brainUploadId, {
      metadata: { format: 'nifti1' },
      preview: png,
    });
    const url = `${service.url}/api/brains/${brain.id}/preview/`;
    await waitFor(
      'the brain to show the preview',
      async () => (await api.get(`/api/brains/${brain.id}/`)).body.preview_url,
      { ...UPLOAD_WAIT, until: (previewUrl) => previewUrl === url },
    );
    const shapeA = await api.get(`/api/brains/${brain.readable_id}/`);
    expect(shapeA.body).toMatchObject({ preview_url: url, metadata: { format: 'nifti1' } });
    const preview = await fetch(url);
    expect(preview.status).toBe(200);
    expect(preview.headers.get('cache-control')).toBe('public, no-cache');
    expect(Buffer.from(await preview.arrayBuffer())).toEqual(png);
    const upload = await detail(brainUploadId);
    expect(upload.body.preview_url).toBe(`${service.url}/api/file-uploads/${brainUploadId}/preview/`);
  });
});

describe('DELETE /api/file-uploads/{id}/', () => {
  test('the owner deletes it: 204, its bytes and preview are gone, then 404', async () => {
    const res = await upload(api, alice.token, 'doomed.nii', Buffer.from('doomed'));
    const id = res.body.id as string;
    await finishProcessing(service.databaseUrl, service.dataDir, id, {
      metadata: { format: 'nifti1' },
      preview: encodePng(1, 1),
    });
    await waitFor('the upload to be completed', async () => (await detail(id)).body.status, {
      ...UPLOAD_WAIT,
      until: (status) => status === 'completed',
    });
    const uploadsBefore = filesUnder(service.dataDir).length;
    expect(filesUnder(service.dataDir, 'previews')).toContain(`${id}.png`);
    expect((await api.delete(`/api/file-uploads/${id}/`, { token: bob.token })).status).toBe(404);
    const deleted = await api.delete(`/api/file-uploads/${id}/`, { token: alice.token });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(filesUnder(service.dataDir)).toHaveLength(uploadsBefore - 2);
    expect(filesUnder(service.dataDir, 'previews')).not.toContain(`${id}.png`);
    expect((await detail(id)).status).toBe(404);
    expect((await get(`/api/file-uploads/${id}/download/`)).status).toBe(404);
    expect((await api.delete(`/api/file-uploads/${id}/`, { token: alice.token })).status).toBe(404);
  });

  test("staff may delete anyone's upload; a brain's file is 409 (delete the brain); bad ids 404", async () => {
    const res = await upload(api, bob.token, 'bobs.nii', Buffer.from('x'));
    expect((await api.delete(`/api/file-uploads/${res.body.id}/`, { token: staff })).status).toBe(204);
    const brainFile = await api.delete(`/api/file-uploads/${brainUploadId}/`, { token: alice.token });
    expect(brainFile.status).toBe(409);
    expect(brainFile.body.detail).toContain('delete the brain');
    expect((await detail(brainUploadId)).status).toBe(200);
    expect((await api.delete('/api/file-uploads/nope/', { token: alice.token })).status).toBe(404);
    expect((await api.delete(`/api/file-uploads/${ids[2]}/`)).status).toBe(401);
  });
});
