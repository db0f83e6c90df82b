import type { RateLimitBucket } from '#shared/http/routeSpec';

/** Every request counts against 'default'; a route may add one named bucket on top. */
export type RateLimitBucketName = RateLimitBucket | 'default';

export interface RateLimitRule {
  readonly limit: number;
  readonly windowMs: number;
}

export type RateLimitConfig = Readonly<Record<RateLimitBucketName, RateLimitRule>>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** decisions.md "Limits". */
export const DEFAULT_RATE_LIMITS: RateLimitConfig = {
  login: { limit: 10, windowMs: MINUTE },
  register: { limit: 20, windowMs: HOUR },
  tokenCreate: { limit: 30, windowMs: HOUR },
  upload: { limit: 120, windowMs: HOUR },
  default: { limit: 600, windowMs: MINUTE },
};

/**
 * Who a bucket counts. 'address': per client address. 'user': per user (per address when
 * anonymous). 'address and user': per address, and per user too when the request carries a token.
 * Register protects against sign-up floods, so it counts per address. Login is every place a
 * password is checked (logging in, and changing a password, where the old one can be guessed on one
 * token): per address, and per user so that guesses spread over many addresses still meet the limit.
 */
export type BucketKey = 'address' | 'user' | 'address and user';

export const BUCKET_KEY: Readonly<Record<RateLimitBucketName, BucketKey>> = {
  login: 'address and user',
  register: 'address',
  tokenCreate: 'user',
  upload: 'user',
  default: 'user',
};

/**
 * Answers that give a bucket's hit back. The upload limit is a budget of uploads: a POST refused
 * before anything was stored (400 invalid, 413 too large, 415 wrong body type) is no upload, so a
 * client that got its form wrong does not lock itself out for the hour. Login keeps counting its
 * 400s: those are the password guesses the bucket exists for.
 */
export const REFUNDED_STATUSES: Readonly<Partial<Record<RateLimitBucketName, ReadonlySet<number>>>> = {
  upload: new Set([400, 413, 415]),
};

export function resolveRateLimits(overrides: Partial<RateLimitConfig> = {}): RateLimitConfig {
  const merged = { ...DEFAULT_RATE_LIMITS, ...overrides };
  for (const [bucket, rule] of Object.entries(merged)) {
    if (
      !Number.isInteger(rule.limit) ||
      rule.limit < 1 ||
      !Number.isInteger(rule.windowMs) ||
      rule.windowMs < 1000
    ) {
      throw new RangeError(`rate limit "${bucket}": limit must be a positive integer and windowMs >= 1000`);
    }
  }
  return merged;
}
