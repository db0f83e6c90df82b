import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { previewReply } from '#services/query-api/features/uploads/previewReply';
import { keyCondition } from './brainRoute';

interface PreviewRow {
  readonly id: string;
  readonly preview_blob_key: string | null;
  readonly revision: string;
}

/** Public like the brain and its file: a person browsing sees the scan without a token. */
export const brainPreviewRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/{key}/preview/',
  operationId: 'getBrainPreview',
  summary: "The PNG preview of a brain's file (its preview_url)",
  description:
    'The middle slices of the volume or image, made when the file was processed. Cacheable for an hour, revalidated with its ETag (If-None-Match answers 304).',
  tags: ['brains'],
  auth: 'public',
  responses: {
    200: { description: 'image/png' },
    304: { description: 'If-None-Match names the current ETag' },
    404: { description: 'No such brain, or no preview (yet)' },
  },
  async handler(ctx) {
    const filter = keyCondition(ctx.params.key ?? '');
    const { rows } = await deps.readModels.query<PreviewRow>(
      `SELECT f.id, f.preview_blob_key, f.revision
       FROM brains b JOIN file_uploads f ON f.id = b.file_upload_id::uuid ${filter.whereSql}`,
      filter.params(),
    );
    const row = rows[0];
    if (!row) throw new NotFoundError();
    const source = { uploadId: row.id, previewKey: row.preview_blob_key, revision: row.revision };
    return previewReply(deps.blobs, ctx.req.headers, source, 'public, max-age=3600');
  },
});
