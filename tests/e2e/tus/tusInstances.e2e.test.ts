import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client, newUser } from '#tests/support/httpClient';
import { type TestService, startTestService } from '#tests/support/testService';
import {
  TUS,
  createTus,
  fileUpload,
  headTus,
  idOf,
  patchTus,
  randomFile,
  sha256,
  tusUpload,
} from './tusFixtures';

/** Two instances on one database and one DATA_DIR, as two replicas behind a gateway. */
let dataDir: string;
let a: TestService;
let b: TestService;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'catalogue-tus-'));
  a = await startTestService({ DATA_DIR: dataDir });
  b = await startTestService({ DATA_DIR: dataDir }, a.databaseUrl);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const onB = (url: string): string => url.replace(a.url, b.url);

async function downloaded(service: TestService, token: string, id: string): Promise<Buffer> {
  const res = await fetch(`${service.url}/api/file-uploads/${id}/download/`, {
    headers: { Authorization: `Token ${token}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** A PATCH whose body arrives in two halves, the second once `release` is called. */
function slowPatch(url: string, token: string, body: Buffer) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const status = new Promise<number>((resolve, reject) => {
    const req = http.request(url, {
      method: 'PATCH',
      headers: {
        'Tus-Resumable': '1.0.0',
        Authorization: `Token ${token}`,
        'Upload-Offset': '0',
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(body.length),
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    const half = Math.floor(body.length / 2);
    req.write(body.subarray(0, half));
    void released.then(() => req.end(body.subarray(half)));
  });
  return { release, status };
}

describe('tus across instances', () => {
  test('started on one instance, finished on the other', async () => {
    const api = client(a.url);
    const alice = await newUser(api);
    const bytes = randomFile(1_500_000);
    const created = await createTus(a.url, alice.token, bytes.length, { filename: 'x.nii.gz' });
    const url = created.headers.get('location')!;
    expect(url.startsWith(`${a.url}${TUS}`)).toBe(true);
    expect((await patchTus(url, alice.token, 0, bytes.subarray(0, 600_000))).status).toBe(204);
    const head = await headTus(onB(url), alice.token);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('600000');
    await tusUpload(
      b.url,
      alice.token,
      bytes,
      { filename: 'x.nii.gz' },
      { uploadUrl: onB(url), chunkSize: 400_000 },
    );
    expect((await fileUpload(client(a.url), alice.token, idOf(url))).status).toBe(200);
    expect(sha256(await downloaded(a, alice.token, idOf(url)))).toBe(sha256(bytes));
  });

  test('a PATCH on one instance holds the upload: the same offset on the other waits, then 409', async () => {
    const alice = await newUser(client(a.url));
    const bytes = randomFile(400_000);
    const url = (await createTus(a.url, alice.token, bytes.length, { filename: 'y.nii' })).headers.get(
      'location',
    )!;
    const first = slowPatch(url, alice.token, bytes);
    // The first PATCH has its lock once part of its body is in.
    for (;;) {
      const head = await headTus(onB(url), alice.token);
      if (head.status === 423 || Number(head.headers.get('upload-offset')) > 0) break;
    }
    const second = patchTus(onB(url), alice.token, 0, bytes);
    first.release();
    expect(await first.status).toBe(204);
    expect((await second).status).toBe(409);
    expect(sha256(await downloaded(b, alice.token, idOf(url)))).toBe(sha256(bytes));
  });
});

describe('restart', () => {
  test('a server restarted mid-upload resumes where it stopped', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catalogue-tus-restart-'));
    try {
      let service = await startTestService({ DATA_DIR: dir });
      const alice = await newUser(client(service.url));
      const bytes = randomFile(1_000_000);
      const url = (
        await createTus(service.url, alice.token, bytes.length, { filename: 'z.tif' })
      ).headers.get('location')!;
      expect((await patchTus(url, alice.token, 0, bytes.subarray(0, 300_000))).status).toBe(204);
      const databaseUrl = service.databaseUrl;
      await service.close();
      service = await startTestService({ DATA_DIR: dir }, databaseUrl);
      try {
        const moved = url.replace(/^http:\/\/[^/]+/, service.url);
        expect((await headTus(moved, alice.token)).headers.get('upload-offset')).toBe('300000');
        await tusUpload(service.url, alice.token, bytes, { filename: 'z.tif' }, { uploadUrl: moved });
        expect(sha256(await downloaded(service, alice.token, idOf(url)))).toBe(sha256(bytes));
      } finally {
        await service.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
