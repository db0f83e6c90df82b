import type { ClientRateLimitInfo, Store } from 'express-rate-limit';
import { type RateLimitBackend, windowStartOf } from './rateLimitBackend';

interface Window {
  start: number;
  hits: number;
}

/** Fixed-window counts in this process only: for tests and single-process runs. */
class MemoryBucketStore implements Store {
  readonly localKeys = true;
  private readonly windows = new Map<string, Window>();
  private currentStart = 0;

  constructor(
    readonly prefix: string,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  increment(key: string): ClientRateLimitInfo {
    const start = this.rollover();
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, hits: 0 };
      this.windows.set(key, window);
    }
    window.hits += 1;
    return { totalHits: window.hits, resetTime: new Date(start + this.windowMs) };
  }

  get(key: string): ClientRateLimitInfo | undefined {
    const window = this.windows.get(key);
    if (!window || window.start !== this.rollover()) return undefined;
    return { totalHits: window.hits, resetTime: new Date(window.start + this.windowMs) };
  }

  decrement(key: string): void {
    const window = this.windows.get(key);
    if (window && window.hits > 0) window.hits -= 1;
  }

  resetKey(key: string): void {
    this.windows.delete(key);
  }

  resetAll(): void {
    this.windows.clear();
  }

  /** A new window makes every old count worthless: drop them all at once. */
  private rollover(): number {
    const start = windowStartOf(this.now(), this.windowMs);
    if (start !== this.currentStart) {
      this.windows.clear();
      this.currentStart = start;
    }
    return start;
  }
}

export function createMemoryRateLimitBackend(now: () => number = Date.now): RateLimitBackend {
  return {
    store: (bucket, _limit, windowMs) => new MemoryBucketStore(bucket, windowMs, now),
    close: () => Promise.resolve(),
  };
}
