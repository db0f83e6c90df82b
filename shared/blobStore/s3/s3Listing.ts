import { Client } from 'minio';
import type { Leftover, ListedBlob } from '#shared/blobStore/blobStore';
import { isValidBlobKey } from '#shared/blobStore/blobKey';
import { s3ErrorCode } from './s3ErrorCode';

/** The minio client, plus the parts of an incomplete upload (minio keeps listParts protected). */
export class ListingClient extends Client {
  async partsOf(
    bucket: string,
    key: string,
    uploadId: string,
  ): Promise<{ size: number; lastModified?: Date }[]> {
    return this.listParts(bucket, key, uploadId);
  }
}

/** Every object whose key starts with prefix and is a valid blob key, with its LastModified. */
export async function* listS3Blobs(client: Client, bucket: string, prefix = ''): AsyncIterable<ListedBlob> {
  for await (const item of client.listObjectsV2(bucket, prefix, true)) {
    const { name, size, lastModified } = item as { name?: string; size: number; lastModified?: Date };
    if (name === undefined || lastModified === undefined || !isValidBlobKey(name)) continue;
    yield { key: name, size, storedAt: lastModified };
  }
}

/**
 * Multipart uploads begun and neither completed nor aborted, except those a put of this process is
 * sending: touched when the last part arrived (when it began, before any). None on a server without
 * ListMultipartUploads (s3rver answers NotImplemented): a bucket lifecycle rule
 * (AbortIncompleteMultipartUpload) is what clears them there.
 */
export async function* listS3Leftovers(
  client: ListingClient,
  bucket: string,
  sending: ReadonlySet<string>,
): AsyncIterable<Leftover> {
  let keyMarker = '';
  let uploadIdMarker = '';
  for (;;) {
    let page;
    try {
      page = await client.listIncompleteUploadsQuery(bucket, '', keyMarker, uploadIdMarker, '');
    } catch (error) {
      if (s3ErrorCode(error) === 'NotImplemented') return;
      throw error;
    }
    for (const upload of page.uploads) {
      if (sending.has(upload.uploadId) || !isValidBlobKey(upload.key)) continue;
      const parts = await client.partsOf(bucket, upload.key, upload.uploadId).catch(noSuchUpload);
      if (parts === undefined) continue;
      const touched = Math.max(
        upload.initiated.getTime(),
        ...parts.map((p) => p.lastModified?.getTime() ?? 0),
      );
      yield {
        id: leftoverId(upload.key, upload.uploadId),
        size: parts.reduce((sum, part) => sum + part.size, 0),
        touchedAt: new Date(touched),
      };
    }
    if (!page.isTruncated) return;
    keyMarker = page.nextKeyMarker;
    uploadIdMarker = page.nextUploadIdMarker;
  }
}

/** Aborts the incomplete upload unless a part arrived after it was listed, or it is gone. */
export async function removeS3Leftover(
  client: ListingClient,
  bucket: string,
  sending: ReadonlySet<string>,
  leftover: Leftover,
): Promise<boolean> {
  const { key, uploadId } = parseLeftoverId(leftover.id);
  if (sending.has(uploadId)) return false;
  const parts = await client.partsOf(bucket, key, uploadId).catch(noSuchUpload);
  if (parts === undefined) return false;
  if (parts.some((part) => (part.lastModified?.getTime() ?? 0) > leftover.touchedAt.getTime())) return false;
  try {
    await client.abortMultipartUpload(bucket, key, uploadId);
    return true;
  } catch (error) {
    if (noSuchUpload(error) === undefined) return false;
    throw error;
  }
}

/** Keys hold no ':', so the first one ends the key. */
const leftoverId = (key: string, uploadId: string): string => `${key}:${uploadId}`;

function parseLeftoverId(id: string): { key: string; uploadId: string } {
  const at = id.indexOf(':');
  const key = id.slice(0, at);
  if (at < 0 || !isValidBlobKey(key))
    throw new RangeError(`not a leftover of this store: ${JSON.stringify(id)}`);
  return { key, uploadId: id.slice(at + 1) };
}

/** Undefined for "that upload is no more" (completed or aborted meanwhile); rethrows the rest. */
function noSuchUpload(error: unknown): undefined {
  if (s3ErrorCode(error) === 'NoSuchUpload') return undefined;
  throw error;
}
