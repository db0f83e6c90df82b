import type { Client } from '#tests/support/httpClient';
import { client, newUser } from '#tests/support/httpClient';
import type { TestService } from '#tests/support/testService';
import { rawConnection } from '#tests/support/rawConnection';
import { startTestService } from '#tests/support/testService';
import { waitFor } from '#tests/support/waitFor';
import { filesUnder } from './uploads/uploadFixtures';

/** Short, so that a stalled body is seen cut in a test's time (the default is 30 s). */
const BODY_TIMEOUT_MS = 800;

let service: TestService;
let api: Client;
let alice: { id: number; token: string };

beforeAll(async () => {
  service = await startTestService({ HTTP_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) });
  api = client(service.url);
  alice = await newUser(api);
});
afterAll(() => service.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw connection to the service: what it received, and how long after opening the server closed it. */
function connect() {
  const { hostname, port } = new URL(service.url);
  const { socket, closed, received } = rawConnection(Number(port), hostname);
  const closedWithin = (ms: number) => Promise.race([closed, sleep(ms).then(() => Infinity)]);
  return { socket, closedWithin, received };
}

function answerOf(raw: string) {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  return { status: head.split('\r\n')[0] ?? '', head: head.toLowerCase(), body };
}

const BOUNDARY = 'slowbodyboundary';

/** A multipart upload of `size` bytes of `slow.nii`: its head (request and part headers) and its tail. */
function multipartUpload(size: number) {
  const partHead =
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="slow.nii"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n';
  const tail = `\r\n--${BOUNDARY}--\r\n`;
  const length = Buffer.byteLength(partHead) + size + Buffer.byteLength(tail);
  const head =
    `POST /api/file-uploads/ HTTP/1.1\r\nHost: ${new URL(service.url).host}\r\n` +
    `Authorization: Token ${alice.token}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
    `Content-Length: ${length}\r\n\r\n${partHead}`;
  return { head, tail };
}

async function myUploads(): Promise<{ name: string; file_size_kb: number }[]> {
  return (await api.get('/api/file-uploads/', { token: alice.token })).body;
}

test('a body that stops after one byte, before any login, is answered 408 and closed within the timeout', async () => {
  const connection = connect();
  connection.socket.write(
    `POST /api/auth/login/ HTTP/1.1\r\nHost: ${new URL(service.url).host}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
  );
  expect(await connection.closedWithin(BODY_TIMEOUT_MS + 4000)).toBeLessThan(BODY_TIMEOUT_MS + 4000);
  const answer = answerOf(connection.received());
  expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
  expect(answer.head).toContain('x-content-type-options: nosniff');
  expect(JSON.parse(answer.body)).toEqual({ detail: expect.stringMatching(/timeout/i) });
});

test('many trickling bodies are all cut, none stays open', async () => {
  const connections = Array.from({ length: 21 }, () => connect());
  for (const connection of connections)
    connection.socket.write(
      `POST /api/auth/register/ HTTP/1.1\r\nHost: ${new URL(service.url).host}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a',
    );
  const closedAfter = await Promise.all(connections.map((c) => c.closedWithin(BODY_TIMEOUT_MS + 5000)));
  for (const ms of closedAfter) expect(ms).toBeLessThan(BODY_TIMEOUT_MS + 5000);
});

test('a JSON body that trickles without ever going silent is cut once it has taken the timeout in total', async () => {
  const connection = connect();
  connection.socket.write(
    `POST /api/auth/login/ HTTP/1.1\r\nHost: ${new URL(service.url).host}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n{"email": "',
  );
  const trickle = setInterval(
    () => connection.socket.writable && connection.socket.write('a'),
    BODY_TIMEOUT_MS / 8,
  );
  const closedAfter = await connection.closedWithin(BODY_TIMEOUT_MS + 4000);
  clearInterval(trickle);
  expect(closedAfter).toBeLessThan(BODY_TIMEOUT_MS + 4000);
  const answer = answerOf(connection.received());
  expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
  expect(JSON.parse(answer.body)).toEqual({ detail: expect.stringMatching(/timeout/i) });
});

test('a slow upload that keeps sending is not cut, though it takes many times the timeout', async () => {
  const chunk = Buffer.alloc(4096, 7);
  const chunks = 24; // one every BODY_TIMEOUT_MS / 4: about 6 timeouts in all
  const { head, tail } = multipartUpload(chunk.length * chunks);
  const connection = connect();
  connection.socket.write(head);
  for (let i = 0; i < chunks; i++) {
    await sleep(BODY_TIMEOUT_MS / 4);
    connection.socket.write(chunk);
  }
  connection.socket.write(tail);
  await waitFor('the answer to the slow body', () => connection.received(), {
    timeoutMs: 10_000,
    until: (received) => received.includes('\r\n\r\n{'),
  });
  const answer = answerOf(connection.received());
  expect(answer.status).toBe('HTTP/1.1 201 Created');
  connection.socket.destroy();
  expect(await myUploads()).toEqual(
    expect.arrayContaining([expect.objectContaining({ name: 'slow.nii', file_size_kb: 96 })]),
  );
});

test('an upload that stalls halfway is answered 408, closed, and leaves no upload nor stored bytes', async () => {
  const before = (await myUploads()).length;
  const storedBefore = filesUnder(service.dataDir).length;
  const { head } = multipartUpload(1024 * 1024);
  const connection = connect();
  connection.socket.write(head);
  connection.socket.write(Buffer.alloc(64 * 1024, 1));
  expect(await connection.closedWithin(BODY_TIMEOUT_MS + 4000)).toBeLessThan(BODY_TIMEOUT_MS + 4000);
  expect(answerOf(connection.received()).status).toBe('HTTP/1.1 408 Request Timeout');
  expect(await myUploads()).toHaveLength(before);
  await waitFor('the stored files to be back to before', () => filesUnder(service.dataDir), {
    timeoutMs: 10_000,
    until: (files) => files.length === storedBefore,
  });
});
