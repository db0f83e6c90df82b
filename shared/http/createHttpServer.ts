import http from 'node:http';
import type { Duplex } from 'node:stream';

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

/** http.createServer with the JSON answer to parser errors: every service's server is made here. */
export function createHttpServer(listener: http.RequestListener): http.Server {
  return answerClientErrors(http.createServer(listener));
}
