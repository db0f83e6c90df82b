import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError, ExitCode } from '#cli/exitCodes';
import {
  type BufferedRequestInit,
  type BufferedResponse,
  bufferedRequest,
  keepAliveAgent,
} from './bufferedRequest';
import { errorForResponse } from './errorForResponse';
import { retryAfterSeconds, retryDelayMs } from './retryDelay';

export type Query = Record<string, string | number | boolean | undefined>;

/** A request body made afresh for every attempt (a file stream can be read only once). */
export interface BodyFactory {
  (): { body: RequestInit['body']; headers: Record<string, string> };
}

export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the server, with its trailing slash: `/api/brains/`. */
  readonly path: string;
  readonly query?: Query;
  readonly json?: unknown;
  readonly body?: BodyFactory;
  readonly headers?: Record<string, string>;
  /** Overrides the stored token (login checks a token before storing it); null sends none. */
  readonly token?: string | null;
  /** Whole-request timeout; null for transfers, which may rightly take long (undici's idle timeouts still apply). */
  readonly timeoutMs?: number | null;
  /** Statuses handed back instead of raised (a download's 416). */
  readonly accept?: readonly number[];
}

export interface ApiClientOptions {
  readonly server: string;
  readonly token: string | undefined;
  /** Where waits and retries are announced (stderr). */
  readonly notice: (line: string) => void;
  readonly userAgent: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_RATE_LIMIT_RETRIES = 5;
const MAX_TRANSIENT_RETRIES = 3;
/** 503/502/504, and 409 with Retry-After: another attempt with our Idempotency-Key is still running. */
const TRANSIENT = new Set([502, 503, 504]);

/**
 * The HTTP client of every command. Every write carries an Idempotency-Key that stays the same
 * across its retries, so retrying after a timeout, a dropped connection or a 503 can never apply a
 * write twice; a 429 is waited out (Retry-After, bounded) and retried.
 */
export class ApiClient {
  /** The keep-alive agents of sendBuffered, by protocol: made on first use, one per client (per run). */
  private readonly agents = new Map<string, http.Agent>();

  constructor(readonly options: ApiClientOptions) {}

  get server(): string {
    return this.options.server;
  }

  get hasToken(): boolean {
    return this.options.token !== undefined;
  }

  url(path: string, query: Query = {}): URL {
    const url = new URL(`${this.options.server}${path}`); // keeps a path prefix of the server
    for (const [key, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(key, String(value));
    return url;
  }

  async json<T>(request: ApiRequest): Promise<T> {
    const response = await this.send(request);
    const text = await response.text();
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(
        `the server answered ${response.status} with a body that is not JSON`,
        ExitCode.failure,
      );
    }
  }

  /** Sends with retries; resolves with a 2xx (or accepted) response whose body is not read yet. */
  async send(request: ApiRequest): Promise<Response> {
    const idempotencyKey = request.method === 'GET' ? undefined : randomUUID();
    let rateLimited = 0;
    let transient = 0;
    for (;;) {
      let response: Response;
      try {
        response = await fetch(this.url(request.path, request.query), this.init(request, idempotencyKey));
      } catch (error) {
        if (++transient > MAX_TRANSIENT_RETRIES) throw this.unreachable(error);
        await this.wait(retryDelayMs(transient, undefined), `${this.reason(error)}; retrying`);
        continue;
      }
      if (response.ok || request.accept?.includes(response.status)) return response;
      const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
      if (response.status === 429 && ++rateLimited <= MAX_RATE_LIMIT_RETRIES) {
        await response.body?.cancel();
        await this.wait(retryDelayMs(rateLimited, retryAfter ?? 1), 'rate limited; retrying');
        continue;
      }
      const keyStillRunning = response.status === 409 && retryAfter !== undefined && idempotencyKey;
      if ((TRANSIENT.has(response.status) || keyStillRunning) && ++transient <= MAX_TRANSIENT_RETRIES) {
        await response.body?.cancel();
        await this.wait(retryDelayMs(transient, retryAfter), `server answered ${response.status}; retrying`);
        continue;
      }
      throw errorForResponse(response.status, await bodyOf(response));
    }
  }

  /**
   * One request with its body whole in memory, over this client's kept-alive connections (no
   * retries, no status handling: the caller's). Cheaper than fetch for many small requests (an
   * import's creates); a network failure rejects with a RequestFailed whose `cause` says why.
   */
  sendBuffered(url: URL, init: Omit<BufferedRequestInit, 'agent'>): Promise<BufferedResponse> {
    let agent = this.agents.get(url.protocol);
    if (!agent) this.agents.set(url.protocol, (agent = keepAliveAgent(url.protocol)));
    return bufferedRequest(url, { ...init, agent });
  }

  private init(request: ApiRequest, idempotencyKey: string | undefined): RequestInit & { duplex?: 'half' } {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': this.options.userAgent,
      ...request.headers,
    };
    const token = request.token === undefined ? this.options.token : request.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    let body: RequestInit['body'] | undefined;
    if (request.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.body) {
      const made = request.body();
      Object.assign(headers, made.headers);
      body = made.body;
    }
    const timeoutMs = request.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : request.timeoutMs;
    const streamed = body instanceof ReadableStream;
    return {
      method: request.method,
      headers,
      body,
      duplex: streamed ? 'half' : undefined,
      // Fetch clones a request that may follow redirects, and cloning tees a streamed body: the
      // unread branch would keep every byte of the file in memory. A stream cannot be resent on a
      // redirect anyway, so a streamed upload does not follow redirects and is never cloned.
      ...(streamed ? { redirect: 'error' as const, window: null } : {}),
      signal: timeoutMs === null ? undefined : AbortSignal.timeout(timeoutMs),
    };
  }

  private async wait(ms: number, why: string): Promise<void> {
    this.options.notice(`${why} in ${Math.max(1, Math.round(ms / 1000))} s`);
    await sleep(Math.max(ms, 250));
  }

  private reason(error: unknown): string {
    if (error instanceof Error && error.name === 'TimeoutError') return 'the request timed out';
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return `cannot reach ${this.options.server} (${cause})`;
  }

  private unreachable(error: unknown): CliError {
    return new CliError(this.reason(error), ExitCode.unavailable);
  }
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
