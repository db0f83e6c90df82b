import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { PNG } from 'pngjs';
import { type Client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startCuratedService } from '#tests/support/curatedService';
import { waitFor } from '#tests/support/waitFor';
import { brainForm, createTaxonomy, type Taxonomy, tiffBytes } from './brains/brainFixtures';

/**
 * Upload processing end to end on the all-in-one: a brain's file goes through the real processor
 * (worker thread, real format readers) into the file_uploads read model. NIfTI test images from
 * Debian's python3-nibabel (installed by .ci/run): missing files fail the test, they never skip it.
 */
const NIBABEL_DATA = '/usr/lib/python3/dist-packages/nibabel/tests/data';

let service: TestService;
let api: Client;
let db: PgClient;
let researcher: { id: number; token: string };
let taxonomy: Taxonomy;

beforeAll(async () => {
  let staff: string;
  ({ service, api, staff } = await startCuratedService());
  researcher = await newUser(api);
  taxonomy = await createTaxonomy(api, staff);
  db = new PgClient({ connectionString: service.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await service.close();
});

interface UploadRow {
  id: string;
  associated_brain_id: number;
  status: string;
  processing_started: Date | null;
  processing_completed: Date | null;
  metadata: Record<string, unknown>;
  preview_blob_key: string | null;
}

/** Creates a brain with one file; resolves with its upload's row once processing has finished. */
async function processed(name: string, bytes: Buffer, field: 'file' | 'image' = 'file'): Promise<UploadRow> {
  const res = await api.post('/api/brains/', {
    token: researcher.token,
    body: brainForm({ name: `Brain ${name}`, atlas: taxonomy.atlas.id }, { field, name, bytes }),
  });
  expect(res.status).toBe(201);
  let row: UploadRow | undefined;
  await waitFor(
    `the upload of ${name} to finish`,
    async () => {
      ({
        rows: [row],
      } = await db.query<UploadRow>(
        `SELECT id, associated_brain_id, status, processing_started, processing_completed, metadata, preview_blob_key
           FROM file_uploads WHERE associated_brain_id = $1`,
        [res.body.id],
      ));
      return row?.status === 'completed' || row?.status === 'failed';
    },
    {
      timeoutMs: 90_000,
      intervalMs: 50,
      detail: () => `its row: ${JSON.stringify(row)}`,
    },
  );
  return row!;
}

const storedBlob = (key: string): Buffer => readFileSync(path.join(service.dataDir, 'blobs', key));

test('a real NIfTI ends completed with its header metadata and a PNG preview', async () => {
  const bytes = readFileSync(path.join(NIBABEL_DATA, 'anatomical.nii'));
  const row = await processed('anatomical.nii', bytes);
  expect(row.status).toBe('completed');
  // The shape as the header's dim field says it, read here independently of the reader (this file
  // is big-endian: sizeof_hdr reads 348 only that way).
  const little = bytes.readInt32LE(0) === 348;
  const int16 = (offset: number) => (little ? bytes.readInt16LE(offset) : bytes.readInt16BE(offset));
  const shape = Array.from({ length: int16(40) }, (_, i) => int16(42 + 2 * i));
  expect(shape.length).toBeGreaterThanOrEqual(3);
  expect(row.metadata).toMatchObject({ format: 'nifti', shape });
  expect(row.processing_started).toBeInstanceOf(Date);
  expect(row.processing_completed!.getTime()).toBeGreaterThanOrEqual(row.processing_started!.getTime());
  expect(row.preview_blob_key).toBe(`previews/${row.id}.png`);
  const png = PNG.sync.read(storedBlob(row.preview_blob_key!));
  expect(png.width).toBeGreaterThan(0);
  expect(png.height).toBeGreaterThan(0);

  const deleted = await api.delete(`/api/brains/${row.associated_brain_id}/`, { token: researcher.token });
  expect(deleted.status).toBe(204);
  await waitFor(
    'the preview blob to be deleted',
    () => !existsSync(path.join(service.dataDir, 'blobs', row.preview_blob_key!)),
    { timeoutMs: 30_000, intervalMs: 50 },
  );
});

test('a gzipped NIfTI is read through the decompression', async () => {
  const row = await processed('example4d.nii.gz', readFileSync(path.join(NIBABEL_DATA, 'example4d.nii.gz')));
  expect(row.status).toBe('completed');
  expect(row.metadata).toMatchObject({ format: 'nifti' });
  expect((row.metadata.shape as number[]).length).toBe(4);
});

test('bytes that do not match the extension end failed with a reason a person can act on', async () => {
  const row = await processed('mislabeled.nii', tiffBytes());
  expect(row.status).toBe('failed');
  expect(row.metadata).toEqual({ error: expect.stringMatching(/NIfTI/) as unknown });
  expect(row.preview_blob_key).toBeNull();
});

test('/health/ names the processor loop and /metrics/ counts outcomes', async () => {
  const health = await api.get('/health/');
  expect(health.body.checks).toHaveProperty('upload_processor');
  const metrics = await fetch(`${service.url}/metrics/`).then((r) => r.text());
  expect(metrics).toMatch(/supervised_loop_up\{[^}]*loop="upload_processor"[^}]*\} 1/);
  expect(metrics).toMatch(/upload_processing_total\{[^}]*outcome="completed"[^}]*\} [1-9]/);
  expect(metrics).toMatch(/upload_processing_total\{[^}]*outcome="failed"[^}]*\} [1-9]/);
});
