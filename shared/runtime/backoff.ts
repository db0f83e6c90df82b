/** Capped exponential backoff: attempt n waits about initialMs * 2^(n-1), never more than maxMs. */
export interface Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  /**
   * Share of each delay that is random (0..1): retries of many processes after one outage spread
   * out instead of arriving together.
   */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 250, maxMs: 5_000, jitter: 0.5 };

/** The longest wait before retry `attempt` (1-based): initialMs doubled per retry, capped at maxMs. */
export function backoffCeiling(backoff: Pick<Backoff, 'initialMs' | 'maxMs'>, attempt: number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** exponent);
}

/** The wait before retry `attempt` (1-based); `random` returns [0, 1). */
export function backoffDelay(backoff: Backoff, attempt: number, random: () => number): number {
  return Math.round(backoffCeiling(backoff, attempt) * (1 - backoff.jitter * random()));
}
