import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { waitFor } from '#tests/support/waitFor';
import { brainForm, createTaxonomy, nifti, type Taxonomy } from '#tests/e2e/brains/brainFixtures';

/**
 * `as_of` on the brain, file upload and account detail routes (decisions.md "Audit", As of): the
 * representation right after the last event at or before a time or a position, by replay, with
 * X-As-Of-Position; 404 before the create and after the delete; a future time is now; 400 on a bad
 * value; the access rules of the route.
 */
let service: TestService;
let api: Client;
let staff: string;
let uploader: Awaited<ReturnType<typeof newUser>>;
let stranger: Awaited<ReturnType<typeof newUser>>;
let taxonomy: Taxonomy;
let brain: { id: number; readable_id: string };
let uploadId: string;
/** X-Event-Position of the create and of the two renames. */
let created: string;
let renamed: string;
let renamedAgain: string;
/** recorded_at of the two renames (from the brain's history). */
let renamedAt: string;
let renamedAgainAt: string;

const FUTURE = '2999-01-01T00:00:00Z';
const PAST = '2000-01-01T00:00:00Z';
const brainPath = (key: string | number = brain.id, asOf?: string) =>
  `/api/brains/${key}/${asOf === undefined ? '' : `?as_of=${encodeURIComponent(asOf)}`}`;

function position(res: { status: number; headers: Headers; text: string }): string {
  if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
  const value = res.headers.get('x-event-position');
  if (!value) throw new Error('no X-Event-Position');
  return value;
}

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  [uploader, stranger] = await Promise.all([newUser(api), newUser(api)]);
  taxonomy = await createTaxonomy(api, staff);
  const res = await api.post('/api/brains/', {
    token: uploader.token,
    body: brainForm({ name: 'Before', atlas: taxonomy.atlas.id, description: 'd' }, nifti()),
  });
  created = position(res);
  brain = res.body;
  // The file's processing ends before the edits, so that the renames are each the newest event of the answer.
  const list = await api.get('/api/file-uploads/', { token: uploader.token });
  uploadId = (list.body as Array<{ id: string }>)[0]!.id;
  await waitFor(
    'the processing of the brain file',
    async () => {
      const upload = await api.get(`/api/file-uploads/${uploadId}/`, { token: uploader.token });
      return upload.body.status === 'completed' || upload.body.status === 'failed';
    },
    { timeoutMs: 90_000, intervalMs: 50 },
  );
  await sleep(20);
  renamed = position(await api.patch(brainPath(), { token: uploader.token, json: { name: 'Middle' } }));
  await sleep(20);
  renamedAgain = position(await api.patch(brainPath(), { token: uploader.token, json: { name: 'After' } }));
  const history = (await api.get(`/api/brains/${brain.id}/history/`, { token: uploader.token }))
    .body as Array<{
    position: string;
    recorded_at: string;
  }>;
  renamedAt = history.find((e) => e.position === renamed)!.recorded_at;
  renamedAgainAt = history.find((e) => e.position === renamedAgain)!.recorded_at;
}, 120_000);
afterAll(() => service.close());

