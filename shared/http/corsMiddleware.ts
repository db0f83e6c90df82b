import type { IncomingMessage, ServerResponse } from 'node:http';

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

const ALLOW_METHODS = CORS_ALLOWED_METHODS.join(',');
const ALLOW_HEADERS = CORS_ALLOWED_HEADERS.join(',');
const EXPOSE_HEADERS = CORS_EXPOSED_HEADERS.join(',');
const MAX_AGE_SECONDS = '600';

/**
 * Any origin, no credentials (tokens travel in Authorization); every OPTIONS answered 204. The
 * headers the `cors` package sends for `{origin: '*', methods, allowedHeaders, exposedHeaders,
 * maxAge: 600, optionsSuccessStatus: 204}`, built once instead of per request (that package merges
 * its options and joins the lists again for every request, on the hot path of every API call).
 * Returns true when it answered the request (a preflight).
 */
export function applyCors(req: IncomingMessage, res: ServerResponse): boolean {
  res.setHeader('Access-Control-Allow-Origin', '*');
  if (req.method !== 'OPTIONS') {
    res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    return false;
  }
  res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
  res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
  res.setHeader('Access-Control-Max-Age', MAX_AGE_SECONDS);
  res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
  res.statusCode = 204;
  res.setHeader('Content-Length', '0');
  res.end();
  return true;
}
