import http, { type IncomingMessage, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { HttpError } from '#shared/errors/httpErrors';

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * A bare HTTP server around one request handler, with the same status/JSON mapping as the real
 * error middleware, recording each handler outcome so tests can see server-side failures too.
 */
export class UploadServer {
  readonly outcomes: Promise<Outcome>[] = [];
  private server: Server | undefined;
  private port = 0;

  constructor(private readonly handle: (req: IncomingMessage) => Promise<unknown>) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const outcome = this.handle(req).then(
        (value): Outcome => ({ ok: true, value }),
        (error: unknown): Outcome => ({ ok: false, error }),
      );
      this.outcomes.push(outcome);
      void outcome.then((result) => {
        const [status, body, headers] = result.ok ? [200, result.value, {}] : toResponse(result.error);
        const json = JSON.stringify(body);
        res.writeHead(status, {
          ...headers,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(json),
        });
        res.end(json);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /**
   * Sends a request over a raw socket and resolves with the response once the whole body was
   * accepted too. A raw socket because Node's own client stops writing once a response arrived;
   * a browser keeps sending, and sees a reset or hangs if the server stopped reading.
   */
  async send(
    headers: Record<string, string>,
    body: Readable,
    timeoutMs = 15_000,
  ): Promise<{ status: number; body: unknown }> {
    const socket = net.connect(this.port, '127.0.0.1');
    const failed = new Promise<never>((_, reject) => {
      socket.on('error', reject);
      setTimeout(() => reject(new Error(`no complete exchange within ${timeoutMs} ms`)), timeoutMs).unref();
    });
    try {
      const response = readResponse(socket);
      await Promise.race([sendChunked(socket, headers, body), failed]);
      return await Promise.race([response, failed]);
    } finally {
      socket.destroy();
    }
  }

  /** Starts a request, sends some bytes of it, then drops the connection like a vanished client. */
  async abortAfter(headers: http.OutgoingHttpHeaders, body: Readable, bytes: number): Promise<void> {
    const request = http.request({
      host: '127.0.0.1',
      port: this.port,
      method: 'POST',
      path: '/upload',
      headers,
    });
    request.on('error', () => undefined);
    let sent = 0;
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      const piece = buffer.subarray(0, Math.max(0, bytes - sent));
      if (!request.write(piece)) await new Promise((resolve) => request.once('drain', resolve));
      sent += piece.length;
      if (sent >= bytes) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    request.destroy();
  }
}

function toResponse(error: unknown): [number, unknown, Record<string, string>] {
  if (error instanceof HttpError) return [error.status, error.body(), error.headers()];
  return [500, { detail: error instanceof Error ? `${error.name}: ${error.message}` : 'error' }, {}];
}

async function sendChunked(
  socket: net.Socket,
  headers: Record<string, string>,
  body: Readable,
): Promise<void> {
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  await write(
    socket,
    `POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n${head}\r\n`,
  );
  for await (const chunk of body) {
    const data = chunk as Buffer;
    if (data.length > 0)
      await write(
        socket,
        Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]),
      );
  }
  await write(socket, '0\r\n\r\n');
}

/** Resolves once the data was handed to the kernel: a server that stopped reading stalls this. */
function write(socket: net.Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.write(data, (err) => (err ? reject(err) : resolve()));
  });
}

/** Reads one response with a Content-Length body (the server above always sets one). */
function readResponse(socket: net.Socket): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const headerEnd = received.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const head = received.subarray(0, headerEnd).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      const body = received.subarray(headerEnd + 4);
      if (body.length < length) return;
      resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(body.subarray(0, length).toString()) });
    });
  });
}
