import type { RouteSpec } from '#shared/http/routeSpec';
import { weakEtag } from '#shared/http/etag';
import { fileUploadSchema } from '#shared/views/fileUploadViews';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { visibleUpload } from './fileUploadSql';
import { uploadJsonFor } from './uploadJsonFor';

export const fileUploadRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/file-uploads/{id}/',
  operationId: 'getFileUpload',
  summary: "One of your uploads (staff: anyone's)",
  description:
    'Its processing status and times, metadata (`{"error": ...}` when processing failed), s3_url and preview_url (null until a preview exists).',
  tags: ['file uploads'],
  auth: 'required',
  responses: {
    200: { description: 'The upload', schema: fileUploadSchema },
    404: { description: 'No such upload, or not yours' },
  },
  async handler(ctx) {
    const row = await visibleUpload(deps.readModels, ctx.params.id ?? '', ctx.principal!);
    return {
      status: 200,
      body: await uploadJsonFor(deps.blobs, row, ctx.baseUrl),
      headers: { ETag: weakEtag(BigInt(row.revision)), 'Cache-Control': 'private, no-cache' },
    };
  },
});
