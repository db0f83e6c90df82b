import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client, newUser } from '#tests/support/httpClient';
import { type TestService, startTestService } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';
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

  test('two PATCHes at the same offset on two instances: one writes the upload, the other gets 409', async () => {
    const alice = await newUser(client(a.url));
    const bytes = randomFile(400_000);
    const url = (await createTus(a.url, alice.token, bytes.length, { filename: 'y.nii' })).headers.get(
      'location',
    )!;
    const first = slowPatch(url, alice.token, bytes);
    const second = patchTus(onB(url), alice.token, 0, bytes);
    first.release();
    // Whichever has the lock first writes every byte (the other asks it to let go, but it ends
    // its body first); the other then finds the offset moved.
    expect([await first.status, (await second).status].sort()).toEqual([204, 409]);
    expect(sha256(await downloaded(b, alice.token, idOf(url)))).toBe(sha256(bytes));
  });

  test('a PATCH whose client went silent mid-body gives the upload up to a request on the other instance, keeping every byte it received', async () => {
    const alice = await newUser(client(a.url));
    const bytes = randomFile(3_000_000);
    const url = (await createTus(a.url, alice.token, bytes.length, { filename: 's.nii' })).headers.get(
      'location',
    )!;
    // By hand on a raw socket: headers and 1,234,567 bytes of the body, then nothing (no FIN), as a
    // laptop that lost its network leaves a connection.
    const sent = 1_234_567;
    const { pathname } = new URL(url);
    const socket = net.connect(Number(new URL(a.url).port), new URL(a.url).hostname);
    socket.on('error', () => undefined);
    try {
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      const head = [
        `PATCH ${pathname} HTTP/1.1`,
        `Host: ${new URL(a.url).host}`,
        'Tus-Resumable: 1.0.0',
        `Authorization: Token ${alice.token}`,
        'Upload-Offset: 0',
        'Content-Type: application/offset+octet-stream',
        `Content-Length: ${bytes.length}`,
        '',
        '',
      ].join('\r\n');
      await new Promise<void>((resolve, reject) =>
        socket.write(Buffer.concat([Buffer.from(head), bytes.subarray(0, sent)]), (error) =>
          error ? reject(error) : resolve(),
        ),
      );
      // A HEAD on B finding the upload locked asks A's stalled PATCH to let go: within its drain
      // time (3 s, under the 5 s a request waits for a lock) A ends the write, keeping every byte
      // received. Without the request the HEADs would answer 423 until the body's 30 s timeout.
      // (A HEAD before A has the lock sees fewer bytes: asked again.)
      const answers: string[] = [];
      await waitFor(
        `the offset ${sent} on B`,
        async () => {
          const res = await headTus(onB(url), alice.token);
          answers.push(`${res.status} ${res.headers.get('upload-offset')}`);
          return answers.at(-1);
        },
        {
          timeoutMs: 20_000,
          intervalMs: 100,
          until: (answer) => (answer !== `200 ${sent}` ? (answer?.startsWith('423') ?? false) : true),
        },
      );
      expect(answers.at(-1)).toBe(`200 ${sent}`);
      const resumed = await patchTus(onB(url), alice.token, sent, bytes.subarray(sent));
      expect(resumed.status).toBe(204);
      expect(resumed.headers.get('upload-offset')).toBe(String(bytes.length));
      expect(sha256(await downloaded(b, alice.token, idOf(url)))).toBe(sha256(bytes));
    } finally {
      socket.destroy();
    }
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
