import { waitFor } from '#tests/support/waitFor';
import { abortableSleep } from './abortableSleep';

const POLL_INTERVAL_MS = 250;
/** Generous: on a loaded machine an answer may be slow; only a missing answer is a failure. */
const POLL_TIMEOUT_MS = 10_000;

export const HEALTH_PATH = '/health/';
export const LIVENESS_PATH = '/health/live/';

export interface HealthSample {
  readonly path: string;
  /** When the answer (or the failure) arrived, in Date.now() terms. */
  readonly at: number;
  readonly status: number | 'unreachable';
  readonly body: unknown;
}

/** Polls /health/ and /health/live/ side by side for as long as a fault scenario runs. */
export interface HealthWatch {
  samples(path: string): readonly HealthSample[];
  /** The first /health/ 200 that arrived at or after `since`, waiting up to `timeoutMs` for one. */
  firstHealthyAfter(since: number, timeoutMs: number): Promise<HealthSample | undefined>;
  stop(): Promise<void>;
}

export function watchHealth(baseUrl: string): HealthWatch {
  const samples: HealthSample[] = [];
  const stopping = new AbortController();
  const poll = async (path: string): Promise<void> => {
    while (!stopping.signal.aborted) {
      samples.push(await sample(baseUrl, path));
      await abortableSleep(POLL_INTERVAL_MS, stopping.signal);
    }
  };
  const loops = [poll(HEALTH_PATH), poll(LIVENESS_PATH)];
  const healthyAfter = (since: number): HealthSample | undefined =>
    samples.find((s) => s.path === HEALTH_PATH && s.status === 200 && s.at >= since);
  return {
    samples: (path) => samples.filter((s) => s.path === path),
    async firstHealthyAfter(since, timeoutMs) {
      await waitFor('a /health/ 200', () => healthyAfter(since), {
        timeoutMs,
        intervalMs: POLL_INTERVAL_MS / 2,
        until: (sample) => sample !== undefined || stopping.signal.aborted,
      }).catch(() => undefined); // none in time: reported as undefined
      const found = healthyAfter(since);
      return found && found.at - since <= timeoutMs ? found : undefined;
    },
    async stop() {
      stopping.abort();
      await Promise.all(loops);
    },
  };
}

async function sample(baseUrl: string, path: string): Promise<HealthSample> {
  try {
    const response = await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(POLL_TIMEOUT_MS) });
    const text = await response.text();
    return { path, at: Date.now(), status: response.status, body: parseJson(text) };
  } catch (error) {
    return { path, at: Date.now(), status: 'unreachable', body: String(error) };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
