import { createHash, createHmac } from 'node:crypto';
import type { BodyTap } from './bodyTap';
import type { RecordKeys } from './recordKeys';

export type FingerprintBody =
  | { readonly kind: 'none' }
  /** A parsed JSON or url-encoded body: compared by value, not by bytes. */
  | { readonly kind: 'json' | 'form'; readonly value: unknown }
  | { readonly kind: 'stream'; readonly tap: BodyTap };

/** What makes two requests "the same request" for an Idempotency-Key. */
export interface RequestIdentity {
  readonly method: string;
  /** The path without its trailing slash ("/api/tokens" and "/api/tokens/" are one resource). */
  readonly path: string;
  /** The raw query string, '' when none. */
  readonly query: string;
  readonly body: FingerprintBody;
}

/** JSON with object keys sorted at every depth: equal values give equal text, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

async function bodyDigest(body: FingerprintBody): Promise<string> {
  switch (body.kind) {
    case 'none':
      return '';
    case 'stream':
      return (await body.tap.digest()).toString('hex');
    case 'json':
    case 'form':
      return createHash('sha256').update(canonicalJson(body.value)).digest('hex');
  }
}

/** A keyed hash (HMAC) of the request, so a stored fingerprint reveals nothing about the body. */
export async function requestFingerprint(keys: RecordKeys, request: RequestIdentity): Promise<Buffer> {
  const parts = [request.method.toUpperCase(), request.path, request.query, request.body.kind];
  parts.push(await bodyDigest(request.body));
  return createHmac('sha256', keys.fingerprintKey).update(JSON.stringify(parts)).digest();
}
