import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeHttpServer, createHttpServer } from '#shared/http/index';
import { type HttpTimeouts, allowSlowBody } from '#shared/http/connectionTimeouts';
import { rawConnection } from '#tests/support/rawConnection';

/** Short timeouts, so that what a client gets after each is seen in a test's time. */
const TIMEOUTS: HttpTimeouts = { headersTimeoutMs: 1000, bodyTimeoutMs: 400, keepAliveTimeoutMs: 300 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Counts the body's bytes (after `delayMs`, when the handler is slow to begin) and answers the count.
 * As an upload route, it streams the body: no total time, only silences are limited.
 */
function countingHandler(delayMs = 0, upload = false): http.RequestListener {
  return (request, response) => {
    if (upload) allowSlowBody(request);
    setTimeout(() => {
      let bytes = 0;
      request.on('data', (chunk: Buffer) => (bytes += chunk.length));
      request.on('end', () => {
        response.setHeader('Content-Type', 'application/json');
        response.end(JSON.stringify({ bytes }));
      });
    }, delayMs);
  };
}

let server: http.Server;
let port: number;

async function start(listener: http.RequestListener): Promise<void> {
  server = createHttpServer(listener, TIMEOUTS);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
}

afterEach(() => closeHttpServer(server, 100));

const connect = () => rawConnection(port);

const head = (length: number) =>
  `POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\n\r\n`;

function parsed(raw: string) {
  const [top = '', body = ''] = raw.split('\r\n\r\n');
  const [status = '', ...lines] = top.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status, headers, body };
}

test('a body that stalls is answered 408 in JSON and its connection closed within the body timeout', async () => {
  await start(countingHandler());
  const client = connect();
  client.socket.write(head(100) + 'x');
  const closedAfter = await Promise.race([client.closed, sleep(5000).then(() => Infinity)]);
  expect(closedAfter).toBeLessThan(TIMEOUTS.bodyTimeoutMs + 1500);
  const answer = parsed(client.received());
  expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.headers.connection).toBe('close');
  expect(JSON.parse(answer.body)).toEqual({ detail: expect.stringMatching(/timeout/i) });
});

test('an upload that keeps coming is not cut, however long it takes in total', async () => {
  await start(countingHandler(0, true));
  const client = connect();
  const chunks = 16;
  client.socket.write(head(chunks * 1024));
  // Four times the body timeout in total, never silent for half of it.
  for (let i = 0; i < chunks; i++) {
    await sleep(TIMEOUTS.bodyTimeoutMs / 4);
    client.socket.write(Buffer.alloc(1024, 'a'));
  }
  await sleep(200);
  const answer = parsed(client.received());
  expect(answer.status).toBe('HTTP/1.1 200 OK');
  expect(JSON.parse(answer.body)).toEqual({ bytes: chunks * 1024 });
  client.socket.destroy();
});

test('any other body that keeps trickling in is answered 408 once it has taken the body timeout in total', async () => {
  await start(countingHandler());
  const client = connect();
  client.socket.write(head(1000));
  const trickle = setInterval(
    () => client.socket.writable && client.socket.write('a'),
    TIMEOUTS.bodyTimeoutMs / 8,
  );
  const closedAfter = await Promise.race([client.closed, sleep(5000).then(() => Infinity)]);
  clearInterval(trickle);
  expect(closedAfter).toBeGreaterThanOrEqual(TIMEOUTS.bodyTimeoutMs - 50);
  expect(closedAfter).toBeLessThan(TIMEOUTS.bodyTimeoutMs + 1500);
  const answer = parsed(client.received());
  expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
  expect(JSON.parse(answer.body)).toEqual({ detail: expect.stringMatching(/too long/) });
});

test('a handler slow to read the body or to answer is not cut: the silence is the server’s', async () => {
  // The client sends more than the request's buffer takes, then waits for the handler.
  await start(countingHandler(TIMEOUTS.bodyTimeoutMs * 3));
  const client = connect();
  const size = 256 * 1024;
  client.socket.write(head(size) + 'b'.repeat(size));
  await sleep(TIMEOUTS.bodyTimeoutMs * 3 + 500);
  const answer = parsed(client.received());
  expect(answer.status).toBe('HTTP/1.1 200 OK');
  expect(JSON.parse(answer.body)).toEqual({ bytes: size });
  client.socket.destroy();
});

test('headers that trickle in are answered 408 in JSON within the headers timeout', async () => {
  await start(countingHandler());
  const client = connect();
  const header = 'GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ';
  client.socket.write(header);
  const trickle = setInterval(
    () => client.socket.writable && client.socket.write('a'),
    TIMEOUTS.bodyTimeoutMs / 4,
  );
  const closedAfter = await Promise.race([client.closed, sleep(6000).then(() => Infinity)]);
  clearInterval(trickle);
  expect(closedAfter).toBeLessThan(TIMEOUTS.headersTimeoutMs + 1500);
  const answer = parsed(client.received());
  expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(JSON.parse(answer.body)).toEqual({ detail: expect.any(String) });
});

test('a kept-alive connection left idle is closed after the keep-alive timeout', async () => {
  await start(countingHandler());
  const client = connect();
  client.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
  const closedAfter = await Promise.race([client.closed, sleep(5000).then(() => Infinity)]);
  expect(parsed(client.received()).status).toBe('HTTP/1.1 200 OK');
  expect(closedAfter).toBeLessThan(TIMEOUTS.keepAliveTimeoutMs + 1500);
});

test('every answer carries nosniff and no-store unless its writer says otherwise', async () => {
  await start((_request, response) => response.end('plain'));
  const response = await fetch(`http://127.0.0.1:${port}/`);
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('cache-control')).toBe('no-store');
});
