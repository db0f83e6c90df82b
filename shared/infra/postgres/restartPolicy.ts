export interface RestartPolicyOptions {
  /** Give up at this many failures (unexpected exits and failed restarts) within `windowMs`. */
  readonly maxFailures?: number;
  readonly windowMs?: number;
  /** Wait before the first restart; doubled for each further failure in the window, up to `maxDelayMs`. */
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

/** With the defaults: 7 restart attempts over about 31 s of waiting, then give up. */
export const DEFAULT_RESTART_POLICY: Required<RestartPolicyOptions> = {
  maxFailures: 8,
  windowMs: 120_000,
  initialDelayMs: 250,
  maxDelayMs: 15_000,
};

/**
 * When to restart a crashed server, and when to stop trying. Failures are counted in a sliding
 * window, so a server that crashes again soon after each restart (a crash loop) is given up on as
 * surely as one that never comes back, while crashes far apart each start afresh.
 */
export class RestartPolicy {
  private readonly options: Required<RestartPolicyOptions>;
  private failures: number[] = [];

  constructor(options: RestartPolicyOptions = {}) {
    this.options = { ...DEFAULT_RESTART_POLICY, ...options };
  }

  /** Records a failure at `now` (ms); returns how long to wait before the next attempt, or undefined to give up. */
  failure(now: number): number | undefined {
    this.failures = this.failures.filter((at) => now - at < this.options.windowMs);
    this.failures.push(now);
    const count = this.failures.length;
    if (count >= this.options.maxFailures) return undefined;
    return Math.min(this.options.maxDelayMs, this.options.initialDelayMs * 2 ** (count - 1));
  }

  /** Failures inside the window ending at `now`. */
  recentFailures(now: number): number {
    return this.failures.filter((at) => now - at < this.options.windowMs).length;
  }

  get windowMs(): number {
    return this.options.windowMs;
  }
}
