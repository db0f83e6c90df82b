import type { BlobStore } from '#shared/blobStore/blobStore';
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
    let batch = hash.batch();
    let filled = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (headSize < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headSize);
        headParts.push(Buffer.from(part));
        headSize += part.length;
      }
      size += chunk.length;
      for (let at = 0; at < chunk.length;) {
        const copied = Math.min(chunk.length - at, batch.length - filled);
        batch.fill(
          copied === chunk.length ? chunk : chunk.subarray(at, at + copied),
          filled,
          filled + copied,
        );
        at += copied;
        filled += copied;
        if (filled < batch.length) continue;
        await hash.update(batch);
        batch = hash.batch();
        filled = 0;
      }
    }
    if (filled > 0) await hash.update(batch.subarray(0, filled));
    return { sha256: await hash.digest(), size, head: Buffer.concat(headParts, headSize) };
  } finally {
    hash.abort();
  }
}
