import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { type Client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { CURATOR, startCuratedService } from '#tests/support/curatedService';
import { waitFor } from '#tests/support/waitFor';
import { brainForm, createTaxonomy, type Taxonomy } from '#tests/e2e/brains/brainFixtures';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { createLocalDiskBlobStore } from '#shared/blobStore/localDisk/createLocalDiskBlobStore';

/**
 * A brain's history (decisions.md "Audit"): its events and those of its file uploads, oldest first,
 * with the changes each made to shape B, computed by replay: a rename, a verification by staff, the
 * processing of its file (metadata and preview appear), a file uploaded for it later; who may read
 * it (also after the brain is deleted), by id and by readable_id, and the list rule's envelope.
 */
const NIBABEL_DATA = '/usr/lib/python3/dist-packages/nibabel/tests/data';

interface Entry {
  position: string;
  id: string;
  type: string;
  resource: { type: string; id: number | string } | null;
  revision: number | null;
  recorded_at: string;
  actor: { id: number; username: string | null } | null;
  request_id: string | null;
  changes: Record<string, [unknown, unknown]>;
}

let service: TestService;
let api: Client;
let staff: string;
let staffId: number;
let uploader: Awaited<ReturnType<typeof newUser>>;
let stranger: Awaited<ReturnType<typeof newUser>>;
let taxonomy: Taxonomy;
let brain: { id: number; readable_id: string; name: string };
let createRequestId: string | null;
let fileId: string;
let laterId: string;

const historyOf = (key: string | number) => `/api/brains/${key}/history/`;

async function history(key: string | number = brain.id, token = uploader.token): Promise<Entry[]> {
  const res = await api.get(historyOf(key), { token });
  expect(res.status).toBe(200);
  return res.body as Entry[];
}

const ofType = (entries: Entry[], type: string, resourceId?: string | number) =>
  entries.filter((e) => e.type === type && (resourceId === undefined || e.resource?.id === resourceId));

/** The events of `uploadId` up to its processing's end, awaited in the brain's history. */
function processed(uploadId: string) {
  return waitFor(
    `the processing of ${uploadId} to end in the brain's history`,
    async () => {
      const entries = await history();
      return entries.some(
        (e) =>
          e.resource?.id === uploadId &&
          (e.type === 'UploadProcessingCompleted' || e.type === 'UploadProcessingFailed'),
      );
    },
    { timeoutMs: 90_000, intervalMs: 100 },
  );
}

/**
 * A file uploaded for the brain after its creation (UploadReceived with associatedBrainId): the
 * upload routes do not take associated_brain, so the test stores the bytes and appends the event
 * as recordUpload does, with the uploader as actor.
 */
async function uploadForBrain(bytes: Buffer): Promise<string> {
  const uploadId = randomUUID();
  const blobKey = `uploads/${uploadId}.nii`;
  const blobs = createLocalDiskBlobStore({ rootDir: path.join(service.dataDir, 'blobs') });
  const stored = await blobs.put(blobKey, Readable.from([bytes]));
  const store = createPostgresEventStore({ connectionString: service.databaseUrl, poolSize: 1 });
  try {
    await store.appendToStream(
      `upload-${uploadId}`,
      [
        {
          id: randomUUID(),
          type: 'UploadReceived',
          data: {
            uploadId,
            name: 'again.nii',
            filename: 'again.nii',
            sizeBytes: stored.size,
            sha256: stored.sha256,
            mimeType: 'application/octet-stream',
            blobKey,
            uploaderId: uploader.id,
            associatedBrainId: brain.id,
            receivedAt: new Date().toISOString(),
          },
          metadata: {
            actor: String(uploader.id),
            requestId: 'reupload-request',
            correlationId: randomUUID(),
            causationId: null,
            schemaVersion: 1,
          },
        },
      ],
      { expectedRevision: 'no_stream' },
    );
  } finally {
    await store.close();
  }
  return uploadId;
}

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService());
  staffId = (await api.get('/api/auth/me/', { token: staff })).body.id as number;
  [uploader, stranger] = await Promise.all([newUser(api), newUser(api)]);
  taxonomy = await createTaxonomy(api, staff);
  const bytes = readFileSync(path.join(NIBABEL_DATA, 'anatomical.nii'));
  const created = await api.post('/api/brains/', {
    token: uploader.token,
    body: brainForm({ name: 'History mouse', atlas: taxonomy.atlas.id }, { name: 'anatomical.nii', bytes }),
  });
  expect(created.status).toBe(201);
  brain = created.body;
  createRequestId = created.headers.get('x-request-id');
  fileId = ofType(await history(), 'UploadReceived')[0]!.resource!.id as string;
  await processed(fileId);
  const renamed = await api.patch(`/api/brains/${brain.id}/`, {
    token: uploader.token,
    json: { name: 'History mouse renamed' },
  });
  expect(renamed.status).toBe(200);
  const verified = await api.patch(`/api/brains/${brain.id}/`, { token: staff, json: { verified: true } });
  expect(verified.status).toBe(200);
  laterId = await uploadForBrain(bytes);
  await processed(laterId);
}, 180_000);
afterAll(() => service.close());

