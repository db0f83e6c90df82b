import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { startTestService } from '#tests/support/testService';
import { brainForm, createTaxonomy } from '#tests/e2e/brains/brainFixtures';
import { patternBytes, upload } from './uploadFixtures';

/** The slice of s3rver's API used here; the package ships no type declarations. */
interface S3rverServer {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverOptions = { address: string; port: number; silent: boolean; directory: string };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- untyped package, typed just above
const S3rver = require('s3rver') as new (options: S3rverOptions) => S3rverServer;

let s3rverDir: string;
let s3rver: S3rverServer;
let port: number;
let service: TestService;
let api: Client;
let alice: { token: string };

/** The service on s3rver (which checks SigV4 signatures against its fixed credentials). */
function onS3rver(extra: Record<string, string>): Promise<TestService> {
  return startTestService({
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_ACCESS_KEY: 'S3RVER',
    S3_SECRET_KEY: 'S3RVER',
    S3_BUCKET: `uploads-${process.pid}-${Date.now()}`,
    ...extra,
  });
}

beforeAll(async () => {
  s3rverDir = await mkdtemp(path.join(tmpdir(), 's3rver-e2e-'));
  s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3rverDir });
  ({ port } = await s3rver.run());
  // Clients reach the store as "localhost": the URL must be signed for that host, not 127.0.0.1.
  service = await onS3rver({
    S3_PRESIGNED_DOWNLOADS: 'true',
    S3_PUBLIC_ENDPOINT: `http://localhost:${port}`,
  });
  api = client(service.url);
  alice = await newUser(api);
});
afterAll(async () => {
  await service.close();
  await s3rver.close();
  await rm(s3rverDir, { recursive: true, force: true });
});

describe('presigned downloads (S3_PRESIGNED_DOWNLOADS on s3rver)', () => {
  const bytes = patternBytes(6 * 1024 * 1024 + 3);

  test('s3_url and the download route give a presigned URL that serves the bytes as an attachment', async () => {
    const created = await upload(api, alice.token, 'scan été.nii', bytes);
    expect(created.status).toBe(201);
    const s3Url = new URL(created.body.s3_url as string);
    expect(s3Url.host).toBe(`localhost:${port}`);
    expect(s3Url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(Number(s3Url.searchParams.get('X-Amz-Expires'))).toBe(3600);

    const route = await fetch(`${service.url}/api/file-uploads/${created.body.id}/download/`, {
      headers: { Authorization: `Token ${alice.token}` },
      redirect: 'manual',
    });
    expect(route.status).toBe(302);
    await route.arrayBuffer();
    expect(route.headers.get('cache-control')).toBe('no-store');
    const location = route.headers.get('location')!;
    expect(new URL(location).host).toBe(`localhost:${port}`);

    const fromStore = await fetch(location);
    expect(fromStore.status).toBe(200);
    expect(Buffer.from(await fromStore.arrayBuffer()).equals(bytes)).toBe(true);
    expect(fromStore.headers.get('content-disposition')).toContain(
      `filename*=UTF-8''scan%20%C3%A9t%C3%A9.nii`,
    );
    const part = await fetch(location, { headers: { Range: 'bytes=5-9' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(5, 10))).toBe(true);
    // s3rver does not check SigV4 signatures, so their validity is MinIO's suite's to prove; what
    // is checked here is that the URL names the public host and asks for the attachment headers.
  });

  test('another user still gets 404 rather than a URL', async () => {
    const created = await upload(api, alice.token, 'private.nii', Buffer.from('private'));
    const bob = await newUser(api);
    const res = await fetch(`${service.url}/api/file-uploads/${created.body.id}/download/`, {
      headers: { Authorization: `Token ${bob.token}` },
      redirect: 'manual',
    });
    expect(res.status).toBe(404);
    await res.arrayBuffer();
  });

  test("a brain's file route redirects too", async () => {
    const staff = await onS3rver({
      ADMIN_EMAIL: 'curator@example.org',
      ADMIN_PASSWORD: 'curator-password',
      S3_PRESIGNED_DOWNLOADS: '1',
    });
    try {
      const staffApi = client(staff.url);
      const login = await staffApi.post('/api/auth/login/', {
        json: { email: 'curator@example.org', password: 'curator-password' },
      });
      const place = await createTaxonomy(staffApi, login.body.token as string);
      const brain = await staffApi.post('/api/brains/', {
        token: login.body.token as string,
        body: brainForm(
          { name: 'On S3', atlas: place.atlas.id },
          { name: 'on-s3.nii', bytes: Buffer.from('s3 bytes') },
        ),
      });
      expect(brain.status).toBe(201);
      const res = await fetch(`${staff.url}/api/brains/${brain.body.id}/file/`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      await res.arrayBuffer();
      // Without S3_PUBLIC_ENDPOINT the URL is signed for S3_ENDPOINT itself.
      const location = res.headers.get('location')!;
      expect(new URL(location).host).toBe(`127.0.0.1:${port}`);
      expect(Buffer.from(await (await fetch(location)).arrayBuffer()).toString()).toBe('s3 bytes');
    } finally {
      await staff.close();
    }
  });

  test('without S3_PRESIGNED_DOWNLOADS the service proxies the bytes from S3, ranges included', async () => {
    const proxied = await onS3rver({});
    try {
      const proxiedApi = client(proxied.url);
      const user = await newUser(proxiedApi);
      const created = await upload(proxiedApi, user.token, 'proxied.nii', bytes);
      expect(created.body.s3_url).toBe(`${proxied.url}/api/file-uploads/${created.body.id}/download/`);
      const part = await fetch(created.body.s3_url as string, {
        headers: { Authorization: `Token ${user.token}`, Range: 'bytes=-4' },
      });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(bytes.length - 4))).toBe(true);
    } finally {
      await proxied.close();
    }
  });
});
