import type { Reply } from '#shared/http/routeSpec';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { NotFoundError } from '#shared/errors/httpErrors';
import { sniffImage } from '#shared/media/sniffImage';

/** A file name segment of a media path: what the upload handlers generate, nothing else. */
export const MEDIA_FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Streams a stored image (checked by content when it was uploaded); 404 when there is none. */
export async function imageBlobReply(blobs: BlobStore, key: string): Promise<Reply> {
  const info = await blobs.stat(key);
  if (!info || info.size === 0) throw new NotFoundError();
  // Serve the type the bytes really have (checked on upload), not what the client claimed.
  const image = sniffImage(
    await readAll(await blobs.get(key, { start: 0, end: Math.min(info.size, 65536) - 1 })),
  );
  return {
    status: 200,
    raw: await blobs.get(key),
    headers: {
      'Content-Type': image?.mimeType ?? 'application/octet-stream',
      'Content-Length': String(info.size),
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
    },
  };
}
