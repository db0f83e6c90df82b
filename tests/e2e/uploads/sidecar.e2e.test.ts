import { type Client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { waitFor } from '#tests/support/waitFor';
import {
  type Taxonomy,
  brainForm,
  createTaxonomy,
  nifti,
  niftiBytes,
  storedUploads,
} from '#tests/e2e/brains/brainFixtures';
import { upload } from './uploadFixtures';

/**
 * A BIDS JSON sidecar sent with a file (POST /api/file-uploads/, POST /api/brains/) or with an
 * upload id (POST /api/brains/ with `upload`): kept with the upload and merged into its metadata by
 * the real processor's completion, the values read from the file winning a clash, and
 * metadata.sidecar_keys naming the sidecar's keys.
 */

let service: TestService;
let api: Client;
let researcher: { id: number; token: string };
let taxonomy: Taxonomy;

beforeAll(async () => {
  let staff: string;
  ({ service, api, staff } = await startCuratedService());
  researcher = await newUser(api);
  taxonomy = await createTaxonomy(api, staff);
});
afterAll(() => service.close());

/** Clashes with what the processor reads (format, shape), nests, and carries BIDS's own keys. */
const SIDECAR = {
  RepetitionTime: 2.5,
  EchoTime: 0.03,
  TaskName: 'rest',
  Manufacturer: { name: 'Siemens', model: 'Prisma' },
  format: 'from-the-sidecar',
  shape: [9, 9, 9],
};
const SIDECAR_KEYS = ['EchoTime', 'Manufacturer', 'RepetitionTime', 'TaskName', 'format', 'shape'];

const fileUpload = (id: string) => api.get(`/api/file-uploads/${id}/`, { token: researcher.token });

/** The upload once processing has finished. */
async function finished(id: string): Promise<Record<string, any>> {
  const res = await waitFor(`upload ${id} to finish processing`, () => fileUpload(id), {
    until: (r) => r.body.status === 'completed' || r.body.status === 'failed',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  expect(res.body.status).toBe('completed');
  return res.body as Record<string, any>;
}

/** What the processor reads from niftiBytes(), without a sidecar (one plain upload, processed once). */
let extracted: Record<string, unknown>;
beforeAll(async () => {
  const res = await upload(api, researcher.token, 'plain.nii', niftiBytes());
  extracted = (await finished(res.body.id as string)).metadata as Record<string, unknown>;
  expect(extracted.format).toEqual(expect.any(String));
  expect(extracted).not.toHaveProperty('sidecar_keys');
});

const expectMerged = (metadata: Record<string, unknown>) =>
  expect(metadata).toEqual({
    RepetitionTime: 2.5,
    EchoTime: 0.03,
    TaskName: 'rest',
    Manufacturer: { name: 'Siemens', model: 'Prisma' },
    ...extracted,
    sidecar_keys: SIDECAR_KEYS,
  });

test('POST /api/file-uploads/ with sidecar: merged when processing completes, the file winning clashes', async () => {
  const res = await upload(api, researcher.token, 'sub-01_T1w.nii', niftiBytes(), {
    sidecar: JSON.stringify(SIDECAR, null, 2),
  });
  expect(res.status).toBe(201);
  expect(res.body.metadata).toEqual({});
  const done = await finished(res.body.id as string);
  expectMerged(done.metadata as Record<string, unknown>);
  expect(done.metadata.format).toBe(extracted.format);
  expect(done.metadata.shape).toEqual(extracted.shape);
});

test('POST /api/brains/ with a file and sidecar (multipart): the brain shows the merged metadata', async () => {
  const res = await api.post('/api/brains/', {
    token: researcher.token,
    body: brainForm(
      { name: 'sub-02_T1w', atlas: taxonomy.atlas.id, sidecar: JSON.stringify(SIDECAR) },
      nifti(),
    ),
  });
  expect(res.status).toBe(201);
  const brain = await waitFor(
    'the brain to show its processed metadata',
    () => api.get(`/api/brains/${res.body.id}/`, { token: researcher.token }),
    { until: (r) => Object.keys(r.body.metadata ?? {}).length > 0, timeoutMs: 60_000, intervalMs: 100 },
  );
  expectMerged(brain.body.metadata as Record<string, unknown>);
});

test('POST /api/brains/ JSON with a completed upload and sidecar: merged at attach, shown at once', async () => {
  const made = await upload(api, researcher.token, 'sub-03_T1w.nii', niftiBytes());
  const id = made.body.id as string;
  expect((await finished(id)).metadata).toEqual(extracted);
  const res = await api.post('/api/brains/', {
    token: researcher.token,
    json: { name: 'sub-03_T1w', atlas: taxonomy.atlas.id, upload: id, sidecar: SIDECAR },
  });
  expect(res.status).toBe(201);
  const brain = await api.get(`/api/brains/${res.body.id}/`, { token: researcher.token });
  expectMerged(brain.body.metadata as Record<string, unknown>);
  expectMerged((await fileUpload(id)).body.metadata as Record<string, unknown>);
  // The upload's history shows the attach changing its metadata and brain.
  const history = await api.get(`/api/file-uploads/${id}/history/`, { token: researcher.token });
  const attach = (history.body as Array<{ type: string; changes: Record<string, [unknown, unknown]> }>).find(
    (e) => e.type === 'UploadAttachedToBrain',
  )!;
  expect(attach.changes.metadata![0]).toEqual(extracted);
  expectMerged(attach.changes.metadata![1] as Record<string, unknown>);
});

test('a sidecar with the file and another at attach: the attach\u2019s keys win, the rest stays', async () => {
  const made = await upload(api, researcher.token, 'sub-04_T1w.nii', niftiBytes(), {
    sidecar: JSON.stringify({ EchoTime: 0.01, FlipAngle: 8 }),
  });
  const id = made.body.id as string;
  const res = await api.post('/api/brains/', {
    token: researcher.token,
    json: { name: 'sub-04_T1w', atlas: taxonomy.atlas.id, upload: id, sidecar: { EchoTime: 0.02 } },
  });
  expect(res.status).toBe(201);
  const done = await finished(id);
  expect(done.metadata).toEqual({
    EchoTime: 0.02,
    FlipAngle: 8,
    ...extracted,
    sidecar_keys: ['EchoTime', 'FlipAngle'],
  });
});

describe('bad sidecars: 400 on sidecar, nothing recorded, no bytes kept', () => {
  const BAD: Array<[string, string]> = [
    ['not JSON', '{"EchoTime": '],
    ['an array', '[1, 2]'],
    ['a single value', '42'],
    ['too large', JSON.stringify({ Notes: 'x'.repeat(64 * 1024) })],
    // Valid JSON whose string PostgreSQL's jsonb cannot hold (only the escape reveals it).
    ['a NUL escaped in JSON', '{"Notes": "a\\u0000b"}'],
  ];

  test.each(BAD)('POST /api/file-uploads/: %s', async (_what, text) => {
    const before = storedUploads(service.dataDir).length;
    const res = await upload(api, researcher.token, 'bad.nii', niftiBytes(), { sidecar: text });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['sidecar']);
    expect(storedUploads(service.dataDir).length).toBe(before);
  });

  test.each(BAD)('POST /api/brains/ multipart: %s', async (_what, text) => {
    const before = storedUploads(service.dataDir).length;
    const res = await api.post('/api/brains/', {
      token: researcher.token,
      body: brainForm({ name: 'Bad', atlas: taxonomy.atlas.id, sidecar: text }, nifti()),
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['sidecar']);
    expect(storedUploads(service.dataDir).length).toBe(before);
  });

  test('POST /api/brains/ JSON: a string, an array, too large', async () => {
    const made = await upload(api, researcher.token, 'free.nii', niftiBytes());
    const id = made.body.id as string;
    for (const sidecar of ['{"EchoTime": 0.03}', [1, 2], { Notes: 'x'.repeat(64 * 1024) }]) {
      const res = await api.post('/api/brains/', {
        token: researcher.token,
        json: { name: 'Bad', atlas: taxonomy.atlas.id, upload: id, sidecar },
      });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['sidecar']);
    }
    expect((await fileUpload(id)).body.associated_brain).toBeNull();
  });
});
