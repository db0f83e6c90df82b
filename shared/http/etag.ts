import { createHash } from 'node:crypto';
import { PreconditionFailedError } from '#shared/errors/httpErrors';

/** A weak ETag carrying an aggregate's stream revision: W/"<revision>". */
export function weakEtag(revision: bigint | undefined): string {
  return `W/"${revision ?? -1n}"`;
}

/**
 * The ETag of a read whose representation also shows what other streams change (a brain's
 * processing status, metadata and preview come from its upload's; names from the atlas's):
 * W/"<revision>.<digest of the body>". If-Match still reads the revision from it; If-None-Match
 * matches only the very same representation, so a 304 never stands for a stale body.
 */
export function representationEtag(revision: bigint, body: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16);
  return `W/"${revision}.${digest}"`;
}

/**
 * The revision a client claims to have seen, from If-Match (weak or strong form accepted);
 * undefined when absent or "*". A value we never issue is a 412, as HTTP says.
 */
export function ifMatchRevision(header: string | undefined): bigint | undefined {
  if (header === undefined || header.trim() === '*' || header.trim() === '') return undefined;
  const match = /^(?:W\/)?"(-?\d{1,19})(?:\.[0-9a-f]{16})?"$/.exec(header.trim());
  if (!match)
    throw new PreconditionFailedError('If-Match must be an ETag this service returned, e.g. W/"3".');
  return BigInt(match[1]!);
}
