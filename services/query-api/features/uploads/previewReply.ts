import type { IncomingHttpHeaders } from 'node:http';
import type { Reply } from '#shared/http/routeSpec';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { NotFoundError } from '#shared/errors/httpErrors';
import { blobDownloadReply } from '#shared/http/download/blobDownloadReply';

/** The upload whose preview is asked for, as the read model has it. */
export interface PreviewSource {
  readonly uploadId: string;
  readonly previewKey: string | null;
  /** The file_uploads row's revision: the preview is written once, before the event naming it. */
  readonly revision: string;
}

/** Serves an upload's PNG preview inline, cacheable and revalidated by ETag; 404 when there is none. */
export async function previewReply(
  blobs: BlobStore,
  headers: IncomingHttpHeaders,
  source: PreviewSource,
  cacheControl: string,
): Promise<Reply> {
  const key = source.previewKey;
  const info = key === null ? undefined : await blobs.stat(key);
  if (key === null || !info) throw new NotFoundError('No preview (yet).');
  return blobDownloadReply(
    blobs,
    headers,
    {
      key,
      size: info.size,
      etag: `"preview-${source.uploadId}-${source.revision}"`,
      filename: `${source.uploadId}.png`,
    },
    { cacheControl, contentType: 'image/png', attachment: false, allowRedirect: false },
  );
}
