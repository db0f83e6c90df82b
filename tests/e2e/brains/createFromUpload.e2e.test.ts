import { randomUUID } from 'node:crypto';
import { Client as PgClient, Pool } from 'pg';
import { type Client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { eventually } from '#tests/support/waitFor';
import { handleCommand } from '#shared/commandHandling/handleCommand';
import { createPostgresEventStore } from '#shared/eventStore/postgres/postgresEventStore';
import { type UploadCommand, decideUpload } from '#shared/domain/uploads/decide';
import { type UploadState, uploadDecider, uploadStreamName } from '#shared/domain/uploads/events';
import { upload } from '#tests/e2e/uploads/uploadFixtures';
import { buildServiceApiDocument } from '#services/all-in-one/apiDocument';
import { brainsProjection } from '#services/projector/projections/brainsProjection';
import { uploadsProjection } from '#services/projector/projections/uploadsProjection';
import { upcastingEventStore } from '#shared/eventStore/upcastingEventStore';
import { formatDifference } from '#shared/projections/verify/compareReadModels';
import { verifyReadModels } from '#shared/projections/verify/verifyReadModels';
import { type Taxonomy, brainForm, createTaxonomy, niftiBytes, nifti, storedUploads } from './brainFixtures';

/**
 * POST /api/brains/ with `upload` (decisions.md "Resumable uploads"): one of the caller's own file
 * uploads becomes the brain's file without being sent again, in JSON, url-encoded or multipart.
 * The processor is off here: the tests play it (claim, complete, fail) so that "still processing"
 * and "already completed" are states, not races. Real processing of an attached upload is in
 * tests/e2e/uploads/sidecar.e2e.test.ts.
 */

let service: TestService;
let api: Client;
let staff: string;
let researcher: { id: number; token: string };
let stranger: { id: number; token: string };
let taxonomy: Taxonomy;
let db: PgClient;

beforeAll(async () => {
  ({ service, api, staff } = await startCuratedService({ PROCESSOR_ENABLED: 'false' }));
  [researcher, stranger] = await Promise.all([newUser(api), newUser(api)]);
  taxonomy = await createTaxonomy(api, staff);
  db = new PgClient({ connectionString: service.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await service.close();
});

const ctx = { actor: 'processor', requestId: 'test', correlationId: 'test', causationId: null };

/** Plays the processor on one upload's stream. */
async function processor(uploadId: string, command: UploadCommand): Promise<void> {
  const store = createPostgresEventStore({ connectionString: service.databaseUrl, poolSize: 1 });
  try {
    await handleCommand(
      store,
      uploadStreamName(uploadId),
      uploadDecider,
      (state: UploadState) => decideUpload(command, state),
      ctx,
    );
  } finally {
    await store.close();
  }
}

const now = () => new Date().toISOString();
const claim = (uploadId: string) =>
  processor(uploadId, {
    type: 'ClaimUpload',
    data: {
      processorId: 'test',
      now: now(),
      leaseUntil: new Date(Date.now() + 600_000).toISOString(),
      maxAttempts: 3,
    },
  });
const EXTRACTED = { format: 'nifti1', shape: [2, 2, 2], datatype: 'uint8' };
const complete = (uploadId: string) =>
  processor(uploadId, {
    type: 'CompleteProcessing',
    data: { attempt: 1, metadata: EXTRACTED, previewBlobKey: null, now: now() },
  });
const fail = (uploadId: string) =>
  processor(uploadId, {
    type: 'FailProcessing',
    data: { attempt: 1, reason: 'not a NIfTI file: bad sizeof_hdr', now: now() },
  });

/** A NIfTI uploaded on its own (multipart POST /api/file-uploads/); its id. */
async function uploaded(token = researcher.token, filename = 'scan.nii'): Promise<string> {
  const res = await upload(api, token, filename, niftiBytes());
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const fileUpload = (id: string, token = researcher.token) => api.get(`/api/file-uploads/${id}/`, { token });

async function statusIs(id: string, status: string): Promise<void> {
  await eventually(`upload ${id} ${status}`, async () =>
    expect((await fileUpload(id)).body.status).toBe(status),
  );
}

/** The types of an upload's events, as the audit log lists them (staff). */
async function uploadEventTypes(id: string): Promise<string[]> {
  const res = await api.get(`/api/audit/events/?resource_type=file_upload&resource_id=${id}&limit=1000`, {
    token: staff,
  });
  expect(res.status).toBe(200);
  return (res.body.results as Array<{ type: string }>).map((e) => e.type);
}

const createJson = (json: Record<string, unknown>, token = researcher.token) =>
  api.post('/api/brains/', { token, json });

describe('a brain from an upload', () => {
  test('JSON, upload already completed: the brain shows its file, metadata and download at once', async () => {
    const id = await uploaded(researcher.token, 'completed.nii');
    await claim(id);
    await complete(id);
    await statusIs(id, 'completed');
    const res = await createJson({ name: 'From upload', atlas: taxonomy.atlas.id, upload: id });
    expect(res.status).toBe(201);
    const brainId = res.body.id as number;
    expect(res.body).toMatchObject({
      name: 'From upload',
      atlas: taxonomy.atlas.id,
      category: taxonomy.category.id,
      uploader: researcher.id,
      image: `${service.url}/api/brains/${brainId}/file/`,
      s3_url: `${service.url}/api/brains/${brainId}/file/`,
      readable_id: `from-upload-${brainId}`,
    });
    const brain = await api.get(`/api/brains/${brainId}/`, { token: researcher.token });
    expect(brain.status).toBe(200);
    expect(brain.body.metadata).toEqual(EXTRACTED);
    const file = await api.get(`/api/brains/${brainId}/file/`, { token: researcher.token });
    expect(file.status).toBe(200);
    expect(Buffer.from(file.text, 'latin1').length).toBe(niftiBytes().length);
    const up = await fileUpload(id);
    expect(up.body).toMatchObject({
      status: 'completed',
      metadata: EXTRACTED,
      associated_brain: { id: brainId, name: 'From upload', readable_id: `from-upload-${brainId}` },
    });
    // The brain's uploads list it, as an upload made through the brain form.
    const list = await api.get(`/api/file-uploads/?associated_brain=${brainId}`, { token: researcher.token });
    expect(list.status).toBe(200);
    const ids = (Array.isArray(list.body) ? list.body : list.body.results).map((u: { id: string }) => u.id);
    expect(ids).toEqual([id]);
  });

  test('multipart, upload still processing: the brain shows the status now and the metadata once it completes', async () => {
    const id = await uploaded(researcher.token, 'processing.nii');
    await claim(id);
    const res = await api.post('/api/brains/', {
      token: researcher.token,
      body: brainForm({ name: 'Processing', category: taxonomy.category.id, upload: id }),
    });
    expect(res.status).toBe(201);
    const brainId = res.body.id as number;
    expect(res.body.image).toBe(`${service.url}/api/brains/${brainId}/file/`);
    expect((await api.get(`/api/brains/${brainId}/`, { token: researcher.token })).body.metadata).toEqual({});
    expect((await fileUpload(id)).body).toMatchObject({
      status: 'processing',
      associated_brain: { id: brainId },
    });
    await complete(id);
    await eventually('the brain to show the metadata', async () => {
      const brain = await api.get(`/api/brains/${brainId}/`, { token: researcher.token });
      expect(brain.body.metadata).toEqual(EXTRACTED);
    });
    // Processed once: one start and one completion on the upload's stream.
    await eventually('the audit log to hold the upload events', async () =>
      expect(await uploadEventTypes(id)).toEqual([
        'UploadReceived',
        'UploadProcessingStarted',
        'UploadAttachedToBrain',
        'UploadProcessingCompleted',
      ]),
    );
  });

  test('url-encoded with upload (status uploaded) is accepted like JSON', async () => {
    const id = await uploaded();
    const body = new URLSearchParams({ name: 'Form', category: String(taxonomy.category.id), upload: id });
    const res = await api.post('/api/brains/', { token: researcher.token, body });
    expect(res.status).toBe(201);
    expect((await fileUpload(id)).body).toMatchObject({
      status: 'uploaded',
      associated_brain: { id: res.body.id },
    });
  });
});

describe('refusals', () => {
  const base = () => ({ name: 'Refused', atlas: taxonomy.atlas.id });

  test('unknown, malformed, someone else\u2019s (staff included): 400 on upload, nothing created', async () => {
    const theirs = await uploaded(stranger.token);
    const mine = await uploaded();
    for (const [token, uploadId] of [
      [researcher.token, randomUUID()],
      [researcher.token, theirs],
      [staff, mine],
    ] as const) {
      const res = await createJson({ ...base(), upload: uploadId }, token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ upload: ['No file upload of yours has this id.'] });
    }
    const malformed = await createJson({ ...base(), upload: 'not-a-uuid' });
    expect(malformed.status).toBe(400);
    expect(Object.keys(malformed.body)).toEqual(['upload']);
    expect((await fileUpload(theirs, stranger.token)).body.associated_brain).toBeNull();
    expect((await fileUpload(mine)).body.associated_brain).toBeNull();
  });

  test('an upload already the file of a brain, or failed: 400 on upload', async () => {
    const id = await uploaded();
    expect((await createJson({ ...base(), upload: id })).status).toBe(201);
    const again = await createJson({ ...base(), upload: id });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ upload: ['This file upload is already the file of a brain.'] });

    // An upload made through the brain form is taken too.
    const formBrain = await api.post('/api/brains/', {
      token: researcher.token,
      body: brainForm({ name: 'With file', atlas: taxonomy.atlas.id }, nifti()),
    });
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM file_uploads WHERE associated_brain_id = $1',
      [formBrain.body.id],
    );
    const taken = await createJson({ ...base(), upload: rows[0]!.id });
    expect(taken.body).toEqual({ upload: ['This file upload is already the file of a brain.'] });

    const failed = await uploaded();
    await claim(failed);
    await fail(failed);
    await statusIs(failed, 'failed');
    const res = await createJson({ ...base(), upload: failed });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      upload: ['This file upload failed processing: not a NIfTI file: bad sizeof_hdr'],
    });
  });

  test('a file and upload both: 400 non_field_errors, and the sent bytes are not kept', async () => {
    const id = await uploaded();
    const before = storedUploads(service.dataDir).length;
    const res = await api.post('/api/brains/', {
      token: researcher.token,
      body: brainForm({ ...base(), upload: id }, nifti()),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      non_field_errors: ['Send either a file (`file` or `image`) or `upload` (a file upload id), not both.'],
    });
    expect(storedUploads(service.dataDir).length).toBe(before);
    expect((await fileUpload(id)).body.associated_brain).toBeNull();
  });

  test('JSON without upload, or with a file field: 400 saying a file needs multipart or an upload id', async () => {
    const none = await createJson(base());
    expect(none.status).toBe(400);
    expect(none.body.upload[0]).toMatch(/multipart\/form-data, or give `upload`/);
    const withFile = await createJson({ ...base(), file: 'AAAA' });
    expect(withFile.status).toBe(400);
    expect(withFile.body.file[0]).toMatch(/only be sent in multipart\/form-data/);
    const plain = await api.post('/api/brains/', {
      token: researcher.token,
      body: 'upload=x',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(plain.status).toBe(415);
  });

  test('invalid brain fields with upload: 400 on them, and the upload stays free', async () => {
    const id = await uploaded();
    const res = await createJson({ name: 'No placement', upload: id });
    expect(res.status).toBe(400);
    expect((await fileUpload(id)).body.associated_brain).toBeNull();
    const ok = await createJson({ ...base(), upload: id });
    expect(ok.status).toBe(201);
  });
});

