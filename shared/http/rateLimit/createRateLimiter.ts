import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type RateLimitInfo } from 'express-rate-limit';
import { RateLimitedError } from '#shared/errors/httpErrors';
import { requestStateOf } from '#shared/http/requestState';
import { createMemoryRateLimitBackend } from './memoryRateLimitBackend';
import type { RateLimitBackend } from './rateLimitBackend';
import {
  BUCKET_KEY,
  REFUNDED_STATUSES,
  type RateLimitBucketName,
  type RateLimitConfig,
  resolveRateLimits,
} from './rateLimitConfig';

export interface RateLimiterOptions {
  /** Overrides of DEFAULT_RATE_LIMITS. */
  readonly limits?: Partial<RateLimitConfig>;
  /** Defaults to an in-memory backend (one process only). */
  readonly backend?: RateLimitBackend;
  /** Called for every refused request (429), with its bucket: the rejections metric. */
  readonly onRejected?: (bucket: RateLimitBucketName) => void;
}

export interface RateLimiter {
  readonly limits: RateLimitConfig;
  /** The middleware of one bucket (one per bucket, shared by every app using this limiter). */
  middleware(bucket: RateLimitBucketName): RequestHandler;
  /** Flushes counts and stops the backend's timers. */
  close(): Promise<void>;
}

const INFO = 'rateLimit';

function addressKey(req: Request): string {
  return `a:${ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown')}`;
}

function userKey(req: Request): string {
  const principal = requestStateOf(req)?.principal;
  return principal ? `u:${principal.userId}` : addressKey(req);
}

/** Whole seconds until the window resets; at least 1 so clients never retry immediately. */
function retryAfterSeconds(req: Request): number {
  const info = (req as Request & { [INFO]?: RateLimitInfo })[INFO];
  const resetMs = info?.resetTime?.getTime() ?? Date.now() + 1000;
  return Math.max(1, Math.ceil((resetMs - Date.now()) / 1000));
}

/**
 * Named buckets (decisions.md "Limits") on express-rate-limit. Headers X-RateLimit-Limit,
 * -Remaining and -Reset (Unix seconds, as express-rate-limit's legacy headers are) go on every
 * counted response; a refused request becomes RateLimitedError for the error middleware.
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const limits = resolveRateLimits(options.limits);
  const backend = options.backend ?? createMemoryRateLimitBackend();
  const middlewares = new Map<RateLimitBucketName, RequestHandler>();

  const limiter = (
    bucket: RateLimitBucketName,
    keyOf: (req: Request) => string,
    skip?: (req: Request) => boolean,
  ): RequestHandler => {
    const { limit, windowMs } = limits[bucket];
    const refunded = REFUNDED_STATUSES[bucket];
    return rateLimit({
      windowMs,
      limit,
      legacyHeaders: true,
      standardHeaders: false,
      requestPropertyName: INFO,
      store: backend.store(bucket, limit, windowMs),
      keyGenerator: keyOf,
      ...(skip ? { skip } : {}),
      // The hit of a request answered with a refunded status is taken back once it is answered.
      ...(refunded
        ? { skipFailedRequests: true, requestWasSuccessful: (_req, res) => !refunded.has(res.statusCode) }
        : {}),
      handler: (req, _res, next) => {
        options.onRejected?.(bucket);
        next(new RateLimitedError(retryAfterSeconds(req)));
      },
      // Our keys are computed above and the stores are ours: the library's checks cost time per request.
      validate: false,
      passOnStoreError: true,
    });
  };

  const build = (bucket: RateLimitBucketName): RequestHandler => {
    switch (BUCKET_KEY[bucket]) {
      case 'address':
        return limiter(bucket, addressKey);
      case 'user':
        return limiter(bucket, userKey);
      case 'address and user': {
        // One store per bucket and key kind: "a:" and "u:" keys never meet, but the limit is the bucket's.
        const byAddress = limiter(bucket, addressKey);
        const byUser = limiter(bucket, userKey, (req) => !requestStateOf(req)?.principal);
        return (req, res, next) => {
          void byAddress(req, res, (error?: unknown) => (error ? next(error) : void byUser(req, res, next)));
        };
      }
    }
  };

  return {
    limits,
    middleware(bucket) {
      let middleware = middlewares.get(bucket);
      if (!middleware) {
        middleware = build(bucket);
        middlewares.set(bucket, middleware);
      }
      return middleware;
    },
    close: () => backend.close(),
  };
}
