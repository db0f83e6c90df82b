import { createHash } from 'node:crypto';
import { client, newUser } from '#tests/support/httpClient';
import { type TestService, startTestService } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import {
  createTus,
  fileUpload,
  headTus,
  idOf,
  patchTus,
  randomFile,
  sha256,
  tusHeaders,
  tusUpload,
} from './tusFixtures';

/**
 * The tus flow on S3 needs an S3 server with ListParts: @tus/s3-store reads an upload's offset from
 * the parts of its multipart upload (S3Store.getUpload → retrieveParts). s3rver, which the other S3
 * tests run on, does not implement ListParts (GET /bucket/key?uploadId=… answers 405
 * MethodNotAllowed), so every tus request after creation fails there. These tests run against a real
 * S3, MinIO or moto given by TUS_S3_TEST_ENDPOINT (+ TUS_S3_TEST_ACCESS_KEY, TUS_S3_TEST_SECRET_KEY),
 * and are skipped without one. They pass on moto's server (`python3 -m moto.server -p 45123`, then
 * TUS_S3_TEST_ENDPOINT=http://127.0.0.1:45123 TUS_S3_TEST_ACCESS_KEY=test TUS_S3_TEST_SECRET_KEY=test).
 */
const endpoint = process.env.TUS_S3_TEST_ENDPOINT;
const describeOnS3 = endpoint ? describe : describe.skip;

const MIB = 1024 * 1024;
let service: TestService;

beforeAll(async () => {
  if (!endpoint) return;
  service = await startTestService({
    S3_ENDPOINT: endpoint,
    S3_ACCESS_KEY: process.env.TUS_S3_TEST_ACCESS_KEY ?? 'minioadmin',
    S3_SECRET_KEY: process.env.TUS_S3_TEST_SECRET_KEY ?? 'minioadmin',
    S3_BUCKET: `tus-${process.pid}-${Date.now()}`,
    TUS_S3_PART_SIZE_BYTES: String(5 * MIB),
  });
});
afterAll(async () => {
  await service?.close();
});

async function downloaded(token: string, id: string): Promise<Buffer> {
  const res = await fetch(`${service.url}/api/file-uploads/${id}/download/`, {
    headers: { Authorization: `Token ${token}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describeOnS3('tus on S3 (@tus/s3-store; TUS_S3_TEST_ENDPOINT)', () => {
  test('parts go to the bucket; an upload stopped midway resumes and is recorded with its bytes', async () => {
    const api = client(service.url);
    const alice = await newUser(api);
    const bytes = randomFile(12 * MIB + 12345);
    const created = await createTus(service.url, alice.token, bytes.length, { filename: 's3.nii.gz' });
    expect(created.status).toBe(201);
    const url = created.headers.get('location')!;
    // Part of a part: the S3 store keeps it as an incomplete part and resumes from it.
    expect((await patchTus(url, alice.token, 0, bytes.subarray(0, 7 * MIB))).status).toBe(204);
    expect((await headTus(url, alice.token)).headers.get('upload-offset')).toBe(String(7 * MIB));
    expect((await fileUpload(api, alice.token, idOf(url))).status).toBe(404);
    await tusUpload(
      service.url,
      alice.token,
      bytes,
      { filename: 's3.nii.gz' },
      { uploadUrl: url, chunkSize: 3 * MIB },
    );
    expect((await fileUpload(api, alice.token, idOf(url))).status).toBe(200);
    expect(sha256(await downloaded(alice.token, idOf(url)))).toBe(sha256(bytes));
  });

  test('checksums (held in memory on S3): a mismatch is 460, a match is stored', async () => {
    const alice = await newUser(client(service.url));
    const chunk = randomFile(1000);
    const url = (await createTus(service.url, alice.token, 1000, { filename: 'c.nii' })).headers.get(
      'location',
    )!;
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('base64');
    const wrong = await patchTus(url, alice.token, 0, chunk, {
      'Upload-Checksum': `sha256 ${digest(randomFile(5))}`,
    });
    expect(wrong.status).toBe(460);
    expect((await headTus(url, alice.token)).headers.get('upload-offset')).toBe('0');
    const right = await patchTus(url, alice.token, 0, chunk, {
      'Upload-Checksum': `sha256 ${digest(chunk)}`,
    });
    expect(right.status).toBe(204);
    expect(sha256(await downloaded(alice.token, idOf(url)))).toBe(sha256(chunk));
  });

  test('termination aborts the multipart upload; a NIfTI is processed to completed', async () => {
    const api = client(service.url);
    const alice = await newUser(api);
    const url = (await createTus(service.url, alice.token, 6 * MIB, { filename: 't.nii' })).headers.get(
      'location',
    )!;
    expect((await patchTus(url, alice.token, 0, randomFile(MIB))).status).toBe(204);
    expect((await fetch(url, { method: 'DELETE', headers: tusHeaders(alice.token) })).status).toBe(204);
    expect((await headTus(url, alice.token)).status).toBe(404);

    const { url: nifti } = await tusUpload(service.url, alice.token, niftiBytes(), { filename: 'brain.nii' });
    const done = await waitFor('processing to end', () => fileUpload(api, alice.token, idOf(nifti)), {
      until: (res) => res.body.status === 'completed' || res.body.status === 'failed',
      timeoutMs: 30_000,
    });
    expect(done.body.status).toBe('completed');
  });
});
