/** Shared pieces of the OpenAPI document: error bodies, rate-limit headers, security schemes. */
export const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed in the current window.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'When the window resets (Unix time, seconds).',
    schema: { type: 'integer' },
  },
} as const;

/** The Idempotency-Key header, a parameter of every write operation (docs/idempotency.md). */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: [
    'Makes a retry safe. Repeated with the same key within 24 hours (by the same user; for anonymous',
    'requests such as registration and login, the key alone counts), the request is not executed',
    'again: it gets the first response again (status, body, `ETag`/`Location`, `X-Event-Position`)',
    'with `Idempotent-Replayed: true`, also when the first response was lost, e.g. to a crash. The',
    'same key with another method, path or body is `422`. While a request with the key is still',
    'running, another one waits for it (up to 10 s, then `409` with `Retry-After`). Errors are not',
    'recorded: a retry after a 4xx or 5xx runs again. Send a fresh random value (a UUID) per',
    'operation: 1 to 255 printable ASCII characters, else `400`. Multipart bodies are compared byte',
    'for byte, except for their boundary.',
    '\n\nOn the PostgreSQL event store (the default) the effect and its record commit in one',
    'transaction. With EventStoreDB they cannot: the key is claimed before the request runs and the',
    'response recorded after it, so should the process die between the effect and the record, the',
    'key reads as in progress (`409`) for 5 minutes, and a retry after that runs the request again',
    '(a second effect is possible).',
  ]
    .join(' ')
    .replace(/ ?\n\n ?/g, '\n\n'),
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
  example: '5f0c2e44-7a59-4a8e-9e43-2b1c9f3d8a10',
} as const;

export const OPENAPI_COMPONENTS = {
  schemas: {
    Error: {
      type: 'object',
      properties: { detail: { type: 'string' } },
      required: ['detail'],
    },
    ServerError: {
      type: 'object',
      properties: { detail: { type: 'string' }, request_id: { type: 'string' } },
      required: ['detail', 'request_id'],
    },
    ValidationError: {
      type: 'object',
      description: 'Field name → messages; `non_field_errors` for rules across fields.',
      additionalProperties: { type: 'array', items: { type: 'string' } },
      examples: [{ name: ['This field is required.'] }],
    },
    RateLimited: {
      type: 'object',
      properties: {
        error: { type: 'string', const: 'rate_limited' },
        detail: { type: 'string' },
        retry_after: { type: 'integer', description: 'Seconds until a retry can succeed.' },
      },
      required: ['error', 'detail', 'retry_after'],
    },
  },
  headers: RATE_LIMIT_HEADERS,
  parameters: { IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER },
  securitySchemes: {
    Token: {
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description: 'A login token or personal access token as `Token <token>`.',
    },
    Bearer: {
      type: 'http',
      scheme: 'bearer',
      description: 'A personal access token or login token as `Bearer <token>`.',
    },
  },
} as const;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const rateLimitHeaderRefs = Object.fromEntries(
  Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
);

/** Responses every operation may give, added where the route does not declare them itself. */
export const STANDARD_RESPONSES = {
  400: {
    description:
      'Invalid input (field errors), or `{"detail": ...}` for a request sent with a credential header (`Authorization`, `Proxy-Authorization`) more than once.',
    content: { 'application/json': { schema: { oneOf: [ref('ValidationError'), ref('Error')] } } },
  },
  401: {
    description: 'Missing, invalid, expired or revoked token.',
    headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
    content: { 'application/json': { schema: ref('Error') } },
  },
  408: {
    description:
      'The request body went silent for longer than the body timeout (HTTP_BODY_TIMEOUT_MS), or a body that is not an upload took longer than that in total; the connection is closed.',
    content: { 'application/json': { schema: ref('Error') } },
  },
  429: {
    description: 'Rate limit exceeded.',
    headers: { ...rateLimitHeaderRefs, 'Retry-After': { schema: { type: 'integer' } } },
    content: { 'application/json': { schema: ref('RateLimited') } },
  },
  500: { description: 'Server fault.', content: { 'application/json': { schema: ref('ServerError') } } },
} as const;

/** Responses every write may give because of its Idempotency-Key. */
export const WRITE_RESPONSES = {
  409: {
    description:
      'A request with the same Idempotency-Key is still in progress (retry after `Retry-After` seconds), or a concurrent write that could not be retried.',
    content: { 'application/json': { schema: ref('Error') } },
  },
  422: {
    description: 'The Idempotency-Key was already used for a different request (method, path or body).',
    content: { 'application/json': { schema: ref('Error') } },
  },
} as const;
