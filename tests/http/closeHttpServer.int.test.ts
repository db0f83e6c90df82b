import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeHttpServer, createHttpServer } from '#shared/http/index';

/** What a client on a keep-alive connection sees: the response, and whether the server hung up after it. */
interface Exchange {
  readonly body: Promise<string>;
  readonly hungUp: Promise<void>;
}

function keepAliveGet(url: string, agent: http.Agent): Exchange {
  let hangUp!: () => void;
  const hungUp = new Promise<void>((resolve) => (hangUp = resolve));
  const body = new Promise<string>((resolve, reject) => {
    const request = http.get(url, { agent }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve(text));
    });
    request.on('socket', (socket) => socket.once('close', hangUp));
    request.on('error', reject);
  });
  return { body, hungUp };
}

/** A server whose handler answers only when the test says so; keep-alive as long as a test could wait. */
async function heldServer() {
  const waiting: (() => void)[] = [];
  let arrived!: () => void;
  const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
  const server = createHttpServer((_request, response) => {
    waiting.push(() => response.end('answered'));
    arrived();
  });
  server.keepAliveTimeout = 600_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/`,
    requestArrived,
    answer: () => waiting.splice(0).forEach((respond) => respond()),
  };
}

describe('closeHttpServer', () => {
  const agent = new http.Agent({ keepAlive: true });
  afterAll(() => agent.destroy());

  test('a request in flight at close is answered, then its keep-alive connection is closed at once', async () => {
    const held = await heldServer();
    const exchange = keepAliveGet(held.url, agent);
    await held.requestArrived;
    let closed = false;
    const closing = closeHttpServer(held.server, 600_000).then(() => (closed = true));
    // Node's close() alone would keep this connection open for keepAliveTimeout (10 minutes here)
    // after the answer, and the close would wait for it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    held.answer();
    expect(await exchange.body).toBe('answered');
    await exchange.hungUp;
    await closing;
    expect(closed).toBe(true);
  });

  test('idle keep-alive connections are closed and new connections refused', async () => {
    const held = await heldServer();
    const first = keepAliveGet(held.url, agent);
    await held.requestArrived;
    held.answer();
    expect(await first.body).toBe('answered');
    await closeHttpServer(held.server, 600_000);
    await first.hungUp;
    await expect(fetch(held.url)).rejects.toThrow();
  });

  test('a request still unanswered after the grace period has its connection cut', async () => {
    const held = await heldServer();
    const exchange = keepAliveGet(held.url, agent);
    await held.requestArrived;
    await closeHttpServer(held.server, 50);
    await expect(exchange.body).rejects.toThrow(/socket hang up|ECONNRESET/);
    await exchange.hungUp;
  });
});