describe('GET /api/brains/{key}/?as_of=', () => {
  test('between two edits, by position: the state after the first, standing at its position', async () => {
    const res = await api.get(brainPath(brain.id, renamed));
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Middle');
    expect(res.headers.get('x-as-of-position')).toBe(renamed);
    expect(res.headers.get('etag')).toBeNull();
    const again = await api.get(brainPath(brain.id, renamedAgain));
    expect(again.body.name).toBe('After');
    expect(again.headers.get('x-as-of-position')).toBe(renamedAgain);
  });

  test('between two edits, by time: at the first rename and just before the second', async () => {
    expect(Date.parse(renamedAgainAt)).toBeGreaterThan(Date.parse(renamedAt));
    for (const time of [renamedAt, new Date(Date.parse(renamedAgainAt) - 1).toISOString()]) {
      const res = await api.get(brainPath(brain.id, time));
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('Middle');
      expect(res.headers.get('x-as-of-position')).toBe(renamed);
    }
    // A time with an offset names the same instant.
    const offset = new Date(Date.parse(renamedAt) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    expect((await api.get(brainPath(brain.id, offset))).body.name).toBe('Middle');
  });

  test('the create itself, shape A by readable_id with its atlas, species and uploader as they were', async () => {
    const b = await api.get(brainPath(brain.id, created));
    expect(b.body.name).toBe('Before');
    expect(b.headers.get('x-as-of-position')).toBe(created);
    const a = await api.get(brainPath(brain.readable_id, renamed));
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      id: brain.id,
      readable_id: brain.readable_id,
      name: 'Middle',
      atlas: { id: taxonomy.atlas.id, slug: taxonomy.atlas.slug },
      species: { id: taxonomy.species.id, scientific_name: taxonomy.species.scientific_name },
      uploader: { id: uploader.id, username: uploader.username },
    });
    expect(a.headers.get('x-as-of-position')).toBe(renamed);
    expect((await api.get(`${brainPath(brain.id, renamed)}&shape=a`)).body).toEqual(a.body);
  });

  test('a future time is the current state, in both shapes exactly as the read model answers', async () => {
    for (const key of [String(brain.id), brain.readable_id]) {
      const now = await api.get(brainPath(key));
      const future = await api.get(brainPath(key, FUTURE));
      expect(future.status).toBe(200);
      expect(future.body).toEqual(now.body);
      expect(future.headers.get('x-as-of-position')).toBe(renamedAgain);
    }
    const staffView = await api.get(brainPath(brain.readable_id, FUTURE), { token: staff });
    expect(staffView.body).toEqual((await api.get(brainPath(brain.readable_id), { token: staff })).body);
  });

  test('404 before the create', async () => {
    for (const asOf of [PAST, '1.1', '0.0'])
      for (const key of [String(brain.id), brain.readable_id]) {
        const res = await api.get(brainPath(key, asOf));
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ detail: expect.any(String) });
      }
    expect((await api.get(brainPath('999999', FUTURE))).status).toBe(404);
    expect((await api.get(brainPath(`not-its-name-${brain.id}`, FUTURE))).status).toBe(404);
  });

  test('a bad as_of: 400 on as_of', async () => {
    for (const bad of ['yesterday', '2026-13-01', '12', '1.2.3', ' '])
      for (const path of [
        brainPath(brain.id, bad),
        `/api/file-uploads/${uploadId}/?as_of=${encodeURIComponent(bad)}`,
      ]) {
        const res = await api.get(path, { token: uploader.token });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ as_of: [expect.any(String)] });
      }
    expect((await api.get(`/api/auth/me/?as_of=soon`, { token: uploader.token })).body).toEqual({
      as_of: [expect.any(String)],
    });
  });
  test('extreme values are answered, never a server error', async () => {
    const extremes = [
      '99999999999999999999.99999999999999999999',
      '18446744073709551615.9223372036854775807',
      '-1.-1',
      '-99999999999999999999.5',
      '5.-99999999999999999999',
      '0000-01-01',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999999999+14:00',
      '275760-09-13',
    ];
    const failures: string[] = [];
    for (const asOf of extremes)
      for (const path of [
        brainPath(brain.id, asOf),
        brainPath(brain.readable_id, asOf),
        `/api/file-uploads/${uploadId}/?as_of=${encodeURIComponent(asOf)}`,
        `/api/auth/me/?as_of=${encodeURIComponent(asOf)}`,
      ]) {
        const res = await api.get(path, { token: uploader.token });
        if (res.status >= 500) failures.push(`${path} ${res.status}`);
      }
    expect(failures).toEqual([]);
  });
});

