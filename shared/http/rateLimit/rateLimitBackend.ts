import type { Store } from 'express-rate-limit';

/**
 * Where hit counts live. Each bucket gets its own express-rate-limit Store (the library insists
 * on one store per limiter); a backend shares its storage and timers between them.
 */
export interface RateLimitBackend {
  store(bucket: string, limit: number, windowMs: number): Store;
  /** Flushes what is still counted locally and stops timers. */
  close(): Promise<void>;
}

/** Fixed windows: every instance agrees on the window from the clock alone. */
export function windowStartOf(now: number, windowMs: number): number {
  return Math.floor(now / windowMs) * windowMs;
}
