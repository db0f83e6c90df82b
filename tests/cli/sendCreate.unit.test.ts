import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiClient } from '#cli/api/apiClient';
import { RequestFailed, bufferedRequest, keepAliveAgent } from '#cli/api/bufferedRequest';
import { CliError } from '#cli/exitCodes';
import type { PlannedScan } from '#cli/import/importPlan';
import { sendCreate } from '#cli/import/sendCreate';

/** What the test server saw of one request. */
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** Which connection it came on (1, 2, ...). */
  readonly connection: number;
}

type Answer = (res: ServerResponse, seen: Seen) => void;

/** A local server answering its n-th request with answers[n] (the last one for every later request). */
async function testServer(
  answers: Answer[],
  create: (listener: http.RequestListener) => http.Server | https.Server = (listener) =>
    http.createServer(listener),
) {
  const seen: Seen[] = [];
  const connections = new Map<Socket, number>();
  const server = create((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        connection: connections.get(req.socket) ?? 0,
      };
      seen.push(request);
      answers[Math.min(seen.length, answers.length) - 1]!(res, request);
    });
  });
  server.on(server instanceof https.Server ? 'secureConnection' : 'connection', (socket: Socket) =>
    connections.set(socket, connections.size + 1),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const created =
  (id: number, headers: Record<string, string> = {}): Answer =>
  (res) =>
    res
      .writeHead(201, { 'Content-Type': 'application/json', ...headers })
      .end(JSON.stringify({ id, readable_id: `scan-${id}` }));

const scan = (file: string): PlannedScan => ({
  file,
  relativePath: 'sub-01/scan.nii',
  size: 12,
  mtimeMs: 0,
  fields: { name: 'scan', category: '3', description: undefined },
  sidecar: { EchoTime: 0.03 },
});

const noProgress = { start: () => undefined, advance: () => undefined, stop: () => undefined };

describe('sendCreate over node:http (a body in memory)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'send-create-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const clientOf = (port: number) =>
    new ApiClient({
      server: `http://127.0.0.1:${port}`,
      token: 'tok-1',
      notice: () => undefined,
      userAgent: 'bic/test node/x',
    });
  const bytes = Buffer.from('NIFTI-BYTES!');
  /** A small scan's create with key `key` to the test server, its notices collected in `notices`. */
  const send = (port: number, key: string, notices: string[]) =>
    sendCreate(
      clientOf(port),
      scan(path.join(dir, 'scan.nii')),
      key,
      noProgress,
      undefined,
      (line) => notices.push(line),
      bytes,
    );

  it('201: the brain; the headers and the multipart body fetch sent', async () => {
    const server = await testServer([created(7)]);
    try {
      const notices: string[] = [];
      const brain = await send(server.port, 'k1', notices);
      expect(brain).toEqual({ id: 7, readable_id: 'scan-7', replayed: false });
      expect(notices).toEqual([]);
      expect(server.seen).toHaveLength(1);
      const [request] = server.seen;
      expect(request!.method).toBe('POST');
      expect(request!.url).toBe('/api/brains/');
      const boundary = /^multipart\/form-data; boundary=(----bic[0-9a-f]{32})$/.exec(
        request!.headers['content-type'] ?? '',
      )?.[1];
      expect(boundary).toBeDefined();
      expect(request!.headers).toMatchObject({
        accept: 'application/json',
        'user-agent': 'bic/test node/x',
        'idempotency-key': 'bic-import-m-k1',
        authorization: 'Bearer tok-1',
        'content-length': String(request!.body.length),
      });
      expect(request!.headers['transfer-encoding']).toBeUndefined();
      const text = request!.body.toString('latin1');
      expect(text).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nscan\r\n`);
      expect(text).toContain(
        `Content-Disposition: form-data; name="sidecar"\r\n\r\n${JSON.stringify({ EchoTime: 0.03 })}\r\n`,
      );
      expect(text).not.toContain('name="description"');
      expect(text).toContain(
        `name="file"; filename="scan.nii"; filename*=UTF-8''scan.nii\r\nContent-Type: application/octet-stream\r\n\r\nNIFTI-BYTES!\r\n--${boundary}--\r\n`,
      );
    } finally {
      await server.close();
    }
  });

  it('a create through tus is JSON; Idempotent-Replayed is reported; no token, no Authorization', async () => {
    const server = await testServer([created(8, { 'Idempotent-Replayed': 'true' })]);
    try {
      const api = new ApiClient({ ...clientOf(server.port).options, token: undefined });
      const brain = await sendCreate(api, scan('/nowhere/scan.nii'), 'k2', noProgress, 'upload-9');
      expect(brain).toEqual({ id: 8, readable_id: 'scan-8', replayed: true });
      const [request] = server.seen;
      expect(request!.headers).toMatchObject({
        'content-type': 'application/json',
        'idempotency-key': 'bic-import-t-k2',
        'content-length': String(request!.body.length),
      });
      expect(request!.headers.authorization).toBeUndefined();
      expect(JSON.parse(request!.body.toString('utf8'))).toEqual({
        upload: 'upload-9',
        name: 'scan',
        category: 3,
        sidecar: { EchoTime: 0.03 },
      });
    } finally {
      await server.close();
    }
  });

  it('429 with Retry-After, then 201: waited, sent again with the same key, on the same connection', async () => {
    const server = await testServer([
      (res) => res.writeHead(429, { 'Retry-After': '0' }).end('{"detail":"slow down"}'),
      created(9),
    ]);
    try {
      const notices: string[] = [];
      const brain = await send(server.port, 'k3', notices);
      expect(brain).toEqual({ id: 9, readable_id: 'scan-9', replayed: false });
      expect(notices).toEqual(['sub-01/scan.nii: rate limited; retrying in 1 s']);
      expect(server.seen.map((r) => r.headers['idempotency-key'])).toEqual([
        'bic-import-m-k3',
        'bic-import-m-k3',
      ]);
      expect(server.seen.map((r) => r.connection)).toEqual([1, 1]);
    } finally {
      await server.close();
    }
  });

  it('503 and 409 with Retry-After are retried; 422 is the API refusal with the hint', async () => {
    const server = await testServer([
      (res) => res.writeHead(503).end('busy'),
      (res) => res.writeHead(409, { 'Retry-After': '0' }).end('{"detail":"still running"}'),
      (res) =>
        res
          .writeHead(422, { 'Content-Type': 'application/json' })
          .end('{"detail":"key reused with other fields"}'),
    ]);
    try {
      const notices: string[] = [];
      const sent = send(server.port, 'k4', notices);
      await expect(sent).rejects.toThrow(CliError);
      await expect(sent).rejects.toThrow(/key reused with other fields .*this scan was sent before/);
      expect(notices).toEqual([
        'sub-01/scan.nii: server answered 503; retrying in 1 s',
        'sub-01/scan.nii: server answered 409; retrying in 1 s',
      ]);
    } finally {
      await server.close();
    }
  });

  it('a connection dropped mid-answer, or before it, is retried with a clear reason', async () => {
    const server = await testServer([
      (res) => {
        res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': '100' });
        res.write('{"id":');
        setTimeout(() => res.socket?.destroy(), 20);
      },
      (res) => res.socket?.destroy(),
      created(10),
    ]);
    try {
      const notices: string[] = [];
      const brain = await send(server.port, 'k5', notices);
      expect(brain).toEqual({ id: 10, readable_id: 'scan-10', replayed: false });
      const where = `http://127.0.0.1:${server.port}`;
      expect(notices).toEqual([
        `sub-01/scan.nii: cannot reach ${where} (the connection closed before the whole answer arrived); retrying in 1 s`,
        `sub-01/scan.nii: cannot reach ${where} (the server closed the connection before answering); retrying in 1 s`,
      ]);
      expect(server.seen.map((r) => r.headers['idempotency-key'])).toEqual(Array(3).fill('bic-import-m-k5'));
      expect(server.seen.map((r) => r.connection)).toEqual([1, 2, 3]);
    } finally {
      await server.close();
    }
  });

  it('many creates share kept-alive connections: at most one per create at once', async () => {
    const server = await testServer([(res, seen) => created(seen.body.length)(res, seen)]);
    try {
      const api = clientOf(server.port);
      for (let round = 0; round < 3; round++)
        await Promise.all(
          [0, 1, 2, 3].map((i) =>
            sendCreate(
              api,
              scan(path.join(dir, 'scan.nii')),
              `k-${round}-${i}`,
              noProgress,
              undefined,
              undefined,
              bytes,
            ),
          ),
        );
      expect(server.seen).toHaveLength(12);
      expect(new Set(server.seen.map((r) => r.connection)).size).toBeLessThanOrEqual(4);
    } finally {
      await server.close();
    }
  });
});