describe('GET /api/file-uploads/{id}/?as_of=', () => {
  test('received, then as processed; a future time as the read model answers', async () => {
    const atCreate = await api.get(`/api/file-uploads/${uploadId}/?as_of=${created}`, {
      token: uploader.token,
    });
    expect(atCreate.status).toBe(200);
    expect(atCreate.body).toMatchObject({
      id: uploadId,
      status: 'uploaded',
      processing_started: null,
      metadata: {},
      preview_url: null,
      associated_brain: { id: brain.id, name: 'Before', readable_id: brain.readable_id },
      uploader: { id: uploader.id, username: uploader.username, email: uploader.email },
    });
    const now = await api.get(`/api/file-uploads/${uploadId}/`, { token: uploader.token });
    const future = await api.get(`/api/file-uploads/${uploadId}/?as_of=${FUTURE}`, { token: uploader.token });
    expect(future.body).toEqual(now.body);
    expect(future.body.associated_brain.name).toBe('After');
    // The brain's renames are among the events that made the answer.
    expect(future.headers.get('x-as-of-position')).toBe(renamedAgain);
    const beforeRename = await api.get(`/api/file-uploads/${uploadId}/?as_of=${renamed}`, { token: staff });
    expect(beforeRename.body.associated_brain.name).toBe('Middle');
    expect(beforeRename.body.status).toBe(now.body.status);
  });

  test('404 before it was received, and for anyone but its uploader and staff; 401 anonymous', async () => {
    expect(
      (await api.get(`/api/file-uploads/${uploadId}/?as_of=${PAST}`, { token: uploader.token })).status,
    ).toBe(404);
    expect(
      (await api.get(`/api/file-uploads/${uploadId}/?as_of=${FUTURE}`, { token: stranger.token })).status,
    ).toBe(404);
    expect((await api.get(`/api/file-uploads/${uploadId}/?as_of=${FUTURE}`)).status).toBe(401);
    expect((await api.get(`/api/file-uploads/not-a-uuid/?as_of=${FUTURE}`, { token: staff })).status).toBe(
      404,
    );
  });
});

describe('GET /api/auth/me/?as_of=', () => {
  test('the profile before and after a change; a future time is now; 404 before registration; 401 anonymous', async () => {
    const me = await api.get('/api/auth/me/', { token: uploader.token });
    const changed = position(
      await api.patch('/api/profile/', {
        token: uploader.token,
        json: { bio: 'cortex', location: 'Madrid' },
      }),
    );
    const before = await api.get(`/api/auth/me/?as_of=${created}`, { token: uploader.token });
    expect(before.status).toBe(200);
    expect(before.body).toEqual(me.body);
    const after = await api.get(`/api/auth/me/?as_of=${changed}`, { token: uploader.token });
    expect(after.body).toEqual({ ...me.body, bio: 'cortex', location: 'Madrid' });
    expect(after.headers.get('x-as-of-position')).toBe(changed);
    const future = await api.get(`/api/auth/me/?as_of=${FUTURE}`, { token: uploader.token });
    expect(future.body).toEqual((await api.get('/api/auth/me/', { token: uploader.token })).body);
    expect((await api.get(`/api/auth/me/?as_of=${PAST}`, { token: uploader.token })).status).toBe(404);
    expect((await api.get(`/api/auth/me/?as_of=${FUTURE}`)).status).toBe(401);
  });
});

describe('after the delete', () => {
  test('404 as of now, the brain as it was before; its upload likewise', async () => {
    expect((await api.delete(brainPath(), { token: uploader.token })).status).toBe(204);
    expect((await api.get(brainPath(brain.id, FUTURE))).status).toBe(404);
    expect((await api.get(brainPath(brain.readable_id, FUTURE))).status).toBe(404);
    const then = await api.get(brainPath(brain.id, renamedAgain));
    expect(then.status).toBe(200);
    expect(then.body.name).toBe('After');
    const upload = (path: string) =>
      api.get(`/api/file-uploads/${uploadId}/${path}`, { token: uploader.token });
    expect((await upload(`?as_of=${FUTURE}`)).status).toBe(404);
    expect((await upload(`?as_of=${renamed}`)).status).toBe(200);
  });

  test('the CORS headers let a browser read X-As-Of-Position', async () => {
    const res = await api.get(brainPath(brain.id, renamed), {
      headers: { Origin: 'https://app.example.org' },
    });
    expect(res.headers.get('access-control-expose-headers')).toContain('X-As-Of-Position');
  });
});
