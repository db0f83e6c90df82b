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
  400: { description: 'Invalid input.', content: { 'application/json': { schema: ref('ValidationError') } } },
  401: {
    description: 'Missing, invalid, expired or revoked token.',
    headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
    content: { 'application/json': { schema: ref('Error') } },
  },
  429: {
    description: 'Rate limit exceeded.',
    headers: { ...rateLimitHeaderRefs, 'Retry-After': { schema: { type: 'integer' } } },
    content: { 'application/json': { schema: ref('RateLimited') } },
  },
  500: { description: 'Server fault.', content: { 'application/json': { schema: ref('ServerError') } } },
} as const;
