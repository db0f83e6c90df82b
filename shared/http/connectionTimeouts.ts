import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a connection may keep the server waiting (docs/security.md, "Timeouts": HTTP_*_TIMEOUT_MS).
 * All stay below a gateway's own (nginx: client_header_timeout and client_body_timeout, 60 s by
 * default), so the gateway never forwards what the service has already given up on.
 */
export interface HttpTimeouts {
  /** From the start of a request (or of the connection) to the end of its headers, in total. */
  readonly headersTimeoutMs: number;
  /**
   * The longest silence of a client while its request is arriving, and the most time a body that
   * is not an upload (JSON, a url-encoded form: at most JSON_BODY_LIMIT_BYTES) may take in total.
   * An upload (a multipart body a route streams, see allowSlowBody) has no total: of any size, it
   * keeps going as long as its bytes keep coming. Past either, 408 while an answer can still be
   * sent, and the connection closed.
   */
  readonly bodyTimeoutMs: number;
  /** How long a kept-alive connection may wait idle for its next request. */
  readonly keepAliveTimeoutMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = {
  headersTimeoutMs: 20_000,
  bodyTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

const STALLED_BODY = JSON.stringify({ detail: 'Request timeout: the request body stopped arriving.' });
const SLOW_BODY = JSON.stringify({ detail: 'Request timeout: the request body took too long to arrive.' });

const uploads = new WeakSet<http.IncomingMessage>();

/**
 * Marks a request whose body is an upload being streamed: it is not held to a total time, only to
 * the longest silence (the route dispatcher calls this for multipart bodies).
 */
export function allowSlowBody(request: http.IncomingMessage): void {
  uploads.add(request);
}

function hasBody(request: http.IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Options of http.createServer: Node's own headers deadline (answered 408 by the clientError
 * handler) checked often enough to hold, and no total deadline for a request (see bodyTimeoutMs).
 */
export function serverOptions(timeouts: HttpTimeouts): http.ServerOptions {
  return {
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: 0,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4))),
  };
}

interface Exchange {
  readonly request: http.IncomingMessage;
  readonly response: http.ServerResponse;
}

/**
 * Whether the request is waiting for its client: its body is unfinished and the server would take
 * more. A paused body (a slow store behind an upload) or one the handler has not begun to read
 * (its buffer full) is silent because of the server, not the client, and is not cut.
 */
function waitsForClient(request: http.IncomingMessage): boolean {
  return !request.complete && !request.isPaused() && request.readableLength < request.readableHighWaterMark;
}

/** Whether the client stopped reading an answer under way (its bytes wait in the socket). */
function stopsReading(response: http.ServerResponse, socket: Socket): boolean {
  return (
    response.headersSent &&
    !response.writableFinished &&
    (socket.writableLength > 0 || response.writableNeedDrain)
  );
}

const cut = new WeakSet<http.ServerResponse>();

/** Whether the response was the 408 of a stalled body (its handler then fails to read the body). */
export function wasCutForStalling(response: http.ServerResponse): boolean {
  return cut.has(response);
}

function answerStalledBody({ request, response }: Exchange, socket: Socket, body = STALLED_BODY): void {
  cut.add(response);
  // Once the answer is out Node no longer tells the request its connection closed: the handler
  // still reading the body (a multipart upload holding a file open) must hear of it.
  socket.once('close', () => request.destroy());
  if (response.headersSent) {
    socket.destroy();
    return;
  }
  // Connection: close makes Node end the connection once this is written: the rest of the body is
  // never read.
  response.writeHead(408, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
  // A client that does not take the answer either is not waited for.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * A body that is not an upload must be in within bodyTimeoutMs however it trickles. Time the server
 * held the body (its handler slow to begin, its buffer full) is not the client's: once the server
 * reads again, what was sent meanwhile is still arriving, and the client has bodyTimeoutMs again.
 */
function limitBodyTime(exchange: Exchange, socket: Socket, ms: number): void {
  const { request, response } = exchange;
  let deadline = Date.now() + ms;
  let heldByServer = false;
  const check = (): void => {
    if (request.complete || uploads.has(request) || response.writableEnded || socket.destroyed) return;
    if (!waitsForClient(request)) {
      heldByServer = true;
      timer = setTimeout(check, Math.max(50, ms / 4)).unref();
      return;
    }
    if (heldByServer) {
      heldByServer = false;
      deadline = Date.now() + ms;
    }
    const left = deadline - Date.now();
    if (left <= 0) answerStalledBody(exchange, socket, SLOW_BODY);
    else timer = setTimeout(check, left).unref();
  };
  let timer = setTimeout(check, ms).unref();
  response.once('close', () => clearTimeout(timer));
}

/**
 * The socket idle timeout (server.timeout) as bodyTimeoutMs, and what a silence means: a request
 * whose client went quiet is answered 408 and closed; a client that stopped reading its answer is
 * cut; a connection with nothing under way is closed; a request the server is still working on is
 * left alone (the timer starts again with the next byte either way). A body that is not an upload
 * also has bodyTimeoutMs in total (limitBodyTime).
 */
export function applyTimeouts(server: http.Server, timeouts: HttpTimeouts): http.Server {
  const exchanges = new WeakMap<Socket, Exchange>();
  server.timeout = timeouts.bodyTimeoutMs;
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const socket = request.socket;
    const exchange = { request, response };
    exchanges.set(socket, exchange);
    response.once('close', () => {
      if (exchanges.get(socket) === exchange) exchanges.delete(socket);
    });
    if (hasBody(request)) limitBodyTime(exchange, socket, timeouts.bodyTimeoutMs);
  });
  server.on('timeout', (socket: Socket) => {
    const exchange = exchanges.get(socket);
    if (!exchange) socket.destroy();
    else if (waitsForClient(exchange.request)) answerStalledBody(exchange, socket);
    else if (stopsReading(exchange.response, socket)) socket.destroy();
  });
  return server;
}
