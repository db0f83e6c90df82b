import type { BlobStore } from '#shared/blobStore/blobStore';
import { BatchFiller } from '#shared/blobStore/localDisk/batchFiller';
import { OffThreadSha256 } from '#shared/blobStore/offThreadSha256';

const HEAD_BYTES = 64 * 1024;

/**
 * SHA-256 of a stored blob, hashed on the hashing thread (never on the event loop), with its size
 * and first bytes: what a multipart upload learns while streaming, for a blob written piecewise.
 */
export async function hashStoredBlob(
  blobs: BlobStore,
  key: string,
): Promise<{ sha256: string; size: number; head: Buffer }> {
  const hash = new OffThreadSha256();
  try {
    const body = await blobs.get(key);
    const headParts: Buffer[] = [];
    let headSize = 0;
    let size = 0;
    const batches = new BatchFiller(
      () => hash.batch(),
      (batch) => hash.update(batch),
    );
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (headSize < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headSize);
        headParts.push(Buffer.from(part));
        headSize += part.length;
      }
      size += chunk.length;
      await batches.push(chunk);
    }
    await batches.flush();
    return { sha256: await hash.digest(), size, head: Buffer.concat(headParts, headSize) };
  } finally {
    hash.abort();
  }
}