test('20 parallel creates with one upload: exactly one 201, the upload on exactly one brain', async () => {
  const id = await uploaded(researcher.token, 'contended.nii');
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      createJson({ name: `Contender ${i}`, atlas: taxonomy.atlas.id, upload: id }),
    ),
  );
  const created = results.filter((r) => r.status === 201);
  const refused = results.filter((r) => r.status === 400);
  expect(created).toHaveLength(1);
  expect(refused).toHaveLength(19);
  for (const r of refused)
    expect(r.body).toEqual({ upload: ['This file upload is already the file of a brain.'] });
  const winner = created[0]!.body.id as number;
  expect((await fileUpload(id)).body.associated_brain).toMatchObject({ id: winner });
  const { rows: brains } = await db.query<{ id: number }>('SELECT id FROM brains WHERE file_upload_id = $1', [
    id,
  ]);
  expect(brains.map((b) => b.id)).toEqual([winner]);
  const types = await uploadEventTypes(id);
  expect(types.filter((t) => t === 'UploadAttachedToBrain')).toHaveLength(1);
});

test('history: the attach is in the brain\u2019s and the upload\u2019s, with the association as the upload\u2019s change', async () => {
  const id = await uploaded();
  await claim(id);
  await complete(id);
  await statusIs(id, 'completed');
  const res = await createJson({ name: 'Historic', atlas: taxonomy.atlas.id, upload: id });
  expect(res.status).toBe(201);
  const brainId = res.body.id as number;
  const brainHistory = await api.get(`/api/brains/${brainId}/history/`, { token: researcher.token });
  expect(brainHistory.status).toBe(200);
  const types = (brainHistory.body as Array<{ type: string }>).map((e) => e.type);
  expect(types).toEqual(
    expect.arrayContaining([
      'UploadReceived',
      'UploadAttachedToBrain',
      'BrainCreated',
      'UploadProcessingCompleted',
    ]),
  );
  expect(types.indexOf('UploadAttachedToBrain')).toBe(types.indexOf('BrainCreated') - 1);
  const uploadHistory = await api.get(`/api/file-uploads/${id}/history/`, { token: researcher.token });
  expect(uploadHistory.status).toBe(200);
  const attach = (uploadHistory.body as Array<{ type: string; changes: Record<string, unknown> }>).find(
    (e) => e.type === 'UploadAttachedToBrain',
  );
  expect(attach).toBeDefined();
  expect(attach!.changes.associated_brain).toEqual([null, { id: brainId, name: null, readable_id: null }]);
  // As of now, by replay: the brain it was attached to, named (its stream is read with the upload's).
  const asOf = await api.get(
    `/api/file-uploads/${id}/?as_of=${encodeURIComponent(new Date().toISOString())}`,
    {
      token: researcher.token,
    },
  );
  expect(asOf.status).toBe(200);
  expect(asOf.body.associated_brain).toEqual({
    id: brainId,
    name: 'Historic',
    readable_id: res.body.readable_id,
  });
  const audit = await api.get(
    `/api/audit/events/?type=UploadAttachedToBrain&resource_type=file_upload&resource_id=${id}`,
    {
      token: staff,
    },
  );
  expect(audit.status).toBe(200);
  expect(audit.body.results).toHaveLength(1);
  expect(audit.body.results[0]).toMatchObject({
    type: 'UploadAttachedToBrain',
    resource: { type: 'file_upload', id },
    actor: { id: researcher.id },
    data: { uploadId: id, associatedBrainId: brainId, attachedBy: researcher.id, sidecar: null },
  });
});

