/**
 * Where a tus upload's bytes live in the BlobStore: under uploads/ (its final blob once complete,
 * named by the file upload record), below a folder of its own so the sweep can tell them apart.
 * The S3 store adds `<key>.info` (its metadata) and `<key>.part` (an incomplete part) beside it.
 */
export const TUS_KEY_PREFIX = 'uploads/tus/';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isTusUploadId(id: string): boolean {
  return UUID.test(id);
}

export function tusBlobKey(id: string): string {
  return `${TUS_KEY_PREFIX}${id}`;
}

/** Every key a tus upload may own (the bytes, and the S3 store's sidecars). */
export function tusOwnedKeys(id: string): string[] {
  const key = tusBlobKey(id);
  return [key, `${key}.info`, `${key}.part`];
}

/** The upload id a key under TUS_KEY_PREFIX belongs to (its bytes or a sidecar); undefined otherwise. */
export function tusUploadIdOfKey(key: string): string | undefined {
  if (!key.startsWith(TUS_KEY_PREFIX)) return undefined;
  const id = key.slice(TUS_KEY_PREFIX.length).replace(/\.(info|part)$/, '');
  return isTusUploadId(id) ? id : undefined;
}
