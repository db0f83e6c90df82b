/**
 * The HTTP edge's errors, each carrying its status; shared/http/errorMiddleware sends them as the
 * DRF-shaped bodies of decisions.md. Domain code throws shared/domain/domainErrors instead (mapped
 * to these by shared/http/httpErrorOf); nobody throws strings.
 */
export type FieldErrors = Record<string, string[]>;

export abstract class HttpError extends Error {
  abstract readonly status: number;
  /** The JSON body sent to the client. */
  abstract body(): Record<string, unknown>;
  /** Extra response headers (WWW-Authenticate, Allow, Retry-After...). */
  headers(): Record<string, string> {
    return {};
  }
}

abstract class DetailError extends HttpError {
  constructor(readonly detail: string) {
    super(detail);
    this.name = new.target.name;
  }
  body(): Record<string, unknown> {
    return { detail: this.detail };
  }
}

/** 400 with field errors: {"field": ["message"]}; cross-field rules use "non_field_errors". */
export class ValidationError extends HttpError {
  readonly status = 400;
  constructor(readonly fields: FieldErrors) {
    super(
      Object.entries(fields)
        .map(([k, v]) => `${k}: ${v.join(' ')}`)
        .join('; '),
    );
    this.name = 'ValidationError';
  }
  static field(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
  body(): Record<string, unknown> {
    return { ...this.fields };
  }
}

/** 400 with {"detail": ...}: malformed JSON, "Invalid page." style errors without a field. */
export class BadRequestError extends DetailError {
  readonly status = 400;
}

export class AuthenticationError extends DetailError {
  readonly status = 401;
  constructor(detail = 'Authentication credentials were not provided.') {
    super(detail);
  }
  override headers(): Record<string, string> {
    return { 'WWW-Authenticate': 'Token realm="api"' };
  }
}

export class PermissionDeniedError extends DetailError {
  readonly status = 403;
  constructor(detail = 'You do not have permission to perform this action.') {
    super(detail);
  }
}

export class NotFoundError extends DetailError {
  readonly status = 404;
  constructor(detail = 'Not found.') {
    super(detail);
  }
}

export class MethodNotAllowedError extends DetailError {
  readonly status = 405;
  constructor(
    method: string,
    readonly allow: readonly string[],
  ) {
    super(`Method "${method}" not allowed.`);
  }
  override headers(): Record<string, string> {
    return { Allow: this.allow.join(', ') };
  }
}

/** 409: lost an optimistic-concurrency race (stale If-Match, or a conflict that cannot be retried). */
export class ConflictError extends DetailError {
  readonly status = 409;
}

export class PreconditionFailedError extends DetailError {
  readonly status = 412;
}

export class PayloadTooLargeError extends DetailError {
  readonly status = 413;
  constructor(detail = 'Request body is too large.') {
    super(detail);
  }
}

export class UnsupportedMediaTypeError extends DetailError {
  readonly status = 415;
  constructor(contentType: string) {
    super(`Unsupported media type "${contentType}" in request.`);
  }
}

export class RateLimitedError extends HttpError {
  readonly status = 429;
  constructor(
    readonly retryAfterSeconds: number,
    readonly detail = `Request was throttled. Expected available in ${retryAfterSeconds} seconds.`,
  ) {
    super(detail);
    this.name = 'RateLimitedError';
  }
  body(): Record<string, unknown> {
    return { error: 'rate_limited', detail: this.detail, retry_after: this.retryAfterSeconds };
  }
  override headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/**
 * 499 (nginx's "client closed request"): the client hung up before its answer, and the work for it
 * was stopped (RequestContext.signal). Nobody reads the answer; the status is for the request log
 * and metrics, where an abandoned search is not a server error.
 */
export class ClientClosedRequestError extends DetailError {
  readonly status = 499;
  constructor(detail = 'The client closed the connection before its answer.') {
    super(detail);
  }
}

/** 503: a dependency is down for now; Retry-After says when to try again. */
export class ServiceUnavailableError extends DetailError {
  readonly status = 503;
  constructor(
    detail: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(detail);
  }
  override headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}
