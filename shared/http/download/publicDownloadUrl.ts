import type { BlobStore } from '#shared/blobStore/blobStore';
import { attachmentDisposition } from './contentDisposition';

/**
 * The URL a client downloads a stored file from: a presigned object-store URL when the store
 * serves downloads itself, else `routeUrl` (the service's own download route).
 */
export async function publicDownloadUrl(
  blobs: BlobStore,
  routeUrl: string,
  blob: { readonly key: string; readonly filename: string },
): Promise<string> {
  if (!blobs.presignedDownloadUrl) return routeUrl;
  return blobs.presignedDownloadUrl(blob.key, {
    contentDisposition: attachmentDisposition(blob.filename),
    contentType: 'application/octet-stream',
  });
}
