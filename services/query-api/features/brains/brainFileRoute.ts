import type { RouteSpec } from '../../../../shared/http/routeSpec';
import { NotFoundError } from '../../../../shared/errors/httpErrors';
import type { QueryDeps } from '../../queryDeps';
import { keyCondition } from './brainRoute';

interface FileRow {
  readonly blob_key: string;
  readonly sha256: string;
  readonly size_bytes: string;
  readonly filename: string;
}

/** A file name safe inside a quoted Content-Disposition parameter. */
const asciiName = (name: string): string => name.replace(/[^\w.-]/g, '_') || 'brain';

export const brainFileRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/brains/{key}/file/',
  operationId: 'downloadBrainFile',
  summary: "A brain's file (the image / s3_url of shape B)",
  description:
    'Streams the stored bytes as an attachment, with Content-Length and a strong ETag (the SHA-256 of the bytes).',
  tags: ['brains'],
  auth: 'public',
  responses: {
    200: { description: 'The file bytes' },
    404: { description: 'No such brain, or it has no file' },
  },
  async handler(ctx) {
    const filter = keyCondition(ctx.params.key ?? '');
    const { rows } = await deps.readModels.query<FileRow>(
      `SELECT f.blob_key, f.sha256, f.size_bytes, f.filename
       FROM brains b JOIN file_uploads f ON f.id = b.file_upload_id::uuid ${filter.whereSql}`,
      filter.params(),
    );
    const file = rows[0];
    if (!file) throw new NotFoundError();
    return {
      status: 200,
      raw: await deps.blobs.get(file.blob_key),
      headers: {
        // The client's claimed type is not served back: a download is bytes, never a page.
        'Content-Type': 'application/octet-stream',
        'Content-Length': file.size_bytes,
        'Content-Disposition': `attachment; filename="${asciiName(file.filename)}"; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
        ETag: `"${file.sha256}"`,
        'X-Content-Type-Options': 'nosniff',
      },
    };
  },
});