test('deleting the brain deletes the attached upload: its record and its bytes', async () => {
  const id = await uploaded(researcher.token, 'doomed.nii');
  const { rows } = await db.query<{ blob_key: string }>('SELECT blob_key FROM file_uploads WHERE id = $1', [
    id,
  ]);
  const blob = rows[0]!.blob_key.split('/').pop()!;
  expect(storedUploads(service.dataDir)).toContain(blob);
  const res = await createJson({ name: 'Doomed', atlas: taxonomy.atlas.id, upload: id });
  expect(res.status).toBe(201);
  const del = await api.delete(`/api/brains/${res.body.id}/`, { token: researcher.token });
  expect(del.status).toBe(204);
  expect((await fileUpload(id)).status).toBe(404);
  await eventually('the bytes to be gone', () => expect(storedUploads(service.dataDir)).not.toContain(blob));
});

test('the API document says which bodies the create takes: a file only in multipart, upload in all', () => {
  type Body = {
    content: Record<string, { schema: { properties: Record<string, unknown>; required?: string[] } }>;
  };
  const paths = buildServiceApiDocument().paths as Record<string, Record<string, { requestBody: Body }>>;
  const { content } = paths['/api/brains/']!.post!.requestBody;
  expect(Object.keys(content).sort()).toEqual([
    'application/json',
    'application/x-www-form-urlencoded',
    'multipart/form-data',
  ]);
  const json = content['application/json']!.schema;
  expect(json.properties).toHaveProperty('upload');
  expect(json.properties).toHaveProperty('sidecar', expect.objectContaining({ type: 'object' }));
  expect(json.properties).not.toHaveProperty('file');
  const multipart = content['multipart/form-data']!.schema;
  for (const field of ['file', 'image', 'upload', 'sidecar'])
    expect(multipart.properties).toHaveProperty(field);
  expect(json.required).toEqual(['name']);
});

