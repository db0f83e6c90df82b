import type { RouteSpec } from '#shared/http/routeSpec';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { visibleUpload } from './fileUploadSql';
import { previewReply } from './previewReply';

export const fileUploadPreviewRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/file-uploads/{id}/preview/',
  operationId: 'getFileUploadPreview',
  summary: 'The PNG preview of one of your uploads, or of a brain shared with you (its preview_url)',
  description:
    'The middle slices of the volume or image, made by processing. The browser may keep it for an hour (private), then revalidates with its ETag (If-None-Match answers 304).',
  tags: ['file uploads'],
  auth: 'required',
  responses: {
    200: { description: 'image/png' },
    304: { description: 'If-None-Match names the current ETag' },
    404: { description: 'No such upload, neither yours nor of a brain shared with you, or no preview (yet)' },
  },
  async handler(ctx) {
    const row = await visibleUpload(deps.readModels, ctx.params.id ?? '', ctx.principal!);
    const source = { uploadId: row.id, previewKey: row.preview_blob_key, revision: row.revision };
    return previewReply(deps.blobs, ctx.req.headers, source, 'private, max-age=3600');
  },
});
