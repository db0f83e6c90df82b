import { createHash } from 'node:crypto';
import http from 'node:http';
import { Client as PgClient } from 'pg';
import { RATE_LIMIT_TABLE } from '#shared/http/rateLimit/rateLimitSql';
import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';
import { TEMP_FILE_PATTERN } from '#shared/blobStore/localDisk/blobPaths';
import { waitFor } from '#tests/support/waitFor';
import { UPLOAD_WAIT, filesUnder, patternBytes, upload, uploadForm } from './uploadFixtures';

const MAX_UPLOAD_BYTES = 8 * 1024 * 1024;

let service: TestService;
let api: Client;
let alice: { id: number; token: string; username: string; email: string };

beforeAll(async () => {
  service = await startTestService({ MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) });
  api = client(service.url);
  alice = await newUser(api);
});
afterAll(() => service.close());

const stored = () => filesUnder(service.dataDir);

/** Upload hits the rate-limit store of that database has received from every instance. */
async function uploadHits(databaseUrl: string): Promise<number> {
  const db = new PgClient({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ hits: string | null }>(
      `SELECT sum(hits) AS hits FROM ${RATE_LIMIT_TABLE} WHERE bucket = 'upload'`,
    );
    return Number(rows[0]?.hits ?? 0);
  } finally {
    await db.end();
  }
}

