/** The HTTP framework of every service: import from here. */
export { type ApiAppOptions, createApiApp } from './createApiApp';
export { SHUTDOWN_GRACE_MS, answerClientErrors, closeHttpServer, createHttpServer } from './createHttpServer';
export { type GatewayOptions, type RequestListener, createGateway } from './createGateway';
export { type OpenApiDocument, type OpenApiInfo, buildOpenApiDocument } from './openapi/buildOpenApiDocument';
export { DEFAULT_API_DESCRIPTION } from './openapi/apiDescription';
export { type RateLimiter, type RateLimiterOptions, createRateLimiter } from './rateLimit/createRateLimiter';
export {
  BUCKET_KEY,
  DEFAULT_RATE_LIMITS,
  type RateLimitBucketName,
  type RateLimitConfig,
  type RateLimitRule,
  resolveRateLimits,
} from './rateLimit/rateLimitConfig';
export type { RateLimitBackend } from './rateLimit/rateLimitBackend';
export { type IdempotencyOptions, createIdempotency } from './idempotency/createIdempotency';
export type { Idempotency } from './idempotency/idempotency';
export { createMemoryRateLimitBackend } from './rateLimit/memoryRateLimitBackend';
export {
  PostgresRateLimitBackend,
  type PostgresRateLimitOptions,
} from './rateLimit/postgresRateLimitBackend';
export { RATE_LIMIT_TABLE } from './rateLimit/rateLimitSql';
export type { HealthCheck, HealthReport } from './system/healthChecks';
export { CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_EXPOSED_HEADERS } from './corsMiddleware';
export { ERROR_MESSAGE_KEYWORD } from './validationMessages';
export type * from './routeSpec';
