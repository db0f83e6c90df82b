import { randomUUID } from 'node:crypto';
import { client, newUser } from '#tests/support/httpClient';
import { abortableSleep } from './abortableSleep';
import type { ObservedService } from './observedService';

/** Beyond the read-your-writes bound: a write that waits it out still gets its answer. */
const CALL_TIMEOUT_MS = 30_000;
const OUTAGE_PROBE_INTERVAL_MS = 300;
const MAX_CALLS_IN_FLIGHT = 10;

export interface ProbeAnswer {
  readonly requestId: string;
  readonly status: number | 'unreachable';
  readonly retryAfter: string | null;
  readonly body: unknown;
  readonly elapsedMs: number;
}

/** What a write right after recovery showed: its answer, the next read, and whether it waited the timeout. */
export interface WriteThenRead {
  readonly bio: string;
  readonly write: ProbeAnswer;
  readonly read: ProbeAnswer;
  /** Warnings and errors the service logged for the write (a read-your-writes timeout is one). */
  readonly writeWarnings: readonly unknown[];
}

/**
 * One account, registered while the service is healthy, that updates its bio on demand: during a
 * fault to see what the service answers, and after recovery to see that a write is readable at once.
 */
export class ProfileProbe {
  private serial = 0;

  private constructor(
    private readonly service: ObservedService,
    private readonly token: string,
  ) {}

  static async register(service: ObservedService): Promise<ProfileProbe> {
    const user = await newUser(client(service.url));
    return new ProfileProbe(service, user.token);
  }

  /**
   * Starts a bio update every few hundred ms until the signal aborts, without waiting for the
   * previous one: a write caught by the fault may wait long for the read side, and the fault must
   * still see fresh requests. Returns every answer.
   */
  async writeUntil(signal: AbortSignal): Promise<ProbeAnswer[]> {
    const calls = new Set<Promise<ProbeAnswer>>();
    const answers: ProbeAnswer[] = [];
    while (!signal.aborted) {
      if (calls.size < MAX_CALLS_IN_FLIGHT) {
        const call = this.call('PATCH', { bio: this.nextBio() });
        calls.add(call);
        void call.then((answer) => {
          answers.push(answer);
          calls.delete(call);
        });
      }
      await abortableSleep(OUTAGE_PROBE_INTERVAL_MS, signal);
    }
    await Promise.all(calls);
    return answers;
  }

  /** One bio update, then a plain read (no consistency header) of the profile. */
  async writeThenRead(): Promise<WriteThenRead> {
    const bio = this.nextBio();
    const write = await this.call('PATCH', { bio });
    const read = await this.call('GET');
    // The request line is logged when the response closes, after any warning about the request.
    await this.service.waitForLog((r) => r.request_id === write.requestId && r.msg === 'request', 10_000);
    const writeWarnings = this.service.logged(
      (r) => r.request_id === write.requestId && (r.level === 'warn' || r.level === 'error'),
    );
    return { bio, write, read, writeWarnings };
  }

  private nextBio(): string {
    return `probe ${++this.serial} ${randomUUID().slice(0, 8)}`;
  }

  private async call(method: 'PATCH' | 'GET', body?: unknown): Promise<ProbeAnswer> {
    const requestId = `probe-${randomUUID()}`;
    const started = performance.now();
    const headers: Record<string, string> = {
      authorization: `Token ${this.token}`,
      'x-request-id': requestId,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(`${this.service.url}/api/profile/`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      const text = await response.text();
      return {
        requestId,
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: jsonOrText(text),
        elapsedMs: Math.round(performance.now() - started),
      };
    } catch (error) {
      const elapsedMs = Math.round(performance.now() - started);
      return { requestId, status: 'unreachable', retryAfter: null, body: String(error), elapsedMs };
    }
  }
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
