import { setTimeout as sleep } from 'node:timers/promises';

/** A failure the seed explains to its operator (printed as is, without a stack). */
export class SeedError extends Error {}

export interface SeedReply {
  readonly status: number;
  readonly body: unknown;
  /** True when the service repeated a recorded reply to this Idempotency-Key. */
  readonly replayed: boolean;
}

/** Tries per request: retrying is safe because every write carries its Idempotency-Key. */
const MAX_ATTEMPTS = 4;
const MAX_RETRY_WAIT_MS = 10_000;
/** Statuses that mean "try again later": rate limited, key in progress, service restarting. */
const RETRYABLE = new Set([409, 429, 502, 503, 504]);

function retryWaitMs(response: Response | undefined, attempt: number): number {
  const header = Number(response?.headers.get('retry-after'));
  const fallback = 500 * 2 ** attempt;
  return Math.min(Number.isFinite(header) && header > 0 ? header * 1000 : fallback, MAX_RETRY_WAIT_MS);
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').includes('json') || text === '') return text;
  return JSON.parse(text) as unknown;
}

/** The service's JSON API as the seed uses it: one base URL, one token, bounded retries. */
export class SeedHttp {
  private token: string | undefined;

  constructor(private readonly baseUrl: string) {}

  authenticate(token: string | undefined): void {
    this.token = token;
  }

  get(path: string): Promise<SeedReply> {
    return this.send('GET', path);
  }

  post(path: string, body: unknown, idempotencyKey?: string): Promise<SeedReply> {
    return this.send('POST', path, body, idempotencyKey);
  }

  private async send(method: string, path: string, body?: unknown, key?: string): Promise<SeedReply> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.token) headers.Authorization = `Token ${this.token}`;
    if (key) headers['Idempotency-Key'] = key;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
    const url = new URL(path, this.baseUrl).toString();
    // Only requests a repeat cannot duplicate are retried: reads, and writes with a key.
    const attempts = method === 'GET' || key ? MAX_ATTEMPTS : 1;
    for (let attempt = 1; ; attempt++) {
      let response: Response | undefined;
      try {
        response = await fetch(url, init);
        if (!RETRYABLE.has(response.status) || attempt >= attempts) {
          const replayed = response.headers.get('idempotent-replayed') === 'true';
          return { status: response.status, body: await readBody(response), replayed };
        }
        await response.body?.cancel();
      } catch (error) {
        if (attempt >= attempts) throw new SeedError(`${method} ${url} failed: ${describe(error)}`);
      }
      await sleep(retryWaitMs(response, attempt));
    }
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${error.message}${cause}`;
}