describe('GET /api/brains/{key}/history/', () => {
  test('the create: every field of shape B, null before, as GET answered it then; who, when, which request', async () => {
    const entries = await history();
    const [create] = ofType(entries, 'BrainCreated');
    expect(create).toEqual({
      position: expect.stringMatching(/^\d+\.\d+$/),
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'BrainCreated',
      resource: { type: 'brain', id: brain.id },
      revision: 0,
      recorded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      actor: { id: uploader.id, username: uploader.username },
      request_id: createRequestId,
      changes: expect.any(Object),
    });
    expect(create).not.toHaveProperty('data');
    const asOf = await api.get(`/api/brains/${brain.id}/?as_of=${create!.position}`);
    expect(asOf.status).toBe(200);
    // Beside shape B, the history shows who the brain was shared with.
    expect(create!.changes).toEqual({
      ...Object.fromEntries(Object.entries(asOf.body as object).map(([field, value]) => [field, [null, value]])),
      collaborators: [null, []],
    });
    expect(create!.changes.name).toEqual([null, 'History mouse']);
    expect(create!.changes.metadata).toEqual([null, {}]);
  });

  test("its own file: received before the create, then processed, which shows the file's metadata and preview", async () => {
    const entries = await history();
    const own = entries.filter((e) => e.resource?.id === fileId);
    expect(own.map((e) => e.type)).toEqual([
      'UploadReceived',
      'UploadProcessingStarted',
      'UploadProcessingCompleted',
    ]);
    expect(entries.indexOf(own[0]!)).toBeLessThan(entries.indexOf(ofType(entries, 'BrainCreated')[0]!));
    expect(own[0]!.resource).toEqual({ type: 'file_upload', id: fileId });
    expect(own[0]!.changes).toEqual({}); // no brain yet
    expect(own[1]!.changes).toEqual({}); // shape B does not show the status
    expect(own[1]!.actor).toBeNull(); // the processor
    const completed = own[2]!.changes;
    expect(Object.keys(completed).sort()).toEqual(['metadata', 'preview_url']);
    expect(completed.metadata![0]).toEqual({});
    expect(completed.metadata![1]).toMatchObject({ format: expect.stringMatching(/nifti/i) });
    expect(completed.preview_url).toEqual([null, `${service.url}/api/brains/${brain.id}/preview/`]);
    // What the detail route shows now is what the replay reached.
    const live = await api.get(`/api/brains/${brain.id}/`);
    expect(live.body.metadata).toEqual(completed.metadata![1]);
  });

  test('a rename changes the name only; a verification by staff, verified only, with staff as actor', async () => {
    const updates = ofType(await history(), 'BrainUpdated');
    expect(updates).toHaveLength(2);
    expect(updates[0]).toMatchObject({
      resource: { type: 'brain', id: brain.id },
      revision: 1,
      actor: { id: uploader.id, username: uploader.username },
      changes: { name: ['History mouse', 'History mouse renamed'] },
    });
    expect(Object.keys(updates[0]!.changes)).toEqual(['name']);
    expect(updates[1]).toMatchObject({
      revision: 2,
      actor: { id: staffId, username: CURATOR.username },
      changes: { verified: [false, true] },
    });
    expect(Object.keys(updates[1]!.changes)).toEqual(['verified']);
  });

  test('a file uploaded for the brain later: its receipt and processing are in the history', async () => {
    const entries = await history();
    const later = entries.filter((e) => e.resource?.id === laterId);
    expect(later.map((e) => e.type)).toEqual([
      'UploadReceived',
      'UploadProcessingStarted',
      'UploadProcessingCompleted',
    ]);
    expect(later[0]).toMatchObject({
      resource: { type: 'file_upload', id: laterId },
      revision: 0,
      actor: { id: uploader.id, username: uploader.username },
      request_id: 'reupload-request',
      // Shape B shows the brain's own file: another upload changes none of its fields.
      changes: {},
    });
  });

  test('oldest first, in global order, without internal events; the same by readable_id; staff reads it too', async () => {
    const entries = await history();
    const positions = entries.map((e) => e.position.split('.').map(BigInt) as [bigint, bigint]);
    for (let i = 1; i < positions.length; i++) {
      const [a, b] = [positions[i - 1]!, positions[i]!];
      expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])).toBe(true);
    }
    expect(entries.some((e) => e.type === 'UploadProcessingLeaseRenewed' || e.type === 'IdAllocated')).toBe(
      false,
    );
    expect(await history(brain.readable_id)).toEqual(entries);
    expect(await history(brain.readable_id.toUpperCase(), staff)).toEqual(entries);
    expect(entries).toHaveLength(9);
  });

  test('page and page_size give the envelope', async () => {
    const all = await history();
    const first = await api.get(`${historyOf(brain.id)}?page_size=4`, { token: uploader.token });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      count: all.length,
      next: expect.stringContaining('page=2'),
      previous: null,
      results: all.slice(0, 4),
    });
    const last = await api.get(`${historyOf(brain.id)}?page=3&page_size=4`, { token: uploader.token });
    expect(last.body).toMatchObject({ count: all.length, next: null, results: all.slice(8) });
    expect(
      (await api.get(`${historyOf(brain.id)}?page=4&page_size=4`, { token: uploader.token })).status,
    ).toBe(404);
    const bad = await api.get(`${historyOf(brain.id)}?page_size=0`, { token: uploader.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toHaveProperty('page_size');
  });

  test('anonymous 401, anyone but the uploader and staff 403, an unknown key 404', async () => {
    const anonymous = await api.get(historyOf(brain.id));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBeTruthy();
    for (const key of [brain.id, brain.readable_id]) {
      const res = await api.get(historyOf(key), { token: stranger.token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    for (const key of ['999999', 'no-such-brain-999999', 'history-mouse', `other-name-${brain.id}`, '0'])
      expect((await api.get(historyOf(key), { token: staff })).status).toBe(404);
  });

  test("a file upload's history: its own events, with the changes to its representation", async () => {
    const res = await api.get(`/api/file-uploads/${fileId}/history/`, { token: uploader.token });
    expect(res.status).toBe(200);
    const entries = res.body as Entry[];
    expect(entries.map((e) => e.type)).toEqual([
      'UploadReceived',
      'UploadProcessingStarted',
      'UploadProcessingCompleted',
    ]);
    const brainEntries = await history();
    expect(entries.map((e) => e.position)).toEqual(
      brainEntries.filter((e) => e.resource?.id === fileId).map((e) => e.position),
    );
    const now = await api.get(`/api/file-uploads/${fileId}/`, { token: uploader.token });
    const [received, started, completed] = entries as [Entry, Entry, Entry];
    expect(received).toMatchObject({
      resource: { type: 'file_upload', id: fileId },
      revision: 0,
      actor: { id: uploader.id, username: uploader.username },
      request_id: createRequestId,
    });
    expect(received.changes).toMatchObject({
      id: [null, fileId],
      status: [null, 'uploaded'],
      metadata: [null, {}],
      uploader: [null, now.body.uploader],
      // Received before its brain was created, in the same request: no brain to name yet.
      associated_brain: [null, { id: brain.id, name: null, readable_id: null }],
    });
    expect(started.changes).toEqual({
      status: ['uploaded', 'processing'],
      processing_started: [null, now.body.processing_started],
    });
    expect(completed.changes).toEqual({
      status: ['processing', 'completed'],
      processing_completed: [null, now.body.processing_completed],
      metadata: [{}, now.body.metadata],
      preview_url: [null, now.body.preview_url],
    });
    // Staff reads it; the envelope applies.
    const paged = await api.get(`/api/file-uploads/${fileId}/history/?page=2&page_size=2`, { token: staff });
    expect(paged.body).toEqual({
      count: 3,
      next: null,
      previous: expect.stringContaining('page=1'),
      results: [completed],
    });
  });

  test("a file upload's history: 401 anonymous, 404 for anyone else (uploads are private) or no such upload", async () => {
    const path = `/api/file-uploads/${fileId}/history/`;
    expect((await api.get(path)).status).toBe(401);
    const other = await api.get(path, { token: stranger.token });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ detail: expect.any(String) });
    for (const id of [randomUUID(), 'not-a-uuid'])
      expect((await api.get(`/api/file-uploads/${id}/history/`, { token: staff })).status).toBe(404);
    // A UUID in capitals names the same upload.
    const upper = await api.get(`/api/file-uploads/${fileId.toUpperCase()}/history/`, {
      token: uploader.token,
    });
    expect(upper.status).toBe(200);
  });

  test('after the delete: readable by the uploader and staff, by id and readable_id; the delete changes nothing', async () => {
    const before = await history();
    expect((await api.delete(`/api/brains/${brain.id}/`, { token: uploader.token })).status).toBe(204);
    expect((await api.get(`/api/brains/${brain.id}/`)).status).toBe(404);
    const after = await history(brain.id, staff);
    expect(after.slice(0, before.length)).toEqual(before);
    const deleted = ofType(after, 'BrainDeleted');
    expect(deleted).toEqual([
      expect.objectContaining({ resource: { type: 'brain', id: brain.id }, revision: 3, changes: {} }),
    ]);
    expect(ofType(after, 'UploadDeleted', fileId)).toEqual([expect.objectContaining({ changes: {} })]);
    expect(await history(brain.readable_id)).toEqual(after);
    expect((await api.get(historyOf(brain.id), { token: stranger.token })).status).toBe(403);
    expect((await api.get(historyOf(brain.id))).status).toBe(401);
    // Its file's history too: the uploader and staff still read it, ending with the delete.
    for (const token of [uploader.token, staff]) {
      const upload = await api.get(`/api/file-uploads/${fileId}/history/`, { token });
      expect(upload.status).toBe(200);
      expect((upload.body as Entry[]).at(-1)).toMatchObject({ type: 'UploadDeleted', changes: {} });
    }
    expect((await api.get(`/api/file-uploads/${fileId}/history/`, { token: stranger.token })).status).toBe(
      404,
    );
  });
});