describe('POST /api/file-uploads/', () => {
  test('201 with exactly the documented fields; the bytes are stored once, hashed', async () => {
    const bytes = patternBytes(3 * 1024 + 5);
    const before = stored().length;
    const res = await upload(api, alice.token, 'dir/P56 scan.nii.gz', bytes, { name: 'P56 mouse' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: 'P56 mouse',
      filename: 'P56 scan.nii.gz',
      date_uploaded: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      uploader: { id: alice.id, username: alice.username, email: alice.email },
      status: 'uploaded',
      processing_started: null,
      processing_completed: null,
      file_size_mb: 0,
      file_size_kb: 3,
      associated_brain: null,
      mime_type: 'application/octet-stream',
      s3_url: `${service.url}/api/file-uploads/${res.body.id}/download/`,
      metadata: {},
      preview_url: null,
    });
    // A data file and its content-type sidecar.
    expect(stored()).toHaveLength(before + 2);
    const download = await api.get(`/api/file-uploads/${res.body.id}/download/`, { token: alice.token });
    expect(download.headers.get('etag')).toBe(`"${createHash('sha256').update(bytes).digest('hex')}"`);
  });

  test('name defaults to the file name; sizes are bytes/2^20 and bytes/2^10 to 2 decimals', async () => {
    const res = await upload(api, alice.token, 'slice.TIFF', Buffer.alloc(1_572_864 + 10_240));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'slice.TIFF',
      filename: 'slice.TIFF',
      file_size_mb: 1.51,
      file_size_kb: 1546,
    });
  });

  test.each(['scan.png', 'scan.nii.zip', 'noextension', ''])(
    'an unsupported file name (%j) is 400 on file and nothing is stored',
    async (filename) => {
      const before = stored().length;
      const res = await upload(api, alice.token, filename, Buffer.from('bytes'));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ file: [expect.stringContaining('.nii, .nii.gz, .zarr, .tif or .tiff')] });
      expect(stored()).toHaveLength(before);
    },
  );

  test('no file is 400 on file; an invalid name is 400 on name and the stored file is removed', async () => {
    const before = stored().length;
    const empty = new FormData();
    empty.append('name', 'no file');
    const none = await api.post('/api/file-uploads/', { token: alice.token, body: empty });
    expect(none.status).toBe(400);
    expect(Object.keys(none.body)).toEqual(['file']);
    const badName = await upload(api, alice.token, 'a.nii', Buffer.from('x'), { name: 'n'.repeat(256) });
    expect(badName.status).toBe(400);
    expect(Object.keys(badName.body)).toEqual(['name']);
    expect(stored()).toHaveLength(before);
  });

  test('401 without a token; JSON cannot carry the file (400 on file), another type is 415', async () => {
    const anonymous = await api.post('/api/file-uploads/', { body: uploadForm('a.nii', Buffer.from('x')) });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBeTruthy();
    const json = await api.post('/api/file-uploads/', { token: alice.token, json: { name: 'x' } });
    expect(json.status).toBe(400);
    expect(Object.keys(json.body)).toEqual(['file']);
    const text = await api.post('/api/file-uploads/', {
      token: alice.token,
      body: 'raw bytes',
      headers: { 'Content-Type': 'application/octet-stream' },
    });
    expect(text.status).toBe(415);
  });

  test('a file over MAX_UPLOAD_BYTES is 413 while streaming and leaves nothing stored', async () => {
    const before = stored().length;
    const res = await upload(api, alice.token, 'big.tif', Buffer.alloc(MAX_UPLOAD_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.body.detail).toContain('8 MiB');
    expect(stored()).toHaveLength(before);
    const exact = await upload(api, alice.token, 'exact.tif', Buffer.alloc(MAX_UPLOAD_BYTES));
    expect(exact.status).toBe(201);
  });

  test('a client that drops the connection mid-body leaves no bytes and no upload', async () => {
    const user = await newUser(api);
    const before = stored();
    const boundary = 'abortedboundary1234';
    const req = http.request(`${service.url}/api/file-uploads/`, {
      method: 'POST',
      headers: {
        Authorization: `Token ${user.token}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(MAX_UPLOAD_BYTES),
      },
    });
    req.on('error', () => undefined);
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="aborted.nii"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    const chunk = Buffer.alloc(256 * 1024, 1);
    // Keep sending until the server is visibly writing the file, then cut the connection.
    await waitFor(
      'the server to write a temp file',
      () => {
        req.write(chunk);
        return stored().some((f) => TEMP_FILE_PATTERN.test(f));
      },
      UPLOAD_WAIT,
    );
    req.destroy();
    await waitFor('the temp file to be removed', () => stored(), {
      ...UPLOAD_WAIT,
      until: (files) => files.length === before.length,
    });
    expect(stored().sort()).toEqual([...before].sort());
    const list = await api.get('/api/file-uploads/', { token: user.token });
    expect(list.body).toEqual([]);
  });

  test('an Idempotency-Key retry replays the 201: one upload, one stored file', async () => {
    const before = stored().length;
    const key = `upload-${Date.now()}`;
    const send = () =>
      upload(api, alice.token, 'again.nii', Buffer.from('same bytes'), {}, { 'Idempotency-Key': key });
    const first = await send();
    const second = await send();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body).toEqual(first.body);
    expect(stored()).toHaveLength(before + 2);
  });
});

describe('the upload rate limit', () => {
  test('counts per user across instances of the service, then 429 with the documented body', async () => {
    const limits = { RATE_LIMIT_UPLOAD: '2/hour' };
    const first = await startTestService(limits);
    const second = await startTestService(limits, first.databaseUrl);
    try {
      const [a, b] = [client(first.url), client(second.url)];
      const user = await newUser(a);
      expect((await upload(a, user.token, 'one.nii', Buffer.from('1'))).status).toBe(201);
      // Instances share counts through PostgreSQL, in batches: wait until the first one sent its hit.
      await waitFor('an upload counted by the rate limit', () => uploadHits(first.databaseUrl), {
        ...UPLOAD_WAIT,
        until: (hits) => hits >= 1,
      });
      const two = await upload(b, user.token, 'two.nii', Buffer.from('2'));
      expect(two.status).toBe(201);
      expect(two.headers.get('x-ratelimit-limit')).toBe('2');
      const three = await upload(b, user.token, 'three.nii', Buffer.from('3'));
      expect(three.status).toBe(429);
      expect(three.body).toEqual({
        error: 'rate_limited',
        detail: expect.any(String),
        retry_after: expect.any(Number),
      });
      expect(filesUnder(second.dataDir)).toHaveLength(2);
      // Another user has a budget of their own.
      const other = await newUser(a);
      expect((await upload(a, other.token, 'four.nii', Buffer.from('4'))).status).toBe(201);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
