import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { Upload } from 'tus-js-client';
import { newUser } from '#tests/support/httpClient';
import { testServiceForFile } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';
import { niftiBytes } from '#tests/e2e/brains/brainFixtures';
import {
  TUS,
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

const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;
const UPLOAD_LIMIT = 4;
const { api, service } = testServiceForFile({
  MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES),
  TRUST_PROXY: '1',
  RATE_LIMIT_UPLOAD: `${UPLOAD_LIMIT}/hour`,
});

const downloaded = async (token: string, id: string): Promise<Buffer> => {
  const res = await fetch(`${service().url}/api/file-uploads/${id}/download/`, {
    headers: { Authorization: `Token ${token}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
};

const blobFile = (id: string): string => path.join(service().dataDir, 'blobs', 'uploads', 'tus', id);

async function tusRows(id: string): Promise<number> {
  const db = new PgClient({ connectionString: service().databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM tus.uploads WHERE id = $1', [
      id,
    ]);
    return Number(rows[0]!.n);
  } finally {
    await db.end();
  }
}

describe('tus 1.0 at /api/file-uploads/tus/', () => {
  test('tus-js-client uploads in chunks; the upload is recorded under the id of its URL', async () => {
    const alice = await newUser(api);
    const bytes = randomFile(300_000);
    const { url } = await tusUpload(
      service().url,
      alice.token,
      bytes,
      { filename: 'dir/scan.nii.gz', name: 'Scan A' },
      { chunkSize: 100_000 },
    );
    expect(url).toMatch(new RegExp(`^${service().url}${TUS}[0-9a-f-]{36}$`));
    // The 204 of the last PATCH came after the record: it is there at once.
    const res = await fileUpload(api, alice.token, idOf(url));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: idOf(url), name: 'Scan A', filename: 'scan.nii.gz' });
    expect(res.body.status).toMatch(/^(uploaded|processing|failed|completed)$/);
    expect(sha256(await downloaded(alice.token, idOf(url)))).toBe(sha256(bytes));
  });

  test('before its last byte an upload is absent; HEAD tells offset, length, metadata, expiry', async () => {
    const alice = await newUser(api);
    const created = await createTus(service().url, alice.token, 1000, { filename: 'a.nii' });
    expect(created.status).toBe(201);
    expect(created.headers.get('tus-resumable')).toBe('1.0.0');
    expect(Date.parse(created.headers.get('upload-expires')!)).toBeGreaterThan(Date.now());
    const url = created.headers.get('location')!;
    const patched = await patchTus(url, alice.token, 0, randomFile(400));
    expect(patched.status).toBe(204);
    expect(patched.headers.get('upload-offset')).toBe('400');
    const head = await headTus(url, alice.token);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('400');
    expect(head.headers.get('upload-length')).toBe('1000');
    expect(head.headers.get('cache-control')).toBe('no-store');
    expect(head.headers.get('upload-metadata')).toBe(`filename ${Buffer.from('a.nii').toString('base64')}`);
    expect((await fileUpload(api, alice.token, idOf(url))).status).toBe(404);
    const list = await api.get('/api/file-uploads/', { token: alice.token });
    expect(list.status).toBe(200);
    expect(list.body.map((u: { id: string }) => u.id)).not.toContain(idOf(url));
    // A wrong offset: 409, nothing written.
    expect((await patchTus(url, alice.token, 100, randomFile(10))).status).toBe(409);
    expect((await headTus(url, alice.token)).headers.get('upload-offset')).toBe('400');
  });

  test('a socket destroyed at a random offset; a new client resumes from the URL; the bytes are exact', async () => {
    const alice = await newUser(api);
    const bytes = randomFile(3 * 1024 * 1024);
    const stopAt = Math.floor(bytes.length * (0.2 + 0.6 * Math.random()));
    const url = await new Promise<string>((resolve, reject) => {
      const upload: Upload = new Upload(bytes, {
        endpoint: `${service().url}${TUS}`,
        headers: { Authorization: `Token ${alice.token}` },
        metadata: { filename: 'big.nii' },
        // Several PATCHes: one request of the whole file could be answered before the abort (a
        // quiet machine sends 3 MiB over loopback at once); at most 80 % in, 600 KiB stay unsent.
        chunkSize: 256 * 1024,
        retryDelays: null,
        storeFingerprintForResuming: false,
        onProgress: (sent) => {
          // abort(): tus-js-client destroys the request (and its socket) mid-body.
          if (sent >= stopAt && upload.url) void upload.abort().then(() => resolve(upload.url!), reject);
        },
        onSuccess: () => reject(new Error('finished before the interruption')),
        onError: reject,
      });
      upload.start();
    });
    const offset = await waitFor(
      'the interrupted PATCH to release the upload',
      async () => {
        const head = await headTus(url, alice.token);
        return head.status === 200 ? Number(head.headers.get('upload-offset')) : undefined;
      },
      { until: (o) => o !== undefined },
    );
    expect(offset).toBeLessThan(bytes.length);
    expect((await fileUpload(api, alice.token, idOf(url))).status).toBe(404);
    await tusUpload(service().url, alice.token, bytes, { filename: 'big.nii' }, { uploadUrl: url });
    const recorded = await fileUpload(api, alice.token, idOf(url));
    expect(recorded.status).toBe(200);
    expect(sha256(await downloaded(alice.token, idOf(url)))).toBe(sha256(bytes));
  });

  test('Upload-Checksum: a mismatch is 460 and keeps the offset; a match is written', async () => {
    const alice = await newUser(api);
    const created = await createTus(service().url, alice.token, 2000, { filename: 'c.nii' });
    const url = created.headers.get('location')!;
    const chunk = randomFile(1000);
    const digest = (b: Buffer, algorithm = 'sha256') => createHash(algorithm).update(b).digest('base64');
    const wrong = await patchTus(url, alice.token, 0, chunk, {
      'Upload-Checksum': `sha256 ${digest(randomFile(10))}`,
    });
    expect(wrong.status).toBe(460);
    expect(await wrong.json()).toEqual({ detail: expect.stringContaining('Checksum mismatch') });
    expect((await headTus(url, alice.token)).headers.get('upload-offset')).toBe('0');
    const bad = await patchTus(url, alice.token, 0, chunk, { 'Upload-Checksum': `crc99 ${digest(chunk)}` });
    expect(bad.status).toBe(400);
    const right = await patchTus(url, alice.token, 0, chunk, {
      'Upload-Checksum': `sha256 ${digest(chunk)}`,
    });
    expect(right.status).toBe(204);
    expect(right.headers.get('upload-offset')).toBe('1000');
    const rest = randomFile(1000);
    const sha1 = await patchTus(url, alice.token, 1000, rest, {
      'Upload-Checksum': `sha1 ${digest(rest, 'sha1')}`,
    });
    expect(sha1.status).toBe(204);
    expect(sha256(await downloaded(alice.token, idOf(url)))).toBe(sha256(Buffer.concat([chunk, rest])));
  });

  test('termination: DELETE removes the bytes and the row; the URL is gone', async () => {
    const alice = await newUser(api);
    const created = await createTus(service().url, alice.token, 5000, { filename: 'd.tif' });
    const url = created.headers.get('location')!;
    expect((await patchTus(url, alice.token, 0, randomFile(2500))).status).toBe(204);
    expect(existsSync(blobFile(idOf(url)))).toBe(true);
    expect(await tusRows(idOf(url))).toBe(1);
    const deleted = await fetch(url, { method: 'DELETE', headers: tusHeaders(alice.token) });
    expect(deleted.status).toBe(204);
    expect(existsSync(blobFile(idOf(url)))).toBe(false);
    expect(await tusRows(idOf(url))).toBe(0);
    expect((await headTus(url, alice.token)).status).toBe(404);
    expect((await patchTus(url, alice.token, 2500, randomFile(10))).status).toBe(404);
  });

  test('a finished upload cannot be terminated (its bytes are the recorded upload)', async () => {
    const alice = await newUser(api);
    const { url } = await tusUpload(service().url, alice.token, randomFile(100), { filename: 'e.nii' });
    const deleted = await fetch(url, { method: 'DELETE', headers: tusHeaders(alice.token) });
    expect(deleted.status).toBe(400);
    expect(existsSync(blobFile(idOf(url)))).toBe(true);
  });

  test('Upload-Length over MAX_UPLOAD_BYTES: 413 at creation, nothing stored', async () => {
    const alice = await newUser(api);
    const res = await createTus(service().url, alice.token, MAX_UPLOAD_BYTES + 1, { filename: 'big.nii' });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({ detail: expect.any(String) });
    expect(res.headers.get('location')).toBeNull();
  });

  test('filename missing or of another format: 400 on filename; a bad name: 400 on name', async () => {
    const alice = await newUser(api);
    const wrong = await createTus(service().url, alice.token, 10, { filename: 'notes.txt' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual({ filename: [expect.stringContaining('Unsupported file format')] });
    const none = await createTus(service().url, alice.token, 10, { name: 'x' });
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual({ filename: [expect.stringContaining('filename')] });
    const longName = await createTus(service().url, alice.token, 10, {
      filename: 'a.nii',
      name: 'n'.repeat(256),
    });
    expect(longName.status).toBe(400);
    expect(await longName.json()).toEqual({ name: [expect.any(String)] });
    const deferred = await fetch(`${service().url}${TUS}`, {
      method: 'POST',
      headers: tusHeaders(alice.token, {
        'Upload-Defer-Length': '1',
        'Upload-Metadata': 'filename YS5uaWk=',
      }),
    });
    expect(deferred.status).toBe(400);
    expect(await deferred.json()).toEqual({ detail: expect.stringContaining('Upload-Length') });
  });

  test('401 in the DRF shape without a token or with a bad one', async () => {
    const res = await fetch(`${service().url}${TUS}`, {
      method: 'POST',
      headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': '10', 'Upload-Metadata': 'filename YS5uaWk=' },
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: expect.any(String) });
    const bad = await createTus(service().url, 'not-a-token', 10, { filename: 'a.nii' });
    expect(bad.status).toBe(401);
  });

  test("another user's HEAD, PATCH and DELETE: 404; the upload is untouched", async () => {
    const alice = await newUser(api);
    const mallory = await newUser(api);
    const created = await createTus(service().url, alice.token, 100, { filename: 'f.nii' });
    const url = created.headers.get('location')!;
    expect((await patchTus(url, alice.token, 0, randomFile(50))).status).toBe(204);
    expect((await headTus(url, mallory.token)).status).toBe(404);
    const patch = await patchTus(url, mallory.token, 50, randomFile(50));
    expect(patch.status).toBe(404);
    expect(await patch.json()).toEqual({ detail: 'Not found.' });
    expect((await fetch(url, { method: 'DELETE', headers: tusHeaders(mallory.token) })).status).toBe(404);
    expect((await headTus(url, alice.token)).headers.get('upload-offset')).toBe('50');
  });

  test('creation-with-upload: the first bytes come with the POST', async () => {
    const alice = await newUser(api);
    const bytes = randomFile(50_000);
    const { url } = await tusUpload(
      service().url,
      alice.token,
      bytes,
      { filename: 'g.nii' },
      { uploadDataDuringCreation: true, chunkSize: 20_000 },
    );
    expect(sha256(await downloaded(alice.token, idOf(url)))).toBe(sha256(bytes));
  });

  test('two clients PATCH the same offset at once: one 204, the other 409; the bytes are right', async () => {
    const alice = await newUser(api);
    const bytes = randomFile(2 * 1024 * 1024);
    const url = (
      await createTus(service().url, alice.token, bytes.length, { filename: 'h.nii' })
    ).headers.get('location')!;
    const [a, b] = await Promise.all([
      patchTus(url, alice.token, 0, bytes),
      patchTus(url, alice.token, 0, bytes),
    ]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    expect(sha256(await downloaded(alice.token, idOf(url)))).toBe(sha256(bytes));
  });

  test('a NIfTI sent with tus goes through processing to completed with its metadata', async () => {
    const alice = await newUser(api);
    const { url } = await tusUpload(service().url, alice.token, niftiBytes(), { filename: 'brain.nii' });
    const done = await waitFor('processing to end', () => fileUpload(api, alice.token, idOf(url)), {
      until: (res) => res.body.status === 'completed' || res.body.status === 'failed',
      timeoutMs: 30_000,
    });
    expect(done.body.status).toBe('completed');
    expect(done.body.metadata).toMatchObject({ format: 'nifti', shape: [2, 2, 2] });
  });

  test('behind a proxy the Location carries the forwarded host and port', async () => {
    const alice = await newUser(api);
    const res = await createTus(
      service().url,
      alice.token,
      10,
      { filename: 'a.nii' },
      {
        'X-Forwarded-Host': 'localhost',
        'X-Forwarded-Port': '8443',
        'X-Forwarded-Proto': 'https',
      },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toMatch(new RegExp(`^https://localhost:8443${TUS}[0-9a-f-]{36}$`));
  });

  test('OPTIONS: tus discovery headers and CORS for a browser client', async () => {
    const res = await fetch(`${service().url}${TUS}`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'PATCH',
        'Access-Control-Request-Headers': 'tus-resumable,upload-offset,upload-checksum,authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')).toBe(
      'creation,creation-with-upload,termination,expiration,checksum',
    );
    expect(res.headers.get('tus-checksum-algorithm')).toContain('sha256');
    expect(res.headers.get('tus-max-size')).toBe(String(MAX_UPLOAD_BYTES));
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Upload-Offset/);
    const created = await createTus(
      service().url,
      (await newUser(api)).token,
      10,
      { filename: 'a.nii' },
      {
        Origin: 'https://app.example',
      },
    );
    expect(created.headers.get('access-control-expose-headers')).toMatch(/Location/);
    expect(created.headers.get('access-control-expose-headers')).toMatch(/Upload-Offset/);
  });
});

describe('rate limit', () => {
  test('counted once per created upload, never per PATCH or HEAD; refused creations are refunded', async () => {
    const bob = await newUser(api);
    for (let i = 0; i < 2; i++) {
      // Many PATCHes and HEADs for one upload: one hit.
      const { url } = await tusUpload(
        service().url,
        bob.token,
        randomFile(10_000),
        { filename: 'r.nii' },
        {
          chunkSize: 1000,
        },
      );
      for (let h = 0; h < 5; h++) expect((await headTus(url, bob.token)).status).toBe(200);
    }
    // Refused ones (400, 413) are not uploads.
    for (let i = 0; i < 5; i++)
      expect((await createTus(service().url, bob.token, 10, { filename: 'x.txt' })).status).toBe(400);
    expect(
      (await createTus(service().url, bob.token, MAX_UPLOAD_BYTES + 1, { filename: 'x.nii' })).status,
    ).toBe(413);
    const third = await createTus(service().url, bob.token, 10, { filename: 'x.nii' });
    expect(third.status).toBe(201);
    expect(third.headers.get('x-ratelimit-remaining')).toBe(String(UPLOAD_LIMIT - 3));
  });
});
