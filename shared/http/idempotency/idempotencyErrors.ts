import { HttpError } from '#shared/errors/httpErrors';

/** 422: the key was first used for another request (method, path or body differ). */
export class IdempotencyKeyReusedError extends HttpError {
  readonly status = 422;
  constructor() {
    super('Idempotency-Key reused for a different request');
    this.name = 'IdempotencyKeyReusedError';
  }
  body(): Record<string, unknown> {
    return {
      detail:
        'This Idempotency-Key was already used for a different request (another method, path or body). Use a new key for a new request.',
    };
  }
}

/** 409: a request with this key is still being executed; the client retries later. */
export class IdempotencyKeyInUseError extends HttpError {
  readonly status = 409;
  constructor() {
    super('Idempotency-Key in use by a request in progress');
    this.name = 'IdempotencyKeyInUseError';
  }
  body(): Record<string, unknown> {
    return {
      detail:
        'A request with this Idempotency-Key is still in progress. Retry it once that one has finished.',
    };
  }
  override headers(): Record<string, string> {
    return { 'Retry-After': '1' };
  }
}
