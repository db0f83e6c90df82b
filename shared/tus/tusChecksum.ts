import { AsyncLocalStorage } from 'node:async_hooks';
import { TusHttpError } from './tusHttpError';

/** The tus checksum extension's algorithms (Tus-Checksum-Algorithm). */
export const TUS_CHECKSUM_ALGORITHMS = ['sha256', 'sha1', 'md5'] as const;
export type TusChecksumAlgorithm = (typeof TUS_CHECKSUM_ALGORITHMS)[number];

export interface TusChecksum {
  readonly algorithm: TusChecksumAlgorithm;
  /** The digest the request's body must have. */
  readonly expected: Buffer;
}

/** 460: the body's checksum is not the one announced; nothing of it is kept. */
export const checksumMismatch = () =>
  new TusHttpError(460, { detail: 'Checksum mismatch: the body does not have the Upload-Checksum sent.' });

/** What the request being handled asked of its body; read by the data store while it writes. */
const scope = new AsyncLocalStorage<TusChecksum | undefined>();

export function withTusChecksum<T>(checksum: TusChecksum | undefined, work: () => T): T {
  return scope.run(checksum, work);
}

export function currentTusChecksum(): TusChecksum | undefined {
  return scope.getStore();
}

/**
 * Parses `Upload-Checksum: <algorithm> <base64 digest>`: undefined when absent, a message when it
 * is malformed or names an algorithm this server does not offer.
 */
export function parseUploadChecksum(header: string | undefined): TusChecksum | undefined | string {
  if (header === undefined) return undefined;
  const match = /^\s*([A-Za-z0-9-]+) +([A-Za-z0-9+/]+={0,2})\s*$/.exec(header);
  if (!match) return 'Upload-Checksum must be "<algorithm> <base64 digest>".';
  const algorithm = match[1]!.toLowerCase();
  if (!(TUS_CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm))
    return `Unsupported checksum algorithm: use one of ${TUS_CHECKSUM_ALGORITHMS.join(', ')}.`;
  return { algorithm: algorithm as TusChecksumAlgorithm, expected: Buffer.from(match[2]!, 'base64') };
}
