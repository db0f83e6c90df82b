import type { BlobStore } from '#shared/blobStore/blobStore';
import type { StoredFile } from './storedFile';

/**
 * Deletes the blobs of a request that is being rejected (e.g. an avatar that is not an image), so
 * a failed request leaves no orphaned bytes. Never rejects: the request's own error is what the
 * client must see. Resolves with the keys that could not be deleted, for the caller to log.
 */
export async function cleanupStoredFiles(
  blobStore: BlobStore,
  files: Readonly<Record<string, StoredFile>> | readonly StoredFile[],
): Promise<string[]> {
  const list: readonly StoredFile[] = Array.isArray(files) ? files : Object.values(files);
  const results = await Promise.allSettled(list.map((file) => blobStore.delete(file.key)));
  return list.filter((_, index) => results[index]?.status === 'rejected').map((file) => file.key);
}