test('the uploads and brains read models equal their rebuild from the events (attaches and sidecars included)', async () => {
  const processing = await uploaded();
  await claim(processing);
  const done = await uploaded();
  await claim(done);
  await complete(done);
  for (const [id, sidecar] of [
    [processing, { EchoTime: 0.03 }],
    [done, { RepetitionTime: 2 }],
  ] as const) {
    const res = await createJson({ name: 'Rebuilt', atlas: taxonomy.atlas.id, upload: id, sidecar });
    expect(res.status).toBe(201);
  }
  await complete(processing);
  await eventually('the upload processed', async () =>
    expect((await fileUpload(processing)).body.metadata).toHaveProperty('sidecar_keys', ['EchoTime']),
  );
  const store = createPostgresEventStore({ connectionString: service.databaseUrl, poolSize: 2 });
  const live = new Pool({ connectionString: service.databaseUrl, max: 3 });
  const lines: string[] = [];
  try {
    const report = await verifyReadModels({
      store: upcastingEventStore(store),
      live,
      projections: [uploadsProjection, brainsProjection],
      onDifference: (d) => lines.push(formatDifference(d)),
    });
    expect(lines).toEqual([]);
    expect(report.differences).toBe(0);
  } finally {
    await store.close();
    await live.end();
  }
});

