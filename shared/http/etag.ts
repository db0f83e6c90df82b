import { PreconditionFailedError } from '#shared/errors/httpErrors';

/** A weak ETag carrying an aggregate's stream revision: W/"<revision>". */
export function weakEtag(revision: bigint | undefined): string {
  return `W/"${revision ?? -1n}"`;
}

/**
 * The revision a client claims to have seen, from If-Match (weak or strong form accepted);
 * undefined when absent or "*". A value we never issue is a 412, as HTTP says.
 */
export function ifMatchRevision(header: string | undefined): bigint | undefined {
  if (header === undefined || header.trim() === '*' || header.trim() === '') return undefined;
  const match = /^(?:W\/)?"(-?\d{1,19})"$/.exec(header.trim());
  if (!match)
    throw new PreconditionFailedError('If-Match must be an ETag this service returned, e.g. W/"3".');
  return BigInt(match[1]!);
}
