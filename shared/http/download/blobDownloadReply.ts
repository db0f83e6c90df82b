import type { IncomingHttpHeaders } from 'node:http';
import type { Reply } from '#shared/http/routeSpec';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { attachmentDisposition } from './contentDisposition';
import { ifRangeHolds, noneMatchHits } from './conditionalHeaders';
import { requestedRange } from './requestedRange';

/** A stored file as it is downloaded. */
export interface DownloadableBlob {
  readonly key: string;
  readonly size: number;
  /** A strong ETag (quoted) that changes whenever the bytes do: for a file, its quoted SHA-256. */
  readonly etag: string;
  /** The name the client saves it as. */
  readonly filename: string;
}

export interface DownloadOptions {
  /** Cache-Control of the bytes (e.g. "private, no-cache" for what needs a token). */
  readonly cacheControl: string;
  /** The served type; a download is bytes, never a page, unless the caller knows better. */
  readonly contentType?: string;
  /** false: inline (a preview image); default true: an attachment named after the file. */
  readonly attachment?: boolean;
  /** Default true: answer with a presigned URL when the store offers one. */
  readonly allowRedirect?: boolean;
}

/**
 * Answers a GET for a stored file: a 302 to a presigned URL when the store serves downloads
 * itself, else the bytes streamed from the store with a strong ETag (304 for If-None-Match),
 * a single Range (206 + Content-Range, 416 when unsatisfiable, If-Range) and Content-Length.
 */
export async function blobDownloadReply(
  blobs: BlobStore,
  headers: IncomingHttpHeaders,
  blob: DownloadableBlob,
  options: DownloadOptions,
): Promise<Reply> {
  const contentType = options.contentType ?? 'application/octet-stream';
  const disposition = options.attachment === false ? 'inline' : attachmentDisposition(blob.filename);
  if (blobs.presignedDownloadUrl && options.allowRedirect !== false) {
    const location = await blobs.presignedDownloadUrl(blob.key, {
      contentDisposition: disposition,
      contentType,
    });
    // The URL expires: neither it nor this answer may be reused from a cache.
    return { status: 302, headers: { Location: location, 'Cache-Control': 'no-store' } };
  }
  const { etag } = blob;
  const common = {
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Cache-Control': options.cacheControl,
    'X-Content-Type-Options': 'nosniff',
  };
  if (noneMatchHits(headers['if-none-match'], etag)) return { status: 304, headers: common };
  const range = ifRangeHolds(single(headers['if-range']), etag)
    ? requestedRange(headers.range, blob.size)
    : { kind: 'whole' as const };
  if (range.kind === 'unsatisfiable')
    return {
      status: 416,
      body: { detail: `The range is outside the file of ${blob.size} bytes.` },
      headers: { ...common, 'Content-Range': `bytes */${blob.size}` },
    };
  const body = { ...common, 'Content-Type': contentType, 'Content-Disposition': disposition };
  if (range.kind === 'whole')
    return {
      status: 200,
      raw: await blobs.get(blob.key),
      headers: { ...body, 'Content-Length': String(blob.size) },
    };
  const { start, end } = range;
  return {
    status: 206,
    raw: await blobs.get(blob.key, { start, end }),
    headers: {
      ...body,
      'Content-Length': String(end - start + 1),
      'Content-Range': `bytes ${start}-${end}/${blob.size}`,
    },
  };
}

/** A header Node may hand over as a list when it was repeated: the first value counts. */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
