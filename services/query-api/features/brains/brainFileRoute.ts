import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { blobDownloadReply } from '#shared/http/download/blobDownloadReply';
import { downloadResponses } from '#shared/http/download/downloadResponses';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { keyCondition } from './brainRoute';
import { OPEN_SQL } from './brainSql';

interface FileRow {
  readonly blob_key: string;
  readonly sha256: string;
  readonly size_bytes: string;
  readonly filename: string;
  /** Public now (an ended embargo too): anyone may see it, so shared caches may keep it. */
  readonly open: boolean;
}

export const brainFileRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/{key}/file/',
  operationId: 'downloadBrainFile',
  summary: "A brain's file (the image / s3_url of shape B)",
  description:
    'Streams the stored bytes as an attachment, with Content-Length and a strong ETag (the quoted SHA-256 of the bytes): If-None-Match answers 304, a single `Range` 206 (If-Range honoured), an unsatisfiable one 416. When the object store serves downloads itself (S3_PRESIGNED_DOWNLOADS), a 302 to a presigned URL instead.',
  tags: ['brains'],
  auth: 'public',
  responses: {
    ...downloadResponses,
    404: { description: 'No such brain (or none you may see), or it has no file' },
  },
  async handler(ctx) {
    const filter = keyCondition(ctx.params.key ?? '', viewerFor(ctx));
    const { rows } = await deps.readModels.query<FileRow>(
      `SELECT f.blob_key, f.sha256, f.size_bytes, f.filename, ${OPEN_SQL} AS open
       FROM brains b JOIN file_uploads f ON f.id = b.file_upload_id::uuid ${filter.whereSql}`,
      filter.params(),
    );
    const file = rows[0];
    if (!file) throw new NotFoundError();
    return blobDownloadReply(
      deps.blobs,
      ctx.req.headers,
      {
        key: file.blob_key,
        size: Number(file.size_bytes),
        etag: `"${file.sha256}"`,
        filename: file.filename,
      },
      // A brain's file can be replaced by deleting the brain, or hidden by making it private:
      // revalidate with the ETag. Only a public brain's may be kept by shared caches.
      { cacheControl: file.open ? 'public, no-cache' : 'private, no-cache' },
    );
  },
});
