import type { Request } from 'express';
import type { BodyReadResult } from '#shared/http/bodyReader';
import { normalisePath } from '#shared/http/routeTable';
import { tapRequestBody } from './bodyTap';
import type { FingerprintBody, RequestIdentity } from './requestFingerprint';

/**
 * What identifies a request for its Idempotency-Key. Parsed bodies count by their validated value;
 * a streamed (multipart) body by its bytes, hashed as the handler reads them, so this must be
 * called before the handler runs.
 */
export function requestIdentity(req: Request, read: BodyReadResult, body: unknown): RequestIdentity {
  const question = req.originalUrl.indexOf('?');
  return {
    method: req.method,
    path: normalisePath(req.path),
    query: question === -1 ? '' : req.originalUrl.slice(question + 1),
    body: fingerprintBody(req, read, body),
  };
}

function fingerprintBody(req: Request, read: BodyReadResult, body: unknown): FingerprintBody {
  switch (read.kind) {
    case 'none':
      return body === undefined ? { kind: 'none' } : { kind: 'json', value: body };
    case 'json':
    case 'form':
      return { kind: read.kind, value: body };
    case 'stream':
      return { kind: 'stream', tap: tapRequestBody(req) };
  }
}
