import type { RouteSpec } from '#shared/http/routeSpec';
import { representationEtag } from '#shared/http/etag';
import { fileUploadSchema } from '#shared/views/fileUploadViews';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { asSeenBy } from '#shared/query/uploadVisibility';
import { visibleUpload } from './fileUploadSql';
import { uploadJsonFor } from './uploadJsonFor';
import { Type } from '@sinclair/typebox';
import { parseAsOf } from '#shared/audit/asOf';
import { asOfQueryProperty } from '#shared/audit/replay/asOfQuery';
import { fileUploadAsOfReply } from '#services/query-api/features/audit/fileUploadAsOf';

export const fileUploadRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/file-uploads/{id}/',
  operationId: 'getFileUpload',
  summary: "One of your uploads, or of a brain shared with you (staff: anyone's)",
  description:
    'Its processing status and times, metadata (`{"error": ...}` when processing failed), s3_url and preview_url (null until a preview exists). With `as_of`, the upload as it was then, computed by replay (X-As-Of-Position names the newest event it stands on; no ETag).',
  tags: ['file uploads'],
  auth: 'required',
  query: Type.Object({ as_of: asOfQueryProperty }),
  responses: {
    200: { description: 'The upload', schema: fileUploadSchema },
    400: { description: 'as_of is neither an ISO time nor an event position' },
    404: {
      description:
        'No such upload, or neither yours nor of a brain shared with you (with as_of: none then, not yet received or deleted)',
    },
  },
  async handler(ctx) {
    const asOf = parseAsOf(ctx.query.as_of);
    if (asOf) return fileUploadAsOfReply(deps, ctx.params.id ?? '', ctx.principal!, asOf, ctx.baseUrl);
    const row = await visibleUpload(deps.readModels, ctx.params.id ?? '', ctx.principal!);
    const body = await uploadJsonFor(
      deps.blobs,
      asSeenBy(row, ctx.principal!, deps.uploaderEmails),
      ctx.baseUrl,
    );
    return {
      status: 200,
      body,
      // The brain's name and readable_id in it change on the brain's stream, not the upload's.
      headers: { ETag: representationEtag(BigInt(row.revision), body), 'Cache-Control': 'private, no-cache' },
    };
  },
});
