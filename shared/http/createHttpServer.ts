import http from 'node:http';
import type { Duplex } from 'node:stream';
import { DEFAULT_HTTP_TIMEOUTS, type HttpTimeouts, applyTimeouts, serverOptions } from './connectionTimeouts';
import { SECURITY_HEADER_LINES, setSecurityHeaders } from './securityHeaders';

/** What Node's HTTP parser reports, and our answer (decisions.md: every error is JSON). */
const PARSER_ERRORS: Readonly<Record<string, { status: number; detail: string }>> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: 'Request header fields (or the URL) are too large.' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, detail: 'Chunk extensions are too large.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request took too long to arrive.' },
};
const MALFORMED = { status: 400, detail: 'Malformed HTTP request.' };

/** The socket's response in progress, as Node's own clientError fallback checks it. */
interface ServerSocket extends Duplex {
  readonly _httpMessage?: { readonly headersSent?: boolean } | null;
}

/** A complete HTTP/1.1 response, written straight to the socket (there is no request object). */
export function clientErrorResponse(code: string | undefined): string {
  const { status, detail } =
    (code !== undefined && Object.hasOwn(PARSER_ERRORS, code) ? PARSER_ERRORS[code] : undefined) ?? MALFORMED;
  const body = JSON.stringify({ detail });
  return [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...SECURITY_HEADER_LINES,
    '',
    body,
  ].join('\r\n');
}

/**
 * Answers requests Node's parser rejects before Express sees them (a 20 KB URL, a broken request
 * line, a header timeout) with a JSON error instead of Node's empty-bodied one. Like Node's own
 * fallback, nothing is written when the socket is gone or a response to it has begun.
 */
export function answerClientErrors(server: http.Server): http.Server {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ServerSocket) => {
    const inFlight = socket._httpMessage?.headersSent === true;
    if (error.code !== 'ECONNRESET' && socket.writable && !inFlight)
      socket.write(clientErrorResponse(error.code));
    socket.destroy();
  });
  return server;
}

/**
 * http.createServer with the security headers of every answer, the connection timeouts, the JSON
 * answer to parser errors and a shutdown that does not linger: every service's server is made here
 * and closed with closeHttpServer.
 */
export function createHttpServer(
  listener: http.RequestListener,
  timeouts: HttpTimeouts = DEFAULT_HTTP_TIMEOUTS,
): http.Server {
  const server = http.createServer(
    serverOptions(timeouts),
    (request: http.IncomingMessage, response: http.ServerResponse) => {
      setSecurityHeaders(response);
      listener(request, response);
    },
  );
  return releaseConnectionsWhenClosed(answerClientErrors(applyTimeouts(server, timeouts)));
}

/**
 * Once the server is closed, a connection is closed as soon as its response is done. Node's close()
 * closes only the connections idle at that moment: one whose request was still being answered (or
 * whose finished response Node had not yet marked done: the client may read it first) is kept alive
 * afterwards for keepAliveTimeout, and close() waits for it.
 */
function releaseConnectionsWhenClosed(server: http.Server): http.Server {
  server.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => {
    response.once('finish', () => {
      if (!server.listening) server.closeIdleConnections();
    });
  });
  return server;
}

/** How long requests in flight at shutdown may take to finish before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Stops accepting connections, lets the requests in flight finish (each connection is closed when
 * its response is done), and after `graceMs` cuts what is left (a slow upload, a stalled client).
 * Resolves once every connection is gone.
 */
export function closeHttpServer(server: http.Server, graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    // An error means it was not listening: there is nothing left to wait for either way.
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
  });
}
