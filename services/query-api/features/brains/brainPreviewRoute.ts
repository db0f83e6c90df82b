import type { RouteSpec } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';
import { type QueryDeps, viewerFor } from '#services/query-api/queryDeps';
import { previewReply } from '#services/query-api/features/uploads/previewReply';
import { keyCondition } from './brainRoute';
import { OPEN_SQL } from './brainSql';

interface PreviewRow {
  readonly id: string;
  readonly preview_blob_key: string | null;
  readonly revision: string;
  /** Public now (an ended embargo too): anyone may see it, so shared caches may keep it. */
  readonly open: boolean;
}

/**
 * Seen by whoever sees the brain (its file likewise): a person browsing a public brain sees the
 * scan without a token. Caches revalidate it every time (a brain made private must vanish at
 * once), and only a public brain's may be kept by a shared cache.
 */
export const brainPreviewRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/{key}/preview/',
  operationId: 'getBrainPreview',
  summary: "The PNG preview of a brain's file (its preview_url)",
  description:
    "The middle slices of the volume or image, made when the file was processed. Revalidated with its ETag at every use (If-None-Match answers 304): a brain made private is gone at once; only a public brain's may be kept by shared caches.",
  tags: ['brains'],
  auth: 'public',
  responses: {
    200: { description: 'image/png' },
    304: { description: 'If-None-Match names the current ETag' },
    404: { description: 'No such brain (or none you may see), or no preview (yet)' },
  },
  async handler(ctx) {
    const filter = keyCondition(ctx.params.key ?? '', viewerFor(ctx));
    const { rows } = await deps.readModels.query<PreviewRow>(
      `SELECT f.id, f.preview_blob_key, f.revision, ${OPEN_SQL} AS open
       FROM brains b JOIN file_uploads f ON f.id = b.file_upload_id::uuid ${filter.whereSql}`,
      filter.params(),
    );
    const row = rows[0];
    if (!row) throw new NotFoundError();
    const source = { uploadId: row.id, previewKey: row.preview_blob_key, revision: row.revision };
    return previewReply(
      deps.blobs,
      ctx.req.headers,
      source,
      row.open ? 'public, no-cache' : 'private, no-cache',
    );
  },
});
