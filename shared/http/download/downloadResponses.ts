import type { ResponseSpec } from '#shared/http/routeSpec';

/** The answers of a route served by blobDownloadReply, for its OpenAPI description. */
export const downloadResponses: Readonly<Record<number, ResponseSpec>> = {
  200: { description: 'The whole file (Accept-Ranges, Content-Length, ETag = quoted SHA-256)' },
  206: { description: 'The one byte range asked for, with Content-Range' },
  302: { description: 'A presigned object-store URL (when S3_PRESIGNED_DOWNLOADS is on)' },
  304: { description: 'If-None-Match names the current ETag' },
  416: { description: 'The range starts past the end of the file (Content-Range: bytes */size)' },
};
