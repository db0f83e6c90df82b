import { backoffCeiling } from '#shared/runtime/backoff';
/**
 * How long a command that lost an optimistic-concurrency race waits before it tries again. Writers
 * that collide on one stream must spread out, or they collide again in lock step: capped exponential
 * backoff with full jitter (a uniform delay in [0, min(cap, base * 2^n)]) does that with the least
 * total work. A time budget, not an attempt count, bounds it: how many attempts fit depends on the
 * load, what the client waits for does not.
 */
export interface BackoffPolicy {
  /** Retries stop once this much time has passed since the first attempt (then: 409). */
  readonly budgetMs: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_BACKOFF_POLICY: BackoffPolicy = { budgetMs: 3000, baseDelayMs: 5, maxDelayMs: 250 };

export interface BackoffClock {
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Uniform in [0, 1). */
  readonly random: () => number;
}

const realClock: BackoffClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

/** The full-jitter delay before retry number `retry` (1 for the first retry: up to twice the base). */
export function contentionDelay(retry: number, policy: BackoffPolicy, random: () => number): number {
  return random() * backoffCeiling({ initialMs: policy.baseDelayMs * 2, maxMs: policy.maxDelayMs }, retry);
}

export interface Backoff {
  /** Waits before the next attempt; false (without waiting) when the budget does not allow one. */
  wait(): Promise<boolean>;
}

/** One command's retries: create it when the command starts, so the budget covers every attempt. */
export function contentionBackoff(
  policy: BackoffPolicy = DEFAULT_BACKOFF_POLICY,
  clock: BackoffClock = realClock,
): Backoff {
  const deadline = clock.now() + policy.budgetMs;
  let retries = 0;
  return {
    async wait() {
      const delay = contentionDelay(++retries, policy, clock.random);
      if (clock.now() + delay >= deadline) return false;
      await clock.sleep(delay);
      return true;
    },
  };
}
