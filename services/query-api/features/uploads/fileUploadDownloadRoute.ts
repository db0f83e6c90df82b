import type { RouteSpec } from '#shared/http/routeSpec';
import { blobDownloadReply } from '#shared/http/download/blobDownloadReply';
import { downloadResponses } from '#shared/http/download/downloadResponses';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { visibleUpload } from './fileUploadSql';

export const fileUploadDownloadRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/file-uploads/{id}/download/',
  operationId: 'downloadFileUpload',
  summary: "The bytes of one of your uploads, or of a brain shared with you (staff: anyone's)",
  description:
    'Streamed as an attachment named after the file (RFC 6266), with Content-Length, Accept-Ranges and a strong ETag (the quoted SHA-256): If-None-Match answers 304, a single `Range` 206 with Content-Range (If-Range honoured; several ranges get the whole file), an unsatisfiable one 416. When the object store serves downloads itself (S3_PRESIGNED_DOWNLOADS), a 302 to a presigned URL instead.',
  tags: ['file uploads'],
  auth: 'required',
  responses: {
    ...downloadResponses,
    404: { description: 'No such upload, or neither yours nor of a brain shared with you' },
  },
  async handler(ctx) {
    const row = await visibleUpload(deps.readModels, ctx.params.id ?? '', ctx.principal!);
    return blobDownloadReply(
      deps.blobs,
      ctx.req.headers,
      { key: row.blob_key, size: Number(row.size_bytes), etag: `"${row.sha256}"`, filename: row.filename },
      // Behind a token: no shared cache may keep it; a client revalidates with the ETag.
      { cacheControl: 'private, no-cache' },
    );
  },
});
