import type { Logger } from '#shared/logging/logger';
import { type Backoff, backoffDelay, DEFAULT_BACKOFF } from './backoff';
import { abortableSleep } from './abortableSleep';

/** 'starting' until the body first reports up; 'retrying' between a failure and the next up. */
export type LoopState = 'starting' | 'up' | 'retrying' | 'stopped';

export interface LoopStatus {
  readonly state: LoopState;
  /** Failures since the loop last came up (0 while up). */
  readonly attempts: number;
  /** The latest failure of the current outage. */
  readonly lastError: string | undefined;
  /** When the current state began (the injected clock's milliseconds). */
  readonly since: number;
}

/** Where a loop reports its state; shared/metrics implements it with prom-client. */
export interface LoopMetrics {
  setLoopUp(loop: string, up: boolean): void;
  loopFailed(loop: string): void;
}

export interface LoopBody {
  /** Aborts when the loop stops. A body that sees it aborted should return promptly. */
  readonly signal: AbortSignal;
  /** The body is working (connected, first round done): ends an outage, logged once. */
  readonly up: () => void;
}

export interface SupervisedLoopOptions {
  /** Names the loop in logs and in the metric label. */
  readonly name: string;
  /**
   * Owns its connection and resumes from its own checkpoint. Runs until the signal aborts; a
   * throw (or an early return) is followed by a retry after the backoff.
   */
  readonly body: (loop: LoopBody) => Promise<void>;
  readonly logger?: Pick<Logger, 'info' | 'warn'>;
  readonly metrics?: LoopMetrics;
  readonly backoff?: Partial<Backoff>;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  readonly random?: () => number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface SupervisedLoop {
  readonly name: string;
  status(): LoopStatus;
  /** Cuts the current backoff wait short: something suggests the dependency is back. */
  wake(): void;
  /** Aborts the body and resolves when it has returned. */
  stop(): Promise<void>;
}

/**
 * Runs a long-lived body that owns a connection (a projection runner, a LISTEN connection, a flush
 * timer) and keeps it running through outages: capped exponential backoff with jitter, one warning
 * when an outage starts and one info line when it ends (never one per attempt), a state gauge and
 * a failure counter, and a status for /health/.
 */
export function startSupervisedLoop(options: SupervisedLoopOptions): SupervisedLoop {
  const { name, logger, metrics } = options;
  const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const stopping = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopping.signal]) : stopping.signal;
  let status: LoopStatus = { state: 'starting', attempts: 0, lastError: undefined, since: now() };
  let outageStart: number | undefined;
  let upSince: number | undefined;
  /** Drives the backoff; unlike status.attempts it survives a recovery that does not last. */
  let consecutiveFailures = 0;
  let waking: AbortController | undefined;
  let attemptStartedAt = now();

  const up = (): void => {
    if (signal.aborted || status.state === 'up') return;
    if (outageStart !== undefined)
      logger?.info(`${name} recovered`, {
        loop: name,
        outage_seconds: (now() - outageStart) / 1000,
        attempts: status.attempts,
      });
    outageStart = undefined;
    upSince = now();
    status = { state: 'up', attempts: 0, lastError: undefined, since: upSince };
    metrics?.setLoopUp(name, true);
  };

  const fail = (error: unknown): number => {
    metrics?.loopFailed(name);
    metrics?.setLoopUp(name, false);
    // A body that fails soon after each recovery must still back off, not retry at the first delay.
    const stable = upSince !== undefined && now() - upSince >= backoff.maxMs;
    consecutiveFailures = stable ? 1 : consecutiveFailures + 1;
    upSince = undefined;
    if (outageStart === undefined) {
      outageStart = now();
      logger?.warn(`${name} failed; retrying with backoff`, { loop: name, error: describe(error) });
    }
    const attempts = status.state === 'retrying' ? status.attempts + 1 : 1;
    status = { state: 'retrying', attempts, lastError: describe(error), since: outageStart };
    return backoffDelay(backoff, consecutiveFailures, random);
  };

  const run = async (): Promise<void> => {
    metrics?.setLoopUp(name, false);
    while (!signal.aborted) {
      let delay: number;
      attemptStartedAt = now();
      try {
        await options.body({ signal, up });
        if (signal.aborted) break;
        delay = backoff.initialMs; // returned early: start again, gently
      } catch (error) {
        if (signal.aborted) break;
        delay = fail(error);
      }
      waking = new AbortController();
      await sleep(delay, AbortSignal.any([signal, waking.signal]));
      waking = undefined;
    }
    status = { ...status, state: 'stopped', since: now() };
    metrics?.setLoopUp(name, false);
  };

  const running = run();
  return {
    name,
    status: () => status,
    wake() {
      // Bounded: a flood of wake-ups during an outage must not become a flood of attempts.
      if (now() - attemptStartedAt >= backoff.initialMs) waking?.abort();
    },
    async stop() {
      stopping.abort();
      await running;
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}