describe('an attach whose brain never came (a create that failed half-way on a store without a unit of work)', () => {
  /** Writes what such a create leaves: the upload attached to a brain id whose stream stays empty. */
  async function orphanAttach(uploadId: string, brainId: number, attachedAt: string): Promise<void> {
    const store = createPostgresEventStore({ connectionString: service.databaseUrl, poolSize: 1 });
    try {
      await store.appendToStream(uploadStreamName(uploadId), [
        {
          id: randomUUID(),
          type: 'UploadAttachedToBrain',
          data: {
            uploadId,
            associatedBrainId: brainId,
            sidecar: null,
            attachedBy: researcher.id,
            attachedAt,
          },
          metadata: { ...ctx, actor: String(researcher.id), schemaVersion: 1 },
        },
      ]);
    } finally {
      await store.close();
    }
  }

  const brainStream = async (brainId: number) => {
    const store = createPostgresEventStore({ connectionString: service.databaseUrl, poolSize: 1 });
    try {
      return (await store.readStream(`brain-${brainId}`)).map((e) => e.type);
    } finally {
      await store.close();
    }
  };

  test('a minute on, the next create fences that brain and takes the upload; before, it is taken', async () => {
    const fresh = await uploaded();
    await orphanAttach(fresh, 900_001, new Date().toISOString());
    const early = await createJson({ name: 'Too early', atlas: taxonomy.atlas.id, upload: fresh });
    expect(early.status).toBe(400);
    expect(early.body).toEqual({ upload: ['This file upload is already the file of a brain.'] });
    expect(await brainStream(900_001)).toEqual([]);

    const stale = await uploaded();
    await orphanAttach(stale, 900_002, new Date(Date.now() - 120_000).toISOString());
    const healed = await createJson({ name: 'Healed', atlas: taxonomy.atlas.id, upload: stale });
    expect(healed.status).toBe(201);
    expect(await brainStream(900_002)).toEqual(['StreamFenced']);
    expect((await fileUpload(stale)).body.associated_brain).toMatchObject({
      id: healed.body.id,
      name: 'Healed',
    });
    // The fenced brain can never be created, nor read.
    expect((await api.get('/api/brains/900002/', { token: researcher.token })).status).toBe(404);
  });
});

