import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '#tests/support/freePort';
import { scratchDir } from '#tests/support/scratchDir';
import { waitFor } from '#tests/support/waitFor';
import { type RunningGateway, startNginxGateway } from './nginxGateway';

/**
 * Which requests the gateway hands to the other replica when the first one dies before answering.
 * Two stand-in command-apis and two query-apis that read the whole request, count it, then drop the
 * connection unanswered: exactly what a replica SIGKILLed after applying a write looks like to nginx.
 */
interface DyingReplica {
  readonly server: Server;
  readonly port: number;
  received: string[];
}

async function dyingReplica(): Promise<DyingReplica> {
  const replica = { received: [] as string[] } as { received: string[]; server: Server; port: number };
  replica.server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      replica.received.push(`${req.method} ${req.url}`);
      res.socket?.destroy();
    });
  });
  await new Promise<void>((resolve) => replica.server.listen(0, '127.0.0.1', resolve));
  replica.port = (replica.server.address() as AddressInfo).port;
  return replica;
}

let commandApis: DyingReplica[];
let queryApis: DyingReplica[];
let gateway: RunningGateway;

beforeAll(async () => {
  commandApis = [await dyingReplica(), await dyingReplica()];
  queryApis = [await dyingReplica(), await dyingReplica()];
  gateway = await startNginxGateway({
    dir: scratchDir('gateway-replay-'),
    port: await freePort(),
    statusPort: await freePort(),
    commandApiPorts: commandApis.map((r) => r.port),
    queryApiPorts: queryApis.map((r) => r.port),
  });
});

afterAll(async () => {
  await gateway?.stop();
  for (const replica of [...(commandApis ?? []), ...(queryApis ?? [])]) replica.server.close();
});

beforeEach(async () => {
  for (const replica of [...commandApis, ...queryApis]) replica.received = [];
  // max_fails=1 fail_timeout=2s: let the previous test's failures expire so both replicas are tried.
  await new Promise((resolve) => setTimeout(resolve, 2100));
});

const receivedBy = (replicas: DyingReplica[]): string[] => replicas.flatMap((r) => r.received);

test.each([
  ['DELETE', '/api/brains/7/'],
  ['PUT', '/api/brains/7/'],
  ['POST', '/api/brains/'],
  ['PATCH', '/api/brains/7/'],
])(
  'a %s a replica received and died on is not replayed on the other: the client reads 502',
  async (method, uri) => {
    const res = await fetch(`${gateway.url}${uri}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ detail: expect.stringMatching(/^Bad gateway/) });
    expect(receivedBy(commandApis)).toEqual([`${method} ${uri}`]);
    expect(receivedBy(queryApis)).toEqual([]);
    // nginx logs once the response is sent: the line may land just after the client read it.
    const logged = await waitFor('the access log line', () =>
      gateway.accessLog().find((line) => line.uri === uri && line.method === method),
    );
    expect(logged?.status).toBe(502);
  },
);

test('a GET (safe to repeat) goes to the other replica once', async () => {
  const res = await fetch(`${gateway.url}/api/brains/7/`);
  expect(res.status).toBe(502);
  expect(receivedBy(queryApis)).toEqual(['GET /api/brains/7/', 'GET /api/brains/7/']);
  expect(new Set(queryApis.map((r) => r.received.length))).toEqual(new Set([1]));
  expect(receivedBy(commandApis)).toEqual([]);
});

test('a DELETE keeps its query string and headers on the way to the replica', async () => {
  let seen: { url?: string; key?: string } = {};
  const listener = (req: { url?: string; headers: Record<string, unknown> }): void => {
    seen = { url: req.url, key: req.headers['idempotency-key'] as string };
  };
  for (const replica of commandApis) replica.server.prependListener('request', listener);
  try {
    await fetch(`${gateway.url}/api/brains/7/?x=%2Fa%20b`, {
      method: 'DELETE',
      headers: { 'idempotency-key': 'k-1' },
    });
  } finally {
    for (const replica of commandApis) replica.server.off('request', listener);
  }
  expect(seen).toEqual({ url: '/api/brains/7/?x=%2Fa%20b', key: 'k-1' });
});
