import http from 'node:http';
import https from 'node:https';

/**
 * A request whose body is already whole in memory, sent with node:http(s) over a keep-alive agent
 * instead of fetch: for the many small creates of `bic import`, where fetch's machinery (web
 * streams, undici's request objects) was half of the client's CPU. Its answer is read whole too.
 * Like fetch (and with undici's default timeouts), a request that gets no complete answer rejects
 * with an error whose `cause` says why (RequestFailed), so callers report both the same way.
 */

/** undici's defaults, which fetch applied: a connection must open within 10 s... */
export const CONNECT_TIMEOUT_MS = 10_000;
/** ...and the server may stay silent at most 300 s, before its headers or within its body. */
export const IDLE_TIMEOUT_MS = 300_000;

/** An answer read whole: its status, headers (names in lower case) and body. */
export interface BufferedResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface BufferedRequestInit {
  readonly method: string;
  /** Sent as given, with Content-Length added from the body. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | string;
  /** The keep-alive agent of the URL's protocol (keepAliveAgent). */
  readonly agent: http.Agent;
  /** Aborts the request; it rejects with the signal's reason (as fetch does). */
  readonly signal?: AbortSignal;
  readonly connectTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
}

/** A request that got no complete answer (a network error, a timeout, a redirect): `cause` says why. */
export class RequestFailed extends Error {
  constructor(cause: Error) {
    super(`request failed: ${cause.message}`, { cause });
    this.name = 'RequestFailed';
  }
}

/**
 * An agent that keeps connections open for the next request. Its sockets do not keep the process
 * alive once idle, and one idle longer than the server's Keep-Alive hint (less 1 s) is closed, not
 * reused (Node applies the hint only when it is below the agent's timeout: hence that timeout).
 * maxSockets stays Infinity: as many connections as requests at once (the import's jobs).
 */
export function keepAliveAgent(protocol: string): http.Agent {
  const options = { keepAlive: true, timeout: IDLE_TIMEOUT_MS };
  return protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

/**
 * Sends the request and reads its whole answer. Redirects are refused as fetch's `redirect:
 * 'error'` refuses them (a create is never sent on elsewhere). A request that fails on a kept-alive
 * connection the server closed meanwhile, before any answer, is sent once more on a new one.
 */
export async function bufferedRequest(url: URL, init: BufferedRequestInit): Promise<BufferedResponse> {
  const body = typeof init.body === 'string' ? Buffer.from(init.body) : init.body;
  try {
    return await attempt(url, init, body);
  } catch (error) {
    if (!(error instanceof StaleConnection)) throw error;
    return await attempt(url, init, body);
  }
}

/** A kept-alive connection that failed before any answer came (closed by the server meanwhile). */
class StaleConnection extends RequestFailed {}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function attempt(url: URL, init: BufferedRequestInit, body: Uint8Array): Promise<BufferedResponse> {
  return new Promise((resolve, reject) => {
    const { signal } = init;
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    let settled = false;
    let answered = false;
    /** Why we destroyed the request ourselves (a timeout), which beats what the socket then reports. */
    let ours: Error | undefined;
    let connectTimer: NodeJS.Timeout | undefined;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) reject(abortReason(signal));
      else if (ours) reject(new RequestFailed(ours));
      else if (!answered && request.reusedSocket && isReset(error)) reject(new StaleConnection(error));
      else reject(new RequestFailed(clearer(error, answered)));
    };
    const onAbort = (): void => {
      request.destroy();
      fail(new Error('aborted'));
    };
    const send = url.protocol === 'https:' ? https.request : http.request;
    const request = send(
      url,
      {
        method: init.method,
        headers: { ...init.headers, 'Content-Length': String(body.byteLength) },
        agent: init.agent,
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', fail);
        response.on('end', () => {
          if (settled) return;
          const status = response.statusCode ?? 0;
          if (REDIRECTS.has(status) && response.headers.location !== undefined) {
            fail(new Error('unexpected redirect'));
            return;
          }
          settled = true;
          clearTimeout(connectTimer);
          signal?.removeEventListener('abort', onAbort);
          resolve({ status, headers: response.headers, body: Buffer.concat(chunks) });
        });
      },
    );
    request.on('error', fail);
    request.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timeoutMs = init.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
      connectTimer = setTimeout(() => {
        ours = new Error(`could not connect within ${timeoutMs / 1000} s`);
        request.destroy(ours);
      }, timeoutMs);
      socket.once('connect', () => clearTimeout(connectTimer));
    });
    const idleMs = init.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
    // On a reused socket too (it still has the agent's idle-pool timeout otherwise).
    request.setTimeout(idleMs, () => {
      ours = new Error(`no answer from the server for ${idleMs / 1000} s`);
      request.destroy(ours);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}

/** The signal's reason, as fetch rejects with it (an AbortError, or the TimeoutError of AbortSignal.timeout). */
function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new DOMException('This operation was aborted', 'AbortError');
}

function isReset(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** Node's terse "socket hang up" and "aborted", said plainly; other errors as they are. */
function clearer(error: Error, answered: boolean): Error {
  if (error.message === 'socket hang up')
    return Object.assign(new Error('the server closed the connection before answering'), {
      code: 'ECONNRESET',
    });
  if (answered && error.message === 'aborted')
    return Object.assign(new Error('the connection closed before the whole answer arrived'), {
      code: 'ECONNRESET',
    });
  return error;
}
