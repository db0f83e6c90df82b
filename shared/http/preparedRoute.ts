import type { RequestHandler } from 'express';
import type { BodyMode } from './bodyReader';
import type { RateLimiter } from './rateLimit/createRateLimiter';
import type { RouteSpec } from './routeSpec';
import { type Validator, compileFormValidator, compileJsonValidator } from './schemaValidator';

/** A RouteSpec with everything per-request work needs compiled once at start-up. */
export interface PreparedRoute {
  readonly spec: RouteSpec;
  readonly bodyMode: BodyMode;
  readonly readsBody: boolean;
  readonly jsonValidator: Validator | undefined;
  readonly formValidator: Validator | undefined;
  readonly queryValidator: Validator | undefined;
  readonly limiters: readonly RequestHandler[];
  /** Public catalogue data (a GET anyone may make): the one kind of answer a cache may keep. */
  readonly publicRead: boolean;
}

const BODY_METHODS = new Set(['post', 'put', 'patch']);

export function prepareRoute(spec: RouteSpec, rateLimiter: RateLimiter | undefined): PreparedRoute {
  // A multipart route also takes JSON (decisions.md "General"), validated against its form fields.
  const bodySchema = spec.body ?? spec.multipart;
  const limiters: RequestHandler[] = [];
  if (rateLimiter) {
    limiters.push(rateLimiter.middleware('default'));
    if (spec.rateLimit) limiters.push(rateLimiter.middleware(spec.rateLimit));
  }
  return {
    spec,
    bodyMode: spec.multipart ? 'multipart' : 'json',
    readsBody: BODY_METHODS.has(spec.method),
    jsonValidator: bodySchema ? compileJsonValidator(bodySchema) : undefined,
    formValidator: spec.multipart ? compileFormValidator(spec.multipart) : undefined,
    queryValidator: spec.query ? compileFormValidator(spec.query) : undefined,
    limiters,
    publicRead: spec.auth === 'public' && spec.method === 'get',
  };
}