test('with an Idempotency-Key (one transaction around the request): a retry answers the same brain, and no second one', async () => {
  const id = await uploaded();
  const key = randomUUID();
  const send = () =>
    api.post('/api/brains/', {
      token: researcher.token,
      json: { name: 'Once', atlas: taxonomy.atlas.id, upload: id, sidecar: { EchoTime: 0.03 } },
      headers: { 'Idempotency-Key': key },
    });
  const [first, second] = await Promise.all([send(), send()]);
  const third = await send();
  for (const res of [first, second, third]) expect(res.status).toBe(201);
  expect(new Set([first, second, third].map((r) => r.body.id as number)).size).toBe(1);
  expect((await fileUpload(id)).body.associated_brain).toMatchObject({ id: first.body.id });
  const { rows } = await db.query<{ id: number }>('SELECT id FROM brains WHERE file_upload_id = $1', [id]);
  expect(rows).toHaveLength(1);
});

test('deleting an upload while a create attaches it: never both (a brain never loses its file)', async () => {
  // The delete is sent a little later each round, so that some land between the create's attach and its
  // reply: the moment a check made before the delete's append alone would miss.
  for (let round = 0; round < 24; round++) {
    const id = await uploaded();
    const [created, deleted] = await Promise.all([
      createJson({ name: `Race ${round}`, atlas: taxonomy.atlas.id, upload: id }),
      new Promise((resolve) => setTimeout(resolve, round * 2)).then(() =>
        api.delete(`/api/file-uploads/${id}/`, { token: researcher.token }),
      ),
    ]);
    const outcome = `${created.status}/${deleted.status}`;
    expect(['201/409', '400/204']).toContain(outcome);
    if (created.status === 201) {
      const brain = await api.get(`/api/brains/${created.body.id}/file/`, { token: researcher.token });
      expect(brain.status).toBe(200);
      expect((await fileUpload(id)).body.associated_brain).toMatchObject({ id: created.body.id });
    } else {
      expect(created.body).toEqual({ upload: ['No file upload of yours has this id.'] });
      expect((await fileUpload(id)).status).toBe(404);
    }
  }
});

test('the ETag of a brain and of its upload follows processing: If-None-Match never gets a 304 for a stale body', async () => {
  // fetch adds Cache-Control: no-cache to a request with If-None-Match unless it has one: a cache
  // revalidating sends max-age=0.
  const revalidate = (tag: string) => ({ 'If-None-Match': tag, 'Cache-Control': 'max-age=0' });
  const id = await uploaded();
  const res = await createJson({ name: 'Tagged', atlas: taxonomy.atlas.id, upload: id });
  expect(res.status).toBe(201);
  const path = `/api/brains/${res.body.id}/`;
  const before = await api.get(path, { token: researcher.token });
  const beforeUpload = await fileUpload(id);
  const etag = before.headers.get('etag')!;
  expect((await api.get(path, { token: researcher.token, headers: revalidate(etag) })).status).toBe(304);
  await claim(id);
  await complete(id);
  await statusIs(id, 'completed');
  // The brain's stream did not change; its representation did (status, metadata).
  const after = await api.get(path, { token: researcher.token, headers: revalidate(etag) });
  expect(after.status).toBe(200);
  expect(after.body.metadata).toMatchObject(EXTRACTED);
  expect(after.headers.get('etag')).not.toBe(etag);
  const uploadAfter = await api.get(`/api/file-uploads/${id}/`, {
    token: researcher.token,
    headers: revalidate(beforeUpload.headers.get('etag')!),
  });
  expect(uploadAfter.status).toBe(200);
  // If-Match reads the brain's revision from either ETag: the one from before processing still holds.
  const patched = await api.patch(path, {
    token: researcher.token,
    json: { description: 'tagged' },
    headers: { 'If-Match': etag },
  });
  expect(patched.status).toBe(200);
  const stale = await api.patch(path, {
    token: researcher.token,
    json: { description: 'again' },
    headers: { 'If-Match': etag },
  });
  expect(stale.status).toBe(409);
});
