import cors from 'cors';
import type { RequestHandler } from 'express';

export const CORS_ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export const CORS_ALLOWED_HEADERS = [
  'Content-Type',
  'Authorization',
  'X-Request-Id',
  'If-Match',
  'If-None-Match',
  'X-Min-Position',
  'X-Consistency-Token',
  'Idempotency-Key',
  // tus 1.0 (resumable uploads)
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Offset',
  'Upload-Metadata',
  'Upload-Checksum',
  'Upload-Concat',
  'Upload-Defer-Length',
  'X-HTTP-Method-Override',
] as const;

/** Headers a browser client may read: rate limits, list links, ETag, tracing, read-your-writes, as_of reads. */
export const CORS_EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Link',
  'X-Total-Count',
  'ETag',
  'X-Request-Id',
  'X-Event-Position',
  'X-As-Of-Position',
  'Idempotent-Replayed',
  // tus 1.0 (resumable uploads)
  'Location',
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Tus-Checksum-Algorithm',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Expires',
] as const;

/** Any origin, no credentials (tokens travel in Authorization); every OPTIONS answered 204. */
export function corsMiddleware(): RequestHandler {
  return cors({
    origin: '*',
    methods: [...CORS_ALLOWED_METHODS],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: 600,
    optionsSuccessStatus: 204,
    preflightContinue: false,
  });
}