describe('bufferedRequest', () => {
  const post = (port: number, init: Partial<Parameters<typeof bufferedRequest>[1]> = {}) =>
    bufferedRequest(new URL(`http://127.0.0.1:${port}/api/brains/`), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"a":"é"}',
      agent: init.agent ?? keepAliveAgent('http:'),
      ...init,
    });

  it('sends the body with its Content-Length (bytes, not characters) and reads the whole answer', async () => {
    const server = await testServer([
      (res) => res.writeHead(200, { 'X-Thing': 'yes' }).end(Buffer.from('answer')),
    ]);
    try {
      const answer = await post(server.port);
      expect(answer.status).toBe(200);
      expect(answer.headers['x-thing']).toBe('yes');
      expect(answer.body.toString()).toBe('answer');
      expect(server.seen[0]!.headers['content-length']).toBe('10');
      expect(server.seen[0]!.body.toString('utf8')).toBe('{"a":"é"}');
    } finally {
      await server.close();
    }
  });

  it('a server that cannot be reached: RequestFailed with the cause fetch gave', async () => {
    const server = await testServer([() => undefined]);
    await server.close();
    await expect(post(server.port)).rejects.toMatchObject({
      name: 'RequestFailed',
      cause: { message: `connect ECONNREFUSED 127.0.0.1:${server.port}` },
    });
  });

  it('refuses a redirect as fetch with redirect "error" does', async () => {
    const server = await testServer([(res) => res.writeHead(307, { Location: '/elsewhere/' }).end()]);
    try {
      const failed = post(server.port);
      await expect(failed).rejects.toBeInstanceOf(RequestFailed);
      await expect(failed).rejects.toMatchObject({ cause: { message: 'unexpected redirect' } });
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('a kept-alive connection the server closed meanwhile: sent again at once on a new one', async () => {
    const server = await testServer([
      (res) => res.writeHead(200).end('first'),
      (res) => res.socket?.destroy(), // as a server closing an idle connection as the request comes
      (res) => res.writeHead(200).end('third'),
    ]);
    try {
      const agent = keepAliveAgent('http:');
      expect((await post(server.port, { agent })).body.toString()).toBe('first');
      expect((await post(server.port, { agent })).body.toString()).toBe('third');
      expect(server.seen.map((r) => r.connection)).toEqual([1, 1, 2]);
    } finally {
      await server.close();
    }
  });

  it('a server silent for longer than the idle timeout: RequestFailed saying so', async () => {
    const server = await testServer([() => undefined]);
    try {
      await expect(post(server.port, { idleTimeoutMs: 100 })).rejects.toMatchObject({
        name: 'RequestFailed',
        cause: { message: 'no answer from the server for 0.1 s' },
      });
    } finally {
      await server.close();
    }
  });

  it('an abort rejects with the signal reason, as fetch does', async () => {
    const server = await testServer([() => undefined]);
    try {
      const controller = new AbortController();
      const sent = post(server.port, { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await expect(sent).rejects.toMatchObject({ name: 'AbortError' });
      await expect(post(server.port, { signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: 'AbortError',
      });
    } finally {
      await server.close();
    }
  });

  const openssl = (() => {
    try {
      execFileSync('openssl', ['version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  (openssl ? it : it.skip)('https: sent over TLS', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'buffered-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
          '-keyout',
          path.join(dir, 'key.pem'),
          '-out',
          path.join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      const key = readFileSync(path.join(dir, 'key.pem'));
      const cert = readFileSync(path.join(dir, 'cert.pem'));
      const server = await testServer(
        [(res) => res.writeHead(201).end('{"id":1}'), (res) => res.writeHead(201).end('{"id":2}')],
        (listener) => https.createServer({ key, cert }, listener),
      );
      try {
        expect(keepAliveAgent('https:')).toBeInstanceOf(https.Agent);
        const agent = new https.Agent({ keepAlive: true, ca: cert });
        const url = new URL(`https://127.0.0.1:${server.port}/api/brains/`);
        const init = { method: 'POST', headers: {}, body: Buffer.from('x'), agent };
        expect((await bufferedRequest(url, init)).body.toString()).toBe('{"id":1}');
        expect((await bufferedRequest(url, init)).body.toString()).toBe('{"id":2}');
        expect(server.seen.map((r) => r.connection)).toEqual([1, 1]);
        agent.destroy();
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
